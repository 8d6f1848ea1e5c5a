/**
 * Writing the few Parquet column chunks that binary copy cannot copy: a column holding one value in every row (Hudi's
 * `_hoodie_file_name`, which names the file a record is in) and a column that is null in every row (one an older
 * input lacks). Each is a dictionary page and/or one v1 data page whose levels and indices are single RLE runs, so
 * a chunk of a million rows is a few dozen bytes. Spec: apache/parquet-format, README.md (data pages) and Encodings.md.
 */
import * as zlib from 'node:zlib';
import { snappyCompress, snappyDecompress } from './snappy.js';
import { CompactReader, CompactWriter, THRIFT_BINARY, THRIFT_I32, THRIFT_I64, THRIFT_LIST, THRIFT_STRUCT, ThriftList, ThriftStruct } from './thrift.js';

/** parquet.thrift CompressionCodec. */
export const CODEC = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, LZO: 3, BROTLI: 4, LZ4: 5, ZSTD: 6, LZ4_RAW: 7 } as const;
const CODEC_NAMES = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];

export function codecName(codec: number): string {
  return CODEC_NAMES[codec] ?? `codec ${codec}`;
}

const ENCODING_PLAIN = 0;
const ENCODING_PLAIN_DICTIONARY = 2;
const ENCODING_RLE = 3;
const PAGE_DATA = 0;
const PAGE_DICTIONARY = 2;

type Compressor = (raw: Buffer) => Buffer;

const zstdCompressSync = (zlib as unknown as { zstdCompressSync?: (input: Buffer) => Buffer }).zstdCompressSync;

/** The codecs this runtime can write; LZO and the LZ4s have no compressor in Node, so such chunks' pages are written uncompressed. */
const COMPRESSORS: ReadonlyMap<number, Compressor> = new Map<number, Compressor>([
  [CODEC.UNCOMPRESSED, (raw) => raw],
  [CODEC.SNAPPY, (raw) => snappyCompress(raw)],
  [CODEC.GZIP, (raw) => zlib.gzipSync(raw)],
  [CODEC.BROTLI, (raw) => zlib.brotliCompressSync(raw)],
  ...(zstdCompressSync === undefined ? [] : [[CODEC.ZSTD, (raw: Buffer) => zstdCompressSync(raw)] as [number, Compressor]]),
]);

/** A chunk written here: its bytes (pages) and the ColumnMetaData that describes them, offsets relative to its start. */
export interface WrittenChunk {
  readonly bytes: Buffer;
  readonly codec: number;
  readonly uncompressedSize: number;
  /** Relative to the chunk's first byte; add its position in the file. */
  readonly dataPageOffset: number;
  readonly dictionaryPageOffset: number | undefined;
  readonly encodings: readonly number[];
  /** PageEncodingStats: [page type, encoding, count]. */
  readonly encodingStats: readonly (readonly [number, number, number])[];
  readonly statistics: ThriftStruct;
  readonly numValues: number;
}

/** Bits for levels 0..maxLevel (RLE bit width). */
export function bitWidthOf(maxLevel: number): number {
  let width = 0;
  while (2 ** width <= maxLevel) width++;
  return width;
}

/** An unsigned LEB128 varint's bytes (the RLE hybrid's run headers). */
export function unsignedVarint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

/** One RLE run of the RLE/bit-packing hybrid: `count` times `value`, at `bitWidth` bits (header varint count << 1). */
export function rleRun(count: number, value: number, bitWidth: number): Buffer {
  const valueBytes = Math.ceil(bitWidth / 8);
  const out = [...unsignedVarint(count * 2)];
  for (let index = 0; index < valueBytes; index++) out.push(Math.floor(value / 2 ** (8 * index)) & 0xff);
  return Buffer.from(out);
}

/** A v1 data page's level section: the 4-byte little-endian length, then one RLE run. */
function levelSection(count: number, value: number, maxLevel: number): Buffer {
  const run = rleRun(count, value, bitWidthOf(maxLevel));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(run.length, 0);
  return Buffer.concat([length, run]);
}

