/**
 * Every documented range's ends work, for the numeric keys no CLI command reads (test/config/ranges.test.ts walks the
 * others): each is set to its minimum and maximum, and one past each, and given in-process to the Lambda step or
 * service that reads it, against moto S3/Glue and DynamoDB Local. Every run must read the key (keysReadBy); a value
 * in range gives a result, one out of range one refusal naming the key and its range (thrown, or reported in the
 * result as the catalog sync reports its failures); nothing may crash or warn of a timer overflow.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setImmediate as flush } from 'node:timers/promises';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SERVERLESS_CLEAN_KEYS } from '../../lib/cleaning/shares.js';
import { type ConfigKey, keysReadBy } from '../../lib/config/index.js';
import { HudiError } from '../../lib/errors.js';
import { INGEST_BATCH_MAX_BYTES } from '../../lib/ingest/index.js';
import { LOCK_KEYS, STORAGE_BASED_LOCK_PROVIDER } from '../../lib/lock/index.js';
import { serviceClientsFromEnv } from '../../lib/serverless/aws/clients.js';
import { TaskError } from '../../lib/serverless/aws/errors.js';
import {
  cleanCompleteStep,
  cleanExecuteShareStep,
  cleanPlanShareStep,
  cleanPrepareStep,
  cleanScheduleStep,
} from '../../lib/serverless/steps/cleaning/index.js';
import { planStep } from '../../lib/serverless/steps/clustering/plan.js';
import { compactionScheduleStep } from '../../lib/serverless/steps/compaction/steps.js';
import type { StepDependencies } from '../../lib/serverless/steps/contract.js';
import { type IngestConfig, type IngestSummary, ingestStep } from '../../lib/serverless/steps/ingest/ingest.js';
import { SERVERLESS_CLUSTERING_KEYS, SERVERLESS_COMPACTION_KEYS } from '../../lib/serverless/steps/scale-out.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import { EXTRACTORS, GLUE_SYNC_TOOL, META_SYNC_KEYS } from '../../lib/sync/index.js';
import { BUCKET_INDEX_KEYS } from '../../lib/table/bucket-index.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/paths.js';
import { STEP_WALKED_KEYS } from '../helpers/ranges.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, dropLockTable, uploadFiles } from '../helpers/serverless.js';
import { fileId, SyntheticTable, t } from '../helpers/synthetic-table.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const NOW = new Date(Date.UTC(2024, 0, 1, 0, 0, 10));

const WRITE_PROPS = {
  'hoodie.table.name': 't',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.clean.automatic': 'false',
};

let files = 0;
function batch(round: number, ids: readonly number[] = [1, 2, 3, 4]): string {
  const path = join(tempDir('ranges-serverless-'), `${files++}-batch.jsonl`);
  const rows = ids.map((id) => ({ id, ts: round, dt: id % 2 === 0 ? 'p1' : 'p2', name: `n${round}` }));
  writeFileSync(path, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  return path;
}

/** Four upserts over two partitions: small files to cluster, or (merge-on-read) log files to compact. */
async function writtenTable(type: 'COPY_ON_WRITE' | 'MERGE_ON_READ'): Promise<string> {
  const path = join(tempDir('ranges-serverless-table-'), 't');
  const properties = new Map(Object.entries({ ...WRITE_PROPS, 'hoodie.datasource.write.table.type': type }));
  for (let round = 0; round < 4; round++) {
    await writeBatch(openStorage(path), { input: { file: batch(round), format: 'jsonl' }, operation: 'upsert', properties });
  }
  return path;
}

/** Six partitions of one file group each, every group rewritten twice: a clean has a version of each to delete. */
async function cleanableTable(): Promise<string> {
  const table = await SyntheticTable.create({ dir: join(tempDir('ranges-serverless-clean-'), 'table') });
  const groups = Array.from({ length: 6 }, (_, p) => ({ partition: `dt=${p}`, fileId: fileId(p) }));
  await table.commit(t(1), groups, 'INSERT');
  await table.commit(t(2), groups);
  await table.commit(t(3), groups);
  return table.dir;
}

function localCopy(dir: string): string {
  const target = join(tempDir('ranges-serverless-run-'), 't');
  cpSync(dir, target, { recursive: true });
  return target;
}

async function s3Copy(dir: string, name: string): Promise<string> {
  const tablePath = await s3TablePath(name);
  await uploadFiles(dir, openStorage(tablePath));
  return tablePath;
}

function deps(properties: Record<string, string>, env: Record<string, string> = {}): StepDependencies {
  return { env: { CLUSTERING_PROPERTIES: JSON.stringify(properties), ...env }, clients: serviceClientsFromEnv({}), log: quiet, now: () => NOW };
}

