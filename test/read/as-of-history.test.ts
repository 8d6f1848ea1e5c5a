/**
 * Time travel past the active timeline on Hudi 1.x tables (version 8) our writer writes and our archiver archives
 * into the LSM history, nothing cleaned: as of an archived instant we read what we read as of it while it was
 * active (Hudi's slicing counts slices older than the timeline as committed; test/interop/hudi-1x-as-of-history
 * shows Spark agrees), an archived delta commit's log joining the slice before a compaction by the completion time
 * the history holds. Once a
 * clean has retained one commit, an as-of read before it is refused with a TimeTravelError, as Hudi refuses it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { TimeTravelError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { historyFolder, readTimelineHistory } from '../../lib/timeline/history/index.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { canonicalRows } from '../helpers/hudi.js';
import { hudi1xRows } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';

const ARCHIVAL = {
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
  'hoodie.clean.commits.retained': '1',
  'hoodie.metadata.enable': 'false',
  // Merge-on-read: the archiver keeps the delta commits a compaction would need; one is enough.
  'hoodie.compact.inline.max.delta.commits': '1',
};
const WRITES: readonly (readonly number[])[] = [
  [1, 2, 3, 4, 5, 6],
  [1, 2],
  [3, 4],
  [1, 6],
];

function properties(type: 'COPY_ON_WRITE' | 'MERGE_ON_READ'): Map<string, string> {
  return new Map(
    Object.entries({
      'hoodie.table.name': 'as_of',
      'hoodie.datasource.write.table.type': type,
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.partitionpath.field': 'dt',
      'hoodie.datasource.write.precombine.field': 'ts',
      'hoodie.write.table.version': '8',
      'hoodie.parquet.small.file.limit': '0',
      'hoodie.metadata.enable': 'false',
    }),
  );
}

/**
 * Four writes of WRITES; their instant times. Merge-on-read: a compaction after the second, so the second's log joins
 * the first slice only by its completion time (the compaction's slice is newer).
 */
async function writeTable(path: string, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ'): Promise<string[]> {
  const times: string[] = [];
  const storage = new LocalStorage(path);
  for (const [index, ids] of WRITES.entries()) {
    const file = join(tempDir(), `batch-${index}.jsonl`);
    await writeJsonLines(file, hudi1xRows(ids, index + 1));
    const result = await writeBatch(storage, {
      input: { file, format: 'jsonl' },
      operation: index === 0 ? 'insert' : 'upsert',
      properties: properties(type),
    });
    times.push(result.instantTime);
    if (type === 'MERGE_ON_READ' && index === 1) {
      const props = new Map([['hoodie.metadata.enable', 'false']]);
      const lock = new StorageLockProvider(storage);
      const scheduled = await scheduleCompaction(await HudiTable.open(storage), compactionConfigFrom(props, 'test'), { lock, force: true, properties: props });
      assert.ok(scheduled !== undefined);
      await runCompaction(await HudiTable.open(storage), scheduled.instantTime, { lock, properties: props });
      times.push(scheduled.instantTime);
    }
  }
  return times;
}

async function read(path: string, asOf: string, queryType?: QueryType): Promise<string[]> {
  const table = await HudiTable.open(new LocalStorage(path));
  return canonicalRows((await readSnapshot(table, { asOf, includeMetaFields: true, ...(queryType === undefined ? {} : { queryType }) })).rows);
}

async function archive(path: string, props: Record<string, string> = ARCHIVAL): Promise<string> {
  const storage = new LocalStorage(path);
  const map = new Map(Object.entries(props));
  const result = await runArchive(await HudiTable.open(storage, { mode: 'archive' }), {
    config: archivalConfigFromProperties(map),
    cleanConfig: cleanConfigFromProperties(map),
    lock: new StorageLockProvider(storage),
    properties: map,
  });
  return result.outcome;
}

describe('as-of reads older than the active timeline (table version 8)', () => {
  for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ'] as const) {
    it(`${type}: as of archived instants, the rows read while they were active`, async () => {
      const path = join(tempDir('as-of-history-'), type.toLowerCase());
      const times = await writeTable(path, type);
      const queryTypes = type === 'MERGE_ON_READ' ? (['snapshot', 'read_optimized'] as const) : (['snapshot'] as const);
      const before = new Map<string, string[]>();
      for (const time of times) for (const queryType of queryTypes) before.set(`${time} ${queryType}`, await read(path, time, queryType));

      assert.equal(await archive(path), 'archived');
      const history = await readTimelineHistory(new LocalStorage(path), historyFolder());
      const archived = type === 'MERGE_ON_READ' ? 3 : 2;
      assert.deepEqual(
        history.instants.map((instant) => instant.requestedTime),
        times.slice(0, archived),
        'the first writes (and the compaction) are in the LSM history',
      );
      const table = await HudiTable.open(new LocalStorage(path));
      assert.ok(times[archived - 1]! < table.timeline.instants[0]!.time, 'and no longer on the active timeline');

      for (const time of times)
        for (const queryType of queryTypes) assert.deepEqual(await read(path, time, queryType), before.get(`${time} ${queryType}`), `${time} ${queryType}`);
      assert.equal(before.get(`${times[0]} snapshot`)!.length, 6);
      const second = before.get(`${times[1]} snapshot`)!;
      assert.ok(second.some((row) => row.includes('"v2-1"')) && !second.some((row) => row.includes('"v3-3"')), second.join('\n'));
      if (type === 'MERGE_ON_READ') assert.ok(!before.get(`${times[1]} read_optimized`)!.some((row) => row.includes('"v2-')), 'its log, not a base file');
      assert.deepEqual(await read(path, '20000101000000000'), [], 'before the first write: nothing');
    });
  }

  it('after a clean retained one commit, refuses as-of reads before it, archived or active, naming the clean', async () => {
    const path = join(tempDir('as-of-history-'), 'cleaned');
    const times = await writeTable(path, 'COPY_ON_WRITE');
    assert.equal(await archive(path), 'archived');
    const storage = new LocalStorage(path);
    const map = new Map(Object.entries(ARCHIVAL));
    const cleaned = await runClean(await HudiTable.open(storage, { mode: 'clean' }), {
      config: cleanConfigFromProperties(map),
      lock: new StorageLockProvider(storage),
      properties: map,
    });
    assert.equal(cleaned.outcome, 'cleaned');
    for (const time of times.slice(0, 3)) {
      await assert.rejects(read(path, time), (error: unknown) => error instanceof TimeTravelError && error.problem.includes(`before ${times[3]}`), time);
    }
    assert.equal((await read(path, times[3]!)).length, 6);
  });
});
