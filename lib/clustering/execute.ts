/**
 * Executing one clustering group, the unit one Lambda runs, as Hudi's SparkSortAndSizeExecutionStrategy does: read the
 * group's base files, order the rows (input order, linear sort, or a z-order / hilbert curve as lib/layout/curves.ts
 * builds it), write numOutputFileGroups file groups of near-equal row counts, keeping meta columns but
 * `_hoodie_file_name`. Retries are safe: output names derive from (instant, group, output), so a rerun overwrites the
 * same objects; a group is done when its result (instant.ts) exists, written after every output is uploaded.
 *
 * Why one long file: one group's run is one sequence (stage, order, write, footers, stats, upload, result) whose steps
 * hand each other local files and a DuckDB connection; the algorithms are in lib/engine/ and lib/layout/.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
  type BloomFilterOptions,
  expectedPassRate,
  MAX_RECORD_KEY_FOOTER_KEY,
  MIN_RECORD_KEY_FOOTER_KEY,
} from '../base-file/bloom-filter.js';
import { HUDI_FOOTER_KEYS, hudiFooter, hudiFooterValues, mergedHudiFooter } from '../base-file/footer.js';
import { type ColumnStats, columnStatsOf, type FileColumnStats } from '../engine/column-stats.js';
import type {
  CopySortedResult,
  DerivedColumnLayers,
  FileRows,
  FooterFromColumn,
  OutputRange,
  ParquetColumnInfo,
  ParquetEngine,
  SortColumnDescription,
  SortKey,
} from '../engine/port.js';
import { HudiError } from '../errors.js';
import { buildCurveKeys, type CurveKeyBatch, type CurveSortColumn, type SortValue, sortRowsByCurveKey } from '../layout/curves.js';
import { assertMetadataTableKeepable, metadataTableState } from '../metadata/index.js';
import { type CopyInput, type CopyLayout, planBinaryCopy, planCopyOutputs, readCopyInput, writeCopiedFile } from '../parquet/binary-copy.js';
import { type FooterSummary, readFooterKeyValues, readFooterSummary } from '../parquet/footer.js';
import { CODEC, canRecompress } from '../parquet/pages.js';
import { stageFiles, withTableLocations } from '../read/reader.js';
import { BoundedTasks, mapWithConcurrency } from '../storage/concurrency.js';
import { countedStorage } from '../storage/counted.js';
import { RequestCounter } from '../storage/request-counts.js';
import { PROPERTIES_FILE } from '../table/config.js';
import { baseFileName, joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import { newFileGroupId } from '../table/layouts.js';
import { withMetaFields } from '../table/schema.js';
import type { HudiTable } from '../table/table.js';
import type { ClusteringPlan } from '../timeline/clustering-plan.js';
import { newWriteStat } from '../timeline/commit-metadata.js';
import { startHeartbeat } from '../timeline/heartbeat.js';
import { compareInstantTimes } from '../timeline/instant.js';
import { createMarker } from '../timeline/markers.js';
import { fileNameOf } from '../util/paths.js';
import type { ClusteringConfig } from './config.js';
import { binaryCopyRefusal } from './executor.js';
import {
  assertClusteringPending,
  assertNotCompletedMeanwhile,
  assertPlanLayoutSupported,
  ensureInflight,
  type GroupResult,
  groupPartition,
  loadClusteringInstant,
  pendingClusteringPath,
  sliceStoragePath,
  writeGroupRecordKeys,
  writeGroupResult,
} from './instant.js';
import { mergeGroupSlices, sliceHasBaseFile, sliceHasLogs } from './merge-slices.js';
import { type ComparableValue, type FileSummary, type GroupExecution, toComparable } from './report.js';
import { type GroupOrder, groupOrder, groupOrderKind, planSortColumns } from './sort-columns.js';

export interface ExecuteGroupOptions {
  readonly engine: ParquetEngine;
  /** Local scratch space (Lambda: under /tmp) for staged inputs and outputs; what a group puts there is removed after it. */
  readonly tempDir: string;
  /** Layout strategy, curve build method and sample size, target file size: the executing config decides, as in Hudi. */
  readonly config: ClusteringConfig;
  /** Values sampled per sort column for the report's data-skipping figure (default 100). */
  readonly reportSamples?: number;
  /** Parallel uploads (default 4). */
  readonly uploadConcurrency?: number;
  /** hoodie.parquet.block.size: target row group bytes (default 120 MB; capped to fit the engine's memory). */
  readonly parquetBlockBytes?: number;
  /** hoodie.index.bloom.* / hoodie.bloom.index.filter.*: the footers' bloom filter, as the writer's (default Hudi's). */
  readonly bloom?: Partial<BloomFilterOptions>;
  /**
   * hoodie.parquet.compression.codec (snappy, gzip, zstd, brotli, uncompressed) for binary copy: chunks of other
   * codecs are recompressed to it, as Hudi's binary copy does. Unset keeps every chunk's codec. (Rewrites write snappy.)
   */
  readonly compressionCodec?: string;
  /** The run's Hudi properties (hoodie.metadata.*: whether the commit can keep the metadata table). */
  readonly properties?: ReadonlyMap<string, string>;
}

/** hoodie.parquet.block.size: the row group size Hudi's writers aim for. */
export const PARQUET_BLOCK_BYTES = 120 * 1024 * 1024;
const DEFAULT_REPORT_SAMPLES = 100;
const DEFAULT_UPLOAD_CONCURRENCY = 4;
/** Binary copy's uploads in flight beside the writing of the next output (bounds the memory their parts take). */
const OVERLAPPED_UPLOADS = 2;
/** Rewrites with more outputs when a file came out above target.file.max.bytes by more than a row group. */
const MAX_SIZING_ATTEMPTS = 3;
const RECORD_KEY = '_hoodie_record_key';
const FILE_NAME_COLUMN = '_hoodie_file_name';
/** Footers read at once when deciding on binary copy. */
const FOOTER_CONCURRENCY = 8;

