/**
 * Committed files that storage lacks. Each completed write's metadata names the files it wrote; per file group,
 * the files of its newest completed write on the active timeline (not replaced by clustering) are the ones a reader
 * merges and a writer builds on. Without this check a deleted base file reads as fewer rows, or as the file
 * group's older version, and the next write makes that loss permanent. Older versions are not checked: the cleaner
 * removes them by design. Files of writes already archived are not checked either.
 */
import { isAscii } from 'node:buffer';
import { MissingFileError } from '../errors.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { type CommitMetadata, type CommitWrites, parseCommitWrites } from '../timeline/commit-metadata.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import type { Instant } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { instantPath, readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import type { ListedPartition } from './file-system-view.js';

export interface CommittedFile {
  readonly path: string;
  readonly instantTime: string;
  readonly action: string;
}

const READ_CONCURRENCY = 8;
/**
 * Completed instants' metadata never changes: what each wrote is kept once per process, for at most this many
 * instants and this many written files in all (a warm process asks again; a table whose active commits name a
 * million files is read again rather than kept).
 */
const CACHE_INSTANTS = 4096;
const CACHE_FILES = 262_144;
const writesCache = new Map<string, { readonly writes: Promise<InstantWrites>; files: number }>();
let cachedFiles = 0;

/**
 * What the check needs of a completed write, and no more: each written file's partition, file id and path (the
 * metadata's own strings: no key is built per file), and the groups it replaced.
 */
interface InstantWrites {
  readonly written: readonly { readonly partitionPath: string; readonly fileId: string; readonly path: string }[];
  readonly replaced: readonly { readonly partitionPath: string; readonly fileId: string }[];
}

function writesOf(metadata: CommitMetadata): CommitWrites {
  const written: { partitionPath: string; fileId: string; path: string }[] = [];
  for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) {
    for (const stat of stats) written.push({ partitionPath: stat.partitionPath ?? partition, fileId: stat.fileId, path: stat.path as string });
  }
  const replaced: { partitionPath: string; fileId: string }[] = [];
  for (const [partition, fileIds] of Object.entries(metadata.partitionToReplaceFileIds ?? {})) {
    for (const fileId of fileIds) replaced.push({ partitionPath: partition, fileId });
  }
  return { written, replaced };
}

/** UTF-8 bytes as text; ASCII (what Hudi's commit JSON nearly always is) copied as Latin-1, the same text, faster. */
function utf8Text(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isAscii(buffer) ? buffer.toString('latin1') : buffer.toString('utf8');
}

/** The files with a path and a file id (what the check follows). */
function checked(writes: CommitWrites): InstantWrites {
  const written = writes.written.filter((file): file is InstantWrites['written'][number] => file.path !== null && file.path !== '' && file.fileId !== '');
  return { written, replaced: writes.replaced };
}

/** A completed write's files; layout 1's JSON read for them alone (no WriteStat per file). */
async function readWrites(storage: Storage, instant: Instant, layout: TimelineLayout): Promise<InstantWrites> {
  if (layout.version !== 1) return checked(writesOf(await readCommitMetadata(storage, instant, layout)));
  const path = instantPath(instant, layout);
  return checked(parseCommitWrites(utf8Text(await storage.get(path)), storage.uriOf(path)));
}

function cachedWrites(storage: Storage, instant: Instant, layout: TimelineLayout): Promise<InstantWrites> {
  const key = `${storage.uri}\u0000${instant.time}.${instant.action}`;
  const found = writesCache.get(key);
  if (found !== undefined) return found.writes;
  const entry = { writes: readWrites(storage, instant, layout), files: 0 };
  writesCache.set(key, entry);
  entry.writes.then(
    ({ written }) => {
      if (writesCache.get(key) !== entry) return;
      entry.files = written.length;
      cachedFiles += written.length;
      // Oldest first out, until both bounds hold (an instant beyond the file bound alone is not kept).
      for (const [oldest, value] of writesCache) {
        if (writesCache.size <= CACHE_INSTANTS && cachedFiles <= CACHE_FILES) break;
        writesCache.delete(oldest);
        cachedFiles -= value.files;
      }
    },
    () => {
      if (writesCache.get(key) === entry) writesCache.delete(key);
    },
  );
  return entry.writes;
}

