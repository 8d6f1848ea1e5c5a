/**
 * lib/parquet/binary-copy.ts on its own: files written by DuckDB (several codecs, nested columns, several row groups)
 * copied into new files without decoding their pages, then read back by pyarrow and DuckDB. Also the refusals
 * (Hudi 1.1's preconditions), schema evolution's null columns, recompression to another codec, and how row groups
 * are cut into output files.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { type BinaryCopyOptions, type CopyInput, planBinaryCopy, planCopyOutputs, readCopyInput, writeCopiedFile } from '../../lib/parquet/binary-copy.js';
import { readFooterSummary } from '../../lib/parquet/footer.js';
import { CODEC } from '../../lib/parquet/pages.js';
import { topLevelFields } from '../../lib/parquet/schema.js';
import { planTypeRepairs, repairParquetTypes } from '../../lib/parquet/type-repair.js';
import { tempDir } from '../helpers/fixtures.js';
import { hudiToolchain } from '../helpers/hudi.js';
import { pyarrowFileInfo, pyarrowRead } from '../helpers/oracle.js';

let instance: DuckDBInstance;
let connection: DuckDBConnection;
let dir: string;

const OPTIONS: BinaryCopyOptions = { fileNameColumn: '_hoodie_file_name', schemaEvolution: false, minRowGroupBytes: 0, schemaFrom: 0 };

const COLUMNS = `'k' || i AS _hoodie_record_key, 'old-' || (i % 3) AS _hoodie_file_name, i::BIGINT AS id,
  CASE WHEN i % 5 = 0 THEN NULL ELSE 'name ' || i END AS name, i * 0.5 AS score,
  {'a': i::INTEGER, 'b': [i, i + 1]} AS nested, [i::VARCHAR, NULL] AS tags, MAP {'m' || (i % 4): i::INTEGER} AS props`;

async function write(name: string, first: number, count: number, options: { codec?: string; rowGroupSize?: number; columns?: string } = {}): Promise<string> {
  const file = join(dir, name);
  await connection.run(
    `COPY (SELECT ${options.columns ?? COLUMNS} FROM range(${first}, ${first + count}) AS t(i) ORDER BY i)
     TO '${file}' (FORMAT parquet, COMPRESSION ${options.codec ?? 'snappy'}, ROW_GROUP_SIZE ${options.rowGroupSize ?? 100000})`,
  );
  return file;
}

/** Rows as pyarrow reads them, as JSON strings in file order. */
function rowsOf(files: readonly string[]): string[] {
  return pyarrowRead(files).map((row) => JSON.stringify(row));
}

/** Rows of the inputs with the file name column set to `fileName`: what a copy must read as. */
function expectedRows(inputs: readonly string[], fileName: string): string[] {
  return pyarrowRead(inputs).map((row) => JSON.stringify({ ...row, _hoodie_file_name: fileName }));
}

async function copy(inputs: readonly CopyInput[], file: string, options: Partial<BinaryCopyOptions> & { codec?: number } = {}): Promise<string> {
  const plan = planBinaryCopy(inputs, { ...OPTIONS, ...options });
  assert.equal(plan.refusal, undefined);
  const fileName = file.slice(file.lastIndexOf('/') + 1);
  const rowGroups = inputs.flatMap((input, inputIndex) => input.rowGroups.map((_, index) => [inputIndex, index] as const));
  const result = await writeCopiedFile({
    file,
    inputs,
    layout: plan.layout!,
    rowGroups,
    fileName,
    keyValues: Promise.resolve({ note: 'copied' }),
    ...(options.codec === undefined ? {} : { codec: options.codec }),
  });
  assert.equal(
    result.rows,
    inputs.reduce((total, input) => total + input.numRows, 0),
  );
  assert.equal(result.bytes, statSync(file).size);
  return file;
}

/** Per row group, per column: pyarrow's compression name. */
function codecsOf(file: string): string[][] {
  const script = `
import json, sys
import pyarrow.parquet as pq
meta = pq.read_metadata(sys.argv[1])
print(json.dumps([[meta.row_group(g).column(c).compression for c in range(meta.num_columns)] for g in range(meta.num_row_groups)]))
`;
  return JSON.parse(execFileSync(hudiToolchain().python, ['-c', script, file], { encoding: 'utf8' })) as string[][];
}

before(async () => {
  dir = tempDir('parquet-binary-copy-');
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
});

after(() => {
  connection.closeSync();
  instance.closeSync();
});

