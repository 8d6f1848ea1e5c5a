/**
 * The file groups of one metadata-table partition and their latest file slices, from a listing of its folder, as
 * Hudi's file-system view sees them: a slice is a base file (`<fileId>_<token>_<instant>.hfile`, written by a
 * compaction or an initialization) plus the log files whose base instant is that instant; log files may come
 * without a base file (a partition initialized on an empty table). A slice counts once its base instant is a
 * completed metadata-table instant, or older than the timeline's first instant (archived).
 */

import { type LogFile, logFilesOf } from '../log-format/index.js';
import type { StoredObject } from '../storage/port.js';
import { parseBaseFileName } from '../table/file-system-view.js';
import { compareInstantTimes, isValidInstantTime } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';
import { FILE_ID_PREFIX, type MetadataPartitionType } from './partitions.js';
import { METADATA_TABLE_FOLDER } from './timeline.js';

export interface MetadataBaseFile {
  readonly path: string;
  readonly name: string;
  readonly instantTime: string;
  readonly size: number;
}

export interface MetadataFileSlice {
  readonly fileId: string;
  readonly baseInstant: string;
  readonly baseFile: MetadataBaseFile | undefined;
  /** In Hudi's log-file order. */
  readonly logFiles: readonly LogFile[];
}

export interface MetadataFileGroup {
  readonly partition: MetadataPartitionType;
  readonly fileId: string;
  /** The latest committed slice: where new log blocks go and what readers merge. */
  readonly latest: MetadataFileSlice;
  /** Every log file of the group, any slice (for the next version and for rollbacks). */
  readonly allLogFiles: readonly LogFile[];
}

export function partitionFolder(partition: string): string {
  return `${METADATA_TABLE_FOLDER}/${partition}`;
}

/** File groups of a partition, sorted by file id (prepRecords' order). `timeline` is the metadata timeline. */
export function fileGroupsOf(partition: MetadataPartitionType, listing: readonly StoredObject[], timeline: Timeline): MetadataFileGroup[] {
  const prefix = FILE_ID_PREFIX[partition];
  const committed = (instant: string): boolean => {
    if (timeline.instants.some((i) => i.time === instant && i.state === 'COMPLETED')) return true;
    const first = timeline.instants[0];
    return first !== undefined && compareInstantTimes(instant, first.time) < 0;
  };
  const bases = new Map<string, MetadataBaseFile[]>();
  for (const object of listing) {
    const name = fileNameOf(object.path);
    const parsed = parseBaseFileName(name, 'hfile');
    if (parsed === undefined || !parsed.fileId.startsWith(prefix)) continue;
    const list = bases.get(parsed.fileId) ?? [];
    list.push({ path: object.path, name, instantTime: parsed.instantTime, size: object.size });
    bases.set(parsed.fileId, list);
  }
  const logs = new Map<string, LogFile[]>();
  for (const log of logFilesOf(listing, { extension: 'log' })) {
    if (!log.name.fileId.startsWith(prefix) || log.name.suffix !== '') continue;
    const list = logs.get(log.name.fileId) ?? [];
    list.push(log);
    logs.set(log.name.fileId, list);
  }
  const groups: MetadataFileGroup[] = [];
  for (const fileId of [...new Set([...bases.keys(), ...logs.keys()])].sort()) {
    const groupLogs = logs.get(fileId) ?? [];
    const candidates = new Set<string>([...(bases.get(fileId) ?? []).map((b) => b.instantTime), ...groupLogs.map((l) => l.name.baseInstant)]);
    const latestInstant = [...candidates].filter(committed).sort(compareInstantTimes).at(-1);
    if (latestInstant === undefined) continue;
    const baseFile = (bases.get(fileId) ?? [])
      .filter((b) => b.instantTime === latestInstant)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .at(-1);
    groups.push({
      partition,
      fileId,
      latest: { fileId, baseInstant: latestInstant, baseFile, logFiles: groupLogs.filter((l) => l.name.baseInstant === latestInstant) },
      allLogFiles: groupLogs,
    });
  }
  return groups;
}

/**
 * Files of a metadata partition's folder whose slice cannot be told: HFile base files and log files whose instant
 * is outside Hudi's grammar (or whose name does not parse at all). A group with one of them may have a newer slice
 * than the one fileGroupsOf picks, so a commit must not append to it (MetadataTable.problems refuses).
 */
export function unreadableSliceFiles(listing: readonly StoredObject[]): string[] {
  const unreadable: string[] = [];
  for (const object of listing) {
    const name = fileNameOf(object.path);
    if (name.endsWith('.hfile') && parseBaseFileName(name, 'hfile') === undefined) unreadable.push(object.path);
  }
  for (const log of logFilesOf(listing, { extension: 'log' })) {
    if (!isValidInstantTime(log.name.baseInstant)) unreadable.push(log.path);
  }
  return unreadable.sort();
}
