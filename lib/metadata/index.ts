/**
 * Hudi's metadata table (org.apache.hudi.metadata) for table version 6: reading its state, keeping it correct on
 * every commit of ours (one deltacommit per data instant, Hudi's records and file-group mapping), removing the
 * deltacommit of a rolled-back instant, compacting it (HFile base files) and turning it off as Hudi's writers do.
 */

export { metadataTableCompaction1x } from './archive-1x.js';
export { CLEAN_SUFFIX, decideMetadataClean, type MetadataCleanConfig, type MetadataCleanResult, metadataCleanConfig, planMetadataClean } from './clean.js';
export { columnRangesFromFooter, columnRangesFromRecords, type DecimalStorage } from './column-stats.js';
export {
  assertMetadataTableKeepable,
  assertRollbackKeepsMetadataTable,
  keepMetadataTable,
  type MetadataTableOutcome,
  type MetadataTableSession,
  removeMetadataTableDeltaCommit,
} from './commit-path.js';
export {
  COMPACTION_SUFFIX,
  type CompactedFile,
  type CompactionDecision,
  compactionLimit,
  decideCompaction,
  type MetadataCompactionResult,
  planCompaction,
} from './compaction.js';
export type { MetadataChange, RecordIndexChanges } from './convert.js';
export { columnsToIndex, convertCommitMetadata } from './convert.js';
export { columnStatsDecimals } from './convert-1x.js';
export {
  applyMetadataTableWriteConfig,
  deleteMetadataPartition,
  deleteMetadataTable,
  type MetadataDisableReport,
} from './disable.js';
export { bloomFilterIndexKey, columnIndexId, columnStatsIndexKey, fileIndexId, partitionIndexId, xxHash64 } from './hash-ids.js';
export { configuredColumnStatsColumns, METADATA_ENABLE, METADATA_TABLE_KEYS, PARTITION_ENABLE } from './keys.js';
export type { MetadataCommitInput, MetadataCommitResult, MetadataRemoveResult, MetadataTableProblem, MetadataTableServicesResult } from './metadata-table.js';
export { COMPACT_MAX_DELTA_COMMITS_KEY, DEFAULT_COMPACT_MAX_DELTA_COMMITS, MetadataTable, MetadataTableReader } from './metadata-table.js';
export { fileGroupId, METADATA_PARTITION_TYPES, type MetadataPartitionType, mapRecordKeyToFileGroupIndex, partitionIdentifier } from './partitions.js';
export type { ColumnRange, MergedRecord, MetadataRecord, WrappedValue } from './records.js';
export { recordIndexFileId } from './records.js';
export { METADATA_RECORD_SCHEMA_TEXT, METADATA_RECORD_WRITER_SCHEMA_TEXT } from './schema.js';
export { hasMetadataTable, METADATA_PARTITIONS_INFLIGHT_KEY, METADATA_PARTITIONS_KEY, type MetadataTableState, metadataTableState } from './state.js';
export { completedCompactions, loadMetadataTimeline, METADATA_TABLE_FOLDER, METADATA_TABLE_METAFOLDER } from './timeline.js';
