/**
 * Copy-on-write writes (HoodieWriteClient for COW tables): bulk_insert, insert, upsert and delete of one batch.
 *
 * Timeline protocol, as Hudi: `T.commit.requested` (under the lock, T strictly greater than every instant) →
 * `T.inflight` (workload profile) → data files (each announced by a marker first) → under the lock, the check that T
 * is still inflight and no rollback names it (Hudi's transitionState requires the old state to exist), the conflict
 * check, and `T.commit`, the commit point. Readers never see a partial write: until `T.commit` exists, every
 * file named with T is invisible. A write that fails is rolled back (its files removed via markers); one killed
 * midway is rolled back by the next write (failed-writes.ts: at once with the default EAGER policy, once its
 * heartbeat expired with LAZY) or the next service run.
 *
 * Record location ("tagging"): the record keys of the touched partitions' latest base files are read with the
 * engine and joined with the batch. It is exact (no false positives to re-check) and the files have to be local
 * anyway for the merge; the bloom filters we write keep Hudi's own bloom index working on our files.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlreadyExistsError, ConflictError, HudiError, InstantRolledBackError, errorMessage } from '../errors.js';
import { WriteSession, type ExistingBaseFile, type InputFormat, type KeyFieldColumns, type RowKey, type WriteSessionOptions } from '../engine/write.js';
import { baseFileName, fileGroupKey, joinPartitionPath, parseBaseFileName, type FileSystemView } from '../fs-view.js';
import { createKeyGenerator, declarativeKeyPlan, keyGeneratorOptionsFromTable } from '../keygen.js';
import { lockProviderFor } from '../lock/index.js';
import type { LockProvider } from '../lock/port.js';
import { assertNoMetadataTable, assertNoMetadataTableNow } from '../metadata-table.js';
import { stageFiles } from '../reader.js';
import { describeHeal, failedWritesPolicy, healTable } from '../failed-writes.js';
import { findRollbackOf, rollbackInstant } from '../rollback.js';
import { withMetaFields, type AvroRecordSchema } from '../schema.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { HudiTable, PARTITION_METAFILE, withTableLock } from '../table.js';
import { newTableOptionsFromWriteProperties, PROPERTIES_FILE } from '../table-config.js';
import { createTable } from '../table-init.js';
import { newWriteStat, serializeCommitMetadata, type CommitMetadata, type WriteOperationType, type WriteStat } from '../timeline/commit-metadata.js';
import { newInstantTime } from '../timeline/instant.js';
import { startHeartbeat } from '../timeline/heartbeat.js';
import { createMarker, deleteMarkerDir, listMarkers } from '../timeline/markers.js';
import { pendingClusteringPlans } from '../timeline/queries.js';
import { instantPath, readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../timeline/transitions.js';
import { describeFileGroup, findConflicts } from './conflict.js';
import { hudiFooter } from './footer.js';
import { averageRecordSize, planBuckets, rowGroupRows, type Bucket, type CandidateFile } from './small-files.js';
import { resolveRecordPayload, writeConfigFromProperties, type WriteConfig, type WriteOperation } from './write-config.js';

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
}

const OPERATION_TYPES: Record<WriteOperation, WriteOperationType> = { bulk_insert: 'BULK_INSERT', insert: 'INSERT', upsert: 'UPSERT', delete: 'DELETE' };
const UPLOAD_CONCURRENCY = 4;

/** Write one batch to the table at `storage`, creating the table from the properties when there is none. */
export async function writeBatch(storage: Storage, options: WriteOptions): Promise<WriteResult> {
  const props = options.properties ?? new Map<string, string>();
  const config = writeConfigFromProperties(props);
  const progress = options.onProgress ?? (() => {});
  const workDir = await mkdtemp(join(options.tempDir ?? tmpdir(), 'hudi-write-'));
  const session = await WriteSession.open({ ...options.engine, ...(options.engine?.tempDirectory ? {} : { tempDirectory: join(workDir, 'duckdb') }) });
  let createdTable = false;
  try {
    let table = await openOrNull(storage);
    // One listing serves the type template now and the write's file groups later.
    const view = table === undefined ? undefined : await table.fileSystemView();
    const template = view === undefined ? undefined : newestBaseFile(view);
    const templates = await stageFiles(storage, template === undefined ? [] : [template], workDir);
    const batch = await session.loadBatch(options.input, templates.localPaths);
    progress(`loaded ${batch.rowCount} records from ${options.input.file}`);

    let tableSchema: AvroRecordSchema;
    if (table === undefined) {
      const newTable = newTableOptionsFromWriteProperties(props, 'write properties');
      tableSchema = await session.avroSchemaOfBatch(newTable.tableName);
      await createTable(storage, { ...newTable, createSchema: JSON.stringify(tableSchema) });
      createdTable = true;
      table = await HudiTable.open(storage, { mode: 'write' });
    } else {
      tableSchema = (await table.schema())?.schema ?? (await session.avroSchemaOfBatch(table.config.name));
    }
    assertWritable(table);
    return await writeToTable(table, view, templates.localPaths, session, batch.rowCount, tableSchema, config, options, workDir, createdTable);
  } finally {
    await session.close();
    await rm(workDir, { recursive: true, force: true });
  }
}

