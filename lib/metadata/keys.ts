/**
 * The Hudi keys the metadata-table side of a commit reads from the user's write properties, each defined once.
 * Absent switches keep what the table has (see disable.ts); the bloom filter type is the writer's key
 * (WRITE_KEYS.bloomType), since the bloom_filters partition records the type the data files were written with.
 */
import { bool, type ConfigKey, commaList, defineKey, readKey } from '../config/index.js';
import { COMPACT_MAX_DELTA_COMMITS } from './compaction.js';
import type { MetadataPartitionType } from './partitions.js';

const TABLES = "(the table's)";

/** A switch that only counts when the user sets it: unset keeps what the table has. */
function partitionSwitch(key: string, description: string): ConfigKey<boolean | undefined> {
  return defineKey<boolean | undefined>({ key, default: undefined, defaultText: TABLES, parser: bool, description });
}

export const METADATA_ENABLE = partitionSwitch(
  'hoodie.metadata.enable',
  "false: drop Hudi's metadata table before the commit, as Hudi's writers do (clear hoodie.table.metadata.partitions, delete .hoodie/metadata); otherwise every commit keeps the metadata table the table has (none is created)",
);

/** The write keys that turn one index partition off (HoodieTable.shouldDeleteMetadataPartition). */
export const PARTITION_ENABLE: Readonly<Record<Exclude<MetadataPartitionType, 'files'>, ConfigKey<boolean | undefined>>> = {
  column_stats: partitionSwitch('hoodie.metadata.index.column.stats.enable', 'false: drop the column_stats partition'),
  bloom_filters: partitionSwitch('hoodie.metadata.index.bloom.filter.enable', 'false: drop the bloom_filters partition'),
  // Hudi 1.1 renamed it hoodie.metadata.global.record.level.index.enable, reading the old name as an alternative.
  record_index: defineKey<boolean | undefined>({
    key: 'hoodie.metadata.record.index.enable',
    default: undefined,
    defaultText: TABLES,
    parser: bool,
    renamedIn: ['hoodie.metadata.global.record.level.index.enable'],
    description: 'false: drop the record_index partition',
  }),
};

/** Hudi 1.1's partitioned record index (file groups per data partition): refused when true, as it is not kept here. */
export const PARTITIONED_RECORD_INDEX_ENABLE = defineKey<boolean>({
  key: 'hoodie.metadata.record.level.index.enable',
  default: false,
  parser: bool,
  description: "true (Hudi 1.1's partitioned record index) is refused: this build keeps the unpartitioned record_index only",
});

export const COLUMN_STATS_COLUMN_LIST = defineKey<readonly string[]>({
  key: 'hoodie.metadata.index.column.stats.column.list',
  default: [],
  defaultText: '(every field)',
  parser: commaList,
  description: "the columns column_stats indexes: the writer schema's fields, meta fields included, unless listed here",
});

/** Every key above, for the README's configuration reference. */
export const METADATA_TABLE_KEYS = {
  enable: METADATA_ENABLE,
  columnStatsEnable: PARTITION_ENABLE.column_stats,
  bloomFiltersEnable: PARTITION_ENABLE.bloom_filters,
  recordIndexEnable: PARTITION_ENABLE.record_index,
  partitionedRecordIndexEnable: PARTITIONED_RECORD_INDEX_ENABLE,
  columnStatsColumnList: COLUMN_STATS_COLUMN_LIST,
  compactMaxDeltaCommits: COMPACT_MAX_DELTA_COMMITS,
} as const;

const LOCATION = 'write properties';

/** Whether the user's properties turn the metadata table off (`hoodie.metadata.enable=false`). */
export function metadataTableDisabled(properties: ReadonlyMap<string, string>): boolean {
  return readKey(properties, METADATA_ENABLE, LOCATION) === false;
}

/** Whether the user's properties turn `partition` off. */
export function partitionDisabled(properties: ReadonlyMap<string, string>, partition: Exclude<MetadataPartitionType, 'files'>): boolean {
  return readKey(properties, PARTITION_ENABLE[partition], LOCATION) === false;
}

/** hoodie.metadata.index.column.stats.column.list (empty: every field). */
export function configuredColumnStatsColumns(properties: ReadonlyMap<string, string> | undefined): readonly string[] {
  return properties === undefined ? [] : readKey(properties, COLUMN_STATS_COLUMN_LIST, LOCATION);
}
