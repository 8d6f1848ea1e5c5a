/**
 * Local Parquet reading and writing for table services. The only module that knows DuckDB's API:
 * the rest of lib/ sees plain paths, rows (`row-format.ts`) and the types below.
 *
 * DuckDB facts this relies on (see shared/docs/parquet-engine.md):
 * - It reads and writes local paths only, so callers stage objects in a temp dir first.
 * - One COPY that splits its output over several files loses the global order on >1 thread, so
 *   `copySorted` ranks the rows once and writes one COPY per output file over an explicit rank range.
 * - It does not keep the input's Parquet types by itself. `copySorted` casts where a DuckDB type
 *   exists (TIMESTAMP_MILLIS → TIMESTAMP_MS, NANOS → TIMESTAMP_NS) and repairs the written file where
 *   none does (decimal physical types, the timestamp UTC flag; see "Type repair" below), then compares
 *   the output's schema with the input's.
 */
import { randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  BIGINT,
  DuckDBArrayValue,
  DuckDBBigIntVector,
  DuckDBDataChunk,
  DuckDBDecimalType,
  DuckDBBitValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBInstance,
  DuckDBIntervalValue,
  DuckDBListType,
  DuckDBListValue,
  DuckDBMapType,
  DuckDBMapValue,
  DuckDBStructType,
  DuckDBStructValue,
  DuckDBTimeNSValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTimeTZValue,
  DuckDBTimeValue,
  DuckDBTypeId,
  DuckDBUnionValue,
  DuckDBUUIDValue,
  DuckDBVector,
  TIMESTAMP_MS,
  TIMESTAMP_NS,
} from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBResultReader, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { errorMessage, HudiError, NotFoundError } from '../errors.js';
import {
  bytesToJson,
  dateToJson,
  daysFromCivil,
  decimalToJson,
  float32ToJson,
  float64ToJson,
  integerToJson,
  mapToJson,
  timestampToJson,
  timeToJson,
} from './row-format.js';
import type { JsonValue, Row } from './row-format.js';
import type { SortColumnType, SortValue } from '../layout/curves.js';

// ───────────────────────────── Public types ─────────────────────────────

export interface ParquetEngineOptions {
  /** DuckDB memory limit, e.g. '512MB'; beyond it sorts spill to `tempDirectory`. */
  memoryLimit?: string;
  /** Worker threads; Lambda gives 2 vCPUs up to 3,538 MB. */
  threads?: number;
  /** Where DuckDB spills (Lambda: under /tmp). */
  tempDirectory?: string;
}

export type ParquetPhysicalType =
  | 'BOOLEAN'
  | 'INT32'
  | 'INT64'
  | 'INT96'
  | 'FLOAT'
  | 'DOUBLE'
  | 'BYTE_ARRAY'
  | 'FIXED_LEN_BYTE_ARRAY';

export type ParquetTimeUnit = 'MILLIS' | 'MICROS' | 'NANOS';

/** One Parquet schema element (the root excluded), in schema order: groups before their children. */
export interface ParquetColumnInfo {
  /** Names from the top-level column down to this element, e.g. ['arrayField', 'array', 'arr_struct_f1']. */
  path: string[];
  name: string;
  repetition: 'REQUIRED' | 'OPTIONAL' | 'REPEATED';
  /** 0 for primitive (leaf) columns. */
  numChildren: number;
  /** Leaves only. */
  physicalType?: ParquetPhysicalType;
  /** FIXED_LEN_BYTE_ARRAY only. */
  typeLength?: number;
  /** The logical type annotation: 'STRING', 'DECIMAL', 'DATE', 'TIMESTAMP', 'TIME', 'INTEGER', 'LIST', 'MAP', 'ENUM', 'JSON', 'UUID', … */
  logicalType?: string;
  /** The legacy converted type: 'UTF8', 'DECIMAL', 'TIMESTAMP_MILLIS', 'LIST', 'MAP', 'MAP_KEY_VALUE', … */
  convertedType?: string;
  precision?: number;
  scale?: number;
  /** TIMESTAMP and TIME. */
  timeUnit?: ParquetTimeUnit;
  isAdjustedToUTC?: boolean;
  /** INTEGER annotations. */
  bitWidth?: number;
  isSigned?: boolean;
}

export interface ParquetFooter {
  /** Footer key/value metadata (Hudi: hoodie_min_record_key, org.apache.hudi.bloomfilter, parquet.avro.schema, …). */
  keyValues: Record<string, string>;
  numRows: number;
  rowGroupCount: number;
  createdBy: string | undefined;
  schema: ParquetColumnInfo[];
}

/** Min/max/null figures of one leaf column of one file, summed over its row groups. */
export interface ColumnStats {
  /** Parquet column path joined by '.', as Hudi's column stats name it (e.g. 'structField.field1'). */
  column: string;
  physicalType: ParquetPhysicalType;
  /** JSON-ready like row values (row-format.ts); null when some row group has no min/max or the type has no comparable form (BLOB). */
  min: JsonValue;
  max: JsonValue;
  /** null when some row group does not record it. */
  nullCount: number | null;
  valueCount: number;
}

export interface FileColumnStats {
  file: string;
  rowCount: number;
  rowGroupCount: number;
  columns: ColumnStats[];
}

/**
 * A sort key: a column name (dots reach into struct fields when no top-level column has the dotted
 * name), optionally descending, or a trusted SQL expression (never pass user text as `sqlExpression`).
 * Ascending keys put nulls first and descending keys nulls last, like Spark.
 */
export type SortKey = string | { column: string; descending?: boolean } | { sqlExpression: string; descending?: boolean };

export interface OutputRange {
  file: string;
  /** 0-based rank of the first row in the sorted input. */
  rowStart: number;
  rowCount: number;
  /** Footer key/value metadata for this file (Hudi's bloom filter, min/max record keys, Avro schema). */
  keyValues: Record<string, string>;
  /** VARCHAR columns written as this text in every row instead of their input values (Hudi: `_hoodie_file_name`). */
  constantColumns?: Readonly<Record<string, string>>;
  /**
   * VARCHAR columns written as `<prefix><n>`, n the row's 0-based position in this file (Hudi's
   * `_hoodie_commit_seqno` when a rewrite does not keep the records' metadata).
   */
  sequenceColumns?: Readonly<Record<string, string>>;
}

/** Footer key/values computed from one column's values of an output's rows, read before the file is written. */
export interface FooterFromColumn {
  /** A VARCHAR column (Hudi: `_hoodie_record_key`); nulls are skipped. */
  column: string;
  /** Called once per output with that output's values (any order); its entries override the output's keyValues. */
  build(values: Iterable<string>, output: OutputRange): Record<string, string>;
}

export interface CopySortedRequest {
  inputs: readonly string[];
  /** Empty or absent: input order (file by file, row by row). Ties always break by input file, then row. */
  orderBy?: readonly SortKey[];
  /**
   * An order computed outside the engine (space-filling curve keys): the 0-based rank of every input row, in input
   * order (inputs in the order given, rows in file order), a permutation of 0..rows-1. Replaces orderBy.
   */
  rowRanks?: Uint32Array;
  footerFromColumn?: FooterFromColumn;
  /** Non-overlapping rank ranges within [0, total rows). They need not cover every row. */
  outputs: readonly OutputRange[];
  rowGroupSize: number;
  /**
   * What to do when an output's Parquet types still differ from the input's after casts and repairs
   * in a way readers notice ('incompatible' deviations): 'throw' (default; the outputs are removed) or
   * 'report' (keep them and return the deviations).
   */
  onTypeMismatch?: 'throw' | 'report';
}

/** How an output column's Parquet type differs from the input's. */
export interface SchemaDeviation {
  /** '.'-joined column path; '[]' marks list elements, '{key}'/'{value}' map parts. */
  column: string;
  input: string;
  output: string;
  /** true when Spark and parquet-avro (Hudi) read both the same way, e.g. a 2-level vs a 3-level list. */
  compatible: boolean;
}

export interface CopySortedOutput {
  file: string;
  rowCount: number;
  /** Columns whose Parquet type was fixed in the written file (decimal physical type, UTC flag). */
  repairedColumns: string[];
  deviations: SchemaDeviation[];
}

export interface CopySortedResult {
  totalInputRows: number;
  outputs: CopySortedOutput[];
}

export interface ReadRowsOptions {
  /** Top-level columns to return, in this order; default all, in file schema order. */
  columns?: readonly string[];
  limit?: number;
}

/** Rows plus their column names in file schema order (JS objects put integer-like keys first, so rows alone cannot carry it). */
export interface RowSet {
  columns: string[];
  rows: Row[];
}

/** A sort column as the space-filling curves need it (lib/layout/curves.ts). */
export interface SortColumnDescription {
  name: string;
  /** Position among the inputs' top-level columns (Hudi's meta columns first), which orders DIRECT curve columns. */
  schemaPosition: number;
  type: SortColumnType;
}

/** Some rows' sort-column values, in no particular order: row i is input row `inputRows[i]` (input order as in rowRanks). */
export interface SortColumnBatch {
  inputRows: Uint32Array;
  /** One array per requested column, values in curves.ts form (dates as days, timestamps as epoch micros, decimals unscaled). */
  values: SortValue[][];
}

export interface SampleRowsOptions {
  /** Top-level columns to return. */
  columns: readonly string[];
  count: number;
  /** Rows are picked by the hash of these columns' values (and the seed), so the same data gives the same sample wherever it is staged. */
  hashColumns: readonly string[];
  seed?: number;
}

export interface ParquetEngine {
  /** Rows of local Parquet files (columns united by name), values JSON-ready per row-format.ts. */
  readRows(files: readonly string[], options?: ReadRowsOptions): Promise<RowSet>;
  /**
   * Stream sort-column values of every input row to `onBatch` (batches of up to 2,048 rows), mapped to the Spark
   * types Hudi's curve builders take; refuses columns of other types. Returns the columns' descriptions and the row count.
   */
  scanSortColumns(
    files: readonly string[],
    columns: readonly string[],
    onBatch: (batch: SortColumnBatch, columns: readonly SortColumnDescription[]) => void,
  ): Promise<{ columns: SortColumnDescription[]; rowCount: number }>;
  /** Up to `count` rows picked deterministically from the data (by value hash, not by position); values as readRows. */
  sampleRows(files: readonly string[], options: SampleRowsOptions): Promise<RowSet>;
  readFooter(file: string): Promise<ParquetFooter>;
  /** Row-group statistics per file and leaf column; reads footers only. */
  columnStats(files: readonly string[]): Promise<FileColumnStats[]>;
  /** Total rows from the footers. */
  countRows(files: readonly string[]): Promise<number>;
  /** DuckDB's memory limit in bytes (what it was opened with, or its default share of the machine's memory). */
  memoryLimitBytes(): Promise<number>;
  /** Sort the inputs once, then write each output's rank range to its own file, keeping the input's Parquet types. */
  copySorted(request: CopySortedRequest): Promise<CopySortedResult>;
  close(): Promise<void>;
}

// ───────────────────────────── SQL quoting ─────────────────────────────

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
function fileListSql(files: readonly string[]): string {
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

// Hive-style Hudi paths (byteField=10/) must not turn into extra or overriding columns.
const READ_OPTIONS = 'union_by_name = true, hive_partitioning = false';

// ───────────────────────────── Engine ─────────────────────────────

export async function openParquetEngine(options: ParquetEngineOptions = {}): Promise<ParquetEngine> {
  const { instance, connection } = await openDuckDb(options);
  return new DuckDBParquetEngine(instance, connection);
}

/** A DuckDB instance and connection configured for this project (no network, UTC); shared with lib/engine/write.ts. */
export async function openDuckDb(options: ParquetEngineOptions = {}): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  const config: Record<string, string> = {
    // No network in Lambda: never try to fetch extensions (parquet, json and icu are built in).
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // Its validation cannot see a same-second rewrite (type repair rewrites outputs), and local reads hit the page cache anyway.
    enable_external_file_cache: 'false',
  };
  if (options.memoryLimit !== undefined) config.memory_limit = options.memoryLimit;
  if (options.threads !== undefined) config.threads = String(options.threads);
  if (options.tempDirectory !== undefined) config.temp_directory = options.tempDirectory;
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(':memory:', config);
  } catch (cause) {
    throw new HudiError(`could not start DuckDB: ${duckdbReason(cause)}`, {
      fix: 'check memoryLimit/threads/tempDirectory',
      cause,
    });
  }
  const connection = await instance.connect();
  // TIMESTAMPTZ → TIMESTAMP_MS casts and statistics text must not shift by the host's zone.
  await connection.run(`SET TimeZone = 'UTC'`);
  return { instance, connection };
}

interface ColumnDescription {
  name: string;
  type: DuckDBType;
}

