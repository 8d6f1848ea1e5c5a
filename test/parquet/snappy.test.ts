import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { snappyCompress, snappyDecompress } from '../../lib/parquet/snappy.js';
import { hudiToolchain } from '../helpers/hudi.js';

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');

/** Blocks compressed or decompressed by pyarrow's Snappy (the C++ library Parquet readers use), hex in and out. */
function pyarrowSnappy(direction: 'compress' | 'decompress', blocks: readonly { hex: string; size?: number }[]): string[] {
  const script = `
import json, sys
import pyarrow as pa
out = []
for block in json.load(sys.stdin):
    data = bytes.fromhex(block["hex"])
    if "${direction}" == "compress":
        out.append(pa.compress(data, codec="snappy", asbytes=True).hex())
    else:
        out.append(pa.decompress(data, decompressed_size=block["size"], codec="snappy", asbytes=True).hex())
print(json.dumps(out))
`;
  const stdout = execFileSync(hudiToolchain().python, ['-c', script], { input: JSON.stringify(blocks), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as string[];
}

function samples(): Buffer[] {
  const repetitive = Buffer.from('_hoodie_commit_time=20240707001303088,'.repeat(4000));
  const mixed = Buffer.concat([randomBytes(300), Buffer.alloc(5000, 7), randomBytes(70_000), repetitive.subarray(0, 9000)]);
  return [Buffer.alloc(0), Buffer.from('x'), Buffer.from('abcd'), repetitive, randomBytes(70_000), mixed];
}

describe('Snappy', () => {
  test('decodes hand-built blocks of every element kind', () => {
    // Length 13; literal "abcd"; copy with a 1-byte offset (kind 1: length 8, offset 4, overlapping itself); literal "X".
    assert.equal(text(snappyDecompress(Uint8Array.from([0x0d, 0x0c, 0x61, 0x62, 0x63, 0x64, 0x11, 0x04, 0x00, 0x58]))), 'abcdabcdabcdX');
    // Length 12; literal "hello "; copy with a 2-byte offset (kind 2: length 6, offset 6).
    assert.equal(text(snappyDecompress(Uint8Array.from([0x0c, 0x14, ...Buffer.from('hello '), 0x16, 0x06, 0x00]))), 'hello hello ');
    // Length 9; literal "abc"; copy with a 4-byte offset (kind 3: length 6, offset 3).
    assert.equal(text(snappyDecompress(Uint8Array.from([0x09, 0x08, ...Buffer.from('abc'), 0x17, 0x03, 0x00, 0x00, 0x00]))), 'abcabcabc');
    // A literal of 100 bytes: tag 60 << 2, then length - 1 in one byte; the length 100 as a varint.
    const hundred = Buffer.alloc(100, 0x41);
    assert.deepEqual(snappyDecompress(Uint8Array.from([100, 60 << 2, 99, ...hundred])), hundred);
    // A length of 300 takes two varint bytes (0xac 0x02): a 1-byte literal, then copies of it (kind 2: 64 bytes, offset 1).
    const copies = [
      0x00,
      0x5a,
      ...Array(4)
        .fill([(63 << 2) | 2, 0x01, 0x00])
        .flat(),
      (42 << 2) | 2,
      0x01,
      0x00,
    ];
    assert.deepEqual(snappyDecompress(Uint8Array.from([0xac, 0x02, ...copies])), Buffer.alloc(300, 0x5a));
  });

  test('refuses corrupt blocks', () => {
    assert.throws(() => snappyDecompress(Uint8Array.from([0x05, 0x00, 0x61])), /shorter than its declared length/);
    assert.throws(() => snappyDecompress(Uint8Array.from([0x08, 0x00, 0x61, 0x11, 0x02])), /corrupt snappy copy/, 'an offset before the start');
    assert.throws(() => snappyDecompress(Uint8Array.from([0x02, 0x0c, 0x61, 0x62, 0x63, 0x64])), /corrupt snappy literal/, 'more bytes than declared');
    assert.throws(() => snappyDecompress(Uint8Array.from([0x80])), /truncated snappy length/);
  });

  test('compress then decompress gives the input back; repetitive data shrinks', () => {
    for (const sample of samples()) {
      const compressed = snappyCompress(sample);
      assert.deepEqual(snappyDecompress(compressed), sample, `${sample.length} bytes`);
    }
    const repetitive = samples()[3]!;
    assert.ok(snappyCompress(repetitive).length < repetitive.length / 10);
  });

  test('blocks it writes are read by the Snappy library, and blocks that library writes are read here', () => {
    const inputs = samples();
    const ours = inputs.map((sample) => snappyCompress(sample));
    const decodedByLibrary = pyarrowSnappy(
      'decompress',
      ours.map((block, index) => ({ hex: block.toString('hex'), size: inputs[index]!.length })),
    );
    assert.deepEqual(
      decodedByLibrary,
      inputs.map((sample) => sample.toString('hex')),
    );
    const theirs = pyarrowSnappy(
      'compress',
      inputs.map((sample) => ({ hex: sample.toString('hex') })),
    );
    theirs.forEach((hex, index) => {
      assert.deepEqual(snappyDecompress(Buffer.from(hex, 'hex')), inputs[index]);
    });
  });
});
