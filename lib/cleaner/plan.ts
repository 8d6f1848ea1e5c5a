/**
 * The clean planner, as pure functions from the timeline, a partition's listing and a few timeline facts to Hudi's
 * HoodieCleanerPlan, following Hudi 0.15's CleanPlanner, CleanPlanActionExecutor.requestClean and
 * CleanerUtils.getEarliestCommitToRetain rule for rule, and saying which rule kept or deleted every file (for
 * `clean --dry-run`). Nothing here reads storage (lib/cleaning/schedule.ts gathers the inputs). It splits where a
 * serverless run fans out: partitionScope (one small step), planPartition per partition (any number of workers, each
 * given its slice of the PartitionContext), assembleCleanerPlan (one step).
 */
import { HudiError } from '../errors.js';
import { CDC_LOG_SUFFIX, parseLogFileName } from '../log-format/names.js';
import { joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import type { HoodieCleanerPlan, HoodieCleanFileInfo, HoodieCleanMetadata } from '../timeline/avro-schemas.js';
import { compareInstants, compareInstantTimes, formatInstantTime, type Instant, type InstantAction, type TimelineTimeZone } from '../timeline/instant.js';
import { Timeline } from '../timeline/timeline.js';
import { fileNameOf, isHadoopChecksumFile } from '../util/paths.js';
import type { CleanConfig, CleaningPolicy } from './config.js';

/** Version of the plans Hudi 0.14/0.15 write (CleanPlanner.LATEST_CLEAN_PLAN_VERSION). */
export const CLEAN_PLAN_VERSION = 2;
/** CleanPlanner.SAVEPOINTED_TIMESTAMPS: the plan's (and the clean's) extraMetadata key listing the savepoints. */
export const SAVEPOINTED_TIMESTAMPS_KEY = 'savepointed_timestamps';

/** commit, deltacommit, replacecommit: Hudi's commits timeline. */
const COMMIT_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'replacecommit']);
/** The commits timeline plus (pending) compactions: getCommitsAndCompactionTimeline. */
const COMMIT_AND_COMPACTION_ACTIONS: ReadonlySet<InstantAction> = new Set(['commit', 'deltacommit', 'replacecommit', 'compaction', 'logcompaction']);

/** Every instant of the commits timeline (all states), oldest first. */
export function commitsTimeline(timeline: Timeline): Instant[] {
  return timeline.instants.filter((instant) => COMMIT_ACTIONS.has(instant.action));
}

/** The commits timeline with pending compactions: what the cleaner's earliest commit to retain is chosen from. */
export function commitsAndCompactionTimeline(timeline: Timeline): Instant[] {
  return timeline.instants.filter((instant) => COMMIT_AND_COMPACTION_ACTIONS.has(instant.action));
}

/** Completed commits, deltacommits and replacecommits, oldest first (Hudi's completed commits timeline). */
export function completedCommits(timeline: Timeline): Instant[] {
  return commitsTimeline(timeline).filter((instant) => instant.state === 'COMPLETED');
}

export interface RetentionPoint {
  /** The earliest commit whose files a query may still read; undefined: nothing is old enough to clean. */
  readonly instant: Instant | undefined;
  /** Why this instant (or why none), for --dry-run. */
  readonly reason: string;
}

/**
 * CleanerUtils.getEarliestCommitToRetain over `instants` (the commits-and-compaction timeline for the cleaner, the
 * commits timeline for the archiver), `now` for KEEP_LATEST_BY_HOURS.
 */
