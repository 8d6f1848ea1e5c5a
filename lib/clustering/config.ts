/**
 * Clustering configuration: Hudi's `hoodie.clustering.*` and `hoodie.layout.optimize.*` keys (HoodieClusteringConfig,
 * Hudi 0.14) with Hudi's Spark defaults, plus Flink's `clustering.*` names as aliases, merged into one frozen
 * `ClusteringConfig`. Precedence: the Lambda event's `properties` > environment variables (the key upper-cased, other
 * characters `_`; only HOODIE_CLUSTERING_* and HOODIE_LAYOUT_OPTIMIZE_*) > the properties file > Hudi's defaults;
 * within a source `hoodie.*` beats `hoodie.datasource.*`, which beats the Flink alias. Unknown keys under our prefixes
 * are warnings, others ignored, so a full Hudi properties file can be passed as is.
 *
 * Why one long file: about half of it is the key table itself (one definition per key, with its description for the
 * README) and the Flink alias table; the resolver that merges the sources is the rest.
 */
import {
  anyText,
  bool,
  type ConfigKey,
  ConfigValueError,
  commaList,
  defineKey,
  javaInt,
  javaLong,
  namedValue,
  noteKeyRead,
  oneOf,
  optionalText,
  parseKeyText,
} from '../config/index.js';
import { HudiError } from '../errors.js';
import { UPDATES_STRATEGY, type UpdatesStrategyClass } from '../table/updates-strategy.js';

export { envVarForKey } from '../config/index.js';

import { parseJavaProperties } from '../table/properties.js';
import { type CurveBuildMethod, SORT_LAYOUTS, type SortLayout } from './sort-columns.js';

// ---------------------------------------------------------------------------------------------------------------
// Strategy class names Hudi writes into configs and plans.

const PLAN_STRATEGY_PACKAGE = 'org.apache.hudi.client.clustering.plan.strategy';
const RUN_STRATEGY_PACKAGE = 'org.apache.hudi.client.clustering.run.strategy';

export const SPARK_SIZE_BASED_PLAN_STRATEGY = `${PLAN_STRATEGY_PACKAGE}.SparkSizeBasedClusteringPlanStrategy`;
export const FLINK_SIZE_BASED_PLAN_STRATEGY = `${PLAN_STRATEGY_PACKAGE}.FlinkSizeBasedClusteringPlanStrategy`;
export const JAVA_SIZE_BASED_PLAN_STRATEGY = `${PLAN_STRATEGY_PACKAGE}.JavaSizeBasedClusteringPlanStrategy`;
export const SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY = `${RUN_STRATEGY_PACKAGE}.SparkSortAndSizeExecutionStrategy`;
/** Hudi 1.1's binary-copy executor: asks for binary copy (on by default here); plans still name SparkSortAndSize, which Hudi 0.15 can run. */
export const SPARK_BINARY_COPY_EXECUTION_STRATEGY = `${RUN_STRATEGY_PACKAGE}.SparkBinaryCopyClusteringExecutionStrategy`;
export const JAVA_SORT_AND_SIZE_EXECUTION_STRATEGY = `${RUN_STRATEGY_PACKAGE}.JavaSortAndSizeExecutionStrategy`;

/** The size-based planners: all three pick small files per partition the same way, which is what plan-strategy.ts does. */
export type PlanStrategyClass = typeof SPARK_SIZE_BASED_PLAN_STRATEGY | typeof FLINK_SIZE_BASED_PLAN_STRATEGY | typeof JAVA_SIZE_BASED_PLAN_STRATEGY;
export type ExecutionStrategyClass = typeof SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY | typeof JAVA_SORT_AND_SIZE_EXECUTION_STRATEGY;

/**
 * Planner classes Hudi deprecated in favour of a size-based planner plus a partition filter mode
 * (ClusteringPlanStrategy.checkAndGetClusteringPlanStrategy, which overrides the filter mode the same way).
 */
const DEPRECATED_PLAN_STRATEGIES: Readonly<Record<string, { readonly planStrategy: PlanStrategyClass; readonly filterMode: PartitionFilterMode }>> = {
  [`${PLAN_STRATEGY_PACKAGE}.SparkRecentDaysClusteringPlanStrategy`]: { planStrategy: SPARK_SIZE_BASED_PLAN_STRATEGY, filterMode: 'RECENT_DAYS' },
  [`${PLAN_STRATEGY_PACKAGE}.SparkSelectedPartitionsClusteringPlanStrategy`]: {
    planStrategy: SPARK_SIZE_BASED_PLAN_STRATEGY,
    filterMode: 'SELECTED_PARTITIONS',
  },
  [`${PLAN_STRATEGY_PACKAGE}.JavaRecentDaysClusteringPlanStrategy`]: { planStrategy: JAVA_SIZE_BASED_PLAN_STRATEGY, filterMode: 'RECENT_DAYS' },
};

export type PartitionFilterMode = 'NONE' | 'RECENT_DAYS' | 'SELECTED_PARTITIONS' | 'DAY_ROLLING';

