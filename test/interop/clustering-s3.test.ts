/**
 * The clustering round trip on S3 for real (moto through the local stack): Spark (Hudi 0.15, Hadoop S3A) writes the
 * table, our `cluster` command clusters the same table as s3://, Spark, hudi-rs and our reader read it alike, and a
 * Spark upsert afterwards finds our records. Then a plan we schedule on the s3a:// name is executed by Hudi itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { readClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { canonicalRows, type HudiHarness, type RowSet, startHudi } from '../helpers/hudi.js';
import { s3TablePath } from '../helpers/s3.js';
import {
  assertFileNamesMatchOutputs,
  clusterWithCli,
  commitJson,
  SCHEMA,
  sparkOptions,
  tableRow,
  timelineFiles,
  withoutFileName,
  writeSmallFiles,
} from './clustering-helpers.js';

const PARTITIONS = ['2024-01-01', '2024-01-02'];
const ROWS = 12;

let hudi: HudiHarness;
/** s3://bucket/…: the harness hands Spark the same table as s3a://. */
let table: string;
let sparkBefore: RowSet;

async function readAlike(path: string): Promise<Row[]> {
  const spark = await hudi.read(path);
  assert.deepEqual(canonicalRows((await hudi.hudiRsRead(path)).rows), canonicalRows(spark.rows), 'hudi-rs reads what Spark reads');
  const ours = await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true });
  assert.deepEqual(canonicalRows(ours.rows), canonicalRows(spark.rows), 'our reader reads what Spark reads');
  return spark.rows;
}

before(async () => {
  hudi = await startHudi({ s3: true });
  table = await s3TablePath('clustering-interop');
  // 3 batches of 4 rows over 2 partitions: 3 small base files per partition.
  assert.equal(await writeSmallFiles(hudi, table, PARTITIONS, 3, 4), ROWS);
  sparkBefore = await hudi.read(table);
  assert.equal(sparkBefore.rows.length, ROWS);
});

after(async () => {
  await hudi?.close();
});

describe('clustering a Spark-written table on S3', () => {
  let outputFileIds: Set<string>;

  it('our z-order clustering of the s3:// table: Spark, hudi-rs and our reader read the rows Spark read before', async () => {
    const run = clusterWithCli(table, {
      'hoodie.layout.optimize.strategy': 'z-order',
      'hoodie.clustering.plan.strategy.sort.columns': 'score,ts',
      // 3 files of ~436 KB per partition → 2 output files each.
      'hoodie.clustering.plan.strategy.target.file.max.bytes': '700000',
    });
    assert.deepEqual(
      run.groups.map((group) => [group.partitionPath, group.inputFiles, group.numOutputFileGroups]),
      PARTITIONS.map((partition) => [partition, 3, 2]),
    );
    const rows = await readAlike(table);
    assert.deepEqual(withoutFileName(rows), withoutFileName(sparkBefore.rows));
    const commit = await commitJson(openStorage(table), run.instantTime, 'replacecommit');
    assertFileNamesMatchOutputs(rows, commit, PARTITIONS);
    outputFileIds = new Set(
      Object.values(commit.partitionToWriteStats)
        .flat()
        .map((stat) => stat.fileId),
    );
  });

  it('a Spark upsert of every record through the bloom index updates them in our files on S3', async () => {
    const updates = Array.from({ length: ROWS }, (_, index) => tableRow(index + 1, PARTITIONS, 1));
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [...updates, tableRow(ROWS + 1, PARTITIONS)],
      options: sparkOptions({ 'hoodie.datasource.write.operation': 'upsert', 'hoodie.index.type': 'BLOOM' }),
    });
    const storage = openStorage(table);
    const upsert = (await timelineFiles(storage))
      .filter((name) => name.endsWith('.commit'))
      .at(-1)!
      .slice(0, 17);
    const stats = Object.values((await commitJson(storage, upsert, 'commit')).partitionToWriteStats).flat();
    assert.equal(
      stats.reduce((total, stat) => total + stat.numUpdateWrites, 0),
      ROWS,
      'every key was found in our base files',
    );
    assert.ok(stats.filter((stat) => stat.numUpdateWrites > 0).every((stat) => outputFileIds.has(stat.fileId)));
    const rows = await readAlike(table);
    assert.equal(new Set(rows.map((row) => row['id'])).size, ROWS + 1);
    assert.equal(rows.length, ROWS + 1);
  });

  it("a plan we schedule on the s3a:// name is executed by Hudi's run_clustering", async () => {
    // Hudi opens a plan's file paths with the base path's file system; Hadoop's S3A refuses s3:// paths ("Wrong FS"),
    // so a plan for a Spark that names the table s3a:// must name its files s3a:// too.
    const s3a = table.replace(/^s3:/, 's3a:');
    const before = await hudi.read(table);
    const scheduled = clusterWithCli(s3a, { 'hoodie.clustering.plan.strategy.sort.columns': 'qty' }, 'schedule');
    const storage = openStorage(table);
    const plan = await readClusteringPlan(storage, scheduled.instantTime, TIMELINE_LAYOUT_1);
    assert.ok(plan !== undefined);
    assert.ok(
      plan.inputGroups.flatMap((group) => group.slices).every((slice) => slice.dataFilePath.startsWith(`${s3a}/`)),
      'the plan names s3a:// files',
    );

    const result = await hudi.sql(
      `CALL run_clustering(path => '${s3a}', instants => '${scheduled.instantTime}', op => 'execute', options => 'hoodie.metadata.enable=false')`,
    );
    assert.deepEqual(
      result.rows.map((row) => [row['timestamp'], row['state']]),
      [[scheduled.instantTime, 'COMPLETED']],
    );
    assert.deepEqual(withoutFileName(await readAlike(table)), withoutFileName(before.rows));
  });
});
