/**
 * Hudi's write client for one batch (bulk_insert, insert, upsert, delete; COW commits, MOR delta commits), in
 * Hudi's timeline order: checks that can refuse the input before anything is written (an InputError leaves no
 * file behind), then requested → plan (tag records, assign file groups: small-files.ts) → inflight with the
 * workload profile → file groups written (each announced by a marker) → under the lock, the check that T is still
 * ours, the conflict check (conflict.ts), the metadata table's deltacommit and `T.commit`, the commit point.
 * Readers never see a partial write; a failed write is rolled back, a killed one by the next writer
 * (rollback/failed-writes.ts). Records are located by joining the batch with the touched base files' keys in the
 * engine: exact, and the files are local for the merge anyway.
 */
import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { hudiFooterInTurns } from '../base-file/footer.js';
import { rawValue, readKey } from '../config/index.js';
import {
  type BatchInput,
  type ExistingBaseFile,
  type InputFormat,
  type KeyFieldColumns,
  type RowKey,
  type TaggingSummary,
  WriteSession,
  type WriteSessionOptions,
} from '../engine/write.js';
import {
  AlreadyExistsError,
  ConflictError,
  errorMessage,
  HudiError,
  InputError,
  InstantRolledBackError,
  NotAHudiTableError,
  UnsupportedTableError,
} from '../errors.js';
import { lockProviderFor } from '../lock/index.js';
import type { LockProvider } from '../lock/port.js';
import { isLogFileName } from '../log-format/index.js';
import {
  type ColumnRange,
  columnStatsDecimals,
  keepMetadataTable,
  METADATA_PARTITIONS_KEY,
  type MetadataTableOutcome,
  type MetadataTableSession,
} from '../metadata/index.js';
import { stageFiles } from '../read/reader.js';
import { describeHeal, failedWritesPolicy, healTable } from '../rollback/failed-writes.js';
import { findRollbackOf, rollbackInstant } from '../rollback/rollback.js';
import { BoundedTasks, mapWithConcurrency, settleAll } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { BUCKET_INDEX_KEYS, type BucketIndexSpec, bucketHashFields, bucketIdOf, bucketIdStr, bucketIndexSpec, newBucketFileId } from '../table/bucket-index.js';
import {
  NEW_TABLE_KEYS,
  newTableOptionsFromWriteProperties,
  newTableProperties,
  PROPERTIES_FILE,
  readTableConfig,
  recordMergeModeOf,
  type TableConfig,
  tableConfigFromProperties,
} from '../table/config.js';
import {
  consistentHashOf,
  createHashingMetadata,
  defaultHashingMetadata,
  type HashingMetadata,
  loadHashingMetadata,
  nodeIndexOf,
} from '../table/consistent-hashing.js';
import { type BaseFile, baseFileName, type FileSystemView, joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import { createTable } from '../table/init.js';
import { createKeyGenerator, declarativeKeyPlan, keyGeneratorOptionsForWrite } from '../table/key-generators.js';
import {
  assertCdcWrite,
  assertLayoutSupports,
  bucketNumberOf,
  type CdcLoggingMode,
  cdcLoggingMode,
  detectTableLayout,
  LAYOUT_KEYS,
  newFileGroupId,
  type TableLayout,
  UnsupportedLayoutError,
  viewFileIds,
} from '../table/layouts.js';
import { type RecordPayload, resolveRecordPayload, writePayloadOf1xTable } from '../table/payload.js';
import { type AvroRecordSchema, withMetaFields } from '../table/schema.js';
import { HudiTable, PARTITION_METAFILE, withTableLock } from '../table/table.js';
import { type CommitMetadata, newWriteStat, type WriteOperationType, type WriteStat } from '../timeline/commit-metadata.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { type Heartbeat, startHeartbeat } from '../timeline/heartbeat.js';
import { newInstantTime } from '../timeline/instant.js';
import { createMarker, deleteMarkerDir, listMarkers } from '../timeline/markers.js';
import { pendingClusteringPlans } from '../timeline/queries.js';
import { instantPath, readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../timeline/transitions.js';
import { fileNameOf } from '../util/paths.js';
import { type BucketFileGroup, type BucketIndexPlan, bucketFileGroups, planBucketIndexWrite, planConsistentHashingWrite } from './bucket-plan.js';
import { CdcLogWriter } from './cdc-log.js';
import { describeFileGroup, findConflicts } from './conflict.js';
import { type LatestSlice, LogAppender, latestSlices } from './log-append.js';
import { nullOrderingReason, partitionPathProblem } from './record-checks.js';
import { averageRecordSize, type Bucket, type BucketPlan, type CandidateFile, planBuckets, rowGroupRows } from './small-files.js';
import { bulkInsertSortsByKey, WRITE_KEYS, type WriteConfig, type WriteOperation, writeConfigFromProperties } from './write-config.js';

export interface BadRecord {
  /** 0-based row of the input. */
  readonly row: number;
  readonly reason: string;
}

export interface WriteOptions {
  readonly input: { readonly file: string; readonly format: InputFormat };
  readonly operation: WriteOperation;
  /** Hudi write properties (hoodie.*); they also create the table when it does not exist. */
  readonly properties?: ReadonlyMap<string, string>;
  /** Default: the provider hoodie.write.lock.provider names (a storage lock when unset). */
  readonly lock?: LockProvider;
  /** Records without a usable key: fail the write (default) or leave them out and report them. */
  readonly badRecords?: 'fail' | 'skip';
  readonly engine?: WriteSessionOptions;
  readonly tempDir?: string;
  readonly now?: () => Date;
  /** Progress lines for long runs. */
  readonly onProgress?: (message: string) => void;
  /** Fault injection for tests: called after the data files are written, before the commit. */
  readonly afterDataFiles?: () => Promise<void>;
  /** Fault injection for tests: called after each storage write of the metadata table's deltacommit. */
  readonly afterMetadataTableWrite?: (what: string) => Promise<void>;
  /** Extra keys for the commit's extraMetadata (e.g. which input this commit applied); `schema` is always ours. */
  readonly extraMetadata?: Readonly<Record<string, string>>;
}

export interface WriteResult {
  readonly instantTime: string;
  readonly operation: WriteOperation;
  readonly stats: WriteStat[];
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly badRecords: BadRecord[];
  readonly averageRecordSize: number;
  /** True when the write created the table. */
  readonly createdTable: boolean;
  /** What happened to Hudi's metadata table: its deltacommit for this instant, or what the write's keys turned off. */
  readonly metadataTable: MetadataTableOutcome;
}

type WriteAction = 'commit' | 'deltacommit';

/**
 * Hudi 0.15's indexes whose canIndexLogFiles() is true. BUCKET is not here: its simple engine's is false
 * (HoodieSimpleBucketIndex), and its consistent-hashing engine's log files are placed by its hashing metadata.
 */
const LOG_INDEXING_INDEXES: readonly string[] = ['HBASE', 'INMEMORY', 'FLINK_STATE'];

const OPERATION_TYPES: Record<WriteOperation, WriteOperationType> = { bulk_insert: 'BULK_INSERT', insert: 'INSERT', upsert: 'UPSERT', delete: 'DELETE' };
const UPLOAD_CONCURRENCY = 4;
/** Base files written at once (each on a DuckDB connection of its own). */
const FILE_GROUP_WRITES_AT_ONCE = 2;

/**
 * Write one batch to the table at `storage`, creating the table from the properties when there is none.
 *
 * Checks first: the table's config (a new table's is held in memory until then), the input's columns and values
 * against the table's schema and types (no value changes on the way in, lib/engine/exact-cast.ts), record keys,
 * partition paths and ordering values (record-checks.ts). T is strictly greater than every instant, and the final
 * check of T's state mirrors Hudi's transitionState, which requires the old state to exist. Until `T.commit` exists,
 * every file named with T is invisible. A write that fails is rolled back (its files removed via markers); one killed
 * midway is rolled back by the next write (rollback/failed-writes.ts: at once with EAGER, once its heartbeat expired
 * with LAZY) or the next service run.
 */
export async function writeBatch(storage: Storage, options: WriteOptions): Promise<WriteResult> {
  const props = options.properties ?? new Map<string, string>();
  const config = writeConfigFromProperties(props);
  const progress = options.onProgress ?? (() => {});
  const workDir = await mkdtemp(join(options.tempDir ?? tmpdir(), 'hudi-write-'));
  const session = await WriteSession.open({ ...options.engine, ...(options.engine?.tempDirectory ? {} : { tempDirectory: join(workDir, 'duckdb') }) });
  try {
    // Everything that can refuse the input runs before anything is written: a new table is only created, and an
    // instant only requested, once every check passed (the table config of a new table is held in memory till then).
    const existing = await openOrNull(storage);
    const newTable = existing === undefined ? newTableOptionsFromWriteProperties(props, 'write properties') : undefined;
    const tableConfig = existing?.config ?? tableConfigFromProperties(newTableProperties(newTable!), 'write properties');
    const configLocation = existing === undefined ? 'write properties' : storage.uriOf(PROPERTIES_FILE);
    // One listing serves the layout check and type template now and the write's file groups later.
    const view = existing === undefined ? undefined : await existing.fileSystemView();
    // Layouts this writer does not keep (bucket index, CDC), known from the properties, hoodie.properties (a new
    // table's: the write's own keys) and the table's file ids.
    const layoutConfig = existing?.config ?? tableConfigFromProperties(new Map([...newTableProperties(newTable!), ...cdcKeyOf(props)]), 'write properties');
    const layout = await detectTableLayout(storage, layoutConfig, { properties: props, ...(view === undefined ? {} : { fileIds: viewFileIds(view) }) });
    assertLayoutSupports(layout, 'write', configLocation);
    const cdc = layout.cdc ? cdcLoggingMode(tableConfig, configLocation) : undefined;
    assertCdcWrite(
      layout,
      { operation: options.operation, newTable: existing === undefined, ...(cdc === undefined ? {} : { loggingMode: cdc }) },
      configLocation,
    );
    assertWritable(tableConfig, config);
    if (existing !== undefined) assertSameTableVersion(existing.config, props, configLocation);
    const bucketIndex = bucketIndexOfWrite(layout, config, props, tableConfig, options.operation, configLocation);
    const consistentHashing = consistentHashingOfWrite(layout, config, props, tableConfig, { operation: options.operation, newTable: existing === undefined });
    // Every bucket file group of the table is checked against the settings before the input is read.
    if (bucketIndex !== undefined && view !== undefined) bucketFileGroups(bucketFileGroupsOf(view, view.partitionPaths(), new Map()), bucketIndex, storage.uri);
    const template = view === undefined ? undefined : newestBaseFile(view);
    const templates = await stageFiles(storage, template === undefined ? [] : [template], workDir);
    // The latest commit's schema (TableSchemaResolver): its columns are the table's even where the template lacks them.
    const latest = existing === undefined ? undefined : (await existing.schema())?.schema;
    // Partition columns a table drops from its files stay out of them.
    const schemaFields = latest?.fields.filter((f) => !(tableConfig.dropPartitionColumns && tableConfig.partitionFields.includes(f.name)));
    // A delete needs only the record key and partition fields, as Hudi's: the other columns are never written.
    const batch = await session.loadBatch(await literalInput(options.input, workDir), templates.localPaths, {
      missingColumns: options.operation === 'delete' ? 'null' : config.missingColumns,
      ...(schemaFields === undefined ? {} : { schemaFields }),
    });
    if (options.operation === 'delete' && batch.rowCount > 0) assertDeleteKeys(tableConfig, batch.inputColumns, options.input.file);
    progress(`loaded ${batch.rowCount} records from ${options.input.file}`);
    if (existing === undefined && batch.rowCount === 0) throw noRecordsError(options.input.file, true, false);

    let tableSchema: AvroRecordSchema;
    if (existing === undefined) {
      tableSchema = await session.avroSchemaOfBatch(newTable!.tableName);
    } else {
      // Hudi's writer schema: the latest commit's, evolved by the columns the batch adds (TableSchemaResolver reads
      // it back from this commit; hoodie.table.create.schema stays as it was).
      tableSchema = latest === undefined ? await session.avroSchemaOfBatch(existing.config.name) : await session.evolvedSchema(latest);
      if (batch.addedColumns.length > 0) progress(`the input adds ${batch.addedColumns.join(', ')} to the table's schema`);
    }
    const prepared = await prepareRecords(session, tableConfig, storage, batch.rowCount, config, options);
    if (prepared.records === 0 && (existing === undefined || !config.allowEmptyCommit))
      throw noRecordsError(options.input.file, existing === undefined, batch.rowCount > 0);

    let table = existing;
    if (table === undefined) {
      await createTable(storage, { ...newTable!, createSchema: JSON.stringify(tableSchema) });
      table = await HudiTable.open(storage, { mode: 'delta-write' });
    }
    return await writeToTable({
      table,
      startView: view,
      tableTemplates: templates.localPaths,
      session,
      tableSchema,
      config,
      options,
      workDir,
      createdTable: existing === undefined,
      prepared,
      bucketIndex,
      consistentHashing,
      cdc,
    });
  } finally {
    await session.close();
    await rm(workDir, { recursive: true, force: true });
  }
}

const GLOB_CHARACTERS = /[*?[\]{}]/;

/**
 * The input as one literal file: DuckDB expands glob characters in the paths it reads, so `a[1].jsonl` would read
 * `a1.jsonl` and `a*.jsonl` every match. The file is read through a link of its own in the write's folder, whose
 * name keeps the input's suffix (DuckDB detects `.gz` by it) without those characters. A path that names no file
 * is refused, a pattern included: a write applies one file.
 */
async function literalInput(input: WriteOptions['input'], workDir: string): Promise<BatchInput> {
  let info: Stats;
  try {
    info = await stat(input.file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      throw new InputError(`cannot read the input: ${errorMessage(error)}`, {
        location: input.file,
        fix: 'check the file and its permissions; nothing was written',
      });
    }
    const pattern = GLOB_CHARACTERS.test(input.file);
    throw new InputError(pattern ? 'no input file has this name (the path is read as it is spelled, never as a pattern)' : 'no input file has this name', {
      location: input.file,
      fix: pattern
        ? 'a write applies one file: name it exactly, or concatenate the files a pattern would match into one input; nothing was written'
        : 'check the path; nothing was written',
    });
  }
  if (!info.isFile()) throw new InputError('the input is not a file', { location: input.file, fix: 'name one input file; nothing was written' });
  const name = basename(input.file);
  const dot = name.indexOf('.');
  const suffix = dot < 0 ? '' : name.slice(dot).replace(new RegExp(GLOB_CHARACTERS.source, 'g'), '_');
  const readPath = join(workDir, `input${suffix}`);
  await symlink(resolve(input.file), readPath);
  return { ...input, readPath };
}

/** The top-level columns a delete input must have: those of the record key and partition fields. */
function assertDeleteKeys(config: TableConfig, inputColumns: readonly string[], file: string): void {
  const fields = [...config.recordKeyFields, ...config.partitionFields].map((field) => field.split(':')[0]!.split('.')[0]!);
  const missing = [...new Set(fields)].filter((field) => field !== '' && !inputColumns.includes(field));
  if (missing.length === 0) return;
  throw new InputError(`a delete input lacks the record key or partition field(s) ${missing.join(', ')}`, {
    location: file,
    fix: 'a delete needs every record key and partition field to find its records (the other columns may be left out); nothing was written',
  });
}

/** A new table's hoodie.table.cdc.enabled as the write's properties give it (Hudi's writer copies it into the table). */
function cdcKeyOf(props: ReadonlyMap<string, string>): [string, string][] {
  const value = props.get(LAYOUT_KEYS.cdcEnabled.key);
  return value === undefined ? [] : [[LAYOUT_KEYS.cdcEnabled.key, value]];
}

function noRecordsError(file: string, newTable: boolean, hadRows: boolean): InputError {
  const what = `the input has no records${hadRows ? ' that can be written' : ''}`;
  return new InputError(newTable ? `${what}, so there is nothing to create the table from` : `${what} and ${WRITE_KEYS.allowEmptyCommit.key}=false`, {
    location: file,
    fix: newTable
      ? 'write a batch with records to create the table; nothing was written'
      : `nothing was written (with ${WRITE_KEYS.allowEmptyCommit.key}=true, Hudi's default, an empty input makes an empty commit)`,
  });
}

async function openOrNull(storage: Storage): Promise<HudiTable | undefined> {
  try {
    return await HudiTable.open(storage, { mode: 'delta-write' });
  } catch (error) {
    if (error instanceof NotAHudiTableError) return undefined;
    throw error;
  }
}

function assertWritable(config: TableConfig, writeConfig: WriteConfig): void {
  // SparkUpsertDeltaCommitPartitioner sends inserts to log files when the index can index them (canIndexLogFiles).
  if (config.type === 'MERGE_ON_READ' && writeConfig.indexType !== undefined && LOG_INDEXING_INDEXES.includes(writeConfig.indexType)) {
    throw new HudiError(`${WRITE_KEYS.indexType.key}=${writeConfig.indexType} is not supported on merge-on-read tables: that index puts inserts in log files`, {
      location: WRITE_KEYS.indexType.key,
      fix: 'unset it (this writer places records as the bloom and simple indexes do), or write this table with Hudi',
    });
  }
  if (config.type === 'MERGE_ON_READ' && writeConfig.logDataBlockFormat !== undefined && writeConfig.logDataBlockFormat !== 'avro') {
    throw new HudiError(`${WRITE_KEYS.logDataBlockFormat.key}=${writeConfig.logDataBlockFormat} is not supported: this writer writes Avro data blocks`, {
      location: WRITE_KEYS.logDataBlockFormat.key,
      fix: 'unset it (Avro is the default for Parquet tables), or write this table with Hudi',
    });
  }
}

/**
 * hoodie.write.table.version names the version of a table a write creates. On an existing table a different version
 * would ask for Hudi 1.x's in-place upgrade (or downgrade), which this build does not do: refused, not ignored.
 */
function assertSameTableVersion(config: TableConfig, props: ReadonlyMap<string, string>, location: string): void {
  const key = NEW_TABLE_KEYS.tableVersion;
  if (!props.has(key.key)) return;
  const asked = Number(readKey(props, key, 'write properties'));
  if (asked === config.version) return;
  throw new UnsupportedTableError(`${key.key}=${asked} asks for table version ${asked}, but the table is version ${config.version}`, {
    location,
    fix: `upgrading or downgrading a table in place is not supported: drop ${key.key}, or set it to ${config.version}`,
  });
}

/**
 * The simple bucket index's settings when the write places records by bucket: the run names hoodie.index.type=BUCKET,
 * or the table's file ids carry bucket numbers (then the run must name the index: Hudi's writers read it from their
 * own configuration, not from the table). Refused before anything is written: bulk_insert into a Hudi 1.x table (not
 * compared with Hudi 1.x) and a table of bucket file ids written without the bucket index.
 */
function bucketIndexOfWrite(
  layout: TableLayout,
  config: WriteConfig,
  props: ReadonlyMap<string, string>,
  tableConfig: TableConfig,
  operation: WriteOperation,
  location: string,
): BucketIndexSpec | undefined {
  if (layout.bucketIndex?.engine !== 'SIMPLE') return undefined;
  if (config.indexType !== 'BUCKET') {
    throw new HudiError(
      `the table is written with the simple bucket index (${layout.bucketIndex.evidence}), and this write names ${WRITE_KEYS.indexType.key}=${config.indexType ?? '(unset)'}`,
      {
        location: WRITE_KEYS.indexType.key,
        fix: `write with ${WRITE_KEYS.indexType.key}=BUCKET and the table's hoodie.bucket.index.num.buckets (Hudi keeps neither in the table); nothing was written`,
      },
    );
  }
  if (operation === 'bulk_insert' && layout.hudi1x) {
    throw new UnsupportedLayoutError(
      'simple-bucket-index',
      'write',
      'bulk_insert into Hudi 1.x tables with the bucket index is not supported: its file ids and files are not compared with Hudi 1.x here (version 6 tables are written as Hudi 0.15 does)',
      {
        location: WRITE_KEYS.indexType.key,
        fix: 'write the batch with insert or upsert, which place records in their buckets as Hudi 1.x does; nothing was written',
      },
    );
  }
  return bucketIndexSpec(props, tableConfig.recordKeyFields, location);
}

/** A write's consistent-hashing settings: the fields its ring hashes (each partition's ring is read by tagWrite). */
interface ConsistentHashingWrite {
  readonly hashFields: readonly string[];
  /** hoodie.bucket.index.num.buckets: the nodes of a partition's first ring, when the write names it. */
  readonly numBuckets: number | undefined;
}

/**
 * The consistent-hashing engine's settings when the layout has it (assertLayoutSupports let only version 6
 * merge-on-read tables through). The run must name the engine, as Hudi's writers read it from their own
 * configuration; a new table and bulk_insert (Hudi's row writer creates the hashing metadata and file groups its own
 * way) are refused before anything is written.
 */
function consistentHashingOfWrite(
  layout: TableLayout,
  config: WriteConfig,
  props: ReadonlyMap<string, string>,
  tableConfig: TableConfig,
  write: { readonly operation: WriteOperation; readonly newTable: boolean },
): ConsistentHashingWrite | undefined {
  if (layout.bucketIndex?.engine !== 'CONSISTENT_HASHING') return undefined;
  const refuse = (problem: string, fix: string) =>
    new UnsupportedLayoutError('consistent-hashing-bucket-index', 'write', problem, { location: WRITE_KEYS.indexType.key, fix: `${fix}; nothing was written` });
  const engine = rawValue(props, LAYOUT_KEYS.bucketEngine)?.text;
  if (config.indexType !== 'BUCKET' || engine?.trim().toUpperCase() !== 'CONSISTENT_HASHING') {
    throw refuse(
      `the table is written with the consistent-hashing bucket index (${layout.bucketIndex.evidence}), and this write names ${WRITE_KEYS.indexType.key}=${config.indexType ?? '(unset)'}, ${LAYOUT_KEYS.bucketEngine.key}=${engine ?? '(unset)'}`,
      `write with ${WRITE_KEYS.indexType.key}=BUCKET and ${LAYOUT_KEYS.bucketEngine.key}=CONSISTENT_HASHING (Hudi keeps neither in the table)`,
    );
  }
  if (write.newTable) {
    throw refuse(
      'creating a table with the consistent-hashing bucket index is not supported: not compared with the tables Spark 0.15 creates',
      'create the table with Hudi (Spark), then write into its partitions here',
    );
  }
  if (write.operation === 'bulk_insert') {
    throw refuse(
      "bulk_insert into tables with the consistent-hashing bucket index is not supported: Hudi's bulk_insert writes its file groups and hashing metadata its own way, not compared here",
      "write the batch with insert or upsert, which append to the nodes' file groups as Hudi does",
    );
  }
  return {
    hashFields: bucketHashFields(props, tableConfig.recordKeyFields, WRITE_KEYS.indexType.key),
    numBuckets: readKey(props, BUCKET_INDEX_KEYS.numBuckets, WRITE_KEYS.indexType.key),
  };
}

/**
 * The live file groups of the partitions (a merge-on-read group of log files only included), each with the index of
 * its latest base file in `baseFileIndex` (by fileGroupKey) when it was staged.
 */
function bucketFileGroupsOf(view: FileSystemView, partitions: readonly string[], baseFileIndex: ReadonlyMap<string, number>): BucketFileGroup[] {
  const groups = new Map<string, BucketFileGroup>();
  for (const partition of partitions) {
    for (const slice of view.latestMergedSlices(partition)) {
      const key = fileGroupKey(slice.partitionPath, slice.fileId);
      groups.set(key, { partitionPath: slice.partitionPath, fileId: slice.fileId, baseFile: baseFileIndex.get(key), baseInstant: slice.baseInstantTime });
    }
    for (const file of view.latestBaseFiles(partition)) {
      const key = fileGroupKey(file.partitionPath, file.fileId);
      if (!groups.has(key))
        groups.set(key, { partitionPath: file.partitionPath, fileId: file.fileId, baseFile: baseFileIndex.get(key), baseInstant: file.instantTime });
    }
  }
  return [...groups.values()];
}

/** The newest latest base file, whose Parquet types new files copy (Hudi's decimal and timestamp encodings). */
function newestBaseFile(view: FileSystemView): string | undefined {
  return view.latestBaseFiles().sort((a, b) => b.instantTime.localeCompare(a.instantTime))[0]?.path;
}

/** The batch's records, keyed, checked and combined: what the write will apply, decided before its instant exists. */
interface PreparedRecords {
  /** Rows of the input. */
  readonly rowCount: number;
  /** Records the write applies (bad ones left out). */
  readonly records: number;
  readonly badRecords: BadRecord[];
  readonly partitions: string[];
  readonly precombineField: string | undefined;
  readonly payload: RecordPayload | undefined;
  readonly lock: LockProvider;
}

/** A record the write cannot take, with what to do about it. */
interface RecordProblem extends BadRecord {
  readonly fix: string;
}

/**
 * Record keys and partition paths by the table's key generator (set-wise in the engine when it can), then every
 * per-record check: a usable key, a partition path readers find again, and the ordering value Hudi requires when
 * it combines records. Records failing one are refused (default) or left out and reported (`badRecords: 'skip'`).
 */
async function prepareRecords(
  session: WriteSession,
  tableConfig: TableConfig,
  storage: Storage,
  rowCount: number,
  config: WriteConfig,
  options: WriteOptions,
): Promise<PreparedRecords> {
  const props = options.properties ?? new Map<string, string>();
  const operation = options.operation;
  const keygenOptions = keyGeneratorOptionsForWrite(tableConfig, props);
  const plan = declarativeKeyPlan(keygenOptions);
  const keyFix = 'every record needs a value for the record key field(s)';
  const problems: RecordProblem[] = [];
  let partitions: string[];
  if (plan !== undefined) {
    const keyed = await session.setRowKeysFromPlan(plan);
    problems.push(...keyed.badRecords.map((bad) => ({ ...bad, fix: keyFix })));
    partitions = keyed.partitions;
  } else {
    const keygen = createKeyGenerator(keygenOptions);
    const fields = [...new Set([...keygen.recordKeyFields, ...keygen.partitionFields])];
    const computed = computeKeys(await session.keyFieldValues(fields), rowCount, fields, keygen);
    problems.push(...computed.badRecords.map((bad) => ({ ...bad, fix: keyFix })));
    partitions = [...new Set(computed.keys.map((k) => k.partitionPath))].sort();
    await session.setRowKeys(computed.keys);
  }
  const skip = (options.badRecords ?? 'fail') === 'skip';

  const rules = { ...keygenOptions, localStorage: storage.localPath?.(PROPERTIES_FILE) !== undefined };
  const badPartitions = new Map(
    partitions.flatMap((p) => {
      const problem = partitionPathProblem(p, rules);
      return problem === undefined ? [] : [[p, problem] as const];
    }),
  );
  if (badPartitions.size > 0) {
    for (const { row, partitionPath } of await session.rowsInPartitions([...badPartitions.keys()])) {
      const problem = badPartitions.get(partitionPath)!;
      problems.push({ row, reason: problem.reason, fix: problem.fix });
    }
    if (skip) await session.dropKeyedRows({ partitions: [...badPartitions.keys()] });
  }

  const precombineField = tableConfig.precombineField;
  const combine = operation === 'upsert' ? config.combineBeforeUpsert : operation === 'delete' ? config.combineBeforeDelete : config.combineBeforeInsert;
  // Hudi gives records an ordering value whenever it combines them, and refuses a null one.
  if (combine && operation !== 'delete' && precombineField !== undefined) {
    if (!session.batchColumns().some((c) => c.name === precombineField)) {
      throw new InputError(`the precombine field "${precombineField}" is not in the input`, {
        location: options.input.file,
        fix: `add the column, or write with ${combineKey(operation)}=false`,
      });
    }
    const nullRows = await session.keyedRowsWithNull(precombineField);
    problems.push(
      ...nullRows.map((row) => ({
        row,
        reason: nullOrderingReason(precombineField),
        fix: `give every record a ${precombineField} value, or write with ${combineKey(operation)}=false`,
      })),
    );
    if (skip && nullRows.length > 0) await session.dropKeyedRows({ nullColumn: precombineField });
  }

  const byRow = new Map<number, RecordProblem>();
  for (const problem of problems.sort((a, b) => a.row - b.row)) if (!byRow.has(problem.row)) byRow.set(problem.row, problem);
  const badRecords = [...byRow.values()];
  const refuse = (): InputError => {
    const first = badRecords[0]!;
    return new InputError(`${badRecords.length} record(s) cannot be written; the first, row ${first.row + 1}: ${first.reason}`, {
      location: options.input.file,
      fix: `${first.fix}; nothing was written`,
    });
  };
  if (badRecords.length > 0 && !skip) throw refuse();
  const keyed = await session.keyedSummary();
  // Skipping every record would leave an empty commit that says nothing of why: the input is refused instead.
  if (keyed.rows === 0 && badRecords.length > 0) throw refuse();
  // The payload decides how records merge: against stored ones on upsert, among a batch's duplicates when combining.
  const mergeMode = recordMergeModeOf(tableConfig, storage.uriOf(PROPERTIES_FILE));
  const payload =
    operation === 'upsert' || (combine && operation !== 'delete')
      ? mergeMode === undefined
        ? resolveRecordPayload(config, tableConfig.properties, storage.uriOf(PROPERTIES_FILE))
        : writePayloadOf1xTable(mergeMode, config.payloadClass, storage.uriOf(PROPERTIES_FILE))
      : undefined;
  await session.buildIncoming({ combine, ...(precombineField === undefined ? {} : { precombineField }) });
  const lock = options.lock ?? lockProviderFor(props, tableConfig.name, storage);
  return {
    rowCount,
    records: keyed.rows,
    badRecords: badRecords.map(({ row, reason }) => ({ row, reason })),
    partitions: keyed.partitions,
    precombineField,
    payload,
    lock,
  };
}

function combineKey(operation: WriteOperation): string {
  return operation === 'upsert' ? WRITE_KEYS.combineBeforeUpsert.key : WRITE_KEYS.combineBeforeInsert.key;
}

/** What writeBatch hands the write's phases: the table, the batch loaded in the engine, and the checks' results. */
interface WriteContext {
  readonly table: HudiTable;
  /** The listing the checks used (undefined for a table this write created): planning reuses it. */
  readonly startView: FileSystemView | undefined;
  /** The table's newest base file, staged: the type template when no existing file is staged. */
  readonly tableTemplates: readonly string[];
  readonly session: WriteSession;
  readonly tableSchema: AvroRecordSchema;
  readonly config: WriteConfig;
  readonly options: WriteOptions;
  readonly workDir: string;
  readonly createdTable: boolean;
  readonly prepared: PreparedRecords;
  /** The simple bucket index's settings when records are placed by bucket. */
  readonly bucketIndex: BucketIndexSpec | undefined;
  /** The consistent-hashing engine's when records are placed by each partition's hashing metadata. */
  readonly consistentHashing: ConsistentHashingWrite | undefined;
  /** A CDC table's supplemental logging mode: merges write cdc log files (cdc-log.ts). */
  readonly cdc: CdcLoggingMode | undefined;
}

/** Everything the write decides before a file is written: where each record goes, and how. */
interface WritePlan {
  readonly view: FileSystemView;
  /** The latest base files of the partitions written, staged locally (updates merge into them). */
  readonly stagedFiles: readonly string[];
  /** Their names, in the same order: an update's write stat names the base file it merged (1.x's prevBaseFile). */
  readonly stagedFileNames: readonly string[];
  /** Merge-on-read: each file group's latest slice. */
  readonly slices: Map<string, LatestSlice> | undefined;
  readonly buckets: BucketPlan;
  readonly updatesByFile: TaggingSummary['updatesByFile'];
  readonly averageRecordSize: number;
}

/** What writing the file groups produced: the commit records it. */
interface WrittenFiles {
  readonly stats: WriteStat[];
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  /** The local copy of each new base file (the metadata table reads their footers there). */
  readonly localFiles: ReadonlyMap<string, string>;
  /** The column ranges of each log file appended (only when the metadata table indexes column stats). */
  readonly logColumnRanges: ReadonlyMap<string, readonly ColumnRange[]>;
}

/**
 * One write as Hudi's write client runs it: request an instant, plan (tag records, assign file groups), record the
 * plan on the inflight instant, write the file groups, commit under the lock. Any failure after the request rolls
 * the instant back.
 */
async function writeToTable(context: WriteContext): Promise<WriteResult> {
  const { table, options, prepared } = context;
  const { storage } = table;
  const progress = options.onProgress ?? (() => {});
  const action = writeActionOf(table);
  const completedAtStart = new Set(table.timeline.completed().map((i) => `${i.time}.${i.action}`));
  const metadataTable = keepMetadataTable(storage, options.properties ?? new Map<string, string>(), 'write');
  // Refusals tagging can make come before T exists: the timeline stays as it was.
  const tagged = await tagWrite(context, storage);
  const instantTime = await requestWriteInstant(context, action, metadataTable);
  const { payload } = prepared;
  progress(
    `instant ${instantTime}: ${options.operation} of ${prepared.rowCount} records into ${prepared.partitions.length} partition(s)${payload === undefined ? '' : `, merged with ${payload.className.slice(payload.className.lastIndexOf('.') + 1)} (${payload.source})`}`,
  );

  let heartbeat: Heartbeat | undefined;
  /** Every data file this write uploaded (or began to), for the clean-up when another writer took the instant away. */
  const uploaded: string[] = [];
  try {
    // Inside the try: once T is requested, every failure reaches the rollback.
    heartbeat = await startHeartbeat(storage, instantTime);
    const plan = await planWrite(context, storage, tagged);
    await transitionToInflight(
      storage,
      table.layout,
      instantTime,
      action,
      table.layout.encodeCommitMetadata(
        workloadProfile(plan.buckets.buckets, plan.buckets.insertAssignments, plan.updatesByFile, plan.buckets.bucketOfFile, options.operation),
        action,
      ),
    );
    const written = await writeFileGroups(context, instantTime, plan, uploaded);
    await writePartitionMetadata(
      storage,
      prepared.partitions.filter((p) => !plan.view.allPartitionPaths().includes(p)),
      instantTime,
    );
    if (options.afterDataFiles) await options.afterDataFiles();
    const metadata: CommitMetadata = {
      partitionToWriteStats: groupByPartition(written.stats),
      compacted: false,
      extraMetadata: { ...options.extraMetadata, schema: JSON.stringify(context.tableSchema) },
      operationType: OPERATION_TYPES[options.operation],
    };
    await commitWrite(context, { instantTime, action, plan, written, metadata, metadataTable, completedAtStart });
    await deleteMarkerDir(storage, instantTime).catch(() => undefined);
    progress(
      `committed ${instantTime}: ${written.inserted} inserted, ${written.updated} updated, ${written.deleted} deleted in ${plan.buckets.buckets.length} file group(s)`,
    );
    return {
      instantTime,
      operation: options.operation,
      stats: written.stats,
      inserted: written.inserted,
      updated: written.updated,
      deleted: written.deleted,
      badRecords: prepared.badRecords,
      averageRecordSize: plan.averageRecordSize,
      createdTable: context.createdTable,
      metadataTable: metadataTable.outcome(),
    };
  } catch (error) {
    await rollbackAfterFailure(table, instantTime, prepared.lock, error, uploaded);
    throw error;
  } finally {
    await heartbeat?.stop();
  }
}

/** Merge-on-read: every write is a delta commit (BaseSparkDeltaCommitActionExecutor), copy-on-write a commit. */
function writeActionOf(table: HudiTable): WriteAction {
  return table.config.type === 'MERGE_ON_READ' ? 'deltacommit' : 'commit';
}

/** Hudi's startCommit: failed writes go first (EAGER: all of them; LAZY: expired ones), then T is requested. */
async function requestWriteInstant(context: WriteContext, action: WriteAction, metadataTable: MetadataTableSession): Promise<string> {
  const { table, options, config, prepared } = context;
  const { storage } = table;
  const now = options.now ?? (() => new Date());
  const healed = await healTable(table, {
    lock: prepared.lock,
    policy: failedWritesPolicy(options.properties ?? new Map<string, string>()).policy,
    now: now(),
    lockWaitMs: config.lockWaitMs,
  });
  for (const line of describeHeal(healed)) (options.onProgress ?? (() => {}))(line);
  return await withTableLock(
    table,
    prepared.lock,
    async (current) => {
      const time = newInstantTime(current.timeline.allTimes(), now(), current.config.timelineTimeZone);
      // Before anything is written: apply the user's hoodie.metadata.* keys, and refuse a metadata table we cannot keep.
      await metadataTable.prepare('a write', JSON.stringify(context.tableSchema));
      try {
        await createRequested(storage, current.layout, time, action);
      } catch (error) {
        // The request may have landed although its answer did not (a timeout): T is ours alone, so take it back.
        await storage.delete([instantPath({ time, action, state: 'REQUESTED' }, current.layout)]).catch(() => undefined);
        throw error;
      }
      return time;
    },
    { waitMs: config.lockWaitMs },
  );
}

/** What tagging found before T is requested: the listing, the staged base files and where each record goes. */
interface TaggedWrite {
  readonly view: FileSystemView;
  readonly latest: readonly BaseFile[];
  readonly stagedFiles: readonly string[];
  readonly tagging: TaggingSummary;
  /** Bucket index: the records placed by hash bucket. */
  readonly bucketPlan: BucketIndexPlan | undefined;
}

/**
 * Tag each record with the file it updates (upsert, delete) and, with the bucket index, place it by hash bucket.
 * It runs before T is requested, on the listing the checks used: whatever it refuses (an update of a file group in
 * a pending clustering, a stored key outside its bucket) leaves the timeline as it was.
 */
async function tagWrite(context: WriteContext, storage: Storage): Promise<TaggedWrite> {
  const { table, session, config, options, prepared, workDir } = context;
  const operation = options.operation;
  const view = context.startView ?? (await table.fileSystemView());
  const latest = operation === 'bulk_insert' ? [] : prepared.partitions.flatMap((p) => view.latestBaseFiles(p));
  const stagedFiles = await stageFiles(
    storage,
    latest.map((f) => f.path),
    workDir,
  );
  const existing: ExistingBaseFile[] = latest.map((f, i) => ({ localPath: stagedFiles.localPaths[i]!, partitionPath: f.partitionPath, fileId: f.fileId }));
  // insert and bulk_insert do not look records up (Hudi's insert may duplicate keys); upsert and delete do.
  const orderingField = operation === 'upsert' && prepared.payload?.orderingAgainstStored === true ? prepared.precombineField : undefined;
  const tagging = await session.tagLocations(existing, {
    lookUp: operation === 'upsert' || operation === 'delete',
    ...(orderingField === undefined ? {} : { orderingField }),
  });
  if (config.rejectUpdatesDuringClustering) assertNoUpdatesInPendingClustering(storage, operation, tagging, latest, view);
  const baseFileIndex = new Map(latest.map((f, index) => [fileGroupKey(f.partitionPath, f.fileId), index]));
  const consistent = context.consistentHashing;
  if (consistent !== undefined) {
    // Each written partition's ring, read as Hudi's writer reads it; a partition without one gets Hudi's first ring,
    // written once the plan is made (as Hudi's writer, before the data files; it is the same for every writer).
    const rings = new Map<string, HashingMetadata>();
    const created: ReturnType<typeof defaultHashingMetadata>[] = [];
    for (const partition of prepared.partitions) {
      const loaded = await loadHashingMetadata(storage, partition, table.timeline, storage.uri);
      if (loaded !== undefined) {
        rings.set(partition, loaded);
        continue;
      }
      if (consistent.numBuckets === undefined) {
        throw new UnsupportedLayoutError(
          'consistent-hashing-bucket-index',
          'write',
          `partition "${partition}" has no consistent-hashing metadata yet: Hudi's writer creates its ring with ${BUCKET_INDEX_KEYS.numBuckets.key} nodes, which this write does not name`,
          { location: BUCKET_INDEX_KEYS.numBuckets.key, fix: `name ${BUCKET_INDEX_KEYS.numBuckets.key} as the table's writers do; nothing was written` },
        );
      }
      const made = defaultHashingMetadata(partition, consistent.numBuckets);
      rings.set(partition, made.metadata);
      created.push(made);
    }
    const groups = await session.setHashBuckets((recordKey, partition) =>
      nodeIndexOf(rings.get(partition)!.nodes, consistentHashOf(recordKey, consistent.hashFields)),
    );
    const bucketPlan = planConsistentHashingWrite(
      { operation, groups, fileGroups: bucketFileGroupsOf(view, prepared.partitions, baseFileIndex), rings },
      storage.uri,
    );
    for (const made of created) await createHashingMetadata(storage, made, table.timeline, storage.uri);
    return { view, latest, stagedFiles: stagedFiles.localPaths, tagging, bucketPlan };
  }
  const spec = context.bucketIndex;
  if (spec === undefined) return { view, latest, stagedFiles: stagedFiles.localPaths, tagging, bucketPlan: undefined };
  // Bucket index: every record to its partition's hash bucket (tagging above only tells updates from inserts).
  const groups = await session.setHashBuckets((recordKey) => bucketIdOf(recordKey, spec));
  const bucketPlan = planBucketIndexWrite(
    {
      operation,
      groups,
      fileGroups: bucketFileGroupsOf(view, prepared.partitions, baseFileIndex),
      mergeOnRead: table.config.type === 'MERGE_ON_READ',
      spec,
      newFileId: (bucket) => newBucketFileId(bucket, randomUUID()),
    },
    storage.uri,
  );
  return { view, latest, stagedFiles: stagedFiles.localPaths, tagging, bucketPlan };
}

/**
 * Assign the tagged records to file groups as Hudi's UpsertPartitioner does (small files first), after T was
 * requested. The engine holds the records; the plan is plain values.
 */
async function planWrite(context: WriteContext, storage: Storage, tagged: TaggedWrite): Promise<WritePlan> {
  const { table, session, config, options, prepared } = context;
  const operation = options.operation;
  const mergeOnRead = table.config.type === 'MERGE_ON_READ';
  const { view, latest, tagging } = tagged;
  // Merge-on-read: each group's latest slice (read after T was requested: a compaction scheduled before T is seen).
  const slices = mergeOnRead ? await latestSlices(storage, table.layout, view, prepared.partitions) : undefined;
  const candidates: CandidateFile[] = latest.map((f, index) => {
    const slice = slices?.get(fileGroupKey(f.partitionPath, f.fileId));
    return {
      index,
      partitionPath: f.partitionPath,
      fileId: f.fileId,
      size: f.size,
      instantTime: f.instantTime,
      inPendingClustering: view.isInPendingClustering(f.partitionPath, f.fileId),
      // A `.cdc` log counts: Hudi's slice holds it among its log files.
      ...(slice === undefined ? {} : { hasLogFiles: slice.logFiles.length + slice.cdcLogFiles.length > 0, inPendingCompaction: slice.pendingCompaction }),
    };
  });
  const commits = await recentCommitMetadata(table, table.timeline);
  const averageSize = averageRecordSize(commits, config);
  const staged = { view, stagedFiles: tagged.stagedFiles, stagedFileNames: latest.map((f) => fileNameOf(f.path)), slices };
  if (tagged.bucketPlan !== undefined) {
    const planned = tagged.bucketPlan;
    await session.assignBuckets(planned.bucketOfFile, [], { deletes: operation === 'delete', hashBuckets: planned.hashBuckets });
    return { ...staged, buckets: { ...planned, averageRecordSize: averageSize }, updatesByFile: tagging.updatesByFile, averageRecordSize: averageSize };
  }
  const buckets = planBuckets({
    operation,
    insertsByPartition: operation === 'delete' ? new Map() : tagging.insertsByPartition,
    updatesByFile: tagging.updatesByFile,
    files: candidates,
    averageRecordSize: averageSize,
    config,
    newFileId: () => newFileGroupId(),
    ...(mergeOnRead ? { mergeOnRead: { smallFileGroupCandidatesLimit: config.smallFileGroupCandidatesLimit } } : {}),
  });
  await session.assignBuckets(buckets.bucketOfFile, buckets.insertAssignments, {
    deletes: operation === 'delete',
    insertOrder: operation === 'bulk_insert' && !bulkInsertSortsByKey(config.bulkInsertSortMode) ? 'input' : 'key',
  });
  return { ...staged, buckets, updatesByFile: tagging.updatesByFile, averageRecordSize: averageSize };
}

/** hoodie.clustering.updates.strategy=reject: an update to a file group in a pending clustering plan is refused. */
function assertNoUpdatesInPendingClustering(
  storage: Storage,
  operation: WriteOperation,
  tagging: TaggingSummary,
  latest: readonly BaseFile[],
  view: FileSystemView,
): void {
  const blocked = [...tagging.updatesByFile.keys()].map((i) => latest[i]!).filter((f) => view.isInPendingClustering(f.partitionPath, f.fileId));
  if (blocked.length === 0) return;
  throw new ConflictError(
    `${blocked.length} file group(s) this ${operation} would update are in a pending clustering plan (${blocked
      .slice(0, 3)
      .map((f) => `${f.partitionPath}/${f.fileId}`)
      .join(', ')})`,
    {
      location: storage.uri,
      fix: 'wait for the clustering to complete (or roll it back), then retry (hoodie.clustering.updates.strategy=reject); nothing was written',
    },
  );
}

/** Write every planned file group: base files through the engine (uploaded as the next is written), log appends. */
async function writeFileGroups(context: WriteContext, instantTime: string, plan: WritePlan, uploaded: string[]): Promise<WrittenFiles> {
  const { table, session, config, options, workDir, tableSchema } = context;
  const { storage } = table;
  const progress = options.onProgress ?? (() => {});
  const buckets = plan.buckets.buckets;
  const schemaWithMeta = JSON.stringify(withMetaFields(tableSchema));
  const rowGroupSize = rowGroupRows(config, plan.averageRecordSize);
  const stats: WriteStat[] = new Array(buckets.length);
  const localFiles = new Map<string, string>();
  const logColumnRanges = new Map<string, readonly ColumnRange[]>();
  // Each file uploads while the next is written; all uploads settle before the write goes on or rolls back.
  const uploads = new BoundedTasks(UPLOAD_CONCURRENCY);
  let inserted = 0;
  let updated = 0;
  let deleted = 0;
  // The column_stats partition the metadata-table commit updates needs the ranges of the log files appended.
  const indexesColumnStats =
    (await readTableConfig(storage)).properties
      .get(METADATA_PARTITIONS_KEY)
      ?.split(',')
      .some((p) => p.trim() === 'column_stats') === true;
  const appender =
    table.config.type === 'MERGE_ON_READ' && buckets.some((b) => b.kind === 'APPEND')
      ? new LogAppender({
          storage,
          logWrites: table.layout.logWrites,
          session,
          instantTime,
          workDir,
          schemaWithMeta: withMetaFields(tableSchema),
          rowGroupSize,
          templates: plan.stagedFiles,
          // Every field's range: each metadata table (0.x, 1.x) keeps the columns it indexes.
          ...(indexesColumnStats ? { columnStatsColumns: [], columnStatsDecimals: columnStatsDecimals(table.config.version) } : {}),
          // Hudi's bucket index locates every record of an existing bucket: its append handle counts them as updates.
          countsAllAsUpdates: context.bucketIndex !== undefined || context.consistentHashing !== undefined,
        })
      : undefined;
  const cdcLogs =
    context.cdc === undefined
      ? undefined
      : new CdcLogWriter({
          storage,
          session,
          instantTime,
          workDir,
          mode: context.cdc,
          tableSchema: context.tableSchema,
          marker: table.layout.logWrites.marker,
        });
  // A base file's footer (bloom filter, key range) needs its record keys: they are read and hashed while DuckDB
  // writes the rows (its threads), and the next file group's are started, instead of between the writes.
  const footers = new Map<number, Promise<Record<string, string>>>();
  const footersStarted = new Set<number>();
  const footerOf = (bucket: Bucket, index: number): Promise<Record<string, string>> =>
    session
      .fileGroupRecordKeys(index, bucket.kind === 'UPDATE' ? bucket.existingFile : undefined)
      .then((recordKeys) => hudiFooterInTurns(recordKeys, schemaWithMeta, { bloom: config.bloom }));
  const prepareFooter = (from: number): void => {
    const next = buckets.findIndex((bucket, index) => index >= from && bucket.kind !== 'APPEND');
    if (next < 0 || footersStarted.has(next)) return;
    footersStarted.add(next);
    const footer = footerOf(buckets[next]!, next);
    footer.catch(() => undefined); // awaited when its file group is written; the write loop's own error wins
    footers.set(next, footer);
  };
  const writeBucket = async (bucket: Bucket, index: number): Promise<void> => {
    if (bucket.kind === 'APPEND') {
      const slice = plan.slices?.get(fileGroupKey(bucket.partitionPath, bucket.fileId));
      const appended = await appender!.append(bucket, index, slice);
      inserted += appended.result.inserts;
      updated += appended.result.updates;
      deleted += appended.result.deletes;
      stats[index] = appended.stat;
      if (appended.columnRanges !== undefined) logColumnRanges.set(appended.stat.path!, appended.columnRanges);
      uploaded.push(appended.stat.path!);
      progress(`file group ${index + 1}/${buckets.length}: ${appended.result.rowCount} records, ${appended.result.deletes} deletes → ${appended.stat.path}`);
      return;
    }
    const writeToken = `${index}-1-0`;
    const fileName = baseFileName(bucket.fileId, writeToken, instantTime);
    const path = joinPartitionPath(bucket.partitionPath, fileName);
    await createMarker(storage, instantTime, bucket.partitionPath, fileName, bucket.kind === 'UPDATE' ? 'MERGE' : 'CREATE');
    const existingFile = bucket.kind === 'UPDATE' ? bucket.existingFile : undefined;
    prepareFooter(index);
    // Awaited by the write once its rows are written: the keys are hashed while DuckDB writes them.
    const keyValues = footers.get(index)!;
    footers.delete(index);
    prepareFooter(index + 1);
    const localFile = join(workDir, 'out', `${index}.parquet`);
    const started = Date.now();
    const result = await session.writeFileGroup({
      bucket: index,
      ...(existingFile === undefined ? {} : { existingFile }),
      outputFile: localFile,
      partitionPath: bucket.partitionPath,
      fileName,
      commitTime: instantTime,
      taskPartitionId: index,
      rowGroupSize,
      keyValues,
      typeTemplates: plan.stagedFiles.length > 0 ? [plan.stagedFiles[0]!] : context.tableTemplates,
    });
    inserted += result.inserts;
    updated += result.updates;
    deleted += result.deletes;
    const cdcStats =
      cdcLogs === undefined || bucket.kind !== 'UPDATE'
        ? null
        : await cdcLogs.write(
            { bucket: index, partitionPath: bucket.partitionPath, fileId: bucket.fileId, existingFile: bucket.existingFile, writeToken },
            localFile,
            result,
          );
    uploaded.push(...Object.keys(cdcStats ?? {}));
    stats[index] = newWriteStat({
      fileId: bucket.fileId,
      path,
      partitionPath: bucket.partitionPath,
      cdcStats,
      prevCommit: bucket.kind === 'UPDATE' ? bucket.previousInstant : 'null',
      ...(bucket.kind === 'UPDATE' ? { prevBaseFile: plan.stagedFileNames[bucket.existingFile]! } : {}),
      numWrites: result.rowCount,
      numDeletes: result.deletes,
      numUpdateWrites: result.updates,
      numInserts: result.inserts,
      totalWriteBytes: result.bytes,
      fileSizeInBytes: result.bytes,
      runtimeStats: {
        totalScanTime: 0,
        totalUpsertTime: bucket.kind === 'UPDATE' ? Date.now() - started : 0,
        totalCreateTime: bucket.kind === 'INSERT' ? Date.now() - started : 0,
      },
    });
    uploaded.push(path);
    localFiles.set(path, localFile);
    await uploads.run(() => storage.uploadFile(path, localFile));
    progress(`file group ${index + 1}/${buckets.length}: ${result.rowCount} records → ${path}`);
  };
  try {
    // Base files are written FILE_GROUP_WRITES_AT_ONCE at a time: a file group of one row group is encoded by one of
    // DuckDB's threads, so one write at a time left the others idle. Log appends and cdc logs stay one at a time.
    const writesAtOnce = buckets.some((bucket) => bucket.kind === 'APPEND') || cdcLogs !== undefined ? 1 : FILE_GROUP_WRITES_AT_ONCE;
    await mapWithConcurrency(buckets, writesAtOnce, writeBucket);
  } finally {
    // Also when writing a file failed: no upload may still be landing while the rollback deletes.
    await uploads.drain().catch(() => undefined);
    await Promise.allSettled(footers.values()); // a read still running on the session when it closes would crash
    await appender?.close();
    await cdcLogs?.close();
  }
  await uploads.drain();
  return { stats, inserted, updated, deleted, localFiles, logColumnRanges };
}

interface WriteCommit {
  readonly instantTime: string;
  readonly action: WriteAction;
  readonly plan: WritePlan;
  readonly written: WrittenFiles;
  readonly metadata: CommitMetadata;
  readonly metadataTable: MetadataTableSession;
  /** Completed instants when the write started: those completed since may conflict. */
  readonly completedAtStart: ReadonlySet<string>;
}

/**
 * Under the lock: T must still be ours, no write completed since it started and no pending clustering may touch
 * its file groups; then the metadata table's deltacommit, then `T.commit` (readers apply the former once it exists).
 */
async function commitWrite(context: WriteContext, commit: WriteCommit): Promise<void> {
  const { table, session, config, options, prepared } = context;
  const { storage } = table;
  const { instantTime, action, plan, written, metadata, metadataTable, completedAtStart } = commit;
  const buckets = plan.buckets.buckets;
  // With the bucket index a new bucket conflicts too: two writers must not both create bucket n of a partition.
  const ours = new Set(buckets.filter((b) => b.kind !== 'INSERT' || context.bucketIndex !== undefined).map((b) => fileGroupKey(b.partitionPath, b.fileId)));
  await withTableLock(
    table,
    prepared.lock,
    async (fresh, lease) => {
      const current = fresh.timeline;
      // First: once another writer rolled T back, that is the error, whatever else changed meanwhile (a Spark writer
      // that rolls T back eagerly may also have bootstrapped the metadata table or updated our file groups).
      await assertStillInflight(storage, current, instantTime, action);
      const completedSinceStart = await settleAll(
        current
          .completedWrites()
          .filter((i) => !completedAtStart.has(`${i.time}.${i.action}`) && i.time !== instantTime)
          .map(async (i) => ({ time: i.time, action: i.action, metadata: await readCommitMetadata(storage, i, current.layout) })),
      );
      const pending = (await pendingClusteringPlans(storage, current)).map(({ instant, plan: clustering }) => ({
        instant: instant.time,
        fileGroups: new Set(clustering.inputGroups.flatMap((g) => g.slices.map((s) => fileGroupKey(s.partitionPath, s.fileId)))),
      }));
      const conflicts = findConflicts({
        ours,
        completedSinceStart,
        pendingClustering: pending,
        ...(context.bucketIndex === undefined ? {} : { conflictKey: bucketConflictKey }),
      });
      if (conflicts.length > 0) {
        const first = conflicts[0]!;
        throw new ConflictError(
          `write ${instantTime} conflicts with ${first.reason === 'completed-write' ? 'commit' : 'pending clustering'} ${first.instant} on file group(s) ${first.fileGroups.map(describeFileGroup).join(', ')}`,
          { location: storage.uri, fix: 'nothing of this write is visible; retry it' },
        );
      }
      await lease.assertHeld();
      await metadataTable.commit(instantTime, metadata, {
        lease,
        dataTable: fresh,
        localFiles: written.localFiles,
        logColumnRanges: written.logColumnRanges,
        ...(options.afterMetadataTableWrite === undefined ? {} : { afterStorageWrite: options.afterMetadataTableWrite }),
        recordIndex: async () => {
          const changes = await session.recordLocationChanges();
          return {
            updates: changes.inserted.map(({ bucket, recordKey, partitionPath }) => ({ recordKey, partitionPath, fileId: buckets[bucket]!.fileId })),
            deletes: changes.deleted,
          };
        },
      });
      await lease.assertHeld();
      await transitionToCompleted(storage, current.layout, instantTime, action, current.layout.encodeCommitMetadata(metadata, action));
    },
    { waitMs: config.lockWaitMs },
  );
}

/**
 * Under the lock, just before `T.commit`: T must still be an inflight commit that no rollback names. Another writer
 * may have rolled it back meanwhile (Spark's EAGER failed-writes cleaning rolls back every pending commit; a LAZY one
 * does once our heartbeat looks expired), deleting our files; committing then would publish files that are gone.
 */
async function assertStillInflight(storage: Storage, timeline: Timeline, instantTime: string, action: WriteAction): Promise<void> {
  const instant = timeline.instants.find((i) => i.time === instantTime && i.action === action);
  const rollback = await findRollbackOf(storage, timeline, instantTime);
  if (instant?.state === 'INFLIGHT' && rollback === undefined) return;
  const fix =
    'nothing of this write is visible and its files were removed; retry it. Another writer rolls back pending writes: ' +
    'every writer of a table with more than one writer needs hoodie.write.concurrency.mode=optimistic_concurrency_control, ' +
    'hoodie.cleaner.policy.failed.writes=LAZY and the same lock provider';
  if (rollback !== undefined) {
    throw new InstantRolledBackError(instantTime, `rollback ${rollback.time} (${rollback.state.toLowerCase()}) rolled it back while it ran`, {
      rollbackInstant: rollback.time,
      location: storage.uriOf(instantPath(rollback.state === 'COMPLETED' ? rollback : { ...rollback, state: 'REQUESTED' }, timeline.layout)),
      fix,
    });
  }
  const what = instant === undefined ? 'its timeline files were removed while it ran' : `it is ${instant.state.toLowerCase()} now, not inflight`;
  throw new InstantRolledBackError(instantTime, what, {
    location: storage.uriOf(instantPath({ time: instantTime, action, state: 'INFLIGHT' }, timeline.layout)),
    fix,
  });
}

/** A file group's partition and bucket number (BucketIdentifier.partitionBucketIdStr); other file ids stay themselves. */
function bucketConflictKey(key: string): string {
  // fileGroupKey joins the two with NUL; a file id holds none.
  const at = key.lastIndexOf('\u0000');
  const bucket = bucketNumberOf(key.slice(at + 1));
  return bucket === undefined ? key : fileGroupKey(key.slice(0, at), bucketIdStr(bucket));
}

/** Remove what a failed write left (it is not visible either way); a failure here leaves the instant for `rollback`. */
async function rollbackAfterFailure(table: HudiTable, instantTime: string, lock: LockProvider, cause: unknown, uploaded: readonly string[]): Promise<void> {
  try {
    const reloaded = await table.reload();
    const instant = reloaded.timeline.find(instantTime);
    if (instant?.state === 'COMPLETED') {
      // The commit's request landed although its answer did not (a timeout): the write is visible, nothing to undo.
      if (cause instanceof Error) cause.message += ` [the commit ${instantTime} completed nonetheless: the write is visible]`;
      return;
    }
    if (instant === undefined) {
      // Another writer took the instant off the timeline; what it did not delete of ours, we do.
      await removeLeftovers(reloaded.storage, instantTime, uploaded);
      return;
    }
    // This process is the writer and it has stopped writing, so its heartbeat says nothing.
    await rollbackInstant(reloaded, instantTime, { lock, ignoreHeartbeat: true });
  } catch (rollbackError) {
    if (cause instanceof Error) {
      cause.message += ` [the failed write ${instantTime} could not be rolled back automatically (${errorMessage(rollbackError)}); the next write or service run rolls it back, or run \`hudi-serverless rollback ${table.storage.uri} ${instantTime}\`]`;
    }
  }
}

/** Our data files of an instant no longer on the timeline (only files named with it), then its marker folder. */
async function removeLeftovers(storage: Storage, instantTime: string, uploaded: readonly string[]): Promise<void> {
  const markers = await listMarkers(storage, instantTime);
  const marked = markers.map((marker) => joinPartitionPath(marker.partitionPath, marker.fileName));
  // Log files carry their slice's base instant, not T: those of T are the ones its APPEND markers name.
  const appended = new Set(markers.filter((m) => m.type === 'APPEND').map((m) => joinPartitionPath(m.partitionPath, m.fileName)));
  const ours = [...new Set([...uploaded, ...marked])].filter(
    (path) => parseBaseFileName(fileNameOf(path))?.instantTime === instantTime || (appended.has(path) && isLogFileName(path)),
  );
  await storage.delete(ours);
  await deleteMarkerDir(storage, instantTime);
}

function computeKeys(
  values: KeyFieldColumns,
  rowCount: number,
  fields: readonly string[],
  keygen: ReturnType<typeof createKeyGenerator>,
): { keys: RowKey[]; badRecords: BadRecord[] } {
  const keys: RowKey[] = [];
  const badRecords: BadRecord[] = [];
  const record: Record<string, unknown> = {};
  for (let row = 0; row < rowCount; row++) {
    for (const field of fields) setPath(record, field, values.values.get(field)?.[row] ?? null);
    try {
      keys.push({ row, recordKey: keygen.recordKey(record), partitionPath: keygen.partitionPath(record) });
    } catch (error) {
      badRecords.push({ row, reason: errorMessage(error) });
    }
  }
  return { keys, badRecords };
}

/** Nested key fields (`a.b`) are looked up through objects, so rebuild that shape. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1)!] = value;
}

/**
 * Completed commits newest first, for the average record size (Hudi reads the commit timeline in reverse). Of a
 * deltacommit only the base files count (AverageRecordSizeUtils): log records are not Parquet-sized.
 */
async function recentCommitMetadata(table: HudiTable, timeline: Timeline): Promise<CommitMetadata[]> {
  const writes = timeline.completedWrites().slice(-20).reverse();
  return mapWithConcurrency(writes, 8, async (instant) => {
    const metadata = await readCommitMetadata(table.storage, instant, timeline.layout);
    if (instant.action !== 'deltacommit') return metadata;
    const baseFilesOnly: Record<string, WriteStat[]> = {};
    for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) {
      baseFilesOnly[partition] = stats.filter((stat) => stat.path !== null && parseBaseFileName(fileNameOf(stat.path)) !== undefined);
    }
    return { ...metadata, partitionToWriteStats: baseFilesOnly };
  });
}

function groupByPartition(stats: readonly WriteStat[]): Record<string, WriteStat[]> {
  const out: Record<string, WriteStat[]> = {};
  for (const stat of stats) (out[stat.partitionPath ?? ''] ??= []).push(stat);
  return out;
}

/** The inflight file's workload profile: per partition, inserts per new bucket and updates per file group. */
function workloadProfile(
  buckets: readonly Bucket[],
  inserts: readonly { bucket: number; count: number }[],
  updatesByFile: ReadonlyMap<number, number>,
  bucketOfFile: ReadonlyMap<number, number>,
  operation: WriteOperation,
): CommitMetadata {
  const stats: WriteStat[] = buckets.map((bucket, index) => {
    const insertCount = inserts.filter((a) => a.bucket === index).reduce((sum, a) => sum + a.count, 0);
    const fileIndex = [...bucketOfFile].find(([, b]) => b === index)?.[0];
    const updates = fileIndex === undefined ? 0 : (updatesByFile.get(fileIndex) ?? 0);
    return newWriteStat({
      fileId: bucket.kind === 'INSERT' ? '' : bucket.fileId,
      path: null,
      partitionPath: null,
      numInserts: insertCount,
      numUpdateWrites: operation === 'delete' ? 0 : updates,
      numDeletes: operation === 'delete' ? updates : 0,
    });
  });
  const byPartition: Record<string, WriteStat[]> = {};
  buckets.forEach((bucket, i) => {
    (byPartition[bucket.partitionPath] ??= []).push(stats[i]!);
  });
  return { partitionToWriteStats: byPartition, compacted: false, extraMetadata: {}, operationType: OPERATION_TYPES[operation] };
}

/** `.hoodie_partition_metadata` in each new partition folder, as Hudi writes it. */
async function writePartitionMetadata(storage: Storage, partitions: readonly string[], instantTime: string): Promise<void> {
  await settleAll(
    partitions.map(async (partition) => {
      const depth = partition === '' ? 0 : partition.split('/').length;
      const body = `#partition metadata\n#${new Date().toUTCString()}\ncommitTime=${instantTime}\npartitionDepth=${depth}\n`;
      try {
        await storage.putIfAbsent(joinPartitionPath(partition, PARTITION_METAFILE), body);
      } catch (error) {
        if (!(error instanceof AlreadyExistsError)) throw error;
      }
    }),
  );
}
