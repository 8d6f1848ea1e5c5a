/**
 * The Parquet schema as readers see it: one element per schema node (ParquetColumnInfo, what a footer's
 * SchemaElement list says), folded into a type tree per top-level column with list and map wrappers resolved by the
 * Parquet spec's backward-compatibility rules (LogicalTypes.md, "Lists" and "Maps"). The tree is what type repair
 * plans over and what output types are compared by.
 */
import { HudiError } from '../errors.js';
import type { ThriftStruct } from './thrift.js';

export type ParquetPhysicalType = 'BOOLEAN' | 'INT32' | 'INT64' | 'INT96' | 'FLOAT' | 'DOUBLE' | 'BYTE_ARRAY' | 'FIXED_LEN_BYTE_ARRAY';

export type ParquetTimeUnit = 'MILLIS' | 'MICROS' | 'NANOS';

/** One Parquet schema element (the root excluded), in schema order: groups before their children. */
export interface ParquetColumnInfo {
  /** Names from the top-level column down to this element, e.g. ['arrayField', 'array', 'arr_struct_f1']. */
  path: string[];
  name: string;
  repetition: 'REQUIRED' | 'OPTIONAL' | 'REPEATED';
  /** 0 for primitive (leaf) columns. */
  numChildren: number;
  /** Leaves only. */
  physicalType?: ParquetPhysicalType;
  /** FIXED_LEN_BYTE_ARRAY only. */
  typeLength?: number;
  /** The logical type annotation: 'STRING', 'DECIMAL', 'DATE', 'TIMESTAMP', 'TIME', 'INTEGER', 'LIST', 'MAP', 'ENUM', 'JSON', 'UUID', … */
  logicalType?: string;
  /** The legacy converted type: 'UTF8', 'DECIMAL', 'TIMESTAMP_MILLIS', 'LIST', 'MAP', 'MAP_KEY_VALUE', … */
  convertedType?: string;
  precision?: number;
  scale?: number;
  /** TIMESTAMP and TIME. */
  timeUnit?: ParquetTimeUnit;
  isAdjustedToUTC?: boolean;
  /** INTEGER annotations. */
  bitWidth?: number;
  isSigned?: boolean;
}

/** How an output column's Parquet type differs from the input's. */
export interface SchemaDeviation {
  /** '.'-joined column path; '[]' marks list elements, '{key}'/'{value}' map parts. */
  column: string;
  input: string;
  output: string;
  /** true when Spark and parquet-avro (Hudi) read both the same way, e.g. a 2-level vs a 3-level list. */
  compatible: boolean;
}

/** A schema subtree as readers see it: list and map wrappers resolved. `leafIndex` is the leaf's column chunk index. */
export type TypeNode =
  | { kind: 'primitive'; info: ParquetColumnInfo; leafIndex: number }
  | { kind: 'list'; element: TypeNode; twoLevel: boolean }
  | { kind: 'map'; key: TypeNode; value: TypeNode | undefined }
  | { kind: 'struct'; fields: Map<string, TypeNode> };

/** The type tree of each top-level column, in schema order. */
export type TopLevelFields = ReadonlyMap<string, TypeNode>;

interface SchemaCursor {
  columns: readonly ParquetColumnInfo[];
  next: number;
  leaves: number;
}

/** The element at the cursor; a group that claims more children than follow ends the schema early. */
function peek(cursor: SchemaCursor): ParquetColumnInfo {
  const column = cursor.columns[cursor.next];
  if (column === undefined) {
    throw new HudiError(`Parquet schema ends early: element ${cursor.next + 1} of ${cursor.columns.length} is missing`, {
      fix: 'a group of the schema counts more children than the file has elements: the footer is corrupt',
    });
  }
  return column;
}

/** The element at the cursor, moving past it. */
function take(cursor: SchemaCursor): ParquetColumnInfo {
  const column = peek(cursor);
  cursor.next++;
  return column;
}

