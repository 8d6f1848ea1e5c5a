/**
 * Input order, the order copySorted breaks ties by and rowRanks and sort-column batches are keyed by: inputs in the
 * order given, rows in file order. A temp table maps each input's position in the list (DuckDB's `file_index`) to
 * the global row number of its first row, so a scan can compute every row's input position as
 * `file offset + file_row_number` (an integer join on a table of one row per file, not a join on file names).
 */
import { randomUUID } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { readFooterSummary } from '../parquet/footer.js';
import type { InputFooter } from './port.js';
import { fileListSql, isOneSchema, READ_OPTIONS, readOptionsWhen, sqlIdentifier } from './sql.js';

export const SOURCE_FILE_COLUMN = '__hudi_source_file';
/** DuckDB's virtual column of a row's file position in the read_parquet list (an input column of that name is refused). */
export const FILE_INDEX_COLUMN = 'file_index';
export const FILE_OFFSET_COLUMN = '__hudi_file_offset';

/** A row's 0-based position in input order, over a scan joined with the inputs table. */
export const INPUT_ROW_SQL = `(${sqlIdentifier(FILE_OFFSET_COLUMN)} + file_row_number)`;

/** Footer row counts, file by file (read in JavaScript: a DuckDB parquet_file_metadata query per file costs more). */
export function rowsPerFile(files: readonly string[]): number[] {
  return files.map((file) => readFooterSummary(file).numRows);
}

/** Positions (0-based, ascending) of `count` rows evenly spaced over `total`: the middle row of each of `count` equal slices. */
export function samplePositions(total: number, count: number): number[] {
  const taken = Math.max(0, Math.min(Math.trunc(count), total));
  return Array.from({ length: taken }, (_, index) => Math.floor(((index + 0.5) * total) / taken));
}

/** What a scan of the inputs needs from their footers. */
export interface InputFacts {
  /** Rows per file, in input order. */
  readonly fileRows: number[];
  /** Whether every input has the same schema (isOneSchema). */
  readonly oneSchema: boolean;
  /** The read_parquet options their schemas allow (readOptionsWhen). */
  readonly readOptions: string;
}

export function inputFacts(footers: readonly InputFooter[]): InputFacts {
  const oneSchema = footers.length > 0 && isOneSchema(footers.map((footer) => footer.columns));
  return { fileRows: footers.map((footer) => footer.numRows), oneSchema, readOptions: readOptionsWhen(oneSchema) };
}

/**
 * A temp table (file index, offset) for the inputs, whose rows per file are `fileRows`; drop it when done. Filled
 * through DuckDB's appender: a VALUES list of one row per input is slow to parse when there are thousands of files.
 */
export async function createInputsTable(connection: DuckDBConnection, files: readonly string[], fileRows: readonly number[]): Promise<string> {
  const name = `__hudi_inputs_${randomUUID().replaceAll('-', '')}`;
  const table = sqlIdentifier(name);
  await connection.run(`CREATE TEMP TABLE ${table} (${sqlIdentifier(FILE_INDEX_COLUMN)} UBIGINT, ${sqlIdentifier(FILE_OFFSET_COLUMN)} BIGINT)`);
  const appender = await connection.createAppender(name, 'main', 'temp');
  try {
    let offset = 0;
    for (let index = 0; index < files.length; index++) {
      appender.appendUBigInt(BigInt(index));
      appender.appendBigInt(BigInt(offset));
      appender.endRow();
      offset += fileRows[index]!;
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return table;
}

/** The inputs' rows with `file_row_number` and their file's offset (so INPUT_ROW_SQL works on them). */
export function inputScanSql(files: readonly string[], inputsTable: string, readOptions = READ_OPTIONS): string {
  return `(SELECT *, ${FILE_INDEX_COLUMN} FROM read_parquet(${fileListSql(files)}, ${readOptions}, file_row_number = true))
                 JOIN ${inputsTable} USING (${sqlIdentifier(FILE_INDEX_COLUMN)})`;
}
