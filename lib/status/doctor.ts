/**
 * `hudi-serverless doctor <table>`, the check a user runs when something looks wrong: the files the timeline names
 * exist, the metadata table agrees with storage (and its record index with the data), pending instants and whether
 * their writers are alive (failed writes to heal, abandoned plans), files past the cleaner's retention, a timeline
 * past the archiver's bounds, and the small-file share per partition. Each finding has a severity and names its
 * repair; the safe repairs carry a `fix` that `doctor --fix` applies (fix.ts). It reads only. On Hudi 1.x tables
 * the same checks run on the 1.x timeline and metadata table; what is not compared there is an info finding.
 */
import { planArchiveNow } from '../archival/archive.js';
import { archivalConfigFromProperties } from '../archival/config.js';
import { cleanConfigFromProperties } from '../cleaner/config.js';
import { planClean } from '../cleaning/schedule.js';
import { HudiError, MissingFileError } from '../errors.js';
import { checkMetadataTable, type IndexMismatch, type RecordIndexMismatch, type RecordLocation } from '../metadata/check.js';
import { pendingWriterAlive } from '../rollback/rollback.js';
import type { HudiTable } from '../table/table.js';
import { parseInstantTime } from '../timeline/instant.js';
import { tableStatus } from './status.js';

export type Severity = 'info' | 'warning' | 'error';

/** Every check doctor makes, the `check` of its findings (and a metric dimension of the scheduled doctor). */
export const DOCTOR_CHECKS = ['missing-files', 'metadata-table', 'record-index', 'pending-instant', 'retention', 'archival', 'small-files'] as const;
export type DoctorCheck = (typeof DOCTOR_CHECKS)[number];
export const SEVERITIES: readonly Severity[] = ['info', 'warning', 'error'];

export interface Finding {
  readonly severity: Severity;
  /** Which check found it. */
  readonly check: DoctorCheck;
  /** What it is about: a file, an instant, a partition. */
  readonly subject: string;
  readonly finding: string;
  /** What to do about it (undefined for an info that needs nothing). */
  readonly repair: string | undefined;
  /** The repair `doctor --fix` may apply: one that only does what the service would do on its own. */
  readonly fix?: SafeRepair;
}

/** Heal a failed write (its writer gone), clean past retention, archive past the bounds. */
export type SafeRepair = { readonly kind: 'rollback'; readonly instant: string } | { readonly kind: 'clean' } | { readonly kind: 'archive' };

export interface DoctorReport {
  readonly path: string;
  readonly findings: readonly Finding[];
  /** The worst severity found; 'info' when the table is healthy. */
  readonly worst: Severity;
}

export interface DoctorOptions {
  readonly now?: Date;
  /** A pending plan (clustering, compaction) older than this is reported as abandoned. */
  readonly abandonedPlanMs?: number;
  /** Partitions where small files are more than this share of the files (and at least two) are reported. */
  readonly smallFileShare?: number;
  /** The job's Hudi properties over hoodie.properties (the cleaner's and archiver's keys), as `clean` takes them. */
  readonly properties?: ReadonlyMap<string, string>;
  /** Where the properties came from, for the refusal of a bad value. */
  readonly propertiesLocation?: string;
}

const DAY_MS = 86_400_000;
const cli = 'hudi-serverless';
/** Pending actions a rollback undoes when their writer is gone (a failed write, clustering or compaction). */
const WRITE_ACTIONS: ReadonlySet<string> = new Set(['commit', 'deltacommit', 'replacecommit', 'clustering', 'compaction']);
/** Plans a service executes later: clustering (`replacecommit` before table version 8, `clustering` from it) and compaction. */
const PLAN_ACTIONS: ReadonlySet<string> = new Set(['replacecommit', 'clustering', 'compaction']);
const RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

/** Exit status by the worst finding: 0 healthy, 3 warnings, 4 errors (1 and 2 stay the CLI's failure and usage). */
export function doctorExitCode(report: DoctorReport): number {
  return report.worst === 'error' ? 4 : report.worst === 'warning' ? 3 : 0;
}