async function openOrNull(storage: Storage): Promise<HudiTable | undefined> {
  try {
    return await HudiTable.open(storage, { mode: 'write' });
  } catch (error) {
    if (error instanceof HudiError && /not a Hudi table/.test(error.message)) return undefined;
    throw error;
  }
}

function assertWritable(table: HudiTable): void {
  const location = table.storage.uriOf('.hoodie/hoodie.properties');
  if (!table.config.populateMetaFields) {
    throw new HudiError('writes to tables without meta fields (hoodie.populate.meta.fields=false) are not supported', { location, fix: 'write this table with Hudi' });
  }
  assertNoMetadataTable(table.config, location, 'a write');
}

/** The newest latest base file, whose Parquet types new files copy (Hudi's decimal and timestamp encodings). */
function newestBaseFile(view: FileSystemView): string | undefined {
  return view.latestBaseFiles().sort((a, b) => b.instantTime.localeCompare(a.instantTime))[0]?.path;
}

async function writeToTable(
  table: HudiTable, startView: FileSystemView | undefined, tableTemplates: readonly string[], session: WriteSession, rowCount: number, tableSchema: AvroRecordSchema, config: WriteConfig,
  options: WriteOptions, workDir: string, createdTable: boolean,
): Promise<WriteResult> {
  const { storage } = table;
  const props = options.properties ?? new Map<string, string>();
  const progress = options.onProgress ?? (() => {});
  const operation = options.operation;

  // Record keys and partition paths, computed by the table's key generator (set-wise in the engine when it can).
  const keygenOptions = keyGeneratorOptionsFromTable(table.config);
  const plan = declarativeKeyPlan(keygenOptions);
  let badRecords: BadRecord[];
  let partitions: string[];
  if (plan !== undefined) {
    ({ badRecords, partitions } = await session.setRowKeysFromPlan(plan));
  } else {
    const keygen = createKeyGenerator(keygenOptions);
    const fields = [...new Set([...keygen.recordKeyFields, ...keygen.partitionFields])];
    const computed = computeKeys(await session.keyFieldValues(fields), rowCount, fields, keygen);
    badRecords = computed.badRecords;
    partitions = [...new Set(computed.keys.map((k) => k.partitionPath))].sort();
    await session.setRowKeys(computed.keys);
  }
  if (badRecords.length > 0 && (options.badRecords ?? 'fail') === 'fail') {
    const first = badRecords[0]!;
    throw new HudiError(`${badRecords.length} record(s) have no usable key; the first, row ${first.row + 1}: ${first.reason}`, {
      location: options.input.file,
      fix: 'fix those records; nothing was written',
    });
  }
  const precombineField = table.config.precombineField;
  const combine = operation === 'upsert' ? config.combineBeforeUpsert : operation === 'delete' ? config.combineBeforeDelete : config.combineBeforeInsert;
  // The payload decides how records merge: against stored ones on upsert, among a batch's duplicates when combining.
  const payload = operation === 'upsert' || (combine && operation !== 'delete') ? resolveRecordPayload(config, table.config.properties, storage.uriOf(PROPERTIES_FILE)) : undefined;
  if (combine && operation !== 'delete' && precombineField !== undefined && !session.batchColumns().some((c) => c.name === precombineField)) {
    throw new HudiError(`the precombine field "${precombineField}" is not in the input`, { location: options.input.file, fix: 'add the column, or write with hoodie.combine.before.upsert=false' });
  }
  await session.buildIncoming({ combine, ...(precombineField === undefined ? {} : { precombineField }) });

  const lock = options.lock ?? lockProviderFor(props, table.config.name, storage);
  const now = options.now ?? (() => new Date());
  const startTimeline = table.timeline;
  const completedAtStart = new Set(startTimeline.completed().map((i) => `${i.time}.${i.action}`));
  // Hudi's startCommit: failed writes go before a new instant starts (EAGER: all of them; LAZY: expired ones).
  const healed = await healTable(table, { lock, policy: failedWritesPolicy(props).policy, now: now(), lockWaitMs: config.lockWaitMs });
  for (const line of describeHeal(healed)) progress(line);
  const instantTime = await withTableLock(table, lock, async (current) => {
    const time = newInstantTime(current.timeline.allTimes(), now(), current.config.timelineTimeZone);
    await createRequested(storage, time, 'commit');
    return time;
  }, { waitMs: config.lockWaitMs });
  progress(`instant ${instantTime}: ${operation} of ${rowCount} records into ${partitions.length} partition(s)${payload === undefined ? '' : `, merged with ${payload.className.slice(payload.className.lastIndexOf('.') + 1)} (${payload.source})`}`);

  const heartbeat = await startHeartbeat(storage, instantTime);
  /** Every data file this write uploaded (or began to), for the clean-up when another writer took the instant away. */
  const uploaded: string[] = [];
  try {
    const view = startView ?? (await table.fileSystemView());
    const latest = operation === 'bulk_insert' ? [] : partitions.flatMap((p) => view.latestBaseFiles(p));
    const stagedFiles = await stageFiles(storage, latest.map((f) => f.path), workDir);
    const candidates: CandidateFile[] = latest.map((f, index) => ({
      index, partitionPath: f.partitionPath, fileId: f.fileId, size: f.size, instantTime: f.instantTime,
      inPendingClustering: view.isInPendingClustering(f.partitionPath, f.fileId),
    }));
    const existing: ExistingBaseFile[] = latest.map((f, i) => ({ localPath: stagedFiles.localPaths[i]!, partitionPath: f.partitionPath, fileId: f.fileId }));
    // insert and bulk_insert do not look records up (Hudi's insert may duplicate keys); upsert and delete do.
    const orderingField = operation === 'upsert' && payload?.orderingAgainstStored === true ? precombineField : undefined;
    const tagging = await session.tagLocations(existing, { lookUp: operation === 'upsert' || operation === 'delete', ...(orderingField === undefined ? {} : { orderingField }) });
    if (config.rejectUpdatesDuringClustering) {
      const blocked = [...tagging.updatesByFile.keys()].map((i) => candidates[i]!).filter((f) => f.inPendingClustering);
      if (blocked.length > 0) {
        throw new ConflictError(`${blocked.length} file group(s) this ${operation} would update are in a pending clustering plan (${blocked.slice(0, 3).map((f) => `${f.partitionPath}/${f.fileId}`).join(', ')})`, {
          location: storage.uri,
          fix: 'wait for the clustering to complete (or roll it back), then retry; hoodie.clustering.updates.strategy=reject',
        });
      }
    }
    const commits = await recentCommitMetadata(table, startTimeline);
    const averageSize = averageRecordSize(commits, config);
    const plan = planBuckets({
      operation,
      insertsByPartition: operation === 'delete' ? new Map() : tagging.insertsByPartition,
      updatesByFile: tagging.updatesByFile,
      files: candidates,
      averageRecordSize: averageSize,
      config,
      newFileId: () => `${randomUUID()}-0`,
    });
    await session.assignBuckets(plan.bucketOfFile, plan.insertAssignments, { deletes: operation === 'delete' });
    await transitionToInflight(storage, instantTime, 'commit', serializeCommitMetadata(workloadProfile(plan.buckets, plan.insertAssignments, tagging.updatesByFile, plan.bucketOfFile, operation)));

    const schemaWithMeta = JSON.stringify(withMetaFields(tableSchema));
    const rowGroupSize = rowGroupRows(config, averageSize);
    const stats: WriteStat[] = new Array(plan.buckets.length);
    const uploads: Promise<void>[] = [];
    let inserted = 0;
    let updated = 0;
    let deleted = 0;
    const writeBucket = async (bucket: Bucket, index: number): Promise<void> => {
      const writeToken = `${index}-1-0`;
      const fileName = baseFileName(bucket.fileId, writeToken, instantTime);
      const path = joinPartitionPath(bucket.partitionPath, fileName);
      await createMarker(storage, instantTime, bucket.partitionPath, fileName, bucket.kind === 'UPDATE' ? 'MERGE' : 'CREATE');
      const existingFile = bucket.kind === 'UPDATE' ? bucket.existingFile : undefined;
      const recordKeys = await session.fileGroupRecordKeys(index, existingFile);
      const localFile = join(workDir, 'out', `${index}.parquet`);
      const started = Date.now();
      const result = await session.writeFileGroup({
        bucket: index, ...(existingFile === undefined ? {} : { existingFile }), outputFile: localFile, partitionPath: bucket.partitionPath,
        fileName, commitTime: instantTime, taskPartitionId: index, rowGroupSize, keyValues: hudiFooter(recordKeys, schemaWithMeta, { bloom: config.bloom }),
        typeTemplates: stagedFiles.localPaths.length > 0 ? [stagedFiles.localPaths[0]!] : tableTemplates,
      });
      inserted += result.inserts;
      updated += result.updates;
      deleted += result.deletes;
      stats[index] = newWriteStat({
        fileId: bucket.fileId, path, partitionPath: bucket.partitionPath,
        prevCommit: bucket.kind === 'UPDATE' ? bucket.previousInstant : 'null',
        numWrites: result.rowCount, numDeletes: result.deletes, numUpdateWrites: result.updates, numInserts: result.inserts,
        totalWriteBytes: result.bytes, fileSizeInBytes: result.bytes,
        runtimeStats: { totalScanTime: 0, totalUpsertTime: bucket.kind === 'UPDATE' ? Date.now() - started : 0, totalCreateTime: bucket.kind === 'INSERT' ? Date.now() - started : 0 },
      });
      uploaded.push(path);
      const upload = storage.uploadFile(path, localFile);
      // Awaited with its batch below; a failure must not also surface as an unhandled rejection when an earlier
      // await throws first (the write's own rollback has to run).
      upload.catch(() => undefined);
      uploads.push(upload);
      if (uploads.length >= UPLOAD_CONCURRENCY) await Promise.all(uploads.splice(0));
      progress(`file group ${index + 1}/${plan.buckets.length}: ${result.rowCount} records → ${path}`);
    };
    for (const [index, bucket] of plan.buckets.entries()) await writeBucket(bucket, index);
    await Promise.all(uploads);
    await writePartitionMetadata(storage, partitions.filter((p) => !view.allPartitionPaths().includes(p)), instantTime);
    if (options.afterDataFiles) await options.afterDataFiles();

    const metadata: CommitMetadata = {
      partitionToWriteStats: groupByPartition(stats),
      compacted: false,
      extraMetadata: { ...options.extraMetadata, schema: JSON.stringify(tableSchema) },
      operationType: OPERATION_TYPES[operation],
    };
    const ours = new Set(plan.buckets.filter((b) => b.kind === 'UPDATE').map((b) => fileGroupKey(b.partitionPath, b.fileId)));
    await withTableLock(table, lock, async (fresh, lease) => {
      const current = fresh.timeline;
      // First: once another writer rolled T back, that is the error, whatever else changed meanwhile (a Spark writer
      // that rolls T back eagerly may also have bootstrapped the metadata table or updated our file groups).
      await assertStillInflight(storage, current, instantTime);
      const completedSinceStart = await Promise.all(current.completedWrites()
        .filter((i) => !completedAtStart.has(`${i.time}.${i.action}`) && i.time !== instantTime)
        .map(async (i) => ({ time: i.time, action: i.action, metadata: await readCommitMetadata(storage, i) })));
      const pending = (await pendingClusteringPlans(storage, current)).map(({ instant, plan: clustering }) => ({
        instant: instant.time,
        fileGroups: new Set(clustering.inputGroups.flatMap((g) => g.slices.map((s) => fileGroupKey(s.partitionPath, s.fileId)))),
      }));
      const conflicts = findConflicts({ ours, completedSinceStart, pendingClustering: pending });
      if (conflicts.length > 0) {
        const first = conflicts[0]!;
        throw new ConflictError(
          `write ${instantTime} conflicts with ${first.reason === 'completed-write' ? 'commit' : 'pending clustering'} ${first.instant} on file group(s) ${first.fileGroups.map(describeFileGroup).join(', ')}`,
          { location: storage.uri, fix: 'nothing of this write is visible; retry it' },
        );
      }
      await assertNoMetadataTableNow(storage, 'a write');
      await lease.assertHeld();
      await transitionToCompleted(storage, instantTime, 'commit', serializeCommitMetadata(metadata));
    }, { waitMs: config.lockWaitMs });
    await deleteMarkerDir(storage, instantTime).catch(() => undefined);
    progress(`committed ${instantTime}: ${inserted} inserted, ${updated} updated, ${deleted} deleted in ${plan.buckets.length} file group(s)`);
    return { instantTime, operation, stats, inserted, updated, deleted, badRecords, averageRecordSize: averageSize, createdTable };
  } catch (error) {
    await rollbackAfterFailure(table, instantTime, lock, error, uploaded);
    throw error;
  } finally {
    await heartbeat.stop();
  }
}