/** Top-level columns of one file's schema (elements in schema order, root excluded) → their type trees. */
export function topLevelFields(columns: readonly ParquetColumnInfo[]): Map<string, TypeNode> {
  const cursor: SchemaCursor = { columns, next: 0, leaves: 0 };
  const fields = new Map<string, TypeNode>();
  while (cursor.next < columns.length) {
    const column = peek(cursor);
    fields.set(column.name, readField(cursor));
  }
  return fields;
}

/** For each column, the type tree of the last schema that has it (schemas of files in commit order). */
export function latestTopLevelFields(schemas: Iterable<readonly ParquetColumnInfo[]>): Map<string, TypeNode> {
  const result = new Map<string, TypeNode>();
  for (const schema of schemas) {
    for (const [name, node] of topLevelFields(schema)) result.set(name, node);
  }
  return result;
}

/** Reads the element at the cursor and its subtree; a REPEATED field outside a list wrapper is a list itself. */
function readField(cursor: SchemaCursor): TypeNode {
  const info = peek(cursor);
  const node = readElement(cursor);
  return info.repetition === 'REPEATED' ? { kind: 'list', element: node, twoLevel: true } : node;
}

function readElement(cursor: SchemaCursor): TypeNode {
  const info = take(cursor);
  if (info.numChildren === 0) return { kind: 'primitive', info, leafIndex: cursor.leaves++ };
  const isList = info.logicalType === 'LIST' || info.convertedType === 'LIST';
  const isMap = info.logicalType === 'MAP' || info.convertedType === 'MAP' || info.convertedType === 'MAP_KEY_VALUE';
  if (isList && info.numChildren === 1) {
    const repeated = peek(cursor);
    const elementIsRepeatedGroup = repeated.numChildren !== 1 || repeated.name === 'array' || repeated.name === `${info.name}_tuple`;
    if (repeated.numChildren === 0 || elementIsRepeatedGroup) {
      return { kind: 'list', element: readElement(cursor), twoLevel: true };
    }
    cursor.next++; // the repeated wrapper around the element
    return { kind: 'list', element: readField(cursor), twoLevel: false };
  }
  if (isMap && info.numChildren === 1) {
    const keyValue = take(cursor);
    const key = readField(cursor);
    const value = keyValue.numChildren > 1 ? readField(cursor) : undefined;
    for (let extra = 2; extra < keyValue.numChildren; extra++) readField(cursor);
    return { kind: 'map', key, value };
  }
  const fields = new Map<string, TypeNode>();
  for (let child = 0; child < info.numChildren; child++) {
    const name = peek(cursor).name;
    fields.set(name, readField(cursor));
  }
  return { kind: 'struct', fields };
}

/** A leaf's type as one comparable phrase, e.g. 'FIXED_LEN_BYTE_ARRAY(5) DECIMAL(10,5)' or 'INT64 TIMESTAMP(MILLIS, UTC)'. */
export function describeParquetType(info: ParquetColumnInfo): string {
  const physical = info.physicalType ?? 'GROUP';
  const storage = info.physicalType === 'FIXED_LEN_BYTE_ARRAY' ? `${physical}(${info.typeLength ?? '?'})` : physical;
  const logical = (() => {
    switch (info.logicalType) {
      case 'DECIMAL':
        return `DECIMAL(${info.precision ?? '?'},${info.scale ?? '?'})`;
      case 'TIMESTAMP':
      case 'TIME':
        return `${info.logicalType}(${info.timeUnit ?? '?'}, ${info.isAdjustedToUTC ? 'UTC' : 'local'})`;
      case 'INTEGER':
        return `INT(${info.bitWidth ?? '?'}, ${info.isSigned === false ? 'unsigned' : 'signed'})`;
      case undefined:
        // Plain INT32/INT64 and an INT(32|64, signed) annotation mean the same to every reader.
        if (physical === 'INT32') return 'INT(32, signed)';
        if (physical === 'INT64') return 'INT(64, signed)';
        return '';
      default:
        return info.logicalType;
    }
  })();
  return logical === '' ? storage : `${storage} ${logical}`;
}

