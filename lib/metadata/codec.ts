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

function bufferView(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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
          // A view, not a copy: avsc copies the bytes into the encoding anyway.
          bloomFilter: bufferView(record.bloomFilter.bloomFilter),
          isDeleted: record.bloomFilter.isDeleted,
        },
      };
      break;
    case 5:
      value['recordIndexMetadata'] = recordIndexValue(record.recordIndex);
      break;
  }
  return value;
}

/** The recordIndexMetadata field of a record-index record, in avsc's wrapped-union form. */
function recordIndexValue(info: RecordIndexInfo): Wrapped {
  return {
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

/** Bloom filters from this size on are written as parts (encodeMetadataRecordParts). */
const PARTS_FROM_BYTES = 4096;

/**
 * encodeMetadataRecord as parts to write one after the other: the same bytes, made with less copying. Avro writes a
 * record field after field. A record-index record is the fields before its location, the same for all, then its
 * location's encoding, shared by the records of a location (recordIndexLayout). A bloom filter's hundreds of KB are
 * not copied: `bytes` is its length (a zigzag varint) then the bytes, so the value is the encoding with an empty
 * filter cut where its length 0 stands, with the length and the filter put in between; where the cut is, is found by
 * also encoding a one-byte filter (the two encodings differ only there), and checked. Anything else is encoded whole.
 */
export function encodeMetadataRecordParts(record: MetadataRecord, type: avro.Type = metadataRecordType(), fileName?: string): Uint8Array | Uint8Array[] {
  if (record.type === 5 && fileName === undefined) {
    const layout = recordIndexLayout(type);
    if (layout !== null) return [layout.prefix, recordIndexField(record.recordIndex, layout.field, record.key)];
  }
  if (record.type !== 4 || record.bloomFilter.bloomFilter.length < PARTS_FROM_BYTES) return encodeMetadataRecord(record, type, fileName);
  const withFilter = (bloomFilter: Uint8Array): MetadataRecord => ({ ...record, bloomFilter: { ...record.bloomFilter, bloomFilter } });
  const empty = encodeMetadataRecord(withFilter(new Uint8Array(0)), type, fileName);
  const one = encodeMetadataRecord(withFilter(Uint8Array.of(0)), type, fileName);
  let at = 0;
  while (at < empty.length && empty[at] === one[at]) at++;
  const tail = empty.subarray(at + 1);
  const cut = one.length === empty.length + 1 && empty[at] === 0 && one[at] === 2 && one[at + 1] === 0 && Buffer.from(tail).equals(one.subarray(at + 2));
  if (!cut) return encodeMetadataRecord(record, type, fileName);
  const bytes = record.bloomFilter.bloomFilter;
  return [empty.subarray(0, at), avroLong(bytes.length), bytes, tail];
}

/**
 * How a writer type lays out a record-index record's value: the fields before recordIndexMetadata, the same for every
 * such record in a log block (meta fields null, key empty, type 5, the other payloads null), then that field, the
 * last. Found by encoding two unlike records whole and their field alone; null when the type is laid out otherwise.
 */
const recordIndexLayouts = new WeakMap<avro.Type, { readonly prefix: Uint8Array; readonly field: avro.Type } | null>();

function recordIndexLayout(type: avro.Type): { readonly prefix: Uint8Array; readonly field: avro.Type } | null {
  const known = recordIndexLayouts.get(type);
  if (known !== undefined) return known;
  let layout: { prefix: Uint8Array; field: avro.Type } | null = null;
  const last = (type as avro.types.RecordType).fields?.at(-1);
  if (last?.name === 'recordIndexMetadata') {
    const samples: RecordIndexInfo[] = [
      {
        partitionName: '2024/01/01',
        fileIdHighBits: -5n,
        fileIdLowBits: 1n << 62n,
        fileIndex: 3,
        fileId: '',
        instantTime: 1_700_000_000_000n,
        fileIdEncoding: 0,
      },
      { partitionName: null, fileIdHighBits: null, fileIdLowBits: null, fileIndex: null, fileId: 'raw-id', instantTime: null, fileIdEncoding: 1 },
    ];
    const prefixes = samples.map((info) => {
      const whole = encodeMetadataRecord({ key: 'k', type: 5, recordIndex: info }, type);
      const field = encodeDatum(last.type, recordIndexValue(info), 'recordIndexMetadata');
      const at = whole.length - field.length;
      return at > 0 && Buffer.from(whole.subarray(at)).equals(field) ? whole.slice(0, at) : undefined;
    });
    const [first, second] = prefixes;
    if (first !== undefined && second !== undefined && Buffer.from(first).equals(second)) layout = { prefix: first, field: last.type };
  }
  recordIndexLayouts.set(type, layout);
  return layout;
}

/** The encoded recordIndexMetadata field of each location: a commit's records share a few (convert.ts). */
const recordIndexFields = new WeakMap<RecordIndexInfo, { readonly type: avro.Type; readonly bytes: Uint8Array }>();

function recordIndexField(info: RecordIndexInfo, field: avro.Type, key: string): Uint8Array {
  const known = recordIndexFields.get(info);
  if (known !== undefined && known.type === field) return known.bytes;
  const bytes = encodeDatum(field, recordIndexValue(info), `metadata record ${key}`);
  recordIndexFields.set(info, { type: field, bytes });
  return bytes;
}

/** Avro's long: zigzag, then base-128 varint, low groups first. */
function avroLong(value: number): Uint8Array {
  const out: number[] = [];
  let rest = value >= 0 ? value * 2 : -value * 2 - 1;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return Uint8Array.from(out);
}

/** Decode an Avro binary value written with `type` (a block's or file's schema). */
export function decodeMetadataRecord(bytes: Uint8Array, key: string, type: avro.Type = metadataRecordType()): MetadataRecord {
  const value = decodeDatum(type, bytes, undefined, `metadata record ${key}`) as Record<string, unknown>;
  const own = value['key'];
  return fromAvroValue(value, typeof own === 'string' && own !== '' ? own : key);
}
