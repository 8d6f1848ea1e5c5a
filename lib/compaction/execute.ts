/**
 * Running a compaction plan, as Hudi 0.15's HoodieCompactor and the commit of RunCompactionActionExecutor: the
 * instant goes inflight, every operation's file slice (base file and the plan's log files) is merged by the reader's
 * rules (lib/merge-on-read: blocks of completed instants, the table's payload class; the log records' outcome per key
 * decided by mergeOutcome, the rows merged in DuckDB without the base rows coming into JavaScript) into a new base file
 * `<fileId>_<token>_<instant>.parquet` of the base file's schema and Hudi's footers (records keep their commit time and
 * sequence number, `_hoodie_file_name` names the new file, a marker before it), then the layout's commit (1.x: Avro
 * `<instant>_<completion>.commit`; COMPACT, compacted) under the lock after the metadata table's deltacommit.
 *
 * A pending compaction is resumed from its plan: an inflight one's earlier outputs are deleted and rewritten. A failed
 * one can instead be rolled back (its outputs deleted, back to requested), as Hudi's rollbackInflightCompaction.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hudiFooter } from '../base-file/footer.js';
import { openParquetEngine } from '../engine/parquet-engine.js';
import type { ParquetEngine } from '../engine/port.js';
import { ConflictError, HudiError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { logFilesOf } from '../log-format/index.js';
import { mergeFileSlice } from '../merge-on-read/file-slice-merge.js';
import { assertMetadataTableKeepable, assertRollbackKeepsMetadataTable, keepMetadataTable, type MetadataTableOutcome } from '../metadata/index.js';
import { stageFiles } from '../read/reader.js';
import { findRollbackOf, rollbackInflightCompaction } from '../rollback/rollback.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import { baseFileName, joinPartitionPath, type MergedFileSlice, parseBaseFileName } from '../table/file-system-view.js';
import { type HudiTable, withTableLock } from '../table/table.js';
import { type CommitMetadata, newWriteStat, type WriteStat } from '../timeline/commit-metadata.js';
import {
  type CompactionOperation,
  type CompactionPlan,
  compactionFolderOf,
  compactionInstantPath,
  pendingCompactions,
  readCompactionPlan,
  startCompaction,
} from '../timeline/compaction-plan.js';
import { createMarker, deleteMarkerDir } from '../timeline/markers.js';
import { transitionToCompleted } from '../timeline/transitions.js';
import { compactionWorkDir, deleteWorkDir } from '../timeline/work-folder.js';
import { fileNameOf } from '../util/paths.js';
import { writeConfigFromProperties } from '../writer/write-config.js';
import { assertCompactable, assertCompactionWrites } from './schedule.js';

export interface CompactionRunOptions {
  readonly lock: LockProvider;
  readonly lockWaitMs?: number;
  readonly properties?: ReadonlyMap<string, string>;
  readonly engine?: ParquetEngine;
  readonly log?: (line: string) => void;
}

export interface CompactionRunResult {
  readonly instantTime: string;
  readonly outcome: 'committed' | 'already-committed';
  readonly resumed: boolean;
  readonly writeStats: readonly WriteStat[];
  readonly metadataTable: MetadataTableOutcome | undefined;
  /** Base and log bytes read, and milliseconds merging and writing (the throughput figure). */
  readonly bytesRead: number;
  readonly millis: number;
}

/** A compaction whose operations did not all store a result: the commit waits for them (the state machine does not retry it). */
export class IncompleteCompactionError extends HudiError {
  constructor(problem: string, options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'IncompleteCompactionError';
  }
}

/** Operations compacted at once by one run. */
const PIPELINE = 2;

/** The write token of operation `ordinal`'s output (partition id, stage, attempt). */
const writeToken = (ordinal: number) => `${ordinal}-0-1`;

/** A pending compaction about to run: its plan, and whether an earlier attempt had started it. */
export interface CompactionStart {
  readonly instantTime: string;
  readonly outcome: 'pending' | 'already-committed';
  readonly plan: CompactionPlan | undefined;
  readonly resumed: boolean;
}

