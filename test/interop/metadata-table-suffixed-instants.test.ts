/**
 * Metadata-table instants longer than 20 digits, against real Hudi 0.15 and 1.0.2 (Spark 3.5.1; 1.0.2 writing
 * version 6). Our CLI writes a table with the metadata table's `files` partition; one Spark upsert turns on column
 * stats and compacts the metadata table at once, so Hudi initializes `column_stats` at suffixed instants (`<T>010`,
 * …) and compacts at a 23-digit instant (`<T>011001`-like). Our upsert, our clustering and Spark's next upsert
 * follow; after each step Spark reads every row with the metadata table on and off, Hudi 0.15's validator passes
 * (on 0.15), `metadata check` is clean, and the values are the ones written last. Before
 * the one instant-time grammar, our deltacommits went to the slice that compaction had superseded: Spark read stale
 * rows or none, and its next upsert made the loss permanent.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MetadataTable } from '../../lib/metadata/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { jsonLines, propertiesFile, runCli } from '../helpers/cli.js';
import { type HudiHarness, type HudiVersion, startHudi } from '../helpers/hudi.js';
import { initMetadataTable } from '../helpers/metadata-table.js';
import { metadataTableChecks } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';
import { clusterWithCli } from './clustering-helpers.js';

const NAME = 'suffixed';
const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const CHECKS = ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups', 'all-column-stats'];
const KEYS: Record<string, string> = {
  'hoodie.table.name': NAME,
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
};

type Row = { id: number; name: string; ts: number; dt: string };
const rows = (ids: readonly number[], version: number): Row[] =>
  ids.map((id) => ({ id, name: `v${version}-${id}`, ts: version, dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01' }));
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

function ourWrite(table: string, data: readonly Row[], operation: 'insert' | 'upsert'): string {
  const input = join(tempDir('suffixed-in-'), 'batch.jsonl');
  writeFileSync(input, data.map((row) => `${JSON.stringify(row)}\n`).join(''));
  const run = runCli(['write', table, '--input', input, '--operation', operation, '--props', propertiesFile(KEYS)]);
  assert.equal(run.code, 0, run.stderr);
  return String((jsonLines(run.stdout).at(-1) as { instant: string }).instant);
}

/** Hudi 1.x keeps writing version 6 only when told (what users of Glue 5.1 / EMR 7.11+ set for Athena). */
const WRITER_KEYS: Record<HudiVersion, Record<string, string>> = {
  '0.15.0': {},
  '1.0.2': { 'hoodie.write.table.version': '6', 'hoodie.write.auto.upgrade': 'false' },
  '1.1.1': { 'hoodie.write.table.version': '6', 'hoodie.write.auto.upgrade': 'false' },
};

for (const version of ['0.15.0', '1.0.2'] as const satisfies readonly HudiVersion[]) {
  describe(`metadata-table instants of 23 digits, with Hudi ${version}`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
    });
    after(async () => {
      await hudi?.close();
    });

    const { validate, readBoth } = metadataTableChecks(() => hudi);

    it('our upsert and clustering after a 23-digit metadata compaction: Spark reads every row, before and after its own upsert', async (t) => {
      const table = join(tempDir('suffixed-'), NAME);
      const storage = openStorage(table);
      assert.equal(runCli(['init', table, '--props', propertiesFile(KEYS)]).code, 0);
      await initMetadataTable(storage, ['files']);
      const expected = new Map<number, string>();
      const apply = (data: readonly Row[]) => {
        for (const row of data) expected.set(row.id, row.name);
      };
      for (const batch of [0, 1, 2]) {
        const data = rows(range(1 + 30 * batch, 30), 1 + batch);
        ourWrite(table, data, 'insert');
        apply(data);
      }

      // Spark turns on column stats and compacts the metadata table at once.
      const sparkRows = rows(range(91, 30), 10);
      await hudi.write(table, {
        schema: SCHEMA,
        rows: sparkRows,
        options: {
          ...KEYS,
          ...WRITER_KEYS[version],
          'hoodie.datasource.write.operation': 'upsert',
          'hoodie.metadata.index.column.stats.enable': 'true',
          'hoodie.metadata.compact.max.delta.commits': '1',
        },
      });
      apply(sparkRows);
      const mdt = await MetadataTable.open(storage);
      assert.ok(mdt);
      const compactions = mdt.timeline.completed().filter((i) => i.action === 'commit');
      t.diagnostic(`metadata compactions: ${compactions.map((i) => i.time).join(', ')}`);
      const suffixed = compactions.find((i) => i.time.length >= 23);
      assert.ok(suffixed, `Hudi compacted the metadata table at a 23-digit instant: ${compactions.map((i) => i.time).join(', ')}`);
      assert.ok(
        (mdt.fileGroups.get('files') ?? []).every((group) => group.latest.baseInstant === suffixed.time),
        'the files partition is read from that compaction',
      );

      const check = async (step: string) => {
        // test/hudi/mdt_validator.py drives Hudi 0.15's classes; on 1.x, the reads and `metadata check` judge.
        if (version === '0.15.0') await validate(t, table, step, CHECKS);
        const read = await readBoth(table, step);
        assert.deepEqual(
          new Map(read.map((row): [number, string] => [Number(row['id']), String(row['name'])]).sort(([a], [b]) => a - b)),
          new Map([...expected].sort(([a], [b]) => a - b)),
          `${step}: every row, at its latest value`,
        );
        const checked = runCli(['metadata', table, 'check']);
        assert.equal(checked.code, 0, `${step}: metadata check\n${checked.stdout}${checked.stderr}`);
      };
      await check('after Spark compacted the metadata table');

      const updates = rows(range(31, 30), 20);
      const upsert = ourWrite(table, updates, 'upsert');
      apply(updates);
      const afterUpsert = await MetadataTable.open(storage);
      for (const group of afterUpsert?.fileGroups.get('files') ?? []) {
        assert.ok(
          group.latest.logFiles.some((log) => log.name.baseInstant === suffixed.time),
          `our deltacommit ${upsert} appended to the ${suffixed.time} slice`,
        );
      }
      await check('after our upsert');

      const clustered = clusterWithCli(table, KEYS);
      t.diagnostic(`our clustering ${clustered.instantTime}: ${clustered.groups.length} group(s)`);
      await check('after our clustering');

      const sparkUpdates = rows([...range(1, 10), ...range(41, 10), ...range(95, 10)], 30);
      // Column stats stay on (without the key, Hudi's writer drops the partition, and the validator's check with it).
      await hudi.write(table, {
        schema: SCHEMA,
        rows: sparkUpdates,
        options: { ...KEYS, ...WRITER_KEYS[version], 'hoodie.datasource.write.operation': 'upsert', 'hoodie.metadata.index.column.stats.enable': 'true' },
      });
      apply(sparkUpdates);
      await check("after Spark's next upsert");
      assert.equal(expected.size, 120);
    });
  });
}
