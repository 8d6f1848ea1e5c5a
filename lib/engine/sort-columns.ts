/**
 * Sort-column values for the space-filling curves (lib/layout/curves.ts): every input row's values of the sort
 * columns, streamed in batches keyed by input-order row number, as the Spark types Hudi's curve builders take.
 */
import { DuckDBBlobValue, DuckDBDecimalType, DuckDBDecimalValue, DuckDBTypeId } from '@duckdb/node-api';
import type { DuckDBType, DuckDBVector } from '@duckdb/node-api';
import { HudiError } from '../errors.js';
import type { SortColumnType, SortValue } from '../layout/curves.js';
import { assertFilesExist, guardFiles, type DuckDb } from './connection.js';
import { readFooterSummary } from '../parquet/footer.js';
import { createInputsTable, FILE_INDEX_COLUMN, INPUT_ROW_SQL, inputFacts, inputScanSql } from './input-order.js';
import type { InputFooter, SortColumnBatch, SortColumnDescription } from './port.js';
import { describeColumns, type ColumnDescription } from './schema-rows.js';
import { sqlIdentifier } from './sql.js';

/**
 * Files of fewer rows than this on average are scanned in input order (ORDER BY the input row): a scan streams one
 * chunk per file, and 10,000 chunks of 100 rows handed over one by one took three times what a sort into full chunks
 * does. Larger files give full chunks (2,048 rows) anyway.
 */
const SMALL_FILE_ROWS = 4096;

/** ParquetEngine.scanSortColumns (port.ts). */
export async function scanSortColumns(
  db: DuckDb,
  files: readonly string[],
  columns: readonly string[],
  onBatch: (batch: SortColumnBatch, columns: readonly SortColumnDescription[]) => void,
  inputFooters?: readonly InputFooter[],
): Promise<{ columns: SortColumnDescription[]; rowCount: number }> {
  const { connection } = db;
  if (files.length === 0) throw new HudiError('scanSortColumns needs at least one input file', { fix: 'pass the input base files' });
  if (new Set(files).size !== files.length) throw new HudiError('an input file is listed twice', { fix: 'pass each input once' });
  await assertFilesExist(files);
  if (inputFooters !== undefined && inputFooters.length !== files.length) {
    throw new HudiError(`scanSortColumns got ${inputFooters.length} input footers for ${files.length} inputs`, {
      fix: 'pass one footer per input, in input order',
    });
  }
  const { fileRows, readOptions } = inputFacts(inputFooters ?? files.map((file) => readFooterSummary(file)));
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
  const footerRows = fileRows.reduce((sum, rows) => sum + rows, 0);
  let filesTable: string | undefined;
  let rowCount = 0;
  try {
    const table = await createInputsTable(connection, files, fileRows);
    filesTable = table;
    const result = await guardFiles(connection, files, () =>
      connection.stream(
        `SELECT CAST(${INPUT_ROW_SQL} AS UINTEGER), ${descriptions.map(sortColumnSql).join(', ')} FROM ${inputScanSql(files, table, readOptions)}${
          footerRows < files.length * SMALL_FILE_ROWS ? ' ORDER BY 1' : ''
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
  return { columns: descriptions, rowCount };
}

/** How Spark reads each Parquet type (ParquetToSparkSchemaConverter), as curves.ts names them. */
function sortColumnType(type: DuckDBType): SortColumnType | undefined {
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
  const items = vector.toArray();
  if (typeof column.type === 'object') return items.map((item) => (item instanceof DuckDBDecimalValue ? item.value : null));
  if (column.type === 'binary') return items.map((item) => (item instanceof DuckDBBlobValue ? item.bytes : null));
  return items as SortValue[];
}
