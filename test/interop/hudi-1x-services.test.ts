/**
 * Our services on tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, judged by that release on
 * Spark 3.5.1 (one JVM per release). Cleaning a copy-on-write table: Spark writes inserts, upserts and a clustering
 * with the metadata table off and its own cleaner off; the table is copied, and the same policy runs once through
 * Spark (`CALL run_clean`) and once through us. Then the same files remain, the plans and clean metadata agree, our
 * instant files are layout 2's (completion time in the name), Spark reads the same rows and keeps writing with its
 * automatic cleaner planning from our clean. On a table with the metadata table on (1.x's default), our clean keeps
 * it (test/interop/hudi-1x-metadata-writes.test.ts judges it further); with hoodie.metadata.enable=false it drops
 * the metadata table first, as a Hudi writer with that setting does, and Spark rebuilds it on its next write.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { type CleanResult, runClean } from '../../lib/cleaning/clean.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, type HoodieCleanMetadata } from '../../lib/timeline/avro-files.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS, hudi1xCowWrite } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';
import { baseFilesUnder, cleanerPlanFiles, ourCanonicalRows } from '../helpers/table-files.js';

const NO_MDT = 'hoodie.metadata.enable=false';
const RETAIN = { 'hoodie.clean.policy': 'KEEP_LATEST_COMMITS', 'hoodie.cleaner.commits.retained': '2' };

/** The clean files of the layout-2 timeline folder, by suffix. */
function cleanFiles(table: string, suffix: '.clean.requested' | '.clean.inflight' | '.clean'): string[] {
  return readdirSync(join(table, '.hoodie', 'timeline'))
    .filter((name) => name.endsWith(suffix))
    .sort();
}

function metadataFiles(metadata: HoodieCleanMetadata): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(metadata.partitionMetadata)
      .map(([p, m]) => [p, [...m.successDeleteFiles].sort()])
      .sort(([a], [b]) => (a! < b! ? -1 : 1)),
  );
}

function readAvro<K extends 'cleanerPlan' | 'cleanMetadata'>(table: string, name: string, kind: K) {
  const path = join(table, '.hoodie', 'timeline', name);
  return decodeTimelineAvro(kind, readFileSync(path), path);
}

async function ours(path: string, props: Record<string, string>): Promise<CleanResult> {
  const storage = new LocalStorage(path);
  return runClean(await HudiTable.open(storage), {
    config: cleanConfigFromProperties(new Map(Object.entries(props))),
    lock: new StorageLockProvider(storage),
    properties: new Map(Object.entries(props)),
  });
}