// ---------------------------------------------------------------------------------------------------------------
// Pure parts.

/** Near-equal row ranges: the first `total % outputs` files take one row more. Never an empty range. */
export function planOutputRanges(totalRows: number, outputs: number): { rowStart: number; rowCount: number }[] {
  const count = Math.min(Math.max(1, Math.floor(outputs)), totalRows);
  const base = Math.floor(totalRows / Math.max(count, 1));
  const extra = totalRows - base * count;
  const ranges: { rowStart: number; rowCount: number }[] = [];
  let rowStart = 0;
  for (let index = 0; index < count; index++) {
    const rowCount = base + (index < extra ? 1 : 0);
    ranges.push({ rowStart, rowCount });
    rowStart += rowCount;
  }
  return ranges;
}

/**
 * The fileId of output `outputIndex` of group `groupIndex` of a clustering: a name-based (version 5 style) UUID of
 * those three values plus Hudi's `-0` suffix, so every attempt of a group writes the same file names.
 */
export function clusteringFileId(instantTime: string, groupIndex: number, outputIndex: number): string {
  // Salted again in the rare case the hash reads as a bucket's id (see newFileGroupId); still the same for a retry.
  let salt = 0;
  return newFileGroupId(() => {
    const name = `hudi-serverless/clustering/${instantTime}/${groupIndex}/${outputIndex}${salt++ === 0 ? '' : `/${salt - 1}`}`;
    const hash = createHash('sha1').update(name).digest();
    hash[6] = (hash[6]! & 0x0f) | 0x50;
    hash[8] = (hash[8]! & 0x3f) | 0x80;
    const hex = hash.subarray(0, 16).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  });
}

/** Hudi's `<taskPartitionId>-<stageId>-<taskAttemptId>`: output, group, and attempt 0 (a retry overwrites the same name). */
export function clusteringWriteToken(groupIndex: number, outputIndex: number): string {
  return `${outputIndex}-${groupIndex}-0`;
}

/**
 * DuckDB's own row group size. Its writer fills one row group on one thread, so a row group as large as
 * hoodie.parquet.block.size (an upper bound for Hudi's writers, not a target readers need) costs much more CPU
 * than smaller ones written in parallel: row groups are kept to this many rows.
 */
export const WRITE_ROW_GROUP_ROWS = 122_880;

/** Rows per row group: at most `blockBytes` of Parquet, DuckDB's WRITE_ROW_GROUP_ROWS, and one output's rows. */
export function rowGroupRows(inputBytes: number, inputRows: number, rowsPerOutput: number, blockBytes = PARQUET_BLOCK_BYTES): number {
  const bytesPerRow = inputRows > 0 ? Math.max(1, inputBytes / inputRows) : 1;
  return Math.max(1, Math.min(rowsPerOutput, WRITE_ROW_GROUP_ROWS, Math.floor(blockBytes / bytesPerRow)));
}

/**
 * DuckDB holds a row group uncompressed in memory until it is written and cannot spill it, so with a small memory
 * limit a 120 MB (compressed) row group does not fit: keep it to a sixteenth of the limit.
 */
export function rowGroupBytesFor(memoryLimitBytes: number, blockBytes = PARQUET_BLOCK_BYTES): number {
  return Math.max(1024 * 1024, Math.min(blockBytes, Math.floor(memoryLimitBytes / 16)));
}

/** A seed for the SAMPLE build method that is the same for every attempt of a group. */
function groupSeed(instantTime: string, groupIndex: number): number {
  return createHash('sha1').update(`${instantTime}/${groupIndex}`).digest().readInt32BE(0);
}

// ---------------------------------------------------------------------------------------------------------------
// The executor.

