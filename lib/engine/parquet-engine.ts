/**
 * The DuckDB Parquet engine: ParquetEngine (port.ts) over one DuckDB connection. lib/engine/ is the only folder that
 * imports DuckDB; the rest of lib/ sees plain paths, rows (row-format.ts) and the port's types.
 *
 * DuckDB facts this relies on (see shared/docs/parquet-engine.md):
 * - It reads and writes local paths only, so callers stage objects in a temp dir first.
 * - One COPY that splits its output over several files loses the global order on >1 thread, so
 *   copySorted (copy-sorted.ts) ranks the rows once and writes one COPY per output file over a rank range.
 * - It does not keep the input's Parquet types by itself. copySorted casts where a DuckDB type exists
 *   (TIMESTAMP_MILLIS → TIMESTAMP_MS, NANOS → TIMESTAMP_NS) and repairs the written file where none does
 *   (decimal physical types, the timestamp UTC flag: lib/parquet/type-repair.ts), then compares the output's schema
 *   with the input's.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { HudiError } from '../errors.js';
import { columnValues } from './column-values.js';
import { assertFilesExist, type DuckDb, guardFiles, openDuckDb, queryObjects } from './connection.js';
import { copySorted } from './copy-sorted.js';
import { rowsPerFile, samplePositions } from './input-order.js';
import type {
  CopySortedRequest,
  CopySortedResult,
  EngineSortOrder,
  FileRows,
  InputFooter,
  MergeIntoBaseRequest,
  ParquetEngine,
  ParquetEngineOptions,
  ParquetFooter,
  ReadRowsOptions,
  RowSet,
  SampleRowsOptions,
  SortColumnBatch,
  SortColumnDescription,
  SortColumnScan,
  WriteRowsResult,
} from './port.js';
import { describeColumns, readSchemas } from './schema-rows.js';
import { scanSortColumns } from './sort-columns.js';
import { fileListSql, nonNegativeInteger, READ_OPTIONS, sqlIdentifier } from './sql.js';
import { blobText, rowSetOf, toNumber } from './values.js';
import { mergeIntoBase, writeEmptyFileOfAvro } from './write-rows.js';
import { directZOrderSortKeys } from './z-order-key.js';

export async function openParquetEngine(options: ParquetEngineOptions = {}): Promise<ParquetEngine> {
  return new DuckDBParquetEngine(await openDuckDb(options));
}

class DuckDBParquetEngine implements ParquetEngine {
  /** One statement at a time on the connection; calls queue here. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private readonly connection: DuckDBConnection;

  constructor(private readonly db: DuckDb) {
    this.connection = db.connection;
  }

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
    this.db.connection.closeSync();
    this.db.instance.closeSync();
  }

  readRows(files: readonly string[], options: ReadRowsOptions = {}): Promise<RowSet> {
    return this.exclusive(async () => {
      if (files.length === 0) return { columns: [...(options.columns ?? [])], rows: [] };
      await assertFilesExist(files);
      const available = await guardFiles(this.connection, files, () => describeColumns(this.connection, files));
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
      return rowSetOf(await guardFiles(this.connection, files, () => this.connection.runAndReadAll(sql)));
    });
  }

  readFooter(file: string): Promise<ParquetFooter> {
    return this.exclusive(async () => {
      await assertFilesExist([file]);
      return guardFiles(this.connection, [file], async () => {
        const list = fileListSql([file]);
        const [metadata] = await queryObjects(this.connection, `SELECT num_rows, num_row_groups, created_by FROM parquet_file_metadata(${list})`);
        const keyValueRows = await queryObjects(this.connection, `SELECT key, value FROM parquet_kv_metadata(${list})`);
        const keyValues: Record<string, string> = {};
        for (const row of keyValueRows) keyValues[blobText(row.key)] = blobText(row.value);
        const schema = (await readSchemas(this.connection, [file])).get(file) ?? [];
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

  columnValues(ranges: readonly FileRows[], column: string): Promise<Iterable<string>> {
    return this.exclusive(() => columnValues(this.connection, ranges, column));
  }

  countRows(files: readonly string[]): Promise<number> {
    return this.exclusive(async () => {
      if (files.length === 0) return 0;
      await assertFilesExist(files);
      const [row] = await guardFiles(this.connection, files, () =>
        queryObjects(this.connection, `SELECT sum(num_rows) AS total FROM parquet_file_metadata(${fileListSql(files)})`),
      );
      return toNumber(row?.total);
    });
  }

  memoryLimitBytes(): Promise<number> {
    return this.exclusive(async () => {
      const [row] = await queryObjects(this.connection, `SELECT current_setting('memory_limit') AS text`);
      return parseMemorySize(String(row?.text ?? ''));
    });
  }

  mergeIntoBase(request: MergeIntoBaseRequest): Promise<WriteRowsResult> {
    return this.exclusive(() => mergeIntoBase(this.connection, request));
  }

  writeEmptyFile(request: { readonly avroSchema: string; readonly outputFile: string }): Promise<void> {
    return this.exclusive(() => writeEmptyFileOfAvro(this.connection, request.avroSchema, request.outputFile));
  }

  copySorted(request: CopySortedRequest): Promise<CopySortedResult> {
    return this.exclusive(() => copySorted(this.db, request));
  }

  scanSortColumns(
    files: readonly string[],
    columns: readonly string[],
    onBatch: (batch: SortColumnBatch, columns: readonly SortColumnDescription[]) => void,
    options: { readonly inputFooters?: readonly InputFooter[] } = {},
  ): Promise<SortColumnScan> {
    return this.exclusive(() => scanSortColumns(this.db, files, columns, onBatch, options.inputFooters));
  }

  directZOrderSortKeys(columns: readonly string[], inputFooters: readonly InputFooter[]): EngineSortOrder | undefined {
    return directZOrderSortKeys(inputFooters, columns);
  }

  sampleRows(files: readonly string[], options: SampleRowsOptions): Promise<RowSet> {
    return this.exclusive(async () => {
      if (files.length === 0 || options.count <= 0) return { columns: [...options.columns], rows: [] };
      await assertFilesExist(files);
      const available = await guardFiles(this.connection, files, () => describeColumns(this.connection, files));
      for (const name of options.columns) {
        if (!available.some((column) => column.name === name)) {
          throw new HudiError(`no column ${JSON.stringify(name)}`, {
            location: files[0],
            fix: `choose from: ${available.map((column) => column.name).join(', ')}`,
          });
        }
      }
      // Each file's sampled row numbers: DuckDB skips the row groups a file_row_number filter excludes.
      const fileRows = rowsPerFile(files);
      const positions = samplePositions(
        fileRows.reduce((total, rows) => total + rows, 0),
        nonNegativeInteger(options.count, 'count'),
      );
      const byFile = new Map<number, number[]>();
      let file = 0;
      let fileStart = 0;
      for (const position of positions) {
        while (position >= fileStart + fileRows[file]!) fileStart += fileRows[file++]!;
        let rows = byFile.get(file);
        if (rows === undefined) byFile.set(file, (rows = []));
        rows.push(position - fileStart);
      }
      const projection = options.columns.map(sqlIdentifier).join(', ');
      const perFile = [...byFile].map(
        ([index, rows]) =>
          `SELECT ${index} AS __sample_file, file_row_number AS __sample_row, ${projection}
           FROM read_parquet(${fileListSql([files[index]!])}, ${READ_OPTIONS}, file_row_number = true) WHERE file_row_number IN (${rows.join(', ')})`,
      );
      const sql = `SELECT ${projection} FROM (${perFile.join(' UNION ALL ')}) ORDER BY __sample_file, __sample_row`;
      return rowSetOf(await guardFiles(this.connection, files, () => this.connection.runAndReadAll(sql)));
    });
  }
}

const MEMORY_UNITS: Record<string, number> = {
  bytes: 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
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
