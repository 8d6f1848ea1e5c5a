/**
 * A data-table commit or clean as metadata-table records, as HoodieTableMetadataUtil.convertMetadataToRecords (Hudi
 * 0.14/0.15) and HoodieBackedTableMetadataWriter build them, per partition: `files` (partition list, per partition the
 * files added with their sizes), `bloom_filters` (each written base file's footer filter), `column_stats` (per written
 * file and indexed column, its range) and `record_index` (per record at a new location its location, per deleted key a
 * deletion). convertCommitMetadata and convertCleanMetadata say what each writes.
 */

import { BLOOM_FILTER_KEYS } from '../base-file/bloom-filter.js';
import { readKey } from '../config/index.js';
import { HudiError } from '../errors.js';
import type { ThriftStruct } from '../parquet/thrift.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import { META_FIELD_NAMES } from '../table/schema.js';
import type { HoodieCleanMetadata } from '../timeline/avro-files.js';
import type { CommitMetadata } from '../timeline/commit-metadata.js';
import { fileNameOf } from '../util/paths.js';
import { columnRangesFromFooter } from './column-stats.js';
import { footerBloomFilterBytes } from './footers.js';
import { bloomFilterIndexKey } from './hash-ids.js';
import { configuredColumnStatsColumns } from './keys.js';
import { type MetadataPartitionType, mapRecordKeyToFileGroupIndex, partitionIdentifier } from './partitions.js';
import {
  bloomFilterRecord,
  type ColumnRange,
  columnStatsRecord,
  deletedColumnRange,
  type MetadataRecord,
  partitionFilesRecord,
  partitionListRecord,
  type RecordIndexInfo,
  recordIndexInfo,
} from './records.js';

const FOOTER_CONCURRENCY = 16;

/** Where each record changed location in a commit, for the record index. */
export interface RecordIndexChanges {
  /** Records now in a file group they were not in before (inserts; moves by clustering). */
  readonly updates: Iterable<{ readonly recordKey: string; readonly partitionPath: string; readonly fileId: string }>;
  /** Keys no longer in the table. */
  readonly deletes: Iterable<string>;
}

/** A metadata-table record, or a deletion of a key (record index only; written as a delete block). */
export type MetadataChange = { readonly record: MetadataRecord } | { readonly deleteKey: string };

export interface ConvertContext {
  readonly instantTime: string;
  readonly partitions: ReadonlySet<MetadataPartitionType>;
  /** The footer of a written base file by its table path (only read when bloom_filters or column_stats is on). */
  readonly footer: (path: string, size: number) => Promise<ThriftStruct>;
  /** The user's Hudi write properties. */
  readonly properties?: ReadonlyMap<string, string>;
  /** hoodie.populate.meta.fields of the data table. */
  readonly populateMetaFields: boolean;
  /** Required when `partitions` has record_index. */
  readonly recordIndex?: RecordIndexChanges;
  /** The column ranges of each written log file, by its write stat's path (what the append handle collected). */
  readonly logColumnRanges?: ReadonlyMap<string, readonly ColumnRange[]>;
}

/**
 * The changes per metadata-table partition for one completed data instant.
 *
 * For a commit, deltacommit or replacecommit:
 * - `files`: the partition-list record naming every partition of the commit, and per partition a file-list record
 *   adding each written file with its size (the largest when a file appears twice). Replaced file groups stay listed:
 *   the clean that deletes them removes them.
 * - `bloom_filters`: per written base file, its footer's bloom filter, typed with the writer's
 *   hoodie.bloom.index.filter.type (DYNAMIC_V0), stamped with the instant. Files without a filter get none.
 * - `column_stats`: per written Parquet file and indexed column (columnsToIndex), the footer's range; per written log
 *   file, the ranges its append collected over its records (HoodieDeltaWriteStat's record stats, taken as they are by
 *   translateWriteStatToColumnStats).
 * - `record_index`: per record written to a new location (an insert, or a move by clustering) its location, and a
 *   deletion per deleted key (HoodieBackedTableMetadataWriter.getRecordIndexUpserts).
 */