export const PARTITION_FILTER_MODES: readonly PartitionFilterMode[] = ['NONE', 'RECENT_DAYS', 'SELECTED_PARTITIONS', 'DAY_ROLLING'];

// ---------------------------------------------------------------------------------------------------------------
// The typed result.

export interface ClusteringConfig {
  /** hoodie.clustering.inline */
  readonly inlineClustering: boolean;
  /** hoodie.clustering.inline.max.commits */
  readonly inlineMaxCommits: number;
  /** hoodie.clustering.schedule.inline */
  readonly scheduleInlineClustering: boolean;
  /** hoodie.clustering.async.enabled */
  readonly asyncClusteringEnabled: boolean;
  /** hoodie.clustering.async.max.commits */
  readonly asyncMaxCommits: number;
  /** hoodie.clustering.plan.strategy.class (deprecated planners already resolved) */
  readonly planStrategyClass: PlanStrategyClass;
  /** hoodie.clustering.execution.strategy.class: written into the plan as its strategyClassName. */
  readonly executionStrategyClass: ExecutionStrategyClass;
  /** hoodie.clustering.plan.partition.filter.mode */
  readonly partitionFilterMode: PartitionFilterMode;
  /** hoodie.clustering.plan.strategy.daybased.lookback.partitions (0 = all) */
  readonly lookbackPartitions: number;
  /** hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions */
  readonly skipFromLatestPartitions: number;
  /** hoodie.clustering.plan.strategy.cluster.begin.partition (inclusive) */
  readonly beginPartition: string | undefined;
  /** hoodie.clustering.plan.strategy.cluster.end.partition (inclusive) */
  readonly endPartition: string | undefined;
  /** hoodie.clustering.plan.strategy.partition.regex.pattern (Java regex, whole-path match) */
  readonly partitionRegexPattern: string | undefined;
  /** hoodie.clustering.plan.strategy.partition.selected, split on commas; empty when unset. */
  readonly partitionSelected: readonly string[];
  /** hoodie.clustering.plan.strategy.small.file.limit */
  readonly smallFileLimitBytes: number;
  /** hoodie.clustering.plan.strategy.max.bytes.per.group */
  readonly maxBytesPerGroup: number;
  /** hoodie.clustering.plan.strategy.max.num.groups */
  readonly maxNumGroups: number;
  /** hoodie.clustering.plan.strategy.target.file.max.bytes */
  readonly targetFileMaxBytes: number;
  /** hoodie.clustering.plan.strategy.single.group.clustering.enabled */
  readonly singleGroupClusteringEnabled: boolean;
  /** hoodie.clustering.plan.strategy.sort.columns, split on commas and trimmed; empty when unset. */
  readonly sortColumns: readonly string[];
  /** hoodie.clustering.max.parallelism */
  readonly maxParallelism: number;
  /** hoodie.clustering.group.read.parallelism */
  readonly groupReadParallelism: number;
  /** hoodie.clustering.updates.strategy */
  readonly updatesStrategyClass: UpdatesStrategyClass;
  /** hoodie.clustering.rollback.pending.replacecommit.on.conflict */
  readonly rollbackPendingClusteringOnConflict: boolean;
  /** hoodie.clustering.preserve.commit.metadata: becomes the plan's preserveHoodieMetadata. */
  readonly preserveCommitMetadata: boolean;
  /**
   * hoodie.table.services.incremental.enabled (Hudi 1.x, default true): after a completed clustering, plan only the
   * partitions written since it and those its plan left (missingSchedulePartitions). Hudi 0.x has no such key, so it
   * applies to table versions 8 and 9 only.
   */
  readonly incrementalTableServices: boolean;
  /** hoodie.clustering.plan.strategy.binary.copy.enable (ours): bin-pack groups copy row groups instead of rewriting rows, where safe. */
  readonly binaryCopyEnabled: boolean;
  /** hoodie.clustering.plan.strategy.binary.copy.schema.evolution.enable (Hudi 1.1): copy files whose schemas differ by added columns. */
  readonly binaryCopySchemaEvolution: boolean;
  /** hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes (ours): rewrite instead when input row groups average less. */
  readonly binaryCopyMinRowGroupBytes: number;
  /** hoodie.clustering.plan.strategy.max.files.per.group (ours): a group closes at this many files, whatever their bytes. */
  readonly maxFilesPerGroup: number;
  /** hoodie.layout.optimize.strategy */
  readonly layoutOptimizationStrategy: SortLayout;
  /** hoodie.layout.optimize.curve.build.method (DIRECT / SAMPLE, in sort-columns.ts's lower-case vocabulary) */
  readonly curveBuildMethod: CurveBuildMethod;
  /** hoodie.layout.optimize.build.curve.sample.size */
  readonly buildCurveSampleSize: number;
}

export interface ResolvedClusteringConfig {
  readonly config: ClusteringConfig;
  /** Unknown, deprecated, ignored or overridden keys; nothing is logged here. */
  readonly warnings: string[];
}

