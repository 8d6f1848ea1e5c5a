/**
 * Running a compaction plan, as Hudi 0.15's HoodieCompactor and the commit of RunCompactionActionExecutor: the
 * instant goes inflight, every operation's file slice (base file and the plan's log files) is merged by the reader's
 * rules (lib/merge-on-read: blocks of completed instants, the table's payload class; the log records' outcome per key
 * decided by mergeOutcome, the rows merged in DuckDB without the base rows coming into JavaScript) into a new base file
 * `<fileId>_<token>_<instant>.parquet` of the base file's schema and Hudi's footers (records keep their commit time and
 * sequence number, `_hoodie_file_name` names the new file), then `<instant>.commit` (operationType COMPACT, compacted)
 * is written under the lock after the metadata table's deltacommit, as Hudi commits a compaction.
 *
 * A pending compaction is resumed from its plan: an inflight one's earlier outputs are deleted and rewritten. A failed
 * one can instead be rolled back (its outputs deleted, back to requested), as Hudi's rollbackInflightCompaction.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, HudiError } from '../errors.js';
import { openParquetEngine } from '../engine/parquet-engine.js';
import type { ParquetEngine } from '../engine/port.js';
import { baseFileName, joinPartitionPath, parseBaseFileName, type MergedFileSlice } from '../fs-view.js';
import type { LockProvider } from '../lock/port.js';
import { logFilesOf } from '../log-format/index.js';
import { logBlockFilter } from '../merge-on-read/log-record-scanner.js';
import { sliceChanges, tablePayload } from '../merge-on-read/snapshot.js';
import { keepMetadataTable, type MetadataTableOutcome } from '../metadata/index.js';
import { stageFiles } from '../reader.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import { withTableLock, type HudiTable } from '../table.js';
import { newWriteStat, serializeCommitMetadata, type CommitMetadata, type WriteStat } from '../timeline/commit-metadata.js';
import {
  compactionInstantPath,
  completeCompaction,
  pendingCompactions,
  readCompactionPlan,
  startCompaction,
  type CompactionOperation,
  type CompactionPlan,
} from '../timeline/compaction-plan.js';
import { AVRO_SCHEMA_FOOTER_KEY, hudiFooter } from '../writer/footer.js';
import { writeConfigFromProperties } from '../writer/write-config.js';
import { assertMergeOnRead } from './schedule.js';

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

/** Operations compacted at once by one run. */
const PIPELINE = 2;

/** The write token of operation `ordinal`'s output (partition id, stage, attempt). */
const writeToken = (ordinal: number) => `${ordinal}-0-1`;

