/**
 * A DuckDB connection as this project uses it: opened with no network and UTC, queried for row objects, and its
 * failures over Parquet files turned into HudiErrors that name the file at fault.
 */
import { accessSync, constants as fsConstants } from 'node:fs';
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import { errorMessage, HudiError, NotFoundError } from '../errors.js';
import { duckdb } from './duckdb.js';
import type { ParquetEngineOptions } from './port.js';
import { fileListSql } from './sql.js';

/** An open DuckDB: the instance (for side connections) and the connection statements run on. */
export interface DuckDb {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
}

/** A DuckDB instance and connection configured for this project (no network, UTC). */
export async function openDuckDb(options: ParquetEngineOptions = {}): Promise<DuckDb> {
  const { DuckDBInstance } = duckdb();
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
  if (options.maxTempDirectorySize !== undefined) config.max_temp_directory_size = options.maxTempDirectorySize;
  if (options.allocatorFlushThreshold !== undefined) config.allocator_flush_threshold = options.allocatorFlushThreshold;
  if (options.allocatorBackgroundThreads !== undefined) config.allocator_background_threads = String(options.allocatorBackgroundThreads);
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(':memory:', config);
  } catch (cause) {
    throw new HudiError(`could not start DuckDB: ${duckdbReason(cause)}`, {
      fix: 'check memoryLimit/threads/tempDirectory/maxTempDirectorySize/allocatorFlushThreshold',
      cause,
    });
  }
  const connection = await instance.connect();
  // TIMESTAMPTZ → TIMESTAMP_MS casts and statistics text must not shift by the host's zone.
  await connection.run(`SET TimeZone = 'UTC'`);
  return { instance, connection };
}

/** A query's rows as objects of DuckDB values. */
export async function queryObjects(connection: DuckDBConnection, sql: string): Promise<Record<string, DuckDBValue>[]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjects();
}

/** DuckDB's message without its "LINE 1: …" pointer and error-class prefix. */
export function duckdbReason(error: unknown): string {
  const firstLine = errorMessage(error).split('\n')[0] ?? '';
  return firstLine.replace(/^[A-Za-z ]*Error: /, '').trim();
}

/** Local files must exist before DuckDB reads them, so a missing one is a NotFoundError rather than a DuckDB message. */
export async function assertFilesExist(files: readonly string[]): Promise<void> {
  // Synchronous on purpose: for a group of thousands of inputs, a promise per access call costs far more than the call.
  for (const file of files) {
    try {
      accessSync(file, fsConstants.R_OK);
    } catch {
      throw new NotFoundError(file, 'stage the file locally before reading it');
    }
  }
}

/** Runs DuckDB work over files; a failure becomes a HudiError naming the file that caused it. */
export async function guardFiles<T>(connection: DuckDBConnection, files: readonly string[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof HudiError) throw error;
    throw await explainFailure(connection, files, error);
  }
}

async function explainFailure(connection: DuckDBConnection, files: readonly string[], error: unknown): Promise<HudiError> {
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
      await connection.run(`SELECT num_rows FROM parquet_file_metadata(${fileListSql([file])})`);
    } catch (cause) {
      return unreadable(file, cause);
    }
  }
  for (const file of files) {
    try {
      await connection.run(`SELECT max(hash(t)) FROM read_parquet(${fileListSql([file])}, hive_partitioning = false) AS t`);
    } catch (cause) {
      return unreadable(file, cause);
    }
  }
  return new HudiError(`could not read Parquet files: ${reason}`, { location: files[0], cause: error });
}

function looksLikeFileProblem(reason: string): boolean {
  return /magic|parquet|thrift|decompress|corrupt|page|footer|metadata|truncat|invalid|out of range|eof|end of file|read/i.test(reason);
}
