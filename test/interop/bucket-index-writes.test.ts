/**
 * Our writes into simple-bucket-index tables against Hudi 0.15 (Spark 3.5.1): our bucket of a key is Java's
 * BucketIdentifier.getBucketId; on tables Spark created (metadata table on, as Spark's default) our upserts, inserts and
 * deletes put every record in its hash bucket's file group (merge-on-read: log files for existing buckets); Spark then
 * writes on top without error and without a key twice, Spark (metadata table on and off) and our reader read the same
 * rows; the table is written alternately by Spark and by us, and Hudi's compaction (merge-on-read) and clean run on top.
 * On copy-on-write, an insert of a stored key keeps both records, Spark's and ours alike.
 *
 * Four tables cover both table types, 4 and 16 buckets and hive-style partitioning on and off pairwise: each type once
 * with 4 buckets and once with 16, hive-style on for one and off for the other.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { openStorage } from '../../lib/storage/index.js';
import { bucketIdOf } from '../../lib/table/bucket-index.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, type JavaExpression, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';
import { assertBucketsKept, readsAlike } from '../helpers/reads-alike.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const row = (id: number, ts: number) => ({ id, name: `n${id}-${ts}`, ts, dt: id % 3 === 0 ? 'x' : 'y' });
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
const BUCKET_IDENTIFIER = 'org.apache.hudi.index.bucket.BucketIdentifier';

interface Layout {
  readonly name: string;
  readonly type: 'COPY_ON_WRITE' | 'MERGE_ON_READ';
  readonly buckets: number;
  readonly hiveStyle: boolean;
}

const LAYOUTS: readonly Layout[] = [
  { name: 'bw_cow_4', type: 'COPY_ON_WRITE', buckets: 4, hiveStyle: false },
  { name: 'bw_cow_16', type: 'COPY_ON_WRITE', buckets: 16, hiveStyle: true },
  { name: 'bw_mor_4', type: 'MERGE_ON_READ', buckets: 4, hiveStyle: true },
  { name: 'bw_mor_16', type: 'MERGE_ON_READ', buckets: 16, hiveStyle: false },
];

function bucketOptions(layout: Layout): Record<string, string> {
  return {
    'hoodie.index.type': 'BUCKET',
    'hoodie.bucket.index.num.buckets': String(layout.buckets),
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.hive_style_partitioning': String(layout.hiveStyle),
  };
}

function sparkOptions(layout: Layout, operation: string): Record<string, string> {
  return {
    ...mergeOnReadWriteOptions(1),
    'hoodie.datasource.write.table.type': layout.type,
    'hoodie.table.name': layout.name,
    'hoodie.datasource.write.operation': operation,
    'hoodie.table.timeline.timezone': 'UTC',
    ...bucketOptions(layout),
  };
}

let hudi: HudiHarness;

before(async () => {
  hudi = await startHudi();
});

after(async () => {
  await hudi?.close();
});

async function ourWrite(path: string, layout: Layout, rows: readonly object[], operation: WriteOptions['operation']) {
  const file = join(tempDir('bucket-writes-batch-'), 'batch.jsonl');
  await writeJsonLines(file, rows);
  return writeBatch(openStorage(path), { input: { file, format: 'jsonl' }, operation, properties: new Map(Object.entries(bucketOptions(layout))) });
}

/**
 * Spark with the metadata table on and off and our reader read the same rows, no key twice, the expected ids with
 * the expected write of each, and every row in the file group of its hash bucket, one file group per bucket.
 */
async function readAlike(path: string, layout: Layout, expected: ReadonlyMap<number, number>): Promise<void> {
  const { rows, keys } = await readsAlike(hudi, path);
  assert.deepEqual(
    [...keys].sort((a, b) => a - b),
    [...expected.keys()].sort((a, b) => a - b),
  );
  for (const r of rows) assert.equal(r['name'], `n${r['id']}-${expected.get(Number(r['id']))}`, `id ${r['id']}`);
  await assertBucketsKept(path, rows, { numBuckets: layout.buckets, hashFields: ['id'] });
}

