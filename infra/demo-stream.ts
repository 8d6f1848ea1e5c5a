/**
 * `npm run demo:stream`: the streaming lake on this machine, under infra/with-local-stack.mjs (moto S3, SQS and Glue,
 * DynamoDB Local). Objects land in S3 in bursts; their notifications queue in SQS; the bundled ingest function
 * (dist/functions/ingest.mjs) takes them in SQS batches, as the event source mapping hands them over, and writes each
 * batch as a delta commit into a merge-on-read table; after its commits it syncs Glue (`users`, `users_ro`,
 * `users_rt`) and starts what Hudi's triggers call for on a local Step Functions endpoint: the compaction state
 * machine and the table services' (clean, archive). The report: the timeline, the file slices, the rows, the catalog.
 * Options: --bursts N (4) --objects N per burst (6) --rows N per object (100) --batch-size N (4, the function's SQS
 * batch) --delta-commits N (2, hoodie.compact.inline.max.delta.commits) --bucket NAME --database NAME.
 */

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GetPartitionsCommand, GetTablesCommand } from '@aws-sdk/client-glue';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSBatchResponse } from 'aws-lambda';
import { archivedInstants, archiveFolder, readArchivedRecords } from '../lib/archival/index.js';
import { generateUsers, type UserRecord } from '../lib/cli/generate.js';
import { DYNAMODB_LOCK_PROVIDER, dynamoDbClientFromEnv, ensureLockTable } from '../lib/lock/index.js';
import { readSnapshot } from '../lib/read/reader.js';
import { estimateCost, formatCostEstimate } from '../lib/serverless/aws/cost.js';
import { FUNCTIONS } from '../lib/serverless/aws/function-settings.js';
import { describeTableServices, type TableServicesOutput } from '../lib/serverless/executions/run-output.js';
import {
  asInvocation,
  type InvocationRecord,
  type LocalExecutionState,
  LocalQueue,
  lambdaContext,
  loadBundledHandler,
  s3PutEvent,
  startLocalStepFunctionsEndpoint,
} from '../lib/serverless/local/index.js';
import { packageRoot, quietPowertools } from '../lib/serverless/local/lambda.js';
import type { CompactionCommitOutput, CompactionScheduleOutput } from '../lib/serverless/steps/compaction/steps.js';
import { openStorage, s3ClientFromEnv } from '../lib/storage/index.js';
import { EXTRACTORS, GLUE_SYNC_TOOL, glueClientFor } from '../lib/sync/index.js';
import { HudiTable } from '../lib/table/table.js';
import type { Instant } from '../lib/timeline/instant.js';
import { canonicalRow, elapsed, functionBreakdown, sameMultiset, say } from './demo-report.js';

const { values } = parseArgs({
  options: {
    bursts: { type: 'string', default: '4' },
    objects: { type: 'string', default: '6' },
    rows: { type: 'string', default: '100' },
    'batch-size': { type: 'string', default: '4' },
    'delta-commits': { type: 'string', default: '2' },
    bucket: { type: 'string' },
    database: { type: 'string' },
  },
});

function positive(name: keyof typeof values): number {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`demo:stream: --${name} must be a whole number of at least 1, not ${String(values[name])}\n`);
    process.exit(2);
  }
  return value;
}
const BURSTS = positive('bursts');
const OBJECTS = positive('objects');
const ROWS = positive('rows');
const BATCH_SIZE = positive('batch-size');
const DELTA_COMMITS = positive('delta-commits');
const TABLE_SERVICES = 'hudi-table-services';
const COMPACTION = 'hudi-compaction';
/** The instants of the timeline strip, one letter each. */
const LETTER: Readonly<Record<string, string>> = { deltacommit: 'Δ', commit: 'C', clean: 'c', rollback: 'r', replacecommit: 'R', compaction: 'C' };

/**
 * The rows of object `o` of burst `b`: new users, and (after the first burst) updates of a few users of the burst
 * before, in their own partition and newer (a later createTime that day), so the newest version of a key is its
 * latest landed one: updates are what go to log files, and what compaction folds into base files.
 */
function objectRows(b: number, o: number): UserRecord[] {
  const updates = b === 0 ? 0 : Math.floor(ROWS / 5);
  const fresh = [...generateUsers({ count: ROWS - updates, seed: 1000 * b + o, idStart: 1 + (b * OBJECTS + o) * ROWS, days: 3 })];
  const before = [...generateUsers({ count: ROWS, seed: 1000 * (b - 1) + o, idStart: 1 + ((b - 1) * OBJECTS + o) * ROWS, days: 3 })];
  const updated = before
    .filter((user) => user.createTime < `${user.dt} 23:00:00`)
    .slice(0, updates)
    .map((user) => ({ ...user, position: `${user.position} (burst ${b + 1})`, createTime: `${user.dt} 23:${String(b).padStart(2, '0')}:00` }));
  return [...fresh, ...updated];
}

