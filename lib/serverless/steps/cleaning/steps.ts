/**
 * The clean, as state machine steps (functions/clean-*.ts are their shells), Hudi's cleaner fanned out over Lambdas:
 *
 * 1. prepare (`clean-prepare`): finish a pending clean first (any writer's: it is split into delete shares and
 *    executed, never re-planned); else, when a clean is due, find the earliest commit to retain and the partitions
 *    to look at (incremental: those the commits since the last clean touched; full: a walk of the table's folders),
 *    and write them to the work folder in shares of partitions, each with its slice of the planning context;
 * 2. plan a share (`clean-plan`, a Map iteration): list its partitions, apply the cleaner's rules, store the result;
 * 3. schedule (`clean-schedule`): assemble the plan from the shares' results, write `T.clean.requested` under the
 *    table lock (or take up a clean another writer scheduled meanwhile), move it inflight, split it into delete
 *    shares;
 * 4. execute a share (`clean-execute`, a Map iteration): delete its files (DeleteObjects, 1,000 keys a request),
 *    store its stats;
 * 5. complete (`clean-complete`): merge the stats into `T.clean` under the lock.
 *
 * The state carries share numbers only; partitions, plans and results stay in the work folder (shares.ts), so no
 * Lambda holds the whole table and no state nears Step Functions' 256 KB. A clean is never rolled back (Hudi does
 * not): a failed run leaves it pending and the next run finishes it from its plan.
 */

import { cleanMetadataOf, mergePartitionStats } from '../../../cleaner/clean-metadata.js';
import { type CleanConfig, cleanConfigFromProperties } from '../../../cleaner/config.js';
import { assembleCleanerPlan } from '../../../cleaner/plan.js';
import { emptyCleanerPlan } from '../../../cleaning/clean.js';
import { completeClean } from '../../../cleaning/commit.js';
import { walkPartitions } from '../../../cleaning/listing.js';
import { prepareClean, scheduleClean } from '../../../cleaning/schedule.js';
import {
  type CleanShareSettings,
  cleanFingerprint,
  cleanShareSettingsFromProperties,
  executeDeleteShare,
  gatherDeleteResults,
  gatherPlannedShares,
  newPlanningId,
  planShare,
  readCleanManifest,
  readNothingToClean,
  readPlanningRecord,
  recordNothingToClean,
  sameCleanState,
  startCleanExecution,
  tidyCleanWorkFolder,
  writePlanningShares,
} from '../../../cleaning/shares.js';
import { readCleanerPlan, readCleanMetadata } from '../../../cleaning/timeline-facts.js';
import { ConflictError, HudiError } from '../../../errors.js';
import { assertMetadataTableKeepable } from '../../../metadata/index.js';
import type { Storage } from '../../../storage/port.js';
import { PROPERTIES_FILE, readTableConfig } from '../../../table/config.js';
import { assertLayoutSupports, tableLayout } from '../../../table/layouts.js';
import type { HudiTable } from '../../../table/table.js';
import type { Instant } from '../../../timeline/instant.js';
import { loadTimeline } from '../../../timeline/timeline.js';
import { cleanPlanningDir, cleanWorkDir, deleteWorkDir } from '../../../timeline/work-folder.js';
import { fileNameOf } from '../../../util/paths.js';
import { openTableAndLock, tableStorage } from '../../aws/clients.js';
import { INCOMPLETE_ERROR, TaskError } from '../../aws/errors.js';
import {
  type ClusteringExecutionInput,
  ENV,
  type PropertyOverrides,
  type RunServices,
  resolveStepSettings,
  type StepSettings,
  tableServiceProperties,
} from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, type JsonObject, optionalString, requiredInstant, requiredNonNegative, requiredString } from '../events.js';

/** A Map item: which share to run. */
export interface ShareReference {
  readonly index: number;
}

/** What every clean step returns besides its own fields: the table and the run's settings, for the next states. */
export interface TableServiceBase {
  readonly tablePath: string;
  readonly properties: PropertyOverrides;
  readonly services: RunServices;
}

