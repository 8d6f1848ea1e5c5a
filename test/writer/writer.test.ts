/**
 * Copy-on-write writes: operations, Hudi-compatible base files, small-file handling, conflicts, crashes.
 * Every table is checked with our reader and with pyarrow reading the latest base files (worked out independently).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { HoodieBloomFilter } from '../../lib/base-file/bloom-filter.js';
import { generateUsers, type UserRecord, writeJsonLines } from '../../lib/cli/generate.js';
import { ConflictError, HudiError, InstantRolledBackError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { rollbackInstant } from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { duckdb } from '../helpers/duckdb.js';
import { fixtureTable, tempDir } from '../helpers/fixtures.js';
import { runKilledWrite } from '../helpers/killed-write.js';
import { independentLatestBaseFiles, pyarrowFileInfo, pyarrowRead } from '../helpers/oracle.js';
import { tableBytes } from '../helpers/paths.js';
import { requireS3, s3TablePath } from '../helpers/s3.js';
import { clusteringPlanOf } from '../helpers/synthetic-table.js';

const USERS_PROPS = new Map([
  ['hoodie.table.name', 'users'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  // Small bloom filters keep test files small (Hudi's default filter alone is ~430 KB per file).
  ['hoodie.index.bloom.num_entries', '1000'],
]);

async function batchFile(records: Iterable<object>, dir = tempDir()): Promise<string> {
  const file = join(dir, `batch-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeJsonLines(file, records);
  return file;
}

async function write(
  table: string,
  records: Iterable<object>,
  operation: WriteOptions['operation'],
  extra: Record<string, string> = {},
  hooks: Pick<WriteOptions, 'afterDataFiles'> = {},
) {
  const props = new Map([...USERS_PROPS, ...Object.entries(extra)]);
  return writeBatch(openStorage(table), { input: { file: await batchFile(records), format: 'jsonl' }, operation, properties: props, ...hooks });
}

async function snapshotById(table: string): Promise<Map<number, Record<string, unknown>>> {
  const { rows } = await readSnapshot(await HudiTable.open(openStorage(table)), { includeMetaFields: true });
  return new Map(rows.map((r) => [r['id'] as number, r]));
}

/** pyarrow's rows of the independently computed latest base files, by id. */
function oracleById(table: string): Map<number, Record<string, unknown>> {
  const rows = pyarrowRead(independentLatestBaseFiles(table));
  const byId = new Map<number, Record<string, unknown>>();
  for (const row of rows) {
    assert.ok(!byId.has(row['id'] as number), `id ${String(row['id'])} appears twice in the latest base files`);
    byId.set(row['id'] as number, row);
  }
  return byId;
}

function users(count: number, seed: number, idStart = 1, startDate = '2024-01-01', days = 3): UserRecord[] {
  return [...generateUsers({ count, seed, idStart, startDate, days })];
}

