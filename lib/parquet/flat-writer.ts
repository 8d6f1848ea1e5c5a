/**
 * A small Parquet file of flat columns (top-level primitives, required or optional) written in memory, without
 * DuckDB: one row group, one v1 data page per column, PLAIN values, RLE definition levels — what any Parquet reader
 * reads. Hudi 1.x's timeline history files are such files (parquet-mr writes them with dictionaries for repetitive
 * columns; the readers do not care which encoding a page uses). The inverse of flat-rows.ts.
 * Spec: apache/parquet-format, README.md (file layout, data pages) and Encodings.md.
 */

import { gzipSync } from 'node:zlib';
import { HudiError } from '../errors.js';
import { encodeFooter } from './footer.js';
import { CODEC, unsignedVarint, type WrittenChunk, writtenChunkMetadata } from './pages.js';
import { snappyCompress } from './snappy.js';
import { CompactWriter, THRIFT_BINARY, THRIFT_I32, THRIFT_I64, THRIFT_LIST, THRIFT_STRUCT, ThriftList, ThriftStruct } from './thrift.js';

const MAGIC = Buffer.from('PAR1', 'latin1');
const PAGE_DATA = 0;
const ENCODING_PLAIN = 0;
const ENCODING_RLE = 3;
/** parquet.thrift Type. */
const PHYSICAL = { INT32: 1, INT64: 2, BYTE_ARRAY: 6 } as const;
/** FieldRepetitionType. */
const REPETITION = { REQUIRED: 0, OPTIONAL: 1 } as const;
/** ConvertedType UTF8. */
const CONVERTED_UTF8 = 0;

export type FlatWriteValue = string | Uint8Array | number | null;

export interface FlatWriteColumn {
  readonly name: string;
  readonly physicalType: keyof typeof PHYSICAL;
  readonly optional: boolean;
  /** Annotate a BYTE_ARRAY column as a UTF-8 string (STRING logical type, UTF8 converted type). */
  readonly string?: boolean;
  /** One value a row; null only in an optional column. */
  readonly values: readonly FlatWriteValue[];
}

export interface FlatWriteOptions {
  /** Name of the schema's root (parquet-avro: the Avro record's name). */
  readonly rootName: string;
  /** GZIP, SNAPPY or UNCOMPRESSED. */
  readonly codec: number;
  /** Footer key/value metadata. */
  readonly keyValues?: ReadonlyMap<string, string>;
  readonly createdBy: string;
}

const COMPRESSORS: ReadonlyMap<number, (raw: Buffer) => Buffer> = new Map([
  [CODEC.UNCOMPRESSED, (raw: Buffer) => raw],
  [CODEC.GZIP, (raw: Buffer) => gzipSync(raw)],
  [CODEC.SNAPPY, (raw: Buffer) => snappyCompress(raw)],
]);

/** The bytes of a Parquet file holding `columns` (all of the same row count). */
export function writeFlatRows(columns: readonly FlatWriteColumn[], options: FlatWriteOptions): Uint8Array {
  const compress = COMPRESSORS.get(options.codec);
  if (compress === undefined) throw new HudiError(`Parquet codec ${options.codec} is not written here`, { fix: 'use GZIP, SNAPPY or UNCOMPRESSED' });
  const rows = columns[0]?.values.length ?? 0;
  const parts: Buffer[] = [MAGIC];
  let position = MAGIC.length;
  const chunks: ThriftStruct[] = [];
  let totalBytes = 0;
  for (const column of columns) {
    if (column.values.length !== rows) throw new HudiError(`column ${column.name} has ${column.values.length} values for ${rows} rows`);
    const chunk = columnChunk(column, options.codec, compress);
    const chunkStruct = new ThriftStruct();
    chunkStruct.set(2, THRIFT_I64, BigInt(position));
    chunkStruct.set(3, THRIFT_STRUCT, writtenChunkMetadata(chunk, PHYSICAL[column.physicalType], [column.name], position));
    chunks.push(chunkStruct);
    parts.push(chunk.bytes);
    position += chunk.bytes.length;
    totalBytes += chunk.uncompressedSize;
  }

  const rowGroup = new ThriftStruct();
  rowGroup.set(1, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, chunks));
  rowGroup.set(2, THRIFT_I64, BigInt(totalBytes));
  rowGroup.set(3, THRIFT_I64, BigInt(rows));

  const metadata = new ThriftStruct();
  metadata.set(1, THRIFT_I32, 1);
  metadata.set(2, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, schemaElements(columns, options.rootName)));
  metadata.set(3, THRIFT_I64, BigInt(rows));
  metadata.set(4, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, rows === 0 ? [] : [rowGroup]));
  if (options.keyValues !== undefined && options.keyValues.size > 0) {
    const entries = [...options.keyValues].map(([key, value]) => {
      const entry = new ThriftStruct();
      entry.set(1, THRIFT_BINARY, Buffer.from(key, 'utf8'));
      entry.set(2, THRIFT_BINARY, Buffer.from(value, 'utf8'));
      return entry;
    });
    metadata.set(5, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, entries));
  }
  metadata.set(6, THRIFT_BINARY, Buffer.from(options.createdBy, 'utf8'));
  parts.push(encodeFooter(metadata));
  return Buffer.concat(parts);
}

