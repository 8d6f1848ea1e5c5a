/**
 * The active timeline: every instant file of the table's timeline folder (HoodieActiveTimeline), with the filters
 * readers and writers need. Where the folder is and how its files are named is the table's layout (layout.ts).
 */
import { HudiError, UnsupportedTableError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { fileNameOf } from '../util/paths.js';
import type { CommitMetadata } from './commit-metadata.js';
import { compareInstants, compareInstantTimes, type Instant, type InstantAction } from './instant.js';
import { TIMELINE_LAYOUT_1, type TimelineFile, type TimelineLayout } from './layout.js';

const COMPARABLE_ACTIONS: Partial<Record<InstantAction, InstantAction>> = { compaction: 'commit', logcompaction: 'deltacommit', clustering: 'replacecommit' };

/** Actions whose completed instants produce or replace base files on a COW table. */
export const WRITE_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'replacecommit']);

export class Timeline {
  /** Every instant, sorted by time then state; one entry per instant time and action (its furthest state). */
  readonly instants: readonly Instant[];

  constructor(
    instants: Iterable<Instant>,
    /**
     * Where the instants' files are and how they are named. Layout 1 by default for instant lists without a table
     * behind them (the cleaner's shares): files are always located through a layout loadTimeline gave.
     */
    readonly layout: TimelineLayout = TIMELINE_LAYOUT_1,
  ) {
    // Keep only the furthest state of each (time, action): a completed commit also has its requested/inflight files.
    // A compaction completes as a commit, a log compaction as a deltacommit, a (layout 2) clustering as a
    // replacecommit: the same instant, as Hudi compares them (InstantComparatorV1/V2.getComparableAction).
    const latest = new Map<string, Instant>();
    for (const instant of instants) {
      const action = COMPARABLE_ACTIONS[instant.action] ?? instant.action;
      const key = `${instant.time}.${action}`;
      const seen = latest.get(key);
      if (seen === undefined || compareInstants(instant, seen) > 0) latest.set(key, instant);
    }
    this.instants = [...latest.values()].sort((a, b) => compareInstants(a, b) || a.action.localeCompare(b.action));
  }

  completed(): Instant[] {
    return this.instants.filter((i) => i.state === 'COMPLETED');
  }

  pending(): Instant[] {
    return this.instants.filter((i) => i.state !== 'COMPLETED');
  }

  /** Completed commits / replacecommits (the "commits timeline" readers use). */
  completedWrites(): Instant[] {
    return this.instants.filter((i) => i.state === 'COMPLETED' && WRITE_ACTIONS.has(i.action));
  }

  lastCompletedWrite(): Instant | undefined {
    return this.completedWrites().at(-1);
  }

  /** The view as of an instant time: instants at or before it. */
  asOf(time: string): Timeline {
    return new Timeline(
      this.instants.filter((i) => compareInstantTimes(i.time, time) <= 0),
      this.layout,
    );
  }

  has(time: string, action?: InstantAction): boolean {
    const instants = this.byTime().get(time);
    return instants !== undefined && (action === undefined || instants.some((i) => i.action === action));
  }

  find(time: string): Instant | undefined {
    return this.byTime().get(time)?.[0];
  }

  /**
   * Whether base files written at `time` are committed: the instant completed a write, or it is older than the
   * first instant on the active timeline (archived instants were completed), as Hudi's containsOrBeforeTimelineStarts.
   */
  isCommitted(time: string): boolean {
    // Asked once per listed file (millions on a large table), for a few thousand distinct times at most.
    this.committedByTime ??= new Map();
    let committed = this.committedByTime.get(time);
    if (committed === undefined) {
      const writes = (this.byTime().get(time) ?? []).filter((i) => WRITE_ACTIONS.has(i.action));
      if (writes.some((i) => i.state === 'COMPLETED')) committed = true;
      else if (writes.length > 0) committed = false;
      else {
        const first = this.instants.find((i) => WRITE_ACTIONS.has(i.action));
        committed = first !== undefined && compareInstantTimes(time, first.time) < 0;
      }
      this.committedByTime.set(time, committed);
    }
    return committed;
  }

  /** isCommitted's answers so far (the timeline never changes). */
  private committedByTime: Map<string, boolean> | undefined;

  /** Instants by time, in timeline order, built on first use: the file system view asks once per base file. */
  private indexByTime: Map<string, Instant[]> | undefined;

  private byTime(): Map<string, Instant[]> {
    if (this.indexByTime === undefined) {
      this.indexByTime = new Map();
      for (const instant of this.instants) {
        const same = this.indexByTime.get(instant.time);
        if (same === undefined) this.indexByTime.set(instant.time, [instant]);
        else same.push(instant);
      }
    }
    return this.indexByTime;
  }

  allTimes(): string[] {
    return this.instants.map((i) => i.time);
  }
}

/**
 * The instant files among a timeline folder's files, and the names that look like instant files (they start with a
 * digit) but do not parse: a time outside Hudi's grammar, an action or state this build does not know.
 */
export function parseTimelineNames(files: Iterable<string | TimelineFile>, layout: TimelineLayout): { instants: Instant[]; unreadable: string[] } {
  const instants: Instant[] = [];
  const unreadable: string[] = [];
  for (const entry of files) {
    const file = typeof entry === 'string' ? { name: entry, modifiedMs: 0 } : entry;
    const instant = layout.parseFileName(file);
    if (instant !== undefined) instants.push(instant);
    else if (/^[0-9]/.test(file.name)) unreadable.push(file.name);
  }
  return { instants: instants.sort(compareInstants), unreadable: unreadable.sort() };
}

/** The active timeline. An instant-like file that does not parse is refused: an instant we cannot see is unknown. */
export async function loadTimeline(storage: Storage, layout: TimelineLayout): Promise<Timeline> {
  const { files } = await storage.listDir(layout.folder);
  const { instants, unreadable } = parseTimelineNames(
    files.map((file) => ({ name: fileNameOf(file.path), modifiedMs: file.modifiedMs })),
    layout,
  );
  if (unreadable.length > 0) {
    throw new UnsupportedTableError(
      `${unreadable.join(', ')} ${unreadable.length === 1 ? 'looks' : 'look'} like an instant file but is not one this build knows (Hudi's instant-time grammar, an action and state of timeline layout ${layout.version})`,
      {
        location: storage.uriOf(`${layout.folder}/${unreadable[0]}`),
        fix: `move a file that is not Hudi's out of ${layout.folder}/; one a newer Hudi wrote needs that Hudi`,
      },
    );
  }
  return new Timeline(instants, layout);
}

export function instantPath(instant: Instant, layout: TimelineLayout): string {
  return `${layout.folder}/${layout.fileName(instant)}`;
}

/** Read a completed commit, deltacommit or replacecommit's metadata, as the table's layout encodes it. */
export async function readCommitMetadata(storage: Storage, instant: Instant, layout: TimelineLayout): Promise<CommitMetadata> {
  if (instant.state !== 'COMPLETED' || !WRITE_ACTIONS.has(instant.action)) {
    throw new HudiError(`instant ${instant.time} (${instant.action}, ${instant.state}) has no commit metadata to read`);
  }
  const path = instantPath(instant, layout);
  return layout.decodeCommitMetadata(await storage.get(path), instant, storage.uriOf(path));
}
