/**
 * The archive table service (HoodieTimelineArchiver.archiveIfRequired, Hudi 0.15), under the table lock: finish or undo
 * an interrupted small-file merge, pick the instants (plan.ts), write them as HoodieArchivedMetaEntry records into a new
 * archive log file, delete them from the active timeline, and with hoodie.archive.merge.enable merge the newest small
 * archive files (runArchive gives the steps). A crash after the write leaves instants both archived and active, which
 * readers tolerate; the next run first deletes the active files of instants the newest archive file holds, so no
 * instant is archived twice.
 */

import { type ArchivePlan, planArchive } from '../archiver/plan.js';
import type { CleanConfig } from '../cleaner/config.js';
import { readCleanerPlan, readCleanMetadata } from '../cleaning/timeline-facts.js';
import { HudiError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { withLock } from '../lock/port.js';
import { encodeLogBlock, type LogBlockInput } from '../log-format/block.js';
import { encodeAvroDataBlockContent } from '../log-format/data-block.js';
import { writeLogFile } from '../log-format/log-files.js';
import { logFileName, nextLogVersion, UNKNOWN_WRITE_TOKEN } from '../log-format/names.js';
import { completedCompactions, loadMetadataTimeline, metadataTableState } from '../metadata/index.js';
import { mapWithConcurrency, settleAll } from '../storage/concurrency.js';
import { deleteMany } from '../storage/delete-many.js';
import type { Storage, StoredObject } from '../storage/port.js';
import { assertSupported, PROPERTIES_FILE } from '../table/config.js';
import type { HudiTable } from '../table/table.js';
import { ARCHIVE_FILE_ID, archiveFolder, listArchiveFiles, MERGE_ARCHIVE_PLAN_NAME, readArchivedRecords } from '../timeline/archived/archived-timeline.js';
import { ARCHIVED_META_ENTRY_SCHEMA_TEXT, type ArchivedMetaEntry, archivedMetaEntryOf } from '../timeline/archived/meta-entry.js';
import { decodeTimelineAvro, encodeTimelineAvro } from '../timeline/avro-files.js';
import { compareInstants, compareInstantTimes, type Instant, type InstantAction, parseInstantFileName } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { MARKERS_ROOT } from '../timeline/markers.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { loadTimeline, type Timeline } from '../timeline/timeline.js';
import { deleteInstantScratch, INSTANT_WORK_ROOTS } from '../timeline/work-folder.js';
import { concatBytes } from '../util/bytes.js';
import { fileNameOf, folderNameOf } from '../util/paths.js';
import { planArchiveLsmNow, runArchiveLsm } from './archive-lsm.js';
import type { ArchivalConfig } from './config.js';

export interface ArchiveOptions {
  readonly config: ArchivalConfig;
  /** The cleaner's retention, which archiving never passes (ArchivalUtils). */
  readonly cleanConfig: CleanConfig;
  readonly lock: LockProvider;
  readonly lockWaitMs?: number;
  /** Plan and explain only. */
  readonly dryRun?: boolean;
  readonly onProgress?: (line: string) => void;
  /**
   * The job's Hudi properties. On a Hudi 1.x table hoodie.metadata.enable=false drops its metadata table first, as a
   * Hudi writer with that setting does; without it a 1.x metadata table is refused before anything is written.
   */
  readonly properties?: ReadonlyMap<string, string>;
}

export interface ArchiveResult {
  readonly outcome: 'archived' | 'nothing-to-archive' | 'dry-run';
  readonly plan: ArchivePlan;
  /** Active timeline files moved to the archive. */
  readonly archivedFiles: readonly string[];
  /** The archive log file written, if any (the last one, when a large run wrote several: archiveFiles). */
  readonly archiveFile: string | undefined;
  /** Every archive file written, oldest first (layout 1 writes one per 64 MB of records). */
  readonly archiveFiles?: readonly string[];
  readonly recordsWritten: number;
  /** A merge of small archive files done at the end of this run. */
  readonly merged: { readonly candidates: readonly string[]; readonly into: string } | undefined;
  /** What step 1 found: a merge interrupted by a crash, finished or undone. */
  readonly recoveredMerge: 'none' | 'undone' | 'finished' | 'discarded-unreadable-plan';
  /** Timeline files a crashed run had archived but not yet deleted, deleted now before planning. */
  readonly finishedInterrupted: readonly string[];
  /** Timeline layout 2: the history files its compaction wrote after the archive (none in layout 1). */
  readonly compacted: readonly string[];
}

/**
 * The archiver of each timeline layout: 0.x's archived log files (this module), 1.x's LSM timeline history
 * (archive-lsm.ts). The one place the layout picks the rules and the files.
 */
const ARCHIVERS: {
  readonly [V in TimelineLayout['version']]: {
    run(table: HudiTable, options: ArchiveOptions): Promise<ArchiveResult>;
    plan(table: HudiTable, config: ArchivalConfig, cleanConfig: CleanConfig): Promise<ArchivePlan>;
  };
} = {
  1: { run: runArchiveLayout1, plan: (table, config, cleanConfig) => planArchiveLayout1(table, config, cleanConfig) },
  2: {
    run: async (table, options) => ({ ...(await runArchiveLsm(table, options)), merged: undefined, recoveredMerge: 'none' }),
    plan: planArchiveLsmNow,
  },
};

/**
 * 1. finish or undo a small-file merge a crash interrupted (verifyLastMergeArchiveFilesIfNecessary);
 * 2. pick the instants to archive (plan.ts);
 * 3. write every state file of each into the next version of `.hoodie/archived/.commits_.archive.N_1-0-1` (storage
 *    without append gets a new file per run), in Avro data blocks of hoodie.commits.archival.batch records, after
 *    removing their leftover marker folders;
 * 4. delete them from the active timeline (deleteArchivedFiles);
 * 5. with hoodie.archive.merge.enable, merge the newest small archive files into one (mergeArchiveFilesIfNecessary).
 */
export async function runArchive(table: HudiTable, options: ArchiveOptions): Promise<ArchiveResult> {
  assertSupported(table.config, table.storage.uriOf(PROPERTIES_FILE), 'archive');
  return ARCHIVERS[table.layout.version].run(table, options);
}

async function runArchiveLayout1(table: HudiTable, options: ArchiveOptions): Promise<ArchiveResult> {
  const { storage } = table;
  const folder = archiveFolder(table.config.archiveLogFolder);
  return withLock(
    options.lock,
    async () => {
      const timeline = await loadTimeline(storage, table.layout);
      let plan = planArchive(await archiveFacts(table, timeline), options.config, options.cleanConfig);
      const empty = {
        archivedFiles: [],
        archiveFile: undefined,
        recordsWritten: 0,
        merged: undefined,
        recoveredMerge: 'none' as const,
        finishedInterrupted: [],
        compacted: [],
      };
      if (options.dryRun) return { outcome: 'dry-run' as const, plan, ...empty };

      const recoveredMerge = options.config.mergeEnable ? await recoverMerge(storage, folder, options.config) : 'none';
      const finishedInterrupted = await finishInterruptedArchive(storage, folder, options.config);
      if (finishedInterrupted.length > 0) {
        options.onProgress?.(`finished an interrupted archive run: removed ${finishedInterrupted.length} already archived timeline file(s)`);
        plan = planArchive(await archiveFacts(table, await loadTimeline(storage, table.layout)), options.config, options.cleanConfig);
      }
      let written: { archiveFile: string | undefined; archiveFiles: string[]; recordsWritten: number; archivedFiles: string[] } = {
        archiveFile: undefined,
        archiveFiles: [],
        recordsWritten: 0,
        archivedFiles: [],
      };
      if (plan.instants.length > 0) {
        written = await archiveInstants(table, folder, plan.instants, options);
        options.onProgress?.(
          `archived ${plan.instants.length} instant(s) (${written.archivedFiles.length} timeline file(s)) into ${written.archiveFile ?? 'the existing archive'}`,
        );
      }
      const merged = options.config.mergeEnable ? await mergeSmallArchiveFiles(storage, folder, options.config) : undefined;
      return {
        outcome: plan.instants.length > 0 ? ('archived' as const) : ('nothing-to-archive' as const),
        plan,
        ...written,
        merged,
        recoveredMerge,
        finishedInterrupted,
        compacted: [],
      };
    },
    options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs },
  );
}

