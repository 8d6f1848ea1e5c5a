/**
 * Avro log records as table rows: the values a Parquet base file of the same schema reads as (row-format.ts), so a
 * record merged from a log block and one read from a base file look alike. Records are decoded by avsc with wrapped
 * unions and bigint longs; the schema says how each value maps (logical types included).
 */

import {
  bytesToJson,
  dateToJson,
  decimalToJson,
  float32ToJson,
  float64ToJson,
  integerToJson,
  type JsonValue,
  mapToJson,
  type Row,
  timestampToJson,
  timeToJson,
} from '../engine/row-format.js';
import { HudiError } from '../errors.js';
import { twosComplementToBigint } from '../log-format/index.js';

export type AvroSchemaJson = string | readonly AvroSchemaJson[] | { readonly [key: string]: unknown };

/** One decoded Avro record (avsc, wrapUnions: true, longs: 'bigint') of `schema` as a row. */
export function avroRecordToRow(schema: AvroSchemaJson, value: unknown): Row {
  const converted = toJson(schema, value, new Map());
  if (converted === null || typeof converted !== 'object' || Array.isArray(converted)) {
    throw new HudiError('a log block record is not an Avro record', { fix: 'the log block schema is not a record schema; the log file is corrupt' });
  }
  return converted;
}

/** The top-level field names of a record schema, in order. */
export function recordFieldNames(schema: AvroSchemaJson): string[] {
  if (typeof schema !== 'object' || Array.isArray(schema) || (schema as { type?: unknown }).type !== 'record') return [];
  return ((schema as { fields?: { name: string }[] }).fields ?? []).map((field) => field.name);
}

function toJson(schema: AvroSchemaJson, value: unknown, named: Map<string, AvroSchemaJson>): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof schema === 'string') return primitive(schema, value, named);
  if (Array.isArray(schema)) return union(schema, value, named);
  const object = schema as { readonly [key: string]: unknown };
  const type = object['type'] as AvroSchemaJson;
  const logical = object['logicalType'];
  if (typeof logical === 'string') {
    const converted = logicalValue(logical, object, value);
    if (converted !== undefined) return converted;
  }
  switch (type) {
    case 'record':
    case 'error': {
      remember(object, named);
      const row: Row = {};
      const fields = (object['fields'] ?? []) as { name: string; type: AvroSchemaJson }[];
      const record = value as Record<string, unknown>;
      for (const field of fields) row[field.name] = toJson(field.type, record[field.name], named);
      return row;
    }
    case 'enum':
      remember(object, named);
      return String(value);
    case 'fixed':
      remember(object, named);
      return bytesToJson(value as Uint8Array);
    case 'array':
      return (value as unknown[]).map((item) => toJson(object['items'] as AvroSchemaJson, item, named));
    case 'map':
      return mapToJson(
        Object.entries(value as Record<string, unknown>).map(([key, entry]) => [key, toJson(object['values'] as AvroSchemaJson, entry, named)] as const),
      );
    default:
      return toJson(type, value, named);
  }
}

function remember(schema: { readonly [key: string]: unknown }, named: Map<string, AvroSchemaJson>): void {
  const name = schema['name'];
  if (typeof name !== 'string') return;
  named.set(name, schema);
  const namespace = schema['namespace'];
  if (typeof namespace === 'string' && !name.includes('.')) named.set(`${namespace}.${name}`, schema);
}

function primitive(type: string, value: unknown, named: Map<string, AvroSchemaJson>): JsonValue {
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return Boolean(value);
    case 'int':
      return Number(value);
    case 'long':
      return integerToJson(typeof value === 'bigint' ? value : BigInt(value as number));
    case 'float':
      return float32ToJson(Number(value));
    case 'double':
      return float64ToJson(Number(value));
    case 'string':
      return String(value);
    case 'bytes':
      return bytesToJson(value as Uint8Array);
    default: {
      const schema = named.get(type) ?? [...named].find(([name]) => name.endsWith(`.${type}`))?.[1];
      if (schema === undefined) throw new HudiError(`Avro type "${type}" of a log block record is not defined in its schema`);
      return toJson(schema, value, named);
    }
  }
}

/** Wrapped union value `{ "<branch>": value }`: the branch named so, or the one non-null branch. */
function union(branches: readonly AvroSchemaJson[], value: unknown, named: Map<string, AvroSchemaJson>): JsonValue {
  const entries = Object.entries(value as Record<string, unknown>);
  const [branchName, inner] = entries[0] ?? [];
  if (branchName === undefined) return null;
  const nonNull = branches.filter((branch) => branch !== 'null');
  const chosen =
    nonNull.length === 1 ? nonNull[0]! : nonNull.find((branch) => branchNameOf(branch) === branchName || branchName.endsWith(`.${branchNameOf(branch)}`));
  if (chosen === undefined) throw new HudiError(`union branch "${branchName}" of a log block record is not in its schema`);
  return toJson(chosen, inner, named);
}

function branchNameOf(schema: AvroSchemaJson): string {
  if (typeof schema === 'string') return schema;
  if (Array.isArray(schema)) return 'union';
  const object = schema as { readonly [key: string]: unknown };
  const type = object['type'];
  if (type === 'record' || type === 'enum' || type === 'fixed' || type === 'error') {
    const name = String(object['name']);
    const namespace = object['namespace'];
    return typeof namespace === 'string' && !name.includes('.') ? `${namespace}.${name}` : name;
  }
  return typeof type === 'string' ? type : 'union';
}

function logicalValue(logical: string, schema: { readonly [key: string]: unknown }, value: unknown): JsonValue | undefined {
  const long = (): bigint => (typeof value === 'bigint' ? value : BigInt(value as number));
  switch (logical) {
    case 'date':
      return dateToJson(Number(value));
    case 'timestamp-millis':
    case 'local-timestamp-millis':
      return timestampToJson(long() * 1_000_000n);
    case 'timestamp-micros':
    case 'local-timestamp-micros':
      return timestampToJson(long() * 1_000n);
    case 'time-millis':
      return timeToJson(BigInt(Number(value)) * 1_000_000n);
    case 'time-micros':
      return timeToJson(long() * 1_000n);
    case 'decimal':
      return decimalToJson(twosComplementToBigint(value as Uint8Array), Number(schema['scale'] ?? 0));
    default:
      return undefined;
  }
}
