/**
 * Scheduling a compaction of a merge-on-read table, as Hudi 0.15's ScheduleCompactionActionExecutor and
 * HoodieCompactionPlanGenerator do: when the trigger strategy says it is time (delta commits and/or seconds since the
 * last completed compaction), and no write is pending (a compaction must be later than every inflight write), every
 * latest file slice with log files outside pending compactions and clusterings becomes an operation; the strategy
 * (LogFileSizeBasedCompactionStrategy) keeps slices with at least the threshold of log bytes, most log bytes first,
 * until the target IO is used up; the plan is written as `<instant>.compaction.requested` under the table lock.
 * Hudi 1.x (layout 2, docs/hudi-1x-format.md): delta commits counted by completion time, only the partitions written
 * since the last compaction (incremental table services), 1.x's plan schema in `.hoodie/timeline/`.
 */
import { CLUSTERING } from '../clustering/config.js';
import { javaHashSetOrder } from '../clustering/plan-strategy.js';
import { readKey } from '../config/index.js';
import { HudiError, NotFoundError, UnsupportedTableError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { deltaCommitsSinceLastCompaction1x } from '../metadata/compaction-1x.js';
import { assertMetadataTableKeepable } from '../metadata/index.js';
import { assertSupported, PROPERTIES_FILE } from '../table/config.js';
import type { MergedFileSlice } from '../table/file-system-view.js';
import { assertLayoutSupports, tableLayout } from '../table/layouts.js';
import { type HudiTable, withTableLock } from '../table/table.js';
import {
  COMPACTION_PLAN_VERSION,
  CompactionMetric,
  type CompactionOperation,
  type CompactionPlan,
  compactionFolderOf,
  pendingCompactionFileGroups,
  readCompactionPlan,
  requestCompaction,
  sliceMetrics,
} from '../timeline/compaction-plan.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { compareInstantTimes, newInstantTime, parseInstantTime } from '../timeline/instant.js';
import { readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';
import type { CompactionConfig } from './config.js';

export interface CompactionScheduleOptions {
  readonly lock: LockProvider;
  /** Plan even when the trigger strategy says it is not time yet. */
  readonly force?: boolean;
  readonly now?: Date;
  readonly lockWaitMs?: number;
  readonly log?: (line: string) => void;
  /** The run's Hudi properties (hoodie.metadata.*). */
  readonly properties?: ReadonlyMap<string, string>;
}

export interface CompactionScheduleResult {
  readonly instantTime: string;
  readonly plan: CompactionPlan;
}

/** Refuse copy-on-write tables: they have nothing to compact. */
export function assertMergeOnRead(table: HudiTable): void {
  if (table.config.type !== 'MERGE_ON_READ') {
    throw new UnsupportedTableError(`the table is ${table.config.type}: only merge-on-read tables have log files to compact`, {
      location: table.storage.uriOf(PROPERTIES_FILE),
      fix: 'compact merge-on-read tables (hoodie.table.type=MERGE_ON_READ); copy-on-write tables are clustered instead',
    });
  }
}

/**
 * Compaction writes: a merge-on-read table this build only reads (Hudi 1.x's versions 8 and 9) is refused before
 * anything is written, naming its version (the steps that only look open the table for reading).
 */
export function assertCompactionWrites(table: HudiTable): void {
  assertSupported(table.config, table.storage.uriOf(PROPERTIES_FILE), 'write');
  assertMergeOnRead(table);
}

/**
 * Refuse what compaction cannot do: copy-on-write tables, and layouts whose log records it cannot merge (see
 * lib/table/layouts.ts). Compaction keeps every file id and Hudi writes no change data for it, so bucket-index and
 * CDC tables are compacted.
 */
export function assertCompactable(table: HudiTable): void {
  assertCompactionWrites(table);
  assertLayoutSupports(tableLayout(table.config, {}), 'compaction', table.storage.uriOf(PROPERTIES_FILE));
}

/**
 * Delta commits since the last completed compaction, and when that was (CompactionUtils.getDeltaCommitsSinceLatestCompaction).
 * Layout 2 (Hudi 1.x) counts the completed delta commits whose completion time is after the last completed commit's
 * requested time (findInstantsModifiedAfterByCompletionTime), and, after the last request, every delta commit
 * requested after the last pending compaction (else the last completed one).
 */
export function deltaCommitsSinceLastCompaction(timeline: Timeline, afterLastRequest = false): { count: number; since: string | undefined } {
  if (timeline.layout.version === 2) return deltaCommitsSinceLastCompactionByCompletion(timeline, afterLastRequest);
  const compactions = timeline.instants.filter((i) =>
    afterLastRequest ? i.action === 'compaction' || (i.action === 'commit' && i.state === 'COMPLETED') : i.action === 'commit' && i.state === 'COMPLETED',
  );
  const last = compactions.at(-1)?.time;
  const deltaCommits = timeline.instants.filter((i) => i.action === 'deltacommit' && (last === undefined || compareInstantTimes(i.time, last) > 0));
  return { count: deltaCommits.length, since: last ?? deltaCommits[0]?.time };
}

function deltaCommitsSinceLastCompactionByCompletion(timeline: Timeline, afterLastRequest: boolean): { count: number; since: string | undefined } {
  const deltaCommits = timeline.instants.filter((i) => i.action === 'deltacommit');
  const lastCompleted = timeline.instants.filter((i) => (i.action === 'commit' || i.action === 'replacecommit') && i.state === 'COMPLETED').at(-1);
  if (afterLastRequest) {
    const last = timeline.instants.filter((i) => i.action === 'compaction' && i.state !== 'COMPLETED').at(-1) ?? lastCompleted;
    const after = deltaCommits.filter((i) => last === undefined || compareInstantTimes(i.time, last.time) > 0);
    return { count: after.length, since: last?.time ?? deltaCommits[0]?.time };
  }
  if (lastCompleted === undefined) return { count: deltaCommits.filter((i) => i.state === 'COMPLETED').length, since: deltaCommits[0]?.time };
  return { count: deltaCommitsSinceLastCompaction1x(timeline).length, since: lastCompleted.time };
}

/** Whether the trigger strategy says a compaction is due, and why (ScheduleCompactionActionExecutor.needCompact). */
export function compactionDue(timeline: Timeline, config: CompactionConfig, now: Date, zone: 'UTC' | 'LOCAL'): { due: boolean; reason: string } {
  const { count, since } = deltaCommitsSinceLastCompaction(timeline, config.triggerStrategy === 'NUM_COMMITS_AFTER_LAST_REQUEST');
  const sinceDate = since === undefined ? undefined : parseInstantTime(since, zone);
  const elapsed = sinceDate === undefined ? 0 : Math.floor((now.getTime() - sinceDate.getTime()) / 1000);
  const byCount = count >= config.maxDeltaCommits;
  const byTime = since !== undefined && elapsed >= config.maxDeltaSeconds;
  const due =
    config.triggerStrategy === 'TIME_ELAPSED'
      ? byTime
      : config.triggerStrategy === 'NUM_AND_TIME'
        ? byCount && byTime
        : config.triggerStrategy === 'NUM_OR_TIME'
          ? byCount || byTime
          : byCount;
  return {
    due,
    reason: `${count} delta commit(s) and ${elapsed} s since ${since ?? 'the start'} (${config.triggerStrategy}: ${config.maxDeltaCommits} delta commits, ${config.maxDeltaSeconds} s)`,
  };
}

/** The operations the strategy keeps, in plan order (LogFileSizeBasedCompactionStrategy over BoundedIOCompactionStrategy). */
export function orderAndFilter(operations: readonly CompactionOperation[], config: CompactionConfig): CompactionOperation[] {
  return strategyPlan(operations, config).kept;
}

/**
 * The strategy's plan, and the partitions of the operations it left out, in the order Hudi 1.x's incremental table
 * services record them (missingSchedulePartitions: below the log-size threshold in input order, then past the
 * target IO in plan order, duplicates dropped).
 */
export function strategyPlan(operations: readonly CompactionOperation[], config: CompactionConfig): { kept: CompactionOperation[]; missing: string[] } {
  const logBytes = (op: CompactionOperation) => op.metrics[CompactionMetric.TOTAL_LOG_FILES_SIZE] ?? 0;
  const missing = operations.filter((op) => logBytes(op) < config.logFileSizeThreshold).map((op) => op.partitionPath);
  const sorted = operations.filter((op) => logBytes(op) >= config.logFileSizeThreshold).sort((a, b) => logBytes(b) - logBytes(a));
  const kept: CompactionOperation[] = [];
  let remaining = config.targetIoMb;
  for (const op of sorted) {
    if (remaining > 0) {
      remaining -= op.metrics[CompactionMetric.TOTAL_IO_MB] ?? 0;
      kept.push(op);
    } else missing.push(op.partitionPath);
  }
  return { kept, missing: [...new Set(missing)] };
}

/**
 * The partitions a Hudi 1.x plan looks at (BaseTableServicePlanActionExecutor.getPartitions, every compaction
 * strategy being IncrementalPartitionAwareStrategy): all of them until a compaction completed, or when
 * hoodie.table.services.incremental.enabled is off; after one, those that completed delta commits and replacecommits
 * wrote from its requested time up to this instant, plus its plan's missingSchedulePartitions, in Java HashSet order
 * (an empty list plans nothing). Undefined for every partition; `incremental` says whether the plan keeps the list.
 */
async function planningPartitions(
  table: HudiTable,
  properties: ReadonlyMap<string, string>,
  instantTime: string,
): Promise<{ partitions: Set<string> | undefined; incremental: boolean }> {
  if (table.layout.version === 1) return { partitions: undefined, incremental: false };
  if (!readKey(properties, CLUSTERING.incrementalTableServices, 'the run properties')) return { partitions: undefined, incremental: false };
  const { storage, timeline, layout } = table;
  const last = timeline.instants.filter((i) => i.action === 'commit' && i.state === 'COMPLETED').at(-1);
  if (last === undefined) return { partitions: undefined, incremental: true };
  let lastMissing: readonly string[];
  try {
    lastMissing = (await readCompactionPlan(storage, last.time, compactionFolderOf(layout))).missingSchedulePartitions ?? [];
  } catch (error) {
    // Hudi falls back to every partition when the last compaction's plan cannot be read.
    if (error instanceof NotFoundError) return { partitions: undefined, incremental: true };
    throw error;
  }
  const written: string[] = [];
  for (const instant of timeline.completedWrites()) {
    if (instant.time === last.time || (instant.action !== 'deltacommit' && instant.action !== 'replacecommit')) continue;
    const completion = instant.completionTime ?? instant.time;
    if (compareInstantTimes(completion, last.time) < 0 || compareInstantTimes(completion, instantTime) >= 0) continue;
    const metadata = await readCommitMetadata(storage, instant, layout);
    for (const stats of Object.values(metadata.partitionToWriteStats))
      for (const stat of stats) if (stat.partitionPath !== null) written.push(stat.partitionPath);
  }
  return { partitions: new Set(javaHashSetOrder([...written, ...lastMissing])), incremental: true };
}

/** One operation per latest slice with logs outside pending compactions and clusterings. */
export function compactionOperations(slices: readonly MergedFileSlice[], excluded: ReadonlySet<string>, config: CompactionConfig): CompactionOperation[] {
  return slices
    .filter((slice) => slice.logFiles.length > 0 && !excluded.has(fileGroupKey(slice.partitionPath, slice.fileId)))
    .map((slice) => ({
      baseInstantTime: slice.baseInstantTime,
      deltaFilePaths: slice.logFiles.map((log) => fileNameOf(log.path)),
      dataFilePath: slice.baseFile?.fileName ?? null,
      fileId: slice.fileId,
      partitionPath: slice.partitionPath,
      metrics: sliceMetrics(
        slice.baseFile?.size,
        slice.logFiles.map((log) => log.size),
        config.maxBaseFileSize,
      ),
      bootstrapFilePath: null,
    }));
}

/** Plan a compaction and persist it; undefined (nothing written) when it is not due or nothing has log files. */
export async function scheduleCompaction(
  table: HudiTable,
  config: CompactionConfig,
  options: CompactionScheduleOptions,
): Promise<CompactionScheduleResult | undefined> {
  assertCompactable(table);
  const log = options.log ?? (() => undefined);
  const properties = options.properties ?? new Map<string, string>();
  await assertMetadataTableKeepable(table.storage, 'a compaction', properties, table.config, 'compact');
  const due = (timeline: Timeline, now: Date): boolean => {
    if (options.force === true) return true;
    const decision = compactionDue(timeline, config, now, table.config.timelineTimeZone);
    if (!decision.due) log(`not scheduling: ${decision.reason}; --force plans anyway`);
    return decision.due;
  };
  if (!due(table.timeline, options.now ?? new Date())) return undefined;
  return withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      const now = options.now ?? new Date();
      if (!due(current.timeline, now)) return undefined;
      const pendingWrite = current.timeline.pending().find((i) => i.action === 'deltacommit' || i.action === 'commit' || i.action === 'replacecommit');
      if (pendingWrite !== undefined) {
        throw new HudiError(`write ${pendingWrite.time} (${pendingWrite.action}) is pending: a compaction must be later than every inflight write`, {
          location: current.storage.uriOf('.hoodie'),
          fix: `let it finish, or roll it back (\`rollback <table> ${pendingWrite.time}\` or Hudi's next write), then schedule again`,
        });
      }
      const view = await current.fileSystemView();
      const excluded = new Set([...(await pendingCompactionFileGroups(current.storage, current.timeline)), ...view.pendingClusteringFileGroups()]);
      const instantTime = newInstantTime(
        current.timeline.instants.flatMap((i) => (i.completionTime === undefined ? [i.time] : [i.time, i.completionTime])),
        now,
        current.config.timelineTimeZone,
      );
      const scope = await planningPartitions(current, properties, instantTime);
      if (scope.partitions?.size === 0) {
        log('not scheduling: no partition was written since the last compaction (hoodie.table.services.incremental.enabled)');
        return undefined;
      }
      const slices = view.latestMergedSlices().filter((slice) => scope.partitions === undefined || scope.partitions.has(slice.partitionPath));
      const { kept: operations, missing } = strategyPlan(compactionOperations(slices, excluded, config), config);
      if (operations.length === 0) {
        log('not scheduling: no file slice with log files outside pending compactions and clusterings');
        return undefined;
      }
      const plan: CompactionPlan = {
        operations,
        extraMetadata: {},
        version: COMPACTION_PLAN_VERSION,
        strategy: null,
        preserveHoodieMetadata: false,
        // Hudi 1.x's plan keeps the partitions left out when its table services are incremental, else null.
        ...(current.layout.version === 2 ? { missingSchedulePartitions: scope.incremental ? missing : null } : {}),
      };
      await lease.assertHeld();
      await requestCompaction(current.storage, instantTime, plan, compactionFolderOf(current.layout));
      return { instantTime, plan };
    },
    { waitMs: options.lockWaitMs },
  );
}
