/**
 * A file that a completed write produced, still the latest of its file group, and missing from storage, is a
 * MissingFileError naming the file and the instant that wrote it, for reads and writes alike: never fewer rows,
 * never the file group's older version, and the write refused leaves every file as it was.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { MissingFileError } from '../../lib/errors.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/fixtures.js';
import { rowLines, writeServicesTable } from '../helpers/services-table.js';

const PROPS: Record<string, string> = {
  'hoodie.table.name': 't',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.index.bloom.num_entries': '100',
};

let inputs = 0;
async function write(table: string, records: readonly object[], operation: WriteOptions['operation'], props: Record<string, string> = {}) {
  const file = join(tempDir(), `input-${inputs++}.jsonl`);
  writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation, properties: new Map(Object.entries({ ...PROPS, ...props })) });
}

function listing(table: string): string[] {
  return readdirSync(table, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map((path) => `${relative(table, path)} ${readFileSync(path).length}`)
    .sort();
}

async function read(table: string) {
  return (await readSnapshot(await HudiTable.open(openStorage(table)))).rows;
}

/** The paths the last completed write wrote. */
async function lastWritten(table: string): Promise<{ instant: string; paths: string[] }> {
  const opened = await HudiTable.open(openStorage(table));
  const instant = opened.timeline.completedWrites().at(-1)!;
  const metadata = await readCommitMetadata(opened.storage, instant, TIMELINE_LAYOUT_1);
  return { instant: instant.time, paths: Object.values(metadata.partitionToWriteStats).flatMap((stats) => stats.map((stat) => stat.path!)) };
}

function assertMissing(error: unknown, path: string, instant: string): true {
  assert.ok(error instanceof MissingFileError, `expected MissingFileError, got ${String(error)}`);
  assert.equal(error.path, path);
  assert.equal(error.instantTime, instant);
  assert.match(error.message, /restore the file from a backup or an object version, or roll the table back to before/);
  return true;
}

const rows = (ids: readonly number[], name: string) => ids.map((id) => ({ id, name, ts: 1, dt: 'p1' }));

describe('missing committed files', () => {
  for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ'] as const) {
    it(`${type}: the latest file of a file group deleted fails reads and writes, naming it and its instant`, async () => {
      const table = join(tempDir(), 't');
      const props = { 'hoodie.datasource.write.table.type': type };
      await write(table, rows([1, 2, 3], 'first'), 'insert', props);
      await write(table, rows([1, 2], 'updated'), 'upsert', props);
      const { instant, paths } = await lastWritten(table);
      assert.equal(paths.length, 1);
      rmSync(join(table, paths[0]!));
      await assert.rejects(read(table), (error: unknown) => assertMissing(error, paths[0]!, instant));
      const before = listing(table);
      await assert.rejects(write(table, rows([4], 'next'), 'upsert', props), (error: unknown) => assertMissing(error, paths[0]!, instant));
      assert.deepEqual(listing(table), before, 'the refused write changed nothing, timeline included');
    });
  }

  it("an older version of a file group (the cleaner's to remove) is not needed", async () => {
    const table = join(tempDir(), 't');
    await write(table, rows([1, 2, 3], 'first'), 'insert');
    const first = await lastWritten(table);
    await write(table, rows([1], 'updated'), 'upsert');
    rmSync(join(table, first.paths[0]!));
    assert.deepEqual((await read(table)).map((row) => [row['id'], row['name']]).sort(), [
      [1, 'updated'],
      [2, 'first'],
      [3, 'first'],
    ]);
    // Time travel to the removed version is not checked here: that version is gone by design.
    assert.equal(existsSync(join(table, first.paths[0]!)), false);
  });

  it('file groups a clustering replaced may be gone; a latest file missing beside them is still named', async () => {
    const dir = join(tempDir(), 't');
    // Two writes, a clustering of both partitions, a write after it (it rewrites one clustered group).
    const table = await writeServicesTable({ dir, partitions: 2, commits: 3, clusterEvery: 2 });
    const opened = await HudiTable.open(openStorage(dir));
    const writes = opened.timeline.completedWrites();
    assert.deepEqual(
      writes.map((instant) => instant.action),
      ['commit', 'commit', 'replacecommit', 'commit'],
    );
    const clustering = await readCommitMetadata(opened.storage, writes[2]!, TIMELINE_LAYOUT_1);
    const replaced = new Set(Object.entries(clustering.partitionToReplaceFileIds ?? {}).flatMap(([partition, ids]) => ids.map((id) => `${partition}/${id}`)));
    assert.equal(replaced.size, 2, 'one file group replaced in each partition');
    // Every file of the replaced groups removed (as the cleaner does once they fall out of retention).
    const removed: string[] = [];
    for (const partition of table.partitions) {
      for (const name of readdirSync(join(dir, partition))) {
        if (replaced.has(`${partition}/${name.slice(0, name.indexOf('_'))}`)) {
          rmSync(join(dir, partition, name));
          removed.push(name);
        }
      }
    }
    assert.ok(removed.length >= 3, `the replaced groups' versions removed: ${removed.join(', ')}`);
    assert.deepEqual(rowLines(await read(dir)), rowLines(table.rows.values()));

    // The clustering's file that no later write rewrote, deleted beside them: that one alone is named.
    const after = await readCommitMetadata(opened.storage, writes[3]!, TIMELINE_LAYOUT_1);
    const rewritten = new Set(Object.values(after.partitionToWriteStats).flatMap((stats) => stats.map((stat) => stat.fileId)));
    const latest = Object.values(clustering.partitionToWriteStats)
      .flat()
      .filter((stat) => !rewritten.has(stat.fileId))
      .map((stat) => stat.path!);
    assert.equal(latest.length, 1);
    rmSync(join(dir, latest[0]!));
    await assert.rejects(read(dir), (error: unknown) => {
      assertMissing(error, latest[0]!, writes[2]!.time);
      assert.deepEqual((error as MissingFileError).missing, [{ path: latest[0]!, instantTime: writes[2]!.time }]);
      return true;
    });
  });
});
