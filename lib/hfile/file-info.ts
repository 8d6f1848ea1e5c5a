/**
 * The file info block (`FILEINF2`): `PBUF` then a delimited `InfoProto`, a map of byte keys to byte values.
 * HBase's writer fills in `hfile.*` entries (last key, average key and value lengths, creation time) and the
 * MVCC markers; Hudi adds its own (`schema`, and for base files `minRecordKey`, `maxRecordKey`,
 * `bloomFilterTypeCode`). HBase keeps the map sorted by key bytes, so that is the order entries are written in.
 */

import { type Block, payloadCursor } from './block.js';
import { ByteWriter, compareBytes, readI32, readI64, utf8Bytes, utf8String } from './bytes.js';
import { HFileFormatError } from './errors.js';
import { decodeInfo, delimited, encodeInfo, readDelimited } from './protobuf.js';

export const PBUF_MAGIC = Uint8Array.from('PBUF', (c) => c.charCodeAt(0));

/** File info keys HBase's writer sets (HBase `HFileInfo`, `HStoreFile`). */
export const FileInfoKey = {
  LAST_KEY: 'hfile.LASTKEY',
  AVG_KEY_LEN: 'hfile.AVG_KEY_LEN',
  AVG_VALUE_LEN: 'hfile.AVG_VALUE_LEN',
  CREATE_TIME_TS: 'hfile.CREATE_TIME_TS',
  LEN_OF_BIGGEST_CELL: 'hfile.LEN_OF_BIGGEST_CELL',
  KEY_OF_BIGGEST_CELL: 'hfile.KEY_OF_BIGGEST_CELL',
  MAX_TAGS_LEN: 'hfile.MAX_TAGS_LEN',
  TAGS_COMPRESSED: 'hfile.TAGS_COMPRESSED',
  KEY_VALUE_VERSION: 'KEY_VALUE_VERSION',
  MAX_MEMSTORE_TS_KEY: 'MAX_MEMSTORE_TS_KEY',
} as const;

/** `KEY_VALUE_VERSION` 1: every cell ends with its MVCC version (a vlong). */
export const KEY_VALUE_VERSION_WITH_MVCC = 1;

/** File info as an ordered list of raw entries plus a by-name view (keys as UTF-8). */
export class FileInfo {
  private readonly byName: Map<string, Uint8Array>;

  constructor(readonly entries: ReadonlyArray<{ key: Uint8Array; value: Uint8Array }>) {
    this.byName = new Map(entries.map(({ key, value }) => [utf8String(key), value]));
  }

  get(name: string): Uint8Array | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** A UTF-8 value (Hudi's entries are strings). */
  getString(name: string): string | undefined {
    const value = this.byName.get(name);
    return value === undefined ? undefined : utf8String(value);
  }

  /** A 4-byte big-endian int value (`Bytes.toBytes(int)`). */
  getInt(name: string): number | undefined {
    const value = this.byName.get(name);
    if (value === undefined) return undefined;
    if (value.length !== 4) throw new HFileFormatError(`file info ${name} is ${value.length} bytes, not an int`);
    return readI32(value, 0);
  }

  /** An 8-byte big-endian long value (`Bytes.toBytes(long)`). */
  getLong(name: string): bigint | undefined {
    const value = this.byName.get(name);
    if (value === undefined) return undefined;
    if (value.length !== 8) throw new HFileFormatError(`file info ${name} is ${value.length} bytes, not a long`);
    return readI64(value, 0);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}

export function readFileInfo(block: Block): FileInfo {
  const cursor = payloadCursor(block);
  const magic = cursor.take(PBUF_MAGIC.length);
  if (compareBytes(magic, PBUF_MAGIC) !== 0) {
    throw new HFileFormatError('the file info block does not start with PBUF: a pre-protobuf (HBase 1 / HFile v2) file, which is not supported');
  }
  return new FileInfo(decodeInfo(readDelimited(cursor)));
}

/** A file info value from a name and a string, int (4 bytes) or long (8 bytes, given as bigint) value. */
export type FileInfoValue = string | Uint8Array | { int: number } | { long: bigint };

export function fileInfoValue(value: FileInfoValue): Uint8Array {
  if (typeof value === 'string') return utf8Bytes(value);
  if (value instanceof Uint8Array) return value;
  if ('int' in value) return new ByteWriter(4).i32(value.int).toBytes();
  return new ByteWriter(8).i64(value.long).toBytes();
}

/** The file info block payload for these entries, sorted by key bytes as HBase's `TreeMap` keeps them. */
export function serializeFileInfo(entries: ReadonlyArray<{ key: Uint8Array; value: Uint8Array }>): Uint8Array {
  const sorted = [...entries].sort((a, b) => compareBytes(a.key, b.key));
  for (let i = 1; i < sorted.length; i++) {
    if (compareBytes(sorted[i - 1]!.key, sorted[i]!.key) === 0) throw new RangeError(`file info key ${utf8String(sorted[i]!.key)} is given twice`);
  }
  return new ByteWriter(1024)
    .bytes(PBUF_MAGIC)
    .bytes(delimited(encodeInfo(sorted)))
    .toBytes();
}
