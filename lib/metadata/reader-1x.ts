/**
 * Reading a Hudi 1.x metadata table (table versions 8 and 9) as HoodieBackedTableMetadata does: a merge-on-read
 * table with timeline layout 2 (`.hoodie/metadata/.hoodie/timeline/`), whose log files, named by the delta commit
 * that wrote them, join file slices by completion time (lib/table/file-group.ts, with HFile base files). Per file
 * group the latest merged slice at or before the last completed metadata instant is read and merged with
 * HoodieMetadataPayload's rules (records.ts); which blocks count is readSlice's and validInstants'.
 *
 * Only files, column_stats, partition_stats, bloom_filters and record_index are read: any other partition, record type or value
 * wrapper is refused by name, as is a pending metadata-table compaction (its plan is not read).
 */
import { HudiError, UnsupportedTableError } from '../errors.js';
import { readHudiHFile } from '../hfile/index.js';
import { iterateLogBlocks, type LogBlock, readCommandBlock, readDeleteBlock } from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import { latestQueryInstant, sliceByCompletionTime } from '../table/file-group.js';
import type { MergedFileSlice } from '../table/file-system-view.js';
import { CompletionTimes } from '../timeline/completion-times.js';
import { historyCompletionTimes, readTimelineHistory } from '../timeline/history/index.js';
import { compareInstantTimes } from '../timeline/instant.js';
import { timelineLayout2 } from '../timeline/layout.js';
import { loadTimeline, type Timeline } from '../timeline/timeline.js';
import { fileNameOf } from '../util/paths.js';
import { decodeMetadataRecord } from './codec.js';
import { isDeletedRecord, isTombstone, type MergedRecord, type MetadataRecord, mergeRecords } from './records.js';
import { metadataRecordTypeOf } from './schema.js';
import { METADATA_1X_PARTITIONS, METADATA_1X_VERSIONS, type Metadata1xPartition, type MetadataTableVersion1x, metadata1xPartitionOf } from './schema-1x.js';
import { METADATA_TABLE_FOLDER, METADATA_TABLE_METAFOLDER } from './timeline.js';

/** hoodie.timeline.path of the metadata table: Hudi creates it with the default. */
export const METADATA_1X_TIMELINE_FOLDER = `${METADATA_TABLE_METAFOLDER}/timeline`;

/**
 * When the metadata table's instants completed: the active timeline's, and the LSM history's for instants Hudi
 * archived whose log files are still in a retained slice (`hoodie.timeline.history.path` defaults to `history`).
 */
export async function metadataCompletionTimes1x(storage: Storage, timeline: Timeline): Promise<CompletionTimes> {
  const folder = `${METADATA_1X_TIMELINE_FOLDER}/history`;
  return new CompletionTimes(timeline, historyCompletionTimes(await readTimelineHistory(storage, folder)), storage.uriOf(folder));
}

export async function loadMetadataTimeline1x(storage: Storage): Promise<Timeline> {
  // Metadata-table instant times are generated like the data table's; only their order and equality matter here.
  return loadTimeline(storage, timelineLayout2(METADATA_1X_TIMELINE_FOLDER, 'UTC'));
}

/** Where Hudi 1.x keeps its index definitions (HoodieTableMetaClient.getIndexDefinitionPath, the default). */
export const INDEX_DEFINITIONS_PATH = '.hoodie/.index_defs/index.json';

/**
 * The column-stats index version of a 1.x table (HoodieTableMetadataUtil.existingIndexVersionOrDefault): the
 * `column_stats` index definition's `version` ("V1", "V2"), else the table version's default (HoodieIndexVersion
 * .getCurrentVersion). A table upgraded from version 8 to 9 can keep V1, which the version-9 producers do not write:
 * callers compare this with metadataVersionFacts(tableVersion).columnStatsIndexVersion before producing records.
 */
