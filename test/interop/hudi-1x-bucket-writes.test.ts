/**
 * Our delta commits into simple-bucket-index merge-on-read tables of Hudi 1.0.2 (table version 8) and 1.1.1 (table
 * version 9), judged by that release on Spark 3.5.1 with the metadata table on (its default partitions). Spark creates
 * the table (4 buckets); its upserts and ours alike put a bucket's inserts and updates into a log file of the bucket's
 * file group (named by the delta commit) and a new bucket's records into a base file, with the same counts in the
 * write stats. Spark upserts on top of ours without error and without a key twice; Spark (metadata table on and off),
 * hudi_metadata() and our reader agree after every write, and after Spark's compaction of our log files.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { openStorage } from '../../lib/storage/index.js';
import { bucketIdOf } from '../../lib/table/bucket-index.js';
import { bucketNumberOf } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import type { WriteStat } from '../../lib/timeline/commit-metadata.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS } from '../helpers/hudi-1x-fixtures.js';
import { assertMetadata1xAgrees } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

type Row = { id: number; name: string; ts: number; dt: string };
const row = (id: number, ts: number, dt = id % 3 === 0 ? 'x' : 'y'): Row => ({ id, name: `n${id}-${ts}`, ts, dt });
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
const BUCKETS = 4;
const SPEC = { numBuckets: BUCKETS, hashFields: ['id'] };

function bucketOptions(name: string): Record<string, string> {
  return {
    'hoodie.table.name': name,
    'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.index.type': 'BUCKET',
    'hoodie.bucket.index.num.buckets': String(BUCKETS),
  };
}

function sparkOptions(name: string, operation: string): Record<string, string> {
  return {
    ...bucketOptions(name),
    'hoodie.datasource.write.operation': operation,
    'hoodie.embed.timeline.server': 'false',
    'hoodie.compact.inline': 'false',
    'hoodie.clean.automatic': 'false',
    'hoodie.archive.automatic': 'false',
    'hoodie.upsert.shuffle.parallelism': '1',
    'hoodie.insert.shuffle.parallelism': '1',
  };
}

/** Each written file: a log file of a bucket that had a file group, else a new bucket's base file; its counts. */
interface FileShape {
  readonly existingBucket: boolean;
  readonly logFile: boolean;
  readonly allUpdates: boolean;
}

async function latestWriteStats(path: string): Promise<{ time: string; stats: WriteStat[] }> {
  const table = await HudiTable.open(openStorage(path));
  const instant = table.timeline.completedWrites().at(-1)!;
  const metadata = await readCommitMetadata(table.storage, instant, table.timeline.layout);
  return { time: instant.time, stats: Object.values(metadata.partitionToWriteStats).flat() };
}

async function bucketsOf(path: string): Promise<Set<string>> {
  const view = await (await HudiTable.open(openStorage(path))).fileSystemView();
  return new Set(view.latestMergedSlices().map((s) => `${s.partitionPath}/${bucketNumberOf(s.fileId)}`));
}

function shapes(stats: readonly WriteStat[], before: ReadonlySet<string>, time: string): FileShape[] {
  return stats.map((s) => {
    const logFile = s.path!.includes('.log.');
    // 1.x names a log file after the delta commit that wrote it, version 1.
    if (logFile) assert.ok(s.path!.includes(`_${time}.log.1_`), `${s.path}: named by ${time}`);
    return {
      existingBucket: before.has(`${s.partitionPath}/${bucketNumberOf(s.fileId)}`),
      logFile,
      allUpdates: s.numInserts === 0 && s.numUpdateWrites === s.numWrites,
    };
  });
}

/** The distinct shapes of a write's files, as text (for comparing ours with Spark's). */
const distinct = (list: readonly FileShape[]) => [...new Set(list.map((s) => JSON.stringify(s)))].sort();