export async function doctorTable(table: HudiTable, options: DoctorOptions = {}): Promise<DoctorReport> {
  const now = options.now ?? new Date();
  const findings: Finding[] = [];
  const path = table.storage.uri;

  let status: Awaited<ReturnType<typeof tableStatus>> | undefined;
  try {
    status = await tableStatus(table, { now });
  } catch (error) {
    if (!(error instanceof MissingFileError)) throw error;
    for (const file of error.missing) {
      findings.push({
        severity: 'error',
        check: 'missing-files',
        subject: file.path,
        finding: `the latest file of its file group, written by instant ${file.instantTime}, is missing from storage`,
        repair: `restore the file (a backup or an object version), or roll the table back to before ${file.instantTime} with Hudi (CALL rollback_to_instant)`,
      });
    }
  }

  const metadata = await checkMetadataTable(table.storage).catch((error: unknown) => {
    if (error instanceof HudiError) {
      findings.push({
        severity: 'error',
        check: 'metadata-table',
        subject: '.hoodie/metadata',
        finding: error.message,
        repair: `${cli} metadata ${path} drop`,
      });
      return undefined;
    }
    throw error;
  });
  if (metadata !== undefined) {
    const repair = `${cli} metadata ${path} drop (the next Hudi write rebuilds it)`;
    for (const file of metadata.missingFromStorage)
      findings.push({ severity: 'error', check: 'metadata-table', subject: file, finding: 'the metadata table lists it; storage lacks it', repair });
    for (const file of metadata.missingFromMetadata)
      findings.push({ severity: 'error', check: 'metadata-table', subject: file, finding: 'a committed data file the metadata table does not list', repair });
    for (const log of metadata.stranded) {
      findings.push({
        severity: 'error',
        check: 'metadata-table',
        subject: log.path,
        finding: `log blocks of instant(s) ${log.instants.join(', ')} written onto a superseded slice (the latest begins at ${log.latestBaseInstant})`,
        repair,
      });
    }
    const byFile = new Map<string, IndexMismatch[]>();
    for (const m of metadata.indexMismatches) {
      const key = JSON.stringify([m.partition, m.path]);
      (byFile.get(key) ?? byFile.set(key, []).get(key)!).push(m);
    }
    for (const [key, mismatches] of byFile) {
      const [partition, subject] = JSON.parse(key) as [string, string];
      const what = mismatches.map((m) =>
        m.field === 'missing'
          ? 'no record for the file'
          : `${m.column === undefined ? '' : `${m.column}.`}${m.field}: ${m.inMetadata} in the metadata table, ${m.inFile} in the file`,
      );
      const against = partition === 'partition_stats' ? "the range of the partition's latest files" : "the file's footer";
      findings.push({
        severity: 'error',
        check: 'metadata-table',
        subject,
        finding: `${partition} disagrees with ${against}: ${what.slice(0, 3).join('; ')}${what.length > 3 ? `; and ${what.length - 3} more` : ''}`,
        repair,
      });
    }
    findings.push(...recordIndexFindings(metadata.recordIndexMismatches, path));
    for (const problem of metadata.problems)
      findings.push({ severity: 'warning', check: 'metadata-table', subject: '.hoodie/metadata', finding: problem, repair });
    for (const what of metadata.skipped)
      findings.push({ severity: 'info', check: 'metadata-table', subject: '.hoodie/metadata', finding: `not checked: ${what}`, repair: undefined });
  }

  const abandonedMs = options.abandonedPlanMs ?? DAY_MS;
  for (const instant of table.timeline.pending()) {
    const subject = `${instant.time}.${instant.action}.${instant.state.toLowerCase()}`;
    const plan = instant.state === 'REQUESTED' && PLAN_ACTIONS.has(instant.action);
    if (plan) {
      const started = parseInstantTime(instant.time, table.config.timelineTimeZone)?.getTime();
      const old = started !== undefined && now.getTime() - started > abandonedMs;
      const run = instant.action === 'compaction' ? 'compact' : 'cluster';
      findings.push({
        severity: old ? 'warning' : 'info',
        check: 'pending-instant',
        subject,
        finding: old
          ? `a ${instant.action} plan requested more than ${Math.round(abandonedMs / 3_600_000)} h ago and never executed`
          : `a ${instant.action} plan waiting to run`,
        repair: old ? `${cli} ${run} ${path} --mode execute --instant ${instant.time}, or ${cli} rollback ${path} ${instant.time}` : undefined,
      });
      continue;
    }
    if (instant.action === 'clean') {
      findings.push({
        severity: 'info',
        check: 'pending-instant',
        subject,
        finding: 'a clean not finished',
        repair: `${cli} clean ${path} (finishes it first)`,
        fix: { kind: 'clean' },
      });
      continue;
    }
    if (!WRITE_ACTIONS.has(instant.action)) {
      findings.push({ severity: 'info', check: 'pending-instant', subject, finding: `a pending ${instant.action}`, repair: undefined });
      continue;
    }
    const alive = await pendingWriterAlive(table.storage, instant.time, table.config.timelineTimeZone, { now });
    findings.push(
      alive === undefined
        ? {
            severity: 'warning',
            check: 'pending-instant',
            subject,
            finding: 'a failed write: no live writer (no heartbeat within the expiry)',
            repair: `${cli} rollback ${path} ${instant.time} (the next write heals it too with hoodie.cleaner.policy.failed.writes=EAGER)`,
            fix: { kind: 'rollback', instant: instant.time },
          }
        : { severity: 'info', check: 'pending-instant', subject, finding: `in progress: ${alive}`, repair: undefined },
    );
  }

  findings.push(...(await retentionFindings(table, options, now)));

  const share = options.smallFileShare ?? 0.5;
  for (const partition of status?.partitions ?? []) {
    if (partition.smallFiles < 2 || partition.smallFiles / partition.files <= share) continue;
    findings.push({
      severity: 'warning',
      check: 'small-files',
      subject: partition.partition || '(non-partitioned)',
      finding: `${partition.smallFiles} of ${partition.files} base files are smaller than ${status!.smallFileLimit} bytes (hoodie.parquet.small.file.limit)`,
      repair: `${cli} cluster ${path} --mode scheduleAndExecute`,
    });
  }

  const worst = findings.reduce<Severity>((max, f) => (RANK[f.severity] > RANK[max] ? f.severity : max), 'info');
  return { path, findings, worst };
}

