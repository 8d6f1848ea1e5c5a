/**
 * The compaction plan and instant of any merge-on-read table (the metadata table's and the data table's): the Avro
 * HoodieCompactionPlan in `<instant>.compaction.requested` → `<instant>.compaction.inflight` (empty) → `<instant>.commit`
 * (HoodieCommitMetadata, operationType COMPACT), as HoodieActiveTimeline moves it. Hudi's record type with its nulls
 * resolved, except dataFilePath and bootstrapFilePath (null for slices without a base file). Version 2 plans name files
 * relative to the operation's partition; version 1 plans held full paths, reduced to names on read as Hudi's
 * CompactionPlanMigrator does. Every function takes the timeline folder (`.hoodie`, or `.hoodie/metadata/.hoodie`),
 * since the storage is rooted at the data table.
 */
import { AlreadyExistsError, ConflictError, HudiError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { fileNameOf } from '../util/paths.js';
import { decodeCompactionPlanAvro, encodeCompactionPlanAvro } from './avro-files.js';
import type { HoodieCompactionPlan } from './avro-schemas.js';
import { fileGroupKey } from './file-group-key.js';
import { type Instant, type InstantState, instantFileName } from './instant.js';
import type { TimelineLayout } from './layout.js';
import { METAFOLDER } from './meta-folder.js';
import type { Timeline } from './timeline.js';

/** CompactionUtils.LATEST_COMPACTION_METADATA_VERSION. */
export const COMPACTION_PLAN_VERSION = 2;

/** CompactionStrategy's metric names (captureMetrics). */
export const CompactionMetric = {
  TOTAL_IO_READ_MB: 'TOTAL_IO_READ_MB',
  TOTAL_IO_WRITE_MB: 'TOTAL_IO_WRITE_MB',
  TOTAL_IO_MB: 'TOTAL_IO_MB',
  TOTAL_LOG_FILES_SIZE: 'TOTAL_LOG_FILES_SIZE',
  TOTAL_LOG_FILES: 'TOTAL_LOG_FILES',
} as const;

/** HoodieCompactionOperation: one file slice to merge into a new base file. */
export interface CompactionOperation {
  readonly baseInstantTime: string;
  /** Log file names, in Hudi's log-file order. */
  readonly deltaFilePaths: readonly string[];
  /** The base file's name; null for a slice of log files only. */
  readonly dataFilePath: string | null;
  readonly fileId: string;
  readonly partitionPath: string;
  readonly metrics: Readonly<Record<string, number>>;
  readonly bootstrapFilePath: string | null;
}

/** HoodieCompactionStrategy (set by log compaction and custom executors; null for plain compaction). */
export interface CompactionStrategy {
  readonly compactorClassName: string | null;
  readonly strategyParams: Readonly<Record<string, string>>;
  readonly version: number;
}

export interface CompactionPlan {
  readonly operations: readonly CompactionOperation[];
  readonly extraMetadata: Readonly<Record<string, string>>;
  readonly version: number;
  readonly strategy: CompactionStrategy | null;
  readonly preserveHoodieMetadata: boolean;
  /**
   * Hudi 1.x plans only: the partitions the strategy left out, which the next incremental plan looks at again (null
   * when hoodie.table.services.incremental.enabled is off); absent from 0.x plans.
   */
  readonly missingSchedulePartitions?: readonly string[] | null;
}

export interface TimelineFolderOption {
  /** The timeline folder relative to the storage root; default `.hoodie`. */
  readonly metaFolder?: string;
  /** The timeline layout whose Hudi line's plan schema a requested file is written with; default 1 (0.x's). */
  readonly layoutVersion?: 1 | 2;
}

/** The folder and plan schema of a table's own compactions (its layout's timeline folder). */
export function compactionFolderOf(layout: Pick<TimelineLayout, 'folder' | 'version'>): TimelineFolderOption {
  return { metaFolder: layout.folder, layoutVersion: layout.version };
}

const MB = 1024 * 1024;

/**
 * CompactionStrategy.captureMetrics for a slice: read = base + logs, write = the base file's size (or the 120 MB
 * default maximum base-file size when there is none), in whole MB as FSUtils.getSizeInMB truncates.
 */
export function sliceMetrics(baseFileSize: number | undefined, logFileSizes: readonly number[], maxBaseFileSize = 120 * MB): Record<string, number> {
  const logBytes = logFileSizes.filter((size) => size >= 0).reduce((a, b) => a + b, 0);
  const read = Math.floor(((baseFileSize ?? 0) + logBytes) / MB);
  const write = Math.floor((baseFileSize ?? maxBaseFileSize) / MB);
  return {
    [CompactionMetric.TOTAL_IO_READ_MB]: read,
    [CompactionMetric.TOTAL_IO_WRITE_MB]: write,
    [CompactionMetric.TOTAL_IO_MB]: read + write,
    [CompactionMetric.TOTAL_LOG_FILES_SIZE]: logBytes,
    [CompactionMetric.TOTAL_LOG_FILES]: logFileSizes.length,
  };
}

/** The plan as `<instant>.compaction.requested` bytes (an Avro object container, as Hudi writes it; 1.x's schema for layout 2). */
export function encodeCompactionPlan(plan: CompactionPlan, layoutVersion: 1 | 2 = 1): Uint8Array {
  const record: HoodieCompactionPlan = {
    operations: plan.operations.map((op) => ({
      baseInstantTime: op.baseInstantTime,
      deltaFilePaths: [...op.deltaFilePaths],
      dataFilePath: op.dataFilePath,
      fileId: op.fileId,
      partitionPath: op.partitionPath,
      metrics: { ...op.metrics },
      bootstrapFilePath: op.bootstrapFilePath,
    })),
    extraMetadata: { ...plan.extraMetadata },
    version: plan.version,
    strategy:
      plan.strategy === null
        ? null
        : { compactorClassName: plan.strategy.compactorClassName, strategyParams: { ...plan.strategy.strategyParams }, version: plan.strategy.version },
    preserveHoodieMetadata: plan.preserveHoodieMetadata,
    ...(plan.missingSchedulePartitions === undefined
      ? {}
      : { missingSchedulePartitions: plan.missingSchedulePartitions === null ? null : [...plan.missingSchedulePartitions] }),
  };
  return encodeCompactionPlanAvro(record, layoutVersion);
}

/** A version-1 plan's full path, reduced to the file name a version-2 plan holds. */

/** The plan in `<instant>.compaction.requested` bytes; `location` names the file in errors. */
export function decodeCompactionPlan(bytes: Uint8Array, location: string): CompactionPlan {
  const record = decodeCompactionPlanAvro(bytes, location);
  const version = record.version ?? 1;
  const operations = (record.operations ?? []).map((op, index): CompactionOperation => {
    if (op.fileId === null || op.baseInstantTime === null) {
      throw new HudiError(`compaction operation ${index} names no ${op.fileId === null ? 'fileId' : 'baseInstantTime'}`, {
        location,
        fix: 'the plan is damaged; roll the compaction back with Hudi (hudi-cli compaction unschedule) and let it be planned again',
      });
    }
    const names = (op.deltaFilePaths ?? []).map((p) => (version < COMPACTION_PLAN_VERSION ? fileNameOf(p) : p));
    return {
      baseInstantTime: op.baseInstantTime,
      deltaFilePaths: names,
      dataFilePath: op.dataFilePath === null ? null : version < COMPACTION_PLAN_VERSION ? fileNameOf(op.dataFilePath) : op.dataFilePath,
      fileId: op.fileId,
      partitionPath: op.partitionPath ?? '',
      metrics: op.metrics ?? {},
      bootstrapFilePath: op.bootstrapFilePath,
    };
  });
  return {
    operations,
    extraMetadata: record.extraMetadata ?? {},
    version: Math.max(version, COMPACTION_PLAN_VERSION),
    strategy:
      record.strategy === null
        ? null
        : {
            compactorClassName: record.strategy.compactorClassName,
            strategyParams: record.strategy.strategyParams ?? {},
            version: record.strategy.version ?? 1,
          },
    preserveHoodieMetadata: record.preserveHoodieMetadata ?? false,
    ...(record.missingSchedulePartitions === undefined ? {} : { missingSchedulePartitions: record.missingSchedulePartitions }),
  };
}

/** The file of compaction `time` in `state`; a completed compaction is `<time>.commit`. */
export function compactionInstantPath(time: string, state: InstantState, options: TimelineFolderOption = {}): string {
  const instant: Instant = state === 'COMPLETED' ? { time, action: 'commit', state } : { time, action: 'compaction', state };
  return `${options.metaFolder ?? METAFOLDER}/${instantFileName(instant)}`;
}

async function createOnce(storage: Storage, path: string, body: Uint8Array | string): Promise<void> {
  try {
    await storage.putIfAbsent(path, body);
  } catch (error) {
    if (error instanceof AlreadyExistsError) {
      throw new ConflictError(`${path} already exists: another writer is moving the same compaction`, {
        location: storage.uriOf(path),
        fix: 'look at the timeline, then retry',
      });
    }
    throw error;
  }
}

/** Schedule: write `<time>.compaction.requested` holding the plan. */
export async function requestCompaction(storage: Storage, time: string, plan: CompactionPlan, options: TimelineFolderOption = {}): Promise<void> {
  await createOnce(storage, compactionInstantPath(time, 'REQUESTED', options), encodeCompactionPlan(plan, options.layoutVersion));
}

/** Start executing: `<time>.compaction.inflight`, empty as Hudi's transitionCompactionRequestedToInflight writes it. */
export async function startCompaction(storage: Storage, time: string, options: TimelineFolderOption = {}): Promise<void> {
  await createOnce(storage, compactionInstantPath(time, 'INFLIGHT', options), new Uint8Array());
}

/** The commit point: `<time>.commit` with the compaction's HoodieCommitMetadata JSON. Write it after every base file it names is durable. */
export async function completeCompaction(storage: Storage, time: string, commitMetadataJson: string, options: TimelineFolderOption = {}): Promise<void> {
  await createOnce(storage, compactionInstantPath(time, 'COMPLETED', options), commitMetadataJson);
}

/** The plan of compaction `time` (its `.compaction.requested`). */
export async function readCompactionPlan(storage: Storage, time: string, options: TimelineFolderOption = {}): Promise<CompactionPlan> {
  const path = compactionInstantPath(time, 'REQUESTED', options);
  return decodeCompactionPlan(await storage.get(path), storage.uriOf(path));
}

/** Pending compactions, oldest first: `compaction` instants (requested or inflight) not yet completed as a commit. */
export function pendingCompactions(timeline: Timeline): Instant[] {
  const completed = new Set(timeline.instants.filter((i) => i.action === 'commit' && i.state === 'COMPLETED').map((i) => i.time));
  return timeline.instants.filter((i) => i.action === 'compaction' && i.state !== 'COMPLETED' && !completed.has(i.time));
}

/** File groups named by pending compaction plans (fileGroupKey). */
export async function pendingCompactionFileGroups(storage: Storage, timeline: Timeline): Promise<Set<string>> {
  const groups = new Set<string>();
  for (const instant of pendingCompactions(timeline)) {
    for (const op of (await readCompactionPlan(storage, instant.time, { metaFolder: timeline.layout.folder })).operations) {
      groups.add(fileGroupKey(op.partitionPath, op.fileId));
    }
  }
  return groups;
}