const ourRows = (path: string): Promise<string[]> => ourCanonicalRows(path);

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our clean on a copy-on-write table Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-clean-`);
    const source = join(root, 'source');
    const withMetadata = join(root, 'with_mdt');
    let rowsBefore: string[];
    const write = (path: string, name: string, ids: number[], at: number, extra: Record<string, string> = {}) =>
      hudi1xCowWrite(hudi, path, name, ids, at, extra);

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      // Procedures build their write client from the session's hoodie.* settings: keep the metadata table off.
      await hudi.sql(`SET ${NO_MDT}`);
      const off = { 'hoodie.metadata.enable': 'false' };
      await write(source, 'source', [1, 2, 3, 4, 5, 6], 1, off);
      await write(source, 'source', [1, 2], 2, off);
      await write(source, 'source', [3, 4], 3, off);
      await hudi.sql(`CREATE TABLE source USING hudi LOCATION '${source}'`);
      await hudi.sql(`CALL run_clustering(table => 'source', op => 'scheduleAndExecute', options => '${NO_MDT}')`);
      await write(source, 'source', [1, 5], 4, off);
      await write(source, 'source', [2, 6], 5, off);
      assert.equal(readFileSync(join(source, '.hoodie', 'hoodie.properties'), 'utf8').match(/^hoodie\.table\.version=(\d+)$/m)?.[1], String(tableVersion));
      assert.ok(!existsSync(join(source, '.hoodie', 'metadata')), 'no metadata table');
      rowsBefore = canonicalRows((await hudi.read(source, { options: { 'hoodie.metadata.enable': 'false' } })).rows);

      // The same writes with Hudi's defaults: the metadata table on.
      await write(withMetadata, 'with_mdt', [1, 2, 3, 4], 1);
      await write(withMetadata, 'with_mdt', [1, 2], 2);
      await write(withMetadata, 'with_mdt', [1, 3], 3);
      await write(withMetadata, 'with_mdt', [2, 4], 4);
    });

    after(async () => {
      await hudi?.close();
    });

    it('Spark and we delete the same files, with the same plan and clean metadata', async () => {
      const theirs = join(root, 'theirs');
      const mine = join(root, 'mine');
      cpSync(source, theirs, { recursive: true });
      cpSync(source, mine, { recursive: true });
      await hudi.sql(`CREATE TABLE theirs USING hudi LOCATION '${theirs}'`);
      await hudi.sql(`CALL run_clean(table => 'theirs', retain_commits => 2, options => '${NO_MDT}')`);
      const result = await ours(mine, RETAIN);
      assert.equal(result.outcome, 'cleaned');
      assert.deepEqual(baseFilesUnder(mine), baseFilesUnder(theirs));
      assert.ok(baseFilesUnder(mine).length < baseFilesUnder(source).length, 'the clean deleted files');

      const [theirPlanFile, myPlanFile] = [cleanFiles(theirs, '.clean.requested'), cleanFiles(mine, '.clean.requested')];
      assert.equal(theirPlanFile.length, 1);
      assert.equal(myPlanFile.length, 1);
      const [theirPlan, myPlan] = [readAvro(theirs, theirPlanFile[0]!, 'cleanerPlan'), readAvro(mine, myPlanFile[0]!, 'cleanerPlan')];
      assert.equal(myPlan.earliestInstantToRetain?.timestamp, theirPlan.earliestInstantToRetain?.timestamp);
      assert.equal(myPlan.lastCompletedCommitTimestamp, theirPlan.lastCompletedCommitTimestamp);
      assert.equal(myPlan.policy, theirPlan.policy);
      assert.deepEqual(cleanerPlanFiles(myPlan), cleanerPlanFiles(theirPlan));

      const [theirDone, myDone] = [cleanFiles(theirs, '.clean'), cleanFiles(mine, '.clean')];
      assert.equal(myDone.length, 1);
      // Layout 2: the completed clean is <requested>_<completion>.clean, completed after it was requested.
      const named = /^(\d{17})_(\d{17})\.clean$/.exec(myDone[0]!);
      assert.ok(named !== null, myDone[0]);
      assert.equal(named[1], result.clean?.instantTime);
      assert.ok(named[2]! > named[1]!, 'completion after request');
      assert.match(theirDone[0]!, /^\d{17}_\d{17}\.clean$/);
      const [theirMetadata, myMetadata] = [readAvro(theirs, theirDone[0]!, 'cleanMetadata'), readAvro(mine, myDone[0]!, 'cleanMetadata')];
      assert.deepEqual(metadataFiles(myMetadata), metadataFiles(theirMetadata));
      assert.equal(myMetadata.earliestCommitToRetain, theirMetadata.earliestCommitToRetain);
      assert.equal(myMetadata.totalFilesDeleted, theirMetadata.totalFilesDeleted);

      // Readers: Spark reads the rows it read before the clean, from both copies, and so do we.
      for (const path of [mine, theirs]) {
        assert.deepEqual(canonicalRows((await hudi.read(path, { options: { 'hoodie.metadata.enable': 'false' } })).rows), rowsBefore, path);
        assert.deepEqual(await ourRows(path), rowsBefore, path);
      }
    });

    it('Spark keeps writing after our clean, its automatic cleaner planning from ours, and we read what it wrote', async () => {
      const mine = join(root, 'mine_then_spark');
      cpSync(source, mine, { recursive: true });
      assert.equal((await ours(mine, RETAIN)).outcome, 'cleaned');
      const ourClean = cleanFiles(mine, '.clean');
      await write(mine, 'source', [3, 4], 6, {
        'hoodie.metadata.enable': 'false',
        'hoodie.clean.automatic': 'true',
        'hoodie.cleaner.commits.retained': '1',
      });
      const cleans = cleanFiles(mine, '.clean');
      assert.equal(cleans.length, 2, `Spark's automatic clean completed after ours: ${cleans.join(', ')}`);
      assert.ok(cleans.includes(ourClean[0]!));
      // Hudi's incremental planning starts from our clean's earliest commit to retain.
      const sparkClean = cleans.find((name) => name !== ourClean[0])!;
      const sparkPlan = readAvro(mine, sparkClean.replace(/_\d+\.clean$/, '.clean.requested'), 'cleanerPlan');
      const ourMetadata = readAvro(mine, ourClean[0]!, 'cleanMetadata');
      assert.ok(sparkPlan.earliestInstantToRetain!.timestamp! > ourMetadata.earliestCommitToRetain, 'the retention window moved on');
      const spark = canonicalRows((await hudi.read(mine, { options: { 'hoodie.metadata.enable': 'false' } })).rows);
      assert.deepEqual(await ourRows(mine), spark);
      assert.ok(spark.some((row) => row.includes('"v6-3"')));
    });

    it('keeps the metadata table as it cleans; with hoodie.metadata.enable=false drops it and cleans', async () => {
      const rows = canonicalRows((await hudi.read(withMetadata)).rows);
      const kept = join(root, 'mdt_kept');
      cpSync(withMetadata, kept, { recursive: true });
      const cleaned = await ours(kept, { ...RETAIN, 'hoodie.cleaner.commits.retained': '1' });
      assert.equal(cleaned.outcome, 'cleaned');
      assert.ok(cleaned.clean?.metadataTable.deltaCommit1x !== undefined, 'the clean has its metadata deltacommit');
      for (const enable of ['true', 'false']) {
        assert.deepEqual(canonicalRows((await hudi.read(kept, { options: { 'hoodie.metadata.enable': enable } })).rows), rows, `metadata ${enable}`);
      }

      const mine = join(root, 'mdt_mine');
      cpSync(withMetadata, mine, { recursive: true });
      const result = await ours(mine, { ...RETAIN, 'hoodie.cleaner.commits.retained': '1', 'hoodie.metadata.enable': 'false' });
      assert.equal(result.outcome, 'cleaned');
      assert.equal(result.clean?.metadataTable.disabled?.deletedMetadataTable, true);
      assert.ok(!existsSync(join(mine, '.hoodie', 'metadata')), 'the metadata table is gone');
      assert.deepEqual(canonicalRows((await hudi.read(mine, { options: { 'hoodie.metadata.enable': 'false' } })).rows), rows);
      // Spark's next write with its defaults rebuilds the metadata table; its reads through it agree with ours.
      await write(mine, 'with_mdt', [1, 4], 5);
      assert.ok(existsSync(join(mine, '.hoodie', 'metadata', 'files')), 'Spark rebuilt the metadata table');
      const spark = canonicalRows((await hudi.read(mine, { options: { 'hoodie.metadata.enable': 'true' } })).rows);
      assert.deepEqual(await ourRows(mine), spark);
    });
  });
}
