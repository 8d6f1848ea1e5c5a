/**
 * Column ranges of a Parquet base file as Hudi 0.14/0.15 reads them for the `column_stats` partition
 * (ParquetUtils.readRangeFromParquetMetadata over parquet-mr 1.13's footer reading), so that our records equal the
 * ones Hudi would write for the same file (columnRangesFromFooter lists parquet-mr's rules); and the ranges of a
 * merge-on-read log file, collected over the Avro records of the data block an append wrote (columnRangesFromRecords,
 * as HoodieAppendHandle.processAppendResult's collectColumnRangeMetadata).
 */
import { HudiError } from '../errors.js';
import { bigintToTwosComplement } from '../log-format/value-wrappers.js';
import { signedBigEndian } from '../parquet/decimal-values.js';
import { FILE_METADATA, topLevelLeafColumns } from '../parquet/footer.js';
import { isStruct, type ThriftStruct } from '../parquet/thrift.js';
import type { AvroRecordSchema } from '../table/schema.js';
import { type ColumnRange, compareSignedBytes, type WrappedValue } from './records.js';

const PHYSICAL = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'] as const;
type Physical = (typeof PHYSICAL)[number];
/** The OriginalTypes whose values Hudi converts (ParquetUtils.convertToNativeJavaType). */
type Kind = 'decimal' | 'date' | 'utf8' | 'other';

interface Leaf {
  readonly name: string;
  readonly physical: Physical;
  readonly kind: Kind;
  readonly scale: number;
  /** Whether parquet-mr takes min_value/max_value as they are (a type-defined column order). */
  readonly typeDefinedOrder: boolean;
  /** Hudi's SortOrder for the deprecated min/max: SIGNED for numbers, UNSIGNED for strings, decimals, binary. */
  readonly signedSortOrder: boolean;
}

/**
 * How a range holds decimals: in Hudi's decimal(30, 15) wrapper, failing on a value beyond it (0.x); the same, but a
 * log file's decimal columns whose type does not fit it are left out, as index version 1 never indexes them
 * (isColumnTypeSupportedV1); or as the unscaled value at the column's own scale in a BytesWrapper, any precision
 * (index version 2: ValueType.fromDecimal).
 */
export type DecimalStorage = 'wrapper' | 'wrapper-types' | 'column-scale';

/** A value as Java holds it before wrapping, with its Java ordering. */
type NativeValue =
  | { kind: 'boolean'; value: boolean }
  | { kind: 'int'; value: number }
  | { kind: 'long'; value: bigint }
  | { kind: 'float' | 'double'; value: number }
  | { kind: 'date'; value: number }
  | { kind: 'decimal'; unscaled: bigint; scale: number }
  | { kind: 'string'; value: string }
  | { kind: 'bytes'; value: Uint8Array };

interface ChunkRange {
  min: NativeValue | null;
  max: NativeValue | null;
  nullCount: number;
  valueCount: number;
  totalSize: number;
  totalUncompressedSize: number;
}

// ConvertedType ordinals (parquet.thrift) and LogicalType union fields that matter here.
const CONVERTED_UTF8 = 0;
const CONVERTED_ENUM = 4;
const CONVERTED_DECIMAL = 5;
const CONVERTED_DATE = 6;
const LOGICAL_STRING = 1;
const LOGICAL_DECIMAL = 5;
const LOGICAL_DATE = 6;

/**
 * The columns of a file's footer that Hudi would index, as ranges. `columns` are the indexed top-level names.
 *
 * - only top-level leaf columns whose name is in the indexed list (a nested field's dotted path never matches);
 * - per row group, parquet-mr's Statistics: `min_value`/`max_value` when both are set (used if the column order is
 *   type-defined, or min equals max), else the deprecated `min`/`max` under the same sort-order rule; floats and doubles
 *   drop min/max holding NaN and widen 0.0 to -0.0 (min) and -0.0 to 0.0 (max); a primitive column without min/max
 *   reports Java's default value (0, false) as both, a binary one null;
 * - values as Hudi converts them: DECIMAL → its number, DATE → epoch days, UTF8 → string, other BINARY → bytes, other
 *   types as they are (timestamps stay longs);
 * - null count = the chunk's null_count, or the value count when the chunk has neither min/max nor a null count;
 * - row groups combine by min/max (Java compareTo) and summed counts and sizes (total_compressed_size,
 *   total_uncompressed_size).
 * Then HoodieAvroUtils.wrapValueIntoAvro wraps each value; decimals as `decimals` says.
 */
