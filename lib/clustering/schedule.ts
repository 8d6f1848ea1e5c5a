/**
 * Scheduling a clustering, as Hudi's ClusteringPlanActionExecutor: decide whether enough commits happened since the
 * last clustering (only when inline or async clustering is enabled, see hudiSchedulingThreshold), plan the small file slices of the selected partitions into groups, and persist the plan as
 * `<instant>.replacecommit.requested` (Avro HoodieRequestedReplaceMetadata, operationType CLUSTER) under the lock.
 */
import { HudiError } from '../errors.js';
import { withLock, type LockProvider } from '../lock/port.js';
import { fieldNames, parseAvroRecordSchema, withMetaFields, type AvroRecordSchema } from '../schema.js';
import { assertNoMetadataTable, assertNoMetadataTableNow } from '../metadata/index.js';
import type { HudiTable } from '../table.js';
import { assertSupported, METAFOLDER } from '../table-config.js';
import { encodeTimelineAvro, type HoodieRequestedReplaceMetadata } from '../timeline/avro-files.js';
import { compareInstantTimes, newInstantTime } from '../timeline/instant.js';
import { latestTableSchema, readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { createRequested } from '../timeline/transitions.js';
import type { Storage } from '../storage/port.js';
import { validateSortColumns, type ClusteringConfig } from './config.js';
import {
  buildClusteringPlan, CLUSTERING_PLAN_VERSION, filterPartitions, requiredCommitsSinceLastClustering, shouldSchedule, type ClusteringPlan, type FileSliceInput,
} from './plan-strategy.js';

export interface ScheduleOptions {
  readonly lock: LockProvider;
  /** Plan even if fewer than max.commits commits happened since the last clustering. */
  readonly force?: boolean;
  /** The clock: the new instant time and DAY_ROLLING's hour (tests pin it). */
  readonly now?: Date;
  readonly lockWaitMs?: number;
  /** Why nothing was planned, and other one-line notes. */
  readonly log?: (line: string) => void;
}

/** One planned group, small enough for a Step Functions state. */
export interface ScheduledGroup {
  readonly index: number;
  readonly partitionPath: string;
  readonly inputFiles: number;
  readonly inputBytes: number;
  readonly numOutputFileGroups: number;
}

export interface ScheduleResult {
  readonly instantTime: string;
  readonly groups: readonly ScheduledGroup[];
}

/** How many completed commits since the last clustering a plan waits for, and which setting says so. */
export interface SchedulingThreshold {
  readonly commits: number;
  /** The key(s) the number comes from, or why there is none to wait for. */
  readonly setBy: string;
}

type ThresholdKeys = Pick<ClusteringConfig, 'inlineClustering' | 'inlineMaxCommits' | 'asyncClusteringEnabled' | 'scheduleInlineClustering' | 'asyncMaxCommits'>;

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

/**
 * HoodieActiveTimeline.getLastClusterCommit + findInstantsAfter: completed commits (commit, deltacommit,
 * replacecommit) after the newest completed replacecommit whose operationType is CLUSTER (all of them when none).
 */
export async function commitsSinceLastClustering(storage: Storage, timeline: Timeline): Promise<{ count: number; lastClustering: string | undefined }> {
  const writes = timeline.completedWrites();
  let lastClustering: string | undefined;
  for (const instant of [...writes].reverse()) {
    if (instant.action !== 'replacecommit') continue;
    if ((await readCommitMetadata(storage, instant)).operationType === 'CLUSTER') {
      lastClustering = instant.time;
      break;
    }
  }
  const count = lastClustering === undefined ? writes.length : writes.filter((instant) => compareInstantTimes(instant.time, lastClustering) > 0).length;
  return { count, lastClustering };
}

/** The table schema (Avro, without meta fields) from the latest commit that recorded one. */
export async function tableSchema(table: HudiTable): Promise<{ text: string; schema: AvroRecordSchema }> {
  const text = await latestTableSchema(table.storage, table.timeline);
  if (text === undefined) {
    throw new HudiError('no completed commit records the table schema (extraMetadata.schema)', {
      location: table.storage.uriOf(METAFOLDER),
      fix: 'write to the table with Hudi (or this tool) once before clustering it',
    });
  }
  return { text, schema: parseAvroRecordSchema(text, table.storage.uriOf(METAFOLDER)) };
}

/** Avro types Hudi's curve builders can order by (after Spark's Avro → SQL mapping). */
function curveSortable(type: unknown): boolean {
  if (Array.isArray(type)) {
    const branches = type.filter((branch) => branch !== 'null');
    return branches.length === 1 && curveSortable(branches[0]);
  }
  if (typeof type === 'string') return ['int', 'long', 'float', 'double', 'string', 'boolean', 'bytes'].includes(type);
  if (type !== null && typeof type === 'object') {
    const named = type as { type?: unknown; logicalType?: unknown };
    if (named.type === 'enum' || named.type === 'fixed') return true;
    if (typeof named.type === 'string') return curveSortable(named.type);
  }
  return false;
}

/**
 * Check the sort columns against the table schema before anything is written: they must exist (meta columns
 * included, as Hudi sorts the rows with them) and, for z-order/hilbert over 2+ columns, have a primitive type.
 */
export function validateClusteringSortColumns(config: ClusteringConfig, schema: AvroRecordSchema, location: string): void {
  const withMeta = withMetaFields(schema);
  validateSortColumns(config, fieldNames(withMeta));
  const curve = config.layoutOptimizationStrategy !== 'linear' && (config.sortColumns.length > 1 || config.curveBuildMethod === 'SAMPLE');
  if (!curve) return;
  for (const column of config.sortColumns) {
    const field = withMeta.fields.find((candidate) => candidate.name === column);
    if (field !== undefined && !curveSortable(field.type)) {
      throw new HudiError(`sort column "${column}" has type ${JSON.stringify(field.type)}, which ${config.layoutOptimizationStrategy} ordering cannot take`, {
        location,
        fix: 'sort by primitive columns (numbers, strings, dates, timestamps, decimals), or use hoodie.layout.optimize.strategy=linear',
      });
    }
  }
  if (config.layoutOptimizationStrategy === 'hilbert' && config.sortColumns.length === 1 && config.curveBuildMethod === 'SAMPLE') {
    throw new HudiError('hilbert with one sort column and curve.build.method SAMPLE fails in Hudi (a Hilbert curve needs 2+ dimensions)', {
      location: 'hoodie.clustering.plan.strategy.sort.columns',
      fix: 'add a second sort column, or use curve.build.method DIRECT (one column is then sorted linearly)',
    });
  }
}

/**
 * Plan a clustering and persist it; undefined (and nothing written) when it is not time yet or nothing is eligible.
 * Everything from reading the timeline to writing the requested file happens under the lock, so the plan never
 * includes a file group another plan scheduled meanwhile and its instant time is greater than every instant.
 */
export async function schedule(table: HudiTable, config: ClusteringConfig, options: ScheduleOptions): Promise<ScheduleResult | undefined> {
  const { storage } = table;
  const log = options.log ?? (() => undefined);
  assertSupported(table.config, storage.uriOf(`${METAFOLDER}/hoodie.properties`), 'write');
  assertNoMetadataTable(table.config, storage.uriOf(`${METAFOLDER}/hoodie.properties`), 'a clustering');
  // Refuse a bad configuration before taking the lock or writing anything.
  validateClusteringSortColumns(config, (await tableSchema(table)).schema, storage.uriOf(METAFOLDER));
  const threshold = hudiSchedulingThreshold(config);
  const dueIn = async (timeline: Timeline): Promise<boolean> => {
    if (threshold.commits === 0 || options.force === true) return true;
    const since = await commitsSinceLastClustering(storage, timeline);
    if (shouldSchedule({ completedCommitsSinceLastClustering: since.count, maxCommits: threshold.commits })) return true;
    log(`not scheduling: ${since.count} completed commit(s) since ${since.lastClustering === undefined ? 'the table was created' : `the last clustering ${since.lastClustering}`}, waiting for ${threshold.commits} (${threshold.setBy}); --force plans anyway`);
    return false;
  };
  // A periodic trigger that finds it is not time yet should not even take the lock.
  if (!(await dueIn(table.timeline))) return undefined;

  return withLock(
    options.lock,
    async (lease) => {
      const current = await table.reload();
      if (!(await dueIn(current.timeline))) return undefined;

      const view = await current.fileSystemView();
      const now = options.now ?? new Date();
      const partitionPaths = filterPartitions(view.partitionPaths(), config, now.getHours());
      const latestSlices: FileSliceInput[] = view.latestSlices().map((slice) => ({
        fileId: slice.fileId,
        partitionPath: slice.partitionPath,
        baseFilePath: storage.uriOf(slice.baseFile.path),
        baseFileSize: slice.baseFile.size,
        instantTime: slice.baseInstantTime,
      }));
      const plan = buildClusteringPlan({ partitionPaths, latestSlices, pendingFileGroupIds: view.pendingClusteringFileGroups(), config });
      if (plan === undefined) {
        log(`not scheduling: no file slice smaller than ${config.smallFileLimitBytes} bytes outside pending clustering plans in ${partitionPaths.length} partition(s)`);
        return undefined;
      }

      const instantTime = newInstantTime(current.timeline.allTimes(), now, current.config.timelineTimeZone);
      const requested: HoodieRequestedReplaceMetadata = { operationType: 'CLUSTER', clusteringPlan: plan, extraMetadata: {}, version: CLUSTERING_PLAN_VERSION };
      const bytes = encodeTimelineAvro('requestedReplace', requested);
      await assertNoMetadataTableNow(storage, 'a clustering');
      await lease.assertHeld();
      await createRequested(storage, instantTime, 'replacecommit', bytes);
      return { instantTime, groups: scheduledGroups(plan, latestSlices) };
    },
    options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs },
  );
}

function scheduledGroups(plan: ClusteringPlan, slices: readonly FileSliceInput[]): ScheduledGroup[] {
  const sizes = new Map(slices.map((slice) => [slice.baseFilePath, slice.baseFileSize]));
  return plan.inputGroups.map((group, index) => ({
    index,
    partitionPath: group.slices[0]?.partitionPath ?? '',
    inputFiles: group.slices.length,
    inputBytes: group.slices.reduce((total, slice) => total + (sizes.get(slice.dataFilePath) ?? 0), 0),
    numOutputFileGroups: group.numOutputFileGroups,
  }));
}
