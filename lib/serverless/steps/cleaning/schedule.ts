/**
 * Step 3, `clean-schedule`: assemble the plan from the shares' results, write `T.clean.requested` under the table
 * lock (or take up a clean another writer scheduled meanwhile), move it inflight, split it into delete shares.
 */
import { assembleCleanerPlan } from '../../../cleaner/plan.js';
import { scheduleClean } from '../../../cleaning/schedule.js';
import { gatherPlannedShares, type PlanningRecord, readPlanningRecord, recordNothingToClean } from '../../../cleaning/shares.js';
import { ConflictError } from '../../../errors.js';
import type { Storage } from '../../../storage/port.js';
import type { HudiTable } from '../../../table/table.js';
import type { HoodieCleanerPlan } from '../../../timeline/avro-schemas.js';
import type { Instant } from '../../../timeline/instant.js';
import { cleanPlanningDir, deleteWorkDir } from '../../../timeline/work-folder.js';
import { INCOMPLETE_ERROR, TaskError } from '../../aws/errors.js';
import type { ClusteringExecutionInput } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, requiredString } from '../events.js';
import { type CleanStepOutput, executionOf, openForClean } from './shared.js';

export interface CleanScheduleInput extends ClusteringExecutionInput {
  readonly planningId: string;
}

export function parseCleanScheduleEvent(event: unknown): CleanScheduleInput {
  const object = asObject(event, 'clean-schedule event');
  return { ...executionInputOf(object, 'clean-schedule event'), planningId: requiredString(object, 'planningId', 'clean-schedule event') };
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
  const plan = await assembleFromShares(storage, input.planningId, record);
  if (plan === undefined) {
    await recordNothingToClean(storage, record.fingerprint, now);
    await deleteWorkDir(storage, planningDir);
    return {
      ...settings.base,
      status: 'NOTHING_TO_CLEAN',
      reason: `no file is past retention in the ${record.partitions} partition(s) looked at (${record.scope.kind} scope)`,
    };
  }
  let scheduled: { instantTime: string; plan: HoodieCleanerPlan; requestedBytes: Uint8Array };
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
  const output = await executionOf(
    table,
    instant,
    settings,
    false,
    `scheduled clean ${scheduled.instantTime} from ${record.shares} planning share(s)`,
    now,
    scheduled,
  );
  await deleteWorkDir(storage, planningDir);
  deps.log.info('clean scheduled', {
    instant: scheduled.instantTime,
    planningId: input.planningId,
    partitions: output.status === 'EXECUTE' ? output.partitions : 0,
    files: output.status === 'EXECUTE' ? output.files : 0,
  });
  return output;
}

/**
 * The plan from every planning share's result (a function of its own, so the shares' file names are garbage once
 * the plan holds its paths); undefined when it deletes nothing.
 */
async function assembleFromShares(storage: Storage, planningId: string, record: PlanningRecord): Promise<HoodieCleanerPlan | undefined> {
  const gathered = await gatherPlannedShares(storage, planningId, record.shares);
  if (gathered.missing.length > 0) {
    throw new TaskError(
      INCOMPLETE_ERROR,
      `clean planning ${planningId} cannot be scheduled: ${gathered.missing.length} of ${record.shares} share(s) have no result (${gathered.missing.slice(0, 20).join(', ')}${gathered.missing.length > 20 ? ', …' : ''}); ` +
        "their clean-plan tasks failed — see those tasks' errors in the execution history. Nothing was scheduled; the next run plans again",
    );
  }
  return assembleCleanerPlan(record.summary, gathered.partitions, (path) => storage.uriOf(path));
}
