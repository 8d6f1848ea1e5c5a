/**
 * A clean split into shares of partitions, with everything the workers exchange kept in the work folder
 * (lib/timeline/work-folder.ts) rather than in messages: so a serverless run can plan and delete a table of thousands of
 * partitions over many workers, none holding the whole table, and a state machine passes only share numbers (Step
 * Functions caps a state at 256 KB). Planning goes under `clean/plan-<time>-<run>/` (planning.json, share-<i>.json,
 * planned-<i>.json), executing clean T under `clean/<T>/` (share-<i>.json, manifest.json written last, result-<i>.json).
 * Every step is repeatable: a share with a result is not run again, a manifest is never rewritten (a resumed clean keeps
 * its split and results), and a result only says which files are gone, which stays true.
 */
import { createHash } from 'node:crypto';
import { executeCleanerPlan, type PartitionCleanStat } from '../cleaner/execute.js';
import type { CleanScopeSummary, PartitionCleanPlan, PartitionContext, PartitionDeletes, RetentionPoint } from '../cleaner/plan.js';
import { sliceContext } from '../cleaner/plan.js';
import { defineKey, javaInt, readKeys } from '../config/index.js';
import { ConflictError, HudiError } from '../errors.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import type { HoodieCleanerPlan } from '../timeline/avro-schemas.js';
import { compareInstantTimes, formatInstantTime, type Instant, isValidInstantTime } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { instantPath, type Timeline } from '../timeline/timeline.js';
import { transitionToInflight } from '../timeline/transitions.js';
import { CLEAN_PLANNING_ID, CLEAN_WORK_ROOT, cleanPlanningDir, cleanWorkDir, deleteWorkDir } from '../timeline/work-folder.js';
import { fileNameOf, folderNameOf } from '../util/paths.js';
import { type CleanPlanning, type CleanPreparation, planPartitions } from './schedule.js';

// ---------------------------------------------------------------------------------------------------------------
// Settings (ours, not Hudi's: Hudi's cleaner runs in one Spark job).

export interface CleanShareSettings {
  /** Partitions a planning worker lists and plans. */
  readonly partitionsPerShare: number;
  /** Files a delete worker deletes at most (a share holds whole partitions: one partition may exceed it alone). */
  readonly filesPerShare: number;
  /** Workers at once (the state machine's Map MaxConcurrency). */
  readonly maxConcurrency: number;
}

export const SERVERLESS_CLEAN_KEYS = {
  partitionsPerShare: defineKey({
    key: 'hoodie.serverless.clean.partitions.per.share',
    default: 500,
    parser: javaInt(1),
    description: 'serverless clean: partitions each planning Lambda lists and plans, and at most each delete Lambda cleans (not a Hudi key)',
  }),
  filesPerShare: defineKey({
    key: 'hoodie.serverless.clean.files.per.share',
    default: 20_000,
    parser: javaInt(1),
    description:
      'serverless clean: files each delete Lambda deletes at most, 1,000 per DeleteObjects request (whole partitions: a larger partition gets a Lambda of its own; not a Hudi key)',
  }),
  maxConcurrency: defineKey({
    key: 'hoodie.serverless.clean.max.concurrency',
    default: 10,
    parser: javaInt(1),
    description: 'serverless clean: planning or delete Lambdas running at once (each also has hoodie.cleaner.parallelism requests in flight; not a Hudi key)',
  }),
} as const;

export function cleanShareSettingsFromProperties(props: ReadonlyMap<string, string>, location = 'clean properties'): CleanShareSettings {
  return readKeys(props, SERVERLESS_CLEAN_KEYS, location);
}

export const DEFAULT_CLEAN_SHARE_SETTINGS: CleanShareSettings = cleanShareSettingsFromProperties(new Map());

// ---------------------------------------------------------------------------------------------------------------
// Reading and writing JSON in the work folder.

async function putJson(storage: Storage, path: string, value: unknown): Promise<void> {
  await storage.put(path, JSON.stringify(value));
}

async function getJson<T>(storage: Storage, path: string): Promise<T> {
  const bytes = await storage.get(path);
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as T;
  } catch (error) {
    throw new HudiError(`is not readable JSON: ${(error as Error).message}`, {
      location: storage.uriOf(path),
      fix: "delete the clean's work folder; the next run plans (or, for a pending clean, splits its plan) again",
    });
  }
}

async function getJsonIfPresent<T>(storage: Storage, path: string): Promise<T | undefined> {
  return (await storage.head(path)) === undefined ? undefined : getJson<T>(storage, path);
}

