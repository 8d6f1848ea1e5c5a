/**
 * Rollbacks on both sides of the metadata table, with real Hudi 0.15 (Spark 3.5.1), on a table with every metadata
 * partition (files, column_stats, bloom_filters, record_index as Spark's index):
 * - our write killed after its metadata-table deltacommit completed (its data commit never came), and one killed
 *   after the deltacommit's first log file: Spark reads the previous rows (with and without the metadata table);
 *   Spark's next write rolls our instant back (its eager failed-writes cleaning, on the data and metadata tables)
 *   and Hudi's validator passes, without duplicates;
 * - Spark's write dying between its metadata-table deltacommit and its data commit: our rollback removes that
 *   deltacommit, Hudi's validator passes, and both sides write on;
 * - on each metadata configuration (files; files + column_stats + bloom_filters; with record_index): our rollback of
 *   our own killed write and of our own clustering failed after its deltacommit, the clustering's plan then run to
 *   the end (linear), and a z-order clustering: after each, Hudi's validator passes and Spark reads agree; then
 *   Spark upserts and deletes.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { rollbackInflightClustering, rollbackInstant } from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, hudiToolchain, startHudi } from '../helpers/hudi.js';
import { runKilledWrite } from '../helpers/killed-write.js';
import { ALL_CHECKS, FILES_CHECKS, metadataTableChecks, WITHOUT_RECORD_INDEX } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, f DOUBLE, dt STRING';

const rows = (ids: readonly number[], version: number) =>
  ids.map((id) => ({ id, name: `v${version}-${id}`, ts: version, f: id + version / 10, dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01' }));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function sparkOptions(name: string): Record<string, string> {
  return {
    'hoodie.table.name': name,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
    'hoodie.index.bloom.num_entries': '1000',
    'hoodie.metadata.enable': 'true',
    'hoodie.metadata.index.column.stats.enable': 'true',
    'hoodie.metadata.index.bloom.filter.enable': 'true',
    'hoodie.metadata.record.index.enable': 'true',
    'hoodie.index.type': 'RECORD_INDEX',
  };
}

const ourProps = (name: string) =>
  new Map([
    ['hoodie.table.name', name],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.precombine.field', 'ts'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.index.bloom.num_entries', '1000'],
  ]);

const mdtInstants = (table: string) => readdirSync(join(table, '.hoodie/metadata/.hoodie')).filter((name) => /^\d+\./.test(name));
/** Commits with an inflight file and no completed one. */
function pendingDataInstants(table: string): string[] {
  const names = readdirSync(join(table, '.hoodie'));
  return names
    .filter((name) => /^\d{17}\.inflight$/.test(name))
    .map((name) => name.slice(0, 17))
    .filter((time) => !names.includes(`${time}.commit`))
    .sort();
}

