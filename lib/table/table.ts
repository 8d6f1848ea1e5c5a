/**
 * A Hudi table on a Storage: its config, timeline, schema and file-system view (HoodieTableMetaClient's job), and
 * withTableLock, the way every commit path works on it under the table lock.
 */
import { HudiError, TableVersionChangedError } from '../errors.js';
import { type LockLease, type LockProvider, withLock } from '../lock/port.js';
import { mapWithConcurrency, settleAll } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { archiveFolder } from '../timeline/archived/archived-timeline.js';
import { type ArchivedHistory, loadArchivedHistory } from '../timeline/archived/history.js';
import { planFileGroups } from '../timeline/clustering-plan.js';
import { pendingCompactions, readCompactionPlan } from '../timeline/compaction-plan.js';
import { CompletionTimes } from '../timeline/completion-times.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { historyAsArchivedTimeline, historyCompletionTimes, readTimelineHistory, type TimelineHistory } from '../timeline/history/index.js';
import { compareInstantTimes, isValidInstantTime } from '../timeline/instant.js';
import { type TimelineLayout, timelineLayoutOf } from '../timeline/layout.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { latestCommitSchema, pendingClusteringPlans } from '../timeline/queries.js';
import { loadTimeline, readCommitMetadata, Timeline, WRITE_ACTIONS } from '../timeline/timeline.js';
import { fileNameOf, folderNameOf } from '../util/paths.js';
import { assertSupported, PROPERTIES_FILE, readTableConfig, type TableAccessMode, type TableConfig } from './config.js';
import { latestQueryInstant, sliceByCompletionTime } from './file-group.js';
import { FileSystemView, type ListedPartition } from './file-system-view.js';
import { assertCommittedFilesPresent } from './missing-files.js';
import { type AvroRecordSchema, parseAvroRecordSchema, withoutMetaFields } from './schema.js';
import { assertTimeTravelAllowed } from './time-travel.js';

export const PARTITION_METAFILE = '.hoodie_partition_metadata';
/** How many folders are listed at once while discovering partitions. */
const LISTING_CONCURRENCY = 16;

export interface OpenTableOptions {
  readonly mode?: TableAccessMode;
  readonly allowUnsupported?: boolean;
}

/** The table's schema: the Avro text as recorded, and the record schema without meta fields. */
export interface TableSchema {
  readonly text: string;
  readonly schema: AvroRecordSchema;
  /** Where it was found: the latest completed write's extraMetadata, or hoodie.table.create.schema. */
  readonly from: 'commit' | 'create';
}

export class HudiTable {
  /** Layout 2's LSM history, once read (timelineHistory). */
  private history: Promise<TimelineHistory> | undefined;

  private constructor(
    readonly storage: Storage,
    readonly config: TableConfig,
    readonly timeline: Timeline,
    private readonly options: OpenTableOptions,
  ) {}

  /** Open a table, refusing versions and types this build does not handle. */
  static async open(storage: Storage, options: OpenTableOptions = {}): Promise<HudiTable> {
    return HudiTable.withTimeline(storage, supportedConfig(storage, await readTableConfig(storage), options), options);
  }

  private static async withTimeline(storage: Storage, config: TableConfig, options: OpenTableOptions): Promise<HudiTable> {
    return new HudiTable(storage, config, await loadTimeline(storage, timelineLayoutOf(config)), options);
  }

  /**
   * Re-read the config and the timeline (after another writer may have committed), checked as when opened; a table
   * whose version or timeline layout changed meanwhile is refused (TableVersionChangedError).
   */
  async reload(): Promise<HudiTable> {
    const config = await this.assertUnchanged();
    return HudiTable.withTimeline(this.storage, supportedConfig(this.storage, config, this.options), this.options);
  }

