/**
 * Writes into simple-bucket-index tables (hoodie.index.type=BUCKET): Java's hash picks the bucket, a bucket is one file
 * group whose id starts with the bucket number, an existing bucket takes inserts and updates (copy-on-write: a merged
 * base file; merge-on-read: a log file), a new one gets a base file; bad settings are refused before anything is
 * written. Spark's agreement is test/interop/bucket-index-writes.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { ConflictError, HudiError } from '../../lib/errors.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { bucketIdOf, hashKeysOf, javaStringHashCode, newBucketFileId } from '../../lib/table/bucket-index.js';
import { bucketNumberOf, UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { tableFiles, tempDir } from '../helpers/paths.js';

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
const row = (id: number, ts: number) => ({ id, name: `n${id}-${ts}`, ts, dt: id % 2 === 0 ? 'a' : 'b' });

function props(type: 'COPY_ON_WRITE' | 'MERGE_ON_READ', extra: Record<string, string> = {}): Map<string, string> {
  return new Map(
    Object.entries({
      'hoodie.table.name': 'bucket_t',
      'hoodie.datasource.write.table.type': type,
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.partitionpath.field': 'dt',
      'hoodie.datasource.write.precombine.field': 'ts',
      'hoodie.metadata.enable': 'false',
      'hoodie.index.type': 'BUCKET',
      'hoodie.bucket.index.num.buckets': '4',
      ...extra,
    }),
  );
}

async function write(table: string, records: readonly object[], operation: WriteOptions['operation'], properties: Map<string, string>) {
  const file = join(tempDir(), `batch-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeJsonLines(file, records);
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation, properties });
}

async function snapshot(table: string) {
  const read = await readSnapshot(await HudiTable.open(openStorage(table)), { includeMetaFields: true });
  return read.rows;
}

const spec4 = { numBuckets: 4, hashFields: ['id'] };

describe('bucket index hashing (BucketIdentifier)', () => {
  it("hashes a key as Java's List<String>.hashCode of its hash-field values, & Integer.MAX_VALUE, modulo the buckets", () => {
    assert.equal(javaStringHashCode('abc'), 96354);
    assert.equal(javaStringHashCode('polygenelubricants'), -2147483648);
    // [abc].hashCode() = 31 + 96354; a negative hash is masked, not negated.
    assert.equal(bucketIdOf('abc', { numBuckets: 1000, hashFields: ['id'] }), (31 + 96354) % 1000);
    assert.equal(bucketIdOf('polygenelubricants', { numBuckets: 7, hashFields: ['id'] }), 31 % 7);
  });

  it('hashes the values of the hash fields of a complex key, with its null and empty placeholders', () => {
    assert.deepEqual(hashKeysOf('id:1,dt:a', ['id']), ['1']);
    assert.deepEqual(hashKeysOf('id:1,dt:a', ['id', 'dt']), ['1', 'a']);
    assert.deepEqual(hashKeysOf('id:__null__,dt:__empty__', ['id', 'dt']), [null, '']);
    assert.deepEqual(hashKeysOf('7', ['id']), ['7']);
  });

  it('names a new bucket file group with the 8-digit bucket over the UUID head, then -0', () => {
    assert.equal(newBucketFileId(3, '0123abcd-1111-2222-3333-444455556666'), '00000003-1111-2222-3333-444455556666-0');
  });
});

describe('writes into simple-bucket-index tables', () => {
  it('copy-on-write: each record lands in its hash bucket; an existing bucket takes inserts and updates in one new base file', async () => {
    const table = join(tempDir(), 'bucket_cow');
    const first = await write(
      table,
      ids(1, 12).map((id) => row(id, 1)),
      'upsert',
      props('COPY_ON_WRITE'),
    );
    assert.ok(
      first.stats.every((s) => /^\d{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-0$/.test(s.fileId)),
      'bucket file ids',
    );
    const rows1 = await snapshot(table);
    for (const r of rows1) assert.equal(bucketNumberOf(String(r['_hoodie_file_name'])), bucketIdOf(String(r['id']), spec4), `key ${r['id']}`);
    const groupsBefore = new Set(first.stats.map((s) => `${s.partitionPath}/${s.fileId}`));

    // Ids 7..30: updates of 7..12 and inserts; every insert into an existing bucket stays in its file group.
    const second = await write(
      table,
      ids(7, 30).map((id) => row(id, 2)),
      'upsert',
      props('COPY_ON_WRITE'),
    );
    assert.equal(second.updated, 6);
    assert.equal(second.inserted, 18);
    const rows2 = await snapshot(table);
    assert.equal(rows2.length, 30);
    for (const r of rows2) {
      assert.equal(bucketNumberOf(String(r['_hoodie_file_name'])), bucketIdOf(String(r['id']), spec4), `key ${r['id']}`);
      assert.equal(r['name'], `n${r['id']}-${Number(r['id']) >= 7 ? 2 : 1}`);
    }
    const groups = new Map<string, string>();
    for (const s of second.stats) groups.set(`${s.partitionPath}/${bucketNumberOf(s.fileId)}`, `${s.partitionPath}/${s.fileId}`);
    for (const key of groupsBefore) {
      const [partition, fileId] = key.split('/');
      assert.equal(groups.get(`${partition}/${bucketNumberOf(fileId!)}`) ?? key, key, 'an existing bucket keeps its file group');
    }
    const files = (await (await HudiTable.open(openStorage(table))).fileSystemView()).fileGroups();
    assert.equal(new Set(files.map((g) => `${g.partitionPath}/${bucketNumberOf(g.fileId)}`)).size, files.length, 'one file group per bucket');

    // An insert of a stored key is not looked up: its bucket's file keeps both (Hudi's HoodieConcatHandle).
    const duplicate = await write(table, [row(5, 7)], 'insert', props('COPY_ON_WRITE'));
    assert.equal(duplicate.inserted, 1);
    assert.deepEqual(
      (await snapshot(table))
        .filter((r) => r['id'] === 5)
        .map((r) => r['name'])
        .sort(),
      ['n5-1', 'n5-7'],
    );
    // An upsert then merges into both stored records, as HoodieMergeHandle merges each stored record of the key.
    await write(table, [row(5, 8)], 'upsert', props('COPY_ON_WRITE'));
    assert.deepEqual(
      (await snapshot(table)).filter((r) => r['id'] === 5).map((r) => r['name']),
      ['n5-8', 'n5-8'],
    );
    // Deletes reach the keys' buckets; a key of a bucket with no file group deletes nothing.
    const deleted = await write(table, [row(8, 3), row(9, 3), row(1001, 3)], 'delete', props('COPY_ON_WRITE'));
    assert.equal(deleted.deleted, 2);
    assert.deepEqual(
      (await snapshot(table)).map((r) => Number(r['id'])).sort((a, b) => a - b),
      [...ids(1, 30), 5].filter((id) => id !== 8 && id !== 9).sort((a, b) => a - b),
    );
  });

  it('merge-on-read: inserts and updates of existing buckets go to log files, a new bucket to a base file', async () => {
    const table = join(tempDir(), 'bucket_mor');
    // Ids 2, 4: partition a; 1, 3: partition b; with 4 buckets at most 2 groups each.
    await write(table, [row(2, 1), row(1, 1)], 'insert', props('MERGE_ON_READ'));
    const before = await (await HudiTable.open(openStorage(table))).fileSystemView();
    const existing = new Set(before.latestMergedSlices().map((s) => `${s.partitionPath}/${bucketNumberOf(s.fileId)}`));
    const second = await write(
      table,
      ids(1, 16).map((id) => row(id, 2)),
      'upsert',
      props('MERGE_ON_READ'),
    );
    for (const stat of second.stats) {
      const known = existing.has(`${stat.partitionPath}/${bucketNumberOf(stat.fileId)}`);
      assert.equal(stat.path!.includes('.log.'), known, `${stat.path}: ${known ? 'a log file of the existing bucket' : 'a base file of the new bucket'}`);
      if (known) {
        assert.equal(stat.numInserts, 0, 'the bucket index locates every record of an existing bucket: all count as updates');
        assert.equal(stat.numUpdateWrites, stat.numWrites);
      }
    }
    assert.ok(
      second.stats.some((s) => s.path!.includes('.log.') && s.numWrites > 1),
      'a log file holds inserts beside the update',
    );
    const rows = await snapshot(table);
    assert.equal(rows.length, 16);
    for (const r of rows) assert.equal(r['name'], `n${r['id']}-2`);
    // A delete of keys in existing buckets: delete blocks, read back as gone.
    await write(table, [row(3, 9), row(4, 9)], 'delete', props('MERGE_ON_READ'));
    assert.deepEqual(
      (await snapshot(table)).map((r) => Number(r['id'])).sort((a, b) => a - b),
      ids(1, 16).filter((id) => id !== 3 && id !== 4),
    );
  });

  for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ'] as const) {
    it(`${type === 'COPY_ON_WRITE' ? 'copy-on-write' : 'merge-on-read'} bulk_insert: a new table and a new partition get one base file per bucket; an existing bucket is refused`, async () => {
      const table = join(tempDir(), `bucket_bulk_${type}`);
      const first = await write(
        table,
        ids(1, 20).map((id) => row(id, 1)),
        'bulk_insert',
        props(type),
      );
      const action = type === 'COPY_ON_WRITE' ? 'commit' : 'deltacommit';
      const expectBuckets = (stats: typeof first.stats, keys: readonly number[], partition: (id: number) => string) => {
        const want = new Set(keys.map((id) => `${partition(id)}/${bucketIdOf(String(id), spec4)}`));
        assert.deepEqual(new Set(stats.map((s) => `${s.partitionPath}/${bucketNumberOf(s.fileId)}`)), want, 'one file group per bucket written');
        assert.equal(stats.length, want.size);
        for (const s of stats) {
          assert.ok(!s.path!.includes('.log.') && /^\d{8}-[0-9a-f-]{27}-0$/.test(s.fileId), `${s.path}: a base file of a new bucket`);
          assert.equal(s.prevCommit, 'null');
        }
      };
      expectBuckets(first.stats, ids(1, 20), (id) => (id % 2 === 0 ? 'a' : 'b'));
      assert.equal(first.inserted, 20);
      const rows1 = await snapshot(table);
      assert.equal(rows1.length, 20);
      for (const r of rows1) assert.equal(bucketNumberOf(String(r['_hoodie_file_name'])), bucketIdOf(String(r['id']), spec4), `key ${r['id']}`);
      const opened = await HudiTable.open(openStorage(table));
      assert.deepEqual(
        opened.timeline.completedWrites().map((i) => i.action),
        [action],
      );

      // A new partition: only new buckets, so the bulk_insert goes through.
      const newPartition = ids(101, 110).map((id) => ({ ...row(id, 2), dt: 'c' }));
      const second = await write(table, newPartition, 'bulk_insert', props(type));
      expectBuckets(second.stats, ids(101, 110), () => 'c');

      // Records of an existing bucket (id 3, partition b) beside ones of new buckets: refused whole, nothing written.
      const files = tableFiles(table);
      await assert.rejects(
        write(table, [row(3, 3), { ...row(200, 3), dt: 'd' }], 'bulk_insert', props(type)),
        (error: unknown) => error instanceof HudiError && /bulk_insert would write records into bucket \d{8} of partition "b"/.test(error.message),
      );
      assert.deepEqual(tableFiles(table), files, 'nothing written');
      // Upserts still find each bucket's one file group.
      await write(
        table,
        ids(15, 25).map((id) => row(id, 4)),
        'upsert',
        props(type),
      );
      const rows = await snapshot(table);
      assert.deepEqual(
        rows.map((r) => Number(r['id'])).sort((a, b) => a - b),
        [...ids(1, 25), ...ids(101, 110)],
      );
      for (const r of rows) assert.equal(r['name'], `n${r['id']}-${Number(r['id']) > 100 ? 2 : Number(r['id']) >= 15 ? 4 : 1}`);
      const groups = (await (await HudiTable.open(openStorage(table))).fileSystemView()).fileGroups();
      assert.equal(new Set(groups.map((g) => `${g.partitionPath}/${bucketNumberOf(g.fileId)}`)).size, groups.length, 'one file group per bucket');
    });
  }

  it('bulk_insert into a Hudi 1.x bucket table is refused (not compared with Hudi 1.x), a new one too', async () => {
    for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ'] as const) {
      const table = join(tempDir(), `bucket_bulk_1x_${type}`);
      await assert.rejects(
        write(table, [row(1, 1)], 'bulk_insert', props(type, { 'hoodie.write.table.version': '8' })),
        (error: unknown) =>
          error instanceof UnsupportedLayoutError && error.layout === 'simple-bucket-index' && error.service === 'write' && /Hudi 1\.x/.test(error.message),
      );
      assert.equal(existsSync(table), false, 'nothing written');
    }
  });

  it('two writers creating the same new bucket at once: the second to commit conflicts (partition and bucket number)', async () => {
    const table = join(tempDir(), 'bucket_concurrent');
    const occ = { 'hoodie.write.concurrency.mode': 'optimistic_concurrency_control' };
    await write(table, [row(2, 1)], 'upsert', props('COPY_ON_WRITE', occ));
    // Id 4 hashes to bucket 3 of partition a, which has no file group yet: each writer creates one, with its own file id.
    let arrived = 0;
    let release!: () => void;
    const both = new Promise<void>((resolve) => (release = resolve));
    const afterDataFiles = async () => {
      arrived += 1;
      if (arrived === 2) release();
      await both;
    };
    const upsert = async (ts: number) => {
      const file = join(tempDir(), `batch-${ts}.jsonl`);
      await writeJsonLines(file, [row(4, ts)]);
      return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation: 'upsert', properties: props('COPY_ON_WRITE', occ), afterDataFiles });
    };
    const results = await Promise.allSettled([upsert(2), upsert(3)]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'one commits');
    const failed = results.find((r) => r.status === 'rejected');
    assert.ok(failed?.status === 'rejected' && failed.reason instanceof ConflictError, String(failed?.status === 'rejected' ? failed.reason : ''));
    const rows = await snapshot(table);
    assert.deepEqual(rows.map((r) => Number(r['id'])).sort(), [2, 4], 'no key twice');
    const groups = (await (await HudiTable.open(openStorage(table))).fileSystemView()).fileGroups();
    assert.equal(groups.length, 2, 'one file group per bucket');
  });

  it('refuses bad bucket settings, bulk_insert into an existing bucket and a missing index type before anything is written', async () => {
    const table = join(tempDir(), 'bucket_refusals');
    await write(
      table,
      ids(1, 8).map((id) => row(id, 1)),
      'upsert',
      props('COPY_ON_WRITE'),
    );
    const files = tableFiles(table);
    const refused = async (operation: WriteOptions['operation'], properties: Map<string, string>, pattern: RegExp) => {
      await assert.rejects(write(table, [row(2, 5)], operation, properties), (error: unknown) => error instanceof HudiError && pattern.test(error.message));
      assert.deepEqual(tableFiles(table), files, 'nothing written');
    };
    const without = props('COPY_ON_WRITE');
    without.delete('hoodie.bucket.index.num.buckets');
    await refused('upsert', without, /need hoodie\.bucket\.index\.num\.buckets/);
    await refused('upsert', props('COPY_ON_WRITE', { 'hoodie.bucket.index.num.buckets': '2' }), /but hoodie\.bucket\.index\.num\.buckets=2/);
    await refused('upsert', props('COPY_ON_WRITE', { 'hoodie.bucket.index.hash.field': 'name' }), /not a record key field/);
    // Row 2 hashes to a bucket of partition a that has a file group: Hudi's bulk_insert would open a second one.
    await refused('bulk_insert', props('COPY_ON_WRITE'), /bulk_insert would write records into bucket 0000000\d of partition "a", which has file group/);
    const bloom = props('COPY_ON_WRITE');
    bloom.delete('hoodie.index.type');
    await refused('upsert', bloom, /written with the simple bucket index/);
    await assert.rejects(
      write(table, [row(2, 5)], 'upsert', props('COPY_ON_WRITE', { 'hoodie.index.bucket.engine': 'CONSISTENT_HASHING' })),
      (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'consistent-hashing-bucket-index' && error.service === 'write',
    );
    assert.deepEqual(tableFiles(table), files, 'nothing written');

    // 8 buckets where the table has 4: the file ids pass (buckets 0..3 < 8), but key 5 is stored in bucket 0 and
    // hashes to bucket 4. Found once the keys are tagged, after the instant was requested: it is rolled back.
    await assert.rejects(
      write(table, [row(5, 5)], 'upsert', props('COPY_ON_WRITE', { 'hoodie.bucket.index.num.buckets': '8' })),
      (error: unknown) => error instanceof HudiError && /record key "5" is stored in file group 00000000-.* but hashes to bucket 4/.test(error.message),
    );
    const table0 = await HudiTable.open(openStorage(table));
    assert.equal(table0.timeline.completedWrites().length, 1, 'no write committed');
    assert.ok(
      (await snapshot(table)).every((r) => r['name'] === `n${r['id']}-1`),
      'no row changed',
    );
  });
});
