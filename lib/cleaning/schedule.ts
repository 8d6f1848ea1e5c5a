/**
 * Planning a clean on a table (the shell around plan.ts) and scheduling it: `T.clean.requested`, an Avro
 * HoodieCleanerPlan, as CleanPlanActionExecutor writes it.
 *
 * Planning reads the timeline facts and lists partitions without the table lock (for a table with thousands of
 * partitions it takes long); scheduling takes the lock only to check that nothing the plan relied on changed (no
 * other clean appeared, the savepoints are the same) and to write the requested file under a fresh instant time.
 */

import type { CleanConfig } from '../cleaner/config.js';
import {
  assembleCleanerPlan,
  type CleanScopeSummary,
  cleanIsDue,
  commitsAndCompactionTimeline,
  completedCommits,
  earliestCommitToRetain,
  type PartitionCleanPlan,
  type PartitionContext,
  type PartitionListing,
  type PartitionScope,
  partitionScope,
  planPartition,
  type RetentionPoint,
} from '../cleaner/plan.js';
import { ConflictError, HudiError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { withLock } from '../lock/port.js';
import { assertMetadataTableKeepable } from '../metadata/index.js';
import { settleAll } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { logFileSlices } from '../table/file-group.js';
import type { HudiTable } from '../table/table.js';
import { encodeTimelineAvro, type HoodieCleanerPlan } from '../timeline/avro-files.js';
import { CompletionTimes } from '../timeline/completion-times.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { compareInstantTimes, newInstantTime } from '../timeline/instant.js';
import { instantPath, loadTimeline, Timeline } from '../timeline/timeline.js';
import { createRequested } from '../timeline/transitions.js';
import { forEachListedPartition, walkPartitions } from './listing.js';
import {
  readLastClean,
  readPendingClusteringGroups,
  readPendingCompactionOperations,
  readReplacedFileGroups,
  readSavepoints,
  readTouchedPartitions,
  type Savepoint,
} from './timeline-facts.js';

export interface CleanPlanning {
  /** Whether hoodie.clean.max.commits commits completed since the last clean. */
  readonly due: { readonly due: boolean; readonly commitsSinceLastClean: number; readonly reason: string };
  readonly retention: RetentionPoint;
  readonly scope: PartitionScope;
  readonly summary: CleanScopeSummary;
  /** Planned partitions: all of them with `explain`, else only those with something to delete or to remove. */
  readonly partitions: readonly PartitionCleanPlan[];
  readonly partitionsListed: number;
  /** Undefined when nothing would be deleted. */
  readonly plan: HoodieCleanerPlan | undefined;
  /** What the plan relied on, checked again under the lock when scheduling. */
  readonly basis: { readonly lastCleanTime: string | undefined; readonly savepointTimes: readonly string[] };
}

export interface PlanCleanOptions {
  /** The clock for KEEP_LATEST_BY_HOURS (tests pin it). */
  readonly now?: Date;
  /** Keep every file's decision (for --dry-run), not only the deletions. */
  readonly explain?: boolean;
  /** The timeline to plan against (default: the table's). */
  readonly timeline?: Timeline;
}

/**
 * The first, small step of planning (and the only one that reads the timeline): whether a clean is due, the
 * earliest commit to retain, which partitions to look at, and the context each partition is planned with. A
 * serverless run hands `context` (sliced per worker with sliceContext) and a share of the partitions to each worker.
 */
export interface CleanPreparation {
  readonly due: CleanPlanning['due'];
  readonly retention: RetentionPoint;
  readonly scope: PartitionScope;
  readonly summary: CleanScopeSummary;
  readonly basis: CleanPlanning['basis'];
  /** Undefined when there is nothing to look at (scope `none`). */
  readonly context: PartitionContext | undefined;
  /** Incremental: the partitions to plan. Full: undefined (every partition of the table). */
  readonly partitionPaths: readonly string[] | undefined;
}

export async function prepareClean(table: HudiTable, config: CleanConfig, options: Pick<PlanCleanOptions, 'now' | 'timeline'> = {}): Promise<CleanPreparation> {
  const { storage } = table;
  const timeline = options.timeline ?? table.timeline;
  const now = options.now ?? new Date();
  const [lastClean, savepoints] = await settleAll([readLastClean(storage, timeline), readSavepoints(storage, timeline)]);
  const due = cleanIsDue(timeline, lastClean, config);
  const retention = earliestCommitToRetain(commitsAndCompactionTimeline(timeline), config, now, table.config.timelineTimeZone);
  const savepointTimes = savepoints.map((savepoint) => savepoint.time);
  const scope = partitionScope({ timeline, retention, lastClean, savepointTimes, isPartitioned: table.isPartitioned }, config);
  const completed = completedCommits(timeline);
  const summary: CleanScopeSummary = {
    policy: config.policy,
    earliestCommitToRetain: retention.instant,
    lastCompletedCommitTimestamp: completed.at(-1)?.time ?? '',
    savepointTimes,
    isPartitioned: table.isPartitioned,
  };
  const basis = { lastCleanTime: lastClean?.instant.time, savepointTimes };
  if (scope.kind === 'none') return { due, retention, scope, summary, basis, context: undefined, partitionPaths: undefined };
  const [replacedFileGroups, pendingClustering, pendingCompaction] = await settleAll([
    readReplacedFileGroups(storage, timeline),
    readPendingClusteringGroups(storage, timeline),
    table.config.type === 'MERGE_ON_READ' ? readPendingCompactionOperations(storage, timeline) : Promise.resolve({}),
  ]);
  const context: PartitionContext = {
    policy: config.policy,
    fileVersionsRetained: config.fileVersionsRetained,
    earliestCommitToRetain: retention.instant?.time,
    retentionReached: completed.length > (config.policy === 'KEEP_LATEST_COMMITS' ? config.commitsRetained : 0),
    timeline: timeline.instants,
    replacedFileGroups,
    pendingClustering,
    savepointedFiles: savepointedFilesOf(savepoints),
    pendingCompaction,
    ...(table.layout.fileSlicing === 'completion-time' ? { completionTimeSlicing: { archived: await archivedCompletionTimes(table) } } : {}),
    isPartitioned: table.isPartitioned,
  };
  const partitionPaths = scope.kind === 'incremental' ? await readTouchedPartitions(storage, scope.instants, timeline.layout) : undefined;
  return { due, retention, scope, summary, basis, context, partitionPaths };
}

/**
 * The per-partition step: list and plan `partitionPaths` (undefined: walk the whole table), `concurrency` listings
 * at a time. Keeps only partitions with something to do unless `explain`. Returns how many folders were listed.
 */
export async function planPartitions(
  storage: Storage,
  context: PartitionContext,
  partitionPaths: readonly string[] | undefined,
  options: { concurrency: number; explain?: boolean },
): Promise<{ partitions: PartitionCleanPlan[]; listed: number }> {
  const partitions: PartitionCleanPlan[] = [];
  const timeline = new Timeline(context.timeline);
  const logSlicesOf = completionLogSlices(context, timeline);
  const visit = (listing: PartitionListing) => {
    const planned = planPartition(listing, context, {
      timeline,
      ...(options.explain ? { explain: true } : {}),
      ...(logSlicesOf === undefined ? {} : { logSlices: logSlicesOf(listing) }),
    });
    if (options.explain || planned.deletes.length > 0 || planned.deletePartition) partitions.push(planned);
  };
  let listed: number;
  if (partitionPaths !== undefined) {
    await forEachListedPartition(storage, partitionPaths, options.concurrency, visit);
    listed = partitionPaths.length;
  } else {
    listed = await walkPartitions(storage, options.concurrency, visit);
  }
  partitions.sort((a, b) => (a.partitionPath < b.partitionPath ? -1 : a.partitionPath > b.partitionPath ? 1 : 0));
  return { partitions, listed };
}

/** Timeline layout 2: each listed log file's slice by completion time, as Hudi 1.x's file groups cut them. */
function completionLogSlices(context: PartitionContext, timeline: Timeline): ((listing: PartitionListing) => ReadonlyMap<string, string>) | undefined {
  const slicing = context.completionTimeSlicing;
  if (slicing === undefined) return undefined;
  const archived = new Map(Object.entries(slicing.archived));
  const completionTimes = new CompletionTimes(timeline, { completionTime: (time) => archived.get(time) }, 'the LSM history');
  return (listing) => {
    const operations = Object.entries(context.pendingCompaction?.[listing.partitionPath] ?? {});
    const pendingCompactions = new Map(operations.map(([fileId, operation]) => [fileGroupKey(listing.partitionPath, fileId), operation.instant]));
    return logFileSlices(listing, { timeline, completionTimes, queryInstant: undefined, replacedFileGroups: new Set(), pendingCompactions });
  };
}

/**
 * Whether a clean run would find anything to look at now, from the timeline alone (no partition is listed): a
 * pending clean to finish, or a clean due (hoodie.clean.max.commits) with an earliest commit to retain and, in
 * incremental mode, commits since the last clean's to look at. The serverless trigger asks it before starting a run
 * that only cleans and archives; the run itself plans as prepareClean does.
 */
export async function cleanOutlook(
  table: HudiTable,
  config: CleanConfig,
  now: Date = new Date(),
): Promise<{
  readonly needed: boolean;
  readonly reason: string;
  readonly facts?: {
    readonly earliestCommitToRetain: string | undefined;
    readonly lastCleanTime: string | undefined;
    readonly savepointTimes: readonly string[];
  };
}> {
  const { storage, timeline } = table;
  const pending = timeline.pending().find((instant) => instant.action === 'clean');
  if (pending !== undefined) return { needed: true, reason: `clean ${pending.time} is pending: a run finishes it from its plan` };
  const lastClean = await readLastClean(storage, timeline);
  const due = cleanIsDue(timeline, lastClean, config);
  if (!due.due) return { needed: false, reason: `no clean is due (${due.reason})` };
  const retention = earliestCommitToRetain(commitsAndCompactionTimeline(timeline), config, now, table.config.timelineTimeZone);
  const savepointTimes = timeline
    .completed()
    .filter((instant) => instant.action === 'savepoint')
    .map((instant) => instant.time);
  const scope = partitionScope({ timeline, retention, lastClean, savepointTimes, isPartitioned: table.isPartitioned }, config);
  if (scope.kind === 'none') return { needed: false, reason: `nothing to clean yet (${scope.reason})` };
  if (scope.kind === 'incremental' && scope.instants.length === 0) return { needed: false, reason: `nothing new to clean (${scope.reason})` };
  return {
    needed: true,
    reason: `a clean is due (${due.reason}); ${scope.kind} scope: ${scope.reason}`,
    facts: { earliestCommitToRetain: retention.instant?.time, lastCleanTime: lastClean?.instant.time, savepointTimes },
  };
}

/** Plan a clean of the table's current state in one process (prepare, plan every partition, assemble); writes nothing. */
export async function planClean(table: HudiTable, config: CleanConfig, options: PlanCleanOptions = {}): Promise<CleanPlanning> {
  const preparation = await prepareClean(table, config, options);
  const { due, retention, scope, summary, basis, context } = preparation;
  if (context === undefined) return { due, retention, scope, summary, partitions: [], partitionsListed: 0, plan: undefined, basis };
  const { partitions, listed } = await planPartitions(table.storage, context, preparation.partitionPaths, {
    concurrency: config.parallelism,
    ...(options.explain ? { explain: true } : {}),
  });
  const plan = assembleCleanerPlan(summary, partitions, (path) => table.storage.uriOf(path));
  return { due, retention, scope, summary, partitions, partitionsListed: listed, plan, basis };
}

/** The archived instants' completion times, by requested time (layout 2's LSM history). */
async function archivedCompletionTimes(table: HudiTable): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const instant of (await table.archivedHistory()).instants) if (instant.completionTime !== undefined) out[instant.time] = instant.completionTime;
  return out;
}

