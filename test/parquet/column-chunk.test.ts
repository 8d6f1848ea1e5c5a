/**
 * lib/parquet/column-chunk.ts: the RLE / bit-packed hybrid by hand from the spec, and flat column chunks of files
 * written by DuckDB (pages v1 and v2, every codec, dictionaries, nulls, several row groups) and by Hudi on Spark,
 * decoded here and through scanSortColumns, against what DuckDB's own scan gives for the same files.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine, SortColumnScan } from '../../lib/engine/port.js';
import type { SortValue } from '../../lib/layout/curves.js';
import { type ChunkValue, decodeFlatChunk, rleHybrid, UnsupportedChunkError } from '../../lib/parquet/column-chunk.js';
import { readFooterSummary } from '../../lib/parquet/footer.js';
import { duckdb } from '../helpers/duckdb.js';
import { fixtureTable } from '../helpers/fixtures.js';

let workDir: string;
let engine: ParquetEngine;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'parquet-column-chunk-'));
  engine = await openParquetEngine({ threads: 2 });
});

after(async () => {
  await engine.close();
  await rm(workDir, { recursive: true, force: true });
});

describe('RLE / bit-packed hybrid', () => {
  test('decodes runs and bit-packed groups as Encodings.md lays them out', () => {
    // Width 3: a run of five 6s (header 5 << 1, one value byte), then one bit-packed group of 0..7 (header
    // 1 << 1 | 1; the spec's example bytes 10001000 11000110 11111010).
    const bytes = Uint8Array.from([0x0a, 0x06, 0x03, 0x88, 0xc6, 0xfa]);
    assert.deepEqual([...rleHybrid(bytes, 0, bytes.length, 3, 13)], [6, 6, 6, 6, 6, 0, 1, 2, 3, 4, 5, 6, 7]);
    // A bit-packed group is padded to 8 values: only the ones asked for are kept.
    assert.deepEqual([...rleHybrid(bytes, 2, bytes.length, 3, 4)], [0, 1, 2, 3]);
    // Width 0 (a dictionary of one value): runs without value bytes.
    assert.deepEqual([...rleHybrid(Uint8Array.from([0x08]), 0, 1, 0, 4)], [0, 0, 0, 0]);
    // A run of 200 (a two-byte varint header) of a two-byte value, 300 at width 9.
    assert.deepEqual([...new Set(rleHybrid(Uint8Array.from([0x90, 0x03, 0x2c, 0x01]), 0, 4, 9, 200))], [300]);
    assert.throws(() => rleHybrid(Uint8Array.from([0x0a]), 0, 1, 8, 5), UnsupportedChunkError);
  });
});

/** Every column of the test table, by the SQL that makes it. */
const COLUMNS: Record<string, string> = {
  tiny: '((range % 200) - 100)::TINYINT',
  small: '(range * 7 - 30000)::SMALLINT',
  int: 'CASE WHEN range % 3 = 0 THEN NULL ELSE (range * 104729 - 2000000000)::INTEGER END',
  big: '(range * 1000000007 - 9007199254740993)::BIGINT',
  flt: '(range / 3.0 - 1000)::FLOAT',
  dbl: "CASE WHEN range % 7 = 1 THEN NULL WHEN range % 11 = 0 THEN 'NaN'::DOUBLE ELSE range * -1.5e-3 END",
  str: "CASE WHEN range % 5 = 0 THEN NULL ELSE 'v' || (range % 13) END",
  unique: "'k' || lpad(range::VARCHAR, 6, '0') || '€'",
  day: "DATE '1969-12-25' + (range % 400)::INTEGER",
  ts: "TIMESTAMP '1965-01-01' + to_microseconds(range * 987654321)",
  tsms: "(TIMESTAMP '2024-01-01' + to_milliseconds(range * 1000))::TIMESTAMP_MS",
  flag: 'CASE WHEN range % 4 = 0 THEN NULL ELSE range % 3 = 0 END',
};
const NAMES = Object.keys(COLUMNS);

async function writeFiles(name: string, files: number, rowsPerFile: number, options: string): Promise<string[]> {
  const written: string[] = [];
  for (let index = 0; index < files; index++) {
    const file = join(workDir, `${name}-${index}.parquet`);
    const select = Object.entries(COLUMNS)
      .map(([column, sql]) => `${sql} AS ${column}`)
      .join(', ');
    await duckdb(`COPY (SELECT ${select} FROM range(${index * rowsPerFile}, ${(index + 1) * rowsPerFile})) TO '${file}' (FORMAT parquet, ${options})`);
    written.push(file);
  }
  return written;
}

/** scanSortColumns' values by input row, and how it read them. */
async function scan(files: readonly string[], columns: readonly string[], withChunks: boolean): Promise<{ rows: SortValue[][]; result: SortColumnScan }> {
  const inputFooters = withChunks ? files.map((file) => readFooterSummary(file, { chunks: columns })) : undefined;
  const rows: SortValue[][] = [];
  const result = await engine.scanSortColumns(
    files,
    columns,
    (batch) => {
      batch.inputRows.forEach((row, index) => {
        rows[row] = batch.values.map((values) => values[index]);
      });
    },
    inputFooters === undefined ? {} : { inputFooters },
  );
  return { rows, result };
}

