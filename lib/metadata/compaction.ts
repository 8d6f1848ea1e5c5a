/**
 * Compacting the metadata table, as Hudi 0.15's HoodieBackedTableMetadataWriter does before a writer adds its
 * deltacommit (performTableServices: pending compactions first, then compactIfNecessary): decideCompaction says when,
 * planCompaction what, scheduleAndRunCompaction does it, completing as `<instant>.commit` (operationType COMPACT).
 *
 * Until that commit exists readers ignore the new base files (fileGroupsOf takes slices of completed instants only),
 * so a crash at any point leaves the table as before; the next commit resumes the plan (Hudi re-runs a pending
 * compaction's plan too, after rolling back what its inflight attempt wrote: here, the partial base files).
 */

import { createBloomFilter, HUDI_BLOOM_FILTER_DEFAULTS } from '../base-file/bloom-filter.js';
import { defineKey, javaInt, readKey } from '../config/index.js';
import { HudiError } from '../errors.js';
import { writeHudiBaseHFile } from '../hfile/index.js';
import type { LockLease } from '../lock/port.js';
import { logFilesOf } from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import {
  COMPACTION_PLAN_VERSION,
  type CompactionOperation,
  type CompactionPlan,
  completeCompaction,
  pendingCompactions,
  readCompactionPlan,
  requestCompaction,
  sliceMetrics,
  startCompaction,
} from '../timeline/compaction-plan.js';
import { compareInstantTimes } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import { type JsonValue, toJacksonPrettyJson } from '../util/jackson-json.js';
import { fileNameOf } from '../util/paths.js';
import { encodeMetadataRecord } from './codec.js';
import { type MetadataFileGroup, partitionFolder } from './file-groups.js';
import { isMetadataPartitionType, type MetadataPartitionType } from './partitions.js';
import { readFileGroup } from './reader.js';
import { isDeletedRecord, type MetadataRecord } from './records.js';
import { METADATA_RECORD_SCHEMA_TEXT, METADATA_RECORD_WRITER_SCHEMA_TEXT, metadataRecordType } from './schema.js';
import { deltaCommitsSinceLastCompaction, latestCompletedDeltaCommit, METADATA_TABLE_METAFOLDER } from './timeline.js';

/** hoodie.metadata.compact.max.delta.commits (HoodieMetadataConfig.COMPACT_NUM_DELTA_COMMITS). */
export const COMPACT_MAX_DELTA_COMMITS = defineKey({
  key: 'hoodie.metadata.compact.max.delta.commits',
  default: 10,
  parser: javaInt(1),
  description:
    "once the metadata table has this many deltacommits since its last compaction, the next commit compacts it first (HFile base files), as Hudi's writers do: table version 6 at `<deltacommit>001`, not while a data instant at or before its latest deltacommit is pending; versions 8 and 9 at a new instant time, on writes only (counting deltacommits completed after it)",
});
export const COMPACT_MAX_DELTA_COMMITS_KEY = COMPACT_MAX_DELTA_COMMITS.key;
export const DEFAULT_COMPACT_MAX_DELTA_COMMITS = COMPACT_MAX_DELTA_COMMITS.default;
/** HoodieTableMetadataUtil.OperationSuffix.COMPACTION. */
export const COMPACTION_SUFFIX = '001';
/** zlib level of the base files' GZ blocks (as the deltacommits': any level reads back the same). */
const GZIP_LEVEL = 1;
const METAFOLDER = { metaFolder: METADATA_TABLE_METAFOLDER };

/** hoodie.metadata.compact.max.delta.commits from the user's write properties. */
export function compactionLimit(properties: ReadonlyMap<string, string> | undefined): number {
  return readKey(properties ?? new Map(), COMPACT_MAX_DELTA_COMMITS, 'write properties');
}

export interface CompactionDecision {
  /** The compaction instant to schedule, when one is due and nothing blocks it. */
  readonly instantTime: string | undefined;
  readonly reason: string;
}

