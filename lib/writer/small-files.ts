/**
 * Where each write's records go: Hudi's UpsertPartitioner for copy-on-write tables (assignUpdates, getSmallFiles,
 * assignInserts), SparkUpsertDeltaCommitPartitioner's small files for merge-on-read tables, and
 * AverageRecordSizeUtils, as pure functions over plain values.
 *
 * Merge-on-read, with the bloom or simple index (which cannot index log files, canIndexLogFiles() = false): inserts go
 * to new base files or to the smallest base files of slices without log files (not under pending compaction), at most
 * hoodie.merge.small.file.group.candidates.limit of them per partition; a bucket of such a small file is written like
 * copy-on-write (a new base file version, BaseSparkDeltaCommitActionExecutor.handleUpdate), every other file group
 * with updates or deletes gets a log file (an APPEND bucket).
 */
import type { CommitMetadata } from '../timeline/commit-metadata.js';
import type { WriteConfig, WriteOperation } from './write-config.js';

/** A latest base file of a partition the write touches. */
export interface CandidateFile {
  /** Index in the staged file list the engine was given. */
  readonly index: number;
  readonly partitionPath: string;
  readonly fileId: string;
  readonly size: number;
  readonly instantTime: string;
  readonly inPendingClustering: boolean;
  /** Merge-on-read: the group's latest slice has log files, `.cdc` ones included (no inserts without compacting them). */
  readonly hasLogFiles?: boolean;
  /** Merge-on-read: the group is in a pending compaction plan (its latest slice is the compaction's). */
  readonly inPendingCompaction?: boolean;
}

export type Bucket =
  | { readonly kind: 'UPDATE'; readonly partitionPath: string; readonly fileId: string; readonly existingFile: number; readonly previousInstant: string }
  | { readonly kind: 'INSERT'; readonly partitionPath: string; readonly fileId: string }
  /**
   * Merge-on-read: the group's updates and deletes go to a new log file of its latest slice (`existingFile`: its staged
   * base file, undefined for a group of log files only). `previousInstant` '': a new group of log files only.
   */
  | {
      readonly kind: 'APPEND';
      readonly partitionPath: string;
      readonly fileId: string;
      readonly existingFile: number | undefined;
      readonly previousInstant: string;
    };

export interface InsertAssignment {
  readonly partitionPath: string;
  readonly start: number;
  readonly count: number;
  readonly bucket: number;
}

export interface BucketPlan {
  readonly buckets: readonly Bucket[];
  /** Existing file index → bucket (updates, deletes, and small files receiving inserts). */
  readonly bucketOfFile: ReadonlyMap<number, number>;
  readonly insertAssignments: readonly InsertAssignment[];
  readonly averageRecordSize: number;
}

/**
 * Average bytes per record from the latest completed commits whose written bytes pass
 * threshold × small.file.limit (so a few tiny commits do not skew it); else the configured estimate.
 */
export function averageRecordSize(commitsNewestFirst: readonly CommitMetadata[], config: WriteConfig): number {
  const threshold = Math.floor(config.recordSizeEstimationThreshold * config.smallFileLimit);
  for (const commit of commitsNewestFirst) {
    let bytes = 0;
    let records = 0;
    for (const stats of Object.values(commit.partitionToWriteStats)) {
      for (const stat of stats) {
        bytes += stat.totalWriteBytes;
        records += stat.numWrites;
      }
    }
    if (bytes > threshold && records > 0) return Math.ceil(bytes / records);
  }
  return config.recordSizeEstimate;
}

/** Records per new file group (insert bucket). */
export function insertRecordsPerBucket(config: WriteConfig, averageSize: number): number {
  return config.insertAutoSplit ? Math.max(1, Math.floor(config.maxFileSize / averageSize)) : config.insertSplitSize;
}

export interface PlanBucketsInput {
  readonly operation: WriteOperation;
  readonly insertsByPartition: ReadonlyMap<string, number>;
  readonly updatesByFile: ReadonlyMap<number, number>;
  /** Latest base files of the partitions the write touches, in file-system view order. */
  readonly files: readonly CandidateFile[];
  readonly averageRecordSize: number;
  readonly config: WriteConfig;
  /** New file group ids, e.g. `<uuid>-0`. */
  readonly newFileId: () => string;
  /** Merge-on-read table: small files as SparkUpsertDeltaCommitPartitioner picks them, updates to others as appends. */
  readonly mergeOnRead?: { readonly smallFileGroupCandidatesLimit: number };
}

