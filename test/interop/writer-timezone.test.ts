/**
 * A Spark writer in a JVM west of UTC (America/Los_Angeles) writing after our commits.
 *
 * Hudi 0.15's datasource writer fills every writer option it was not given from hoodie.properties
 * (HoodieSparkSqlWriterInternal.mergeParamsAndGetHoodieConfig adds the table config's keys), then sets the instant
 * clock from the result (HoodieInstantTimeGenerator.setCommitTimeZone). So on a table that records
 * hoodie.table.timeline.timezone=UTC, as ours do, a Los Angeles writer mints UTC instants: they follow ours and its
 * updates win, as between two Hudi writers. On a table without the key (Hudi's default LOCAL: tables created before
 * we recorded it) the writer's clock is its JVM's: its instants are hours older than ours, its file slices sort
 * before ours and its updates vanish for every reader, unless the writer is given hoodie.table.timeline.timezone=UTC.
 *
 * The generator is also monotonic per JVM: it loops until a new time exceeds the last one it minted. Once a JVM west
 * of UTC minted a UTC instant, a LOCAL one (another table without the key, or a new table) spins until its wall clock
 * catches up — hours. So the Los Angeles-clock write runs first here; users avoid it by running Spark with
 * -Duser.timezone=UTC or giving every writer hoodie.table.timeline.timezone=UTC (README).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { TIMELINE_TIMEZONE_KEY } from '../../lib/table/config.js';
import { formatJavaProperties } from '../../lib/table/properties.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { byKey, ourRows, ourWrite, parquetFromRows, tableProperties, timelineFiles } from '../helpers/interop-writer.js';
import { tempDir } from '../helpers/paths.js';

// Our process runs on UTC, as Lambda does: LOCAL (the table without the key) then means UTC for us.
process.env['TZ'] = 'UTC';

const COLUMNS = { id: 'BIGINT', name: 'VARCHAR', seq: 'BIGINT', dt: 'VARCHAR' } as const;
const SPARK_SCHEMA = 'id BIGINT, name STRING, seq BIGINT, dt STRING';
const DT = '2024-01-01';
const row = (id: number, name: string, seq: number): Row => ({ id, name, seq, dt: DT });

const props = (name: string) =>
  new Map([
    ['hoodie.table.name', name],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.datasource.write.precombine.field', 'seq'],
    ['hoodie.index.bloom.num_entries', '1000'],
  ]);
/** The table's key settings as Spark options; the metadata table stays off so that our writer may write again. */
const sparkOptions = (name: string, extra: Record<string, string> = {}) => ({
  'hoodie.table.name': name,
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'seq',
  'hoodie.datasource.write.operation': 'upsert',
  'hoodie.metadata.enable': 'false',
  ...extra,
});

/** The newest completed commit on the timeline other than `known`. */
function newCommit(table: string, known: ReadonlySet<string>): string {
  const commits = timelineFiles(table)
    .filter((name) => name.endsWith('.commit'))
    .map((name) => name.slice(0, 17))
    .filter((time) => !known.has(time));
  assert.equal(commits.length, 1, `one new commit on ${table}: ${commits.join(', ')}`);
  return commits[0]!;
}

/** How far behind UTC an instant is, in whole hours (Los Angeles: 7 or 8). */
function hoursBehind(instant: string, reference: string): number {
  const toMs = (t: string) =>
    Date.UTC(+t.slice(0, 4), +t.slice(4, 6) - 1, +t.slice(6, 8), +t.slice(8, 10), +t.slice(10, 12), +t.slice(12, 14), +t.slice(14, 17));
  return Math.round((toMs(reference) - toMs(instant)) / 3_600_000);
}

