/**
 * Rolling back writes that never completed, as Hudi's CopyOnWriteRollbackActionExecutor (and, for merge-on-read delta
 * commits, MergeOnReadRollbackActionExecutor with table version 6's rollback helper) does, under the table lock:
 * `R.rollback.requested` (a HoodieRollbackPlan naming T's files, from its markers or by listing) → `R.rollback.inflight`
 * → T's files deleted → T's timeline files deleted → `R.rollback`, the commit point (rollbackInstant tells the steps).
 * Completed instants are never rolled back: that is Hudi's restore, which this build does not support. Pending
 * table services (a clustering, and on layout 2 a compaction) are rolled back keeping their plan, as Hudi's
 * rollbackInflightInstant does.
 *
 * Why one long file: the plan, its execution and the recovery of an interrupted rollback are one protocol over the
 * same instants and file lists (Hudi's executor is one class too).
 */
import { ConflictError, HudiError, InstantCompletedError } from '../errors.js';
import type { LockLease, LockProvider } from '../lock/port.js';
import { parseLogFileName, rollbackCommandBlock, UNKNOWN_WRITE_TOKEN, writeLogFile } from '../log-format/index.js';
import { assertRollbackKeepsMetadataTable, keepMetadataTable, removeMetadataTableDeltaCommit } from '../metadata/index.js';
import type { Storage } from '../storage/port.js';
import { assertSupported, PROPERTIES_FILE } from '../table/config.js';
import { joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import { type HudiTable, listPartitions, withTableLock } from '../table/table.js';
import {
  decodeTimelineAvro,
  encodeTimelineAvro,
  type HoodieRollbackMetadata,
  type HoodieRollbackPartitionMetadata,
  type HoodieRollbackPlan,
  type HoodieRollbackRequest,
} from '../timeline/avro-files.js';
import { readClusteringPlan } from '../timeline/clustering-plan.js';
import { newWriteStat, type WriteStat } from '../timeline/commit-metadata.js';
import { HEARTBEAT_EXPIRY_MS, heartbeatPath } from '../timeline/heartbeat.js';
import {
  compareInstantTimes,
  type Instant,
  type InstantAction,
  isValidInstantTime,
  newInstantTime,
  parseInstantTime,
  type TimelineTimeZone,
} from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { createMarker, deleteMarkerDir, listMarkers, type Marker } from '../timeline/markers.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { instantPath, loadTimeline, type Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../timeline/transitions.js';
import { deleteClusteringWorkDir, deleteInstantScratch } from '../timeline/work-folder.js';
import { fileNameOf } from '../util/paths.js';

/** Actions whose failed instants this module rolls back (COW writes, clustering, insert_overwrite). */
const ROLLBACK_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'replacecommit']);
/** What `rollbackInstant` abandons: the writes, and a pending clustering under its own action (timeline layout 2). */
const ABANDONABLE_ACTIONS: ReadonlySet<InstantAction> = new Set([...ROLLBACK_ACTIONS, 'clustering']);
/** What a rollback plan may target: the above, and a compaction rolled back to its plan (rollbackInflightCompaction). */
const ROLLBACK_TARGET_ACTIONS: ReadonlySet<InstantAction> = new Set([...ABANDONABLE_ACTIONS, 'compaction']);

export { HEARTBEAT_EXPIRY_MS };

/** Version of the plan and metadata records Hudi 0.14/0.15 writes. */
const ROLLBACK_RECORD_VERSION = 1;

export interface RollbackOptions {
  /** The table lock; every timeline change of the rollback happens while holding it. */
  readonly lock: LockProvider;
  /** The clock for the new rollback instant time and heartbeat ages (tests pin it). */
  readonly now?: Date;
  /** How long to wait for the lock (default: the provider's). */
  readonly lockWaitMs?: number;
  /**
   * Roll back even when the instant's writer looks alive (fresh heartbeat, or a new instant without one). Off by
   * default: deleting the files of a running write would make it commit missing files.
   */
  readonly ignoreHeartbeat?: boolean;
  /** Heartbeat age after which a writer is presumed dead (default HEARTBEAT_EXPIRY_MS). */
  readonly heartbeatExpiryMs?: number;
}

/** How the files to delete were found. */
export type RollbackFileSource = 'markers' | 'listing' | 'pending-plan' | 'none';

export interface RollbackResult {
  /** The rollback instant written (or finished, or found already complete). */
  readonly rollbackInstantTime: string;
  readonly instantToRollback: { readonly time: string; readonly action: string };
  /**
   * `rolled-back`: a new rollback ran; `resumed`: an interrupted rollback naming the instant was finished;
   * `already-rolled-back`: a completed rollback already names it (nothing deleted but leftover markers).
   */
  readonly outcome: 'rolled-back' | 'resumed' | 'already-rolled-back';
  readonly filesFrom: RollbackFileSource;
  /** Data files deleted, relative to the table root. */
  readonly deletedFiles: readonly string[];
  /** Markers that named a file of another instant: never deleted (a marker cannot make us delete committed data). */
  readonly ignoredMarkers: readonly Marker[];
  readonly metadata: HoodieRollbackMetadata;
}

