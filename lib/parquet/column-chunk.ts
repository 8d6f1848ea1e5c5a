/**
 * The values of one flat column chunk (a top-level primitive column, required or optional), decoded from its pages
 * without DuckDB: the curves' sort-column scan reads two columns of every input, and opening 10,000 small files a
 * second time in DuckDB cost more than decoding their pages here. What is decoded: data pages v1 and v2, PLAIN and
 * dictionary encodings (PLAIN_DICTIONARY, RLE_DICTIONARY), definition levels up to 1, every codec this runtime
 * decompresses. Anything else throws UnsupportedChunkError, so the caller reads the file another way.
 * Spec: apache/parquet-format, README.md (data pages) and Encodings.md.
 */
import { decompressorFor } from './pages.js';
import type { ParquetPhysicalType } from './schema.js';
import { CompactReader } from './thrift.js';

/** Where a column chunk's pages are (ColumnMetaData of one row group), as readFooterSummary reports it. */
export interface ChunkLocation {
  /** parquet.thrift CompressionCodec. */
  readonly codec: number;
  /** The first page's place in the file (the dictionary page's when there is one). */
  readonly offset: number;
  readonly length: number;
  /** Values in the chunk, nulls included (a flat column: its rows). */
  readonly numValues: number;
}

/**
 * A chunk's value per row: null for a null; int32/float/double numbers; int64 numbers while they are safe integers,
 * else bigints; booleans; byte arrays.
 */
export type ChunkValue = number | bigint | boolean | Uint8Array | null;

/** A chunk this decoder does not read (an encoding, codec or layout it leaves to DuckDB); the message says which. */
export class UnsupportedChunkError extends Error {
  override readonly name = 'UnsupportedChunkError';
}

const PAGE_DATA = 0;
const PAGE_DICTIONARY = 2;
const PAGE_DATA_V2 = 3;
const ENCODING_PLAIN = 0;
const ENCODING_PLAIN_DICTIONARY = 2;
const ENCODING_RLE = 3;
const ENCODING_RLE_DICTIONARY = 8;

/** A value that is not null, as a page stores it. */
export type PresentChunkValue = Exclude<ChunkValue, null>;

export interface FlatColumn<T = PresentChunkValue> {
  readonly physicalType: ParquetPhysicalType;
  /** OPTIONAL columns have definition levels (max 1); REQUIRED ones none. */
  readonly optional: boolean;
  /**
   * What a stored value becomes in `into`. Applied once per dictionary entry, not once per row, so a conversion
   * (say, bytes to a string) costs as many calls as the column has distinct values per chunk. It may throw
   * UnsupportedChunkError for a value it does not read. Values as stored when absent.
   */
  readonly convert?: (value: PresentChunkValue) => T;
}

/**
 * The chunk's values, appended to `into` (one per row, `location.numValues` of them, null for a null). `bytes` are
 * the chunk's bytes from `location.offset` on.
 */
