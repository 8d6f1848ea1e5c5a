/**
 * Where each write's records go: Hudi's UpsertPartitioner for copy-on-write tables (assignUpdates, getSmallFiles,
 * assignInserts) and AverageRecordSizeUtils, as pure functions over plain values.
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
}

export type Bucket =
  | { readonly kind: 'UPDATE'; readonly partitionPath: string; readonly fileId: string; readonly existingFile: number; readonly previousInstant: string }
  | { readonly kind: 'INSERT'; readonly partitionPath: string; readonly fileId: string };

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
}

export function planBuckets(input: PlanBucketsInput): BucketPlan {
  const buckets: Bucket[] = [];
  const bucketOfFile = new Map<number, number>();
  const insertAssignments: InsertAssignment[] = [];
  const fileByIndex = new Map(input.files.map((f) => [f.index, f]));

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
      const smallFiles = input.files.filter((f) => f.partitionPath === partitionPath && f.size < input.config.smallFileLimit && !f.inPendingClustering);
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
  return { buckets, bucketOfFile, insertAssignments, averageRecordSize: input.averageRecordSize };
}

/** Rows per Parquet row group from hoodie.parquet.block.size and the average record size. */
export function rowGroupRows(config: WriteConfig, averageSize: number): number {
  return Math.max(2048, Math.floor(config.parquetBlockSize / Math.max(1, averageSize)));
}
