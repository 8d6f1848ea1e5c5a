/**
 * The clean table service, as Hudi's BaseHoodieTableServiceClient.clean runs it: finish any pending clean from its
 * plan first (a failed clean resumes, never re-plans), then, when a clean is due, plan, schedule
 * (`T.clean.requested`), move it inflight (`T.clean.inflight`, the same plan), delete, and complete (`T.clean`).
 *
 * Crash safety: until `T.clean.requested` exists nothing was written; after it, every step is repeatable — deleting
 * a file twice is harmless and a resumed clean records files already gone as deleted — and `T.clean` is written
 * last, under the lock. Only files the plan names are ever deleted, and the plan only names files the retained
 * timeline no longer reads.
 */

import { cleanMetadataOf } from '../cleaner/clean-metadata.js';
import type { CleanConfig } from '../cleaner/config.js';
import { executeCleanerPlan, type PartitionCleanStat } from '../cleaner/execute.js';
import { ConflictError } from '../errors.js';
import type { LockLease, LockProvider } from '../lock/port.js';
import { assertMetadataTableKeepable, type MetadataTableOutcome } from '../metadata/index.js';
import { assertSupported, PROPERTIES_FILE } from '../table/config.js';
import { assertLayoutSupports, tableLayout } from '../table/layouts.js';
import type { HudiTable } from '../table/table.js';
import { encodeTimelineAvro, type HoodieCleanerPlan, type HoodieCleanMetadata } from '../timeline/avro-files.js';
import type { Instant } from '../timeline/instant.js';
import { instantPath, loadTimeline } from '../timeline/timeline.js';
import { transitionToInflight } from '../timeline/transitions.js';
import { completeClean } from './commit.js';
import { type CleanPlanning, planClean, scheduleClean } from './schedule.js';
import { readCleanerPlan } from './timeline-facts.js';

export interface CleanOptions {
  readonly config: CleanConfig;
  /** The table lock: scheduling and completing happen while holding it. */
  readonly lock: LockProvider;
  /** The clock for the clean instant and KEEP_LATEST_BY_HOURS (tests pin it). */
  readonly now?: Date;
  readonly lockWaitMs?: number;
  /** Plan and explain only: nothing is written or deleted, pending cleans are left alone. */
  readonly dryRun?: boolean;
  readonly onProgress?: (line: string) => void;
  /** See CompleteCleanOptions.beforeComplete. */
  readonly beforeComplete?: (metadata: HoodieCleanMetadata, instantTime: string, lease: LockLease) => Promise<void>;
  /** The run's Hudi properties: hoodie.metadata.* (as a Hudi writer's) and the column-stats column list. */
  readonly properties?: ReadonlyMap<string, string>;
  /** Fault injection for tests: called after each storage write of the metadata table's deltacommit. */
  readonly afterMetadataTableWrite?: (what: string) => Promise<void>;
}

export interface CompletedClean {
  readonly instantTime: string;
  readonly plan: HoodieCleanerPlan;
  /** What `T.clean` holds; the metadata-table writer turns it into isDeleted records. */
  readonly metadata: HoodieCleanMetadata;
  /** A pending clean (of an earlier, interrupted run or another writer) that this run finished. */
  readonly resumed: boolean;
  readonly failures: readonly { readonly partitionPath: string; readonly fileName: string; readonly reason: string }[];
  /** The metadata table's deltacommit for the clean (none when the table has no metadata table). */
  readonly metadataTable: MetadataTableOutcome;
}

export interface CleanResult {
  /**
   * `cleaned`: a new clean completed; `not-due`: fewer than hoodie.clean.max.commits commits since the last clean;
   * `nothing-to-clean`: due, but no file is past retention; `dry-run`: planned only.
   */
  readonly outcome: 'cleaned' | 'not-due' | 'nothing-to-clean' | 'dry-run';
  /** Pending cleans finished before planning (or, on a dry run, left pending). */
  readonly resumed: readonly CompletedClean[];
  readonly pendingLeft: readonly string[];
  readonly clean: CompletedClean | undefined;
  readonly planning: CleanPlanning | undefined;
}