function describeNode(node: TypeNode | undefined): string {
  if (node === undefined) return 'absent';
  if (node.kind === 'primitive') return describeParquetType(node.info);
  return node.kind === 'list' ? `LIST (${node.twoLevel ? '2-level' : '3-level'})` : node.kind.toUpperCase();
}

const STRING_LIKE = /^BYTE_ARRAY (STRING|ENUM|JSON)$/;

/** How each output column's type differs from the input's (output columns only; compatible ones flagged). */
export function compareFields(input: TopLevelFields, output: TopLevelFields): SchemaDeviation[] {
  const deviations: SchemaDeviation[] = [];
  for (const [name, outputNode] of output) compareNodes(name, input.get(name), outputNode, deviations);
  return deviations;
}

function compareNodes(column: string, input: TypeNode | undefined, output: TypeNode | undefined, deviations: SchemaDeviation[]): void {
  if (input === undefined && output === undefined) return;
  if (input === undefined || output === undefined || input.kind !== output.kind) {
    deviations.push({ column, input: describeNode(input), output: describeNode(output), compatible: false });
    return;
  }
  if (input.kind === 'primitive' && output.kind === 'primitive') {
    const before = describeParquetType(input.info);
    const after = describeParquetType(output.info);
    if (before !== after) {
      deviations.push({ column, input: before, output: after, compatible: STRING_LIKE.test(before) && STRING_LIKE.test(after) });
    }
  } else if (input.kind === 'list' && output.kind === 'list') {
    if (input.twoLevel !== output.twoLevel) {
      deviations.push({ column, input: describeNode(input), output: describeNode(output), compatible: true });
    }
    compareNodes(`${column}[]`, input.element, output.element, deviations);
  } else if (input.kind === 'map' && output.kind === 'map') {
    compareNodes(`${column}{key}`, input.key, output.key, deviations);
    compareNodes(`${column}{value}`, input.value, output.value, deviations);
  } else if (input.kind === 'struct' && output.kind === 'struct') {
    for (const name of new Set([...input.fields.keys(), ...output.fields.keys()])) {
      compareNodes(`${column}.${name}`, input.fields.get(name), output.fields.get(name), deviations);
    }
  }
}

/**
 * Targets for a new table's first files: their own types, but decimals as FIXED_LEN_BYTE_ARRAY of Spark's size for
 * the precision, as Hudi's Avro writer stores them (parquet-avro reads a `fixed` decimal schema only from those;
 * DuckDB writes decimals up to 18 digits as INT32/INT64).
 */
export function withFixedDecimals(targets: TopLevelFields): TopLevelFields {
  const visit = (node: TypeNode): TypeNode => {
    switch (node.kind) {
      case 'primitive': {
        const { info } = node;
        if (info.logicalType !== 'DECIMAL' || info.precision === undefined) return node;
        const typeLength = decimalFixedBytes(info.precision);
        if (info.physicalType === 'FIXED_LEN_BYTE_ARRAY' && info.typeLength === typeLength) return node;
        return { ...node, info: { ...info, physicalType: 'FIXED_LEN_BYTE_ARRAY', typeLength } };
      }
      case 'list':
        return { ...node, element: visit(node.element) };
      case 'map':
        return { ...node, key: visit(node.key), value: node.value === undefined ? undefined : visit(node.value) };
      case 'struct':
        return { ...node, fields: new Map([...node.fields].map(([name, child]) => [name, visit(child)])) };
    }
  };
  return new Map([...targets].map(([name, node]) => [name, visit(node)]));
}

/** Bytes Spark (and so Hudi) gives a decimal of this precision: Decimal.minBytesForPrecision. */
export function decimalFixedBytes(precision: number): number {
  let bytes = 1;
  while (2 ** (8 * bytes - 1) < 10 ** precision) bytes++;
  return bytes;
}

