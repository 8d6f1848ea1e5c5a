/**
 * Column chunk statistics straight from a footer (ColumnMetaData.statistics), summed per file and leaf column: what
 * DuckDB's `parquet_metadata` reports as `stats_min_value`/`stats_max_value`, without a query per file. A group of
 * 10,000 small files paid more for that query than for rewriting their rows; the footers are already parsed here.
 *
 * Read as DuckDB reads them:
 * - only `min_value`/`max_value` (fields 6 and 5); the deprecated `min`/`max`, whose order is undefined for
 *   strings, are not used, so a chunk with only those has no known range;
 * - values by the leaf's logical type: integers (signed or not), floats, decimals (INT32, INT64, BYTE_ARRAY and
 *   FIXED_LEN_BYTE_ARRAY), dates, timestamps (any unit, and INT96), booleans, UTF-8 strings (STRING, ENUM, JSON);
 *   other types (binary, UUID, TIME, INTERVAL, FLOAT16) have no range here;
 * - a chunk of nulls only (null_count = num_values) without min/max needs none; any other chunk without them, or
 *   with a NaN bound, leaves the column's range unknown (null), so a reader knows it cannot skip the file.
 */
import { signedBigEndian } from './decimal-values.js';
import { COLUMN_META, chunkMetaData, FILE_METADATA, leafChunkIndexes, ROW_GROUP, STATISTICS } from './metadata-fields.js';
import type { ParquetColumnInfo, ParquetPhysicalType } from './schema.js';
import { isStruct, type ThriftStruct } from './thrift.js';

/** A decoded statistic, in a form that keeps its order and converts to any printed form. */
export type StatisticValue =
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'integer'; readonly value: bigint }
  | { readonly kind: 'float' | 'double'; readonly value: number }
  | { readonly kind: 'decimal'; readonly unscaled: bigint; readonly scale: number }
  | { readonly kind: 'date'; readonly days: bigint }
  | { readonly kind: 'timestamp'; readonly epochNanos: bigint }
  | { readonly kind: 'string'; readonly value: string; readonly bytes: Uint8Array };

/** One leaf column's statistics over every row group of a file. */
export interface LeafStatistics {
  /** Parquet column path joined by '.' (e.g. 'structField.field1'). */
  readonly column: string;
  readonly physicalType: ParquetPhysicalType;
  /** null when some row group has no usable min/max, or the type has no range here. */
  readonly min: StatisticValue | null;
  readonly max: StatisticValue | null;
  /** null when some row group does not record it. */
  readonly nullCount: number | null;
  readonly valueCount: number;
}

export interface FileStatistics {
  readonly rowCount: number;
  readonly rowGroupCount: number;
  /** Every leaf column, in schema order. */
  readonly columns: readonly LeafStatistics[];
}

/**
 * The statistics of a footer (its FileMetaData) whose schema `columns` describes (columnInfosFromSchemaElements): of
 * every leaf, or of the leaves in `only` (paths joined by '.'), in schema order.
 */
