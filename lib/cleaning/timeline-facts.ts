/**
 * What the cleaner (and the archiver) read from the timeline besides instant names: the last clean, savepoints,
 * replaced, pending-clustering and pending-compaction file groups, and the partitions a commit touched.
 */

import type { LastClean, PendingCompactionOperation } from '../cleaner/plan.js';
import { NotFoundError, UnsupportedTableError } from '../errors.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { decodeTimelineAvro, decodeTimelineAvroWithout } from '../timeline/avro-files.js';
import type { HoodieCleanerPlan, HoodieCleanMetadata, HoodieSavepointMetadata } from '../timeline/avro-schemas.js';
import { pendingCompactions, readCompactionPlan } from '../timeline/compaction-plan.js';
import { type Instant, instantFileName } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { pendingClusteringPlans } from '../timeline/queries.js';
import { instantPath, loadTimeline, readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';

/** Reads of instant files in flight at once. */
const READ_CONCURRENCY = 16;

/** The newest completed clean and its metadata (undefined metadata for an empty `.clean`, as Hudi tolerates). */
export async function readLastClean(storage: Storage, timeline: Timeline): Promise<LastClean | undefined> {
  const instant = timeline
    .completed()
    .filter((i) => i.action === 'clean')
    .at(-1);
  if (instant === undefined) return undefined;
  return { instant, metadata: await readCleanMetadataOf(storage, instant, timeline.layout) };
}

/**
 * The metadata of completed clean `time`. Layout 2 names the file by its completion time, which the timeline knows:
 * it is listed once to find it.
 */
export async function readCleanMetadata(storage: Storage, time: string, layout: TimelineLayout): Promise<HoodieCleanMetadata | undefined> {
  const instant =
    layout.version === 1
      ? { time, action: 'clean' as const, state: 'COMPLETED' as const }
      : (await loadTimeline(storage, layout)).instants.find((i) => i.time === time && i.action === 'clean' && i.state === 'COMPLETED');
  if (instant === undefined) throw new NotFoundError(storage.uriOf(`${layout.folder}/${time}_*.clean`), 'the clean is not completed on the timeline');
  return readCleanMetadataOf(storage, instant, layout);
}

/** The metadata of a completed clean instant of the timeline (undefined for an empty `.clean`). */
export async function readCleanMetadataOf(storage: Storage, instant: Instant, layout: TimelineLayout): Promise<HoodieCleanMetadata | undefined> {
  const path = instantPath(instant, layout);
  const bytes = await storage.get(path);
  return bytes.length === 0 ? undefined : decodeTimelineAvro('cleanMetadata', bytes, storage.uriOf(path));
}

/**
 * The cleaner plan of a clean instant: `.clean.requested`, else (a Hudi writer may have lost it) `.clean.inflight`,
 * which holds the same plan. Undefined for an empty file (Hudi's empty clean).
 */
export async function readCleanerPlan(storage: Storage, time: string, layout: TimelineLayout): Promise<HoodieCleanerPlan | undefined> {
  return readCleanerPlanFile(storage, time, layout, (bytes, location) => decodeTimelineAvro('cleanerPlan', bytes, location));
}

/** The fields of a cleaner plan besides its files (what a clean's metadata takes from it). */
export type CleanerPlanSummary = Omit<HoodieCleanerPlan, 'filesToBeDeletedPerPartition' | 'filePathsToBeDeletedPerPartition' | 'partitionsToBeDeleted'>;

/** readCleanerPlan without the files (a plan may name a million): the retention, policy and extra metadata. */
export async function readCleanerPlanSummary(storage: Storage, time: string, layout: TimelineLayout): Promise<CleanerPlanSummary | undefined> {
  return readCleanerPlanFile(storage, time, layout, (bytes, location) =>
    decodeTimelineAvroWithout('cleanerPlan', bytes, location, ['filesToBeDeletedPerPartition', 'filePathsToBeDeletedPerPartition', 'partitionsToBeDeleted']),
  );
}

async function readCleanerPlanFile<T>(
  storage: Storage,
  time: string,
  layout: TimelineLayout,
  decode: (bytes: Uint8Array, location: string) => T,
): Promise<T | undefined> {
  for (const state of ['REQUESTED', 'INFLIGHT'] as const) {
    const path = instantPath({ time, action: 'clean', state }, layout);
    const object = await storage.head(path);
    if (object === undefined) continue;
    const bytes = await storage.get(path);
    return bytes.length === 0 ? undefined : decode(bytes, storage.uriOf(path));
  }
  return undefined;
}

export interface Savepoint {
  readonly time: string;
  /** partition → the base file names it keeps. */
  readonly files: Readonly<Record<string, readonly string[]>>;
}

/** Completed savepoints (Hudi's getSavepointTimestamps) with the files they keep. */
export async function readSavepoints(storage: Storage, timeline: Timeline): Promise<Savepoint[]> {
  const instants = timeline.completed().filter((i) => i.action === 'savepoint');
  return mapWithConcurrency(instants, READ_CONCURRENCY, async (instant) => {
    const path = instantPath(instant, timeline.layout);
    const metadata: HoodieSavepointMetadata = decodeTimelineAvro('savepointMetadata', await storage.get(path), storage.uriOf(path));
    const files: Record<string, string[]> = {};
    for (const [partition, entry] of Object.entries(metadata.partitionMetadata)) {
      // Hudi stores file names; strip any folder a writer may have left in.
      files[partition] = entry.savepointDataFile.map((file) => fileNameOf(file));
    }
    return { time: instant.time, files };
  });
}

/** partition → file id → the completed replacecommit that replaced it (later replacements win). */
export async function readReplacedFileGroups(storage: Storage, timeline: Timeline): Promise<Record<string, Record<string, string>>> {
  const replaces = timeline.completed().filter((i) => i.action === 'replacecommit');
  const metadatas = await mapWithConcurrency(replaces, READ_CONCURRENCY, (instant) => readCommitMetadata(storage, instant, timeline.layout));
  const out: Record<string, Record<string, string>> = {};
  replaces.forEach((instant, index) => {
    for (const [partition, fileIds] of Object.entries(metadatas[index]!.partitionToReplaceFileIds ?? {})) {
      const groups = (out[partition] ??= {});
      for (const fileId of fileIds) groups[fileId] = instant.time;
    }
  });
  return out;
}

/** partition → file id → the pending clustering whose plan names it. */
export async function readPendingClusteringGroups(storage: Storage, timeline: Timeline): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const { instant, plan } of await pendingClusteringPlans(storage, timeline)) {
    for (const group of plan.inputGroups) for (const slice of group.slices) (out[slice.partitionPath] ??= {})[slice.fileId] = instant.time;
  }
  return out;
}

