/**
 * The key generators and types matrix on tables Hudi 1.0.2 and 1.1.1 write (issue 42), judged by that release on
 * Spark 3.5.1 (one JVM per release). Spark inserts into one table per key generator (complex keys over two
 * partition levels, timestamp-based, custom, non-partitioned; copy-on-write and merge-on-read) and a table of many
 * types; we read each as Spark reads it (snapshot, read-optimized, hudi-rs); our upsert and delete, then our
 * clustering (copy-on-write) or compaction (merge-on-read); Spark upserts on top; Spark reads the same rows with the
 * metadata table on and off and so do we, no key twice, and the metadata table agrees with storage. The custom key
 * generator's table stores its partition types but not its timestamp keys: our writes pass those, as Spark's do.
 * The types table's DECIMAL(38,10) holds values beyond decimal(30, 15): 1.1 indexes it (at its own scale), 1.0 does not.
 *
 * Two Spark writes per table: ten per release.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS } from '../helpers/hudi-1x-fixtures.js';
import { parquetInput } from '../helpers/interop-writer.js';
import { assertMetadata1xAgrees } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

const KEYGEN = 'org.apache.hudi.keygen.';
const SCHEMA = 'id BIGINT, kind STRING, name STRING, ts BIGINT, region STRING, event STRING';
type KeyRow = { id: number; kind: string; name: string; ts: number; region: string; event: string };

/** Row `id` as write `v` has it: `name` says which write, `ts` orders them; the key and partition fields never change. */
const keyRows = (ids: readonly number[], v: number): KeyRow[] =>
  ids.map((id) => ({
    id,
    kind: id % 3 === 0 ? 'b' : 'a',
    name: `v${v}-${id}`,
    ts: v,
    region: id % 2 === 0 ? 'eu' : 'us',
    event: `2024-01-0${(id % 3) + 1} 1${id % 10}:00:00`,
  }));

const COMMON = {
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.embed.timeline.server': 'false',
  'hoodie.parquet.small.file.limit': '0',
  'hoodie.clean.automatic': 'false',
  'hoodie.archive.automatic': 'false',
  'hoodie.insert.shuffle.parallelism': '1',
  'hoodie.upsert.shuffle.parallelism': '1',
};
const TIMESTAMP_KEYS = {
  'hoodie.keygen.timebased.timestamp.type': 'DATE_STRING',
  'hoodie.keygen.timebased.input.dateformat': 'yyyy-MM-dd HH:mm:ss',
  'hoodie.keygen.timebased.output.dateformat': 'yyyy/MM/dd',
  'hoodie.keygen.timebased.timezone': 'UTC',
};

interface KeyCase {
  readonly name: string;
  readonly type: 'COPY_ON_WRITE' | 'MERGE_ON_READ';
  readonly options: Record<string, string>;
  /** The metadata table stays on (1.x's default) unless the case turns it off. */
  readonly metadata: boolean;
  /** How hudi-rs fails on the table, when it cannot read it. */
  readonly hudiRsRefuses?: RegExp;
}

const KEY_CASES: readonly KeyCase[] = [
  {
    name: 'complex',
    type: 'COPY_ON_WRITE',
    metadata: true,
    options: {
      'hoodie.datasource.write.keygenerator.class': `${KEYGEN}ComplexKeyGenerator`,
      'hoodie.datasource.write.recordkey.field': 'id,kind',
      'hoodie.datasource.write.partitionpath.field': 'region,event',
      'hoodie.datasource.write.hive_style_partitioning': 'true',
      'hoodie.datasource.write.partitionpath.urlencode': 'true',
    },
  },
  {
    name: 'timestamp',
    type: 'MERGE_ON_READ',
    metadata: true,
    options: {
      'hoodie.datasource.write.keygenerator.class': `${KEYGEN}TimestampBasedKeyGenerator`,
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.partitionpath.field': 'event',
      ...TIMESTAMP_KEYS,
    },
  },
  {
    name: 'custom',
    type: 'COPY_ON_WRITE',
    metadata: true,
    options: {
      'hoodie.datasource.write.keygenerator.class': `${KEYGEN}CustomKeyGenerator`,
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.partitionpath.field': 'region:SIMPLE,event:TIMESTAMP',
      ...TIMESTAMP_KEYS,
      // Not yyyy/MM/dd: Spark then cannot read its own table (a partition path of four segments for two fields).
      'hoodie.keygen.timebased.output.dateformat': 'yyyyMMdd',
    },
    // hudi-rs takes hoodie.table.partition.fields for column names, types and all.
    hudiRsRefuses: /Partition field `region\\:SIMPLE` declared in `hoodie.table.partition.fields` is not present/,
  },
  {
    name: 'nonpartitioned',
    type: 'MERGE_ON_READ',
    metadata: false,
    options: {
      'hoodie.datasource.write.keygenerator.class': `${KEYGEN}NonpartitionedKeyGenerator`,
      'hoodie.datasource.write.recordkey.field': 'id,kind',
    },
  },
];

