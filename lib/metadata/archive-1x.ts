/**
 * Archiving a Hudi 1.x metadata table's own timeline as HoodieBackedTableMetadataWriter.performTableServices does
 * after its clean and compaction (writeClient.archive(), 1.0.2 and 1.1.1): TimelineArchiverV2 on the metadata table
 * with the write config HoodieMetadataWriteUtils gives it (keep.min/max.commits one more than the data table's, the
 * metadata cleaner's retention, merge-on-read with the NUM_COMMITS trigger at hoodie.metadata.compact.max.delta.commits,
 * Hudi's defaults for the rest), never from the data table's first active commit or pending instant on; the instants
 * go into `.hoodie/metadata/.hoodie/timeline/history/` (lib/archiver, as the data table's archive). Also what the data
 * table's archiver reads of the metadata table: its latest compaction.
 */
import { finishInterruptedArchive, type HistoryMoveResult, type HistoryMoveSettings, moveToHistory } from '../archiver/archive-lsm.js';
import { ARCHIVAL_KEYS, assertKeepCommits } from '../archiver/config.js';
import type { ArchivePlan, ArchiveRules } from '../archiver/plan.js';
import { planArchiveLsm } from '../archiver/plan-lsm.js';
import { readKeys } from '../config/index.js';
import type { LockLease } from '../lock/port.js';
import type { Storage } from '../storage/port.js';
import { prefixedStorage } from '../storage/prefixed.js';
import type { TableConfig } from '../table/config.js';
import { DEFAULT_COMPACTION_BATCH_SIZE, historyFolder } from '../timeline/history/index.js';
import type { TimelineTimeZone } from '../timeline/instant.js';
import { timelineLayout2 } from '../timeline/layout.js';
import type { Timeline } from '../timeline/timeline.js';
import { metadataCleanConfig } from './clean.js';
import { compactionLimit } from './compaction.js';
import { lastCompletedCompaction1x } from './compaction-1x.js';
import { metadataTableDisabled } from './keys.js';
import { loadMetadataTimeline1x } from './reader-1x.js';
import { metadataTableState } from './state.js';
import { METADATA_TABLE_FOLDER, readMetadataTableProperties } from './timeline.js';

/** The metadata table's own timeline, on storage rooted at the metadata table. */
const MDT_LAYOUT = timelineLayout2('.hoodie/timeline', 'UTC');
/** The metadata table's writer keeps Hudi's defaults for what HoodieMetadataWriteUtils does not set. */
const MDT_MOVE_SETTINGS: HistoryMoveSettings = {
  deleteParallelism: ARCHIVAL_KEYS.deleteParallelism.default,
  timelineCompactionBatchSize: DEFAULT_COMPACTION_BATCH_SIZE,
};

export interface MetadataArchive1xInput {
  /** The data table's active timeline (the instant being written pending on it). */
  readonly dataTimeline: Timeline;
  readonly zone: TimelineTimeZone;
  readonly properties?: ReadonlyMap<string, string>;
  readonly lease?: LockLease;
  readonly afterStorageWrite?: (what: string) => Promise<void>;
}

export interface MetadataArchive1xResult extends HistoryMoveResult {
  readonly plan: ArchivePlan;
}

/** The metadata table's archiver settings from the data table writer's properties (createMetadataWriteConfig). */
export function metadataArchiveRules1x(properties: ReadonlyMap<string, string> | undefined): ArchiveRules {
  const data = readKeys(properties ?? new Map(), { minCommits: ARCHIVAL_KEYS.minCommits, maxCommits: ARCHIVAL_KEYS.maxCommits }, 'write properties');
  assertKeepCommits(data, 'write properties');
  return {
    minCommits: data.minCommits + 1,
    maxCommits: data.maxCommits + 1,
    beyondSavepoint: ARCHIVAL_KEYS.beyondSavepoint.default,
    compactionTriggerStrategy: 'NUM_COMMITS',
    compactionMaxDeltaCommits: compactionLimit(properties),
  };
}

/** TimelineArchiverV2.getInstantsToArchive on the metadata table `timeline` now. */
export function planMetadataArchive1x(timeline: Timeline, input: Omit<MetadataArchive1xInput, 'lease' | 'afterStorageWrite'>): ArchivePlan {
  return planArchiveLsm(
    { timeline, lastClean: undefined, savepointTimes: [], timeZone: input.zone, tableType: 'MERGE_ON_READ', dataTimeline: input.dataTimeline },
    metadataArchiveRules1x(input.properties),
    metadataCleanConfig(input.properties),
  );
}

/**
 * writeClient.archive() on the metadata table: plan, and when the plan archives something, move it into the metadata
 * table's history. Undefined when nothing is archived.
 */
export async function archiveMetadataIfRequired1x(storage: Storage, input: MetadataArchive1xInput): Promise<MetadataArchive1xResult | undefined> {
  const mdt = prefixedStorage(storage, METADATA_TABLE_FOLDER);
  const properties = await readMetadataTableProperties(storage);
  const folder = historyFolder({ timelinePath: properties?.get('hoodie.timeline.path'), historyPath: properties?.get('hoodie.timeline.history.path') });
  let plan = planMetadataArchive1x(await loadMetadataTimeline1x(storage), input);
  if (plan.instants.length === 0) return undefined;
  await input.lease?.assertHeld();
  // A run cut short after its manifest left instants archived and active: delete those first, then plan again.
  if ((await finishInterruptedArchive(mdt, MDT_LAYOUT, folder, MDT_MOVE_SETTINGS)).length > 0) {
    plan = planMetadataArchive1x(await loadMetadataTimeline1x(storage), input);
    if (plan.instants.length === 0) return undefined;
  }
  const moved = await moveToHistory(mdt, MDT_LAYOUT, folder, plan.instants, MDT_MOVE_SETTINGS);
  await input.afterStorageWrite?.('archive');
  return {
    ...moved,
    plan,
    archiveFile: moved.archiveFile === undefined ? undefined : `${METADATA_TABLE_FOLDER}/${moved.archiveFile}`,
    compacted: moved.compacted.map((path) => `${METADATA_TABLE_FOLDER}/${path}`),
  };
}

/**
 * What the data table's archiver reads of its metadata table (TimelineArchiverV2 with the metadata table enabled and
 * available): its latest completed compaction's requested time (undefined: none yet); undefined as a whole when the
 * job turns the metadata table off or hoodie.properties declares no `files` partition.
 */
export async function metadataTableCompaction1x(
  storage: Storage,
  config: Pick<TableConfig, 'properties'>,
  properties: ReadonlyMap<string, string>,
): Promise<{ readonly latestCompaction: string | undefined } | undefined> {
  if (metadataTableDisabled(properties) || !metadataTableState(config).partitions.includes('files')) return undefined;
  return { latestCompaction: lastCompletedCompaction1x(await loadMetadataTimeline1x(storage))?.time };
}
