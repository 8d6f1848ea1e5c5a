/**
 * Real Hudi (0.15 on Spark 3.5.1) on tables our writer created and wrote with every operation: Spark reads them
 * exactly, Spark upserts into them in place, and a Spark write with the metadata table on (its default) bootstraps
 * the metadata table, which Hudi's own validator then accepts.
 *
 * Two tables: a partitioned one of many types (decimal, timestamp, date, struct, array, map) written through
 * lib/writer `writeBatch`, and a non-partitioned one written through the CLI `write`.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { byKey, cliWrite, ourRows, ourWrite, parquetFromRows, project, tableProperties } from '../helpers/interop-writer.js';
import { tempDir } from '../helpers/paths.js';

/** DuckDB types of the typed table's input; SPARK_SCHEMA is the same in Spark DDL. */
const COLUMNS = {
  id: 'BIGINT',
  name: 'VARCHAR',
  amount: 'DECIMAL(12,3)',
  ts: 'TIMESTAMPTZ',
  d: 'DATE',
  addr: 'STRUCT(city VARCHAR, zip INTEGER)',
  tags: 'VARCHAR[]',
  attrs: 'MAP(VARCHAR, INTEGER)',
  seq: 'BIGINT',
  dt: 'VARCHAR',
} as const;
const SPARK_SCHEMA =
  'id BIGINT, name STRING, amount DECIMAL(12,3), ts TIMESTAMP, d DATE, addr STRUCT<city: STRING, zip: INT>, ' +
  'tags ARRAY<STRING>, attrs MAP<STRING, INT>, seq BIGINT, dt STRING';
const DATA_COLUMNS = Object.keys(COLUMNS);

/** Row `id` in version `v`: every value derives from both, in the canonical JSON every reader here returns. */
function typedRow(id: number, v: number, dt: string): Row {
  return {
    id,
    name: `user-${id}-v${v}`,
    amount: `${id * 100 + v}.${String(id * 7 + v)
      .padStart(3, '0')
      .slice(-3)}`,
    ts: `2024-0${1 + (id % 9)}-1${v % 10}T0${id % 10}:1${v % 10}:00.${String(id * 11 + v)
      .padStart(3, '0')
      .slice(-3)}Z`,
    d: `2023-1${id % 3}-0${1 + (v % 9)}`,
    addr: { city: `city-${id}-${v}`, zip: id * 1000 + v },
    tags: v % 2 === 0 ? [`t${id}`, `v${v}`] : [`t${id}`],
    attrs: { [`k${id}`]: v, version: v },
    seq: v,
    dt,
  };
}

const TYPED_PROPS = new Map([
  ['hoodie.table.name', 'typed'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'seq'],
  ['hoodie.index.bloom.num_entries', '1000'],
]);
/** The key settings our typed table records, as Spark's writer options (validateTableConfig compares them). */
const TYPED_SPARK_OPTIONS = {
  'hoodie.table.name': 'typed',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'seq',
  'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.SimpleKeyGenerator',
  'hoodie.datasource.write.hive_style_partitioning': 'false',
  'hoodie.datasource.write.partitionpath.urlencode': 'false',
};

/** Expected state: per record key, the row and the instant that last wrote it. */
type Expected = Map<string, { row: Row; commit: string }>;

function apply(expected: Expected, rows: readonly Row[], commit: string, op: 'write' | 'delete'): void {
  for (const row of rows) {
    if (op === 'delete') expected.delete(String(row['id']));
    else expected.set(String(row['id']), { row, commit });
  }
}

/**
 * A snapshot against the expected state: data columns, record key, partition path, commit time and sequence number;
 * each file name is a base file of the record's partition.
 */
