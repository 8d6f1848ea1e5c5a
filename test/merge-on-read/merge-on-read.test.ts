/**
 * Merge-on-read snapshot reads over log files we write with lib/log-format (no Spark): which blocks count (committed,
 * inflight, rolled back, corrupt, after the query instant), delete blocks, `_hoodie_is_deleted`, and the payload
 * rules between log records and onto base records. Spark's agreement on real tables is test/interop/merge-on-read-read.
 */
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { avroDataBlock, type DeleteRecord, deleteBlock, type LogBlockInput, rollbackCommandBlock, writeLogFile } from '../../lib/log-format/index.js';
import { compareOrdering, mergeLogRecords, mergeOntoBase } from '../../lib/merge-on-read/payload-merge.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { formatTableProperties, newTableProperties } from '../../lib/table/config.js';
import { PAYLOAD_CLASSES } from '../../lib/table/payload.js';
import { HudiTable } from '../../lib/table/table.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = {
  type: 'record',
  name: 't_record',
  namespace: 'hoodie.t',
  fields: [
    ...['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'].map((name) => ({
      name,
      type: ['null', 'string'],
      default: null,
    })),
    { name: 'id', type: 'int' },
    { name: 'ts', type: 'long' },
    { name: 'amount', type: ['null', { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 }], default: null },
    { name: 'day', type: ['null', { type: 'int', logicalType: 'date' }], default: null },
    { name: 'at', type: ['null', { type: 'long', logicalType: 'timestamp-micros' }], default: null },
    { name: '_hoodie_is_deleted', type: ['null', 'boolean'], default: null },
  ],
};
const FILE_ID = 'abc-0';

function record(time: string, id: number, ts: number, deleted = false) {
  return {
    _hoodie_commit_time: { string: time },
    _hoodie_commit_seqno: { string: `${time}_0_${id}` },
    _hoodie_record_key: { string: String(id) },
    _hoodie_partition_path: { string: '' },
    _hoodie_file_name: { string: FILE_ID },
    id,
    ts: BigInt(ts),
    amount: { bytes: Buffer.from([0x04, 0xd2]) }, // 12.34
    day: { int: 19723 }, // 2024-01-01
    at: { long: 1_704_067_200_123_456n },
    _hoodie_is_deleted: { boolean: deleted },
  };
}
const data = (time: string, rows: ReturnType<typeof record>[]): LogBlockInput =>
  avroDataBlock({ instantTime: time, schema: SCHEMA, records: rows, wrapUnions: true, longs: 'bigint' });
const deletes = (time: string, records: DeleteRecord[]): LogBlockInput => deleteBlock({ instantTime: time, records });

/** A non-partitioned MOR table of log-only slices (base instant = the first delta commit), instants as given. */
async function morTable(options: {
  payload?: string;
  instants: Record<string, 'completed' | 'inflight'>;
  logs: LogBlockInput[][];
}): Promise<{ root: string; storage: LocalStorage }> {
  const root = tempDir('mor-unit-');
  const storage = new LocalStorage(root);
  const props = newTableProperties({ tableName: 't', recordKeyFields: ['id'], partitionFields: [], precombineField: 'ts' });
  props.set('hoodie.table.type', 'MERGE_ON_READ');
  if (options.payload !== undefined) props.set('hoodie.compaction.payload.class', options.payload);
  await storage.put('.hoodie/hoodie.properties', formatTableProperties(props));
  await storage.put('.hoodie_partition_metadata', '#partition metadata\ncommitTime=00000000000000000\npartitionDepth=0\n');
  for (const [time, state] of Object.entries(options.instants)) {
    await storage.put(`.hoodie/${time}.deltacommit.requested`, '');
    await storage.put(`.hoodie/${time}.deltacommit.inflight`, '{}');
    if (state === 'completed') await storage.put(`.hoodie/${time}.deltacommit`, '{}');
  }
  const baseInstant = Object.keys(options.instants).sort()[0]!;
  for (const blocks of options.logs) await writeLogFile(storage, { partitionPath: '', fileId: FILE_ID, baseInstant, writeToken: '0-1-2', blocks });
  return { root, storage };
}

