/**
 * Hand-written tables for the cleaner and archiver: a copy-on-write table on a local folder whose base files are
 * empty placeholders and whose timeline is written instant by instant (commit JSON with Hudi's write stats, Avro
 * clustering plans and savepoints), so tests and the benchmark can say exactly which file every instant wrote.
 */
import { join } from 'node:path';
import { mapWithConcurrency } from '../../lib/storage/concurrency.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { baseFileName, joinPartitionPath } from '../../lib/table/file-system-view.js';
import { createTable } from '../../lib/table/init.js';
import { PARTITION_METAFILE } from '../../lib/table/table.js';
import { encodeTimelineAvro, type HoodieRequestedReplaceMetadata } from '../../lib/timeline/avro-files.js';
import { type CommitMetadata, newWriteStat, serializeCommitMetadata, type WriteOperationType, type WriteStat } from '../../lib/timeline/commit-metadata.js';
import { formatInstantTime } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { instantPath } from '../../lib/timeline/timeline.js';
import { tempDir } from './paths.js';

export interface FileWrite {
  readonly partition: string;
  readonly fileId: string;
}

/** Instant times one second apart from 2024-01-01T00:00:00Z: t(1) = 20240101000001000. */
export function t(index: number): string {
  return formatInstantTime(new Date(Date.UTC(2024, 0, 1) + index * 1000), 'UTC');
}

