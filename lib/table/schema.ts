/**
 * Table schemas as Hudi records them: an Avro record schema (commit extraMetadata.schema, without meta fields;
 * base file footers carry it with the five meta fields first).
 */
import { HudiError } from '../errors.js';

export const META_FIELD_NAMES = ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'] as const;

/**
 * How deeply struct, list and map types may nest in a table's columns. Deeper ones fail in the engine's merge of an
 * update (DuckDB's expression depth) and in the Avro schema's JSON, which Spark's Jackson parses with a nesting
 * limit of 1000 (several JSON levels per struct level): refused at the schema gate instead.
 */
export const MAX_NESTING_DEPTH = 100;

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

/** A column or struct field by name, with the struct fields inside it (through lists and maps). */
export interface NamedField {
  readonly name: string;
  readonly fields: readonly NamedField[];
}

export interface FieldNameProblem {
  /** The offending names as paths (`a.b` for a struct field). */
  readonly paths: readonly string[];
  readonly kind: 'avro-name' | 'case-duplicate' | 'meta-field';
  readonly reason: string;
}

/** Avro's rule for a field name (Schema.validateName), which Hudi's writer schema goes through. */
export const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names a Hudi table cannot hold, at any depth: names that are not Avro names (Hudi 0.15 converts every batch's
 * schema to Avro, whose parser refuses them, so Spark could no longer read the table), names equal but for case at
 * one level (Spark and Hive resolve names case-insensitively and refuse such a schema as duplicate columns), and a
 * top-level name that is a meta field's in another case (it would shadow the meta column in Spark). Paths in
 * `existing` are the table's already and are not judged again, except as the other side of a case duplicate.
 */
export function fieldNameProblems(fields: readonly NamedField[], existing: ReadonlySet<string> = new Set()): FieldNameProblem[] {
  const problems: FieldNameProblem[] = [];
  const meta: readonly string[] = META_FIELD_NAMES;
  const walk = (level: readonly NamedField[], prefix: string): void => {
    const byLowerCase = new Map<string, string[]>();
    for (const field of level) {
      const path = `${prefix}${field.name}`;
      const names = byLowerCase.get(field.name.toLowerCase());
      if (names === undefined) byLowerCase.set(field.name.toLowerCase(), [path]);
      else names.push(path);
      if (existing.has(path)) {
        walk(field.fields, `${path}.`);
        continue;
      }
      if (!AVRO_NAME.test(field.name)) {
        problems.push({ paths: [path], kind: 'avro-name', reason: `${JSON.stringify(path)} is not a valid Avro name` });
      } else if (prefix === '' && meta.includes(field.name.toLowerCase()) && !meta.includes(field.name)) {
        problems.push({ paths: [path], kind: 'meta-field', reason: `"${path}" is Hudi's meta field ${field.name.toLowerCase()} in another case` });
      }
      walk(field.fields, `${path}.`);
    }
    for (const paths of byLowerCase.values()) {
      if (paths.length > 1 && !paths.every((path) => existing.has(path))) {
        problems.push({ paths, kind: 'case-duplicate', reason: `${paths.map((path) => `"${path}"`).join(' and ')} differ only in case` });
      }
    }
  };
  walk(fields, '');
  return problems;
}

/** What to do about the problems, one sentence per kind present. */
export function fieldNameFix(problems: readonly FieldNameProblem[]): string {
  const kinds = new Set(problems.map((problem) => problem.kind));
  const fixes: string[] = [];
  if (kinds.has('avro-name')) {
    fixes.push(
      'rename it: an Avro name starts with a letter or "_" and holds only letters, digits and "_" (Hudi\'s writer and Spark\'s Avro reader refuse others)',
    );
  }
  if (kinds.has('case-duplicate')) {
    fixes.push('give each column a name of its own regardless of case, or spell it as the table does (Spark resolves names case-insensitively)');
  }
  if (kinds.has('meta-field')) fixes.push("rename it: the names of Hudi's five meta fields are reserved in any case");
  return `${fixes.join('; ')}; nothing was written`;
}
