/**
 * The HFile module on its own: byte encodings, block checksums, and round trips of the writer through the
 * reader (multi-block files, seeks, duplicates, meta blocks, file info, empty files), plus the errors for bad
 * input. Compatibility with real Hudi/HBase files is in hfile-hudi.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BLOCK_HEADER_SIZE, parseBlockHeader, readBlock, serializeBlock } from '../../lib/hfile/block.js';
import { ByteCursor, ByteWriter, compareBytes } from '../../lib/hfile/bytes.js';
import { crc32c } from '../../lib/hfile/crc32c.js';
import {
  FileInfoKey,
  type HFileCellInput,
  HFileFormatError,
  HFileWriteError,
  HUDI_BLOOM_FILTER_META_BLOCK,
  HUDI_HFILE_COMPARATOR,
  HudiFileInfoKey,
  hfileCellSize,
  KeyType,
  LATEST_TIMESTAMP,
  readHFile,
  readHFileCells,
  readHudiHFile,
  writeHFile,
  writeHFileAsync,
  writeHFilePartsAsync,
  writeHudiBaseHFile,
  writeHudiLogBlockHFile,
  writeHudiLogBlockHFileAsync,
} from '../../lib/hfile/index.js';
import { compareHudiCellKeyRows, encodeHudiCellKey, readCell } from '../../lib/hfile/key-value.js';

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const bytesOf = (value: string): Uint8Array => new TextEncoder().encode(value);

/** Deterministic pseudo-random bytes (so the compressed sizes vary, but every run is the same). */
function noise(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) | 0;
    out[i] = (x >>> 16) & 0xff;
  }
  return out;
}

function cells(count: number, valueLength: (i: number) => number = (i) => 20 + (i % 37)): HFileCellInput[] {
  return Array.from({ length: count }, (_, i) => ({ key: `key-${String(i).padStart(5, '0')}`, value: noise(i, valueLength(i)) }));
}

describe('byte encodings', () => {
  test('Hadoop variable-length longs round-trip and use WritableUtils byte layouts', () => {
    const known: Array<[bigint, number[]]> = [
      [0n, [0x00]],
      [127n, [0x7f]],
      [-112n, [0x90]],
      [128n, [0x8f, 0x80]],
      [255n, [0x8f, 0xff]],
      [256n, [0x8e, 0x01, 0x00]],
      [-113n, [0x87, 0x70]],
      [0x7fffffffffffffffn, [0x88, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]],
      [-0x8000000000000000n, [0x80, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]],
    ];
    for (const [value, encoded] of known) {
      const bytes = new ByteWriter().hadoopVLong(value).toBytes();
      assert.deepEqual([...bytes], encoded, `encoding of ${value}`);
      assert.equal(new ByteCursor(bytes).hadoopVLong(), value);
    }
  });

  test('protobuf varints round-trip, including negative longs as ten bytes', () => {
    for (const value of [0n, 1n, 127n, 128n, 300n, 2n ** 35n, 2n ** 63n - 1n]) {
      assert.equal(new ByteCursor(new ByteWriter().varint(value).toBytes()).varint(), value);
    }
    const minusOne = new ByteWriter().varint(-1).toBytes();
    assert.equal(minusOne.length, 10);
    assert.equal(BigInt.asIntN(64, new ByteCursor(minusOne).varint()), -1n);
  });

  test('CRC-32C matches the Castagnoli check value', () => {
    assert.equal(crc32c(bytesOf('123456789')), 0xe3069283);
    assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
  });
});