/**
 * Under the lock, just before `T.commit`: T must still be an inflight commit that no rollback names. Another writer
 * may have rolled it back meanwhile (Spark's EAGER failed-writes cleaning rolls back every pending commit; a LAZY one
 * does once our heartbeat looks expired), deleting our files; committing then would publish files that are gone.
 */
async function assertStillInflight(storage: Storage, timeline: Timeline, instantTime: string): Promise<void> {
  const instant = timeline.instants.find((i) => i.time === instantTime && i.action === 'commit');
  const rollback = await findRollbackOf(storage, timeline, instantTime);
  if (instant?.state === 'INFLIGHT' && rollback === undefined) return;
  const fix = 'nothing of this write is visible and its files were removed; retry it. Another writer rolls back pending writes: ' +
    'every writer of a table with more than one writer needs hoodie.write.concurrency.mode=optimistic_concurrency_control, ' +
    'hoodie.cleaner.policy.failed.writes=LAZY and the same lock provider';
  if (rollback !== undefined) {
    throw new InstantRolledBackError(instantTime, `rollback ${rollback.time} (${rollback.state.toLowerCase()}) rolled it back while it ran`, {
      rollbackInstant: rollback.time,
      location: storage.uriOf(instantPath(rollback.state === 'COMPLETED' ? rollback : { ...rollback, state: 'REQUESTED' })),
      fix,
    });
  }
  const what = instant === undefined ? 'its timeline files were removed while it ran' : `it is ${instant.state.toLowerCase()} now, not inflight`;
  throw new InstantRolledBackError(instantTime, what, { location: storage.uriOf(instantPath({ time: instantTime, action: 'commit', state: 'INFLIGHT' })), fix });
}