function savepointedFilesOf(savepoints: readonly Savepoint[]): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const savepoint of savepoints) {
    for (const [partition, files] of Object.entries(savepoint.files)) {
      const names = (out[partition] ??= {});
      for (const file of files) names[file] ??= savepoint.time;
    }
  }
  return out;
}

export interface ScheduleCleanOptions {
  readonly lock: LockProvider;
  readonly now?: Date;
  readonly lockWaitMs?: number;
  /** The run's Hudi properties (hoodie.metadata.*: whether the clean will be able to keep the metadata table). */
  readonly properties?: ReadonlyMap<string, string>;
}

/**
 * Write the plan as `T.clean.requested` under the lock, T newer than every instant. Refuses (ConflictError) when
 * another clean was scheduled or completed since planning, or the savepoints changed: plan again then.
 */
export async function scheduleClean(
  table: HudiTable,
  planning: Pick<CleanPlanning, 'plan' | 'basis'>,
  options: ScheduleCleanOptions,
): Promise<{ instantTime: string; plan: HoodieCleanerPlan; requestedBytes: Uint8Array }> {
  const plan = planning.plan;
  if (plan === undefined)
    throw new HudiError('there is nothing to clean: the plan deletes no file', { fix: 'check `clean --dry-run` for why each file is kept' });
  const { storage } = table;
  return withLock(
    options.lock,
    async () => {
      await assertMetadataTableKeepable(storage, 'a clean', options.properties ?? new Map(), undefined, 'clean');
      const timeline = await loadTimeline(storage, table.layout);
      const cleans = timeline.instants.filter((instant) => instant.action === 'clean');
      const newer = cleans.filter(
        (instant) => planning.basis.lastCleanTime === undefined || compareInstantTimes(instant.time, planning.basis.lastCleanTime) > 0,
      );
      const pending = cleans.filter((instant) => instant.state !== 'COMPLETED');
      const raced = [...newer, ...pending][0];
      if (raced !== undefined) {
        throw new ConflictError(`another clean (${raced.time}, ${raced.state.toLowerCase()}) appeared while this one was planned`, {
          location: storage.uriOf(instantPath(raced, table.layout)),
          fix: 'run the clean again: it finishes a pending clean first, then plans from the new state',
        });
      }
      const savepoints = timeline
        .completed()
        .filter((instant) => instant.action === 'savepoint')
        .map((instant) => instant.time);
      if (savepoints.join(',') !== planning.basis.savepointTimes.join(',')) {
        throw new ConflictError(
          `the savepoints changed while the clean was planned (${planning.basis.savepointTimes.join(', ') || 'none'} → ${savepoints.join(', ') || 'none'})`,
          {
            location: storage.uriOf('.hoodie'),
            fix: 'run the clean again so it plans around the current savepoints',
          },
        );
      }
      const instantTime = newInstantTime(timeline.allTimes(), options.now ?? new Date(), table.config.timelineTimeZone);
      const requestedBytes = encodeTimelineAvro('cleanerPlan', plan);
      await createRequested(storage, table.layout, instantTime, 'clean', requestedBytes);
      return { instantTime, plan, requestedBytes };
    },
    options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs },
  );
}
