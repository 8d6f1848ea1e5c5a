/**
 * File-system view: file groups and file slices per partition, as Hudi's HoodieTableFileSystemView sees them.
 * The copy-on-write view (fileGroups, latestBaseFiles: a slice is one base file version) is also a merge-on-read
 * table's read-optimized view; latestMergedSlices adds the log files for snapshot reads.
 */

import { CDC_LOG_SUFFIX, compareLogFileNames, type LogFile, parseLogFileName } from '../log-format/index.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { compareInstantTimes, INSTANT_TIME_PATTERN } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';

export interface BaseFile {
  readonly partitionPath: string;
  readonly fileId: string;
  readonly writeToken: string;
  readonly instantTime: string;
  readonly fileName: string;
  /** Path relative to the table's base path. */
  readonly path: string;
  readonly size: number;
}

export interface FileSlice {
  readonly partitionPath: string;
  readonly fileId: string;
  readonly baseInstantTime: string;
  readonly baseFile: BaseFile;
}

export interface FileGroup {
  readonly partitionPath: string;
  readonly fileId: string;
  /** Committed slices, newest first. */
  readonly slices: readonly FileSlice[];
}

/**
 * A merge-on-read file slice: the base file (absent while the group has only logs, e.g. the slice opened by a
 * pending compaction) and the log files of its base instant, in Hudi's log order.
 */
export interface MergedFileSlice {
  readonly partitionPath: string;
  readonly fileId: string;
  readonly baseInstantTime: string;
  readonly baseFile: BaseFile | undefined;
  readonly logFiles: readonly LogFile[];
  /**
   * A CDC table's `.cdc` log files of the slice, in log order, when it has any: Hudi's view counts them among the
   * slice's log files (no small-file inserts into it), while its log scanners skip them, as merges here do.
   */
  readonly cdcLogFiles?: readonly LogFile[];
}

/** The base-file formats Hudi names files for: data tables' Parquet, the metadata table's HFile. */
export type BaseFileExtension = 'parquet' | 'hfile';
const baseFilePattern = (extension: BaseFileExtension) => new RegExp(`^([^_]+)_([^_]+)_(${INSTANT_TIME_PATTERN})\\.${extension}$`);
const BASE_FILE: Record<BaseFileExtension, RegExp> = { parquet: baseFilePattern('parquet'), hfile: baseFilePattern('hfile') };

/**
 * Parse `<fileId>_<writeToken>_<instantTime>.<extension>` (FSUtils.getFileId / getCommitTime split on `_`);
 * undefined for anything else (markers, .crc, partition metadata, a time outside Hudi's instant grammar…).
 */
export function parseBaseFileName(
  fileName: string,
  extension: BaseFileExtension = 'parquet',
): { fileId: string; writeToken: string; instantTime: string } | undefined {
  const match = BASE_FILE[extension].exec(fileName);
  if (!match) return undefined;
  return { fileId: match[1]!, writeToken: match[2]!, instantTime: match[3]! };
}

export function baseFileName(fileId: string, writeToken: string, instantTime: string): string {
  return `${fileId}_${writeToken}_${instantTime}.parquet`;
}

const DOT = 46;
/** table.ts's PARTITION_METAFILE (not imported: table.ts imports this module). */
const PARTITION_METAFILE_NAME = '.hoodie_partition_metadata';

export function joinPartitionPath(partitionPath: string, fileName: string): string {
  return partitionPath === '' ? fileName : `${partitionPath}/${fileName}`;
}

export interface ListedPartition {
  readonly partitionPath: string;
  readonly files: readonly { readonly name: string; readonly size: number }[];
}

/** One partition's file groups (committed base-file slices, newest first) and the merged slice a snapshot reads of each. */
export interface CompletionSlices {
  readonly groups: FileGroup[];
  readonly merged: MergedFileSlice[];
}

