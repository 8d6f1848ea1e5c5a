/**
 * What a table's folder holds, for tests that compare two copies of a table after a service ran on each: its base
 * files, and the files a cleaner plan names.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { HoodieCleanerPlan } from '../../lib/timeline/avro-files.js';

/** Base files under the table (not under .hoodie), relative and sorted. */
export function baseFilesUnder(table: string): string[] {
  return readdirSync(table, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.parquet') && !path.startsWith('.hoodie'))
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
