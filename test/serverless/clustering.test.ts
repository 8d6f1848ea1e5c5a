// The serverless clustering end to end: the real ASL (infra/state-machine.asl.json) under aws-local-stepfunctions,
// its tasks bound to the bundled handlers (dist/functions/*.mjs), against moto S3 and DynamoDB Local (started by
// infra/with-local-stack.mjs). Results are checked with an independent reader (pyarrow on downloaded files).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { groupResultPath } from '../../lib/clustering/instant.js';
import { dynamoDbClientFromEnv } from '../../lib/lock/index.js';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import { clusterViaStateMachine } from '../../lib/serverless/executions/via-state-machine.js';
import {
  type LocalExecution,
  type LocalRunOptions,
  lambdaContext,
  loadBundledHandler,
  runStateMachineLocally,
  startLocalStepFunctionsEndpoint,
} from '../../lib/serverless/local/index.js';
import type { CommitStepOutput } from '../../lib/serverless/steps/clustering/commit.js';
import type { PlanStepOutput } from '../../lib/serverless/steps/clustering/plan.js';
import type { RollbackStepOutput } from '../../lib/serverless/steps/clustering/rollback.js';
import { SERVERLESS_CLUSTERING_KEYS } from '../../lib/serverless/steps/scale-out.js';
import type { TriggerOutput } from '../../lib/serverless/steps/trigger/trigger.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { clusteringWorkDir } from '../../lib/timeline/work-folder.js';
import { type FaultContext, withFaults } from '../helpers/faults.js';
import { tempDir } from '../helpers/fixtures.js';
import { independentLatestBaseFiles } from '../helpers/oracle.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, downloadTable, dropLockTable, ensureBundles, oracleRows, uploadFiles } from '../helpers/serverless.js';
import { createSmallFilesTable, type SmallFilesTable } from '../helpers/small-files-table.js';

// Handler logs would bury the test report; POWERTOOLS_LOG_LEVEL=INFO shows them.
process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const PARTITIONS = 4;
const COMMITS = 12;
const RETRY_PAUSE_MS = 20;

let functionsDir: string;
let lockTable: string;
let base: SmallFilesTable;
let rowsBefore: string[];
let clusteringProperties: Record<string, string>;

before(async () => {
  functionsDir = ensureBundles();
  lockTable = await createLockTable('hudi-serverless-test');
  base = await createSmallFilesTable({ dir: tempDir('serverless-base-'), partitions: PARTITIONS, commits: COMMITS, rowsPerFile: 40 });
  rowsBefore = oracleRows(base.dir);
  const averageFile = Math.ceil(base.bytes / base.files.length);
  clusteringProperties = {
    'hoodie.layout.optimize.strategy': 'z-order',
    'hoodie.clustering.plan.strategy.sort.columns': 'birthday,createTime',
    // About three input files per group (four groups per partition), two outputs per group.
    'hoodie.clustering.plan.strategy.max.bytes.per.group': String(Math.floor(averageFile * 3.5)),
    'hoodie.clustering.plan.strategy.target.file.max.bytes': String(averageFile * 2),
    'hoodie.clustering.max.parallelism': '4',
  };
});

after(async () => {
  await dropLockTable(lockTable);
});

/** A fresh S3 copy of the base table. */
async function freshTable(name: string): Promise<{ tablePath: string; storage: Storage }> {
  const tablePath = await s3TablePath(name);
  const storage = openStorage(tablePath);
  await uploadFiles(base.dir, storage);
  return { tablePath, storage };
}

const DISTRIBUTED_THRESHOLD = 3;
/** The deployment's properties with a low inline-Map limit, so the test table's plan takes the Distributed Map. */
const DISTRIBUTED_ENVIRONMENT = { CLUSTERING_PROPERTIES: `${SERVERLESS_CLUSTERING_KEYS.inlineMapMaxGroups.key}=${DISTRIBUTED_THRESHOLD}` };

/** The plan step's output, which the state keeps at $.plan. */
function planOf(execution: LocalExecution): Extract<PlanStepOutput, { status: 'CLUSTER' }> {
  const plan = (execution.output as { plan?: PlanStepOutput } | undefined)?.plan;
  assert.ok(plan?.status === 'CLUSTER', `a plan: ${JSON.stringify(execution.output)}`);
  return plan;
}

