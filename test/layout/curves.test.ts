import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  buildCurveKeys,
  buildSampleRangeBounds,
  byteTo8Byte,
  type CurveColumnValues,
  compareUnsignedBytes,
  computeDirectCurveKeys,
  computeSampleCurveKeys,
  convertBytesToLong,
  convertStringToLong,
  curveKeyAt,
  directHilbertKey,
  directZOrderKey,
  doubleTo8Byte,
  hudiDirectColumnOrder,
  interleaveBits,
  intTo8Byte,
  longTo8Byte,
  mapToBucket,
  mapValueTo8Bytes,
  mapValueToLong,
  paddingTo8Byte,
  type SortColumnType,
  type SortValue,
  seededRandom,
  sortRowsByCurveKey,
  utf8To8Byte,
  zOrderKey,
} from '../../lib/layout/curves.js';
import { HilbertIndexer, hilbertIndex, hilbertIndexBytes } from '../../lib/layout/hilbert.js';
import { spaceCurveFixture } from '../helpers/fixtures.js';

interface MappingVector {
  fn: string;
  input: number | string | number[];
  out_hex?: string;
  out_long?: string;
}
interface InterleavingVector {
  types: string[];
  values: Array<number | string>;
  cols_hex: string[];
  interleaved_hex: string;
}
interface HilbertVector {
  bits: number;
  dims: number;
  point: string[];
  index_dec: string;
  indexBytes63_hex?: string;
}
/** Outputs of Hudi 0.15's own BinaryUtil / HilbertCurveUtils / shaded davidmoten curve (test/fixtures/generate.ts). */
const golden = spaceCurveFixture('golden-vectors.json') as {
  mappings: MappingVector[];
  zorder_interleaving_size8: InterleavingVector[];
  hilbert: HilbertVector[];
};

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const fromHex = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'hex'));

/** The golden file writes Java double literals as text. */
function javaDouble(text: string): number {
  const named: Record<string, number> = {
    'Double.MAX_VALUE': Number.MAX_VALUE,
    'Double.MIN_VALUE': Number.MIN_VALUE,
    NaN: Number.NaN,
    Infinity: Number.POSITIVE_INFINITY,
    '-Infinity': Number.NEGATIVE_INFINITY,
    '(double)1.05f': Math.fround(1.05),
  };
  return named[text] ?? Number(text);
}

function runMapping(vector: MappingVector): Uint8Array | bigint {
  const { fn, input } = vector;
  switch (fn) {
    case 'intTo8Byte':
      return intTo8Byte(input as number);
    case 'longTo8Byte':
      return longTo8Byte(BigInt(input as string));
    case 'doubleTo8Byte':
      return doubleTo8Byte(javaDouble(input as string));
    case 'utf8To8Byte':
      return utf8To8Byte(input as string);
    case 'byteTo8Byte':
      return byteTo8Byte(input as number);
    case 'paddingTo8Byte':
      return paddingTo8Byte(new Uint8Array(input as number[]));
    case 'convertStringToLong':
      return convertStringToLong(input as string);
    default:
      throw new Error(`golden mapping ${fn} has no counterpart`);
  }
}

describe('BinaryUtil golden vectors', () => {
  test('every mapping reproduces byte for byte', () => {
    assert.ok(golden.mappings.length >= 45);
    for (const vector of golden.mappings) {
      const actual = runMapping(vector);
      const label = `${vector.fn}(${JSON.stringify(vector.input)})`;
      if (vector.out_long !== undefined) assert.equal(actual, BigInt(vector.out_long), label);
      else assert.equal(hex(actual as Uint8Array), vector.out_hex, label);
    }
  });

  test('every Z-order interleaving reproduces, from raw columns and from typed values', () => {
    const typeOf: Record<string, SortColumnType> = { int: 'int', long: 'long', string: 'string', double: 'double' };
    for (const vector of golden.zorder_interleaving_size8) {
      const label = JSON.stringify(vector.values);
      const columns = vector.cols_hex.map(fromHex);
      assert.equal(hex(interleaveBits(columns, 8)), vector.interleaved_hex, label);
      assert.equal(hex(zOrderKey(columns)), vector.interleaved_hex, label);
      if (vector.types.includes('raw')) continue;
      const types = vector.types.map((name) => typeOf[name]!);
      const values = vector.values.map(
        (value, index): SortValue => (types[index] === 'long' ? BigInt(value) : types[index] === 'double' ? Number(value) : value),
      );
      values.forEach((value, index) => {
        assert.equal(hex(mapValueTo8Bytes(types[index]!, value)), vector.cols_hex[index], label);
      });
      assert.equal(hex(directZOrderKey(types, values)), vector.interleaved_hex, label);
    }
  });
});