/**
 * What an archive run would archive now, from the table as opened (the rules only: nothing is written and no lock
 * is taken). The serverless trigger asks it before starting a run that only cleans and archives.
 */
export async function planArchiveNow(table: HudiTable, config: ArchivalConfig, cleanConfig: CleanConfig): Promise<ArchivePlan> {
  return ARCHIVERS[table.layout.version].plan(table, config, cleanConfig);
}

async function planArchiveLayout1(table: HudiTable, config: ArchivalConfig, cleanConfig: CleanConfig): Promise<ArchivePlan> {
  return planArchive(await archiveFacts(table, table.timeline), config, cleanConfig);
}

/** What the archiver's rules need from the timeline besides instant names. */
async function archiveFacts(table: HudiTable, timeline: Timeline) {
  const { storage } = table;
  const lastClean = timeline
    .completed()
    .filter((instant) => instant.action === 'clean')
    .at(-1);
  let lastCleanRetainedFrom: string | undefined;
  if (lastClean !== undefined) {
    // ClusteringUtils reads the last completed clean's plan: its earliest instant to retain, else the clean's time.
    const plan = await readCleanerPlan(storage, lastClean.time, timeline.layout);
    lastCleanRetainedFrom =
      plan?.earliestInstantToRetain?.timestamp || (await readCleanMetadata(storage, lastClean.time, timeline.layout))?.earliestCommitToRetain || lastClean.time;
  }
  const savepointTimes = timeline
    .completed()
    .filter((instant) => instant.action === 'savepoint')
    .map((instant) => instant.time);
  const mdt = metadataTableState(table.config);
  const metadataTable = mdt.partitions.includes('files') ? { latestCompaction: await metadataTableLatestCompaction(storage) } : undefined;
  return { timeline, lastCleanRetainedFrom, savepointTimes, metadataTable, timeZone: table.config.timelineTimeZone, tableType: table.config.type };
}

