/**
 * The Thrift compact protocol, as Parquet encodes its footer (FileMetaData) and page headers. Generic: a struct is a
 * map from field id to a typed value, and every field read is written back, so a footer keeps the fields (and
 * Parquet versions) this code does not know when it is patched and re-encoded.
 * Spec: Apache Thrift, doc/specs/thrift-compact-protocol.md.
 */

export const THRIFT_BOOL = 1;
export const THRIFT_BYTE = 3;
export const THRIFT_I16 = 4;
export const THRIFT_I32 = 5;
export const THRIFT_I64 = 6;
export const THRIFT_DOUBLE = 7;
export const THRIFT_BINARY = 8;
export const THRIFT_LIST = 9;
export const THRIFT_SET = 10;
export const THRIFT_STRUCT = 12;

export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftStruct | ThriftList;

export class ThriftList {
  constructor(
    readonly elementType: number,
    readonly items: ThriftValue[],
    readonly containerType: number = THRIFT_LIST,
  ) {}
}

/**
 * A struct's fields in the order they were read or set (ids, types and values side by side: a footer has hundreds
 * of thousands of fields over 10,000 files, and an object per field was most of the time spent decoding them).
 */
export class ThriftStruct {
  readonly #ids: number[];
  readonly #types: number[];
  readonly #values: ThriftValue[];

  constructor(ids: number[] = [], types: number[] = [], values: ThriftValue[] = []) {
    this.#ids = ids;
    this.#types = types;
    this.#values = values;
  }

  has(id: number): boolean {
    return this.#ids.includes(id);
  }
  set(id: number, type: number, value: ThriftValue): void {
    const index = this.#ids.indexOf(id);
    if (index < 0) {
      this.#ids.push(id);
      this.#types.push(type);
      this.#values.push(value);
      return;
    }
    this.#types[index] = type;
    this.#values[index] = value;
  }
  delete(id: number): void {
    const index = this.#ids.indexOf(id);
    if (index < 0) return;
    this.#ids.splice(index, 1);
    this.#types.splice(index, 1);
    this.#values.splice(index, 1);
  }
  /** A field's value as read (an i64 is a number while it is a safe integer, else a bigint). */
  value(id: number): ThriftValue | undefined {
    const index = this.#ids.indexOf(id);
    return index < 0 ? undefined : this.#values[index];
  }
  /** The fields in id order, as they are written. */
  fields(): { id: number; type: number; value: ThriftValue }[] {
    // #ids, #types and #values grow together, one entry per field.
    return this.#ids
      .flatMap((id, index) => {
        const type = this.#types[index];
        const value = this.#values[index];
        return type === undefined || value === undefined ? [] : [{ id, type, value }];
      })
      .sort((a, b) => a.id - b.id);
  }
  int(id: number): number | undefined {
    const value = this.value(id);
    return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : undefined;
  }
  bigint(id: number): bigint | undefined {
    const value = this.value(id);
    return typeof value === 'bigint' ? value : typeof value === 'number' ? BigInt(value) : undefined;
  }
  bool(id: number): boolean | undefined {
    const value = this.value(id);
    return typeof value === 'boolean' ? value : undefined;
  }
  binary(id: number): Uint8Array | undefined {
    const value = this.value(id);
    return value instanceof Uint8Array ? value : undefined;
  }
  struct(id: number): ThriftStruct | undefined {
    const value = this.value(id);
    return value instanceof ThriftStruct ? value : undefined;
  }
  list(id: number): ThriftList | undefined {
    const value = this.value(id);
    return value instanceof ThriftList ? value : undefined;
  }
}

export function isStruct(value: ThriftValue): value is ThriftStruct {
  return value instanceof ThriftStruct;
}

export class CompactReader {
  private readonly bytes: Uint8Array;

