import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { DuckDBBlobValue, type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import {
  BLOOM_FILTER_FOOTER_KEY,
  BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
  bloomFilterBitSize,
  bloomFilterNumHashes,
  createBloomFilter,
  expectedPassRate,
  HoodieBloomFilter,
  HUDI_BLOOM_FILTER_DEFAULTS,
  hadoopMurmurHash,
  MAX_RECORD_KEY_FOOTER_KEY,
  MIN_RECORD_KEY_FOOTER_KEY,
} from '../../lib/base-file/bloom-filter.js';
import { HudiError } from '../../lib/errors.js';
import { FIXTURE_TABLES } from '../helpers/fixtures.js';

/*
 * Expected values below come from Hudi 0.15 itself: its MurmurHash, HashFunction, BloomFilterFactory and
 * BloomFilterUtils, called from a small Java program on the hudi-spark3.5-bundle_2.12-0.15.0 jar, so Java's signed
 * bytes, int overflow and String.getBytes(UTF_8) are the real thing. (An earlier set came from a hand port of
 * MurmurHash that folded the 2–3 tail bytes in the wrong order; the real jar showed it.)
 */

/** [key, seed, MurmurHash(key.getBytes(UTF_8), seed)] — covers every tail length, high tail bytes, lone surrogates. */
const JAVA_MURMUR_VECTORS: ReadonlyArray<readonly [string, number, number]> = [
  ['1', 0, 1228156847],
  ['1', 1, 1111412596],
  ['1', -1, 886594861],
  ['1', 123456789, 1484351806],
  ['1', -2147483648, 1871209175],
  ['ab', 0, 1525573013],
  ['ab', 1, -419373624],
  ['ab', -1, -1797532438],
  ['ab', 123456789, 773214199],
  ['ab', -2147483648, 882555261],
  ['abc', 0, 1775488903],
  ['abc', 1, -2144439693],
  ['abc', -1, -1465591341],
  ['abc', 123456789, 923286241],
  ['abc', -2147483648, 1132436191],
  ['abcd', 0, 646393889],
  ['abcd', 1, -918586858],
  ['abcd', -1, 1555318719],
  ['abcd', 123456789, -342526052],
  ['abcd', -2147483648, 3374409],
  ['abcde', 0, 1594468574],
  ['abcde', 1, -825729666],
  ['abcde', -1, -392878951],
  ['abcde', 123456789, -1757765751],
  ['abcde', -2147483648, -2057560970],
  ['id:1,name:Alice', 0, 71696166],
  ['id:1,name:Alice', 1, 2011085419],
  ['id:1,name:Alice', -1, 669643219],
  ['id:1,name:Alice', 123456789, 1878094381],
  ['id:1,name:Alice', -2147483648, -571454386],
  ['\u00e9', 0, -384040333],
  ['\u00e9', 1, -913757653],
  ['\u00e9', -1, -1125067414],
  ['\u00e9', 123456789, 776216079],
  ['\u00e9', -2147483648, 259116715],
  ['\u00ff\u00fe\u00fd', 0, 237179129],
  ['\u00ff\u00fe\u00fd', 1, 1459199372],
  ['\u00ff\u00fe\u00fd', -1, 326319349],
  ['\u00ff\u00fe\u00fd', 123456789, -1583188092],
  ['\u00ff\u00fe\u00fd', -2147483648, -405880031],
  ['x\u00ff\u00fe\u00fd', 0, 1059294624],
  ['x\u00ff\u00fe\u00fd', 1, 1727017003],
  ['x\u00ff\u00fe\u00fd', -1, 2103587501],
  ['x\u00ff\u00fe\u00fd', 123456789, 1313770938],
  ['x\u00ff\u00fe\u00fd', -2147483648, 1702312200],
  ['\u65e5\u672c', 0, 659168028],
  ['\u65e5\u672c', 1, -1998176048],
  ['\u65e5\u672c', -1, -727673871],
  ['\u65e5\u672c', 123456789, -294677973],
  ['\u65e5\u672c', -2147483648, 1302253236],
  ['\u20acx', 0, -540445419],
  ['\u20acx', 1, 1258053985],
  ['\u20acx', -1, -2036870400],
  ['\u20acx', 123456789, -1006988376],
  ['\u20acx', -2147483648, 102549181],
  ['\ud83d\ude00', 0, -842402043],
  ['\ud83d\ude00', 1, -962125668],
  ['\ud83d\ude00', -1, -1030930139],
  ['\ud83d\ude00', 123456789, -1467705340],
  ['\ud83d\ude00', -2147483648, -199392083],
  ['\ud800x', 0, -432912658],
  ['\ud800x', 1, 33117778],
  ['\ud800x', -1, -1744695501],
  ['\ud800x', 123456789, -1239611734],
  ['\ud800x', -2147483648, -1075907274],
  ['a\udc00', 0, 1680225608],
  ['a\udc00', 1, 1724199514],
  ['a\udc00', -1, 2124532923],
  ['a\udc00', 123456789, 490536733],
  ['a\udc00', -2147483648, 1037207200],
  ['20230401|uuid-\u00df\u00e0\u00e8', 0, -1000288434],
  ['20230401|uuid-\u00df\u00e0\u00e8', 1, 1060553818],
  ['20230401|uuid-\u00df\u00e0\u00e8', -1, -2140956673],
  ['20230401|uuid-\u00df\u00e0\u00e8', 123456789, -1239422236],
  ['20230401|uuid-\u00df\u00e0\u00e8', -2147483648, -357264666],
];

/** Bit positions HashFunction gives under Hudi's default sizing (2587966 bits, 30 hashes). */
const JAVA_DEFAULT_POSITIONS: ReadonlyArray<readonly [string, readonly number[]]> = [
  [
    '1',
    [
      1460963, 105785, 1189081, 2066078, 47219, 588992, 1488581, 1702643, 2490016, 883953, 589946, 1874676, 257260, 1902059, 2023043, 1176393, 641450, 1310977,
      2185582, 222072, 1373243, 2101586, 1755127, 352770, 411489, 1006816, 2090518, 2137834, 755883, 408683,
    ],
  ],
  [
    'id:1,name:Alice',
    [
      1821084, 1259695, 2258328, 240278, 789559, 1865123, 1398826, 36040, 2425846, 949873, 2317167, 1401125, 2251666, 2210239, 213155, 1635085, 2468158, 563292,
      561670, 1755141, 2087935, 1301887, 2416442, 413315, 870761, 974044, 1450646, 798789, 2363422, 2045760,
    ],
  ],
  [
    '\u00ff\u00fe\u00fd',
    [
      1674223, 592149, 1305190, 2255279, 1816702, 2549923, 218881, 485200, 1560651, 667081, 1301416, 1348560, 2118269, 917247, 1273568, 1859454, 1858883,
      1919856, 2086656, 2586475, 325078, 2131731, 214454, 980029, 2021565, 2062896, 410057, 485696, 751591, 875743,
    ],
  ],
];

/** [numEntries, fpp, getBitSize, getNumHashes]. */
const JAVA_SIZES: ReadonlyArray<readonly [number, number, number, number]> = [
  [1, 0.5, 2, 2],
  [1, 0.01, 10, 7],
  [1, 0.000001, 29, 21],
  [1, 0.000000001, 44, 31],
  [10, 0.5, 15, 2],
  [10, 0.01, 96, 7],
  [10, 0.000001, 288, 20],
  [10, 0.000000001, 432, 30],
  [1000, 0.5, 1443, 2],
  [1000, 0.01, 9586, 7],
  [1000, 0.000001, 28756, 20],
  [1000, 0.000000001, 43133, 30],
  [60000, 0.5, 86562, 2],
  [60000, 0.01, 575104, 7],
  [60000, 0.000001, 1725311, 20],
  [60000, 0.000000001, 2587966, 30],
  [100000, 0.5, 144270, 2],
  [100000, 0.01, 958506, 7],
  [100000, 0.000001, 2875518, 20],
  [100000, 0.000000001, 4313277, 30],
  [1000000, 0.5, 1442696, 2],
  [1000000, 0.01, 9585059, 7],
  [1000000, 0.000001, 28755176, 20],
  [1000000, 0.000000001, 43132763, 30],
];

/** DYNAMIC_V0 (numEntries 10, fpp 0.01, maxEntries 35) after adding `key-<i>-é` for i in 0..56: grows to 4 rows, then round-robins. */
const JAVA_SMALL_DYNAMIC =
  '/////wAAAAcBAAAAYAAAAAoAAAAbAAAABP////8AAAAHAQAAAGDbw/0Fk71373u1f/7/////AAAABwEAAABgbf/a+6c/fVG/e0XH/////wAAAAcBAAAAYHTTtez8cf9p5fzL4/////8AAAAHAQAAAGDkO+15fU6Dof9e80c=';
/** SIMPLE (numEntries 10, fpp 0.01) after adding `simple-<i>` for i in 0..6. */
const JAVA_SMALL_SIMPLE = '/////wAAAAcBAAAAYEqUDiDPh0dsiPjEBQ==';

/**
 * Every base file of the committed fixture tables (Hudi 0.15 on Spark wrote them) is checked. v6_nonpartitioned was
 * written with Hudi's default bloom settings; the others with hoodie.index.bloom.num_entries=1000 (fpp default), to keep
 * the fixtures small (a default filter is ~430 KB of footer).
 */
const DEFAULT_SETTINGS_TABLE = 'v6_nonpartitioned';
const SMALL_SETTINGS = { numEntries: 1000, vectorSize: 43133, numHashes: 30 };

function decode(serialized: string): Buffer {
  return Buffer.from(serialized, 'base64');
}

/** The DYNAMIC_V0 header: filter header (13 bytes), then nr, currentNbRecord, matrix length. */
function dynamicHeader(serialized: string): { vectorSize: number; numHashes: number; rowCapacity: number; currentRowRecordCount: number; rowCount: number } {
  const bytes = decode(serialized);
  assert.equal(bytes.readInt32BE(0), -1, 'format version');
  assert.equal(bytes.readInt8(8), 1, 'hash type MURMUR');
  return {
    numHashes: bytes.readInt32BE(4),
    vectorSize: bytes.readInt32BE(9),
    rowCapacity: bytes.readInt32BE(13),
    currentRowRecordCount: bytes.readInt32BE(17),
    rowCount: bytes.readInt32BE(21),
  };
}

/** Each DYNAMIC_V0 row is serialized exactly as a SIMPLE filter, so rows can be inspected one by one. */
function dynamicRowsAsSimpleFilters(serialized: string): HoodieBloomFilter[] {
  const bytes = decode(serialized);
  const { vectorSize, rowCount } = dynamicHeader(serialized);
  const rowLength = 13 + Math.ceil(vectorSize / 8);
  const rows: HoodieBloomFilter[] = [];
  for (let i = 0; i < rowCount; i++) {
    const start = 25 + i * rowLength;
    rows.push(HoodieBloomFilter.deserialize(bytes.subarray(start, start + rowLength).toString('base64'), 'SIMPLE'));
  }
  assert.equal(25 + rowCount * rowLength, bytes.length, 'no bytes after the last row');
  return rows;
}

function setBitPositions(simpleSerialized: string): number[] {
  const bytes = decode(simpleSerialized);
  const vectorSize = bytes.readInt32BE(9);
  const positions: number[] = [];
  for (let bit = 0; bit < vectorSize; bit++) {
    if ((bytes[13 + (bit >>> 3)]! & (1 << (bit & 7))) !== 0) positions.push(bit);
  }
  return positions;
}

describe('Hadoop MurmurHash', () => {
  test('matches Java for every tail length, signed tail bytes and seeds', () => {
    for (const [key, seed, expected] of JAVA_MURMUR_VECTORS) {
      // Java's getBytes(UTF_8) turns a lone surrogate into '?'; Buffer would write U+FFFD, so map first.
      const javaBytes = Buffer.from(key.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '?'), 'utf8');
      assert.equal(hadoopMurmurHash(javaBytes, 0, javaBytes.length, seed), expected, `${JSON.stringify(key)} seed ${seed}`);
    }
  });

  test('honours offset and length', () => {
    const padded = Buffer.concat([Buffer.from('xyz'), Buffer.from('abcde'), Buffer.from('!!')]);
    const plain = Buffer.from('abcde');
    assert.equal(hadoopMurmurHash(padded, 3, 5, 42), hadoopMurmurHash(plain, 0, 5, 42));
  });
});

