/**
 * Hilbert curve index exactly as davidmoten/hilbert-curve 0.2.2 computes it
 * (`HilbertCurve.bits(b).dimensions(n).index(point)`: John Skilling's "Programming the Hilbert curve",
 * axes → transposed index → interleaved bits), plus Hudi's `HilbertCurveUtils.indexBytes` on top.
 *
 * Coordinates are Java longs. They are kept as two 32-bit halves so that computing a key needs no
 * BigInt (BigInt arithmetic is far slower, and a clustering encodes millions of rows).
 * Bits at or above `bits` never influence the library's result (every mask it applies is below
 * 2^bits and `toIndex` reads only the low `bits` bits), so they are dropped on input: a negative
 * long is therefore indexed like its low 63 bits, e.g. -1 ≡ Long.MAX_VALUE for bits = 63.
 */

/** `HilbertCurve.bits(...)` accepts 1..63. */
export const MAX_HILBERT_BITS = 63;

// Typed-array reads here index inside their arrays (a coordinate per dimension, 33 masks, 256 nibble pairs). They
// read `?? 0` for the types only: the bitwise operators already read undefined as 0.

const TWO_POW_32 = 4294967296;

/** LOW_BITS[w]: the low `w` bits set (w = 0..32), as int32. A table: computing it was the hot spot. */
const LOW_BITS: Int32Array = Int32Array.from({ length: 33 }, (_, width) => (width >= 32 ? -1 : (2 ** width - 1) | 0));

/** Mask of the low `width` bits of a 32-bit half; widths past 32 mean the whole half. */
function lowBitsMask(width: number): number {
  return width >= 32 ? -1 : (LOW_BITS[width] ?? 0);
}

/**
 * Reusable encoder for one (bits, dimensions) curve. Not re-entrant: set every coordinate, then call
 * one of the `write*` / `index*` methods, which consume the coordinates.
 */
export class HilbertIndexer {
  readonly bits: number;
  readonly dimensions: number;
  /** bits × dimensions: the width of the index. */
  readonly indexBits: number;
  /** Width of `BigInteger.toByteArray()` for the largest index (sign byte included). */
  private readonly maxByteArrayLength: number;
  private readonly high: Int32Array;
  private readonly low: Int32Array;
  /** The index, big-endian, right-aligned in `maxByteArrayLength` bytes. */
  private readonly indexBuffer: Uint8Array;
  private readonly inputHighMask: number;
  private readonly inputLowMask: number;

  constructor(bits: number, dimensions: number) {
    if (!Number.isInteger(bits) || bits < 1 || bits > MAX_HILBERT_BITS) {
      throw new RangeError(`Hilbert curve bits must be 1..${MAX_HILBERT_BITS}, got ${bits}`);
    }
    if (!Number.isInteger(dimensions) || dimensions < 2) {
      // Same precondition as HilbertCurve.Builder.dimensions.
      throw new RangeError(`Hilbert curve dimensions must be at least 2, got ${dimensions}`);
    }
    this.bits = bits;
    this.dimensions = dimensions;
    this.indexBits = bits * dimensions;
    this.maxByteArrayLength = (this.indexBits >> 3) + 1;
    this.high = new Int32Array(dimensions);
    this.low = new Int32Array(dimensions);
    this.indexBuffer = new Uint8Array(this.maxByteArrayLength);
    this.inputHighMask = bits > 32 ? lowBitsMask(bits - 32) : 0;
    this.inputLowMask = lowBitsMask(bits);
  }

  /** One coordinate as the high and low 32-bit halves of a Java long (signed or unsigned halves both fine). */
  setCoordinateHalves(dimension: number, high32: number, low32: number): void {
    this.high[dimension] = high32 & this.inputHighMask;
    this.low[dimension] = low32 & this.inputLowMask;
  }

  setCoordinate(dimension: number, value: bigint): void {
    const unsigned = BigInt.asUintN(64, value);
    this.setCoordinateHalves(dimension, Number(unsigned >> 32n) | 0, Number(unsigned & 0xffffffffn) | 0);
  }

  /** A coordinate given as a safe integer (|value| ≤ 2^53 - 1), sign-extended to a long. */
  setCoordinateNumber(dimension: number, value: number): void {
    this.setCoordinateHalves(dimension, Math.floor(value / TWO_POW_32) | 0, value | 0);
  }

  /** The index as davidmoten's `index(point)` returns it. */
  indexBigInt(): bigint {
    this.computeIndex();
    let hex = '';
    for (const byte of this.indexBuffer) hex += byte.toString(16).padStart(2, '0');
    return BigInt(`0x${hex}`);
  }

