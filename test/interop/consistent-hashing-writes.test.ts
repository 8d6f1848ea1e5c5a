/**
 * Our writes into consistent-hashing bucket-index tables against Hudi 0.15 (Spark 3.5.1, merge-on-read, metadata table
 * on): our hash of a key is HashID.getXXHash32; on a table Spark created with 8 buckets a partition, every record
 * Spark wrote sits in the file group of the node our ring reading names. Our upsert (updates, new keys, nodes with no
 * file group yet) and delete append log files to the nodes' file groups; Spark upserts and deletes on top (no error,
 * no key twice, no file group outside the rings); our compaction, clean and archival keep every file id and the hashing
 * metadata; a new partition gets the first ring Spark would create; Spark compacts, then resizes (consistent-bucket
 * clustering), and we and Spark write into the new rings; every reader agrees at each step. Our clustering is refused.
 *
 * One Spark session, one table: five Spark writes (upsert, upsert, delete, upsert, upsert), one compaction and one
 * clustering.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { openStorage } from '../../lib/storage/index.js';
import {
  consistentHashOf,
  defaultHashingMetadata,
  type HashingMetadata,
  loadHashingMetadata,
  nodeFileId,
  nodeIndexOf,
  xxHash32,
} from '../../lib/table/consistent-hashing.js';
import { CONSISTENT_HASHING_METADATA_FOLDER, UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, type JavaExpression, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { archiveKeepingCommits } from '../helpers/interop-writer.js';
import { tableFiles, tempDir } from '../helpers/paths.js';
import { readsAlike } from '../helpers/reads-alike.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const row = (id: number, ts: number, dt = id % 2 === 0 ? 'a' : 'b') => ({ id, name: `n${id}-${ts}`, ts, dt });
const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
const NAME = 'ch_mor';
/** What a consistent-hashing writer names: Hudi keeps none of it in the table. */
const INDEX = {
  'hoodie.index.type': 'BUCKET',
  'hoodie.index.bucket.engine': 'CONSISTENT_HASHING',
  'hoodie.bucket.index.num.buckets': '8',
  'hoodie.datasource.write.partitionpath.field': 'dt',
};

const sparkOptions = (operation: string): Record<string, string> => ({
  ...mergeOnReadWriteOptions(1),
  'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
  'hoodie.table.name': NAME,
  'hoodie.datasource.write.operation': operation,
  'hoodie.table.timeline.timezone': 'UTC',
  ...INDEX,
});

let hudi: HudiHarness;

before(async () => {
  hudi = await startHudi();
});

after(async () => {
  await hudi?.close();
});

async function ourWrite(path: string, rows: readonly object[], operation: WriteOptions['operation']) {
  const file = join(tempDir('ch-batch-'), 'batch.jsonl');
  await writeJsonLines(file, rows);
  return writeBatch(openStorage(path), { input: { file, format: 'jsonl' }, operation, properties: new Map(Object.entries(INDEX)) });
}

/** The partitions' rings, as our writer reads them (every partition here has one). */
async function rings(path: string, partitions: Iterable<string> = ['a', 'b']): Promise<Map<string, HashingMetadata>> {
  const table = await HudiTable.open(openStorage(path));
  const out = new Map<string, HashingMetadata>();
  for (const dt of partitions) out.set(dt, (await loadHashingMetadata(table.storage, dt, table.timeline, 'test'))!);
  return out;
}

async function liveFileIds(path: string): Promise<string[]> {
  const view = await (await HudiTable.open(openStorage(path))).fileSystemView();
  return [...new Set(view.latestMergedSlices().map((s) => `${s.partitionPath}/${s.fileId}`))].sort();
}

/** Every row in the file group its node names, and every live file group a node's. */
async function assertPlacedByRing(path: string, rows: readonly Row[]): Promise<void> {
  const live = await liveFileIds(path);
  const ring = await rings(path, new Set([...rows.map((r) => String(r['dt'])), ...live.map((id) => id.split('/')[0]!)]));
  for (const r of rows) {
    const nodes = ring.get(String(r['dt']))!.nodes;
    const expected = nodeFileId(nodes[nodeIndexOf(nodes, consistentHashOf(String(r['id']), ['id']))]!);
    assert.ok(String(r['_hoodie_file_name']).startsWith(expected), `id ${r['id']} is in ${r['_hoodie_file_name']}, its node's file group is ${expected}`);
  }
  const nodeIds = new Set([...ring].flatMap(([dt, m]) => m.nodes.map((n) => `${dt}/${nodeFileId(n)}`)));
  for (const id of live) assert.ok(nodeIds.has(id), `file group ${id} is a node's`);
}

async function readAlike(path: string, expected: ReadonlyMap<number, number>): Promise<void> {
  const { rows, keys } = await readsAlike(hudi, path);
  assert.deepEqual(
    [...keys].sort((a, b) => a - b),
    [...expected.keys()].sort((a, b) => a - b),
  );
  for (const r of rows) assert.equal(r['name'], `n${r['id']}-${expected.get(Number(r['id']))}`, `id ${r['id']}`);
  await assertPlacedByRing(path, rows);
}