  /**
   * The table's config as stored now, refused (TableVersionChangedError) when its version or timeline layout is no
   * longer the one this table was opened at: the check of reload() without reading the timeline.
   */
  async assertUnchanged(): Promise<TableConfig> {
    const config = await readTableConfig(this.storage);
    const from = { version: this.config.version, timelineLayoutVersion: this.config.timelineLayoutVersion };
    const to = { version: config.version, timelineLayoutVersion: config.timelineLayoutVersion };
    // A run that began at one version never goes on at another: its plan, paths and files are the old version's.
    if (from.version !== to.version || from.timelineLayoutVersion !== to.timelineLayoutVersion) {
      throw new TableVersionChangedError(from, to, { location: this.storage.uriOf(PROPERTIES_FILE) });
    }
    return config;
  }

  /** Where the timeline is and how it is named and sliced (timeline layout 1 or 2). */
  get layout(): TimelineLayout {
    return this.timeline.layout;
  }

  /**
   * The table's schema as Hudi's TableSchemaResolver finds it: the latest completed write that recorded one
   * (extraMetadata.schema), else hoodie.table.create.schema; undefined when neither has one.
   */
  async schema(): Promise<TableSchema | undefined> {
    const fromCommit = await latestCommitSchema(this.storage, this.timeline);
    const text = fromCommit ?? (this.config.createSchema || undefined);
    if (text === undefined) return undefined;
    const location = this.storage.uriOf(fromCommit === undefined ? PROPERTIES_FILE : METAFOLDER);
    return { text, schema: withoutMetaFields(parseAvroRecordSchema(text, location)), from: fromCommit === undefined ? 'create' : 'commit' };
  }

  /** The schema, or a HudiError saying `purpose` (e.g. "clustering it") needs one. */
  async requireSchema(purpose: string): Promise<TableSchema> {
    const found = await this.schema();
    if (found !== undefined) return found;
    throw new HudiError('no completed commit records the table schema (extraMetadata.schema), and hoodie.table.create.schema is not set', {
      location: this.storage.uriOf(METAFOLDER),
      fix: `write to the table with Hudi (or this tool) once before ${purpose}`,
    });
  }

  get isPartitioned(): boolean {
    return this.config.partitionFields.length > 0;
  }

  /** The view of committed file groups, optionally as of an instant time (time travel). */
  async fileSystemView(options: { asOf?: string } = {}): Promise<FileSystemView> {
    if (options.asOf !== undefined && !isValidInstantTime(options.asOf)) {
      throw new HudiError(`"${options.asOf}" is not an instant time`, {
        fix: 'give --as-of as yyyyMMddHHmmssSSS, e.g. 20240707001301554 (see `hudi-serverless timeline`)',
      });
    }
    // Before any listing, on the active timeline alone, as Spark's file index (0.15 and 1.x) validates the as-of time.
    if (options.asOf !== undefined) await assertTimeTravelAllowed(this.storage, this.timeline, options.asOf);
    if (this.layout.fileSlicing === 'completion-time') return this.completionTimeView(options.asOf);
    let timeline = this.timeline;
    let history: ArchivedHistory | undefined;
    if (options.asOf !== undefined) {
      // Older than the active timeline: its instants are on the archived timeline.
      history = await this.archivedHistoryBefore(options.asOf);
      timeline = (history === undefined ? timeline : new Timeline([...history.instants, ...timeline.instants])).asOf(options.asOf);
    }
    const [partitions, replacedFileGroups, pendingClusteringFileGroups] = await settleAll([
      listPartitions(this.storage),
      this.replacedFileGroups(timeline, history),
      this.pendingClusteringFileGroups(),
    ]);
    // The current view only: time travel may reach versions the cleaner removed by design.
    if (options.asOf === undefined) await assertCommittedFilesPresent(this.storage, timeline, partitions, () => loadTimeline(this.storage, this.layout));
    const queryInstant = options.asOf ?? this.timeline.lastCompletedWrite()?.time;
    return new FileSystemView({
      partitions,
      timeline,
      replacedFileGroups,
      pendingClusteringFileGroups,
      ...(queryInstant === undefined ? {} : { queryInstant }),
    });
  }