/** What happens to the rolled-back instant's own timeline files. */
type InstantFileHandling =
  /** Delete `.inflight` then `.requested`: the write is abandoned (rollbackInstant). */
  | 'delete-inflight-and-requested'
  /** Delete `.inflight` only: the clustering plan stays requested and is re-executed (rollbackInflightClustering). */
  | 'keep-requested';

/**
 * Roll back a failed (requested or inflight) commit or replacecommit: delete the data files it wrote and remove it
 * from the timeline, recording the rollback as `R.rollback`. A pending clustering replacecommit is abandoned too,
 * plan included (Hudi's explicit rollback of a clustering instant); use rollbackInflightClustering to keep the plan
 * for a retry. Idempotent: after a crash midway, running it again finishes the same rollback.
 *
 * A write that never completed (`T.commit.requested` / `T.inflight`, or a pending `T.replacecommit`) leaves data files
 * named with T that readers ignore but that take space and block the file groups. The rollback:
 * 1. picks a rollback instant R newer than every instant and writes `R.rollback.requested`: a HoodieRollbackPlan naming
 *    T and the files to delete, found through T's markers (`.hoodie/.temp/T/`), or, when the writer died before
 *    creating any, by listing every partition for the files of instant T (Hudi's listing-based rollback);
 * 2. writes `R.rollback.inflight` (0 bytes), drops T's work folder (a clustering's group results, which name the files
 *    about to go) and deletes those files;
 * 3. deletes T's timeline files, inflight first, then requested (Hudi's deleteInflightAndRequestedInstant);
 * 4. writes `R.rollback` (HoodieRollbackMetadata), the commit point, then removes T's marker folder.
 * Steps 3 and 4 are in Hudi's order (BaseRollbackActionExecutor.finishRollback): once R.rollback exists, nothing of T
 * is left on the timeline. A crash before step 4 leaves R pending with a plan naming T; rolling T back again finds that
 * plan and finishes it (Hudi re-executes pending rollbacks the same way) instead of starting a second one.
 * Merge-on-read: a log file the failed instant appended to an existing slice is not deleted; a ROLLBACK command block
 * naming the instant goes into the slice's next log version (APPEND marker under R), and the rollback's metadata
 * records both files; with a metadata table, R's deltacommit adds them to its `files` partition.
 */
export async function rollbackInstant(table: HudiTable, instantTime: string, options: RollbackOptions): Promise<RollbackResult> {
  assertRollbackable(table, instantTime);
  const { storage } = table;
  return withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      const { timeline } = current;
      const { layout } = timeline;
      await assertRollbackKeepsMetadataTable(storage, `rolling back ${instantTime}`, current.config, instantTime);
      const resumed = await resumePendingRollback(storage, lease, timeline, instantTime, 'delete-inflight-and-requested');
      if (resumed !== undefined) return resumed;

      const target = writeInstantAt(timeline, instantTime);
      if (target === undefined) {
        const done = await findCompletedRollback(storage, timeline, instantTime);
        if (done !== undefined) {
          await deleteInstantScratch(storage, instantTime);
          return alreadyRolledBack(done.time, done.metadata, instantTime);
        }
        throw notOnTimeline(storage, timeline, instantTime);
      }
      assertPending(storage, layout, target);
      if (!options.ignoreHeartbeat) await assertWriterNotAlive(storage, target, current.config.timelineTimeZone, options);

      const planned = await planRollback(storage, layout, target);
      const rollbackTime = newInstantTime(timeline.allTimes(), options.now ?? new Date(), current.config.timelineTimeZone);
      const requested = await createRequested(storage, layout, rollbackTime, 'rollback', encodeTimelineAvro('rollbackPlan', planned.plan));
      const result = await executeRollback(storage, layout, lease, requested, planned.plan, {
        handling: 'delete-inflight-and-requested',
        outcome: 'rolled-back',
        filesFrom: planned.filesFrom,
        ignoredMarkers: planned.ignoredMarkers,
      });
      // The writer is gone for good; Hudi drops its heartbeat after rolling it back too.
      await storage.delete([heartbeatPath(instantTime)]);
      return result;
    },
    { waitMs: options.lockWaitMs },
  );
}

/** Finish a rollback of `instantTime` that a crash interrupted (Hudi re-executes a pending rollback instant). */
async function resumePendingRollback(
  storage: Storage,
  lease: LockLease,
  timeline: Timeline,
  instantTime: string,
  handling: InstantFileHandling,
): Promise<RollbackResult | undefined> {
  const pending = await findPendingRollback(storage, timeline, instantTime);
  if (pending === undefined) return undefined;
  assertNotCompletedSince(storage, timeline, instantTime, pending.rollback.time);
  return executeRollback(storage, timeline.layout, lease, pending.rollback, pending.plan, {
    handling,
    outcome: 'resumed',
    filesFrom: 'pending-plan',
    ignoredMarkers: [],
  });
}

