/**
 * File-system view: file groups and file slices per partition, as Hudi's HoodieTableFileSystemView sees them
 * for copy-on-write tables (a slice is one base file version).
 */
import { compareInstantTimes } from './timeline/instant.js';
import type { Timeline } from './timeline/timeline.js';

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

export function fileGroupKey(partitionPath: string, fileId: string): string {
  return `${partitionPath}\u0000${fileId}`;
}

const BASE_FILE = /^([^_]+)_([^_]+)_(\d{14}(?:\d{3})?)\.parquet$/;

/** Parse `<fileId>_<writeToken>_<instantTime>.parquet`; undefined for anything else (markers, .crc, partition metadata…). */
export function parseBaseFileName(fileName: string): { fileId: string; writeToken: string; instantTime: string } | undefined {
  const match = BASE_FILE.exec(fileName);
  if (!match) return undefined;
  return { fileId: match[1]!, writeToken: match[2]!, instantTime: match[3]! };
}

export function baseFileName(fileId: string, writeToken: string, instantTime: string): string {
  return `${fileId}_${writeToken}_${instantTime}.parquet`;
}

export function joinPartitionPath(partitionPath: string, fileName: string): string {
  return partitionPath === '' ? fileName : `${partitionPath}/${fileName}`;
}

export interface ListedPartition {
  readonly partitionPath: string;
  readonly files: readonly { readonly name: string; readonly size: number }[];
}

export interface ViewInputs {
  readonly partitions: readonly ListedPartition[];
  /** The timeline the view is built against (already cut with asOf for time travel). */
  readonly timeline: Timeline;
  /** File groups named by completed replacecommits on that timeline. */
  readonly replacedFileGroups: ReadonlySet<string>;
  /** File groups in pending clustering plans (fileGroupKey). */
  readonly pendingClusteringFileGroups: ReadonlySet<string>;
}

export class FileSystemView {
  private readonly groupsByPartition: Map<string, FileGroup[]>;

  constructor(private readonly inputs: ViewInputs) {
    this.groupsByPartition = new Map();
    for (const partition of inputs.partitions) {
      const byFileId = new Map<string, FileSlice[]>();
      for (const file of partition.files) {
        const parsed = parseBaseFileName(file.name);
        // Files of requested/inflight/failed (or later, for time travel) instants are invisible.
        if (parsed === undefined || !inputs.timeline.isCommitted(parsed.instantTime)) continue;
        const baseFile: BaseFile = {
          partitionPath: partition.partitionPath,
          ...parsed,
          fileName: file.name,
          path: joinPartitionPath(partition.partitionPath, file.name),
          size: file.size,
        };
        const slices = byFileId.get(parsed.fileId) ?? [];
        slices.push({ partitionPath: partition.partitionPath, fileId: parsed.fileId, baseInstantTime: parsed.instantTime, baseFile });
        byFileId.set(parsed.fileId, slices);
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
  }

  /** Partitions that hold at least one live file group, sorted. */
  partitionPaths(): string[] {
    return [...this.groupsByPartition].filter(([, groups]) => groups.length > 0).map(([p]) => p).sort();
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

  latestBaseFiles(partitionPath?: string): BaseFile[] {
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
