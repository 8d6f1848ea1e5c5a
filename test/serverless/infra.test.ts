// The deployment artefacts: template.yaml passes cfn-lint and `sam validate --lint` (SAM transform included), the
// state machine passes asl-validator and loads in aws-local-stepfunctions, the template wires every `${…}` of the
// definition, its functions' memory, timeout and /tmp are the one source's (lib/serverless/aws/function-settings.ts),
// and its refusal of a landing prefix that overlaps the table agrees with the ingest function's own check.
// cfn-lint and sam come from the real-Hudi toolchain's virtualenv (aws-sam-cli in test/hudi/toolchain.json, which
// `npm test` installs).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { StateMachine } from 'aws-local-stepfunctions';
import { INSTALL_COMMAND, toolchainPaths } from '../../infra/hudi-toolchain.mjs';
import { INGEST_BATCH_MAX_BYTES } from '../../lib/ingest/index.js';
import { FUNCTIONS } from '../../lib/serverless/aws/function-settings.js';
import { METRIC } from '../../lib/serverless/aws/metric-names.js';
import { FUNCTION_SUBSTITUTIONS, inlineDistributedMaps, loadDefinition, taskFunctions } from '../../lib/serverless/local/index.js';
import { prefixOverlapsTable } from '../../lib/serverless/steps/ingest/ingest.js';
import { groupManifestPath, LAMBDA_CONCURRENCY_ENV } from '../../lib/serverless/steps/scale-out.js';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

const TEMPLATE = join(REPO_ROOT, 'template.yaml');
const DEFINITION = join(REPO_ROOT, 'infra', 'state-machine.asl.json');
const COMPACTION_DEFINITION = join(REPO_ROOT, 'infra', 'compaction-state-machine.asl.json');

/** A command of the toolchain's virtualenv (sam, cfn-lint, python). */
function toolchainTool(name: string): string {
  const paths = toolchainPaths();
  const file = join(dirname(paths.python), name);
  assert.ok(paths.pythonReady && existsSync(file), `${file} is missing: run \`${INSTALL_COMMAND}\` (npm test does)`);
  return file;
}

test('template.yaml passes cfn-lint', () => {
  const result = spawnSync(toolchainTool('cfn-lint'), ['--', TEMPLATE], { encoding: 'utf8' });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
});

test('template.yaml passes sam validate --lint, without an AWS account', () => {
  // Nothing of the machine's AWS configuration: no credentials, profile or config file is needed.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AWS_')));
  const result = spawnSync(toolchainTool('sam'), ['validate', '--lint', '--region', 'us-east-1', '--template-file', TEMPLATE], {
    encoding: 'utf8',
    cwd: tempDir('sam-validate-'),
    env: { ...env, SAM_CLI_TELEMETRY: '0', AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' },
  });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  assert.match(result.stdout, /is a valid SAM Template/);
});

test('the state machines pass asl-validator', () => {
  const validator = createRequire(import.meta.url).resolve('asl-validator/dist/bin/asl-validator.js');
  for (const file of [DEFINITION, COMPACTION_DEFINITION]) {
    const output = execFileSync(process.execPath, [validator, '--json-path', file], { encoding: 'utf8' });
    assert.match(output, /is valid/, file);
  }
});

test('the compaction definition loads in aws-local-stepfunctions and binds a function to every task', () => {
  const definition = loadDefinition(COMPACTION_DEFINITION);
  assert.doesNotThrow(() => new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } }));
  assert.deepEqual([...taskFunctions(definition)].sort(), [
    ['Commit', 'compaction-commit'],
    ['ExecuteOperation', 'compaction-execute'],
    ['Rollback', 'compaction-rollback'],
    ['RunOperation', 'compaction-execute'],
    ['Schedule', 'compaction-schedule'],
  ]);
});

test('the definition loads in aws-local-stepfunctions and binds a function to every task', () => {
  const definition = loadDefinition(DEFINITION);
  assert.doesNotThrow(() => new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } }));
  assert.deepEqual([...taskFunctions(definition)].sort(), [
    ['Archive', 'archive'],
    ['CleanPrepare', 'clean-prepare'],
    ['Commit', 'commit'],
    ['CompleteClean', 'clean-complete'],
    ['ExecuteCleanShare', 'clean-execute'],
    ['ExecuteCopyGroup', 'execute-copy-group'],
    ['ExecuteGroup', 'execute-group'],
    ['Plan', 'plan'],
    ['PlanCleanShare', 'clean-plan'],
    ['Rollback', 'rollback'],
    ['RunCopyGroup', 'execute-copy-group'],
    ['RunGroup', 'execute-group'],
    ['ScheduleClean', 'clean-schedule'],
  ]);
});

