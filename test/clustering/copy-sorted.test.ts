/**
 * The engine pieces the clustering executor relies on: copySorted with an explicit row order (rowRanks), replaced
 * columns and footers computed from a column; scanSortColumns; sampleRows.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { samplePositions } from '../../lib/engine/input-order.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { CopySortedResult, OutputRange, ParquetEngine, SortColumnBatch, SortColumnDescription } from '../../lib/engine/port.js';
import { HudiError } from '../../lib/errors.js';
import { duckdb } from '../helpers/duckdb.js';

let workDir: string;
let engine: ParquetEngine;
let first: string;
let second: string;

function rowsSql(from: number, count: number): string {
  return `SELECT 'k' || lpad(range::VARCHAR, 4, '0') AS _hoodie_record_key, 'old' AS _hoodie_file_name, 'c_' || range AS _hoodie_commit_seqno,
                 range::INTEGER AS id, (DATE '2000-01-01' + (range * 7 % 11)::INTEGER) AS day,
                 (TIMESTAMP '2024-01-01' + to_milliseconds(range * 1000))::TIMESTAMP_MS AS ts,
                 (range / 4)::DECIMAL(10,2) AS amount, CASE WHEN range % 5 = 0 THEN NULL ELSE 'n' || range END AS label,
                 [range] AS nested
          FROM range(${from}, ${from + count})`;
}

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'clustering-copy-sorted-'));
  first = join(workDir, 'a.parquet');
  second = join(workDir, 'b.parquet');
  await duckdb(`COPY (${rowsSql(0, 6)}) TO '${first}' (FORMAT parquet)`);
  await duckdb(`COPY (${rowsSql(6, 4)}) TO '${second}' (FORMAT parquet)`);
  engine = await openParquetEngine({ threads: 2 });
});

after(async () => {
  await engine.close();
  await rm(workDir, { recursive: true, force: true });
});

describe('copySorted with rowRanks', () => {
  test('writes rows in the given rank order, input order being inputs as listed then rows in file order', async () => {
    // Input rows 0..9 (a: ids 0..5, b: ids 6..9); rank = 9 - input row reverses them.
    const ranks = Uint32Array.from({ length: 10 }, (_, row) => 9 - row);
    const outputs = [
      { file: join(workDir, 'r1.parquet'), rowStart: 0, rowCount: 4, keyValues: {} },
      { file: join(workDir, 'r2.parquet'), rowStart: 4, rowCount: 6, keyValues: {} },
    ];
    const result = await engine.copySorted({ inputs: [first, second], rowRanks: ranks, outputs, rowGroupSize: 3 });
    assert.equal(result.totalInputRows, 10);
    assert.deepEqual(
      (await engine.readRows([outputs[0]!.file])).rows.map((row) => row.id),
      [9, 8, 7, 6],
    );
    assert.deepEqual(
      (await engine.readRows([outputs[1]!.file])).rows.map((row) => row.id),
      [5, 4, 3, 2, 1, 0],
    );
    // Listing the inputs the other way round changes which rows the ranks address.
    await engine.copySorted({ inputs: [second, first], rowRanks: ranks, outputs: [{ ...outputs[0]!, rowCount: 10 }], rowGroupSize: 3 });
    assert.deepEqual(
      (await engine.readRows([outputs[0]!.file])).rows.map((row) => row.id),
      [5, 4, 3, 2, 1, 0, 9, 8, 7, 6],
    );
  });

  test('keeps the input order without orderBy or rowRanks, and breaks orderBy ties by input position', async () => {
    const file = join(workDir, 'plain.parquet');
    await engine.copySorted({ inputs: [second, first], outputs: [{ file, rowStart: 0, rowCount: 10, keyValues: {} }], rowGroupSize: 4 });
    assert.deepEqual(
      (await engine.readRows([file])).rows.map((row) => row.id),
      [6, 7, 8, 9, 0, 1, 2, 3, 4, 5],
    );
    await engine.copySorted({
      inputs: [second, first],
      orderBy: [{ sqlExpression: '1' }],
      outputs: [{ file, rowStart: 0, rowCount: 10, keyValues: {} }],
      rowGroupSize: 4,
    });
    assert.deepEqual(
      (await engine.readRows([file])).rows.map((row) => row.id),
      [6, 7, 8, 9, 0, 1, 2, 3, 4, 5],
    );
  });

  test('refuses ranks that are not a permutation of the input rows, and orderBy with rowRanks', async () => {
    const output = [{ file: join(workDir, 'bad.parquet'), rowStart: 0, rowCount: 10, keyValues: {} }];
    await assert.rejects(
      engine.copySorted({ inputs: [first, second], rowRanks: new Uint32Array(9), outputs: output, rowGroupSize: 4 }),
      /rowRanks has 9 entries for 10 input rows/,
    );
    const repeated = Uint32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 8]);
    await assert.rejects(engine.copySorted({ inputs: [first, second], rowRanks: repeated, outputs: output, rowGroupSize: 4 }), /not a permutation/);
    await assert.rejects(
      engine.copySorted({
        inputs: [first, second],
        orderBy: ['id'],
        rowRanks: Uint32Array.from({ length: 10 }, (_, i) => i),
        outputs: output,
        rowGroupSize: 4,
      }),
      /orderBy or rowRanks, not both/,
    );
  });
});

describe('copySorted output columns and footers', () => {
  test('replaces a column with a constant and another with a per-file sequence; footers come from a column of each range', async () => {
    const outputs: OutputRange[] = [
      {
        file: join(workDir, 'c1.parquet'),
        rowStart: 0,
        rowCount: 3,
        keyValues: { fixed: 'yes', count: 'overridden' },
        constantColumns: { _hoodie_file_name: 'c1.parquet' },
        sequenceColumns: { _hoodie_commit_seqno: 'T_0_' },
      },
      { file: join(workDir, 'c2.parquet'), rowStart: 3, rowCount: 7, keyValues: {}, constantColumns: { _hoodie_file_name: 'c2.parquet' } },
    ];
    const seen: string[][] = [];
    await engine.copySorted({
      inputs: [first, second],
      orderBy: [{ column: 'id', descending: true }],
      outputs,
      rowGroupSize: 4,
      footerFromColumn: {
        column: '_hoodie_record_key',
        build(values, output) {
          const keys = [...values].sort();
          seen.push(keys);
          return { count: String(keys.length), min: keys[0] ?? '', file: output.file.slice(-10) };
        },
      },
    });
    const firstRows = (await engine.readRows([outputs[0]!.file])).rows;
    assert.deepEqual(
      firstRows.map((row) => [row.id, row._hoodie_file_name, row._hoodie_commit_seqno]),
      [
        [9, 'c1.parquet', 'T_0_0'],
        [8, 'c1.parquet', 'T_0_1'],
        [7, 'c1.parquet', 'T_0_2'],
      ],
    );
    const secondRows = (await engine.readRows([outputs[1]!.file])).rows;
    assert.ok(secondRows.every((row) => row._hoodie_file_name === 'c2.parquet'));
    assert.deepEqual(
      secondRows.map((row) => row._hoodie_commit_seqno),
      ['c_6', 'c_5', 'c_4', 'c_3', 'c_2', 'c_1', 'c_0'],
    );
    assert.deepEqual(seen, [
      ['k0007', 'k0008', 'k0009'],
      ['k0000', 'k0001', 'k0002', 'k0003', 'k0004', 'k0005', 'k0006'],
    ]);
    assert.deepEqual((await engine.readFooter(outputs[0]!.file)).keyValues, { fixed: 'yes', count: '3', min: 'k0007', file: 'c1.parquet' });
    assert.deepEqual((await engine.readFooter(outputs[1]!.file)).keyValues, { count: '7', min: 'k0000', file: 'c2.parquet' });
  });

  test('one output of every row: written in one sorted COPY, the footer built alongside and patched in', async () => {
    const file = join(workDir, 'single.parquet');
    let seen: string[] = [];
    const result = await engine.copySorted({
      inputs: [first, second],
      orderBy: [{ column: 'id', descending: true }],
      outputs: [{ file, rowStart: 0, rowCount: 10, keyValues: { given: 'yes' }, constantColumns: { _hoodie_file_name: 'renamed' } }],
      rowGroupSize: 4,
      footerFromColumn: { column: '_hoodie_record_key', build: (values) => ((seen = [...values].sort()), { count: String(seen.length), first: seen[0]! }) },
    });
    assert.equal(result.outputs[0]!.rowCount, 10);
    const { rows } = await engine.readRows([file]);
    assert.deepEqual(
      rows.map((row) => row.id),
      [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    );
    assert.ok(rows.every((row) => row._hoodie_file_name === 'renamed'));
    assert.equal(seen.length, 10);
    const footer = await engine.readFooter(file);
    assert.deepEqual(footer.keyValues, { given: 'yes', count: '10', first: seen[0] });
    assert.equal(footer.numRows, 10);
  });

  test('reads footer values holding NUL characters value by value', async () => {
    const input = join(workDir, 'nul.parquet');
    await duckdb(`COPY (SELECT 'a' || chr(0) || range AS k, range AS id FROM range(3) UNION ALL SELECT 'plain', 9) TO '${input}' (FORMAT parquet)`);
    let keys: string[] = [];
    await engine.copySorted({
      inputs: [input],
      outputs: [{ file: join(workDir, 'nul-out.parquet'), rowStart: 0, rowCount: 4, keyValues: {} }],
      rowGroupSize: 4,
      footerFromColumn: { column: 'k', build: (values) => ((keys = [...values].sort()), {}) },
    });
    assert.deepEqual(keys, ['a\u00000', 'a\u00001', 'a\u00002', 'plain']);
  });

  test('refuses to replace a column that is missing or not text', async () => {
    const output = (extra: object) => [{ file: join(workDir, 'x.parquet'), rowStart: 0, rowCount: 10, keyValues: {}, ...extra }];
    await assert.rejects(
      engine.copySorted({ inputs: [first, second], outputs: output({ constantColumns: { missing: 'x' } }), rowGroupSize: 4 }),
      /constant column "missing" is not a column/,
    );
    await assert.rejects(
      engine.copySorted({ inputs: [first, second], outputs: output({ sequenceColumns: { id: 'x' } }), rowGroupSize: 4 }),
      /sequence column "id" is of type INTEGER, not VARCHAR/,
    );
    await assert.rejects(
      engine.copySorted({ inputs: [first, second], outputs: output({}), rowGroupSize: 4, footerFromColumn: { column: 'amount', build: () => ({}) } }),
      (error: unknown) => error instanceof HudiError && /footer column "amount"/.test(error.message),
    );
  });
});

describe('scanSortColumns', () => {
  test('streams values in curves.ts form with each row’s input position', async () => {
    const batches: SortColumnBatch[] = [];
    let described: readonly SortColumnDescription[] = [];
    const result = await engine.scanSortColumns([second, first], ['day', 'ts', 'amount', 'label', 'id'], (batch, columns) => {
      batches.push(batch);
      described = columns;
    });
    assert.equal(result.rowCount, 10);
    assert.deepEqual(result.columns, described);
    assert.deepEqual(
      result.columns.map((column) => [column.name, column.schemaPosition, column.type]),
      [
        ['day', 4, 'date'],
        ['ts', 5, 'timestamp'],
        ['amount', 6, { kind: 'decimal', scale: 2 }],
        ['label', 7, 'string'],
        ['id', 3, 'int'],
      ],
    );
    // Gather by input position: second's rows (ids 6..9) come first, then first's (0..5).
    const byInputRow = new Map<number, unknown[]>();
    for (const batch of batches)
      batch.inputRows.forEach((inputRow, index) => {
        byInputRow.set(
          inputRow,
          batch.values.map((column) => column[index]),
        );
      });
    assert.deepEqual(
      [...byInputRow.keys()].sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.deepEqual(byInputRow.get(0), [Math.round(Date.UTC(2000, 0, 1 + ((6 * 7) % 11)) / 86_400_000), 1_704_067_206_000_000n, 150n, 'n6', 6]);
    assert.deepEqual(byInputRow.get(4), [10957, 1_704_067_200_000_000n, 0n, null, 0]);
  });

  test('refuses a column a curve cannot order by', async () => {
    await assert.rejects(
      engine.scanSortColumns([first], ['nested'], () => undefined),
      /sort column "nested" has type BIGINT\[\]/,
    );
    await assert.rejects(
      engine.scanSortColumns([first], ['nope'], () => undefined),
      /no sort column "nope"/,
    );
  });
});

describe('copySorted: several outputs from one sort', () => {
  /** Rows without a decimal (DuckDB stores small decimals as integers, which binary copy refuses). */
  const plainRowsSql = (from: number, count: number): string =>
    `SELECT 'k' || lpad(range::VARCHAR, 5, '0') AS _hoodie_record_key, 'old' AS _hoodie_file_name, 'c_' || range AS _hoodie_commit_seqno,
            range::INTEGER AS id, (DATE '2000-01-01' + (range * 7 % 11)::INTEGER) AS day,
            (TIMESTAMP '2024-01-01' + to_milliseconds(range * 1000))::TIMESTAMP_MS AS ts,
            CASE WHEN range % 5 = 0 THEN NULL ELSE 'n' || range END AS label, [range, range + 1] AS nested
     FROM range(${from}, ${from + count})`;
  const rangesOf = (name: string, bounds: readonly number[]): OutputRange[] =>
    bounds.slice(0, -1).map((rowStart, index) => ({
      file: join(workDir, `${name}-${index}.parquet`),
      rowStart,
      rowCount: bounds[index + 1]! - rowStart,
      keyValues: { output: String(index) },
      constantColumns: { _hoodie_file_name: `${name}-${index}` },
    }));
  const keysBuilt = (seen: Map<string, string[]>) => ({
    column: '_hoodie_record_key',
    build(values: Iterable<string>, output: OutputRange) {
      const keys = [...values].sort();
      seen.set(output.file, keys);
      return { count: String(keys.length), min: keys[0]! };
    },
  });

  /** Each output holds its range of `expected` with its own file name, its footer built from its own keys, its types kept. */
  const assertOutputsInOrder = async (
    result: CopySortedResult,
    outputs: readonly OutputRange[],
    expected: readonly Record<string, unknown>[],
    name: string,
    seen: ReadonlyMap<string, string[]>,
  ): Promise<void> => {
    let at = 0;
    for (const [index, output] of outputs.entries()) {
      const { rows } = await engine.readRows([output.file]);
      const keys = rows.map((row) => String(row._hoodie_record_key)).sort();
      assert.equal(result.outputs[index]!.rowCount, output.rowCount);
      assert.deepEqual(
        rows,
        expected.slice(at, at + output.rowCount).map((row) => ({ ...row, _hoodie_file_name: `${name}-${index}` })),
      );
      assert.deepEqual(seen.get(output.file), keys);
      assert.deepEqual((await engine.readFooter(output.file)).keyValues, { output: String(index), count: String(keys.length), min: keys[0] });
      assert.deepEqual(
        result.outputs[index]!.deviations.filter((deviation) => !deviation.compatible),
        [],
      );
      at += output.rowCount;
    }
  };

  test('a few outputs are range-partitioned by the sort key: each its range of the order (ties by input position), its name, its keys', async () => {
    const a = join(workDir, 'keyed-a.parquet');
    const b = join(workDir, 'keyed-b.parquet');
    await duckdb(`COPY (${plainRowsSql(0, 1500)}) TO '${a}' (FORMAT parquet)`);
    await duckdb(`COPY (${plainRowsSql(1500, 1000)}) TO '${b}' (FORMAT parquet)`);
    // 11 days and labels with NULLs: most rows tie on the keys, so the input position decides, across both files.
    const outputs = rangesOf('keyed', [0, 917, 918, 2500]);
    const seen = new Map<string, string[]>();
    const result = await engine.copySorted({
      inputs: [a, b],
      orderBy: [{ column: 'day', descending: true }, 'label'],
      outputs,
      rowGroupSize: 100,
      footerFromColumn: keysBuilt(seen),
    });
    assert.deepEqual(result.split, { method: 'key-ranges', outputs: 3 });
    const inputRows = (await engine.readRows([a, b])).rows;
    const position = new Map(inputRows.map((row, index) => [row.id, index]));
    const text = (value: unknown): string | undefined => (value === null ? undefined : String(value));
    const expected = [...inputRows].sort((x, y) => {
      const days = String(y.day).localeCompare(String(x.day));
      if (days !== 0) return days;
      const [lx, ly] = [text(x.label), text(y.label)];
      if (lx !== ly) return lx === undefined ? -1 : ly === undefined ? 1 : lx < ly ? -1 : 1;
      return position.get(x.id)! - position.get(y.id)!;
    });
    await assertOutputsInOrder(result, outputs, expected, 'keyed', seen);
  });

  test('sorted once, cut at row groups and inside them: every output its range of the order, its name, its keys', async () => {
    const a = join(workDir, 'split-a.parquet');
    const b = join(workDir, 'split-b.parquet');
    await duckdb(`COPY (${plainRowsSql(0, 3000)}) TO '${a}' (FORMAT parquet)`);
    await duckdb(`COPY (${plainRowsSql(3000, 2000)}) TO '${b}' (FORMAT parquet)`);
    // Outputs ordered by columns, most of several row groups: one ordered file, cut.
    const outputs = rangesOf('split', [0, 700, 1234, 2000, 3000, 5000]);
    const seen = new Map<string, string[]>();
    const result = await engine.copySorted({
      inputs: [a, b],
      orderBy: [{ column: 'id', descending: true }],
      outputs,
      rowGroupSize: 100,
      footerFromColumn: keysBuilt(seen),
    });
    assert.equal(result.split?.method, 'copy');
    assert.ok(result.split.method === 'copy' && result.split.pieces > 0, 'a boundary inside a row group is split');
    const expected = (await engine.readRows([a, b])).rows.sort((x, y) => Number(y.id) - Number(x.id));
    await assertOutputsInOrder(result, outputs, expected, 'split', seen);
  });

  test('two outputs ordered by columns are cut from one ordered file, where ranked rows are range-partitioned', async () => {
    const a = join(workDir, 'two-a.parquet');
    await duckdb(`COPY (${plainRowsSql(0, 9000)}) TO '${a}' (FORMAT parquet)`);
    const outputs = rangesOf('two', [0, 4500, 9000]);
    const seen = new Map<string, string[]>();
    const result = await engine.copySorted({ inputs: [a], orderBy: ['label', 'id'], outputs, rowGroupSize: 100, footerFromColumn: keysBuilt(seen) });
    assert.equal(result.split?.method, 'copy');
    // The ordered file became the first output, its leading row groups (DuckDB writes 2,048 rows at least) in place.
    assert.ok(result.split.method === 'copy' && result.split.inPlace >= 2, `${JSON.stringify(result.split)}`);
    // NULL labels first, then labels in byte order, ties by id.
    const text = (value: unknown): string => (value === null ? '' : `~${String(value)}`);
    const expected = (await engine.readRows([a])).rows.sort((x, y) =>
      text(x.label) === text(y.label) ? Number(x.id) - Number(y.id) : text(x.label) < text(y.label) ? -1 : 1,
    );
    await assertOutputsInOrder(result, outputs, expected, 'two', seen);
    // The kept row groups' bloom filters (DuckDB writes them after the last row group, for dictionary-encoded columns
    // such as day) moved with the file's end: no row group excludes a day it holds; each excludes one it lacks.
    const probe = await DuckDBInstance.create(':memory:');
    const connection = await probe.connect();
    try {
      const excluded = async (day: string): Promise<[number, number]> => {
        const [row] = (
          await connection.runAndReadAll(
            `SELECT count(*) FILTER (WHERE bloom_filter_excludes), count(*) FROM parquet_bloom_probe('${outputs[0]!.file}', 'day', DATE '${day}')`,
          )
        ).getRows();
        return [Number(row![0]), Number(row![1])];
      };
      const days = new Set(expected.slice(0, 4500).map((row) => String(row.day)));
      assert.equal(days.size, 11);
      for (const day of ['2000-01-01', '2000-01-06', '2000-01-11']) assert.equal((await excluded(day))[0], 0, `${day} is not excluded`);
      const [absent, groups] = await excluded('1999-12-31');
      assert.ok(absent === groups && groups >= 3, `a day no row holds is excluded from all ${groups} row groups (${absent})`);
    } finally {
      connection.closeSync();
      probe.closeSync();
    }
    const ranks = Uint32Array.from({ length: 9000 }, (_, row) => 8999 - row);
    const ranked = await engine.copySorted({ inputs: [a], rowRanks: ranks, outputs: rangesOf('two-ranked', [0, 4500, 9000]), rowGroupSize: 100 });
    assert.deepEqual(ranked.split, { method: 'key-ranges', outputs: 2 });
  });

  test('cut outputs whose footer needs only the key range get it without their keys; the others from their keys', async () => {
    const a = join(workDir, 'ranged-a.parquet');
    await duckdb(`COPY (${plainRowsSql(0, 5000)}) TO '${a}' (FORMAT parquet)`);
    const outputs = rangesOf('ranged', [0, 700, 1234, 2000, 3000, 5000]);
    const seen = new Map<string, string[]>();
    const ranged = new Map<string, { min: string; max: string }>();
    // Outputs of 1,000 rows or more take the range (as saturated bloom filters do); a non-ASCII bound would not.
    const result = await engine.copySorted({
      inputs: [a],
      orderBy: [{ column: 'id', descending: true }],
      outputs,
      rowGroupSize: 100,
      footerFromColumn: {
        ...keysBuilt(seen),
        fromRange: {
          applies: (output) => output.rowCount >= 1000,
          build: (range, output) => {
            ranged.set(output.file, range);
            return { min: range.min, max: range.max };
          },
        },
      },
    });
    assert.equal(result.split?.method, 'copy');
    const expected = (await engine.readRows([a])).rows.sort((x, y) => Number(y.id) - Number(x.id));
    let at = 0;
    for (const [index, output] of outputs.entries()) {
      const keys = expected
        .slice(at, at + output.rowCount)
        .map((row) => String(row._hoodie_record_key))
        .sort();
      at += output.rowCount;
      const footer = (await engine.readFooter(output.file)).keyValues;
      if (output.rowCount >= 1000) {
        assert.equal(seen.has(output.file), false, `output ${index}'s keys were not read one by one`);
        assert.deepEqual(ranged.get(output.file), { min: keys[0], max: keys.at(-1) });
        assert.deepEqual(footer, { output: String(index), min: keys[0], max: keys.at(-1) });
      } else {
        assert.equal(ranged.has(output.file), false);
        assert.deepEqual(seen.get(output.file), keys);
        assert.deepEqual(footer, { output: String(index), count: String(keys.length), min: keys[0] });
      }
    }
    assert.deepEqual([...ranged.keys()].sort(), [outputs[3]!.file, outputs[4]!.file].sort());
  });

  test('a key range comes from row-group statistics only where they are exact: keys DuckDB truncates are scanned', async () => {
    // DuckDB's statistics of strings past 256 bytes are prefixes flagged inexact: the greatest key would be too small.
    const long = join(workDir, 'long-keys.parquet');
    await duckdb(
      `COPY (SELECT repeat('k', 300) || _hoodie_record_key AS _hoodie_record_key, * EXCLUDE (_hoodie_record_key) FROM (${plainRowsSql(0, 3000)})) TO '${long}' (FORMAT parquet)`,
    );
    for (const [name, inputs] of [
      ['long', [long]],
      ['short', [first, second]],
    ] as const) {
      const rows = (await engine.readRows([...inputs])).rows.length;
      const outputs = rangesOf(`stats-${name}`, [0, Math.floor(rows / 2) + 1, rows]);
      const ranged = new Map<string, { min: string; max: string }>();
      await engine.copySorted({
        inputs,
        orderBy: [{ column: 'id', descending: true }],
        outputs,
        rowGroupSize: name === 'long' ? 100 : 2,
        footerFromColumn: {
          ...keysBuilt(new Map()),
          fromRange: {
            applies: () => true,
            build: (range, output) => {
              ranged.set(output.file, range);
              return { min: range.min, max: range.max };
            },
          },
        },
      });
      for (const output of outputs) {
        const keys = (await engine.readRows([output.file])).rows.map((row) => String(row._hoodie_record_key)).sort();
        assert.equal(keys.length, output.rowCount);
        assert.deepEqual(ranged.get(output.file), { min: keys[0], max: keys.at(-1) }, `${name} ${output.file}`);
      }
    }
  });

  test('many outputs of fewer than four row groups each are written from a temp table, not cut', async () => {
    const outputs = rangesOf('small', [0, 2, 4, 6, 8, 10]);
    const result = await engine.copySorted({ inputs: [first, second], orderBy: ['id'], outputs, rowGroupSize: 2 });
    assert.equal(result.split, undefined);
    assert.deepEqual(
      (await engine.readRows([outputs[3]!.file])).rows.map((row) => [row.id, row._hoodie_file_name]),
      [6, 7].map((id) => [id, 'small-3']),
    );
  });

  test('rowRanks too; outputs given out of order keep their own ranges', async () => {
    const ranks = Uint32Array.from({ length: 10 }, (_, row) => (row * 3) % 10);
    const [low, high] = rangesOf('ranked', [0, 4, 10]);
    const result = await engine.copySorted({ inputs: [first, second], rowRanks: ranks, outputs: [high!, low!], rowGroupSize: 1 });
    assert.deepEqual(result.split, { method: 'key-ranges', outputs: 2 });
    const byRank = [...ranks.keys()].sort((x, y) => ranks[x]! - ranks[y]!);
    assert.deepEqual(
      (await engine.readRows([low!.file])).rows.map((row) => [row.id, row._hoodie_file_name]),
      byRank.slice(0, 4).map((id) => [id, 'ranked-0']),
    );
    assert.deepEqual(
      (await engine.readRows([high!.file])).rows.map((row) => [row.id, row._hoodie_file_name]),
      byRank.slice(4).map((id) => [id, 'ranked-1']),
    );
  });

  test('a schema binary copy refuses (a decimal stored as an integer): each output rewritten from the one sort, with the reason', async () => {
    const outputs = rangesOf('rewrite', [0, 4, 8, 12, 16, 20]);
    const seen = new Map<string, string[]>();
    const [c, d] = [join(workDir, 'decimal-c.parquet'), join(workDir, 'decimal-d.parquet')];
    await duckdb(`COPY (${rowsSql(0, 12)}) TO '${c}' (FORMAT parquet)`);
    await duckdb(`COPY (${rowsSql(12, 8)}) TO '${d}' (FORMAT parquet)`);
    const result = await engine.copySorted({
      inputs: [c, d],
      orderBy: [{ column: 'id', descending: true }],
      outputs,
      rowGroupSize: 1,
      footerFromColumn: keysBuilt(seen),
    });
    assert.equal(result.split?.method, 'rewrite');
    assert.match(result.split.method === 'rewrite' ? result.split.reason : '', /amount is a decimal stored as INT64/);
    const expected = (await engine.readRows([c, d])).rows.sort((x, y) => Number(y.id) - Number(x.id));
    for (const [index, output] of outputs.entries()) {
      assert.deepEqual(
        (await engine.readRows([output.file])).rows,
        expected.slice(4 * index, 4 * index + 4).map((row) => ({ ...row, _hoodie_file_name: `rewrite-${index}` })),
      );
      assert.equal((await engine.readFooter(output.file)).keyValues.count, '4');
    }
    assert.deepEqual(seen.get(outputs[0]!.file), ['k0016', 'k0017', 'k0018', 'k0019']);
  });
});

