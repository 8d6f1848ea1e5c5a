/**
 * Log blocks, format version 1 (HoodieLogFormatWriter.appendBlocks / HoodieLogFileReader.readBlock, Hudi 0.14/0.15);
 * encodeLogBlock gives the layout. Reading follows HoodieLogFileReader on a file system without transactional writes:
 * a block whose size runs past the end, whose trailing total length disagrees with its size, or that is not followed
 * by a magic or the end of the file is a torn write; it becomes a CORRUPT_BLOCK holding the bytes from after its magic
 * up to the next magic (found by scanning), and reading resumes there.
 */
import { ByteReader, ByteWriter, indexOfBytes, utf8 } from './bytes.js';
import { LogFormatError } from './errors.js';

export const LOG_BLOCK_MAGIC: Uint8Array = Uint8Array.from([0x23, 0x48, 0x55, 0x44, 0x49, 0x23]); // "#HUDI#"
/** HoodieLogFormat.CURRENT_VERSION; version 0 (before 2017) had no header, footer or total length. */
export const LOG_FORMAT_VERSION = 1;

/** HoodieLogBlock.HoodieLogBlockType, in ordinal order. */
export const LOG_BLOCK_TYPES = [
  'COMMAND_BLOCK',
  'DELETE_BLOCK',
  'CORRUPT_BLOCK',
  'AVRO_DATA_BLOCK',
  'HFILE_DATA_BLOCK',
  'PARQUET_DATA_BLOCK',
  'CDC_DATA_BLOCK',
] as const;
export type LogBlockType = (typeof LOG_BLOCK_TYPES)[number];
export type DataBlockType = 'AVRO_DATA_BLOCK' | 'HFILE_DATA_BLOCK' | 'PARQUET_DATA_BLOCK' | 'CDC_DATA_BLOCK';

/**
 * HoodieLogBlock.HeaderMetadataType, in ordinal order. Hudi 0.14/0.15 know the first seven; IS_PARTIAL and
 * BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS are Hudi 1.x's, and a 0.15 reader fails on a block carrying them
 * (it indexes `values()[ordinal]`), so encodeLogBlock refuses them unless asked to write for 1.x.
 */
export const LOG_BLOCK_HEADER_KEYS = [
  'INSTANT_TIME',
  'TARGET_INSTANT_TIME',
  'SCHEMA',
  'COMMAND_BLOCK_TYPE',
  'COMPACTED_BLOCK_TIMES',
  'RECORD_POSITIONS',
  'BLOCK_IDENTIFIER',
  'IS_PARTIAL',
  'BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS',
] as const;
export type LogBlockHeaderKey = (typeof LOG_BLOCK_HEADER_KEYS)[number];
/** Keys a Hudi 0.14/0.15 reader can read. */
export const HUDI_0_15_HEADER_KEY_COUNT = 7;

/** Header or footer entries; every value is a string (Hudi stores the UTF-8 bytes of a Java String). */
export type LogBlockHeader = Partial<Record<LogBlockHeaderKey, string>>;

/** A block to write. */
export interface LogBlockInput {
  readonly type: Exclude<LogBlockType, 'CORRUPT_BLOCK'>;
  readonly header: LogBlockHeader;
  /** Hudi writes none. */
  readonly footer?: LogBlockHeader;
  /** The content, or its parts in order (a large content made in parts is then copied once, into the file). */
  readonly content: Uint8Array | readonly Uint8Array[];
}

/** A block read from a file. */
export interface LogBlock {
  readonly type: LogBlockType;
  readonly header: LogBlockHeader;
  readonly footer: LogBlockHeader;
  /** The content field; for a CORRUPT_BLOCK, the bytes between its magic and the next one. */
  readonly content: Uint8Array;
  /** Where the block's magic starts in the file. */
  readonly offset: number;
  /** Bytes the block takes in the file, from its magic to the next block (or the end). */
  readonly length: number;
}

export interface EncodeLogBlockOptions {
  /** Allow the Hudi 1.x header keys (IS_PARTIAL, …), which Hudi 0.14/0.15 readers fail on. Default false. */
  allowHudi1HeaderKeys?: boolean;
}

/**
 * One block's bytes, from its magic through its total length.
 *
 * Every field is big-endian:
 *
 *   "#HUDI#"                       6 bytes
 *   block size              int64  bytes after this field through the trailing total length
 *   format version          int32  1
 *   block type              int32  HoodieLogBlockType ordinal
 *   header                         int32 entry count, then per entry: int32 key ordinal, int32 length, UTF-8 bytes
 *   content length          int64
 *   content                        block type specific
 *   footer                         same encoding as the header (always empty in practice)
 *   total length            int64  bytes from the magic through the footer = block size + 6
 */
export function encodeLogBlock(block: LogBlockInput, options: EncodeLogBlockOptions = {}): Uint8Array {
  return encodeLogBlockParts(block, options).toBytes();
}

