// Cleaning and archiving as serverless table services: the real ASL (infra/state-machine.asl.json) under
// aws-local-stepfunctions, its tasks bound to the bundled handlers (dist/functions/*.mjs), against moto S3 and
// DynamoDB Local. The table is written by our own writer (tiny upserts over many partitions, clusterings now and
// then); the files a fanned-out clean deletes are checked against the one-process planner on a copy of the table,
// and the rows against an independent reader (pyarrow) and ours.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cpSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { planClean } from '../../lib/cleaning/schedule.js';
import { readCleanMetadata } from '../../lib/cleaning/timeline-facts.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { serviceClientsFromEnv } from '../../lib/serverless/aws/clients.js';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import {
  type LocalExecution,
  type LocalRunOptions,
  lambdaContext,
  loadBundledHandler,
  runStateMachineLocally,
  startLocalStepFunctionsEndpoint,
} from '../../lib/serverless/local/index.js';
import type { CleanStepOutput } from '../../lib/serverless/steps/cleaning/index.js';
import { type IngestConfig, ingestStep } from '../../lib/serverless/steps/ingest/ingest.js';
import { afterWriteStarterFromEnv, type TriggerOutput } from '../../lib/serverless/steps/trigger/trigger.js';
import { openStorage } from '../../lib/storage/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { s3ClientFromEnv } from '../../lib/storage/s3.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { CLEAN_WORK_ROOT } from '../../lib/timeline/work-folder.js';
import { withFaults } from '../helpers/faults.js';
import { tempDir } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, downloadTable, dropLockTable, ensureBundles, oracleRows, uploadFiles } from '../helpers/serverless.js';
import { rowLines, SERVICES_TABLE_WRITE_PROPS, type ServicesTable, writeServicesTable } from '../helpers/services-table.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const PARTITIONS = 12;
const COMMITS = 36;
const RETRY_PAUSE_MS = 20;

/** The deployment's table-service keys: a short retention, and shares small enough that this table fans out. */
const SERVICE_PROPERTIES: Record<string, string> = {
  'hoodie.cleaner.commits.retained': '4',
  'hoodie.keep.min.commits': '6',
  'hoodie.keep.max.commits': '8',
  'hoodie.serverless.clean.partitions.per.share': '3',
  'hoodie.serverless.clean.files.per.share': '2',
  'hoodie.serverless.clean.max.concurrency': '3',
};

let functionsDir: string;
let lockTable: string;
let base: ServicesTable;
let rowsBefore: string[];

before(async () => {
  functionsDir = ensureBundles();
  lockTable = await createLockTable('hudi-serverless-clean');
  // Every commit rewrites one file group of one partition: three or so versions per partition, and three clusterings
  // (of every partition, the last one right after the last commit) of which the first two fall out of retention.
  base = await writeServicesTable({ dir: tempDir('serverless-clean-base-'), partitions: PARTITIONS, commits: COMMITS, clusterEvery: 12 });
  rowsBefore = oracleRows(base.dir);
  assert.deepEqual(rowsBefore.map((line) => rowOf(line)).sort(), rowLines(base.rows.values()), 'the base table holds the rows written');
});

after(async () => {
  await dropLockTable(lockTable);
});

/** An oracle row (all columns) as a rowLines line. */
function rowOf(line: string): string {
  return rowLines([JSON.parse(line) as Record<string, unknown>])[0]!;
}

async function freshTable(name: string): Promise<{ tablePath: string; storage: Storage }> {
  const tablePath = await s3TablePath(name);
  const storage = openStorage(tablePath);
  await uploadFiles(base.dir, storage);
  return { tablePath, storage };
}

function run(tablePath: string, options: Partial<LocalRunOptions> & { readonly services?: 'all' | 'clean-archive' } = {}): Promise<LocalExecution> {
  const { services, ...local } = options;
  return runStateMachineLocally(
    { tablePath, ...(services === undefined ? {} : { services }) },
    { functionsDir, retryPauseMs: RETRY_PAUSE_MS, environment: { LOCK_TABLE: lockTable, CLUSTERING_PROPERTIES: JSON.stringify(SERVICE_PROPERTIES) }, ...local },
  );
}

function outputOf(execution: LocalExecution): TableServicesOutput {
  assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
  return execution.output as TableServicesOutput;
}

function cleaned(output: TableServicesOutput): Extract<CleanStepOutput, { status: 'CLEANED' }> {
  const clean = output.clean;
  assert.ok(clean?.status === 'CLEANED', `a clean completed: ${JSON.stringify(clean)}`);
  return clean;
}