/** The partitions each completed commit wrote or replaced in (CleanPlanner.getPartitionsForInstants). */
export async function readTouchedPartitions(storage: Storage, instants: readonly Instant[], layout: TimelineLayout): Promise<string[]> {
  const metadatas = await mapWithConcurrency(instants, READ_CONCURRENCY, (instant) => readCommitMetadata(storage, instant, layout));
  const partitions = new Set<string>();
  for (const metadata of metadatas) {
    for (const partition of Object.keys(metadata.partitionToReplaceFileIds ?? {})) partitions.add(partition);
    for (const partition of Object.keys(metadata.partitionToWriteStats)) partitions.add(partition);
  }
  return [...partitions].sort();
}

/** `T.clean.requested` etc. of an instant, for messages. */
export function cleanInstantFile(time: string, state: Instant['state']): string {
  return instantFileName({ time, action: 'clean', state });
}

/**
 * Merge-on-read: partition → file id → the pending compaction taking it and its slice's base instant (CleanPlanner's
 * fgIdToPendingCompactionOperations). A pending log compaction is refused: its protection is not built.
 */
export async function readPendingCompactionOperations(
  storage: Storage,
  timeline: Timeline,
): Promise<Record<string, Record<string, PendingCompactionOperation>>> {
  // A log compaction completes as a deltacommit of the same time.
  const completedDeltas = new Set(
    timeline
      .completed()
      .filter((i) => i.action === 'deltacommit')
      .map((i) => i.time),
  );
  const logCompaction = timeline.pending().find((instant) => instant.action === 'logcompaction' && !completedDeltas.has(instant.time));
  if (logCompaction !== undefined) {
    throw new UnsupportedTableError(`log compaction ${logCompaction.time} is pending: cleaning a table with a pending log compaction is not supported yet`, {
      location: storage.uriOf(instantPath(logCompaction, timeline.layout)),
      fix: 'let Hudi finish (or roll back) the log compaction, then clean',
    });
  }
  const out: Record<string, Record<string, PendingCompactionOperation>> = {};
  const plans = await mapWithConcurrency(pendingCompactions(timeline), READ_CONCURRENCY, async (instant) => ({
    instant,
    plan: await readCompactionPlan(storage, instant.time, { metaFolder: timeline.layout.folder }),
  }));
  for (const { instant, plan } of plans)
    for (const op of plan.operations) (out[op.partitionPath] ??= {})[op.fileId] = { instant: instant.time, baseInstant: op.baseInstantTime };
  return out;
}
