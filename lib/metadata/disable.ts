/**
 * Turning the metadata table (or one of its index partitions) off, as Hudi's writers do when their configuration
 * disables it (HoodieTable.maybeDeleteMetadataTable / deleteMetadataIndexIfNecessary, HoodieTableMetadataUtil
 * .deleteMetadataTable / deleteMetadataTablePartition): first hoodie.properties stops declaring it (so readers go
 * back to listing files), then its folder is deleted. Disabling `files` disables everything.
 *
 * Only keys the user gives count: `hoodie.metadata.enable=false` drops the metadata table;
 * `hoodie.metadata.index.column.stats.enable=false`, `hoodie.metadata.index.bloom.filter.enable=false` and
 * `hoodie.metadata.record.index.enable=false` drop that partition. Hudi's writers apply their defaults too (which
 * disable those three indexes), so a Spark writer without the keys drops them; this build keeps what the table
 * has unless told otherwise.
 */
import { deleteFolder } from '../storage/delete-many.js';
import type { Storage } from '../storage/port.js';
import { type TableConfig, updateTableProperties } from '../table/config.js';
import { METADATA_ENABLE, metadataTableDisabled, PARTITION_ENABLE, partitionDisabled } from './keys.js';
import { METADATA_PARTITION_TYPES, type MetadataPartitionType } from './partitions.js';
import { METADATA_PARTITIONS_INFLIGHT_KEY, METADATA_PARTITIONS_KEY, metadataTableState } from './state.js';
import { METADATA_TABLE_FOLDER } from './timeline.js';

export interface MetadataDisableReport {
  /** Partitions no longer declared (and their folders deleted); every one when the whole table went. */
  readonly removedPartitions: readonly string[];
  /** Whether `.hoodie/metadata` itself was deleted. */
  readonly deletedMetadataTable: boolean;
  /** The key that asked for it. */
  readonly reason: string | undefined;
}

/**
 * Apply the user's metadata keys to the table before a commit (under the table lock): drop the metadata table or
 * the partitions they disable. Returns what was removed (nothing when the keys are absent or already satisfied).
 */
export async function applyMetadataTableWriteConfig(
  storage: Storage,
  config: TableConfig,
  properties: ReadonlyMap<string, string>,
): Promise<MetadataDisableReport> {
  const { partitions } = metadataTableState(config);
  if (metadataTableDisabled(properties)) {
    const listing = await storage.listDir(METADATA_TABLE_FOLDER);
    const folderExists = listing.files.length > 0 || listing.dirs.length > 0;
    const state = metadataTableState(config);
    if (!folderExists && state.partitions.length === 0 && state.inflightPartitions.length === 0)
      return { removedPartitions: [], deletedMetadataTable: false, reason: undefined };
    await deleteMetadataTable(storage);
    return {
      removedPartitions: [...new Set([...state.partitions, ...state.inflightPartitions])],
      deletedMetadataTable: true,
      reason: `${METADATA_ENABLE.key}=false`,
    };
  }
  const removed: string[] = [];
  const reasons: string[] = [];
  for (const partition of METADATA_PARTITION_TYPES) {
    if (partition === 'files') continue;
    if (!partitionDisabled(properties, partition) || !partitions.includes(partition)) continue;
    await deleteMetadataPartition(storage, partition);
    removed.push(partition);
    reasons.push(`${PARTITION_ENABLE[partition].key}=false`);
  }
  return { removedPartitions: removed, deletedMetadataTable: false, reason: reasons.length > 0 ? reasons.join(', ') : undefined };
}

/** deleteMetadataTable: clear both partition lists in hoodie.properties, then delete `.hoodie/metadata`. */
export async function deleteMetadataTable(storage: Storage): Promise<void> {
  await updateTableProperties(storage, (props) => {
    props.set(METADATA_PARTITIONS_KEY, '');
    props.set(METADATA_PARTITIONS_INFLIGHT_KEY, '');
  });
  await deleteFolder(storage, METADATA_TABLE_FOLDER);
}

/** deleteMetadataTablePartition: drop one partition from both lists, then delete its folder (`files` drops all). */
export async function deleteMetadataPartition(storage: Storage, partition: MetadataPartitionType): Promise<void> {
  if (partition === 'files') return deleteMetadataTable(storage);
  const without = (value: string | undefined) =>
    (value ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '' && p !== partition)
      .sort()
      .join(',');
  await updateTableProperties(storage, (props) => {
    props.set(METADATA_PARTITIONS_KEY, without(props.get(METADATA_PARTITIONS_KEY)));
    props.set(METADATA_PARTITIONS_INFLIGHT_KEY, without(props.get(METADATA_PARTITIONS_INFLIGHT_KEY)));
  });
  await deleteFolder(storage, `${METADATA_TABLE_FOLDER}/${partition}`);
}
