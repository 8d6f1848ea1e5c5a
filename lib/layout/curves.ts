/**
 * Space-curve sort keys for clustering with `hoodie.layout.optimize.strategy` = z-order | hilbert, byte-for-byte as
 * Hudi's Spark path builds them: BinaryUtil (hudi-common: 8-byte mappings, bit interleaving), SpaceCurveSortingHelper
 * (`curve.build.method = direct`) and RangeSampleSort / RangeSample (`sample`: values ranked among sampled bounds).
 * Keys sort as unsigned bytes (ByteArraySorting). Java semantics to keep in mind: longs wrap at 64 bits,
 * `String.getBytes(UTF_8)` writes '?' for a lone surrogate, `Double.doubleToLongBits` canonicalises NaN.
 *
 * Why one long file: the three parts share module-private scratch buffers that stand in for Java longs so the per-row
 * loops allocate nothing; splitting them would export that mutable state. Each part starts at a `// ---` banner.
 */
import { HudiError } from '../errors.js';
import { HilbertIndexer } from './hilbert.js';

// ---------------------------------------------------------------------------------------------
// Column types and values
// ---------------------------------------------------------------------------------------------

/** Spark SQL types Hudi's curve builders accept for a sort column. */
export type SortColumnKind = 'int' | 'long' | 'short' | 'byte' | 'boolean' | 'float' | 'double' | 'string' | 'date' | 'timestamp' | 'decimal' | 'binary';

/** Decimals need their scale: Hudi uses `BigDecimal.longValue()`, the integer part, not the unscaled value. */
export interface DecimalColumnType {
  readonly kind: 'decimal';
  readonly scale: number;
}

export type SortColumnType = Exclude<SortColumnKind, 'decimal'> | DecimalColumnType;

/**
 * One sort-column value, `null`/`undefined` = SQL NULL. Per type:
 * int/short/byte: integer number · long: bigint or safe-integer number · float/double: number ·
 * string: string · boolean: boolean · date: number, days since 1970-01-01 ·
 * timestamp: bigint or safe-integer number, MICROseconds since the epoch (Spark TimestampType) ·
 * decimal: bigint or safe-integer number, the UNSCALED value · binary: Uint8Array.
 */
export type SortValue = number | bigint | string | boolean | Uint8Array | null | undefined;

export type CurveLayout = 'z-order' | 'hilbert';
export type CurveBuildMethod = 'direct' | 'sample';

/** `hoodie.layout.optimize.build.curve.sample.size` default. */
export const DEFAULT_CURVE_SAMPLE_SIZE = 200_000;
/** Hudi's DIRECT Hilbert curve: `HilbertCurve.bits(63)`, `indexBytes(..., 63)`. */
export const DIRECT_HILBERT_BITS = 63;
/** Hudi's SAMPLE Hilbert curve over ranks: `HilbertCurve.bits(32)`, `indexBytes(..., 32)`. */
export const SAMPLE_HILBERT_BITS = 32;

function kindOf(type: SortColumnType): SortColumnKind {
  return typeof type === 'string' ? type : type.kind;
}

function describeType(type: SortColumnType): string {
  return typeof type === 'string' ? type : `decimal(scale ${type.scale})`;
}

function wrongValue(type: SortColumnType, value: SortValue): TypeError {
  const shown = typeof value === 'bigint' ? `${value}n` : typeof value === 'string' ? JSON.stringify(value) : String(value);
  return new TypeError(`sort column of type ${describeType(type)} cannot take the value ${shown} (${typeof value})`);
}

// ---------------------------------------------------------------------------------------------
// 64-bit words. Encoders leave their result in (resultHigh, resultLow), the two 32-bit halves of a
// Java long / of 8 big-endian bytes, so the hot loops allocate nothing.
// ---------------------------------------------------------------------------------------------

const TWO_POW_32 = 4294967296;
const SIGN_BIT = -0x80000000;
const INT_MIN = -0x80000000;
const INT_MAX = 0x7fffffff;
/** Float.MAX_VALUE widened to double: Hudi's null for float columns in Z-order. */
const FLOAT_MAX_AS_DOUBLE = 3.4028234663852886e38;
const MILLIS_PER_DAY = 86_400_000;

let resultHigh = 0;
let resultLow = 0;

function setLongMax(): void {
  resultHigh = INT_MAX;
  resultLow = -1;
}

function setLongFromBigInt(value: bigint): void {
  resultHigh = Number(BigInt.asIntN(32, value >> 32n));
  resultLow = Number(BigInt.asIntN(32, value));
}

/** A safe integer, sign-extended to 64 bits. */
function setLongFromNumber(value: number): void {
  resultHigh = Math.floor(value / TWO_POW_32) | 0;
  resultLow = value | 0;
}

function wordsToBigInt(high: number, low: number): bigint {
  return (BigInt(high | 0) << 32n) | BigInt(low >>> 0);
}

const doubleView = new DataView(new ArrayBuffer(8));

/** `Double.doubleToLongBits`: raw IEEE bits, every NaN as 0x7ff8000000000000. */
function setDoubleBits(value: number): void {
  if (Number.isNaN(value)) {
    resultHigh = 0x7ff80000;
    resultLow = 0;
    return;
  }
  doubleView.setFloat64(0, value);
  resultHigh = doubleView.getInt32(0);
  resultLow = doubleView.getInt32(4);
}

/** BinaryUtil.doubleTo8Byte: sign bit flipped for v > 0, every bit inverted for v < 0, ±0 and NaN raw. */
function setDoubleSortable(value: number): void {
  setDoubleBits(value);
  if (value > 0) {
    resultHigh ^= SIGN_BIT;
  } else if (value < 0) {
    resultHigh = ~resultHigh;
    resultLow = ~resultLow;
  }
}

function pushByte(byte: number): void {
  resultHigh = (resultHigh << 8) | (resultLow >>> 24);
  resultLow = (resultLow << 8) | byte;
}

/**
 * The first 8 bytes of Java's `value.getBytes(UTF_8)`, left-padded with zeros (BinaryUtil.utf8To8Byte),
 * without encoding the rest of the string. A lone surrogate encodes as '?' as in Java.
 */
function setUtf8Prefix(value: string): void {
  resultHigh = 0;
  resultLow = 0;
  let written = 0;
  for (let i = 0; i < value.length && written < 8; i++) {
    const unit = value.charCodeAt(i);
    if (unit < 0x80) {
      pushByte(unit);
      written += 1;
      continue;
    }
    let bytes: number[];
    if (unit < 0x800) {
      bytes = [0xc0 | (unit >> 6), 0x80 | (unit & 0x3f)];
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = i + 1 < value.length ? value.charCodeAt(i + 1) : 0;
      if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const codePoint = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
        bytes = [0xf0 | (codePoint >> 18), 0x80 | ((codePoint >> 12) & 0x3f), 0x80 | ((codePoint >> 6) & 0x3f), 0x80 | (codePoint & 0x3f)];
        i++;
      } else {
        bytes = [0x3f];
      }
    } else {
      bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)];
    }
    for (const byte of bytes) {
      if (written === 8) break;
      pushByte(byte);
      written += 1;
    }
  }
}

/** BinaryUtil.paddingTo8Byte as a word: first 8 bytes, or all of them left-padded with zeros. */
function setPaddedBytes(bytes: Uint8Array): void {
  resultHigh = 0;
  resultLow = 0;
  const count = Math.min(8, bytes.length);
  for (const byte of bytes.subarray(0, count)) pushByte(byte);
}