  /**
   * Layout 2's view (Hudi 1.x's getLatestMergedFileSlicesBeforeOrOn): the whole active timeline, slices cut by the
   * query instant (the as-of time, else the read timeline's last instant), logs joined by completion time.
   */
  private async completionTimeView(asOf: string | undefined): Promise<FileSystemView> {
    const timeline = this.timeline;
    const queryInstant = asOf ?? latestQueryInstant(timeline);
    // Older than the active timeline too, as Hudi 1.x: its slices count as committed, the LSM history gives completion times.
    const replaceInstants = timeline
      .completed()
      .filter((instant) => instant.action === 'replacecommit' && (queryInstant === undefined || compareInstantTimes(instant.time, queryInstant) <= 0));
    const [partitions, replaced, pendingClusteringFileGroups, pendingCompactionGroups, archived] = await settleAll([
      listPartitions(this.storage),
      mapWithConcurrency(replaceInstants, LISTING_CONCURRENCY, (instant) => readCommitMetadata(this.storage, instant, this.layout)),
      this.pendingClusteringFileGroups(),
      this.pendingCompactionFileGroups(),
      this.timelineHistory().then(historyCompletionTimes),
    ]);
    const replacedFileGroups = new Set<string>();
    for (const metadata of replaced) {
      for (const [partition, fileIds] of Object.entries(metadata.partitionToReplaceFileIds ?? {}))
        for (const fileId of fileIds) replacedFileGroups.add(fileGroupKey(partition, fileId));
    }
    if (asOf === undefined) await assertCommittedFilesPresent(this.storage, timeline, partitions, async () => (await this.reload()).timeline);
    const slicing = {
      timeline,
      completionTimes: new CompletionTimes(timeline, archived, this.storage.uriOf(this.historyFolder)),
      queryInstant,
      replacedFileGroups,
      pendingCompactions: pendingCompactionGroups,
    };
    const byPartition = new Map(partitions.map((partition) => [partition.partitionPath, sliceByCompletionTime(partition, slicing)]));
    return new FileSystemView({ partitions, timeline, replacedFileGroups, pendingClusteringFileGroups, completionSlicing: { queryInstant, byPartition } });
  }

  /**
   * The archived timeline's folder: layout 1's `.hoodie/<hoodie.archivelog.folder>`, layout 2's LSM history
   * (`.hoodie/<hoodie.timeline.path>/<hoodie.timeline.history.path>`).
   */
  get archiveFolder(): string {
    return this.layout.version === 2 ? this.historyFolder : archiveFolder(this.config.archiveLogFolder);
  }

  /** The archived instants: layout 1's archived timeline, layout 2's LSM history. */
  async archivedHistory(): Promise<ArchivedHistory> {
    if (this.layout.version === 2) return historyAsArchivedTimeline(await this.timelineHistory());
    return loadArchivedHistory(this.storage, this.config.archiveLogFolder);
  }

  /** Layout 2's LSM history, read once per opened table: the file-system view and the archived timeline share it. */
  private timelineHistory(): Promise<TimelineHistory> {
    this.history ??= readTimelineHistory(this.storage, this.historyFolder);
    return this.history;
  }

  /** Layout 2: the LSM history's folder (`.hoodie/<hoodie.timeline.path>/<hoodie.timeline.history.path>`). */
  get historyFolder(): string {
    return `${this.layout.folder}/${this.config.timelineHistoryPath}`;
  }

  /** File groups in a pending compaction's plan: fileGroupKey → the compaction's instant (the newest one wins). */
  async pendingCompactionFileGroups(): Promise<Map<string, string>> {
    const pending = pendingCompactions(this.timeline);
    const plans = await mapWithConcurrency(pending, LISTING_CONCURRENCY, (instant) =>
      readCompactionPlan(this.storage, instant.time, { metaFolder: this.layout.folder }),
    );
    const groups = new Map<string, string>();
    pending.forEach((instant, index) => {
      for (const operation of plans[index]!.operations) groups.set(fileGroupKey(operation.partitionPath, operation.fileId), instant.time);
    });
    return groups;
  }

