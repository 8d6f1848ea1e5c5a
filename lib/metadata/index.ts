/**
 * Hudi's metadata table (org.apache.hudi.metadata) for table version 6: reading its state, keeping it correct on
 * every commit of ours (one deltacommit per data instant, Hudi's records and file-group mapping), removing the
 * deltacommit of a rolled-back instant, compacting it (HFile base files) and turning it off as Hudi's writers do.
 */
export { MetadataTable, MetadataTableReader, COMPACT_MAX_DELTA_COMMITS_KEY, DEFAULT_COMPACT_MAX_DELTA_COMMITS } from './metadata-table.js';
export type { MetadataCommitInput, MetadataCommitResult, MetadataRemoveResult, MetadataTableProblem, MetadataTableServicesResult } from './metadata-table.js';
export { decideMetadataClean, planMetadataClean, metadataCleanConfig, type MetadataCleanConfig, CLEAN_SUFFIX, type MetadataCleanResult } from './clean.js';
export type { RecordIndexChanges, MetadataChange } from './convert.js';
export {
  decideCompaction,
  planCompaction,
  compactionLimit,
  COMPACTION_SUFFIX,
  type MetadataCompactionResult,
  type CompactedFile,
  type CompactionDecision,
} from './compaction.js';
export { convertCommitMetadata, columnsToIndex } from './convert.js';
export {
  applyMetadataTableWriteConfig,
  deleteMetadataTable,
  deleteMetadataPartition,
  type MetadataDisableReport,
} from './disable.js';
export { metadataTableState, hasMetadataTable, METADATA_PARTITIONS_KEY, METADATA_PARTITIONS_INFLIGHT_KEY, type MetadataTableState } from './state.js';
export { METADATA_PARTITION_TYPES, type MetadataPartitionType, mapRecordKeyToFileGroupIndex, fileGroupId, partitionIdentifier } from './partitions.js';
export { METADATA_TABLE_FOLDER, METADATA_TABLE_METAFOLDER, loadMetadataTimeline, completedCompactions } from './timeline.js';
export type { MetadataRecord, MergedRecord, ColumnRange, WrappedValue } from './records.js';
export { recordIndexFileId } from './records.js';
export { columnRangesFromFooter, columnRangesFromRecords } from './column-stats.js';
export { columnIndexId, partitionIndexId, fileIndexId, bloomFilterIndexKey, columnStatsIndexKey, xxHash64 } from './hash-ids.js';
export { METADATA_RECORD_SCHEMA_TEXT, METADATA_RECORD_WRITER_SCHEMA_TEXT } from './schema.js';
export {
  assertMetadataTableKeepable,
  keepMetadataTable,
  removeMetadataTableDeltaCommit,
  type MetadataTableOutcome,
  type MetadataTableSession,
} from './commit-path.js';
export { configuredColumnStatsColumns, METADATA_TABLE_KEYS, METADATA_ENABLE, PARTITION_ENABLE } from './keys.js';
