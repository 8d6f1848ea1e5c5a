/**
 * The hashed ids Hudi builds metadata-table keys from (org.apache.hudi.common.util.hash): ColumnIndexID and
 * PartitionIndexID are 64-bit XXHash (lz4-java's XXHash64, seed 0xdabadaba widened from a Java int, 8 bytes
 * big-endian), FileIndexID is the 128-bit MD5 of the name; each is then Base64 with padding (Base64CodecUtil). The
 * UTF-8 of the name is hashed.
 *
 * Keys (HoodieMetadataPayload):
 * - bloom_filters: PartitionIndexID(partition) + FileIndexID(file name)
 * - column_stats: ColumnIndexID(column) + PartitionIndexID(partition) + FileIndexID(file name)
 * where `partition` is the partition identifier ("." for a non-partitioned table).
 */
import { createHash } from 'node:crypto';

const MASK = 0xffff_ffff_ffff_ffffn;
const PRIME_1 = 0x9e37_79b1_85eb_ca87n;
const PRIME_2 = 0xc2b2_ae3d_27d4_eb4fn;
const PRIME_3 = 0x1656_67b1_9e37_79f9n;
const PRIME_4 = 0x85eb_ca77_c2b2_ae63n;
const PRIME_5 = 0x27d4_eb2f_1656_67c5n;
/** HashID.HASH_SEED, an int (0xdabadaba) passed where lz4-java takes a long: sign-extended. */
const HUDI_SEED = BigInt.asUintN(64, BigInt(0xdabadaba | 0));

const rotl = (value: bigint, bits: bigint): bigint => ((value << bits) | (value >> (64n - bits))) & MASK;

function round(acc: bigint, input: bigint): bigint {
  return (rotl((acc + input * PRIME_2) & MASK, 31n) * PRIME_1) & MASK;
}

function mergeRound(acc: bigint, value: bigint): bigint {
  return ((acc ^ round(0n, value)) * PRIME_1 + PRIME_4) & MASK;
}

/** XXH64 of `bytes` with a 64-bit seed, as an unsigned bigint. */
export function xxHash64(bytes: Uint8Array, seed: bigint = 0n): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = bytes.length;
  let offset = 0;
  let hash: bigint;
  if (length >= 32) {
    let v1 = (seed + PRIME_1 + PRIME_2) & MASK;
    let v2 = (seed + PRIME_2) & MASK;
    let v3 = seed & MASK;
    let v4 = (seed - PRIME_1) & MASK;
    while (offset <= length - 32) {
      v1 = round(v1, view.getBigUint64(offset, true));
      v2 = round(v2, view.getBigUint64(offset + 8, true));
      v3 = round(v3, view.getBigUint64(offset + 16, true));
      v4 = round(v4, view.getBigUint64(offset + 24, true));
      offset += 32;
    }
    hash = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & MASK;
    hash = mergeRound(hash, v1);
    hash = mergeRound(hash, v2);
    hash = mergeRound(hash, v3);
    hash = mergeRound(hash, v4);
  } else {
    hash = (seed + PRIME_5) & MASK;
  }
  hash = (hash + BigInt(length)) & MASK;
  while (offset <= length - 8) {
    hash ^= round(0n, view.getBigUint64(offset, true));
    hash = (rotl(hash, 27n) * PRIME_1 + PRIME_4) & MASK;
    offset += 8;
  }
  if (offset <= length - 4) {
    hash ^= (BigInt(view.getUint32(offset, true)) * PRIME_1) & MASK;
    hash = (rotl(hash, 23n) * PRIME_2 + PRIME_3) & MASK;
    offset += 4;
  }
  while (offset < length) {
    hash ^= (BigInt(bytes[offset]!) * PRIME_5) & MASK;
    hash = (rotl(hash, 11n) * PRIME_1) & MASK;
    offset++;
  }
  hash ^= hash >> 33n;
  hash = (hash * PRIME_2) & MASK;
  hash ^= hash >> 29n;
  hash = (hash * PRIME_3) & MASK;
  hash ^= hash >> 32n;
  return hash;
}

const utf8 = new TextEncoder();

/** HashID.hash(name, BITS_64): 8 big-endian bytes. */
function hash64(name: string): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(xxHash64(utf8.encode(name), HUDI_SEED));
  return out;
}

/**
 * A commit hashes the same few columns and partitions, and each file's name once per indexed column, thousands of
 * times: the ids are remembered (a bounded number of them; the table starts over when full).
 */
function remembered(compute: (name: string) => string): (name: string) => string {
  const ids = new Map<string, string>();
  return (name) => {
    let id = ids.get(name);
    if (id === undefined) {
      if (ids.size >= 8192) ids.clear();
      ids.set(name, (id = compute(name)));
    }
    return id;
  };
}

const columnIds = remembered((column) => hash64(column).toString('base64'));
const partitionIds = remembered((partition) => hash64(partition).toString('base64'));
const fileIds = remembered((fileName) => createHash('md5').update(fileName, 'utf8').digest('base64'));

/** ColumnIndexID(column).asBase64EncodedString(). */
export function columnIndexId(column: string): string {
  return columnIds(column);
}

/** PartitionIndexID(partitionIdentifier).asBase64EncodedString(). */
export function partitionIndexId(partitionIdentifier: string): string {
  return partitionIds(partitionIdentifier);
}

/** FileIndexID(fileName).asBase64EncodedString(): MD5. */
export function fileIndexId(fileName: string): string {
  return fileIds(fileName);
}

/** HoodieMetadataPayload.getBloomFilterIndexKey. */
export function bloomFilterIndexKey(partitionIdentifier: string, fileName: string): string {
  return partitionIndexId(partitionIdentifier) + fileIndexId(fileName);
}

/** HoodieMetadataPayload.getColumnStatsIndexKey. */
export function columnStatsIndexKey(partitionIdentifier: string, fileName: string, column: string): string {
  return columnIndexId(column) + partitionIndexId(partitionIdentifier) + fileIndexId(fileName);
}
