/**
 * hudi-1x-upgrade.test.ts for merge-on-read, the metadata table on: a Hudi 1.x writer with its defaults upgrades our
 * version 6 table in place while our upsert (log files) is pending and our compaction is half executed:
 * - both fail at their commits (TableVersionChangedError), the compaction's next operation too; Hudi's upgrade rolled
 *   our delta commit back (UpgradeDowngradeUtils.rollbackFailedWritesAndCompact), and its write's inline compaction
 *   rolled our inflight compaction back and ran it again; Spark and we read the same rows, snapshot and read-optimized;
 * - our next write (1.x log names, event-time ordering) and compaction (completion-time slices) carry on; Spark too;
 * - Hudi's downgrade_table back to 6 (which rolls back and compacts first) while we write: the same failure, then our
 *   write (6's log names) and compaction carry on at 6 and a 1.x writer told to stay at 6 writes on top.
 * Hudi 1.0.2 and 1.1.1, each on a JVM of its own; 3 Spark writes and one downgrade per version.
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { commitCompaction, executeCompactionOperation, runCompaction, runPendingCompactions, startCompactionRun } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { TableVersionChangedError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { withEngine } from '../helpers/engine.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { assertVersionChanged, HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, type Hudi1xRow, hudi1xRows, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { filesUnder } from '../helpers/interop-writer.js';
import { tempDir } from '../helpers/paths.js';

/** Rows without `_hoodie_file_name`: a compaction moves a row from a log file into its new base file. */
const withoutFileName = (rows: readonly string[]): string[] =>
  rows.map((row) => {
    const { _hoodie_file_name: _, ...rest } = JSON.parse(row) as Record<string, unknown>;
    return JSON.stringify(rest);
  });