/**
 * The small files of a partition, before the pending-clustering filter. Copy-on-write (UpsertPartitioner): every
 * latest base file under the limit, in view order. Merge-on-read (SparkUpsertDeltaCommitPartitioner, index that
 * cannot index logs): slices without log files and outside pending compactions whose base file is under the limit,
 * smallest first, the first `smallFileGroupCandidatesLimit`.
 */
export function smallFileCandidates(input: Pick<PlanBucketsInput, 'files' | 'config' | 'mergeOnRead'>, partitionPath: string): CandidateFile[] {
  const limit = input.config.smallFileLimit;
  const inPartition = input.files.filter((f) => f.partitionPath === partitionPath && f.size < limit);
  if (input.mergeOnRead === undefined) return inPartition;
  return inPartition
    .filter((f) => f.hasLogFiles !== true && f.inPendingCompaction !== true)
    .sort((a, b) => a.size - b.size)
    .slice(0, Math.max(0, input.mergeOnRead.smallFileGroupCandidatesLimit));
}

export function planBuckets(input: PlanBucketsInput): BucketPlan {
  const buckets: Bucket[] = [];
  const bucketOfFile = new Map<number, number>();
  const insertAssignments: InsertAssignment[] = [];
  const fileByIndex = new Map(input.files.map((f) => [f.index, f]));
  /** Hudi's getSmallFileIds: the small files of partitions with inserts, whether or not any insert fit. */
  const smallFileIds = new Set<string>();

  const updateBucketFor = (file: CandidateFile): number => {
    const existing = bucketOfFile.get(file.index);
    if (existing !== undefined) return existing;
    buckets.push({ kind: 'UPDATE', partitionPath: file.partitionPath, fileId: file.fileId, existingFile: file.index, previousInstant: file.instantTime });
    bucketOfFile.set(file.index, buckets.length - 1);
    return buckets.length - 1;
  };

  // assignUpdates: every file holding an updated (or deleted) record is rewritten.
  for (const fileIndex of [...input.updatesByFile.keys()].sort((a, b) => a - b)) {
    const file = fileByIndex.get(fileIndex);
    if (file !== undefined) updateBucketFor(file);
  }

  const perBucket = insertRecordsPerBucket(input.config, input.averageRecordSize);
  for (const partitionPath of [...input.insertsByPartition.keys()].sort()) {
    let unassigned = input.insertsByPartition.get(partitionPath) ?? 0;
    let rank = 0;
    // bulk_insert does no small-file packing, as in Hudi.
    if (input.operation !== 'bulk_insert' && input.config.smallFileLimit > 0) {
      const smallFiles = smallFileCandidates(input, partitionPath).filter((f) => !f.inPendingClustering);
      if (unassigned > 0) for (const file of smallFiles) smallFileIds.add(file.fileId);
      for (const file of smallFiles) {
        if (unassigned <= 0) break;
        const capacity = Math.floor((input.config.maxFileSize - file.size) / input.averageRecordSize);
        const recordsToAppend = Math.min(capacity, unassigned);
        if (recordsToAppend <= 0) continue;
        const bucket = updateBucketFor(file);
        insertAssignments.push({ partitionPath, start: rank, count: recordsToAppend, bucket });
        rank += recordsToAppend;
        unassigned -= recordsToAppend;
      }
    }
    if (unassigned > 0) {
      const newBuckets = Math.ceil(unassigned / perBucket);
      // Spread evenly, as Hudi weights each insert bucket equally.
      const base = Math.floor(unassigned / newBuckets);
      let extra = unassigned - base * newBuckets;
      for (let i = 0; i < newBuckets; i++) {
        const count = base + (extra > 0 ? 1 : 0);
        if (extra > 0) extra--;
        buckets.push({ kind: 'INSERT', partitionPath, fileId: input.newFileId() });
        insertAssignments.push({ partitionPath, start: rank, count, bucket: buckets.length - 1 });
        rank += count;
      }
    }
  }
  // Merge-on-read: only small files are rewritten (handleUpdate's small-file correction); other updates append.
  const planned =
    input.mergeOnRead === undefined
      ? buckets
      : buckets.map((bucket): Bucket => (bucket.kind === 'UPDATE' && !smallFileIds.has(bucket.fileId) ? { ...bucket, kind: 'APPEND' } : bucket));
  return { buckets: planned, bucketOfFile, insertAssignments, averageRecordSize: input.averageRecordSize };
}

/** Rows per Parquet row group from hoodie.parquet.block.size and the average record size. */
export function rowGroupRows(config: WriteConfig, averageSize: number): number {
  return Math.max(2048, Math.floor(config.parquetBlockSize / Math.max(1, averageSize)));
}
