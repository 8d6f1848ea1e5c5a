/**
 * The two protobuf (proto2) messages of HFile v3: the trailer (`TrailerProto`, HBase's `FileTrailerProto`) and
 * the file info (`InfoProto` of `BytesBytesPair`s). Both are written length-delimited (`writeDelimitedTo`): a
 * varint byte count, then the message. Only the wire types these messages use are encoded; unknown fields are
 * skipped on read, as protobuf readers do.
 */
import { ByteCursor, ByteWriter } from './bytes.js';
import { HFileFormatError } from './errors.js';

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

/** The fields of `TrailerProto`, by their proto names. Absent optional fields are undefined. */
export interface TrailerFields {
  fileInfoOffset?: number;
  loadOnOpenDataOffset?: number;
  uncompressedDataIndexSize?: number;
  totalUncompressedBytes?: number;
  dataIndexCount?: number;
  metaIndexCount?: number;
  entryCount?: number;
  numDataIndexLevels?: number;
  firstDataBlockOffset?: number;
  lastDataBlockOffset?: number;
  comparatorClassName?: string;
  compressionCodec?: number;
  encryptionKey?: Uint8Array;
}

const TRAILER_NUMBER_FIELDS: ReadonlyArray<readonly [number, Exclude<keyof TrailerFields, 'comparatorClassName' | 'encryptionKey'>]> = [
  [1, 'fileInfoOffset'],
  [2, 'loadOnOpenDataOffset'],
  [3, 'uncompressedDataIndexSize'],
  [4, 'totalUncompressedBytes'],
  [5, 'dataIndexCount'],
  [6, 'metaIndexCount'],
  [7, 'entryCount'],
  [8, 'numDataIndexLevels'],
  [9, 'firstDataBlockOffset'],
  [10, 'lastDataBlockOffset'],
  [12, 'compressionCodec'],
];

interface Field {
  number: number;
  wireType: number;
  varint?: bigint;
  bytes?: Uint8Array;
}

function javaLong(value: bigint, name: string): number {
  const signed = BigInt.asIntN(64, value);
  if (signed < BigInt(Number.MIN_SAFE_INTEGER) || signed > BigInt(Number.MAX_SAFE_INTEGER))
    throw new HFileFormatError(`trailer field ${name}: ${signed} is out of range`);
  return Number(signed);
}

function readFields(cursor: ByteCursor): Field[] {
  const fields: Field[] = [];
  while (cursor.remaining > 0) {
    const tag = cursor.varintNumber();
    const number = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (wireType === VARINT) fields.push({ number, wireType, varint: cursor.varint() });
    else if (wireType === LENGTH_DELIMITED) fields.push({ number, wireType, bytes: cursor.take(cursor.varintNumber()) });
    else if (wireType === FIXED64) cursor.take(8);
    else if (wireType === FIXED32) cursor.take(4);
    else throw new HFileFormatError(`${cursor.what}: unsupported protobuf wire type ${wireType} (field ${number})`);
  }
  return fields;
}

/** Reads a varint-length-prefixed message at the cursor and returns a cursor over its body. */
export function readDelimited(cursor: ByteCursor): ByteCursor {
  const length = cursor.varintNumber();
  cursor.need(length);
  const body = new ByteCursor(cursor.bytes, cursor.offset, cursor.offset + length, cursor.what);
  cursor.offset += length;
  return body;
}

export function decodeTrailer(body: ByteCursor): TrailerFields {
  const trailer: TrailerFields = {};
  for (const field of readFields(body)) {
    const named = TRAILER_NUMBER_FIELDS.find(([number]) => number === field.number);
    // uint64 fields hold Java longs: HBase stores -1 for "no data block" in an empty file.
    if (named !== undefined && field.varint !== undefined) trailer[named[1]] = javaLong(field.varint, named[1]);
    else if (field.number === 11 && field.bytes !== undefined) trailer.comparatorClassName = new TextDecoder().decode(field.bytes);
    else if (field.number === 13 && field.bytes !== undefined) trailer.encryptionKey = field.bytes.slice();
  }
  return trailer;
}

export function encodeTrailer(trailer: TrailerFields): Uint8Array {
  const out = new ByteWriter(256);
  // Fields in number order, as protobuf's generated writers emit them.
  const emitNumber = (number: number, value: number | undefined): void => {
    if (value !== undefined) out.varint(number * 8 + VARINT).varint(value);
  };
  for (const [number, name] of TRAILER_NUMBER_FIELDS) if (number <= 10) emitNumber(number, trailer[name]);
  if (trailer.comparatorClassName !== undefined) writeString(out, 11, trailer.comparatorClassName);
  emitNumber(12, trailer.compressionCodec);
  if (trailer.encryptionKey !== undefined)
    out
      .varint(13 * 8 + LENGTH_DELIMITED)
      .varint(trailer.encryptionKey.length)
      .bytes(trailer.encryptionKey);
  return out.toBytes();
}

function writeString(out: ByteWriter, number: number, text: string): void {
  const bytes = new TextEncoder().encode(text);
  out
    .varint(number * 8 + LENGTH_DELIMITED)
    .varint(bytes.length)
    .bytes(bytes);
}

/** One file-info entry: raw key and value bytes. */
export interface InfoEntry {
  key: Uint8Array;
  value: Uint8Array;
}

export function decodeInfo(body: ByteCursor): InfoEntry[] {
  const entries: InfoEntry[] = [];
  for (const field of readFields(body)) {
    if (field.number !== 1 || field.bytes === undefined) continue;
    let key: Uint8Array | undefined;
    let value: Uint8Array | undefined;
    for (const pair of readFields(new ByteCursor(field.bytes, 0, field.bytes.length, body.what))) {
      if (pair.number === 1 && pair.bytes !== undefined) key = pair.bytes;
      else if (pair.number === 2 && pair.bytes !== undefined) value = pair.bytes;
    }
    if (key === undefined || value === undefined) throw new HFileFormatError(`${body.what}: a file info entry lacks its key or value`);
    entries.push({ key: key.slice(), value: value.slice() });
  }
  return entries;
}

export function encodeInfo(entries: readonly InfoEntry[]): Uint8Array {
  const out = new ByteWriter(1024);
  for (const { key, value } of entries) {
    const pair = new ByteWriter(key.length + value.length + 16);
    pair
      .varint(1 * 8 + LENGTH_DELIMITED)
      .varint(key.length)
      .bytes(key);
    pair
      .varint(2 * 8 + LENGTH_DELIMITED)
      .varint(value.length)
      .bytes(value);
    const pairBytes = pair.toBytes();
    out
      .varint(1 * 8 + LENGTH_DELIMITED)
      .varint(pairBytes.length)
      .bytes(pairBytes);
  }
  return out.toBytes();
}

/** `message.writeDelimitedTo`: the varint length, then the message. */
export function delimited(message: Uint8Array): Uint8Array {
  return new ByteWriter(message.length + 10).varint(message.length).bytes(message).toBytes();
}
