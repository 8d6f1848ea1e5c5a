/**
 * Merge-on-read appends (HoodieAppendHandle on storage without append): a file group's updates and deletes of one
 * delta commit go to a new log file holding an Avro data block and a delete block with INSTANT_TIME and SCHEMA
 * headers; its marker comes first (LogFileCreationCallback), so a rollback finds it. The name, marker and write stat
 * follow the table's layout (LogWrites): `.<fileId>_<baseInstant>.log.<next v>_<token>` of the latest slice (0.15), or
 * `.<fileId>_<deltaCommit>.log.1_<token>` (1.x).
 * A group under a pending compaction appends to the compaction's slice, so the compaction does not lose the updates.
 * With column stats indexed, the file's ranges over its records come along for the metadata-table commit.
 */
import { join } from 'node:path';
import { openParquetEngine } from '../engine/parquet-engine.js';
import type { ParquetEngine } from '../engine/port.js';
import type { FileGroupWriteResult, WriteSession } from '../engine/write.js';
import {
  avroDataBlock,
  compareLogFileNames,
  deleteBlock,
  EMPTY_PAYLOAD_ORDERING_VALUE,
  type LogBlockInput,
  type LogFile,
  writeLogFile,
} from '../log-format/index.js';
import { type ColumnRange, columnRangesFromRecords, type DecimalStorage } from '../metadata/index.js';
import type { Storage } from '../storage/port.js';
import type { FileSystemView } from '../table/file-system-view.js';
import type { AvroRecordSchema } from '../table/schema.js';
import { newWriteStat, type WriteStat } from '../timeline/commit-metadata.js';
import { pendingCompactions, readCompactionPlan } from '../timeline/compaction-plan.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import type { LogWrites, TimelineLayout } from '../timeline/layout.js';
import { createMarker } from '../timeline/markers.js';
import { loadTimeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';
import { rowToAvroRecord } from './avro-records.js';
import type { Bucket } from './small-files.js';

/** A file group's latest file slice, as the append handle sees it (rtView.getLatestFileSlice). */
export interface LatestSlice {
  readonly baseInstant: string;
  /** '' when the slice has no base file. */
  readonly baseFileName: string;
  /** The slice's log files, in log order. */
  readonly logFiles: readonly LogFile[];
  /** A CDC table's `.cdc` log files of the slice (written by a small-file merge), in log order. */
  readonly cdcLogFiles: readonly LogFile[];
  readonly pendingCompaction: boolean;
}

/**
 * The latest slice of every file group of the partitions, by fileGroupKey. Pending compactions are read from a fresh
 * timeline: one scheduled after the caller's view was built opened a new slice for its groups.
 */
export async function latestSlices(
  storage: Storage,
  layout: TimelineLayout,
  view: FileSystemView,
  partitions: readonly string[],
): Promise<Map<string, LatestSlice>> {
  const timeline = await loadTimeline(storage, layout);
  const compactionOf = new Map<string, string>();
  for (const instant of pendingCompactions(timeline)) {
    for (const op of (await readCompactionPlan(storage, instant.time, { metaFolder: layout.folder })).operations) {
      const key = fileGroupKey(op.partitionPath, op.fileId);
      const known = compactionOf.get(key);
      if (known === undefined || known < instant.time) compactionOf.set(key, instant.time);
    }
  }
  const out = new Map<string, LatestSlice>();
  for (const partition of partitions) {
    for (const slice of view.latestMergedSlices(partition)) {
      const key = fileGroupKey(slice.partitionPath, slice.fileId);
      const compaction = compactionOf.get(key);
      out.set(
        key,
        compaction === undefined
          ? {
              baseInstant: slice.baseInstantTime,
              baseFileName: slice.baseFile?.fileName ?? '',
              logFiles: slice.logFiles,
              cdcLogFiles: slice.cdcLogFiles ?? [],
              pendingCompaction: false,
            }
          : {
              baseInstant: compaction,
              baseFileName: '',
              logFiles: slice.logFiles.filter((f) => f.name.baseInstant === compaction),
              cdcLogFiles: [],
              pendingCompaction: true,
            },
      );
    }
  }
  return out;
}

export interface LogAppenderOptions {
  readonly storage: Storage;
  /** The table layout's log-file rules. */
  readonly logWrites: LogWrites;
  readonly session: WriteSession;
  readonly instantTime: string;
  readonly workDir: string;
  /** The writer schema with the meta fields (the SCHEMA header). */
  readonly schemaWithMeta: AvroRecordSchema;
  readonly rowGroupSize: number;
  /** Staged latest base files, by the index the buckets' existingFile names (their column types). */
  readonly templates: readonly string[];
  /** The column_stats columns (hoodie.metadata.index.column.stats.column.list, empty: every field); unset: none. */
  readonly columnStatsColumns?: readonly string[];
  /** How the ranges hold decimals (the table version's columnStatsDecimals). */
  readonly columnStatsDecimals?: DecimalStorage;
  /** Count every record written as an update (the bucket index locates them all; HoodieAppendHandle.isUpdateRecord). */
  readonly countsAllAsUpdates?: boolean;
}

export interface AppendedFileGroup {
  readonly stat: WriteStat;
  readonly result: FileGroupWriteResult;
  /** The log file's column ranges, when column stats are indexed. */
  readonly columnRanges?: readonly ColumnRange[];
}

/** Writes the APPEND buckets of one delta commit. */
export class LogAppender {
  private engine: ParquetEngine | undefined;

  constructor(private readonly options: LogAppenderOptions) {}

  async append(bucket: Extract<Bucket, { kind: 'APPEND' }>, index: number, slice: LatestSlice | undefined): Promise<AppendedFileGroup> {
    const { storage, session, instantTime } = this.options;
    const started = Date.now();
    // No slice and no previous instant: a new group of log files only (consistent hashing), based at this write.
    const sliceInstant = slice?.baseInstant ?? (bucket.previousInstant === '' ? instantTime : bucket.previousInstant);
    const byWrite = this.options.logWrites.nameInstant === 'write-instant';
    const baseInstant = byWrite ? instantTime : sliceInstant;
    // The bucket's records with their meta fields, through the engine (types as the group's base file has them).
    const localFile = join(this.options.workDir, 'out', `${index}.append.parquet`);
    // A group of log files only takes its types from any staged base file of the table's (the schema is one).
    const template = this.options.templates[bucket.existingFile ?? 0];
    const result = await session.writeFileGroup({
      bucket: index,
      outputFile: localFile,
      partitionPath: bucket.partitionPath,
      fileName: bucket.fileId,
      commitTime: instantTime,
      taskPartitionId: index,
      rowGroupSize: this.options.rowGroupSize,
      keyValues: {},
      typeTemplates: template === undefined ? [] : [template],
    });
    const header = { SCHEMA: JSON.stringify(this.options.schemaWithMeta) };
    const blocks: LogBlockInput[] = [];
    let records: Record<string, unknown>[] = [];
    if (result.rowCount > 0) {
      this.engine ??= await openParquetEngine({ tempDirectory: join(this.options.workDir, 'append-engine') });
      const { rows } = await this.engine.readRows([localFile]);
      records = rows.map((row) => rowToAvroRecord(this.options.schemaWithMeta, row));
      blocks.push(avroDataBlock({ instantTime, schema: this.options.schemaWithMeta, records, header, longs: 'bigint' }));
    }
    const deletes = await session.bucketDeletedKeys(index);
    if (deletes.length > 0) {
      blocks.push(deleteBlock({ instantTime, header, records: deletes.map((d) => ({ ...d, orderingValue: EMPTY_PAYLOAD_ORDERING_VALUE })) }));
    }
    const written = await writeLogFile(storage, {
      partitionPath: bucket.partitionPath,
      fileId: bucket.fileId,
      baseInstant,
      writeToken: `${index}-1-0`,
      blocks,
      beforeCreate: async (fileName) => {
        await createMarker(storage, instantTime, bucket.partitionPath, fileName, this.options.logWrites.marker);
      },
    });
    const fileName = fileNameOf(written.path);
    // FileSlice keeps its logs newest first, `.cdc` ones among them; the append handle adds the file it wrote at the
    // end. 1.x's stat names only the file written (populateWriteStatAndFetchFileSlice for table version 8+, CDC off).
    const sliceLogs = [...(slice?.logFiles ?? []), ...(slice?.cdcLogFiles ?? [])].sort((a, b) => compareLogFileNames(b.name, a.name));
    const previous = byWrite ? [] : sliceLogs.map((f) => fileNameOf(f.path));
    const stat = newWriteStat({
      fileId: bucket.fileId,
      path: written.path,
      partitionPath: bucket.partitionPath,
      prevCommit: baseInstant,
      numWrites: result.rowCount,
      numDeletes: deletes.length,
      numUpdateWrites: this.options.countsAllAsUpdates === true ? result.rowCount : result.updates,
      numInserts: this.options.countsAllAsUpdates === true ? 0 : result.inserts,
      totalWriteBytes: written.size,
      fileSizeInBytes: written.size,
      runtimeStats: { totalScanTime: 0, totalUpsertTime: Date.now() - started, totalCreateTime: 0 },
      delta: {
        logVersion: written.name.version,
        logOffset: 0,
        baseFile: byWrite ? '' : (slice?.baseFileName ?? ''),
        logFiles: previous.includes(fileName) ? previous : [...previous, fileName],
      },
    });
    const columns = this.options.columnStatsColumns;
    const columnRanges =
      columns === undefined ? undefined : columnRangesFromRecords(this.options.schemaWithMeta, records, columns, fileName, this.options.columnStatsDecimals);
    return { stat, result: { ...result, deletes: deletes.length }, ...(columnRanges === undefined ? {} : { columnRanges }) };
  }

  async close(): Promise<void> {
    await this.engine?.close();
    this.engine = undefined;
  }
}
