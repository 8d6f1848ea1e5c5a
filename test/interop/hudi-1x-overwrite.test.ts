/**
 * Tables where Hudi 1.0.2 (table version 8) or 1.1.1 (9) itself ran insert_overwrite, insert_overwrite_table and
 * delete_partition (completed replacecommits), the metadata table on. We read them as Spark and hudi-rs do (snapshot,
 * as of every write). Our clean deletes what Hudi's run_clean deletes; our archiver archives the replacecommits
 * archive_commits archives; our upsert, clustering and compaction leave replaced file groups alone. After each, Spark
 * reads our rows, its hudi_metadata() equals ours and lists what storage holds (the harness's metadata validator is
 * 0.15's), and it writes on. A pending insert_overwrite (failed pre-commit validation): reads skip it, clean and
 * archive do what Hudi's do beside it, and our rollback leaves the files Hudi's own rollback (its next write) leaves.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { type CleanResult, runClean } from '../../lib/cleaning/clean.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { rollbackFailedWrites } from '../../lib/rollback/rollback.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { fileGroupKey } from '../../lib/timeline/file-group-key.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { canonicalRows, type HudiHarness, HudiHarnessError, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xRows, hudi1xWriteOptions, timelineFiles } from '../helpers/hudi-1x-fixtures.js';
import { activeTimeline, hudiArchivedInstants, ourArchive, ourHistory } from '../helpers/hudi-1x-history.js';
import { assertMetadata1xAgrees } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';
import { dataFilesUnder, ourCanonicalRows } from '../helpers/table-files.js';
import { withoutFileName } from './clustering-helpers.js';

type Kind = 'cow' | 'mor';
const TYPES: Record<Kind, 'COPY_ON_WRITE' | 'MERGE_ON_READ'> = { cow: 'COPY_ON_WRITE', mor: 'MERGE_ON_READ' };

const CLEAN = { 'hoodie.cleaner.policy': 'KEEP_LATEST_COMMITS', 'hoodie.cleaner.commits.retained': '1' };
const CLEAN_CALL = 'retain_commits => 1';
/** Archival keeping 2 to 3 commits; the metadata table dropped first (its compaction would bound it otherwise). */
const ARCHIVE = { 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3', 'hoodie.cleaner.commits.retained': '1', 'hoodie.metadata.enable': 'false' };
const ARCHIVE_CALL = 'min_commits => 2, max_commits => 3, retain_commits => 1, enable_metadata => false';

const lock = (path: string) => new StorageLockProvider(new LocalStorage(path));
const open = (path: string) => HudiTable.open(new LocalStorage(path));

/** Our compaction of every file group with logs (one delta commit is enough), scheduled and run, the metadata table kept. */
async function ourCompaction(path: string) {
  const properties = new Map([
    ['hoodie.compact.inline.max.delta.commits', '1'],
    ['hoodie.metadata.enable', 'true'],
  ]);
  const scheduled = await scheduleCompaction(await open(path), compactionConfigFrom(properties, 'test'), { lock: lock(path), properties });
  assert.ok(scheduled !== undefined, 'a compaction was planned');
  await runCompaction(await open(path), scheduled.instantTime, { lock: lock(path), properties });
  return scheduled;
}

async function ourClean(path: string): Promise<CleanResult> {
  const properties = new Map(Object.entries(CLEAN));
  return runClean(await open(path), { config: cleanConfigFromProperties(properties), lock: lock(path), properties });
}

/** `fileGroupKey`s of the file groups the table's completed replacecommits replaced (active timeline). */
async function replacedGroups(path: string): Promise<Set<string>> {
  return (await open(path)).replacedFileGroups();
}

/** The file group (partition and id) of a base or log file path relative to the table. */
function groupOf(path: string): string {
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  const fileId = name.startsWith('.') ? name.slice(1, name.indexOf('_')) : name.slice(0, name.indexOf('_'));
  return fileGroupKey(slash < 0 ? '' : path.slice(0, slash), fileId);
}

function copy(from: string, to: string): string {
  cpSync(from, to, { recursive: true });
  return to;
}

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`insert_overwrite, insert_overwrite_table and delete_partition by Hudi ${version} (table version ${tableVersion})`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    let engine: ParquetEngine;
    const root = tempDir(`hudi-${version}-overwrite-`);
    const source: Record<Kind, string> = { cow: join(root, 'cow'), mor: join(root, 'mor') };
    /** The requested time of each completed write, in order, and the rows Spark read as of it. */
    const asOf: Record<Kind, { time: string; rows: string[] }[]> = { cow: [], mor: [] };
    const write = (kind: Kind, path: string, operation: string, ids: number[], at: number, extra: Record<string, string> = {}) =>
      hudi.write(path, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows(ids, at),
        options: {
          ...hudi1xWriteOptions(kind, TYPES[kind]),
          'hoodie.compact.inline': 'false',
          'hoodie.clean.automatic': 'false',
          'hoodie.archive.automatic': 'false',
          'hoodie.datasource.write.operation': operation,
          ...extra,
        },
      });
    const sparkRows = async (path: string, options: Record<string, string> = {}) =>
      canonicalRows((await hudi.read(path, { options: { 'hoodie.metadata.enable': 'true', ...options } })).rows);
    let tables = 0;
    const sparkClean = async (path: string) => {
      const name = `overwrite_clean_${++tables}`;
      await hudi.sql(`CREATE TABLE ${name} USING hudi LOCATION '${path}'`);
      await hudi.sql(`CALL run_clean(table => '${name}', ${CLEAN_CALL})`);
    };

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      engine = await openParquetEngine();
      // Odd ids go to 2024-01-01, even ones to 2024-01-02.
      await write('cow', source.cow, 'insert', [1, 2, 3, 4, 5, 6], 1);
      await write('cow', source.cow, 'upsert', [2, 3, 7], 2);
      await write('cow', source.cow, 'insert_overwrite', [11, 13], 3);
      await write('cow', source.cow, 'upsert', [2, 15], 4);
      await write('cow', source.cow, 'delete_partition', [4], 5, { 'hoodie.datasource.write.partitions.to.delete': '2024-01-02' });
      await write('cow', source.cow, 'upsert', [13, 17], 6);

      await write('mor', source.mor, 'insert', [1, 2, 3, 4, 5, 6], 1);
      await write('mor', source.mor, 'upsert', [2, 3], 2);
      await write('mor', source.mor, 'insert_overwrite_table', [11, 12], 3);
      await write('mor', source.mor, 'upsert', [12, 13], 4);
      await write('mor', source.mor, 'insert_overwrite', [14], 5);
      await write('mor', source.mor, 'upsert', [11, 14], 6);

      for (const kind of ['cow', 'mor'] as const) {
        const table = await open(source[kind]);
        assert.equal(table.config.version, tableVersion);
        const replaces = table.timeline.completed().filter((instant) => instant.action === 'replacecommit');
        assert.equal(replaces.length, 2, `${kind}: two replacecommits`);
        for (const instant of table.timeline.completedWrites())
          asOf[kind].push({ time: instant.time, rows: await sparkRows(source[kind], { 'as.of.instant': instant.time }) });
      }
      assert.ok(
        dataFilesUnder(source.mor).some((path) => path.includes('.log.')),
        'the merge-on-read table has log files',
      );
    });

    after(async () => {
      await engine?.close();
      await hudi?.close();
    });

    for (const kind of ['cow', 'mor'] as const) {
      it(`${kind}: we read what Spark and hudi-rs read, snapshot and as of every write before and after the overwrites`, async () => {
        const path = source[kind];
        const snapshot = await sparkRows(path);
        assert.deepEqual(await ourCanonicalRows(path), snapshot, 'snapshot');
        assert.deepEqual(canonicalRows((await hudi.hudiRsRead(path)).rows), snapshot, 'hudi-rs snapshot');
        const ids = new Set(snapshot.map((row) => (JSON.parse(row) as { id: number }).id));
        if (kind === 'cow')
          assert.deepEqual(
            [...ids].sort((a, b) => a - b),
            [11, 13, 15, 17],
            'the overwrite kept 11 and 13; the deleted partition is gone',
          );
        else
          assert.deepEqual(
            [...ids].sort((a, b) => a - b),
            [11, 13, 14],
            'the table overwrite kept 11 and 12, the partition overwrite replaced 12',
          );
        for (const { time, rows } of asOf[kind]) assert.deepEqual(await ourCanonicalRows(path, time), rows, `as of ${time}`);
        assert.ok(asOf[kind][0]!.rows.length === 6, 'as of the first write: its six rows');
        await assertMetadata1xAgrees(hudi, path, `${kind} as Spark wrote it`);
      });

      it(`${kind}: our clean deletes the replaced file groups Hudi's deletes; Spark agrees and writes on`, async () => {
        const mine = copy(source[kind], join(root, `clean_mine_${kind}`));
        const theirs = copy(source[kind], join(root, `clean_theirs_${kind}`));
        const replaced = await replacedGroups(mine);
        await sparkClean(theirs);
        const result = await ourClean(mine);
        assert.equal(result.outcome, 'cleaned');
        assert.deepEqual(dataFilesUnder(mine), dataFilesUnder(theirs), 'the same files remain');
        const deleted = dataFilesUnder(source[kind]).filter((file) => !dataFilesUnder(mine).includes(file));
        assert.ok(
          deleted.some((file) => replaced.has(groupOf(file))),
          `replaced file groups went: ${deleted.join(', ')}`,
        );
        assert.deepEqual(
          readdirSync(mine).filter((name) => !name.startsWith('.')),
          readdirSync(theirs).filter((name) => !name.startsWith('.')),
          'the same partition folders',
        );
        const rows = await sparkRows(source[kind]);
        assert.deepEqual(await sparkRows(mine), rows, 'Spark reads the rows it read before');
        await assertMetadata1xAgrees(hudi, mine, `after our clean (${kind})`);
        await write(kind, mine, 'upsert', [11, 21], 7);
        await assertMetadata1xAgrees(hudi, mine, `Spark wrote after our clean (${kind})`);
      });

      it(`${kind}: after a clean, our archiver archives the replacecommits Hudi's archives; reads survive, Spark writes on`, async () => {
        const cleaned = copy(source[kind], join(root, `archive_cleaned_${kind}`));
        // Archival keeps the delta commits after the last compaction (Hudi's compaction trigger): compact first.
        if (kind === 'mor') await ourCompaction(cleaned);
        // Hudi keeps a replacecommit on the active timeline until a clean has removed what it replaced.
        assert.equal((await ourClean(cleaned)).outcome, 'cleaned');
        const mine = copy(cleaned, join(root, `archive_mine_${kind}`));
        const theirs = copy(cleaned, join(root, `archive_theirs_${kind}`));
        const rows = await sparkRows(mine);
        await hudi.sql(`CALL archive_commits(path => '${theirs}', ${ARCHIVE_CALL})`);
        const result = await ourArchive(mine, ARCHIVE);
        assert.equal(result.outcome, 'archived');
        assert.deepEqual(activeTimeline(mine), activeTimeline(theirs), 'the same active timeline');
        const theirHistory = await hudiArchivedInstants(hudi, theirs);
        assert.deepEqual(await hudiArchivedInstants(hudi, mine), theirHistory, 'Hudi lists the same archived instants');
        assert.ok(
          theirHistory.some((instant) => instant.action === 'replacecommit'),
          `a replacecommit archived: ${theirHistory.map((i) => i.action).join(', ')}`,
        );
        assert.ok((await ourHistory(mine)).instants.some((instant) => instant.action === 'replacecommit'));
        assert.deepEqual(await ourCanonicalRows(mine), rows, 'our read after archival');
        assert.deepEqual(await sparkRows(mine, { 'hoodie.metadata.enable': 'false' }), rows, 'Spark reads after our archival');
        // Spark writes with the metadata table on again: it rebuilds it from storage and validates it.
        await write(kind, mine, 'upsert', [11, 22], 7, { 'hoodie.metadata.enable': 'true' });
        await assertMetadata1xAgrees(hudi, mine, `Spark wrote after our archival (${kind})`);
        assert.deepEqual(await ourCanonicalRows(mine), await sparkRows(mine), 'our read after Spark wrote');
      });
    }

    it('cow: our upserts of keys whose file groups were replaced write to live file groups; Spark agrees and writes on', async () => {
      const mine = copy(source.cow, join(root, 'write_mine'));
      const replaced = await replacedGroups(mine);
      const input = join(root, 'write_batch.jsonl');
      // 1 and 3 lived in file groups the insert_overwrite replaced, 4 in the deleted partition, 11 lives on.
      writeFileSync(
        input,
        `${hudi1xRows([1, 3, 4, 11], 8)
          .map((row) => JSON.stringify(row))
          .join('\n')}\n`,
      );
      const properties = new Map([
        ['hoodie.metadata.enable', 'true'],
        ['hoodie.datasource.write.precombine.field', 'ts'],
      ]);
      const result = await writeBatch(new LocalStorage(mine), { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties });
      const written = timelineFiles(mine).find((name) => name.startsWith(`${result.instantTime}_`) && name.endsWith('.commit'));
      assert.ok(written !== undefined, `our commit ${result.instantTime} completed`);
      const touched = dataFilesUnder(mine)
        .filter((file) => file.endsWith(`_${result.instantTime}.parquet`))
        .map(groupOf);
      assert.ok(touched.length >= 2, `our commit wrote both partitions: ${touched.join(', ')}`);
      assert.deepEqual(
        touched.filter((group) => replaced.has(group)),
        [],
        'nothing written into a replaced file group',
      );
      const rows = await sparkRows(mine);
      const names = rows.map((row) => (JSON.parse(row) as { name: string }).name).sort();
      assert.deepEqual(names, ['v4-15', 'v6-13', 'v6-17', 'v8-1', 'v8-11', 'v8-3', 'v8-4'], 'the replaced keys came back as inserts');
      await assertMetadata1xAgrees(hudi, mine, 'after our upsert');
      await write('cow', mine, 'upsert', [1, 4], 9);
      await assertMetadata1xAgrees(hudi, mine, 'Spark wrote after our upsert');
      assert.deepEqual(await ourCanonicalRows(mine), await sparkRows(mine));
    });

    it('cow: our clustering plan leaves the replaced file groups out; Spark agrees and writes on', async () => {
      const mine = copy(source.cow, join(root, 'cluster_mine'));
      const replaced = await replacedGroups(mine);
      const table = await HudiTable.open(new LocalStorage(mine), { mode: 'clustering' });
      const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.small.file.limit': '104857600' } }).config;
      const properties = new Map([['hoodie.metadata.enable', 'true']]);
      const run = await runClusteringJob(table, {
        mode: 'scheduleAndExecute',
        config,
        lock: lock(mine),
        engine,
        tempDir: tempDir('overwrite-cluster-'),
        force: true,
        properties,
      });
      const planned = run.scheduled?.plan.inputGroups.flatMap((group) => group.slices.map((slice) => fileGroupKey(slice.partitionPath, slice.fileId))) ?? [];
      assert.ok(planned.length >= 2, `our plan clusters the live file groups: ${planned.join(', ')}`);
      assert.deepEqual(
        planned.filter((group) => replaced.has(group)),
        [],
        'no replaced file group in the plan',
      );
      assert.ok(run.commit !== undefined, 'the clustering committed');
      assert.deepEqual(withoutFileName((await hudi.read(mine)).rows), withoutFileName((await hudi.read(source.cow)).rows));
      await assertMetadata1xAgrees(hudi, mine, 'after our clustering');
      await write('cow', mine, 'upsert', [11, 23], 7);
      await assertMetadata1xAgrees(hudi, mine, 'Spark wrote after our clustering');
      assert.deepEqual(await ourCanonicalRows(mine), await sparkRows(mine));
    });

    it('mor: our compaction plan leaves the replaced file groups (with their logs) out; Spark agrees and writes on', async () => {
      const mine = copy(source.mor, join(root, 'compact_mine'));
      const replaced = await replacedGroups(mine);
      assert.ok(
        dataFilesUnder(mine).some((file) => file.includes('.log.') && replaced.has(groupOf(file))),
        'a replaced file group has log files',
      );
      const scheduled = await ourCompaction(mine);
      const planned = scheduled.plan.operations.map((operation) => fileGroupKey(operation.partitionPath, operation.fileId));
      assert.ok(planned.length >= 2, `our plan compacts the live file groups with logs: ${planned.join(', ')}`);
      assert.deepEqual(
        planned.filter((group) => replaced.has(group)),
        [],
        'no replaced file group in the plan',
      );
      const rows = withoutFileName((await hudi.read(source.mor)).rows);
      for (const queryType of ['snapshot', 'read_optimized']) {
        const read = await hudi.read(mine, { options: { 'hoodie.datasource.query.type': queryType } });
        assert.deepEqual(withoutFileName(read.rows), rows, `Spark ${queryType}`);
      }
      await assertMetadata1xAgrees(hudi, mine, 'after our compaction');
      await write('mor', mine, 'upsert', [11, 24], 7);
      await assertMetadata1xAgrees(hudi, mine, 'Spark wrote after our compaction');
      assert.deepEqual(await ourCanonicalRows(mine), await sparkRows(mine));
    });

    it('cow: a pending insert_overwrite is invisible; clean and archive stop where Hudi stops; our rollback leaves what Hudi’s leaves', async () => {
      const pending = copy(source.cow, join(root, 'pending'));
      const rows = await sparkRows(pending);
      try {
        await write('cow', pending, 'insert_overwrite', [31, 32], 8, {
          'hoodie.precommit.validators': 'org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator',
          'hoodie.precommit.validators.single.value.sql.queries': 'select count(*) from <TABLE_NAME> where id is null#1',
        });
        assert.fail('the insert_overwrite meant to fail pre-commit validation succeeded');
      } catch (error) {
        if (!(error instanceof HudiHarnessError && /validation/i.test(error.message))) throw error;
      }
      const pendingInstants = (await open(pending)).timeline.pending();
      assert.deepEqual(
        pendingInstants.map((instant) => `${instant.action} ${instant.state}`),
        ['replacecommit INFLIGHT'],
        'the failed insert_overwrite is an inflight replacecommit',
      );
      const pendingTime = pendingInstants[0]!.time;
      assert.deepEqual(await ourCanonicalRows(pending), rows, 'our read skips the pending overwrite');
      assert.deepEqual(await sparkRows(pending), rows, 'so does Spark');

      // Clean beside it: the same files as Hudi's clean.
      const cleanMine = copy(pending, join(root, 'pending_clean_mine'));
      const cleanTheirs = copy(pending, join(root, 'pending_clean_theirs'));
      await sparkClean(cleanTheirs);
      await ourClean(cleanMine);
      assert.deepEqual(dataFilesUnder(cleanMine), dataFilesUnder(cleanTheirs), 'clean beside a pending insert_overwrite');
      assert.ok(
        timelineFiles(cleanMine).some((name) => name.startsWith(pendingTime)),
        'the pending overwrite stays',
      );

      // Archive beside it: the same history as Hudi's archiver.
      const archiveTheirs = copy(cleanMine, join(root, 'pending_archive_theirs'));
      const archiveMine = copy(cleanMine, join(root, 'pending_archive_mine'));
      await hudi.sql(`CALL archive_commits(path => '${archiveTheirs}', ${ARCHIVE_CALL})`);
      await ourArchive(archiveMine, ARCHIVE);
      assert.deepEqual(activeTimeline(archiveMine), activeTimeline(archiveTheirs), 'archive beside a pending insert_overwrite');
      assert.deepEqual(await hudiArchivedInstants(hudi, archiveMine), await hudiArchivedInstants(hudi, archiveTheirs));

      // Rollback: ours, then Spark writes; Hudi's own (its next write rolls the failed one back first).
      const mine = copy(pending, join(root, 'pending_rollback_mine'));
      const theirs = copy(pending, join(root, 'pending_rollback_theirs'));
      const rolled = await rollbackFailedWrites(await open(mine), { lock: lock(mine), policy: 'EAGER' });
      assert.deepEqual(
        rolled.map((result) => result.instantToRollback.time),
        [pendingTime],
        'our rollback rolled the pending insert_overwrite back',
      );
      assert.ok(!timelineFiles(mine).some((name) => name.startsWith(`${pendingTime}.`)), 'no pending replacecommit left');
      await write('cow', theirs, 'upsert', [1], 9);
      const written = (path: string) => dataFilesUnder(path).filter((file) => !file.includes(`_${pendingTime}.`));
      const theirWrite = (await open(theirs)).timeline.completedWrites().at(-1)!.time;
      assert.deepEqual(
        written(mine),
        dataFilesUnder(theirs).filter((file) => !file.endsWith(`_${theirWrite}.parquet`)),
        'the same files as Hudi’s rollback',
      );
      assert.deepEqual(
        dataFilesUnder(mine).filter((file) => file.includes(`_${pendingTime}.`)),
        [],
        'the overwrite’s files are gone',
      );
      await assertMetadata1xAgrees(hudi, mine, 'after our rollback');
      await write('cow', mine, 'upsert', [1], 9);
      await assertMetadata1xAgrees(hudi, mine, 'Spark wrote after our rollback');
      assert.deepEqual(await ourCanonicalRows(mine), await sparkRows(mine));
    });
  });
}
