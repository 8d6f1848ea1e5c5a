/**
 * Cleaning the metadata table, as Hudi 0.15's HoodieBackedTableMetadataWriter.cleanIfNecessary does before a writer
 * adds its deltacommit (after pending compactions, before a new one is scheduled):
 *
 * - skipped while fewer than 3 instants completed after the latest compaction (Hudi leaves readers that opened
 *   the old slices' files time to finish);
 * - at `<L>002` (createCleanTimestamp of the latest completed deltacommit L), never twice at the same time;
 * - KEEP_LATEST_COMMITS with min(hoodie.cleaner.commits.retained, 20) commits retained (HoodieMetadataWriteUtils),
 *   planned by lib/cleaning's planner over the metadata table's timeline and file slices (a slice's base HFile and
 *   log files go together); no clean instant when nothing is to be deleted, as Hudi's requestClean;
 * - `.clean.requested` (the plan) → `.clean.inflight` (the same bytes) → deletes → `.clean` (HoodieCleanMetadata),
 *   all on the metadata timeline; a pending one is finished from its plan first.
 */
import { earliestCommitToRetain, assembleCleanerPlan, commitsAndCompactionTimeline, planPartition, type PartitionCleanPlan } from '../cleaning/plan.js';
import { CLEAN_KEYS } from '../cleaning/config.js';
import { readKey } from '../config/index.js';
import { cleanMetadataOf } from '../cleaning/clean-metadata.js';
import { executeCleanerPlan } from '../cleaning/execute.js';
import type { LockLease } from '../lock/port.js';
import { prefixedStorage } from '../storage/prefixed.js';
import type { Storage } from '../storage/port.js';
import { decodeTimelineAvro, encodeTimelineAvro, type HoodieCleanerPlan } from '../timeline/avro-files.js';
import { compareInstantTimes, instantFileName, type Instant } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import type { MetadataFileGroup } from './file-groups.js';
import type { MetadataPartitionType } from './partitions.js';
import { completedCompactions, latestCompletedDeltaCommit, METADATA_TABLE_FOLDER, METADATA_TABLE_METAFOLDER } from './timeline.js';

/** HoodieTableMetadataUtil.OperationSuffix.CLEAN. */
export const CLEAN_SUFFIX = '002';
/** HoodieMetadataWriteUtils.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED: the most the metadata table retains. */
export const MAX_METADATA_CLEANER_COMMITS_RETAINED = 20;
/** cleanIfNecessary's buffer: completed instants after the latest compaction before its old slices go. */
const INSTANTS_AFTER_COMPACTION = 3;
const CLEAN_CONCURRENCY = 8;

/** The commits the metadata table's cleaner retains, from the data table's writer properties. */
export function metadataCleanerCommitsRetained(properties: ReadonlyMap<string, string> | undefined): number {
  const dataRetained = readKey(properties ?? new Map(), CLEAN_KEYS.commitsRetained, 'write properties');
  return Math.min(dataRetained, MAX_METADATA_CLEANER_COMMITS_RETAINED);
}

export interface MetadataCleanDecision {
  readonly instantTime: string | undefined;
  readonly reason: string;
}

/** Whether cleanIfNecessary would clean now, and at which instant. */
export function decideMetadataClean(metadataTimeline: Timeline): MetadataCleanDecision {
  const latest = latestCompletedDeltaCommit(metadataTimeline);
  if (latest === undefined) return { instantTime: undefined, reason: 'the metadata table has no completed deltacommit' };
  const compaction = completedCompactions(metadataTimeline).at(-1);
  if (compaction !== undefined) {
    const after = metadataTimeline.completed().filter((i) => compareInstantTimes(i.time, compaction.time) > 0).length;
    if (after < INSTANTS_AFTER_COMPACTION)
      return { instantTime: undefined, reason: `${after} instant(s) completed after compaction ${compaction.time}, ${INSTANTS_AFTER_COMPACTION} needed` };
  }
  const instantTime = `${latest}${CLEAN_SUFFIX}`;
  if (metadataTimeline.instants.some((i) => i.time === instantTime)) return { instantTime: undefined, reason: `clean ${instantTime} exists already` };
  return { instantTime, reason: `latest deltacommit ${latest}` };
}

