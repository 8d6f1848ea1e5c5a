/**
 * Hudi's metadata table (HoodieBackedTableMetadata / HoodieBackedTableMetadataWriter for table version 6): the
 * merge-on-read table under `.hoodie/metadata` that indexes the data table's files (`files`) and optionally its
 * column ranges (`column_stats`), bloom filters (`bloom_filters`) and record locations (`record_index`).
 *
 * Every data instant T a Hudi writer completes is mirrored by a metadata-table deltacommit at the same time T,
 * completed before T itself; readers apply a deltacommit's blocks only once T is complete on the data table, so a
 * crash in between leaves nothing visible, and rolling T back removes its deltacommit. This class opens the table's
 * state (under the data table's lock), says whether this build can keep it correct, and writes, reads and removes
 * deltacommits.
 */
import { HudiError, MetadataTableError, NotFoundError, UnsupportedTableError } from '../errors.js';
import type { LockLease } from '../lock/port.js';
import { iterateLogBlocks } from '../log-format/index.js';
import { mapWithConcurrency, settleAll } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { HUDI_1X_TABLE_VERSIONS, PROPERTIES_FILE, readTableConfig, type TableConfig } from '../table/config.js';
import type { HoodieCleanMetadata } from '../timeline/avro-files.js';
import { type CommitMetadata, parseCommitMetadata } from '../timeline/commit-metadata.js';
import { compareInstantTimes, type Instant } from '../timeline/instant.js';
import { loadTimeline, Timeline } from '../timeline/timeline.js';
import {
  decideMetadataClean,
  type MetadataCleanResult,
  metadataCleanConfig,
  planMetadataClean,
  resumePendingMetadataCleans,
  scheduleAndRunMetadataClean,
} from './clean.js';
import {
  compactionLimit,
  decideCompaction,
  type MetadataCompactionResult,
  planCompaction,
  resumePendingCompactions,
  scheduleAndRunCompaction,
} from './compaction.js';
import { convertCleanMetadata, type RecordIndexChanges, type StreamedChanges, streamCommitMetadata } from './convert.js';
import { type FileGroupWriteStat, writeDeltaCommit } from './delta-commit.js';
import { fileGroupsOf, type MetadataFileGroup, partitionFolder, unreadableSliceFiles } from './file-groups.js';
import { readLocalFooter, readStoredFooter } from './footers.js';
import {
  isMetadataPartitionType,
  type MetadataPartitionType,
  mapRecordKeyToFileGroupIndex,
  PARTITION_LIST_KEY,
  partitionIdentifier,
  partitionPathOfIdentifier,
} from './partitions.js';
import { readFileGroup } from './reader.js';
import { type ColumnRange, isDeletedRecord, type MergedRecord, type MetadataRecord, recordIndexFileId } from './records.js';
import { METADATA_PARTITIONS_INFLIGHT_KEY, METADATA_PARTITIONS_KEY, metadataTableState } from './state.js';
import {
  completedCompactions,
  listMetadataInstantFiles,
  listMetadataTimeline,
  METADATA_0X_TIMELINE_LAYOUT,
  METADATA_TABLE_METAFOLDER,
  METADATA_TABLE_PROPERTIES,
  metadataInstantPath,
  readMetadataTableProperties,
  validInstantTimes,
} from './timeline.js';

export { COMPACT_MAX_DELTA_COMMITS_KEY, DEFAULT_COMPACT_MAX_DELTA_COMMITS } from './compaction.js';