describe('sizing and hashing', () => {
  test('bit size and hash count match BloomFilterUtils', () => {
    for (const [numEntries, fpp, bitSize, numHashes] of JAVA_SIZES) {
      assert.equal(bloomFilterBitSize(numEntries, fpp), bitSize, `bitSize(${numEntries}, ${fpp})`);
      assert.equal(bloomFilterNumHashes(bitSize, numEntries), numHashes, `numHashes(${numEntries}, ${fpp})`);
    }
  });

  test('keys set exactly the bits Java HashFunction computes (UTF-8, chained seeds, abs of remainder)', () => {
    for (const [key, javaPositions] of JAVA_DEFAULT_POSITIONS) {
      const filter = createBloomFilter({ type: 'SIMPLE' });
      filter.add(key);
      assert.deepEqual(
        setBitPositions(filter.serialize()),
        [...new Set(javaPositions)].sort((a, b) => a - b),
        key,
      );
    }
  });

  test('the per-key fast path equals chained hadoopMurmurHash calls on random keys, for vectors of any size', () => {
    let seed = 12345;
    const nextRandom = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const alphabet = ['a', 'Z', '7', ':', ',', 'é', 'ß', '日', '€', '\u{1F600}', '\ud800', '\udfff', '\u0080', '\u07ff'];
    // Vectors of 2, 3, 9,586 and 2,587,966 bits (Hudi's default): the remainder is computed in doubles, so small
    // and large divisors are checked against Java's int remainder.
    const settings = [
      { numEntries: 1, fpp: 0.5 },
      { numEntries: 2, fpp: 0.5 },
      { numEntries: 1000, fpp: 0.01 },
      { numEntries: 60_000, fpp: 0.000000001 },
    ];
    for (let n = 0; n < 1000; n++) {
      const options = { ...settings[n % settings.length]!, type: 'SIMPLE' as const };
      const key = Array.from({ length: 1 + Math.floor(nextRandom() * 40) }, () => alphabet[Math.floor(nextRandom() * alphabet.length)]).join('');
      const single = createBloomFilter(options);
      single.add(key);
      const bytes = Buffer.from(key.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '?'), 'utf8');
      const expected = new Set<number>();
      for (let i = 0, hash = 0; i < single.numHashes; i++) {
        hash = hadoopMurmurHash(bytes, 0, bytes.length, hash);
        expected.add(Math.abs(hash % single.vectorSize));
      }
      assert.deepEqual(
        setBitPositions(single.serialize()),
        [...expected].sort((a, b) => a - b),
        JSON.stringify(key),
      );
    }
  });

  test('Hudi defaults', () => {
    assert.deepEqual({ ...HUDI_BLOOM_FILTER_DEFAULTS }, { numEntries: 60000, fpp: 0.000000001, maxEntries: 100000, type: 'DYNAMIC_V0' });
    const filter = createBloomFilter();
    assert.equal(filter.typeCode, 'DYNAMIC_V0');
    assert.equal(filter.vectorSize, 2587966);
    assert.equal(filter.numHashes, 30);
    assert.equal(filter.rowCapacity, 60000);
    assert.equal(filter.maxEntries, 100000);
    assert.equal(filter.rowCount, 1);
    // An undefined option means "default", as with Hudi's unset config.
    assert.equal(createBloomFilter({ numEntries: undefined }).vectorSize, 2587966);
  });
});