/** The metadata table's cleaner plan now, or undefined when nothing is past retention. Pure but for the listings. */
export async function planMetadataClean(
  storage: Storage,
  metadataTimeline: Timeline,
  fileGroups: ReadonlyMap<MetadataPartitionType, readonly MetadataFileGroup[]>,
  commitsRetained: number,
): Promise<HoodieCleanerPlan | undefined> {
  const config = { policy: 'KEEP_LATEST_COMMITS' as const, commitsRetained, hoursRetained: 0 };
  const commits = commitsAndCompactionTimeline(metadataTimeline);
  const retain = earliestCommitToRetain(commits, config, new Date(), 'UTC');
  if (retain.instant === undefined) return undefined;
  const mdt = prefixedStorage(storage, METADATA_TABLE_FOLDER);
  const partitions: PartitionCleanPlan[] = [];
  for (const partition of [...fileGroups.keys()].sort()) {
    const files = (await mdt.listDir(partition)).files.map((file) => ({ name: file.path.slice(file.path.lastIndexOf('/') + 1), size: file.size }));
    partitions.push(
      planPartition(
        { partitionPath: partition, files },
        {
          policy: 'KEEP_LATEST_COMMITS',
          fileVersionsRetained: 0,
          earliestCommitToRetain: retain.instant.time,
          retentionReached: commits.filter((i) => i.state === 'COMPLETED').length > commitsRetained,
          timeline: metadataTimeline.instants,
          replacedFileGroups: {},
          pendingClustering: {},
          savepointedFiles: {},
          // Metadata-table partitions are never removed by a clean.
          isPartitioned: false,
        },
        { timeline: metadataTimeline },
      ),
    );
  }
  const lastCompleted = commits.filter((i) => i.state === 'COMPLETED').at(-1)?.time ?? '';
  return assembleCleanerPlan(
    {
      policy: 'KEEP_LATEST_COMMITS',
      earliestCommitToRetain: retain.instant,
      lastCompletedCommitTimestamp: lastCompleted,
      savepointTimes: [],
      isPartitioned: false,
    },
    partitions,
    (path) => mdt.uriOf(path),
  );
}

export interface MetadataCleanResult {
  readonly instantTime: string;
  readonly resumed: boolean;
  readonly filesDeleted: number;
  readonly millis: number;
}

const cleanPath = (time: string, state: Instant['state']): string => `${METADATA_TABLE_METAFOLDER}/${instantFileName({ time, action: 'clean', state })}`;

/** Schedule clean `instantTime` with `plan` on the metadata timeline and run it. */
export async function scheduleAndRunMetadataClean(
  storage: Storage,
  instantTime: string,
  plan: HoodieCleanerPlan,
  lease?: LockLease,
): Promise<MetadataCleanResult> {
  await lease?.assertHeld();
  await storage.putIfAbsent(cleanPath(instantTime, 'REQUESTED'), encodeTimelineAvro('cleanerPlan', plan));
  return runMetadataClean(storage, instantTime, plan, 'REQUESTED', false, lease);
}

/** Finish the metadata table's pending cleans from their plans, oldest first. */
export async function resumePendingMetadataCleans(storage: Storage, metadataTimeline: Timeline, lease?: LockLease): Promise<MetadataCleanResult[]> {
  const results: MetadataCleanResult[] = [];
  for (const instant of metadataTimeline.pending().filter((i) => i.action === 'clean')) {
    const path = cleanPath(instant.time, 'REQUESTED');
    const plan = decodeTimelineAvro('cleanerPlan', await storage.get(path), storage.uriOf(path));
    results.push(await runMetadataClean(storage, instant.time, plan, instant.state, true, lease));
  }
  return results;
}

async function runMetadataClean(
  storage: Storage,
  instantTime: string,
  plan: HoodieCleanerPlan,
  state: Instant['state'],
  resumed: boolean,
  lease?: LockLease,
): Promise<MetadataCleanResult> {
  const started = Date.now();
  if (state === 'REQUESTED') await storage.putIfAbsent(cleanPath(instantTime, 'INFLIGHT'), await storage.get(cleanPath(instantTime, 'REQUESTED')));
  const stats = await executeCleanerPlan(prefixedStorage(storage, METADATA_TABLE_FOLDER), plan, { concurrency: CLEAN_CONCURRENCY, isPartitioned: false });
  const metadata = cleanMetadataOf(instantTime, plan, stats, Date.now() - started);
  await lease?.assertHeld();
  await storage.putIfAbsent(cleanPath(instantTime, 'COMPLETED'), encodeTimelineAvro('cleanMetadata', metadata));
  return { instantTime, resumed, filesDeleted: metadata.totalFilesDeleted, millis: Date.now() - started };
}
