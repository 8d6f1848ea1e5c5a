/**
 * Hudi's metadata table (MDT): `.hoodie/metadata`, a merge-on-read table indexing the data table's files (and
 * optionally column stats, bloom filters, record locations). hoodie.properties lists its partitions:
 * `hoodie.table.metadata.partitions` (ready) and `hoodie.table.metadata.partitions.inflight` (being built, by the
 * async indexer or a bootstrap under way); Hudi writers update both kinds with every commit.
 *
 * This build does not write to the MDT yet, so a commit, replacecommit or rollback from here would be one the MDT
 * never sees: MDT-based readers and writers then miss the new files (and, after a clustering, the rows of every
 * replaced file group). Every path that changes the timeline — write, ingest, clustering schedule / execute /
 * commit, rollback — refuses such a table through assertNoMetadataTable, and checks again under the lock just
 * before committing (a Spark writer may have enabled the MDT since the table was opened).
 */
import { MetadataTableError } from './errors.js';
import type { Storage } from './storage/port.js';
import { PROPERTIES_FILE, readTableConfig, type TableConfig } from './table-config.js';

export const METADATA_PARTITIONS_KEY = 'hoodie.table.metadata.partitions';
export const METADATA_PARTITIONS_INFLIGHT_KEY = 'hoodie.table.metadata.partitions.inflight';

export interface MetadataTableState {
  readonly partitions: readonly string[];
  readonly inflightPartitions: readonly string[];
}

/** The MDT partitions hoodie.properties lists, ready and being built. */
export function metadataTableState(config: Pick<TableConfig, 'properties'>): MetadataTableState {
  const list = (key: string) => (config.properties.get(key) ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  return { partitions: list(METADATA_PARTITIONS_KEY), inflightPartitions: list(METADATA_PARTITIONS_INFLIGHT_KEY) };
}

/** `what` names the refused operation in the error: 'a write', 'a clustering', 'a rollback', 'an ingest'. */
export function assertNoMetadataTable(config: Pick<TableConfig, 'properties'>, location: string, what: string): void {
  const { partitions, inflightPartitions } = metadataTableState(config);
  if (partitions.length === 0 && inflightPartitions.length === 0) return;
  const listed = [
    ...(partitions.length > 0 ? [`partitions ${partitions.join(', ')}`] : []),
    ...(inflightPartitions.length > 0 ? [`being built: ${inflightPartitions.join(', ')}`] : []),
  ].join('; ');
  throw new MetadataTableError(
    `the table has Hudi's metadata table (${listed}); ${what} from here would leave it stale, and readers and writers that list files through it would miss rows`,
    partitions,
    inflightPartitions,
    {
      location,
      fix: 'metadata-table support is coming; until then disable the metadata table: one Spark write with hoodie.metadata.enable=false ' +
        `deletes .hoodie/metadata and clears ${METADATA_PARTITIONS_KEY} (keep hoodie.metadata.enable=false on every Hudi writer, or the next one rebuilds it)`,
    },
  );
}

/** The same on hoodie.properties as stored now: for the last check under the lock, just before committing. */
export async function assertNoMetadataTableNow(storage: Storage, what: string): Promise<void> {
  assertNoMetadataTable(await readTableConfig(storage), storage.uriOf(PROPERTIES_FILE), what);
}
