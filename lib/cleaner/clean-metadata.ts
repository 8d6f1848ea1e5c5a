/**
 * A clean's HoodieCleanMetadata (CleanerUtils.convertCleanMetadata) from its plan and the executors' stats: pure,
 * so the metadata table's own cleaner and the data table's commit build it the same way.
 */
import type { HoodieCleanerPlan, HoodieCleanMetadata, HoodieCleanPartitionMetadata } from '../timeline/avro-files.js';
import type { PartitionCleanStat } from './execute.js';

/** Version of the clean metadata Hudi 0.14/0.15 write (CleanerUtils.LATEST_CLEAN_METADATA_VERSION). */
export const CLEAN_METADATA_VERSION = 2;

/**
 * The metadata of a clean at `instantTime`: one entry per partition of the plan (file names, as Hudi records them),
 * the plan's earliest commit to retain, last completed commit and extra metadata.
 */
export function cleanMetadataOf(
  instantTime: string,
  plan: Pick<HoodieCleanerPlan, 'policy' | 'earliestInstantToRetain' | 'lastCompletedCommitTimestamp' | 'extraMetadata'>,
  stats: readonly PartitionCleanStat[],
  timeTakenInMillis: number,
): HoodieCleanMetadata {
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
    merged.set(
      stat.partitionPath,
      seen === undefined
        ? stat
        : {
            partitionPath: stat.partitionPath,
            deletePathPatterns: [...seen.deletePathPatterns, ...stat.deletePathPatterns],
            successDeleteFiles: [...seen.successDeleteFiles, ...stat.successDeleteFiles],
            failedDeleteFiles: [...seen.failedDeleteFiles, ...stat.failedDeleteFiles],
            failures: [...seen.failures, ...stat.failures],
            partitionDeleted: seen.partitionDeleted || stat.partitionDeleted,
          },
    );
  }
  return [...merged.values()];
}