  /** Binary values are views of `bytes` (as Buffer.slice gives), so `bytes` must not change while they are used. */
  constructor(
    bytes: Uint8Array,
    public position = 0,
  ) {
    // A plain view: a Buffer's subarray builds a Buffer object per binary value, several times slower.
    this.bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private byte(): number {
    const value = this.bytes[this.position++];
    if (value === undefined) throw new Error('truncated Thrift data');
    return value;
  }

  /** A varint as a number while it fits in 49 bits (every length, id and i32; nearly every i64), else exact. */
  private varint(): number | bigint {
    const bytes = this.bytes;
    let position = this.position;
    let result = 0;
    // Multiplying by a running power of two instead of `2 ** shift`, a quarter of the decoding time.
    for (let scale = 1; scale < 2 ** 49; scale *= 128) {
      const byte = bytes[position++];
      if (byte === undefined) throw new Error('truncated Thrift data');
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        this.position = position;
        return result;
      }
    }
    this.position = position;
    let big = BigInt(result);
    for (let shift = 49n; ; shift += 7n) {
      const byte = this.byte();
      big |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return big;
    }
  }

  private smallVarint(): number {
    const value = this.varint();
    return typeof value === 'number' ? value : Number(value);
  }

  /** Zigzag-decoded: a number when the magnitude is below 2^52, else a bigint. */
  private zigzag(): number | bigint {
    const raw = this.varint();
    if (typeof raw === 'number') {
      // raw < 2^49 here; (raw % 2) and a halving stay exact.
      return raw % 2 === 1 ? -(raw - 1) / 2 - 1 : raw / 2;
    }
    return raw & 1n ? -(raw >> 1n) - 1n : raw >> 1n;
  }

  /**
   * The struct at the current position. Fields whose ids are in `skipped` are passed over without being decoded
   * (they are absent from the result), and their values' byte spans [start, end) reported to `onSkipped`.
   */
  readStruct(skipped?: ReadonlySet<number>, onSkipped?: (id: number, type: number, start: number, end: number) => void): ThriftStruct {
    const ids: number[] = [];
    const types: number[] = [];
    const values: ThriftValue[] = [];
    let lastId = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return new ThriftStruct(ids, types, values);
      const type = header & 0x0f;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : lastId + delta;
      lastId = id;
      if (skipped?.has(id) === true) {
        const start = this.position;
        if (type !== 1 && type !== 2) this.skipValue(type);
        onSkipped?.(id, type, start, this.position);
        continue;
      }
      // A repeated id keeps the last value, as a map would.
      const seen = ids.indexOf(id);
      const index = seen < 0 ? ids.length : seen;
      ids[index] = id;
      if (type === 1 || type === 2) {
        types[index] = THRIFT_BOOL;
        values[index] = type === 1;
      } else {
        types[index] = type;
        values[index] = this.value(type);
      }
    }
  }

  /** Past a value of `type` (as a list element, or a field's value other than a bool's), decoding nothing. */
  skipValue(type: number): void {
    switch (type) {
      case 1:
      case 2:
      case THRIFT_BYTE:
        this.byte();
        return;
      case THRIFT_I16:
      case THRIFT_I32:
      case THRIFT_I64:
        while ((this.byte() & 0x80) !== 0);
        return;
      case THRIFT_DOUBLE:
        if (this.position + 8 > this.bytes.length) throw new Error('truncated Thrift double');
        this.position += 8;
        return;
      case THRIFT_BINARY: {
        const length = this.smallVarint();
        if (this.position + length > this.bytes.length) throw new Error('truncated Thrift binary');
        this.position += length;
        return;
      }
      case THRIFT_LIST:
      case THRIFT_SET: {
        const header = this.byte();
        const elementType = header & 0x0f;
        const size = header >> 4 === 15 ? this.smallVarint() : header >> 4;
        for (let index = 0; index < size; index++) this.skipValue(elementType);
        return;
      }
      case THRIFT_STRUCT:
        for (;;) {
          const header = this.byte();
          if (header === 0) return;
          if (header >> 4 === 0) this.zigzag();
          const fieldType = header & 0x0f;
          if (fieldType !== 1 && fieldType !== 2) this.skipValue(fieldType);
        }
      default:
        throw new Error(`unsupported Thrift type ${type}`);
    }
  }

  /** A value of `type` at the current position (a list element's, or a field's other than a bool's). */
  readValue(type: number): ThriftValue {
    return this.value(type);
  }

  private value(type: number): ThriftValue {
    switch (type) {
      case 1:
      case 2:
        return this.byte() === 1;
      case THRIFT_BYTE: {
        const byte = this.byte();
        return byte > 127 ? byte - 256 : byte;
      }
      case THRIFT_I16:
      case THRIFT_I32:
        return Number(this.zigzag());
      case THRIFT_I64:
        // A number while exact (a BigInt per offset and size was a tenth of a footer's decoding), else a bigint.
        return this.zigzag();
      case THRIFT_DOUBLE: {
        if (this.position + 8 > this.bytes.length) throw new Error('truncated Thrift double');
        const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.position, 8);
        this.position += 8;
        return view.getFloat64(0, true);
      }
      case THRIFT_BINARY: {
        const length = this.smallVarint();
        if (this.position + length > this.bytes.length) throw new Error('truncated Thrift binary');
        const value = this.bytes.subarray(this.position, this.position + length);
        this.position += length;
        return value;
      }
      case THRIFT_LIST:
      case THRIFT_SET: {
        const header = this.byte();
        const elementType = header & 0x0f;
        const size = header >> 4 === 15 ? this.smallVarint() : header >> 4;
        const items: ThriftValue[] = [];
        for (let index = 0; index < size; index++) items.push(this.value(elementType));
        return new ThriftList(elementType, items, type);
      }
      case THRIFT_STRUCT:
        return this.readStruct();
      default:
        throw new Error(`unsupported Thrift type ${type}`);
    }
  }
}

