/**
 * The metadata table's partitions in Hudi 0.14/0.15 (MetadataPartitionType) and how records map to their file
 * groups (HoodieTableMetadataUtil): file group ids are `<prefix><index %04d>-0`, and a record goes to the file group
 * at position `mapRecordKeyToFileGroupIndex(key, count)` of the partition's file groups sorted by id (the writer's
 * prepRecords). The count is whatever the partition was initialized with (bloom filters 4 and column stats 2 by
 * default, the record index estimated from the table's size, at least 10); it never changes afterwards.
 */
export const METADATA_PARTITION_TYPES = ['files', 'column_stats', 'bloom_filters', 'record_index'] as const;
export type MetadataPartitionType = (typeof METADATA_PARTITION_TYPES)[number];

/** MetadataPartitionType.getFileIdPrefix. */
export const FILE_ID_PREFIX: Readonly<Record<MetadataPartitionType, string>> = {
  files: 'files-',
  column_stats: 'col-stats-',
  bloom_filters: 'bloom-filters-',
  record_index: 'record-index-',
};

/** The partition-list record's key in `files` (HoodieTableMetadata.RECORDKEY_PARTITION_LIST). */
export const PARTITION_LIST_KEY = '__all_partitions__';
/** How `files` names a non-partitioned table's only partition (NON_PARTITIONED_NAME). */
export const NON_PARTITIONED_NAME = '.';

export function isMetadataPartitionType(name: string): name is MetadataPartitionType {
  return (METADATA_PARTITION_TYPES as readonly string[]).includes(name);
}

/** HoodieTableMetadataUtil.getPartitionIdentifier: "" (non-partitioned) is "." in metadata-table keys. */
export function partitionIdentifier(partitionPath: string): string {
  return partitionPath === '' ? NON_PARTITIONED_NAME : partitionPath;
}

/** The data-table partition path of a `files` key (the inverse of partitionIdentifier). */
export function partitionPathOfIdentifier(identifier: string): string {
  return identifier === NON_PARTITIONED_NAME ? '' : identifier;
}

/** getFileIDForFileGroup: `files-0000-0`, `col-stats-0001-0`, … */
export function fileGroupId(partition: MetadataPartitionType, index: number): string {
  return `${FILE_ID_PREFIX[partition]}${String(index).padStart(4, '0')}-0`;
}

/** getFileGroupIndexFromFileId: the `%04d` part (the id with or without its `-0` suffix). */
export function fileGroupIndexOfId(fileId: string): number {
  const withoutSuffix = fileId.endsWith('-0') ? fileId.slice(0, -2) : fileId;
  return Number.parseInt(withoutSuffix.slice(withoutSuffix.lastIndexOf('-', withoutSuffix.length - 1) + 1), 10);
}

/**
 * mapRecordKeyToFileGroupIndex: Java's String.hashCode over UTF-16 code units (int arithmetic), then
 * abs(abs(h) % n). Math.abs(Integer.MIN_VALUE) stays negative in Java; `% n` then gives a value in (-n, 0], whose
 * abs is what Hudi uses, so the result is the same as taking the remainder's absolute value.
 */
export function mapRecordKeyToFileGroupIndex(recordKey: string, fileGroupCount: number): number {
  let h = 0;
  for (let i = 0; i < recordKey.length; i++) h = (Math.imul(31, h) + recordKey.charCodeAt(i)) | 0;
  const abs = h === -2147483648 ? h : Math.abs(h);
  return Math.abs(abs % fileGroupCount);
}
