/**
 * Tables whose timeline Hudi 1.x archives into its LSM history (`.hoodie/timeline/history/`), and Hudi's own view
 * of that history. Shared by the fixture script (`test/hudi/make-1x-history-fixtures.ts`) and the interop tests;
 * our archiver's run, history and active timeline, as the interop tests compare them with Hudi's.
 *
 * The keys make the archiver run after almost every write: one cleaned commit retained, two to four completed
 * instants kept on the active timeline, and a timeline compaction batch of three files, so a run of writes gives
 * level-0 files, their compaction into level 1, and the cleaning of the compacted files.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ArchiveResult, runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { historyFolder, readTimelineHistory, type TimelineHistory } from '../../lib/timeline/history/index.js';
import type { HudiHarness, JavaExpression } from './hudi.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';

/** Archive early and often: see the module comment. */
export const ARCHIVING_OPTIONS: Readonly<Record<string, string>> = {
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
  // The metadata table would hold archival back until its own compaction; it has nothing to do with the history.
  'hoodie.metadata.enable': 'false',
  'hoodie.clean.commits.retained': '1',
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
  'hoodie.timeline.compaction.batch.size': '3',
  'hoodie.embed.timeline.server': 'false',
  'hoodie.insert.shuffle.parallelism': '2',
  'hoodie.upsert.shuffle.parallelism': '2',
};

export interface ArchivingWrites {
  /** The number of the first write (rows and names follow it). Default 1. */
  readonly first?: number;
  /** The write that is an insert_overwrite (a replacecommit with a plan); none when undefined. Default 4. */
  readonly insertOverwrite?: number | undefined;
  /** More options: a table type, inline compaction or clustering. */
  readonly options?: Readonly<Record<string, string>>;
}

/** Merge-on-read, compacted inline every two delta commits: commits with compaction plans in the history. */
export const INLINE_COMPACTION: Readonly<Record<string, string>> = {
  'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
  'hoodie.compact.inline': 'true',
  'hoodie.compact.inline.max.delta.commits': '2',
};

/** Clustered inline every two commits: replacecommits with clustering plans in the history. */
export const INLINE_CLUSTERING: Readonly<Record<string, string>> = {
  'hoodie.clustering.inline': 'true',
  'hoodie.clustering.inline.max.commits': '2',
};

/** `writes` upserts of a few rows each (see ArchivingWrites). */
export async function writeArchivingTable(hudi: HudiHarness, path: string, name: string, writes: number, how: ArchivingWrites = {}): Promise<void> {
  const first = how.first ?? 1;
  const insertOverwrite = 'insertOverwrite' in how ? how.insertOverwrite : 4;
  for (let i = first; i < first + writes; i++) {
    const rows = [0, 1, 2].map((k) => ({ id: (i % 4) * 3 + k, name: `v${i}-${k}`, ts: i, dt: k % 2 === 0 ? '2024-01-01' : '2024-01-02' }));
    const operation = i === insertOverwrite ? 'insert_overwrite' : 'upsert';
    await hudi.write(path, {
      schema: SCHEMA,
      rows,
      options: { ...ARCHIVING_OPTIONS, ...how.options, 'hoodie.table.name': name, 'hoodie.datasource.write.operation': operation },
    });
  }
}

/** One archived instant as Hudi's ArchivedTimelineV2 reports it; metadata as base64, null when it has none. */
export interface HudiArchivedInstant {
  requestedTime: string;
  completionTime: string;
  action: string;
  state: string;
  metadata: string | null;
}

/** Our reading of an LSM history in the shape of Hudi's report ({@link hudiArchivedInstants}). */
export function historyAsHudiReports(history: TimelineHistory): HudiArchivedInstant[] {
  return history.instants.map((instant) => ({
    requestedTime: instant.requestedTime,
    completionTime: instant.completionTime,
    action: instant.action,
    state: 'COMPLETED',
    metadata: instant.metadata === null ? null : Buffer.from(instant.metadata.bytes).toString('base64'),
  }));
}

/** Spark's own clean and archive after each of its commits, tight enough to act after one commit on a small table. */
export const SPARK_SERVICES_EVERY_COMMIT: Readonly<Record<string, string>> = {
  'hoodie.clean.automatic': 'true',
  'hoodie.clean.commits.retained': '1',
  'hoodie.archive.automatic': 'true',
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
};