/** What the one-process planner would delete on a local copy of the base table, as table-relative paths. */
async function expectedDeletes(): Promise<string[]> {
  const dir = tempDir('serverless-clean-copy-');
  cpSync(base.dir, dir, { recursive: true });
  const table = await HudiTable.open(new LocalStorage(dir));
  const planning = await planClean(table, cleanConfigFromProperties(new Map([...table.config.properties, ...Object.entries(SERVICE_PROPERTIES)])));
  assert.ok(planning.plan !== undefined, 'the base table has something to clean');
  return Object.values(planning.plan.filePathsToBeDeletedPerPartition ?? {})
    .flat()
    .map((file) => (file.filePath ?? '').slice((file.filePath ?? '').indexOf(dir) + dir.length + 1))
    .sort();
}

/** The files completed clean `instant` deleted, table-relative. */
async function deletedBy(storage: Storage, instant: string): Promise<string[]> {
  const metadata = await readCleanMetadata(storage, instant, TIMELINE_LAYOUT_1);
  assert.ok(metadata !== undefined);
  return Object.values(metadata.partitionMetadata)
    .flatMap((partition) => partition.successDeleteFiles.map((name) => `${partition.partitionPath}/${name}`))
    .sort();
}

async function dataFiles(storage: Storage): Promise<string[]> {
  return (await storage.listRecursive(''))
    .map((object) => object.path)
    .filter((path) => path.endsWith('.parquet') && !path.startsWith('.hoodie/'))
    .sort();
}

/** The rows both readers see now: pyarrow over the downloaded latest files, and ours. */
async function assertRowsUnchanged(storage: Storage): Promise<void> {
  const dir = tempDir('serverless-clean-download-');
  await downloadTable(storage, dir);
  assert.deepEqual(oracleRows(dir), rowsBefore, 'the independent reader sees the same rows');
  const snapshot = await readSnapshot(await HudiTable.open(storage));
  assert.deepEqual(rowLines(snapshot.rows as Record<string, unknown>[]), rowLines(base.rows.values()), 'our reader sees the same rows');
}

