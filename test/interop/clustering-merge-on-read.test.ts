/**
 * Clustering of merge-on-read tables against real Hudi 0.15 (Spark 3.5.1). A Spark-written MOR table with the
 * metadata table has updates and a delete in log files; on copies of it:
 * - our plan equals the one Hudi's `run_clustering` schedules (slices, their log files as deltaFilePaths, metrics),
 *   and while it is pending, Hudi's reject update strategy refuses Spark's delta commits into its file groups;
 * - after our clustering (linear on one copy, z-order on another) Spark's snapshot and read-optimized reads both equal
 *   the snapshot Spark read before (but for `_hoodie_file_name`), Hudi's metadata-table validator passes, and our
 *   reader reads what Spark reads;
 * - Spark then upserts into the clustered file groups and compacts them on top of ours;
 * - the state machine (the bundled Lambdas, on moto S3) clusters a copy the same way, skipping the clean and archive
 *   this build does not do on merge-on-read tables.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import { runStateMachineLocally } from '../../lib/serverless/local/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { type ClusteringPlan, readClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { pendingClusteringPlans } from '../../lib/timeline/queries.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, downloadTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';
import { commitJson, withoutFileName } from './clustering-helpers.js';

const SCHEMA = 'id BIGINT, name STRING, score DOUBLE, qty INT, ts BIGINT, dt STRING';
const CHECKS = ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups'];
const row = (id: number, version: number) => ({
  id,
  name: `n${id}-v${version}`,
  score: ((id * 37) % 11) + 0.5 + version,
  qty: (id * 13) % 7,
  ts: version,
  dt: id % 2 === 1 ? 'a' : 'b',
});
const sparkOptions = (operation: string): Record<string, string> => ({
  ...mergeOnReadWriteOptions(1),
  'hoodie.table.name': 'mor_cluster',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.table.timeline.timezone': 'UTC',
  'hoodie.metadata.enable': 'true',
  // Every insert batch makes new file groups: two small ones per partition.
  'hoodie.parquet.small.file.limit': '0',
});

const open = (path: string) => HudiTable.open(openStorage(path), { mode: 'clustering' });

async function spark(hudi: HudiHarness, path: string, queryType?: QueryType): Promise<Row[]> {
  return (await hudi.read(path, { options: queryType === undefined ? {} : { 'hoodie.datasource.query.type': queryType } })).rows;
}

async function ours(path: string, queryType?: QueryType): Promise<Row[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true, ...(queryType === undefined ? {} : { queryType }) })).rows;
}

/** Our clustering job (schedule, then execute every group and commit) with these Hudi properties. */
async function cluster(path: string, properties: Record<string, string>, mode: 'schedule' | 'execute' | 'scheduleAndExecute' = 'scheduleAndExecute') {
  const props = new Map(Object.entries(properties));
  const { config } = resolveClusteringConfig({ file: { location: 'test properties', properties: props } });
  const table = await open(path);
  const engine = await openParquetEngine();
  try {
    return await runClusteringJob(table, {
      mode,
      config,
      lock: lockProviderFor(table.config.properties, table.config.name, table.storage),
      engine,
      properties: props,
    });
  } finally {
    await engine.close();
  }
}

/** The plan with its paths relative to the table (each copy sits elsewhere) and slices in file-id order. */
function relative(plan: ClusteringPlan, tableUri: string): unknown {
  const strip = (path: string) => {
    if (path === '') return path;
    assert.ok(path.startsWith(`${tableUri}/`), `${path} is under ${tableUri}`);
    return path.slice(tableUri.length + 1);
  };
  return {
    ...plan,
    inputGroups: [...plan.inputGroups]
      .map((group) => ({
        ...group,
        slices: [...group.slices]
          .map((slice) => ({ ...slice, dataFilePath: strip(slice.dataFilePath), deltaFilePaths: slice.deltaFilePaths.map(strip) }))
          .sort((a, b) => a.fileId.localeCompare(b.fileId)),
      }))
      .sort((a, b) => (a.slices[0]?.partitionPath ?? '').localeCompare(b.slices[0]?.partitionPath ?? '')),
  };
}

async function rawCommit(path: string, instant: string): Promise<Record<string, unknown>> {
  return JSON.parse(Buffer.from(await openStorage(path).get(`.hoodie/${instant}.replacecommit`)).toString('utf8')) as Record<string, unknown>;
}

