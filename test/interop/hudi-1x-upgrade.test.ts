/**
 * A Hudi 1.x writer with its defaults upgrades, in place, a version 6 copy-on-write table we maintain (its first
 * write moves the timeline to layout 2 and the table to version 8 or 9), while a write of ours is in flight:
 * - our write fails at its commit (TableVersionChangedError: the reload under the lock finds the new version) and
 *   nothing of it is left (Hudi's upgrade rolls back every pending write first, ours included:
 *   UpgradeDowngradeUtils.rollbackFailedWritesAndCompact, EAGER);
 * - our next write, with our defaults, carries on with the table's new version and keeps the 1.x metadata table
 *   the upgrade left; Spark reads it and writes on top;
 * - Hudi's downgrade_table procedure takes it back to 6 while we write: the same failure, then we carry on at 6.
 * Hudi 1.0.2 and 1.1.1, each on a JVM of its own.
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { propertiesFile, runCli } from '../helpers/cli.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { assertVersionChanged, HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, type Hudi1xRow, hudi1xRows, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { filesUnder } from '../helpers/interop-writer.js';
import { tempDir } from '../helpers/paths.js';
import { ourCanonicalRows } from '../helpers/table-files.js';

const TABLE_VERSION = { '1.0.2': 8, '1.1.1': 9 } as const;

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = TABLE_VERSION[version];
  describe(`Hudi ${version} upgrades our version 6 table to version ${tableVersion} while we write`, { concurrency: false }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`interop-upgrade-${version}-`);
    const table = join(root, 'upgraded');
    const name = 'upgraded';
    let inputs = 0;
    const input = (rows: readonly Hudi1xRow[]): string => {
      const file = join(root, `input-${++inputs}.jsonl`);
      writeFileSync(file, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
      return file;
    };
    const ourProps = (extra: Record<string, string> = {}) => new Map(Object.entries({ ...hudi1xWriteOptions(name, 'COPY_ON_WRITE'), ...extra }));
    const sparkRows = async () => canonicalRows((await hudi.read(table)).rows);

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
    });
    after(async () => {
      await hudi?.close();
    });

    it('our write in flight across the upgrade fails at its commit; nothing of it is visible', async () => {
      // A version 6 table of ours, with our metadata table (our default, as Hudi 0.15's).
      await writeBatch(openStorage(table), {
        input: { file: input(hudi1xRows([1, 2, 3, 4], 1)), format: 'jsonl' },
        operation: 'insert',
        properties: ourProps(),
      });
      assert.equal((await HudiTable.open(openStorage(table))).config.version, 6);

      let ourInstant: string | undefined;
      const attempt = writeBatch(openStorage(table), {
        input: { file: input(hudi1xRows([1, 9], 2)), format: 'jsonl' },
        operation: 'upsert',
        properties: ourProps(),
        afterDataFiles: async () => {
          ourInstant = (await HudiTable.open(openStorage(table))).timeline.instants.find((i) => i.state !== 'COMPLETED')?.time;
          // Hudi 1.x with its defaults (hoodie.write.auto.upgrade=true, the metadata table on) writes to the table.
          await hudi.write(table, {
            schema: HUDI_1X_SCHEMA,
            rows: hudi1xRows([2, 5], 3),
            options: { ...hudi1xWriteOptions(name, 'COPY_ON_WRITE'), 'hoodie.datasource.write.operation': 'upsert' },
          });
        },
      });
      await assertVersionChanged(attempt, 6, tableVersion);
      assert.ok(ourInstant !== undefined, 'our write was pending during the upgrade');
      const upgraded = await HudiTable.open(openStorage(table));
      assert.equal(upgraded.config.version, tableVersion, 'Hudi upgraded the table');
      assert.equal(upgraded.config.timelineLayoutVersion, 2);
      const spark = await sparkRows();
      assert.ok(!spark.some((row) => row.includes('"v2-')), `no row of our failed write: ${spark.join('\n')}`);
      assert.ok(spark.some((row) => row.includes('"v3-2"')) && spark.some((row) => row.includes('"v1-1"')), spark.join('\n'));
      assert.deepEqual(await ourCanonicalRows(table), spark, 'we read what Spark reads');
      // Hudi's upgrade rolled our pending write back before moving the timeline: no file names its instant.
      assert.deepEqual(
        filesUnder(table).filter((path) => path.includes(ourInstant!)),
        [],
        'no file of our write is left',
      );
    });

    it('our next write carries on with the new version; Spark reads it and writes on top', async () => {
      // With our defaults: the metadata table the upgrade left is kept at its new version.
      const ours = await writeBatch(openStorage(table), {
        input: { file: input(hudi1xRows([3, 7], 4)), format: 'jsonl' },
        operation: 'upsert',
        properties: ourProps(),
      });
      const after = await HudiTable.open(openStorage(table));
      assert.equal(after.config.version, tableVersion, 'the table keeps its new version');
      const metadataTimeline = readdirSync(join(table, '.hoodie/metadata/.hoodie/timeline'));
      assert.ok(
        metadataTimeline.some((name) => name.startsWith(`${ours.instantTime}_`) && name.endsWith('.deltacommit')),
        `our write's metadata deltacommit: ${metadataTimeline.join(', ')}`,
      );
      const spark = await sparkRows();
      assert.ok(spark.some((row) => row.includes('"v4-3"')) && spark.some((row) => row.includes('"v4-7"')), spark.join('\n'));
      assert.deepEqual(await ourCanonicalRows(table), spark);
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([7, 8], 5),
        options: { ...hudi1xWriteOptions(name, 'COPY_ON_WRITE'), 'hoodie.datasource.write.operation': 'upsert' },
      });
      const last = await sparkRows();
      assert.ok(last.some((row) => row.includes('"v5-7"')) && last.some((row) => row.includes('"v4-3"')), last.join('\n'));
      assert.deepEqual(await ourCanonicalRows(table), last);

      // Our CLI, as a user's next command runs it, carries on at the new version too.
      const cli = runCli([
        'write',
        table,
        '--input',
        input(hudi1xRows([8, 13], 9)),
        '--operation',
        'upsert',
        '--props',
        propertiesFile(Object.fromEntries(ourProps())),
        '--quiet',
      ]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal((await HudiTable.open(openStorage(table))).config.version, tableVersion);
      const afterCli = await sparkRows();
      assert.ok(afterCli.some((row) => row.includes('"v9-8"')) && afterCli.some((row) => row.includes('"v9-13"')), afterCli.join('\n'));
      assert.deepEqual(await ourCanonicalRows(table), afterCli);
    });

    it("Hudi's downgrade_table back to 6 while we write: ours fails at its commit; our next write carries on at 6", async () => {
      let ourInstant: string | undefined;
      const attempt = writeBatch(openStorage(table), {
        input: { file: input(hudi1xRows([4, 10], 6)), format: 'jsonl' },
        operation: 'upsert',
        properties: ourProps(),
        afterDataFiles: async () => {
          ourInstant = (await HudiTable.open(openStorage(table))).timeline.instants.find((i) => i.state !== 'COMPLETED')?.time;
          // The procedure names a catalog table: the table registered at its path.
          await hudi.sql(`CREATE TABLE IF NOT EXISTS ${name} USING hudi LOCATION '${table}'`);
          await hudi.sql(`CALL downgrade_table(table => '${name}', to_version => 'SIX')`);
        },
      });
      await assertVersionChanged(attempt, tableVersion, 6);
      assert.ok(ourInstant !== undefined, 'our write was pending during the downgrade');
      const downgraded = await HudiTable.open(openStorage(table));
      assert.equal(downgraded.config.version, 6, 'Hudi downgraded the table');
      assert.equal(downgraded.config.timelineLayoutVersion, 1);
      const spark = await sparkRows();
      assert.ok(!spark.some((row) => row.includes('"v6-')), `no row of our failed write: ${spark.join('\n')}`);
      assert.deepEqual(await ourCanonicalRows(table), spark, 'we read what Spark reads');

      // Our next write, with our defaults, keeps the table at 6; a 1.x writer told to stay at 6 writes on top.
      await writeBatch(openStorage(table), { input: { file: input(hudi1xRows([4, 11], 7)), format: 'jsonl' }, operation: 'upsert', properties: ourProps() });
      assert.equal((await HudiTable.open(openStorage(table))).config.version, 6, 'the table stays at version 6');
      const ours = await sparkRows();
      assert.ok(ours.some((row) => row.includes('"v7-4"')) && ours.some((row) => row.includes('"v7-11"')), ours.join('\n'));
      assert.deepEqual(await ourCanonicalRows(table), ours);
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([11, 12], 8),
        options: {
          ...hudi1xWriteOptions(name, 'COPY_ON_WRITE'),
          'hoodie.datasource.write.operation': 'upsert',
          'hoodie.write.table.version': '6',
          'hoodie.write.auto.upgrade': 'false',
        },
      });
      assert.equal((await HudiTable.open(openStorage(table))).config.version, 6);
      const last = await sparkRows();
      assert.ok(last.some((row) => row.includes('"v8-11"')) && last.some((row) => row.includes('"v7-4"')), last.join('\n'));
      assert.deepEqual(await ourCanonicalRows(table), last);
    });
  });
}
