/**
 * What a user asks of a table first (`hudi-serverless status <table>`): the pending instants and how long they have
 * waited, the last clustering, clean and archive (and of a merge-on-read table its pending compactions and the last
 * compaction), and per partition how many files the latest snapshot reads and
 * how their sizes spread (small files are what clustering is for).
 */

import type { HudiTable } from '../table/table.js';
import { parseInstantTime } from '../timeline/instant.js';
import { lastCompletedClustering } from '../timeline/queries.js';
import { WRITE_KEYS } from '../writer/write-config.js';

export interface PendingInstantStatus {
  readonly instant: string;
  readonly action: string;
  readonly state: 'REQUESTED' | 'INFLIGHT';
  /** Seconds since the instant time (undefined when the time does not parse). */
  readonly ageSeconds: number | undefined;
}

export interface LastServiceStatus {
  readonly instant: string;
  readonly ageSeconds: number | undefined;
  /** On the archived timeline rather than the active one. */
  readonly archived: boolean;
}

export interface PartitionStatus {
  readonly partition: string;
  readonly files: number;
  readonly bytes: number;
  readonly minBytes: number;
  readonly medianBytes: number;
  readonly maxBytes: number;
  /** Base files smaller than hoodie.parquet.small.file.limit. */
  readonly smallFiles: number;
}

export interface TableStatus {
  readonly path: string;
  readonly name: string;
  readonly type: string;
  readonly version: number;
  readonly completedInstants: number;
  readonly lastCommit: string | undefined;
  readonly pending: readonly PendingInstantStatus[];
  readonly lastClustering: LastServiceStatus | undefined;
  readonly lastClean: LastServiceStatus | undefined;
  /** Merge-on-read tables only (undefined otherwise): pending compaction plans, oldest first, and the last completed one. */
  readonly compaction: { readonly pending: readonly PendingInstantStatus[]; readonly last: LastServiceStatus | undefined } | undefined;
  /** When the archiver last wrote (its newest archive file), and how many instants are archived. */
  readonly lastArchive: { readonly at: string; readonly ageSeconds: number; readonly archivedInstants: number } | undefined;
  readonly partitions: readonly PartitionStatus[];
  readonly smallFileLimit: number;
}

function ageOf(time: string, now: Date): number | undefined {
  const at = parseInstantTime(time);
  return at === undefined ? undefined : Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000));
}

function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return 0;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
}

export async function tableStatus(table: HudiTable, options: { now?: Date; smallFileLimit?: number } = {}): Promise<TableStatus> {
  const now = options.now ?? new Date();
  const smallFileLimit = options.smallFileLimit ?? Number(table.config.properties.get('hoodie.parquet.small.file.limit') ?? WRITE_KEYS.smallFileLimit.default);
  const { timeline, storage, config } = table;
  const pending = timeline.pending().map((instant) => ({
    instant: instant.time,
    action: instant.action,
    state: instant.state as 'REQUESTED' | 'INFLIGHT',
    ageSeconds: ageOf(instant.time, now),
  }));

  const [clustering, history, archiveListing, view] = await Promise.all([
    lastCompletedClustering(storage, timeline),
    table.archivedHistory(),
    storage.listDir(table.archiveFolder),
    table.fileSystemView(),
  ]);
  const lastOf = (activeTime: string | undefined, archivedTime: string | undefined): LastServiceStatus | undefined => {
    const time = activeTime ?? archivedTime;
    return time === undefined ? undefined : { instant: time, ageSeconds: ageOf(time, now), archived: activeTime === undefined };
  };
  const archivedCompleted = history.instants.filter((instant) => instant.state === 'COMPLETED');
  const lastClean = lastOf(
    timeline
      .completed()
      .filter((i) => i.action === 'clean')
      .at(-1)?.time,
    archivedCompleted.filter((i) => i.action === 'clean').at(-1)?.time,
  );
  // An archived replacecommit may be an insert_overwrite as well as a clustering: only the active timeline says which.
  const lastClustering = lastOf(
    clustering?.instant.time,
    clustering === undefined ? archivedCompleted.filter((i) => i.action === 'replacecommit').at(-1)?.time : undefined,
  );
  // On a merge-on-read table a completed `commit` is a compaction (deltacommits carry the writes).
  const compaction =
    config.type === 'MERGE_ON_READ'
      ? {
          pending: pending.filter((instant) => instant.action === 'compaction'),
          last: lastOf(
            timeline
              .completed()
              .filter((i) => i.action === 'commit')
              .at(-1)?.time,
            archivedCompleted.filter((i) => i.action === 'commit').at(-1)?.time,
          ),
        }
      : undefined;
  const newestArchiveFile = archiveListing.files.reduce<number | undefined>(
    (newest, file) => (newest === undefined || file.modifiedMs > newest ? file.modifiedMs : newest),
    undefined,
  );

  const partitions = view.allPartitionPaths().map((partition): PartitionStatus => {
    const sizes = view
      .latestBaseFiles(partition)
      .map((file) => file.size)
      .sort((a, b) => a - b);
    return {
      partition,
      files: sizes.length,
      bytes: sizes.reduce((total, size) => total + size, 0),
      minBytes: sizes[0] ?? 0,
      medianBytes: median(sizes),
      maxBytes: sizes.at(-1) ?? 0,
      smallFiles: sizes.filter((size) => size < smallFileLimit).length,
    };
  });

  return {
    path: storage.uri,
    name: config.name,
    type: config.type,
    version: config.version,
    completedInstants: timeline.completed().length,
    lastCommit: timeline.lastCompletedWrite()?.time,
    pending,
    lastClustering,
    lastClean,
    compaction,
    lastArchive:
      newestArchiveFile === undefined
        ? undefined
        : {
            at: new Date(newestArchiveFile).toISOString(),
            ageSeconds: Math.max(0, Math.round((now.getTime() - newestArchiveFile) / 1000)),
            archivedInstants: history.instants.length,
          },
    partitions,
    smallFileLimit,
  };
}