/** Which of `count` indexed files exist under `dir` (one listing). */
async function present(storage: Storage, dir: string, prefix: string, count: number): Promise<boolean[]> {
  const { files } = await storage.listDir(dir);
  const names = new Set(files.map((file) => fileNameOf(file.path)));
  return Array.from({ length: count }, (_, index) => names.has(`${prefix}-${index}.json`));
}

/**
 * One share's step, run at most once: a share whose result is stored already returns it (a retried worker);
 * otherwise its input is read (`noInput` names the error when it is gone), `work` runs, and its result is stored.
 */
async function runShareOnce<Input, Result>(
  storage: Storage,
  paths: { readonly input: string; readonly result: string },
  noInput: (location: string) => HudiError,
  work: (input: Input) => Promise<Result>,
): Promise<{ readonly ran: boolean; readonly result: Result }> {
  const earlier = await getJsonIfPresent<Result>(storage, paths.result);
  if (earlier !== undefined) return { ran: false, result: earlier };
  const input = await getJsonIfPresent<Input>(storage, paths.input);
  if (input === undefined) throw noInput(storage.uriOf(paths.input));
  const result = await work(input);
  await putJson(storage, paths.result, result);
  return { ran: true, result };
}

/** The stored results `<dir>/<prefix>-<i>.json` of `count` shares in share order, or (none read) the shares without one. */
async function gatherShareResults<Result>(storage: Storage, dir: string, prefix: string, count: number): Promise<{ results: Result[]; missing: number[] }> {
  const done = await present(storage, dir, prefix, count);
  const missing = done.flatMap((has, index) => (has ? [] : [index]));
  if (missing.length > 0) return { results: [], missing };
  const results = await mapWithConcurrency(done, 16, (_, index) => getJson<Result>(storage, `${dir}/${prefix}-${index}.json`));
  return { results, missing };
}

// ---------------------------------------------------------------------------------------------------------------
// Planning in shares.

/** What planning.json holds: prepareClean's findings, without the per-partition context (that is in the shares). */
export interface PlanningRecord {
  readonly planningId: string;
  readonly createdAt: string;
  readonly due: CleanPlanning['due'];
  readonly retention: { readonly instant: RetentionPoint['instant']; readonly reason: string };
  readonly scope: { readonly kind: CleanPlanning['scope']['kind']; readonly reason: string };
  readonly summary: CleanScopeSummary;
  readonly basis: CleanPlanning['basis'];
  /** Partitions to plan, and folders listed to find them (full scope walks the table). */
  readonly partitions: number;
  readonly foldersListed: number;
  readonly shares: number;
  /** The table's state as planned (recorded as nothing-to-clean when the plan deletes nothing). */
  readonly fingerprint: CleanFingerprint;
}

export interface PlanningShare {
  readonly partitionPaths: readonly string[];
  readonly context: PartitionContext;
}

/**
 * `planned-<i>.json`: the partitions with something to delete or to remove, each with the names of the files it
 * deletes (only what the plan needs: a share may delete a hundred thousand files, and the schedule step reads every
 * share). Planning folders written before this form held whole decisions (`deletes`); they read too.
 */
export interface PlannedShare {
  readonly partitions: readonly StoredPlannedPartition[];
  readonly listed: number;
}

export interface StoredPlannedPartition {
  readonly partitionPath: string;
  readonly files?: readonly string[];
  /** The earlier form: one decision per file. */
  readonly deletes?: readonly { readonly fileName: string }[];
  readonly deletePartition: boolean;
}

function plannedPartitionOf(stored: StoredPlannedPartition): PartitionDeletes {
  return {
    partitionPath: stored.partitionPath,
    deletes: stored.files !== undefined ? stored.files.map((fileName) => ({ fileName })) : (stored.deletes ?? []),
    deletePartition: stored.deletePartition,
  };
}

function storedPlannedPartition(partition: PartitionCleanPlan): StoredPlannedPartition {
  return { partitionPath: partition.partitionPath, files: partition.deletes.map((file) => file.fileName), deletePartition: partition.deletePartition };
}

/** A planning id for a run: unique per run and time, sortable by time. */
export function newPlanningId(now: Date, runId: string): string {
  const id = `plan-${formatInstantTime(now)}-${createHash('sha256').update(runId).digest('hex').slice(0, 8)}`;
  if (!CLEAN_PLANNING_ID.test(id)) throw new Error(`bad planning id ${id}`);
  return id;
}

