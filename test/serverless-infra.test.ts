// The deployment artefacts: template.yaml passes cfn-lint (SAM transform included), the state machine passes
// asl-validator and loads in aws-local-stepfunctions, the template wires every `${…}` of the definition, and its
// functions' memory, timeout and /tmp are the one source's (lib/serverless/function-settings.ts).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { StateMachine } from 'aws-local-stepfunctions';
import { FUNCTIONS } from '../lib/serverless/function-settings.js';
import { FUNCTION_SUBSTITUTIONS, loadDefinition, taskFunctions } from '../lib/serverless/local/index.js';
import { REPO_ROOT } from './helpers/fixtures.js';
// @ts-expect-error: plain JavaScript module without types
import { findPythonTool } from '../infra/local-stack.mjs';

const TEMPLATE = join(REPO_ROOT, 'template.yaml');
const DEFINITION = join(REPO_ROOT, 'infra', 'state-machine.asl.json');

test('template.yaml passes cfn-lint', () => {
  const cfnLint = findPythonTool('cfn-lint', 'the template check needs it: pip install cfn-lint');
  const result = spawnSync(cfnLint.file, [...cfnLint.args, TEMPLATE], { encoding: 'utf8' });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
});

test('the state machine passes asl-validator', () => {
  const validator = createRequire(import.meta.url).resolve('asl-validator/dist/bin/asl-validator.js');
  const output = execFileSync(process.execPath, [validator, '--json-path', DEFINITION], { encoding: 'utf8' });
  assert.match(output, /is valid/);
});

test('the definition loads in aws-local-stepfunctions and binds a function to every task', () => {
  const definition = loadDefinition(DEFINITION);
  assert.doesNotThrow(() => new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } }));
  assert.deepEqual(
    [...taskFunctions(definition)].sort(),
    [['Commit', 'commit'], ['ExecuteGroup', 'execute-group'], ['Plan', 'plan'], ['Rollback', 'rollback']],
  );
});

test('the template substitutes every placeholder of the definition', () => {
  const template = readFileSync(TEMPLATE, 'utf8');
  const placeholders = [...readFileSync(DEFINITION, 'utf8').matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((match) => match[1]!);
  assert.deepEqual([...new Set(placeholders)].sort(), Object.keys(FUNCTION_SUBSTITUTIONS).sort());
  for (const name of placeholders) assert.match(template, new RegExp(`^\\s+${name}: !GetAtt \\w+\\.Arn$`, 'm'), `${name} in DefinitionSubstitutions`);
  assert.match(template, /DefinitionUri: infra\/state-machine\.asl\.json/);
});

/** The blocks of a CloudFormation YAML template: section (Parameters, Globals, Resources, …) → name → its lines. */
function templateBlocks(template: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let section: Map<string, string> | undefined;
  let name: string | undefined;
  for (const line of template.split('\n')) {
    const top = /^(\w+):/.exec(line);
    if (top !== null) {
      section = new Map();
      sections.set(top[1]!, section);
      name = undefined;
      continue;
    }
    const entry = /^ {2}(\w+):/.exec(line);
    if (entry !== null && section !== undefined) {
      name = entry[1]!;
      section.set(name, '');
      continue;
    }
    if (section !== undefined && name !== undefined) section.set(name, `${section.get(name)}${line}\n`);
  }
  return sections;
}

/** Each function's memory, timeout and /tmp as the template deploys it with its parameters' defaults. */
function deployedFunctions(template: string): Map<string, { memoryMb: number; timeoutSeconds: number; ephemeralStorageMb: number }> {
  const blocks = templateBlocks(template);
  const parameters = blocks.get('Parameters')!;
  const value = (text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const ref = /^!Ref (\w+)$/.exec(text.trim());
    const resolved = ref === null ? text.trim() : /^ {4}Default: (\S+)$/m.exec(parameters.get(ref[1]!) ?? '')?.[1];
    assert.ok(resolved !== undefined && /^\d+$/.test(resolved), `${text} is a number or a parameter with a numeric default`);
    return Number(resolved);
  };
  const globals = blocks.get('Globals')!.get('Function')!;
  const found = new Map<string, { memoryMb: number; timeoutSeconds: number; ephemeralStorageMb: number }>();
  for (const [name, block] of blocks.get('Resources')!) {
    if (!/^ {4}Type: AWS::Serverless::Function$/m.test(block)) continue;
    found.set(name, {
      memoryMb: value(/^ {6}MemorySize: (.+)$/m.exec(block)?.[1]) ?? value(/^ {4}MemorySize: (.+)$/m.exec(globals)?.[1])!,
      timeoutSeconds: value(/^ {6}Timeout: (.+)$/m.exec(block)?.[1]) ?? value(/^ {4}Timeout: (.+)$/m.exec(globals)?.[1])!,
      // Lambda's default /tmp when the template sets none.
      ephemeralStorageMb: value(/^ {6}EphemeralStorage:\n {8}Size: (.+)$/m.exec(block)?.[1]) ?? 512,
    });
  }
  return found;
}

test('the template\'s functions have the memory, timeout and /tmp of lib/serverless/function-settings.ts, and the README says so', () => {
  const deployed = deployedFunctions(readFileSync(TEMPLATE, 'utf8'));
  assert.deepEqual([...deployed.keys()].sort(), Object.values(FUNCTIONS).map((settings) => settings.resource).sort(), 'every function of the template, and no other');
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  for (const [name, { resource, ...settings }] of Object.entries(FUNCTIONS)) {
    assert.deepEqual(deployed.get(resource), settings, `${resource} (${name})`);
    assert.match(readme, new RegExp(`^\\| \`${name}\` \\|.*\\| ${settings.memoryMb} MB[^|]* / ${settings.timeoutSeconds} s \\|$`, 'm'), `README's function table: ${name}`);
  }
});