export function columnRangesFromFooter(
  metadata: ThriftStruct,
  fileName: string,
  columns: readonly string[],
  decimals: DecimalStorage = 'wrapper',
): ColumnRange[] {
  const wanted = new Set(columns);
  const leaves = topLevelLeaves(metadata);
  const createdBy = metadata.binary(FILE_METADATA.createdBy);
  const writer = createdBy === undefined ? '' : Buffer.from(createdBy).toString('utf8');
  const perColumn = new Map<string, ChunkRange>();
  for (const rowGroup of metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? []) {
    for (const chunk of rowGroup.list(1)?.items.filter(isStruct) ?? []) {
      const meta = chunk.struct(3);
      const path = meta?.list(3)?.items.map((part) => Buffer.from(part as Uint8Array).toString('utf8'));
      if (meta === undefined || path === undefined || path.length !== 1 || !wanted.has(path[0]!)) continue;
      const leaf = leaves.get(path[0]!);
      if (leaf === undefined) continue;
      const range = chunkRange(leaf, meta, writer, fileName);
      const previous = perColumn.get(leaf.name);
      perColumn.set(leaf.name, previous === undefined ? range : combine(previous, range));
    }
  }
  return [...perColumn].map(([columnName, range]) => ({
    fileName,
    columnName,
    minValue: wrap(range.min, fileName, columnName, decimals),
    maxValue: wrap(range.max, fileName, columnName, decimals),
    nullCount: range.nullCount,
    valueCount: range.valueCount,
    totalSize: range.totalSize,
    totalUncompressedSize: range.totalUncompressedSize,
  }));
}

/** Top-level primitive columns of the footer's schema, by name. */
function topLevelLeaves(metadata: ThriftStruct): Map<string, Leaf> {
  const orders = metadata.list(7)?.items.filter(isStruct);
  const leaves = new Map<string, Leaf>();
  for (const { element, name, leafOrdinal } of topLevelLeafColumns(metadata)) {
    const physical = PHYSICAL[element.int(1) ?? -1];
    if (physical === undefined) continue;
    const logical = element.struct(10);
    const converted = element.int(6);
    const kind: Kind =
      logical?.has(LOGICAL_DECIMAL) || (logical === undefined && converted === CONVERTED_DECIMAL)
        ? 'decimal'
        : logical?.has(LOGICAL_DATE) || (logical === undefined && converted === CONVERTED_DATE)
          ? 'date'
          : logical?.has(LOGICAL_STRING) || (logical === undefined && converted === CONVERTED_UTF8)
            ? 'utf8'
            : 'other';
    const scale = logical?.struct(LOGICAL_DECIMAL)?.int(1) ?? element.int(7) ?? 0;
    const order = orders?.[leafOrdinal];
    // Without column_orders parquet-mr assumes type-defined order, except for INT96 (and INTERVAL).
    const typeDefinedOrder = orders === undefined ? physical !== 'INT96' : order?.has(1) === true;
    const unsigned =
      physical === 'BYTE_ARRAY' || physical === 'FIXED_LEN_BYTE_ARRAY' || physical === 'INT96' || kind === 'decimal' || converted === CONVERTED_ENUM;
    leaves.set(name, { name, physical, kind, scale, typeDefinedOrder, signedSortOrder: !unsigned });
  }
  return leaves;
}