test("the Distributed Map runs the inline Map's task with the same retries and catch, from the plan's manifest, and its local stand-in loads", () => {
  const definition = loadDefinition(DEFINITION);
  const states = definition.States as unknown as Record<string, Record<string, unknown>>;
  const choice = states['InlineOrDistributed'] as { Choices: { Variable: string; StringEquals: string; Next: string }[]; Default: string };
  assert.deepEqual(
    choice.Choices.map((c) => [c.Variable, c.StringEquals, c.Next]),
    [['$.plan.mapMode', 'DISTRIBUTED', 'ExecuteGroupsDistributed']],
  );
  assert.equal(choice.Default, 'ExecuteGroups');
  const inline = states['ExecuteGroups']!;
  const distributed = states['ExecuteGroupsDistributed']!;
  assert.deepEqual(distributed['ItemReader'], {
    Resource: 'arn:aws:states:::s3:getObject',
    ReaderConfig: { InputType: 'JSON' },
    Parameters: { 'Bucket.$': '$.plan.manifest.bucket', 'Key.$': '$.plan.manifest.key' },
  });
  assert.equal(distributed['ToleratedFailurePercentage'], 0);
  for (const field of ['MaxConcurrencyPath', 'ItemSelector', 'ResultPath', 'Catch', 'Next']) assert.deepEqual(distributed[field], inline[field], field);
  type Processor = { ProcessorConfig: Record<string, string>; States: Record<string, Record<string, unknown>> };
  const inlineProcessor = inline['ItemProcessor'] as Processor;
  const processor = distributed['ItemProcessor'] as Processor;
  assert.deepEqual(processor.ProcessorConfig, { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
  // Each Map iteration first picks its function from the item (lib/clustering/executor.ts), in both Maps alike.
  for (const [map, which, task, copyTask] of [
    [inlineProcessor, 'WhichFunction', 'ExecuteGroup', 'ExecuteCopyGroup'],
    [processor, 'WhichRunFunction', 'RunGroup', 'RunCopyGroup'],
  ] as const) {
    assert.equal((map as unknown as { StartAt: string }).StartAt, which);
    assert.deepEqual(map.States[which], {
      ...map.States[which],
      Type: 'Choice',
      Choices: [{ Variable: '$.executor', StringEquals: 'copy', Next: copyTask }],
      Default: task,
    });
    const { Resource: resource, ...rest } = map.States[task]!;
    const { Resource: copyResource, ...copyRest } = map.States[copyTask]!;
    assert.deepEqual(copyRest, rest, `${copyTask}: the same timeout, retries and catch as ${task}`);
    assert.notEqual(copyResource, resource);
  }
  assert.deepEqual((inline['ItemSelector'] as Record<string, string>)['executor.$'], '$$.Map.Item.Value.executor');
  const task = processor.States['RunGroup']!;
  const inlineTask = inlineProcessor.States['ExecuteGroup']!;
  for (const field of ['Resource', 'TimeoutSeconds', 'Retry']) assert.deepEqual(task[field], inlineTask[field], field);
  assert.deepEqual(task['Catch'], [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'RunGroupFailed' }]);

  const local = inlineDistributedMaps(definition);
  assert.deepEqual(local.itemReaders, ['ExecuteGroupsDistributed: read items']);
  const standIn = (local.definition.States as unknown as Record<string, Record<string, unknown>>)['ExecuteGroupsDistributed']!;
  assert.equal(standIn['Type'], 'Parallel');
  assert.deepEqual(standIn['Catch'], inline['Catch']);
  assert.doesNotThrow(() => new StateMachine(local.definition, { validationOptions: { checkArn: true, checkPaths: true } }));
});

test('the template substitutes every placeholder of the definitions', () => {
  const template = readFileSync(TEMPLATE, 'utf8');
  const placeholders = [DEFINITION, COMPACTION_DEFINITION].flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((match) => match[1]!),
  );
  assert.deepEqual([...new Set(placeholders)].sort(), Object.keys(FUNCTION_SUBSTITUTIONS).sort());
  for (const name of placeholders) assert.match(template, new RegExp(`^\\s+${name}: !GetAtt \\w+\\.Arn$`, 'm'), `${name} in DefinitionSubstitutions`);
  assert.match(template, /DefinitionUri: infra\/state-machine\.asl\.json/);
  assert.match(template, /DefinitionUri: infra\/compaction-state-machine\.asl\.json/);
  // The compaction schedule is off unless EnableCompactionSchedule says otherwise.
  assert.match(template, /EnableCompactionSchedule:\n {4}Type: String\n(?: {4,}.*\n)*? {4}Default: 'false'/);
  assert.match(template, /State: !If \[CompactionScheduleEnabled, ENABLED, DISABLED\]/);
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

test("the template's functions have the memory, timeout and /tmp of lib/serverless/aws/function-settings.ts, and the README says so", () => {
  const deployed = deployedFunctions(readFileSync(TEMPLATE, 'utf8'));
  assert.deepEqual(
    [...deployed.keys()].sort(),
    Object.values(FUNCTIONS)
      .map((settings) => settings.resource)
      .sort(),
    'every function of the template, and no other',
  );
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  for (const [name, { resource, ...settings }] of Object.entries(FUNCTIONS)) {
    assert.deepEqual(deployed.get(resource), settings, `${resource} (${name})`);
    assert.match(
      readme,
      new RegExp(`^\\| \`${name}\` \\|.*\\| ${settings.memoryMb} MB[^|]* / ${settings.timeoutSeconds} s \\|$`, 'm'),
      `README's function table: ${name}`,
    );
  }
});

// ---------------------------------------------------------------------------------------------------------------
// The template's conditions, evaluated as CloudFormation would.

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** template.yaml as JSON, short tags (!Sub, !If, …) as their long forms: cfn-lint's own YAML reader does the parsing. */
function templateJson(): Record<string, Record<string, Json>> {
  const script = 'import json, sys\nfrom cfnlint.decode import cfn_yaml\nprint(json.dumps(cfn_yaml.load(sys.argv[1])))';
  return JSON.parse(execFileSync(toolchainTool('python'), ['-c', script, TEMPLATE], { encoding: 'utf8' })) as Record<string, Record<string, Json>>;
}

/** Evaluates the intrinsic functions the template's Conditions use, for given parameter values. */
function conditionEvaluator(template: Record<string, Record<string, Json>>, parameters: Record<string, string>): (name: string) => boolean {
  const value = (node: Json): Json => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
    const [fn, argument] = Object.entries(node)[0]!;
    const args = argument as Json[];
    switch (fn) {
      case 'Ref': {
        const name = argument as string;
        if (name in parameters) return parameters[name]!;
        const declared = template['Parameters']![name] as { Default?: Json } | undefined;
        assert.ok(declared?.Default !== undefined, `parameter ${name} has a value`);
        return String(declared.Default);
      }
      case 'Fn::Sub':
        return (argument as string).replace(/\$\{([A-Za-z0-9:]+)\}/g, (_, name: string) => String(value({ Ref: name })));
      case 'Fn::Split':
        return String(value(args[1]!)).split(args[0] as string);
      case 'Fn::Select': {
        const list = value(args[1]!) as Json[];
        const index = Number(value(args[0]!));
        assert.ok(index < list.length, `Fn::Select index ${index} within a list of ${list.length}`);
        return list[index]!;
      }
      case 'Fn::Equals':
        return value(args[0]!) === value(args[1]!);
      case 'Fn::Not':
        return !value(args[0]!);
      case 'Fn::And':
        return args.every((item) => value(item) === true);
      case 'Fn::Or':
        return args.some((item) => value(item) === true);
      case 'Condition':
        return condition(argument as string);
      default:
        assert.fail(`${fn} is not evaluated here`);
    }
  };
  const condition = (name: string): boolean => {
    const definition = template['Conditions']![name];
    assert.ok(definition !== undefined, `condition ${name}`);
    return value(definition) === true;
  };
  return condition;
}

test('the stack refuses a landing prefix that overlaps the table in its bucket, exactly where ingest itself would', () => {
  const template = templateJson();
  const resources = template['Resources'] as Record<string, { Type: string; Condition?: string }>;
  assert.equal(resources['LandingPrefixOverlapsTablePrefix']?.Condition, 'LandingOverlapsTable', 'the refusal');
  for (const name of ['IngestFunction', 'LandingObjectCreatedRule', 'IngestDeadLetterQueue', 'IngestLogGroup']) {
    assert.equal(resources[name]?.Condition, 'DeployIngest', `${name} is not deployed next to an overlap`);
  }
  const tablePrefixes = ['tables/users', 'tables', 'users', 'a/b/c/d/e/f/g/h'];
  const landingPrefixes = [
    '',
    'landing/',
    'tables/',
    'tables/users/',
    'tables/users/in/',
    'tables/users/.hoodie/',
    'tables/users2/',
    'tables/user/',
    'users/',
    'users2/',
    'a/b/c/',
    'a/b/c/d/e/f/g/h/in/',
    'a/b/c/d/e/f/g/x/',
  ];
  let overlaps = 0;
  for (const tablePrefix of tablePrefixes) {
    for (const landingPrefix of landingPrefixes) {
      for (const landingBucket of ['table-bucket', 'landing-bucket']) {
        const condition = conditionEvaluator(template, {
          TableBucket: 'table-bucket',
          TablePrefix: tablePrefix,
          LandingBucket: landingBucket,
          LandingPrefix: landingPrefix,
        });
        const expected = prefixOverlapsTable(`s3://table-bucket/${tablePrefix}`, landingBucket, landingPrefix);
        const what = `s3://${landingBucket}/${landingPrefix} next to the table s3://table-bucket/${tablePrefix}`;
        assert.equal(condition('LandingOverlapsTable'), expected, what);
        assert.equal(condition('DeployIngest'), !expected, what);
        if (expected) overlaps += 1;
      }
    }
  }
  assert.ok(overlaps >= 10, `${overlaps} overlapping cases among them`);
  assert.equal(
    conditionEvaluator(template, { TableBucket: 'b', TablePrefix: 't', LandingBucket: '', LandingPrefix: '' })('LandingOverlapsTable'),
    false,
    'no ingest, nothing to refuse',
  );
  // Ten segments are compared: prefixes that agree on all ten are refused, though they part further down.
  const deep = { TableBucket: 'b', LandingBucket: 'b', TablePrefix: '1/2/3/4/5/6/7/8/9/10/table', LandingPrefix: '1/2/3/4/5/6/7/8/9/10/landing/' };
  assert.equal(prefixOverlapsTable(`s3://b/${deep.TablePrefix}`, 'b', deep.LandingPrefix), false);
  assert.equal(conditionEvaluator(template, deep)('LandingOverlapsTable'), true, 'refused, to be safe');
});

test('the template: the doctor runs on its own schedule, off unless EnableDoctorSchedule=true, with {} (report only)', () => {
  const template = templateJson();
  const resources = template['Resources'] as Record<string, { Type: string; Properties: Record<string, Json> }>;
  const doctor = resources['DoctorFunction']!;
  assert.equal(doctor.Type, 'AWS::Serverless::Function');
  assert.equal(doctor.Properties['Handler'], 'doctor.handler');
  const schedule = (doctor.Properties['Events'] as Record<string, { Type: string; Properties: Record<string, Json> }>)['Schedule']!;
  assert.equal(schedule.Type, 'Schedule');
  assert.deepEqual(schedule.Properties['Schedule'], { Ref: 'DoctorScheduleExpression' });
  assert.deepEqual(schedule.Properties['State'], { 'Fn::If': ['DoctorScheduleEnabled', 'ENABLED', 'DISABLED'] });
  assert.equal(schedule.Properties['Input'], '{}', 'the schedule never asks for repairs');
  const parameters = template['Parameters'] as Record<string, Record<string, Json>>;
  assert.equal(parameters['EnableDoctorSchedule']!['Default'], 'false');
  const base = { TableBucket: 'b', TablePrefix: 't' };
  assert.equal(conditionEvaluator(template, base)('DoctorScheduleEnabled'), false);
  assert.equal(conditionEvaluator(template, { ...base, EnableDoctorSchedule: 'true' })('DoctorScheduleEnabled'), true);
});

test('the template: DLQ and alarm for ingest, log retention, the optional KMS key, a kept lock table, reserved concurrency', () => {
  const template = templateJson();
  const resources = template['Resources'] as Record<
    string,
    { Type: string; Condition?: string; DeletionPolicy?: string; UpdateReplacePolicy?: string; Properties: Record<string, Json> }
  >;
  const lock = resources['LockTable']!;
  assert.deepEqual([lock.DeletionPolicy, lock.UpdateReplacePolicy], ['Retain', 'Retain']);

  const ingest = resources['IngestFunction']!.Properties;
  assert.deepEqual(ingest['ReservedConcurrentExecutions'], { Ref: 'IngestReservedConcurrency' });
  const queueArn = { 'Fn::GetAtt': ['IngestDeadLetterQueue', 'Arn'] };
  assert.deepEqual((ingest['EventInvokeConfig'] as Record<string, Json>)['DestinationConfig'], { OnFailure: { Type: 'SQS', Destination: queueArn } });
  // Landed objects go through IngestQueue, read in batches; only the failed messages come back.
  const target = (resources['LandingObjectCreatedRule']!.Properties['Targets'] as Record<string, Json>[])[0]!;
  assert.deepEqual(target['Arn'], { 'Fn::GetAtt': ['IngestQueue', 'Arn'] });
  assert.deepEqual(target['DeadLetterConfig'], { Arn: queueArn });
  const landed = (ingest['Events'] as Record<string, { Type: string; Properties: Record<string, Json> }>)['Landed']!;
  assert.equal(landed.Type, 'SQS');
  assert.deepEqual(landed.Properties, {
    Queue: { 'Fn::GetAtt': ['IngestQueue', 'Arn'] },
    BatchSize: { Ref: 'IngestBatchSize' },
    MaximumBatchingWindowInSeconds: { Ref: 'IngestBatchWindowSeconds' },
    FunctionResponseTypes: ['ReportBatchItemFailures'],
  });
  const queue = resources['IngestQueue']!.Properties;
  assert.deepEqual((queue['RedrivePolicy'] as Record<string, Json>)['deadLetterTargetArn'], queueArn);
  assert.ok(Number(queue['VisibilityTimeout']) >= 6 * Number(ingest['Timeout']), 'a message outlasts an invocation, as Lambda advises for SQS');
  const sendStatement = ((resources['IngestQueuePolicy']!.Properties['PolicyDocument'] as Record<string, Json[]>)['Statement']![0] as Record<string, Json>)[
    'Condition'
  ];
  assert.deepEqual(sendStatement, { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': ['LandingObjectCreatedRule', 'Arn'] } } });
  const parameters = template['Parameters'] as Record<string, Record<string, Json>>;
  assert.deepEqual((ingest['Environment'] as Record<string, Record<string, Json>>)['Variables']![INGEST_BATCH_MAX_BYTES.envVar], {
    Ref: 'IngestBatchMaxBytes',
  });
  assert.equal(parameters['IngestBatchMaxBytes']!['Default'], INGEST_BATCH_MAX_BYTES.default, "the default is the key's own");
  const alarm = resources['IngestDeadLetterAlarm']!.Properties;
  assert.deepEqual((alarm['Dimensions'] as Json[])[0], { Name: 'QueueName', Value: { 'Fn::GetAtt': ['IngestDeadLetterQueue', 'QueueName'] } });

  for (const [name, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::Serverless::Function') continue;
    const group = (resource.Properties['LoggingConfig'] as Record<string, { Ref: string }>)['LogGroup']!.Ref;
    assert.equal(resources[group]?.Type, 'AWS::Logs::LogGroup', `${name} logs to a group of the stack`);
    assert.deepEqual(resources[group]!.Properties['RetentionInDays'], { Ref: 'LogRetentionInDays' }, group);
    const statements = (resource.Properties['Policies'] as Record<string, Json>[]).find((policy) => 'Statement' in policy)!['Statement'] as Json[];
    const kms = statements.find((statement) => JSON.stringify(statement).includes('kms:'));
    assert.deepEqual((kms as Record<string, Json[]>)['Fn::If']?.slice(0, 1), ['HasKmsKey'], `${name}: KMS only when KmsKeyArn is given`);
    const granted = (kms as Record<string, Json[]>)['Fn::If']![1] as Record<string, Json>;
    assert.deepEqual(granted['Resource'], { Ref: 'KmsKeyArn' });
    assert.deepEqual(granted['Action'], name === 'TriggerFunction' ? ['kms:Decrypt'] : ['kms:Decrypt', 'kms:GenerateDataKey'], name);
  }
});

test('the template: alarms on failed executions and a plan pending too long, and a dashboard of the metrics the handlers publish', () => {
  const template = templateJson();
  const resources = template['Resources'] as Record<string, { Type: string; Condition?: string; Properties: Record<string, Json> }>;
  const failed = resources['FailedExecutionsAlarm']!.Properties;
  assert.deepEqual(
    [failed['Namespace'], failed['MetricName'], failed['Dimensions']],
    ['AWS/States', 'ExecutionsFailed', [{ Name: 'StateMachineArn', Value: { Ref: 'ClusteringStateMachine' } }]],
  );
  const pending = resources['PlanPendingTooLongAlarm']!.Properties;
  const globals = (template['Globals'] as Record<string, Record<string, Record<string, Record<string, Json>>>>)['Function']!['Environment']!['Variables']!;
  assert.deepEqual(
    [pending['Namespace'], pending['MetricName'], pending['Threshold']],
    [globals['POWERTOOLS_METRICS_NAMESPACE'], METRIC.pendingPlanAge, { Ref: 'MaxPlanPendingSeconds' }],
  );
  assert.deepEqual(pending['Dimensions'], [
    { Name: 'service', Value: globals['POWERTOOLS_SERVICE_NAME'] },
    { Name: 'step', Value: 'trigger' },
  ]);

  // Compaction's: its own state machine's failed executions, and the age its schedule step publishes.
  const compactionFailed = resources['CompactionFailedExecutionsAlarm']!.Properties;
  assert.deepEqual(
    [compactionFailed['Namespace'], compactionFailed['MetricName'], compactionFailed['Dimensions']],
    ['AWS/States', 'ExecutionsFailed', [{ Name: 'StateMachineArn', Value: { Ref: 'CompactionStateMachine' } }]],
  );
  const compactionPending = resources['CompactionPendingTooLongAlarm']!.Properties;
  assert.deepEqual(
    [compactionPending['Namespace'], compactionPending['MetricName'], compactionPending['Threshold'], compactionPending['Dimensions']],
    [
      globals['POWERTOOLS_METRICS_NAMESPACE'],
      METRIC.pendingPlanAge,
      { Ref: 'MaxPlanPendingSeconds' },
      [
        { Name: 'service', Value: globals['POWERTOOLS_SERVICE_NAME'] },
        { Name: 'step', Value: 'compaction-schedule' },
      ],
    ],
  );

  // The dashboard's body is JSON once CloudFormation substitutes it, and names only metrics the code publishes.
  const body = (resources['OperationsDashboard']!.Properties['DashboardBody'] as { 'Fn::Join': [string, Json[]] })['Fn::Join'][1];
  const render = (node: Json, ingest: boolean): string => {
    if (typeof node === 'string') return node;
    const [fn, argument] = Object.entries(node as Record<string, Json>)[0]!;
    if (fn === 'Fn::Sub') return (argument as string).replace(/\$\{[A-Za-z0-9:.]+\}/g, (match) => (match === '${MaxPlanPendingSeconds}' ? '21600' : 'x'));
    if (fn === 'Fn::If') return render((argument as Json[])[ingest ? 1 : 2]!, ingest);
    return assert.fail(`${fn} in the dashboard body`);
  };
  for (const ingest of [true, false]) {
    const dashboard = JSON.parse(body.map((part) => render(part, ingest)).join('')) as { widgets: { properties: { metrics: Json[][] } }[] };
    const names = dashboard.widgets
      .flatMap((widget) => widget.properties.metrics.filter((row) => row[0] !== '...').map((row) => row[1]))
      .filter((name) => typeof name === 'string' && name !== '.');
    const known = new Set<string>([
      ...Object.values(METRIC),
      'ExecutionsStarted',
      'ExecutionsSucceeded',
      'ExecutionsFailed',
      'RecordsIngested',
      'BadRecords',
      'ApproximateNumberOfMessagesVisible',
    ]);
    assert.deepEqual(
      names.filter((name) => !known.has(name as string)),
      [],
      'every metric on the dashboard is published',
    );
    assert.equal(names.includes('ApproximateNumberOfMessagesVisible'), ingest, 'the dead-letter queue only with ingest');
    const compactionRows = dashboard.widgets
      .flatMap((widget) => widget.properties.metrics)
      .filter((row) => row[0] !== '...' && row.includes('compaction-commit'));
    assert.deepEqual(
      compactionRows.map((row) => row[1]),
      [METRIC.operations, METRIC.filesIn, METRIC.bytesIn],
      "compaction's totals (the rows after each repeat its dimensions)",
    );
  }
});

test('the template: the state machine may start, describe and stop its own child executions and read the group manifests; execute-group concurrency is a parameter', () => {
  const template = templateJson();
  const resources = template['Resources'] as Record<string, { Type: string; Properties: Record<string, Json> }>;
  const child = resources['ClusteringStateMachineChildExecutionsPolicy']!;
  assert.equal(child.Type, 'AWS::IAM::Policy');
  assert.deepEqual(child.Properties['Roles'], [{ Ref: 'ClusteringStateMachineRole' }], 'the role SAM generates for the state machine');
  const statements = (child.Properties['PolicyDocument'] as { Statement: Record<string, Json>[] }).Statement;
  assert.deepEqual(
    statements.map((statement) => [statement['Action'], statement['Resource']]),
    [
      ['states:StartExecution', { Ref: 'ClusteringStateMachine' }],
      [
        ['states:DescribeExecution', 'states:StopExecution'],
        {
          'Fn::Sub': [
            'arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:execution:${Name}/*',
            { Name: { 'Fn::GetAtt': ['ClusteringStateMachine', 'Name'] } },
          ],
        },
      ],
    ],
  );
  const policies = resources['ClusteringStateMachine']!.Properties['Policies'] as Record<string, Json>[];
  const manifest = (policies.find((policy) => 'Statement' in policy)!['Statement'] as Record<string, Json>[]).find(
    (statement) => statement['Sid'] === 'ReadGroupManifests',
  )!;
  assert.equal(manifest['Action'], 's3:GetObject');
  // The plan step writes the manifest where this grant points (scale-out.ts).
  const path = groupManifestPath('20260101000000000');
  assert.deepEqual(manifest['Resource'], {
    'Fn::Sub': `arn:\${AWS::Partition}:s3:::\${TableBucket}/\${TablePrefix}/${path.replace('20260101000000000', '*')}`,
  });
  const globals = (template['Globals'] as Record<string, Record<string, Record<string, Record<string, Json>>>>)['Function']!['Environment']!['Variables']!;
  assert.deepEqual(globals[LAMBDA_CONCURRENCY_ENV], { Ref: 'ClusteringLambdaConcurrency' });
});

test("the template: table paths refuse IAM wildcards, registered paths and buckets are validated, ARNs take the stack's partition", () => {
  const template = templateJson();
  const parameters = template['Parameters']! as Record<string, { AllowedPattern?: string; Default?: string }>;
  const accepts = (name: string, value: string) => new RegExp(parameters[name]!.AllowedPattern!).test(value);
  assert.ok(accepts('TablePrefix', 'tables/users'));
  for (const bad of ['tables/*', 'tables/us?rs', '*', 'a//b', '/a', 'a/']) assert.ok(!accepts('TablePrefix', bad), `TablePrefix ${bad}`);
  // A CommaDelimitedList's pattern applies to each item; the empty default must pass it.
  for (const good of ['', 'bucket-1/tables/users', 'my.bucket/a/b']) assert.ok(accepts('RegisteredTablePaths', good), `RegisteredTablePaths ${good}`);
  for (const bad of ['s3://bucket/t', 'bucket', 'bucket/', 'bucket/t/', 'bucket/t*', 'bucket/t?', 'Bucket/t']) {
    assert.ok(!accepts('RegisteredTablePaths', bad), `RegisteredTablePaths ${bad}`);
  }
  for (const good of ['', 'bucket-1']) assert.ok(accepts('RegisteredBuckets', good));
  for (const bad of ['s3://bucket', 'bucket/t', 'b*']) assert.ok(!accepts('RegisteredBuckets', bad), `RegisteredBuckets ${bad}`);
  // Every ARN the template builds names the stack's partition: a literal "arn:aws:" only as the standard partition's
  // branch beside aws-cn and aws-us-gov (a join's delimiter cannot be a !Sub).
  const resources = JSON.stringify(template['Resources']);
  const literal = resources.match(/arn:aws[a-z-]*:/g) ?? [];
  assert.equal(literal.filter((arn) => arn === 'arn:aws:').length, literal.filter((arn) => arn === 'arn:aws-cn:').length);
  assert.equal(literal.filter((arn) => arn === 'arn:aws-cn:').length, literal.filter((arn) => arn === 'arn:aws-us-gov:').length);
  assert.ok(resources.includes('arn:${AWS::Partition}:s3:::${TableBucket}'));
});
