/**
 * Our services on tables Hudi 0.15 (Spark 3.5.1) wrote with the simple bucket index (4 buckets, metadata table on,
 * as Spark's default): clustering is refused before anything is written (a clustering's new file ids would make
 * Spark's bucket index fail to parse a bucket number), and so is a write that does not name the bucket index (our
 * bucket-index writes are test/interop/bucket-index-writes.test.ts); compaction, cleaning and archival run and keep
 * every file id; Spark's bucket-index upsert then succeeds, no key is duplicated, and Spark (metadata table on and
 * off) and our reader read the same rows.
 *
 * One Spark session for the file; each table takes two Spark writes before our services and one after.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import { HudiError } from '../../lib/errors.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { bucketNumberOf, UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { archiveKeepingCommits } from '../helpers/interop-writer.js';
import { tableFiles, tempDir } from '../helpers/paths.js';
import { readsAlike } from '../helpers/reads-alike.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const row = (id: number, ts: number) => ({ id, name: `n${id}-${ts}`, ts, dt: id % 2 === 0 ? 'a' : 'b' });
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
/** What a bucket-index writer sets: Hudi's simple engine (the default), 4 buckets hashed on the record key. */
const BUCKET = { 'hoodie.index.type': 'BUCKET', 'hoodie.bucket.index.num.buckets': '4' };

function options(table: string, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ', operation: string): Record<string, string> {
  return {
    ...mergeOnReadWriteOptions(1),
    'hoodie.datasource.write.table.type': type,
    'hoodie.table.name': table,
    'hoodie.datasource.write.operation': operation,
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.table.timeline.timezone': 'UTC',
    ...BUCKET,
  };
}

let hudi: HudiHarness;
let engine: ParquetEngine;

before(async () => {
  hudi = await startHudi();
  engine = await openParquetEngine();
});

after(async () => {
  await engine?.close();
  await hudi?.close();
});

/** File ids of the table's live file groups, merge-on-read groups of log files only included. */
async function liveFileIds(path: string): Promise<string[]> {
  const view = await (await HudiTable.open(openStorage(path))).fileSystemView();
  return [...new Set([...view.fileGroups().map((group) => group.fileId), ...view.latestMergedSlices().map((slice) => slice.fileId)])].sort();
}

/** Spark with the metadata table on and off, and our reader, read the same rows; no key twice; Spark's rows. */
async function readAlike(path: string, expectedRows: number) {
  const { rows, keys } = await readsAlike(hudi, path);
  assert.equal(keys.length, expectedRows);
  return rows;
}

