/**
 * The metadata-table records Hudi 1.0.2 / 1.1.1 write for one data-table commit, as pure functions of the commit's
 * facts (HoodieTableMetadataUtil.convertMetadataToRecords), and the log block they go into. No timeline is touched:
 * the layout-2 write side calls these and writes the block.
 *
 * - files: commitFilesRecords in convert.ts, the same code in 0.15, 1.0.2 and 1.1.1.
 * - column_stats: per written Parquet base file and indexed column, the footer's range (column-stats.ts, as 0.x),
 *   isTightBound false; at column-stats index version 2 (1.1.x) stored as its ValueType says (toV2Value).
 * - partition_stats: per touched partition and indexed column, the range over the partition's latest files, tight
 *   bound (partitionStatsRecords1x).
 * - bloom_filters: per written base file, its footer's filter, as 0.x (bloomFilterRecords1x).
 */
import { HudiError, UnsupportedTableError } from '../errors.js';
import { writeHudiLogBlockHFile } from '../hfile/index.js';
import type { LogBlockInput } from '../log-format/index.js';
import { bigintToTwosComplement, deleteBlock, EMPTY_PAYLOAD_ORDERING_VALUE } from '../log-format/index.js';
import { topLevelLeafColumns } from '../parquet/footer.js';
import type { ThriftStruct } from '../parquet/thrift.js';
import { type AvroRecordSchema, META_FIELD_NAMES } from '../table/schema.js';
import { encodeMetadataRecord } from './codec.js';
import { columnRangesFromFooter, columnRangesFromRecords, type DecimalStorage } from './column-stats.js';
import { footerBloomFilterBytes } from './footers.js';
import { columnIndexId, partitionIndexId } from './hash-ids.js';
import { partitionIdentifier } from './partitions.js';
import {
  bloomFilterRecord,
  type ColumnRange,
  type ColumnStatsMetadata,
  columnStatsRecord,
  compareStatsValues,
  deletedColumnRange,
  type MetadataRecord,
  VALUE_TYPE_ORDINAL,
  type ValueTypeInfo,
  type WrappedValue,
} from './records.js';
import { type MetadataTableVersion1x, metadataRecordType1x, metadataVersionFacts } from './schema-1x.js';

/** HoodieTableMetadataUtil.META_COLS_TO_ALWAYS_INDEX, in its TreeMap's (name) order. */
const META_COLUMNS_ALWAYS_INDEXED = ['_hoodie_commit_time', '_hoodie_partition_path', '_hoodie_record_key'] as const;

interface AvroField {
  readonly name: string;
  readonly type: unknown;
}

/** The non-null branch of a nullable union (AvroSchemaUtils.getNonNullTypeFromUnion). */
function nonNull(type: unknown): unknown {
  return Array.isArray(type) ? (type.find((branch) => branch !== 'null') ?? 'null') : type;
}

/** isColumnTypeSupported: V1 (1.0.x) as a Spark write sees it, V2 (1.1.x). */
function supported(fieldType: unknown, indexVersion: 1 | 2): boolean {
  const type = nonNull(fieldType);
  const name = typeof type === 'string' ? type : (type as { type?: unknown }).type;
  if (name === 'record' || name === 'array' || name === 'map' || name === 'enum') return false;
  if (indexVersion === 2) return true;
  // V1 without a record type (Spark): no BYTES or FIXED; decimals must fit decimal(30, 15).
  const logical = typeof type === 'object' && type !== null ? (type as { logicalType?: string; precision?: number; scale?: number }) : {};
  if (logical.logicalType === 'decimal') {
    const precision = logical.precision ?? 0;
    const scale = logical.scale ?? 0;
    if (precision + (15 - scale) > 30 || scale > 15) return false;
    return true;
  }
  return name !== 'bytes' && name !== 'fixed';
}

