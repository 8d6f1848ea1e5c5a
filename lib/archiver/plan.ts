/**
 * Which instants to archive, as a pure function of the active timeline and a few facts (Hudi 0.15's
 * HoodieTimelineArchiver.getInstantsToArchive with ArchivalUtils.getMinAndMaxInstantsToKeep and
 * ClusteringUtils.getOldestInstantToRetainForClustering), and why archiving stops where it does (ArchiveRule).
 * Commits are archived oldest first once more than keep.max.commits completed ones are active, down to
 * keep.min.commits, never past what planArchive lists; clean and rollback instants are archived per action, past
 * keep.max.commits, down to keep.min.commits.
 */
import type { CleanConfig } from '../cleaner/config.js';
import { commitsTimeline, earliestCommitToRetain } from '../cleaner/plan.js';
import { compareInstantTimes, type Instant, type InstantAction, parseInstantTime, type TimelineTimeZone } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';

/**
 * The archiver settings the rules read (lib/archival/config.ts reads them from Hudi's keys): keep.min/max commits,
 * hoodie.archive.beyond.savepoint, and merge-on-read's compaction trigger (strategy and max delta commits).
 */
export interface ArchiveRules {
  readonly minCommits: number;
  readonly maxCommits: number;
  readonly beyondSavepoint: boolean;
  readonly compactionTriggerStrategy: string;
  readonly compactionMaxDeltaCommits: number;
}

/** getWriteTimeline: what a pending instant blocks archival behind. */
const WRITE_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'replacecommit', 'compaction', 'logcompaction']);

export type ArchiveRule =
  | 'max-commits'
  | 'min-commits'
  | 'pending-instant'
  | 'savepoint'
  | 'clustering-not-cleaned'
  | 'metadata-table-compaction'
  | 'no-metadata-table-compaction'
  | 'compaction-trigger'
  | 'data-table-timeline';

/** An instant time from which on (inclusive) nothing is archived, and why. */
export interface ArchiveBound {
  readonly rule: ArchiveRule;
  readonly time: string;
  readonly detail: string;
}

export interface ArchiveFacts {
  readonly timeline: Timeline;
  /**
   * The last completed clean's earliest instant to retain (its plan's, else the clean's own time); undefined when
   * no clean completed on the active timeline.
   */
  readonly lastCleanRetainedFrom: string | undefined;
  /** Completed savepoints' times. */
  readonly savepointTimes: readonly string[];
  /** Undefined: the table has no metadata table; else its latest compaction (undefined when it has none yet). */
  readonly metadataTable: { readonly latestCompaction: string | undefined } | undefined;
  readonly timeZone: TimelineTimeZone;
  /** The table's type (default COPY_ON_WRITE): merge-on-read tables keep the delta commits compaction counts. */
  readonly tableType?: 'COPY_ON_WRITE' | 'MERGE_ON_READ';
}

export interface ArchivePlan {
  /** The instants to archive (one per time and action), oldest first. */
  readonly instants: readonly Instant[];
  /** keep.min / keep.max after ArchivalUtils' adjustment to the cleaner's retention. */
  readonly minToKeep: number;
  readonly maxToKeep: number;
  readonly adjustment: string | undefined;
  /** Completed commits on the active timeline. */
  readonly completedCommits: number;
  /** The bounds that held commits back, earliest first. */
  readonly bounds: readonly ArchiveBound[];
  /** Why each completed commit stays active: its time → the first rule that keeps it. */
  readonly keptCommits: readonly { readonly instant: Instant; readonly rule: ArchiveRule; readonly detail: string }[];
}

/**
 * ArchivalUtils.getMinAndMaxInstantsToKeep: never archive a commit the cleaner still retains — keep at least the
 * completed commits after its earliest commit to retain, plus two. The retention is measured from the latest
 * completed commit (for KEEP_LATEST_BY_HOURS), not from now.
 */
export function minAndMaxToKeep(
  timeline: Timeline,
  config: Pick<ArchiveRules, 'minCommits' | 'maxCommits'>,
  clean: Pick<CleanConfig, 'policy' | 'commitsRetained' | 'hoursRetained'>,
  zone: TimelineTimeZone,
): { min: number; max: number; adjustment: string | undefined } {
  const commits = commitsTimeline(timeline);
  return minAndMaxOfCommits(
    commits,
    commits.filter((instant) => instant.state === 'COMPLETED'),
    config,
    clean,
    zone,
  );
}