/** How many findings of each severity and of each check a report has (zeros included). */
export function countFindings(report: Pick<DoctorReport, 'findings'>): { bySeverity: Record<Severity, number>; byCheck: Record<DoctorCheck, number> } {
  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
  const byCheck = Object.fromEntries(DOCTOR_CHECKS.map((c) => [c, 0])) as Record<DoctorCheck, number>;
  for (const finding of report.findings) {
    bySeverity[finding.severity] += 1;
    byCheck[finding.check] += 1;
  }
  return { bySeverity, byCheck };
}

/**
 * The record index against the data: one error per kind of disagreement, naming a few keys. The repair drops only
 * that partition, as a write with hoodie.metadata.record.index.enable=false does; Hudi's next write with the record
 * index on builds it again from the data.
 */
function recordIndexFindings(mismatches: readonly RecordIndexMismatch[], path: string): Finding[] {
  const at = (location: RecordLocation | undefined) => (location === undefined ? '?' : `${location.partitionPath || '(non-partitioned)'}/${location.fileId}`);
  const what: Record<RecordIndexMismatch['kind'], { text: string; show: (m: RecordIndexMismatch) => string }> = {
    missing: { text: 'live record(s) the record index lacks', show: (m) => `${m.recordKey} (in ${at(m.inData)})` },
    deleted: { text: 'key(s) of no live record still in the record index', show: (m) => `${m.recordKey} (indexed at ${at(m.inIndex)})` },
    location: {
      text: 'key(s) indexed at another file group than the one holding the record',
      show: (m) => `${m.recordKey} (indexed at ${at(m.inIndex)}, held by ${at(m.inData)})`,
    },
  };
  const findings: Finding[] = [];
  for (const kind of ['missing', 'deleted', 'location'] as const) {
    const of = mismatches.filter((m) => m.kind === kind);
    if (of.length === 0) continue;
    const shown = of.slice(0, 3).map(what[kind].show);
    findings.push({
      severity: 'error',
      check: 'record-index',
      subject: '.hoodie/metadata/record_index',
      finding: `${of.length} ${what[kind].text}: ${shown.join(', ')}${of.length > 3 ? `, and ${of.length - 3} more` : ''}`,
      repair: `drop the record index: a write with hoodie.metadata.record.index.enable=false removes only that partition (or ${cli} metadata ${path} drop, the whole metadata table); Hudi's next write with the record index on rebuilds it from the data`,
    });
  }
  return findings;
}