class DuckDBParquetEngine implements ParquetEngine {
  /** One statement at a time on the connection; calls queue here. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new HudiError('the Parquet engine is closed', { fix: 'open a new engine' }));
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    await this.queue;
    if (this.closed) return;
    this.closed = true;
    this.connection.closeSync();
    this.instance.closeSync();
  }

  readRows(files: readonly string[], options: ReadRowsOptions = {}): Promise<RowSet> {
    return this.exclusive(async () => {
      if (files.length === 0) return { columns: [...(options.columns ?? [])], rows: [] };
      await assertFilesExist(files);
      const available = await this.guard(files, () => this.describe(files));
      const wanted = options.columns ?? available.map((column) => column.name);
      const missing = wanted.filter((name) => !available.some((column) => column.name === name));
      if (missing.length > 0) {
        throw new HudiError(`no column ${missing.map((name) => JSON.stringify(name)).join(', ')}`, {
          location: files[0],
          fix: `choose from: ${available.map((column) => column.name).join(', ')}`,
        });
      }
      const limit = options.limit === undefined ? '' : ` LIMIT ${nonNegativeInteger(options.limit, 'limit')}`;
      const sql = `SELECT ${wanted.map(sqlIdentifier).join(', ')} FROM read_parquet(${fileListSql(files)}, ${READ_OPTIONS})${limit}`;
      return rowSetOf(await this.guard(files, () => this.connection.runAndReadAll(sql)));
    });
  }

  readFooter(file: string): Promise<ParquetFooter> {
    return this.exclusive(async () => {
      await assertFilesExist([file]);
      return this.guard([file], async () => {
        const list = fileListSql([file]);
        const [metadata] = await this.objects(`SELECT num_rows, num_row_groups, created_by FROM parquet_file_metadata(${list})`);
        const keyValueRows = await this.objects(`SELECT key, value FROM parquet_kv_metadata(${list})`);
        const keyValues: Record<string, string> = {};
        for (const row of keyValueRows) keyValues[blobText(row.key)] = blobText(row.value);
        const schema = (await this.schemas([file])).get(file) ?? [];
        return {
          keyValues,
          numRows: toNumber(metadata?.num_rows),
          rowGroupCount: toNumber(metadata?.num_row_groups),
          createdBy: typeof metadata?.created_by === 'string' ? metadata.created_by : undefined,
          schema: schema.map((entry) => entry.info),
        };
      });
    });
  }

  countRows(files: readonly string[]): Promise<number> {
    return this.exclusive(() => this.countRowsNow(files));
  }

  memoryLimitBytes(): Promise<number> {
    return this.exclusive(async () => {
      const [row] = await this.objects(`SELECT current_setting('memory_limit') AS text`);
      return parseMemorySize(String(row?.text ?? ''));
    });
  }

  private async countRowsNow(files: readonly string[]): Promise<number> {
    if (files.length === 0) return 0;
    await assertFilesExist(files);
    const [row] = await this.guard(files, () =>
      this.objects(`SELECT sum(num_rows) AS total FROM parquet_file_metadata(${fileListSql(files)})`),
    );
    return toNumber(row?.total);
  }

  columnStats(files: readonly string[]): Promise<FileColumnStats[]> {
    return this.exclusive(async () => {
      if (files.length === 0) return [];
      await assertFilesExist(files);
      return this.guard(files, async () => {
        const schemas = await this.schemas(files);
        const rows = await this.objects(
          `SELECT file_name, row_group_id, row_group_num_rows, column_id, stats_min_value, stats_max_value, stats_null_count, num_values
           FROM parquet_metadata(${fileListSql(files)})`,
        );
        return files.map((file) => summarizeFileStats(file, schemas.get(file) ?? [], rows.filter((row) => row.file_name === file)));
      });
    });
  }

  copySorted(request: CopySortedRequest): Promise<CopySortedResult> {
    return this.exclusive(() => this.copySortedNow(request));
  }

  private async copySortedNow(request: CopySortedRequest): Promise<CopySortedResult> {
    const { inputs, outputs } = request;
    if (inputs.length === 0) throw new HudiError('copySorted needs at least one input file', { fix: 'pass the input base files' });
    if (outputs.length === 0) throw new HudiError('copySorted needs at least one output range', { fix: 'pass the output files' });
    if (new Set(inputs).size !== inputs.length) throw new HudiError('an input file is listed twice', { fix: 'pass each input once' });
    const rowGroupSize = positiveInteger(request.rowGroupSize, 'rowGroupSize');
    await assertFilesExist(inputs);
    const fileRows = await this.rowsPerFile(inputs);
    const totalInputRows = fileRows.reduce((sum, rows) => sum + rows, 0);
    checkOutputRanges(outputs, totalInputRows);
    if (request.rowRanks !== undefined) {
      if ((request.orderBy ?? []).length > 0) throw new HudiError('copySorted takes orderBy or rowRanks, not both', { fix: 'pass one of them' });
      checkRowRanks(request.rowRanks, totalInputRows);
    }

    const columns = await this.guard(inputs, () => this.describe(inputs));
    const sortKeyNamed = columns.find((column) => column.name.startsWith(SORT_KEY_PREFIX));
    for (const reserved of [...INTERNAL_COLUMNS, 'file_row_number', ...(sortKeyNamed === undefined ? [] : [sortKeyNamed.name])]) {
      if (columns.some((column) => column.name === reserved)) {
        throw new HudiError(`input has a column named "${reserved}", which copySorted uses internally`, {
          location: inputs[0],
          fix: 'rename the column',
        });
      }
    }
    checkOutputColumns(outputs, request.footerFromColumn, columns);
    const inputSchemas = await this.guard(inputs, () => this.schemas(inputs));
    const inputFields = latestTopLevelFields(inputs, inputSchemas);
    const projection = columns.map((column) => {
      const node = inputFields.get(column.name);
      const target = node === undefined ? column.type : preservingType(column.type, node);
      const quoted = sqlIdentifier(column.name);
      return target.toString() === column.type.toString() ? quoted : `CAST(${quoted} AS ${target.toString()}) AS ${quoted}`;
    });
    // Input order = position in `inputs`, then row in file: the tie-break of every sort, and the key rowRanks use.
    const inputRow = `(${sqlIdentifier(FILE_OFFSET_COLUMN)} + file_row_number)`;
    let rankExpression: string;
    if (request.rowRanks !== undefined) rankExpression = sqlIdentifier(RANK_VALUE_COLUMN);
    else if ((request.orderBy ?? []).length > 0) {
      const ordering = [...(request.orderBy ?? []).map((key) => sortKeySql(key, columns)), `${inputRow} ASC`];
      rankExpression = `row_number() OVER (ORDER BY ${ordering.join(', ')}) - 1`;
    } else rankExpression = inputRow;

    const suffix = randomUUID().replaceAll('-', '');
    const table = sqlIdentifier(`__hudi_sorted_${suffix}`);
    const filesTable = sqlIdentifier(`__hudi_inputs_${suffix}`);
    const ranksTable = sqlIdentifier(`__hudi_ranks_${suffix}`);
    const written: string[] = [];
    try {
      let offset = 0;
      const fileEntries = inputs.map((file, index) => {
        const entry = `(${sqlString(file)}, ${offset})`;
        offset += fileRows[index]!;
        return entry;
      });
      await this.connection.run(
        `CREATE TEMP TABLE ${filesTable} AS SELECT * FROM (VALUES ${fileEntries.join(', ')}) AS t(${sqlIdentifier(SOURCE_FILE_COLUMN)}, ${sqlIdentifier(FILE_OFFSET_COLUMN)})`,
      );
      let rankJoin = '';
      if (request.rowRanks !== undefined) {
        await this.loadRanks(ranksTable, request.rowRanks);
        rankJoin = `JOIN ${ranksTable} USING (${sqlIdentifier(INPUT_ROW_COLUMN)})`;
      }
      const sortedSource = `SELECT ${projection.join(', ')}, ${rankExpression} AS ${sqlIdentifier(RANK_COLUMN)}
           FROM (SELECT *, ${inputRow} AS ${sqlIdentifier(INPUT_ROW_COLUMN)}
                 FROM read_parquet(${fileListSql(inputs)}, ${READ_OPTIONS}, file_row_number = true, filename = ${sqlString(SOURCE_FILE_COLUMN)})
                 JOIN ${filesTable} USING (${sqlIdentifier(SOURCE_FILE_COLUMN)})) AS source
           ${rankJoin}`;
      const single = outputs[0]!;
      if (outputs.length === 1 && single.rowStart === 0 && single.rowCount === totalInputRows && single.sequenceColumns === undefined) {
        // One output holding every row: sort and write in one COPY (as DuckDB alone would), while a second
        // connection reads the footer column, in any order, for the footer (bloom filter, min/max keys).
        await mkdir(dirname(single.file), { recursive: true });
        written.push(single.file);
        const footer = request.footerFromColumn;
        // Input order needs no sort: DuckDB scans the files in list order, rows in file order.
        let query: string;
        if (rankExpression === inputRow) {
          query = `SELECT ${outputColumnsSql(columns, single).join(', ')} FROM (SELECT ${projection.join(', ')} FROM read_parquet(${fileListSql(inputs)}, ${READ_OPTIONS}))`;
        } else if (request.rowRanks === undefined) {
          // ORDER BY the keys themselves: a row_number() window over them and then a sort by it costs a second sort.
          // The keys are computed beside the projection, over the input's own (uncast) columns, as the window did.
          const keys = (request.orderBy ?? []).map((key) => sortKeyParts(key, columns));
          const keyColumns = keys.map((key, index) => `${key.expression} AS ${sqlIdentifier(`${SORT_KEY_PREFIX}${index}`)}`);
          const ordering = [...keys.map((key, index) => `${sqlIdentifier(`${SORT_KEY_PREFIX}${index}`)} ${key.direction}`), `${sqlIdentifier(INPUT_ROW_COLUMN)} ASC`];
          query = `SELECT ${outputColumnsSql(columns, single).join(', ')}
                   FROM (SELECT ${[...projection, ...keyColumns, sqlIdentifier(INPUT_ROW_COLUMN)].join(', ')}
                         FROM (SELECT *, ${inputRow} AS ${sqlIdentifier(INPUT_ROW_COLUMN)}
                               FROM read_parquet(${fileListSql(inputs)}, ${READ_OPTIONS}, file_row_number = true, filename = ${sqlString(SOURCE_FILE_COLUMN)})
                               JOIN ${filesTable} USING (${sqlIdentifier(SOURCE_FILE_COLUMN)})) AS source)
                   ORDER BY ${ordering.join(', ')}`;
        } else query = `SELECT ${outputColumnsSql(columns, single).join(', ')} FROM (${sortedSource}) ORDER BY ${sqlIdentifier(RANK_COLUMN)}`;
        const [, footerKeyValues] = await Promise.all([
          this.guard(inputs, () => this.copyTo(query, single.file, rowGroupSize, footer === undefined ? single.keyValues : {})),
          // The footer (bloom filter: JavaScript on this thread) is built while DuckDB's threads write the file.
          footer === undefined ? Promise.resolve(undefined) : this.guard(inputs, () => this.columnValuesOnSide(inputs, footer.column)).then((values) => footer.build(values, single)),
        ]);
        const result = await this.finishOutput(single, inputFields);
        if (footerKeyValues !== undefined) await setFooterKeyValues(single.file, { ...single.keyValues, ...footerKeyValues });
        assertCompatible([result], request.onTypeMismatch);
        return { totalInputRows, outputs: [result] };
      }
      await this.guard(inputs, () => this.connection.run(`CREATE TEMP TABLE ${table} AS ${sortedSource}`));
      const results: CopySortedOutput[] = [];
      for (const output of outputs) {
        const keyValues = request.footerFromColumn === undefined
          ? output.keyValues
          : { ...output.keyValues, ...request.footerFromColumn.build(await this.rangeValues(table, request.footerFromColumn.column, output), output) };
        await mkdir(dirname(output.file), { recursive: true });
        written.push(output.file);
        results.push(await this.writeRange(table, columns, { ...output, keyValues }, rowGroupSize, inputFields));
      }
      assertCompatible(results, request.onTypeMismatch);
      return { totalInputRows, outputs: results };
    } catch (error) {
      await Promise.all(written.map((file) => rm(file, { force: true })));
      throw error;
    } finally {
      for (const name of [table, ranksTable, filesTable]) await this.connection.run(`DROP TABLE IF EXISTS ${name}`).catch(() => undefined);
    }
  }

  /** One column's non-null values of some files, read on a connection of its own (so it runs beside a COPY). */
  private async columnValuesOnSide(files: readonly string[], column: string): Promise<string[]> {
    const side = await this.instance.connect();
    try {
      // Joined with NUL separators file by file (a few hundred strings instead of a million values to convert);
      // a file whose value count does not match (a value holding NUL) is read value by value instead.
      const quoted = sqlIdentifier(column);
      const fileColumn = sqlString(SOURCE_FILE_COLUMN);
      const reader = await side.runAndReadAll(
        `SELECT ${sqlIdentifier(SOURCE_FILE_COLUMN)}, count(*), string_agg(${quoted}, chr(0))
         FROM read_parquet(${fileListSql(files)}, ${READ_OPTIONS}, filename = ${fileColumn}) WHERE ${quoted} IS NOT NULL GROUP BY ALL`,
      );
      const values: string[] = [];
      for (const [file, count, joined] of reader.getRows()) {
        let pieces = String(joined ?? '').split('\u0000', Number(count) + 1);
        if (pieces.length !== Number(count)) {
          const one = await side.runAndReadAll(`SELECT ${quoted} FROM read_parquet(${fileListSql([String(file)])}, ${READ_OPTIONS}) WHERE ${quoted} IS NOT NULL`);
          pieces = (one.getColumnsJS()[0] ?? []).map(String);
        }
        for (const piece of pieces) values.push(piece);
      }
      return values;
    } finally {
      side.closeSync();
    }
  }

  /** Footer row counts, file by file. */
  private async rowsPerFile(files: readonly string[]): Promise<number[]> {
    const rows = await this.guard(files, () => this.objects(`SELECT file_name, num_rows FROM parquet_file_metadata(${fileListSql(files)})`));
    const byFile = new Map(rows.map((row) => [String(row.file_name), toNumber(row.num_rows)]));
    return files.map((file) => byFile.get(file) ?? 0);
  }