describe('rollbacks and the metadata table, with Hudi', { timeout: 1_800_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    // Hudi 0.15's metadata reader resolves the Avro classes of a data-table rollback on ForkJoinPool threads, whose
    // class loader is the JVM's: with the bundle only in spark.jars, every record-index lookup of a table with a
    // completed rollback fails there (GenericData$Record cannot be cast to SpecificRecordBase), whoever wrote the
    // table. Deployments put the bundle on the driver's class path; so does this harness.
    hudi = await startHudi({ conf: { 'spark.driver.extraClassPath': hudiToolchain().jars['hudi-spark-bundle']! } });
  });
  after(async () => {
    await hudi?.close();
  });

  const { validate, readIds } = metadataTableChecks(() => hudi);

  for (const killAfter of ['completed', '3'] as const) {
    it(`our write killed after its metadata-table ${killAfter === 'completed' ? 'deltacommit completed' : 'first log file'}: Spark reads the previous rows, and rolls it back on its next write`, async (t) => {
      const name = `mdt_killed_${killAfter === 'completed' ? 'after' : 'during'}`;
      const table = join(tempDir('mdt-rollback-'), name);
      await hudi.write(table, { schema: SCHEMA, rows: rows(range(1, 10), 1), options: sparkOptions(name) });
      const propsFile = join(tempDir(), 'props');
      writeFileSync(propsFile, [...ourProps(name)].map(([k, v]) => `${k}=${v}`).join('\n'));
      const input = join(tempDir(), 'batch.jsonl');
      await writeJsonLines(input, rows([...range(5, 8), ...range(20, 23)], 2));
      const killed = runKilledWrite(table, input, propsFile, 'upsert', `metadata:${killAfter}`);
      assert.notEqual(killed.code, 0);
      const [failed] = pendingDataInstants(table);
      assert.ok(failed, 'the killed write is pending');
      assert.equal(existsSync(join(table, `.hoodie/metadata/.hoodie/${failed}.deltacommit`)), killAfter === 'completed');
      assert.ok(
        mdtInstants(table).some((file) => file.startsWith(failed)),
        'its metadata-table deltacommit is there',
      );
      assert.deepEqual(await readIds(table, 'after the kill'), range(1, 10), 'Spark reads the rows before the killed write');
      await validate(t, table, `killed after ${killAfter}, before any rollback`);

      // Spark's next write (eager failed-writes cleaning) rolls our instant back, on the metadata table too.
      await hudi.write(table, { schema: SCHEMA, rows: rows([1, 2, 30], 3), options: sparkOptions(name) });
      assert.deepEqual(pendingDataInstants(table), [], 'Spark rolled the killed write back');
      await validate(t, table, `killed after ${killAfter}, after Spark's write`);
      assert.deepEqual(await readIds(table, 'after Spark'), [...range(1, 10), 30]);
      // And we write on.
      const ours = await writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties: ourProps(name) });
      assert.ok(ours.metadataTable.deltaCommit);
      await validate(t, table, `killed after ${killAfter}, after our next write`);
      assert.deepEqual(await readIds(table, 'after ours'), [...range(1, 10), ...range(20, 23), 30]);
    });
  }

  it("Spark's write dying between its metadata-table deltacommit and its commit: our rollback removes that deltacommit; both sides write on", async (t) => {
    const name = 'mdt_spark_failed';
    const table = join(tempDir('mdt-rollback-'), name);
    await hudi.write(table, { schema: SCHEMA, rows: rows(range(1, 10), 1), options: sparkOptions(name) });
    await hudi.write(table, { schema: SCHEMA, rows: rows([2, 4, 40], 2), options: sparkOptions(name) });
    // What a Spark writer killed right after its metadata-table deltacommit leaves: the data commit's completed
    // file never written (its requested and inflight files, data files and deltacommit are there).
    const failed = readdirSync(join(table, '.hoodie'))
      .filter((n) => /^\d{17}\.commit$/.test(n))
      .map((n) => n.slice(0, 17))
      .sort()
      .at(-1)!;
    rmSync(join(table, `.hoodie/${failed}.commit`));
    assert.deepEqual(pendingDataInstants(table), [failed]);
    assert.ok(existsSync(join(table, `.hoodie/metadata/.hoodie/${failed}.deltacommit`)), "Spark's deltacommit completed");
    assert.deepEqual(await readIds(table, 'after Spark died'), range(1, 10));
    const storage = openStorage(table);
    const result = await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), failed, {
      lock: new StorageLockProvider(storage, { waitMs: 10_000 }),
      ignoreHeartbeat: true,
    });
    assert.equal(result.outcome, 'rolled-back');
    assert.ok(result.deletedFiles.length > 0, 'its data files are deleted');
    assert.ok(!mdtInstants(table).some((file) => file.startsWith(failed)), 'no metadata-table instant of the rolled-back write is left');
    await validate(t, table, "after our rollback of Spark's dead write");
    assert.deepEqual(await readIds(table, 'after our rollback'), range(1, 10));

    const input = join(tempDir(), 'batch.jsonl');
    await writeJsonLines(input, rows([3, 4, 50], 4));
    await writeBatch(storage, { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties: ourProps(name) });
    await hudi.write(table, { schema: SCHEMA, rows: rows([5, 60], 5), options: sparkOptions(name) });
    await validate(t, table, "after our write and Spark's");
    assert.deepEqual(await readIds(table, 'at the end'), [...range(1, 10), 50, 60]);
  });

  const CONFIGS = [
    {
      name: 'files',
      spark: {
        'hoodie.metadata.index.column.stats.enable': 'false',
        'hoodie.metadata.index.bloom.filter.enable': 'false',
        'hoodie.metadata.record.index.enable': 'false',
        'hoodie.index.type': 'BLOOM',
      },
      checks: FILES_CHECKS,
    },
    { name: 'stats', spark: { 'hoodie.metadata.record.index.enable': 'false', 'hoodie.index.type': 'BLOOM' }, checks: WITHOUT_RECORD_INDEX },
    { name: 'record_index', spark: {}, checks: ALL_CHECKS },
  ] as const;
  const clustering = (layout: 'linear' | 'z-order') =>
    resolveClusteringConfig({
      event: { 'hoodie.clustering.plan.strategy.sort.columns': layout === 'linear' ? 'id' : 'id,f', 'hoodie.layout.optimize.strategy': layout },
    }).config;

  for (const config of CONFIGS) {
    it(`${config.name}: our rollback of our killed write and of our failed clustering; the plan rerun, a z-order clustering; Spark writes on`, async (t) => {
      const name = `mdt_ours_rolled_back_${config.name}`;
      const table = join(tempDir('mdt-rollback-'), name);
      // Small files: every Spark batch its own base files, so the clusterings have groups to rewrite.
      const options = { ...sparkOptions(name), ...config.spark, 'hoodie.parquet.small.file.limit': '0' };
      await hudi.write(table, { schema: SCHEMA, rows: rows(range(1, 10), 1), options });
      await hudi.write(table, { schema: SCHEMA, rows: rows(range(11, 16), 1), options: { ...options, 'hoodie.datasource.write.operation': 'insert' } });
      const storage = openStorage(table);
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const open = () => HudiTable.open(storage, { mode: 'write' });
      const step = async (what: string, ids: number[]) => {
        await validate(t, table, `${config.name}: ${what}`, config.checks);
        assert.deepEqual(await readIds(table, `${config.name}: ${what}`), ids);
      };

      // Our write killed after its deltacommit completed; our rollback.
      const propsFile = join(tempDir(), 'props');
      writeFileSync(propsFile, [...ourProps(name)].map(([k, v]) => `${k}=${v}`).join('\n'));
      const input = join(tempDir(), 'batch.jsonl');
      await writeJsonLines(input, rows([...range(3, 6), 20, 21], 2));
      assert.notEqual(runKilledWrite(table, input, propsFile, 'upsert', 'metadata:completed').code, 0);
      const [failed] = pendingDataInstants(table);
      assert.ok(failed, 'the killed write is pending');
      const rolledBack = await rollbackInstant(await open(), failed, { lock, ignoreHeartbeat: true });
      assert.equal(rolledBack.outcome, 'rolled-back');
      assert.ok(!mdtInstants(table).some((file) => file.startsWith(`${failed}.`)), 'its deltacommit is gone');
      await step('after our rollback of our killed write', range(1, 16));

      // Our clustering failing after its deltacommit completed (the replacecommit never came); our rollback keeps
      // the plan, which then runs to the end.
      const engine = await openParquetEngine();
      try {
        const scheduled = await runClusteringJob(await open(), {
          mode: 'schedule',
          config: clustering('linear'),
          force: true,
          lock,
          engine,
          properties: ourProps(name),
        });
        const instant = scheduled.scheduled!.instantTime;
        await assert.rejects(
          runClusteringJob(await open(), {
            mode: 'execute',
            instant,
            config: clustering('linear'),
            lock,
            engine,
            tempDir: tempDir(),
            properties: ourProps(name),
            afterMetadataTableWrite: async (what) => {
              if (what === 'completed') throw new Error('killed after the deltacommit');
            },
          }),
          /killed after the deltacommit/,
        );
        assert.ok(existsSync(join(table, `.hoodie/metadata/.hoodie/${instant}.deltacommit`)), "the clustering's deltacommit completed");
        await step('after our clustering failed', range(1, 16));
        const undone = await rollbackInflightClustering(await open(), instant, { lock });
        assert.equal(undone?.outcome, 'rolled-back');
        assert.ok(!mdtInstants(table).some((file) => file.startsWith(`${instant}.`)), "the clustering's deltacommit is gone");
        await step('after our rollback of our failed clustering', range(1, 16));
        const rerun = await runClusteringJob(await open(), {
          mode: 'execute',
          instant,
          config: clustering('linear'),
          lock,
          engine,
          tempDir: tempDir(),
          properties: ourProps(name),
        });
        assert.equal(rerun.commit?.outcome, 'committed');
        await step('after the linear plan ran to the end', range(1, 16));
        const zorder = await runClusteringJob(await open(), {
          mode: 'scheduleAndExecute',
          config: clustering('z-order'),
          force: true,
          lock,
          engine,
          tempDir: tempDir(),
          properties: ourProps(name),
        });
        assert.equal(zorder.commit?.outcome, 'committed');
        await step('after our z-order clustering', range(1, 16));
      } finally {
        await engine.close();
      }

      // Spark writes on with the table's index.
      await hudi.write(table, { schema: SCHEMA, rows: rows([1, 12, 30], 3), options });
      await hudi.write(table, { schema: SCHEMA, rows: rows([2, 13], 4), options: { ...options, 'hoodie.datasource.write.operation': 'delete' } });
      await step("after Spark's upsert and delete", [1, ...range(3, 12), ...range(14, 16), 30]);
    });
  }
});
