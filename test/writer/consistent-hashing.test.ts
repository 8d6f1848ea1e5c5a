/**
 * Our writes into consistent-hashing bucket-index tables (merge-on-read, version 6): each record to the file group its
 * partition's ring names, a node without one opening a group of log files only; a partition's first ring created as
 * Hudi creates it; the refusals before anything is written (no number of buckets for a first ring, a resize only Hudi
 * can confirm, file groups outside the ring, copy-on-write, bulk_insert, the engine not named).
 * The ring here is written by the test as Hudi writes it; test/interop/consistent-hashing-writes.test.ts takes Spark's.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { consistentHashOf, defaultHashingMetadata, type HashingNode, nodeFileId, nodeIndexOf } from '../../lib/table/consistent-hashing.js';
import { CONSISTENT_HASHING_METADATA_FOLDER, UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { tableFiles, tempDir } from '../helpers/paths.js';

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);
const row = (id: number, ts: number, dt = 'b') => ({ id, name: `n${id}-${ts}`, ts, dt });
const TABLE = {
  'hoodie.table.name': 'ch_t',
  'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.metadata.enable': 'false',
};
const INDEX = { 'hoodie.index.type': 'BUCKET', 'hoodie.index.bucket.engine': 'CONSISTENT_HASHING' };
/** Four nodes splitting the hash range evenly, as HoodieConsistentHashingMetadata's default ring does. */
const NODES: HashingNode[] = [0x20000000, 0x40000000, 0x60000000, 0x7fffffff].map((value, i) => ({
  value,
  fileIdPrefix: `0a1b2c3d-0000-4000-8000-00000000000${i}`,
}));