function chunkRange(leaf: Leaf, meta: ThriftStruct, createdBy: string, fileName: string): ChunkRange {
  const valueCount = meta.int(5) ?? 0;
  const stats = meta.struct(12);
  let minBytes: Uint8Array | undefined;
  let maxBytes: Uint8Array | undefined;
  let numNulls: number | undefined;
  if (stats !== undefined) {
    const minValue = stats.binary(6);
    const maxValue = stats.binary(5);
    if (minValue !== undefined && maxValue !== undefined) {
      if (leaf.typeDefinedOrder || Buffer.from(minValue).equals(Buffer.from(maxValue))) {
        minBytes = minValue;
        maxBytes = maxValue;
      }
    } else {
      const min = stats.binary(2);
      const max = stats.binary(1);
      const equal = min !== undefined && max !== undefined && Buffer.from(min).equals(Buffer.from(max));
      if (!ignoresDeprecatedStatistics(createdBy, leaf.physical) && (leaf.signedSortOrder || equal) && min !== undefined && max !== undefined) {
        minBytes = min;
        maxBytes = max;
      }
    }
    numNulls = stats.int(3);
  }
  let min = minBytes === undefined ? undefined : decode(leaf, minBytes, fileName);
  let max = maxBytes === undefined ? undefined : decode(leaf, maxBytes, fileName);
  if ((min?.kind === 'float' || min?.kind === 'double') && max !== undefined && 'value' in max && typeof max.value === 'number') {
    if (Number.isNaN(min.value) || Number.isNaN(max.value)) {
      min = undefined;
      max = undefined;
    } else {
      if (min.value === 0) min = { kind: min.kind, value: -0 };
      if (max.value === 0) max = { kind: min.kind, value: 0 };
    }
  }
  const hasValues = min !== undefined && max !== undefined;
  const empty = !hasValues && numNulls === undefined;
  return {
    min: hasValues ? min! : defaultValue(leaf),
    max: hasValues ? max! : defaultValue(leaf),
    nullCount: empty ? valueCount : (numNulls ?? -1),
    valueCount,
    totalSize: meta.int(7) ?? 0,
    totalUncompressedSize: meta.int(6) ?? 0,
  };
}

/**
 * CorruptStatistics.shouldIgnoreStatistics: binary statistics of parquet-mr writers before 1.8.0 (PARQUET-251), or
 * whose version does not parse, are ignored. Other writers are trusted.
 */
