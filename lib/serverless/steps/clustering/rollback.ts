/**
 * What the state machine runs when a clustering attempt failed (its Catch), and what a person can invoke by hand.
 * Default, retry later: the attempt's files (through its markers), `T.replacecommit.inflight`, the heartbeat and the
 * run's claim go, the plan stays (rollbackInflightClustering, as Hudi before re-executing), so the next run resumes it;
 * its file groups stay reserved meanwhile. `{ "abandon": true }`, give up the plan: the whole instant is rolled back
 * (rollbackInstant) and its file groups are free; the state machine abandons on its own after Hudi.Conflict (the plan
 * can never commit). By hand (no `error` in the event) it refuses while a live run heartbeats the instant, unless
 * `"ignoreHeartbeat": true`.
 */

import { findClusteringInstant } from '../../../clustering/instant.js';
import { HudiError } from '../../../errors.js';
import { type RollbackResult, rollbackInflightClustering, rollbackInstant } from '../../../rollback/rollback.js';
import { deleteInstantScratch } from '../../../timeline/work-folder.js';
import { openTableAndLock } from '../../aws/clients.js';
import { CONFLICT_ERROR, type StateError, stateErrorMessage } from '../../aws/errors.js';
import { type ClusteringExecutionInput, resolveStepSettings } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, optionalBoolean, optionalInstant, optionalStateError } from '../events.js';
import { isAlive, readRunActivity, releaseRun } from '../run-claim.js';

export interface RollbackStepInput extends ClusteringExecutionInput {
  /** The clustering to roll back; absent when the run failed before it had one (nothing to do). */
  readonly instant?: string;
  /** Roll the plan back too, instead of keeping it for a retry. */
  readonly abandon?: boolean;
  /** Roll back even though a heartbeat says a run is working on the instant (by-hand invocations only). */
  readonly ignoreHeartbeat?: boolean;
  /** The failure that led here (the state machine's Catch output). */
  readonly error?: StateError;
}

export interface RollbackStepOutput {
  readonly tablePath: string;
  readonly instant: string | undefined;
  readonly outcome: 'attempt-rolled-back' | 'plan-abandoned' | 'nothing-to-roll-back' | 'already-committed' | 'not-on-timeline';
  /** Whether `T.replacecommit.requested` is still pending, to be resumed by a later run. */
  readonly planKept: boolean;
  readonly rollbackInstant: string | undefined;
  readonly deletedFiles: number;
  /** Why the run failed, when the state machine says. */
  readonly failure: string | undefined;
}

export function parseRollbackEvent(event: unknown): RollbackStepInput {
  const object = asObject(event, 'rollback event');
  const instant = optionalInstant(object, 'instant', 'rollback event');
  const abandon = optionalBoolean(object, 'abandon', 'rollback event');
  const ignoreHeartbeat = optionalBoolean(object, 'ignoreHeartbeat', 'rollback event');
  const error = optionalStateError(object, 'error');
  return {
    ...executionInputOf(object, 'rollback event'),
    ...(instant === undefined ? {} : { instant }),
    ...(abandon === undefined ? {} : { abandon }),
    ...(ignoreHeartbeat === undefined ? {} : { ignoreHeartbeat }),
    ...(error === undefined ? {} : { error }),
  };
}

export async function rollbackStep(input: RollbackStepInput, deps: StepDependencies): Promise<RollbackStepOutput> {
  const settings = resolveStepSettings(deps.env, input);
  const failure = input.error === undefined ? undefined : `${input.error.Error}: ${stateErrorMessage(input.error)}`;
  const base = { tablePath: settings.tablePath, instant: input.instant, failure };
  if (input.instant === undefined) {
    return { ...base, outcome: 'nothing-to-roll-back', planKept: false, rollbackInstant: undefined, deletedFiles: 0 };
  }
  const instantTime = input.instant;
  // It rolls back clustering attempts only, which merge-on-read tables have too.
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: 'clustering' });
  const instant = findClusteringInstant(table.timeline, instantTime);
  if (instant === undefined) {
    // Rolled back by someone else (Hudi knows nothing of our group results): leave nothing of it behind.
    await deleteInstantScratch(table.storage, instantTime);
    await releaseRun(table.storage, instantTime);
    deps.log.info('clustering is no longer on the timeline (rolled back already?)', { instant: instantTime });
    return { ...base, outcome: 'not-on-timeline', planKept: false, rollbackInstant: undefined, deletedFiles: 0 };
  }
  if (instant.state === 'COMPLETED') {
    deps.log.info('clustering completed meanwhile; nothing to roll back', { instant: instantTime });
    return { ...base, outcome: 'already-committed', planKept: false, rollbackInstant: undefined, deletedFiles: 0 };
  }

  // From the state machine, this run's groups have all finished; by hand, a live heartbeat means a run still works.
  const fromStateMachine = input.error !== undefined;
  if (!fromStateMachine && input.ignoreHeartbeat !== true) {
    const activity = await readRunActivity(table.storage, instantTime, deps.now?.() ?? new Date());
    if (isAlive(activity)) {
      throw new HudiError(
        `clustering ${instantTime} is being run (heartbeat ${Math.round((activity.heartbeatAgeMs ?? 0) / 1000)} s old${activity.claim ? `, by ${activity.claim.runId}` : ''})`,
        {
          location: table.storage.uriOf(`.hoodie/.heartbeat/${instantTime}`),
          fix: 'wait for that run to end (or stop its execution), or pass "ignoreHeartbeat": true',
        },
      );
    }
  }

  const abandon = input.abandon === true || input.error?.Error === CONFLICT_ERROR;
  let result: RollbackResult | undefined;
  if (abandon) {
    result = await rollbackInstant(table, instantTime, { lock, ignoreHeartbeat: true });
  } else {
    result = await rollbackInflightClustering(table, instantTime, { lock });
  }
  await releaseRun(table.storage, instantTime);
  const output: RollbackStepOutput = {
    ...base,
    outcome: abandon ? 'plan-abandoned' : 'attempt-rolled-back',
    planKept: !abandon,
    rollbackInstant: result?.rollbackInstantTime,
    deletedFiles: result?.deletedFiles.length ?? 0,
  };
  deps.log.info(abandon ? 'clustering plan abandoned' : 'failed attempt rolled back; plan kept for the next run', { ...output });
  return output;
}