export interface MetadataCommitInput {
  /** The user's Hudi write properties (column list, bloom filter type, compaction threshold). */
  readonly properties?: ReadonlyMap<string, string>;
  /** Local copies of the commit's new base files by table path: their footers are read there, not from storage. */
  readonly localFiles?: ReadonlyMap<string, string>;
  /** Where records went; required when the table has `record_index` (a function is called only then). */
  readonly recordIndex?: RecordIndexChanges | (() => Promise<RecordIndexChanges>);
  /** The data table's lock lease, checked before the deltacommit completes. */
  readonly lease?: LockLease;
  /** The column ranges of the commit's new log files by table path (merge-on-read appends), for column_stats. */
  readonly logColumnRanges?: ReadonlyMap<string, readonly ColumnRange[]>;
  /** Fault injection for tests: called after each storage write of the deltacommit. */
  readonly afterStorageWrite?: (what: string) => Promise<void>;
  /**
   * The data table as the caller read it under the lock it still holds (hoodie.properties and the timeline, with the
   * instant being committed pending): not read again for the metadata table's services.
   */
  readonly dataTable?: { readonly config: TableConfig; readonly timeline: Timeline };
}

export interface MetadataCommitResult {
  readonly instantTime: string;
  /** Per metadata partition: records written, record-index deletions, log files. */
  readonly partitions: Readonly<Record<string, { readonly records: number; readonly deletes: number; readonly logFiles: number; readonly bytes: number }>>;
  readonly logFiles: readonly FileGroupWriteStat[];
  readonly millis: number;
}

/** What the metadata table's own services did before a commit (each list empty when nothing was due). */
export interface MetadataTableServicesResult {
  readonly compactions: readonly MetadataCompactionResult[];
  readonly cleans: readonly MetadataCleanResult[];
}

export interface MetadataRemoveResult {
  readonly instantTime: string;
  /** Whether the metadata table had the instant (in any state). */
  readonly found: boolean;
  readonly deletedLogFiles: readonly string[];
}

/** A problem that keeps this build from maintaining the metadata table, naming the partition it is about. */
export interface MetadataTableProblem {
  readonly partition: string | undefined;
  readonly problem: string;
  readonly fix: string;
}

export class MetadataTable {
  private constructor(
    readonly storage: Storage,
    readonly config: TableConfig,
    /** hoodie.table.metadata.partitions, as declared. */
    readonly partitions: readonly string[],
    /** hoodie.table.metadata.partitions.inflight. */
    readonly inflightPartitions: readonly string[],
    readonly timeline: Timeline,
    readonly fileGroups: ReadonlyMap<MetadataPartitionType, readonly MetadataFileGroup[]>,
    readonly metadataProperties: ReadonlyMap<string, string> | undefined,
    /** Instant files and slice files whose instant does not parse (listMetadataTimeline, unreadableSliceFiles). */
    readonly unreadableFiles: readonly string[] = [],
  ) {}

  /**
   * The metadata table of the table at `storage` as stored now, or undefined when hoodie.properties declares none.
   * Call it under the table lock when the result decides a commit.
   */
  static async open(storage: Storage, options: { config?: TableConfig } = {}): Promise<MetadataTable | undefined> {
    const config = options.config ?? (await readTableConfig(storage));
    const { partitions, inflightPartitions } = metadataTableState(config);
    if (partitions.length === 0 && inflightPartitions.length === 0) return undefined;
    if (HUDI_1X_TABLE_VERSIONS.includes(config.version)) {
      // A 1.x metadata table is a layout-2 table with 1.x records (column_stats and partition_stats on by default):
      // keeping it is not built, and a commit that left it behind would hide its files from Hudi's readers.
      throw new UnsupportedTableError(
        `the metadata table of this table version ${config.version} table (partitions ${[...partitions, ...inflightPartitions].join(', ')}) is not kept by this build yet`,
        {
          location: storage.uriOf(PROPERTIES_FILE),
          fix: 'pass hoodie.metadata.enable=false to drop it first, as a Hudi writer with that setting does (Hudi rebuilds it on its next write with the metadata table on), or run this service with Hudi 1.x',
        },
      );
    }
    // Independent reads, sent at once: on S3 each is a round trip, paid under the lock.
    const partitionTypes = [...new Set([...partitions, ...inflightPartitions])].filter(isMetadataPartitionType);
    const [metadataProperties, listing, listings] = await settleAll([
      readMetadataTableProperties(storage),
      listMetadataTimeline(storage),
      mapWithConcurrency(partitionTypes, partitionTypes.length || 1, async (partition) => (await storage.listDir(partitionFolder(partition))).files),
    ]);
    const timeline = new Timeline(listing.instants);
    const unreadable = listing.unreadable.map((name) => `${METADATA_TABLE_METAFOLDER}/${name}`);
    const fileGroups = new Map<MetadataPartitionType, MetadataFileGroup[]>();
    for (const [index, partition] of partitionTypes.entries()) {
      const files = listings[index]!;
      fileGroups.set(partition, fileGroupsOf(partition, files, timeline));
      unreadable.push(...unreadableSliceFiles(files));
    }
    return new MetadataTable(storage, config, partitions, inflightPartitions, timeline, fileGroups, metadataProperties, unreadable);
  }

