/**
 * HBase KeyValue cells, the entries of HFile data blocks.
 *
 * A cell on disk:  keyLength (i32) | valueLength (i32) | key | value | [tagsLength (u16) | tags] | [mvcc (vlong)]
 * A key:           rowLength (u16) | row | familyLength (u8) | family | qualifier | timestamp (i64) | type (u8)
 *
 * Hudi writes `new KeyValue(recordKey, null, null, avroBytes)`: the record key is the row, family and qualifier
 * are empty, the timestamp is `HConstants.LATEST_TIMESTAMP` (Long.MAX_VALUE) and the type is Put. Hudi's own
 * reader compares keys by row only; HBase's comparator (`HoodieHBaseKVComparator` is `CellComparatorImpl`)
 * orders by row, family, qualifier, then timestamp and type descending, the same order for such keys.
 */
import { ByteCursor, ByteWriter, compareBytes, readU16, utf8String, writeI32 } from './bytes.js';
import { HFileFormatError } from './errors.js';

/** HBase `KeyValue.Type` codes. */
export const KeyType = { Minimum: 0, Put: 4, Delete: 8, DeleteFamilyVersion: 10, DeleteColumn: 12, DeleteFamily: 14, Maximum: 255 } as const;
/** HBase `HConstants.LATEST_TIMESTAMP`. */
export const LATEST_TIMESTAMP = 0x7fffffffffffffffn;

/** Fixed bytes of a key besides row, family and qualifier: row length, family length, timestamp, type. */
export const KEY_INFRASTRUCTURE_SIZE = 2 + 1 + 8 + 1;
/** The largest row a key can hold (its length is a Java short). */
export const MAX_ROW_LENGTH = 0x7fff;

/** The parts of a KeyValue key. */
export interface CellKey {
  row: Uint8Array;
  family: Uint8Array;
  qualifier: Uint8Array;
  timestamp: bigint;
  type: number;
}

/** One cell of a data block. Byte fields are views into the decompressed block: copy them to keep them past the reader. */
export interface HFileCell extends CellKey {
  /** The row as UTF-8: Hudi's record key. */
  key: string;
  value: Uint8Array;
}

export function decodeKey(key: Uint8Array, what = 'key'): CellKey {
  if (key.length < KEY_INFRASTRUCTURE_SIZE) throw new HFileFormatError(`${what} is ${key.length} bytes, shorter than a KeyValue key can be`);
  const cursor = new ByteCursor(key, 0, key.length, what);
  const rowLength = cursor.u16();
  const row = cursor.take(rowLength);
  const familyLength = cursor.u8();
  const family = cursor.take(familyLength);
  const qualifierLength = key.length - KEY_INFRASTRUCTURE_SIZE - rowLength - familyLength;
  if (qualifierLength < 0) throw new HFileFormatError(`${what}: row and family lengths exceed the key length`);
  const qualifier = cursor.take(qualifierLength);
  const timestamp = cursor.i64();
  const type = cursor.u8();
  return { row, family, qualifier, timestamp, type };
}

/**
 * A data-index key: a KeyValue key as HBase's writer (Hudi 0.x, 1.0) puts in the index, or the row alone with its
 * u16 length as Hudi 1.1's native HFile writer does (writer/IndexBlock: key length + 2, then the short length and
 * the key). The two cannot be confused: a KeyValue key is longer than its row by at least 10 bytes. A row-only key
 * stands for the row's first cell (latest timestamp, Put), which is the only cell Hudi writes for a row.
 */
export function decodeIndexKey(key: Uint8Array, what = 'index key'): CellKey {
  if (key.length >= 2) {
    const rowLength = readU16(key, 0);
    if (key.length === 2 + rowLength) return hudiCellKey(key.subarray(2));
  }
  return decodeKey(key, what);
}

export function encodeKey(key: CellKey): Uint8Array {
  const out = new ByteWriter(KEY_INFRASTRUCTURE_SIZE + key.row.length + key.family.length + key.qualifier.length);
  return out.u16(key.row.length).bytes(key.row).u8(key.family.length).bytes(key.family).bytes(key.qualifier).i64(key.timestamp).u8(key.type).toBytes();
}

/** The key Hudi writes for a record key: the row alone, latest timestamp, Put. */
export function hudiCellKey(row: Uint8Array): CellKey {
  if (row.length > MAX_ROW_LENGTH) throw new RangeError(`a row of ${row.length} bytes exceeds HBase's ${MAX_ROW_LENGTH}`);
  return { row, family: new Uint8Array(0), qualifier: new Uint8Array(0), timestamp: LATEST_TIMESTAMP, type: KeyType.Put };
}

