/**
 * Synthetic tables for the scale benchmarks, as VirtualTrees (storage.ts): the partitions' file listings and the
 * timeline are generated from a few numbers, so the services' real code paths (listing, timeline, commit metadata,
 * plans) run unchanged over millions of files without a disk or a process holding them.
 *
 * A data table: `partitions` folders `dt=00000`…, `groupsPerPartition` file groups each, `versions` base files per
 * group (zero bytes on read; listed with a size). Commit k (0 ≤ k < versions × commitsPerRound) wrote version
 * floor(k / commitsPerRound) of every group j (over the whole table) with j ≡ k (mod commitsPerRound); the last
 * `activeCommits` commits are on the active timeline (`.hoodie`, requested, inflight and completed files, the
 * completed one naming its files in write stats), the earlier ones were archived (their files are committed, being
 * older than the active timeline). So the newest versions of activeCommits / commitsPerRound of the groups are named
 * by active commits, the rest only by listings.
 *
 * A long timeline (for the archiver): `instants` completed instants one second apart, every `cleanEvery`-th a clean
 * (its plan and metadata in Avro), the rest commits writing two files; timeline layout 1 (`.hoodie`) or 2
 * (`.hoodie/timeline`, `<requested>_<completion>.<action>`, Avro commit metadata).
 */
import { encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { newWriteStat, serializeCommitMetadata, type WriteStat } from '../../lib/timeline/commit-metadata.js';
import { formatInstantTime, parseInstantTime } from '../../lib/timeline/instant.js';
import { encodeLayout2CommitMetadata } from '../../lib/timeline/layout.js';
import { USERS_SCHEMA } from '../../test/helpers/small-files-table.js';
import type { VirtualFolder, VirtualTree } from './storage.js';

export const PARTITION_METAFILE = '.hoodie_partition_metadata';
/** Bumped whenever the generated names or contents change (it keys the content cache). */
export const GENERATOR_VERSION = 2;
const SCHEMA_TEXT = JSON.stringify(USERS_SCHEMA);
const encoder = new TextEncoder();

export interface DataTableShape {
  readonly partitions: number;
  readonly groupsPerPartition: number;
  readonly versions: number;
  readonly commitsPerRound: number;
  readonly activeCommits: number;
  /** Mean base file size (sizes vary ±50%). */
  readonly fileBytes: number;
}

export function partitionName(p: number): string {
  return `dt=${String(p).padStart(5, '0')}`;
}

/** A UUID-like file id (starting with a letter, so it never passes for a bucket index's) and `-0`, as Hudi forms them. */
function fileIdOf(j: number): string {
  return `f${j.toString(16).padStart(7, '0')}-0000-4000-8000-${((j * 7919) % 0xffffffffffff).toString(16).padStart(12, '0')}-0`;
}

const BASE_MS = Date.UTC(2023, 0, 1);

/** The time of commit k: one minute apart from 2023-01-01. */
function commitTime(k: number): string {
  return formatInstantTime(new Date(BASE_MS + k * 60_000), 'UTC');
}

export class DataTable implements VirtualTree {
  readonly groups: number;
  readonly commits: number;
  readonly firstActive: number;
  private readonly times: string[];
  private readonly timeIndex: Map<string, number>;
  private readonly partitionNames: string[];
  private readonly partitionIndex: Map<string, number>;
  private readonly timelineFolder: VirtualFolder;

  constructor(readonly shape: DataTableShape) {
    if (shape.activeCommits > shape.commitsPerRound) throw new Error('activeCommits must not exceed commitsPerRound');
    this.groups = shape.partitions * shape.groupsPerPartition;
    this.commits = shape.versions * shape.commitsPerRound;
    this.firstActive = this.commits - shape.activeCommits;
    this.times = Array.from({ length: this.commits }, (_, k) => commitTime(k));
    this.timeIndex = new Map(this.times.map((time, k) => [time, k]));
    this.partitionNames = Array.from({ length: shape.partitions }, (_, p) => partitionName(p));
    this.partitionIndex = new Map(this.partitionNames.map((name, p) => [name, p]));
    this.timelineFolder = this.timeline();
  }

  /** Total base files. */
  get files(): number {
    return this.groups * this.shape.versions;
  }

  /** The commit that wrote version v of group j. */
  commitOf(j: number, v: number): number {
    return v * this.shape.commitsPerRound + (j % this.shape.commitsPerRound);
  }

  /** Active commit times, oldest first. */
  activeTimes(): string[] {
    return this.times.slice(this.firstActive);
  }

  fileName(j: number, v: number): string {
    return `${fileIdOf(j)}_1-0-1_${this.times[this.commitOf(j, v)]}.parquet`;
  }

  fileSize(j: number): number {
    return Math.max(1, Math.round(this.shape.fileBytes * (0.5 + ((j * 7919) % 1000) / 1000)));
  }

  dirs(dir: string): readonly string[] {
    return dir === '' ? this.partitionNames : [];
  }

  contentFolders(): readonly string[] {
    return ['.hoodie'];
  }

  folder(dir: string): VirtualFolder | undefined {
    if (dir === '.hoodie') return this.timelineFolder;
    const p = this.partitionIndex.get(dir);
    return p === undefined ? undefined : this.partition(p);
  }

  private partition(p: number): VirtualFolder {
    const { groupsPerPartition: G, versions: V } = this.shape;
    const first = p * G;
    const metafile = encoder.encode(`#partition metadata\ncommitTime=${this.times[0]}\npartitionDepth=1\n`);
    return {
      count: G * V + 1,
      name: (index) => (index === 0 ? PARTITION_METAFILE : this.fileName(first + Math.floor((index - 1) / V), (index - 1) % V)),
      size: (index) => (index === 0 ? metafile.length : this.fileSize(first + Math.floor((index - 1) / V))),
      bytes: (index) => (index === 0 ? metafile : new Uint8Array(0)),
      indexOf: (name) => {
        if (name === PARTITION_METAFILE) return 0;
        const j = Number.parseInt(name.slice(1, 8), 16);
        const g = j - first;
        if (!(g >= 0 && g < G)) return -1;
        const k = this.timeIndex.get(name.slice(name.lastIndexOf('_') + 1, -'.parquet'.length));
        if (k === undefined) return -1;
        const v = Math.floor(k / this.shape.commitsPerRound);
        if (v >= V || this.fileName(j, v) !== name) return -1;
        return 1 + g * V + v;
      },
    };
  }

  /** The write stats of commit k. */
  private statsOf(k: number): Record<string, WriteStat[]> {
    const S = this.shape.commitsPerRound;
    const v = Math.floor(k / S);
    const stats: Record<string, WriteStat[]> = {};
    for (let j = k % S; j < this.groups; j += S) {
      const partition = this.partitionNames[Math.floor(j / this.shape.groupsPerPartition)]!;
      const size = this.fileSize(j);
      (stats[partition] ??= []).push(
        newWriteStat({
          fileId: fileIdOf(j),
          path: `${partition}/${this.fileName(j, v)}`,
          partitionPath: partition,
          prevCommit: v === 0 ? 'null' : this.times[this.commitOf(j, v - 1)]!,
          numWrites: 100,
          numInserts: v === 0 ? 100 : 0,
          numUpdateWrites: v === 0 ? 0 : 100,
          totalWriteBytes: size,
          fileSizeInBytes: size,
        }),
      );
    }
    return stats;
  }

  private timeline(): VirtualFolder {
    const C = this.shape.activeCommits;
    const suffixes = ['.commit.requested', '.inflight', '.commit'];
    const parse = (name: string): number => {
      const dot = name.indexOf('.');
      const k = this.timeIndex.get(name.slice(0, dot));
      const s = suffixes.indexOf(name.slice(dot));
      if (k === undefined || k < this.firstActive || s < 0) return -1;
      return (k - this.firstActive) * 3 + s;
    };
    return {
      count: C * 3,
      name: (index) => `${this.times[this.firstActive + Math.floor(index / 3)]}${suffixes[index % 3]}`,
      size: (index) => (index % 3 === 2 ? 1000 : 0),
      indexOf: parse,
      modifiedMs: (index) => BASE_MS + (this.firstActive + Math.floor(index / 3)) * 60_000 + 30_000,
      bytes: (index) => {
        if (index % 3 !== 2) return new Uint8Array(0);
        const k = this.firstActive + Math.floor(index / 3);
        return encoder.encode(
          serializeCommitMetadata({
            partitionToWriteStats: this.statsOf(k),
            compacted: false,
            extraMetadata: { schema: SCHEMA_TEXT },
            operationType: k < this.shape.commitsPerRound ? 'INSERT' : 'UPSERT',
          }),
        );
      },
    };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A long timeline.

export interface TimelineShape {
  readonly instants: number;
  readonly cleanEvery: number;
  readonly layout: 1 | 2;
}

const INSTANT_BASE_MS = Date.UTC(2024, 0, 1);
const instantTime = (k: number): string => formatInstantTime(new Date(INSTANT_BASE_MS + k * 1000), 'UTC');
const completionTime = (k: number): string => formatInstantTime(new Date(INSTANT_BASE_MS + k * 1000 + 500), 'UTC');

export class LongTimeline implements VirtualTree {
  readonly folderPath: string;
  private readonly timelineFolder: VirtualFolder;
  /** Each instant's file names, made once (listings ask for them again and again). */
  private readonly nameCache: ([string, string, string] | undefined)[];

  constructor(readonly shape: TimelineShape) {
    this.folderPath = shape.layout === 1 ? '.hoodie' : '.hoodie/timeline';
    this.nameCache = new Array(shape.instants);
    this.timelineFolder = this.build();
  }

  isClean(k: number): boolean {
    return k % this.shape.cleanEvery === this.shape.cleanEvery - 1;
  }

  dirs(): readonly string[] {
    return [];
  }

  contentFolders(): readonly string[] {
    return [this.folderPath];
  }

  folder(dir: string): VirtualFolder | undefined {
    return dir === this.folderPath ? this.timelineFolder : undefined;
  }

  private names(k: number): [string, string, string] {
    const known = this.nameCache[k];
    if (known !== undefined) return known;
    const made = this.makeNames(k);
    this.nameCache[k] = made;
    return made;
  }

  private makeNames(k: number): [string, string, string] {
    const time = instantTime(k);
    const completed = this.shape.layout === 1 ? time : `${time}_${completionTime(k)}`;
    return this.isClean(k)
      ? [`${time}.clean.requested`, `${time}.clean.inflight`, `${completed}.clean`]
      : [`${time}.commit.requested`, `${time}.inflight`, `${completed}.commit`];
  }

  private commitBytes(k: number): Uint8Array {
    const partition = partitionName(k % 10);
    const stats = [0, 1].map((n) => {
      const fileId = fileIdOf(k * 2 + n);
      return newWriteStat({
        fileId,
        path: `${partition}/${fileId}_1-0-1_${instantTime(k)}.parquet`,
        partitionPath: partition,
        numWrites: 100,
        numInserts: 100,
        totalWriteBytes: 10_000,
        fileSizeInBytes: 10_000,
      });
    });
    const metadata = {
      partitionToWriteStats: { [partition]: stats },
      compacted: false,
      extraMetadata: { schema: SCHEMA_TEXT },
      operationType: 'UPSERT' as const,
    };
    return this.shape.layout === 1 ? encoder.encode(serializeCommitMetadata(metadata)) : encodeLayout2CommitMetadata(metadata, 'commit');
  }

  private cleanPlanBytes(k: number): Uint8Array {
    const retain = instantTime(Math.max(0, k - 10));
    const partition = partitionName(k % 10);
    return encodeTimelineAvro('cleanerPlan', {
      earliestInstantToRetain: { timestamp: retain, action: 'commit', state: 'COMPLETED' },
      lastCompletedCommitTimestamp: instantTime(k - 1),
      policy: 'KEEP_LATEST_COMMITS',
      filesToBeDeletedPerPartition: {},
      version: 2,
      filePathsToBeDeletedPerPartition: {
        [partition]: [{ filePath: `s3://bench-bucket/tables/synthetic/${partition}/${fileIdOf(k)}_1-0-1_${retain}.parquet`, isBootstrapBaseFile: false }],
      },
      partitionsToBeDeleted: [],
      extraMetadata: {},
    });
  }

  private cleanMetadataBytes(k: number): Uint8Array {
    const retain = instantTime(Math.max(0, k - 10));
    const partition = partitionName(k % 10);
    const file = `${fileIdOf(k)}_1-0-1_${retain}.parquet`;
    return encodeTimelineAvro('cleanMetadata', {
      startCleanTime: instantTime(k),
      timeTakenInMillis: 100,
      totalFilesDeleted: 1,
      earliestCommitToRetain: retain,
      lastCompletedCommitTimestamp: instantTime(k - 1),
      partitionMetadata: {
        [partition]: {
          partitionPath: partition,
          policy: 'KEEP_LATEST_COMMITS',
          deletePathPatterns: [file],
          successDeleteFiles: [file],
          failedDeleteFiles: [],
          isPartitionDeleted: false,
        },
      },
      version: 2,
      bootstrapPartitionMetadata: {},
      extraMetadata: {},
    });
  }

  private build(): VirtualFolder {
    const N = this.shape.instants;
    return {
      count: N * 3,
      name: (i) => this.names(Math.floor(i / 3))[i % 3]!,
      size: (i) => (i % 3 === 2 ? 1000 : 0),
      modifiedMs: (i) => INSTANT_BASE_MS + Math.floor(i / 3) * 1000 + (i % 3) * 200,
      indexOf: (name) => {
        const time = parseInstantTime(name.slice(0, 17), 'UTC');
        if (time === undefined) return -1;
        const k = (time.getTime() - INSTANT_BASE_MS) / 1000;
        if (!Number.isInteger(k) || k < 0 || k >= N) return -1;
        const state = this.names(k).indexOf(name);
        return state < 0 ? -1 : k * 3 + state;
      },
      bytes: (i) => {
        const k = Math.floor(i / 3);
        const state = i % 3;
        if (this.isClean(k)) return state === 2 ? this.cleanMetadataBytes(k) : this.cleanPlanBytes(k);
        return state === 2 ? this.commitBytes(k) : new Uint8Array(0);
      },
    };
  }
}
