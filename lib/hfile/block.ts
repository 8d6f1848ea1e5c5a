/**
 * HFile v3 blocks: the 33-byte header, the (possibly GZ-compressed) payload and the CRC32C checksums HBase
 * appends. Layout of one block on disk:
 *
 *   magic (8) | onDiskSizeWithoutHeader (i32) | uncompressedSizeWithoutHeader (i32) | prevBlockOffset (i64)
 *   | checksumType (u8) | bytesPerChecksum (i32) | onDiskDataSizeWithHeader (i32)
 *   | payload (onDiskDataSizeWithHeader - 33 bytes) | checksums (4 bytes per bytesPerChecksum chunk)
 *
 * The checksums cover the header and the payload as stored (compressed), chunk by chunk.
 */
import { constants, gunzipSync, gzip as gzipAsync, gzipSync, type ZlibOptions } from 'node:zlib';
import { ByteCursor, ByteWriter, byteAt, readI32, readI64, writeI32 } from './bytes.js';
import { crc32c } from './crc32c.js';
import { HFileFormatError } from './errors.js';

export const BLOCK_HEADER_SIZE = 33;
/** HBase's `hbase.hstore.bytes.per.checksum` default (16 KiB). */
export const DEFAULT_BYTES_PER_CHECKSUM = 16 * 1024;

/** Block magics (HBase `BlockType`). */
export const BlockMagic = {
  DATA: 'DATABLK*',
  ENCODED_DATA: 'DATABLKE',
  LEAF_INDEX: 'IDXLEAF2',
  BLOOM_CHUNK: 'BLMFBLK2',
  META: 'METABLKc',
  INTERMEDIATE_INDEX: 'IDXINTE2',
  ROOT_INDEX: 'IDXROOT2',
  FILE_INFO: 'FILEINF2',
  GENERAL_BLOOM_META: 'BLMFMET2',
  DELETE_FAMILY_BLOOM_META: 'DFBLMET2',
  TRAILER: 'TRABLK"$',
} as const;
export type BlockType = keyof typeof BlockMagic;

/** HBase `ChecksumType` codes. */
export const ChecksumType = { NULL: 0, CRC32: 1, CRC32C: 2 } as const;

/**
 * HBase `Compression.Algorithm` ordinals, as the trailer stores them. Hudi writes GZ (its default for
 * `hoodie.hfile.compression.algorithm`) or NONE; the others are named so errors can say which one a file uses.
 */
export const COMPRESSION_CODECS = ['LZO', 'GZ', 'NONE', 'SNAPPY', 'LZ4', 'BZIP2', 'ZSTD'] as const;
export type CompressionCodecName = (typeof COMPRESSION_CODECS)[number];
export type SupportedCompression = 'NONE' | 'GZ';

export interface BlockHeader {
  type: BlockType;
  onDiskSizeWithoutHeader: number;
  uncompressedSizeWithoutHeader: number;
  prevBlockOffset: bigint;
  checksumType: number;
  bytesPerChecksum: number;
  onDiskDataSizeWithHeader: number;
}

/** A block read from the file: its header, where it is, and its uncompressed payload. */
export interface Block {
  header: BlockHeader;
  offset: number;
  /** The block's size on disk, header and checksums included: the next block starts at offset + this. */
  onDiskSize: number;
  payload: Uint8Array;
}

const MAGIC_TO_TYPE = new Map<string, BlockType>(Object.entries(BlockMagic).map(([type, magic]) => [magic, type as BlockType]));
const latin1 = new TextDecoder('latin1');

export function magicBytes(type: BlockType): Uint8Array {
  return Uint8Array.from(BlockMagic[type], (c) => c.charCodeAt(0));
}

export function parseBlockHeader(bytes: Uint8Array, offset: number): BlockHeader {
  if (offset < 0 || offset + BLOCK_HEADER_SIZE > bytes.length) {
    throw new HFileFormatError(`no room for a block header at offset ${offset} (file of ${bytes.length} bytes)`);
  }
  const magic = latin1.decode(bytes.subarray(offset, offset + 8));
  const type = MAGIC_TO_TYPE.get(magic);
  if (type === undefined) throw new HFileFormatError(`invalid block magic ${JSON.stringify(magic)} at offset ${offset}`);
  return {
    type,
    onDiskSizeWithoutHeader: readI32(bytes, offset + 8),
    uncompressedSizeWithoutHeader: readI32(bytes, offset + 12),
    prevBlockOffset: readI64(bytes, offset + 16),
    checksumType: byteAt(bytes, offset + 24, 'block header'),
    bytesPerChecksum: readI32(bytes, offset + 25),
    onDiskDataSizeWithHeader: readI32(bytes, offset + 29),
  };
}

function checksumCount(dataSize: number, bytesPerChecksum: number): number {
  return Math.ceil(dataSize / bytesPerChecksum);
}

