/**
 * Where a write's records go on a table with Hudi 0.15's simple bucket index (HoodieSimpleBucketIndex tags, then
 * SparkBucketIndexPartitioner assigns): every record to the file group of its partition's hash bucket, found by the
 * bucket number its file id starts with. A bucket with a file group takes its inserts as well as its updates: on
 * copy-on-write its base file is merged (BaseSparkCommitActionExecutor.handleUpdate), on merge-on-read they go to a new
 * log file (BaseSparkDeltaCommitActionExecutor.handleUpdate: the layout's partitioner leaves no small-file list, so
 * every update bucket appends). A bucket without one is created with a base file (handleInsert: the simple bucket
 * index cannot index log files) named `<8-digit bucket><rest of a UUID>-0`. A delete goes only to buckets that exist
 * (HoodieDeleteHelper keeps the records its index located). A bulk_insert creates every bucket it writes, as Hudi's
 * row writer does, and is refused where a bucket exists.
 */
import type { HashBucketGroup, HashBucketTarget } from '../engine/write.js';
import { HudiError } from '../errors.js';
import { type BucketIndexSpec, bucketIdStr } from '../table/bucket-index.js';
import { type HashingMetadata, nodeFileId } from '../table/consistent-hashing.js';
import { bucketNumberOf } from '../table/layouts.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import type { Bucket, BucketPlan, InsertAssignment } from './small-files.js';
import type { WriteOperation } from './write-config.js';

/** A live file group of a partition the write touches. */
export interface BucketFileGroup {
  readonly partitionPath: string;
  readonly fileId: string;
  /** Index of its latest base file among the files given to tagging, undefined for a group of log files only. */
  readonly baseFile: number | undefined;
  /** The latest slice's base instant. */
  readonly baseInstant: string;
}

export interface BucketIndexPlanInput {
  readonly operation: WriteOperation;
  readonly groups: readonly HashBucketGroup[];
  readonly fileGroups: readonly BucketFileGroup[];
  readonly mergeOnRead: boolean;
  readonly spec: BucketIndexSpec;
  /** A new bucket's file id (newBucketFileId with a fresh UUID). */
  readonly newFileId: (bucket: number) => string;
}

export interface BucketIndexPlan extends BucketPlan {
  /** Each partition's hash bucket → the write's bucket, for the engine (assignBuckets' hashBuckets). */
  readonly hashBuckets: readonly HashBucketTarget[];
}

/**
 * The file group of each bucket number per partition, as HoodieSimpleBucketIndex.loadBucketIdToFileIdMappingForPartition
 * builds it, with this writer's checks on top: every file id must carry a bucket number below the configured number of
 * buckets, once per partition.
 */
export function bucketFileGroups(fileGroups: readonly BucketFileGroup[], spec: BucketIndexSpec, location: string): Map<string, Map<number, BucketFileGroup>> {
  const byPartition = new Map<string, Map<number, BucketFileGroup>>();
  for (const group of fileGroups) {
    const bucket = bucketNumberOf(group.fileId);
    const where = `${group.partitionPath === '' ? '' : `${group.partitionPath}/`}${group.fileId}`;
    if (bucket === undefined) {
      throw new HudiError(`file group ${where} is not a bucket's: its id does not start with an 8-digit bucket number`, {
        location,
        fix: 'the table was not written with the bucket index throughout; write it with the index it was written with (unset hoodie.index.type); nothing was written',
      });
    }
    if (bucket >= spec.numBuckets) {
      throw new HudiError(`file group ${where} is bucket ${bucket}, but hoodie.bucket.index.num.buckets=${spec.numBuckets}`, {
        location,
        fix: 'set hoodie.bucket.index.num.buckets to the number the table was written with; nothing was written',
      });
    }
    const buckets = byPartition.get(group.partitionPath) ?? new Map<number, BucketFileGroup>();
    byPartition.set(group.partitionPath, buckets);
    const other = buckets.get(bucket);
    if (other !== undefined) {
      // HoodieSimpleBucketIndex refuses it too ("Find multiple files at partition path=... belongs to the same bucket id").
      throw new HudiError(`file groups ${other.fileId} and ${group.fileId} of partition "${group.partitionPath}" are both bucket ${bucketIdStr(bucket)}`, {
        location,
        fix: 'a bucket holds one file group; repair the table with Hudi before writing to it; nothing was written',
      });
    }
    buckets.set(bucket, group);
  }
  return byPartition;
}