function page(type: number, raw: Buffer, compress: Compressor, header: (page: ThriftStruct) => void): { bytes: Buffer; uncompressed: number } {
  const body = compress(raw);
  const struct = new ThriftStruct();
  struct.set(1, THRIFT_I32, type);
  struct.set(2, THRIFT_I32, raw.length);
  struct.set(3, THRIFT_I32, body.length);
  header(struct);
  const headerBytes = new CompactWriter().struct(struct).bytes();
  return { bytes: Buffer.concat([headerBytes, body]), uncompressed: headerBytes.length + raw.length };
}

function compressorFor(codec: number): { codec: number; compress: Compressor } {
  const compress = COMPRESSORS.get(codec);
  return compress === undefined ? { codec: CODEC.UNCOMPRESSED, compress: (raw) => raw } : { codec, compress };
}

/**
 * A BYTE_ARRAY column chunk holding `value` in each of `rows` rows (a top-level column: one value a row, never null):
 * a dictionary page of the one value and a data page of PLAIN_DICTIONARY indices, as parquet-mr's v1 writer encodes
 * dictionaries. `maxDefinition` is 1 for an OPTIONAL column, 0 for a REQUIRED one. Compressed with `codec` when this
 * runtime has it, else uncompressed (the chunk's ColumnMetaData says which).
 */
export function constantByteArrayChunk(value: string, rows: number, maxDefinition: number, codec: number): WrittenChunk {
  const chosen = compressorFor(codec);
  const text = Buffer.from(value, 'utf8');
  const plainValue = Buffer.alloc(4 + text.length);
  plainValue.writeUInt32LE(text.length, 0);
  text.copy(plainValue, 4);
  const dictionary = page(PAGE_DICTIONARY, plainValue, chosen.compress, (header) => {
    const dictionaryHeader = new ThriftStruct();
    dictionaryHeader.set(1, THRIFT_I32, 1);
    dictionaryHeader.set(2, THRIFT_I32, ENCODING_PLAIN_DICTIONARY);
    header.set(7, THRIFT_STRUCT, dictionaryHeader);
  });
  // Index bit width 1 (not 0: some readers refuse a zero width), one run of index 0.
  const indices = Buffer.concat([Buffer.from([1]), rleRun(rows, 0, 1)]);
  const raw = maxDefinition > 0 ? Buffer.concat([levelSection(rows, maxDefinition, maxDefinition), indices]) : indices;
  const data = page(PAGE_DATA, raw, chosen.compress, (header) => header.set(5, THRIFT_STRUCT, dataPageHeader(rows, ENCODING_PLAIN_DICTIONARY)));
  const statistics = new ThriftStruct();
  statistics.set(1, THRIFT_BINARY, text);
  statistics.set(2, THRIFT_BINARY, text);
  statistics.set(3, THRIFT_I64, 0n);
  statistics.set(5, THRIFT_BINARY, text);
  statistics.set(6, THRIFT_BINARY, text);
  return {
    bytes: Buffer.concat([dictionary.bytes, data.bytes]),
    codec: chosen.codec,
    uncompressedSize: dictionary.uncompressed + data.uncompressed,
    dataPageOffset: dictionary.bytes.length,
    dictionaryPageOffset: 0,
    encodings: [ENCODING_PLAIN_DICTIONARY, ENCODING_RLE],
    encodingStats: [
      [PAGE_DICTIONARY, ENCODING_PLAIN_DICTIONARY, 1],
      [PAGE_DATA, ENCODING_PLAIN_DICTIONARY, 1],
    ],
    statistics,
    numValues: rows,
  };
}

/**
 * A column chunk that is null in each of `rows` rows, for a column whose top-level field an input does not have:
 * every repetition and definition level is 0 (the top-level field is absent), one value slot a row, no values.
 * The column must be nullable at the top (maxDefinition ≥ 1).
 */
