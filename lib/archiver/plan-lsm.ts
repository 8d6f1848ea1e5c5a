/**
 * Which instants Hudi 1.x's archiver takes off a layout-2 timeline (TimelineArchiverV2.getInstantsToArchive, the
 * same in 1.0.2 and 1.1.1; docs/hudi-1x-history.md, "Archiving"). It differs from 0.15's rules (plan.ts) in three
 * ways: cleans and rollbacks go only along with the commits (those requested before the last commit archived), the
 * clustering bound reads the last clean's plan (with its savepoint guard) and is not pulled back to the commit before
 * an inflight replacecommit, and a pending clustering (layout 2's `clustering` action) is a pending write.
 */
import type { CleanConfig } from '../cleaner/config.js';
import type { HoodieCleanerPlan } from '../timeline/avro-schemas.js';
import { compareInstantTimes, type Instant, type InstantAction, type TimelineTimeZone } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import {
  type ArchiveBound,
  type ArchivePlan,
  type ArchiveRule,
  type ArchiveRules,
  commitsPastTheBounds,
  compactionTriggerBound,
  minAndMaxOfCommits,
  savepointBound,
} from './plan.js';

/** BaseTimelineV2.getWriteTimeline: a pending one of these holds archival back. */
const WRITE_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'compaction', 'logcompaction', 'replacecommit', 'clustering']);
/** BaseTimelineV2.getCommitsTimeline: what the cleaner's earliest commit to retain is chosen from (any state). */
const COMMITS_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'replacecommit', 'clustering']);
/** CleanerUtils.SAVEPOINTED_TIMESTAMPS: the savepoints a clean's plan kept files for. */
const SAVEPOINTED_TIMESTAMPS = 'savepointed_timestamps';

export interface LsmArchiveFacts {
  readonly timeline: Timeline;
  /** The last completed clean on the active timeline and its plan (undefined: the plan file was empty). */
  readonly lastClean: { readonly time: string; readonly plan: HoodieCleanerPlan | undefined } | undefined;
  /** Completed savepoints' times, oldest first. */
  readonly savepointTimes: readonly string[];
  readonly timeZone: TimelineTimeZone;
  readonly tableType: 'COPY_ON_WRITE' | 'MERGE_ON_READ';
  /** A data table whose metadata table is on: that table's latest completed compaction (undefined: none yet). */
  readonly metadataTable?: { readonly latestCompaction: string | undefined };
  /** A metadata table's own archival: the data table's active timeline (getEarliestInstantForMetadataArchival). */
  readonly dataTimeline?: Timeline;
}

type CleanRules = Pick<CleanConfig, 'policy' | 'commitsRetained' | 'hoursRetained'>;

/** HoodieTable.getCompletedCommitsTimeline: copy-on-write commits and replacecommits, merge-on-read also deltacommits. */
function completedCommitsOf(timeline: Timeline, tableType: LsmArchiveFacts['tableType']): Instant[] {
  const actions = tableType === 'MERGE_ON_READ' ? ['commit', 'deltacommit', 'replacecommit'] : ['commit', 'replacecommit'];
  return timeline.instants.filter((instant) => instant.state === 'COMPLETED' && actions.includes(instant.action));
}

/** ArchivalUtils.getMinAndMaxInstantsToKeep, over layout 2's commits timeline. */
function minAndMaxToKeep(facts: LsmArchiveFacts, completed: readonly Instant[], config: Pick<ArchiveRules, 'minCommits' | 'maxCommits'>, clean: CleanRules) {
  const commits = facts.timeline.instants.filter((instant) => COMMITS_ACTIONS.has(instant.action));
  return minAndMaxOfCommits(commits, completed, config, clean, facts.timeZone);
}

/** ClusteringUtils.getEarliestInstantToRetainForClustering (1.x) with getEarliestReplacedSavepointInClean. */
export function earliestInstantToRetainForClustering(facts: LsmArchiveFacts, policy: CleanConfig['policy']): ArchiveBound | undefined {
  const { timeline, lastClean } = facts;
  const replaces = timeline.instants.filter((instant) => instant.action === 'replacecommit' || instant.action === 'clustering');
  if (replaces.length === 0) return undefined;
  if (lastClean === undefined) {
    return { rule: 'clustering-not-cleaned', time: replaces[0]!.time, detail: `${replaces[0]!.action} ${replaces[0]!.time}: no clean has run since it` };
  }
  const retainFrom = lastClean.plan?.earliestInstantToRetain?.timestamp || undefined;
  const savepoints = (lastClean.plan?.extraMetadata?.[SAVEPOINTED_TIMESTAMPS] ?? '').split(',').sort();
  const earliestSavepoint = savepoints[0] || undefined;
  let lowerBound = retainFrom ?? lastClean.time;
  let why = retainFrom === undefined ? `the last clean ${lastClean.time}` : `the last clean's earliest instant to retain ${retainFrom}`;
  if (
    policy !== 'KEEP_LATEST_FILE_VERSIONS' &&
    retainFrom !== undefined &&
    earliestSavepoint !== undefined &&
    compareInstantTimes(retainFrom, earliestSavepoint) > 0
  ) {
    const replacedBetween = timeline.instants.some(
      (instant) =>
        instant.action === 'replacecommit' &&
        instant.state === 'COMPLETED' &&
        compareInstantTimes(instant.time, earliestSavepoint) >= 0 &&
        compareInstantTimes(instant.time, retainFrom) <= 0,
    );
    if (replacedBetween) {
      lowerBound = earliestSavepoint;
      why = `savepoint ${earliestSavepoint}, whose files the last clean kept`;
    }
  }
  const first = replaces.find((instant) => compareInstantTimes(instant.time, lowerBound) >= 0);
  if (first === undefined) return undefined;
  return {
    rule: 'clustering-not-cleaned',
    time: first.time,
    detail: `${first.action} ${first.time}: not before ${why}, its replaced files may still be there`,
  };
}

