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

export class ThriftStruct {
  readonly fields = new Map<number, { type: number; value: ThriftValue }>();

  has(id: number): boolean {
    return this.fields.has(id);
  }
  set(id: number, type: number, value: ThriftValue): void {
    this.fields.set(id, { type, value });
  }
  delete(id: number): void {
    this.fields.delete(id);
  }
  int(id: number): number | undefined {
    const value = this.fields.get(id)?.value;
    return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : undefined;
  }
  bigint(id: number): bigint | undefined {
    const value = this.fields.get(id)?.value;
    return typeof value === 'bigint' ? value : typeof value === 'number' ? BigInt(value) : undefined;
  }
  binary(id: number): Uint8Array | undefined {
    const value = this.fields.get(id)?.value;
    return value instanceof Uint8Array ? value : undefined;
  }
  struct(id: number): ThriftStruct | undefined {
    const value = this.fields.get(id)?.value;
    return value instanceof ThriftStruct ? value : undefined;
  }
  list(id: number): ThriftList | undefined {
    const value = this.fields.get(id)?.value;
    return value instanceof ThriftList ? value : undefined;
  }
}

export function isStruct(value: ThriftValue): value is ThriftStruct {
  return value instanceof ThriftStruct;
}

export class CompactReader {
  constructor(
    private readonly bytes: Uint8Array,
    public position = 0,
  ) {}

  private byte(): number {
    const value = this.bytes[this.position++];
    if (value === undefined) throw new Error('truncated Thrift data');
    return value;
  }

  private varint(): bigint {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = this.byte();
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  }

  private zigzag(): bigint {
    const raw = this.varint();
    return raw & 1n ? -(raw >> 1n) - 1n : raw >> 1n;
  }

  readStruct(): ThriftStruct {
    const struct = new ThriftStruct();
    let lastId = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return struct;
      const type = header & 0x0f;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : lastId + delta;
      lastId = id;
      if (type === 1 || type === 2) struct.set(id, THRIFT_BOOL, type === 1);
      else struct.set(id, type, this.value(type));
    }
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
        return this.zigzag();
      case THRIFT_DOUBLE: {
        const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.position, 8);
        this.position += 8;
        return view.getFloat64(0, true);
      }
      case THRIFT_BINARY: {
        const length = Number(this.varint());
        if (this.position + length > this.bytes.length) throw new Error('truncated Thrift binary');
        const value = this.bytes.slice(this.position, this.position + length);
        this.position += length;
        return value;
      }
      case THRIFT_LIST:
      case THRIFT_SET: {
        const header = this.byte();
        const elementType = header & 0x0f;
        const size = header >> 4 === 15 ? Number(this.varint()) : header >> 4;
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
  private readonly out: number[] = [];

  bytes(): Buffer {
    return Buffer.from(this.out);
  }

  private varint(value: bigint): void {
    let rest = value;
    while (rest >= 0x80n) {
      this.out.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.out.push(Number(rest));
  }

  private zigzag(value: bigint): void {
    this.varint(value >= 0n ? value << 1n : (-value << 1n) - 1n);
  }

  struct(struct: ThriftStruct): this {
    let lastId = 0;
    for (const [id, field] of [...struct.fields].sort((a, b) => a[0] - b[0])) {
      const isBool = field.type === THRIFT_BOOL;
      const type = isBool ? (field.value === true ? 1 : 2) : field.type;
      const delta = id - lastId;
      if (delta > 0 && delta <= 15) this.out.push((delta << 4) | type);
      else {
        this.out.push(type);
        this.zigzag(BigInt(id));
      }
      lastId = id;
      if (!isBool) this.value(field.type, field.value);
    }
    this.out.push(0);
    return this;
  }

  private value(type: number, value: ThriftValue): void {
    switch (type) {
      case THRIFT_BOOL:
        this.out.push(value === true ? 1 : 2);
        return;
      case THRIFT_BYTE:
        this.out.push(Number(value) & 0xff);
        return;
      case THRIFT_I16:
      case THRIFT_I32:
      case THRIFT_I64:
        this.zigzag(BigInt(value as number | bigint));
        return;
      case THRIFT_DOUBLE: {
        const bytes = Buffer.alloc(8);
        bytes.writeDoubleLE(value as number, 0);
        this.out.push(...bytes);
        return;
      }
      case THRIFT_BINARY: {
        const bytes = value as Uint8Array;
        this.varint(BigInt(bytes.length));
        for (const byte of bytes) this.out.push(byte);
        return;
      }
      case THRIFT_LIST:
      case THRIFT_SET: {
        const list = value as ThriftList;
        if (list.items.length < 15) this.out.push((list.items.length << 4) | list.elementType);
        else {
          this.out.push(0xf0 | list.elementType);
          this.varint(BigInt(list.items.length));
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
