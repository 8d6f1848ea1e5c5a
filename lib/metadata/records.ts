/**
 * Metadata-table records (HoodieMetadataPayload): per partition what is stored per key, how it is built from a
 * data-table change, encoded as HoodieMetadataRecord and merged (preCombine: newer wins, file listings and column stats
 * combine). Type 1 `files` `__all_partitions__` (partition identifiers); 2 `files` per partition identifier (`.` when
 * non-partitioned: file name → size, isDeleted); 3 `column_stats` ColumnIndexID+PartitionIndexID+FileIndexID
 * (HoodieMetadataColumnStats); 4 `bloom_filters` PartitionIndexID+FileIndexID (HoodieMetadataBloomFilter);
 * 5 `record_index` the data record key (HoodieRecordIndexInfo: partition, file id, …).
 */
import { HudiError } from '../errors.js';
import { twosComplementToBigint, type WrappedValue } from '../log-format/value-wrappers.js';
import { parseInstantTime } from '../timeline/instant.js';
import { bloomFilterIndexKey, columnStatsIndexKey } from './hash-ids.js';
import { PARTITION_LIST_KEY, partitionIdentifier } from './partitions.js';

export const RECORD_TYPE = { PARTITION_LIST: 1, FILE_LIST: 2, COLUMN_STATS: 3, BLOOM_FILTER: 4, RECORD_INDEX: 5, PARTITION_STATS: 6 } as const;

/**
 * HoodieValueTypeInfo (1.1.x, column-stats index version 2): the ValueType ordinal the min/max are stored as, and for
 * decimals "precision,scale". Absent in 0.x and 1.0.x records.
 */
/** org.apache.hudi.stats.ValueType ordinals (1.1.x) of the types our column stats carry. */
export const VALUE_TYPE_ORDINAL = {
  /** A tombstone's (ValueMetadata.NULL_METADATA). */
  NULL: 1,
  BOOLEAN: 2,
  INT: 3,
  LONG: 4,
  FLOAT: 5,
  DOUBLE: 6,
  STRING: 7,
  BYTES: 8,
  FIXED: 9,
  DECIMAL: 10,
  DATE: 12,
  TIMESTAMP_MILLIS: 15,
  TIMESTAMP_MICROS: 16,
  LOCAL_TIMESTAMP_MILLIS: 18,
  LOCAL_TIMESTAMP_MICROS: 19,
} as const;

export interface ValueTypeInfo {
  readonly typeOrdinal: number;
  readonly additionalInfo: string | null;
}

export interface FileInfo {
  readonly size: number;
  readonly isDeleted: boolean;
}

/**
 * A column-stats min or max as Hudi wraps it (HoodieAvroUtils.wrapValueIntoAvro): the wrapper record's type and
 * value. Dates are epoch days; decimals are unscaled at Hudi's decimal(30, 15); bytes are raw.
 */
export type { WrappedValue } from '../log-format/value-wrappers.js';

/** The fields of a column range the metadata checks compare with a file's footer (check.ts, check-1x.ts). */
export const COLUMN_RANGE_FIELDS = ['minValue', 'maxValue', 'nullCount', 'valueCount', 'totalSize', 'totalUncompressedSize'] as const;

export interface ColumnStatsMetadata {
  readonly fileName: string | null;
  readonly columnName: string | null;
  readonly minValue: WrappedValue | null;
  readonly maxValue: WrappedValue | null;
  readonly valueCount: number | null;
  readonly nullCount: number | null;
  readonly totalSize: number | null;
  readonly totalUncompressedSize: number | null;
  readonly isDeleted: boolean;
  /** 1.x: whether min/max are exactly the range (partition stats recomputed over the latest files); absent before. */
  readonly isTightBound?: boolean;
  /** 1.1.x only. */
  readonly valueType?: ValueTypeInfo | null;
}

export interface BloomFilterMetadata {
  /** Bloom filter type code (the data writer's hoodie.bloom.index.filter.type). */
  readonly type: string;
  /** The instant that wrote the record. */
  readonly timestamp: string;
  /** UTF-8 of the filter's serializeToString(); empty for a deletion. */
  readonly bloomFilter: Uint8Array;
  readonly isDeleted: boolean;
}

export interface RecordIndexInfo {
  readonly partitionName: string | null;
  readonly fileIdHighBits: bigint | null;
  readonly fileIdLowBits: bigint | null;
  readonly fileIndex: number | null;
  readonly fileId: string | null;
  /** Epoch milliseconds of the instant that wrote the record (its time parsed in the writer's zone). */
  readonly instantTime: bigint | null;
  /** 0: the file id is a UUID plus index (high/low bits); 1: the raw string in fileId. */
  readonly fileIdEncoding: number;
}