  /** Whether `files` is ready (readers use the metadata table only then). */
  get isAvailable(): boolean {
    return this.partitions.includes('files');
  }

  /** The partitions commits update: the ready ones and those being built. */
  get updatedPartitions(): Set<MetadataPartitionType> {
    return new Set([...this.partitions, ...this.inflightPartitions].filter(isMetadataPartitionType));
  }

  /** Why a commit from here could not keep the metadata table correct; empty when it can. */
  problems(options: { properties?: ReadonlyMap<string, string> } = {}): MetadataTableProblem[] {
    const problems: MetadataTableProblem[] = [];
    const rebuild = 'a Spark write with hoodie.metadata.enable=false deletes it; a later one with the metadata table on rebuilds it';
    for (const partition of this.inflightPartitions) {
      problems.push({
        partition,
        problem: `partition ${partition} is being built (${METADATA_PARTITIONS_INFLIGHT_KEY}), by Hudi's async indexer or an initialization under way`,
        fix: 'wait until Hudi finishes building it, then retry',
      });
    }
    // Never append to a slice whose successor we might not see: one unparsed compaction hides the latest slice.
    if (this.unreadableFiles.length > 0) {
      const [first, ...rest] = this.unreadableFiles;
      problems.push({
        partition: undefined,
        problem: `${this.storage.uriOf(first!)}${rest.length > 0 ? ` and ${rest.length} more file(s)` : ''} name an instant outside Hudi's instant-time grammar, so the latest file slices cannot be told`,
        fix: "remove a file that is not Hudi's; one a newer Hudi wrote needs that Hudi",
      });
    }
    if (this.metadataProperties === undefined) {
      problems.push({
        partition: undefined,
        problem: `hoodie.properties declares metadata-table partitions but ${METADATA_TABLE_PROPERTIES} is missing`,
        fix: rebuild,
      });
      return problems;
    }
    const get = (key: string) => this.metadataProperties!.get(key);
    if (
      get('hoodie.table.type') !== 'MERGE_ON_READ' ||
      get('hoodie.table.base.file.format') !== 'HFILE' ||
      get('hoodie.table.version') !== String(this.config.version)
    ) {
      problems.push({
        partition: undefined,
        problem: `the metadata table is ${get('hoodie.table.type') ?? '?'} with ${get('hoodie.table.base.file.format') ?? '?'} base files at version ${get('hoodie.table.version') ?? '?'}, not merge-on-read HFile at the data table's version ${this.config.version}`,
        fix: rebuild,
      });
    }
    if (!this.partitions.includes('files')) {
      problems.push({ partition: 'files', problem: `${METADATA_PARTITIONS_KEY} lacks files, which every other partition needs`, fix: rebuild });
    }
    for (const partition of this.partitions) {
      if (!isMetadataPartitionType(partition)) {
        problems.push({
          partition,
          problem: `partition ${partition} is not one Hudi 0.14/0.15 has (files, column_stats, bloom_filters, record_index)`,
          fix: 'this table was written by a newer Hudi; use that Hudi',
        });
      } else if ((this.fileGroups.get(partition) ?? []).length === 0) {
        problems.push({ partition, problem: `partition ${partition} has no committed file group`, fix: rebuild });
      }
    }
    // A compaction completes as a commit (a log compaction as a deltacommit) at the same time. Pending compactions
    // are finished by the next commit (runTableServices); log compaction is not something this build does.
    const completedTimes = new Set(this.timeline.completed().map((i) => i.time));
    const pending = this.timeline.pending().filter((i) => i.action === 'logcompaction' && !completedTimes.has(i.time));
    for (const instant of pending) {
      problems.push({
        partition: undefined,
        problem: `the metadata table has a pending ${instant.action} ${instant.time}; new log files would belong to the slice it is writing`,
        fix: 'run one Spark write on the table (Hudi finishes pending metadata log compactions first), then retry',
      });
    }
    compactionLimit(options.properties);
    return problems;
  }