  /** rowRanks → a table (input row, rank) through DuckDB's appender, 2,048 rows per chunk. */
  private async loadRanks(table: string, ranks: Uint32Array): Promise<void> {
    await this.connection.run(`CREATE TEMP TABLE ${table} (${sqlIdentifier(INPUT_ROW_COLUMN)} BIGINT, ${sqlIdentifier(RANK_VALUE_COLUMN)} BIGINT)`);
    const appender = await this.connection.createAppender(table.slice(1, -1), 'main', 'temp');
    try {
      const chunkRows = DuckDBVector.standardSize();
      const chunk = DuckDBDataChunk.create([BIGINT, BIGINT], chunkRows);
      for (let start = 0; start < ranks.length; start += chunkRows) {
        const count = Math.min(chunkRows, ranks.length - start);
        chunk.reset();
        chunk.rowCount = count;
        const rows = chunk.getColumnVector(0) as DuckDBBigIntVector;
        const values = chunk.getColumnVector(1) as DuckDBBigIntVector;
        for (let index = 0; index < count; index++) {
          rows.setItem(index, BigInt(start + index));
          values.setItem(index, BigInt(ranks[start + index]!));
        }
        rows.flush();
        values.flush();
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  /**
   * One column's non-null text values over an output's rank range. DuckDB joins them 65,536 at a time with NUL
   * separators, so a million keys cost a few strings instead of a million; a piece whose value count does not match
   * (a value holding NUL) is read value by value instead.
   */
  private async rangeValues(table: string, column: string, output: OutputRange): Promise<Iterable<string>> {
    const rank = sqlIdentifier(RANK_COLUMN);
    const quoted = sqlIdentifier(column);
    const where = `${rank} >= ${output.rowStart} AND ${rank} < ${output.rowStart + output.rowCount} AND ${quoted} IS NOT NULL`;
    const reader = await this.connection.runAndReadAll(
      `SELECT ${rank} // ${JOINED_VALUES} AS piece, count(*) AS n, string_agg(${quoted}, chr(0)) AS joined FROM ${table} WHERE ${where} GROUP BY piece`,
    );
    const pieces: (string | string[])[] = [];
    for (const [piece, count, joined] of reader.getRows()) {
      const text = String(joined ?? '');
      if (text.split('\u0000', Number(count) + 1).length === Number(count)) {
        pieces.push(text);
        continue;
      }
      const start = Number(piece) * JOINED_VALUES;
      const values = await this.connection.runAndReadAll(`SELECT ${quoted} FROM ${table} WHERE ${where} AND ${rank} >= ${start} AND ${rank} < ${start + JOINED_VALUES}`);
      pieces.push(values.getRows().map((row) => String(row[0])));
    }
    return {
      *[Symbol.iterator]() {
        for (const piece of pieces) yield* typeof piece === 'string' ? piece.split('\u0000') : piece;
      },
    };
  }

  private async writeRange(
    table: string,
    columns: readonly ColumnDescription[],
    output: OutputRange,
    rowGroupSize: number,
    inputFields: ReadonlyMap<string, TypeNode>,
  ): Promise<CopySortedOutput> {
    const rank = sqlIdentifier(RANK_COLUMN);
    await this.copyTo(
      `SELECT ${outputColumnsSql(columns, output).join(', ')} FROM ${table}
       WHERE ${rank} >= ${output.rowStart} AND ${rank} < ${output.rowStart + output.rowCount}
       ORDER BY ${rank}`,
      output.file, rowGroupSize, output.keyValues,
    );
    return this.finishOutput(output, inputFields);
  }

  /** COPY a query to one Parquet file (Hudi's footer key/values included when given). */
  private async copyTo(query: string, file: string, rowGroupSize: number, keyValues: Readonly<Record<string, string>>, connection = this.connection): Promise<void> {
    const options = ['FORMAT parquet', 'COMPRESSION snappy', `ROW_GROUP_SIZE ${rowGroupSize}`, 'PARQUET_VERSION v1'];
    const entries = Object.entries(keyValues);
    if (entries.length > 0) options.push(`KV_METADATA {${entries.map(([key, value]) => `${sqlString(key)}: ${sqlString(value)}`).join(', ')}}`);
    try {
      await connection.run(`COPY (${query}) TO ${sqlString(file)} (${options.join(', ')})`);
    } catch (cause) {
      throw new HudiError(`could not write Parquet file: ${duckdbReason(cause)}`, {
        location: file,
        fix: 'check free space and permissions where the output and the temp directory are',
        cause,
      });
    }
  }

  /** After a COPY: give the file the input's Parquet types, and check its row count. */
  private async finishOutput(output: OutputRange, inputFields: ReadonlyMap<string, TypeNode>): Promise<CopySortedOutput> {
    let outputFields = topLevelFields((await this.schemas([output.file])).get(output.file) ?? []);
    const repairs = planTypeRepairs(inputFields, outputFields);
    if (repairs.length > 0) {
      await repairParquetTypes(output.file, repairs);
      // The repaired pages must decode: hash every repaired top-level column once.
      const repairedTopLevel = [...new Set(repairs.map((repair) => repair.topLevelColumn))];
      await this.guard([output.file], () =>
        this.connection.run(
          `SELECT ${repairedTopLevel.map((name, index) => `max(hash(${sqlIdentifier(name)})) AS h${index}`).join(', ')}
           FROM read_parquet(${fileListSql([output.file])}, ${READ_OPTIONS})`,
        ),
      );
      outputFields = topLevelFields((await this.schemas([output.file])).get(output.file) ?? []);
    }
    const [written] = await this.objects(`SELECT num_rows FROM parquet_file_metadata(${fileListSql([output.file])})`);
    const rowCount = toNumber(written?.num_rows);
    if (rowCount !== output.rowCount) {
      throw new HudiError(`wrote ${rowCount} rows instead of ${output.rowCount}`, {
        location: output.file,
        fix: 'retry; if it repeats, report it as a bug',
      });
    }
    return {
      file: output.file,
      rowCount,
      repairedColumns: repairs.map((repair) => repair.column),
      deviations: compareFields(inputFields, outputFields),
    };
  }

  scanSortColumns(
    files: readonly string[],
    columns: readonly string[],
    onBatch: (batch: SortColumnBatch, columns: readonly SortColumnDescription[]) => void,
  ): Promise<{ columns: SortColumnDescription[]; rowCount: number }> {
    return this.exclusive(async () => {
      if (files.length === 0) throw new HudiError('scanSortColumns needs at least one input file', { fix: 'pass the input base files' });
      if (new Set(files).size !== files.length) throw new HudiError('an input file is listed twice', { fix: 'pass each input once' });
      await assertFilesExist(files);
      const available = await this.guard(files, () => this.describe(files));
      const descriptions = columns.map((name) => sortColumnDescription(name, available, files[0]!));
      const fileRows = await this.rowsPerFile(files);
      let offset = 0;
      const fileEntries = files.map((file, index) => {
        const entry = `(${sqlString(file)}, ${offset})`;
        offset += fileRows[index]!;
        return entry;
      });
      const suffix = randomUUID().replaceAll('-', '');
      const filesTable = sqlIdentifier(`__hudi_inputs_${suffix}`);
      let rowCount = 0;
      try {
        await this.connection.run(
          `CREATE TEMP TABLE ${filesTable} AS SELECT * FROM (VALUES ${fileEntries.join(', ')}) AS t(${sqlIdentifier(SOURCE_FILE_COLUMN)}, ${sqlIdentifier(FILE_OFFSET_COLUMN)})`,
        );
        const result = await this.guard(files, () =>
          this.connection.stream(
            `SELECT CAST(${sqlIdentifier(FILE_OFFSET_COLUMN)} + file_row_number AS UINTEGER), ${descriptions.map(sortColumnSql).join(', ')}
             FROM read_parquet(${fileListSql(files)}, ${READ_OPTIONS}, file_row_number = true, filename = ${sqlString(SOURCE_FILE_COLUMN)})
             JOIN ${filesTable} USING (${sqlIdentifier(SOURCE_FILE_COLUMN)})`,
          ),
        );
        for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          const inputRows = Uint32Array.from(chunk.getColumnVector(0).toArray() as number[]);
          const values = descriptions.map((description, index) => sortValues(chunk.getColumnVector(index + 1), description));
          rowCount += inputRows.length;
          onBatch({ inputRows, values }, descriptions);
        }
      } finally {
        await this.connection.run(`DROP TABLE IF EXISTS ${filesTable}`).catch(() => undefined);
      }
      if (rowCount !== offset) {
        throw new HudiError(`read ${rowCount} rows where the footers count ${offset}`, { location: files[0], fix: 'retry; if it repeats, report it as a bug' });
      }
      return { columns: descriptions, rowCount };
    });
  }

  sampleRows(files: readonly string[], options: SampleRowsOptions): Promise<RowSet> {
    return this.exclusive(async () => {
      if (files.length === 0 || options.count <= 0) return { columns: [...options.columns], rows: [] };
      await assertFilesExist(files);
      const available = await this.guard(files, () => this.describe(files));
      for (const name of [...options.columns, ...options.hashColumns]) {
        if (!available.some((column) => column.name === name)) {
          throw new HudiError(`no column ${JSON.stringify(name)}`, { location: files[0], fix: `choose from: ${available.map((column) => column.name).join(', ')}` });
        }
      }
      const seed = Math.trunc(options.seed ?? 0);
      const hashed = [...options.hashColumns.map(sqlIdentifier), String(seed)].join(', ');
      const sql = `SELECT ${options.columns.map(sqlIdentifier).join(', ')} FROM read_parquet(${fileListSql(files)}, ${READ_OPTIONS})
                   ORDER BY hash(${hashed}), ${options.columns.map(sqlIdentifier).join(', ')} LIMIT ${nonNegativeInteger(options.count, 'count')}`;
      return rowSetOf(await this.guard(files, () => this.connection.runAndReadAll(sql)));
    });
  }

  private async describe(files: readonly string[]): Promise<ColumnDescription[]> {
    const reader = await this.connection.runAndReadAll(
      `SELECT * FROM read_parquet(${fileListSql(files)}, ${READ_OPTIONS}) LIMIT 0`,
    );
    const types = reader.columnTypes();
    return reader.columnNames().map((name, index) => ({ name, type: types[index]! }));
  }

  /** Schema elements per file, root excluded, with the DuckDB leaf type. */
  private async schemas(files: readonly string[]): Promise<Map<string, SchemaEntry[]>> {
    const rows = await this.objects(
      `SELECT file_name, name, type, type_length, repetition_type, num_children, converted_type, scale, precision, logical_type, duckdb_type
       FROM parquet_schema(${fileListSql(files)})`,
    );
    const byFile = new Map<string, Record<string, DuckDBValue>[]>();
    for (const row of rows) {
      const file = String(row.file_name);
      byFile.set(file, [...(byFile.get(file) ?? []), row]);
    }
    return new Map([...byFile].map(([file, elements]) => [file, schemaEntries(elements)]));
  }

  private async objects(sql: string): Promise<Record<string, DuckDBValue>[]> {
    const reader = await this.connection.runAndReadAll(sql);
    return reader.getRowObjects();
  }

  /** Runs DuckDB work over files; a failure becomes a HudiError naming the file that caused it. */
  private async guard<T>(files: readonly string[], work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof HudiError) throw error;
      throw await this.explainFailure(files, error);
    }
  }

  private async explainFailure(files: readonly string[], error: unknown): Promise<HudiError> {
    const reason = duckdbReason(error);
    const unreadable = (file: string, cause: unknown): HudiError =>
      new HudiError(`not a readable Parquet file: ${duckdbReason(cause)}`, {
        location: file,
        fix: 'the file is corrupt or not Parquet; restore it or roll back the instant that wrote it',
        cause,
      });
    if (!looksLikeFileProblem(reason)) {
      return new HudiError(`DuckDB failed: ${reason}`, { location: files.length === 1 ? files[0] : undefined, cause: error });
    }
    if (files.length === 1) return unreadable(files[0]!, error);
    // Footers first (cheap), then full decodes, to find which file it was.
    for (const file of files) {
      try {
        await this.connection.run(`SELECT num_rows FROM parquet_file_metadata(${fileListSql([file])})`);
      } catch (cause) {
        return unreadable(file, cause);
      }
    }
    for (const file of files) {
      try {
        await this.connection.run(`SELECT max(hash(t)) FROM read_parquet(${fileListSql([file])}, hive_partitioning = false) AS t`);
      } catch (cause) {
        return unreadable(file, cause);
      }
    }
    return new HudiError(`could not read Parquet files: ${reason}`, { location: files[0], cause: error });
  }
}

const RANK_COLUMN = '__hudi_sort_rank';
const SOURCE_FILE_COLUMN = '__hudi_source_file';
const FILE_OFFSET_COLUMN = '__hudi_file_offset';
const INPUT_ROW_COLUMN = '__hudi_input_row';
/** Sort keys computed beside the output's columns for one ORDER BY (`__hudi_sort_key_0`, …). */
const SORT_KEY_PREFIX = '__hudi_sort_key_';
const RANK_VALUE_COLUMN = '__hudi_rank_value';
/** Values per string_agg piece when reading a column's values for footers. */
const JOINED_VALUES = 65_536;
const INTERNAL_COLUMNS = [RANK_COLUMN, SOURCE_FILE_COLUMN, FILE_OFFSET_COLUMN, INPUT_ROW_COLUMN, RANK_VALUE_COLUMN] as const;

/** rowRanks must be a permutation: a repeated rank would write one row twice and drop another. */
function checkRowRanks(ranks: Uint32Array, totalRows: number): void {
  if (ranks.length !== totalRows) {
    throw new HudiError(`rowRanks has ${ranks.length} entries for ${totalRows} input rows`, { fix: 'give one rank per input row, in input order' });
  }
  const seen = new Uint8Array(totalRows);
  for (const rank of ranks) {
    if (rank >= totalRows || seen[rank] === 1) {
      throw new HudiError(`rowRanks is not a permutation of 0..${totalRows - 1} (rank ${rank})`, { fix: 'give every input row a distinct rank' });
    }
    seen[rank] = 1;
  }
}