export function footerStatistics(metadata: ThriftStruct, columns: readonly ParquetColumnInfo[], only?: ReadonlySet<string>): FileStatistics {
  const leaves: ParquetColumnInfo[] = [];
  const chunkIndexes: number[] = [];
  const chunkIndexOf = leafChunkIndexes(columns);
  for (const column of columns) {
    if (column.numChildren !== 0) continue;
    const path = column.path.join('.');
    if (only !== undefined && !only.has(path)) continue;
    leaves.push(column);
    chunkIndexes.push(chunkIndexOf.get(path)!);
  }
  const decoders = leaves.map(decoderFor);
  const rowGroups = metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? [];
  const ranges = leaves.map(() => ({
    min: null as StatisticValue | null,
    max: null as StatisticValue | null,
    complete: true,
    nullCount: 0 as number | null,
    valueCount: 0,
  }));
  let rowCount = 0;
  for (const rowGroup of rowGroups) {
    rowCount += rowGroup.int(ROW_GROUP.numRows) ?? 0;
    for (let leaf = 0; leaf < leaves.length; leaf++) {
      const range = ranges[leaf]!;
      const meta = chunkMetaData(rowGroup, chunkIndexes[leaf]!);
      if (meta === undefined) {
        range.complete = false;
        range.nullCount = null;
        continue;
      }
      const numValues = meta.int(COLUMN_META.numValues) ?? 0;
      range.valueCount += numValues;
      const stats = meta.struct(COLUMN_META.statistics);
      const nulls = stats?.int(STATISTICS.nullCount);
      range.nullCount = nulls === undefined || range.nullCount === null ? null : range.nullCount + nulls;
      const minBytes = stats?.binary(STATISTICS.minValue);
      const maxBytes = stats?.binary(STATISTICS.maxValue);
      if (minBytes === undefined && maxBytes === undefined && nulls !== undefined && nulls === numValues) continue;
      const decode = decoders[leaf]!;
      const min = minBytes === undefined ? undefined : decode(minBytes);
      const max = maxBytes === undefined ? undefined : decode(maxBytes);
      if (min === undefined || max === undefined) {
        range.complete = false;
        continue;
      }
      if (range.min === null || compareStatistics(min, range.min) < 0) range.min = min;
      if (range.max === null || compareStatistics(max, range.max) > 0) range.max = max;
    }
  }
  return {
    rowCount,
    rowGroupCount: rowGroups.length,
    columns: leaves.map((leaf, index) => {
      const range = ranges[index]!;
      const known = range.complete && rowGroups.length > 0;
      return {
        column: leaf.path.join('.'),
        physicalType: leaf.physicalType ?? 'BYTE_ARRAY',
        min: known ? range.min : null,
        max: known ? range.max : null,
        nullCount: rowGroups.length > 0 ? range.nullCount : 0,
        valueCount: range.valueCount,
      };
    }),
  };
}

/**
 * A column's least and greatest value over some of its chunks (their ColumnMetaData), as the bytes the statistics
 * hold, in byte order: only when every chunk records both and flags them exact (is_min_value_exact,
 * is_max_value_exact). A writer that truncates long values flags them inexact (DuckDB, past 256 bytes), and a
 * truncated maximum is below the true one; an unflagged bound may be truncated too.
 */
export function exactByteRange(chunks: Iterable<ThriftStruct | undefined>): { readonly min: Uint8Array; readonly max: Uint8Array } | undefined {
  let min: Uint8Array | undefined;
  let max: Uint8Array | undefined;
  for (const meta of chunks) {
    const stats = meta?.struct(COLUMN_META.statistics);
    if (stats === undefined || stats.bool(STATISTICS.isMinValueExact) !== true || stats.bool(STATISTICS.isMaxValueExact) !== true) return undefined;
    const low = stats.binary(STATISTICS.minValue);
    const high = stats.binary(STATISTICS.maxValue);
    if (low === undefined || high === undefined) return undefined;
    if (min === undefined || Buffer.compare(low, min) < 0) min = low;
    if (max === undefined || Buffer.compare(high, max) > 0) max = high;
  }
  return min === undefined || max === undefined ? undefined : { min, max };
}

/** Order of two statistics of one column (same kind). */
export function compareStatistics(a: StatisticValue, b: StatisticValue): number {
  const order = (x: bigint | number, y: bigint | number): number => (x < y ? -1 : x > y ? 1 : 0);
  switch (a.kind) {
    case 'boolean':
      return b.kind === 'boolean' ? Number(a.value) - Number(b.value) : 0;
    case 'integer':
      return b.kind === 'integer' ? order(a.value, b.value) : 0;
    case 'float':
    case 'double':
      return b.kind === a.kind ? order(a.value, b.value) : 0;
    case 'decimal':
      // One column: one scale.
      return b.kind === 'decimal' ? order(a.unscaled, b.unscaled) : 0;
    case 'date':
      return b.kind === 'date' ? order(a.days, b.days) : 0;
    case 'timestamp':
      return b.kind === 'timestamp' ? order(a.epochNanos, b.epochNanos) : 0;
    case 'string':
      return b.kind === 'string' ? Buffer.compare(a.bytes, b.bytes) : 0;
  }
}

type Decoder = (bytes: Uint8Array) => StatisticValue | undefined;

const NANOS_PER_UNIT = { MILLIS: 1_000_000n, MICROS: 1_000n, NANOS: 1n } as const;
const NANOS_PER_DAY = 86_400_000_000_000n;
/** The Julian day of 1970-01-01 (INT96 timestamps count days from the Julian epoch). */
const JULIAN_UNIX_EPOCH_DAY = 2_440_588n;

