/**
 * Hudi's archived timeline (table version 6, HoodieArchivedTimeline): log files `.hoodie/archived/.commits_.archive.N_<token>`
 * holding Avro data blocks of HoodieArchivedMetaEntry, one record per archived instant file. Read in version order;
 * records of writers with older schemas resolve to ours.
 */

import { iterateLogBlocks } from '../../log-format/block.js';
import { readAvroDataBlock } from '../../log-format/data-block.js';
import { type LogFile, logFilesOf } from '../../log-format/log-files.js';
import type { Storage } from '../../storage/port.js';
import type { Instant, InstantAction, InstantState } from '../instant.js';
import { compareInstants } from '../instant.js';
import { METAFOLDER } from '../meta-folder.js';
import { ARCHIVED_META_ENTRY_SCHEMA_TEXT, type ArchivedMetaEntry } from './meta-entry.js';

/** The archive log's file id and extension (HoodieArchivedTimeline.getArchiveLogPath: `.commits_.archive.N_…`). */
export const ARCHIVE_FILE_ID = 'commits';
/** HoodieArchivedTimeline.MERGE_ARCHIVE_PLAN_NAME */
export const MERGE_ARCHIVE_PLAN_NAME = 'mergeArchivePlan';

/** `.hoodie/<hoodie.archivelog.folder>` */
export function archiveFolder(archiveLogFolder: string): string {
  return `${METAFOLDER}/${archiveLogFolder}`;
}

/** The archive files, oldest version first. */
export async function listArchiveFiles(storage: Storage, folder: string): Promise<LogFile[]> {
  const { files } = await storage.listDir(folder);
  return logFilesOf(files, { fileId: ARCHIVE_FILE_ID, extension: 'archive' }).sort((a, b) => a.name.version - b.name.version);
}

export interface ArchivedRecord {
  readonly instant: Instant;
  readonly entry: ArchivedMetaEntry;
  /** The archive file it was read from. */
  readonly file: string;
}

export interface ArchivedTimelineRead {
  readonly records: readonly ArchivedRecord[];
  readonly files: readonly LogFile[];
  /** Torn (corrupt) blocks skipped, as Hudi's reader skips them. */
  readonly corruptBlocks: number;
}

const STATES: Readonly<Record<string, InstantState>> = { REQUESTED: 'REQUESTED', INFLIGHT: 'INFLIGHT', COMPLETED: 'COMPLETED' };

/** The records of some archive files (all of them by default). */
export async function readArchivedRecords(storage: Storage, folder: string, files?: readonly LogFile[]): Promise<ArchivedTimelineRead> {
  const archives = files ?? (await listArchiveFiles(storage, folder));
  const records: ArchivedRecord[] = [];
  let corruptBlocks = 0;
  for (const file of archives) {
    const location = storage.uriOf(file.path);
    for (const block of iterateLogBlocks(await storage.get(file.path), location)) {
      if (block.type !== 'AVRO_DATA_BLOCK') {
        corruptBlocks++;
        continue;
      }
      for (const value of readAvroDataBlock(block, { readerSchema: ARCHIVED_META_ENTRY_SCHEMA_TEXT, location })) {
        const entry = value as ArchivedMetaEntry;
        const state = STATES[entry.actionState ?? 'COMPLETED'];
        if (entry.commitTime === null || entry.actionType === null || state === undefined) continue;
        records.push({ instant: { time: entry.commitTime, action: entry.actionType as InstantAction, state }, entry, file: file.path });
      }
    }
  }
  return { records, files: archives, corruptBlocks };
}

/** The archived instants (furthest state of each), oldest first, and their completed records. */
export function archivedInstants(records: readonly ArchivedRecord[]): { instant: Instant; completed: ArchivedMetaEntry | undefined }[] {
  const byKey = new Map<string, { instant: Instant; completed: ArchivedMetaEntry | undefined }>();
  for (const record of records) {
    const key = `${record.instant.time}.${record.instant.action}`;
    const seen = byKey.get(key);
    const completed = record.instant.state === 'COMPLETED' ? record.entry : seen?.completed;
    if (seen === undefined || compareInstants(record.instant, seen.instant) > 0) byKey.set(key, { instant: record.instant, completed });
    else if (completed !== seen.completed) byKey.set(key, { ...seen, completed });
  }
  return [...byKey.values()].sort((a, b) => compareInstants(a.instant, b.instant) || (a.instant.action < b.instant.action ? -1 : 1));
}

/** The commit (or replacecommit) metadata an archived completed record holds, if any. */
export function archivedCommitMetadataOf(entry: ArchivedMetaEntry): Record<string, unknown> | undefined {
  return entry.hoodieReplaceCommitMetadata ?? entry.hoodieCommitMetadata ?? undefined;
}