describe('Hilbert golden vectors', () => {
  test('every index and 63-byte index reproduces', () => {
    for (const vector of golden.hilbert) {
      const point = vector.point.map((value) => BigInt(value));
      const label = `bits ${vector.bits} ${vector.point.join(',')}`;
      assert.equal(hilbertIndex(point, vector.bits).toString(), vector.index_dec, label);
      if (vector.indexBytes63_hex !== undefined) assert.equal(hex(hilbertIndexBytes(point, 63)), vector.indexBytes63_hex, label);
    }
  });

  const indexTables = (spaceCurveFixture('hilbert-2d-index-tables.json') as { tables: Record<string, string[][]> }).tables;
  for (const bits of [1, 2, 3, 4]) {
    test(`davidmoten 0.2.2 2-D index table (as the library's own expected tables lay it out), bits ${bits}`, () => {
      const table = indexTables[String(bits)]!.map((row) => row.map(Number));
      assert.equal(table.length, 2 ** bits);
      table.forEach((row, first) => {
        assert.equal(row.length, 2 ** bits);
        row.forEach((expected, second) => {
          assert.equal(hilbertIndex([BigInt(first), BigInt(second)], bits), BigInt(expected), `(${first}, ${second})`);
        });
      });
    });
  }
});

// --- Independent references: straight BigInt / bit-by-bit transcriptions of the Java algorithms. ---

/** BinaryUtil.interleaving + updatePos, one bit at a time. */
function referenceInterleaving(columns: Uint8Array[], size: number): Uint8Array {
  const result = new Uint8Array(size * columns.length);
  let resultBit = 0;
  for (let step = 0; step < size * 8; step++) {
    for (const column of columns) {
      const bit = (column[step >> 3]! >> (7 - (step % 8))) & 1;
      if (bit) result[resultBit >> 3]! |= 1 << (7 - (resultBit % 8));
      resultBit++;
    }
  }
  return result;
}

/** HilbertCurve.transposedIndex + toIndex on Java longs modelled as 64-bit BigInts. */
function referenceHilbert(point: bigint[], bits: number): bigint {
  const wrap = (value: bigint): bigint => BigInt.asUintN(64, value);
  const x = point.map(wrap);
  const n = x.length;
  const top = 1n << BigInt(bits - 1);
  for (let q = top; q > 1n; q >>= 1n) {
    const p = q - 1n;
    for (let i = 0; i < n; i++) {
      if ((x[i]! & q) !== 0n) {
        x[0] = x[0]! ^ p;
      } else {
        const t = (x[0]! ^ x[i]!) & p;
        x[0] = x[0]! ^ t;
        x[i] = x[i]! ^ t;
      }
    }
  }
  for (let i = 1; i < n; i++) x[i] = x[i]! ^ x[i - 1]!;
  let t = 0n;
  for (let q = top; q > 1n; q >>= 1n) if ((x[n - 1]! & q) !== 0n) t ^= q - 1n;
  for (let i = 0; i < n; i++) x[i] = x[i]! ^ t;
  let index = 0n;
  for (let bit = BigInt(bits - 1); bit >= 0n; bit--) {
    for (let j = 0; j < n; j++) index = (index << 1n) | ((x[j]! >> bit) & 1n);
  }
  return index;
}

/** HilbertCurveUtils.indexBytes: BigInteger.toByteArray() then left pad / keep the first `padding` bytes. */
function referenceIndexBytes(index: bigint, padding: number): Uint8Array {
  let text = index.toString(16);
  if (text.length % 2) text = `0${text}`;
  let bytes = fromHex(text);
  if (bytes[0]! >= 0x80 || bytes.length === 0) bytes = new Uint8Array([0, ...bytes]);
  if (bytes.length >= padding) return bytes.slice(0, padding);
  const out = new Uint8Array(padding);
  out.set(bytes, padding - bytes.length);
  return out;
}

function randomLong(random: () => number): bigint {
  const words = [random(), random()].map((value) => BigInt(Math.floor(value * 2 ** 32)));
  const value = BigInt.asIntN(64, (words[0]! << 32n) | words[1]!);
  // Mix in small values, extremes and negative numbers, the interesting cases.
  const pick = random();
  if (pick < 0.15) return BigInt(Math.floor(random() * 1000) - 500);
  if (pick < 0.2) return [0n, -1n, 0x7fffffffffffffffn, -0x8000000000000000n][Math.floor(random() * 4)]!;
  return value;
}

