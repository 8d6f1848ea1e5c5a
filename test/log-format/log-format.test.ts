/**
 * The log format module on its own: names, block layout (hand-built golden bytes), content codecs, torn-write
 * handling, and the writer/reader over a local Storage. Real Hudi files are in log-format-hudi.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  avroDataBlock,
  compareLogFileNames,
  type DeleteRecord,
  decodeAvroDataBlockContent,
  decodeDataBlock,
  decodeDeleteBlockContent,
  decodeLogBlocks,
  deleteBlock,
  encodeAvroDataBlockContent,
  encodeDeleteBlockContent,
  encodeLogBlock,
  encodeLogBlocks,
  type LogBlockInput,
  type LogFileName,
  LogFormatError,
  listLogFiles,
  logFileName,
  logFilesOf,
  nextLogVersion,
  parseLogFileName,
  rawDataBlock,
  readAvroDataBlock,
  readCommandBlock,
  readDeleteBlock,
  readFileGroupLogs,
  rollbackCommandBlock,
  splitAvroDataBlockContent,
  UnsupportedLogBlockError,
  writeLogFile,
} from '../../lib/log-format/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { tempDir } from '../helpers/paths.js';

const TINY_SCHEMA = '{"type":"record","name":"r","fields":[{"name":"k","type":"string"}]}';

/** Big-endian helpers written out by hand, independent of the module's ByteWriter. */
const int32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const int64 = (n: number) => [0, 0, 0, 0, ...int32(n)];
const ascii = (text: string) => [...Buffer.from(text, 'utf8')];

describe('log file names', () => {
  it('parses data, metadata-table, archived-timeline and CDC names as Hudi’s pattern does', () => {
    assert.deepEqual(parseLogFileName('a/.2a5e981c-d242-0_20240101000000000.log.3_0-149-166'), {
      fileId: '2a5e981c-d242-0',
      baseInstant: '20240101000000000',
      extension: 'log',
      version: 3,
      writeToken: '0-149-166',
      suffix: '',
    });
    assert.deepEqual(parseLogFileName('.files-0000-0_00000000000000010.log.1_0-0-0')?.fileId, 'files-0000-0');
    assert.deepEqual(parseLogFileName('.hoodie/archived/.commits_.archive.12_1-0-1'), {
      fileId: 'commits',
      baseInstant: '',
      extension: 'archive',
      version: 12,
      writeToken: '1-0-1',
      suffix: '',
    });
    assert.equal(parseLogFileName('.f1_001.log.2_1-2-3.cdc')?.suffix, '.cdc');
    // Names of older writers had no write token.
    assert.equal(parseLogFileName('.f1_001.log.2')?.writeToken, undefined);
    assert.equal(parseLogFileName('f1_1-0-1_001.parquet'), undefined);
    assert.equal(parseLogFileName('.f1_001.log._1-0-1'), undefined);
  });

  it('builds names that parse back, and refuses parts Hudi could not parse', () => {
    const name = logFileName({ fileId: 'files-0000-0', baseInstant: '20240101000000000010', version: 4, writeToken: '0-12-34' });
    assert.equal(name, '.files-0000-0_20240101000000000010.log.4_0-12-34');
    assert.equal(logFileName({ fileId: 'commits', baseInstant: '', version: 1, writeToken: '1-0-1', extension: 'archive' }), '.commits_.archive.1_1-0-1');
    assert.throws(() => logFileName({ fileId: 'f', baseInstant: '001', version: 1, writeToken: 'abc' }), /write token "abc"/);
    assert.throws(() => logFileName({ fileId: '', baseInstant: '001', version: 1, writeToken: '1-0-1' }), /file id/);
    assert.throws(() => logFileName({ fileId: 'f', baseInstant: '0_1', version: 1, writeToken: '1-0-1' }), /would not parse back/);
  });

  it('orders by base instant, version, write token (as strings, absent first), suffix', () => {
    const names = [
      '.f_002.log.1_0-1-1',
      '.f_001.log.10_0-1-1',
      '.f_001.log.2_0-9-3',
      '.f_001.log.2_0-10-3',
      '.f_001.log.2',
      '.f_001.log.2_0-10-3.cdc',
      '.f_001.log.1_5-5-5',
    ].map((text) => parseLogFileName(text)!);
    const sorted = [...names].sort(compareLogFileNames).map((name) => `${name.baseInstant}.${name.version}_${name.writeToken ?? '-'}${name.suffix}`);
    assert.deepEqual(sorted, ['001.1_5-5-5', '001.2_-', '001.2_0-10-3', '001.2_0-10-3.cdc', '001.2_0-9-3', '001.10_0-1-1', '002.1_0-1-1']);
  });

  it('gives the next version past every write token of the slice, 1 for a new slice', () => {
    const existing = ['.f_001.log.1_0-1-1', '.f_001.log.3_1-0-1', '.f_002.log.7_0-1-1', '.g_001.log.9_0-1-1'].map((text) => parseLogFileName(text)!);
    assert.equal(nextLogVersion(existing, { fileId: 'f', baseInstant: '001' }), 4);
    assert.equal(nextLogVersion(existing, { fileId: 'f', baseInstant: '003' }), 1);
    assert.equal(nextLogVersion(existing, { fileId: 'f', baseInstant: '001', extension: 'archive' }), 1);
  });

  it('lists log files, skipping Hadoop checksum files and non-log files', () => {
    const objects = ['b/.f_001.log.2_0-1-1', 'b/..f_001.log.2_0-1-1.crc', 'b/f_0-1-1_001.parquet', 'b/.f_001.log.1_0-1-1', 'b/.hoodie_partition_metadata'].map(
      (path) => ({ path, size: 1, modifiedMs: 0 }),
    );
    assert.deepEqual(
      logFilesOf(objects).map((file) => file.path),
      ['b/.f_001.log.1_0-1-1', 'b/.f_001.log.2_0-1-1'],
    );
  });
});

