/**
 * Time travel older than the active timeline on tables Hudi 1.0.2 (table version 8) and 1.1.1 (version 9) write,
 * judged by that release on Spark 3.5 (one JVM per release). Spark writes four commits into a copy-on-write table
 * and four delta commits (compacted inline every second) into a merge-on-read one, archiver on, cleaner off: its
 * first instants go to the LSM history while their files stay. As of each archived instant (and before the first)
 * we read what Spark reads, snapshot and read-optimized, through the library and the CLI; an archived delta
 * commit's log joins the slice before the compaction by the completion time the history holds. After Spark's clean
 * retaining one commit, Spark refuses every as-of read before its earliest commit to retain (archived or active),
 * and so do we (TimeTravelError); as of that commit we read the same rows. Once four more commits archive the clean
 * too, Spark no longer checks, and reads of the cleaned past what files are left (nothing, as of the first write).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { QueryType } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { historyFolder, readTimelineHistory } from '../../lib/timeline/history/index.js';
import { type AsOfAnswer, ourAsOf, sparkAsOf } from '../helpers/as-of.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { canonicalRow, canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS, hudi1xCowWrite, hudi1xMorWrite } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';

/** Spark archives after its fourth commit down to two (keep.max 3, keep.min 2); nothing is cleaned meanwhile. */
const ARCHIVING = {
  'hoodie.metadata.enable': 'false',
  'hoodie.archive.automatic': 'true',
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
  'hoodie.clean.commits.retained': '1',
  'hoodie.clean.automatic': 'false',
};
/**
 * Merge-on-read: compacted inline after every second delta commit, so a file group has a slice per compaction and
 * the log of an archived delta commit joins the older slice only by the completion time the history holds.
 */
const COMPACTING = { ...ARCHIVING, 'hoodie.compact.inline': 'true', 'hoodie.compact.inline.max.delta.commits': '2' };
const WRITES: readonly (readonly number[])[] = [
  [1, 2, 3, 4, 5, 6],
  [1, 2],
  [3, 4],
  [1, 6],
];
/** Before any write: an instant time no table here has reached. */
const BEFORE_ALL = '20000101000000000';

