/**
 * The Parquet engine as the rest of lib/ sees it: plain local paths in, rows (row-format.ts), footers, statistics
 * and copy results out. lib/ imports these types from here and opens the engine with `openParquetEngine`
 * (parquet-engine.ts); only lib/engine/ knows that DuckDB is behind it.
 */
import type { SortColumnType, SortValue } from '../layout/curves.js';
import type { ChunkLocation } from '../parquet/column-chunk.js';
import type { ParquetColumnInfo, SchemaDeviation } from '../parquet/schema.js';
import type { Row } from './row-format.js';

export type { ParquetColumnInfo, ParquetPhysicalType, ParquetTimeUnit, SchemaDeviation } from '../parquet/schema.js';

export interface ParquetEngineOptions {
  /** DuckDB memory limit, e.g. '512MB'; beyond it sorts spill to `tempDirectory`. */
  memoryLimit?: string;
  /** Worker threads; Lambda gives 2 vCPUs up to 3,538 MB. */
  threads?: number;
  /** Where DuckDB spills (Lambda: under /tmp). */
  tempDirectory?: string;
  /** The most DuckDB may spill there, e.g. '1200MB' (DuckDB's default: 90% of the disk's free space). */
  maxTempDirectorySize?: string;
  /** DuckDB's allocator_flush_threshold: freed memory above this goes back to the system, e.g. '64MB'. */
  allocatorFlushThreshold?: string;
  /** DuckDB's allocator_background_threads: return freed memory on background threads. */
  allocatorBackgroundThreads?: boolean;
}

export interface ParquetFooter {
  /** Footer key/value metadata (Hudi: hoodie_min_record_key, org.apache.hudi.bloomfilter, parquet.avro.schema, …). */
  keyValues: Record<string, string>;
  numRows: number;
  rowGroupCount: number;
  createdBy: string | undefined;
  schema: ParquetColumnInfo[];
}

/**
 * A sort key: a column name (dots reach into struct fields when no top-level column has the dotted
 * name), optionally descending, or a trusted SQL expression (never pass user text as `sqlExpression`).
 * Ascending keys put nulls first and descending keys nulls last, like Spark.
 */
export type SortKey = string | { column: string; descending?: boolean } | { sqlExpression: string; descending?: boolean };

/** What every DerivedColumn's name starts with (copySorted refuses inputs with a column so named). */
export const DERIVED_COLUMN_PREFIX = '__hudi_derived_';

/** A column computed from each input row before the sort (a trusted SQL expression, as a sort key's). */
export interface DerivedColumn {
  /** Starts with DERIVED_COLUMN_PREFIX. */
  readonly name: string;
  readonly sqlExpression: string;
}

/**
 * Layers of derived columns: each layer's expressions see the input's columns and the layers before it. A value
 * several later steps use is computed once in its layer, where one nested expression would repeat it in every use
 * (DuckDB computes a repeat once in a projection, but not where a filter inlines it).
 */
export type DerivedColumnLayers = readonly (readonly DerivedColumn[])[];

/** Sort keys the engine computes in its own sort, over the derived columns they name. */
export interface EngineSortOrder {
  readonly orderBy: readonly SortKey[];
  readonly derivedColumns: DerivedColumnLayers;
}

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
  /**
   * Outputs whose footer needs only the column's least and greatest value (Hudi: a bloom filter that would let
   * every key through, so one that needs no keys serves): `applies` says which, `build` gets the range (compared as
   * Java compares strings; when DuckDB's byte order might differ, non-ASCII bounds, the values go to `build` above).
   */
  fromRange?: {
    applies(output: OutputRange): boolean;
    build(range: { readonly min: string; readonly max: string }, output: OutputRange): Record<string, string>;
  };
}

/** Rows [rowStart, rowStart + rowCount) of a local file (0-based, in file order). */
export interface FileRows {
  file: string;
  rowStart: number;
  rowCount: number;
}

/** What copySorted needs of an input's footer (lib/parquet/footer.ts readFooterSummary gives it). */
export interface InputFooter {
  numRows: number;
  /** The schema's non-root elements. */
  columns: readonly ParquetColumnInfo[];
  /** Where some leaves' column chunks are (readFooterSummary's `chunks`): scanSortColumns decodes those itself. */
  chunks?: ReadonlyMap<string, readonly ChunkLocation[]>;
}