/**
 * Prepare a failed clustering for a retry of the same plan, as Hudi's rollbackInflightClustering does before it
 * re-executes a pending clustering: delete the files the failed attempt wrote and its inflight file
 * (`.replacecommit.inflight`, layout 2 `.clustering.inflight`), but KEEP the requested plan, so the plan can be run
 * again at the same instant time (Hudi 1.0.2 and 1.1.1 alike: test/interop/hudi-1x-metadata-clustering.test.ts).
 *
 * Hudi rolls back with deleteInstants=false and then reverts the instant from inflight to requested after the
 * rollback completed; we delete the inflight file just before writing `R.rollback` instead, so that a crash leaves
 * a pending rollback this function finishes, never an inflight that would need a second rollback.
 * Returns undefined when the clustering is only requested (never started): there is nothing to roll back.
 */
export async function rollbackInflightClustering(
  table: HudiTable,
  instantTime: string,
  options: Pick<RollbackOptions, 'lock' | 'now' | 'lockWaitMs'>,
): Promise<RollbackResult | undefined> {
  return rollbackKeepingPlan(table, instantTime, options, 'clustering');
}

/**
 * Roll a failed (inflight) compaction back to its plan, as Hudi 1.x's rollbackInflightCompaction
 * (rollbackInflightInstant): `R.rollback.requested` naming the compaction (through its markers, else its base files of
 * the instant), its outputs deleted, `T.compaction.inflight` deleted and `R.rollback` completed; the plan
 * (`T.compaction.requested`) stays for the next run. Undefined when the compaction is only requested. Idempotent as
 * rollbackInflightClustering is. Used on timeline layout 2; layout 1's compaction rollback writes no rollback instant.
 */
export async function rollbackInflightCompaction(
  table: HudiTable,
  instantTime: string,
  options: Pick<RollbackOptions, 'lock' | 'now' | 'lockWaitMs'>,
): Promise<RollbackResult | undefined> {
  return rollbackKeepingPlan(table, instantTime, options, 'compaction');
}

/** Hudi's rollbackInflightInstant: a rollback of a pending table service that keeps its requested plan. */
async function rollbackKeepingPlan(
  table: HudiTable,
  instantTime: string,
  options: Pick<RollbackOptions, 'lock' | 'now' | 'lockWaitMs'>,
  service: 'clustering' | 'compaction',
): Promise<RollbackResult | undefined> {
  assertRollbackable(table, instantTime);
  const { storage } = table;
  return withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      const { timeline } = current;
      const { layout } = timeline;
      await assertRollbackKeepsMetadataTable(storage, `rolling back ${service} ${instantTime}`, current.config, instantTime);
      const resumed = await resumePendingRollback(storage, lease, timeline, instantTime, 'keep-requested');
      if (resumed !== undefined) return resumed;

      const action = service === 'clustering' ? layout.clusteringAction : 'compaction';
      const target = timeline.instants.find((i) => i.time === instantTime && i.action === action);
      if (target === undefined) throw notOnTimeline(storage, timeline, instantTime, action);
      assertPending(storage, layout, target);
      if (service === 'clustering' && (await readClusteringPlan(storage, instantTime, layout)) === undefined) {
        throw new HudiError(`replacecommit ${instantTime} is not a clustering (its plan's operationType is not CLUSTER); there is no plan to retry`, {
          location: storage.uriOf(instantPath({ time: instantTime, action: 'replacecommit', state: 'REQUESTED' }, layout)),
          fix: `roll it back entirely with \`rollback <table> ${instantTime}\``,
        });
      }
      if (target.state === 'REQUESTED') return undefined;

      const planned = await planRollback(storage, layout, target);
      const rollbackTime = newInstantTime(timeline.allTimes(), options.now ?? new Date(), current.config.timelineTimeZone);
      const requested = await createRequested(storage, layout, rollbackTime, 'rollback', encodeTimelineAvro('rollbackPlan', planned.plan));
      return executeRollback(storage, layout, lease, requested, planned.plan, {
        handling: 'keep-requested',
        outcome: 'rolled-back',
        filesFrom: planned.filesFrom,
        ignoredMarkers: planned.ignoredMarkers,
      });
    },
    { waitMs: options.lockWaitMs },
  );
}

/** Pending (requested or inflight) commits and replacecommits, oldest first: the candidates for rollback. */
export function pendingWriteInstants(timeline: Timeline): Instant[] {
  return timeline.pending().filter((instant) => ROLLBACK_ACTIONS.has(instant.action));
}

/**
 * Hudi's failed-writes cleaning (BaseHoodieTableServiceClient.rollbackFailedWrites), oldest first:
 * - `LAZY` (default here): every pending commit / replacecommit whose writer is dead (heartbeat expired; without a
 *   heartbeat file, the instant itself older than the expiry);
 * - `EAGER`: every pending commit / replacecommit whatever its heartbeat — what a single writer does before it
 *   starts a new instant (nobody else can be writing);
 * optionally only those older than `olderThan`. Pending clusterings are skipped, as Hudi does: they are retried
 * (rollbackInflightClustering), not abandoned. A rollback a crash interrupted after it had already removed its
 * target from the timeline is finished too (Hudi's pending-rollback infos). Each rollback takes the lock on its own,
 * and a LAZY one re-checks the heartbeat under it.
 */
