/**
 * Our writes and cleaner on merge-on-read CDC tables Hudi 0.15 (Spark 3.5.1) wrote. Spark writes a table (two
 * upserts), we upsert and delete (log appends the CDC reader infers from, a small-file merge with its cdc log file, a
 * new file group; then an append where the slice's cdc log counts as a log file), Spark upserts on top; a twin table gets the same writes from Spark alone. Spark's CDC query from
 * instant 0 returns the same changes on both, in each supplemental logging mode, and snapshot reads agree. Then Spark
 * compacts ours (the CDC query is unchanged) and our cleaner and Spark's (`CALL run_clean`), each on a copy, delete
 * the same files, the cdc log file of our merge's cleaned slice included.
 *
 * One Spark session for the file; each mode takes two tables of six Spark writes (ours: three).
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import type { Row } from '../../lib/engine/row-format.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi, withoutMetaColumns } from '../helpers/hudi.js';
import { cleanKeepingLatestCommits } from '../helpers/interop-writer.js';
import { tableFiles, tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const DT: Record<number, string> = { 0: 'a', 1: 'b' };
/** Ids 1–8 in partitions a and b; 9 and up in partition c. */
const row = (id: number, ts: number) => ({ id, name: `n${id}-${ts}`, ts, dt: id >= 9 ? 'c' : DT[id % 2]! });
const CDC_READ = {
  'hoodie.datasource.query.type': 'incremental',
  'hoodie.datasource.query.incremental.format': 'cdc',
  'hoodie.datasource.read.begin.instanttime': '0',
};

function options(mode: string, operation: string): Record<string, string> {
  return {
    ...mergeOnReadWriteOptions(1),
    'hoodie.table.cdc.supplemental.logging.mode': mode,
    'hoodie.table.name': 'cdc_mor',
    'hoodie.datasource.write.operation': operation,
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.table.timeline.timezone': 'UTC',
    'hoodie.table.cdc.enabled': 'true',
  };
}

let hudi: HudiHarness;

before(async () => {
  hudi = await startHudi();
});

after(async () => {
  await hudi?.close();
});

async function ourWrite(path: string, operation: WriteOperation, rows: readonly Row[]) {
  const input = join(tempDir('cdc-mor-write-'), 'batch.jsonl');
  await writeJsonLines(input, rows);
  return writeBatch(openStorage(path), { input: { file: input, format: 'jsonl' }, operation });
}

/** Spark and our reader read the same snapshot (without meta columns: the twins' file names differ). */
async function readAlike(path: string): Promise<string[]> {
  const spark = canonicalRows(withoutMetaColumns((await hudi.read(path)).rows));
  const ours = canonicalRows(withoutMetaColumns((await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true })).rows));
  assert.deepEqual(ours, spark, 'our reader reads what Spark reads');
  return spark;
}

/** The completed data-changing instants (delta commits), oldest first. */
function deltaCommits(path: string): string[] {
  return readdirSync(join(path, '.hoodie'))
    .filter((name) => name.endsWith('.deltacommit'))
    .map((name) => name.slice(0, -'.deltacommit'.length))
    .sort();
}

/**
 * Spark's CDC query as comparable changes: the commit by its place among the delta commits, images without meta
 * columns, and a missing before image as null (an AS_IS insert's is the text "null").
 */
async function comparableChanges(path: string): Promise<string[]> {
  const commits = deltaCommits(path);
  const image = (text: unknown) => {
    const parsed = text === null ? null : (JSON.parse(String(text)) as Row | null);
    return parsed === null ? null : Object.fromEntries(Object.entries(parsed).filter(([column]) => !column.startsWith('_hoodie_')));
  };
  const rows = (await hudi.read(path, { options: CDC_READ, meta: false })).rows;
  return canonicalRows(
    rows.map((r) => ({ op: r['op'] ?? null, commit: commits.indexOf(String(r['ts_ms'])), before: image(r['before']), after: image(r['after']) })),
  );
}