export function earliestCommitToRetain(
  instants: readonly Instant[],
  config: Pick<CleanConfig, 'policy' | 'commitsRetained' | 'hoursRetained'>,
  now: Date,
  zone: TimelineTimeZone,
): RetentionPoint {
  const completed = instants.filter((instant) => instant.state === 'COMPLETED');
  if (config.policy === 'KEEP_LATEST_COMMITS') {
    if (completed.length <= config.commitsRetained) {
      return {
        instant: undefined,
        reason: `${completed.length} completed commit(s), ${config.commitsRetained} retained: nothing is older than the retention window yet`,
      };
    }
    // 15 completed, 10 retained: the 6th (index 5) is the earliest to retain.
    const nth = completed[completed.length - config.commitsRetained]!;
    const earliestPending = instants.find((instant) => instant.state !== 'COMPLETED');
    if (earliestPending !== undefined && compareInstants(nth, earliestPending) > 0) {
      const before = completed.filter((instant) => compareInstantTimes(instant.time, earliestPending.time) < 0).at(-1);
      return {
        instant: before,
        reason:
          before === undefined
            ? `the ${config.commitsRetained} newest commits would start at ${nth.time}, but ${earliestPending.action} ${earliestPending.time} is still pending and no commit completed before it`
            : `the ${config.commitsRetained} newest commits would start at ${nth.time}, but ${earliestPending.action} ${earliestPending.time} is still pending: retaining from the last commit completed before it`,
      };
    }
    return {
      instant: nth,
      reason: `${config.commitsRetained} commit(s) retained: ${nth.time} is the ${ordinal(config.commitsRetained)} newest of ${completed.length} completed`,
    };
  }
  if (config.policy === 'KEEP_LATEST_BY_HOURS') {
    const cutoff = formatInstantTime(new Date(now.getTime() - config.hoursRetained * 3_600_000), zone);
    const first = completed.find((instant) => compareInstantTimes(instant.time, cutoff) >= 0);
    return {
      instant: first,
      reason:
        first === undefined
          ? `no commit completed in the last ${config.hoursRetained} hour(s) (since ${cutoff})`
          : `${config.hoursRetained} hour(s) retained: ${first.time} is the first commit at or after ${cutoff}`,
    };
  }
  return { instant: undefined, reason: 'KEEP_LATEST_FILE_VERSIONS keeps versions per file group, not commits' };
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th');
  return `${n}${suffix}`;
}

export interface LastClean {
  readonly instant: Instant;
  /** Undefined when the `.clean` file is empty (Hudi treats such a clean as absent for incremental planning). */
  readonly metadata: HoodieCleanMetadata | undefined;
}

/**
 * Whether a clean is due (CleanPlanActionExecutor.needsCleaning, the NUM_COMMITS trigger): completed commits after
 * the last clean's lastCompletedCommitTimestamp, at least hoodie.clean.max.commits.
 */
export function cleanIsDue(
  timeline: Timeline,
  lastClean: LastClean | undefined,
  config: Pick<CleanConfig, 'maxCommits'>,
): { due: boolean; commitsSinceLastClean: number; reason: string } {
  const completed = completedCommits(timeline);
  const since = lastClean?.metadata?.lastCompletedCommitTimestamp;
  const count = since === undefined ? completed.length : completed.filter((instant) => compareInstantTimes(instant.time, since) > 0).length;
  const due = count >= config.maxCommits;
  const after = since === undefined ? '' : ` after ${since === '' ? 'the start' : since} (the last clean's last commit)`;
  return { due, commitsSinceLastClean: count, reason: `${count} completed commit(s)${after}; hoodie.clean.max.commits=${config.maxCommits}` };
}

/** Which partitions a clean looks at. */
export type PartitionScope =
  | { readonly kind: 'none'; readonly reason: string }
  | {
      readonly kind: 'incremental';
      /** The completed commits whose partitions are cleaned (from the last clean's earliest commit to retain). */
      readonly instants: readonly Instant[];
      readonly reason: string;
    }
  | { readonly kind: 'full'; readonly reason: string };

export interface ScopeInputs {
  readonly timeline: Timeline;
  readonly retention: RetentionPoint;
  readonly lastClean: LastClean | undefined;
  /** Completed savepoints' instant times. */
  readonly savepointTimes: readonly string[];
  readonly isPartitioned: boolean;
}

/**
 * CleanPlanner.getPartitionPathsToClean: no partitions without an earliest commit to retain; with incremental mode
 * and a last clean whose earliest commit to retain is still on the active timeline, the commits from there up to
 * (not including) the new one (plus savepointed commits whose savepoint was removed since); else every partition.
 */