export type MetadataRecord =
  | { readonly key: string; readonly type: 1 | 2; readonly files: ReadonlyMap<string, FileInfo> }
  | { readonly key: string; readonly type: 3; readonly columnStats: ColumnStatsMetadata }
  /** 1.x partition_stats: one column's range over one data partition's latest files (fileName = partition path). */
  | { readonly key: string; readonly type: 6; readonly columnStats: ColumnStatsMetadata }
  | { readonly key: string; readonly type: 4; readonly bloomFilter: BloomFilterMetadata }
  | { readonly key: string; readonly type: 5; readonly recordIndex: RecordIndexInfo };

/** A key's state after merging: a record, or deleted (a delete block's tombstone). */
export type MergedRecord = MetadataRecord | { readonly key: string; readonly deleted: true };

export function isDeletedRecord(record: MergedRecord): record is { readonly key: string; readonly deleted: true } {
  return 'deleted' in record;
}

/**
 * A record that says its entry is gone (isDeleted inside it): a clean's column-stats or bloom-filter tombstone. Hudi
 * reads one as absent, and a merge that yields one deletes the key (the payload built from it is deleted).
 */
export function isTombstone(record: MetadataRecord): boolean {
  if (record.type === 3 || record.type === 6) return record.columnStats.isDeleted;
  return record.type === 4 && record.bloomFilter.isDeleted;
}

// ---------------------------------------------------------------------------------------------------------------
// Building records (HoodieMetadataPayload.create*)

/** createPartitionListRecord: every partition a commit touched (or deleted). */
export function partitionListRecord(partitionPaths: Iterable<string>, isDeleted = false): MetadataRecord {
  const files = new Map<string, FileInfo>();
  for (const partition of partitionPaths) files.set(partitionIdentifier(partition), { size: 0, isDeleted });
  return { key: PARTITION_LIST_KEY, type: 1, files };
}

/** createPartitionFilesRecord: files added (with their sizes, which must be positive) and deleted in a partition. */
export function partitionFilesRecord(partitionPath: string, added: ReadonlyMap<string, number>, deleted: Iterable<string> = []): MetadataRecord {
  const files = new Map<string, FileInfo>();
  for (const [name, size] of added) {
    if (!(size > 0))
      throw new HudiError(`file ${name} in partition "${partitionPath}" has size ${size}; the metadata table lists only files with data`, {
        fix: 'this is a bug in the commit metadata',
      });
    files.set(name, { size, isDeleted: false });
  }
  for (const name of deleted) files.set(name, { size: 0, isDeleted: true });
  return { key: partitionIdentifier(partitionPath), type: 2, files };
}

/** createBloomFilterMetadataRecord; `serialized` is the filter's text or its UTF-8 bytes (kept, not copied). */
export function bloomFilterRecord(
  partitionPath: string,
  fileName: string,
  instantTime: string,
  bloom: { type: string; serialized: string | Uint8Array } | undefined,
  isDeleted = false,
): MetadataRecord {
  const serialized = bloom?.serialized ?? new Uint8Array(0);
  return {
    key: bloomFilterIndexKey(partitionIdentifier(partitionPath), fileName),
    type: 4,
    bloomFilter: {
      type: bloom?.type ?? '',
      timestamp: instantTime,
      bloomFilter: typeof serialized === 'string' ? new TextEncoder().encode(serialized) : serialized,
      isDeleted,
    },
  };
}

/** A column range as HoodieColumnRangeMetadata carries it for one file and column. */
export interface ColumnRange {
  readonly fileName: string;
  readonly columnName: string;
  readonly minValue: WrappedValue | null;
  readonly maxValue: WrappedValue | null;
  readonly nullCount: number;
  readonly valueCount: number;
  readonly totalSize: number;
  readonly totalUncompressedSize: number;
}

/** createColumnStatsRecords, one record per range. */
export function columnStatsRecord(partitionPath: string, range: ColumnRange, isDeleted = false): MetadataRecord {
  return {
    key: columnStatsIndexKey(partitionIdentifier(partitionPath), range.fileName, range.columnName),
    type: 3,
    columnStats: {
      fileName: range.fileName,
      columnName: range.columnName,
      minValue: range.minValue,
      maxValue: range.maxValue,
      valueCount: range.valueCount,
      nullCount: range.nullCount,
      totalSize: range.totalSize,
      totalUncompressedSize: range.totalUncompressedSize,
      isDeleted,
    },
  };
}

