/**
 * The archive table service on Hudi 1.x tables (timeline layout 2, table versions 8 and 9), as
 * TimelineArchiverV2.archiveIfRequired does it in 1.0.2 and 1.1.1 (docs/hudi-1x-history.md, "Archiving"): under
 * the table lock, pick the instants (plan-lsm.ts), write them as one level-0 file of the LSM timeline history with
 * a new manifest, delete their active files (requested and inflight first, then the completed ones oldest first),
 * then compact and clean the history.
 *
 * A crash leaves a timeline every reader reads: before the manifest an unnamed history file nobody opens, after it
 * instants both archived and active, midway through the deletes instants with only their completed file. The next
 * run first deletes the active files of every instant the history already holds (Hudi's archiver would write them
 * a second time, some without their plan), then plans from what is left.
 */
import { readCleanerPlan } from '../cleaning/timeline-facts.js';
import { HudiError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { withLock } from '../lock/port.js';
import { assertMetadataTableKeepable, keepMetadataTable } from '../metadata/index.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import { deleteMany } from '../storage/delete-many.js';
import type { Storage, StoredObject } from '../storage/port.js';
import type { HudiTable } from '../table/table.js';
import { ARCHIVED_ACTIONS, compactAndClean, type InstantToArchive, readTimelineHistory, writeLevelZero } from '../timeline/history/index.js';
import { compareInstantTimes, type Instant, type InstantAction } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { MARKERS_ROOT } from '../timeline/markers.js';
import { loadTimeline, type Timeline } from '../timeline/timeline.js';
import { deleteInstantScratch, WORK_ROOT } from '../timeline/work-folder.js';
import { fileNameOf, folderNameOf } from '../util/paths.js';
import type { ArchivalConfig } from './config.js';
import type { ArchivePlan } from './plan.js';
import { type LsmArchiveFacts, planArchiveLsm } from './plan-lsm.js';

/** What the layout-2 archiver needs from the caller (archive.ts's runArchive passes its options through). */
export interface LsmArchiveOptions {
  readonly config: ArchivalConfig;
  readonly cleanConfig: Parameters<typeof planArchiveLsm>[2];
  readonly lock: LockProvider;
  readonly lockWaitMs?: number;
  readonly dryRun?: boolean;
  /** The job's Hudi properties: hoodie.metadata.enable=false drops the metadata table first, as a Hudi writer does. */
  readonly properties?: ReadonlyMap<string, string>;
  readonly onProgress?: (line: string) => void;
}

export interface LsmArchiveResult {
  readonly outcome: 'archived' | 'nothing-to-archive' | 'dry-run';
  readonly plan: ArchivePlan;
  /** Active timeline files moved to the history (names in the timeline folder). */
  readonly archivedFiles: readonly string[];
  /** The level-0 history file written (relative to the table), if any. */
  readonly archiveFile: string | undefined;
  readonly recordsWritten: number;
  /** History files written by the compaction after the archive. */
  readonly compacted: readonly string[];
  /** Timeline files a crashed run had archived but not yet deleted, deleted now before planning. */
  readonly finishedInterrupted: readonly string[];
}

/** InstantComparatorV2.getComparableAction: the pending actions that complete as another. */
const COMPARABLE: Partial<Record<InstantAction, InstantAction>> = { compaction: 'commit', logcompaction: 'deltacommit', clustering: 'replacecommit' };
const comparable = (action: InstantAction): InstantAction => COMPARABLE[action] ?? action;
const instantKey = (time: string, action: InstantAction): string => `${time}|${comparable(action)}`;

interface InstantFile {
  readonly instant: Instant;
  readonly object: StoredObject;
}

export async function runArchiveLsm(table: HudiTable, options: LsmArchiveOptions): Promise<LsmArchiveResult> {
  const { storage, layout } = table;
  const properties = options.properties ?? new Map<string, string>();
  const folder = table.historyFolder;
  // Refused before the lock is taken and anything is written; the drop itself happens under the lock.
  await assertMetadataTableKeepable(storage, 'an archive', properties, table.config);
  return withLock(
    options.lock,
    async () => {
      if (options.dryRun) {
        const plan = planArchiveLsm(await archiveFacts(table, await loadTimeline(storage, layout)), options.config, options.cleanConfig);
        return { outcome: 'dry-run' as const, plan, archivedFiles: [], archiveFile: undefined, recordsWritten: 0, compacted: [], finishedInterrupted: [] };
      }
      await keepMetadataTable(storage, properties).prepare('an archive');
      const finishedInterrupted = await finishInterruptedArchive(storage, layout, folder, options.config);
      if (finishedInterrupted.length > 0) {
        options.onProgress?.(`finished an interrupted archive run: removed ${finishedInterrupted.length} already archived timeline file(s)`);
      }
      const plan = planArchiveLsm(await archiveFacts(table, await loadTimeline(storage, layout)), options.config, options.cleanConfig);
      if (plan.instants.length === 0) {
        return {
          outcome: 'nothing-to-archive' as const,
          plan,
          archivedFiles: [],
          archiveFile: undefined,
          recordsWritten: 0,
          compacted: [],
          finishedInterrupted,
        };
      }
      const wanted = new Set(plan.instants.map((instant) => instantKey(instant.time, instant.action)));
      const files = (await instantFiles(storage, layout)).filter((file) => wanted.has(instantKey(file.instant.time, file.instant.action)));
      await deleteLeftOverMarkers(storage, plan.instants);
      const rows = await historyRows(storage, files);
      const written = await writeLevelZero(storage, folder, rows);
      await deleteArchivedFiles(storage, files, options.config);
      const { compacted } = await compactAndClean(storage, folder, options.config.timelineCompactionBatchSize);
      const archiveFile = written === undefined ? undefined : `${folder}/${written}`;
      options.onProgress?.(
        `archived ${rows.length} instant(s) (${files.length} timeline file(s)) into ${archiveFile ?? 'the history file an earlier run wrote'}`,
      );
      return {
        outcome: 'archived' as const,
        plan,
        archivedFiles: files.map((file) => fileNameOf(file.object.path)),
        archiveFile,
        recordsWritten: written === undefined ? 0 : rows.length,
        compacted: compacted.map((name) => `${folder}/${name}`),
        finishedInterrupted,
      };
    },
    options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs },
  );
}

