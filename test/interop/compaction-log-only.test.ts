/**
 * Compaction of file slices of log files only, against real Hudi 0.15 (Spark 3.5.1): a merge-on-read table written
 * with the in-memory index (which indexes log files, so Spark writes inserts into log files: no base file in any slice); after our
 * compaction each file group has a base file typed from the table schema, Spark's snapshot is unchanged and its
 * read-optimized view equals it, and Spark writes and reads on top.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import type { Row } from '../../lib/engine/row-format.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { canonicalRows, type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, amount DECIMAL(10,2), at TIMESTAMP, ts BIGINT, dt STRING';
const row = (id: number, ts: number, tag: string) => ({
  id,
  name: `n${id}-${tag}`,
  amount: `${id}.25`,
  at: `2024-02-0${(id % 9) + 1}T10:00:00.123456Z`,
  ts,
  dt: id % 2 === 1 ? 'a' : 'b',
});
const options = (operation: string, index = 'SIMPLE') => ({
  ...mergeOnReadWriteOptions(),
  'hoodie.table.name': 'mor_bucket',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.index.type': index,
  'hoodie.metadata.enable': 'false',
});
const withoutFileName = (rows: readonly Row[]) => canonicalRows(rows.map(({ _hoodie_file_name: _name, ...rest }) => rest));

describe('compaction of log-only file slices: ours and Hudi 0.15 agree', () => {
  let hudi: HudiHarness;
  let table: string;

  before(async () => {
    hudi = await startHudi();
    table = join(tempDir('mor-log-only-'), 't');
    // One write: the in-memory index knows only this job's records (a second job would insert the same keys again).
    const rows = [...[1, 2, 3, 4, 5, 6, 7].map((id) => row(id, 1, 'ins')), row(1, 2, 'up'), row(4, 2, 'up')];
    await hudi.write(table, { schema: SCHEMA, rows, options: options('upsert', 'INMEMORY') });
  });

  after(async () => {
    await hudi?.close();
  });

  it('compacts slices without a base file into base files Spark reads as the same snapshot', async () => {
    const t = await HudiTable.open(openStorage(table));
    const slices = (await t.fileSystemView()).latestMergedSlices();
    assert.ok(slices.length > 0 && slices.every((slice) => slice.baseFile === undefined && slice.logFiles.length > 0), 'Spark wrote log files only');
    const before0 = (await hudi.read(table)).rows;
    const lock = lockProviderFor(t.config.properties, t.config.name, t.storage);
    const scheduled = await scheduleCompaction(t, compactionConfigFrom(new Map(), 'test'), { lock, force: true });
    assert.ok(scheduled);
    assert.ok(scheduled.plan.operations.every((op) => op.dataFilePath === null));
    const result = await runCompaction(await t.reload(), scheduled.instantTime, { lock });
    assert.equal(result.outcome, 'committed');
    const snapshot = (await hudi.read(table)).rows;
    assert.deepEqual(withoutFileName(snapshot), withoutFileName(before0));
    const ro = (await hudi.read(table, { options: { 'hoodie.datasource.query.type': 'read_optimized' } })).rows;
    assert.deepEqual(canonicalRows(ro), canonicalRows(snapshot), 'the base files hold the snapshot');
    const ours = async (queryType: QueryType) => (await readSnapshot(await HudiTable.open(openStorage(table)), { includeMetaFields: true, queryType })).rows;
    assert.deepEqual(canonicalRows(await ours('snapshot')), canonicalRows(snapshot));
    assert.deepEqual(canonicalRows(await ours('read_optimized')), canonicalRows(ro));
    // Spark writes on top of our base files (its simple index finds the key in them) and reads what we read.
    await hudi.write(table, { schema: SCHEMA, rows: [row(2, 9, 'again')], options: options('upsert') });
    const last = (await hudi.read(table)).rows;
    assert.equal(last.find((r) => Number(r['id']) === 2)?.['name'], 'n2-again');
    assert.equal(last.length, 7);
    assert.deepEqual(canonicalRows(await ours('snapshot')), canonicalRows(last));
  });
});