describe('writer: operations', () => {
  it('bulk_insert, insert, upsert and delete; our reader and pyarrow agree; counts exact', async () => {
    const table = join(tempDir(), 'users');
    const first = users(300, 1);
    const r1 = await write(table, first, 'bulk_insert');
    assert.equal(r1.inserted, 300);
    assert.equal(r1.createdTable, true);
    // Insert 100 new ids.
    const second = users(100, 2, 301);
    assert.equal((await write(table, second, 'insert')).inserted, 100);
    // Upsert: 50 existing ids (same partition, later createTime) and 20 new ones.
    const updates = first.slice(0, 50).map((u) => ({ ...u, name: `${u.name}-v2`, createTime: `${u.dt} 23:59:59` }));
    const fresh = users(20, 3, 1001);
    const r3 = await write(table, [...updates, ...fresh], 'upsert');
    assert.equal(r3.updated, 50);
    assert.equal(r3.inserted, 20);
    // Delete 10 ids.
    const r4 = await write(table, first.slice(100, 110), 'delete');
    assert.equal(r4.deleted, 10);

    const ours = await snapshotById(table);
    const oracle = oracleById(table);
    assert.equal(ours.size, 300 + 100 + 20 - 10);
    assert.equal(oracle.size, ours.size);
    for (const u of first.slice(0, 50)) assert.equal(ours.get(u.id)?.['name'], `${u.name}-v2`);
    for (const u of first.slice(100, 110)) assert.ok(!ours.has(u.id) && !oracle.has(u.id));
    for (const [id, row] of ours) {
      const other = oracle.get(id);
      assert.ok(other, `pyarrow misses id ${id}`);
      assert.equal(other['name'], row['name']);
      assert.equal(other['_hoodie_record_key'], String(id));
      assert.equal(other['dt'], row['dt']);
      assert.equal(String(other['birthday']), row['birthday']);
    }
  });

  const OVERWRITE_WITH_LATEST = 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload';
  const DEFAULT_PAYLOAD = 'org.apache.hudi.common.model.DefaultHoodieRecordPayload';
  const base = { name: 'A', birthday: '1990-01-01', position: 'x', dt: '2024-01-01' };

  /** Two stored records (ids 1 and 2, createTime 10:00), then `payload` (or none) for every later write. */
  async function payloadTable(payload?: string) {
    const table = join(tempDir(), 'users');
    await write(
      table,
      [
        { ...base, id: 1, createTime: '2024-01-01 10:00:00' },
        { ...base, id: 2, createTime: '2024-01-01 10:00:00' },
      ],
      'upsert',
    );
    const extra: Record<string, string> = payload === undefined ? {} : { 'hoodie.datasource.write.payload.class': payload };
    return { table, upsert: (records: object[]) => write(table, records, 'upsert', extra) };
  }

  /** Within one batch (both payloads' preCombine): the greater precombine value wins, a tie goes to the later record. */
  async function assertBatchDedupe(upsert: (records: object[]) => ReturnType<typeof write>, table: string) {
    const result = await upsert([
      { ...base, id: 1, name: 'newest', createTime: '2024-01-01 12:00:00' },
      { ...base, id: 1, name: 'older', createTime: '2024-01-01 11:00:00' },
      { ...base, id: 2, name: 'tie-first', createTime: '2024-01-01 11:30:00' },
      { ...base, id: 2, name: 'tie-later', createTime: '2024-01-01 11:30:00' },
    ]);
    assert.equal(result.updated, 2);
    const rows = await snapshotById(table);
    assert.equal(rows.get(1)?.['name'], 'newest');
    assert.equal(rows.get(2)?.['name'], 'tie-later');
  }

  it('default payload OverwriteWithLatestAvroPayload (Hudi 0.x): the incoming record wins over the stored one; a batch dedupes by precombine', async () => {
    const { table, upsert } = await payloadTable();
    await assertBatchDedupe(upsert, table);
    // An incoming record with an older precombine value than the stored one still replaces it.
    const r = await upsert([{ ...base, id: 1, name: 'older-event-wins', createTime: '2024-01-01 09:00:00' }]);
    assert.equal(r.updated, 1);
    const rows = await snapshotById(table);
    assert.equal(rows.get(1)?.['name'], 'older-event-wins');
    assert.equal(rows.get(2)?.['name'], 'tie-later');
    assert.equal(oracleById(table).get(1)?.['name'], 'older-event-wins');
    // Stating the default gives the same.
    const stated = await payloadTable(OVERWRITE_WITH_LATEST);
    await stated.upsert([{ ...base, id: 2, name: 'stated-older', createTime: '2024-01-01 09:00:00' }]);
    assert.equal((await snapshotById(stated.table)).get(2)?.['name'], 'stated-older');
  });

  it('DefaultHoodieRecordPayload (opt-in): a stored record with a greater precombine value is kept; an equal one is replaced', async () => {
    const { table, upsert } = await payloadTable(DEFAULT_PAYLOAD);
    await assertBatchDedupe(upsert, table);
    // Stored: id 1 at 12:00, id 2 at 11:30.
    const r = await upsert([
      { ...base, id: 1, name: 'stale', createTime: '2024-01-01 09:00:00' },
      { ...base, id: 2, name: 'same-time', createTime: '2024-01-01 11:30:00' },
    ]);
    assert.equal(r.updated, 1, 'the stale record is dropped');
    const rows = await snapshotById(table);
    assert.equal(rows.get(1)?.['name'], 'newest');
    assert.equal(rows.get(2)?.['name'], 'same-time');
    assert.equal(oracleById(table).get(1)?.['name'], 'newest');
    assert.equal(rows.size, 2);
  });

  it("the table's hoodie.compaction.payload.class decides when the writer sets no payload; the writer's key wins; unknown classes are refused", async () => {
    const { table, upsert } = await payloadTable();
    const propertiesFile = join(table, '.hoodie/hoodie.properties');
    const original = readFileSync(propertiesFile, 'utf8');
    writeFileSync(propertiesFile, `${original}hoodie.compaction.payload.class=${DEFAULT_PAYLOAD}\n`);
    assert.equal(
      (await upsert([{ ...base, id: 1, name: 'stale', createTime: '2024-01-01 09:00:00' }])).updated,
      0,
      "the table's DefaultHoodieRecordPayload keeps the newer stored record",
    );
    assert.equal((await snapshotById(table)).get(1)?.['name'], 'A');
    const overridden = await write(table, [{ ...base, id: 1, name: 'writer-says-overwrite', createTime: '2024-01-01 09:00:00' }], 'upsert', {
      'hoodie.datasource.write.payload.class': OVERWRITE_WITH_LATEST,
    });
    assert.equal(overridden.updated, 1);
    assert.equal((await snapshotById(table)).get(1)?.['name'], 'writer-says-overwrite');

    writeFileSync(propertiesFile, `${original}hoodie.compaction.payload.class=org.apache.hudi.common.model.PartialUpdateAvroPayload\n`);
    const commitsBefore = readdirSync(join(table, '.hoodie')).filter((f) => f.endsWith('.commit')).length;
    await assert.rejects(
      upsert([{ ...base, id: 2, name: 'x', createTime: '2024-01-01 13:00:00' }]),
      (error: unknown) =>
        error instanceof HudiError &&
        /payload class org\.apache\.hudi\.common\.model\.PartialUpdateAvroPayload is not supported/.test(error.message) &&
        /hoodie\.properties \(hoodie\.compaction\.payload\.class\)/.test(error.message) &&
        /OverwriteWithLatestAvroPayload/.test(error.message),
    );
    assert.equal(readdirSync(join(table, '.hoodie')).filter((f) => f.endsWith('.commit')).length, commitsBefore, 'nothing was written');
  });

  for (const [sortMode, order] of [
    ['GLOBAL_SORT', 'key'],
    [undefined, 'input'],
  ] as const) {
    it(`a large bulk_insert (several row groups, both threads) with sort mode ${sortMode ?? 'unset (NONE)'} stores each file in ${order} order, numbered in that order`, async () => {
      const table = join(tempDir(), 'users');
      // Reversed and shuffled by day, so that the order in the files is the writer's.
      const records = users(240_000, 12, 1, '2024-01-01', 2).reverse();
      const inputIndex = new Map(records.map((record, index) => [String(record.id), index]));
      await write(table, records, 'bulk_insert', {
        'hoodie.parquet.max.file.size': String(4 * 1024 * 1024),
        ...(sortMode === undefined ? {} : { 'hoodie.bulkinsert.sort.mode': sortMode }),
      });
      const files = independentLatestBaseFiles(table);
      assert.ok(files.length >= 2, files.join(','));
      const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
      const connection = await instance.connect();
      let checked = 0;
      try {
        for (const file of files) {
          const reader = await connection.runAndReadAll(
            `SELECT _hoodie_record_key, split_part(_hoodie_commit_seqno, '_', 3)::INTEGER AS seq
             FROM read_parquet('${file}', file_row_number = true) ORDER BY file_row_number`,
          );
          const rows = reader.getRowsJS() as [string, number][];
          assert.ok(rows.length > 0);
          const keys = rows.map(([key]) => key);
          const expected = order === 'key' ? [...keys].sort() : [...keys].sort((a, b) => inputIndex.get(a)! - inputIndex.get(b)!);
          assert.deepEqual(keys, expected, `${file}: in ${order} order`);
          assert.deepEqual(
            rows.map(([, seq]) => seq),
            rows.map((_, index) => index),
            `${file}: numbered in that order`,
          );
          checked += rows.length;
        }
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
      assert.equal(checked, records.length);
    });
  }

  it("a merge keeps each file's records in place, an update where its record stood, then the new records in key order; what it writes is numbered in that order", async () => {
    const table = join(tempDir(), 'users');
    // Stored in descending id order (bulk_insert keeps the input's order), so that neither key order nor batch order
    // is the merged file's order by chance.
    const stored = users(300, 8);
    const first = await write(table, [...stored].reverse(), 'bulk_insert');
    const fileGroupOf = (file: string): string => file.slice(file.lastIndexOf('/') + 1).split('_')[0]!;
    const before = new Map(independentLatestBaseFiles(table).map((file) => [fileGroupOf(file), pyarrowRead([file])]));
    // Updates given in ascending order, new records shuffled by day.
    const updates = stored.slice(120, 180).map((user) => ({ ...user, name: `${user.name}-v2` }));
    const second = await write(table, [...updates, ...users(40, 9, 1000).reverse()], 'upsert');
    assert.ok(second.updated === 60 && second.inserted > 0, JSON.stringify(second));
    const updatedKeys = new Set(updates.map((user) => String(user.id)));
    let merged = 0;
    let checked = 0;
    for (const file of independentLatestBaseFiles(table)) {
      const rows = pyarrowRead([file]);
      const keys = rows.map((row) => String(row['_hoodie_record_key']));
      const previous = before.get(fileGroupOf(file)) ?? [];
      const previousKeys = previous.map((row) => String(row['_hoodie_record_key']));
      assert.deepEqual(keys.slice(0, previousKeys.length), previousKeys, `${file}: the stored records keep their places`);
      previous.forEach((old, index) => {
        const row = rows[index]!;
        const key = String(row['_hoodie_record_key']);
        if (updatedKeys.has(key)) {
          assert.equal(row['_hoodie_commit_time'], second.instantTime, `${key}: updated in place`);
          assert.match(String(row['name']), /-v2$/);
        } else {
          assert.equal(row['_hoodie_commit_time'], first.instantTime, `${key}: kept`);
          assert.equal(row['_hoodie_commit_seqno'], old['_hoodie_commit_seqno'], `${key}: keeps its number`);
        }
      });
      const added = keys.slice(previousKeys.length);
      assert.deepEqual(added, [...added].sort(), `${file}: the new records follow, in key order`);
      assert.ok(
        rows.slice(previousKeys.length).every((row) => row['_hoodie_commit_time'] === second.instantTime),
        `${file}: written by the upsert`,
      );
      const written = rows.filter((row) => row['_hoodie_commit_time'] === second.instantTime);
      assert.deepEqual(
        written.map((row) => Number(String(row['_hoodie_commit_seqno']).split('_').at(-1))),
        written.map((_, index) => index),
        `${file}: what the upsert wrote is numbered in the order it is stored`,
      );
      if (previous.length > 0 && written.length > 0) merged += 1;
      checked += rows.length;
    }
    assert.ok(merged > 0, 'a file group was merged');
    assert.equal(checked, 300 + second.inserted);
  });

  it('meta columns, footers and bloom filters as Hudi writes them', async () => {
    const table = join(tempDir(), 'users');
    const result = await write(table, users(200, 4), 'insert');
    const files = independentLatestBaseFiles(table);
    assert.equal(files.length, result.stats.length);
    const infos = pyarrowFileInfo(files);
    const { rows } = await readSnapshot(await HudiTable.open(openStorage(table)), { includeMetaFields: true });
    for (const info of infos) {
      const name = info.file.slice(info.file.lastIndexOf('/') + 1);
      assert.match(name, new RegExp(`^[0-9a-f-]{36}-0_\\d+-1-0_${result.instantTime}\\.parquet$`));
      assert.deepEqual(Object.keys(info.schema).slice(0, 5), [
        '_hoodie_commit_time',
        '_hoodie_commit_seqno',
        '_hoodie_record_key',
        '_hoodie_partition_path',
        '_hoodie_file_name',
      ]);
      assert.equal(info.kv['hoodie_bloom_filter_type_code'], 'DYNAMIC_V0');
      const avro = JSON.parse(info.kv['parquet.avro.schema']!) as { fields: { name: string }[] };
      assert.deepEqual(
        avro.fields.slice(0, 5).map((f) => f.name),
        ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'],
      );
      // JSON strings stay strings, as Spark's JSON reader keeps them (no date or timestamp inference).
      assert.equal(info.schema['createTime'], 'string');
      assert.equal(info.schema['birthday'], 'string');
      const mine = rows.filter((r) => r['_hoodie_file_name'] === name);
      assert.equal(mine.length, info.rows);
      const keys = mine.map((r) => String(r['_hoodie_record_key'])).sort();
      assert.equal(info.kv['hoodie_min_record_key'], keys[0]);
      assert.equal(info.kv['hoodie_max_record_key'], keys.at(-1));
      for (const row of mine) {
        assert.equal(row['_hoodie_commit_time'], result.instantTime);
        assert.match(String(row['_hoodie_commit_seqno']), new RegExp(`^${result.instantTime}_\\d+_\\d+$`));
        assert.equal(row['_hoodie_partition_path'], row['dt']);
      }
    }
    // The bloom filter in a footer holds every key of its file.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const connection = await (await DuckDBInstance.create(':memory:')).connect();
    const reader = await connection.runAndReadAll(`SELECT value FROM parquet_kv_metadata('${files[0]}') WHERE key = 'org.apache.hudi.bloomfilter'`);
    const filter = HoodieBloomFilter.deserialize(Buffer.from((reader.getRows()[0]![0] as { bytes: Uint8Array }).bytes).toString('utf8'), 'DYNAMIC_V0');
    const name0 = files[0]!.slice(files[0]!.lastIndexOf('/') + 1);
    for (const row of rows.filter((r) => r['_hoodie_file_name'] === name0)) assert.ok(filter.mightContain(String(row['_hoodie_record_key'])));
  });

  it("after updates, inserts into small files and deletes, each file's bloom filter holds each of its records once", async () => {
    const table = join(tempDir(), 'users');
    const first = users(300, 8);
    await write(table, first, 'bulk_insert');
    const connection = await (await DuckDBInstance.create(':memory:')).connect();
    const check = async (records: number): Promise<void> => {
      const files = independentLatestBaseFiles(table);
      let total = 0;
      for (const file of files) {
        const reader = await connection.runAndReadAll(`SELECT value FROM parquet_kv_metadata('${file}') WHERE key = 'org.apache.hudi.bloomfilter'`);
        const filter = HoodieBloomFilter.deserialize(Buffer.from((reader.getRows()[0]![0] as { bytes: Uint8Array }).bytes).toString('utf8'), 'DYNAMIC_V0');
        const keys = pyarrowRead([file]).map((row) => String(row['_hoodie_record_key']));
        // One row of 60,000 keys: its count is the number of keys added, so a key added twice or left out shows.
        assert.equal(filter.rowCount, 1);
        assert.equal(filter.currentRowRecordCount, keys.length, `${file}: one key per record`);
        for (const key of keys) assert.ok(filter.mightContain(key), `${file}: ${key}`);
        total += keys.length;
      }
      assert.equal(total, records);
    };
    // Updates and new keys in the same partitions (the new ones go into the existing small files), then deletes.
    await write(table, [...first.slice(0, 90).map((user) => ({ ...user, name: `${user.name}-v2` })), ...users(50, 8, 1000)], 'upsert');
    await check(350);
    await write(table, first.slice(40, 70), 'delete');
    await check(320);
  });

  it('upserts into a Hudi-written table keep its Parquet types (fixed decimals, UTC timestamps)', async () => {
    const table = fixtureTable('v6_simplekeygen_nonhivestyle');
    const update = {
      id: 1,
      name: 'Alice',
      isActive: true,
      shortField: 300,
      intField: 15000,
      longField: 9999999999,
      floatField: 1.5,
      doubleField: 3.25,
      decimalField: '12345.67890',
      dateField: '2023-04-01',
      timestampField: '2023-04-01T12:01:00Z',
      binaryField: null,
      arrayField: null,
      mapField: null,
      structField: null,
      byteField: 10,
    };
    const result = await writeBatch(openStorage(table), {
      input: { file: await batchFile([update]), format: 'jsonl' },
      operation: 'upsert',
      properties: new Map([['hoodie.index.bloom.num_entries', '1000']]),
    });
    assert.equal(result.updated, 1);
    const rows = await snapshotById(table);
    assert.equal(rows.size, 4);
    assert.equal(rows.get(1)?.['decimalField'], '12345.67890');
    assert.equal(rows.get(1)?.['isActive'], true);
    assert.equal(rows.get(3)?.['name'], 'Carol');
    const written = independentLatestBaseFiles(table).filter((f) => f.endsWith(`_${result.instantTime}.parquet`));
    assert.equal(written.length, 1);
    const [info] = pyarrowFileInfo(written);
    assert.match(info!.parquet_schema, /fixed_len_byte_array\(5\) field_id=-1 decimalField \(Decimal\(precision=10, scale=5\)\)/);
    assert.match(info!.parquet_schema, /int64 field_id=-1 timestampField \(Timestamp\(isAdjustedToUTC=true, timeUnit=microseconds/);
    assert.equal(info!.schema['decimalField'], 'decimal128(10, 5)');
    assert.match(info!.schema['timestampField']!, /timestamp\[us, tz=(UTC|\+00:00)\]/);
    // The other record of that file group kept its original commit time; ours got the new one.
    const carol = rows.get(3)!;
    const alice = rows.get(1)!;
    assert.equal(alice['_hoodie_commit_time'], result.instantTime);
    assert.notEqual(carol['_hoodie_commit_time'], result.instantTime);
    assert.equal(carol['_hoodie_file_name'], alice['_hoodie_file_name']);
  });

  it('complex keys and hive-style partitions match the keys Hudi wrote (upsert finds them)', async () => {
    const table = fixtureTable('v6_complexkeygen_hivestyle');
    const carol = {
      id: 3,
      name: 'Carol',
      isActive: false,
      shortField: 300,
      intField: 25000,
      longField: 9999999999,
      floatField: 2.5,
      doubleField: 1.25,
      decimalField: '1.00000',
      dateField: '2023-04-03',
      timestampField: '2023-04-03T12:01:00Z',
      binaryField: null,
      arrayField: null,
      mapField: null,
      structField: null,
      byteField: 10,
    };
    const result = await writeBatch(openStorage(table), {
      input: { file: await batchFile([carol]), format: 'jsonl' },
      operation: 'upsert',
      properties: new Map([['hoodie.index.bloom.num_entries', '1000']]),
    });
    assert.equal(result.updated, 1);
    assert.equal(result.inserted, 0);
    const rows = await snapshotById(table);
    assert.equal(rows.size, 4);
    assert.equal(rows.get(3)?.['isActive'], false);
    assert.equal(rows.get(3)?.['_hoodie_record_key'], 'id:3,name:Carol');
    assert.equal(rows.get(3)?.['_hoodie_partition_path'], 'byteField=10/shortField=300');
  });

  it("a new table stores decimals as Hudi does: fixed-length bytes of Spark's size, matching its Avro schema", async () => {
    const dir = tempDir();
    const input = join(dir, 'prices.parquet');
    await duckdb(`COPY (SELECT range::INTEGER AS id, 'p' || range AS name, (range * 1.25)::DECIMAL(10,2) AS price, [(range * 0.5)::DECIMAL(20,3)] AS history
                      FROM range(5)) TO '${input}' (FORMAT parquet)`);
    const table = join(dir, 'prices');
    const props = new Map([
      ['hoodie.table.name', 'prices'],
      ['hoodie.datasource.write.recordkey.field', 'id'],
      ['hoodie.index.bloom.num_entries', '1000'],
    ]);
    await writeBatch(openStorage(table), { input: { file: input, format: 'parquet' }, operation: 'insert', properties: props });
    const [info] = pyarrowFileInfo(independentLatestBaseFiles(table));
    assert.match(info!.parquet_schema, /fixed_len_byte_array\(5\) field_id=-1 price \(Decimal\(precision=10, scale=2\)\)/);
    assert.match(info!.parquet_schema, /fixed_len_byte_array\(9\) field_id=-1 element \(Decimal\(precision=20, scale=3\)\)/);
    const avro = JSON.parse(info!.kv['parquet.avro.schema']!) as { fields: { name: string; type: unknown }[] };
    assert.deepEqual((avro.fields.find((f) => f.name === 'price')!.type as unknown[])[1], {
      type: 'fixed',
      name: 'fixed',
      namespace: 'hoodie.prices.prices_record.price',
      size: 5,
      logicalType: 'decimal',
      precision: 10,
      scale: 2,
    });
    const rows = await snapshotById(table);
    assert.equal(rows.get(3)?.['price'], '3.75');
    assert.deepEqual(rows.get(4)?.['history'], ['2.000']);
    // An upsert keeps the encoding.
    await writeBatch(openStorage(table), {
      input: { file: await batchFile([{ id: 3, name: 'p3', price: '9.99', history: ['1.5'] }]), format: 'jsonl' },
      operation: 'upsert',
      properties: props,
    });
    assert.equal((await snapshotById(table)).get(3)?.['price'], '9.99');
    for (const file of pyarrowFileInfo(independentLatestBaseFiles(table))) assert.match(file.parquet_schema, /fixed_len_byte_array\(5\) field_id=-1 price/);
  });

  it('records without a key are refused with the row named; nothing is written', async () => {
    const table = join(tempDir(), 'users');
    await write(table, users(10, 5), 'insert');
    const before = readdirSync(join(table, '.hoodie')).length;
    await assert.rejects(
      write(table, [{ id: null, name: 'x', birthday: '1990-01-01', createTime: '2024-01-01 00:00:00', position: 'p', dt: '2024-01-01' }], 'upsert'),
      (error: unknown) => error instanceof HudiError && /row 1: record key field "id" is null or empty/.test(error.message),
    );
    assert.equal(readdirSync(join(table, '.hoodie')).length, before);
  });
});

describe('writer: small-file handling (UpsertPartitioner)', () => {
  // Hudi's rule: a base file takes inserts only while it is smaller than small.file.limit, up to max.file.size.
  // So files end between the two limits (plus one batch); with the limits close, the partition holds about
  // total bytes / max.file.size files. (With small.file.limit far below max.file.size, files stop growing just
  // past small.file.limit, in Hudi as here.)
  it('30 small insert batches into one partition fill files up to max.file.size instead of making 30', async () => {
    const table = join(tempDir(), 'users');
    const limits = { 'hoodie.parquet.small.file.limit': String(192 * 1024), 'hoodie.parquet.max.file.size': String(256 * 1024) };
    let id = 1;
    for (let batch = 0; batch < 30; batch++) {
      await write(table, users(800, 100 + batch, id, '2024-01-01', 1), 'insert', limits);
      id += 800;
    }
    const files = independentLatestBaseFiles(table);
    const totalBytes = files.reduce((sum, f) => sum + readFileSync(f).length, 0);
    const expected = Math.ceil(totalBytes / (256 * 1024));
    const rows = pyarrowRead(files).length;
    assert.equal(rows, 24000);
    // Recorded for the closing note.
    console.log(
      `small-file handling: ${files.length} base files, ${totalBytes} bytes, total/max.file.size = ${(totalBytes / (256 * 1024)).toFixed(2)}, sizes ${files.map((f) => readFileSync(f).length).join(',')}`,
    );
    assert.ok(files.length < 30, `${files.length} files`);
    assert.ok(files.length <= Math.ceil(expected * 1.35), `${files.length} files for ${totalBytes} bytes (≈${expected} expected)`);
  });

  it('bulk_insert does no small-file packing', async () => {
    const table = join(tempDir(), 'users');
    const limits = { 'hoodie.parquet.small.file.limit': String(64 * 1024), 'hoodie.parquet.max.file.size': String(256 * 1024) };
    for (let batch = 0; batch < 3; batch++) await write(table, users(100, 200 + batch, 1 + batch * 100, '2024-01-01', 1), 'bulk_insert', limits);
    assert.equal(independentLatestBaseFiles(table).length, 3);
  });
});

describe('writer: concurrency and failures', () => {
  it('two writers updating the same file group at once: exactly one commits, the other fails clearly and leaves nothing visible', async () => {
    const table = join(tempDir(), 'users');
    const seed = users(50, 6, 1, '2024-01-01', 1);
    await write(table, seed, 'insert');
    const a = seed.slice(0, 10).map((u) => ({ ...u, name: 'writer-a', createTime: '2024-01-01 23:00:00' }));
    const b = seed.slice(5, 15).map((u) => ({ ...u, name: 'writer-b', createTime: '2024-01-01 23:00:00' }));
    // Neither commits before both have written their data files (or one has already ended), so the two writes
    // overlap however the machine schedules them: on a busy machine one could otherwise finish before the other
    // starts, and then both commit, one after the other, as they should.
    const there = new Set<string>();
    let release = (): void => undefined;
    const both = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reach = (writer: string): void => {
      there.add(writer);
      if (there.size === 2) release();
    };
    const overlapping = (writer: string, rows: readonly object[]) =>
      write(
        table,
        rows,
        'upsert',
        {},
        {
          afterDataFiles: async () => {
            reach(writer);
            await both;
          },
        },
      ).finally(() => reach(writer));
    const results = await Promise.allSettled([overlapping('a', a), overlapping('b', b)]);
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(ok.length, 1, JSON.stringify(results.map((r) => r.status)));
    assert.equal(failed.length, 1);
    // Two outcomes are Hudi's: the later committer finds the winner's commit on its file group, or (single-writer
    // defaults, EAGER failed-writes policy) the later starter rolled the other back while it ran.
    const reason = failed[0]!.reason;
    assert.ok(reason instanceof ConflictError, String(reason));
    if (reason instanceof InstantRolledBackError) assert.match(reason.message, /rollback \d{17} \(\w+\) rolled it back while it ran/);
    else assert.match(reason.message, /conflicts with commit \d{17} on file group/);
    const rows = await snapshotById(table);
    const winner = [...rows.values()].some((r) => r['name'] === 'writer-a') ? 'writer-a' : 'writer-b';
    assert.ok(![...rows.values()].some((r) => r['name'] === (winner === 'writer-a' ? 'writer-b' : 'writer-a')));
    assert.equal(rows.size, 50);
    // The loser's files were rolled back: only completed instants' files remain on disk besides the winner's.
    const timelineFiles = readdirSync(join(table, '.hoodie'));
    const commits = timelineFiles.filter((f) => f.endsWith('.commit'));
    assert.equal(commits.length, 2);
    // Every rollback undid the loser, never a completed commit. Usually there is one; with no lock between two
    // single-writer clients, the loser's own cleanup may roll back again what the other's rollback had not yet removed.
    const rollbacks = timelineFiles.filter((f) => f.endsWith('.rollback'));
    assert.ok(rollbacks.length >= 1 && rollbacks.length <= 2, rollbacks.join(','));
    const completed = new Set(commits.map((f) => f.slice(0, 17)));
    for (const file of rollbacks) {
      const metadata = decodeTimelineAvro('rollbackMetadata', readFileSync(join(table, '.hoodie', file)), file);
      assert.equal(metadata.commitsRollback.length, 1);
      assert.ok(!completed.has(metadata.commitsRollback[0]!), `${file} rolled back the completed commit ${metadata.commitsRollback[0]}`);
    }
    assert.equal(new Set(rollbacks.map((f) => decodeTimelineAvro('rollbackMetadata', readFileSync(join(table, '.hoodie', f)), f).commitsRollback[0])).size, 1);
    assert.equal(oracleById(table).size, 50);
  });

  it('an upsert into a file group in a pending clustering plan is refused before its instant exists (updates strategy reject)', async () => {
    const table = join(tempDir(), 'users');
    const seed = users(20, 7, 1, '2024-01-01', 1);
    const first = await write(table, seed, 'insert');
    const stat = first.stats[0]!;
    const plan = encodeTimelineAvro(
      'requestedReplace',
      clusteringPlanOf([{ dataFilePath: stat.path ?? '', fileId: stat.fileId, partitionPath: stat.partitionPath }]),
    );
    writeFileSync(join(table, '.hoodie/20990101000000000.replacecommit.requested'), plan);
    const before = tableBytes(table);
    await assert.rejects(
      write(
        table,
        seed.slice(0, 1).map((u) => ({ ...u, name: 'blocked' })),
        'upsert',
      ),
      (error: unknown) => error instanceof ConflictError && /pending clustering plan/.test(error.message),
    );
    assert.deepEqual(tableBytes(table), before, 'no instant, rollback or marker: the table is byte for byte as it was');
    assert.equal((await snapshotById(table)).get(seed[0]!.id)?.['name'], seed[0]!.name);
  });

  /** Upsert 10 changed rows of a 30-row table, letting `meanwhile` act on the table between the data files and the commit. */
  async function upsertWhileAnotherParty(meanwhile: (storage: ReturnType<typeof openStorage>, instantTime: string) => Promise<void>) {
    const table = join(tempDir(), 'users');
    const seed = users(30, 11, 1, '2024-01-01', 1);
    await write(table, seed, 'insert');
    const before = await snapshotById(table);
    const storage = openStorage(table);
    let instantTime = '';
    const changed = seed.slice(0, 10).map((u) => ({ ...u, name: 'never-visible', createTime: '2024-01-01 23:00:00' }));
    const attempt = writeBatch(storage, {
      input: { file: await batchFile(changed), format: 'jsonl' },
      operation: 'upsert',
      properties: USERS_PROPS,
      afterDataFiles: async () => {
        instantTime = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).pending().find((i) => i.action === 'commit')!.time;
        assert.ok(
          readdirSync(join(table, '2024-01-01')).some((f) => f.endsWith(`_${instantTime}.parquet`)),
          'the write uploaded its files',
        );
        await meanwhile(storage, instantTime);
      },
    });
    return { table, storage, before, attempt, instantTime: () => instantTime };
  }

  function assertNothingPublished(
    table: string,
    instantTime: string,
    before: Map<number, Record<string, unknown>>,
    rows: Map<number, Record<string, unknown>>,
  ) {
    const timelineFiles = readdirSync(join(table, '.hoodie'));
    assert.ok(!timelineFiles.includes(`${instantTime}.commit`), 'no T.commit');
    assert.deepEqual(
      readdirSync(join(table, '2024-01-01')).filter((f) => f.includes(instantTime)),
      [],
      'no data file of T is left',
    );
    assert.ok(!existsSync(join(table, `.hoodie/.temp/${instantTime}`)), 'no marker folder is left');
    assert.ok(!existsSync(join(table, `.hoodie/.heartbeat/${instantTime}`)), 'no heartbeat is left');
    assert.deepEqual([...rows.values()].map((r) => r['name']).sort(), [...before.values()].map((r) => r['name']).sort(), 'readers see the previous rows');
    assert.equal(oracleById(table).size, 30);
    assert.ok(![...oracleById(table).values()].some((r) => r['name'] === 'never-visible'));
  }

  it('a write another writer rolls back between its data files and its commit fails, naming the rollback, and publishes nothing', async () => {
    let rollbackTime = '';
    const { table, before, attempt, instantTime } = await upsertWhileAnotherParty(async (storage, time) => {
      // What Spark's EAGER failed-writes cleaning does to every pending commit: a rollback through our markers.
      const other = await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), time, {
        lock: new StorageLockProvider(storage),
        ignoreHeartbeat: true,
      });
      rollbackTime = other.rollbackInstantTime;
    });
    await assert.rejects(attempt, (error: unknown) => {
      assert.ok(error instanceof InstantRolledBackError, String(error));
      assert.equal(error.instantTime, instantTime());
      assert.equal(error.rollbackInstant, rollbackTime);
      assert.match(error.message, new RegExp(`write ${instantTime()} cannot commit: rollback ${rollbackTime} \\(completed\\) rolled it back while it ran`));
      return true;
    });
    assertNothingPublished(table, instantTime(), before, await snapshotById(table));
    // The only rollback is the other writer's.
    assert.deepEqual(
      readdirSync(join(table, '.hoodie')).filter((f) => f.endsWith('.rollback')),
      [`${rollbackTime}.rollback`],
    );
  });

  it('a write whose inflight another party removes (no rollback instant) fails and removes its own files', async () => {
    const { table, before, attempt, instantTime } = await upsertWhileAnotherParty(async (storage, time) => {
      await storage.delete([`.hoodie/${time}.inflight`, `.hoodie/${time}.commit.requested`]);
    });
    await assert.rejects(
      attempt,
      (error: unknown) =>
        error instanceof InstantRolledBackError &&
        error.instantTime === instantTime() &&
        error.rollbackInstant === undefined &&
        new RegExp(`write ${instantTime()} cannot commit: its timeline files were removed while it ran`).test(error.message),
    );
    assertNothingPublished(table, instantTime(), before, await snapshotById(table));
    assert.deepEqual(
      readdirSync(join(table, '.hoodie')).filter((f) => f.endsWith('.rollback')),
      [],
    );
  });

  it('a write killed between its data files and its commit: readers see the previous snapshot; rollback cleans up', async () => {
    const dir = tempDir();
    const table = join(dir, 'users');
    await write(table, users(30, 8, 1, '2024-01-01', 1), 'insert');
    const propsFile = join(dir, 'props');
    writeFileSync(propsFile, [...USERS_PROPS].map(([k, v]) => `${k}=${v}`).join('\n'));
    const input = await batchFile(users(30, 9, 31, '2024-01-01', 1), dir);
    const killed = runKilledWrite(table, input, propsFile, 'insert');
    assert.notEqual(killed.code, 0);
    const pending = readdirSync(join(table, '.hoodie')).filter((f) => f.endsWith('.inflight'));
    assert.equal(pending.length, 2, 'the killed write is inflight');
    const failedInstant = pending
      .map((f) => f.slice(0, 17))
      .sort()
      .at(-1)!;
    const dataFiles = readdirSync(join(table, '2024-01-01')).filter((f) => f.includes(failedInstant));
    assert.ok(dataFiles.length > 0, 'the killed write left data files');
    assert.equal(jsonLines(runCli(['read', table]).stdout).length, 30);
    assert.equal(oracleById(table).size, 30);
    const rollback = runCli(['rollback', table, failedInstant, '--force']);
    assert.equal(rollback.code, 0, rollback.stderr);
    assert.equal(readdirSync(join(table, '2024-01-01')).filter((f) => f.includes(failedInstant)).length, 0);
    assert.ok(!existsSync(join(table, `.hoodie/${failedInstant}.inflight`)));
    assert.equal(readdirSync(join(table, '.hoodie')).filter((f) => f.endsWith('.rollback')).length, 1);
    assert.equal(jsonLines(runCli(['read', table]).stdout).length, 30);
  });
});

describe('writer on S3', () => {
  it('creates, upserts and reads back a table on the local stack', async () => {
    requireS3();
    const table = await s3TablePath('users');
    const first = users(200, 10);
    await write(table, first, 'insert');
    await write(
      table,
      first.slice(0, 20).map((u) => ({ ...u, name: 'updated', createTime: `${u.dt} 23:59:59` })),
      'upsert',
    );
    const rows = await snapshotById(table);
    assert.equal(rows.size, 200);
    assert.equal([...rows.values()].filter((r) => r['name'] === 'updated').length, 20);
    const timeline = runCli(['timeline', table]);
    assert.equal(
      timeline.stdout
        .trim()
        .split('\n')
        .filter((l) => l.includes('COMPLETED')).length,
      2,
    );
  });
});