export function formatAge(seconds: number | undefined): string {
  if (seconds === undefined) return 'age unknown';
  if (seconds < 120) return `${seconds} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h ago`;
  return `${(seconds / 86_400).toFixed(1)} d ago`;
}

function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 ** 2) return `${(value / 1024).toFixed(1)} KB`;
  if (value < 1024 ** 3) return `${(value / 1024 ** 2).toFixed(1)} MB`;
  return `${(value / 1024 ** 3).toFixed(2)} GB`;
}

export function formatTableStatus(status: TableStatus): string {
  const lines = [
    `${status.name}  ${status.type} v${status.version}  ${status.path}`,
    `  ${status.completedInstants} completed instant(s), last write ${status.lastCommit ?? 'none'}`,
  ];
  lines.push(status.pending.length === 0 ? '  pending: none' : `  pending: ${status.pending.length}`);
  for (const p of status.pending) lines.push(`    ${p.instant}  ${p.action.padEnd(13)}  ${p.state.padEnd(9)}  ${formatAge(p.ageSeconds)}`);
  const last = (label: string, service: LastServiceStatus | undefined): string =>
    `  last ${label}: ${service === undefined ? 'never' : `${service.instant} (${formatAge(service.ageSeconds)}${service.archived ? ', archived' : ''})`}`;
  lines.push(last('clustering', status.lastClustering), last('clean', status.lastClean));
  if (status.compaction !== undefined) {
    const { pending } = status.compaction;
    lines.push(
      `${last('compaction', status.compaction.last)}; pending compactions: ${pending.length === 0 ? 'none' : pending.map((p) => `${p.instant} ${p.state.toLowerCase()} (${formatAge(p.ageSeconds)})`).join(', ')}`,
    );
  }
  lines.push(
    `  last archive: ${status.lastArchive === undefined ? 'never' : `${status.lastArchive.at} (${formatAge(status.lastArchive.ageSeconds)}), ${status.lastArchive.archivedInstants} instant(s) archived`}`,
  );
  lines.push(`  files per partition (latest snapshot; small: < ${bytes(status.smallFileLimit)}):`);
  lines.push(
    `    ${'partition'.padEnd(24)} ${'files'.padStart(6)} ${'small'.padStart(6)} ${'total'.padStart(10)} ${'min'.padStart(10)} ${'median'.padStart(10)} ${'max'.padStart(10)}`,
  );
  for (const p of status.partitions) {
    lines.push(
      `    ${(p.partition || '(non-partitioned)').padEnd(24)} ${String(p.files).padStart(6)} ${String(p.smallFiles).padStart(6)} ${bytes(p.bytes).padStart(10)} ${bytes(p.minBytes).padStart(10)} ${bytes(p.medianBytes).padStart(10)} ${bytes(p.maxBytes).padStart(10)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