export function partitionScope(inputs: ScopeInputs, config: Pick<CleanConfig, 'policy' | 'incrementalMode'>): PartitionScope {
  if (config.policy === 'KEEP_LATEST_FILE_VERSIONS') return { kind: 'full', reason: 'KEEP_LATEST_FILE_VERSIONS lists every partition (as Hudi)' };
  const retain = inputs.retention.instant;
  if (retain === undefined) return { kind: 'none', reason: `no earliest commit to retain (${inputs.retention.reason})` };
  if (!config.incrementalMode) return { kind: 'full', reason: 'hoodie.cleaner.incremental.mode=false' };
  if (inputs.lastClean === undefined) return { kind: 'full', reason: 'no completed clean yet' };
  const last = inputs.lastClean.metadata;
  if (last === undefined) return { kind: 'full', reason: `the last clean ${inputs.lastClean.instant.time} is empty` };
  const since = last.earliestCommitToRetain;
  if (since === '') return { kind: 'full', reason: `the last clean ${inputs.lastClean.instant.time} recorded no earliest commit to retain` };
  const first = commitsTimeline(inputs.timeline)[0];
  if (first !== undefined && compareInstantTimes(since, first.time) < 0) {
    return { kind: 'full', reason: `the last clean's earliest commit to retain ${since} is archived (the active timeline starts at ${first.time})` };
  }
  const completed = completedCommits(inputs.timeline);
  const window = completed.filter((instant) => compareInstantTimes(instant.time, since) >= 0 && compareInstantTimes(instant.time, retain.time) < 0);
  const reasonParts = [`${window.length} commit(s) from ${since} (the last clean's earliest commit to retain) to ${retain.time}`];
  let instants = window;
  if (inputs.isPartitioned) {
    // Savepoints removed since the last clean free their files: look at the partitions of their commits again.
    const before = (last.extraMetadata?.[SAVEPOINTED_TIMESTAMPS_KEY] ?? '').split(',').filter((time) => time !== '');
    const removed = before.filter((time) => !inputs.savepointTimes.includes(time));
    const removedCommits = completed.filter((instant) => removed.includes(instant.time));
    if (removedCommits.length > 0) {
      instants = [...window, ...removedCommits.filter((instant) => !window.includes(instant))];
      reasonParts.push(`and the commits of removed savepoints ${removedCommits.map((instant) => instant.time).join(', ')}`);
    }
  }
  return { kind: 'incremental', instants, reason: reasonParts.join(' ') };
}

// ---------------------------------------------------------------------------------------------------------------
// One partition.

/**
 * What planning one partition needs besides its listing: plain data (JSON-able), so a worker can be handed the
 * slice of it that concerns its partitions (sliceContext).
 */
export interface PartitionContext {
  readonly policy: CleaningPolicy;
  readonly fileVersionsRetained: number;
  /** The earliest commit to retain (KEEP_LATEST_COMMITS, KEEP_LATEST_BY_HOURS). */
  readonly earliestCommitToRetain: string | undefined;
  /** Completed commits on the active timeline exceed the commits retained (0 for KEEP_LATEST_BY_HOURS). */
  readonly retentionReached: boolean;
  /** The active timeline's instants: which base files are committed. */
  readonly timeline: readonly Instant[];
  /** partition → file id → the completed replacecommit that replaced the file group. */
  readonly replacedFileGroups: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** partition → file id → the pending clustering that will rewrite the file group. */
  readonly pendingClustering: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** partition → base file name → the savepoint keeping it. */
  readonly savepointedFiles: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /**
   * Merge-on-read: partition → file id → the pending compaction whose plan takes the file group, and the base
   * instant of the slice it compacts (absent: no pending compaction).
   */
  readonly pendingCompaction?: Readonly<Record<string, Readonly<Record<string, PendingCompactionOperation>>>>;
  /**
   * Timeline layout 2 (Hudi 1.x): log files join slices by completion time (lib/table/file-group.ts); `archived` holds
   * the LSM history's completion times (requested → completion) for logs of archived delta commits.
   */
  readonly completionTimeSlicing?: { readonly archived: Readonly<Record<string, string>> };
  readonly isPartitioned: boolean;
}

/** A pending compaction's operation on one file group. */
export interface PendingCompactionOperation {
  readonly instant: string;
  readonly baseInstant: string;
}

/** The part of a context about `partitions`, to hand a worker. */
export function sliceContext(context: PartitionContext, partitions: readonly string[]): PartitionContext {
  const pick = <T>(all: Readonly<Record<string, T>>): Record<string, T> =>
    Object.fromEntries(partitions.filter((p) => all[p] !== undefined).map((p) => [p, all[p]!]));
  return {
    ...context,
    replacedFileGroups: pick(context.replacedFileGroups),
    pendingClustering: pick(context.pendingClustering),
    savepointedFiles: pick(context.savepointedFiles),
    ...(context.pendingCompaction === undefined ? {} : { pendingCompaction: pick(context.pendingCompaction) }),
  };
}