  /** Throw MetadataTableError naming the first problem; `what` names the refused operation ('a write'). */
  assertMaintainable(what: string, options: { properties?: ReadonlyMap<string, string> } = {}): void {
    const problems = this.problems(options);
    if (problems.length === 0) return;
    const first = problems[0]!;
    throw new MetadataTableError(
      `${what} cannot keep Hudi's metadata table correct: ${problems.map((p) => p.problem).join('; ')}`,
      this.partitions,
      this.inflightPartitions,
      {
        location: this.storage.uriOf(
          first.partition === undefined || !isMetadataPartitionType(first.partition) ? PROPERTIES_FILE : partitionFolder(first.partition),
        ),
        fix: first.fix,
      },
    );
  }

  /**
   * Write the deltacommit mirroring data instant `instantTime` (a commit or replacecommit about to complete, whose
   * metadata is `metadata`), completed when this returns; the caller completes the data instant after it, under the
   * same lock. An earlier attempt at the same instant is removed first (Hudi's re-attempted commit).
   */
  async commit(instantTime: string, metadata: CommitMetadata, input: MetadataCommitInput = {}): Promise<MetadataCommitResult> {
    const started = Date.now();
    this.assertMaintainable(`committing ${instantTime}`, input.properties === undefined ? {} : { properties: input.properties });
    if (this.timeline.instants.some((i) => i.time === instantTime)) await this.removeDeltaCommit(instantTime);
    const partitions = this.updatedPartitions;
    const recordIndex =
      partitions.has('record_index') && input.recordIndex !== undefined
        ? typeof input.recordIndex === 'function'
          ? await input.recordIndex()
          : input.recordIndex
        : undefined;
    const changes = streamCommitMetadata(metadata, {
      instantTime,
      bloomFileGroups: this.fileGroups.get('bloom_filters')?.length ?? 0,
      partitions,
      populateMetaFields: this.config.populateMetaFields,
      footer: async (path, size) => {
        const local = input.localFiles?.get(path);
        return local !== undefined ? readLocalFooter(local) : readStoredFooter(this.storage, path, size > 0 ? size : undefined);
      },
      ...(input.properties === undefined ? {} : { properties: input.properties }),
      ...(recordIndex === undefined ? {} : { recordIndex }),
      ...(input.logColumnRanges === undefined ? {} : { logColumnRanges: input.logColumnRanges }),
    });
    return this.writeChanges(instantTime, changes, input, started);
  }

  /**
   * Write the deltacommit mirroring clean `instantTime` (about to complete, its metadata `metadata`), as Hudi's
   * convertMetadataToRecords for a clean: each cleaned file deleted from `files` (and a partition the clean removed
   * from the partition list), and, where the table has them, column_stats and bloom_filters tombstones for each
   * cleaned base file. `tableSchema` (the table's Avro schema, read only for column_stats) gives the indexed
   * columns when no column list is configured. An earlier attempt at the same instant is removed first.
   */
  async commitClean(
    instantTime: string,
    metadata: HoodieCleanMetadata,
    input: MetadataCommitInput & { readonly tableSchema?: () => Promise<string | undefined> } = {},
  ): Promise<MetadataCommitResult> {
    const started = Date.now();
    this.assertMaintainable(`completing clean ${instantTime}`, input.properties === undefined ? {} : { properties: input.properties });
    if (this.timeline.instants.some((i) => i.time === instantTime)) await this.removeDeltaCommit(instantTime);
    const partitions = this.updatedPartitions;
    const tableSchemaText = partitions.has('column_stats') ? await input.tableSchema?.() : undefined;
    const changes = convertCleanMetadata(metadata, {
      instantTime,
      partitions,
      populateMetaFields: this.config.populateMetaFields,
      ...(input.properties === undefined ? {} : { properties: input.properties }),
      ...(tableSchemaText === undefined ? {} : { tableSchemaText }),
    });
    return this.writeChanges(instantTime, changes, input, started);
  }

