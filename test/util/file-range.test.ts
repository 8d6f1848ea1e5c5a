import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { copyFileRange } from '../../lib/util/file-range.js';

describe('copyFileRange', () => {
  const dir = mkdtempSync(join(tmpdir(), 'file-range-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('copies a range of any length and offset to a position of another file, across pieces and yields', async () => {
    // 33 MiB and a bit: more than one 256 KiB piece and more than one 32 MiB stretch between turns of the event loop.
    const source = randomBytes(33 * 1024 * 1024 + 12_345);
    const from = join(dir, 'from.bin');
    const to = join(dir, 'to.bin');
    writeFileSync(from, source);
    writeFileSync(to, Buffer.alloc(10, 7));
    const input = await open(from, 'r');
    const output = await open(to, 'r+');
    try {
      const start = 1_000_003;
      const length = source.length - start - 777;
      // Two copies in flight share the one buffer: each writes its own bytes.
      await Promise.all([copyFileRange(input, output, start, length, 5), copyFileRange(input, output, 0, 3, length + 5)]);
      await copyFileRange(input, output, 0, 0, 0);
    } finally {
      await input.close();
      await output.close();
    }
    const written = readFileSync(to);
    const length = source.length - 1_000_003 - 777;
    assert.equal(written.length, 5 + length + 3);
    assert.deepEqual(written.subarray(0, 5), Buffer.alloc(5, 7));
    assert.ok(written.subarray(5, 5 + length).equals(source.subarray(1_000_003, 1_000_003 + length)));
    assert.ok(written.subarray(5 + length).equals(source.subarray(0, 3)));
  });

  test('a range past the end of the source is refused', async () => {
    const from = join(dir, 'short.bin');
    writeFileSync(from, Buffer.alloc(100));
    const input = await open(from, 'r');
    const output = await open(join(dir, 'short-out.bin'), 'w');
    try {
      await assert.rejects(copyFileRange(input, output, 50, 100, 0), /unexpected end of file at byte 100/);
    } finally {
      await input.close();
      await output.close();
    }
  });
});
