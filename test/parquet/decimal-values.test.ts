import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DecimalEncoding, decodePlain, decodeStatisticValue, encodePlain, encodeStatisticValue } from '../../lib/parquet/decimal-values.js';

const hex = (text: string): Buffer => Buffer.from(text.replaceAll(' ', ''), 'hex');

const INT32: DecimalEncoding = { physical: 'INT32' };
const INT64: DecimalEncoding = { physical: 'INT64' };
const FIXED5: DecimalEncoding = { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: 5 };
const BYTES: DecimalEncoding = { physical: 'BYTE_ARRAY' };

describe('decimal values in Parquet encodings', () => {
  test('PLAIN runs built by hand decode to the unscaled values', () => {
    assert.deepEqual(decodePlain(hex('feffffff 2c010000'), INT32), [-2n, 300n]);
    assert.deepEqual(decodePlain(hex('0000000000000080 ffffffffffffff7f'), INT64), [-(2n ** 63n), 2n ** 63n - 1n]);
    // FIXED_LEN_BYTE_ARRAY: big-endian two's complement, the sign in the first byte's top bit.
    assert.deepEqual(decodePlain(hex('fffffffffe 000000012c 8000000000'), FIXED5), [-2n, 300n, -(2n ** 39n)]);
    // BYTE_ARRAY: a 4-byte little-endian length, then the minimal big-endian bytes.
    assert.deepEqual(decodePlain(hex('02000000 012c 01000000 ff'), BYTES), [300n, -1n]);
  });

  test('values encode to those bytes', () => {
    assert.deepEqual(encodePlain([-2n, 300n], INT32), hex('feffffff 2c010000'));
    assert.deepEqual(encodePlain([-2n, 300n, -(2n ** 39n)], FIXED5), hex('fffffffffe 000000012c 8000000000'));
    // 128 needs a second byte so that its top bit is not read as a sign.
    assert.deepEqual(encodePlain([300n, -1n, 128n], BYTES), hex('02000000 012c 01000000 ff 02000000 0080'));
  });

  test('a value too wide for the fixed length is refused', () => {
    assert.throws(() => encodePlain([2n ** 39n], FIXED5), /does not fit in 5 bytes/);
    assert.deepEqual(encodePlain([2n ** 39n - 1n], FIXED5), hex('7fffffffff'));
  });

  test('statistics hold one value, BYTE_ARRAY without its length prefix', () => {
    assert.deepEqual(decodeStatisticValue(hex('012c'), BYTES), [300n]);
    assert.deepEqual(decodeStatisticValue(hex('fffffffffe'), FIXED5), [-2n]);
    assert.deepEqual(decodeStatisticValue(hex('2c01000000000000'), INT64), [300n]);
    assert.deepEqual(encodeStatisticValue(300n, BYTES), hex('012c'));
    assert.deepEqual(encodeStatisticValue(-2n, FIXED5), hex('fffffffffe'));
    assert.deepEqual(encodeStatisticValue(-2n, INT32), hex('feffffff'));
  });
});