/** Run one group of a pending clustering plan and record its result; see the top of this file. */
export async function executeGroup(table: HudiTable, instantTime: string, groupIndex: number, options: ExecuteGroupOptions): Promise<GroupResult> {
  const started = Date.now();
  const { storage } = table;
  const runnable = await checkGroupRunnable(table, instantTime, groupIndex, options);
  const { plan, group, partitionPath, keepRecordKeys } = runnable;

  // Keeps `.hoodie/.heartbeat/<instant>` fresh so a rollback does not take the instant for dead; other groups of
  // the instant may still run, so the file stays when this group ends (the commit removes it).
  const beat = await startHeartbeat(storage, instantTime, { keepFile: true });
  await ensureInflight(storage, table.layout, instantTime);
  await mkdir(options.tempDir, { recursive: true });
  const workDir = await mkdtemp(join(options.tempDir, `cluster-${instantTime}-${groupIndex}-`));
  // Merge-on-read slices may have no base file (log files only): only base files are staged.
  const inputPaths = group.slices.filter(sliceHasBaseFile).map(sliceStoragePath);
  // The group's transfers (inputs staged, markers, outputs uploaded) are counted for the report: S3 bills by request.
  const counter = new RequestCounter();
  const transfers = countedStorage(storage, counter);
  const staged = await stageFiles(transfers, inputPaths, workDir);
  let uploads: BoundedTasks | undefined;
  try {
    const localBaseFiles: (string | undefined)[] = [];
    let nextBase = 0;
    for (const slice of group.slices) localBaseFiles.push(sliceHasBaseFile(slice) ? staged.localPaths[nextBase++] : undefined);
    // Slices with log files are read merged (base file + logs of completed instants), as Hudi's clustering reads them.
    const merged = group.slices.some((slice) => sliceHasLogs(slice) || !sliceHasBaseFile(slice))
      ? await mergeGroupSlices({
          table,
          instantTime,
          partitionPath,
          slices: group.slices,
          localBaseFiles,
          engine: options.engine,
          outputDir: join(workDir, 'merged'),
        })
      : undefined;
    const inputs = merged?.files ?? staged.localPaths;
    const context: GroupContext = {
      table,
      instantTime,
      groupIndex,
      plan,
      inputs,
      slicesWithLogs: merged?.merged ?? 0,
      sliceNames: group.slices.map((slice) => fileNameOf(sliceStoragePath(slice))),
      outputDir: join(workDir, 'out'),
      numOutputFileGroups: group.numOutputFileGroups,
      order: runnable.order,
      sortColumns: runnable.sortColumns,
      schemaWithMeta: runnable.schemaWithMeta,
      populateMetaFields: runnable.populateMetaFields,
      options,
    };
    const copy = await binaryCopyPlan(context);
    // Each output's upload: its marker first (a rollback finds every object this attempt may have uploaded), and
    // before the first upload a check that the instant was not completed meanwhile.
    let notCompleted: Promise<void> | undefined;
    const upload = async (file: WrittenOutput): Promise<void> => {
      await createMarker(transfers, instantTime, partitionPath, file.fileName, 'CREATE');
      notCompleted ??= assertNotCompletedMeanwhile(storage, table.layout, instantTime);
      await notCompleted;
      // The record index reads each output's keys after the uploads; otherwise nothing reads an output again.
      await transfers.uploadFile(joinPartitionPath(partitionPath, file.fileName), file.file, { consume: !keepRecordKeys });
    };
    let outcome: GroupOutcome;
    if (copy.layout !== undefined) {
      // Binary copy writes the outputs one by one: output k uploads while output k+1 is written, with at most
      // OVERLAPPED_UPLOADS in flight (a slot frees before the next output starts uploading). Every upload started
      // settles before the group goes on or fails.
      uploads = new BoundedTasks(Math.min(OVERLAPPED_UPLOADS, options.uploadConcurrency ?? DEFAULT_UPLOAD_CONCURRENCY));
      const overlapped = uploads;
      outcome = await copyGroup(context, copy.inputs, copy.layout, (file) => overlapped.run(() => upload(file)));
      await overlapped.drain();
    } else {
      // A rewrite writes every output in one engine call (and may write them again at another count): uploads follow
      // (all settled before a failure is thrown).
      outcome = await rewriteGroup(context, copy.reason);
      await mapWithConcurrency(outcome.written, options.uploadConcurrency ?? DEFAULT_UPLOAD_CONCURRENCY, upload);
    }
    const result = groupResultOf(context, partitionPath, outcome, { durationMs: Date.now() - started, requests: counter.snapshot() });
    // Read back from each output (binary copy or rewrite alike), before the result marks the group done.
    if (keepRecordKeys) await recordOutputKeys(context, partitionPath, outcome.written);
    await writeGroupResult(storage, result);
    return result;
  } catch (error) {
    // Uploads still in flight settle before the outputs they read are removed and the error reaches a rollback.
    await uploads?.drain().catch(() => undefined);
    throw withTableLocations(error, staged.toUri);
  } finally {
    await beat.stop();
    await staged.cleanup();
    await rm(workDir, { recursive: true, force: true });
  }
}

/** What a group's run needs from its plan and the table, once every check that can refuse it has passed. */
interface RunnableGroup {
  readonly plan: ClusteringPlan;
  readonly group: ClusteringPlan['inputGroups'][number];
  readonly partitionPath: string;
  readonly sortColumns: string[];
  readonly order: GroupOrder;
  readonly schemaWithMeta: string;
  readonly populateMetaFields: boolean;
  /** The commit moves every record of the group in the metadata table's record index: keep each output's keys. */
  readonly keepRecordKeys: boolean;
}

/** Every check that can refuse a group, before anything is written: the instant, the layout, the metadata table. */
async function checkGroupRunnable(table: HudiTable, instantTime: string, groupIndex: number, options: ExecuteGroupOptions): Promise<RunnableGroup> {
  const { storage } = table;
  const { instant, plan } = await loadClusteringInstant(table, instantTime);
  assertClusteringPending(storage, table.layout, instant);
  // A pending plan on a bucket-index table (scheduled before refusals, or by another tool) is refused too: its
  // outputs would take new file ids. Its inputs' file ids show the bucket numbers.
  await assertPlanLayoutSupported(table, plan, options.properties ?? new Map());
  // Fail before the work: commit would refuse it (and checks again under the lock).
  await assertMetadataTableKeepable(storage, 'a clustering', options.properties ?? new Map(), table.config, 'cluster');
  const group = plan.inputGroups[groupIndex];
  if (!Number.isInteger(groupIndex) || group === undefined) {
    throw new HudiError(`clustering ${instantTime} has groups 0..${plan.inputGroups.length - 1}, not ${groupIndex}`, {
      location: storage.uriOf(pendingClusteringPath(table.layout, instantTime, 'REQUESTED')),
      fix: 'pass a group index of the plan (see `show-clustering`)',
    });
  }
  const partitionPath = groupPartition(group, instantTime, groupIndex);
  const sortColumns = planSortColumns(plan);
  const order = groupOrder(sortColumns, options.config);
  const schemaWithMeta = JSON.stringify(withMetaFields((await table.requireSchema('clustering it')).schema));
  const populateMetaFields = table.config.populateMetaFields;
  const declared = metadataTableState(table.config);
  const keepRecordKeys = [...declared.partitions, ...declared.inflightPartitions].includes('record_index');
  if (keepRecordKeys && !populateMetaFields) {
    throw new HudiError(
      "the table has the metadata table's record index and does not populate meta fields: this build takes record keys from _hoodie_record_key",
      {
        location: storage.uriOf(PROPERTIES_FILE),
        fix: 'cluster this table with Hudi, or drop the record index (a write with hoodie.metadata.record.index.enable=false)',
      },
    );
  }
  return { plan, group, partitionPath, sortColumns, order, schemaWithMeta, populateMetaFields, keepRecordKeys };
}

