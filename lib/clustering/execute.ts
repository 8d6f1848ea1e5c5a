/**
 * Executing one clustering group — the unit one Lambda runs — as Hudi's SparkSortAndSizeExecutionStrategy does for a
 * HoodieClusteringGroup: read the group's base files, order the rows (input order, linear sort, or a z-order /
 * hilbert curve built exactly as lib/layout/curves.ts does), and write numOutputFileGroups new file groups of
 * near-equal row counts, keeping the records' meta columns except `_hoodie_file_name`.
 *
 * Retries are safe by construction: output names are derived from (instant, group, output index), so running a
 * group again overwrites the same objects with the same rows and nothing becomes visible twice. A group is done
 * when its result object (instant.ts writeGroupResult) exists; it is written after every output is uploaded.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HudiError } from '../errors.js';
import type { ColumnStats, FileColumnStats, OutputRange, ParquetColumnInfo, ParquetEngine, SortColumnDescription, SortKey } from '../engine/port.js';
import { baseFileName, joinPartitionPath } from '../fs-view.js';
import { buildCurveKeys, sortRowsByCurveKey, type CurveKeyBatch, type CurveSortColumn, type SortValue } from '../layout/curves.js';
import { stageFiles, withTableLocations } from '../reader.js';
import { assertNoMetadataTable } from '../metadata-table.js';
import { withMetaFields } from '../schema.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { HudiTable } from '../table.js';
import { PROPERTIES_FILE } from '../table-config.js';
import { newWriteStat } from '../timeline/commit-metadata.js';
import { startHeartbeat } from '../timeline/heartbeat.js';
import { createMarker } from '../timeline/markers.js';
import { instantPath } from '../timeline/timeline.js';
import type { BloomFilterOptions } from '../writer/bloom-filter.js';
import { hudiFooter } from '../writer/footer.js';
import type { ClusteringConfig } from './config.js';
import {
  assertClusteringPending, assertNotCompletedMeanwhile, ensureInflight, groupPartition, loadClusteringInstant, sliceStoragePath, writeGroupResult, type GroupResult,
} from './instant.js';
import { toComparable, type ComparableValue, type FileSummary } from './report.js';
import { groupOrder, groupOrderKind, planSortColumns, type GroupOrder } from './sort-columns.js';

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
}

/** hoodie.parquet.block.size: the row group size Hudi's writers aim for. */
export const PARQUET_BLOCK_BYTES = 120 * 1024 * 1024;
const DEFAULT_REPORT_SAMPLES = 100;
const DEFAULT_UPLOAD_CONCURRENCY = 4;
/** Rewrites with more outputs when a file came out above target.file.max.bytes by more than a row group. */
const MAX_SIZING_ATTEMPTS = 3;
const RECORD_KEY = '_hoodie_record_key';

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
  const hash = createHash('sha1').update(`hudi-serverless/clustering/${instantTime}/${groupIndex}/${outputIndex}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}-0`;
}

/** Hudi's `<taskPartitionId>-<stageId>-<taskAttemptId>`: output, group, and attempt 0 (a retry overwrites the same name). */
export function clusteringWriteToken(groupIndex: number, outputIndex: number): string {
  return `${outputIndex}-${groupIndex}-0`;
}