function metaClient(path: string): JavaExpression {
  const hadoopConf: JavaExpression = { call: 'hadoopConfiguration', on: { static: 'org.apache.spark.SparkContext.getOrCreate' } };
  const storageConf: JavaExpression = { static: 'org.apache.hudi.hadoop.fs.HadoopFSUtils.getStorageConf', args: [hadoopConf] };
  const builder: JavaExpression = { static: 'org.apache.hudi.common.table.HoodieTableMetaClient.builder' };
  return {
    call: 'build',
    on: { call: 'setBasePath', on: { call: 'setConf', on: builder, args: [storageConf] }, args: [path] },
  };
}

// HoodieInstant.toString in 1.x: `[<requested>__<completion>__<action>__<state>]`.
const INSTANT_TEXT = /^\[(\d+)__(\d+)__([a-z]+)__([A-Z]+)\]$/;

/**
 * Hudi's archived timeline of the table at `path`: `metaClient.getArchivedTimeline("0")` (every archived instant,
 * loaded with its metadata bytes, as ArchivedTimelineV2 loads them), its instants in Hudi's order and for each
 * `getInstantDetails`.
 */
export async function hudiArchivedInstants(hudi: HudiHarness, path: string): Promise<HudiArchivedInstant[]> {
  // Loaded once and kept in the JVM: each instant's details come from the same loaded timeline.
  await hudi.jvmEval({ keep: 'archived-timeline', value: { call: 'getArchivedTimeline', on: metaClient(path), args: ['0'] } });
  const timeline: JavaExpression = { kept: 'archived-timeline' };
  const texts = (await hudi.jvmEval({ keep: 'archived-instants', value: { call: 'getInstants', on: timeline } })) as unknown;
  if (!Array.isArray(texts)) throw new Error(`getInstants gave ${JSON.stringify(texts)}`);
  const result: HudiArchivedInstant[] = [];
  for (let index = 0; index < texts.length; index++) {
    const text = String(texts[index]);
    const match = INSTANT_TEXT.exec(text);
    if (match === null) throw new Error(`unexpected HoodieInstant text ${text}`);
    const instant: JavaExpression = { call: 'get', on: { kept: 'archived-instants' }, args: [index] };
    const details = (await hudi.jvmEval({ call: 'orElse', on: { call: 'getInstantDetails', on: timeline, args: [instant] }, args: [null] })) as unknown;
    const metadata = details === null ? null : String(details);
    result.push({ requestedTime: match[1]!, completionTime: match[2]!, action: match[3]!, state: match[4]!, metadata });
  }
  return result;
}

/** Our archiver on the local table at `path` with Hudi's keys `props` (archival, cleaner, hoodie.metadata.enable). */
export async function ourArchive(path: string, props: Record<string, string>, storage: LocalStorage = new LocalStorage(path)): Promise<ArchiveResult> {
  const properties = new Map(Object.entries(props));
  return runArchive(await HudiTable.open(storage, { mode: 'archive' }), {
    config: archivalConfigFromProperties(properties),
    cleanConfig: cleanConfigFromProperties(properties),
    lock: new StorageLockProvider(storage),
    properties,
  });
}

/** Our reading of a table's history (on local disk unless `storage` is given): its files, and each instant's times, action and both byte columns, as base64. */
export async function ourHistory(table: string, storage: Storage = new LocalStorage(table)) {
  const history = await readTimelineHistory(storage, historyFolder());
  return {
    files: history.manifest.files.map((file) => file.fileName),
    instants: history.instants.map((instant) => ({
      requestedTime: instant.requestedTime,
      completionTime: instant.completionTime,
      action: instant.action,
      metadata: instant.metadata === null ? null : Buffer.from(instant.metadata.bytes).toString('base64'),
      plan: instant.plan === null ? null : `${instant.plan.recordName} ${Buffer.from(instant.plan.bytes).toString('base64')}`,
    })),
  };
}

/** The active timeline's instant files (history and checksums left out), sorted. */
export function activeTimeline(table: string): string[] {
  return readdirSync(join(table, '.hoodie', 'timeline'), { withFileTypes: true })
    .filter((entry) => entry.isFile() && /^\d/.test(entry.name))
    .map((entry) => entry.name)
    .sort();
}