/** A file group's latest files, and where the flat map of latestCommittedFiles would list the group. */
interface GroupFiles {
  files: CommittedFile[];
  /** The write (its index among the completed writes) these are of: a later write of the group starts a new list. */
  write: number;
  /** Insertion order in that flat map: a group keeps its place when written again, and goes last when replaced and written again. */
  readonly order: number;
}

/**
 * The latest files of every file group on `timeline` as partition → file id → files (the metadata's own strings: no
 * key is built per group, which on a table whose active commits name a million files costs seconds and megabytes).
 */
async function latestGroups(storage: Storage, timeline: Timeline): Promise<Map<string, Map<string, GroupFiles>>> {
  const writes = timeline.completedWrites();
  const all = await mapWithConcurrency(writes, READ_CONCURRENCY, (instant) => cachedWrites(storage, instant, timeline.layout));
  const byPartition = new Map<string, Map<string, GroupFiles>>();
  let order = 0;
  writes.forEach((instant, index) => {
    const { written, replaced } = all[index]!;
    for (const { partitionPath, fileId, path } of written) {
      const file = { path, instantTime: instant.time, action: instant.action };
      let groups = byPartition.get(partitionPath);
      if (groups === undefined) {
        groups = new Map();
        byPartition.set(partitionPath, groups);
      }
      const group = groups.get(fileId);
      if (group === undefined) groups.set(fileId, { files: [file], write: index, order: order++ });
      else if (group.write === index) group.files.push(file);
      else {
        // A newer write of the group: its files replace the earlier ones.
        group.files = [file];
        group.write = index;
      }
    }
    for (const { partitionPath, fileId } of replaced) byPartition.get(partitionPath)?.delete(fileId);
  });
  return byPartition;
}

/** latestGroups' groups in the flat map's order. */
function inOrder(byPartition: ReadonlyMap<string, ReadonlyMap<string, GroupFiles>>): { partitionPath: string; fileId: string; group: GroupFiles }[] {
  const out: { partitionPath: string; fileId: string; group: GroupFiles }[] = [];
  for (const [partitionPath, groups] of byPartition) for (const [fileId, group] of groups) out.push({ partitionPath, fileId, group });
  return out.sort((a, b) => a.group.order - b.group.order);
}

/** Per file group key, the files its newest completed write on `timeline` wrote; groups replaced by a replacecommit left out. */
export async function latestCommittedFiles(storage: Storage, timeline: Timeline): Promise<Map<string, CommittedFile[]>> {
  return new Map(inOrder(await latestGroups(storage, timeline)).map(({ partitionPath, fileId, group }) => [fileGroupKey(partitionPath, fileId), group.files]));
}

/** The latest committed files (latestCommittedFiles) the listing lacks. */
export function missingFrom(latest: ReadonlyMap<string, readonly CommittedFile[]>, partitions: readonly ListedPartition[]): CommittedFile[] {
  const listed = listedNames(partitions);
  const missing: CommittedFile[] = [];
  for (const files of latest.values()) for (const file of files) if (!isListed(listed, file.path)) missing.push(file);
  return missing;
}

/**
 * Whether a latest committed file is not listed, the writes read newest first, a window at a time, none kept: a
 * group's latest files are those of the newest write that wrote or replaced it, unless that write replaced it. The
 * check's common answer (no) without holding every write's files at once; a yes is worked out again in order.
 */