function verifyChecksums(bytes: Uint8Array, offset: number, header: BlockHeader): void {
  if (header.checksumType === ChecksumType.NULL) return;
  if (header.checksumType !== ChecksumType.CRC32C) {
    throw new HFileFormatError(`block at offset ${offset} uses checksum type ${header.checksumType}; only CRC32C (2) and NULL (0) are supported`);
  }
  if (header.bytesPerChecksum <= 0) throw new HFileFormatError(`block at offset ${offset} has bytesPerChecksum ${header.bytesPerChecksum}`);
  const dataEnd = offset + header.onDiskDataSizeWithHeader;
  const chunks = checksumCount(header.onDiskDataSizeWithHeader, header.bytesPerChecksum);
  if (header.onDiskDataSizeWithHeader + chunks * 4 !== BLOCK_HEADER_SIZE + header.onDiskSizeWithoutHeader) {
    throw new HFileFormatError(`block at offset ${offset}: its sizes disagree with ${chunks} checksum chunk(s)`);
  }
  for (let chunk = 0; chunk < chunks; chunk++) {
    const start = offset + chunk * header.bytesPerChecksum;
    const end = Math.min(start + header.bytesPerChecksum, dataEnd);
    const stored = readI32(bytes, dataEnd + chunk * 4) >>> 0;
    if (crc32c(bytes, start, end) !== stored) throw new HFileFormatError(`block at offset ${offset}: checksum ${chunk} does not match (the file is corrupt)`);
  }
}

/** Reads the block at `offset`, verifying its checksums and decompressing its payload. */
export function readBlock(bytes: Uint8Array, offset: number, compression: CompressionCodecName, expected?: BlockType): Block {
  const header = parseBlockHeader(bytes, offset);
  if (expected !== undefined && header.type !== expected) {
    throw new HFileFormatError(`expected a ${expected} block at offset ${offset}, found ${header.type}`);
  }
  const onDiskSize = BLOCK_HEADER_SIZE + header.onDiskSizeWithoutHeader;
  if (
    header.onDiskSizeWithoutHeader < 0 ||
    offset + onDiskSize > bytes.length ||
    header.onDiskDataSizeWithHeader < BLOCK_HEADER_SIZE ||
    header.onDiskDataSizeWithHeader > onDiskSize
  ) {
    throw new HFileFormatError(`block at offset ${offset} claims ${onDiskSize} bytes, past the end of the file (${bytes.length} bytes)`);
  }
  verifyChecksums(bytes, offset, header);
  const stored = bytes.subarray(offset + BLOCK_HEADER_SIZE, offset + header.onDiskDataSizeWithHeader);
  const payload = plain(decompress(stored, compression, header.uncompressedSizeWithoutHeader, offset));
  return { header, offset, onDiskSize, payload };
}