describe('agreement with bit-by-bit transcriptions', () => {
  test('interleaveBits matches BinaryUtil.interleaving for 1..7 columns and sizes 1..9', () => {
    const random = seededRandom(7);
    for (let columnCount = 1; columnCount <= 7; columnCount++) {
      for (let size = 1; size <= 9; size++) {
        for (let round = 0; round < 20; round++) {
          const columns = Array.from({ length: columnCount }, () => Uint8Array.from({ length: size }, () => random.nextInt(256)));
          assert.equal(hex(interleaveBits(columns, size)), hex(referenceInterleaving(columns, size)));
        }
      }
    }
  });

  test('Hilbert index matches Skilling/davidmoten on random longs, 2..9 dimensions, several bit widths', () => {
    const random = seededRandom(11);
    for (const bits of [1, 5, 31, 32, 33, 47, 62, 63]) {
      for (let dimensions = 2; dimensions <= 9; dimensions++) {
        const indexer = new HilbertIndexer(bits, dimensions);
        for (let round = 0; round < 40; round++) {
          const point = Array.from({ length: dimensions }, () => randomLong(random.nextDouble));
          point.forEach((value, dimension) => {
            indexer.setCoordinate(dimension, value);
          });
          const expected = referenceHilbert(point, bits);
          assert.equal(indexer.indexBigInt(), expected, `bits ${bits} point ${point.join(',')}`);
          // indexBytes with the padding Hudi uses, including the 8+ dimension truncation at 63 bits.
          assert.equal(hex(hilbertIndexBytes(point, bits, 63)), hex(referenceIndexBytes(expected, 63)));
          assert.equal(hex(hilbertIndexBytes(point, bits, 32)), hex(referenceIndexBytes(expected, 32)));
        }
      }
    }
  });

  test('the number-coordinate setter equals the bigint one for safe integers', () => {
    const indexer = new HilbertIndexer(32, 3);
    for (const values of [
      [0, 1, 2],
      [7, 123456, 2147483647],
      [-1, -5, 9007199254740991],
    ]) {
      values.forEach((value, dimension) => {
        indexer.setCoordinateNumber(dimension, value);
      });
      const fromNumbers = indexer.indexBigInt();
      assert.equal(fromNumbers, hilbertIndex(values.map(BigInt), 32));
    }
  });
});