// ---------------------------------------------------------------------------------------------------------------
// From a footer's SchemaElement list (parquet.thrift), without an engine.

const PHYSICAL_BY_CODE: readonly ParquetPhysicalType[] = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];
const REPETITION_BY_CODE: readonly ParquetColumnInfo['repetition'][] = ['REQUIRED', 'OPTIONAL', 'REPEATED'];
/** ConvertedType, by its Thrift code. */
const CONVERTED_BY_CODE: readonly string[] = [
  'UTF8',
  'MAP',
  'MAP_KEY_VALUE',
  'LIST',
  'ENUM',
  'DECIMAL',
  'DATE',
  'TIME_MILLIS',
  'TIME_MICROS',
  'TIMESTAMP_MILLIS',
  'TIMESTAMP_MICROS',
  'UINT_8',
  'UINT_16',
  'UINT_32',
  'UINT_64',
  'INT_8',
  'INT_16',
  'INT_32',
  'INT_64',
  'JSON',
  'BSON',
  'INTERVAL',
];
/** LogicalType union members, by field id. */
const LOGICAL_BY_FIELD: Readonly<Record<number, string>> = {
  1: 'STRING',
  2: 'MAP',
  3: 'LIST',
  4: 'ENUM',
  5: 'DECIMAL',
  6: 'DATE',
  7: 'TIME',
  8: 'TIMESTAMP',
  10: 'INTEGER',
  11: 'UNKNOWN',
  12: 'JSON',
  13: 'BSON',
  14: 'UUID',
  15: 'FLOAT16',
  16: 'VARIANT',
  17: 'GEOMETRY',
  18: 'GEOGRAPHY',
};
const TIME_UNIT_BY_FIELD: Readonly<Record<number, ParquetTimeUnit>> = { 1: 'MILLIS', 2: 'MICROS', 3: 'NANOS' };

/**
 * A footer's schema elements (root first, as FileMetaData.schema lists them) → ParquetColumnInfo per element, root
 * excluded: the same description lib/engine's DuckDB schema query gives, read straight from the Thrift.
 */
export function columnInfosFromSchemaElements(elements: readonly ThriftStruct[]): ParquetColumnInfo[] {
  const columns: ParquetColumnInfo[] = [];
  const root = { path: [] as string[], remaining: elements[0]?.int(5) ?? 0 };
  // The root never leaves the stack, so the parent is always an element of it.
  const stack: { path: string[]; remaining: number }[] = [root];
  for (const element of elements.slice(1)) {
    let parent = stack.at(-1) ?? root;
    while (stack.length > 1 && parent.remaining === 0) {
      stack.pop();
      parent = stack.at(-1) ?? root;
    }
    parent.remaining -= 1;
    const name = Buffer.from(element.binary(4) ?? new Uint8Array()).toString('utf8');
    const numChildren = element.int(5) ?? 0;
    const path = [...parent.path, name];
    columns.push(columnInfoOf(element, name, path, numChildren));
    if (numChildren > 0) stack.push({ path, remaining: numChildren });
  }
  return columns;
}

/**
 * Whether a leaf's annotation is INTEGER(32|64, signed) on INT32|INT64: DuckDB writes it on every INTEGER and BIGINT,
 * Hudi's writers (parquet-avro, Spark's row writer) never do, and Hudi 1.1's column-stats reader refuses a footer
 * that has it. It tells a reader nothing the physical type does not, so dropping it changes no value read.
 */
export function isRedundantIntegerAnnotation(info: ParquetColumnInfo): boolean {
  return (
    info.logicalType === 'INTEGER' &&
    info.isSigned !== false &&
    ((info.physicalType === 'INT32' && info.bitWidth === 32) || (info.physicalType === 'INT64' && info.bitWidth === 64))
  );
}