export async function columnStatsIndexVersion1x(storage: Storage, tableVersion: MetadataTableVersion1x): Promise<1 | 2> {
  const fallback = METADATA_1X_VERSIONS[tableVersion].columnStatsIndexVersion;
  const version = (await readIndexDefinitions1x(storage))?.['column_stats']?.version;
  if (version === undefined) return fallback;
  if (version === 'V1' || version === 'V2') return version === 'V1' ? 1 : 2;
  throw new UnsupportedTableError(`the column_stats index definition has version ${version}, which this build does not know`, {
    location: storage.uriOf(INDEX_DEFINITIONS_PATH),
    fix: 'read the table with the Hudi that wrote it',
  });
}

/**
 * Whether the record_index definition says the index is partitioned (Hudi 1.1's HoodieRecordIndex.isPartitioned:
 * the `isPartitioned` index option, "false" when absent; 1.0.2 writes no record_index definition).
 */
export async function recordIndexPartitioned1x(storage: Storage): Promise<boolean> {
  const options = (await readIndexDefinitions1x(storage))?.['record_index']?.indexOptions;
  return String(options?.['isPartitioned'] ?? 'false').toLowerCase() === 'true';
}

interface IndexDefinition1x {
  readonly version?: string;
  readonly indexOptions?: Readonly<Record<string, unknown>>;
}

/** The index definitions by index name, or undefined when the table has none. */
async function readIndexDefinitions1x(storage: Storage): Promise<Readonly<Record<string, IndexDefinition1x>> | undefined> {
  if ((await storage.head(INDEX_DEFINITIONS_PATH)) === undefined) return undefined;
  const text = Buffer.from(await storage.get(INDEX_DEFINITIONS_PATH)).toString('utf8');
  try {
    const parsed = JSON.parse(text) as { indexDefinitions?: Record<string, IndexDefinition1x> };
    return parsed.indexDefinitions ?? {};
  } catch (cause) {
    throw new HudiError('the index definitions are not JSON', {
      location: storage.uriOf(INDEX_DEFINITIONS_PATH),
      fix: 'repair or remove the file with Hudi',
      cause,
    });
  }
}

export interface Metadata1xReadOptions {
  /** The data table's completed instants. */
  readonly completedDataInstants: ReadonlySet<string>;
  /** The data table's requested and inflight instants: a metadata deltacommit of one of them does not count. */
  readonly pendingDataInstants: ReadonlySet<string>;
  /** What the data table's completed rollbacks and restores rolled back (getRollbackedCommits); default none. */
  readonly rolledBackDataInstants?: ReadonlySet<string>;
}

export interface Metadata1xContents {
  /** The metadata timeline's last completed instant the read stopped at (undefined: nothing completed). */
  readonly queryInstant: string | undefined;
  /** Per partition present, every live record by key (deletions applied). */
  readonly partitions: ReadonlyMap<Metadata1xPartition, ReadonlyMap<string, MetadataRecord>>;
}