describe('DIRECT mapping per type', () => {
  test('null mappings follow mapColumnValueTo8Bytes', () => {
    assert.equal(hex(mapValueTo8Bytes('long', null)), 'ffffffffffffffff');
    assert.equal(hex(mapValueTo8Bytes('date', null)), 'ffffffffffffffff');
    assert.equal(hex(mapValueTo8Bytes('timestamp', undefined)), 'ffffffffffffffff');
    assert.equal(hex(mapValueTo8Bytes({ kind: 'decimal', scale: 2 }, null)), 'ffffffffffffffff');
    assert.equal(hex(mapValueTo8Bytes('int', null)), '00000000ffffffff');
    assert.equal(hex(mapValueTo8Bytes('short', null)), '0000000080007fff');
    assert.equal(hex(mapValueTo8Bytes('byte', null)), '000000000000007f');
    assert.equal(hex(mapValueTo8Bytes('double', null)), 'ffefffffffffffff');
    assert.equal(hex(mapValueTo8Bytes('float', null)), hex(doubleTo8Byte(3.4028234663852886e38)));
    assert.equal(hex(mapValueTo8Bytes('string', null)), '0000000000000000');
    assert.equal(hex(mapValueTo8Bytes('boolean', null)), '0000000080000000');
    assert.equal(hex(mapValueTo8Bytes('binary', null)), '0000000000000000');
  });

  test('value mappings for the logical types', () => {
    assert.equal(hex(mapValueTo8Bytes('short', -2)), '000000007ffffffe');
    assert.equal(hex(mapValueTo8Bytes('byte', -1)), '00000000000000ff');
    assert.equal(hex(mapValueTo8Bytes('boolean', true)), '0000000080000001');
    assert.equal(hex(mapValueTo8Bytes('float', 1.05)), 'bff0ccccc0000000'); // rounded to the float first
    // Dates are java.sql.Date millis (UTC midnight), timestamps floor(micros / 1000).
    assert.equal(hex(mapValueTo8Bytes('date', 1)), hex(longTo8Byte(86_400_000n)));
    assert.equal(hex(mapValueTo8Bytes('timestamp', 1_700_000_000_123_999n)), hex(longTo8Byte(1_700_000_000_123n)));
    assert.equal(hex(mapValueTo8Bytes('timestamp', -1n)), hex(longTo8Byte(-1n)));
    assert.equal(hex(mapValueTo8Bytes('timestamp', -1001)), hex(longTo8Byte(-2n)));
    // Decimals use BigDecimal.longValue(): the integer part, truncated toward zero.
    assert.equal(hex(mapValueTo8Bytes({ kind: 'decimal', scale: 2 }, 12_345n)), hex(longTo8Byte(123n)));
    assert.equal(hex(mapValueTo8Bytes({ kind: 'decimal', scale: 2 }, -12_399)), hex(longTo8Byte(-123n)));
    assert.equal(hex(mapValueTo8Bytes({ kind: 'decimal', scale: 0 }, 42)), hex(longTo8Byte(42n)));
    assert.equal(hex(mapValueTo8Bytes('binary', new Uint8Array([1, 2]))), '0000000000000102');
    assert.equal(hex(mapValueTo8Bytes('long', 1_700_000_000_000)), hex(longTo8Byte(1_700_000_000_000n)));
    assert.equal(hex(mapValueTo8Bytes('long', -5)), hex(longTo8Byte(-5n)));
  });

  test('Hilbert longs follow mapColumnValueToLong', () => {
    const max = 0x7fffffffffffffffn;
    for (const type of ['long', 'int', 'short', 'byte', 'float', 'double', 'string', 'date', 'timestamp', 'binary'] as const) {
      assert.equal(mapValueToLong(type, null), max, type);
    }
    assert.equal(mapValueToLong('boolean', null), 0n);
    assert.equal(mapValueToLong('boolean', false), 0n);
    assert.equal(mapValueToLong('boolean', true), max);
    assert.equal(mapValueToLong('int', -7), -7n);
    assert.equal(mapValueToLong('short', -7), -7n);
    assert.equal(mapValueToLong('byte', -1), 255n); // convertBytesToLong(new byte[] {b}) is unsigned
    assert.equal(mapValueToLong('double', 2.5), 0x4004000000000000n); // raw bits, no flipping
    assert.equal(mapValueToLong('double', -2.5), BigInt.asIntN(64, 0xc004000000000000n));
    assert.equal(mapValueToLong('double', Number.NaN), 0x7ff8000000000000n);
    assert.equal(mapValueToLong('float', 1.05), 0x3ff0ccccc0000000n);
    assert.equal(mapValueToLong('string', 'abc'), 6382179n);
    assert.equal(mapValueToLong('string', 'abcdefghij'), 7017280452245743464n);
    assert.equal(mapValueToLong('date', -1), -86_400_000n);
    assert.equal(mapValueToLong('timestamp', 1_999n), 1n);
    assert.equal(mapValueToLong({ kind: 'decimal', scale: 3 }, 123_456n), 123n);
    assert.equal(mapValueToLong('long', -3n), -3n);
    assert.equal(mapValueToLong('binary', new Uint8Array([0xff, 0, 0, 0, 0, 0, 0, 1, 9])), BigInt.asIntN(64, 0xff00000000000001n));
    assert.equal(convertBytesToLong(new Uint8Array([1, 0])), 256n);
  });

  test('UTF-8 prefixes and decimal longValue match a JVM (OpenJDK 17)', () => {
    const javaUtf8: ReadonlyArray<readonly [number[], string]> = [
      [[32, 233, 55296, 55357], '00000020c3a93f3f'],
      [[48, 55296, 56832, 55296, 233, 56832, 90, 90, 55357], '30f09088803fc3a9'],
      [[2048, 48, 55357], '000000e0a080303f'],
      [[55357, 90, 56832], '00000000003f5a3f'],
      [[2048, 57344, 32, 55357, 233, 97], 'e0a080ee8080203f'],
    ];
    for (const [units, expected] of javaUtf8) assert.equal(hex(utf8To8Byte(String.fromCharCode(...units))), expected, units.join(','));
    const javaLongValue: ReadonlyArray<readonly [bigint, number, bigint]> = [
      [-2999968530923380n, 4, -299996853092n],
      [-1120640261926551n, 0, -1120640261926551n],
      [740671922430176n, 3, 740671922430n],
      [-1916669705490734n, 9, -1916669n],
    ];
    for (const [unscaled, scale, expected] of javaLongValue) {
      assert.equal(mapValueToLong({ kind: 'decimal', scale }, unscaled), expected);
      assert.equal(mapValueToLong({ kind: 'decimal', scale }, Number(unscaled)), expected);
    }
  });

  test('UTF-8 prefixes match Java getBytes, lone surrogates as "?"', () => {
    assert.equal(hex(utf8To8Byte('😀x')), '000000f09f988078');
    assert.equal(hex(utf8To8Byte('\ud800a')), '0000000000003f61');
    assert.equal(hex(utf8To8Byte('abcdefg\u00e9')), '61626364656667c3');
    assert.equal(hex(utf8To8Byte('ab\u0800')), '0000006162e0a080');
    assert.equal(hex(utf8To8Byte('abcdefg😀')), '61626364656667f0');
  });

  test('bad values are refused', () => {
    assert.throws(() => mapValueTo8Bytes('int', 2 ** 31), TypeError);
    assert.throws(() => mapValueTo8Bytes('int', 'x'), TypeError);
    assert.throws(() => mapValueTo8Bytes('long', 1.5), TypeError);
    assert.throws(() => mapValueTo8Bytes('string', 5), TypeError);
    assert.throws(() => intTo8Byte(0.5), RangeError);
    assert.throws(() => byteTo8Byte(128), RangeError);
  });
});