export async function rollbackFailedWrites(
  table: HudiTable,
  options: Omit<RollbackOptions, 'ignoreHeartbeat'> & { readonly olderThan?: string; readonly policy?: 'EAGER' | 'LAZY' },
): Promise<RollbackResult[]> {
  const { storage } = table;
  const timeline = await loadTimeline(storage, table.layout);
  const eager = options.policy === 'EAGER';
  const results: RollbackResult[] = [];
  const pending = pendingWriteInstants(timeline);
  const clusterings = new Set<string>();
  for (const instant of pending) {
    // Layout 2 gives a pending clustering its own action: a pending replacecommit there is an insert_overwrite.
    const mayCluster = instant.action === 'replacecommit' && timeline.layout.clusteringAction === 'replacecommit';
    if (mayCluster && (await readClusteringPlan(storage, instant.time, timeline.layout)) !== undefined) clusterings.add(instant.time);
  }
  for (const instant of pending) {
    if (options.olderThan !== undefined && compareInstantTimes(instant.time, options.olderThan) >= 0) continue;
    if (clusterings.has(instant.time)) continue;
    if (
      !eager &&
      (await findPendingRollback(storage, timeline, instant.time)) === undefined &&
      (await writerAliveReason(storage, instant.time, table.config.timelineTimeZone, options)) !== undefined
    )
      continue;
    try {
      results.push(await rollbackInstant(table, instant.time, { ...options, ignoreHeartbeat: eager }));
    } catch (error) {
      // It completed while this waited for the lock (an EAGER healer beside a live writer): not a failed write.
      if (!(error instanceof InstantCompletedError)) throw error;
    }
  }
  // Rollbacks whose target already left the timeline: only the rollback itself is left to finish.
  // A target still on the timeline is pending (handled above, or a plan a rollback keeps) or completed since.
  for (const rollback of timeline.pending().filter((instant) => instant.action === 'rollback')) {
    const path = instantPath({ time: rollback.time, action: 'rollback', state: 'REQUESTED' }, timeline.layout);
    const target = decodeTimelineAvro('rollbackPlan', await storage.get(path), storage.uriOf(path)).instantToRollback;
    if (target === null || !ABANDONABLE_ACTIONS.has(target.action as InstantAction)) continue;
    if (timeline.instants.some((i) => i.time === target.commitTime)) continue;
    results.push(await rollbackInstant(table, target.commitTime, { ...options, ignoreHeartbeat: eager }));
  }
  return results;
}

/**
 * Why the writer of a pending instant may still be running, or undefined when it is presumed dead (see
 * writerAliveReason). For the callers that decide whether to take over a pending clustering.
 */
export async function pendingWriterAlive(
  storage: Storage,
  instantTime: string,
  zone: TimelineTimeZone,
  options: Pick<RollbackOptions, 'now' | 'heartbeatExpiryMs'> = {},
): Promise<string | undefined> {
  return writerAliveReason(storage, instantTime, zone, options);
}

/**
 * The rollback (pending or completed) whose plan names `instantTime`, if any. Only rollbacks newer than the instant
 * are read: a rollback's instant time is greater than every instant on the timeline when it is planned.
 */
export async function findRollbackOf(storage: Storage, timeline: Timeline, instantTime: string): Promise<Instant | undefined> {
  const newer = timeline.instants.filter((i) => i.action === 'rollback' && compareInstantTimes(i.time, instantTime) > 0);
  for (const rollback of newer.reverse()) {
    const path = instantPath(rollback.state === 'COMPLETED' ? rollback : { ...rollback, state: 'REQUESTED' }, timeline.layout);
    const names =
      rollback.state === 'COMPLETED'
        ? decodeTimelineAvro('rollbackMetadata', await storage.get(path), storage.uriOf(path)).commitsRollback
        : [decodeTimelineAvro('rollbackPlan', await storage.get(path), storage.uriOf(path)).instantToRollback?.commitTime];
    if (names.includes(instantTime)) return rollback;
  }
  return undefined;
}

/** `.hoodie/.heartbeat/<instant>`, re-exported for callers of the rollback API. */
export { heartbeatPath };

// ---------------------------------------------------------------------------------------------------------------
// Planning

interface PlannedRollback {
  readonly plan: HoodieRollbackPlan;
  readonly filesFrom: RollbackFileSource;
  readonly ignoredMarkers: readonly Marker[];
}

/**
 * The rollback plan of a pending instant. Marker-based, as Hudi's MarkerBasedRollbackStrategy: one request per
 * CREATE/MERGE marker with fileId and latestBaseInstant empty (exactly what real 0.14/0.15 plans hold for base
 * files). Without markers, listing-based as ListingBasedRollbackStrategy: one request per partition holding its
 * files of the instant (listedFilesOfInstant). A requested-only instant wrote nothing in Hudi (its plan is empty); we still honour
 * markers found for it, but do not list the table.
 */