describe('sampleRows', () => {
  test('takes rows evenly spaced over the files’ rows in the order given, every row when there are fewer', async () => {
    const options = { columns: ['id', 'day'], count: 4 };
    // 10 rows: the middle rows of four slices of 2.5 are rows 1, 3, 6 and 8.
    assert.deepEqual(samplePositions(10, 4), [1, 3, 6, 8]);
    const one = await engine.sampleRows([first, second], options);
    assert.deepEqual(one.columns, ['id', 'day']);
    assert.deepEqual(
      one.rows.map((row) => row.id),
      [1, 3, 6, 8],
    );
    // second (ids 6-9) then first (ids 0-5): rows 1, 3, 6 and 8 of that order.
    assert.deepEqual(
      (await engine.sampleRows([second, first], options)).rows.map((row) => row.id),
      [7, 9, 2, 4],
    );
    assert.deepEqual(
      (await engine.sampleRows([first, second], { ...options, count: 50 })).rows.map((row) => row.id),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.deepEqual((await engine.sampleRows([first], { ...options, count: 0 })).rows, []);
  });

  test('over a sort’s outputs, one row per quantile of the sort order, from files of many row groups', async () => {
    const outputs = [0, 1].map((index) => ({
      file: join(workDir, `sampled-${index}.parquet`),
      rowStart: index * 5,
      rowCount: 5,
      keyValues: {},
      constantColumns: { _hoodie_file_name: `sampled-${index}` },
    }));
    await engine.copySorted({ inputs: [first, second], orderBy: [{ column: 'id', descending: true }], outputs, rowGroupSize: 2 });
    const { rows } = await engine.sampleRows(
      outputs.map((output) => output.file),
      { columns: ['id'], count: 3 },
    );
    // Ids 9..0 in order; the middle rows of three slices of 10/3 are rows 1, 5 and 8.
    assert.deepEqual(
      rows.map((row) => row.id),
      [8, 4, 1],
    );
  });
});