/** Why a file goes or stays. */
export type CleanRule =
  | 'replaced'
  | 'replaced-after-retention'
  | 'older-than-retention'
  | 'beyond-file-versions'
  | 'latest-version'
  | 'last-version-before-retention'
  | 'within-retention'
  | 'within-file-versions'
  | 'retention-not-reached'
  | 'savepoint'
  | 'pending-clustering'
  | 'pending-compaction'
  | 'uncommitted';

export interface FileDecision {
  readonly fileName: string;
  readonly fileId: string;
  readonly instantTime: string;
  readonly size: number;
  readonly rule: CleanRule;
  /** One line for --dry-run. */
  readonly detail: string;
}

export interface PartitionCleanPlan {
  readonly partitionPath: string;
  /** Base files to delete, in listing order. */
  readonly deletes: readonly FileDecision[];
  /** Base files kept and why; only when planned with `explain`. */
  readonly kept: readonly FileDecision[];
  /** Hudi's partitionsToBeDeleted: no file group is left and none is coming (only for partitioned tables). */
  readonly deletePartition: boolean;
}

export interface PartitionListing {
  readonly partitionPath: string;
  /** File names directly in the partition folder, with sizes. */
  readonly files: readonly { readonly name: string; readonly size: number }[];
}

interface Slice {
  readonly fileName: string;
  readonly fileId: string;
  readonly instantTime: string;
  readonly size: number;
  /** The slice's log files (base instant = instantTime), deleted with it: merge-on-read logs, and cdc logs. */
  readonly logFiles: { name: string; size: number }[];
  /** False for a slice of log files only (fileName is then its first log file's). */
  readonly hasBase: boolean;
}

/** A Parquet base file, or an HFile one (merge-on-read tables with HFILE base format: the metadata table's). */
function parseSliceBaseFile(name: string): { fileId: string; instantTime: string } | undefined {
  return parseBaseFileName(name) ?? parseBaseFileName(name, 'hfile');
}

/**
 * CleanPlanner.getDeletePaths for one partition. `timeline` is the context's timeline as a Timeline (pass it to save
 * rebuilding it per partition). On merge-on-read tables a file slice is its base file (if any) and the log files of
 * its base instant, kept or deleted together, as Hudi's planner adds a deleted slice's log files.
 *
 * On merge-on-read tables a file slice (base file and the log files of its base instant) is kept or deleted whole, and
 * a slice a pending compaction reads, or writes into, is kept (isFileSliceNeededForPendingCompaction: base instant at
 * or after the operation's). Two rules are stricter than Hudi's: file groups in a pending clustering plan are never
 * touched (Hudi keeps only their latest slice, which the plan reads; we keep all of them until the clustering completes
 * and replaces them), and a partition whose only files left are savepointed is not removed (Hudi's executor deletes
 * the partition folder, savepointed files included).
 */
