/**
 * HoodieMetadataRecord values ↔ MetadataRecord, in avsc's wrapped-union form. Written as Hudi writes them into
 * HFile blocks and base files: meta fields null, `key` empty (the HFile cell key holds it; readers put it back).
 */
import type avro from 'avsc';
import { HudiError, UnsupportedTableError } from '../errors.js';
import { decodeDatum, encodeDatum } from '../log-format/avro.js';
import { WRAPPER_NAMESPACE as NS, unwrapValue, wrapValue } from '../log-format/value-wrappers.js';

export { bigintToTwosComplement, twosComplementToBigint } from '../log-format/value-wrappers.js';

import type { ColumnStatsMetadata, FileInfo, MetadataRecord, RecordIndexInfo, ValueTypeInfo, WrappedValue } from './records.js';
import { metadataRecordType } from './schema.js';

type Wrapped = Record<string, unknown> | null;

const optional = (branch: string, value: unknown): Wrapped => (value === null || value === undefined ? null : { [branch]: value });

function unwrap(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.length === 1 ? entries[0]![1] : null;
}

function wrapNullable(value: WrappedValue | null): Wrapped {
  return value === null ? null : wrapValue(value);
}

function unwrapNullable(wrapped: unknown): WrappedValue | null {
  // 1.x added LocalDateWrapper and (1.1) ArrayWrapper; Spark's writers do not use them for Parquet columns.
  return unwrapValue(
    wrapped,
    (branch) => new UnsupportedTableError(`column-stats value branch ${branch} is not one this build reads`, { fix: 'read the table with Hudi' }),
  );
}

const toLong = (value: number | null): Wrapped => optional('long', value === null ? null : BigInt(value));
const fromLong = (value: unknown): number | null => (value === null ? null : Number(unwrap(value) as bigint));

/**
 * The Avro value (wrapped unions) of a record, with the key field emptied as Hudi writes HFile values; `fileName`
 * fills `_hoodie_file_name`, which Hudi sets in base files (the file's own name) and leaves null in log blocks.
 */
export function toAvroValue(record: MetadataRecord, keyInValue = '', fileName?: string): Record<string, unknown> {
  const value: Record<string, unknown> = {
    _hoodie_commit_time: null,
    _hoodie_commit_seqno: null,
    _hoodie_record_key: null,
    _hoodie_partition_path: null,
    _hoodie_file_name: optional('string', fileName),
    key: keyInValue,
    type: record.type,
    filesystemMetadata: null,
    BloomFilterMetadata: null,
    ColumnStatsMetadata: null,
    recordIndexMetadata: null,
  };
  switch (record.type) {
    case 1:
    case 2: {
      const map: Record<string, { size: bigint; isDeleted: boolean }> = {};
      for (const [name, info] of record.files) map[name] = { size: BigInt(info.size), isDeleted: info.isDeleted };
      value['filesystemMetadata'] = { map };
      break;
    }
    case 3:
    case 6: {
      const stats = record.columnStats;
      value['ColumnStatsMetadata'] = {
        [`${NS}.HoodieMetadataColumnStats`]: {
          fileName: optional('string', stats.fileName),
          columnName: optional('string', stats.columnName),
          minValue: wrapNullable(stats.minValue),
          maxValue: wrapNullable(stats.maxValue),
          valueCount: toLong(stats.valueCount),
          nullCount: toLong(stats.nullCount),
          totalSize: toLong(stats.totalSize),
          totalUncompressedSize: toLong(stats.totalUncompressedSize),
          isDeleted: stats.isDeleted,
          // 1.x fields: absent from 0.x records (a 0.x schema has no such fields, and avsc ignores extra keys).
          ...(stats.isTightBound === undefined ? {} : { isTightBound: stats.isTightBound }),
          ...(stats.valueType === undefined ? {} : { valueType: wrapValueType(stats.valueType) }),
        },
      };
      break;
    }
    case 4:
      value['BloomFilterMetadata'] = {
        [`${NS}.HoodieMetadataBloomFilter`]: {
          type: record.bloomFilter.type,
          timestamp: record.bloomFilter.timestamp,
          bloomFilter: Buffer.from(record.bloomFilter.bloomFilter),
          isDeleted: record.bloomFilter.isDeleted,
        },
      };
      break;
    case 5: {
      const info = record.recordIndex;
      value['recordIndexMetadata'] = {
        [`${NS}.HoodieRecordIndexInfo`]: {
          partitionName: optional('string', info.partitionName),
          fileIdHighBits: optional('long', info.fileIdHighBits),
          fileIdLowBits: optional('long', info.fileIdLowBits),
          fileIndex: optional('int', info.fileIndex),
          fileId: optional('string', info.fileId),
          instantTime: optional('long', info.instantTime),
          fileIdEncoding: info.fileIdEncoding,
        },
      };
      break;
    }
  }
  return value;
}