/** What a clustering's replacecommit says beyond file names and sizes: its operation, the groups replaced, each output's counts. */
function commitShape(commit: Record<string, unknown>): unknown {
  const COUNTS = [
    'prevCommit',
    'numWrites',
    'numDeletes',
    'numUpdateWrites',
    'numInserts',
    'totalLogRecords',
    'totalLogFilesCompacted',
    'totalLogSizeCompacted',
    'totalUpdatedRecordsCompacted',
    'totalLogBlocks',
    'totalCorruptLogBlock',
    'totalRollbackBlocks',
    'partitionPath',
  ];
  const stats = commit['partitionToWriteStats'] as Record<string, Record<string, unknown>[]>;
  const replaced = commit['partitionToReplaceFileIds'] as Record<string, string[]>;
  return {
    operationType: commit['operationType'],
    compacted: commit['compacted'],
    replaced: Object.fromEntries(Object.entries(replaced).map(([partition, ids]) => [partition, [...ids].sort()])),
    stats: Object.fromEntries(
      Object.entries(stats).map(([partition, list]) => [
        partition,
        list
          .map((stat): Record<string, unknown> => ({ keys: Object.keys(stat).sort(), ...Object.fromEntries(COUNTS.map((key) => [key, stat[key]])) }))
          .sort((a, b) => Number(a['numWrites']) - Number(b['numWrites'])),
      ]),
    ),
  };
}