/** What the archive would do now, from the table as opened (no lock, nothing written). */
export async function planArchiveLsmNow(table: HudiTable, config: ArchivalConfig, cleanConfig: LsmArchiveOptions['cleanConfig']): Promise<ArchivePlan> {
  return planArchiveLsm(await archiveFacts(table, table.timeline), config, cleanConfig);
}

async function archiveFacts(table: HudiTable, timeline: Timeline): Promise<LsmArchiveFacts> {
  const lastClean = timeline
    .completed()
    .filter((instant) => instant.action === 'clean')
    .at(-1);
  return {
    timeline,
    // ClusteringUtils reads the last completed clean's plan from its requested file (CleanerUtils.getCleanerPlan).
    lastClean: lastClean === undefined ? undefined : { time: lastClean.time, plan: await readCleanerPlan(table.storage, lastClean.time, timeline.layout) },
    savepointTimes: timeline
      .completed()
      .filter((instant) => instant.action === 'savepoint')
      .map((instant) => instant.time),
    timeZone: table.config.timelineTimeZone,
    tableType: table.config.type,
  };
}

/** Every instant file of the timeline folder, each state on its own (ActiveTimelineV2 without collapsing states). */
async function instantFiles(storage: Storage, layout: TimelineLayout): Promise<InstantFile[]> {
  const { files } = await storage.listDir(layout.folder);
  const out: InstantFile[] = [];
  for (const object of files) {
    const instant = layout.parseFileName({ name: fileNameOf(object.path), modifiedMs: object.modifiedMs });
    if (instant !== undefined) out.push({ instant, object });
  }
  return out;
}

/**
 * An earlier run that stopped after committing its history file left instants both archived and active: delete
 * their active files now, in deleteArchivedActions' order, so they are neither archived twice nor planned again.
 */
async function finishInterruptedArchive(storage: Storage, layout: TimelineLayout, folder: string, config: ArchivalConfig): Promise<string[]> {
  const files = await instantFiles(storage, layout);
  const oldest = files.map((file) => file.instant.time).sort(compareInstantTimes)[0];
  if (oldest === undefined) return [];
  const history = await readTimelineHistory(storage, folder, { from: oldest });
  const archived = new Set(history.instants.map((instant) => instantKey(instant.requestedTime, instant.action)));
  const leftOver = files.filter((file) => archived.has(instantKey(file.instant.time, file.instant.action)));
  await deleteArchivedFiles(storage, leftOver, config);
  return leftOver.map((file) => fileNameOf(file.object.path));
}

