/**
 * Checking a metadata table against the data table, and the repair when they disagree.
 *
 * Builds before the one instant-time grammar could not see metadata compactions at suffixed times longer than 20
 * digits (`<T>011001`), and appended their deltacommits to the slice such a compaction had superseded, where Hudi's
 * readers never look: those log files are "stranded". The check finds them, and independently compares the Parquet
 * files `files` lists with the committed ones on storage, `column_stats` and `bloom_filters` with their footers, and
 * `record_index` with the data's snapshot (each live key at the file group holding it, no key of a deleted record).
 * The repair is Hudi's own: drop the metadata table (hoodie.properties first, then the folder; readers go back to
 * listing storage), and the next Hudi writer with its default hoodie.metadata.enable=true rebuilds it from a listing.
 * A Hudi 1.x table's metadata table is checked by check-1x.ts.
 */
import { iterateLogBlocks, type LogFile } from '../log-format/index.js';
import { twosComplementToBigint, type WrappedValue } from '../log-format/value-wrappers.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { HUDI_1X_TABLE_VERSIONS, readTableConfig, type TableConfig } from '../table/config.js';
import { joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import { listPartitions } from '../table/table.js';
import { compareInstantTimes } from '../timeline/instant.js';
import { loadTimeline } from '../timeline/timeline.js';
import { checkMetadataTable1x } from './check-1x.js';
import { columnRangesFromFooter } from './column-stats.js';
import { applyMetadataTableWriteConfig } from './disable.js';
import { footerBloomFilterBytes, readStoredFooter } from './footers.js';
import { METADATA_ENABLE } from './keys.js';
import { MetadataTable, type MetadataTableReader } from './metadata-table.js';
import { compareRecordIndex, RECORD_INDEX_WITHOUT_META_FIELDS, type RecordIndexMismatch } from './record-index-check.js';
import {
  type BloomFilterMetadata,
  bloomFilterRecord,
  COLUMN_RANGE_FIELDS,
  type ColumnStatsMetadata,
  columnStatsRecord,
  deletedColumnRange,
} from './records.js';
import { METADATA_0X_TIMELINE_LAYOUT } from './timeline.js';

export type { RecordIndexMismatch, RecordLocation } from './record-index-check.js';

/** A log file of a superseded slice holding blocks written after the slice that replaced it began. */
export interface StrandedLogFile {
  readonly path: string;
  /** The slice it belongs to. */
  readonly baseInstant: string;
  /** The group's latest slice, the one readers merge. */
  readonly latestBaseInstant: string;
  /** The INSTANT_TIME of each block newer than the latest slice's base instant. */
  readonly instants: readonly string[];
}

export interface MetadataCheckReport {
  readonly stranded: readonly StrandedLogFile[];
  /** Committed Parquet base files on storage that `files` does not list (`partition/name`). */
  readonly missingFromMetadata: readonly string[];
  /** Parquet files `files` lists that are not on storage. */
  readonly missingFromStorage: readonly string[];
  /** Problems that keep this build from committing to it (MetadataTable.problems), as sentences. */
  readonly problems: readonly string[];
  /**
   * Where `column_stats` or `bloom_filters` disagree with a listed base file's footer (what the validator's
   * all-column-stats and bloom-filters checks compare), when the table has those partitions.
   */
  readonly indexMismatches: readonly IndexMismatch[];
  /** Where `record_index` disagrees with the data (what the validator's record-index check compares), when the table has it. */
  readonly recordIndexMismatches: readonly RecordIndexMismatch[];
  /** What was not compared on this table, and why (a 1.x table's partitions this build does not read, a record index without keys to read). */
  readonly skipped: readonly string[];
  readonly ok: boolean;
}

export interface IndexMismatch {
  readonly partition: 'column_stats' | 'bloom_filters' | 'partition_stats';
  /** The base file (`partition/name`), or the data partition for partition_stats. */
  readonly path: string;
  /** The column, for column_stats. */
  readonly column?: string;
  /** What differs: a field of the range, `missing` (no bloom filter record for the file), or `filter` (its bytes). */
  readonly field: string;
  readonly inMetadata: string;
  /** What the file's footer holds, or for partition_stats what the partition's latest files hold. */
  readonly inFile: string;
}

/** Footers read at once while comparing the indexes (each a ranged read or two on S3). */
const FOOTER_CONCURRENCY = 16;

/** Check the metadata table of the table at `storage`; undefined when the table has none. Reads only. */
export async function checkMetadataTable(storage: Storage): Promise<MetadataCheckReport | undefined> {
  const config = await readTableConfig(storage);
  if (HUDI_1X_TABLE_VERSIONS.includes(config.version)) {
    const report = await checkMetadataTable1x(storage, config);
    if (report === undefined) return undefined;
    return {
      ...report,
      stranded: [],
      ok:
        report.missingFromMetadata.length === 0 &&
        report.missingFromStorage.length === 0 &&
        report.problems.length === 0 &&
        report.indexMismatches.length === 0 &&
        report.recordIndexMismatches.length === 0,
    };
  }
  const table = await MetadataTable.open(storage, { config });
  if (table === undefined) return undefined;
  const problems = table.problems().map((p) => p.problem);
  const stranded: StrandedLogFile[] = [];
  for (const groups of table.fileGroups.values()) {
    for (const group of groups) {
      const latest = group.latest.baseInstant;
      for (const log of group.allLogFiles) {
        if (compareInstantTimes(log.name.baseInstant, latest) >= 0) continue;
        const instants = await blockInstantsAfter(storage, log, latest);
        if (instants.length > 0) stranded.push({ path: log.path, baseInstant: log.name.baseInstant, latestBaseInstant: latest, instants });
      }
    }
  }
  const missingFromMetadata: string[] = [];
  const missingFromStorage: string[] = [];
  const indexMismatches: IndexMismatch[] = [];
  const recordIndexMismatches: RecordIndexMismatch[] = [];
  const skipped: string[] = [];
  // The listing comparison needs a readable `files` partition; the problems say why when it is not.
  if (problems.length === 0) {
    const dataTimeline = await loadTimeline(storage, METADATA_0X_TIMELINE_LAYOUT);
    const reader = await table.reader(dataTimeline);
    const listed = new Set<string>();
    for (const partition of await reader.allPartitionPaths()) {
      for (const name of (await reader.filesInPartition(partition)).keys()) {
        if (parseBaseFileName(name) !== undefined) listed.add(joinPartitionPath(partition, name));
      }
    }
    const stored = new Set<string>();
    for (const partition of await listPartitions(storage)) {
      for (const file of partition.files) {
        const parsed = parseBaseFileName(file.name);
        if (parsed !== undefined && dataTimeline.isCommitted(parsed.instantTime)) stored.add(joinPartitionPath(partition.partitionPath, file.name));
      }
    }
    for (const path of stored) if (!listed.has(path)) missingFromMetadata.push(path);
    for (const path of listed) if (!stored.has(path)) missingFromStorage.push(path);
    const both = [...listed].filter((path) => stored.has(path) && path.endsWith('.parquet')).sort();
    indexMismatches.push(...(await compareIndexes(storage, table, reader, both)));
    if (table.fileGroups.has('record_index')) {
      const compared = await compareRecordIndex(storage, await reader.readPartition('record_index'));
      if (compared === undefined) skipped.push(RECORD_INDEX_WITHOUT_META_FIELDS);
      else recordIndexMismatches.push(...compared);
    }
  }
  return {
    stranded,
    missingFromMetadata: missingFromMetadata.sort(),
    missingFromStorage: missingFromStorage.sort(),
    problems,
    indexMismatches,
    recordIndexMismatches,
    skipped,
    ok:
      stranded.length === 0 &&
      missingFromMetadata.length === 0 &&
      missingFromStorage.length === 0 &&
      problems.length === 0 &&
      indexMismatches.length === 0 &&
      recordIndexMismatches.length === 0,
  };
}

/**
 * `column_stats` and `bloom_filters` against each base file's footer: the records a commit of that file would write
 * now (the same conversion as the writer's) against the merged records the table holds. Column stats are compared
 * for the columns the table indexes for that file (its records name them): a file without any (Hudi writes none for
 * a file of no rows) only reads less selectively. A file whose footer has a bloom filter the table lacks is missing.
 */
async function compareIndexes(storage: Storage, table: MetadataTable, reader: MetadataTableReader, paths: readonly string[]): Promise<IndexMismatch[]> {
  const wantStats = table.fileGroups.has('column_stats');
  const wantBloom = table.fileGroups.has('bloom_filters');
  if (paths.length === 0 || (!wantStats && !wantBloom)) return [];
  // Column stats by file name, keyed as the table keys them (partition, file, column); bloom filters by key.
  const stats = new Map<string, Map<string, ColumnStatsMetadata & { readonly columnName: string }>>();
  const blooms = new Map<string, BloomFilterMetadata>();
  if (wantStats) {
    for (const [key, record] of await reader.readPartition('column_stats')) {
      const held = record.type === 3 ? record.columnStats : undefined;
      const { fileName, columnName } = held ?? { fileName: null, columnName: null };
      if (held === undefined || fileName === null || columnName === null) continue;
      (stats.get(fileName) ?? stats.set(fileName, new Map()).get(fileName)!).set(key, { ...held, columnName });
    }
  }
  if (wantBloom) for (const [key, record] of await reader.readPartition('bloom_filters')) if (record.type === 4) blooms.set(key, record.bloomFilter);
  const mismatches: IndexMismatch[] = [];
  await mapWithConcurrency(paths, FOOTER_CONCURRENCY, async (path) => {
    const slash = path.lastIndexOf('/');
    const partitionPath = slash < 0 ? '' : path.slice(0, slash);
    const name = path.slice(slash + 1);
    const footer = await readStoredFooter(storage, path);
    if (wantStats) {
      const held = [...(stats.get(name) ?? [])].filter(
        ([key, held]) => key === columnStatsRecord(partitionPath, deletedColumnRange(name, held.columnName)).key,
      );
      const fromFile = new Map(
        columnRangesFromFooter(
          footer,
          name,
          held.map(([, record]) => record.columnName),
        ).map((range) => [range.columnName, range]),
      );
      for (const [, record] of held) {
        const expected = fromFile.get(record.columnName);
        for (const field of COLUMN_RANGE_FIELDS) {
          if (comparable(record[field]) !== comparable(expected?.[field]))
            mismatches.push({
              partition: 'column_stats',
              path,
              column: record.columnName,
              field,
              inMetadata: shown(record[field]),
              inFile: shown(expected?.[field]),
            });
        }
      }
    }
    if (wantBloom) {
      const held = blooms.get(bloomFilterRecord(partitionPath, name, '', undefined).key);
      const inFile = footerBloomFilterBytes(footer);
      if (held === undefined) {
        if (inFile !== undefined && blooms.size > 0)
          mismatches.push({ partition: 'bloom_filters', path, field: 'missing', inMetadata: 'no record', inFile: 'a bloom filter' });
      } else if (inFile === undefined || !sameBytes(held.bloomFilter, inFile.bytes)) {
        mismatches.push({
          partition: 'bloom_filters',
          path,
          field: 'filter',
          inMetadata: `${held.bloomFilter.length} bytes`,
          inFile: inFile === undefined ? 'none' : `${inFile.bytes.length} other bytes`,
        });
      }
    }
  });
  // The data's own columns before Hudi's meta columns: they say more to the reader of a report.
  const rank = (m: IndexMismatch) => (m.column?.startsWith('_hoodie_') ? 1 : 0);
  return mismatches.sort(
    (a, b) => a.path.localeCompare(b.path) || rank(a) - rank(b) || (a.column ?? '').localeCompare(b.column ?? '') || a.field.localeCompare(b.field),
  );
}

/**
 * A range's value as text that compares equal when Hudi's validator takes the values as equal: writers wrap one value
 * in different wrappers (Hudi 0.15 on Spark records a DATE column's day number in an IntWrapper and a decimal's
 * unscaled bytes in a BytesWrapper, where a footer read gives DateWrapper and DecimalWrapper), so numbers compare by
 * value and a decimal's unscaled bytes as the number they encode.
 */
function comparable(value: unknown): string {
  if (typeof value !== 'object' || value === null || !('type' in value)) return canonical(value);
  const wrapped = value as WrappedValue;
  switch (wrapped.type) {
    case 'decimal':
      return `number ${wrapped.unscaled}`;
    case 'bytes':
      return `number ${twosComplementToBigint(wrapped.value)}`;
    case 'int':
    case 'date':
    case 'long':
    case 'timeMicros':
    case 'timestampMicros':
      return `number ${BigInt(wrapped.value)}`;
    default:
      return canonical(wrapped.value);
  }
}

/** A value as text that compares equal across the decoder's and the writer's representations (bigint, bytes). */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
  );
}

/** A range's value for a person: a wrapped min or max as its bare value. */
function shown(value: unknown): string {
  const bare = typeof value === 'object' && value !== null && 'value' in value ? (value as { value: unknown }).value : value;
  return canonical(bare);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

async function blockInstantsAfter(storage: Storage, log: LogFile, latest: string): Promise<string[]> {
  const instants = new Set<string>();
  for (const block of iterateLogBlocks(await storage.get(log.path), storage.uriOf(log.path))) {
    if (block.type === 'CORRUPT_BLOCK') continue;
    const time = block.header.INSTANT_TIME;
    if (time !== undefined && compareInstantTimes(time, latest) > 0) instants.add(time);
  }
  return [...instants].sort(compareInstantTimes);
}

/**
 * Drop the metadata table (call under the table lock): what `hoodie.metadata.enable=false` on a Hudi write does,
 * through the same path a write with that key takes. Returns whether there was one to drop.
 */
export async function dropMetadataTable(storage: Storage, config: TableConfig): Promise<boolean> {
  const report = await applyMetadataTableWriteConfig(storage, config, new Map([[METADATA_ENABLE.key, 'false']]));
  return report.deletedMetadataTable;
}