/**
 * getColumnsToIndex for a commit (no column list configured): the three meta columns always indexed when the table
 * populates meta fields, then the first `maxColumnsToIndex` supported non-meta fields of the writer schema.
 * `configured`: hoodie.metadata.index.column.stats.column.list when set (meta columns dropped from it, then put first).
 */
export function columnsToIndex1x(
  writerSchemaText: string,
  tableVersion: MetadataTableVersion1x,
  options: { populateMetaFields: boolean; configured?: readonly string[] },
): string[] {
  const facts = metadataVersionFacts(tableVersion);
  let fields: AvroField[];
  try {
    fields = (JSON.parse(writerSchemaText) as { fields?: AvroField[] }).fields ?? [];
  } catch (cause) {
    throw new HudiError("the commit's writer schema is not JSON", { fix: 'this is a bug in the commit metadata', cause });
  }
  const meta: readonly string[] = META_FIELD_NAMES;
  const byName = new Map(fields.map((field) => [field.name, field]));
  const chosen =
    options.configured !== undefined && options.configured.length > 0
      ? options.configured.filter(
          (name) =>
            !(META_COLUMNS_ALWAYS_INDEXED as readonly string[]).includes(name) &&
            byName.has(name) &&
            supported(byName.get(name)!.type, facts.columnStatsIndexVersion),
        )
      : fields
          .filter((field) => supported(field.type, facts.columnStatsIndexVersion) && !meta.includes(field.name) && field.name !== '_hoodie_operation')
          .slice(0, facts.maxColumnsToIndex)
          .map((field) => field.name);
  return options.populateMetaFields ? [...META_COLUMNS_ALWAYS_INDEXED, ...chosen] : chosen;
}

// ---------------------------------------------------------------------------------------------------------------
// Column-stats index version 2: ValueType (org.apache.hudi.stats.ValueType, ordinals) and how values are stored.

interface LeafType {
  readonly valueType: ValueTypeInfo;
  /** Decimal scale (for turning 0.x's decimal(30,15) back into the column's unscaled value). */
  readonly scale: number;
}

const PHYSICAL_BOOLEAN = 0;
const PHYSICAL_INT32 = 1;
const PHYSICAL_INT64 = 2;
const PHYSICAL_FLOAT = 4;
const PHYSICAL_DOUBLE = 5;
const PHYSICAL_BINARY = 6;
const PHYSICAL_FIXED = 7;
/** parquet-format ConvertedType values (SchemaElement field 6). */
const CONVERTED_UTF8 = 0;
const CONVERTED_DECIMAL = 5;
const CONVERTED_DATE = 6;
const CONVERTED_TIMESTAMP_MILLIS = 9;
const CONVERTED_TIMESTAMP_MICROS = 10;

/** ValueType.fromParquetPrimitiveType (LogicalTypeParquetAdapter) of each top-level leaf column, by name. */
function leafValueTypes(footer: ThriftStruct): Map<string, LeafType> {
  const out = new Map<string, LeafType>();
  for (const { element, name } of topLevelLeafColumns(footer)) {
    const type = valueTypeOf(element);
    if (type !== undefined) out.set(name, type);
  }
  return out;
}