/** A file group id as Hudi forms them: a UUID and `-0`. */
export function fileId(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}-0`;
}

export class SyntheticTable {
  private readonly partitionsMade = new Set<string>();

  private constructor(
    readonly dir: string,
    readonly storage: LocalStorage,
    readonly partitioned: boolean,
  ) {}

  static async create(options: { partitioned?: boolean; dir?: string; name?: string } = {}): Promise<SyntheticTable> {
    const dir = options.dir ?? join(tempDir('synthetic-table-'), options.name ?? 'table');
    const storage = new LocalStorage(dir);
    const partitioned = options.partitioned ?? true;
    await createTable(storage, {
      tableName: options.name ?? 'synthetic',
      recordKeyFields: ['id'],
      partitionFields: partitioned ? ['dt'] : [],
      precombineField: 'ts',
      extraProperties: { 'hoodie.table.timeline.timezone': 'UTC' },
    });
    return new SyntheticTable(dir, storage, partitioned);
  }

  /** The base file an instant writes for a file group. */
  static fileOf(write: FileWrite, time: string): string {
    return joinPartitionPath(write.partition, baseFileName(write.fileId, '0-1-1', time));
  }

  private async writeFiles(time: string, writes: readonly FileWrite[]): Promise<WriteStat[]> {
    for (const write of writes) await this.partitionMetadata(write.partition, time);
    return mapWithConcurrency(writes, 16, async (write) => {
      const path = SyntheticTable.fileOf(write, time);
      await this.storage.put(path, '');
      return newWriteStat({ fileId: write.fileId, path, partitionPath: write.partition, numWrites: 1, numInserts: 1 });
    });
  }

  private async partitionMetadata(partition: string, time: string): Promise<void> {
    if (this.partitionsMade.has(partition)) return;
    this.partitionsMade.add(partition);
    await this.storage.put(
      joinPartitionPath(partition, PARTITION_METAFILE),
      `#partition metadata\ncommitTime=${time}\npartitionDepth=${partition === '' ? 0 : 1}\n`,
    );
  }

  private static metadataOf(stats: readonly WriteStat[], operationType: WriteOperationType, replaced?: Record<string, string[]>): CommitMetadata {
    const partitionToWriteStats: Record<string, WriteStat[]> = {};
    for (const stat of stats) (partitionToWriteStats[stat.partitionPath ?? ''] ??= []).push(stat);
    return {
      partitionToWriteStats,
      compacted: false,
      extraMetadata: { schema: '{"type":"record","name":"synthetic","fields":[{"name":"id","type":"long"}]}' },
      operationType,
      ...(replaced === undefined ? {} : { partitionToReplaceFileIds: replaced }),
    };
  }

  /** A completed commit writing (a new version of) each file group. */
  async commit(time: string, writes: readonly FileWrite[], operationType: WriteOperationType = 'UPSERT'): Promise<void> {
    const stats = await this.writeFiles(time, writes);
    await this.storage.put(instantPath({ time, action: 'commit', state: 'REQUESTED' }, TIMELINE_LAYOUT_1), '');
    await this.storage.put(instantPath({ time, action: 'commit', state: 'INFLIGHT' }, TIMELINE_LAYOUT_1), '');
    await this.storage.put(
      instantPath({ time, action: 'commit', state: 'COMPLETED' }, TIMELINE_LAYOUT_1),
      serializeCommitMetadata(SyntheticTable.metadataOf(stats, operationType)),
    );
  }

  /** A commit that wrote its files but never completed. */
  async pendingCommit(time: string, writes: readonly FileWrite[]): Promise<void> {
    await this.writeFiles(time, writes);
    await this.storage.put(instantPath({ time, action: 'commit', state: 'REQUESTED' }, TIMELINE_LAYOUT_1), '');
    await this.storage.put(instantPath({ time, action: 'commit', state: 'INFLIGHT' }, TIMELINE_LAYOUT_1), '');
  }

  /** A completed clustering: new file groups replace the given ones. */
  async clustering(time: string, replaced: readonly FileWrite[], written: readonly FileWrite[]): Promise<void> {
    const plan = this.clusteringPlan(replaced, time);
    await this.storage.put(instantPath({ time, action: 'replacecommit', state: 'REQUESTED' }, TIMELINE_LAYOUT_1), encodeTimelineAvro('requestedReplace', plan));
    await this.storage.put(instantPath({ time, action: 'replacecommit', state: 'INFLIGHT' }, TIMELINE_LAYOUT_1), '');
    const stats = await this.writeFiles(time, written);
    const byPartition: Record<string, string[]> = {};
    for (const group of replaced) (byPartition[group.partition] ??= []).push(group.fileId);
    await this.storage.put(
      instantPath({ time, action: 'replacecommit', state: 'COMPLETED' }, TIMELINE_LAYOUT_1),
      serializeCommitMetadata(SyntheticTable.metadataOf(stats, 'CLUSTER', byPartition)),
    );
  }

  /** A clustering plan that has not run (requested only). */
  async pendingClustering(time: string, groups: readonly (FileWrite & { readonly baseInstant: string })[]): Promise<void> {
    await this.storage.put(
      instantPath({ time, action: 'replacecommit', state: 'REQUESTED' }, TIMELINE_LAYOUT_1),
      encodeTimelineAvro('requestedReplace', this.clusteringPlan(groups, time)),
    );
  }

  private clusteringPlan(groups: readonly (FileWrite & { readonly baseInstant?: string })[], time: string): HoodieRequestedReplaceMetadata {
    return clusteringPlanOf(
      groups.map((group) => ({
        dataFilePath: this.storage.uriOf(SyntheticTable.fileOf(group, group.baseInstant ?? time)),
        fileId: group.fileId,
        partitionPath: group.partition,
      })),
    );
  }

  /** A completed savepoint of the commit at `time`, keeping `files` (storage paths of base files). */
  async savepoint(time: string, files: readonly string[]): Promise<void> {
    const partitionMetadata: Record<string, { partitionPath: string; savepointDataFile: string[] }> = {};
    for (const file of files) {
      const slash = file.lastIndexOf('/');
      const partition = slash < 0 ? '' : file.slice(0, slash);
      (partitionMetadata[partition] ??= { partitionPath: partition, savepointDataFile: [] }).savepointDataFile.push(file.slice(slash + 1));
    }
    await this.storage.put(instantPath({ time, action: 'savepoint', state: 'INFLIGHT' }, TIMELINE_LAYOUT_1), '');
    await this.storage.put(
      instantPath({ time, action: 'savepoint', state: 'COMPLETED' }, TIMELINE_LAYOUT_1),
      encodeTimelineAvro('savepointMetadata', { savepointedBy: 'test', savepointedAt: 0, comments: '', partitionMetadata, version: 1 }),
    );
  }

  /** Every base file on storage, sorted. */
  async baseFiles(): Promise<string[]> {
    return (await this.storage.listRecursive(''))
      .map((object) => object.path)
      .filter((path) => path.endsWith('.parquet'))
      .sort();
  }
}

/** A requested clustering plan (Hudi 0.15's Avro record) of one group of base-file slices, sorted and sized. */
export function clusteringPlanOf(
  slices: readonly { readonly dataFilePath: string; readonly fileId: string; readonly partitionPath: string | null }[],
): HoodieRequestedReplaceMetadata {
  return {
    operationType: 'CLUSTER',
    clusteringPlan: {
      inputGroups: [
        {
          slices: slices.map((slice) => ({ ...slice, deltaFilePaths: [], bootstrapFilePath: '', version: 1 })),
          metrics: {},
          numOutputFileGroups: 1,
          extraMetadata: null,
          version: 1,
        },
      ],
      strategy: { strategyClassName: 'org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy', strategyParams: {}, version: 1 },
      extraMetadata: {},
      version: 1,
      preserveHoodieMetadata: true,
    },
    extraMetadata: {},
    version: 1,
  };
}
