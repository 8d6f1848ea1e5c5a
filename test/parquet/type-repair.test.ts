import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import { readFileFooter } from '../../lib/parquet/footer.js';
import { type TopLevelFields, type TypeNode, topLevelFields, withFixedDecimals } from '../../lib/parquet/schema.js';
import { planTypeRepairs, repairParquetTypes } from '../../lib/parquet/type-repair.js';
import { duckdb } from '../helpers/duckdb.js';
import { hudiToolchain } from '../helpers/hudi.js';
import { pyarrowFileInfo, pyarrowRead } from '../helpers/oracle.js';

let workDir: string;
let engine: ParquetEngine;
/** Written by DuckDB: decimals as INT32, INT64 and FIXED_LEN_BYTE_ARRAY(16), a TIMESTAMP_MS without the UTC flag. */
let written: string;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'parquet-type-repair-test-'));
  engine = await openParquetEngine({ threads: 1 });
  written = join(workDir, 'written.parquet');
  // Several row groups, negative values; `price` (INT64) has many distinct values (PLAIN pages) and nulls, `amounts`
  // is a FIXED_LEN_BYTE_ARRAY(16) list element, `grade` (INT32) has five values (a dictionary page, indices in the data pages).
  await duckdb(
    `COPY (SELECT range::INTEGER AS id,
                  CASE WHEN range % 7 = 0 THEN NULL ELSE CAST(((range * 37) % 100003 - 50000) / 4 AS DECIMAL(10,2)) END AS price,
                  CAST(TIMESTAMP '2024-07-07 00:13:03.088' + INTERVAL (range) SECOND AS TIMESTAMP_MS) AS ts,
                  [CAST((range % 5 - 2) * 1000000000000 AS DECIMAL(20,3)), NULL] AS amounts,
                  CAST((range % 5 - 2) / 2 AS DECIMAL(4,1)) AS grade
           FROM range(30000))
     TO '${written}' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 10000, PARQUET_VERSION v1)`,
  );
});

after(async () => {
  await engine?.close();
  await rm(workDir, { recursive: true, force: true });
});

async function fieldsOf(file: string): Promise<TopLevelFields> {
  return topLevelFields((await engine.readFooter(file)).schema);
}

/** The written types, with Hudi's: fixed-length decimals of Spark's size and UTC-adjusted timestamps. */
function hudiTarget(writtenFields: TopLevelFields): TopLevelFields {
  const utc = (node: TypeNode): TypeNode =>
    node.kind === 'primitive' && node.info.logicalType === 'TIMESTAMP' ? { ...node, info: { ...node.info, isAdjustedToUTC: true } } : node;
  return new Map([...withFixedDecimals(writtenFields)].map(([name, node]) => [name, utc(node)]));
}

/** How pyarrow sees the first row group's column chunks: physical type, encodings, dictionary page or not. */
function pyarrowChunks(file: string): Record<string, string> {
  const script = `
import json, sys
import pyarrow.parquet as pq
group = pq.read_metadata(sys.argv[1]).row_group(0)
print(json.dumps({c.path_in_schema: f"{c.physical_type} {'+'.join(c.encodings)}{' dictionary' if c.has_dictionary_page else ''}" for c in (group.column(i) for i in range(group.num_columns))}))
`;
  return JSON.parse(execFileSync(hudiToolchain().python, ['-c', script, file], { encoding: 'utf8' })) as Record<string, string>;
}

/** Per row group, the min and max statistics pyarrow reads for a column, as text. */
function pyarrowStatistics(file: string, column: string): string[] {
  const script = `
import json, sys
import pyarrow.parquet as pq
meta = pq.read_metadata(sys.argv[1])
names = [meta.schema.column(i).path for i in range(meta.num_columns)]
index = names.index(sys.argv[2])
out = []
for group in range(meta.num_row_groups):
    stats = meta.row_group(group).column(index).statistics
    out.append(f"{stats.min}..{stats.max} nulls={stats.null_count}")
print(json.dumps(out))
`;
  return JSON.parse(execFileSync(hudiToolchain().python, ['-c', script, file, column], { encoding: 'utf8' })) as string[];
}

