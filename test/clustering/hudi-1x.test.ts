/**
 * Clustering's Hudi 1.x pieces without Spark: the plan's 1.x encoding checked against the plans Hudi 1.0.2 and 1.1.1
 * wrote into the fixture tables (test/fixtures/hudi-1x-tables), the Java HashSet order Hudi 1.x gives incremental
 * partitions and missingSchedulePartitions, the plan's missing partitions, which 1.x tables clustering accepts, and a
 * merge-on-read table of ours clustered with its log files merged. test/interop/hudi-1x-clustering.test.ts and
 * hudi-1x-mor-clustering.test.ts run the whole service against Spark.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type ClusteringConfig, DEFAULT_CLUSTERING_CONFIG, resolveClusteringConfig } from '../../lib/clustering/config.js';
import { loadClusteringInstant } from '../../lib/clustering/instant.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { buildClusteringPlan, type FileSliceInput, javaHashSetOrder } from '../../lib/clustering/plan-strategy.js';
import { describeClusteringPlans } from '../../lib/clustering/show.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { UnsupportedTableError } from '../../lib/errors.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { rollbackInflightClustering, rollbackInstant } from '../../lib/rollback/rollback.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { assertSupported, tableConfigFromProperties } from '../../lib/table/config.js';
import { parseJavaProperties } from '../../lib/table/properties.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeRequestedReplaceMetadata, decodeTimelineAvro, decodeWithWriterSchema } from '../../lib/timeline/avro-files.js';
import { decodeClusteringPlan, encodeClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import { TIMELINE_LAYOUT_1, timelineLayout2 } from '../../lib/timeline/layout.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { HUDI_1X_VERSIONS, hudi1xJsonl, hudi1xWriteOptions, writerSchemaText } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hudi-1x-tables');
const LAYOUT_2 = timelineLayout2('.hoodie/timeline', 'LOCAL');
const REQUESTED_REPLACE = 'org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata';

const hudiPlans = HUDI_1X_VERSIONS.flatMap((version) => {
  const folder = join(FIXTURES, version, 'cow', 'timeline');
  return readdirSync(folder)
    .filter((name) => name.endsWith('.clustering.requested'))
    .map((name) => ({ version, name, bytes: readFileSync(join(folder, name)) }));
});

describe("clustering plans in Hudi 1.x's encoding", () => {
  it('the fixtures hold plans of both releases', () => {
    assert.deepEqual([...new Set(hudiPlans.map((plan) => plan.version))], [...HUDI_1X_VERSIONS]);
  });

  for (const { version, name, bytes } of hudiPlans) {
    it(`encodes the plan Hudi ${version} wrote (${name}) to the same record under the same writer schema`, () => {
      const plan = decodeClusteringPlan(bytes, name);
      assert.ok(plan !== undefined, 'a CLUSTER plan');
      assert.deepEqual(plan.missingSchedulePartitions, [], 'incremental table services (1.x default) write a list, empty here');
      const ours = encodeClusteringPlan(plan, LAYOUT_2);
      assert.equal(writerSchemaText(ours), writerSchemaText(bytes), 'the 1.x HoodieRequestedReplaceMetadata schema, missingSchedulePartitions last');
      assert.deepEqual(
        decodeWithWriterSchema(ours, 'ours', [REQUESTED_REPLACE]).record,
        decodeWithWriterSchema(bytes, name, [REQUESTED_REPLACE]).record,
        'every field, read with each file’s own schema',
      );
    });
  }

  it('a table-version-6 plan keeps 0.x’s schema, without missingSchedulePartitions', () => {
    const plan = decodeClusteringPlan(hudiPlans[0]!.bytes, hudiPlans[0]!.name)!;
    const bytes = encodeClusteringPlan(plan, TIMELINE_LAYOUT_1);
    assert.ok(!writerSchemaText(bytes).includes('missingSchedulePartitions'));
    assert.equal('missingSchedulePartitions' in decodeRequestedReplaceMetadata(bytes, 'v6').clusteringPlan!, false);
  });

  it('a 1.x plan without the list (incremental table services off) writes null, as Hudi does', () => {
    const { missingSchedulePartitions: _, ...plan } = decodeClusteringPlan(hudiPlans[0]!.bytes, hudiPlans[0]!.name)!;
    const record = decodeWithWriterSchema(encodeClusteringPlan(plan, LAYOUT_2), 'ours', [REQUESTED_REPLACE]).record as {
      clusteringPlan: { missingSchedulePartitions: unknown };
    };
    assert.equal(record.clusteringPlan.missingSchedulePartitions, null);
  });
});

describe("Java's HashSet order (Hudi 1.x's incremental partitions and missingSchedulePartitions)", () => {
  // Printed by OpenJDK 17's jshell: new ArrayList<>(set) after adding the values in this order.
  it('matches what java.util.HashSet iterates, across a resize', () => {
    const added = ['2024-01-02', '2024-01-01', 'dt=2024-03-05', 'zz', '日本', 'a', 'b/c', '2023-12-31', 'p1', 'p10'];
    added.push('p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9', 'x');
    const java = 'zz|a|p1|p2|p3|p4|2023-12-31|p5|p6|p7|p8|p9|日本|p10|2024-01-02|2024-01-01|dt=2024-03-05|b/c|x';
    assert.deepEqual(javaHashSetOrder(added), java.split('|'));
    assert.deepEqual(javaHashSetOrder(['2024-01-02', '2024-01-01']), ['2024-01-02', '2024-01-01']);
    assert.deepEqual(javaHashSetOrder(['a', 'a', 'b']), ['a', 'b']);
  });
});

describe('missingSchedulePartitions of a 1.x plan', () => {
  const slice = (fileId: string, partitionPath: string): FileSliceInput => ({
    fileId,
    partitionPath,
    baseFilePath: `s3://b/t/${partitionPath}/${fileId}_0-1-1_20240101000000000.parquet`,
    baseFileSize: 60,
    instantTime: '20240101000000000',
  });
  const slices = ['p1', 'p2', 'p3'].flatMap((partition) => [slice(`${partition}-a`, partition), slice(`${partition}-b`, partition)]);
  const config: ClusteringConfig = { ...DEFAULT_CLUSTERING_CONFIG, maxBytesPerGroup: 100, maxNumGroups: 3 };

  it('lists the partitions the group cap cut, and the ones the filter left out', () => {
    // Each partition makes two groups of one 60-byte file: p1's two and p2's first fit under max.num.groups=3.
    const plan = buildClusteringPlan({
      partitionPaths: ['p1', 'p2', 'p3'],
      latestSlices: slices,
      pendingFileGroupIds: new Set(),
      config,
      missingPartitions: ['p9'],
    })!;
    assert.deepEqual(
      plan.inputGroups.map((group) => group.slices.map((s) => s.fileId)),
      [['p1-a'], ['p1-b'], ['p2-a']],
    );
    assert.deepEqual(plan.missingSchedulePartitions, javaHashSetOrder(['p2', 'p3', 'p9']));
  });

  it('is an empty list when everything was planned, and absent for a table-version-6 plan', () => {
    const all = { ...config, maxNumGroups: 30 };
    assert.deepEqual(
      buildClusteringPlan({ partitionPaths: ['p1'], latestSlices: slices, pendingFileGroupIds: new Set(), config: all, missingPartitions: [] })!
        .missingSchedulePartitions,
      [],
    );
    assert.equal(
      'missingSchedulePartitions' in buildClusteringPlan({ partitionPaths: ['p1'], latestSlices: slices, pendingFileGroupIds: new Set(), config: all })!,
      false,
    );
  });
});

describe('which Hudi 1.x tables clustering writes', () => {
  for (const version of HUDI_1X_VERSIONS) {
    const configOf = (type: 'cow' | 'mor') => {
      const path = join(FIXTURES, version, type, 'hoodie.properties');
      return tableConfigFromProperties(parseJavaProperties(readFileSync(path, 'utf8'), path), path);
    };
    it(`clusters Hudi ${version}'s copy-on-write and merge-on-read tables`, () => {
      assert.doesNotThrow(() => assertSupported(configOf('cow'), 'cow', 'clustering'));
      assert.doesNotThrow(() => assertSupported(configOf('mor'), 'mor', 'clustering'));
    });
  }
  for (const tableVersion of [8, 9]) {
    it(`clusters a version ${tableVersion} merge-on-read table we wrote: its log files merged into the new base files`, async () => {
      const dir = tempDir(`hudi-1x-mor-cluster-${tableVersion}-`);
      const storage = new LocalStorage(join(dir, 'table'));
      const props = new Map([
        ...Object.entries(hudi1xWriteOptions('mor', 'MERGE_ON_READ')),
        ['hoodie.write.table.version', String(tableVersion)],
        ['hoodie.metadata.enable', 'false'],
      ]);
      const write = (operation: 'bulk_insert' | 'upsert' | 'delete', ids: number[], at: number) =>
        writeBatch(storage, { input: { file: hudi1xJsonl(dir, ids, at), format: 'jsonl' }, operation, properties: props });
      await write('bulk_insert', [1, 2, 3, 4], 1);
      // Log files: id 3 updated, id 4 deleted (an update ordered before the stored one, test/interop/hudi-1x-mor-clustering).
      await write('upsert', [3], 2);
      await write('delete', [4], 3);
      const before = await HudiTable.open(storage);
      assert.equal(before.config.version, tableVersion);
      const expected = (await readSnapshot(before)).rows.map((row) => row['name']).sort();
      assert.deepEqual(expected, ['v1-1', 'v1-2', 'v2-3']);
      assert.ok(
        readdirSync(join(dir, 'table', '2024-01-01')).some((name) => name.includes('.log.')),
        'log files to merge',
      );
      const engine = await openParquetEngine();
      try {
        const table = await HudiTable.open(storage, { mode: 'clustering' });
        const { config } = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': 'id' } });
        const lock = lockProviderFor(table.config.properties, table.config.name, storage);
        const run = await runClusteringJob(table, { mode: 'scheduleAndExecute', config, lock, engine, force: true, properties: props });
        assert.equal(run.commit?.outcome, 'committed');
      } finally {
        await engine.close();
      }
      const after = await HudiTable.open(storage);
      const names = async (queryType: QueryType) => (await readSnapshot(after, { queryType })).rows.map((row) => row['name']).sort();
      assert.deepEqual(await names('snapshot'), expected);
      assert.deepEqual(await names('read_optimized'), expected, 'the merged rows are in the new base files');
    });
  }
  it('refuses to plan beside a pending log compaction, whose file groups Hudi leaves out, before writing anything', async () => {
    const dir = tempDir('hudi-1x-mor-logcompaction-');
    const storage = new LocalStorage(join(dir, 'table'));
    const props = new Map([
      ...Object.entries(hudi1xWriteOptions('mor', 'MERGE_ON_READ')),
      ['hoodie.write.table.version', '9'],
      ['hoodie.metadata.enable', 'false'],
    ]);
    await writeBatch(storage, { input: { file: hudi1xJsonl(dir, [1, 2], 1), format: 'jsonl' }, operation: 'bulk_insert', properties: props });
    const timeline = join(dir, 'table', '.hoodie', 'timeline');
    writeFileSync(join(timeline, '29990101000000000.logcompaction.requested'), '');
    const before = readdirSync(timeline).sort();
    const engine = await openParquetEngine();
    try {
      const table = await HudiTable.open(storage, { mode: 'clustering' });
      const { config } = resolveClusteringConfig({ event: {} });
      await assert.rejects(
        runClusteringJob(table, {
          mode: 'scheduleAndExecute',
          config,
          lock: lockProviderFor(table.config.properties, table.config.name, storage),
          engine,
          force: true,
        }),
        (error: unknown) => error instanceof UnsupportedTableError && /log compaction 29990101000000000 is pending/.test(error.message),
      );
    } finally {
      await engine.close();
    }
    assert.deepEqual(readdirSync(timeline).sort(), before, 'nothing written');
  });
});

describe("a Hudi 1.x table's clusterings, found through its layout", () => {
  for (const version of HUDI_1X_VERSIONS) {
    /** The fixture's hoodie.properties and timeline as a table folder (no data files: only the timeline is read). */
    const openFixture = async () => {
      const dir = tempDir(`hudi-${version}-clusterings-`);
      mkdirSync(join(dir, '.hoodie'), { recursive: true });
      cpSync(join(FIXTURES, version, 'cow', 'hoodie.properties'), join(dir, '.hoodie', 'hoodie.properties'));
      cpSync(join(FIXTURES, version, 'cow', 'timeline'), join(dir, '.hoodie', 'timeline'), { recursive: true });
      return HudiTable.open(new LocalStorage(dir), { mode: 'clustering' });
    };
    const timelineOf = (suffix: string) =>
      readdirSync(join(FIXTURES, version, 'cow', 'timeline'))
        .filter((name) => name.endsWith(suffix))
        .map((name) => name.slice(0, 17))
        .sort();

    it(`Hudi ${version}: lists the pending plan, loads pending and completed clusterings, and rolls a pending one back in layout 2`, async () => {
      const table = await openFixture();
      const [pending] = timelineOf('.clustering.requested').filter((time) => !timelineOf('.replacecommit').includes(time));
      const [completed] = timelineOf('.replacecommit');
      assert.ok(pending !== undefined && completed !== undefined);
      assert.deepEqual(
        (await describeClusteringPlans(table)).map((plan) => [plan.instantTime, plan.state]),
        [[pending, 'REQUESTED']],
      );
      assert.deepEqual((await loadClusteringInstant(table, pending)).instant, { time: pending, action: 'clustering', state: 'REQUESTED' });
      const done = await loadClusteringInstant(table, completed);
      assert.equal(done.instant.action, 'replacecommit');
      assert.equal(done.instant.state, 'COMPLETED');
      const timeline = table.storage.uriOf('.hoodie/timeline');
      const lock = new StorageLockProvider(table.storage);
      // Only requested: no attempt to roll back, the plan stays (rollbackInflightInstant runs on inflight ones).
      assert.equal(await rollbackInflightClustering(table, pending, { lock }), undefined);
      assert.ok(readdirSync(timeline).includes(`${pending}.clustering.requested`));
      // Abandoned: a layout-2 rollback names the clustering action, and the plan is gone (deleteInstants).
      const result = await rollbackInstant(await table.reload(), pending, { lock, ignoreHeartbeat: true });
      assert.equal(result.filesFrom, 'none');
      assert.deepEqual(result.metadata.instantsRollback, [{ commitTime: pending, action: 'clustering' }]);
      const names = readdirSync(timeline);
      assert.ok(!names.some((name) => name.startsWith(`${pending}.clustering`)), names.join(', '));
      const rollbackFile = names.find((name) => name.startsWith(`${result.rollbackInstantTime}_`) && name.endsWith('.rollback'));
      assert.ok(rollbackFile !== undefined, `R_<completion>.rollback: ${names.join(', ')}`);
      const planFile = join(timeline, `${result.rollbackInstantTime}.rollback.requested`);
      const plan = decodeTimelineAvro('rollbackPlan', readFileSync(planFile), planFile);
      assert.deepEqual(plan.instantToRollback, { commitTime: pending, action: 'clustering' });
      assert.ok(names.includes(`${result.rollbackInstantTime}.rollback.inflight`));
    });
  }
});
