/**
 * The timeline layout of a table (Hudi's TimelineLayout): where its active timeline lives, how instant files are
 * named and parsed, how completed writes' metadata is encoded, and how file slices are cut. The one place the
 * difference between layout 1 (table versions 5 and 6, Hudi 0.x) and layout 2 (table versions 8 and 9, Hudi 1.x)
 * is written down; everything else asks the table's layout (docs/hudi-1x-format.md has the facts and their classes).
 */
import { HudiError } from '../errors.js';
import {
  decodeCommitMetadataAvro,
  encodeCommitMetadataAvro,
  type HoodieCommitMetadataRecord,
  type HoodieReplaceCommitMetadataRecord,
  type HoodieWriteStatRecord,
} from './avro-files.js';
import { type CommitMetadata, newWriteStat, parseCommitMetadata, serializeCommitMetadata, type WriteOperationType, type WriteStat } from './commit-metadata.js';
import {
  compareInstantTimes,
  formatInstantTime,
  type Instant,
  type InstantAction,
  type InstantState,
  instantFileName,
  isValidInstantTime,
  newInstantTime,
  parseInstantFileName,
  type TimelineTimeZone,
} from './instant.js';

/** A file of a timeline folder: its name and when it was last modified (legacy layout-2 names need it). */
export interface TimelineFile {
  readonly name: string;
  readonly modifiedMs: number;
}

export interface TimelineLayout {
  /** hoodie.timeline.layout.version */
  readonly version: 1 | 2;
  /** The active timeline's folder, relative to the table's base path. */
  readonly folder: string;
  /** The action of a pending clustering: `replacecommit` (layout 1) or `clustering` (layout 2); both complete as a replacecommit. */
  readonly clusteringAction: 'replacecommit' | 'clustering';
  /**
   * How log files join file slices: by the base instant in their name (layout 1), or by the completion time of the
   * delta commit in their name (layout 2, HoodieFileGroup.getBaseInstantTime).
   */
  readonly fileSlicing: 'base-instant' | 'completion-time';
  /**
   * What the log scanner does with a data or delete block newer than the query instant: stop reading (0.x's
   * HoodieMergedLogRecordScanner) or skip it and read on (1.x's BaseHoodieLogRecordReader).
   */
  readonly newerLogBlock: 'stop' | 'skip';
  /**
   * Whether `instant` came after time `time` where Hudi counts instants since another (the delta commits since the
   * latest compaction): by requested time (layout 1), or by completion time, a pending one by its requested time
   * (layout 2, findInstantsModifiedAfterByCompletionTime).
   */
  modifiedAfter(instant: Instant, time: string): boolean;
  /** How a delta commit writes its log files (table versions 8+ in Hudi 1.x's write handles; see LogWrites). */
  readonly logWrites: LogWrites;
  /**
   * How a failed compaction goes back to its plan: its outputs and inflight file deleted (layout 1, as proven against
   * Hudi 0.15), or through a rollback instant naming it, as Hudi 1.x's rollbackInflightCompaction (layout 2).
   */
  readonly compactionRollback: 'delete-outputs' | 'rollback-instant';
  /** The instant a timeline file name stands for; undefined when it is no instant file of this layout. */
  parseFileName(file: TimelineFile): Instant | undefined;
  /** The file name of an instant (a completed one needs its completion time in layout 2). */
  fileName(instant: Instant): string;
  /** The metadata of a completed commit, deltacommit or replacecommit from its file's bytes. */
  decodeCommitMetadata(bytes: Uint8Array, instant: Instant, location: string): CommitMetadata;
  /** The bytes of a commit, deltacommit or replacecommit's metadata (its completed file, or a commit's inflight). */
  encodeCommitMetadata(metadata: CommitMetadata, action: InstantAction): Uint8Array;
  /**
   * The completed instant a pending one becomes. Layout 2 stamps a completion time from the clock, later than every
   * time in `existingTimes` (the folder's requested and completion times, read under the table lock), as Hudi's
   * TimeGenerator does under its lock.
   */
  completedInstant(time: string, action: InstantAction, existingTimes: Iterable<string>, now: Date): Instant;
}