describe('serialization matches Java byte for byte', () => {
  test('small DYNAMIC_V0 that grows to its bound and then round-robins', () => {
    const filter = createBloomFilter({ numEntries: 10, fpp: 0.01, maxEntries: 35 });
    const keys = Array.from({ length: 57 }, (_, i) => `key-${i}-é`);
    for (const key of keys) filter.add(key);
    assert.equal(filter.rowCount, 4);
    assert.equal(filter.serialize(), JAVA_SMALL_DYNAMIC);
    for (const key of keys) assert.ok(filter.mightContain(key), key);
  });

  test('small SIMPLE', () => {
    const filter = createBloomFilter({ numEntries: 10, fpp: 0.01, type: 'SIMPLE' });
    for (let i = 0; i < 7; i++) filter.add(`simple-${i}`);
    assert.equal(filter.serialize(), JAVA_SMALL_SIMPLE);
  });

  test('Java-written filters deserialize and re-serialize unchanged', () => {
    const dynamic = HoodieBloomFilter.deserialize(JAVA_SMALL_DYNAMIC, 'DYNAMIC_V0');
    assert.equal(dynamic.serialize(), JAVA_SMALL_DYNAMIC);
    assert.equal(dynamic.rowCount, 4);
    assert.equal(dynamic.currentRowRecordCount, 27);
    for (let i = 0; i < 57; i++) assert.ok(dynamic.mightContain(`key-${i}-é`));
    const simple = HoodieBloomFilter.deserialize(JAVA_SMALL_SIMPLE, 'SIMPLE');
    assert.equal(simple.serialize(), JAVA_SMALL_SIMPLE);
    for (let i = 0; i < 7; i++) assert.ok(simple.mightContain(`simple-${i}`));
  });

  test('a footer value that is not Base64 as Java decodes it is refused; padding of one or two is read', () => {
    const refused = (text: string): boolean => {
      try {
        HoodieBloomFilter.deserialize(text, 'SIMPLE');
        return false;
      } catch (error) {
        return error instanceof HudiError && error.message.includes('not valid Base64');
      }
    };
    const valid = JAVA_SMALL_SIMPLE;
    for (const corrupt of [
      `*${valid}`,
      `${valid.slice(0, 8)}-${valid.slice(9)}`,
      `${valid.slice(0, 8)}_${valid.slice(9)}`,
      `${valid.slice(0, 8)} ${valid.slice(9)}`,
      `${valid.slice(0, 8)}=${valid.slice(9)}`,
      `${valid}===`,
      `${valid}é`,
      `${valid}A`,
    ]) {
      assert.ok(refused(corrupt), `refused: ${corrupt.slice(0, 12)}…${corrupt.slice(-4)}`);
    }
    const stripped = valid.replace(/=+$/, '');
    assert.equal(HoodieBloomFilter.deserialize(stripped, 'SIMPLE').serialize(), valid, 'padding is optional, as for Java’s decoder');
    const padded = `${stripped}${'='.repeat((4 - (stripped.length % 4)) % 4)}`;
    assert.equal(HoodieBloomFilter.deserialize(padded, 'SIMPLE').serialize(), valid);
  });
});