export function decodeFlatChunk<T = PresentChunkValue>(bytes: Uint8Array, location: ChunkLocation, column: FlatColumn<T>, into: (T | null)[]): void {
  const converted = (stored: PresentChunkValue[]): T[] => (column.convert === undefined ? (stored as T[]) : stored.map(column.convert));
  const decompress = decompressorFor(location.codec);
  if (decompress === undefined) throw new UnsupportedChunkError(`codec ${location.codec} has no decompressor here`);
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let dictionary: T[] | undefined;
  let decoded = 0;
  let position = 0;
  while (decoded < location.numValues) {
    if (position >= buffer.length) throw new UnsupportedChunkError(`the chunk ends after ${decoded} of ${location.numValues} values`);
    const reader = new CompactReader(buffer, position);
    const header = reader.readStruct();
    const type = header.int(1);
    const rawSize = header.int(2) ?? 0;
    const compressedSize = header.int(3) ?? 0;
    const bodyStart = reader.position;
    position = bodyStart + compressedSize;
    if (position > buffer.length) throw new UnsupportedChunkError('a page runs past the chunk');
    const body = buffer.subarray(bodyStart, position);
    if (type === PAGE_DICTIONARY) {
      const dictionaryHeader = header.struct(7);
      const count = dictionaryHeader?.int(1) ?? 0;
      const encoding = dictionaryHeader?.int(2) ?? ENCODING_PLAIN;
      if (encoding !== ENCODING_PLAIN && encoding !== ENCODING_PLAIN_DICTIONARY) throw new UnsupportedChunkError(`dictionary encoding ${encoding}`);
      const stored: PresentChunkValue[] = [];
      plainValues(decompress(body, rawSize), 0, count, column.physicalType, stored);
      dictionary = converted(stored);
      continue;
    }
    let count: number;
    let encoding: number;
    let levels: Uint32Array | undefined;
    let values: Buffer;
    let valuesStart = 0;
    if (type === PAGE_DATA) {
      const dataHeader = header.struct(5);
      count = dataHeader?.int(1) ?? 0;
      encoding = dataHeader?.int(2) ?? ENCODING_PLAIN;
      values = decompress(body, rawSize);
      if (column.optional) {
        if ((dataHeader?.int(3) ?? ENCODING_RLE) !== ENCODING_RLE) throw new UnsupportedChunkError('definition levels not RLE-encoded');
        const length = values.readUInt32LE(0);
        levels = rleHybrid(values, 4, 4 + length, 1, count);
        valuesStart = 4 + length;
      }
    } else if (type === PAGE_DATA_V2) {
      const v2 = header.struct(8);
      count = v2?.int(1) ?? 0;
      encoding = v2?.int(4) ?? ENCODING_PLAIN;
      const definitionBytes = v2?.int(5) ?? 0;
      const repetitionBytes = v2?.int(6) ?? 0;
      if (repetitionBytes !== 0) throw new UnsupportedChunkError('repetition levels in a flat column');
      if (column.optional) levels = rleHybrid(body, 0, definitionBytes, 1, count);
      const rest = body.subarray(definitionBytes);
      values = v2?.bool(7) === false ? rest : decompress(rest, rawSize - definitionBytes);
    } else {
      continue; // index pages carry no values
    }
    let present: T[] = [];
    const nonNull = levels === undefined ? count : countOnes(levels);
    if (encoding === ENCODING_PLAIN) {
      const stored: PresentChunkValue[] = [];
      plainValues(values, valuesStart, nonNull, column.physicalType, stored);
      present = converted(stored);
    } else if (encoding === ENCODING_PLAIN_DICTIONARY || encoding === ENCODING_RLE_DICTIONARY) {
      if (dictionary === undefined) throw new UnsupportedChunkError('a dictionary-encoded page without a dictionary');
      const bitWidth = values[valuesStart];
      if (bitWidth === undefined || bitWidth > 32) throw new UnsupportedChunkError(`dictionary index width ${String(bitWidth)}`);
      const indexes = rleHybrid(values, valuesStart + 1, values.length, bitWidth, nonNull);
      for (const dictionaryIndex of indexes) {
        const value = dictionary[dictionaryIndex];
        if (value === undefined) throw new UnsupportedChunkError(`dictionary index ${dictionaryIndex} of ${dictionary.length}`);
        present.push(value);
      }
    } else throw new UnsupportedChunkError(`data page encoding ${encoding}`);
    if (levels === undefined) for (const value of present) into.push(value);
    else {
      let next = 0;
      for (let row = 0; row < count; row++) {
        if (levels[row] !== 1) {
          into.push(null);
          continue;
        }
        const value = present[next++];
        if (value === undefined) throw new UnsupportedChunkError(`the page holds ${present.length} values, fewer than its definition levels count`);
        into.push(value);
      }
    }
    decoded += count;
  }
  if (decoded !== location.numValues) throw new UnsupportedChunkError(`the pages hold ${decoded} values where the footer counts ${location.numValues}`);
}

function countOnes(levels: Uint32Array): number {
  let ones = 0;
  for (const level of levels) ones += level;
  return ones;
}