/** Our clustering (the CLI's job, scheduleAndExecute) and an upsert without the bucket settings are refused; nothing is written. */
async function assertClusteringAndWritesRefused(path: string) {
  const table = await HudiTable.open(openStorage(path), { mode: 'clustering' });
  const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
  const before0 = tableFiles(path);
  const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.small.file.limit': '104857600' } }).config;
  await assert.rejects(
    runClusteringJob(table, { mode: 'scheduleAndExecute', config, lock, engine, tempDir: tempDir('bucket-cluster-'), force: true }),
    (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'simple-bucket-index' && error.service === 'clustering',
  );
  const input = join(tempDir('bucket-write-'), 'batch.jsonl');
  await writeJsonLines(input, generateUsers({ count: 2, seed: 1, idStart: 1, startDate: '2024-01-01', days: 1 }));
  await assert.rejects(
    writeBatch(openStorage(path), { input: { file: input, format: 'jsonl' }, operation: 'upsert' }),
    (error: unknown) => error instanceof HudiError && /written with the simple bucket index/.test(error.message),
  );
  assert.deepEqual(tableFiles(path), before0, 'nothing written');
}

describe('simple bucket index tables written by Spark', () => {
  it('copy-on-write: clustering and writes without the bucket index refused; clean and archival run; Spark bucket upserts and reads on top', async () => {
    const path = join(tempDir('bucket-cow-'), 'bucket_cow');
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 16).map((id) => row(id, 1)), options: options('bucket_cow', 'COPY_ON_WRITE', 'insert') });
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 2)), options: options('bucket_cow', 'COPY_ON_WRITE', 'upsert') });
    const fileIds = await liveFileIds(path);
    assert.ok(fileIds.length > 0 && fileIds.every((id) => bucketNumberOf(id) !== undefined && bucketNumberOf(id)! < 4), `bucket file ids: ${fileIds}`);

    await assertClusteringAndWritesRefused(path);

    const table = await HudiTable.open(openStorage(path), { mode: 'write' });
    const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
    const cleanConfig = cleanConfigFromProperties(
      new Map([
        ['hoodie.cleaner.policy', 'KEEP_LATEST_FILE_VERSIONS'],
        ['hoodie.cleaner.fileversions.retained', '1'],
      ]),
    );
    const cleaned = await runClean(table, { config: cleanConfig, lock });
    assert.equal(cleaned.outcome, 'cleaned', 'the first slices of the updated buckets are not the latest version');
    await archiveKeepingCommits(await table.reload(), 1, 2, { cleanConfig, lock });
    assert.deepEqual(await liveFileIds(path), fileIds, 'cleaning and archival keep every file id');

    // Spark's bucket index finds every bucket's file group again: updates land in place, inserts in their buckets.
    await hudi.write(path, { schema: SCHEMA, rows: ids(5, 20).map((id) => row(id, 3)), options: options('bucket_cow', 'COPY_ON_WRITE', 'upsert') });
    const rows = await readAlike(path, 20);
    assert.equal(rows.find((r) => Number(r['id']) === 6)?.['name'], 'n6-3');
    assert.equal(rows.find((r) => Number(r['id']) === 2)?.['name'], 'n2-2');
    assert.ok((await liveFileIds(path)).every((id) => bucketNumberOf(id) !== undefined));
  });

  it('merge-on-read: clustering and writes without the bucket index refused; compaction keeps the file ids; Spark bucket upserts and reads on top', async () => {
    const path = join(tempDir('bucket-mor-'), 'bucket_mor');
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 16).map((id) => row(id, 1)), options: options('bucket_mor', 'MERGE_ON_READ', 'insert') });
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 2)), options: options('bucket_mor', 'MERGE_ON_READ', 'upsert') });
    const fileIds = await liveFileIds(path);
    assert.ok(fileIds.length > 0 && fileIds.every((id) => bucketNumberOf(id) !== undefined), `bucket file ids: ${fileIds}`);
    const snapshot = await readAlike(path, 16);

    await assertClusteringAndWritesRefused(path);

    const table = await HudiTable.open(openStorage(path));
    const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
    const scheduled = await scheduleCompaction(table, compactionConfigFrom(new Map(), 'test'), { lock, force: true });
    assert.ok(scheduled, 'a compaction plan');
    const compacted = await runCompaction(await table.reload(), scheduled.instantTime, { lock });
    assert.equal(compacted.outcome, 'committed');
    assert.deepEqual(await liveFileIds(path), fileIds, 'compaction keeps every file id');
    const view = await (await HudiTable.open(openStorage(path))).fileSystemView();
    assert.ok(
      view.latestMergedSlices().every((slice) => slice.baseFile !== undefined && slice.logFiles.length === 0),
      'every slice is a base file',
    );
    const afterCompaction = await readAlike(path, 16);
    const withoutFileNames = (rows: typeof snapshot) => canonicalRows(rows.map(({ _hoodie_file_name: _name, ...rest }) => rest));
    assert.deepEqual(withoutFileNames(afterCompaction), withoutFileNames(snapshot), 'compaction changes no row');

    await hudi.write(path, { schema: SCHEMA, rows: ids(5, 20).map((id) => row(id, 3)), options: options('bucket_mor', 'MERGE_ON_READ', 'upsert') });
    const rows = await readAlike(path, 20);
    assert.equal(rows.find((r) => Number(r['id']) === 6)?.['name'], 'n6-3');
    assert.equal(rows.find((r) => Number(r['id']) === 2)?.['name'], 'n2-2');
    assert.ok((await liveFileIds(path)).every((id) => bucketNumberOf(id) !== undefined));
  });
});