/** minAndMaxToKeep over a commits timeline and its completed commits, as each timeline layout lists them. */
export function minAndMaxOfCommits(
  commits: readonly Instant[],
  completed: readonly Instant[],
  config: Pick<ArchiveRules, 'minCommits' | 'maxCommits'>,
  clean: Pick<CleanConfig, 'policy' | 'commitsRetained' | 'hoursRetained'>,
  zone: TimelineTimeZone,
): { min: number; max: number; adjustment: string | undefined } {
  const latest = completed.at(-1);
  const now = (latest === undefined ? undefined : parseInstantTime(latest.time, zone)) ?? new Date();
  const retain = earliestCommitToRetain(commits, clean, now, zone).instant;
  if (retain === undefined) return { min: config.minCommits, max: config.maxCommits, adjustment: undefined };
  const needed = completed.filter((instant) => compareInstantTimes(instant.time, retain.time) > 0).length + 2;
  if (config.minCommits >= needed) return { min: config.minCommits, max: config.maxCommits, adjustment: undefined };
  const max = needed + config.maxCommits - config.minCommits;
  return {
    min: needed,
    max,
    adjustment: `the cleaner retains from ${retain.time}: keep.min.commits ${config.minCommits} → ${needed}, keep.max.commits ${config.maxCommits} → ${max} (as Hudi's ArchivalUtils)`,
  };
}

/**
 * The completed commits to archive once there are more than keep.max.commits: those before every bound (and not
 * savepointed when hoodie.archive.beyond.savepoint is on), less the `min` newest. Why each other one stays goes to
 * `kept`. The same rule on both timeline layouts (HoodieTimelineArchiver.getCommitInstantsToArchive).
 */
export function commitsPastTheBounds(
  completed: readonly Instant[],
  bounds: readonly ArchiveBound[],
  rules: {
    readonly savepointTimes: readonly string[];
    readonly config: Pick<ArchiveRules, 'beyondSavepoint'>;
    readonly min: number;
    readonly adjustment: string | undefined;
  },
  kept: ArchivePlan['keptCommits'][number][],
): Instant[] {
  const candidates = completed.filter((instant) => {
    if (rules.config.beyondSavepoint && rules.savepointTimes.includes(instant.time)) {
      kept.push({ instant, rule: 'savepoint', detail: 'savepointed (hoodie.archive.beyond.savepoint keeps it)' });
      return false;
    }
    const bound = bounds.find((b) => compareInstantTimes(instant.time, b.time) >= 0);
    if (bound !== undefined) {
      kept.push({ instant, rule: bound.rule, detail: bound.detail });
      return false;
    }
    return true;
  });
  const limit = Math.max(0, completed.length - rules.min);
  for (const instant of candidates.slice(limit))
    kept.push({
      instant,
      rule: 'min-commits',
      detail: `among the ${rules.min} newest commits kept (keep.min.commits${rules.adjustment === undefined ? '' : ', adjusted'})`,
    });
  return candidates.slice(0, limit);
}

/** Without hoodie.archive.beyond.savepoint, nothing from the first savepoint on is archived (on both layouts). */
export function savepointBound(savepointTimes: readonly string[], config: Pick<ArchiveRules, 'beyondSavepoint'>): ArchiveBound | undefined {
  const first = savepointTimes[0];
  if (first === undefined || config.beyondSavepoint) return undefined;
  return { rule: 'savepoint', time: first, detail: `savepoint ${first}: nothing from it on is archived (hoodie.archive.beyond.savepoint=false)` };
}

