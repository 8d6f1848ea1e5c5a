/**
 * Reading a PNG screenshot (Chromium's: 8-bit RGB or RGBA, not interlaced) into pixels, to tell whether a page drew
 * anything: zlib-inflate the IDAT chunks and undo the per-row filters (PNG specification, section 9).
 */
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';

export interface Pixels {
  readonly width: number;
  readonly height: number;
  /** RGB per pixel, row by row. */
  readonly rgb: Uint8Array;
}

export function decodePng(png: Buffer): Pixels {
  assert.equal(png.subarray(0, 8).toString('latin1'), '\x89PNG\r\n\x1a\n', 'a PNG file');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.subarray(offset + 4, offset + 8).toString('latin1');
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [bitDepth, colorType, , , interlace] = [body[8], body[9], body[10], body[11], body[12]];
      assert.equal(bitDepth, 8, 'an 8-bit PNG');
      assert.equal(interlace, 0, 'not interlaced');
      channels = colorType === 6 ? 4 : colorType === 2 ? 3 : 0;
      assert.ok(channels > 0, `colour type ${colorType} is RGB or RGBA`);
    } else if (type === 'IDAT') {
      data.push(body);
    }
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 3);
  let previous = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const current = new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? current[x - channels]! : 0;
      const b = previous[x]!;
      const c = x >= channels ? previous[x - channels]! : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      current[x] = (line[x]! + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) out.set(current.subarray(x * channels, x * channels + 3), (y * width + x) * 3);
    previous = current;
  }
  return { width, height, rgb: out };
}

/** How many pixels are within `tolerance` of the colour `#rrggbb`. */
export function countColour(pixels: Pixels, hex: string, tolerance = 24): number {
  const [r, g, b] = [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16));
  let count = 0;
  for (let i = 0; i < pixels.rgb.length; i += 3) {
    if (Math.abs(pixels.rgb[i]! - r!) <= tolerance && Math.abs(pixels.rgb[i + 1]! - g!) <= tolerance && Math.abs(pixels.rgb[i + 2]! - b!) <= tolerance)
      count += 1;
  }
  return count;
}