/** encodeKey(hudiCellKey(row)), written directly (a string row as its UTF-8): the writer encodes one per record. */
export function encodeHudiCellKey(row: Uint8Array | string): Uint8Array {
  const rowLength = typeof row === 'string' ? Buffer.byteLength(row, 'utf8') : row.length;
  if (rowLength > MAX_ROW_LENGTH) throw new RangeError(`a row of ${rowLength} bytes exceeds HBase's ${MAX_ROW_LENGTH}`);
  const key = new Uint8Array(KEY_INFRASTRUCTURE_SIZE + rowLength);
  key[0] = rowLength >>> 8;
  key[1] = rowLength & 0xff;
  if (typeof row !== 'string') key.set(row, 2);
  // As many bytes as characters: all ASCII, copied as they are.
  else if (rowLength === row.length) for (let i = 0; i < rowLength; i++) key[2 + i] = row.charCodeAt(i);
  else if (UTF8.encodeInto(row, key.subarray(2, 2 + rowLength)).written !== rowLength)
    throw new RangeError(`the row ${JSON.stringify(row)} did not encode to ${rowLength} bytes`);
  // Family length 0, no family or qualifier; the timestamp Long.MAX_VALUE big-endian; the type Put.
  let at = 2 + rowLength + 1;
  key[at++] = 0x7f;
  for (let i = 0; i < 7; i++) key[at++] = 0xff;
  key[at] = KeyType.Put;
  return key;
}

/** The row of a key encodeHudiCellKey wrote (a view). */
export function hudiCellKeyRow(key: Uint8Array): Uint8Array {
  return key.subarray(2, key.length - (KEY_INFRASTRUCTURE_SIZE - 2));
}

/**
 * compareBytes of the rows of two keys encodeHudiCellKey wrote, read in place: the writer compares every cell's
 * row with the one before, and a view per row costs more than the comparison.
 */
export function compareHudiCellKeyRows(a: Uint8Array, b: Uint8Array): number {
  const aLength = a.length - KEY_INFRASTRUCTURE_SIZE;
  const bLength = b.length - KEY_INFRASTRUCTURE_SIZE;
  const length = Math.min(aLength, bLength);
  for (let i = 2; i < length + 2; i++) {
    const diff = (a[i] as number) - (b[i] as number); // 2 <= i < 2 + both row lengths
    if (diff !== 0) return diff;
  }
  return aLength - bLength;
}

const UTF8 = new TextEncoder();

/** HBase `CellComparatorImpl` order: row, family, qualifier ascending; timestamp and type descending. */
export function compareCellKeys(a: CellKey, b: CellKey): number {
  return (
    compareBytes(a.row, b.row) ||
    compareBytes(a.family, b.family) ||
    compareBytes(a.qualifier, b.qualifier) ||
    (a.timestamp === b.timestamp ? 0 : a.timestamp > b.timestamp ? -1 : 1) ||
    b.type - a.type
  );
}

/** How a data block's cells end, from the file info (`KEY_VALUE_VERSION`, `hfile.MAX_TAGS_LEN`). */
export interface CellLayout {
  includesMvcc: boolean;
  includesTags: boolean;
}

/** Reads the cell at the cursor and advances past it. */
export function readCell(cursor: ByteCursor, layout: CellLayout): HFileCell {
  const keyLength = cursor.i32();
  const valueLength = cursor.i32();
  if (keyLength < KEY_INFRASTRUCTURE_SIZE || valueLength < 0) {
    throw new HFileFormatError(`${cursor.what}: a cell at offset ${cursor.offset - 8} has key length ${keyLength} and value length ${valueLength}`);
  }
  const parts = decodeKey(cursor.take(keyLength), `${cursor.what}: cell key`);
  const value = cursor.take(valueLength);
  if (layout.includesTags) cursor.take(cursor.u16());
  if (layout.includesMvcc) cursor.hadoopVLong();
  return { ...parts, key: utf8String(parts.row), value };
}

/**
 * Writes a cell as Hudi's HBase writer does (no tags, a zero MVCC version: a vlong 0 is the byte 0) into `out` at
 * `offset`, which has room for cellSize bytes; returns the offset after the cell.
 */
export function writeCellAt(out: Uint8Array, offset: number, key: Uint8Array, value: Uint8Array | readonly Uint8Array[]): number {
  writeI32(out, offset, key.length);
  writeI32(out, offset + 4, cellValueLength(value));
  out.set(key, offset + 8);
  let at = offset + 8 + key.length;
  if (value instanceof Uint8Array) {
    out.set(value, at);
    at += value.length;
  } else {
    for (const part of value) {
      out.set(part, at);
      at += part.length;
    }
  }
  out[at] = 0;
  return at + 1;
}

/** The length of a cell's value given whole or as parts. */
export function cellValueLength(value: Uint8Array | readonly Uint8Array[]): number {
  if (value instanceof Uint8Array) return value.length;
  let length = 0;
  for (const part of value) length += part.length;
  return length;
}

/** The serialized size of a cell (writeCellAt) with `value`, or a value of that many bytes. */
export function cellSize(key: Uint8Array, value: Uint8Array | number): number {
  return 8 + key.length + (typeof value === 'number' ? value : value.length) + 1;
}
