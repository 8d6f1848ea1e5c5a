// The serverless compaction end to end: the real definition (infra/compaction-state-machine.asl.json) under
// aws-local-stepfunctions, its tasks bound to the bundled handlers (dist/functions/compaction-*.mjs), against moto S3
// and DynamoDB Local (started by infra/with-local-stack.mjs), the function sizes from lib/serverless/function-settings
// (held to template.yaml by test/serverless-infra). A run compacts every file slice with logs; a run whose operation
// always fails rolls the attempt back to requested, and the next run compacts from the same plan; of two overlapping
// executions the second finds the first's claim (lib/serverless/steps/run-claim.ts) and ends.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { Row } from '../../lib/engine/row-format.js';
import { dynamoDbClientFromEnv } from '../../lib/lock/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { type LocalExecution, type LocalRunOptions, runStateMachineLocally } from '../../lib/serverless/local/index.js';
import type { CompactionCommitOutput, CompactionScheduleOutput } from '../../lib/serverless/steps/compaction/steps.js';
import { SERVERLESS_COMPACTION_KEYS } from '../../lib/serverless/steps/scale-out.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { parseBaseFileName } from '../../lib/table/file-system-view.js';
import { PAYLOAD_CLASSES } from '../../lib/table/payload.js';
import { HudiTable } from '../../lib/table/table.js';
import { pendingCompactions } from '../../lib/timeline/compaction-plan.js';
import { tableWithLogs } from '../helpers/compaction-table.js';
import { withFaults } from '../helpers/faults.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';

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
  if (lockTable !== undefined)
    await dynamoDbClientFromEnv()
      .send(new DeleteTableCommand({ TableName: lockTable }))
      .catch(() => undefined);
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
