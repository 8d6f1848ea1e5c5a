/**
 * lib/engine/z-order-key.ts: Hudi's DIRECT z-order key computed by DuckDB, against the key lib/layout/curves.ts builds
 * from the same values (the one the real-Hudi interop tests hold to Hudi's order), for every type it takes, with
 * edge values; which inputs it declines; and copySorted ordering by it as by the ranks of curves.ts's keys.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { withDerivedColumns } from '../../lib/engine/copy-sorted.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { EngineSortOrder, ParquetEngine, SortColumnDescription } from '../../lib/engine/port.js';
import { buildCurveKeys, type SortValue, sortRowsByCurveKey } from '../../lib/layout/curves.js';
import { readFooterSummary } from '../../lib/parquet/footer.js';
import { duckdb } from '../helpers/duckdb.js';

let workDir: string;
let engine: ParquetEngine;
let file: string;

/** Columns of every type the SQL key takes, edge values first, then seeded random ones. */
const COLUMNS = ['l', 'i', 's', 't', 'b', 'd', 'ts', 'tms', 'str', 'bin'] as const;
const ROWS = 3000;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'engine-z-order-'));
  engine = await openParquetEngine({ threads: 2 });
  file = join(workDir, 'types.parquet');
  const edges = `VALUES
    (-9223372036854775808, -2147483648, -32768, -128, false, DATE '0001-01-01', TIMESTAMP '0001-01-01 00:00:00', TIMESTAMP '1900-01-01 00:00:00.001', '', ''::BLOB),
    (9223372036854775807, 2147483647, 32767, 127, true, DATE '9999-12-31', TIMESTAMP '9999-12-31 23:59:59.999999', TIMESTAMP '2100-01-01', 'zzzzzzzzzzzz', '\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF'::BLOB),
    (-1, -1, -1, -1, NULL, DATE '1969-12-31', TIMESTAMP '1969-12-31 23:59:59.9995', TIMESTAMP '1969-12-31 23:59:59.999', 'héllo wörld', '\\x00\\x01'::BLOB),
    (0, 0, 0, 0, true, DATE '1970-01-01', TIMESTAMP '1970-01-01 00:00:00', TIMESTAMP '1970-01-01', 'a', '\\x80'::BLOB),
    (1, 1, 1, 1, false, DATE '1970-01-02', TIMESTAMP '1970-01-01 00:00:00.000001', TIMESTAMP '1970-01-01 00:00:00.001', '😀 emoji first', 'abcdefgh'::BLOB),
    (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (-1000, 1000, -300, 100, true, DATE '1582-10-04', TIMESTAMP '1969-12-31 23:59:59.000001', TIMESTAMP '1500-06-01 12:00:00.5', 'ação', 'x'::BLOB)`;
  // Random rows from a seeded hash: both signs, every magnitude, shared prefixes for strings, nulls now and then.
  const random = `SELECT
      CASE WHEN r % 17 = 0 THEN NULL ELSE ((hash(r, 1) >> 1) >> (hash(r, 2) % 63))::BIGINT * CASE WHEN r % 2 = 0 THEN 1 ELSE -1 END END,
      CASE WHEN r % 19 = 0 THEN NULL ELSE ((hash(r, 3) % 4294967296)::BIGINT - 2147483648)::INTEGER END,
      CASE WHEN r % 23 = 0 THEN NULL ELSE ((hash(r, 4) % 65536)::BIGINT - 32768)::SMALLINT END,
      CASE WHEN r % 29 = 0 THEN NULL ELSE ((hash(r, 5) % 256)::BIGINT - 128)::TINYINT END,
      CASE WHEN r % 7 = 0 THEN NULL ELSE hash(r, 6) % 2 = 0 END,
      CASE WHEN r % 31 = 0 THEN NULL ELSE DATE '1970-01-01' + ((hash(r, 7) % 2000000)::BIGINT - 1000000)::INTEGER END,
      CASE WHEN r % 37 = 0 THEN NULL ELSE make_timestamp(((hash(r, 8) % 200000000000000000)::BIGINT - 100000000000000000)::BIGINT) END,
      CASE WHEN r % 41 = 0 THEN NULL ELSE make_timestamp(((hash(r, 9) % 20000000000000)::BIGINT - 10000000000000)::BIGINT * 1000)::TIMESTAMP_MS END,
      CASE WHEN r % 43 = 0 THEN NULL ELSE 'key-' || (hash(r, 10) % 1000)::VARCHAR || repeat('é', (hash(r, 11) % 4)::INTEGER) END,
      CASE WHEN r % 47 = 0 THEN NULL ELSE encode((hash(r, 12) % 100000)::VARCHAR) END
    FROM range(${ROWS}) t(r)`;
  await duckdb(
    `COPY (SELECT * FROM (${edges}) v(${COLUMNS.join(', ')}) UNION ALL SELECT * FROM (${random}))
     TO '${file}' (FORMAT parquet)`,
  );
});