  private async writeChanges(
    instantTime: string,
    changes: ReadonlyMap<MetadataPartitionType, StreamedChanges>,
    input: MetadataCommitInput,
    started: number,
  ): Promise<MetadataCommitResult> {
    const logFiles = await writeDeltaCommit(this.storage, {
      instantTime,
      changes,
      fileGroups: this.fileGroups,
      ...(input.lease === undefined ? {} : { lease: input.lease }),
      ...(input.afterStorageWrite === undefined ? {} : { afterStorageWrite: input.afterStorageWrite }),
    });
    const summary: Record<string, { records: number; deletes: number; logFiles: number; bytes: number }> = {};
    for (const stat of logFiles) {
      const entry = (summary[stat.partition] ??= { records: 0, deletes: 0, logFiles: 0, bytes: 0 });
      entry.records += stat.records;
      entry.deletes += stat.deletes;
      entry.logFiles += 1;
      entry.bytes += stat.bytes;
    }
    return { instantTime, partitions: summary, logFiles, millis: Date.now() - started };
  }

  /**
   * Remove the deltacommit of data instant `instantTime` (any state), as rolling back a failed data instant must
   * before the data rollback completes (from then on readers would trust its blocks again): the completed file
   * first (readers stop applying it), then the log files it wrote, then its inflight and requested files and
   * markers. Refuses when a metadata compaction after it already folded its blocks into base files.
   */
  async removeDeltaCommit(instantTime: string, lease?: LockLease): Promise<MetadataRemoveResult> {
    const files = (await listMetadataInstantFiles(this.storage)).filter((i) => i.time === instantTime && i.action === 'deltacommit');
    if (files.length === 0) return { instantTime, found: false, deletedLogFiles: [] };
    const later = completedCompactions(this.timeline).find((c) => compareInstantTimes(c.time, instantTime) > 0);
    if (later !== undefined) {
      throw new HudiError(`the metadata table compacted at ${later.time}, after deltacommit ${instantTime}: its records are in the base files now`, {
        location: this.storage.uriOf(metadataInstantPath(later)),
        fix: 'this needs a metadata-table restore; rebuild the metadata table instead (a Spark write with hoodie.metadata.enable=false, then one with it on)',
      });
    }
    const logs = await this.logFilesOf(instantTime, files);
    await lease?.assertHeld();
    const state = (s: Instant['state']) => files.filter((f) => f.state === s).map((f) => metadataInstantPath(f));
    await this.storage.delete(state('COMPLETED'));
    await this.storage.delete(logs);
    await this.storage.delete(state('INFLIGHT'));
    await this.storage.delete(state('REQUESTED'));
    const markers = await this.storage.listRecursive(`${METADATA_TABLE_METAFOLDER}/.temp/${instantTime}`);
    await this.storage.delete(markers.map((m) => m.path));
    return { instantTime, found: true, deletedLogFiles: logs };
  }