/**
 * Hudi 0.15's bucket bulk_insert (BucketBulkInsertDataInternalWriterHelper, the row writer's) opens a new file group
 * for every bucket it writes, without looking at the table: into a bucket that has one it would leave two, which
 * HoodieSimpleBucketIndex then refuses on every later write ("Find multiple files at partition path=... belong to the
 * same bucket id"). Refused here instead, before anything is written.
 */
function bulkInsertIntoBucketError(partitionPath: string, fileId: string, location: string): HudiError {
  return new HudiError(
    `bulk_insert would write records into bucket ${bucketIdStr(bucketNumberOf(fileId)!)} of partition "${partitionPath}", which has file group ${fileId}: Hudi's bucket bulk_insert opens a second file group for it, and its bucket index then refuses every later write ("Find multiple files ... belong to the same bucket id")`,
    {
      location,
      fix: 'bulk_insert only records of buckets no file group has yet (new partitions, a new table); write the others with insert or upsert, which add them to their bucket; nothing was written',
    },
  );
}

/** The write's buckets: one per partition's hash bucket with records (deletes: only buckets that exist). */
export function planBucketIndexWrite(input: BucketIndexPlanInput, location: string): BucketIndexPlan {
  const existing = bucketFileGroups(input.fileGroups, input.spec, location);
  const fileGroupOfBaseFile = new Map(input.fileGroups.flatMap((g) => (g.baseFile === undefined ? [] : [[g.baseFile, g] as const])));
  const buckets: Bucket[] = [];
  const bucketOfFile = new Map<number, number>();
  const insertAssignments: InsertAssignment[] = [];
  const hashBuckets: HashBucketTarget[] = [];
  const targetOf = new Map<string, number>();
  for (const group of input.groups) {
    if (group.file !== null) {
      // A stored record found outside its hash bucket: the table was bucketed with other settings.
      const holder = fileGroupOfBaseFile.get(group.file);
      if (holder !== undefined && bucketNumberOf(holder.fileId) !== group.hashBucket) {
        throw new HudiError(
          `record key "${group.sampleKey}" is stored in file group ${holder.fileId} (bucket ${bucketNumberOf(holder.fileId)}) but hashes to bucket ${group.hashBucket} with hoodie.bucket.index.num.buckets=${input.spec.numBuckets} and hoodie.bucket.index.hash.field=${input.spec.hashFields.join(',')}`,
          { location, fix: 'write with the bucket settings the table was written with; nothing of this write is visible' },
        );
      }
    }
    const key = `${group.hashBucket}\u0000${group.partitionPath}`;
    let target = targetOf.get(key);
    if (target === undefined) {
      const fileGroup = existing.get(group.partitionPath)?.get(group.hashBucket);
      if (fileGroup === undefined && input.operation === 'delete') continue;
      if (fileGroup !== undefined && input.operation === 'bulk_insert') throw bulkInsertIntoBucketError(group.partitionPath, fileGroup.fileId, location);
      if (fileGroup === undefined) {
        buckets.push({ kind: 'INSERT', partitionPath: group.partitionPath, fileId: input.newFileId(group.hashBucket) });
      } else if (input.mergeOnRead) {
        buckets.push({
          kind: 'APPEND',
          partitionPath: group.partitionPath,
          fileId: fileGroup.fileId,
          existingFile: fileGroup.baseFile,
          previousInstant: fileGroup.baseInstant,
        });
      } else {
        if (fileGroup.baseFile === undefined) {
          throw new HudiError(`file group ${fileGroup.fileId} of a copy-on-write table has no base file`, {
            location,
            fix: 'this is a bug in the file listing',
          });
        }
        buckets.push({
          kind: 'UPDATE',
          partitionPath: group.partitionPath,
          fileId: fileGroup.fileId,
          existingFile: fileGroup.baseFile,
          previousInstant: fileGroup.baseInstant,
        });
      }
      target = buckets.length - 1;
      targetOf.set(key, target);
      if (fileGroup?.baseFile !== undefined) bucketOfFile.set(fileGroup.baseFile, target);
      hashBuckets.push({ partitionPath: group.partitionPath, hashBucket: group.hashBucket, bucket: target });
    }
    if (group.file === null && input.operation !== 'delete') {
      insertAssignments.push({ partitionPath: group.partitionPath, start: 0, count: group.records, bucket: target });
    }
  }
  return { buckets, bucketOfFile, insertAssignments, averageRecordSize: 0, hashBuckets };
}