describe('sort-order properties', () => {
  const sortedBy = <T>(values: T[], key: (value: T) => Uint8Array): T[] => [...values].sort((a, b) => compareUnsignedBytes(key(a), key(b)));

  test('one-column Z-order keys of ints, longs and doubles sort like the numbers; negative < positive', () => {
    const ints = [5, -1, 0, 2147483647, -2147483648, 42, -42, 1];
    assert.deepEqual(
      sortedBy(ints, (value) => directZOrderKey(['int'], [value])),
      [...ints].sort((a, b) => a - b),
    );
    const longs = [5n, -1n, 0n, 0x7fffffffffffffffn, -0x8000000000000000n, 1n << 40n, -(1n << 40n)];
    assert.deepEqual(
      sortedBy(longs, (value) => directZOrderKey(['long'], [value])),
      [...longs].sort((a, b) => (a < b ? -1 : 1)),
    );
    const doubles = [1.5, -1.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-300, -1e300, Number.MAX_VALUE];
    assert.deepEqual(
      sortedBy(doubles, (value) => directZOrderKey(['double'], [value])),
      [...doubles].sort((a, b) => a - b),
    );
    // Hudi quirk: doubleTo8Byte leaves ±0.0 unflipped, so 0.0 (all zeros) sorts before every negative
    // number and -0.0 (0x8000...) between the negatives and the positives.
    assert.deepEqual(
      sortedBy([1, -1, -0, 0, Number.NEGATIVE_INFINITY], (value) => doubleTo8Byte(value)),
      [0, Number.NEGATIVE_INFINITY, -1, -0, 1],
    );
    assert.ok(compareUnsignedBytes(directZOrderKey(['int'], [-1]), directZOrderKey(['int'], [1])) < 0);
  });

  test('nulls sort last except on string and boolean axes', () => {
    const last = (type: SortColumnType, values: SortValue[]): void => {
      const nullKey = directZOrderKey([type], [null]);
      for (const value of values) assert.ok(compareUnsignedBytes(directZOrderKey([type], [value]), nullKey) <= 0, `${String(type)} ${String(value)}`);
    };
    last('int', [0, 2147483647, -5]);
    last('long', [0n, 0x7fffffffffffffffn]);
    last('double', [0, 1e308, -1]);
    assert.ok(compareUnsignedBytes(directZOrderKey(['string'], [null]), directZOrderKey(['string'], ['a'])) < 0);
  });

  test('two-column Z-order keys follow both axes; interleaving gives the first column the top bit', () => {
    const key = (x: number, y: number): Uint8Array => directZOrderKey(['int', 'int'], [x, y]);
    assert.ok(compareUnsignedBytes(key(0, 0), key(0, 1)) < 0);
    assert.ok(compareUnsignedBytes(key(0, 1), key(1, 0)) < 0);
    assert.ok(compareUnsignedBytes(key(-5, 3), key(3, -5)) < 0);
    assert.ok(compareUnsignedBytes(key(1, 1), key(2, 2)) < 0);
  });

  test('Hilbert keys over a grid visit neighbours: consecutive keys are one step apart', () => {
    const points: Array<[number, number]> = [];
    for (let x = 0; x < 16; x++) for (let y = 0; y < 16; y++) points.push([x, y]);
    const ordered = sortedBy(points, ([x, y]) => directHilbertKey(['long', 'long'], [BigInt(x), BigInt(y)]));
    for (let i = 1; i < ordered.length; i++) {
      const [ax, ay] = ordered[i - 1]!;
      const [bx, by] = ordered[i]!;
      assert.equal(Math.abs(ax - bx) + Math.abs(ay - by), 1);
    }
  });
});

