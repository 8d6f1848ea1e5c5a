/**
 * A clustering group's merge-on-read slices read merged, as Hudi 0.15's MultipleSparkJobExecutionStrategy
 * readRecordsForGroupWithLogs does: a slice with log files (the plan's deltaFilePaths) is its base file's records
 * merged with the records of the log blocks of completed instants by the table's payload class, deleted records
 * dropped. Each such slice becomes one local Parquet file of the merged rows, merged in DuckDB as compaction merges
 * (lib/merge-on-read/file-slice-merge.ts), which the executor then sorts and sizes like any base file; slices without
 * log files are used as they are.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ParquetEngine } from '../engine/port.js';
import { HudiError } from '../errors.js';
import { compareLogFileNames, type LogFile, logFilesOf } from '../log-format/index.js';
import { mergeFileSlice } from '../merge-on-read/file-slice-merge.js';
import { joinPartitionPath, type MergedFileSlice, parseBaseFileName } from '../table/file-system-view.js';
import type { HudiTable } from '../table/table.js';
import type { ClusteringPlanSlice } from '../timeline/clustering-plan.js';
import { instantPath } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';

/** A file name at the end of a plan path (plans hold full URIs of wherever the table was). */

/** Whether a planned slice has log files to merge. */
export const sliceHasLogs = (slice: ClusteringPlanSlice): boolean => slice.deltaFilePaths.length > 0;

/** Whether a planned slice has a base file (a merge-on-read slice may hold log files only). */
export const sliceHasBaseFile = (slice: ClusteringPlanSlice): boolean => slice.dataFilePath !== '';

export interface MergeGroupSlicesInput {
  readonly table: HudiTable;
  readonly instantTime: string;
  readonly partitionPath: string;
  readonly slices: readonly ClusteringPlanSlice[];
  /** Each slice's staged base file (local path), or undefined for a slice of log files only; in plan order. */
  readonly localBaseFiles: readonly (string | undefined)[];
  readonly engine: ParquetEngine;
  /** Where the merged files go (the group's work folder). */
  readonly outputDir: string;
}

export interface MergedGroupSlices {
  /** One local Parquet file per slice, in plan order: the staged base file, or the slice's merged rows. */
  readonly files: string[];
  /** How many slices had log files merged. */
  readonly merged: number;
  /** Log files read and their bytes. */
  readonly logFiles: number;
  readonly logBytes: number;
}

/**
 * The group's inputs with every slice's log files merged in. The merged files take the Parquet column types of the
 * slice's own base file; a slice of log files only, those of the table schema (as compaction writes it).
 */
export async function mergeGroupSlices(input: MergeGroupSlicesInput): Promise<MergedGroupSlices> {
  const { table, instantTime, partitionPath, slices, engine } = input;
  const requested = table.storage.uriOf(instantPath({ time: instantTime, action: table.layout.clusteringAction, state: 'REQUESTED' }, table.layout));
  const listing = (await table.storage.listDir(partitionPath)).files;
  const logsByName = new Map(logFilesOf(listing).map((log) => [fileNameOf(log.path), log]));
  await mkdir(input.outputDir, { recursive: true });
  const files: string[] = [];
  let merged = 0;
  let logFiles = 0;
  let logBytes = 0;
  for (const [index, planned] of slices.entries()) {
    const localBase = input.localBaseFiles[index];
    if (!sliceHasLogs(planned)) {
      if (localBase === undefined) {
        throw new HudiError(`clustering ${instantTime} names slice ${planned.fileId} in "${partitionPath}" with neither a base file nor log files`, {
          location: requested,
          fix: 'roll the clustering back and schedule a new one',
        });
      }
      files.push(localBase);
      continue;
    }
    const logs: LogFile[] = planned.deltaFilePaths.map((path) => {
      const log = logsByName.get(fileNameOf(path));
      if (log === undefined) {
        throw new HudiError(`clustering ${instantTime} reads log file ${fileNameOf(path)} in "${partitionPath}", which is gone`, {
          location: table.storage.uriOf(joinPartitionPath(partitionPath, fileNameOf(path))),
          fix: 'roll the clustering back (a cleaner or compaction removed its inputs) and schedule a new one',
        });
      }
      return log;
    });
    const baseName = sliceHasBaseFile(planned) ? fileNameOf(planned.dataFilePath) : undefined;
    const parsed = baseName === undefined ? undefined : parseBaseFileName(baseName);
    if (baseName !== undefined && parsed === undefined) {
      throw new HudiError(`clustering ${instantTime} names base file ${baseName}, which is not a base file name`, { location: requested });
    }
    const basePath = baseName === undefined ? undefined : joinPartitionPath(partitionPath, baseName);
    // Merged oldest first, in Hudi's log order, whatever order the plan lists them in (Hudi's FileSlice: newest first).
    const ordered = [...logs].sort((a, b) => compareLogFileNames(a.name, b.name));
    const slice: MergedFileSlice = {
      partitionPath,
      fileId: planned.fileId,
      baseInstantTime: parsed?.instantTime ?? ordered[0]!.name.baseInstant,
      baseFile:
        parsed === undefined || basePath === undefined
          ? undefined
          : { partitionPath, ...parsed, fileName: baseName!, path: basePath, size: listing.find((file) => fileNameOf(file.path) === baseName)?.size ?? 0 },
      logFiles: ordered,
    };
    const outputFile = join(input.outputDir, `merged-${index}.parquet`);
    await mergeFileSlice({
      table,
      instantTime,
      slice,
      localBaseFile: localBase,
      engine,
      outputFile,
      purpose: 'clustering a slice of log files only',
    });
    files.push(outputFile);
    merged++;
    logFiles += logs.length;
    logBytes += logs.reduce((total, log) => total + log.size, 0);
  }
  return { files, merged, logFiles, logBytes };
}
