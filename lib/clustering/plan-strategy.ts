/**
 * Clustering planning as Hudi 0.14's SparkSizeBasedClusteringPlanStrategy does it (PartitionAwareClusteringPlanStrategy
 * + ClusteringPlanPartitionFilter + FileSliceMetricUtils), and when to plan (ClusteringPlanActionExecutor), as pure
 * functions over plain values. The plan is the ClusteringPlan of lib/timeline/clustering-plan.ts, with the values
 * Hudi 0.14 fills in (field order and values as in a real Hudi-written plan). Merge-on-read slices carry their log
 * files (deltaFilePaths), and a slice of log files only counts as hoodie.parquet.max.file.size when grouped, as in
 * Hudi 0.15.
 */
import { HudiError } from '../errors.js';
import { CLUSTERING_PLAN_VERSION, type ClusteringPlan, type ClusteringPlanGroup, type ClusteringPlanSlice } from '../timeline/clustering-plan.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import type { ClusteringConfig } from './config.js';
import { sortColumnsParams } from './sort-columns.js';

// ---------------------------------------------------------------------------------------------------------------
// Scheduling.

type ThresholdKeys = Pick<
  ClusteringConfig,
  'inlineClustering' | 'inlineMaxCommits' | 'asyncClusteringEnabled' | 'scheduleInlineClustering' | 'asyncMaxCommits'
>;

/**
 * The number of completed commits since the last clustering that Hudi's ClusteringPlanActionExecutor waits for:
 * inline.max.commits when inline clustering is on, async.max.commits when async clustering or inline scheduling is
 * on (the larger when both apply), and 0 when neither is on (Hudi's standalone clustering job then plans every time).
 */
export function requiredCommitsSinceLastClustering(config: ThresholdKeys): number {
  let required = 0;
  if (config.inlineClustering) required = Math.max(required, config.inlineMaxCommits);
  if (config.asyncClusteringEnabled || config.scheduleInlineClustering) required = Math.max(required, config.asyncMaxCommits);
  return required;
}

/**
 * Whether to plan now. `completedCommitsSinceLastClustering` counts completed instants of the commits timeline
 * (commit, deltacommit, replacecommit) after the last clustering replacecommit, or all of them when there is none.
 * Hudi skips while `maxCommits > completedCommitsSinceLastClustering`, so exactly maxCommits commits schedule.
 */
export function shouldSchedule(input: { completedCommitsSinceLastClustering: number; maxCommits: number; force?: boolean }): boolean {
  return input.force === true || input.completedCommitsSinceLastClustering >= input.maxCommits;
}

/** How many completed commits since the last clustering a plan waits for, and which setting says so. */
export interface SchedulingThreshold {
  readonly commits: number;
  /** The key(s) the number comes from, or why there is none to wait for. */
  readonly setBy: string;
}

/** Whether the properties switch Hudi's inline or async clustering on (any of the keys that select a threshold). */
export function clusteringServiceEnabled(config: ThresholdKeys): boolean {
  return config.inlineClustering || config.asyncClusteringEnabled || config.scheduleInlineClustering;
}

/**
 * Hudi's rule (ClusteringPlanActionExecutor, which HoodieClusteringJob and `cluster` go through): with
 * hoodie.clustering.inline, wait for inline.max.commits; with hoodie.clustering.async.enabled or
 * hoodie.clustering.schedule.inline, for async.max.commits (the larger when both apply); with neither — Hudi's
 * defaults — do not wait at all.
 */
export function hudiSchedulingThreshold(config: ThresholdKeys): SchedulingThreshold {
  const keys = [
    ...(config.inlineClustering ? ['hoodie.clustering.inline.max.commits'] : []),
    ...(config.asyncClusteringEnabled || config.scheduleInlineClustering ? ['hoodie.clustering.async.max.commits'] : []),
  ];
  if (keys.length === 0) return { commits: 0, setBy: 'neither hoodie.clustering.inline nor hoodie.clustering.async.enabled (nor schedule.inline) is on' };
  return { commits: requiredCommitsSinceLastClustering(config), setBy: keys.join(' / ') };
}

// ---------------------------------------------------------------------------------------------------------------
// Partitions.

/** Descending by UTF-16 code units, as Java's Comparator.reverseOrder() on Strings. */
const descending = (left: string, right: string): number => (left < right ? 1 : left > right ? -1 : 0);
const ascending = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0);

