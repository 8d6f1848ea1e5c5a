/**
 * The table's schema as a catalog sees it, derived the way Hudi's sync derives it: the Avro table schema (with the
 * meta fields) becomes a Parquet schema (parquet-avro's AvroSchemaConverter, old list structure: Hudi's
 * ParquetTableSchemaResolver), which becomes Hive column types (HiveSchemaUtil.parquetSchemaToMapSchema, no
 * formatting, as the Glue client asks) and Spark's schema JSON (Parquet2SparkSchemaUtils, recorded as
 * spark.sql.sources.schema.part.N). Kept as two small steps so each mirrors its Hudi counterpart.
 */
import { HudiError } from '../errors.js';
import type { AvroRecordSchema } from '../table/schema.js';

type Repetition = 'REQUIRED' | 'OPTIONAL' | 'REPEATED';
type Original =
  | 'UTF8'
  | 'ENUM'
  | 'DATE'
  | 'DECIMAL'
  | 'TIMESTAMP_MILLIS'
  | 'TIMESTAMP_MICROS'
  | 'TIME_MILLIS'
  | 'TIME_MICROS'
  | 'LIST'
  | 'MAP'
  | 'MAP_KEY_VALUE';

/** The part of a Parquet schema node the two conversions read. */
export type ParquetNode =
  | {
      readonly kind: 'primitive';
      readonly name: string;
      readonly repetition: Repetition;
      readonly type: 'BOOLEAN' | 'INT32' | 'INT64' | 'FLOAT' | 'DOUBLE' | 'BINARY' | 'FIXED_LEN_BYTE_ARRAY';
      readonly original?: Original;
      readonly precision?: number;
      readonly scale?: number;
    }
  | { readonly kind: 'group'; readonly name: string; readonly repetition: Repetition; readonly original?: Original; readonly fields: readonly ParquetNode[] };

function unsupported(what: string, location: string): HudiError {
  return new HudiError(`the table schema has ${what}, which the catalog sync cannot describe`, {
    location,
    fix: 'switch hoodie.datasource.meta.sync.enable off for this table, or change the column',
  });
}

/** parquet-avro's conversion of one Avro type (named `name`, nullable unions made OPTIONAL). */
function avroToParquet(name: string, type: unknown, repetition: Repetition, location: string): ParquetNode {
  if (Array.isArray(type)) {
    const members = type.filter(
      (member) => member !== 'null' && !(typeof member === 'object' && member !== null && (member as { type?: unknown }).type === 'null'),
    );
    if (members.length === 1) return avroToParquet(name, members[0], type.length > members.length ? 'OPTIONAL' : repetition, location);
    throw unsupported(`a union of ${members.length} types in ${name}`, location);
  }
  const schema = (typeof type === 'string' ? { type } : type) as Record<string, unknown> | null;
  if (schema === null || typeof schema !== 'object') throw unsupported(`an unreadable type in ${name}`, location);
  const avroType = schema['type'];
  if (typeof avroType === 'object') return avroToParquet(name, avroType, repetition, location);
  const logical = schema['logicalType'];
  const decimal = (base: 'INT32' | 'INT64' | 'BINARY' | 'FIXED_LEN_BYTE_ARRAY'): ParquetNode => ({
    kind: 'primitive',
    name,
    repetition,
    type: base,
    original: 'DECIMAL',
    precision: Number(schema['precision']),
    scale: Number(schema['scale'] ?? 0),
  });
  switch (avroType) {
    case 'boolean':
      return { kind: 'primitive', name, repetition, type: 'BOOLEAN' };
    case 'int':
      if (logical === 'date') return { kind: 'primitive', name, repetition, type: 'INT32', original: 'DATE' };
      if (logical === 'time-millis') return { kind: 'primitive', name, repetition, type: 'INT32', original: 'TIME_MILLIS' };
      return { kind: 'primitive', name, repetition, type: 'INT32' };
    case 'long':
      if (logical === 'timestamp-millis') return { kind: 'primitive', name, repetition, type: 'INT64', original: 'TIMESTAMP_MILLIS' };
      if (logical === 'timestamp-micros') return { kind: 'primitive', name, repetition, type: 'INT64', original: 'TIMESTAMP_MICROS' };
      if (logical === 'time-micros') return { kind: 'primitive', name, repetition, type: 'INT64', original: 'TIME_MICROS' };
      // local-timestamp-*: not adjusted to UTC, so no converted type (a plain INT64).
      return { kind: 'primitive', name, repetition, type: 'INT64' };
    case 'float':
      return { kind: 'primitive', name, repetition, type: 'FLOAT' };
    case 'double':
      return { kind: 'primitive', name, repetition, type: 'DOUBLE' };
    case 'string':
      return { kind: 'primitive', name, repetition, type: 'BINARY', original: 'UTF8' };
    case 'enum':
      return { kind: 'primitive', name, repetition, type: 'BINARY', original: 'ENUM' };
    case 'bytes':
      return logical === 'decimal' ? decimal('BINARY') : { kind: 'primitive', name, repetition, type: 'BINARY' };
    case 'fixed':
      return logical === 'decimal' ? decimal('FIXED_LEN_BYTE_ARRAY') : { kind: 'primitive', name, repetition, type: 'FIXED_LEN_BYTE_ARRAY' };
    case 'record': {
      const fields = schema['fields'];
      if (!Array.isArray(fields)) throw unsupported(`a record without fields in ${name}`, location);
      return {
        kind: 'group',
        name,
        repetition,
        fields: fields.map((field: { name: string; type: unknown }) => avroToParquet(field.name, field.type, 'REQUIRED', location)),
      };
    }
    case 'array':
      // AvroSchemaConverter's old list structure: the element repeated as `array`.
      return { kind: 'group', name, repetition, original: 'LIST', fields: [avroToParquet('array', schema['items'], 'REPEATED', location)] };
    case 'map':
      return {
        kind: 'group',
        name,
        repetition,
        original: 'MAP',
        fields: [
          {
            kind: 'group',
            name: 'key_value',
            repetition: 'REPEATED',
            original: 'MAP_KEY_VALUE',
            fields: [
              { kind: 'primitive', name: 'key', repetition: 'REQUIRED', type: 'BINARY', original: 'UTF8' },
              avroToParquet('value', schema['values'], 'REQUIRED', location),
            ],
          },
        ],
      };
    default:
      throw unsupported(`the Avro type ${String(avroType)} in ${name}`, location);
  }
}