export class CompactWriter {
  private out = Buffer.allocUnsafe(256);
  private length = 0;

  bytes(): Buffer {
    return Buffer.from(this.out.subarray(0, this.length));
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.length + extra));
    this.out.copy(grown, 0, 0, this.length);
    this.out = grown;
  }

  private push(byte: number): void {
    this.reserve(1);
    this.out[this.length++] = byte;
  }

  private varint(value: number | bigint): void {
    this.reserve(10);
    if (typeof value === 'number' && value <= Number.MAX_SAFE_INTEGER) {
      let rest = value;
      while (rest >= 0x80) {
        this.out[this.length++] = (rest % 0x80) | 0x80;
        rest = Math.floor(rest / 0x80);
      }
      this.out[this.length++] = rest;
      return;
    }
    let rest = BigInt(value);
    while (rest >= 0x80n) {
      this.out[this.length++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.out[this.length++] = Number(rest);
  }

  private zigzag(value: number | bigint): void {
    if (typeof value === 'number' && Math.abs(value) < 2 ** 51) {
      this.varint(value >= 0 ? value * 2 : -value * 2 - 1);
      return;
    }
    const big = BigInt(value);
    this.varint(big >= 0n ? big << 1n : (-big << 1n) - 1n);
  }

  struct(struct: ThriftStruct): this {
    let lastId = 0;
    for (const field of struct.fields()) {
      const { id } = field;
      const isBool = field.type === THRIFT_BOOL;
      const type = isBool ? (field.value === true ? 1 : 2) : field.type;
      const delta = id - lastId;
      if (delta > 0 && delta <= 15) this.push((delta << 4) | type);
      else {
        this.push(type);
        this.zigzag(id);
      }
      lastId = id;
      if (!isBool) this.value(field.type, field.value);
    }
    this.push(0);
    return this;
  }

  private value(type: number, value: ThriftValue): void {
    switch (type) {
      case THRIFT_BOOL:
        this.push(value === true ? 1 : 2);
        return;
      case THRIFT_BYTE:
        this.push(Number(value) & 0xff);
        return;
      case THRIFT_I16:
      case THRIFT_I32:
      case THRIFT_I64:
        this.zigzag(value as number | bigint);
        return;
      case THRIFT_DOUBLE: {
        this.reserve(8);
        this.out.writeDoubleLE(value as number, this.length);
        this.length += 8;
        return;
      }
      case THRIFT_BINARY: {
        const bytes = value as Uint8Array;
        this.varint(bytes.length);
        this.reserve(bytes.length);
        this.out.set(bytes, this.length);
        this.length += bytes.length;
        return;
      }
      case THRIFT_LIST:
      case THRIFT_SET: {
        const list = value as ThriftList;
        if (list.items.length < 15) this.push((list.items.length << 4) | list.elementType);
        else {
          this.push(0xf0 | list.elementType);
          this.varint(list.items.length);
        }
        for (const item of list.items) this.value(list.elementType === 2 ? THRIFT_BOOL : list.elementType, item);
        return;
      }
      case THRIFT_STRUCT:
        this.struct(value as ThriftStruct);
        return;
      default:
        throw new Error(`unsupported Thrift type ${type}`);
    }
  }
}