/**
 * The metadata table's latest compaction: its last completed `commit` (HoodieBackedTableMetadata.getLatestCompactionTime).
 * Read with the metadata timeline's parser: a compaction's time is the data instant plus `001` (20 digits).
 */
export async function metadataTableLatestCompaction(storage: Storage): Promise<string | undefined> {
  return completedCompactions(await loadMetadataTimeline(storage)).at(-1)?.time;
}

/** HoodieInstant.getComparableAction: a compaction's files group with its commit. */
function comparableAction(action: InstantAction): InstantAction {
  return action === 'compaction' ? 'commit' : action === 'logcompaction' ? 'deltacommit' : action;
}

interface RawInstantFile {
  readonly instant: Instant;
  readonly object: StoredObject;
}

/** Every instant file of `.hoodie` (all states, not only the furthest): layout 1 only, lib/archiver/archive-lsm.ts lists layout 2. */
async function rawInstantFiles(storage: Storage): Promise<RawInstantFile[]> {
  const { files } = await storage.listDir(METAFOLDER);
  const out: RawInstantFile[] = [];
  for (const object of files) {
    const instant = parseInstantFileName(fileNameOf(object.path));
    if (instant !== undefined) out.push({ instant, object });
  }
  return out.sort((a, b) => compareInstants(a.instant, b.instant));
}

