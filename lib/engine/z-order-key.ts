/**
 * Hudi's DIRECT z-order key of two sort columns as DuckDB expressions, so DuckDB orders the rows in its own COPY (as a
 * linear sort) instead of JavaScript computing every key and rank (lib/layout/curves.ts). The key is curves.ts's, bit
 * for bit, as two 64-bit halves (the high 32 bits of each column's word interleaved, then the low 32), compared
 * unsigned; only 64-bit integer arithmetic that cannot overflow, since DuckDB's 128-bit arithmetic is far slower per
 * row. Only what maps exactly is taken (integers, booleans, dates, micro/millisecond timestamps, strings, binary);
 * floats, decimals, other column counts: undefined, and the caller computes the keys as before.
 */
import { hudiDirectColumnOrder, type SortColumnType } from '../layout/curves.js';
import type { ParquetColumnInfo } from '../parquet/schema.js';
import { DERIVED_COLUMN_PREFIX, type DerivedColumn, type EngineSortOrder, type InputFooter } from './port.js';
import { pageSortType, topLevelPrimitive } from './sort-columns.js';
import { sqlIdentifier } from './sql.js';

/**
 * The sort keys (and the columns they are computed from) giving Hudi's DIRECT z-order of `columns` (names, as
 * configured) over inputs of one schema (`footers`, one per input), or undefined when the engine cannot compute that
 * key exactly.
 */
export function directZOrderSortKeys(footers: readonly InputFooter[], columns: readonly string[]): EngineSortOrder | undefined {
  if (columns.length !== 2 || footers.length === 0) return undefined;
  const schema = footers[0]!.columns;
  if (footers.some((footer) => footer.columns !== schema && JSON.stringify(footer.columns) !== JSON.stringify(schema))) return undefined;
  const described: { name: string; schemaPosition: number; type: SortColumnType }[] = [];
  for (const name of columns) {
    const found = topLevelPrimitive(schema, name);
    const type = found === undefined ? undefined : zOrderType(found.leaf);
    if (found === undefined || type === undefined) return undefined;
    described.push({ name, schemaPosition: found.schemaPosition, type });
  }
  // Hudi visits the columns in its HashMap's order of their schema positions, not as configured.
  const [first, second] = hudiDirectColumnOrder(described.map((column) => column.schemaPosition)).map((index) => described[index]!);
  const words = [zOrderWordSql(first!.name, first!.type), zOrderWordSql(second!.name, second!.type)];
  if (words.some((word) => word === undefined)) return undefined;
  const [a, b] = words as [string, string];
  return interleavedOrder(a, b);
}

/**
 * The Spark type a Parquet leaf is read as (as the page decoder and DuckDB's scan read it), where its z-order word
 * has an exact SQL form here: not floating point; binary (BYTE_ARRAY without an annotation) besides.
 */
function zOrderType(leaf: ParquetColumnInfo): SortColumnType | undefined {
  if (leaf.physicalType === 'BYTE_ARRAY' && leaf.logicalType === undefined) return 'binary';
  const type = pageSortType(leaf)?.type;
  return type === 'float' || type === 'double' ? undefined : type;
}

const UINT64_MAX = '18446744073709551615::UBIGINT';

/**
 * A signed 64-bit value's z-order word, `v XOR 1<<63` read unsigned (BinaryUtil.longTo8Byte), null as Long.MAX_VALUE
 * would give (all ones): v + 2^63 for v ≥ 0, and for v < 0 its bits with the sign bit cleared (no branch can overflow).
 */
function longWordSql(value: string): string {
  return `(CASE WHEN ${value} >= 0 THEN CAST(${value} AS UBIGINT) + 9223372036854775808::UBIGINT
                WHEN ${value} < 0 THEN CAST(${value} & 9223372036854775807 AS UBIGINT)
                ELSE ${UINT64_MAX} END)`;
}

/** A 32-bit value's z-order word: `v XOR 1<<31` in the low 32 bits (BinaryUtil.intTo8Byte), null as `whenNull`. */
function intWordSql(value: string, whenNull: number): string {
  return `CAST(COALESCE(CAST(${value} AS BIGINT), ${whenNull}) + 2147483648 AS UBIGINT)`;
}

