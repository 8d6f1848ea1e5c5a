/**
 * lib/parquet/flat-rows.ts: whole files of flat columns decoded in memory, against DuckDB's own scan of the same
 * files — written by DuckDB (codecs, dictionaries, nulls, several row groups) and by Hudi 1.x (its timeline history
 * files) — and its refusals of what it does not read; lib/parquet/flat-writer.ts's files, read back by DuckDB.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { HudiError } from '../../lib/errors.js';
import { readFlatRows } from '../../lib/parquet/flat-rows.js';
import { type FlatWriteColumn, writeFlatRows } from '../../lib/parquet/flat-writer.js';
import { CODEC } from '../../lib/parquet/pages.js';
import { REPO_ROOT } from '../helpers/paths.js';

let workDir: string;
let instance: DuckDBInstance;
let connection: DuckDBConnection;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'parquet-flat-rows-'));
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
});

after(async () => {
  connection.closeSync();
  instance.closeSync();
  await rm(workDir, { recursive: true, force: true });
});

/** DuckDB's rows of a file, each column as text (blobs as hex, doubles as JavaScript prints them), null as null. */
async function duckRows(file: string): Promise<Record<string, string | null>[]> {
  const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
  const columns = described.getRowObjects().map((row) => ({ name: String(row['column_name']), type: String(row['column_type']) }));
  const select = columns
    .map(({ name, type }) => (type === 'BLOB' ? `hex("${name}") AS "${name}"` : type === 'DOUBLE' ? `"${name}"` : `CAST("${name}" AS VARCHAR) AS "${name}"`))
    .join(', ');
  const reader = await connection.runAndReadAll(`SELECT ${select} FROM read_parquet('${file}', file_row_number = true) ORDER BY file_row_number`);
  return reader.getRowObjects().map((row) => Object.fromEntries(columns.map(({ name }) => [name, row[name] === null ? null : String(row[name])])));
}

/** Our rows of a file, in the same text form. */
function ourRows(file: string): Record<string, string | null>[] {
  const rows = readFlatRows(readFileSync(file), file);
  return Array.from({ length: rows.numRows }, (_, index) =>
    Object.fromEntries(
      rows.columns.map((column) => {
        const value = rows.values.get(column.name)![index]!;
        if (value === null) return [column.name, null];
        if (value instanceof Uint8Array)
          return [column.name, column.logicalType === 'STRING' ? Buffer.from(value).toString('utf8') : Buffer.from(value).toString('hex').toUpperCase()];
        return [column.name, String(value)];
      }),
    ),
  );
}

describe('readFlatRows', () => {
  for (const codec of ['uncompressed', 'snappy', 'gzip', 'zstd']) {
    test(`DuckDB files (${codec}, row groups of 100, dictionaries and nulls) read as DuckDB reads them`, async () => {
      const file = join(workDir, `flat-${codec}.parquet`);
      await connection.run(
        `COPY (SELECT i::INTEGER AS n, i::BIGINT * 3000000000 AS big, CASE WHEN i % 7 = 0 THEN NULL ELSE 'v' || (i % 5) END AS s,
                      CASE WHEN i % 3 = 0 THEN NULL ELSE encode('b' || i)::BLOB END AS b, (i / 4.0)::DOUBLE AS d, i % 2 = 0 AS flag
               FROM range(350) t(i))
         TO '${file}' (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE 100)`,
      );
      const ours = ourRows(file);
      assert.equal(ours.length, 350);
      assert.deepEqual(ours, await duckRows(file));
    });
  }

  for (const version of ['1.0.2', '1.1.1']) {
    test(`Hudi ${version}'s timeline history files read as DuckDB reads them`, async () => {
      const folder = join(REPO_ROOT, 'test/fixtures/hudi-1x-history', version, 'history');
      const files = readdirSync(folder).filter((name) => name.endsWith('.parquet'));
      assert.ok(files.length >= 3);
      for (const name of files) {
        const file = join(folder, name);
        const ours = ourRows(file);
        assert.ok(ours.length > 0, name);
        assert.deepEqual(ours, await duckRows(file), name);
      }
    });
  }

  test('a nested column is refused naming it', async () => {
    const file = join(workDir, 'nested.parquet');
    await connection.run(`COPY (SELECT 1 AS id, {'a': 1} AS inner_struct) TO '${file}' (FORMAT parquet)`);
    assert.throws(
      () => readFlatRows(readFileSync(file), file),
      (error: unknown) => error instanceof HudiError && error.problem.includes('inner_struct') && error.location === file,
    );
  });

  test('a cut-short or foreign file is refused naming it', async () => {
    const file = join(workDir, 'whole.parquet');
    await connection.run(`COPY (SELECT range AS id FROM range(10)) TO '${file}' (FORMAT parquet)`);
    const bytes = readFileSync(file);
    for (const broken of [bytes.subarray(0, bytes.length - 1), bytes.subarray(0, 8), Buffer.from('{"not": "parquet"}')]) {
      assert.throws(
        () => readFlatRows(broken, 'broken.parquet'),
        (error: unknown) => error instanceof HudiError && error.location === 'broken.parquet',
      );
    }
  });
});