export function planPartition(
  listing: PartitionListing,
  context: PartitionContext,
  options: {
    explain?: boolean;
    timeline?: Timeline;
    /** Timeline layout 2: each log file's slice (the base instant it joins by completion time), by file name. */
    logSlices?: ReadonlyMap<string, string>;
  } = {},
): PartitionCleanPlan {
  const timeline = options.timeline ?? new Timeline(context.timeline);
  const partition = listing.partitionPath;
  const replaced = context.replacedFileGroups[partition] ?? {};
  const clustering = context.pendingClustering[partition] ?? {};
  const savepointed = context.savepointedFiles[partition] ?? {};
  const compaction = context.pendingCompaction?.[partition] ?? {};
  const deletes: FileDecision[] = [];
  const kept: FileDecision[] = [];
  const decision = (slice: Slice, rule: CleanRule, detail: string): FileDecision => ({
    fileName: slice.fileName,
    fileId: slice.fileId,
    instantTime: slice.instantTime,
    size: slice.size,
    rule,
    detail,
  });
  const keep = (slice: Slice, rule: CleanRule, detail: string) => {
    if (options.explain) kept.push(decision(slice, rule, detail));
  };
  const remove = (slice: Slice, rule: CleanRule, text: string) => {
    // A plan may delete a million files: their decisions share one copy of each reason.
    const detail = internDetail(text);
    if (slice.hasBase) deletes.push(decision(slice, rule, detail));
    for (const log of slice.logFiles) deletes.push({ fileName: log.name, fileId: slice.fileId, instantTime: slice.instantTime, size: log.size, rule, detail });
  };

  // File groups by id: committed slices newest first (a file group's base files, as Hudi's view sees them).
  const groups = new Map<string, Slice[]>();
  const byBase = new Map<string, Slice>();
  let anyLiveFile = false;
  const addSlice = (slice: Slice): void => {
    if (replaced[slice.fileId] === undefined) anyLiveFile = true;
    if (!timeline.isCommitted(slice.instantTime)) {
      keep(slice, 'uncommitted', `instant ${slice.instantTime} is not a completed commit (pending or failed writes are rolled back, not cleaned)`);
      return;
    }
    const slices = groups.get(slice.fileId) ?? [];
    slices.push(slice);
    groups.set(slice.fileId, slices);
  };
  for (const file of listing.files) {
    const parsed = parseSliceBaseFile(file.name);
    if (parsed === undefined) continue;
    const slice: Slice = { fileName: file.name, fileId: parsed.fileId, instantTime: parsed.instantTime, size: file.size, logFiles: [], hasBase: true };
    byBase.set(`${parsed.fileId}/${parsed.instantTime}`, slice);
    addSlice(slice);
  }
  const logOnly = new Map<string, Slice>();
  for (const file of listing.files) {
    // A `..<log>.crc` checksum matches the log pattern too; Hadoop's listings hide it, and deleting a log takes it along.
    if (isHadoopChecksumFile(file.name)) continue;
    const log = parseLogFileName(file.name);
    // A CDC table's `.cdc` logs join the slice of their base instant (the commit that wrote them beside its base
    // file), as in Hudi's file-system view, so they go with it (CleanPlanner adds a cleaned slice's log files).
    if (log === undefined || log.extension !== 'log' || (log.suffix !== '' && log.suffix !== CDC_LOG_SUFFIX)) continue;
    const baseInstant = options.logSlices?.get(file.name) ?? log.baseInstant;
    const key = `${log.fileId}/${baseInstant}`;
    const slice = byBase.get(key) ?? logOnly.get(key);
    if (slice !== undefined) {
      slice.logFiles.push({ name: file.name, size: file.size });
      continue;
    }
    const created: Slice = {
      fileName: file.name,
      fileId: log.fileId,
      instantTime: baseInstant,
      size: file.size,
      logFiles: [{ name: file.name, size: file.size }],
      hasBase: false,
    };
    logOnly.set(key, created);
  }
  for (const slice of logOnly.values()) addSlice(slice);
  for (const slices of groups.values())
    slices.sort((a, b) => compareInstantTimes(b.instantTime, a.instantTime) || (a.fileName < b.fileName ? 1 : a.fileName > b.fileName ? -1 : 0));
  const fileIds = [...groups.keys()].sort();

  const retain = context.earliestCommitToRetain;
  const byCommits = context.policy === 'KEEP_LATEST_COMMITS' || context.policy === 'KEEP_LATEST_BY_HOURS';
  if (byCommits && (!context.retentionReached || retain === undefined)) {
    for (const fileId of fileIds)
      for (const slice of groups.get(fileId)!) keep(slice, 'retention-not-reached', 'not enough completed commits to clean anything yet');
    return { partitionPath: partition, deletes, kept, deletePartition: false };
  }

  for (const fileId of fileIds) {
    const slices = groups.get(fileId)!;
    const replacedBy = replaced[fileId];
    if (replacedBy !== undefined) {
      // getReplacedFilesEligibleToClean: a replaced file group goes whole once its replacecommit is before the
      // earliest commit to retain (any replaced group for KEEP_LATEST_FILE_VERSIONS); savepointed slices stay.
      const eligible = !byCommits || compareInstantTimes(replacedBy, retain!) < 0;
      for (const slice of slices) {
        const savepoint = savepointed[slice.fileName];
        if (savepoint !== undefined) keep(slice, 'savepoint', `savepoint ${savepoint} keeps it`);
        else if (eligible)
          remove(
            slice,
            'replaced',
            byCommits ? `file group replaced by ${replacedBy}, before the earliest commit to retain ${retain}` : `file group replaced by ${replacedBy}`,
          );
        else
          keep(
            slice,
            'replaced-after-retention',
            `file group replaced by ${replacedBy}, not before the earliest commit to retain ${retain}: queries may still read it`,
          );
      }
      continue;
    }
    const pending = clustering[fileId];
    if (pending !== undefined) {
      for (const slice of slices) keep(slice, 'pending-clustering', `file group in pending clustering ${pending}`);
      continue;
    }
    // The slices a pending compaction reads or writes into stay (their base instant is the operation's or later).
    const operation = compaction[fileId];
    const compacted = (slice: Slice): boolean => operation !== undefined && compareInstantTimes(slice.instantTime, operation.baseInstant) >= 0;
    const compactionDetail = operation === undefined ? '' : `pending compaction ${operation.instant} compacts the slice of ${operation.baseInstant}`;
    if (!byCommits) {
      // getFilesToCleanKeepingLatestVersions: those slices are set aside and count as one of the versions kept.
      const versions = operation === undefined ? context.fileVersionsRetained : context.fileVersionsRetained - 1;
      for (const slice of slices.filter(compacted)) keep(slice, 'pending-compaction', compactionDetail);
      slices
        .filter((slice) => !compacted(slice))
        .forEach((slice, index) => {
          const savepoint = savepointed[slice.fileName];
          if (index < versions) keep(slice, 'within-file-versions', `version ${index + 1} of ${versions} kept`);
          else if (savepoint !== undefined) keep(slice, 'savepoint', `savepoint ${savepoint} keeps it`);
          else remove(slice, 'beyond-file-versions', `version ${index + 1}, beyond the ${versions} retained`);
        });
      continue;
    }
    const latest = slices[0]!.instantTime;
    // The newest version older than the earliest commit to retain: a query reading as of that commit uses it.
    const lastBeforeRetain = slices.find((slice) => compareInstantTimes(retain!, slice.instantTime) > 0)?.instantTime;
    for (const slice of slices) {
      const savepoint = savepointed[slice.fileName];
      if (savepoint !== undefined) keep(slice, 'savepoint', `savepoint ${savepoint} keeps it`);
      else if (slice.instantTime === latest) keep(slice, 'latest-version', 'the latest version of its file group');
      else if (slice.instantTime === lastBeforeRetain)
        keep(slice, 'last-version-before-retention', `the version a query as of the earliest commit to retain ${retain} reads`);
      else if (compacted(slice)) keep(slice, 'pending-compaction', compactionDetail);
      else if (compareInstantTimes(retain!, slice.instantTime) > 0)
        remove(slice, 'older-than-retention', `superseded by ${lastBeforeRetain ?? latest} before the earliest commit to retain ${retain}`);
      else keep(slice, 'within-retention', `written at or after the earliest commit to retain ${retain}`);
    }
  }

  // No live file group left, none being written, and no replacecommit since the retention point that may still
  // be read: the partition itself goes (CleanPlanner: fileGroups.isEmpty && !hasPendingFiles && noSubsequentReplaceCommit).
  const replacedSinceRetain = byCommits && Object.values(replaced).some((time) => compareInstantTimes(time, retain!) >= 0);
  // Stricter than Hudi: a partition keeping a savepointed file stays (Hudi's executor would delete the folder, file
  // and all). The executor also re-lists the partition and leaves it alone if a base file appeared meanwhile.
  const savepointKept = deletesAndKeptSavepoint(listing, savepointed, deletes);
  const deletePartition = context.isPartitioned && !anyLiveFile && !replacedSinceRetain && !savepointKept;
  return { partitionPath: partition, deletes, kept, deletePartition };
}

