/**
 * Scheduling a clustering, as Hudi's ClusteringPlanActionExecutor: decide whether enough commits happened since the
 * last clustering (only when inline or async clustering is enabled, see plan-strategy.ts hudiSchedulingThreshold),
 * plan the small file slices of the selected partitions into groups, and persist the plan as
 * `<instant>.replacecommit.requested` (Avro HoodieRequestedReplaceMetadata, operationType CLUSTER) under the lock;
 * on a Hudi 1.x table `<instant>.clustering.requested`, planned from the partitions 1.x's incremental table services
 * pick (planningScope).
 * On merge-on-read tables the slices are the latest merged ones (base file and log files) outside pending
 * compactions and clusterings, as ClusteringPlanStrategy.getFileSlicesEligibleForClustering takes them.
 */

import { NotFoundError, UnsupportedTableError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { compareLogFileNames } from '../log-format/index.js';
import { assertMetadataTableKeepable } from '../metadata/index.js';
import type { Storage } from '../storage/port.js';
import { assertSupported, PROPERTIES_FILE } from '../table/config.js';
import type { FileSlice, FileSystemView } from '../table/file-system-view.js';
import { assertLayoutSupports, detectTableLayout, tableLayout, viewFileIds } from '../table/layouts.js';
import { type HudiTable, withTableLock } from '../table/table.js';
import { type ClusteringPlan, readClusteringPlan } from '../timeline/clustering-plan.js';
import { pendingCompactionFileGroups } from '../timeline/compaction-plan.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { compareInstantTimes, newInstantTime } from '../timeline/instant.js';
import { TIMELINE_LAYOUT_1 } from '../timeline/layout.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { commitsSinceLastClustering, lastCompletedClustering } from '../timeline/queries.js';
import { readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import type { ClusteringConfig } from './config.js';
import { writeClusteringPlan } from './instant.js';
import {
  buildClusteringPlan,
  type FileSliceInput,
  filterPartitionsWithMissing,
  hudiSchedulingThreshold,
  javaHashSetOrder,
  shouldSchedule,
} from './plan-strategy.js';
import { validateSortColumnsForSchema } from './sort-columns.js';

export interface ScheduleOptions {
  readonly lock: LockProvider;
  /** Plan even if fewer than max.commits commits happened since the last clustering. */
  readonly force?: boolean;
  /** The clock: the new instant time and DAY_ROLLING's hour (tests pin it). */
  readonly now?: Date;
  readonly lockWaitMs?: number;
  /** Why nothing was planned, and other one-line notes. */
  readonly log?: (line: string) => void;
  /** The run's Hudi properties (hoodie.metadata.*: whether the commit will be able to keep the metadata table). */
  readonly properties?: ReadonlyMap<string, string>;
}

/** One planned group, small enough for a Step Functions state. */
export interface ScheduledGroup {
  readonly index: number;
  readonly partitionPath: string;
  readonly inputFiles: number;
  readonly inputBytes: number;
  readonly numOutputFileGroups: number;
}

export interface ScheduleResult {
  readonly instantTime: string;
  readonly groups: readonly ScheduledGroup[];
  /** The plan as written to the requested instant. */
  readonly plan: ClusteringPlan;
}

/**
 * Plan a clustering and persist it; undefined (and nothing written) when it is not time yet or nothing is eligible.
 * Everything from reading the timeline to writing the requested file happens under the lock, so the plan never
 * includes a file group another plan scheduled meanwhile and its instant time is greater than every instant.
 */
export async function schedule(table: HudiTable, config: ClusteringConfig, options: ScheduleOptions): Promise<ScheduleResult | undefined> {
  const { storage } = table;
  const log = options.log ?? (() => undefined);
  assertSupported(table.config, storage.uriOf(PROPERTIES_FILE), 'clustering');
  // A plan whose commit could not keep the metadata table would only stay pending.
  const properties = options.properties ?? new Map<string, string>();
  // A layout clustering cannot keep (bucket index) is refused before the lock; its file ids are checked below.
  assertLayoutSupports(await detectTableLayout(storage, table.config, { properties }), 'clustering', storage.uriOf(PROPERTIES_FILE));
  await assertMetadataTableKeepable(storage, 'a clustering', properties, table.config, 'cluster');
  // Refuse a bad configuration before taking the lock or writing anything.
  validateSortColumnsForSchema(config, (await table.requireSchema('clustering it')).schema, storage.uriOf(METAFOLDER));
  const threshold = hudiSchedulingThreshold(config);
  const dueIn = async (timeline: Timeline): Promise<boolean> => {
    if (threshold.commits === 0 || options.force === true) return true;
    const since = await commitsSinceLastClustering(storage, timeline);
    if (shouldSchedule({ completedCommitsSinceLastClustering: since.count, maxCommits: threshold.commits })) return true;
    log(
      `not scheduling: ${since.count} completed commit(s) since ${since.lastClustering === undefined ? 'the table was created' : `the last clustering ${since.lastClustering}`}, waiting for ${threshold.commits} (${threshold.setBy}); --force plans anyway`,
    );
    return false;
  };
  // A periodic trigger that finds it is not time yet should not even take the lock.
  if (!(await dueIn(table.timeline))) return undefined;

  return withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      if (!(await dueIn(current.timeline))) return undefined;

      const view = await current.fileSystemView();
      assertLayoutSupports(tableLayout(current.config, { properties, fileIds: viewFileIds(view) }), 'clustering', storage.uriOf(PROPERTIES_FILE));
      const now = options.now ?? new Date();
      const mergeOnRead = current.config.type === 'MERGE_ON_READ';
      const latestSlices = mergeOnRead ? mergedSliceInputs(storage, view) : copyOnWriteSliceInputs(storage, view);
      const partitionSet = new Set(view.partitionPaths());
      for (const slice of latestSlices) partitionSet.add(slice.partitionPath);
      const tablePartitions = [...partitionSet].sort();
      // Later than every requested and (layout 2) completion time, as Hudi's TimeGenerator hands times out under the lock.
      const times = current.timeline.instants.flatMap((instant) =>
        instant.completionTime === undefined ? [instant.time] : [instant.time, instant.completionTime],
      );
      const instantTime = newInstantTime(times, now, current.config.timelineTimeZone);
      const scope = await planningScope(current, config, tablePartitions, instantTime);
      if (scope === undefined) {
        log('not scheduling: no partition was written since the last clustering (hoodie.table.services.incremental.enabled)');
        return undefined;
      }
      const filtered = filterPartitionsWithMissing(scope.partitions, config, now.getHours());
      const partitionPaths = filtered.partitions;
      if (mergeOnRead) assertNoPendingLogCompaction(current.timeline, storage);
      const pendingFileGroupIds = mergeOnRead
        ? new Set([...view.pendingClusteringFileGroups(), ...(await pendingCompactionFileGroups(current.storage, current.timeline))])
        : view.pendingClusteringFileGroups();
      const missingPartitions = scope.lastMissing === undefined ? undefined : [...scope.lastMissing, ...filtered.missing];
      const plan = buildClusteringPlan({
        partitionPaths,
        latestSlices,
        pendingFileGroupIds,
        config,
        ...(missingPartitions === undefined ? {} : { missingPartitions }),
      });
      if (plan === undefined) {
        log(
          `not scheduling: no file slice smaller than ${config.smallFileLimitBytes} bytes outside pending clustering${mergeOnRead ? ' and compaction' : ''} plans in ${partitionPaths.length} partition(s)`,
        );
        return undefined;
      }

      await assertMetadataTableKeepable(storage, 'a clustering', properties, undefined, 'cluster');
      await lease.assertHeld();
      await writeClusteringPlan(storage, current.layout, instantTime, plan);
      return { instantTime, groups: scheduledGroups(plan, latestSlices), plan };
    },
    { waitMs: options.lockWaitMs },
  );
}