function valueTypeOf(element: ThriftStruct): LeafType | undefined {
  const physical = element.int(1);
  const logical = element.struct(10);
  const plain = (ordinal: number): LeafType => ({ valueType: { typeOrdinal: ordinal, additionalInfo: null }, scale: 0 });
  if (logical !== undefined) {
    if (logical.has(1)) return plain(VALUE_TYPE_ORDINAL.STRING);
    if (logical.has(5)) {
      const decimal = logical.struct(5)!;
      const scale = decimal.int(1) ?? 0;
      return { valueType: { typeOrdinal: VALUE_TYPE_ORDINAL.DECIMAL, additionalInfo: `${decimal.int(2) ?? 0},${scale}` }, scale };
    }
    if (logical.has(6)) return plain(VALUE_TYPE_ORDINAL.DATE);
    if (logical.has(8)) {
      const timestamp = logical.struct(8)!;
      const utc = timestamp.bool(1) === true;
      const unit = timestamp.struct(2);
      if (unit?.has(1)) return plain(utc ? VALUE_TYPE_ORDINAL.TIMESTAMP_MILLIS : VALUE_TYPE_ORDINAL.LOCAL_TIMESTAMP_MILLIS);
      if (unit?.has(2)) return plain(utc ? VALUE_TYPE_ORDINAL.TIMESTAMP_MICROS : VALUE_TYPE_ORDINAL.LOCAL_TIMESTAMP_MICROS);
    }
    // Nanosecond timestamps, times, UUIDs, integers of other widths: not written by Spark's Hudi writer here.
    return undefined;
  }
  // No logical type: parquet-mr derives one from the converted type (LogicalTypeAnnotation.fromOriginalType), as
  // for files whose writer sets only that (ours).
  switch (element.int(6)) {
    case CONVERTED_UTF8:
      return plain(VALUE_TYPE_ORDINAL.STRING);
    case CONVERTED_DECIMAL: {
      const scale = element.int(7) ?? 0;
      return { valueType: { typeOrdinal: VALUE_TYPE_ORDINAL.DECIMAL, additionalInfo: `${element.int(8) ?? 0},${scale}` }, scale };
    }
    case CONVERTED_DATE:
      return plain(VALUE_TYPE_ORDINAL.DATE);
    case CONVERTED_TIMESTAMP_MILLIS:
      return plain(VALUE_TYPE_ORDINAL.TIMESTAMP_MILLIS);
    case CONVERTED_TIMESTAMP_MICROS:
      return plain(VALUE_TYPE_ORDINAL.TIMESTAMP_MICROS);
    default:
      break;
  }
  switch (physical) {
    case PHYSICAL_BOOLEAN:
      return plain(VALUE_TYPE_ORDINAL.BOOLEAN);
    case PHYSICAL_INT32:
      return plain(VALUE_TYPE_ORDINAL.INT);
    case PHYSICAL_INT64:
      return plain(VALUE_TYPE_ORDINAL.LONG);
    case PHYSICAL_FLOAT:
      return plain(VALUE_TYPE_ORDINAL.FLOAT);
    case PHYSICAL_DOUBLE:
      return plain(VALUE_TYPE_ORDINAL.DOUBLE);
    case PHYSICAL_BINARY:
      return plain(VALUE_TYPE_ORDINAL.BYTES);
    case PHYSICAL_FIXED:
      return plain(VALUE_TYPE_ORDINAL.FIXED);
    default:
      return undefined;
  }
}

/**
 * Of the `columns` a commit of `writerSchemaText` indexes (columnsToIndex1x), those whose type this build cannot give
 * an index version 2 value type (avroValueType): at table version 9 their column-stats records cannot be written.
 * Empty at version 8 (index version 1 stores no value type).
 */
export function columnsWithoutValueType(
  writerSchemaText: string,
  columns: readonly string[],
  tableVersion: MetadataTableVersion1x,
): { readonly column: string; readonly type: string }[] {
  if (metadataVersionFacts(tableVersion).columnStatsIndexVersion !== 2) return [];
  const fields = new Map(((JSON.parse(writerSchemaText) as { fields?: AvroField[] }).fields ?? []).map((field) => [field.name, field.type]));
  return columns
    .filter((column) => fields.has(column) && avroValueType(fields.get(column)) === undefined)
    .map((column) => ({ column, type: JSON.stringify(nonNull(fields.get(column))) }));
}

/**
 * A 0.x-wrapped value as index version 2 stores it (ValueType's primitive wrapper): dates in IntWrapper, decimals as
 * the column-scale unscaled value's bytes in BytesWrapper (ranges collected with columnStatsDecimals hold them so
 * already); the rest as 0.x wraps them.
 */