export interface ViewInputs {
  readonly partitions: readonly ListedPartition[];
  /**
   * The timeline the view is built against: layout 1 already cut with asOf for time travel; layout 2 whole (its
   * slices are cut by `completionSlicing.queryInstant`).
   */
  readonly timeline: Timeline;
  /** What a snapshot reads as of: the as-of time, else the latest completed write (layout 2: completionSlicing's). */
  readonly queryInstant?: string;
  /** Layout 2: each partition's file groups and merged slices, sliced by completion time (file-group.ts). */
  readonly completionSlicing?: { readonly queryInstant: string | undefined; readonly byPartition: ReadonlyMap<string, CompletionSlices> };
  /** File groups named by completed replacecommits on that timeline. */
  readonly replacedFileGroups: ReadonlySet<string>;
  /** File groups in pending clustering plans (fileGroupKey). */
  readonly pendingClusteringFileGroups: ReadonlySet<string>;
}

export class FileSystemView {
  private readonly groupsByPartition: Map<string, FileGroup[]>;
  /** Layout 1 builds a partition's merged slices on first use (undefined until then): copy-on-write reads never do. */
  private readonly mergedByPartition: Map<string, MergedFileSlice[] | undefined>;
  /** Layout 1: the listings, for the merged slices built on first use. */
  private readonly listedByPartition = new Map<string, ListedPartition>();
  /** Layout 1: partitions with a name that may be a log file's (they start with a dot). */
  private readonly logCandidates = new Set<string>();

  constructor(private readonly inputs: ViewInputs) {
    this.groupsByPartition = new Map();
    this.mergedByPartition = new Map();
    if (inputs.timeline.layout.fileSlicing === 'completion-time') {
      if (inputs.completionSlicing === undefined) throw new Error('a layout-2 file system view needs its slices cut by completion time');
      for (const partition of inputs.partitions) {
        const sliced = inputs.completionSlicing.byPartition.get(partition.partitionPath) ?? { groups: [], merged: [] };
        this.groupsByPartition.set(partition.partitionPath, sliced.groups);
        this.mergedByPartition.set(partition.partitionPath, sliced.merged);
      }
      return;
    }
    for (const partition of inputs.partitions) {
      const byFileId = new Map<string, FileSlice[]>();
      for (const file of partition.files) {
        if (file.name.charCodeAt(0) === DOT && file.name !== PARTITION_METAFILE_NAME) this.logCandidates.add(partition.partitionPath);
        const parsed = parseBaseFileName(file.name);
        // Files of requested/inflight/failed (or later, for time travel) instants are invisible.
        if (parsed === undefined || !inputs.timeline.isCommitted(parsed.instantTime)) continue;
        const baseFile: BaseFile = {
          partitionPath: partition.partitionPath,
          fileId: parsed.fileId,
          writeToken: parsed.writeToken,
          instantTime: parsed.instantTime,
          fileName: file.name,
          path: joinPartitionPath(partition.partitionPath, file.name),
          size: file.size,
        };
        const slice: FileSlice = { partitionPath: partition.partitionPath, fileId: parsed.fileId, baseInstantTime: parsed.instantTime, baseFile };
        // Most groups keep one slice: an array made for one holds one (an empty one grows to sixteen on its first push).
        const slices = byFileId.get(parsed.fileId);
        if (slices === undefined) byFileId.set(parsed.fileId, [slice]);
        else slices.push(slice);
      }
      const groups: FileGroup[] = [];
      for (const [fileId, slices] of [...byFileId].sort(([a], [b]) => a.localeCompare(b))) {
        if (inputs.replacedFileGroups.has(fileGroupKey(partition.partitionPath, fileId))) continue;
        // Two files of one instant in one group come from retried tasks; Hudi keeps the newest-named; we keep a stable one.
        slices.sort((a, b) => compareInstantTimes(b.baseInstantTime, a.baseInstantTime) || b.baseFile.fileName.localeCompare(a.baseFile.fileName));
        groups.push({ partitionPath: partition.partitionPath, fileId, slices });
      }
      this.groupsByPartition.set(partition.partitionPath, groups);
    }
    for (const partition of inputs.partitions) {
      this.listedByPartition.set(partition.partitionPath, partition);
      this.mergedByPartition.set(partition.partitionPath, undefined);
    }
  }

