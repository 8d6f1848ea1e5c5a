/**
 * Our clustering of merge-on-read tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, judged by
 * that release on Spark 3.5.1 (one JVM per release). Spark writes a default 1.x table (metadata table on: files,
 * column_stats, partition_stats) with inserts, upserts (one ordered before the stored record), and deletes in log
 * files named by their delta commits; each case copies it twice, our CLI clusters one copy and Hudi's
 * `run_clustering` the other. Compared: the plans' slices (base file and log files), the replaced file groups, the
 * output counts, the partition_stats; on ours Spark reads the same rows as before (snapshot; read-optimized equals
 * snapshot), with the metadata table on and off, `hudi_metadata()` equals reader-1x and `files` equals storage; then
 * Spark upserts, compacts and clusters on top. A pending compaction's file groups are left out of our plan as of
 * Hudi's (metadata table off: with partition_stats on, a pending compaction is refused before planning).
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MetadataRecord } from '../../lib/metadata/records.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { type ClusteringPlan, decodeClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import type { CommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { readCompactionPlan } from '../../lib/timeline/compaction-plan.js';
import { decodeLayout2CommitMetadata } from '../../lib/timeline/layout.js';
import { fileNameOf } from '../../lib/util/paths.js';
import { propertiesFile, runCli } from '../helpers/cli.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS, hudi1xMorWrite, timelineFiles } from '../helpers/hudi-1x-fixtures.js';
import { assertMetadata1xAgrees, assertMirroredBefore, comparableMetadataRow, metadata1xRecords, sparkMetadataRow } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';
import { ourCanonicalRows } from '../helpers/table-files.js';
import { clusterWithCli, withoutFileName } from './clustering-helpers.js';

const NAME = 'mor_cluster';
const NO_MDT = { 'hoodie.metadata.enable': 'false' };
/** Spark writes decide their own services: no inline compaction, clean or archive. */
const WRITES = { 'hoodie.compact.inline': 'false' };
/** Ours and Hudi's clustering: sorted by id (linear), every small slice planned. */
const OURS = { 'hoodie.clustering.plan.strategy.sort.columns': 'id', 'hoodie.layout.optimize.strategy': 'linear' };
const CALL_ORDER = "order => 'id', order_strategy => 'linear', ";

const timelineDir = (table: string) => join(table, '.hoodie', 'timeline');

/** The newest clustering of a table: its plan and, once completed, its replacecommit. */
function lastClustering(table: string): { time: string; plan: ClusteringPlan; commit: CommitMetadata | undefined } {
  const names = timelineFiles(table);
  const requested = names.filter((name) => name.endsWith('.clustering.requested')).at(-1);
  assert.ok(requested !== undefined, `a clustering in ${names.join(', ')}`);
  const time = requested.slice(0, 17);
  const planPath = join(timelineDir(table), requested);
  const plan = decodeClusteringPlan(readFileSync(planPath), planPath);
  assert.ok(plan !== undefined);
  const completed = names.find((name) => name.startsWith(`${time}_`) && name.endsWith('.replacecommit'));
  const commit =
    completed === undefined
      ? undefined
      : decodeLayout2CommitMetadata(
          readFileSync(join(timelineDir(table), completed)),
          { time, action: 'replacecommit', state: 'COMPLETED', completionTime: completed.slice(18, 35) },
          completed,
        );
  return { time, plan, commit };
}

/** A plan's slices as both copies name them: partition, file id, base file name, log file names (plan order). */
function planSlices(plan: ClusteringPlan): string[] {
  return plan.inputGroups
    .flatMap((group) =>
      group.slices.map((slice) =>
        JSON.stringify([slice.partitionPath, slice.fileId, fileNameOf(slice.dataFilePath), slice.deltaFilePaths.map((path) => fileNameOf(path))]),
      ),
    )
    .sort();
}