/**
 * Whether to schedule a metadata-table compaction now, and at which instant (Hudi's rules, above).
 *
 * Due once the deltacommits since the last compaction reach hoodie.metadata.compact.max.delta.commits
 * (ScheduleCompactionActionExecutor's NUM_COMMITS trigger, every deltacommit counted, pending ones too). Blocked while
 * any data-table instant at or before the latest completed deltacommit L is pending
 * (validateTimelineBeforeSchedulingCompaction: their blocks would be folded into base files before the data table
 * decided on them), or while a compaction or log compaction is pending, or when L001 already completed.
 */
export function decideCompaction(dataTimeline: Timeline, metadataTimeline: Timeline, limit: number): CompactionDecision {
  const latest = latestCompletedDeltaCommit(metadataTimeline);
  if (latest === undefined) return { instantTime: undefined, reason: 'the metadata table has no completed deltacommit' };
  const count = deltaCommitsSinceLastCompaction(metadataTimeline).length;
  if (count < limit) return { instantTime: undefined, reason: `${count} deltacommit(s) since the last compaction, ${limit} needed` };
  const blocking = dataTimeline.pending().filter((i) => compareInstantTimes(i.time, latest) <= 0);
  if (blocking.length > 0) {
    return {
      instantTime: undefined,
      reason: `data-table ${blocking.map((i) => `${i.action} ${i.time}`).join(', ')} pending at or before the latest deltacommit ${latest}`,
    };
  }
  const pending = metadataTimeline.pending().filter((i) => i.action === 'compaction' || i.action === 'logcompaction');
  const completedTimes = new Set(metadataTimeline.completed().map((i) => i.time));
  const open = pending.filter((i) => !completedTimes.has(i.time));
  if (open.length > 0) return { instantTime: undefined, reason: `${open[0]!.action} ${open[0]!.time} is pending` };
  const instantTime = `${latest}${COMPACTION_SUFFIX}`;
  if (completedTimes.has(instantTime)) return { instantTime: undefined, reason: `compaction ${instantTime} already completed` };
  return { instantTime, reason: `${count} deltacommit(s) since the last compaction (${COMPACT_MAX_DELTA_COMMITS_KEY}=${limit})` };
}

/**
 * The plan: one operation per file group whose latest slice has log files, partitions and file ids in order.
 *
 * Scheduled at `<L>001` (HoodieTableMetadataUtil.createCompactionTimestamp): one operation per file group whose latest
 * slice has log files (CompactionUtils.buildFromFileSlice), written as `.compaction.requested`.
 */
export function planCompaction(fileGroups: ReadonlyMap<MetadataPartitionType, readonly MetadataFileGroup[]>): CompactionPlan {
  const operations: CompactionOperation[] = [];
  for (const partition of [...fileGroups.keys()].sort()) {
    for (const group of fileGroups.get(partition) ?? []) {
      const slice = group.latest;
      if (slice.logFiles.length === 0) continue;
      operations.push({
        baseInstantTime: slice.baseInstant,
        deltaFilePaths: slice.logFiles.map((log) => fileNameOf(log.path)),
        dataFilePath: slice.baseFile?.name ?? null,
        fileId: group.fileId,
        partitionPath: partition,
        metrics: sliceMetrics(
          slice.baseFile?.size,
          slice.logFiles.map((log) => log.size),
        ),
        bootstrapFilePath: null,
      });
    }
  }
  return { operations, extraMetadata: {}, version: COMPACTION_PLAN_VERSION, strategy: null, preserveHoodieMetadata: false };
}

export interface CompactionContext {
  /** The metadata timeline as loaded before the compaction (which blocks count). */
  readonly metadataTimeline: Timeline;
  /** getValidInstantTimestamps against the data timeline. */
  readonly validInstants: ReadonlySet<string>;
  readonly lease?: LockLease;
  /** Fault injection for tests: called after each storage write. */
  readonly afterStorageWrite?: (what: string) => Promise<void>;
}

export interface CompactedFile {
  readonly partition: string;
  readonly fileId: string;
  /** Relative to the metadata table: `<partition>/<base file>`. */
  readonly path: string;
  readonly prevCommit: string;
  readonly records: number;
  readonly bytes: number;
  readonly logFiles: number;
  readonly logBytes: number;
  readonly millis: number;
}

export interface MetadataCompactionResult {
  readonly instantTime: string;
  /** A pending compaction (ours or another writer's) finished, rather than one scheduled now. */
  readonly resumed: boolean;
  readonly files: readonly CompactedFile[];
  readonly millis: number;
}

