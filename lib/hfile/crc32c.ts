/**
 * CRC-32C (Castagnoli), the checksum HBase writes after every HFile block (Hadoop `DataChecksum.Type.CRC32C`):
 * reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF. Eight bytes a step (slice-by-8): a
 * large commit checksums every compressed bloom filter it writes.
 */
const TABLES = (() => {
  const tables = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    tables[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let t = 1; t < 8; t++) {
      const previous = tables[(t - 1) * 256 + n] as number;
      tables[t * 256 + n] = (previous >>> 8) ^ (tables[previous & 0xff] as number);
    }
  }
  return tables;
})();

/** CRC-32C of `bytes[start, end)`, as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const t = TABLES;
  let crc = ~0;
  let i = start;
  // Every index is in range (i < end; table indexes masked to 0..2047), hence the plain `as number`: a check such
  // as `?? 0` would cost a little at every byte.
  for (; i + 8 <= end; i += 8) {
    const low = crc ^ ((bytes[i] as number) | ((bytes[i + 1] as number) << 8) | ((bytes[i + 2] as number) << 16) | ((bytes[i + 3] as number) << 24));
    crc =
      (t[1792 + (low & 0xff)] as number) ^
      (t[1536 + ((low >>> 8) & 0xff)] as number) ^
      (t[1280 + ((low >>> 16) & 0xff)] as number) ^
      (t[1024 + (low >>> 24)] as number) ^
      (t[768 + (bytes[i + 4] as number)] as number) ^
      (t[512 + (bytes[i + 5] as number)] as number) ^
      (t[256 + (bytes[i + 6] as number)] as number) ^
      (t[bytes[i + 7] as number] as number);
  }
  for (; i < end; i++) crc = (t[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return ~crc >>> 0;
}