/** partition_stats records without their sizes (each writer's Parquet encodes the same rows to its own sizes). */
function partitionStats(records: readonly MetadataRecord[]): string[] {
  return records
    .filter((record) => record.type === 6)
    .map((record) => {
      const row = comparableMetadataRow(sparkMetadataRow(record)) as { ColumnStatsMetadata: Record<string, unknown> };
      const { totalSize: _size, totalUncompressedSize: _uncompressed, ...stats } = row.ColumnStatsMetadata;
      return JSON.stringify({ ...row, ColumnStatsMetadata: stats });
    })
    .sort();
}

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our clustering of a merge-on-read table Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-mor-cluster-`);
    const source = join(root, 'source');
    const write = (table: string, ids: number[], at: number, extra: Record<string, string> = {}) =>
      hudi1xMorWrite(hudi, table, NAME, ids, at, { ...WRITES, ...extra });
    const read = async (table: string, options: Record<string, string> = {}) => (await hudi.read(table, { options: { ...NO_MDT, ...options } })).rows;

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      // Two small base files per partition, then log files: upserts (id 4 ordered before its stored record) and deletes.
      await write(source, [1, 2, 3, 4, 5, 6], 1);
      await write(source, [7, 8, 9, 10, 11, 12], 1);
      await write(source, [1, 2, 7], 2);
      await write(source, [4], 0);
      await write(source, [3, 8], 3, { 'hoodie.datasource.write.operation': 'delete' });
      const properties = readFileSync(join(source, '.hoodie', 'hoodie.properties'), 'utf8');
      assert.match(properties, new RegExp(`^hoodie\\.table\\.version=${tableVersion}$`, 'm'));
      assert.match(properties, /^hoodie\.table\.type=MERGE_ON_READ$/m);
      for (const partition of ['files', 'column_stats', 'partition_stats']) assert.match(properties, new RegExp(`metadata\\.partitions=.*${partition}`));
    });

    after(async () => {
      await hudi?.close();
    });

    it("merges each slice's log files as Hudi's run_clustering does, keeps the metadata table, and Spark writes on top", async () => {
      const mine = join(root, 'mine');
      const theirs = join(root, 'theirs');
      cpSync(source, mine, { recursive: true });
      cpSync(source, theirs, { recursive: true });
      const before = withoutFileName(await read(mine));
      assert.ok(before.some((row) => row.includes('"v2-1"')) && before.some((row) => row.includes('"v1-4"')), 'the upsert won, the one ordered before lost');
      assert.ok(!before.some((row) => row.includes('"v1-3"')) && !before.some((row) => row.includes('"v1-8"')), 'the deletes');

      const ours = clusterWithCli(mine, OURS);
      await hudi.sql(`CALL run_clustering(path => '${theirs}', ${CALL_ORDER}op => 'scheduleAndExecute')`);
      assertMirroredBefore(mine, ours.instantTime, 'replacecommit');
      const [my, their] = [lastClustering(mine), lastClustering(theirs)];
      assert.equal(my.time, ours.instantTime);
      assert.ok(my.commit !== undefined && their.commit !== undefined, 'both completed as a replacecommit');
      assert.ok(
        my.plan.inputGroups.some((group) => group.slices.some((slice) => slice.deltaFilePaths.length > 0)),
        'the plan merges log files',
      );
      assert.deepEqual(planSlices(my.plan), planSlices(their.plan), "the slices of Hudi's plan, log files in its order");
      const replaced = (commit: CommitMetadata) =>
        Object.fromEntries(Object.entries(commit.partitionToReplaceFileIds ?? {}).map(([partition, ids]) => [partition, [...ids].sort()]));
      assert.deepEqual(replaced(my.commit), replaced(their.commit));
      const outputs = (commit: CommitMetadata) =>
        Object.values(commit.partitionToWriteStats)
          .flat()
          .map((stat) => [stat.partitionPath, stat.numWrites, stat.numDeletes])
          .sort();
      assert.deepEqual(outputs(my.commit), outputs(their.commit), 'the same rows per output file');

      // Spark reads what it read before; every file group is clustered, so read-optimized reads the snapshot.
      const clustered = await assertMetadata1xAgrees(hudi, mine, `our clustering ${my.time}`);
      assert.deepEqual(withoutFileName(await read(mine)), before);
      assert.deepEqual(
        canonicalRows(await read(mine, { 'hoodie.datasource.query.type': 'read_optimized' })),
        canonicalRows(await read(mine)),
        'read-optimized equals snapshot',
      );
      assert.deepEqual(partitionStats(clustered), partitionStats(await metadata1xRecords(theirs)), 'partition_stats of ours and of Hudi’s clustering');

      // Spark upserts into our file groups, compacts, and clusters on top.
      await write(mine, [1, 5, 9], 4);
      await assertMetadata1xAgrees(hudi, mine, 'Spark upsert on our clustering');
      await hudi.sql(`CALL run_compaction(op => 'scheduleAndExecute', path => '${mine}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
      assert.ok(
        timelineFiles(mine).some((name) => /^\d{17}_\d{17}\.commit$/.test(name)),
        'Spark compacted',
      );
      await assertMetadata1xAgrees(hudi, mine, 'Spark compaction on our clustering');
      await write(mine, [2, 13], 5);
      await hudi.sql(`CALL run_clustering(path => '${mine}', ${CALL_ORDER}op => 'scheduleAndExecute')`);
      assert.notEqual(lastClustering(mine).time, my.time, 'Spark clustered');
      assert.ok(lastClustering(mine).commit !== undefined);
      const last = await assertMetadata1xAgrees(hudi, mine, 'Spark clustering on top');
      assert.ok(last.length > 0);
      const rows = await ourCanonicalRows(mine);
      for (const name of ['"v4-1"', '"v4-5"', '"v5-2"', '"v5-13"', '"v1-4"'])
        assert.ok(
          rows.some((row) => row.includes(name)),
          name,
        );
      assert.ok(!rows.some((row) => row.includes('"v1-3"')));
    });

    it("leaves a pending compaction's file groups out as Hudi does; refuses one beside partition_stats", async () => {
      const refused = join(root, 'refused');
      cpSync(source, refused, { recursive: true });
      const schedule = (table: string, options: string) =>
        hudi.sql(`CALL run_compaction(op => 'schedule', path => '${table}', options => 'hoodie.compact.inline.max.delta.commits=1${options}')`);
      await schedule(refused, '');
      const run = runCli(['cluster', refused, '--mode', 'scheduleAndExecute', '--props', propertiesFile(OURS), '--json']);
      assert.notEqual(run.code, 0, 'refused');
      assert.match(run.stderr, /compaction \d{17} is pending/);
      assert.ok(!timelineFiles(refused).some((name) => name.includes('.clustering.')), 'nothing written');

      // Metadata table off: Spark's next write drops it; both copies then get the same compaction plan.
      const mine = join(root, 'pending_mine');
      const theirs = join(root, 'pending_theirs');
      const base = join(root, 'pending_base');
      cpSync(source, base, { recursive: true });
      await write(base, [6], 6, NO_MDT);
      // New file groups without log files, which the compaction leaves out and the clustering takes.
      await write(base, [15, 16], 1, NO_MDT);
      await schedule(base, ',hoodie.metadata.enable=false');
      const compaction = timelineFiles(base).find((name) => name.endsWith('.compaction.requested'));
      assert.ok(compaction !== undefined);
      cpSync(base, mine, { recursive: true });
      cpSync(base, theirs, { recursive: true });
      const ours = clusterWithCli(mine, { ...OURS, ...NO_MDT });
      await hudi.sql(`CALL run_clustering(path => '${theirs}', ${CALL_ORDER}op => 'scheduleAndExecute', options => 'hoodie.metadata.enable=false')`);
      const [my, their] = [lastClustering(mine), lastClustering(theirs)];
      assert.equal(my.time, ours.instantTime);
      assert.deepEqual(planSlices(my.plan), planSlices(their.plan), "the slices of Hudi's plan");
      assert.ok(planSlices(my.plan).length > 0);
      const compacting = new Set(
        (await readCompactionPlan(new LocalStorage(mine), compaction.slice(0, 17), { metaFolder: '.hoodie/timeline' })).operations.map((op) => op.fileId),
      );
      const planned = my.plan.inputGroups.flatMap((group) => group.slices.map((slice) => slice.fileId));
      assert.ok(compacting.size > 0 && planned.length > 0);
      assert.deepEqual(
        planned.filter((id) => compacting.has(id)),
        [],
        'no file group of the pending compaction',
      );

      assert.deepEqual(withoutFileName(await read(mine)), withoutFileName(await read(theirs)), 'the same rows after either clustering');
      assert.deepEqual(await ourCanonicalRows(mine), canonicalRows(await read(mine)));
      // Spark then runs the pending compaction on both copies: the same rows again.
      for (const table of [mine, theirs]) await hudi.sql(`CALL run_compaction(op => 'run', path => '${table}', options => 'hoodie.metadata.enable=false')`);
      assert.deepEqual(withoutFileName(await read(mine)), withoutFileName(await read(theirs)), 'the same rows after the compaction');
      await write(mine, [1, 14], 7, NO_MDT);
      assert.deepEqual(canonicalRows(await read(mine)), await ourCanonicalRows(mine));
    });
  });
}
