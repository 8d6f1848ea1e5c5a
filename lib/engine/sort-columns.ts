/**
 * Sort-column values for the space-filling curves (lib/layout/curves.ts): every input row's values of the sort
 * columns, streamed in batches keyed by input-order row number, as the Spark types Hudi's curve builders take.
 */

import { isUtf8 } from 'node:buffer';
import { closeSync, openSync, readSync } from 'node:fs';
import type { DuckDBType, DuckDBVector } from '@duckdb/node-api';
import { HudiError } from '../errors.js';
import type { SortColumnType, SortValue } from '../layout/curves.js';
import { type ChunkLocation, decodeFlatChunk, type PresentChunkValue, UnsupportedChunkError } from '../parquet/column-chunk.js';
import { readFooterSummary } from '../parquet/footer.js';
import type { ParquetColumnInfo } from '../parquet/schema.js';
import { assertFilesExist, type DuckDb, guardFiles } from './connection.js';
import { duckdb } from './duckdb.js';
import { createInputsTable, FILE_INDEX_COLUMN, INPUT_ROW_SQL, inputFacts, inputScanSql } from './input-order.js';
import type { InputFooter, SortColumnBatch, SortColumnDescription, SortColumnScan } from './port.js';
import { type ColumnDescription, describeColumns } from './schema-rows.js';
import { sqlIdentifier } from './sql.js';

/**
 * Files of fewer rows than this on average are decoded from their pages when their footers locate the columns'
 * chunks (sortColumnsFromPages), else scanned in input order (ORDER BY the input row): a scan streams one chunk per
 * file, and thousands of small chunks handed over one by one cost several times what a sort into full chunks does.
 * Larger files give full chunks (2,048 rows) anyway, and DuckDB decodes them faster than JavaScript.
 */
const SMALL_FILE_ROWS = 4096;

/** ParquetEngine.scanSortColumns (port.ts). */
export async function scanSortColumns(
  db: DuckDb,
  files: readonly string[],
  columns: readonly string[],
  onBatch: (batch: SortColumnBatch, columns: readonly SortColumnDescription[]) => void,
  inputFooters?: readonly InputFooter[],
): Promise<SortColumnScan> {
  const { connection } = db;
  if (files.length === 0) throw new HudiError('scanSortColumns needs at least one input file', { fix: 'pass the input base files' });
  if (new Set(files).size !== files.length) throw new HudiError('an input file is listed twice', { fix: 'pass each input once' });
  await assertFilesExist(files);
  if (inputFooters !== undefined && inputFooters.length !== files.length) {
    throw new HudiError(`scanSortColumns got ${inputFooters.length} input footers for ${files.length} inputs`, {
      fix: 'pass one footer per input, in input order',
    });
  }
  const { fileRows, oneSchema, readOptions } = inputFacts(inputFooters ?? files.map((file) => readFooterSummary(file)));
  const footerRows = fileRows.reduce((sum, rows) => sum + rows, 0);
  const smallFiles = footerRows < files.length * SMALL_FILE_ROWS;
  if (smallFiles && oneSchema && inputFooters !== undefined) {
    const fromPages = sortColumnsFromPages(files, inputFooters, columns);
    if (fromPages !== undefined) {
      for (const batch of fromPages.batches) onBatch(batch, fromPages.columns);
      return { columns: fromPages.columns, rowCount: footerRows, readFrom: 'pages' };
    }
  }
  const available = await guardFiles(connection, files, () => describeColumns(connection, files, readOptions));
  for (const reserved of [FILE_INDEX_COLUMN, 'file_row_number']) {
    if (available.some((column) => column.name === reserved)) {
      throw new HudiError(`input has a column named "${reserved}", which the sort-column scan uses internally`, {
        location: files[0],
        fix: 'rename the column',
      });
    }
  }
  const descriptions = columns.map((name) => sortColumnDescription(name, available, files[0]!));
  let filesTable: string | undefined;
  let rowCount = 0;
  try {
    const table = await createInputsTable(connection, files, fileRows);
    filesTable = table;
    const result = await guardFiles(connection, files, () =>
      connection.stream(
        `SELECT CAST(${INPUT_ROW_SQL} AS UINTEGER), ${descriptions.map(sortColumnSql).join(', ')} FROM ${inputScanSql(files, table, readOptions)}${
          smallFiles ? ' ORDER BY 1' : ''
        }`,
      ),
    );
    for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const inputRows = Uint32Array.from(chunk.getColumnVector(0).toArray() as number[]);
      const values = descriptions.map((description, index) => sortValues(chunk.getColumnVector(index + 1), description));
      rowCount += inputRows.length;
      onBatch({ inputRows, values }, descriptions);
    }
  } finally {
    if (filesTable !== undefined) await connection.run(`DROP TABLE IF EXISTS ${filesTable}`).catch(() => undefined);
  }
  if (rowCount !== footerRows) {
    throw new HudiError(`read ${rowCount} rows where the footers count ${footerRows}`, { location: files[0], fix: 'retry; if it repeats, report it as a bug' });
  }
  return { columns: descriptions, rowCount, readFrom: 'scan' };
}