function toV2Value(value: WrappedValue | null, leaf: LeafType): WrappedValue | null {
  if (value === null) return null;
  if (value.type === 'date') return { type: 'int', value: value.value };
  if (value.type === 'decimal') {
    const unscaled = value.unscaled / 10n ** BigInt(15 - leaf.scale);
    return { type: 'bytes', value: new Uint8Array(bigintToTwosComplement(unscaled)) };
  }
  return value;
}

/**
 * How a table version's column ranges hold decimals: index version 2 stores any decimal at its own scale; index
 * version 1 in the decimal(30, 15) wrapper, indexing only the types it holds; 0.x wraps every decimal.
 */
export function columnStatsDecimals(tableVersion: number): DecimalStorage {
  if (tableVersion !== 8 && tableVersion !== 9) return 'wrapper';
  return metadataVersionFacts(tableVersion).columnStatsIndexVersion === 2 ? 'column-scale' : 'wrapper-types';
}

/** One file's column-stats records for a table version (createColumnStatsRecords). */
export function columnStatsRecords1x(
  partitionPath: string,
  fileName: string,
  footer: ThriftStruct,
  columns: readonly string[],
  tableVersion: MetadataTableVersion1x,
): MetadataRecord[] {
  const facts = metadataVersionFacts(tableVersion);
  const ranges = columnRangesFromFooter(footer, fileName, columns, columnStatsDecimals(tableVersion));
  if (facts.columnStatsIndexVersion === 1) return ranges.map((range) => withStatsFields(columnStatsRecord(partitionPath, range), false, undefined));
  const leaves = leafValueTypes(footer);
  return ranges.map((range) => {
    const leaf = leaves.get(range.columnName);
    if (leaf === undefined) {
      throw new UnsupportedTableError(`column ${range.columnName} of ${fileName} has a Parquet type this build cannot give a column-stats value type`, {
        fix: 'leave the column out of hoodie.metadata.index.column.stats.column.list',
      });
    }
    const v2: ColumnRange = { ...range, minValue: toV2Value(range.minValue, leaf), maxValue: toV2Value(range.maxValue, leaf) };
    return withStatsFields(columnStatsRecord(partitionPath, v2), false, leaf.valueType);
  });
}

/**
 * ValueType.fromSchema of an Avro field's type (nullable unions resolved): what index version 2 stores a log
 * file's min/max as. Undefined for types Hudi does not index (record, map, array, enum) or this build does not give
 * a type (nanosecond timestamps, UUIDs as fixed).
 */
function avroValueType(fieldType: unknown): LeafType | undefined {
  const type = nonNull(fieldType);
  const name = typeof type === 'string' ? type : ((type as { type?: unknown }).type as string | undefined);
  const logical = typeof type === 'object' && type !== null ? (type as { logicalType?: string; precision?: number; scale?: number }) : {};
  const plain = (ordinal: number): LeafType => ({ valueType: { typeOrdinal: ordinal, additionalInfo: null }, scale: 0 });
  if (logical.logicalType === 'decimal' && (name === 'bytes' || name === 'fixed')) {
    const scale = logical.scale ?? 0;
    return { valueType: { typeOrdinal: VALUE_TYPE_ORDINAL.DECIMAL, additionalInfo: `${logical.precision ?? 0},${scale}` }, scale };
  }
  const byName: Record<string, Record<string, number>> = {
    boolean: { '': VALUE_TYPE_ORDINAL.BOOLEAN },
    int: { '': VALUE_TYPE_ORDINAL.INT, date: VALUE_TYPE_ORDINAL.DATE },
    long: {
      '': VALUE_TYPE_ORDINAL.LONG,
      'timestamp-millis': VALUE_TYPE_ORDINAL.TIMESTAMP_MILLIS,
      'timestamp-micros': VALUE_TYPE_ORDINAL.TIMESTAMP_MICROS,
      'local-timestamp-millis': VALUE_TYPE_ORDINAL.LOCAL_TIMESTAMP_MILLIS,
      'local-timestamp-micros': VALUE_TYPE_ORDINAL.LOCAL_TIMESTAMP_MICROS,
    },
    float: { '': VALUE_TYPE_ORDINAL.FLOAT },
    double: { '': VALUE_TYPE_ORDINAL.DOUBLE },
    string: { '': VALUE_TYPE_ORDINAL.STRING },
    bytes: { '': VALUE_TYPE_ORDINAL.BYTES },
    fixed: { '': VALUE_TYPE_ORDINAL.FIXED },
  };
  const ordinal = name === undefined ? undefined : byName[name]?.[logical.logicalType ?? ''];
  return ordinal === undefined ? undefined : plain(ordinal);
}

