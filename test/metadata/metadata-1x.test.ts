/**
 * The 1.x metadata-table record layer (table versions 8 and 9) on its own: reading the metadata tables Hudi 1.0.2
 * and 1.1.1 wrote (test/fixtures/hudi-1x-metadata/) gives what Hudi's hudi_metadata() read; what we do not read is
 * refused by name; partition stats, the columns indexed, the log block and the merge rules follow Hudi's code.
 * test/interop/metadata-table-1x.test.ts checks the same against Spark, commit by commit.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HudiError, UnsupportedTableError } from '../../lib/errors.js';
import { readHudiHFile } from '../../lib/hfile/index.js';
import { encodeDatum } from '../../lib/log-format/avro.js';
import { bigintToTwosComplement, iterateLogBlocks } from '../../lib/log-format/index.js';
import { decodeMetadataRecord } from '../../lib/metadata/codec.js';
import { columnRangesFromRecords } from '../../lib/metadata/column-stats.js';
import {
  columnsToIndex1x,
  logColumnStatsRecords1x,
  metadataLogBlock1x,
  partitionStatsIndexKey,
  partitionStatsRecords1x,
} from '../../lib/metadata/convert-1x.js';
import { columnIndexId, partitionIndexId } from '../../lib/metadata/hash-ids.js';
import { columnStatsIndexVersion1x, type Metadata1xReadOptions, readMetadataTable1x } from '../../lib/metadata/reader-1x.js';
import { type ColumnStatsMetadata, type MetadataRecord, mergeRecords } from '../../lib/metadata/records.js';
import { metadataRecordTypeOf } from '../../lib/metadata/schema.js';
import { METADATA_1X_VERSIONS, metadataRecordType1x } from '../../lib/metadata/schema-1x.js';
import { openStorage } from '../../lib/storage/index.js';
import type { AvroRecordSchema } from '../../lib/table/schema.js';
import { HudiTable } from '../../lib/table/table.js';
import { comparableMetadataRow, sparkMetadataRow } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/hudi-1x-metadata');
const RELEASES = [
  ['1.0.2', 8],
  ['1.1.1', 9],
] as const;

async function dataInstants(path: string): Promise<Metadata1xReadOptions> {
  const table = await HudiTable.open(openStorage(path));
  return {
    completedDataInstants: new Set(table.timeline.completed().map((instant) => instant.time)),
    pendingDataInstants: new Set(table.timeline.pending().map((instant) => instant.time)),
  };
}

async function readAll(path: string, options?: Metadata1xReadOptions): Promise<MetadataRecord[]> {
  const contents = await readMetadataTable1x(openStorage(path), options ?? (await dataInstants(path)));
  return [...contents.partitions.values()].flatMap((records) => [...records.values()]);
}

const comparable = (rows: unknown[]): string[] => rows.map((row) => JSON.stringify(comparableMetadataRow(row))).sort();

function copyFixture(release: string): string {
  const dir = join(tempDir(`mdt1x-${release}-`), 'table');
  cpSync(join(FIXTURES, release), dir, { recursive: true });
  return dir;
}

function stats(overrides: Partial<ColumnStatsMetadata>): ColumnStatsMetadata {
  return {
    fileName: 'f.parquet',
    columnName: 'c',
    minValue: null,
    maxValue: null,
    valueCount: 0,
    nullCount: 0,
    totalSize: 0,
    totalUncompressedSize: 0,
    isDeleted: false,
    isTightBound: false,
    ...overrides,
  };
}

describe('1.x metadata tables Hudi wrote, read', () => {
  for (const [release, version] of RELEASES) {
    it(`Hudi ${release} (table version ${version}): files, column_stats and partition_stats as hudi_metadata() read them`, async () => {
      const expected = JSON.parse(readFileSync(join(FIXTURES, release, 'expected.json'), 'utf8')) as unknown[];
      const ours = await readAll(join(FIXTURES, release));
      assert.deepEqual(new Set(ours.map((record) => record.type)), new Set([1, 2, 3, 6]));
      assert.deepEqual(comparable(ours.map(sparkMetadataRow)), comparable(expected));
    });

    it(`Hudi ${release}: a metadata deltacommit of a data instant still pending does not count`, async () => {
      const dir = copyFixture(release);
      const options = await dataInstants(dir);
      const [first, second] = [...options.completedDataInstants].sort();
      const ours = await readAll(dir, {
        completedDataInstants: new Set([first!]),
        pendingDataInstants: new Set([second!]),
      });
      const listed = ours.flatMap((record) => (record.type === 2 ? [...record.files.keys()] : []));
      assert.ok(listed.length > 0);
      assert.ok(
        listed.every((name) => name.endsWith(`_${first}.parquet`)),
        'only the first commit’s files are listed',
      );
      assert.ok(ours.every((record) => record.type !== 3 || record.columnStats.fileName!.endsWith(`_${first}.parquet`)));
    });

    for (const partition of ['secondary_index_by_name', 'expr_index_upper']) {
      it(`Hudi ${release}: a metadata table with a ${partition} partition is refused by its name`, async () => {
        const dir = copyFixture(release);
        mkdirSync(join(dir, '.hoodie/metadata', partition));
        writeFileSync(join(dir, '.hoodie/metadata', partition, '.hoodie_partition_metadata'), '');
        await assert.rejects(readAll(dir), (error: unknown) => error instanceof UnsupportedTableError && error.message.includes(`"${partition}"`));
      });
    }

    it(`Hudi ${release}: the column-stats index version is the index definition's, else the table version's default`, async () => {
      assert.equal(await columnStatsIndexVersion1x(openStorage(join(FIXTURES, release)), version), version === 8 ? 1 : 2);
      const dir = copyFixture(release);
      const path = join(dir, '.hoodie/.index_defs/index.json');
      const definitions = JSON.parse(readFileSync(path, 'utf8')) as { indexDefinitions: { column_stats: { version?: string } } };
      definitions.indexDefinitions.column_stats.version = 'V1';
      writeFileSync(path, JSON.stringify(definitions));
      assert.equal(await columnStatsIndexVersion1x(openStorage(dir), version), 1);
      rmSync(path);
      assert.equal(await columnStatsIndexVersion1x(openStorage(dir), version), version === 8 ? 1 : 2);
    });

    it(`Hudi ${release}: a pending metadata-table compaction is refused`, async () => {
      const dir = copyFixture(release);
      writeFileSync(join(dir, '.hoodie/metadata/.hoodie/timeline/20991231000000000.compaction.requested'), '');
      await assert.rejects(readAll(dir), (error: unknown) => error instanceof UnsupportedTableError && /pending compaction/.test(error.message));
    });

    it(`Hudi ${release}: a log file of an uncompleted metadata deltacommit is left out`, async () => {
      const dir = copyFixture(release);
      const options = await dataInstants(dir);
      const second = [...options.completedDataInstants].sort()[1]!;
      const timeline = join(dir, '.hoodie/metadata/.hoodie/timeline');
      const completed = readdirSync(timeline).find((name) => name.startsWith(`${second}_`))!;
      rmSync(join(timeline, completed));
      const ours = await readAll(dir, options);
      assert.ok(ours.every((record) => record.type !== 3 || !record.columnStats.fileName!.endsWith(`_${second}.parquet`)));
    });
  }
});

describe('1.x metadata records', () => {
  it('the writer schema is the record behind the five meta fields, and the two versions differ as documented', () => {
    for (const [, version] of RELEASES) {
      const facts = METADATA_1X_VERSIONS[version];
      const writer = JSON.parse(facts.writerSchemaText) as { fields: { name: string }[] };
      const record = JSON.parse(facts.schemaText) as { fields: { name: string }[] };
      assert.deepEqual(
        writer.fields.map((f) => f.name),
        [
          '_hoodie_commit_time',
          '_hoodie_commit_seqno',
          '_hoodie_record_key',
          '_hoodie_partition_path',
          '_hoodie_file_name',
          ...record.fields.map((f) => f.name),
        ],
      );
    }
    assert.ok(METADATA_1X_VERSIONS[8].schemaText.includes('"isTightBound"') && !METADATA_1X_VERSIONS[8].schemaText.includes('"valueType"'));
    assert.ok(METADATA_1X_VERSIONS[9].schemaText.includes('"valueType"') && METADATA_1X_VERSIONS[9].schemaText.includes('"ArrayWrapper"'));
    assert.equal(METADATA_1X_VERSIONS[8].columnStatsIndexVersion, 1);
    assert.equal(METADATA_1X_VERSIONS[9].columnStatsIndexVersion, 2);
  });

  it('a secondary-index record and a LocalDateWrapper value are refused by name', () => {
    const type = metadataRecordType1x(9);
    const base = {
      _hoodie_commit_time: null,
      _hoodie_commit_seqno: null,
      _hoodie_record_key: null,
      _hoodie_partition_path: null,
      _hoodie_file_name: null,
      key: '',
      filesystemMetadata: null,
      BloomFilterMetadata: null,
      ColumnStatsMetadata: null,
      recordIndexMetadata: null,
      SecondaryIndexMetadata: null,
    };
    const secondary = encodeDatum(
      type,
      { ...base, type: 7, SecondaryIndexMetadata: { 'org.apache.hudi.avro.model.HoodieSecondaryIndexInfo': { isDeleted: false } } },
      'test',
    );
    assert.throws(
      () => decodeMetadataRecord(secondary, 'k', type),
      (error: unknown) => error instanceof UnsupportedTableError && /secondary-index/.test(error.message),
    );
    const localDate = encodeDatum(
      type,
      {
        ...base,
        type: 3,
        ColumnStatsMetadata: {
          'org.apache.hudi.avro.model.HoodieMetadataColumnStats': {
            fileName: { string: 'f.parquet' },
            columnName: { string: 'd' },
            minValue: { 'org.apache.hudi.avro.model.LocalDateWrapper': { value: 1 } },
            maxValue: null,
            valueCount: null,
            nullCount: null,
            totalSize: null,
            totalUncompressedSize: null,
            isDeleted: false,
            isTightBound: false,
            valueType: null,
          },
        },
      },
      'test',
    );
    assert.throws(
      () => decodeMetadataRecord(localDate, 'k', type),
      (error: unknown) => error instanceof UnsupportedTableError && /LocalDateWrapper/.test(error.message),
    );
  });

  it('partition stats: min of mins, max of maxes (nulls skipped), counts and sizes summed, tight bound, keyed by column and partition', () => {
    const files = [
      stats({
        columnName: 'id',
        minValue: { type: 'long', value: 5n },
        maxValue: { type: 'long', value: 9n },
        valueCount: 3,
        nullCount: 1,
        totalSize: 10,
        totalUncompressedSize: 20,
      }),
      stats({
        columnName: 'id',
        minValue: { type: 'long', value: 2n },
        maxValue: { type: 'long', value: 4n },
        valueCount: 2,
        nullCount: 0,
        totalSize: 7,
        totalUncompressedSize: 8,
      }),
      stats({ columnName: 'id', minValue: null, maxValue: null, valueCount: 4, nullCount: 4, totalSize: 1, totalUncompressedSize: 1 }),
      stats({ columnName: 'name', minValue: { type: 'string', value: 'b' }, maxValue: { type: 'string', value: 'x' }, valueCount: 1 }),
      stats({ columnName: 'gone', isDeleted: true }),
    ];
    const records = partitionStatsRecords1x('2024/01', files, 8);
    assert.deepEqual(
      records.map((r) => r.key),
      [partitionStatsIndexKey('2024/01', 'id'), partitionStatsIndexKey('2024/01', 'name')],
    );
    assert.equal(partitionStatsIndexKey('', 'id'), columnIndexId('id') + partitionIndexId('.'));
    const id = records[0]!;
    assert.equal(id.type, 6);
    assert.deepEqual(id.type === 6 ? id.columnStats : undefined, {
      fileName: '2024/01',
      columnName: 'id',
      minValue: { type: 'long', value: 2n },
      maxValue: { type: 'long', value: 9n },
      valueCount: 9,
      nullCount: 5,
      totalSize: 18,
      totalUncompressedSize: 29,
      isDeleted: false,
      isTightBound: true,
    });
  });

  it('partition stats at index version 2 compare decimals (unscaled bytes) by value, not by their bytes', () => {
    const decimal = { typeOrdinal: 10, additionalInfo: '10,2' };
    const bytes = (n: bigint) => ({ type: 'bytes' as const, value: new Uint8Array(bigintToTwosComplement(n)) });
    const files = [
      stats({ columnName: 'amount', minValue: bytes(703n), maxValue: bytes(3102n), valueType: decimal }),
      stats({ columnName: 'amount', minValue: bytes(100n), maxValue: bytes(-5n), valueType: decimal }),
    ];
    const [record] = partitionStatsRecords1x('p', files, 9);
    assert.ok(record?.type === 6);
    assert.deepEqual([record.columnStats.minValue, record.columnStats.maxValue, record.columnStats.valueType], [bytes(100n), bytes(3102n), decimal]);
  });

  it('log-file column stats: 1.0 keeps 0.x wrappers, 1.1 stores dates as ints and decimals as unscaled bytes with their value type', () => {
    const schema: AvroRecordSchema = {
      type: 'record',
      name: 'r',
      fields: [
        { name: 'd', type: ['null', { type: 'int', logicalType: 'date' }] },
        { name: 'amount', type: ['null', { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 }] },
        { name: 'created', type: ['null', { type: 'long', logicalType: 'timestamp-micros' }] },
      ],
    };
    const rows = [
      { d: 19723, amount: bigintToTwosComplement(703n), created: 5n },
      { d: 19700, amount: bigintToTwosComplement(100n), created: null },
    ];
    const byColumn = (records: MetadataRecord[]) =>
      new Map(records.map((r) => [r.type === 3 ? r.columnStats.columnName : '', r.type === 3 ? r.columnStats : undefined]));
    const v8 = byColumn(logColumnStatsRecords1x('p', '.f_1.log.1_0-1-0', schema, rows, ['d', 'amount', 'created'], 8));
    assert.deepEqual([v8.get('d')?.minValue, v8.get('d')?.valueType, v8.get('d')?.isTightBound], [{ type: 'date', value: 19700 }, undefined, false]);
    assert.deepEqual(v8.get('amount')?.minValue, { type: 'decimal', unscaled: 100n * 10n ** 13n });
    const v9 = byColumn(logColumnStatsRecords1x('p', '.f_1.log.1_0-1-0', schema, rows, ['d', 'amount', 'created'], 9));
    assert.deepEqual(
      [v9.get('d')?.minValue, v9.get('d')?.valueType],
      [
        { type: 'int', value: 19700 },
        { typeOrdinal: 12, additionalInfo: null },
      ],
    );
    assert.deepEqual(
      [v9.get('amount')?.minValue, v9.get('amount')?.maxValue, v9.get('amount')?.valueType],
      [
        { type: 'bytes', value: new Uint8Array(bigintToTwosComplement(100n)) },
        { type: 'bytes', value: new Uint8Array(bigintToTwosComplement(703n)) },
        { typeOrdinal: 10, additionalInfo: '10,2' },
      ],
    );
    assert.deepEqual(
      [v9.get('created')?.maxValue, v9.get('created')?.nullCount, v9.get('created')?.valueCount, v9.get('created')?.totalSize],
      [{ type: 'long', value: 5n }, 1, 2, 0],
    );
    assert.deepEqual(v9.get('created')?.valueType, { typeOrdinal: 16, additionalInfo: null });
  });

  it('log-file column stats at 1.1 store decimals beyond decimal(30, 15) at their own scale; 1.0 leaves such types out', () => {
    const schema: AvroRecordSchema = {
      type: 'record',
      name: 'r',
      fields: [
        { name: 'wide', type: ['null', { type: 'fixed', name: 'wide', size: 16, logicalType: 'decimal', precision: 38, scale: 10 }] },
        { name: 'fine', type: ['null', { type: 'bytes', logicalType: 'decimal', precision: 38, scale: 20 }] },
      ],
    };
    // 12345678901234567890123456.7890123456 needs 41 digits at scale 15; 0.12345678901234567891 has 20 decimals.
    const big = 123456789012345678901234567890123456n;
    const rows = [
      { wide: bigintToTwosComplement(big), fine: bigintToTwosComplement(12345678901234567891n) },
      { wide: bigintToTwosComplement(-big), fine: bigintToTwosComplement(-1n) },
    ];
    const records = logColumnStatsRecords1x('p', '.f_1.log.1_0-1-0', schema, rows, ['wide', 'fine'], 9);
    const byColumn = new Map(records.map((r) => [r.type === 3 ? r.columnStats.columnName : '', r.type === 3 ? r.columnStats : undefined]));
    const bytes = (n: bigint) => ({ type: 'bytes' as const, value: new Uint8Array(bigintToTwosComplement(n)) });
    assert.deepEqual(
      [byColumn.get('wide')?.minValue, byColumn.get('wide')?.maxValue, byColumn.get('wide')?.valueType],
      [bytes(-big), bytes(big), { typeOrdinal: 10, additionalInfo: '38,10' }],
    );
    assert.deepEqual(
      [byColumn.get('fine')?.minValue, byColumn.get('fine')?.maxValue, byColumn.get('fine')?.valueType],
      [bytes(-1n), bytes(12345678901234567891n), { typeOrdinal: 10, additionalInfo: '38,20' }],
    );
    // Table version 8 never indexes such types (columnsToIndex1x): its log ranges leave them out rather than fail.
    assert.deepEqual(logColumnStatsRecords1x('p', '.f_1.log.1_0-1-0', schema, rows, ['wide', 'fine'], 8), []);
    // 0.x wraps every decimal, and fails on a value beyond decimal(30, 15) as Hudi 0.15 does.
    assert.throws(
      () => columnRangesFromRecords(schema, rows, ['wide'], '.f_1.log.1_0-1-0'),
      (error: unknown) => error instanceof HudiError && /column wide/.test(error.message),
    );
  });

  it('merging: a tight-bound newer record replaces the older one; otherwise ranges widen', () => {
    const older: MetadataRecord = {
      key: 'k',
      type: 6,
      columnStats: stats({ minValue: { type: 'int', value: 1 }, maxValue: { type: 'int', value: 9 }, valueCount: 5 }),
    };
    const tight: MetadataRecord = {
      key: 'k',
      type: 6,
      columnStats: stats({ minValue: { type: 'int', value: 3 }, maxValue: { type: 'int', value: 4 }, valueCount: 2, isTightBound: true }),
    };
    assert.deepEqual(mergeRecords(older, tight), tight);
    const loose: MetadataRecord = { key: 'k', type: 6, columnStats: { ...tight.columnStats, isTightBound: false } };
    const merged = mergeRecords(older, loose);
    assert.ok('type' in merged && merged.type === 6);
    assert.deepEqual(
      [merged.columnStats.minValue, merged.columnStats.maxValue, merged.columnStats.valueCount],
      [{ type: 'int', value: 1 }, { type: 'int', value: 9 }, 7],
    );
  });

  it('columns indexed: the three meta columns, then the first 32 supported fields (1.0 skips bytes and wide decimals, 1.1 keeps them)', () => {
    const fields = [
      { name: '_hoodie_commit_time', type: ['null', 'string'] },
      { name: '_hoodie_file_name', type: ['null', 'string'] },
      { name: 'id', type: 'long' },
      { name: 'blob', type: ['null', 'bytes'] },
      { name: 'wide', type: ['null', { type: 'bytes', logicalType: 'decimal', precision: 38, scale: 10 }] },
      { name: 'nested', type: ['null', { type: 'record', name: 'n', fields: [] }] },
      { name: 'tags', type: ['null', { type: 'array', items: 'string' }] },
      ...Array.from({ length: 40 }, (_, i) => ({ name: `c${i}`, type: 'int' })),
    ];
    const schema = JSON.stringify({ type: 'record', name: 'r', fields });
    const meta = ['_hoodie_commit_time', '_hoodie_partition_path', '_hoodie_record_key'];
    const v8 = columnsToIndex1x(schema, 8, { populateMetaFields: true });
    assert.deepEqual(v8, [...meta, 'id', ...Array.from({ length: 31 }, (_, i) => `c${i}`)]);
    const v9 = columnsToIndex1x(schema, 9, { populateMetaFields: true });
    assert.deepEqual(v9, [...meta, 'id', 'blob', 'wide', ...Array.from({ length: 29 }, (_, i) => `c${i}`)]);
    assert.deepEqual(columnsToIndex1x(schema, 8, { populateMetaFields: false, configured: ['c3', 'id', '_hoodie_record_key'] }), ['c3', 'id']);
  });

  for (const [release, version] of RELEASES) {
    it(`Hudi ${release}: the log block of a commit decodes back to Hudi's records, and a repeated key is refused`, () => {
      const dir = join(FIXTURES, release, '.hoodie/metadata/partition_stats');
      const name = readdirSync(dir).find((n) => n.includes('.log.') && !n.includes('_00000000000000'))!;
      const instant = name.split('_')[1]!.split('.')[0]!;
      const [block] = [...iterateLogBlocks(readFileSync(join(dir, name)), name)];
      assert.equal(block?.header.SCHEMA, METADATA_1X_VERSIONS[version].writerSchemaText);
      const type = metadataRecordTypeOf(block!.header.SCHEMA!);
      const hudiRecords = readHudiHFile(block!.content).records;
      const theirs = hudiRecords.map((r) => decodeMetadataRecord(r.value, r.key, type));
      const ours = metadataLogBlock1x([...theirs].reverse(), instant, version);
      assert.deepEqual(ours.header, { INSTANT_TIME: instant, SCHEMA: METADATA_1X_VERSIONS[version].writerSchemaText });
      const back = readHudiHFile(ours.content);
      assert.equal(back.schema, METADATA_1X_VERSIONS[version].writerSchemaText);
      assert.deepEqual(
        back.records.map((r) => decodeMetadataRecord(r.value, r.key, type)),
        theirs,
      );
      // Keys and values are Hudi's bytes exactly (the key field emptied, as Hudi writes).
      assert.deepEqual(
        back.records.map((r) => [r.key, Buffer.from(r.value).toString('hex')]),
        hudiRecords.map((r) => [r.key, Buffer.from(r.value).toString('hex')]),
      );
      assert.throws(() => metadataLogBlock1x([theirs[0]!, theirs[0]!], instant, version), /appears twice/);
    });
  }
});
