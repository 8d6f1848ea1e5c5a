/**
 * Merge-on-read writes (delta commits): inserts into new base files and into the one small base file Hudi picks,
 * updates and deletes into log files of the latest slice, several in a row; read back by our snapshot and
 * read-optimized readers, the log files decoded block by block. Spark's agreement is test/interop/writer-merge-on-read.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { generateUsers, type UserRecord, writeJsonLines } from '../../lib/cli/generate.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { listLogFiles, readAvroDataBlock, readDeleteBlock, readLogFile } from '../../lib/log-format/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { parseCommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { listMarkers, type Marker } from '../../lib/timeline/markers.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { type CandidateFile, planBuckets } from '../../lib/writer/small-files.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { writeConfigFromProperties } from '../../lib/writer/write-config.js';
import { tempDir } from '../helpers/paths.js';

const PROPS = new Map([
  ['hoodie.table.name', 'users_mor'],
  ['hoodie.datasource.write.table.type', 'MERGE_ON_READ'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  ['hoodie.index.bloom.num_entries', '1000'],
  ['hoodie.metadata.enable', 'false'],
]);

async function write(table: string, records: Iterable<object>, operation: WriteOptions['operation'], extra: Record<string, string> = {}) {
  const file = join(tempDir(), `batch-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeJsonLines(file, records);
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation, properties: new Map([...PROPS, ...Object.entries(extra)]) });
}

function users(count: number, seed: number, idStart = 1, days = 2): UserRecord[] {
  return [...generateUsers({ count, seed, idStart, startDate: '2024-01-01', days })];
}

async function rows(table: string, queryType: 'snapshot' | 'read_optimized' = 'snapshot') {
  const snapshot = await readSnapshot(await HudiTable.open(openStorage(table)), { includeMetaFields: true, queryType });
  return new Map(snapshot.rows.map((r) => [r['id'] as number, r]));
}

/** A JSON-lines input file holding `record` alone. */
async function oneRecordFile(record: object): Promise<string> {
  const file = join(tempDir(), 'one.jsonl');
  await writeJsonLines(file, [record]);
  return file;
}

/** A compaction scheduled now (forced), the metadata table left out, and what runs it. */
async function forceCompaction(table: string): Promise<{ instantTime: string; run: () => Promise<unknown> }> {
  const storage = openStorage(table);
  const opened = await HudiTable.open(storage);
  const lock = lockProviderFor(opened.config.properties, opened.config.name, storage);
  const properties = new Map([['hoodie.metadata.enable', 'false']]);
  const scheduled = await scheduleCompaction(opened, compactionConfigFrom(properties, 'test'), { lock, force: true, properties });
  assert.ok(scheduled);
  return { instantTime: scheduled.instantTime, run: async () => runCompaction(await HudiTable.open(storage), scheduled.instantTime, { lock, properties }) };
}

/** The snapshot has `first`'s ten rows, the first one's update to v2 and the second one's to v3. */
async function assertBothUpdates(table: string, first: readonly UserRecord[]): Promise<void> {
  const snapshot = await rows(table);
  assert.equal(snapshot.get(first[0]!.id)!['name'], 'v2');
  assert.equal(snapshot.get(first[1]!.id)!['name'], 'v3');
  assert.equal(snapshot.size, 10);
}

