/**
 * Our clean and archive on merge-on-read tables Hudi 1.0.2 (table version 8) and 1.1.1 (9) write, judged by that
 * release on Spark 3.5.1. Spark writes inserts, upserts and a delete (logs named by their delta commits), a compaction
 * (these three hours back, by the JVM's clock), upserts, a compaction it only schedules and an upsert while it is
 * pending, the metadata table on, its cleaner off. Spark's `run_clean` cleans one copy, ours another (by commits, file
 * versions and hours): the same files remain (logs go with the slice they join by completion time, pending compaction
 * slices stay), plans and clean metadata agree, Spark reads the same rows (snapshot and read-optimized, metadata table
 * on and off), `hudi_metadata()` equals what we read, both metadata tables hold the same records; Spark writes and
 * compacts on top. Our archiver and `archive_commits` archive the same
 * delta commits into the same history (the compaction trigger keeps those after the last compaction), with the
 * metadata table kept (its latest compaction bounds both) and dropped first; Spark writes and archives on top.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { type CleanResult, runClean } from '../../lib/cleaning/clean.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, type HoodieCleanMetadata } from '../../lib/timeline/avro-files.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS, hudi1xHoursAgo, hudi1xMorWrite } from '../helpers/hudi-1x-fixtures.js';
import { activeTimeline, hudiArchivedInstants, ourArchive, ourHistory } from '../helpers/hudi-1x-history.js';
import { assertMetadata1xValidated, comparableMetadataRow, metadata1xRecords, sparkMetadataRow } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';
import { cleanerPlanFiles, dataFilesUnder } from '../helpers/table-files.js';

interface CleanCase {
  readonly name: string;
  /** Our clean's keys (Hudi's). */
  readonly props: Record<string, string>;
  /** The same clean as run_clean arguments. */
  readonly call: string;
}
const CASES: readonly CleanCase[] = [
  {
    name: 'KEEP_LATEST_COMMITS',
    props: { 'hoodie.cleaner.policy': 'KEEP_LATEST_COMMITS', 'hoodie.cleaner.commits.retained': '2' },
    call: 'retain_commits => 2',
  },
  {
    name: 'KEEP_LATEST_FILE_VERSIONS',
    props: { 'hoodie.cleaner.policy': 'KEEP_LATEST_FILE_VERSIONS', 'hoodie.cleaner.fileversions.retained': '1' },
    call: "clean_policy => 'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1",
  },
  {
    // The first compaction and the writes before it are three hours old: the cut-off falls between them and the rest.
    name: 'KEEP_LATEST_BY_HOURS',
    props: { 'hoodie.clean.policy': 'KEEP_LATEST_BY_HOURS', 'hoodie.clean.hours.retained': '1' },
    call: "clean_policy => 'KEEP_LATEST_BY_HOURS', hours_retained => 1",
  },
];

function timelineFiles(table: string, pattern: RegExp): string[] {
  return readdirSync(join(table, '.hoodie', 'timeline'))
    .filter((name) => pattern.test(name))
    .sort();
}

function readAvro<K extends 'cleanerPlan' | 'cleanMetadata'>(table: string, name: string, kind: K) {
  const path = join(table, '.hoodie', 'timeline', name);
  return decodeTimelineAvro(kind, readFileSync(path), path);
}

function deletedFiles(metadata: HoodieCleanMetadata): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(metadata.partitionMetadata)
      .map(([p, m]) => [p, [...m.successDeleteFiles].sort()])
      .sort(([a], [b]) => (a! < b! ? -1 : 1)),
  );
}

async function ourClean(path: string, props: Record<string, string>): Promise<CleanResult> {
  const storage = new LocalStorage(path);
  return runClean(await HudiTable.open(storage), {
    config: cleanConfigFromProperties(new Map(Object.entries(props))),
    lock: new StorageLockProvider(storage),
    properties: new Map(Object.entries(props)),
  });
}