export function nullChunk(rows: number, maxDefinition: number, maxRepetition: number, codec: number): WrittenChunk {
  if (maxDefinition < 1) throw new Error('a REQUIRED column cannot be filled with nulls');
  const chosen = compressorFor(codec);
  const sections = [...(maxRepetition > 0 ? [levelSection(rows, 0, maxRepetition)] : []), levelSection(rows, 0, maxDefinition)];
  const data = page(PAGE_DATA, Buffer.concat(sections), chosen.compress, (header) => {
    const dataHeader = dataPageHeader(rows, ENCODING_PLAIN);
    const statistics = new ThriftStruct();
    statistics.set(3, THRIFT_I64, BigInt(rows));
    dataHeader.set(5, THRIFT_STRUCT, statistics);
    header.set(5, THRIFT_STRUCT, dataHeader);
  });
  const statistics = new ThriftStruct();
  statistics.set(3, THRIFT_I64, BigInt(rows));
  return {
    bytes: data.bytes,
    codec: chosen.codec,
    uncompressedSize: data.uncompressed,
    dataPageOffset: 0,
    dictionaryPageOffset: undefined,
    encodings: [ENCODING_PLAIN, ENCODING_RLE],
    encodingStats: [[PAGE_DATA, ENCODING_PLAIN, 1]],
    statistics,
    numValues: rows,
  };
}

function dataPageHeader(values: number, encoding: number): ThriftStruct {
  const header = new ThriftStruct();
  header.set(1, THRIFT_I32, values);
  header.set(2, THRIFT_I32, encoding);
  header.set(3, THRIFT_I32, ENCODING_RLE);
  header.set(4, THRIFT_I32, ENCODING_RLE);
  return header;
}

/** The ColumnMetaData (parquet.thrift field ids) of a written chunk placed at `start` in its file. */
export function writtenChunkMetadata(chunk: WrittenChunk, physicalType: number, path: readonly string[], start: number): ThriftStruct {
  const meta = new ThriftStruct();
  meta.set(1, THRIFT_I32, physicalType);
  meta.set(2, THRIFT_LIST, new ThriftList(THRIFT_I32, [...chunk.encodings]));
  meta.set(
    3,
    THRIFT_LIST,
    new ThriftList(
      THRIFT_BINARY,
      path.map((name) => Buffer.from(name, 'utf8')),
    ),
  );
  meta.set(4, THRIFT_I32, chunk.codec);
  meta.set(5, THRIFT_I64, BigInt(chunk.numValues));
  meta.set(6, THRIFT_I64, BigInt(chunk.uncompressedSize));
  meta.set(7, THRIFT_I64, BigInt(chunk.bytes.length));
  meta.set(9, THRIFT_I64, BigInt(start + chunk.dataPageOffset));
  if (chunk.dictionaryPageOffset !== undefined) meta.set(11, THRIFT_I64, BigInt(start + chunk.dictionaryPageOffset));
  meta.set(12, THRIFT_STRUCT, chunk.statistics);
  meta.set(
    13,
    THRIFT_LIST,
    new ThriftList(
      THRIFT_STRUCT,
      chunk.encodingStats.map(([pageType, encoding, count]) => {
        const stats = new ThriftStruct();
        stats.set(1, THRIFT_I32, pageType);
        stats.set(2, THRIFT_I32, encoding);
        stats.set(3, THRIFT_I32, count);
        return stats;
      }),
    ),
  );
  return meta;
}

// ---------------------------------------------------------------------------------------------------------------
// Recompressing a copied chunk (Hudi's binary copy recompresses chunks whose codec is not the configured one).

const PAGE_DATA_V2 = 3;

type Decompressor = (body: Buffer, uncompressedSize: number) => Buffer;

const zstdDecompressSync = (zlib as unknown as { zstdDecompressSync?: (input: Buffer) => Buffer }).zstdDecompressSync;

