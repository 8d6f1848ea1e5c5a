/**
 * Snappy raw blocks, Parquet's SNAPPY codec (no framing format): a varint of the uncompressed length, then literal
 * and back-reference elements. Used to re-encode the pages that type repair rewrites.
 * Spec: google/snappy, format_description.txt.
 */

import { HudiError } from '../errors.js';

/** The byte at `index` of compressed data, which must not end before it. */
function byteAt(input: Uint8Array, index: number): number {
  const byte = input[index];
  if (byte === undefined) throw new HudiError(`snappy data ends early: no byte at offset ${index} of ${input.length}`);
  return byte;
}

export function snappyDecompress(input: Uint8Array): Buffer {
  let position = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = input[position++];
    if (byte === undefined) throw new Error('truncated snappy length');
    length += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) break;
  }
  const out = Buffer.alloc(length);
  let written = 0;
  while (position < input.length) {
    const tag = byteAt(input, position++);
    const kind = tag & 3;
    if (kind === 0) {
      let literalLength = tag >> 2;
      if (literalLength >= 60) {
        const extraBytes = literalLength - 59;
        literalLength = 0;
        for (let index = 0; index < extraBytes; index++) literalLength += byteAt(input, position++) * 2 ** (8 * index);
      }
      literalLength += 1;
      if (position + literalLength > input.length || written + literalLength > length) throw new Error('corrupt snappy literal');
      out.set(input.subarray(position, position + literalLength), written);
      position += literalLength;
      written += literalLength;
      continue;
    }
    let copyLength: number;
    let offset: number;
    if (kind === 1) {
      copyLength = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | byteAt(input, position++);
    } else if (kind === 2) {
      copyLength = (tag >> 2) + 1;
      offset = byteAt(input, position) | (byteAt(input, position + 1) << 8);
      position += 2;
    } else {
      copyLength = (tag >> 2) + 1;
      offset = (byteAt(input, position) | (byteAt(input, position + 1) << 8) | (byteAt(input, position + 2) << 16)) + byteAt(input, position + 3) * 2 ** 24;
      position += 4;
    }
    if (offset === 0 || offset > written || written + copyLength > length) throw new Error('corrupt snappy copy');
    // Byte by byte, not copyWithin: a copy may overlap its own output (offset < copyLength repeats a run).
    for (let index = 0; index < copyLength; index++, written++) out[written] = out[written - offset] ?? 0; // 0 < offset ≤ written
  }
  if (written !== length) throw new Error('snappy data shorter than its declared length');
  return out;
}

/** A small greedy LZ77 encoder producing standard snappy blocks (4-byte hash matches, ≤64 KiB back references). */
export function snappyCompress(input: Uint8Array): Buffer {
  const out: number[] = [];
  for (let rest = input.length; ; rest = Math.floor(rest / 128)) {
    if (rest < 128) {
      out.push(rest);
      break;
    }
    out.push((rest & 0x7f) | 0x80);
  }
  const emitLiteral = (start: number, end: number): void => {
    let remaining = end - start;
    let from = start;
    while (remaining > 0) {
      const length = Math.min(remaining, 65536);
      const n = length - 1;
      if (n < 60) out.push(n << 2);
      else if (n < 256) out.push(60 << 2, n);
      else out.push(61 << 2, n & 0xff, n >> 8);
      for (const byte of input.subarray(from, from + length)) out.push(byte);
      from += length;
      remaining -= length;
    }
  };
  const emitCopy = (offset: number, length: number): void => {
    let remaining = length;
    while (remaining > 0) {
      // Keep every piece ≥ 4 bytes: split 65..67 as 60 + rest.
      const piece = remaining > 64 ? (remaining < 68 ? 60 : 64) : remaining;
      out.push(((piece - 1) << 2) | 2, offset & 0xff, offset >> 8);
      remaining -= piece;
    }
  };
  const table = new Int32Array(1 << 14).fill(-1);
  // Called with index + 4 ≤ input.length only; a byte past the end would read as 0, as under the bitwise operators.
  const read32 = (index: number): number =>
    ((input[index] ?? 0) | ((input[index + 1] ?? 0) << 8) | ((input[index + 2] ?? 0) << 16) | ((input[index + 3] ?? 0) << 24)) >>> 0;
  let literalStart = 0;
  let position = 0;
  while (position + 4 <= input.length) {
    const word = read32(position);
    const slot = Math.imul(word, 0x1e35a7bd) >>> 18;
    const candidate = table[slot] ?? -1; // slot < 2^14, the table's size
    table[slot] = position;
    if (candidate >= 0 && position - candidate <= 65535 && read32(candidate) === word) {
      emitLiteral(literalStart, position);
      let length = 4;
      while (position + length < input.length && input[candidate + length] === input[position + length]) length++;
      emitCopy(position - candidate, length);
      position += length;
      literalStart = position;
    } else {
      position++;
    }
  }
  emitLiteral(literalStart, input.length);
  return Buffer.from(out);
}