function writeWordBigEndian(out: Uint8Array, offset: number, high: number, low: number): void {
  out[offset] = high >>> 24;
  out[offset + 1] = (high >>> 16) & 255;
  out[offset + 2] = (high >>> 8) & 255;
  out[offset + 3] = high & 255;
  out[offset + 4] = low >>> 24;
  out[offset + 5] = (low >>> 16) & 255;
  out[offset + 6] = (low >>> 8) & 255;
  out[offset + 7] = low & 255;
}

function resultBytes(): Uint8Array {
  const out = new Uint8Array(8);
  writeWordBigEndian(out, 0, resultHigh, resultLow);
  return out;
}

// ---------------------------------------------------------------------------------------------
// BinaryUtil
// ---------------------------------------------------------------------------------------------

function requireJavaInt(value: number, min: number, max: number, what: string): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${what} must be an integer in [${min}, ${max}], got ${value}`);
  return value;
}

/** BinaryUtil.intTo8Byte: `00000000 ‖ BE32(v XOR 1<<31)`. */
export function intTo8Byte(value: number): Uint8Array {
  requireJavaInt(value, INT_MIN, INT_MAX, 'int');
  resultHigh = 0;
  resultLow = value ^ SIGN_BIT;
  return resultBytes();
}

/** BinaryUtil.longTo8Byte: `BE64(v XOR 1<<63)`. */
export function longTo8Byte(value: bigint): Uint8Array {
  setLongFromBigInt(BigInt.asIntN(64, value));
  resultHigh ^= SIGN_BIT;
  return resultBytes();
}

/** BinaryUtil.doubleTo8Byte (raw bits, top bit flipped if v > 0, all bits inverted if v < 0). */
export function doubleTo8Byte(value: number): Uint8Array {
  setDoubleSortable(value);
  return resultBytes();
}

/** BinaryUtil.utf8To8Byte: UTF-8 bytes truncated or left-padded with zeros to 8. */
export function utf8To8Byte(value: string): Uint8Array {
  setUtf8Prefix(value);
  return resultBytes();
}

/** BinaryUtil.byteTo8Byte: the byte's bits, unsigned, in the last position (no sign flip: -1 → 0xff). */
export function byteTo8Byte(value: number): Uint8Array {
  requireJavaInt(value, -128, 127, 'byte');
  const out = new Uint8Array(8);
  out[7] = value & 255;
  return out;
}

/** BinaryUtil.paddingTo8Byte: the first 8 bytes, or all bytes left-padded with zeros. Always a new array. */
export function paddingTo8Byte(bytes: Uint8Array): Uint8Array {
  setPaddedBytes(bytes);
  return resultBytes();
}

/** BinaryUtil.convertBytesToLong: paddingTo8Byte read as a signed big-endian long. */
export function convertBytesToLong(bytes: Uint8Array): bigint {
  setPaddedBytes(bytes);
  return wordsToBigInt(resultHigh, resultLow);
}

/** BinaryUtil.convertStringToLong: utf8To8Byte read as a signed big-endian long. */
export function convertStringToLong(value: string): bigint {
  setUtf8Prefix(value);
  return wordsToBigInt(resultHigh, resultLow);
}

/** Bit i (0 = least significant) of a byte moved to bit i × stride, for strides 1..4. */
const SPREAD_BY_STRIDE: readonly Uint32Array[] = [1, 2, 3, 4].map((stride) => {
  const table = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let spread = 0;
    for (let bit = 0; bit < 8; bit++) if ((byte >> bit) & 1) spread += 2 ** (bit * stride);
    table[byte] = spread;
  }
  return table;
});

/**
 * Interleave `columnCount` columns laid out back to back in `columnBytes` (each `size` bytes) into
 * `out[offset ..]`: for each bit position, most significant first, one bit from each column in turn.
 */
function interleaveInto(columnBytes: Uint8Array, columnCount: number, size: number, out: Uint8Array, offset: number): void {
  if (columnCount <= 4) {
    // Byte k of every column fills exactly output bytes k*n .. k*n+n-1.
    const spread = SPREAD_BY_STRIDE[columnCount - 1];
    if (spread === undefined) throw new HudiError(`no spread table for ${columnCount} columns`); // 1..4 columns have one
    for (let k = 0; k < size; k++) {
      // At most 32 bits: int32 ops are exact (the top bit may land in the sign, read back with >>>).
      let group = 0;
      for (let column = 0; column < columnCount; column++) {
        // A byte indexes all 256 entries of the spread table; bytes read inside columnBytes.
        group |= (spread[columnBytes[column * size + k] ?? 0] ?? 0) << (columnCount - 1 - column);
      }
      const base = offset + k * columnCount;
      for (let m = columnCount - 1; m >= 0; m--) {
        out[base + m] = group & 255;
        group >>>= 8;
      }
    }
    return;
  }
  out.fill(0, offset, offset + size * columnCount);
  let outBit = 0;
  for (let bit = 0; bit < size * 8; bit++) {
    const byteIndex = bit >> 3;
    const shift = 7 - (bit & 7);
    for (let column = 0; column < columnCount; column++, outBit++) {
      if (((columnBytes[column * size + byteIndex] ?? 0) >> shift) & 1) {
        const at = offset + (outBit >> 3);
        out[at] = (out[at] ?? 0) | (0x80 >> (outBit & 7));
      }
    }
  }
}

/** BinaryUtil.interleaving(columns, size): `size × columns.length` bytes. Only the first `size` bytes of each column are read. */
export function interleaveBits(columns: readonly Uint8Array[], size = 8): Uint8Array {
  if (columns.length === 0) return new Uint8Array(0);
  const flat = new Uint8Array(columns.length * size);
  columns.forEach((column, index) => {
    if (column.length < size) throw new RangeError(`interleaving needs ${size} bytes per column, column ${index} has ${column.length}`);
    flat.set(column.subarray(0, size), index * size);
  });
  const out = new Uint8Array(flat.length);
  interleaveInto(flat, columns.length, size, out, 0);
  return out;
}

/** Z-order key of already-mapped 8-byte column values (SpaceCurveSortingHelper: `interleaving(zBytes, 8)`). */
export function zOrderKey(values: readonly Uint8Array[]): Uint8Array {
  return interleaveBits(values, 8);
}

/** Unsigned lexicographic comparison, a shorter prefix first (BinaryUtil.compareTo / ByteArraySorting). */
export function compareUnsignedBytes(a: Uint8Array, b: Uint8Array): number {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0); // i < both lengths
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

// ---------------------------------------------------------------------------------------------
// DIRECT mapping (SpaceCurveSortingHelper.mapColumnValueTo8Bytes / mapColumnValueToLong)
// ---------------------------------------------------------------------------------------------

/** Sets (resultHigh, resultLow) for one value. */
type ValueEncoder = (value: SortValue) => void;

function requireNumber(type: SortColumnType, value: SortValue): number {
  if (typeof value !== 'number') throw wrongValue(type, value);
  return value;
}

function requireIntInRange(type: SortColumnType, value: SortValue, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw wrongValue(type, value);
  return value;
}

function requireInteger(type: SortColumnType, value: SortValue): number | bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw wrongValue(type, value);
}

function setLong(value: number | bigint): void {
  if (typeof value === 'bigint') setLongFromBigInt(BigInt.asIntN(64, value));
  else setLongFromNumber(value);
}

/** Exact floor(value / divisor) for a safe integer (`%` is exact; plain division can round across an integer). */
function floorDivide(value: number, divisor: number): number {
  const remainder = value % divisor;
  const quotient = (value - remainder) / divisor;
  return remainder < 0 ? quotient - 1 : quotient + 0;
}

/**
 * `row.getTimestamp(i).getTime()`: java.sql.Timestamp millis, i.e. floor(micros / 1000).
 * (Spark's Julian-calendar rebase of pre-1582 timestamps is not reproduced.)
 */
function timestampMillis(type: SortColumnType, value: SortValue): number | bigint {
  const micros = requireInteger(type, value);
  if (typeof micros === 'number') return floorDivide(micros, 1000);
  const quotient = micros / 1000n;
  return micros < 0n && quotient * 1000n !== micros ? quotient - 1n : quotient;
}

/**
 * `row.getDate(i).getTime()`: java.sql.Date millis at local midnight. Taken as UTC midnight, i.e. a
 * JVM whose default time zone is UTC (elsewhere Hudi's value shifts by the zone offset).
 */
function dateMillis(type: SortColumnType, value: SortValue): number | bigint {
  const days = requireIntInRange(type, value, INT_MIN, INT_MAX);
  const millis = days * MILLIS_PER_DAY;
  // Beyond ±285,000 years the product leaves the exact double range; Java's long still holds it.
  return Number.isSafeInteger(millis) ? millis : BigInt(days) * BigInt(MILLIS_PER_DAY);
}

const POWERS_OF_TEN = new Map<number, bigint>();
function powerOfTen(exponent: number): bigint {
  let power = POWERS_OF_TEN.get(exponent);
  if (power === undefined) {
    power = 10n ** BigInt(exponent);
    POWERS_OF_TEN.set(exponent, power);
  }
  return power;
}

/** `BigDecimal.longValue()`: integer part (truncated toward zero), wrapped to 64 bits. */
function decimalLongValue(type: DecimalColumnType, value: SortValue): number | bigint {
  const unscaled = requireInteger(type, value);
  if (type.scale === 0) return unscaled;
  if (type.scale < 0) return BigInt.asIntN(64, BigInt(unscaled) * powerOfTen(-type.scale));
  if (typeof unscaled === 'number' && type.scale <= 22) {
    // Exact truncating division: 10^scale is exact as a double up to 10^22 and `%` is exact.
    const divisor = 10 ** type.scale;
    return (unscaled - (unscaled % divisor)) / divisor + 0;
  }
  return BigInt.asIntN(64, BigInt(unscaled) / powerOfTen(type.scale));
}

function requireDecimalScale(type: DecimalColumnType): void {
  if (!Number.isInteger(type.scale)) throw new RangeError(`decimal scale must be an integer, got ${type.scale}`);
}

/** mapColumnValueTo8Bytes: the 8 bytes Z-order interleaves, as a word. */
function zOrderEncoder(type: SortColumnType): ValueEncoder {
  switch (kindOf(type)) {
    case 'long':
      return (value) => {
        if (value == null) setLongMax();
        else setLong(requireInteger(type, value));
        resultHigh ^= SIGN_BIT;
      };
    case 'date':
      return (value) => {
        if (value == null) setLongMax();
        else setLong(dateMillis(type, value));
        resultHigh ^= SIGN_BIT;
      };
    case 'timestamp':
      return (value) => {
        if (value == null) setLongMax();
        else setLong(timestampMillis(type, value));
        resultHigh ^= SIGN_BIT;
      };
    case 'decimal': {
      const decimal = type as DecimalColumnType;
      requireDecimalScale(decimal);
      return (value) => {
        if (value == null) setLongMax();
        else setLong(decimalLongValue(decimal, value));
        resultHigh ^= SIGN_BIT;
      };
    }
    case 'int':
      return (value) => {
        resultHigh = 0;
        resultLow = (value == null ? INT_MAX : requireIntInRange(type, value, INT_MIN, INT_MAX)) ^ SIGN_BIT;
      };
    case 'short':
      return (value) => {
        resultHigh = 0;
        resultLow = (value == null ? 0x7fff : requireIntInRange(type, value, -0x8000, 0x7fff)) ^ SIGN_BIT;
      };
    case 'byte':
      return (value) => {
        resultHigh = 0;
        resultLow = (value == null ? 0x7f : requireIntInRange(type, value, -128, 127)) & 255;
      };
    case 'boolean':
      return (value) => {
        if (value != null && typeof value !== 'boolean') throw wrongValue(type, value);
        resultHigh = 0;
        resultLow = (value === true ? 1 : 0) ^ SIGN_BIT;
      };
    case 'float':
      // The float is widened to double: round first so a JS number stands for the float Spark holds.
      return (value) => setDoubleSortable(value == null ? FLOAT_MAX_AS_DOUBLE : Math.fround(requireNumber(type, value)));
    case 'double':
      return (value) => setDoubleSortable(value == null ? Number.MAX_VALUE : requireNumber(type, value));
    case 'string':
      // A null string maps to "" (all zeros): nulls sort FIRST on a string axis, unlike other types.
      return (value) => {
        if (value != null && typeof value !== 'string') throw wrongValue(type, value);
        setUtf8Prefix(value ?? '');
      };
    case 'binary':
      return (value) => {
        if (value != null && !(value instanceof Uint8Array)) throw wrongValue(type, value);
        setPaddedBytes(value ?? NULL_BINARY);
      };
  }
}

const NULL_BINARY = new Uint8Array([0]);

/** mapColumnValueToLong: the long Hilbert indexes (no sign flip), as a word. Nulls → Long.MAX_VALUE except boolean. */
function hilbertEncoder(type: SortColumnType): ValueEncoder {
  const whenNotNull = hilbertNonNullEncoder(type);
  if (kindOf(type) === 'boolean') return whenNotNull;
  return (value) => {
    if (value == null) setLongMax();
    else whenNotNull(value);
  };
}

function hilbertNonNullEncoder(type: SortColumnType): ValueEncoder {
  switch (kindOf(type)) {
    case 'long':
      return (value) => setLong(requireInteger(type, value));
    case 'date':
      return (value) => setLong(dateMillis(type, value));
    case 'timestamp':
      return (value) => setLong(timestampMillis(type, value));
    case 'decimal': {
      const decimal = type as DecimalColumnType;
      requireDecimalScale(decimal);
      return (value) => setLong(decimalLongValue(decimal, value));
    }
    case 'int':
      return (value) => setLongFromNumber(requireIntInRange(type, value, INT_MIN, INT_MAX));
    case 'short':
      return (value) => setLongFromNumber(requireIntInRange(type, value, -0x8000, 0x7fff));
    case 'byte':
      // convertBytesToLong(new byte[] {b}): the byte unsigned.
      return (value) => setLongFromNumber(requireIntInRange(type, value, -128, 127) & 255);
    case 'boolean':
      // true → Long.MAX_VALUE; false and null → 0.
      return (value) => {
        if (value != null && typeof value !== 'boolean') throw wrongValue(type, value);
        if (value === true) setLongMax();
        else setLongFromNumber(0);
      };
    case 'float':
      return (value) => setDoubleBits(Math.fround(requireNumber(type, value)));
    case 'double':
      return (value) => setDoubleBits(requireNumber(type, value));
    case 'string':
      return (value) => {
        if (typeof value !== 'string') throw wrongValue(type, value);
        setUtf8Prefix(value);
      };
    case 'binary':
      return (value) => {
        if (!(value instanceof Uint8Array)) throw wrongValue(type, value);
        setPaddedBytes(value);
      };
  }
}

/** SpaceCurveSortingHelper.mapColumnValueTo8Bytes for one value. */
export function mapValueTo8Bytes(type: SortColumnType, value: SortValue): Uint8Array {
  zOrderEncoder(type)(value);
  return resultBytes();
}

/** SpaceCurveSortingHelper.mapColumnValueToLong for one value (a signed Java long). */
export function mapValueToLong(type: SortColumnType, value: SortValue): bigint {
  hilbertEncoder(type)(value);
  return wordsToBigInt(resultHigh, resultLow);
}

/**
 * Which `Collectors.toMap` filled Hudi's column map: JDK 9+ `putIfAbsent` (appends to a bucket, resizes
 * right after the insert that crosses the threshold) or JDK 8 `merge` (prepends, resizes lazily at
 * the next insert).
 */
export type JavaRuntime = 'jdk8' | 'jdk9+';

/**
 * The order in which Hudi's DIRECT builder visits the sort columns. It iterates a
 * `HashMap<Integer, StructField>` keyed by schema position (`Collectors.toMap`), so the order is the
 * HashMap's bucket order, not the configured order: ascending schema position while no two positions
 * share a bucket (positions below 16 with up to 12 columns), but e.g. positions [5, 17] come out as
 * [17, 5], and colliding positions [5, 21] as [5, 21] on JDK 9+ and [21, 5] on JDK 8.
 * Returns indexes into `schemaPositions`. (Treeified buckets — 8+ columns colliding in a 64+ table,
 * ~50 sort columns — are not modelled.)
 */
export function hudiDirectColumnOrder(schemaPositions: readonly number[], runtime: JavaRuntime = 'jdk9+'): number[] {
  if (new Set(schemaPositions).size !== schemaPositions.length) {
    throw new RangeError(`duplicate sort column schema positions ${JSON.stringify(schemaPositions)} (Hudi fails with "Duplicate key")`);
  }
  const bucketOf = (position: number, capacity: number): number => (position ^ (position >>> 16)) & (capacity - 1);
  const treeifyThreshold = 8;
  let capacity = 16;
  let size = 0;
  for (const position of schemaPositions) {
    if (!Number.isInteger(position) || position < 0) throw new RangeError(`schema position must be a non-negative integer, got ${position}`);
    if (runtime === 'jdk8' && size > capacity * 0.75) capacity *= 2;
    const bucket = bucketOf(position, capacity);
    const alreadyInBucket = schemaPositions.slice(0, size).filter((other) => bucketOf(other, capacity) === bucket).length;
    size += 1;
    // Growing a bin past the treeify threshold resizes instead while the table is under 64 buckets.
    const treeifies = runtime === 'jdk8' ? alreadyInBucket >= treeifyThreshold - 1 : alreadyInBucket >= treeifyThreshold;
    if (treeifies && capacity < 64) capacity *= 2;
    if (runtime === 'jdk9+' && size > capacity * 0.75) capacity *= 2;
  }
  // Resizes keep each bucket's list order, so the final order is by final bucket, then by insertion
  // (appended, JDK 9+) or reverse insertion (prepended, JDK 8).
  const direction = runtime === 'jdk8' ? -1 : 1;
  return schemaPositions
    .map((position, index) => ({ index, bucket: bucketOf(position, capacity) }))
    .sort((a, b) => a.bucket - b.bucket || direction * (a.index - b.index))
    .map((entry) => entry.index);
}

// ---------------------------------------------------------------------------------------------
// Key batches
// ---------------------------------------------------------------------------------------------

/** Fixed-width keys for many rows: row r's key is `keys.subarray(r * keyLength, (r + 1) * keyLength)`. */
export interface CurveKeyBatch {
  readonly rowCount: number;
  readonly keyLength: number;
  readonly keys: Uint8Array;
}

export function curveKeyAt(batch: CurveKeyBatch, row: number): Uint8Array {
  return batch.keys.subarray(row * batch.keyLength, (row + 1) * batch.keyLength);
}

/** One sort column's values for every row of a batch. */
export interface CurveColumnValues {
  readonly type: SortColumnType;
  readonly values: ArrayLike<SortValue>;
}

function rowCountOf(columns: readonly CurveColumnValues[]): number {
  const rowCount = columns[0]?.values.length ?? 0;
  columns.forEach((column, index) => {
    if (column.values.length !== rowCount) throw new RangeError(`sort column ${index} has ${column.values.length} values, column 0 has ${rowCount}`);
  });
  return rowCount;
}

/**
 * DIRECT keys for every row, columns taken in the order given (use `hudiDirectColumnOrder` to match
 * Hudi). Z-order keys are 8 × columns bytes; Hilbert keys are 63 bytes and need 2+ columns.
 */
export function computeDirectCurveKeys(layout: CurveLayout, columns: readonly CurveColumnValues[]): CurveKeyBatch {
  if (columns.length === 0) throw new RangeError('curve keys need at least one sort column');
  const rowCount = rowCountOf(columns);
  const columnCount = columns.length;
  if (layout === 'z-order') {
    const encoded = columns.map((column) => ({ encode: zOrderEncoder(column.type), values: column.values }));
    const keyLength = 8 * columnCount;
    const keys = new Uint8Array(rowCount * keyLength);
    const columnBytes = new Uint8Array(keyLength);
    for (let row = 0; row < rowCount; row++) {
      let column = 0;
      for (const { encode, values } of encoded) {
        encode(values[row]);
        writeWordBigEndian(columnBytes, 8 * column++, resultHigh, resultLow);
      }
      interleaveInto(columnBytes, columnCount, 8, keys, row * keyLength);
    }
    return { rowCount, keyLength, keys };
  }
  const encoded = columns.map((column) => ({ encode: hilbertEncoder(column.type), values: column.values }));
  const indexer = new HilbertIndexer(DIRECT_HILBERT_BITS, columnCount);
  const keyLength = DIRECT_HILBERT_BITS;
  const keys = new Uint8Array(rowCount * keyLength);
  for (let row = 0; row < rowCount; row++) {
    let column = 0;
    for (const { encode, values } of encoded) {
      encode(values[row]);
      indexer.setCoordinateHalves(column++, resultHigh, resultLow);
    }
    indexer.writeIndexBytes(keys, row * keyLength, keyLength);
  }
  return { rowCount, keyLength, keys };
}

/** DIRECT Z-order key of one row (columns in the order given). */
export function directZOrderKey(types: readonly SortColumnType[], row: readonly SortValue[]): Uint8Array {
  return computeDirectCurveKeys(
    'z-order',
    types.map((type, index) => ({ type, values: [row[index]] })),
  ).keys;
}

/** DIRECT Hilbert key of one row (columns in the order given): 63 bytes. */
export function directHilbertKey(types: readonly SortColumnType[], row: readonly SortValue[]): Uint8Array {
  return computeDirectCurveKeys(
    'hilbert',
    types.map((type, index) => ({ type, values: [row[index]] })),
  ).keys;
}

/**
 * Row numbers in ascending unsigned key order, ties in row order (Spark's sort gives ties no defined
 * order). The bytes that do not hold one value in every row are first packed into big-endian words beside each row
 * number, so a pass reads its input in order instead of looking up each row's key (a cache miss a row). Then an
 * MSD radix sort, a byte a level: the first levels cut a million curve keys into buckets of a few rows, which an
 * insertion sort finishes (an LSD sort would take a pass over every row for each varying byte). Each level moves
 * rows stably and the insertion sort is stable, so ties stay in row order.
 */
export function sortRowsByCurveKey(batch: CurveKeyBatch): Uint32Array {
  const { rowCount, keyLength, keys } = batch;
  const rows = new Uint32Array(rowCount);
  for (let row = 0; row < rowCount; row++) rows[row] = row;
  if (rowCount < 2) return rows;
  // Positions with one value in every row sort nothing: a byte that differs from row 0's anywhere varies.
  const differs = new Uint8Array(keyLength);
  for (let row = 1, base = keyLength; row < rowCount; row++, base += keyLength) {
    for (let position = 0; position < keyLength; position++)
      differs[position] = (differs[position] ?? 0) | ((keys[base + position] ?? 0) ^ (keys[position] ?? 0));
  }
  const varying: number[] = [];
  for (let position = 0; position < keyLength; position++) if (differs[position] !== 0) varying.push(position);
  if (varying.length === 0) return rows;
  // Packed key: varying byte i is byte (i % 4) of word ⌊i / 4⌋, most significant first (a missing byte is 0).
  const words: Uint32Array[] = [];
  for (let first = 0; first < varying.length; first += 4) {
    const word = new Uint32Array(rowCount);
    const [p0, p1, p2, p3] = [0, 1, 2, 3].map((offset) => varying[first + offset] ?? -1) as [number, number, number, number];
    const bytes = varying.length - first;
    for (let row = 0, base = 0; row < rowCount; row++, base += keyLength) {
      let value = (keys[base + p0] ?? 0) << 24;
      if (bytes > 1) value |= (keys[base + p1] ?? 0) << 16;
      if (bytes > 2) value |= (keys[base + p2] ?? 0) << 8;
      if (bytes > 3) value |= keys[base + p3] ?? 0;
      word[row] = value >>> 0;
    }
    words.push(word);
  }
  new CurveKeySorter(rows, words, varying.length).sort(0, rowCount, 0);
  return rows;
}

/** Buckets of at most this many rows are finished by insertion sort. */
const INSERTION_SORT_MAX_ROWS = 24;

/** The MSD radix sort of sortRowsByCurveKey over rows and their packed key words, in place. */
class CurveKeySorter {
  /** Where a level's rows, then each of their words, are moved before being copied back. */
  readonly #spare: Uint32Array;
  /** A level's digit counts and its bucket ends (one 256-entry slice per level: levels nest). */
  readonly #counts: Uint32Array;
  readonly #ends: Uint32Array;
  /** Where each row of the level being sorted goes. */
  readonly #targets: Uint32Array;
  /** The key words of the row an insertion sort is placing. */
  readonly #held: Uint32Array;

  constructor(
    readonly rows: Uint32Array,
    readonly words: readonly Uint32Array[],
    readonly digitCount: number,
  ) {
    this.#spare = new Uint32Array(rows.length);
    this.#counts = new Uint32Array(digitCount * 256);
    this.#ends = new Uint32Array(digitCount * 256);
    this.#targets = new Uint32Array(rows.length);
    this.#held = new Uint32Array(words.length);
  }

  #move(values: Uint32Array, lo: number, hi: number): void {
    const targets = this.#targets;
    const spare = this.#spare;
    for (let i = lo; i < hi; i++) spare[targets[i] ?? 0] = values[i] ?? 0; // i and every target lie in [lo, hi)
    values.set(spare.subarray(lo, hi), lo);
  }

  /** Sorts rows [lo, hi), whose keys agree before byte `digit`. */
  sort(lo: number, hi: number, digit: number): void {
    const { rows, words, digitCount } = this;
    for (; digit < digitCount; digit++) {
      if (hi - lo <= INSERTION_SORT_MAX_ROWS) {
        this.#insertionSort(lo, hi, digit >>> 2);
        return;
      }
      const firstWord = digit >>> 2;
      const keyWord = words[firstWord];
      if (keyWord === undefined) throw new HudiError(`digit ${digit} lies past the ${words.length} key words`); // digitCount ≤ 4 × words
      const shift = 24 - 8 * (digit & 3);
      const counts = this.#counts;
      const ends = this.#ends;
      const base = digit * 256;
      counts.fill(0, base, base + 256);
      // Typed-array reads below stay inside [lo, hi) and the level's 256 slots; `?? 0` is for the types only.
      for (let i = lo; i < hi; i++) {
        const slot = base + (((keyWord[i] ?? 0) >>> shift) & 0xff);
        counts[slot] = (counts[slot] ?? 0) + 1;
      }
      // Every row with the same byte here: nothing to move, the next byte decides.
      if (counts[base + (((keyWord[lo] ?? 0) >>> shift) & 0xff)] === hi - lo) continue;
      for (let d = base, running = lo; d < base + 256; d++) {
        ends[d] = running;
        running += counts[d] ?? 0;
      }
      // ends[d] is bucket d's start until every row has its place, then its end. Words before firstWord agree here.
      const targets = this.#targets;
      for (let i = lo; i < hi; i++) {
        const slot = base + (((keyWord[i] ?? 0) >>> shift) & 0xff);
        const target = ends[slot] ?? 0;
        targets[i] = target;
        ends[slot] = target + 1;
      }
      this.#move(rows, lo, hi);
      for (const word of words.slice(firstWord)) this.#move(word, lo, hi);
      for (let d = base, start = lo; d < base + 256; d++) {
        const end = ends[d] ?? 0;
        if (end - start > 1) this.sort(start, end, digit + 1);
        start = end;
      }
      return;
    }
  }

  /** Stable insertion sort of rows [lo, hi) by their key words from `firstWord` on. */
  #insertionSort(lo: number, hi: number, firstWord: number): void {
    const { rows } = this;
    // The key words from firstWord on; held[w] is the placed row's word keyWords[w]. Indexes stay inside [lo, hi)
    // and the words, so the typed-array reads' `?? 0` is for the types only.
    const keyWords = this.words.slice(firstWord);
    const held = this.#held;
    for (let i = lo + 1; i < hi; i++) {
      let w = 0;
      for (const word of keyWords) held[w++] = word[i] ?? 0;
      const row = rows[i] ?? 0;
      let j = i - 1;
      for (; j >= lo; j--) {
        let greater = false;
        w = 0;
        for (const word of keyWords) {
          const a = word[j] ?? 0;
          const b = held[w++] ?? 0;
          if (a !== b) {
            greater = a > b;
            break;
          }
        }
        if (!greater) break;
        rows[j + 1] = rows[j] ?? 0;
        for (const word of keyWords) word[j + 1] = word[j] ?? 0;
      }
      rows[j + 1] = row;
      w = 0;
      for (const word of keyWords) word[j + 1] = held[w++] ?? 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// SAMPLE build method (RangeSampleSort.sortDataFrameBySample + RangeSample)
// ---------------------------------------------------------------------------------------------

/** Randomness the sample path needs (Spark uses XORShiftRandom and ThreadLocalRandom: not reproducible). */
export interface RandomSource {
  /** Uniform in [0, 1). */
  nextDouble(): number;
  /** Uniform integer in [0, bound). */
  nextInt(bound: number): number;
}

/** A small deterministic generator (splitmix32) so sampled layouts are repeatable for a given seed. */
export function seededRandom(seed: number): RandomSource {
  let state = seed | 0;
  const next32 = (): number => {
    state = (state + 0x9e3779b9) | 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 16), 0x21f0aaad);
    mixed = Math.imul(mixed ^ (mixed >>> 15), 0x735a2d97);
    return (mixed ^ (mixed >>> 15)) >>> 0;
  };
  const nextDouble = (): number => (next32() * 2097152 + (next32() >>> 11)) / 9007199254740992;
  return { nextDouble, nextInt: (bound) => Math.floor(nextDouble() * bound) };
}

/**
 * Bounds for one column. `typed` columns (every sort column one of the ten primitive kinds Hudi's
 * typed sampler handles) compare as Java longs or strings; `natural` columns (used for all columns as
 * soon as one is boolean or binary — Hudi's `sortDataFrameBySampleSupportAllTypes`) compare by Spark's
 * ordering of the real values, nulls first.
 */
export type SampleColumnBounds =
  | { readonly kind: 'long'; readonly bounds: Float64Array | BigInt64Array }
  | { readonly kind: 'expanded-long'; readonly bounds: Float64Array; readonly fillFactor: number }
  | { readonly kind: 'string'; readonly bounds: readonly string[]; readonly fillFactor: number }
  | { readonly kind: 'natural'; readonly type: SortColumnType; readonly bounds: readonly SortValue[]; readonly fillFactor: number };

export interface SampleRangeBounds {
  /** 'natural' = Hudi's all-types fallback, which always builds a Z-order key (even for hilbert). */
  readonly sampler: 'typed' | 'natural';
  readonly types: readonly SortColumnType[];
  readonly columns: readonly SampleColumnBounds[];
  /** Hudi's `maxBoundNum`: the longest (expanded) bound list. */
  readonly maxBoundCount: number;
}

const TYPED_SAMPLE_KINDS: ReadonlySet<SortColumnKind> = new Set(['long', 'double', 'float', 'string', 'int', 'date', 'timestamp', 'short', 'byte', 'decimal']);

/** The long RangeSampleSort compares for a non-null typed value; a number when it is a safe integer. */
function sampleLongKey(type: SortColumnType, value: SortValue): number | bigint {
  switch (kindOf(type)) {
    case 'long': {
      const long = requireInteger(type, value);
      return typeof long === 'bigint' ? BigInt.asIntN(64, long) : long;
    }
    case 'int':
      return requireIntInRange(type, value, INT_MIN, INT_MAX);
    case 'short':
      return requireIntInRange(type, value, -0x8000, 0x7fff);
    case 'byte':
      // Signed here (`row.getByte(i).toLong`), unlike the unsigned DIRECT Hilbert mapping.
      return requireIntInRange(type, value, -128, 127);
    case 'date':
      return dateMillis(type, value);
    case 'timestamp':
      return timestampMillis(type, value);
    case 'decimal':
      return decimalLongValue(type as DecimalColumnType, value);
    case 'double':
      setDoubleBits(requireNumber(type, value));
      return wordsToBigInt(resultHigh, resultLow);
    case 'float':
      setDoubleBits(Math.fround(requireNumber(type, value)));
      return wordsToBigInt(resultHigh, resultLow);
    default:
      throw new TypeError(`${describeType(type)} has no long sample key`);
  }
}

const LONG_MAX = 0x7fffffffffffffffn;

/** Spark `SamplingUtils.reservoirSampleAndCount` over row numbers (one input partition). */
function reservoirSampleRows(rowCount: number, capacity: number, random: RandomSource): Uint32Array {
  if (rowCount <= capacity) {
    const all = new Uint32Array(rowCount);
    for (let row = 0; row < rowCount; row++) all[row] = row;
    return all;
  }
  const reservoir = new Uint32Array(capacity);
  for (let row = 0; row < capacity; row++) reservoir[row] = row;
  for (let row = capacity; row < rowCount; row++) {
    const replacement = Math.floor(random.nextDouble() * (row + 1));
    if (replacement < capacity) reservoir[replacement] = row;
  }
  return reservoir;
}

/**
 * RangeSample.determineBound with every candidate carrying the same weight: walk the sorted keys,
 * emitting a bound each time the cumulative weight passes the next multiple of total/partitions,
 * skipping keys equal to the previous bound.
 */
function determineBounds<Key>(sortedKeys: ArrayLike<Key>, weight: number, partitions: number, greater: (a: Key, b: Key) => boolean): Key[] {
  const count = sortedKeys.length;
  let totalWeight = 0;
  for (let i = 0; i < count; i++) totalWeight += weight;
  const step = totalWeight / partitions;
  let cumulative = 0;
  let target = step;
  const bounds: Key[] = [];
  for (let i = 0; i < count && bounds.length < partitions - 1; i++) {
    // biome-ignore lint/style/noNonNullAssertion: i < count, the number of sorted keys
    const key = sortedKeys[i]!;
    cumulative += weight;
    const last = bounds.at(-1);
    if (cumulative >= target && (last === undefined || greater(key, last))) {
      bounds.push(key);
      target += step;
    }
  }
  return bounds;
}

type ValueComparator = (a: SortValue, b: SortValue) => number;
const NATURAL_COMPARATORS = new Map<SortColumnKind, ValueComparator>();

/** Spark's ascending ordering of real values, nulls first (used by the all-types sampler). */
function naturalComparator(type: SortColumnType): ValueComparator {
  const kind = kindOf(type);
  let comparator = NATURAL_COMPARATORS.get(kind);
  if (comparator === undefined) {
    comparator = buildNaturalComparator(kind);
    NATURAL_COMPARATORS.set(kind, comparator);
  }
  return comparator;
}

function buildNaturalComparator(kind: SortColumnKind): ValueComparator {
  const compareNonNull = ((): ValueComparator => {
    switch (kind) {
      case 'float':
      case 'double':
        // SQLOrderingUtil.compareDoubles: -0.0 = 0.0, NaN = NaN and above everything.
        return (a, b) => {
          const x = a as number;
          const y = b as number;
          if (x === y || (Number.isNaN(x) && Number.isNaN(y))) return 0;
          if (Number.isNaN(x)) return 1;
          if (Number.isNaN(y)) return -1;
          return x < y ? -1 : 1;
        };
      case 'string':
        return (a, b) => compareCodePoints(a as string, b as string);
      case 'boolean':
        return (a, b) => Number(a) - Number(b);
      case 'binary':
        return (a, b) => compareUnsignedBytes(a as Uint8Array, b as Uint8Array);
      default:
        // Integral kinds, decimals (same scale: compare unscaled), dates, timestamps; number vs bigint compares exactly.
        return (a, b) => ((a as number | bigint) < (b as number | bigint) ? -1 : (a as number | bigint) > (b as number | bigint) ? 1 : 0);
    }
  })();
  return (a, b) => (a == null ? (b == null ? 0 : -1) : b == null ? 1 : compareNonNull(a, b));
}

/** UTF-8 byte order (Spark's UTF8String) = code point order, which differs from UTF-16 order above U+E000. */
function compareCodePoints(a: string, b: string): number {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      // Surrogates (U+10000 and up) must sort after U+E000..U+FFFF.
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * RawDecisionBound.getBound: how many bounds the key is greater than — a linear scan up to 128 bounds,
 * otherwise java.util.Arrays.binarySearch (whose pick among equal bounds is reproduced).
 */
function decisionBound<Key>(key: Key, bounds: ArrayLike<Key>, compare: (a: Key, b: Key) => number): number {
  const length = bounds.length;
  if (length <= 128) {
    let rank = 0;
    // biome-ignore lint/style/noNonNullAssertion: rank < length
    while (rank < length && compare(key, bounds[rank]!) > 0) rank++;
    return rank;
  }
  let low = 0;
  let high = length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    // biome-ignore lint/style/noNonNullAssertion: low ≤ middle ≤ high < length
    const order = compare(bounds[middle]!, key);
    if (order < 0) low = middle + 1;
    else if (order > 0) high = middle - 1;
    else return middle;
  }
  return low;
}

// The same search specialised per key type: one generic comparator made the per-row path megamorphic.
function rankAmongNumbers(key: number, bounds: Float64Array): number {
  const length = bounds.length;
  if (length <= 128) {
    let rank = 0;
    // biome-ignore lint/style/noNonNullAssertion: rank < length
    while (rank < length && key > bounds[rank]!) rank++;
    return rank;
  }
  let low = 0;
  let high = length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    // biome-ignore lint/style/noNonNullAssertion: low ≤ middle ≤ high < length
    const bound = bounds[middle]!;
    if (bound < key) low = middle + 1;
    else if (bound > key) high = middle - 1;
    else return middle;
  }
  return low;
}

function rankAmongBigInts(key: bigint, bounds: BigInt64Array): number {
  const length = bounds.length;
  if (length <= 128) {
    let rank = 0;
    // biome-ignore lint/style/noNonNullAssertion: rank < length
    while (rank < length && key > bounds[rank]!) rank++;
    return rank;
  }
  let low = 0;
  let high = length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    // biome-ignore lint/style/noNonNullAssertion: low ≤ middle ≤ high < length
    const bound = bounds[middle]!;
    if (bound < key) low = middle + 1;
    else if (bound > key) high = middle - 1;
    else return middle;
  }
  return low;
}

/** JS `<` on strings compares UTF-16 code units, exactly like Java's String.compareTo. */
function rankAmongStrings(key: string, bounds: readonly string[]): number {
  const length = bounds.length;
  if (length <= 128) {
    let rank = 0;
    // biome-ignore lint/style/noNonNullAssertion: rank < length
    while (rank < length && key > bounds[rank]!) rank++;
    return rank;
  }
  let low = 0;
  let high = length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    // biome-ignore lint/style/noNonNullAssertion: low ≤ middle ≤ high < length
    const bound = bounds[middle]!;
    if (bound < key) low = middle + 1;
    else if (bound > key) high = middle - 1;
    else return middle;
  }
  return low;
}

const isGreater = <Key>(a: Key, b: Key): boolean => a > b;

/** `math.min(20 * zEncodeNum, 1e6)` candidates wanted, reservoir of 3× that per partition. */
function reservoirCapacity(sampleSize: number): number {
  return Math.ceil(3 * Math.min(20 * sampleSize, 1e6));
}

/**
 * RangeSample.getRangeBounds + determineBound + the bound expansion of RangeSampleSort, for one input
 * partition holding every row: candidates are a reservoir sample of up to 3 × min(20 × sampleSize, 1e6)
 * rows (3,000,000 by default, so smaller inputs use every row and the bounds are exact and
 * deterministic), each weighing rows / candidates, and each column gets up to
 * min(sampleSize, candidates) - 1 bounds. Columns in the configured sort-column order.
 */
export function buildSampleRangeBounds(columns: readonly CurveColumnValues[], sampleSize: number = DEFAULT_CURVE_SAMPLE_SIZE, seed = 0): SampleRangeBounds {
  if (columns.length === 0) throw new RangeError('sample range bounds need at least one sort column');
  if (!Number.isInteger(sampleSize) || sampleSize < 0) throw new RangeError(`sample size must be a non-negative integer, got ${sampleSize}`);
  const rowCount = rowCountOf(columns);
  const types = columns.map((column) => column.type);
  for (const type of types) if (kindOf(type) === 'decimal') requireDecimalScale(type as DecimalColumnType);
  const sampler = types.every((type) => TYPED_SAMPLE_KINDS.has(kindOf(type))) ? 'typed' : 'natural';

  // Hudi has no bounds when sampleSize <= 1 or there are no rows (and then fails on `rangeBounds.head`).
  const sampledRows = sampleSize <= 1 ? new Uint32Array(0) : reservoirSampleRows(rowCount, reservoirCapacity(sampleSize), seededRandom(seed));
  const weight = Math.fround(rowCount / sampledRows.length);
  const partitions = Math.min(sampleSize, sampledRows.length);

  const rawBounds = columns.map((column): Float64Array | BigInt64Array | string[] | SortValue[] => {
    const sampledValue = (i: number): SortValue => column.values[sampledRows[i] ?? 0]; // i < sampledRows.length
    if (sampler === 'natural') {
      const keys = Array.from({ length: sampledRows.length }, (_, i) => sampledValue(i));
      const compare = naturalComparator(column.type);
      keys.sort(compare);
      return determineBounds(keys, weight, partitions, (a, b) => compare(a, b) > 0);
    }
    if (kindOf(column.type) === 'string') {
      // Null strings are sampled as "".
      const keys = Array.from({ length: sampledRows.length }, (_, i) => {
        const value = sampledValue(i);
        if (value != null && typeof value !== 'string') throw wrongValue(column.type, value);
        return value ?? '';
      });
      keys.sort(); // UTF-16 code unit order = Java String.compareTo = Scala Ordering[String].
      return determineBounds(keys, weight, partitions, isGreater);
    }
    // Null longs are sampled as Long.MAX_VALUE.
    const keys = Array.from({ length: sampledRows.length }, (_, i) => {
      const value = sampledValue(i);
      return value == null ? LONG_MAX : sampleLongKey(column.type, value);
    });
    if (keys.every((key) => typeof key === 'number')) {
      const sorted = Float64Array.from(keys as number[]).sort();
      return Float64Array.from(determineBounds(sorted, weight, partitions, isGreater));
    }
    const sorted = BigInt64Array.from(keys, (key) => BigInt(key)).sort();
    const bounds = determineBounds(sorted, weight, partitions, isGreater);
    // Safe-integer bounds compare exactly as doubles, which is much faster than BigInt.
    return bounds.every((bound) => bound >= -9007199254740991n && bound <= 9007199254740991n) ? Float64Array.from(bounds, Number) : BigInt64Array.from(bounds);
  });

  const maxLength = Math.max(...rawBounds.map((bounds) => bounds.length));
  if (sampler === 'natural') {
    return {
      sampler,
      types,
      columns: rawBounds.map((bounds, index) => ({
        kind: 'natural' as const,
        // biome-ignore lint/style/noNonNullAssertion: rawBounds and types both map columns, index for index
        type: types[index]!,
        bounds: bounds as SortValue[],
        fillFactor: bounds.length === 0 ? 0 : maxLength / bounds.length,
      })),
      maxBoundCount: maxLength,
    };
  }
  // Expand: a long column with fewer bounds than the longest gets each bound split into fillFactor
  // sub-bounds (bound + 1/f, bound + 2/f, ..., bound + 1) as doubles; string columns keep theirs.
  const expanded = rawBounds.map((bounds): SampleColumnBounds => {
    const fillFactor = bounds.length === 0 ? 0 : Math.floor(maxLength / bounds.length);
    if (Array.isArray(bounds)) return { kind: 'string', bounds: bounds as string[], fillFactor: 0 };
    if (fillFactor <= 1) return { kind: 'long', bounds: bounds as Float64Array | BigInt64Array };
    const split = new Float64Array(bounds.length * fillFactor);
    const slice = 1 / fillFactor;
    for (let i = 0; i < bounds.length; i++) {
      const base = Number(bounds[i] ?? 0); // i < bounds.length
      for (let j = 0; j < fillFactor; j++) split[j + i * fillFactor] = base + (j + 1) * slice;
    }
    return { kind: 'expanded-long', bounds: split, fillFactor };
  });
  const maxBoundCount = Math.max(...expanded.map((column) => column.bounds.length));
  return {
    sampler,
    types,
    maxBoundCount,
    // A string column's factor is a double: maxBoundNum / its bound count.
    columns: expanded.map((column) =>
      column.kind === 'string' ? { ...column, fillFactor: column.bounds.length === 0 ? 0 : maxBoundCount / column.bounds.length } : column,
    ),
  };
}

/**
 * The rank ("bucket") Hudi's sampler gives one value of column `columnIndex`, the coordinate it then
 * feeds to the curve. Nulls go one past the end (`bounds + 1` for long columns, `maxBoundNum + 1`
 * otherwise). Columns whose bounds were stretched get a random offset within their stretch, so the
 * result depends on `random` for those.
 */
export function mapToBucket(bounds: SampleRangeBounds, columnIndex: number, value: SortValue, random: RandomSource): number {
  const column = bounds.columns[columnIndex];
  const type = bounds.types[columnIndex];
  if (column === undefined || type === undefined) throw new RangeError(`no sample bounds for column ${columnIndex}`);
  switch (column.kind) {
    case 'long': {
      if (value == null) return column.bounds.length + 1;
      const key = sampleLongKey(type, value);
      // Safe-integer bounds: a larger key rounds to a double still beyond every bound, so ranks stay exact.
      if (column.bounds instanceof Float64Array) return rankAmongNumbers(Number(key), column.bounds);
      return rankAmongBigInts(BigInt(key), column.bounds);
    }
    case 'expanded-long': {
      if (value == null) return column.bounds.length + 1;
      const factor = column.fillFactor;
      const shifted = Number(sampleLongKey(type, value)) + (random.nextInt(factor) + 1) * (1 / factor);
      return rankAmongNumbers(shifted, column.bounds);
    }
    case 'string': {
      if (value == null) return bounds.maxBoundCount + 1;
      if (typeof value !== 'string') throw wrongValue(type, value);
      const rank = rankAmongStrings(value, column.bounds);
      return column.fillFactor > 1 ? Math.trunc(rank * column.fillFactor) + random.nextInt(Math.trunc(column.fillFactor)) : rank;
    }
    case 'natural': {
      if (value == null) return bounds.maxBoundCount + 1;
      const rank = decisionBound(value, column.bounds, naturalComparator(type));
      const factor = Math.trunc(column.fillFactor);
      return column.fillFactor > 1 ? rank * factor + random.nextInt(factor) : rank;
    }
  }
}

/**
 * SAMPLE keys for every row: each value → `mapToBucket` rank → Z-order of `intTo8Byte(rank)`
 * (8 × columns bytes), or Hilbert `bits(32)` over the ranks padded to 32 bytes (needs 2+ columns).
 * The all-types sampler always builds Z-order keys, as Hudi does.
 */
export function computeSampleCurveKeys(layout: CurveLayout, columns: readonly CurveColumnValues[], bounds: SampleRangeBounds, seed = 0): CurveKeyBatch {
  const rowCount = rowCountOf(columns);
  const columnCount = columns.length;
  if (columnCount !== bounds.columns.length) throw new RangeError(`${columnCount} sort columns but bounds for ${bounds.columns.length}`);
  const random = seededRandom(seed ^ 0x5bd1e995);
  const ranks = new Int32Array(columnCount);
  const rankRow = (row: number): void => {
    let column = 0;
    for (const { values } of columns) ranks[column] = mapToBucket(bounds, column++, values[row], random);
  };
  if (layout === 'z-order' || bounds.sampler === 'natural') {
    const keyLength = 8 * columnCount;
    const keys = new Uint8Array(rowCount * keyLength);
    const columnBytes = new Uint8Array(keyLength);
    for (let row = 0; row < rowCount; row++) {
      rankRow(row);
      let column = 0;
      for (const rank of ranks) writeWordBigEndian(columnBytes, 8 * column++, 0, rank ^ SIGN_BIT);
      interleaveInto(columnBytes, columnCount, 8, keys, row * keyLength);
    }
    return { rowCount, keyLength, keys };
  }
  const indexer = new HilbertIndexer(SAMPLE_HILBERT_BITS, columnCount);
  const keyLength = SAMPLE_HILBERT_BITS;
  const keys = new Uint8Array(rowCount * keyLength);
  for (let row = 0; row < rowCount; row++) {
    rankRow(row);
    let column = 0;
    for (const rank of ranks) indexer.setCoordinateNumber(column++, rank);
    indexer.writeIndexBytes(keys, row * keyLength, keyLength);
  }
  return { rowCount, keyLength, keys };
}

// ---------------------------------------------------------------------------------------------
// One call for the clustering executor
// ---------------------------------------------------------------------------------------------

export interface CurveSortColumn extends CurveColumnValues {
  /**
   * Position of the column in the schema of the rows being clustered (Hudi's `_hoodie_*` meta columns
   * first). Only DIRECT uses it, to visit columns in Hudi's HashMap order.
   */
  readonly schemaPosition: number;
}

export interface CurveKeyOptions {
  readonly layout: CurveLayout;
  /** `hoodie.layout.optimize.curve.build.method`, default direct. */
  readonly buildMethod?: CurveBuildMethod;
  /**
   * `hoodie.layout.optimize.build.curve.sample.size`, default 200000. (Hudi reads it from the Spark
   * session conf, so a value set only in the writer config never reached the sampler.)
   */
  readonly sampleSize?: number;
  /** Seed for the sampler's randomness. */
  readonly seed?: number;
  /** JDK that ran Hudi, for DIRECT's column order (see `hudiDirectColumnOrder`); default jdk9+. */
  readonly javaRuntime?: JavaRuntime;
}

/**
 * Sort keys for a clustering group. `columns` in `hoodie.clustering.plan.strategy.sort.columns` order.
 * DIRECT with a single column is not a curve in Hudi (it range-sorts on the column): this throws, and
 * the caller should sort linearly.
 */
export function buildCurveKeys(columns: readonly CurveSortColumn[], options: CurveKeyOptions): CurveKeyBatch {
  const method = options.buildMethod ?? 'direct';
  if (columns.length === 0) throw new RangeError('no sort columns: Hudi leaves the rows in their input order');
  if (method === 'direct') {
    if (columns.length === 1) throw new RangeError('one sort column: Hudi range-sorts on it instead of building a curve');
    const order = hudiDirectColumnOrder(
      columns.map((column) => column.schemaPosition),
      options.javaRuntime,
    );
    return computeDirectCurveKeys(
      options.layout,
      order.map((index) => {
        const column = columns[index];
        if (column === undefined) throw new HudiError(`no sort column ${index} of ${columns.length}`); // a permutation of the columns
        return column;
      }),
    );
  }
  if (options.layout === 'hilbert' && columns.length === 1) {
    throw new RangeError('hilbert with one sort column and the sample build method fails in Hudi (a Hilbert curve needs 2+ dimensions)');
  }
  const seed = options.seed ?? 0;
  const bounds = buildSampleRangeBounds(columns, options.sampleSize ?? DEFAULT_CURVE_SAMPLE_SIZE, seed);
  return computeSampleCurveKeys(options.layout, columns, bounds, seed);
}
