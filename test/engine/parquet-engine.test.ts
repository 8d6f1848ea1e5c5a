import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { columnStatsOf, type FileColumnStats } from '../../lib/engine/column-stats.js';
import { inputFacts } from '../../lib/engine/input-order.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetColumnInfo, ParquetEngine } from '../../lib/engine/port.js';
import type { Row } from '../../lib/engine/row-format.js';
import { dateToJson, decimalToJson, float32ToJson, formatTable, integerToJson, timestampToJson, timeToJson } from '../../lib/engine/row-format.js';
import { READ_OPTIONS } from '../../lib/engine/sql.js';
import { HudiError } from '../../lib/errors.js';
import { readFooterSummary } from '../../lib/parquet/footer.js';
import { columnInfosFromSchemaElements, describeParquetType } from '../../lib/parquet/schema.js';
import { CompactReader, isStruct } from '../../lib/parquet/thrift.js';
import { duckdb } from '../helpers/duckdb.js';
import { completedWrites, expectedOf, fixtureTable } from '../helpers/fixtures.js';

const OVERWRITE = expectedOf('v6_simplekeygen_nonhivestyle_overwritetable');
/** The insert_overwrite_table commit's one base file: Diana alone, as Spark read her. */
const OVERWRITE_COMMIT = completedWrites(OVERWRITE)[2]!;
const DIANA_FILE = `v6_simplekeygen_nonhivestyle_overwritetable/${OVERWRITE.fileGroups.flatMap((group) => group.files).find((file) => file.endsWith(`_${OVERWRITE_COMMIT}.parquet`))}`;

let workDir: string;
let engine: ParquetEngine;

async function parquetFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.parquet') && !entry.parentPath.includes('__MACOSX'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Each file's column statistics, from its footer (what the clustering report reads). */
function columnStats(files: readonly string[]): FileColumnStats[] {
  return files.map((file) => columnStatsOf(readFooterSummary(file, { statistics: true })));
}

function leaf(schema: readonly ParquetColumnInfo[], ...path: string[]): ParquetColumnInfo {
  const found = schema.find((column) => column.path.join('.') === path.join('.'));
  assert.ok(found, `no column ${path.join('.')}`);
  return found;
}

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'parquet-engine-test-'));
  for (const table of ['v6_simplekeygen_nonhivestyle_overwritetable', 'v6_simplekeygen_nonhivestyle', 'v6_complexkeygen_hivestyle'] as const) {
    fixtureTable(table, workDir);
  }
  engine = await openParquetEngine({ threads: 2, memoryLimit: '512MB', tempDirectory: join(workDir, 'spill') });
});

after(async () => {
  await engine?.close();
  await rm(workDir, { recursive: true, force: true });
});

describe('row-format', () => {
  test('scalars follow the CLI rules', () => {
    assert.equal(float32ToJson(Math.fround(1.1)), 1.1);
    assert.equal(float32ToJson(Math.fround(0.1)), 0.1);
    assert.equal(float32ToJson(Math.fround(16777217)), 16777216);
    assert.equal(float32ToJson(Number.NaN), 'NaN');
    assert.equal(integerToJson(987654321n), 987654321);
    assert.equal(integerToJson(2n ** 53n), '9007199254740992');
    assert.equal(integerToJson(-(2n ** 53n) + 1n), -(2 ** 53) + 1);
    assert.equal(decimalToJson(6543212345n, 5), '65432.12345');
    assert.equal(decimalToJson(-5n, 3), '-0.005');
    assert.equal(decimalToJson(150000n, 5), '1.50000');
    assert.equal(decimalToJson(12n, 0), '12');
    assert.equal(dateToJson(0), '1970-01-01');
    assert.equal(dateToJson(-1), '1969-12-31');
    assert.equal(dateToJson(19451), '2023-04-04');
    assert.equal(timestampToJson(1_680_638_640_000_000_000n), '2023-04-04T20:04:00.000Z');
    assert.equal(timestampToJson(1_680_638_640_123_456_000n), '2023-04-04T20:04:00.123456Z');
    assert.equal(timestampToJson(1_680_638_640_000_000_001n), '2023-04-04T20:04:00.000000001Z');
    assert.equal(timestampToJson(-1_000_000n), '1969-12-31T23:59:59.999Z');
    assert.equal(timestampToJson(BigInt(Date.UTC(-50, 0, 1)) * 1_000_000n), new Date(Date.UTC(-50, 0, 1)).toISOString());
    assert.equal(timeToJson(3_723_000_000_000n), '01:02:03');
    assert.equal(timeToJson(3_723_500_000_000n), '01:02:03.500');
  });

  test('formatTable aligns columns and prints nested values as JSON', () => {
    const rows: Row[] = [
      { id: 4, name: 'Diana', tags: ['a', 'b'], note: null },
      { id: 12, name: 'Bo\nb', tags: [], note: 'x' },
    ];
    assert.equal(
      formatTable(rows, ['id', 'name', 'tags', 'note']),
      ['id  name   tags       note', '--  -----  ---------  ----', ' 4  Diana  ["a","b"]  null', '12  Bo\\nb  []         x', ''].join('\n'),
    );
  });
});

