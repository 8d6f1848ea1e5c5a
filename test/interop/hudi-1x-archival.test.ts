/**
 * Our archiver on copy-on-write tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, judged by
 * that release on Spark 3.5.1 (one JVM per release). Spark writes commits, a clustering and a clean with the metadata
 * table off and its own archiver and cleaner off; the table is copied, and the same archival settings (keep.min 2,
 * keep.max 3, one commit retained by the cleaner) run once through Hudi's archiver (`CALL archive_commits`) and once
 * through ours. Then both histories list the same archived instants, through Hudi and through us, with the same
 * metadata and plan bytes in a level-0 file of the same name; the same active timeline files are left; Spark reads
 * the same rows; Spark keeps writing with its automatic archiver on top of our history. Our archiver stopped after
 * its history write, or midway through its deletes, leaves a table Hudi and we read, and its next run ends where
 * Hudi's ended. A table with the metadata table on (1.x's default) and no compaction on it is not archived, as by Hudi.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ArchiveResult } from '../../lib/archival/archive.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS, hudi1xCowWrite } from '../helpers/hudi-1x-fixtures.js';
import { activeTimeline, hudiArchivedInstants, ourArchive, ourHistory, SPARK_SERVICES_EVERY_COMMIT } from '../helpers/hudi-1x-history.js';
import { tableFiles, tempDir } from '../helpers/paths.js';
import { ourCanonicalRows } from '../helpers/table-files.js';

const NO_MDT = 'hoodie.metadata.enable=false';
const OURS = { 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3', 'hoodie.cleaner.commits.retained': '1' };
const THEIRS = 'min_commits => 2, max_commits => 3, retain_commits => 1, enable_metadata => false';

/** A local disk whose deletes of completed instant files fail after `allowed` of them: a run stopped midway. */
class StoppingStorage extends LocalStorage {
  private completedDeletes = 0;
  constructor(
    root: string,
    private readonly allowed: number,
  ) {
    super(root);
  }
  override async delete(paths: readonly string[]): Promise<void> {
    if (paths.some((path) => /\/\d+_\d+\.(commit|replacecommit|clean|rollback)$/.test(path))) {
      this.completedDeletes++;
      if (this.completedDeletes > this.allowed) throw new Error('stopped: the Lambda ran out of time');
    }
    return super.delete(paths);
  }
  override async deleteMany(paths: readonly string[], options?: Parameters<LocalStorage['deleteMany']>[1]) {
    if (this.allowed < 0) throw new Error('stopped: the Lambda ran out of time');
    return super.deleteMany(paths, options);
  }
}

const ours = (path: string, props: Record<string, string> = OURS, storage?: LocalStorage): Promise<ArchiveResult> => ourArchive(path, props, storage);