/** A decoded Avro value as a record; `key` is the HFile cell key (the value's own key field is empty there). */
export function fromAvroValue(value: Record<string, unknown>, key: string): MetadataRecord {
  const type = value['type'];
  switch (type) {
    case 1:
    case 2: {
      const map = (unwrap(value['filesystemMetadata']) ?? {}) as Record<string, { size: bigint; isDeleted: boolean }>;
      const files = new Map<string, FileInfo>();
      for (const [name, info] of Object.entries(map)) files.set(name, { size: Number(info.size), isDeleted: info.isDeleted });
      return { key, type, files };
    }
    case 3:
    case 6: {
      const stats = unwrap(value['ColumnStatsMetadata']) as Record<string, unknown> | null;
      if (stats === null) throw missing(key, 'ColumnStatsMetadata');
      const columnStats: ColumnStatsMetadata = {
        fileName: unwrap(stats['fileName']) as string | null,
        columnName: unwrap(stats['columnName']) as string | null,
        minValue: unwrapNullable(stats['minValue']),
        maxValue: unwrapNullable(stats['maxValue']),
        valueCount: fromLong(stats['valueCount']),
        nullCount: fromLong(stats['nullCount']),
        totalSize: fromLong(stats['totalSize']),
        totalUncompressedSize: fromLong(stats['totalUncompressedSize']),
        isDeleted: stats['isDeleted'] as boolean,
        ...('isTightBound' in stats ? { isTightBound: stats['isTightBound'] as boolean } : {}),
        ...('valueType' in stats ? { valueType: unwrapValueType(stats['valueType']) } : {}),
      };
      return { key, type, columnStats };
    }
    case 4: {
      const bloom = unwrap(value['BloomFilterMetadata']) as Record<string, unknown> | null;
      if (bloom === null) throw missing(key, 'BloomFilterMetadata');
      return {
        key,
        type,
        bloomFilter: {
          type: bloom['type'] as string,
          timestamp: bloom['timestamp'] as string,
          bloomFilter: new Uint8Array(bloom['bloomFilter'] as Uint8Array),
          isDeleted: bloom['isDeleted'] as boolean,
        },
      };
    }
    case 5: {
      const info = unwrap(value['recordIndexMetadata']) as Record<string, unknown> | null;
      if (info === null) throw missing(key, 'recordIndexMetadata');
      const recordIndex: RecordIndexInfo = {
        partitionName: unwrap(info['partitionName']) as string | null,
        fileIdHighBits: unwrap(info['fileIdHighBits']) as bigint | null,
        fileIdLowBits: unwrap(info['fileIdLowBits']) as bigint | null,
        fileIndex: unwrap(info['fileIndex']) as number | null,
        fileId: unwrap(info['fileId']) as string | null,
        instantTime: unwrap(info['instantTime']) as bigint | null,
        fileIdEncoding: info['fileIdEncoding'] as number,
      };
      return { key, type, recordIndex };
    }
    case 7:
      throw new UnsupportedTableError(`metadata-table record ${key} is a secondary-index record (type 7), which this build does not read`, {
        fix: 'drop the secondary index with Hudi (DROP INDEX), or read the table with Hudi',
      });
    default:
      throw new UnsupportedTableError(`metadata-table record ${key} has unknown type ${String(type)}`, {
        fix: 'the record was not written by Hudi 0.14/0.15 or 1.0/1.1; read the table with the Hudi that wrote it',
      });
  }
}

/** HoodieValueTypeInfo in avsc's wrapped-union form (a nullable record; additionalInfo a nullable string). */
function wrapValueType(info: ValueTypeInfo | null): Wrapped {
  if (info === null) return null;
  return { [`${NS}.HoodieValueTypeInfo`]: { typeOrdinal: info.typeOrdinal, additionalInfo: optional('string', info.additionalInfo) } };
}

function unwrapValueType(wrapped: unknown): ValueTypeInfo | null {
  const info = unwrap(wrapped) as Record<string, unknown> | null;
  if (info === null) return null;
  return { typeOrdinal: info['typeOrdinal'] as number, additionalInfo: unwrap(info['additionalInfo']) as string | null };
}

function missing(key: string, field: string): HudiError {
  return new HudiError(`metadata-table record ${key} has no ${field}`, { fix: 'the metadata table is corrupt; rebuild it' });
}

/** Encode a record as Hudi's HFile value (Avro binary, key field empty; `fileName`: a base file's name). */
export function encodeMetadataRecord(record: MetadataRecord, type: avro.Type = metadataRecordType(), fileName?: string): Uint8Array {
  return encodeDatum(type, toAvroValue(record, '', fileName), `metadata record ${record.key}`);
}

/** Decode an Avro binary value written with `type` (a block's or file's schema). */
export function decodeMetadataRecord(bytes: Uint8Array, key: string, type: avro.Type = metadataRecordType()): MetadataRecord {
  const value = decodeDatum(type, bytes, undefined, `metadata record ${key}`) as Record<string, unknown>;
  const own = value['key'];
  return fromAvroValue(value, typeof own === 'string' && own !== '' ? own : key);
}
