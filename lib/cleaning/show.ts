/**
 * `show-clean`: the clean instants on the active timeline, as hudi-cli's `cleans show` and `clean showpartitions`
 * list them — completed cleans from their metadata, pending ones from their plan.
 */

import { planDeletes } from '../cleaner/plan.js';
import { NotFoundError } from '../errors.js';
import type { HudiTable } from '../table/table.js';
import { instantPath } from '../timeline/timeline.js';
import { readCleanerPlan, readCleanMetadata } from './timeline-facts.js';

export interface CleanSummary {
  readonly instantTime: string;
  readonly state: 'REQUESTED' | 'INFLIGHT' | 'COMPLETED';
  readonly policy: string;
  readonly earliestCommitToRetain: string;
  readonly lastCompletedCommitTimestamp: string;
  /** Completed: files deleted; pending: files the plan deletes. */
  readonly files: number;
  readonly failedFiles: number;
  readonly partitions: number;
  readonly timeTakenInMillis: number | undefined;
}

export interface CleanPartitionDetail {
  readonly partitionPath: string;
  readonly policy: string;
  readonly deleted: readonly string[];
  readonly failed: readonly string[];
  /** Pending cleans: the files still to delete. */
  readonly planned: readonly string[];
  readonly partitionDeleted: boolean;
}

/** Every clean on the active timeline, oldest first. */
export async function describeCleans(table: HudiTable): Promise<CleanSummary[]> {
  const cleans = table.timeline.instants.filter((instant) => instant.action === 'clean');
  const out: CleanSummary[] = [];
  for (const instant of cleans) {
    if (instant.state === 'COMPLETED') {
      const metadata = await readCleanMetadata(table.storage, instant.time, table.layout);
      const partitions = Object.values(metadata?.partitionMetadata ?? {});
      out.push({
        instantTime: instant.time,
        state: instant.state,
        policy: partitions[0]?.policy ?? '',
        earliestCommitToRetain: metadata?.earliestCommitToRetain ?? '',
        lastCompletedCommitTimestamp: metadata?.lastCompletedCommitTimestamp ?? '',
        files: metadata?.totalFilesDeleted ?? 0,
        failedFiles: partitions.reduce((sum, partition) => sum + partition.failedDeleteFiles.length, 0),
        partitions: partitions.length,
        timeTakenInMillis: metadata?.timeTakenInMillis,
      });
    } else {
      const plan = await readCleanerPlan(table.storage, instant.time, table.layout);
      out.push({
        instantTime: instant.time,
        state: instant.state,
        policy: plan?.policy ?? '',
        earliestCommitToRetain: plan?.earliestInstantToRetain?.timestamp ?? '',
        lastCompletedCommitTimestamp: plan?.lastCompletedCommitTimestamp ?? '',
        files: plan === undefined ? 0 : planDeletes(plan).length,
        failedFiles: 0,
        partitions: Object.keys(plan?.filePathsToBeDeletedPerPartition ?? {}).length,
        timeTakenInMillis: undefined,
      });
    }
  }
  return out;
}

/** One clean's partitions. */
export async function describeClean(table: HudiTable, instantTime: string): Promise<CleanPartitionDetail[]> {
  const instant = table.timeline.instants.find((candidate) => candidate.action === 'clean' && candidate.time === instantTime);
  if (instant === undefined) {
    const cleans = table.timeline.instants.filter((candidate) => candidate.action === 'clean').map((candidate) => candidate.time);
    throw new NotFoundError(
      table.storage.uriOf(instantPath({ time: instantTime, action: 'clean', state: 'REQUESTED' }, table.layout)),
      cleans.length > 0 ? `cleans on the timeline: ${cleans.join(', ')}` : 'the active timeline has no clean',
    );
  }
  if (instant.state === 'COMPLETED') {
    const metadata = await readCleanMetadata(table.storage, instantTime, table.layout);
    return Object.values(metadata?.partitionMetadata ?? {}).map((partition) => ({
      partitionPath: partition.partitionPath,
      policy: partition.policy,
      deleted: partition.successDeleteFiles,
      failed: partition.failedDeleteFiles,
      planned: [],
      partitionDeleted: partition.isPartitionDeleted === true,
    }));
  }
  const plan = await readCleanerPlan(table.storage, instantTime, table.layout);
  if (plan === undefined) return [];
  const byPartition = new Map<string, string[]>();
  for (const file of planDeletes(plan)) byPartition.set(file.partitionPath, [...(byPartition.get(file.partitionPath) ?? []), file.fileName]);
  return [...byPartition].map(([partitionPath, planned]) => ({
    partitionPath,
    policy: plan.policy,
    deleted: [],
    failed: [],
    planned,
    partitionDeleted: (plan.partitionsToBeDeleted ?? []).includes(partitionPath),
  }));
}
