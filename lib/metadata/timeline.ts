/**
 * The metadata table's own timeline, `.hoodie/metadata/.hoodie/`, and which of its instants readers trust.
 *
 * Metadata-table instant times are the data instant they mirror or, for the metadata table's own operations, an
 * instant plus a 3-digit suffix (HoodieTableMetadataUtil.OperationSuffix): `001` compaction, `002` clean, `004`
 * async indexer, `005` log compaction, `006` rollback, `007` restore, and `010`… for partition initialization
 * (`00000000000000010` on an empty data table). Suffixes stack (`<T>011001`: a compaction after an initialization);
 * the grammar is INSTANT_TIME_PATTERN's. A compaction completes as a `commit`.
 */
import { NotFoundError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { parseJavaProperties } from '../table/properties.js';
import { decodeTimelineAvro } from '../timeline/avro-files.js';
import { compareInstantTimes, type Instant, instantFileName, MILLIS_INSTANT_ID_LENGTH } from '../timeline/instant.js';
import { TIMELINE_LAYOUT_1, type TimelineLayout } from '../timeline/layout.js';
import { instantPath, parseTimelineNames, Timeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';

/**
 * The metadata table this room keeps is Hudi 0.x's (table version 6; MetadataTable.open refuses 1.x's): its own
 * timeline and its data table's are layout 1.
 */
export const METADATA_0X_TIMELINE_LAYOUT: TimelineLayout = TIMELINE_LAYOUT_1;

export const METADATA_TABLE_FOLDER = '.hoodie/metadata';
export const METADATA_TABLE_METAFOLDER = `${METADATA_TABLE_FOLDER}/.hoodie`;
export const METADATA_TABLE_PROPERTIES = `${METADATA_TABLE_METAFOLDER}/hoodie.properties`;

/** HoodieTimeline.INIT_INSTANT_TS / SOLO_COMMIT_TIMESTAMP: the base of initialization instants of an empty table. */
export const SOLO_COMMIT_TIMESTAMP = '00000000000000';
/** The suffixes of metadata-table operations (OperationSuffix), and the first partition-initialization suffix. */
export const OPERATION_SUFFIXES = ['001', '002', '004', '005', '006', '007'] as const;
export const PARTITION_INITIALIZATION_SUFFIX = '010';

/** The metadata table's own hoodie.properties, or undefined when it has none. */
export async function readMetadataTableProperties(storage: Storage): Promise<Map<string, string> | undefined> {
  try {
    return parseJavaProperties(Buffer.from(await storage.get(METADATA_TABLE_PROPERTIES)).toString('utf8'), storage.uriOf(METADATA_TABLE_PROPERTIES));
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    return undefined;
  }
}

/** `.hoodie/metadata/.hoodie/<instant file>`. */
export function metadataInstantPath(instant: Instant): string {
  return `${METADATA_TABLE_METAFOLDER}/${instantFileName(instant)}`;
}

export interface MetadataTimelineListing {
  /** Every instant file of the metadata timeline (requested, inflight and completed), in timeline order. */
  readonly instants: Instant[];
  /**
   * Names in the metafolder that look like instant files (they start with a digit) but do not parse: a time outside
   * Hudi's grammar, an action or state this build does not know. Where one of them is the latest compaction, the
   * latest slice is unknown, so nothing may be written to the metadata table (see MetadataTable.problems).
   */
  readonly unreadable: string[];
}

/** The metadata timeline's instant files, and the instant-like names that did not parse. */
export async function listMetadataTimeline(storage: Storage): Promise<MetadataTimelineListing> {
  const { files } = await storage.listDir(METADATA_TABLE_METAFOLDER);
  return parseTimelineNames(
    files.map((file) => fileNameOf(file.path)),
    METADATA_0X_TIMELINE_LAYOUT,
  );
}

/** Every instant file of the metadata timeline (all states: requested, inflight and completed files). */
export async function listMetadataInstantFiles(storage: Storage): Promise<Instant[]> {
  return (await listMetadataTimeline(storage)).instants;
}

export async function loadMetadataTimeline(storage: Storage): Promise<Timeline> {
  return new Timeline(await listMetadataInstantFiles(storage));
}

/**
 * HoodieTableMetadataUtil.isValidInstant: a metadata-table deltacommit of its own (compaction, clean, index, …
 * suffixes, or a partition initialization `010` and above), whose time has no data instant behind it.
 */
export function isMetadataOwnDeltaCommit(instant: Instant): boolean {
  if (instant.action !== 'deltacommit' || instant.time.length !== MILLIS_INSTANT_ID_LENGTH + 3) return false;
  const suffix = instant.time.slice(-3);
  return (OPERATION_SUFFIXES as readonly string[]).includes(suffix) || suffix >= PARTITION_INITIALIZATION_SUFFIX;
}

/** Completed metadata-table compactions (a compaction completes as `commit`), oldest first. */
export function completedCompactions(timeline: Timeline): Instant[] {
  return timeline.instants.filter((i) => i.action === 'commit' && i.state === 'COMPLETED');
}

/**
 * The deltacommits a compaction scheduled now would fold (CompactionUtils.getDeltaCommitsSinceLatestCompaction):
 * every deltacommit, in any state, after the latest completed compaction, or all of them when there is none.
 * Hudi compacts before its next write once there are hoodie.metadata.compact.max.delta.commits of them.
 */
export function deltaCommitsSinceLastCompaction(timeline: Timeline): Instant[] {
  const last = completedCompactions(timeline).at(-1);
  return timeline.instants.filter((i) => i.action === 'deltacommit' && (last === undefined || i.time > last.time));
}

/**
 * The instants whose log blocks metadata-table readers apply (HoodieTableMetadataUtil.getValidInstantTimestamps):
 * completed data instants; the metadata table's own completed deltacommits, rollbacks and restores, and its
 * initializations of an empty table; and instants that completed data rollbacks or restores rolled back.
 */
export async function validInstantTimes(storage: Storage, dataTimeline: Timeline, metadataTimeline: Timeline): Promise<Set<string>> {
  const valid = new Set(dataTimeline.completed().map((i) => i.time));
  for (const instant of metadataTimeline.completed()) {
    if (isMetadataOwnDeltaCommit(instant)) valid.add(instant.time);
  }
  const earliest = [...valid].sort()[0] ?? SOLO_COMMIT_TIMESTAMP;
  for (const rollback of dataTimeline.completed().filter((i) => (i.action === 'rollback' || i.action === 'restore') && i.time > earliest)) {
    for (const time of await rolledBackInstants(storage, rollback, dataTimeline.layout)) valid.add(time);
  }
  for (const instant of metadataTimeline.completed()) {
    if (instant.action === 'rollback' || instant.action === 'restore') valid.add(instant.time);
    if (instant.action === 'deltacommit' && instant.time.startsWith(SOLO_COMMIT_TIMESTAMP)) valid.add(instant.time);
  }
  return valid;
}

/** What a completed data-table rollback or restore rolled back (an empty rollback file: its plan's instant). */
async function rolledBackInstants(storage: Storage, instant: Instant, layout: TimelineLayout): Promise<string[]> {
  const path = instantPath(instant, layout);
  const bytes = await storage.get(path);
  if (instant.action === 'rollback') {
    if (bytes.length === 0) {
      const requested = instantPath({ time: instant.time, action: 'rollback', state: 'REQUESTED' }, layout);
      const plan = decodeTimelineAvro('rollbackPlan', await storage.get(requested), storage.uriOf(requested));
      return plan.instantToRollback === null ? [] : [plan.instantToRollback.commitTime];
    }
    return decodeTimelineAvro('rollbackMetadata', bytes, storage.uriOf(path)).commitsRollback;
  }
  // Restores are not written by this build; their metadata is a map of rollback metadata lists.
  return [];
}

/** The latest completed deltacommit of the metadata timeline (what compaction and cleaning both start from). */
export function latestCompletedDeltaCommit(metadataTimeline: Timeline): string | undefined {
  return metadataTimeline
    .completed()
    .filter((i) => i.action === 'deltacommit')
    .map((i) => i.time)
    .sort(compareInstantTimes)
    .at(-1);
}