/** Run pending compaction `instantTime` (requested or inflight) to its commit. */
export async function runCompaction(table: HudiTable, instantTime: string, options: CompactionRunOptions): Promise<CompactionRunResult> {
  assertMergeOnRead(table);
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const { storage } = table;
  if (isCompleted(table, instantTime)) {
    return { instantTime, outcome: 'already-committed', resumed: false, writeStats: [], metadataTable: undefined, bytesRead: 0, millis: 0 };
  }
  const pending = pendingCompactions(table.timeline).find((i) => i.time === instantTime);
  if (pending === undefined) {
    throw new HudiError(`no pending compaction ${instantTime}`, {
      location: storage.uriOf('.hoodie'),
      fix: 'see `show-compaction <table>` for the pending ones, or schedule one with `compact --mode schedule`',
    });
  }
  const plan = await readCompactionPlan(storage, instantTime);
  const resumed = pending.state === 'INFLIGHT';
  if (!resumed) await startCompaction(storage, instantTime);
  else log(`resuming compaction ${instantTime}: rewriting its outputs from the plan`);
  const properties = options.properties ?? new Map<string, string>();
  const engine = options.engine ?? (await openParquetEngine());
  const writeStats: WriteStat[] = [];
  let bytesRead = 0;
  try {
    // Two at a time: one operation's log decoding (JavaScript) overlaps another's merge (DuckDB, off the main thread).
    const results = await mapWithConcurrency(plan.operations, PIPELINE, async (operation, ordinal) => {
      const result = await compactOperation(table, instantTime, operation, ordinal, engine, properties);
      log(`compacted ${result.stat.path}: ${result.stat.numWrites} records from ${operation.deltaFilePaths.length} log file(s)`);
      return result;
    });
    for (const result of results) {
      writeStats.push(result.stat);
      bytesRead += result.bytesRead;
    }
  } finally {
    if (options.engine === undefined) await engine.close();
  }
  const metadataTable = keepMetadataTable(storage, properties);
  return withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      if (isCompleted(current, instantTime)) {
        return { instantTime, outcome: 'already-committed' as const, resumed, writeStats, metadataTable: undefined, bytesRead, millis: Date.now() - started };
      }
      if (!pendingCompactions(current.timeline).some((i) => i.time === instantTime && i.state === 'INFLIGHT')) {
        throw new ConflictError(`compaction ${instantTime} left the timeline while running (rolled back?)`, {
          location: storage.uriOf(compactionInstantPath(instantTime, 'INFLIGHT')),
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
      await completeCompaction(storage, instantTime, serializeCommitMetadata(metadata));
      return {
        instantTime,
        outcome: 'committed' as const,
        resumed,
        writeStats,
        metadataTable: metadataTable.outcome(),
        bytesRead,
        millis: Date.now() - started,
      };
    },
    { waitMs: options.lockWaitMs },
  );
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
  const nameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  const byName = new Map(listing.map((file) => [nameOf(file.path), file]));
  const missing = [...operation.deltaFilePaths, ...(operation.dataFilePath === null ? [] : [operation.dataFilePath])].filter((name) => !byName.has(name));
  if (missing.length > 0) {
    throw new HudiError(`compaction ${instantTime} reads ${missing.join(', ')} in "${partitionPath}", which are gone`, {
      location: storage.uriOf(joinPartitionPath(partitionPath, missing[0]!)),
      fix: `roll the compaction back (\`compact <table> --mode rollback --instant ${instantTime}\`) and schedule a new one`,
    });
  }
  if (operation.dataFilePath === null) {
    throw new HudiError(`compaction ${instantTime} has a slice of log files only (${partitionPath}/${fileId}), which this build does not compact yet`, {
      location: storage.uriOf(compactionInstantPath(instantTime, 'REQUESTED')),
      fix: 'run this compaction with Hudi (CALL run_compaction), or roll it back',
    });
  }
  const order = new Map(operation.deltaFilePaths.map((name, index) => [name, index]));
  const logFiles = logFilesOf(listing.filter((file) => order.has(nameOf(file.path)))).sort((a, b) => order.get(nameOf(a.path))! - order.get(nameOf(b.path))!);
  const baseObject = byName.get(operation.dataFilePath)!;
  const parsed = parseBaseFileName(operation.dataFilePath);
  if (parsed === undefined)
    throw new HudiError(`compaction ${instantTime} names base file ${operation.dataFilePath}, which is not a base file name`, {
      location: storage.uriOf(compactionInstantPath(instantTime, 'REQUESTED')),
    });
  const basePath = joinPartitionPath(partitionPath, operation.dataFilePath);
  const slice: MergedFileSlice = {
    partitionPath,
    fileId,
    baseInstantTime: operation.baseInstantTime,
    logFiles,
    baseFile: { partitionPath, ...parsed, fileName: operation.dataFilePath, path: basePath, size: baseObject.size },
  };
  const name = baseFileName(fileId, writeToken(ordinal), instantTime);
  const outputPath = joinPartitionPath(partitionPath, name);
  // An earlier attempt's outputs (any write token) are rewritten from the plan.
  const stale = listing
    .map((file) => file.path)
    .filter((path) => {
      const other = parseBaseFileName(nameOf(path));
      return other !== undefined && other.fileId === fileId && other.instantTime === instantTime;
    });
  if (stale.length > 0) await storage.delete(stale);
  const staged = await stageFiles(storage, [basePath]);
  const dir = await mkdtemp(join(tmpdir(), 'hudi-compact-'));
  try {
    const template = staged.localPaths[0]!;
    const changes = await sliceChanges(
      slice,
      {
        storage,
        config,
        timeline: table.timeline,
        queryInstant: instantTime,
        engine,
        localBaseFile: () => template,
      },
      tablePayload(storage, config),
      logBlockFilter(table.timeline, instantTime),
    );
    const footer = await engine.readFooter(template);
    const avroSchema = footer.keyValues[AVRO_SCHEMA_FOOTER_KEY] ?? (await table.requireSchema('compacting it')).text;
    const writeConfig = writeConfigFromProperties(properties);
    const localOut = join(dir, name);
    // The merge runs in DuckDB: the base rows stay there, only the log records' changes go in.
    const written = await engine.mergeIntoBase({
      base: template,
      keyColumn: '_hoodie_record_key',
      upserts: changes.upserts,
      deletes: changes.deletes,
      constantColumns: { _hoodie_file_name: name },
      outputFile: localOut,
      rowGroupSize: Math.max(1, footer.numRows || changes.upserts.length || 1),
      footer: (keys) => hudiFooter(keys, avroSchema, { bloom: writeConfig.bloom, populateMetaFields: config.populateMetaFields }),
    });
    await storage.uploadFile(outputPath, localOut);
    const logBytes = logFiles.reduce((sum, log) => sum + log.size, 0);
    const baseRows = footer.numRows;
    return {
      bytesRead: baseObject.size + logBytes,
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
        totalUpdatedRecordsCompacted: changes.logRecords,
        totalLogRecords: changes.logRecords,
      }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await staged.cleanup();
  }
}

/** Roll back a failed (inflight) compaction: delete its outputs and its inflight file; the plan stays requested. */
export async function rollbackCompaction(
  table: HudiTable,
  instantTime: string,
  options: { lock: LockProvider; lockWaitMs?: number },
): Promise<{ deleted: string[] }> {
  assertMergeOnRead(table);
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
      const plan: CompactionPlan = await readCompactionPlan(current.storage, instantTime);
      const deleted: string[] = [];
      for (const partitionPath of new Set(plan.operations.map((op) => op.partitionPath))) {
        const fileIds = new Set(plan.operations.filter((op) => op.partitionPath === partitionPath).map((op) => op.fileId));
        for (const file of (await current.storage.listDir(partitionPath)).files) {
          const parsed = parseBaseFileName(file.path.slice(file.path.lastIndexOf('/') + 1));
          if (parsed !== undefined && parsed.instantTime === instantTime && fileIds.has(parsed.fileId)) deleted.push(file.path);
        }
      }
      await lease.assertHeld();
      if (deleted.length > 0) await current.storage.delete(deleted);
      if (pending.state === 'INFLIGHT') await current.storage.delete([compactionInstantPath(instantTime, 'INFLIGHT')]);
      return { deleted };
    },
    { waitMs: options.lockWaitMs },
  );
}

function isCompleted(table: HudiTable, instantTime: string): boolean {
  return table.timeline.instants.some((i) => i.time === instantTime && i.action === 'commit' && i.state === 'COMPLETED');
}

function byPartition(stats: readonly WriteStat[]): Record<string, WriteStat[]> {
  const out: Record<string, WriteStat[]> = {};
  for (const stat of stats) (out[stat.partitionPath ?? ''] ??= []).push(stat);
  return out;
}
