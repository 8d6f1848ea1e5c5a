/**
 * Hudi 1.0.2 and 1.1.1 writers (Spark 3.5, one JVM per version) on our version 6 tables, as a team that moved its
 * jobs to Glue 5.1 / EMR 7.11+ (1.0.2) or EMR 8 (1.1) runs them to stay readable by Athena:
 * `hoodie.write.table.version=6`, `hoodie.write.auto.upgrade=false`, the metadata table on (their default), here
 * with column stats and the metadata table compacted at every commit, so the 1.x writer writes its HFiles.
 *
 * Copy-on-write: our CLI creates the table and writes; the 1.x writer upserts; our upsert and clustering follow,
 * then the 1.x writer again. Merge-on-read: the 1.x writer creates the table; our upsert (a delta commit) and our
 * compaction follow, then the 1.x writer again. After each step the 1.x Spark reads every row at its latest value
 * with the metadata table on and off, our reader agrees, `metadata check` finds the metadata table in sync, and
 * the table is still version 6. Hudi 1.1 writes the metadata table's HFiles with its own writer, whose index keys
 * our reader once refused: every write of ours failed there.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { jsonLines, propertiesFile, runCli } from '../helpers/cli.js';
import { canonicalRows, type HudiHarness, type HudiVersion, startHudi } from '../helpers/hudi.js';
import { initMetadataTable } from '../helpers/metadata-table.js';
import { tempDir } from '../helpers/paths.js';
import { clusterWithCli } from './clustering-helpers.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
type Row = { id: number; name: string; ts: number; dt: string };
const rows = (ids: readonly number[], version: number): Row[] =>
  ids.map((id) => ({ id, name: `v${version}-${id}`, ts: version, dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01' }));
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

const keys = (name: string, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ'): Record<string, string> => ({
  'hoodie.table.name': name,
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.datasource.write.table.type': type,
});

/** What a 1.x job sets to keep writing version 6, and the metadata table's HFiles at every commit. */
const STAY_ON_SIX: Record<string, string> = {
  'hoodie.write.table.version': '6',
  'hoodie.write.auto.upgrade': 'false',
  'hoodie.metadata.enable': 'true',
  'hoodie.metadata.index.column.stats.enable': 'true',
  'hoodie.metadata.compact.max.delta.commits': '1',
  'hoodie.embed.timeline.server': 'false',
};

function ourWrite(table: string, props: Record<string, string>, data: readonly Row[], operation: 'insert' | 'upsert'): void {
  const input = join(tempDir('hudi-1x-in-'), 'batch.jsonl');
  writeFileSync(input, data.map((row) => `${JSON.stringify(row)}\n`).join(''));
  const run = runCli(['write', table, '--input', input, '--operation', operation, '--props', propertiesFile(props), '--quiet']);
  assert.equal(run.code, 0, run.stderr);
}