/** Replaced and footer columns must exist and hold text. */
function checkOutputColumns(outputs: readonly OutputRange[], footer: FooterFromColumn | undefined, columns: readonly ColumnDescription[]): void {
  const requireText = (name: string, what: string, location: string | undefined): void => {
    const column = columns.find((candidate) => candidate.name === name);
    if (column === undefined || column.type.typeId !== DuckDBTypeId.VARCHAR) {
      throw new HudiError(`${what} "${name}" is ${column === undefined ? 'not a column of the inputs' : `of type ${column.type.toString()}, not VARCHAR`}`, {
        ...(location === undefined ? {} : { location }),
        fix: `choose a text column: ${columns.filter((candidate) => candidate.type.typeId === DuckDBTypeId.VARCHAR).map((candidate) => candidate.name).join(', ')}`,
      });
    }
  };
  if (footer !== undefined) requireText(footer.column, 'footer column', undefined);
  for (const output of outputs) {
    for (const name of Object.keys(output.constantColumns ?? {})) requireText(name, 'constant column', output.file);
    for (const name of Object.keys(output.sequenceColumns ?? {})) {
      requireText(name, 'sequence column', output.file);
      if (output.constantColumns?.[name] !== undefined) {
        throw new HudiError(`column "${name}" is both a constant and a sequence column`, { location: output.file, fix: 'give it one of the two' });
      }
    }
  }
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

function looksLikeFileProblem(reason: string): boolean {
  return /magic|parquet|thrift|decompress|corrupt|page|footer|metadata|truncat|invalid|out of range|eof|end of file|read/i.test(reason);
}

const MEMORY_UNITS: Record<string, number> = {
  bytes: 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40,
};

/** DuckDB's memory setting text ('1.8 GiB', '512.0 MiB', '2GB') → bytes. */
function parseMemorySize(text: string): number {
  const match = /^\s*([\d.]+)\s*([a-z]+)?\s*$/i.exec(text);
  const factor = MEMORY_UNITS[(match?.[2] ?? 'bytes').toLowerCase()];
  if (match === null || factor === undefined) {
    throw new HudiError(`cannot read DuckDB's memory limit "${text}"`, { fix: 'report this as a bug' });
  }
  return Math.floor(Number(match[1]) * factor);
}

/** DuckDB's message without its "LINE 1: …" pointer and error-class prefix. */
function duckdbReason(error: unknown): string {
  const firstLine = errorMessage(error).split('\n')[0] ?? '';
  return firstLine.replace(/^[A-Za-z ]*Error: /, '').trim();
}

async function assertFilesExist(files: readonly string[]): Promise<void> {
  for (const file of files) {
    try {
      await access(file, fsConstants.R_OK);
    } catch {
      throw new NotFoundError(file, 'stage the file locally before reading it');
    }
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new HudiError(`${name} must be a positive integer, got ${value}`, { fix: `pass a whole ${name} ≥ 1` });
  }
  return value;
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new HudiError(`${name} must be a non-negative integer, got ${value}`, { fix: `pass a whole ${name} ≥ 0` });
  }
  return value;
}

function checkOutputRanges(outputs: readonly OutputRange[], totalRows: number): void {
  const files = new Set<string>();
  for (const output of outputs) {
    nonNegativeInteger(output.rowStart, 'rowStart');
    positiveInteger(output.rowCount, 'rowCount');
    if (output.rowStart + output.rowCount > totalRows) {
      throw new HudiError(`rows ${output.rowStart}..${output.rowStart + output.rowCount - 1} are past the ${totalRows} input rows`, {
        location: output.file,
        fix: 'plan output ranges from countRows of the same inputs',
      });
    }
    if (files.has(output.file)) throw new HudiError('output file is listed twice', { location: output.file, fix: 'give each range its own file' });
    files.add(output.file);
  }
  // Overlapping ranges would write the same records twice: duplicate keys in a Hudi table.
  const sorted = [...outputs].sort((a, b) => a.rowStart - b.rowStart);
  for (let index = 1; index < sorted.length; index++) {
    const previous = sorted[index - 1]!;
    const current = sorted[index]!;
    if (current.rowStart < previous.rowStart + previous.rowCount) {
      throw new HudiError(`row range overlaps the one of ${previous.file}`, {
        location: current.file,
        fix: 'make the output ranges disjoint',
      });
    }
  }
}

function sortKeySql(key: SortKey, columns: readonly ColumnDescription[]): string {
  const { expression, direction } = sortKeyParts(key, columns);
  return `${expression} ${direction}`;
}

/** A sort key's expression (over the input's columns) and its direction, apart. */
function sortKeyParts(key: SortKey, columns: readonly ColumnDescription[]): { expression: string; direction: string } {
  const descending = typeof key !== 'string' && key.descending === true;
  const direction = descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST';
  if (typeof key !== 'string' && 'sqlExpression' in key) return { expression: `(${key.sqlExpression})`, direction };
  const name = typeof key === 'string' ? key : key.column;
  if (columns.some((column) => column.name === name)) return { expression: sqlIdentifier(name), direction };
  const [top, ...fields] = name.split('.');
  if (top !== undefined && fields.length > 0 && columns.some((column) => column.name === top)) {
    return { expression: `${sqlIdentifier(top)}${fields.map((field) => `[${sqlString(field)}]`).join('')}`, direction };
  }
  throw new HudiError(`no sort column ${JSON.stringify(name)}`, {
    fix: `choose from: ${columns.map((column) => column.name).join(', ')}`,
  });
}

// ───────────────────────────── DuckDB values → JSON ─────────────────────────────

const POSITIVE_INFINITY_TEXT = 'infinity';
const NEGATIVE_INFINITY_TEXT = '-infinity';

/** An output's columns: constants (the new `_hoodie_file_name`) and sequences (rewritten seqno) replace inputs. */
function outputColumnsSql(columns: readonly ColumnDescription[], output: OutputRange): string[] {
  const rank = sqlIdentifier(RANK_COLUMN);
  return columns.map((column) => {
    const quoted = sqlIdentifier(column.name);
    const constant = output.constantColumns?.[column.name];
    if (constant !== undefined) return `CAST(${sqlString(constant)} AS VARCHAR) AS ${quoted}`;
    const prefix = output.sequenceColumns?.[column.name];
    if (prefix !== undefined) return `${sqlString(prefix)} || CAST(${rank} - ${output.rowStart} AS VARCHAR) AS ${quoted}`;
    return quoted;
  });
}

/** Outputs whose Parquet types readers would see differently from the input's fail the copy (unless 'report'). */
function assertCompatible(results: readonly CopySortedOutput[], onTypeMismatch: CopySortedRequest['onTypeMismatch']): void {
  const incompatible = results.flatMap((result) =>
    result.deviations.filter((deviation) => !deviation.compatible).map((deviation) => ({ file: result.file, deviation })),
  );
  if (incompatible.length === 0 || (onTypeMismatch ?? 'throw') !== 'throw') return;
  throw new HudiError(
    `written Parquet types differ from the input's: ${incompatible
      .map(({ deviation }) => `${deviation.column} ${deviation.input} → ${deviation.output}`)
      .filter((text, index, all) => all.indexOf(text) === index)
      .join('; ')}`,
    {
      location: incompatible[0]!.file,
      fix: 'this engine cannot keep that type; cluster these files with Spark, or pass onTypeMismatch "report" to accept the change',
    },
  );
}

/** A query's rows as JSON-ready values (row-format.ts rules), with the column names in order. */
function rowSetOf(reader: DuckDBResultReader): RowSet {
  const names = reader.columnNames();
  const types = reader.columnTypes();
  const rows = reader.getRows().map((values) => {
    const row: Row = {};
    names.forEach((name, index) => {
      row[name] = duckValueToJson(values[index] ?? null, types[index]);
    });
    return row;
  });
  return { columns: names, rows };
}

function duckValueToJson(value: DuckDBValue, type: DuckDBType | undefined): JsonValue {
  if (value === null) return null;
  if (type !== undefined) {
    switch (type.typeId) {
      case DuckDBTypeId.FLOAT:
        return typeof value === 'number' ? float32ToJson(value) : scalarToJson(value);
      case DuckDBTypeId.LIST:
      case DuckDBTypeId.ARRAY:
        if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
          return value.items.map((item) => duckValueToJson(item, type.valueType));
        }
        break;
      case DuckDBTypeId.STRUCT:
        if (value instanceof DuckDBStructValue) {
          const result: { [key: string]: JsonValue } = {};
          type.entryNames.forEach((name, index) => {
            result[name] = duckValueToJson(value.entries[name] ?? null, type.entryTypes[index]);
          });
          return result;
        }
        break;
      case DuckDBTypeId.MAP:
        if (value instanceof DuckDBMapValue) {
          return mapToJson(
            value.entries.map((entry) => [duckValueToJson(entry.key, type.keyType), duckValueToJson(entry.value, type.valueType)] as const),
          );
        }
        break;
      default:
        break;
    }
  }
  return scalarToJson(value);
}

function scalarToJson(value: DuckDBValue): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return float64ToJson(value);
  if (typeof value === 'bigint') return integerToJson(value);
  if (value instanceof DuckDBDecimalValue) return decimalToJson(value.value, value.scale);
  if (value instanceof DuckDBBlobValue) return bytesToJson(value.bytes);
  if (value instanceof DuckDBDateValue) {
    return value.isFinite ? dateToJson(value.days) : value.days > 0 ? POSITIVE_INFINITY_TEXT : NEGATIVE_INFINITY_TEXT;
  }
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) {
    return finiteTimestamp(value.isFinite, value.micros, value.micros * 1_000n);
  }
  if (value instanceof DuckDBTimestampMillisecondsValue) return finiteTimestamp(value.isFinite, value.millis, value.millis * 1_000_000n);
  if (value instanceof DuckDBTimestampSecondsValue) return finiteTimestamp(value.isFinite, value.seconds, value.seconds * 1_000_000_000n);
  if (value instanceof DuckDBTimestampNanosecondsValue) return finiteTimestamp(value.isFinite, value.nanos, value.nanos);
  if (value instanceof DuckDBTimeValue) return timeToJson(value.micros * 1_000n);
  if (value instanceof DuckDBTimeNSValue) return timeToJson(value.nanos);
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return value.items.map(scalarToJson);
  if (value instanceof DuckDBStructValue) {
    return Object.fromEntries(Object.entries(value.entries).map(([name, entry]) => [name, scalarToJson(entry)]));
  }
  if (value instanceof DuckDBMapValue) {
    return mapToJson(value.entries.map((entry) => [scalarToJson(entry.key), scalarToJson(entry.value)] as const));
  }
  if (value instanceof DuckDBUnionValue) return scalarToJson(value.value);
  if (
    value instanceof DuckDBUUIDValue ||
    value instanceof DuckDBIntervalValue ||
    value instanceof DuckDBTimeTZValue ||
    value instanceof DuckDBBitValue
  ) {
    return value.toString();
  }
  return String(value);
}

function finiteTimestamp(isFinite: boolean, raw: bigint, epochNanos: bigint): string {
  if (!isFinite) return raw > 0n ? POSITIVE_INFINITY_TEXT : NEGATIVE_INFINITY_TEXT;
  return timestampToJson(epochNanos);
}

function blobText(value: DuckDBValue | undefined): string {
  if (value instanceof DuckDBBlobValue) return new TextDecoder().decode(value.bytes);
  return value === null || value === undefined ? '' : String(value);
}

function toNumber(value: DuckDBValue | undefined): number {
  if (typeof value === 'bigint' || typeof value === 'number') return Number(value);
  if (typeof value === 'string' && value !== '') return Number(value);
  if (value instanceof DuckDBDecimalValue) return value.toDouble();
  return 0;
}

function optionalNumber(value: DuckDBValue | undefined): number | undefined {
  return value === null || value === undefined ? undefined : toNumber(value);
}

function optionalText(value: DuckDBValue | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

// ───────────────────────────── Parquet schema model ─────────────────────────────

interface SchemaEntry {
  info: ParquetColumnInfo;
  /** DuckDB's type for a leaf, e.g. 'DECIMAL(10,5)' (for statistics text). */
  duckdbType: string | undefined;
}

const PHYSICAL_TYPES: readonly ParquetPhysicalType[] = [
  'BOOLEAN',
  'INT32',
  'INT64',
  'INT96',
  'FLOAT',
  'DOUBLE',
  'BYTE_ARRAY',
  'FIXED_LEN_BYTE_ARRAY',
];

const LOGICAL_TYPE_NAMES: Record<string, string> = {
  StringType: 'STRING',
  MapType: 'MAP',
  ListType: 'LIST',
  EnumType: 'ENUM',
  DecimalType: 'DECIMAL',
  DateType: 'DATE',
  TimeType: 'TIME',
  TimestampType: 'TIMESTAMP',
  IntType: 'INTEGER',
  NullType: 'UNKNOWN',
  JsonType: 'JSON',
  BsonType: 'BSON',
  UUIDType: 'UUID',
  Float16Type: 'FLOAT16',
  VariantType: 'VARIANT',
  GeometryType: 'GEOMETRY',
  GeographyType: 'GEOGRAPHY',
};

/** parquet_schema rows of one file (root first) → entries with paths, root dropped. */
function schemaEntries(rows: readonly Record<string, DuckDBValue>[]): SchemaEntry[] {
  const entries: SchemaEntry[] = [];
  // Remaining children per open group, to know each element's parent path.
  const stack: { path: string[]; remaining: number }[] = [];
  rows.forEach((row, index) => {
    const name = String(row.name);
    const numChildren = optionalNumber(row.num_children) ?? 0;
    if (index === 0) {
      stack.push({ path: [], remaining: numChildren });
      return;
    }
    while (stack.length > 0 && stack[stack.length - 1]!.remaining === 0) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent !== undefined) parent.remaining -= 1;
    const path = [...(parent?.path ?? []), name];
    entries.push({ info: columnInfo(row, name, path, numChildren), duckdbType: optionalText(row.duckdb_type) });
    if (numChildren > 0) stack.push({ path, remaining: numChildren });
  });
  return entries;
}