// ---------------------------------------------------------------------------------------------------------------
// The keys.

const MIB = 1024 * 1024;
const NO_ITEMS: readonly string[] = Object.freeze([]);
const EXECUTION_STRATEGIES = [SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY, JAVA_SORT_AND_SIZE_EXECUTION_STRATEGY, SPARK_BINARY_COPY_EXECUTION_STRATEGY] as const;

/** Every supported key with Hudi's default, its parser and a one-line description (the README's configuration reference). */
export const CLUSTERING = {
  inline: defineKey({
    key: 'hoodie.clustering.inline',
    default: false,
    parser: bool,
    description:
      "Writers run clustering after each commit; makes scheduling wait for hoodie.clustering.inline.max.commits (with neither this nor async.enabled / schedule.inline on, `cluster` and the plan step schedule without waiting, as Hudi's HoodieClusteringJob).",
    alternatives: ['hoodie.datasource.clustering.inline.enable'],
  }),
  inlineMaxCommits: defineKey({
    key: 'hoodie.clustering.inline.max.commits',
    default: 4,
    parser: javaInt(0),
    description: 'Commits needed since the last clustering before inline clustering is scheduled.',
  }),
  scheduleInline: defineKey({
    key: 'hoodie.clustering.schedule.inline',
    default: false,
    parser: bool,
    description: 'Writers schedule clustering inline and leave execution to an async job; cannot be combined with hoodie.clustering.inline.',
  }),
  asyncEnabled: defineKey({
    key: 'hoodie.clustering.async.enabled',
    default: false,
    parser: bool,
    description: 'Clustering is scheduled and run asynchronously; makes scheduling wait for hoodie.clustering.async.max.commits (so does schedule.inline).',
    alternatives: ['hoodie.datasource.clustering.async.enable'],
  }),
  asyncMaxCommits: defineKey({
    key: 'hoodie.clustering.async.max.commits',
    default: 4,
    parser: javaInt(0),
    description:
      'Commits needed since the last clustering before async clustering is scheduled; the serverless trigger waits for it too when no clustering key above is on (its own policy).',
  }),
  planStrategyClass: defineKey({
    key: 'hoodie.clustering.plan.strategy.class',
    default: SPARK_SIZE_BASED_PLAN_STRATEGY as string,
    parser: anyText,
    description: 'Planner: the size-based planners (Spark/Flink/Java) pick file slices smaller than small.file.limit in each partition.',
  }),
  executionStrategyClass: defineKey({
    key: 'hoodie.clustering.execution.strategy.class',
    default: SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY as ExecutionStrategyClass | typeof SPARK_BINARY_COPY_EXECUTION_STRATEGY,
    parser: oneOf(EXECUTION_STRATEGIES, { exactCase: true }),
    description:
      "Executor named in the plan: sorts each group by the sort columns and writes files of about target.file.max.bytes. Hudi 1.1's SparkBinaryCopyClusteringExecutionStrategy is accepted and asks for binary copy (on by default here); plans then still name SparkSortAndSizeExecutionStrategy, which Hudi 0.15 can run.",
  }),
  partitionFilterMode: defineKey({
    key: 'hoodie.clustering.plan.partition.filter.mode',
    default: 'NONE' as PartitionFilterMode,
    parser: oneOf(PARTITION_FILTER_MODES),
    description: 'Which partitions to plan: NONE (all), RECENT_DAYS, SELECTED_PARTITIONS (begin..end) or DAY_ROLLING (index % 24 = hour).',
  }),
  lookbackPartitions: defineKey({
    key: 'hoodie.clustering.plan.strategy.daybased.lookback.partitions',
    default: 2,
    parser: javaInt(0),
    description: 'RECENT_DAYS: how many partitions (newest first, after skipping) to plan; 0 means all.',
  }),
  skipFromLatestPartitions: defineKey({
    key: 'hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions',
    default: 0,
    parser: javaInt(0),
    description: 'RECENT_DAYS: how many of the newest partitions to skip.',
  }),
  beginPartition: defineKey({
    key: 'hoodie.clustering.plan.strategy.cluster.begin.partition',
    default: undefined,
    parser: optionalText,
    description: 'SELECTED_PARTITIONS: first partition path to plan (inclusive, string order).',
  }),
  endPartition: defineKey({
    key: 'hoodie.clustering.plan.strategy.cluster.end.partition',
    default: undefined,
    parser: optionalText,
    description: 'SELECTED_PARTITIONS: last partition path to plan (inclusive, string order).',
  }),
  partitionRegexPattern: defineKey({
    key: 'hoodie.clustering.plan.strategy.partition.regex.pattern',
    default: undefined,
    parser: optionalText,
    description: 'Only partitions whose whole path matches this regular expression (ignored when partition.selected is set).',
  }),
  partitionSelected: defineKey({
    key: 'hoodie.clustering.plan.strategy.partition.selected',
    default: NO_ITEMS,
    parser: commaList,
    description: 'Comma-separated partition paths to plan instead of listing the table; the filter mode still applies.',
  }),
  smallFileLimitBytes: defineKey({
    key: 'hoodie.clustering.plan.strategy.small.file.limit',
    default: 300 * MIB,
    parser: javaLong(0),
    description: 'Base files smaller than this many bytes are clustering candidates.',
  }),
  maxBytesPerGroup: defineKey({
    key: 'hoodie.clustering.plan.strategy.max.bytes.per.group',
    default: 2 * 1024 * MIB,
    parser: javaLong(0),
    description: 'A clustering group closes before it would exceed this many bytes of input.',
  }),
  maxNumGroups: defineKey({
    key: 'hoodie.clustering.plan.strategy.max.num.groups',
    default: 30,
    parser: javaInt(1),
    description: 'At most this many clustering groups per plan (and per partition).',
  }),
  targetFileMaxBytes: defineKey({
    key: 'hoodie.clustering.plan.strategy.target.file.max.bytes',
    default: 1024 * MIB,
    parser: javaLong(1),
    description: 'Target output file size: a group of N bytes writes ceil(N / this) files.',
  }),
  singleGroupClusteringEnabled: defineKey({
    key: 'hoodie.clustering.plan.strategy.single.group.clustering.enabled',
    default: true,
    parser: bool,
    description: "Also plan a partition's last group when it holds a single file slice (always done when sort columns are set).",
  }),
  sortColumns: defineKey({
    key: 'hoodie.clustering.plan.strategy.sort.columns',
    default: NO_ITEMS,
    parser: commaList,
    description: 'Comma-separated columns to sort the clustered data by.',
  }),
  maxFilesPerGroup: defineKey({
    key: 'hoodie.clustering.plan.strategy.max.files.per.group',
    default: 10000,
    parser: javaInt(1),
    description:
      "Not a Hudi key: a group also closes once it holds this many files, however small they are, so one execute-group stays within a Lambda's 15 minutes and file handles on a table of tiny files (Hudi caps a group by bytes only).",
  }),
  binaryCopyEnabled: defineKey({
    key: 'hoodie.clustering.plan.strategy.binary.copy.enable',
    default: true,
    parser: bool,
    description:
      "Not a Hudi key: a group without sort columns is clustered by copying its files' Parquet row groups byte for byte into the new files (only _hoodie_file_name is re-encoded, the footer rebuilt), as Hudi 1.1's SparkBinaryCopyClusteringExecutionStrategy does; where that is not safe (see the run's report for the reason) the rows are rewritten. false always rewrites.",
  }),
  binaryCopySchemaEvolution: defineKey({
    key: 'hoodie.clustering.plan.strategy.binary.copy.schema.evolution.enable',
    default: false,
    parser: bool,
    description:
      "Binary copy of files whose Parquet schemas differ: older files may lack top-level columns of the newest one (written as nulls); with false only files of one schema are copied (Hudi 1.1's key).",
  }),
  binaryCopyMinRowGroupBytes: defineKey({
    key: 'hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes',
    default: 4 * MIB,
    parser: javaLong(0),
    description:
      'Not a Hudi key: binary copy keeps row groups as they are, so groups whose input row groups average fewer bytes than this are rewritten into large row groups instead.',
  }),
  maxParallelism: defineKey({
    key: 'hoodie.clustering.max.parallelism',
    default: 15,
    parser: javaInt(1),
    description: 'At most this many clustering groups are executed at the same time.',
  }),
  groupReadParallelism: defineKey({
    key: 'hoodie.clustering.group.read.parallelism',
    default: 20,
    parser: javaInt(1),
    description: 'Parallelism when reading the records of one clustering group.',
  }),
  updatesStrategyClass: UPDATES_STRATEGY,
  rollbackPendingClusteringOnConflict: defineKey({
    key: 'hoodie.clustering.rollback.pending.replacecommit.on.conflict',
    default: false,
    parser: bool,
    description: 'Roll back a pending clustering when an upsert conflicts with its file groups (only with updates allowed).',
  }),
  preserveCommitMetadata: defineKey({
    key: 'hoodie.clustering.preserve.commit.metadata',
    default: true,
    parser: bool,
    description: "Keep the records' _hoodie_commit_time when rewriting them (the plan's preserveHoodieMetadata).",
  }),
  incrementalTableServices: defineKey({
    key: 'hoodie.table.services.incremental.enabled',
    default: true,
    parser: bool,
    description:
      'Hudi 1.x tables only: after a completed clustering (compaction), the next clustering (compaction) plans only the partitions written since it and those its plan left for later (BaseTableServicePlanActionExecutor).',
  }),
  layoutOptimizationStrategy: defineKey({
    key: 'hoodie.layout.optimize.strategy',
    default: 'linear' as SortLayout,
    defaultText: 'LINEAR',
    parser: namedValue<SortLayout>(
      { linear: 'linear', 'z-order': 'z-order', zorder: 'z-order', hilbert: 'hilbert' },
      (text) => text.toLowerCase(),
      SORT_LAYOUTS,
    ),
    description: 'Sort order for the sort columns: linear, z-order or hilbert (case-insensitive).',
  }),
  curveBuildMethod: defineKey({
    key: 'hoodie.layout.optimize.curve.build.method',
    default: 'direct' as CurveBuildMethod,
    defaultText: 'DIRECT',
    parser: namedValue<CurveBuildMethod>({ DIRECT: 'direct', SAMPLE: 'sample' }, (text) => text.toUpperCase(), ['DIRECT', 'SAMPLE']),
    description: 'Space-filling curve build method for z-order/hilbert: DIRECT or SAMPLE.',
  }),
  buildCurveSampleSize: defineKey({
    key: 'hoodie.layout.optimize.build.curve.sample.size',
    default: 200000,
    parser: javaInt(1),
    description: 'SAMPLE curve build method: number of records sampled to find the boundaries.',
  }),
  dataSkippingEnable: defineKey({
    key: 'hoodie.layout.optimize.data.skipping.enable',
    default: true,
    parser: bool,
    description: 'Deprecated by Hudi 0.11; has no effect.',
    deprecated: true,
  }),
  layoutOptimizeEnable: defineKey({
    key: 'hoodie.layout.optimize.enable',
    default: false,
    parser: bool,
    description: 'Deprecated by Hudi 0.11 (hoodie.layout.optimize.strategy decides); has no effect.',
    deprecated: true,
  }),
} as const;

