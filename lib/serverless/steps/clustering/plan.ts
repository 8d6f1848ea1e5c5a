/**
 * The state machine's first step: under the table lock, resume the oldest pending clustering when no live run owns
 * it, or else schedule a new one. The output names the instant and the groups to run by index only — the plan
 * itself stays on the timeline, since Step Functions caps a state's data at 256 KB.
 */

import type { ClusteringConfig } from '../../../clustering/config.js';
import { type GroupExecutor, groupExecutor } from '../../../clustering/executor.js';
import { discardStaleGroupResults, findClusteringInstant, groupResultsDone } from '../../../clustering/instant.js';
import { capGroupBytes } from '../../../clustering/job.js';
import { schedule } from '../../../clustering/schedule.js';
import { assertMetadataTableKeepable } from '../../../metadata/index.js';
import { describeHeal, healTable } from '../../../rollback/failed-writes.js';
import { findRollbackOf, rollbackInflightClustering } from '../../../rollback/rollback.js';
import type { Storage } from '../../../storage/port.js';
import { withTableLock } from '../../../table/table.js';
import type { ClusteringPlan } from '../../../timeline/clustering-plan.js';
import { pendingClusteringPlans } from '../../../timeline/queries.js';
import { heldLock, openTableAndLock } from '../../aws/clients.js';
import { executeGroupSize, type PropertyOverrides, resolveStepSettings } from '../../aws/settings.js';
import { type PlanStepInput, parseRunEvent, type StepDependencies } from '../contract.js';
import { claimRun, isAlive, readRunActivity } from '../run-claim.js';
import { chooseMap, type GroupManifest, type MapMode, mapConcurrency, scaleOutSettings } from '../scale-out.js';

/** A Map item: which group to run, and in which function (the ItemProcessor's Choice reads it). Small on purpose. */
export interface GroupReference {
  readonly index: number;
  readonly executor: GroupExecutor;
}

/** The Map items of `plan`'s groups `indices`. */
function groupReferences(plan: ClusteringPlan, indices: readonly number[], config: ClusteringConfig, populateMetaFields: boolean): GroupReference[] {
  return indices.map((index) => ({ index, executor: groupExecutor(plan, plan.inputGroups[index]!, config, populateMetaFields) }));
}

interface PlanOutputBase {
  readonly tablePath: string;
  /** The run's property overrides, passed on to every later state. */
  readonly properties: PropertyOverrides;
}

export type PlanStepOutput =
  | (PlanOutputBase & { readonly status: 'NOTHING_TO_DO'; readonly reason: string })
  | (PlanOutputBase & { readonly status: 'ALREADY_RUNNING'; readonly instant: string; readonly reason: string })
  | (PlanOutputBase & {
      readonly status: 'CLUSTER';
      readonly instant: string;
      /** True when an earlier run's pending plan is taken up again. */
      readonly resumed: boolean;
      readonly totalGroups: number;
      /** How many groups are still without a result: all of a new plan's. */
      readonly groupsToRun: number;
      /** Those groups for the inline Map; empty for the Distributed Map, which reads them from `manifest`. */
      readonly groups: readonly GroupReference[];
      /** Which Map runs the groups (the state machine's Choice reads it): scale-out.ts. */
      readonly mapMode: MapMode;
      /** DISTRIBUTED: the S3 object listing the groups (its ItemReader). */
      readonly manifest?: GroupManifest;
      /** hoodie.clustering.max.parallelism, bounded by the account's Lambda share: the Map's MaxConcurrencyPath. */
      readonly maxConcurrency: number;
    });

export function parsePlanEvent(event: unknown): PlanStepInput {
  return parseRunEvent(event, 'plan event');
}