for (const version of HUDI_1X_VERSIONS) {
  describe(`writes into simple-bucket-index merge-on-read tables, against Hudi ${version}`, () => {
    let hudi: HudiHarness;

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
    });

    after(async () => {
      await hudi?.close();
    });

    it("Spark's and our upserts write alike (log files for existing buckets, base files for new ones); Spark writes and compacts on top; every reader agrees", async () => {
      const name = `b1x_${version.replaceAll('.', '')}`;
      const path = join(tempDir('bucket-1x-'), name);
      const expected = new Map<number, string>();
      const apply = (rows: readonly Row[], deleted = false) => {
        for (const r of rows) {
          if (deleted) expected.delete(r.id);
          else expected.set(r.id, r.name);
        }
      };
      const sparkWrite = async (operation: string, rows: readonly Row[]) => {
        await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows, options: sparkOptions(name, operation) });
      };
      const ourWrite = async (operation: WriteOperation, rows: readonly Row[]) => {
        const file = join(tempDir('bucket-1x-batch-'), 'batch.jsonl');
        await writeJsonLines(file, rows);
        return writeBatch(openStorage(path), { input: { file, format: 'jsonl' }, operation, properties: new Map(Object.entries(bucketOptions(name))) });
      };
      const agree = async (step: string) => {
        await assertMetadata1xAgrees(hudi, path, step);
        const rows = (await hudi.read(path)).rows;
        const keys = rows.map((r) => Number(r['id']));
        assert.equal(new Set(keys).size, keys.length, `${step}: no key twice`);
        assert.deepEqual(rows.map((r) => `${r['id']}=${r['name']}`).sort(), [...expected].map(([id, name]) => `${id}=${name}`).sort(), step);
        for (const r of rows) {
          assert.equal(bucketNumberOf(String(r['_hoodie_file_name'])), bucketIdOf(String(r['id']), SPEC), `${step}: id ${r['id']} in its hash bucket`);
        }
        const slices = (await (await HudiTable.open(openStorage(path))).fileSystemView()).latestMergedSlices();
        const buckets = slices.map((s) => `${s.partitionPath}/${bucketNumberOf(s.fileId)}`);
        assert.equal(new Set(buckets).size, buckets.length, `${step}: one file group per bucket`);
      };

      const first = ids(1, 6).map((id) => row(id, 1));
      await sparkWrite('insert', first);
      apply(first);
      const config = (await HudiTable.open(openStorage(path))).config;
      assert.equal(config.version, version === '1.0.2' ? 8 : 9);

      // Spark's upsert: updates, inserts into its buckets, and a new partition's buckets.
      let before = await bucketsOf(path);
      const spark = [...ids(4, 14).map((id) => row(id, 2)), row(100, 2, 'z')];
      await sparkWrite('upsert', spark);
      apply(spark);
      const sparkStats = await latestWriteStats(path);
      const sparkShapes = shapes(sparkStats.stats, before, sparkStats.time);
      await agree('after Spark upsert');

      // Ours: the same kinds of records.
      before = await bucketsOf(path);
      const ours = [...ids(10, 30).map((id) => row(id, 3)), row(200, 3, 'w')];
      const written = await ourWrite('upsert', ours);
      apply(ours);
      const ourShapes = shapes(written.stats, before, written.instantTime);
      for (const shape of [...sparkShapes, ...ourShapes]) assert.equal(shape.logFile, shape.existingBucket, JSON.stringify(shape));
      assert.ok(ourShapes.some((s) => s.logFile) && ourShapes.some((s) => !s.logFile), 'our upsert wrote log files and base files');
      assert.deepEqual(distinct(ourShapes), distinct(sparkShapes), "our files are shaped as Spark's (kind and counts)");
      await agree('after our upsert');

      // Spark upserts on top of ours, we insert and delete, Spark again.
      const again = [...ids(25, 40).map((id) => row(id, 4)), row(200, 4, 'w')];
      await sparkWrite('upsert', again);
      apply(again);
      await agree('after Spark upsert on ours');
      const inserts = ids(41, 50).map((id) => row(id, 5));
      await ourWrite('insert', inserts);
      apply(inserts);
      const deletes = [row(1, 6), row(12, 6), row(999, 6)];
      await ourWrite('delete', deletes);
      apply(deletes, true);
      await agree('after our insert and delete');

      // Spark compacts our log files, then writes again.
      const procedureOptions = Object.entries(bucketOptions(name))
        .map(([key, value]) => `${key}=${value}`)
        .join(',');
      await hudi.sql(
        `CALL run_compaction(op => 'scheduleAndExecute', path => '${path}', options => '${procedureOptions},hoodie.compact.inline.max.delta.commits=1')`,
      );
      const compacted = (await HudiTable.open(openStorage(path))).timeline.completed().filter((i) => i.action === 'commit');
      assert.equal(compacted.length, 1, 'Spark compacted');
      await agree('after Spark compaction');
      const last = ids(45, 55).map((id) => row(id, 7));
      await ourWrite('upsert', last);
      apply(last);
      await sparkWrite('upsert', [row(2, 8)]);
      apply([row(2, 8)]);
      await agree('after writes on the compacted table');
    });
  });
}
