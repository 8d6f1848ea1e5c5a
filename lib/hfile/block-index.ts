/**
 * Block indexes. The root index block (`IDXROOT2`, in the load-on-open section) lists, per block, its offset
 * (i64), on-disk size (i32) and first key (Hadoop vint length + bytes). The data index's keys are KeyValue keys
 * (possibly HBase's shortened "midpoint" keys, which sort between the previous block's last key and the block's
 * first); the meta index's keys are the meta block names.
 *
 * With more than one level (HBase writes that once a root chunk outgrows `hfile.index.block.max.size`, 128 KiB),
 * root entries point at intermediate (`IDXINTE2`) or leaf (`IDXLEAF2`) index blocks, whose layout is
 * numEntries (i32) | numEntries + 1 entry offsets (i32) | entries: offset (i64), on-disk size (i32), key bytes.
 * Hudi 0.15's own reader handles one level only, which is what Hudi's metadata files have in practice.
 */

import { type Block, type CompressionCodecName, payloadCursor, readBlock } from './block.js';
import { ByteCursor, ByteWriter } from './bytes.js';
import { HFileFormatError } from './errors.js';
import { type CellKey, decodeIndexKey } from './key-value.js';

export interface IndexEntry {
  offset: number;
  onDiskSize: number;
  /** The raw key: a KeyValue key in data indexes, the block name in the meta index. */
  key: Uint8Array;
}

/** A data index entry with its key decoded. */
export interface DataIndexEntry extends IndexEntry {
  firstKey: CellKey;
}

function toOffset(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new HFileFormatError(`${what}: block offset ${value} is out of range`);
  return Number(value);
}

/** The first `count` entries of a root index block. */
export function readRootIndexEntries(block: Block, count: number): IndexEntry[] {
  const cursor = payloadCursor(block);
  const entries: IndexEntry[] = [];
  for (let i = 0; i < count; i++) {
    const offset = toOffset(cursor.i64(), cursor.what);
    const onDiskSize = cursor.i32();
    const key = cursor.take(cursor.hadoopVInt());
    entries.push({ offset, onDiskSize, key });
  }
  return entries;
}

/** All entries of a leaf or intermediate (non-root) index block. */
export function readNonRootIndexEntries(block: Block): IndexEntry[] {
  const cursor = payloadCursor(block);
  const count = cursor.i32();
  if (count < 0) throw new HFileFormatError(`${cursor.what}: ${count} entries`);
  const secondary: number[] = [];
  for (let i = 0; i <= count; i++) secondary.push(cursor.i32());
  const base = cursor.offset;
  const entries: IndexEntry[] = [];
  for (let i = 0; i < count; i++) {
    const entry = new ByteCursor(block.payload, base + secondary[i]!, base + secondary[i + 1]!, cursor.what);
    const offset = toOffset(entry.i64(), cursor.what);
    const onDiskSize = entry.i32();
    entries.push({ offset, onDiskSize, key: entry.take(entry.remaining) });
  }
  return entries;
}

/**
 * The data index flattened to its last level: one entry per data block, in key order. Root entries of a
 * multi-level index are followed down `levels - 1` times.
 */
export function readDataIndex(bytes: Uint8Array, root: Block, count: number, levels: number, compression: CompressionCodecName): DataIndexEntry[] {
  let entries = readRootIndexEntries(root, count);
  for (let level = 1; level < levels; level++) {
    const expected = level === levels - 1 ? 'LEAF_INDEX' : 'INTERMEDIATE_INDEX';
    entries = entries.flatMap((entry) => readNonRootIndexEntries(readBlock(bytes, entry.offset, compression, expected)));
  }
  return entries.map((entry) => ({ ...entry, firstKey: decodeIndexKey(entry.key, `data index key of the block at offset ${entry.offset}`) }));
}

/** The payload of a single-level root index block. */
export function serializeRootIndex(entries: readonly IndexEntry[]): Uint8Array {
  const out = new ByteWriter(64 * Math.max(1, entries.length));
  for (const entry of entries) out.i64(entry.offset).i32(entry.onDiskSize).hadoopVLong(entry.key.length).bytes(entry.key);
  return out.toBytes();
}