describe('cleaning and archiving through the state machine', () => {
  test('a clean-and-archive run: planning and deletes fan out over shares of partitions; the same files as one process; rows unchanged', async () => {
    const expected = await expectedDeletes();
    const { tablePath, storage } = await freshTable('sm-clean');
    const filesBefore = await dataFiles(storage);
    const execution = await run(tablePath, { services: 'clean-archive' });
    const output = outputOf(execution);
    assert.equal(output.plan, undefined, 'no clustering step ran');
    assert.equal(execution.invocations.filter((invocation) => invocation.functionName === 'plan').length, 0);
    const clean = cleaned(output);
    assert.equal(clean.outcome, 'completed');

    // No earlier clean: the full scope, every partition, in shares of three.
    const planners = execution.invocations.filter((invocation) => invocation.functionName === 'clean-plan');
    assert.deepEqual(planners.map((invocation) => invocation.shareIndex).sort(), [0, 1, 2, 3], 'four planning shares of 3 partitions');
    const deleters = execution.invocations.filter((invocation) => invocation.functionName === 'clean-execute');
    assert.ok(deleters.length >= 3, `${deleters.length} delete shares`);
    assert.ok([...planners, ...deleters].every((invocation) => invocation.attempt === 1 && invocation.errorName === undefined));

    const deleted = await deletedBy(storage, clean.instant);
    assert.deepEqual(deleted, expected, 'the files the one-process planner would delete');
    assert.equal(clean.filesDeleted, expected.length);
    assert.deepEqual(
      await dataFiles(storage),
      filesBefore.filter((file) => !expected.includes(file)),
      'exactly those files are gone',
    );
    assert.ok(new Set(deleted.map((file) => file.split('/')[0])).size > 3, 'in many partitions');
    await assertRowsUnchanged(storage);
    assert.deepEqual(
      (await storage.listRecursive(CLEAN_WORK_ROOT)).map((object) => object.path),
      [],
      'no share or result is left',
    );

    // Archiving ran after the clean: at most keep.max.commits commits are active.
    const archive = output.archive;
    assert.ok(archive?.status === 'ARCHIVED', JSON.stringify(archive));
    assert.ok(archive.archived > 0);
    const table = await HudiTable.open(storage);
    const activeCommits = table.timeline.completed().filter((instant) => ['commit', 'replacecommit'].includes(instant.action));
    assert.equal(archive.activeCommits, activeCommits.length);
    assert.ok(activeCommits.length <= 8 && activeCommits.length >= 6, `${activeCommits.length} active commits`);
    assert.ok((await storage.listRecursive('.hoodie/archived')).length > 0, 'an archive file');

    // The same table state again: nothing to clean, nothing to archive, and no planning share runs.
    const again = await run(tablePath, { services: 'clean-archive' });
    const second = outputOf(again);
    assert.equal(second.clean?.status, 'NOTHING_TO_CLEAN', JSON.stringify(second.clean));
    assert.equal(second.archive?.status, 'NOTHING_TO_ARCHIVE', JSON.stringify(second.archive));
    assert.equal(again.invocations.filter((invocation) => invocation.functionName === 'clean-plan').length, 0);
  });

  test('a delete share that always fails: the clean stays inflight, readers see the same rows, and the next run finishes it from its plan', async () => {
    const expected = await expectedDeletes();
    const { tablePath, storage } = await freshTable('sm-clean-fail');
    const failing = await run(tablePath, {
      services: 'clean-archive',
      handlerOf: withFaults(functionsDir, (call) => {
        if (call.functionName === 'clean-execute' && call.phase === 'before' && (call.input as { shareIndex: number }).shareIndex === 1)
          throw new Error('injected: throttled for good');
      }),
    });
    assert.equal(failing.status, 'FAILED');
    assert.equal(failing.error, 'Hudi.Incomplete');
    assert.match(failing.cause ?? '', /delete share\(s\) have no result \(1\)/);
    assert.equal(
      failing.invocations.filter((invocation) => invocation.functionName === 'clean-execute' && invocation.shareIndex === 1).length,
      3,
      'two retries',
    );
    assert.equal(failing.invocations.filter((invocation) => invocation.functionName === 'archive').length, 0, 'no archiving after a failed clean');
    const pending = (await HudiTable.open(storage)).timeline.instants.filter((instant) => instant.action === 'clean');
    assert.deepEqual(
      pending.map((instant) => instant.state),
      ['INFLIGHT'],
      'the clean is kept inflight, never rolled back',
    );
    await assertRowsUnchanged(storage);

    const resumed = await run(tablePath);
    const output = outputOf(resumed);
    assert.ok(output.plan !== undefined, 'a full run: clustering first, then the clean');
    const clean = cleaned(output);
    assert.equal(clean.instant, pending[0]!.time, 'the same clean, finished from its plan');
    const retried = resumed.invocations.filter((invocation) => invocation.functionName === 'clean-execute');
    assert.deepEqual(
      retried.map((invocation) => invocation.shareIndex),
      [1],
      'only the share without a result runs again',
    );
    assert.equal(resumed.invocations.filter((invocation) => invocation.functionName === 'clean-plan').length, 0, 'never planned again');
    assert.deepEqual(await deletedBy(storage, clean.instant), expected);
    await assertRowsUnchanged(storage);
    assert.equal(output.archive?.status, 'ARCHIVED');
  });

  test('every clean step that dies after doing its work is retried and finds it done: one clean, the same files', async () => {
    const expected = await expectedDeletes();
    const { tablePath, storage } = await freshTable('sm-clean-retry');
    const injected: string[] = [];
    const execution = await run(tablePath, {
      services: 'clean-archive',
      // Each step did its work (a share planned or deleted, the clean scheduled or completed) and then its invocation
      // failed before it answered: what a crash or a timeout at the worst moment leaves.
      handlerOf: withFaults(functionsDir, (call) => {
        if (call.phase !== 'after' || call.attempt !== 1) return;
        const shareIndex = (call.input as { shareIndex?: number }).shareIndex;
        if (
          !['clean-plan', 'clean-schedule', 'clean-execute', 'clean-complete', 'archive'].includes(call.functionName) ||
          (shareIndex !== undefined && shareIndex !== 0)
        )
          return;
        injected.push(call.functionName);
        const error = new Error(`injected: ${call.functionName} died before it answered`);
        error.name = 'Hudi.Transient';
        throw error;
      }),
    });
    const output = outputOf(execution);
    assert.deepEqual(injected.sort(), ['archive', 'clean-complete', 'clean-execute', 'clean-plan', 'clean-schedule']);
    const clean = cleaned(output);
    assert.equal(clean.outcome, 'already-completed', 'the retried complete found its clean completed');
    const table = await HudiTable.open(storage);
    assert.deepEqual(
      table.timeline.instants.filter((instant) => instant.action === 'clean').map((instant) => `${instant.time} ${instant.state}`),
      [`${clean.instant} COMPLETED`],
      'one clean',
    );
    assert.deepEqual(await deletedBy(storage, clean.instant), expected);
    assert.equal(output.archive?.status, 'NOTHING_TO_ARCHIVE', 'the retried archive found nothing left to archive');
    assert.ok(table.timeline.completed().filter((instant) => ['commit', 'replacecommit'].includes(instant.action)).length <= 8);
    await assertRowsUnchanged(storage);
    assert.deepEqual(
      (await storage.listRecursive(CLEAN_WORK_ROOT)).map((object) => object.path),
      [],
      'no share or result is left',
    );
  });

  test('the schedule starts a clean-and-archive run when nothing is due for clustering; ingest starts one after its commit', async () => {
    const { tablePath, storage } = await freshTable('sm-clean-trigger');
    const endpoint = await startLocalStepFunctionsEndpoint({ functionsDir, retryPauseMs: RETRY_PAUSE_MS });
    const environment: Record<string, string> = {
      TABLE_PATH: tablePath,
      STATE_MACHINE_ARN: endpoint.stateMachineArn,
      AWS_ENDPOINT_URL_SFN: endpoint.endpoint,
      LOCK_TABLE: lockTable,
      // Clustering waits for more commits than the table has since its last clustering.
      CLUSTERING_PROPERTIES: JSON.stringify({ ...SERVICE_PROPERTIES, 'hoodie.clustering.async.max.commits': '100' }),
    };
    const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
    Object.assign(process.env, environment);
    try {
      const trigger = await loadBundledHandler('trigger', functionsDir);
      const scheduled = { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', resources: [], detail: {} };
      const fire = async (): Promise<TriggerOutput> => (await trigger(scheduled, lambdaContext('trigger'))) as TriggerOutput;

      const started = await fire();
      assert.equal(started.status, 'STARTED', started.reason);
      assert.match(started.executionName ?? '', /^hudi-clean-/);
      await endpoint.settled();
      assert.equal(endpoint.executions().length, 1);
      const [execution] = endpoint.executions();
      assert.equal(execution?.status, 'SUCCEEDED', `${execution?.result?.error}: ${execution?.result?.cause}`);
      const table = await HudiTable.open(storage);
      assert.equal(table.timeline.completed().filter((instant) => instant.action === 'clean').length, 1, 'one clean');
      assert.deepEqual(
        table.timeline
          .completed()
          .filter((instant) => instant.action === 'replacecommit')
          .map((instant) => instant.time),
        [base.history.at(-1)!.instant],
        'the clusterings before the last were archived',
      );
      await assertRowsUnchanged(storage);

      // Right after it, the same state: nothing is due, whatever fires.
      const waiting = await fire();
      assert.equal(waiting.status, 'WAITING', waiting.reason);
      assert.match(waiting.reason, /clean: .*; archive: nothing to archive/);
      assert.equal(endpoint.executions().length, 1);

      // Ingest: one object, one commit, then the table services start (not inline): a clean-and-archive run.
      const batchKey = `landing/batch-${randomUUID().slice(0, 8)}.jsonl`;
      const bucket = tablePath.slice('s3://'.length).split('/')[0]!;
      const row = { id: 1, name: 'n1@ingest', ts: 10_000, dt: 'p0' };
      const s3 = s3ClientFromEnv();
      const etag = (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: batchKey, Body: `${JSON.stringify(row)}\n` }))).ETag;
      const config: IngestConfig = {
        tablePath,
        tableProperties: new Map([
          ...SERVICES_TABLE_WRITE_PROPS,
          ['hoodie.write.lock.provider', 'org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider'],
          ['hoodie.write.lock.dynamodb.table', lockTable],
        ]),
        ingestPrefix: 'landing/',
        errorPrefix: 'errors/',
        defaultFormat: 'jsonl',
        tableServices: 'after-commit',
      };
      const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
      const startTableServices = afterWriteStarterFromEnv(process.env, { clients: serviceClientsFromEnv(), log });
      assert.ok(startTableServices !== undefined, 'STATE_MACHINE_ARN is set');
      const summary = await ingestStep(
        { kind: 'objects', deliveries: [{ bucket, key: batchKey, etag, eventName: 'ObjectCreated:Put', created: true }] },
        { config, s3, log, metrics: new Metrics({ namespace: 'hudi-serverless-test' }), startTableServices },
      );
      assert.ok(!('batchItemFailures' in summary));
      assert.equal(summary.results.length, 1, JSON.stringify(summary));
      assert.equal(summary.tableServices?.status, 'STARTED', JSON.stringify(summary.tableServices));
      await endpoint.settled();
      assert.equal(endpoint.executions().length, 2, 'the commit started one run');
      const afterIngest = endpoint.executions()[1]!;
      assert.equal(afterIngest.status, 'SUCCEEDED', `${afterIngest.result?.error}: ${afterIngest.result?.cause}`);
      const ingested = await readSnapshot(await HudiTable.open(storage));
      assert.ok(
        ingested.rows.some((candidate) => (candidate as Record<string, unknown>)['name'] === 'n1@ingest'),
        'the ingested row is read',
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