/** How Spark reads each Parquet type (ParquetToSparkSchemaConverter), as curves.ts names them. */
function sortColumnType(type: DuckDBType): SortColumnType | undefined {
  const { DuckDBDecimalType, DuckDBTypeId } = duckdb();
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return 'boolean';
    case DuckDBTypeId.TINYINT:
      return 'byte';
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.UTINYINT:
      return 'short';
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.USMALLINT:
      return 'int';
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UINTEGER:
      return 'long';
    case DuckDBTypeId.FLOAT:
      return 'float';
    case DuckDBTypeId.DOUBLE:
      return 'double';
    case DuckDBTypeId.VARCHAR:
      return 'string';
    case DuckDBTypeId.BLOB:
      return 'binary';
    case DuckDBTypeId.DATE:
      return 'date';
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
    case DuckDBTypeId.TIMESTAMP_TZ:
      return 'timestamp';
    case DuckDBTypeId.DECIMAL:
      return type instanceof DuckDBDecimalType ? { kind: 'decimal', scale: type.scale } : undefined;
    default:
      return undefined;
  }
}

function sortColumnDescription(name: string, available: readonly ColumnDescription[], location: string): SortColumnDescription {
  const schemaPosition = available.findIndex((column) => column.name === name);
  if (schemaPosition < 0) {
    throw new HudiError(`no sort column ${JSON.stringify(name)}`, { location, fix: `choose from: ${available.map((column) => column.name).join(', ')}` });
  }
  const column = available[schemaPosition]!;
  const type = sortColumnType(column.type);
  if (type === undefined) {
    throw new HudiError(`sort column "${name}" has type ${column.type.toString()}, which Hudi's z-order/hilbert curves cannot order by`, {
      location,
      fix: 'use hoodie.layout.optimize.strategy=linear, or sort by primitive columns (numbers, strings, dates, timestamps, decimals)',
    });
  }
  return { name, schemaPosition, type };
}

/** The select expression reading a sort column in curves.ts form (dates as days, timestamps as epoch micros). */
function sortColumnSql(column: SortColumnDescription): string {
  const quoted = sqlIdentifier(column.name);
  if (column.type === 'date') return `CAST(${quoted} - DATE '1970-01-01' AS INTEGER)`;
  if (column.type === 'timestamp') return `epoch_us(${quoted})`;
  return quoted;
}

function sortValues(vector: DuckDBVector, column: SortColumnDescription): SortValue[] {
  const { DuckDBBlobValue, DuckDBDecimalValue } = duckdb();
  const items = vector.toArray();
  if (typeof column.type === 'object') return items.map((item) => (item instanceof DuckDBDecimalValue ? item.value : null));
  if (column.type === 'binary') return items.map((item) => (item instanceof DuckDBBlobValue ? item.bytes : null));
  return items as SortValue[];
}

// ---------------------------------------------------------------------------------------------------------------
// Small files: the sort columns decoded from their pages.