function columnInfo(row: Record<string, DuckDBValue>, name: string, path: string[], numChildren: number): ParquetColumnInfo {
  const info: ParquetColumnInfo = {
    path,
    name,
    repetition: repetitionOf(optionalText(row.repetition_type)),
    numChildren,
  };
  const physical = optionalText(row.type);
  if (physical !== undefined && numChildren === 0) {
    info.physicalType = PHYSICAL_TYPES.find((candidate) => candidate === physical);
  }
  const typeLength = optionalNumber(row.type_length);
  if (typeLength !== undefined && info.physicalType === 'FIXED_LEN_BYTE_ARRAY') info.typeLength = typeLength;
  const convertedType = optionalText(row.converted_type);
  if (convertedType !== undefined) info.convertedType = convertedType;
  const precision = optionalNumber(row.precision);
  const scale = optionalNumber(row.scale);
  if (precision !== undefined) info.precision = precision;
  if (scale !== undefined) info.scale = scale;
  const logical = optionalText(row.logical_type);
  if (logical !== undefined) {
    const kind = logical.slice(0, logical.indexOf('(') >= 0 ? logical.indexOf('(') : undefined);
    info.logicalType = LOGICAL_TYPE_NAMES[kind] ?? kind;
    const adjusted = /isAdjustedToUTC=(\d)/.exec(logical);
    if (adjusted) info.isAdjustedToUTC = adjusted[1] === '1';
    const unit = /(MILLIS|MICROS|NANOS)=(?!<null>)/.exec(logical);
    if (unit) info.timeUnit = unit[1] as ParquetTimeUnit;
    const bitWidth = /bitWidth=(\d+)/.exec(logical);
    if (bitWidth) info.bitWidth = Number(bitWidth[1]);
    const signed = /isSigned=(\d)/.exec(logical);
    if (signed) info.isSigned = signed[1] === '1';
    const decimal = /scale=(\d+), precision=(\d+)/.exec(logical);
    if (decimal) {
      info.scale = Number(decimal[1]);
      info.precision = Number(decimal[2]);
    }
  } else if (convertedType !== undefined) {
    applyConvertedType(info, convertedType);
  }
  return info;
}

/** Legacy converted types imply a logical type (Parquet spec: old TIMESTAMP_* are UTC-adjusted). */
function applyConvertedType(info: ParquetColumnInfo, convertedType: string): void {
  const integer = /^(U?)INT_(8|16|32|64)$/.exec(convertedType);
  if (integer) {
    info.logicalType = 'INTEGER';
    info.bitWidth = Number(integer[2]);
    info.isSigned = integer[1] === '';
    return;
  }
  const time = /^(TIME|TIMESTAMP)_(MILLIS|MICROS)$/.exec(convertedType);
  if (time) {
    info.logicalType = time[1];
    info.timeUnit = time[2] as ParquetTimeUnit;
    info.isAdjustedToUTC = true;
    return;
  }
  const named: Record<string, string> = { UTF8: 'STRING', DECIMAL: 'DECIMAL', DATE: 'DATE', LIST: 'LIST', MAP: 'MAP', ENUM: 'ENUM', JSON: 'JSON', BSON: 'BSON' };
  const logical = named[convertedType];
  if (logical !== undefined) info.logicalType = logical;
}

function repetitionOf(text: string | undefined): ParquetColumnInfo['repetition'] {
  return text === 'REQUIRED' || text === 'REPEATED' ? text : 'OPTIONAL';
}

/** A schema subtree as readers see it: list and map wrappers resolved (Parquet spec backward-compatibility rules). */
type TypeNode =
  | { kind: 'primitive'; info: ParquetColumnInfo; leafIndex: number }
  | { kind: 'list'; element: TypeNode; twoLevel: boolean }
  | { kind: 'map'; key: TypeNode; value: TypeNode | undefined }
  | { kind: 'struct'; fields: Map<string, TypeNode> };

interface SchemaCursor {
  entries: readonly SchemaEntry[];
  next: number;
  leaves: number;
}

/** Top-level columns of one file's schema → their type trees. */
function topLevelFields(entries: readonly SchemaEntry[]): Map<string, TypeNode> {
  const cursor: SchemaCursor = { entries, next: 0, leaves: 0 };
  const fields = new Map<string, TypeNode>();
  while (cursor.next < entries.length) {
    const entry = entries[cursor.next]!;
    fields.set(entry.info.name, readField(cursor));
  }
  return fields;
}

/** Reads the element at the cursor and its subtree; a REPEATED field outside a list wrapper is a list itself. */
function readField(cursor: SchemaCursor): TypeNode {
  const info = cursor.entries[cursor.next]!.info;
  const node = readElement(cursor);
  return info.repetition === 'REPEATED' ? { kind: 'list', element: node, twoLevel: true } : node;
}

function readElement(cursor: SchemaCursor): TypeNode {
  const info = cursor.entries[cursor.next++]!.info;
  if (info.numChildren === 0) return { kind: 'primitive', info, leafIndex: cursor.leaves++ };
  const isList = info.logicalType === 'LIST' || info.convertedType === 'LIST';
  const isMap = info.logicalType === 'MAP' || info.convertedType === 'MAP' || info.convertedType === 'MAP_KEY_VALUE';
  if (isList && info.numChildren === 1) {
    const repeated = cursor.entries[cursor.next]!.info;
    const elementIsRepeatedGroup =
      repeated.numChildren !== 1 || repeated.name === 'array' || repeated.name === `${info.name}_tuple`;
    if (repeated.numChildren === 0 || elementIsRepeatedGroup) {
      return { kind: 'list', element: readElement(cursor), twoLevel: true };
    }
    cursor.next++; // the repeated wrapper around the element
    return { kind: 'list', element: readField(cursor), twoLevel: false };
  }
  if (isMap && info.numChildren === 1) {
    const keyValue = cursor.entries[cursor.next++]!.info;
    const key = readField(cursor);
    const value = keyValue.numChildren > 1 ? readField(cursor) : undefined;
    for (let extra = 2; extra < keyValue.numChildren; extra++) readField(cursor);
    return { kind: 'map', key, value };
  }
  const fields = new Map<string, TypeNode>();
  for (let child = 0; child < info.numChildren; child++) {
    const name = cursor.entries[cursor.next]!.info.name;
    fields.set(name, readField(cursor));
  }
  return { kind: 'struct', fields };
}

/** For each column, the type tree of the last input that has it (inputs are in commit order). */
function latestTopLevelFields(inputs: readonly string[], schemas: ReadonlyMap<string, SchemaEntry[]>): Map<string, TypeNode> {
  const result = new Map<string, TypeNode>();
  for (const file of inputs) {
    for (const [name, node] of topLevelFields(schemas.get(file) ?? [])) result.set(name, node);
  }
  return result;
}

/** The DuckDB type whose Parquet writer reproduces the input's timestamp units. */
function preservingType(type: DuckDBType, node: TypeNode): DuckDBType {
  if (node.kind === 'primitive') {
    const { logicalType, timeUnit } = node.info;
    const isTimestamp = logicalType === 'TIMESTAMP' && (type.typeId === DuckDBTypeId.TIMESTAMP || type.typeId === DuckDBTypeId.TIMESTAMP_TZ);
    if (isTimestamp && timeUnit === 'MILLIS') return TIMESTAMP_MS;
    if (isTimestamp && timeUnit === 'NANOS') return TIMESTAMP_NS;
    return type;
  }
  if (node.kind === 'list' && type instanceof DuckDBListType) return new DuckDBListType(preservingType(type.valueType, node.element));
  if (node.kind === 'map' && type instanceof DuckDBMapType) {
    return new DuckDBMapType(
      preservingType(type.keyType, node.key),
      node.value === undefined ? type.valueType : preservingType(type.valueType, node.value),
    );
  }
  if (node.kind === 'struct' && type instanceof DuckDBStructType) {
    return new DuckDBStructType(
      type.entryNames,
      type.entryNames.map((name, index) => {
        const child = node.fields.get(name);
        const childType = type.entryTypes[index]!;
        return child === undefined ? childType : preservingType(childType, child);
      }),
    );
  }
  return type;
}

/** A leaf's type as one comparable phrase, e.g. 'FIXED_LEN_BYTE_ARRAY(5) DECIMAL(10,5)' or 'INT64 TIMESTAMP(MILLIS, UTC)'. */
export function describeParquetType(info: ParquetColumnInfo): string {
  const physical = info.physicalType ?? 'GROUP';
  const storage = info.physicalType === 'FIXED_LEN_BYTE_ARRAY' ? `${physical}(${info.typeLength ?? '?'})` : physical;
  const logical = (() => {
    switch (info.logicalType) {
      case 'DECIMAL':
        return `DECIMAL(${info.precision ?? '?'},${info.scale ?? '?'})`;
      case 'TIMESTAMP':
      case 'TIME':
        return `${info.logicalType}(${info.timeUnit ?? '?'}, ${info.isAdjustedToUTC ? 'UTC' : 'local'})`;
      case 'INTEGER':
        return `INT(${info.bitWidth ?? '?'}, ${info.isSigned === false ? 'unsigned' : 'signed'})`;
      case undefined:
        // Plain INT32/INT64 and an INT(32|64, signed) annotation mean the same to every reader.
        if (physical === 'INT32') return 'INT(32, signed)';
        if (physical === 'INT64') return 'INT(64, signed)';
        return '';
      default:
        return info.logicalType;
    }
  })();
  return logical === '' ? storage : `${storage} ${logical}`;
}

function describeNode(node: TypeNode | undefined): string {
  if (node === undefined) return 'absent';
  if (node.kind === 'primitive') return describeParquetType(node.info);
  return node.kind === 'list' ? `LIST (${node.twoLevel ? '2-level' : '3-level'})` : node.kind.toUpperCase();
}

const STRING_LIKE = /^BYTE_ARRAY (STRING|ENUM|JSON)$/;

function compareFields(input: ReadonlyMap<string, TypeNode>, output: ReadonlyMap<string, TypeNode>): SchemaDeviation[] {
  const deviations: SchemaDeviation[] = [];
  for (const [name, outputNode] of output) compareNodes(name, input.get(name), outputNode, deviations);
  return deviations;
}

function compareNodes(column: string, input: TypeNode | undefined, output: TypeNode | undefined, deviations: SchemaDeviation[]): void {
  if (input === undefined && output === undefined) return;
  if (input === undefined || output === undefined || input.kind !== output.kind) {
    deviations.push({ column, input: describeNode(input), output: describeNode(output), compatible: false });
    return;
  }
  if (input.kind === 'primitive' && output.kind === 'primitive') {
    const before = describeParquetType(input.info);
    const after = describeParquetType(output.info);
    if (before !== after) {
      deviations.push({ column, input: before, output: after, compatible: STRING_LIKE.test(before) && STRING_LIKE.test(after) });
    }
  } else if (input.kind === 'list' && output.kind === 'list') {
    if (input.twoLevel !== output.twoLevel) {
      deviations.push({ column, input: describeNode(input), output: describeNode(output), compatible: true });
    }
    compareNodes(`${column}[]`, input.element, output.element, deviations);
  } else if (input.kind === 'map' && output.kind === 'map') {
    compareNodes(`${column}{key}`, input.key, output.key, deviations);
    compareNodes(`${column}{value}`, input.value, output.value, deviations);
  } else if (input.kind === 'struct' && output.kind === 'struct') {
    for (const name of new Set([...input.fields.keys(), ...output.fields.keys()])) {
      compareNodes(`${column}.${name}`, input.fields.get(name), output.fields.get(name), deviations);
    }
  }
}

// ───────────────────────────── Column statistics ─────────────────────────────

type StatKey = { kind: 'number'; value: number } | { kind: 'bigint'; value: bigint } | { kind: 'text'; value: Buffer };

interface ParsedStat {
  json: JsonValue;
  key: StatKey;
}

function compareKeys(a: StatKey, b: StatKey): number {
  if (a.kind === 'text' && b.kind === 'text') return Buffer.compare(a.value, b.value);
  if (a.kind === 'bigint' && b.kind === 'bigint') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  if (a.kind === 'number' && b.kind === 'number') return a.value - b.value;
  return 0;
}

/** DuckDB's statistics text for a leaf of the given DuckDB type → a JSON value and an order key; undefined when not comparable. */
function parseStatistic(text: DuckDBValue | undefined, duckdbType: string | undefined): ParsedStat | undefined {
  if (typeof text !== 'string' || duckdbType === undefined) return undefined;
  if (duckdbType === 'BOOLEAN') return { json: text === 'true', key: { kind: 'number', value: text === 'true' ? 1 : 0 } };
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT|INTEGER|UINTEGER)$/.test(duckdbType) && /^-?\d+$/.test(text)) {
    const value = BigInt(text);
    return { json: integerToJson(value), key: { kind: 'bigint', value } };
  }
  if (duckdbType === 'FLOAT' || duckdbType === 'DOUBLE') {
    const value = Number(text);
    if (Number.isNaN(value)) return undefined;
    return { json: duckdbType === 'FLOAT' ? float32ToJson(value) : float64ToJson(value), key: { kind: 'number', value } };
  }
  const decimal = /^DECIMAL\(\d+,(\d+)\)$/.exec(duckdbType);
  if (decimal) {
    const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
    if (!match) return undefined;
    const scale = Number(decimal[1]);
    const unscaled = BigInt(`${match[1]}${match[2] || '0'}${(match[3] ?? '').padEnd(scale, '0').slice(0, scale)}`);
    return { json: decimalToJson(unscaled, scale), key: { kind: 'bigint', value: unscaled } };
  }
  if (duckdbType === 'DATE' || duckdbType.startsWith('TIMESTAMP')) {
    const epochNanos = parseDuckDBTimestampText(text);
    if (epochNanos === undefined) return undefined;
    if (duckdbType === 'DATE') return { json: dateToJson(epochNanos / 86_400_000_000_000n), key: { kind: 'bigint', value: epochNanos } };
    return { json: timestampToJson(epochNanos), key: { kind: 'bigint', value: epochNanos } };
  }
  if (duckdbType === 'VARCHAR') return { json: text, key: { kind: 'text', value: Buffer.from(text, 'utf8') } };
  return undefined;
}

