/**
 * What the writer interop tests (test/interop/writer-*.test.ts and others) share: typed Parquet inputs, our writes
 * (the library call and the CLI), our clean, our snapshot, the table's files as they are on disk.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type ArchiveOptions, runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { type CleanResult, runClean } from '../../lib/cleaning/clean.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { parseJavaProperties } from '../../lib/table/properties.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, type WriteResult, writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { duckdb } from './duckdb.js';
import { REPO_ROOT } from './paths.js';

let inputs = 0;

/** Our cleaner on a table, keeping the latest `retained` commits (Hudi's KEEP_LATEST_COMMITS), under its lock. */
export async function cleanKeepingLatestCommits(path: string, retained: number): Promise<CleanResult> {
  const table = await HudiTable.open(openStorage(path));
  return runClean(table, {
    config: cleanConfigFromProperties(
      new Map([
        ['hoodie.cleaner.policy', 'KEEP_LATEST_COMMITS'],
        ['hoodie.cleaner.commits.retained', String(retained)],
      ]),
    ),
    lock: lockProviderFor(table.config.properties, table.config.name, table.storage),
  });
}

/** Our archive of `table` keeping between `min` and `max` completed commits (hoodie.keep.min/max.commits). */
export async function archiveKeepingCommits(table: HudiTable, min: number, max: number, options: Omit<ArchiveOptions, 'config'>) {
  const config = archivalConfigFromProperties(
    new Map([
      ['hoodie.keep.min.commits', String(min)],
      ['hoodie.keep.max.commits', String(max)],
    ]),
  );
  return runArchive(table, { ...options, config });
}

/** A Parquet input holding the rows of a DuckDB query (its column types are the input's types). */
export async function parquetInput(dir: string, select: string): Promise<string> {
  const file = join(dir, `input-${++inputs}.parquet`);
  await duckdb(`COPY (${select}) TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
  return file;
}

/**
 * A Parquet input of canonical-JSON rows (the form every reader here returns) with DuckDB column types, e.g.
 * `{ id: 'BIGINT', amount: 'DECIMAL(12,3)', ts: 'TIMESTAMPTZ', addr: 'STRUCT(city VARCHAR, zip INTEGER)' }`.
 */
export async function parquetFromRows(dir: string, rows: readonly Record<string, unknown>[], columns: Readonly<Record<string, string>>): Promise<string> {
  const jsonl = join(dir, `rows-${++inputs}.jsonl`);
  writeFileSync(jsonl, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
  const spec = Object.entries(columns)
    .map(([name, type]) => `${JSON.stringify(name)}: '${type}'`)
    .join(', ');
  return parquetInput(dir, `SELECT * FROM read_json('${jsonl.replaceAll("'", "''")}', format = 'newline_delimited', columns = {${spec}})`);
}

/** One batch through lib/writer/write-client.ts. */
export function ourWrite(
  table: string,
  operation: WriteOperation,
  file: string,
  properties: ReadonlyMap<string, string>,
  extra: Partial<WriteOptions> = {},
): Promise<WriteResult> {
  return writeBatch(openStorage(table), { input: { file, format: 'parquet' }, operation, properties, ...extra });
}

/** One batch through the CLI (`hudi-serverless write`, run from source as `npm run cli` does); its JSON result line. */
export function cliWrite(
  table: string,
  operation: WriteOperation,
  file: string,
  propsFile: string,
): { instant: string; inserted: number; updated: number; deleted: number } {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'lib/cli/main.ts'), 'write', table, '--input', file, '--operation', operation, '--props', propsFile, '--quiet'],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`hudi-serverless write failed (${result.status}): ${result.stderr}`);
  const lines = result.stdout.split('\n').filter((line) => line.trim() !== '');
  return JSON.parse(lines.at(-1)!) as { instant: string; inserted: number; updated: number; deleted: number };
}

/** Our reader's snapshot, every column. */
export async function ourRows(table: string): Promise<Row[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(table)), { includeMetaFields: true })).rows;
}

export function tableProperties(table: string): Map<string, string> {
  return parseJavaProperties(readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8'));
}

/** Every file under the table folder (relative paths), `.hoodie` included. */
export function filesUnder(table: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(table, path));
    }
  };
  walk(table);
  return out.sort();
}

/** The instant files in `.hoodie/` (timeline layout 1 keeps them flat). */
export function timelineFiles(table: string): string[] {
  return readdirSync(join(table, '.hoodie'))
    .filter((name) => /^\d{17}\./.test(name))
    .sort();
}

/** Rows keyed by a column, failing on a repeated key (a duplicate record). */
export function byKey(rows: readonly Row[], column: string): Map<string, Row> {
  const out = new Map<string, Row>();
  for (const row of rows) {
    const key = String(row[column]);
    if (out.has(key)) throw new Error(`${column}=${key} appears twice: ${JSON.stringify(out.get(key))} and ${JSON.stringify(row)}`);
    out.set(key, row);
  }
  return out;
}

/** The columns of rows, in a fixed order, for comparing two readers or two tables. */
export function project(rows: readonly Row[], columns: readonly string[]): Row[] {
  return rows.map((row) => Object.fromEntries(columns.map((column) => [column, row[column] ?? null])));
}
