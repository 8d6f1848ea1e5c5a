/**
 * A file slice's merged records into Parquet with the column types of its base file: what compaction and clustering
 * of merge-on-read slices write (lib/merge-on-read/file-slice-merge.ts).
 *
 * - mergeIntoBase merges in SQL: the base file's rows stay in DuckDB (never materialised in JavaScript), the rows
 *   that replace or extend them and the keys that drop them come in, and one statement writes the result. The caller
 *   decides per key which record wins (lib/merge-on-read/payload-merge.ts mergeOutcome); this only moves the data.
 *
 * Rows come in through newline-delimited JSON read with the template's DuckDB types (binary as base64 text, decoded
 * in SQL); the written file's Parquet types are then conformed to the template's (decimal physical type, UTC flag).
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { HudiError } from '../errors.js';
import { withFixedDecimals } from '../parquet/schema.js';
import { duckDbTypeOfAvro } from './avro-types.js';
import { readJoinedValues } from './column-values.js';
import { assertFilesExist, guardFiles } from './connection.js';
import { duckdb } from './duckdb.js';
import type { MergeIntoBaseRequest, WriteRowsResult } from './port.js';
import type { JsonValue, Row } from './row-format.js';
import { type ColumnDescription, describeColumns } from './schema-rows.js';
import { copyToParquetSql, fileListSql, READ_OPTIONS, sqlIdentifier, sqlString } from './sql.js';
import { conformParquetTypes, parquetTypeTargets } from './type-targets.js';

const COMPACT_FIX = "the merged records do not fit the base file's column types; compact this slice with Hudi";

/** Extra columns of the change rows: their position among the appended rows, and whether the row only drops its key. */
const ORDINAL = '__hudi_change_ordinal';
const DROP = '__hudi_change_drop';
const POSITION = '__hudi_base_position';
const SECTION = '__hudi_section';
const CHANGES = '__hudi_changes';

