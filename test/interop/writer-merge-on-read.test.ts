/**
 * Our delta commits on merge-on-read tables against real Hudi 0.15 (Spark 3.5.1): on a Spark-written table with the
 * metadata table, our upserts (into the small file, and into log files), deletes and inserts read in Spark exactly as
 * in our reader (snapshot and read-optimized); HoodieMetadataTableValidator's file checks pass; Spark writes and
 * compacts on top of ours; our compaction compacts our log files too; a killed write is rolled back by the next one
 * with nothing of it visible.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { checkMetadataTable } from '../../lib/metadata/check.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { runKilledWrite } from '../helpers/killed-write.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, price DOUBLE, amount DECIMAL(10,2), day DATE, at TIMESTAMP, ts BIGINT, dt STRING';
const row = (id: number, ts: number, tag: string) => ({
  id,
  name: `n${id}-${tag}`,
  price: id * 1.5,
  amount: `${id}.25`,
  day: `2024-01-0${(id % 9) + 1}`,
  at: `2024-02-0${(id % 9) + 1}T10:00:00.123456Z`,
  ts,
  dt: id % 2 === 1 ? 'a' : 'b',
});
const sparkOptions = (operation: string) => ({
  ...mergeOnReadWriteOptions(),
  'hoodie.table.name': 'mor_w',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.metadata.enable': 'true',
});
const OUR_PROPS = new Map([['hoodie.index.bloom.num_entries', '1000']]);
const PROPS = new Map([['hoodie.compact.inline.max.delta.commits', '1']]);

async function ourWrite(table: string, rows: readonly object[], operation: WriteOptions['operation'], extra: Record<string, string> = {}) {
  const file = join(tempDir(), `batch-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeJsonLines(file, rows);
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation, properties: new Map([...OUR_PROPS, ...Object.entries(extra)]) });
}
async function ours(path: string, queryType?: QueryType): Promise<Row[]> {
  const table = await HudiTable.open(openStorage(path));
  return (await readSnapshot(table, { includeMetaFields: true, ...(queryType === undefined ? {} : { queryType }) })).rows;
}
async function spark(hudi: HudiHarness, path: string, queryType?: QueryType): Promise<Row[]> {
  return (await hudi.read(path, { options: queryType === undefined ? {} : { 'hoodie.datasource.query.type': queryType } })).rows;
}
const ids = (rows: readonly Row[]) => rows.map((r) => Number(r['id'])).sort((a, b) => a - b);

describe('merge-on-read writes: Hudi 0.15 reads our delta commits', () => {
  let hudi: HudiHarness;
  let table: string;
  let copy: string;

  before(async () => {
    hudi = await startHudi();
    const root = tempDir('mor-write-');
    table = join(root, 'mor_w');
    await hudi.write(table, { schema: SCHEMA, rows: [1, 2, 3, 4, 5, 6].map((id) => row(id, 1, 'ins')), options: sparkOptions('insert') });
    copy = join(root, 'copy');
  });
  after(async () => {
    await hudi?.close();
  });

  it('upsert into the small file, upserts and deletes into logs, an insert next to them: Spark reads them as we do', async () => {
    // Inserts 7, 8 and updates of 1, 2: one small file per partition takes both (a new base file version).
    const r1 = await ourWrite(table, [row(1, 2, 'u1'), row(2, 2, 'u1'), row(7, 1, 'ins'), row(8, 1, 'ins')], 'upsert');
    assert.ok(r1.stats.every((s) => s.path!.endsWith('.parquet')));
    // Updates alone: log files.
    const r2 = await ourWrite(table, [row(1, 3, 'u2'), row(4, 3, 'u2'), row(5, 3, 'u2')], 'upsert');
    assert.ok(r2.stats.every((s) => s.path!.includes('.log.')));
    // A delete into logs (a second log version where 1 and 5 live) and an update with a smaller ordering value.
    const r3 = await ourWrite(table, [row(3, 1, 'del'), row(5, 1, 'del')], 'delete');
    assert.equal(r3.deleted, 2);
    assert.ok(r3.stats.every((s) => s.path!.includes('.log.')));
    // Inserts: the slices have logs, so new file groups.
    const r4 = await ourWrite(table, [row(9, 1, 'ins'), row(10, 1, 'ins')], 'insert');
    assert.ok(r4.stats.every((s) => s.prevCommit === 'null' && s.path!.endsWith('.parquet')));
    assert.ok(r1.metadataTable.deltaCommit !== undefined && r4.metadataTable.deltaCommit !== undefined);
    cpSync(table, copy, { recursive: true });

    const snapshot = await spark(hudi, table);
    assert.deepEqual(ids(snapshot), [1, 2, 4, 6, 7, 8, 9, 10]);
    assert.deepEqual(canonicalRows(await ours(table)), canonicalRows(snapshot));
    assert.equal(snapshot.find((r) => Number(r['id']) === 1)!['name'], 'n1-u2');
    const ro = await spark(hudi, table, 'read_optimized');
    assert.deepEqual(canonicalRows(await ours(table, 'read_optimized')), canonicalRows(ro));
    assert.equal(ro.find((r) => Number(r['id']) === 1)!['name'], 'n1-u1');

    const report = await hudi.validateMetadataTable(table, ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups']);
    assert.deepEqual(report.errors, []);
    assert.deepEqual(
      Object.entries(report.checks)
        .filter(([, check]) => check.status !== 'passed')
        .map(([name, check]) => `${name}: ${check.details}`),
      [],
    );
  });

  it('Spark writes and compacts on top of our log files; our compaction compacts them too', async () => {
    await hudi.write(table, { schema: SCHEMA, rows: [row(2, 5, 'spark'), row(11, 1, 'spark')], options: sparkOptions('upsert') });
    await hudi.sql(`CALL run_compaction(op => 'scheduleAndExecute', path => '${table}')`);
    const compacted = await spark(hudi, table);
    assert.deepEqual(ids(compacted), [1, 2, 4, 6, 7, 8, 9, 10, 11]);
    assert.equal(compacted.find((r) => Number(r['id']) === 1)!['name'], 'n1-u2');
    assert.equal(compacted.find((r) => Number(r['id']) === 2)!['name'], 'n2-spark');
    assert.deepEqual(canonicalRows(await ours(table)), canonicalRows(compacted));

    // Ours on the copy: every slice with our logs becomes a base file; Spark's snapshot is unchanged.
    const beforeRows = canonicalRows((await ours(copy)).map(({ _hoodie_file_name: _f, ...rest }) => rest));
    const t = await HudiTable.open(openStorage(copy));
    const lock = lockProviderFor(t.config.properties, t.config.name, t.storage);
    const scheduled = await scheduleCompaction(t, compactionConfigFrom(PROPS, 'test'), { lock, force: true, properties: PROPS });
    assert.ok(scheduled);
    await runCompaction(await HudiTable.open(openStorage(copy)), scheduled.instantTime, { lock, properties: PROPS });
    const afterSpark = await spark(hudi, copy);
    assert.deepEqual(canonicalRows(afterSpark.map(({ _hoodie_file_name: _f, ...rest }) => rest)), beforeRows);
  });

  it('a killed delta commit is rolled back by the next write: neither reader sees it', async () => {
    const input = join(tempDir(), 'killed.jsonl');
    await writeJsonLines(input, [row(4, 9, 'killed'), row(6, 9, 'killed')]);
    const propsFile = join(tempDir(), 'write.properties');
    writeFileSync(propsFile, 'hoodie.index.bloom.num_entries=1000\n');
    const killed = runKilledWrite(table, input, propsFile, 'upsert');
    assert.notEqual(killed.code, 3, killed.stderr);
    const next = await ourWrite(table, [row(8, 9, 'after')], 'upsert');
    assert.ok(next.instantTime);
    const timeline = await loadTimeline(openStorage(table), TIMELINE_LAYOUT_1);
    assert.equal(timeline.pending().filter((i) => i.action === 'deltacommit').length, 0);
    assert.ok(timeline.completed().some((i) => i.action === 'rollback'));
    const rows = await spark(hudi, table);
    assert.ok(rows.every((r) => r['name'] !== 'n4-killed' && r['name'] !== 'n6-killed'));
    assert.equal(rows.find((r) => Number(r['id']) === 8)!['name'], 'n8-after');
    assert.deepEqual(canonicalRows(await ours(table)), canonicalRows(rows));
    // The rollback's log file (a rollback block) and the killed write's are in the metadata table's files.
    const report = await hudi.validateMetadataTable(table, ['partitions', 'latest-file-slices', 'all-file-groups']);
    assert.deepEqual(report.errors, []);
    assert.deepEqual(
      Object.entries(report.checks)
        .filter(([, check]) => check.status !== 'passed')
        .map(([name, check]) => `${name}: ${check.details}`),
      [],
    );
  });

  it('a merge-on-read table we create (no metadata table) reads in Spark as in our reader', async () => {
    const path = join(tempDir('mor-ours-'), 'mor_ours');
    const create = {
      'hoodie.table.name': 'mor_ours',
      'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.precombine.field': 'ts',
      'hoodie.datasource.write.partitionpath.field': 'dt',
      'hoodie.metadata.enable': 'false',
    };
    await ourWrite(
      path,
      [1, 2, 3, 4].map((id) => row(id, 1, 'ins')),
      'insert',
      create,
    );
    await ourWrite(path, [row(1, 2, 'up'), row(2, 2, 'up')], 'upsert', create);
    await ourWrite(path, [row(4, 2, 'del')], 'delete', create);
    const snapshot = await spark(hudi, path);
    assert.deepEqual(ids(snapshot), [1, 2, 3]);
    assert.deepEqual(canonicalRows(await ours(path)), canonicalRows(snapshot));
    const ro = await spark(hudi, path, 'read_optimized');
    assert.deepEqual(ids(ro), [1, 2, 3, 4]);
    assert.deepEqual(canonicalRows(await ours(path, 'read_optimized')), canonicalRows(ro));
  });

  it('with record_index and bloom_filters in the metadata table, our delta commits keep both as Hudi does', async () => {
    const path = join(tempDir('mor-rli-'), 'mor_rli');
    const indexed = {
      ...sparkOptions('insert'),
      'hoodie.table.name': 'mor_rli',
      'hoodie.metadata.record.index.enable': 'true',
      'hoodie.metadata.index.bloom.filter.enable': 'true',
    };
    await hudi.write(path, { schema: SCHEMA, rows: [1, 2, 3, 4, 5, 6].map((id) => row(id, 1, 'ins')), options: indexed });
    // Inserts with updates (the small file is rewritten: new records in the index), updates alone (logs), deletes (logs).
    await ourWrite(path, [row(1, 2, 'u1'), row(7, 1, 'ins'), row(8, 1, 'ins')], 'upsert');
    await ourWrite(path, [row(2, 3, 'u2'), row(3, 3, 'u2')], 'upsert');
    await ourWrite(path, [row(4, 1, 'del')], 'delete');
    const report = await hudi.validateMetadataTable(path, [
      'latest-file-slices',
      'all-file-groups',
      'bloom-filters',
      'record-index-count',
      'record-index-content',
    ]);
    assert.deepEqual(report.errors, []);
    assert.deepEqual(
      Object.entries(report.checks)
        .filter(([, check]) => check.status !== 'passed')
        .map(([name, check]) => `${name}: ${check.details}`),
      [],
    );
    // Our own record-index check (doctor's) agrees with the validator's on log-file records too.
    assert.deepEqual((await checkMetadataTable(openStorage(path)))?.recordIndexMismatches, []);
    const snapshot = await spark(hudi, path);
    assert.deepEqual(ids(snapshot), [1, 2, 3, 5, 6, 7, 8]);
    assert.deepEqual(canonicalRows(await ours(path)), canonicalRows(snapshot));
  });
});