/** Decoded from the pages, and read by DuckDB's scan: the same values, types and column positions. */
async function assertSameAsScan(files: readonly string[], columns: readonly string[], expectFrom: 'pages' | 'scan'): Promise<void> {
  const fromPages = await scan(files, columns, true);
  const scanned = await scan(files, columns, false);
  assert.equal(scanned.result.readFrom, 'scan');
  assert.equal(fromPages.result.readFrom, expectFrom);
  assert.deepEqual(fromPages.result.columns, scanned.result.columns);
  assert.equal(fromPages.result.rowCount, scanned.result.rowCount);
  assert.equal(fromPages.rows.length, scanned.result.rowCount);
  // Longs and timestamps may be numbers (while safe integers) or bigints, as the curves take either: compared exactly.
  const integral = scanned.result.columns.map((column) => column.type === 'long' || column.type === 'timestamp');
  const exact = (values: SortValue[] | undefined): SortValue[] | undefined =>
    values?.map((value, column) => (integral[column] && typeof value === 'number' ? BigInt(value) : value));
  for (let row = 0; row < scanned.rows.length; row++) assert.deepEqual(exact(fromPages.rows[row]), exact(scanned.rows[row]), `row ${row}`);
}

describe('flat column chunks', () => {
  test('DuckDB pages v1 under every codec, with dictionaries, nulls and several row groups, decode as DuckDB scans them', async () => {
    for (const codec of ['snappy', 'gzip', 'zstd', 'uncompressed']) {
      const files = await writeFiles(`v1-${codec}`, 3, 2500, `COMPRESSION ${codec}, ROW_GROUP_SIZE 1000, PARQUET_VERSION v1`);
      const footer = readFooterSummary(files[0]!, { chunks: NAMES });
      assert.ok((footer.chunks?.get('str')?.length ?? 0) > 1, 'several row groups');
      await assertSameAsScan(files, NAMES, 'pages');
    }
    // Longs past 2^53 stay bigints; the others are exact numbers.
    const read = await scan(await writeFiles('big', 3, 2500, 'PARQUET_VERSION v1'), ['big'], true);
    assert.equal(read.result.readFrom, 'pages');
    const big = read.rows.map((row) => row[0]);
    assert.ok(big.some((value) => typeof value === 'bigint' && (value < -(2n ** 53n) || value > 2n ** 53n)));
    assert.ok(big.some((value) => typeof value === 'number'));
    assert.ok(big.every((value) => typeof value === 'bigint' || Number.isSafeInteger(value)));
  });

  test('a chunk decodes to one value per row, nulls in place', async () => {
    const [file] = await writeFiles('one', 1, 50, 'PARQUET_VERSION v1');
    const footer = readFooterSummary(file!, { chunks: ['int', 'str'] });
    const values: ChunkValue[] = [];
    const { readFileSync } = await import('node:fs');
    const bytes = readFileSync(file!);
    for (const chunk of footer.chunks!.get('int')!) {
      decodeFlatChunk(bytes.subarray(chunk.offset, chunk.offset + chunk.length), chunk, { physicalType: 'INT32', optional: true }, values);
    }
    assert.equal(values.length, 50);
    assert.deepEqual(values.slice(0, 4), [null, 104729 - 2000000000, 2 * 104729 - 2000000000, null]);
  });

  test('pages v2 decode as DuckDB scans them, or are left to the scan where their encodings are not read here', async () => {
    const files = await writeFiles('v2', 2, 1500, 'COMPRESSION snappy, ROW_GROUP_SIZE 1000, PARQUET_VERSION v2');
    // DuckDB's v2 pages use DELTA encodings for some of these types: whichever way they are read, the values agree.
    for (const column of NAMES) {
      const fromPages = await scan(files, [column], true);
      const scanned = await scan(files, [column], false);
      assert.deepEqual(fromPages.rows, scanned.rows, column);
    }
    // Strings with a dictionary are dictionary-encoded in v2 pages too: those are decoded here.
    await assertSameAsScan(files, ['str'], 'pages');
  });

  test("Hudi's base files written by Spark decode as DuckDB scans them", async () => {
    const table = fixtureTable('v6_complexkeygen_hivestyle', workDir);
    const files = readdirSync(table, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.parquet'))
      .map((file) => join(table, file))
      .sort();
    assert.ok(files.length > 1);
    const schemas = new Set(files.map((file) => JSON.stringify(readFooterSummary(file).columns)));
    assert.equal(schemas.size, 1, 'one schema, so the pages can be read');
    const leaves = readFooterSummary(files[0]!)
      .columns.filter((column) => column.path.length === 1 && column.numChildren === 0)
      .map((column) => column.name);
    const flat = [
      '_hoodie_record_key',
      '_hoodie_commit_time',
      'id',
      'name',
      'isActive',
      'shortField',
      'longField',
      'floatField',
      'doubleField',
      'dateField',
      'timestampField',
      'byteField',
    ];
    assert.deepEqual(
      flat.filter((name) => !leaves.includes(name)),
      [],
    );
    await assertSameAsScan(files, flat, 'pages');
  });

  test('columns of a type left to DuckDB, and inputs of differing schemas, are scanned', async () => {
    const decimal = join(workDir, 'decimal.parquet');
    await duckdb(`COPY (SELECT (range / 4)::DECIMAL(10,2) AS amount, range::INTEGER AS id FROM range(100)) TO '${decimal}' (FORMAT parquet)`);
    await assertSameAsScan([decimal], ['amount', 'id'], 'scan');
    const wider = join(workDir, 'wider.parquet');
    await duckdb(`COPY (SELECT range::INTEGER AS id, 'x' AS extra FROM range(100, 200)) TO '${wider}' (FORMAT parquet)`);
    await assertSameAsScan([decimal, wider], ['id'], 'scan');
  });
});
