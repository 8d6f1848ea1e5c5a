/**
 * What a table's folder holds, for tests that compare two copies of a table after a service ran on each: its base
 * files, the files a cleaner plan names, and the rows we read from it.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import type { HoodieCleanerPlan } from '../../lib/timeline/avro-files.js';
import { canonicalRows } from './hudi.js';

/** Base files under the table (not under .hoodie), relative and sorted. */
export function baseFilesUnder(table: string): string[] {
  return readdirSync(table, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.parquet') && !path.startsWith('.hoodie'))
    .map((path) => relative(table, join(table, path)))
    .sort();
}

/** Base files and merge-on-read log files under the table (not under .hoodie, no checksums), relative and sorted. */
export function dataFilesUnder(table: string): string[] {
  return readdirSync(table, { recursive: true, encoding: 'utf8' })
    .filter((path) => !path.startsWith('.hoodie') && !path.endsWith('.crc') && (path.endsWith('.parquet') || /(^|\/)\.[^/]+\.log\.\d+_[^/]+$/.test(path)))
    .map((path) => relative(table, join(table, path)))
    .sort();
}

/** A cleaner plan's files as partition → sorted file names (the paths differ: each copy is elsewhere). */
export function cleanerPlanFiles(plan: HoodieCleanerPlan): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(plan.filePathsToBeDeletedPerPartition ?? {})
      .map(([p, files]) => [p, files.map((f) => f.filePath!.slice(f.filePath!.lastIndexOf('/') + 1)).sort()])
      .sort(([a], [b]) => (a! < b! ? -1 : 1)),
  );
}

/** Our snapshot of a local table, every column, as canonical rows (compare with canonicalRows of Spark's read). */
export async function ourCanonicalRows(path: string, asOf?: string): Promise<string[]> {
  const table = await HudiTable.open(new LocalStorage(path));
  return canonicalRows((await readSnapshot(table, { includeMetaFields: true, ...(asOf === undefined ? {} : { asOf }) })).rows);
}
