/**
 * Step 1, `clean-prepare`: finish a pending clean first (any writer's: split into delete shares, never re-planned);
 * else, when a clean is due, find the earliest commit to retain and the partitions to look at (incremental or a full
 * walk), and write them to the work folder in shares of partitions, each with its slice of the planning context.
 */
import { walkPartitions } from '../../../cleaning/listing.js';
import { prepareClean } from '../../../cleaning/schedule.js';
import {
  cleanFingerprint,
  newPlanningId,
  readNothingToClean,
  recordNothingToClean,
  sameCleanState,
  tidyCleanWorkFolder,
  writePlanningShares,
} from '../../../cleaning/shares.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, type JsonObject, optionalString } from '../events.js';
import { type CleanStepOutput, executionOf, openForClean, type TableServiceInput } from './shared.js';

/** Accepts the state machine's `{input, runId}` wrapper (the whole state) or a bare execution input. */
export function parseCleanPrepareEvent(event: unknown): TableServiceInput {
  const object = asObject(event, 'clean-prepare event');
  const wrapped = object['input'] !== undefined && typeof object['input'] === 'object' && object['input'] !== null;
  const inputObject: JsonObject = wrapped ? asObject(object['input'], 'clean-prepare event input') : object;
  const runId = optionalString(object, 'runId', 'clean-prepare event');
  return { ...executionInputOf(inputObject, 'clean-prepare event input'), ...(runId === undefined ? {} : { runId }) };
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