function view(bytes: Uint8Array, needed: number): DataView | undefined {
  return bytes.length < needed ? undefined : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** How a leaf's statistic bytes decode, by its physical and logical type. */
function decoderFor(leaf: ParquetColumnInfo): Decoder {
  const none: Decoder = () => undefined;
  const physical = leaf.physicalType;
  if (leaf.logicalType === 'DECIMAL') {
    const scale = leaf.scale ?? 0;
    // Wider than DuckDB's DECIMAL(38): DuckDB reads it as a DOUBLE, which has no exact range.
    if ((leaf.precision ?? 0) > 38) return none;
    const decimal = (unscaled: bigint | undefined): StatisticValue | undefined => (unscaled === undefined ? undefined : { kind: 'decimal', unscaled, scale });
    if (physical === 'INT32') return (bytes) => decimal(signedInteger(bytes, 4));
    if (physical === 'INT64') return (bytes) => decimal(signedInteger(bytes, 8));
    if (physical === 'BYTE_ARRAY' || physical === 'FIXED_LEN_BYTE_ARRAY') return (bytes) => decimal(bytes.length === 0 ? undefined : signedBigEndian(bytes));
    return none;
  }
  switch (physical) {
    case 'BOOLEAN':
      return (bytes) => (bytes.length < 1 ? undefined : { kind: 'boolean', value: bytes[0] !== 0 });
    case 'INT32': {
      if (leaf.logicalType === 'DATE') {
        return (bytes) => {
          const days = signedInteger(bytes, 4);
          return days === undefined ? undefined : { kind: 'date', days };
        };
      }
      if (leaf.logicalType !== undefined && leaf.logicalType !== 'INTEGER') return none;
      const unsigned = leaf.logicalType === 'INTEGER' && leaf.isSigned === false;
      return (bytes) => {
        const data = view(bytes, 4);
        return data === undefined ? undefined : { kind: 'integer', value: BigInt(unsigned ? data.getUint32(0, true) : data.getInt32(0, true)) };
      };
    }
    case 'INT64': {
      if (leaf.logicalType === 'TIMESTAMP') {
        const perUnit = NANOS_PER_UNIT[leaf.timeUnit ?? 'MICROS'];
        return (bytes) => {
          const value = signedInteger(bytes, 8);
          return value === undefined ? undefined : { kind: 'timestamp', epochNanos: value * perUnit };
        };
      }
      if (leaf.logicalType !== undefined && leaf.logicalType !== 'INTEGER') return none;
      const unsigned = leaf.logicalType === 'INTEGER' && leaf.isSigned === false;
      return (bytes) => {
        const data = view(bytes, 8);
        return data === undefined ? undefined : { kind: 'integer', value: unsigned ? data.getBigUint64(0, true) : data.getBigInt64(0, true) };
      };
    }
    case 'INT96':
      // Nanoseconds of the day (8 bytes), then the Julian day (4 bytes), little-endian.
      return (bytes) => {
        const data = view(bytes, 12);
        if (data === undefined) return undefined;
        const days = BigInt(data.getInt32(8, true)) - JULIAN_UNIX_EPOCH_DAY;
        return { kind: 'timestamp', epochNanos: days * NANOS_PER_DAY + data.getBigInt64(0, true) };
      };
    case 'FLOAT':
      return (bytes) => {
        const data = view(bytes, 4);
        const value = data?.getFloat32(0, true);
        return value === undefined || Number.isNaN(value) ? undefined : { kind: 'float', value };
      };
    case 'DOUBLE':
      return (bytes) => {
        const data = view(bytes, 8);
        const value = data?.getFloat64(0, true);
        return value === undefined || Number.isNaN(value) ? undefined : { kind: 'double', value };
      };
    case 'BYTE_ARRAY':
      if (leaf.logicalType === 'STRING' || leaf.logicalType === 'ENUM' || leaf.logicalType === 'JSON') {
        // A copy: the footer's bytes may be a scratch buffer the next footer overwrites (readFooterSummary).
        return (bytes) => ({
          kind: 'string',
          value: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
          bytes: Uint8Array.from(bytes),
        });
      }
      return none;
    default:
      return none;
  }
}

function signedInteger(bytes: Uint8Array, width: 4 | 8): bigint | undefined {
  const data = view(bytes, width);
  if (data === undefined) return undefined;
  return width === 4 ? BigInt(data.getInt32(0, true)) : data.getBigInt64(0, true);
}