/**
 * An archive run that crashed after writing its archive file leaves instants both archived and active (the newest
 * archive file holds them). Delete their active files now, in deleteArchivedInstants' order, so they are not
 * archived a second time (Hudi would archive them again).
 */
async function finishInterruptedArchive(storage: Storage, folder: string, config: ArchivalConfig): Promise<string[]> {
  const newest = (await listArchiveFiles(storage, folder)).at(-1);
  if (newest === undefined) return [];
  const archived = new Set(
    (await readArchivedRecords(storage, folder, [newest])).records.map((record) => `${record.instant.time}|${comparableAction(record.instant.action)}`),
  );
  const files = (await rawInstantFiles(storage)).filter((file) => archived.has(`${file.instant.time}|${comparableAction(file.instant.action)}`));
  await deleteArchivedFiles(storage, files, config);
  return files.map((file) => file.object.path.slice(METAFOLDER.length + 1));
}

/**
 * deleteArchivedInstants: requested and inflight files first (in parallel), then completed ones oldest first, one at a time.
 *
 * Requested and inflight files first, then the completed files one by one, oldest first (deleteArchivedInstants: a
 * completed file removed before its requested file would make readers take the instant for pending, and holes in the
 * completed timeline confuse readers).
 */
async function deleteArchivedFiles(storage: Storage, files: readonly RawInstantFile[], config: ArchivalConfig): Promise<void> {
  const pending = files.filter((file) => file.instant.state !== 'COMPLETED').map((file) => file.object.path);
  const failed = (await deleteMany(storage, pending, { concurrency: config.deleteParallelism })).failed;
  if (failed.length > 0) {
    throw new HudiError(`could not delete ${failed.length} archived instant file(s): ${failed[0]!.reason}`, {
      location: storage.uriOf(failed[0]!.path),
      fix: 'run the archive again once the storage accepts deletes',
    });
  }
  const completed = files.filter((file) => file.instant.state === 'COMPLETED').sort((a, b) => compareInstantTimes(a.instant.time, b.instant.time));
  for (const file of completed) await storage.delete([file.object.path]);
}

const recordKey = (entry: Pick<ArchivedMetaEntry, 'commitTime' | 'actionType' | 'actionState'>) =>
  `${entry.commitTime}|${entry.actionType}|${entry.actionState}`;

/**
 * How large an archive file grows before the run closes it, deletes the instants it holds from the active timeline,
 * and goes on with the next one. An archive run of a few instants writes one file as before; one of a hundred
 * thousand (a table whose archiving was off) would otherwise hold every instant file, record and block in memory at
 * once (each of Hudi's blocks of a few records repeats the whole schema). Each part is a whole archive step, in
 * timeline order, so a crash leaves what a crash of a smaller run leaves.
 */
const ARCHIVE_FILE_TARGET_BYTES = 64 * 1024 * 1024;
/** Instant files read at once (the rest of a part waits). */
const READ_WINDOW = 512;