/** Consecutive slices of `items`, `size` each (the last one shorter). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let offset = 0; offset < items.length; offset += size) out.push(items.slice(offset, offset + size));
  return out;
}

/**
 * Write a planning's shares: `partitionPaths` (sorted, so shares are contiguous ranges) in shares of
 * partitionsPerShare, each with its slice of the context, then planning.json. Returns the record.
 */
export async function writePlanningShares(
  storage: Storage,
  planningId: string,
  preparation: CleanPreparation & { readonly context: PartitionContext },
  partitionPaths: readonly string[],
  options: { readonly partitionsPerShare: number; readonly foldersListed: number; readonly now: Date; readonly fingerprint: CleanFingerprint },
): Promise<PlanningRecord> {
  const dir = cleanPlanningDir(planningId);
  const shares = chunk([...partitionPaths].sort(), options.partitionsPerShare);
  await mapWithConcurrency(shares, 16, (share, index) =>
    putJson(storage, `${dir}/share-${index}.json`, { partitionPaths: share, context: sliceContext(preparation.context, share) } satisfies PlanningShare),
  );
  const record: PlanningRecord = {
    planningId,
    createdAt: options.now.toISOString(),
    due: preparation.due,
    retention: { instant: preparation.retention.instant, reason: preparation.retention.reason },
    scope: { kind: preparation.scope.kind, reason: preparation.scope.reason },
    summary: preparation.summary,
    basis: preparation.basis,
    partitions: partitionPaths.length,
    foldersListed: options.foldersListed,
    shares: shares.length,
    fingerprint: options.fingerprint,
  };
  await putJson(storage, `${dir}/planning.json`, record);
  return record;
}

export async function readPlanningRecord(storage: Storage, planningId: string): Promise<PlanningRecord> {
  const path = `${cleanPlanningDir(planningId)}/planning.json`;
  const record = await getJsonIfPresent<PlanningRecord>(storage, path);
  if (record === undefined) {
    throw new HudiError(`clean planning ${planningId} is gone`, { location: storage.uriOf(path), fix: 'start another run: it plans afresh' });
  }
  return record;
}

/**
 * Plan one share (list its partitions, apply the cleaner's rules) and store the result. Returns at once when the
 * share has a result already (a retried worker).
 */
export async function planShare(
  storage: Storage,
  planningId: string,
  index: number,
  options: { readonly concurrency: number },
): Promise<{ readonly outcome: 'planned' | 'already-done'; readonly partitions: number; readonly filesToDelete: number; readonly partitionsToDelete: number }> {
  const dir = cleanPlanningDir(planningId);
  const { ran, result: planned } = await runShareOnce<PlanningShare, PlannedShare>(
    storage,
    { input: `${dir}/share-${index}.json`, result: `${dir}/planned-${index}.json` },
    (location) => new HudiError(`clean planning ${planningId} has no share ${index}`, { location, fix: 'start another run: it plans afresh' }),
    async (share) =>
      planPartitions(storage, share.context, share.partitionPaths, { concurrency: options.concurrency }).then(({ partitions, listed }) => ({
        partitions: partitions.map(storedPlannedPartition),
        listed,
      })),
  );
  const partitions = planned.partitions.map(plannedPartitionOf);
  return {
    outcome: ran ? 'planned' : 'already-done',
    partitions: planned.listed,
    filesToDelete: partitions.reduce((sum, partition) => sum + partition.deletes.length, 0),
    partitionsToDelete: partitions.filter((partition) => partition.deletePartition).length,
  };
}

/** Every share's planned partitions, or the shares without a result. */
export async function gatherPlannedShares(
  storage: Storage,
  planningId: string,
  shares: number,
): Promise<{ partitions: PartitionDeletes[]; listed: number; missing: number[] }> {
  const { results: planned, missing } = await gatherShareResults<PlannedShare>(storage, cleanPlanningDir(planningId), 'planned', shares);
  const partitions = planned.flatMap((share) => share.partitions.map(plannedPartitionOf));
  partitions.sort((a, b) => (a.partitionPath < b.partitionPath ? -1 : a.partitionPath > b.partitionPath ? 1 : 0));
  return { partitions, listed: planned.reduce((sum, share) => sum + share.listed, 0), missing };
}

// ---------------------------------------------------------------------------------------------------------------
// Executing in shares.

