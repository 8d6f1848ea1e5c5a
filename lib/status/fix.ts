/**
 * `doctor --fix`: apply the safe repairs a doctor report names, each through the service a user would run for it
 * (rollback of a failed write, clean, archive), under the table lock and with the job's properties, then check the
 * table again. Failed writes are healed first, as Hudi's eager failed-writes policy does before its cleaner, so the
 * clean and the archive that follow see no pending write. A repair the service refuses is reported, not forced.
 */
import { runArchive } from '../archival/archive.js';
import { archivalConfigFromProperties } from '../archival/config.js';
import { cleanConfigFromProperties } from '../cleaner/config.js';
import { runClean } from '../cleaning/clean.js';
import { HudiError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { rollbackInstant } from '../rollback/rollback.js';
import type { Storage } from '../storage/port.js';
import type { TableAccessMode } from '../table/config.js';
import { HudiTable } from '../table/table.js';
import { type DoctorOptions, type DoctorReport, doctorTable, formatDoctorReport, jobProperties, type SafeRepair } from './doctor.js';

export interface AppliedRepair {
  readonly fix: SafeRepair;
  /** `applied`: the service ran; `refused`: it refused the table (its message in `detail`), nothing was forced. */
  readonly outcome: 'applied' | 'refused';
  readonly detail: string;
}

export interface DoctorFixResult {
  readonly before: DoctorReport;
  readonly applied: readonly AppliedRepair[];
  readonly after: DoctorReport;
}

export interface DoctorFixOptions extends DoctorOptions {
  readonly lock: LockProvider;
  readonly onProgress?: (line: string) => void;
}

const KINDS: readonly SafeRepair['kind'][] = ['rollback', 'clean', 'archive'];
/** Each repair's access mode, the one its service asserts (a rollback undoes a delta commit too: 'delta-write'). */
const MODES: Record<SafeRepair['kind'], TableAccessMode> = { rollback: 'delta-write', clean: 'clean', archive: 'archive' };

/** The distinct safe repairs of `report`, in the order they are applied. */
export function safeRepairsOf(report: DoctorReport): SafeRepair[] {
  const seen = new Set<string>();
  const repairs: SafeRepair[] = [];
  for (const finding of report.findings) {
    if (finding.fix === undefined) continue;
    const key = JSON.stringify(finding.fix);
    if (seen.has(key)) continue;
    seen.add(key);
    repairs.push(finding.fix);
  }
  return repairs.sort((a, b) => KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind));
}

export async function doctorFix(storage: Storage, options: DoctorFixOptions): Promise<DoctorFixResult> {
  const check = async () => doctorTable(await HudiTable.open(storage), options);
  const before = await check();
  const applied: AppliedRepair[] = [];
  let report = before;
  // One kind at a time, the table checked again after each: a healed write can free the cleaner and the archiver
  // (the archiver never passes a pending instant), and a clean moves the archiver's bound.
  for (const kind of KINDS) {
    const fixes = safeRepairsOf(report).filter((fix) => fix.kind === kind);
    for (const fix of fixes) {
      try {
        const table = await HudiTable.open(storage, { mode: MODES[fix.kind] });
        applied.push({ fix, outcome: 'applied', detail: await applyRepair(table, fix, options) });
      } catch (error) {
        if (!(error instanceof HudiError)) throw error;
        applied.push({ fix, outcome: 'refused', detail: error.message });
      }
      options.onProgress?.(`${describeRepair(fix)}: ${applied.at(-1)!.outcome}, ${applied.at(-1)!.detail}`);
    }
    if (fixes.length > 0) report = await check();
  }
  return { before, applied, after: report };
}

export function describeRepair(fix: SafeRepair): string {
  return fix.kind === 'rollback' ? `rollback ${fix.instant}` : fix.kind;
}

async function applyRepair(table: HudiTable, fix: SafeRepair, options: DoctorFixOptions): Promise<string> {
  const { properties, location } = jobProperties(table, options);
  const now = options.now === undefined ? {} : { now: options.now };
  switch (fix.kind) {
    case 'rollback': {
      const result = await rollbackInstant(table, fix.instant, { lock: options.lock, ...now });
      return `${result.outcome} as ${result.rollbackInstantTime}`;
    }
    case 'clean': {
      const result = await runClean(table, { config: cleanConfigFromProperties(properties, location), lock: options.lock, properties, ...now });
      const deleted = [...result.resumed, ...(result.clean === undefined ? [] : [result.clean])].reduce(
        (sum, clean) => sum + clean.metadata.totalFilesDeleted,
        0,
      );
      return `${result.outcome}, ${deleted} file(s) deleted`;
    }
    case 'archive': {
      const result = await runArchive(table, {
        config: archivalConfigFromProperties(properties, location),
        cleanConfig: cleanConfigFromProperties(properties, location),
        lock: options.lock,
        properties,
      });
      return `${result.outcome}, ${result.archivedFiles.length} timeline file(s) archived`;
    }
  }
}

/** The report before, each repair and its outcome, the report after. */
export function formatDoctorFix(result: DoctorFixResult): string {
  const lines = [formatDoctorReport(result.before).trimEnd()];
  lines.push(result.applied.length === 0 ? 'no safe repair to apply' : 'repairs:');
  for (const repair of result.applied) lines.push(`  ${repair.outcome.padEnd(7)}  ${describeRepair(repair.fix)}: ${repair.detail}`);
  lines.push('after:', formatDoctorReport(result.after).trimEnd());
  return `${lines.join('\n')}\n`;
}