describe('bulk keys and sorting', () => {
  const random = seededRandom(3);
  const rowCount = 500;
  const columns: CurveColumnValues[] = [
    { type: 'int', values: Array.from({ length: rowCount }, () => (random.nextDouble() < 0.05 ? null : random.nextInt(2000) - 1000)) },
    { type: 'string', values: Array.from({ length: rowCount }, () => (random.nextDouble() < 0.05 ? null : `k${random.nextInt(50)}`)) },
    { type: 'double', values: Array.from({ length: rowCount }, () => random.nextDouble() * 100 - 50) },
  ];

  test('bulk DIRECT keys equal the per-row keys', () => {
    for (const layout of ['z-order', 'hilbert'] as const) {
      const batch = computeDirectCurveKeys(layout, columns);
      assert.equal(batch.keyLength, layout === 'z-order' ? 24 : 63);
      const types = columns.map((column) => column.type);
      for (let row = 0; row < rowCount; row++) {
        const values = columns.map((column) => column.values[row]);
        const single = layout === 'z-order' ? directZOrderKey(types, values) : directHilbertKey(types, values);
        assert.equal(hex(curveKeyAt(batch, row)), hex(single));
      }
      // And the Hilbert key is the index of the mapped longs.
      if (layout === 'hilbert') {
        const longs = columns.map((column) => mapValueToLong(column.type, column.values[0]));
        assert.equal(hex(curveKeyAt(batch, 0)), hex(hilbertIndexBytes(longs, 63)));
      }
    }
  });

  test('sortRowsByCurveKey is a stable unsigned sort', () => {
    for (const layout of ['z-order', 'hilbert'] as const) {
      const batch = computeDirectCurveKeys(layout, [
        columns[0]!,
        { type: 'int', values: Array.from(columns[0]!.values, (value) => (value == null ? 0 : Number(value) % 3)) },
      ]);
      const expected = Array.from({ length: rowCount }, (_, row) => row).sort(
        (a, b) => compareUnsignedBytes(curveKeyAt(batch, a), curveKeyAt(batch, b)) || a - b,
      );
      assert.deepEqual([...sortRowsByCurveKey(batch)], expected);
    }
    assert.deepEqual([...sortRowsByCurveKey({ rowCount: 0, keyLength: 8, keys: new Uint8Array(0) })], []);
    // Random keys with constant bytes between varying ones, few values per byte (many ties), odd varying counts.
    let seed = 7;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
    for (const [keyLength, varyingAt] of [
      [16, [1, 5, 6, 7, 15]],
      [63, [0, 2, 3, 4, 9, 10, 30, 31, 62]],
      [8, [3]],
    ] as const) {
      const rows = 3000;
      const keys = new Uint8Array(rows * keyLength).fill(0xa5);
      for (let row = 0; row < rows; row++) for (const position of varyingAt) keys[row * keyLength + position] = next() % 4 === 0 ? 0xff : next() & 3;
      const batch = { rowCount: rows, keyLength, keys };
      const expected = Array.from({ length: rows }, (_, row) => row).sort((a, b) => compareUnsignedBytes(curveKeyAt(batch, a), curveKeyAt(batch, b)) || a - b);
      assert.deepEqual([...sortRowsByCurveKey(batch)], expected, `${keyLength}-byte keys`);
    }
    // Enough rows that buckets outgrow the insertion sort at several levels: clustered high bytes, full-entropy low
    // bytes, and a fifth of the rows repeating earlier keys (ties across distant rows).
    const rows = 40_000;
    const keyLength = 16;
    const keys = new Uint8Array(rows * keyLength);
    for (let row = 0; row < rows; row++) {
      const base = row * keyLength;
      if (row > 0 && next() < 51) {
        const source = ((next() * row) >>> 8) * keyLength;
        keys.copyWithin(base, source, source + keyLength);
      } else for (let position = 0; position < keyLength; position++) keys[base + position] = position < 3 ? next() & 1 : next();
    }
    const batch = { rowCount: rows, keyLength, keys };
    const expected = Array.from({ length: rows }, (_, row) => row).sort((a, b) => compareUnsignedBytes(curveKeyAt(batch, a), curveKeyAt(batch, b)) || a - b);
    assert.deepEqual([...sortRowsByCurveKey(batch)], expected, '40,000 clustered keys with repeats');
  });
});

/*
 * Checked on a JVM (OpenJDK 17): the key order of
 * `positions.stream().collect(Collectors.toMap(p -> p, p -> field))`, Hudi's `fieldMap`.
 */
const JDK17_TO_MAP_ORDERS: ReadonlyArray<readonly [number[], number[]]> = [
  [
    [3, 8, 4, 10, 5, 25, 38, 39, 13],
    [3, 4, 5, 38, 39, 8, 25, 10, 13],
  ],
  [
    [102, 76, 92, 32, 56, 170, 143, 9, 0, 63, 26],
    [32, 0, 102, 56, 9, 170, 26, 76, 92, 143, 63],
  ],
  [
    [61243, 15241, 16030, 7458, 47387, 38246, 46730, 50756, 22430, 61085],
    [7458, 50756, 38246, 15241, 46730, 61243, 47387, 61085, 16030, 22430],
  ],
  [
    [179, 65, 23, 137, 175, 134, 7],
    [65, 179, 134, 23, 7, 137, 175],
  ],
  [
    [60157, 48443, 27193, 34440, 45558, 34756, 67160, 4410, 55713, 24059],
    [55713, 34756, 45558, 34440, 27193, 67160, 4410, 48443, 24059, 60157],
  ],
  [
    [152, 1, 94, 194, 198, 119],
    [1, 194, 198, 119, 152, 94],
  ],
];

