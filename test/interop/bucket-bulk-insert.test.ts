/**
 * Our bulk_insert into simple-bucket-index tables (4 buckets) against Hudi 0.15 (Spark 3.5.1), copy-on-write and
 * merge-on-read: into a table it creates and into a table Spark created (metadata table on), in a partition of new
 * buckets, one base file per bucket as Hudi's row writer writes them; Spark upserts on top without error and without
 * a key twice, Spark (metadata table on and off) and our reader read the same rows, and Hudi's metadata table
 * validator agrees with the files. Our bulk_insert of records into a bucket that has a file group is refused before
 * anything is written: Spark's own bulk_insert there opens a second file group, and its next upsert then fails.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { HudiError } from '../../lib/errors.js';
import { openStorage } from '../../lib/storage/index.js';
import { bucketIdOf } from '../../lib/table/bucket-index.js';
import { bucketNumberOf } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tableFiles, tempDir } from '../helpers/paths.js';
import { assertBucketsKept, readsAlike } from '../helpers/reads-alike.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
type Row = { id: number; name: string; ts: number; dt: string };
const row = (id: number, ts: number, dt = id % 3 === 0 ? 'x' : 'y'): Row => ({ id, name: `n${id}-${ts}`, ts, dt });
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
const BUCKETS = 4;
const SPEC = { numBuckets: BUCKETS, hashFields: ['id'] };

type TableType = 'COPY_ON_WRITE' | 'MERGE_ON_READ';

function tableOptions(name: string, type: TableType): Record<string, string> {
  return {
    'hoodie.table.name': name,
    'hoodie.datasource.write.table.type': type,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.index.type': 'BUCKET',
    'hoodie.bucket.index.num.buckets': String(BUCKETS),
  };
}

function sparkOptions(name: string, type: TableType, operation: string): Record<string, string> {
  return {
    ...mergeOnReadWriteOptions(1),
    ...tableOptions(name, type),
    'hoodie.datasource.write.operation': operation,
    'hoodie.table.timeline.timezone': 'UTC',
  };
}

let hudi: HudiHarness;

before(async () => {
  hudi = await startHudi();
});

after(async () => {
  await hudi?.close();
});

async function ourBulkInsert(path: string, name: string, type: TableType, rows: readonly Row[], operation: WriteOptions['operation'] = 'bulk_insert') {
  const file = join(tempDir('bucket-bulk-batch-'), 'batch.jsonl');
  await writeJsonLines(file, rows);
  return writeBatch(openStorage(path), { input: { file, format: 'jsonl' }, operation, properties: new Map(Object.entries(tableOptions(name, type))) });
}

/** Our bulk_insert's files: one new base file per (partition, hash bucket) of its rows, named `<bucket>…-0`. */
function assertNewBuckets(stats: Awaited<ReturnType<typeof writeBatch>>['stats'], rows: readonly Row[]): void {
  const want = new Set(rows.map((r) => `${r.dt}/${bucketIdOf(String(r.id), SPEC)}`));
  assert.deepEqual(new Set(stats.map((s) => `${s.partitionPath}/${bucketNumberOf(s.fileId)}`)), want, 'a file group per bucket written');
  assert.equal(stats.length, want.size);
  for (const s of stats) assert.ok(s.path!.endsWith('.parquet') && s.fileId.endsWith('-0'), `${s.path}: a new bucket's base file`);
}

/**
 * Spark with the metadata table on and off and our reader read the same rows, no key twice, the expected names,
 * every row in the file group of its hash bucket, one file group per bucket, and Hudi's validator agrees.
 */
async function readAlike(path: string, expected: ReadonlyMap<number, string>): Promise<void> {
  const { rows, keys } = await readsAlike(hudi, path);
  assert.deepEqual(
    [...keys].sort((a, b) => a - b),
    [...expected.keys()].sort((a, b) => a - b),
  );
  for (const r of rows) assert.equal(r['name'], expected.get(Number(r['id'])), `id ${r['id']}`);
  await assertBucketsKept(path, rows, SPEC);
  const report = await hudi.validateMetadataTable(path);
  assert.ok(report.ok, `Hudi's metadata table validator: ${report.errors.join('; ')}`);
}

function apply(expected: Map<number, string>, rows: readonly Row[]): void {
  for (const r of rows) expected.set(r.id, r.name);
}