/** ClusteringUtils.getOldestInstantToRetainForClustering. */
export function oldestInstantToRetainForClustering(timeline: Timeline, lastCleanRetainedFrom: string | undefined): Instant | undefined {
  const replaces = timeline.instants.filter((instant) => instant.action === 'replacecommit');
  if (replaces.length === 0) return undefined;
  const hasClean = timeline.completed().some((instant) => instant.action === 'clean');
  let oldest =
    hasClean && lastCleanRetainedFrom !== undefined ? replaces.find((instant) => compareInstantTimes(instant.time, lastCleanRetainedFrom) >= 0) : replaces[0];
  const firstInflight = replaces.find((instant) => instant.state === 'INFLIGHT');
  if (firstInflight !== undefined) {
    const before = commitsTimeline(timeline)
      .filter((instant) => instant.state === 'COMPLETED' && compareInstantTimes(instant.time, firstInflight.time) < 0)
      .at(-1);
    if (before !== undefined && (oldest === undefined || compareInstantTimes(oldest.time, before.time) > 0)) oldest = before;
  }
  return oldest;
}

/**
 * CompactionUtils.getOldestInstantToRetainForCompaction (Hudi 0.15): the delta commits (any state) after the last
 * completed `commit` (a compaction), or all of them when none completed; fewer than `maxDeltaCommits`: that last
 * compaction (or the first delta commit); else the delta commit `maxDeltaCommits` back from the newest.
 *
 * CompactionUtils.getOldestInstantToRetainForCompaction (1.x: getEarliestInstantToRetainForCompaction): the last
 * compaction while fewer than max.delta.commits delta commits followed it, else the delta commit max.delta.commits
 * back from the newest. "Followed" is the layout's (layout 2: completed after the compaction was requested).
 */
export function oldestInstantToRetainForCompaction(timeline: Timeline, maxDeltaCommits: number): Instant | undefined {
  const deltas = timeline.instants.filter((instant) => instant.action === 'deltacommit');
  const lastCompaction = timeline
    .completed()
    .filter((instant) => instant.action === 'commit')
    .at(-1);
  let since: Instant[];
  let anchor: Instant;
  if (lastCompaction !== undefined) {
    since = deltas.filter((instant) => timeline.layout.modifiedAfter(instant, lastCompaction.time));
    anchor = lastCompaction;
  } else if (deltas.length > 0) {
    since = deltas;
    anchor = deltas[0]!;
  } else return undefined;
  if (since.length < maxDeltaCommits) return anchor;
  return since[since.length - maxDeltaCommits];
}

/**
 * Merge-on-read with the compaction trigger NUM_COMMITS or NUM_AND_TIME: the delta commits the next compaction's
 * schedule counts stay (oldestInstantToRetainForCompaction).
 */
export function compactionTriggerBound(
  timeline: Timeline,
  tableType: ArchiveFacts['tableType'],
  config: Pick<ArchiveRules, 'compactionTriggerStrategy' | 'compactionMaxDeltaCommits'>,
): ArchiveBound | undefined {
  const triggerCounts = config.compactionTriggerStrategy === 'NUM_COMMITS' || config.compactionTriggerStrategy === 'NUM_AND_TIME';
  if (tableType !== 'MERGE_ON_READ' || !triggerCounts) return undefined;
  const retain = oldestInstantToRetainForCompaction(timeline, config.compactionMaxDeltaCommits);
  if (retain === undefined) return undefined;
  return {
    rule: 'compaction-trigger',
    time: retain.time,
    detail: `${retain.action} ${retain.time}: the delta commits the next compaction's trigger counts (${config.compactionTriggerStrategy}, max.delta.commits=${config.compactionMaxDeltaCommits}) stay`,
  };
}

/**
 * Commits (commit, deltacommit, replacecommit) are never archived from:
 * - the earliest pending write (nor the last commit completed before it: no hole in the timeline);
 * - the first savepoint (or, with hoodie.archive.beyond.savepoint, only the savepointed commits are kept);
 * - a replacecommit whose replaced files may not be cleaned yet (from the last clean's earliest commit to retain, or
 *   any replacecommit while no clean ran): without it on the timeline a reader would see the replaced files;
 * - the metadata table's latest compaction, when the table has one (nothing while it has none);
 * - merge-on-read, with the compaction trigger NUM_COMMITS or NUM_AND_TIME: the delta commits the next compaction's
 *   schedule counts (oldestInstantToRetainForCompaction); a pending compaction is a pending write, so nothing from it
 *   on is archived either;
 * and keep.min.commits grows to keep every commit after the cleaner's earliest commit to retain, plus two.
 */