describe('log blocks', () => {
  it('lays out a small Avro data block exactly as Hudi’s writer does (hand-built golden bytes)', () => {
    const block = avroDataBlock({ instantTime: '001', schema: TINY_SCHEMA, records: [{ k: 'a' }] });
    // Avro datum of {k:"a"}: string length 1 as zig-zag varint (2), then "a".
    const content = [...int32(3), ...int32(1), ...int32(2), 0x02, 0x61];
    const header = [...int32(2), ...int32(0), ...int32(3), ...ascii('001'), ...int32(2), ...int32(TINY_SCHEMA.length), ...ascii(TINY_SCHEMA)];
    const footer = int32(0);
    const blockSize = 4 + 4 + header.length + 8 + content.length + footer.length + 8;
    const expected = [
      ...ascii('#HUDI#'),
      ...int64(blockSize),
      ...int32(1), // format version
      ...int32(3), // AVRO_DATA_BLOCK
      ...header,
      ...int64(content.length),
      ...content,
      ...footer,
      ...int64(6 + 8 + blockSize - 8), // total length: magic through footer
    ];
    assert.deepEqual([...encodeLogBlock(block)], expected);
    // The content given in parts (an HFile's blocks) is laid out the same, the parts one after the other.
    const whole = block.content as Uint8Array;
    for (const cuts of [[0], [1, 1, 5], [whole.length]]) {
      const parts = [...cuts, whole.length].map((end, i, ends) => whole.subarray(i === 0 ? 0 : (ends[i - 1] as number), end));
      assert.deepEqual([...encodeLogBlock({ ...block, content: parts })], expected, `content cut at ${cuts.join(', ')}`);
    }

    const [decoded] = decodeLogBlocks(Uint8Array.from(expected));
    assert.equal(decoded?.type, 'AVRO_DATA_BLOCK');
    assert.deepEqual(decoded?.header, { INSTANT_TIME: '001', SCHEMA: TINY_SCHEMA });
    assert.deepEqual(decoded?.footer, {});
    assert.equal(decoded?.offset, 0);
    assert.equal(decoded?.length, expected.length);
    assert.deepEqual(readAvroDataBlock(decoded!), [{ k: 'a' }]);
  });

  it('round-trips every block type with every header key, in file order', () => {
    const blocks: LogBlockInput[] = [
      avroDataBlock({
        instantTime: '002',
        schema: JSON.parse(TINY_SCHEMA) as object,
        records: [{ k: 'x' }, { k: 'ü' }],
        header: { COMPACTED_BLOCK_TIMES: '001,002' },
      }),
      deleteBlock({ instantTime: '003', records: [{ recordKey: 'x', partitionPath: 'p', orderingValue: { type: 'long', value: 7n } }] }),
      rollbackCommandBlock({ instantTime: '004', targetInstantTime: '003' }),
      rawDataBlock(
        'HFILE_DATA_BLOCK',
        { INSTANT_TIME: '005', SCHEMA: TINY_SCHEMA, RECORD_POSITIONS: 'AAA=', BLOCK_IDENTIFIER: '1,2' },
        Uint8Array.from([1, 2, 3]),
      ),
      rawDataBlock('PARQUET_DATA_BLOCK', { INSTANT_TIME: '006' }, Uint8Array.from(ascii('PAR1'))),
      { type: 'CDC_DATA_BLOCK', header: { INSTANT_TIME: '007' }, footer: { INSTANT_TIME: 'f' }, content: new Uint8Array(0) },
    ];
    const bytes = encodeLogBlocks(blocks);
    const decoded = decodeLogBlocks(bytes);
    assert.deepEqual(
      decoded.map((block) => block.type),
      ['AVRO_DATA_BLOCK', 'DELETE_BLOCK', 'COMMAND_BLOCK', 'HFILE_DATA_BLOCK', 'PARQUET_DATA_BLOCK', 'CDC_DATA_BLOCK'],
    );
    decoded.forEach((block, i) => {
      assert.deepEqual(block.header, blocks[i]!.header);
      assert.deepEqual(block.footer, blocks[i]!.footer ?? {});
      assert.deepEqual([...block.content], [...blocks[i]!.content]);
    });
    assert.equal(decoded.at(-1)!.offset + decoded.at(-1)!.length, bytes.length);
    assert.deepEqual(readAvroDataBlock(decoded[0]!), [{ k: 'x' }, { k: 'ü' }]);
    assert.deepEqual(readDeleteBlock(decoded[1]!), [{ recordKey: 'x', partitionPath: 'p', orderingValue: { type: 'long', value: 7n } }]);
    assert.deepEqual(readCommandBlock(decoded[2]!), { command: 'ROLLBACK_BLOCK', instantTime: '004', targetInstantTime: '003' });
    assert.equal(decoded[2]!.header.COMMAND_BLOCK_TYPE, '0');
    assert.throws(() => readDeleteBlock(decoded[0]!), UnsupportedLogBlockError);
  });

  it('refuses Hudi 1.x header keys unless asked, since 0.14/0.15 readers fail on them', () => {
    const block: LogBlockInput = { type: 'AVRO_DATA_BLOCK', header: { INSTANT_TIME: '1', IS_PARTIAL: 'true' }, content: new Uint8Array(0) };
    assert.throws(() => encodeLogBlock(block), /IS_PARTIAL is Hudi 1.x's/);
    const [decoded] = decodeLogBlocks(encodeLogBlock(block, { allowHudi1HeaderKeys: true }));
    assert.equal(decoded?.header.IS_PARTIAL, 'true');
    assert.throws(() => encodeLogBlock({ ...block, header: { NOPE: 'x' } as never }), /not a log block header key/);
  });

  it('hands HFile and Parquet contents to a content decoder of their type', () => {
    const [block] = decodeLogBlocks(encodeLogBlock(rawDataBlock('HFILE_DATA_BLOCK', { INSTANT_TIME: '1', SCHEMA: TINY_SCHEMA }, Uint8Array.from([9, 8]))));
    const sizes = {
      blockType: 'HFILE_DATA_BLOCK' as const,
      decode: (content: Uint8Array, header: { SCHEMA?: string }) => `${content.length}:${header.SCHEMA === TINY_SCHEMA}`,
    };
    assert.equal(decodeDataBlock(block!, sizes), '2:true');
    assert.throws(() => decodeDataBlock(block!, { ...sizes, blockType: 'PARQUET_DATA_BLOCK' }), /not a PARQUET_DATA_BLOCK/);
  });
});

describe('torn and damaged log files (HoodieLogFileReader’s corrupt blocks)', () => {
  const one = encodeLogBlock(avroDataBlock({ instantTime: '001', schema: TINY_SCHEMA, records: [{ k: 'a' }] }));
  const two = encodeLogBlock(deleteBlock({ instantTime: '002', records: [] }));
  const join = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((part) => [...part]));

  it('turns a torn last block into a corrupt block holding the bytes after its magic', () => {
    const torn = join(one, two.subarray(0, two.length - 5));
    const blocks = decodeLogBlocks(torn);
    assert.deepEqual(
      blocks.map((block) => block.type),
      ['AVRO_DATA_BLOCK', 'CORRUPT_BLOCK'],
    );
    assert.equal(blocks[1]!.offset, one.length);
    assert.deepEqual([...blocks[1]!.content], [...two.subarray(6, two.length - 5)]);
    // Only a magic and part of a size left: still a corrupt block.
    assert.deepEqual(
      decodeLogBlocks(join(one, two.subarray(0, 10))).map((block) => [block.type, block.content.length]),
      [
        ['AVRO_DATA_BLOCK', 14],
        ['CORRUPT_BLOCK', 4],
      ],
    );
  });

  it('resumes at the next magic after garbage, making the block before the garbage corrupt, as Hudi does', () => {
    const garbage = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const blocks = decodeLogBlocks(join(one, garbage, two));
    assert.deepEqual(
      blocks.map((block) => block.type),
      ['CORRUPT_BLOCK', 'DELETE_BLOCK'],
    );
    assert.deepEqual([...blocks[0]!.content], [...one.subarray(6), ...garbage]);
    assert.equal(blocks[1]!.offset, one.length + garbage.length);
    assert.deepEqual(readDeleteBlock(blocks[1]!), []);
  });

  it('treats a block whose trailing total length disagrees with its size as corrupt', () => {
    const bad = Uint8Array.from(one);
    bad[bad.length - 1] = bad[bad.length - 1]! + 1;
    assert.deepEqual(
      decodeLogBlocks(join(bad, two)).map((block) => block.type),
      ['CORRUPT_BLOCK', 'DELETE_BLOCK'],
    );
    const huge = Uint8Array.from(one);
    huge.set([0x7f, 0, 0, 0, 0, 0, 0, 0], 6);
    assert.deepEqual(
      decodeLogBlocks(join(huge, two)).map((block) => block.type),
      ['CORRUPT_BLOCK', 'DELETE_BLOCK'],
    );
  });

  it('ignores fewer than six trailing bytes and fails on a file that does not start with the magic', () => {
    assert.deepEqual(
      decodeLogBlocks(join(one, Uint8Array.from([0x23, 0x48]))).map((block) => block.type),
      ['AVRO_DATA_BLOCK'],
    );
    assert.deepEqual(decodeLogBlocks(new Uint8Array(0)), []);
    assert.throws(
      () => decodeLogBlocks(join(Uint8Array.from([0, 0, 0, 0, 0, 0, 0]), one), 'x.log.1'),
      (error: unknown) => {
        assert.ok(error instanceof LogFormatError);
        assert.equal(error.location, 'x.log.1');
        return /no "#HUDI#" magic at offset 0/.test(error.message);
      },
    );
  });

  it('fails on a well-framed block with an unknown block type or format version', () => {
    const badType = Uint8Array.from(one);
    badType.set(int32(9), 18);
    assert.throws(() => decodeLogBlocks(badType), /block type 9/);
    const badVersion = Uint8Array.from(one);
    badVersion.set(int32(0), 14);
    assert.throws(() => decodeLogBlocks(badVersion), /format version 0/);
  });
});

