/**
 * Which metadata-table partitions hoodie.properties declares: `hoodie.table.metadata.partitions` (ready) and
 * `hoodie.table.metadata.partitions.inflight` (being built by the async indexer, or a bootstrap under way). Hudi's
 * writers update every partition of both lists on each commit (getMetadataPartitionsToUpdate); readers use the
 * metadata table only when `files` is ready.
 */
import type { TableConfig } from '../table/config.js';

export const METADATA_PARTITIONS_KEY = 'hoodie.table.metadata.partitions';
export const METADATA_PARTITIONS_INFLIGHT_KEY = 'hoodie.table.metadata.partitions.inflight';

export interface MetadataTableState {
  readonly partitions: readonly string[];
  readonly inflightPartitions: readonly string[];
}

/** The MDT partitions hoodie.properties lists, ready and being built. */
export function metadataTableState(config: Pick<TableConfig, 'properties'>): MetadataTableState {
  const list = (key: string) =>
    (config.properties.get(key) ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
  return { partitions: list(METADATA_PARTITIONS_KEY), inflightPartitions: list(METADATA_PARTITIONS_INFLIGHT_KEY) };
}

/** Whether hoodie.properties declares any metadata-table partition (ready or being built). */
export function hasMetadataTable(config: Pick<TableConfig, 'properties'>): boolean {
  const { partitions, inflightPartitions } = metadataTableState(config);
  return partitions.length > 0 || inflightPartitions.length > 0;
}