/** Archival keeping 2 to 3 commits, the cleaner one; the metadata table dropped first. */
const ARCHIVE = { 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3', 'hoodie.cleaner.commits.retained': '1', 'hoodie.metadata.enable': 'false' };
const ARCHIVE_CALL = 'min_commits => 2, max_commits => 3, retain_commits => 1, enable_metadata => false';

async function ourRows(path: string, queryType: 'snapshot' | 'read_optimized'): Promise<string[]> {
  const table = await HudiTable.open(new LocalStorage(path));
  return canonicalRows((await readSnapshot(table, { includeMetaFields: true, queryType })).rows);
}

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our clean and archive on a merge-on-read table Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-mor-clean-`);
    const source = join(root, 'source');
    const rowsBefore: Record<'snapshot' | 'read_optimized', string[]> = { snapshot: [], read_optimized: [] };
    const write = (path: string, ids: number[], at: number, extra: Record<string, string> = {}) => hudi1xMorWrite(hudi, path, 'source', ids, at, extra);
    const sparkRows = async (path: string, queryType: 'snapshot' | 'read_optimized', metadata: 'true' | 'false') =>
      canonicalRows((await hudi.read(path, { options: { 'hoodie.metadata.enable': metadata, 'hoodie.datasource.query.type': queryType } })).rows);

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      await hudi1xHoursAgo(hudi, 3, async () => {
        await write(source, [1, 2, 3, 4, 5, 6], 1);
        await write(source, [2, 3], 2);
        await write(source, [4], 3, { 'hoodie.datasource.write.operation': 'delete' });
        await write(source, [1, 5], 4);
        await hudi.sql(`CALL run_compaction(op => 'scheduleAndExecute', path => '${source}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
      });
      await write(source, [6, 2], 5);
      await write(source, [3], 6);
      await write(source, [1, 5], 7);
      await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${source}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
      // Logs written while the compaction is pending join its slice (by completion time). A batch write to a
      // merge-on-read table runs pending compactions inline unless async compaction is on (DataSourceUtils).
      await write(source, [2, 5], 8, { 'hoodie.datasource.compaction.async.enable': 'true' });
      const properties = readFileSync(join(source, '.hoodie', 'hoodie.properties'), 'utf8');
      assert.equal(properties.match(/^hoodie\.table\.version=(\d+)$/m)?.[1], String(tableVersion));
      assert.equal(properties.match(/^hoodie\.table\.type=(\w+)$/m)?.[1], 'MERGE_ON_READ');
      assert.equal(timelineFiles(source, /\.compaction\.requested$/).length, 2, 'two compactions');
      assert.equal(timelineFiles(source, /^\d{17}_\d{17}\.commit$/).length, 1, 'the second compaction is pending');
      assert.ok(
        dataFilesUnder(source).some((path) => path.includes('.log.')),
        'the table has log files',
      );
      for (const queryType of ['snapshot', 'read_optimized'] as const) rowsBefore[queryType] = await sparkRows(source, queryType, 'true');
    });

    after(async () => {
      await hudi?.close();
    });

    for (const cleanCase of CASES) {
      it(`${cleanCase.name}: Spark and we delete the same files with the same plan, and the metadata tables agree`, async () => {
        const theirs = join(root, `theirs_${cleanCase.name}`);
        const mine = join(root, `mine_${cleanCase.name}`);
        cpSync(source, theirs, { recursive: true });
        cpSync(source, mine, { recursive: true });
        const table = `theirs_${cleanCase.name.toLowerCase()}`;
        await hudi.sql(`CREATE TABLE ${table} USING hudi LOCATION '${theirs}'`);
        await hudi.sql(`CALL run_clean(table => '${table}', ${cleanCase.call})`);
        const result = await ourClean(mine, cleanCase.props);
        assert.equal(result.outcome, 'cleaned');
        assert.ok(result.clean?.metadataTable.deltaCommit1x !== undefined, 'the clean has its metadata deltacommit');
        assert.deepEqual(dataFilesUnder(mine), dataFilesUnder(theirs));
        const deleted = dataFilesUnder(source).filter((path) => !dataFilesUnder(mine).includes(path));
        assert.ok(
          deleted.some((path) => path.includes('.log.')),
          `the clean deleted log files with their slices: ${deleted.join(', ')}`,
        );

        const [theirPlanFile, myPlanFile] = [timelineFiles(theirs, /\.clean\.requested$/), timelineFiles(mine, /\.clean\.requested$/)];
        assert.equal(theirPlanFile.length, 1);
        assert.equal(myPlanFile.length, 1);
        const [theirPlan, myPlan] = [readAvro(theirs, theirPlanFile[0]!, 'cleanerPlan'), readAvro(mine, myPlanFile[0]!, 'cleanerPlan')];
        assert.deepEqual(myPlan.earliestInstantToRetain, theirPlan.earliestInstantToRetain);
        assert.equal(myPlan.lastCompletedCommitTimestamp, theirPlan.lastCompletedCommitTimestamp);
        assert.equal(myPlan.policy, theirPlan.policy);
        if (cleanCase.name === 'KEEP_LATEST_BY_HOURS') {
          const [compaction] = timelineFiles(source, /^\d{17}_\d{17}\.commit$/);
          const firstRecent = timelineFiles(source, /^\d{17}_\d{17}\.deltacommit$/).find((name) => name > compaction!);
          assert.equal(theirPlan.earliestInstantToRetain?.timestamp, firstRecent?.slice(0, 17), 'the first delta commit after the old compaction');
        }
        assert.deepEqual(cleanerPlanFiles(myPlan), cleanerPlanFiles(theirPlan));
        assert.deepEqual(myPlan.partitionsToBeDeleted, theirPlan.partitionsToBeDeleted);

        const [theirDone, myDone] = [timelineFiles(theirs, /^\d{17}_\d{17}\.clean$/), timelineFiles(mine, /^\d{17}_\d{17}\.clean$/)];
        assert.equal(myDone.length, 1);
        const [theirMetadata, myMetadata] = [readAvro(theirs, theirDone[0]!, 'cleanMetadata'), readAvro(mine, myDone[0]!, 'cleanMetadata')];
        assert.deepEqual(deletedFiles(myMetadata), deletedFiles(theirMetadata));
        assert.equal(myMetadata.earliestCommitToRetain, theirMetadata.earliestCommitToRetain);

        for (const queryType of ['snapshot', 'read_optimized'] as const) {
          for (const metadata of ['true', 'false'] as const) {
            assert.deepEqual(await sparkRows(mine, queryType, metadata), rowsBefore[queryType], `Spark ${queryType}, metadata table ${metadata}`);
          }
          assert.deepEqual(await ourRows(mine, queryType), rowsBefore[queryType], `our ${queryType}`);
        }
        const ours = await assertMetadata1xValidated(hudi, mine, `our clean ${result.clean?.instantTime}`);
        // The copies' clean instants differ; the files and column stats they leave do not.
        const records = (list: Awaited<ReturnType<typeof metadata1xRecords>>) =>
          list.map((record) => JSON.stringify(comparableMetadataRow(sparkMetadataRow(record)))).sort();
        assert.deepEqual(records(ours), records(await metadata1xRecords(theirs)), 'the metadata tables after our clean and after Hudi’s');
      });
    }

    it('archives the delta commits Hudi archives (the compaction trigger keeps those after the compaction), with the metadata table kept and dropped', async () => {
      // Kept: ours and Hudi's archiver, each on a copy, leave the same active timeline and history.
      const keptMine = join(root, 'archive_kept_mine');
      const keptTheirs = join(root, 'archive_kept_theirs');
      cpSync(source, keptMine, { recursive: true });
      cpSync(source, keptTheirs, { recursive: true });
      await hudi.sql(`CALL archive_commits(path => '${keptTheirs}', ${ARCHIVE_CALL.replace('enable_metadata => false', 'enable_metadata => true')})`);
      await ourArchive(keptMine, { ...ARCHIVE, 'hoodie.metadata.enable': 'true' });
      assert.deepEqual(activeTimeline(keptMine), activeTimeline(keptTheirs), 'the same active timeline with the metadata table kept');
      assert.deepEqual(await hudiArchivedInstants(hudi, keptMine), await hudiArchivedInstants(hudi, keptTheirs));
      assert.ok(existsSync(join(keptMine, '.hoodie', 'metadata', 'files')), 'the metadata table is kept');
      assert.deepEqual(await sparkRows(keptMine, 'snapshot', 'true'), rowsBefore.snapshot);

      // Dropped (hoodie.metadata.enable=false): the compaction trigger is what bounds it.
      const mine = join(root, 'archive_mine');
      const theirs = join(root, 'archive_theirs');
      cpSync(source, mine, { recursive: true });
      cpSync(source, theirs, { recursive: true });
      await hudi.sql(`CALL archive_commits(path => '${theirs}', ${ARCHIVE_CALL})`);
      const result = await ourArchive(mine, ARCHIVE);
      assert.equal(result.outcome, 'archived');
      assert.ok(!existsSync(join(mine, '.hoodie', 'metadata')), 'the metadata table was dropped first');
      const theirHistory = await hudiArchivedInstants(hudi, theirs);
      assert.ok(
        theirHistory.some((instant) => instant.action === 'deltacommit'),
        `Hudi archived ${theirHistory.map((i) => i.action).join(', ')}`,
      );
      assert.ok(
        result.plan.bounds.some((bound) => bound.rule === 'compaction-trigger'),
        `the compaction trigger bounds the archive: ${result.plan.bounds.map((b) => b.rule).join(', ')}`,
      );
      assert.deepEqual(
        result.plan.instants.map((instant) => `${instant.time} ${instant.action}`),
        theirHistory.map((instant) => `${instant.requestedTime} ${instant.action}`),
      );
      assert.deepEqual(await hudiArchivedInstants(hudi, mine), theirHistory, 'Hudi lists the same archived instants in both copies');
      assert.deepEqual(await ourHistory(mine), await ourHistory(theirs), 'the same rows and plan bytes');
      assert.deepEqual(activeTimeline(mine), activeTimeline(theirs));
      for (const queryType of ['snapshot', 'read_optimized'] as const) {
        assert.deepEqual(await sparkRows(mine, queryType, 'false'), rowsBefore[queryType], `Spark ${queryType}`);
        assert.deepEqual(await ourRows(mine, queryType), rowsBefore[queryType], `our ${queryType}`);
      }

      // Spark writes on, compacts and archives on top of our history (its automatic archiver, the compaction archived).
      const options = { 'hoodie.metadata.enable': 'false', 'hoodie.archive.automatic': 'true', 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3' };
      await hudi.sql(`CALL run_compaction(op => 'run', path => '${mine}', options => 'hoodie.metadata.enable=false')`);
      for (const at of [9, 10, 11, 12, 13, 14])
        await write(mine, [at - 8, at - 6], at, { ...options, 'hoodie.clean.automatic': 'true', 'hoodie.cleaner.commits.retained': '1' });
      const after = await hudiArchivedInstants(hudi, mine);
      assert.deepEqual(after.slice(0, theirHistory.length), theirHistory, 'our archived instants stay');
      assert.ok(
        after.some((instant) => instant.action === 'commit'),
        `Hudi archived a compaction after ours: ${after.map((i) => i.action).join(', ')}`,
      );
      const spark = await sparkRows(mine, 'snapshot', 'false');
      assert.deepEqual(await ourRows(mine, 'snapshot'), spark);
      assert.ok(spark.some((row) => row.includes('"v14-')));
    });

    it('Spark keeps writing after our clean: upserts with its automatic cleaner, the pending compaction run', async () => {
      const mine = join(root, 'mine_then_spark');
      cpSync(source, mine, { recursive: true });
      assert.equal((await ourClean(mine, CASES[0]!.props)).outcome, 'cleaned');
      const ourCleanFile = timelineFiles(mine, /^\d{17}_\d{17}\.clean$/);
      await write(mine, [3, 6], 9, {
        'hoodie.clean.automatic': 'true',
        'hoodie.cleaner.commits.retained': '1',
        'hoodie.datasource.compaction.async.enable': 'true',
      });
      await hudi.sql(`CALL run_compaction(op => 'run', path => '${mine}')`);
      assert.equal(timelineFiles(mine, /^\d{17}_\d{17}\.commit$/).length, 2, 'Spark ran the compaction pending on our clean');
      await write(mine, [1, 4], 10, { 'hoodie.clean.automatic': 'true', 'hoodie.cleaner.commits.retained': '1' });
      const cleans = timelineFiles(mine, /^\d{17}_\d{17}\.clean$/);
      assert.ok(cleans.length >= 2 && cleans.includes(ourCleanFile[0]!), `Spark's automatic cleans completed after ours: ${cleans.join(', ')}`);
      for (const queryType of ['snapshot', 'read_optimized'] as const) {
        assert.deepEqual(await ourRows(mine, queryType), await sparkRows(mine, queryType, 'true'), queryType);
      }
      assert.ok((await ourRows(mine, 'snapshot')).some((row) => row.includes('"v10-4"')));
      await assertMetadata1xValidated(hudi, mine, 'after Spark wrote on top of our clean');
    });
  });
}