/** TimelineArchiverV2.deleteAnyLeftOverMarkers, for the instants that still have a marker (or work) folder. */
async function deleteLeftOverMarkers(storage: Storage, instants: readonly Instant[]): Promise<void> {
  const [markers, work] = await Promise.all([storage.listDir(MARKERS_ROOT), storage.listDir(`${WORK_ROOT}/clustering`)]);
  const leftOver = new Set([...markers.dirs, ...work.dirs].map((dir) => folderNameOf(dir)));
  for (const instant of instants) if (leftOver.has(instant.time)) await deleteInstantScratch(storage, instant.time);
}

/** MetadataConversionUtils.createLSMTimelineInstant for each archived instant, in requested-time order. */
async function historyRows(storage: Storage, files: readonly InstantFile[]): Promise<InstantToArchive[]> {
  const byInstant = new Map<string, InstantFile[]>();
  for (const file of files) {
    const key = instantKey(file.instant.time, file.instant.action);
    byInstant.set(key, [...(byInstant.get(key) ?? []), file]);
  }
  const bytesOf = async (file: InstantFile | undefined): Promise<Uint8Array | null> => {
    if (file === undefined) return null;
    const bytes = await storage.get(file.object.path);
    return bytes.length === 0 ? null : bytes;
  };
  const rows = await mapWithConcurrency([...byInstant.values()], 16, async (group): Promise<InstantToArchive> => {
    // ActiveAction.fromInstants: the completed file with the latest completion time stands for the instant.
    const completed = group
      .filter((file) => file.instant.state === 'COMPLETED')
      .sort((a, b) => compareInstantTimes(b.instant.completionTime ?? '', a.instant.completionTime ?? ''))[0];
    const action = ARCHIVED_ACTIONS.find((known) => known === completed?.instant.action);
    if (completed === undefined || completed.instant.completionTime === undefined || action === undefined) {
      throw new HudiError(
        `instant ${group[0]!.instant.time} (${group[0]!.instant.action}) has no completed file of an action the history holds (${ARCHIVED_ACTIONS.join(', ')})`,
        {
          location: storage.uriOf(group[0]!.object.path),
          fix: 'another process changed the timeline while it was archived; run the archive again',
        },
      );
    }
    const requested = group.find((file) => file.instant.state === 'REQUESTED');
    const inflight = group.find((file) => file.instant.state === 'INFLIGHT');
    const pendingAction = (requested ?? inflight)?.instant.action;
    let plan: Uint8Array | null = null;
    if (pendingAction === 'clean') plan = await bytesOf(requested ?? inflight);
    else if (pendingAction === 'replacecommit' || pendingAction === 'clustering') plan = (await bytesOf(inflight)) ?? (await bytesOf(requested));
    else if (pendingAction === 'compaction' || pendingAction === 'logcompaction') plan = await bytesOf(requested);
    return {
      requestedTime: completed.instant.time,
      completionTime: completed.instant.completionTime,
      action,
      metadata: await bytesOf(completed),
      plan,
    };
  });
  return rows.sort((a, b) => compareInstantTimes(a.requestedTime, b.requestedTime));
}

/**
 * deleteArchivedActions: requested and inflight files first (in parallel), then the completed ones one at a time
 * in requested-time order, so that no reader finds a pending-looking instant or a hole in the completed timeline.
 */
async function deleteArchivedFiles(storage: Storage, files: readonly InstantFile[], config: ArchivalConfig): Promise<void> {
  const pending = files.filter((file) => file.instant.state !== 'COMPLETED').map((file) => file.object.path);
  const failed = (await deleteMany(storage, pending, { concurrency: config.deleteParallelism })).failed;
  if (failed.length > 0) {
    throw new HudiError(`could not delete ${failed.length} archived instant file(s): ${failed[0]!.reason}`, {
      location: storage.uriOf(failed[0]!.path),
      fix: 'run the archive again once the storage accepts deletes: it finishes this run first',
    });
  }
  const completed = files.filter((file) => file.instant.state === 'COMPLETED').sort((a, b) => compareInstantTimes(a.instant.time, b.instant.time));
  for (const file of completed) await storage.delete([file.object.path]);
}