/** '2023-04-04 20:04:00.123+00', '2023-04-04', '0044-03-15 (BC)' → nanoseconds since the epoch. */
function parseDuckDBTimestampText(text: string): bigint | undefined {
  const match = /^(\d{4,})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?)?(?:([+-])(\d{2})(?::?(\d{2}))?)?( \(BC\))?$/.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hours, minutes, seconds, fraction, offsetSign, offsetHours, offsetMinutes, bc] = match;
  const civilYear = bc ? 1n - BigInt(year!) : BigInt(year!);
  const days = daysFromCivil(civilYear, Number(month), Number(day));
  const secondsOfDay = BigInt(Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds ?? 0));
  const offsetSeconds = BigInt((Number(offsetHours ?? 0) * 3600 + Number(offsetMinutes ?? 0) * 60) * (offsetSign === '-' ? -1 : 1));
  const nanos = BigInt((fraction ?? '').padEnd(9, '0'));
  return (days * 86_400n + secondsOfDay - offsetSeconds) * 1_000_000_000n + nanos;
}

function summarizeFileStats(file: string, schema: readonly SchemaEntry[], rows: readonly Record<string, DuckDBValue>[]): FileColumnStats {
  const leaves = schema.filter((entry) => entry.info.numChildren === 0);
  const rowGroups = new Map<number, number>();
  const perColumn = new Map<number, Record<string, DuckDBValue>[]>();
  for (const row of rows) {
    rowGroups.set(toNumber(row.row_group_id), toNumber(row.row_group_num_rows));
    const columnId = toNumber(row.column_id);
    perColumn.set(columnId, [...(perColumn.get(columnId) ?? []), row]);
  }
  const columns = leaves.map((leaf, columnId): ColumnStats => {
    const chunks = perColumn.get(columnId) ?? [];
    let min: ParsedStat | undefined;
    let max: ParsedStat | undefined;
    let complete = chunks.length > 0;
    let nullCount: number | null = 0;
    let valueCount = 0;
    for (const chunk of chunks) {
      valueCount += toNumber(chunk.num_values);
      const nulls = optionalNumber(chunk.stats_null_count);
      nullCount = nulls === undefined || nullCount === null ? null : nullCount + nulls;
      const chunkMin = parseStatistic(chunk.stats_min_value, leaf.duckdbType);
      const chunkMax = parseStatistic(chunk.stats_max_value, leaf.duckdbType);
      // An all-null chunk has no min/max and needs none.
      const allNull = nulls !== undefined && nulls === toNumber(chunk.num_values);
      if (allNull && chunk.stats_min_value === null && chunk.stats_max_value === null) continue;
      if (chunkMin === undefined || chunkMax === undefined) {
        complete = false;
        continue;
      }
      if (min === undefined || compareKeys(chunkMin.key, min.key) < 0) min = chunkMin;
      if (max === undefined || compareKeys(chunkMax.key, max.key) > 0) max = chunkMax;
    }
    return {
      column: leaf.info.path.join('.'),
      physicalType: leaf.info.physicalType ?? 'BYTE_ARRAY',
      min: complete && min !== undefined ? min.json : null,
      max: complete && max !== undefined ? max.json : null,
      nullCount,
      valueCount,
    };
  });
  return {
    file,
    rowCount: [...rowGroups.values()].reduce((sum, count) => sum + count, 0),
    rowGroupCount: rowGroups.size,
    columns,
  };
}

// ───────────────────────────── Type repair ─────────────────────────────
//
// DuckDB writes DECIMAL(p,s) as INT32 (p ≤ 9), INT64 (p ≤ 18) or FIXED_LEN_BYTE_ARRAY(16), and every
// TIMESTAMP_MS/NS as isAdjustedToUTC=false. Hudi's Avro-written files use FIXED_LEN_BYTE_ARRAY(n)
// decimals (parquet-avro cannot read an INT64 decimal into an Avro fixed, which breaks later upserts)
// and UTC-adjusted timestamps. So after DuckDB writes, the affected column chunks are re-encoded
// (values only; levels and dictionary indices are kept) and the footer schema is patched.

type TargetPhysical = 'INT32' | 'INT64' | 'FIXED_LEN_BYTE_ARRAY' | 'BYTE_ARRAY';

interface TypeRepair {
  /** Leaf (column chunk) index in the written file. */
  leafIndex: number;
  column: string;
  topLevelColumn: string;
  decimal?: { physical: TargetPhysical; typeLength?: number };
  isAdjustedToUTC?: boolean;
}

function planTypeRepairs(input: ReadonlyMap<string, TypeNode>, output: ReadonlyMap<string, TypeNode>): TypeRepair[] {
  const repairs: TypeRepair[] = [];
  const visit = (column: string, topLevelColumn: string, before: TypeNode | undefined, after: TypeNode | undefined): void => {
    if (before === undefined || after === undefined || before.kind !== after.kind) return;
    if (before.kind === 'list' && after.kind === 'list') visit(`${column}[]`, topLevelColumn, before.element, after.element);
    else if (before.kind === 'map' && after.kind === 'map') {
      visit(`${column}{key}`, topLevelColumn, before.key, after.key);
      visit(`${column}{value}`, topLevelColumn, before.value, after.value);
    } else if (before.kind === 'struct' && after.kind === 'struct') {
      for (const [name, child] of before.fields) visit(`${column}.${name}`, topLevelColumn, child, after.fields.get(name));
    } else if (before.kind === 'primitive' && after.kind === 'primitive') {
      const repair = leafRepair(before.info, after.info);
      if (repair !== undefined) repairs.push({ leafIndex: after.leafIndex, column, topLevelColumn, ...repair });
    }
  };
  for (const [name, node] of output) visit(name, name, input.get(name), node);
  return repairs;
}

function leafRepair(input: ParquetColumnInfo, output: ParquetColumnInfo): Pick<TypeRepair, 'decimal' | 'isAdjustedToUTC'> | undefined {
  if (input.logicalType === 'DECIMAL' && output.logicalType === 'DECIMAL') {
    const sameDecimal = input.precision === output.precision && input.scale === output.scale;
    const samePhysical = input.physicalType === output.physicalType && input.typeLength === output.typeLength;
    const repairable = ['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY', 'BYTE_ARRAY'].includes(input.physicalType ?? '');
    const readable = ['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY'].includes(output.physicalType ?? '');
    if (sameDecimal && !samePhysical && repairable && readable) {
      const physical = input.physicalType as TargetPhysical;
      return { decimal: physical === 'FIXED_LEN_BYTE_ARRAY' ? { physical, typeLength: input.typeLength ?? 16 } : { physical } };
    }
    return undefined;
  }
  const sameTimestamp =
    input.logicalType === 'TIMESTAMP' && output.logicalType === 'TIMESTAMP' && input.timeUnit === output.timeUnit && input.physicalType === 'INT64';
  if (sameTimestamp && input.isAdjustedToUTC !== undefined && input.isAdjustedToUTC !== output.isAdjustedToUTC) {
    return { isAdjustedToUTC: input.isAdjustedToUTC };
  }
  return undefined;
}

// Parquet Thrift enums used below.
const PHYSICAL_CODE: Record<TargetPhysical, number> = { INT32: 1, INT64: 2, BYTE_ARRAY: 6, FIXED_LEN_BYTE_ARRAY: 7 };
const PAGE_DATA = 0;
const PAGE_INDEX = 1;
const PAGE_DICTIONARY = 2;
const ENCODING_PLAIN = 0;
const ENCODING_PLAIN_DICTIONARY = 2;
const ENCODING_RLE = 3;
const ENCODING_RLE_DICTIONARY = 8;
const CODEC_UNCOMPRESSED = 0;
const CODEC_SNAPPY = 1;
const REPETITION_REQUIRED = 0;
const REPETITION_REPEATED = 2;

const MAGIC = Buffer.from('PAR1', 'latin1');

function repairError(file: string, problem: string): HudiError {
  return new HudiError(`cannot repair Parquet types: ${problem}`, { location: file, fix: 'report this as a bug with the input files' });
}

interface LeafLayout {
  schemaElement: ThriftStruct;
  maxRepetition: number;
  maxDefinition: number;
}

function leafLayouts(schema: readonly ThriftStruct[]): LeafLayout[] {
  const leaves: LeafLayout[] = [];
  let next = 1; // element 0 is the root
  const walk = (count: number, repetition: number, definition: number): void => {
    for (let child = 0; child < count; child++) {
      const element = schema[next++]!;
      const repetitionType = element.int(3) ?? REPETITION_REQUIRED;
      const childRepetition = repetition + (repetitionType === REPETITION_REPEATED ? 1 : 0);
      const childDefinition = definition + (repetitionType === REPETITION_REQUIRED ? 0 : 1);
      const children = element.int(5) ?? 0;
      if (children > 0) walk(children, childRepetition, childDefinition);
      else leaves.push({ schemaElement: element, maxRepetition: childRepetition, maxDefinition: childDefinition });
    }
  };
  walk(schema[0]?.int(5) ?? 0, 0, 0);
  return leaves;
}

interface RewrittenChunk {
  start: number;
  oldLength: number;
  bytes: Buffer;
}

/**
 * Set footer key/value metadata (FileMetaData field 5) in place: only the footer is rewritten, the pages stay.
 * Lets a footer that depends on the written rows (Hudi's bloom filter) be computed while DuckDB writes them.
 */
async function setFooterKeyValues(file: string, keyValues: Readonly<Record<string, string>>): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    const { size } = await handle.stat();
    const tail = await readRange(handle, size - 8, 8);
    if (!tail.subarray(4).equals(MAGIC)) throw repairError(file, 'no Parquet magic at the end');
    const footerLength = tail.readUInt32LE(0);
    const footerStart = size - 8 - footerLength;
    const metadata = new CompactReader(await readRange(handle, footerStart, footerLength)).readStruct();
    const merged = new Map<string, Uint8Array>();
    for (const item of metadata.list(5)?.items.filter(isStruct) ?? []) {
      const key = item.binary(1);
      if (key !== undefined) merged.set(Buffer.from(key).toString('utf8'), item.binary(2) ?? new Uint8Array());
    }
    for (const [key, value] of Object.entries(keyValues)) merged.set(key, Buffer.from(value, 'utf8'));
    const items = [...merged].map(([key, value]) => {
      const entry = new ThriftStruct();
      entry.set(1, THRIFT_BINARY, Buffer.from(key, 'utf8'));
      entry.set(2, THRIFT_BINARY, value);
      return entry;
    });
    metadata.set(5, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, items));
    const footer = new CompactWriter().struct(metadata).bytes();
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length, 0);
    await handle.write(Buffer.concat([footer, length, MAGIC]), 0, undefined, footerStart);
    await handle.truncate(footerStart + footer.length + 8);
  } finally {
    await handle.close();
  }
}