/**
 * How a delta commit names, marks and reports a log file. Layout 1 (HoodieAppendHandle, table version 6): the next
 * version of the latest slice's log, named by the slice's base instant, behind an APPEND marker (a rollback appends a
 * command block); the write stat names the slice (prevCommit its base instant, baseFile, the log files before it).
 * Layout 2 (HoodieWriteHandle.createLogWriter for versions ≥ 8): a new log file named by the delta commit's own
 * instant, version 1 (the next one only when that name exists), behind a CREATE marker (createLogMarkerIfNotExists,
 * so MarkerBasedRollbackStrategy deletes it); the stat's prevCommit is the instant, baseFile empty, logFiles the file.
 */
export interface LogWrites {
  readonly nameInstant: 'slice-base-instant' | 'write-instant';
  readonly marker: 'APPEND' | 'CREATE';
}

const LOG_WRITES_1: LogWrites = Object.freeze({ nameInstant: 'slice-base-instant', marker: 'APPEND' });
const LOG_WRITES_2: LogWrites = Object.freeze({ nameInstant: 'write-instant', marker: 'CREATE' });

/** Layout 1: flat `.hoodie/`, `<time>.<action>[.<state>]`, Jackson JSON commit metadata, slices by base instant. */
export const TIMELINE_LAYOUT_1: TimelineLayout = Object.freeze({
  version: 1,
  folder: '.hoodie',
  clusteringAction: 'replacecommit',
  fileSlicing: 'base-instant',
  newerLogBlock: 'stop',
  modifiedAfter: (instant: Instant, time: string) => compareInstantTimes(instant.time, time) > 0,
  logWrites: LOG_WRITES_1,
  compactionRollback: 'delete-outputs',
  parseFileName: (file: TimelineFile) => parseInstantFileName(file.name),
  fileName: instantFileName,
  decodeCommitMetadata: (bytes: Uint8Array, _instant: Instant, location: string) => parseCommitMetadata(Buffer.from(bytes).toString('utf8'), location),
  encodeCommitMetadata: (metadata: CommitMetadata) => new TextEncoder().encode(serializeCommitMetadata(metadata)),
  completedInstant: (time: string, action: InstantAction): Instant => ({ time, action, state: 'COMPLETED' }),
});

/**
 * ActiveTimelineV2.VALID_EXTENSIONS_IN_ACTIVE_TIMELINE: the extensions (the name after the time part) of instant
 * files, with the action and state each stands for. Anything else in the folder is not an instant to Hudi.
 */
const LAYOUT_2_EXTENSIONS: ReadonlyMap<string, { action: InstantAction; state: InstantState }> = new Map(
  (
    [
      ['.commit', 'commit', 'COMPLETED'],
      ['.inflight', 'commit', 'INFLIGHT'],
      ['.commit.requested', 'commit', 'REQUESTED'],
      ['.deltacommit', 'deltacommit', 'COMPLETED'],
      ['.deltacommit.inflight', 'deltacommit', 'INFLIGHT'],
      ['.deltacommit.requested', 'deltacommit', 'REQUESTED'],
      ['.savepoint', 'savepoint', 'COMPLETED'],
      ['.savepoint.inflight', 'savepoint', 'INFLIGHT'],
      ['.clean', 'clean', 'COMPLETED'],
      ['.clean.requested', 'clean', 'REQUESTED'],
      ['.clean.inflight', 'clean', 'INFLIGHT'],
      ['.compaction.inflight', 'compaction', 'INFLIGHT'],
      ['.compaction.requested', 'compaction', 'REQUESTED'],
      ['.restore.requested', 'restore', 'REQUESTED'],
      ['.restore.inflight', 'restore', 'INFLIGHT'],
      ['.restore', 'restore', 'COMPLETED'],
      ['.logcompaction.inflight', 'logcompaction', 'INFLIGHT'],
      ['.logcompaction.requested', 'logcompaction', 'REQUESTED'],
      ['.rollback', 'rollback', 'COMPLETED'],
      ['.rollback.requested', 'rollback', 'REQUESTED'],
      ['.rollback.inflight', 'rollback', 'INFLIGHT'],
      ['.replacecommit.requested', 'replacecommit', 'REQUESTED'],
      ['.replacecommit.inflight', 'replacecommit', 'INFLIGHT'],
      ['.replacecommit', 'replacecommit', 'COMPLETED'],
      ['.indexing.requested', 'indexing', 'REQUESTED'],
      ['.indexing.inflight', 'indexing', 'INFLIGHT'],
      ['.indexing', 'indexing', 'COMPLETED'],
      ['.schemacommit.requested', 'schemacommit', 'REQUESTED'],
      ['.schemacommit.inflight', 'schemacommit', 'INFLIGHT'],
      ['.schemacommit', 'schemacommit', 'COMPLETED'],
      ['.clustering.requested', 'clustering', 'REQUESTED'],
      ['.clustering.inflight', 'clustering', 'INFLIGHT'],
    ] as const
  ).map(([extension, action, state]) => [extension, { action, state }]),
);