/**
 * What refuses a compaction run before it writes anything: the table (version, layout) and a metadata table the
 * compaction's commit could not keep, which would otherwise refuse only at the commit, after the new base files.
 * `instantTime`: the pending compaction to run (undefined: one about to be scheduled).
 */
export async function assertCompactionRunnable(
  table: HudiTable,
  properties: ReadonlyMap<string, string>,
  what = 'a compaction',
  instantTime?: string,
): Promise<void> {
  assertCompactable(table);
  await assertMetadataTableKeepable(table.storage, what, properties, table.config, 'compact', instantTime);
}

/** Take up pending compaction `instantTime`: requested → inflight (an inflight one is resumed from its plan). */
export async function startCompactionRun(
  table: HudiTable,
  instantTime: string,
  log: (line: string) => void = () => undefined,
  properties: ReadonlyMap<string, string> = new Map(),
): Promise<CompactionStart> {
  const { storage } = table;
  await assertCompactionRunnable(table, properties, `compaction ${instantTime}`, instantTime);
  if (isCompleted(table, instantTime)) return { instantTime, outcome: 'already-committed', plan: undefined, resumed: false };
  const pending = pendingCompactions(table.timeline).find((i) => i.time === instantTime);
  if (pending === undefined) {
    throw new HudiError(`no pending compaction ${instantTime}`, {
      location: storage.uriOf('.hoodie'),
      fix: 'see `show-compaction <table>` for the pending ones, or schedule one with `compact --mode schedule`',
    });
  }
  const folder = compactionFolderOf(table.layout);
  const plan = await readCompactionPlan(storage, instantTime, folder);
  const resumed = pending.state === 'INFLIGHT';
  if (!resumed) {
    // A requested compaction has no output: results left by an attempt another writer rolled back (Hudi's
    // rollbackInflightCompaction deletes the base files, not our work folder) would name files that are gone. The
    // run's claim, beside them, stays.
    const stale = await operationResultPaths(table, instantTime);
    if (stale.length > 0) await storage.delete(stale);
    await startCompaction(storage, instantTime, folder);
  } else log(`resuming compaction ${instantTime}: operations without a stored result are rewritten from the plan`);
  return { instantTime, outcome: 'pending', plan, resumed };
}

/** What one operation left: its write stat and input bytes, stored in the compaction's work folder. */
export interface OperationResult {
  readonly ordinal: number;
  readonly stat: WriteStat;
  readonly bytesRead: number;
}

export interface OperationRunResult extends OperationResult {
  /** 'already-done' when an earlier attempt stored the operation's result. */
  readonly outcome: 'executed' | 'already-done';
}

const operationResultPath = (instantTime: string, ordinal: number) => `${compactionWorkDir(instantTime)}/operation-${ordinal}.json`;

async function readOperationResult(storage: HudiTable['storage'], instantTime: string, ordinal: number): Promise<OperationResult | undefined> {
  const path = operationResultPath(instantTime, ordinal);
  if ((await storage.head(path)) === undefined) return undefined;
  return JSON.parse(Buffer.from(await storage.get(path)).toString('utf8')) as OperationResult;
}

/**
 * Run operation `ordinal` of inflight compaction `instantTime`: merge its file slice into the new base file, then
 * store the result. Safe to repeat: an operation with a result returns it; one that ran partway is rewritten.
 */