describe('real Hudi base files', () => {
  let instance: DuckDBInstance | undefined;
  let connection: DuckDBConnection | undefined;
  const baseFiles: string[] = [];

  before(async () => {
    for (const entry of readdirSync(FIXTURE_TABLES, { recursive: true, encoding: 'utf8' })) {
      if (entry.endsWith('.parquet') && !entry.split('/').includes('.hoodie')) baseFiles.push(join(FIXTURE_TABLES, entry));
    }
    baseFiles.sort();
    instance = await DuckDBInstance.create(':memory:');
    connection = await instance.connect();
  });

  after(() => {
    connection?.closeSync();
    instance?.closeSync();
  });

  function sqlString(path: string): string {
    return `'${path.replaceAll("'", "''")}'`;
  }

  async function footer(path: string): Promise<Map<string, string>> {
    const reader = await connection!.runAndReadAll(`SELECT key, value FROM parquet_kv_metadata(${sqlString(path)})`);
    const entries = new Map<string, string>();
    for (const [key, value] of reader.getRows()) {
      assert.ok(key instanceof DuckDBBlobValue && value instanceof DuckDBBlobValue);
      entries.set(Buffer.from(key.bytes).toString('utf8'), Buffer.from(value.bytes).toString('utf8'));
    }
    return entries;
  }

  async function recordKeysInFileOrder(path: string): Promise<Array<string | null>> {
    const reader = await connection!.runAndReadAll(
      `SELECT _hoodie_record_key FROM read_parquet(${sqlString(path)}, file_row_number = true) ORDER BY file_row_number`,
    );
    return reader.getRows().map(([key]) => (key === null ? null : String(key)));
  }

  test('every base file: footer filter holds its keys and equals a fresh filter of the same settings', async (t) => {
    let identical = 0;
    let withDefaults = 0;
    let withoutFilter = 0;
    for (const path of baseFiles) {
      const name = relative(FIXTURE_TABLES, path);
      const entries = await footer(path);
      const keys = await recordKeysInFileOrder(path);
      const serialized = entries.get(BLOOM_FILTER_FOOTER_KEY);
      if (serialized === undefined) {
        // Only tables with hoodie.populate.meta.fields=false skip the bloom filter (and the key column).
        assert.match(name, /no_metafields/, `${name} has no bloom filter`);
        assert.ok(
          keys.every((key) => key === null),
          `${name}: no filter but record keys present`,
        );
        withoutFilter++;
        continue;
      }
      assert.equal(entries.get(BLOOM_FILTER_TYPE_CODE_FOOTER_KEY), 'DYNAMIC_V0', name);
      const recordKeys = keys.map((key) => {
        assert.ok(key !== null, `${name}: null record key`);
        return key;
      });
      assert.ok(recordKeys.length > 0, name);

      const defaults = name.startsWith(`${DEFAULT_SETTINGS_TABLE}/`);
      assert.deepEqual(
        dynamicHeader(serialized),
        {
          vectorSize: defaults ? 2587966 : SMALL_SETTINGS.vectorSize,
          numHashes: defaults ? 30 : SMALL_SETTINGS.numHashes,
          rowCapacity: defaults ? 60000 : SMALL_SETTINGS.numEntries,
          currentRowRecordCount: recordKeys.length,
          rowCount: 1,
        },
        name,
      );

      const fromFooter = HoodieBloomFilter.deserialize(serialized, 'DYNAMIC_V0');
      assert.equal(fromFooter.serialize(), serialized, `${name}: deserialize → serialize round trip`);
      const absent = Array.from({ length: 1000 }, (_, i) => `absent-${i}`).concat(['0', '5', 'id:9,name:Zed', 'id:1,name:Bob']);
      const falsePositives = absent.filter((key) => fromFooter.mightContain(key));
      assert.ok(falsePositives.length <= 1, `${name}: false positives ${falsePositives.join(', ')}`);
      assert.equal(entries.get(MIN_RECORD_KEY_FOOTER_KEY), [...recordKeys].sort()[0], name);
      assert.equal(entries.get(MAX_RECORD_KEY_FOOTER_KEY), [...recordKeys].sort().at(-1), name);

      // Our default filter is Hudi's default filter.
      const rebuilt = defaults ? createBloomFilter() : createBloomFilter({ numEntries: SMALL_SETTINGS.numEntries });
      for (const key of recordKeys) rebuilt.add(key);
      for (const key of recordKeys) assert.ok(fromFooter.mightContain(key), `${name}: Hudi's filter does not contain ${key} by our hash`);
      assert.equal(rebuilt.serialize(), serialized, `${name}: fresh filter differs from Hudi's`);
      identical++;
      if (defaults) withDefaults++;
    }
    t.diagnostic(`${identical} base files byte-identical (${withDefaults} with Hudi's default settings); ${withoutFilter} without a filter (no meta fields)`);
    assert.ok(identical >= 25, `only ${identical} byte-identical base files`);
    assert.equal(withDefaults, 2);
    assert.equal(withoutFilter, 3);
  });
});

