// Settings come from the deployment only: an execution input or Lambda event may carry the clustering keys the
// deployment allows (EVENT_ALLOWED_PROPERTIES) and nothing else — never a lock, credential or table setting. The
// wire tests run the bundled handlers and the real state machine against moto S3 and DynamoDB Local, with a
// catcher server standing in for the endpoint an attacker would name: it must receive nothing.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DYNAMODB_LOCK_PROVIDER, IN_PROCESS_LOCK_PROVIDER } from '../../lib/lock/index.js';
import { DEFAULT_EVENT_PROPERTIES, EventPropertyError, UNSAFE_CLUSTERING_KEYS } from '../../lib/serverless/aws/event-properties.js';
import { lockProperties, type PropertyOverrides, resolveStepSettings } from '../../lib/serverless/aws/settings.js';
import { clusterViaStateMachine } from '../../lib/serverless/executions/via-state-machine.js';
import { clusterViaLocalStateMachine, type FunctionName, lambdaContext, loadBundledHandler, runStateMachineLocally } from '../../lib/serverless/local/index.js';
import { splitRunProperties } from '../../lib/serverless/local/via-state-machine.js';
import type { PlanStepOutput } from '../../lib/serverless/steps/clustering/plan.js';
import { parseTriggerEvent } from '../../lib/serverless/steps/trigger/trigger.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { tempDir } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';
import { createSmallFilesTable, type SmallFilesTable } from '../helpers/small-files-table.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const TABLE = 's3://bucket/tables/users';
const SORT_COLUMNS = 'hoodie.clustering.plan.strategy.sort.columns';

/** What resolveStepSettings throws for an event with these properties (it must throw an EventPropertyError). */
function refusal(properties: PropertyOverrides, env: Record<string, string> = {}): EventPropertyError {
  try {
    resolveStepSettings({ TABLE_PATH: TABLE, ...env }, { properties });
  } catch (error) {
    assert.ok(error instanceof EventPropertyError, `an EventPropertyError, got ${String(error)}`);
    return error;
  }
  assert.fail(`${JSON.stringify(properties)} was accepted`);
}