describe('block contents', () => {
  it('reads Avro records with a reader schema through schema resolution, longs as numbers or bigints', () => {
    const writer = {
      type: 'record',
      name: 'r',
      fields: [
        { name: 'k', type: 'string' },
        { name: 'n', type: 'long' },
      ],
    };
    const reader = {
      type: 'record',
      name: 'r',
      fields: [
        { name: 'n', type: 'long' },
        { name: 'extra', type: ['null', 'string'], default: null },
      ],
    };
    const content = encodeAvroDataBlockContent(
      [
        { k: 'a', n: 1 },
        { k: 'b', n: 2 ** 40 },
      ],
      writer,
    );
    assert.deepEqual(decodeAvroDataBlockContent(content, writer, { readerSchema: reader }), [
      { n: 1, extra: null },
      { n: 2 ** 40, extra: null },
    ]);
    const big = encodeAvroDataBlockContent([{ k: 'c', n: 2n ** 62n }], writer, { longs: 'bigint' });
    assert.deepEqual(decodeAvroDataBlockContent(big, writer, { longs: 'bigint' }), [{ k: 'c', n: 2n ** 62n }]);
    assert.throws(() => decodeAvroDataBlockContent(big, writer), /does not decode: potential precision loss/);
    assert.throws(() => encodeAvroDataBlockContent([{ k: 1, n: 1 }], writer), /record 1 does not fit its schema: k = 1/);
    assert.deepEqual(splitAvroDataBlockContent(content).datums.length, 2);
  });

  it('refuses Avro data block content whose counts or lengths overrun it', () => {
    const content = encodeAvroDataBlockContent([{ k: 'a' }], TINY_SCHEMA);
    assert.throws(() => splitAvroDataBlockContent(content.subarray(0, content.length - 1)), /record 1 \(length 2\) runs past/);
    const lying = Uint8Array.from(content);
    lying.set(int32(1_000_000), 4);
    assert.throws(() => splitAvroDataBlockContent(lying), /record count 1000000 exceeds/);
    assert.throws(() => splitAvroDataBlockContent(Uint8Array.from([...int32(4), ...int32(0)])), /block version 4/);
  });

  it('round-trips every ordering value type of a delete block, with Avro wrapper branches', () => {
    const records: DeleteRecord[] = [
      { recordKey: 'k0', partitionPath: null, orderingValue: null },
      { recordKey: 'k1', partitionPath: 'p', orderingValue: { type: 'boolean', value: true } },
      { recordKey: 'k2', partitionPath: 'p', orderingValue: { type: 'int', value: 0 } },
      { recordKey: 'k3', partitionPath: 'p', orderingValue: { type: 'long', value: -(2n ** 63n) } },
      { recordKey: 'k4', partitionPath: 'p', orderingValue: { type: 'float', value: 1.5 } },
      { recordKey: 'k5', partitionPath: 'p', orderingValue: { type: 'double', value: -0.25 } },
      { recordKey: 'k6', partitionPath: 'p', orderingValue: { type: 'bytes', value: Uint8Array.from([0, 255]) } },
      { recordKey: 'k7', partitionPath: 'p', orderingValue: { type: 'string', value: 'zß' } },
      { recordKey: 'k8', partitionPath: 'p', orderingValue: { type: 'date', value: 19000 } },
      { recordKey: 'k9', partitionPath: 'p', orderingValue: { type: 'decimal', unscaled: -123456789012345678901234n } },
      { recordKey: 'k10', partitionPath: 'p', orderingValue: { type: 'decimal', unscaled: 128n } },
      { recordKey: 'k11', partitionPath: 'p', orderingValue: { type: 'timeMicros', value: 86_399_999_999n } },
      { recordKey: null, partitionPath: 'p', orderingValue: { type: 'timestampMicros', value: 1_700_000_000_000_000n } },
    ];
    const content = encodeDeleteBlockContent(records);
    assert.deepEqual(decodeDeleteBlockContent(content), records);
    // The version and the serialized length lead the content.
    assert.deepEqual([...content.subarray(0, 8)], [...int32(3), ...int32(content.length - 8)]);
  });

  it('names the Kryo delete block versions it cannot read', () => {
    assert.throws(
      () => decodeDeleteBlockContent(Uint8Array.from([...int32(2), ...int32(1), 0])),
      (error: unknown) => {
        assert.ok(error instanceof UnsupportedLogBlockError);
        return /version 2 holds Kryo-serialized Java objects/.test(error.message);
      },
    );
    assert.throws(() => decodeDeleteBlockContent(Uint8Array.from([...int32(3), ...int32(5), 0])), /cut short/);
  });
});

