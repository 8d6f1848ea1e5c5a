/**
 * Input columns cast to the table's column types without changing a value. DuckDB's casts round (1.5 and '1.5' →
 * BIGINT 2, '1.234' → DECIMAL(10,2) 1.23), truncate ('2024-01-01 12:34' → DATE 2024-01-01, sub-microsecond digits),
 * parse liberally ('0x10' → 16, '1_000' → 1000, 'yes' → true), drop struct fields the target lacks, and render
 * autodetected JSON/CSV dates back to text in their own format. A write stores what the input says or nothing, so
 * every cast here comes with a predicate that finds the values it would change; the writer refuses those.
 *
 * Floating-point columns are the one exception: a fractional number takes the nearest FLOAT or DOUBLE, as it does
 * wherever such a column is written (JSON has no float type to be exact in). Whole numbers must convert exactly.
 */
import type { DuckDBDecimalType, DuckDBListType, DuckDBMapType, DuckDBStructType, DuckDBType, DuckDBTypeId } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';
import { sqlString } from './sql.js';

export type Family = 'int' | 'decimal' | 'float' | 'string' | 'json' | 'bool' | 'date' | 'timestamp' | 'blob' | 'struct' | 'list' | 'map' | 'null' | 'other';

/** The type-id tables, built on first use (DuckDB loads lazily: lib/engine/duckdb.ts). */
let typeTables: { integerTypes: ReadonlySet<DuckDBTypeId>; timestampDigits: ReadonlyMap<DuckDBTypeId, number> } | undefined;

function tables(): { integerTypes: ReadonlySet<DuckDBTypeId>; timestampDigits: ReadonlyMap<DuckDBTypeId, number> } {
  if (typeTables !== undefined) return typeTables;
  const { DuckDBTypeId } = duckdb();
  const integerTypes = new Set<DuckDBTypeId>([
    DuckDBTypeId.TINYINT,
    DuckDBTypeId.SMALLINT,
    DuckDBTypeId.INTEGER,
    DuckDBTypeId.BIGINT,
    DuckDBTypeId.HUGEINT,
    DuckDBTypeId.UTINYINT,
    DuckDBTypeId.USMALLINT,
    DuckDBTypeId.UINTEGER,
    DuckDBTypeId.UBIGINT,
    DuckDBTypeId.UHUGEINT,
  ]);
  /** Fractional-second digits each timestamp type keeps. */
  const timestampDigits = new Map<DuckDBTypeId, number>([
    [DuckDBTypeId.TIMESTAMP_S, 0],
    [DuckDBTypeId.TIMESTAMP_MS, 3],
    [DuckDBTypeId.TIMESTAMP, 6],
    [DuckDBTypeId.TIMESTAMP_TZ, 6],
    [DuckDBTypeId.TIMESTAMP_NS, 9],
  ]);
  typeTables = { integerTypes, timestampDigits };
  return typeTables;
}

function familyOf(type: DuckDBType): Family {
  const { DuckDBTypeId } = duckdb();
  if (type.alias === 'JSON') return 'json';
  if (tables().integerTypes.has(type.typeId)) return 'int';
  if (tables().timestampDigits.has(type.typeId)) return 'timestamp';
  switch (type.typeId) {
    case DuckDBTypeId.DECIMAL:
      return 'decimal';
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return 'float';
    case DuckDBTypeId.VARCHAR:
      return 'string';
    case DuckDBTypeId.BOOLEAN:
      return 'bool';
    case DuckDBTypeId.DATE:
      return 'date';
    case DuckDBTypeId.BLOB:
      return 'blob';
    case DuckDBTypeId.STRUCT:
      return 'struct';
    case DuckDBTypeId.LIST:
      return 'list';
    case DuckDBTypeId.MAP:
      return 'map';
    case DuckDBTypeId.SQLNULL:
      return 'null';
    default:
      return 'other';
  }
}