/** The group's result as the commit reads it: a write stat per output, and the report's figures. */
function groupResultOf(
  context: GroupContext,
  partitionPath: string,
  outcome: GroupOutcome,
  run: { readonly durationMs: number; readonly requests: ReturnType<RequestCounter['snapshot']> },
): GroupResult {
  const { instantTime, groupIndex } = context;
  const { written } = outcome;
  const perFileMs = written.length === 0 ? 0 : Math.round(outcome.writeMs / written.length);
  const writeStats = written.map((file) =>
    newWriteStat({
      fileId: file.fileId,
      path: joinPartitionPath(partitionPath, file.fileName),
      partitionPath,
      prevCommit: 'null',
      numWrites: file.rows,
      numInserts: file.rows,
      totalWriteBytes: file.bytes,
      fileSizeInBytes: file.bytes,
      runtimeStats: { totalScanTime: 0, totalUpsertTime: 0, totalCreateTime: perFileMs },
    }),
  );
  return {
    instantTime,
    groupIndex,
    partitionPath,
    inputFiles: context.inputs.length,
    inputBytes: outcome.inputBytes,
    inputRows: outcome.inputRows,
    order: groupOrderKind(context.order),
    sortColumns: context.sortColumns,
    writeStats,
    durationMs: run.durationMs,
    report: {
      groupIndex,
      partitionPath,
      before: outcome.before,
      after: outcome.after,
      samples: outcome.samples,
      execution: outcome.execution,
      requests: run.requests,
    },
  };
}

/** Each output's record keys, read back from it, stored for the commit's record-index update. */
async function recordOutputKeys(context: GroupContext, partitionPath: string, written: readonly WrittenOutput[]): Promise<void> {
  const { instantTime, groupIndex, options } = context;
  const files: Record<string, readonly string[]> = {};
  for (const file of written) {
    const keys = [...(await options.engine.columnValues([{ file: file.file, rowStart: 0, rowCount: file.rows }], RECORD_KEY))];
    if (keys.length !== file.rows) {
      throw new HudiError(`clustering ${instantTime} group ${groupIndex}: ${keys.length} record keys for ${file.rows} rows of ${file.fileName}`, {
        fix: 'this is a bug in the executor; run the group again',
      });
    }
    files[file.fileId] = keys;
  }
  await writeGroupRecordKeys(context.table.storage, { instantTime, groupIndex, partitionPath, files });
}

/** What both ways of writing a group's outputs need. */
interface GroupContext {
  readonly table: HudiTable;
  readonly instantTime: string;
  readonly groupIndex: number;
  readonly plan: ClusteringPlan;
  /** Local paths of the staged input files (merge-on-read slices with logs: their merged rows), in plan order. */
  readonly inputs: readonly string[];
  /** Merge-on-read slices whose log files were merged into their input. */
  readonly slicesWithLogs: number;
  /** The input files' own names (`<fileId>_<token>_<instant>.parquet`), in plan order. */
  readonly sliceNames: readonly string[];
  readonly outputDir: string;
  readonly numOutputFileGroups: number;
  readonly order: GroupOrder;
  readonly sortColumns: readonly string[];
  readonly schemaWithMeta: string;
  readonly populateMetaFields: boolean;
  readonly options: ExecuteGroupOptions;
}

interface WrittenOutput {
  readonly file: string;
  readonly fileId: string;
  readonly fileName: string;
  readonly rows: number;
  readonly bytes: number;
}

/** A group's outputs on local disk and its part of the report. */
interface GroupOutcome {
  readonly written: readonly WrittenOutput[];
  readonly inputRows: number;
  readonly inputBytes: number;
  readonly writeMs: number;
  readonly before: readonly FileSummary[];
  readonly after: readonly FileSummary[];
  readonly samples: Record<string, (ComparableValue | null)[]>;
  readonly execution: GroupExecution;
}

function outputName(instantTime: string, groupIndex: number, outputIndex: number): { fileId: string; fileName: string } {
  const fileId = clusteringFileId(instantTime, groupIndex, outputIndex);
  return { fileId, fileName: baseFileName(fileId, clusteringWriteToken(groupIndex, outputIndex), instantTime) };
}

/** The Hudi footer of an output holding these record keys (the writer's bloom settings), or of a table without meta fields. */
function outputFooter(context: GroupContext, keys: Iterable<string>): Record<string, string> {
  const { bloom } = context.options;
  return context.populateMetaFields
    ? hudiFooter(keys, context.schemaWithMeta, bloom === undefined ? {} : { bloom })
    : hudiFooter([], context.schemaWithMeta, { populateMetaFields: false });
}

// ---------------------------------------------------------------------------------------------------------------
// Binary copy.

/**
 * Whether this group's outputs can be the inputs' row groups copied byte for byte (lib/parquet/binary-copy.ts), and
 * the reason when not. Binary copy changes nothing a reader sees but the file a row is in, so it is used whenever the
 * group keeps the rows' order and metadata and the files allow it; otherwise the group is rewritten.
 */
async function binaryCopyPlan(
  context: GroupContext,
): Promise<{ inputs: CopyInput[]; layout: CopyLayout; reason?: undefined } | { reason: string; layout?: undefined }> {
  const { config } = context.options;
  const facts = {
    config,
    slicesWithLogs: context.slicesWithLogs,
    sortColumns: context.order.kind === 'input' ? [] : context.sortColumns,
    populateMetaFields: context.populateMetaFields,
    preserveHoodieMetadata: context.plan.preserveHoodieMetadata,
  };
  // Small files mean small row groups: their sizes decide before any footer is read, but only once nothing else
  // refuses (a stat per input is wasted on a sorted group of 10,000 files).
  const averageFileBytes = (): number => context.inputs.reduce((total, file) => total + statSync(file).size, 0) / Math.max(1, context.inputs.length);
  const refusal =
    binaryCopyRefusal({ ...facts, averageFileBytes: Number.POSITIVE_INFINITY }) ?? binaryCopyRefusal({ ...facts, averageFileBytes: averageFileBytes() });
  if (refusal !== undefined) return { reason: refusal };
  const inputs = await mapWithConcurrency([...context.inputs], FOOTER_CONCURRENCY, (file) => readCopyInput(file));
  const plan = planBinaryCopy(inputs, {
    fileNameColumn: FILE_NAME_COLUMN,
    schemaEvolution: config.binaryCopySchemaEvolution,
    minRowGroupBytes: config.binaryCopyMinRowGroupBytes,
    schemaFrom: newestInput(context.sliceNames),
  });
  return plan.layout === undefined ? { reason: plan.refusal } : { inputs, layout: plan.layout };
}

