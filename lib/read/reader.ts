/**
 * Snapshot reads: the rows of the latest committed base file of every live file group; for merge-on-read tables
 * merged with the slices' log records (snapshot, `_rt`) or the base files alone (read-optimized, `_ro`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openParquetEngine } from '../engine/parquet-engine.js';
import type { ParquetEngine, RowSet } from '../engine/port.js';
import type { Row } from '../engine/row-format.js';
import { HudiError, UnsupportedTableError } from '../errors.js';
import { readMergedSlices } from '../merge-on-read/snapshot.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { PROPERTIES_FILE } from '../table/config.js';
import type { BaseFile, FileSystemView } from '../table/file-system-view.js';
import { keyGeneratorOptionsFromTable, partitionValuesFromPath } from '../table/key-generators.js';
import type { HudiTable, TableSchema } from '../table/table.js';
import { fileNameOf } from '../util/paths.js';

export const META_FIELDS = ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'] as const;
const DOWNLOAD_CONCURRENCY = 8;

export interface SnapshotOptions {
  /** Read as of this instant time (time travel). */
  asOf?: string;
  /** Keep Hudi's `_hoodie_*` columns (tables with hoodie.populate.meta.fields=false have none). */
  includeMetaFields?: boolean;
  /** Reuse an engine (the caller closes it); otherwise one is opened for the read. */
  engine?: ParquetEngine;
  /**
   * Merge-on-read tables: `snapshot` (default) merges base files with their log files, `read_optimized` reads the
   * base files alone (hoodie.datasource.query.type). Copy-on-write tables read the same either way.
   */
  queryType?: QueryType;
}

export const QUERY_TYPES = ['snapshot', 'read_optimized'] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

/** hoodie.datasource.query.type's values this reader knows; one error naming them otherwise. */
export function parseQueryType(text: string | undefined): QueryType {
  const value = (text ?? 'snapshot').trim().toLowerCase();
  if (!(QUERY_TYPES as readonly string[]).includes(value)) {
    throw new HudiError(`query type "${text}" is not supported`, { fix: `use ${QUERY_TYPES.join(' or ')} (incremental queries are not supported)` });
  }
  return value as QueryType;
}

export interface Snapshot {
  readonly columns: string[];
  readonly rows: Row[];
  /** Base files read, relative to the table path. */
  readonly files: string[];
}

/**
 * Make table files readable by path: local tables are read in place, remote ones downloaded to a temp dir.
 * Returns local paths in the same order and a cleanup function.
 */
export async function stageFiles(
  storage: Storage,
  paths: readonly string[],
  tempParent = tmpdir(),
): Promise<{ localPaths: string[]; toUri: Map<string, string>; cleanup: () => Promise<void> }> {
  const toUri = new Map<string, string>();
  const direct = paths.map((p) => storage.localPath?.(p));
  if (direct.every((p): p is string => p !== undefined)) {
    direct.forEach((local, i) => {
      toUri.set(local, storage.uriOf(paths[i]!));
    });
    return { localPaths: direct, toUri, cleanup: async () => {} };
  }
  const dir = await mkdtemp(join(tempParent, 'hudi-stage-'));
  const localPaths = await mapWithConcurrency([...paths], DOWNLOAD_CONCURRENCY, async (path, index) => {
    const local = join(dir, `${index}-${fileNameOf(path)}`);
    await storage.downloadFile(path, local);
    toUri.set(local, storage.uriOf(path));
    return local;
  });
  return { localPaths, toUri, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Replace staged temp paths in an engine error with the table URIs a user recognizes. */
export function withTableLocations(error: unknown, toUri: ReadonlyMap<string, string>): unknown {
  if (!(error instanceof HudiError)) return error;
  const swap = (text: string): string => [...toUri].reduce((result, [local, uri]) => result.split(local).join(uri), text);
  const problem = swap(error.problem);
  const location = error.location === undefined ? undefined : swap(error.location);
  if (problem === error.problem && location === error.location) return error;
  return new HudiError(problem, { ...(location === undefined ? {} : { location }), ...(error.fix === undefined ? {} : { fix: error.fix }), cause: error });
}

export async function readSnapshot(table: HudiTable, options: SnapshotOptions = {}): Promise<Snapshot> {
  const view = await table.fileSystemView(options.asOf === undefined ? {} : { asOf: options.asOf });
  if (table.config.type === 'MERGE_ON_READ' && (options.queryType ?? 'snapshot') === 'snapshot') return readMergeOnReadSnapshot(table, view, options);
  const baseFiles = view.latestBaseFiles();
  const files = baseFiles.map((f) => f.path);
  if (files.length === 0) return { columns: [], rows: [], files };
  const engine = options.engine ?? (await openParquetEngine());
  const staged = await stageFiles(table.storage, files);
  // Without populated meta fields the `_hoodie_*` columns in the files are placeholders (nulls and a file name), not
  // part of the table's schema: Hudi's readers (Spark, hudi-rs) do not return them, so neither do we.
  const keepMetaFields = options.includeMetaFields === true && table.config.populateMetaFields;
  try {
    const result = withSchemaColumns(
      await readTableRows(table, engine, baseFiles, staged.localPaths),
      options.asOf === undefined ? await table.schema() : undefined,
    );
    const columns = keepMetaFields ? result.columns : result.columns.filter((c) => !(META_FIELDS as readonly string[]).includes(c));
    const rows = keepMetaFields ? result.rows : result.rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? null])));
    return { columns, rows, files };
  } catch (error) {
    throw withTableLocations(error, staged.toUri);
  } finally {
    await staged.cleanup();
    if (options.engine === undefined) await engine.close();
  }
}

