/**
 * CRC-32C (Castagnoli), the checksum HBase writes after every HFile block (Hadoop `DataChecksum.Type.CRC32C`):
 * reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF.
 */
const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32C of `bytes[start, end)`, as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffffffff;
  // Indexes stay in range (i < end, a byte masked to 0..255), so `?? 0` never applies; it only satisfies the types.
  for (let i = start; i < end; i++) crc = (TABLE[(crc ^ (bytes[i] ?? 0)) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
