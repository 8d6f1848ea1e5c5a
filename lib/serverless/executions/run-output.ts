/**
 * What a state machine execution outputs, and a few lines saying what it did (the CLI and the demo print them).
 * No AWS client here: the CLI loads the Step Functions client only for `--via-state-machine`.
 */
import type { ArchiveStepOutput } from '../steps/archival/archive.js';
import type { CleanStepOutput } from '../steps/cleaning/index.js';
import type { CommitStepOutput } from '../steps/clustering/commit.js';
import type { PlanStepOutput } from '../steps/clustering/plan.js';

/**
 * What a succeeded execution outputs: its input's fields with each step's output — `plan` (absent when the run went
 * straight to cleaning), `clustering` (the commit step's summary, with its report, when a clustering committed),
 * `clean` (the last clean step's) and `archive` (absent when the run ended at AlreadyRunning).
 */
export interface TableServicesOutput {
  readonly plan?: PlanStepOutput;
  readonly clustering?: CommitStepOutput;
  readonly clean?: CleanStepOutput;
  readonly archive?: ArchiveStepOutput;
}

/** One line per service of a finished run's output. */
export function describeTableServices(output: TableServicesOutput): string[] {
  const lines: string[] = [];
  if (output.clustering !== undefined)
    lines.push(
      `clustering: committed ${output.clustering.instant} (${output.clustering.replacedFileGroups} file group(s) replaced by ${output.clustering.newFiles} file(s))`,
    );
  else if (output.plan !== undefined) lines.push(`clustering: ${output.plan.status}${'reason' in output.plan ? ` (${output.plan.reason})` : ''}`);
  const clean = output.clean;
  if (clean !== undefined) {
    lines.push(
      clean.status === 'CLEANED'
        ? `clean: ${clean.outcome === 'completed' ? 'completed' : 'already completed'} ${clean.instant}: ${clean.filesDeleted} file(s) deleted in ${clean.partitions} partition(s)${clean.failedFiles > 0 ? `, ${clean.failedFiles} could not be` : ''}`
        : `clean: ${clean.status}${'reason' in clean ? ` (${clean.reason})` : ''}`,
    );
  }
  const archive = output.archive;
  if (archive !== undefined) {
    lines.push(
      archive.status === 'SKIPPED'
        ? `archive: SKIPPED (${archive.reason})`
        : `archive: ${archive.archived} instant(s) archived; ${archive.activeCommits} completed commit(s) active (keep ${archive.keepMinCommits}..${archive.keepMaxCommits})`,
    );
  }
  return lines;
}