export async function planStep(input: PlanStepInput, deps: StepDependencies): Promise<PlanStepOutput> {
  const now = deps.now ?? (() => new Date());
  const settings = resolveStepSettings(deps.env, input);
  for (const warning of settings.warnings) deps.log.warn(warning);
  const runId = input.runId ?? `direct-${now().toISOString()}`;
  if (input.services === 'clean-archive') {
    return {
      tablePath: settings.tablePath,
      properties: settings.overrides,
      status: 'NOTHING_TO_DO',
      reason: 'the run was started for cleaning and archiving only ("services": "clean-archive")',
    };
  }
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: 'clustering' });
  // Resuming a plan or scheduling one: either way the run must be able to keep the metadata table when it commits.
  await assertMetadataTableKeepable(table.storage, 'a clustering', settings.jobProperties, table.config, 'cluster');
  const base: PlanOutputBase = { tablePath: settings.tablePath, properties: settings.overrides };
  const scaleOut = scaleOutSettings(settings.jobProperties, deps.env);
  const maxConcurrency = mapConcurrency(settings.clustering.maxParallelism, scaleOut);
  const fanOut = async (storage: Storage, instant: string, groups: readonly GroupReference[]) => {
    const choice = await chooseMap(storage, instant, groups, scaleOut);
    if (choice.note !== undefined) deps.log.warn(choice.note);
    return {
      groupsToRun: groups.length,
      groups: choice.mapMode === 'DISTRIBUTED' ? [] : groups,
      mapMode: choice.mapMode,
      ...(choice.manifest === undefined ? {} : { manifest: choice.manifest }),
    };
  };
  // A service run beside writers: writes whose heartbeat expired are rolled back, leftovers of completed instants go.
  const healed = await healTable(table, { lock, policy: 'LAZY', now: now() });
  for (const line of describeHeal(healed)) deps.log.info(line);

  return withTableLock(table, lock, async (current, lease) => {
    const storage = current.storage;
    // Hudi executes the oldest pending clustering first (getFirstPendingClusterInstant).
    const pending = (await pendingClusteringPlans(storage, current.timeline))[0];
    if (pending !== undefined) {
      const instant = pending.instant.time;
      const activity = await readRunActivity(storage, instant, now());
      if (isAlive(activity) && activity.claim?.runId !== runId) {
        const reason = `clustering ${instant} is being run by ${activity.claim?.runId ?? 'another writer'} (heartbeat ${Math.round((activity.heartbeatAgeMs ?? 0) / 1000)} s old)`;
        deps.log.info('another run owns the pending clustering', { instant, owner: activity.claim?.runId });
        return { ...base, status: 'ALREADY_RUNNING' as const, instant, reason };
      }
      const total = pending.plan.inputGroups.length;
      // A rollback of the last attempt that a crash interrupted is finished first, keeping the plan.
      const rollback = await findRollbackOf(storage, current.timeline, instant);
      if (rollback !== undefined && rollback.state !== 'COMPLETED') {
        await rollbackInflightClustering(current, instant, { lock: heldLock(lease, lock.description), now: now() });
        deps.log.info('finished an interrupted rollback of the last attempt', { instant, rollback: rollback.time });
      }
      await lease.assertHeld();
      const state = findClusteringInstant((await current.reload()).timeline, instant) ?? pending.instant;
      await discardStaleGroupResults(storage, state, total);
      const done = await groupResultsDone(storage, instant, total);
      const groups = groupReferences(
        pending.plan,
        done.flatMap((finished, index) => (finished ? [] : [index])),
        settings.clustering,
        current.config.populateMetaFields,
      );
      await lease.assertHeld();
      await claimRun(storage, instant, runId, now());
      deps.log.info('resuming pending clustering', { instant, state: pending.instant.state, totalGroups: total, groupsToRun: groups.length });
      return { ...base, status: 'CLUSTER' as const, instant, resumed: true, totalGroups: total, ...(await fanOut(storage, instant, groups)), maxConcurrency };
    }

    const notes: string[] = [];
    // Groups no larger than one execute-group can stage, write and spill.
    const capped = capGroupBytes(settings.clustering, executeGroupSize(deps.env));
    if (capped.note !== undefined) deps.log.info('group size capped', { note: capped.note });
    const scheduled = await schedule(current, capped.config, {
      // Already inside the lock: schedule's own withLock must not wait for ourselves.
      lock: heldLock(lease, lock.description),
      ...(input.force === undefined ? {} : { force: input.force }),
      now: now(),
      log: (line) => notes.push(line),
      properties: settings.jobProperties,
    });
    if (scheduled === undefined) {
      const reason = notes.join('; ') || 'nothing to cluster';
      deps.log.info('nothing to cluster', { reason });
      return { ...base, status: 'NOTHING_TO_DO' as const, reason };
    }
    await claimRun(storage, scheduled.instantTime, runId, now());
    deps.log.info('scheduled clustering', {
      instant: scheduled.instantTime,
      groups: scheduled.groups.length,
      inputFiles: scheduled.groups.reduce((sum, group) => sum + group.inputFiles, 0),
      inputBytes: scheduled.groups.reduce((sum, group) => sum + group.inputBytes, 0),
    });
    return {
      ...base,
      status: 'CLUSTER' as const,
      instant: scheduled.instantTime,
      resumed: false,
      totalGroups: scheduled.groups.length,
      ...(await fanOut(
        storage,
        scheduled.instantTime,
        groupReferences(
          scheduled.plan,
          scheduled.groups.map((group) => group.index),
          capped.config,
          current.config.populateMetaFields,
        ),
      )),
      maxConcurrency,
    };
  });
}