/** How one sort column is read from pages: its description, its leaf, and its stored values' conversion. */
interface PageReader {
  readonly description: SortColumnDescription;
  readonly convert: (value: PresentChunkValue) => SortValue;
  readonly optional: boolean;
  readonly leaf: ParquetColumnInfo;
}

/** Rows handed to onBatch at a time from decoded pages. */
const PAGE_BATCH_ROWS = 65_536;

/**
 * The sort columns of small files decoded from their pages (lib/parquet/column-chunk.ts), as DuckDB's scan would
 * give them: decoding the columns here costs a fraction of opening every file once more in DuckDB.
 * For inputs of one schema (the caller checks it), when the columns are top-level primitives of a type read here the
 * way DuckDB reads it and the footers locate their chunks; undefined otherwise (and for any page this decoder does
 * not read), and DuckDB scans the files.
 */
function sortColumnsFromPages(
  files: readonly string[],
  footers: readonly InputFooter[],
  names: readonly string[],
): { columns: SortColumnDescription[]; batches: SortColumnBatch[] } | undefined {
  const schema = footers[0]!.columns;
  if (names.length === 0) return undefined;
  const readers: PageReader[] = [];
  for (const name of names) {
    const found = topLevelPrimitive(schema, name);
    const read = found === undefined ? undefined : pageSortType(found.leaf);
    if (found === undefined || read === undefined) return undefined;
    const { leaf, schemaPosition } = found;
    readers.push({ description: { name, schemaPosition, type: read.type }, convert: read.convert, optional: leaf.repetition === 'OPTIONAL', leaf });
  }
  const batches: SortColumnBatch[] = [];
  let pending: { first: number; values: SortValue[][] } = { first: 0, values: readers.map(() => []) };
  let row = 0;
  const flush = (): void => {
    const count = pending.values[0]!.length;
    if (count === 0) return;
    const inputRows = new Uint32Array(count);
    for (let index = 0; index < count; index++) inputRows[index] = pending.first + index;
    batches.push({ inputRows, values: pending.values });
    pending = { first: row, values: readers.map(() => []) };
  };
  try {
    for (const [index, file] of files.entries()) {
      const footer = footers[index]!;
      const chunks = readers.map((reader) => footer.chunks?.get(reader.leaf.name));
      if (chunks.some((located) => located === undefined)) return undefined;
      // Decoded straight into the batch; a file whose pages hold another row count abandons the page path altogether.
      const before = pending.values[0]!.length;
      readFileChunks(file, chunks as (readonly ChunkLocation[])[], readers, pending.values);
      if (pending.values.some((values) => values.length !== before + footer.numRows)) return undefined;
      row += footer.numRows;
      if (pending.values[0]!.length >= PAGE_BATCH_ROWS) flush();
    }
  } catch (error) {
    if (error instanceof UnsupportedChunkError) return undefined;
    throw error;
  }
  flush();
  return { columns: readers.map((reader) => reader.description), batches };
}

/**
 * Each column's values in a file, row group by row group, appended to `into[column]` (one read when its chunks lie
 * within a small span).
 */
function readFileChunks(file: string, chunks: readonly (readonly ChunkLocation[])[], columns: readonly PageReader[], into: SortValue[][]): void {
  const all = chunks.flat();
  const start = Math.min(...all.map((chunk) => chunk.offset));
  const end = Math.max(...all.map((chunk) => chunk.offset + chunk.length));
  const descriptor = openSync(file, 'r');
  try {
    const span = end - start <= ONE_READ_BYTES ? readBytes(descriptor, start, end - start) : undefined;
    chunks.forEach((located, column) => {
      const { optional, leaf, convert } = columns[column]!;
      for (const chunk of located) {
        const bytes =
          span === undefined ? readBytes(descriptor, chunk.offset, chunk.length) : span.subarray(chunk.offset - start, chunk.offset - start + chunk.length);
        decodeFlatChunk(bytes, chunk, { physicalType: leaf.physicalType!, optional, convert }, into[column]!);
      }
    });
  } finally {
    closeSync(descriptor);
  }
}