describe('writeFlatRows', () => {
  for (const [codecName, codec] of [
    ['GZIP', CODEC.GZIP],
    ['SNAPPY', CODEC.SNAPPY],
    ['UNCOMPRESSED', CODEC.UNCOMPRESSED],
  ] as const) {
    test(`a ${codecName} file DuckDB reads as written, and readFlatRows too`, async () => {
      const rows = 37;
      const columns: FlatWriteColumn[] = [
        {
          name: 'name',
          physicalType: 'BYTE_ARRAY',
          optional: true,
          string: true,
          values: Array.from({ length: rows }, (_, i) => (i % 5 === 0 ? null : `näme-${i}`)),
        },
        {
          name: 'blob',
          physicalType: 'BYTE_ARRAY',
          optional: true,
          values: Array.from({ length: rows }, (_, i) => (i % 3 === 1 ? null : new Uint8Array([i, 255 - i, 0]))),
        },
        { name: 'n', physicalType: 'INT32', optional: false, values: Array.from({ length: rows }, (_, i) => i * 1000 - 7) },
        { name: 'big', physicalType: 'INT64', optional: true, values: Array.from({ length: rows }, (_, i) => (i === 4 ? null : i * 3_000_000_000)) },
      ];
      const file = join(workDir, `written-${codecName}.parquet`);
      writeFileSync(file, writeFlatRows(columns, { rootName: 'record', codec, createdBy: 'test', keyValues: new Map([['k', 'v']]) }));
      const expected = Array.from({ length: rows }, (_, i) => ({
        name: i % 5 === 0 ? null : `näme-${i}`,
        blob:
          i % 3 === 1
            ? null
            : Buffer.from([i, 255 - i, 0])
                .toString('hex')
                .toUpperCase(),
        n: String(i * 1000 - 7),
        big: i === 4 ? null : String(i * 3_000_000_000),
      }));
      assert.deepEqual(await duckRows(file), expected);
      assert.deepEqual(ourRows(file), expected);
      assert.equal(readFlatRows(readFileSync(file), file).keyValues.get('k'), 'v');
    });
  }

  test('refuses a null in a required column and columns of different lengths', () => {
    const options = { rootName: 'r', codec: CODEC.GZIP, createdBy: 'test' };
    assert.throws(() => writeFlatRows([{ name: 'n', physicalType: 'INT32', optional: false, values: [1, null] }], options), HudiError);
    assert.throws(
      () =>
        writeFlatRows(
          [
            { name: 'a', physicalType: 'INT32', optional: false, values: [1, 2] },
            { name: 'b', physicalType: 'INT32', optional: false, values: [1] },
          ],
          options,
        ),
      HudiError,
    );
  });
});
