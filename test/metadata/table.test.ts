/**
 * Tables with Hudi's metadata table (hoodie.table.metadata.partitions, or .partitions.inflight while one is being
 * built): the writer and clustering keep the metadata table, and refuse one they cannot keep (declared but absent; a
 * partition being built) with one error naming the partitions and the problem, before writing anything. The checks
 * are made again under the lock, so a partition being built since the table was opened is caught too.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { commit } from '../../lib/clustering/commit.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { executeGroup } from '../../lib/clustering/execute.js';
import { schedule } from '../../lib/clustering/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { MetadataTableError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { rollbackInstant } from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { createSmallFilesTable } from '../helpers/small-files-table.js';

const WRITE_PROPS = new Map([
  ['hoodie.table.name', 'users'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  ['hoodie.index.bloom.num_entries', '1000'],
]);

/** Add metadata-table keys to a local table's hoodie.properties, as a Spark writer with the MDT on leaves them. */
function enableMetadataTable(table: string, keys: Record<string, string>): void {
  const file = join(table, '.hoodie/hoodie.properties');
  const lines = Object.entries(keys)
    .map(([key, value]) => `${key}=${value}\n`)
    .join('');
  writeFileSync(file, `${readFileSync(file, 'utf8')}${lines}`);
}

function timelineFiles(table: string): string[] {
  return readdirSync(join(table, '.hoodie'))
    .filter((name) => /^\d{17}\./.test(name))
    .sort();
}

/** The error clustering gives for a metadata table it cannot keep: the operation, the partitions, the problem. */
function refused(what: string, partitions: string[], inflight: string[]) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof MetadataTableError, String(error));
    assert.deepEqual(error.partitions, partitions);
    assert.deepEqual(error.inflightPartitions, inflight);
    assert.match(error.message, new RegExp(`${what} cannot keep Hudi's metadata table correct`));
    for (const name of inflight) assert.match(error.message, new RegExp(`partition ${name} is being built`));
    return true;
  };
}

describe("tables with Hudi's metadata table", () => {
  it('the writer refuses a metadata table it cannot keep: declared without a metadata table, or a partition being built', async () => {
    for (const [keys, partitions, inflight, problem] of [
      [
        { 'hoodie.table.metadata.partitions': 'files,column_stats' },
        ['files', 'column_stats'],
        [],
        /hoodie\.properties declares metadata-table partitions but .*\.hoodie\/metadata\/\.hoodie\/hoodie\.properties is missing/,
      ],
      [{ 'hoodie.table.metadata.partitions.inflight': 'record_index' }, [], ['record_index'], /partition record_index is being built/],
    ] as const) {
      const table = join(tempDir('mdt-write-'), 'users');
      const input = join(tempDir(), 'batch.jsonl');
      await writeJsonLines(input, generateUsers({ count: 20, seed: 3 }));
      await writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation: 'insert', properties: WRITE_PROPS });
      enableMetadataTable(table, keys);
      const before = timelineFiles(table);
      await assert.rejects(
        writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties: WRITE_PROPS }),
        (error: unknown) => {
          assert.ok(error instanceof MetadataTableError, String(error));
          assert.deepEqual(error.partitions, partitions);
          assert.deepEqual(error.inflightPartitions, inflight);
          assert.match(error.message, /a write cannot keep Hudi's metadata table correct/);
          assert.match(error.message, problem);
          return true;
        },
      );
      assert.deepEqual(timelineFiles(table), before, 'nothing was written');
    }
  });

  it('the writer checks again under the lock: a partition being built since it started stops its commit', async () => {
    const table = join(tempDir('mdt-write-late-'), 'users');
    const input = join(tempDir(), 'batch.jsonl');
    await writeJsonLines(input, generateUsers({ count: 20, seed: 4 }));
    await writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation: 'insert', properties: WRITE_PROPS });
    const commits = timelineFiles(table).filter((name) => name.endsWith('.commit'));
    await assert.rejects(
      writeBatch(openStorage(table), {
        input: { file: input, format: 'jsonl' },
        operation: 'upsert',
        properties: WRITE_PROPS,
        afterDataFiles: async () => enableMetadataTable(table, { 'hoodie.table.metadata.partitions.inflight': 'files' }),
      }),
      (error: unknown) => error instanceof MetadataTableError && /partition files is being built/.test(error.message),
    );
    assert.deepEqual(
      timelineFiles(table).filter((name) => name.endsWith('.commit')),
      commits,
      'no new commit',
    );
  });

  it('clustering refuses a metadata table it cannot keep at schedule, execute and commit (the last under the lock), and the CLI says so on one line; its rollback works', async () => {
    const dir = tempDir('mdt-cluster-');
    const made = await createSmallFilesTable({ dir, partitions: 2, commits: 4, rowsPerFile: 20 });
    const storage = openStorage(dir);
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': 'id' } }).config;
    const engine = await openParquetEngine();
    try {
      // A plan scheduled and run before a metadata-table partition started being built…
      const table = await HudiTable.open(storage, { mode: 'write' });
      const scheduled = await schedule(table, config, { lock, force: true });
      assert.ok(scheduled);
      const opened = await table.reload();
      for (const group of scheduled.groups) await executeGroup(opened, scheduled.instantTime, group.index, { engine, tempDir: tempDir(), config });
      const executed = await opened.reload();
      enableMetadataTable(dir, { 'hoodie.table.metadata.partitions.inflight': 'files' });
      // …cannot commit, even through a table object opened before: the check re-reads hoodie.properties under the lock.
      await assert.rejects(commit(executed, scheduled.instantTime, { lock }), refused('a clustering', [], ['files']));
      assert.equal((await opened.reload()).timeline.find(scheduled.instantTime)?.state, 'INFLIGHT', 'the plan stays pending');

      const reopened = await HudiTable.open(storage, { mode: 'write' });
      await assert.rejects(schedule(reopened, config, { lock, force: true }), refused('a clustering', [], ['files']));
      await assert.rejects(executeGroup(reopened, scheduled.instantTime, 0, { engine, tempDir: tempDir(), config }), refused('a clustering', [], ['files']));
      // Rollbacks remove the rolled-back instant's metadata-table deltacommit (this one never had one): they work.
      const rolledBack = await rollbackInstant(reopened, scheduled.instantTime, { lock, ignoreHeartbeat: true });
      assert.equal(rolledBack.outcome, 'rolled-back');
      assert.equal((await reopened.reload()).timeline.find(scheduled.instantTime), undefined, 'the clustering is gone');

      const cli = runCli(['cluster', dir, '--mode', 'scheduleAndExecute', '--force']);
      assert.equal(cli.code, 1);
      assert.equal(cli.stderr.trim().split('\n').length, 1, cli.stderr);
      assert.match(cli.stderr, /hudi-serverless cluster: .*: a clustering cannot keep Hudi's metadata table correct: partition files is being built/);
      assert.equal(made.files.length, 8);
    } finally {
      await engine.close();
    }
  });
});
