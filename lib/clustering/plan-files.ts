/**
 * Where a clustering instant's pieces live on storage, and reading its plan with the checks every step needs.
 * - `.hoodie/T.replacecommit.requested`: the plan (Avro), written by schedule;
 * - `.hoodie/T.replacecommit.inflight`: 0 bytes, created when the first group starts;
 * - `.hoodie/.temp/T/<partition>/<file>.marker.CREATE`: one marker per written file (markers.ts);
 * - `.hoodie/.aux/hudi-serverless/clustering/T/group-<i>.result.json`: a finished group's write stats and report
 *   input (work-folder.ts). Not beside the markers, which Hudi's rollback parses one and all; a rollback or a commit
 *   removes this folder with the marker folder, so a result never outlives the files it names.
 * - `.hoodie/T.replacecommit`: the commit (JSON), written last.
 */
import { HudiError, NotFoundError } from '../errors.js';
import { joinPartitionPath } from '../fs-view.js';
import type { Storage } from '../storage/port.js';
import type { HudiTable } from '../table.js';
import type { Instant } from '../timeline/instant.js';
import { readClusteringPlan, type ClusteringPlanGroup, type ClusteringPlanSlice, type StoredClusteringPlan } from '../timeline/pending-clustering.js';
import { instantPath } from '../timeline/timeline.js';
import { clusteringWorkDir } from '../timeline/work-folder.js';
import { SORT_COLUMNS_KEY } from './plan-strategy.js';

/** The sort columns a plan names (its strategy params decide, as in Hudi's executor). */
export function planSortColumns(plan: StoredClusteringPlan): string[] {
  return (plan.strategyParams[SORT_COLUMNS_KEY] ?? '').split(',').map((column) => column.trim()).filter((column) => column !== '');
}

/**
 * A slice's base file relative to the table root. Plans hold absolute URIs (`s3a://…`, `file:/…`) of wherever the
 * table was when planned, so the partition path and file name are what identify the file.
 */
export function sliceStoragePath(slice: ClusteringPlanSlice): string {
  const fileName = slice.dataFilePath.slice(slice.dataFilePath.lastIndexOf('/') + 1);
  return joinPartitionPath(slice.partitionPath, fileName);
}

/** The partition every slice of a group is in; Hudi's planner never mixes partitions in a group. */
export function groupPartition(group: ClusteringPlanGroup, instantTime: string, groupIndex: number): string {
  const partitions = [...new Set(group.slices.map((slice) => slice.partitionPath))];
  if (partitions.length !== 1) {
    throw new HudiError(`clustering ${instantTime} group ${groupIndex} spans ${partitions.length === 0 ? 'no' : partitions.length} partitions (${partitions.join(', ')})`, {
      fix: 'this executor clusters one partition per group, as Hudi plans them; roll the plan back and schedule it again',
    });
  }
  return partitions[0]!;
}

/** `.hoodie/.aux/hudi-serverless/clustering/<instant>/group-<i>.result.json` */
export function groupResultPath(instantTime: string, groupIndex: number): string {
  return `${clusteringWorkDir(instantTime)}/group-${groupIndex}.result.json`;
}

export interface ClusteringInstant {
  /** The instant in its current state on the timeline. */
  readonly instant: Instant;
  readonly plan: StoredClusteringPlan;
}

/**
 * The clustering at `instantTime`: on the timeline as a replacecommit whose requested file holds a CLUSTER plan.
 * Throws NotFoundError / HudiError naming the instant file otherwise.
 */
export async function loadClusteringInstant(table: HudiTable, instantTime: string): Promise<ClusteringInstant> {
  const { storage } = table;
  const instant = table.timeline.instants.find((candidate) => candidate.time === instantTime && candidate.action === 'replacecommit');
  const requested = instantPath({ time: instantTime, action: 'replacecommit', state: 'REQUESTED' });
  if (instant === undefined) {
    const pending = table.timeline.pending().filter((candidate) => candidate.action === 'replacecommit').map((candidate) => candidate.time);
    throw new NotFoundError(storage.uriOf(requested), pending.length > 0 ? `pending replacecommits: ${pending.join(', ')}` : 'there is no pending clustering; schedule one first');
  }
  const plan = await readClusteringPlan(storage, instantTime);
  if (plan === undefined) {
    throw new HudiError(`replacecommit ${instantTime} is not a clustering (its operationType is not CLUSTER)`, {
      location: storage.uriOf(requested),
      fix: 'pass the instant of a clustering plan (see `show-clustering`)',
    });
  }
  return { instant, plan };
}

/** Refuse to work on a clustering that already completed. */
export function assertClusteringPending(storage: Storage, instant: Instant): void {
  if (instant.state === 'COMPLETED') {
    throw new HudiError(`clustering ${instant.time} has already completed`, {
      location: storage.uriOf(instantPath(instant)),
      fix: 'nothing to do; schedule a new clustering for more work',
    });
  }
}
