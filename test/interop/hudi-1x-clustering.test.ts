/**
 * Our clustering on copy-on-write tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, judged by
 * that release on Spark 3.5.1 (one JVM per release). Spark writes a partitioned table of small base files with the
 * metadata table off; each case copies it twice, Hudi clusters one copy (`CALL run_clustering`) and our CLI the
 * other with the same keys. Compared: the plans (groups, their input file groups, output counts, strategy params,
 * missingSchedulePartitions, the 1.x writer schema), the instant files (layout 2: `T.clustering.requested`, an
 * empty `T.clustering.inflight`, Avro `T_<completion>.replacecommit`), the replaced file groups, and the rows Spark
 * reads now and as of the last write before the clustering. Spark then keeps writing on our copy: upserts merge
 * into our output file groups, its incremental planning starts from our clustering (a plan of ours after the upsert
 * matches Hudi's own on its copy), it executes a plan of ours, runs its own clustering and a clean on top. A plan of
 * ours left pending is handled by Spark as its own pending clustering. With the metadata table on:
 * test/interop/hudi-1x-metadata-clustering.test.ts.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLUSTERING_SUMMARY_KEY } from '../../lib/clustering/instant.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { type ClusteringPlan, decodeClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import type { CommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { decodeLayout2CommitMetadata } from '../../lib/timeline/layout.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';
import { clusterWithCli, SCHEMA, sparkOptions, tableRow, withoutFileName, writeSmallFiles } from './clustering-helpers.js';

const NO_MDT = 'hoodie.metadata.enable=false';
const PARTITIONS = ['2024-01-01', '2024-01-02', '2024-01-03'];
const READ = { options: { 'hoodie.metadata.enable': 'false' } };

interface LayoutCase {
  readonly name: string;
  readonly layout: 'linear' | 'z-order' | 'hilbert';
  readonly columns: readonly string[];
  /** Whether Spark keeps writing on our copy and clusters on top (the second test of the case). */
  readonly continued: boolean;
}
const LAYOUT_CASES: readonly LayoutCase[] = [
  { name: 'linear', layout: 'linear', columns: ['score'], continued: true },
  { name: 'z-order', layout: 'z-order', columns: ['score', 'qty'], continued: true },
  { name: 'hilbert', layout: 'hilbert', columns: ['qty', 'score'], continued: false },
  // Without sort columns Hudi rewrites the rows (SparkSortAndSizeExecutionStrategy); we copy row groups (binary copy, on by default).
  { name: 'no sort columns', layout: 'linear', columns: [], continued: false },
];

const timelineDir = (table: string) => join(table, '.hoodie', 'timeline');
const timelineNames = (table: string) => readdirSync(timelineDir(table)).filter((name) => /^\d{17}/.test(name));

/** The clustering instant files of a table, newest last. */
function clusteringFiles(table: string): { time: string; requested: string; inflight?: string; completed?: string }[] {
  const names = timelineNames(table);
  return names
    .filter((name) => name.endsWith('.clustering.requested'))
    .sort()
    .map((requested) => {
      const time = requested.slice(0, 17);
      const inflight = names.find((name) => name === `${time}.clustering.inflight`);
      const completed = names.find((name) => name.startsWith(`${time}_`) && name.endsWith('.replacecommit'));
      return { time, requested, ...(inflight === undefined ? {} : { inflight }), ...(completed === undefined ? {} : { completed }) };
    });
}

function planOf(table: string, requested: string): ClusteringPlan {
  const path = join(timelineDir(table), requested);
  const plan = decodeClusteringPlan(readFileSync(path), path);
  assert.ok(plan !== undefined, `${path} is a clustering plan`);
  return plan;
}

function commitOf(table: string, name: string): CommitMetadata {
  const path = join(timelineDir(table), name);
  const [time, completionTime] = name.split('.')[0]!.split('_') as [string, string];
  const action = name.slice(name.indexOf('.') + 1) as 'commit' | 'replacecommit';
  return decodeLayout2CommitMetadata(readFileSync(path), { time, action, state: 'COMPLETED', completionTime }, path);
}

/** The avro.schema header of an Avro container file (the writer schema's JSON; no braces inside its strings). */
function writerSchemaText(table: string, name: string): string {
  const text = readFileSync(join(timelineDir(table), name)).toString('latin1');
  const start = text.indexOf('{"type":"record"');
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  throw new Error(`no schema in ${name}`);
}

/**
 * A plan's groups as both sides can share them: the partition, the input file groups (ids name the same files on
 * both copies until one of them rewrites them), the output count. `ids: false` keeps only the shape, for plans over
 * files each side wrote itself.
 */