async function anyLatestUnlisted(storage: Storage, timeline: Timeline, listed: ReadonlyMap<string, ReadonlySet<string>>): Promise<boolean> {
  const writes = timeline.completedWrites();
  // Groups whose latest write was seen (by partition, then file id: the metadata's own strings).
  const decided = new Map<string, Set<string>>();
  const isDecided = (partitionPath: string, fileId: string) => decided.get(partitionPath)?.has(fileId) === true;
  const decide = (partitionPath: string, fileId: string) => {
    const groups = decided.get(partitionPath);
    if (groups === undefined) decided.set(partitionPath, new Set([fileId]));
    else groups.add(fileId);
  };
  for (let end = writes.length; end > 0; end -= READ_CONCURRENCY) {
    const window = writes.slice(Math.max(0, end - READ_CONCURRENCY), end);
    const all = await mapWithConcurrency(window, READ_CONCURRENCY, (instant) => cachedWrites(storage, instant, timeline.layout));
    for (let index = all.length - 1; index >= 0; index--) {
      const { written, replaced } = all[index]!;
      // A write's replacements come after its files (a group it writes and replaces is gone).
      for (const { partitionPath, fileId } of replaced) decide(partitionPath, fileId);
      for (const { partitionPath, fileId, path } of written) if (!isListed(listed, path, partitionPath) && !isDecided(partitionPath, fileId)) return true;
      for (const { partitionPath, fileId } of written) decide(partitionPath, fileId);
    }
  }
  return false;
}

/** Each partition's listed names (the listing's own strings: no path is built per listed file). */
function listedNames(partitions: readonly ListedPartition[]): Map<string, Set<string>> {
  const listed = new Map<string, Set<string>>();
  for (const partition of partitions) {
    const names = listed.get(partition.partitionPath) ?? new Set<string>();
    for (const file of partition.files) names.add(file.name);
    listed.set(partition.partitionPath, names);
  }
  return listed;
}

/**
 * Whether `path` (`<partition>/<name>`, or a bare name in a non-partitioned table) is among the listed names.
 * `partitionPath`, when given, is the partition the path is likely in (its write stat's): when the path's folder is
 * that one, it is not cut out of the path.
 */
function isListed(listed: ReadonlyMap<string, ReadonlySet<string>>, path: string, partitionPath?: string): boolean {
  const slash = path.lastIndexOf('/');
  const folder = partitionPath !== undefined && partitionPath.length === Math.max(slash, 0) && path.startsWith(partitionPath) ? partitionPath : undefined;
  return listed.get(folder ?? (slash < 0 ? '' : path.slice(0, slash)))?.has(path.slice(slash + 1)) === true;
}

/**
 * Refuse a listing that lacks a latest committed file. A file missing from `partitions` is checked again against
 * `fresh()` (the timeline re-read): a cleaner may have removed it after a write the first timeline did not have yet.
 */
export async function assertCommittedFilesPresent(
  storage: Storage,
  timeline: Timeline,
  partitions: readonly ListedPartition[],
  fresh: () => Promise<Timeline>,
): Promise<void> {
  const listed = listedNames(partitions);
  if (!(await anyLatestUnlisted(storage, timeline, listed))) return;
  // The latest files the listing lacks, in latestCommittedFiles' order (the first one is the one named).
  const suspects: { partitionPath: string; fileId: string; file: CommittedFile; order: number; index: number }[] = [];
  for (const [partitionPath, groups] of await latestGroups(storage, timeline)) {
    for (const [fileId, group] of groups) {
      group.files.forEach((file, index) => {
        if (!isListed(listed, file.path)) suspects.push({ partitionPath, fileId, file, order: group.order, index });
      });
    }
  }
  if (suspects.length === 0) return;
  suspects.sort((a, b) => a.order - b.order || a.index - b.index);
  const now = await latestGroups(storage, await fresh());
  const missing = suspects
    .filter(({ partitionPath, fileId, file }) =>
      (now.get(partitionPath)?.get(fileId)?.files ?? []).some((latest) => latest.path === file.path && latest.instantTime === file.instantTime),
    )
    .map(({ file }) => file);
  if (missing.length === 0) return;
  const first = missing[0]!;
  const kind = /\.log\.[0-9]+/.test(first.path) ? 'log file' : 'base file';
  throw new MissingFileError(
    `${missing.length} file(s) that completed writes produced, each still the latest of its file group, are missing from storage; the first, the ${kind} ${first.path}, was written by ${first.action} ${first.instantTime}`,
    missing.map((file) => ({ path: file.path, instantTime: file.instantTime })),
    {
      location: storage.uriOf(first.path),
      fix: `restore the file from a backup or an object version, or roll the table back to before ${first.instantTime} with Hudi (CALL rollback_to_instant); reading or writing on without it would silently lose that write's records`,
    },
  );
}