async function archiveInstants(
  table: HudiTable,
  folder: string,
  instants: readonly Instant[],
  options: ArchiveOptions,
): Promise<{ archiveFile: string | undefined; archiveFiles: string[]; recordsWritten: number; archivedFiles: string[] }> {
  const { storage } = table;
  const wanted = new Set(instants.map((instant) => `${instant.time}|${comparableAction(instant.action)}`));
  const files = (await rawInstantFiles(storage)).filter((file) => wanted.has(`${file.instant.time}|${comparableAction(file.instant.action)}`));
  // Records an interrupted run already wrote (it can only have been the newest archive file).
  const newest = (await listArchiveFiles(storage, folder)).at(-1);
  const already = new Set(newest === undefined ? [] : (await readArchivedRecords(storage, folder, [newest])).records.map((record) => recordKey(record.entry)));

  // deleteAnyLeftOverMarkers: only instants that still have a marker (or work) folder.
  const [markerDirs, ...workDirs] = await settleAll([storage.listDir(MARKERS_ROOT), ...INSTANT_WORK_ROOTS.map((root) => storage.listDir(root))]);
  const leftOver = new Set([...markerDirs.dirs, ...workDirs.flatMap((work) => work.dirs)].map((dir) => folderNameOf(dir)));
  for (const instant of instants) if (leftOver.has(instant.time)) await deleteInstantScratch(storage, instant.time);

  const perBlock = options.config.recordsPerBlock;
  const archiveFiles: string[] = [];
  let recordsWritten = 0;
  // The part being built: its instants' files, its encoded blocks, the records of the block not yet full.
  let partFiles: RawInstantFile[] = [];
  let blocks: LogBlockInput[] = [];
  let blockBytes = 0;
  let pending: ArchivedMetaEntry[] = [];
  const closeBlock = () => {
    if (pending.length === 0) return;
    const block = archiveBlock(pending);
    blocks.push(block);
    blockBytes += block.content.length + ARCHIVED_META_ENTRY_SCHEMA_TEXT.length;
    recordsWritten += pending.length;
    pending = [];
  };
  const closePart = async () => {
    closeBlock();
    if (blocks.length > 0) archiveFiles.push((await writeArchiveBlocks(storage, folder, blocks)).path);
    await deleteArchivedFiles(storage, partFiles, options.config);
    partFiles = [];
    blocks = [];
    blockBytes = 0;
  };
  const instantKeyOf = (file: RawInstantFile) => `${file.instant.time}|${comparableAction(file.instant.action)}`;
  for (let offset = 0; offset < files.length; offset += READ_WINDOW) {
    const window = files.slice(offset, offset + READ_WINDOW);
    const read = await mapWithConcurrency(window, 16, async (file) => ({ file, bytes: await storage.get(file.object.path) }));
    for (const [index, { file, bytes }] of read.entries()) {
      const entry = archivedMetaEntryOf(
        { instant: file.instant, bytes, modifiedMs: file.object.modifiedMs, location: storage.uriOf(file.object.path) },
        table.config.timelineTimeZone,
      );
      partFiles.push(file);
      if (!already.has(recordKey(entry))) {
        pending.push(entry);
        if (pending.length >= perBlock) closeBlock();
      }
      // A part ends with a whole instant: its next file belongs to another one.
      const next = files[offset + index + 1];
      if (blockBytes >= ARCHIVE_FILE_TARGET_BYTES && next !== undefined && instantKeyOf(next) !== instantKeyOf(file)) await closePart();
    }
  }
  await closePart();
  return {
    archiveFile: archiveFiles.at(-1),
    archiveFiles,
    recordsWritten,
    archivedFiles: files.map((file) => file.object.path.slice(METAFOLDER.length + 1)),
  };
}

/** The next archive log file, holding `blocks` (each block's header: SCHEMA only). */
async function writeArchiveBlocks(storage: Storage, folder: string, blocks: readonly LogBlockInput[]) {
  return writeLogFile(storage, {
    partitionPath: folder,
    fileId: ARCHIVE_FILE_ID,
    baseInstant: '',
    writeToken: UNKNOWN_WRITE_TOKEN,
    extension: 'archive',
    blocks,
  });
}