/** The Parquet message type Hudi's sync reads the table schema as (fields in the table schema's order). */
export function parquetSchemaOf(schema: AvroRecordSchema, location: string): ParquetNode[] {
  return schema.fields.map((field) => avroToParquet(field.name, field.type, 'REQUIRED', location));
}

// ---- Hive (HiveSchemaUtil.convertField with doFormat=false) ----

function hiveType(node: ParquetNode, supportTimestamp: boolean, location: string): string {
  if (node.kind === 'primitive') {
    if (node.original === 'DECIMAL') return `DECIMAL(${node.precision},${node.scale})`;
    if (node.original === 'DATE') return 'DATE';
    if (supportTimestamp && (node.original === 'TIMESTAMP_MICROS' || node.original === 'TIMESTAMP_MILLIS')) return 'TIMESTAMP';
    switch (node.type) {
      case 'BOOLEAN':
        return 'boolean';
      case 'INT32':
        return 'int';
      case 'INT64':
        return 'bigint';
      case 'FLOAT':
        return 'float';
      case 'DOUBLE':
        return 'double';
      case 'FIXED_LEN_BYTE_ARRAY':
        return 'binary';
      case 'BINARY':
        return node.original === 'UTF8' || node.original === 'ENUM' ? 'string' : 'binary';
    }
  }
  if (node.original === 'LIST') {
    const element = node.fields[0]!;
    if (element.kind === 'primitive') return `ARRAY<${hiveType(element, supportTimestamp, location)}>`;
    const single = element.fields.length === 1 && element.name !== 'array' && element.name !== `${node.name}_tuple`;
    return `ARRAY<${hiveType(single ? element.fields[0]! : element, supportTimestamp, location)}>`;
  }
  if (node.original === 'MAP') {
    const keyValue = node.fields[0];
    if (keyValue === undefined || keyValue.kind !== 'group' || keyValue.fields.length !== 2) throw unsupported(`an invalid map ${node.name}`, location);
    return `MAP<${hiveType(keyValue.fields[0]!, supportTimestamp, location)},${hiveType(keyValue.fields[1]!, supportTimestamp, location)}>`;
  }
  // A record: STRUCT<name:type,...>, '-' replaced as Hive needs.
  const members = node.fields.map((field) => `${field.name}:${hiveType(field, supportTimestamp, location)}`);
  return `STRUCT<${members.join(',')}>`.replaceAll('-', '_');
}