describe('event properties: only what the deployment allows', () => {
  test('every lock and credential key is refused, naming the key and where it is set instead', () => {
    for (const key of [
      'hoodie.write.lock.provider',
      'hoodie.write.lock.dynamodb.table',
      'hoodie.write.lock.dynamodb.partition_key',
      'hoodie.write.lock.dynamodb.region',
      'hoodie.write.lock.dynamodb.endpoint_url',
      'hoodie.write.lock.wait_time_ms',
    ]) {
      const error = refusal({ [key]: 'x' });
      assert.deepEqual(error.keys, [key]);
      assert.match(
        error.message,
        new RegExp(
          `^the event's properties \\(execution input\\): ${key.replace(/\./g, '\\.')} is a table lock setting: it never comes from an event \\(set it in LOCK_TABLE \\(the template's LockTableName\\) or CLUSTERING_PROPERTIES`,
        ),
      );
    }
    assert.match(
      refusal({ 'hoodie.aws.session.token': 'token' }).message,
      /hoodie\.aws\.session\.token is an AWS credential setting: it never comes from an event \(set it in nowhere: the functions sign with their IAM role/,
    );
    assert.match(refusal({ 'hoodie.table.name': 'other' }).message, /hoodie\.table\.name is a table setting/);
    assert.match(refusal({ 'hoodie.write.concurrency.mode': 'SINGLE_WRITER' }).message, /hoodie\.write\.concurrency\.mode is a concurrency setting/);
  });

  test('one error names every refused key of an event', () => {
    const error = refusal({
      [SORT_COLUMNS]: 'id',
      'hoodie.write.lock.provider': IN_PROCESS_LOCK_PROVIDER,
      'hoodie.write.lock.dynamodb.endpoint_url': 'https://example.invalid',
    });
    assert.deepEqual(error.keys, ['hoodie.write.lock.provider', 'hoodie.write.lock.dynamodb.endpoint_url']);
    assert.equal(error.message.split('never comes from an event').length, 3);
  });

  test('by default: the clustering keys that do not affect safety, their Flink aliases, and nothing else', () => {
    const settings = resolveStepSettings(
      { TABLE_PATH: TABLE },
      {
        properties: {
          [SORT_COLUMNS]: 'id,name',
          'hoodie.layout.optimize.strategy': 'z-order',
          'clustering.plan.strategy.max.num.groups': 3,
          'hoodie.clustering.max.parallelism': 2,
        },
      },
    );
    assert.deepEqual(settings.clustering.sortColumns, ['id', 'name']);
    assert.equal(settings.clustering.layoutOptimizationStrategy, 'z-order');
    assert.equal(settings.clustering.maxNumGroups, 3, 'a Flink alias of an allowed key');
    assert.equal(settings.clustering.maxParallelism, 2);
    for (const key of UNSAFE_CLUSTERING_KEYS) {
      assert.ok(!DEFAULT_EVENT_PROPERTIES.includes(key));
      assert.match(
        refusal({ [key]: 'true' }).message,
        new RegExp(
          `${key.replace(/\./g, '\\.')} is not among the keys this deployment lets an event set \\(EVENT_ALLOWED_PROPERTIES .*\\): set it in CLUSTERING_PROPERTIES`,
        ),
      );
    }
    assert.match(
      refusal({ 'hoodie.parquet.block.size': 1024 }).message,
      /hoodie\.parquet\.block\.size is not among the keys this deployment lets an event set/,
    );
    assert.match(refusal({ 'hoodie.clustering.plan.strategy.sort.colums': 'id' }).message, /sort\.colums is not a clustering key this service knows/);
  });

  test('EVENT_ALLOWED_PROPERTIES widens or narrows the list, but never to a deployment-only key', () => {
    const widened = resolveStepSettings(
      { TABLE_PATH: TABLE, EVENT_ALLOWED_PROPERTIES: 'default, hoodie.parquet.block.size' },
      { properties: { 'hoodie.parquet.block.size': 1024, [SORT_COLUMNS]: 'id' } },
    );
    assert.equal(widened.jobProperties.get('hoodie.parquet.block.size'), '1024');
    const family = { EVENT_ALLOWED_PROPERTIES: 'hoodie.clustering.plan.strategy.*' };
    assert.deepEqual(resolveStepSettings({ TABLE_PATH: TABLE, ...family }, { properties: { [SORT_COLUMNS]: 'id' } }).clustering.sortColumns, ['id']);
    assert.deepEqual(refusal({ 'hoodie.layout.optimize.strategy': 'hilbert' }, family).keys, ['hoodie.layout.optimize.strategy']);
    assert.deepEqual(refusal({ [SORT_COLUMNS]: 'id' }, { EVENT_ALLOWED_PROPERTIES: 'none' }).keys, [SORT_COLUMNS]);
    // A wildcard over everything still leaves the lock out.
    assert.deepEqual(refusal({ 'hoodie.write.lock.dynamodb.region': 'eu-west-1' }, { EVENT_ALLOWED_PROPERTIES: 'hoodie.*' }).keys, [
      'hoodie.write.lock.dynamodb.region',
    ]);
    for (const listed of ['hoodie.write.lock.provider', 'hoodie.write.lock.*', 'hoodie.aws.secret.key']) {
      assert.throws(
        () => resolveStepSettings({ TABLE_PATH: TABLE, EVENT_ALLOWED_PROPERTIES: listed }, {}),
        (error: unknown) =>
          !(error instanceof EventPropertyError) &&
          error instanceof Error &&
          error.message.startsWith(`EVENT_ALLOWED_PROPERTIES: lists ${listed}, `) &&
          /which never comes from an event/.test(error.message),
      );
    }
  });

  test("the lock's properties are the deployment's: LOCK_TABLE and CLUSTERING_PROPERTIES, not the event's", () => {
    const settings = resolveStepSettings(
      { TABLE_PATH: TABLE, LOCK_TABLE: 'hudi-locks', CLUSTERING_PROPERTIES: 'hoodie.write.lock.dynamodb.region=eu-west-1' },
      { properties: { [SORT_COLUMNS]: 'id' } },
    );
    assert.deepEqual(Object.fromEntries(lockProperties(settings)), {
      'hoodie.write.lock.provider': DYNAMODB_LOCK_PROVIDER,
      'hoodie.write.lock.dynamodb.table': 'hudi-locks',
      'hoodie.write.lock.dynamodb.region': 'eu-west-1',
    });
  });

  test('a trigger event with properties is refused, not ignored', () => {
    assert.deepEqual(parseTriggerEvent({ force: true }), { kind: 'direct', force: true });
    assert.throws(
      () => parseTriggerEvent({ properties: { 'hoodie.write.lock.provider': IN_PROCESS_LOCK_PROVIDER } }),
      /trigger event: a trigger event takes no properties/,
    );
  });

  test('a local run is its own deployment: what an input may not carry becomes its CLUSTERING_PROPERTIES', () => {
    const split = splitRunProperties(
      { [SORT_COLUMNS]: 'id', 'hoodie.write.lock.provider': DYNAMODB_LOCK_PROVIDER, 'hoodie.parquet.block.size': 2048 },
      { CLUSTERING_PROPERTIES: 'hoodie.write.lock.dynamodb.table=locks\nhoodie.write.lock.provider=other' },
    );
    assert.deepEqual(split.event, { [SORT_COLUMNS]: 'id' });
    assert.deepEqual(JSON.parse(split.environment['CLUSTERING_PROPERTIES']!), {
      'hoodie.write.lock.dynamodb.table': 'locks',
      'hoodie.write.lock.provider': DYNAMODB_LOCK_PROVIDER,
      'hoodie.parquet.block.size': '2048',
    });
    assert.deepEqual(splitRunProperties({ [SORT_COLUMNS]: 'id' }, {}), { event: { [SORT_COLUMNS]: 'id' }, environment: {} });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Over the wire.

/** An HTTP server that answers 500 to everything and counts what it was sent. */
async function startCatcher(): Promise<{ url: string; since: () => () => number; close: () => Promise<void> }> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    requests.push(request.headers);
    request.resume();
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    /** Requests received from now on (each test counts its own). */
    since: () => {
      const start = requests.length;
      return () => requests.length - start;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Every object of the table with its size: the timeline, data files, auxiliary folders. */
async function tableListing(storage: Storage): Promise<string[]> {
  return (await storage.listRecursive('')).map((object) => `${object.path} ${object.size}`).sort();
}

async function withEnvironment<T>(environment: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved = Object.keys(environment).map((key) => [key, process.env[key]] as const);
  Object.assign(process.env, environment);
  try {
    return await work();
  } finally {
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

describe('event properties over the wire', () => {
  let functionsDir: string;
  let lockTable: string;
  let base: SmallFilesTable;
  let catcher: Awaited<ReturnType<typeof startCatcher>>;

  before(async () => {
    functionsDir = ensureBundles();
    lockTable = await createLockTable('hudi-serverless-settings');
    base = await createSmallFilesTable({ dir: tempDir('serverless-settings-'), partitions: 1, commits: 3, rowsPerFile: 5 });
    catcher = await startCatcher();
  });

  after(async () => {
    await catcher?.close();
    await dropLockTable(lockTable);
  });

  async function freshTable(name: string): Promise<{ tablePath: string; storage: Storage }> {
    const tablePath = await s3TablePath(name);
    const storage = openStorage(tablePath);
    await uploadFiles(base.dir, storage);
    return { tablePath, storage };
  }

  test('an execution input that switches the lock or points it at another endpoint fails at Plan; nothing is written or sent', async () => {
    const caught = catcher.since();
    const { tablePath, storage } = await freshTable('settings-sm');
    const before = await tableListing(storage);
    const execution = await runStateMachineLocally(
      {
        tablePath,
        properties: { [SORT_COLUMNS]: 'id', 'hoodie.write.lock.provider': IN_PROCESS_LOCK_PROVIDER, 'hoodie.write.lock.dynamodb.endpoint_url': catcher.url },
      },
      { functionsDir, retryPauseMs: 10, environment: { LOCK_TABLE: lockTable } },
    );
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.error, 'Hudi.Error', 'permanent: not retried');
    assert.match(execution.cause ?? '', /hoodie\.write\.lock\.provider is a table lock setting: it never comes from an event/);
    assert.match(execution.cause ?? '', /hoodie\.write\.lock\.dynamodb\.endpoint_url is a table lock setting/);
    assert.deepEqual(
      execution.invocations.map((invocation) => invocation.functionName),
      ['plan'],
      'refused once, at the first step',
    );
    assert.equal([...execution.requests.keys()].filter((key) => key.startsWith('dynamodb:')).length, 0, 'no lock was taken');
    assert.deepEqual(await tableListing(storage), before, 'no new file under the table, timeline included');
    assert.equal(caught(), 0, 'no request reached the named endpoint');
  });

  test('every step refuses a lock setting in its event before touching the table', async () => {
    const caught = catcher.since();
    const { tablePath, storage } = await freshTable('settings-steps');
    const before = await tableListing(storage);
    const properties = { 'hoodie.write.lock.dynamodb.endpoint_url': catcher.url };
    const events: Record<FunctionName, unknown> = {
      plan: { input: { tablePath, properties }, runId: 'run-1' },
      'execute-group': { tablePath, properties, instant: '20240101000000000', groupIndex: 0 },
      'execute-copy-group': { tablePath, properties, instant: '20240101000000000', groupIndex: 0, executor: 'copy' },
      commit: { tablePath, properties, instant: '20240101000000000' },
      rollback: { tablePath, properties, instant: '20240101000000000' },
      'clean-prepare': { input: { tablePath, properties }, runId: 'run-1' },
      'clean-plan': { tablePath, properties, planningId: 'plan-20240101000000000-00000000', shareIndex: 0 },
      'clean-schedule': { tablePath, properties, planningId: 'plan-20240101000000000-00000000' },
      'clean-execute': { tablePath, properties, instant: '20240101000000000', shareIndex: 0 },
      'clean-complete': { tablePath, properties, instant: '20240101000000000' },
      archive: { tablePath, properties },
      'compaction-schedule': { tablePath, properties },
      'compaction-execute': { tablePath, properties, instant: '20240101000000000', operationIndex: 0 },
      'compaction-commit': { tablePath, properties, instant: '20240101000000000' },
      'compaction-rollback': { tablePath, properties, instant: '20240101000000000' },
      doctor: { tablePath, properties, fix: true },
      // The trigger takes no properties at all.
      trigger: { properties },
    };
    await withEnvironment(
      { LOCK_TABLE: lockTable, STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:none', TABLE_PATH: tablePath },
      async () => {
        for (const [name, event] of Object.entries(events) as [FunctionName, unknown][]) {
          const handler = await loadBundledHandler(name, functionsDir);
          await assert.rejects(handler(event, lambdaContext(name)), (error: unknown) => {
            assert.ok(error instanceof Error);
            assert.equal(error.name, 'Hudi.Error', name);
            assert.match(
              error.message,
              name === 'trigger'
                ? /a trigger event takes no properties/
                : /hoodie\.write\.lock\.dynamodb\.endpoint_url is a table lock setting: it never comes from an event/,
              name,
            );
            return true;
          });
        }
      },
    );
    assert.deepEqual(await tableListing(storage), before, 'no new file under the table, timeline included');
    assert.equal(caught(), 0);
  });

  test("lock settings in the table's hoodie.properties are not used: the deployment's DynamoDB lock is", async () => {
    const caught = catcher.since();
    const { tablePath, storage } = await freshTable('settings-table-props');
    const text = Buffer.from(await storage.get('.hoodie/hoodie.properties')).toString('utf8');
    await storage.put(
      '.hoodie/hoodie.properties',
      `${text}hoodie.write.lock.provider=${IN_PROCESS_LOCK_PROVIDER}\nhoodie.write.lock.dynamodb.endpoint_url=${catcher.url}\n`,
    );
    // inline clustering waits for 1000 commits: the plan step takes the lock, then has nothing to do.
    const execution = await runStateMachineLocally(
      { tablePath, properties: { 'hoodie.clustering.inline': 'true', 'hoodie.clustering.inline.max.commits': '1000' } },
      { functionsDir, retryPauseMs: 10, environment: { LOCK_TABLE: lockTable } },
    );
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    assert.equal((execution.output as { plan: PlanStepOutput }).plan.status, 'NOTHING_TO_DO');
    assert.ok((execution.requests.get('dynamodb:PutItem') ?? 0) > 0, `the lock was taken on ${lockTable}: ${JSON.stringify([...execution.requests])}`);
    assert.equal(caught(), 0, 'hoodie.properties did not redirect the lock');
  });

  test('cluster --via-state-machine <ARN> refuses a lock setting in --props before starting an execution', async () => {
    const caught = catcher.since();
    const sfnClient = new SFNClient({ endpoint: catcher.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    await assert.rejects(
      clusterViaStateMachine('s3://bucket/table', {
        stateMachine: 'arn:aws:states:us-east-1:000000000000:stateMachine:hudi',
        sfnClient,
        properties: { 'hoodie.write.lock.provider': DYNAMODB_LOCK_PROVIDER },
      }),
      (error: unknown) =>
        error instanceof EventPropertyError &&
        /^the run's properties \(--props\), sent as the execution input: hoodie\.write\.lock\.provider is a table lock setting/.test(error.message),
    );
    assert.equal(caught(), 0, 'no StartExecution');
  });

  test("cluster --via-state-machine local takes the lock settings of --props as its own deployment's", async () => {
    const { tablePath, storage } = await freshTable('settings-local-run');
    const before = await tableListing(storage);
    const result = await clusterViaLocalStateMachine(tablePath, {
      properties: {
        'hoodie.write.lock.provider': DYNAMODB_LOCK_PROVIDER,
        'hoodie.write.lock.dynamodb.table': lockTable,
        'hoodie.clustering.inline': 'true',
        'hoodie.clustering.inline.max.commits': '1000',
      },
      local: { functionsDir, retryPauseMs: 10 },
    });
    assert.equal(result.status, 'SUCCEEDED', `${result.error}: ${result.cause}`);
    assert.equal((result.output as { plan: PlanStepOutput }).plan.status, 'NOTHING_TO_DO');
    assert.ok(
      (result.local.requests.get('dynamodb:PutItem') ?? 0) > 0,
      `the DynamoDB lock of --props was taken: ${JSON.stringify([...result.local.requests])}`,
    );
    assert.deepEqual(await tableListing(storage), before);
  });
});
