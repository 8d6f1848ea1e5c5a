/**
 * Executing a cleaner plan (CleanActionExecutor.clean): delete its files in batches with bounded parallelism and
 * report, per partition, what went and what did not. Runs on any subset of the plan's partitions, so a serverless
 * run can split the deletes of a large plan over several workers and merge the stats.
 */
import { rm } from 'node:fs/promises';
import { mapWithConcurrency } from '../storage/concurrency.js';
import { deleteMany } from '../storage/delete-many.js';
import type { Storage } from '../storage/port.js';
import { parseBaseFileName } from '../table/file-system-view.js';
import type { HoodieCleanerPlan } from '../timeline/avro-schemas.js';
import { fileNameOf } from '../util/paths.js';
import { assertPlanPaths, planDeletesByPartition } from './plan.js';

export interface PartitionCleanStat {
  readonly partitionPath: string;
  /** The file names the plan deletes (Hudi's deletePathPatterns). */
  readonly deletePathPatterns: readonly string[];
  /** File names that are gone (deleted now, or already by an earlier, interrupted attempt). */
  readonly successDeleteFiles: readonly string[];
  readonly failedDeleteFiles: readonly string[];
  readonly failures: readonly { readonly fileName: string; readonly reason: string }[];
  /** The plan removes the partition and it was removed. */
  readonly partitionDeleted: boolean;
}

export interface ExecuteCleanOptions {
  /** Storage requests in flight at once (hoodie.cleaner.parallelism). */
  readonly concurrency: number;
  /** Only these partitions of the plan (default: all). */
  readonly partitions?: readonly string[];
  /** Partitions are removed only on partitioned tables (as Hudi's executor). */
  readonly isPartitioned: boolean;
}

/**
 * Files deleted per round: as many as `concurrency` DeleteObjects requests of 1,000 keys take at once, so a plan of a
 * million files never has all its paths and outcomes in memory at the same time.
 */
const FILES_PER_REQUEST = 1_000;

/** Delete the plan's files (those of `options.partitions`), then the partitions it removes. Never throws on a refused file. */
export async function executeCleanerPlan(storage: Storage, plan: HoodieCleanerPlan, options: ExecuteCleanOptions): Promise<PartitionCleanStat[]> {
  const wanted = options.partitions === undefined ? undefined : new Set(options.partitions);
  // A plan naming a file without a path is refused before anything is deleted.
  assertPlanPaths(plan);
  const perRound = Math.max(1, options.concurrency) * FILES_PER_REQUEST;
  type Deleted = Pick<PartitionCleanStat, 'deletePathPatterns' | 'successDeleteFiles' | 'failedDeleteFiles' | 'failures'>;
  const deleted = new Map<string, Deleted>();
  let round: { partitionPath: string; files: { fileName: string; path: string }[] }[] = [];
  let roundFiles = 0;
  const deleteRound = async () => {
    if (round.length === 0) return;
    const paths: string[] = [];
    for (const { files } of round) for (const file of files) paths.push(file.path);
    const result = await deleteMany(storage, paths, { concurrency: options.concurrency });
    const gone = new Set(result.deleted);
    const refused = new Map(result.failed.map((failure) => [failure.path, failure.reason]));
    for (const { partitionPath, files } of round) {
      const failures = files
        .filter((file) => !gone.has(file.path))
        .map((file) => ({ fileName: file.fileName, reason: refused.get(file.path) ?? 'not deleted' }));
      const stat: Deleted = {
        deletePathPatterns: files.map((file) => file.fileName),
        successDeleteFiles: files.filter((file) => gone.has(file.path)).map((file) => file.fileName),
        failedDeleteFiles: failures.map((failure) => failure.fileName),
        failures,
      };
      // A plan names each partition once (a map): whole partitions go in a round.
      deleted.set(partitionPath, stat);
    }
    round = [];
    roundFiles = 0;
  };
  for (const { partitionPath, files } of planDeletesByPartition(plan)) {
    if (wanted !== undefined && !wanted.has(partitionPath)) continue;
    round.push({ partitionPath, files });
    roundFiles += files.length;
    if (roundFiles >= perRound) await deleteRound();
  }
  await deleteRound();

  const partitionsToDelete = options.isPartitioned ? (plan.partitionsToBeDeleted ?? []).filter((p) => p !== '' && (wanted === undefined || wanted.has(p))) : [];
  // Partitions are independent: listed and removed several at a time (one after another, a plan emptying thousands
  // of partitions waits for two requests per partition in turn).
  const outer = Math.max(1, Math.min(options.concurrency, partitionsToDelete.length));
  const inner = Math.max(1, Math.floor(options.concurrency / outer));
  const removedFlags = await mapWithConcurrency(partitionsToDelete, outer, (partitionPath) => deletePartitionFolder(storage, partitionPath, inner));
  const removed = new Set(partitionsToDelete.filter((_, index) => removedFlags[index]));

  const partitionPaths = Object.keys(plan.filePathsToBeDeletedPerPartition ?? plan.filesToBeDeletedPerPartition ?? {}).filter(
    (p) => wanted === undefined || wanted.has(p),
  );
  return partitionPaths.map((partitionPath) => ({
    partitionPath,
    ...(deleted.get(partitionPath) ?? { deletePathPatterns: [], successDeleteFiles: [], failedDeleteFiles: [], failures: [] }),
    partitionDeleted: removed.has(partitionPath),
  }));
}

/**
 * Remove a partition the plan empties: every object under it, unless a base file appeared there since planning
 * (a writer started using the partition again), in which case it stays. Hudi deletes the folder outright.
 */
async function deletePartitionFolder(storage: Storage, partitionPath: string, concurrency: number): Promise<boolean> {
  const objects = await storage.listRecursive(partitionPath);
  if (objects.some((object) => parseBaseFileName(fileNameOf(object.path)) !== undefined)) return false;
  const result = await deleteMany(
    storage,
    objects.map((object) => object.path),
    { concurrency },
  );
  if (result.failed.length > 0) return false;
  // Object stores have no folders; a local disk keeps the empty one (Hudi's delete removes the directory).
  const localDir = storage.localPath?.(partitionPath);
  if (localDir !== undefined) await rm(localDir, { recursive: true, force: true });
  return true;
}