/**
 * Schedule compaction `instantTime` with `plan`, then run it.
 *
 * Each operation runs as HoodieCompactor does on the metadata table: the slice's base HFile and log blocks merged by
 * key with HoodieMetadataPayload's rules, only blocks of valid instants (the range Hudi gives the scanner from
 * getValidInstantTimestamps), deleted keys dropped; each file group gets a new HFile base file
 * `<fileId>_<writeToken>_<instant>.hfile` (HoodieAvroHFileWriter: sorted keys, `_hoodie_file_name` set, bloom filter of
 * the keys with Hudi's defaults, min/max keys in the file info), and a write stat in the commit.
 */
export async function scheduleAndRunCompaction(
  storage: Storage,
  instantTime: string,
  plan: CompactionPlan,
  context: CompactionContext,
): Promise<MetadataCompactionResult> {
  await context.lease?.assertHeld();
  await requestCompaction(storage, instantTime, plan, METAFOLDER);
  await context.afterStorageWrite?.('compaction requested');
  return runCompaction(storage, instantTime, plan, context, false);
}

/** Finish the metadata table's pending compactions, oldest first (Hudi's runPendingTableServicesOperations). */
export async function resumePendingCompactions(storage: Storage, context: CompactionContext): Promise<MetadataCompactionResult[]> {
  const results: MetadataCompactionResult[] = [];
  for (const instant of pendingCompactions(context.metadataTimeline)) {
    const plan = await readCompactionPlan(storage, instant.time, METAFOLDER);
    results.push(await runCompaction(storage, instant.time, plan, context, true, instant.state === 'INFLIGHT'));
  }
  return results;
}

async function runCompaction(
  storage: Storage,
  instantTime: string,
  plan: CompactionPlan,
  context: CompactionContext,
  resumed: boolean,
  inflight = false,
): Promise<MetadataCompactionResult> {
  const started = Date.now();
  const step = context.afterStorageWrite ?? (async () => {});
  if (!inflight) {
    await startCompaction(storage, instantTime, METAFOLDER);
    await step('compaction inflight');
  }
  const files: CompactedFile[] = [];
  // One file group at a time: a bloom_filters group holds every file's filter, and two of them need not fit in memory.
  for (const [ordinal, operation] of plan.operations.entries()) {
    files.push(await compactOperation(storage, instantTime, operation, ordinal, context));
    await step(`base file ${files.at(-1)!.path}`);
  }
  await context.lease?.assertHeld();
  await completeCompaction(storage, instantTime, compactionCommitJson(files), METAFOLDER);
  await step('compaction completed');
  return { instantTime, resumed, files, millis: Date.now() - started };
}