/**
 * The partitions to plan, in planning order. As Hudi's generateClusteringPlan: `partition.selected` (used as given,
 * without checking the table has them) when set, otherwise the table's partitions whose whole path matches
 * `partition.regex.pattern` (when set); then the filter mode:
 * - NONE: unchanged;
 * - RECENT_DAYS: sorted descending, skip `skipfromlatest`, take `lookback` (0 = all);
 * - SELECTED_PARTITIONS: begin <= path <= end in string order (an unset bound does not filter);
 * - DAY_ROLLING: sorted ascending, those whose index % 24 equals the hour.
 * `nowHour` (0-23) defaults to the local hour, as Hudi uses the JVM's default time zone (UTC on Lambda).
 */
export function filterPartitions(allPartitions: readonly string[], config: PartitionFilterConfig, nowHour: number = new Date().getHours()): string[] {
  return filterPartitionsWithMissing(allPartitions, config, nowHour).partitions;
}

type PartitionFilterConfig = Pick<
  ClusteringConfig,
  'partitionSelected' | 'partitionRegexPattern' | 'partitionFilterMode' | 'lookbackPartitions' | 'skipFromLatestPartitions' | 'beginPartition' | 'endPartition'
>;

/**
 * filterPartitions, and what ClusteringPlanPartitionFilter.filter (Hudi 1.x) reports as missing: RECENT_DAYS' skipped
 * latest partitions (the first skipfromlatest of the descending list); nothing for the other modes.
 */
