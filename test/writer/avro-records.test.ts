/**
 * Table rows as Avro records for merge-on-read data blocks (lib/writer/avro-records.ts): two's-complement decimals as
 * Java's BigInteger.toByteArray writes them, logical types, nested values; and the round trip through a data block and
 * the merge-on-read reader's conversion back (lib/merge-on-read/avro-rows.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { avroDataBlock, decodeLogBlocks, encodeLogBlock, readAvroDataBlock } from '../../lib/log-format/index.js';
import { avroRecordToRow } from '../../lib/merge-on-read/avro-rows.js';
import type { AvroRecordSchema } from '../../lib/table/schema.js';
import { rowToAvroRecord } from '../../lib/writer/avro-records.js';

const nullable = (type: unknown) => ['null', type];
const SCHEMA = {
  type: 'record',
  name: 't_record',
  namespace: 'hoodie.t',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'name', type: nullable('string'), default: null },
    { name: 'amount', type: nullable({ type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 }), default: null },
    { name: 'fixed', type: nullable({ type: 'fixed', name: 'fixed', size: 5, logicalType: 'decimal', precision: 10, scale: 3 }), default: null },
    { name: 'day', type: nullable({ type: 'int', logicalType: 'date' }), default: null },
    { name: 'at', type: nullable({ type: 'long', logicalType: 'timestamp-micros' }), default: null },
    { name: 'ratio', type: nullable('double'), default: null },
    { name: 'blob', type: nullable('bytes'), default: null },
    {
      name: 'inner',
      type: nullable({ type: 'record', name: 'inner', fields: [{ name: 'tags', type: nullable({ type: 'array', items: nullable('int') }), default: null }] }),
      default: null,
    },
    { name: 'attrs', type: nullable({ type: 'map', values: nullable('string') }), default: null },
  ],
} as unknown as AvroRecordSchema;

describe('rows as Avro records', () => {
  it('decimals are minimal big-endian two\u2019s complement (bytes) or sign-extended to the fixed size', () => {
    const amount = (text: string) => (rowToAvroRecord(SCHEMA, { id: 1, amount: text })['amount'] as Buffer).toString('hex');
    assert.equal(amount('0.00'), '00');
    assert.equal(amount('-0.01'), 'ff');
    assert.equal(amount('1.27'), '7f');
    assert.equal(amount('1.28'), '0080');
    assert.equal(amount('-1.28'), '80');
    assert.equal(amount('-1.29'), 'ff7f');
    assert.equal(amount('12.34'), '04d2');
    const fixed = (text: string) => (rowToAvroRecord(SCHEMA, { id: 1, fixed: text })['fixed'] as Buffer).toString('hex');
    assert.equal(fixed('-0.001'), 'ffffffffff');
    assert.equal(fixed('1.000'), '00000003e8');
    assert.throws(() => rowToAvroRecord(SCHEMA, { id: 1, amount: '1.234' }), /scale 2/);
  });

  it('round-trips through an Avro data block and the reader\u2019s conversion', () => {
    const rows: Row[] = [
      {
        id: '9007199254740993',
        name: 'a',
        amount: '-65432.10',
        fixed: '1234567.891',
        day: '1969-12-31',
        at: '2024-02-03T10:00:00.123456Z',
        ratio: 'NaN',
        blob: Buffer.from([0, 1, 255]).toString('base64'),
        inner: { tags: [1, null, 3] },
        attrs: { k: 'v', n: null },
      },
      { id: 2, name: null, amount: null, fixed: null, day: '2024-01-01', at: '1960-01-01T00:00:00Z', ratio: 1.5, blob: null, inner: null, attrs: null },
    ];
    const records = rows.map((row) => rowToAvroRecord(SCHEMA, row));
    const block = avroDataBlock({ instantTime: '20240101000000000', schema: SCHEMA, records, longs: 'bigint' });
    const [read] = decodeLogBlocks(encodeLogBlock(block));
    const back = readAvroDataBlock(read!, { wrapUnions: true, longs: 'bigint' }).map((value) => avroRecordToRow(SCHEMA as never, value));
    assert.deepEqual(back[0], { ...rows[0], id: '9007199254740993', at: '2024-02-03T10:00:00.123456Z' });
    assert.deepEqual(back[1], { ...rows[1], at: '1960-01-01T00:00:00.000Z' });
  });

  it('refuses a value its type cannot hold, naming the field', () => {
    assert.throws(() => rowToAvroRecord(SCHEMA, { id: 'x' }), /record\.id/);
    assert.throws(() => rowToAvroRecord(SCHEMA, { id: null }), /record\.id/);
  });
});