async function compactOperation(
  storage: Storage,
  instantTime: string,
  operation: CompactionOperation,
  ordinal: number,
  context: CompactionContext,
): Promise<CompactedFile> {
  const started = Date.now();
  const { partitionPath: partition, fileId } = operation;
  if (!isMetadataPartitionType(partition)) {
    throw new HudiError(`compaction ${instantTime} names metadata-table partition ${partition}, which Hudi 0.14/0.15 does not have`, {
      location: storage.uriOf(`${METADATA_TABLE_METAFOLDER}/${instantTime}.compaction.requested`),
      fix: 'this compaction was planned by a newer Hudi; let that Hudi finish it',
    });
  }
  const folder = partitionFolder(partition);
  const listing = (await storage.listDir(folder)).files;
  const byName = new Map(listing.map((file) => [fileNameOf(file.path), file]));
  const missing = [...operation.deltaFilePaths, ...(operation.dataFilePath === null ? [] : [operation.dataFilePath])].filter((name) => !byName.has(name));
  if (missing.length > 0) {
    throw new HudiError(`compaction ${instantTime} reads ${missing.join(', ')} in ${partition}, which are gone`, {
      location: storage.uriOf(`${folder}/${missing[0]}`),
      fix: 'something deleted files of the latest file slice; rebuild the metadata table (a Spark write with hoodie.metadata.enable=false, then one with it on)',
    });
  }
  const wanted = new Set(operation.deltaFilePaths);
  const order = new Map(operation.deltaFilePaths.map((name, index) => [name, index]));
  const logFiles = logFilesOf(
    listing.filter((file) => wanted.has(fileNameOf(file.path))),
    { extension: 'log' },
  ).sort((a, b) => order.get(fileNameOf(a.path))! - order.get(fileNameOf(b.path))!);
  const base = operation.dataFilePath === null ? undefined : byName.get(operation.dataFilePath)!;
  const group: MetadataFileGroup = {
    partition,
    fileId,
    latest: {
      fileId,
      baseInstant: operation.baseInstantTime,
      baseFile: base === undefined ? undefined : { path: base.path, name: fileNameOf(base.path), instantTime: operation.baseInstantTime, size: base.size },
      logFiles,
    },
    allLogFiles: logFiles,
  };
  const merged = await readFileGroup(storage, group, { metadataTimeline: context.metadataTimeline, validInstants: context.validInstants });
  const name = `${fileId}_${ordinal}-0-1_${instantTime}.hfile`;
  // An earlier attempt's output (ours, or another writer's under its own write token) is rewritten from the plan.
  const stale = listing
    .map((file) => file.path)
    .filter((path) => {
      const other = fileNameOf(path);
      return other !== name && other.startsWith(`${fileId}_`) && other.endsWith(`_${instantTime}.hfile`);
    });
  if (stale.length > 0) await storage.delete(stale);
  const type = metadataRecordType();
  const bloom = createBloomFilter(HUDI_BLOOM_FILTER_DEFAULTS);
  const records: { key: string; value: Uint8Array }[] = [];
  for (const record of merged.values()) {
    if (isDeletedRecord(record)) continue;
    bloom.add(record.key);
    records.push({ key: record.key, value: encodeMetadataRecord(record as MetadataRecord, type, name) });
  }
  const bytes = writeHudiBaseHFile(records, {
    schema: METADATA_RECORD_WRITER_SCHEMA_TEXT,
    gzipLevel: GZIP_LEVEL,
    bloomFilter: { typeCode: bloom.typeCode, serialized: bloom.serialize() },
  });
  await context.lease?.assertHeld();
  await storage.put(`${folder}/${name}`, bytes);
  return {
    partition,
    fileId,
    path: `${partition}/${name}`,
    prevCommit: base === undefined ? 'null' : operation.baseInstantTime,
    records: records.length,
    bytes: bytes.length,
    logFiles: logFiles.length,
    logBytes: logFiles.reduce((sum, log) => sum + log.size, 0),
    millis: Date.now() - started,
  };
}

/** The completed compaction: HoodieCommitMetadata (compacted, COMPACT) with a HoodieWriteStat per new base file. */
function compactionCommitJson(files: readonly CompactedFile[]): string {
  const byPartition: { [key: string]: JsonValue } = {};
  for (const file of files) {
    const list = (byPartition[file.partition] ??= []) as JsonValue[];
    list.push({
      fileId: file.fileId,
      path: file.path,
      cdcStats: null,
      prevCommit: file.prevCommit,
      numWrites: file.records,
      numDeletes: 0,
      numUpdateWrites: file.prevCommit === 'null' ? 0 : file.records,
      numInserts: file.prevCommit === 'null' ? file.records : 0,
      totalWriteBytes: file.bytes,
      totalWriteErrors: 0,
      tempPath: null,
      partitionPath: file.partition,
      totalLogRecords: 0,
      totalLogFilesCompacted: file.logFiles,
      totalLogSizeCompacted: file.logBytes,
      totalUpdatedRecordsCompacted: file.records,
      totalLogBlocks: 0,
      totalCorruptLogBlock: 0,
      totalRollbackBlocks: 0,
      fileSizeInBytes: file.bytes,
      minEventTime: null,
      maxEventTime: null,
      runtimeStats: { totalScanTime: 0, totalUpsertTime: file.millis, totalCreateTime: 0 },
    });
  }
  return toJacksonPrettyJson({
    partitionToWriteStats: byPartition,
    compacted: true,
    extraMetadata: { schema: METADATA_RECORD_SCHEMA_TEXT },
    operationType: 'COMPACT',
  });
}