async function readMergeOnReadSnapshot(table: HudiTable, view: FileSystemView, options: SnapshotOptions): Promise<Snapshot> {
  const queryInstant = view.queryInstant;
  const slices = view.latestMergedSlices();
  if (queryInstant === undefined || slices.length === 0) return { columns: [], rows: [], files: [] };
  if (table.config.dropPartitionColumns && table.config.partitionFields.length > 0) {
    throw new UnsupportedTableError(
      'snapshot reads of merge-on-read tables written with hoodie.datasource.write.drop.partition.columns=true are not supported yet',
      {
        location: table.storage.uriOf(PROPERTIES_FILE),
        fix: 'read it with --query-type read_optimized, or with Spark',
      },
    );
  }
  const basePaths = slices.flatMap((slice) => (slice.baseFile === undefined ? [] : [slice.baseFile.path]));
  const engine = options.engine ?? (await openParquetEngine());
  const staged = await stageFiles(table.storage, basePaths);
  const localByPath = new Map(basePaths.map((path, index) => [path, staged.localPaths[index]!]));
  const keepMetaFields = options.includeMetaFields === true && table.config.populateMetaFields;
  try {
    const result = await readMergedSlices(view, {
      storage: table.storage,
      config: table.config,
      timeline: table.timeline,
      queryInstant,
      engine,
      localBaseFile: (path) => localByPath.get(path)!,
    });
    const columns = keepMetaFields ? result.columns : result.columns.filter((c) => !(META_FIELDS as readonly string[]).includes(c));
    const rows = keepMetaFields ? result.rows : result.rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? null])));
    return { columns, rows, files: result.files };
  } catch (error) {
    throw withTableLocations(error, staged.toUri);
  } finally {
    await staged.cleanup();
    if (options.engine === undefined) await engine.close();
  }
}

/**
 * Columns of the table's latest schema that no file read has (a commit added them, and its files were replaced or
 * are elsewhere) read as NULL, as Spark's reader returns them; the files' columns come first, as read.
 */
function withSchemaColumns(result: RowSet, schema: TableSchema | undefined): RowSet {
  const absent = (schema?.schema.fields ?? []).map((field) => field.name).filter((name) => !result.columns.includes(name));
  if (absent.length === 0) return result;
  for (const row of result.rows) for (const name of absent) row[name] = null;
  return { columns: [...result.columns, ...absent], rows: result.rows };
}

/**
 * The rows of the base files. Tables written with hoodie.datasource.write.drop.partition.columns=true keep their
 * partition columns only in the partition path, so each partition's rows get them back from it: after the file
 * columns and as strings, as Hudi's Spark reader returns them (the table schema no longer records their types).
 */
async function readTableRows(table: HudiTable, engine: ParquetEngine, baseFiles: readonly BaseFile[], localPaths: readonly string[]): Promise<RowSet> {
  const { config } = table;
  if (!config.dropPartitionColumns || config.partitionFields.length === 0) return engine.readRows(localPaths);
  const byPartition = new Map<string, string[]>();
  baseFiles.forEach((file, index) => {
    byPartition.set(file.partitionPath, [...(byPartition.get(file.partitionPath) ?? []), localPaths[index]!]);
  });
  const keygenOptions = keyGeneratorOptionsFromTable(config);
  const columns: string[] = [];
  const rows: Row[] = [];
  for (const [partitionPath, paths] of byPartition) {
    const part = await engine.readRows(paths);
    for (const column of part.columns) if (!columns.includes(column)) columns.push(column);
    const values = partitionValuesFromPath(partitionPath, keygenOptions);
    const dropped = config.partitionFields.filter((field) => !part.columns.includes(field));
    for (const row of part.rows) {
      for (const field of dropped) row[field] = values[field] ?? null;
      rows.push(row);
    }
  }
  for (const field of config.partitionFields) if (!columns.includes(field)) columns.push(field);
  return { columns, rows: rows.map((row) => Object.fromEntries(columns.map((column) => [column, row[column] ?? null]))) };
}