describe('reading', () => {
  test('readRows converts every column type of a Hudi base file', async () => {
    const { columns, rows } = await engine.readRows([join(workDir, DIANA_FILE)]);
    const expected: Row = {
      _hoodie_commit_time: OVERWRITE_COMMIT,
      _hoodie_commit_seqno: OVERWRITE.snapshot?.rows[0]?.['_hoodie_commit_seqno'] ?? null,
      _hoodie_record_key: '4',
      _hoodie_partition_path: '30',
      _hoodie_file_name: DIANA_FILE.slice(DIANA_FILE.lastIndexOf('/') + 1),
      id: 4,
      name: 'Diana',
      isActive: false,
      shortField: 500,
      intField: 45000,
      longField: 987654321,
      floatField: 4,
      doubleField: 2.468,
      decimalField: '65432.12345',
      dateField: '2023-04-04',
      timestampField: '2023-04-04T20:04:00.000Z',
      binaryField: Buffer.from('new binary data').toString('base64'),
      arrayField: [
        { arr_struct_f1: 'orange', arr_struct_f2: 900 },
        { arr_struct_f1: 'gray', arr_struct_f2: 1000 },
      ],
      mapField: {
        key7: { map_field_value_struct_f1: 456.789, map_field_value_struct_f2: true },
        key8: { map_field_value_struct_f1: 123.456, map_field_value_struct_f2: false },
      },
      structField: { field1: 'Diana', field2: 50, child_struct: { child_field1: 987.654, child_field2: true } },
      byteField: 30,
    };
    assert.deepEqual(rows, [expected]);
    assert.deepEqual(columns, Object.keys(expected));
    // And as Spark read the table's snapshot when the fixture was made.
    assert.deepEqual(rows, OVERWRITE.snapshot?.rows);
    assert.match(String(expected['_hoodie_commit_seqno']), new RegExp(`^${OVERWRITE_COMMIT}_\\d+_\\d+$`));
  });

  test('readRows selects columns, unions files by name and ignores hive-style directories', async () => {
    const files = await parquetFiles(join(workDir, 'v6_complexkeygen_hivestyle'));
    assert.ok(files.some((file) => file.includes('byteField=10/shortField=300')));
    const { columns, rows } = await engine.readRows(files, { columns: ['id', 'byteField', 'shortField'] });
    assert.deepEqual(columns, ['id', 'byteField', 'shortField']);
    // Values come from the files, not from the byteField=../shortField=.. path segments (which would be strings).
    assert.ok(rows.every((row) => typeof row.byteField === 'number' && typeof row.shortField === 'number'));
    await assert.rejects(engine.readRows(files, { columns: ['nope'] }), (error: unknown) => {
      assert.ok(error instanceof HudiError);
      assert.match(error.message, /no column "nope"/);
      return true;
    });
  });

  test('readFooter returns Hudi key/values, row count and the Parquet schema', async () => {
    const footer = await engine.readFooter(join(workDir, DIANA_FILE));
    assert.equal(footer.numRows, 1);
    assert.equal(footer.keyValues.hoodie_min_record_key, '4');
    assert.equal(footer.keyValues.hoodie_max_record_key, '4');
    assert.equal(footer.keyValues.hoodie_bloom_filter_type_code, 'DYNAMIC_V0');
    assert.ok((footer.keyValues['org.apache.hudi.bloomfilter'] ?? '').length > 1000);
    const avroSchema = JSON.parse(footer.keyValues['parquet.avro.schema'] ?? '{}') as { type: string; fields: unknown[] };
    assert.equal(avroSchema.type, 'record');
    assert.equal(avroSchema.fields.length, 21);

    const { schema } = footer;
    assert.deepEqual(leaf(schema, 'decimalField'), {
      path: ['decimalField'],
      name: 'decimalField',
      repetition: 'OPTIONAL',
      numChildren: 0,
      physicalType: 'FIXED_LEN_BYTE_ARRAY',
      typeLength: 5,
      convertedType: 'DECIMAL',
      logicalType: 'DECIMAL',
      precision: 10,
      scale: 5,
    });
    assert.equal(describeParquetType(leaf(schema, 'timestampField')), 'INT64 TIMESTAMP(MICROS, UTC)');
    assert.equal(describeParquetType(leaf(schema, 'dateField')), 'INT32 DATE');
    assert.equal(describeParquetType(leaf(schema, 'name')), 'BYTE_ARRAY STRING');
    assert.equal(describeParquetType(leaf(schema, 'binaryField')), 'BYTE_ARRAY');
    assert.equal(leaf(schema, 'arrayField').logicalType, 'LIST');
    assert.equal(leaf(schema, 'arrayField', 'array').repetition, 'REPEATED');
    assert.equal(describeParquetType(leaf(schema, 'arrayField', 'array', 'arr_struct_f2')), 'INT32 INT(32, signed)');
    assert.equal(leaf(schema, 'mapField').logicalType, 'MAP');
    assert.equal(leaf(schema, 'structField', 'child_struct').numChildren, 2);
  });

  test('countRows reads footers only; column statistics come from the footer as the rows print', async () => {
    const files = await parquetFiles(join(workDir, 'v6_simplekeygen_nonhivestyle_overwritetable'));
    assert.equal(await engine.countRows(files), 7);
    assert.equal(await engine.countRows([]), 0);

    const [diana] = columnStats([join(workDir, DIANA_FILE)]);
    assert.ok(diana);
    assert.equal(diana.rowCount, 1);
    const stats = new Map(diana.columns.map((column) => [column.column, column]));
    assert.deepEqual(stats.get('id'), { column: 'id', physicalType: 'INT32', min: 4, max: 4, nullCount: 0, valueCount: 1 });
    assert.equal(stats.get('decimalField')?.min, '65432.12345');
    assert.equal(stats.get('timestampField')?.max, '2023-04-04T20:04:00.000Z');
    assert.equal(stats.get('dateField')?.min, '2023-04-04');
    assert.equal(stats.get('longField')?.max, 987654321);
    assert.deepEqual([stats.get('arrayField.array.arr_struct_f2')?.min, stats.get('arrayField.array.arr_struct_f2')?.max], [900, 1000]);
    assert.equal(stats.get('binaryField')?.min, null);

    // Several row groups: min/max over all of them, nulls summed.
    const multi = join(workDir, 'row-groups.parquet');
    await duckdb(
      `COPY (SELECT range::INTEGER AS n, CASE WHEN range % 10 = 0 THEN NULL ELSE 'k' || lpad(range::VARCHAR, 5, '0') END AS s,
                    (range / 4.0)::DECIMAL(12,2) AS d, (TIMESTAMP '2024-01-01' + to_seconds(range))::TIMESTAMP AS t
             FROM range(10000)) TO '${multi}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`,
    );
    // Asked for some leaves only (a nested one among them): exactly those, as the whole footer's statistics give them.
    const some = ['decimalField', 'arrayField.array.arr_struct_f2', 'dateField'];
    const picked = columnStatsOf(readFooterSummary(join(workDir, DIANA_FILE), { statistics: some }));
    assert.deepEqual(
      picked.columns,
      diana.columns.filter((column) => some.includes(column.column)),
    );
    assert.deepEqual(
      picked.columns.map((column) => column.column),
      diana.columns.map((column) => column.column).filter((column) => some.includes(column)),
      'in schema order',
    );

    const [multiStats] = columnStats([multi]);
    assert.ok(multiStats);
    assert.ok(multiStats.rowGroupCount > 1);
    const byName = new Map(multiStats.columns.map((column) => [column.column, column]));
    assert.deepEqual([byName.get('n')?.min, byName.get('n')?.max], [0, 9999]);
    assert.deepEqual([byName.get('s')?.min, byName.get('s')?.max, byName.get('s')?.nullCount], ['k00001', 'k09999', 1000]);
    assert.deepEqual([byName.get('d')?.min, byName.get('d')?.max], ['0.00', '2499.75']);
    assert.deepEqual([byName.get('t')?.min, byName.get('t')?.max], ['2024-01-01T00:00:00.000Z', '2024-01-01T02:46:39.000Z']);

    // Footers are read through one reused buffer: a summary's string statistics must not change when the next file
    // (same layout, other strings at the same places) is read.
    const other = join(workDir, 'row-groups-other.parquet');
    await duckdb(
      `COPY (SELECT range::INTEGER AS n, CASE WHEN range % 10 = 0 THEN NULL ELSE 'z' || lpad(range::VARCHAR, 5, '0') END AS s,
                    (range / 4.0)::DECIMAL(12,2) AS d, (TIMESTAMP '2024-01-01' + to_seconds(range))::TIMESTAMP AS t
             FROM range(10000)) TO '${other}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`,
    );
    const first = readFooterSummary(multi, { statistics: ['s'] }).statistics?.columns[0];
    readFooterSummary(other, { statistics: ['s'] });
    assert.ok(first?.min?.kind === 'string' && first.max?.kind === 'string');
    assert.deepEqual([Buffer.from(first.min.bytes).toString('utf8'), Buffer.from(first.max.bytes).toString('utf8')], ['k00001', 'k09999']);

    // Files of one schema share its decoded columns (one array); another schema between them is decoded as its own.
    const [one, same, different, again] = [multi, other, join(workDir, DIANA_FILE), multi].map((file) => readFooterSummary(file).columns);
    assert.equal(same, one);
    assert.deepEqual(
      one!.map((column) => column.name),
      ['n', 's', 'd', 't'],
    );
    assert.ok(different!.some((column) => column.name === 'decimalField'));
    for (const [file, columns] of [
      [join(workDir, DIANA_FILE), different],
      [multi, again],
    ] as const) {
      const bytes = await readFile(file);
      const length = bytes.readUInt32LE(bytes.length - 8);
      const metadata = new CompactReader(bytes.subarray(bytes.length - 8 - length, bytes.length - 8)).readStruct();
      assert.deepEqual(columns, columnInfosFromSchemaElements(metadata.list(2)?.items.filter(isStruct) ?? []), 'as a whole decode gives them');
    }
    assert.deepEqual(again, one);
  });

  test('footer statistics of every type equal the min and max DuckDB computes from the rows, printed as rows are', async () => {
    // Several row groups with the extremes in different ones; columns of nulls only, NaN and binary have no range.
    const data = join(workDir, 'typed-stats.parquet');
    const columns: Record<string, string> = {
      tiny: '((range % 200) - 100)::TINYINT',
      utiny: '(range % 250)::UTINYINT',
      small: '(range * 7 - 30000)::SMALLINT',
      uint: '(4294967295 - range)::UINTEGER',
      int: '(range * 104729 - 2000000000)::INTEGER',
      ubig: '(18446744073709551615 - range * 3)::UBIGINT',
      big: '(range * 1000000007 - 9007199254740993)::BIGINT',
      flt: '(range / 3.0 - 1000)::FLOAT',
      dbl: '(range * 1.5e300 - 4e302)::DOUBLE',
      dec4: '((range % 9999) / 100.0 - 49)::DECIMAL(4,2)',
      dec18: '(range * 123456789.123 - 10)::DECIMAL(18,3)',
      dec30: "('-123456789012345678901.12345'::DECIMAL(30,5) + range)::DECIMAL(30,5)",
      dt: "(DATE '1960-03-01' + (range * 37)::INTEGER)",
      ts_ms: "(TIMESTAMP '1965-01-01 00:00:00.123' + to_milliseconds(range * 999))::TIMESTAMP_MS",
      ts_us: "(TIMESTAMP '2024-01-01' + to_microseconds(range * 1234567))::TIMESTAMP",
      ts_ns: "(TIMESTAMP '2001-09-09 01:46:40' + to_microseconds(range))::TIMESTAMP_NS",
      ts_tz: "(TIMESTAMPTZ '2024-06-01 12:00:00+00' - to_seconds(range * 61))",
      str: 'CASE WHEN range % 7 = 0 THEN NULL ELSE chr(((range * 31) % 2000 + 65)::INTEGER) || range::VARCHAR END',
      flag: 'range % 3 = 1',
    };
    const select = Object.entries(columns)
      .map(([name, sql]) => `${sql} AS ${name}`)
      .join(', ');
    await duckdb(
      `COPY (SELECT ${select}, NULL::INTEGER AS nothing, CASE WHEN range = 5 THEN 'NaN'::DOUBLE ELSE range::DOUBLE END AS nan, range::VARCHAR::BLOB AS bin
             FROM range(5000)) TO '${data}' (FORMAT parquet, ROW_GROUP_SIZE 1024)`,
    );
    const extremes = join(workDir, 'typed-stats-extremes.parquet');
    const aggregates = Object.keys(columns)
      .map((name) => `min(${name}) AS ${name}_min, max(${name}) AS ${name}_max`)
      .join(', ');
    await duckdb(`COPY (SELECT ${aggregates} FROM '${data}') TO '${extremes}' (FORMAT parquet)`);
    const [expected] = (await engine.readRows([extremes])).rows;
    assert.ok(expected);

    const [stats] = columnStats([data]);
    assert.ok(stats);
    assert.ok(stats.rowGroupCount >= 2, 'several row groups');
    assert.equal(stats.rowCount, 5000);
    const byName = new Map(stats.columns.map((column) => [column.column, column]));
    for (const name of Object.keys(columns)) {
      assert.deepEqual([byName.get(name)?.min, byName.get(name)?.max], [expected[`${name}_min`], expected[`${name}_max`]], name);
    }
    assert.equal(byName.get('str')?.nullCount, 715);
    assert.deepEqual(byName.get('nothing'), { column: 'nothing', physicalType: 'INT32', min: null, max: null, nullCount: 5000, valueCount: 5000 });
    assert.deepEqual([byName.get('nan')?.min, byName.get('nan')?.max], [null, null]);
    assert.deepEqual([byName.get('bin')?.min, byName.get('bin')?.max], [null, null]);
  });
});