/** A plain Uint8Array view (not a Buffer), so values compare and serialize the same whatever the input was. */
function plain(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function decompress(stored: Uint8Array, compression: CompressionCodecName, expectedSize: number, offset: number): Uint8Array {
  let payload: Uint8Array;
  if (compression === 'NONE') payload = stored;
  else if (compression === 'GZ') {
    try {
      payload = gunzipSync(stored);
    } catch (error) {
      throw new HFileFormatError(`block at offset ${offset}: GZ payload does not decompress`, { cause: error });
    }
  } else {
    throw new HFileFormatError(`the file is compressed with ${compression}; only NONE and GZ (what Hudi writes) are supported`, {
      fix: 'rewrite it with hoodie.hfile.compression.algorithm=GZ',
    });
  }
  if (payload.length !== expectedSize) {
    throw new HFileFormatError(`block at offset ${offset}: payload is ${payload.length} bytes uncompressed, its header says ${expectedSize}`);
  }
  return payload;
}

/** GZ as HBase writes it: a gzip member whose header has no timestamp and OS 255, as Java's GZIPOutputStream does. */
function gzip(payload: Uint8Array, options: BlockWriteOptions): Uint8Array {
  const compressed = gzipSync(payload, zlibOptions(options));
  compressed[9] = 0xff;
  return compressed;
}

function zlibOptions(options: BlockWriteOptions): ZlibOptions {
  return {
    ...(options.gzipLevel === undefined ? {} : { level: options.gzipLevel }),
    ...(options.gzipStrategy === 'run-length' ? { strategy: constants.Z_RLE } : {}),
  };
}

export interface BlockWriteOptions {
  compression: SupportedCompression;
  /** zlib level for GZ (default zlib's). */
  gzipLevel?: number;
  /**
   * zlib's strategy for GZ: its default matching, or run-length matches only (Z_RLE: faster, and smaller for data
   * that is mostly runs of one byte). Any strategy reads back the same.
   */
  gzipStrategy?: 'default' | 'run-length';
  bytesPerChecksum?: number;
}

/** A serialized block, with the sizes the writer's index and trailer need. */
export interface SerializedBlock {
  bytes: Uint8Array;
  /** Uncompressed payload size plus the header, HBase's `getUncompressedSizeWithHeader`. */
  uncompressedSizeWithHeader: number;
}

/** A block's payload as stored: compressed with the block's codec (the payload itself for NONE). */
export function compressBlockPayload(payload: Uint8Array, options: BlockWriteOptions): Uint8Array {
  return options.compression === 'GZ' ? gzip(payload, options) : payload;
}

const ASYNC_GZIP_CHUNK = 256 * 1024;

/**
 * compressBlockPayload on libuv's thread pool, so that several blocks compress at once and the caller goes on
 * meanwhile: the same zlib with the same settings, so the same bytes.
 */
export function compressBlockPayloadAsync(payload: Uint8Array, options: BlockWriteOptions): Promise<Uint8Array> {
  if (options.compression !== 'GZ') return Promise.resolve(payload);
  return new Promise((resolve, reject) => {
    const callback = (error: Error | null, compressed: Buffer): void => {
      if (error !== null) {
        reject(error);
        return;
      }
      compressed[9] = 0xff;
      resolve(compressed);
    };
    // Large output chunks: one hop back to the main thread per block rather than one per 16 KiB (zlib's output
    // does not depend on how its output space is handed out).
    gzipAsync(payload, { ...zlibOptions(options), chunkSize: ASYNC_GZIP_CHUNK }, callback);
  });
}

/**
 * A block around a payload already compressed (`stored`, from compressBlockPayload of `payloadLength` bytes), as
 * the parts to write in order: header, the stored bytes themselves (not copied), CRC32C checksums.
 */
export function frameBlockParts(
  type: BlockType,
  stored: Uint8Array,
  payloadLength: number,
  prevBlockOffset: bigint | number,
  bytesPerChecksum: number = DEFAULT_BYTES_PER_CHECKSUM,
): { parts: Uint8Array[]; length: number; uncompressedSizeWithHeader: number } {
  const dataSize = BLOCK_HEADER_SIZE + stored.length;
  const chunks = checksumCount(dataSize, bytesPerChecksum);
  const header = new ByteWriter(BLOCK_HEADER_SIZE)
    .bytes(magicBytes(type))
    .i32(stored.length + chunks * 4)
    .i32(payloadLength)
    .i64(prevBlockOffset)
    .u8(ChecksumType.CRC32C)
    .i32(bytesPerChecksum)
    .i32(dataSize)
    .view();
  // Each checksum covers bytesPerChecksum bytes of header + stored; the first chunk starts with the header.
  const checksums = new Uint8Array(chunks * 4);
  if (bytesPerChecksum < BLOCK_HEADER_SIZE) {
    const data = new Uint8Array(dataSize);
    data.set(header, 0);
    data.set(stored, BLOCK_HEADER_SIZE);
    for (let chunk = 0; chunk < chunks; chunk++) {
      const start = chunk * bytesPerChecksum;
      writeI32(checksums, chunk * 4, crc32c(data, start, Math.min(start + bytesPerChecksum, dataSize)) | 0);
    }
    return { parts: [data, checksums], length: dataSize + checksums.length, uncompressedSizeWithHeader: BLOCK_HEADER_SIZE + payloadLength };
  }
  const firstEnd = Math.min(bytesPerChecksum, dataSize) - BLOCK_HEADER_SIZE;
  const first = new Uint8Array(BLOCK_HEADER_SIZE + firstEnd);
  first.set(header, 0);
  first.set(stored.subarray(0, firstEnd), BLOCK_HEADER_SIZE);
  writeI32(checksums, 0, crc32c(first) | 0);
  for (let chunk = 1; chunk < chunks; chunk++) {
    const start = chunk * bytesPerChecksum - BLOCK_HEADER_SIZE;
    writeI32(checksums, chunk * 4, crc32c(stored, start, Math.min(start + bytesPerChecksum, stored.length)) | 0);
  }
  return { parts: [header, stored, checksums], length: dataSize + checksums.length, uncompressedSizeWithHeader: BLOCK_HEADER_SIZE + payloadLength };
}

/** Serializes one block: header, compressed payload, CRC32C checksums. */
export function serializeBlock(type: BlockType, payload: Uint8Array, prevBlockOffset: bigint | number, options: BlockWriteOptions): SerializedBlock {
  const block = frameBlockParts(type, compressBlockPayload(payload, options), payload.length, prevBlockOffset, options.bytesPerChecksum);
  const bytes = new Uint8Array(block.length);
  let offset = 0;
  for (const part of block.parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return { bytes, uncompressedSizeWithHeader: block.uncompressedSizeWithHeader };
}

/** A cursor over a block's uncompressed payload. */
export function payloadCursor(block: Block): ByteCursor {
  return new ByteCursor(block.payload, 0, block.payload.length, `${block.header.type} block at offset ${block.offset}`);
}
