/**
 * HoodieBackedTableMetadataWriter.performTableServices of Hudi 1.0.2 / 1.1.1 for our writes: run when a write starts
 * (SparkRDDWriteClient.initializeMetadataTable, never for a clean's deltacommit), so here before the write's
 * deltacommit. With a completed deltacommit on the metadata table: cleanIfNecessary (clean-1x.ts), then
 * compactIfNecessary (compaction-1x.ts), then writeClient.archive() (archive-1x.ts). Failed writes are rolled back
 * before this, and a pending compaction or clean refused by name (MetadataTable1x).
 */
import type { LockLease } from '../lock/port.js';
import type { Storage } from '../storage/port.js';
import type { TimelineTimeZone } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import { archiveMetadataIfRequired1x, type MetadataArchive1xResult } from './archive-1x.js';
import { cleanIfNecessary1x, type MetadataClean1xResult } from './clean-1x.js';
import { type Compaction1xResult, compactionDue1x, compactionInstantTime1x, planCompaction1x, scheduleAndRunCompaction1x } from './compaction-1x.js';
import { loadMetadataTimeline1x, validInstants1x } from './reader-1x.js';
import type { Metadata1xPartition, MetadataTableVersion1x } from './schema-1x.js';

export interface MetadataServices1xInput {
  readonly version: MetadataTableVersion1x;
  /** The metadata-table partitions declared in hoodie.properties that hold file groups. */
  readonly partitions: readonly Metadata1xPartition[];
  /** The data table's timeline (the instant being written is pending on it). */
  readonly dataTimeline: Timeline;
  readonly zone: TimelineTimeZone;
  readonly properties?: ReadonlyMap<string, string>;
  readonly lease?: LockLease;
  readonly afterStorageWrite?: (what: string) => Promise<void>;
  readonly now?: Date;
}

export interface MetadataServices1xResult {
  readonly cleans: readonly MetadataClean1xResult[];
  readonly compactions: readonly Compaction1xResult[];
  readonly archives: readonly MetadataArchive1xResult[];
}

export async function performMetadataTableServices1x(storage: Storage, input: MetadataServices1xInput): Promise<MetadataServices1xResult> {
  let timeline = await loadMetadataTimeline1x(storage);
  if (!timeline.completed().some((instant) => instant.action === 'deltacommit')) return { cleans: [], compactions: [], archives: [] };
  const optional = {
    ...(input.properties === undefined ? {} : { properties: input.properties }),
    ...(input.lease === undefined ? {} : { lease: input.lease }),
    ...(input.afterStorageWrite === undefined ? {} : { afterStorageWrite: input.afterStorageWrite }),
    ...(input.now === undefined ? {} : { now: input.now }),
  };
  const clean = await cleanIfNecessary1x(storage, timeline, {
    partitions: input.partitions,
    dataTimes: input.dataTimeline.allTimes(),
    zone: input.zone,
    ...optional,
  });
  if (clean !== undefined) timeline = await loadMetadataTimeline1x(storage);
  const compactions: Compaction1xResult[] = [];
  if (compactionDue1x(timeline, input.properties).due) {
    const instantTime = compactionInstantTime1x(input.dataTimeline, timeline, input.now ?? new Date(), input.zone);
    const completedTimes = new Set(timeline.completed().map((instant) => instant.time));
    const plan = completedTimes.has(instantTime) ? undefined : await planCompaction1x(storage, timeline, input.partitions, instantTime);
    if (plan !== undefined) {
      compactions.push(
        await scheduleAndRunCompaction1x(storage, instantTime, plan, {
          version: input.version,
          metadataTimeline: timeline,
          validInstants: validInstants1x(timeline, {
            completedDataInstants: new Set(input.dataTimeline.completed().map((instant) => instant.time)),
            pendingDataInstants: new Set(input.dataTimeline.pending().map((instant) => instant.time)),
          }),
          ...optional,
        }),
      );
    }
  }
  const archive = await archiveMetadataIfRequired1x(storage, {
    dataTimeline: input.dataTimeline,
    zone: input.zone,
    ...(input.properties === undefined ? {} : { properties: input.properties }),
    ...(input.lease === undefined ? {} : { lease: input.lease }),
    ...(input.afterStorageWrite === undefined ? {} : { afterStorageWrite: input.afterStorageWrite }),
  });
  return { cleans: clean === undefined ? [] : [clean], compactions, archives: archive === undefined ? [] : [archive] };
}