export function filterPartitionsWithMissing(
  allPartitions: readonly string[],
  config: PartitionFilterConfig,
  nowHour: number = new Date().getHours(),
): { partitions: string[]; missing: string[] } {
  let partitions: string[];
  if (config.partitionSelected.length > 0) {
    partitions = [...config.partitionSelected];
  } else if (config.partitionRegexPattern !== undefined) {
    // Java's Pattern.matches: the whole path must match.
    const wholePath = new RegExp(`^(?:${config.partitionRegexPattern})$`);
    partitions = allPartitions.filter((partition) => wholePath.test(partition));
  } else {
    partitions = [...allPartitions];
  }

  switch (config.partitionFilterMode) {
    case 'NONE':
      return { partitions, missing: [] };
    case 'RECENT_DAYS': {
      const take = config.lookbackPartitions > 0 ? config.lookbackPartitions : partitions.length;
      const skip = Math.max(config.skipFromLatestPartitions, 0);
      const sorted = partitions.sort(descending);
      return { partitions: sorted.slice(skip, skip + take), missing: sorted.slice(0, skip) };
    }
    case 'SELECTED_PARTITIONS': {
      const { beginPartition, endPartition } = config;
      return {
        partitions: partitions.filter(
          (partition) => (beginPartition === undefined || partition >= beginPartition) && (endPartition === undefined || partition <= endPartition),
        ),
        missing: [],
      };
    }
    case 'DAY_ROLLING': {
      if (!Number.isInteger(nowHour) || nowHour < 0 || nowHour > 23) {
        throw new HudiError(`hour ${nowHour} is not a whole number from 0 to 23`, { location: 'DAY_ROLLING partition filter' });
      }
      return { partitions: partitions.sort(ascending).filter((_, index) => index % 24 === nowHour), missing: [] };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// File slices.

/** A log file of a merge-on-read slice: its full path as Hudi records it in plans, and its size. */
export interface SliceLogFile {
  readonly path: string;
  readonly size: number;
}

/** The latest file slice of a file group, as the planner needs it (copy-on-write: one base file; merge-on-read: a base file and/or log files). */
export interface FileSliceInput {
  readonly fileId: string;
  readonly partitionPath: string;
  /**
   * The base file's full path as Hudi records it in plans (e.g. `s3://bucket/table/2024/01/01/<file>.parquet`); ''
   * for a merge-on-read slice of log files only (Hudi's StringUtils.EMPTY_STRING).
   */
  readonly baseFilePath: string;
  /** 0 without a base file. */
  readonly baseFileSize: number;
  /** The slice's base instant time. */
  readonly instantTime: string;
  /** Merge-on-read: the slice's log files in the slice's order (FileSlice keeps them newest first); none on copy-on-write. */
  readonly logFiles?: readonly SliceLogFile[];
}

/** Whether the slice has a base file (merge-on-read slices may hold log files only). */
export const hasBaseFile = (slice: FileSliceInput): boolean => slice.baseFilePath !== '';

/**
 * Slices that may be clustered (SparkSizeBasedClusteringPlanStrategy.getFileSlicesEligibleForClustering): not in a
 * pending clustering or compaction plan, and with a base file strictly smaller than small.file.limit (a slice of
 * log files only counts as 0 bytes, so it is always eligible).
 * `pendingFileGroupIds` holds fs-view's `fileGroupKey(partition, fileId)`, as HudiTable.pendingClusteringFileGroups returns them.
 */
export function getEligibleSlices<Slice extends FileSliceInput>(
  latestSlices: readonly Slice[],
  pendingFileGroupIds: ReadonlySet<string>,
  smallFileLimit: number,
): Slice[] {
  if (pendingFileGroupIds.size === 0) return latestSlices.filter((slice) => slice.baseFileSize < smallFileLimit);
  return latestSlices.filter((slice) => !pendingFileGroupIds.has(fileGroupKey(slice.partitionPath, slice.fileId)) && slice.baseFileSize < smallFileLimit);
}

// ---------------------------------------------------------------------------------------------------------------
// The plan.

/** FileSliceMetricUtils' metrics, in the order Hudi's HashMap writes them. */
export interface ClusteringGroupMetrics {
  TOTAL_LOG_FILES: number;
  TOTAL_IO_MB: number;
  TOTAL_IO_READ_MB: number;
  TOTAL_LOG_FILES_SIZE: number;
  TOTAL_IO_WRITE_MB: number;
  [metric: string]: number;
}

/** hoodie.parquet.max.file.size's default: Hudi's estimate for the write of a slice without a base file. */
const DEFAULT_PARQUET_MAX_FILE_SIZE = 120 * 1024 * 1024;
const BYTES_PER_MB = 1024 * 1024;

/** HoodieClusteringGroup.numOutputFileGroups: (int) Math.ceil(groupSize / (double) targetFileSize). */
export function numberOfOutputFileGroups(groupBytes: number, targetFileMaxBytes: number): number {
  return Math.ceil(groupBytes / targetFileMaxBytes);
}

/** FSUtils.getSizeInMB: whole megabytes, rounded down (Java long division). */
const sizeInMB = (bytes: number): number => Math.floor(bytes / BYTES_PER_MB);

/**
 * FileSliceMetricUtils.addFileSliceCommonMetrics: read is every base and log byte, write every base file's size
 * (hoodie.parquet.max.file.size for a slice without one), both in whole megabytes of the group's totals.
 */
export function buildGroupMetrics(slices: readonly FileSliceInput[]): ClusteringGroupMetrics {
  let readBytes = 0;
  let writeBytes = 0;
  let logFiles = 0;
  let logBytes = 0;
  for (const slice of slices) {
    for (const log of slice.logFiles ?? []) {
      logFiles++;
      if (log.size >= 0) logBytes += log.size;
    }
    readBytes += slice.baseFileSize;
    writeBytes += slice.baseFileSize > 0 ? slice.baseFileSize : DEFAULT_PARQUET_MAX_FILE_SIZE;
  }
  const readMB = sizeInMB(readBytes + logBytes);
  const writeMB = sizeInMB(writeBytes);
  return { TOTAL_LOG_FILES: logFiles, TOTAL_IO_MB: readMB + writeMB, TOTAL_IO_READ_MB: readMB, TOTAL_LOG_FILES_SIZE: logBytes, TOTAL_IO_WRITE_MB: writeMB };
}

/**
 * The bytes a slice adds to its group (PartitionAwareClusteringPlanStrategy.buildClusteringGroupsForPartition): its
 * base file's size, or hoodie.parquet.max.file.size for a slice of log files only.
 */
export function groupingBytes(slice: FileSliceInput): number {
  return hasBaseFile(slice) ? slice.baseFileSize : DEFAULT_PARQUET_MAX_FILE_SIZE;
}

function sliceInfo(slice: FileSliceInput): ClusteringPlanSlice {
  return {
    dataFilePath: slice.baseFilePath,
    deltaFilePaths: (slice.logFiles ?? []).map((log) => log.path),
    fileId: slice.fileId,
    partitionPath: slice.partitionPath,
    bootstrapFilePath: '',
    version: CLUSTERING_PLAN_VERSION,
  };
}

function clusteringGroup(slices: readonly FileSliceInput[], groupBytes: number, targetFileMaxBytes: number): ClusteringPlanGroup {
  return {
    slices: slices.map(sliceInfo),
    metrics: buildGroupMetrics(slices),
    numOutputFileGroups: numberOfOutputFileGroups(groupBytes, targetFileMaxBytes),
    extraMetadata: null,
    version: CLUSTERING_PLAN_VERSION,
  };
}

/**
 * HoodieWriteConfig.shouldClusteringSingleGroup: a partition's last group may hold a single slice when sort columns
 * are set (sorting one file is still work) or single.group.clustering.enabled is on.
 */
export function shouldClusterSingleGroup(config: Pick<ClusteringConfig, 'sortColumns' | 'singleGroupClusteringEnabled'>): boolean {
  return config.sortColumns.length > 0 || config.singleGroupClusteringEnabled;
}

type GroupingConfig = Pick<ClusteringConfig, 'maxBytesPerGroup' | 'maxNumGroups' | 'targetFileMaxBytes' | 'sortColumns' | 'singleGroupClusteringEnabled'> &
  Partial<Pick<ClusteringConfig, 'maxFilesPerGroup'>>;

/**
 * PartitionAwareClusteringPlanStrategy.buildClusteringGroupsForPartition: slices sorted by base file size, largest
 * first (stable); a slice that would take the running total strictly past max.bytes.per.group closes the current
 * (non-empty) group and starts the next one; once max.num.groups groups are closed the rest of the partition waits
 * for a later plan; the last, still open group is kept if it has more than one slice or single-group clustering
 * applies. A single slice larger than max.bytes.per.group still forms a group of its own.
 *
 * Beyond Hudi: a group also closes once it holds max.files.per.group slices (ours; Hudi caps by bytes only, so a
 * partition of 100,000 files of 10 KB is one group of 2 GB for it). One group is one execute-group Lambda, whose
 * costs grow with its file count as well as its bytes: one GET and one footer per file, staged before the 15-minute
 * limit, and every file's metadata in one DuckDB scan. The default, 10,000, keeps staging within about a minute at
 * S3's per-request latency and a group's footers in memory, while groups of tiny files still make outputs of
 * useful size (10,000 files of 10 KB are a 100 MB file).
 */
export function buildClusteringGroupsForPartition(
  partitionPath: string,
  eligibleSlices: readonly FileSliceInput[],
  config: GroupingConfig,
): ClusteringPlanGroup[] {
  return groupPartition(partitionPath, eligibleSlices, config).groups;
}

/** The groups of a partition, and whether slices were left for a later plan (Hudi 1.x's partialScheduled). */
function groupPartition(
  partitionPath: string,
  eligibleSlices: readonly FileSliceInput[],
  config: GroupingConfig,
): { groups: ClusteringPlanGroup[]; partial: boolean } {
  const stranger = eligibleSlices.find((slice) => slice.partitionPath !== partitionPath);
  if (stranger) {
    throw new HudiError(`file group ${stranger.fileId} of partition "${stranger.partitionPath}" given for partition "${partitionPath}"`, {
      location: 'clustering plan',
      fix: 'pass only the slices of the partition being grouped',
    });
  }
  // Each slice's bytes once (not per comparison); the sort is stable, as Java's List.sort.
  const bySizeDescending = eligibleSlices.map((slice) => ({ slice, bytes: groupingBytes(slice) })).sort((left, right) => right.bytes - left.bytes);
  const maxFiles = config.maxFilesPerGroup ?? Number.POSITIVE_INFINITY;

  const groups: ClusteringPlanGroup[] = [];
  let currentGroup: FileSliceInput[] = [];
  let currentBytes = 0;
  for (const { slice, bytes } of bySizeDescending) {
    if ((currentBytes + bytes > config.maxBytesPerGroup || currentGroup.length >= maxFiles) && currentGroup.length > 0) {
      groups.push(clusteringGroup(currentGroup, currentBytes, config.targetFileMaxBytes));
      currentGroup = [];
      currentBytes = 0;
      // At the cap, the slice that did not fit waits for a later plan with the rest of the partition.
      if (groups.length >= config.maxNumGroups) return { groups, partial: true };
    }
    currentGroup.push(slice);
    currentBytes += bytes;
  }
  if (currentGroup.length > 1 || (currentGroup.length === 1 && shouldClusterSingleGroup(config))) {
    groups.push(clusteringGroup(currentGroup, currentBytes, config.targetFileMaxBytes));
  }
  return { groups, partial: false };
}

export interface ClusteringPlanInput {
  /** The partitions to plan, in order: filterPartitions' result. */
  readonly partitionPaths: readonly string[];
  /** The latest slice of every file group (of any partition; those outside partitionPaths are ignored). */
  readonly latestSlices: readonly FileSliceInput[];
  /** File groups in pending clustering or compaction plans, as fileGroupKey(partition, fileId) (lib/table/file-system-view.ts). */
  readonly pendingFileGroupIds: ReadonlySet<string>;
  readonly config: GroupingConfig & Pick<ClusteringConfig, 'smallFileLimitBytes' | 'executionStrategyClass' | 'preserveCommitMetadata'>;
  /**
   * Hudi 1.x with incremental table services (hoodie.table.services.incremental.enabled, on by default): the
   * partitions left out before grouping (RECENT_DAYS' skipped latest ones; with partition.selected, the last
   * clustering's missing ones). The plan then records, as missingSchedulePartitions, these and every partition whose
   * slices were not all grouped. Undefined on 0.x tables (and with the key off), whose plans have no such list.
   */
  readonly missingPartitions?: readonly string[];
}

/**
 * PartitionAwareClusteringPlanStrategy.generateClusteringPlan after partition filtering: eligible slices and groups
 * per partition in partition order, at most max.num.groups per partition and overall (later partitions wait).
 * Undefined when there is nothing to cluster.
 */
export function buildClusteringPlan(input: ClusteringPlanInput): ClusteringPlan | undefined {
  const { config } = input;
  const slicesByPartition = new Map<string, FileSliceInput[]>();
  for (const slice of input.latestSlices) {
    const slices = slicesByPartition.get(slice.partitionPath);
    if (slices) slices.push(slice);
    else slicesByPartition.set(slice.partitionPath, [slice]);
  }

  const collected: ClusteringPlanGroup[] = [];
  // Java's HashSet of the partitions left for later, filled in Hudi 1.x's order (generateClusteringPlan).
  const skipped: string[] = [];
  // A partition named twice (partition.selected) must not put its file groups in two groups.
  for (const partitionPath of new Set(input.partitionPaths)) {
    const eligible = getEligibleSlices(slicesByPartition.get(partitionPath) ?? [], input.pendingFileGroupIds, config.smallFileLimitBytes);
    const { groups, partial } = groupPartition(partitionPath, eligible, config);
    if (groups.length > config.maxNumGroups || partial) skipped.push(partitionPath);
    collected.push(...groups.slice(0, config.maxNumGroups));
  }
  const inputGroups = collected.slice(0, config.maxNumGroups);
  if (inputGroups.length === 0) return undefined;
  for (const group of collected.slice(config.maxNumGroups)) skipped.push(group.slices[0]?.partitionPath ?? '');
  const missing = input.missingPartitions === undefined ? undefined : javaHashSetOrder([...skipped, ...input.missingPartitions]);

  return {
    inputGroups,
    strategy: { strategyClassName: config.executionStrategyClass, strategyParams: sortColumnsParams(config), version: CLUSTERING_PLAN_VERSION },
    extraMetadata: {},
    version: CLUSTERING_PLAN_VERSION,
    preserveHoodieMetadata: config.preserveCommitMetadata,
    ...(missing === undefined ? {} : { missingSchedulePartitions: missing }),
  };
}

/** Java's String.hashCode: over UTF-16 code units, in 32-bit arithmetic. */
function javaStringHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * The iteration order of a java.util.HashSet filled with `values` in this order (duplicates dropped): by bucket
 * (HashMap.hash spreads the hash's high bits, the table doubles from 16 past a 0.75 load), then by insertion within
 * a bucket, since a resize keeps each bucket's relative order. Hudi 1.x turns such sets into lists for its
 * incremental partitions and a plan's missingSchedulePartitions.
 */
export function javaHashSetOrder(values: Iterable<string>): string[] {
  const unique = [...new Set(values)];
  let capacity = 16;
  while (unique.length > capacity * 0.75) capacity *= 2;
  const bucket = (value: string): number => {
    const hash = javaStringHash(value);
    return (hash ^ (hash >>> 16)) & (capacity - 1);
  };
  return unique
    .map((value, index) => ({ value, index, bucket: bucket(value) }))
    .sort((a, b) => a.bucket - b.bucket || a.index - b.index)
    .map((entry) => entry.value);
}
