/**
 * Compaction started by a writer: after ingest's delta commits into a merge-on-read table, Hudi's trigger
 * (hoodie.compact.inline.trigger.strategy, .max.delta.commits, .max.delta.seconds, read as the compaction schedule
 * step reads them) decides whether the compaction state machine (COMPACTION_STATE_MACHINE_ARN) starts, so a streaming
 * table is compacted without waiting for the schedule. The execution is named after the table's state, so a writer and
 * the schedule asking for one state start one run; the schedule step decides again under the table lock.
 */
import { compactionConfigFrom } from '../../../compaction/config.js';
import { compactionDue } from '../../../compaction/schedule.js';
import { UnsupportedTableError } from '../../../errors.js';
import { assertSupported, PROPERTIES_FILE } from '../../../table/config.js';
import { pendingCompactions } from '../../../timeline/compaction-plan.js';
import { formatInstantTime } from '../../../timeline/instant.js';
import { openTableAndLock } from '../../aws/clients.js';
import { ENV, type Environment, resolveStepSettings } from '../../aws/settings.js';
import { sfnClientFromEnv } from '../../aws/sfn-client.js';
import type { StepDependencies } from '../contract.js';
import { isAlive, readRunActivity } from '../run-claim.js';
import { type ExecutionStarter, executionNameFor, StepFunctionsStarter, type TriggerOutput } from '../trigger/trigger.js';

/** Whether a compaction run should start after the writer's commit `instant`, and its start when it should. */
export async function compactionAfterWrite(instant: string, deps: StepDependencies & { readonly starter: ExecutionStarter }): Promise<TriggerOutput> {
  const now = deps.now?.() ?? new Date();
  const settings = resolveStepSettings(deps.env, {});
  const { table } = await openTableAndLock(settings, deps.clients, { mode: 'read' });
  if (table.config.type !== 'MERGE_ON_READ') return { status: 'IGNORED', reason: `the table is ${table.config.type}: nothing to compact` };
  // A table the writer writes but compaction does not (a 1.x merge-on-read table): no run that would only refuse it.
  try {
    assertSupported(table.config, table.storage.uriOf(PROPERTIES_FILE), 'write');
  } catch (error) {
    if (error instanceof UnsupportedTableError) return { status: 'IGNORED', reason: `compaction does not run on this table: ${error.message}` };
    throw error;
  }
  const latestCompleted = table.timeline.completed().at(-1)?.time;
  const pending = pendingCompactions(table.timeline)[0]?.time;
  let name: string;
  if (pending !== undefined) {
    const activity = await readRunActivity(table.storage, pending, now, 'compaction');
    if (isAlive(activity)) return { status: 'RUNNING', reason: `compaction ${pending} is running` };
    // A pending compaction nobody works on: a run takes it up, at most once an hour for one table state.
    name = executionNameFor(table.config.name, settings.tablePath, latestCompleted, formatInstantTime(now).slice(0, 10), 'compaction');
  } else {
    const due = compactionDue(table.timeline, compactionConfigFrom(settings.jobProperties, ENV.clusteringProperties), now, table.config.timelineTimeZone);
    if (!due.due) return { status: 'WAITING', reason: `compaction is not due: ${due.reason}` };
    name = executionNameFor(table.config.name, settings.tablePath, latestCompleted, undefined, 'compaction');
  }
  const started = await deps.starter.start({ name, input: { tablePath: settings.tablePath } });
  deps.log.info(started.outcome === 'started' ? 'started a compaction run' : 'a compaction run was already started for this timeline', {
    executionName: name,
    afterWrite: instant,
  });
  return {
    status: started.outcome === 'started' ? 'STARTED' : 'ALREADY_STARTED',
    reason: started.outcome === 'started' ? `started ${name}` : `an execution named ${name} exists already`,
    executionName: name,
    ...(started.executionArn === undefined ? {} : { executionArn: started.executionArn }),
  };
}

/** compactionAfterWrite against the state machine of COMPACTION_STATE_MACHINE_ARN; undefined when it is not set. */
export function afterWriteCompactionFromEnv(env: Environment, deps: Omit<StepDependencies, 'env'>): ((instant: string) => Promise<TriggerOutput>) | undefined {
  const arn = env[ENV.compactionStateMachineArn]?.trim();
  if (!arn) return undefined;
  let starter: StepFunctionsStarter | undefined;
  return (instant) => {
    starter ??= new StepFunctionsStarter(sfnClientFromEnv(env), arn);
    return compactionAfterWrite(instant, { ...deps, env, starter });
  };
}
