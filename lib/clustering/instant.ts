/**
 * A clustering instant T on storage, the one place its pieces are read and written: the plan (`T.replacecommit
 * .requested`, layout 2's `T.clustering.requested`; lib/timeline/clustering-plan.ts), the 0-byte inflight (made when
 * the first group starts), a marker per written file under `.hoodie/.temp/T/`, our work folder
 * `.hoodie/.aux/hudi-serverless/clustering/T/` (group results, record keys, the run's claim), and the commit
 * `T.replacecommit` (layout 2: `T_<completion>.replacecommit`, Avro), whose extraMetadata CLUSTERING_SUMMARY_KEY holds
 * the run's summary so it outlives the group results. The table's layout names the files (docs/hudi-1x-format.md).
 *
 * The work folder is not beside the markers: Hudi's marker-based rollback parses every file in `.hoodie/.temp/T/` as a
 * marker (`IOType.valueOf("json")` throws), so one foreign file would make Hudi unable to roll the instant back. It
 * goes wherever the marker folder goes (commit, rollback), so a result never outlives the files it names.
 */
import { ConflictError, HudiError, NotFoundError } from '../errors.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { PROPERTIES_FILE } from '../table/config.js';
import { joinPartitionPath } from '../table/file-system-view.js';
import { assertLayoutSupports, detectTableLayout } from '../table/layouts.js';
import type { HudiTable } from '../table/table.js';
import {
  type ClusteringPlan,
  type ClusteringPlanGroup,
  type ClusteringPlanSlice,
  encodeClusteringPlan,
  readClusteringPlan,
} from '../timeline/clustering-plan.js';
import type { CommitMetadata, WriteStat } from '../timeline/commit-metadata.js';
import type { Instant } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { instantPath, loadTimeline, readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToInflight } from '../timeline/transitions.js';
import { clusteringWorkDir } from '../timeline/work-folder.js';
import { fileNameOf } from '../util/paths.js';
import type { ClusteringSummary, GroupReportInput } from './report.js';
import type { GroupOrderKind } from './sort-columns.js';

const HEAD_CONCURRENCY = 16;

// ---------------------------------------------------------------------------------------------------------------
// The instant and its plan.

/**
 * A pending clustering's file: `T.replacecommit.<state>` in layout 1, `T.clustering.<state>` in layout 2 (Hudi 1.x
 * ClusteringPlanActionExecutor names it CLUSTERING_ACTION when the table's timeline is layout 2).
 */
export function pendingClusteringPath(layout: TimelineLayout, instantTime: string, state: 'REQUESTED' | 'INFLIGHT'): string {
  return instantPath({ time: instantTime, action: layout.clusteringAction, state }, layout);
}

/**
 * The clustering instant at `instantTime` on a timeline, in any state: pending under the layout's clustering action,
 * completed as a replacecommit (in both layouts).
 */
export function findClusteringInstant(timeline: Timeline, instantTime: string): Instant | undefined {
  const { clusteringAction } = timeline.layout;
  return timeline.instants.find(
    (candidate) =>
      candidate.time === instantTime && (candidate.state === 'COMPLETED' ? candidate.action === 'replacecommit' : candidate.action === clusteringAction),
  );
}

/** Write the plan as the requested clustering file (once: a second writer of the same instant gets a ConflictError). */
export async function writeClusteringPlan(storage: Storage, layout: TimelineLayout, instantTime: string, plan: ClusteringPlan): Promise<void> {
  await createRequested(storage, layout, instantTime, layout.clusteringAction, encodeClusteringPlan(plan, layout));
}

export interface ClusteringInstant {
  /** The instant in its current state on the timeline. */
  readonly instant: Instant;
  readonly plan: ClusteringPlan;
}

/**
 * The clustering at `instantTime`: on the timeline as a replacecommit whose requested file holds a CLUSTER plan.
 * Throws NotFoundError / HudiError naming the instant file otherwise.
 */