export async function convertCommitMetadata(metadata: CommitMetadata, context: ConvertContext): Promise<Map<MetadataPartitionType, MetadataChange[]>> {
  const streamed = streamCommitMetadata(metadata, context);
  const out = new Map<MetadataPartitionType, MetadataChange[]>();
  for (const [partition, changes] of streamed) {
    if (changes instanceof Promise) out.set(partition, await changes);
    else {
      const settled: MetadataChange[] = [];
      for (const change of changes) {
        if (!('pending' in change)) settled.push(change);
        else {
          const record = await change.pending;
          if (record !== undefined) settled.push({ record });
        }
      }
      out.set(partition, settled);
    }
  }
  return out;
}

/** A record still being read (a base file's bloom filter): its key now, the record (none without a filter) later. */
export interface PendingChange {
  readonly key: string;
  readonly pending: Promise<MetadataRecord | undefined>;
}

/**
 * A partition's changes as they become known: at once (files, record_index), one pending record per base file
 * (bloom_filters), or the whole list once every footer is read (column_stats).
 */
export type StreamedChanges = readonly (MetadataChange | PendingChange)[] | Promise<MetadataChange[]>;

/** What one footer gives the metadata table; the footer itself is dropped once read. */
interface FooterFacts {
  readonly bloom: { typeCode: string; bytes: Uint8Array } | undefined;
  readonly ranges: readonly ColumnRange[];
}

/**
 * convertCommitMetadata's changes without waiting for the footers: they are read in the background, in the order
 * of the bloom_filters file groups their filters go to (`bloomFileGroups` of them), so the writer can encode a file
 * group's filters while the next group's footers are read. The same records, in the same order, as
 * convertCommitMetadata. Every pending promise is handled: a failed read rejects those awaiting it, nothing else.
 */
export function streamCommitMetadata(
  metadata: CommitMetadata,
  context: ConvertContext & { readonly bloomFileGroups?: number },
): Map<MetadataPartitionType, StreamedChanges> {
  const recordIndex = context.partitions.has('record_index') ? context.recordIndex : undefined;
  if (context.partitions.has('record_index') && recordIndex === undefined) {
    throw new HudiError("the table has the metadata table's record index, and this commit did not say where its records went", {
      fix: 'this is a bug in the commit path: pass the record-index changes to the metadata-table commit',
    });
  }
  const out = new Map<MetadataPartitionType, StreamedChanges>();
  const stats = Object.entries(metadata.partitionToWriteStats).flatMap(([partition, list]) => list.map((stat) => ({ partition, stat })));

  out.set(
    'files',
    commitFilesRecords(metadata).map((record) => ({ record })),
  );

  const baseFiles = stats
    .filter(({ stat }) => stat.path !== null && isBaseFile(fileNameOf(stat.path)))
    .map(({ partition, stat }) => {
      const name = fileNameOf(stat.path!);
      const partitionPath = stat.partitionPath ?? partition;
      return { partitionPath, name, path: stat.path!, size: stat.fileSizeInBytes, bloomKey: bloomFilterIndexKey(partitionIdentifier(partitionPath), name) };
    });
  const wantBloom = context.partitions.has('bloom_filters');
  const wantStats = context.partitions.has('column_stats');
  if (wantBloom || wantStats) {
    const bloomType = readKey(context.properties ?? new Map<string, string>(), BLOOM_FILTER_KEYS.type, 'write properties');
    const columns = wantStats ? columnsToIndex(metadata, context) : [];
    const facts = readFooterFacts(baseFiles, context, wantBloom, wantStats ? columns : []);
    if (wantBloom) {
      out.set(
        'bloom_filters',
        baseFiles.map(({ partitionPath, name, bloomKey }, index) => ({
          key: bloomKey,
          pending: handled(
            facts[index]!.then(({ bloom }) =>
              bloom === undefined ? undefined : bloomFilterRecord(partitionPath, name, context.instantTime, { type: bloomType, serialized: bloom.bytes }),
            ),
          ),
        })),
      );
    }
    if (wantStats) {
      out.set(
        'column_stats',
        handled(
          Promise.all(facts).then((all) => {
            const ranges: MetadataChange[] = [];
            if (columns.length === 0) return ranges;
            for (const [index, { partitionPath }] of baseFiles.entries()) {
              for (const range of all[index]!.ranges) ranges.push({ record: columnStatsRecord(partitionPath, range) });
            }
            for (const { partition, stat } of stats) {
              const logRanges = stat.path === null ? undefined : context.logColumnRanges?.get(stat.path);
              // The writer collects every field's range; the indexed columns are kept, in the writer schema's order.
              for (const range of logRanges ?? []) {
                if (columns.includes(range.columnName)) ranges.push({ record: columnStatsRecord(stat.partitionPath ?? partition, range) });
              }
            }
            return ranges;
          }),
        ),
      );
    }
  }

  if (recordIndex !== undefined) out.set('record_index', recordIndexChanges(recordIndex, context.instantTime));
  return out;
}

