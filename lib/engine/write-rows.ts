/**
 * Write rows (row-format.ts values) into one Parquet file with the column types of a template Parquet file: what a
 * compaction needs to write a file slice's merged records as a new base file of the same schema as the old one.
 * The rows go through newline-delimited JSON read with the template's DuckDB types (binary as base64 text, decoded
 * in SQL), then the written file's Parquet types are conformed to the template's (decimal physical type, UTC flag).
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBTypeId, type DuckDBConnection } from '@duckdb/node-api';
import { HudiError } from '../errors.js';
import type { WriteRowsRequest, WriteRowsResult } from './port.js';
import { describeColumns } from './schema-rows.js';
import { copyToParquetSql, sqlIdentifier, sqlString } from './sql.js';
import { conformParquetTypes, parquetTypeTargets } from './type-targets.js';

export async function writeRowsLikeTemplate(connection: DuckDBConnection, request: WriteRowsRequest): Promise<WriteRowsResult> {
  const columns = await describeColumns(connection, [request.template]);
  const dir = await mkdtemp(join(tmpdir(), 'hudi-rows-'));
  try {
    const input = join(dir, 'rows.jsonl');
    await writeFile(input, request.rows.map((row) => JSON.stringify(Object.fromEntries(columns.map((c) => [c.name, row[c.name] ?? null])))).join('\n') + '\n');
    const isBlob = (typeId: DuckDBTypeId) => typeId === DuckDBTypeId.BLOB;
    const readTypes = columns.map((c) => `${sqlString(c.name)}: ${sqlString(isBlob(c.type.typeId) ? 'VARCHAR' : c.type.toString())}`).join(', ');
    const select = columns
      .map((c) => (isBlob(c.type.typeId) ? `from_base64(${sqlIdentifier(c.name)}) AS ${sqlIdentifier(c.name)}` : sqlIdentifier(c.name)))
      .join(', ');
    const source =
      request.rows.length === 0
        ? `SELECT ${columns.map((c) => `NULL::${c.type.toString()} AS ${sqlIdentifier(c.name)}`).join(', ')} WHERE false`
        : `SELECT ${select} FROM read_json(${sqlString(input)}, format = 'newline_delimited', columns = {${readTypes}})`;
    try {
      await connection.run(copyToParquetSql(source, request.outputFile, Math.max(1, Math.floor(request.rowGroupSize)), request.keyValues));
    } catch (cause) {
      throw new HudiError(`could not write ${request.outputFile}: ${(cause as Error).message}`, {
        cause,
        fix: "the merged records do not fit the base file's column types; compact this slice with Hudi",
      });
    }
    await conformParquetTypes(connection, request.outputFile, parquetTypeTargets([request.template]));
    return { rowCount: request.rows.length, bytes: (await stat(request.outputFile)).size };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