/** Per partition, how many base files, log files and cdc log files it holds. */
function fileKinds(path: string): string[] {
  const counts = new Map<string, number>();
  for (const file of dataFiles(path)) {
    const [, partition, name] = /^\/(.*)\/([^/]+)$/.exec(file) ?? [];
    if (name === undefined || name.startsWith('.hoodie_partition_metadata')) continue;
    const kind = name.endsWith('.cdc') ? 'cdc' : name.includes('.log.') ? 'log' : 'base';
    counts.set(`${partition} ${kind}`, (counts.get(`${partition} ${kind}`) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${key} ${count}`).sort();
}

/** Data files (not under .hoodie, no checksum side files) by path. */
const dataFiles = (path: string) =>
  tableFiles(path)
    .map((entry) => entry.slice(0, entry.lastIndexOf(' ')))
    .filter((file) => !file.startsWith('/.hoodie/') && !file.endsWith('.crc'));

describe('merge-on-read CDC tables written by Spark (Hudi 0.15)', () => {
  for (const mode of ['DATA_BEFORE_AFTER', 'DATA_BEFORE', 'OP_KEY_ONLY']) {
    it(`${mode}: our upserts and delete leave what Spark's do${mode === 'DATA_BEFORE_AFTER' ? "; Spark's compaction and our cleaner on top" : ''}`, async () => {
      const dir = tempDir('cdc-mor-');
      const ours = join(dir, 'ours');
      const twin = join(dir, 'twin');
      const sparkWrite = (path: string, rows: readonly Row[], operation: string) =>
        hudi.write(path, { schema: SCHEMA, rows, options: options(mode, operation) });
      for (const path of [ours, twin]) {
        // Base files in a and b, then updates only there (log files) and a new group in c.
        await sparkWrite(
          path,
          [1, 2, 3, 4, 5, 6, 7, 8].map((id) => row(id, 1)),
          'upsert',
        );
        await sparkWrite(
          path,
          [1, 2, 9, 10].map((id) => row(id, 2)),
          'upsert',
        );
      }
      // Updates to groups with log files (appends), an update and an insert into c's small group of no log files
      // (a merge with its cdc log), an insert into a (whose group has logs: a new group); deletes from a and b; then
      // an update and an insert in c, whose slice's cdc log counts as a log file (an append and a new group).
      const upsert = [row(3, 3), row(6, 3), row(9, 3), row(11, 3), { id: 12, name: 'n12-3', ts: 3, dt: 'a' }];
      const deletes = [row(4, 1), row(5, 1)];
      const upsert2 = [row(10, 5), row(13, 5)];
      await assert.rejects(ourWrite(ours, 'insert', [row(13, 3)]), (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'cdc');
      const upserted = await ourWrite(ours, 'upsert', upsert);
      assert.equal(upserted.updated, 3);
      const cdcLogs = upserted.stats.flatMap((stat) => Object.keys(stat.cdcStats ?? {}));
      assert.equal(cdcLogs.length, 1, "c's merge wrote a cdc log file");
      assert.ok(cdcLogs[0]!.startsWith('c/'), `${cdcLogs[0]} in partition c`);
      assert.equal(upserted.stats.filter((stat) => stat.path?.includes('.log.') === true).length, 2, 'the updates in a and b went to log files');
      assert.equal((await ourWrite(ours, 'delete', deletes)).deleted, 2);
      const upserted2 = await ourWrite(ours, 'upsert', upsert2);
      assert.ok(
        upserted2.stats.every((stat) => stat.cdcStats === null),
        'no merge: the update appended to a log file, the insert went to a new group',
      );
      for (const [rows, operation] of [
        [upsert, 'upsert'],
        [deletes, 'delete'],
        [upsert2, 'upsert'],
      ] as const)
        await sparkWrite(twin, rows, operation);
      assert.deepEqual(fileKinds(ours), fileKinds(twin), 'the same kinds of files in each partition');

      const changes = await comparableChanges(ours);
      assert.deepEqual(changes, await comparableChanges(twin), 'the CDC query returns the same changes');
      const opsOf = (list: readonly string[], commit: number) =>
        list
          .map((c) => JSON.parse(c) as { op: string; commit: number })
          .filter((c) => c.commit === commit)
          .map((c) => c.op)
          .sort();
      assert.deepEqual(opsOf(changes, 2), ['i', 'i', 'u', 'u', 'u'], 'our upsert: 3 updates, 2 inserts');
      assert.deepEqual(opsOf(changes, 3), ['d', 'd'], 'our delete: 2 deletes');
      assert.deepEqual(opsOf(changes, 4), ['i', 'u'], 'our second upsert: an update, an insert');
      assert.deepEqual(await readAlike(ours), await readAlike(twin));

      // Spark writes on top of our files: its changes take our logs and base files as before images.
      for (const path of [ours, twin])
        await sparkWrite(
          path,
          [3, 9, 10, 12, 13].map((id) => (id === 12 ? { id, name: 'n12-6', ts: 6, dt: 'a' } : row(id, 6))),
          'upsert',
        );
      const later = await comparableChanges(ours);
      assert.deepEqual(later, await comparableChanges(twin), 'and after Spark upserts on top');
      assert.deepEqual(opsOf(later, 5), ['u', 'u', 'u', 'u', 'u']);
      assert.deepEqual(await readAlike(ours), await readAlike(twin));
      if (mode !== 'DATA_BEFORE_AFTER') return;

      // Spark compacts our logs (and the merge's cdc log file's slice): no change data, the CDC query is unchanged.
      await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${ours}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
      await hudi.sql(`CALL run_compaction(op => 'run', path => '${ours}')`);
      assert.ok(
        readdirSync(join(ours, '.hoodie')).some((name) => name.endsWith('.commit')),
        'Spark compacted',
      );
      assert.deepEqual(await comparableChanges(ours), later, 'the CDC query returns what it returned before');
      await readAlike(ours);
      await sparkWrite(ours, [row(1, 5)], 'upsert');

      // Our cleaner and Spark's, each on a copy: the same files go, our merge's cdc log file with its slice.
      const copies = tempDir('cdc-mor-clean-');
      const spark = join(copies, 'spark');
      const mine = join(copies, 'ours');
      cpSync(ours, spark, { recursive: true });
      cpSync(ours, mine, { recursive: true });
      await hudi.sql(`CREATE TABLE cdc_mor_clean_spark USING hudi LOCATION '${spark}'`);
      await hudi.sql("CALL run_clean(table => 'cdc_mor_clean_spark', clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => 1)");
      const result = await cleanKeepingLatestCommits(mine, 1);
      assert.equal(result.outcome, 'cleaned');
      const cleaned = dataFiles(ours).filter((file) => !dataFiles(spark).includes(file));
      assert.ok(
        cleaned.some((file) => cdcLogs.some((log) => file.endsWith(log))),
        `Spark's cleaner deleted our cdc log file (${cleaned.join(', ')})`,
      );
      assert.deepEqual(dataFiles(mine), dataFiles(spark), 'the same files remain');
      assert.deepEqual(await readAlike(mine), await readAlike(spark));
    });
  }
});