/** HoodieColumnRangeMetadata.stub: what a deletion carries (no values, every count -1). */
export function deletedColumnRange(fileName: string, columnName: string): ColumnRange {
  return { fileName, columnName, minValue: null, maxValue: null, nullCount: -1, valueCount: -1, totalSize: -1, totalUncompressedSize: -1 };
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * createRecordIndexUpdate with fileIdEncoding 0 (Hudi's default, hoodie.write.fileid.encoding): the file id
 * `<uuid>-<index>` as the UUID's two signed 64-bit halves and the index (-1 when the id is a bare UUID); the instant
 * as epoch milliseconds, its time read on this process's clock (Hudi parses it in the JVM's default zone).
 */
export function recordIndexRecord(recordKey: string, partitionPath: string, fileId: string, instantTime: string): MetadataRecord {
  return { key: recordKey, type: 5, recordIndex: recordIndexInfo(partitionPath, fileId, instantTime) };
}

/** recordIndexRecord's location, the same for every record a commit wrote to one file group. */
export function recordIndexInfo(partitionPath: string, fileId: string, instantTime: string): RecordIndexInfo {
  const millis = parseInstantTime(instantTime, 'LOCAL')?.getTime();
  if (millis === undefined) throw new HudiError(`instant time ${instantTime} does not parse`, { fix: 'record-index entries need a valid instant time' });
  const bare = fileId.length === 36;
  const dash = fileId.lastIndexOf('-');
  const uuid = bare ? fileId : fileId.slice(0, dash);
  const fileIndex = bare ? -1 : Number(fileId.slice(dash + 1));
  if (!UUID.test(uuid) || !Number.isSafeInteger(fileIndex)) {
    throw new HudiError(`file id ${fileId} is not <uuid>-<index>; the record index stores it as a UUID`, {
      fix: 'record-index updates need file ids Hudi writes',
    });
  }
  const hex = uuid.replaceAll('-', '');
  return {
    partitionName: partitionPath,
    fileIdHighBits: BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`)),
    fileIdLowBits: BigInt.asIntN(64, BigInt(`0x${hex.slice(16)}`)),
    fileIndex,
    fileId: '',
    instantTime: BigInt(millis),
    fileIdEncoding: 0,
  };
}

/** The file id a record-index entry names (HoodieTableMetadataUtil.getLocationFromRecordIndexInfo). */
export function recordIndexFileId(info: RecordIndexInfo): string {
  if (info.fileIdEncoding !== 0) return info.fileId ?? '';
  const hex = (value: bigint | null) =>
    BigInt.asUintN(64, value ?? 0n)
      .toString(16)
      .padStart(16, '0');
  const all = hex(info.fileIdHighBits) + hex(info.fileIdLowBits);
  const uuid = `${all.slice(0, 8)}-${all.slice(8, 12)}-${all.slice(12, 16)}-${all.slice(16, 20)}-${all.slice(20)}`;
  return info.fileIndex === -1 || info.fileIndex === null ? uuid : `${uuid}-${info.fileIndex}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Merging (HoodieMetadataPayload.preCombine / combineAndGetUpdateValue)

/** The state of a key after `newer` is applied on top of `older`. */
export function mergeRecords(older: MergedRecord | undefined, newer: MergedRecord): MergedRecord {
  if (older === undefined || isDeletedRecord(newer) || isDeletedRecord(older)) return newer;
  if (older.type !== newer.type) {
    throw new HudiError(`metadata-table key ${newer.key} holds records of types ${older.type} and ${newer.type}`, {
      fix: 'the metadata table is corrupt; rebuild it (a Spark write with hoodie.metadata.enable=false, then true)',
    });
  }
  switch (newer.type) {
    case 1:
    case 2:
      return { key: newer.key, type: newer.type, files: combineFiles((older as { files: ReadonlyMap<string, FileInfo> }).files, newer.files) };
    case 3:
    case 6: {
      const columnStats = combineColumnStats((older as { columnStats: ColumnStatsMetadata }).columnStats, newer.columnStats);
      return newer.type === 3 ? { key: newer.key, type: 3, columnStats } : { key: newer.key, type: 6, columnStats };
    }
    default:
      // Bloom filters and record locations: the latest one is the truth.
      return newer;
  }
}

/**
 * combineFileSystemMetadata: the older listing, then each newer entry: a deletion removes the file (and is kept as a
 * tombstone when the older listing does not have it, for the base file merged later); an addition takes the larger
 * size.
 */
function combineFiles(older: ReadonlyMap<string, FileInfo>, newer: ReadonlyMap<string, FileInfo>): Map<string, FileInfo> {
  const combined = new Map(older);
  for (const [name, info] of newer) {
    const previous = combined.get(name);
    if (previous === undefined) combined.set(name, info);
    else if (info.isDeleted) combined.delete(name);
    else combined.set(name, { size: Math.max(info.size, previous.size), isDeleted: false });
  }
  return combined;
}

/**
 * mergeColumnStatsRecords: a deletion on either side, or (1.x) a tight-bound newer record, takes the newer record;
 * else ranges widen and counts add up, keeping the newer record's isTightBound and value type.
 */
function combineColumnStats(older: ColumnStatsMetadata, newer: ColumnStatsMetadata): ColumnStatsMetadata {
  if (newer.isDeleted || older.isDeleted || newer.isTightBound === true) return newer;
  const pick = (a: WrappedValue | null, b: WrappedValue | null, sign: 1 | -1): WrappedValue | null => {
    if (a === null) return b;
    if (b === null) return a;
    return compareStatsValues(a, b, newer.valueType) * sign <= 0 ? a : b;
  };
  const add = (a: number | null, b: number | null) => (a ?? 0) + (b ?? 0);
  return {
    fileName: newer.fileName,
    columnName: newer.columnName,
    minValue: pick(older.minValue, newer.minValue, 1),
    maxValue: pick(older.maxValue, newer.maxValue, -1),
    valueCount: add(older.valueCount, newer.valueCount),
    nullCount: add(older.nullCount, newer.nullCount),
    totalSize: add(older.totalSize, newer.totalSize),
    totalUncompressedSize: add(older.totalUncompressedSize, newer.totalUncompressedSize),
    isDeleted: newer.isDeleted,
    ...(newer.isTightBound === undefined ? {} : { isTightBound: newer.isTightBound }),
    ...(newer.valueType === undefined ? {} : { valueType: newer.valueType }),
  };
}

/**
 * Two min/max values of one column compared as Hudi does: at column-stats index version 2 (1.1.x) as their ValueType
 * says (a decimal, stored as unscaled bytes, by its value), else as the unwrapped Java values (compareWrapped).
 */
export function compareStatsValues(a: WrappedValue, b: WrappedValue, valueType: ValueTypeInfo | null | undefined): number {
  if (valueType?.typeOrdinal === VALUE_TYPE_ORDINAL.DECIMAL && a.type === 'bytes' && b.type === 'bytes') {
    const [x, y] = [twosComplementToBigint(a.value), twosComplementToBigint(b.value)];
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return compareWrapped(a, b);
}

/** Java's compareTo of the unwrapped values (same wrapper type; other pairs compare equal). */
export function compareWrapped(a: WrappedValue, b: WrappedValue): number {
  if (a.type === 'decimal' && b.type === 'decimal') return a.unscaled < b.unscaled ? -1 : a.unscaled > b.unscaled ? 1 : 0;
  if (a.type === 'bytes' && b.type === 'bytes') return compareSignedBytes(a.value, b.value);
  if (a.type === 'decimal' || b.type === 'decimal' || a.type === 'bytes' || b.type === 'bytes') return 0;
  const x = a.value;
  const y = b.value;
  if (typeof x === 'number' && typeof y === 'number') return javaNumberCompare(x, y);
  if (typeof x === 'boolean' && typeof y === 'boolean') return x === y ? 0 : x ? 1 : -1;
  if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : x > y ? 1 : 0;
  if (typeof x === 'string' && typeof y === 'string') return x < y ? -1 : x > y ? 1 : 0;
  return 0;
}

/** Double.compare / Float.compare: NaN above everything, -0.0 below 0.0. */
function javaNumberCompare(x: number, y: number): number {
  if (x < y) return -1;
  if (x > y) return 1;
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : 1) : -1;
  if (x === 0 && y === 0) return Object.is(x, -0) === Object.is(y, -0) ? 0 : Object.is(x, -0) ? -1 : 1;
  return 0;
}

/** ByteBuffer.compareTo: signed bytes, then length. */
export function compareSignedBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = (a[i]! << 24) >> 24;
    const y = (b[i]! << 24) >> 24;
    if (x !== y) return x - y;
  }
  return a.length - b.length;
}