function executionLine(execution: LocalExecutionState): string[] {
  const kind = execution.stateMachineArn.endsWith(`:${COMPACTION}`) ? 'compaction' : 'clean + archive';
  const seconds = execution.result === undefined ? '' : ` in ${(execution.result.durationMs / 1000).toFixed(1)} s`;
  if (execution.status !== 'SUCCEEDED')
    return [`   ✗ ${kind} ${execution.name} ${execution.status}: ${execution.result?.error ?? ''} ${execution.result?.cause ?? ''}`];
  const output = execution.result?.output;
  if (kind === 'compaction') {
    // The commit step's output, or the schedule step's when the run ended before it (nothing due, another run on it).
    const commit = output as Partial<CompactionCommitOutput> & { readonly schedule?: Partial<CompactionScheduleOutput> & { readonly reason?: string } };
    return [
      commit.status === 'COMMITTED'
        ? `   ✓ compaction ${commit.instant}: ${commit.fileGroups} file group(s), ${commit.filesIn} base and log files read${seconds}`
        : `   ✓ compaction: ${commit.schedule?.status ?? JSON.stringify(output)}${commit.schedule?.reason === undefined ? '' : ` (${commit.schedule.reason})`}${seconds}`,
    ];
  }
  return [`   ✓ table services${seconds}:`, ...describeTableServices(output as TableServicesOutput).map((line) => `       ${line}`)];
}

/** The newest version of every key among the landed rows (by createTime: updates are newer). */
function newestByKey(landed: readonly UserRecord[]): UserRecord[] {
  const newest = new Map<number, UserRecord>();
  for (const row of landed) {
    const seen = newest.get(row.id);
    if (seen === undefined || row.createTime >= seen.createTime) newest.set(row.id, row);
  }
  return [...newest.values()];
}

function strip(instants: readonly Instant[]): string {
  return instants.map((instant) => `${LETTER[instant.action] ?? '?'}${instant.state === 'COMPLETED' ? '' : '…'}`).join(' ');
}