/**
 * One log file's column-stats records (HoodieAppendHandle's collectColumnRangeMetadata over the records it appended,
 * taken as they are by translateWriteStatToColumnStats): `records` are the data block's Avro records as decoded
 * (meta fields included), `schema` the block's writer schema. Ranges as column-stats.ts's columnRangesFromRecords
 * (sizes 0); at index version 2 stored as the field's ValueType says.
 */
export function logColumnStatsRecords1x(
  partitionPath: string,
  logFileName: string,
  schema: AvroRecordSchema,
  records: readonly Readonly<Record<string, unknown>>[],
  columns: readonly string[],
  tableVersion: MetadataTableVersion1x,
): MetadataRecord[] {
  const ranges = columnRangesFromRecords(schema, records, columns, logFileName, columnStatsDecimals(tableVersion));
  return logColumnRangeRecords1x(partitionPath, logFileName, schema, ranges, tableVersion);
}

/** logColumnStatsRecords1x from the ranges already collected over the log file's records (columnRangesFromRecords). */
export function logColumnRangeRecords1x(
  partitionPath: string,
  logFileName: string,
  schema: AvroRecordSchema,
  ranges: readonly ColumnRange[],
  tableVersion: MetadataTableVersion1x,
): MetadataRecord[] {
  const facts = metadataVersionFacts(tableVersion);
  if (facts.columnStatsIndexVersion === 1) return ranges.map((range) => withStatsFields(columnStatsRecord(partitionPath, range), false, undefined));
  const fieldTypes = new Map(schema.fields.map((field) => [field.name, field.type as unknown]));
  return ranges.map((range) => {
    const leaf = avroValueType(fieldTypes.get(range.columnName));
    if (leaf === undefined) {
      throw new UnsupportedTableError(`column ${range.columnName} of ${logFileName} has an Avro type this build cannot give a column-stats value type`, {
        fix: 'leave the column out of hoodie.metadata.index.column.stats.column.list',
      });
    }
    const v2: ColumnRange = { ...range, minValue: toV2Value(range.minValue, leaf), maxValue: toV2Value(range.maxValue, leaf) };
    return withStatsFields(columnStatsRecord(partitionPath, v2), false, leaf.valueType);
  });
}

function withStatsFields(record: MetadataRecord, isTightBound: boolean, valueType: ValueTypeInfo | undefined): MetadataRecord {
  if (record.type !== 3 && record.type !== 6) return record;
  const columnStats: ColumnStatsMetadata = { ...record.columnStats, isTightBound, ...(valueType === undefined ? {} : { valueType }) };
  return record.type === 3 ? { ...record, columnStats } : { ...record, columnStats };
}

/**
 * A clean's column-stats tombstones for one cleaned file (convertMetadataToColumnStatsRecords of a clean:
 * HoodieColumnRangeMetadata.stub, no values, counts -1, isDeleted): at index version 2 with value type NULL
 * (ValueMetadata.getEmptyValueMetadata), at 1 without one.
 */
export function cleanColumnStatsRecords1x(
  partitionPath: string,
  fileName: string,
  columns: readonly string[],
  tableVersion: MetadataTableVersion1x,
): MetadataRecord[] {
  const facts = metadataVersionFacts(tableVersion);
  const valueType = facts.columnStatsIndexVersion === 2 ? { typeOrdinal: VALUE_TYPE_ORDINAL.NULL, additionalInfo: null } : undefined;
  return columns.map((column) => withStatsFields(columnStatsRecord(partitionPath, deletedColumnRange(fileName, column), true), false, valueType));
}

