/**
 * Big-endian fields as Java's DataOutputStream writes them (int = 4 bytes, long = 8 bytes, two's complement).
 */

import { concatBytes } from '../util/bytes.js';

/** Reads fields from a byte range; `take` past the end returns undefined so callers decide what a short read means. */
export class ByteReader {
  private readonly view: DataView;
  position: number;

  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    /** Exclusive end of the readable range. */
    readonly end = bytes.length,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.position = start;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  int32(): number | undefined {
    if (this.remaining < 4) return undefined;
    const value = this.view.getInt32(this.position);
    this.position += 4;
    return value;
  }

  int64(): bigint | undefined {
    if (this.remaining < 8) return undefined;
    const value = this.view.getBigInt64(this.position);
    this.position += 8;
    return value;
  }

  take(length: number): Uint8Array | undefined {
    if (length < 0 || length > this.remaining) return undefined;
    const slice = this.bytes.subarray(this.position, this.position + length);
    this.position += length;
    return slice;
  }
}

/** Collects fields, then joins them into one fresh array (not a view of Node's shared Buffer pool). */
export class ByteWriter {
  private readonly fields: Uint8Array[] = [];
  private size = 0;

  /** The fields written so far, in order (views of what was given, not copies). */
  get parts(): readonly Uint8Array[] {
    return this.fields;
  }

  get length(): number {
    return this.size;
  }

  int32(value: number): this {
    const part = new Uint8Array(4);
    new DataView(part.buffer).setInt32(0, value);
    return this.bytes(part);
  }

  int64(value: number | bigint): this {
    const part = new Uint8Array(8);
    new DataView(part.buffer).setBigInt64(0, BigInt(value));
    return this.bytes(part);
  }

  bytes(part: Uint8Array): this {
    this.fields.push(part);
    this.size += part.length;
    return this;
  }

  toBytes(): Uint8Array {
    return concatBytes(this.fields);
  }
}

/** First index of `needle` in `haystack` at or after `from`, or -1. */
export function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  const last = haystack.length - needle.length;
  for (let i = Math.max(0, from); i <= last; i++) {
    if (haystack[i] !== first) continue;
    let match = true;
    for (let j = 1; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) {
        match = false;
        break;
      }
    }
    if (match) return i;
  }
  return -1;
}

export const utf8 = {
  encode: (text: string): Uint8Array => new TextEncoder().encode(text),
  decode: (bytes: Uint8Array): string => new TextDecoder('utf-8').decode(bytes),
};