/** The input written last (by its instant time, then plan order): its schema is the group's under schema evolution. */
function newestInput(names: readonly string[]): number {
  let newest = 0;
  names.forEach((name, index) => {
    const time = parseBaseFileName(name)?.instantTime ?? '';
    if (compareInstantTimes(time, parseBaseFileName(names[newest]!)?.instantTime ?? '') >= 0) newest = index;
  });
  return newest;
}

/**
 * Copy the inputs' row groups, in plan order, into files of at most target.file.max.bytes (cut at row group
 * boundaries; at least the plan's numOutputFileGroups when there are enough row groups). Each output's Hudi footer
 * comes from its record keys, read by the engine while the previous output's pages are copied. `onWritten` gets
 * each output once written (its upload starts while the next is written).
 */
async function copyGroup(
  context: GroupContext,
  inputs: readonly CopyInput[],
  layout: CopyLayout,
  onWritten: (file: WrittenOutput) => Promise<void>,
): Promise<GroupOutcome> {
  const { engine, config } = context.options;
  await mkdir(context.outputDir, { recursive: true });
  const rowGroups = inputs.flatMap((input, inputIndex) => {
    let firstRow = 0;
    return input.rowGroups.map((rowGroup, index) => {
      const entry = { input: inputIndex, index, firstRow, rows: rowGroup.numRows, bytes: rowGroup.bytes };
      firstRow += rowGroup.numRows;
      return entry;
    });
  });
  const runs = planCopyOutputs(
    rowGroups.map((rowGroup) => rowGroup.bytes),
    config.targetFileMaxBytes,
    context.numOutputFileGroups,
  );
  // Hudi's way first: merge the inputs' footers (key range, bloom filter); from the record keys when that fails.
  let footersFromKeys: string | undefined;
  const footerOf = async (run: readonly (typeof rowGroups)[number][]): Promise<Record<string, string>> => {
    if (!context.populateMetaFields) return outputFooter(context, []);
    if (footersFromKeys === undefined) {
      const merged = await mergedInputFooters(context, [...new Set(run.map((rowGroup) => inputs[rowGroup.input]!.file))]);
      if (merged.footer !== undefined) return merged.footer;
      footersFromKeys = merged.reason;
    }
    // Consecutive row groups of one input are one range of its rows.
    const ranges: FileRows[] = [];
    for (const rowGroup of run) {
      const file = inputs[rowGroup.input]!.file;
      const last = ranges[ranges.length - 1];
      if (last !== undefined && last.file === file && last.rowStart + last.rowCount === rowGroup.firstRow) last.rowCount += rowGroup.rows;
      else ranges.push({ file, rowStart: rowGroup.firstRow, rowCount: rowGroup.rows });
    }
    return outputFooter(context, await engine.columnValues(ranges, RECORD_KEY));
  };
  const codec = copyCodec(context.options.compressionCodec);
  /** Time spent writing the outputs (not waiting for an upload slot). */
  let writeMs = 0;
  const written: WrittenOutput[] = [];
  let nextFooter = runs.length > 0 ? footerOf(rowGroups.slice(...runs[0]!)) : undefined;
  nextFooter?.catch(() => undefined);
  for (const [outputIndex, [start, end]] of runs.entries()) {
    const outputStarted = Date.now();
    const { fileId, fileName } = outputName(context.instantTime, context.groupIndex, outputIndex);
    const file = join(context.outputDir, fileName);
    const footer = nextFooter!;
    // The next output's keys are read (and its bloom filter built) while this one's pages are copied.
    nextFooter = outputIndex + 1 < runs.length ? footer.then(() => footerOf(rowGroups.slice(...runs[outputIndex + 1]!))) : undefined;
    nextFooter?.catch(() => undefined);
    const run = rowGroups.slice(start, end);
    const result = await writeCopiedFile({
      file,
      inputs,
      layout,
      rowGroups: run.map((rowGroup) => [rowGroup.input, rowGroup.index] as const),
      fileName,
      keyValues: footer,
      ...(codec === undefined ? {} : { codec }),
    });
    const expected = run.reduce((total, rowGroup) => total + rowGroup.rows, 0);
    const read = await engine.countRows([file]);
    if (result.rows !== expected || read !== expected) {
      throw new HudiError(`binary copy wrote ${read} rows (by its footer) instead of ${expected}`, {
        location: file,
        fix: 'retry; if it repeats, report it as a bug',
      });
    }
    const output = { file, fileId, fileName, rows: expected, bytes: result.bytes };
    written.push(output);
    writeMs += Date.now() - outputStarted;
    // Waits while the uploads in flight fill their slots: the next output is written once one is free.
    await onWritten(output);
  }
  const inputRows = inputs.reduce((total, input) => total + input.numRows, 0);
  return {
    written,
    inputRows,
    inputBytes: inputs.reduce((total, input) => total + input.bytes, 0),
    writeMs,
    before: inputs.map((input) => ({ bytes: input.bytes, rows: input.numRows, ranges: {} })),
    after: written.map((file) => ({ bytes: file.bytes, rows: file.rows, ranges: {} })),
    samples: {},
    execution: { method: 'binary-copy', rowGroups: rowGroups.length, ...(footersFromKeys === undefined ? {} : { footersFromKeys }) },
  };
}