// ---- the types table ----

const TYPES_SCHEMA = [
  'id BIGINT',
  'part STRING',
  'ts BIGINT',
  'b BOOLEAN',
  'i8 TINYINT',
  'i16 SMALLINT',
  'i32 INT',
  'f32 FLOAT',
  'f64 DOUBLE',
  'dec_small DECIMAL(10,2)',
  'dec_large DECIMAL(38,10)',
  's STRING',
  'd DATE',
  'at TIMESTAMP',
  'bin BINARY',
  'ints ARRAY<INT>',
  'structs ARRAY<STRUCT<x: INT, y: STRING>>',
  'm MAP<STRING, STRUCT<p: DOUBLE, q: BOOLEAN>>',
  'nested STRUCT<a: INT, inner: STRUCT<b: STRING, c: ARRAY<BIGINT>, d: DATE>>',
].join(', ');
/** The same columns as DuckDB types, for our writes' Parquet input (bin read as base64 text, then decoded). */
const TYPES_DUCKDB: Record<string, string> = {
  id: 'BIGINT',
  part: 'VARCHAR',
  ts: 'BIGINT',
  b: 'BOOLEAN',
  i8: 'TINYINT',
  i16: 'SMALLINT',
  i32: 'INTEGER',
  f32: 'FLOAT',
  f64: 'DOUBLE',
  dec_small: 'DECIMAL(10,2)',
  dec_large: 'DECIMAL(38,10)',
  s: 'VARCHAR',
  d: 'DATE',
  at: 'TIMESTAMPTZ',
  bin: 'VARCHAR',
  ints: 'INTEGER[]',
  structs: 'STRUCT(x INTEGER, y VARCHAR)[]',
  m: 'MAP(VARCHAR, STRUCT(p DOUBLE, q BOOLEAN))',
  nested: 'STRUCT(a INTEGER, "inner" STRUCT(b VARCHAR, c BIGINT[], d DATE))',
};
const b64 = (bytes: number[]): string => Buffer.from(bytes).toString('base64');