async function planRollback(storage: Storage, layout: TimelineLayout, target: Instant): Promise<PlannedRollback> {
  const requests: HoodieRollbackRequest[] = [];
  const ignoredMarkers: Marker[] = [];
  const markers = await listMarkers(storage, target.time);
  let filesFrom: RollbackFileSource = 'markers';

  for (const marker of markers) {
    if (marker.type === 'APPEND') {
      requests.push(await appendRequest(storage, target, marker));
      continue;
    }
    // A marker naming another instant's file (a bug, or a hand-made marker) must never delete committed data. A CREATE
    // marker of a log file is Hudi 1.x's (createLogMarkerIfNotExists): the file is named by its delta commit, deleted.
    const createdBy = parseBaseFileName(marker.fileName)?.instantTime ?? parseLogFileName(marker.fileName)?.baseInstant;
    if (createdBy !== target.time) {
      ignoredMarkers.push(marker);
      continue;
    }
    requests.push(fileRequest(marker.partitionPath, [storage.uriOf(joinPartitionPath(marker.partitionPath, marker.fileName))]));
  }

  if (markers.length === 0) {
    if (target.state === 'REQUESTED') {
      filesFrom = 'none';
    } else {
      filesFrom = 'listing';
      for (const partition of await listPartitions(storage)) {
        const files = listedFilesOfInstant(
          layout,
          target,
          partition.files.map((file) => file.name),
        ).map((name) => storage.uriOf(joinPartitionPath(partition.partitionPath, name)));
        if (files.length > 0) requests.push(fileRequest(partition.partitionPath, files));
      }
    }
  }

  return {
    plan: {
      instantToRollback: { commitTime: target.time, action: target.action },
      RollbackRequests: requests,
      version: ROLLBACK_RECORD_VERSION,
    },
    filesFrom,
    ignoredMarkers,
  };
}

/**
 * ListingBasedRollbackStrategy's path filter over a partition's file names: the base files named by the instant and,
 * where log files are named by the delta commit that wrote them (layout 2), its log files too (getDeltaCommitTime
 * FromLogPath). A compaction's rollback takes base files only (listBaseFilesToBeDeleted): log files are not its own.
 */
export function listedFilesOfInstant(layout: TimelineLayout, target: Pick<Instant, 'time' | 'action'>, names: readonly string[]): string[] {
  const logs = layout.logWrites.nameInstant === 'write-instant' && target.action !== 'compaction';
  return names.filter((name) => parseBaseFileName(name)?.instantTime === target.time || (logs && parseLogFileName(name)?.baseInstant === target.time));
}

/**
 * MarkerBasedRollbackStrategy.getRollbackRequestForAppend (0.15): the marker names the log file. One the instant
 * created for a new file group (its base instant is the instant) is deleted; one appended to an existing slice gets a
 * rollback block (logBlocksToBeDeleted: its name and size); a file that was never created needs nothing.
 */
async function appendRequest(storage: Storage, target: Instant, marker: Marker): Promise<HoodieRollbackRequest> {
  const name = parseLogFileName(marker.fileName);
  if (name === undefined) {
    throw new HudiError(`marker ${marker.fileName}.marker.APPEND names no log file (a marker of a Hudi before 0.10)`, {
      location: storage.uriOf(`${METAFOLDER}/.temp/${target.time}`),
      fix: 'roll this instant back with Hudi (Spark/hudi-cli)',
    });
  }
  const path = joinPartitionPath(marker.partitionPath, marker.fileName);
  const stored = await storage.head(path);
  if (stored !== undefined && name.baseInstant === target.time) return fileRequest(marker.partitionPath, [storage.uriOf(path)]);
  return {
    partitionPath: marker.partitionPath,
    fileId: name.fileId,
    latestBaseInstant: name.baseInstant,
    filesToBeDeleted: [],
    logBlocksToBeDeleted: stored === undefined ? {} : { [marker.fileName]: stored.size },
  };
}

function fileRequest(partitionPath: string, filesToBeDeleted: string[]): HoodieRollbackRequest {
  return { partitionPath, fileId: '', latestBaseInstant: '', filesToBeDeleted, logBlocksToBeDeleted: {} };
}

// ---------------------------------------------------------------------------------------------------------------
// Execution

interface ExecutionContext {
  readonly handling: InstantFileHandling;
  readonly outcome: RollbackResult['outcome'];
  readonly filesFrom: RollbackFileSource;
  readonly ignoredMarkers: readonly Marker[];
}