/** Re-encodes the repaired decimal column chunks and patches the footer, replacing `file` atomically. */
async function repairParquetTypes(file: string, repairs: readonly TypeRepair[]): Promise<void> {
  const handle = await open(file, 'r');
  const temporary = `${file}.${randomUUID()}.repair`;
  try {
    const { size } = await handle.stat();
    const tail = await readRange(handle, size - 8, 8);
    if (!tail.subarray(4).equals(MAGIC)) throw repairError(file, 'no Parquet magic at the end');
    const footerLength = tail.readUInt32LE(0);
    const footerStart = size - 8 - footerLength;
    const metadata = new CompactReader(await readRange(handle, footerStart, footerLength)).readStruct();
    const schema = metadata.list(2)?.items.filter(isStruct) ?? [];
    const leaves = leafLayouts(schema);

    const rewritten: RewrittenChunk[] = [];
    const chunkFixes: { meta: ThriftStruct; start: number; dictionaryOffset?: number; dataOffset: number }[] = [];
    for (const rowGroup of metadata.list(4)?.items.filter(isStruct) ?? []) {
      const chunks = rowGroup.list(1)?.items.filter(isStruct) ?? [];
      let uncompressedDelta = 0n;
      let compressedDelta = 0n;
      for (const repair of repairs) {
        if (repair.decimal === undefined) continue;
        const chunk = chunks[repair.leafIndex];
        const meta = chunk?.struct(3);
        const layout = leaves[repair.leafIndex];
        if (chunk === undefined || meta === undefined || layout === undefined) throw repairError(file, `no column chunk ${repair.leafIndex}`);
        if (chunk.has(4) || chunk.has(6)) throw repairError(file, 'page indexes are not supported');
        const start = Math.min(...[meta.bigint(11), meta.bigint(9)].filter((offset) => offset !== undefined).map(Number));
        const oldLength = Number(meta.bigint(7) ?? 0n);
        const result = rewriteDecimalChunk(file, await readRange(handle, start, oldLength), meta, layout, repair.decimal);
        rewritten.push({ start, oldLength, bytes: result.bytes });
        uncompressedDelta += BigInt(result.uncompressedSize) - (meta.bigint(6) ?? 0n);
        compressedDelta += BigInt(result.bytes.length - oldLength);
        meta.set(1, THRIFT_I32, PHYSICAL_CODE[repair.decimal.physical]);
        meta.set(6, THRIFT_I64, BigInt(result.uncompressedSize));
        meta.set(7, THRIFT_I64, BigInt(result.bytes.length));
        const statistics = meta.struct(12);
        if (statistics !== undefined) convertStatistics(statistics, layout.schemaElement, repair.decimal);
        // The bloom filter hashed the old encoding; size statistics described it.
        meta.delete(14);
        meta.delete(15);
        meta.delete(16);
        chunkFixes.push({ meta, start, dictionaryOffset: result.dictionaryOffset, dataOffset: result.dataOffset });
      }
      rowGroup.set(2, THRIFT_I64, (rowGroup.bigint(2) ?? 0n) + uncompressedDelta);
      if (rowGroup.has(6)) rowGroup.set(6, THRIFT_I64, (rowGroup.bigint(6) ?? 0n) + compressedDelta);
    }
    rewritten.sort((a, b) => a.start - b.start);

    // Every other offset moves by the size change of the rewritten chunks before it.
    const moved = (offset: bigint): bigint => {
      let shift = 0;
      for (const chunk of rewritten) if (chunk.start < Number(offset)) shift += chunk.bytes.length - chunk.oldLength;
      return offset + BigInt(shift);
    };
    const newStart = new Map(rewritten.map((chunk) => [chunk.start, Number(moved(BigInt(chunk.start)))]));
    const fixed = new Set(chunkFixes.map((fix) => fix.meta));
    for (const rowGroup of metadata.list(4)?.items.filter(isStruct) ?? []) {
      shiftField(rowGroup, 5, moved);
      for (const chunk of rowGroup.list(1)?.items.filter(isStruct) ?? []) {
        shiftField(chunk, 2, moved);
        const meta = chunk.struct(3);
        if (meta === undefined || fixed.has(meta)) continue;
        for (const field of [9, 10, 11, 14]) shiftField(meta, field, moved);
      }
    }
    for (const fix of chunkFixes) {
      const base = newStart.get(fix.start)!;
      fix.meta.set(9, THRIFT_I64, BigInt(base + fix.dataOffset));
      if (fix.dictionaryOffset === undefined) fix.meta.delete(11);
      else fix.meta.set(11, THRIFT_I64, BigInt(base + fix.dictionaryOffset));
    }

    for (const repair of repairs) patchSchemaElement(leaves[repair.leafIndex]!.schemaElement, repair);

    const footer = new CompactWriter().struct(metadata).bytes();
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length, 0);
    if (rewritten.length === 0) {
      // Schema-only repair: the pages stay where they are, only the footer changes.
      await handle.close();
      const inPlace = await open(file, 'r+');
      try {
        await inPlace.write(Buffer.concat([footer, length, MAGIC]), 0, undefined, footerStart);
        await inPlace.truncate(footerStart + footer.length + 8);
      } finally {
        await inPlace.close();
      }
      return;
    }
    const output = await open(temporary, 'w');
    try {
      let position = 0;
      for (const chunk of rewritten) {
        await copyRange(handle, output, position, chunk.start);
        await output.write(chunk.bytes);
        position = chunk.start + chunk.oldLength;
      }
      await copyRange(handle, output, position, footerStart);
      await output.write(Buffer.concat([footer, length, MAGIC]));
    } finally {
      await output.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function shiftField(struct: ThriftStruct, field: number, moved: (offset: bigint) => bigint): void {
  const offset = struct.bigint(field);
  if (offset !== undefined) struct.set(field, THRIFT_I64, moved(offset));
}

function patchSchemaElement(element: ThriftStruct, repair: TypeRepair): void {
  if (repair.decimal !== undefined) {
    element.set(1, THRIFT_I32, PHYSICAL_CODE[repair.decimal.physical]);
    if (repair.decimal.typeLength === undefined) element.delete(2);
    else element.set(2, THRIFT_I32, repair.decimal.typeLength);
  }
  if (repair.isAdjustedToUTC !== undefined) {
    const logical = element.struct(10) ?? new ThriftStruct();
    const timestamp = logical.struct(8);
    if (timestamp !== undefined) timestamp.set(1, THRIFT_BOOL, repair.isAdjustedToUTC);
    element.set(10, THRIFT_STRUCT, logical);
  }
}

type DecimalEncoding = { physical: 'INT32' | 'INT64' | 'BYTE_ARRAY' } | { physical: 'FIXED_LEN_BYTE_ARRAY'; typeLength: number };

function sourceEncoding(element: ThriftStruct): DecimalEncoding | undefined {
  switch (element.int(1)) {
    case 1:
      return { physical: 'INT32' };
    case 2:
      return { physical: 'INT64' };
    case 7:
      return { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: element.int(2) ?? 16 };
    default:
      return undefined;
  }
}

function targetEncoding(target: NonNullable<TypeRepair['decimal']>): DecimalEncoding {
  return target.physical === 'FIXED_LEN_BYTE_ARRAY'
    ? { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: target.typeLength ?? 16 }
    : { physical: target.physical };
}

function rewriteDecimalChunk(
  file: string,
  chunk: Buffer,
  meta: ThriftStruct,
  layout: LeafLayout,
  target: NonNullable<TypeRepair['decimal']>,
): { bytes: Buffer; uncompressedSize: number; dictionaryOffset: number | undefined; dataOffset: number } {
  const codec = meta.int(4) ?? CODEC_UNCOMPRESSED;
  if (codec !== CODEC_UNCOMPRESSED && codec !== CODEC_SNAPPY) throw repairError(file, `compression codec ${codec} is not supported`);
  const source = sourceEncoding(layout.schemaElement);
  if (source === undefined) throw repairError(file, 'the written decimal column has an unexpected physical type');
  const destination = targetEncoding(target);
  const parts: Buffer[] = [];
  let position = 0;
  let written = 0;
  let uncompressedSize = 0;
  let dictionaryOffset: number | undefined;
  let dataOffset: number | undefined;
  while (position < chunk.length) {
    const reader = new CompactReader(chunk, position);
    const header = reader.readStruct();
    const pageType = header.int(1);
    const compressedSize = header.int(3) ?? 0;
    const body = chunk.subarray(reader.position, reader.position + compressedSize);
    position = reader.position + compressedSize;
    header.delete(4); // the CRC covered the old bytes
    let raw: Buffer;
    if (pageType === PAGE_DICTIONARY) {
      const encoding = header.struct(7)?.int(2);
      if (encoding !== ENCODING_PLAIN && encoding !== ENCODING_PLAIN_DICTIONARY) throw repairError(file, `dictionary encoding ${encoding}`);
      raw = encodePlain(decodePlain(decompress(body, codec, header), source), destination);
      dictionaryOffset ??= written;
    } else if (pageType === PAGE_DATA) {
      const pageHeader = header.struct(5);
      const encoding = pageHeader?.int(2);
      const data = decompress(body, codec, header);
      let levels = 0;
      for (const [maxLevel, levelEncoding] of [
        [layout.maxRepetition, pageHeader?.int(4)],
        [layout.maxDefinition, pageHeader?.int(3)],
      ] as const) {
        if (maxLevel === 0) continue;
        if (levelEncoding !== ENCODING_RLE) throw repairError(file, `level encoding ${levelEncoding}`);
        levels += 4 + data.readUInt32LE(levels);
      }
      const values = data.subarray(levels);
      let newValues: Buffer;
      if (encoding === ENCODING_PLAIN) newValues = encodePlain(decodePlain(values, source), destination);
      else if (encoding === ENCODING_PLAIN_DICTIONARY || encoding === ENCODING_RLE_DICTIONARY) newValues = values;
      else throw repairError(file, `data page encoding ${encoding}`);
      raw = Buffer.concat([data.subarray(0, levels), newValues]);
      const statistics = pageHeader?.struct(5);
      if (statistics !== undefined) convertStatistics(statistics, layout.schemaElement, target);
      dataOffset ??= written;
    } else if (pageType === PAGE_INDEX) {
      raw = decompress(body, codec, header);
    } else {
      throw repairError(file, `page type ${pageType} (only v1 data pages are written here)`);
    }
    const compressed = codec === CODEC_SNAPPY ? snappyCompress(raw) : raw;
    header.set(2, THRIFT_I32, raw.length);
    header.set(3, THRIFT_I32, compressed.length);
    const headerBytes = new CompactWriter().struct(header).bytes();
    parts.push(headerBytes, compressed);
    written += headerBytes.length + compressed.length;
    uncompressedSize += headerBytes.length + raw.length;
  }
  if (dataOffset === undefined) throw repairError(file, 'column chunk without data pages');
  return { bytes: Buffer.concat(parts), uncompressedSize, dictionaryOffset, dataOffset };
}

function decompress(body: Buffer, codec: number, header: ThriftStruct): Buffer {
  if (codec === CODEC_UNCOMPRESSED) return body;
  const raw = snappyDecompress(body);
  if (raw.length !== header.int(2)) throw new Error(`snappy page decoded to ${raw.length} bytes, header says ${header.int(2)}`);
  return raw;
}

function convertStatistics(statistics: ThriftStruct, writtenElement: ThriftStruct, target: NonNullable<TypeRepair['decimal']>): void {
  const source = sourceEncoding(writtenElement);
  if (source === undefined) return;
  const destination = targetEncoding(target);
  for (const field of [1, 2, 5, 6]) {
    const bytes = statistics.binary(field);
    if (bytes === undefined) continue;
    const [value] = decodeStatisticValue(Buffer.from(bytes), source);
    if (value === undefined) statistics.delete(field);
    else statistics.set(field, THRIFT_BINARY, encodeStatisticValue(value, destination));
  }
}

/** Statistics hold one value without the PLAIN length prefix. */
function decodeStatisticValue(bytes: Buffer, encoding: DecimalEncoding): bigint[] {
  if (encoding.physical === 'BYTE_ARRAY' || encoding.physical === 'FIXED_LEN_BYTE_ARRAY') return [signedBigEndian(bytes)];
  return decodePlain(bytes, encoding);
}

function encodeStatisticValue(value: bigint, encoding: DecimalEncoding): Buffer {
  if (encoding.physical === 'BYTE_ARRAY') return minimalBigEndian(value);
  return encodePlain([value], encoding);
}

function decodePlain(bytes: Buffer, encoding: DecimalEncoding): bigint[] {
  const values: bigint[] = [];
  switch (encoding.physical) {
    case 'INT32':
      for (let offset = 0; offset + 4 <= bytes.length; offset += 4) values.push(BigInt(bytes.readInt32LE(offset)));
      break;
    case 'INT64':
      for (let offset = 0; offset + 8 <= bytes.length; offset += 8) values.push(bytes.readBigInt64LE(offset));
      break;
    case 'FIXED_LEN_BYTE_ARRAY':
      for (let offset = 0; offset + encoding.typeLength <= bytes.length; offset += encoding.typeLength) {
        values.push(signedBigEndian(bytes.subarray(offset, offset + encoding.typeLength)));
      }
      break;
    case 'BYTE_ARRAY':
      for (let offset = 0; offset + 4 <= bytes.length; ) {
        const length = bytes.readUInt32LE(offset);
        values.push(signedBigEndian(bytes.subarray(offset + 4, offset + 4 + length)));
        offset += 4 + length;
      }
      break;
  }
  return values;
}

function encodePlain(values: readonly bigint[], encoding: DecimalEncoding): Buffer {
  switch (encoding.physical) {
    case 'INT32': {
      const out = Buffer.alloc(values.length * 4);
      values.forEach((value, index) => out.writeInt32LE(Number(value), index * 4));
      return out;
    }
    case 'INT64': {
      const out = Buffer.alloc(values.length * 8);
      values.forEach((value, index) => out.writeBigInt64LE(value, index * 8));
      return out;
    }
    case 'FIXED_LEN_BYTE_ARRAY':
      return Buffer.concat(values.map((value) => fixedBigEndian(value, encoding.typeLength)));
    case 'BYTE_ARRAY':
      return Buffer.concat(
        values.flatMap((value) => {
          const bytes = minimalBigEndian(value);
          const length = Buffer.alloc(4);
          length.writeUInt32LE(bytes.length, 0);
          return [length, bytes];
        }),
      );
  }
}

function signedBigEndian(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return bytes[0]! & 0x80 ? value - (1n << BigInt(bytes.length * 8)) : value;
}

function fixedBigEndian(value: bigint, length: number): Buffer {
  const limit = 1n << BigInt(length * 8 - 1);
  if (value >= limit || value < -limit) throw new Error(`decimal ${value} does not fit in ${length} bytes`);
  let unsigned = value < 0n ? value + (limit << 1n) : value;
  const out = Buffer.alloc(length);
  for (let index = length - 1; index >= 0; index--) {
    out[index] = Number(unsigned & 0xffn);
    unsigned >>= 8n;
  }
  return out;
}

function minimalBigEndian(value: bigint): Buffer {
  let length = 1;
  while (value >= 1n << BigInt(length * 8 - 1) || value < -(1n << BigInt(length * 8 - 1))) length++;
  return fixedBigEndian(value, length);
}

async function readRange(handle: Awaited<ReturnType<typeof open>>, start: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, start + filled);
    if (bytesRead === 0) throw new Error(`unexpected end of file at ${start + filled}`);
    filled += bytesRead;
  }
  return buffer;
}

async function copyRange(
  from: Awaited<ReturnType<typeof open>>,
  to: Awaited<ReturnType<typeof open>>,
  start: number,
  end: number,
): Promise<void> {
  const piece = 8 * 1024 * 1024;
  for (let position = start; position < end; position += piece) {
    await to.write(await readRange(from, position, Math.min(piece, end - position)));
  }
}

// ── Thrift compact protocol (generic, keeps unknown fields) ──

const THRIFT_BOOL = 1;
const THRIFT_BYTE = 3;
const THRIFT_I16 = 4;
const THRIFT_I32 = 5;
const THRIFT_I64 = 6;
const THRIFT_DOUBLE = 7;
const THRIFT_BINARY = 8;
const THRIFT_LIST = 9;
const THRIFT_SET = 10;
const THRIFT_STRUCT = 12;

