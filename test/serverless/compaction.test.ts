// The serverless compaction end to end: the real definition (infra/compaction-state-machine.asl.json) under
// aws-local-stepfunctions, its tasks bound to the bundled handlers (dist/functions/compaction-*.mjs), against moto S3
// and DynamoDB Local (started by infra/with-local-stack.mjs), the function sizes from lib/serverless/function-settings
// (held to template.yaml by test/serverless-infra). A run compacts every file slice with logs; a run whose operation
// always fails rolls the attempt back to requested, and the next run compacts from the same plan; of two overlapping
// executions the second finds the first's claim (lib/serverless/steps/run-claim.ts) and ends.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Row } from '../../lib/engine/row-format.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { serviceClientsFromEnv } from '../../lib/serverless/aws/clients.js';
import { type LocalExecution, type LocalRunOptions, runStateMachineLocally, startLocalStepFunctionsEndpoint } from '../../lib/serverless/local/index.js';
import { afterWriteCompactionFromEnv } from '../../lib/serverless/steps/compaction/after-write.js';
import type { CompactionCommitOutput, CompactionScheduleOutput } from '../../lib/serverless/steps/compaction/steps.js';
import { type IngestConfig, ingestStep } from '../../lib/serverless/steps/ingest/ingest.js';
import { SERVERLESS_COMPACTION_KEYS } from '../../lib/serverless/steps/scale-out.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { parseBaseFileName } from '../../lib/table/file-system-view.js';
import { PAYLOAD_CLASSES } from '../../lib/table/payload.js';
import { HudiTable } from '../../lib/table/table.js';
import { pendingCompactions } from '../../lib/timeline/compaction-plan.js';
import { tableWithLogs } from '../helpers/compaction-table.js';
import { withFaults } from '../helpers/faults.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const DEFINITION = join(REPO_ROOT, 'infra', 'compaction-state-machine.asl.json');
let functionsDir: string;
let lockTable: string;
let template: string;
let before0: Row[];

async function read(storage: Storage, queryType: QueryType): Promise<Row[]> {
  const rows = (await readSnapshot(await HudiTable.open(storage), { includeMetaFields: true, queryType })).rows;
  return rows.map(({ _hoodie_file_name: _name, ...rest }) => rest).sort((a, b) => Number(a['id']) - Number(b['id']));
}

before(async () => {
  functionsDir = ensureBundles();
  lockTable = await createLockTable('hudi-serverless-compaction');
  template = (await tableWithLogs(PAYLOAD_CLASSES.overwriteWithLatest)).root;
  before0 = await read(openStorage(template), 'snapshot');
});

after(async () => {
  await dropLockTable(lockTable);
});

async function freshTable(name: string): Promise<{ tablePath: string; storage: Storage }> {
  const tablePath = await s3TablePath(name);
  const storage = openStorage(tablePath);
  await uploadFiles(template, storage);
  return { tablePath, storage };
}

function run(tablePath: string, force: boolean, local: Partial<LocalRunOptions> = {}): Promise<LocalExecution> {
  return runStateMachineLocally(
    { tablePath, force },
    { definitionFile: DEFINITION, functionsDir, retryPauseMs: 20, environment: { LOCK_TABLE: lockTable }, ...local },
  );
}

const functionsOf = (execution: LocalExecution) => execution.invocations.map((invocation) => invocation.functionName);

