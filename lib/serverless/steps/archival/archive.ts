/**
 * The state machine's last step (functions/archive.ts is its shell): Hudi's archiver under the table lock — past
 * hoodie.keep.max.commits completed commits, the oldest instants move to `.hoodie/archived/` (never past the earliest
 * pending write, a savepoint, or a clustering whose replaced files the last clean may not have removed). The
 * timeline is small, so this is one Lambda; a run killed midway is finished by the next (archive.ts).
 */
import { runArchive } from '../../../archival/archive.js';
import { archivalConfigFromProperties } from '../../../archival/config.js';
import { cleanConfigFromProperties } from '../../../cleaner/config.js';
import { openTableAndLock } from '../../aws/clients.js';
import { type ClusteringExecutionInput, ENV, resolveStepSettings, tableServiceProperties } from '../../aws/settings.js';
import type { TableServiceBase } from '../cleaning/index.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf } from '../events.js';

/** At most this many archived instants are named in the output (the state stays small). */
export const MAX_REPORTED_INSTANTS = 50;

export type ArchiveStepOutput = TableServiceBase &
  (
    | { readonly status: 'SKIPPED'; readonly reason: string }
    | {
        readonly status: 'ARCHIVED' | 'NOTHING_TO_ARCHIVE';
        /** Instants archived (one per time and action). */
        readonly archived: number;
        /** `<time> <action>` of the first MAX_REPORTED_INSTANTS of them, oldest first. */
        readonly instants: readonly string[];
        readonly archiveFile: string | null;
        /** Completed commits left on the active timeline. */
        readonly activeCommits: number;
        readonly keepMinCommits: number;
        readonly keepMaxCommits: number;
        /** Timeline files of an interrupted earlier run, removed first. */
        readonly finishedInterrupted: number;
      }
  );

export function parseArchiveEvent(event: unknown): ClusteringExecutionInput {
  return executionInputOf(asObject(event, 'archive event'), 'archive event');
}

export async function archiveStep(input: ClusteringExecutionInput, deps: StepDependencies): Promise<ArchiveStepOutput> {
  const settings = resolveStepSettings(deps.env, input);
  for (const warning of settings.warnings) deps.log.warn(warning);
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: 'archive' });
  const props = tableServiceProperties(table.config.properties, settings);
  const config = archivalConfigFromProperties(props, ENV.clusteringProperties);
  const base: TableServiceBase = { tablePath: settings.tablePath, properties: settings.overrides, services: input.services ?? 'all' };
  if (base.services !== 'clean-archive' && !config.automatic) {
    return { ...base, status: 'SKIPPED', reason: 'hoodie.archive.automatic=false: runs archive only when started with {"services": "clean-archive"}' };
  }
  const result = await runArchive(table, { config, cleanConfig: cleanConfigFromProperties(props, ENV.clusteringProperties), lock, properties: props });
  const archived = result.plan.instants.length;
  deps.log.info(archived > 0 ? 'archived instants' : 'nothing to archive', {
    archived,
    archiveFile: result.archiveFile,
    activeCommits: result.plan.completedCommits - archived,
  });
  return {
    ...base,
    status: result.outcome === 'archived' ? 'ARCHIVED' : 'NOTHING_TO_ARCHIVE',
    archived,
    instants: result.plan.instants.slice(0, MAX_REPORTED_INSTANTS).map((instant) => `${instant.time} ${instant.action}`),
    archiveFile: result.archiveFile ?? null,
    activeCommits:
      result.plan.completedCommits - result.plan.instants.filter((instant) => ['commit', 'deltacommit', 'replacecommit'].includes(instant.action)).length,
    keepMinCommits: result.plan.minToKeep,
    keepMaxCommits: result.plan.maxToKeep,
    finishedInterrupted: result.finishedInterrupted.length,
  };
}