export async function loadClusteringInstant(table: HudiTable, instantTime: string): Promise<ClusteringInstant> {
  const { storage } = table;
  const { layout } = table;
  const instant = findClusteringInstant(table.timeline, instantTime);
  if (instant === undefined) {
    const pending = table.timeline
      .pending()
      .filter((candidate) => candidate.action === layout.clusteringAction)
      .map((candidate) => candidate.time);
    throw new NotFoundError(
      storage.uriOf(pendingClusteringPath(layout, instantTime, 'REQUESTED')),
      pending.length > 0 ? `pending ${layout.clusteringAction} instants: ${pending.join(', ')}` : 'there is no pending clustering; schedule one first',
    );
  }
  const plan = await readClusteringPlan(storage, instantTime, layout);
  if (plan === undefined) {
    throw new HudiError(`replacecommit ${instantTime} is not a clustering (its operationType is not CLUSTER)`, {
      location: storage.uriOf(pendingClusteringPath(layout, instantTime, 'REQUESTED')),
      fix: 'pass the instant of a clustering plan (see `show-clustering`)',
    });
  }
  return { instant, plan };
}

/**
 * Refuse to execute or commit a plan on a layout clustering cannot keep (bucket index): a plan scheduled by an older
 * build or another tool would still give its outputs new file ids. The inputs' file ids show the bucket numbers.
 */
export async function assertPlanLayoutSupported(table: HudiTable, plan: ClusteringPlan, properties: ReadonlyMap<string, string>): Promise<void> {
  const fileIds = plan.inputGroups.flatMap((group) => group.slices.map((slice) => slice.fileId));
  const layout = await detectTableLayout(table.storage, table.config, { properties, fileIds });
  assertLayoutSupports(layout, 'clustering', table.storage.uriOf(PROPERTIES_FILE));
}

/** Refuse to work on a clustering that already completed. */
export function assertClusteringPending(storage: Storage, layout: TimelineLayout, instant: Instant): void {
  if (instant.state === 'COMPLETED') {
    throw new HudiError(`clustering ${instant.time} has already completed`, {
      location: storage.uriOf(instantPath(instant, layout)),
      fix: 'nothing to do; schedule a new clustering for more work',
    });
  }
}

/**
 * A slice's base file relative to the table root. Plans hold absolute URIs (`s3a://…`, `file:/…`) of wherever the
 * table was when planned, so the partition path and file name are what identify the file.
 */
export function sliceStoragePath(slice: ClusteringPlanSlice): string {
  const fileName = fileNameOf(slice.dataFilePath);
  return joinPartitionPath(slice.partitionPath, fileName);
}

/** The partition every slice of a group is in; Hudi's planner never mixes partitions in a group. */
export function groupPartition(group: ClusteringPlanGroup, instantTime: string, groupIndex: number): string {
  const partitions = [...new Set(group.slices.map((slice) => slice.partitionPath))];
  if (partitions.length !== 1) {
    throw new HudiError(
      `clustering ${instantTime} group ${groupIndex} spans ${partitions.length === 0 ? 'no' : partitions.length} partitions (${partitions.join(', ')})`,
      {
        fix: 'this executor clusters one partition per group, as Hudi plans them; roll the plan back and schedule it again',
      },
    );
  }
  return partitions[0]!;
}

/**
 * The 0-byte inflight clustering file exists from the first group's start (Hudi 1.x's transitionClusterRequestedToInflight
 * with no content, as 0.x's replacecommit); parallel groups may race to create it.
 */
export async function ensureInflight(storage: Storage, layout: TimelineLayout, instantTime: string): Promise<void> {
  if ((await storage.head(pendingClusteringPath(layout, instantTime, 'INFLIGHT'))) !== undefined) return;
  try {
    await transitionToInflight(storage, layout, instantTime, layout.clusteringAction);
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
  }
}

