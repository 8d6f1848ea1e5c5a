/**
 * Bad input is refused before the write's instant exists: each case shows one clear error (an InputError naming the
 * input, or a HudiError naming hoodie.properties) and leaves the table's file listing, timeline included, exactly
 * as it was. Hudi 0.15's own behaviour for each case is in the comments (checked with Spark 3.5.1 + Hudi 0.15.0).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { ColumnNameError, HudiError, InputError, NestingDepthError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { MAX_NESTING_DEPTH } from '../../lib/table/schema.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { duckdb } from '../helpers/duckdb.js';
import { tempDir } from '../helpers/fixtures.js';
import { tableBytes } from '../helpers/paths.js';

const PROPS: Record<string, string> = {
  'hoodie.table.name': 't',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.index.bloom.num_entries': '100',
};

let inputs = 0;
function jsonLines(records: readonly object[], dir = tempDir()): string {
  const file = join(dir, `input-${inputs++}.jsonl`);
  writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return file;
}

async function write(
  table: string,
  input: string | readonly object[],
  options: { operation?: WriteOptions['operation']; props?: Record<string, string>; format?: 'jsonl' | 'csv' | 'parquet' } = {},
) {
  const file = typeof input === 'string' ? input : jsonLines(input);
  return writeBatch(openStorage(table), {
    input: { file, format: options.format ?? 'jsonl' },
    operation: options.operation ?? 'upsert',
    properties: new Map(Object.entries({ ...PROPS, ...options.props })),
  });
}

async function rows(table: string): Promise<Record<string, unknown>[]> {
  const { rows: read } = await readSnapshot(await HudiTable.open(openStorage(table)));
  return read.sort((a, b) => String(a['id']).localeCompare(String(b['id'])));
}

/** The write is refused with one InputError matching `message`, and not one byte of the table changed. */
async function assertRefused(
  table: string,
  attempt: () => Promise<unknown>,
  message: RegExp,
  errorClass: abstract new (...args: never[]) => HudiError = InputError,
): Promise<void> {
  const before = tableBytes(table);
  await assert.rejects(attempt(), (error: unknown) => {
    assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${String(error)}`);
    assert.match((error as Error).message, message);
    return true;
  });
  assert.deepEqual(tableBytes(table), before, 'the table, timeline included, is byte for byte as it was');
}

// Partition values that do not look like dates: DuckDB would infer a DATE column from "2024-01-01".
const BASE = [
  { id: 1, name: 'a', ts: 1, note: 'x', dt: 'p1' },
  { id: 2, name: 'b', ts: 1, note: 'y', dt: 'p2' },
];

async function baseTable(props: Record<string, string> = {}): Promise<string> {
  const table = join(tempDir(), 't');
  await write(table, BASE, { operation: 'insert', props });
  return table;
}

describe('writer input: partition paths', () => {
  // Hudi 0.15 writes every one of these paths (".hidden" as a folder Spark still reads, "a/b" as two folder levels).
  for (const value of ['.hidden', '.hoodie', '..', '../../escape', 'a/b', 'x*y', 'q?', '[a]', '{b}', 'a\tb', 'nul\u0000', 'trailing/']) {
    it(`refuses the partition value ${JSON.stringify(value)}`, async () => {
      const table = await baseTable();
      const reason =
        value.includes('/') || value === 'trailing/'
          ? /folder levels for 1 partition field\(s\) \(dt\): a partition value holds "\/"/
          : value.startsWith('.')
            ? /starting with "\.", which readers skip as hidden/
            : /[\t\u0000]/.test(value)
              ? /holds the control character U\+000[09]/
              : /holds the glob character ".", which DuckDB would expand/;
      await assertRefused(
        table,
        () => write(table, [{ id: 3, name: 'c', ts: 1, note: 'z', dt: value }]),
        new RegExp(`1 record\\(s\\) cannot be written; the first, row 1: .*${reason.source}`),
      );
    });
  }

  it('names the first bad row among good ones, and a new table is not created at all', async () => {
    const dir = tempDir();
    const table = join(dir, 't');
    await assertRefused(
      table,
      () =>
        write(table, [...BASE, { id: 3, name: 'c', ts: 1, note: 'z', dt: '.hidden' }, { id: 4, name: 'd', ts: 1, note: 'z', dt: '..' }], {
          operation: 'insert',
        }),
      /2 record\(s\) cannot be written; the first, row 3: partition path "\.hidden"/,
    );
    assert.deepEqual(readdirSync(dir), []);
  });

  it('with partitionpath.urlencode the same values are escaped as Hudi escapes them, written and read back', async () => {
    // Hudi 0.15 (urlencode=true): a/b → a%2Fb, x*y{} → x%2Ay%7B}, a<TAB>b → a%09b; a leading "." stays.
    const table = await baseTable({ 'hoodie.datasource.write.partitionpath.urlencode': 'true' });
    const result = await write(table, [
      { id: 3, name: 'c', ts: 1, note: 'z', dt: 'a/b' },
      { id: 4, name: 'd', ts: 1, note: 'z', dt: 'x*y{[]' },
      { id: 5, name: 'e', ts: 1, note: 'z', dt: 'a\tb' },
    ]);
    assert.deepEqual(Object.keys(Object.fromEntries(result.stats.map((s) => [s.partitionPath, 1]))).sort(), ['a%09b', 'a%2Fb', 'x%2Ay%7B%5B%5D']);
    assert.deepEqual(
      (await rows(table)).map((r) => r['dt']),
      ['p1', 'p2', 'a/b', 'x*y{[]', 'a\tb'],
    );
    await assertRefused(
      table,
      () => write(table, [{ id: 6, name: 'f', ts: 1, note: 'z', dt: '.hidden' }]),
      /partition path "\.hidden" has a folder "\.hidden" starting with "\."/,
    );
    // Hudi does not escape "}", so on a local table it stays a glob character.
    await assertRefused(table, () => write(table, [{ id: 7, name: 'g', ts: 1, note: 'z', dt: 'x}' }]), /partition path "x}" holds the glob character "}"/);
  });

  it('with badRecords: skip, records with bad partition paths are left out and reported', async () => {
    const table = await baseTable();
    const result = await writeBatch(openStorage(table), {
      input: {
        file: jsonLines([
          { id: 3, name: 'c', ts: 1, note: 'z', dt: 'p1' },
          { id: 4, name: 'd', ts: 1, note: 'z', dt: '..' },
        ]),
        format: 'jsonl',
      },
      operation: 'upsert',
      properties: new Map(Object.entries(PROPS)),
      badRecords: 'skip',
    });
    assert.deepEqual(
      result.badRecords.map((b) => b.row),
      [1],
    );
    assert.match(result.badRecords[0]!.reason, /partition path "\.\." has a folder "\.\." starting with "\."/);
    assert.deepEqual(
      (await rows(table)).map((r) => r['id']),
      [1, 2, 3],
    );
  });
});

describe('writer input: record keys and precombine values', () => {
  it('a fractional number in a BIGINT key column is refused, not stored rounded (JSON number and string)', async () => {
    // Hudi 0.15 does not round either: it widens the table's id column to double and stores key "1.5".
    const table = await baseTable();
    await assertRefused(
      table,
      () => write(table, [{ id: 1.5, name: 'a', ts: 2, note: 'x', dt: 'p1' }]),
      /row 1, column "id": 1\.5 \(DOUBLE\) does not fit the table's type BIGINT exactly \(it would be stored as 2\)/,
    );
    await assertRefused(
      table,
      () => write(table, [{ id: '1.5', name: 'a', ts: 2, note: 'x', dt: 'p1' }]),
      /row 1, column "id": 1\.5 \(VARCHAR\) does not fit the table's type BIGINT exactly \(it would be stored as 2\)/,
    );
    await assertRefused(
      table,
      () =>
        write(table, [
          { id: 7, name: 'a', ts: 2, note: 'x', dt: 'p1' },
          { id: '0x10', name: 'a', ts: 2, note: 'x', dt: 'p1' },
        ]),
      /row 2, column "id": "0x10" \(JSON\) does not fit the table's type BIGINT exactly \(it would be stored as 16\)/,
    );
  });

  it('an upsert with a null precombine value is refused, as Hudi refuses it ("Ordering value is null")', async () => {
    const table = await baseTable();
    await assertRefused(
      table,
      () =>
        write(table, [
          { id: 1, name: 'new', ts: 5, note: 'x', dt: 'p1' },
          { id: 2, name: 'new', ts: null, note: 'y', dt: 'p2' },
        ]),
      /1 record\(s\) cannot be written; the first, row 2: the precombine field "ts" is null, so the record has no ordering value \(Hudi refuses it: "Ordering value is null"\) \(give every record a ts value, or write with hoodie\.combine\.before\.upsert=false/,
    );
    // The default payload (OverwriteWithLatestAvroPayload) and DefaultHoodieRecordPayload alike: Hudi checks in BaseAvroPayload.
    await assertRefused(
      table,
      () =>
        write(table, [{ id: 1, name: 'new', ts: null, note: 'x', dt: 'p1' }], {
          props: { 'hoodie.datasource.write.payload.class': 'org.apache.hudi.common.model.DefaultHoodieRecordPayload' },
        }),
      /Ordering value is null/,
    );
    // Insert with combine.before.insert=true combines too.
    await assertRefused(
      table,
      () => write(table, [{ id: 9, name: 'new', ts: null, note: 'x', dt: 'p1' }], { operation: 'insert', props: { 'hoodie.combine.before.insert': 'true' } }),
      /Ordering value is null.*hoodie\.combine\.before\.insert=false/,
    );
  });

  it('a missing precombine column is a missing table column (Hudi: MissingSchemaFieldException)', async () => {
    const table = await baseTable();
    await assertRefused(
      table,
      () => write(table, [{ id: 1, name: 'new', note: 'x', dt: 'p1' }]),
      /input lacks table column\(s\) ts, which would be stored as NULL/,
    );
    // Stored as NULL on request, it is a null ordering value, refused on upsert as Hudi refuses it.
    await assertRefused(
      table,
      () => write(table, [{ id: 1, name: 'new', note: 'x', dt: 'p1' }], { props: { 'hoodie.write.set.null.for.missing.columns': 'true' } }),
      /Ordering value is null/,
    );
  });

  it('a null precombine value is written where Hudi writes it: insert (no combining), upsert with combine.before.upsert=false, delete', async () => {
    const table = await baseTable();
    await write(table, [{ id: 3, name: 'c', ts: null, note: 'z', dt: 'p1' }], { operation: 'insert' });
    await write(table, [{ id: 1, name: 'new', ts: null, note: 'x', dt: 'p1' }], { props: { 'hoodie.combine.before.upsert': 'false' } });
    await write(table, [{ id: 2, name: 'b', ts: null, note: 'y', dt: 'p2' }], { operation: 'delete' });
    assert.deepEqual(
      (await rows(table)).map((r) => [r['id'], r['name'], r['ts']]),
      [
        [1, 'new', null],
        [3, 'c', null],
      ],
    );
  });
});

describe('writer input: schema against the table', () => {
  it('input lacking a table column is refused; set.null.for.missing.columns or reconcile.schema store NULL, as Hudi', async () => {
    const table = await baseTable();
    // Hudi 0.15: MissingSchemaFieldException "Fields missing from incoming schema: {t_record.name}".
    await assertRefused(
      table,
      () => write(table, [{ id: 1, ts: 2, note: 'x', dt: 'p1' }]),
      /input lacks table column\(s\) name, which would be stored as NULL/,
    );
    await write(table, [{ id: 1, ts: 2, note: 'x', dt: 'p1' }], { props: { 'hoodie.write.set.null.for.missing.columns': 'true' } });
    await write(table, [{ id: 2, ts: 2, name: 'b2', dt: 'p2' }], { props: { 'hoodie.datasource.write.reconcile.schema': 'true' } });
    assert.deepEqual(
      (await rows(table)).map((r) => [r['id'], r['name'], r['note']]),
      [
        [1, null, 'x'],
        [2, 'b2', null],
      ],
    );
  });

  it('input with columns the table lacks evolves the schema as Hudi 0.15 does (reconcile.schema too)', async () => {
    // Hudi 0.15 (HoodieSchemaUtils.deduceWriterSchema): the batch's schema, with new nullable columns, is the
    // commit's writer schema; files it does not rewrite keep theirs and read NULL for the new columns.
    const table = await baseTable();
    const storage = openStorage(table);
    const createSchema = (await HudiTable.open(storage)).config.createSchema;
    await write(table, [{ id: 1, name: 'a', ts: 2, note: 'x', extra: 'e', dt: 'p1' }]);
    assert.deepEqual(
      (await rows(table)).map((r) => [r['id'], r['extra']]),
      [
        [1, 'e'],
        [2, null],
      ],
    );
    const evolved = (await (await HudiTable.open(storage)).requireSchema('reading it')).schema;
    assert.deepEqual(
      evolved.fields.map((f) => f.name),
      ['id', 'name', 'ts', 'note', 'dt', 'extra'],
      "new columns after the table's",
    );
    assert.deepEqual(evolved.fields.at(-1), { name: 'extra', type: ['null', 'string'], default: null });
    assert.equal((await HudiTable.open(storage)).config.createSchema, createSchema, 'hoodie.table.create.schema untouched');
    // reconcile.schema: a batch lacking a column and adding another gets NULL for the one and adds the other.
    await write(table, [{ id: 2, name: 'b', ts: 2, note: 'y', more: 5, dt: 'p2' }], { props: { 'hoodie.datasource.write.reconcile.schema': 'true' } });
    assert.deepEqual(
      (await rows(table)).map((r) => [r['id'], r['extra'], r['more']]),
      [
        [1, 'e', null],
        [2, null, 5],
      ],
    );
    assert.deepEqual(
      (await (await HudiTable.open(storage)).requireSchema('reading it')).schema.fields.map((f) => f.name),
      ['id', 'name', 'ts', 'note', 'dt', 'extra', 'more'],
    );
    // The evolved schema is the table's now: a batch without the new columns lacks table columns.
    await assertRefused(table, () => write(table, BASE), /input lacks table column\(s\) extra, more, which would be stored as NULL/);
  });

  it("the latest commit's schema is the table's even where the newest file lacks a column: reads give NULL, writes need it", async () => {
    // The newest base file is our clustering of p2, whose files predate `extra`; the schema (TableSchemaResolver:
    // the latest commit's) still has it, so it is read as NULL and an input without it lacks a table column.
    const table = await baseTable();
    await write(table, [{ id: 3, name: 'c', ts: 1, note: 'z', dt: 'p2' }], { operation: 'insert' });
    await write(table, [{ id: 1, name: 'a', ts: 2, note: 'x', extra: 7, dt: 'p1' }]);
    const storage = openStorage(table);
    const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.partition.selected': 'p2' } }).config;
    const engine = await openParquetEngine();
    try {
      const clustered = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
        mode: 'scheduleAndExecute',
        config,
        lock: new StorageLockProvider(openStorage(`${table}.lock`)),
        engine,
        tempDir: tempDir(),
      });
      assert.ok(clustered.commit !== undefined, 'p2 was clustered');
      const { columns } = await readSnapshot(await HudiTable.open(storage));
      assert.ok(columns.includes('extra'));
      assert.deepEqual(
        (await rows(table)).map((r) => [r['id'], r['extra']]),
        [
          [1, 7],
          [2, null],
          [3, null],
        ],
      );
      await assertRefused(
        table,
        () => write(table, [{ id: 2, name: 'b', ts: 3, note: 'y', dt: 'p2' }]),
        /input lacks table column\(s\) extra, which would be stored as NULL/,
      );
      await write(table, [{ id: 2, name: 'b', ts: 3, note: 'y', extra: 8, dt: 'p2' }]);
      assert.deepEqual(
        (await rows(table)).map((r) => [r['id'], r['extra']]),
        [
          [1, 7],
          [2, 8],
          [3, null],
        ],
      );
      assert.deepEqual(
        (await (await HudiTable.open(storage)).requireSchema('reading it')).schema.fields.filter((f) => f.name === 'extra'),
        [{ name: 'extra', type: ['null', 'long'], default: null }],
        'added once',
      );
    } finally {
      await engine.close();
    }
  });

  it('refuses hoodie.write.schema.allow.auto.evolution.column.drop=true: no write drops a column', async () => {
    // Hudi 0.15 would write the narrower batch schema as the commit's; this writer keeps every column instead.
    const table = await baseTable();
    await assertRefused(
      table,
      () => write(table, BASE, { props: { 'hoodie.write.schema.allow.auto.evolution.column.drop': 'true' } }),
      /hoodie\.write\.schema\.allow\.auto\.evolution\.column\.drop=true is not supported: this writer never drops a column/,
      HudiError,
    );
  });

  it("text columns keep the input's text: date-like JSON strings and CSV cells are not reformatted", async () => {
    const table = await baseTable();
    // Read as DuckDB infers it, "2024-01-01T10:00:00" would become a TIMESTAMP and be stored as "2024-01-01 10:00:00".
    await write(table, [{ id: 3, name: '2024-01-01T10:00:00', ts: 2, note: '2024-01-02', dt: 'p1' }]);
    const csv = join(tempDir(), 'input.csv');
    writeFileSync(csv, 'id,name,ts,note,dt\n4,007,2,2024-01-01T10:00:00Z,p1\n');
    await write(table, csv, { format: 'csv' });
    const byId = new Map((await rows(table)).map((r) => [r['id'], r]));
    assert.deepEqual([byId.get(3)?.['name'], byId.get(3)?.['note']], ['2024-01-01T10:00:00', '2024-01-02']);
    assert.deepEqual([byId.get(4)?.['name'], byId.get(4)?.['note']], ['007', '2024-01-01T10:00:00Z']);
  });
});

describe('writer input: every column type takes only values it holds exactly', () => {
  /** A table of many column types, created from Parquet (so the types are the table's, not inferred from JSON). */
  async function typedTable(): Promise<string> {
    const dir = tempDir();
    const parquet = join(dir, 'typed.parquet');
    await duckdb(`COPY (SELECT 1::BIGINT AS id, 1::INTEGER AS i, 1.5::FLOAT AS f, 2.5::DOUBLE AS d, 3.75::DECIMAL(10,2) AS price,
      DATE '2024-01-01' AS day, TIMESTAMPTZ '2024-01-01 10:00:00+00' AS at, true AS ok, 'x' AS note, [1, 2]::BIGINT[] AS nums,
      {'a': 1::BIGINT, 'b': 'x'} AS s, 1::BIGINT AS ts, '2024-01-01' AS dt) TO '${parquet}' (FORMAT parquet)`);
    const table = join(dir, 't');
    await write(table, parquet, { format: 'parquet', operation: 'insert' });
    return table;
  }

  const row = (values: Record<string, unknown>) => ({
    id: 2,
    i: 1,
    f: 1.5,
    d: 2.5,
    price: 3.75,
    day: '2024-01-01',
    at: '2024-01-01T10:00:00Z',
    ok: true,
    note: 'x',
    nums: [1],
    s: { a: 1, b: 'x' },
    ts: 2,
    dt: '2024-01-01',
    ...values,
  });

  it('refuses each value a cast would change, naming row, column, value and what it would become', async () => {
    const table = await typedTable();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ i: 3000000000 }, /column "i": 3000000000 \(BIGINT\) does not fit the table's type INTEGER exactly \(it cannot be converted\)/],
      [{ i: 2.5 }, /column "i": 2\.5 \(DOUBLE\) does not fit the table's type INTEGER exactly \(it would be stored as 2\)/],
      [{ id: '1_000' }, /column "id": 1_000 \(VARCHAR\) does not fit the table's type BIGINT exactly \(it would be stored as 1000\)/],
      [{ price: 1.234 }, /column "price": 1\.234 \(DOUBLE\) does not fit the table's type DECIMAL\(10,2\) exactly \(it would be stored as 1\.23\)/],
      [{ price: '1.005' }, /column "price": 1\.005 \(VARCHAR\) does not fit the table's type DECIMAL\(10,2\) exactly \(it would be stored as 1\.01\)/],
      [{ price: 123456789012 }, /column "price": 123456789012 \(BIGINT\) does not fit the table's type DECIMAL\(10,2\) exactly \(it cannot be converted\)/],
      [
        { day: '2024-01-01 12:34' },
        /column "day": 2024-01-01 12:34 \(VARCHAR\) does not fit the table's type DATE exactly \(it would be stored as 2024-01-01\)/,
      ],
      [
        { at: '2024-01-01 12:00:00.1234567' },
        /column "at": 2024-01-01 12:00:00\.1234567 \(VARCHAR\) does not fit the table's type TIMESTAMP WITH TIME ZONE exactly \(it would be stored as 2024-01-01 12:00:00\.123456\+00\)/,
      ],
      [{ ok: 'yes' }, /column "ok": yes \(VARCHAR\) does not fit the table's type BOOLEAN exactly \(it would be stored as true\)/],
      [{ ok: 2 }, /column "ok": 2 \(BIGINT\) does not fit the table's type BOOLEAN exactly \(it would be stored as true\)/],
      [{ f: 1e39 }, /column "f": 1e\+39 \(DOUBLE\) does not fit the table's type FLOAT exactly \(it cannot be converted\)/],
      [{ f: 16777217 }, /column "f": 16777217 \(BIGINT\) does not fit the table's type FLOAT exactly \(it would be stored as 16777216\.0\)/],
      [{ nums: [1, 2.5] }, /column "nums": \[1\.0, 2\.5\] \(DOUBLE\[\]\) does not fit the table's type BIGINT\[\] exactly/],
      [
        { s: { a: 1.5, b: 'x' } },
        /column "s": \{'a': 1\.5, 'b': x\} \(STRUCT\("a" DOUBLE, "b" VARCHAR\)\) does not fit the table's type STRUCT\("a" BIGINT, "b" VARCHAR\) exactly/,
      ],
    ];
    for (const [values, message] of cases) {
      await assertRefused(table, () => write(table, [row(values)]), new RegExp(`^.*: row 1, ${message.source}`));
    }
  });

  it('adds struct fields the table lacks, and refuses struct fields the input lacks unless NULL is asked for', async () => {
    const table = await typedTable();
    // Hudi evolves the nested record: s.c is appended to s's fields, rows written before read it as NULL.
    await write(table, [row({ s: { a: 1, b: 'x', c: 2 } })]);
    assert.deepEqual(
      (await rows(table)).map((r) => r['s']),
      [
        { a: 1, b: 'x', c: null },
        { a: 1, b: 'x', c: 2 },
      ],
    );
    const field = (await (await HudiTable.open(openStorage(table))).requireSchema('reading it')).schema.fields.find((f) => f.name === 's');
    assert.ok(field !== undefined, 'the schema has the struct column s');
    const record = (field.type as unknown[])[1] as { fields: { name: string; type: unknown }[] };
    assert.deepEqual(
      record.fields.map((f) => [f.name, f.type]),
      [
        ['a', ['null', 'long']],
        ['b', ['null', 'string']],
        ['c', ['null', 'long']],
      ],
    );
    await assertRefused(table, () => write(table, [row({ s: { a: 1 } })]), /input lacks table column\(s\) s\.b, s\.c, which would be stored as NULL/);
    await write(table, [row({ id: 3, s: { a: 1 } })], { props: { 'hoodie.write.set.null.for.missing.columns': 'true' } });
    assert.deepEqual((await rows(table)).find((r) => r['id'] === 3)?.['s'], { a: 1, b: null, c: null });
  });

  it('stores values that convert exactly, and fractional numbers in float columns as their nearest float', async () => {
    const table = await typedTable();
    await write(table, [
      row({
        id: 7,
        i: 7.0,
        f: 0.1,
        d: 0.1,
        price: '3.10',
        day: '2024-02-29',
        at: '2024-01-01 12:00:00.123456',
        ok: 'TRUE',
        note: '007',
        nums: [3, 4.0],
        s: { a: 2, b: '2024-01-01T00:00:00' },
      }),
    ]);
    const stored = (await rows(table)).find((r) => r['id'] === 7)!;
    assert.deepEqual(
      {
        i: stored['i'],
        d: stored['d'],
        price: stored['price'],
        day: stored['day'],
        ok: stored['ok'],
        note: stored['note'],
        nums: stored['nums'],
        s: stored['s'],
      },
      { i: 7, d: 0.1, price: '3.10', day: '2024-02-29', ok: true, note: '007', nums: [3, 4], s: { a: 2, b: '2024-01-01T00:00:00' } },
    );
    assert.equal(stored['f'], 0.1, 'the nearest FLOAT, which reads back as 0.1');
    assert.equal(stored['at'], '2024-01-01T12:00:00.123456Z');
  });
});

describe('writer input: Parquet inputs', () => {
  it("a Parquet input's rows are the batch in file order (a tie on the precombine value goes to the later row), a column named file_row_number is data", async () => {
    const dir = tempDir();
    const parquet = join(dir, 'in.parquet');
    // Row groups of 2 rows, so the file's row numbers run across row groups.
    await duckdb(`COPY (SELECT (range % 3)::BIGINT AS id, 'v' || range AS name, 7::BIGINT AS ts, '2024-01-01' AS dt, 100 - range AS file_row_number
      FROM range(9) ORDER BY range) TO '${parquet}' (FORMAT parquet, ROW_GROUP_SIZE 2)`);
    const table = join(dir, 't');
    const result = await write(table, parquet, { format: 'parquet', operation: 'upsert' });
    assert.equal(result.inserted, 3);
    const stored = (await rows(table)).map((row) => [row['id'], row['name'], row['file_row_number']]);
    assert.deepEqual(stored, [
      [0, 'v6', 94],
      [1, 'v7', 93],
      [2, 'v8', 92],
    ]);
  });
});

describe('writer input: empty inputs', () => {
  it('an empty input makes an empty commit, as Hudi does by default (hoodie.allow.empty.commit=true)', async () => {
    const table = await baseTable();
    const empty = join(tempDir(), 'empty.jsonl');
    writeFileSync(empty, '');
    const before = await rows(table);
    const result = await write(table, empty);
    assert.deepEqual([result.inserted, result.updated, result.stats.length], [0, 0, 0]);
    assert.ok(existsSync(join(table, `.hoodie/${result.instantTime}.commit`)));
    assert.deepEqual(JSON.parse(readFileSync(join(table, `.hoodie/${result.instantTime}.commit`), 'utf8')).partitionToWriteStats, {});
    assert.deepEqual(await rows(table), before);
  });

  it('with hoodie.allow.empty.commit=false nothing is written; a new table is never created from an empty input', async () => {
    const table = await baseTable();
    const empty = join(tempDir(), 'empty.jsonl');
    writeFileSync(empty, '');
    await assertRefused(
      table,
      () => write(table, empty, { props: { 'hoodie.allow.empty.commit': 'false' } }),
      /the input has no records and hoodie\.allow\.empty\.commit=false/,
    );
    const csvHeaderOnly = join(tempDir(), 'header.csv');
    writeFileSync(csvHeaderOnly, 'id,name,ts,note,dt\n');
    await assertRefused(
      table,
      () => write(table, csvHeaderOnly, { format: 'csv', props: { 'hoodie.allow.empty.commit': 'false' } }),
      /the input has no records/,
    );
    const dir = tempDir();
    await assertRefused(join(dir, 't'), () => write(join(dir, 't'), empty), /the input has no records, so there is nothing to create the table from/);
    assert.deepEqual(readdirSync(dir), []);
  });
});

describe('writer input: hoodie.properties', () => {
  const propertiesFile = (table: string) => join(table, '.hoodie/hoodie.properties');
  /** The file cut after `hoodie.table.partition.fields`: no key generator, no hive-style flag, no checksum. */
  function truncate(table: string): string {
    const text = readFileSync(propertiesFile(table), 'utf8');
    const cut = text.slice(0, text.indexOf('\n', text.indexOf('hoodie.table.partition.fields=')) + 1);
    assert.doesNotMatch(cut, /keygenerator|hive_style|checksum/);
    writeFileSync(propertiesFile(table), cut);
    return text;
  }

  it('a truncated hoodie.properties is refused by reads and writes, never used', async () => {
    // Hudi 0.15 takes a file without a checksum as it is (and then fails or writes another layout); tables of version
    // 4 and later always have one, so this build refuses it.
    const table = await baseTable({ 'hoodie.datasource.write.hive_style_partitioning': 'true' });
    truncate(table);
    const problem =
      /hoodie\.properties is corrupt: hoodie\.table\.checksum is missing \(Hudi writes it into every table of version 4 and later: the file is truncated or was edited\), and there is no hoodie\.properties\.backup/;
    await assert.rejects(HudiTable.open(openStorage(table)), problem);
    await assertRefused(
      table,
      () => write(table, [{ id: 3, name: 'c', ts: 1, note: 'z', dt: 'p1' }], { props: { 'hoodie.datasource.write.hive_style_partitioning': 'true' } }),
      problem,
      HudiError,
    );
  });

  it('a checksum that does not match the table name is refused (Hudi: "hoodie.properties file seems invalid")', async () => {
    const table = await baseTable();
    writeFileSync(propertiesFile(table), readFileSync(propertiesFile(table), 'utf8').replace('hoodie.table.name=t\n', 'hoodie.table.name=u\n'));
    await assertRefused(
      table,
      () => write(table, BASE),
      /hoodie\.properties is corrupt: hoodie\.table\.checksum \d+ does not match the table name \(expected \d+\)/,
      HudiError,
    );
  });

  it('with a whole hoodie.properties.backup, the backup is read instead, as Hudi reads it', async () => {
    const table = await baseTable({ 'hoodie.datasource.write.hive_style_partitioning': 'true' });
    const whole = truncate(table);
    writeFileSync(join(table, '.hoodie/hoodie.properties.backup'), whole);
    const opened = await HudiTable.open(openStorage(table));
    assert.equal(opened.config.hiveStylePartitioning, true);
    assert.deepEqual(
      (await rows(table)).map((r) => r['id']),
      [1, 2],
    );
    // The write keeps the table's one layout: dt=<value> folders.
    const result = await write(table, [{ id: 3, name: 'c', ts: 1, note: 'z', dt: 'p1' }]);
    assert.deepEqual(
      result.stats.map((s) => s.partitionPath),
      ['dt=p1'],
    );
    assert.deepEqual(
      readdirSync(table)
        .filter((name) => !name.startsWith('.'))
        .sort(),
      ['dt=p1', 'dt=p2'],
    );
  });
});

describe('writer input: column names a Hudi table cannot hold (ColumnNameError)', () => {
  /** Refused with a ColumnNameError naming exactly `columns`, nothing written. */
  async function assertNames(table: string, attempt: () => Promise<unknown>, columns: readonly string[], message: RegExp): Promise<void> {
    await assertRefused(table, attempt, message, ColumnNameError);
    await attempt().catch((error: unknown) => {
      assert.ok(error instanceof ColumnNameError);
      assert.deepEqual([...error.columns].sort(), [...columns].sort());
    });
  }

  // Spark 3.5 (spark.sql.caseSensitive=false) refuses such a schema as duplicate columns; DuckDB would rename one of
  // them name_1, which no input named.
  it('refuses names equal but for case, in JSON, CSV and Parquet inputs, at the top and inside structs', async () => {
    const fresh = join(tempDir(), 't');
    await assertNames(fresh, () => write(fresh, [{ id: 1, ts: 1, dt: 'p1', Name: 'a', name: 'b' }]), ['Name', 'name'], /"Name" and "name" differ only in case/);
    // On different rows too: DuckDB unites them as it reads.
    await assertNames(
      fresh,
      () =>
        write(fresh, [
          { id: 1, ts: 1, dt: 'p1', x: 1 },
          { id: 2, ts: 1, dt: 'p1', X: 2 },
        ]),
      ['x', 'X'],
      /"x" and "X"/,
    );
    await assertNames(fresh, () => write(fresh, [{ id: 1, ts: 1, dt: 'p1', s: { A: 1, a: 2 } }]), ['s.A', 's.a'], /"s\.A" and "s\.a" differ only in case/);
    const csv = join(tempDir(), 'input.csv');
    writeFileSync(csv, 'id,ts,dt,Name,name\n1,1,p1,a,b\n');
    await assertNames(fresh, () => write(fresh, csv, { format: 'csv' }), ['Name', 'name'], /"Name" and "name" differ only in case/);
  });

  it('a column named like a table column in another case is refused, not added beside it', async () => {
    const table = await baseTable();
    await assertNames(table, () => write(table, [{ id: 3, ts: 1, note: 'z', dt: 'p1', name: 'c', NAME: 'd' }]), ['name', 'NAME'], /"name" and "NAME"/);
    // With NULL for missing columns, "Name" would otherwise become a second column beside the table's "name".
    await assertNames(
      table,
      () => write(table, [{ id: 3, ts: 1, note: 'z', dt: 'p1', Name: 'c' }], { props: { 'hoodie.write.set.null.for.missing.columns': 'true' } }),
      ['name', 'Name'],
      /"name" and "Name" differ only in case.*spell it as the table does/,
    );
  });

  // Hudi 0.15 turns the batch's schema into Avro (AvroConversionUtils), whose Schema.Field refuses such names; a commit
  // recording one could no longer be parsed by Spark's Hudi reader.
  for (const name of ['a.b', 'c d', 'e-f', '1g', 'é', '']) {
    it(`refuses the column name ${JSON.stringify(name)}, which is not an Avro name`, async () => {
      const table = await baseTable();
      await assertNames(
        table,
        () => write(table, [{ ...BASE[0], id: 3, [name]: 1 }]),
        [name],
        /(is not a valid Avro name|a column has an empty name).*an Avro name starts with a letter or "_"/,
      );
      const fresh = join(tempDir(), 't');
      await assertNames(fresh, () => write(fresh, [{ ...BASE[0], [name]: 1 }]), [name], /is not a valid Avro name|a column has an empty name/);
      assert.equal(existsSync(fresh), false, 'no table was created');
    });
  }

  it('refuses a struct field that is not an Avro name, naming its path', async () => {
    const fresh = join(tempDir(), 't');
    await assertNames(fresh, () => write(fresh, [{ ...BASE[0], s: [{ 'x-y': 1 }] }]), ['s.x-y'], /"s\.x-y" is not a valid Avro name/);
  });

  it("refuses Hudi's meta field names in another case; the meta fields themselves are Hudi's and left out, as before", async () => {
    const table = await baseTable();
    await assertNames(
      table,
      () => write(table, [{ ...BASE[0], id: 3, _HOODIE_COMMIT_TIME: 'x', _Hoodie_Record_Key: 'y' }]),
      ['_HOODIE_COMMIT_TIME', '_Hoodie_Record_Key'],
      /"_HOODIE_COMMIT_TIME" is Hudi's meta field _hoodie_commit_time in another case/,
    );
    await write(table, [{ ...BASE[0], id: 3, _hoodie_commit_time: 'x', _hoodie_is_deleted: false }]);
    const stored = (await rows(table)).find((r) => r['id'] === 3)!;
    assert.equal('_hoodie_commit_time' in stored, false);
    assert.equal(stored['_hoodie_is_deleted'], false, '_hoodie_is_deleted is a user column');
  });

  it('a column really named name_1 beside name is written (DuckDB renames only duplicates)', async () => {
    const fresh = join(tempDir(), 't');
    await write(fresh, [{ id: 1, ts: 1, dt: 'p1', name: 'a', name_1: 'b' }]);
    assert.deepEqual(
      (await rows(fresh)).map((r) => [r['name'], r['name_1']]),
      [['a', 'b']],
    );
  });
});

describe("writer input: CSV cells are strings unless the table types them, as Spark's CSV reader reads them", () => {
  it('a new table from CSV has string columns only; a table typed by JSON takes CSV cells as its types', async () => {
    const csv = join(tempDir(), 'input.csv');
    writeFileSync(csv, 'id,name,ts,note,dt\n1,007,2,2024-01-01T10:00:00Z,2024-01-01\n2,true,3,1.50,2024-01-02\n');
    const fresh = join(tempDir(), 't');
    await write(fresh, csv, { format: 'csv' });
    const schema = (await (await HudiTable.open(openStorage(fresh))).schema())!.schema;
    assert.deepEqual(
      schema.fields.map((field) => [field.name, field.type]),
      ['id', 'name', 'ts', 'note', 'dt'].map((name) => [name, ['null', 'string']]),
    );
    assert.deepEqual(
      (await rows(fresh)).map((row) => [row['id'], row['name'], row['ts'], row['note'], row['dt']]),
      [
        ['1', '007', '2', '2024-01-01T10:00:00Z', '2024-01-01'],
        ['2', 'true', '3', '1.50', '2024-01-02'],
      ],
    );
    const typed = await baseTable();
    const update = join(tempDir(), 'update.csv');
    writeFileSync(update, 'id,name,ts,note,dt\n1,007,2,x,p1\n');
    await write(typed, update, { format: 'csv' });
    assert.deepEqual(
      (await rows(typed)).map((row) => [row['id'], row['name'], row['ts']]),
      [
        [1, '007', 2],
        [2, 'b', 1],
      ],
    );
  });
});

describe('writer input: a malformed JSON line is named by its own line number', () => {
  const good = (id: number) => JSON.stringify({ id, name: 'n', ts: 1, note: 'x', dt: 'p1' });

  it('a truncated line 3 is line 3 (DuckDB names the line after it), on a new table and an existing one', async () => {
    const dir = tempDir();
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, `${good(1)}\n${good(2)}\n{"id": 3, "name": "c"\n${good(4)}\n`);
    const fresh = join(dir, 't');
    const message = /bad\.jsonl: cannot read the input as jsonl: line 3 is not one JSON object: .*\(column \d+\)/;
    await assertRefused(fresh, () => write(fresh, file), message);
    const table = await baseTable();
    await assertRefused(table, () => write(table, file), message);
  });

  it('a bad line past the lines DuckDB samples for types is named too', async () => {
    const file = join(tempDir(), 'late.jsonl');
    const lines = Array.from({ length: 25_000 }, (_, i) => good(i + 1));
    lines[23_999] = '{"id": 24000, "name": "x",, "ts": 1}';
    writeFileSync(file, `${lines.join('\n')}\n`);
    const table = await baseTable();
    await assertRefused(table, () => write(table, file), /late\.jsonl: cannot read the input as jsonl: line 24000 is not one JSON object/);
  });
});

describe('writer input: nesting beyond MAX_NESTING_DEPTH is refused at the schema gate', () => {
  /** One JSON line whose column `n` nests `depth` structs (or lists of structs) around a number, as text. */
  function nested(depth: number, id: number, list = false): string {
    const file = join(tempDir(), `nested-${depth}.jsonl`);
    const open = list ? '[{"a":' : '{"a":';
    const close = list ? '}]' : '}';
    writeFileSync(file, `{"id":${id},"name":"n","ts":1,"note":"x","dt":"p1","n":${open.repeat(depth)}1${close.repeat(depth)}}\n`);
    return file;
  }

  // 30,000 deep once crashed DuckDB's JSON reader (the process died) before any gate saw the types.
  for (const depth of [300, 3000, 30_000]) {
    it(`a struct nested ${depth} deep is refused, naming the limit, on a new table and an existing one`, async () => {
      const fresh = join(tempDir(), 't');
      const limit = new RegExp(`column "n\\.a\\.a.*" is nested ${depth} levels deep, beyond the ${MAX_NESTING_DEPTH} levels a table takes .*flatten the value`);
      await assertRefused(fresh, () => write(fresh, nested(depth, 1)), limit, NestingDepthError);
      const table = await baseTable({ 'hoodie.write.set.null.for.missing.columns': 'true' });
      await assertRefused(
        table,
        () => write(table, nested(depth, 1), { props: { 'hoodie.write.set.null.for.missing.columns': 'true' } }),
        limit,
        NestingDepthError,
      );
    });
  }

  it(`${MAX_NESTING_DEPTH} levels are written and upserted (lists count as levels too: one more is refused)`, async () => {
    const table = join(tempDir(), 't');
    await write(table, nested(MAX_NESTING_DEPTH, 1), { operation: 'insert' });
    await write(table, nested(MAX_NESTING_DEPTH, 1));
    await write(table, nested(MAX_NESTING_DEPTH, 2));
    assert.deepEqual(
      (await rows(table)).map((row) => row['id']),
      [1, 2],
    );
    const lists = join(tempDir(), 't');
    await assertRefused(lists, () => write(lists, nested(MAX_NESTING_DEPTH / 2 + 1, 1, true)), /nested 102 levels deep/, NestingDepthError);
  });
});

describe('writer input: no cast changes what kind of value it is', () => {
  async function numericTable(): Promise<string> {
    const dir = tempDir();
    const parquet = join(dir, 'typed.parquet');
    await duckdb(`COPY (SELECT 1::BIGINT AS id, 1::BIGINT AS n, 1.5::DOUBLE AS d, 1.5::DECIMAL(10,2) AS m, true AS ok, 'x' AS note,
      DATE '2024-01-01' AS day, 1::BIGINT AS ts, 'p1' AS dt) TO '${parquet}' (FORMAT parquet)`);
    const table = join(dir, 't');
    await write(table, parquet, { format: 'parquet', operation: 'insert' });
    return table;
  }
  const row = (values: Record<string, unknown>) => ({ id: 2, n: 1, d: 1.5, m: 1.5, ok: true, note: 'x', day: '2024-01-01', ts: 2, dt: 'p1', ...values });

  it('refuses booleans into numbers, numbers into booleans, booleans into text, numbers into dates', async () => {
    const table = await numericTable();
    const cases: [Record<string, unknown>, RegExp][] = [
      // A column of booleans only: DuckDB would store 1 and 0.
      [{ n: true }, /column "n": true \(BOOLEAN\) does not fit the table's type BIGINT exactly \(it would be stored as 1\)/],
      [{ d: false }, /column "d": false \(BOOLEAN\) does not fit the table's type DOUBLE exactly \(it would be stored as 0\.0\)/],
      [{ m: true }, /column "m": true \(BOOLEAN\) does not fit the table's type DECIMAL\(10,2\) exactly/],
      [{ ok: 1 }, /column "ok": 1 \(BIGINT\) does not fit the table's type BOOLEAN exactly \(it would be stored as true\)/],
      [{ ok: 0.0 }, /column "ok": 0 \(BIGINT\) does not fit the table's type BOOLEAN exactly \(it would be stored as false\)/],
    ];
    for (const [values, message] of cases) {
      await assertRefused(table, () => write(table, [row(values)]), new RegExp(`row 1, ${message.source}`));
    }
    const parquet = join(tempDir(), 'kinds.parquet');
    await duckdb(`COPY (SELECT 2::BIGINT AS id, 1::BIGINT AS n, 1.5::DOUBLE AS d, 1.5::DECIMAL(10,2) AS m, true AS ok, true AS note,
      DATE '2024-01-01' AS day, 2::BIGINT AS ts, 'p1' AS dt) TO '${parquet}' (FORMAT parquet)`);
    await assertRefused(table, () => write(table, parquet, { format: 'parquet' }), /column "note": true \(BOOLEAN\) does not fit the table's type VARCHAR/);
    await duckdb(`COPY (SELECT 2::BIGINT AS id, 1::BIGINT AS n, 1.5::DOUBLE AS d, 1.5::DECIMAL(10,2) AS m, true AS ok, 'x' AS note,
      DATE '2024-01-01' AS day, 2::BIGINT AS ts, 'p1' AS dt, 1::BIGINT AS extra) TO '${parquet}' (FORMAT parquet)`);
    await write(table, parquet, { format: 'parquet' });
    await duckdb(`COPY (SELECT 3::BIGINT AS id, 1::BIGINT AS n, 1.5::DOUBLE AS d, 1.5::DECIMAL(10,2) AS m, true AS ok, 'x' AS note,
      20240101::BIGINT AS day, 2::BIGINT AS ts, 'p1' AS dt, 1::BIGINT AS extra) TO '${parquet}' (FORMAT parquet)`);
    await assertRefused(table, () => write(table, parquet, { format: 'parquet' }), /column "day": 20240101 \(BIGINT\) does not fit the table's type DATE/);
  });

  it('keeps the widenings that change no value: whole numbers into DOUBLE and DECIMAL, numbers into text', async () => {
    const table = await numericTable();
    await write(table, [row({ id: 5, d: 2, m: 3, note: 7 })]);
    const stored = (await rows(table)).find((r) => r['id'] === 5)!;
    assert.deepEqual([stored['d'], stored['m'], stored['note']], [2, '3.00', '7']);
  });
});

describe("writer input: a new table's JSON strings stay strings, as Spark's JSON reader keeps them", () => {
  async function schemaTypes(table: string): Promise<Record<string, unknown>> {
    const { schema } = await (await HudiTable.open(openStorage(table))).requireSchema('reading it');
    return Object.fromEntries(schema.fields.map((field) => [field.name, (field.type as unknown[])[1]]));
  }

  it('dates, timestamps, times and UUIDs in JSON strings are text in a new table and in new columns', async () => {
    const fresh = join(tempDir(), 't');
    const text = { day: '2026-11-01', at: '2026-11-01 10:00:00', clock: '10:00:00', uuid: '6ba7b810-9dad-11d1-80b4-00c04fd430c8' };
    await write(fresh, [{ id: 1, ts: 1, dt: '2026-11-01', ...text, nested: [{ d: '2026-11-01' }] }]);
    const types = await schemaTypes(fresh);
    for (const column of ['dt', 'day', 'at', 'clock', 'uuid']) assert.equal(types[column], 'string', column);
    assert.deepEqual((types['nested'] as { items: unknown[] }).items[1], {
      type: 'record',
      name: 'nested',
      namespace: 'hoodie.t.t_record',
      fields: [{ name: 'd', type: ['null', 'string'], default: null }],
    });
    const [stored] = await rows(fresh);
    assert.deepEqual({ ...stored, nested: undefined }, { id: 1, ts: 1, dt: '2026-11-01', ...text, nested: undefined });
    // An added column is text too; a column the table has as DATE still takes dates.
    await write(fresh, [{ id: 2, ts: 1, dt: '2026-11-02', ...text, nested: [], later: '2026-12-01' }]);
    assert.equal((await schemaTypes(fresh))['later'], 'string');
  });

  it('whole numbers of both signs are a long column, as Spark infers them (DuckDB would make them HUGEINT)', async () => {
    const fresh = join(tempDir(), 't');
    await write(fresh, [
      { id: 1, ts: 1, dt: 'p1', n: 5 },
      { id: 2, ts: 1, dt: 'p1', n: -3 },
    ]);
    assert.equal((await schemaTypes(fresh))['n'], 'long');
    assert.deepEqual(
      (await rows(fresh)).map((r) => r['n']),
      [5, -3],
    );
  });

  // Found by test/writer/fuzz.test.ts: DuckDB types a struct field that is null in every row as JSON, and its text of
  // the struct type hid that, so the batch kept the JSON field and the merge with the stored text failed to parse it.
  it('a struct field null in every row of an upsert merges with the stored text', async () => {
    const fresh = join(tempDir(), 't');
    await write(fresh, [
      { id: 1, ts: 1, dt: 'p1', o: { x: 1, y: ' spaced ' } },
      { id: 2, ts: 1, dt: 'p1', o: { x: 2, y: 'b' } },
    ]);
    await write(fresh, [{ id: 2, ts: 2, dt: 'p1', o: { x: 3, y: null } }]);
    assert.deepEqual(
      (await rows(fresh)).map((r) => r['o']),
      [
        { x: 1, y: ' spaced ' },
        { x: 3, y: null },
      ],
    );
  });

  it('a table column typed DATE takes JSON date strings', async () => {
    const dir = tempDir();
    const parquet = join(dir, 'typed.parquet');
    await duckdb(`COPY (SELECT 1::BIGINT AS id, DATE '2024-01-01' AS day, 1::BIGINT AS ts, 'p1' AS dt) TO '${parquet}' (FORMAT parquet)`);
    const table = join(dir, 't');
    await write(table, parquet, { format: 'parquet', operation: 'insert' });
    await write(table, [{ id: 2, day: '2024-02-29', ts: 1, dt: 'p1' }]);
    assert.deepEqual(
      (await rows(table)).map((r) => r['day']),
      ['2024-01-01', '2024-02-29'],
    );
    assert.deepEqual((await schemaTypes(table))['day'], { type: 'int', logicalType: 'date' });
  });
});

describe('writer input: the input path is one literal file', () => {
  it('reads a file whose name holds glob characters as that file, not as a pattern', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a[1].jsonl'), `${JSON.stringify({ ...BASE[0], id: 10 })}\n`);
    writeFileSync(join(dir, 'a1.jsonl'), `${JSON.stringify({ ...BASE[0], id: 11 })}\n`);
    const table = join(dir, 't');
    await write(table, join(dir, 'a[1].jsonl'));
    assert.deepEqual(
      (await rows(table)).map((r) => r['id']),
      [10],
    );
  });

  it('refuses a pattern that names no file, though files match it, and a missing file, before anything is written', async () => {
    const dir = tempDir();
    for (const id of [1, 2]) writeFileSync(join(dir, `a${id}.jsonl`), `${JSON.stringify({ ...BASE[0], id })}\n`);
    const table = await baseTable();
    await assertRefused(
      table,
      () => write(table, join(dir, 'a*.jsonl')),
      /no input file has this name \(the path is read as it is spelled, never as a pattern\)/,
    );
    await assertRefused(table, () => write(table, join(dir, 'missing.jsonl')), /missing\.jsonl: no input file has this name/);
    await assertRefused(table, () => write(table, dir), /the input is not a file/);
    const fresh = join(dir, 't');
    await assertRefused(fresh, () => write(fresh, join(dir, 'a?.jsonl')), /never as a pattern/);
    assert.equal(existsSync(fresh), false);
  });
});

describe('writer input: a delete needs only the record key and partition fields, as Hudi', () => {
  for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ'] as const) {
    it(`${type}: a delete of keys alone removes the records; without a partition field it is refused`, async () => {
      const table = await baseTable({ 'hoodie.datasource.write.table.type': type });
      const props = { 'hoodie.datasource.write.table.type': type };
      await assertRefused(
        table,
        () => write(table, [{ id: 1 }], { operation: 'delete', props }),
        /a delete input lacks the record key or partition field\(s\) dt/,
      );
      await write(table, [{ id: 1, dt: 'p1' }], { operation: 'delete', props });
      assert.deepEqual(
        (await rows(table)).map((r) => [r['id'], r['name']]),
        [[2, 'b']],
      );
      // An upsert still needs every column.
      await assertRefused(table, () => write(table, [{ id: 2, dt: 'p2', ts: 2 }], { props }), /input lacks table column\(s\) name, note/);
    });
  }
});
