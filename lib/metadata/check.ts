/**
 * Checking a metadata table against the data table, and the repair when they disagree.
 *
 * Builds before the one instant-time grammar could not see metadata compactions at suffixed times longer than 20
 * digits (`<T>011001`), and appended their deltacommits to the slice such a compaction had superseded, where Hudi's
 * readers never look: those log files are "stranded". The check finds them, and independently compares the Parquet
 * files `files` lists with the committed ones on storage. The repair is Hudi's own: drop the metadata table
 * (hoodie.properties first, then the folder; readers go back to listing storage), and the next Hudi writer with its
 * default hoodie.metadata.enable=true rebuilds it from a listing.
 */
import { iterateLogBlocks, type LogFile } from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import type { TableConfig } from '../table/config.js';
import { joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import { listPartitions } from '../table/table.js';
import { compareInstantTimes } from '../timeline/instant.js';
import { loadTimeline } from '../timeline/timeline.js';
import { applyMetadataTableWriteConfig } from './disable.js';
import { METADATA_ENABLE } from './keys.js';
import { MetadataTable } from './metadata-table.js';
import { METADATA_0X_TIMELINE_LAYOUT } from './timeline.js';

/** A log file of a superseded slice holding blocks written after the slice that replaced it began. */
export interface StrandedLogFile {
  readonly path: string;
  /** The slice it belongs to. */
  readonly baseInstant: string;
  /** The group's latest slice, the one readers merge. */
  readonly latestBaseInstant: string;
  /** The INSTANT_TIME of each block newer than the latest slice's base instant. */
  readonly instants: readonly string[];
}

export interface MetadataCheckReport {
  readonly stranded: readonly StrandedLogFile[];
  /** Committed Parquet base files on storage that `files` does not list (`partition/name`). */
  readonly missingFromMetadata: readonly string[];
  /** Parquet files `files` lists that are not on storage. */
  readonly missingFromStorage: readonly string[];
  /** Problems that keep this build from committing to it (MetadataTable.problems), as sentences. */
  readonly problems: readonly string[];
  readonly ok: boolean;
}

/** Check the metadata table of the table at `storage`; undefined when the table has none. Reads only. */
export async function checkMetadataTable(storage: Storage): Promise<MetadataCheckReport | undefined> {
  const table = await MetadataTable.open(storage);
  if (table === undefined) return undefined;
  const problems = table.problems().map((p) => p.problem);
  const stranded: StrandedLogFile[] = [];
  for (const groups of table.fileGroups.values()) {
    for (const group of groups) {
      const latest = group.latest.baseInstant;
      for (const log of group.allLogFiles) {
        if (compareInstantTimes(log.name.baseInstant, latest) >= 0) continue;
        const instants = await blockInstantsAfter(storage, log, latest);
        if (instants.length > 0) stranded.push({ path: log.path, baseInstant: log.name.baseInstant, latestBaseInstant: latest, instants });
      }
    }
  }
  const missingFromMetadata: string[] = [];
  const missingFromStorage: string[] = [];
  // The listing comparison needs a readable `files` partition; the problems say why when it is not.
  if (problems.length === 0) {
    const dataTimeline = await loadTimeline(storage, METADATA_0X_TIMELINE_LAYOUT);
    const reader = await table.reader(dataTimeline);
    const listed = new Set<string>();
    for (const partition of await reader.allPartitionPaths()) {
      for (const name of (await reader.filesInPartition(partition)).keys()) {
        if (parseBaseFileName(name) !== undefined) listed.add(joinPartitionPath(partition, name));
      }
    }
    const stored = new Set<string>();
    for (const partition of await listPartitions(storage)) {
      for (const file of partition.files) {
        const parsed = parseBaseFileName(file.name);
        if (parsed !== undefined && dataTimeline.isCommitted(parsed.instantTime)) stored.add(joinPartitionPath(partition.partitionPath, file.name));
      }
    }
    for (const path of stored) if (!listed.has(path)) missingFromMetadata.push(path);
    for (const path of listed) if (!stored.has(path)) missingFromStorage.push(path);
  }
  return {
    stranded,
    missingFromMetadata: missingFromMetadata.sort(),
    missingFromStorage: missingFromStorage.sort(),
    problems,
    ok: stranded.length === 0 && missingFromMetadata.length === 0 && missingFromStorage.length === 0 && problems.length === 0,
  };
}

async function blockInstantsAfter(storage: Storage, log: LogFile, latest: string): Promise<string[]> {
  const instants = new Set<string>();
  for (const block of iterateLogBlocks(await storage.get(log.path), storage.uriOf(log.path))) {
    if (block.type === 'CORRUPT_BLOCK') continue;
    const time = block.header.INSTANT_TIME;
    if (time !== undefined && compareInstantTimes(time, latest) > 0) instants.add(time);
  }
  return [...instants].sort(compareInstantTimes);
}

/**
 * Drop the metadata table (call under the table lock): what `hoodie.metadata.enable=false` on a Hudi write does,
 * through the same path a write with that key takes. Returns whether there was one to drop.
 */
export async function dropMetadataTable(storage: Storage, config: TableConfig): Promise<boolean> {
  const report = await applyMetadataTableWriteConfig(storage, config, new Map([[METADATA_ENABLE.key, 'false']]));
  return report.deletedMetadataTable;
}
