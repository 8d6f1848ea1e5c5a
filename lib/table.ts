/**
 * A Hudi table on a Storage: its config, timeline and file-system view (HoodieTableMetaClient's job).
 */
import { HudiError } from './errors.js';
import { FileSystemView, fileGroupKey, type ListedPartition } from './fs-view.js';
import { mapWithConcurrency, settleAll } from './storage/concurrency.js';
import type { Storage } from './storage/port.js';
import { assertSupported, METAFOLDER, readTableConfig, type TableConfig } from './table-config.js';
import { isValidInstantTime } from './timeline/instant.js';
import { pendingClusteringPlans } from './timeline/pending-clustering.js';
import { loadTimeline, readCommitMetadata, type Timeline } from './timeline/timeline.js';

export const PARTITION_METAFILE = '.hoodie_partition_metadata';
/** How many folders are listed at once while discovering partitions. */
const LISTING_CONCURRENCY = 16;

export class HudiTable {
  private constructor(
    readonly storage: Storage,
    readonly config: TableConfig,
    readonly timeline: Timeline,
  ) {}

  /** Open a table, refusing versions and types this build does not handle. */
  static async open(storage: Storage, options: { mode?: 'read' | 'write'; allowUnsupported?: boolean } = {}): Promise<HudiTable> {
    const config = await readTableConfig(storage);
    if (!options.allowUnsupported) assertSupported(config, storage.uriOf(`${METAFOLDER}/hoodie.properties`), options.mode ?? 'read');
    const timeline = await loadTimeline(storage);
    return new HudiTable(storage, config, timeline);
  }

  /** Re-read the timeline (after another writer may have committed). */
  async reload(): Promise<HudiTable> {
    return new HudiTable(this.storage, this.config, await loadTimeline(this.storage));
  }

  get isPartitioned(): boolean {
    return this.config.partitionFields.length > 0;
  }

  /** The view of committed file groups, optionally as of an instant time (time travel). */
  async fileSystemView(options: { asOf?: string } = {}): Promise<FileSystemView> {
    let timeline = this.timeline;
    if (options.asOf !== undefined) {
      if (!isValidInstantTime(options.asOf)) {
        throw new HudiError(`"${options.asOf}" is not an instant time`, { fix: 'give --as-of as yyyyMMddHHmmssSSS, e.g. 20240707001301554 (see `hudi-serverless timeline`)' });
      }
      timeline = timeline.asOf(options.asOf);
    }
    const [partitions, replacedFileGroups, pendingClusteringFileGroups] = await settleAll([
      listPartitions(this.storage),
      this.replacedFileGroups(timeline),
      this.pendingClusteringFileGroups(),
    ]);
    return new FileSystemView({ partitions, timeline, replacedFileGroups, pendingClusteringFileGroups });
  }

  /** File groups named in completed replacecommits on the given timeline. */
  async replacedFileGroups(timeline: Timeline = this.timeline): Promise<Set<string>> {
    const replaceInstants = timeline.completed().filter((i) => i.action === 'replacecommit');
    const metadatas = await mapWithConcurrency(replaceInstants, LISTING_CONCURRENCY, (instant) => readCommitMetadata(this.storage, instant));
    const replaced = new Set<string>();
    for (const metadata of metadatas) {
      for (const [partition, fileIds] of Object.entries(metadata.partitionToReplaceFileIds ?? {})) {
        for (const fileId of fileIds) replaced.add(fileGroupKey(partition, fileId));
      }
    }
    return replaced;
  }

  /** File groups that a pending (requested or inflight) clustering plan will rewrite. */
  async pendingClusteringFileGroups(): Promise<Set<string>> {
    const plans = await pendingClusteringPlans(this.storage, this.timeline);
    const keys = new Set<string>();
    for (const { plan } of plans) {
      for (const group of plan.inputGroups) for (const slice of group.slices) keys.add(fileGroupKey(slice.partitionPath, slice.fileId));
    }
    return keys;
  }
}

/**
 * Discover partitions by walking folders from the base path (bounded parallel listing); a folder holding
 * `.hoodie_partition_metadata` is a partition and its files are kept. Folders starting with '.' are skipped (a plain `__HIVE_DEFAULT_PARTITION__` folder is a partition).
 */
export async function listPartitions(storage: Storage): Promise<ListedPartition[]> {
  const found: ListedPartition[] = [];
  let frontier: string[] = [''];
  while (frontier.length > 0) {
    const listings = await mapWithConcurrency(frontier, LISTING_CONCURRENCY, async (dir) => ({ dir, listing: await storage.listDir(dir) }));
    const next: string[] = [];
    for (const { dir, listing } of listings) {
      const names = listing.files.map((f) => ({ name: f.path.slice(f.path.lastIndexOf('/') + 1), size: f.size }));
      if (names.some((f) => f.name === PARTITION_METAFILE)) {
        found.push({ partitionPath: dir, files: names });
        continue;
      }
      for (const sub of listing.dirs) {
        const name = sub.replace(/\/$/, '').slice(sub.replace(/\/$/, '').lastIndexOf('/') + 1);
        if (name.startsWith('.')) continue;
        next.push(dir === '' ? name : `${dir}/${name}`);
      }
    }
    frontier = next;
  }
  return found.sort((a, b) => a.partitionPath.localeCompare(b.partitionPath));
}