  /** The archived timeline, when `time` is before the first write on the active timeline and anything is archived. */
  private async archivedHistoryBefore(time: string): Promise<ArchivedHistory | undefined> {
    const firstWrite = this.timeline.instants.find((i) => WRITE_ACTIONS.has(i.action));
    if (firstWrite !== undefined && compareInstantTimes(time, firstWrite.time) >= 0) return undefined;
    const history = await loadArchivedHistory(this.storage, this.config.archiveLogFolder);
    return history.instants.length === 0 ? undefined : history;
  }

  /** File groups named in completed replacecommits on the given timeline (archived ones from `history`). */
  async replacedFileGroups(timeline: Timeline = this.timeline, history?: ArchivedHistory): Promise<Set<string>> {
    const active = new Set(this.timeline.instants.map((i) => `${i.time}.${i.action}`));
    const replaceInstants = timeline.completed().filter((i) => i.action === 'replacecommit' && active.has(`${i.time}.${i.action}`));
    const metadatas = await mapWithConcurrency(replaceInstants, LISTING_CONCURRENCY, (instant) => readCommitMetadata(this.storage, instant, this.layout));
    const replaced = new Set<string>();
    for (const [key, time] of history?.replacedFileGroups ?? []) if (timeline.has(time, 'replacecommit')) replaced.add(key);
    for (const metadata of metadatas) {
      for (const [partition, fileIds] of Object.entries(metadata.partitionToReplaceFileIds ?? {})) {
        for (const fileId of fileIds) replaced.add(fileGroupKey(partition, fileId));
      }
    }
    return replaced;
  }

  /** File groups that a pending (requested or inflight) clustering plan will rewrite. */
  async pendingClusteringFileGroups(): Promise<Set<string>> {
    const plans = await pendingClusteringPlans(this.storage, this.timeline);
    return new Set(plans.flatMap(({ plan }) => [...planFileGroups(plan)]));
  }
}

/** The config, once the access mode allows it (unless the caller allows unsupported tables). */
function supportedConfig(storage: Storage, config: TableConfig, options: OpenTableOptions): TableConfig {
  if (!options.allowUnsupported) assertSupported(config, storage.uriOf(PROPERTIES_FILE), options.mode ?? 'read');
  return config;
}

/**
 * Every commit path's pattern: take the table lock, re-read the table (config and timeline: another writer may
 * have committed, or changed the config, while we waited), run `work` on that fresh table, release the lock.
 * Decisions made on the table from before the lock must be checked again on the one `work` gets.
 */
export async function withTableLock<T>(
  table: HudiTable,
  lock: LockProvider,
  work: (current: HudiTable, lease: LockLease) => Promise<T>,
  options: { readonly waitMs?: number | undefined } = {},
): Promise<T> {
  return withLock(lock, async (lease) => work(await table.reload(), lease), options.waitMs === undefined ? {} : { waitMs: options.waitMs });
}

/**
 * Discover partitions by walking folders from the base path (bounded parallel listing); a folder holding
 * `.hoodie_partition_metadata` is a partition and its files are kept. Folders starting with '.' are skipped (a plain `__HIVE_DEFAULT_PARTITION__` folder is a partition).
 */
export async function listPartitions(storage: Storage): Promise<ListedPartition[]> {
  const found: ListedPartition[] = [];
  let frontier: string[] = [''];
  while (frontier.length > 0) {
    const listings = await mapWithConcurrency(frontier, LISTING_CONCURRENCY, async (dir) => ({ dir, listing: await storage.listDir(dir) }));
    const next: string[] = [];
    for (const { dir, listing } of listings) {
      const names = listing.files.map((f) => ({ name: fileNameOf(f.path), size: f.size }));
      if (names.some((f) => f.name === PARTITION_METAFILE)) {
        found.push({ partitionPath: dir, files: names });
        continue;
      }
      for (const sub of listing.dirs) {
        const name = folderNameOf(sub);
        if (name.startsWith('.')) continue;
        next.push(dir === '' ? name : `${dir}/${name}`);
      }
    }
    frontier = next;
  }
  return found.sort((a, b) => a.partitionPath.localeCompare(b.partitionPath));
}
