/**
 * Compacting a Hudi 1.x metadata table (table versions 8 and 9) as HoodieBackedTableMetadataWriter.compactIfNecessary
 * does in 1.0.2 and 1.1.1 when a writer starts (docs/hudi-1x-metadata.md, "Table services"): due once the completed
 * deltacommits modified after the last compaction reach hoodie.metadata.compact.max.delta.commits; at a fresh instant
 * time (not 0.x's `<deltacommit>001`); one operation per file group whose latest slice has logs completed before it;
 * each merged with HoodieMetadataPayload's rules into a new HFile base file; `<C>.compaction.requested` (the Avro
 * plan), `.inflight`, then `<C>_<completion>.commit` (Avro commit metadata, COMPACT). Until that commit readers keep
 * the old slices, so a crash leaves a pending compaction, which our writes refuse by name until Hudi finishes it.
 */
import { createBloomFilter } from '../base-file/bloom-filter.js';
import { HudiError } from '../errors.js';
import { writeHudiBaseHFile } from '../hfile/index.js';
import type { LockLease } from '../lock/port.js';
import { type LogFileName, parseLogFileName } from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import { sliceByCompletionTime } from '../table/file-group.js';
import type { MergedFileSlice } from '../table/file-system-view.js';
import { type CommitMetadata, newWriteStat, type WriteStat } from '../timeline/commit-metadata.js';
import { COMPACTION_PLAN_VERSION, type CompactionOperation, type CompactionPlan, encodeCompactionPlan, sliceMetrics } from '../timeline/compaction-plan.js';
import type { CompletionTimes } from '../timeline/completion-times.js';
import { compareInstantTimes, formatInstantTime, type Instant, newInstantTime, parseInstantTime, type TimelineTimeZone } from '../timeline/instant.js';
import { timelineLayout2 } from '../timeline/layout.js';
import type { Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../timeline/transitions.js';
import { fileNameOf } from '../util/paths.js';
import { encodeMetadataRecord } from './codec.js';
import { compactionLimit } from './compaction.js';
import { METADATA_1X_TIMELINE_FOLDER, metadataCompletionTimes1x, readSliceInputs1x } from './reader-1x.js';
import { isDeletedRecord, isTombstone, type MergedRecord, type MetadataRecord, mergeRecords } from './records.js';
import { METADATA_1X_PARTITIONS, type Metadata1xPartition, type MetadataTableVersion1x, metadataRecordType1x, metadataVersionFacts } from './schema-1x.js';
import { METADATA_TABLE_FOLDER } from './timeline.js';

/** zlib level of the base files' GZ blocks (any level reads back the same; Java's deflate differs from zlib's anyway). */
const GZIP_LEVEL = 1;

const layout = () => timelineLayout2(METADATA_1X_TIMELINE_FOLDER, 'UTC');

// ---------------------------------------------------------------------------------------------------------------
// When, and at which instant

/**
 * CompactionUtils.getCompletedDeltaCommitsSinceLatestCompaction: the completed deltacommits whose completion time is
 * after the last completed compaction's requested time (all of them when none completed), oldest first.
 */
export function deltaCommitsSinceLastCompaction1x(timeline: Timeline): Instant[] {
  const last = lastCompletedCompaction1x(timeline);
  return timeline.instants.filter(
    (instant) =>
      instant.action === 'deltacommit' &&
      instant.state === 'COMPLETED' &&
      (last === undefined ||
        (instant.time !== last.time && instant.completionTime !== undefined && compareInstantTimes(instant.completionTime, last.time) > 0)),
  );
}

/** The last completed compaction (getCommitTimeline().filterCompletedInstants().lastInstant(): commits by requested time). */
export function lastCompletedCompaction1x(timeline: Timeline): Instant | undefined {
  return timeline.instants.filter((instant) => (instant.action === 'commit' || instant.action === 'replacecommit') && instant.state === 'COMPLETED').at(-1);
}

export interface Compaction1xDue {
  readonly due: boolean;
  readonly deltaCommits: number;
  readonly limit: number;
}

/** Whether needCompact (NUM_COMMITS) holds: hoodie.metadata.compact.max.delta.commits from the writer's properties. */
export function compactionDue1x(timeline: Timeline, properties: ReadonlyMap<string, string> | undefined): Compaction1xDue {
  const limit = compactionLimit(properties);
  const deltaCommits = deltaCommitsSinceLastCompaction1x(timeline).length;
  return { due: deltaCommits >= limit, deltaCommits, limit };
}

/**
 * compactIfNecessary's instant: the first data instant that is pending on the data table but completed on the metadata
 * table, minus 1 ms; else a new instant time, after every instant of both timelines (createNewInstantTime).
 */
export function compactionInstantTime1x(dataTimeline: Timeline, metadataTimeline: Timeline, now: Date, zone: TimelineTimeZone): string {
  const completedOnMetadata = new Set(metadataTimeline.completed().map((instant) => instant.time));
  const pending = dataTimeline.pending().find((instant) => completedOnMetadata.has(instant.time));
  if (pending !== undefined) return instantTimeMinusMillis(pending.time, 1);
  return newInstantTime([...dataTimeline.allTimes(), ...metadataTimeline.allTimes()], now, zone);
}

/** HoodieInstantTimeGenerator.instantTimeMinusMillis: wall-clock arithmetic on the 17-digit time. */
export function instantTimeMinusMillis(time: string, millis: number): string {
  const date = parseInstantTime(time, 'UTC');
  if (date === undefined) {
    throw new HudiError(`instant ${time} is not a time Hudi can take milliseconds from`, { fix: 'the data timeline is damaged; repair it with Hudi' });
  }
  return formatInstantTime(new Date(date.getTime() - millis), 'UTC');
}

// ---------------------------------------------------------------------------------------------------------------
// The plan

/** One partition's listing, sliced by completion time (reader-1x's view of it). */
export async function metadataSlices1x(
  storage: Storage,
  partition: Metadata1xPartition,
  timeline: Timeline,
  completionTimes: CompletionTimes,
): Promise<MergedFileSlice[]> {
  const folder = `${METADATA_TABLE_FOLDER}/${partition}`;
  const prefix = METADATA_1X_PARTITIONS[partition].prefix;
  const listing = (await storage.listDir(folder)).files
    .map((file) => ({ name: fileNameOf(file.path), size: file.size }))
    .filter((file) => file.name.startsWith(prefix) || file.name.startsWith(`.${prefix}`));
  const last = timeline.instants.at(-1)?.time;
  return sliceByCompletionTime(
    { partitionPath: folder, files: listing },
    {
      timeline,
      completionTimes,
      queryInstant: last,
      replacedFileGroups: new Set(),
      pendingCompactions: new Map(),
      baseFileExtension: 'hfile',
    },
  ).merged;
}

/**
 * generateCompactionPlan at `instantTime`: per partition (in `partitions`' order), per file group with log files in
 * its latest slice, an operation over its base file and the log files completed before `instantTime`. Undefined when
 * no log file is left (Hudi then schedules nothing).
 */
export async function planCompaction1x(
  storage: Storage,
  timeline: Timeline,
  partitions: readonly Metadata1xPartition[],
  instantTime: string,
): Promise<CompactionPlan | undefined> {
  const completionTimes = await metadataCompletionTimes1x(storage, timeline);
  const operations: CompactionOperation[] = [];
  let logFiles = 0;
  for (const partition of partitions) {
    for (const slice of await metadataSlices1x(storage, partition, timeline, completionTimes)) {
      if (slice.logFiles.length === 0) continue;
      const logs = slice.logFiles.filter((log) => {
        const completion = completionTimes.completionTimeFor(instantTime, log.name.baseInstant);
        return completion !== undefined && compareInstantTimes(completion, instantTime) < 0;
      });
      logFiles += logs.length;
      operations.push({
        baseInstantTime: slice.baseInstantTime,
        deltaFilePaths: logs.map((log) => fileNameOf(log.path)),
        dataFilePath: slice.baseFile?.fileName ?? null,
        fileId: slice.fileId,
        partitionPath: partition,
        metrics: sliceMetrics(
          slice.baseFile?.size,
          logs.map((log) => log.size),
        ),
        bootstrapFilePath: null,
      });
    }
  }
  if (operations.length === 0 || logFiles === 0) return undefined;
  return { operations, extraMetadata: {}, version: COMPACTION_PLAN_VERSION, strategy: null, preserveHoodieMetadata: false };
}

// ---------------------------------------------------------------------------------------------------------------
// Running it

export interface Compaction1xContext {
  readonly version: MetadataTableVersion1x;
  /** The metadata timeline as loaded before the compaction was scheduled. */
  readonly metadataTimeline: Timeline;
  /** getValidInstantTimestamps against the data timeline (reader-1x's validInstants1x). */
  readonly validInstants: ReadonlySet<string>;
  readonly lease?: LockLease;
  /** Fault injection for tests: called after each storage write. */
  readonly afterStorageWrite?: (what: string) => Promise<void>;
}

export interface Compacted1xFile {
  readonly partition: Metadata1xPartition;
  readonly fileId: string;
  /** Relative to the metadata table: `<partition>/<base file>`. */
  readonly path: string;
  readonly records: number;
  readonly bytes: number;
}

export interface Compaction1xResult {
  readonly instantTime: string;
  readonly completionTime: string | undefined;
  readonly plan: CompactionPlan;
  readonly files: readonly Compacted1xFile[];
  readonly millis: number;
}

/** Schedule compaction `instantTime` with `plan` (requested, inflight), run every operation, then complete it. */
export async function scheduleAndRunCompaction1x(
  storage: Storage,
  instantTime: string,
  plan: CompactionPlan,
  context: Compaction1xContext,
): Promise<Compaction1xResult> {
  const started = Date.now();
  const step = context.afterStorageWrite ?? (async () => {});
  await context.lease?.assertHeld();
  await createRequested(storage, layout(), instantTime, 'compaction', encodeCompactionPlan(plan));
  await step('compaction requested');
  await transitionToInflight(storage, layout(), instantTime, 'compaction');
  await step('compaction inflight');
  const stats: WriteStat[] = [];
  const files: Compacted1xFile[] = [];
  // One file group at a time: a file group's records are held in memory while its base file is built.
  for (const [ordinal, operation] of plan.operations.entries()) {
    const stat = await compactOperation1x(storage, instantTime, operation, ordinal, context);
    if (stat === undefined) continue;
    stats.push(stat);
    files.push({
      partition: operation.partitionPath as Metadata1xPartition,
      fileId: operation.fileId,
      path: stat.path!,
      records: stat.numWrites,
      bytes: stat.fileSizeInBytes,
    });
    await step(`base file ${stat.path}`);
  }
  const partitionToWriteStats: Record<string, WriteStat[]> = {};
  for (const stat of stats) (partitionToWriteStats[stat.partitionPath!] ??= []).push(stat);
  const metadata: CommitMetadata = {
    partitionToWriteStats,
    compacted: true,
    extraMetadata: { schema: metadataVersionFacts(context.version).schemaText },
    operationType: 'COMPACT',
  };
  await context.lease?.assertHeld();
  const completed = await transitionToCompleted(storage, layout(), instantTime, 'commit', layout().encodeCommitMetadata(metadata, 'commit'));
  await step('compaction completed');
  return { instantTime, completionTime: completed.completionTime, plan, files, millis: Date.now() - started };
}

/** A key's state in the log scanner: the record and whether it came out of combineMetadataPayloads. */
interface LogEntry {
  readonly record: MergedRecord;
  readonly combined: boolean;
}

/** A column-stats or bloom-filter tombstone (not a delete block's key). */
const isStoredTombstone = (record: MergedRecord): boolean => !isDeletedRecord(record) && isTombstone(record);

/**
 * HoodieMetadataPayload.isDeletedRecord of a scanned key: a delete, or a column-stats or bloom-filter tombstone that
 * a merge produced (the payload combineMetadataPayloads builds takes their isDeleted; one read as it was stored
 * does not).
 */
function payloadDeleted(entry: LogEntry): boolean {
  return isDeletedRecord(entry.record) || (entry.combined && isStoredTombstone(entry.record));
}

/**
 * HoodieMergedLogRecordScanner with HoodieAvroRecordMerger: a record after a deleted state (a delete, or a merged
 * tombstone) replaces it; otherwise the two combine (combineAndGetUpdateValue).
 */
function scanMerge(older: LogEntry | undefined, newer: MetadataRecord): LogEntry {
  if (older === undefined || payloadDeleted(older)) return { record: newer, combined: false };
  return { record: mergeRecords(older.record, newer), combined: true };
}

function logNameOf(name: string, location: string): LogFileName {
  const parsed = parseLogFileName(name);
  if (parsed === undefined) {
    throw new HudiError(`${name} in a compaction plan is not a log file name`, { location, fix: 'the plan is damaged; let Hudi roll the compaction back' });
  }
  return parsed;
}

async function compactOperation1x(
  storage: Storage,
  instantTime: string,
  operation: CompactionOperation,
  ordinal: number,
  context: Compaction1xContext,
): Promise<WriteStat | undefined> {
  const started = Date.now();
  const partition = operation.partitionPath;
  if (!(partition in METADATA_1X_PARTITIONS)) {
    throw new HudiError(`compaction ${instantTime} names metadata-table partition ${partition}, which this build does not compact`, {
      location: storage.uriOf(`${METADATA_1X_TIMELINE_FOLDER}/${instantTime}.compaction.requested`),
      fix: 'let Hudi finish this compaction',
    });
  }
  const folder = `${METADATA_TABLE_FOLDER}/${partition}`;
  const listing = new Map((await storage.listDir(folder)).files.map((file) => [fileNameOf(file.path), file]));
  const names = [...operation.deltaFilePaths, ...(operation.dataFilePath === null ? [] : [operation.dataFilePath])];
  const missing = names.filter((name) => !listing.has(name));
  if (missing.length > 0) {
    throw new HudiError(`compaction ${instantTime} reads ${missing.join(', ')} in ${partition}, which are gone`, {
      location: storage.uriOf(`${folder}/${missing[0]}`),
      fix: 'something deleted files of the latest file slice; rebuild the metadata table (a Spark write with hoodie.metadata.enable=false, then one with it on)',
    });
  }
  const base = operation.dataFilePath === null ? undefined : listing.get(operation.dataFilePath)!;
  // The scanner's latest instant: the last completed commit, rollback or deltacommit of the metadata timeline.
  const maxInstant = context.metadataTimeline
    .completed()
    .filter((instant) => instant.action === 'commit' || instant.action === 'rollback' || instant.action === 'deltacommit')
    .at(-1)?.time;
  const inputs = await readSliceInputs1x(
    storage,
    partition as Metadata1xPartition,
    {
      baseFile:
        base === undefined
          ? undefined
          : {
              partitionPath: folder,
              fileId: operation.fileId,
              writeToken: '',
              instantTime: operation.baseInstantTime,
              fileName: operation.dataFilePath!,
              path: base.path,
              size: base.size,
            },
      logFiles: operation.deltaFilePaths.map((name) => {
        const file = listing.get(name)!;
        return { path: file.path, size: file.size, name: logNameOf(name, storage.uriOf(file.path)) };
      }),
    },
    (time) => context.validInstants.has(time) && (maxInstant === undefined || compareInstantTimes(time, maxInstant) <= 0),
  );
  const scanned = Date.now();
  const logs = new Map<string, LogEntry>();
  for (const block of inputs.blocks) {
    if (block.kind === 'records') for (const record of block.records) logs.set(record.key, scanMerge(logs.get(record.key), record));
    else for (const key of block.keys) logs.set(key, { record: { key, deleted: true }, combined: false });
  }
  // HoodieCompactor: a slice whose logs hold nothing and that has no base file writes nothing.
  if (logs.size === 0 && base === undefined) return undefined;

  const out = new Map<string, MetadataRecord>();
  let updates = 0;
  let deletes = 0;
  for (const record of inputs.base) {
    const entry = logs.get(record.key);
    if (entry === undefined) {
      out.set(record.key, record);
      continue;
    }
    logs.delete(record.key);
    // HoodieSortedMergeHandle: combineAndGetUpdateValue(base record): preCombine on the scanned payload.
    if (payloadDeleted(entry)) {
      deletes += 1;
      continue;
    }
    const merged = mergeRecords(record, entry.record);
    if (isDeletedRecord(merged) || isStoredTombstone(merged)) {
      deletes += 1;
      continue;
    }
    out.set(record.key, merged as MetadataRecord);
    updates += 1;
  }
  let inserts = 0;
  for (const [key, entry] of logs) {
    // getInsertValue: empty for a deleted payload; a lone stored record (even a column-stats tombstone) is written.
    if (payloadDeleted(entry)) {
      deletes += 1;
      continue;
    }
    out.set(key, entry.record as MetadataRecord);
    inserts += 1;
  }

  const facts = metadataVersionFacts(context.version);
  const name = `${operation.fileId}_${ordinal}-0-1_${instantTime}.hfile`;
  const type = metadataRecordType1x(context.version);
  const bloom = createBloomFilter(facts.baseFileBloomFilter);
  const records: { key: string; value: Uint8Array }[] = [];
  for (const record of out.values()) {
    bloom.add(record.key);
    records.push({ key: record.key, value: encodeMetadataRecord(record, type, name) });
  }
  const bytes = writeHudiBaseHFile(records, {
    schema: facts.writerSchemaText,
    gzipLevel: GZIP_LEVEL,
    bloomFilter: { typeCode: bloom.typeCode, serialized: bloom.serialize() },
  });
  await context.lease?.assertHeld();
  await storage.put(`${folder}/${name}`, bytes);
  const scanMillis = scanned - started;
  const writeMillis = Date.now() - scanned;
  const logBytes = operation.metrics['TOTAL_LOG_FILES_SIZE'] ?? 0;
  const inLogs = new Set(inputs.blocks.flatMap((block) => (block.kind === 'records' ? block.records.map((record) => record.key) : block.keys)));
  return newWriteStat({
    fileId: operation.fileId,
    path: `${partition}/${name}`,
    partitionPath: partition,
    prevCommit: base === undefined ? 'null' : operation.baseInstantTime,
    numWrites: records.length,
    numDeletes: deletes,
    numUpdateWrites: updates,
    numInserts: inserts,
    totalWriteBytes: bytes.length,
    totalLogRecords: inputs.logRecords,
    totalLogFilesCompacted: operation.deltaFilePaths.length,
    totalLogSizeCompacted: logBytes,
    totalUpdatedRecordsCompacted: inLogs.size,
    totalLogBlocks: inputs.blocks.length,
    totalCorruptLogBlock: inputs.corruptBlocks,
    totalRollbackBlocks: inputs.rollbackBlocks,
    fileSizeInBytes: bytes.length,
    runtimeStats: {
      totalScanTime: scanMillis,
      totalUpsertTime: base === undefined ? 0 : writeMillis,
      totalCreateTime: base === undefined ? writeMillis : 0,
    },
    ...(base === undefined ? {} : { prevBaseFile: operation.dataFilePath }),
    ...(facts.compactionLogReadTime ? { totalLogReadTimeMs: scanMillis } : {}),
  });
}