/** The keys as a list, in the README's order. */
export const CLUSTERING_KEYS: readonly ConfigKey<unknown>[] = Object.freeze(Object.values(CLUSTERING));

export interface FlinkClusteringAlias {
  /** Flink's option name (FlinkOptions). */
  readonly flinkKey: string;
  /** The Spark key it sets, or undefined for a Flink option this service has no use for. */
  readonly key: string | undefined;
  /** Flink's own default, in Flink's unit (informational: the defaults used here are Spark's). */
  readonly flinkDefault: string | undefined;
  /** Flink gives small.file.limit in MB, Spark in bytes. */
  readonly unit: 'megabytes' | undefined;
  readonly note: string;
}

function flinkAlias(flinkKey: string, key: string | undefined, flinkDefault: string | undefined, note: string, unit?: 'megabytes'): FlinkClusteringAlias {
  return Object.freeze({ flinkKey, key, flinkDefault, unit, note });
}

/** Flink `clustering.*` options and the Spark keys they set, as Hudi's FlinkWriteClients maps them. */
export const FLINK_CLUSTERING_ALIASES: readonly FlinkClusteringAlias[] = Object.freeze([
  flinkAlias('clustering.schedule.enabled', 'hoodie.clustering.async.enabled', 'false', 'Flink hands this to Hudi as hoodie.clustering.async.enabled.'),
  flinkAlias(
    'clustering.async.enabled',
    undefined,
    'false',
    'Runs clustering inside the Flink job; this service always executes what it plans, so it has no effect.',
  ),
  flinkAlias('clustering.delta_commits', 'hoodie.clustering.async.max.commits', '4', 'Commits needed before clustering is scheduled.'),
  flinkAlias('clustering.tasks', 'hoodie.clustering.max.parallelism', undefined, 'Clustering parallelism (Flink defaults it to the write parallelism).'),
  flinkAlias(
    'clustering.plan.strategy.daybased.lookback.partitions',
    'hoodie.clustering.plan.strategy.daybased.lookback.partitions',
    '2',
    'RECENT_DAYS lookback.',
  ),
  flinkAlias(
    'clustering.plan.strategy.daybased.skipfromlatest.partitions',
    'hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions',
    '0',
    'RECENT_DAYS skip.',
  ),
  flinkAlias('clustering.plan.strategy.cluster.begin.partition', 'hoodie.clustering.plan.strategy.cluster.begin.partition', '', 'SELECTED_PARTITIONS begin.'),
  flinkAlias('clustering.plan.strategy.cluster.end.partition', 'hoodie.clustering.plan.strategy.cluster.end.partition', '', 'SELECTED_PARTITIONS end.'),
  flinkAlias('clustering.plan.strategy.partition.regex.pattern', 'hoodie.clustering.plan.strategy.partition.regex.pattern', '', 'Partition regex.'),
  flinkAlias('clustering.plan.strategy.partition.selected', 'hoodie.clustering.plan.strategy.partition.selected', '', 'Selected partitions.'),
  flinkAlias('clustering.plan.strategy.class', 'hoodie.clustering.plan.strategy.class', FLINK_SIZE_BASED_PLAN_STRATEGY, 'Planner class.'),
  flinkAlias('clustering.plan.partition.filter.mode', 'hoodie.clustering.plan.partition.filter.mode', 'NONE', 'Partition filter mode.'),
  flinkAlias(
    'clustering.plan.strategy.target.file.max.bytes',
    'hoodie.clustering.plan.strategy.target.file.max.bytes',
    String(1024 * MIB),
    'Target file size, in bytes.',
  ),
  flinkAlias(
    'clustering.plan.strategy.small.file.limit',
    'hoodie.clustering.plan.strategy.small.file.limit',
    '600',
    'Small file limit in MEGABYTES (Flink default 600 MB); converted to bytes.',
    'megabytes',
  ),
  flinkAlias('clustering.plan.strategy.sort.columns', 'hoodie.clustering.plan.strategy.sort.columns', '', 'Sort columns.'),
  flinkAlias('clustering.plan.strategy.max.num.groups', 'hoodie.clustering.plan.strategy.max.num.groups', '30', 'Maximum number of groups.'),
]);