async function read(storage: LocalStorage, asOf?: string): Promise<Row[]> {
  const table = await HudiTable.open(storage);
  const rows = (await readSnapshot(table, { includeMetaFields: true, ...(asOf === undefined ? {} : { asOf }) })).rows;
  return [...rows].sort((a, b) => Number(a['id']) - Number(b['id']));
}
const pick = (rows: Row[]) => rows.map((row) => [row['id'], row['ts'], row['_hoodie_commit_time']]);

const T1 = '20240101000000001';
const T2 = '20240101000000002';
const T3 = '20240101000000003';
const T4 = '20240101000000004';

describe('merge-on-read snapshot reads of log files', () => {
  it('values read as the Parquet engine gives them: decimals, dates, timestamps, longs', async () => {
    const { storage } = await morTable({ instants: { [T1]: 'completed' }, logs: [[data(T1, [record(T1, 1, 1)])]] });
    const [row] = await read(storage);
    assert.deepEqual(row, {
      _hoodie_commit_time: T1,
      _hoodie_commit_seqno: `${T1}_0_1`,
      _hoodie_record_key: '1',
      _hoodie_partition_path: '',
      _hoodie_file_name: FILE_ID,
      id: 1,
      ts: 1,
      amount: '12.34',
      day: '2024-01-01',
      at: '2024-01-01T00:00:00.123456Z',
      _hoodie_is_deleted: false,
    });
  });

  it('skips blocks of inflight and unknown instants, and stops at a block after the query instant', async () => {
    const { storage } = await morTable({
      instants: { [T1]: 'completed', [T2]: 'inflight', [T3]: 'completed' },
      logs: [
        [data(T1, [record(T1, 1, 1), record(T1, 2, 1)])],
        [data(T2, [record(T2, 1, 9)])],
        [data('20240101000000009', [record('20240101000000009', 2, 9)])],
        [data(T3, [record(T3, 3, 1)])],
      ],
    });
    // T9 is not on the timeline: skipped, not a stop; the newer-than-latest rule stops at T9 > T3 though, so 3 is not read.
    assert.deepEqual(pick(await read(storage)), [
      [1, 1, T1],
      [2, 1, T1],
    ]);
    assert.deepEqual(pick(await read(storage, T1)), [
      [1, 1, T1],
      [2, 1, T1],
    ]);
  });

  it('a rollback command block drops the queued blocks of its target; corrupt (torn) blocks are skipped', async () => {
    const { root, storage } = await morTable({
      instants: { [T1]: 'completed', [T2]: 'completed', [T4]: 'completed' },
      logs: [
        [data(T1, [record(T1, 1, 1)])],
        [data(T2, [record(T2, 1, 2), record(T2, 2, 2)])],
        [rollbackCommandBlock({ instantTime: T3, targetInstantTime: T2 })],
      ],
    });
    assert.deepEqual(pick(await read(storage)), [[1, 1, T1]]);
    // A torn append: a block header cut short, then a later good block in a new file.
    appendFileSync(join(root, '.abc-0_20240101000000001.log.3_0-1-2'), Buffer.from('#HUDI#\x00\x00\x00\x00\x00\x00\x01\x00junk', 'latin1'));
    await writeLogFile(storage, { partitionPath: '', fileId: FILE_ID, baseInstant: T1, writeToken: '0-1-2', blocks: [data(T4, [record(T4, 4, 4)])] });
    assert.deepEqual(pick(await read(storage)), [
      [1, 1, T1],
      [4, 4, T4],
    ]);
  });

  it('delete blocks and _hoodie_is_deleted remove keys; a later record brings one back', async () => {
    const { storage } = await morTable({
      instants: { [T1]: 'completed', [T2]: 'completed', [T3]: 'completed' },
      logs: [
        [data(T1, [record(T1, 1, 5), record(T1, 2, 5), record(T1, 3, 5)])],
        [
          deletes(T2, [
            { recordKey: '1', partitionPath: '', orderingValue: { type: 'int', value: 0 } },
            { recordKey: '2', partitionPath: '', orderingValue: { type: 'long', value: 1n } },
          ]),
          data(T2, [record(T2, 3, 6, true)]),
        ],
        [data(T3, [record(T3, 1, 1)])],
      ],
    });
    // 1: deleted (natural order), then re-inserted; 2: the delete's ordering value 1 is below the stored 5, so kept;
    // 3: soft-deleted.
    assert.deepEqual(pick(await read(storage)), [
      [1, 1, T3],
      [2, 5, T1],
    ]);
  });

  it('between log records the greater precombine value wins (the later on a tie), whatever the payload', async () => {
    for (const payload of [PAYLOAD_CLASSES.overwriteWithLatest, PAYLOAD_CLASSES.default]) {
      const { storage } = await morTable({
        payload,
        instants: { [T1]: 'completed', [T2]: 'completed' },
        logs: [[data(T1, [record(T1, 1, 5), record(T1, 2, 5)])], [data(T2, [record(T2, 1, 4), record(T2, 2, 5)])]],
      });
      assert.deepEqual(
        pick(await read(storage)),
        [
          [1, 5, T1],
          [2, 5, T2],
        ],
        payload,
      );
    }
  });
});