describe('log files on a Storage', () => {
  it('takes the version after the log files the caller knows, and the next one when another writer took it', async () => {
    const storage = new LocalStorage(tempDir('log-format-'));
    const slice = { partitionPath: 'p', fileId: 'fg-0', baseInstant: '001', writeToken: '0-1-0' };
    const block = avroDataBlock({ instantTime: '002', schema: TINY_SCHEMA, records: [{ k: 'a' }] });
    const first = await writeLogFile(storage, { ...slice, blocks: [block] });
    // Known: version 1. Another writer with the same write token created version 2 since, unseen by the caller.
    await writeLogFile(storage, { ...slice, blocks: [block] });
    const known = [first.name];
    const third = await writeLogFile(storage, { ...slice, writeToken: '0-1-0', blocks: [block], knownLogFiles: known });
    assert.equal(third.path, 'p/.fg-0_001.log.3_0-1-0');
    assert.deepEqual(known, [first.name], 'the caller’s list is left as it was');
    // Without a conflict the known list alone decides: version 9 follows a known version 8, whatever the folder holds.
    const ahead = await writeLogFile(storage, { ...slice, blocks: [block], knownLogFiles: [{ ...first.name, version: 8 }] });
    assert.equal(ahead.name.version, 9);
  });

  it('writes each append as the next version and reads the file group back in Hudi’s order', async () => {
    const storage = new LocalStorage(tempDir('log-format-'));
    const slice = { partitionPath: 'p/q', fileId: 'fg-0', baseInstant: '001', writeToken: '0-1-2' };
    const first = await writeLogFile(storage, { ...slice, blocks: [avroDataBlock({ instantTime: '002', schema: TINY_SCHEMA, records: [{ k: 'a' }] })] });
    const second = await writeLogFile(storage, {
      ...slice,
      writeToken: '1-0-1',
      blocks: [
        deleteBlock({ instantTime: '003', records: [{ recordKey: 'a', partitionPath: 'p/q', orderingValue: null }] }),
        rollbackCommandBlock({ instantTime: '004', targetInstantTime: '003' }),
      ],
    });
    await writeLogFile(storage, { ...slice, fileId: 'fg-1', blocks: [rollbackCommandBlock({ instantTime: '005', targetInstantTime: '002' })] });
    assert.equal(first.path, 'p/q/.fg-0_001.log.1_0-1-2');
    assert.equal(second.path, 'p/q/.fg-0_001.log.2_1-0-1');
    assert.equal(second.blocks.length, 2);
    assert.equal(second.blocks[0]!.offset, 0);
    assert.equal(second.blocks[1]!.offset + second.blocks[1]!.length, second.size);

    const logs = await readFileGroupLogs(storage, { partitionPath: 'p/q', fileId: 'fg-0' });
    assert.deepEqual(
      logs.map((log) => [log.file.name.version, log.blocks.map((block) => block.type)]),
      [
        [1, ['AVRO_DATA_BLOCK']],
        [2, ['DELETE_BLOCK', 'COMMAND_BLOCK']],
      ],
    );
    assert.deepEqual(
      logs[1]!.blocks.map((block) => [block.offset, block.length]),
      second.blocks.map((block) => [block.offset, block.length]),
    );
    assert.deepEqual(
      (await listLogFiles(storage, 'p/q')).map((file: { name: LogFileName }) => file.name.fileId),
      ['fg-0', 'fg-0', 'fg-1'],
    );
    // The archived timeline's names: fileId "commits", empty base instant.
    const archive = await writeLogFile(storage, {
      partitionPath: '.hoodie/archived',
      fileId: 'commits',
      baseInstant: '',
      writeToken: '1-0-1',
      extension: 'archive',
      blocks: [avroDataBlock({ instantTime: '1', schema: TINY_SCHEMA, records: [] })],
    });
    assert.equal(archive.path, '.hoodie/archived/.commits_.archive.1_1-0-1');
    await assert.rejects(writeLogFile(storage, { ...slice, blocks: [] }), /at least one block/);
  });

  it('gives writers racing for one file slice distinct versions instead of overwriting each other', async () => {
    const storage = new LocalStorage(tempDir('log-format-race-'));
    const write = (instantTime: string) =>
      writeLogFile(storage, {
        partitionPath: '',
        fileId: 'fg',
        baseInstant: '001',
        writeToken: '0-0-0',
        blocks: [rollbackCommandBlock({ instantTime, targetInstantTime: '001' })],
      });
    const written = await Promise.all(['002', '003', '004'].map(write));
    assert.deepEqual(written.map((file) => file.name.version).sort(), [1, 2, 3]);
    const logs = await readFileGroupLogs(storage, { partitionPath: '', fileId: 'fg' });
    assert.deepEqual(logs.map((log) => readCommandBlock(log.blocks[0]!).instantTime).sort(), ['002', '003', '004']);
  });
});