export async function executeCompactionOperation(
  table: HudiTable,
  instantTime: string,
  ordinal: number,
  options: { engine: ParquetEngine; properties?: ReadonlyMap<string, string>; plan?: CompactionPlan },
): Promise<OperationRunResult> {
  assertCompactable(table);
  // A table upgraded or downgraded since `table` was opened: its plan and file names are no longer this one's.
  await table.assertUnchanged();
  const earlier = await readOperationResult(table.storage, instantTime, ordinal);
  if (earlier !== undefined) return { ...earlier, outcome: 'already-done' };
  if (!pendingCompactions(table.timeline).some((i) => i.time === instantTime && i.state === 'INFLIGHT')) {
    throw new ConflictError(`compaction ${instantTime} is not inflight`, {
      location: table.storage.uriOf(compactionInstantPath(instantTime, 'INFLIGHT', compactionFolderOf(table.layout))),
      fix: 'start it first (its schedule step moves it inflight), or schedule a new compaction',
    });
  }
  const plan = options.plan ?? (await readCompactionPlan(table.storage, instantTime, compactionFolderOf(table.layout)));
  const operation = plan.operations[ordinal];
  if (operation === undefined) {
    throw new HudiError(`compaction ${instantTime} has ${plan.operations.length} operation(s), no operation ${ordinal}`, {
      location: table.storage.uriOf(compactionInstantPath(instantTime, 'REQUESTED', compactionFolderOf(table.layout))),
    });
  }
  const result = await compactOperation(table, instantTime, operation, ordinal, options.engine, options.properties ?? new Map());
  const stored: OperationResult = { ordinal, stat: result.stat, bytesRead: result.bytesRead };
  await table.storage.put(operationResultPath(instantTime, ordinal), JSON.stringify(stored));
  return { ...stored, outcome: 'executed' };
}

/** Operations of `plan` that have no stored result yet. */
export async function operationsWithoutResult(table: HudiTable, instantTime: string, plan: CompactionPlan): Promise<number[]> {
  const stored = new Set(await operationResultPaths(table, instantTime));
  return plan.operations.flatMap((_, ordinal) => (stored.has(operationResultPath(instantTime, ordinal)) ? [] : [ordinal]));
}

/** The stored operation results of compaction `instantTime` (paths). */
async function operationResultPaths(table: HudiTable, instantTime: string): Promise<string[]> {
  const dir = compactionWorkDir(instantTime);
  return (await table.storage.listDir(dir)).files.map((file) => file.path).filter((path) => /\/operation-\d+\.json$/.test(path));
}

/** Commit inflight compaction `instantTime` from its operations' stored results, under the table lock. */
export async function commitCompaction(
  table: HudiTable,
  instantTime: string,
  options: { lock: LockProvider; lockWaitMs?: number; properties?: ReadonlyMap<string, string> },
): Promise<CompactionRunResult> {
  assertCompactable(table);
  const started = Date.now();
  const { storage } = table;
  const done = (current: HudiTable) => isCompleted(current, instantTime);
  if (done(table)) return alreadyCommitted(instantTime);
  // Before the plan is read from where `table`'s layout keeps it (an upgrade moves it).
  await table.assertUnchanged();
  const folder = compactionFolderOf(table.layout);
  const plan = await readCompactionPlan(storage, instantTime, folder);
  const missing = await operationsWithoutResult(table, instantTime, plan);
  if (missing.length > 0) {
    throw new IncompleteCompactionError(
      `compaction ${instantTime} cannot commit: ${missing.length} of ${plan.operations.length} operation(s) have no result (${missing.slice(0, 20).join(', ')})`,
      { location: storage.uriOf(compactionWorkDir(instantTime)), fix: 'run those operations again (or the whole compaction: `compact --mode execute`)' },
    );
  }
  const results: OperationResult[] = [];
  for (const ordinal of plan.operations.keys()) results.push((await readOperationResult(storage, instantTime, ordinal))!);
  const writeStats = results.map((result) => result.stat);
  const bytesRead = results.reduce((sum, result) => sum + result.bytesRead, 0);
  const metadataTable = keepMetadataTable(storage, options.properties ?? new Map(), 'compact', instantTime);
  const outcome = await withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      if (done(current)) return alreadyCommitted(instantTime);
      if (!pendingCompactions(current.timeline).some((i) => i.time === instantTime && i.state === 'INFLIGHT')) {
        throw new ConflictError(`compaction ${instantTime} left the timeline while running (rolled back?)`, {
          location: storage.uriOf(compactionInstantPath(instantTime, 'INFLIGHT', folder)),
          fix: 'schedule a new compaction',
        });
      }
      const schema = await current.schema();
      const metadata: CommitMetadata = {
        partitionToWriteStats: byPartition(writeStats),
        compacted: true,
        extraMetadata: schema === undefined ? {} : { schema: schema.text },
        operationType: 'COMPACT',
      };
      await metadataTable.prepare('a compaction');
      await lease.assertHeld();
      await metadataTable.commit(instantTime, metadata, { lease });
      await lease.assertHeld();
      // The layout names the commit (1.x: `T_<completion>.commit`) and encodes its metadata (1.x: Avro).
      await transitionToCompleted(storage, current.layout, instantTime, 'commit', current.layout.encodeCommitMetadata(metadata, 'commit'));
      return {
        instantTime,
        outcome: 'committed' as const,
        resumed: false,
        writeStats,
        metadataTable: metadataTable.outcome(),
        bytesRead,
        millis: Date.now() - started,
      };
    },
    { waitMs: options.lockWaitMs },
  );
  // What the instant leaves behind, once completed (a crash before this leaves only these small files).
  if (outcome.outcome === 'committed') {
    await deleteWorkDir(storage, compactionWorkDir(instantTime));
    await deleteMarkerDir(storage, instantTime);
  }
  return outcome;
}