/** Edge values Spark writes (arrays without null elements: parquet-avro's list form cannot hold one). */
const TYPES_ROWS: Record<string, unknown>[] = [
  {
    id: 1,
    part: 'a',
    ts: 1,
    b: true,
    i8: -128,
    i16: 32767,
    i32: -2147483648,
    f32: 1.1,
    f64: 'NaN',
    dec_small: '-12345678.90',
    dec_large: '-1234567890123456789012345678.0123456789',
    s: 'héllo ✓ 𝄞 "quoted"\n',
    d: '1969-12-31',
    at: '1969-12-31T23:59:59.999999Z',
    bin: b64([0, 255, 1, 128]),
    ints: [1, -2, 3],
    structs: [
      { x: 1, y: null },
      { x: null, y: 'z' },
    ],
    m: { k1: { p: 'Infinity', q: false }, k2: null, ключ: { p: -0.5, q: null } },
    nested: { a: 5, inner: { b: '', c: ['9007199254740993', '-9223372036854775808'], d: '1900-01-01' } },
  },
  {
    id: 2,
    part: 'b',
    ts: 1,
    b: null,
    i8: null,
    i16: null,
    i32: null,
    f32: null,
    f64: null,
    dec_small: null,
    dec_large: null,
    s: null,
    d: null,
    at: null,
    bin: null,
    ints: null,
    structs: null,
    m: null,
    nested: null,
  },
  {
    id: 3,
    part: 'b',
    ts: 1,
    b: false,
    i8: 127,
    i16: -32768,
    i32: 0,
    f32: '-Infinity',
    f64: -1e-300,
    dec_small: '0.01',
    dec_large: '99999999999999999999999999.9999999999',
    s: '',
    d: '1582-10-04',
    at: '1900-01-01T00:00:00.000Z',
    bin: '',
    ints: [],
    structs: [],
    m: {},
    nested: { a: null, inner: null },
  },
  {
    id: 4,
    part: 'a',
    ts: 1,
    b: true,
    i8: 1,
    i16: 1,
    i32: 2147483647,
    f32: 3.4028235e38,
    f64: 'Infinity',
    dec_small: '99999999.99',
    dec_large: '0.0000000001',
    s: '中文',
    d: '9999-12-31',
    at: '2262-04-11T23:47:16.854775Z',
    bin: b64([10]),
    ints: [0],
    structs: [{ x: 2, y: '' }],
    m: { '': { p: 'NaN', q: true } },
    nested: { a: 0, inner: { b: 'x', c: [], d: null } },
  },
];

/** Our upsert of the types table: row 2's nulls filled, row 3's values emptied, a new row 5. */
const OUR_TYPES_ROWS: Record<string, unknown>[] = [
  {
    ...TYPES_ROWS[1]!,
    ts: 2,
    b: true,
    i8: 7,
    i16: -7,
    i32: 70000,
    f32: 0.5,
    f64: -2.25,
    dec_small: '-0.01',
    dec_large: '-0.0000000001',
    s: 'was null',
    d: '0001-01-01',
    at: '0001-01-02T00:00:00.000001Z',
    bin: b64([7, 0, 7]),
    ints: [7],
    structs: [{ x: 7, y: 'seven' }],
    m: { z: null, y: { p: 1.5, q: true } },
    nested: { a: 7, inner: { b: 'b7', c: ['7'], d: '2024-02-29' } },
  },
  { ...TYPES_ROWS[2]!, ts: 2, b: null, structs: null, nested: null, m: null, s: null },
  {
    id: 5,
    part: 'c',
    ts: 2,
    b: false,
    i8: -1,
    i16: 2,
    i32: 3,
    f32: -5.5,
    f64: 6.25,
    dec_small: '7.00',
    dec_large: '8.0000000000',
    s: 'new',
    d: '2024-02-29',
    at: '2024-02-29T12:34:56.789Z',
    bin: b64([1, 2]),
    ints: [1, 2],
    structs: [{ x: 3, y: 'w' }],
    m: { a: { p: 1, q: false } },
    nested: { a: 9, inner: { b: 'y', c: [1], d: '2024-02-29' } },
  },
];

const TYPES_OPTIONS = {
  ...COMMON,
  'hoodie.table.name': 'types',
  'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'part',
};

// ---- reading ----

async function ourRead(path: string, queryType?: QueryType): Promise<Row[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true, ...(queryType === undefined ? {} : { queryType }) })).rows;
}

/** id → name as every reader reads the table: Spark (metadata table on and off), we, no key twice. */
async function readsAlike(hudi: HudiHarness, path: string, step: string, metadata: boolean): Promise<Map<number, string>> {
  if (metadata) await assertMetadata1xAgrees(hudi, path, step);
  const spark = (await hudi.read(path, { options: { 'hoodie.metadata.enable': String(metadata) } })).rows;
  if (!metadata) {
    const off = (await hudi.read(path, { options: { 'hoodie.metadata.enable': 'false' } })).rows;
    assert.deepEqual(canonicalRows(await ourRead(path)), canonicalRows(off), `${step}: our rows`);
  }
  const names = new Map(spark.map((r) => [Number(r['id']), String(r['name'])]));
  assert.equal(names.size, spark.length, `${step}: no key twice`);
  return names;
}

