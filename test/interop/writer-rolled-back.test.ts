/**
 * Our in-flight write rolled back by a Spark writer before we commit: we must fail and publish nothing, and readers
 * (Spark, ours) see only Spark's write.
 *
 * Hudi 0.15's default hoodie.cleaner.policy.failed.writes=EAGER makes every Spark write start by rolling back every
 * pending commit of others (BaseHoodieWriteClient.startCommitWithTime → rollbackFailedWrites →
 * getInstantsToRollback, which for EAGER takes all pending instants and never looks at heartbeats): our live
 * heartbeat does not protect us. `CALL rollback_to_instant` rolls back any instant on the active timeline, pending
 * ones included (listing-based). Either way our files and our requested/inflight files are deleted while we pause
 * after our data files (the writer's `afterDataFiles` hook); our commit then has to notice (audit F3). A writer with
 * hoodie.cleaner.policy.failed.writes=LAZY (what multi-writer setups use) rolls back only instants whose heartbeat
 * expired, and reads ours as alive.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { InstantRolledBackError } from '../../lib/errors.js';
import { TIMELINE_TIMEZONE_KEY } from '../../lib/table/config.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { byKey, filesUnder, ourRows, ourWrite, parquetFromRows, tableProperties, timelineFiles } from '../helpers/interop-writer.js';
import { tempDir } from '../helpers/paths.js';

const COLUMNS = { id: 'BIGINT', name: 'VARCHAR', seq: 'BIGINT', dt: 'VARCHAR' } as const;
const SPARK_SCHEMA = 'id BIGINT, name STRING, seq BIGINT, dt STRING';
const row = (id: number, name: string, seq: number, dt = id % 2 === 0 ? '2024-01-02' : '2024-01-01'): Row => ({ id, name, seq, dt });

const props = (name: string) =>
  new Map([
    ['hoodie.table.name', name],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.datasource.write.precombine.field', 'seq'],
    ['hoodie.index.bloom.num_entries', '1000'],
  ]);

/** The one pending commit on the timeline: ours, paused after its data files. */
function pendingInstant(table: string): string {
  const files = timelineFiles(table);
  const pending = files
    .filter((name) => name.endsWith('.inflight'))
    .map((name) => name.slice(0, 17))
    .filter((time) => !files.includes(`${time}.commit`));
  assert.equal(pending.length, 1, `one pending instant: ${pending.join(', ')}`);
  return pending[0]!;
}

/** No trace of `instant` on storage: no timeline file, data file, marker or heartbeat names it. */
function assertNoTrace(table: string, instant: string): void {
  const traces = filesUnder(table).filter((path) => path.includes(instant));
  assert.deepEqual(traces, [], `files naming ${instant}`);
}

