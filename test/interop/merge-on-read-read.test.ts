/**
 * Merge-on-read reads against real Hudi 0.15 (Spark 3.5.1): Spark writes MOR tables (inserts into base files,
 * upserts and deletes into log files, Avro and Parquet data blocks, delete blocks, a failed delta commit and the
 * rollback Spark's next write makes of it), and we read them as Spark reads them: snapshot (`_rt`), read-optimized
 * (`_ro`) and as of earlier instants, every column including the `_hoodie_*` ones.
 *
 * Table A: partitioned, metadata table on, the table's payload class as Spark stores it. Table B: non-partitioned,
 * metadata table off, DefaultHoodieRecordPayload, soft deletes (`_hoodie_is_deleted`), and precombine values that
 * arrive out of order (between log blocks, and against the base file).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA_A = 'id BIGINT, name STRING, price DOUBLE, qty INT, amount DECIMAL(10,2), day DATE, at TIMESTAMP, ts BIGINT, dt STRING';
const rowA = (id: number, ts: number, tag: string) => ({
  id,
  name: `n${id}-${tag}`,
  price: id * 1.5,
  qty: id * 10,
  amount: `${id}.25`,
  day: `2024-01-0${(id % 9) + 1}`,
  at: `2024-02-0${(id % 9) + 1}T10:00:00.123456Z`,
  ts,
  dt: id % 2 === 1 ? 'a' : 'b',
});
const COMMON = mergeOnReadWriteOptions();
const optionsA = (operation: string, extra: Record<string, string> = {}) => ({
  ...COMMON,
  'hoodie.table.name': 'mor_a',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.partitionpath.field': 'dt',
  ...extra,
});

const SCHEMA_B = 'id INT, name STRING, ts BIGINT, _hoodie_is_deleted BOOLEAN';
const rowB = (id: number, ts: number, deleted = false) => ({ id, name: `b${id}-${ts}`, ts, _hoodie_is_deleted: deleted });
const optionsB = (operation: string) => ({
  ...COMMON,
  'hoodie.table.name': 'mor_b',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.NonpartitionedKeyGenerator',
  'hoodie.datasource.write.payload.class': 'org.apache.hudi.common.model.DefaultHoodieRecordPayload',
  'hoodie.metadata.enable': 'false',
});

async function ours(path: string, options: { asOf?: string; queryType?: QueryType } = {}): Promise<Row[]> {
  const table = await HudiTable.open(openStorage(path));
  return (await readSnapshot(table, { ...options, includeMetaFields: true })).rows;
}

async function spark(hudi: HudiHarness, path: string, options: { asOf?: string; queryType?: QueryType } = {}): Promise<Row[]> {
  const read = {
    ...(options.asOf === undefined ? {} : { 'as.of.instant': options.asOf }),
    ...(options.queryType === undefined ? {} : { 'hoodie.datasource.query.type': options.queryType }),
  };
  return (await hudi.read(path, { options: read })).rows;
}

async function sameAsSpark(hudi: HudiHarness, path: string, options: { asOf?: string; queryType?: QueryType } = {}): Promise<Row[]> {
  const [mine, theirs] = [await ours(path, options), await spark(hudi, path, options)];
  assert.deepEqual(canonicalRows(mine), canonicalRows(theirs), `${path} ${JSON.stringify(options)}`);
  return mine;
}

const ids = (rows: readonly Row[]) => rows.map((row) => Number(row['id'])).sort((a, b) => a - b);
const byId = (rows: readonly Row[], id: number) => rows.find((row) => Number(row['id']) === id);

async function completedTimes(path: string): Promise<string[]> {
  const table = await HudiTable.open(openStorage(path));
  return table.timeline.completedWrites().map((i) => i.time);
}

describe('merge-on-read reads: Spark-written tables read as Spark reads them', () => {
  let hudi: HudiHarness;
  let tableA: string;
  let tableB: string;
  const snapshots: Record<string, Row[]> = {};
  let timesA: string[] = [];

  before(async () => {
    hudi = await startHudi();
    const root = tempDir('mor-read-');
    tableA = join(root, 'mor_a');
    tableB = join(root, 'mor_b');
  });

  after(async () => {
    await hudi?.close();
  });

  it('table A: inserts, upserts into logs (Avro and Parquet blocks), a delete block: snapshot after each step', async () => {
    await hudi.write(tableA, { schema: SCHEMA_A, rows: [1, 2, 3, 4, 5, 6].map((id) => rowA(id, 1, 'ins')), options: optionsA('insert') });
    await hudi.write(tableA, { schema: SCHEMA_A, rows: [rowA(1, 2, 'up1'), rowA(2, 2, 'up1'), rowA(7, 2, 'ins')], options: optionsA('upsert') });
    snapshots['c2'] = await sameAsSpark(hudi, tableA);
    assert.equal(byId(snapshots['c2']!, 1)?.['name'], 'n1-up1');
    // A lower precombine value than stored, in a Parquet data block.
    await hudi.write(tableA, { schema: SCHEMA_A, rows: [rowA(3, 0, 'up2')], options: optionsA('upsert', { 'hoodie.logfile.data.block.format': 'parquet' }) });
    await hudi.write(tableA, { schema: SCHEMA_A, rows: [rowA(4, 4, 'del')], options: optionsA('delete') });
    await hudi.write(tableA, { schema: SCHEMA_A, rows: [rowA(5, 5, 'up3'), rowA(1, 5, 'up3')], options: optionsA('upsert') });
    snapshots['c5'] = await sameAsSpark(hudi, tableA);
    assert.deepEqual(ids(snapshots['c5']!), [1, 2, 3, 5, 6, 7]);
    const logFiles = (await HudiTable.open(openStorage(tableA)).then((t) => t.fileSystemView())).latestMergedSlices().flatMap((s) => s.logFiles);
    assert.ok(logFiles.length >= 2, 'the upserts went to log files');
    timesA = await completedTimes(tableA);
    assert.equal(timesA.length, 5);
  });

  it('table A: a failed delta commit is invisible, and so is what Spark rolls back of it', async () => {
    await hudi.write(tableA, { schema: SCHEMA_A, rows: [rowA(6, 9, 'failed'), rowA(8, 9, 'failed')], options: optionsA('upsert') });
    const failed = (await completedTimes(tableA)).at(-1)!;
    // Make it a failed write: completed on storage, but its completed instant file gone (as a crash before it).
    rmSync(join(tableA, '.hoodie', `${failed}.deltacommit`));
    const withFailed = await sameAsSpark(hudi, tableA);
    assert.deepEqual(canonicalRows(withFailed), canonicalRows(snapshots['c5']!));
    // Spark's next write rolls the failed one back first (rollback command blocks in the logs), then upserts.
    await hudi.write(tableA, { schema: SCHEMA_A, rows: [rowA(2, 10, 'up4')], options: optionsA('upsert') });
    const table = await HudiTable.open(openStorage(tableA));
    assert.ok(
      table.timeline.completed().some((i) => i.action === 'rollback'),
      'Spark rolled the failed delta commit back',
    );
    const latest = await sameAsSpark(hudi, tableA);
    assert.equal(byId(latest, 2)?.['name'], 'n2-up4');
    assert.equal(byId(latest, 6)?.['name'], 'n6-ins');
    assert.equal(byId(latest, 8), undefined);
  });

  it('table A: read-optimized reads the base files only, as Spark does', async () => {
    const ro = await sameAsSpark(hudi, tableA, { queryType: 'read_optimized' });
    assert.equal(byId(ro, 5)?.['name'], 'n5-ins', 'the base file version, not the log update');
    assert.ok(byId(ro, 4), 'the delete is in a log file');
  });

  it('table A: as of earlier instants, as Spark time-travels', async () => {
    const [, c2, , c4] = timesA;
    const atC2 = await sameAsSpark(hudi, tableA, { asOf: c2! });
    assert.deepEqual(canonicalRows(atC2), canonicalRows(snapshots['c2']!));
    const atC4 = await sameAsSpark(hudi, tableA, { asOf: c4! });
    assert.deepEqual(ids(atC4), [1, 2, 3, 5, 6, 7]);
  });

  it('the CLI reads a MOR table (snapshot and --query-type read_optimized)', () => {
    const snapshot = runCli(['read', tableA, '--meta']);
    assert.equal(snapshot.code, 0, snapshot.stderr);
    assert.deepEqual(ids(jsonLines(snapshot.stdout) as Row[]), [1, 2, 3, 5, 6, 7]);
    const ro = runCli(['read', tableA, '--query-type', 'read_optimized']);
    assert.equal(ro.code, 0, ro.stderr);
    assert.deepEqual(ids(jsonLines(ro.stdout) as Row[]), [1, 2, 3, 4, 5, 6, 7]);
    const bad = runCli(['read', tableA, '--query-type', 'incremental']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /query type "incremental" is not supported/);
  });

  it('table B: DefaultHoodieRecordPayload, soft deletes and out-of-order precombine values, no metadata table', async () => {
    await hudi.write(tableB, { schema: SCHEMA_B, rows: [rowB(1, 5), rowB(2, 5), rowB(3, 5), rowB(4, 5)], options: optionsB('insert') });
    // 1: older than the base record (kept); 2: newer; 3: soft-deleted; 5: new.
    await hudi.write(tableB, { schema: SCHEMA_B, rows: [rowB(1, 3), rowB(2, 7), rowB(3, 6, true), rowB(5, 1)], options: optionsB('upsert') });
    // 2 again, older than its log record; 4 newer.
    await hudi.write(tableB, { schema: SCHEMA_B, rows: [rowB(2, 6), rowB(4, 8)], options: optionsB('upsert') });
    const table = await HudiTable.open(openStorage(tableB));
    assert.equal(table.config.properties.get('hoodie.compaction.payload.class'), 'org.apache.hudi.common.model.DefaultHoodieRecordPayload');
    const rows = await sameAsSpark(hudi, tableB);
    assert.deepEqual(ids(rows), [1, 2, 4, 5]);
    assert.equal(byId(rows, 1)?.['ts'], 5, 'the base record has the greater ordering value');
    assert.equal(byId(rows, 2)?.['ts'], 7, 'the earlier log record has the greater ordering value');
    await sameAsSpark(hudi, tableB, { queryType: 'read_optimized' });
  });

  it('table B: a pending compaction (Spark-scheduled) and writes after it: the new log-only slice merges with the one before', async () => {
    const scheduled = await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${tableB}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
    assert.equal(scheduled.rows.length, 1, JSON.stringify(scheduled.rows));
    await hudi.write(tableB, { schema: SCHEMA_B, rows: [rowB(4, 9), rowB(6, 9)], options: optionsB('upsert') });
    const view = await (await HudiTable.open(openStorage(tableB))).fileSystemView();
    const slices = view.latestMergedSlices();
    assert.ok(
      slices.some((slice) => slice.baseFile !== undefined && slice.logFiles.some((log) => log.name.baseInstant !== slice.baseInstantTime)),
      `logs of the compaction slice merged onto the previous base: ${JSON.stringify(slices.map((s) => [s.baseFile?.fileName, s.logFiles.map((l) => l.path)]))}`,
    );
    const pending = await sameAsSpark(hudi, tableB);
    assert.equal(byId(pending, 4)?.['ts'], 9);
    await sameAsSpark(hudi, tableB, { queryType: 'read_optimized' });
    await hudi.sql(`CALL run_compaction(op => 'run', path => '${tableB}')`);
    const compacted = await sameAsSpark(hudi, tableB);
    // The same records; only the base file they sit in (and so _hoodie_file_name) changed.
    const withoutFileName = (rows: readonly Row[]) => canonicalRows(rows.map(({ _hoodie_file_name: _name, ...rest }) => rest));
    assert.deepEqual(withoutFileName(compacted), withoutFileName(pending));
    await sameAsSpark(hudi, tableB, { queryType: 'read_optimized' });
  });

  it('a clean dry run plans a MOR table Spark wrote', () => {
    const result = runCli(['clean', tableB, '--dry-run']);
    assert.equal(result.code, 0, result.stderr);
  });
});