/** A base file a commit wrote, with its Parquet footer. */
export interface WrittenBaseFile {
  readonly partitionPath: string;
  readonly fileName: string;
  readonly footer: ThriftStruct;
}

/**
 * A commit's bloom_filters records (convertMetadataToBloomFilterRecords, the same in 1.0.2 and 1.1.1): per written
 * base file whose footer has a filter, its serialized filter, typed `bloomType` (the writer's
 * hoodie.bloom.index.filter.type, not the footer's code) and stamped with the instant. Log files get none (delta
 * write stats are skipped), nor does a file without a filter (Hudi logs it and goes on). One record per key.
 */
export function bloomFilterRecords1x(files: readonly WrittenBaseFile[], instantTime: string, bloomType: string): MetadataRecord[] {
  const out = new Map<string, MetadataRecord>();
  for (const { partitionPath, fileName, footer } of files) {
    const bloom = footerBloomFilterBytes(footer);
    if (bloom === undefined) continue;
    const record = bloomFilterRecord(partitionPath, fileName, instantTime, { type: bloomType, serialized: bloom.bytes });
    out.set(record.key, record);
  }
  return [...out.values()];
}

/**
 * A clean's bloom_filters tombstones (convertMetadataToBloomFilterRecords of a clean): per cleaned base file (Hudi's
 * FSUtils.isBaseFile: not a log file), type "", no bytes, isDeleted, stamped with the clean's instant.
 */
export function cleanBloomFilterRecords1x(cleaned: readonly { readonly partition: string; readonly name: string }[], instantTime: string): MetadataRecord[] {
  return cleaned
    .filter(({ name }) => !name.startsWith('.') && /\.(parquet|orc|hfile)$/.test(name))
    .map(({ partition, name }) => bloomFilterRecord(partition, name, instantTime, undefined, true));
}

/** HoodieTableMetadataUtil.getPartitionStatsIndexKey: ColumnIndexID + PartitionIndexID. */
export function partitionStatsIndexKey(partitionPath: string, column: string): string {
  return columnIndexId(column) + partitionIndexId(partitionIdentifier(partitionPath));
}

/**
 * The partition_stats records of one data partition (collectAndProcessColumnMetadata): `files` are the column-stats
 * records of every file of the partition's latest file slices, this commit's files included. Per column: the
 * smallest min and largest max (nulls skipped, Java compareTo), null and value counts and sizes summed.
 */
export function partitionStatsRecords1x(partitionPath: string, files: readonly ColumnStatsMetadata[], tableVersion: MetadataTableVersion1x): MetadataRecord[] {
  metadataVersionFacts(tableVersion);
  const byColumn = new Map<string, ColumnStatsMetadata[]>();
  for (const stats of files) {
    if (stats.isDeleted || stats.columnName === null) continue;
    byColumn.set(stats.columnName, [...(byColumn.get(stats.columnName) ?? []), stats]);
  }
  const out: MetadataRecord[] = [];
  for (const [column, list] of byColumn) {
    const valueType = list[0]!.valueType;
    const pick = (values: (WrappedValue | null)[], sign: 1 | -1): WrappedValue | null =>
      values.reduce<WrappedValue | null>(
        (best, value) => (value === null ? best : best === null || compareStatsValues(value, best, valueType) * sign < 0 ? value : best),
        null,
      );
    const sum = (get: (s: ColumnStatsMetadata) => number | null) => list.reduce((total, s) => total + (get(s) ?? 0), 0);
    out.push({
      key: partitionStatsIndexKey(partitionPath, column),
      type: 6,
      columnStats: {
        fileName: partitionPath,
        columnName: column,
        minValue: pick(
          list.map((s) => s.minValue),
          1,
        ),
        maxValue: pick(
          list.map((s) => s.maxValue),
          -1,
        ),
        valueCount: sum((s) => s.valueCount),
        nullCount: sum((s) => s.nullCount),
        totalSize: sum((s) => s.totalSize),
        totalUncompressedSize: sum((s) => s.totalUncompressedSize),
        isDeleted: false,
        isTightBound: true,
        ...(valueType === undefined ? {} : { valueType }),
      },
    });
  }
  return out;
}

