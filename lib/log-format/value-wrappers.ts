/**
 * Hudi's Avro value wrappers (`org.apache.hudi.avro.model.*Wrapper`, one record per type): delete records carry
 * their ordering value in one, the metadata table's column-stats records their min and max. One tagged value type
 * and one encoding for both.
 */

export const WRAPPER_NAMESPACE = 'org.apache.hudi.avro.model';

/** Wrapper record name, our tag, and the wrapped field's Avro type, in Hudi's union branch order. */
export const VALUE_WRAPPERS = [
  ['BooleanWrapper', 'boolean', 'boolean'],
  ['IntWrapper', 'int', 'int'],
  ['LongWrapper', 'long', 'long'],
  ['FloatWrapper', 'float', 'float'],
  ['DoubleWrapper', 'double', 'double'],
  ['BytesWrapper', 'bytes', 'bytes'],
  ['StringWrapper', 'string', { type: 'string', 'avro.java.string': 'String' }],
  ['DateWrapper', 'date', 'int'],
  ['DecimalWrapper', 'decimal', { type: 'bytes', logicalType: 'decimal', precision: 30, scale: 15 }],
  ['TimeMicrosWrapper', 'timeMicros', { type: 'long', logicalType: 'time-micros' }],
  ['TimestampMicrosWrapper', 'timestampMicros', 'long'],
] as const;

export type WrapperName = (typeof VALUE_WRAPPERS)[number][0];

/** A value tagged with the wrapper Hudi stores it in. */
export type WrappedValue =
  | { readonly type: 'boolean'; readonly value: boolean }
  /** `date`: days since the epoch. */
  | { readonly type: 'int' | 'float' | 'double' | 'date'; readonly value: number }
  | { readonly type: 'long' | 'timeMicros' | 'timestampMicros'; readonly value: bigint }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'string'; readonly value: string }
  /** decimal(30, 15): the unscaled value; the number is unscaled / 10^15. */
  | { readonly type: 'decimal'; readonly unscaled: bigint };

/** The Avro union datum of a wrapped value (avsc's wrapped-union form: the branch's full name as the key). */
export type AvroWrappedValue = Partial<Record<`${typeof WRAPPER_NAMESPACE}.${WrapperName}`, { value: unknown }>>;

export function wrapValue(value: WrappedValue): AvroWrappedValue {
  const wrapper = VALUE_WRAPPERS.find(([, type]) => type === value.type);
  if (wrapper === undefined) throw new TypeError(`value type ${String((value as { type: unknown }).type)} is not one Hudi wraps`);
  let inner: unknown;
  if (value.type === 'decimal') inner = bigintToTwosComplement(value.unscaled);
  else if (value.type === 'bytes') inner = Buffer.from(value.value);
  else inner = value.value;
  return { [`${WRAPPER_NAMESPACE}.${wrapper[0]}`]: { value: inner } };
}

/** The tagged value of a wrapper datum; `unknownBranch` builds the caller's error for a branch Hudi does not have. */
export function unwrapValue(wrapped: unknown, unknownBranch: (branch: string) => Error): WrappedValue | null {
  if (wrapped === null || wrapped === undefined) return null;
  const [branch, holder] = Object.entries(wrapped as Record<string, { value: unknown } | undefined>)[0] ?? [];
  const wrapper = VALUE_WRAPPERS.find(([name]) => `${WRAPPER_NAMESPACE}.${name}` === branch);
  if (wrapper === undefined || holder === undefined) throw unknownBranch(String(branch));
  const inner = holder.value;
  switch (wrapper[1]) {
    case 'decimal':
      return { type: 'decimal', unscaled: twosComplementToBigint(inner as Uint8Array) };
    case 'bytes':
      return { type: 'bytes', value: new Uint8Array(inner as Uint8Array) };
    case 'long':
    case 'timeMicros':
    case 'timestampMicros':
      return { type: wrapper[1], value: inner as bigint };
    case 'boolean':
      return { type: 'boolean', value: inner as boolean };
    case 'string':
      return { type: 'string', value: inner as string };
    default:
      return { type: wrapper[1], value: inner as number };
  }
}

/** Big-endian two's complement, minimal length, as java.math.BigInteger.toByteArray (Avro's decimal bytes). */
export function bigintToTwosComplement(value: bigint): Buffer {
  const bytes: number[] = [];
  let rest = value;
  for (;;) {
    const byte = Number(rest & 0xffn);
    bytes.unshift(byte);
    rest >>= 8n;
    if ((rest === 0n && (byte & 0x80) === 0) || (rest === -1n && (byte & 0x80) !== 0)) break;
  }
  return Buffer.from(bytes);
}

export function twosComplementToBigint(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  const [first = 0] = bytes;
  return (first & 0x80) !== 0 ? value - (1n << BigInt(bytes.length * 8)) : value;
}