/** Run pending compaction `instantTime` (requested or inflight) to its commit. */
export async function runCompaction(table: HudiTable, instantTime: string, options: CompactionRunOptions): Promise<CompactionRunResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const start = await startCompactionRun(table, instantTime, log, options.properties);
  if (start.outcome === 'already-committed' || start.plan === undefined) return alreadyCommitted(instantTime);
  const plan = start.plan;
  const current = await table.reload();
  const engine = options.engine ?? (await openParquetEngine());
  try {
    // Two at a time: one operation's log decoding (JavaScript) overlaps another's merge (DuckDB, off the main thread).
    await mapWithConcurrency(plan.operations, PIPELINE, async (operation, ordinal) => {
      const result = await executeCompactionOperation(current, instantTime, ordinal, {
        engine,
        plan,
        ...(options.properties === undefined ? {} : { properties: options.properties }),
      });
      if (result.outcome === 'executed')
        log(`compacted ${result.stat.path}: ${result.stat.numWrites} records from ${operation.deltaFilePaths.length} log file(s)`);
      return result;
    });
  } finally {
    if (options.engine === undefined) await engine.close();
  }
  const committed = await commitCompaction(current, instantTime, {
    lock: options.lock,
    ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
    ...(options.properties === undefined ? {} : { properties: options.properties }),
  });
  return { ...committed, resumed: start.resumed, millis: Date.now() - started };
}

function alreadyCommitted(instantTime: string): CompactionRunResult {
  return { instantTime, outcome: 'already-committed', resumed: false, writeStats: [], metadataTable: undefined, bytesRead: 0, millis: 0 };
}

/** Run every pending compaction, oldest first. */
export async function runPendingCompactions(table: HudiTable, options: CompactionRunOptions): Promise<CompactionRunResult[]> {
  const results: CompactionRunResult[] = [];
  for (const instant of pendingCompactions(table.timeline)) results.push(await runCompaction(await table.reload(), instant.time, options));
  return results;
}