type ThriftValue = boolean | number | bigint | Uint8Array | ThriftStruct | ThriftList;

class ThriftList {
  constructor(
    readonly elementType: number,
    readonly items: ThriftValue[],
    readonly containerType: number = THRIFT_LIST,
  ) {}
}

class ThriftStruct {
  readonly fields = new Map<number, { type: number; value: ThriftValue }>();

  has(id: number): boolean {
    return this.fields.has(id);
  }
  set(id: number, type: number, value: ThriftValue): void {
    this.fields.set(id, { type, value });
  }
  delete(id: number): void {
    this.fields.delete(id);
  }
  int(id: number): number | undefined {
    const value = this.fields.get(id)?.value;
    return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : undefined;
  }
  bigint(id: number): bigint | undefined {
    const value = this.fields.get(id)?.value;
    return typeof value === 'bigint' ? value : typeof value === 'number' ? BigInt(value) : undefined;
  }
  binary(id: number): Uint8Array | undefined {
    const value = this.fields.get(id)?.value;
    return value instanceof Uint8Array ? value : undefined;
  }
  struct(id: number): ThriftStruct | undefined {
    const value = this.fields.get(id)?.value;
    return value instanceof ThriftStruct ? value : undefined;
  }
  list(id: number): ThriftList | undefined {
    const value = this.fields.get(id)?.value;
    return value instanceof ThriftList ? value : undefined;
  }
}

function isStruct(value: ThriftValue): value is ThriftStruct {
  return value instanceof ThriftStruct;
}

class CompactReader {
  constructor(
    private readonly bytes: Uint8Array,
    public position = 0,
  ) {}

  private byte(): number {
    const value = this.bytes[this.position++];
    if (value === undefined) throw new Error('truncated Thrift data');
    return value;
  }

  private varint(): bigint {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = this.byte();
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  }

  private zigzag(): bigint {
    const raw = this.varint();
    return raw & 1n ? -(raw >> 1n) - 1n : raw >> 1n;
  }

  readStruct(): ThriftStruct {
    const struct = new ThriftStruct();
    let lastId = 0;
    for (;;) {
      const header = this.byte();
      if (header === 0) return struct;
      const type = header & 0x0f;
      const delta = header >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : lastId + delta;
      lastId = id;
      if (type === 1 || type === 2) struct.set(id, THRIFT_BOOL, type === 1);
      else struct.set(id, type, this.value(type));
    }
  }

  private value(type: number): ThriftValue {
    switch (type) {
      case 1:
      case 2:
        return this.byte() === 1;
      case THRIFT_BYTE: {
        const byte = this.byte();
        return byte > 127 ? byte - 256 : byte;
      }
      case THRIFT_I16:
      case THRIFT_I32:
        return Number(this.zigzag());
      case THRIFT_I64:
        return this.zigzag();
      case THRIFT_DOUBLE: {
        const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.position, 8);
        this.position += 8;
        return view.getFloat64(0, true);
      }
      case THRIFT_BINARY: {
        const length = Number(this.varint());
        if (this.position + length > this.bytes.length) throw new Error('truncated Thrift binary');
        const value = this.bytes.slice(this.position, this.position + length);
        this.position += length;
        return value;
      }
      case THRIFT_LIST:
      case THRIFT_SET: {
        const header = this.byte();
        const elementType = header & 0x0f;
        const size = header >> 4 === 15 ? Number(this.varint()) : header >> 4;
        const items: ThriftValue[] = [];
        for (let index = 0; index < size; index++) items.push(this.value(elementType));
        return new ThriftList(elementType, items, type);
      }
      case THRIFT_STRUCT:
        return this.readStruct();
      default:
        throw new Error(`unsupported Thrift type ${type}`);
    }
  }
}

class CompactWriter {
  private readonly out: number[] = [];

  bytes(): Buffer {
    return Buffer.from(this.out);
  }

  private varint(value: bigint): void {
    let rest = value;
    while (rest >= 0x80n) {
      this.out.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.out.push(Number(rest));
  }

  private zigzag(value: bigint): void {
    this.varint(value >= 0n ? value << 1n : (-value << 1n) - 1n);
  }

  struct(struct: ThriftStruct): this {
    let lastId = 0;
    for (const [id, field] of [...struct.fields].sort((a, b) => a[0] - b[0])) {
      const isBool = field.type === THRIFT_BOOL;
      const type = isBool ? (field.value === true ? 1 : 2) : field.type;
      const delta = id - lastId;
      if (delta > 0 && delta <= 15) this.out.push((delta << 4) | type);
      else {
        this.out.push(type);
        this.zigzag(BigInt(id));
      }
      lastId = id;
      if (!isBool) this.value(field.type, field.value);
    }
    this.out.push(0);
    return this;
  }

  private value(type: number, value: ThriftValue): void {
    switch (type) {
      case THRIFT_BOOL:
        this.out.push(value === true ? 1 : 2);
        return;
      case THRIFT_BYTE:
        this.out.push(Number(value) & 0xff);
        return;
      case THRIFT_I16:
      case THRIFT_I32:
      case THRIFT_I64:
        this.zigzag(BigInt(value as number | bigint));
        return;
      case THRIFT_DOUBLE: {
        const bytes = Buffer.alloc(8);
        bytes.writeDoubleLE(value as number, 0);
        this.out.push(...bytes);
        return;
      }
      case THRIFT_BINARY: {
        const bytes = value as Uint8Array;
        this.varint(BigInt(bytes.length));
        for (const byte of bytes) this.out.push(byte);
        return;
      }
      case THRIFT_LIST:
      case THRIFT_SET: {
        const list = value as ThriftList;
        if (list.items.length < 15) this.out.push((list.items.length << 4) | list.elementType);
        else {
          this.out.push(0xf0 | list.elementType);
          this.varint(BigInt(list.items.length));
        }
        for (const item of list.items) this.value(list.elementType === 2 ? THRIFT_BOOL : list.elementType, item);
        return;
      }
      case THRIFT_STRUCT:
        this.struct(value as ThriftStruct);
        return;
      default:
        throw new Error(`unsupported Thrift type ${type}`);
    }
  }
}

// ── Snappy raw blocks (Parquet's SNAPPY codec) ──

function snappyDecompress(input: Uint8Array): Buffer {
  let position = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = input[position++];
    if (byte === undefined) throw new Error('truncated snappy length');
    length += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) break;
  }
  const out = Buffer.alloc(length);
  let written = 0;
  while (position < input.length) {
    const tag = input[position++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let literalLength = tag >> 2;
      if (literalLength >= 60) {
        const extraBytes = literalLength - 59;
        literalLength = 0;
        for (let index = 0; index < extraBytes; index++) literalLength += input[position++]! * 2 ** (8 * index);
      }
      literalLength += 1;
      if (position + literalLength > input.length || written + literalLength > length) throw new Error('corrupt snappy literal');
      out.set(input.subarray(position, position + literalLength), written);
      position += literalLength;
      written += literalLength;
      continue;
    }
    let copyLength: number;
    let offset: number;
    if (kind === 1) {
      copyLength = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | input[position++]!;
    } else if (kind === 2) {
      copyLength = (tag >> 2) + 1;
      offset = input[position]! | (input[position + 1]! << 8);
      position += 2;
    } else {
      copyLength = (tag >> 2) + 1;
      offset = (input[position]! | (input[position + 1]! << 8) | (input[position + 2]! << 16)) + input[position + 3]! * 2 ** 24;
      position += 4;
    }
    if (offset === 0 || offset > written || written + copyLength > length) throw new Error('corrupt snappy copy');
    for (let index = 0; index < copyLength; index++, written++) out[written] = out[written - offset]!;
  }
  if (written !== length) throw new Error('snappy data shorter than its declared length');
  return out;
}

/** A small greedy LZ77 encoder producing standard snappy blocks (4-byte hash matches, ≤64 KiB back references). */
function snappyCompress(input: Uint8Array): Buffer {
  const out: number[] = [];
  for (let rest = input.length; ; rest = Math.floor(rest / 128)) {
    if (rest < 128) {
      out.push(rest);
      break;
    }
    out.push((rest & 0x7f) | 0x80);
  }
  const emitLiteral = (start: number, end: number): void => {
    let remaining = end - start;
    let from = start;
    while (remaining > 0) {
      const length = Math.min(remaining, 65536);
      const n = length - 1;
      if (n < 60) out.push(n << 2);
      else if (n < 256) out.push(60 << 2, n);
      else out.push(61 << 2, n & 0xff, n >> 8);
      for (let index = from; index < from + length; index++) out.push(input[index]!);
      from += length;
      remaining -= length;
    }
  };
  const emitCopy = (offset: number, length: number): void => {
    let remaining = length;
    while (remaining > 0) {
      // Keep every piece ≥ 4 bytes: split 65..67 as 60 + rest.
      const piece = remaining > 64 ? (remaining < 68 ? 60 : 64) : remaining;
      out.push(((piece - 1) << 2) | 2, offset & 0xff, offset >> 8);
      remaining -= piece;
    }
  };
  const table = new Int32Array(1 << 14).fill(-1);
  const read32 = (index: number): number =>
    (input[index]! | (input[index + 1]! << 8) | (input[index + 2]! << 16) | (input[index + 3]! << 24)) >>> 0;
  let literalStart = 0;
  let position = 0;
  while (position + 4 <= input.length) {
    const word = read32(position);
    const slot = Math.imul(word, 0x1e35a7bd) >>> 18;
    const candidate = table[slot]!;
    table[slot] = position;
    if (candidate >= 0 && position - candidate <= 65535 && read32(candidate) === word) {
      emitLiteral(literalStart, position);
      let length = 4;
      while (position + length < input.length && input[candidate + length] === input[position + length]) length++;
      emitCopy(position - candidate, length);
      position += length;
      literalStart = position;
    } else {
      position++;
    }
  }
  emitLiteral(literalStart, input.length);
  return Buffer.from(out);
}

// ───────────────────────────── Shared with the writer (lib/engine/write.ts) ─────────────────────────────

/** The Parquet type tree per top-level column of some files (the last file wins), used as a write target. */
export type ParquetTypeTargets = ReadonlyMap<string, TypeNode>;

export async function parquetTypeTargets(connection: DuckDBConnection, files: readonly string[]): Promise<ParquetTypeTargets> {
  if (files.length === 0) return new Map();
  const reader = await connection.runAndReadAll(
    `SELECT file_name, name, type, type_length, repetition_type, num_children, converted_type, scale, precision, logical_type, duckdb_type
     FROM parquet_schema(${fileListSql(files)})`,
  );
  const byFile = new Map<string, Record<string, DuckDBValue>[]>();
  for (const row of reader.getRowObjects()) {
    const file = String(row.file_name);
    byFile.set(file, [...(byFile.get(file) ?? []), row]);
  }
  return latestTopLevelFields(files, new Map([...byFile].map(([file, elements]) => [file, schemaEntries(elements)])));
}

/**
 * Targets for a new table's first files: their own types, but decimals as FIXED_LEN_BYTE_ARRAY of Spark's size for
 * the precision, as Hudi's Avro writer stores them (parquet-avro reads a `fixed` decimal schema only from those;
 * DuckDB writes decimals up to 18 digits as INT32/INT64).
 */
export function withFixedDecimals(targets: ParquetTypeTargets): ParquetTypeTargets {
  const visit = (node: TypeNode): TypeNode => {
    switch (node.kind) {
      case 'primitive': {
        const { info } = node;
        if (info.logicalType !== 'DECIMAL' || info.precision === undefined) return node;
        const typeLength = decimalFixedBytes(info.precision);
        if (info.physicalType === 'FIXED_LEN_BYTE_ARRAY' && info.typeLength === typeLength) return node;
        return { ...node, info: { ...info, physicalType: 'FIXED_LEN_BYTE_ARRAY', typeLength } };
      }
      case 'list': return { ...node, element: visit(node.element) };
      case 'map': return { ...node, key: visit(node.key), value: node.value === undefined ? undefined : visit(node.value) };
      case 'struct': return { ...node, fields: new Map([...node.fields].map(([name, child]) => [name, visit(child)])) };
    }
  };
  return new Map([...targets].map(([name, node]) => [name, visit(node)]));
}

/** Bytes Spark (and so Hudi) gives a decimal of this precision: Decimal.minBytesForPrecision. */
export function decimalFixedBytes(precision: number): number {
  let bytes = 1;
  while (Math.pow(2, 8 * bytes - 1) < Math.pow(10, precision)) bytes++;
  return bytes;
}

/** The DuckDB type to cast a column to so that DuckDB's Parquet writer keeps the target's timestamp units. */
export function preservingDuckDbType(type: DuckDBType, target: ParquetTypeTargets, column: string): DuckDBType {
  const node = target.get(column);
  return node === undefined ? type : preservingType(type, node);
}

/**
 * Make a file DuckDB just wrote carry the target's Parquet types where DuckDB cannot write them (decimal physical
 * type, timestamp UTC flag); returns the repaired columns. The result is decoded once to prove the pages are sound.
 */
export async function conformParquetTypes(connection: DuckDBConnection, file: string, target: ParquetTypeTargets): Promise<string[]> {
  const written = await parquetTypeTargets(connection, [file]);
  const repairs = planTypeRepairs(target, written);
  if (repairs.length === 0) return [];
  await repairParquetTypes(file, repairs);
  const repairedTopLevel = [...new Set(repairs.map((repair) => repair.topLevelColumn))];
  await connection.run(
    `SELECT ${repairedTopLevel.map((name, index) => `max(hash(${sqlIdentifier(name)})) AS h${index}`).join(', ')}
     FROM read_parquet(${fileListSql([file])}, ${READ_OPTIONS})`,
  );
  return repairs.map((repair) => repair.column);
}

export { duckdbReason, fileListSql, READ_OPTIONS };