/**
 * The partitions a plan looks at, before partition.selected, the regex and the filter mode. Table version 6 (Hudi
 * 0.x): every partition. Hudi 1.x with hoodie.table.services.incremental.enabled (BaseTableServicePlanActionExecutor
 * .getPartitions): every partition until a clustering completed; after one, those that completed commits and
 * replacecommits (copy-on-write's, the last clustering aside) wrote from its requested time up to this instant,
 * plus its plan's missingSchedulePartitions — in Java HashSet order; undefined when there are none (no plan).
 * `lastMissing` is undefined when the plan keeps no list (0.x, or the key off), else what the last plan left.
 */
async function planningScope(
  table: HudiTable,
  config: ClusteringConfig,
  allPartitions: readonly string[],
  instantTime: string,
): Promise<{ partitions: string[]; lastMissing: readonly string[] | undefined } | undefined> {
  if (table.layout.version === 1 || !config.incrementalTableServices) return { partitions: [...allPartitions], lastMissing: undefined };
  const { storage, timeline, layout } = table;
  const last = await lastCompletedClustering(storage, timeline);
  if (last === undefined) return { partitions: [...allPartitions], lastMissing: [] };
  const lastMissing = (await clusteringPlanOf(table, last.instant.time))?.missingSchedulePartitions ?? [];
  // partition.selected replaces the partition list; the last plan's missing partitions are carried over (fetchMissingPartitions).
  if (config.partitionSelected.length > 0) return { partitions: [...allPartitions], lastMissing };
  const written: string[] = [];
  const actions = table.config.type === 'MERGE_ON_READ' ? ['deltacommit', 'replacecommit'] : ['commit', 'replacecommit'];
  for (const instant of timeline.completedWrites()) {
    if (instant.time === last.instant.time || !actions.includes(instant.action)) continue;
    const completion = instant.completionTime ?? instant.time;
    if (compareInstantTimes(completion, last.instant.time) < 0 || compareInstantTimes(completion, instantTime) >= 0) continue;
    const metadata = await readCommitMetadata(storage, instant, layout);
    for (const stats of Object.values(metadata.partitionToWriteStats))
      for (const stat of stats) if (stat.partitionPath !== null) written.push(stat.partitionPath);
  }
  const partitions = javaHashSetOrder([...written, ...lastMissing]);
  return partitions.length === 0 ? undefined : { partitions, lastMissing: [] };
}

