/**
 * One text column's values over row ranges of Parquet files, for footers computed from a file's rows without
 * rewriting it (Hudi's bloom filter and key range of a binary-copied file: its record keys).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { HudiError } from '../errors.js';
import type { ChunkedIterable } from '../util/chunked.js';
import { assertFilesExist, guardFiles } from './connection.js';
import { duckdb } from './duckdb.js';
import type { FileRows } from './port.js';
import { describeColumns } from './schema-rows.js';
import { fileListSql, nonNegativeInteger, READ_OPTIONS, sqlIdentifier, sqlString } from './sql.js';

/** Values DuckDB joins into one string per piece (NUL-separated): a few strings to convert instead of millions. */
const JOINED_VALUES = 65_536;
const FILE_COLUMN = '__hudi_values_file';

/** ParquetEngine.columnValues (port.ts). */
export async function columnValues(connection: DuckDBConnection, ranges: readonly FileRows[], column: string): Promise<Iterable<string>> {
  const { DuckDBTypeId } = duckdb();
  const files = [...new Set(ranges.map((range) => range.file))];
  if (files.length === 0) return [];
  await assertFilesExist(files);
  const columns = await guardFiles(connection, files, () => describeColumns(connection, files));
  const found = columns.find((candidate) => candidate.name === column);
  if (found === undefined || found.type.typeId !== DuckDBTypeId.VARCHAR) {
    throw new HudiError(`column "${column}" is ${found === undefined ? 'not a column of the files' : `of type ${found.type.toString()}, not VARCHAR`}`, {
      location: files[0],
      fix: 'read a text column',
    });
  }
  const quoted = sqlIdentifier(column);
  const bounds = ranges.map((range) => {
    const start = nonNegativeInteger(range.rowStart, 'rowStart');
    return `(${sqlString(range.file)}, ${start}, ${start + nonNegativeInteger(range.rowCount, 'rowCount')})`;
  });
  // A range join keeps each file's rows within its ranges; pieces of JOINED_VALUES rows come back as one string each.
  const source = `SELECT ${quoted} AS value, file_row_number AS row, ranges.start AS piece
    FROM read_parquet(${fileListSql(files)}, ${READ_OPTIONS}, file_row_number = true, filename = ${sqlString(FILE_COLUMN)}) AS data
    JOIN (VALUES ${bounds.join(', ')}) AS ranges(file, start, stop)
      ON data.${sqlIdentifier(FILE_COLUMN)} = ranges.file AND data.file_row_number >= ranges.start AND data.file_row_number < ranges.stop
    WHERE ${quoted} IS NOT NULL`;
  return guardFiles(connection, files, () => readJoinedValues(connection, source));
}

/**
 * The `value` column of `source` (a SELECT of `value`, `piece` and `row`, values non-null), in no particular order:
 * DuckDB joins each piece's values into strings of JOINED_VALUES, split here one piece at a time, as they are walked.
 */
export async function readJoinedValues(connection: DuckDBConnection, source: string): Promise<ChunkedIterable<string>> {
  const reader = await connection.runAndReadAll(
    `SELECT count(*) AS n, string_agg(value, chr(0)) AS joined FROM (${source}) GROUP BY piece, row // ${JOINED_VALUES}`,
  );
  const pieces: string[] = [];
  let withNul = false;
  for (const [count, joined] of reader.getRows()) {
    const text = String(joined ?? '');
    if (separatorCount(text) === Number(count) - 1) pieces.push(text);
    else withNul = true;
  }
  if (withNul) {
    // A value holding NUL breaks the joined form: read them one by one instead (rare: record keys are text).
    const all = await connection.runAndReadAll(`SELECT value FROM (${source})`);
    const values = all.getRows().map((row) => String(row[0]));
    return { chunks: () => [values], [Symbol.iterator]: () => values[Symbol.iterator]() };
  }
  function* chunks(): Generator<string[]> {
    for (const piece of pieces) yield piece.split('\u0000');
  }
  return {
    chunks,
    *[Symbol.iterator]() {
      for (const chunk of chunks()) yield* chunk;
    },
  };
}

/** NUL characters in `text`, counted without splitting it (no string per value). */
function separatorCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\u0000'); at !== -1; at = text.indexOf('\u0000', at + 1)) count++;
  return count;
}