describe('the compaction state machine', () => {
  test('schedules, runs one compaction-execute per file slice with logs, commits; a second run finds nothing due', async () => {
    const { tablePath, storage } = await freshTable('sm-compaction');
    const execution = await run(tablePath, true);
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    assert.match(execution.executionArn, /:execution:hudi-compaction:/, 'named for what it runs');
    const output = execution.output as { schedule: CompactionScheduleOutput } & CompactionCommitOutput;
    assert.equal(output.status, 'COMMITTED');
    assert.equal(output.fileGroups, 2);
    assert.equal(output.records, before0.length);
    assert.deepEqual(functionsOf(execution).sort(), ['compaction-commit', 'compaction-execute', 'compaction-execute', 'compaction-schedule']);
    const table = await HudiTable.open(storage);
    assert.deepEqual(pendingCompactions(table.timeline), []);
    assert.ok(table.timeline.instants.some((i) => i.time === output.instant && i.action === 'commit' && i.state === 'COMPLETED'));
    assert.deepEqual(await read(storage, 'read_optimized'), before0, 'the base files hold the snapshot');
    assert.deepEqual(await read(storage, 'snapshot'), before0);
    // One delta commit since: Hudi's trigger (5 delta commits) says no compaction is due.
    const again = await run(tablePath, false);
    assert.equal(again.status, 'SUCCEEDED');
    assert.equal((again.output as { schedule: CompactionScheduleOutput }).schedule.status, 'NOTHING_TO_COMPACT');
    assert.deepEqual(functionsOf(again), ['compaction-schedule']);
  });

  test('an operation that always fails: the attempt is rolled back to requested, readers see the same rows, the next run compacts from the same plan', async () => {
    const { tablePath, storage } = await freshTable('sm-compaction-fail');
    const failing = await run(tablePath, true, {
      handlerOf: withFaults(functionsDir, (call) => {
        if (call.functionName === 'compaction-execute' && call.phase === 'before' && (call.input as { operationIndex: number }).operationIndex === 1)
          throw new Error('injected: out of memory for good');
      }),
    });
    assert.equal(failing.status, 'FAILED');
    assert.equal(failing.error, 'Hudi.CompactionFailed');
    const calls = functionsOf(failing);
    assert.equal(calls.filter((fn) => fn === 'compaction-execute').length, 1 + 3, 'operation 0 once, operation 1 with two retries');
    assert.deepEqual(
      calls.filter((fn) => fn !== 'compaction-execute'),
      ['compaction-schedule', 'compaction-commit', 'compaction-rollback'],
    );
    const table = await HudiTable.open(storage);
    const pending = pendingCompactions(table.timeline);
    assert.deepEqual(
      pending.map((instant) => instant.state),
      ['REQUESTED'],
      'rolled back to requested, the plan kept',
    );
    const outputs = (await storage.listRecursive('')).filter(
      (object) => parseBaseFileName(object.path.slice(object.path.lastIndexOf('/') + 1))?.instantTime === pending[0]!.time,
    );
    assert.deepEqual(outputs, [], "operation 0's output is deleted too");
    assert.deepEqual(await read(storage, 'snapshot'), before0);

    const resumed = await run(tablePath, false);
    assert.equal(resumed.status, 'SUCCEEDED', `${resumed.error}: ${resumed.cause}`);
    const output = resumed.output as CompactionCommitOutput;
    assert.equal(output.instant, pending[0]!.time, 'the same compaction, from its plan');
    assert.deepEqual(await read(storage, 'read_optimized'), before0);
  });

  test("two overlapping executions: the second finds the first one's claim and ends saying so; the first commits", async () => {
    const { tablePath, storage } = await freshTable('sm-compaction-overlap');
    let second: LocalExecution | undefined;
    const first = await run(tablePath, true, {
      executionName: 'first',
      handlerOf: withFaults(functionsDir, async (call) => {
        // While the first execution's operation 0 runs (claimed, heartbeat fresh), the next scheduled one starts.
        if (call.functionName === 'compaction-execute' && call.phase === 'before' && (call.input as { operationIndex: number }).operationIndex === 0)
          second ??= await run(tablePath, false, { executionName: 'second' });
      }),
    });
    assert.ok(second !== undefined);
    assert.equal(second.status, 'SUCCEEDED', `${second.error}: ${second.cause}`);
    const refused = (second.output as { schedule: CompactionScheduleOutput }).schedule;
    assert.equal(refused.status, 'ALREADY_RUNNING');
    assert.match(refused.status === 'ALREADY_RUNNING' ? refused.reason : '', /is being run by arn:aws:states:.*:execution:hudi-compaction:first/);
    assert.deepEqual(functionsOf(second), ['compaction-schedule'], 'nothing executed, nothing rolled back');
    assert.equal(first.status, 'SUCCEEDED', `${first.error}: ${first.cause}`);
    const committed = first.output as CompactionCommitOutput;
    assert.equal(committed.status, 'COMMITTED');
    assert.equal(refused.status === 'ALREADY_RUNNING' ? refused.instant : '', committed.instant);
    assert.deepEqual(await read(storage, 'read_optimized'), before0);
    const leftovers = (await storage.listRecursive('.hoodie')).filter(
      (object) => object.path.includes(committed.instant) && /\.heartbeat|\.aux/.test(object.path),
    );
    assert.deepEqual(leftovers, [], 'the heartbeat and the claim are gone with the commit');
  });

  test('a plan with more operations than the inline limit runs them in the Distributed Map, from the manifest in its work folder', async () => {
    const { tablePath, storage } = await freshTable('sm-compaction-distributed');
    const entered: string[] = [];
    const execution = await run(tablePath, true, {
      environment: { LOCK_TABLE: lockTable, CLUSTERING_PROPERTIES: `${SERVERLESS_COMPACTION_KEYS.inlineMapMaxOperations.key}=1` },
      onProgress: (event) => {
        if (event.kind === 'state-entered') entered.push(event.state);
      },
    });
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    assert.ok(entered.includes('ExecuteOperationsDistributed') && !entered.includes('ExecuteOperations'), `the Distributed Map ran: ${entered.join(', ')}`);
    const reads = execution.invocations.filter((invocation) => invocation.functionName === 'compaction-execute');
    assert.deepEqual(
      reads.map((invocation) => invocation.attempt),
      [1, 1],
      'each operation once',
    );
    const output = execution.output as CompactionCommitOutput;
    assert.equal(output.fileGroups, 2);
    assert.deepEqual(await read(storage, 'read_optimized'), before0);
    assert.deepEqual(
      (await storage.listRecursive('.hoodie/.aux')).filter((object) => object.path.includes(output.instant)),
      [],
      'the manifest went with the work folder at commit',
    );
  });
});

