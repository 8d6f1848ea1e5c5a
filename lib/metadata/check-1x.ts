/**
 * checkMetadataTable on a Hudi 1.x metadata table (table versions 8 and 9), read as Hudi reads it (reader-1x.ts):
 * `files` against storage (base files, and log files named by their delta commit, each counted once its instant
 * completed), `column_stats` against each listed base file's footer (the records a commit of it would write now),
 * and `partition_stats` against the column stats of each partition's latest file slices: a stored range must hold
 * every value those files hold, or Hudi's data skipping prunes a partition that matches; and `record_index` against
 * the data's snapshot as the version-6 check compares it (record-index-check.ts). bloom_filters (read, not compared),
 * Hudi 1.1's partitioned record index, partitions this build does not read (secondary and expression indexes) and
 * the column stats of log files are not compared: each is named in `skipped`.
 */
import { UnsupportedTableError } from '../errors.js';
import { parseLogFileName } from '../log-format/index.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import type { TableConfig } from '../table/config.js';
import { joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import { HudiTable, listPartitions } from '../table/table.js';
import type { Timeline } from '../timeline/timeline.js';
import { columnStatsRecords1x, partitionStatsRecords1x } from './convert-1x.js';
import { readStoredFooter } from './footers.js';
import { latestSliceFileNames, MetadataTable1x, partitionStatsScope } from './metadata-table-1x.js';
import { columnStatsIndexVersion1x, readMetadataTable1x, recordIndexPartitioned1x } from './reader-1x.js';
import { compareRecordIndex, RECORD_INDEX_WITHOUT_META_FIELDS, type RecordIndexMismatch } from './record-index-check.js';
import { COLUMN_RANGE_FIELDS, type ColumnStatsMetadata, compareStatsValues, type MetadataRecord, type WrappedValue } from './records.js';
import { type MetadataTableVersion1x, metadataVersionFacts, UNREAD_1X_PARTITIONS } from './schema-1x.js';

const FOOTER_CONCURRENCY = 16;

/** check.ts's IndexMismatch, for the two 1.x partitions compared here. */
export interface IndexMismatch1x {
  readonly partition: 'column_stats' | 'partition_stats';
  readonly path: string;
  readonly column: string;
  readonly field: string;
  readonly inMetadata: string;
  readonly inFile: string;
}

export interface MetadataCheck1x {
  readonly missingFromMetadata: readonly string[];
  readonly missingFromStorage: readonly string[];
  readonly problems: readonly string[];
  readonly indexMismatches: readonly IndexMismatch1x[];
  /** Where `record_index` disagrees with the data, when the table has it (check.ts's report names the kinds). */
  readonly recordIndexMismatches: readonly RecordIndexMismatch[];
  /** What was not compared, and why, one sentence each. */
  readonly skipped: readonly string[];
}

export async function checkMetadataTable1x(storage: Storage, config: TableConfig): Promise<MetadataCheck1x | undefined> {
  const metadata = await MetadataTable1x.open(storage, config);
  if (metadata === undefined) return undefined;
  const version = config.version as MetadataTableVersion1x;
  const table = await HudiTable.open(storage);
  const problems = metadata.problems({ operation: 'check' }).map((p) => p.problem);
  const skipped: string[] = [];
  const unread = metadata.partitions.filter((name) => UNREAD_1X_PARTITIONS.some((prefix) => name === prefix || name.startsWith(prefix)));
  if (unread.length > 0) skipped.push(`metadata-table partition(s) ${unread.join(', ')}: not read by this build, so not compared with the data`);
  if (metadata.partitions.includes('bloom_filters')) skipped.push("bloom_filters: read, but not compared with the base files' footers");
  // A partitioned index maps keys within each data partition, so one key may be indexed once per partition.
  const partitionedRecordIndex = metadata.partitions.includes('record_index') && (await recordIndexPartitioned1x(storage));
  if (partitionedRecordIndex) skipped.push('record_index: partitioned (Hudi 1.1 hoodie.metadata.record.level.index.enable), which this build does not compare');
  let contents: Awaited<ReturnType<typeof readMetadataTable1x>>;
  try {
    contents = await readMetadataTable1x(storage, {
      completedDataInstants: new Set(table.timeline.completed().map((i) => i.time)),
      pendingDataInstants: new Set(table.timeline.pending().map((i) => i.time)),
    });
  } catch (error) {
    if (!(error instanceof UnsupportedTableError)) throw error;
    skipped.push(`files, column_stats, partition_stats and record_index: ${error.message}`);
    return { missingFromMetadata: [], missingFromStorage: [], problems, indexMismatches: [], recordIndexMismatches: [], skipped };
  }

  const listed = new Set<string>();
  for (const record of contents.partitions.get('files')?.values() ?? []) {
    if (record.type !== 2) continue;
    const partition = record.key === '.' ? '' : record.key;
    for (const [name, info] of record.files) if (!info.isDeleted && isDataFile(name)) listed.add(joinPartitionPath(partition, name));
  }
  const stored = new Set<string>();
  for (const partition of await listPartitions(storage)) {
    for (const file of partition.files) {
      const time = fileInstant(file.name);
      if (time !== undefined && table.timeline.isCommitted(time)) stored.add(joinPartitionPath(partition.partitionPath, file.name));
    }
  }
  const missingFromMetadata = [...stored].filter((path) => !listed.has(path)).sort();
  const missingFromStorage = [...listed].filter((path) => !stored.has(path)).sort();
  const both = [...listed].filter((path) => stored.has(path)).sort();
  const logs = both.filter((path) => !path.endsWith('.parquet')).length;
  if (logs > 0 && metadata.partitions.includes('column_stats')) skipped.push(`column_stats of ${logs} log file(s): their records are not read back to compare`);

  const indexMismatches: IndexMismatch1x[] = [];
  const columnStats = contents.partitions.get('column_stats');
  if (columnStats === undefined && contents.partitions.has('partition_stats'))
    skipped.push('partition_stats: compared with the files’ column stats, and this metadata table has no column_stats');
  if (columnStats !== undefined) {
    const indexVersion = await columnStatsIndexVersion1x(storage, version);
    if (indexVersion !== metadataVersionFacts(version).columnStatsIndexVersion) {
      skipped.push(
        `column_stats and partition_stats: the index is at version V${indexVersion}, whose records this build does not build for table version ${version}`,
      );
    } else {
      const bases = both.filter((path) => path.endsWith('.parquet'));
      const { mismatches, fromFooters } = await compareColumnStats(storage, columnStats, bases, version);
      indexMismatches.push(...mismatches);
      const partitionStats = contents.partitions.get('partition_stats');
      if (partitionStats !== undefined) {
        // A base file's ranges as its footer gives them (what Hudi computed them from), a log file's as column_stats holds them.
        const files = [...columnStatsOf(columnStats).filter((s) => s.fileName === null || !fromFooters.has(s.fileName)), ...[...fromFooters.values()].flat()];
        indexMismatches.push(...(await comparePartitionStats(table, files, partitionStats, listed, version)));
      }
    }
  }
  const recordIndexMismatches: RecordIndexMismatch[] = [];
  const recordIndex = contents.partitions.get('record_index');
  if (recordIndex !== undefined && !partitionedRecordIndex) {
    const compared = await compareRecordIndex(storage, recordIndex);
    if (compared === undefined) skipped.push(RECORD_INDEX_WITHOUT_META_FIELDS);
    else recordIndexMismatches.push(...compared);
  }
  return { missingFromMetadata, missingFromStorage, problems, indexMismatches, recordIndexMismatches, skipped };
}

/** A data file's instant: a base file's commit, or the delta commit that wrote a 1.x log file (its name's). */
function fileInstant(name: string): string | undefined {
  // Hadoop's checksum of a log file (`..<log file>.crc`) is no file of Hudi's.
  if (name.endsWith('.crc')) return undefined;
  const base = parseBaseFileName(name);
  if (base !== undefined) return base.instantTime;
  const log = parseLogFileName(name);
  return log !== undefined && log.suffix === '' ? log.baseInstant : undefined;
}

function isDataFile(name: string): boolean {
  return fileInstant(name) !== undefined;
}

function columnStatsOf(records: ReadonlyMap<string, MetadataRecord>): ColumnStatsMetadata[] {
  return [...records.values()].flatMap((record) => (record.type === 3 || record.type === 6 ? [record.columnStats] : []));
}

/** Each listed base file's column_stats records against those its footer gives now, for the columns the table indexes for it. */
async function compareColumnStats(
  storage: Storage,
  records: ReadonlyMap<string, MetadataRecord>,
  paths: readonly string[],
  version: MetadataTableVersion1x,
): Promise<{ mismatches: IndexMismatch1x[]; fromFooters: Map<string, ColumnStatsMetadata[]> }> {
  const byFile = new Map<string, ColumnStatsMetadata[]>();
  for (const stats of columnStatsOf(records)) {
    if (stats.fileName === null || stats.columnName === null) continue;
    byFile.set(stats.fileName, [...(byFile.get(stats.fileName) ?? []), stats]);
  }
  const mismatches: IndexMismatch1x[] = [];
  const fromFooters = new Map<string, ColumnStatsMetadata[]>();
  await mapWithConcurrency(paths, FOOTER_CONCURRENCY, async (path) => {
    const slash = path.lastIndexOf('/');
    const partition = slash < 0 ? '' : path.slice(0, slash);
    const name = path.slice(slash + 1);
    const held = byFile.get(name) ?? [];
    if (held.length === 0) return;
    const expected = columnStatsRecords1x(
      partition,
      name,
      await readStoredFooter(storage, path),
      held.map((s) => s.columnName!),
      version,
    );
    const fromFile = new Map(expected.flatMap((record) => (record.type === 3 ? [[record.columnStats.columnName, record.columnStats] as const] : [])));
    fromFooters.set(name, [...fromFile.values()]);
    for (const stats of held) {
      const file = fromFile.get(stats.columnName);
      for (const field of COLUMN_RANGE_FIELDS) {
        if (shown(stats[field]) !== shown(file?.[field]))
          mismatches.push({ partition: 'column_stats', path, column: stats.columnName!, field, inMetadata: shown(stats[field]), inFile: shown(file?.[field]) });
      }
    }
  });
  // The data's own columns before Hudi's meta columns: they say more to the reader of a report.
  const rank = (m: IndexMismatch1x) => (m.column.startsWith('_hoodie_') ? 1 : 0);
  mismatches.sort((a, b) => a.path.localeCompare(b.path) || rank(a) - rank(b) || a.column.localeCompare(b.column) || a.field.localeCompare(b.field));
  return { mismatches, fromFooters };
}

/**
 * partition_stats against `files`' column stats of each partition's latest file slices, as the release's writer
 * picks them (latestSliceFileNames). Hudi recomputes a partition's record only when a commit touches it, so its counts
 * and sizes may include files cleaned since: only the range is compared, as one that must hold the files' range.
 */
async function comparePartitionStats(
  table: HudiTable,
  files: readonly ColumnStatsMetadata[],
  partitionStats: ReadonlyMap<string, MetadataRecord>,
  listed: ReadonlySet<string>,
  version: MetadataTableVersion1x,
): Promise<IndexMismatch1x[]> {
  const stored = new Map(columnStatsOf(partitionStats).map((s) => [`${s.fileName}\u0000${s.columnName}`, s]));
  const scope = await partitionStatsScope(table, version);
  const timeline: Timeline = table.timeline;
  const partitions = new Set([...listed].map((path) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '')));
  const mismatches: IndexMismatch1x[] = [];
  for (const partition of [...partitions].sort()) {
    const latest = await latestSliceFileNames(table.storage, partition, timeline, '', scope);
    const ofPartition = files.filter((s) => s.fileName !== null && latest.has(s.fileName));
    for (const record of partitionStatsRecords1x(partition, ofPartition, version)) {
      if (record.type !== 6) continue;
      const want = record.columnStats;
      const have = stored.get(`${partition}\u0000${want.columnName}`);
      const column = want.columnName ?? '?';
      if (have === undefined) {
        mismatches.push({ partition: 'partition_stats', path: partition, column, field: 'missing', inMetadata: 'no record', inFile: 'a range' });
        continue;
      }
      const valueType = have.valueType ?? want.valueType;
      const outside = (held: WrappedValue | null, of: WrappedValue | null, sign: 1 | -1) =>
        of !== null && (held === null || compareStatsValues(of, held, valueType) * sign < 0);
      if (outside(have.minValue, want.minValue, 1))
        mismatches.push({
          partition: 'partition_stats',
          path: partition,
          column,
          field: 'minValue',
          inMetadata: shown(have.minValue),
          inFile: shown(want.minValue),
        });
      if (outside(have.maxValue, want.maxValue, -1))
        mismatches.push({
          partition: 'partition_stats',
          path: partition,
          column,
          field: 'maxValue',
          inMetadata: shown(have.maxValue),
          inFile: shown(want.maxValue),
        });
    }
  }
  return mismatches;
}

/** A value as text that compares equal across the decoder's and the builder's representations (bigint, bytes). */
function shown(value: unknown): string {
  return JSON.stringify(value ?? null, (_, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
  );
}
