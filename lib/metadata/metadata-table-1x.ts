/**
 * Keeping a Hudi 1.x metadata table (table versions 8 and 9) on our copy-on-write write commits, as Hudi 1.0.2 /
 * 1.1.1's HoodieBackedTableMetadataWriter does: per data instant T a deltacommit at T in the layout-2 timeline
 * (`.hoodie/metadata/.hoodie/timeline/`), a new log file per touched file group named by T, HFile blocks of the
 * 1.x records (convert-1x.ts: files, column_stats, partition_stats, bloom_filters), completed as
 * `T_<completion>.deltacommit` before the data commit completes.
 *
 * Clusterings, compactions and cleans (commitClean) get theirs too; rollbacks and second attempts roll the
 * deltacommit back (rollback-1x.ts), and each deltacommit of ours first rolls back a killed writer's pending ones
 * (withoutFailedWrites). Before a write's deltacommit a due clean, compaction and archival run (services-1x.ts, Hudi's
 * performTableServices). The data table's archive reads the metadata table's latest compaction only.
 */
import { BLOOM_FILTER_KEYS } from '../base-file/bloom-filter.js';
import { readKey } from '../config/index.js';
import { HudiError, MetadataTableError } from '../errors.js';
import type { LockLease } from '../lock/port.js';
import { isLogFileName, parseLogFileName, writeLogFile } from '../log-format/index.js';
import { IS_DELETED_FIELD } from '../merge-on-read/payload-merge.js';
import type { ThriftStruct } from '../parquet/thrift.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { PROPERTIES_FILE, type TableConfig } from '../table/config.js';
import { parseBaseFileName } from '../table/file-system-view.js';
import { tableLayout } from '../table/layouts.js';
import { type AvroRecordSchema, parseAvroRecordSchema, withMetaFields } from '../table/schema.js';
import { HudiTable } from '../table/table.js';
import { decodeTimelineAvro, type HoodieCleanMetadata } from '../timeline/avro-files.js';
import { type CommitMetadata, newWriteStat, type WriteStat } from '../timeline/commit-metadata.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { HEARTBEAT_EXPIRY_MS, heartbeatPath } from '../timeline/heartbeat.js';
import { compareInstantTimes, type Instant, newInstantTime } from '../timeline/instant.js';
import { timelineLayout2, timelineLayoutOf } from '../timeline/layout.js';
import { instantPath, loadTimeline, type Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../timeline/transitions.js';
import { fileNameOf } from '../util/paths.js';
import { metadataArchiveRules1x } from './archive-1x.js';
import { commitFilesRecords, convertCleanMetadata, type MetadataChange, type RecordIndexChanges, recordIndexChanges } from './convert.js';
import {
  bloomFilterRecords1x,
  cleanBloomFilterRecords1x,
  cleanColumnStatsRecords1x,
  columnStatsRecords1x,
  columnsToIndex1x,
  columnsWithoutValueType,
  logColumnRangeRecords1x,
  metadataLogBlocks1x,
  partitionStatsForCommit1x,
} from './convert-1x.js';
import { readLocalFooter, readStoredFooter } from './footers.js';
import { columnIndexId, partitionIndexId } from './hash-ids.js';
import { configuredColumnStatsColumns, PARTITION_ENABLE, PARTITIONED_RECORD_INDEX_ENABLE } from './keys.js';
import { mapRecordKeyToFileGroupIndex, partitionIdentifier } from './partitions.js';
import { columnStatsIndexVersion1x, METADATA_1X_TIMELINE_FOLDER, readMetadataTable1x, recordIndexPartitioned1x } from './reader-1x.js';
import type { ColumnRange, ColumnStatsMetadata, MetadataRecord } from './records.js';
import { rollbackMetadataDeltaCommit1x } from './rollback-1x.js';
import {
  METADATA_1X_PARTITIONS,
  type Metadata1xPartition,
  type MetadataTableVersion1x,
  metadata1xPartitionOf,
  metadataVersionFacts,
  REFUSED_1X_SHAPES,
} from './schema-1x.js';
import { type MetadataServices1xResult, performMetadataTableServices1x } from './services-1x.js';
import { metadataTableState } from './state.js';
import { METADATA_TABLE_FOLDER, METADATA_TABLE_PROPERTIES, readMetadataTableProperties } from './timeline.js';

const FOOTER_CONCURRENCY = 16;

/**
 * What a metadata-table change of ours is for: write commits, clusterings, compactions and cleans are built for a
 * 1.x metadata table; the data table's archive writes nothing to it. `check` changes nothing (doctor's check): only
 * the metadata table's own state counts, not what this build's writers do not build.
 */
export type MetadataOperation = 'write' | 'cluster' | 'compact' | 'clean' | 'archive' | 'check' | 'other';

const KEPT_OPERATIONS: ReadonlySet<MetadataOperation> = new Set(['write', 'cluster', 'compact', 'clean']);

export interface MetadataProblemOptions {
  readonly properties?: ReadonlyMap<string, string>;
  readonly operation?: MetadataOperation;
  /** For 'compact': the compaction instant whose commit this is (undefined: one not scheduled yet). */
  readonly compaction?: string;
}

export interface Metadata1xCommitInput {
  readonly properties?: ReadonlyMap<string, string>;
  /** Local copies of the commit's new base files by table path: their footers are read there, not from storage. */
  readonly localFiles?: ReadonlyMap<string, string>;
  /** The data table's lock lease, checked before the deltacommit completes. */
  readonly lease?: LockLease;
  /** Fault injection for tests: called after each storage write of the deltacommit. */
  readonly afterStorageWrite?: (what: string) => Promise<void>;
  /** The column ranges of each log file a delta commit wrote, every field's, by its write stat's path. */
  readonly logColumnRanges?: ReadonlyMap<string, readonly ColumnRange[]>;
  /** Where the commit's records went; required when the table has `record_index` (a function is called only then). */
  readonly recordIndex?: RecordIndexChanges | (() => Promise<RecordIndexChanges>);
}

export interface Metadata1xLogFile {
  readonly partition: Metadata1xPartition;
  readonly fileId: string;
  /** Relative to the metadata table's base path: `<partition>/<log file>`. */
  readonly path: string;
  readonly records: number;
  /** Keys its delete block deletes (record_index only). */
  readonly deletes: number;
  readonly bytes: number;
}

export interface Metadata1xCommitResult {
  readonly instantTime: string;
  readonly completionTime: string | undefined;
  readonly logFiles: readonly Metadata1xLogFile[];
}

interface Problem {
  readonly problem: string;
  readonly fix: string;
  readonly location: string;
}

export class MetadataTable1x {
  private constructor(
    readonly storage: Storage,
    readonly config: TableConfig,
    readonly version: MetadataTableVersion1x,
    readonly partitions: readonly string[],
    readonly inflightPartitions: readonly string[],
    readonly timeline: Timeline,
    /** The file ids of each partition, sorted (the order records are mapped to them in). */
    readonly fileIds: ReadonlyMap<Metadata1xPartition, readonly string[]>,
    /** Per `<partition>/<fileId>`, the instant of its newest HFile base file, else of its first log file. */
    private readonly sliceBases: ReadonlyMap<string, string>,
    readonly metadataProperties: ReadonlyMap<string, string> | undefined,
    /** Problems found while opening (an unknown partition, an index version we do not write). */
    private readonly openProblems: readonly Problem[],
  ) {}

  /**
   * The data table's pending compactions when its partition stats would cover their file slices (merge-on-read with
   * partition_stats): a write under one, or a compaction beside another, is refused.
   */
  private pendingCompactions: readonly string[] = [];

  /**
   * Pending deltacommits whose data instant completed: never a killed writer's (Hudi completes the deltacommit
   * first), so the metadata table misses a committed change; not rolled back, refused (read when opened).
   */
  private pendingOfCompletedData: ReadonlySet<string> = new Set();

  /** Per pending rollback of the metadata table, the instant its plan rolls back (read when opened). */
  private pendingRollbackTargets: ReadonlyMap<string, { readonly time: string; readonly action: string }> = new Map();

  /** The metadata-table services run before this table's deltacommit (commit). */
  readonly servicesRun: MetadataServices1xResult[] = [];

  /** The 1.x metadata table of the table at `storage`, or undefined when hoodie.properties declares none. */
  static async open(storage: Storage, config: TableConfig): Promise<MetadataTable1x | undefined> {
    const { partitions, inflightPartitions } = metadataTableState(config);
    if (partitions.length === 0 && inflightPartitions.length === 0) return undefined;
    metadataVersionFacts(config.version);
    const version = config.version as MetadataTableVersion1x;
    const problems: Problem[] = [];
    const metadataProperties = await readMetadataTableProperties(storage);
    const fileIds = new Map<Metadata1xPartition, string[]>();
    const sliceBases = new Map<string, string>();
    for (const name of partitions) {
      const location = storage.uriOf(`${METADATA_TABLE_FOLDER}/${name}`);
      let partition: Metadata1xPartition;
      try {
        partition = metadata1xPartitionOf(name, location);
      } catch (error) {
        if (!(error instanceof HudiError)) throw error;
        problems.push({ problem: error.message, fix: error.fix ?? 'turn that index off with Hudi', location });
        continue;
      }
      const prefix = METADATA_1X_PARTITIONS[partition].prefix;
      const ids = new Set<string>();
      const bases = new Map<string, { base?: string; log?: string }>();
      for (const file of (await storage.listDir(`${METADATA_TABLE_FOLDER}/${name}`)).files) {
        const match = /^(\.?)([a-z-]+-\d{4}-\d+)_(?:[^_]+_)?(\d+)\.(hfile|log)/.exec(fileNameOf(file.path));
        if (match === null || !match[2]!.startsWith(prefix)) continue;
        const [, , fileId, time, kind] = match as unknown as [string, string, string, string, string];
        ids.add(fileId);
        const entry = bases.get(fileId) ?? {};
        if (kind === 'hfile' && (entry.base === undefined || entry.base < time)) entry.base = time;
        if (kind === 'log' && (entry.log === undefined || entry.log > time)) entry.log = time;
        bases.set(fileId, entry);
      }
      fileIds.set(partition, [...ids].sort());
      for (const [fileId, entry] of bases) sliceBases.set(`${partition}/${fileId}`, entry.base ?? entry.log ?? '');
    }
    if (partitions.includes('record_index') && (await recordIndexPartitioned1x(storage))) {
      problems.push({ ...REFUSED_1X_SHAPES.partitionedRecordIndex, location: storage.uriOf('.hoodie/.index_defs/index.json') });
    }
    const indexVersion = await columnStatsIndexVersion1x(storage, version);
    if (partitions.includes('column_stats') && indexVersion !== metadataVersionFacts(version).columnStatsIndexVersion) {
      problems.push({
        problem: `the column_stats index is at version V${indexVersion}, which Hudi ${metadataVersionFacts(version).hudiRelease} (table version ${version}) does not create`,
        fix: 'let Hudi write this table (an upgraded table keeps its older index version), or drop and rebuild the index with Hudi',
        location: storage.uriOf('.hoodie/.index_defs/index.json'),
      });
    }
    const layout = timelineLayout2(METADATA_1X_TIMELINE_FOLDER, 'UTC');
    const timeline = await loadTimeline(storage, layout);
    const pendingDeltaTimes = new Set(
      timeline
        .pending()
        .filter((i) => i.action === 'deltacommit')
        .map((i) => i.time),
    );
    const readsPendingCompactions = config.type === 'MERGE_ON_READ' && partitions.includes('partition_stats');
    // The data table's timeline, loaded once for what needs it.
    const dataTimeline = readsPendingCompactions || pendingDeltaTimes.size > 0 ? await loadTimeline(storage, timelineLayoutOf(config)) : undefined;
    const pendingCompactions = readsPendingCompactions
      ? dataTimeline!
          .pending()
          .filter((i) => i.action === 'compaction')
          .map((i) => i.time)
      : [];
    const pendingRollbackTargets = new Map<string, { time: string; action: string }>();
    for (const rollback of timeline.pending().filter((i) => i.action === 'rollback')) {
      const path = instantPath({ ...rollback, state: 'REQUESTED' }, layout);
      if ((await storage.head(path)) === undefined) continue;
      const plan = decodeTimelineAvro('rollbackPlan', await storage.get(path), storage.uriOf(path));
      const target = plan.instantToRollback;
      if (target !== null && target !== undefined) pendingRollbackTargets.set(rollback.time, { time: target.commitTime, action: target.action });
    }
    const completedData = (dataTimeline?.completed() ?? []).map((i) => i.time).filter((time) => pendingDeltaTimes.has(time));
    const table = new MetadataTable1x(storage, config, version, partitions, inflightPartitions, timeline, fileIds, sliceBases, metadataProperties, problems);
    table.pendingCompactions = pendingCompactions;
    table.pendingRollbackTargets = pendingRollbackTargets;
    table.pendingOfCompletedData = new Set(completedData);
    return table;
  }

  /** Why a change of ours (`operation`) could not keep this metadata table as Hudi would; empty when it can. */
  problems(options: MetadataProblemOptions = {}): Problem[] {
    // Hudi's data-table archiver only reads the metadata table's latest compaction: no state of it stops an archive.
    if (options.operation === 'archive') return [];
    // Its own archival reads keep.min/max.commits when the write commits: a bad value fails here, before any write.
    if (options.operation === 'write' || options.operation === 'cluster') metadataArchiveRules1x(options.properties);
    const check = options.operation === 'check';
    const problems: Problem[] = check ? [] : [...this.openProblems, ...this.compactionProblems(options)];
    const timelineLocation = this.storage.uriOf(METADATA_1X_TIMELINE_FOLDER);
    const rebuild = 'a Spark write with hoodie.metadata.enable=false deletes it; a later one with the metadata table on rebuilds it';
    if (!check && (options.operation === undefined || !KEPT_OPERATIONS.has(options.operation))) {
      problems.push({
        problem: `this build writes a Hudi 1.x metadata table only for write commits (delta commits included), clusterings, compactions and cleans; its deltacommits for other actions are not built (rollbacks roll them back with the data instant)`,
        fix: 'pass hoodie.metadata.enable=false to drop the metadata table first (Hudi rebuilds it on its next write with the metadata table on), or run this service with Hudi 1.x',
        location: this.storage.uriOf(PROPERTIES_FILE),
      });
    }
    for (const partition of this.inflightPartitions) {
      problems.push({
        problem: `partition ${partition} is being built (hoodie.table.metadata.partitions.inflight)`,
        fix: 'wait until Hudi finishes building it, then retry',
        location: timelineLocation,
      });
    }
    const get = (key: string) => this.metadataProperties?.get(key);
    if (
      get('hoodie.table.type') !== 'MERGE_ON_READ' ||
      get('hoodie.table.base.file.format') !== 'HFILE' ||
      get('hoodie.table.version') !== String(this.config.version) ||
      get('hoodie.timeline.layout.version') !== '2' ||
      get('hoodie.timeline.path') !== 'timeline'
    ) {
      problems.push({
        problem: `the metadata table's hoodie.properties is missing or not Hudi ${metadataVersionFacts(this.version).hudiRelease}'s (merge-on-read, HFile, table version ${this.config.version}, timeline layout 2 in timeline/)`,
        fix: rebuild,
        location: this.storage.uriOf(METADATA_TABLE_PROPERTIES),
      });
    }
    for (const partition of Object.keys(METADATA_1X_PARTITIONS) as Metadata1xPartition[]) {
      const declared = this.partitions.includes(partition);
      if (partition === 'files' ? !declared : declared && (this.fileIds.get(partition) ?? []).length === 0) {
        problems.push({ problem: `metadata-table partition ${partition} is not declared or has no file group`, fix: rebuild, location: timelineLocation });
      }
    }
    // Hudi's writer initialises a partition its keys turn on and the table lacks (a bulk read of every file), which
    // this build does not do: refused before anything is written.
    const properties = options.properties ?? new Map<string, string>();
    for (const partition of check ? [] : (['bloom_filters', 'record_index'] as const)) {
      const key = PARTITION_ENABLE[partition].key;
      if (readKey(properties, PARTITION_ENABLE[partition], 'write properties') !== true) continue;
      if (!this.partitions.includes(partition) && !this.inflightPartitions.includes(partition)) {
        problems.push({
          problem: `${key}=true asks for the ${partition} partition, which this metadata table does not have and this build does not create`,
          fix: `let one Hudi ${metadataVersionFacts(this.version).hudiRelease} write with ${key}=true create it, or leave the key out`,
          location: this.storage.uriOf(PROPERTIES_FILE),
        });
      }
    }
    if (!check && readKey(properties, PARTITIONED_RECORD_INDEX_ENABLE, 'write properties')) {
      problems.push({
        problem: `${PARTITIONED_RECORD_INDEX_ENABLE.key}=true: ${REFUSED_1X_SHAPES.partitionedRecordIndex.problem}`,
        fix: REFUSED_1X_SHAPES.partitionedRecordIndex.fix,
        location: this.storage.uriOf(PROPERTIES_FILE),
      });
    }
    // A merge-on-read write's log files change record_index by their deletes (recordIndexRecords); the bucket index
    // puts inserts in them too, which Hudi does not index.
    if (
      options.operation === 'write' &&
      this.config.type === 'MERGE_ON_READ' &&
      this.partitions.includes('record_index') &&
      tableLayout(this.config, { properties }).bucketIndex !== undefined
    ) {
      problems.push({ ...REFUSED_1X_SHAPES.recordIndexLogInserts, location: this.storage.uriOf(PROPERTIES_FILE) });
    }
    if (!check && this.partitions.includes('partition_stats') && !this.partitions.includes('column_stats')) {
      problems.push({
        problem: 'the metadata table has partition_stats without column_stats, which this build does not derive partition stats without',
        fix: 'turn partition stats off with Hudi too, or turn column stats back on',
        location: timelineLocation,
      });
    }
    // Failed writes (pending deltacommits, rollbacks of them) are healed by the commit (withoutFailedWrites); a check
    // names them all the same.
    const failedWrites = this.timeline.pending().filter((i) => this.healedOnCommit(i));
    if (check && failedWrites.length > 0) {
      problems.push({
        problem: `the metadata table has a failed write's pending ${failedWrites[0]!.action} ${failedWrites[0]!.time}${failedWrites.length > 1 ? ` and ${failedWrites.length - 1} more` : ''}`,
        fix: "none needed: the next write or clean (ours or Hudi's) rolls it back first",
        location: timelineLocation,
      });
    }
    const unlisted = [...this.pendingOfCompletedData].sort();
    if (unlisted.length > 0) {
      problems.push({
        problem: `the metadata table has a pending deltacommit ${unlisted[0]} of the data table's completed instant ${unlisted[0]}${unlisted.length > 1 ? ` (and ${unlisted.length - 1} more)` : ''}: the metadata table misses committed changes`,
        fix: rebuild,
        location: timelineLocation,
      });
    }
    const pending = this.timeline.pending().filter((i) => !this.healedOnCommit(i) && !this.pendingOfCompletedData.has(i.time));
    if (pending.length > 0) {
      const first = pending[0]!;
      const target = this.pendingRollbackTargets.get(first.time);
      const rollback = first.action !== 'rollback' ? '' : target === undefined ? ' (no plan)' : ` (of ${target.action} ${target.time})`;
      problems.push({
        problem: `the metadata table has a pending ${first.action} ${first.time}${rollback}${pending.length > 1 ? ` and ${pending.length - 1} more` : ''}; Hudi's metadata writer finishes it before its next deltacommit (a compaction or clean: runPendingTableServicesOperations, cleanIfNecessary), which this build does not do for a 1.x metadata table`,
        fix: `run one Spark write on the table (Hudi's metadata writer finishes the pending ${first.action} first), then retry`,
        location: timelineLocation,
      });
    }
    return problems;
  }

  /**
   * Pending compactions whose file slices Hudi's partition stats would cover in a way this build does not build: for
   * a write, any (their empty slices); for a compaction, any other than itself (its own slices are its new base files).
   */
  private compactionProblems(options: MetadataProblemOptions): Problem[] {
    // A clustering's partition stats take the latest slices as a write's do, a pending compaction's empty one included.
    const write = options.operation === 'write' || options.operation === 'cluster';
    if (!write && options.operation !== 'compact') return [];
    const others = this.pendingCompactions.filter((time) => write || time !== options.compaction);
    if (others.length === 0) return [];
    return [
      {
        problem: write
          ? `compaction ${others[0]} is pending: Hudi's partition stats then cover the empty file slices it starts, which this build does not build`
          : `compaction ${others[0]} is pending beside ${options.compaction === undefined ? 'the one to schedule' : `compaction ${options.compaction}`}: Hudi's partition stats then cover the empty file slices it starts, which this build does not build`,
        fix: write
          ? 'let the compaction finish (run it with Hudi), or pass hoodie.metadata.enable=false'
          : `run compaction ${others[0]} first, or pass hoodie.metadata.enable=false`,
        location: this.storage.uriOf(PROPERTIES_FILE),
      },
    ];
  }

  /** Throw MetadataTableError naming every problem, the first one's fix and place. */
  assertMaintainable(what: string, options: MetadataProblemOptions = {}): void {
    const problems = this.problems(options);
    if (problems.length === 0) return;
    const first = problems[0]!;
    throw new MetadataTableError(
      `${what} cannot keep the Hudi ${metadataVersionFacts(this.version).hudiRelease} metadata table correct: ${problems.map((p) => p.problem).join('; ')}`,
      this.partitions,
      this.inflightPartitions,
      { location: first.location, fix: first.fix },
    );
  }

  /** The columns a commit of `schemaText` indexes (columnsToIndex1x), with the user's column list if set. */
  private columnsToIndex(schemaText: string, properties: ReadonlyMap<string, string> | undefined): string[] {
    const configured = configuredColumnStatsColumns(properties);
    return columnsToIndex1x(schemaText, this.version, { populateMetaFields: this.config.populateMetaFields, ...(configured.length > 0 ? { configured } : {}) });
  }

  /**
   * Before anything is written: refuse a commit whose column-stats records could not be built, a column of a type this
   * build gives no index version 2 value type (version 9; columnsWithoutValueType). `writerSchema`: the schema the
   * commit will carry; else the table's (a clustering's, a compaction's).
   */
  async assertColumnStatsWritable(what: string, properties: ReadonlyMap<string, string>, writerSchema?: string): Promise<void> {
    if (!this.partitions.includes('column_stats') || metadataVersionFacts(this.version).columnStatsIndexVersion !== 2) return;
    const schemaText = writerSchema ?? (await (await HudiTable.open(this.storage)).schema())?.text;
    if (schemaText === undefined) return;
    const missing = columnsWithoutValueType(schemaText, this.columnsToIndex(schemaText, properties), this.version);
    if (missing.length === 0) return;
    throw new MetadataTableError(
      `${what} cannot keep the Hudi ${metadataVersionFacts(this.version).hudiRelease} metadata table's column stats: ` +
        `${missing.map(({ column, type }) => `column ${column} (${type})`).join(', ')} has a type this build gives no column-stats value type`,
      this.partitions,
      this.inflightPartitions,
      {
        location: 'hoodie.metadata.index.column.stats.column.list',
        fix: `set hoodie.metadata.index.column.stats.column.list to the columns to index, without ${missing.map(({ column }) => column).join(', ')}; or run it with Hudi 1.1`,
      },
    );
  }

  /**
   * Write the deltacommit mirroring write commit `instantTime` (about to complete; `metadata` its commit metadata),
   * completed when this returns: the caller completes the data instant after it, under the same lock.
   */
  async commit(instantTime: string, metadata: CommitMetadata, input: Metadata1xCommitInput = {}): Promise<Metadata1xCommitResult> {
    const properties = input.properties ?? new Map<string, string>();
    const operation = metadata.operationType === 'CLUSTER' ? 'cluster' : metadata.operationType === 'COMPACT' ? 'compact' : 'write';
    this.assertMaintainable(`committing ${instantTime}`, { properties, operation, compaction: instantTime });
    const location = this.storage.uriOf(METADATA_1X_TIMELINE_FOLDER);
    if (metadata.operationType !== 'CLUSTER' && Object.keys(metadata.partitionToReplaceFileIds ?? {}).length > 0) {
      throw new MetadataTableError(
        `commit ${instantTime} (${metadata.operationType ?? 'no operation'}) replaces file groups; this build keeps a 1.x metadata table only for write commits and clusterings`,
        this.partitions,
        this.inflightPartitions,
        {
          location,
          fix: 'pass hoodie.metadata.enable=false, or run it with Hudi 1.x',
        },
      );
    }
    // Failed writes are rolled back, and a second attempt's first deltacommit; then the services see only completed
    // attempts. A compaction's write client runs no metadata-table services (compact() creates the table, it does not
    // init it).
    const attempt = await (await this.withoutFailedWrites(input.lease)).forNewAttempt(instantTime, input.lease);
    const table = operation !== 'compact' && (await attempt.runTableServices(input)) ? await attempt.reopened() : attempt;
    const records = await table.commitRecords(instantTime, metadata, input);
    const deletes = new Map<Metadata1xPartition, string[]>();
    if (table.partitions.includes('record_index')) {
      const changes = await table.recordIndexRecords(instantTime, metadata, input);
      records.set(
        'record_index',
        changes.flatMap((change) => ('record' in change ? [change.record] : [])),
      );
      deletes.set(
        'record_index',
        changes.flatMap((change) => ('deleteKey' in change ? [change.deleteKey] : [])),
      );
    }
    return table.writeDeltaCommit(instantTime, records, input, deletes);
  }

  /** Hudi's performTableServices before a write's deltacommit (compaction-1x.ts); whether it wrote anything. */
  private async runTableServices(input: Metadata1xCommitInput): Promise<boolean> {
    const ran = await performMetadataTableServices1x(this.storage, {
      version: this.version,
      partitions: [...this.fileIds.keys()],
      dataTimeline: await loadTimeline(this.storage, timelineLayoutOf(this.config)),
      zone: this.config.timelineTimeZone,
      ...(input.properties === undefined ? {} : { properties: input.properties }),
      ...(input.lease === undefined ? {} : { lease: input.lease }),
      ...(input.afterStorageWrite === undefined ? {} : { afterStorageWrite: input.afterStorageWrite }),
    });
    this.servicesRun.push(ran);
    return ran.compactions.length > 0 || ran.cleans.length > 0 || ran.archives.length > 0;
  }

  private async reopened(): Promise<MetadataTable1x> {
    const table = await MetadataTable1x.open(this.storage, this.config);
    if (table === undefined) throw new MetadataTableError('the metadata table disappeared during its compaction', this.partitions, this.inflightPartitions, {});
    table.servicesRun.push(...this.servicesRun);
    return table;
  }

  /**
   * Write the deltacommit mirroring clean `instantTime` (about to complete; `metadata` its clean metadata), as
   * convertMetadataToRecords of a clean in 1.0.2 and 1.1.1: `files` drops the cleaned files (and removed
   * partitions), `column_stats` gets a tombstone per cleaned file (base or log) and indexed column (the table schema's columns:
   * getColumnsToIndex), `bloom_filters` one per cleaned base file; partition_stats is not touched.
   */
  async commitClean(
    instantTime: string,
    metadata: HoodieCleanMetadata,
    input: Metadata1xCommitInput & { readonly tableSchema?: () => Promise<string | undefined> } = {},
  ): Promise<Metadata1xCommitResult> {
    const properties = input.properties ?? new Map<string, string>();
    this.assertMaintainable(`completing clean ${instantTime}`, { properties, operation: 'clean' });
    const table = await (await this.withoutFailedWrites(input.lease)).forNewAttempt(instantTime, input.lease);
    const changes = convertCleanMetadata(metadata, { instantTime, partitions: new Set(['files']), populateMetaFields: this.config.populateMetaFields });
    const records = new Map<Metadata1xPartition, MetadataRecord[]>([
      ['files', (changes.get('files') ?? []).flatMap((change) => ('record' in change ? [change.record] : []))],
    ]);
    const cleaned = Object.entries(metadata.partitionMetadata).flatMap(([partition, entry]) =>
      entry.deletePathPatterns.map((name) => ({ partition, name: fileNameOf(name) })),
    );
    if (this.partitions.includes('bloom_filters')) records.set('bloom_filters', cleanBloomFilterRecords1x(cleaned, instantTime));
    if (this.partitions.includes('column_stats') && cleaned.length > 0) {
      const schema = await input.tableSchema?.();
      if (schema === undefined) {
        throw new MetadataTableError(`clean ${instantTime}: the table has no schema to tell the indexed columns by`, this.partitions, this.inflightPartitions, {
          location: this.storage.uriOf(METADATA_1X_TIMELINE_FOLDER),
          fix: 'run this clean with Hudi 1.x',
        });
      }
      const columns = this.columnsToIndex(schema, input.properties);
      records.set(
        'column_stats',
        cleaned.flatMap(({ partition, name }) => cleanColumnStatsRecords1x(partition, name, columns, this.version)),
      );
    }
    return table.writeDeltaCommit(instantTime, records, input);
  }

  /**
   * The deltacommit Hudi 1.x's metadata writer rolls back when data instant `instantTime` is rolled back
   * (update(HoodieRollbackMetadata)): the metadata table's deltacommit at that instant when 1.0.2 finds it completed
   * or 1.1.1 finds it in any state; undefined when Hudi leaves the metadata table as it is (1.0.2 leaves a pending
   * one to the metadata writer's own failed-writes rollback). rollback-1x.ts rolls it back.
   */
  rollbackTarget(instantTime: string): Instant | undefined {
    const rollsBack = this.version === 8 ? (i: Instant) => i.state === 'COMPLETED' : () => true;
    const states = this.timeline.instants.filter((i) => i.time === instantTime && i.action === 'deltacommit');
    const target = states.find((i) => i.state === 'COMPLETED') ?? states.find((i) => i.state === 'INFLIGHT') ?? states[0];
    return target !== undefined && rollsBack(target) ? target : undefined;
  }

  /**
   * Refuse, before a rollback of data instant `instantTime` writes anything, what Hudi's metadata writer refuses
   * (validateRollback: a completed deltacommit at or before the metadata table's latest compaction, which only a
   * restore undoes); the rollback fails there in Hudi too.
   */
  assertRollbackable(what: string, instantTime: string): void {
    const target = this.rollbackTarget(instantTime);
    if (target?.state !== 'COMPLETED') return;
    const compaction = this.timeline.instants.filter((i) => i.action === 'commit' && i.state === 'COMPLETED').at(-1);
    if (compaction === undefined || compareInstantTimes(instantTime, compaction.time) > 0) return;
    throw new MetadataTableError(
      `${what}: the metadata table's deltacommit ${instantTime} is not after its latest compaction ${compaction.time}; Hudi ${metadataVersionFacts(this.version).hudiRelease} refuses to roll it back too (a restore would)`,
      this.partitions,
      this.inflightPartitions,
      { location: this.storage.uriOf(METADATA_1X_TIMELINE_FOLDER), fix: `restore the table with Hudi to before ${instantTime}` },
    );
  }

  /** A pending instant our commit heals: a deltacommit, or a rollback whose plan names one. */
  private healedOnCommit(instant: Instant): boolean {
    if (instant.action === 'deltacommit') return !this.pendingOfCompletedData.has(instant.time);
    return instant.action === 'rollback' && this.pendingRollbackTargets.get(instant.time)?.action === 'deltacommit';
  }

  /**
   * The metadata table after its failed writes are rolled back, as commitInternal does first in Hudi 1.0.2 and 1.1.1
   * (the metadata write client's rollbackFailedWrites): pending rollbacks finished from their plans, then every
   * pending deltacommit, newest first, rolled back at a new instant. Hudi does so under the EAGER policy (LAZY leaves
   * it for later, and Hudi 1.1's streaming metadata writes beat for theirs); we refuse while a deltacommit's
   * metadata-table heartbeat is fresh. Hudi runs its metadata-table services before this; we run them after, so that
   * they never see a failed write (the records read the same either way).
   */
  private async withoutFailedWrites(lease: LockLease | undefined): Promise<MetadataTable1x> {
    const rollbacks = this.timeline.pending().filter((i) => i.action === 'rollback' && this.healedOnCommit(i));
    if (rollbacks.length > 0) {
      for (const rollback of rollbacks) {
        await rollbackMetadataDeltaCommit1x(this, this.pendingRollbackTargets.get(rollback.time)!.time, rollback.time, lease);
      }
      return (await this.reopened()).withoutFailedWrites(lease);
    }
    const failed = this.timeline
      .pending()
      .filter((i) => i.action === 'deltacommit' && this.healedOnCommit(i))
      .reverse();
    if (failed.length === 0) return this;
    // Hudi 1.1's streaming metadata writes (NBCC, LAZY) beat for their deltacommits: a fresh beat is a running writer.
    // An EAGER metadata writer (every other) beats for none, and its pending deltacommit is a killed writer's.
    const now = Date.now();
    for (const instant of failed) {
      const beat = await this.storage.head(`${METADATA_TABLE_FOLDER}/${heartbeatPath(instant.time)}`);
      if (beat === undefined || now - beat.modifiedMs > HEARTBEAT_EXPIRY_MS) continue;
      throw new MetadataTableError(
        `the metadata table has a pending deltacommit ${instant.time} whose writer beat ${Math.max(0, Math.round((now - beat.modifiedMs) / 1000))} s ago (it may be running)`,
        this.partitions,
        this.inflightPartitions,
        {
          location: this.storage.uriOf(`${METADATA_TABLE_FOLDER}/${heartbeatPath(instant.time)}`),
          fix: `retry once the write at ${instant.time} has ended; a killed writer's heartbeat expires after ${HEARTBEAT_EXPIRY_MS / 1000} s`,
        },
      );
    }
    const times = [...this.timeline.allTimes(), ...(await loadTimeline(this.storage, timelineLayoutOf(this.config))).allTimes()];
    for (const instant of failed) {
      const rollbackTime = newInstantTime(times, new Date(), this.config.timelineTimeZone);
      times.push(rollbackTime);
      const target = (time: string) => (time === instant.time ? instant : undefined);
      const { storage, timeline, partitions, inflightPartitions } = this;
      await rollbackMetadataDeltaCommit1x({ storage, timeline, partitions, inflightPartitions, rollbackTarget: target }, instant.time, rollbackTime, lease);
    }
    return this.reopened();
  }

  /**
   * The metadata table to write instant `instantTime` into. A second attempt at an instant whose deltacommit
   * completed (its data instant did not: a retried commit step) goes as Hudi's commitInternal takes it: that
   * deltacommit is rolled back first (the metadata write client's rollback(T), at a new instant time), then T is
   * written again. Anything else the metadata table has at T is refused.
   */
  private async forNewAttempt(instantTime: string, lease: LockLease | undefined): Promise<MetadataTable1x> {
    const existing = this.timeline.instants.filter((i) => i.time === instantTime);
    if (existing.length === 0) return this;
    const [only] = existing;
    if (existing.length > 1 || only?.action !== 'deltacommit' || only.state !== 'COMPLETED') {
      throw new MetadataTableError(
        `the metadata table already has ${existing.map((i) => `a ${i.state.toLowerCase()} ${i.action}`).join(' and ')} at ${instantTime}; only a completed deltacommit is rolled back for a new attempt`,
        this.partitions,
        this.inflightPartitions,
        {
          location: this.storage.uriOf(METADATA_1X_TIMELINE_FOLDER),
          fix: 'retry (a new instant), or let Hudi roll the old attempt back',
        },
      );
    }
    const data = await HudiTable.open(this.storage);
    const rollbackTime = newInstantTime([...this.timeline.allTimes(), ...data.timeline.allTimes()], new Date(), this.config.timelineTimeZone);
    await rollbackMetadataDeltaCommit1x(this, instantTime, rollbackTime, lease);
    return (await MetadataTable1x.open(this.storage, this.config)) ?? this;
  }

  private async commitRecords(
    instantTime: string,
    metadata: CommitMetadata,
    input: Metadata1xCommitInput,
  ): Promise<Map<Metadata1xPartition, MetadataRecord[]>> {
    const out = new Map<Metadata1xPartition, MetadataRecord[]>([['files', commitFilesRecords(metadata)]]);
    const wantStats = this.partitions.includes('column_stats');
    const wantBloom = this.partitions.includes('bloom_filters');
    if (!wantStats && !wantBloom) return out;
    const stats = Object.entries(metadata.partitionToWriteStats).flatMap(([partition, list]) =>
      list.filter((stat) => stat.path !== null).map((stat) => ({ partition: stat.partitionPath ?? partition, stat })),
    );
    const footers: (ThriftStruct | undefined)[] = await mapWithConcurrency(stats, FOOTER_CONCURRENCY, ({ stat }) => {
      if (isLogFileName(stat.path!)) return Promise.resolve(undefined);
      if (!fileNameOf(stat.path!).endsWith('.parquet')) {
        throw new MetadataTableError(
          `commit ${instantTime} wrote ${stat.path}, neither a Parquet base file nor a log file`,
          this.partitions,
          this.inflightPartitions,
          {
            location: this.storage.uriOf(stat.path!),
            fix: 'pass hoodie.metadata.enable=false, or write this table with Hudi 1.x',
          },
        );
      }
      const local = input.localFiles?.get(stat.path!);
      return local !== undefined
        ? readLocalFooter(local)
        : readStoredFooter(this.storage, stat.path!, stat.fileSizeInBytes > 0 ? stat.fileSizeInBytes : undefined);
    });
    if (wantBloom) {
      const bloomType = readKey(input.properties ?? new Map<string, string>(), BLOOM_FILTER_KEYS.type, 'write properties');
      const baseFiles = stats.flatMap(({ partition, stat }, index) => {
        const footer = footers[index];
        return footer === undefined ? [] : [{ partitionPath: partition, fileName: fileNameOf(stat.path!), footer }];
      });
      out.set('bloom_filters', bloomFilterRecords1x(baseFiles, instantTime, bloomType));
    }
    if (!wantStats) return out;
    const schemaText = metadata.extraMetadata['schema'] ?? '';
    const columns = this.columnsToIndex(schemaText, input.properties);
    // A log file's ranges are the append handle's, over the records it wrote (translateWriteStatToColumnStats).
    const logSchema = stats.some(({ stat }) => isLogFileName(stat.path!)) ? this.logColumnStatsSchema(instantTime, schemaText) : undefined;
    const columnStats: MetadataRecord[] = [];
    const written = new Map<string, ColumnStatsMetadata[]>();
    for (const [index, { partition, stat }] of stats.entries()) {
      const footer = footers[index];
      const records =
        footer === undefined
          ? this.logColumnStats(instantTime, partition, stat.path!, logSchema!, columns, input.logColumnRanges)
          : columnStatsRecords1x(partition, fileNameOf(stat.path!), footer, columns, this.version);
      columnStats.push(...records);
      const list = written.get(partition) ?? [];
      for (const record of records) if (record.type === 3) list.push(record.columnStats);
      written.set(partition, list);
    }
    out.set('column_stats', columnStats);
    if (!this.partitions.includes('partition_stats')) return out;

    const table = await HudiTable.open(this.storage);
    const dataTimeline = table.timeline;
    const contents = await readMetadataTable1x(this.storage, {
      completedDataInstants: new Set(dataTimeline.completed().map((i) => i.time)),
      pendingDataInstants: new Set(dataTimeline.pending().map((i) => i.time)),
    });
    const existing = [...(contents.partitions.get('column_stats')?.values() ?? [])];
    const scope = await partitionStatsScope(table, this.version);
    const partitionStats: MetadataRecord[] = [];
    for (const [partition, list] of written) {
      const prefixes = columns.map((column) => columnIndexId(column) + partitionIndexId(partitionIdentifier(partition)));
      const ofPartition = existing.flatMap((record) => (record.type === 3 && prefixes.some((p) => record.key.startsWith(p)) ? [record.columnStats] : []));
      const latest = await latestSliceFileNames(this.storage, partition, dataTimeline, instantTime, scope);
      partitionStats.push(...partitionStatsForCommit1x(partition, list, ofPartition, latest, this.version));
    }
    out.set('partition_stats', partitionStats);
    return out;
  }

  /**
   * record_index's changes for a commit, as Hudi 1.0.2 and 1.1.1's convertMetadataToRecordIndexRecords builds them.
   * Per written base file: its keys not in the base file it replaced (prevBaseFile; all of them in a new file group,
   * which is every output of a clustering) at the file's group, stamped with the instant, and a deletion per key of the
   * replaced base file it no longer holds. Per written log file: the keys its own records delete (its stat names it
   * alone at table version 8 and up, so Hudi merges no earlier log: getRevivedAndDeletedKeysFromMergedLogs revives
   * nothing), its updates nothing. A key deleted in one group and written in another keeps its new place
   * (reduceByKeys). Our writers report those keys as they write (`input.recordIndex`): the stored keys they delete, in
   * a merged base file or a log's delete block alike, and the keys they insert; a compaction changes no location.
   */
  private async recordIndexRecords(instantTime: string, metadata: CommitMetadata, input: Metadata1xCommitInput): Promise<MetadataChange[]> {
    if (metadata.operationType === 'COMPACT') return [];
    const logs = Object.values(metadata.partitionToWriteStats)
      .flat()
      .filter((stat) => stat.path !== null && isLogFileName(stat.path));
    const refuse = (path: string, shape: { readonly problem: string; readonly fix: string }): MetadataTableError =>
      new MetadataTableError(`commit ${instantTime} wrote log file ${path}: ${shape.problem}`, this.partitions, this.inflightPartitions, {
        location: this.storage.uriOf(path),
        fix: shape.fix,
      });
    const written = new Set(logs.map((stat) => fileNameOf(stat.path!)));
    for (const stat of logs) {
      // Hudi fails such a commit ("RLI cannot support logs having inserts").
      if (stat.numInserts > 0) throw refuse(stat.path!, REFUSED_1X_SHAPES.recordIndexLogInserts);
      if ((stat.delta?.logFiles ?? []).some((name) => !written.has(name))) throw refuse(stat.path!, REFUSED_1X_SHAPES.recordIndexMergedLogs);
    }
    const changes = typeof input.recordIndex === 'function' ? await input.recordIndex() : input.recordIndex;
    if (changes === undefined) {
      throw new MetadataTableError(
        `commit ${instantTime} did not say where its records went, and the metadata table has record_index`,
        this.partitions,
        this.inflightPartitions,
        {
          location: this.storage.uriOf(METADATA_1X_TIMELINE_FOLDER),
          fix: 'this is a bug in the commit path: pass the record-index changes to the metadata-table commit',
        },
      );
    }
    const updates = [...changes.updates];
    // An insert in a log file (counted as an update there): Hudi's index would not have it.
    const logGroups = new Map(logs.map((stat) => [fileGroupKey(stat.partitionPath ?? '', stat.fileId), stat.path!]));
    const inLog = updates.find((update) => logGroups.has(fileGroupKey(update.partitionPath, update.fileId)));
    if (inLog !== undefined) throw refuse(logGroups.get(fileGroupKey(inLog.partitionPath, inLog.fileId))!, REFUSED_1X_SHAPES.recordIndexLogInserts);
    return recordIndexChanges({ updates, deletes: changes.deletes }, instantTime);
  }

  /**
   * Before a write on a merge-on-read table with record_index: refuse a schema with `_hoodie_is_deleted` (records
   * logged with it set are deletes to Hudi's log merge, which our writer does not report). `writerSchema`: the
   * schema the commit will carry.
   */
  assertRecordIndexWritable(what: string, writerSchema: string | undefined): void {
    if (this.config.type !== 'MERGE_ON_READ' || !this.partitions.includes('record_index') || writerSchema === undefined) return;
    const schema = parseAvroRecordSchema(writerSchema, `the schema of ${what}`);
    if (!schema.fields.some((field) => field.name === IS_DELETED_FIELD)) return;
    throw new MetadataTableError(`${what}: ${REFUSED_1X_SHAPES.recordIndexDeleteField.problem}`, this.partitions, this.inflightPartitions, {
      location: this.storage.uriOf(PROPERTIES_FILE),
      fix: REFUSED_1X_SHAPES.recordIndexDeleteField.fix,
    });
  }

  /**
   * The writer schema with meta fields a log file's ranges were collected under. At column-stats index version 1 the
   * append handle picks columns as an Avro record sees them (BYTES and FIXED in), the commit as Spark does (out):
   * such a schema is refused, the two selections not being proven the same.
   */
  private logColumnStatsSchema(instantTime: string, schemaText: string): AvroRecordSchema {
    const schema = withMetaFields(parseAvroRecordSchema(schemaText, `the schema of commit ${instantTime}`));
    if (metadataVersionFacts(this.version).columnStatsIndexVersion === 1) {
      const binary = schema.fields.filter((field) => {
        const type = Array.isArray(field.type) ? field.type.find((branch) => branch !== 'null') : field.type;
        const name = typeof type === 'string' ? type : (type as { type?: unknown; logicalType?: unknown } | undefined)?.type;
        return (name === 'bytes' || name === 'fixed') && (type as { logicalType?: unknown }).logicalType !== 'decimal';
      });
      if (binary.length > 0) {
        throw new MetadataTableError(
          `column ${binary[0]!.name} is BYTES or FIXED: the column stats Hudi ${metadataVersionFacts(this.version).hudiRelease} keeps for its log files are not built`,
          this.partitions,
          this.inflightPartitions,
          { location: this.storage.uriOf(PROPERTIES_FILE), fix: 'pass hoodie.metadata.enable=false, or write this table with Hudi 1.x' },
        );
      }
    }
    return schema;
  }

  /** A log file's column_stats records: the ranges the writer collected over its records, for the indexed columns. */
  private logColumnStats(
    instantTime: string,
    partition: string,
    path: string,
    schema: AvroRecordSchema,
    columns: readonly string[],
    ranges: ReadonlyMap<string, readonly ColumnRange[]> | undefined,
  ): MetadataRecord[] {
    const collected = ranges?.get(path);
    const byColumn = new Map((collected ?? []).map((range) => [range.columnName, range]));
    const missing = columns.filter((column) => !byColumn.has(column));
    if (collected === undefined || missing.length > 0) {
      throw new MetadataTableError(
        `commit ${instantTime} wrote log file ${path} without its column ranges${missing.length > 0 ? ` (${missing.join(', ')})` : ''}`,
        this.partitions,
        this.inflightPartitions,
        { location: this.storage.uriOf(path), fix: 'this is a bug in the write path: the appender collects every column of a log file' },
      );
    }
    return logColumnRangeRecords1x(
      partition,
      fileNameOf(path),
      schema,
      columns.map((column) => byColumn.get(column)!),
      this.version,
    );
  }

  /** requested (empty), inflight (the workload), one log file per touched file group, then the completed file. */
  private async writeDeltaCommit(
    instantTime: string,
    records: ReadonlyMap<Metadata1xPartition, readonly MetadataRecord[]>,
    input: Metadata1xCommitInput,
    deletes: ReadonlyMap<Metadata1xPartition, readonly string[]> = new Map(),
  ): Promise<Metadata1xCommitResult> {
    const layout = timelineLayout2(METADATA_1X_TIMELINE_FOLDER, 'UTC');
    const step = input.afterStorageWrite ?? (async () => {});
    const work: { partition: Metadata1xPartition; fileId: string; records: MetadataRecord[]; deletes: string[] }[] = [];
    for (const partition of new Set([...records.keys(), ...deletes.keys()])) {
      const ids = this.fileIds.get(partition) ?? [];
      const byGroup = new Map<string, { records: MetadataRecord[]; deletes: string[] }>();
      const groupOf = (key: string) => {
        const fileId = ids[mapRecordKeyToFileGroupIndex(key, ids.length)]!;
        let group = byGroup.get(fileId);
        if (group === undefined) byGroup.set(fileId, (group = { records: [], deletes: [] }));
        return group;
      };
      for (const record of records.get(partition) ?? []) groupOf(record.key).records.push(record);
      for (const key of deletes.get(partition) ?? []) groupOf(key).deletes.push(key);
      for (const [fileId, group] of [...byGroup].sort(([a], [b]) => (a < b ? -1 : 1))) work.push({ partition, fileId, ...group });
    }
    await createRequested(this.storage, layout, instantTime, 'deltacommit');
    await step('requested');
    const profile: Record<string, WriteStat[]> = {};
    for (const item of work) {
      (profile[item.partition] ??= [newWriteStat({ fileId: '', path: null, partitionPath: null })]).push(
        newWriteStat({
          fileId: item.fileId,
          path: null,
          partitionPath: null,
          prevCommit: this.latestBaseInstant(item.partition, item.fileId),
          numUpdateWrites: item.records.length,
          numDeletes: item.deletes.length,
        }),
      );
    }
    await transitionToInflight(
      this.storage,
      layout,
      instantTime,
      'deltacommit',
      layout.encodeCommitMetadata(deltaCommitMetadata(profile, this.version), 'deltacommit'),
    );
    await step('inflight');
    const logFiles = await mapWithConcurrency(work, 8, async (item, ordinal) => {
      const written = await writeLogFile(this.storage, {
        partitionPath: `${METADATA_TABLE_FOLDER}/${item.partition}`,
        fileId: item.fileId,
        baseInstant: instantTime,
        writeToken: `${ordinal}-1-0`,
        blocks: metadataLogBlocks1x(item.records, item.deletes, item.partition, instantTime, this.version),
      });
      await step(`log ${written.path}`);
      return {
        partition: item.partition,
        fileId: item.fileId,
        path: `${item.partition}/${fileNameOf(written.path)}`,
        records: item.records.length,
        deletes: item.deletes.length,
        bytes: written.size,
      };
    });
    const stats: Record<string, WriteStat[]> = {};
    for (const log of logFiles) {
      (stats[log.partition] ??= []).push(
        newWriteStat({
          fileId: log.fileId,
          path: log.path,
          partitionPath: log.partition,
          prevCommit: instantTime,
          numWrites: log.records,
          numUpdateWrites: log.records,
          numDeletes: log.deletes,
          totalWriteBytes: log.bytes,
          fileSizeInBytes: log.bytes,
          runtimeStats: { totalScanTime: 0, totalUpsertTime: 0, totalCreateTime: 0 },
          delta: { logVersion: 1, logOffset: 0, baseFile: '', logFiles: [fileNameOf(log.path)] },
        }),
      );
    }
    await input.lease?.assertHeld();
    const completed = await transitionToCompleted(
      this.storage,
      layout,
      instantTime,
      'deltacommit',
      layout.encodeCommitMetadata(deltaCommitMetadata(stats, this.version), 'deltacommit'),
    );
    await step('completed');
    return { instantTime, completionTime: completed.completionTime, logFiles };
  }

  /** The base instant of a file group's latest slice, as the workload profile's prevCommit names it. */
  private latestBaseInstant(partition: Metadata1xPartition, fileId: string): string {
    return this.sliceBases.get(`${partition}/${fileId}`) ?? 'null';
  }
}

function deltaCommitMetadata(stats: Record<string, WriteStat[]>, version: MetadataTableVersion1x): CommitMetadata {
  return {
    partitionToWriteStats: stats,
    compacted: false,
    extraMetadata: { schema: metadataVersionFacts(version).schemaText },
    operationType: 'UPSERT_PREPPED',
  };
}

/** Which files of a partition's latest slices a commit's partition stats take the column stats of (latestSliceFileNames). */
interface PartitionStatsScope {
  /** File groups left out: those completed replacecommits replaced (1.1.1), none (1.0.2). */
  readonly replaced: ReadonlySet<string>;
  /** Whether a slice must be of a completed instant (1.1.1) or may be of any instant on the timeline (1.0.2). */
  readonly completedOnly: boolean;
}

/**
 * How each release picks the other files of a partition whose column_stats join a commit's partition stats:
 * - 1.0.2 (`getPartitionLatestFileSlicesIncludingInflight`, a view listing storage over the whole active timeline):
 *   every file group in storage, replaced ones included (that view filters none), its newest slice in any state;
 * - 1.1.1 (`getFilesToFetchColumnStats`: `getLatestMergedFileSlicesBeforeOrOn` over the completed timeline and the
 *   `files` listing): file groups no completed replacecommit replaced, their newest committed slice.
 * Neither leaves out the file groups the commit itself replaces (a clustering's inputs): its replacecommit is still
 * pending, and 1.1.1's filter of them compares file names with file ids, so it never matches.
 */
export async function partitionStatsScope(table: HudiTable, version: MetadataTableVersion1x): Promise<PartitionStatsScope> {
  return version === 8 ? { replaced: new Set(), completedOnly: false } : { replaced: await table.replacedFileGroups(), completedOnly: true };
}

/**
 * The base and log files of a data partition's latest file slices as `scope` says which instants count: per file
 * group not replaced, the newest base file whose instant is on the timeline (completed only, or in any state), older
 * than it (archived), or `instantTime` (the commit being written); on merge-on-read, the log files that join that
 * slice by completion time (HoodieFileGroup.getBaseInstantTime: a log whose delta commit completed at or after the
 * base instant, is pending, or is `instantTime`). A pending compaction, whose empty slice Hudi would start here, is
 * refused when the table is opened for a write.
 */
export async function latestSliceFileNames(
  storage: Storage,
  partition: string,
  timeline: Timeline,
  instantTime: string,
  scope: PartitionStatsScope,
): Promise<Set<string>> {
  const first = timeline.instants[0]?.time;
  const counted = new Map((scope.completedOnly ? timeline.completed() : timeline.instants).map((i) => [i.time, i.completionTime]));
  const eligible = (time: string) => time === instantTime || counted.has(time) || (first !== undefined && compareInstantTimes(time, first) < 0);
  const newest = new Map<string, { time: string; name: string }>();
  const logs: { fileId: string; time: string; name: string }[] = [];
  for (const file of (await storage.listDir(partition)).files) {
    const name = fileNameOf(file.path);
    const base = parseBaseFileName(name);
    const log = base === undefined ? parseLogFileName(name) : undefined;
    const fileId = base?.fileId ?? log?.fileId;
    const time = base?.instantTime ?? log?.baseInstant;
    if (fileId === undefined || time === undefined || scope.replaced.has(fileGroupKey(partition, fileId)) || !eligible(time)) continue;
    if (log !== undefined) {
      if (log.extension === 'log' && log.suffix === '') logs.push({ fileId, time, name });
      continue;
    }
    const current = newest.get(fileId);
    if (current === undefined || compareInstantTimes(time, current.time) > 0) newest.set(fileId, { time, name });
  }
  const out = new Set([...newest.values()].map((entry) => entry.name));
  for (const log of logs) {
    const base = newest.get(log.fileId);
    // An archived delta commit completed before the active timeline's first instant: its own time stands in.
    const completion = log.time === instantTime ? undefined : counted.has(log.time) ? counted.get(log.time) : log.time;
    if (base === undefined || completion === undefined || compareInstantTimes(completion, base.time) >= 0) out.add(log.name);
  }
  return out;
}