/** InstantFileNameParserV2.NAME_FORMAT: the time part (`<requested>` or `<requested>_<completion>`) and the rest. */
const LAYOUT_2_NAME = /^(\d+(_\d+)?)(\.\w+)(\.\D+)?$/;

/** Parse a layout-2 timeline file name as InstantGeneratorV2.createNewInstant does. */
export function parseLayout2FileName(file: TimelineFile, zone: TimelineTimeZone): Instant | undefined {
  const match = LAYOUT_2_NAME.exec(file.name);
  if (match === null) return undefined;
  const known = LAYOUT_2_EXTENSIONS.get(file.name.slice(match[1]!.length));
  if (known === undefined) return undefined;
  const [time, completion] = match[1]!.split('_') as [string, string | undefined];
  if (!isValidInstantTime(time) || (completion !== undefined && !isValidInstantTime(completion))) return undefined;
  const { action, state } = known;
  if (state !== 'COMPLETED') return completion === undefined ? { time, action, state } : undefined;
  // A 0.x name left in a 1.x timeline: Hudi takes the file's modification time as its completion time.
  if (completion === undefined) return { time, action, state, completionTime: formatInstantTime(new Date(file.modifiedMs), zone), legacy: true };
  return { time, action, state, completionTime: completion };
}

/** InstantFileNameGeneratorV2.getFileName */
export function layout2FileName(instant: Instant): string {
  if (instant.state !== 'COMPLETED') return instantFileName(instant);
  if (instant.legacy === true) return `${instant.time}.${instant.action}`;
  if (instant.completionTime === undefined) {
    throw new HudiError(`instant ${instant.time} (${instant.action}) is completed but has no completion time`, {
      fix: 'a layout-2 timeline names each completed instant <requested>_<completion>.<action>; take the instant from the loaded timeline',
    });
  }
  return `${instant.time}_${instant.completionTime}.${instant.action}`;
}

/** Layout 2 (`TimelineLayoutV2`) for a table whose active timeline is `folder`, its instant times on `zone`'s clock. */
export function timelineLayout2(folder: string, zone: TimelineTimeZone): TimelineLayout {
  return Object.freeze({
    version: 2,
    folder,
    clusteringAction: 'clustering',
    fileSlicing: 'completion-time',
    newerLogBlock: 'skip',
    modifiedAfter: (instant: Instant, time: string) =>
      instant.state === 'COMPLETED' && instant.completionTime !== undefined
        ? compareInstantTimes(instant.completionTime, time) > 0 && instant.time !== time
        : compareInstantTimes(instant.time, time) > 0,
    logWrites: LOG_WRITES_2,
    compactionRollback: 'rollback-instant',
    parseFileName: (file: TimelineFile) => parseLayout2FileName(file, zone),
    fileName: layout2FileName,
    decodeCommitMetadata: decodeLayout2CommitMetadata,
    encodeCommitMetadata: encodeLayout2CommitMetadata,
    completedInstant: (time: string, action: InstantAction, existingTimes: Iterable<string>, now: Date): Instant => ({
      time,
      action,
      state: 'COMPLETED',
      completionTime: newInstantTime([time, ...existingTimes], now, zone),
    }),
  });
}