const TABLE_VERSION = { '1.0.2': 8, '1.1.1': 9 } as const;

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = TABLE_VERSION[version];
  describe(`Hudi ${version} upgrades our version 6 merge-on-read table to version ${tableVersion} while we write and compact`, {
    concurrency: false,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`interop-upgrade-mor-${version}-`);
    const table = join(root, 'upgraded_mor');
    const name = 'upgraded_mor';
    let inputs = 0;
    const input = (rows: readonly Hudi1xRow[]): string => {
      const file = join(root, `input-${++inputs}.jsonl`);
      writeFileSync(file, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
      return file;
    };
    const props = new Map(Object.entries({ ...hudi1xWriteOptions(name, 'MERGE_ON_READ'), 'hoodie.compact.inline.max.delta.commits': '1' }));
    const open = () => HudiTable.open(openStorage(table));
    const lock = () => new StorageLockProvider(openStorage(table));
    const ourWrite = (ids: number[], at: number, afterDataFiles?: () => Promise<void>, extra: readonly Hudi1xRow[] = []) =>
      writeBatch(openStorage(table), {
        input: { file: input([...hudi1xRows(ids, at), ...extra]), format: 'jsonl' },
        operation: at === 1 ? 'insert' : 'upsert',
        properties: props,
        ...(afterDataFiles === undefined ? {} : { afterDataFiles }),
      });
    const schedule = async () => {
      const planned = await scheduleCompaction(await open(), compactionConfigFrom(props, 'test'), { lock: lock(), properties: props });
      assert.ok(planned !== undefined, 'a compaction is planned');
      return planned;
    };
    const sparkWrite = (ids: number[], at: number, extra: Record<string, string> = {}) =>
      hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows(ids, at),
        options: { ...hudi1xWriteOptions(name, 'MERGE_ON_READ'), 'hoodie.datasource.write.operation': 'upsert', ...extra },
      });
    const ourRows = async (queryType: QueryType) => canonicalRows((await readSnapshot(await open(), { includeMetaFields: true, queryType })).rows);
    const sparkRows = async (queryType: QueryType) => canonicalRows((await hudi.read(table, { options: { 'hoodie.datasource.query.type': queryType } })).rows);
    /** Spark and we read the same rows, snapshot and read-optimized: the snapshot. */
    const sameAsSpark = async (): Promise<string[]> => {
      const snapshot = await sparkRows('snapshot');
      assert.deepEqual(await ourRows('snapshot'), snapshot, 'snapshot');
      assert.deepEqual(await ourRows('read_optimized'), await sparkRows('read_optimized'), 'read-optimized');
      return snapshot;
    };
    /** Our compaction that Hudi completed after the upgrade. */
    let upgradedCompaction = '';
    const has = (rows: readonly string[], ...names: string[]) => names.every((n) => rows.some((row) => row.includes(`"${n}"`)));
    const timeline = (folder: string) => readdirSync(join(table, folder)).filter((f) => !f.startsWith('.'));
    const logFiles = () => filesUnder(table).filter((path) => !path.startsWith('.hoodie') && /\.log\.\d+_/.test(path));

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
    });
    after(async () => {
      await hudi?.close();
    });

    it('our write and our compaction in flight across the upgrade fail at their commits; Hudi rolls back the write and completes the compaction', async () => {
      // A version 6 table of ours with the metadata table: a base file per partition, then log files.
      await ourWrite([1, 2, 3, 4], 1);
      await ourWrite([1, 2], 2);
      const v6 = await open();
      assert.deepEqual([v6.config.version, v6.config.type], [6, 'MERGE_ON_READ']);
      assert.ok(logFiles().length > 0, 'log files');

      // Our compaction, planned and executed at 6, not yet committed.
      const compaction = await schedule();
      const started = await startCompactionRun(await open(), compaction.instantTime, () => undefined, props);
      assert.equal(compaction.plan.operations.length, 2, 'a file group per partition');
      const beforeUpgrade = await open();
      const operation = (ordinal: number) =>
        withEngine((engine) => executeCompactionOperation(beforeUpgrade, compaction.instantTime, ordinal, { engine, plan: started.plan!, properties: props }));
      const ourCompacted = (await operation(0)).stat.path!;
      assert.ok(filesUnder(table).includes(ourCompacted), ourCompacted);

      let ourInstant: string | undefined;
      const attempt = ourWrite([1, 9], 3, async () => {
        ourInstant = (await open()).timeline.instants.find((i) => i.state !== 'COMPLETED' && i.action === 'deltacommit')?.time;
        await sparkWrite([2, 5], 4);
      });
      await assertVersionChanged(attempt, 6, tableVersion);
      // Our compaction goes on with the table it opened before the upgrade: its next operation and its commit fail.
      await assert.rejects(operation(1), TableVersionChangedError);
      await assert.rejects(commitCompaction(beforeUpgrade, compaction.instantTime, { lock: lock(), properties: props }), TableVersionChangedError);
      assert.ok(ourInstant !== undefined, 'our write was pending during the upgrade');
      const upgraded = await open();
      assert.equal(upgraded.config.version, tableVersion, 'Hudi upgraded the table');
      assert.equal(upgraded.config.timelineLayoutVersion, 2);
      // Hudi's write ran our compaction after its commit (inline compaction runs pending ones): it rolled the inflight
      // instant back (our base file with it) and compacted both file groups again; our next run finds nothing pending.
      assert.deepEqual(
        upgraded.timeline.instants.filter((i) => i.time === compaction.instantTime).map((i) => [i.action, i.state]),
        [['commit', 'COMPLETED']],
        'Hudi completed our compaction',
      );
      assert.ok(!filesUnder(table).includes(ourCompacted), `our compacted base file is gone: ${ourCompacted}`);
      assert.equal(filesUnder(table).filter((path) => path.endsWith(`_${compaction.instantTime}.parquet`)).length, 2);
      assert.deepEqual(await runPendingCompactions(upgraded, { lock: lock(), properties: props }), []);
      upgradedCompaction = compaction.instantTime;
      const rows = await sameAsSpark();
      assert.ok(!rows.some((row) => row.includes('"v3-')), `no row of our failed write: ${rows.join('\n')}`);
      assert.ok(has(rows, 'v4-2', 'v4-5', 'v2-1', 'v1-3'), rows.join('\n'));
      assert.deepEqual(
        filesUnder(table).filter((path) => path.includes(ourInstant!)),
        [],
        'no file of our write is left',
      );
    });

    it('our next write and our next compaction carry on at the new version; Spark reads them and writes on top', async () => {
      // A row with an older ordering value than the stored one: event-time ordering keeps the stored row.
      const ours = await ourWrite([3, 7], 5, undefined, [{ id: 5, name: 'late-5', ts: 0, dt: '2024-01-01' }]);
      assert.equal((await open()).config.version, tableVersion, 'the table keeps its new version');
      // The write's heal removed the result our compaction stored before Hudi completed it.
      assert.deepEqual(
        filesUnder(table).filter((path) => path.includes(`compaction/${upgradedCompaction}`)),
        [],
      );
      assert.ok(
        logFiles().some((path) => path.includes(`_${ours.instantTime}.log.`)),
        `a log file named by our delta commit (1.x): ${logFiles().join(', ')}`,
      );
      const written = await sameAsSpark();
      assert.ok(has(written, 'v5-3', 'v5-7', 'v4-5') && !has(written, 'late-5'), written.join('\n'));

      // Completion-time slicing: our log, named by its own delta commit, joins its file group's base file.
      const compaction = await schedule();
      assert.ok(
        compaction.plan.operations.some((op) => op.dataFilePath !== null && op.deltaFilePaths.some((path) => path.includes(`_${ours.instantTime}.log.`))),
        JSON.stringify(compaction.plan.operations),
      );
      const result = await runCompaction(await open(), compaction.instantTime, { lock: lock(), properties: props });
      assert.equal(result.outcome, 'committed');
      const completed = timeline('.hoodie/timeline').filter((f) => f.startsWith(`${compaction.instantTime}_`) && f.endsWith('.commit'));
      assert.equal(completed.length, 1, `layout 2's T_<completion>.commit: ${timeline('.hoodie/timeline').join(', ')}`);
      const compacted = await sameAsSpark();
      assert.deepEqual(withoutFileName(compacted), withoutFileName(written), 'the compaction keeps the rows');
      assert.ok(has(await ourRows('read_optimized'), 'v5-3', 'v5-7'), 'read-optimized sees the compacted rows');

      await sparkWrite([7, 8], 6);
      const last = await sameAsSpark();
      assert.ok(has(last, 'v6-7', 'v6-8', 'v5-3'), last.join('\n'));
    });

    it("Hudi's downgrade_table back to 6 while we write: ours fails at its commit; our next write and compaction carry on at 6", async () => {
      let ourInstant: string | undefined;
      const attempt = ourWrite([4, 10], 7, async () => {
        ourInstant = (await open()).timeline.instants.find((i) => i.state !== 'COMPLETED' && i.action === 'deltacommit')?.time;
        await hudi.sql(`CREATE TABLE IF NOT EXISTS ${name} USING hudi LOCATION '${table}'`);
        await hudi.sql(`CALL downgrade_table(table => '${name}', to_version => 'SIX')`);
      });
      await assertVersionChanged(attempt, tableVersion, 6);
      assert.ok(ourInstant !== undefined, 'our write was pending during the downgrade');
      const downgraded = await open();
      assert.deepEqual([downgraded.config.version, downgraded.config.timelineLayoutVersion], [6, 1], 'Hudi downgraded the table');
      // Hudi's merge-on-read downgrade rolls back the pending writes and compacts Spark's log files before it moves
      // the timeline back (EightToSevenDowngradeHandler, NineToEight: rollbackFailedWritesAndCompact).
      assert.ok(
        downgraded.timeline.instants.some((i) => i.action === 'commit' && i.state === 'COMPLETED' && i.time > ourInstant!),
        `the downgrade's compaction: ${JSON.stringify(downgraded.timeline.instants)}`,
      );
      const rows = await sameAsSpark();
      assert.ok(!rows.some((row) => row.includes('"v7-')), `no row of our failed write: ${rows.join('\n')}`);
      assert.deepEqual(
        filesUnder(table).filter((path) => path.includes(ourInstant!)),
        [],
        'no file of our write is left',
      );

      const logsBefore = logFiles();
      const ours = await ourWrite([4, 11], 8);
      const after6 = await open();
      assert.equal(after6.config.version, 6, 'the table stays at version 6');
      // Version 6 names a log file by its slice's base instant (a completed commit), not by our delta commit.
      const ourLogs = logFiles().filter((path) => !logsBefore.includes(path));
      assert.ok(ourLogs.length > 0, 'our write appended log files');
      for (const path of ourLogs) {
        const base = /_(\d{17})\.log\./.exec(path)?.[1];
        assert.ok(base !== ours.instantTime && after6.timeline.instants.some((i) => i.time === base && i.action === 'commit'), path);
      }
      const written = await sameAsSpark();
      assert.ok(has(written, 'v8-4', 'v8-11'), written.join('\n'));
      const compaction = await schedule();
      assert.equal((await runCompaction(await open(), compaction.instantTime, { lock: lock(), properties: props })).outcome, 'committed');
      assert.ok(timeline('.hoodie').includes(`${compaction.instantTime}.commit`), 'layout 1 names the compaction commit');
      assert.deepEqual(withoutFileName(await sameAsSpark()), withoutFileName(written), 'the compaction keeps the rows');

      await sparkWrite([11, 12], 9, { 'hoodie.write.table.version': '6', 'hoodie.write.auto.upgrade': 'false' });
      assert.equal((await open()).config.version, 6);
      const last = await sameAsSpark();
      assert.ok(has(last, 'v9-11', 'v9-12', 'v8-4'), last.join('\n'));
    });
  });
}