export interface CopySortedRequest {
  inputs: readonly string[];
  /** The inputs' footers, in input order, when the caller has read them already (so no footer is read twice). */
  inputFooters?: readonly InputFooter[];
  /** Empty or absent: input order (file by file, row by row). Ties always break by input file, then row. */
  orderBy?: readonly SortKey[];
  /** Columns orderBy's `sqlExpression` keys may name, computed before them (not written to the outputs). */
  derivedColumns?: DerivedColumnLayers;
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
  /**
   * Several outputs holding every row, cut from one ordered file: 'copy' when they are its row groups copied byte
   * for byte (pieces: row groups split at a range boundary, rewritten; inPlace: the first output's row groups left
   * where they are, the ordered file becoming that output), 'rewrite' (with the reason) when each output
   * was rewritten from it; 'ranges' (with the reason) when one ordered COPY did not fit DuckDB's memory limit and
   * each output was written from a temp table of the rows instead; 'key-ranges' when the rows were range-partitioned
   * by their sort key (one pass finds each output's first and last key, then each output sorts only its own rows),
   * with the reason they were not cut from one ordered file when that was tried first (notCut). Absent for one
   * output, or outputs too small to cut.
   */
  split?:
    | { method: 'copy'; rowGroups: number; pieces: number; inPlace: number; keyRangesRefused?: string }
    | { method: 'rewrite' | 'ranges'; reason: string }
    | { method: 'key-ranges'; outputs: number; notCut?: string };
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

/** What scanSortColumns read: the columns, the rows, and whether from the files' pages (small files) or by a scan. */
export interface SortColumnScan {
  columns: SortColumnDescription[];
  rowCount: number;
  readFrom: 'pages' | 'scan';
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
}

export interface ParquetEngine {
  /** Rows of local Parquet files (columns united by name), values JSON-ready per row-format.ts. */
  readRows(files: readonly string[], options?: ReadRowsOptions): Promise<RowSet>;
  /**
   * Stream sort-column values of every input row to `onBatch` (in batches), mapped to the Spark types Hudi's curve
   * builders take; refuses columns of other types. Returns the columns' descriptions, the row count and how they were
   * read: decoded from the pages of small files whose footers locate the columns' chunks, or by a scan.
   * `inputFooters`: the inputs' footers, in input order, when the caller has read them (as copySorted takes them).
   */
  scanSortColumns(
    files: readonly string[],
    columns: readonly string[],
    onBatch: (batch: SortColumnBatch, columns: readonly SortColumnDescription[]) => void,
    options?: { readonly inputFooters?: readonly InputFooter[] },
  ): Promise<SortColumnScan>;
  /**
   * The order (sort keys and the columns they are computed from) under which copySorted orders the rows as Hudi's
   * DIRECT z-order of `columns` (names as configured) does, computed by the engine in its own sort, for inputs of one
   * schema (`inputFooters`, one per input); undefined where the engine cannot compute that key exactly (then compute
   * the keys and pass rowRanks).
   */
  directZOrderSortKeys(columns: readonly string[], inputFooters: readonly InputFooter[]): EngineSortOrder | undefined;
  /**
   * A systematic sample: `count` rows evenly spaced over the files' rows taken in order (samplePositions), in that
   * order, values as readRows; every row when there are fewer. Over a sort's outputs that is one row per quantile of
   * the sort order, and only the row groups holding a sampled row are decoded.
   */
  sampleRows(files: readonly string[], options: SampleRowsOptions): Promise<RowSet>;
  readFooter(file: string): Promise<ParquetFooter>;
  /**
   * One VARCHAR column's non-null values over row ranges of files, in no particular order: what a footer computed
   * from a file's rows needs (Hudi's bloom filter of a copied file's record keys).
   */
  columnValues(ranges: readonly FileRows[], column: string): Promise<Iterable<string>>;
  /** Total rows from the footers. */
  countRows(files: readonly string[]): Promise<number>;
  /** DuckDB's memory limit in bytes (what it was opened with, or its default share of the machine's memory). */
  memoryLimitBytes(): Promise<number>;
  /** Sort the inputs once, then write each output's rank range to its own file, keeping the input's Parquet types. */
  copySorted(request: CopySortedRequest): Promise<CopySortedResult>;
  /**
   * Write a base file's rows with changes applied, in SQL (the base rows never come into JavaScript): rows replacing
   * the base row of their key in place or, for keys the base lacks, appended in the order given; keys whose base row
   * is dropped. The output has the base file's column types.
   */
  mergeIntoBase(request: MergeIntoBaseRequest): Promise<WriteRowsResult>;
  /**
   * An empty Parquet file whose columns are an Avro record schema's fields with the types Hudi's Avro writer gives
   * them (decimals as FIXED_LEN_BYTE_ARRAY): the template of a base file written from log records only.
   */
  writeEmptyFile(request: { readonly avroSchema: string; readonly outputFile: string }): Promise<void>;
  close(): Promise<void>;
}

export interface WriteRowsResult {
  readonly rowCount: number;
  readonly bytes: number;
}

export interface MergeIntoBaseRequest {
  /** The local base file: its rows in file order, and the column types of the output. */
  readonly base: string;
  /** The VARCHAR column matching change rows to base rows (Hudi: `_hoodie_record_key`). */
  readonly keyColumn: string;
  /** Rows (values as readRows gives them) replacing the base row of their key, else appended; one per key. */
  readonly upserts: readonly Row[];
  /** Keys whose base row is dropped (keys also in `upserts` must not be here). */
  readonly deletes: readonly string[];
  /** VARCHAR columns written as this text in every row (Hudi: `_hoodie_file_name`). */
  readonly constantColumns?: Readonly<Record<string, string>>;
  readonly outputFile: string;
  readonly rowGroupSize: number;
  /** Footer key/values from the output's key column values (any order; Hudi's bloom filter, min/max keys). */
  readonly footer: (keys: Iterable<string>) => Record<string, string>;
}