/** Every record of a 1.x metadata table, per partition, as Hudi reads them. */
export async function readMetadataTable1x(storage: Storage, options: Metadata1xReadOptions): Promise<Metadata1xContents> {
  const timeline = await loadMetadataTimeline1x(storage);
  const location = storage.uriOf(METADATA_1X_TIMELINE_FOLDER);
  const pendingCompaction = timeline.pending().find((instant) => instant.action === 'compaction' || instant.action === 'logcompaction');
  if (pendingCompaction !== undefined) {
    throw new UnsupportedTableError(
      `the metadata table has a pending ${pendingCompaction.action} ${pendingCompaction.time}, whose plan this build does not read`,
      {
        location,
        fix: 'let Hudi finish the metadata-table compaction (the next Hudi write does), then read again',
      },
    );
  }
  const completionTimes = await metadataCompletionTimes1x(storage, timeline);
  const queryInstant = latestQueryInstant(timeline);
  const completedAtOrBefore = (time: string): boolean =>
    queryInstant !== undefined && completionTimes.isCompleted(time) && compareInstantTimes(time, queryInstant) <= 0;
  const valid = validInstants1x(timeline, options);

  const { dirs } = await storage.listDir(METADATA_TABLE_FOLDER);
  const partitions = new Map<Metadata1xPartition, ReadonlyMap<string, MetadataRecord>>();
  for (const dir of dirs.map((d) => fileNameOf(d.replace(/\/$/, ''))).sort()) {
    if (dir === '.hoodie') continue;
    const partition = metadata1xPartitionOf(dir, storage.uriOf(`${METADATA_TABLE_FOLDER}/${dir}`));
    const folder = `${METADATA_TABLE_FOLDER}/${dir}`;
    const listing = (await storage.listDir(folder)).files.map((file) => ({ name: fileNameOf(file.path), size: file.size }));
    const { merged } = sliceByCompletionTime(
      {
        partitionPath: folder,
        files: listing.filter(
          (file) => file.name.startsWith(METADATA_1X_PARTITIONS[partition].prefix) || file.name.startsWith(`.${METADATA_1X_PARTITIONS[partition].prefix}`),
        ),
      },
      { timeline, completionTimes, queryInstant, replacedFileGroups: new Set(), pendingCompactions: new Map(), baseFileExtension: 'hfile' },
    );
    const records = new Map<string, MetadataRecord>();
    for (const slice of merged) {
      for (const [key, record] of await readSlice(storage, partition, slice, (time) => completedAtOrBefore(time) && valid.has(time))) {
        // A column-stats or bloom-filter tombstone (a clean's) reads as absent, as HoodieMetadataPayload.getInsertValue has it.
        if (!isDeletedRecord(record) && !isTombstone(record)) records.set(key, record);
      }
    }
    partitions.set(partition, records);
  }
  return { queryInstant, partitions };
}

/**
 * HoodieTableMetadataUtil.getValidInstantTimestamps (the same in 1.0.2 and 1.1.1): completed data instants; every
 * completed metadata deltacommit whose instant is not pending on the data table (isValidInstant: the metadata table
 * commits first, so a data write that failed after it leaves a deltacommit that must not count); what data
 * rollbacks and restores rolled back; the metadata table's own completed rollbacks and restores; and its
 * initializations (deltacommits `00000000000000` plus milliseconds).
 */
export function validInstants1x(timeline: Timeline, options: Metadata1xReadOptions): Set<string> {
  const valid = new Set([...options.completedDataInstants, ...(options.rolledBackDataInstants ?? [])]);
  for (const instant of timeline.completed()) {
    // Initializations (`00000000000000…`) are never data instants, so this takes them too.
    if (instant.action === 'deltacommit' && !options.pendingDataInstants.has(instant.time)) valid.add(instant.time);
    if (instant.action === 'rollback' || instant.action === 'restore') valid.add(instant.time);
  }
  return valid;
}

/** One counted log block of a slice: its records, or the keys it deletes. */
export type SliceBlock1x =
  | { readonly kind: 'records'; readonly records: readonly MetadataRecord[] }
  | { readonly kind: 'deletes'; readonly keys: readonly string[] };

/** What one file slice holds, as HoodieMergedLogRecordScanner hands it to a merge: the base file's records and the counted log blocks. */
export interface SliceInputs1x {
  /** The HFile base file's records, in key order (none when the slice has no base file). */
  readonly base: readonly MetadataRecord[];
  /** The counted data and delete blocks, in log order, rolled-back ones removed. */
  readonly blocks: readonly SliceBlock1x[];
  /** Log records read from the counted blocks (data records and deleted keys). */
  readonly logRecords: number;
  readonly corruptBlocks: number;
  readonly rollbackBlocks: number;
}

/**
 * One file slice's inputs. A data or delete block counts when `counts(INSTANT_TIME)`: completed at or before the
 * query instant (a newer one is skipped, not an end: layout 2's scanInternalV1) and valid; a rollback command block
 * drops the queued blocks of its target.
 */