describe('payload rules onto the base record', () => {
  const base: Row = { id: 1, ts: 5, name: 'base' };
  const log = (ts: number, deleted = false) => ({ kind: 'data' as const, row: { id: 1, ts, name: 'log', _hoodie_is_deleted: deleted }, ordering: ts });
  const overwrite = { className: PAYLOAD_CLASSES.overwriteWithLatest, orderingAgainstStored: false, source: 'default' as const };
  const eventTime = { className: PAYLOAD_CLASSES.default, orderingAgainstStored: true, source: 'hoodie.properties' as const };

  it('OverwriteWithLatestAvroPayload takes the log record; DefaultHoodieRecordPayload keeps a greater stored value', () => {
    assert.equal(mergeOntoBase(overwrite, base, 5, log(1))?.['name'], 'log');
    assert.equal(mergeOntoBase(eventTime, base, 5, log(1))?.['name'], 'base');
    assert.equal(mergeOntoBase(eventTime, base, 5, log(5))?.['name'], 'log');
    assert.equal(mergeOntoBase(eventTime, base, 5, log(1, true))?.['name'], 'base', 'an older soft delete loses to the stored record');
    assert.equal(mergeOntoBase(overwrite, base, 5, log(1, true)), undefined);
    assert.equal(mergeOntoBase(eventTime, base, 5, { kind: 'delete', ordering: null }), undefined);
    assert.equal(mergeOntoBase(overwrite, base, 5, undefined), base);
  });

  it('a delete record after a data record: natural order unless its ordering value is real, of the same type, and lower', () => {
    const older = log(5);
    assert.equal(mergeLogRecords(older, { kind: 'delete', ordering: { type: 'int', value: 0 } }).kind, 'delete');
    assert.equal(mergeLogRecords(older, { kind: 'delete', ordering: { type: 'long', value: 4n } }).kind, 'data');
    assert.equal(mergeLogRecords(older, { kind: 'delete', ordering: { type: 'long', value: 6n } }).kind, 'delete');
    assert.equal(mergeLogRecords(older, { kind: 'delete', ordering: { type: 'string', value: 'a' } }).kind, 'delete', 'another type: natural order');
  });

  it('orders values as Java compares them: numbers, long digit strings, decimals, timestamps of any precision', () => {
    assert.ok(compareOrdering(2, 10) < 0);
    assert.ok(compareOrdering('9007199254740993', '9007199254740992') > 0);
    assert.ok(compareOrdering('10.5', '9.75') > 0);
    assert.ok(compareOrdering('2024-01-01T00:00:00.123Z', '2024-01-01T00:00:00.123456Z') < 0);
    assert.ok(compareOrdering(null, 0) < 0);
    assert.equal(compareOrdering('b', 'b'), 0);
  });
});
