/**
 * Byte-level helpers for HFile: big-endian fixed-width numbers, Hadoop's `WritableUtils` variable-length
 * integers (block index keys) and protobuf varints (trailer, file info, delimited messages), plus a growable
 * output buffer. Everything works on plain `Uint8Array`s.
 */
import { HFileFormatError } from './errors.js';

/** A read position in a byte array; readers advance `offset`. */
export class ByteCursor {
  offset: number;

  constructor(
    readonly bytes: Uint8Array,
    offset = 0,
    /** Reads past this fail (the end of the structure being read, not necessarily of `bytes`). */
    readonly end = bytes.length,
    /** What is being read, for error messages. */
    readonly what = 'HFile',
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  need(count: number): void {
    if (count < 0 || this.offset + count > this.end) {
      throw new HFileFormatError(`${this.what} ends early: ${count} bytes needed at offset ${this.offset}, ${Math.max(0, this.end - this.offset)} left`);
    }
  }

  u8(): number {
    this.need(1);
    return byteAt(this.bytes, this.offset++, this.what);
  }

  i8(): number {
    const value = this.u8();
    return value > 127 ? value - 256 : value;
  }

  u16(): number {
    this.need(2);
    const value = readU16(this.bytes, this.offset);
    this.offset += 2;
    return value;
  }

  i32(): number {
    this.need(4);
    const value = readI32(this.bytes, this.offset);
    this.offset += 4;
    return value;
  }

  i64(): bigint {
    this.need(8);
    const value = readI64(this.bytes, this.offset);
    this.offset += 8;
    return value;
  }

  take(count: number): Uint8Array {
    this.need(count);
    const slice = this.bytes.subarray(this.offset, this.offset + count);
    this.offset += count;
    return slice;
  }

  /** Hadoop `WritableUtils.readVLong` (also `readVInt`). */
  hadoopVLong(): bigint {
    const first = this.i8();
    if (first >= -112) return BigInt(first);
    const negative = first < -120;
    const size = negative ? -(first + 120) : -(first + 112);
    let value = 0n;
    for (let i = 0; i < size; i++) value = (value << 8n) | BigInt(this.u8());
    return negative ? ~value : value;
  }

  /** Hadoop `WritableUtils.readVInt`: a vlong that must fit a Java int. */
  hadoopVInt(): number {
    const value = this.hadoopVLong();
    if (value < -2147483648n || value > 2147483647n) throw new HFileFormatError(`${this.what}: variable-length int ${value} does not fit 32 bits`);
    return Number(value);
  }

  /** A protobuf base-128 varint (unsigned, up to 64 bits). */
  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = this.u8();
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
    throw new HFileFormatError(`${this.what}: malformed varint at offset ${this.offset}`);
  }

  /** A varint that must be a non-negative safe integer (lengths, counts, offsets). */
  varintNumber(): number {
    return toSafeNumber(this.varint(), this.what);
  }
}

export function toSafeNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new HFileFormatError(`${what}: value ${value} is out of range`);
  return Number(value);
}

/** The byte at `offset`, or an HFileFormatError naming `what` when the bytes end before it. */
export function byteAt(bytes: Uint8Array, offset: number, what: string): number {
  const byte = bytes[offset];
  if (byte === undefined) throw new HFileFormatError(`${what} ends early: no byte at offset ${offset} of ${bytes.length}`);
  return byte;
}

// The multi-byte reads below run after their callers' range checks; a byte past the end reads as 0, as the bitwise
// operators have always taken it.
export function readU16(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset] ?? 0) << 8) | (bytes[offset + 1] ?? 0);
}

export function readI32(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset] ?? 0) << 24) | ((bytes[offset + 1] ?? 0) << 16) | ((bytes[offset + 2] ?? 0) << 8) | (bytes[offset + 3] ?? 0);
}

export function readI64(bytes: Uint8Array, offset: number): bigint {
  const high = BigInt(readI32(bytes, offset));
  const low = BigInt(readI32(bytes, offset + 4) >>> 0);
  return (high << 32n) | low;
}

export function writeI32(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = (value >>> 24) & 0xff;
  bytes[offset + 1] = (value >>> 16) & 0xff;
  bytes[offset + 2] = (value >>> 8) & 0xff;
  bytes[offset + 3] = value & 0xff;
}

/** Unsigned lexicographic order of two byte ranges (HBase `Bytes.compareTo`). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0); // i < both lengths
    if (diff !== 0) return diff;
  }
  return a.length - b.length;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && compareBytes(a, b) === 0;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

export function utf8Bytes(text: string): Uint8Array {
  return utf8.encode(text);
}

export function utf8String(bytes: Uint8Array): string {
  return utf8Decoder.decode(bytes);
}

/** A growable big-endian output buffer. */
export class ByteWriter {
  private buffer: Uint8Array;
  length = 0;

  constructor(initialCapacity = 1024) {
    this.buffer = new Uint8Array(Math.max(16, initialCapacity));
  }

  private reserve(count: number): void {
    if (this.length + count <= this.buffer.length) return;
    let capacity = this.buffer.length * 2;
    while (capacity < this.length + count) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  u8(value: number): this {
    this.reserve(1);
    this.buffer[this.length++] = value & 0xff;
    return this;
  }

  u16(value: number): this {
    this.reserve(2);
    this.buffer[this.length++] = (value >>> 8) & 0xff;
    this.buffer[this.length++] = value & 0xff;
    return this;
  }

  i32(value: number): this {
    this.reserve(4);
    writeI32(this.buffer, this.length, value);
    this.length += 4;
    return this;
  }

  i64(value: bigint | number): this {
    const big = BigInt.asUintN(64, BigInt(value));
    this.i32(Number(big >> 32n) | 0);
    return this.i32(Number(big & 0xffffffffn) | 0);
  }

  bytes(data: Uint8Array): this {
    this.reserve(data.length);
    this.buffer.set(data, this.length);
    this.length += data.length;
    return this;
  }

  /** Hadoop `WritableUtils.writeVLong` (also `writeVInt`). */
  hadoopVLong(value: bigint | number): this {
    let v = BigInt(value);
    if (v >= -112n && v <= 127n) return this.u8(Number(v));
    let lengthMarker = -112;
    if (v < 0n) {
      v = ~v;
      lengthMarker = -120;
    }
    let size = 0;
    for (let rest = v; rest !== 0n; rest >>= 8n) size++;
    this.u8(lengthMarker - size);
    for (let i = size - 1; i >= 0; i--) this.u8(Number((v >> BigInt(i * 8)) & 0xffn));
    return this;
  }

  /** A protobuf base-128 varint of a non-negative value. */
  varint(value: bigint | number): this {
    let v = BigInt(value);
    if (v < 0n) v = BigInt.asUintN(64, v);
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) byte |= 0x80;
      this.u8(byte);
    } while (v !== 0n);
    return this;
  }

  /** The bytes written so far (a copy, so the writer can be reused). */
  toBytes(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }

  /** The bytes written so far without a copy: a view that later writes may change (or leave behind when growing). */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}