/** encodeLogBlock's fields, not yet joined: a log file joins all its blocks' fields once (large contents are copied once). */
export function encodeLogBlockParts(block: LogBlockInput, options: EncodeLogBlockOptions = {}): ByteWriter {
  const typeOrdinal = LOG_BLOCK_TYPES.indexOf(block.type);
  if (typeOrdinal < 0 || block.type === ('CORRUPT_BLOCK' as LogBlockType)) {
    throw new LogFormatError(`cannot write a log block of type ${String(block.type)}`, {
      fix: `use one of ${LOG_BLOCK_TYPES.filter((type) => type !== 'CORRUPT_BLOCK').join(', ')}`,
    });
  }
  const header = encodeMetadata(block.header, options);
  const footer = encodeMetadata(block.footer ?? {}, options);
  const content = block.content instanceof Uint8Array ? [block.content] : block.content;
  let contentLength = 0;
  for (const part of content) contentLength += part.length;
  // Block size: version + type + header + content length + content + footer + total length.
  const blockSize = 4 + 4 + header.length + 8 + contentLength + footer.length + 8;
  if (LOG_BLOCK_MAGIC.length + 8 + blockSize > 0x7fffffff) {
    // Hudi reads sizes into Java ints (HUDI-2655).
    throw new LogFormatError(`a log block of ${contentLength} content bytes exceeds Hudi's 2 GiB block limit`, {
      fix: 'split the records over several blocks',
    });
  }
  const writer = new ByteWriter().bytes(LOG_BLOCK_MAGIC).int64(blockSize).int32(LOG_FORMAT_VERSION).int32(typeOrdinal).bytes(header).int64(contentLength);
  for (const part of content) writer.bytes(part);
  return writer.bytes(footer).int64(LOG_BLOCK_MAGIC.length + 8 + blockSize - 8);
}

/** Several blocks back to back, as one append writes them. */
export function encodeLogBlocks(blocks: readonly LogBlockInput[], options: EncodeLogBlockOptions = {}): Uint8Array {
  const writer = new ByteWriter();
  for (const block of blocks) writer.bytes(encodeLogBlock(block, options));
  return writer.toBytes();
}

/**
 * Every block of a log file, in file order, torn blocks as CORRUPT_BLOCKs. `location` names the file in errors.
 * Throws LogFormatError where Hudi's reader fails too: the file does not start with the magic, or a block that passed
 * the length checks has an unknown format version, block type or header key, or fields that overrun it.
 */
export function decodeLogBlocks(bytes: Uint8Array, location?: string): LogBlock[] {
  return [...iterateLogBlocks(bytes, location)];
}

/** decodeLogBlocks, one block at a time. */
export function* iterateLogBlocks(bytes: Uint8Array, location?: string): Generator<LogBlock> {
  let position = 0;
  while (bytes.length - position >= LOG_BLOCK_MAGIC.length) {
    if (!hasMagicAt(bytes, position)) {
      // Hudi checks the magic after each block before accepting it, so only the first block can get here.
      throw new LogFormatError(`no "#HUDI#" magic at offset ${position}`, withLocation(location));
    }
    const offset = position;
    const afterMagic = position + LOG_BLOCK_MAGIC.length;
    const blockSize = readBlockSize(bytes, afterMagic);
    if (blockSize === undefined) {
      const next = nextMagic(bytes, afterMagic);
      yield corruptBlock(bytes, offset, afterMagic, next);
      position = next;
      continue;
    }
    const end = afterMagic + 8 + blockSize;
    yield decodeBlock(bytes, offset, afterMagic + 8, end, location);
    position = end;
  }
  // Fewer than 6 bytes left: Hudi's reader sees the end of the file (readFully hits EOF) and stops.
}

/** The block's size when it passes HoodieLogFileReader.isBlockCorrupted, else undefined. */
function readBlockSize(bytes: Uint8Array, afterMagic: number): number | undefined {
  const reader = new ByteReader(bytes, afterMagic);
  const size64 = reader.int64();
  if (size64 === undefined) return undefined;
  // Hudi casts the size to a Java int; anything that does not fit is past any file it reads whole.
  if (size64 < 8n || size64 > BigInt(bytes.length)) return undefined;
  const size = Number(size64);
  const end = afterMagic + 8 + size;
  if (end > bytes.length) return undefined;
  const total = new ByteReader(bytes, end - 8).int64();
  if (total === undefined || total - BigInt(LOG_BLOCK_MAGIC.length) !== size64) return undefined;
  // After a block: the next magic, or fewer bytes than a magic (the end, as Hudi's readMagic sees it).
  if (bytes.length - end >= LOG_BLOCK_MAGIC.length && !hasMagicAt(bytes, end)) return undefined;
  return size;
}