export async function runClean(table: HudiTable, options: CleanOptions): Promise<CleanResult> {
  const location = table.storage.uriOf(PROPERTIES_FILE);
  assertSupported(table.config, location, 'clean');
  assertLayoutSupports(tableLayout(table.config, {}), 'clean', location);
  await assertMetadataTableKeepable(table.storage, 'a clean', options.properties ?? new Map(), table.config, 'clean');
  const progress = options.onProgress ?? (() => {});
  const pending = table.timeline.pending().filter((instant) => instant.action === 'clean');

  if (options.dryRun) {
    const planning = await planClean(table, options.config, { ...(options.now ? { now: options.now } : {}), explain: true });
    return { outcome: 'dry-run', resumed: [], pendingLeft: pending.map((instant) => instant.time), clean: undefined, planning };
  }

  const resumed: CompletedClean[] = [];
  for (const instant of pending) {
    progress(`resuming clean ${instant.time} (${instant.state.toLowerCase()}) from its plan`);
    const done = await resumePendingClean(table, instant, options);
    if (done !== undefined) resumed.push(done);
  }
  const current = resumed.length > 0 ? await table.reload() : table;

  const planning = await planClean(current, options.config, options.now ? { now: options.now } : {});
  if (!planning.due.due) return { outcome: 'not-due', resumed, pendingLeft: [], clean: undefined, planning };
  if (planning.plan === undefined) return { outcome: 'nothing-to-clean', resumed, pendingLeft: [], clean: undefined, planning };

  const started = Date.now();
  const { instantTime, plan, requestedBytes } = await scheduleClean(current, planning, {
    lock: options.lock,
    ...(options.now ? { now: options.now } : {}),
    ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
    ...(options.properties === undefined ? {} : { properties: options.properties }),
  });
  progress(`scheduled clean ${instantTime}: ${countFiles(plan)} file(s) in ${Object.keys(plan.filePathsToBeDeletedPerPartition ?? {}).length} partition(s)`);
  const clean = await executeAndComplete(current, instantTime, plan, 'REQUESTED', started, false, options, requestedBytes);
  return { outcome: 'cleaned', resumed, pendingLeft: [], clean, planning };
}

/** Finish a pending clean from its plan; undefined when another runner completed it meanwhile. */
async function resumePendingClean(table: HudiTable, instant: Instant, options: CleanOptions): Promise<CompletedClean | undefined> {
  const plan = (await readCleanerPlan(table.storage, instant.time, table.layout)) ?? emptyCleanerPlan(options.config);
  try {
    return await executeAndComplete(table, instant.time, plan, instant.state, Date.now(), true, options);
  } catch (error) {
    if (
      error instanceof ConflictError &&
      (await loadTimeline(table.storage, table.layout)).completed().some((i) => i.action === 'clean' && i.time === instant.time)
    )
      return undefined;
    throw error;
  }
}

async function executeAndComplete(
  table: HudiTable,
  instantTime: string,
  plan: HoodieCleanerPlan,
  state: Instant['state'],
  started: number,
  resumed: boolean,
  options: CleanOptions,
  /** The requested file's bytes, when this run just wrote them. */
  requestedBytes?: Uint8Array,
): Promise<CompletedClean> {
  const { storage, layout } = table;
  // The inflight file holds the same plan, as Hudi's transitionCleanRequestedToInflight: the requested file's bytes.
  if (state === 'REQUESTED' && (await storage.head(instantPath({ time: instantTime, action: 'clean', state: 'INFLIGHT' }, layout))) === undefined) {
    const bytes = requestedBytes ?? (await requestedFileBytes(storage, layout, instantTime, plan));
    await transitionToInflight(storage, layout, instantTime, 'clean', bytes);
  }
  const stats: PartitionCleanStat[] = await executeCleanerPlan(storage, plan, { concurrency: options.config.parallelism, isPartitioned: table.isPartitioned });
  const metadata = cleanMetadataOf(instantTime, plan, stats, Date.now() - started);
  const metadataTable = await completeClean(storage, layout, instantTime, metadata, {
    lock: options.lock,
    ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
    ...(options.beforeComplete === undefined ? {} : { beforeComplete: options.beforeComplete }),
    ...(options.properties === undefined ? {} : { properties: options.properties }),
    ...(options.afterMetadataTableWrite === undefined ? {} : { afterMetadataTableWrite: options.afterMetadataTableWrite }),
  });
  const failures = stats.flatMap((stat) => stat.failures.map((failure) => ({ partitionPath: stat.partitionPath, ...failure })));
  options.onProgress?.(
    `completed clean ${instantTime}: ${metadata.totalFilesDeleted} file(s) deleted${failures.length > 0 ? `, ${failures.length} could not be` : ''}`,
  );
  return { instantTime, plan, metadata, resumed, failures, metadataTable };
}

/** A pending clean's requested file (or, when it is gone, its plan encoded again). */
async function requestedFileBytes(
  storage: HudiTable['storage'],
  layout: HudiTable['layout'],
  instantTime: string,
  plan: HoodieCleanerPlan,
): Promise<Uint8Array> {
  const requested = instantPath({ time: instantTime, action: 'clean', state: 'REQUESTED' }, layout);
  return (await storage.head(requested)) === undefined ? encodeTimelineAvro('cleanerPlan', plan) : storage.get(requested);
}

function countFiles(plan: HoodieCleanerPlan): number {
  return Object.values(plan.filePathsToBeDeletedPerPartition ?? {}).reduce((sum, files) => sum + files.length, 0);
}

/** What an empty pending clean file is taken for: a plan that deletes nothing (it completes as an empty clean). */
export function emptyCleanerPlan(config: Pick<CleanConfig, 'policy'>): HoodieCleanerPlan {
  return {
    earliestInstantToRetain: null,
    lastCompletedCommitTimestamp: '',
    policy: config.policy,
    filesToBeDeletedPerPartition: {},
    version: 2,
    filePathsToBeDeletedPerPartition: {},
    partitionsToBeDeleted: [],
    extraMetadata: {},
  };
}