describe('dynamic growth with Hudi defaults', () => {
  test('150,000 keys: second row at 60,000, capped at 2 rows (maxEntries 100,000), then round-robin', () => {
    const filter = createBloomFilter();
    const keys = Array.from({ length: 150_000 }, (_, i) => `20240418-${i.toString().padStart(8, '0')}-${(i * 2654435761) >>> 0}`);
    keys.forEach((key, i) => {
      filter.add(key);
      if (i + 1 === 60_000) assert.equal(filter.rowCount, 1);
      if (i + 1 === 60_001) assert.equal(filter.rowCount, 2);
    });
    for (const key of keys) assert.ok(filter.mightContain(key), key);
    assert.equal(filter.rowCount, 2);
    // currentNbRecord restarts at the new row and keeps counting after the cap, as in Hudi.
    assert.equal(filter.currentRowRecordCount, 90_000);

    const serialized = filter.serialize();
    assert.deepEqual(dynamicHeader(serialized), {
      vectorSize: 2587966,
      numHashes: 30,
      rowCapacity: 60000,
      currentRowRecordCount: 90_000,
      rowCount: 2,
    });
    assert.equal(decode(serialized).length, 25 + 2 * (13 + Math.ceil(2587966 / 8)));

    // Keys 0..59,999 → row 0; 60,000..119,999 → row 1; then row 0 twice (Hudi's first capped add
    // does not advance its index), then alternating 1, 0, 1, ...
    const [row0, row1] = dynamicRowsAsSimpleFilters(serialized);
    assert.ok(row0 && row1);
    const expectedRow = (i: number): 0 | 1 => (i < 60_000 ? 0 : i < 120_000 ? 1 : i === 120_000 ? 0 : (i - 120_001) % 2 === 0 ? 0 : 1);
    for (const i of [0, 59_999, 60_000, 119_999, 120_000, 120_001, 120_002, 120_003, 149_998, 149_999]) {
      const key = keys[i]!;
      const inRow = expectedRow(i) === 0 ? row0 : row1;
      const otherRow = expectedRow(i) === 0 ? row1 : row0;
      assert.ok(inRow.mightContain(key), `key #${i} in row ${expectedRow(i)}`);
      assert.ok(!otherRow.mightContain(key), `key #${i} not in the other row`);
    }

    const roundTripped = HoodieBloomFilter.deserialize(serialized, 'DYNAMIC_V0');
    assert.equal(roundTripped.serialize(), serialized);
    for (let i = 0; i < keys.length; i += 997) assert.ok(roundTripped.mightContain(keys[i]!));
  });

  test('a deserialized filter never grows (Hudi does not serialize maxEntries)', () => {
    const filter = HoodieBloomFilter.deserialize(JAVA_SMALL_DYNAMIC, 'DYNAMIC_V0');
    assert.equal(filter.maxEntries, 0);
    for (let i = 0; i < 50; i++) filter.add(`more-${i}`);
    assert.equal(filter.rowCount, 4);
    const fresh = HoodieBloomFilter.deserialize(createBloomFilter({ numEntries: 10, fpp: 0.01 }).serialize(), 'DYNAMIC_V0');
    for (let i = 0; i < 25; i++) fresh.add(`k${i}`);
    assert.equal(fresh.rowCount, 1);
  });

  test('keys added two at a time (addPair) give the filter added one by one, across row growth and the cap', () => {
    // Lengths 1 to 13 (every tail length, several words), non-ASCII and a lone surrogate (Java writes '?'), and an odd
    // count so the last key goes alone; rows of 7 keys capped at 3 rows, so pairs straddle a new row and the round robin.
    const keys = Array.from({ length: 61 }, (_, i) => `${'k'.repeat(i % 13)}${i}${i % 5 === 0 ? 'é€😀' : ''}${i % 17 === 0 ? '\ud800' : ''}`);
    for (const options of [
      { numEntries: 7, fpp: 0.01, maxEntries: 21 },
      { numEntries: 7, fpp: 0.01, type: 'SIMPLE' as const },
    ]) {
      const oneByOne = createBloomFilter(options);
      for (const key of keys) oneByOne.add(key);
      const inPairs = createBloomFilter(options);
      for (let i = 0; i + 1 < keys.length; i += 2) inPairs.addPair(keys[i]!, keys[i + 1]!);
      inPairs.add(keys.at(-1)!);
      assert.equal(inPairs.rowCount, oneByOne.rowCount);
      assert.equal(inPairs.serialize(), oneByOne.serialize(), JSON.stringify(options));
    }
    assert.throws(() => createBloomFilter().addPair('a', ''), HudiError);
  });

  test('SIMPLE never grows', () => {
    const filter = createBloomFilter({ numEntries: 10, fpp: 0.01, type: 'SIMPLE' });
    for (let i = 0; i < 100; i++) filter.add(`k${i}`);
    assert.equal(filter.rowCount, 1);
    for (let i = 0; i < 100; i++) assert.ok(filter.mightContain(`k${i}`));
  });
});