describe('merge-on-read writes', () => {
  it('insert creates base files in a deltacommit; upserts and deletes go to new log versions; both views read right', async () => {
    const table = join(tempDir(), 'users_mor');
    const first = users(40, 1);
    const r1 = await write(table, first, 'insert');
    assert.equal(r1.inserted, 40);
    const storage = openStorage(table);
    for (const suffix of ['deltacommit.requested', 'deltacommit.inflight', 'deltacommit']) {
      assert.ok(await storage.head(`.hoodie/${r1.instantTime}.${suffix}`), suffix);
    }
    const t = await HudiTable.open(storage);
    assert.equal(t.config.type, 'MERGE_ON_READ');
    assert.equal(t.config.properties.get('hoodie.compaction.payload.class'), 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload');

    // Upsert 10 existing ids: small-file limit 0 keeps every group from being rewritten, so all go to logs.
    const updates = first.slice(0, 10).map((u) => ({ ...u, name: `${u.name}-v2`, createTime: `${u.dt} 23:59:59` }));
    const r2 = await write(table, updates, 'upsert', { 'hoodie.parquet.small.file.limit': '0' });
    assert.equal(r2.updated, 10);
    assert.ok(r2.stats.every((s) => s.path?.includes('.log.1_')));
    const text = Buffer.from(await storage.get(`.hoodie/${r2.instantTime}.deltacommit`)).toString('utf8');
    assert.equal(parseCommitMetadata(text, 'deltacommit').operationType, 'UPSERT');
    assert.match(text, /"logVersion" : 1/);
    assert.match(text, /"logOffset" : 0/);
    assert.match(text, /"baseFile" : "[^"]+\.parquet"/);

    // The log file: one Avro data block with Hudi's headers and meta fields.
    const stat = r2.stats[0]!;
    const logs = await listLogFiles(storage, stat.partitionPath!, { fileId: stat.fileId });
    assert.equal(logs.length, 1);
    const blocks = await readLogFile(storage, logs[0]!.path);
    assert.deepEqual(
      blocks.map((b) => b.type),
      ['AVRO_DATA_BLOCK'],
    );
    assert.equal(blocks[0]!.header.INSTANT_TIME, r2.instantTime);
    const records = readAvroDataBlock(blocks[0]!) as Record<string, unknown>[];
    assert.equal(records.length, stat.numWrites);
    for (const record of records) {
      assert.equal(record['_hoodie_file_name'], stat.fileId);
      assert.equal(record['_hoodie_commit_time'], r2.instantTime);
      assert.match(String(record['_hoodie_name'] ?? record['name']), /-v2$/);
    }

    // Delete 5 of the updated ids and 1 never updated; a second log version of each touched group.
    const gone = [...first.slice(0, 5), first[20]!];
    const r3 = await write(table, gone, 'delete', { 'hoodie.parquet.small.file.limit': '0' });
    assert.equal(r3.deleted, 6);
    for (const s of r3.stats) {
      const blocks3 = await readLogFile(storage, s.path!);
      assert.deepEqual(
        blocks3.map((b) => b.type),
        ['DELETE_BLOCK'],
      );
      const deleted = readDeleteBlock(blocks3[0]!);
      assert.ok(deleted.every((d) => d.orderingValue?.type === 'int' && d.orderingValue.value === 0));
    }

    const snapshot = await rows(table);
    assert.equal(snapshot.size, 34);
    for (const u of gone) assert.equal(snapshot.has(u.id), false);
    for (const u of updates.slice(5)) {
      assert.equal(snapshot.get(u.id)!['name'], u.name);
      assert.equal(snapshot.get(u.id)!['_hoodie_commit_time'], r2.instantTime);
    }
    for (const u of first.slice(21)) assert.equal(snapshot.get(u.id)!['name'], u.name);
    // Read-optimized: the base files only, untouched by the logs.
    const ro = await rows(table, 'read_optimized');
    assert.equal(ro.size, 40);
    assert.equal(ro.get(first[0]!.id)!['name'], first[0]!.name);
    const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
    assert.equal(timeline.completedWrites().filter((i) => i.action === 'deltacommit').length, 3);
  });

  it('inserts go to the smallest base file of a slice without logs (one candidate), rewritten in the deltacommit', async () => {
    const table = join(tempDir(), 'users_mor');
    const first = users(30, 4, 1, 1);
    await write(table, first, 'insert');
    const second = users(5, 5, 100, 1);
    const r2 = await write(table, second, 'insert');
    assert.equal(r2.inserted, 5);
    assert.equal(r2.stats.length, 1);
    assert.match(r2.stats[0]!.path!, /\.parquet$/);
    assert.notEqual(r2.stats[0]!.prevCommit, 'null');
    // An upsert with inserts: the small file takes its update too (the small-file correction rewrites the base file).
    const r3 = await write(table, [{ ...first[0]!, name: 'changed', createTime: '2024-01-01 23:59:59' }, ...users(3, 6, 200, 1)], 'upsert');
    assert.deepEqual(
      r3.stats.map((s) => s.path!.endsWith('.parquet')),
      [true],
    );
    // Updates alone: no partition has inserts, so no small file: a log file.
    const r4 = await write(table, [{ ...first[1]!, name: 'changed', createTime: '2024-01-01 23:59:59' }], 'upsert');
    assert.match(r4.stats[0]!.path!, /\.log\.1_/);
    // Inserts now find no small file (the only slice has a log) → a new file group.
    const r5 = await write(table, users(2, 8, 300, 1), 'insert');
    assert.equal(r5.stats.length, 1);
    assert.equal(r5.stats[0]!.prevCommit, 'null');
    assert.notEqual(r5.stats[0]!.fileId, r4.stats[0]!.fileId);
    const snapshot = await rows(table);
    assert.equal(snapshot.size, 40);
    assert.equal(snapshot.get(first[0]!.id)!['name'], 'changed');
    assert.equal(snapshot.get(first[1]!.id)!['name'], 'changed');
  });

  it('planBuckets (merge-on-read): only the smallest log-free slice outside compaction takes inserts; other updates append', () => {
    const config = writeConfigFromProperties(new Map([['hoodie.parquet.small.file.limit', '1000']]));
    const file = (index: number, size: number, extra: Partial<CandidateFile> = {}): CandidateFile => ({
      index,
      partitionPath: 'p',
      fileId: `f${index}`,
      size,
      instantTime: '20240101000000000',
      inPendingClustering: false,
      ...extra,
    });
    const files = [file(0, 500), file(1, 100, { hasLogFiles: true }), file(2, 300), file(3, 200, { inPendingCompaction: true })];
    const plan = planBuckets({
      operation: 'upsert',
      insertsByPartition: new Map([['p', 2]]),
      updatesByFile: new Map([
        [0, 1],
        [2, 1],
      ]),
      files,
      averageRecordSize: 10,
      config,
      newFileId: () => 'new-0',
      mergeOnRead: { smallFileGroupCandidatesLimit: 1 },
    });
    assert.deepEqual(
      plan.buckets.map((b) => `${b.kind}:${b.fileId}`),
      ['APPEND:f0', 'UPDATE:f2'],
    );
    assert.deepEqual(plan.insertAssignments, [{ partitionPath: 'p', start: 0, count: 2, bucket: 1 }]);
  });

  it('a failed delta commit is rolled back with a rollback command block; readers skip its log records', async () => {
    const table = join(tempDir(), 'users_mor');
    const first = users(20, 7, 1, 1);
    await write(table, first, 'insert');
    const storage = openStorage(table);
    // Fail after the log file is written: the write rolls itself back.
    await assert.rejects(
      writeBatch(storage, {
        input: {
          file: await oneRecordFile({ ...first[1]!, name: 'never', createTime: '2024-01-01 23:59:59' }),
          format: 'jsonl',
        },
        operation: 'upsert',
        properties: new Map([...PROPS, ['hoodie.parquet.small.file.limit', '0']]),
        afterDataFiles: async () => {
          throw new Error('injected');
        },
      }),
      /injected/,
    );
    const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
    const rollbacks = timeline.completed().filter((i) => i.action === 'rollback');
    assert.equal(rollbacks.length, 1);
    const logs = await listLogFiles(storage, first[1]!.dt);
    const commandBlocks = (await Promise.all(logs.map((l) => readLogFile(storage, l.path)))).flat().filter((b) => b.type === 'COMMAND_BLOCK');
    assert.equal(commandBlocks.length, 1);
    assert.equal(commandBlocks[0]!.header.INSTANT_TIME, rollbacks[0]!.time);
    const snapshot = await rows(table);
    assert.equal(snapshot.get(first[1]!.id)!['name'], first[1]!.name);
    // The next write appends after the rolled-back log and the rollback block; its records count.
    await write(table, [{ ...first[1]!, name: 'later', createTime: '2024-01-01 23:59:59' }], 'upsert', { 'hoodie.parquet.small.file.limit': '0' });
    assert.equal((await rows(table)).get(first[1]!.id)!['name'], 'later');
  });

  it("a Hudi 1.x table (version 8): log files named by the delta commit behind CREATE markers; a failed one's rollback deletes them", async () => {
    const table = join(tempDir(), 'users_mor_v8');
    const v8 = { 'hoodie.write.table.version': '8', 'hoodie.parquet.small.file.limit': '0' };
    const first = users(20, 7, 1, 1);
    await write(table, first, 'insert', v8);
    const storage = openStorage(table);
    const upsert = await write(table, [{ ...first[1]!, name: 'updated', createTime: '2024-01-01 23:59:59' }], 'upsert', v8);
    const logs = await listLogFiles(storage, first[1]!.dt);
    assert.deepEqual(
      logs.map((l) => [l.name.baseInstant, l.name.version]),
      [[upsert.instantTime, 1]],
    );
    const blocks = await readLogFile(storage, logs[0]!.path);
    assert.deepEqual(
      blocks.map((b) => [b.type, Object.keys(b.header).sort()]),
      [['AVRO_DATA_BLOCK', ['INSTANT_TIME', 'SCHEMA']]],
    );
    assert.equal((await rows(table)).get(first[1]!.id)!['name'], 'updated');

    let markers: Marker[] = [];
    let failedLog = '';
    await assert.rejects(
      writeBatch(storage, {
        input: {
          file: await oneRecordFile({ ...first[1]!, name: 'never', createTime: '2024-01-02 23:59:59' }),
          format: 'jsonl',
        },
        operation: 'upsert',
        properties: new Map([...PROPS, ...Object.entries(v8)]),
        afterDataFiles: async () => {
          const pending = (await HudiTable.open(storage)).timeline.pending()[0]!.time;
          markers = await listMarkers(storage, pending);
          failedLog = (await listLogFiles(storage, first[1]!.dt)).find((l) => l.name.baseInstant === pending)?.path ?? '';
          throw new Error('injected');
        },
      }),
      /injected/,
    );
    assert.deepEqual(
      markers.map((m) => m.type),
      ['CREATE'],
    );
    assert.ok(failedLog !== '' && (await storage.head(failedLog)) === undefined, `${failedLog} deleted by the rollback`);
    const after = await listLogFiles(storage, first[1]!.dt);
    assert.deepEqual(
      after.map((l) => l.path),
      logs.map((l) => l.path),
    );
    assert.equal((await rows(table)).get(first[1]!.id)!['name'], 'updated');
  });

  it('refuses what it does not write (parquet log blocks, log-indexing indexes, a bucket index the table lacks) before anything is written', async () => {
    const table = join(tempDir(), 'users_mor');
    const first = users(5, 9, 1, 1);
    await write(table, first, 'insert');
    const storage = openStorage(table);
    const instants = async () => (await loadTimeline(storage, TIMELINE_LAYOUT_1)).instants.length;
    const before = await instants();
    await assert.rejects(write(table, first.slice(0, 1), 'upsert', { 'hoodie.logfile.data.block.format': 'parquet' }), /writes Avro data blocks/);
    // The bucket index on a table written without it: no number of buckets, then file ids without bucket numbers.
    await assert.rejects(write(table, first.slice(0, 1), 'upsert', { 'hoodie.index.type': 'bucket' }), /need hoodie\.bucket\.index\.num\.buckets/);
    await assert.rejects(
      write(table, first.slice(0, 1), 'upsert', { 'hoodie.index.type': 'bucket', 'hoodie.bucket.index.num.buckets': '4' }),
      /not a bucket's/,
    );
    await assert.rejects(write(table, first.slice(0, 1), 'upsert', { 'hoodie.index.type': 'HBASE' }), /that index puts inserts in log files/);
    assert.equal(await instants(), before);
  });

  it("updates to a file group under a pending compaction go to the compaction instant's slice, which the compaction keeps", async () => {
    const table = join(tempDir(), 'users_mor');
    const first = users(10, 10, 1, 1);
    await write(table, first, 'bulk_insert');
    const noSmallFiles = { 'hoodie.parquet.small.file.limit': '0' };
    await write(table, [{ ...first[0]!, name: 'v2', createTime: '2024-01-01 23:59:58' }], 'upsert', noSmallFiles);
    const storage = openStorage(table);
    const scheduled = await forceCompaction(table);
    const r = await write(table, [{ ...first[1]!, name: 'v3', createTime: '2024-01-01 23:59:59' }], 'upsert', noSmallFiles);
    const stat = r.stats[0]!;
    assert.equal(stat.prevCommit, scheduled.instantTime);
    assert.ok(stat.path!.includes(`_${scheduled.instantTime}.log.1_`), stat.path!);
    assert.match(Buffer.from(await storage.get(`.hoodie/${r.instantTime}.deltacommit`)).toString('utf8'), /"baseFile" : ""/);
    // Before and after the compaction, the snapshot has both updates.
    await assertBothUpdates(table, first);
    await scheduled.run();
    await assertBothUpdates(table, first);
    const ro = await rows(table, 'read_optimized');
    assert.equal(ro.get(first[0]!.id)!['name'], 'v2');
    assert.equal(ro.get(first[1]!.id)!['name'], first[1]!.name);
  });
  it('a Hudi 1.x table (version 8) with a pending compaction: its plan is read from the layout-2 timeline; both updates survive it', async () => {
    const table = join(tempDir(), 'users_mor_v8_compaction');
    const v8 = { 'hoodie.write.table.version': '8', 'hoodie.parquet.small.file.limit': '0', 'hoodie.metadata.enable': 'false' };
    const first = users(10, 11, 1, 1);
    await write(table, first, 'bulk_insert', v8);
    await write(table, [{ ...first[0]!, name: 'v2', createTime: '2024-01-01 23:59:58' }], 'upsert', v8);
    const scheduled = await forceCompaction(table);
    const r = await write(table, [{ ...first[1]!, name: 'v3', createTime: '2024-01-01 23:59:59' }], 'upsert', v8);
    // 1.x names the log file after the delta commit that wrote it, whichever slice it joins.
    assert.ok(r.stats[0]!.path!.includes(`_${r.instantTime}.log.1_`), r.stats[0]!.path!);
    await assertBothUpdates(table, first);
    await scheduled.run();
    await assertBothUpdates(table, first);
  });
});