function schemaElements(columns: readonly FlatWriteColumn[], rootName: string): ThriftStruct[] {
  const root = new ThriftStruct();
  root.set(4, THRIFT_BINARY, Buffer.from(rootName, 'utf8'));
  root.set(5, THRIFT_I32, columns.length);
  return [
    root,
    ...columns.map((column) => {
      const element = new ThriftStruct();
      element.set(1, THRIFT_I32, PHYSICAL[column.physicalType]);
      element.set(3, THRIFT_I32, column.optional ? REPETITION.OPTIONAL : REPETITION.REQUIRED);
      element.set(4, THRIFT_BINARY, Buffer.from(column.name, 'utf8'));
      if (column.string === true) {
        element.set(6, THRIFT_I32, CONVERTED_UTF8);
        const logical = new ThriftStruct();
        logical.set(1, THRIFT_STRUCT, new ThriftStruct());
        element.set(10, THRIFT_STRUCT, logical);
      }
      return element;
    }),
  ];
}

function columnChunk(column: FlatWriteColumn, codec: number, compress: (raw: Buffer) => Buffer): WrittenChunk {
  const present = column.values.filter((value) => value !== null);
  if (!column.optional && present.length !== column.values.length) throw new HudiError(`required column ${column.name} has a null`);
  // The page: definition levels (optional columns), then the values, written into one buffer.
  const levels = column.optional ? definitionLevels(column.values.map((value) => (value === null ? 0 : 1))) : undefined;
  const levelsSize = levels === undefined ? 0 : 4 + levels.length;
  const raw = plainValues(present, column, levelsSize);
  if (levels !== undefined) {
    raw.writeUInt32LE(levels.length, 0);
    raw.set(levels, 4);
  }
  const body = compress(raw);

  const dataHeader = new ThriftStruct();
  dataHeader.set(1, THRIFT_I32, column.values.length);
  dataHeader.set(2, THRIFT_I32, ENCODING_PLAIN);
  dataHeader.set(3, THRIFT_I32, ENCODING_RLE);
  dataHeader.set(4, THRIFT_I32, ENCODING_RLE);
  const header = new ThriftStruct();
  header.set(1, THRIFT_I32, PAGE_DATA);
  header.set(2, THRIFT_I32, raw.length);
  header.set(3, THRIFT_I32, body.length);
  header.set(5, THRIFT_STRUCT, dataHeader);
  const headerBytes = encodeStruct(header);

  const statistics = new ThriftStruct();
  statistics.set(3, THRIFT_I64, BigInt(column.values.length - present.length));
  return {
    bytes: Buffer.concat([headerBytes, body]),
    codec,
    uncompressedSize: headerBytes.length + raw.length,
    dataPageOffset: 0,
    dictionaryPageOffset: undefined,
    encodings: [ENCODING_PLAIN, ENCODING_RLE],
    encodingStats: [[PAGE_DATA, ENCODING_PLAIN, 1]],
    statistics,
    numValues: column.values.length,
  };
}

function encodeStruct(struct: ThriftStruct): Buffer {
  return new CompactWriter().struct(struct).bytes();
}

/** Definition levels (bit width 1) as bit-packed groups of 8 in the RLE / bit-packing hybrid. */
function definitionLevels(levels: readonly number[]): Buffer {
  const groups = Math.ceil(levels.length / 8);
  if (groups === 0) return Buffer.alloc(0);
  const header = unsignedVarint(groups * 2 + 1);
  const packed = Buffer.alloc(groups);
  for (const [index, level] of levels.entries()) {
    if (level === 1) packed.writeUInt8(packed.readUInt8(index >>> 3) | (1 << (index & 7)), index >>> 3);
  }
  return Buffer.concat([Buffer.from(header), packed]);
}

/**
 * The PLAIN encoding of a column's non-null values after `before` bytes left for the definition levels, in one
 * buffer (a history file of 100,000 instants would otherwise make three small buffers per value, and copy them).
 */
function plainValues(values: readonly FlatWriteValue[], column: FlatWriteColumn, before: number): Buffer {
  if (column.physicalType === 'BYTE_ARRAY') {
    let total = before;
    for (const value of values) {
      if (typeof value === 'string') total += 4 + Buffer.byteLength(value, 'utf8');
      else if (value instanceof Uint8Array) total += 4 + value.length;
      else throw new HudiError(`column ${column.name} holds a ${typeof value} where it takes bytes`);
    }
    const out = Buffer.alloc(total);
    let offset = before;
    for (const value of values) {
      if (typeof value === 'string') {
        const length = out.write(value, offset + 4, 'utf8');
        out.writeUInt32LE(length, offset);
        offset += 4 + length;
      } else {
        const bytes = value as Uint8Array;
        out.writeUInt32LE(bytes.length, offset);
        out.set(bytes, offset + 4);
        offset += 4 + bytes.length;
      }
    }
    return out;
  }
  const width = column.physicalType === 'INT32' ? 4 : 8;
  for (const value of values) {
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new HudiError(`column ${column.name} holds ${String(value)} where it takes an integer`);
  }
  const out = Buffer.alloc(before + values.length * width);
  values.forEach((value, index) => {
    if (width === 4) out.writeInt32LE(value as number, before + index * 4);
    else out.writeBigInt64LE(BigInt(value as number), before + index * 8);
  });
  return out;
}
