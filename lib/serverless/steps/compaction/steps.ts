/**
 * Compaction as state machine steps (functions/compaction-*.ts are their shells), shaped as the clustering's:
 * schedule (take up the oldest pending compaction, else schedule one when Hudi's trigger says it is due; claim it and
 * move it inflight) → execute each operation (a Map: one file slice merged into its new base file, the result stored in
 * the work folder, so a retry returns at once) → commit under the table lock; on a failure, rollback to requested
 * (Hudi's rollbackInflightCompaction) and the next run executes the same plan. The state carries operation numbers
 * only; the plan stays on the timeline, the results in the work folder.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lambdaEngineOptions } from '../../../clustering/job.js';
import { compactionConfigFrom } from '../../../compaction/config.js';
import {
  assertCompactionRunnable,
  commitCompaction,
  executeCompactionOperation,
  IncompleteCompactionError,
  operationsWithoutResult,
  rollbackCompaction,
  startCompactionRun,
} from '../../../compaction/execute.js';
import { scheduleCompaction } from '../../../compaction/schedule.js';
import { openParquetEngine } from '../../../engine/parquet-engine.js';
import { withTableLock } from '../../../table/table.js';
import { pendingCompactions } from '../../../timeline/compaction-plan.js';
import { startHeartbeat } from '../../../timeline/heartbeat.js';
import { heldLock, openTableAndLock } from '../../aws/clients.js';
import { INCOMPLETE_ERROR, TaskError } from '../../aws/errors.js';
import { type ClusteringExecutionInput, ENV, type PropertyOverrides, resolveStepSettings } from '../../aws/settings.js';
import { type PlanStepInput, parseRunEvent, type StepDependencies } from '../contract.js';
import { asObject, executionInputOf, optionalString, requiredIndex, requiredInstant } from '../events.js';
import { claimRun, isAlive, readRunActivity, releaseRun } from '../run-claim.js';
import { COMPACTION_FAN_OUT, chooseMap, type GroupManifest, type MapMode, mapConcurrency, scaleOutSettings } from '../scale-out.js';
import { pendingPlanAge } from '../trigger/trigger.js';

/** Opened as the CLI's compaction opens it: 'write' refuses merge-on-read tables, which compaction asserts instead. */
const COMPACTION_OPEN_MODE = 'read';

/** At most this many operations run at once (a Map's MaxConcurrency), whatever the plan holds. */
export const COMPACTION_MAX_CONCURRENCY = 20;

export interface CompactionStepBase {
  readonly tablePath: string;
  readonly properties: PropertyOverrides;
}

export type CompactionScheduleOutput = CompactionScheduleStatus & {
  /** Seconds the oldest pending compaction had waited when the step began (0: none): the metric the alarm watches. */
  readonly pendingPlanAgeSeconds: number;
};

type CompactionScheduleStatus =
  | (CompactionStepBase & { readonly status: 'NOTHING_TO_COMPACT'; readonly reason: string })
  /** Another execution claimed the pending compaction and heartbeats it (run-claim.ts): this one ends. */
  | (CompactionStepBase & { readonly status: 'ALREADY_RUNNING'; readonly instant: string; readonly reason: string })
  | (CompactionStepBase & {
      readonly status: 'EXECUTE';
      readonly instant: string;
      readonly resumed: boolean;
      readonly totalOperations: number;
      /** The operations still without a result: all of a new compaction's. */
      /** Those operations for the inline Map; empty for the Distributed Map, which reads them from `manifest`. */
      readonly operations: readonly { readonly index: number }[];
      /** Which Map runs the operations (the state machine's Choice reads it): scale-out.ts. */
      readonly mapMode: MapMode;
      /** DISTRIBUTED: the S3 object listing the operations (its ItemReader). */
      readonly manifest?: GroupManifest;
      readonly operationsToRun: number;
      /** COMPACTION_MAX_CONCURRENCY, bounded by the template's CompactionLambdaConcurrency: the Maps' MaxConcurrencyPath. */
      readonly maxConcurrency: number;
    });

export interface CompactionInstantInput extends ClusteringExecutionInput {
  readonly instant: string;
}

export interface CompactionOperationInput extends CompactionInstantInput {
  readonly operationIndex: number;
}

function instantInputOf(event: unknown, what: string): CompactionInstantInput {
  const object = asObject(event, what);
  return { ...executionInputOf(object, what), instant: requiredInstant(object, 'instant', what) };
}

/** The state machine's `{input, runId}` (its execution id claims the compaction), or a bare execution input. */
export type CompactionScheduleInput = PlanStepInput;

export function parseCompactionScheduleEvent(event: unknown): CompactionScheduleInput {
  return parseRunEvent(event, 'compaction-schedule event');
}