/** Run a rollback whose plan is on the timeline (`rollback` is its requested or inflight instant). */
async function executeRollback(
  storage: Storage,
  layout: TimelineLayout,
  lease: LockLease,
  rollback: Instant,
  plan: HoodieRollbackPlan,
  context: ExecutionContext,
): Promise<RollbackResult> {
  const target = plan.instantToRollback;
  if (target === null) {
    throw new HudiError(`rollback plan ${rollback.time} names no instant to roll back`, {
      location: storage.uriOf(instantPath({ time: rollback.time, action: 'rollback', state: 'REQUESTED' }, layout)),
      fix: 'the plan was not written by Hudi or this build; delete its .rollback.requested/.inflight files after checking',
    });
  }
  if (!ROLLBACK_TARGET_ACTIONS.has(target.action as InstantAction)) {
    throw new HudiError(
      `rollback plan ${rollback.time} targets a ${target.action}; this build rolls back ${[...ROLLBACK_TARGET_ACTIONS].join(', ')} instants only`,
      {
        location: storage.uriOf(instantPath({ time: rollback.time, action: 'rollback', state: 'REQUESTED' }, layout)),
        fix: 'finish this rollback with Hudi (hudi-cli)',
      },
    );
  }
  const startedMs = Date.now();
  if (rollback.state === 'REQUESTED') await transitionToInflight(storage, layout, rollback.time, 'rollback');

  const deleted = filesToDelete(storage, layout, rollback.time, target.commitTime, plan);
  await lease.assertHeld();
  // The metadata table's deltacommit of the instant goes before the rollback completes: from then on its readers
  // would apply the blocks of a rolled-back instant again (getValidInstantTimestamps). Idempotent on a resume.
  await removeMetadataTableDeltaCommit(storage, target.commitTime, rollback.time, lease);
  const appended = await appendRollbackBlocks(storage, rollback.time, target.commitTime, plan);
  if (appended.length > 0) await recordLogFilesInMetadataTable(storage, rollback.time, appended, lease);
  // Results first: a crash from here on must not leave a group "done" whose files are gone.
  await deleteClusteringWorkDir(storage, target.commitTime);
  // Missing files count as deleted: a retried rollback finds what the first attempt already removed.
  await storage.delete(deleted.map((file) => file.relativePath));

  // Inflight first, so a crash in between leaves the instant requested (still pending), never inflight-only.
  const action = target.action as InstantAction;
  await storage.delete([instantPath({ time: target.commitTime, action, state: 'INFLIGHT' }, layout)]);
  if (context.handling === 'delete-inflight-and-requested') {
    await storage.delete([instantPath({ time: target.commitTime, action, state: 'REQUESTED' }, layout)]);
  }

  const metadata = rollbackMetadata(rollback.time, Date.now() - startedMs, target, deleted, appended);
  await lease.assertHeld();
  await transitionToCompleted(storage, layout, rollback.time, 'rollback', encodeTimelineAvro('rollbackMetadata', metadata));
  await deleteInstantScratch(storage, target.commitTime);
  // The APPEND markers of the rollback's own log files (Hudi's finishRollback deletes them too).
  if (appended.length > 0) await deleteMarkerDir(storage, rollback.time);

  return {
    rollbackInstantTime: rollback.time,
    instantToRollback: { time: target.commitTime, action: target.action },
    outcome: context.outcome,
    filesFrom: context.filesFrom,
    deletedFiles: deleted.map((file) => file.relativePath),
    ignoredMarkers: context.ignoredMarkers,
    metadata,
  };
}

interface FileToDelete {
  readonly partitionPath: string;
  /** As the plan names it (an absolute URI); recorded unchanged in the metadata, as Hudi does. */
  readonly planPath: string;
  readonly relativePath: string;
}

/**
 * The plan's files as storage paths. Resolved from the request's partition and the file name rather than the
 * absolute URI, so a plan written before the table was copied elsewhere (or with s3a://) still applies.
 */
function filesToDelete(storage: Storage, layout: TimelineLayout, rollbackTime: string, instantTime: string, plan: HoodieRollbackPlan): FileToDelete[] {
  const files: FileToDelete[] = [];
  for (const request of plan.RollbackRequests ?? []) {
    for (const planPath of request.filesToBeDeleted) {
      const fileName = fileNameOf(planPath);
      if (parseBaseFileName(fileName)?.instantTime !== instantTime && parseLogFileName(fileName)?.baseInstant !== instantTime) {
        throw new HudiError(`rollback plan ${rollbackTime} would delete ${planPath}, which is not a base file of instant ${instantTime}`, {
          location: storage.uriOf(instantPath({ time: rollbackTime, action: 'rollback', state: 'REQUESTED' }, layout)),
          fix: 'this build only deletes base files of the rolled-back instant; finish this rollback with Hudi (hudi-cli) instead',
        });
      }
      files.push({ partitionPath: request.partitionPath, planPath, relativePath: joinPartitionPath(request.partitionPath, fileName) });
    }
  }
  return files;
}

/** A rollback block written into a file slice for one plan request. */
interface AppendedRollbackBlock {
  readonly partitionPath: string;
  readonly fileId: string;
  /** The new log file, relative to the table root (and as a URI, as Hudi records it), and its size. */
  readonly path: string;
  readonly uri: string;
  readonly size: number;
  /** The request's logBlocksToBeDeleted: the failed instant's log files and sizes. */
  readonly failedLogFiles: Readonly<Record<string, number>>;
}

/**
 * BaseRollbackHelper (table version 6) for requests with logBlocksToBeDeleted: a ROLLBACK command block naming the
 * instant, in the slice's next log version (its APPEND marker under the rollback instant first). A resumed rollback
 * writes another: two blocks naming the same instant read as one.
 */
async function appendRollbackBlocks(storage: Storage, rollbackTime: string, instantTime: string, plan: HoodieRollbackPlan): Promise<AppendedRollbackBlock[]> {
  const out: AppendedRollbackBlock[] = [];
  for (const request of plan.RollbackRequests ?? []) {
    if (request.filesToBeDeleted.length > 0 || Object.keys(request.logBlocksToBeDeleted ?? {}).length === 0) continue;
    const fileId = request.fileId ?? '';
    const written = await writeLogFile(storage, {
      partitionPath: request.partitionPath,
      fileId,
      baseInstant: request.latestBaseInstant ?? '',
      writeToken: UNKNOWN_WRITE_TOKEN,
      blocks: [rollbackCommandBlock({ instantTime: rollbackTime, targetInstantTime: instantTime })],
      beforeCreate: async (fileName) => {
        await createMarker(storage, rollbackTime, request.partitionPath, fileName, 'APPEND');
      },
    });
    out.push({
      partitionPath: request.partitionPath,
      fileId,
      path: written.path,
      uri: storage.uriOf(written.path),
      size: written.size,
      failedLogFiles: request.logBlocksToBeDeleted ?? {},
    });
  }
  return out;
}

