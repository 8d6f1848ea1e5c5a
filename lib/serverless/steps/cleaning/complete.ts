/** Step 5, `clean-complete`: merge the shares' stats into `T.clean` under the lock. */
import { cleanMetadataOf, mergePartitionStats } from '../../../cleaner/clean-metadata.js';
import { emptyCleanerPlan } from '../../../cleaning/clean.js';
import { completeClean } from '../../../cleaning/commit.js';
import { gatherDeleteResults, readCleanManifest } from '../../../cleaning/shares.js';
import { readCleanerPlanSummary, readCleanMetadata } from '../../../cleaning/timeline-facts.js';
import { ConflictError, HudiError } from '../../../errors.js';
import type { HoodieCleanMetadata } from '../../../timeline/avro-schemas.js';
import { loadTimeline } from '../../../timeline/timeline.js';
import { cleanWorkDir, deleteWorkDir } from '../../../timeline/work-folder.js';
import { INCOMPLETE_ERROR, TaskError } from '../../aws/errors.js';
import type { ClusteringExecutionInput } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, requiredInstant } from '../events.js';
import { type CleanStepOutput, openForClean } from './shared.js';

export interface CleanCompleteInput extends ClusteringExecutionInput {
  readonly instant: string;
}

export function parseCleanCompleteEvent(event: unknown): CleanCompleteInput {
  const object = asObject(event, 'clean-complete event');
  return { ...executionInputOf(object, 'clean-complete event'), instant: requiredInstant(object, 'instant', 'clean-complete event') };
}

// ---------------------------------------------------------------------------------------------------------------
// Steps.

export async function cleanCompleteStep(input: CleanCompleteInput, deps: StepDependencies): Promise<CleanStepOutput> {
  const now = deps.now?.() ?? new Date();
  const { table, lock, settings } = await openForClean(input, deps);
  const { storage } = table;
  const instant = table.timeline.instants.find((candidate) => candidate.action === 'clean' && candidate.time === input.instant);
  // `completed`: the metadata this step just wrote (not read back: a clean's may name a million files).
  const completedOutput = async (outcome: 'completed' | 'already-completed', completed?: HoodieCleanMetadata): Promise<CleanStepOutput> => {
    await deleteWorkDir(storage, cleanWorkDir(input.instant));
    const metadata = completed ?? (await readCleanMetadata(storage, input.instant, table.layout));
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
      location: storage.uriOf(`${table.layout.folder}/${input.instant}.clean.inflight`),
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
  // Only the plan's retention, policy and extra metadata go into the clean's metadata: its files are not read (and
  // its bytes are garbage before the shares' results are read).
  const plan = (await readCleanerPlanSummary(storage, input.instant, table.layout)) ?? emptyCleanerPlan(settings.config);
  const results = await gatherDeleteResults(storage, manifest);
  if (results.missing.length > 0) {
    throw new TaskError(
      INCOMPLETE_ERROR,
      `clean ${input.instant} cannot complete: ${results.missing.length} of ${manifest.shares} delete share(s) have no result (${results.missing.slice(0, 20).join(', ')}${results.missing.length > 20 ? ', …' : ''}); ` +
        "their clean-execute tasks failed — see those tasks' errors in the execution history. The clean stays inflight; the next run finishes it from its plan",
    );
  }
  const metadata = cleanMetadataOf(input.instant, plan, mergePartitionStats(results.stats), Math.max(0, now.getTime() - manifest.startedAtMs));
  try {
    await completeClean(storage, table.layout, input.instant, metadata, { lock });
  } catch (error) {
    const completedMeanwhile = (await loadTimeline(storage, table.layout))
      .completed()
      .some((candidate) => candidate.action === 'clean' && candidate.time === input.instant);
    if (error instanceof ConflictError && completedMeanwhile) return completedOutput('already-completed');
    throw error;
  }
  deps.log.info('clean completed', {
    instant: input.instant,
    filesDeleted: metadata.totalFilesDeleted,
    partitions: Object.keys(metadata.partitionMetadata).length,
  });
  return completedOutput('completed', metadata);
}
