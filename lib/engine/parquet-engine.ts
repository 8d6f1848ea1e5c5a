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
import { access, mkdir, rm } from 'node:fs/promises';
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
import { setFooterKeyValues } from '../parquet/footer.js';
import { compareFields, latestTopLevelFields, topLevelFields, type ParquetColumnInfo, type ParquetPhysicalType, type ParquetTimeUnit, type SchemaDeviation, type TopLevelFields, type TypeNode } from '../parquet/schema.js';
import { planTypeRepairs, repairParquetTypes } from '../parquet/type-repair.js';

export type { ParquetColumnInfo, ParquetPhysicalType, ParquetTimeUnit, SchemaDeviation } from '../parquet/schema.js';

// ───────────────────────────── Public types ─────────────────────────────

export interface ParquetEngineOptions {
  /** DuckDB memory limit, e.g. '512MB'; beyond it sorts spill to `tempDirectory`. */
  memoryLimit?: string;
  /** Worker threads; Lambda gives 2 vCPUs up to 3,538 MB. */
  threads?: number;
  /** Where DuckDB spills (Lambda: under /tmp). */
  tempDirectory?: string;
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
    const inputFields = latestFields(inputs, inputSchemas);
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
    let outputFields = topLevelFields(infos((await this.schemas([output.file])).get(output.file)));
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
      outputFields = topLevelFields(infos((await this.schemas([output.file])).get(output.file)));
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

/** Schema entries as plain Parquet schema elements. */
function infos(entries: readonly SchemaEntry[] | undefined): ParquetColumnInfo[] {
  return (entries ?? []).map((entry) => entry.info);
}

/** For each column, the type tree of the last input that has it (inputs are in commit order). */
function latestFields(inputs: readonly string[], schemas: ReadonlyMap<string, SchemaEntry[]>): Map<string, TypeNode> {
  return latestTopLevelFields(inputs.map((file) => infos(schemas.get(file))));
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

// ───────────────────────────── Shared with the writer (lib/engine/write.ts) ─────────────────────────────

/** The Parquet type tree per top-level column of some files (the last file wins), used as a write target. */
export type ParquetTypeTargets = TopLevelFields;

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
  return latestFields(files, new Map([...byFile].map(([file, elements]) => [file, schemaEntries(elements)])));
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