function groupsOf(plan: ClusteringPlan, ids = true) {
  return plan.inputGroups.map((group) => ({
    partition: group.slices[0]?.partitionPath,
    inputs: ids ? group.slices.map((slice) => slice.fileId).sort() : group.slices.length,
    numOutputFileGroups: group.numOutputFileGroups,
  }));
}

function byPartition<Group extends { partition: string | undefined }>(groups: Group[]): Group[] {
  return [...groups].sort((a, b) => ((a.partition ?? '') < (b.partition ?? '') ? -1 : (a.partition ?? '') > (b.partition ?? '') ? 1 : 0));
}

/** The last completed commit (a write, not the clustering) and its completion time, from the layout-2 file name. */
function lastCommit(table: string): { name: string; completionTime: string } {
  const name = timelineNames(table)
    .filter((candidate) => /^\d{17}_\d{17}\.commit$/.test(candidate))
    .sort()
    .at(-1)!;
  return { name, completionTime: name.slice(18, 35) };
}

async function ourRows(path: string): Promise<string[]> {
  return withoutFileName((await readSnapshot(await HudiTable.open(new LocalStorage(path)), { includeMetaFields: true })).rows);
}

function clusteringProps(layoutCase: LayoutCase): Record<string, string> {
  return {
    'hoodie.metadata.enable': 'false',
    ...(layoutCase.columns.length === 0 ? {} : { 'hoodie.clustering.plan.strategy.sort.columns': layoutCase.columns.join(',') }),
    'hoodie.layout.optimize.strategy': layoutCase.layout,
  };
}

