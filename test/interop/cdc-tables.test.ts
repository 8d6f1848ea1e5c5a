/**
 * Our services on CDC tables (hoodie.table.cdc.enabled=true) Hudi 0.15 (Spark 3.5.1) wrote: our writes and our
 * cleaning are refused before anything is written (Hudi's writers write the change data Spark's CDC query reads,
 * ours do not); our clustering (copy-on-write) and compaction (merge-on-read) run, as Hudi writes no change data
 * for them and its CDC extractor skips their instants: Spark's CDC query returns what it returned before, and
 * still works after Spark writes on top of our files.
 *
 * One Spark session for the file; each table takes two Spark writes before our services and one after.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tableFiles, tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const row = (id: number, ts: number) => ({ id, name: `n${id}-${ts}`, ts, dt: id % 2 === 0 ? 'a' : 'b' });
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
/** Spark's CDC query over the whole timeline. */
const CDC_READ = {
  'hoodie.datasource.query.type': 'incremental',
  'hoodie.datasource.query.incremental.format': 'cdc',
  'hoodie.datasource.read.begin.instanttime': '0',
};

function options(table: string, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ', operation: string): Record<string, string> {
  return {
    ...mergeOnReadWriteOptions(1),
    'hoodie.datasource.write.table.type': type,
    'hoodie.table.name': table,
    'hoodie.datasource.write.operation': operation,
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.table.timeline.timezone': 'UTC',
    'hoodie.table.cdc.enabled': 'true',
    // Each write's inserts become new file groups: small files for our clustering to merge.
    'hoodie.parquet.small.file.limit': '0',
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

async function cdcRows(path: string): Promise<Row[]> {
  return (await hudi.read(path, { options: CDC_READ, meta: false })).rows;
}

/** Spark and our reader read the same snapshot. */
async function readAlike(path: string): Promise<Row[]> {
  const spark = (await hudi.read(path)).rows;
  const ours = (await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true })).rows;
  assert.deepEqual(canonicalRows(ours), canonicalRows(spark), 'our reader reads what Spark reads');
  return spark;
}

/** Our upsert and our clean are refused, naming CDC, and nothing is written. */
async function assertWritesAndCleanRefused(path: string, cleanToo: boolean) {
  const before0 = tableFiles(path);
  const input = join(tempDir('cdc-write-'), 'batch.jsonl');
  await writeJsonLines(input, [row(1, 9)]);
  await assert.rejects(
    writeBatch(openStorage(path), { input: { file: input, format: 'jsonl' }, operation: 'upsert' }),
    (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'cdc' && /CDC/.test(error.message),
  );
  if (cleanToo) {
    const table = await HudiTable.open(openStorage(path), { mode: 'write' });
    await assert.rejects(
      runClean(table, { config: cleanConfigFromProperties(new Map()), lock: lockProviderFor(table.config.properties, table.config.name, table.storage) }),
      (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'cdc' && error.service === 'clean',
    );
  }
  assert.deepEqual(tableFiles(path), before0, 'nothing written');
}

describe('CDC tables written by Spark', () => {
  it('copy-on-write: our writes and cleaning refused; our clustering keeps Spark CDC query working', async () => {
    const path = join(tempDir('cdc-cow-'), 'cdc_cow');
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 1)), options: options('cdc_cow', 'COPY_ON_WRITE', 'insert') });
    await hudi.write(path, {
      schema: SCHEMA,
      rows: [...ids(1, 4), ...ids(9, 16)].map((id) => row(id, 2)),
      options: options('cdc_cow', 'COPY_ON_WRITE', 'upsert'),
    });
    const changes = await cdcRows(path);
    assert.equal(changes.length, 20, '16 inserts and 4 updates');
    await assertWritesAndCleanRefused(path, true);

    const snapshot = await readAlike(path);
    const table = await HudiTable.open(openStorage(path), { mode: 'clustering' });
    const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
    const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': 'name' } }).config;
    const run = await runClusteringJob(table, { mode: 'scheduleAndExecute', config, lock, engine, tempDir: tempDir('cdc-cluster-'), force: true });
    assert.ok(run.commit, 'our clustering committed');
    const withoutFileNames = (rows: readonly Row[]) => canonicalRows(rows.map(({ _hoodie_file_name: _name, ...rest }) => rest));
    assert.deepEqual(withoutFileNames(await readAlike(path)), withoutFileNames(snapshot), 'clustering changes no row');
    assert.deepEqual(canonicalRows(await cdcRows(path)), canonicalRows(changes), 'the CDC query returns what it returned before');

    // Spark updates records in our files: its change log reads them as the records' before images.
    await hudi.write(path, { schema: SCHEMA, rows: [1, 2, 13].map((id) => row(id, 3)), options: options('cdc_cow', 'COPY_ON_WRITE', 'upsert') });
    const later = await cdcRows(path);
    assert.equal(later.length, 23);
    const updates = later.filter((r) => r['op'] === 'u' && String(r['after']).includes('-3"'));
    assert.equal(updates.length, 3, 'three updates after our clustering');
    assert.ok(
      updates.every((r) => String(r['before']).includes('-2"')),
      'their before images are the records our clustering moved',
    );
    await readAlike(path);
  });

  it('merge-on-read: our writes refused; our compaction keeps Spark CDC query working', async () => {
    const path = join(tempDir('cdc-mor-'), 'cdc_mor');
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 1)), options: options('cdc_mor', 'MERGE_ON_READ', 'insert') });
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 4).map((id) => row(id, 2)), options: options('cdc_mor', 'MERGE_ON_READ', 'upsert') });
    const changes = await cdcRows(path);
    assert.equal(changes.length, 12, '8 inserts and 4 updates');
    await assertWritesAndCleanRefused(path, false);

    const snapshot = await readAlike(path);
    const table = await HudiTable.open(openStorage(path));
    const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
    const scheduled = await scheduleCompaction(table, compactionConfigFrom(new Map(), 'test'), { lock, force: true });
    assert.ok(scheduled, 'a compaction plan');
    assert.equal((await runCompaction(await table.reload(), scheduled.instantTime, { lock })).outcome, 'committed');
    const withoutFileNames = (rows: readonly Row[]) => canonicalRows(rows.map(({ _hoodie_file_name: _name, ...rest }) => rest));
    assert.deepEqual(withoutFileNames(await readAlike(path)), withoutFileNames(snapshot), 'compaction changes no row');
    assert.deepEqual(canonicalRows(await cdcRows(path)), canonicalRows(changes), 'the CDC query returns what it returned before');

    await hudi.write(path, { schema: SCHEMA, rows: [1, 6].map((id) => row(id, 3)), options: options('cdc_mor', 'MERGE_ON_READ', 'upsert') });
    const later = await cdcRows(path);
    assert.equal(later.length, 14);
    const updates = later.filter((r) => r['op'] === 'u' && String(r['after']).includes('-3"'));
    assert.equal(updates.length, 2, 'two updates after our compaction');
    assert.ok(
      updates.some((r) => String(r['before']).includes('n1-2')) && updates.some((r) => String(r['before']).includes('n6-1')),
      'their before images come from the base files our compaction wrote',
    );
    await readAlike(path);
  });
});
