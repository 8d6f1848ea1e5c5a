/**
 * Moving planned instants of a layout-2 timeline into its LSM history, as TimelineArchiverV2.archiveIfRequired does
 * after getInstantsToArchive (1.0.2 and 1.1.1; docs/hudi-1x-history.md, "Archiving"), for any table: the data
 * table's archive service (lib/archival) and the metadata table's own archival (lib/metadata) both use it. Their
 * leftover markers go, every state file is read into one level-0 history file with a new manifest, their active
 * files are deleted (requested and inflight first, then the completed ones oldest first), then the history is
 * compacted and cleaned. A run stopped after its manifest leaves instants both archived and active:
 * finishInterruptedArchive deletes those active files before the next plan.
 */
import { HudiError } from '../errors.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import { deleteMany } from '../storage/delete-many.js';
import type { Storage, StoredObject } from '../storage/port.js';
import { ARCHIVED_ACTIONS, compactAndClean, type InstantToArchive, readTimelineHistory, writeLevelZero } from '../timeline/history/index.js';
import { compareInstantTimes, type Instant, type InstantAction } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { MARKERS_ROOT } from '../timeline/markers.js';
import { deleteInstantScratch, WORK_ROOT } from '../timeline/work-folder.js';
import { fileNameOf, folderNameOf } from '../util/paths.js';

/** What the move needs of the archiver's settings. */
export interface HistoryMoveSettings {
  /** hoodie.archive.delete.parallelism. */
  readonly deleteParallelism: number;
  /** hoodie.timeline.compaction.batch.size. */
  readonly timelineCompactionBatchSize: number;
}

export interface HistoryMoveResult {
  /** Active timeline files moved to the history (names in the timeline folder). */
  readonly archivedFiles: readonly string[];
  /** The level-0 history file written (relative to the storage root), undefined when an earlier run wrote it. */
  readonly archiveFile: string | undefined;
  readonly recordsWritten: number;
  /** History files written by the compaction after the archive (relative to the storage root). */
  readonly compacted: readonly string[];
}

/** InstantComparatorV2.getComparableAction: the pending actions that complete as another. */
const COMPARABLE: Partial<Record<InstantAction, InstantAction>> = { compaction: 'commit', logcompaction: 'deltacommit', clustering: 'replacecommit' };
const comparable = (action: InstantAction): InstantAction => COMPARABLE[action] ?? action;
const instantKey = (time: string, action: InstantAction): string => `${time}|${comparable(action)}`;

interface InstantFile {
  readonly instant: Instant;
  readonly object: StoredObject;
}

/**
 * Archive `instants` (a plan's, at least one) of the timeline in `layout` into the history in `folder`: markers,
 * the level-0 file and its manifest, the active files' deletes, then the history's compaction and cleaning.
 */
export async function moveToHistory(
  storage: Storage,
  layout: TimelineLayout,
  folder: string,
  instants: readonly Instant[],
  settings: HistoryMoveSettings,
): Promise<HistoryMoveResult> {
  const wanted = new Set(instants.map((instant) => instantKey(instant.time, instant.action)));
  const files = (await instantFiles(storage, layout)).filter((file) => wanted.has(instantKey(file.instant.time, file.instant.action)));
  await deleteLeftOverMarkers(storage, instants);
  const rows = await historyRows(storage, files);
  const written = await writeLevelZero(storage, folder, rows);
  await deleteArchivedFiles(storage, files, settings);
  const { compacted } = await compactAndClean(storage, folder, settings.timelineCompactionBatchSize);
  return {
    archivedFiles: files.map((file) => fileNameOf(file.object.path)),
    archiveFile: written === undefined ? undefined : `${folder}/${written}`,
    recordsWritten: written === undefined ? 0 : rows.length,
    compacted: compacted.map((name) => `${folder}/${name}`),
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
export async function finishInterruptedArchive(storage: Storage, layout: TimelineLayout, folder: string, settings: HistoryMoveSettings): Promise<string[]> {
  const files = await instantFiles(storage, layout);
  const oldest = files.map((file) => file.instant.time).sort(compareInstantTimes)[0];
  if (oldest === undefined) return [];
  const history = await readTimelineHistory(storage, folder, { from: oldest });
  const archived = new Set(history.instants.map((instant) => instantKey(instant.requestedTime, instant.action)));
  const leftOver = files.filter((file) => archived.has(instantKey(file.instant.time, file.instant.action)));
  await deleteArchivedFiles(storage, leftOver, settings);
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
async function deleteArchivedFiles(storage: Storage, files: readonly InstantFile[], settings: HistoryMoveSettings): Promise<void> {
  const pending = files.filter((file) => file.instant.state !== 'COMPLETED').map((file) => file.object.path);
  const failed = (await deleteMany(storage, pending, { concurrency: settings.deleteParallelism })).failed;
  if (failed.length > 0) {
    throw new HudiError(`could not delete ${failed.length} archived instant file(s): ${failed[0]!.reason}`, {
      location: storage.uriOf(failed[0]!.path),
      fix: 'run the archive again once the storage accepts deletes: it finishes this run first',
    });
  }
  const completed = files.filter((file) => file.instant.state === 'COMPLETED').sort((a, b) => compareInstantTimes(a.instant.time, b.instant.time));
  for (const file of completed) await storage.delete([file.object.path]);
}
