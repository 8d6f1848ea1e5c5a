// The deployment artefacts: template.yaml passes cfn-lint (SAM transform included), the state machine passes
// asl-validator and loads in aws-local-stepfunctions, and the template wires every `${…}` of the definition.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { StateMachine } from 'aws-local-stepfunctions';
import { DEFAULT_MEMORY_MB, FUNCTION_SUBSTITUTIONS, loadDefinition, taskFunctions } from '../lib/serverless/local-state-machine.js';
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

test('the template substitutes every placeholder of the definition, and its memory sizes are the cost estimate\'s', () => {
  const template = readFileSync(TEMPLATE, 'utf8');
  const placeholders = [...readFileSync(DEFINITION, 'utf8').matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((match) => match[1]!);
  assert.deepEqual([...new Set(placeholders)].sort(), Object.keys(FUNCTION_SUBSTITUTIONS).sort());
  for (const name of placeholders) assert.match(template, new RegExp(`^\\s+${name}: !GetAtt \\w+\\.Arn$`, 'm'), `${name} in DefinitionSubstitutions`);
  assert.match(template, /DefinitionUri: infra\/state-machine\.asl\.json/);
  assert.match(template, new RegExp(`ExecuteGroupMemoryMb:[\\s\\S]*?Default: ${DEFAULT_MEMORY_MB['execute-group']}\\n`));
  assert.match(template, new RegExp(`Globals:[\\s\\S]*?MemorySize: ${DEFAULT_MEMORY_MB.plan}\\n`));
  assert.match(template, new RegExp(`TriggerFunction:[\\s\\S]*?MemorySize: ${DEFAULT_MEMORY_MB.trigger}\\n`));
});