function runClusteringCall(table: string, layoutCase: LayoutCase, op: 'schedule' | 'execute' | 'scheduleAndExecute'): string {
  const order = layoutCase.columns.length === 0 ? '' : `order => '${layoutCase.columns.join(',')}', order_strategy => '${layoutCase.layout}', `;
  return `CALL run_clustering(path => '${table}', ${order}op => '${op}', options => '${NO_MDT}')`;
}

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our clustering on a copy-on-write table Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-cluster-`);
    const source = join(root, 'source');
    let rowsBefore: string[];
    let lastId = 0;

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      // Procedures build their write client from the session's hoodie.* settings: keep the metadata table off.
      await hudi.sql(`SET ${NO_MDT}`);
      lastId = await writeSmallFiles(hudi, source, PARTITIONS, 3, 9);
      assert.equal(readFileSync(join(source, '.hoodie', 'hoodie.properties'), 'utf8').match(/^hoodie\.table\.version=(\d+)$/m)?.[1], String(tableVersion));
      assert.ok(!existsSync(join(source, '.hoodie', 'metadata')), 'no metadata table');
      rowsBefore = withoutFileName((await hudi.read(source, READ)).rows);
    });

    after(async () => {
      await hudi?.close();
    });

    for (const layoutCase of LAYOUT_CASES) {
      it(`${layoutCase.name}: the plan, instant files, replaced file groups and rows of Hudi's run_clustering; Spark reads ours now and before it`, async () => {
        const theirs = join(root, `theirs_${layoutCase.name.replace(/ /g, '_')}`);
        const mine = join(root, `mine_${layoutCase.name.replace(/ /g, '_')}`);
        cpSync(source, theirs, { recursive: true });
        cpSync(source, mine, { recursive: true });
        const lastWrite = lastCommit(mine);
        const sparkBefore = canonicalRows((await hudi.read(mine, READ)).rows);

        await hudi.sql(runClusteringCall(theirs, layoutCase, 'scheduleAndExecute'));
        const ours = clusterWithCli(mine, clusteringProps(layoutCase));

        const [theirFiles, myFiles] = [clusteringFiles(theirs), clusteringFiles(mine)];
        assert.equal(theirFiles.length, 1);
        assert.equal(myFiles.length, 1);
        const [their, my] = [theirFiles[0]!, myFiles[0]!];
        assert.equal(my.time, ours.instantTime);
        // Layout 2: the pending clustering files and the replacecommit named with its completion time.
        assert.equal(my.inflight, `${my.time}.clustering.inflight`);
        assert.equal(statSync(join(timelineDir(mine), my.inflight)).size, 0, 'an empty inflight, as Hudi writes it');
        assert.match(my.completed ?? '', /^\d{17}_\d{17}\.replacecommit$/);
        assert.ok(my.completed!.slice(18, 35) > my.time, 'completed after it was requested');
        assert.ok(their.inflight !== undefined && their.completed !== undefined);

        const [theirPlan, myPlan] = [planOf(theirs, their.requested), planOf(mine, my.requested)];
        assert.ok(theirPlan.inputGroups.length > 0);
        // Hudi takes partitions in the storage's listing order (FileSystemBackedTableMetadata): S3 lists them sorted, as
        // we plan them; this local disk lists in directory order, so the groups are compared by partition.
        assert.deepEqual(byPartition(groupsOf(myPlan)), byPartition(groupsOf(theirPlan)), 'the same groups of the same file groups');
        assert.deepEqual(
          groupsOf(myPlan).map((group) => group.partition),
          [...new Set(groupsOf(myPlan).map((group) => group.partition))].sort(),
        );
        assert.deepEqual(myPlan.strategy, theirPlan.strategy);
        assert.deepEqual(myPlan.missingSchedulePartitions, theirPlan.missingSchedulePartitions);
        assert.deepEqual(myPlan.missingSchedulePartitions, []);
        assert.equal(myPlan.preserveHoodieMetadata, theirPlan.preserveHoodieMetadata);
        assert.equal(writerSchemaText(mine, my.requested), writerSchemaText(theirs, their.requested));

        const [theirCommit, myCommit] = [commitOf(theirs, their.completed!), commitOf(mine, my.completed!)];
        assert.equal(myCommit.operationType, 'CLUSTER');
        const replaced = (commit: CommitMetadata) =>
          Object.fromEntries(Object.entries(commit.partitionToReplaceFileIds ?? {}).map(([partition, ids]) => [partition, [...ids].sort()]));
        assert.deepEqual(replaced(myCommit), replaced(theirCommit));
        const outputs = (commit: CommitMetadata) => Object.values(commit.partitionToWriteStats).flat();
        assert.deepEqual(
          outputs(myCommit)
            .map((stat) => [stat.partitionPath, stat.numWrites, stat.prevCommit, stat.prevBaseFile ?? null])
            .sort(),
          outputs(theirCommit)
            .map((stat) => [stat.partitionPath, stat.numWrites, stat.prevCommit, stat.prevBaseFile ?? null])
            .sort(),
        );
        assert.deepEqual(Object.keys(theirCommit.extraMetadata), ['schema']);
        assert.deepEqual(Object.keys(myCommit.extraMetadata).sort(), [CLUSTERING_SUMMARY_KEY, 'schema'].sort());
        assert.equal(myCommit.extraMetadata['schema'], theirCommit.extraMetadata['schema']);

        // Readers: Spark reads the same rows from both copies (only the files moved), and so do we.
        const [sparkMine, sparkTheirs] = [(await hudi.read(mine, READ)).rows, (await hudi.read(theirs, READ)).rows];
        assert.deepEqual(withoutFileName(sparkMine), rowsBefore);
        assert.deepEqual(withoutFileName(sparkTheirs), rowsBefore);
        assert.deepEqual(await ourRows(mine), rowsBefore);
        const myOutputs = new Set(outputs(myCommit).map((stat) => stat.path!.slice(stat.path!.lastIndexOf('/') + 1)));
        for (const row of sparkMine) assert.ok(myOutputs.has(row['_hoodie_file_name'] as string), `row ${row['_hoodie_record_key']} read from our output`);
        // Time travel to the last write before the clustering: the files and rows as they were.
        const asOf = canonicalRows((await hudi.read(mine, { options: { ...READ.options, 'as.of.instant': lastWrite.completionTime } })).rows);
        assert.deepEqual(asOf, sparkBefore);
      });

      if (!layoutCase.continued) continue;
      it(`${layoutCase.name}: Spark upserts into our file groups, plans incrementally from our clustering, and clusters and cleans on top`, async () => {
        const theirs = join(root, `theirs_${layoutCase.name.replace(/ /g, '_')}`);
        const mine = join(root, `mine_${layoutCase.name.replace(/ /g, '_')}`);
        const myOutputs = new Set(
          Object.values(commitOf(mine, clusteringFiles(mine)[0]!.completed!).partitionToWriteStats)
            .flat()
            .map((stat) => stat.fileId),
        );
        // Updates of rows of one partition only (ids ≡ 0 mod 3), and the same on Hudi's copy.
        const updates = [3, 6, 9].map((id) => tableRow(id, PARTITIONS, 1));
        for (const table of [mine, theirs]) {
          await hudi.write(table, { schema: SCHEMA, rows: updates, options: sparkOptions({ 'hoodie.datasource.write.operation': 'upsert' }) });
        }
        const upsert = commitOf(mine, lastCommit(mine).name);
        const updated = Object.values(upsert.partitionToWriteStats).flat();
        assert.ok(updated.length > 0 && updated.every((stat) => myOutputs.has(stat.fileId)), 'the upsert merged into file groups our clustering wrote');
        assert.ok(
          updated.every((stat) => stat.prevBaseFile !== undefined && stat.prevBaseFile !== null),
          'Hudi names the base file it merged',
        );

        // Incremental planning (hoodie.table.services.incremental.enabled): only the partition written since.
        await hudi.sql(runClusteringCall(theirs, layoutCase, 'schedule'));
        const run = clusterWithCli(mine, clusteringProps(layoutCase), 'schedule');
        const [theirPlan, myPlan] = [planOf(theirs, clusteringFiles(theirs).at(-1)!.requested), planOf(mine, `${run.instantTime}.clustering.requested`)];
        assert.deepEqual(groupsOf(myPlan, false), groupsOf(theirPlan, false));
        assert.deepEqual([...new Set(myPlan.inputGroups.map((group) => group.slices[0]!.partitionPath))], [PARTITIONS[0]]);
        assert.deepEqual(myPlan.missingSchedulePartitions, theirPlan.missingSchedulePartitions);

        // Spark executes our plan, then schedules and executes one of its own after another write, and cleans.
        await hudi.sql(runClusteringCall(mine, layoutCase, 'execute'));
        assert.ok(clusteringFiles(mine).find((files) => files.time === run.instantTime)?.completed, 'Hudi completed our plan');
        const more = [lastId + 1, lastId + 2, lastId + 3].map((id) => tableRow(id, PARTITIONS));
        await hudi.write(mine, { schema: SCHEMA, rows: more, options: sparkOptions({ 'hoodie.datasource.write.operation': 'insert' }) });
        await hudi.sql(runClusteringCall(mine, layoutCase, 'scheduleAndExecute'));
        assert.equal(clusteringFiles(mine).filter((files) => files.completed !== undefined).length, 3, 'ours, ours executed by Hudi, Hudi’s own');
        const name = `mine_${layoutCase.name.replace(/[^a-z]/g, '_')}`;
        await hudi.sql(`CREATE TABLE ${name} USING hudi LOCATION '${mine}'`);
        await hudi.sql(`CALL run_clean(table => '${name}', retain_commits => 1, options => '${NO_MDT}')`);
        assert.ok(
          timelineNames(mine).some((name) => name.endsWith('.clean')),
          'a completed clean',
        );

        const spark = withoutFileName((await hudi.read(mine, READ)).rows);
        assert.deepEqual(await ourRows(mine), spark);
        assert.equal(spark.length, rowsBefore.length + more.length);
        for (const row of updates)
          assert.ok(
            spark.some((text) => text.includes(`"${row['name']}"`)),
            `${row['name']} is read`,
          );
      });
    }

    it('a plan of ours left pending: Spark inserts beside it, refuses the same updates as for its own plan, and run_clustering executes it', async () => {
      const pending = join(root, 'pending_mine');
      const hudiPending = join(root, 'pending_theirs');
      cpSync(source, pending, { recursive: true });
      cpSync(source, hudiPending, { recursive: true });
      const layoutCase = LAYOUT_CASES[0]!;
      const planned = clusterWithCli(pending, clusteringProps(layoutCase), 'schedule');
      await hudi.sql(runClusteringCall(hudiPending, layoutCase, 'schedule'));
      assert.deepEqual(
        clusteringFiles(pending).map((files) => [files.time, files.inflight, files.completed]),
        [[planned.instantTime, undefined, undefined]],
      );

      const inserted = [lastId + 1, lastId + 2].map((id) => tableRow(id, PARTITIONS));
      const update = [tableRow(1, PARTITIONS, 2)];
      const outcomes: string[] = [];
      for (const table of [pending, hudiPending]) {
        await hudi.write(table, { schema: SCHEMA, rows: inserted, options: sparkOptions({ 'hoodie.datasource.write.operation': 'insert' }) });
        // An update of a file group in a pending clustering: Hudi's update strategy decides, the same way for both plans.
        outcomes.push(
          await hudi.write(table, { schema: SCHEMA, rows: update, options: sparkOptions({ 'hoodie.datasource.write.operation': 'upsert' }) }).then(
            () => 'written',
            (error: unknown) =>
              `refused: ${(error as Error).message.includes('HoodieClusteringUpdateException') ? 'HoodieClusteringUpdateException' : (error as Error).message.slice(0, 300)}`,
          ),
        );
      }
      assert.equal(outcomes[0], outcomes[1], 'Spark treats our pending plan as its own');
      const sparkPending = withoutFileName((await hudi.read(pending, READ)).rows);
      assert.equal(sparkPending.length, rowsBefore.length + inserted.length);

      const executed = await hudi.sql(runClusteringCall(pending, layoutCase, 'execute'));
      assert.deepEqual(
        executed.rows.map((row) => [row['timestamp'], row['state']]),
        [[planned.instantTime, 'COMPLETED']],
      );
      const spark = withoutFileName((await hudi.read(pending, READ)).rows);
      assert.deepEqual(spark, sparkPending, 'the rows Spark read while the plan was pending');
      assert.ok(clusteringFiles(pending)[0]?.completed !== undefined, 'our plan completed as a replacecommit');
      assert.deepEqual(await ourRows(pending), spark);
    });
  });
}