  /**
   * Hudi's `HilbertCurveUtils.indexBytes(curve, point, paddingBytes)`: `BigInteger.toByteArray()`
   * (minimal two's complement, so a leading 0x00 when the top bit is set) left-padded with zeros to
   * `paddingBytes`, or — when longer — cut to its FIRST `paddingBytes` bytes (low bytes dropped; with
   * Hudi's 63/63 and 32/32 bits/padding that takes 8+ dimensions).
   */
  writeIndexBytes(out: Uint8Array, offset: number, paddingBytes: number): void {
    this.computeIndex();
    const buffer = this.indexBuffer;
    const bufferLength = buffer.length;
    let firstNonZero = 0;
    while (firstNonZero < bufferLength && buffer[firstNonZero] === 0) firstNonZero++;
    let byteArrayLength = 1;
    if (firstNonZero < bufferLength) {
      const bitLength = (bufferLength - firstNonZero - 1) * 8 + (32 - Math.clz32(buffer[firstNonZero] ?? 0));
      byteArrayLength = (bitLength >> 3) + 1;
    }
    const end = byteArrayLength > paddingBytes ? bufferLength - byteArrayLength + paddingBytes : bufferLength;
    const start = Math.max(0, end - paddingBytes);
    const zeroFill = paddingBytes - (end - start);
    for (let i = 0; i < zeroFill; i++) out[offset + i] = 0;
    for (let i = start, target = offset + zeroFill; i < end; i++, target++) out[target] = buffer[i] ?? 0;
  }

  /** Skilling's AxestoTranspose followed by davidmoten's `toIndex` bit interleaving into `indexBuffer`. */
  private computeIndex(): void {
    if (this.dimensions === 2) {
      this.computeIndex2d();
      return;
    }
    const n = this.dimensions;
    const high = this.high;
    const low = this.low;
    // Inverse undo, from the top bit down to bit 1, branch-free as in computeIndex2d. Step i = 0 can
    // only invert; step i > 0 inverts x[0] below the bit when x[i] has it, else swaps those bits.
    for (let bit = this.bits - 1; bit >= 32; bit--) {
      const shift = bit - 32;
      const belowHigh = LOW_BITS[shift] ?? 0;
      let high0 = high[0] ?? 0;
      let low0 = low[0] ?? 0;
      const when0 = -((high0 >>> shift) & 1);
      high0 ^= belowHigh & when0;
      low0 ^= when0;
      for (let i = 1; i < n; i++) {
        const highI = high[i] ?? 0;
        const lowI = low[i] ?? 0;
        const when = -((highI >>> shift) & 1);
        const swapHigh = (high0 ^ highI) & belowHigh & ~when;
        const swapLow = (low0 ^ lowI) & ~when;
        high0 ^= swapHigh ^ (belowHigh & when);
        low0 ^= swapLow ^ when;
        high[i] = highI ^ swapHigh;
        low[i] = lowI ^ swapLow;
      }
      high[0] = high0;
      low[0] = low0;
    }
    for (let bit = Math.min(this.bits - 1, 31); bit >= 1; bit--) {
      const belowLow = LOW_BITS[bit] ?? 0;
      let low0 = low[0] ?? 0;
      low0 ^= belowLow & -((low0 >>> bit) & 1);
      for (let i = 1; i < n; i++) {
        const lowI = low[i] ?? 0;
        const when = -((lowI >>> bit) & 1);
        const swapLow = (low0 ^ lowI) & belowLow & ~when;
        low0 ^= swapLow ^ (belowLow & when);
        low[i] = lowI ^ swapLow;
      }
      low[0] = low0;
    }
    // Gray encode.
    for (let i = 1; i < n; i++) {
      high[i] = (high[i] ?? 0) ^ (high[i - 1] ?? 0);
      low[i] = (low[i] ?? 0) ^ (low[i - 1] ?? 0);
    }
    grayFlipMask(high[n - 1] ?? 0, low[n - 1] ?? 0);
    for (let i = 0; i < n; i++) {
      high[i] = (high[i] ?? 0) ^ flipHigh;
      low[i] = (low[i] ?? 0) ^ flipLow;
    }
    // toIndex: for each bit from the top, one bit per dimension, dimension 0 first. The bits come
    // out most significant first, so they are packed into bytes in order; the index is right-aligned,
    // so the first byte takes only the top (indexBits mod 8) bits.
    const buffer = this.indexBuffer;
    const topBit = this.indexBits - 1;
    let position = buffer.length - 1 - (topBit >> 3);
    buffer.fill(0, 0, position);
    let pending = 0;
    let room = (topBit & 7) + 1;
    for (let bit = this.bits - 1; bit >= 32; bit--) {
      const shift = bit - 32;
      for (let j = 0; j < n; j++) {
        pending = (pending << 1) | (((high[j] ?? 0) >>> shift) & 1);
        if (--room === 0) {
          buffer[position++] = pending;
          pending = 0;
          room = 8;
        }
      }
    }
    for (let bit = Math.min(this.bits - 1, 31); bit >= 0; bit--) {
      for (let j = 0; j < n; j++) {
        pending = (pending << 1) | (((low[j] ?? 0) >>> bit) & 1);
        if (--room === 0) {
          buffer[position++] = pending;
          pending = 0;
          room = 8;
        }
      }
    }
  }

