/**
 * The active timeline: every instant file in `.hoodie/` (HoodieActiveTimeline), with the filters readers and writers need.
 */
import { HudiError, UnsupportedTableError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { fileNameOf } from '../util/paths.js';
import { type CommitMetadata, parseCommitMetadata } from './commit-metadata.js';
import { compareInstants, compareInstantTimes, type Instant, type InstantAction, instantFileName, parseInstantFileName } from './instant.js';
import { METAFOLDER } from './meta-folder.js';

/** Actions whose completed instants produce or replace base files on a COW table. */
export const WRITE_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'replacecommit']);

export class Timeline {
  /** Every instant, sorted by time then state; one entry per instant time and action (its furthest state). */
  readonly instants: readonly Instant[];

  constructor(instants: Iterable<Instant>) {
    // Keep only the furthest state of each (time, action): a completed commit also has its requested/inflight files.
    // A compaction completes as a commit, a log compaction as a deltacommit: the same instant, as Hudi's
    // TimelineLayoutV1 compares them (HoodieInstant.getComparableAction).
    const latest = new Map<string, Instant>();
    for (const instant of instants) {
      const action = instant.action === 'compaction' ? 'commit' : instant.action === 'logcompaction' ? 'deltacommit' : instant.action;
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
    return new Timeline(this.instants.filter((i) => compareInstantTimes(i.time, time) <= 0));
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
    const writes = (this.byTime().get(time) ?? []).filter((i) => WRITE_ACTIONS.has(i.action));
    if (writes.some((i) => i.state === 'COMPLETED')) return true;
    if (writes.length > 0) return false;
    const first = this.instants.find((i) => WRITE_ACTIONS.has(i.action));
    return first !== undefined && compareInstantTimes(time, first.time) < 0;
  }

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

/** List `.hoodie/` and build the active timeline. */
/**
 * The instant files among a timeline folder's file names, and the names that look like instant files (they start
 * with a digit) but do not parse: a time outside Hudi's grammar, an action or state this build does not know.
 */
export function parseTimelineNames(names: Iterable<string>): { instants: Instant[]; unreadable: string[] } {
  const instants: Instant[] = [];
  const unreadable: string[] = [];
  for (const name of names) {
    const instant = parseInstantFileName(name);
    if (instant !== undefined) instants.push(instant);
    else if (/^[0-9]/.test(name)) unreadable.push(name);
  }
  return { instants: instants.sort(compareInstants), unreadable: unreadable.sort() };
}

/** The active timeline. An instant-like file that does not parse is refused: an instant we cannot see is unknown. */
export async function loadTimeline(storage: Storage): Promise<Timeline> {
  const { files } = await storage.listDir(METAFOLDER);
  const { instants, unreadable } = parseTimelineNames(files.map((file) => fileNameOf(file.path)));
  if (unreadable.length > 0) {
    throw new UnsupportedTableError(
      `${unreadable.join(', ')} ${unreadable.length === 1 ? 'looks' : 'look'} like an instant file but is not one this build knows (Hudi's instant-time grammar, an action and state of table version 6)`,
      {
        location: storage.uriOf(`${METAFOLDER}/${unreadable[0]}`),
        fix: "move a file that is not Hudi's out of .hoodie/; one a newer Hudi wrote needs that Hudi",
      },
    );
  }
  return new Timeline(instants);
}

export function instantPath(instant: Instant): string {
  return `${METAFOLDER}/${instantFileName(instant)}`;
}

/** Read a completed commit or replacecommit's metadata. */
export async function readCommitMetadata(storage: Storage, instant: Instant): Promise<CommitMetadata> {
  if (instant.state !== 'COMPLETED' || !WRITE_ACTIONS.has(instant.action)) {
    throw new HudiError(`instant ${instant.time} (${instant.action}, ${instant.state}) has no commit metadata to read`);
  }
  const path = instantPath(instant);
  const bytes = await storage.get(path);
  return parseCommitMetadata(Buffer.from(bytes).toString('utf8'), storage.uriOf(path));
}
