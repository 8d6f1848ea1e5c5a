/**
 * Every metric name this service publishes and the shape of one figure: the names the dashboard, the alarms, the
 * steps' figures (metrics.ts) and every invocation's own figures (observability.ts) share.
 */
import type { MetricUnit } from '@aws-lambda-powertools/metrics';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

export interface RunFigure {
  readonly name: string;
  readonly unit: Unit;
  readonly value: number;
  /** Dimensions besides service and step (the doctor's table and check); published on a line of their own. */
  readonly dimensions?: Readonly<Record<string, string>>;
}

/** Every metric name this service publishes (namespace POWERTOOLS_METRICS_NAMESPACE, dimensions service and step). */
export const METRIC = {
  succeeded: 'Succeeded',
  failed: 'Failed',
  durationMs: 'DurationMs',
  estimatedCost: 'EstimatedCostUSD',
  groupsPlanned: 'GroupsPlanned',
  groups: 'Groups',
  filesIn: 'FilesIn',
  filesOut: 'FilesOut',
  bytesIn: 'BytesIn',
  bytesOut: 'BytesOut',
  rowsIn: 'RowsIn',
  rowsOut: 'RowsOut',
  /** The average share of a partition's files a point query on the sort columns reads, before and after (percent). */
  filesReadBefore: 'DataSkippingFilesReadBeforePercent',
  filesReadAfter: 'DataSkippingFilesReadAfterPercent',
  groupOutputFiles: 'GroupOutputFiles',
  groupRows: 'GroupRows',
  /**
   * Age of the oldest pending clustering or clean plan, published by every trigger check (0: none pending); with step
   * compaction-schedule, of the oldest pending compaction, published by every compaction execution.
   */
  pendingPlanAge: 'PendingPlanAgeSeconds',
  runsStarted: 'RunsStarted',
  /** Compaction (step compaction-schedule): operations (file slices) the compaction to run has without a result. */
  operationsPlanned: 'OperationsPlanned',
  /** Compaction (step compaction-commit): operations committed; compaction-execute: rows one operation wrote. */
  operations: 'Operations',
  operationRows: 'OperationRows',
  filesCleaned: 'FilesCleaned',
  instantsArchived: 'InstantsArchived',
  catalogSyncFailed: 'CatalogSyncFailed',
  catalogPartitionsAdded: 'CatalogPartitionsAdded',
  /** The scheduled doctor (dimension table): its findings per severity, and per check (dimensions table and check). */
  doctorErrors: 'DoctorErrors',
  doctorWarnings: 'DoctorWarnings',
  doctorInfos: 'DoctorInfos',
  doctorFindings: 'DoctorFindings',
  /** The doctor's safe repairs (with {"fix": true}) applied, and refused by their service. */
  doctorRepairsApplied: 'DoctorRepairsApplied',
  doctorRepairsRefused: 'DoctorRepairsRefused',
} as const;

/** The dimensions of the doctor's figures, besides service and step. */
export const DOCTOR_DIMENSION = { table: 'table', check: 'check' } as const;