/** Consistent-hashing bucket index: each written partition's ring (lib/table/consistent-hashing.ts). */
export interface ConsistentHashingPlanInput {
  readonly operation: WriteOperation;
  /** Records grouped by partition and node: `hashBucket` is the node's index in its partition's ring. */
  readonly groups: readonly HashBucketGroup[];
  readonly fileGroups: readonly BucketFileGroup[];
  readonly rings: ReadonlyMap<string, HashingMetadata>;
}

/**
 * Hudi 0.15's consistent-hashing writes on merge-on-read (HoodieSparkConsistentBucketIndex tags every record with its
 * node's file id, found or not, so every record, inserts and deletes too, is an update of that file group): each node
 * with records gets a log file, appended to its file group's latest slice, or opening the group as a slice of log files
 * only based at the write's instant (HoodieAppendHandle without a slice). Checked first: every live file group of a
 * written partition is a node's, and every stored record found is in its node's file group.
 */
export function planConsistentHashingWrite(input: ConsistentHashingPlanInput, location: string): BucketIndexPlan {
  const groupsByFileId = new Map<string, BucketFileGroup>();
  for (const group of input.fileGroups) {
    const ring = input.rings.get(group.partitionPath);
    if (ring === undefined) continue;
    if (!ring.nodes.some((node) => nodeFileId(node) === group.fileId)) {
      throw new HudiError(
        `file group ${group.fileId} of partition "${group.partitionPath}" is not a node of its hashing metadata ${ring.file}: the ring and the files disagree`,
        { location, fix: 'repair or cluster the partition with Hudi before writing to it; nothing was written' },
      );
    }
    groupsByFileId.set(fileGroupKey(group.partitionPath, group.fileId), group);
  }
  const fileGroupOfBaseFile = new Map(input.fileGroups.flatMap((g) => (g.baseFile === undefined ? [] : [[g.baseFile, g] as const])));
  const buckets: Bucket[] = [];
  const bucketOfFile = new Map<number, number>();
  const hashBuckets: HashBucketTarget[] = [];
  const targetOf = new Map<string, number>();
  for (const group of input.groups) {
    const ring = input.rings.get(group.partitionPath)!;
    const fileId = nodeFileId(ring.nodes[group.hashBucket]!);
    if (group.file !== null) {
      const holder = fileGroupOfBaseFile.get(group.file);
      if (holder !== undefined && holder.fileId !== fileId) {
        throw new HudiError(
          `record key "${group.sampleKey}" is stored in file group ${holder.fileId} but hashes to node ${ring.nodes[group.hashBucket]!.value} (file group ${fileId}) of ${ring.file}`,
          { location, fix: 'write with the hoodie.bucket.index.hash.field the table was written with; nothing of this write is visible' },
        );
      }
    }
    const key = fileGroupKey(group.partitionPath, fileId);
    let target = targetOf.get(key);
    if (target === undefined) {
      const fileGroup = groupsByFileId.get(key);
      // previousInstant '': a new group's slice is based at the write's instant (LogAppender).
      buckets.push({
        kind: 'APPEND',
        partitionPath: group.partitionPath,
        fileId,
        existingFile: fileGroup?.baseFile,
        previousInstant: fileGroup?.baseInstant ?? '',
      });
      target = buckets.length - 1;
      targetOf.set(key, target);
      if (fileGroup?.baseFile !== undefined) bucketOfFile.set(fileGroup.baseFile, target);
      hashBuckets.push({ partitionPath: group.partitionPath, hashBucket: group.hashBucket, bucket: target });
    }
  }
  return { buckets, bucketOfFile, insertAssignments: [], averageRecordSize: 0, hashBuckets };
}