/** The job's properties over hoodie.properties, as a Hudi writer's options win, and where a bad value came from. */
export function jobProperties(table: HudiTable, options: Pick<DoctorOptions, 'properties' | 'propertiesLocation'>) {
  return {
    properties: new Map([...table.config.properties, ...(options.properties ?? [])]),
    location: options.propertiesLocation ?? table.storage.uriOf('.hoodie/hoodie.properties'),
  };
}

/**
 * Files past the cleaner's retention (what `clean` would delete now) and completed instants past the archiver's
 * bounds (what `archive` would move now), under the job's keys. A pending clean is reported above and finished by
 * the next clean first, so the cleaner is not planned beside it.
 */
async function retentionFindings(table: HudiTable, options: DoctorOptions, now: Date): Promise<Finding[]> {
  const path = table.storage.uri;
  const { properties, location } = jobProperties(table, options);
  const cleanConfig = cleanConfigFromProperties(properties, location);
  const findings: Finding[] = [];
  if (!table.timeline.pending().some((instant) => instant.action === 'clean')) {
    const planning = await planClean(table, cleanConfig, { now });
    const files = planning.partitions.reduce((sum, partition) => sum + partition.deletes.length, 0);
    if (files > 0) {
      const due = planning.due.due;
      findings.push({
        severity: due ? 'warning' : 'info',
        check: 'retention',
        subject: `${planning.partitions.length} partition(s)`,
        finding: `${files} file(s) are past retention (${cleanConfig.policy}, earliest commit to retain ${planning.retention.instant?.time ?? 'none'})${due ? '' : `; no clean is due yet (${planning.due.reason})`}`,
        repair: due ? `${cli} clean ${path}` : undefined,
        ...(due ? { fix: { kind: 'clean' } as const } : {}),
      });
    }
  }
  const archive = await planArchiveNow(table, archivalConfigFromProperties(properties, location), cleanConfig);
  if (archive.instants.length > 0) {
    findings.push({
      severity: 'warning',
      check: 'archival',
      subject: '.hoodie',
      finding: `${archive.instants.length} instant(s) are past the archival bounds (${archive.completedCommits} completed commits active; hoodie.keep.max.commits ${archive.maxToKeep})`,
      repair: `${cli} archive ${path}`,
      fix: { kind: 'archive' },
    });
  }
  return findings;
}

export function formatDoctorReport(report: DoctorReport): string {
  const warnings = report.findings.filter((f) => f.severity === 'warning').length;
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  const lines = [`${report.path}: ${errors} error(s), ${warnings} warning(s)${report.findings.length === 0 ? ', nothing found' : ''}`];
  for (const f of report.findings) {
    lines.push(`  ${f.severity.padEnd(7)}  ${f.check.padEnd(15)}  ${f.subject}: ${f.finding}`);
    if (f.repair !== undefined) lines.push(`  ${''.padEnd(7)}  ${''.padEnd(15)}  repair: ${f.repair}`);
  }
  return `${lines.join('\n')}\n`;
}