export interface CleanManifest {
  readonly instant: string;
  readonly shares: number;
  readonly partitions: number;
  readonly files: number;
  /** When the execution started (the clean's timeTakenInMillis counts from here). */
  readonly startedAtMs: number;
  readonly isPartitioned: boolean;
}

export interface DeleteShare {
  /** The clean's plan, restricted to the share's partitions. */
  readonly plan: HoodieCleanerPlan;
  readonly isPartitioned: boolean;
}

function manifestPath(instantTime: string): string {
  return `${cleanWorkDir(instantTime)}/manifest.json`;
}

/** The partitions a plan cleans (files to delete, or the partition itself), sorted, with their file counts. */
export function planPartitionFiles(plan: HoodieCleanerPlan): { partitionPath: string; files: number }[] {
  const filePaths = plan.filePathsToBeDeletedPerPartition ?? {};
  // Plans before version 2 name files only in filesToBeDeletedPerPartition (planDeletes' fallback).
  const names = Object.keys(filePaths).length > 0 ? undefined : (plan.filesToBeDeletedPerPartition ?? {});
  const counts = new Map<string, number>();
  for (const [partition, files] of Object.entries(names ?? filePaths)) counts.set(partition, files.length);
  for (const partition of plan.partitionsToBeDeleted ?? []) if (!counts.has(partition)) counts.set(partition, 0);
  return [...counts]
    .map(([partitionPath, files]) => ({ partitionPath, files }))
    .sort((a, b) => (a.partitionPath < b.partitionPath ? -1 : a.partitionPath > b.partitionPath ? 1 : 0));
}

/** Whole partitions per share: at most partitionsPerShare of them and (unless one partition alone exceeds it) filesPerShare files. */
export function deleteShares(plan: HoodieCleanerPlan, settings: Pick<CleanShareSettings, 'partitionsPerShare' | 'filesPerShare'>): string[][] {
  const shares: string[][] = [];
  let current: string[] = [];
  let files = 0;
  for (const partition of planPartitionFiles(plan)) {
    if (current.length > 0 && (current.length >= settings.partitionsPerShare || files + partition.files > settings.filesPerShare)) {
      shares.push(current);
      current = [];
      files = 0;
    }
    current.push(partition.partitionPath);
    files += partition.files;
  }
  if (current.length > 0) shares.push(current);
  return shares;
}

/** `plan` restricted to `partitions`. */
export function restrictPlan(plan: HoodieCleanerPlan, partitions: readonly string[]): HoodieCleanerPlan {
  const wanted = new Set(partitions);
  const pick = <V>(record: Record<string, V> | null): Record<string, V> | null =>
    record === null ? null : Object.fromEntries(Object.entries(record).filter(([partition]) => wanted.has(partition)));
  return {
    ...plan,
    filesToBeDeletedPerPartition: pick(plan.filesToBeDeletedPerPartition),
    filePathsToBeDeletedPerPartition: pick(plan.filePathsToBeDeletedPerPartition),
    partitionsToBeDeleted: plan.partitionsToBeDeleted === null ? null : plan.partitionsToBeDeleted.filter((partition) => wanted.has(partition)),
  };
}

/**
 * Ready clean `instant` (requested or inflight, with `plan`) for execution in shares: move it inflight (the
 * requested file's bytes, as Hudi's transitionCleanRequestedToInflight) and split its plan into delete shares, once —
 * a manifest already there is kept, so a resumed clean keeps its split and its shares' results.
 */
export async function startCleanExecution(
  storage: Storage,
  layout: TimelineLayout,
  instant: Instant,
  plan: HoodieCleanerPlan,
  options: {
    readonly isPartitioned: boolean;
    readonly settings: Pick<CleanShareSettings, 'partitionsPerShare' | 'filesPerShare'>;
    readonly now: Date;
    /** The requested file's bytes, when the caller just wrote them (not read again). */
    readonly requestedBytes?: Uint8Array;
  },
): Promise<{ manifest: CleanManifest; created: boolean }> {
  if (instant.action !== 'clean' || instant.state === 'COMPLETED')
    throw new Error(`startCleanExecution needs a pending clean, got ${instant.action} ${instant.state}`);
  const inflight = instantPath({ time: instant.time, action: 'clean', state: 'INFLIGHT' }, layout);
  if ((await storage.head(inflight)) === undefined) {
    const requested = instantPath({ time: instant.time, action: 'clean', state: 'REQUESTED' }, layout);
    try {
      await transitionToInflight(storage, layout, instant.time, 'clean', options.requestedBytes ?? (await storage.get(requested)));
    } catch (error) {
      // Another run moved it inflight first: the same bytes, nothing to do.
      if (!(error instanceof ConflictError && (await storage.head(inflight)) !== undefined)) throw error;
    }
  }
  const existing = await getJsonIfPresent<CleanManifest>(storage, manifestPath(instant.time));
  if (existing !== undefined) return { manifest: existing, created: false };

  const dir = cleanWorkDir(instant.time);
  const shares = deleteShares(plan, options.settings);
  await mapWithConcurrency(shares, 16, (share, index) =>
    putJson(storage, `${dir}/share-${index}.json`, { plan: restrictPlan(plan, share), isPartitioned: options.isPartitioned } satisfies DeleteShare),
  );
  const counts = planPartitionFiles(plan);
  const manifest: CleanManifest = {
    instant: instant.time,
    shares: shares.length,
    partitions: counts.length,
    files: counts.reduce((sum, partition) => sum + partition.files, 0),
    startedAtMs: options.now.getTime(),
    isPartitioned: options.isPartitioned,
  };
  await putJson(storage, manifestPath(instant.time), manifest);
  return { manifest, created: true };
}

