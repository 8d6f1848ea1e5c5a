/**
 * What differs between the metadata tables of Hudi 1.0.x (table version 8) and 1.1.x (table version 9), in one
 * place: the record schema, the column-stats index version (HoodieIndexVersion.getCurrentVersion: V1 below table
 * version 9, V2 from it, for column_stats and partition_stats together), and the partitions Spark's writers turn on
 * by default (HoodieMetadataConfig.Builder.build). Everything else of the 1.x record layer is the same for both.
 */
import type avro from 'avsc';
import type { BloomFilterOptions } from '../base-file/bloom-filter.js';
import { UnsupportedTableError } from '../errors.js';
import { avroType } from '../log-format/index.js';
import { METADATA_RECORD_SCHEMA_TEXT_V8, METADATA_RECORD_SCHEMA_TEXT_V9 } from './schema-1x-text.js';

export type MetadataTableVersion1x = 8 | 9;

/**
 * The partitions of a 1.x metadata table, with their file-id prefixes and default file-group counts
 * (MetadataPartitionType, HoodieMetadataConfig *_FILE_GROUP_COUNT). Only these are read and written here; the others
 * are known by name so that a table holding one is refused by it.
 */
export const METADATA_1X_PARTITIONS = {
  files: { prefix: 'files-', recordTypes: [1, 2], defaultFileGroups: 1 },
  column_stats: { prefix: 'col-stats-', recordTypes: [3], defaultFileGroups: 2 },
  bloom_filters: { prefix: 'bloom-filters-', recordTypes: [4], defaultFileGroups: 4 },
  partition_stats: { prefix: 'partition-stats-', recordTypes: [6], defaultFileGroups: 1 },
  // Hudi sizes it when it builds the partition (estimateFileGroupCount, min 10 by default); we keep Spark's groups.
  record_index: { prefix: 'record-index-', recordTypes: [5], defaultFileGroups: 10 },
} as const;
export type Metadata1xPartition = keyof typeof METADATA_1X_PARTITIONS;

/** Partitions (or partition-name prefixes) Hudi 1.x may create that this build does not read. */
export const UNREAD_1X_PARTITIONS = ['secondary_index_', 'expr_index_'] as const;

/**
 * The shapes of a 1.x metadata table (or of a write to one) that this build reads or keeps only in part, refused by
 * name before anything is written: the one place the refusals of the 1.x record layer are listed.
 */
export const REFUSED_1X_SHAPES = {
  /**
   * Hudi 1.1's partitioned record index (hoodie.metadata.record.level.index.enable; the record_index definition's
   * isPartitioned option): file groups per data partition, keys mapped within their partition. Not kept here.
   */
  partitionedRecordIndex: {
    problem: 'the record_index partition is partitioned (Hudi 1.1 hoodie.metadata.record.level.index.enable), which this build does not keep',
    fix: 'keep writing this table with Hudi 1.1, or rebuild the record index unpartitioned (hoodie.metadata.record.index.enable=true)',
  },
  /**
   * Inserts in data log files on a table with record_index: Hudi 1.0.2 and 1.1.1 fail a commit whose log write stat
   * counts inserts ("RLI cannot support logs having inserts"), and the bucket index counts them as updates, which
   * leaves them out of the index. Our merge-on-read writes put inserts in logs with the bucket index only.
   */
  recordIndexLogInserts: {
    problem:
      'a merge-on-read write with the bucket index puts inserts in log files, which Hudi does not index in the record_index partition (it refuses logs with inserts)',
    fix: 'run this write with Hudi 1.x, or turn the record index off (hoodie.metadata.record.index.enable=false)',
  },
  /**
   * A log write stat naming earlier log files of its slice (a 1.x CDC table's): Hudi then merges them with the new one
   * to find revived and deleted keys (getRevivedAndDeletedKeysFromMergedLogs), which this build does not do.
   */
  recordIndexMergedLogs: {
    problem:
      'a log file whose write stat names earlier log files of its slice on a table with the record_index partition (Hudi merges them to find revived and deleted keys), which this build does not do',
    fix: 'run this write with Hudi 1.x, or turn the record index off (hoodie.metadata.record.index.enable=false)',
  },
  /**
   * A data log file's records with `_hoodie_is_deleted`: Hudi's log merge counts those set to true as deletes of the
   * record index; our writer reports only the keys it deletes, so such a schema is refused.
   */
  recordIndexDeleteField: {
    problem:
      'a merge-on-read write whose schema has _hoodie_is_deleted on a table with the record_index partition (Hudi deletes the keys of such records logged as deleted), which this build does not index',
    fix: 'run this write with Hudi 1.x, drop the _hoodie_is_deleted field, or turn the record index off (hoodie.metadata.record.index.enable=false)',
  },
} as const;

