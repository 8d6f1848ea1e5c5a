/**
 * Instants: one action at one time, in one state. Named after Hudi's HoodieInstant.
 * The file names here are timeline layout 1's (table versions 5 and 6: flat in `.hoodie/`); layout 2's (Hudi 1.x) are
 * in layout.ts, which picks one or the other for a table.
 */
export type InstantState = 'REQUESTED' | 'INFLIGHT' | 'COMPLETED';
export type InstantAction =
  | 'commit'
  | 'deltacommit'
  | 'replacecommit'
  | 'clean'
  | 'rollback'
  | 'compaction'
  | 'savepoint'
  | 'restore'
  | 'indexing'
  | 'logcompaction'
  /** Timeline layout 2 only: a pending clustering (completes as a replacecommit). */
  | 'clustering'
  /** Timeline layout 2 only (HoodieTimeline.SCHEMA_COMMIT_ACTION). */
  | 'schemacommit';

export interface Instant {
  /** An instant time: see INSTANT_TIME_PATTERN. */
  readonly time: string;
  readonly action: InstantAction;
  readonly state: InstantState;
  /**
   * Timeline layout 2 (Hudi 1.x): when a completed instant completed, from its file name `<time>_<completion>.<action>`
   * (a legacy name without one: the file's modification time, as Hudi takes it). Absent in layout 1 and while pending.
   */
  readonly completionTime?: string;
  /** Timeline layout 2: a completed instant named the 0.x way (`<time>.<action>`), whose metadata is 0.x JSON. */
  readonly legacy?: boolean;
}

/** Every action Hudi 0.14/0.15 writes into a timeline (the data table's and the metadata table's). */
export const INSTANT_ACTIONS: readonly InstantAction[] = [
  'commit',
  'deltacommit',
  'replacecommit',
  'clean',
  'rollback',
  'compaction',
  'savepoint',
  'restore',
  'indexing',
  'logcompaction',
];
/**
 * Hudi's instant-time grammar, the one definition every parser builds on: yyyyMMddHHmmss[SSS] (17 digits, or 14 for
 * legacy second-granularity times) followed by any number of 3-digit suffixes. The metadata table appends suffixes
 * to other instants for its own operations (HoodieTableMetadataUtil: `010`+ partition initialization, `001`
 * compaction, `002` clean, …) and again to those: a compaction after an initialization is `<T>011001`. A source
 * fragment, to compose into file-name patterns; see isValidInstantTime for whole strings.
 */
export const INSTANT_TIME_PATTERN = '\\d{14}(?:\\d{3})*';
const INSTANT_TIME = new RegExp(`^${INSTANT_TIME_PATTERN}$`);
/** HoodieInstantTimeGenerator.MILLIS_INSTANT_ID_LENGTH: a time without suffixes, to the millisecond. */
export const MILLIS_INSTANT_ID_LENGTH = 17;

/** Parse a file name in `.hoodie/`; undefined when it is not an instant file (hoodie.properties, folders, .crc …). */
export function parseInstantFileName(fileName: string): Instant | undefined {
  const dot = fileName.indexOf('.');
  if (dot < 0) return undefined;
  const time = fileName.slice(0, dot);
  if (!INSTANT_TIME.test(time)) return undefined;
  const suffix = fileName.slice(dot + 1);
  // A COW commit's inflight file is plain `T.inflight` (no action), as Hudi writes it.
  if (suffix === 'inflight') return { time, action: 'commit', state: 'INFLIGHT' };
  const [action, state, extra] = suffix.split('.');
  if (extra !== undefined || !INSTANT_ACTIONS.includes(action as InstantAction)) return undefined;
  if (state === undefined) {
    // Compaction and log compaction complete as a commit / deltacommit; a bare `T.compaction` does not exist.
    if (action === 'compaction' || action === 'logcompaction') return undefined;
    return { time, action: action as InstantAction, state: 'COMPLETED' };
  }
  if (state === 'requested') return { time, action: action as InstantAction, state: 'REQUESTED' };
  if (state === 'inflight') return { time, action: action as InstantAction, state: 'INFLIGHT' };
  return undefined;
}