/** A whole serverless clean, as the state machine runs it: prepare, every planning share, schedule, every delete share, complete. */
async function serverlessClean(tablePath: string, d: StepDependencies): Promise<unknown> {
  const input = { tablePath, services: 'clean-archive' as const };
  const prepared = await cleanPrepareStep({ ...input, runId: 'ranges' }, d);
  if (prepared.status !== 'PLAN') return prepared;
  for (const share of prepared.shares) await cleanPlanShareStep({ ...input, planningId: prepared.planningId, shareIndex: share.index }, d);
  const scheduled = await cleanScheduleStep({ ...input, planningId: prepared.planningId }, d);
  if (scheduled.status !== 'EXECUTE') return scheduled;
  for (const share of scheduled.shares) await cleanExecuteShareStep({ ...input, instant: scheduled.instant, shareIndex: share.index }, d);
  const completed = await cleanCompleteStep({ ...input, instant: scheduled.instant }, d);
  assert.equal(completed.status, 'CLEANED', JSON.stringify(completed));
  return completed;
}

const SYNC_PROPS: Record<string, string> = {
  'hoodie.datasource.meta.sync.enable': 'true',
  'hoodie.datasource.hive_sync.mode': 'glue',
  'hoodie.meta.sync.client.tool.class': GLUE_SYNC_TOOL,
  'hoodie.datasource.hive_sync.partition_fields': 'dt',
  'hoodie.datasource.hive_sync.partition_extractor_class': EXTRACTORS.multiPart,
};

/** The ingest Lambda's step on two landed objects, its table properties (TABLE_PROPERTIES) given. */
async function ingest(tableProperties: Record<string, string>): Promise<IngestSummary> {
  const tablePath = await s3TablePath('ranges-ingest');
  const bucket = tablePath.slice('s3://'.length).split('/')[0]!;
  const s3 = s3ClientFromEnv();
  const landing = `landing-${randomUUID().slice(0, 8)}`;
  const deliveries = [];
  for (const [index, ids] of [
    [1, 2],
    [3, 4],
  ].entries()) {
    const key = `${landing}/${index}.jsonl`;
    const body = ids.map((id) => `${JSON.stringify({ id, ts: index, dt: id % 2 === 0 ? 'p1' : 'p2', name: `n${id}` })}\n`).join('');
    const etag = (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }))).ETag;
    deliveries.push({ bucket, key, etag, eventName: 'ObjectCreated:Put', created: true });
  }
  const config: IngestConfig = {
    tablePath,
    tableProperties: new Map(Object.entries({ ...WRITE_PROPS, ...tableProperties })),
    ingestPrefix: '',
    errorPrefix: 'errors/',
    defaultFormat: 'jsonl',
    tableServices: 'off',
  };
  const summary = await ingestStep({ kind: 'objects', deliveries }, { config, s3, log: quiet, metrics: new Metrics({ namespace: 'hudi-serverless-test' }) });
  assert.ok(!('batchItemFailures' in summary), JSON.stringify(summary));
  return summary;
}

/** What an ingest reports as failed rather than throwing it: an object's error, a failed catalog sync. */
function ingestProblems(summary: IngestSummary): string | undefined {
  const problems = [...summary.errors.map((error) => error.error), ...summary.refused.map((refused) => refused.reason)];
  if (summary.catalogSync?.status === 'FAILED') problems.push(summary.catalogSync.error);
  if (summary.results.length === 0) problems.push('nothing was ingested');
  return problems.length === 0 ? undefined : problems.join('; ');
}

interface Walk {
  readonly key: ConfigKey<unknown>;
  /** Which step or service reads it, for the output. */
  readonly reader: string;
  /** The reader run with the key set to `value`: its result. */
  run(value: string): Promise<unknown>;
  /** A refusal (or failure) the result reports instead of throwing it; undefined when the result is clean. */
  reported?(result: unknown): string | undefined;
  /**
   * A refusal a value in range may meet all the same, whatever the value (a lease lost to a busy machine: the step
   * fails as Hudi.Transient and the state machine retries it). The walk waits for the outcome and races no timer.
   */
  mayRefuse?: RegExp;
}

type Outcome =
  | { readonly kind: 'result'; readonly reported: string | undefined }
  | { readonly kind: 'refused'; readonly text: string }
  | { readonly kind: 'crash'; readonly error: string };