/**
 * Hudi's metadata writer for a rollback (table version 6): a deltacommit at the rollback instant adding to `files` the
 * rollback's new log files and the failed instant's log files (they stay in the slice, their blocks skipped).
 */
async function recordLogFilesInMetadataTable(
  storage: Storage,
  rollbackTime: string,
  appended: readonly AppendedRollbackBlock[],
  lease: LockLease,
): Promise<void> {
  const partitionToWriteStats: Record<string, WriteStat[]> = {};
  for (const block of appended) {
    const stats = (partitionToWriteStats[block.partitionPath] ??= []);
    const files = new Map<string, number>([[fileNameOf(block.path), block.size]]);
    for (const [file, size] of Object.entries(block.failedLogFiles)) files.set(fileNameOf(file), size);
    for (const [file, size] of files) {
      stats.push(
        newWriteStat({ fileId: block.fileId, path: joinPartitionPath(block.partitionPath, file), partitionPath: block.partitionPath, fileSizeInBytes: size }),
      );
    }
  }
  await keepMetadataTable(storage, new Map()).commit(
    rollbackTime,
    { partitionToWriteStats, compacted: false, extraMetadata: {}, operationType: null },
    { lease, recordIndex: { updates: [], deletes: [] } },
  );
}

function rollbackMetadata(
  rollbackTime: string,
  timeTakenInMillis: number,
  target: { commitTime: string; action: string },
  deleted: readonly FileToDelete[],
  appended: readonly AppendedRollbackBlock[],
): HoodieRollbackMetadata {
  const partitionMetadata: Record<string, HoodieRollbackPartitionMetadata> = {};
  const partitionOf = (partitionPath: string) =>
    (partitionMetadata[partitionPath] ??= {
      partitionPath,
      successDeleteFiles: [],
      failedDeleteFiles: [],
      rollbackLogFiles: {},
      logFilesFromFailedCommit: {},
    });
  for (const file of deleted) partitionOf(file.partitionPath).successDeleteFiles.push(file.planPath);
  for (const block of appended) {
    const partition = partitionOf(block.partitionPath);
    partition.rollbackLogFiles = { ...partition.rollbackLogFiles, [block.uri]: block.size };
    partition.logFilesFromFailedCommit = { ...partition.logFilesFromFailedCommit, ...block.failedLogFiles };
  }
  return {
    startRollbackTime: rollbackTime,
    timeTakenInMillis,
    totalFilesDeleted: deleted.length,
    commitsRollback: [target.commitTime],
    partitionMetadata,
    version: ROLLBACK_RECORD_VERSION,
    instantsRollback: [{ commitTime: target.commitTime, action: target.action }],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Timeline look-ups and checks

async function findPendingRollback(
  storage: Storage,
  timeline: Timeline,
  instantTime: string,
): Promise<{ rollback: Instant; plan: HoodieRollbackPlan } | undefined> {
  for (const rollback of timeline.pending().filter((i) => i.action === 'rollback')) {
    const path = instantPath({ time: rollback.time, action: 'rollback', state: 'REQUESTED' }, timeline.layout);
    const plan = decodeTimelineAvro('rollbackPlan', await storage.get(path), storage.uriOf(path));
    if (plan.instantToRollback?.commitTime === instantTime) return { rollback, plan };
  }
  return undefined;
}

async function findCompletedRollback(
  storage: Storage,
  timeline: Timeline,
  instantTime: string,
): Promise<{ time: string; metadata: HoodieRollbackMetadata } | undefined> {
  const completed = timeline
    .completed()
    .filter((i) => i.action === 'rollback')
    .reverse();
  for (const rollback of completed) {
    const path = instantPath(rollback, timeline.layout);
    const metadata = decodeTimelineAvro('rollbackMetadata', await storage.get(path), storage.uriOf(path));
    if (metadata.commitsRollback.includes(instantTime)) return { time: rollback.time, metadata };
  }
  return undefined;
}

function alreadyRolledBack(rollbackTime: string, metadata: HoodieRollbackMetadata, instantTime: string): RollbackResult {
  const action = metadata.instantsRollback.find((i) => i.commitTime === instantTime)?.action ?? 'commit';
  return {
    rollbackInstantTime: rollbackTime,
    instantToRollback: { time: instantTime, action },
    outcome: 'already-rolled-back',
    filesFrom: 'none',
    deletedFiles: [],
    ignoredMarkers: [],
    metadata,
  };
}

/** The commit / deltacommit / replacecommit / clustering at a time; other actions there are refused by name. */
function writeInstantAt(timeline: Timeline, instantTime: string): Instant | undefined {
  const atTime = timeline.instants.filter((i) => i.time === instantTime);
  const write = atTime.find((i) => ABANDONABLE_ACTIONS.has(i.action));
  if (write === undefined && atTime.length > 0) {
    const actions = atTime.map((i) => `${i.action} (${i.state})`).join(', ');
    throw new HudiError(`instant ${instantTime} is a ${actions}; only ${[...ABANDONABLE_ACTIONS].join(', ')} instants can be rolled back`, {
      fix: atTime.some((i) => i.action === 'compaction')
        ? `a failed compaction goes back to its plan with \`compact <table> --mode rollback --instant ${instantTime}\``
        : 'pending clean and rollback instants are finished by re-running them, not rolled back',
    });
  }
  return write;
}

function assertPending(storage: Storage, layout: TimelineLayout, target: Instant): void {
  if (target.state === 'COMPLETED') {
    throw new InstantCompletedError(
      `${target.action} ${target.time} is completed; rolling back a completed instant is a restore, which this build does not support`,
      {
        location: storage.uriOf(instantPath(target, layout)),
        fix: 'only failed (requested/inflight) instants can be rolled back; to undo a completed commit use Hudi’s restore (hudi-cli `savepoint rollback`/`commit rollback`)',
      },
    );
  }
}

/** A pending rollback whose target has completed since (e.g. a retried clustering) must not delete its instant. */
function assertNotCompletedSince(storage: Storage, timeline: Timeline, instantTime: string, rollbackTime: string): void {
  const completed = timeline.instants.find((i) => i.time === instantTime && i.state === 'COMPLETED' && ROLLBACK_ACTIONS.has(i.action));
  if (completed !== undefined) {
    throw new ConflictError(`pending rollback ${rollbackTime} targets ${completed.action} ${instantTime}, which has completed since`, {
      location: storage.uriOf(instantPath({ time: rollbackTime, action: 'rollback', state: 'REQUESTED' }, timeline.layout)),
      fix: `the rollback is stale: delete ${timeline.layout.folder}/${rollbackTime}.rollback.requested and ${timeline.layout.folder}/${rollbackTime}.rollback.inflight after checking that ${instantTime} reads correctly`,
    });
  }
}

function notOnTimeline(storage: Storage, timeline: Timeline, instantTime: string, action?: InstantAction): HudiError {
  const pending = pendingWriteInstants(timeline).map((i) => `${i.time} (${i.action}, ${i.state.toLowerCase()})`);
  const what = action === undefined ? 'instant' : action;
  return new HudiError(`${what} ${instantTime} is not on the timeline`, {
    location: storage.uriOf(timeline.layout.folder),
    fix:
      pending.length === 0 ? 'there are no pending commits or replacecommits to roll back' : `pending instants that can be rolled back: ${pending.join(', ')}`,
  });
}

function assertRollbackable(table: HudiTable, instantTime: string): void {
  if (!isValidInstantTime(instantTime)) {
    throw new HudiError(`"${instantTime}" is not an instant time`, {
      fix: 'give it as yyyyMMddHHmmssSSS, e.g. 20240707001301554 (see `hudi-serverless timeline`)',
    });
  }
  // A rollback writes to the timeline: the same table versions and types as a write (version 6, COW or MOR).
  assertSupported(table.config, table.storage.uriOf(PROPERTIES_FILE), 'delta-write');
}

async function assertWriterNotAlive(storage: Storage, target: Instant, zone: TimelineTimeZone, options: RollbackOptions): Promise<void> {
  const reason = await writerAliveReason(storage, target.time, zone, options);
  if (reason !== undefined) {
    throw new ConflictError(`the writer of ${target.action} ${target.time} may still be running: ${reason}`, {
      location: storage.uriOf(heartbeatPath(target.time)),
      fix: `wait ${Math.round((options.heartbeatExpiryMs ?? HEARTBEAT_EXPIRY_MS) / 1000)} s after the writer stopped, or roll back anyway with ignoreHeartbeat if you know it died`,
    });
  }
}

/**
 * Why the instant's writer may be alive, or undefined when it is presumed dead. Hudi treats a missing heartbeat as
 * expired; we also wait out the expiry after the instant started, so a write that has not written its first
 * heartbeat yet (or a writer that writes none) is not rolled back under its feet.
 */
async function writerAliveReason(
  storage: Storage,
  instantTime: string,
  zone: TimelineTimeZone,
  options: Pick<RollbackOptions, 'now' | 'heartbeatExpiryMs'>,
): Promise<string | undefined> {
  const nowMs = (options.now ?? new Date()).getTime();
  const expiryMs = options.heartbeatExpiryMs ?? HEARTBEAT_EXPIRY_MS;
  const heartbeat = await storage.head(heartbeatPath(instantTime));
  if (heartbeat !== undefined) {
    const ageMs = nowMs - heartbeat.modifiedMs;
    return ageMs <= expiryMs ? `its heartbeat was updated ${Math.max(0, Math.round(ageMs / 1000))} s ago` : undefined;
  }
  // The instant names its start on the table's clock.
  const startedMs = parseInstantTime(instantTime, zone)?.getTime();
  if (startedMs !== undefined && nowMs - startedMs <= expiryMs) {
    return `it started ${Math.max(0, Math.round((nowMs - startedMs) / 1000))} s ago and has no heartbeat file yet`;
  }
  return undefined;
}