describe('compaction after ingest', () => {
  test("ingest into a merge-on-read table starts a compaction run when Hudi's trigger says one is due, and only then", async () => {
    const tablePath = await s3TablePath('sm-compaction-ingest');
    const storage = openStorage(tablePath);
    const bucket = tablePath.slice('s3://'.length).split('/')[0]!;
    const endpoint = await startLocalStepFunctionsEndpoint({ definitionFile: DEFINITION, functionsDir, retryPauseMs: 20, stateMachineName: 'hudi-compaction' });
    const environment: Record<string, string> = {
      TABLE_PATH: tablePath,
      COMPACTION_STATE_MACHINE_ARN: endpoint.stateMachineArn,
      AWS_ENDPOINT_URL_SFN: endpoint.endpoint,
      LOCK_TABLE: lockTable,
      // As the compaction schedule step reads it: two delta commits make a compaction due.
      CLUSTERING_PROPERTIES: 'hoodie.compact.inline.max.delta.commits=2',
    };
    const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
    Object.assign(process.env, environment);
    try {
      const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
      const startCompaction = afterWriteCompactionFromEnv(process.env, { clients: serviceClientsFromEnv(), log });
      assert.ok(startCompaction !== undefined, 'COMPACTION_STATE_MACHINE_ARN is set');
      const config: IngestConfig = {
        tablePath,
        tableProperties: new Map([
          ['hoodie.table.name', 'streamed_mor'],
          ['hoodie.datasource.write.table.type', 'MERGE_ON_READ'],
          ['hoodie.datasource.write.recordkey.field', 'id'],
          ['hoodie.datasource.write.partitionpath.field', 'dt'],
          ['hoodie.datasource.write.precombine.field', 'ts'],
          ['hoodie.write.lock.provider', 'org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider'],
          ['hoodie.write.lock.dynamodb.table', lockTable],
        ]),
        ingestPrefix: 'landing/',
        errorPrefix: 'errors/',
        defaultFormat: 'jsonl',
        tableServices: 'off',
      };
      const s3 = s3ClientFromEnv();
      const ingest = async (records: readonly Row[]) => {
        const key = `landing/${randomUUID().slice(0, 8)}.jsonl`;
        const etag = (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: records.map((r) => `${JSON.stringify(r)}\n`).join('') }))).ETag;
        const summary = await ingestStep(
          { kind: 'objects', deliveries: [{ bucket, key, etag, eventName: 'ObjectCreated:Put', created: true }] },
          { config, s3, log, metrics: new Metrics({ namespace: 'hudi-serverless-test' }), startCompaction },
        );
        assert.ok(!('batchItemFailures' in summary));
        assert.equal(summary.results[0]?.outcome, 'ingested', JSON.stringify(summary));
        return summary.compaction;
      };
      const user = (id: number, ts: number) => ({ id, name: `user ${id} v${ts}`, ts, dt: 'p0' });

      const first = await ingest([1, 2, 3, 4].map((id) => user(id, 1)));
      assert.equal(first?.status, 'WAITING', JSON.stringify(first));
      assert.match(first.reason, /1 delta commit\(s\).*NUM_COMMITS: 2 delta commits/);
      // Updates only: a log file (inserts would go into the small base file, Hudi's small-file handling).
      const second = await ingest([user(1, 2), user(2, 2)]);
      assert.equal(second?.status, 'STARTED', JSON.stringify(second));
      assert.match(second.executionName ?? '', /^hudi-compaction-streamed_mor-/);
      await endpoint.settled();
      assert.equal(endpoint.executions().length, 1);
      const [execution] = endpoint.executions();
      assert.equal(execution?.status, 'SUCCEEDED', `${execution?.result?.error}: ${execution?.result?.cause}`);
      assert.equal((execution?.result?.output as CompactionCommitOutput | undefined)?.status, 'COMMITTED', JSON.stringify(execution?.result?.output));
      const table = await HudiTable.open(storage);
      assert.deepEqual(pendingCompactions(table.timeline), []);
      const expected = [user(1, 2), user(2, 2), user(3, 1), user(4, 1)];
      const plain = (rows: Row[]) => rows.map((r) => ({ id: Number(r['id']), name: r['name'], ts: Number(r['ts']), dt: r['dt'] }));
      assert.deepEqual(plain(await read(storage, 'snapshot')), expected);
      assert.deepEqual(plain(await read(storage, 'read_optimized')), expected, 'the compaction merged the updates into base files');

      // One delta commit since the compaction: not due again.
      const third = await ingest([user(6, 3)]);
      assert.equal(third?.status, 'WAITING', JSON.stringify(third));
      assert.equal(endpoint.executions().length, 1);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await endpoint.close();
    }
  });
});