const DECOMPRESSORS: ReadonlyMap<number, Decompressor> = new Map<number, Decompressor>([
  [CODEC.UNCOMPRESSED, (body) => body],
  [CODEC.SNAPPY, (body) => snappyDecompress(body)],
  [CODEC.GZIP, (body) => zlib.gunzipSync(body)],
  [CODEC.BROTLI, (body) => zlib.brotliDecompressSync(body)],
  ...(zstdDecompressSync === undefined ? [] : [[CODEC.ZSTD, (body: Buffer) => zstdDecompressSync(body)] as [number, Decompressor]]),
]);

/** How this runtime decompresses a page of `codec` (a body and its uncompressed size), if it can. */
export function decompressorFor(codec: number): Decompressor | undefined {
  return DECOMPRESSORS.get(codec);
}

/** Whether this runtime can recompress pages from `from` to `to`. */
export function canRecompress(from: number, to: number): boolean {
  return DECOMPRESSORS.has(from) && COMPRESSORS.has(to);
}

/** A chunk's pages compressed anew; offsets relative to the chunk's first byte. */
export interface RecompressedChunk {
  readonly bytes: Buffer;
  /** Page headers plus uncompressed page bodies: ColumnMetaData.total_uncompressed_size. */
  readonly uncompressedSize: number;
  readonly dataPageOffset: number;
  readonly dictionaryPageOffset: number | undefined;
  /** Each data page (v1 and v2, in order): where it starts and its size with its header, for the offset index. */
  readonly dataPages: readonly { readonly offset: number; readonly size: number }[];
}

/**
 * The pages of a column chunk (`chunk`: its bytes, dictionary page first) decompressed from `from` and compressed
 * with `to`. Page headers keep every field but the compressed size (and the CRC, which covered the old bytes); a
 * v2 data page keeps its levels uncompressed, as the format wants, and an uncompressed v2 page stays as it is.
 */
export function recompressChunk(chunk: Buffer, from: number, to: number): RecompressedChunk {
  const decompress = DECOMPRESSORS.get(from);
  const compress = COMPRESSORS.get(to);
  if (decompress === undefined || compress === undefined) throw new Error(`cannot recompress ${codecName(from)} pages as ${codecName(to)}`);
  const pieces: Buffer[] = [];
  const dataPages: { offset: number; size: number }[] = [];
  let written = 0;
  let uncompressedSize = 0;
  let dataPageOffset: number | undefined;
  let dictionaryPageOffset: number | undefined;
  let position = 0;
  while (position < chunk.length) {
    const reader = new CompactReader(chunk, position);
    const header = reader.readStruct();
    const type = header.int(1) ?? -1;
    const rawSize = header.int(2) ?? 0;
    const compressedSize = header.int(3) ?? 0;
    const body = chunk.subarray(reader.position, reader.position + compressedSize);
    if (body.length !== compressedSize) throw new Error(`a page at ${position} runs past its chunk`);
    position = reader.position + compressedSize;
    let newBody: Buffer = body;
    if (type === PAGE_DATA || type === PAGE_DICTIONARY) {
      newBody = compress(decompress(body, rawSize));
    } else if (type === PAGE_DATA_V2) {
      const v2 = header.struct(8);
      const levels = (v2?.int(5) ?? 0) + (v2?.int(6) ?? 0);
      if (v2?.bool(7) !== false) newBody = Buffer.concat([body.subarray(0, levels), compress(decompress(body.subarray(levels), rawSize - levels))]);
    }
    header.set(3, THRIFT_I32, newBody.length);
    header.delete(4);
    const headerBytes = new CompactWriter().struct(header).bytes();
    if (type === PAGE_DICTIONARY) dictionaryPageOffset ??= written;
    if (type === PAGE_DATA || type === PAGE_DATA_V2) {
      dataPageOffset ??= written;
      dataPages.push({ offset: written, size: headerBytes.length + newBody.length });
    }
    pieces.push(headerBytes, newBody);
    written += headerBytes.length + newBody.length;
    uncompressedSize += headerBytes.length + rawSize;
  }
  return { bytes: Buffer.concat(pieces), uncompressedSize, dataPageOffset: dataPageOffset ?? 0, dictionaryPageOffset, dataPages };
}
