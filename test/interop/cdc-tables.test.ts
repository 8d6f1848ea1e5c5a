/**
 * Our services on CDC tables (hoodie.table.cdc.enabled=true) Hudi 0.15 (Spark 3.5.1) wrote: our copy-on-write upserts
 * and deletes write the change data Hudi writes, in each supplemental logging mode (Spark's CDC query returns the
 * changes it returns for the same writes by Spark, on a twin table); insert is refused (merge-on-read writes are in
 * cdc-merge-on-read.test.ts); our clustering (copy-on-write) and compaction (merge-on-read) run, as Hudi writes no
 * change data for them and its CDC extractor skips their instants: Spark's CDC query returns what it returned before,
 * and still works after Spark writes on top of our files. Our cleaner and Spark's (`CALL run_clean`), each on a copy,
 * delete the same files, the cdc log files of the cleaned slices included, and plan and record them alike.
 *
 * One Spark session for the file; each table takes two Spark writes before our services and one after.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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
import { readLogFile } from '../../lib/log-format/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, type HoodieCleanMetadata } from '../../lib/timeline/avro-files.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { canonicalRow, canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi, withoutMetaColumns } from '../helpers/hudi.js';
import { cleanKeepingLatestCommits } from '../helpers/interop-writer.js';
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

function options(table: string, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ', operation: string, mode?: string): Record<string, string> {
  return {
    ...(mode === undefined ? {} : { 'hoodie.table.cdc.supplemental.logging.mode': mode }),
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

/** Our insert is refused, naming CDC, and nothing is written. */
async function assertInsertRefused(path: string) {
  const before0 = tableFiles(path);
  await assert.rejects(
    ourWrite(path, 'insert', [row(1, 9)]),
    (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'cdc' && /CDC/.test(error.message),
  );
  assert.deepEqual(tableFiles(path), before0, 'nothing written');
}

async function ourWrite(path: string, operation: WriteOperation, rows: readonly Row[]) {
  const input = join(tempDir('cdc-write-'), 'batch.jsonl');
  await writeJsonLines(input, rows);
  return writeBatch(openStorage(path), { input: { file: input, format: 'jsonl' }, operation });
}

/**
 * Spark's CDC query as comparable changes: the commit by its place on the timeline, images without meta columns
 * (Spark reads them from base files, not from cdc logs), and an insert's missing before image as null (an AS_IS
 * insert's is the text "null").
 */
async function comparableChanges(path: string): Promise<string[]> {
  const commits = readdirSync(join(path, '.hoodie'))
    .filter((name) => name.endsWith('.commit'))
    .map((name) => name.slice(0, -'.commit'.length))
    .sort();
  const image = (text: unknown) => {
    const parsed = text === null ? null : (JSON.parse(String(text)) as Row | null);
    return parsed === null ? null : Object.fromEntries(Object.entries(parsed).filter(([column]) => !column.startsWith('_hoodie_')));
  };
  return canonicalRows(
    (await cdcRows(path)).map((r) => ({
      op: r['op'] ?? null,
      commit: commits.indexOf(String(r['ts_ms'])),
      before: image(r['before']),
      after: image(r['after']),
    })),
  );
}

/** The cdc log files of a table, by path, with their blocks' SCHEMA headers. */
async function cdcLogSchemas(path: string): Promise<Map<string, string[]>> {
  const files = tableFiles(path)
    .map((entry) => entry.slice(1, entry.lastIndexOf(' ')))
    .filter((file) => file.endsWith('.cdc'));
  const out = new Map<string, string[]>();
  for (const file of files)
    out.set(
      file,
      (await readLogFile(openStorage(path), file)).map((block) => `${block.type} ${block.header.SCHEMA}`),
    );
  return out;
}

describe('CDC tables written by Spark', () => {
  for (const mode of ['DATA_BEFORE_AFTER', 'DATA_BEFORE', 'OP_KEY_ONLY']) {
    it(`copy-on-write, ${mode}: our upsert, delete (and bulk_insert) leave the change data Spark's writes do`, async () => {
      const dir = tempDir('cdc-writes-');
      const ours = join(dir, 'ours');
      const spark = join(dir, 'spark');
      const sparkWrite = (path: string, rows: readonly Row[], operation: string) =>
        hudi.write(path, { schema: SCHEMA, rows, options: options('cdc_w', 'COPY_ON_WRITE', operation, mode) });
      for (const path of [ours, spark]) {
        await sparkWrite(
          path,
          ids(1, 8).map((id) => row(id, 1)),
          'upsert',
        );
        await sparkWrite(
          path,
          [...ids(1, 3), ...ids(9, 12)].map((id) => row(id, 2)),
          'upsert',
        );
      }
      // Updates in two partitions, inserts into their small files (ours; Spark's go to new file groups) and into a
      // new partition, then deletes: ours on one table, Spark's on its twin.
      const upsert = [...[2, 4, 9].map((id) => row(id, 3)), ...[13, 14].map((id) => row(id, 3)), { id: 15, name: 'n15-3', ts: 3, dt: 'c' }];
      const deletes = [5, 10].map((id) => row(id, 1));
      const before = await cdcLogSchemas(ours);
      const upserted = await ourWrite(ours, 'upsert', upsert);
      assert.equal(upserted.updated, 3);
      assert.ok(
        upserted.stats.some((stat) => stat.cdcStats !== null) && upserted.stats.some((stat) => stat.cdcStats === null),
        'merges wrote cdc logs, the new group none',
      );
      assert.equal((await ourWrite(ours, 'delete', deletes)).deleted, 2);
      await sparkWrite(spark, upsert, 'upsert');
      await sparkWrite(spark, deletes, 'delete');
      // bulk_insert writes new file groups only, whose rows the CDC reader takes as inserts (once: it is mode-blind).
      const bulk = [20, 21].map((id) => row(id, 5));
      if (mode === 'DATA_BEFORE_AFTER') {
        assert.ok((await ourWrite(ours, 'bulk_insert', bulk)).stats.every((stat) => stat.cdcStats === null && stat.prevCommit === 'null'));
        await sparkWrite(spark, bulk, 'bulk_insert');
      }

      // Our cdc logs are laid out as Spark's: one CDC_DATA_BLOCK with the same schema.
      const written = [...(await cdcLogSchemas(ours))].filter(([file]) => !before.has(file));
      assert.ok(written.length >= 3, 'our upsert and delete wrote cdc log files');
      const sparkSchemas = new Set([...(await cdcLogSchemas(spark)).values()].map((blocks) => blocks.join('\n')));
      for (const [file, blocks] of written) assert.ok(sparkSchemas.has(blocks.join('\n')), `${file} has the block Spark writes`);

      assert.deepEqual(await comparableChanges(ours), await comparableChanges(spark), 'the CDC query returns the same changes');
      assert.deepEqual(
        withoutMetaColumns(await readAlike(ours))
          .map(canonicalRow)
          .sort(),
        withoutMetaColumns(await readAlike(spark))
          .map(canonicalRow)
          .sort(),
      );

      // Spark writes on top of our commits: its change data reads our files as before images.
      for (const path of [ours, spark])
        await sparkWrite(
          path,
          [2, 13, 6, 15].map((id) => (id === 15 ? { id, name: 'n15-4', ts: 4, dt: 'c' } : row(id, 4))),
          'upsert',
        );
      const changes = await comparableChanges(ours);
      assert.deepEqual(changes, await comparableChanges(spark), 'and after Spark upserts on top');
      const opsOf = (commit: number) =>
        changes
          .map((c) => JSON.parse(c) as { op: string; commit: number })
          .filter((c) => c.commit === commit)
          .map((c) => c.op)
          .sort();
      assert.deepEqual([...opsOf(2), ...opsOf(3)].sort(), ['d', 'd', 'i', 'i', 'i', 'u', 'u', 'u'], 'our upsert and delete: 3 updates, 3 inserts, 2 deletes');
      if (mode === 'DATA_BEFORE_AFTER') assert.deepEqual(opsOf(4), ['i', 'i'], 'our bulk_insert: 2 inserts');
      await readAlike(ours);
    });
  }

  it('copy-on-write: our insert refused; our clustering keeps Spark CDC query working', async () => {
    const path = join(tempDir('cdc-cow-'), 'cdc_cow');
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 1)), options: options('cdc_cow', 'COPY_ON_WRITE', 'insert') });
    await hudi.write(path, {
      schema: SCHEMA,
      rows: [...ids(1, 4), ...ids(9, 16)].map((id) => row(id, 2)),
      options: options('cdc_cow', 'COPY_ON_WRITE', 'upsert'),
    });
    const changes = await cdcRows(path);
    assert.equal(changes.length, 20, '16 inserts and 4 updates');
    await assertInsertRefused(path);

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

  it('merge-on-read: our insert refused; our compaction keeps Spark CDC query working', async () => {
    const path = join(tempDir('cdc-mor-'), 'cdc_mor');
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 1)), options: options('cdc_mor', 'MERGE_ON_READ', 'insert') });
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 4).map((id) => row(id, 2)), options: options('cdc_mor', 'MERGE_ON_READ', 'upsert') });
    const changes = await cdcRows(path);
    assert.equal(changes.length, 12, '8 inserts and 4 updates');
    await assertInsertRefused(path);

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
    const result = await cleanKeepingLatestCommits(mine, 1);
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