describe('interop: a Spark writer in America/Los_Angeles after our commits', () => {
  let hudi: HudiHarness;
  const dir = tempDir('interop-writer-tz-');
  /** Our two tables: one as we create it (UTC recorded), one without the key (an older table; Hudi's default LOCAL). */
  const withKey = join(dir, 'tz_utc');
  const withoutKey = join(dir, 'tz_local');
  const instants = new Map<string, string[]>();

  before(async () => {
    hudi = await startHudi({ timezone: 'America/Los_Angeles' });
    assert.equal(hudi.info.jvmTimezone, 'America/Los_Angeles');
    for (const [table, name] of [
      [withKey, 'tz_utc'],
      [withoutKey, 'tz_local'],
    ] as const) {
      const first = await ourWrite(
        table,
        'bulk_insert',
        await parquetFromRows(
          dir,
          [1, 2, 3, 4].map((id) => row(id, `ours-${id}`, 1)),
          COLUMNS,
        ),
        props(name),
      );
      if (table === withoutKey) {
        // As a table created before the key was recorded: the same properties without it.
        const properties = tableProperties(table);
        properties.delete(TIMELINE_TIMEZONE_KEY);
        writeFileSync(join(table, '.hoodie/hoodie.properties'), formatJavaProperties(properties, ['Properties saved']));
      }
      const second = await ourWrite(table, 'upsert', await parquetFromRows(dir, [row(1, 'ours-1-v2', 2)], COLUMNS), props(name));
      instants.set(table, [first.instantTime, second.instantTime]);
    }
    assert.equal(tableProperties(withKey).get(TIMELINE_TIMEZONE_KEY), 'UTC');
    assert.equal(tableProperties(withoutKey).has(TIMELINE_TIMEZONE_KEY), false);
  });
  after(async () => {
    await hudi?.close();
  });

  /** A Spark upsert of one row; the instant it committed. */
  async function sparkUpsert(table: string, name: string, update: Row, extra: Record<string, string> = {}): Promise<string> {
    const known = new Set(timelineFiles(table).map((file) => file.slice(0, 17)));
    await hudi.write(table, { schema: SPARK_SCHEMA, rows: [update], options: sparkOptions(name, extra) });
    const spark = newCommit(table, known);
    instants.get(table)!.push(spark);
    return spark;
  }

  // First in this JVM (see above): the only write on the Los Angeles clock.
  it("a table without hoodie.table.timeline.timezone (LOCAL): the writer's instants are Los Angeles time, older than ours, and its update is lost", async () => {
    const latestOurs = instants.get(withoutKey)!.at(-1)!;
    const spark = await sparkUpsert(withoutKey, 'tz_local', row(2, 'spark-la-2', 5));
    assert.ok(spark < latestOurs, `Spark's instant ${spark} sorts before our ${latestOurs}`);
    assert.ok([7, 8].includes(hoursBehind(spark, latestOurs)), `${spark} is Los Angeles time`);
    // Its file slice is older than ours: the table reads as if the update never happened (Spark and we agree).
    const rows = await hudi.read(withoutKey);
    assert.equal(byKey(rows.rows, 'id').get('2')!['name'], 'ours-2', 'the Los Angeles update is not visible');
    assert.deepEqual(canonicalRows(rows.rows), canonicalRows(await ourRows(withoutKey)));
    assert.equal(tableProperties(withoutKey).has(TIMELINE_TIMEZONE_KEY), false, 'Spark does not record the key');
  });

  it("our table (hoodie.table.timeline.timezone=UTC): the writer takes the table's zone without being told, its instant follows ours, its update wins", async () => {
    const spark = await sparkUpsert(withKey, 'tz_utc', row(2, 'spark-2', 5));
    assertWins(withKey, spark, await hudi.read(withKey), '2', 'spark-2');
    assert.equal(tableProperties(withKey).get(TIMELINE_TIMEZONE_KEY), 'UTC');
  });

  it('the table without the key, with hoodie.table.timeline.timezone=UTC on the writer: its instant follows ours, its update wins', async () => {
    // validateTableConfig accepts the option: the table has no value to contradict it.
    const spark = await sparkUpsert(withoutKey, 'tz_local', row(3, 'spark-utc-3', 5), { [TIMELINE_TIMEZONE_KEY]: 'UTC' });
    assertWins(withoutKey, spark, await hudi.read(withoutKey), '3', 'spark-utc-3');
    assert.equal(tableProperties(withoutKey).has(TIMELINE_TIMEZONE_KEY), false, 'Spark does not record the key');
  });

  it('our next writes follow the Spark instants on both tables', async () => {
    for (const [table, name] of [
      [withKey, 'tz_utc'],
      [withoutKey, 'tz_local'],
    ] as const) {
      const next = await ourWrite(table, 'upsert', await parquetFromRows(dir, [row(4, 'ours-4-v2', 2)], COLUMNS), props(name));
      assert.ok(
        instants.get(table)!.every((time) => next.instantTime > time),
        `${name}: ${next.instantTime} follows every instant`,
      );
      assert.equal(byKey(await ourRows(table), 'id').get('4')!['name'], 'ours-4-v2');
    }
  });

  function assertWins(table: string, spark: string, read: { rows: Row[] }, id: string, name: string): void {
    assert.ok(
      instants
        .get(table)!
        .slice(0, -1)
        .every((time) => spark > time),
      `${spark} follows every earlier instant (${instants.get(table)!.join(', ')})`,
    );
    const rows = byKey(read.rows, 'id');
    assert.equal(rows.get(id)!['name'], name, 'the Spark update won');
    assert.equal(rows.get(id)!['_hoodie_commit_time'], spark);
    assert.equal(rows.get('1')!['name'], 'ours-1-v2', 'our earlier update is kept');
  }
});