describe('read options', () => {
  test('inputs of one schema are read without union_by_name; any difference (a column, its order, its type) binds by name', async () => {
    const dir = join(workDir, 'read-options');
    const write = async (name: string, select: string): Promise<string> => {
      const file = join(dir, name);
      await duckdb(`COPY (SELECT ${select}) TO '${file}' (FORMAT parquet)`);
      return file;
    };
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const a = await write('a.parquet', '1::INTEGER AS id, 10::BIGINT AS n');
    const b = await write('b.parquet', '2::INTEGER AS id, 20::BIGINT AS n');
    const reordered = await write('c.parquet', '30::BIGINT AS n, 3::INTEGER AS id');
    const wider = await write('d.parquet', '4::BIGINT AS id, 40::BIGINT AS n');
    const facts = (files: string[]) => inputFacts(files.map((file) => readFooterSummary(file)));
    assert.deepEqual([facts([a, b]).oneSchema, facts([a, b]).readOptions], [true, 'hive_partitioning = false']);
    assert.deepEqual([facts([a, b, reordered]).oneSchema, facts([a, b, reordered]).readOptions], [false, READ_OPTIONS]);
    assert.deepEqual([facts([a, wider]).oneSchema, facts([a, wider]).readOptions], [false, READ_OPTIONS]);
    // Either way the rows come out by column name.
    for (const inputs of [
      [a, b],
      [a, b, reordered],
    ]) {
      const out = join(dir, `out-${inputs.length}.parquet`);
      await engine.copySorted({ inputs, orderBy: ['id'], outputs: [{ file: out, rowStart: 0, rowCount: inputs.length, keyValues: {} }], rowGroupSize: 10 });
      const { rows } = await engine.readRows([out]);
      assert.deepEqual(
        rows.map((row) => [row.id, row.n]),
        inputs.map((_, index) => [index + 1, (index + 1) * 10]),
      );
    }
  });
});

