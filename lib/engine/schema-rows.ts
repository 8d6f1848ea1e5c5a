/**
 * The Parquet schema of files as DuckDB reports it (parquet_schema), as ParquetColumnInfo elements with their paths,
 * and the columns of files as DuckDB types. The one place either is queried.
 */
import type { DuckDBConnection, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import type { ParquetColumnInfo, ParquetPhysicalType, ParquetTimeUnit } from '../parquet/schema.js';
import { applyConvertedType } from '../parquet/schema.js';
import { queryObjects } from './connection.js';
import { fileListSql, READ_OPTIONS } from './sql.js';
import { optionalNumber, optionalText } from './values.js';

/** A top-level column of some files, as DuckDB reads it (columns united by name). */
export interface ColumnDescription {
  name: string;
  type: DuckDBType;
}

export async function describeColumns(connection: DuckDBConnection, files: readonly string[], readOptions = READ_OPTIONS): Promise<ColumnDescription[]> {
  const reader = await connection.runAndReadAll(`SELECT * FROM read_parquet(${fileListSql(files)}, ${readOptions}) LIMIT 0`);
  const types = reader.columnTypes();
  return reader.columnNames().map((name, index) => ({ name, type: types[index]! }));
}

export interface SchemaEntry {
  info: ParquetColumnInfo;
}

/** Schema elements per file, root excluded. */
export async function readSchemas(connection: DuckDBConnection, files: readonly string[]): Promise<Map<string, SchemaEntry[]>> {
  if (files.length === 0) return new Map();
  const rows = await queryObjects(
    connection,
    `SELECT file_name, name, type, type_length, repetition_type, num_children, converted_type, scale, precision, logical_type
     FROM parquet_schema(${fileListSql(files)})`,
  );
  const byFile = new Map<string, Record<string, DuckDBValue>[]>();
  for (const row of rows) {
    const file = String(row.file_name);
    const elements = byFile.get(file);
    if (elements === undefined) byFile.set(file, [row]);
    else elements.push(row);
  }
  return new Map([...byFile].map(([file, elements]) => [file, schemaEntries(elements)]));
}

const PHYSICAL_TYPES: readonly ParquetPhysicalType[] = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];

const LOGICAL_TYPE_NAMES: Record<string, string> = {
  StringType: 'STRING',
  MapType: 'MAP',
  ListType: 'LIST',
  EnumType: 'ENUM',
  DecimalType: 'DECIMAL',
  DateType: 'DATE',
  TimeType: 'TIME',
  TimestampType: 'TIMESTAMP',
  IntType: 'INTEGER',
  NullType: 'UNKNOWN',
  JsonType: 'JSON',
  BsonType: 'BSON',
  UUIDType: 'UUID',
  Float16Type: 'FLOAT16',
  VariantType: 'VARIANT',
  GeometryType: 'GEOMETRY',
  GeographyType: 'GEOGRAPHY',
};

/** parquet_schema rows of one file (root first) → entries with paths, root dropped. */
function schemaEntries(rows: readonly Record<string, DuckDBValue>[]): SchemaEntry[] {
  const entries: SchemaEntry[] = [];
  // Remaining children per open group, to know each element's parent path.
  const stack: { path: string[]; remaining: number }[] = [];
  rows.forEach((row, index) => {
    const name = String(row.name);
    const numChildren = optionalNumber(row.num_children) ?? 0;
    if (index === 0) {
      stack.push({ path: [], remaining: numChildren });
      return;
    }
    while (stack.length > 0 && stack[stack.length - 1]!.remaining === 0) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent !== undefined) parent.remaining -= 1;
    const path = [...(parent?.path ?? []), name];
    entries.push({ info: columnInfo(row, name, path, numChildren) });
    if (numChildren > 0) stack.push({ path, remaining: numChildren });
  });
  return entries;
}

function columnInfo(row: Record<string, DuckDBValue>, name: string, path: string[], numChildren: number): ParquetColumnInfo {
  const info: ParquetColumnInfo = {
    path,
    name,
    repetition: repetitionOf(optionalText(row.repetition_type)),
    numChildren,
  };
  const physical = optionalText(row.type);
  if (physical !== undefined && numChildren === 0) {
    info.physicalType = PHYSICAL_TYPES.find((candidate) => candidate === physical);
  }
  const typeLength = optionalNumber(row.type_length);
  if (typeLength !== undefined && info.physicalType === 'FIXED_LEN_BYTE_ARRAY') info.typeLength = typeLength;
  const convertedType = optionalText(row.converted_type);
  if (convertedType !== undefined) info.convertedType = convertedType;
  const precision = optionalNumber(row.precision);
  const scale = optionalNumber(row.scale);
  if (precision !== undefined) info.precision = precision;
  if (scale !== undefined) info.scale = scale;
  const logical = optionalText(row.logical_type);
  if (logical !== undefined) {
    const kind = logical.slice(0, logical.indexOf('(') >= 0 ? logical.indexOf('(') : undefined);
    info.logicalType = LOGICAL_TYPE_NAMES[kind] ?? kind;
    const adjusted = /isAdjustedToUTC=(\d)/.exec(logical);
    if (adjusted) info.isAdjustedToUTC = adjusted[1] === '1';
    const unit = /(MILLIS|MICROS|NANOS)=(?!<null>)/.exec(logical);
    if (unit) info.timeUnit = unit[1] as ParquetTimeUnit;
    const bitWidth = /bitWidth=(\d+)/.exec(logical);
    if (bitWidth) info.bitWidth = Number(bitWidth[1]);
    const signed = /isSigned=(\d)/.exec(logical);
    if (signed) info.isSigned = signed[1] === '1';
    const decimal = /scale=(\d+), precision=(\d+)/.exec(logical);
    if (decimal) {
      info.scale = Number(decimal[1]);
      info.precision = Number(decimal[2]);
    }
  } else if (convertedType !== undefined) {
    applyConvertedType(info, convertedType);
  }
  return info;
}

function repetitionOf(text: string | undefined): ParquetColumnInfo['repetition'] {
  return text === 'REQUIRED' || text === 'REPEATED' ? text : 'OPTIONAL';
}