function archiveBlock(entries: readonly ArchivedMetaEntry[]): LogBlockInput {
  return {
    type: 'AVRO_DATA_BLOCK',
    header: { SCHEMA: ARCHIVED_META_ENTRY_SCHEMA_TEXT },
    content: encodeAvroDataBlockContent(entries, ARCHIVED_META_ENTRY_SCHEMA_TEXT),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Merging small archive files (storage without append gets one file per archive run).

/**
 * mergeArchiveFilesIfNecessary: the newest archive files no larger than the small-file limit, once there are at
 * least hoodie.archive.merge.files.batch.size of them, are rewritten into one new archive file. The merge plan is
 * written first, the candidates deleted after the merged file, the plan last, so a crash is recoverable.
 */
async function mergeSmallArchiveFiles(storage: Storage, folder: string, config: ArchivalConfig): Promise<{ candidates: string[]; into: string } | undefined> {
  const archives = await listArchiveFiles(storage, folder);
  const newestFirst = [...archives].reverse();
  const firstLarge = newestFirst.findIndex((file) => file.size > config.mergeSmallFileLimitBytes);
  const candidates = firstLarge < 0 ? newestFirst : newestFirst.slice(0, firstLarge);
  if (candidates.length < config.mergeFilesBatchSize) return undefined;

  const version = nextLogVersion(
    archives.map((file) => file.name),
    { fileId: ARCHIVE_FILE_ID, baseInstant: '', extension: 'archive' },
  );
  const mergedName = logFileName({ fileId: ARCHIVE_FILE_ID, baseInstant: '', version, writeToken: UNKNOWN_WRITE_TOKEN, extension: 'archive' });
  const planPath = `${folder}/${MERGE_ARCHIVE_PLAN_NAME}`;
  await storage.put(
    planPath,
    encodeTimelineAvro('mergeArchivePlan', { version: 1, candidate: candidates.map((file) => storage.uriOf(file.path)), mergedArchiveFileName: mergedName }),
  );
  // Records in the candidates' order (newest file first), as Hudi's mergeArchiveFiles reads them.
  const { records } = await readArchivedRecords(storage, folder, candidates);
  const entries = records.map((record) => record.entry);
  const blocks: LogBlockInput[] = [];
  for (let offset = 0; offset < entries.length; offset += config.recordsPerBlock)
    blocks.push(archiveBlock(entries.slice(offset, offset + config.recordsPerBlock)));
  if (blocks.length === 0) blocks.push(archiveBlock([]));
  await storage.putIfAbsent(`${folder}/${mergedName}`, concatBytes(blocks.map((block) => encodeLogBlock(block))));
  await deleteMany(
    storage,
    candidates.map((file) => file.path),
    { concurrency: config.deleteParallelism },
  );
  await storage.delete([planPath]);
  return { candidates: candidates.map((file) => file.path), into: `${folder}/${mergedName}` };
}

/**
 * verifyLastMergeArchiveFilesIfNecessary: a merge plan left behind means a crash mid-merge. All candidates still
 * there: the merged file is incomplete or unused, delete it. Some gone: the merged file is complete, delete the rest.
 */
async function recoverMerge(storage: Storage, folder: string, config: ArchivalConfig): Promise<ArchiveResult['recoveredMerge']> {
  const planPath = `${folder}/${MERGE_ARCHIVE_PLAN_NAME}`;
  if ((await storage.head(planPath)) === undefined) return 'none';
  let plan;
  try {
    plan = decodeTimelineAvro('mergeArchivePlan', await storage.get(planPath), storage.uriOf(planPath));
  } catch {
    await storage.delete([planPath]);
    return 'discarded-unreadable-plan';
  }
  const candidates = (plan.candidate ?? []).map((path) => `${folder}/${fileNameOf(path)}`);
  const merged = `${folder}/${plan.mergedArchiveFileName ?? ''}`;
  const present = await settleAll(candidates.map(async (path) => (await storage.head(path)) !== undefined));
  let outcome: ArchiveResult['recoveredMerge'];
  if (present.every(Boolean)) {
    if (plan.mergedArchiveFileName) await storage.delete([merged]);
    outcome = 'undone';
  } else {
    if (plan.mergedArchiveFileName && (await storage.head(merged)) !== undefined) {
      await deleteMany(storage, candidates, { concurrency: config.deleteParallelism });
    }
    outcome = 'finished';
  }
  await storage.delete([planPath]);
  return outcome;
}