/** A straggling retry must not add files to a clustering that completed while it ran. */
export async function assertNotCompletedMeanwhile(storage: Storage, layout: TimelineLayout, instantTime: string): Promise<void> {
  const completed = await completedClusteringInstant(storage, layout, instantTime);
  if (completed !== undefined) {
    throw new ConflictError(`clustering ${instantTime} completed while this group ran; its files were not uploaded`, {
      location: storage.uriOf(instantPath(completed, layout)),
      fix: 'nothing to do: another attempt of this group already committed',
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The work folder and the group results.

/** A finished group, as stored in its result object: small and serializable. */
export interface GroupResult {
  readonly instantTime: string;
  readonly groupIndex: number;
  readonly partitionPath: string;
  readonly inputFiles: number;
  readonly inputBytes: number;
  /** From the input files' footers. */
  readonly inputRows: number;
  readonly order: GroupOrderKind;
  readonly sortColumns: readonly string[];
  /** One per output file (numInserts = numWrites, prevCommit "null"), in output order. */
  readonly writeStats: readonly WriteStat[];
  readonly durationMs: number;
  /** The group's part of the run's report (report.ts). */
  readonly report: GroupReportInput;
}

/** `.hoodie/.aux/hudi-serverless/clustering/<instant>/group-<i>.result.json` */
export function groupResultPath(instantTime: string, groupIndex: number): string {
  return `${clusteringWorkDir(instantTime)}/group-${groupIndex}.result.json`;
}

/** Store a group's result: the group is done from then on. Written after every output is uploaded. */
export async function writeGroupResult(storage: Storage, result: GroupResult): Promise<void> {
  await storage.put(groupResultPath(result.instantTime, result.groupIndex), JSON.stringify(result));
}

/** Read a group's stored result; undefined when the group has not finished (or its attempt was rolled back). */
export async function readGroupResult(storage: Storage, instantTime: string, groupIndex: number): Promise<GroupResult | undefined> {
  const path = groupResultPath(instantTime, groupIndex);
  if ((await storage.head(path)) === undefined) return undefined;
  const text = Buffer.from(await storage.get(path)).toString('utf8');
  try {
    return JSON.parse(text) as GroupResult;
  } catch (error) {
    throw new HudiError(`group result is not JSON: ${(error as Error).message}`, {
      location: storage.uriOf(path),
      fix: `run the group again (cluster --mode execute --instant ${instantTime}), which rewrites it`,
    });
  }
}

/** Every group's stored result, by group index (undefined for groups without one). */
export async function readGroupResults(storage: Storage, instantTime: string, groupCount: number): Promise<(GroupResult | undefined)[]> {
  return mapWithConcurrency(indexes(groupCount), HEAD_CONCURRENCY, (index) => readGroupResult(storage, instantTime, index));
}

/** Whether each group has a stored result, by group index (existence only: nothing is read). */
export async function groupResultsDone(storage: Storage, instantTime: string, groupCount: number): Promise<boolean[]> {
  return mapWithConcurrency(indexes(groupCount), HEAD_CONCURRENCY, async (index) => (await storage.head(groupResultPath(instantTime, index))) !== undefined);
}

/** Where a group's records went, for the metadata table's record index: keys per output file id. */
export interface GroupRecordKeys {
  readonly instantTime: string;
  readonly groupIndex: number;
  /** The records' partition path (a group never spans partitions). */
  readonly partitionPath: string;
  readonly files: Readonly<Record<string, readonly string[]>>;
}

/**
 * `.hoodie/.aux/hudi-serverless/clustering/<instant>/group-<i>.record-keys.json`: the record keys of each output file,
 * written only when the table has the metadata table's record index, whose locations the commit updates. Hudi lists
 * `.aux` only for instant files by extension (HoodieTimelineArchiver's aux clean-up), never this subfolder.
 */
export function groupRecordKeysPath(instantTime: string, groupIndex: number): string {
  return `${clusteringWorkDir(instantTime)}/group-${groupIndex}.record-keys.json`;
}

/** Store a group's record keys; written before its result, so a done group has them when it needed them. */
export async function writeGroupRecordKeys(storage: Storage, keys: GroupRecordKeys): Promise<void> {
  await storage.put(groupRecordKeysPath(keys.instantTime, keys.groupIndex), JSON.stringify(keys));
}

/** A group's stored record keys; undefined when the group did not keep them (the table had no record index then). */
export async function readGroupRecordKeys(storage: Storage, instantTime: string, groupIndex: number): Promise<GroupRecordKeys | undefined> {
  const path = groupRecordKeysPath(instantTime, groupIndex);
  let bytes: Uint8Array;
  try {
    bytes = await storage.get(path);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as GroupRecordKeys;
  } catch (error) {
    throw new HudiError(`group record keys are not JSON: ${(error as Error).message}`, {
      location: storage.uriOf(path),
      fix: `roll the attempt back (rollback keeps the plan with rollbackInflightClustering) and run its groups again`,
    });
  }
}

/**
 * Before resuming a clustering that is only requested: results found then are stale. Our own rollbacks delete them
 * with the attempt, but Hudi's rollbackInflightClustering reverts the instant to requested and deletes the files and
 * markers without knowing our work folder. Every group has to run again.
 */
export async function discardStaleGroupResults(storage: Storage, instant: Instant, groupCount: number): Promise<void> {
  if (instant.state !== 'REQUESTED') return;
  await storage.delete(indexes(groupCount).flatMap((index) => [groupResultPath(instant.time, index), groupRecordKeysPath(instant.time, index)]));
}

function indexes(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index);
}

// ---------------------------------------------------------------------------------------------------------------
// The completed instant.

/** The replacecommit's extraMetadata key holding the run's ClusteringSummary (JSON text: Hudi's values are strings). */
export const CLUSTERING_SUMMARY_KEY = 'hudi-serverless.clustering.summary';

/** The extraMetadata entry recording a run's summary. */
export function summaryMetadata(summary: ClusteringSummary): Record<string, string> {
  return { [CLUSTERING_SUMMARY_KEY]: JSON.stringify(summary) };
}

/** The summary a completed clustering recorded; undefined when it has none (Hudi's, or one not written by us). */
export function clusteringSummaryOf(metadata: CommitMetadata): ClusteringSummary | undefined {
  const text = metadata.extraMetadata[CLUSTERING_SUMMARY_KEY];
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isSummary(value) ? value : undefined;
}

function isSummary(value: unknown): value is ClusteringSummary {
  if (typeof value !== 'object' || value === null) return false;
  const { layout, sortColumns, groups, partitions, totals } = value as Record<string, unknown>;
  if (typeof layout !== 'string' || !Array.isArray(sortColumns) || typeof groups !== 'number' || typeof partitions !== 'number') return false;
  if (typeof totals !== 'object' || totals === null) return false;
  const figures = totals as Record<string, unknown>;
  return (
    ['filesBefore', 'filesAfter', 'bytesBefore', 'bytesAfter', 'rowsBefore', 'rowsAfter'].every((key) => typeof figures[key] === 'number') &&
    Array.isArray(figures['dataSkipping'])
  );
}

/**
 * The completed replacecommit of clustering `instantTime`, undefined while it is not completed. Layout 1 names it
 * `T.replacecommit` (one HEAD); layout 2's name carries the completion time, so the timeline folder is listed.
 */
export async function completedClusteringInstant(storage: Storage, layout: TimelineLayout, instantTime: string): Promise<Instant | undefined> {
  if (layout.version === 1) {
    const instant: Instant = { time: instantTime, action: 'replacecommit', state: 'COMPLETED' };
    return (await storage.head(instantPath(instant, layout))) === undefined ? undefined : instant;
  }
  return (await loadTimeline(storage, layout)).instants.find((i) => i.time === instantTime && i.action === 'replacecommit' && i.state === 'COMPLETED');
}

/** The completed clustering's commit metadata (`T.replacecommit`, or `T_C.replacecommit` in layout 2). */
export async function readCompletedClustering(storage: Storage, layout: TimelineLayout, instantTime: string): Promise<CommitMetadata> {
  const instant = (await completedClusteringInstant(storage, layout, instantTime)) ?? { time: instantTime, action: 'replacecommit', state: 'COMPLETED' };
  if (instant.completionTime === undefined && layout.version === 2) {
    throw new NotFoundError(storage.uriOf(`${layout.folder}/${instantTime}_*.replacecommit`), `clustering ${instantTime} has not completed`);
  }
  return readCommitMetadata(storage, instant, layout);
}
