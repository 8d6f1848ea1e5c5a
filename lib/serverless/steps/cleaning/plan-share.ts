/** Step 2, `clean-plan` (a Map iteration): list a share's partitions, apply the cleaner's rules, store the result. */
import { planShare } from '../../../cleaning/shares.js';
import type { ClusteringExecutionInput } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, requiredNonNegative, requiredString } from '../events.js';
import { type CleanShareOutput, storageForShare } from './shared.js';

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

export async function cleanPlanShareStep(
  input: CleanPlanShareInput,
  deps: StepDependencies,
): Promise<CleanShareOutput & { readonly partitions: number; readonly filesToDelete: number; readonly partitionsToDelete: number }> {
  const { storage, settings } = await storageForShare(input, deps);
  const result = await planShare(storage, input.planningId, input.shareIndex, { concurrency: settings.config.parallelism });
  deps.log.info('clean share planned', { planningId: input.planningId, shareIndex: input.shareIndex, ...result });
  return { shareIndex: input.shareIndex, ...result };
}