for (const version of HUDI_1X_VERSIONS) {
  describe(`as-of reads older than the active timeline, Hudi ${version}`, { timeout: 1_800_000 }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-as-of-history-`);
    const cow = join(root, 'cow');
    const mor = join(root, 'mor');
    const archived = new Map<string, string[]>();

    const spark = (path: string, asOf: string, queryType?: QueryType): Promise<AsOfAnswer> => sparkAsOf(hudi, path, asOf, queryType);
    const ours = ourAsOf;

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      for (const [index, ids] of WRITES.entries()) {
        await hudi1xCowWrite(hudi, cow, 'asof_cow', [...ids], index + 1, ARCHIVING);
        await hudi1xMorWrite(hudi, mor, 'asof_mor', [...ids], index + 1, COMPACTING);
      }
      for (const path of [cow, mor]) {
        const history = await readTimelineHistory(openStorage(path), historyFolder());
        archived.set(
          path,
          history.instants.map((instant) => instant.requestedTime),
        );
      }
    });
    after(async () => {
      await hudi?.close();
    });

    it('reads as of archived commits and delta commits what Spark reads, through the library and the CLI', async () => {
      for (const [path, kind] of [
        [cow, 'commit'],
        [mor, 'deltacommit'],
      ] as const) {
        const table = await HudiTable.open(openStorage(path));
        const times = archived.get(path)!;
        assert.equal(times.length, 2, `Hudi ${version} archived the first two ${kind}s of ${path}`);
        assert.ok(
          times.every((time) => time < table.timeline.instants[0]!.time),
          'both are older than the active timeline',
        );
        for (const asOf of [...times, BEFORE_ALL]) {
          for (const queryType of path === mor ? (['snapshot', 'read_optimized'] as const) : [undefined]) {
            const theirs = await spark(path, asOf, queryType);
            assert.ok(Array.isArray(theirs), `Spark reads ${path} as of ${asOf}: ${JSON.stringify(theirs)}`);
            assert.deepEqual(await ours(path, asOf, queryType), theirs, `${path} as of ${asOf} ${queryType ?? ''}`);
          }
        }
        const [first, second] = times;
        assert.equal(((await spark(path, first!)) as string[]).length, 6, 'as of the insert: its six rows');
        assert.notDeepEqual(await spark(path, second!), await spark(path, first!), 'the second write changed rows');
        // The CLI's read (no meta columns) agrees with Spark's rows less theirs.
        const cli = runCli(['read', path, '--as-of', second!]);
        assert.equal(cli.code, 0, cli.stderr);
        const sparkRows = (await hudi.read(path, { options: { 'hoodie.metadata.enable': 'false', 'as.of.instant': second! }, meta: false })).rows;
        assert.deepEqual(jsonLines(cli.stdout).map(canonicalRow).sort(), canonicalRows(sparkRows));
      }
      // As of the second delta commit, its log merged into the first slice (not the compaction's): its names are there.
      const rows = (await ours(mor, archived.get(mor)![1]!)) as string[];
      assert.ok(rows.some((row) => row.includes('"v2-1"')) && rows.some((row) => row.includes('"v2-2"')), rows.join('\n'));
      const readOptimized = (await ours(mor, archived.get(mor)![1]!, 'read_optimized')) as string[];
      assert.ok(!readOptimized.some((row) => row.includes('"v2-')), readOptimized.join('\n'));
    });

    it('after Spark’s clean, refuses as Spark refuses as-of reads before the earliest commit it retained', async () => {
      await hudi.sql(`CREATE TABLE asof_cow USING hudi LOCATION '${cow}'`);
      await hudi.sql("CALL run_clean(table => 'asof_cow', retain_commits => 1, options => 'hoodie.metadata.enable=false')");
      const table = await HudiTable.open(openStorage(cow));
      const active = table.timeline.completedWrites().map((instant) => instant.time);
      assert.equal(active.length, 2);
      const [older, retained] = active;
      for (const asOf of [...archived.get(cow)!, older!]) {
        const theirs = await spark(cow, asOf);
        assert.ok(
          !Array.isArray(theirs) && theirs.refused.includes('Cleaner cleaned up the timestamp of interest'),
          `Spark refuses ${asOf}: ${JSON.stringify(theirs)}`,
        );
        const mine = await ours(cow, asOf);
        assert.ok(
          !Array.isArray(mine) && mine.refused.includes(`the earliest commit the newest clean`) && mine.refused.includes(retained!),
          JSON.stringify(mine),
        );
      }
      const theirs = await spark(cow, retained!);
      assert.ok(Array.isArray(theirs) && theirs.length === 6);
      assert.deepEqual(await ours(cow, retained!), theirs);
      const cli = runCli(['read', cow, '--as-of', archived.get(cow)![0]!]);
      assert.notEqual(cli.code, 0);
      assert.match(cli.stderr, /the earliest commit the newest clean \(\d+\) retained/);
    });

    it('once the clean is archived too, reads what Spark reads of the files the clean left, even nothing', async () => {
      for (const [index, ids] of [[5], [2], [3], [4]].entries()) await hudi1xCowWrite(hudi, cow, 'asof_cow', ids, index + 5, ARCHIVING);
      const table = await HudiTable.open(openStorage(cow));
      assert.ok(!table.timeline.instants.some((instant) => instant.action === 'clean'), 'no clean left on the active timeline');
      const history = await readTimelineHistory(openStorage(cow), historyFolder());
      assert.ok(
        history.instants.some((instant) => instant.action === 'clean'),
        'Spark archived its clean',
      );
      const writes = history.instants.filter((instant) => instant.action === 'commit').map((instant) => instant.requestedTime);
      const answers = new Map<string, AsOfAnswer>();
      for (const asOf of writes) {
        const theirs = await spark(cow, asOf);
        assert.ok(Array.isArray(theirs), `Spark reads ${asOf}: ${JSON.stringify(theirs)}`);
        assert.deepEqual(await ours(cow, asOf), theirs, `as of ${asOf}`);
        answers.set(asOf, theirs);
      }
      // The clean deleted the first writes' file versions: as of them Spark finds no slice, and reads no rows.
      assert.deepEqual(answers.get(writes[0]!), []);
      assert.equal((answers.get(writes[2]!) as string[]).length, 6, 'as of the version the clean kept: every row');
    });
  });
}