/** A clustering's plan whatever its requested file is named (an upgraded table keeps 0.x's `T.replacecommit.requested`). */
async function clusteringPlanOf(table: HudiTable, instantTime: string): Promise<ClusteringPlan | undefined> {
  try {
    return await readClusteringPlan(table.storage, instantTime, table.layout);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    return readClusteringPlan(table.storage, instantTime, TIMELINE_LAYOUT_1).catch(() => undefined);
  }
}

/**
 * Hudi leaves the file groups of pending log compactions out of a plan too (getFileSlicesEligibleForClustering); this
 * build neither reads log compaction plans nor merges their compacted blocks, so it refuses to plan beside one.
 */
function assertNoPendingLogCompaction(timeline: Timeline, storage: Storage): void {
  const completed = new Set(timeline.completed().map((instant) => instant.time));
  const pending = timeline.pending().find((instant) => instant.action === 'logcompaction' && !completed.has(instant.time));
  if (pending === undefined) return;
  throw new UnsupportedTableError(`log compaction ${pending.time} is pending; clustering beside a log compaction is not supported`, {
    location: storage.uriOf(`${timeline.layout.folder}/${pending.time}.logcompaction.requested`),
    fix: 'let Hudi complete (or roll back) the log compaction, then retry',
  });
}

/** Copy-on-write: every live file group's latest base file. */
function copyOnWriteSliceInputs(storage: Storage, view: FileSystemView): FileSliceInput[] {
  return view.latestSlices().map((slice) => new CopyOnWriteSliceInput(storage, slice));
}

/**
 * A copy-on-write slice whose full base file path is made when asked for: a plan takes a few of a table's million
 * slices, and each path kept would cost a string of a hundred bytes or more for the whole planning.
 */
class CopyOnWriteSliceInput implements FileSliceInput {
  readonly fileId: string;
  readonly partitionPath: string;
  readonly baseFileSize: number;
  readonly instantTime: string;

  constructor(
    private readonly storage: Storage,
    private readonly slice: FileSlice,
  ) {
    this.fileId = slice.fileId;
    this.partitionPath = slice.partitionPath;
    this.baseFileSize = slice.baseFile.size;
    this.instantTime = slice.baseInstantTime;
  }

  get baseFilePath(): string {
    return this.storage.uriOf(this.slice.baseFile.path);
  }
}

/**
 * Merge-on-read: every live file group's latest merged slice, its log files newest first as Hudi's FileSlice holds
 * them (and so lists them in deltaFilePaths). Groups in pending compaction are left out by the caller.
 */
function mergedSliceInputs(storage: Storage, view: FileSystemView): FileSliceInput[] {
  return view.latestMergedSlices().map((slice) => ({
    fileId: slice.fileId,
    partitionPath: slice.partitionPath,
    baseFilePath: slice.baseFile === undefined ? '' : storage.uriOf(slice.baseFile.path),
    baseFileSize: slice.baseFile?.size ?? 0,
    instantTime: slice.baseInstantTime,
    logFiles: [...slice.logFiles].sort((a, b) => compareLogFileNames(b.name, a.name)).map((log) => ({ path: storage.uriOf(log.path), size: log.size })),
  }));
}

function scheduledGroups(plan: ClusteringPlan, slices: readonly FileSliceInput[]): ScheduledGroup[] {
  // Only the slices of the plan's partitions are looked up (a plan takes a few of a table's partitions).
  const plannedPartitions = new Set(plan.inputGroups.flatMap((group) => group.slices.map((slice) => slice.partitionPath)));
  const bySlice = new Map<string, FileSliceInput>();
  for (const slice of slices) if (plannedPartitions.has(slice.partitionPath)) bySlice.set(fileGroupKey(slice.partitionPath, slice.fileId), slice);
  return plan.inputGroups.map((group, index) => ({
    index,
    partitionPath: group.slices[0]?.partitionPath ?? '',
    inputFiles: group.slices.length,
    inputBytes: group.slices.reduce((total, planned) => {
      const slice = bySlice.get(fileGroupKey(planned.partitionPath, planned.fileId));
      return total + (slice?.baseFileSize ?? 0) + (slice?.logFiles ?? []).reduce((sum, log) => sum + log.size, 0);
    }, 0),
    numOutputFileGroups: group.numOutputFileGroups,
  }));
}