  /** A partition's merged slices (layout 1 builds them now if not yet); undefined for a partition not listed. */
  private mergedOf(partitionPath: string): MergedFileSlice[] | undefined {
    const known = this.mergedByPartition.get(partitionPath);
    if (known !== undefined) return known;
    const listed = this.listedByPartition.get(partitionPath);
    if (listed === undefined) return undefined;
    const built = this.buildMergedSlices(listed);
    this.mergedByPartition.set(partitionPath, built);
    return built;
  }

  /**
   * Hudi's getLatestMergedFileSlicesBeforeOrOn for one partition. A log file belongs to the slice named by its base
   * instant (the base file's instant it was appended to); a slice counts when its base instant is a completed write,
   * a pending compaction, or older than the timeline. The latest slice of each group is returned, and when its base
   * instant is a pending compaction (its base file is not written yet), it is merged with the slice before it: that
   * slice's base file, its logs, then the new slice's logs.
   */
  private buildMergedSlices(partition: ListedPartition): MergedFileSlice[] {
    // A compaction completes as a commit of its instant time; its requested/inflight files stay next to it.
    const timeline = this.inputs.timeline;
    const pendingCompactions = new Set(
      timeline
        .pending()
        .filter((i) => i.action === 'compaction' && !timeline.isCommitted(i.time))
        .map((i) => i.time),
    );
    const sliceCounts = (time: string): boolean => this.inputs.timeline.isCommitted(time) || pendingCompactions.has(time);
    type Slice = { baseFile: BaseFile | undefined; logFiles: LogFile[]; cdcLogFiles: LogFile[] };
    const byGroup = new Map<string, Map<string, Slice>>();
    const sliceOf = (fileId: string, instant: string) => {
      const slices = byGroup.get(fileId) ?? new Map<string, Slice>();
      byGroup.set(fileId, slices);
      const slice = slices.get(instant) ?? { baseFile: undefined, logFiles: [], cdcLogFiles: [] };
      slices.set(instant, slice);
      return slice;
    };
    for (const group of this.groupsByPartition.get(partition.partitionPath) ?? []) {
      for (const slice of group.slices) {
        const entry = sliceOf(group.fileId, slice.baseInstantTime);
        // Retried tasks can leave two base files of one instant; the view already ordered the kept one first.
        if (entry.baseFile === undefined) entry.baseFile = slice.baseFile;
      }
    }
    for (const file of partition.files) {
      if (file.name.startsWith('..') && file.name.endsWith('.crc')) continue;
      const name = parseLogFileName(file.name);
      if (name === undefined || name.extension !== 'log' || (name.suffix !== '' && name.suffix !== CDC_LOG_SUFFIX)) continue;
      if (this.inputs.replacedFileGroups.has(fileGroupKey(partition.partitionPath, name.fileId))) continue;
      const slice = sliceOf(name.fileId, name.baseInstant);
      (name.suffix === '' ? slice.logFiles : slice.cdcLogFiles).push({ path: joinPartitionPath(partition.partitionPath, file.name), name, size: file.size });
    }
    const result: MergedFileSlice[] = [];
    for (const [fileId, slices] of [...byGroup].sort(([a], [b]) => a.localeCompare(b))) {
      const committed = [...slices].filter(([instant]) => sliceCounts(instant)).sort(([a], [b]) => compareInstantTimes(b, a));
      const [latest, previous] = committed;
      if (latest === undefined) continue;
      const sortLogs = (logs: readonly LogFile[]) => [...logs].sort((a, b) => compareLogFileNames(a.name, b.name));
      const [instant, slice] = latest;
      if (pendingCompactions.has(instant) && previous !== undefined) {
        result.push({
          partitionPath: partition.partitionPath,
          fileId,
          baseInstantTime: previous[0],
          baseFile: previous[1].baseFile,
          logFiles: [...sortLogs(previous[1].logFiles), ...sortLogs(slice.logFiles)],
        });
      } else {
        result.push({
          partitionPath: partition.partitionPath,
          fileId,
          baseInstantTime: instant,
          baseFile: pendingCompactions.has(instant) ? undefined : slice.baseFile,
          logFiles: sortLogs(slice.logFiles),
          ...(slice.cdcLogFiles.length > 0 ? { cdcLogFiles: sortLogs(slice.cdcLogFiles) } : {}),
        });
      }
    }
    return result;
  }

