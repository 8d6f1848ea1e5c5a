/**
 * Table schemas as Hudi records them: an Avro record schema (commit extraMetadata.schema, without meta fields;
 * base file footers carry it with the five meta fields first).
 */
import { HudiError } from './errors.js';

export const META_FIELD_NAMES = ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'] as const;

export interface AvroField {
  name: string;
  type: unknown;
  doc?: string;
  default?: unknown;
  [key: string]: unknown;
}

export interface AvroRecordSchema {
  type: 'record';
  name: string;
  namespace?: string;
  fields: AvroField[];
  [key: string]: unknown;
}

export function parseAvroRecordSchema(text: string, location: string): AvroRecordSchema {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HudiError(`table schema is not valid JSON: ${(error as Error).message}`, { location, fix: 'the commit metadata is corrupt; restore it' });
  }
  const record = parsed as Partial<AvroRecordSchema> | null;
  if (record === null || typeof record !== 'object' || record.type !== 'record' || !Array.isArray(record.fields)) {
    throw new HudiError('table schema is not an Avro record schema', { location, fix: 'the commit metadata is corrupt; restore it' });
  }
  return record as AvroRecordSchema;
}

/** The schema without Hudi's meta fields (what commits record as `schema`). */
export function withoutMetaFields(schema: AvroRecordSchema): AvroRecordSchema {
  return { ...schema, fields: schema.fields.filter((f) => !(META_FIELD_NAMES as readonly string[]).includes(f.name)) };
}

/** The schema with the five meta fields first, as Hudi writes `parquet.avro.schema`. */
export function withMetaFields(schema: AvroRecordSchema): AvroRecordSchema {
  const metaFields: AvroField[] = META_FIELD_NAMES.map((name) => ({ name, type: ['null', 'string'], doc: '', default: null }));
  return { ...schema, fields: [...metaFields, ...withoutMetaFields(schema).fields] };
}

/** Avro record names Hudi derives from the table name: `<table>_record` in namespace `hoodie.<table>`. */
export function hudiRecordName(tableName: string): { name: string; namespace: string } {
  return { name: `${tableName}_record`, namespace: `hoodie.${tableName}` };
}

export function fieldNames(schema: AvroRecordSchema): string[] {
  return schema.fields.map((f) => f.name);
}