/** The Hudi footers of these inputs merged (key range, bloom filters), as Hudi's binary copy merges them, or why not. */
async function mergedInputFooters(context: GroupContext, files: readonly string[]): Promise<ReturnType<typeof mergedHudiFooter>> {
  const values = await mapWithConcurrency([...files], FOOTER_CONCURRENCY, async (file) => hudiFooterValues(await readFooterKeyValues(file, HUDI_FOOTER_KEYS)));
  const merged = mergedHudiFooter(values, context.schemaWithMeta, { maxEntries: context.options.bloom?.maxEntries });
  const wanted = context.options.bloom?.type;
  if (merged.footer === undefined || wanted === undefined || merged.footer[BLOOM_FILTER_TYPE_CODE_FOOTER_KEY] === wanted) return merged;
  return { reason: `the inputs' bloom filters are not of type ${wanted} (hoodie.bloom.index.filter.type)` };
}

/**
 * Footers that need no record keys, for a rewrite's outputs whose bloom filter would be full. Hudi's filter takes
 * numEntries keys a row up to maxEntries and then round-robins over its rows, so from about two million keys on
 * (Hudi's defaults) every bit is set and it lets every key through. An output that large takes the inputs' filters
 * merged, when they are as full: it holds every key of the group, so it gives the same answer (maybe) to every
 * lookup. Its key range is its own. Undefined when no output of `largestOutputRows` rows could be that full (the
 * inputs' footers are then not read), or the inputs' filters do not merge or are not that full.
 */
async function saturatedFooters(context: GroupContext, largestOutputRows: number, used: { count: number }): Promise<FooterFromColumn['fromRange']> {
  const bloom = context.options.bloom ?? {};
  const full = (rows: number): boolean => expectedPassRate(bloom, rows) >= SATURATED_PASS_RATE;
  if (!full(largestOutputRows)) return undefined;
  const merged = await mergedInputFooters(context, context.inputs);
  if (merged.footer === undefined || merged.passRate < SATURATED_PASS_RATE) return undefined;
  const { footer } = merged;
  return {
    applies: (output) => full(output.rowCount),
    build: (range) => {
      used.count++;
      return { ...footer, [MIN_RECORD_KEY_FOOTER_KEY]: range.min, [MAX_RECORD_KEY_FOOTER_KEY]: range.max };
    },
  };
}

/** A bloom filter letting this share of absent keys through tells a lookup nothing (1 in 10,000 is told "absent"). */
const SATURATED_PASS_RATE = 0.9999;

/** hoodie.parquet.compression.codec → the parquet.thrift code binary copy recompresses to. */
function copyCodec(name: string | undefined): number | undefined {
  if (name === undefined) return undefined;
  const code = (CODEC as Readonly<Record<string, number>>)[name.toUpperCase()];
  if (code === undefined || !canRecompress(CODEC.UNCOMPRESSED, code)) {
    throw new HudiError(`hoodie.parquet.compression.codec "${name}" is not one binary copy can write`, {
      fix: 'use snappy, gzip, zstd, brotli or uncompressed',
    });
  }
  return code;
}

// ---------------------------------------------------------------------------------------------------------------
// Rewriting.

