/**
 * SQL text for DuckDB: quoting names and strings, lists of Parquet files, whole numbers, and the COPY that writes a
 * Hudi base file. Everything user-given that reaches a statement goes through here.
 */
import { HudiError } from '../errors.js';
import type { ParquetColumnInfo } from '../parquet/schema.js';

/** A DuckDB identifier, safe for any name. */
export function sqlIdentifier(name: string): string {
  rejectNul(name);
  return `"${name.replaceAll('"', '""')}"`;
}

/** A DuckDB string literal, safe for any text (DuckDB literals treat backslashes literally). */
export function sqlString(text: string): string {
  rejectNul(text);
  return `'${text.replaceAll("'", "''")}'`;
}

function rejectNul(text: string): void {
  if (text.includes('\u0000')) {
    throw new HudiError('a name or path contains a NUL character', { fix: 'remove the NUL character' });
  }
}

/** read_parquet expands globs; Hudi paths never need them, so a path with glob syntax is refused rather than expanded. */
export function fileListSql(files: readonly string[]): string {
  for (const file of files) {
    if (/[*?[\]{}]/.test(file)) {
      throw new HudiError('Parquet path contains glob characters (* ? [ ] { }), which DuckDB would expand', {
        location: file,
        fix: 'stage the file under a path without those characters',
      });
    }
  }
  return `[${files.map(sqlString).join(', ')}]`;
}

/** read_parquet options for Hudi files: Hive-style paths (byteField=10/) must not turn into extra or overriding columns. */
export const READ_OPTIONS = 'union_by_name = true, hive_partitioning = false';

/**
 * read_parquet options for files that share one schema (isOneSchema), or not: by name (READ_OPTIONS) when they
 * differ, and without union_by_name when every file has the same schema, for the same columns. Binding union_by_name
 * opens every file first, which over thousands of small files costs more than the query.
 */
export function readOptionsWhen(oneSchema: boolean): string {
  return oneSchema ? SAME_SCHEMA_READ_OPTIONS : READ_OPTIONS;
}

/** Whether these footers' schemas are all the same (vacuously for none). */
export function isOneSchema(schemas: readonly (readonly ParquetColumnInfo[])[]): boolean {
  const first = schemas[0];
  if (first === undefined) return true;
  const signature = JSON.stringify(first);
  return schemas.every((schema) => schema === first || JSON.stringify(schema) === signature);
}

const SAME_SCHEMA_READ_OPTIONS = 'hive_partitioning = false';

/**
 * COPY a query to one Parquet file as Hudi base files are written: Snappy, format v1 pages (which type repair can
 * re-encode), the given row group size and footer key/values.
 */
export function copyToParquetSql(query: string, file: string, rowGroupSize: number, keyValues: Readonly<Record<string, string>>): string {
  const options = ['FORMAT parquet', 'COMPRESSION snappy', `ROW_GROUP_SIZE ${rowGroupSize}`, 'PARQUET_VERSION v1'];
  const entries = Object.entries(keyValues);
  if (entries.length > 0) options.push(`KV_METADATA {${entries.map(([key, value]) => `${sqlString(key)}: ${sqlString(value)}`).join(', ')}}`);
  return `COPY (${query}) TO ${sqlString(file)} (${options.join(', ')})`;
}

export function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new HudiError(`${name} must be a positive integer, got ${value}`, { fix: `pass a whole ${name} ≥ 1` });
  }
  return value;
}

export function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new HudiError(`${name} must be a non-negative integer, got ${value}`, { fix: `pass a whole ${name} ≥ 0` });
  }
  return value;
}