/**
 * One data partition's partition_stats records for a commit (convertMetadataToPartitionStatRecords): the column
 * stats of the files the commit wrote there, plus the metadata table's column-stats records of that partition
 * (`existing`, read by the key prefix ColumnIndexID + PartitionIndexID) whose file is in the partition's latest file
 * slices, inflight ones included (`latestFileNames`: base and log file names). A file the commit wrote is taken
 * from `written` only.
 */
export function partitionStatsForCommit1x(
  partitionPath: string,
  written: readonly ColumnStatsMetadata[],
  existing: readonly ColumnStatsMetadata[],
  latestFileNames: ReadonlySet<string>,
  tableVersion: MetadataTableVersion1x,
): MetadataRecord[] {
  const writtenNames = new Set(written.map((stats) => stats.fileName));
  const others = existing.filter((stats) => stats.fileName !== null && latestFileNames.has(stats.fileName) && !writtenNames.has(stats.fileName));
  return partitionStatsRecords1x(partitionPath, [...written, ...others], tableVersion);
}

/**
 * The HFILE_DATA_BLOCK Hudi 1.x appends to a metadata-table file group for one delta commit: header INSTANT_TIME
 * and SCHEMA (the version's writer schema), records sorted by key with the key field emptied (the cell key holds
 * it), in an HFile as writeHudiLogBlockHFile writes it. Keys must be unique: both releases' HFileUtils
 * .serializeRecordsToLogBlock refuse a repeated key, so the caller merges a key's records first.
 */
export function metadataLogBlock1x(
  records: readonly MetadataRecord[],
  instantTime: string,
  tableVersion: MetadataTableVersion1x,
): LogBlockInput & { readonly content: Uint8Array } {
  const facts = metadataVersionFacts(tableVersion);
  const seen = new Set<string>();
  for (const record of records) {
    if (seen.has(record.key)) {
      throw new HudiError(`metadata-table record key ${record.key} appears twice in one log block`, {
        fix: 'merge the records of each key (mergeRecords) before building the block, as Hudi does',
      });
    }
    seen.add(record.key);
  }
  const type = metadataRecordType1x(tableVersion);
  return {
    type: 'HFILE_DATA_BLOCK',
    header: { INSTANT_TIME: instantTime, SCHEMA: facts.writerSchemaText },
    content: writeHudiLogBlockHFile(
      records.map((record) => ({ key: record.key, value: encodeMetadataRecord(record, type) })),
      { schema: facts.writerSchemaText },
    ),
  };
}

/**
 * A file group's log blocks for one deltacommit, as HoodieAppendHandle appends them: the records' HFile data block,
 * then, for deleted keys (record_index's createRecordIndexDelete: an EmptyHoodieRecordPayload keyed in the metadata
 * partition), a delete block; both carry the instant and the writer schema.
 */
export function metadataLogBlocks1x(
  records: readonly MetadataRecord[],
  deletedKeys: readonly string[],
  partition: string,
  instantTime: string,
  tableVersion: MetadataTableVersion1x,
): LogBlockInput[] {
  const blocks: LogBlockInput[] = [];
  if (records.length > 0 || deletedKeys.length === 0) blocks.push(metadataLogBlock1x(records, instantTime, tableVersion));
  if (deletedKeys.length > 0) {
    blocks.push(
      deleteBlock({
        instantTime,
        header: { SCHEMA: metadataVersionFacts(tableVersion).writerSchemaText },
        records: deletedKeys.map((recordKey) => ({ recordKey, partitionPath: partition, orderingValue: EMPTY_PAYLOAD_ORDERING_VALUE })),
      }),
    );
  }
  return blocks;
}