function decodeBlock(bytes: Uint8Array, offset: number, start: number, end: number, location: string | undefined): LogBlock {
  const reader = new ByteReader(bytes, start, end);
  const fail = (detail: string): LogFormatError => new LogFormatError(`log block at offset ${offset}: ${detail}`, withLocation(location));
  const formatVersion = reader.int32();
  if (formatVersion !== LOG_FORMAT_VERSION) {
    throw fail(`format version ${formatVersion} is not ${LOG_FORMAT_VERSION} (version 0 predates Hudi 0.5)`);
  }
  const typeOrdinal = reader.int32();
  const type = typeOrdinal === undefined ? undefined : LOG_BLOCK_TYPES[typeOrdinal];
  if (type === undefined || type === 'CORRUPT_BLOCK') throw fail(`block type ${typeOrdinal} is not one Hudi writes`);
  const header = decodeMetadata(reader, 'header', fail);
  const contentLength = reader.int64();
  // take() refuses a negative length or one past the block's end.
  const content = contentLength === undefined ? undefined : reader.take(Number(contentLength));
  if (content === undefined) throw fail(`content length ${contentLength} does not fit in the block`);
  const footer = decodeMetadata(reader, 'footer', fail);
  reader.int64(); // the total length, checked before decoding
  if (reader.remaining !== 0) throw fail(`${reader.remaining} bytes between the footer and the total length`);
  return { type, header, footer, content, offset, length: end - offset };
}

function corruptBlock(bytes: Uint8Array, offset: number, afterMagic: number, next: number): LogBlock {
  return { type: 'CORRUPT_BLOCK', header: {}, footer: {}, content: bytes.subarray(afterMagic, next), offset, length: next - offset };
}

/** Where the next magic starts at or after `from`, or the end of the file (scanForNextAvailableBlockOffset). */
function nextMagic(bytes: Uint8Array, from: number): number {
  const index = indexOfBytes(bytes, LOG_BLOCK_MAGIC, from);
  return index < 0 ? bytes.length : index;
}

function hasMagicAt(bytes: Uint8Array, position: number): boolean {
  for (let i = 0; i < LOG_BLOCK_MAGIC.length; i++) {
    if (bytes[position + i] !== LOG_BLOCK_MAGIC[i]) return false;
  }
  return true;
}

function encodeMetadata(metadata: LogBlockHeader, options: EncodeLogBlockOptions): Uint8Array {
  const writer = new ByteWriter();
  const entries: [number, string][] = [];
  for (const [key, value] of Object.entries(metadata)) {
    if (value === undefined) continue;
    const ordinal = LOG_BLOCK_HEADER_KEYS.indexOf(key as LogBlockHeaderKey);
    if (ordinal < 0) {
      throw new LogFormatError(`"${key}" is not a log block header key`, { fix: `use one of ${LOG_BLOCK_HEADER_KEYS.join(', ')}` });
    }
    if (ordinal >= HUDI_0_15_HEADER_KEY_COUNT && options.allowHudi1HeaderKeys !== true) {
      throw new LogFormatError(`header key ${key} is Hudi 1.x's; Hudi 0.14/0.15 readers fail on a block that has it`, {
        fix: 'leave it out for table version 6, or pass allowHudi1HeaderKeys for 1.x readers',
      });
    }
    entries.push([ordinal, value]);
  }
  // Hudi iterates a HashMap, so its order is arbitrary; ordinal order makes our bytes reproducible.
  entries.sort(([a], [b]) => a - b);
  writer.int32(entries.length);
  for (const [ordinal, value] of entries) {
    const bytes = utf8.encode(value);
    writer.int32(ordinal).int32(bytes.length).bytes(bytes);
  }
  return writer.toBytes();
}

function decodeMetadata(reader: ByteReader, what: string, fail: (detail: string) => LogFormatError): LogBlockHeader {
  const count = reader.int32();
  if (count === undefined) throw fail(`the ${what} entry count runs past the block`);
  const metadata: LogBlockHeader = {};
  for (let i = 0; i < count; i++) {
    const ordinal = reader.int32();
    const key = ordinal === undefined ? undefined : LOG_BLOCK_HEADER_KEYS[ordinal];
    if (key === undefined) throw fail(`${what} key ${ordinal} is not a HeaderMetadataType`);
    const length = reader.int32();
    const value = length === undefined ? undefined : reader.take(length);
    if (value === undefined) throw fail(`${what} value of ${key} (length ${length}) runs past the block`);
    metadata[key] = utf8.decode(value);
  }
  return metadata;
}

function withLocation(location: string | undefined): { location?: string } {
  return location === undefined ? {} : { location };
}

/** Whether a block holds records (Hudi's scanners treat AVRO, HFILE and PARQUET data blocks alike). */
export function isDataBlock(block: { readonly type: LogBlockType }): block is { readonly type: DataBlockType } {
  return block.type === 'AVRO_DATA_BLOCK' || block.type === 'HFILE_DATA_BLOCK' || block.type === 'PARQUET_DATA_BLOCK' || block.type === 'CDC_DATA_BLOCK';
}