export function planArchive(facts: ArchiveFacts, config: ArchiveRules, clean: Pick<CleanConfig, 'policy' | 'commitsRetained' | 'hoursRetained'>): ArchivePlan {
  const { timeline } = facts;
  const { min, max, adjustment } = minAndMaxToKeep(timeline, config, clean, facts.timeZone);

  // Clean and rollback instants, per action.
  const others: Instant[] = [];
  for (const action of ['clean', 'rollback'] as const) {
    const completed = timeline.completed().filter((instant) => instant.action === action);
    if (completed.length > max) others.push(...completed.slice(0, completed.length - min));
  }

  const completed = commitsTimeline(timeline).filter((instant) => instant.state === 'COMPLETED');
  const bounds: ArchiveBound[] = [];
  const oldestPending = timeline.instants.find((instant) => WRITE_ACTIONS.has(instant.action) && instant.state !== 'COMPLETED');
  if (oldestPending !== undefined) {
    const before = completed.filter((instant) => compareInstantTimes(instant.time, oldestPending.time) < 0).at(-1);
    const retain = before === undefined || compareInstantTimes(oldestPending.time, before.time) < 0 ? oldestPending : before;
    bounds.push({
      rule: 'pending-instant',
      time: retain.time,
      detail: `${oldestPending.action} ${oldestPending.time} is pending: the commits from ${retain.time} on stay`,
    });
  }
  const savepoint = savepointBound(facts.savepointTimes, config);
  if (savepoint !== undefined) bounds.push(savepoint);
  const clustering = oldestInstantToRetainForClustering(timeline, facts.lastCleanRetainedFrom);
  if (clustering !== undefined) {
    bounds.push({
      rule: 'clustering-not-cleaned',
      time: clustering.time,
      detail:
        facts.lastCleanRetainedFrom === undefined
          ? `replacecommit ${clustering.time}: no clean has removed its replaced files yet`
          : `${clustering.action} ${clustering.time}: the last clean retained from ${facts.lastCleanRetainedFrom}, so its replaced files may still be there`,
    });
  }
  const compaction = compactionTriggerBound(timeline, facts.tableType, config);
  if (compaction !== undefined) bounds.push(compaction);
  bounds.sort((a, b) => compareInstantTimes(a.time, b.time));

  const keptCommits: { instant: Instant; rule: ArchiveRule; detail: string }[] = [];
  let commitsToArchive: Instant[] = [];
  if (completed.length > max) {
    commitsToArchive = commitsPastTheBounds(completed, bounds, { savepointTimes: facts.savepointTimes, config, min, adjustment }, keptCommits);
  } else {
    for (const instant of completed)
      keptCommits.push({ instant, rule: 'max-commits', detail: `${completed.length} completed commit(s), archiving starts above keep.max.commits=${max}` });
  }

  let instants = [...others, ...commitsToArchive];
  if (facts.metadataTable !== undefined) {
    const compaction = facts.metadataTable.latestCompaction;
    if (compaction === undefined) {
      for (const instant of commitsToArchive)
        keptCommits.push({ instant, rule: 'no-metadata-table-compaction', detail: 'the metadata table has no compaction yet' });
      instants = [];
      bounds.push({ rule: 'no-metadata-table-compaction', time: '', detail: 'the metadata table has not compacted yet: nothing is archived' });
    } else {
      for (const instant of instants) {
        if (compareInstantTimes(instant.time, compaction) >= 0 && WRITE_ACTIONS.has(instant.action))
          keptCommits.push({ instant, rule: 'metadata-table-compaction', detail: `not before the metadata table's latest compaction ${compaction}` });
      }
      instants = instants.filter((instant) => compareInstantTimes(instant.time, compaction) < 0);
      bounds.push({ rule: 'metadata-table-compaction', time: compaction, detail: `the metadata table's latest compaction ${compaction}` });
    }
  }
  instants.sort((a, b) => compareInstantTimes(a.time, b.time) || (a.action < b.action ? -1 : 1));
  keptCommits.sort((a, b) => compareInstantTimes(a.instant.time, b.instant.time));
  return { instants, minToKeep: min, maxToKeep: max, adjustment, completedCommits: completed.length, bounds, keptCommits };
}