/**
 * A type as SQL text. JSON keeps its name at any depth: DuckDB reports it as an aliased VARCHAR, and its own text of
 * a struct, list or map drops the alias inside, so a struct field holding JSON would read as VARCHAR, compare equal
 * to the table's VARCHAR and be written as JSON (whose values the next merge then fails to parse).
 */
export function typeSql(type: DuckDBType): string {
  const { DuckDBListType, DuckDBMapType, DuckDBStructType } = duckdb();
  if (type.alias === 'JSON') return 'JSON';
  if (type instanceof DuckDBStructType) {
    return `STRUCT(${type.entryNames.map((name, index) => `"${name.replaceAll('"', '""')}" ${typeSql(type.entryTypes[index]!)}`).join(', ')})`;
  }
  if (type instanceof DuckDBListType) return `${typeSql(type.valueType)}[]`;
  if (type instanceof DuckDBMapType) return `MAP(${typeSql(type.keyType)}, ${typeSql(type.valueType)})`;
  return type.toString();
}

export interface ExactCast {
  /** `expr` cast to the target type. */
  readonly cast: string;
  /** The same cast giving NULL where it fails (to show what a refused value would have become). */
  readonly tryCast: string;
  /** True for a non-null value the cast would change or cannot convert; undefined when no value can be changed. */
  readonly changes: string | undefined;
}

/** The cast of `expr` (of type `from`) to `to`, and the predicate that finds the values it would change. */
export function exactCast(expr: string, from: DuckDBType, to: DuckDBType): ExactCast {
  const { VARCHAR } = duckdb();
  const target = typeSql(to);
  if (typeSql(from) === target) return { cast: expr, tryCast: expr, changes: undefined };
  const fromFamily = familyOf(from);
  const toFamily = familyOf(to);
  const plain = { cast: `CAST(${expr} AS ${target})`, tryCast: `TRY_CAST(${expr} AS ${target})` };
  if (fromFamily === 'null') return { ...plain, changes: undefined };
  // Mixed-type JSON fields arrive as JSON: their text is the value ('"y"' is the string y).
  if (fromFamily === 'json') {
    const text = `json_extract_string(${expr}, '$')`;
    return toFamily === 'string' ? { cast: text, tryCast: text, changes: undefined } : exactCast(text, VARCHAR, to);
  }
  if (fromFamily === 'string' && toFamily === 'blob') return { cast: `encode(${expr})`, tryCast: `encode(${expr})`, changes: undefined };
  return { ...plain, changes: guarded(expr, changesSql(expr, from, to, 0)) };
}

function guarded(expr: string, predicate: string | undefined): string | undefined {
  return predicate === undefined ? undefined : `(${expr} IS NOT NULL AND (${predicate}))`;
}

