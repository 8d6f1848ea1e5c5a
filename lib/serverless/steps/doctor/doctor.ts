/**
 * The scheduled `doctor` (functions/doctor.ts is its shell): `hudi-serverless doctor` on the deployment's table, each
 * finding logged as one structured line and counted in the step's metrics (metrics.ts: per severity and per check,
 * with the table as a dimension). It reads only, unless the event asks `{"fix": true}`: then it applies the safe
 * repairs `doctor --fix` applies (a failed write's rollback, a clean, an archive) under the table lock.
 */
import { countFindings, type DoctorCheck, type DoctorReport, doctorTable, type Finding, type Severity } from '../../../status/doctor.js';
import { type AppliedRepair, describeRepair, doctorFix } from '../../../status/fix.js';
import { openTableAndLock } from '../../aws/clients.js';
import { type ClusteringExecutionInput, ENV, resolveStepSettings } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, optionalBoolean } from '../events.js';

/** At most this many findings are returned (every one is logged); the counts cover them all. */
export const MAX_RETURNED_FINDINGS = 100;

export interface DoctorStepInput extends Pick<ClusteringExecutionInput, 'tablePath' | 'properties'> {
  /** Apply the safe repairs (default false: report only). */
  readonly fix?: boolean;
}

export interface DoctorStepOutput {
  readonly tablePath: string;
  readonly worst: Severity;
  readonly bySeverity: Readonly<Record<Severity, number>>;
  readonly byCheck: Readonly<Record<DoctorCheck, number>>;
  /** The first MAX_RETURNED_FINDINGS findings (the checks' order). */
  readonly findings: readonly Finding[];
  /** With `fix`: each safe repair and its outcome, and the worst severity the check after them found. */
  readonly repairs?: readonly AppliedRepair[];
  readonly worstAfter?: Severity;
}

export function parseDoctorEvent(event: unknown): DoctorStepInput {
  const object = asObject(event, 'doctor event');
  const { tablePath, properties } = executionInputOf(object, 'doctor event');
  const fix = optionalBoolean(object, 'fix', 'doctor event');
  return { ...(tablePath === undefined ? {} : { tablePath }), ...(properties === undefined ? {} : { properties }), ...(fix === undefined ? {} : { fix }) };
}

export async function doctorStep(input: DoctorStepInput, deps: StepDependencies): Promise<DoctorStepOutput> {
  const settings = resolveStepSettings(deps.env, input);
  for (const warning of settings.warnings) deps.log.warn(warning);
  const { table, lock } = await openTableAndLock(settings, deps.clients, { mode: 'read' });
  const options = {
    properties: settings.jobProperties,
    propertiesLocation: ENV.clusteringProperties,
    ...(deps.now === undefined ? {} : { now: deps.now() }),
  };
  let report: DoctorReport;
  let fixed: { repairs: readonly AppliedRepair[]; after: DoctorReport } | undefined;
  if (input.fix === true) {
    const result = await doctorFix(table.storage, { ...options, lock });
    report = result.before;
    fixed = { repairs: result.applied, after: result.after };
  } else {
    report = await doctorTable(table, options);
  }
  for (const finding of report.findings) logFinding(deps, settings.tablePath, finding);
  for (const repair of fixed?.repairs ?? []) {
    deps.log.info('doctor repair', { table: settings.tablePath, repair: describeRepair(repair.fix), outcome: repair.outcome, detail: repair.detail });
  }
  const { bySeverity, byCheck } = countFindings(report);
  deps.log.info('doctor finished', { table: settings.tablePath, worst: report.worst, bySeverity, byCheck });
  return {
    tablePath: settings.tablePath,
    worst: report.worst,
    bySeverity,
    byCheck,
    findings: report.findings.slice(0, MAX_RETURNED_FINDINGS),
    ...(fixed === undefined ? {} : { repairs: fixed.repairs, worstAfter: fixed.after.worst }),
  };
}

function logFinding(deps: StepDependencies, table: string, finding: Finding): void {
  const { fix: _fix, ...fields } = finding;
  const attributes = { table, ...fields, safeRepair: finding.fix === undefined ? null : describeRepair(finding.fix) };
  if (finding.severity === 'info') deps.log.info('doctor finding', attributes);
  else deps.log.warn('doctor finding', attributes);
}