const SPEC_BY_KEY: ReadonlyMap<string, ConfigKey<unknown>> = new Map(CLUSTERING_KEYS.map((spec) => [spec.key, spec]));
const KEY_BY_ALTERNATIVE: ReadonlyMap<string, string> = new Map(
  CLUSTERING_KEYS.flatMap((spec) => spec.alternatives.map((alternative) => [alternative, spec.key] as const)),
);
const ALIAS_BY_FLINK_KEY: ReadonlyMap<string, FlinkClusteringAlias> = new Map(FLINK_CLUSTERING_ALIASES.map((alias) => [alias.flinkKey, alias]));
const KEY_BY_ENV_VAR: ReadonlyMap<string, string> = new Map(CLUSTERING_KEYS.map((spec) => [spec.envVar, spec.key]));

const WATCHED_KEY_PREFIXES = ['hoodie.clustering.', 'hoodie.layout.optimize', 'clustering.'];
const WATCHED_ENV_PREFIXES = ['HOODIE_CLUSTERING_', 'HOODIE_LAYOUT_OPTIMIZE_'];

// ---------------------------------------------------------------------------------------------------------------
// Sources → canonical settings.

/** One value for a canonical key, and where it came from (for messages). */
interface Setting {
  readonly value: string;
  /** The key as the user wrote it (a Flink alias, an env var name…). */
  readonly givenKey: string;
  /** Which source: "Lambda event properties", "environment", a file location. */
  readonly source: string;
  /** Within a source: canonical key 3, hoodie.datasource alternative 2, Flink alias 1. */
  readonly rank: number;
}

