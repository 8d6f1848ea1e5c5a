/**
 * The serverless clustering (the real state machine under aws-local-stepfunctions, the bundled Lambdas, S3 and
 * DynamoDB through the local stack) on copy-on-write tables Hudi 1.0.2 and 1.1.1 wrote, judged by that release on
 * Spark: the table is uploaded, the state machine plans, executes and commits a clustering (then cleans and, with
 * hoodie.archive.automatic=false, skips archiving), and the table, downloaded, holds layout 2's clustering files, the
 * plan Hudi's run_clustering makes on a local copy, and the rows Spark read before. With Hudi's default metadata
 * table on, the commit step keeps it: Spark reads the downloaded table with it on and off as we do; so it does for a
 * merge-on-read table whose slices have log files (upserts, a delete), read-optimized then reading the merged rows.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import { runStateMachineLocally } from '../../lib/serverless/local/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { decodeClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS, hudi1xMorWrite } from '../helpers/hudi-1x-fixtures.js';
import { assertMetadata1xAgrees, assertMirroredBefore } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, downloadTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';
import { SCHEMA, sparkOptions, tableRow, withoutFileName, writeSmallFiles } from './clustering-helpers.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const PARTITIONS = ['2024-01-01', '2024-01-02', '2024-01-03'];
const READ = { options: { 'hoodie.metadata.enable': 'false' } };
const PROPERTIES = {
  'hoodie.metadata.enable': 'false',
  'hoodie.clustering.plan.strategy.sort.columns': 'score',
  'hoodie.archive.automatic': 'false',
};

function clusteringPlans(table: string) {
  const folder = join(table, '.hoodie', 'timeline');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.clustering.requested'))
    .map((name) => {
      const plan = decodeClusteringPlan(readFileSync(join(folder, name)), name)!;
      // By partition: Hudi lists a local disk's partitions in directory order, S3's sorted as we do (docs/hudi-1x-format.md).
      const groups = plan.inputGroups.map((group) => ({
        partition: group.slices[0]?.partitionPath ?? '',
        inputs: group.slices.map((slice) => slice.fileId).sort(),
      }));
      groups.sort((a, b) => (a.partition < b.partition ? -1 : a.partition > b.partition ? 1 : 0));
      return { name, groups, missing: plan.missingSchedulePartitions };
    });
}

for (const version of HUDI_1X_VERSIONS) {
  describe(`the serverless clustering on tables Hudi ${version} wrote, judged by Hudi ${version}`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    let lockTable: string;
    const root = tempDir(`hudi-${version}-cluster-sls-`);
    const source = join(root, 'source');

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      await hudi.sql('SET hoodie.metadata.enable=false');
      await writeSmallFiles(hudi, source, PARTITIONS, 3, 9);
      lockTable = await createLockTable('hudi-1x-cluster');
    });

    after(async () => {
      await hudi?.close();
      await dropLockTable(lockTable);
    });

    /**
     * Upload `source` (a table with Hudi's default metadata table), run the state machine with `properties`, download
     * the table: its clustering committed, the metadata table's deltacommit before it, and Spark and we agree on it.
     */
    async function clusterKeepingMetadata(source: string, name: string, properties: Record<string, string>): Promise<string> {
      const tablePath = await s3TablePath(`hudi-${version.replace(/\./g, '')}-cluster-sls-${name}`);
      const storage = openStorage(tablePath);
      await uploadFiles(source, storage);
      const execution = await runStateMachineLocally(
        { tablePath },
        { functionsDir: ensureBundles(), retryPauseMs: 20, environment: { LOCK_TABLE: lockTable, CLUSTERING_PROPERTIES: JSON.stringify(properties) } },
      );
      assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
      const output = execution.output as TableServicesOutput;
      assert.equal(output.clustering?.status, 'COMMITTED', JSON.stringify(output));
      const mine = join(root, `mine_${name}`);
      await downloadTable(storage, mine);
      assertMirroredBefore(mine, output.clustering.instant, 'replacecommit');
      await hudi.sql('SET hoodie.metadata.enable=true');
      try {
        await assertMetadata1xAgrees(hudi, mine, `the serverless clustering ${output.clustering.instant}`);
      } finally {
        await hudi.sql('SET hoodie.metadata.enable=false');
      }
      return mine;
    }

    it("plans, executes and commits on S3: Hudi's plan groups, layout 2's files, the rows Spark read before", async () => {
      const rowsBefore = withoutFileName((await hudi.read(source, READ)).rows);
      const theirs = join(root, 'theirs');
      cpSync(source, theirs, { recursive: true });
      await hudi.sql(`CALL run_clustering(path => '${theirs}', order => 'score', op => 'schedule', options => 'hoodie.metadata.enable=false')`);

      const tablePath = await s3TablePath(`hudi-${version.replace(/\./g, '')}-cluster-sls`);
      const storage = openStorage(tablePath);
      await uploadFiles(source, storage);
      const execution = await runStateMachineLocally(
        { tablePath },
        { functionsDir: ensureBundles(), retryPauseMs: 20, environment: { LOCK_TABLE: lockTable, CLUSTERING_PROPERTIES: JSON.stringify(PROPERTIES) } },
      );
      assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
      const output = execution.output as TableServicesOutput;
      assert.equal(output.clustering?.status, 'COMMITTED', JSON.stringify(output));
      const ran = (name: string) => execution.invocations.filter((invocation) => invocation.functionName === name && invocation.errorName === undefined).length;
      assert.ok(ran('plan') === 1 && ran('execute-group') + ran('execute-copy-group') >= 1 && ran('commit') === 1);

      const mine = join(root, 'mine');
      await downloadTable(storage, mine);
      const names = readdirSync(join(mine, '.hoodie', 'timeline'));
      const instant = output.clustering.instant;
      assert.ok(names.includes(`${instant}.clustering.requested`) && names.includes(`${instant}.clustering.inflight`), names.join(', '));
      assert.ok(
        names.some((name) => new RegExp(`^${instant}_\\d{17}\\.replacecommit$`).test(name)),
        names.join(', '),
      );
      const [myPlan, theirPlan] = [clusteringPlans(mine), clusteringPlans(theirs)];
      assert.equal(myPlan.length, 1);
      assert.deepEqual(
        myPlan.map(({ groups, missing }) => ({ groups, missing })),
        theirPlan.map(({ groups, missing }) => ({ groups, missing })),
      );
      assert.deepEqual(withoutFileName((await hudi.read(mine, READ)).rows), rowsBefore);
    });

    it("with Hudi's default metadata table: the commit step writes the replacecommit's deltacommit, read by Spark as by us", async () => {
      const withMetadata = join(root, 'source_mdt');
      for (let batch = 0; batch < 3; batch++) {
        const rows = Array.from({ length: 9 }, (_, i) => tableRow(batch * 9 + i + 1, PARTITIONS));
        await hudi.write(withMetadata, {
          schema: SCHEMA,
          rows,
          options: sparkOptions({ 'hoodie.metadata.enable': 'true', 'hoodie.datasource.write.operation': 'insert' }),
        });
      }
      const rowsBefore = withoutFileName((await hudi.read(withMetadata, READ)).rows);
      const { 'hoodie.metadata.enable': _off, ...keepingIt } = PROPERTIES;
      const mine = await clusterKeepingMetadata(withMetadata, 'mdt', keepingIt);
      assert.deepEqual(withoutFileName((await hudi.read(mine, READ)).rows), rowsBefore);
    });

    it("on a merge-on-read table with log files and Hudi's default metadata table: the rows and metadata Spark reads", async () => {
      const mor = join(root, 'source_mor');
      const write = (ids: number[], at: number, extra: Record<string, string> = {}) =>
        hudi1xMorWrite(hudi, mor, 'mor_sls', ids, at, { 'hoodie.metadata.enable': 'true', 'hoodie.compact.inline': 'false', ...extra });
      await write([1, 2, 3, 4], 1);
      await write([5, 6, 7, 8], 1);
      await write([1, 6], 2);
      await write([3], 3, { 'hoodie.datasource.write.operation': 'delete' });
      const rowsBefore = withoutFileName((await hudi.read(mor, READ)).rows);
      const properties = { 'hoodie.clustering.plan.strategy.sort.columns': 'id', 'hoodie.archive.automatic': 'false' };
      const mine = await clusterKeepingMetadata(mor, 'mor', properties);
      assert.equal(clusteringPlans(mine).length, 1);
      assert.deepEqual(withoutFileName((await hudi.read(mine, READ)).rows), rowsBefore);
      const readOptimized = await hudi.read(mine, { options: { ...READ.options, 'hoodie.datasource.query.type': 'read_optimized' } });
      assert.deepEqual(withoutFileName(readOptimized.rows), rowsBefore, 'every slice clustered: read-optimized reads the merged rows');
    });
  });
}