async function compactOperation(
  table: HudiTable,
  instantTime: string,
  operation: CompactionOperation,
  ordinal: number,
  engine: ParquetEngine,
  properties: ReadonlyMap<string, string>,
): Promise<{ stat: WriteStat; bytesRead: number }> {
  const { storage, config } = table;
  const { partitionPath, fileId } = operation;
  const listing = (await storage.listDir(partitionPath)).files;
  const byName = new Map(listing.map((file) => [fileNameOf(file.path), file]));
  const missing = [...operation.deltaFilePaths, ...(operation.dataFilePath === null ? [] : [operation.dataFilePath])].filter((name) => !byName.has(name));
  if (missing.length > 0) {
    throw new HudiError(`compaction ${instantTime} reads ${missing.join(', ')} in "${partitionPath}", which are gone`, {
      location: storage.uriOf(joinPartitionPath(partitionPath, missing[0]!)),
      fix: `roll the compaction back (\`compact <table> --mode rollback --instant ${instantTime}\`) and schedule a new one`,
    });
  }
  const order = new Map(operation.deltaFilePaths.map((name, index) => [name, index]));
  const logFiles = logFilesOf(listing.filter((file) => order.has(fileNameOf(file.path)))).sort(
    (a, b) => order.get(fileNameOf(a.path))! - order.get(fileNameOf(b.path))!,
  );
  const dataFile = operation.dataFilePath;
  const parsed = dataFile === null ? undefined : parseBaseFileName(dataFile);
  if (dataFile !== null && parsed === undefined)
    throw new HudiError(`compaction ${instantTime} names base file ${dataFile}, which is not a base file name`, {
      location: storage.uriOf(compactionInstantPath(instantTime, 'REQUESTED', compactionFolderOf(table.layout))),
    });
  const baseObject = dataFile === null ? undefined : byName.get(dataFile)!;
  const basePath = dataFile === null ? undefined : joinPartitionPath(partitionPath, dataFile);
  // A slice of log files only (inserts into log files, as indexes that index log files write them) has no base file.
  const slice: MergedFileSlice = {
    partitionPath,
    fileId,
    baseInstantTime: operation.baseInstantTime,
    logFiles,
    baseFile:
      dataFile === null || basePath === undefined || baseObject === undefined
        ? undefined
        : { partitionPath, ...parsed!, fileName: dataFile, path: basePath, size: baseObject.size },
  };
  const name = baseFileName(fileId, writeToken(ordinal), instantTime);
  const outputPath = joinPartitionPath(partitionPath, name);
  // An earlier attempt's outputs (any write token) are rewritten from the plan.
  const stale = listing
    .map((file) => file.path)
    .filter((path) => {
      const other = parseBaseFileName(fileNameOf(path));
      return other !== undefined && other.fileId === fileId && other.instantTime === instantTime;
    });
  if (stale.length > 0) await storage.delete(stale);
  // Hudi's rollback of a failed compaction (marker based) deletes only files with a marker: one before the file.
  await createMarker(storage, instantTime, partitionPath, name, dataFile === null ? 'CREATE' : 'MERGE');
  const staged = await stageFiles(storage, basePath === undefined ? [] : [basePath]);
  const dir = await mkdtemp(join(tmpdir(), 'hudi-compact-'));
  try {
    const writeConfig = writeConfigFromProperties(properties);
    const localOut = join(dir, name);
    const written = await mergeFileSlice({
      table,
      instantTime,
      slice,
      localBaseFile: staged.localPaths[0],
      engine,
      outputFile: localOut,
      purpose: basePath === undefined ? 'compacting a slice of log files only' : 'compacting it',
      constantColumns: { _hoodie_file_name: name },
      footer: (keys, avroSchema) => hudiFooter(keys, avroSchema, { bloom: writeConfig.bloom, populateMetaFields: config.populateMetaFields }),
    });
    const { baseRows } = written;
    await storage.uploadFile(outputPath, localOut);
    const logBytes = logFiles.reduce((sum, log) => sum + log.size, 0);
    return {
      bytesRead: (baseObject?.size ?? 0) + logBytes,
      stat: newWriteStat({
        fileId,
        path: outputPath,
        partitionPath,
        prevCommit: operation.baseInstantTime,
        numWrites: written.rowCount,
        numUpdateWrites: Math.min(written.rowCount, baseRows),
        numInserts: Math.max(0, written.rowCount - baseRows),
        numDeletes: Math.max(0, baseRows - Math.min(written.rowCount, baseRows)),
        totalWriteBytes: written.bytes,
        fileSizeInBytes: written.bytes,
        totalLogFilesCompacted: logFiles.length,
        totalLogSizeCompacted: logBytes,
        totalUpdatedRecordsCompacted: written.logRecords,
        totalLogRecords: written.logRecords,
      }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await staged.cleanup();
  }
}

/**
 * Roll back a failed (inflight) compaction: delete its outputs and its inflight file; the plan stays requested. On
 * timeline layout 2 through a rollback instant (lib/rollback's rollbackInflightCompaction), as Hudi 1.x does.
 */
export async function rollbackCompaction(
  table: HudiTable,
  instantTime: string,
  options: { lock: LockProvider; lockWaitMs?: number },
): Promise<{ deleted: string[]; rollbackInstant?: string }> {
  assertCompactionWrites(table);
  if (table.layout.compactionRollback === 'rollback-instant') return rollbackWithInstant(table, instantTime, options);
  return withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      const pending = pendingCompactions(current.timeline).find((i) => i.time === instantTime);
      if (pending === undefined) {
        throw new HudiError(`no pending compaction ${instantTime} to roll back`, {
          location: current.storage.uriOf('.hoodie'),
          fix: 'see `show-compaction <table>`',
        });
      }
      const folder = compactionFolderOf(current.layout);
      const plan: CompactionPlan = await readCompactionPlan(current.storage, instantTime, folder);
      const deleted: string[] = [];
      for (const partitionPath of new Set(plan.operations.map((op) => op.partitionPath))) {
        const fileIds = new Set(plan.operations.filter((op) => op.partitionPath === partitionPath).map((op) => op.fileId));
        for (const file of (await current.storage.listDir(partitionPath)).files) {
          const parsed = parseBaseFileName(fileNameOf(file.path));
          if (parsed !== undefined && parsed.instantTime === instantTime && fileIds.has(parsed.fileId)) deleted.push(file.path);
        }
      }
      // Results first: a result must never outlive the output it names.
      await deleteWorkDir(current.storage, compactionWorkDir(instantTime));
      await lease.assertHeld();
      if (deleted.length > 0) await current.storage.delete(deleted);
      await deleteMarkerDir(current.storage, instantTime);
      if (pending.state === 'INFLIGHT') await current.storage.delete([compactionInstantPath(instantTime, 'INFLIGHT', folder)]);
      return { deleted };
    },
    { waitMs: options.lockWaitMs },
  );
}