/** Drop a schema element's redundant INTEGER annotation (isRedundantIntegerAnnotation): its logical and converted type. */
export function dropIntegerAnnotation(element: ThriftStruct): void {
  element.delete(10);
  element.delete(6);
}

/** Drop every redundant INTEGER annotation of a footer's schema elements (root first), in place. */
export function dropRedundantIntegerAnnotations(elements: readonly ThriftStruct[]): void {
  const infos = columnInfosFromSchemaElements(elements);
  infos.forEach((info, index) => {
    const element = elements[index + 1];
    if (element !== undefined && info.numChildren === 0 && isRedundantIntegerAnnotation(info)) dropIntegerAnnotation(element);
  });
}

function columnInfoOf(element: ThriftStruct, name: string, path: string[], numChildren: number): ParquetColumnInfo {
  const info: ParquetColumnInfo = { path, name, repetition: REPETITION_BY_CODE[element.int(3) ?? 0] ?? 'OPTIONAL', numChildren };
  if (numChildren === 0) {
    const physical = element.int(1);
    if (physical !== undefined) info.physicalType = PHYSICAL_BY_CODE[physical];
    if (info.physicalType === 'FIXED_LEN_BYTE_ARRAY' && element.int(2) !== undefined) info.typeLength = element.int(2);
  }
  const converted = element.int(6);
  if (converted !== undefined && CONVERTED_BY_CODE[converted] !== undefined) info.convertedType = CONVERTED_BY_CODE[converted];
  if (element.int(7) !== undefined) info.scale = element.int(7);
  if (element.int(8) !== undefined) info.precision = element.int(8);
  const logical = element.struct(10);
  const member =
    logical === undefined
      ? undefined
      : Object.keys(LOGICAL_BY_FIELD)
          .map(Number)
          .find((id) => logical.has(id));
  if (logical !== undefined && member !== undefined) {
    info.logicalType = LOGICAL_BY_FIELD[member];
    const details = logical.struct(member);
    if (member === 5 && details !== undefined) {
      if (details.int(1) !== undefined) info.scale = details.int(1);
      if (details.int(2) !== undefined) info.precision = details.int(2);
    }
    if ((member === 7 || member === 8) && details !== undefined) {
      info.isAdjustedToUTC = details.bool(1) === true;
      const unit = details.struct(2);
      const unitField = unit === undefined ? undefined : [1, 2, 3].find((id) => unit.has(id));
      if (unitField !== undefined) info.timeUnit = TIME_UNIT_BY_FIELD[unitField];
    }
    if (member === 10 && details !== undefined) {
      if (details.int(1) !== undefined) info.bitWidth = details.int(1);
      info.isSigned = details.bool(2) !== false;
    }
  } else if (info.convertedType !== undefined) {
    applyConvertedType(info, info.convertedType);
  }
  return info;
}

/** Legacy converted types imply a logical type (Parquet spec: old TIMESTAMP_* are UTC-adjusted). */
export function applyConvertedType(info: ParquetColumnInfo, convertedType: string): void {
  const integer = /^(U?)INT_(8|16|32|64)$/.exec(convertedType);
  if (integer) {
    info.logicalType = 'INTEGER';
    info.bitWidth = Number(integer[2]);
    info.isSigned = integer[1] === '';
    return;
  }
  const time = /^(TIME|TIMESTAMP)_(MILLIS|MICROS)$/.exec(convertedType);
  if (time) {
    info.logicalType = time[1];
    info.timeUnit = time[2] as ParquetTimeUnit;
    info.isAdjustedToUTC = true;
    return;
  }
  const named: Record<string, string> = {
    UTF8: 'STRING',
    DECIMAL: 'DECIMAL',
    DATE: 'DATE',
    LIST: 'LIST',
    MAP: 'MAP',
    ENUM: 'ENUM',
    JSON: 'JSON',
    BSON: 'BSON',
  };
  const logical = named[convertedType];
  if (logical !== undefined) info.logicalType = logical;
}