export async function readCleanManifest(storage: Storage, instantTime: string): Promise<CleanManifest | undefined> {
  return getJsonIfPresent<CleanManifest>(storage, manifestPath(instantTime));
}

/**
 * Delete one share's files (and the partitions it removes) and store its stats. Returns at once when the share has
 * a result already. Files already gone count as deleted (a retry after a crash).
 */
export async function executeDeleteShare(
  storage: Storage,
  instantTime: string,
  index: number,
  options: { readonly concurrency: number },
): Promise<{ readonly outcome: 'executed' | 'already-done'; readonly deleted: number; readonly failed: number; readonly partitionsDeleted: number }> {
  const dir = cleanWorkDir(instantTime);
  const { ran, result } = await runShareOnce<DeleteShare, { stats: PartitionCleanStat[] }>(
    storage,
    { input: `${dir}/share-${index}.json`, result: `${dir}/result-${index}.json` },
    (location) =>
      new HudiError(`clean ${instantTime} has no delete share ${index}`, { location, fix: "start another run: it splits the pending clean's plan again" }),
    async (share) => ({ stats: await executeCleanerPlan(storage, share.plan, { concurrency: options.concurrency, isPartitioned: share.isPartitioned }) }),
  );
  const { stats } = result;
  return {
    outcome: ran ? 'executed' : 'already-done',
    deleted: stats.reduce((sum, stat) => sum + stat.successDeleteFiles.length, 0),
    failed: stats.reduce((sum, stat) => sum + stat.failedDeleteFiles.length, 0),
    partitionsDeleted: stats.filter((stat) => stat.partitionDeleted).length,
  };
}