describe('copySorted', () => {
  test('writes row ranges of one global sort with the inputs’ Parquet types and footer metadata', async () => {
    const inputs = [
      ...(await parquetFiles(join(workDir, 'v6_simplekeygen_nonhivestyle'))),
      ...(await parquetFiles(join(workDir, 'v6_simplekeygen_nonhivestyle_overwritetable'))),
    ];
    const total = await engine.countRows(inputs);
    assert.equal(total, 13);
    const dianaFooter = await engine.readFooter(join(workDir, DIANA_FILE));
    const keyValues = { ...dianaFooter.keyValues, 'it\'s "quoted"': 'va\'lue "x"' };
    const outputs = [
      { file: join(workDir, 'out', 'first.parquet'), rowStart: 0, rowCount: 6, keyValues: { ...keyValues, hoodie_min_record_key: '1' } },
      { file: join(workDir, 'out', 'second.parquet'), rowStart: 6, rowCount: total - 6, keyValues },
    ];
    const result = await engine.copySorted({ inputs, orderBy: ['name', { column: 'id', descending: true }], outputs, rowGroupSize: 4 });

    assert.equal(result.totalInputRows, total);
    for (const output of result.outputs) {
      assert.deepEqual(output.repairedColumns, ['decimalField']);
      // DuckDB writes 3-level lists; readers treat them the same as parquet-avro's 2-level ones.
      assert.deepEqual(output.deviations, [{ column: 'arrayField', input: 'LIST (2-level)', output: 'LIST (3-level)', compatible: true }]);
    }

    // Same Parquet types as the input, leaf by leaf (list wrapper names aside).
    const inputSchema = dianaFooter.schema;
    const typesByName = (schema: readonly ParquetColumnInfo[]): Map<string, string> =>
      new Map(
        schema
          .filter((column) => column.numChildren === 0)
          .map((column) => [column.path.filter((name) => !['array', 'list', 'element'].includes(name)).join('.'), describeParquetType(column)]),
      );
    for (const output of outputs) {
      const footer = await engine.readFooter(output.file);
      assert.deepEqual(footer.keyValues, output.keyValues);
      assert.deepEqual(typesByName(footer.schema), typesByName(inputSchema));
      assert.equal(describeParquetType(leaf(footer.schema, 'decimalField')), 'FIXED_LEN_BYTE_ARRAY(5) DECIMAL(10,5)');
      assert.equal(describeParquetType(leaf(footer.schema, 'timestampField')), 'INT64 TIMESTAMP(MICROS, UTC)');
      assert.equal(describeParquetType(leaf(footer.schema, 'dateField')), 'INT32 DATE');
      assert.equal(leaf(footer.schema, 'arrayField').logicalType, 'LIST');
      assert.equal(leaf(footer.schema, 'mapField').logicalType, 'MAP');
      assert.equal(leaf(footer.schema, 'structField', 'child_struct').numChildren, 2);
    }

    // Global order across both files, and exactly the input rows (ties by input file, then row).
    const inputRows = (await engine.readRows(inputs)).rows;
    const expected = inputRows
      .map((row, index) => ({ row, index }))
      .sort((a, b) => String(a.row.name).localeCompare(String(b.row.name)) || Number(b.row.id) - Number(a.row.id) || a.index - b.index)
      .map(({ row }) => row);
    const first = (await engine.readRows([outputs[0]!.file])).rows;
    const second = (await engine.readRows([outputs[1]!.file])).rows;
    assert.equal(first.length, 6);
    assert.deepEqual([...first, ...second], expected);
    assert.deepEqual([first.at(-1)?.name, second[0]?.name], ['Bob', 'Carol']);
  });

  test('keeps TIMESTAMP_MILLIS (also nested), NANOS, small and wide decimals', async () => {
    const input = join(workDir, 'millis.parquet');
    await duckdb(
      `COPY (SELECT range::INTEGER AS id,
                    (TIMESTAMP '2024-03-01 12:00:00.123' + to_milliseconds(range))::TIMESTAMP_MS AS ms,
                    {'inner': (TIMESTAMP '2024-03-01' + to_milliseconds(range))::TIMESTAMP_MS} AS nested,
                    [(TIMESTAMP '2024-03-01' + to_milliseconds(range))::TIMESTAMP_MS] AS listed,
                    '2024-03-01 12:00:00.123456789'::TIMESTAMP_NS AS ns,
                    (range / 100)::DECIMAL(7,2) AS small, (range * 1000000000.5)::DECIMAL(25,1) AS wide,
                    1.1::FLOAT AS f
             FROM range(5000)) TO '${input}' (FORMAT parquet)`,
    );
    const before = (await engine.readFooter(input)).schema;
    assert.equal(describeParquetType(leaf(before, 'ms')), 'INT64 TIMESTAMP(MILLIS, local)');

    const output = join(workDir, 'out', 'millis-sorted.parquet');
    const result = await engine.copySorted({
      inputs: [input],
      orderBy: [{ column: 'id', descending: true }],
      outputs: [{ file: output, rowStart: 0, rowCount: 5000, keyValues: {} }],
      rowGroupSize: 1000,
    });
    assert.deepEqual(result.outputs[0]?.deviations, []);
    const after = (await engine.readFooter(output)).schema;
    for (const path of [['ms'], ['nested', 'inner'], ['listed', 'list', 'element'], ['ns'], ['small'], ['wide'], ['f']]) {
      assert.equal(describeParquetType(leaf(after, ...path)), describeParquetType(leaf(before, ...path)), path.join('.'));
    }
    const [firstRow] = (await engine.readRows([output], { limit: 1 })).rows;
    assert.deepEqual(firstRow, {
      id: 4999,
      ms: '2024-03-01T12:00:05.122Z',
      nested: { inner: '2024-03-01T00:00:04.999Z' },
      listed: ['2024-03-01T00:00:04.999Z'],
      ns: '2024-03-01T12:00:00.123456789Z',
      small: '49.99',
      wide: '4999000002499.5',
      f: 1.1,
    });
  });

  test('repairs the UTC flag of TIMESTAMP_MILLIS written by parquet-avro', async () => {
    // DuckDB cannot write MILLIS with isAdjustedToUTC=true (what parquet-avro writes for timestamp-millis),
    // so flip the flag in a DuckDB-written footer: TimestampType{1: false, 2: {MILLIS: {}}} is 8c 12 1c 1c 00 00 00.
    const input = join(workDir, 'millis-utc.parquet');
    await duckdb(
      `COPY (SELECT range::INTEGER AS id, (TIMESTAMP '2024-03-01 12:00:00.123' + to_milliseconds(range))::TIMESTAMP_MS AS ts,
                    (range * 3.5)::DECIMAL(9,1) AS amount
             FROM range(100)) TO '${input}' (FORMAT parquet)`,
    );
    const bytes = await readFile(input);
    const pattern = Buffer.from([0x8c, 0x12, 0x1c, 0x1c, 0x00, 0x00, 0x00]);
    const at = bytes.lastIndexOf(pattern);
    assert.ok(at > 0, 'TimestampType(MILLIS, local) in the footer');
    bytes[at + 1] = 0x11;
    await writeFile(input, bytes);
    assert.equal(describeParquetType(leaf((await engine.readFooter(input)).schema, 'ts')), 'INT64 TIMESTAMP(MILLIS, UTC)');

    const output = join(workDir, 'out', 'millis-utc-sorted.parquet');
    const result = await engine.copySorted({
      inputs: [input],
      outputs: [{ file: output, rowStart: 10, rowCount: 20, keyValues: { k: 'v' } }],
      rowGroupSize: 8,
    });
    assert.deepEqual(result.outputs[0]?.repairedColumns, ['ts']);
    assert.deepEqual(result.outputs[0]?.deviations, []);
    const footer = await engine.readFooter(output);
    assert.equal(describeParquetType(leaf(footer.schema, 'ts')), 'INT64 TIMESTAMP(MILLIS, UTC)');
    assert.deepEqual(footer.keyValues, { k: 'v' });
    const { rows } = await engine.readRows([output]);
    assert.equal(rows.length, 20);
    assert.deepEqual(rows[0], { id: 10, ts: '2024-03-01T12:00:00.133Z', amount: '35.0' });
  });

  test('re-encodes many decimals (negative, null, dictionary and plain pages, several row groups) as FIXED_LEN_BYTE_ARRAY', async () => {
    // The last input that has a column decides its type: here the fixture's FIXED_LEN_BYTE_ARRAY(5) decimal.
    const generated = join(workDir, 'decimals.parquet');
    await duckdb(
      `COPY (SELECT range::INTEGER AS id,
                    CASE WHEN range % 5 = 0 THEN NULL ELSE ((range * 7919) % 100003 - 50000) * 1.23457 END::DECIMAL(10,5) AS "decimalField"
             FROM range(30000)) TO '${generated}' (FORMAT parquet)`,
    );
    const inputs = [generated, join(workDir, DIANA_FILE)];
    const outputs = [
      { file: join(workDir, 'out', 'decimals-1.parquet'), rowStart: 0, rowCount: 12001, keyValues: {} },
      { file: join(workDir, 'out', 'decimals-2.parquet'), rowStart: 12001, rowCount: 18000, keyValues: {} },
    ];
    const result = await engine.copySorted({ inputs, orderBy: ['decimalField'], outputs, rowGroupSize: 4096 });
    assert.deepEqual(
      result.outputs.map((output) => output.repairedColumns),
      [['decimalField'], ['decimalField']],
    );
    const expected = (await engine.readRows(inputs, { columns: ['decimalField', 'id'] })).rows
      .map((row, index) => ({ row, index }))
      .sort((a, b) => {
        const [x, y] = [a.row.decimalField, b.row.decimalField];
        if (x === null || y === null) return (x === null ? 0 : 1) - (y === null ? 0 : 1) || a.index - b.index;
        const difference = Number(x) - Number(y);
        return difference === 0 ? a.index - b.index : difference;
      })
      .map(({ row }) => row);
    const actual = (
      await engine.readRows(
        outputs.map((output) => output.file),
        { columns: ['decimalField', 'id'] },
      )
    ).rows;
    assert.deepEqual(actual, expected);
    assert.ok(actual.some((row) => typeof row.decimalField === 'string' && row.decimalField.startsWith('-')));

    const stats = columnStats(outputs.map((output) => output.file));
    assert.ok(
      stats.every((file) => file.rowGroupCount >= 2),
      'several row groups per output',
    );
    for (const [index, file] of stats.entries()) {
      const footer = await engine.readFooter(outputs[index]!.file);
      assert.equal(describeParquetType(leaf(footer.schema, 'decimalField')), 'FIXED_LEN_BYTE_ARRAY(5) DECIMAL(10,5)');
      const rows = index === 0 ? actual.slice(0, 12001) : actual.slice(12001);
      const values = rows.map((row) => row.decimalField).filter((value) => value !== null);
      const decimal = file.columns.find((column) => column.column === 'decimalField');
      assert.equal(decimal?.nullCount, rows.length - values.length);
      assert.equal(decimal?.min, values[0]);
      assert.equal(decimal?.max, values.at(-1));
    }
  });

  test('rejects bad ranges and unknown sort columns', async () => {
    const inputs = [join(workDir, DIANA_FILE)];
    const request = { inputs, rowGroupSize: 10 };
    const file = join(workDir, 'out', 'bad.parquet');
    await assert.rejects(engine.copySorted({ ...request, outputs: [{ file, rowStart: 0, rowCount: 2, keyValues: {} }] }), /past the 1 input rows/);
    await assert.rejects(
      engine.copySorted({ ...request, orderBy: ['missing'], outputs: [{ file, rowStart: 0, rowCount: 1, keyValues: {} }] }),
      /no sort column "missing"/,
    );
    const many = [await engine.countRows([join(workDir, DIANA_FILE)])];
    assert.deepEqual(many, [1]);
  });
});