function run(tablePath: string, options: Partial<LocalRunOptions> = {}): Promise<LocalExecution> {
  return runStateMachineLocally(
    { tablePath, properties: clusteringProperties },
    { functionsDir, retryPauseMs: RETRY_PAUSE_MS, ...options, environment: { LOCK_TABLE: lockTable, ...options.environment } },
  );
}

/** Data files (not under .hoodie) whose name carries `instant`. */
async function dataFilesOf(storage: Storage, instant: string): Promise<string[]> {
  return (await storage.listRecursive(''))
    .map((object) => object.path)
    .filter((path) => !path.startsWith('.hoodie/') && path.endsWith(`_${instant}.parquet`))
    .sort();
}

async function downloaded(storage: Storage): Promise<string> {
  const dir = tempDir('serverless-download-');
  await downloadTable(storage, dir);
  return dir;
}

/** The latest base files an independent reader sees, relative to the table. */
function latestFiles(dir: string): string[] {
  return independentLatestBaseFiles(dir)
    .map((file) => file.slice(dir.length + 1))
    .sort();
}

/** The commit step's summary in a run's output (the run then cleaned and archived). */
function committed(execution: { readonly output: unknown }): CommitStepOutput {
  const clustering = (execution.output as TableServicesOutput).clustering;
  assert.ok(clustering !== undefined, `a clustering committed: ${JSON.stringify(execution.output)}`);
  return clustering;
}

function maxOverlap(execution: LocalExecution, functionName: string): number {
  const intervals = execution.invocations
    .filter((invocation) => invocation.functionName === functionName)
    .map((invocation) => [invocation.startedAt, invocation.startedAt + invocation.durationMs] as const);
  return Math.max(0, ...intervals.map(([start]) => intervals.filter(([from, to]) => from <= start && start < to).length));
}

async function assertCommittedCleanly(storage: Storage, output: CommitStepOutput): Promise<void> {
  const dir = await downloaded(storage);
  assert.deepEqual(oracleRows(dir), rowsBefore, 'the same rows, as a multiset');
  const latest = latestFiles(dir);
  const beforeIds = new Set(base.files.map((file) => file.slice(file.lastIndexOf('/') + 1).split('_')[0]));
  assert.equal(latest.filter((file) => beforeIds.has(file.slice(file.lastIndexOf('/') + 1).split('_')[0])).length, 0, 'every replaced file group is gone');
  assert.ok(
    latest.every((file) => file.endsWith(`_${output.instant}.parquet`)),
    "only the clustering's files are visible",
  );
  assert.deepEqual(await dataFilesOf(storage, output.instant), latest, 'no stray file of the clustering is left');
  assert.equal((await storage.listRecursive(`.hoodie/.temp/${output.instant}`)).length, 0, 'the markers are gone');
  assert.equal((await storage.listRecursive(clusteringWorkDir(output.instant))).length, 0, 'the group results and the run claim are gone');
  assert.equal(await storage.head(`.hoodie/.heartbeat/${output.instant}`), undefined, 'the heartbeat is gone');
}

