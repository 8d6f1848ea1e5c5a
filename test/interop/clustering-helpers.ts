/**
 * Shared pieces of the clustering interop tests: the tiny Spark-written table they cluster (several small base
 * files per partition, metadata table off), our `cluster` command on it, and row comparisons across readers.
 */
import assert from 'node:assert/strict';
import type { Row } from '../../lib/engine/row-format.js';
import type { Storage } from '../../lib/storage/port.js';
import { jsonLines, propertiesFile, runCli } from '../helpers/cli.js';
import { canonicalRows, type HudiHarness } from '../helpers/hudi.js';

export const SCHEMA = 'id BIGINT, name STRING, score DOUBLE, qty INT, ts TIMESTAMP, dt STRING';

/** Spark datasource options of every write: metadata table off, no packing of inserts into existing files. */
export function sparkOptions(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'hoodie.table.name': 'clustered',
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.table.timeline.timezone': 'UTC',
    'hoodie.metadata.enable': 'false',
    // Every insert batch becomes new base files instead of growing the previous ones.
    'hoodie.parquet.small.file.limit': '0',
    'hoodie.embed.timeline.server': 'false',
    'hoodie.insert.shuffle.parallelism': '1',
    'hoodie.upsert.shuffle.parallelism': '1',
    ...extra,
  };
}

/** A row of the table; `version` > 0 is an update of the row written with version 0. */
export function tableRow(id: number, partitions: readonly string[], version = 0): Record<string, unknown> {
  return {
    id,
    name: `n${id}-v${version}`,
    score: ((id * 37) % 11) + 0.5 + version,
    qty: (id * 13) % 7,
    ts: new Date(Date.UTC(2024, 0, 1, version, 0, id)).toISOString(),
    dt: partitions[id % partitions.length]!,
  };
}

/** `batches` Spark inserts of `rowsPerBatch` rows each (ids 1..n): one small base file per partition and batch. */
export async function writeSmallFiles(hudi: HudiHarness, path: string, partitions: readonly string[], batches: number, rowsPerBatch: number): Promise<number> {
  let id = 0;
  for (let batch = 0; batch < batches; batch++) {
    const rows = Array.from({ length: rowsPerBatch }, () => tableRow(++id, partitions));
    await hudi.write(path, { schema: SCHEMA, rows, options: sparkOptions({ 'hoodie.datasource.write.operation': 'insert' }) });
  }
  return id;
}

/** Rows as canonical strings, without `_hoodie_file_name` (clustering moves rows to new files, nothing else). */
export function withoutFileName(rows: readonly Row[]): string[] {
  return canonicalRows(rows.map(({ _hoodie_file_name: _, ...rest }) => rest));
}

export interface ClusterCliResult {
  instantTime: string;
  groups: { index: number; partitionPath: string; inputFiles: number; numOutputFileGroups: number }[];
}

/**
 * `hudi-serverless cluster <table> --mode scheduleAndExecute --props FILE --json` with Hudi's keys; with mode
 * `schedule` the plan is only written (instantTime is then the planned instant).
 */
export function clusterWithCli(table: string, props: Record<string, string>, mode: 'schedule' | 'scheduleAndExecute' = 'scheduleAndExecute'): ClusterCliResult {
  const run = runCli(['cluster', table, '--mode', mode, '--props', propertiesFile(props), '--json']);
  assert.equal(run.code, 0, `cluster failed:\n${run.stderr}`);
  const [result] = jsonLines(run.stdout) as [{ instantTime: string | null; scheduled: { instantTime: string; groups: ClusterCliResult['groups'] } | null }];
  assert.ok(result.scheduled !== null && (mode === 'schedule' || result.instantTime === result.scheduled.instantTime), `nothing was clustered:\n${run.stderr}`);
  return { instantTime: result.scheduled.instantTime, groups: result.scheduled.groups };
}

export interface ReplaceCommitJson {
  partitionToWriteStats: Record<string, { fileId: string; path: string; numWrites: number; numUpdateWrites: number; numInserts: number }[]>;
  partitionToReplaceFileIds?: Record<string, string[]>;
  operationType: string;
}

/** A completed commit or replacecommit's JSON, parsed here rather than by lib/. */
export async function commitJson(storage: Storage, instantTime: string, action: 'commit' | 'replacecommit'): Promise<ReplaceCommitJson> {
  return JSON.parse(Buffer.from(await storage.get(`.hoodie/${instantTime}.${action}`)).toString('utf8')) as ReplaceCommitJson;
}

/** Instant files in `.hoodie/` (not its subfolders). */
export async function timelineFiles(storage: Storage): Promise<string[]> {
  const { files } = await storage.listDir('.hoodie');
  return files
    .map((file) => file.path.slice(file.path.lastIndexOf('/') + 1))
    .filter((name) => /^\d{17}\./.test(name))
    .sort();
}

/** Base files (`.parquet`) of a partition folder. */
export async function baseFiles(storage: Storage, partition: string): Promise<string[]> {
  const { files } = await storage.listDir(partition);
  return files
    .map((file) => file.path.slice(file.path.lastIndexOf('/') + 1))
    .filter((name) => name.endsWith('.parquet'))
    .sort();
}

/**
 * Each row's `_hoodie_file_name` is one of the clustering's output files of its partition, and each output file
 * holds as many rows as its write stat says: the meta column names where the row really is.
 */
export function assertFileNamesMatchOutputs(rows: readonly Row[], commit: ReplaceCommitJson, partitions: readonly string[]): void {
  for (const partition of partitions) {
    const stats = commit.partitionToWriteStats[partition] ?? [];
    const expected = Object.fromEntries(stats.map((stat) => [stat.path.slice(stat.path.lastIndexOf('/') + 1), stat.numWrites]));
    const counted: Record<string, number> = {};
    for (const row of rows.filter((candidate) => candidate['_hoodie_partition_path'] === partition)) {
      const name = row['_hoodie_file_name'] as string;
      counted[name] = (counted[name] ?? 0) + 1;
    }
    assert.deepEqual(counted, expected, `rows per file in ${partition}`);
  }
}