/**
 * The instants TimelineArchiverV2 archives, oldest first: once more than keep.max completed commits are active,
 * the oldest of them down to keep.min, never from the earliest instant to retain on (a pending write; merge-on-read's
 * compaction trigger; the clustering bound; a data table's metadata-table compaction, nothing while it has none; a
 * metadata table's data table timeline) nor past the first savepoint; with them the completed cleans and rollbacks
 * requested before the last commit archived.
 */
export function planArchiveLsm(facts: LsmArchiveFacts, config: ArchiveRules, clean: CleanRules): ArchivePlan {
  const { timeline } = facts;
  const completed = completedCommitsOf(timeline, facts.tableType);
  const { min, max, adjustment } = minAndMaxToKeep(facts, completed, config, clean);
  const keptCommits: { instant: Instant; rule: ArchiveRule; detail: string }[] = [];
  const bounds: ArchiveBound[] = [];
  const result = (instants: Instant[]): ArchivePlan => {
    keptCommits.sort((a, b) => compareInstantTimes(a.instant.time, b.instant.time));
    bounds.sort((a, b) => compareInstantTimes(a.time, b.time));
    return { instants, minToKeep: min, maxToKeep: max, adjustment, completedCommits: completed.length, bounds, keptCommits };
  };
  if (completed.length <= max) {
    for (const instant of completed)
      keptCommits.push({ instant, rule: 'max-commits', detail: `${completed.length} completed commit(s), archiving starts above keep.max.commits=${max}` });
    return result([]);
  }

  const oldestPending = timeline.instants.find((instant) => WRITE_ACTIONS.has(instant.action) && instant.state !== 'COMPLETED');
  if (oldestPending !== undefined) {
    const before = completed.filter((instant) => compareInstantTimes(instant.time, oldestPending.time) < 0).at(-1);
    const retain = before ?? oldestPending;
    bounds.push({
      rule: 'pending-instant',
      time: retain.time,
      detail: `${oldestPending.action} ${oldestPending.time} is pending: the commits from ${retain.time} on stay`,
    });
  }
  const compaction = compactionTriggerBound(timeline, facts.tableType, config);
  if (compaction !== undefined) bounds.push(compaction);
  const clustering = earliestInstantToRetainForClustering(facts, clean.policy);
  if (clustering !== undefined) bounds.push(clustering);
  if (facts.metadataTable !== undefined) {
    const latest = facts.metadataTable.latestCompaction;
    if (latest === undefined) {
      for (const instant of completed) keptCommits.push({ instant, rule: 'no-metadata-table-compaction', detail: 'the metadata table has no compaction yet' });
      return result([]);
    }
    // findInstantsModifiedAfterByCompletionTime: completed after the compaction's requested time, not the compaction's own time.
    const first = completed.find((i) => i.time !== latest && i.completionTime !== undefined && compareInstantTimes(i.completionTime, latest) > 0);
    if (first !== undefined)
      bounds.push({
        rule: 'metadata-table-compaction',
        time: first.time,
        detail: `${first.action} ${first.time} completed after the metadata table's latest compaction ${latest}`,
      });
  }
  const dataBound = earliestInstantForMetadataArchival(facts.dataTimeline);
  if (dataBound !== undefined) bounds.push(dataBound);
  const savepoint = savepointBound(facts.savepointTimes, config);
  if (savepoint !== undefined) bounds.push(savepoint);

  bounds.sort((a, b) => compareInstantTimes(a.time, b.time));
  const commits = commitsPastTheBounds(completed, bounds, { savepointTimes: facts.savepointTimes, config, min, adjustment }, keptCommits);
  const last = commits.at(-1);
  if (last === undefined) return result([]);
  // getCleanAndRollbackInstantsToArchive: the commits archived are contiguous, so the last one bounds the rest.
  const others = timeline.instants.filter(
    (instant) =>
      (instant.action === 'clean' || instant.action === 'rollback') && instant.state === 'COMPLETED' && compareInstantTimes(instant.time, last.time) < 0,
  );
  const instants = [...commits, ...others].sort((a, b) => compareInstantTimes(a.time, b.time) || (a.action < b.action ? -1 : 1));
  return result(instants);
}

/**
 * TimelineUtils.getEarliestInstantForMetadataArchival (archive beyond savepoint off, as the metadata table's writer
 * has it): the earlier of the data table's first commit (commits timeline, any state) and its first pending instant of
 * any action. A metadata table keeps its instants from there on (processRollbackMetadata reads them).
 */
export function earliestInstantForMetadataArchival(dataTimeline: Timeline | undefined): ArchiveBound | undefined {
  if (dataTimeline === undefined) return undefined;
  const firstCommit = dataTimeline.instants.find((instant) => COMMITS_ACTIONS.has(instant.action));
  const firstPending = dataTimeline.instants.find((instant) => instant.state !== 'COMPLETED');
  const earliest = [firstCommit, firstPending]
    .filter((instant): instant is Instant => instant !== undefined)
    .sort((a, b) => compareInstantTimes(a.time, b.time))[0];
  if (earliest === undefined) return undefined;
  return {
    rule: 'data-table-timeline',
    time: earliest.time,
    detail: `the data table's ${earliest.state === 'COMPLETED' ? 'first active commit' : 'first pending instant'}, ${earliest.action} ${earliest.time}`,
  };
}