function apply(expected: Map<number, number>, keys: readonly number[], version: number | 'delete'): void {
  for (const id of keys) {
    if (version === 'delete') expected.delete(id);
    else expected.set(id, version);
  }
}

describe('writes into simple-bucket-index tables, against Hudi 0.15', () => {
  it("our bucket of a key is Java's BucketIdentifier.getBucketId, for simple and complex keys", async () => {
    const keys = [...ids(0, 40).map(String), '-1', 'abc', 'polygenelubricants', 'ünïcødé-ключ', '😀', '', 'a,b', 'id:7,dt:x', 'id:__null__,dt:y'];
    for (const numBuckets of [4, 16, 7]) {
      for (const [hashField, fields] of [
        ['id', ['id']],
        ['id,dt', ['id', 'dt']],
      ] as const) {
        const java = await hudi.jvmEval(
          keys.map((key): JavaExpression => ({ static: `${BUCKET_IDENTIFIER}.getBucketId`, args: [key, hashField, numBuckets] })),
        );
        const ours = keys.map((key) => bucketIdOf(key, { numBuckets, hashFields: fields }));
        assert.deepEqual(ours, java, `${numBuckets} buckets hashed on ${hashField}`);
      }
    }
  });

  for (const layout of LAYOUTS) {
    const what = `${layout.type === 'COPY_ON_WRITE' ? 'copy-on-write' : 'merge-on-read'}, ${layout.buckets} buckets, hive-style ${layout.hiveStyle ? 'on' : 'off'}`;
    it(`${what}: Spark, our upsert/insert/delete, Spark again, alternately; ${layout.type === 'MERGE_ON_READ' ? "Hudi's compaction (scheduled before our append) and clean on top; every reader agrees" : "Hudi's clean on top; every reader agrees; an insert of a stored key keeps both, as Spark's does"}`, async () => {
      const path = join(tempDir('bucket-writes-'), layout.name);
      const expected = new Map<number, number>();
      await hudi.write(path, { schema: SCHEMA, rows: ids(1, 12).map((id) => row(id, 1)), options: sparkOptions(layout, 'insert') });
      apply(expected, ids(1, 12), 1);
      const sparkFileIds = new Set((await (await HudiTable.open(openStorage(path))).fileSystemView()).latestMergedSlices().map((s) => s.fileId));

      // Updates, inserts into Spark's buckets and into buckets no file group has yet.
      const upsert = await ourWrite(
        path,
        layout,
        ids(8, 40).map((id) => row(id, 2)),
        'upsert',
      );
      apply(expected, ids(8, 40), 2);
      assert.ok(
        upsert.stats.some((s) => sparkFileIds.has(s.fileId)),
        "some records went to Spark's file groups",
      );
      if (layout.type === 'MERGE_ON_READ') {
        for (const s of upsert.stats) assert.equal(s.path!.includes('.log.'), sparkFileIds.has(s.fileId), `${s.path}: log files for existing buckets only`);
      }
      await ourWrite(
        path,
        layout,
        ids(41, 50).map((id) => row(id, 3)),
        'insert',
      );
      apply(expected, ids(41, 50), 3);
      await ourWrite(
        path,
        layout,
        [...ids(1, 3), 999].map((id) => row(id, 4)),
        'delete',
      );
      apply(expected, ids(1, 3), 'delete');
      await readAlike(path, layout, expected);

      // Spark writes on top of ours: it finds our buckets (no error, no key twice), and we write on top of Spark again.
      await hudi.write(path, { schema: SCHEMA, rows: ids(45, 60).map((id) => row(id, 5)), options: sparkOptions(layout, 'upsert') });
      apply(expected, ids(45, 60), 5);
      await ourWrite(
        path,
        layout,
        [...ids(1, 2), ...ids(55, 65)].map((id) => row(id, 6)),
        'upsert',
      );
      apply(expected, [...ids(1, 2), ...ids(55, 65)], 6);
      await hudi.write(path, { schema: SCHEMA, rows: [4, 5, 62].map((id) => row(id, 7)), options: sparkOptions(layout, 'delete') });
      apply(expected, [4, 5, 62], 'delete');
      await readAlike(path, layout, expected);

      // Hudi's own services on our file groups, then one more write each.
      // With the bucket index named, Hudi's procedures also need the record key field (HoodieBucketIndex hashes on it).
      const procedureOptions = Object.entries({ ...bucketOptions(layout), 'hoodie.datasource.write.recordkey.field': 'id' })
        .map(([key, value]) => `${key}=${value}`)
        .join(',');
      if (layout.type === 'MERGE_ON_READ') {
        // A compaction Hudi scheduled: our upsert appends to the slice it opened, and Hudi's run keeps those records.
        await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${path}', options => '${procedureOptions},hoodie.compact.inline.max.delta.commits=1')`);
        const pending = (await HudiTable.open(openStorage(path))).timeline.pending().filter((i) => i.action === 'compaction');
        assert.equal(pending.length, 1, 'Hudi scheduled a compaction');
        const appended = await ourWrite(
          path,
          layout,
          ids(20, 25).map((id) => row(id, 10)),
          'upsert',
        );
        apply(expected, ids(20, 25), 10);
        assert.ok(
          appended.stats.every((s) => s.path!.includes(`_${pending[0]!.time}.log.`)),
          "our log files belong to the compaction's new slice",
        );
        await hudi.sql(`CALL run_compaction(op => 'run', path => '${path}', options => '${procedureOptions}')`);
        await readAlike(path, layout, expected);
        await hudi.sql(
          `CALL run_compaction(op => 'scheduleAndExecute', path => '${path}', options => '${procedureOptions},hoodie.compact.inline.max.delta.commits=1')`,
        );
        const view = await (await HudiTable.open(openStorage(path))).fileSystemView();
        assert.ok(
          view.latestMergedSlices().every((s) => s.baseFile !== undefined && s.logFiles.length === 0),
          'Hudi compacted our log files',
        );
      }
      await hudi.sql(`CREATE TABLE ${layout.name} USING hudi LOCATION '${path}'`);
      await hudi.sql(`CALL run_clean(table => '${layout.name}', retain_commits => 1, options => '${procedureOptions}')`);
      const cleaned = (await HudiTable.open(openStorage(path))).timeline.completed().filter((i) => i.action === 'clean');
      assert.equal(cleaned.length, 1, 'Hudi cleaned the table');
      await ourWrite(
        path,
        layout,
        ids(60, 70).map((id) => row(id, 8)),
        'upsert',
      );
      apply(expected, ids(60, 70), 8);
      await hudi.write(path, { schema: SCHEMA, rows: ids(1, 6).map((id) => row(id, 9)), options: sparkOptions(layout, 'upsert') });
      apply(expected, ids(1, 6), 9);
      await readAlike(path, layout, expected);

      if (layout.type === 'COPY_ON_WRITE') {
        // An insert of a stored key is not looked up: Spark's (HoodieConcatHandle) and ours both keep the stored record.
        await hudi.write(path, { schema: SCHEMA, rows: [row(7, 11)], options: sparkOptions(layout, 'insert') });
        await ourWrite(path, layout, [row(8, 11)], 'insert');
        const rows = (await hudi.read(path)).rows;
        const names = (id: number) =>
          rows
            .filter((r) => Number(r['id']) === id)
            .map((r) => String(r['name']))
            .sort();
        assert.deepEqual(names(7), [`n7-${expected.get(7)}`, 'n7-11'].sort(), "Spark's insert keeps the stored record");
        assert.deepEqual(names(8), [`n8-${expected.get(8)}`, 'n8-11'].sort(), 'our insert keeps the stored record');
      }
    });
  }
});
