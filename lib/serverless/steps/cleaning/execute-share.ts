/** Step 4, `clean-execute` (a Map iteration): delete a share's files (DeleteObjects), store its stats. */
import { executeDeleteShare } from '../../../cleaning/shares.js';
import type { ClusteringExecutionInput } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, requiredInstant, requiredNonNegative } from '../events.js';
import { type CleanShareOutput, storageForShare } from './shared.js';

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

export async function cleanExecuteShareStep(
  input: CleanExecuteShareInput,
  deps: StepDependencies,
): Promise<CleanShareOutput & { readonly deleted: number; readonly failed: number; readonly partitionsDeleted: number }> {
  const { storage, settings } = await storageForShare(input, deps);
  const result = await executeDeleteShare(storage, input.instant, input.shareIndex, { concurrency: settings.config.parallelism });
  deps.log.info('clean share executed', { instant: input.instant, shareIndex: input.shareIndex, ...result });
  return { shareIndex: input.shareIndex, ...result };
}