describe('interop: our in-flight write rolled back by a Spark writer before we commit', () => {
  let hudi: HudiHarness;
  const dir = tempDir('interop-writer-rollback-');
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  /** A table of ours with ids 1–4; our paused upsert; what ran in the pause; the error our commit threw. */
  async function rolledBackWrite(
    name: string,
    inThePause: (table: string, ours: string) => Promise<void>,
  ): Promise<{ table: string; ours: string; base: Row[] }> {
    const table = join(dir, name);
    await ourWrite(
      table,
      'bulk_insert',
      await parquetFromRows(
        dir,
        [1, 2, 3, 4].map((id) => row(id, `ours-${id}`, 1)),
        COLUMNS,
      ),
      props(name),
    );
    const base = await ourRows(table);
    let ours: string | undefined;
    const update = [row(1, 'ours-1-v2', 2), row(3, 'ours-3-v2', 2), row(9, 'ours-9', 1, '2024-01-09')];
    const attempt = ourWrite(table, 'upsert', await parquetFromRows(dir, update, COLUMNS), props(name), {
      afterDataFiles: async () => {
        ours = pendingInstant(table);
        await inThePause(table, ours);
      },
    });
    await assert.rejects(attempt, (error: unknown) => {
      assert.ok(error instanceof InstantRolledBackError, `InstantRolledBackError, got ${String(error)}`);
      assert.equal(error.instantTime, ours);
      return true;
    });
    return { table, ours: ours!, base };
  }

  it('a Spark write with its EAGER failed-writes cleaning (our heartbeat alive): our commit fails, nothing of ours is visible', async () => {
    const { table, ours, base } = await rolledBackWrite('eager', async (table) => {
      await hudi.write(table, {
        schema: SPARK_SCHEMA,
        rows: [row(2, 'spark-2', 5), row(10, 'spark-10', 1)],
        options: {
          'hoodie.table.name': 'eager',
          'hoodie.datasource.write.recordkey.field': 'id',
          'hoodie.datasource.write.partitionpath.field': 'dt',
          'hoodie.datasource.write.precombine.field': 'seq',
          'hoodie.datasource.write.operation': 'upsert',
        },
      });
    });
    // Spark's rollback instant names ours.
    const rollbacks = timelineFiles(table).filter((name) => /^\d{17}\.rollback$/.test(name));
    assert.equal(rollbacks.length, 1, `one rollback: ${timelineFiles(table).join(', ')}`);
    assertNoTrace(table, ours);

    const spark = await hudi.read(table);
    const expected = byKey(base, 'id');
    const sparkRows = byKey(spark.rows, 'id');
    assert.deepEqual([...sparkRows.keys()].sort(), ['1', '10', '2', '3', '4']);
    assert.equal(sparkRows.get('2')!['name'], 'spark-2');
    for (const id of ['1', '3', '4']) assert.deepEqual(sparkRows.get(id)!['name'], expected.get(id)!['name'], `record ${id} as before our write`);
    assert.ok(spark.rows.every((r) => r['_hoodie_commit_time'] !== ours && !String(r['_hoodie_file_name']).includes(ours)));
    assert.deepEqual(canonicalRows(await ourRows(table)), canonicalRows(spark.rows), 'our reader agrees');
    // Spark also bootstrapped the metadata table once ours was gone: it lists only Spark's files, by Hudi's validator.
    assert.ok(existsSync(join(table, '.hoodie/metadata/.hoodie/hoodie.properties')));
    const report = await hudi.validateMetadataTable(table);
    assert.equal(report.ok, true, JSON.stringify(report.errors));
    assert.deepEqual(
      canonicalRows((await hudi.read(table, { options: { 'hoodie.metadata.enable': 'true' } })).rows),
      canonicalRows(spark.rows),
      'a read through the metadata table',
    );
  });

  it('CALL rollback_to_instant on our pending instant: our commit fails, nothing of ours is visible', async () => {
    const { table, ours, base } = await rolledBackWrite('by_call', async (table, instant) => {
      const before = tableProperties(table);
      // The procedure takes a catalog table: register ours. Hudi behaviour, not ours to fix: Spark SQL rewrites
      // hoodie.properties of an existing table from what its catalog knows, adding the database name (and a new
      // checksum), restating the create schema in Spark's form, and dropping hoodie.table.timeline.timezone (the table
      // is LOCAL again, see writer-timezone.test.ts and the README).
      await hudi.sql(`CREATE TABLE by_call USING hudi LOCATION '${table}'`);
      const registered = tableProperties(table);
      assert.equal(registered.get('hoodie.database.name'), 'default');
      assert.equal(registered.has(TIMELINE_TIMEZONE_KEY), false);
      const rewritten = new Set(['hoodie.table.checksum', 'hoodie.table.create.schema', TIMELINE_TIMEZONE_KEY]);
      for (const [key, value] of before) if (!rewritten.has(key)) assert.equal(registered.get(key), value, `Spark SQL kept ${key}`);
      const result = await hudi.sql(`CALL rollback_to_instant(table => 'by_call', instant_time => '${instant}')`);
      assert.deepEqual(result.rows, [{ rollback_result: true }]);
    });
    assertNoTrace(table, ours);
    assert.equal(existsSync(join(table, '.hoodie/metadata')), false);
    const spark = await hudi.read(table);
    assert.deepEqual(canonicalRows(spark.rows), canonicalRows(base), 'the table as before our write');
    assert.deepEqual(canonicalRows(await ourRows(table)), canonicalRows(base));
    // The rewritten hoodie.properties (database name, checksum, schema) still opens for our writer.
    const retry = await ourWrite(table, 'upsert', await parquetFromRows(dir, [row(1, 'ours-1-v3', 3)], COLUMNS), props('by_call'));
    assert.equal(byKey(await ourRows(table), 'id').get('1')!['_hoodie_commit_time'], retry.instantTime);
  });

  it('a Spark write with LAZY failed-writes cleaning reads our heartbeat as alive and leaves our write alone: both commit', async () => {
    const name = 'lazy';
    const table = join(dir, name);
    await ourWrite(
      table,
      'bulk_insert',
      await parquetFromRows(
        dir,
        [1, 2, 3, 4].map((id) => row(id, `ours-${id}`, 1)),
        COLUMNS,
      ),
      props(name),
    );
    let ours: string | undefined;
    const result = await ourWrite(table, 'upsert', await parquetFromRows(dir, [row(1, 'ours-1-v2', 2)], COLUMNS), props(name), {
      afterDataFiles: async () => {
        ours = pendingInstant(table);
        await hudi.write(table, {
          schema: SPARK_SCHEMA,
          rows: [row(10, 'spark-10', 1, '2024-01-10')],
          options: {
            'hoodie.table.name': name,
            'hoodie.datasource.write.recordkey.field': 'id',
            'hoodie.datasource.write.partitionpath.field': 'dt',
            'hoodie.datasource.write.precombine.field': 'seq',
            'hoodie.datasource.write.operation': 'upsert',
            'hoodie.cleaner.policy.failed.writes': 'LAZY',
          },
        });
      },
    });
    assert.equal(result.instantTime, ours);
    assert.equal(
      timelineFiles(table).some((file) => file.endsWith('.rollback')),
      false,
      'nothing was rolled back',
    );
    const rows = byKey((await hudi.read(table)).rows, 'id');
    assert.equal(rows.get('1')!['name'], 'ours-1-v2');
    assert.equal(rows.get('1')!['_hoodie_commit_time'], ours);
    assert.equal(rows.get('10')!['name'], 'spark-10');
  });
});