/** mapColumnValueTo8Bytes of one column as an unsigned 64-bit word (see zOrderEncoder in curves.ts). */
function zOrderWordSql(name: string, type: SortColumnType): string | undefined {
  const column = sqlIdentifier(name);
  switch (type) {
    case 'long':
      return longWordSql(column);
    case 'date':
      // java.sql.Date millis at UTC midnight; days × 86,400,000 stays far inside a long for any date DuckDB holds.
      return longWordSql(`(CAST(${column} - DATE '1970-01-01' AS BIGINT) * 86400000)`);
    case 'timestamp': {
      // Timestamp.getTime(): floor(micros / 1000); DuckDB's // truncates toward zero.
      const micros = `epoch_us(${column})`;
      return longWordSql(`(${micros} // 1000 - CASE WHEN ${micros} % 1000 < 0 THEN 1 ELSE 0 END)`);
    }
    case 'int':
      return intWordSql(column, 2147483647);
    case 'short':
      return intWordSql(column, 32767);
    case 'byte':
      // BinaryUtil.byteTo8Byte: the byte's bits unsigned, no sign flip; null as Byte.MAX_VALUE.
      return `CAST(COALESCE(CAST(${column} AS INTEGER), 127) & 255 AS UBIGINT)`;
    case 'boolean':
      // true → 1, false and null → 0, then the int sign flip.
      return `(CASE WHEN ${column} THEN 2147483649 ELSE 2147483648 END)::UBIGINT`;
    case 'string':
      // The first 8 bytes of the UTF-8 encoding, left-padded with zeros; null as "" (zero). '0x0' keeps "" parseable.
      return `CAST('0x0' || hex(encode(COALESCE(${column}, ''))[1:8]) AS UBIGINT)`;
    case 'binary':
      // paddingTo8Byte; null as the one byte 0 (zero).
      return `CAST('0x0' || hex(COALESCE(${column}, ''::BLOB)[1:8]) AS UBIGINT)`;
    default:
      return undefined;
  }
}

/** The shift-and-mask steps that move bit i of a 32-bit value to bit 2i of a 64-bit one (shifts of UBIGINT never overflow). */
const SPREAD_STEPS: readonly (readonly [shift: number, mask: bigint])[] = [
  [16, 0x0000ffff0000ffffn],
  [8, 0x00ff00ff00ff00ffn],
  [4, 0x0f0f0f0f0f0f0f0fn],
  [2, 0x3333333333333333n],
  [1, 0x5555555555555555n],
];

/** The derived columns' names. */
const derived = (name: string): string => `${DERIVED_COLUMN_PREFIX}z_${name}`;

/**
 * The 128-bit interleaving of words a and b as two UBIGINT halves, in layers of columns: the words, their 32-bit
 * halves, then each spread step of the four halves. Nested in one expression, every step would name the one before it
 * twice (2^5 copies of each word in a half): DuckDB computes such repeats once in a projection, but a filter inlines
 * the expression whole, and even in a projection the layers are faster.
 */
function interleavedOrder(a: string, b: string): EngineSortOrder {
  const column = (name: string, sqlExpression: string): DerivedColumn => ({ name: derived(name), sqlExpression });
  const ref = (name: string): string => sqlIdentifier(derived(name));
  const parts = ['ah', 'al', 'bh', 'bl'] as const;
  const layers: DerivedColumn[][] = [
    [column('a', a), column('b', b)],
    [
      column('ah0', `${ref('a')} >> 32`),
      column('al0', `${ref('a')} & 4294967295::UBIGINT`),
      column('bh0', `${ref('b')} >> 32`),
      column('bl0', `${ref('b')} & 4294967295::UBIGINT`),
    ],
  ];
  SPREAD_STEPS.forEach(([shift, mask], step) => {
    layers.push(parts.map((part) => column(`${part}${step + 1}`, `(${ref(`${part}${step}`)} | (${ref(`${part}${step}`)} << ${shift})) & ${mask}::UBIGINT`)));
  });
  const last = SPREAD_STEPS.length;
  // a's bits in the odd (more significant) places of each half.
  return {
    orderBy: [{ sqlExpression: `(${ref(`ah${last}`)} << 1) | ${ref(`bh${last}`)}` }, { sqlExpression: `(${ref(`al${last}`)} << 1) | ${ref(`bl${last}`)}` }],
    derivedColumns: layers,
  };
}
