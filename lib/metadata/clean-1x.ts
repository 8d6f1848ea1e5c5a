/**
 * Cleaning a Hudi 1.x metadata table as HoodieBackedTableMetadataWriter.cleanIfNecessary does in 1.0.2 and 1.1.1 when
 * a writer starts, before compactIfNecessary: skipped while fewer than 3 instants completed after the last compaction
 * (by requested time); else at a fresh instant time, when a commit completed since the last clean
 * (hoodie.clean.max.commits=1), lib/cleaner's planner over the metadata timeline with the data table's policy at 1.2
 * times its retention (metadataCleanConfig), file slices by completion time (a log goes with the slice it joins),
 * every partition; `<T>.clean.requested` (Avro plan), `.inflight` (the same), the deletes, `<T>_<completion>.clean`.
 * No instant at all when nothing is to be deleted.
 */
import { cleanMetadataOf } from '../cleaner/clean-metadata.js';
import { executeCleanerPlan } from '../cleaner/execute.js';
import { cleanIsDue, commitsAndCompactionTimeline, earliestCommitToRetain } from '../cleaner/plan.js';
import type { LockLease } from '../lock/port.js';
import type { Storage } from '../storage/port.js';
import { prefixedStorage } from '../storage/prefixed.js';
import { logFileSlices } from '../table/file-group.js';
import { decodeTimelineAvro, encodeTimelineAvro, type HoodieCleanerPlan } from '../timeline/avro-files.js';
import { compareInstantTimes, newInstantTime, type TimelineTimeZone } from '../timeline/instant.js';
import { timelineLayout2 } from '../timeline/layout.js';
import { instantPath, loadTimeline, type Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../timeline/transitions.js';
import { metadataCleanConfig, planMetadataCleanPartitions } from './clean.js';
import { lastCompletedCompaction1x } from './compaction-1x.js';
import { loadMetadataTimeline1x, metadataCompletionTimes1x } from './reader-1x.js';
import type { Metadata1xPartition } from './schema-1x.js';
import { METADATA_TABLE_FOLDER } from './timeline.js';

/** cleanIfNecessary's buffer: completed instants after the last compaction before its old slices may go. */
const INSTANTS_AFTER_COMPACTION = 3;
const CLEAN_CONCURRENCY = 8;
/** The metadata table's own timeline, read on storage rooted at the metadata table. */
const MDT_LAYOUT = timelineLayout2('.hoodie/timeline', 'UTC');

export interface MetadataClean1xInput {
  readonly partitions: readonly Metadata1xPartition[];
  /** Every instant time of the data table: the clean's instant comes after them all. */
  readonly dataTimes: Iterable<string>;
  readonly zone: TimelineTimeZone;
  readonly properties?: ReadonlyMap<string, string>;
  readonly lease?: LockLease;
  readonly afterStorageWrite?: (what: string) => Promise<void>;
  readonly now?: Date;
}

export interface MetadataClean1xResult {
  readonly instantTime: string;
  readonly plan: HoodieCleanerPlan;
  readonly filesDeleted: number;
}

/** Whether cleanIfNecessary goes on to clean (the 3-instant buffer after the last compaction). */
export function cleanMayRun1x(timeline: Timeline): boolean {
  const last = lastCompletedCompaction1x(timeline);
  if (last === undefined) return true;
  return timeline.completed().filter((instant) => compareInstantTimes(instant.time, last.time) > 0).length >= INSTANTS_AFTER_COMPACTION;
}

/** The metadata table's cleaner plan now, or undefined when no clean is due or nothing is past retention. */
export async function planMetadataClean1x(storage: Storage, input: MetadataClean1xInput): Promise<HoodieCleanerPlan | undefined> {
  const mdt = prefixedStorage(storage, METADATA_TABLE_FOLDER);
  const timeline = await loadTimeline(mdt, MDT_LAYOUT);
  const config = metadataCleanConfig(input.properties);
  const lastClean = timeline
    .completed()
    .filter((instant) => instant.action === 'clean')
    .at(-1);
  const lastCleanMetadata = lastClean === undefined ? undefined : await mdt.get(instantPath(lastClean, MDT_LAYOUT));
  const due = cleanIsDue(
    timeline,
    lastClean === undefined
      ? undefined
      : {
          instant: lastClean,
          metadata:
            lastCleanMetadata === undefined || lastCleanMetadata.length === 0
              ? undefined
              : decodeTimelineAvro('cleanMetadata', lastCleanMetadata, mdt.uriOf(instantPath(lastClean, MDT_LAYOUT))),
        },
    { maxCommits: 1 },
  );
  if (!due.due) return undefined;
  const now = input.now ?? new Date();
  const retain = earliestCommitToRetain(commitsAndCompactionTimeline(timeline), config, now, input.zone);
  if (retain.instant === undefined && config.policy !== 'KEEP_LATEST_FILE_VERSIONS') return undefined;
  const completionTimes = await metadataCompletionTimes1x(storage, await loadMetadataTimeline1x(storage));
  return planMetadataCleanPartitions(storage, timeline, input.partitions, config, retain, (partition, files) =>
    logFileSlices(
      { partitionPath: partition, files },
      { timeline, completionTimes, queryInstant: undefined, replacedFileGroups: new Set(), pendingCompactions: new Map(), baseFileExtension: 'hfile' },
    ),
  );
}

/** cleanIfNecessary: plan, and when the plan deletes something, schedule and run the clean at a fresh instant. */
export async function cleanIfNecessary1x(storage: Storage, timeline: Timeline, input: MetadataClean1xInput): Promise<MetadataClean1xResult | undefined> {
  if (!cleanMayRun1x(timeline)) return undefined;
  const plan = await planMetadataClean1x(storage, input);
  if (plan === undefined) return undefined;
  const mdt = prefixedStorage(storage, METADATA_TABLE_FOLDER);
  const step = input.afterStorageWrite ?? (async () => {});
  const instantTime = newInstantTime([...input.dataTimes, ...timeline.allTimes()], input.now ?? new Date(), input.zone);
  const started = Date.now();
  const bytes = encodeTimelineAvro('cleanerPlan', plan);
  await input.lease?.assertHeld();
  await createRequested(mdt, MDT_LAYOUT, instantTime, 'clean', bytes);
  await step('clean requested');
  await transitionToInflight(mdt, MDT_LAYOUT, instantTime, 'clean', bytes);
  await step('clean inflight');
  const stats = await executeCleanerPlan(mdt, plan, { concurrency: CLEAN_CONCURRENCY, isPartitioned: false });
  await step('clean deletes');
  const metadata = cleanMetadataOf(instantTime, plan, stats, Date.now() - started);
  await input.lease?.assertHeld();
  await transitionToCompleted(mdt, MDT_LAYOUT, instantTime, 'clean', encodeTimelineAvro('cleanMetadata', metadata));
  await step('clean completed');
  return { instantTime, plan, filesDeleted: metadata.totalFilesDeleted };
}
