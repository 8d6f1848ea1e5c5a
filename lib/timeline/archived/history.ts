/**
 * The table's history past the active timeline, from the archived timeline: for as-of reads older than the first
 * active instant and for `timeline --archived`.
 */

import type { Storage } from '../../storage/port.js';
import { fileGroupKey } from '../file-group-key.js';
import type { Instant } from '../instant.js';
import { archivedCommitMetadataOf, archivedInstants, archiveFolder, readArchivedRecords } from './archived-timeline.js';

export interface ArchivedHistory {
  /** Archived instants, furthest state of each, oldest first. */
  readonly instants: readonly Instant[];
  /** File groups replaced by archived completed replacecommits: fileGroupKey → replacecommit time. */
  readonly replacedFileGroups: ReadonlyMap<string, string>;
  readonly archiveFiles: number;
}

export async function loadArchivedHistory(storage: Storage, archiveLogFolder: string): Promise<ArchivedHistory> {
  const read = await readArchivedRecords(storage, archiveFolder(archiveLogFolder));
  const instants = archivedInstants(read.records);
  const replacedFileGroups = new Map<string, string>();
  for (const { instant, completed } of instants) {
    if (instant.action !== 'replacecommit' || instant.state !== 'COMPLETED' || completed === undefined) continue;
    const metadata = archivedCommitMetadataOf(completed);
    const replaced = (metadata?.['partitionToReplaceFileIds'] ?? {}) as Record<string, string[]>;
    for (const [partition, fileIds] of Object.entries(replaced))
      for (const fileId of fileIds) replacedFileGroups.set(fileGroupKey(partition, fileId), instant.time);
  }
  return { instants: instants.map((entry) => entry.instant), replacedFileGroups, archiveFiles: read.files.length };
}