/** The predicate for a non-null `expr`; `depth` names lambda variables of nested lists uniquely. */
function changesSql(expr: string, from: DuckDBType, to: DuckDBType, depth: number): string | undefined {
  const target = typeSql(to);
  if (typeSql(from) === target) return undefined;
  const fromFamily = familyOf(from);
  const toFamily = familyOf(to);
  const converted = `TRY_CAST(${expr} AS ${target})`;
  const fails = `${converted} IS NULL`;
  const roundTrip = `${fails} OR CAST(${converted} AS ${typeSql(from)}) IS DISTINCT FROM ${expr}`;
  if (fromFamily === 'null') return undefined;
  if (fromFamily === 'json') return `${fails} OR CAST(${converted} AS JSON) IS DISTINCT FROM ${expr}`;

  if (fromFamily === 'struct' && toFamily === 'struct') {
    const source = from as DuckDBStructType;
    const dest = to as DuckDBStructType;
    const parts = source.entryNames.flatMap((name, index) => {
      const destIndex = dest.entryNames.indexOf(name);
      if (destIndex < 0) return [];
      const field = `struct_extract(${expr}, ${sqlString(name)})`;
      const inner = guarded(field, changesSql(field, source.entryTypes[index]!, dest.entryTypes[destIndex]!, depth));
      return inner === undefined ? [] : [inner];
    });
    return parts.length === 0 ? undefined : parts.join(' OR ');
  }
  if (fromFamily === 'list' && toFamily === 'list') {
    return listChanges(expr, (from as DuckDBListType).valueType, (to as DuckDBListType).valueType, depth);
  }
  if (fromFamily === 'map' && toFamily === 'map') {
    const source = from as DuckDBMapType;
    const dest = to as DuckDBMapType;
    const parts = [
      listChanges(`map_keys(${expr})`, source.keyType, dest.keyType, depth),
      listChanges(`map_values(${expr})`, source.valueType, dest.valueType, depth),
    ].filter((part): part is string => part !== undefined);
    return parts.length === 0 ? undefined : parts.join(' OR ');
  }

  if (fromFamily === 'string') return stringChanges(expr, to, toFamily, converted);
  // A value of one kind never becomes another: DuckDB's casts turn true into 1, 1 into true, a boolean into the text
  // "true"; Hudi's schema evolution has no such promotion either.
  if (kindChanges(fromFamily, toFamily)) return 'true';
  switch (toFamily) {
    case 'string':
      // Text of a number, date or timestamp reads back as the same value.
      return `TRY_CAST(CAST(${expr} AS VARCHAR) AS ${typeSql(from)}) IS DISTINCT FROM ${expr}`;
    case 'int':
      if (fromFamily === 'int') return fails; // out of range
      if (fromFamily === 'float') return `isnan(${expr}) OR isinf(${expr}) OR ${expr} <> trunc(${expr}) OR ${fails}`;
      return roundTrip;
    case 'decimal':
      if (fromFamily === 'int') return fails; // too many digits
      return roundTrip;
    case 'float':
      if (fromFamily === 'int') return roundTrip; // a whole number the float cannot hold exactly
      if (fromFamily === 'float' || fromFamily === 'decimal') return `${fails} OR (isinf(${converted}) AND NOT isinf(CAST(${expr} AS DOUBLE)))`;
      return roundTrip;
    default:
      return roundTrip;
  }
}

const NUMBER_FAMILIES: readonly Family[] = ['int', 'decimal', 'float'];
const TIME_FAMILIES: readonly Family[] = ['date', 'timestamp'];

/**
 * Casts that change what kind of value it is, refused for every non-null value: booleans to or from anything else,
 * numbers to or from dates and timestamps. Number to number (exact values only), number, date or timestamp to text
 * and date to timestamp are the widenings kept (Hudi's allow the first two; the exactness checks keep the values).
 */
export function kindChanges(from: Family, to: Family): boolean {
  if (from === to) return false;
  if (from === 'bool' || to === 'bool') return true;
  return (NUMBER_FAMILIES.includes(from) && TIME_FAMILIES.includes(to)) || (TIME_FAMILIES.includes(from) && NUMBER_FAMILIES.includes(to));
}

function listChanges(expr: string, from: DuckDBType, to: DuckDBType, depth: number): string | undefined {
  const element = `e${depth}`;
  const inner = guarded(element, changesSql(element, from, to, depth + 1));
  return inner === undefined ? undefined : `coalesce(list_bool_or(list_transform(${expr}, lambda ${element}: coalesce(${inner}, false))), false)`;
}

const INTEGER_TEXT = `'\\s*[+-]?[0-9]+\\s*'`;
const DECIMAL_TEXT = `'\\s*[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)\\s*'`;
const FLOAT_TEXT = `'\\s*[+-]?((([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?)|inf|infinity|nan)\\s*'`;
const DATE_TEXT = `'\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\\s*'`;

