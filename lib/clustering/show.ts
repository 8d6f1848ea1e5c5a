/**
 * Clustering plans on the timeline, summarised for `show-clustering`: read-only, and usable on tables whose data
 * files are absent (input sizes then come from the plan's TOTAL_IO_READ_MB metric); and the completed clusterings
 * with the summaries their replacecommits recorded (`--history`).
 */

import { mapWithConcurrency, settleAll } from '../storage/concurrency.js';
import { joinPartitionPath } from '../table/file-system-view.js';
import type { HudiTable } from '../table/table.js';
import { type ClusteringPlanGroup, readClusteringPlan } from '../timeline/clustering-plan.js';
import type { InstantState } from '../timeline/instant.js';
import { completedClusterings } from '../timeline/queries.js';
import { fileNameOf } from '../util/paths.js';
import { clusteringSummaryOf, groupResultsDone, sliceStoragePath } from './instant.js';
import { sliceHasBaseFile } from './merge-slices.js';
import type { ClusteringSummary } from './report.js';
import { planSortColumns } from './sort-columns.js';

export interface ClusteringGroupSummary {
  readonly index: number;
  readonly partitionPath: string;
  readonly inputFiles: number;
  readonly inputBytes: number;
  /** 'files' when every input file was found; otherwise 'plan metrics' (whole megabytes, rounded down by Hudi). */
  readonly bytesFrom: 'files' | 'plan metrics';
  readonly numOutputFileGroups: number;
  /** Pending plans: whether the group's result is stored (it ran to the end). */
  readonly done: boolean;
}

export interface ClusteringPlanSummary {
  readonly instantTime: string;
  readonly state: InstantState;
  readonly strategyClassName: string;
  readonly sortColumns: readonly string[];
  readonly partitions: readonly string[];
  readonly groups: readonly ClusteringGroupSummary[];
  readonly inputFiles: number;
  readonly inputBytes: number;
  readonly expectedOutputFiles: number;
}

const MIB = 1024 * 1024;
const HEAD_CONCURRENCY = 16;

/** Pending clustering plans, oldest first; with includeCompleted also the completed ones still on the active timeline. */
export async function describeClusteringPlans(table: HudiTable, options: { includeCompleted?: boolean } = {}): Promise<ClusteringPlanSummary[]> {
  const { storage } = table;
  // Layout 2 names a pending clustering `clustering` and its completion a replacecommit; layout 1 both replacecommit.
  const instants = table.timeline.instants.filter((instant) =>
    instant.state === 'COMPLETED' ? instant.action === 'replacecommit' && options.includeCompleted === true : instant.action === table.layout.clusteringAction,
  );
  const summaries: ClusteringPlanSummary[] = [];
  for (const instant of instants) {
    const plan = await readClusteringPlan(storage, instant.time, table.layout);
    if (plan === undefined) continue;
    const done = instant.state === 'INFLIGHT' ? await groupResultsDone(storage, instant.time, plan.inputGroups.length) : [];
    const groups = await settleAll(
      plan.inputGroups.map(async (group, index): Promise<ClusteringGroupSummary> => {
        const bytes = await groupInputBytes(table, group);
        return {
          index,
          partitionPath: group.slices[0]?.partitionPath ?? '',
          inputFiles: group.slices.length,
          ...bytes,
          numOutputFileGroups: group.numOutputFileGroups,
          done: done[index] === true,
        };
      }),
    );
    summaries.push({
      instantTime: instant.time,
      state: instant.state,
      strategyClassName: plan.strategy.strategyClassName,
      sortColumns: planSortColumns(plan),
      partitions: [...new Set(groups.map((group) => group.partitionPath))],
      groups,
      inputFiles: groups.reduce((total, group) => total + group.inputFiles, 0),
      inputBytes: groups.reduce((total, group) => total + group.inputBytes, 0),
      expectedOutputFiles: groups.reduce((total, group) => total + group.numOutputFileGroups, 0),
    });
  }
  return summaries;
}

async function groupInputBytes(table: HudiTable, group: ClusteringPlanGroup): Promise<Pick<ClusteringGroupSummary, 'inputBytes' | 'bytesFrom'>> {
  // A merge-on-read slice's bytes are its base file's (when it has one) and its log files'.
  const files = group.slices.flatMap((slice) => [
    ...(sliceHasBaseFile(slice) ? [sliceStoragePath(slice)] : []),
    ...slice.deltaFilePaths.map((path) => joinPartitionPath(slice.partitionPath, fileNameOf(path))),
  ]);
  const sizes = await mapWithConcurrency(files, HEAD_CONCURRENCY, async (path) => (await table.storage.head(path))?.size);
  if (sizes.every((size): size is number => size !== undefined)) {
    return { inputBytes: sizes.reduce((total, size) => total + size, 0), bytesFrom: 'files' };
  }
  return { inputBytes: Math.round((group.metrics['TOTAL_IO_READ_MB'] ?? 0) * MIB), bytesFrom: 'plan metrics' };
}

/** A completed clustering, from its replacecommit. */
export interface CompletedClusteringSummary {
  readonly instantTime: string;
  /** File groups the clustering replaced, and the files it wrote (from the commit itself, whoever wrote it). */
  readonly replacedFileGroups: number;
  readonly filesWritten: number;
  readonly bytesWritten: number;
  readonly rowsWritten: number;
  /** The run's summary, when this tool committed it; undefined for Hudi's clusterings and older commits. */
  readonly summary: ClusteringSummary | undefined;
}

/** Completed clusterings on the active timeline, newest first. */
export async function describeClusteringHistory(table: HudiTable): Promise<CompletedClusteringSummary[]> {
  const out: CompletedClusteringSummary[] = [];
  for await (const { instant, metadata } of completedClusterings(table.storage, table.timeline)) {
    const stats = Object.values(metadata.partitionToWriteStats).flat();
    out.push({
      instantTime: instant.time,
      replacedFileGroups: Object.values(metadata.partitionToReplaceFileIds ?? {}).reduce((total, ids) => total + ids.length, 0),
      filesWritten: stats.length,
      bytesWritten: stats.reduce((total, stat) => total + stat.fileSizeInBytes, 0),
      rowsWritten: stats.reduce((total, stat) => total + stat.numWrites, 0),
      summary: clusteringSummaryOf(metadata),
    });
  }
  return out;
}