function ignoresDeprecatedStatistics(createdBy: string, physical: Physical): boolean {
  if (physical !== 'BYTE_ARRAY' && physical !== 'FIXED_LEN_BYTE_ARRAY') return false;
  const match = /^(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?$/.exec(createdBy);
  if (createdBy === '' || match === null) return true;
  if (match[1] !== 'parquet-mr') return false;
  const version = /^(\d+)\.(\d+)\.(\d+)/.exec(match[2] ?? '');
  if (version === null) return true;
  const [major, minor] = [Number(version[1]), Number(version[2])];
  return major < 1 || (major === 1 && minor < 8);
}

/** Java's default field value of the primitive statistics class (what genericGetMin returns without values). */
function defaultValue(leaf: Leaf): NativeValue | null {
  switch (leaf.physical) {
    case 'BOOLEAN':
      return { kind: 'boolean', value: false };
    case 'INT32':
      return nativeInt(leaf, 0);
    case 'INT64':
      return nativeLong(leaf, 0n);
    case 'FLOAT':
      return { kind: 'float', value: 0 };
    case 'DOUBLE':
      return { kind: 'double', value: 0 };
    default:
      return null;
  }
}

function nativeInt(leaf: Leaf, value: number): NativeValue {
  if (leaf.kind === 'decimal') return { kind: 'decimal', unscaled: BigInt(value), scale: leaf.scale };
  if (leaf.kind === 'date') return { kind: 'date', value };
  return { kind: 'int', value };
}

function nativeLong(leaf: Leaf, value: bigint): NativeValue {
  return leaf.kind === 'decimal' ? { kind: 'decimal', unscaled: value, scale: leaf.scale } : { kind: 'long', value };
}

function decode(leaf: Leaf, bytes: Uint8Array, fileName: string): NativeValue {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const short = (needed: number): HudiError =>
    new HudiError(`column ${leaf.name}: a ${leaf.physical} statistic of ${bytes.length} bytes (needs ${needed})`, {
      location: fileName,
      fix: 'the footer is corrupt',
    });
  switch (leaf.physical) {
    case 'BOOLEAN':
      if (buffer.length < 1) throw short(1);
      return { kind: 'boolean', value: buffer[0] !== 0 };
    case 'INT32':
      if (buffer.length < 4) throw short(4);
      return nativeInt(leaf, buffer.readInt32LE(0));
    case 'INT64':
      if (buffer.length < 8) throw short(8);
      return nativeLong(leaf, buffer.readBigInt64LE(0));
    case 'FLOAT':
      if (buffer.length < 4) throw short(4);
      return { kind: 'float', value: buffer.readFloatLE(0) };
    case 'DOUBLE':
      if (buffer.length < 8) throw short(8);
      return { kind: 'double', value: buffer.readDoubleLE(0) };
    case 'BYTE_ARRAY':
    case 'FIXED_LEN_BYTE_ARRAY':
      if (leaf.kind === 'decimal') return { kind: 'decimal', unscaled: signedBigEndian(buffer), scale: leaf.scale };
      if (leaf.kind === 'utf8') return { kind: 'string', value: buffer.toString('utf8') };
      if (leaf.physical === 'BYTE_ARRAY') return { kind: 'bytes', value: new Uint8Array(buffer) };
      throw unsupported(leaf, fileName);
    default:
      throw unsupported(leaf, fileName);
  }
}

function unsupported(leaf: Leaf, fileName: string): HudiError {
  return new HudiError(
    `column ${leaf.name} is ${leaf.physical} without a decimal type; Hudi cannot index it in column_stats either (its wrapValueIntoAvro rejects the value)`,
    {
      location: fileName,
      fix: `leave it out with hoodie.metadata.index.column.stats.column.list, as a Hudi writer would have to`,
    },
  );
}

/** ParquetUtils.combineRanges. */
function combine(one: ChunkRange, another: ChunkRange): ChunkRange {
  const pick = (a: NativeValue | null, b: NativeValue | null, wantMin: boolean): NativeValue | null => {
    if (a !== null && b !== null) {
      const order = compareNative(a, b);
      return wantMin ? (order < 0 ? a : b) : order < 0 ? b : a;
    }
    return a === null ? b : a;
  };
  return {
    min: pick(one.min, another.min, true),
    max: pick(one.max, another.max, false),
    nullCount: one.nullCount + another.nullCount,
    valueCount: one.valueCount + another.valueCount,
    totalSize: one.totalSize + another.totalSize,
    totalUncompressedSize: one.totalUncompressedSize + another.totalUncompressedSize,
  };
}

/** Comparable.compareTo of the Java values (same column, so same kind). */
function compareNative(a: NativeValue, b: NativeValue): number {
  if (a.kind === 'decimal' && b.kind === 'decimal') {
    const scale = Math.max(a.scale, b.scale);
    const x = a.unscaled * 10n ** BigInt(scale - a.scale);
    const y = b.unscaled * 10n ** BigInt(scale - b.scale);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.kind === 'bytes' && b.kind === 'bytes') return compareSignedBytes(a.value, b.value);
  if (a.kind === 'boolean' && b.kind === 'boolean') return a.value === b.value ? 0 : a.value ? 1 : -1;
  if (a.kind === 'long' && b.kind === 'long') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  if (a.kind === 'string' && b.kind === 'string') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  if ((a.kind === 'float' || a.kind === 'double') && (b.kind === 'float' || b.kind === 'double')) {
    if (a.value < b.value) return -1;
    if (a.value > b.value) return 1;
    if (Number.isNaN(a.value) || Number.isNaN(b.value)) return Number.isNaN(a.value) ? (Number.isNaN(b.value) ? 0 : 1) : -1;
    return Object.is(a.value, -0) === Object.is(b.value, -0) ? 0 : Object.is(a.value, -0) ? -1 : 1;
  }
  if ('value' in a && 'value' in b && typeof a.value === 'number' && typeof b.value === 'number') return a.value - b.value;
  return 0;
}

/** Hudi's decimal wrapper: decimal(30, 15). */
const WRAPPED_DECIMAL_SCALE = 15;
const WRAPPED_DECIMAL_PRECISION = 30;

/** HoodieAvroUtils.wrapValueIntoAvro (index version 2: ValueType's wrapper, the same but for decimals). */
function wrap(value: NativeValue | null, fileName: string, column: string, decimals: DecimalStorage): WrappedValue | null {
  if (value === null) return null;
  switch (value.kind) {
    case 'decimal': {
      if (decimals === 'column-scale') return { type: 'bytes', value: new Uint8Array(bigintToTwosComplement(value.unscaled)) };
      let unscaled = value.unscaled;
      if (value.scale <= WRAPPED_DECIMAL_SCALE) {
        unscaled *= 10n ** BigInt(WRAPPED_DECIMAL_SCALE - value.scale);
      } else {
        const divisor = 10n ** BigInt(value.scale - WRAPPED_DECIMAL_SCALE);
        if (unscaled % divisor !== 0n)
          throw decimalError(fileName, column, `scale ${value.scale} cannot be written as scale ${WRAPPED_DECIMAL_SCALE} without rounding`);
        unscaled /= divisor;
      }
      const digits = (unscaled < 0n ? -unscaled : unscaled).toString().length;
      if (digits > WRAPPED_DECIMAL_PRECISION) throw decimalError(fileName, column, `precision ${digits} exceeds ${WRAPPED_DECIMAL_PRECISION}`);
      return { type: 'decimal', unscaled };
    }
    case 'date':
      return { type: 'date', value: value.value };
    case 'string':
      return { type: 'string', value: value.value };
    case 'bytes':
      return { type: 'bytes', value: value.value };
    case 'boolean':
      return { type: 'boolean', value: value.value };
    case 'int':
      return { type: 'int', value: value.value };
    case 'long':
      return { type: 'long', value: value.value };
    case 'float':
      return { type: 'float', value: value.value };
    case 'double':
      return { type: 'double', value: value.value };
  }
}

function decimalError(fileName: string, column: string, problem: string): HudiError {
  return new HudiError(`column ${column}: a decimal min/max ${problem} (Hudi's column_stats store decimal(30, 15) and fail the same way)`, {
    location: fileName,
    fix: 'leave the column out with hoodie.metadata.index.column.stats.column.list',
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Log files: ranges over the records of a data block

/**
 * HoodieTableMetadataUtil.collectColumnRangeMetadata over the records HoodieAppendHandle put in one log file's data
 * block (none for a file of deletes only), for the fields of the writer schema with meta fields (`schema`) named in
 * `columns` (every field when empty), in the schema's order:
 *
 * - each record counts in every column's value count; a null (and any value of a map, which Avro cannot compare)
 *   counts as a null;
 * - min/max by Avro's GenericData.compare of the values Hudi converts them to: strings by their UTF-8 bytes, bytes
 *   as signed bytes (ByteBuffer), numbers, booleans, dates (epoch days) and decimals by value, floats as Java's
 *   Float.compareTo (NaN above everything, -0.0 below 0.0); timestamps stay longs;
 * - records, arrays and enums count as values but have no min/max (coerceToComparable gives null for them);
 * - sizes are 0 (Hudi sets them so, not to mix them with Parquet's);
 * - a column without records has no min/max and counts 0.
 *
 * Then wrapped as the footer ranges are. A fixed that is not a decimal fails, as Hudi's coerceToComparable does.
 */
export function columnRangesFromRecords(
  schema: AvroRecordSchema,
  records: readonly Readonly<Record<string, unknown>>[],
  columns: readonly string[],
  fileName: string,
  decimals: DecimalStorage = 'wrapper',
): ColumnRange[] {
  const wanted = new Set(columns);
  const fields = schema.fields
    .map((field) => ({ field, type: recordFieldType(field.type) }))
    .filter(({ field, type }) => (wanted.size === 0 || wanted.has(field.name)) && (decimals !== 'wrapper-types' || wrapperHoldsType(type)));
  return fields.map(({ field, type }) => {
    let min: NativeValue | null = null;
    let max: NativeValue | null = null;
    let nullCount = 0;
    for (const record of records) {
      const raw = record[field.name];
      if (raw === null || raw === undefined || type.kind === 'map') {
        nullCount++;
        continue;
      }
      if (type.kind !== 'primitive') continue;
      const value = recordValue(type, raw, field.name, fileName);
      if (min === null || compareRecordValues(value, min) < 0) min = value;
      if (max === null || compareRecordValues(value, max) > 0) max = value;
    }
    return {
      fileName,
      columnName: field.name,
      minValue: wrap(min, fileName, field.name, decimals),
      maxValue: wrap(max, fileName, field.name, decimals),
      nullCount,
      valueCount: records.length,
      totalSize: 0,
      totalUncompressedSize: 0,
    };
  });
}

/** A field's Avro type as the collector treats it (nullable unions resolved, as getNestedFieldSchemaFromWriteSchema). */
type RecordFieldType =
  | { readonly kind: 'map' | 'complex' }
  | { readonly kind: 'primitive'; readonly type: string; readonly logical: unknown; readonly scale: number; readonly precision: number };

/** Whether every value of a type fits the decimal(30, 15) wrapper (isColumnTypeSupportedV1's decimal rule). */
function wrapperHoldsType(type: RecordFieldType): boolean {
  if (type.kind !== 'primitive' || type.logical !== 'decimal') return true;
  return type.precision + (WRAPPED_DECIMAL_SCALE - type.scale) <= WRAPPED_DECIMAL_PRECISION && type.scale <= WRAPPED_DECIMAL_SCALE;
}

function recordFieldType(type: unknown): RecordFieldType {
  if (Array.isArray(type)) {
    const branches = type.filter((branch) => branch !== 'null');
    return branches.length === 1 ? recordFieldType(branches[0]) : { kind: 'complex' };
  }
  if (typeof type === 'string')
    return PRIMITIVE_TYPES.has(type) ? { kind: 'primitive', type, logical: undefined, scale: 0, precision: 0 } : { kind: 'complex' };
  if (typeof type !== 'object' || type === null) return { kind: 'complex' };
  const object = type as Readonly<Record<string, unknown>>;
  const inner = object['type'];
  if (inner === 'map') return { kind: 'map' };
  if (inner === 'record' || inner === 'array' || inner === 'enum') return { kind: 'complex' };
  if (typeof inner !== 'string') return recordFieldType(inner);
  return { kind: 'primitive', type: inner, logical: object['logicalType'], scale: Number(object['scale'] ?? 0), precision: Number(object['precision'] ?? 0) };
}

const PRIMITIVE_TYPES = new Set(['boolean', 'int', 'long', 'float', 'double', 'bytes', 'string', 'fixed']);

/** The value as Hudi holds it after convertValueForSpecificDataTypes (avsc's datum: bigint longs, Buffer bytes). */
function recordValue(type: Extract<RecordFieldType, { kind: 'primitive' }>, raw: unknown, column: string, fileName: string): NativeValue {
  const bad = (): HudiError =>
    new HudiError(`column ${column}: a ${type.type} value of type ${typeof raw} in a log data block`, {
      location: fileName,
      fix: 'this is a bug in the log writer: its records do not match the writer schema',
    });
  if ((type.type === 'bytes' || type.type === 'fixed') && type.logical === 'decimal') {
    if (!(raw instanceof Uint8Array)) throw bad();
    return { kind: 'decimal', unscaled: signedBigEndian(raw), scale: type.scale };
  }
  switch (type.type) {
    case 'boolean':
      if (typeof raw !== 'boolean') throw bad();
      return { kind: 'boolean', value: raw };
    case 'int':
      if (typeof raw !== 'number') throw bad();
      return type.logical === 'date' ? { kind: 'date', value: raw } : { kind: 'int', value: raw };
    case 'long':
      if (typeof raw !== 'bigint' && typeof raw !== 'number') throw bad();
      return { kind: 'long', value: BigInt(raw) };
    case 'float':
    case 'double':
      if (typeof raw !== 'number') throw bad();
      return { kind: type.type, value: raw };
    case 'string':
      if (typeof raw !== 'string') throw bad();
      return { kind: 'string', value: raw };
    case 'bytes':
      if (!(raw instanceof Uint8Array)) throw bad();
      return { kind: 'bytes', value: new Uint8Array(raw) };
    default:
      throw new HudiError(`column ${column} is a fixed without a decimal type; Hudi cannot index it in column_stats either (coerceToComparable rejects it)`, {
        location: fileName,
        fix: 'leave it out with hoodie.metadata.index.column.stats.column.list, as a Hudi writer would have to',
      });
  }
}

/** GenericData.compare: Avro strings (Utf8) by their UTF-8 bytes, unsigned; everything else as Java compares it. */
function compareRecordValues(a: NativeValue, b: NativeValue): number {
  if (a.kind === 'string' && b.kind === 'string') return Buffer.compare(Buffer.from(a.value, 'utf8'), Buffer.from(b.value, 'utf8'));
  return compareNative(a, b);
}