/** Read, order and write the group's rows with the engine (copySorted), for groups binary copy cannot do. */
async function rewriteGroup(context: GroupContext, reason: string): Promise<GroupOutcome> {
  const { engine, config } = context.options;
  const { inputs, order, populateMetaFields, instantTime, groupIndex, sortColumns, outputDir } = context;
  // One footer read per input gives the rows, sizes and schemas every later step uses (copySorted included), and,
  // for sort columns, the chunk statistics of the report's "before" ranges (decoded here: DuckDB's parquet_metadata
  // over 10,000 small files cost more than rewriting their rows; of the sort columns only, since every leaf's cost
  // more than the rest of the footer).
  // A curve's sort columns are decoded from their pages (scanSortColumns) for its ranks, so their chunks are located
  // here too, unless DuckDB computes the keys in its own sort (see below): the first footer tells.
  const statistics = sortColumns.length > 0 ? { statistics: sortColumns } : {};
  const curveColumns = order.kind === 'curve' ? order.columns : undefined;
  const directZOrder = order.kind === 'curve' && order.layout === 'z-order' && order.buildMethod === 'direct' ? order.columns : undefined;
  const first = inputs.length > 0 && directZOrder !== undefined ? readFooterSummary(inputs[0]!, statistics) : undefined;
  const keysExpectedInEngine = first !== undefined && directZOrder !== undefined && engine.directZOrderSortKeys(directZOrder, [first]) !== undefined;
  const footerOptions = { ...statistics, ...(curveColumns !== undefined && !keysExpectedInEngine ? { chunks: curveColumns } : {}) };
  const footers = inputs.map((file, index) => (index === 0 && keysExpectedInEngine ? first! : readFooterSummary(file, footerOptions)));
  const inputStats = sortColumns.length === 0 ? undefined : footers.map(columnStatsOf);
  const inputFileRows = footers.map((footer) => footer.numRows);
  const inputRows = inputFileRows.reduce((total, rows) => total + rows, 0);
  const inputSizes = footers.map((footer) => footer.bytes);
  const inputBytes = inputSizes.reduce((total, size) => total + size, 0);
  const columnTypes = columnInfoByName(footers[footers.length - 1]?.columns ?? []);

  // A DIRECT z-order key the engine can compute is sorted on in its own COPY, as a linear sort is; several outputs
  // are then cut from that one ordered file (copySorted never range-partitions by such a key: each output's range
  // filter would compute it again for every row), which takes less CPU than ranks computed here and range-partitioned.
  // Any other curve's keys are computed here and handed over as ranks.
  const engineCurveKeys = directZOrder === undefined ? undefined : engine.directZOrderSortKeys(directZOrder, footers);
  /** The footers with the curve columns' chunks located, for the ranks (read again only where the engine's keys were expected). */
  const footersForRanks = (): FooterSummary[] =>
    keysExpectedInEngine ? inputs.map((file) => readFooterSummary(file, { ...statistics, chunks: curveColumns })) : footers;
  let curveRowRanks: Uint32Array | undefined;
  let curveKeys: 'engine' | 'ranks' | undefined;
  const sorting = async (): Promise<{ orderBy?: readonly SortKey[]; derivedColumns?: DerivedColumnLayers; rowRanks?: Uint32Array }> => {
    if (order.kind === 'linear') return { orderBy: order.columns.map((column) => ({ column })) };
    if (order.kind !== 'curve' || inputRows === 0) return {};
    curveKeys = engineCurveKeys !== undefined ? 'engine' : 'ranks';
    if (engineCurveKeys !== undefined) return engineCurveKeys;
    curveRowRanks ??= await curveRanks(engine, inputs, footersForRanks(), order, inputRows, config.buildCurveSampleSize, groupSeed(instantTime, groupIndex));
    return { rowRanks: curveRowRanks };
  };

  const blockBytes = rowGroupBytesFor(await engine.memoryLimitBytes(), context.options.parquetBlockBytes);
  let outputCount = Math.min(context.numOutputFileGroups, Math.max(inputRows, 1));
  // The largest output is one of the first count's (a retry makes more, smaller ones).
  const saturatedUsed = { count: 0 };
  const saturated = populateMetaFields ? await saturatedFooters(context, Math.ceil(inputRows / outputCount), saturatedUsed) : undefined;
  let written: (WrittenOutput & { stats: FileColumnStats })[] = [];
  let copyMs = 0;
  let split: string | undefined;
  let saturatedCount = 0;
  for (let attempt = 1; inputRows > 0; attempt++) {
    const ranges = planOutputRanges(inputRows, outputCount);
    const outputs = outputRangesOf(context, ranges);
    const ordering = await sorting();
    const copyStarted = Date.now();
    const copied = await engine.copySorted({
      inputs,
      inputFooters: footers,
      ...ordering,
      outputs,
      rowGroupSize: rowGroupRows(inputBytes, inputRows, ranges[0]!.rowCount, blockBytes),
      ...(populateMetaFields
        ? {
            footerFromColumn: {
              column: RECORD_KEY,
              build: (keys: Iterable<string>) => outputFooter(context, keys),
              ...(saturated === undefined ? {} : { fromRange: saturated }),
            },
          }
        : {}),
    });
    copyMs = Date.now() - copyStarted;
    saturatedCount = saturatedUsed.count;
    saturatedUsed.count = 0;
    split = describeSplit(copied.split);
    written = await writtenOutputsOf(outputs, outputDir);
    // Hudi's writers roll over to a new file at target.file.max.bytes; one row group of slack is what that allows.
    const oversized = written.filter((file) => file.bytes > config.targetFileMaxBytes + Math.ceil(file.bytes / Math.max(1, file.stats.rowGroupCount)));
    if (oversized.length === 0 || attempt >= MAX_SIZING_ATTEMPTS || outputCount >= inputRows) break;
    const largest = Math.max(...written.map((file) => file.bytes));
    outputCount = Math.min(inputRows, Math.max(outputCount + 1, Math.ceil((outputCount * largest) / config.targetFileMaxBytes)));
    await rm(outputDir, { recursive: true, force: true });
  }
  // Sampled from the outputs: the same rows as the inputs, in a few files instead of many (opening thousands of small
  // inputs costs seconds), and in sort order, so evenly spaced rows are one per quantile: only the sampled rows' row
  // groups are decoded, a fraction of what picking rows by a hash of every record key costs.
  const samples =
    sortColumns.length === 0 || inputRows === 0
      ? {}
      : await sampleSortValues(
          engine,
          written.map((file) => file.file),
          sortColumns,
          columnTypes,
          context.options.reportSamples ?? DEFAULT_REPORT_SAMPLES,
        );
  return {
    written,
    inputRows,
    inputBytes,
    writeMs: copyMs,
    before:
      inputStats?.map((file, index) => fileSummary(file, inputSizes[index]!, sortColumns, columnTypes)) ??
      inputFileRows.map((rows, index) => ({ bytes: inputSizes[index]!, rows, ranges: {} })),
    after: written.map((file) => fileSummary(file.stats, file.bytes, sortColumns, columnTypes)),
    samples,
    execution: {
      method: 'rewrite',
      reason,
      ...(split === undefined ? {} : { split }),
      ...(saturatedCount === 0 ? {} : { saturatedBloomFilters: saturatedCount }),
      ...(curveKeys === undefined ? {} : { curveKeys }),
    },
  };
}

/** The outputs of one attempt: each output's rank range, file, constant columns and (meta fields off) footer. */
function outputRangesOf(context: GroupContext, ranges: ReturnType<typeof planOutputRanges>): OutputRange[] {
  const { instantTime, groupIndex, plan, populateMetaFields, outputDir } = context;
  return ranges.map((range, outputIndex) => {
    const { fileName } = outputName(instantTime, groupIndex, outputIndex);
    const keepMetadata = plan.preserveHoodieMetadata || !populateMetaFields;
    const constantColumns: Record<string, string> = { [FILE_NAME_COLUMN]: fileName };
    if (!keepMetadata) constantColumns['_hoodie_commit_time'] = instantTime;
    return {
      file: join(outputDir, fileName),
      ...range,
      keyValues: populateMetaFields ? {} : outputFooter(context, []),
      constantColumns,
      // HoodieRecord.generateSequenceId: <instant>_<task partition>_<record index>.
      ...(keepMetadata ? {} : { sequenceColumns: { _hoodie_commit_seqno: `${instantTime}_${outputIndex}_` } }),
    };
  });
}