  /** The same algorithm unrolled for two dimensions (the common case) on local variables. */
  private computeIndex2d(): void {
    let high0 = this.high[0] ?? 0;
    let low0 = this.low[0] ?? 0;
    let high1 = this.high[1] ?? 0;
    let low1 = this.low[1] ?? 0;
    // Branch-free: on random data the invert-or-swap choice mispredicts about half the time.
    // `when0` / `when1` are all ones when the coordinate has the current bit set.
    for (let bit = this.bits - 1; bit >= 32; bit--) {
      const shift = bit - 32;
      const belowHigh = LOW_BITS[shift] ?? 0;
      const when0 = -((high0 >>> shift) & 1);
      high0 ^= belowHigh & when0;
      low0 ^= when0;
      const when1 = -((high1 >>> shift) & 1);
      const swapHigh = (high0 ^ high1) & belowHigh & ~when1;
      const swapLow = (low0 ^ low1) & ~when1;
      high0 ^= swapHigh ^ (belowHigh & when1);
      low0 ^= swapLow ^ when1;
      high1 ^= swapHigh;
      low1 ^= swapLow;
    }
    for (let bit = Math.min(this.bits - 1, 31); bit >= 1; bit--) {
      const belowLow = LOW_BITS[bit] ?? 0;
      const when0 = -((low0 >>> bit) & 1);
      low0 ^= belowLow & when0;
      const when1 = -((low1 >>> bit) & 1);
      const swapLow = (low0 ^ low1) & belowLow & ~when1;
      low0 ^= swapLow ^ (belowLow & when1);
      low1 ^= swapLow;
    }
    high1 ^= high0;
    low1 ^= low0;
    grayFlipMask(high1, low1);
    high0 ^= flipHigh;
    low0 ^= flipLow;
    high1 ^= flipHigh;
    low1 ^= flipLow;

    // Interleave: value bit 2b+1 is bit b of dimension 0, value bit 2b is bit b of dimension 1, so
    // each index byte is one nibble of each coordinate.
    const buffer = this.indexBuffer;
    buffer.fill(0);
    const last = buffer.length - 1;
    const nibbleCount = Math.min(16, buffer.length);
    for (let nibble = 0; nibble < nibbleCount; nibble++) {
      const shift = (nibble & 7) * 4;
      const word0 = nibble < 8 ? low0 : high0;
      const word1 = nibble < 8 ? low1 : high1;
      buffer[last - nibble] = INTERLEAVE_NIBBLES[(((word0 >>> shift) & 15) << 4) | ((word1 >>> shift) & 15)] ?? 0;
    }
  }
}

let flipHigh = 0;
let flipLow = 0;

/**
 * The Gray-encode correction `t` into (flipHigh, flipLow): XOR of (2^b - 1) over every bit b ≥ 1 set
 * in the last transposed word. Bit k of `t` is the parity of the word's bits above k, i.e. a suffix
 * XOR of word >> 1.
 */
function grayFlipMask(high32: number, low32: number): void {
  // 64-bit logical shift right by one, then fold higher bits down by 1, 2, 4, 8, 16 and 32.
  let high = high32 >>> 1;
  let low = (low32 >>> 1) | (high32 << 31);
  for (let shift = 1; shift < 32; shift <<= 1) {
    low ^= (low >>> shift) | (high << (32 - shift));
    high ^= high >>> shift;
  }
  low ^= high;
  flipHigh = high | 0;
  flipLow = low | 0;
}

/** (a << 4 | b) → the byte a3 b3 a2 b2 a1 b1 a0 b0. */
const INTERLEAVE_NIBBLES: Uint8Array = (() => {
  const table = new Uint8Array(256);
  for (let a = 0; a < 16; a++) {
    for (let b = 0; b < 16; b++) {
      let byte = 0;
      for (let k = 0; k < 4; k++) byte |= (((a >> k) & 1) << (2 * k + 1)) | (((b >> k) & 1) << (2 * k));
      table[(a << 4) | b] = byte;
    }
  }
  return table;
})();

/** davidmoten `HilbertCurve.bits(bits).dimensions(point.length).index(point)`. */
export function hilbertIndex(point: readonly bigint[], bits = MAX_HILBERT_BITS): bigint {
  const indexer = new HilbertIndexer(bits, point.length);
  point.forEach((value, dimension) => {
    indexer.setCoordinate(dimension, value);
  });
  return indexer.indexBigInt();
}

/** Hudi `HilbertCurveUtils.indexBytes(HilbertCurve.bits(bits).dimensions(n), point, paddingBytes)`. */
export function hilbertIndexBytes(point: readonly bigint[], bits = MAX_HILBERT_BITS, paddingBytes = bits): Uint8Array {
  const indexer = new HilbertIndexer(bits, point.length);
  point.forEach((value, dimension) => {
    indexer.setCoordinate(dimension, value);
  });
  const out = new Uint8Array(paddingBytes);
  indexer.writeIndexBytes(out, 0, paddingBytes);
  return out;
}
