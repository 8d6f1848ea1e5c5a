/**
 * Our services on CDC tables (hoodie.table.cdc.enabled=true) Hudi 0.15 (Spark 3.5.1) wrote: our writes are refused
 * before anything is written (Hudi's writers write the change data Spark's CDC query reads, ours do not); our
 * clustering (copy-on-write) and compaction (merge-on-read) run, as Hudi writes no change data for them and its CDC
 * extractor skips their instants: Spark's CDC query returns what it returned before, and still works after Spark
 * writes on top of our files. Our cleaner and Spark's (`CALL run_clean`), each on a copy, delete the same files, the
 * cdc log files of the cleaned slices included, and plan and record them alike.
 *
 * One Spark session for the file; each table takes two Spark writes before our services and one after.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
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
import { decodeTimelineAvro, type HoodieCleanMetadata } from '../../lib/timeline/avro-files.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tableFiles, tempDir } from '../helpers/paths.js';
import { cleanerPlanFiles } from '../helpers/table-files.js';

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

/** Our upsert is refused, naming CDC, and nothing is written. */
async function assertWritesRefused(path: string) {
  const before0 = tableFiles(path);
  const input = join(tempDir('cdc-write-'), 'batch.jsonl');
  await writeJsonLines(input, [row(1, 9)]);
  await assert.rejects(
    writeBatch(openStorage(path), { input: { file: input, format: 'jsonl' }, operation: 'upsert' }),
    (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'cdc' && /CDC/.test(error.message),
  );
  assert.deepEqual(tableFiles(path), before0, 'nothing written');
}

describe('CDC tables written by Spark', () => {
  it('copy-on-write: our writes refused; our clustering keeps Spark CDC query working', async () => {
    const path = join(tempDir('cdc-cow-'), 'cdc_cow');
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 1)), options: options('cdc_cow', 'COPY_ON_WRITE', 'insert') });
    await hudi.write(path, {
      schema: SCHEMA,
      rows: [...ids(1, 4), ...ids(9, 16)].map((id) => row(id, 2)),
      options: options('cdc_cow', 'COPY_ON_WRITE', 'upsert'),
    });
    const changes = await cdcRows(path);
    assert.equal(changes.length, 20, '16 inserts and 4 updates');
    await assertWritesRefused(path);

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
    await assertWritesRefused(path);

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

  it("copy-on-write: our cleaner deletes the cleaned slices' cdc log files, as Spark's cleaner does", async () => {
    const source = join(tempDir('cdc-clean-'), 'cdc_clean');
    const write = (rows: ReturnType<typeof row>[], operation: string) =>
      hudi.write(source, { schema: SCHEMA, rows, options: { ...options('cdc_clean', 'COPY_ON_WRITE', operation), 'hoodie.metadata.enable': 'false' } });
    await write(
      ids(1, 8).map((id) => row(id, 1)),
      'insert',
    );
    await write(
      ids(1, 4).map((id) => row(id, 2)),
      'upsert',
    );
    await write(
      [1, 2, 5].map((id) => row(id, 3)),
      'upsert',
    );
    await write(
      [1, 6].map((id) => row(id, 4)),
      'upsert',
    );
    /** Data files (not under .hoodie, no checksum side files) by path. */
    const dataFiles = (path: string) =>
      tableFiles(path)
        .map((entry) => entry.slice(0, entry.lastIndexOf(' ')))
        .filter((file) => !file.startsWith('/.hoodie/') && !file.endsWith('.crc'));
    const cdcFiles = (path: string) => dataFiles(path).filter((file) => file.endsWith('.cdc'));
    assert.ok(cdcFiles(source).length >= 3, "Spark's upserts wrote cdc log files");

    const copies = tempDir('cdc-clean-copies-');
    const spark = join(copies, 'spark');
    const mine = join(copies, 'ours');
    cpSync(source, spark, { recursive: true });
    cpSync(source, mine, { recursive: true });
    await hudi.sql(`CREATE TABLE cdc_clean_spark USING hudi LOCATION '${spark}'`);
    await hudi.sql(
      "CALL run_clean(table => 'cdc_clean_spark', clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => 1, options => 'hoodie.metadata.enable=false')",
    );
    const table = await HudiTable.open(openStorage(mine));
    const result = await runClean(table, {
      config: cleanConfigFromProperties(
        new Map([
          ['hoodie.cleaner.policy', 'KEEP_LATEST_COMMITS'],
          ['hoodie.cleaner.commits.retained', '1'],
        ]),
      ),
      lock: lockProviderFor(table.config.properties, table.config.name, table.storage),
    });
    assert.equal(result.outcome, 'cleaned');

    const deletedCdc = cdcFiles(source).filter((file) => !cdcFiles(spark).includes(file));
    assert.ok(deletedCdc.length > 0, "Spark's cleaner deleted cdc log files");
    assert.deepEqual(dataFiles(mine), dataFiles(spark), 'the same files remain, cdc log files included');

    const hoodieFile = (path: string, suffix: string) => readdirSync(join(path, '.hoodie')).find((name) => name.endsWith(suffix))!;
    const requested = hoodieFile(spark, '.clean.requested');
    const sparkPlan = decodeTimelineAvro('cleanerPlan', readFileSync(join(spark, '.hoodie', requested)), requested);
    assert.deepEqual(cleanerPlanFiles(result.clean!.plan), cleanerPlanFiles(sparkPlan), 'the plans name the same files');
    const completed = hoodieFile(spark, '.clean');
    const sparkMetadata = decodeTimelineAvro('cleanMetadata', readFileSync(join(spark, '.hoodie', completed)), completed);
    const deleted = (metadata: HoodieCleanMetadata) =>
      Object.fromEntries(Object.entries(metadata.partitionMetadata).map(([partition, m]) => [partition, [...m.successDeleteFiles].sort()]));
    assert.deepEqual(deleted(result.clean!.metadata), deleted(sparkMetadata), 'the clean metadata records the same deletions');
    assert.equal(result.clean!.metadata.totalFilesDeleted, sparkMetadata.totalFilesDeleted);

    // Spark reads both copies alike: the snapshot, and the changes of the commit whose slices were kept.
    const commits = readdirSync(join(source, '.hoodie'))
      .filter((name) => name.endsWith('.commit'))
      .sort();
    const sinceLast = { ...CDC_READ, 'hoodie.datasource.read.begin.instanttime': commits.at(-2)!.slice(0, -'.commit'.length) };
    const changes = async (path: string) => canonicalRows((await hudi.read(path, { options: sinceLast, meta: false })).rows);
    const sparkChanges = await changes(spark);
    assert.equal(sparkChanges.length, 2, "the last upsert's two updates");
    assert.deepEqual(await changes(mine), sparkChanges);
    assert.deepEqual(await readAlike(mine), await readAlike(spark));
  });
});
