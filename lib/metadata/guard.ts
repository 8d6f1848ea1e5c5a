/**
 * The guard for commit paths that do not update the metadata table yet (clustering schedule / execute / commit,
 * ingest, the serverless plan step): a commit from them would be one the MDT never sees, and MDT-based readers and
 * writers would then miss the new files (and, after a clustering, the rows of every replaced file group). They
 * refuse a table with an MDT through assertNoMetadataTable, and check again under the lock just before committing
 * (a Spark writer may have enabled the MDT since the table was opened). The writer and rollbacks keep the MDT
 * instead (MetadataTable.commit / removeDeltaCommit).
 */
import { MetadataTableError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { PROPERTIES_FILE, readTableConfig, type TableConfig } from '../table-config.js';
import { METADATA_PARTITIONS_KEY, metadataTableState } from './state.js';

/** `what` names the refused operation in the error: 'a clustering', 'an ingest'. */
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
      fix: 'this operation does not update the metadata table yet; until it does, disable the metadata table: one write with hoodie.metadata.enable=false ' +
        `deletes .hoodie/metadata and clears ${METADATA_PARTITIONS_KEY} (keep hoodie.metadata.enable=false on every Hudi writer, or the next one rebuilds it)`,
    },
  );
}

/** The same on hoodie.properties as stored now: for the last check under the lock, just before committing. */
export async function assertNoMetadataTableNow(storage: Storage, what: string): Promise<void> {
  assertNoMetadataTable(await readTableConfig(storage), storage.uriOf(PROPERTIES_FILE), what);
}