/** Column name → Hive type, in schema order (HiveSchemaUtil.parquetSchemaToMapSchema). */
export function hiveSchemaOf(nodes: readonly ParquetNode[], supportTimestamp: boolean, location: string): Map<string, string> {
  return new Map(
    nodes.map((node) => [
      node.name,
      node.repetition === 'REPEATED' ? `ARRAY<${hiveType(node, supportTimestamp, location)}>` : hiveType(node, supportTimestamp, location),
    ]),
  );
}

/** HiveSchemaUtil.getPartitionKeyType: the column's type, or string for a partition field not in the schema. */
export function partitionKeyType(hiveSchema: ReadonlyMap<string, string>, key: string): string {
  return hiveSchema.get(key) ?? 'string';
}

// ---- Spark (Parquet2SparkSchemaUtils.convertToSparkSchemaJson) ----

function sparkPrimitive(node: Extract<ParquetNode, { kind: 'primitive' }>, location: string): string {
  const decimal = `decimal(${node.precision},${node.scale})`;
  switch (node.type) {
    case 'BOOLEAN':
      return 'boolean';
    case 'FLOAT':
      return 'float';
    case 'DOUBLE':
      return 'double';
    case 'INT32':
      if (node.original === undefined) return 'integer';
      if (node.original === 'DATE') return 'date';
      if (node.original === 'DECIMAL') return decimal;
      break;
    case 'INT64':
      if (node.original === undefined) return 'long';
      if (node.original === 'DECIMAL') return decimal;
      if (node.original === 'TIMESTAMP_MICROS' || node.original === 'TIMESTAMP_MILLIS') return 'timestamp';
      break;
    case 'BINARY':
      if (node.original === undefined) return 'binary';
      if (node.original === 'UTF8' || node.original === 'ENUM') return 'string';
      if (node.original === 'DECIMAL') return decimal;
      break;
    case 'FIXED_LEN_BYTE_ARRAY':
      if (node.original === 'DECIMAL') return decimal;
      break;
  }
  throw unsupported(`column ${node.name} (${node.type}${node.original === undefined ? '' : ` ${node.original}`}), which Spark's schema cannot hold`, location);
}

function sparkFieldType(node: ParquetNode, location: string): string {
  if (node.kind === 'primitive') return `"${sparkPrimitive(node, location)}"`;
  if (node.original === undefined) return sparkStruct(node.fields, location);
  if (node.original === 'LIST') {
    const repeated = node.fields[0]!;
    const isElement = repeated.kind === 'primitive' || repeated.fields.length > 1 || repeated.name === 'array' || repeated.name === `${node.name}_tuple`;
    if (isElement) return sparkArray(repeated, false, location);
    const element = (repeated as Extract<ParquetNode, { kind: 'group' }>).fields[0]!;
    return sparkArray(element, element.repetition === 'OPTIONAL', location);
  }
  if (node.original === 'MAP' || node.original === 'MAP_KEY_VALUE') {
    const keyValue = node.fields[0] as Extract<ParquetNode, { kind: 'group' }>;
    const [key, value] = keyValue.fields;
    return `{"type":"map", "keyType":${sparkFieldType(key!, location)},"valueType":${sparkFieldType(value!, location)},"valueContainsNull":${value!.repetition === 'OPTIONAL'}}`;
  }
  throw unsupported(`column ${node.name} (${node.original})`, location);
}

function sparkArray(element: ParquetNode, containsNull: boolean, location: string): string {
  return `{"type":"array", "elementType":${sparkFieldType(element, location)},"containsNull":${containsNull}}`;
}

function sparkStruct(fields: readonly ParquetNode[], location: string): string {
  const members = fields.map((field) => {
    if (field.repetition === 'REPEATED') return `{"name":"${field.name}","type":${sparkArray(field, false, location)},"nullable":false,"metadata":{}}`;
    return `{"name":"${field.name}","type":${sparkFieldType(field, location)},"nullable":${field.repetition === 'OPTIONAL'},"metadata":{}}`;
  });
  return `{"type":"struct","fields":[${members.join(',')}]}`;
}

/** Spark's schema JSON of the table: data columns, then the partition columns (string when not in the schema). */
export function sparkSchemaJson(nodes: readonly ParquetNode[], partitionFields: readonly string[], location: string): string {
  const byName = new Map(nodes.map((node) => [node.name, node]));
  const partitionColumns = partitionFields.map(
    (name): ParquetNode => byName.get(name) ?? { kind: 'primitive', name, repetition: 'REQUIRED', type: 'BINARY', original: 'UTF8' },
  );
  const dataColumns = nodes.filter((node) => !partitionFields.includes(node.name));
  return sparkStruct([...dataColumns, ...partitionColumns], location);
}