describe('clustering merge-on-read tables: ours and Hudi 0.15 agree', { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  let root: string;
  let table: string;
  let snapshotBefore: Row[];
  let hudiCommit: Record<string, unknown> | undefined;

  before(async () => {
    hudi = await startHudi();
    root = tempDir('mor-cluster-');
    table = join(root, 'linear');
    const write = (rows: Record<string, unknown>[], operation: string) => hudi.write(table, { schema: SCHEMA, rows, options: sparkOptions(operation) });
    await write(
      [1, 2, 3, 4, 5, 6].map((id) => row(id, 0)),
      'insert',
    );
    await write(
      [7, 8, 9, 10, 11, 12].map((id) => row(id, 0)),
      'insert',
    );
    await write(
      [1, 2, 7, 10].map((id) => row(id, 1)),
      'upsert',
    );
    await write([row(3, 2)], 'delete');
    await write(
      [8, 4, 1].map((id) => row(id, 3)),
      'upsert',
    );
    for (const name of ['hudi', 'zorder', 'serverless']) cpSync(table, join(root, name), { recursive: true });
    snapshotBefore = await spark(hudi, table);
  });

  after(async () => {
    await hudi?.close();
  });

  async function validate(t: TestContext, path: string, step: string): Promise<void> {
    const report = await hudi.validateMetadataTable(path, CHECKS);
    const failed = Object.entries(report.checks).filter(([, check]) => check.status !== 'passed');
    assert.deepEqual(report.errors, [], `${step}: validator errors`);
    assert.deepEqual(
      failed.map(([name, check]) => `${name}: ${check.status} ${check.details}`),
      [],
      `${step}: failed checks`,
    );
    assert.deepEqual(Object.keys(report.checks).sort(), [...CHECKS].sort(), `${step}: every check ran`);
    t.diagnostic(`${step}: validator passed ${CHECKS.join(', ')}`);
  }

  const SORTED = { 'hoodie.clustering.plan.strategy.sort.columns': 'score' };

  it("plans the slices and log files Hudi's run_clustering schedules on a copy of the same table", async (t) => {
    const mine = await cluster(table, SORTED, 'schedule');
    assert.ok(mine.scheduled, 'we scheduled a clustering');
    const copy = join(root, 'hudi');
    await hudi.sql(`CALL run_clustering(path => '${copy}', op => 'schedule', order => 'score')`);
    const [theirs] = await pendingClusteringPlans(openStorage(copy), (await open(copy)).timeline);
    assert.ok(theirs, 'Hudi scheduled a clustering');
    const myPlan = await readClusteringPlan(openStorage(table), mine.scheduled.instantTime, TIMELINE_LAYOUT_1);
    assert.ok(myPlan);
    t.diagnostic(`Hudi's plan: ${JSON.stringify(theirs.plan)}`);
    assert.deepEqual(relative(myPlan, openStorage(table).uri), relative(theirs.plan, openStorage(copy).uri));
    const slices = myPlan.inputGroups.flatMap((group) => group.slices);
    assert.equal(slices.length, 4, 'two file groups per partition');
    assert.ok(
      slices.filter((slice) => slice.deltaFilePaths.length > 0).length >= 3,
      'the updated and deleted records are in log files of three file groups or more',
    );
    // Hudi executes its plan on the copy: the replacecommit ours is compared with below.
    await hudi.sql(`CALL run_clustering(path => '${copy}', instants => '${theirs.instant.time}', op => 'execute')`);
    hudiCommit = await rawCommit(copy, theirs.instant.time);
    assert.deepEqual(withoutFileName(await spark(hudi, copy)), withoutFileName(snapshotBefore), "Hudi's own clustering keeps the snapshot");
  });

  it("Hudi's reject update strategy refuses Spark's delta commit into a file group of our pending plan", async () => {
    await assert.rejects(
      hudi.write(table, { schema: SCHEMA, rows: [row(2, 5)], options: sparkOptions('upsert') }),
      /clustering file group|pending clustering/i,
      "Hudi's SparkRejectUpdateStrategy sees our plan's file groups",
    );
  });

  it("executes the linear plan: Spark's snapshot and read-optimized reads are the snapshot before; the validator passes", async (t) => {
    const result = await cluster(table, SORTED, 'execute');
    assert.equal(result.commit?.outcome, 'committed');
    const commit = await commitJson(openStorage(table), result.instantTime!, 'replacecommit');
    assert.equal(commit.operationType, 'CLUSTER');
    assert.equal(Object.values(commit.partitionToReplaceFileIds ?? {}).flat().length, 4, 'every file group is replaced');
    const snapshot = await spark(hudi, table);
    assert.deepEqual(withoutFileName(snapshot), withoutFileName(snapshotBefore));
    assert.deepEqual(withoutFileName(await spark(hudi, table, 'read_optimized')), withoutFileName(snapshotBefore), 'the base files hold the merged records');
    assert.deepEqual(canonicalRows(await ours(table)), canonicalRows(snapshot));
    assert.ok(
      snapshot.every((r) => String(r['_hoodie_file_name']).endsWith(`_${result.instantTime}.parquet`)),
      'every record is in an output of the clustering',
    );
    await validate(t, table, 'after our linear clustering');
    const mine = await rawCommit(table, result.instantTime!);
    t.diagnostic(`our write stats: ${JSON.stringify(mine['partitionToWriteStats'])}`);
    t.diagnostic(`Hudi's write stats: ${JSON.stringify(hudiCommit?.['partitionToWriteStats'])}`);
    assert.deepEqual(commitShape(mine), commitShape(hudiCommit!), "the replacecommit records what Hudi's does");
  });

  it('executes a z-order plan on another copy with the same outcome', async (t) => {
    const path = join(root, 'zorder');
    const result = await cluster(path, { 'hoodie.clustering.plan.strategy.sort.columns': 'score,qty', 'hoodie.layout.optimize.strategy': 'z-order' });
    assert.equal(result.commit?.outcome, 'committed');
    assert.deepEqual(withoutFileName(await spark(hudi, path)), withoutFileName(snapshotBefore));
    assert.deepEqual(withoutFileName(await spark(hudi, path, 'read_optimized')), withoutFileName(snapshotBefore));
    await validate(t, path, 'after our z-order clustering');
  });

  it('the state machine clusters a copy on S3 the same way, then runs the clean and archive of merge-on-read tables', async (t) => {
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    const functionsDir = ensureBundles();
    const lockTable = await createLockTable('hudi-serverless-mor-clustering');
    try {
      const tablePath = await s3TablePath('mor-clustering');
      const storage = openStorage(tablePath);
      await uploadFiles(join(root, 'serverless'), storage);
      const execution = await runStateMachineLocally(
        { tablePath, properties: SORTED },
        { functionsDir, retryPauseMs: 20, environment: { LOCK_TABLE: lockTable } },
      );
      assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
      const output = execution.output as TableServicesOutput;
      assert.equal(output.clustering?.status, 'COMMITTED', JSON.stringify(output.clustering));
      assert.equal(output.clustering?.replacedFileGroups, 4);
      // A copy just clustered has nothing the cleaner may delete yet (the replaced slices are within retention), and
      // too few commits to archive: both steps run on merge-on-read tables and say so.
      assert.equal(output.clean?.status, 'NOTHING_TO_CLEAN', JSON.stringify(output.clean));
      assert.equal(output.archive?.status, 'NOTHING_TO_ARCHIVE', JSON.stringify(output.archive));
      const local = join(tempDir('mor-cluster-sls-'), 'table');
      await downloadTable(storage, local);
      assert.deepEqual(withoutFileName(await spark(hudi, local)), withoutFileName(snapshotBefore));
      assert.deepEqual(withoutFileName(await spark(hudi, local, 'read_optimized')), withoutFileName(snapshotBefore));
      await validate(t, local, 'after the serverless clustering');
    } finally {
      await dropLockTable(lockTable);
    }
  });

  it('Spark upserts into the clustered file groups and compacts them on top of ours', async (t) => {
    await hudi.write(table, { schema: SCHEMA, rows: [row(1, 9), row(12, 9)], options: sparkOptions('upsert') });
    await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${table}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
    await hudi.sql(`CALL run_compaction(op => 'run', path => '${table}')`);
    const after = await HudiTable.open(openStorage(table));
    assert.ok(
      after.timeline.completed().some((i) => i.action === 'commit'),
      "Spark's compaction completed",
    );
    const snapshot = await spark(hudi, table);
    const names = new Map(snapshot.map((r) => [Number(r['id']), String(r['name'])]));
    assert.equal(names.get(1), 'n1-v9');
    assert.equal(names.get(12), 'n12-v9');
    assert.equal(names.has(3), false, 'the deleted record stays deleted');
    assert.equal(snapshot.length, snapshotBefore.length);
    assert.deepEqual(canonicalRows(await ours(table)), canonicalRows(snapshot));
    assert.deepEqual(canonicalRows(await spark(hudi, table, 'read_optimized')), canonicalRows(snapshot), 'compacted: the base files hold it all');
    await validate(t, table, "after Spark's upsert and compaction");
  });
});
