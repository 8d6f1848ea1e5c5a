/**
 * Hudi's optimistic conflict check (SimpleConcurrentFileWritesConflictResolutionStrategy), as a pure function:
 * a write conflicts with an instant completed since it began when both touched the same file group, and with a
 * pending clustering plan that will rewrite a file group it updated.
 */

import { type CommitMetadata, writtenFileIds } from '../timeline/commit-metadata.js';
import { fileGroupKey } from '../timeline/file-group-key.js';

export interface ConcurrentInstant {
  readonly time: string;
  readonly action: string;
  readonly metadata: CommitMetadata;
}

export interface Conflict {
  readonly instant: string;
  readonly reason: 'completed-write' | 'pending-clustering';
  readonly fileGroups: readonly string[];
}

/** File groups an instant wrote or replaced, as fileGroupKey strings. */
export function touchedFileGroups(metadata: CommitMetadata): Set<string> {
  const keys = new Set(writtenFileIds(metadata).map(({ partitionPath, fileId }) => fileGroupKey(partitionPath, fileId)));
  for (const [partition, ids] of Object.entries(metadata.partitionToReplaceFileIds ?? {})) for (const id of ids) keys.add(fileGroupKey(partition, id));
  return keys;
}

export function findConflicts(input: {
  /** File groups this write rewrote (updates, deletes, small files that took inserts). */
  readonly ours: ReadonlySet<string>;
  readonly completedSinceStart: readonly ConcurrentInstant[];
  /** Pending clustering plans' input file groups, by plan instant. */
  readonly pendingClustering: readonly { readonly instant: string; readonly fileGroups: ReadonlySet<string> }[];
  /**
   * What two writes must not share, from a file group's key: the file group itself, or with the bucket index its
   * partition and bucket number (BucketIndexConcurrentFileWritesConflictResolutionStrategy), new buckets included.
   */
  readonly conflictKey?: (fileGroup: string) => string;
}): Conflict[] {
  const conflicts: Conflict[] = [];
  const keyOf = input.conflictKey ?? ((key: string) => key);
  const ours = new Set([...input.ours].map(keyOf));
  for (const other of input.completedSinceStart) {
    const shared = [...touchedFileGroups(other.metadata)].filter((key) => ours.has(keyOf(key)));
    if (shared.length > 0) conflicts.push({ instant: other.time, reason: 'completed-write', fileGroups: shared });
  }
  for (const plan of input.pendingClustering) {
    const shared = [...plan.fileGroups].filter((key) => input.ours.has(key));
    if (shared.length > 0) conflicts.push({ instant: plan.instant, reason: 'pending-clustering', fileGroups: shared });
  }
  return conflicts;
}

/** `partition/fileId` for messages. */
export function describeFileGroup(key: string): string {
  const [partition, fileId] = key.split('\u0000');
  return partition ? `${partition}/${fileId}` : `${fileId}`;
}
