/**
 * Which Hudi release's Glue sync a table gets, decided here once from its table version: a version 6 (or 5) table
 * is synced as Hudi 0.15's AwsGlueCatalogSyncTool syncs it, a version 8 table as Hudi 1.0.2's, a version 9 table as
 * Hudi 1.1.1's (the releases that write those versions by default). The sync reads these flags, never the version.
 */
import { CatalogSyncError } from '../errors.js';

export interface GlueSyncBehaviour {
  /** The Hudi release whose AWSGlueCatalogSyncClient and HiveSyncTool this follows. */
  readonly release: '0.15' | '1.0' | '1.1';
  /**
   * last_commit_completion_time_sync: written beside last_commit_time_sync (1.x updateLastCommitTimeSynced), and
   * read back to find the commits that completed after the last sync though requested before it (the "hollow"
   * instants of TimelineUtils.getCommitsTimelineAfter). The 0.15 Glue client neither writes nor reads it.
   */
  readonly completionTimeSync: boolean;
  /** An existing table's serde parameters replaced when they differ (1.x updateSerdeProperties; 0.15 has none). */
  readonly updatesSerdeProperties: boolean;
  /**
   * A catalog table whose location is not the table's base path is created again (1.x HiveSyncTool's
   * recreateAndSyncHiveTable: a temporary table to validate, the table dropped and created, every partition synced).
   */
  readonly recreatesMovedTable: boolean;
  /**
   * A table whose last_commit_time_sync (and completion time) is already the latest commit's is left untouched:
   * no schema, property or partition sync (1.1 HiveSyncTool.isAlreadySynced).
   */
  readonly skipsSyncedTable: boolean;
  /**
   * The partitions an incremental sync drops: those of delete_partition commits only (this build's 0.15 sync), or
   * TimelineUtils.getDroppedPartitions' (delete_partition, insert_overwrite and insert_overwrite_table replacecommits
   * and cleans that deleted a partition, unless a later commit wrote it again).
   */
  readonly droppedPartitions: 'delete-partition' | 'timeline-utils';
}

const HUDI_0_15: GlueSyncBehaviour = {
  release: '0.15',
  completionTimeSync: false,
  updatesSerdeProperties: false,
  recreatesMovedTable: false,
  skipsSyncedTable: false,
  droppedPartitions: 'delete-partition',
};

const HUDI_1_0: GlueSyncBehaviour = {
  release: '1.0',
  completionTimeSync: true,
  updatesSerdeProperties: true,
  recreatesMovedTable: true,
  skipsSyncedTable: false,
  droppedPartitions: 'timeline-utils',
};

const HUDI_1_1: GlueSyncBehaviour = { ...HUDI_1_0, release: '1.1', skipsSyncedTable: true };

/** The Glue sync of a table at `version` (hoodie.table.version); a version no release here syncs is refused. */
export function glueSyncBehaviourOf(version: number, location: string): GlueSyncBehaviour {
  if (version === 5 || version === 6) return HUDI_0_15;
  if (version === 8) return HUDI_1_0;
  if (version === 9) return HUDI_1_1;
  throw new CatalogSyncError(`no Glue sync is known for table version ${version}`, {
    location,
    fix: 'sync tables of versions 5, 6, 8 or 9',
  });
}