describe('bulk_insert into simple-bucket-index tables, against Hudi 0.15', () => {
  for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ'] as const) {
    const what = type === 'COPY_ON_WRITE' ? 'copy-on-write' : 'merge-on-read';
    const action = type === 'COPY_ON_WRITE' ? 'commit' : 'deltacommit';

    it(`${what}: our bulk_insert creates the table, Spark upserts on top (metadata table on), every reader agrees`, async () => {
      const name = `bb_fresh_${type === 'COPY_ON_WRITE' ? 'cow' : 'mor'}`;
      const path = join(tempDir('bucket-bulk-'), name);
      const expected = new Map<number, string>();
      const first = ids(1, 30).map((id) => row(id, 1));
      const written = await ourBulkInsert(path, name, type, first);
      apply(expected, first);
      assertNewBuckets(written.stats, first);
      const table = await HudiTable.open(openStorage(path));
      assert.deepEqual(
        table.timeline.completedWrites().map((i) => i.action),
        [action],
      );
      const upsert = [...ids(20, 45).map((id) => row(id, 2)), row(50, 2, 'z')];
      await hudi.write(path, { schema: SCHEMA, rows: upsert, options: sparkOptions(name, type, 'upsert') });
      apply(expected, upsert);
      await readAlike(path, expected);
    });

    it(`${what}: our bulk_insert into a new partition of Spark's table, Spark upserts on top; into an existing bucket refused`, async () => {
      const name = `bb_existing_${type === 'COPY_ON_WRITE' ? 'cow' : 'mor'}`;
      const path = join(tempDir('bucket-bulk-'), name);
      const expected = new Map<number, string>();
      const sparkRows = ids(1, 12).map((id) => row(id, 1));
      await hudi.write(path, { schema: SCHEMA, rows: sparkRows, options: sparkOptions(name, type, 'insert') });
      apply(expected, sparkRows);

      // A record of a bucket Spark's file groups hold: refused whole, before anything is written.
      const files = tableFiles(path);
      await assert.rejects(
        ourBulkInsert(path, name, type, [row(2, 3), row(200, 3, 'w')]),
        (error: unknown) => error instanceof HudiError && /bulk_insert would write records into bucket \d{8} of partition "y"/.test(error.message),
      );
      assert.deepEqual(tableFiles(path), files, 'nothing written');

      const bulk = ids(100, 125).map((id) => row(id, 4, 'w'));
      const written = await ourBulkInsert(path, name, type, bulk);
      apply(expected, bulk);
      assertNewBuckets(written.stats, bulk);
      await readAlike(path, expected);

      const upsert = [...ids(5, 15).map((id) => row(id, 5)), ...ids(110, 130).map((id) => row(id, 5, 'w'))];
      await hudi.write(path, { schema: SCHEMA, rows: upsert, options: sparkOptions(name, type, 'upsert') });
      apply(expected, upsert);
      await readAlike(path, expected);
      // And we upsert on top of Spark into the buckets our bulk_insert created.
      const ours = ids(120, 135).map((id) => row(id, 6, 'w'));
      await ourBulkInsert(path, name, type, ours, 'upsert');
      apply(expected, ours);
      await readAlike(path, expected);
    });
  }

  it("Spark's bulk_insert into a bucket that has a file group opens a second one, and its next upsert fails", async () => {
    const name = 'bb_spark_twice';
    const path = join(tempDir('bucket-bulk-'), name);
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 12).map((id) => row(id, 1)), options: sparkOptions(name, 'COPY_ON_WRITE', 'insert') });
    await hudi.write(path, { schema: SCHEMA, rows: [row(2, 2)], options: sparkOptions(name, 'COPY_ON_WRITE', 'bulk_insert') });
    const groups = (await (await HudiTable.open(openStorage(path))).fileSystemView()).latestMergedSlices().filter((s) => s.partitionPath === 'y');
    const bucket = bucketIdOf('2', SPEC);
    assert.equal(groups.filter((s) => bucketNumberOf(s.fileId) === bucket).length, 2, `two file groups of bucket ${bucket}`);
    // Its bucket index loads the buckets of the partitions a write touches: an upsert into partition y fails.
    await assert.rejects(
      hudi.write(path, { schema: SCHEMA, rows: [row(4, 3)], options: sparkOptions(name, 'COPY_ON_WRITE', 'upsert') }),
      (error: unknown) => error instanceof Error && /multiple files/i.test(error.message),
    );
  });
});