/** One walk at one value: its outcome, whether it read the key, and the warnings Node emitted meanwhile (a timer overflow). */
async function walkAt(walk: Walk, value: string): Promise<{ outcome: Outcome; read: boolean; warnings: string[] }> {
  const warnings: string[] = [];
  // Any warning but the runtime's notes on APIs (a library's deprecated call says nothing of the value walked).
  const onWarning = (warning: Error) => {
    if (warning.name !== 'DeprecationWarning' && warning.name !== 'ExperimentalWarning') warnings.push(`${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  try {
    const { result: outcome, keys } = await keysReadBy(async (): Promise<Outcome> => {
      try {
        const result = await walk.run(value);
        return { kind: 'result', reported: walk.reported?.(result) };
      } catch (error) {
        // A TaskError is a step's error for the state machine's Retry and Catch (Hudi.Transient, Hudi.Incomplete).
        if (error instanceof HudiError) return { kind: 'refused', text: error.message }; // its location and fix included
        if (error instanceof TaskError) return { kind: 'refused', text: `${error.name}: ${error.message}` };
        return { kind: 'crash', error: String((error as Error)?.stack ?? error) };
      }
    });
    await flush(); // process warnings are emitted on the next tick
    return { outcome, read: keys.has(walk.key), warnings };
  } finally {
    process.off('warning', onWarning);
  }
}

/** The ends of a key's range and one past each, each with whether it is in the range. */
function ends(key: ConfigKey<unknown>): { value: string; inRange: boolean }[] {
  const range = key.parser.range!;
  const max = range.max ?? '1e308';
  return [
    { value: range.min, inRange: true },
    { value: String(BigInt(range.min) - 1n), inRange: false },
    { value: max, inRange: true },
    { value: range.max === undefined ? 'Infinity' : String(BigInt(range.max) + 1n), inRange: false },
  ];
}

let lockTable: string | undefined;
after(async () => {
  await dropLockTable(lockTable);
});

describe('config ranges: the keys no CLI command reads, at the ends of their ranges, through the Lambda steps that read them', () => {
  it('gives a result in range and one refusal naming the key and its range beyond it, never a crash', async () => {
    const copyOnWrite = await writtenTable('COPY_ON_WRITE');
    const mergeOnRead = await writtenTable('MERGE_ON_READ');
    const cleanable = await cleanableTable();
    lockTable = await createLockTable('hudi-serverless-ranges');
    const database = `ranges_${randomUUID().slice(0, 8)}`;

    const walks: Walk[] = [
      ...[SERVERLESS_CLEAN_KEYS.partitionsPerShare, SERVERLESS_CLEAN_KEYS.filesPerShare, SERVERLESS_CLEAN_KEYS.maxConcurrency].map(
        (key): Walk => ({
          key,
          reader: 'the clean steps (prepare, plan-share, schedule, execute-share, complete)',
          run: (value) => serverlessClean(localCopy(cleanable), deps({ 'hoodie.cleaner.commits.retained': '1', [key.key]: value })),
        }),
      ),
      {
        key: SERVERLESS_CLUSTERING_KEYS.inlineMapMaxGroups,
        reader: 'the clustering plan step (an S3 table: the Distributed Map when past the key)',
        run: async (value) => {
          const output = await planStep(
            { tablePath: await s3Copy(copyOnWrite, 'ranges-plan'), force: true, runId: 'ranges' },
            deps({ [SERVERLESS_CLUSTERING_KEYS.inlineMapMaxGroups.key]: value }),
          );
          assert.equal(output.status, 'CLUSTER', JSON.stringify(output));
          return output;
        },
      },
      {
        key: SERVERLESS_COMPACTION_KEYS.inlineMapMaxOperations,
        reader: 'the compaction schedule step (an S3 table: the Distributed Map when past the key)',
        run: async (value) => {
          const output = await compactionScheduleStep(
            { tablePath: await s3Copy(mergeOnRead, 'ranges-compact'), force: true, runId: 'ranges' },
            deps({ [SERVERLESS_COMPACTION_KEYS.inlineMapMaxOperations.key]: value }),
          );
          assert.equal(output.status, 'EXECUTE', JSON.stringify(output));
          return output;
        },
      },
      {
        key: LOCK_KEYS.dynamoDbLeaseMs,
        reader: 'the clustering plan step under the DynamoDB lock (LOCK_TABLE), its heartbeat running',
        mayRefuse: /^Hudi\.Transient: lost the table lock .* was not renewed within its \d+ ms lease/,
        run: async (value) => {
          const output = await planStep(
            { tablePath: localCopy(copyOnWrite), force: true, runId: 'ranges' },
            deps({ [LOCK_KEYS.dynamoDbLeaseMs.key]: value }, { LOCK_TABLE: lockTable! }),
          );
          assert.equal(output.status, 'CLUSTER', JSON.stringify(output));
          return output;
        },
      },
      ...[LOCK_KEYS.storageValiditySecs, LOCK_KEYS.storageRenewIntervalSecs].map(
        (key): Walk => ({
          key,
          reader: "the clustering plan step on S3 under Hudi's StorageBasedLockProvider",
          // The other key at its default: the validity must stay at least 10 renew intervals, as Hudi checks.
          mayRefuse: /must be at least 10 renew intervals/,
          run: async (value) => {
            const output = await planStep(
              { tablePath: await s3Copy(copyOnWrite, 'ranges-storage-lock'), force: true, runId: 'ranges' },
              deps({ [LOCK_KEYS.provider.key]: STORAGE_BASED_LOCK_PROVIDER, [key.key]: value }),
            );
            assert.equal(output.status, 'CLUSTER', JSON.stringify(output));
            return output;
          },
        }),
      ),
      {
        key: INGEST_BATCH_MAX_BYTES,
        reader: 'the ingest step (TABLE_PROPERTIES)',
        run: (value) => ingest({ [INGEST_BATCH_MAX_BYTES.key]: value }),
        reported: (result) => ingestProblems(result as IngestSummary),
      },
      {
        key: META_SYNC_KEYS.schemaLengthThreshold,
        reader: "the ingest step's Glue sync after its commit",
        run: (value) =>
          ingest({
            ...SYNC_PROPS,
            'hoodie.datasource.hive_sync.database': database,
            'hoodie.datasource.hive_sync.table': `t_${files++}`,
            [META_SYNC_KEYS.schemaLengthThreshold.key]: value,
          }),
        reported: (result) => ingestProblems(result as IngestSummary) ?? ((result as IngestSummary).catalogSync?.status === 'SYNCED' ? undefined : 'no sync'),
      },
      {
        key: BUCKET_INDEX_KEYS.numBuckets,
        // Keys hashing to buckets past 65,536 at the largest counts, so their file ids carry more than 8 digits' worth.
        reader: 'a bucket-index write, then an upsert of the same keys (each bucket read back from its file id)',
        run: async (value) => {
          const path = join(tempDir('ranges-serverless-bucket-'), 't');
          const properties = new Map(
            Object.entries({ ...WRITE_PROPS, 'hoodie.metadata.enable': 'false', 'hoodie.index.type': 'BUCKET', [BUCKET_INDEX_KEYS.numBuckets.key]: value }),
          );
          const ids = [1_000_001, 1_000_002, 1_000_003, 1_000_004];
          await writeBatch(openStorage(path), { input: { file: batch(0, ids), format: 'jsonl' }, operation: 'upsert', properties });
          return writeBatch(openStorage(path), { input: { file: batch(1, ids), format: 'jsonl' }, operation: 'upsert', properties });
        },
      },
    ];

    const problems: string[] = [];
    let runs = 0;
    for (const walk of walks) {
      for (const { value, inRange } of ends(walk.key)) {
        const { outcome, read, warnings } = await walkAt(walk, value);
        runs++;
        const at = `${walk.key.key}=${value} through ${walk.reader}`;
        if (!read) problems.push(`${at}: the key was not read`);
        for (const warning of warnings) problems.push(`${at}: ${warning}`);
        if (outcome.kind === 'crash') problems.push(`${at} crashed: ${outcome.error}`);
        else if (inRange && outcome.kind === 'refused' && walk.mayRefuse?.test(outcome.text) === true) console.log(`# ${at}: ${outcome.text}`);
        else if (inRange && outcome.kind === 'refused') problems.push(`${at} is in range but was refused: ${outcome.text}`);
        else if (inRange && outcome.kind === 'result' && outcome.reported !== undefined) problems.push(`${at} is in range but failed: ${outcome.reported}`);
        else if (!inRange) {
          const text = outcome.kind === 'refused' ? outcome.text : (outcome.reported ?? '');
          if (!text.includes(walk.key.key) || !text.includes(walk.key.parser.expected))
            problems.push(`${at} is out of range, refused without naming the key and its range: ${text || 'a result'}`);
        }
      }
    }
    assert.deepEqual(
      walks.map((walk) => walk.key.key),
      STEP_WALKED_KEYS.map((key) => key.key),
      'every key the CLI walk leaves to this one is walked',
    );
    console.log(`# ${runs} runs of ${walks.length} keys through the Lambda steps and services: ${walks.map((walk) => walk.key.key).join(', ')}`);
    assert.deepEqual(problems, []);
  });
});
