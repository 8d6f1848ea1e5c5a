import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { BLOOM_FILTER_FOOTER_KEY, createBloomFilter, MAX_RECORD_KEY_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY } from '../../lib/base-file/bloom-filter.js';
import { hudiFooter, hudiFooterInTurns } from '../../lib/base-file/footer.js';
import { readJoinedValues } from '../../lib/engine/column-values.js';
import type { ChunkedIterable } from '../../lib/util/chunked.js';

/** Keys of every tail length, non-ASCII ones, and one above U+E000 against a supplementary one (UTF-16 order). */
const KEYS = Array.from(
  { length: 20_011 },
  (_, i) => `${'k'.repeat(i % 9)}${(i * 7919) % 20_011}${i % 101 === 0 ? 'é😀' : ''}${i % 103 === 0 ? '\uffee' : ''}`,
);

function chunked(keys: readonly string[], size: number): ChunkedIterable<string> {
  return {
    *chunks() {
      for (let start = 0; start < keys.length; start += size) yield keys.slice(start, start + size);
    },
    [Symbol.iterator]: () => keys[Symbol.iterator](),
  };
}

describe('Hudi footers of record keys', () => {
  test('the same footer from an array, from chunks of any size (odd ones split the key pairs) and from a plain iterable', async () => {
    const bloom = createBloomFilter();
    for (const key of KEYS) bloom.add(key);
    const sorted = [...KEYS].sort();
    const expected = hudiFooter(KEYS, 'schema');
    assert.equal(expected[BLOOM_FILTER_FOOTER_KEY], bloom.serialize());
    assert.equal(expected[MIN_RECORD_KEY_FOOTER_KEY], sorted[0]);
    assert.equal(expected[MAX_RECORD_KEY_FOOTER_KEY], sorted.at(-1));
    for (const size of [1, 3, 8191, 65_536]) {
      assert.deepEqual(hudiFooter(chunked(KEYS, size), 'schema'), expected, `chunks of ${size}`);
      assert.deepEqual(await hudiFooterInTurns(chunked(KEYS, size), 'schema'), expected, `chunks of ${size}, in turns`);
    }
    assert.deepEqual(hudiFooter(new Set(KEYS), 'schema'), expected, 'a plain iterable');
    assert.deepEqual(await hudiFooterInTurns(new Set(KEYS), 'schema'), expected, 'a plain iterable, in turns');
  });

  test('values DuckDB joins come back whole, in chunks and one by one, also when one holds NUL', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const source = (extra: string) => `SELECT value, 0 AS piece, row FROM (SELECT 'v' || range::VARCHAR AS value, range AS row FROM range(150000) ${extra})`;
      const plain = await readJoinedValues(connection, source(''));
      const chunks = [...plain.chunks()];
      assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
      assert.deepEqual(chunks.flat().sort(), [...plain].sort());
      assert.equal(new Set(plain).size, 150_000);
      const withNul = await readJoinedValues(connection, `${source('')} UNION ALL SELECT 'a' || chr(0) || 'b', 0, 150000`);
      assert.equal([...withNul].length, 150_001);
      assert.ok([...withNul.chunks()].flat().includes('a\u0000b'));
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