async function rollbackWithInstant(
  table: HudiTable,
  instantTime: string,
  options: { lock: LockProvider; lockWaitMs?: number },
): Promise<{ deleted: string[]; rollbackInstant?: string }> {
  if (
    !pendingCompactions(table.timeline).some((i) => i.time === instantTime) &&
    (await findRollbackOf(table.storage, table.timeline, instantTime)) === undefined
  ) {
    throw new HudiError(`no pending compaction ${instantTime} to roll back`, {
      location: table.storage.uriOf(table.layout.folder),
      fix: 'see `show-compaction <table>`',
    });
  }
  // A 1.x metadata table needs nothing of its own here: the rollback rolls back the deltacommit the compaction's
  // commit may have left at its instant (Hudi's update(HoodieRollbackMetadata)). What Hudi refuses about that is
  // refused before the results go.
  await assertRollbackKeepsMetadataTable(table.storage, `rolling back compaction ${instantTime}`, table.config, instantTime);
  // Results first: a result must never outlive the output it names.
  await deleteWorkDir(table.storage, compactionWorkDir(instantTime));
  const result = await rollbackInflightCompaction(table, instantTime, {
    lock: options.lock,
    ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
  });
  if (result === undefined) return { deleted: [] };
  return { deleted: [...result.deletedFiles], rollbackInstant: result.rollbackInstantTime };
}

function isCompleted(table: HudiTable, instantTime: string): boolean {
  return table.timeline.instants.some((i) => i.time === instantTime && i.action === 'commit' && i.state === 'COMPLETED');
}

function byPartition(stats: readonly WriteStat[]): Record<string, WriteStat[]> {
  const out: Record<string, WriteStat[]> = {};
  for (const stat of stats) (out[stat.partitionPath ?? ''] ??= []).push(stat);
  return out;
}
