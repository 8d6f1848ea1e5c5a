/**
 * As-of (time-travel) reads of a table version 6 table refused exactly where Hudi 0.15.0 refuses them
 * (TimelineUtils.validateTimestampAsOf, run by Spark's file index before it lists a file), judged by Hudi 0.15.0 on
 * Spark 3.5. Spark writes a partitioned copy-on-write table: an insert and three upserts, then its cleaner
 * (KEEP_LATEST_COMMITS retaining two), a scheduled clustering left pending, and an insert that fails pre-commit
 * validation and stays inflight. For each as-of time (every instant on the timeline, one before the first write, one
 * after the failed insert) our read's rows equal Spark's, and where Spark refuses, we refuse with a TimeTravelError:
 * before the clean's earliest commit to retain and from the failed insert on; the pending clustering (a
 * replacecommit whose requested plan says CLUSTER) bounds nothing, as 0.15 reads that plan to tell it apart.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { type AsOfAnswer, ourAsOf, sparkAsOf } from '../helpers/as-of.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { canonicalRow, canonicalRows, type HudiHarness, HudiHarnessError, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const HUDI_VERSION = '0.15.0';
const NAME = 'asof_v6';
const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const row = (id: number, write: number) => ({ id, name: `v${write}-${id}`, ts: write, dt: id % 2 === 1 ? 'a' : 'b' });
const OPTIONS = {
  'hoodie.table.name': NAME,
  'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.metadata.enable': 'false',
  'hoodie.clean.automatic': 'false',
  'hoodie.archive.automatic': 'false',
  'hoodie.embed.timeline.server': 'false',
  'hoodie.insert.shuffle.parallelism': '2',
  'hoodie.upsert.shuffle.parallelism': '2',
};
const WRITES: readonly (readonly number[])[] = [
  [1, 2, 3, 4, 5, 6],
  [1, 2],
  [3, 4],
  [1, 6],
];
/** Before any write, and after every instant here. */
const BEFORE_ALL = '20000101000000000';
const AFTER_ALL = '29991231235959999';

describe(`as-of reads of a version 6 table refused where Hudi ${HUDI_VERSION} refuses them`, { timeout: 1_800_000 }, () => {
  let hudi: HudiHarness;
  const path = join(tempDir('hudi-0.15-as-of-validate-'), 'cow');

  const spark = (asOf: string): Promise<AsOfAnswer> => sparkAsOf(hudi, path, asOf);
  const ours = (asOf: string): Promise<AsOfAnswer> => ourAsOf(path, asOf);

  before(async () => {
    hudi = await startHudi({ hudiVersion: HUDI_VERSION });
    for (const [index, ids] of WRITES.entries()) {
      await hudi.write(path, {
        schema: SCHEMA,
        rows: ids.map((id) => row(id, index + 1)),
        options: { ...OPTIONS, 'hoodie.datasource.write.operation': index === 0 ? 'insert' : 'upsert' },
      });
    }
    await hudi.sql(`CREATE TABLE ${NAME} USING hudi LOCATION '${path}'`);
    await hudi.sql(`CALL run_clean(table => '${NAME}', clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => 2, options => 'hoodie.metadata.enable=false')`);
    await hudi.sql(`CALL run_clustering(table => '${NAME}', op => 'schedule', options => 'hoodie.metadata.enable=false')`);
    try {
      await hudi.write(path, {
        schema: SCHEMA,
        rows: [row(7, 5), row(8, 5)],
        options: {
          ...OPTIONS,
          'hoodie.datasource.write.operation': 'insert',
          'hoodie.precommit.validators': 'org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator',
          'hoodie.precommit.validators.single.value.sql.queries': 'select count(*) from <TABLE_NAME> where id is null#1',
        },
      });
      assert.fail('the insert meant to fail pre-commit validation succeeded');
    } catch (error) {
      if (!(error instanceof HudiHarnessError && /validation/i.test(error.message))) throw error;
    }
  });
  after(async () => {
    await hudi?.close();
  });

  it('reads as of every instant what Spark reads, and refuses where Spark refuses, naming why', async () => {
    const table = await HudiTable.open(openStorage(path));
    assert.equal(table.config.version, 6);
    const writes = table.timeline.completedWrites().map((instant) => instant.time);
    assert.equal(writes.length, 4, 'four completed commits');
    const clean = table.timeline.completed().find((instant) => instant.action === 'clean');
    assert.ok(clean, 'Spark’s clean completed');
    const pending = table.timeline.pending().map((instant) => `${instant.action} ${instant.state}`);
    assert.deepEqual(pending, ['replacecommit REQUESTED', 'commit INFLIGHT'], 'a pending clustering, then the failed insert');
    const [clustering, failed] = table.timeline.pending().map((instant) => instant.time);
    const retained = writes[2]!;

    const asOfs = [BEFORE_ALL, ...table.timeline.instants.map((instant) => instant.time), AFTER_ALL];
    const verdicts: string[] = [];
    for (const asOf of asOfs) {
      const [theirs, mine] = [await spark(asOf), await ours(asOf)];
      if (Array.isArray(theirs)) {
        assert.deepEqual(mine, theirs, `as of ${asOf}: the rows Spark reads`);
        verdicts.push(`${asOf} read`);
        continue;
      }
      assert.ok(!Array.isArray(mine), `as of ${asOf}: Spark refuses (${theirs.refused}), we read ${JSON.stringify(mine)}`);
      if (theirs.refused.includes('Cleaner cleaned up the timestamp of interest')) {
        assert.match(mine.refused, new RegExp(`is before ${retained}, the earliest commit the newest clean \\(${clean.time}\\) retained`));
        verdicts.push(`${asOf} cleaned`);
      } else {
        assert.match(theirs.refused, new RegExp(`must be earlier than the first incomplete commit timestamp '${failed}'`));
        assert.match(mine.refused, new RegExp(`is not earlier than the pending commit ${failed}`));
        verdicts.push(`${asOf} pending`);
      }
    }
    // What Spark decided, instant by instant: the clean's bound, the clustering passed over, the failed insert's bound.
    assert.deepEqual(verdicts, [
      `${BEFORE_ALL} cleaned`,
      `${writes[0]} cleaned`,
      `${writes[1]} cleaned`,
      `${writes[2]} read`,
      `${writes[3]} read`,
      `${clean.time} read`,
      `${clustering} read`,
      `${failed} pending`,
      `${AFTER_ALL} pending`,
    ]);
  });

  it('the CLI reads and refuses alike', async () => {
    const table = await HudiTable.open(openStorage(path));
    const writes = table.timeline.completedWrites().map((instant) => instant.time);
    const cli = runCli(['read', path, '--as-of', writes[3]!]);
    assert.equal(cli.code, 0, cli.stderr);
    const sparkRows = (await hudi.read(path, { options: { 'hoodie.metadata.enable': 'false', 'as.of.instant': writes[3]! }, meta: false })).rows;
    assert.deepEqual(jsonLines(cli.stdout).map(canonicalRow).sort(), canonicalRows(sparkRows));
    const refused = runCli(['files', path, '--as-of', writes[0]!]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /the earliest commit the newest clean \(\d+\) retained/);
  });
});