after(async () => {
  await engine.close();
  await rm(workDir, { recursive: true, force: true });
});

/** The two unsigned 64-bit halves the keys give each row of `path`, in file order. */
async function sqlKeys(path: string, order: EngineSortOrder): Promise<[bigint, bigint][]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`SET TimeZone = 'UTC'`);
    const expressions = order.orderBy.map((key) => {
      assert.ok(typeof key === 'object' && 'sqlExpression' in key, 'the engine gives SQL keys');
      return `(${key.sqlExpression})`;
    });
    const source = withDerivedColumns(`(SELECT * FROM read_parquet('${path}', file_row_number = true))`, order.derivedColumns);
    const reader = await connection.runAndReadAll(`SELECT ${expressions.join(', ')} FROM ${source} ORDER BY file_row_number`);
    return reader.getRows().map((row) => [row[0] as bigint, row[1] as bigint]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** curves.ts's DIRECT z-order keys of `columns`, from the values the engine's scan gives, as two halves per row. */
async function curveKeys(path: string, columns: readonly string[]): Promise<[bigint, bigint][]> {
  const values: SortValue[][] = columns.map(() => []);
  let described: readonly SortColumnDescription[] = [];
  await engine.scanSortColumns([path], columns, (batch, descriptions) => {
    described = descriptions;
    batch.values.forEach((column, index) => {
      for (let row = 0; row < batch.inputRows.length; row++) values[index]![batch.inputRows[row]!] = column[row];
    });
  });
  const batch = buildCurveKeys(
    described.map((column, index) => ({ type: column.type, schemaPosition: column.schemaPosition, values: values[index]! })),
    { layout: 'z-order', buildMethod: 'direct' },
  );
  assert.equal(batch.keyLength, 16);
  const view = new DataView(batch.keys.buffer, batch.keys.byteOffset, batch.keys.byteLength);
  return Array.from({ length: batch.rowCount }, (_, row) => [view.getBigUint64(row * 16), view.getBigUint64(row * 16 + 8)]);
}

describe('directZOrderSortKeys', () => {
  test("gives curves.ts's key for every row, on every pair of the types it takes", async () => {
    const footer = readFooterSummary(file);
    let pairs = 0;
    for (const [index, first] of COLUMNS.entries()) {
      // Each column with its neighbour and with one far off, configured in both orders (Hudi orders them itself).
      for (const second of [COLUMNS[(index + 1) % COLUMNS.length]!, COLUMNS[(index + 5) % COLUMNS.length]!]) {
        for (const columns of [
          [first, second],
          [second, first],
        ]) {
          const keys = engine.directZOrderSortKeys(columns, [footer]);
          assert.ok(keys !== undefined, `SQL keys for ${columns.join(', ')}`);
          const actual = await sqlKeys(file, keys);
          const expected = await curveKeys(file, columns);
          assert.equal(actual.length, ROWS + 7);
          for (let row = 0; row < expected.length; row++) {
            assert.deepEqual(actual[row], expected[row], `${columns.join(', ')}: row ${row}`);
          }
          pairs++;
        }
      }
    }
    assert.equal(pairs, COLUMNS.length * 4);
  });

  test('declines what it cannot compute exactly: floating point, decimals, one or three columns, other schemas', async () => {
    const other = join(workDir, 'other.parquet');
    await duckdb(`COPY (SELECT 1.5::DOUBLE AS f, 2.5::FLOAT AS g, 1.25::DECIMAL(10, 2) AS dec, 1 AS i, 2 AS j, 3 AS k) TO '${other}' (FORMAT parquet)`);
    const footer = readFooterSummary(other);
    assert.equal(engine.directZOrderSortKeys(['f', 'i'], [footer]), undefined);
    assert.equal(engine.directZOrderSortKeys(['i', 'g'], [footer]), undefined);
    assert.equal(engine.directZOrderSortKeys(['dec', 'i'], [footer]), undefined);
    assert.equal(engine.directZOrderSortKeys(['i'], [footer]), undefined);
    assert.equal(engine.directZOrderSortKeys(['i', 'j', 'k'], [footer]), undefined);
    assert.equal(engine.directZOrderSortKeys(['i', 'missing'], [footer]), undefined);
    assert.ok(engine.directZOrderSortKeys(['i', 'j'], [footer]) !== undefined);
    // Inputs of two schemas: the caller's keys stay in charge.
    assert.equal(engine.directZOrderSortKeys(['i', 'j'], [footer, readFooterSummary(file)]), undefined);
  });

  test('copySorted orders by the keys as by the ranks of curves.ts’s keys, ties in input order', async () => {
    // Two inputs with repeated sort values (ties), one with rows the other repeats.
    const first = join(workDir, 'first.parquet');
    const second = join(workDir, 'second.parquet');
    await duckdb(
      `COPY (SELECT r AS id, (r % 11 - 5)::INTEGER AS x, 'v' || (r % 7)::VARCHAR AS y, 'in' AS name FROM range(500) t(r)) TO '${first}' (FORMAT parquet)`,
    );
    await duckdb(
      `COPY (SELECT 1000 + r AS id, (r % 13 - 6)::INTEGER AS x, 'v' || (r % 5)::VARCHAR AS y, 'in' AS name FROM range(300) t(r)) TO '${second}' (FORMAT parquet)`,
    );
    const inputs = [first, second];
    const footers = inputs.map((path) => readFooterSummary(path));
    const keys = engine.directZOrderSortKeys(['y', 'x'], footers);
    assert.ok(keys !== undefined);

    const values: SortValue[][] = [[], []];
    let described: readonly SortColumnDescription[] = [];
    await engine.scanSortColumns(inputs, ['y', 'x'], (batch, descriptions) => {
      described = descriptions;
      batch.values.forEach((column, index) => {
        for (let row = 0; row < batch.inputRows.length; row++) values[index]![batch.inputRows[row]!] = column[row];
      });
    });
    const sorted = sortRowsByCurveKey(
      buildCurveKeys(
        described.map((column, index) => ({ type: column.type, schemaPosition: column.schemaPosition, values: values[index]! })),
        { layout: 'z-order', buildMethod: 'direct' },
      ),
    );
    const ranks = new Uint32Array(sorted.length);
    sorted.forEach((row, rank) => {
      ranks[row] = rank;
    });

    const byKeys = join(workDir, 'by-keys.parquet');
    const byRanks = join(workDir, 'by-ranks.parquet');
    for (const [output, order] of [
      [byKeys, keys],
      [byRanks, { rowRanks: ranks }],
    ] as const) {
      await engine.copySorted({
        inputs,
        inputFooters: footers,
        ...order,
        outputs: [{ file: output, rowStart: 0, rowCount: 800, keyValues: {} }],
        rowGroupSize: 100,
      });
    }
    const ids = async (path: string): Promise<unknown[]> => (await engine.readRows([path], { columns: ['id'] })).rows.map((row) => row.id);
    const expected = await ids(byRanks);
    assert.equal(expected.length, 800);
    assert.deepEqual(await ids(byKeys), expected);

    // Several outputs are cut from one file ordered by the key, never range-partitioned by it (each range's filter
    // would compute the key again); outputs that cannot be cut (no column of their own) come from a sorted temp table.
    for (const [name, cut] of [
      ['cut', true],
      ['table', false],
    ] as const) {
      const halves = [join(workDir, `${name}-0.parquet`), join(workDir, `${name}-1.parquet`)];
      const split = await engine.copySorted({
        inputs,
        inputFooters: footers,
        ...keys,
        outputs: halves.map((file, index) => ({
          file,
          rowStart: index * 400,
          rowCount: 400,
          keyValues: {},
          ...(cut ? { constantColumns: { name: `${name}-${index}` } } : {}),
        })),
        rowGroupSize: 100,
      });
      assert.equal(split.split?.method, cut ? 'copy' : undefined);
      assert.deepEqual([...(await ids(halves[0]!)), ...(await ids(halves[1]!))], expected);
    }

    // Derived columns are the engine's: named under its prefix, and only beside keys.
    const misnamed = { name: 'x2', sqlExpression: 'x * 2' };
    await assert.rejects(
      engine.copySorted({
        inputs,
        orderBy: ['x'],
        derivedColumns: [[misnamed]],
        outputs: [{ file: join(workDir, 'no.parquet'), rowStart: 0, rowCount: 800, keyValues: {} }],
        rowGroupSize: 100,
      }),
      /derived column "x2" is named twice or not under __hudi_derived_/,
    );
    await assert.rejects(
      engine.copySorted({
        inputs,
        derivedColumns: keys.derivedColumns,
        outputs: [{ file: join(workDir, 'no.parquet'), rowStart: 0, rowCount: 800, keyValues: {} }],
        rowGroupSize: 100,
      }),
      /derivedColumns only with orderBy keys/,
    );
  });
});