describe('blocks', () => {
  test('a block carries one CRC32C per 16 KiB chunk of header and stored payload, and reads back', () => {
    const payload = noise(7, 40_000);
    const { bytes } = serializeBlock('DATA', payload, -1, { compression: 'NONE' });
    const header = parseBlockHeader(bytes, 0);
    assert.equal(header.type, 'DATA');
    assert.equal(header.checksumType, 2);
    assert.equal(header.bytesPerChecksum, 16384);
    assert.equal(header.onDiskDataSizeWithHeader, BLOCK_HEADER_SIZE + payload.length);
    // 40033 bytes of header + data: three chunks, three checksums.
    assert.equal(header.onDiskSizeWithoutHeader, payload.length + 3 * 4);
    assert.equal(header.prevBlockOffset, -1n);
    assert.deepEqual(readBlock(bytes, 0, 'NONE').payload, payload);
  });

  test('a flipped bit anywhere in the stored block fails its checksum', () => {
    const { bytes } = serializeBlock('META', noise(3, 20_000), 12, { compression: 'GZ' });
    for (const position of [40, bytes.length - 20]) {
      const corrupt = bytes.slice();
      corrupt[position]! ^= 0x10;
      assert.throws(
        () => readBlock(corrupt, 0, 'GZ'),
        (error: unknown) => error instanceof HFileFormatError && /checksum/.test(error.message),
      );
    }
  });

  test('GZ blocks are gzip members with the header Java writes (no mtime, OS 255)', () => {
    const { bytes } = serializeBlock('DATA', noise(1, 100), -1, { compression: 'GZ' });
    assert.deepEqual([...bytes.subarray(BLOCK_HEADER_SIZE, BLOCK_HEADER_SIZE + 10)], [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  });
});

describe('writer and reader round trip', () => {
  for (const compression of ['GZ', 'NONE'] as const) {
    test(`${compression}: many blocks, every cell back in order, trailer and file info as HBase writes them`, () => {
      const input = cells(2000);
      const bytes = writeHFile(input, { compression, blockSize: 4096, fileInfo: { schema: '{"type":"string"}', custom: { int: 42 } } });
      const file = readHFile(bytes);
      assert.ok(file.dataIndex.length > 10, `expected many data blocks, got ${file.dataIndex.length}`);
      assert.equal(file.entryCount, input.length);
      assert.equal(file.compression, compression);
      const read = [...file.cells()];
      assert.deepEqual(
        read.map((cell) => cell.key),
        input.map((cell) => cell.key),
      );
      assert.deepEqual(
        read.map((cell) => [...cell.value]),
        input.map((cell) => [...cell.value]),
      );
      for (const cell of read) {
        assert.equal(cell.timestamp, LATEST_TIMESTAMP);
        assert.equal(cell.type, KeyType.Put);
        assert.equal(cell.family.length + cell.qualifier.length, 0);
      }
      const t = file.trailer;
      assert.equal(t.majorVersion, 3);
      assert.equal(t.minorVersion, 3);
      assert.equal(t.numDataIndexLevels, 1);
      assert.equal(t.dataIndexCount, file.dataIndex.length);
      assert.equal(t.firstDataBlockOffset, 0);
      assert.equal(t.lastDataBlockOffset, file.dataIndex.at(-1)!.offset);
      assert.equal(t.comparatorClassName, HUDI_HFILE_COMPARATOR);
      const keyLength = 2 + 'key-00000'.length + 1 + 8 + 1;
      assert.equal(file.fileInfo.getInt(FileInfoKey.AVG_KEY_LEN), keyLength);
      const totalValue = input.reduce((sum, cell) => sum + cell.value.length, 0);
      assert.equal(file.fileInfo.getInt(FileInfoKey.AVG_VALUE_LEN), Math.floor(totalValue / input.length));
      assert.equal(file.fileInfo.getInt(FileInfoKey.KEY_VALUE_VERSION), 1);
      assert.equal(file.fileInfo.getLong(FileInfoKey.MAX_MEMSTORE_TS_KEY), 0n);
      assert.equal(file.fileInfo.getLong(FileInfoKey.CREATE_TIME_TS), 0n);
      assert.equal(text(file.lastKey!.row), 'key-01999');
      assert.equal(file.fileInfo.getString('schema'), '{"type":"string"}');
      assert.equal(file.fileInfo.getInt('custom'), 42);
      // HBase keeps file info sorted by key bytes.
      const names = file.fileInfo.entries.map((entry) => text(entry.key));
      assert.deepEqual(names, [...names].sort());
    });
  }

  test('data blocks close at the first cell once they hold blockSize bytes, and index each block by its first key', () => {
    const input = cells(300, () => 50);
    const blockSize = 1000;
    const file = readHFile(writeHFile(input, { blockSize, compression: 'NONE' }));
    const perCell = hfileCellSize(input[0]!.key, input[0]!.value);
    const perBlock = Math.ceil(blockSize / perCell);
    assert.equal(file.dataIndex.length, Math.ceil(input.length / perBlock));
    file.dataIndex.forEach((entry, i) => {
      assert.equal(text(entry.firstKey.row), input[i * perBlock]!.key as string);
      assert.equal(file.dataBlock(i).payload.length, Math.min(perBlock, input.length - i * perBlock) * perCell);
    });
  });

  test('seeks find every key, absent keys between and around blocks find nothing, cellsFrom starts at the next key', () => {
    const input = cells(1500).filter((_, i) => i % 3 !== 1);
    const file = readHFile(writeHFile(input, { blockSize: 2048 }));
    assert.ok(file.dataIndex.length > 5);
    for (const cell of input) assert.equal(file.get(cell.key)?.key, cell.key);
    for (let i = 1; i < 1500; i += 3) assert.equal(file.get(`key-${String(i).padStart(5, '0')}`), undefined);
    assert.equal(file.get(''), undefined);
    assert.equal(file.get('a'), undefined);
    assert.equal(file.get('zzz'), undefined);
    const from = (row: string, n: number): string[] => {
      const keys: string[] = [];
      for (const cell of file.cellsFrom(row)) {
        keys.push(cell.key);
        if (keys.length === n) break;
      }
      return keys;
    };
    assert.deepEqual(from('key-00001', 2), ['key-00002', 'key-00003']);
    assert.deepEqual(from('', 1), ['key-00000']);
    assert.deepEqual(from('key-01499', 5), ['key-01499']);
    assert.deepEqual(from('key-014990', 5), []);
    for (const entry of file.dataIndex) assert.deepEqual(from(text(entry.firstKey.row), 1), [text(entry.firstKey.row)]);
  });

  test('duplicate keys (allowed for log blocks) stay in one block and all come back', () => {
    const input: HFileCellInput[] = [];
    for (let i = 0; i < 200; i++)
      for (let copy = 0; copy < (i % 5 === 0 ? 40 : 1); copy++) input.push({ key: `k${String(i).padStart(3, '0')}`, value: noise(i * 100 + copy, 30) });
    const file = readHFile(writeHFile(input, { blockSize: 512, allowDuplicateKeys: true }));
    assert.equal([...file.cells()].length, input.length);
    const rowsOfBlock = (index: number): string[] => {
      const cursor = new ByteCursor(file.dataBlock(index).payload);
      const rows: string[] = [];
      while (cursor.remaining > 0) rows.push(readCell(cursor, { includesMvcc: true, includesTags: false }).key);
      return rows;
    };
    assert.ok(file.dataIndex.length > 10);
    for (let b = 1; b < file.dataIndex.length; b++) assert.notEqual(rowsOfBlock(b - 1).at(-1), rowsOfBlock(b)[0], `blocks ${b - 1} and ${b} split a row`);
    const blocksWithK005 = file.dataIndex.map((_, b) => rowsOfBlock(b).filter((row) => row === 'k005').length).filter((count) => count > 0);
    assert.deepEqual(blocksWithK005, [40]);
    const all = file.getAll('k005');
    assert.equal(all.length, 40);
    assert.deepEqual(
      all.map((cell) => [...cell.value]),
      input.filter((cell) => cell.key === 'k005').map((cell) => [...cell.value]),
    );
  });

  test('an empty file has no data blocks, -1 data block offsets and no last key', () => {
    const file = readHFile(writeHFile([], { fileInfo: { schema: 's' } }));
    assert.equal(file.entryCount, 0);
    assert.equal(file.dataIndex.length, 0);
    assert.equal(file.trailer.firstDataBlockOffset, -1);
    assert.equal(file.trailer.lastDataBlockOffset, -1);
    assert.equal(file.lastKey, undefined);
    assert.equal(file.fileInfo.has(FileInfoKey.LAST_KEY), false);
    assert.equal(file.fileInfo.getInt(FileInfoKey.AVG_KEY_LEN), 0);
    assert.deepEqual([...file.cells()], []);
    assert.equal(file.get('x'), undefined);
  });

  test('meta blocks are written sorted by name and read back by name', () => {
    const file = readHFile(
      writeHFile(cells(3), {
        metaBlocks: [
          { name: 'zeta', payload: bytesOf('z') },
          { name: 'alpha', payload: noise(2, 50_000) },
        ],
      }),
    );
    assert.deepEqual(file.metaBlockNames, ['alpha', 'zeta']);
    assert.deepEqual(file.metaBlock('alpha'), noise(2, 50_000));
    assert.equal(text(file.metaBlock('zeta')!), 'z');
    assert.equal(file.metaBlock('missing'), undefined);
  });

  test('readHFileCells detaches the cells from the file bytes', () => {
    const bytes = writeHFile(cells(10), { compression: 'NONE' });
    const detached = readHFileCells(bytes);
    bytes.fill(0, 0, 2000);
    assert.equal(detached[3]!.key, 'key-00003');
    assert.deepEqual(detached[3]!.value, noise(3, 23));
  });
});

describe('writing off the main thread', () => {
  const valueParts = (value: Uint8Array): Uint8Array[] => [value.subarray(0, 3), value.subarray(3, 3), value.subarray(3)];

  test('writeHFileAsync writes the bytes writeHFile writes: blocks, repeated rows, values in parts, meta blocks', async () => {
    const repeated: HFileCellInput[] = [];
    for (let i = 0; i < 300; i++)
      for (let copy = 0; copy < (i % 7 === 0 ? 30 : 1); copy++)
        repeated.push({ key: `k${String(i).padStart(3, '0')}`, value: noise(i * 100 + copy, 40 + (i % 50)) });
    const cases: Array<[string, HFileCellInput[], Parameters<typeof writeHFile>[1]]> = [
      ['GZ, many blocks', cells(3000), { blockSize: 4096, fileInfo: { schema: 's' } }],
      ['GZ level 1, blocks past one checksum chunk', cells(400, () => 900), { gzipLevel: 1, blockSize: 64 * 1024 }],
      ['NONE, many blocks', cells(3000), { compression: 'NONE', blockSize: 2048 }],
      ['NONE, blocks past one checksum chunk', cells(200, () => 3000), { compression: 'NONE', blockSize: 100_000 }],
      ['repeated rows', repeated, { blockSize: 512, allowDuplicateKeys: true }],
      [
        'meta blocks',
        cells(50),
        {
          metaBlocks: [
            { name: 'b', payload: noise(9, 40_000) },
            { name: 'a', payload: bytesOf('a') },
          ],
        },
      ],
      ['empty', [], { fileInfo: { schema: 's' } }],
    ];
    for (const [name, input, options] of cases) {
      const expected = writeHFile(input, options);
      assert.deepEqual(await writeHFileAsync(input, options), expected, name);
      for (const blocksInFlight of [1, 9])
        assert.deepEqual(await writeHFileAsync(input, options, blocksInFlight), expected, `${name}, ${blocksInFlight} in flight`);
      const inParts = input.map((cell) => ({ key: cell.key, value: valueParts(cell.value as Uint8Array) }));
      assert.deepEqual(await writeHFileAsync(inParts, options), expected, `${name}, values in parts`);
      assert.deepEqual(new Uint8Array(Buffer.concat(await writeHFilePartsAsync(input, options, 3))), expected, `${name}, file in parts`);
      assert.deepEqual(writeHFile(inParts, options), expected, `${name}, values in parts, on the main thread`);
    }
  });

  test("writeHudiLogBlockHFileAsync encodes as it writes and gives writeHudiLogBlockHFile's bytes, in parts", async () => {
    const encode = (record: { seed: number }): Uint8Array => noise(record.seed, 100 + (record.seed % 300));
    const options = { schema: '{"type":"string"}', gzipLevel: 1, blockSize: 8192 };
    const ascii = Array.from({ length: 2000 }, (_, i) => ({ key: `k${(i * 7919) % 1500}`, seed: i }));
    // Past the BMP (surrogate pairs in UTF-16) and high in it: UTF-16 and UTF-8 order differ there.
    const wide = ['\u{1F600}', '\uFFFD', 'z', 'é', '\uE000', 'a\u{10000}', 'a\uFFFF', ''].flatMap((key, i) =>
      [0, 1].map((copy) => ({ key, seed: i * 2 + copy })),
    );
    const bmp = wide.filter((record) => !/[\uD800-\uDFFF]/.test(record.key));
    for (const records of [ascii, wide, bmp]) {
      const expected = writeHudiLogBlockHFile(
        records.map((record) => ({ key: record.key, value: encode(record) })),
        options,
      );
      const parts = await writeHudiLogBlockHFileAsync(records, encode, options);
      assert.ok(parts.length > 2, 'the blocks come apart');
      assert.deepEqual(new Uint8Array(Buffer.concat(parts)), expected);
    }
  });

  test("zlib's run-length strategy: other bytes, the same cells read back, on the main thread or off it", async () => {
    // Mostly one character, as a bloom filter's Base64 text is.
    const runs = (seed: number): Uint8Array => noise(seed, 3000).map((byte) => (byte < 16 ? 66 + (byte % 4) : 65));
    const input = Array.from({ length: 600 }, (_, i) => ({ key: `key-${String(i).padStart(5, '0')}`, value: runs(i) }));
    const options = { blockSize: 64 * 1024, gzipLevel: 1 };
    const runLength = writeHFile(input, { ...options, gzipStrategy: 'run-length' });
    assert.notDeepEqual(runLength, writeHFile(input, options));
    assert.deepEqual(await writeHFileAsync(input, { ...options, gzipStrategy: 'run-length' }), runLength);
    assert.deepEqual(
      [...readHFile(runLength).cells()].map((cell) => [cell.key, [...cell.value]]),
      input.map((cell) => [cell.key, [...cell.value]]),
    );
  });

  test('a failure while writing is thrown once the blocks already compressing are done', async () => {
    const input = cells(2000);
    const failing = (function* () {
      yield* input.slice(0, 1500);
      throw new Error('no more cells');
    })();
    await assert.rejects(writeHFileAsync(failing, { blockSize: 1024 }), /no more cells/);
    await assert.rejects(writeHFileAsync([input[1]!, input[0]!]), HFileWriteError);
  });
});

describe('Hudi conventions', () => {
  const schema = '{"type":"record","name":"R","fields":[{"name":"key","type":"string"}]}';
  const bloomFilter = { typeCode: 'DYNAMIC_V0', serialized: 'AAAA' };

  test('a base file sorts its records and carries schema, min/max keys, bloom type and the bloomFilter meta block', () => {
    const records = ['b', 'c', 'a', '__all_partitions__'].map((key, i) => ({ key, value: noise(i, 10) }));
    const hudi = readHudiHFile(writeHudiBaseHFile(records, { schema, bloomFilter }));
    assert.deepEqual(
      hudi.records.map((record) => record.key),
      ['__all_partitions__', 'a', 'b', 'c'],
    );
    assert.equal(hudi.schema, schema);
    assert.equal(hudi.minRecordKey, '__all_partitions__');
    assert.equal(hudi.maxRecordKey, 'c');
    assert.deepEqual(hudi.bloomFilter, bloomFilter);
    assert.deepEqual(hudi.file.metaBlockNames, [HUDI_BLOOM_FILTER_META_BLOCK]);
    assert.equal(hudi.file.fileInfo.getString(HudiFileInfoKey.BLOOM_FILTER_TYPE_CODE), 'DYNAMIC_V0');
    assert.deepEqual(hudi.records[2]!.value, noise(0, 10));
  });

  test('an empty base file has empty min/max keys, as Hudi writes them', () => {
    const hudi = readHudiHFile(writeHudiBaseHFile([], { schema, bloomFilter }));
    assert.equal(hudi.minRecordKey, '');
    assert.equal(hudi.maxRecordKey, '');
    assert.equal(hudi.records.length, 0);
  });

  test('keys sort by UTF-8 bytes, which HBase requires', () => {
    const keys = ['\u{1F600}', '\uFFFD', 'z', 'é'];
    const hudi = readHudiHFile(
      writeHudiBaseHFile(
        keys.map((key) => ({ key, value: new Uint8Array(1) })),
        { schema, bloomFilter },
      ),
    );
    assert.deepEqual(
      hudi.records.map((record) => record.key),
      ['z', 'é', '\uFFFD', '\u{1F600}'],
    );
  });

  test('a base file refuses duplicate keys; a log block keeps them', () => {
    const records = [
      { key: 'a', value: bytesOf('1') },
      { key: 'a', value: bytesOf('2') },
    ];
    assert.throws(
      () => writeHudiBaseHFile(records, { schema, bloomFilter }),
      (error: unknown) => error instanceof HFileWriteError && /duplicate record key "a"/.test(error.message),
    );
    const hudi = readHudiHFile(writeHudiLogBlockHFile(records, { schema }));
    assert.deepEqual(
      hudi.records.map((record) => text(record.value)),
      ['1', '2'],
    );
    assert.deepEqual(
      hudi.file.fileInfo.names().filter((name) => !name.startsWith('hfile.') && !/^(KEY_VALUE_VERSION|MAX_MEMSTORE_TS_KEY)$/.test(name)),
      ['schema'],
    );
    assert.equal(hudi.bloomFilter, undefined);
  });
});

describe('bad input', () => {
  test('the writer refuses unsorted keys, duplicates it was not told to allow, reserved file info and huge rows', () => {
    const value = new Uint8Array(1);
    assert.throws(
      () =>
        writeHFile([
          { key: 'b', value },
          { key: 'a', value },
        ]),
      (error: unknown) => error instanceof HFileWriteError && /ascending/.test(error.message),
    );
    assert.throws(
      () =>
        writeHFile([
          { key: 'a', value },
          { key: 'a', value },
        ]),
      HFileWriteError,
    );
    assert.throws(() => writeHFile([], { fileInfo: { [FileInfoKey.LAST_KEY]: 'x' } }), HFileWriteError);
    assert.throws(
      () => writeHFile([{ key: 'x'.repeat(40_000), value }]),
      (error: unknown) => error instanceof HFileWriteError && /row limit/.test(error.message),
    );
    assert.throws(() => writeHFile([], { blockSize: 0 }), HFileWriteError);
  });

  test('rows compare in place as compareBytes compares them: prefixes, multi-byte UTF-8, empty rows', () => {
    const rows = ['', 'a', 'ab', 'abc', 'b', 'aa', 'é', 'e\u0301', '\u{1F600}', '\uFFFD', 'z'.repeat(300), 'z'.repeat(299)];
    const sign = (n: number): number => Math.sign(n);
    for (const a of rows)
      for (const b of rows) {
        const [keyA, keyB] = [encodeHudiCellKey(a), encodeHudiCellKey(b)];
        assert.equal(sign(compareHudiCellKeyRows(keyA, keyB)), sign(compareBytes(bytesOf(a), bytesOf(b))), `${a} vs ${b}`);
      }
    assert.throws(
      () =>
        writeHFile([
          { key: 'ab', value: new Uint8Array(1) },
          { key: 'a', value: new Uint8Array(1) },
        ]),
      (error: unknown) => error instanceof HFileWriteError && error.message.includes('"a" follows "ab"'),
    );
  });

  test('the reader names the file and the problem for truncated, foreign and corrupt bytes', () => {
    const bytes = writeHFile(cells(50), { compression: 'GZ' });
    const named = (pattern: RegExp) => (error: unknown) => error instanceof HFileFormatError && error.location === 'x.hfile' && pattern.test(error.message);
    assert.throws(() => readHFile(bytes.subarray(0, 100), { location: 'x.hfile' }), named(/too few/));
    assert.throws(() => readHFile(bytes.subarray(10), { location: 'x.hfile' }), named(/block|magic|offset/));
    assert.throws(() => readHFile(new Uint8Array(5000), { location: 'x.hfile' }), named(/version/));
    const corrupt = bytes.slice();
    corrupt[60]! ^= 1;
    const file = readHFile(corrupt, { location: 'x.hfile' });
    assert.throws(
      () => [...file.cells()],
      (error: unknown) => error instanceof HFileFormatError && /checksum/.test(error.message),
    );
  });
});