/** Remove what a failed write left (it is not visible either way); a failure here leaves the instant for `rollback`. */
async function rollbackAfterFailure(table: HudiTable, instantTime: string, lock: LockProvider, cause: unknown, uploaded: readonly string[]): Promise<void> {
  try {
    const reloaded = await table.reload();
    const instant = reloaded.timeline.find(instantTime);
    if (instant?.state === 'COMPLETED') return;
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
  const marked = (await listMarkers(storage, instantTime)).map((marker) => joinPartitionPath(marker.partitionPath, marker.fileName));
  const ours = [...new Set([...uploaded, ...marked])].filter((path) => parseBaseFileName(path.slice(path.lastIndexOf('/') + 1))?.instantTime === instantTime);
  await storage.delete(ours);
  await deleteMarkerDir(storage, instantTime);
}

function computeKeys(values: KeyFieldColumns, rowCount: number, fields: readonly string[], keygen: ReturnType<typeof createKeyGenerator>): { keys: RowKey[]; badRecords: BadRecord[] } {
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

/** Completed commits newest first, for the average record size (Hudi reads the commit timeline in reverse). */
async function recentCommitMetadata(table: HudiTable, timeline: Timeline): Promise<CommitMetadata[]> {
  const writes = timeline.completedWrites().slice(-20).reverse();
  return mapWithConcurrency(writes, 8, (instant) => readCommitMetadata(table.storage, instant));
}

function groupByPartition(stats: readonly WriteStat[]): Record<string, WriteStat[]> {
  const out: Record<string, WriteStat[]> = {};
  for (const stat of stats) (out[stat.partitionPath ?? ''] ??= []).push(stat);
  return out;
}

/** The inflight file's workload profile: per partition, inserts per new bucket and updates per file group. */
function workloadProfile(
  buckets: readonly Bucket[], inserts: readonly { bucket: number; count: number }[], updatesByFile: ReadonlyMap<number, number>,
  bucketOfFile: ReadonlyMap<number, number>, operation: WriteOperation,
): CommitMetadata {
  const stats: WriteStat[] = buckets.map((bucket, index) => {
    const insertCount = inserts.filter((a) => a.bucket === index).reduce((sum, a) => sum + a.count, 0);
    const fileIndex = [...bucketOfFile].find(([, b]) => b === index)?.[0];
    const updates = fileIndex === undefined ? 0 : (updatesByFile.get(fileIndex) ?? 0);
    return newWriteStat({
      fileId: bucket.kind === 'UPDATE' ? bucket.fileId : '', path: null, partitionPath: null,
      numInserts: insertCount, numUpdateWrites: operation === 'delete' ? 0 : updates, numDeletes: operation === 'delete' ? updates : 0,
    });
  });
  const byPartition: Record<string, WriteStat[]> = {};
  buckets.forEach((bucket, i) => (byPartition[bucket.partitionPath] ??= []).push(stats[i]!));
  return { partitionToWriteStats: byPartition, compacted: false, extraMetadata: {}, operationType: OPERATION_TYPES[operation] };
}

/** `.hoodie_partition_metadata` in each new partition folder, as Hudi writes it. */
async function writePartitionMetadata(storage: Storage, partitions: readonly string[], instantTime: string): Promise<void> {
  await Promise.all(partitions.map(async (partition) => {
    const depth = partition === '' ? 0 : partition.split('/').length;
    const body = `#partition metadata\n#${new Date().toUTCString()}\ncommitTime=${instantTime}\npartitionDepth=${depth}\n`;
    try {
      await storage.putIfAbsent(joinPartitionPath(partition, PARTITION_METAFILE), body);
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw error;
    }
  }));
}
