/**
 * The names a batch's columns really have in its input. DuckDB makes names unique case-insensitively as it reads:
 * JSON keys, CSV header cells or Parquet columns `name` and `Name` come out as `name` and `Name_1`, so the batch
 * would carry a column the input never named. DuckDB also refuses such a pair inside a JSON struct. Both cases are
 * found here from the input itself, so the writer can refuse the input by the names the user wrote.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import type { FieldNameProblem, NamedField } from '../table/schema.js';
import { queryObjects } from './connection.js';
import { duckdb } from './duckdb.js';
import { sqlString } from './sql.js';

export type NamedFormat = 'jsonl' | 'csv' | 'parquet';

/** Columns as a name tree: struct fields, including those of structs inside lists and maps (map keys are values). */
export function namedFields(columns: readonly { name: string; type: DuckDBType }[]): NamedField[] {
  return columns.map((column) => ({ name: column.name, fields: structFields(column.type) }));
}

function structFields(type: DuckDBType): NamedField[] {
  const { DuckDBListType, DuckDBMapType, DuckDBStructType } = duckdb();
  if (type instanceof DuckDBStructType) return type.entryNames.map((name, index) => ({ name, fields: structFields(type.entryTypes[index]!) }));
  if (type instanceof DuckDBListType) return structFields(type.valueType);
  if (type instanceof DuckDBMapType) return structFields(type.valueType);
  return [];
}

/**
 * The deepest nesting of struct, list and map types among the columns, with the path down to it. Walked with a
 * stack of its own, not by recursion: an input nested thousands deep must be refusable, not a stack overflow.
 */
export function deepestNesting(columns: readonly { name: string; type: DuckDBType }[]): { readonly path: string; readonly depth: number } {
  const { DuckDBArrayType, DuckDBListType, DuckDBMapType, DuckDBStructType } = duckdb();
  let deepest = { path: '', depth: 0 };
  const pending = columns.map((column) => ({ path: column.name, type: column.type, depth: 0 }));
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { path, type, depth } = next;
    if (depth > deepest.depth) deepest = { path, depth };
    if (type instanceof DuckDBStructType) {
      for (const [index, name] of type.entryNames.entries()) pending.push({ path: `${path}.${name}`, type: type.entryTypes[index]!, depth: depth + 1 });
    } else if (type instanceof DuckDBListType || type instanceof DuckDBArrayType) {
      pending.push({ path: `${path}[]`, type: type.valueType, depth: depth + 1 });
    } else if (type instanceof DuckDBMapType) {
      pending.push({ path: `${path}{}`, type: type.valueType, depth: depth + 1 });
    }
  }
  return deepest;
}

/** Paths of a name tree, as fieldNameProblems names them. */
export function fieldPaths(fields: readonly NamedField[], prefix = ''): string[] {
  return fields.flatMap((field) => [`${prefix}${field.name}`, ...fieldPaths(field.fields, `${prefix}${field.name}.`)]);
}

/**
 * Whether DuckDB may have named a column itself: `x_N` beside a column named `x` in any case (a duplicate renamed),
 * `C1` in JSON or `column1` in CSV (an empty name), at any depth. A column really named so looks the same, so the
 * input's own names decide (inputNameProblem).
 */
export function mayBeRenamed(fields: readonly NamedField[], format: NamedFormat): boolean {
  const invented = format === 'jsonl' ? /^C[0-9]+$/ : format === 'csv' ? /^column[0-9]+$/ : undefined;
  const level = (named: readonly NamedField[]): boolean => {
    const lower = new Set(named.map((field) => field.name.toLowerCase()));
    return named.some((field) => {
      const match = /^(.*)_[0-9]+$/.exec(field.name);
      if (match !== null && lower.has(match[1]!.toLowerCase())) return true;
      return invented?.test(field.name) === true || level(field.fields);
    });
  };
  return level(fields);
}

/**
 * The first problem among the input's own names that DuckDB hides: two names equal but for case at one level (for
 * JSON at any depth), or an empty name; undefined when there is none. Reads the input once more, so it runs only
 * when mayBeRenamed says so or DuckDB refused a JSON struct.
 */
export async function inputNameProblem(connection: DuckDBConnection, file: string, format: NamedFormat): Promise<FieldNameProblem | undefined> {
  switch (format) {
    case 'jsonl':
      return jsonKeyProblem(file);
    case 'csv': {
      // The header line as values: read without a header, every cell as text.
      const rows = await queryObjects(connection, `SELECT * FROM read_csv(${sqlString(file)}, header = false, all_varchar = true) LIMIT 1`);
      return levelProblem(
        Object.values(rows[0] ?? {}).map((cell) => (cell === null ? '' : String(cell))),
        '',
      );
    }
    case 'parquet': {
      const rows = await queryObjects(connection, `SELECT name, num_children FROM parquet_schema(${sqlString(file)})`);
      return levelProblem(topLevelParquetNames(rows.map((row) => ({ name: String(row['name']), children: Number(row['num_children'] ?? 0) }))), '');
    }
  }
}

/** The root's children in parquet_schema's depth-first element list (each element followed by its subtree). */
function topLevelParquetNames(elements: readonly { name: string; children: number }[]): string[] {
  const names: string[] = [];
  let index = 1;
  const skip = (): void => {
    const element = elements[index++]!;
    for (let i = 0; i < element.children; i++) skip();
  };
  for (let child = 0; child < (elements[0]?.children ?? 0) && index < elements.length; child++) {
    names.push(elements[index]!.name);
    skip();
  }
  return names;
}

function levelProblem(names: readonly string[], prefix: string): FieldNameProblem | undefined {
  const seen = new Map<string, string>();
  for (const name of names) {
    if (name === '')
      return { paths: [prefix], kind: 'avro-name', reason: `${prefix === '' ? 'a column' : `a field of "${prefix.slice(0, -1)}"`} has an empty name` };
    const other = seen.get(name.toLowerCase());
    if (other !== undefined && other !== name) {
      const paths = [`${prefix}${other}`, `${prefix}${name}`];
      return { paths, kind: 'case-duplicate', reason: `${paths.map((path) => `"${path}"`).join(' and ')} differ only in case` };
    }
    seen.set(name.toLowerCase(), name);
  }
  return undefined;
}

/** Keys of every object of every line, per path (list elements share their list's path), until one is a problem. */
async function jsonKeyProblem(file: string): Promise<FieldNameProblem | undefined> {
  const keysByPath = new Map<string, Map<string, string>>();
  const visit = (value: unknown, prefix: string): FieldNameProblem | undefined => {
    if (Array.isArray(value)) {
      for (const element of value) {
        const found = visit(element, prefix);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (value === null || typeof value !== 'object') return undefined;
    let keys = keysByPath.get(prefix);
    if (keys === undefined) keysByPath.set(prefix, (keys = new Map()));
    for (const [key, inner] of Object.entries(value)) {
      const other = keys.get(key.toLowerCase());
      const found = levelProblem(other === undefined ? [key] : [other, key], prefix) ?? visit(inner, `${prefix}${key}.`);
      if (found !== undefined) return found;
      keys.set(key.toLowerCase(), key);
    }
    return undefined;
  };
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      if (line.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return undefined; // not JSON: DuckDB's own error says so
      }
      const found = visit(parsed, '');
      if (found !== undefined) return found;
    }
  } finally {
    lines.close();
  }
  return undefined;
}