const ourRows = (path: string): Promise<string[]> => ourCanonicalRows(path);

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our archive of a copy-on-write table Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-archive-`);
    const source = join(root, 'source');
    const theirs = join(root, 'theirs');
    let rowsBefore: string[];
    const sparkRows = async (path: string, options: Record<string, string> = {}) =>
      canonicalRows((await hudi.read(path, { options: { 'hoodie.metadata.enable': 'false', ...options } })).rows);
    const write = (path: string, name: string, ids: number[], at: number, extra: Record<string, string> = {}) =>
      hudi1xCowWrite(hudi, path, name, ids, at, extra);

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      await hudi.sql(`SET ${NO_MDT}`);
      const off = { 'hoodie.metadata.enable': 'false' };
      // Commits 1-3, a clustering, commit 4, a clean keeping one commit (its replaced files go), commits 5-8.
      await write(source, 'source', [1, 2, 3, 4, 5, 6], 1, off);
      await write(source, 'source', [1, 2], 2, off);
      await write(source, 'source', [3, 4], 3, off);
      await hudi.sql(`CREATE TABLE source USING hudi LOCATION '${source}'`);
      await hudi.sql(`CALL run_clustering(table => 'source', op => 'scheduleAndExecute', options => '${NO_MDT}')`);
      await write(source, 'source', [1, 5], 4, off);
      await hudi.sql(`CALL run_clean(table => 'source', retain_commits => 1, options => '${NO_MDT}')`);
      for (const at of [5, 6, 7, 8]) await write(source, 'source', [at - 4, at - 2], at, off);
      assert.equal(readFileSync(join(source, '.hoodie', 'hoodie.properties'), 'utf8').match(/^hoodie\.table\.version=(\d+)$/m)?.[1], String(tableVersion));
      assert.ok(!existsSync(join(source, '.hoodie', 'metadata')), 'no metadata table');
      rowsBefore = await sparkRows(source);

      cpSync(source, theirs, { recursive: true });
      await hudi.sql(`CALL archive_commits(path => '${theirs}', ${THEIRS})`);
    });

    after(async () => {
      await hudi?.close();
    });

    it(`archives the instants Hudi ${version}'s archiver archives, into the same history, leaving the same active timeline`, async (t) => {
      const mine = join(root, 'mine');
      cpSync(source, mine, { recursive: true });
      const result = await ours(mine);
      assert.equal(result.outcome, 'archived');

      const theirHistory = await hudiArchivedInstants(hudi, theirs);
      const actions = theirHistory.map((instant) => instant.action);
      assert.ok(actions.includes('replacecommit') && actions.includes('clean') && actions.includes('commit'), `Hudi archived ${actions.join(', ')}`);
      assert.deepEqual(await hudiArchivedInstants(hudi, mine), theirHistory, 'Hudi lists the same archived instants in both copies');
      assert.deepEqual(await ourHistory(mine), await ourHistory(theirs), 'the same level-0 file, rows and plan bytes');
      assert.deepEqual(
        result.plan.instants.map((instant) => `${instant.time} ${instant.action}`),
        theirHistory.map((instant) => `${instant.requestedTime} ${instant.action}`),
      );
      assert.deepEqual(activeTimeline(mine), activeTimeline(theirs));
      assert.ok(activeTimeline(mine).length < activeTimeline(source).length, 'instant files left the active timeline');

      for (const path of [mine, theirs]) {
        assert.deepEqual(await sparkRows(path), rowsBefore, path);
        assert.deepEqual(await ourRows(path), rowsBefore, path);
      }
      // Time travel to the last archived commit: whatever Hudi answers on its own copy, it answers on ours.
      const asOf = theirHistory.filter((instant) => instant.action === 'commit').at(-1)!.requestedTime;
      const travel = async (path: string) => sparkRows(path, { 'as.of.instant': asOf }).catch((error: Error) => `refused: ${error.message.split('\n')[0]}`);
      const travelled = await travel(mine);
      assert.deepEqual(travelled, await travel(theirs));
      t.diagnostic(`time travel to the archived ${asOf}: ${typeof travelled === 'string' ? travelled : `${travelled.length} rows`}`);

      assert.equal((await ours(mine)).outcome, 'nothing-to-archive', 'a second run finds nothing left to archive');
    });

    it('Spark keeps writing and archiving on top of our history, and Hudi and we read the same', async () => {
      const mine = join(root, 'mine_then_spark');
      cpSync(source, mine, { recursive: true });
      assert.equal((await ours(mine)).outcome, 'archived');
      const ourArchived = await hudiArchivedInstants(hudi, mine);
      for (const at of [9, 10, 11, 12]) {
        await write(mine, 'source', [at - 8, at - 6], at, {
          'hoodie.metadata.enable': 'false',
          ...SPARK_SERVICES_EVERY_COMMIT,
        });
      }
      const after = await hudiArchivedInstants(hudi, mine);
      assert.deepEqual(after.slice(0, ourArchived.length), ourArchived, 'our archived instants stay');
      assert.ok(after.length > ourArchived.length, `Hudi ${version} archived more instants after ours`);
      const history = await ourHistory(mine);
      assert.deepEqual(
        history.instants.map(({ requestedTime, completionTime, action, metadata }) => ({
          requestedTime,
          completionTime,
          action,
          state: 'COMPLETED',
          metadata,
        })),
        after,
      );
      assert.ok(history.files.length >= 2, `Hudi added its own level-0 file: ${history.files.join(', ')}`);
      const spark = await sparkRows(mine);
      assert.deepEqual(await ourRows(mine), spark);
      assert.ok(spark.some((row) => row.includes('"v12-')));
    });

    for (const [stop, allowed] of [
      ['after its history write, before any delete', -1],
      ['midway through its deletes of completed instants', 2],
    ] as const) {
      it(`stopped ${stop}, leaves a table Hudi and we read; the next run ends where Hudi's archiver ended`, async () => {
        const mine = join(root, `stopped_${allowed}`);
        cpSync(source, mine, { recursive: true });
        await assert.rejects(ours(mine, OURS, new StoppingStorage(mine, allowed)), /stopped/);
        assert.ok((await ourHistory(mine)).instants.length > 0, 'the history was written');
        assert.ok(activeTimeline(mine).length > activeTimeline(theirs).length, 'some archived instants are still active');
        assert.deepEqual(await sparkRows(mine), rowsBefore);
        assert.deepEqual(await ourRows(mine), rowsBefore);
        assert.deepEqual(await hudiArchivedInstants(hudi, mine), await hudiArchivedInstants(hudi, theirs), 'Hudi lists the archived instants already');

        const retried = await ours(mine);
        assert.ok(retried.finishedInterrupted.length > 0, 'the retry deleted the leftover files first');
        assert.equal(retried.outcome, 'nothing-to-archive');
        assert.deepEqual(activeTimeline(mine), activeTimeline(theirs));
        assert.deepEqual(await ourHistory(mine), await ourHistory(theirs));
        assert.deepEqual(await sparkRows(mine), rowsBefore);
      });
    }

    it('with the metadata table on archives nothing before its first compaction, as Hudi; with hoodie.metadata.enable=false drops it and archives', async () => {
      const withMetadata = join(root, 'with_mdt');
      for (const at of [1, 2, 3, 4, 5]) await write(withMetadata, 'with_mdt', [at, at + 1], at);
      assert.ok(existsSync(join(withMetadata, '.hoodie', 'metadata', 'files')), 'Spark wrote the metadata table');
      const hudiCopy = join(root, 'with_mdt_hudi');
      cpSync(withMetadata, hudiCopy, { recursive: true });
      await hudi.sql(`CALL archive_commits(path => '${hudiCopy}', ${THEIRS.replace('enable_metadata => false', 'enable_metadata => true')})`);
      const before = tableFiles(withMetadata);
      assert.equal((await ours(withMetadata)).outcome, 'nothing-to-archive');
      assert.deepEqual(tableFiles(withMetadata), before, 'nothing written');
      assert.deepEqual(activeTimeline(hudiCopy), activeTimeline(withMetadata), "Hudi's archiver archived nothing either");

      const rows = canonicalRows((await hudi.read(withMetadata)).rows);
      const result = await ours(withMetadata, { ...OURS, 'hoodie.metadata.enable': 'false' });
      assert.equal(result.outcome, 'archived');
      assert.ok(!existsSync(join(withMetadata, '.hoodie', 'metadata')), 'the metadata table is gone');
      assert.deepEqual(await sparkRows(withMetadata), rows);
      assert.deepEqual(
        (await hudiArchivedInstants(hudi, withMetadata)).map((instant) => instant.requestedTime),
        result.plan.instants.map((instant) => instant.time),
      );
    });
  });
}