describe('unreadable files', () => {
  const expectUnreadable = (file: string) => (error: unknown) => {
    assert.ok(error instanceof HudiError, String(error));
    assert.equal(error.location, file);
    assert.match(error.message, /not a readable Parquet file: /);
    assert.match(error.message, /restore it or roll back the instant that wrote it/);
    return true;
  };

  test('random bytes and a truncated copy are named in the error', async () => {
    const junk = join(workDir, 'junk.parquet');
    await writeFile(junk, Buffer.from(Array.from({ length: 4096 }, (_, index) => (index * 7919) % 251)));
    const truncated = join(workDir, 'truncated.parquet');
    const real = await readFile(join(workDir, DIANA_FILE));
    await writeFile(truncated, real.subarray(0, Math.floor(real.length / 2)));
    const good = join(workDir, DIANA_FILE);
    for (const bad of [junk, truncated]) {
      await assert.rejects(engine.readFooter(bad), expectUnreadable(bad));
      await assert.rejects(engine.readRows([good, bad]), expectUnreadable(bad));
      await assert.rejects(engine.countRows([good, bad]), expectUnreadable(bad));
    }
  });

  test('a file with a corrupt data page is found among several', async () => {
    const corrupt = join(workDir, 'corrupt-page.parquet');
    await copyFile(join(workDir, DIANA_FILE), corrupt);
    const bytes = await readFile(corrupt);
    bytes.fill(7, 1000, 2000);
    await writeFile(corrupt, bytes);
    const good = join(workDir, DIANA_FILE);
    await assert.rejects(engine.readRows([good, corrupt]), expectUnreadable(corrupt));
    await assert.rejects(
      engine.copySorted({
        inputs: [good, corrupt],
        outputs: [{ file: join(workDir, 'out', 'x.parquet'), rowStart: 0, rowCount: 1, keyValues: {} }],
        rowGroupSize: 10,
      }),
      expectUnreadable(corrupt),
    );
  });

  test('a missing file is NotFound', async () => {
    const missing = join(workDir, 'missing.parquet');
    await assert.rejects(
      engine.readRows([missing]),
      (error: unknown) => error instanceof HudiError && error.location === missing && /not found/.test(error.message),
    );
  });
});
