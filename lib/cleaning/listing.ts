/**
 * Listing partitions for the cleaner one at a time, so planning a table with thousands of partitions holds one
 * partition's listing per worker at a time rather than the whole table (lib/table/table.ts's listPartitions keeps all).
 */

import type { PartitionListing } from '../cleaner/plan.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { PARTITION_METAFILE } from '../table/table.js';
import { folderNameOf } from '../util/paths.js';

/** One partition folder's files (an absent folder lists as empty). */
export async function listPartition(storage: Storage, partitionPath: string): Promise<PartitionListing> {
  const { files } = await storage.listDir(partitionPath);
  return { partitionPath, files: files.map((file) => ({ name: folderNameOf(file.path), size: file.size })) };
}

/** List the given partitions, `concurrency` at a time, handing each listing to `visit` as it arrives. */
export async function forEachListedPartition(
  storage: Storage,
  partitionPaths: readonly string[],
  concurrency: number,
  visit: (listing: PartitionListing) => void | Promise<void>,
): Promise<void> {
  await mapWithConcurrency(partitionPaths, concurrency, async (partitionPath) => {
    await visit(await listPartition(storage, partitionPath));
  });
}

/**
 * Walk the table's folders from the base path (as listPartitions: a folder holding `.hoodie_partition_metadata` is
 * a partition; folders starting with '.' are skipped), handing each partition's listing to `visit` as it is found.
 * Returns how many folders were listed.
 */
export async function walkPartitions(storage: Storage, concurrency: number, visit: (listing: PartitionListing) => void | Promise<void>): Promise<number> {
  let frontier: string[] = [''];
  let listed = 0;
  while (frontier.length > 0) {
    const next: string[][] = await mapWithConcurrency(frontier, concurrency, async (dir) => {
      const listing = await storage.listDir(dir);
      listed++;
      const files = listing.files.map((file) => ({ name: folderNameOf(file.path), size: file.size }));
      if (files.some((file) => file.name === PARTITION_METAFILE)) {
        await visit({ partitionPath: dir, files });
        return [];
      }
      return listing.dirs
        .map(folderNameOf)
        .filter((name) => !name.startsWith('.'))
        .map((name) => (dir === '' ? name : `${dir}/${name}`));
    });
    frontier = next.flat();
  }
  return listed;
}