type Settings = Map<string, Setting>;

/** Parse properties text (Java .properties syntax) for use as the file source. */
export function parseProperties(text: string, location?: string): Map<string, string> {
  return parseJavaProperties(text, location);
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const substitution = previous[column - 1]! + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column]! + 1, current[column - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length]!;
}

/** "; did you mean X?" for a near miss (a typo, or a known key ending in the same two words), else "". */
function suggestionFor(unknownKey: string): string {
  const candidates = [...SPEC_BY_KEY.keys(), ...ALIAS_BY_FLINK_KEY.keys()];
  let best: { key: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(unknownKey, candidate);
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  if (best && best.distance <= 4) return `; did you mean ${best.key}?`;
  const lastTwoWords = unknownKey.split('.').slice(-2).join('.');
  const sameEnding = [...SPEC_BY_KEY.keys()].filter((key) => key.endsWith(`.${lastTwoWords}`));
  return sameEnding.length === 1 ? `; did you mean ${sameEnding[0]}?` : '';
}

function megabytesToBytes(megabytes: string, flinkKey: string, source: string): string {
  const trimmed = megabytes.trim();
  if (!/^\+?\d+$/.test(trimmed)) {
    throw new HudiError(`${flinkKey}="${megabytes}" is not a whole number of megabytes`, {
      location: source,
      fix: `give Flink's small file limit in MB (e.g. 600), or set hoodie.clustering.plan.strategy.small.file.limit in bytes`,
    });
  }
  return String(Number(trimmed) * MIB);
}

/** Map one source's raw keys onto canonical keys; `source` names the source in messages and warnings. */
function canonicalSettings(entries: Iterable<readonly [string, string]>, source: string, warnings: string[]): Settings {
  const settings: Settings = new Map();
  const place = (key: string, setting: Setting) => {
    const existing = settings.get(key);
    if (existing && existing.rank >= setting.rank) {
      if (existing.value !== setting.value) warnings.push(`${source}: ${setting.givenKey} ignored because ${existing.givenKey} is also set`);
      return;
    }
    if (existing && existing.value !== setting.value) warnings.push(`${source}: ${existing.givenKey} ignored because ${setting.givenKey} is also set`);
    settings.set(key, setting);
  };

  for (const [givenKey, value] of entries) {
    const spec = SPEC_BY_KEY.get(givenKey);
    if (spec) {
      if (spec.deprecated) warnings.push(`${source}: ${givenKey} is deprecated and has no effect`);
      place(givenKey, { value, givenKey, source, rank: 3 });
      continue;
    }
    const alternativeOf = KEY_BY_ALTERNATIVE.get(givenKey);
    if (alternativeOf) {
      place(alternativeOf, { value, givenKey, source, rank: 2 });
      continue;
    }
    const alias = ALIAS_BY_FLINK_KEY.get(givenKey);
    if (alias) {
      if (alias.key === undefined) {
        warnings.push(`${source}: Flink option ${givenKey} has no effect here (${alias.note})`);
        continue;
      }
      const converted = alias.unit === 'megabytes' ? megabytesToBytes(value, givenKey, source) : value;
      place(alias.key, { value: converted, givenKey, source, rank: 1 });
      continue;
    }
    if (WATCHED_KEY_PREFIXES.some((prefix) => givenKey.startsWith(prefix))) {
      warnings.push(`${source}: unknown clustering key ${givenKey} ignored${suggestionFor(givenKey)}`);
    }
  }
  return settings;
}

/** A Lambda event value as properties text; lists are comma-joined (sort columns, selected partitions). */
function eventValueAsText(key: string, value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string')) return value.join(',');
  throw new HudiError(`${key} has a value of an unusable type (${JSON.stringify(value) ?? typeof value})`, {
    location: EVENT_SOURCE,
    fix: 'give a string, a number, true/false, or (for lists) an array of strings',
  });
}

const EVENT_SOURCE = 'Lambda event properties';
const ENV_SOURCE = 'environment';

function envEntries(env: Readonly<Record<string, string | undefined>>, warnings: string[]): [string, string][] {
  const entries: [string, string][] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!WATCHED_ENV_PREFIXES.some((prefix) => name.startsWith(prefix))) continue;
    if (value === undefined || value === '') continue;
    const key = KEY_BY_ENV_VAR.get(name);
    if (key) entries.push([key, value]);
    else warnings.push(`${ENV_SOURCE}: unknown clustering variable ${name} ignored (variables are the key upper-cased with '.' as '_')`);
  }
  return entries;
}