/** Rows per row group so a row group is about `blockBytes` of Parquet, at most one output's rows. */
export function rowGroupRows(inputBytes: number, inputRows: number, rowsPerOutput: number, blockBytes = PARQUET_BLOCK_BYTES): number {
  const bytesPerRow = inputRows > 0 ? Math.max(1, inputBytes / inputRows) : 1;
  return Math.max(1, Math.min(rowsPerOutput, Math.floor(blockBytes / bytesPerRow)));
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
  const { engine, config } = options;
  const { instant, plan } = await loadClusteringInstant(table, instantTime);
  assertClusteringPending(storage, instant);
  // Fail before the work: commit would refuse it (and checks again under the lock).
  assertNoMetadataTable(table.config, storage.uriOf(PROPERTIES_FILE), 'a clustering');
  const group = plan.inputGroups[groupIndex];
  if (!Number.isInteger(groupIndex) || group === undefined) {
    throw new HudiError(`clustering ${instantTime} has groups 0..${plan.inputGroups.length - 1}, not ${groupIndex}`, {
      location: storage.uriOf(instantPath({ time: instantTime, action: 'replacecommit', state: 'REQUESTED' })),
      fix: 'pass a group index of the plan (see `show-clustering`)',
    });
  }
  const partitionPath = groupPartition(group, instantTime, groupIndex);
  const sortColumns = planSortColumns(plan);
  const order = groupOrder(sortColumns, config);
  const schemaWithMeta = JSON.stringify(withMetaFields((await table.requireSchema('clustering it')).schema));
  const populateMetaFields = table.config.populateMetaFields;

  // Keeps `.hoodie/.heartbeat/<instant>` fresh so a rollback does not take the instant for dead; other groups of
  // the instant may still run, so the file stays when this group ends (the commit removes it).
  const beat = await startHeartbeat(storage, instantTime, { keepFile: true });
  await ensureInflight(storage, instantTime);
  await mkdir(options.tempDir, { recursive: true });
  const workDir = await mkdtemp(join(options.tempDir, `cluster-${instantTime}-${groupIndex}-`));
  const inputPaths = group.slices.map(sliceStoragePath);
  const staged = await stageFiles(storage, inputPaths, workDir);
  try {
    const inputs = staged.localPaths;
    const inputStats = await engine.columnStats(inputs);
    const inputRows = inputStats.reduce((total, file) => total + file.rowCount, 0);
    const inputSizes = await Promise.all(inputs.map(async (file) => (await stat(file)).size));
    const inputBytes = inputSizes.reduce((total, size) => total + size, 0);
    const columnTypes = columnInfoByName((await engine.readFooter(inputs[inputs.length - 1]!)).schema);

    const sorting: { orderBy?: SortKey[]; rowRanks?: Uint32Array } =
      order.kind === 'linear'
        ? { orderBy: order.columns.map((column) => ({ column })) }
        : order.kind === 'curve' && inputRows > 0
          ? { rowRanks: await curveRanks(engine, inputs, order, inputRows, config.buildCurveSampleSize, groupSeed(instantTime, groupIndex)) }
          : {};

    const blockBytes = rowGroupBytesFor(await engine.memoryLimitBytes(), options.parquetBlockBytes);
    let outputCount = Math.min(group.numOutputFileGroups, Math.max(inputRows, 1));
    let written: { file: string; fileId: string; fileName: string; rows: number; bytes: number; stats: FileColumnStats }[] = [];
    const outputDir = join(workDir, 'out');
    let copyMs = 0;
    for (let attempt = 1; inputRows > 0; attempt++) {
      const ranges = planOutputRanges(inputRows, outputCount);
      const outputs: OutputRange[] = ranges.map((range, outputIndex) => {
        const fileId = clusteringFileId(instantTime, groupIndex, outputIndex);
        const fileName = baseFileName(fileId, clusteringWriteToken(groupIndex, outputIndex), instantTime);
        const keepMetadata = plan.preserveHoodieMetadata || !populateMetaFields;
        const constantColumns: Record<string, string> = { _hoodie_file_name: fileName };
        if (!keepMetadata) constantColumns['_hoodie_commit_time'] = instantTime;
        return {
          file: join(outputDir, fileName),
          ...range,
          keyValues: populateMetaFields ? {} : hudiFooter([], schemaWithMeta, { populateMetaFields }),
          constantColumns,
          // HoodieRecord.generateSequenceId: <instant>_<task partition>_<record index>.
          ...(keepMetadata ? {} : { sequenceColumns: { _hoodie_commit_seqno: `${instantTime}_${outputIndex}_` } }),
        };
      });
      const copyStarted = Date.now();
      await engine.copySorted({
        inputs,
        ...sorting,
        outputs,
        rowGroupSize: rowGroupRows(inputBytes, inputRows, ranges[0]!.rowCount, blockBytes),
        ...(populateMetaFields ? { footerFromColumn: { column: RECORD_KEY, build: (keys: Iterable<string>) => hudiFooter(keys, schemaWithMeta, options.bloom === undefined ? {} : { bloom: options.bloom }) } } : {}),
      });
      copyMs = Date.now() - copyStarted;
      const outputStats = await engine.columnStats(outputs.map((output) => output.file));
      written = await Promise.all(
        outputs.map(async (output, index) => {
          const fileName = output.file.slice(outputDir.length + 1);
          return { file: output.file, fileId: fileName.slice(0, fileName.indexOf('_')), fileName, rows: output.rowCount, bytes: (await stat(output.file)).size, stats: outputStats[index]! };
        }),
      );
      // Hudi's writers roll over to a new file at target.file.max.bytes; one row group of slack is what that allows.
      const oversized = written.filter((file) => file.bytes > config.targetFileMaxBytes + Math.ceil(file.bytes / Math.max(1, file.stats.rowGroupCount)));
      if (oversized.length === 0 || attempt >= MAX_SIZING_ATTEMPTS || outputCount >= inputRows) break;
      const largest = Math.max(...written.map((file) => file.bytes));
      outputCount = Math.min(inputRows, Math.max(outputCount + 1, Math.ceil((outputCount * largest) / config.targetFileMaxBytes)));
      await rm(outputDir, { recursive: true, force: true });
    }

    // Markers first: a rollback finds every object this attempt may have uploaded.
    for (const file of written) await createMarker(storage, instantTime, partitionPath, file.fileName, 'CREATE');
    await assertNotCompletedMeanwhile(storage, instantTime);
    await mapWithConcurrency(written, options.uploadConcurrency ?? DEFAULT_UPLOAD_CONCURRENCY, (file) =>
      storage.uploadFile(joinPartitionPath(partitionPath, file.fileName), file.file),
    );

    const perFileMs = written.length === 0 ? 0 : Math.round(copyMs / written.length);
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
    const samples = sortColumns.length === 0 || inputRows === 0
      ? {}
      : await sampleSortValues(engine, inputs, sortColumns, columnTypes, options.reportSamples ?? DEFAULT_REPORT_SAMPLES);
    const result: GroupResult = {
      instantTime,
      groupIndex,
      partitionPath,
      inputFiles: inputs.length,
      inputBytes,
      inputRows,
      order: groupOrderKind(order),
      sortColumns,
      writeStats,
      durationMs: Date.now() - started,
      report: {
        groupIndex,
        partitionPath,
        before: inputStats.map((file, index) => fileSummary(file, inputSizes[index]!, sortColumns, columnTypes)),
        after: written.map((file) => fileSummary(file.stats, file.bytes, sortColumns, columnTypes)),
        samples,
      },
    };
    await writeGroupResult(storage, result);
    return result;
  } catch (error) {
    throw withTableLocations(error, staged.toUri);
  } finally {
    await beat.stop();
    await staged.cleanup();
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Ranks from curve keys computed exactly as lib/layout/curves.ts does. DIRECT keys are per row, so they are built
 * batch by batch while the engine streams the sort columns; SAMPLE needs every value first (its range bounds come
 * from a sample of the whole group).
 */
async function curveRanks(
  engine: ParquetEngine,
  inputs: readonly string[],
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
  const asCurveColumns = (columns: readonly SortColumnDescription[], values: readonly (ArrayLike<SortValue>)[]): CurveSortColumn[] =>
    columns.map((column, index) => ({ type: column.type, schemaPosition: column.schemaPosition, values: values[index]! }));

  let batch: CurveKeyBatch;
  if (order.buildMethod === 'direct') {
    const keyLength = order.layout === 'z-order' ? 8 * order.columns.length : 63;
    const keys = new Uint8Array(totalRows * keyLength);
    await engine.scanSortColumns(inputs, order.columns, (rows, columns) => {
      let computed: CurveKeyBatch;
      try {
        computed = buildCurveKeys(asCurveColumns(columns, rows.values), { layout: order.layout, buildMethod: 'direct' });
      } catch (error) {
        throw curveError(error);
      }
      for (let row = 0; row < rows.inputRows.length; row++) {
        keys.set(computed.keys.subarray(row * keyLength, (row + 1) * keyLength), rows.inputRows[row]! * keyLength);
      }
    });
    batch = { rowCount: totalRows, keyLength, keys };
  } else {
    const values = order.columns.map(() => new Array<SortValue>(totalRows));
    let described: readonly SortColumnDescription[] = [];
    await engine.scanSortColumns(inputs, order.columns, (rows, columns) => {
      described = columns;
      rows.values.forEach((columnValues, column) => {
        for (let row = 0; row < rows.inputRows.length; row++) values[column]![rows.inputRows[row]!] = columnValues[row];
      });
    });
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
  const hashColumns = types.has(RECORD_KEY) ? [RECORD_KEY, ...sortColumns] : [...sortColumns];
  const { rows } = await engine.sampleRows(inputs, { columns: sortColumns, count, hashColumns });
  return Object.fromEntries(sortColumns.map((column) => [column, rows.map((row) => toComparable(row[column], types.get(column)))]));
}