/** The reasons given so far, so equal ones are one string (bounded: a cleared cache only costs copies). */
const DETAILS = new Map<string, string>();
const DETAILS_LIMIT = 65_536;

function internDetail(text: string): string {
  const known = DETAILS.get(text);
  if (known !== undefined) return known;
  if (DETAILS.size >= DETAILS_LIMIT) DETAILS.clear();
  DETAILS.set(text, text);
  return text;
}

/** Whether a savepointed base file of the listing stays (is not among the deletes). */
function deletesAndKeptSavepoint(listing: PartitionListing, savepointed: Readonly<Record<string, string>>, deletes: readonly FileDecision[]): boolean {
  const deleted = new Set(deletes.map((d) => d.fileName));
  return listing.files.some((file) => savepointed[file.name] !== undefined && !deleted.has(file.name));
}

// ---------------------------------------------------------------------------------------------------------------
// The plan.

export interface CleanScopeSummary {
  readonly policy: CleaningPolicy;
  readonly earliestCommitToRetain: Instant | undefined;
  /** The last completed commit when planning ('' without one). */
  readonly lastCompletedCommitTimestamp: string;
  /** Savepoints of a partitioned table, recorded so the next incremental clean notices removed ones. */
  readonly savepointTimes: readonly string[];
  readonly isPartitioned: boolean;
}