/** The file name Hudi uses for this instant. */
export function instantFileName(instant: Instant): string {
  const { time, action, state } = instant;
  if (state === 'COMPLETED') return `${time}.${action}`;
  if (state === 'REQUESTED') return `${time}.${action}.requested`;
  return action === 'commit' ? `${time}.inflight` : `${time}.${action}.inflight`;
}

export function instantKey(instant: Instant): string {
  return `${instant.time}__${instant.action}__${instant.state}`;
}

/** Whether `time` is an instant time in Hudi's grammar (INSTANT_TIME_PATTERN), suffixed ones included. */
export function isValidInstantTime(time: string): boolean {
  return INSTANT_TIME.test(time);
}

/** Instants sort by time, then by state (requested < inflight < completed), as Hudi's comparator. */
const STATE_ORDER: Record<InstantState, number> = { REQUESTED: 0, INFLIGHT: 1, COMPLETED: 2 };
export function compareInstants(a: Instant, b: Instant): number {
  if (a.time !== b.time) return compareInstantTimes(a.time, b.time);
  return STATE_ORDER[a.state] - STATE_ORDER[b.state];
}

/** 14-digit legacy times compare as if padded with 000 milliseconds. */
export function compareInstantTimes(a: string, b: string): number {
  const pa = a.length === 14 ? `${a}000` : a;
  const pb = b.length === 14 ? `${b}000` : b;
  return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/**
 * hoodie.table.timeline.timezone (HoodieTimelineTimeZone): the clock instant times are written in. LOCAL is the
 * process's zone, as Java's ZoneId.systemDefault() (the TZ environment variable, else the system's; UTC on Lambda).
 */
export type TimelineTimeZone = 'UTC' | 'LOCAL';
export const TIMELINE_TIME_ZONES: readonly TimelineTimeZone[] = ['UTC', 'LOCAL'];

/** Format a Date as a 17-digit instant time (yyyyMMddHHmmssSSS) in the timeline's zone. */
export function formatInstantTime(date: Date, zone: TimelineTimeZone = 'UTC'): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  if (zone === 'LOCAL') {
    return `${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}${pad(date.getMilliseconds(), 3)}`;
  }
  return `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}${pad(date.getUTCMilliseconds(), 3)}`;
}

/**
 * A new instant time strictly greater than every time already on the timeline, on the timeline's clock (`zone`, the
 * table's hoodie.table.timeline.timezone). Callers generate it under the table lock, so two writers cannot pick the
 * same one.
 */
export function newInstantTime(existingTimes: Iterable<string>, now: Date, zone: TimelineTimeZone): string {
  let candidate = formatInstantTime(now, zone);
  let latest: string | undefined;
  for (const time of existingTimes) {
    if (latest === undefined || compareInstantTimes(time, latest) > 0) latest = time;
  }
  if (latest !== undefined && compareInstantTimes(candidate, latest) <= 0) {
    const base = latest.length === 14 ? `${latest}000` : latest;
    candidate = (BigInt(base) + 1n).toString();
    // A carry can produce an invalid clock value (e.g. ...999 → ...1000 ms); fall forward to the next real
    // millisecond. Wall-clock arithmetic, so done in UTC whatever the zone (UTC has no gaps).
    if (parseInstantTime(candidate, 'UTC') === undefined) candidate = formatInstantTime(new Date(parseInstantTime(base, 'UTC')!.getTime() + 1), 'UTC');
  }
  return candidate;
}

/**
 * The moment an instant time names on the timeline's clock; undefined when it is not a valid time there. A suffixed
 * time names the moment of its first 17 digits, as HoodieInstantTimeGenerator.parseDateFromInstantTime trims it.
 */
export function parseInstantTime(time: string, zone: TimelineTimeZone = 'UTC'): Date | undefined {
  if (!INSTANT_TIME.test(time)) return undefined;
  const t = time.length === 14 ? `${time}000` : time.slice(0, MILLIS_INSTANT_ID_LENGTH);
  const [y, mo, d, h, mi, s, ms] = [t.slice(0, 4), t.slice(4, 6), t.slice(6, 8), t.slice(8, 10), t.slice(10, 12), t.slice(12, 14), t.slice(14, 17)].map(
    Number,
  ) as [number, number, number, number, number, number, number];
  const date = zone === 'LOCAL' ? new Date(y, mo - 1, d, h, mi, s, ms) : new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms));
  if (formatInstantTime(date, zone) !== t) return undefined;
  return date;
}
