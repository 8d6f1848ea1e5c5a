/**
 * The metadata table's building blocks (lib/metadata) on their own: the hashes behind its keys, the mapping of keys
 * to file groups, HoodieMetadataRecord values and how versions of a key merge, column ranges from Parquet footers and
 * from the records of a log file's data block, and which log blocks a reader applies. Hudi computes the same (test/interop/metadata-table-keys.test.ts compares
 * with Hudi's own classes and with Spark-written metadata tables).
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { writeHudiLogBlockHFile } from '../../lib/hfile/index.js';
import { deleteBlock, encodeLogBlocks, type LogBlockInput, rollbackCommandBlock } from '../../lib/log-format/index.js';
import { bigintToTwosComplement } from '../../lib/log-format/value-wrappers.js';
import { decodeMetadataRecord, encodeMetadataRecord, encodeMetadataRecordParts } from '../../lib/metadata/codec.js';
import { columnRangesFromFooter, columnRangesFromRecords } from '../../lib/metadata/column-stats.js';
import { convertCommitMetadata } from '../../lib/metadata/convert.js';
import { fileGroupsOf } from '../../lib/metadata/file-groups.js';
import { footerBloomFilterBytes, readLocalFooter, readStoredFooter } from '../../lib/metadata/footers.js';
import { bloomFilterIndexKey, columnIndexId, columnStatsIndexKey, fileIndexId, partitionIndexId, xxHash64 } from '../../lib/metadata/hash-ids.js';
import { fileGroupId, fileGroupIndexOfId, mapRecordKeyToFileGroupIndex } from '../../lib/metadata/partitions.js';
import { readFileGroup } from '../../lib/metadata/reader.js';
import {
  bloomFilterRecord,
  columnStatsRecord,
  type MetadataRecord,
  mergeRecords,
  partitionFilesRecord,
  partitionListRecord,
  recordIndexFileId,
  recordIndexRecord,
} from '../../lib/metadata/records.js';
import { METADATA_RECORD_WRITER_SCHEMA_TEXT } from '../../lib/metadata/schema.js';
import { setFooterKeyValues } from '../../lib/parquet/footer.js';
import { openStorage } from '../../lib/storage/index.js';
import type { AvroRecordSchema } from '../../lib/table/schema.js';
import { Timeline } from '../../lib/timeline/timeline.js';
import { tempDir } from '../helpers/fixtures.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('metadata-table keys', () => {
  it("XXH64 gives the reference values (xxHash's published vectors, short and past the 32-byte stripes)", () => {
    assert.equal(xxHash64(new Uint8Array()).toString(16), 'ef46db3751d8e999');
    assert.equal(xxHash64(bytes('abc')).toString(16), '44bc2cf5ad770999');
    assert.equal(xxHash64(bytes('Nobody inspects the spammish repetition')).toString(16), 'fbcea83c8a378bf1');
  });

  it("ids are 8-byte (column, partition) and 16-byte (file) hashes in padded Base64; keys concatenate them in Hudi's order", () => {
    for (const id of [columnIndexId('price'), partitionIndexId('2024/01/01')]) assert.match(id, /^[A-Za-z0-9+/]{11}=$/);
    assert.match(fileIndexId('f.parquet'), /^[A-Za-z0-9+/]{22}==$/);
    assert.notEqual(columnIndexId('a'), partitionIndexId('b'));
    assert.equal(bloomFilterIndexKey('p', 'f.parquet'), partitionIndexId('p') + fileIndexId('f.parquet'));
    assert.equal(columnStatsIndexKey('p', 'f.parquet', 'c'), columnIndexId('c') + partitionIndexId('p') + fileIndexId('f.parquet'));
  });

  it("keys map to file groups by Java's String.hashCode, including negative hashes and Integer.MIN_VALUE", () => {
    // "polygenelubricants".hashCode() is Integer.MIN_VALUE; "Aa" and "BB" collide (2112).
    assert.equal(mapRecordKeyToFileGroupIndex('polygenelubricants', 10), 8);
    assert.equal(mapRecordKeyToFileGroupIndex('Aa', 7), mapRecordKeyToFileGroupIndex('BB', 7));
    assert.equal(mapRecordKeyToFileGroupIndex('Aa', 7), 2112 % 7);
    // "zzzzzzzz" overflows to a negative int: -1910022912 (h = 31*h + c in 32 bits).
    assert.equal(mapRecordKeyToFileGroupIndex('zzzzzzzz', 10), 2);
    assert.equal(fileGroupId('record_index', 7), 'record-index-0007-0');
    assert.equal(fileGroupId('column_stats', 12), 'col-stats-0012-0');
    assert.equal(fileGroupIndexOfId('bloom-filters-0003-0'), 3);
  });
});

describe('metadata-table records', () => {
  const records: MetadataRecord[] = [
    partitionListRecord(['2024-01-01', '']),
    partitionFilesRecord(
      '2024-01-01',
      new Map([
        ['a.parquet', 10],
        ['b.parquet', 20],
      ]),
      ['old.parquet'],
    ),
    bloomFilterRecord('2024-01-01', 'a.parquet', '20240101000000000', { type: 'DYNAMIC_V0', serialized: 'AAAA' }),
    columnStatsRecord('2024-01-01', {
      fileName: 'a.parquet',
      columnName: 'price',
      minValue: { type: 'decimal', unscaled: -1234500000000000000n },
      maxValue: { type: 'decimal', unscaled: 99n },
      nullCount: 1,
      valueCount: 5,
      totalSize: 50,
      totalUncompressedSize: 60,
    }),
    recordIndexRecord('key-1', '2024-01-01', '7e3e694c-264a-4dc9-b93d-fae90ab7c84b-3', '20240101120000123'),
  ];

  it('encode and decode as HoodieMetadataRecord (wrapped unions, key field empty in the value)', () => {
    for (const record of records) assert.deepEqual(decodeMetadataRecord(encodeMetadataRecord(record), record.key), record);
    assert.equal(records[0]!.key, '__all_partitions__');
    assert.deepEqual([...(records[0] as Extract<MetadataRecord, { type: 1 | 2 }>).files.keys()], ['2024-01-01', '.']);
  });

  it('encoded as parts (a large bloom filter not copied, record-index locations shared), a record has the same bytes as encoded whole', () => {
    const filter = new Uint8Array(300_000).map((_, i) => 65 + ((i * 7) % 26));
    const large = [
      bloomFilterRecord('2024-01-01', 'a.parquet', '20240101000000000', { type: 'DYNAMIC_V0', serialized: filter }),
      bloomFilterRecord('', 'b.parquet', '20240101000000000', { type: '', serialized: filter.subarray(0, 70_000) }, true),
      bloomFilterRecord('2024-01-01', 'c.parquet', '20240101000000000', { type: 'SIMPLE', serialized: filter.subarray(0, 5000) }),
    ];
    const shared = recordIndexRecord('key-2', '2024-01-01', '7e3e694c-264a-4dc9-b93d-fae90ab7c84b-3', '20240101120000123') as Extract<
      MetadataRecord,
      { type: 5 }
    >;
    const locations: MetadataRecord[] = [
      { key: 'key-3', type: 5, recordIndex: shared.recordIndex },
      { key: 'key-4', type: 5, recordIndex: shared.recordIndex },
      recordIndexRecord('ключ', 'партиция/01', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '20991231235959999'),
      recordIndexRecord('', '', '00000000-0000-0000-0000-000000000000', '19700101000000000'),
      {
        key: 'raw',
        type: 5,
        recordIndex: {
          partitionName: null,
          fileIdHighBits: null,
          fileIdLowBits: null,
          fileIndex: null,
          fileId: 'a-raw-file-id',
          instantTime: null,
          fileIdEncoding: 1,
        },
      },
    ];
    for (const record of [...records, ...large, shared, ...locations]) {
      const parts = encodeMetadataRecordParts(record);
      const joined = parts instanceof Uint8Array ? parts : Buffer.concat(parts);
      assert.deepEqual(new Uint8Array(joined), encodeMetadataRecord(record), `record ${record.key}`);
      if (record.type === 4 && record.bloomFilter.bloomFilter.length >= 5000) {
        assert.ok(Array.isArray(parts), 'a large filter comes as parts');
        assert.ok((parts as Uint8Array[]).includes(record.bloomFilter.bloomFilter), 'the filter itself, not a copy');
      }
    }
  });

  it("record-index locations keep the UUID halves, the file index and the instant's milliseconds", () => {
    const record = records[4] as Extract<MetadataRecord, { type: 5 }>;
    assert.equal(recordIndexFileId(record.recordIndex), '7e3e694c-264a-4dc9-b93d-fae90ab7c84b-3');
    assert.equal(record.recordIndex.fileIndex, 3);
    assert.equal(record.recordIndex.fileIdHighBits, BigInt.asIntN(64, 0x7e3e694c264a4dc9n));
    assert.equal(record.recordIndex.instantTime, BigInt(new Date(2024, 0, 1, 12, 0, 0, 123).getTime()));
    assert.throws(() => recordIndexRecord('k', 'p', 'not-a-uuid-0', '20240101000000000'), /is not <uuid>-<index>/);
  });

  it('merge as HoodieMetadataPayload: listings combine (deletions remove, or stay as tombstones), stats widen and add up, the rest is replaced', () => {
    const older = partitionFilesRecord(
      'p',
      new Map([
        ['a', 5],
        ['b', 7],
      ]),
    );
    const newer = partitionFilesRecord(
      'p',
      new Map([
        ['a', 9],
        ['c', 1],
      ]),
      ['b', 'gone'],
    );
    const merged = mergeRecords(older, newer) as Extract<MetadataRecord, { type: 1 | 2 }>;
    assert.deepEqual([...merged.files].sort(), [
      ['a', { size: 9, isDeleted: false }],
      ['c', { size: 1, isDeleted: false }],
      ['gone', { size: 0, isDeleted: true }],
    ]);
    const stats = (min: number, max: number, isDeleted = false) =>
      columnStatsRecord(
        'p',
        {
          fileName: 'f',
          columnName: 'x',
          minValue: { type: 'int', value: min },
          maxValue: { type: 'int', value: max },
          nullCount: 1,
          valueCount: 2,
          totalSize: 3,
          totalUncompressedSize: 4,
        },
        isDeleted,
      );
    const widened = mergeRecords(stats(5, 8), stats(2, 6)) as Extract<MetadataRecord, { type: 3 }>;
    assert.deepEqual(
      [widened.columnStats.minValue, widened.columnStats.maxValue, widened.columnStats.valueCount],
      [{ type: 'int', value: 2 }, { type: 'int', value: 8 }, 4],
    );
    assert.deepEqual(mergeRecords(stats(5, 8), stats(2, 6, true)), stats(2, 6, true));
    assert.deepEqual(mergeRecords(stats(5, 8), { key: 'k', deleted: true }), { key: 'k', deleted: true });
    const moved = recordIndexRecord('k', 'q', '7e3e694c-264a-4dc9-b93d-fae90ab7c84b-0', '20240102000000000');
    assert.equal(mergeRecords(records[4], moved), moved);
  });
});

describe('Parquet footers read from storage', () => {
  it('give the footer read locally, with a bloom filter of any size (one ranged read, or two for a large footer)', async () => {
    const dir = tempDir('mdt-footers-');
    const db = await DuckDBInstance.create(':memory:');
    const connection = await db.connect();
    const storage = openStorage(dir);
    const requests = new Map<string, number>();
    const counted = Object.create(storage, {
      getRange: {
        value: (path: string, start: number, end: number) => {
          requests.set(path, (requests.get(path) ?? 0) + 1);
          return storage.getRange(path, start, end);
        },
      },
    }) as typeof storage;
    for (const [name, rows, filterLength] of [
      ['small.parquet', 10, 100],
      ['default.parquet', 5000, 431_380],
      ['large.parquet', 5000, 900_000],
    ] as const) {
      const file = join(dir, name);
      await connection.run(`COPY (SELECT i AS id, 'v' || i AS s FROM range(${rows}) t(i)) TO '${file}' (FORMAT parquet)`);
      await setFooterKeyValues(file, { 'org.apache.hudi.bloomfilter': 'A'.repeat(filterLength), hoodie_bloom_filter_type_code: 'DYNAMIC_V0' });
      const local = await readLocalFooter(file);
      const stored = await readStoredFooter(counted, name, statSync(file).size);
      assert.deepEqual(footerBloomFilterBytes(stored), footerBloomFilterBytes(local), name);
      assert.deepEqual(columnRangesFromFooter(stored, name, ['id', 's']), columnRangesFromFooter(local, name, ['id', 's']), name);
      assert.equal(footerBloomFilterBytes(stored)?.bytes.length, filterLength);
      assert.equal(requests.get(name), filterLength > 500_000 ? 2 : 1, `${name}: ranged reads`);
    }
    connection.closeSync();
  });
});

describe("column ranges from Parquet footers (parquet-mr's statistics, Hudi's conversions)", () => {
  it('types, nulls, several row groups', async () => {
    const dir = tempDir('mdt-stats-');
    const file = join(dir, 'f.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const connection = await db.connect();
    // 5000 rows in row groups of 2048: n is null in the first row group only, allnull is null everywhere.
    await connection.run(`COPY (
      SELECT i::BIGINT AS id, 'name-' || lpad(i::VARCHAR, 5, '0') AS s, CASE WHEN i < 2048 THEN NULL ELSE i END::INTEGER AS n,
             NULL::INTEGER AS allnull, NULL::VARCHAR AS nullstring, (i / 100.0)::DECIMAL(10, 2) AS price, DATE '2024-01-01' + (i % 30)::INTEGER AS d,
             (i % 2 = 0) AS b, CASE WHEN i = 0 THEN 0.0 ELSE i * 1.5 END::DOUBLE AS x, {'a': i} AS nested
      FROM range(5000) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
    connection.closeSync();
    const footer = await readLocalFooter(file);
    const ranges = new Map(
      columnRangesFromFooter(footer, 'f.parquet', ['id', 's', 'n', 'allnull', 'nullstring', 'price', 'd', 'b', 'x', 'nested', 'missing']).map((r) => [
        r.columnName,
        r,
      ]),
    );
    assert.deepEqual(
      [...ranges.keys()].sort(),
      ['allnull', 'b', 'd', 'id', 'n', 'nullstring', 'price', 's', 'x'],
      'top-level columns only; nested and missing ones get none',
    );
    const range = (name: string) => ranges.get(name)!;
    assert.deepEqual(
      [range('id').minValue, range('id').maxValue, range('id').nullCount, range('id').valueCount],
      [{ type: 'long', value: 0n }, { type: 'long', value: 4999n }, 0, 5000],
    );
    assert.deepEqual(
      [range('s').minValue, range('s').maxValue],
      [
        { type: 'string', value: 'name-00000' },
        { type: 'string', value: 'name-04999' },
      ],
    );
    // A primitive column with no values in a row group reports Java's default (0) as its min and max there.
    assert.deepEqual([range('n').minValue, range('n').maxValue, range('n').nullCount], [{ type: 'int', value: 0 }, { type: 'int', value: 4999 }, 2048]);
    assert.deepEqual(
      [range('allnull').minValue, range('allnull').maxValue, range('allnull').nullCount],
      [{ type: 'int', value: 0 }, { type: 'int', value: 0 }, 5000],
    );
    assert.deepEqual([range('nullstring').minValue, range('nullstring').maxValue, range('nullstring').nullCount], [null, null, 5000]);
    // decimal(10, 2) → Hudi's decimal(30, 15): unscaled × 10^13.
    assert.deepEqual(
      [range('price').minValue, range('price').maxValue],
      [
        { type: 'decimal', unscaled: 0n },
        { type: 'decimal', unscaled: 4999n * 10n ** 13n },
      ],
    );
    assert.deepEqual(
      [range('d').minValue, range('d').maxValue],
      [
        { type: 'date', value: 19723 },
        { type: 'date', value: 19752 },
      ],
    );
    assert.deepEqual(
      [range('b').minValue, range('b').maxValue],
      [
        { type: 'boolean', value: false },
        { type: 'boolean', value: true },
      ],
    );
    // parquet-mr widens a 0.0 minimum to -0.0.
    const xMin = range('x').minValue;
    assert.ok(xMin?.type === 'double' && Object.is(xMin.value, -0), 'a 0.0 minimum reads as -0.0');
    const sizes = [...ranges.values()].every((r) => r.totalSize > 0 && r.totalUncompressedSize > 0);
    assert.ok(sizes, 'column chunk sizes add up over the row groups');
  });
});

describe("column ranges of a log file's records (HoodieAppendHandle's collectColumnRangeMetadata)", () => {
  const schema: AvroRecordSchema = {
    type: 'record',
    name: 'r',
    fields: [
      { name: '_hoodie_commit_time', type: ['null', 'string'] },
      { name: 's', type: ['null', 'string'] },
      { name: 'l', type: 'long' },
      { name: 'n', type: ['null', 'int'] },
      { name: 'x', type: ['null', 'double'] },
      { name: 'b', type: ['null', 'boolean'] },
      { name: 'd', type: ['null', { type: 'int', logicalType: 'date' }] },
      { name: 'p', type: ['null', { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 }] },
      { name: 't', type: ['null', { type: 'long', logicalType: 'timestamp-micros' }] },
      { name: 'raw', type: ['null', 'bytes'] },
      { name: 'm', type: ['null', { type: 'map', values: 'int' }] },
      { name: 'nested', type: ['null', { type: 'record', name: 'inner', fields: [{ name: 'a', type: 'int' }] }] },
    ],
  };
  const decimal = (unscaled: bigint) => bigintToTwosComplement(unscaled);
  const records = [
    {
      _hoodie_commit_time: '1',
      s: 'zebra',
      l: 5n,
      n: null,
      x: 0,
      b: true,
      d: 19723,
      p: decimal(-150n),
      t: 2n,
      raw: Buffer.from([0x7f]),
      m: { k: 1 },
      nested: { a: 1 },
    },
    // U+FFFD sorts after U+1F600 in UTF-16 code units, before it in UTF-8 bytes: Avro's Utf8 compares the bytes.
    {
      _hoodie_commit_time: '1',
      s: '\u{1F600}',
      l: -3n,
      n: 7,
      x: -0,
      b: false,
      d: 19700,
      p: decimal(99n),
      t: 9n,
      raw: Buffer.from([0x80]),
      m: null,
      nested: null,
    },
    { _hoodie_commit_time: '1', s: '\uFFFD', l: 0n, n: -2, x: Number.NaN, b: null, d: null, p: null, t: null, raw: null, m: { j: 2 }, nested: { a: 0 } },
  ];

  it('min/max as Avro compares the values, nulls and values counted, no sizes; every field unless listed', () => {
    const ranges = new Map(columnRangesFromRecords(schema, records, [], '.f_1.log.1_0-1-0').map((r) => [r.columnName, r]));
    assert.deepEqual(
      [...ranges.keys()],
      schema.fields.map((f) => f.name),
      "every field, in the schema's order",
    );
    const of = (name: string) => {
      const r = ranges.get(name)!;
      return [r.minValue, r.maxValue, r.nullCount, r.valueCount];
    };
    assert.deepEqual(of('s'), [{ type: 'string', value: 'zebra' }, { type: 'string', value: '\u{1F600}' }, 0, 3]);
    assert.deepEqual(of('l'), [{ type: 'long', value: -3n }, { type: 'long', value: 5n }, 0, 3]);
    assert.deepEqual(of('n'), [{ type: 'int', value: -2 }, { type: 'int', value: 7 }, 1, 3]);
    // Float.compareTo: -0.0 below 0.0, NaN above everything.
    const [xMin, xMax] = of('x') as unknown as [{ value: number }, { value: number }];
    assert.ok(Object.is(xMin.value, -0) && Number.isNaN(xMax.value));
    assert.deepEqual(of('b'), [{ type: 'boolean', value: false }, { type: 'boolean', value: true }, 1, 3]);
    assert.deepEqual(of('d'), [{ type: 'date', value: 19700 }, { type: 'date', value: 19723 }, 1, 3]);
    // decimal(10, 2) → decimal(30, 15).
    assert.deepEqual(of('p'), [{ type: 'decimal', unscaled: -150n * 10n ** 13n }, { type: 'decimal', unscaled: 99n * 10n ** 13n }, 1, 3]);
    assert.deepEqual(of('t'), [{ type: 'long', value: 2n }, { type: 'long', value: 9n }, 1, 3]);
    // ByteBuffer.compareTo: signed bytes, 0x80 (-128) below 0x7f.
    assert.deepEqual(of('raw'), [{ type: 'bytes', value: new Uint8Array([0x80]) }, { type: 'bytes', value: new Uint8Array([0x7f]) }, 1, 3]);
    assert.deepEqual(of('m'), [null, null, 3, 3], 'a map cannot be compared: every value counts as a null');
    assert.deepEqual(of('nested'), [null, null, 1, 3], 'a record has no min/max');
    assert.ok([...ranges.values()].every((r) => r.totalSize === 0 && r.totalUncompressedSize === 0));

    const listed = columnRangesFromRecords(schema, records, ['n', 'missing', 's'], 'f');
    assert.deepEqual(
      listed.map((r) => r.columnName),
      ['s', 'n'],
      "the listed fields the schema has, in the schema's order",
    );
    // A log file of deletes only: every column, no values.
    assert.deepEqual(
      columnRangesFromRecords(schema, [], ['l'], 'f').map((r) => [r.minValue, r.maxValue, r.nullCount, r.valueCount]),
      [[null, null, 0, 0]],
    );
    const fixed: AvroRecordSchema = { type: 'record', name: 'r', fields: [{ name: 'f', type: { type: 'fixed', name: 'f4', size: 4 } }] };
    assert.throws(() => columnRangesFromRecords(fixed, [{ f: Buffer.alloc(4) }], [], 'f'), /fixed without a decimal type/);
  });

  it('a delta commit writes the ranges given for its log files, next to its base files', async () => {
    const ranges = columnRangesFromRecords(schema, records, ['l'], '.f1_001.log.1_0-1-0');
    const changes = await convertCommitMetadata(
      {
        partitionToWriteStats: {
          p: [
            { path: 'p/.f1_001.log.1_0-1-0', partitionPath: 'p', fileSizeInBytes: 10 } as never,
            { path: 'p/.f2_001.log.1_0-1-0', partitionPath: 'p', fileSizeInBytes: 10 } as never,
          ],
        },
        compacted: false,
        extraMetadata: { schema: JSON.stringify(schema) },
        operationType: 'UPSERT',
      },
      {
        instantTime: '002',
        partitions: new Set(['files', 'column_stats']),
        populateMetaFields: true,
        footer: () => Promise.reject(new Error('no base files here')),
        properties: new Map([['hoodie.metadata.index.column.stats.column.list', 'l']]),
        logColumnRanges: new Map([['p/.f1_001.log.1_0-1-0', ranges]]),
      },
    );
    // f2 has no ranges given (as a Hudi write stat without record stats): nothing for it.
    assert.deepEqual(changes.get('column_stats'), [{ record: columnStatsRecord('p', ranges[0]!) }]);
  });
});

describe('metadata-table reads: which log blocks count', () => {
  it('blocks of completed valid instants, in order; a rollback block drops its target; a block past the latest instant ends the scan', async () => {
    const table = tempDir('mdt-read-');
    const storage = openStorage(table);
    const fileId = fileGroupId('files', 0);
    const block = (instant: string, record: MetadataRecord): LogBlockInput => ({
      type: 'HFILE_DATA_BLOCK',
      header: { INSTANT_TIME: instant, SCHEMA: METADATA_RECORD_WRITER_SCHEMA_TEXT },
      content: writeHudiLogBlockHFile([{ key: record.key, value: encodeMetadataRecord(record) }], { schema: METADATA_RECORD_WRITER_SCHEMA_TEXT }),
    });
    const files = (names: string[]) => partitionFilesRecord('p', new Map(names.map((n) => [n, 1])));
    const logs: LogBlockInput[][] = [
      [deleteBlock({ instantTime: '00000000000000010', records: [] })],
      [block('20240101000000001', files(['committed']))],
      [block('20240101000000002', files(['data-pending']))],
      [block('20240101000000003', files(['mdt-inflight']))],
      [block('20240101000000004', files(['rolled-back']))],
      [rollbackCommandBlock({ instantTime: '20240101000000005', targetInstantTime: '20240101000000004' })],
      [block('20240101000000006', files(['second']))],
      [block('20240101000000009', files(['after-latest']))],
      [block('20240101000000007', files(['never-read']))],
    ];
    for (const [index, blocks] of logs.entries())
      await storage.put(`.hoodie/metadata/files/.${fileId}_00000000000000010.log.${index + 1}_0-0-0`, encodeLogBlocks(blocks));
    const completed = [
      '00000000000000010',
      '20240101000000001',
      '20240101000000002',
      '20240101000000004',
      '20240101000000005',
      '20240101000000006',
      '20240101000000007',
    ];
    const timeline = new Timeline([
      ...completed.map((time) => ({ time, action: 'deltacommit' as const, state: 'COMPLETED' as const })),
      { time: '20240101000000003', action: 'deltacommit', state: 'INFLIGHT' },
    ]);
    const listing = (await storage.listDir('.hoodie/metadata/files')).files;
    const [group] = fileGroupsOf('files', listing, timeline);
    assert.ok(group);
    // 002's data instant did not complete; 009 is newer than every completed metadata instant.
    const valid = new Set([
      '00000000000000010',
      '20240101000000001',
      '20240101000000003',
      '20240101000000004',
      '20240101000000006',
      '20240101000000007',
      '20240101000000009',
    ]);
    const merged = await readFileGroup(storage, group, { metadataTimeline: timeline, validInstants: valid });
    const record = merged.get('p');
    assert.ok(record !== undefined && 'files' in record);
    assert.deepEqual([...record.files.keys()].sort(), ['committed', 'second']);
  });
});