describe('serverless clustering through the state machine', () => {
  test('clusters every partition in many parallel groups; an independent reader sees the same rows', async () => {
    const { tablePath, storage } = await freshTable('sm-e2e');
    const execution = await run(tablePath);
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    const output = committed(execution);
    assert.equal(output.status, 'COMMITTED');
    assert.equal(output.replacedFileGroups, PARTITIONS * COMMITS);
    const groups = execution.invocations.filter((invocation) => invocation.functionName === 'execute-group');
    assert.ok(groups.length >= 10, `${groups.length} groups`);
    assert.ok(new Set(output.report?.partitions.map((partition) => partition.partitionPath)).size >= 3, 'at least three partitions clustered');
    assert.ok(maxOverlap(execution, 'execute-group') > 1, 'groups ran in parallel');
    assert.ok(groups.every((invocation) => invocation.attempt === 1 && invocation.errorName === undefined));
    assert.ok(execution.cost.lambdaGbSeconds > 0 && execution.cost.s3Tier1Requests > 0 && execution.cost.dynamoDbWrites > 0);
    // The groups' transfers, counted by the storage adapter: each small input one GET, each output a marker and a PUT.
    assert.deepEqual(output.report?.requests, { get: output.replacedFileGroups, put: 2 * output.newFiles });
    await assertCommittedCleanly(storage, output);
  });

  test('sorted groups run in execute-group; groups the plan expects binary copy to do run in the smaller execute-copy-group (inline and Distributed Map)', async () => {
    // Sorted: every group is a rewrite, in execute-group.
    const sorted = await run((await freshTable('sm-executor-sorted')).tablePath);
    assert.equal(sorted.status, 'SUCCEEDED', `${sorted.error}: ${sorted.cause}`);
    assert.ok(planOf(sorted).groups.length > 0 && planOf(sorted).groups.every((group) => group.executor === 'rewrite'), JSON.stringify(planOf(sorted).groups));
    assert.equal(sorted.invocations.filter((invocation) => invocation.functionName === 'execute-copy-group').length, 0);
    // Bin-pack of row groups the copy takes (min.row.group.bytes 0: the test's files are a few KiB).
    const binPack: Record<string, string> = Object.fromEntries(
      Object.entries(clusteringProperties).filter(
        ([key]) => key !== 'hoodie.layout.optimize.strategy' && key !== 'hoodie.clustering.plan.strategy.sort.columns',
      ),
    );
    binPack['hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes'] = '0';
    for (const [name, environment] of [
      ['sm-executor-inline', {}],
      ['sm-executor-distributed', DISTRIBUTED_ENVIRONMENT],
    ] as const) {
      const { tablePath, storage } = await freshTable(name);
      const execution = await runStateMachineLocally(
        { tablePath, properties: binPack },
        { functionsDir, retryPauseMs: RETRY_PAUSE_MS, environment: { LOCK_TABLE: lockTable, ...environment } },
      );
      assert.equal(execution.status, 'SUCCEEDED', `${name}: ${execution.error}: ${execution.cause}`);
      const plan = planOf(execution);
      assert.equal(plan.mapMode, name.endsWith('distributed') ? 'DISTRIBUTED' : 'INLINE');
      const copies = execution.invocations.filter((invocation) => invocation.functionName === 'execute-copy-group');
      assert.deepEqual(
        copies.map((invocation) => invocation.groupIndex).sort((a, b) => a! - b!),
        Array.from({ length: plan.groupsToRun }, (_, index) => index),
        `${name}: every group ran once, in execute-copy-group`,
      );
      assert.equal(execution.invocations.filter((invocation) => invocation.functionName === 'execute-group').length, 0, name);
      assert.ok(
        copies.every((invocation) => invocation.memoryMb === 1024),
        `${name}: billed at execute-copy-group's memory`,
      );
      const output = committed(execution);
      assert.equal(output.replacedFileGroups, PARTITIONS * COMMITS);
      assert.deepEqual(
        { copied: output.report?.execution?.binaryCopyGroups, rewritten: output.report?.execution?.rewrittenGroups },
        { copied: plan.groupsToRun, rewritten: 0 },
        `${name}: every group was a binary copy`,
      );
      await assertCommittedCleanly(storage, output);
    }
  });

  test('an execute-group that fails once is retried: no duplicate rows, no stray files', async () => {
    const { tablePath, storage } = await freshTable('sm-retry');
    let injected = 0;
    const execution = await run(tablePath, {
      // The group did its work (files uploaded, markers written) and then its invocation failed before it
      // recorded its result: what a crash or a timeout at the worst moment leaves.
      handlerOf: withFaults(functionsDir, async (call: FaultContext) => {
        const input = call.input as { instant: string; groupIndex: number };
        if (call.functionName !== 'execute-group' || call.phase !== 'after' || input.groupIndex !== 2 || call.attempt !== 1) return;
        injected += 1;
        await storage.delete([groupResultPath(input.instant, input.groupIndex)]);
        const error = new Error('injected: the invocation died after uploading its files');
        error.name = 'Hudi.Transient';
        throw error;
      }),
    });
    assert.equal(injected, 1);
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    const attempts = execution.invocations.filter((invocation) => invocation.functionName === 'execute-group' && invocation.groupIndex === 2);
    assert.deepEqual(
      attempts.map((invocation) => invocation.attempt),
      [1, 2],
    );
    await assertCommittedCleanly(storage, committed(execution));
  });

  test('a group that always fails: rollback, the table reads as before, and the next run resumes the kept plan', async () => {
    const { tablePath, storage } = await freshTable('sm-fail');
    const failing = await run(tablePath, {
      handlerOf: withFaults(functionsDir, (call) => {
        if (call.functionName === 'execute-group' && call.phase === 'before' && (call.input as { groupIndex: number }).groupIndex === 1)
          throw new Error('injected: disk full');
      }),
    });
    assert.equal(failing.status, 'FAILED');
    assert.equal(failing.error, 'Hudi.Incomplete');
    assert.match(failing.cause ?? '', /group\(s\) have no result \(1\)/);
    assert.equal(
      failing.invocations.filter((invocation) => invocation.functionName === 'execute-group' && invocation.groupIndex === 1).length,
      3,
      'two retries',
    );
    assert.equal(failing.invocations.filter((invocation) => invocation.functionName === 'rollback').length, 1);

    const table = await HudiTable.open(storage);
    const pending = table.timeline.instants.filter((instant) => instant.action === 'replacecommit');
    assert.equal(pending.length, 1);
    const instant = pending[0]!;
    assert.equal(instant.state, 'REQUESTED', 'the plan is kept, its attempt rolled back');
    assert.ok(table.timeline.instants.some((candidate) => candidate.action === 'rollback' && candidate.state === 'COMPLETED'));
    assert.deepEqual(await dataFilesOf(storage, instant.time), [], "the attempt's files are deleted");
    assert.equal(await storage.head(`.hoodie/.heartbeat/${instant.time}`), undefined, 'no heartbeat holds the next run back');
    assert.deepEqual(await storage.listRecursive(clusteringWorkDir(instant.time)), [], "no group result outlives the attempt's files");
    const dir = await downloaded(storage);
    assert.deepEqual(latestFiles(dir), [...base.files].sort(), 'readers see the files as before');
    assert.deepEqual(oracleRows(dir), rowsBefore);

    const resumed = await run(tablePath);
    assert.equal(resumed.status, 'SUCCEEDED', `${resumed.error}: ${resumed.cause}`);
    const output = committed(resumed);
    assert.equal(output.instant, instant.time, 'the same plan was executed');
    await assertCommittedCleanly(storage, output);
  });

  test('a plan with more groups than the inline Map carries runs them in the Distributed Map: all clustered, one replacecommit', async () => {
    const { tablePath, storage } = await freshTable('sm-distributed');
    const execution = await run(tablePath, { environment: { ...DISTRIBUTED_ENVIRONMENT } });
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    const plan = planOf(execution);
    assert.equal(plan.mapMode, 'DISTRIBUTED');
    assert.ok(plan.groupsToRun > DISTRIBUTED_THRESHOLD, `${plan.groupsToRun} groups`);
    assert.deepEqual(plan.groups, [], 'the groups travel in the manifest, not in the state');
    assert.ok(plan.manifest !== undefined && plan.manifest.key.endsWith(`${plan.instant}/groups.json`), JSON.stringify(plan.manifest));
    const groups = execution.invocations.filter((invocation) => invocation.functionName === 'execute-group');
    assert.deepEqual(
      groups.map((invocation) => invocation.groupIndex).sort((a, b) => a! - b!),
      Array.from({ length: plan.groupsToRun }, (_, index) => index),
      'every group ran once',
    );
    assert.ok(maxOverlap(execution, 'execute-group') > 1, 'groups ran in parallel');
    const output = committed(execution);
    assert.equal(output.status, 'COMMITTED');
    assert.equal(output.instant, plan.instant);
    assert.equal(output.replacedFileGroups, PARTITIONS * COMMITS);
    const replacecommits = (await HudiTable.open(storage)).timeline.instants.filter((instant) => instant.action === 'replacecommit');
    assert.deepEqual(
      replacecommits.map((instant) => [instant.time, instant.state]),
      [[plan.instant, 'COMPLETED']],
    );
    await assertCommittedCleanly(storage, output);
  });

  test('a group that always fails in the Distributed Map: rollback as with the inline Map, the plan kept', async () => {
    const { tablePath, storage } = await freshTable('sm-distributed-fail');
    const entered: string[] = [];
    const failing = await run(tablePath, {
      environment: { ...DISTRIBUTED_ENVIRONMENT },
      onProgress: (event) => {
        if (event.kind === 'state-entered' && event.index === undefined) entered.push(event.state);
      },
      handlerOf: withFaults(functionsDir, (call) => {
        if (call.functionName === 'execute-group' && call.phase === 'before' && (call.input as { groupIndex: number }).groupIndex === 1)
          throw new Error('injected: disk full');
      }),
    });
    assert.equal(failing.status, 'FAILED');
    assert.deepEqual(
      entered.filter((state) => ['ExecuteGroups', 'ExecuteGroupsDistributed', 'Rollback'].includes(state)),
      ['ExecuteGroupsDistributed', 'Rollback'],
      'the Distributed Map ran, then the rollback',
    );
    assert.equal(failing.error, 'Hudi.Incomplete');
    assert.match(failing.cause ?? '', /group\(s\) have no result \(1\)/);
    assert.equal(
      failing.invocations.filter((invocation) => invocation.functionName === 'execute-group' && invocation.groupIndex === 1).length,
      3,
      'two retries',
    );
    assert.equal(failing.invocations.filter((invocation) => invocation.functionName === 'rollback').length, 1);
    const table = await HudiTable.open(storage);
    const pending = table.timeline.instants.filter((instant) => instant.action === 'replacecommit');
    assert.deepEqual(
      pending.map((instant) => instant.state),
      ['REQUESTED'],
      'the plan is kept, its attempt rolled back',
    );
    assert.deepEqual(await dataFilesOf(storage, pending[0]!.time), [], "the attempt's files are deleted");
    assert.deepEqual(await storage.listRecursive(clusteringWorkDir(pending[0]!.time)), [], 'no group result or manifest outlives the attempt');
    const dir = await downloaded(storage);
    assert.deepEqual(latestFiles(dir), [...base.files].sort(), 'readers see the files as before');
    assert.deepEqual(oracleRows(dir), rowsBefore);
  });

  test('rollback with abandon drops the plan; the next run plans afresh', async () => {
    const { tablePath, storage } = await freshTable('sm-abandon');
    const failing = await run(tablePath, {
      handlerOf: withFaults(functionsDir, (call) => {
        if (call.functionName === 'execute-group' && call.phase === 'before' && (call.input as { groupIndex: number }).groupIndex === 0)
          throw new Error('injected');
      }),
    });
    assert.equal(failing.status, 'FAILED');
    const instant = (await HudiTable.open(storage)).timeline.instants.find((candidate) => candidate.action === 'replacecommit')!.time;

    const rollback = await loadBundledHandler('rollback', functionsDir);
    const previous = process.env['LOCK_TABLE'];
    process.env['LOCK_TABLE'] = lockTable;
    let abandoned: RollbackStepOutput;
    try {
      abandoned = (await rollback({ tablePath, instant, abandon: true }, lambdaContext('rollback'))) as RollbackStepOutput;
    } finally {
      if (previous === undefined) delete process.env['LOCK_TABLE'];
      else process.env['LOCK_TABLE'] = previous;
    }
    assert.equal(abandoned.outcome, 'plan-abandoned');
    assert.equal(abandoned.planKept, false);
    const table = await HudiTable.open(storage);
    assert.equal(table.timeline.instants.filter((candidate) => candidate.action === 'replacecommit').length, 0, 'no clustering left on the timeline');
    assert.equal(await storage.head(`.hoodie/${instant}.replacecommit.requested`), undefined);

    const next = await run(tablePath);
    assert.equal(next.status, 'SUCCEEDED', `${next.error}: ${next.cause}`);
    const output = committed(next);
    assert.notEqual(output.instant, instant, 'a new plan');
    await assertCommittedCleanly(storage, output);
  });

  test('a table whose metadata table a clustering cannot keep (a partition being built): the run fails at Plan with Hudi.Error naming the partition; nothing is written', async () => {
    const { tablePath, storage } = await freshTable('sm-mdt');
    const properties = Buffer.from(await storage.get('.hoodie/hoodie.properties')).toString('utf8');
    await storage.put(
      '.hoodie/hoodie.properties',
      `${properties}hoodie.table.metadata.partitions=files\nhoodie.table.metadata.partitions.inflight=column_stats\n`,
    );
    const execution = await run(tablePath);
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.error, 'Hudi.Error', 'permanent: not retried');
    assert.match(execution.cause ?? '', /a clustering cannot keep Hudi's metadata table correct: partition column_stats is being built/);
    assert.match(execution.cause ?? '', /wait until Hudi finishes building it/);
    assert.equal(execution.invocations.filter((invocation) => invocation.functionName === 'plan').length, 1);
    assert.equal(execution.invocations.filter((invocation) => invocation.functionName === 'execute-group').length, 0);
    assert.deepEqual(
      (await HudiTable.open(storage)).timeline.instants.filter((instant) => instant.action !== 'commit'),
      [],
      'no clustering or rollback instant',
    );
  });

  test('the plan step: another execution sees ALREADY_RUNNING, a retry of the same execution resumes its plan', async () => {
    const { tablePath, storage } = await freshTable('sm-plan-claim');
    const plan = await loadBundledHandler('plan', functionsDir);
    const previous = process.env['LOCK_TABLE'];
    process.env['LOCK_TABLE'] = lockTable;
    try {
      const call = async (runId: string): Promise<PlanStepOutput> =>
        (await plan({ input: { tablePath, properties: clusteringProperties }, runId }, lambdaContext('plan'))) as PlanStepOutput;
      const first = await call('execution-a');
      assert.equal(first.status, 'CLUSTER');
      if (first.status !== 'CLUSTER') return;
      // The claim is ours, in the work folder: Hudi's rollback would take anything in the marker folder for a marker.
      assert.deepEqual(await storage.listRecursive(`.hoodie/.temp/${first.instant}`), []);
      assert.deepEqual(
        (await storage.listRecursive(clusteringWorkDir(first.instant))).map((object) => object.path),
        [`${clusteringWorkDir(first.instant)}/serverless-run.json`],
      );
      const other = await call('execution-b');
      assert.equal(other.status, 'ALREADY_RUNNING');
      const retry = await call('execution-a');
      assert.equal(retry.status, 'CLUSTER');
      if (first.status !== 'CLUSTER' || retry.status !== 'CLUSTER' || other.status !== 'ALREADY_RUNNING') return;
      assert.equal(other.instant, first.instant);
      assert.equal(retry.instant, first.instant);
      assert.equal(retry.resumed, true);
      assert.deepEqual(retry.groups, first.groups, 'no group has a result yet');
      assert.equal(first.maxConcurrency, 4);
    } finally {
      if (previous === undefined) delete process.env['LOCK_TABLE'];
      else process.env['LOCK_TABLE'] = previous;
    }
  });

  test('a lock left by a dead holder is taken over once its lease ran out', async () => {
    const { tablePath, storage } = await freshTable('sm-stale-lock');
    const dynamo = dynamoDbClientFromEnv();
    const key = { key: { S: 'users' } };
    const leaseMs = 3000;
    await dynamo.send(
      new PutItemCommand({
        TableName: lockTable,
        Item: {
          ...key,
          ownerName: { S: 'hudi-clustering-plan:4242:dead' },
          recordVersionNumber: { S: randomUUID() },
          leaseDuration: { S: String(leaseMs) },
          expireAt: { N: String(Math.floor(Date.now() / 1000) + 3600) },
        },
      }),
    );
    const execution = await run(tablePath);
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    const plan = execution.invocations.find((invocation) => invocation.functionName === 'plan')!;
    assert.ok(plan.durationMs >= leaseMs - 200, `the plan waited for the lease (${Math.round(plan.durationMs)} ms)`);
    assert.equal((await dynamo.send(new GetItemCommand({ TableName: lockTable, Key: key, ConsistentRead: true }))).Item, undefined, 'the lock is released');
    await assertCommittedCleanly(storage, committed(execution));
  });

  test('the trigger starts one run, once max.commits commits completed since the last clustering', async () => {
    const tablePath = await s3TablePath('sm-trigger');
    const storage = openStorage(tablePath);
    const [bucket, ...prefixParts] = tablePath.slice('s3://'.length).split('/');
    const prefix = prefixParts.join('/');
    const instantsOf = (count: number): string[] => base.instants.slice(0, count);
    // A commit "completes" here as a writer completes it: its data files first, then its timeline files.
    const land = async (instants: readonly string[]): Promise<void> => {
      await uploadFiles(base.dir, storage, (path) => instants.some((instant) => path.endsWith(`_${instant}.parquet`)));
      await uploadFiles(
        base.dir,
        storage,
        (path) => path.startsWith('.hoodie/') && instants.some((instant) => path.startsWith(`.hoodie/${instant}.`)) && !path.endsWith('.commit'),
      );
      await uploadFiles(base.dir, storage, (path) => instants.some((instant) => path === `.hoodie/${instant}.commit`));
    };
    await uploadFiles(base.dir, storage, (path) => path === '.hoodie/hoodie.properties' || path.endsWith('.hoodie_partition_metadata'));
    await land(instantsOf(2));

    const endpoint = await startLocalStepFunctionsEndpoint({ functionsDir, retryPauseMs: RETRY_PAUSE_MS });
    const environment: Record<string, string> = {
      TABLE_PATH: tablePath,
      STATE_MACHINE_ARN: endpoint.stateMachineArn,
      AWS_ENDPOINT_URL_SFN: endpoint.endpoint,
      LOCK_TABLE: lockTable,
      CLUSTERING_PROPERTIES: JSON.stringify(clusteringProperties),
    };
    const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
    Object.assign(process.env, environment);
    try {
      const trigger = await loadBundledHandler('trigger', functionsDir);
      const fire = async (event: unknown): Promise<TriggerOutput> => (await trigger(event, lambdaContext('trigger'))) as TriggerOutput;
      const scheduled = { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', resources: [], detail: {} };
      const objectCreated = (key: string) => ({
        version: '0',
        id: randomUUID(),
        'detail-type': 'Object Created',
        source: 'aws.s3',
        detail: { bucket: { name: bucket }, object: { key, size: 1 } },
      });

      const waiting = await fire(scheduled);
      assert.equal(waiting.status, 'WAITING', '2 of 4 commits');
      assert.match(waiting.reason, /clustering waits for 4 \(hoodie\.clustering\.async\.max\.commits, the trigger's policy\)/);
      assert.equal((await fire(objectCreated(`${prefix}/.hoodie/${base.instants[1]}.commit.requested`))).status, 'IGNORED', 'not a completed commit');
      assert.equal((await fire(objectCreated(`other-table/.hoodie/${base.instants[1]}.commit`))).status, 'IGNORED', 'another table');
      await land(instantsOf(3));
      assert.equal((await fire(objectCreated(`${prefix}/.hoodie/${base.instants[2]}.commit`))).status, 'WAITING', '3 of 4 commits');
      assert.equal(endpoint.executions().length, 0);

      await land(instantsOf(4));
      // The commit's S3 event and the hourly schedule fire together: one run.
      const [fromCommit, fromSchedule] = await Promise.all([fire(objectCreated(`${prefix}/.hoodie/${base.instants[3]}.commit`)), fire(scheduled)]);
      assert.ok(
        ['STARTED', 'ALREADY_STARTED'].includes(fromCommit.status) && ['STARTED', 'ALREADY_STARTED'].includes(fromSchedule.status),
        `${fromCommit.status} / ${fromSchedule.status}`,
      );
      assert.equal(fromCommit.executionName, fromSchedule.executionName);
      assert.equal(endpoint.executions().length, 1, 'one execution');
      await endpoint.settled();
      const [execution] = endpoint.executions();
      assert.equal(execution?.status, 'SUCCEEDED', `${execution?.result?.error}: ${execution?.result?.cause}`);
      const table = await HudiTable.open(storage);
      assert.equal(table.timeline.completed().filter((instant) => instant.action === 'replacecommit').length, 1, 'one clustering');

      // Right after a clustering nothing is due, whatever fires.
      assert.equal((await fire(scheduled)).status, 'WAITING');
      const replacecommit = table.timeline.completed().find((instant) => instant.action === 'replacecommit')!;
      assert.equal((await fire(objectCreated(`${prefix}/.hoodie/${replacecommit.time}.replacecommit`))).status, 'WAITING');
      assert.equal(endpoint.executions().length, 1);

      // `cluster --via-state-machine <ARN>` against the same endpoint, with async clustering switched on: the plan step
      // then waits for max.commits itself (Hudi's rule), so there is nothing to do yet.
      const lines: string[] = [];
      const viaArn = await clusterViaStateMachine(tablePath, {
        stateMachine: endpoint.stateMachineArn,
        pollMs: 100,
        onProgress: (line) => lines.push(line),
        properties: { 'hoodie.clustering.async.enabled': 'true' },
      });
      assert.equal(viaArn.status, 'SUCCEEDED');
      const planned = (viaArn.output as TableServicesOutput).plan!;
      assert.equal(planned.status, 'NOTHING_TO_DO');
      if (planned.status === 'NOTHING_TO_DO')
        assert.match(planned.reason, /0 completed commit\(s\) since the last clustering \d{17}, waiting for 4 \(hoodie\.clustering\.async\.max\.commits\)/);
      assert.ok(
        lines.some((line) => line.includes('→ Plan')),
        lines.join('\n'),
      );
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await endpoint.close();
    }
  });
});