describe('binary copy of Parquet row groups', () => {
  it('copies files of several codecs and row groups: pyarrow and DuckDB read the rows, the file name column renamed', async () => {
    const files = [
      // DuckDB cuts row groups at multiples of 2,048 rows.
      await write('a.parquet', 0, 6000, { codec: 'snappy', rowGroupSize: 2048 }),
      await write('b.parquet', 6000, 500, { codec: 'zstd' }),
      await write('c.parquet', 6500, 6000, { codec: 'gzip', rowGroupSize: 2048 }),
      await write('d.parquet', 12500, 10, { codec: 'uncompressed' }),
    ];
    const inputs = await Promise.all(files.map((file) => readCopyInput(file)));
    const counts = inputs.map((input) => input.rowGroups.length);
    assert.ok(counts[0]! > 1 && counts[2]! > 1, 'inputs of several row groups');
    const out = await copy(inputs, join(dir, 'copied.parquet'));
    assert.deepEqual(rowsOf([out]), expectedRows(files, 'copied.parquet'));
    const reader = await connection.runAndReadAll(
      `SELECT count(*), count(DISTINCT _hoodie_file_name), min(_hoodie_file_name), sum(nested.a), sum(len(tags)) FROM '${out}'`,
    );
    assert.deepEqual(reader.getRows()[0]!.map(String), ['12510', '1', 'copied.parquet', String((12509 * 12510) / 2), String(2 * 12510)]);
    // Row group statistics of the renamed column describe the new value: a filter on it finds every row.
    const filtered = await connection.runAndReadAll(`SELECT count(*) FROM '${out}' WHERE _hoodie_file_name = 'copied.parquet'`);
    assert.equal(String(filtered.getRows()[0]![0]), '12510');
    const expectedCodecs = ['SNAPPY', 'ZSTD', 'GZIP', 'UNCOMPRESSED'].flatMap((codec, index) => Array<string>(counts[index]!).fill(codec));
    assert.deepEqual(
      codecsOf(out).map((group) => group[2]),
      expectedCodecs,
      'chunks keep their codec',
    );
    // And a copy of the copy: our own footers read back for copying.
    const again = await copy([await readCopyInput(out)], join(dir, 'again.parquet'));
    assert.deepEqual(rowsOf([again]), expectedRows(files, 'again.parquet'));
  });

  it("copies files with and without DuckDB's INTEGER(64, signed) annotation together, into a file without it", async () => {
    const annotated = await write('annotated.parquet', 0, 300);
    const plain = await write('plain.parquet', 300, 300);
    const repairs = planTypeRepairs(new Map(), topLevelFields(readFooterSummary(plain).columns));
    assert.ok(repairs.some((repair) => repair.column === 'id' && repair.plainInteger === true));
    await repairParquetTypes(plain, repairs);
    const schemas = pyarrowFileInfo([annotated, plain]).map((info) => info.parquet_schema);
    assert.match(schemas[0]!, /int64 field_id=-1 id \(Int\(bitWidth=64, isSigned=true\)\)/);
    assert.match(schemas[1]!, /int64 field_id=-1 id;/);
    const out = await copy(await Promise.all([annotated, plain].map((file) => readCopyInput(file))), join(dir, 'integers.parquet'));
    assert.deepEqual(rowsOf([out]), expectedRows([annotated, plain], 'integers.parquet'));
    const [copied] = pyarrowFileInfo([out]);
    assert.equal(copied!.parquet_schema.replace(/^<[^\n]*\n/, ''), schemas[1]!.replace(/^<[^\n]*\n/, ''));
    assert.doesNotMatch(copied!.parquet_schema, /bitWidth=(32|64), isSigned=true/);
  });

  it('recompresses chunks of another codec when asked; the rest stay byte for byte', async () => {
    const files = [await write('g.parquet', 0, 5000, { codec: 'gzip', rowGroupSize: 2048 }), await write('s.parquet', 5000, 300, { codec: 'snappy' })];
    const inputs = await Promise.all(files.map((file) => readCopyInput(file)));
    const out = await copy(inputs, join(dir, 'snappy.parquet'), { codec: CODEC.SNAPPY });
    assert.deepEqual(rowsOf([out]), expectedRows(files, 'snappy.parquet'));
    assert.ok(
      codecsOf(out)
        .flat()
        .every((codec) => codec === 'SNAPPY'),
    );
    const zstd = await copy(inputs, join(dir, 'zstd.parquet'), { codec: CODEC.ZSTD });
    assert.deepEqual(rowsOf([zstd]), expectedRows(files, 'zstd.parquet'));
    assert.ok(
      codecsOf(zstd)
        .flat()
        .every((codec) => codec === 'ZSTD'),
    );
  });

  it('refuses what Hudi 1.1 refuses, naming the file: another schema, decimals stored as integers, no file name column', async () => {
    const base = await readCopyInput(await write('base.parquet', 0, 10));
    const other = await readCopyInput(await write('other.parquet', 10, 10, { columns: `${COLUMNS}, i AS extra` }));
    assert.match(
      planBinaryCopy([base, other], OPTIONS).refusal!,
      /other\.parquet and .*base\.parquet have different Parquet schemas \(extra is missing from the second\).*schema\.evolution\.enable/,
    );
    const decimal = await readCopyInput(await write('decimal.parquet', 0, 10, { columns: `${COLUMNS}, (i / 100)::DECIMAL(10, 2) AS price` }));
    assert.match(planBinaryCopy([decimal], OPTIONS).refusal!, /decimal\.parquet: column price is a decimal stored as INT64/);
    const unnamed = await readCopyInput(await write('unnamed.parquet', 0, 10, { columns: 'i AS id' }));
    assert.match(planBinaryCopy([unnamed], OPTIONS).refusal!, /no top-level text column _hoodie_file_name/);
    assert.match(planBinaryCopy([base], { ...OPTIONS, minRowGroupBytes: 1 << 30 }).refusal!, /average .* below 1024\.0 MiB/);
  });

  it('schema evolution: an older file without a column of the newest gets nulls for it; dropped columns refuse', async () => {
    const older = await write('older.parquet', 0, 50);
    const newer = await write('newer.parquet', 50, 50, { columns: `${COLUMNS}, 'x' || i AS added, {'p': i} AS added_struct` });
    const inputs = await Promise.all([older, newer].map((file) => readCopyInput(file)));
    assert.match(planBinaryCopy(inputs, { ...OPTIONS, schemaFrom: 1 }).refusal!, /different Parquet schemas/);
    const out = await copy(inputs, join(dir, 'evolved.parquet'), { schemaEvolution: true, schemaFrom: 1 });
    const rows = pyarrowRead([out]);
    assert.equal(rows.length, 100);
    assert.ok(rows.slice(0, 50).every((row) => row['added'] === null && row['added_struct'] === null));
    assert.deepEqual(
      rows.slice(50).map((row) => row['added']),
      Array.from({ length: 50 }, (_, index) => `x${50 + index}`),
    );
    assert.match(planBinaryCopy(inputs, { ...OPTIONS, schemaEvolution: true, schemaFrom: 0 }).refusal!, /has column added, which the newest file .* does not/);
  });

  it('cuts row groups into files of at most the target size, evenly, at least as many as asked', () => {
    assert.deepEqual(planCopyOutputs([10, 10, 10, 10], 25), [
      [0, 2],
      [2, 4],
    ]);
    assert.deepEqual(
      planCopyOutputs([10, 10, 10, 10, 10, 10], 45),
      [
        [0, 3],
        [3, 6],
      ],
      'two even files rather than 4 + 2',
    );
    assert.deepEqual(
      planCopyOutputs([50, 5, 5], 20),
      [
        [0, 1],
        [1, 3],
      ],
      'a row group above the target is a file of its own',
    );
    assert.deepEqual(planCopyOutputs([10, 10, 10], 1000, 3), [
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    // The plan's three outputs whatever the bytes: equal row groups gave two files of two (the interop flake).
    for (const sizes of [
      [10, 10, 10, 10],
      [3400, 3410, 3405, 3402],
      [3410, 3400, 3402, 3405],
      [3400, 3401, 3409, 3408],
    ]) {
      const runs = planCopyOutputs(sizes, 600_000, 3);
      assert.equal(runs.length, 3, JSON.stringify({ sizes, runs }));
      assert.deepEqual(
        runs.flat().filter((_, i) => i % 2 === 0),
        [0, runs[0]![1], runs[1]![1]],
        'contiguous runs from the first row group',
      );
      assert.equal(runs.at(-1)![1], sizes.length, 'to the last');
    }
    assert.deepEqual(planCopyOutputs([10, 10, 10, 10], 1000, 3), [
      [0, 2],
      [2, 3],
      [3, 4],
    ]);
    assert.deepEqual(planCopyOutputs([10], 1000, 3), [[0, 1]]);
    assert.deepEqual(planCopyOutputs([], 1000), []);
  });
});