describe('DIRECT column order (HashMap<Integer, StructField> iteration)', () => {
  test('matches the JDK 17 Collectors.toMap iteration order', () => {
    for (const [positions, expected] of JDK17_TO_MAP_ORDERS) {
      assert.deepEqual(
        hudiDirectColumnOrder(positions).map((index) => positions[index]),
        expected,
      );
    }
  });

  test('ascending schema position when positions do not collide', () => {
    assert.deepEqual(hudiDirectColumnOrder([9, 5, 7]), [1, 2, 0]);
  });

  test('bucket order once positions wrap the table', () => {
    assert.deepEqual(hudiDirectColumnOrder([5, 17]), [1, 0]); // bucket 1 before bucket 5
    assert.deepEqual(hudiDirectColumnOrder([5, 21]), [0, 1]); // same bucket: insertion order
    assert.deepEqual(hudiDirectColumnOrder([5, 21], 'jdk8'), [1, 0]); // merge() prepends
    // 13 columns: JDK 9+ has resized to 32 buckets, JDK 8 resizes only on a 14th insert.
    const positions = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
    assert.deepEqual(
      hudiDirectColumnOrder(positions).map((index) => positions[index]),
      positions,
    );
    assert.deepEqual(
      hudiDirectColumnOrder(positions, 'jdk8').map((index) => positions[index]),
      [16, 17, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
  });

  test('buildCurveKeys applies that order for DIRECT and the configured order for SAMPLE', () => {
    const a = { type: 'int' as const, schemaPosition: 5, values: [1, 2, 3] };
    const b = { type: 'int' as const, schemaPosition: 17, values: [7, 8, 9] };
    const direct = buildCurveKeys([a, b], { layout: 'z-order' });
    assert.equal(hex(direct.keys), hex(computeDirectCurveKeys('z-order', [b, a]).keys));
    assert.throws(() => buildCurveKeys([a], { layout: 'z-order' }), /range-sorts/);
    assert.throws(() => buildCurveKeys([a], { layout: 'hilbert', buildMethod: 'sample' }), /2\+ dimensions/);
    const sampled = buildCurveKeys([a, b], { layout: 'z-order', buildMethod: 'sample' });
    const bounds = buildSampleRangeBounds([a, b]);
    assert.equal(hex(sampled.keys), hex(computeSampleCurveKeys('z-order', [a, b], bounds).keys));
  });
});

describe('SAMPLE build method', () => {
  const range = (count: number, from = 0): number[] => Array.from({ length: count }, (_, i) => from + i);

  test('bounds are the weighted quantiles of the sample, duplicates skipped', () => {
    const bounds = buildSampleRangeBounds([{ type: 'int', values: range(10, 1) }], 5);
    const column = bounds.columns[0]!;
    assert.equal(column.kind, 'long');
    assert.deepEqual([...column.bounds], [2, 4, 6, 8]);
    const random = seededRandom(1);
    const ranks = [1, 2, 3, 8, 9, 10, null].map((value) => mapToBucket(bounds, 0, value, random));
    assert.deepEqual(ranks, [0, 0, 1, 3, 4, 4, 5]); // null: bounds + 1
  });

  test('a column with fewer bounds is stretched with random sub-ranks', () => {
    const columns: CurveColumnValues[] = [
      { type: 'long', values: range(10, 1).map(BigInt) },
      { type: 'int', values: [0, 0, 0, 0, 0, 1, 1, 1, 1, 1] },
    ];
    const bounds = buildSampleRangeBounds(columns, 5);
    const stretched = bounds.columns[1]!;
    assert.equal(stretched.kind, 'expanded-long');
    assert.deepEqual([...stretched.bounds], [0.5, 1, 1.5, 2]);
    assert.equal(bounds.maxBoundCount, 4);
    const random = seededRandom(5);
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const zero = mapToBucket(bounds, 1, 0, random);
      const one = mapToBucket(bounds, 1, 1, random);
      assert.ok(zero === 0 || zero === 1);
      assert.ok(one === 2 || one === 3);
      seen.add(zero).add(one);
    }
    assert.equal(seen.size, 4);
    assert.equal(mapToBucket(bounds, 1, null, random), 5);
  });

  test('string columns: Java String order, nulls sampled as "" and ranked past maxBoundNum', () => {
    const values = ['d', 'b', null, 'a', 'c', 'e', 'f', 'g', 'h', 'i'];
    const bounds = buildSampleRangeBounds(
      [
        { type: 'string', values },
        { type: 'int', values: range(10) },
      ],
      5,
    );
    const column = bounds.columns[0]!;
    assert.equal(column.kind, 'string');
    assert.deepEqual(column.bounds, ['a', 'c', 'e', 'g']); // sorted: "", a, b, c, ...
    const random = seededRandom(2);
    assert.equal(mapToBucket(bounds, 0, null, random), bounds.maxBoundCount + 1);
    assert.equal(mapToBucket(bounds, 0, 'a', random), 0);
    assert.equal(mapToBucket(bounds, 0, 'b', random), 1);
    assert.equal(mapToBucket(bounds, 0, 'zz', random), 4);
  });

  test('doubles are ranked by their raw long bits, as Hudi does (negatives reversed, below positives)', () => {
    const bounds = buildSampleRangeBounds([{ type: 'double', values: [-1, -2, 1, 2, 3, 4] }], 6);
    const random = seededRandom(0);
    const rank = (value: number): number => mapToBucket(bounds, 0, value, random);
    assert.deepEqual([-1, -2, 1, 4].map(rank), [0, 1, 2, 5]);
  });

  test('more than 128 bounds use binary search with the same ranks as a scan', () => {
    const values = range(1000).map((i) => i * 3);
    const bounds = buildSampleRangeBounds([{ type: 'int', values }], 400);
    const column = bounds.columns[0]!;
    assert.equal(column.bounds.length, 399);
    const random = seededRandom(0);
    for (const probe of [-5, 0, 1, 7, 8, 9, 1500, 2997, 5000]) {
      const scan = [...(column.bounds as Float64Array)].filter((bound) => probe > bound).length;
      assert.equal(mapToBucket(bounds, 0, probe, random), scan, `probe ${probe}`);
    }
  });

  test('inputs above the reservoir are sampled; bounds stay sorted and distinct', () => {
    const random = seededRandom(9);
    const values = Array.from({ length: 5000 }, () => random.nextInt(100_000));
    const bounds = buildSampleRangeBounds([{ type: 'int', values }], 10, 42);
    const column = [...bounds.columns[0]!.bounds] as number[];
    assert.equal(column.length, 9);
    for (let i = 1; i < column.length; i++) assert.ok(column[i]! > column[i - 1]!);
    assert.deepEqual(buildSampleRangeBounds([{ type: 'int', values }], 10, 42), bounds, 'same seed, same bounds');
  });

  test('sample keys: Z-order of intTo8Byte(rank), Hilbert bits(32) over ranks padded to 32 bytes', () => {
    const columns: CurveColumnValues[] = [
      { type: 'int', values: range(10, 1) },
      { type: 'timestamp', values: range(10).map((i) => BigInt(i * 1000)) },
    ];
    const bounds = buildSampleRangeBounds(columns, 5);
    const zBatch = computeSampleCurveKeys('z-order', columns, bounds);
    const hBatch = computeSampleCurveKeys('hilbert', columns, bounds);
    assert.equal(zBatch.keyLength, 16);
    assert.equal(hBatch.keyLength, 32);
    const random = seededRandom(0);
    for (let row = 0; row < 10; row++) {
      const ranks = columns.map((column, index) => mapToBucket(bounds, index, column.values[row], random));
      assert.equal(hex(curveKeyAt(zBatch, row)), hex(interleaveBits(ranks.map(intTo8Byte))));
      assert.equal(hex(curveKeyAt(hBatch, row)), hex(hilbertIndexBytes(ranks.map(BigInt), 32, 32)));
    }
  });

  test('boolean or binary columns switch every column to Spark ordering and Z-order', () => {
    const columns: CurveColumnValues[] = [
      { type: 'boolean', values: [true, false, null, true, false, true] },
      { type: 'double', values: [-1, -2, 0.5, 3, Number.NaN, -0] },
    ];
    const bounds = buildSampleRangeBounds(columns, 6);
    assert.equal(bounds.sampler, 'natural');
    assert.deepEqual(bounds.columns[0]!.bounds, [null, false, true]);
    assert.deepEqual(bounds.columns[1]!.bounds, [-2, -1, -0, 0.5, 3]); // natural double order this time
    const batch = computeSampleCurveKeys('hilbert', columns, bounds);
    assert.equal(batch.keyLength, 16, 'Hudi builds Z-order here even for hilbert');
  });

  test('empty input gives empty bounds instead of failing', () => {
    const bounds = buildSampleRangeBounds([
      { type: 'int', values: [] },
      { type: 'string', values: [] },
    ]);
    assert.equal(bounds.maxBoundCount, 0);
    assert.equal(
      computeSampleCurveKeys(
        'z-order',
        [
          { type: 'int', values: [] },
          { type: 'string', values: [] },
        ],
        bounds,
      ).rowCount,
      0,
    );
  });
});