for (const version of ['1.0.2', '1.1.1'] as const satisfies readonly HudiVersion[]) {
  describe(`Hudi ${version} writers on our version 6 tables`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
    });
    after(async () => {
      await hudi?.close();
    });

    /** Every row at its latest value, for Spark (metadata table on and off) and our reader; the table stays v6. */
    async function check(t: TestContext, table: string, expected: ReadonlyMap<number, string>, step: string): Promise<void> {
      const want = [...expected].sort(([a], [b]) => a - b).map(([id, name]) => `${id}:${name}`);
      const asKeys = (read: readonly Record<string, unknown>[]) =>
        read
          .map((row) => [Number(row['id']), String(row['name'])] as const)
          .sort(([a], [b]) => a - b)
          .map(([id, name]) => `${id}:${name}`);
      const on = await hudi.read(table, { options: { 'hoodie.metadata.enable': 'true' }, meta: false });
      const off = await hudi.read(table, { options: { 'hoodie.metadata.enable': 'false' }, meta: false });
      assert.deepEqual(canonicalRows(on.rows), canonicalRows(off.rows), `${step}: Spark ${version} with and without the metadata table`);
      assert.deepEqual(asKeys(on.rows), want, `${step}: Spark ${version} reads every row at its latest value`);
      const ours = await readSnapshot(await HudiTable.open(openStorage(table)));
      assert.deepEqual(asKeys(ours.rows), want, `${step}: our reader`);
      const checked = runCli(['metadata', table, 'check']);
      assert.equal(checked.code, 0, `${step}: metadata check\n${checked.stdout}${checked.stderr}`);
      assert.match(readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8'), /^hoodie\.table\.version=6$/m, `${step}: still version 6`);
      t.diagnostic(`${step}: ${want.length} rows agree`);
    }

    it('copy-on-write: our writes and clustering between its upserts', async (t) => {
      const table = join(tempDir(`hudi-${version}-cow-`), 'cow');
      const props = keys('cow', 'COPY_ON_WRITE');
      assert.equal(runCli(['init', table, '--props', propertiesFile(props)]).code, 0);
      await initMetadataTable(openStorage(table), ['files']);
      const expected = new Map<number, string>();
      const apply = (data: readonly Row[]) => {
        for (const row of data) expected.set(row.id, row.name);
      };

      const first = rows(range(1, 30), 1);
      ourWrite(table, props, first, 'insert');
      apply(first);
      const spark = rows(range(21, 30), 2);
      await hudi.write(table, { schema: SCHEMA, rows: spark, options: { ...props, ...STAY_ON_SIX, 'hoodie.datasource.write.operation': 'upsert' } });
      apply(spark);
      await check(t, table, expected, `after Spark ${version}'s upsert`);

      const ours = rows([...range(1, 10), ...range(45, 10)], 3);
      ourWrite(table, props, ours, 'upsert');
      apply(ours);
      await check(t, table, expected, 'after our upsert');

      clusterWithCli(table, props);
      await check(t, table, expected, 'after our clustering');

      const again = rows(range(5, 20), 4);
      await hudi.write(table, { schema: SCHEMA, rows: again, options: { ...props, ...STAY_ON_SIX, 'hoodie.datasource.write.operation': 'upsert' } });
      apply(again);
      await check(t, table, expected, `after Spark ${version}'s next upsert`);
    });

    it('merge-on-read: our delta commit and compaction between its upserts', async (t) => {
      const table = join(tempDir(`hudi-${version}-mor-`), 'mor');
      const props = keys('mor', 'MERGE_ON_READ');
      const expected = new Map<number, string>();
      const apply = (data: readonly Row[]) => {
        for (const row of data) expected.set(row.id, row.name);
      };
      const first = rows(range(1, 40), 1);
      await hudi.write(table, { schema: SCHEMA, rows: first, options: { ...props, ...STAY_ON_SIX, 'hoodie.datasource.write.operation': 'upsert' } });
      apply(first);
      const second = rows(range(11, 10), 2);
      await hudi.write(table, { schema: SCHEMA, rows: second, options: { ...props, ...STAY_ON_SIX, 'hoodie.datasource.write.operation': 'upsert' } });
      apply(second);
      await check(t, table, expected, `after Spark ${version}'s upserts`);

      const ours = rows([...range(1, 5), ...range(35, 10)], 3);
      ourWrite(table, props, ours, 'upsert');
      apply(ours);
      await check(t, table, expected, 'after our delta commit');

      const compacted = runCli(['compact', table, '--mode', 'scheduleAndExecute', '--props', propertiesFile(props), '--json']);
      assert.equal(compacted.code, 0, compacted.stderr);
      t.diagnostic(`our compaction: ${JSON.stringify(jsonLines(compacted.stdout).at(-1))}`);
      await check(t, table, expected, 'after our compaction');

      const again = rows(range(15, 20), 4);
      await hudi.write(table, { schema: SCHEMA, rows: again, options: { ...props, ...STAY_ON_SIX, 'hoodie.datasource.write.operation': 'upsert' } });
      apply(again);
      await check(t, table, expected, `after Spark ${version}'s next upsert`);
    });
  });
}