/** The layout of a table, from hoodie.properties (hoodie.timeline.layout.version, hoodie.timeline.path). */
export function timelineLayoutOf(config: {
  readonly timelineLayoutVersion: number;
  readonly timelinePath: string;
  readonly timelineTimeZone: TimelineTimeZone;
}): TimelineLayout {
  return config.timelineLayoutVersion === 2 ? timelineLayout2(`.hoodie/${config.timelinePath}`, config.timelineTimeZone) : TIMELINE_LAYOUT_1;
}

/**
 * CommitMetadataSerDeV2.deserialize: a legacy instant's file is 0.x JSON; an empty file is an empty metadata; else
 * one Avro HoodieCommitMetadata (HoodieReplaceCommitMetadata for a replacecommit), converted to the POJO's fields.
 */
export function decodeLayout2CommitMetadata(bytes: Uint8Array, instant: Instant, location: string): CommitMetadata {
  if (instant.legacy === true || bytes.length === 0) return parseCommitMetadata(Buffer.from(bytes).toString('utf8'), location);
  const replace = instant.action === 'replacecommit';
  const record: HoodieCommitMetadataRecord & { partitionToReplaceFileIds?: Record<string, string[]> | null } = replace
    ? decodeCommitMetadataAvro('replace', bytes, location)
    : decodeCommitMetadataAvro('commit', bytes, location);
  const partitionToWriteStats: Record<string, WriteStat[]> = {};
  for (const [partition, stats] of Object.entries(record.partitionToWriteStats ?? {})) {
    partitionToWriteStats[partition] = stats.map((stat) => writeStatOf(stat));
  }
  const metadata: CommitMetadata = {
    partitionToWriteStats,
    compacted: record.compacted === true,
    extraMetadata: { ...(record.extraMetadata ?? {}) },
    operationType: (record.operationType ?? null) as WriteOperationType | null,
  };
  if (replace) {
    metadata.partitionToReplaceFileIds = {};
    for (const [partition, ids] of Object.entries(record.partitionToReplaceFileIds ?? {})) metadata.partitionToReplaceFileIds[partition] = [...ids];
  }
  return metadata;
}

/** Jackson's convertValue of an Avro HoodieWriteStat to the POJO: absent numbers are 0, as the POJO's fields start. */
function writeStatOf(stat: HoodieWriteStatRecord): WriteStat {
  const out = newWriteStat({
    fileId: stat.fileId ?? '',
    path: stat.path,
    partitionPath: stat.partitionPath,
    prevCommit: stat.prevCommit ?? 'null',
    numWrites: stat.numWrites ?? 0,
    numDeletes: stat.numDeletes ?? 0,
    numUpdateWrites: stat.numUpdateWrites ?? 0,
    numInserts: stat.numInserts ?? 0,
    totalWriteBytes: stat.totalWriteBytes ?? 0,
    totalWriteErrors: stat.totalWriteErrors ?? 0,
    tempPath: stat.tempPath,
    totalLogRecords: stat.totalLogRecords ?? 0,
    totalLogFilesCompacted: stat.totalLogFilesCompacted ?? 0,
    totalLogSizeCompacted: stat.totalLogSizeCompacted ?? 0,
    totalUpdatedRecordsCompacted: stat.totalUpdatedRecordsCompacted ?? 0,
    totalLogBlocks: stat.totalLogBlocks ?? 0,
    totalCorruptLogBlock: stat.totalCorruptLogBlock ?? 0,
    totalRollbackBlocks: stat.totalRollbackBlocks ?? 0,
    fileSizeInBytes: stat.fileSizeInBytes ?? 0,
    minEventTime: stat.minEventTime,
    maxEventTime: stat.maxEventTime,
    cdcStats: stat.cdcStats,
    ...(stat.prevBaseFile === null ? {} : { prevBaseFile: stat.prevBaseFile }),
    ...(stat.totalLogReadTimeMs === null || stat.totalLogReadTimeMs === 0 ? {} : { totalLogReadTimeMs: stat.totalLogReadTimeMs }),
    runtimeStats:
      stat.runtimeStats === null
        ? null
        : {
            totalScanTime: stat.runtimeStats.totalScanTime ?? 0,
            totalUpsertTime: stat.runtimeStats.totalUpsertTime ?? 0,
            totalCreateTime: stat.runtimeStats.totalCreateTime ?? 0,
          },
  });
  if (stat.logFiles !== null || stat.logVersion !== null) {
    return {
      ...out,
      delta: { logVersion: stat.logVersion ?? 0, logOffset: stat.logOffset ?? 0, baseFile: stat.baseFile ?? '', logFiles: [...(stat.logFiles ?? [])] },
    };
  }
  return out;
}