export function parseCompactionOperationEvent(event: unknown): CompactionOperationInput {
  const object = asObject(event, 'compaction-execute event');
  return { ...instantInputOf(event, 'compaction-execute event'), operationIndex: requiredIndex(object, 'operationIndex', 'compaction-execute event') };
}

export function parseCompactionInstantEvent(event: unknown): CompactionInstantInput {
  return instantInputOf(event, 'compaction event');
}

/**
 * Due by `hoodie.compact.inline.max.delta.commits` and the trigger strategy (`force` plans anyway). Returns the
 * operation numbers still without a result. A pending compaction another execution claimed and heartbeats (run-claim.ts:
 * two overlapping scheduled executions) ends this one with ALREADY_RUNNING.
 */
export async function compactionScheduleStep(input: CompactionScheduleInput, deps: StepDependencies): Promise<CompactionScheduleOutput> {
  const now = deps.now ?? (() => new Date());
  const settings = resolveStepSettings(deps.env, input);
  const runId = input.runId ?? `direct-${now().toISOString()}`;
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: COMPACTION_OPEN_MODE });
  const base = { tablePath: settings.tablePath, properties: settings.overrides, pendingPlanAgeSeconds: pendingPlanAge(table.timeline, now(), ['compaction']) };
  // A metadata table the compaction's commit could not keep refuses the run before it claims anything: the commit of
  // the pending compaction it would claim, else of the one it would schedule.
  await assertCompactionRunnable(table, settings.jobProperties, 'a compaction', pendingCompactions(table.timeline)[0]?.time);
  // Under the table lock: of two overlapping executions, exactly one claims the compaction (run-claim.ts).
  const claimed = await withTableLock(table, lock, async (current, lease) => {
    const storage = current.storage;
    const pending = pendingCompactions(current.timeline)[0]?.time;
    if (pending !== undefined) {
      const activity = await readRunActivity(storage, pending, now(), 'compaction');
      if (isAlive(activity) && activity.claim?.runId !== runId) {
        const reason = `compaction ${pending} is being run by ${activity.claim?.runId ?? 'another writer'} (heartbeat ${Math.round((activity.heartbeatAgeMs ?? 0) / 1000)} s old)`;
        deps.log.info('another run owns the pending compaction', { instant: pending, owner: activity.claim?.runId });
        return { status: 'ALREADY_RUNNING' as const, instant: pending, reason };
      }
      await lease.assertHeld();
      await claimRun(storage, pending, runId, now(), 'compaction');
      return { status: 'CLAIMED' as const, instant: pending };
    }
    const config = compactionConfigFrom(settings.jobProperties, ENV.clusteringProperties);
    const scheduled = await scheduleCompaction(current, config, {
      // Already inside the lock: schedule's own lock must not wait for ourselves.
      lock: heldLock(lease, lock.description),
      properties: settings.jobProperties,
      force: input.force === true,
      log: (line) => deps.log.info(line),
      now: now(),
    });
    if (scheduled === undefined) return undefined;
    await lease.assertHeld();
    await claimRun(storage, scheduled.instantTime, runId, now(), 'compaction');
    return { status: 'CLAIMED' as const, instant: scheduled.instantTime };
  });
  if (claimed === undefined) return { ...base, status: 'NOTHING_TO_COMPACT', reason: 'no compaction is due (or no file slice has log files)' };
  if (claimed.status === 'ALREADY_RUNNING') return { ...base, ...claimed };
  const { instant } = claimed;
  const start = await startCompactionRun(await table.reload(), instant, (line) => deps.log.info(line), settings.jobProperties);
  if (start.plan === undefined) return { ...base, status: 'NOTHING_TO_COMPACT', reason: `compaction ${instant} is committed already` };
  const open = (await operationsWithoutResult(await table.reload(), instant, start.plan)).map((index) => ({ index }));
  const scaleOut = scaleOutSettings(settings.jobProperties, deps.env, 'compaction properties', COMPACTION_FAN_OUT);
  const choice = await chooseMap(table.storage, instant, open, scaleOut, COMPACTION_FAN_OUT);
  if (choice.note !== undefined) deps.log.warn(choice.note);
  deps.log.info('compaction to execute', {
    instant,
    resumed: start.resumed,
    operations: start.plan.operations.length,
    withoutResult: open.length,
    mapMode: choice.mapMode,
  });
  return {
    ...base,
    status: 'EXECUTE',
    instant,
    resumed: start.resumed,
    totalOperations: start.plan.operations.length,
    operationsToRun: open.length,
    operations: choice.mapMode === 'DISTRIBUTED' ? [] : open,
    mapMode: choice.mapMode,
    ...(choice.manifest === undefined ? {} : { manifest: choice.manifest }),
    maxConcurrency: mapConcurrency(COMPACTION_MAX_CONCURRENCY, scaleOut),
  };
}