export interface Metadata1xVersionFacts {
  readonly hudiRelease: string;
  /** HoodieMetadataRecord.SCHEMA$ of that release. */
  readonly schemaText: string;
  /** The schema behind Hudi's five meta fields: the SCHEMA header of its log blocks and HFiles. */
  readonly writerSchemaText: string;
  /**
   * Column-stats index version: 1 stores min/max in 0.x's wrappers (dates in DateWrapper, decimals in
   * DecimalWrapper at decimal(30,15)) and no value type; 2 stores them as their ValueType says (dates in IntWrapper,
   * decimals as unscaled bytes in BytesWrapper with "precision,scale") and writes the value type.
   */
  readonly columnStatsIndexVersion: 1 | 2;
  /**
   * Whether partition_stats is on by default: 1.0.2 defaults hoodie.metadata.index.partition.stats.enable to the
   * column-stats setting; 1.1.1 has no such switch (isPartitionStatsIndexEnabled is the column-stats setting).
   */
  readonly partitionStatsFollowsColumnStats: true;
  /** hoodie.metadata.index.column.stats.max.columns.to.index default (COLUMN_STATS_INDEX_MAX_COLUMNS). */
  readonly maxColumnsToIndex: number;
  /**
   * The bloom filter of a compaction's HFile base files (HoodieAvroHFileWriter's): 1.0.2 takes the data table's
   * storage defaults (hoodie.index.bloom.num_entries 60000, fpp 1e-9, DYNAMIC_V0, max 100000); 1.1.1 the metadata
   * table's own hoodie.metadata.bloom.filter.* (HoodieMetadataWriteUtils: 10000 entries, the rest the same).
   */
  readonly baseFileBloomFilter: Readonly<BloomFilterOptions>;
  /** Whether a compaction's write stats carry totalLogReadTimeMs (1.1.1's HoodieCompactor sets it; 1.0.2 leaves it 0). */
  readonly compactionLogReadTime: boolean;
}

/** The five `_hoodie_*` meta fields Hudi puts in front of a record schema (HoodieAvroUtils.addMetadataFields). */
const META_FIELDS_TEXT = ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name']
  .map((name) => JSON.stringify({ name, type: ['null', 'string'], doc: '', default: null }))
  .join(',');

function withMetaFields(schemaText: string): string {
  const at = schemaText.indexOf('"fields":[') + '"fields":['.length;
  return `${schemaText.slice(0, at)}${META_FIELDS_TEXT},${schemaText.slice(at)}`;
}

export const METADATA_1X_VERSIONS: Readonly<Record<MetadataTableVersion1x, Metadata1xVersionFacts>> = {
  8: {
    hudiRelease: '1.0.2',
    schemaText: METADATA_RECORD_SCHEMA_TEXT_V8,
    writerSchemaText: withMetaFields(METADATA_RECORD_SCHEMA_TEXT_V8),
    columnStatsIndexVersion: 1,
    partitionStatsFollowsColumnStats: true,
    maxColumnsToIndex: 32,
    baseFileBloomFilter: { numEntries: 60_000, fpp: 0.000000001, maxEntries: 100_000, type: 'DYNAMIC_V0' },
    compactionLogReadTime: false,
  },
  9: {
    hudiRelease: '1.1.1',
    schemaText: METADATA_RECORD_SCHEMA_TEXT_V9,
    writerSchemaText: withMetaFields(METADATA_RECORD_SCHEMA_TEXT_V9),
    columnStatsIndexVersion: 2,
    partitionStatsFollowsColumnStats: true,
    maxColumnsToIndex: 32,
    baseFileBloomFilter: { numEntries: 10_000, fpp: 0.000000001, maxEntries: 100_000, type: 'DYNAMIC_V0' },
    compactionLogReadTime: true,
  },
};

export function metadataVersionFacts(tableVersion: number): Metadata1xVersionFacts {
  if (tableVersion !== 8 && tableVersion !== 9) {
    throw new UnsupportedTableError(`table version ${tableVersion} has no Hudi 1.x metadata table`, {
      fix: 'the 1.x metadata-table record layer reads table versions 8 (Hudi 1.0) and 9 (Hudi 1.1)',
    });
  }
  return METADATA_1X_VERSIONS[tableVersion];
}

const types = new Map<MetadataTableVersion1x, avro.Type>();

/** The avsc type of a version's writer schema (wrapped unions, bigint longs, as the 0.x codec reads). */
export function metadataRecordType1x(tableVersion: MetadataTableVersion1x): avro.Type {
  let type = types.get(tableVersion);
  if (type === undefined) {
    type = avroType(
      METADATA_1X_VERSIONS[tableVersion].writerSchemaText,
      { wrapUnions: true, longs: 'bigint' },
      `HoodieMetadataRecord schema (table version ${tableVersion})`,
    );
    types.set(tableVersion, type);
  }
  return type;
}

/** The 1.x partition a metadata-table folder name is, or a refusal naming it. */
export function metadata1xPartitionOf(name: string, location: string): Metadata1xPartition {
  if (name in METADATA_1X_PARTITIONS) return name as Metadata1xPartition;
  const unread = UNREAD_1X_PARTITIONS.find((known) => (known.endsWith('_') ? name.startsWith(known) : name === known));
  throw new UnsupportedTableError(
    unread === undefined
      ? `the metadata table has a partition "${name}" that Hudi 1.0/1.1 does not write`
      : `the metadata table has the "${name}" partition, which this build does not read (it reads ${Object.keys(METADATA_1X_PARTITIONS).join(', ')})`,
    { location, fix: 'drop that index with Hudi (or turn it off), or read the table with Hudi' },
  );
}