/** ParquetEngine.mergeIntoBase (port.ts). */
export async function mergeIntoBase(connection: DuckDBConnection, request: MergeIntoBaseRequest): Promise<WriteRowsResult> {
  const { DuckDBTypeId } = duckdb();
  await assertFilesExist([request.base]);
  const columns = await guardFiles(connection, [request.base], () => describeColumns(connection, [request.base]));
  const key = columns.find((column) => column.name === request.keyColumn);
  if (key === undefined || key.type.typeId !== DuckDBTypeId.VARCHAR) {
    throw new HudiError(`base file has no VARCHAR column "${request.keyColumn}" to merge on`, { location: request.base, fix: COMPACT_FIX });
  }
  for (const name of [ORDINAL, DROP, POSITION, SECTION]) {
    if (columns.some((column) => column.name === name))
      throw new HudiError(`base file has a column named ${name}, which the merge uses`, { location: request.base });
  }
  const dir = await mkdtemp(join(tmpdir(), 'hudi-merge-'));
  const k = sqlIdentifier(request.keyColumn);
  try {
    const changeColumns: JsonColumn[] = [
      ...columns.map(jsonColumn),
      { name: ORDINAL, type: 'BIGINT', blob: false },
      { name: DROP, type: 'BOOLEAN', blob: false },
    ];
    const deleted = request.deletes.map((value): Row => ({ [request.keyColumn]: value }));
    const count = request.upserts.length + deleted.length;
    const changeSource =
      count === 0
        ? `SELECT ${changeColumns.map((c) => `NULL::${c.type} AS ${sqlIdentifier(c.name)}`).join(', ')} WHERE false`
        : await jsonRowsSource(join(dir, 'changes.jsonl'), [...request.upserts, ...deleted], changeColumns, (index) => [
            index,
            index >= request.upserts.length,
          ]);
    const constants = request.constantColumns ?? {};
    const output = (alias: string) =>
      columns
        .map((c) => (c.name in constants ? `${sqlString(constants[c.name]!)}::VARCHAR AS ${sqlIdentifier(c.name)}` : `${alias}.${sqlIdentifier(c.name)}`))
        .join(', ');
    const base = `(SELECT *, file_row_number AS ${POSITION} FROM read_parquet(${fileListSql([request.base])}, ${READ_OPTIONS}, file_row_number = true))`;
    // Untouched base rows keep their place; a replacing row takes its base row's place; new keys follow in order.
    const merged = (select: (alias: string) => string) => `
          SELECT ${select('b')}, 0 AS ${SECTION}, b.${POSITION} AS ${POSITION}
            FROM ${base} AS b ANTI JOIN ${CHANGES} AS c ON b.${k} = c.${k}
          UNION ALL
          SELECT ${select('c')}, CASE WHEN p.${POSITION} IS NULL THEN 1 ELSE 0 END, coalesce(p.${POSITION}, c.${ORDINAL})
            FROM ${CHANGES} AS c LEFT JOIN (SELECT ${k}, ${POSITION} FROM ${base}) AS p ON c.${k} = p.${k}
            WHERE NOT c.${DROP}`;
    try {
      await connection.run(`CREATE OR REPLACE TEMP TABLE ${CHANGES} AS ${changeSource}`);
      const keys = await guardFiles(connection, [request.base], () =>
        readJoinedValues(
          connection,
          `SELECT value, ${SECTION} AS piece, ${POSITION} AS row FROM (${merged((alias) => `${alias}.${k} AS value`)}) WHERE value IS NOT NULL`,
        ),
      );
      const select = `SELECT ${columns.map((c) => sqlIdentifier(c.name)).join(', ')} FROM (${merged(output)}) ORDER BY ${SECTION}, ${POSITION}`;
      await guardFiles(connection, [request.base], () =>
        connection.run(copyToParquetSql(select, request.outputFile, Math.max(1, Math.floor(request.rowGroupSize)), request.footer(keys))),
      );
      await conformParquetTypes(connection, request.outputFile, parquetTypeTargets([request.base]));
      const [row] = (await connection.runAndReadAll(`SELECT num_rows FROM parquet_file_metadata(${fileListSql([request.outputFile])})`)).getRows();
      return { rowCount: Number(row?.[0] ?? 0), bytes: (await stat(request.outputFile)).size };
    } catch (cause) {
      if (cause instanceof HudiError) throw cause;
      throw new HudiError(`could not write ${request.outputFile}: ${(cause as Error).message}`, { cause, fix: COMPACT_FIX });
    } finally {
      await connection.run(`DROP TABLE IF EXISTS ${CHANGES}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** ParquetEngine.writeEmptyFile (port.ts). */
export async function writeEmptyFileOfAvro(connection: DuckDBConnection, avroSchema: string, outputFile: string): Promise<void> {
  const fields = (JSON.parse(avroSchema) as { fields?: { name: string; type: unknown }[] }).fields ?? [];
  const columns = fields.map((field) => {
    const type = duckDbTypeOfAvro(field.type);
    if (type === undefined) {
      throw new HudiError(`field "${field.name}" has an Avro type this build cannot write (${JSON.stringify(field.type)})`, {
        fix: 'compact this file slice with Hudi (CALL run_compaction)',
      });
    }
    return `NULL::${type.toString()} AS ${sqlIdentifier(field.name)}`;
  });
  if (columns.length === 0) throw new HudiError('the table schema has no fields', { fix: 'check the table schema (extraMetadata.schema)' });
  await connection.run(copyToParquetSql(`SELECT ${columns.join(', ')} WHERE false`, outputFile, 1, {}));
  await conformParquetTypes(connection, outputFile, withFixedDecimals(parquetTypeTargets([outputFile])));
}

/** A column as JSON lines carry it: DuckDB's type name, binary as base64 text. */
interface JsonColumn {
  readonly name: string;
  readonly type: string;
  readonly blob: boolean;
}

function jsonColumn(column: ColumnDescription): JsonColumn {
  const { DuckDBTypeId } = duckdb();
  return { name: column.name, type: column.type.toString(), blob: column.type.typeId === DuckDBTypeId.BLOB };
}

/**
 * A SELECT over `rows` written to `file` as JSON lines and read back with the columns' types; `extra(i)` gives row
 * i's values of the columns after the rows' own (the first `columns.length - extra.length`).
 */
async function jsonRowsSource(
  file: string,
  rows: readonly Row[],
  columns: readonly JsonColumn[],
  extra: (index: number) => readonly JsonValue[] = () => [],
): Promise<string> {
  const own = columns.length - extra(0).length;
  // Lines built by concatenation: a row object per line (Object.fromEntries) costs more than the JSON itself.
  const names = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  const lines = rows.map((row, index) => {
    let line = '';
    for (let i = 0; i < own; i++) line += names[i] + JSON.stringify(row[columns[i]!.name] ?? null);
    const more = extra(index);
    for (let i = 0; i < more.length; i++) line += names[own + i] + JSON.stringify(more[i]);
    return `${line}}`;
  });
  await writeFile(file, lines.join('\n') + '\n');
  const readTypes = columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.blob ? 'VARCHAR' : c.type)}`).join(', ');
  const select = columns.map((c) => (c.blob ? `from_base64(${sqlIdentifier(c.name)}) AS ${sqlIdentifier(c.name)}` : sqlIdentifier(c.name))).join(', ');
  return `SELECT ${select} FROM read_json(${sqlString(file)}, format = 'newline_delimited', columns = {${readTypes}})`;
}
