/**
 * When instants completed (timeline layout 2, Hudi 1.x's CompletionTimeQueryViewV2): what file slicing by completion
 * time asks. Completed instants of the active timeline carry their completion time in their file names; older ones
 * are in the LSM history (`.hoodie/<timeline>/<history>/`): the table reads it (timeline/history/) and hands
 * them over as ArchivedCompletionTimes.
 */
import { UnsupportedTableError } from '../errors.js';
import { compareInstantTimes } from './instant.js';
import type { Timeline } from './timeline.js';
import { WRITE_ACTIONS } from './timeline.js';

/** Completion times of archived instants (the LSM history), by requested time. */
export interface ArchivedCompletionTimes {
  completionTime(requestedTime: string): string | undefined;
}

/** The rest of getWriteTimeline's actions: pending compactions and clusterings. */
const PENDING_WRITE_ACTIONS: ReadonlySet<string> = new Set(['compaction', 'logcompaction', 'clustering']);

export class CompletionTimes {
  private readonly active: ReadonlyMap<string, string>;
  /** CompletionTimeQueryViewV2.cursorInstant: instants before it are looked up in the archive. */
  private readonly cursor: string | undefined;
  /** The first write on the timeline (getFirstNonSavepointCommit): anything before it completed (isArchived). */
  private readonly firstWrite: string | undefined;

  constructor(
    timeline: Timeline,
    private readonly archived: ArchivedCompletionTimes | undefined,
    private readonly historyLocation: string,
  ) {
    const active = new Map<string, string>();
    // setCompletionTime: putIfAbsent, from every completed instant of the active timeline.
    for (const instant of timeline.completed()) if (!active.has(instant.time)) active.set(instant.time, instant.completionTime ?? instant.time);
    this.active = active;
    this.cursor = timeline.instants[0]?.time;
    this.firstWrite = timeline.instants.find((instant) => WRITE_ACTIONS.has(instant.action) || PENDING_WRITE_ACTIONS.has(instant.action))?.time;
  }

  /** CompletionTimeQueryViewV2.getCompletionTime(instantTime): undefined while the instant is pending. */
  completionTime(instantTime: string): string | undefined {
    const found = this.active.get(instantTime);
    if (found !== undefined) return found;
    if (this.cursor === undefined || compareInstantTimes(instantTime, this.cursor) >= 0) return undefined;
    if (this.archived === undefined) {
      throw new UnsupportedTableError(
        `instant ${instantTime} is older than the active timeline, and its completion time is in the LSM history, which this build does not read yet`,
        {
          location: this.historyLocation,
          fix: 'compact or cluster the file group with Hudi so its files are newer than the archived instants, or read the table with Hudi',
        },
      );
    }
    return this.archived.completionTime(instantTime);
  }

  /** getCompletionTime(baseInstant, instantTime): a completion time of another length than the base instant stands for the instant itself. */
  completionTimeFor(baseInstant: string, instantTime: string): string | undefined {
    const completion = this.completionTime(instantTime);
    return completion !== undefined && completion.length !== baseInstant.length ? instantTime : completion;
  }

  /** isCompleted: a completion time is known, or the instant is before the first write on the timeline. */
  isCompleted(instantTime: string): boolean {
    if (this.active.has(instantTime)) return true;
    return this.firstWrite !== undefined && compareInstantTimes(instantTime, this.firstWrite) < 0;
  }
}