describe('type repair', () => {
  test('plans the leaves whose decimal storage or UTC flag differ from the target', async () => {
    const writtenFields = await fieldsOf(written);
    const repairs = planTypeRepairs(hudiTarget(writtenFields), writtenFields);
    assert.deepEqual(repairs, [
      { leafIndex: 0, column: 'id', topLevelColumn: 'id', plainInteger: true },
      { leafIndex: 1, column: 'price', topLevelColumn: 'price', decimal: { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: 5 } },
      { leafIndex: 2, column: 'ts', topLevelColumn: 'ts', isAdjustedToUTC: true },
      { leafIndex: 3, column: 'amounts[]', topLevelColumn: 'amounts', decimal: { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: 9 } },
      { leafIndex: 4, column: 'grade', topLevelColumn: 'grade', decimal: { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: 2 } },
    ]);
    assert.deepEqual(planTypeRepairs(writtenFields, writtenFields), [{ leafIndex: 0, column: 'id', topLevelColumn: 'id', plainInteger: true }]);
  });

  test("drops INTEGER(32|64, signed) wherever DuckDB writes it, as Hudi's writers store integers, and keeps narrower ones", async () => {
    const file = join(workDir, 'integers.parquet');
    await duckdb(
      `COPY (SELECT range::INTEGER AS i32, (range * 3000000000)::BIGINT AS i64, range::SMALLINT AS i16, range::UINTEGER AS u32,
                    {'b': -range::BIGINT} AS s, [range::BIGINT, NULL] AS l
             FROM range(1000))
       TO '${file}' (FORMAT parquet, PARQUET_VERSION v1)`,
    );
    const original = await readFile(file);
    const writtenFields = await fieldsOf(file);
    const repairs = planTypeRepairs(new Map(), writtenFields);
    assert.deepEqual(
      repairs.map((repair) => [repair.column, repair.plainInteger]),
      [
        ['i32', true],
        ['i64', true],
        ['s.b', true],
        ['l[]', true],
      ],
    );
    await repairParquetTypes(file, repairs);
    const handle = await open(file, 'r');
    const end = await readFileFooter(handle, file).finally(() => handle.close());
    assert.deepEqual((await readFile(file)).subarray(0, end.start), original.subarray(0, end.start), 'the pages are untouched');
    const [info] = pyarrowFileInfo([file]);
    for (const name of ['i32', 'i64', 'b', 'element']) assert.match(info!.parquet_schema, new RegExp(`int(32|64) field_id=-1 ${name};`), name);
    assert.match(info!.parquet_schema, /int32 field_id=-1 i16 \(Int\(bitWidth=16, isSigned=true\)\)/);
    assert.match(info!.parquet_schema, /int32 field_id=-1 u32 \(Int\(bitWidth=32, isSigned=false\)\)/);
    assert.deepEqual(planTypeRepairs(new Map(), await fieldsOf(file)), []);
    const rows = pyarrowRead([file]);
    assert.equal(rows.length, 1000);
    assert.deepEqual(rows[999], { i32: 999, i64: 2997000000000, i16: 999, u32: 999, s: { b: -999 }, l: [999, null] });
  });

  test('re-encodes decimal chunks and patches the footer; an independent reader sees the same values', async () => {
    const file = join(workDir, 'repaired.parquet');
    await copyFile(written, file);
    const writtenFields = await fieldsOf(file);
    await repairParquetTypes(file, planTypeRepairs(hudiTarget(writtenFields), writtenFields));

    assert.deepEqual(pyarrowChunks(written), {
      id: 'INT32 PLAIN',
      price: 'INT64 PLAIN',
      ts: 'INT64 PLAIN',
      'amounts.list.element': 'FIXED_LEN_BYTE_ARRAY PLAIN',
      grade: 'INT32 PLAIN_DICTIONARY dictionary',
    });
    assert.deepEqual(pyarrowChunks(file), {
      id: 'INT32 PLAIN',
      price: 'FIXED_LEN_BYTE_ARRAY PLAIN',
      ts: 'INT64 PLAIN',
      'amounts.list.element': 'FIXED_LEN_BYTE_ARRAY PLAIN',
      grade: 'FIXED_LEN_BYTE_ARRAY PLAIN_DICTIONARY dictionary',
    });
    const [info] = pyarrowFileInfo([file]);
    assert.match(info!.parquet_schema, /fixed_len_byte_array\(5\) field_id=-1 price \(Decimal\(precision=10, scale=2\)\)/);
    assert.match(info!.parquet_schema, /fixed_len_byte_array\(9\) field_id=-1 element \(Decimal\(precision=20, scale=3\)\)/);
    assert.match(info!.parquet_schema, /int64 field_id=-1 ts \(Timestamp\(isAdjustedToUTC=true, timeUnit=milliseconds/);
    assert.equal(info!.schema.ts, 'timestamp[ms, tz=UTC]');

    const before = pyarrowRead([written]);
    const after = pyarrowRead([file]);
    assert.equal(after.length, 30000);
    const withoutZone = (rows: Record<string, unknown>[]) => rows.map((row) => ({ ...row, ts: String(row.ts).replace(/\+00:00$/, '') }));
    assert.deepEqual(withoutZone(after), withoutZone(before));
    // Row 1 by the formulas above: price (37 - 50000) / 4, one second after the first timestamp, amounts (1 % 5 - 2) · 10^12,
    // grade (1 % 5 - 2) / 2.
    assert.deepEqual(after[1], { id: 1, price: '-12490.75', ts: '2024-07-07 00:13:04.088000+00:00', amounts: ['-1000000000000.000', null], grade: '-0.5' });
    assert.equal(after[7]!.price, null);
    // Statistics were converted too: the same min/max per row group in the new encoding.
    assert.deepEqual(pyarrowStatistics(file, 'price'), pyarrowStatistics(written, 'price'));
    assert.deepEqual(pyarrowStatistics(file, 'amounts.list.element'), pyarrowStatistics(written, 'amounts.list.element'));
    assert.deepEqual(pyarrowStatistics(file, 'grade'), pyarrowStatistics(written, 'grade'));
  });

  test('a schema-only repair rewrites the footer and leaves the pages byte for byte', async () => {
    const file = join(workDir, 'utc-only.parquet');
    await copyFile(written, file);
    const writtenFields = await fieldsOf(file);
    const repairs = planTypeRepairs(hudiTarget(writtenFields), writtenFields).filter((repair) => repair.decimal === undefined);
    await repairParquetTypes(file, repairs);
    const pagesEnd = async (path: string): Promise<number> => {
      const handle = await open(path, 'r');
      try {
        return (await readFileFooter(handle, path)).start;
      } finally {
        await handle.close();
      }
    };
    const end = await pagesEnd(written);
    assert.equal(await pagesEnd(file), end);
    assert.deepEqual((await readFile(file)).subarray(0, end), (await readFile(written)).subarray(0, end));
    const [info] = pyarrowFileInfo([file]);
    assert.equal(info!.schema.ts, 'timestamp[ms, tz=UTC]');
    assert.equal(info!.schema.price, 'decimal128(10, 2)');
    assert.equal(pyarrowRead([file]).length, 30000);
  });
});