async function main(): Promise<number> {
  const started = Date.now();
  say('hudi-serverless stream demo: S3 → SQS → ingest (Lambda) → merge-on-read table → compaction, clean, archive (Step Functions) → Glue');
  say(
    `  S3, SQS, Glue ${process.env['AWS_ENDPOINT_URL'] ?? process.env['AWS_ENDPOINT_URL_S3'] ?? '(AWS)'}   DynamoDB ${process.env['AWS_ENDPOINT_URL_DYNAMODB'] ?? '(AWS)'}`,
  );
  say();

  // 1. The landing bucket (the table lives in it too, under tables/), the queue, the lock, the state machines.
  const id = randomUUID().slice(0, 8);
  const bucket = values.bucket ?? `hudi-stream-${id}`;
  const database = values.database ?? `hudi_stream_${id}`;
  const lockTable = 'hudi-demo-locks';
  const s3 = s3ClientFromEnv();
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await ensureLockTable(dynamoDbClientFromEnv(), lockTable);
  const queue = await LocalQueue.create(`hudi-landing-${id}`);
  const tablePath = `s3://${bucket}/tables/users`;
  const infra = join(packageRoot(), 'infra');
  const stepFunctions = await startLocalStepFunctionsEndpoint({
    stateMachines: [
      { name: TABLE_SERVICES, definitionFile: join(infra, 'state-machine.asl.json') },
      { name: COMPACTION, definitionFile: join(infra, 'compaction-state-machine.asl.json') },
    ],
  });
  say(`1. landing s3://${bucket}/landing/ → SQS ${queue.name} → ingest → ${tablePath} (MERGE_ON_READ)`);
  say(`   Glue database ${database}; DynamoDB lock table ${lockTable}; state machines ${TABLE_SERVICES}, ${COMPACTION} at ${stepFunctions.endpoint}`);

  // The ingest function's environment, as template.yaml gives it (read when its bundle loads).
  const tableProperties = [
    'hoodie.table.name=users',
    'hoodie.datasource.write.table.type=MERGE_ON_READ',
    'hoodie.datasource.write.recordkey.field=id',
    'hoodie.datasource.write.partitionpath.field=dt',
    'hoodie.datasource.write.precombine.field=createTime',
    'hoodie.datasource.write.hive_style_partitioning=true',
    // Small files for a small table: the default bloom filter (60000 keys) would be most of each file.
    'hoodie.index.bloom.num_entries=1000',
    // New users into new file groups, so every base file can take updates as log files (Hudi sends inserts into a
    // small base file by rewriting it, which would leave compaction nothing to do in a table this small).
    'hoodie.parquet.small.file.limit=0',
    `hoodie.write.lock.provider=${DYNAMODB_LOCK_PROVIDER}`,
    `hoodie.write.lock.dynamodb.table=${lockTable}`,
    'hoodie.datasource.meta.sync.enable=true',
    `hoodie.meta.sync.client.tool.class=${GLUE_SYNC_TOOL}`,
    `hoodie.datasource.hive_sync.database=${database}`,
    `hoodie.datasource.hive_sync.partition_extractor_class=${EXTRACTORS.hiveStyle}`,
  ];
  // The table services' keys (the template's ClusteringProperties): retention short enough for a few commits to
  // reach clean and archive, and clustering out of the way (this demo is about compaction).
  const serviceProperties = [
    `hoodie.compact.inline.max.delta.commits=${DELTA_COMMITS}`,
    'hoodie.cleaner.commits.retained=2',
    'hoodie.keep.min.commits=3',
    'hoodie.keep.max.commits=4',
    'hoodie.clustering.async.max.commits=1000',
  ];
  Object.assign(process.env, {
    TABLE_PATH: tablePath,
    TABLE_PROPERTIES: tableProperties.join('\n'),
    CLUSTERING_PROPERTIES: serviceProperties.join('\n'),
    INGEST_PREFIX: 'landing/',
    ERROR_PREFIX: 'errors/',
    LANDING_BUCKET: bucket,
    LOCK_TABLE: lockTable,
    STATE_MACHINE_ARN: stepFunctions.arnOf(TABLE_SERVICES),
    COMPACTION_STATE_MACHINE_ARN: stepFunctions.arnOf(COMPACTION),
    AWS_ENDPOINT_URL_SFN: stepFunctions.endpoint,
  });
  for (const line of serviceProperties) say(`     ${line}`);
  say();
  quietPowertools();
  const ingest = await loadBundledHandler('ingest');
  const storage = openStorage(tablePath);

  // 2. The bursts: land, let the event source mapping drain the queue batch by batch, let the started runs finish.
  say(`2. ${BURSTS} bursts of ${OBJECTS} objects × ${ROWS} rows; the function takes up to ${BATCH_SIZE} messages a batch`);
  const landed: UserRecord[] = [];
  const ingestInvocations: InvocationRecord[] = [];
  let failedMessages = 0;
  let seenExecutions = 0;
  for (let b = 0; b < BURSTS; b++) {
    let updates = 0;
    for (let o = 0; o < OBJECTS; o++) {
      const rows = objectRows(b, o);
      updates += b === 0 ? 0 : Math.floor(ROWS / 5);
      landed.push(...rows);
      const key = `landing/burst-${b + 1}/part-${o + 1}.jsonl`;
      const body = rows.map((row) => `${JSON.stringify(row)}\n`).join('');
      const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      await queue.send(JSON.stringify(s3PutEvent(bucket, key, put.ETag ?? '', Buffer.byteLength(body))));
    }
    say(`   burst ${b + 1}: ${OBJECTS} objects landed (${OBJECTS * ROWS - updates} new users, ${updates} updates) [${elapsed(started)}]`);
    for (;;) {
      const batch = await queue.nextBatch(BATCH_SIZE);
      if (batch.length === 0) break;
      const record: InvocationRecord = {
        functionName: 'ingest',
        state: 'ingest',
        groupIndex: undefined,
        shareIndex: undefined,
        attempt: 1,
        startedAt: Date.now(),
        durationMs: 0,
        memoryMb: FUNCTIONS.ingest.memoryMb,
        ephemeralStorageMb: FUNCTIONS.ingest.ephemeralStorageMb,
        errorName: undefined,
        requests: new Map(),
      };
      ingestInvocations.push(record);
      const at = performance.now();
      const response = (await asInvocation(record, () => ingest(queue.eventOf(batch), lambdaContext('ingest')))) as SQSBatchResponse;
      record.durationMs = performance.now() - at;
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      failedMessages += failed.size;
      await queue.delete(batch.filter((message) => !failed.has(message.MessageId)));
      const latest = (await HudiTable.open(storage)).timeline
        .completed()
        .filter((instant) => instant.action === 'deltacommit')
        .at(-1);
      say(
        `   ingest: ${batch.length} message(s) → deltacommit ${latest?.time ?? '(none)'}${failed.size > 0 ? `, ${failed.size} FAILED (left in the queue)` : ''} [${elapsed(started)}]`,
      );
      // The runs this commit started (none when Hudi's triggers say nothing is due).
      await stepFunctions.settled();
      const executions = stepFunctions.executions();
      for (const execution of executions.slice(seenExecutions)) for (const line of executionLine(execution)) say(line);
      seenExecutions = executions.length;
    }
  }
  say();

  // 3. The report.
  const table = await HudiTable.open(storage);
  // The archive holds every state file of an instant: its completed one stands for it.
  const archived = archivedInstants((await readArchivedRecords(storage, archiveFolder(table.config.archiveLogFolder))).records)
    .map(({ instant }) => instant)
    .filter((instant) => instant.state === 'COMPLETED');
  say(`3. the timeline  (Δ delta commit, C compaction, c clean, … pending)`);
  say(`   archived  ${archived.length === 0 ? '(nothing yet)' : strip(archived)}`);
  say(`   active    ${strip([...table.timeline.completed(), ...table.timeline.pending()].sort((x, y) => x.time.localeCompare(y.time)))}`);
  say();
  const view = await table.fileSystemView();
  say(`   ${'partition'.padEnd(18)}${'file groups'.padEnd(14)}${'base files'.padEnd(13)}log files`);
  for (const partition of view.partitionPaths().sort()) {
    const slices = view.latestMergedSlices(partition);
    const logs = slices.reduce((sum, slice) => sum + slice.logFiles.length, 0);
    const bases = slices.filter((slice) => slice.baseFile !== undefined).length;
    say(`   ${partition.padEnd(18)}${String(slices.length).padEnd(14)}${String(bases).padEnd(13)}${logs}`);
  }
  say();
  const expected = newestByKey(landed).map(canonicalRow).sort();
  const snapshot = (await readSnapshot(table)).rows.map(canonicalRow).sort();
  const readOptimized = (await readSnapshot(table, { queryType: 'read_optimized' })).rows.map(canonicalRow);
  const current = new Set(snapshot);
  const stale = readOptimized.filter((row) => !current.has(row)).length;
  const rowsOk = sameMultiset(expected, snapshot);
  say(`   rows: ${landed.length} landed (${expected.length} keys, ${landed.length - expected.length} updates)`);
  say(`         snapshot query ${snapshot.length} — ${rowsOk ? 'the newest version of every key, nothing else' : 'DIFFERENT from what landed'}`);
  say(
    `         read-optimized query ${readOptimized.length}, ${stale === 0 ? 'all current: every update is compacted' : `${stale} of them older versions (updates still in log files, for the next compaction)`}`,
  );
  say();

  const glue = glueClientFor({ region: undefined, endpoint: undefined });
  const catalog = (await glue.send(new GetTablesCommand({ DatabaseName: database }))).TableList ?? [];
  say(`4. the Glue Data Catalog, database ${database}`);
  for (const entry of catalog.sort((x, y) => (x.Name ?? '').localeCompare(y.Name ?? ''))) {
    const partitions = (await glue.send(new GetPartitionsCommand({ DatabaseName: database, TableName: entry.Name }))).Partitions ?? [];
    const format = (entry.StorageDescriptor?.InputFormat ?? '').split('.').at(-1) ?? '';
    say(
      `   ${(entry.Name ?? '').padEnd(10)} ${format.padEnd(34)} ${partitions.length} partition(s), synced to ${entry.Parameters?.['last_commit_time_sync'] ?? '?'}`,
    );
  }
  say();

  const executions = stepFunctions.executions();
  const runs = executions.flatMap((execution) => (execution.result === undefined ? [] : [execution.result]));
  const invocations = [...ingestInvocations, ...runs.flatMap((run) => run.invocations)];
  const requests = new Map<string, number>();
  for (const invocation of invocations) for (const [key, count] of invocation.requests) requests.set(key, (requests.get(key) ?? 0) + count);
  const compactions = executions.filter((execution) => execution.stateMachineArn.endsWith(`:${COMPACTION}`)).length;
  say(
    `5. the run: ${elapsed(started)} here; ${ingestInvocations.length} ingest invocations, ${compactions} compaction and ${executions.length - compactions} table-service execution(s)`,
  );
  for (const line of functionBreakdown(invocations)) say(line);
  const cost = estimateCost({
    architecture: 'arm64',
    invocations,
    requests,
    stateTransitions: runs.reduce((sum, run) => sum + run.stateTransitions, 0),
  });
  for (const line of formatCostEstimate(cost).trimEnd().split('\n')) say(`   ${line.replace(' per run', ' for the whole stream')}`);
  await stepFunctions.close();

  const failedRuns = executions.filter((execution) => execution.status !== 'SUCCEEDED').length;
  if (failedMessages > 0 || failedRuns > 0) say(`${failedMessages} message(s) and ${failedRuns} execution(s) failed`);
  say();
  say(`done in ${elapsed(started)}`);
  return rowsOk && failedMessages === 0 && failedRuns === 0 ? 0 : 1;
}

process.exitCode = await main();