export async function readSliceInputs1x(
  storage: Storage,
  partition: Metadata1xPartition,
  slice: Pick<MergedFileSlice, 'baseFile' | 'logFiles'>,
  counts: (time: string) => boolean,
): Promise<SliceInputs1x> {
  const check = (record: MetadataRecord, location: string): MetadataRecord => {
    if (!(METADATA_1X_PARTITIONS[partition].recordTypes as readonly number[]).includes(record.type)) {
      throw new UnsupportedTableError(`metadata-table record ${record.key} of type ${record.type} is in the ${partition} partition`, {
        location,
        fix: 'the metadata table is not one Hudi 1.0/1.1 wrote; rebuild it with Hudi',
      });
    }
    return record;
  };
  const base: MetadataRecord[] = [];
  if (slice.baseFile !== undefined) {
    const location = storage.uriOf(slice.baseFile.path);
    const hfile = readHudiHFile(await storage.get(slice.baseFile.path));
    const type = metadataRecordTypeOf(hfile.schema ?? '');
    for (const record of hfile.records) base.push(check(decodeMetadataRecord(record.value, record.key, type), location));
  }
  const queue: { block: LogBlock; location: string }[] = [];
  let corruptBlocks = 0;
  let rollbackBlocks = 0;
  for (const file of slice.logFiles) {
    const location = storage.uriOf(file.path);
    for (const block of iterateLogBlocks(await storage.get(file.path), location)) {
      if (block.type === 'CORRUPT_BLOCK') {
        corruptBlocks += 1;
        continue;
      }
      const time = block.header.INSTANT_TIME;
      if (time === undefined || !counts(time)) continue;
      if (block.type === 'COMMAND_BLOCK') {
        rollbackBlocks += 1;
        const target = readCommandBlock(block, location).targetInstantTime;
        for (let i = queue.length - 1; i >= 0; i--) if (queue[i]!.block.header.INSTANT_TIME === target) queue.splice(i, 1);
        continue;
      }
      queue.push({ block, location });
    }
  }
  const blocks: SliceBlock1x[] = [];
  let logRecords = 0;
  for (const { block, location } of queue) {
    switch (block.type) {
      case 'HFILE_DATA_BLOCK': {
        const hfile = readHudiHFile(block.content);
        const type = metadataRecordTypeOf(block.header.SCHEMA ?? hfile.schema ?? '');
        const records = hfile.records.map((record) => check(decodeMetadataRecord(record.value, record.key, type), location));
        logRecords += records.length;
        blocks.push({ kind: 'records', records });
        break;
      }
      case 'DELETE_BLOCK': {
        const keys = readDeleteBlock(block).flatMap((deleted) => (deleted.recordKey === null ? [] : [deleted.recordKey]));
        logRecords += keys.length;
        blocks.push({ kind: 'deletes', keys });
        break;
      }
      default:
        throw new UnsupportedTableError(`metadata-table log block of type ${block.type} is not one Hudi 1.x writes into ${partition}`, {
          location,
          fix: 'compact the metadata table with Hudi',
        });
    }
  }
  return { base, blocks, logRecords, corruptBlocks, rollbackBlocks };
}

/**
 * One merged file slice: the log blocks' records merged among themselves (a delete then a record leaves the record),
 * then onto the HFile base file's (HoodieMergedLogRecordScanner, then the base-file merge).
 */
async function readSlice(
  storage: Storage,
  partition: Metadata1xPartition,
  slice: MergedFileSlice,
  counts: (time: string) => boolean,
): Promise<Map<string, MergedRecord>> {
  const inputs = await readSliceInputs1x(storage, partition, slice, counts);
  const base = new Map<string, MergedRecord>(inputs.base.map((record) => [record.key, record]));
  const logs = new Map<string, MergedRecord>();
  for (const block of inputs.blocks) {
    if (block.kind === 'records') for (const record of block.records) logs.set(record.key, mergeRecords(logs.get(record.key), record));
    else for (const key of block.keys) logs.set(key, { key, deleted: true });
  }
  for (const [key, record] of logs) base.set(key, mergeRecords(base.get(key), record));
  return base;
}