/** Every delete share's stats, or the shares without a result. */
export async function gatherDeleteResults(storage: Storage, manifest: CleanManifest): Promise<{ stats: PartitionCleanStat[][]; missing: number[] }> {
  const { results, missing } = await gatherShareResults<{ stats: PartitionCleanStat[] }>(storage, cleanWorkDir(manifest.instant), 'result', manifest.shares);
  // Every file deleted (the usual case): one array of names for both lists, not two copies of each name.
  const shared = (stat: PartitionCleanStat): PartitionCleanStat =>
    sameNames(stat.successDeleteFiles, stat.deletePathPatterns) ? { ...stat, successDeleteFiles: stat.deletePathPatterns } : stat;
  return { stats: results.map((result) => result.stats.map(shared)), missing };
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Nothing to clean: remembered, so a trigger does not start run after run on a table state a run just looked at.

/**
 * What decides a clean's outcome besides the files: with the same policy, earliest commit to retain (for
 * KEEP_LATEST_FILE_VERSIONS: the same last commit), last clean, savepoints and pending table services, a planning
 * that found nothing to delete finds nothing again (a file only becomes cleanable when one of these moves).
 */
export interface CleanFingerprint {
  readonly policy: CleanScopeSummary['policy'];
  readonly earliestCommitToRetain: string | null;
  readonly lastCompletedCommit: string;
  readonly lastCleanTime: string | null;
  readonly savepoints: readonly string[];
  /** Pending clusterings and compactions (their file groups are never cleaned while pending). */
  readonly pendingServices: readonly string[];
}

export function cleanFingerprint(
  timeline: Timeline,
  facts: {
    readonly policy: CleanScopeSummary['policy'];
    readonly earliestCommitToRetain: string | undefined;
    readonly lastCleanTime: string | undefined;
    readonly savepointTimes: readonly string[];
  },
): CleanFingerprint {
  const commits = timeline.completed().filter((instant) => ['commit', 'deltacommit', 'replacecommit'].includes(instant.action));
  return {
    policy: facts.policy,
    earliestCommitToRetain: facts.earliestCommitToRetain ?? null,
    lastCompletedCommit: commits.at(-1)?.time ?? '',
    lastCleanTime: facts.lastCleanTime ?? null,
    savepoints: [...facts.savepointTimes].sort(),
    pendingServices: timeline
      .pending()
      .filter((instant) => ['replacecommit', 'clustering', 'compaction'].includes(instant.action))
      .map((instant) => `${instant.time}.${instant.action}`)
      .sort(),
  };
}

export function sameCleanState(a: CleanFingerprint, b: CleanFingerprint): boolean {
  const retention =
    a.policy === 'KEEP_LATEST_FILE_VERSIONS' ? a.lastCompletedCommit === b.lastCompletedCommit : a.earliestCommitToRetain === b.earliestCommitToRetain;
  return (
    a.policy === b.policy &&
    retention &&
    a.lastCleanTime === b.lastCleanTime &&
    JSON.stringify(a.savepoints) === JSON.stringify(b.savepoints) &&
    JSON.stringify(a.pendingServices) === JSON.stringify(b.pendingServices)
  );
}

/** `.hoodie/.aux/hudi-serverless/clean/nothing-to-clean.json`: the state of the last planning that found nothing. */
export const NOTHING_TO_CLEAN_PATH = `${CLEAN_WORK_ROOT}/nothing-to-clean.json`;

export async function recordNothingToClean(storage: Storage, fingerprint: CleanFingerprint, now: Date): Promise<void> {
  await putJson(storage, NOTHING_TO_CLEAN_PATH, { ...fingerprint, at: now.toISOString() });
}

/** The last planning that found nothing, if any (an unreadable record counts as none: planning again is safe). */
export async function readNothingToClean(storage: Storage): Promise<CleanFingerprint | undefined> {
  try {
    return await getJsonIfPresent<CleanFingerprint>(storage, NOTHING_TO_CLEAN_PATH);
  } catch (error) {
    if (error instanceof HudiError) return undefined;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Tidying.

/** A planning folder untouched for this long belongs to a run that died (planning takes minutes at most). */
export const STALE_PLANNING_MS = 60 * 60 * 1000;

/**
 * Remove what runs that died left in the clean work folder: the folders of cleans completed on `timeline`, and any
 * other folder untouched for STALE_PLANNING_MS (a planning, or a clean `timeline` does not know: it may have been
 * scheduled by another run since `timeline` was read, so only its age lets it go). Returns the folders removed.
 */
export async function tidyCleanWorkFolder(storage: Storage, timeline: Timeline, now: Date): Promise<string[]> {
  const { dirs } = await storage.listDir(CLEAN_WORK_ROOT);
  const cleans = timeline.instants.filter((instant) => instant.action === 'clean');
  const completed = new Set(cleans.filter((instant) => instant.state === 'COMPLETED').map((instant) => instant.time));
  const pending = new Set(cleans.filter((instant) => instant.state !== 'COMPLETED').map((instant) => instant.time));
  const untouchedFor = async (dir: string): Promise<number> => {
    const objects = await storage.listRecursive(dir);
    return now.getTime() - Math.max(0, ...objects.map((object) => object.modifiedMs));
  };
  const removed: string[] = [];
  for (const dir of dirs) {
    const name = folderNameOf(dir);
    let stale: boolean;
    if (isValidInstantTime(name)) {
      stale = completed.has(name) || (!pending.has(name) && (await untouchedFor(cleanWorkDir(name))) > STALE_PLANNING_MS);
    } else if (CLEAN_PLANNING_ID.test(name)) {
      stale = (await untouchedFor(cleanPlanningDir(name))) > STALE_PLANNING_MS;
    } else {
      continue;
    }
    if (!stale) continue;
    await deleteWorkDir(storage, `${CLEAN_WORK_ROOT}/${name}`);
    removed.push(name);
  }
  return removed.sort(compareInstantTimesOrNames);
}

function compareInstantTimesOrNames(a: string, b: string): number {
  return isValidInstantTime(a) && isValidInstantTime(b) ? compareInstantTimes(a, b) : a < b ? -1 : a > b ? 1 : 0;
}