/**
 * Each base file's footer facts, read FOOTER_CONCURRENCY at a time in the order the writer takes the bloom_filters
 * file groups (the order their first file appears in), each footer reduced to its facts as it is read.
 */
function readFooterFacts(
  files: readonly { readonly path: string; readonly size: number; readonly name: string; readonly bloomKey: string }[],
  context: ConvertContext & { readonly bloomFileGroups?: number },
  wantBloom: boolean,
  columns: readonly string[],
): Promise<FooterFacts>[] {
  const settle = files.map(() => ({ resolve: (_: FooterFacts) => {}, reject: (_: unknown) => {} }));
  const facts = files.map((_, index) => handled(new Promise<FooterFacts>((resolve, reject) => (settle[index] = { resolve, reject }))));
  const groupCount = context.bloomFileGroups ?? 0;
  const rankOfGroup = new Map<number, number>();
  const rank = files.map(({ bloomKey }) => {
    if (groupCount === 0) return 0;
    const group = mapRecordKeyToFileGroupIndex(bloomKey, groupCount);
    if (!rankOfGroup.has(group)) rankOfGroup.set(group, rankOfGroup.size);
    return rankOfGroup.get(group)!;
  });
  const order = files.map((_, index) => index).sort((a, b) => rank[a]! - rank[b]! || a - b);
  mapWithConcurrency(order, FOOTER_CONCURRENCY, async (index) => {
    const { path, size, name } = files[index]!;
    try {
      const footer = await context.footer(path, size);
      settle[index]!.resolve({
        bloom: wantBloom ? footerBloomFilterBytes(footer) : undefined,
        ranges: columns.length > 0 && name.endsWith('.parquet') ? columnRangesFromFooter(footer, name, columns) : [],
      });
    } catch (error) {
      settle[index]!.reject(error);
      throw error;
    }
  }).catch((error: unknown) => {
    // No read starts after a failure: the footers not read fail with it.
    for (const { reject } of settle) reject(error);
  });
  return facts;
}

/** `promise`, marked handled: a rejection nobody awaits (the writer stopped at an earlier failure) is not fatal. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * convertMetadataToFilesPartitionRecords (0.14/0.15, and unchanged in 1.0.2 and 1.1.1): the partition-list record
 * naming every partition of the commit, and per partition a file-list record adding each written file with its
 * size (the largest when a file appears twice) and its CDC files.
 */
export function commitFilesRecords(metadata: CommitMetadata): MetadataRecord[] {
  const records: MetadataRecord[] = [partitionListRecord(Object.keys(metadata.partitionToWriteStats))];
  for (const [partition, list] of Object.entries(metadata.partitionToWriteStats)) {
    const sizes = new Map<string, number>();
    for (const stat of list) {
      if (stat.path === null) continue;
      const name = fileNameOf(stat.path);
      sizes.set(name, Math.max(sizes.get(name) ?? 0, stat.fileSizeInBytes));
      for (const [cdcPath, size] of Object.entries(stat.cdcStats ?? {})) sizes.set(fileNameOf(cdcPath), size);
    }
    records.push(partitionFilesRecord(partition, sizes));
  }
  return records;
}

/** Hudi's FSUtils.isBaseFile for the formats a table can have: Parquet, ORC, HFile. */
function isBaseFile(name: string): boolean {
  return !name.startsWith('.') && /\.(parquet|orc|hfile)$/.test(name);
}

/**
 * getColumnsToIndex: the configured list, else the writer schema's fields (meta fields first when populated).
 *
 * hoodie.metadata.index.column.stats.column.list, or else every field of the commit's writer schema, meta fields first
 * when the table populates them.
 */