  /**
   * The log files holding blocks of `instantTime`: named by its completed write stats, or found in the file groups
   * its inflight workload names (or, without one, in every file group) by their blocks' INSTANT_TIME. A log file
   * that also holds another instant's blocks (storage with append) cannot be deleted: refused.
   */
  private async logFilesOf(instantTime: string, files: readonly Instant[]): Promise<string[]> {
    const found = new Set<string>();
    const completed = files.find((f) => f.state === 'COMPLETED');
    const inflight = files.find((f) => f.state === 'INFLIGHT');
    let fileIds: Set<string> | undefined;
    for (const instant of [completed, inflight]) {
      if (instant === undefined) continue;
      const text = Buffer.from(await this.storage.get(metadataInstantPath(instant))).toString('utf8');
      const metadata = parseCommitMetadata(text, this.storage.uriOf(metadataInstantPath(instant)));
      for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) {
        for (const stat of stats) {
          if (stat.path !== null) found.add(`.hoodie/metadata/${stat.path}`);
          if (stat.fileId !== '') (fileIds ??= new Set()).add(`${partition}/${stat.fileId}`);
        }
      }
    }
    // Log files are written after the inflight file: without one, there are none.
    const candidates =
      completed === undefined && inflight === undefined
        ? []
        : [...this.fileGroups.values()]
            .flat()
            .flatMap((group) => (fileIds === undefined || fileIds.has(`${group.partition}/${group.fileId}`) ? group.allLogFiles.map((f) => f.path) : []));
    await mapWithConcurrency(
      candidates.filter((path) => !found.has(path)),
      8,
      async (path) => {
        const times = await blockInstants(this.storage, path);
        if (times.has(instantTime)) found.add(path);
      },
    );
    for (const path of found) {
      const times = await blockInstants(this.storage, path);
      const others = [...times].filter((t) => t !== instantTime);
      if (others.length > 0) {
        throw new HudiError(`metadata-table log file ${path} holds blocks of ${instantTime} and of ${others.join(', ')}; deleting it would lose the others`, {
          location: this.storage.uriOf(path),
          fix: 'roll this instant back with Hudi, which writes a rollback block instead',
        });
      }
    }
    return [...found];
  }

  /**
   * The metadata table's own services before a commit adds its deltacommit, as Hudi's performTableServices: finish
   * pending compactions and cleans, clean when due (clean.ts), then compact when due (compaction.ts), all in one
   * pass (Hudi does not stop after the first that ran). Each step sees the table as the previous one left it. Call it
   * under the data table's lock; when anything ran, open the table again (its file slices changed).
   */
  async runTableServices(input: Pick<MetadataCommitInput, 'properties' | 'lease' | 'dataTable'> = {}): Promise<MetadataTableServicesResult> {
    const known = input.dataTable?.timeline;
    const dataTimeline =
      known !== undefined && known.layout.version === METADATA_0X_TIMELINE_LAYOUT.version
        ? known
        : await loadTimeline(this.storage, METADATA_0X_TIMELINE_LAYOUT);
    const lease = input.lease;
    const contextOf = async (table: MetadataTable) => ({
      metadataTimeline: table.timeline,
      validInstants: await validInstantTimes(this.storage, dataTimeline, table.timeline),
      ...(lease === undefined ? {} : { lease }),
    });
    const reopened = async (): Promise<MetadataTable> => (await MetadataTable.open(this.storage)) ?? this;
    const compactions = [...(await resumePendingCompactions(this.storage, await contextOf(this)))];
    const cleans = [...(await resumePendingMetadataCleans(this.storage, this.timeline, lease))];
    let table: MetadataTable = compactions.length > 0 || cleans.length > 0 ? await reopened() : this;
    const clean = decideMetadataClean(table.timeline);
    if (clean.instantTime !== undefined) {
      const plan = await planMetadataClean(this.storage, table.timeline, table.fileGroups, metadataCleanConfig(input.properties));
      if (plan !== undefined) {
        cleans.push(await scheduleAndRunMetadataClean(this.storage, clean.instantTime, plan, lease));
        table = await reopened();
      }
    }
    const decision = decideCompaction(dataTimeline, table.timeline, compactionLimit(input.properties));
    if (decision.instantTime !== undefined) {
      compactions.push(await scheduleAndRunCompaction(this.storage, decision.instantTime, planCompaction(table.fileGroups), await contextOf(table)));
    }
    return { compactions, cleans };
  }

  /** A reader of the metadata table as it is now, against the data table's timeline. */
  async reader(dataTimeline?: Timeline): Promise<MetadataTableReader> {
    const data = dataTimeline ?? (await loadTimeline(this.storage, METADATA_0X_TIMELINE_LAYOUT));
    return new MetadataTableReader(this, await validInstantTimes(this.storage, data, this.timeline));
  }
}