/** What a plan takes from a planned partition (a PartitionCleanPlan, or a share's stored result). */
export interface PartitionDeletes {
  readonly partitionPath: string;
  readonly deletes: readonly { readonly fileName: string }[];
  readonly deletePartition: boolean;
}

/**
 * The HoodieCleanerPlan for the planned partitions (CleanPlanActionExecutor.requestClean): only partitions with
 * files to delete, absolute paths (`uriOf`), or undefined when nothing would be deleted (Hudi writes no clean then).
 */
export function assembleCleanerPlan<Partition extends PartitionDeletes>(
  scope: CleanScopeSummary,
  partitions: readonly Partition[],
  uriOf: (path: string) => string,
): HoodieCleanerPlan | undefined {
  const filePaths: Record<string, HoodieCleanFileInfo[]> = {};
  let total = 0;
  for (const partition of partitions) {
    if (partition.deletes.length === 0) continue;
    filePaths[partition.partitionPath] = partition.deletes.map((file) => ({
      filePath: uriOf(joinPartitionPath(partition.partitionPath, file.fileName)),
      isBootstrapBaseFile: false,
    }));
    total += partition.deletes.length;
  }
  if (total === 0) return undefined;
  const savepoints = scope.isPartitioned ? scope.savepointTimes : [];
  const retain = scope.earliestCommitToRetain;
  return {
    earliestInstantToRetain: retain === undefined ? null : { timestamp: retain.time, action: retain.action, state: retain.state },
    lastCompletedCommitTimestamp: scope.lastCompletedCommitTimestamp,
    policy: scope.policy,
    filesToBeDeletedPerPartition: {},
    version: CLEAN_PLAN_VERSION,
    filePathsToBeDeletedPerPartition: filePaths,
    partitionsToBeDeleted: partitions.filter((partition) => partition.deletePartition).map((partition) => partition.partitionPath),
    extraMetadata: savepoints.length === 0 ? {} : { [SAVEPOINTED_TIMESTAMPS_KEY]: savepoints.join(',') },
  };
}

/** The files a plan deletes, by partition, as storage paths (plans hold absolute URIs of wherever the table was). */
export function planDeletes(plan: HoodieCleanerPlan): { partitionPath: string; fileName: string; path: string }[] {
  const out: { partitionPath: string; fileName: string; path: string }[] = [];
  for (const { files } of planDeletesByPartition(plan)) for (const file of files) out.push(file);
  return out;
}

/** Throw planDeletes' error for the first file the plan names without a path (nothing is built). */
export function assertPlanPaths(plan: HoodieCleanerPlan): void {
  for (const [partitionPath, files] of Object.entries(plan.filePathsToBeDeletedPerPartition ?? {})) {
    for (const file of files) {
      if (file.filePath === null || file.filePath === '') throw new HudiError(`the cleaner plan names a file without a path in partition "${partitionPath}"`);
    }
  }
}

/** planDeletes one partition at a time (in plan order), for an executor that deletes a large plan in parts. */
export function* planDeletesByPartition(
  plan: HoodieCleanerPlan,
): Generator<{ partitionPath: string; files: { partitionPath: string; fileName: string; path: string }[] }> {
  const perPartition = plan.filePathsToBeDeletedPerPartition ?? {};
  for (const [partitionPath, files] of Object.entries(perPartition)) {
    const out: { partitionPath: string; fileName: string; path: string }[] = [];
    for (const file of files) {
      if (file.filePath === null || file.filePath === '') throw new HudiError(`the cleaner plan names a file without a path in partition "${partitionPath}"`);
      const fileName = fileNameOf(file.filePath);
      out.push({ partitionPath, fileName, path: joinPartitionPath(partitionPath, fileName) });
    }
    yield { partitionPath, files: out };
  }
  // Plans of Hudi before version 2 list file names under filesToBeDeletedPerPartition only.
  if (Object.keys(perPartition).length === 0) {
    for (const [partitionPath, names] of Object.entries(plan.filesToBeDeletedPerPartition ?? {})) {
      yield {
        partitionPath,
        files: names.map((name) => {
          const fileName = fileNameOf(name);
          return { partitionPath, fileName, path: joinPartitionPath(partitionPath, fileName) };
        }),
      };
    }
  }
}