describe('rejects what Hudi rejects', () => {
  test('empty keys', () => {
    const filter = createBloomFilter();
    assert.throws(() => filter.add(''), HudiError);
    assert.throws(() => filter.mightContain(''), HudiError);
  });

  test('bad settings', () => {
    assert.throws(() => createBloomFilter({ numEntries: 0 }), HudiError);
    assert.throws(() => createBloomFilter({ numEntries: 1.5 }), HudiError);
    assert.throws(() => createBloomFilter({ fpp: 0 }), HudiError);
    assert.throws(() => createBloomFilter({ fpp: 1 }), HudiError);
    assert.throws(() => createBloomFilter({ maxEntries: -1 }), HudiError);
    assert.throws(() => createBloomFilter({ type: 'BOGUS' as 'SIMPLE' }), HudiError);
  });

  test('corrupt serialized filters', () => {
    assert.throws(() => HoodieBloomFilter.deserialize('not base64!', 'DYNAMIC_V0'), HudiError);
    assert.throws(() => HoodieBloomFilter.deserialize(JAVA_SMALL_DYNAMIC.slice(0, 40), 'DYNAMIC_V0'), /truncated/);
    assert.throws(() => HoodieBloomFilter.deserialize(JAVA_SMALL_SIMPLE.slice(0, 12), 'SIMPLE'), /truncated/);
    const jenkins = decode(JAVA_SMALL_SIMPLE);
    jenkins.writeInt8(0, 8);
    assert.throws(() => HoodieBloomFilter.deserialize(jenkins.toString('base64'), 'SIMPLE'), /hash type 0/);
    const unversioned = decode(JAVA_SMALL_SIMPLE);
    unversioned.writeInt32BE(7, 0);
    assert.throws(() => HoodieBloomFilter.deserialize(unversioned.toString('base64'), 'SIMPLE'), /format version 7/);
  });

  test('padding bits past vectorSize are ignored, as Java BitSet does', () => {
    const odd = createBloomFilter({ numEntries: 3, fpp: 0.01, type: 'SIMPLE' }); // 29 bits → 3 padding bits
    odd.add('x');
    const clean = odd.serialize();
    const dirty = decode(clean);
    dirty[dirty.length - 1]! |= 0b1110_0000;
    assert.equal(HoodieBloomFilter.deserialize(dirty.toString('base64'), 'SIMPLE').serialize(), clean);
  });
});