export interface CompactionOperationOutput {
  readonly instant: string;
  readonly operationIndex: number;
  readonly outcome: 'executed' | 'already-done';
  readonly path: string | null;
  readonly records: number;
  readonly bytesRead: number;
  readonly durationMs: number;
}

export async function compactionExecuteStep(
  input: CompactionOperationInput,
  deps: StepDependencies & { readonly memoryMb: number },
): Promise<CompactionOperationOutput> {
  const started = Date.now();
  const settings = resolveStepSettings(deps.env, input);
  const { table } = await openTableAndLock(settings, deps.clients, { mode: COMPACTION_OPEN_MODE });
  const scratchRoot = optionalString(deps.env, ENV.scratchDir, 'environment') ?? tmpdir();
  await mkdir(scratchRoot, { recursive: true });
  const scratch = await mkdtemp(join(scratchRoot, `hudi-compaction-${input.operationIndex}-`));
  const engine = await openParquetEngine(lambdaEngineOptions(deps.memoryMb, scratch));
  // The run's heartbeat stays fresh while an operation runs (an overlapping execution sees the run alive); the file
  // stays when the operation ends, since others may still run: commit and rollback remove it.
  const beat = await startHeartbeat(table.storage, input.instant, { keepFile: true });
  try {
    const result = await executeCompactionOperation(table, input.instant, input.operationIndex, { engine, properties: settings.jobProperties });
    deps.log.info('compaction operation done', {
      instant: input.instant,
      operationIndex: input.operationIndex,
      outcome: result.outcome,
      path: result.stat.path,
    });
    return {
      instant: input.instant,
      operationIndex: input.operationIndex,
      outcome: result.outcome,
      path: result.stat.path,
      records: result.stat.numWrites,
      bytesRead: result.bytesRead,
      durationMs: Date.now() - started,
    };
  } finally {
    await beat.stop();
    await engine.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

export interface CompactionCommitOutput {
  readonly status: 'COMMITTED';
  readonly tablePath: string;
  readonly instant: string;
  readonly outcome: 'committed' | 'already-committed';
  /** One new base file per file group (operation). */
  readonly fileGroups: number;
  /** Base and log files the operations read. */
  readonly filesIn: number;
  readonly records: number;
  readonly bytesRead: number;
  readonly bytesWritten: number;
}

export async function compactionCommitStep(input: CompactionInstantInput, deps: StepDependencies): Promise<CompactionCommitOutput> {
  const settings = resolveStepSettings(deps.env, input);
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: COMPACTION_OPEN_MODE });
  try {
    const result = await commitCompaction(table, input.instant, { lock, properties: settings.jobProperties });
    // The work folder (and the claim in it) went with the commit; the heartbeat goes now.
    await releaseRun(table.storage, input.instant, 'compaction');
    deps.log.info('compaction committed', { instant: input.instant, outcome: result.outcome, fileGroups: result.writeStats.length });
    return {
      status: 'COMMITTED',
      tablePath: settings.tablePath,
      instant: input.instant,
      outcome: result.outcome,
      fileGroups: result.writeStats.length,
      // A slice's base file had rows (updated or deleted now) when it existed: a log-only slice has none.
      filesIn: result.writeStats.reduce((sum, stat) => sum + stat.totalLogFilesCompacted + (stat.numUpdateWrites + stat.numDeletes > 0 ? 1 : 0), 0),
      records: result.writeStats.reduce((sum, stat) => sum + stat.numWrites, 0),
      bytesRead: result.bytesRead,
      bytesWritten: result.writeStats.reduce((sum, stat) => sum + stat.fileSizeInBytes, 0),
    };
  } catch (error) {
    // Not retried by the state machine: operations failed, so it rolls back.
    if (error instanceof IncompleteCompactionError) throw new TaskError(INCOMPLETE_ERROR, error.message);
    throw error;
  }
}

export interface CompactionRollbackOutput {
  readonly status: 'ROLLED_BACK' | 'NOTHING_PENDING';
  readonly instant: string;
  readonly deletedFiles: number;
}

export async function compactionRollbackStep(input: CompactionInstantInput, deps: StepDependencies): Promise<CompactionRollbackOutput> {
  const settings = resolveStepSettings(deps.env, input);
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: COMPACTION_OPEN_MODE });
  if (!pendingCompactions(table.timeline).some((i) => i.time === input.instant)) return { status: 'NOTHING_PENDING', instant: input.instant, deletedFiles: 0 };
  const { deleted } = await rollbackCompaction(table, input.instant, { lock });
  // The run is over: the next execution takes the plan up at once rather than waiting for the heartbeat to expire.
  await releaseRun(table.storage, input.instant, 'compaction');
  deps.log.info('compaction rolled back to requested', { instant: input.instant, deletedFiles: deleted.length });
  return { status: 'ROLLED_BACK', instant: input.instant, deletedFiles: deleted.length };
}