/** The INSTANT_TIME of every block of a log file (missing files hold none). */
async function blockInstants(storage: Storage, path: string): Promise<Set<string>> {
  const times = new Set<string>();
  let bytes: Uint8Array;
  try {
    bytes = await storage.get(path);
  } catch (error) {
    if (error instanceof NotFoundError) return times;
    throw error;
  }
  for (const block of iterateLogBlocks(bytes, storage.uriOf(path))) {
    const time = block.header.INSTANT_TIME;
    if (time !== undefined) times.add(time);
  }
  return times;
}

/** Merged reads of metadata-table partitions (what Hudi's metadata-based file listing and index lookups see). */
export class MetadataTableReader {
  constructor(
    readonly table: MetadataTable,
    readonly validInstants: ReadonlySet<string>,
  ) {}

  /** Every live record of a partition, by key. */
  async readPartition(partition: MetadataPartitionType): Promise<Map<string, MetadataRecord>> {
    const out = new Map<string, MetadataRecord>();
    for (const group of this.table.fileGroups.get(partition) ?? []) {
      for (const [key, record] of await readFileGroup(this.table.storage, group, {
        metadataTimeline: this.table.timeline,
        validInstants: this.validInstants,
      })) {
        if (!isDeletedRecord(record)) out.set(key, record);
      }
    }
    return out;
  }

  /** The records of some keys, reading only the file groups they map to. */
  async readKeys(partition: MetadataPartitionType, keys: Iterable<string>): Promise<Map<string, MergedRecord>> {
    const groups = this.table.fileGroups.get(partition) ?? [];
    const byGroup = new Map<number, Set<string>>();
    for (const key of keys) {
      const index = mapRecordKeyToFileGroupIndex(key, groups.length);
      (byGroup.get(index) ?? byGroup.set(index, new Set()).get(index)!).add(key);
    }
    const out = new Map<string, MergedRecord>();
    for (const [index, wanted] of byGroup) {
      const group = groups[index];
      if (group === undefined) continue;
      for (const [key, record] of await readFileGroup(
        this.table.storage,
        group,
        { metadataTimeline: this.table.timeline, validInstants: this.validInstants },
        { keys: wanted },
      ))
        out.set(key, record);
    }
    return out;
  }

  /** The data partitions `files` lists (paths as in the data table: "" for a non-partitioned table). */
  async allPartitionPaths(): Promise<string[]> {
    const record = (await this.readKeys('files', [PARTITION_LIST_KEY])).get(PARTITION_LIST_KEY);
    if (record === undefined || isDeletedRecord(record) || (record.type !== 1 && record.type !== 2)) return [];
    return [...record.files]
      .filter(([, info]) => !info.isDeleted)
      .map(([name]) => partitionPathOfIdentifier(name))
      .sort();
  }

  /** The files `files` lists for a data partition, with their sizes. */
  async filesInPartition(partitionPath: string): Promise<Map<string, number>> {
    const key = partitionIdentifier(partitionPath);
    const record = (await this.readKeys('files', [key])).get(key);
    const out = new Map<string, number>();
    if (record === undefined || isDeletedRecord(record) || (record.type !== 1 && record.type !== 2)) return out;
    for (const [name, info] of record.files) if (!info.isDeleted) out.set(name, info.size);
    return out;
  }

  /** Where the record index says each key is (partition and file id). */
  async recordLocations(recordKeys: Iterable<string>): Promise<Map<string, { partitionPath: string; fileId: string; instantTimeMillis: bigint | null }>> {
    const out = new Map<string, { partitionPath: string; fileId: string; instantTimeMillis: bigint | null }>();
    for (const [key, record] of await this.readKeys('record_index', recordKeys)) {
      if (isDeletedRecord(record) || record.type !== 5) continue;
      out.set(key, {
        partitionPath: record.recordIndex.partitionName ?? '',
        fileId: recordIndexFileId(record.recordIndex),
        instantTimeMillis: record.recordIndex.instantTime,
      });
    }
    return out;
  }
}