describe('throughput', () => {
  test('adds/s for 1M keys with Hudi defaults', (t) => {
    const keys = Array.from({ length: 1_000_000 }, (_, i) => `uuid-${i.toString(16).padStart(8, '0')}-${(i * 2654435761) >>> 0}`);
    const filter = createBloomFilter();
    const started = process.hrtime.bigint();
    for (const key of keys) filter.add(key);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const serializeStarted = process.hrtime.bigint();
    const serialized = filter.serialize();
    const serializeMs = Number(process.hrtime.bigint() - serializeStarted) / 1e6;
    t.diagnostic(
      `1,000,000 adds (avg key ${keys[500_000]!.length} chars) in ${seconds.toFixed(2)} s = ${Math.round(1_000_000 / seconds).toLocaleString('en-US')} adds/s; ` +
        `serialize ${serializeMs.toFixed(0)} ms, ${(serialized.length / 1024).toFixed(0)} KiB base64, ${filter.rowCount} rows`,
    );
    assert.ok(filter.mightContain(keys[0]!) && filter.mightContain(keys[999_999]!));
  });
});

describe("union (binary copy merges the inputs' filters)", () => {
  const keysOf = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, index) => `${prefix}-${index}`);

  test('DYNAMIC_V0: rows pack as the keys would; every key of every input passes and the union survives serialization', () => {
    const options = { numEntries: 100, fpp: 0.001, maxEntries: 1000, type: 'DYNAMIC_V0' as const };
    const sets = [keysOf('a', 250), keysOf('b', 30), keysOf('c', 70)];
    const filters = sets.map((keys) => {
      const filter = createBloomFilter(options);
      for (const key of keys) filter.add(key);
      return HoodieBloomFilter.deserialize(filter.serialize(), 'DYNAMIC_V0');
    });
    const union = HoodieBloomFilter.union(filters, options.maxEntries)!;
    for (const key of sets.flat()) assert.ok(union.mightContain(key), key);
    // 250 keys are rows of 100, 100, 50; with 30 and 70 that packs into 100, 100, 100, 50: four rows, as 350 keys make.
    assert.equal(union.rowCount, 4);
    assert.equal(union.currentRowRecordCount, 50);
    const again = HoodieBloomFilter.deserialize(union.serialize(), 'DYNAMIC_V0');
    for (const key of sets.flat()) assert.ok(again.mightContain(key));
    assert.ok(keysOf('z', 200).filter((key) => again.mightContain(key)).length < 20, 'not saturated');
  });

  test('caps rows as Hudi grows them and ORs the rest onto the least loaded row; SIMPLE is one row', () => {
    const options = { numEntries: 50, fpp: 0.01, maxEntries: 100 };
    const filters = [keysOf('a', 50), keysOf('b', 50), keysOf('c', 50)].map((keys) => {
      const filter = createBloomFilter({ ...options, type: 'DYNAMIC_V0' });
      for (const key of keys) filter.add(key);
      return filter;
    });
    const union = HoodieBloomFilter.union(filters, options.maxEntries)!;
    assert.equal(union.rowCount, 2);
    for (const key of [...keysOf('a', 50), ...keysOf('b', 50), ...keysOf('c', 50)]) assert.ok(union.mightContain(key));
    const simple = [keysOf('x', 40), keysOf('y', 40)].map((keys) => {
      const filter = createBloomFilter({ ...options, type: 'SIMPLE' });
      for (const key of keys) filter.add(key);
      return filter;
    });
    const simpleUnion = HoodieBloomFilter.union(simple)!;
    assert.equal(simpleUnion.typeCode, 'SIMPLE');
    assert.equal(simpleUnion.rowCount, 1);
    for (const key of [...keysOf('x', 40), ...keysOf('y', 40)]) assert.ok(simpleUnion.mightContain(key));
  });

  test('refuses filters of different sizes, hashes or types', () => {
    const one = createBloomFilter({ numEntries: 100, fpp: 0.001 });
    assert.equal(HoodieBloomFilter.union([one, createBloomFilter({ numEntries: 200, fpp: 0.001 })]), undefined);
    assert.equal(HoodieBloomFilter.union([one, createBloomFilter({ numEntries: 100, fpp: 0.001, type: 'SIMPLE' })]), undefined);
    assert.equal(HoodieBloomFilter.union([]), undefined);
  });
});

