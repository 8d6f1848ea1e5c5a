/**
 * Decimal values in the Parquet encodings type repair converts between: PLAIN pages (INT32/INT64 little-endian,
 * FIXED_LEN_BYTE_ARRAY big-endian two's complement, BYTE_ARRAY length-prefixed minimal big-endian) and column
 * statistics (one value, without the BYTE_ARRAY length prefix). Values are unscaled integers.
 */

/** A decimal column's physical storage. */
export type DecimalEncoding = { physical: 'INT32' | 'INT64' | 'BYTE_ARRAY' } | { physical: 'FIXED_LEN_BYTE_ARRAY'; typeLength: number };

/** Statistics hold one value without the PLAIN length prefix. */
export function decodeStatisticValue(bytes: Buffer, encoding: DecimalEncoding): bigint[] {
  if (encoding.physical === 'BYTE_ARRAY' || encoding.physical === 'FIXED_LEN_BYTE_ARRAY') return [signedBigEndian(bytes)];
  return decodePlain(bytes, encoding);
}

/** The statistics form of one value in the given encoding. */
export function encodeStatisticValue(value: bigint, encoding: DecimalEncoding): Buffer {
  if (encoding.physical === 'BYTE_ARRAY') return minimalBigEndian(value);
  return encodePlain([value], encoding);
}

/** A PLAIN-encoded run of decimal values (a page's values or a dictionary). */
export function decodePlain(bytes: Buffer, encoding: DecimalEncoding): bigint[] {
  const values: bigint[] = [];
  switch (encoding.physical) {
    case 'INT32':
      for (let offset = 0; offset + 4 <= bytes.length; offset += 4) values.push(BigInt(bytes.readInt32LE(offset)));
      break;
    case 'INT64':
      for (let offset = 0; offset + 8 <= bytes.length; offset += 8) values.push(bytes.readBigInt64LE(offset));
      break;
    case 'FIXED_LEN_BYTE_ARRAY':
      for (let offset = 0; offset + encoding.typeLength <= bytes.length; offset += encoding.typeLength) {
        values.push(signedBigEndian(bytes.subarray(offset, offset + encoding.typeLength)));
      }
      break;
    case 'BYTE_ARRAY':
      for (let offset = 0; offset + 4 <= bytes.length; ) {
        const length = bytes.readUInt32LE(offset);
        values.push(signedBigEndian(bytes.subarray(offset + 4, offset + 4 + length)));
        offset += 4 + length;
      }
      break;
  }
  return values;
}

/** Values as a PLAIN run in the given encoding; throws when one does not fit a FIXED_LEN_BYTE_ARRAY. */
export function encodePlain(values: readonly bigint[], encoding: DecimalEncoding): Buffer {
  switch (encoding.physical) {
    case 'INT32': {
      const out = Buffer.alloc(values.length * 4);
      values.forEach((value, index) => {
        out.writeInt32LE(Number(value), index * 4);
      });
      return out;
    }
    case 'INT64': {
      const out = Buffer.alloc(values.length * 8);
      values.forEach((value, index) => {
        out.writeBigInt64LE(value, index * 8);
      });
      return out;
    }
    case 'FIXED_LEN_BYTE_ARRAY':
      return Buffer.concat(values.map((value) => fixedBigEndian(value, encoding.typeLength)));
    case 'BYTE_ARRAY':
      return Buffer.concat(
        values.flatMap((value) => {
          const bytes = minimalBigEndian(value);
          const length = Buffer.alloc(4);
          length.writeUInt32LE(bytes.length, 0);
          return [length, bytes];
        }),
      );
  }
}

/** A big-endian two's-complement integer (FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY decimals; empty is 0). */
export function signedBigEndian(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  const [first = 0] = bytes;
  return first & 0x80 ? value - (1n << BigInt(bytes.length * 8)) : value;
}

function fixedBigEndian(value: bigint, length: number): Buffer {
  const limit = 1n << BigInt(length * 8 - 1);
  if (value >= limit || value < -limit) throw new Error(`decimal ${value} does not fit in ${length} bytes`);
  let unsigned = value < 0n ? value + (limit << 1n) : value;
  const out = Buffer.alloc(length);
  for (let index = length - 1; index >= 0; index--) {
    out[index] = Number(unsigned & 0xffn);
    unsigned >>= 8n;
  }
  return out;
}

function minimalBigEndian(value: bigint): Buffer {
  let length = 1;
  while (value >= 1n << BigInt(length * 8 - 1) || value < -(1n << BigInt(length * 8 - 1))) length++;
  return fixedBigEndian(value, length);
}