/** PLAIN values of a fixed width, little-endian. */
const FIXED_WIDTH_READERS: Partial<Record<ParquetPhysicalType, { width: number; read: (bytes: Buffer, at: number) => PresentChunkValue }>> = {
  INT32: { width: 4, read: (bytes, at) => bytes.readInt32LE(at) },
  // A number while exact (high word within ±2^21, so |value| < 2^53): a BigInt per value is an allocation per row.
  INT64: {
    width: 8,
    read: (bytes, at) => {
      const high = bytes.readInt32LE(at + 4);
      return high > -0x200000 && high < 0x200000 ? high * 0x1_0000_0000 + bytes.readUInt32LE(at) : bytes.readBigInt64LE(at);
    },
  },
  FLOAT: { width: 4, read: (bytes, at) => bytes.readFloatLE(at) },
  DOUBLE: { width: 8, read: (bytes, at) => bytes.readDoubleLE(at) },
};

/** `count` PLAIN-encoded values from `start`. */
function plainValues(bytes: Buffer, start: number, count: number, physicalType: ParquetPhysicalType, into: PresentChunkValue[]): void {
  const fixed = FIXED_WIDTH_READERS[physicalType];
  if (fixed !== undefined) {
    if (start + count * fixed.width > bytes.length) throw new UnsupportedChunkError('PLAIN values run past their page');
    for (let index = 0; index < count; index++) into.push(fixed.read(bytes, start + fixed.width * index));
    return;
  }
  switch (physicalType) {
    case 'BOOLEAN':
      if (start + Math.ceil(count / 8) > bytes.length) throw new UnsupportedChunkError('PLAIN booleans run past their page');
      for (let index = 0; index < count; index++) into.push(((bytes[start + (index >>> 3)] ?? 0) & (1 << (index & 7))) !== 0); // in range: checked above
      return;
    case 'BYTE_ARRAY': {
      let position = start;
      for (let index = 0; index < count; index++) {
        if (position + 4 > bytes.length) throw new UnsupportedChunkError('PLAIN byte arrays run past their page');
        const length = bytes.readUInt32LE(position);
        position += 4;
        if (position + length > bytes.length) throw new UnsupportedChunkError('PLAIN byte arrays run past their page');
        into.push(bytes.subarray(position, position + length));
        position += length;
      }
      return;
    }
    default:
      throw new UnsupportedChunkError(`physical type ${physicalType}`);
  }
}

/** `count` values of the RLE / bit-packed hybrid encoding of `bitWidth` bits in bytes [start, end). */
export function rleHybrid(bytes: Uint8Array, start: number, end: number, bitWidth: number, count: number): Uint32Array {
  const out = new Uint32Array(count);
  const valueBytes = Math.ceil(bitWidth / 8);
  let position = start;
  let filled = 0;
  while (filled < count) {
    let header = 0;
    for (let scale = 1; ; scale *= 128) {
      const byte = bytes[position++];
      if (byte === undefined || position > end) throw new UnsupportedChunkError('RLE data ends early');
      header += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      if (scale > 2 ** 28) throw new UnsupportedChunkError('RLE run header too long');
    }
    if (header % 2 === 0) {
      const run = header / 2;
      let value = 0;
      for (let index = 0; index < valueBytes; index++) value += (bytes[position + index] ?? 0) * 2 ** (8 * index); // past `end`: refused below
      position += valueBytes;
      if (position > end) throw new UnsupportedChunkError('RLE data ends early');
      out.fill(value, filled, Math.min(count, filled + run));
      filled += run;
    } else {
      const values = ((header - 1) / 2) * 8;
      const groupBytes = (values / 8) * bitWidth;
      if (position + groupBytes > end) throw new UnsupportedChunkError('bit-packed data ends early');
      const take = Math.min(values, count - filled);
      // LSB first: value i is bits [i * bitWidth, (i + 1) * bitWidth) of the run, little-endian.
      for (let index = 0; index < take; index++) {
        let bit = index * bitWidth;
        let value = 0;
        for (let got = 0; got < bitWidth; ) {
          const byte = bytes[position + (bit >>> 3)] ?? 0; // inside the group, checked above
          const offset = bit & 7;
          const bits = Math.min(8 - offset, bitWidth - got);
          value += ((byte >>> offset) & ((1 << bits) - 1)) * 2 ** got;
          got += bits;
          bit += bits;
        }
        out[filled + index] = value;
      }
      filled += values;
      position += groupBytes;
    }
  }
  return out;
}