describe('pass rates (how full a filter is)', () => {
  test('expectedPassRate predicts the share of absent keys a filter of n keys lets through; passRate measures it', () => {
    const absent = Array.from({ length: 20_000 }, (_, i) => `absent-${i}`);
    for (const [options, counts] of [
      [{ numEntries: 1000, fpp: 0.01, maxEntries: 3000 }, [100, 1000, 2500, 6000, 20_000]],
      [{ numEntries: 1000, fpp: 0.01, maxEntries: 3000, type: 'SIMPLE' as const }, [500, 3000, 8000]],
    ] as const) {
      for (const count of counts) {
        const filter = HoodieBloomFilter.create(options);
        for (let i = 0; i < count; i++) filter.add(`key-${i}`);
        const measured = absent.filter((key) => filter.mightContain(key)).length / absent.length;
        const expected = expectedPassRate(options, count);
        const label = `${options.type ?? 'DYNAMIC_V0'} with ${count} keys: expected ${expected}, passRate ${filter.passRate()}, measured ${measured}`;
        assert.ok(Math.abs(expected - measured) < 0.02 + 0.1 * expected, label);
        assert.ok(Math.abs(filter.passRate() - measured) < 0.02 + 0.1 * measured, label);
      }
    }
    // Hudi's defaults (2 rows of 60,000 keys, then round robin): past about 2 million keys every lookup passes.
    assert.ok(expectedPassRate({}, 3_000_000) > 0.9999);
    assert.ok(expectedPassRate({}, 1_000_000) < 0.999);
    assert.ok(expectedPassRate({}, 50_000) < 1e-6);
  });
});
