/**
 * The same fixture reads after copying the tables to S3 on the local stack (or MinIO / AWS from the environment).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonLines, runCli } from '../helpers/cli.js';
import { completedWrites, expectedOf, fixtureTable } from '../helpers/fixtures.js';
import { requireS3, s3TablePath, uploadTable } from '../helpers/s3.js';

requireS3();

function ids(stdout: string): [number, string, boolean][] {
  return jsonLines(stdout)
    .map((r) => [r['id'] as number, r['name'] as string, r['isActive'] as boolean] as [number, string, boolean])
    .sort((a, b) => a[0] - b[0]);
}

describe('read from S3', () => {
  for (const name of [
    'v6_nonpartitioned',
    'v6_simplekeygen_nonhivestyle',
    'v6_complexkeygen_hivestyle',
    'v6_simplekeygen_hivestyle_no_metafields',
    'v6_timebasedkeygen_nonhivestyle',
  ] as const) {
    it(`${name} reads the latest four rows`, async () => {
      const path = await s3TablePath(name);
      await uploadTable(fixtureTable(name), path);
      const result = runCli(['read', path]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(ids(result.stdout), [
        [1, 'Alice', false],
        [2, 'Bob', false],
        [3, 'Carol', true],
        [4, 'Diana', true],
      ]);
    });
  }

  it('the insert_overwrite table, latest and as of each commit', async () => {
    const path = await s3TablePath('overwrite');
    await uploadTable(fixtureTable('v6_simplekeygen_nonhivestyle_overwritetable'), path);
    const [c1, , c3] = completedWrites(expectedOf('v6_simplekeygen_nonhivestyle_overwritetable'));
    assert.deepEqual(ids(runCli(['read', path]).stdout), [[4, 'Diana', false]]);
    assert.deepEqual(ids(runCli(['read', path, '--as-of', c1!]).stdout), [
      [1, 'Alice', true],
      [2, 'Bob', false],
      [3, 'Carol', true],
    ]);
    const timeline = runCli(['timeline', path]);
    assert.match(timeline.stdout, new RegExp(`${c3} {2}replacecommit +COMPLETED`));
  });

  it('v6_empty reads 0 rows; so does the instant-less v8 table', async () => {
    const empty = await s3TablePath('empty');
    await uploadTable(fixtureTable('v6_empty'), empty);
    const result = runCli(['read', empty]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    const v8 = await s3TablePath('v8');
    await uploadTable(fixtureTable('v8_nonpartitioned'), v8);
    const v8Read = runCli(['read', v8]);
    assert.equal(v8Read.code, 0, v8Read.stderr);
    assert.equal(v8Read.stdout, '');
  });

  it('a missing bucket is one clear line naming the bucket', () => {
    const result = runCli(['read', 's3://no-such-bucket-hudi-serverless-test/table']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /no-such-bucket-hudi-serverless-test/);
    assert.match(result.stderr, /bucket/i);
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });

  it('a path with no table is named', async () => {
    const result = runCli(['read', await s3TablePath('nothing-here')]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /not a Hudi table/);
  });
});
