/**
 * Committed files that storage lacks. Each completed write's metadata names the files it wrote; per file group,
 * the files of its newest completed write on the active timeline (not replaced by clustering) are the ones a reader
 * merges and a writer builds on. Without this check a deleted base file reads as fewer rows, or as the file
 * group's older version, and the next write makes that loss permanent. Older versions are not checked: the cleaner
 * removes them by design. Files of writes already archived are not checked either.
 */
import { MissingFileError } from '../errors.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import type { CommitMetadata } from '../timeline/commit-metadata.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import type { Instant } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { joinPartitionPath, type ListedPartition } from './file-system-view.js';

export interface CommittedFile {
  readonly path: string;
  readonly instantTime: string;
  readonly action: string;
}

const READ_CONCURRENCY = 8;
/** Completed instants' metadata never changes: parsed once per process (bounded). */
const METADATA_CACHE_LIMIT = 4096;
const metadataCache = new Map<string, Promise<CommitMetadata>>();

function cachedCommitMetadata(storage: Storage, instant: Instant, layout: TimelineLayout): Promise<CommitMetadata> {
  const key = `${storage.uri}\u0000${instant.time}.${instant.action}`;
  let found = metadataCache.get(key);
  if (found === undefined) {
    found = readCommitMetadata(storage, instant, layout);
    found.catch(() => metadataCache.delete(key));
    if (metadataCache.size >= METADATA_CACHE_LIMIT) metadataCache.delete(metadataCache.keys().next().value!);
    metadataCache.set(key, found);
  }
  return found;
}

/** Per file group key, the files its newest completed write on `timeline` wrote; groups replaced by a replacecommit left out. */
export async function latestCommittedFiles(storage: Storage, timeline: Timeline): Promise<Map<string, CommittedFile[]>> {
  const writes = timeline.completedWrites();
  const metadatas = await mapWithConcurrency(writes, READ_CONCURRENCY, (instant) => cachedCommitMetadata(storage, instant, timeline.layout));
  const latest = new Map<string, CommittedFile[]>();
  writes.forEach((instant, index) => {
    const metadata = metadatas[index]!;
    const written = new Map<string, CommittedFile[]>();
    for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) {
      for (const stat of stats) {
        if (stat.path === null || stat.path === '' || stat.fileId === '') continue;
        const key = fileGroupKey(stat.partitionPath ?? partition, stat.fileId);
        const files = written.get(key) ?? [];
        files.push({ path: stat.path, instantTime: instant.time, action: instant.action });
        written.set(key, files);
      }
    }
    for (const [key, files] of written) latest.set(key, files);
    for (const [partition, fileIds] of Object.entries(metadata.partitionToReplaceFileIds ?? {})) {
      for (const fileId of fileIds) latest.delete(fileGroupKey(partition, fileId));
    }
  });
  return latest;
}

/** The latest committed files (latestCommittedFiles) the listing lacks. */
export function missingFrom(latest: ReadonlyMap<string, readonly CommittedFile[]>, partitions: readonly ListedPartition[]): CommittedFile[] {
  const listed = new Set(partitions.flatMap((partition) => partition.files.map((file) => joinPartitionPath(partition.partitionPath, file.name))));
  return [...latest.values()].flat().filter((file) => !listed.has(file.path));
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
  const suspects = missingFrom(await latestCommittedFiles(storage, timeline), partitions);
  if (suspects.length === 0) return;
  const now = [...(await latestCommittedFiles(storage, await fresh())).values()].flat();
  const missing = suspects.filter((suspect) => now.some((file) => file.path === suspect.path && file.instantTime === suspect.instantTime));
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