/** How copySorted split the sorted rows into the outputs, in the report's words. */
function describeSplit(split: CopySortedResult['split']): string | undefined {
  if (split === undefined) return undefined;
  switch (split.method) {
    case 'key-ranges':
      return `one sort, range-partitioned by the sort key into the ${split.outputs} outputs${split.notCut === undefined ? '' : `; not cut from one ordered file: ${split.notCut}`}`;
    case 'copy':
      return `one sort, its ${split.rowGroups} row groups copied into the outputs (${split.pieces} split at output boundaries and rewritten, ${split.inPlace} left in place)${
        split.keyRangesRefused === undefined ? '' : `; not range-partitioned: ${split.keyRangesRefused}`
      }`;
    case 'rewrite':
      return `one sort, each output rewritten from it: ${split.reason}`;
    default:
      return `each output written from a temp table of the rows: ${split.reason}`;
  }
}

/** The written outputs with their sizes and column statistics (read from their footers). */
async function writtenOutputsOf(outputs: readonly OutputRange[], outputDir: string): Promise<(WrittenOutput & { stats: FileColumnStats })[]> {
  const outputStats = outputs.map((output) => columnStatsOf(readFooterSummary(output.file, { statistics: true })));
  return await Promise.all(
    outputs.map(async (output, index) => {
      const fileName = output.file.slice(outputDir.length + 1);
      return {
        file: output.file,
        fileId: fileName.slice(0, fileName.indexOf('_')),
        fileName,
        rows: output.rowCount,
        bytes: (await stat(output.file)).size,
        stats: outputStats[index]!,
      };
    }),
  );
}

/**
 * Ranks from curve keys computed exactly as lib/layout/curves.ts does. DIRECT keys are per row, so they are built
 * batch by batch while the engine streams the sort columns; SAMPLE needs every value first (its range bounds come
 * from a sample of the whole group).
 */
async function curveRanks(
  engine: ParquetEngine,
  inputs: readonly string[],
  inputFooters: readonly FooterSummary[],
  order: Extract<GroupOrder, { kind: 'curve' }>,
  totalRows: number,
  sampleSize: number,
  seed: number,
): Promise<Uint32Array> {
  const curveError = (error: unknown): HudiError =>
    new HudiError(`cannot build ${order.layout} keys over ${order.columns.join(', ')}: ${(error as Error).message}`, {
      location: inputs[0],
      fix: 'check the sort columns’ types and values, or cluster with hoodie.layout.optimize.strategy=linear',
      cause: error,
    });
  const asCurveColumns = (columns: readonly SortColumnDescription[], values: readonly ArrayLike<SortValue>[]): CurveSortColumn[] =>
    columns.map((column, index) => ({ type: column.type, schemaPosition: column.schemaPosition, values: values[index]! }));

  let batch: CurveKeyBatch;
  if (order.buildMethod === 'direct') {
    const keyLength = order.layout === 'z-order' ? 8 * order.columns.length : 63;
    const keys = new Uint8Array(totalRows * keyLength);
    await engine.scanSortColumns(
      inputs,
      order.columns,
      (rows, columns) => {
        let computed: CurveKeyBatch;
        try {
          computed = buildCurveKeys(asCurveColumns(columns, rows.values), { layout: order.layout, buildMethod: 'direct' });
        } catch (error) {
          throw curveError(error);
        }
        placeKeys(keys, computed.keys, rows.inputRows, keyLength);
      },
      { inputFooters },
    );
    batch = { rowCount: totalRows, keyLength, keys };
  } else {
    const values = order.columns.map(() => new Array<SortValue>(totalRows));
    let described: readonly SortColumnDescription[] = [];
    await engine.scanSortColumns(
      inputs,
      order.columns,
      (rows, columns) => {
        described = columns;
        rows.values.forEach((columnValues, column) => {
          for (let row = 0; row < rows.inputRows.length; row++) values[column]![rows.inputRows[row]!] = columnValues[row];
        });
      },
      { inputFooters },
    );
    try {
      batch = buildCurveKeys(asCurveColumns(described, values), { layout: order.layout, buildMethod: 'sample', sampleSize, seed });
    } catch (error) {
      throw curveError(error);
    }
  }
  const sorted = sortRowsByCurveKey(batch);
  const ranks = new Uint32Array(totalRows);
  for (let position = 0; position < sorted.length; position++) ranks[sorted[position]!] = position;
  return ranks;
}

/** Batch row i's key into its input row's place; one copy per run of consecutive input rows (a page batch is one run). */
function placeKeys(into: Uint8Array, keys: Uint8Array, inputRows: Uint32Array, keyLength: number): void {
  for (let start = 0; start < inputRows.length; ) {
    let end = start + 1;
    while (end < inputRows.length && inputRows[end] === inputRows[end - 1]! + 1) end++;
    into.set(keys.subarray(start * keyLength, end * keyLength), inputRows[start]! * keyLength);
    start = end;
  }
}

function columnInfoByName(schema: readonly ParquetColumnInfo[]): Map<string, ParquetColumnInfo> {
  return new Map(schema.filter((column) => column.numChildren === 0).map((column) => [column.path.join('.'), column]));
}

function fileSummary(stats: FileColumnStats, bytes: number, sortColumns: readonly string[], types: ReadonlyMap<string, ParquetColumnInfo>): FileSummary {
  const ranges: Record<string, readonly [ComparableValue | null, ComparableValue | null]> = {};
  for (const column of sortColumns) {
    const found: ColumnStats | undefined = stats.columns.find((candidate) => candidate.column === column);
    const type = types.get(column);
    ranges[column] = found === undefined ? [null, null] : [toComparable(found.min, type), toComparable(found.max, type)];
  }
  return { bytes, rows: stats.rowCount, ranges };
}

async function sampleSortValues(
  engine: ParquetEngine,
  inputs: readonly string[],
  sortColumns: readonly string[],
  types: ReadonlyMap<string, ParquetColumnInfo>,
  count: number,
): Promise<Record<string, (ComparableValue | null)[]>> {
  const { rows } = await engine.sampleRows(inputs, { columns: sortColumns, count });
  return Object.fromEntries(sortColumns.map((column) => [column, rows.map((row) => toComparable(row[column], types.get(column)))]));
}
