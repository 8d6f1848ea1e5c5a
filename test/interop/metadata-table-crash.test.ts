/**
 * Crashes in the metadata-table path, read by real Hudi 0.15 (Spark 3.5.1): on a Spark-written table with every
 * metadata partition (record index as Spark's index), our upsert is killed after its N-th storage call from the
 * end of its data files on, for every N until it completes: the metadata table's compaction (due at every write
 * here), its deltacommit (requested, inflight, log files, completed), then T.commit. Each crashed table is copied
 * aside; then Spark reads every copy with the metadata table on and off (the same rows), and our reader too: each
 * sees the rows from before the write or from after it. The next run (rollback of the dead write, the write again)
 * completes, and Hudi's validator passes on the healed table.
 *
 * test/metadata/writer.test.ts crashes the same path (and the clean's) with our reader only, on every call.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { rollbackInstant } from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { type HudiHarness, hudiToolchain, startHudi } from '../helpers/hudi.js';
import { metadataTableChecks } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, f DOUBLE, dt STRING';
const NAME = 'mdt_crash';
const rows = (ids: readonly number[], version: number) =>
  ids.map((id) => ({ id, name: `v${version}-${id}`, ts: version, f: id + version / 10, dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01' }));

const sparkOptions: Record<string, string> = {
  'hoodie.table.name': NAME,
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
const ourProps = new Map([
  ['hoodie.table.name', NAME],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.index.bloom.num_entries', '1000'],
  // Every write of ours compacts the metadata table first: its calls are part of the crashed path.
  ['hoodie.metadata.compact.max.delta.commits', '1'],
]);

/** `id:name` of our reader's rows, sorted. */
async function ourRows(table: string): Promise<string[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(table)))).rows.map((row) => `${Number(row['id'])}:${String(row['name'])}`).sort();
}

describe('crashes in the metadata-table path, read by Hudi', { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    // As in metadata-table-rollback.test.ts: Hudi's record-index lookups on a table with a completed rollback need
    // the bundle on the driver's class path.
    hudi = await startHudi({ conf: { 'spark.driver.extraClassPath': hudiToolchain().jars['hudi-spark-bundle']! } });
  });
  after(async () => {
    await hudi?.close();
  });
  const { validate, readBoth } = metadataTableChecks(() => hudi);

  it('our upsert killed after every storage call of its metadata compaction, deltacommit and commit: Spark and our reader see before or after; the next run completes', async (t) => {
    const template = join(tempDir('mdt-crash-template-'), NAME);
    await hudi.write(template, { schema: SCHEMA, rows: rows([1, 2, 3, 4, 5, 6], 1), options: sparkOptions });
    await hudi.write(template, { schema: SCHEMA, rows: rows([1, 2, 7, 8], 2), options: sparkOptions });
    const beforeRows = await ourRows(template);
    const batch = rows([3, 4, 20, 21], 3);
    const afterRows = [
      ...new Map([...beforeRows.map((r) => [r.split(':')[0]!, r] as const), ...batch.map((r) => [String(r.id), `${r.id}:${r.name}`] as const)]).values(),
    ].sort();
    const input = join(tempDir(), 'batch.jsonl');
    await writeJsonLines(input, batch);

    const crashed: { crashAt: number; path: string; call: string; state: 'before' | 'after' }[] = [];
    let completedAt: number | undefined;
    for (let crashAt = 1; completedAt === undefined; crashAt++) {
      assert.ok(crashAt < 200, 'the write completes within 200 storage calls');
      const table = join(tempDir('mdt-crash-'), NAME);
      cpSync(template, table, { recursive: true });
      const storage = openStorage(table);
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const crashing = new CrashingStorage(storage, crashAt, { armed: false });
      try {
        await writeBatch(crashing, {
          input: { file: input, format: 'jsonl' },
          operation: 'upsert',
          properties: ourProps,
          lock,
          afterDataFiles: async () => crashing.arm(),
        });
        completedAt = crashAt;
      } catch (error) {
        assert.ok(error instanceof SimulatedCrash, String(error));
      }
      const seen = await ourRows(table);
      const state = JSON.stringify(seen) === JSON.stringify(afterRows) ? 'after' : 'before';
      assert.deepEqual(
        seen,
        state === 'after' ? afterRows : beforeRows,
        `killed at call ${crashAt} (${crashing.log[crashAt - 1]}): our reader sees before or after`,
      );
      if (completedAt !== undefined) break;
      const copy = join(tempDir('mdt-crashed-'), NAME);
      cpSync(table, copy, { recursive: true });
      crashed.push({ crashAt, path: copy, call: crashing.log[crashAt - 1] ?? '', state });

      // The next run: the dead write rolled back, the write again.
      const failed = (await loadTimeline(storage, TIMELINE_LAYOUT_1))
        .pending()
        .filter((i) => i.action === 'commit')
        .map((i) => i.time);
      for (const time of failed) await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), time, { lock, ignoreHeartbeat: true });
      await writeBatch(storage, { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties: ourProps, lock });
      assert.deepEqual(await ourRows(table), afterRows, `killed at call ${crashAt}: the next run completes`);
      // Hudi validates a few healed tables (one Spark job each): the first, and the last crash point.
      if (crashAt === 1) await validate(t, table, `healed after a crash at call ${crashAt}`);
    }
    t.diagnostic(
      `${crashed.length} crash points before the write completed at call ${completedAt}: ${crashed.map((c) => `${c.crashAt} ${c.call} → ${c.state}`).join('; ')}`,
    );
    assert.ok(crashed.length >= 10, `${crashed.length} crash points`);
    assert.ok(
      crashed.some((c) => /metadata\/\.hoodie\/\d+001\.commit/.test(c.call)),
      'the metadata compaction is among the crashed calls',
    );

    // Spark reads every crashed table with the metadata table on and off: before or after, never in between.
    for (const { crashAt, path, call, state } of crashed) {
      const spark = (await readBoth(path, `crash at call ${crashAt} (${call})`)).map((row) => `${Number(row['id'])}:${String(row['name'])}`).sort();
      assert.deepEqual(spark, state === 'after' ? afterRows : beforeRows, `crash at call ${crashAt} (${call}): Spark reads what our reader reads`);
    }
    const last = crashed.at(-1)!;
    const healed = join(tempDir('mdt-crash-healed-'), NAME);
    cpSync(last.path, healed, { recursive: true });
    const storage = openStorage(healed);
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    for (const time of (await loadTimeline(storage, TIMELINE_LAYOUT_1))
      .pending()
      .filter((i) => i.action === 'commit')
      .map((i) => i.time))
      await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), time, { lock, ignoreHeartbeat: true });
    await writeBatch(storage, { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties: ourProps, lock });
    await validate(t, healed, `healed after a crash at call ${last.crashAt}`);
    // Spark writes on through the record index.
    await hudi.write(healed, { schema: SCHEMA, rows: rows([1, 21, 30], 4), options: sparkOptions });
    const ids = (await readBoth(healed, "after Spark's upsert")).map((row) => Number(row['id'])).sort((a, b) => a - b);
    assert.deepEqual(ids, [1, 2, 3, 4, 5, 6, 7, 8, 20, 21, 30]);
  });
});
