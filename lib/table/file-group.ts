/**
 * File groups sliced by completion time (timeline layout 2, Hudi 1.x): HoodieFileGroup and the parts of
 * AbstractTableFileSystemView a snapshot read uses (buildFileGroups, isFileSliceCommitted, filterUncommittedLogs,
 * fetchMergedFileSlice), at Hudi 1.0.2 / 1.1.1. Layout 1's slicing by base instant is in fs-view.ts.
 *
 * A log file is named after the delta commit that wrote it. It joins the newest slice whose base instant is at or
 * before that delta commit's completion time (a pending one: the newest slice), so a log written while a compaction
 * was requested but completed after it belongs to the compaction's slice.
 */

import { compareLogFileNames, type LogFile, parseLogFileName } from '../log-format/index.js';
import type { CompletionTimes } from '../timeline/completion-times.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { compareInstantTimes, type Instant } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';
import {
  type BaseFile,
  type BaseFileExtension,
  type CompletionSlices,
  type FileGroup,
  type FileSlice,
  joinPartitionPath,
  type ListedPartition,
  type MergedFileSlice,
  parseBaseFileName,
} from './file-system-view.js';

export interface CompletionSlicingInputs {
  /** The whole active timeline (not cut for time travel: slices are cut by the query instant instead). */
  readonly timeline: Timeline;
  readonly completionTimes: CompletionTimes;
  /** The as-of instant, or the last instant of the read timeline. */
  readonly queryInstant: string | undefined;
  /** File groups replaced by a completed replacecommit requested at or before the query instant. */
  readonly replacedFileGroups: ReadonlySet<string>;
  /** File groups in a pending compaction plan (fileGroupKey → the compaction's instant). */
  readonly pendingCompactions: ReadonlyMap<string, string>;
  /** The base-file format: Parquet for data tables, HFile for the metadata table. */
  readonly baseFileExtension?: BaseFileExtension;
}

export interface RawSlice {
  readonly baseInstant: string;
  baseFile: BaseFile | undefined;
  readonly logFiles: LogFile[];
}

/**
 * BaseHoodieTableFileIndex.getActiveTimeline: completed commits, delta commits, replacecommits and clusterings, and
 * compactions in any state (a pending compaction's slice takes new logs).
 */
export function readTimelineInstants(timeline: Timeline): Instant[] {
  return timeline.instants.filter((instant) =>
    instant.action === 'compaction' ? true : instant.state === 'COMPLETED' && ['commit', 'deltacommit', 'replacecommit'].includes(instant.action),
  );
}

/** The query instant of a read without --as-of: the last instant of the read timeline (by requested time). */
export function latestQueryInstant(timeline: Timeline): string | undefined {
  return readTimelineInstants(timeline).at(-1)?.time;
}

/**
 * Every file slice of each file group of a partition, newest first, with its base file and the log files that join it
 * by completion time (HoodieFileGroup's slices before isFileSliceCommitted is asked).
 */