/** Text to a value: only the plain spellings of that value, and no digits the type cannot keep. */
function stringChanges(expr: string, to: DuckDBType, toFamily: Family, converted: string): string {
  const fails = `${converted} IS NULL`;
  const notLike = (pattern: string, flags = '') => `NOT regexp_full_match(${expr}, ${pattern}${flags === '' ? '' : `, '${flags}'`})`;
  switch (toFamily) {
    case 'int':
      return `${notLike(INTEGER_TEXT)} OR ${fails}`;
    case 'decimal': {
      const scale = (to as DuckDBDecimalType).scale;
      const fraction = `rtrim(regexp_extract(trim(${expr}), '\\.([0-9]*)$', 1), '0')`;
      return `${notLike(DECIMAL_TEXT)} OR ${fails} OR length(${fraction}) > ${scale}`;
    }
    case 'float':
      return `${notLike(FLOAT_TEXT, 'i')} OR ${fails}`;
    case 'bool':
      return `lower(trim(${expr})) NOT IN ('true', 'false')`;
    case 'date':
      return `${notLike(DATE_TEXT)} OR ${fails}`;
    case 'timestamp': {
      const digits = tables().timestampDigits.get(to.typeId) ?? 6;
      const fraction = `rtrim(regexp_extract(${expr}, ':[0-9]{2}[.,]([0-9]+)', 1), '0')`;
      return `${fails} OR length(${fraction}) > ${digits}`;
    }
    default:
      return `${fails} OR CAST(${converted} AS VARCHAR) IS DISTINCT FROM ${expr}`;
  }
}

/**
 * The types to read a JSON or CSV input with, so that text the table stores as text stays the input's text: DuckDB
 * would otherwise parse "2024-01-01T10:00:00" into a timestamp, which prints back as "2024-01-01 10:00:00". Where
 * the table's type (at any depth) is VARCHAR, the input is read as VARCHAR; elsewhere as DuckDB inferred it.
 */
export function readType(inferred: DuckDBType, table: DuckDBType): DuckDBType {
  const { DuckDBListType, DuckDBMapType, DuckDBStructType, DuckDBTypeId, VARCHAR } = duckdb();
  if (table.typeId === DuckDBTypeId.VARCHAR && table.alias === undefined) return VARCHAR;
  if (inferred instanceof DuckDBStructType && table instanceof DuckDBStructType) {
    return new DuckDBStructType(
      inferred.entryNames,
      inferred.entryNames.map((name, index) => {
        const tableIndex = table.entryNames.indexOf(name);
        return tableIndex < 0 ? inferred.entryTypes[index]! : readType(inferred.entryTypes[index]!, table.entryTypes[tableIndex]!);
      }),
    );
  }
  if (inferred instanceof DuckDBListType && table instanceof DuckDBListType) return new DuckDBListType(readType(inferred.valueType, table.valueType));
  if (inferred instanceof DuckDBMapType && table instanceof DuckDBMapType) {
    return new DuckDBMapType(readType(inferred.keyType, table.keyType), readType(inferred.valueType, table.valueType));
  }
  return inferred;
}

/** Fields of struct columns (at any depth, through lists and maps) one side has and the other lacks, as `a.b` paths. */
export function nestedFieldDifferences(name: string, input: DuckDBType, table: DuckDBType): { missing: string[]; added: string[] } {
  const { DuckDBListType, DuckDBMapType, DuckDBStructType } = duckdb();
  const missing: string[] = [];
  const added: string[] = [];
  const walk = (path: string, from: DuckDBType, to: DuckDBType): void => {
    if (from instanceof DuckDBStructType && to instanceof DuckDBStructType) {
      for (const field of to.entryNames) if (!from.entryNames.includes(field)) missing.push(`${path}.${field}`);
      from.entryNames.forEach((field, index) => {
        const tableIndex = to.entryNames.indexOf(field);
        if (tableIndex < 0) added.push(`${path}.${field}`);
        else walk(`${path}.${field}`, from.entryTypes[index]!, to.entryTypes[tableIndex]!);
      });
    } else if (from instanceof DuckDBListType && to instanceof DuckDBListType) {
      walk(`${path}[]`, from.valueType, to.valueType);
    } else if (from instanceof DuckDBMapType && to instanceof DuckDBMapType) {
      walk(`${path}{}`, from.valueType, to.valueType);
    }
  };
  walk(name, input, table);
  return { missing, added };
}
