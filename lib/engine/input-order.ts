/**
 * Input order, the order copySorted breaks ties by and rowRanks and sort-column batches are keyed by: inputs in the
 * order given, rows in file order. A temp table maps each input file to the global row number of its first row, so
 * a scan can compute every row's input position as `file offset + file_row_number`.
 */
import { randomUUID } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { readFooterSummary } from '../parquet/footer.js';
import { fileListSql, READ_OPTIONS, sqlIdentifier, sqlString } from './sql.js';

export const SOURCE_FILE_COLUMN = '__hudi_source_file';
export const FILE_OFFSET_COLUMN = '__hudi_file_offset';

/** A row's 0-based position in input order, over a scan joined with the inputs table. */
export const INPUT_ROW_SQL = `(${sqlIdentifier(FILE_OFFSET_COLUMN)} + file_row_number)`;

/** Footer row counts, file by file (read in JavaScript: DuckDB's parquet_file_metadata costs 0.2 ms a file). */
export function rowsPerFile(files: readonly string[]): number[] {
  return files.map((file) => readFooterSummary(file).numRows);
}

/** A temp table (source file, offset) for the inputs, whose rows per file are `fileRows`; drop it when done. */
export async function createInputsTable(connection: DuckDBConnection, files: readonly string[], fileRows: readonly number[]): Promise<string> {
  const table = sqlIdentifier(`__hudi_inputs_${randomUUID().replaceAll('-', '')}`);
  let offset = 0;
  const entries = files.map((file, index) => {
    const entry = `(${sqlString(file)}, ${offset})`;
    offset += fileRows[index]!;
    return entry;
  });
  await connection.run(
    `CREATE TEMP TABLE ${table} AS SELECT * FROM (VALUES ${entries.join(', ')}) AS t(${sqlIdentifier(SOURCE_FILE_COLUMN)}, ${sqlIdentifier(FILE_OFFSET_COLUMN)})`,
  );
  return table;
}

/** The inputs' rows with `file_row_number` and their file's offset (so INPUT_ROW_SQL works on them). */
export function inputScanSql(files: readonly string[], inputsTable: string): string {
  return `read_parquet(${fileListSql(files)}, ${READ_OPTIONS}, file_row_number = true, filename = ${sqlString(SOURCE_FILE_COLUMN)})
                 JOIN ${inputsTable} USING (${sqlIdentifier(SOURCE_FILE_COLUMN)})`;
}