function apply(expected: Map<number, number>, keys: readonly number[], version: number | 'delete'): void {
  for (const id of keys) {
    if (version === 'delete') expected.delete(id);
    else expected.set(id, version);
  }
}

const hashingFiles = (path: string) => tableFiles(path).filter((f) => f.startsWith(`/${CONSISTENT_HASHING_METADATA_FOLDER}/`));

describe('writes into consistent-hashing bucket-index tables, against Hudi 0.15', () => {
  it("our hash of a key is HashID.getXXHash32 (lz4-java's XXHash32), on every length and on multi-byte text", async () => {
    const keys = [...ids(0, 40).map(String), '', 'abc', 'a'.repeat(15), 'b'.repeat(16), 'c'.repeat(17), 'x'.repeat(63), 'ünïcødé-ключ', '😀', 'id:7,dt:x'];
    const java = await hudi.jvmEval(keys.map((key): JavaExpression => ({ static: 'org.apache.hudi.common.util.hash.HashID.getXXHash32', args: [key, 0] })));
    assert.deepEqual(
      keys.map((key) => xxHash32(new TextEncoder().encode(key), 0)),
      java,
    );
  });

  it("Spark's table, our upsert/delete, Spark on top; our compaction, clean and archival; Spark's compaction and resize, then writes into the new ring; every reader agrees", async () => {
    const path = join(tempDir('ch-writes-'), NAME);
    const expected = new Map<number, number>();
    // Few keys for 8 nodes a partition: some nodes have no file group after Spark's insert.
    await hudi.write(path, { schema: SCHEMA, rows: ids(1, 8).map((id) => row(id, 1)), options: sparkOptions('upsert') });
    apply(expected, ids(1, 8), 1);
    const sparkMetadata = hashingFiles(path);
    assert.ok(sparkMetadata.length >= 2, `Spark wrote hashing metadata: ${sparkMetadata}`);
    // The first ring we would create for a partition is the one Spark created.
    const fields = (json: string) => {
      const { version, partitionPath, instant, numBuckets, seqNo, nodes } = JSON.parse(json) as Record<string, unknown>;
      return { version, partitionPath, instant, numBuckets, seqNo, nodes };
    };
    for (const dt of ['a', 'b']) {
      const spark = readFileSync(join(path, CONSISTENT_HASHING_METADATA_FOLDER, dt, '00000000000000.hashing_meta'), 'utf8');
      assert.deepEqual(fields(defaultHashingMetadata(dt, 8).json), fields(spark), `partition ${dt}'s first ring`);
    }
    await readAlike(path, expected);
    const sparkGroups = new Set(await liveFileIds(path));

    // Updates, new keys into Spark's file groups and into nodes without one.
    const upsert = await ourWrite(
      path,
      ids(5, 40).map((id) => row(id, 2)),
      'upsert',
    );
    apply(expected, ids(5, 40), 2);
    assert.ok(
      upsert.stats.every((s) => s.path!.includes('.log.')),
      'log files only',
    );
    const newGroups = upsert.stats.filter((s) => !sparkGroups.has(`${s.partitionPath}/${s.fileId}`));
    assert.ok(newGroups.length > 0, 'some nodes got their first file group');
    for (const s of newGroups) assert.ok(s.path!.includes(`_${s.prevCommit}.log.1_`), `${s.path}: a new group's slice starts at the write`);
    await ourWrite(
      path,
      [...ids(1, 3), 999].map((id) => row(id, 3, id === 999 ? 'a' : undefined)),
      'delete',
    );
    apply(expected, ids(1, 3), 'delete');
    await readAlike(path, expected);

    // Spark writes on top: it finds our file groups (no key twice, no file group outside the rings).
    await hudi.write(path, { schema: SCHEMA, rows: ids(35, 50).map((id) => row(id, 4)), options: sparkOptions('upsert') });
    apply(expected, ids(35, 50), 4);
    await hudi.write(path, { schema: SCHEMA, rows: [4, 6, 45].map((id) => row(id, 5)), options: sparkOptions('delete') });
    apply(expected, [4, 6, 45], 'delete');
    await readAlike(path, expected);

    // A new partition: we create its first ring as Hudi does (Spark writes into it below).
    await ourWrite(
      path,
      ids(100, 105).map((id) => row(id, 6, 'c')),
      'upsert',
    );
    apply(expected, ids(100, 105), 6);
    const metadataFiles = hashingFiles(path);
    assert.equal(metadataFiles.length, sparkMetadata.length + 1, 'one ring created');
    await readAlike(path, expected);

    // Our clustering is refused; nothing is written.
    const before0 = tableFiles(path);
    const engine = await openParquetEngine();
    try {
      const table = await HudiTable.open(openStorage(path), { mode: 'clustering' });
      const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
      const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.small.file.limit': '104857600' } }).config;
      await assert.rejects(
        runClusteringJob(table, { mode: 'scheduleAndExecute', config, lock, engine, tempDir: tempDir('ch-cluster-'), force: true }),
        (error: unknown) =>
          error instanceof UnsupportedLayoutError && error.service === 'clustering' && /SparkConsistentBucketClusteringPlanStrategy/.test(error.fix ?? ''),
      );
    } finally {
      await engine.close();
    }
    assert.deepEqual(tableFiles(path), before0, 'nothing written');

    // Our compaction, clean and archival keep every file id and the hashing metadata.
    const groups = await liveFileIds(path);
    const table = await HudiTable.open(openStorage(path), { mode: 'write' });
    const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
    const scheduled = await scheduleCompaction(table, compactionConfigFrom(new Map(), 'test'), { lock, force: true });
    assert.ok(scheduled, 'a compaction was scheduled');
    assert.equal((await runCompaction(await table.reload(), scheduled.instantTime, { lock })).outcome, 'committed');
    const cleanConfig = cleanConfigFromProperties(
      new Map([
        ['hoodie.cleaner.policy', 'KEEP_LATEST_FILE_VERSIONS'],
        ['hoodie.cleaner.fileversions.retained', '1'],
      ]),
    );
    assert.equal((await runClean(await table.reload(), { config: cleanConfig, lock })).outcome, 'cleaned');
    await archiveKeepingCommits(await table.reload(), 1, 2, { cleanConfig, lock });
    assert.deepEqual(await liveFileIds(path), groups, 'compaction, cleaning and archival keep every file id');
    assert.deepEqual(hashingFiles(path), metadataFiles, 'and the hashing metadata');
    await readAlike(path, expected);

    // We append to the compacted groups, Spark upserts and compacts on top.
    await ourWrite(
      path,
      ids(10, 20).map((id) => row(id, 6)),
      'upsert',
    );
    apply(expected, ids(10, 20), 6);
    await hudi.write(path, { schema: SCHEMA, rows: ids(18, 25).map((id) => row(id, 7)), options: sparkOptions('upsert') });
    apply(expected, ids(18, 25), 7);
    const procedureOptions = Object.entries({ ...INDEX, 'hoodie.datasource.write.recordkey.field': 'id' })
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    await hudi.sql(
      `CALL run_compaction(op => 'scheduleAndExecute', path => '${path}', options => '${procedureOptions},hoodie.compact.inline.max.delta.commits=1')`,
    );
    const view = await (await HudiTable.open(openStorage(path))).fileSystemView();
    assert.ok(
      view.latestMergedSlices().every((s) => s.baseFile !== undefined && s.logFiles.length === 0),
      'Hudi compacted every file group',
    );
    assert.deepEqual(await liveFileIds(path), groups, "Hudi's compaction keeps the file ids");
    await readAlike(path, expected);

    // Hudi's resize (consistent-bucket clustering, every node split: files far above the split threshold) on top of
    // our writes; we read the new ring from the completed replacecommit and write into its nodes, and Spark on top.
    const resize = {
      'hoodie.clustering.plan.strategy.class': 'org.apache.hudi.client.clustering.plan.strategy.SparkConsistentBucketClusteringPlanStrategy',
      'hoodie.clustering.execution.strategy.class': 'org.apache.hudi.client.clustering.run.strategy.SparkConsistentBucketClusteringExecutionStrategy',
      'hoodie.bucket.index.max.num.buckets': '16',
      'hoodie.parquet.max.file.size': '1024',
    };
    const resizeOptions = Object.entries(resize)
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
    await hudi.sql(`CALL run_clustering(path => '${path}', options => '${procedureOptions},${resizeOptions}')`);
    const resized = await rings(path, ['a', 'b', 'c']);
    assert.ok(
      ['a', 'b'].every((dt) => resized.get(dt)!.instant !== '00000000000000' && resized.get(dt)!.nodes.length > 8),
      `Hudi split the nodes: ${[...resized.values()].map((m) => `${m.file} ${m.nodes.length}`)}`,
    );
    const after = await ourWrite(
      path,
      ids(1, 30).map((id) => row(id, 8)),
      'upsert',
    );
    apply(expected, ids(1, 30), 8);
    const resizedIds = new Set([...resized].flatMap(([dt, m]) => m.nodes.map((n) => `${dt}/${nodeFileId(n)}`)));
    assert.ok(
      after.stats.every((s) => resizedIds.has(`${s.partitionPath}/${s.fileId}`)),
      'our write went to the new ring',
    );
    await hudi.write(path, {
      schema: SCHEMA,
      rows: [...ids(28, 33), ...ids(103, 108)].map((id) => row(id, 9, id >= 100 ? 'c' : undefined)),
      options: sparkOptions('upsert'),
    });
    apply(expected, [...ids(28, 33), ...ids(103, 108)], 9);
    await readAlike(path, expected);
  });
});
