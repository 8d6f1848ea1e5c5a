/**
 * The CloudWatch metrics (embedded metric format, through Powertools) a step's result carries, besides what every
 * invocation publishes (observability.ts: Succeeded/Failed, DurationMs, Requests.*, EstimatedCostUSD). Pure: each
 * step's output → named figures, so a handler passes its step's function to `invoke` and the dashboard, the alarms
 * and the tests read the same names (METRIC).
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { DOCTOR_CHECKS } from '../../status/doctor.js';
import { DOCTOR_DIMENSION, METRIC, type RunFigure } from '../aws/metric-names.js';
import type { ArchiveStepOutput } from './archival/archive.js';
import type { CommitStepOutput } from './clustering/commit.js';
import type { ExecuteGroupOutput } from './clustering/execute.js';
import type { PlanStepOutput } from './clustering/plan.js';
import type { CompactionCommitOutput, CompactionOperationOutput, CompactionScheduleOutput } from './compaction/steps.js';
import type { DoctorStepOutput } from './doctor/doctor.js';
import type { TriggerOutput } from './trigger/trigger.js';

const count = (name: string, value: number): RunFigure => ({ name, unit: MetricUnit.Count, value });

interface CommitTotals {
  /** Clustering groups or compaction operations, published under `unitsMetric`. */
  readonly units: number;
  readonly filesIn: number;
  readonly filesOut: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Absent where the service does not count the rows it read (compaction). */
  readonly rowsIn?: number;
  readonly rowsOut: number;
}

/** What a service's commit publishes of its run, under the same names for clustering and compaction. */
function commitTotals(unitsMetric: string, totals: CommitTotals): RunFigure[] {
  return [
    count(unitsMetric, totals.units),
    count(METRIC.filesIn, totals.filesIn),
    count(METRIC.filesOut, totals.filesOut),
    { name: METRIC.bytesIn, unit: MetricUnit.Bytes, value: totals.bytesIn },
    { name: METRIC.bytesOut, unit: MetricUnit.Bytes, value: totals.bytesOut },
    ...(totals.rowsIn === undefined ? [] : [count(METRIC.rowsIn, totals.rowsIn)]),
    count(METRIC.rowsOut, totals.rowsOut),
  ];
}

export function planFigures(output: PlanStepOutput): RunFigure[] {
  return output.status === 'CLUSTER' ? [count(METRIC.groupsPlanned, output.groupsToRun)] : [count(METRIC.groupsPlanned, 0)];
}

export function executeGroupFigures(output: ExecuteGroupOutput): RunFigure[] {
  return [count(METRIC.groupOutputFiles, output.outputFiles), count(METRIC.groupRows, output.rows)];
}

/** The run's totals, from the clustering report the commit returns (absent on a retried commit of a stored summary). */
export function commitFigures(output: CommitStepOutput): RunFigure[] {
  const figures: RunFigure[] = [];
  const report = output.report;
  if (report !== undefined) {
    const { totals } = report;
    figures.push(
      ...commitTotals(METRIC.groups, {
        units: report.groups,
        filesIn: totals.filesBefore,
        filesOut: totals.filesAfter,
        bytesIn: totals.bytesBefore,
        bytesOut: totals.bytesAfter,
        rowsIn: totals.rowsBefore,
        rowsOut: totals.rowsAfter,
      }),
    );
    const skipping = totals.dataSkipping.filter((figure) => figure.samples > 0);
    if (skipping.length > 0) {
      const mean = (pick: (figure: (typeof skipping)[number]) => number): number =>
        (100 * skipping.reduce((total, figure) => total + pick(figure), 0)) / skipping.length;
      figures.push(
        { name: METRIC.filesReadBefore, unit: MetricUnit.Percent, value: mean((f) => f.before) },
        { name: METRIC.filesReadAfter, unit: MetricUnit.Percent, value: mean((f) => f.after) },
      );
    }
  }
  if (output.catalogSync !== undefined) {
    figures.push(
      output.catalogSync.status === 'FAILED'
        ? count(METRIC.catalogSyncFailed, 1)
        : count(METRIC.catalogPartitionsAdded, output.catalogSync.result.partitionsAdded.length),
    );
  }
  return figures;
}

export function triggerFigures(output: TriggerOutput): RunFigure[] {
  const figures = [count(METRIC.runsStarted, output.status === 'STARTED' ? 1 : 0)];
  if (output.pendingPlanAgeSeconds !== undefined) figures.push({ name: METRIC.pendingPlanAge, unit: MetricUnit.Seconds, value: output.pendingPlanAgeSeconds });
  return figures;
}

/** A clean share's deletions (clean-execute). */
export function cleanShareFigures(output: { readonly deleted: number }): RunFigure[] {
  return [count(METRIC.filesCleaned, output.deleted)];
}

export function archiveFigures(output: ArchiveStepOutput): RunFigure[] {
  return output.status === 'SKIPPED' ? [] : [count(METRIC.instantsArchived, output.archived)];
}

/** Compaction's schedule step: the oldest pending compaction's age (every execution) and the operations to run. */
export function compactionScheduleFigures(output: CompactionScheduleOutput): RunFigure[] {
  return [
    { name: METRIC.pendingPlanAge, unit: MetricUnit.Seconds, value: output.pendingPlanAgeSeconds },
    count(METRIC.operationsPlanned, output.status === 'EXECUTE' ? output.operationsToRun : 0),
  ];
}

export function compactionOperationFigures(output: CompactionOperationOutput): RunFigure[] {
  return [count(METRIC.operationRows, output.records), { name: METRIC.bytesIn, unit: MetricUnit.Bytes, value: output.bytesRead }];
}

/** The compaction's totals, as clustering's commit publishes them (FilesIn/Out, BytesIn/Out, RowsOut). */
export function compactionCommitFigures(output: CompactionCommitOutput): RunFigure[] {
  if (output.outcome === 'already-committed') return [];
  return commitTotals(METRIC.operations, {
    units: output.fileGroups,
    filesIn: output.filesIn,
    filesOut: output.fileGroups,
    bytesIn: output.bytesRead,
    bytesOut: output.bytesWritten,
    rowsOut: output.records,
  });
}

/**
 * The doctor's findings per severity and per check (every check, zeros included, so an alarm on a check sees its
 * return to health), with the table as a dimension; with `fix`, the repairs applied and refused.
 */
export function doctorFigures(output: DoctorStepOutput): RunFigure[] {
  const table = { [DOCTOR_DIMENSION.table]: output.tablePath };
  const figures: RunFigure[] = [
    { ...count(METRIC.doctorErrors, output.bySeverity.error), dimensions: table },
    { ...count(METRIC.doctorWarnings, output.bySeverity.warning), dimensions: table },
    { ...count(METRIC.doctorInfos, output.bySeverity.info), dimensions: table },
    ...DOCTOR_CHECKS.map((check) => ({ ...count(METRIC.doctorFindings, output.byCheck[check]), dimensions: { ...table, [DOCTOR_DIMENSION.check]: check } })),
  ];
  if (output.repairs !== undefined) {
    const applied = output.repairs.filter((repair) => repair.outcome === 'applied').length;
    figures.push(
      { ...count(METRIC.doctorRepairsApplied, applied), dimensions: table },
      { ...count(METRIC.doctorRepairsRefused, output.repairs.length - applied), dimensions: table },
    );
  }
  return figures;
}