function assertMatches(table: string, rows: readonly Row[], expected: Expected, partitioned: boolean, reader: string): void {
  const actual = byKey(rows, '_hoodie_record_key');
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${reader}: record keys`);
  for (const [key, { row, commit }] of expected) {
    const got = actual.get(key)!;
    assert.deepEqual(
      project(
        [got],
        DATA_COLUMNS.filter((c) => c in row),
      ),
      [row],
      `${reader}: record ${key}`,
    );
    assert.equal(got['_hoodie_commit_time'], commit, `${reader}: record ${key} commit time`);
    assert.equal(got['_hoodie_partition_path'], partitioned ? row['dt'] : '', `${reader}: record ${key} partition path`);
    // The file holding the record now: a merge rewrites the file name of the records it copies, not their commit.
    const fileName = String(got['_hoodie_file_name']);
    const fileInstant = /_(\d{17})\.parquet$/.exec(fileName)?.[1];
    assert.ok(fileInstant !== undefined && fileInstant >= commit, `${reader}: record ${key} in ${fileName}, written at ${commit}`);
    assert.ok(existsSync(join(table, partitioned ? String(row['dt']) : '', fileName)), `${reader}: ${fileName} exists`);
    assert.match(String(got['_hoodie_commit_seqno']), new RegExp(`^${commit}_\\d+_\\d+$`), `${reader}: record ${key} seqno`);
  }
}

/** hoodie.properties after Spark's MDT bootstrap: ours, plus only the metadata-table keys. */
function assertOnlyMetadataKeysAdded(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): void {
  const added = new Map([...after].filter(([key]) => !before.has(key)));
  assert.deepEqual(Object.fromEntries(added), { 'hoodie.table.metadata.partitions': 'files', 'hoodie.table.metadata.partitions.inflight': '' });
  for (const [key, value] of before) assert.equal(after.get(key), value, `Spark kept ${key}`);
}

describe('interop: Spark reads and writes tables our writer created', () => {
  let hudi: HudiHarness;
  const dir = tempDir('interop-writer-');
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  it('partitioned, many types, writeBatch: bulk_insert, insert, upsert, delete; Spark reads it exactly, upserts in place (bloom index), bootstraps the metadata table', async () => {
    const table = join(dir, 'typed');
    const expected: Expected = new Map();
    const write = async (operation: 'bulk_insert' | 'insert' | 'upsert' | 'delete', rows: Row[]): Promise<string> => {
      const result = await ourWrite(table, operation, await parquetFromRows(dir, rows, COLUMNS), TYPED_PROPS);
      apply(expected, rows, result.instantTime, operation === 'delete' ? 'delete' : 'write');
      return result.instantTime;
    };
    const days = ['2024-01-01', '2024-01-02'];
    await write(
      'bulk_insert',
      [1, 2, 3, 4, 5, 6].map((id) => typedRow(id, 1, days[id % 2]!)),
    );
    await write(
      'insert',
      [7, 8].map((id) => typedRow(id, 1, '2024-01-03')),
    );
    await write('upsert', [typedRow(1, 2, days[1]!), typedRow(4, 2, days[0]!), typedRow(9, 1, days[1]!)]);
    const lastOurs = await write('delete', [typedRow(2, 1, days[0]!), typedRow(7, 1, '2024-01-03')]);
    assert.equal(expected.size, 7);

    // Spark reads every column as we wrote it; our reader agrees row for row, meta columns included.
    const spark = await hudi.read(table);
    assertMatches(table, spark.rows, expected, true, 'Spark');
    assert.deepEqual(canonicalRows(spark.rows), canonicalRows(await ourRows(table)));

    // A Spark upsert with the bloom index (our footers' bloom filters and key ranges) and the metadata table on.
    const propsBefore = tableProperties(table);
    const updates = [typedRow(3, 5, days[1]!), typedRow(8, 5, '2024-01-03'), typedRow(9, 2, days[1]!), typedRow(10, 1, days[0]!)];
    await hudi.write(table, {
      schema: SPARK_SCHEMA,
      rows: updates,
      options: { ...TYPED_SPARK_OPTIONS, 'hoodie.datasource.write.operation': 'upsert', 'hoodie.index.type': 'BLOOM' },
    });
    const afterSpark = await hudi.read(table);
    const sparkCommit = String(afterSpark.rows.find((row) => row['id'] === 10)!['_hoodie_commit_time']);
    assert.ok(sparkCommit > lastOurs, `Spark's instant ${sparkCommit} follows ours (${lastOurs})`);
    apply(expected, updates, sparkCommit, 'write');
    // No duplicates (assertMatches fails on a repeated key) and Spark's values won.
    assertMatches(table, afterSpark.rows, expected, true, 'Spark after its upsert');
    assert.deepEqual(canonicalRows(afterSpark.rows), canonicalRows(await ourRows(table)), 'our reader after the Spark upsert');

    // The metadata table Spark bootstrapped on our table is sound, by Hudi's own validator.
    assert.ok(existsSync(join(table, '.hoodie/metadata/.hoodie/hoodie.properties')));
    assertOnlyMetadataKeysAdded(propsBefore, tableProperties(table));
    const report = await hudi.validateMetadataTable(table);
    assert.equal(report.ok, true, JSON.stringify(report.errors));
    for (const check of ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups'])
      assert.equal(report.checks[check]?.status, 'passed', check);

    // Our writes keep the metadata table Spark bootstrapped (lib/metadata): the write goes through, and Hudi's validator still passes.
    await ourWrite(table, 'upsert', await parquetFromRows(dir, [typedRow(1, 9, days[1]!)], COLUMNS), TYPED_PROPS);
    const afterOurs = await hudi.validateMetadataTable(table);
    assert.equal(afterOurs.ok, true, JSON.stringify(afterOurs.errors));
    for (const check of ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups'])
      assert.equal(afterOurs.checks[check]?.status, 'passed', `${check} after our write`);
  });

  it('non-partitioned, CLI write: bulk_insert, insert, upsert, delete; Spark reads it exactly, upserts in place (its default index), bootstraps the metadata table', async () => {
    const table = join(dir, 'flat');
    const propsFile = join(dir, 'flat.properties');
    writeFileSync(
      propsFile,
      [
        'hoodie.table.name=flat',
        'hoodie.datasource.write.recordkey.field=id',
        'hoodie.datasource.write.precombine.field=seq',
        'hoodie.index.bloom.num_entries=1000',
      ].join('\n'),
    );
    const expected: Expected = new Map();
    const write = async (operation: 'bulk_insert' | 'insert' | 'upsert' | 'delete', rows: Row[]): Promise<string> => {
      const result = cliWrite(table, operation, await parquetFromRows(dir, rows, COLUMNS), propsFile);
      apply(expected, rows, result.instant, operation === 'delete' ? 'delete' : 'write');
      return result.instant;
    };
    await write(
      'bulk_insert',
      [1, 2, 3, 4].map((id) => typedRow(id, 1, 'x')),
    );
    await write(
      'insert',
      [5, 6].map((id) => typedRow(id, 1, 'y')),
    );
    await write('upsert', [typedRow(2, 3, 'x'), typedRow(7, 1, 'z')]);
    const lastOurs = await write('delete', [typedRow(4, 1, 'x')]);
    const props = tableProperties(table);
    assert.equal(props.get('hoodie.table.keygenerator.class'), 'org.apache.hudi.keygen.NonpartitionedKeyGenerator');
    assert.equal(props.has('hoodie.table.partition.fields'), false);

    const spark = await hudi.read(table);
    assertMatches(table, spark.rows, expected, false, 'Spark');
    assert.deepEqual(canonicalRows(spark.rows), canonicalRows(await ourRows(table)));

    // Spark 0.15's default index on Spark is SIMPLE (HoodieIndexConfig: SIMPLE for the Spark engine), not BLOOM.
    const updates = [typedRow(1, 4, 'x'), typedRow(6, 2, 'y'), typedRow(8, 1, 'w')];
    await hudi.write(table, {
      schema: SPARK_SCHEMA,
      rows: updates,
      options: {
        'hoodie.table.name': 'flat',
        'hoodie.datasource.write.recordkey.field': 'id',
        'hoodie.datasource.write.precombine.field': 'seq',
        'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.NonpartitionedKeyGenerator',
        'hoodie.datasource.write.operation': 'upsert',
      },
    });
    const afterSpark = await hudi.read(table);
    const sparkCommit = String(afterSpark.rows.find((row) => row['id'] === 8)!['_hoodie_commit_time']);
    assert.ok(sparkCommit > lastOurs);
    apply(expected, updates, sparkCommit, 'write');
    assertMatches(table, afterSpark.rows, expected, false, 'Spark after its upsert');
    assert.deepEqual(canonicalRows(afterSpark.rows), canonicalRows(await ourRows(table)), 'our reader after the Spark upsert');

    assertOnlyMetadataKeysAdded(props, tableProperties(table));
    const report = await hudi.validateMetadataTable(table);
    assert.equal(report.ok, true, JSON.stringify(report.errors));
    for (const check of ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups'])
      assert.equal(report.checks[check]?.status, 'passed', check);
  });
});