/** A file's chunks closer together than this are read at once. */
const ONE_READ_BYTES = 1024 * 1024;

function readBytes(descriptor: number, start: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const read = readSync(descriptor, buffer, filled, length - filled, start + filled);
    if (read === 0) throw new UnsupportedChunkError(`the file ends inside a column chunk at ${start + filled}`);
    filled += read;
  }
  return buffer;
}

/** Milliseconds (a safe-integer number or a bigint) as microseconds: a number while the product stays exact. */
function millisToMicros(value: PresentChunkValue): SortValue {
  if (typeof value === 'number') {
    const micros = value * 1000;
    return Number.isSafeInteger(micros) ? micros : BigInt(value) * 1000n;
  }
  return (value as bigint) * 1000n;
}

/**
 * A leaf's curve type as DuckDB reads its Parquet type (sortColumnType of the DuckDB type), and its page values in
 * the form sortValues gives: undefined for the types left to DuckDB (decimals, unsigned integers, binary, times,
 * nanosecond and INT96 timestamps, JSON, ENUM, UUID, FLOAT16).
 */
/**
 * A top-level column that is a primitive leaf (not nested, not repeated), with its position among the top-level
 * columns (the schema position Hudi's DIRECT curves order by).
 */
export function topLevelPrimitive(
  schema: readonly ParquetColumnInfo[],
  name: string,
): { readonly leaf: ParquetColumnInfo; readonly schemaPosition: number } | undefined {
  const topLevel = schema.filter((column) => column.path.length === 1);
  const schemaPosition = topLevel.findIndex((column) => column.name === name);
  const leaf = topLevel[schemaPosition];
  return leaf === undefined || leaf.numChildren !== 0 || leaf.repetition === 'REPEATED' ? undefined : { leaf, schemaPosition };
}

/**
 * The Spark type of a Parquet leaf read here from its pages (as DuckDB's scan reads it) and how a stored value
 * converts; undefined for leaves this reads no other way than by a scan.
 */
export function pageSortType(leaf: ParquetColumnInfo): { type: SortColumnType; convert: (value: PresentChunkValue) => SortValue } | undefined {
  const same = (value: PresentChunkValue): SortValue => value as SortValue;
  const logical = leaf.logicalType;
  switch (leaf.physicalType) {
    case 'BOOLEAN':
      return logical === undefined ? { type: 'boolean', convert: same } : undefined;
    case 'INT32':
      if (logical === undefined) return { type: 'int', convert: same };
      if (logical === 'DATE') return { type: 'date', convert: same };
      if (logical === 'INTEGER' && leaf.isSigned !== false) {
        const type = leaf.bitWidth === 8 ? 'byte' : leaf.bitWidth === 16 ? 'short' : leaf.bitWidth === 32 ? 'int' : undefined;
        return type === undefined ? undefined : { type, convert: same };
      }
      return undefined;
    case 'INT64':
      if (logical === undefined || (logical === 'INTEGER' && leaf.isSigned !== false && leaf.bitWidth === 64)) return { type: 'long', convert: same };
      if (logical === 'TIMESTAMP' && leaf.timeUnit === 'MICROS') return { type: 'timestamp', convert: same };
      if (logical === 'TIMESTAMP' && leaf.timeUnit === 'MILLIS') return { type: 'timestamp', convert: millisToMicros };
      return undefined;
    case 'FLOAT':
      return logical === undefined ? { type: 'float', convert: same } : undefined;
    case 'DOUBLE':
      return logical === undefined ? { type: 'double', convert: same } : undefined;
    case 'BYTE_ARRAY':
      if (logical !== 'STRING') return undefined;
      return {
        type: 'string',
        convert: (value) => {
          const bytes = value as Buffer;
          // DuckDB refuses a VARCHAR that is not UTF-8: left to it, so the error is its own.
          if (!isUtf8(bytes)) throw new UnsupportedChunkError('a string that is not UTF-8');
          return bytes.toString('utf8');
        },
      };
    default:
      return undefined;
  }
}