export type CleanStepOutput =
  | (TableServiceBase & { readonly status: 'SKIPPED' | 'NOTHING_TO_CLEAN'; readonly reason: string })
  | (TableServiceBase & {
      readonly status: 'PLAN';
      readonly planningId: string;
      readonly shares: readonly ShareReference[];
      readonly maxConcurrency: number;
      readonly partitions: number;
      readonly reason: string;
    })
  | (TableServiceBase & {
      readonly status: 'EXECUTE';
      readonly instant: string;
      /** A pending clean (an earlier run's, or another writer's) taken up rather than one planned by this run. */
      readonly resumed: boolean;
      readonly totalShares: number;
      /** The shares still without a result: all of a new clean's. */
      readonly shares: readonly ShareReference[];
      readonly maxConcurrency: number;
      readonly partitions: number;
      readonly files: number;
      readonly reason: string;
    })
  | (TableServiceBase & {
      readonly status: 'CLEANED';
      readonly instant: string;
      /** 'already-completed': a retried step (or another runner) had completed it. */
      readonly outcome: 'completed' | 'already-completed';
      readonly filesDeleted: number;
      readonly failedFiles: number;
      readonly partitions: number;
      readonly partitionsDeleted: number;
    });

export interface TableServiceInput extends ClusteringExecutionInput {
  /** The Step Functions execution (its id): names the run's planning folder. */
  readonly runId?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Settings.

interface CleanSettings {
  readonly step: StepSettings;
  readonly config: CleanConfig;
  readonly shares: CleanShareSettings;
  readonly base: TableServiceBase;
}

function cleanSettings(step: StepSettings, tableProperties: ReadonlyMap<string, string>, services: RunServices | undefined): CleanSettings {
  const props = tableServiceProperties(tableProperties, step);
  return {
    step,
    config: cleanConfigFromProperties(props, ENV.clusteringProperties),
    shares: cleanShareSettingsFromProperties(props, ENV.clusteringProperties),
    base: { tablePath: step.tablePath, properties: step.overrides, services: services ?? 'all' },
  };
}

async function openForClean(input: ClusteringExecutionInput, deps: StepDependencies) {
  const step = resolveStepSettings(deps.env, input);
  for (const warning of step.warnings) deps.log.warn(warning);
  const { table, lock } = await openTableAndLock(step, deps.clients, { mode: 'write' });
  assertLayoutSupports(tableLayout(table.config, {}), 'clean', table.storage.uriOf(PROPERTIES_FILE));
  // The clean's completion keeps the metadata table (completeClean); refuse one it could not keep before any work.
  await assertMetadataTableKeepable(table.storage, 'a clean', step.jobProperties, table.config);
  return { table, lock, settings: cleanSettings(step, table.config.properties, input.services) };
}

/** A share worker's settings without opening the table (one read of hoodie.properties, no timeline listing). */
async function storageForShare(input: ClusteringExecutionInput, deps: StepDependencies): Promise<{ storage: Storage; settings: CleanSettings }> {
  const step = resolveStepSettings(deps.env, input);
  const storage = tableStorage(step, deps.clients);
  const config = await readTableConfig(storage);
  return { storage, settings: cleanSettings(step, config.properties, input.services) };
}

// ---------------------------------------------------------------------------------------------------------------
// Events.

/** Accepts the state machine's `{input, runId}` wrapper (the whole state) or a bare execution input. */
export function parseCleanPrepareEvent(event: unknown): TableServiceInput {
  const object = asObject(event, 'clean-prepare event');
  const wrapped = object['input'] !== undefined && typeof object['input'] === 'object' && object['input'] !== null;
  const inputObject: JsonObject = wrapped ? asObject(object['input'], 'clean-prepare event input') : object;
  const runId = optionalString(object, 'runId', 'clean-prepare event');
  return { ...executionInputOf(inputObject, 'clean-prepare event input'), ...(runId === undefined ? {} : { runId }) };
}

export interface CleanPlanShareInput extends ClusteringExecutionInput {
  readonly planningId: string;
  readonly shareIndex: number;
}

export function parseCleanPlanShareEvent(event: unknown): CleanPlanShareInput {
  const object = asObject(event, 'clean-plan event');
  return {
    ...executionInputOf(object, 'clean-plan event'),
    planningId: requiredString(object, 'planningId', 'clean-plan event'),
    shareIndex: requiredNonNegative(object, 'shareIndex', 'clean-plan event'),
  };
}

export interface CleanScheduleInput extends ClusteringExecutionInput {
  readonly planningId: string;
}

export function parseCleanScheduleEvent(event: unknown): CleanScheduleInput {
  const object = asObject(event, 'clean-schedule event');
  return { ...executionInputOf(object, 'clean-schedule event'), planningId: requiredString(object, 'planningId', 'clean-schedule event') };
}

export interface CleanExecuteShareInput extends ClusteringExecutionInput {
  readonly instant: string;
  readonly shareIndex: number;
}

export function parseCleanExecuteShareEvent(event: unknown): CleanExecuteShareInput {
  const object = asObject(event, 'clean-execute event');
  return {
    ...executionInputOf(object, 'clean-execute event'),
    instant: requiredInstant(object, 'instant', 'clean-execute event'),
    shareIndex: requiredNonNegative(object, 'shareIndex', 'clean-execute event'),
  };
}

export interface CleanCompleteInput extends ClusteringExecutionInput {
  readonly instant: string;
}

export function parseCleanCompleteEvent(event: unknown): CleanCompleteInput {
  const object = asObject(event, 'clean-complete event');
  return { ...executionInputOf(object, 'clean-complete event'), instant: requiredInstant(object, 'instant', 'clean-complete event') };
}

// ---------------------------------------------------------------------------------------------------------------
// Steps.

/** Take up pending clean `instant`: inflight, split into delete shares (once), and the shares still to run. */
async function executionOf(table: HudiTable, instant: Instant, settings: CleanSettings, resumed: boolean, reason: string, now: Date): Promise<CleanStepOutput> {
  const { storage } = table;
  const plan = (await readCleanerPlan(storage, instant.time)) ?? emptyCleanerPlan(settings.config);
  const { manifest } = await startCleanExecution(storage, instant, plan, { isPartitioned: table.isPartitioned, settings: settings.shares, now });
  const done = (await storage.listDir(cleanWorkDir(instant.time))).files.map((file) => fileNameOf(file.path));
  const shares = Array.from({ length: manifest.shares }, (_, index) => ({ index })).filter(({ index }) => !done.includes(`result-${index}.json`));
  return {
    ...settings.base,
    status: 'EXECUTE',
    instant: instant.time,
    resumed,
    totalShares: manifest.shares,
    shares,
    maxConcurrency: settings.shares.maxConcurrency,
    partitions: manifest.partitions,
    files: manifest.files,
    reason,
  };
}

export async function cleanPrepareStep(input: TableServiceInput, deps: StepDependencies): Promise<CleanStepOutput> {
  const now = deps.now?.() ?? new Date();
  const { table, settings } = await openForClean(input, deps);
  const { base, config } = settings;
  if (base.services !== 'clean-archive' && !config.automatic) {
    return { ...base, status: 'SKIPPED', reason: 'hoodie.clean.automatic=false: runs clean only when started with {"services": "clean-archive"}' };
  }
  const { storage } = table;
  const removed = await tidyCleanWorkFolder(storage, table.timeline, now);
  if (removed.length > 0) deps.log.info('removed work folders of cleans that completed or runs that died', { removed });

  const pending = table.timeline.pending().find((instant) => instant.action === 'clean');
  if (pending !== undefined) {
    deps.log.info('finishing a pending clean from its plan', { instant: pending.time, state: pending.state });
    return executionOf(table, pending, settings, true, `clean ${pending.time} was pending (${pending.state.toLowerCase()}): finishing it from its plan`, now);
  }

  const preparation = await prepareClean(table, config, { now });
  if (!preparation.due.due) return { ...base, status: 'NOTHING_TO_CLEAN', reason: `no clean is due: ${preparation.due.reason}` };
  const fingerprint = cleanFingerprint(table.timeline, {
    policy: config.policy,
    earliestCommitToRetain: preparation.retention.instant?.time,
    lastCleanTime: preparation.basis.lastCleanTime,
    savepointTimes: preparation.basis.savepointTimes,
  });
  const last = await readNothingToClean(storage);
  if (last !== undefined && sameCleanState(last, fingerprint)) {
    return {
      ...base,
      status: 'NOTHING_TO_CLEAN',
      reason: `an earlier planning of this state found nothing to clean (earliest commit to retain ${fingerprint.earliestCommitToRetain ?? 'none'})`,
    };
  }
  const nothing = async (reason: string): Promise<CleanStepOutput> => {
    await recordNothingToClean(storage, fingerprint, now);
    return { ...base, status: 'NOTHING_TO_CLEAN', reason };
  };
  const context = preparation.context;
  // Nothing old enough to look at: the trigger's outlook says so too, without a record.
  if (context === undefined) return { ...base, status: 'NOTHING_TO_CLEAN', reason: preparation.scope.reason };
  let partitionPaths = preparation.partitionPaths;
  let foldersListed = 0;
  if (partitionPaths === undefined) {
    // Full scope: find the partitions (each share lists them again when planning; only the paths are kept here).
    const found: string[] = [];
    foldersListed = await walkPartitions(storage, config.parallelism, (listing) => {
      found.push(listing.partitionPath);
    });
    partitionPaths = found;
  }
  if (partitionPaths.length === 0) return nothing(`no partition to look at (${preparation.scope.reason})`);

  const planningId = newPlanningId(now, input.runId ?? `direct-${now.toISOString()}`);
  const record = await writePlanningShares(storage, planningId, { ...preparation, context }, partitionPaths, {
    partitionsPerShare: settings.shares.partitionsPerShare,
    foldersListed,
    now,
    fingerprint,
  });
  deps.log.info('clean planning split into shares', {
    planningId,
    partitions: record.partitions,
    shares: record.shares,
    scope: preparation.scope.kind,
    earliestCommitToRetain: preparation.retention.instant?.time,
  });
  return {
    ...base,
    status: 'PLAN',
    planningId,
    shares: Array.from({ length: record.shares }, (_, index) => ({ index })),
    maxConcurrency: settings.shares.maxConcurrency,
    partitions: record.partitions,
    reason: `${preparation.due.reason}; earliest commit to retain ${preparation.retention.instant?.time ?? 'none'}; ${preparation.scope.kind} scope: ${preparation.scope.reason}`,
  };
}

export interface CleanShareOutput {
  readonly shareIndex: number;
  readonly outcome: 'planned' | 'executed' | 'already-done';
}

export async function cleanPlanShareStep(
  input: CleanPlanShareInput,
  deps: StepDependencies,
): Promise<CleanShareOutput & { readonly partitions: number; readonly filesToDelete: number; readonly partitionsToDelete: number }> {
  const { storage, settings } = await storageForShare(input, deps);
  const result = await planShare(storage, input.planningId, input.shareIndex, { concurrency: settings.config.parallelism });
  deps.log.info('clean share planned', { planningId: input.planningId, shareIndex: input.shareIndex, ...result });
  return { shareIndex: input.shareIndex, ...result };
}

export async function cleanScheduleStep(input: CleanScheduleInput, deps: StepDependencies): Promise<CleanStepOutput> {
  const now = deps.now?.() ?? new Date();
  const { table, lock, settings } = await openForClean(input, deps);
  const { storage } = table;
  const planningDir = cleanPlanningDir(input.planningId);
  const takeUpPending = async (current: HudiTable, why: string): Promise<CleanStepOutput | undefined> => {
    const pending = current.timeline.pending().find((instant) => instant.action === 'clean');
    if (pending === undefined) return undefined;
    await deleteWorkDir(storage, planningDir);
    deps.log.info("a clean is pending: executing it instead of this run's plan", { instant: pending.time, why });
    return executionOf(current, pending, settings, true, `clean ${pending.time} ${why}: executing it (a pending clean is finished first)`, now);
  };
  // A retried step whose first attempt scheduled the clean finds it pending here; so does a run racing another.
  const already = await takeUpPending(table, 'was pending');
  if (already !== undefined) return already;

  const record = await readPlanningRecord(storage, input.planningId);
  const gathered = await gatherPlannedShares(storage, input.planningId, record.shares);
  if (gathered.missing.length > 0) {
    throw new TaskError(
      INCOMPLETE_ERROR,
      `clean planning ${input.planningId} cannot be scheduled: ${gathered.missing.length} of ${record.shares} share(s) have no result (${gathered.missing.slice(0, 20).join(', ')}${gathered.missing.length > 20 ? ', …' : ''}); ` +
        "their clean-plan tasks failed — see those tasks' errors in the execution history. Nothing was scheduled; the next run plans again",
    );
  }
  const plan = assembleCleanerPlan(record.summary, gathered.partitions, (path) => storage.uriOf(path));
  if (plan === undefined) {
    await recordNothingToClean(storage, record.fingerprint, now);
    await deleteWorkDir(storage, planningDir);
    return {
      ...settings.base,
      status: 'NOTHING_TO_CLEAN',
      reason: `no file is past retention in the ${record.partitions} partition(s) looked at (${record.scope.kind} scope)`,
    };
  }
  let scheduled: { instantTime: string };
  try {
    scheduled = await scheduleClean(table, { plan, basis: record.basis }, { lock, now });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const current = await table.reload();
    const pending = await takeUpPending(current, 'was scheduled by another writer while this run planned');
    if (pending !== undefined) return pending;
    // Another clean completed, or the savepoints changed: this plan is stale. The next run plans afresh.
    await deleteWorkDir(storage, planningDir);
    return { ...settings.base, status: 'NOTHING_TO_CLEAN', reason: `not scheduled: ${error.message}; the next run plans again` };
  }
  const instant: Instant = { time: scheduled.instantTime, action: 'clean', state: 'REQUESTED' };
  const output = await executionOf(table, instant, settings, false, `scheduled clean ${scheduled.instantTime} from ${record.shares} planning share(s)`, now);
  await deleteWorkDir(storage, planningDir);
  deps.log.info('clean scheduled', {
    instant: scheduled.instantTime,
    planningId: input.planningId,
    partitions: output.status === 'EXECUTE' ? output.partitions : 0,
    files: output.status === 'EXECUTE' ? output.files : 0,
  });
  return output;
}

export async function cleanExecuteShareStep(
  input: CleanExecuteShareInput,
  deps: StepDependencies,
): Promise<CleanShareOutput & { readonly deleted: number; readonly failed: number; readonly partitionsDeleted: number }> {
  const { storage, settings } = await storageForShare(input, deps);
  const result = await executeDeleteShare(storage, input.instant, input.shareIndex, { concurrency: settings.config.parallelism });
  deps.log.info('clean share executed', { instant: input.instant, shareIndex: input.shareIndex, ...result });
  return { shareIndex: input.shareIndex, ...result };
}

export async function cleanCompleteStep(input: CleanCompleteInput, deps: StepDependencies): Promise<CleanStepOutput> {
  const now = deps.now?.() ?? new Date();
  const { table, lock, settings } = await openForClean(input, deps);
  const { storage } = table;
  const instant = table.timeline.instants.find((candidate) => candidate.action === 'clean' && candidate.time === input.instant);
  const completedOutput = async (outcome: 'completed' | 'already-completed'): Promise<CleanStepOutput> => {
    await deleteWorkDir(storage, cleanWorkDir(input.instant));
    const metadata = await readCleanMetadata(storage, input.instant);
    const partitions = Object.values(metadata?.partitionMetadata ?? {});
    return {
      ...settings.base,
      status: 'CLEANED',
      instant: input.instant,
      outcome,
      filesDeleted: metadata?.totalFilesDeleted ?? 0,
      failedFiles: partitions.reduce((sum, partition) => sum + partition.failedDeleteFiles.length, 0),
      partitions: partitions.length,
      partitionsDeleted: partitions.filter((partition) => partition.isPartitionDeleted).length,
    };
  };
  if (instant?.state === 'COMPLETED') return completedOutput('already-completed');
  if (instant === undefined) {
    throw new HudiError(`clean ${input.instant} is not on the active timeline`, {
      location: storage.uriOf(`.hoodie/${input.instant}.clean.inflight`),
      fix: 'another process removed it (a restore?); look at the timeline, then start another run',
    });
  }
  const manifest = await readCleanManifest(storage, input.instant);
  if (manifest === undefined) {
    throw new TaskError(
      INCOMPLETE_ERROR,
      `clean ${input.instant} has no delete shares (its manifest is gone); it stays pending and the next run splits its plan again`,
    );
  }
  const results = await gatherDeleteResults(storage, manifest);
  if (results.missing.length > 0) {
    throw new TaskError(
      INCOMPLETE_ERROR,
      `clean ${input.instant} cannot complete: ${results.missing.length} of ${manifest.shares} delete share(s) have no result (${results.missing.slice(0, 20).join(', ')}${results.missing.length > 20 ? ', …' : ''}); ` +
        "their clean-execute tasks failed — see those tasks' errors in the execution history. The clean stays inflight; the next run finishes it from its plan",
    );
  }
  const plan = (await readCleanerPlan(storage, input.instant)) ?? emptyCleanerPlan(settings.config);
  const metadata = cleanMetadataOf(input.instant, plan, mergePartitionStats(results.stats), Math.max(0, now.getTime() - manifest.startedAtMs));
  try {
    await completeClean(storage, input.instant, metadata, { lock });
  } catch (error) {
    const completedMeanwhile = (await loadTimeline(storage)).completed().some((candidate) => candidate.action === 'clean' && candidate.time === input.instant);
    if (error instanceof ConflictError && completedMeanwhile) return completedOutput('already-completed');
    throw error;
  }
  deps.log.info('clean completed', {
    instant: input.instant,
    filesDeleted: metadata.totalFilesDeleted,
    partitions: Object.keys(metadata.partitionMetadata).length,
  });
  return completedOutput('completed');
}
