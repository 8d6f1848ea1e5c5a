/**
 * Scheduling: when a plan is made (max.commits), what it holds, and refusing bad settings before writing anything.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clusterCommand } from '../../lib/cli/cluster-commands.js';
import { type ClusteringConfig, resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { hudiSchedulingThreshold } from '../../lib/clustering/plan-strategy.js';
import { schedule } from '../../lib/clustering/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { HudiError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { triggerSchedulingThreshold } from '../../lib/serverless/steps/trigger/trigger.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { readClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { commitsSinceLastClustering } from '../../lib/timeline/queries.js';
import { officialAvroType, readWithAvscStreams } from '../helpers/avro-official.js';
import { tempDir } from '../helpers/fixtures.js';
import { createSmallFilesTable } from '../helpers/small-files-table.js';

function config(properties: Record<string, string> = {}): ClusteringConfig {
  return resolveClusteringConfig({ event: properties }).config;
}

async function smallTable(commits: number, partitions = 2) {
  const dir = tempDir('clustering-schedule-');
  const made = await createSmallFilesTable({ dir, partitions, commits, rowsPerFile: 20 });
  const storage = openStorage(dir);
  return { made, storage, lock: new StorageLockProvider(storage, { waitMs: 5000 }), table: await HudiTable.open(storage, { mode: 'write' }) };
}

/** Every object under .hoodie (the timeline and everything beside it), to prove nothing was written. */
function metafolderListing(dir: string): string[] {
  return readdirSync(join(dir, '.hoodie'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Decode with avsc's own container reader and Hudi's official schema (not our code or schemas). */
function decodeWithOfficialSchema(bytes: Uint8Array): Promise<{ records: unknown[]; writerName: string | undefined }> {
  return readWithAvscStreams(bytes, officialAvroType('HoodieRequestedReplaceMetadata'));
}

describe('when to schedule', () => {
  it("Hudi waits only when inline or async clustering is on (ClusteringPlanActionExecutor); the trigger's policy waits for async.max.commits otherwise", () => {
    // Hudi's defaults: no wait (HoodieClusteringJob schedules whatever the commit count).
    assert.deepEqual(hudiSchedulingThreshold(config()).commits, 0);
    assert.match(hudiSchedulingThreshold(config()).setBy, /neither hoodie\.clustering\.inline nor hoodie\.clustering\.async\.enabled/);
    assert.equal(hudiSchedulingThreshold(config({ 'hoodie.clustering.async.max.commits': '2' })).commits, 0, 'max.commits alone does not switch waiting on');
    assert.deepEqual(hudiSchedulingThreshold(config({ 'hoodie.clustering.async.enabled': 'true', 'hoodie.clustering.async.max.commits': '2' })), {
      commits: 2,
      setBy: 'hoodie.clustering.async.max.commits',
    });
    assert.deepEqual(hudiSchedulingThreshold(config({ 'hoodie.clustering.schedule.inline': 'true', 'hoodie.clustering.async.max.commits': '3' })), {
      commits: 3,
      setBy: 'hoodie.clustering.async.max.commits',
    });
    assert.deepEqual(hudiSchedulingThreshold(config({ 'hoodie.clustering.inline': 'true', 'hoodie.clustering.inline.max.commits': '7' })), {
      commits: 7,
      setBy: 'hoodie.clustering.inline.max.commits',
    });
    assert.equal(hudiSchedulingThreshold(config({ 'hoodie.datasource.clustering.async.enable': 'true' })).commits, 4, 'the datasource alias counts');
    // The serverless trigger: Hudi's rule when a key switches clustering on, else async.max.commits.
    assert.deepEqual(triggerSchedulingThreshold(config()), { commits: 4, setBy: "hoodie.clustering.async.max.commits, the trigger's policy" });
    assert.equal(triggerSchedulingThreshold(config({ 'hoodie.clustering.async.max.commits': '2' })).commits, 2);
    assert.equal(triggerSchedulingThreshold(config({ 'clustering.delta_commits': '6' })).commits, 6, "Flink's name for it too");
    assert.deepEqual(triggerSchedulingThreshold(config({ 'hoodie.clustering.inline': 'true', 'hoodie.clustering.inline.max.commits': '7' })), {
      commits: 7,
      setBy: 'hoodie.clustering.inline.max.commits',
    });
    assert.equal(triggerSchedulingThreshold(config({ 'hoodie.clustering.async.enabled': 'true', 'hoodie.clustering.async.max.commits': '0' })).commits, 0);
  });

  it('with neither inline nor async clustering on, plans at once, even right after a clustering (as HoodieClusteringJob)', async () => {
    const { lock, table, storage } = await smallTable(1);
    const first = await schedule(table, config(), { lock });
    assert.ok(first, 'one commit since the table was created is enough');
    const engine = await openParquetEngine();
    try {
      await runClusteringJob(await table.reload(), { mode: 'execute', config: config(), lock, engine, tempDir: tempDir() });
    } finally {
      await engine.close();
    }
    const after = await table.reload();
    assert.deepEqual(await commitsSinceLastClustering(storage, after.timeline), { count: 0, lastClustering: first.instantTime });
    const again = await schedule(after, config(), { lock });
    assert.ok(again, 'no commit since the last clustering, still planned: the clustered files are small');
    assert.ok(again.instantTime > first.instantTime);
  });

  it('with async clustering on: plans nothing and writes nothing below max.commits, plans at max.commits, and counts from the last clustering', async () => {
    const { made, storage, lock, table } = await smallTable(3);
    const asyncOn = (extra: Record<string, string> = {}) => config({ 'hoodie.clustering.async.enabled': 'true', ...extra });
    const before = metafolderListing(made.dir);
    const notes: string[] = [];
    assert.equal(await schedule(table, asyncOn(), { lock, log: (line) => notes.push(line) }), undefined);
    assert.deepEqual(metafolderListing(made.dir), before);
    assert.match(notes.join('\n'), /3 completed commit\(s\) since the table was created, waiting for 4 \(hoodie\.clustering\.async\.max\.commits\)/);

    const scheduled = await schedule(table, asyncOn({ 'hoodie.clustering.async.max.commits': '3' }), { lock });
    assert.ok(scheduled);
    assert.deepEqual(
      scheduled.groups.map((group) => [group.index, group.partitionPath, group.inputFiles, group.numOutputFileGroups]),
      [
        [0, 'dt=2024-01-01', 3, 1],
        [1, 'dt=2024-01-02', 3, 1],
      ],
    );
    const partitionBytes = made.files
      .filter((file) => file.startsWith('dt=2024-01-01/'))
      .reduce((total, file) => total + statSync(join(made.dir, file)).size, 0);
    assert.equal(scheduled.groups[0]!.inputBytes, partitionBytes);

    // Run it to completion: the count restarts after a completed clustering.
    const engine = await openParquetEngine();
    try {
      await runClusteringJob(await table.reload(), { mode: 'execute', config: config(), lock, engine, tempDir: tempDir() });
    } finally {
      await engine.close();
    }
    const after = await table.reload();
    assert.deepEqual(await commitsSinceLastClustering(storage, after.timeline), { count: 0, lastClustering: scheduled.instantTime });
    assert.equal(await schedule(after, asyncOn({ 'hoodie.clustering.async.max.commits': '1' }), { lock }), undefined);
    // Forced, the (still small) clustered files are planned again.
    const forced = await schedule(after, asyncOn(), { lock, force: true });
    assert.ok(forced);
    assert.ok(forced.instantTime > scheduled.instantTime);
  });

  it('takes an instant time greater than every instant, whatever the clock says, and skips file groups of pending plans', async () => {
    const { lock, table } = await smallTable(4);
    const first = await schedule(table, config(), { lock, now: new Date(Date.UTC(2001, 0, 1)) });
    assert.ok(first);
    assert.ok(
      table.timeline.allTimes().every((time) => time < first.instantTime),
      `${first.instantTime} after every commit`,
    );
    // Every file group is in the pending plan now: nothing left to plan, even forced.
    assert.equal(await schedule(await table.reload(), config(), { lock, force: true }), undefined);
  });
});

describe('the requested file', () => {
  it('decodes with Hudi’s official schemas: operationType CLUSTER, the plan, version 1', async () => {
    const { made, storage, lock, table } = await smallTable(4);
    const scheduled = await schedule(table, config({ 'hoodie.clustering.plan.strategy.sort.columns': 'birthday,createTime' }), { lock });
    assert.ok(scheduled);
    const bytes = readFileSync(join(made.dir, '.hoodie', `${scheduled.instantTime}.replacecommit.requested`));
    const decoded = await decodeWithOfficialSchema(bytes);
    assert.equal(decoded.writerName, 'org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata');
    assert.equal(decoded.records.length, 1);
    const record = decoded.records[0] as {
      operationType: string;
      version: number;
      extraMetadata: Record<string, string>;
      clusteringPlan: {
        inputGroups: {
          slices: { dataFilePath: string; fileId: string; partitionPath: string }[];
          numOutputFileGroups: number;
          metrics: Record<string, number>;
        }[];
        strategy: { strategyClassName: string; strategyParams: Record<string, string> };
        preserveHoodieMetadata: boolean;
        version: number;
      };
    };
    assert.equal(record.operationType, 'CLUSTER');
    assert.equal(record.version, 1);
    assert.deepEqual(record.extraMetadata, {});
    const plan = record.clusteringPlan;
    assert.equal(plan.version, 1);
    assert.equal(plan.preserveHoodieMetadata, true);
    assert.equal(plan.strategy.strategyClassName, 'org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy');
    assert.deepEqual(plan.strategy.strategyParams, { 'hoodie.clustering.plan.strategy.sort.columns': 'birthday,createTime' });
    const slices = plan.inputGroups.flatMap((group) => group.slices);
    assert.deepEqual(slices.map((slice) => slice.dataFilePath).sort(), made.files.map((file) => storage.uriOf(file)).sort());
    assert.ok(slices.every((slice) => slice.dataFilePath.includes(`/${slice.partitionPath}/${slice.fileId}_`)));
    // And our reader sees the same plan.
    const ours = await readClusteringPlan(storage, scheduled.instantTime, TIMELINE_LAYOUT_1);
    assert.equal(ours?.inputGroups.length, plan.inputGroups.length);
  });
});

describe('refusing bad settings before writing anything', () => {
  it('refuses a sort column the table does not have', async () => {
    const { made, lock, table } = await smallTable(4);
    const before = metafolderListing(made.dir);
    await assert.rejects(
      schedule(table, config({ 'hoodie.clustering.plan.strategy.sort.columns': 'birthday,brithday' }), { lock, force: true }),
      (error: unknown) =>
        error instanceof HudiError &&
        /sort column "brithday" not in the table/.test(error.message) &&
        /use columns of the table: _hoodie_commit_time, .*birthday/.test(error.message),
    );
    assert.deepEqual(metafolderListing(made.dir), before);
    // The lock was never taken, so it is free.
    const lease = await lock.acquire({ waitMs: 100 });
    await lease.release();
  });

  it('refuses an invalid configuration value in a props file (cluster command) with the table untouched', async () => {
    const { made } = await smallTable(4);
    const before = metafolderListing(made.dir);
    const props = join(tempDir(), 'clustering.properties');
    writeFileSync(props, 'hoodie.clustering.plan.strategy.sort.columns=birthday,createTime\nhoodie.layout.optimize.strategy=spiral\n');
    await assert.rejects(
      clusterCommand.run([made.dir, '--mode', 'scheduleAndExecute', '--props', props, '--force']),
      (error: unknown) =>
        error instanceof HudiError &&
        /hoodie\.layout\.optimize\.strategy="spiral" is not an accepted value/.test(error.message) &&
        error.message.includes(props),
    );
    writeFileSync(props, 'hoodie.clustering.plan.strategy.max.num.groups=0\n');
    await assert.rejects(clusterCommand.run([made.dir, '--mode', 'schedule', '--props', props]), /max\.num\.groups="0" is below 1/);
    assert.deepEqual(metafolderListing(made.dir), before);
  });

  it('refuses a curve over a column of a type curves cannot take', async () => {
    const { made, lock, table } = await smallTable(4);
    const before = metafolderListing(made.dir);
    // Make the table schema record a nested column, as a later commit would.
    const text = readFileSync(join(made.dir, '.hoodie', `${made.instants.at(-1)}.commit`), 'utf8');
    const nested = JSON.parse(text) as { extraMetadata: { schema: string } };
    const schema = JSON.parse(nested.extraMetadata.schema) as { fields: unknown[] };
    schema.fields.push({ name: 'tags', type: ['null', { type: 'array', items: 'string' }], default: null });
    nested.extraMetadata.schema = JSON.stringify(schema);
    writeFileSync(join(made.dir, '.hoodie', `${made.instants.at(-1)}.commit`), JSON.stringify(nested));
    await assert.rejects(
      schedule(
        await table.reload(),
        config({ 'hoodie.clustering.plan.strategy.sort.columns': 'tags,birthday', 'hoodie.layout.optimize.strategy': 'z-order' }),
        { lock, force: true },
      ),
      /sort column "tags" has type .*array.*, which z-order ordering cannot take/,
    );
    assert.deepEqual(metafolderListing(made.dir), before);
  });
});