/** Our rows equal Spark's (metadata table on), snapshot and read-optimized, and hudi-rs's snapshot (or it refuses). */
async function readAsSpark(hudi: HudiHarness, path: string, hudiRsRefuses?: RegExp): Promise<void> {
  for (const queryType of ['snapshot', 'read_optimized'] as const) {
    const spark = (await hudi.read(path, { options: { 'hoodie.metadata.enable': 'true', 'hoodie.datasource.query.type': queryType } })).rows;
    assert.deepEqual(canonicalRows(await ourRead(path, queryType)), canonicalRows(spark), `${path}: ${queryType}`);
  }
  if (hudiRsRefuses !== undefined) await assert.rejects(hudi.hudiRsRead(path, { meta: true }), hudiRsRefuses);
  else assert.deepEqual(canonicalRows((await hudi.hudiRsRead(path, { meta: true })).rows), canonicalRows(await ourRead(path)), `${path}: hudi-rs`);
}

let inputs = 0;
/** Our write, with the key generator keys the table's Spark writes pass (a CustomKeyGenerator table stores none). */
async function ourWrite(path: string, operation: WriteOperation, rows: readonly Record<string, unknown>[], keyCase: KeyCase): Promise<void> {
  const input = join(tempDir('matrix-input-'), `batch-${++inputs}.jsonl`);
  writeFileSync(input, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
  const keygen = Object.entries(keyCase.options).filter(([key]) => key.startsWith('hoodie.keygen.'));
  const properties = new Map([['hoodie.metadata.enable', String(keyCase.metadata)], ...keygen]);
  await writeBatch(openStorage(path), { input: { file: input, format: 'jsonl' }, operation, properties });
}

async function ourClustering(path: string, engine: ParquetEngine, sortColumn: string): Promise<void> {
  const table = await HudiTable.open(openStorage(path), { mode: 'clustering' });
  const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
  const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': sortColumn } }).config;
  const run = await runClusteringJob(table, { mode: 'scheduleAndExecute', config, lock, engine, tempDir: tempDir('matrix-cluster-'), force: true });
  assert.ok(run.commit, `${path}: our clustering committed`);
}

async function ourCompaction(path: string, metadata: boolean): Promise<void> {
  const properties = new Map([
    ['hoodie.compact.inline.max.delta.commits', '1'],
    ['hoodie.metadata.enable', String(metadata)],
  ]);
  const table = await HudiTable.open(openStorage(path));
  const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
  const scheduled = await scheduleCompaction(table, compactionConfigFrom(properties, 'test'), { lock, properties });
  assert.ok(scheduled !== undefined, `${path}: our compaction scheduled`);
  const run = await runCompaction(await HudiTable.open(openStorage(path)), scheduled.instantTime, { lock, properties });
  assert.equal(run.outcome, 'committed');
}

for (const version of HUDI_1X_VERSIONS) {
  describe(`key generators and types on tables Hudi ${version} wrote, judged by Hudi ${version}`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    let engine: ParquetEngine;
    const root = tempDir(`hudi-${version}-matrix-`);
    const pathOf = (name: string) => join(root, name);
    const sparkOptions = (keyCase: KeyCase, operation: string) => ({
      ...COMMON,
      ...keyCase.options,
      'hoodie.table.name': keyCase.name,
      'hoodie.datasource.write.table.type': keyCase.type,
      'hoodie.metadata.enable': String(keyCase.metadata),
      'hoodie.datasource.write.operation': operation,
    });

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      // Hudi 1.x's Parquet files name no Spark version, so Spark 3.5 refuses their dates before 1582-10-15 and
      // timestamps before 1900 unless told how to read them; CORRECTED reads them as stored (proleptic Gregorian,
      // what Avro's date and timestamp types mean), as we and hudi-rs do.
      await hudi.sql('SET spark.sql.parquet.datetimeRebaseModeInRead=CORRECTED');
      engine = await openParquetEngine();
      for (const keyCase of KEY_CASES) {
        await hudi.write(pathOf(keyCase.name), { schema: SCHEMA, rows: keyRows([1, 2, 3, 4, 5, 6], 1), options: sparkOptions(keyCase, 'insert') });
      }
      await hudi.write(pathOf('types'), {
        schema: TYPES_SCHEMA,
        rows: TYPES_ROWS,
        options: { ...TYPES_OPTIONS, 'hoodie.datasource.write.operation': 'insert' },
      });
    });

    after(async () => {
      await engine?.close();
      await hudi?.close();
    });

    for (const keyCase of KEY_CASES) {
      it(`${keyCase.name} key generator, ${keyCase.type}, metadata table ${keyCase.metadata ? 'on' : 'off'}`, async () => {
        const path = pathOf(keyCase.name);
        await readAsSpark(hudi, path, keyCase.hudiRsRefuses);
        await ourWrite(path, 'upsert', keyRows([3, 4, 5, 6, 7, 8], 2), keyCase);
        await ourWrite(path, 'delete', keyRows([1], 2), keyCase);
        assert.deepEqual([...(await readsAlike(hudi, path, 'after our writes', keyCase.metadata)).keys()].sort(), [2, 3, 4, 5, 6, 7, 8]);
        if (keyCase.type === 'MERGE_ON_READ') await ourCompaction(path, keyCase.metadata);
        else await ourClustering(path, engine, 'name');
        await readsAlike(hudi, path, 'after our service', keyCase.metadata);
        await hudi.write(path, { schema: SCHEMA, rows: keyRows([2, 4, 9], 3), options: sparkOptions(keyCase, 'upsert') });
        const names = await readsAlike(hudi, path, "after Spark's upsert", keyCase.metadata);
        assert.deepEqual(
          [...names.entries()].sort(([a], [b]) => a - b),
          [
            [2, 'v3-2'],
            [3, 'v2-3'],
            [4, 'v3-4'],
            [5, 'v2-5'],
            [6, 'v2-6'],
            [7, 'v2-7'],
            [8, 'v2-8'],
            [9, 'v3-9'],
          ],
        );
      });
    }

    it('types: Spark writes, we read equal; our upsert and clustering, Spark upserts and reads equal', async () => {
      const path = pathOf('types');
      await readAsSpark(hudi, path);
      const jsonl = join(tempDir('matrix-types-'), 'types.jsonl');
      writeFileSync(jsonl, `${OUR_TYPES_ROWS.map((row) => JSON.stringify(row)).join('\n')}\n`);
      const columns = Object.entries(TYPES_DUCKDB)
        .map(([name, type]) => `${JSON.stringify(name)}: '${type}'`)
        .join(', ');
      const input = await parquetInput(
        tempDir('matrix-types-'),
        `SELECT * REPLACE (from_base64(bin) AS bin) FROM read_json('${jsonl}', format = 'newline_delimited', columns = {${columns}})`,
      );
      await writeBatch(openStorage(path), { input: { file: input, format: 'parquet' }, operation: 'upsert', properties: new Map() });
      const afterOurs = await ourRead(path);
      assert.deepEqual(canonicalRows((await hudi.read(path)).rows), canonicalRows(afterOurs), 'Spark reads our upsert');
      await ourClustering(path, engine, 'id');
      await readsAlike(hudi, path, 'after our clustering', true);
      await hudi.write(path, {
        schema: TYPES_SCHEMA,
        rows: [{ ...OUR_TYPES_ROWS[0]!, ts: 3, s: 'Spark again' }],
        options: { ...TYPES_OPTIONS, 'hoodie.datasource.write.operation': 'upsert' },
      });
      await readsAlike(hudi, path, "after Spark's upsert", true);
      const last = (await hudi.read(path)).rows;
      assert.deepEqual(last.map((r) => `${r['id']}:${r['s']}`).sort(), ['1:héllo ✓ 𝄞 "quoted"\n', '2:Spark again', '3:null', '4:中文', '5:new']);
    });
  });
}
