/**
 * Cleaning the metadata table, as Hudi 0.15's HoodieBackedTableMetadataWriter.cleanIfNecessary does before a writer
 * adds its deltacommit (after pending compactions, before a new one is scheduled): skipped while fewer than 3 instants
 * completed after the latest compaction (readers of the old slices get time to finish); at `<L>002`
 * (createCleanTimestamp of the latest completed deltacommit L), never twice at the same time; planned by lib/cleaning's
 * planner over the metadata timeline with the data table's policy (metadataCleanConfig); `.clean.requested` →
 * `.clean.inflight` → deletes → `.clean`, a pending one finished from its plan first.
 */

import { cleanMetadataOf } from '../cleaner/clean-metadata.js';
import { type CleanConfig, cleanConfigFromProperties } from '../cleaner/config.js';
import { executeCleanerPlan } from '../cleaner/execute.js';
import {
  assembleCleanerPlan,
  commitsAndCompactionTimeline,
  earliestCommitToRetain,
  type PartitionCleanPlan,
  planPartition,
  type RetentionPoint,
} from '../cleaner/plan.js';
import type { LockLease } from '../lock/port.js';
import type { Storage } from '../storage/port.js';
import { prefixedStorage } from '../storage/prefixed.js';
import { decodeTimelineAvro, encodeTimelineAvro, type HoodieCleanerPlan } from '../timeline/avro-files.js';
import { compareInstantTimes, type Instant, instantFileName } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';
import type { MetadataFileGroup } from './file-groups.js';
import type { MetadataPartitionType } from './partitions.js';
import { completedCompactions, latestCompletedDeltaCommit, METADATA_TABLE_FOLDER, METADATA_TABLE_METAFOLDER } from './timeline.js';

/** HoodieTableMetadataUtil.OperationSuffix.CLEAN. */
export const CLEAN_SUFFIX = '002';
/** HoodieMetadataConfig.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED: the fewest commits the metadata table retains. */
export const MIN_METADATA_CLEANER_COMMITS_RETAINED = 20;
/** HoodieMetadataWriteUtils: the metadata table keeps 1.2 times what the data table's cleaner keeps. */
const METADATA_RETENTION_FACTOR = 1.2;
/** cleanIfNecessary's buffer: completed instants after the latest compaction before its old slices go. */
const INSTANTS_AFTER_COMPACTION = 3;
const CLEAN_CONCURRENCY = 8;

export type MetadataCleanConfig = Pick<CleanConfig, 'policy' | 'commitsRetained' | 'fileVersionsRetained' | 'hoursRetained'>;

/**
 * The metadata table's cleaner settings from the data table's writer properties, as Hudi 0.15 derives them: the
 * same policy, its retention scaled by 1.2 (and never fewer than 20 commits); the settings of the other policies
 * are unused.
 *
 * The data table's cleaner policy with 1.2 times its retention (HoodieMetadataWriteUtils.createMetadataWriteConfig):
 * KEEP_LATEST_COMMITS keeps max(20, floor(1.2 × hoodie.cleaner.commits.retained)) commits, KEEP_LATEST_FILE_VERSIONS
 * ceil(1.2 × hoodie.cleaner.fileversions.retained) slices, KEEP_LATEST_BY_HOURS ceil(1.2 × hoodie.cleaner.hours.retained)
 * hours. A slice's base HFile and log files go together; no clean instant when nothing is to be deleted, as Hudi's
 * requestClean.
 */
export function metadataCleanConfig(properties: ReadonlyMap<string, string> | undefined): MetadataCleanConfig {
  const data = cleanConfigFromProperties(properties ?? new Map(), 'write properties');
  const scaled = (n: number) => Math.ceil(n * METADATA_RETENTION_FACTOR);
  return {
    policy: data.policy,
    // Hudi computes max(20.0, retained * 1.2) in doubles and truncates it.
    commitsRetained: Math.trunc(Math.max(MIN_METADATA_CLEANER_COMMITS_RETAINED, data.commitsRetained * METADATA_RETENTION_FACTOR)),
    fileVersionsRetained: data.policy === 'KEEP_LATEST_FILE_VERSIONS' ? scaled(data.fileVersionsRetained) : data.fileVersionsRetained,
    hoursRetained: data.policy === 'KEEP_LATEST_BY_HOURS' ? scaled(data.hoursRetained) : data.hoursRetained,
  };
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
  config: MetadataCleanConfig,
  now: Date = new Date(),
): Promise<HoodieCleanerPlan | undefined> {
  const commits = commitsAndCompactionTimeline(metadataTimeline);
  const retain = earliestCommitToRetain(commits, config, now, 'UTC');
  if (retain.instant === undefined && config.policy !== 'KEEP_LATEST_FILE_VERSIONS') return undefined;
  return planMetadataCleanPartitions(storage, metadataTimeline, [...fileGroups.keys()], config, retain);
}

/**
 * planPartition over each metadata-table partition's listing, then assembleCleanerPlan: what the metadata cleaners of
 * both timeline layouts share. `logSlices` (layout 2) gives each log file's slice, by completion time.
 */
export async function planMetadataCleanPartitions(
  storage: Storage,
  metadataTimeline: Timeline,
  partitionNames: readonly string[],
  config: MetadataCleanConfig,
  retain: RetentionPoint,
  logSlices?: (partition: string, files: readonly { name: string; size: number }[]) => ReadonlyMap<string, string>,
): Promise<HoodieCleanerPlan | undefined> {
  const completed = commitsAndCompactionTimeline(metadataTimeline).filter((i) => i.state === 'COMPLETED');
  const mdt = prefixedStorage(storage, METADATA_TABLE_FOLDER);
  const partitions: PartitionCleanPlan[] = [];
  for (const partition of [...partitionNames].sort()) {
    const files = (await mdt.listDir(partition)).files.map((file) => ({ name: fileNameOf(file.path), size: file.size }));
    partitions.push(
      planPartition(
        { partitionPath: partition, files },
        {
          policy: config.policy,
          fileVersionsRetained: config.fileVersionsRetained,
          earliestCommitToRetain: retain.instant?.time,
          retentionReached: completed.length > (config.policy === 'KEEP_LATEST_COMMITS' ? config.commitsRetained : 0),
          timeline: metadataTimeline.instants,
          replacedFileGroups: {},
          pendingClustering: {},
          savepointedFiles: {},
          // Metadata-table partitions are never removed by a clean.
          isPartitioned: false,
        },
        { timeline: metadataTimeline, ...(logSlices === undefined ? {} : { logSlices: logSlices(partition, files) }) },
      ),
    );
  }
  return assembleCleanerPlan(
    {
      policy: config.policy,
      earliestCommitToRetain: retain.instant,
      lastCompletedCommitTimestamp: completed.at(-1)?.time ?? '',
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
