/**
 * Deleting many objects through any Storage: the store's own deleteMany when it has one (S3 DeleteObjects batches,
 * local removals), else `delete` in batches, where a refused batch counts all its paths as failed.
 */
import { rm } from 'node:fs/promises';
import { errorMessage } from '../errors.js';
import { mapWithConcurrency } from './concurrency.js';
import type { DeleteManyOptions, DeleteManyResult, Storage } from './port.js';

/** Batch size of the fallback (S3's DeleteObjects limit, so a wrapper over S3 keeps one request a batch). */
const FALLBACK_BATCH = 1_000;

export async function deleteMany(storage: Storage, paths: readonly string[], options: DeleteManyOptions = {}): Promise<DeleteManyResult> {
  if (paths.length === 0) return { deleted: [], failed: [] };
  if (storage.deleteMany !== undefined) return storage.deleteMany(paths, options);
  const batches: string[][] = [];
  for (let offset = 0; offset < paths.length; offset += FALLBACK_BATCH) batches.push(paths.slice(offset, offset + FALLBACK_BATCH));
  const results = await mapWithConcurrency(batches, options.concurrency ?? 4, async (batch): Promise<DeleteManyResult> => {
    try {
      await storage.delete(batch);
      return { deleted: batch, failed: [] };
    } catch (error) {
      return { deleted: [], failed: batch.map((path) => ({ path, reason: errorMessage(error) })) };
    }
  });
  return { deleted: results.flatMap((r) => r.deleted), failed: results.flatMap((r) => r.failed) };
}

/** Delete a folder's objects; on a local disk the (then empty) folders too, as Hudi's deleteDirectory does. */
export async function deleteFolder(storage: Storage, folder: string): Promise<void> {
  const objects = await storage.listRecursive(folder);
  if (objects.length > 0) await storage.delete(objects.map((object) => object.path));
  const local = storage.localPath?.(folder);
  if (local !== undefined) await rm(local, { recursive: true, force: true });
}
