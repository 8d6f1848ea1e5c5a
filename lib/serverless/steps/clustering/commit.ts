/**
 * The state machine's last step: gather every group's result from storage (never from the state, which stays
 * small) and write the replacecommit under the table lock. Returns the run's report, trimmed to stay small.
 */
import { commit } from '../../../clustering/commit.js';
import { groupResultsDone, loadClusteringInstant } from '../../../clustering/instant.js';
import type { ClusteringReport, ClusteringSummary, PartitionReport } from '../../../clustering/report.js';
import { type CatalogSyncOutcome, syncCatalogAfterCommit } from '../../../sync/index.js';
import { glueClientOf, openTableAndLock } from '../../aws/clients.js';
import { INCOMPLETE_ERROR, TaskError } from '../../aws/errors.js';
import { type ClusteringExecutionInput, resolveStepSettings } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, requiredInstant } from '../events.js';

export interface CommitStepInput extends ClusteringExecutionInput {
  readonly instant: string;
}

/** A report small enough for a state: every partition up to MAX_REPORTED_PARTITIONS, then totals only. */
export interface ReportSummary extends Omit<ClusteringReport, 'partitions'> {
  readonly partitions: readonly PartitionReport[];
  readonly partitionsOmitted: number;
}

export interface CommitStepOutput {
  readonly status: 'COMMITTED';
  readonly tablePath: string;
  readonly instant: string;
  /** 'already-committed' when a retried commit step finds its own earlier call completed the instant. */
  readonly outcome: 'committed' | 'already-committed';
  readonly replacedFileGroups: number;
  readonly newFiles: number;
  /** Files of an earlier attempt that no result names, deleted before committing. */
  readonly removedFiles: number;
  readonly report: ReportSummary | undefined;
  /** The run's HTML report (s3://…/.reports/clustering/<instant>.html), or why it was not written; absent on a retry. */
  readonly htmlReport?: { readonly uri: string } | { readonly error: string };
  /** The Glue Data Catalog sync after the commit, when meta sync is on (a clustering only moves last_commit_time_sync). */
  readonly catalogSync?: CatalogSyncOutcome;
}

export const MAX_REPORTED_PARTITIONS = 50;

export function parseCommitEvent(event: unknown): CommitStepInput {
  const object = asObject(event, 'commit event');
  return { ...executionInputOf(object, 'commit event'), instant: requiredInstant(object, 'instant', 'commit event') };
}

export function summarizeReport(report: ClusteringReport, maxPartitions = MAX_REPORTED_PARTITIONS): ReportSummary {
  return {
    ...report,
    partitions: report.partitions.slice(0, maxPartitions),
    partitionsOmitted: Math.max(0, report.partitions.length - maxPartitions),
  };
}

/** A retried step's report: the totals its replacecommit recorded, no partition figures. */
function fromStoredSummary(instantTime: string, summary: ClusteringSummary): ReportSummary {
  const { partitions, ...shape } = summary;
  return { instantTime, ...shape, partitions: [], partitionsOmitted: partitions };
}

export async function commitStep(input: CommitStepInput, deps: StepDependencies): Promise<CommitStepOutput> {
  const settings = resolveStepSettings(deps.env, input);
  for (const warning of settings.warnings) deps.log.warn(warning);
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: 'clustering' });

  const { instant, plan } = await loadClusteringInstant(table, input.instant);
  if (instant.state !== 'COMPLETED') {
    // Named apart from other failures: the state machine must not retry it, and the rollback keeps the plan.
    const missing = (await groupResultsDone(table.storage, input.instant, plan.inputGroups.length)).flatMap((done, index) => (done ? [] : [index]));
    if (missing.length > 0) {
      throw new TaskError(
        INCOMPLETE_ERROR,
        `clustering ${input.instant} cannot complete: ${missing.length} of ${plan.inputGroups.length} group(s) have no result (${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''}); ` +
          "their execute-group tasks failed — see those tasks' errors in the execution history",
      );
    }
  }

  const result = await commit(table, input.instant, { lock, properties: settings.jobProperties });
  if (result.htmlReport !== undefined && 'error' in result.htmlReport) deps.log.warn(`the HTML report was not written: ${result.htmlReport.error}`);
  const catalogSync = await syncCatalogAfterCommit(await table.reload(), settings.jobProperties, {
    glue: (config) => glueClientOf(deps.clients, config, deps.env),
    log: deps.log,
  });
  const replaced = Object.values(result.metadata.partitionToReplaceFileIds ?? {}).reduce((total, ids) => total + ids.length, 0);
  const written = Object.values(result.metadata.partitionToWriteStats).reduce((total, stats) => total + stats.length, 0);
  deps.log.info('clustering committed', {
    instant: input.instant,
    outcome: result.outcome,
    replacedFileGroups: replaced,
    newFiles: written,
    removedFiles: result.removedFiles.length,
  });
  return {
    status: 'COMMITTED',
    tablePath: settings.tablePath,
    instant: input.instant,
    outcome: result.outcome,
    replacedFileGroups: replaced,
    newFiles: written,
    removedFiles: result.removedFiles.length,
    report:
      result.report !== undefined
        ? summarizeReport(result.report)
        : result.summary !== undefined
          ? fromStoredSummary(input.instant, result.summary)
          : undefined,
    ...(result.htmlReport === undefined
      ? {}
      : { htmlReport: 'path' in result.htmlReport ? { uri: table.storage.uriOf(result.htmlReport.path) } : result.htmlReport }),
    ...(catalogSync === undefined ? {} : { catalogSync }),
  };
}
