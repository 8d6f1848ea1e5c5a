// The concurrency semantics README.md states ("Concurrent writers"), for the cases test/writer/writer.test.ts does not
// cover: two upserts of the same new keys at once both commit (no file group is shared, so Hudi's file-level check
// finds no conflict: the keys are stored twice), unless their inserts go into the same small file, which is an
// update of that file group and conflicts. Both writers tag their records against the snapshot before either
// commits: each waits, after its data files, until the other got there too.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { ConflictError } from '../../lib/errors.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { type WriteResult, writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/fixtures.js';

const PROPS = {
  'hoodie.table.name': 'users',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'createTime',
  'hoodie.index.bloom.num_entries': '1000',
  // Two writers at once: Hudi's multi-writer mode, whose LAZY failed-writes cleaning leaves a live writer alone.
  'hoodie.write.concurrency.mode': 'optimistic_concurrency_control',
};

/** Resolves once `parties` callers are waiting. */
function barrier(parties: number): () => Promise<void> {
  let waiting = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async () => {
    waiting += 1;
    if (waiting === parties) release();
    await all;
  };
}

/** A table with one commit of ids 1..20, then two upserts of the same new ids 101..110 at once. */
async function twoUpsertsOfTheSameNewKeys(extra: Record<string, string>): Promise<{ table: string; results: PromiseSettledResult<WriteResult>[] }> {
  const table = join(tempDir(), 'users');
  const storage = openStorage(table);
  const properties = new Map(Object.entries({ ...PROPS, ...extra }));
  const file = async (records: Iterable<object>) => {
    const path = join(tempDir(), 'batch.jsonl');
    await writeJsonLines(path, records);
    return path;
  };
  const seed = [...generateUsers({ count: 20, seed: 3, idStart: 1, startDate: '2024-01-01', days: 1 })];
  await writeBatch(storage, { input: { file: await file(seed), format: 'jsonl' }, operation: 'upsert', properties });
  const fresh = [...generateUsers({ count: 10, seed: 4, idStart: 101, startDate: '2024-01-01', days: 1 })];
  const bothTagged = barrier(2);
  const upsert = async (name: string) =>
    writeBatch(storage, {
      input: { file: await file(fresh.map((user) => ({ ...user, name }))), format: 'jsonl' },
      operation: 'upsert',
      properties,
      afterDataFiles: bothTagged,
    });
  return { table, results: await Promise.allSettled([upsert('writer-a'), upsert('writer-b')]) };
}

async function idsOf(table: string): Promise<number[]> {
  const { rows } = await readSnapshot(await HudiTable.open(openStorage(table)));
  return rows.map((row) => Number(row['id'])).sort((a, b) => a - b);
}

describe('concurrent writers (README: Concurrent writers)', () => {
  it('two upserts of the same new keys at once both commit, into new file groups: each key is stored twice', async () => {
    // Small-file handling off: inserts go to new file groups, never into the existing file.
    const { table, results } = await twoUpsertsOfTheSameNewKeys({ 'hoodie.parquet.small.file.limit': '0' });
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'fulfilled'],
      'no conflict',
    );
    const [a, b] = results.map((result) => (result as PromiseFulfilledResult<WriteResult>).value);
    assert.equal(a!.inserted, 10);
    assert.equal(b!.inserted, 10, 'each saw the keys as new');
    const fileGroups = (result: WriteResult) => new Set(result.stats.map((stat) => stat.fileId));
    assert.equal([...fileGroups(a!)].filter((id) => fileGroups(b!).has(id)).length, 0, 'no shared file group');
    const ids = await idsOf(table);
    assert.equal(ids.length, 40);
    assert.deepEqual(
      ids.filter((id) => id > 100),
      [101, 101, 102, 102, 103, 103, 104, 104, 105, 105, 106, 106, 107, 107, 108, 108, 109, 109, 110, 110],
    );
  });

  it('unless their inserts go into the same small file: that file group is updated by both, and one fails', async () => {
    const { table, results } = await twoUpsertsOfTheSameNewKeys({});
    const failed = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    assert.equal(failed.length, 1, JSON.stringify(results.map((result) => result.status)));
    assert.ok(failed[0]!.reason instanceof ConflictError, String(failed[0]!.reason));
    assert.match((failed[0]!.reason as Error).message, /conflicts with commit \d{17} on file group/);
    assert.deepEqual(await idsOf(table), [...Array.from({ length: 20 }, (_, i) => i + 1), ...Array.from({ length: 10 }, (_, i) => i + 101)]);
    const timeline = await loadTimeline(openStorage(table), TIMELINE_LAYOUT_1);
    assert.equal(timeline.completedWrites().length, 2, 'the seed and the winner');
    assert.equal(timeline.instants.filter((instant) => instant.action === 'rollback' && instant.state === 'COMPLETED').length, 1, 'the loser was rolled back');
  });
});