export function columnsToIndex(metadata: CommitMetadata, context: Pick<ConvertContext, 'properties' | 'populateMetaFields'>): string[] {
  const configured = configuredColumnStatsColumns(context.properties);
  if (configured.length > 0) return [...configured];
  const schemaText = metadata.extraMetadata['schema'];
  if (schemaText === undefined || schemaText === '') return [];
  let schema: { fields?: { name: string }[] };
  try {
    schema = JSON.parse(schemaText) as { fields?: { name: string }[] };
  } catch (cause) {
    throw new HudiError("the commit's writer schema is not JSON", { fix: 'this is a bug in the commit metadata', cause });
  }
  const fields = (schema.fields ?? []).map((f) => f.name);
  // HoodieAvroUtils.addMetadataFields: the meta fields, then the others.
  if (!context.populateMetaFields) return fields;
  const meta: readonly string[] = META_FIELD_NAMES;
  return [...meta, ...fields.filter((f) => !meta.includes(f))];
}

/** Record-index records: deletions, then locations (a key both deleted and written lives on, at its new place). */
export function recordIndexChanges(changes: RecordIndexChanges, instantTime: string): MetadataChange[] {
  const updates = new Map<string, MetadataRecord>();
  // A commit's records go to few file groups: each location is built once and shared by its records.
  const locations = new Map<string, RecordIndexInfo>();
  for (const { recordKey, partitionPath, fileId } of changes.updates) {
    const at = `${partitionPath}\u0000${fileId}`;
    let recordIndex = locations.get(at);
    if (recordIndex === undefined) locations.set(at, (recordIndex = recordIndexInfo(partitionPath, fileId, instantTime)));
    updates.set(recordKey, { key: recordKey, type: 5, recordIndex });
  }
  const out: MetadataChange[] = [];
  const deleted = new Set<string>();
  for (const key of changes.deletes) {
    if (updates.has(key) || deleted.has(key)) continue;
    deleted.add(key);
    out.push({ deleteKey: key });
  }
  for (const record of updates.values()) out.push({ record });
  return out;
}

export interface ConvertCleanContext {
  readonly instantTime: string;
  readonly partitions: ReadonlySet<MetadataPartitionType>;
  readonly properties?: ReadonlyMap<string, string>;
  readonly populateMetaFields: boolean;
  /** The table's Avro schema (TableSchemaResolver's): its fields are the indexed columns unless a list is configured. */
  readonly tableSchemaText?: string;
}

/**
 * The changes per metadata-table partition for one clean.
 *
 * As convertMetadataToRecords(HoodieCleanMetadata): per cleaned partition a file-list record deleting its
 * deletePathPatterns (the partition list names only partitions the clean removed, as deleted); a bloom_filters
 * tombstone per cleaned base file (type "", no bytes, stamped with the clean); a column_stats tombstone per cleaned
 * Parquet file and indexed column (HoodieColumnRangeMetadata.stub: no values, counts -1). The record index is not
 * touched.
 */
export function convertCleanMetadata(metadata: HoodieCleanMetadata, context: ConvertCleanContext): Map<MetadataPartitionType, MetadataChange[]> {
  const out = new Map<MetadataPartitionType, MetadataChange[]>();
  const cleaned = Object.entries(metadata.partitionMetadata).map(([partition, entry]) => ({
    partition,
    files: entry.deletePathPatterns,
    removed: entry.isPartitionDeleted,
  }));
  const files: MetadataChange[] = cleaned.map(({ partition, files: names }) => ({ record: partitionFilesRecord(partition, new Map(), names) }));
  const removed = cleaned.filter((entry) => entry.removed).map((entry) => entry.partition);
  if (removed.length > 0) files.push({ record: partitionListRecord(removed, true) });
  out.set('files', files);

  if (context.partitions.has('bloom_filters')) {
    out.set(
      'bloom_filters',
      cleaned.flatMap(({ partition, files: names }) =>
        names
          .map(fileNameOf)
          .filter(isBaseFile)
          .map((name) => ({ record: bloomFilterRecord(partition, name, context.instantTime, undefined, true) })),
      ),
    );
  }
  if (context.partitions.has('column_stats')) {
    const schema: Record<string, string> = context.tableSchemaText === undefined ? {} : { schema: context.tableSchemaText };
    const columns = columnsToIndex({ partitionToWriteStats: {}, compacted: false, extraMetadata: schema, operationType: null }, context);
    out.set(
      'column_stats',
      cleaned.flatMap(({ partition, files: names }) =>
        names
          .filter((name) => name.endsWith('.parquet'))
          .flatMap((name) => columns.map((column) => ({ record: columnStatsRecord(partition, deletedColumnRange(fileNameOf(name), column), true) }))),
      ),
    );
  }
  return out;
}