export function allFileSlices(partition: ListedPartition, inputs: CompletionSlicingInputs): Map<string, RawSlice[]> {
  const byGroup = new Map<string, RawSlice[]>();
  const slicesOf = (fileId: string): RawSlice[] => {
    const found = byGroup.get(fileId);
    if (found !== undefined) return found;
    const created: RawSlice[] = [];
    byGroup.set(fileId, created);
    return created;
  };
  // Newest first, as HoodieFileGroup's TreeMap with the reverse comparator.
  const sliceAt = (slices: RawSlice[], baseInstant: string): RawSlice => {
    const found = slices.find((slice) => slice.baseInstant === baseInstant);
    if (found !== undefined) return found;
    const created: RawSlice = { baseInstant, baseFile: undefined, logFiles: [] };
    slices.push(created);
    slices.sort((a, b) => compareInstantTimes(b.baseInstant, a.baseInstant));
    return created;
  };
  const logsByGroup = new Map<string, LogFile[]>();
  for (const file of [...partition.files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const base = parseBaseFileName(file.name, inputs.baseFileExtension);
    if (base !== undefined) {
      // addBaseFile: one base file per base instant (retried tasks' duplicates: the last listed wins).
      sliceAt(slicesOf(base.fileId), base.instantTime).baseFile = {
        partitionPath: partition.partitionPath,
        ...base,
        fileName: file.name,
        path: joinPartitionPath(partition.partitionPath, file.name),
        size: file.size,
      };
      continue;
    }
    // Hadoop's local checksums of log files (`..<log name>.crc`) look like log names; Hadoop hides them from Hudi.
    if (file.name.startsWith('..') && file.name.endsWith('.crc')) continue;
    const name = parseLogFileName(file.name);
    if (name === undefined || name.extension !== 'log' || name.suffix !== '') continue;
    slicesOf(name.fileId);
    logsByGroup.set(name.fileId, [
      ...(logsByGroup.get(name.fileId) ?? []),
      { path: joinPartitionPath(partition.partitionPath, file.name), name, size: file.size },
    ]);
  }

  for (const [fileId, slices] of byGroup) {
    const pendingCompaction = inputs.pendingCompactions.get(fileGroupKey(partition.partitionPath, fileId));
    // The slice of a pending compaction comes before the logs, so logs completed after it join it.
    if (pendingCompaction !== undefined) sliceAt(slices, pendingCompaction);
    for (const log of (logsByGroup.get(fileId) ?? []).sort((a, b) => compareLogFileNames(a.name, b.name))) {
      sliceAt(slices, baseInstantOfLog(slices, log.name.baseInstant, inputs.completionTimes)).logFiles.push(log);
    }
  }
  return byGroup;
}

/**
 * The slice each log file of a partition joins (its base instant), by file name: what the cleaner keeps or deletes
 * with the slice (HoodieFileGroup's slices, as CleanPlanner sees them through getAllFileGroupsStateless).
 */
export function logFileSlices(partition: ListedPartition, inputs: CompletionSlicingInputs): Map<string, string> {
  const bases = new Map<string, string>();
  for (const slices of allFileSlices(partition, inputs).values())
    for (const slice of slices) for (const log of slice.logFiles) bases.set(fileNameOf(log.path), slice.baseInstant);
  return bases;
}

/** One partition's file groups: the committed base-file slices (newest first) and the merged slice a snapshot reads. */
export function sliceByCompletionTime(partition: ListedPartition, inputs: CompletionSlicingInputs): CompletionSlices {
  const readInstants = readTimelineInstants(inputs.timeline);
  const inReadTimeline = new Set(readInstants.map((instant) => instant.time));
  const first = readInstants[0]?.time;
  const last = readInstants.at(-1)?.time;
  // HoodieFileGroup.isFileSliceCommitted
  const sliceCommitted = (baseInstant: string): boolean =>
    last !== undefined &&
    compareInstantTimes(baseInstant, last) <= 0 &&
    (inReadTimeline.has(baseInstant) || (first !== undefined && compareInstantTimes(baseInstant, first) < 0));

  const byGroup = allFileSlices(partition, inputs);
  const groups: FileGroup[] = [];
  const merged: MergedFileSlice[] = [];
  for (const [fileId, slices] of [...byGroup].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const key = fileGroupKey(partition.partitionPath, fileId);
    const pendingCompaction = inputs.pendingCompactions.get(key);
    if (inputs.replacedFileGroups.has(key)) continue;
    const committed = slices.filter((slice) => sliceCommitted(slice.baseInstant));
    groups.push({
      partitionPath: partition.partitionPath,
      fileId,
      slices: committed.flatMap((slice): FileSlice[] =>
        slice.baseFile === undefined ? [] : [{ partitionPath: partition.partitionPath, fileId, baseInstantTime: slice.baseInstant, baseFile: slice.baseFile }],
      ),
    });
    const query = inputs.queryInstant;
    if (query === undefined) continue;
    // getLatestMergedFileSlicesBeforeOrOn: the newest committed slice at or before the query instant.
    const latest = committed.find((slice) => compareInstantTimes(slice.baseInstant, query) <= 0);
    if (latest === undefined) continue;
    // filterUncommittedLogs (the latest slice only), then fetchMergedFileSlice.
    const logs = latest.logFiles.filter((log) => inputs.completionTimes.isCompleted(log.name.baseInstant));
    let result: MergedFileSlice = {
      partitionPath: partition.partitionPath,
      fileId,
      baseInstantTime: latest.baseInstant,
      baseFile: latest.baseFile,
      logFiles: logs,
    };
    if (pendingCompaction === latest.baseInstant) {
      const previous = committed.find((slice) => compareInstantTimes(slice.baseInstant, pendingCompaction) < 0);
      if (previous !== undefined) {
        result = {
          partitionPath: partition.partitionPath,
          fileId,
          baseInstantTime: previous.baseInstant,
          baseFile: previous.baseFile,
          logFiles: [...previous.logFiles, ...logs].sort((a, b) => compareLogFileNames(a.name, b.name)),
        };
      }
    }
    merged.push({ ...result, logFiles: [...result.logFiles].sort((a, b) => compareLogFileNames(a.name, b.name)) });
  }
  return { groups, merged };
}

/** HoodieFileGroup.getBaseInstantTime: the slice a log file of delta commit `deltaCommit` joins. */
function baseInstantOfLog(slices: readonly RawSlice[], deltaCommit: string, completionTimes: CompletionTimes): string {
  const newest = slices[0];
  if (newest === undefined) return deltaCommit;
  const completion = completionTimes.completionTimeFor(newest.baseInstant, deltaCommit);
  if (completion === undefined) return newest.baseInstant;
  return slices.find((slice) => compareInstantTimes(completion, slice.baseInstant) >= 0)?.baseInstant ?? deltaCommit;
}