/**
 * CommitMetadataSerDeV2's writer: MetadataConversionUtils.convertCommitMetadataToAvro is Jackson's convertValue of
 * the POJO into the Avro class, so a field the POJO has keeps its value (numbers 0 when unset) and a field only the
 * Avro record has (version, totalLogFiles; a plain stat's log fields) stays null.
 */
export function encodeLayout2CommitMetadata(metadata: CommitMetadata, action: InstantAction): Uint8Array {
  const partitionToWriteStats: Record<string, HoodieWriteStatRecord[]> = {};
  for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) partitionToWriteStats[partition] = stats.map(writeStatRecordOf);
  const record: HoodieCommitMetadataRecord = {
    partitionToWriteStats,
    compacted: metadata.compacted,
    extraMetadata: { ...metadata.extraMetadata },
    version: null,
    operationType: metadata.operationType,
  };
  if (action !== 'replacecommit') return encodeCommitMetadataAvro('commit', record);
  const replaced: Record<string, string[]> = {};
  for (const [partition, ids] of Object.entries(metadata.partitionToReplaceFileIds ?? {})) replaced[partition] = [...ids];
  const replace: HoodieReplaceCommitMetadataRecord = { ...record, partitionToReplaceFileIds: replaced };
  return encodeCommitMetadataAvro('replace', replace);
}

function writeStatRecordOf(stat: WriteStat): HoodieWriteStatRecord {
  return {
    fileId: stat.fileId,
    path: stat.path,
    prevCommit: stat.prevCommit,
    numWrites: stat.numWrites,
    numDeletes: stat.numDeletes,
    numUpdateWrites: stat.numUpdateWrites,
    totalWriteBytes: stat.totalWriteBytes,
    totalWriteErrors: stat.totalWriteErrors,
    partitionPath: stat.partitionPath,
    totalLogRecords: stat.totalLogRecords,
    totalLogFiles: null,
    totalUpdatedRecordsCompacted: stat.totalUpdatedRecordsCompacted,
    numInserts: stat.numInserts,
    totalLogBlocks: stat.totalLogBlocks,
    totalCorruptLogBlock: stat.totalCorruptLogBlock,
    totalRollbackBlocks: stat.totalRollbackBlocks,
    fileSizeInBytes: stat.fileSizeInBytes,
    logVersion: stat.delta?.logVersion ?? null,
    logOffset: stat.delta?.logOffset ?? null,
    baseFile: stat.delta?.baseFile ?? null,
    logFiles: stat.delta === undefined ? null : [...stat.delta.logFiles],
    cdcStats: stat.cdcStats === null ? null : { ...stat.cdcStats },
    prevBaseFile: stat.prevBaseFile ?? null,
    minEventTime: stat.minEventTime,
    maxEventTime: stat.maxEventTime,
    runtimeStats: stat.runtimeStats === null ? null : { ...stat.runtimeStats },
    totalLogFilesCompacted: stat.totalLogFilesCompacted,
    totalLogReadTimeMs: stat.totalLogReadTimeMs ?? 0,
    totalLogSizeCompacted: stat.totalLogSizeCompacted,
    tempPath: stat.tempPath,
    numUpdates: 0,
  };
}
