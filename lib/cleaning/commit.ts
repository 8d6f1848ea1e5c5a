/**
 * Completing a clean: its HoodieCleanMetadata (CleanerUtils.convertCleanMetadata) from the plan and the executors'
 * stats, written as `T.clean` under the lock, last.
 */
import { ConflictError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { withLock } from '../lock/port.js';
import { assertNoMetadataTableNow } from '../metadata-table.js';
import type { Storage } from '../storage/port.js';
import { encodeTimelineAvro, type HoodieCleanerPlan, type HoodieCleanMetadata, type HoodieCleanPartitionMetadata } from '../timeline/avro-files.js';
import { instantPath } from '../timeline/timeline.js';
import { transitionToCompleted } from '../timeline/transitions.js';
import type { PartitionCleanStat } from './execute.js';

/** Version of the clean metadata Hudi 0.14/0.15 write (CleanerUtils.LATEST_CLEAN_METADATA_VERSION). */
export const CLEAN_METADATA_VERSION = 2;

/**
 * The metadata of a clean at `instantTime`: one entry per partition of the plan (file names, as Hudi records them),
 * the plan's earliest commit to retain, last completed commit and extra metadata.
 */
export function cleanMetadataOf(instantTime: string, plan: HoodieCleanerPlan, stats: readonly PartitionCleanStat[], timeTakenInMillis: number): HoodieCleanMetadata {
  const partitionMetadata: Record<string, HoodieCleanPartitionMetadata> = {};
  let totalFilesDeleted = 0;
  for (const stat of stats) {
    partitionMetadata[stat.partitionPath] = {
      partitionPath: stat.partitionPath,
      policy: plan.policy,
      deletePathPatterns: [...stat.deletePathPatterns],
      successDeleteFiles: [...stat.successDeleteFiles],
      failedDeleteFiles: [...stat.failedDeleteFiles],
      isPartitionDeleted: stat.partitionDeleted,
    };
    totalFilesDeleted += stat.successDeleteFiles.length;
  }
  return {
    startCleanTime: instantTime,
    timeTakenInMillis,
    totalFilesDeleted,
    earliestCommitToRetain: plan.earliestInstantToRetain?.timestamp ?? '',
    lastCompletedCommitTimestamp: plan.lastCompletedCommitTimestamp,
    partitionMetadata,
    version: CLEAN_METADATA_VERSION,
    bootstrapPartitionMetadata: {},
    extraMetadata: plan.extraMetadata,
  };
}

/** Merge the stats of workers that each cleaned some partitions of one plan (a partition's stats may be split too). */
export function mergePartitionStats(parts: readonly (readonly PartitionCleanStat[])[]): PartitionCleanStat[] {
  const merged = new Map<string, PartitionCleanStat>();
  for (const stat of parts.flat()) {
    const seen = merged.get(stat.partitionPath);
    merged.set(stat.partitionPath, seen === undefined ? stat : {
      partitionPath: stat.partitionPath,
      deletePathPatterns: [...seen.deletePathPatterns, ...stat.deletePathPatterns],
      successDeleteFiles: [...seen.successDeleteFiles, ...stat.successDeleteFiles],
      failedDeleteFiles: [...seen.failedDeleteFiles, ...stat.failedDeleteFiles],
      failures: [...seen.failures, ...stat.failures],
      partitionDeleted: seen.partitionDeleted || stat.partitionDeleted,
    });
  }
  return [...merged.values()];
}

export interface CompleteCleanOptions {
  readonly lock: LockProvider;
  readonly lockWaitMs?: number;
  /**
   * Runs under the lock just before `T.clean` is written, where Hudi's CleanActionExecutor writes the metadata
   * table (writeTableMetadata): the metadata-table writer turns the metadata into its `isDeleted` records here.
   */
  readonly beforeComplete?: (metadata: HoodieCleanMetadata, instantTime: string) => Promise<void>;
}

/**
 * Write `T.clean` (the commit point of the clean), under the lock, only while `T.clean.inflight` is there: a clean
 * another runner completed first is a ConflictError naming it.
 */
export async function completeClean(storage: Storage, instantTime: string, metadata: HoodieCleanMetadata, options: CompleteCleanOptions): Promise<void> {
  await withLock(
    options.lock,
    async (lease) => {
      await assertNoMetadataTableNow(storage, 'a clean');
      const completed = instantPath({ time: instantTime, action: 'clean', state: 'COMPLETED' });
      if ((await storage.head(completed)) !== undefined) {
        throw new ConflictError(`clean ${instantTime} is already complete: another runner finished it`, { location: storage.uriOf(completed) });
      }
      const inflight = instantPath({ time: instantTime, action: 'clean', state: 'INFLIGHT' });
      if ((await storage.head(inflight)) === undefined) {
        throw new ConflictError(`clean ${instantTime} is no longer inflight (its .clean.inflight is gone)`, {
          location: storage.uriOf(inflight),
          fix: 'another process removed it (an archiver or a restore); look at the timeline before cleaning again',
        });
      }
      if (options.beforeComplete !== undefined) await options.beforeComplete(metadata, instantTime);
      await lease.assertHeld();
      await transitionToCompleted(storage, instantTime, 'clean', encodeTimelineAvro('cleanMetadata', metadata));
    },
    options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs },
  );
}