  /** The instant a snapshot of this view reads as of (log blocks after it do not count); undefined on an empty timeline. */
  get queryInstant(): string | undefined {
    return this.inputs.completionSlicing?.queryInstant ?? this.inputs.queryInstant;
  }

  /** The latest merged file slice of every live file group (snapshot reads of merge-on-read tables). */
  latestMergedSlices(partitionPath?: string): MergedFileSlice[] {
    if (partitionPath !== undefined) return [...(this.mergedOf(partitionPath) ?? [])];
    return [...this.mergedByPartition.keys()].sort().flatMap((p) => this.mergedOf(p) ?? []);
  }

  /**
   * Every live file group's id, groups of log files only included (the file groups' ids, then those only the merged
   * slices have), as a Set in that order. Layout 1 builds merged slices only where a log file may be: elsewhere a
   * partition's merged slices are its file groups' latest slices, whose ids the groups gave already.
   */
  liveFileIds(): Set<string> {
    const ids = new Set<string>();
    for (const group of this.fileGroups()) ids.add(group.fileId);
    const layout1 = this.inputs.timeline.layout.fileSlicing !== 'completion-time';
    for (const partitionPath of [...this.mergedByPartition.keys()].sort()) {
      if (layout1 && !this.logCandidates.has(partitionPath)) continue;
      for (const slice of this.mergedOf(partitionPath) ?? []) ids.add(slice.fileId);
    }
    return ids;
  }

  /** Partitions that hold at least one live file group, sorted. */
  partitionPaths(): string[] {
    return [...this.groupsByPartition]
      .filter(([, groups]) => groups.length > 0)
      .map(([p]) => p)
      .sort();
  }

  /** Every partition folder found (even if empty after replacement). */
  allPartitionPaths(): string[] {
    return [...this.groupsByPartition.keys()].sort();
  }

  fileGroups(partitionPath?: string): FileGroup[] {
    if (partitionPath !== undefined) return [...(this.groupsByPartition.get(partitionPath) ?? [])];
    return this.partitionPaths().flatMap((p) => this.groupsByPartition.get(p) ?? []);
  }

  latestSlices(partitionPath?: string): FileSlice[] {
    return this.fileGroups(partitionPath).flatMap((group) => (group.slices[0] ? [group.slices[0]] : []));
  }

  /**
   * The base file of each live file group's latest slice: copy-on-write snapshots and read-optimized reads. Layout 2
   * reads them off the merged slices, as Hudi 1.x's file index does (a slice whose compaction is pending reads the
   * base file before it).
   */
  latestBaseFiles(partitionPath?: string): BaseFile[] {
    if (this.inputs.timeline.layout.fileSlicing === 'completion-time') {
      return this.latestMergedSlices(partitionPath).flatMap((slice) => (slice.baseFile === undefined ? [] : [slice.baseFile]));
    }
    return this.latestSlices(partitionPath).map((slice) => slice.baseFile);
  }

  isReplaced(partitionPath: string, fileId: string): boolean {
    return this.inputs.replacedFileGroups.has(fileGroupKey(partitionPath, fileId));
  }

  isInPendingClustering(partitionPath: string, fileId: string): boolean {
    return this.inputs.pendingClusteringFileGroups.has(fileGroupKey(partitionPath, fileId));
  }

  pendingClusteringFileGroups(): ReadonlySet<string> {
    return this.inputs.pendingClusteringFileGroups;
  }
}