export interface ClusteringConfigSources {
  /** A clustering properties file, e.g. from parseProperties(text). */
  readonly file?: { readonly location: string; readonly properties: ReadonlyMap<string, string> };
  /** Environment variables (process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The Lambda event's `properties` object: keys as in a properties file, values strings, numbers, booleans or string lists. */
  readonly event?: Readonly<Record<string, unknown>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Settings → typed values.

function describeSetting(key: string, setting: Setting | undefined): { name: string; location: string | undefined } {
  if (!setting) return { name: key, location: 'defaults' };
  const name = setting.givenKey === key ? key : `${setting.givenKey} (${key})`;
  return { name, location: setting.source };
}

/** Reads typed values from the merged settings: a key's parser on the winning source's text, else its default. */
function makeReader(settings: ReadonlyMap<string, Setting>, warnings: string[]) {
  const read = <T>(key: ConfigKey<T>): T => {
    noteKeyRead(key);
    const setting = settings.get(key.key);
    if (setting === undefined || setting.value.trim() === '') return key.default;
    return parseKeyText(key, setting.value, { givenKey: setting.givenKey, location: setting.source, warnings });
  };
  const fail = (key: ConfigKey<unknown>, problem: string, fix: string): never => {
    const setting = settings.get(key.key);
    const { name, location } = describeSetting(key.key, setting);
    throw new ConfigValueError(name, setting?.value ?? '', problem, location === undefined ? { fix } : { location, fix });
  };
  return { read, fail, setting: (key: ConfigKey<unknown>) => settings.get(key.key) };
}

/** Build the typed config from merged canonical settings. */
function buildConfig(settings: ReadonlyMap<string, Setting>, warnings: string[]): ClusteringConfig {
  const { read, fail, setting } = makeReader(settings, warnings);
  const K = CLUSTERING;

  const planStrategies = [SPARK_SIZE_BASED_PLAN_STRATEGY, FLINK_SIZE_BASED_PLAN_STRATEGY, JAVA_SIZE_BASED_PLAN_STRATEGY] as const;
  const givenPlanStrategy = read(K.planStrategyClass);
  const deprecatedPlanner = Object.hasOwn(DEPRECATED_PLAN_STRATEGIES, givenPlanStrategy) ? DEPRECATED_PLAN_STRATEGIES[givenPlanStrategy] : undefined;
  let partitionFilterMode = read(K.partitionFilterMode);
  let planStrategyClass: PlanStrategyClass;
  if (deprecatedPlanner) {
    warnings.push(
      `hoodie.clustering.plan.strategy.class ${givenPlanStrategy} is deprecated: using ${deprecatedPlanner.planStrategy} ` +
        `with hoodie.clustering.plan.partition.filter.mode=${deprecatedPlanner.filterMode}, as Hudi does`,
    );
    planStrategyClass = deprecatedPlanner.planStrategy;
    partitionFilterMode = deprecatedPlanner.filterMode;
  } else {
    const known = planStrategies.find((name) => name === givenPlanStrategy);
    planStrategyClass = known ?? fail(K.planStrategyClass, 'is not an accepted value', `use one of ${planStrategies.join(', ')}`);
  }

  const givenExecutionStrategy = read(K.executionStrategyClass);
  const binaryCopyEnabled = read(K.binaryCopyEnabled);
  if (givenExecutionStrategy === SPARK_BINARY_COPY_EXECUTION_STRATEGY) {
    if (!binaryCopyEnabled)
      fail(K.binaryCopyEnabled, `contradicts hoodie.clustering.execution.strategy.class=${SPARK_BINARY_COPY_EXECUTION_STRATEGY}`, 'drop one of the two');
    warnings.push(
      `hoodie.clustering.execution.strategy.class ${SPARK_BINARY_COPY_EXECUTION_STRATEGY} is Hudi 1.1's: binary copy is used where it is safe, ` +
        `and plans name ${SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY} so Hudi 0.15 can run them`,
    );
  }

  const partitionRegexPattern = read(K.partitionRegexPattern);
  if (partitionRegexPattern !== undefined) {
    try {
      // The form filterPartitions uses (Java's Pattern.matches is a whole-string match).
      new RegExp(`^(?:${partitionRegexPattern})$`);
    } catch (error) {
      fail(
        K.partitionRegexPattern,
        `is not a valid regular expression (${(error as Error).message})`,
        'fix the pattern; it must match the whole partition path',
      );
    }
  }

  const config: ClusteringConfig = {
    inlineClustering: read(K.inline),
    inlineMaxCommits: read(K.inlineMaxCommits),
    scheduleInlineClustering: read(K.scheduleInline),
    asyncClusteringEnabled: read(K.asyncEnabled),
    asyncMaxCommits: read(K.asyncMaxCommits),
    planStrategyClass,
    executionStrategyClass: givenExecutionStrategy === SPARK_BINARY_COPY_EXECUTION_STRATEGY ? SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY : givenExecutionStrategy,
    partitionFilterMode,
    lookbackPartitions: read(K.lookbackPartitions),
    skipFromLatestPartitions: read(K.skipFromLatestPartitions),
    beginPartition: read(K.beginPartition),
    endPartition: read(K.endPartition),
    partitionRegexPattern,
    partitionSelected: read(K.partitionSelected),
    smallFileLimitBytes: read(K.smallFileLimitBytes),
    maxBytesPerGroup: read(K.maxBytesPerGroup),
    maxNumGroups: read(K.maxNumGroups),
    targetFileMaxBytes: read(K.targetFileMaxBytes),
    singleGroupClusteringEnabled: read(K.singleGroupClusteringEnabled),
    sortColumns: read(K.sortColumns),
    maxParallelism: read(K.maxParallelism),
    groupReadParallelism: read(K.groupReadParallelism),
    updatesStrategyClass: read(K.updatesStrategyClass),
    rollbackPendingClusteringOnConflict: read(K.rollbackPendingClusteringOnConflict),
    preserveCommitMetadata: read(K.preserveCommitMetadata),
    incrementalTableServices: read(K.incrementalTableServices),
    binaryCopyEnabled,
    binaryCopySchemaEvolution: read(K.binaryCopySchemaEvolution),
    binaryCopyMinRowGroupBytes: read(K.binaryCopyMinRowGroupBytes),
    maxFilesPerGroup: read(K.maxFilesPerGroup),
    layoutOptimizationStrategy: read(K.layoutOptimizationStrategy),
    curveBuildMethod: read(K.curveBuildMethod),
    buildCurveSampleSize: read(K.buildCurveSampleSize),
  };
  // Deprecated keys are still type-checked, as Hudi would parse them.
  read(K.dataSkippingEnable);
  read(K.layoutOptimizeEnable);

  // HoodieClusteringConfig.Builder.validate()
  if (config.inlineClustering && config.scheduleInlineClustering) {
    throw new HudiError('hoodie.clustering.inline and hoodie.clustering.schedule.inline are both true', {
      location: describeSetting(K.scheduleInline.key, setting(K.scheduleInline)).location,
      fix: 'set at most one of them to true',
    });
  }
  return Object.freeze(config);
}

/**
 * Merge the sources (event > env > file > Hudi defaults) into a typed, frozen config. Throws HudiError for a value
 * that cannot be used; unknown or ignored keys come back as warnings.
 */
export function resolveClusteringConfig(sources: ClusteringConfigSources = {}): ResolvedClusteringConfig {
  const warnings: string[] = [];
  const fileSettings = sources.file ? canonicalSettings(sources.file.properties, sources.file.location, warnings) : new Map<string, Setting>();
  const envSettings = sources.env ? canonicalSettings(envEntries(sources.env, warnings), ENV_SOURCE, warnings) : new Map<string, Setting>();
  const eventEntries: [string, string][] = [];
  for (const [key, value] of Object.entries(sources.event ?? {})) {
    const text = eventValueAsText(key, value);
    if (text !== undefined) eventEntries.push([key, text]);
  }
  const eventSettings = canonicalSettings(eventEntries, EVENT_SOURCE, warnings);

  // Later sources override earlier ones.
  const merged = new Map<string, Setting>([...fileSettings, ...envSettings, ...eventSettings]);
  const config = buildConfig(merged, warnings);
  return { config, warnings };
}

/** Hudi's defaults, as a config. */
export const DEFAULT_CLUSTERING_CONFIG: ClusteringConfig = resolveClusteringConfig().config;