async function write(table: string, records: readonly object[], operation: WriteOptions['operation'], extra: Record<string, string> = INDEX) {
  const file = join(tempDir(), `batch-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeJsonLines(file, records);
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation, properties: new Map(Object.entries({ ...TABLE, ...extra })) });
}

function writeRing(table: string, partition: string, name = '00000000000000.hashing_meta', nodes: readonly HashingNode[] = NODES): void {
  const dir = join(table, CONSISTENT_HASHING_METADATA_FOLDER, partition);
  mkdirSync(dir, { recursive: true });
  const json = {
    version: 0,
    partitionPath: partition,
    instant: name.split('.')[0],
    numBuckets: nodes.length,
    seqNo: 0,
    nodes: nodes.map((n) => ({ ...n, tag: 'NORMAL' })),
  };
  writeFileSync(join(dir, name), JSON.stringify(json, null, 2));
  // As Hadoop's local file system leaves it beside the file (hidden from Hudi's listing).
  writeFileSync(join(dir, `.${name}.crc`), 'crc');
}

const nodeOf = (id: number) => nodeFileId(NODES[nodeIndexOf(NODES, consistentHashOf(String(id), ['id']))]!);

/** A merge-on-read table our writer made (partition a, no index), with a ring for partition b. */
async function tableWithRing(): Promise<string> {
  const table = join(tempDir(), 'ch_t');
  await write(
    table,
    ids(1, 3).map((id) => row(id, 1, 'a')),
    'upsert',
    {},
  );
  writeRing(table, 'b');
  return table;
}

const refusedLayout = (pattern: RegExp) => (error: unknown) =>
  error instanceof UnsupportedLayoutError && error.layout === 'consistent-hashing-bucket-index' && error.service === 'write' && pattern.test(error.message);

describe('writes into consistent-hashing bucket-index tables', () => {
  it("each record to its node's file group: new nodes open log-only groups at the write, later writes append; deletes and inserts too", async () => {
    const table = await tableWithRing();
    const first = await write(
      table,
      ids(10, 30).map((id) => row(id, 1)),
      'upsert',
    );
    const nodes = new Set(ids(10, 30).map(nodeOf));
    assert.ok(nodes.size > 1, 'the keys spread over several nodes');
    assert.deepEqual(new Set(first.stats.map((s) => s.fileId)), nodes, "one log file per node with records, in the node's file group");
    for (const s of first.stats) {
      assert.match(s.path!, new RegExp(`^b/\\.${s.fileId}_${first.instantTime}\\.log\\.1_`), 'a new group: log files only, based at the write');
      assert.equal(s.prevCommit, first.instantTime);
      assert.equal(s.numUpdateWrites, s.numWrites, "Hudi's consistent index locates every record: all count as updates");
    }

    const second = await write(table, [...ids(25, 35).map((id) => row(id, 2)), row(3, 2, 'b')], 'upsert');
    for (const s of second.stats) {
      assert.ok(s.path!.includes('.log.'), 'log files only');
      if (nodes.has(s.fileId)) assert.match(s.path!, new RegExp(`_${first.instantTime}\\.log\\.2_`), 'appended to the slice the first write opened');
    }
    await write(table, [row(10, 3), row(11, 3), row(999, 3)], 'delete');
    // insert is placed by the ring too (Hudi's bucket index tags inserts): new keys into their nodes' groups.
    const inserted = await write(
      table,
      ids(50, 53).map((id) => row(id, 4)),
      'insert',
    );
    assert.deepEqual(new Set(inserted.stats.map((s) => s.fileId)), new Set(ids(50, 53).map(nodeOf)));

    const rows = (await readSnapshot(await HudiTable.open(openStorage(table)), { includeMetaFields: true })).rows;
    const b = rows.filter((r) => r['dt'] === 'b');
    assert.deepEqual(
      b.map((r) => Number(r['id'])).sort((x, y) => x - y),
      [3, ...ids(12, 35), ...ids(50, 53)],
    );
    for (const r of b) {
      assert.ok(String(r['_hoodie_file_name']).startsWith(nodeOf(Number(r['id']))), `id ${r['id']} in its node's file group`);
      const id = Number(r['id']);
      assert.equal(r['name'], `n${id}-${id >= 50 ? 4 : id >= 25 || id === 3 ? 2 : 1}`);
    }
    assert.equal(rows.filter((r) => r['dt'] === 'a').length, 3);
  });

  it('refuses, before anything is written: no ring, a ring only Hudi can confirm, a file group outside the ring, and settings Hudi would not write with', async () => {
    const table = await tableWithRing();
    const before = tableFiles(table);
    await assert.rejects(
      write(table, [row(1, 2, 'a')], 'upsert'),
      refusedLayout(/partition "a" has no consistent-hashing metadata yet: .* which this write does not name/),
    );
    // Hudi's first ring for partition a would not hold its file groups: refused before the ring is written.
    await assert.rejects(
      write(table, [row(1, 2, 'a')], 'upsert', { ...INDEX, 'hoodie.bucket.index.num.buckets': '4' }),
      /file group .* of partition "a" is not a node of its hashing metadata/,
    );
    await assert.rejects(write(table, [row(40, 2)], 'bulk_insert'), refusedLayout(/bulk_insert into tables with the consistent-hashing bucket index/));
    await assert.rejects(
      write(table, [row(40, 2)], 'upsert', { 'hoodie.index.type': 'BUCKET' }),
      refusedLayout(/this write names hoodie\.index\.type=BUCKET, hoodie\.index\.bucket\.engine=\(unset\)/),
    );
    await assert.rejects(write(table, [row(40, 2)], 'upsert', {}), refusedLayout(/written with the consistent-hashing bucket index/));
    // A newer ring without a commit marker and not a resize on the timeline: only Hudi's recovery decides.
    assert.deepEqual(tableFiles(table), before, 'nothing written');
    writeRing(table, 'b', '20240101000000.hashing_meta');
    const before1 = tableFiles(table);
    await assert.rejects(write(table, [row(40, 2)], 'upsert'), refusedLayout(/no commit marker/));
    assert.deepEqual(tableFiles(table), before1, 'nothing written');

    // With its marker that ring (the same nodes) is the partition's; a file group outside the next ring is refused.
    writeFileSync(join(table, CONSISTENT_HASHING_METADATA_FOLDER, 'b', '20240101000000.commit'), '');
    await write(table, [row(40, 2)], 'upsert');
    const other = NODES.map((n, i) => ({ ...n, fileIdPrefix: `9f8e7d6c-0000-4000-8000-00000000000${i}` }));
    writeRing(table, 'b', '20240102000000.hashing_meta', other);
    writeFileSync(join(table, CONSISTENT_HASHING_METADATA_FOLDER, 'b', '20240102000000.commit'), '');
    const before2 = tableFiles(table);
    await assert.rejects(write(table, [row(41, 2)], 'upsert'), /is not a node of its hashing metadata .*20240102000000\.hashing_meta/);
    assert.deepEqual(tableFiles(table), before2, 'nothing written');
  });

  it("a partition's first write creates Hudi's first ring (hoodie.bucket.index.num.buckets nodes) and places records by it", async () => {
    const table = await tableWithRing();
    const written = await write(
      table,
      ids(1, 12).map((id) => row(id, 1, 'c')),
      'upsert',
      { ...INDEX, 'hoodie.bucket.index.num.buckets': '4' },
    );
    const first = defaultHashingMetadata('c', 4);
    assert.equal(readFileSync(join(table, first.metadata.file), 'utf8'), first.json);
    assert.deepEqual(
      first.metadata.nodes.map((n) => n.value),
      [536870912, 1073741824, 1610612736, 2147483647],
    );
    const nodeOfC = (id: number) => nodeFileId(first.metadata.nodes[nodeIndexOf(first.metadata.nodes, consistentHashOf(String(id), ['id']))]!);
    assert.deepEqual(new Set(written.stats.map((s) => s.fileId)), new Set(ids(1, 12).map(nodeOfC)));
    // The next write reads that ring back.
    const again = await write(table, [row(1, 2, 'c')], 'upsert');
    assert.deepEqual(
      again.stats.map((s) => s.fileId),
      [nodeOfC(1)],
    );
  });

  it('copy-on-write tables are refused', async () => {
    const table = join(tempDir(), 'ch_cow');
    await write(table, [row(1, 1, 'a')], 'upsert', { 'hoodie.datasource.write.table.type': 'COPY_ON_WRITE' });
    writeRing(table, 'a');
    const before = tableFiles(table);
    await assert.rejects(
      write(table, [row(2, 1, 'a')], 'upsert', { ...INDEX, 'hoodie.datasource.write.table.type': 'COPY_ON_WRITE' }),
      refusedLayout(/copy-on-write tables/),
    );
    assert.deepEqual(tableFiles(table), before, 'nothing written');
  });
});
