/**
 * Writing an HFile v3 as HBase 2's `HFileWriterImpl` does for Hudi (block size, compression and
 * `HoodieHBaseKVComparator`; no tags, MVCC version 0, no data block encoding):
 * `data blocks | meta blocks (by name) | root data index | meta index | file info | trailer`.
 * A data block closes before a cell once it holds `blockSize` bytes, except between cells of one row (HBase never
 * splits equal keys). Blocks are compressed and followed by CRC32C checksums per 16 KiB. Index keys are each block's
 * real first key (HBase shortens them to a "midpoint"; both are valid, Hudi's 1.x writer uses the first key too); the
 * index is always single-level, the only kind Hudi 0.15's reader handles. writeHFileAsync writes the same bytes with
 * the blocks compressed on libuv's thread pool.
 */

import { concatBytes } from '../util/bytes.js';
import {
  type BlockType,
  type BlockWriteOptions,
  compressBlockPayload,
  compressBlockPayloadAsync,
  frameBlockParts,
  type SupportedCompression,
} from './block.js';
import { type IndexEntry, serializeRootIndex } from './block-index.js';
import { compareBytes, utf8Bytes } from './bytes.js';
import { HFileWriteError } from './errors.js';
import { FileInfoKey, type FileInfoValue, fileInfoValue, KEY_VALUE_VERSION_WITH_MVCC, serializeFileInfo } from './file-info.js';
import {
  cellSize,
  cellValueLength,
  compareHudiCellKeyRows,
  encodeHudiCellKey,
  encodeKey,
  hudiCellKey,
  hudiCellKeyRow,
  MAX_ROW_LENGTH,
  writeCellAt,
} from './key-value.js';
import { HFILE_MAJOR_VERSION, HFILE_MINOR_VERSION, serializeTrailer, TRAILER_SIZE } from './trailer.js';

/** The comparator Hudi's writers put in the trailer (HBase's reader instantiates it by name). */
export const HUDI_HFILE_COMPARATOR = 'org.apache.hudi.io.storage.HoodieHBaseKVComparator';
/** `hoodie.hfile.block.size` default, also the fixed block size of HFile log blocks. */
export const DEFAULT_HFILE_BLOCK_SIZE = 1024 * 1024;

export interface HFileCellInput {
  /** The row: Hudi's record key (a string is written as UTF-8). */
  key: string | Uint8Array;
  /** The value, or its parts in order (written one after the other, not joined first). */
  value: Uint8Array | readonly Uint8Array[];
}

export interface HFileWriteOptions {
  /** Target uncompressed data block size in bytes (default 1 MiB, Hudi's `hoodie.hfile.block.size`). */
  blockSize?: number;
  /** Block compression (default GZ, Hudi's `hoodie.hfile.compression.algorithm`). */
  compression?: SupportedCompression;
  /** zlib level of GZ blocks (default zlib's 6, as Hadoop's codec); any level reads back the same. */
  gzipLevel?: number;
  /** zlib's strategy for GZ blocks (BlockWriteOptions.gzipStrategy; default zlib's default). */
  gzipStrategy?: 'default' | 'run-length';
  /** Entries added to the file info next to HBase's own `hfile.*` ones (e.g. Hudi's `schema`). */
  fileInfo?: Readonly<Record<string, FileInfoValue>>;
  /** Meta blocks (e.g. Hudi's `bloomFilter`); written sorted by name, as HBase does. */
  metaBlocks?: ReadonlyArray<{ name: string; payload: Uint8Array }>;
  /** The trailer's comparator class (default Hudi's `HoodieHBaseKVComparator`). */
  comparatorClassName?: string;
  /** `hfile.CREATE_TIME_TS` in epoch millis; Hudi never sets it, so 0 (the default) matches its files. */
  createTime?: bigint;
  /** Allow several cells with the same key (HFile log blocks may repeat keys; base files may not). Default false. */
  allowDuplicateKeys?: boolean;
}

const RESERVED_FILE_INFO = new Set<string>(Object.values(FileInfoKey));

/** Data blocks compressing at once in writeHFileAsync by default: libuv's thread pool has 4 threads. */
const ASYNC_BLOCKS_IN_FLIGHT = 4;

/** Serializes sorted cells into a complete HFile. Throws HFileWriteError on unsorted or oversized keys. */
export function writeHFile(cells: Iterable<HFileCellInput>, options: HFileWriteOptions = {}): Uint8Array {
  const file = new HFileAssembly(options);
  const cutter = new DataBlockCutter(options);
  for (const cell of cells) {
    const full = cutter.add(cell);
    if (full !== undefined) file.dataBlock(full, compressBlockPayload(full.payload, file.blockOptions));
  }
  const last = cutter.finish();
  if (last !== undefined) file.dataBlock(last, compressBlockPayload(last.payload, file.blockOptions));
  return file.finish(cutter);
}

/**
 * writeHFile, with the data blocks compressed on libuv's thread pool, `blocksInFlight` at once (each holds its
 * uncompressed payload until then), while the next blocks are cut: the same bytes, in less time on a machine with
 * more than one core.
 */
export async function writeHFileAsync(
  cells: Iterable<HFileCellInput>,
  options: HFileWriteOptions = {},
  blocksInFlight: number = ASYNC_BLOCKS_IN_FLIGHT,
): Promise<Uint8Array> {
  return concatBytes(await writeHFilePartsAsync(cells, options, blocksInFlight));
}

/**
 * writeHFileAsync's bytes as parts to write one after the other (views of the compressed blocks, not joined): a
 * caller that copies them into something larger anyway copies them once.
 */
export async function writeHFilePartsAsync(
  cells: Iterable<HFileCellInput>,
  options: HFileWriteOptions = {},
  blocksInFlight: number = ASYNC_BLOCKS_IN_FLIGHT,
): Promise<Uint8Array[]> {
  if (!Number.isInteger(blocksInFlight) || blocksInFlight < 1) throw new HFileWriteError(`blocks in flight ${blocksInFlight} is not a positive integer`);
  const file = new HFileAssembly(options);
  // A block's payload is needed only until it is compressed: its array then takes the next block.
  const free: ArrayBuffer[] = [];
  const cutter = new DataBlockCutter(options, (length) => {
    const index = free.findIndex((buffer) => buffer.byteLength >= length);
    const [reused] = index < 0 ? [] : free.splice(index, 1);
    return reused === undefined ? new Uint8Array(length) : new Uint8Array(reused, 0, length);
  });
  /** Blocks cut and not framed yet, oldest first, each compressing. */
  const pending: { block: CutBlock; stored: Promise<Uint8Array> }[] = [];
  // Frames the oldest compressed blocks in order (offsets depend on every earlier block), down to `keep` pending.
  const frameUpTo = async (keep: number): Promise<void> => {
    while (pending.length > keep) {
      const next = pending[0] as (typeof pending)[number];
      const stored = await next.stored;
      pending.shift();
      file.dataBlock(next.block, stored);
      // Uncompressed (NONE), the payload is itself part of the file.
      if (stored.buffer !== next.block.payload.buffer && free.length < blocksInFlight) free.push(next.block.payload.buffer as ArrayBuffer);
    }
  };
  const start = (block: CutBlock): void => {
    const stored = compressBlockPayloadAsync(block.payload, file.blockOptions);
    // Handled here too, so that a failure waits for frameUpTo instead of surfacing as an unhandled rejection.
    stored.catch(() => undefined);
    pending.push({ block, stored });
  };
  try {
    for (const cell of cells) {
      const full = cutter.add(cell);
      if (full === undefined) continue;
      start(full);
      await frameUpTo(blocksInFlight - 1);
    }
    const last = cutter.finish();
    if (last !== undefined) start(last);
    await frameUpTo(0);
  } finally {
    // Whatever failed, no compression is left running unobserved.
    await Promise.allSettled(pending.map((b) => b.stored));
  }
  return file.finishParts(cutter);
}

/** A data block as cut: its uncompressed payload and first key. */
interface CutBlock {
  readonly payload: Uint8Array;
  readonly firstKey: Uint8Array;
}

/**
 * Cells into data blocks: checks the key order, and closes a block before a cell once it holds `blockSize` bytes,
 * except between cells of one row. A block's cells are kept until it closes, then written into one array of its
 * size. Counts what the file info and trailer need.
 */
class DataBlockCutter {
  private readonly blockSize: number;
  private readonly allowDuplicateKeys: boolean;
  private cells: { key: Uint8Array; value: Uint8Array | readonly Uint8Array[] }[] = [];
  private blockLength = 0;
  lastKey: Uint8Array | undefined;
  entryCount = 0;
  totalKeyLength = 0;
  totalValueLength = 0;

  constructor(
    options: HFileWriteOptions,
    /** A zeroed or reused array for a block's payload (its bytes are all overwritten). */
    private readonly allocate: (length: number) => Uint8Array = (length) => new Uint8Array(length),
  ) {
    this.blockSize = options.blockSize ?? DEFAULT_HFILE_BLOCK_SIZE;
    if (!Number.isInteger(this.blockSize) || this.blockSize <= 0) throw new HFileWriteError(`block size ${this.blockSize} is not a positive integer`);
    this.allowDuplicateKeys = options.allowDuplicateKeys === true;
  }

  /** Adds a cell; returns the block it closed first, if any. */
  add(cell: HFileCellInput): CutBlock | undefined {
    const rowLength = typeof cell.key === 'string' ? Buffer.byteLength(cell.key, 'utf8') : cell.key.length;
    if (rowLength > MAX_ROW_LENGTH) throw new HFileWriteError(`a key of ${rowLength} bytes is longer than HBase's row limit of ${MAX_ROW_LENGTH}`);
    const key = encodeHudiCellKey(cell.key);
    const previousKey = this.lastKey;
    const order = previousKey === undefined ? 1 : compareHudiCellKeyRows(key, previousKey);
    if (previousKey !== undefined && (order < 0 || (order === 0 && !this.allowDuplicateKeys))) {
      const shown = (bytes: Uint8Array): string => JSON.stringify(new TextDecoder().decode(hudiCellKeyRow(bytes)));
      throw new HFileWriteError(
        `keys must be written in ascending byte order${this.allowDuplicateKeys ? '' : ' without duplicates'}: ${shown(key)} follows ${shown(previousKey)}`,
        {
          fix: 'sort the records by the UTF-8 bytes of their keys',
        },
      );
    }
    const closed = order !== 0 && this.blockLength >= this.blockSize ? this.close() : undefined;
    const valueLength = cellValueLength(cell.value);
    this.cells.push({ key, value: cell.value });
    this.blockLength += cellSize(key, valueLength);
    this.entryCount++;
    this.totalKeyLength += key.length;
    this.totalValueLength += valueLength;
    this.lastKey = key;
    return closed;
  }

  /** The last block, if it holds any cell. */
  finish(): CutBlock | undefined {
    return this.cells.length === 0 ? undefined : this.close();
  }

  private close(): CutBlock {
    const payload = this.allocate(this.blockLength);
    let offset = 0;
    for (const { key, value } of this.cells) offset = writeCellAt(payload, offset, key, value);
    const closed = { payload, firstKey: (this.cells[0] as { key: Uint8Array }).key };
    this.cells = [];
    this.blockLength = 0;
    return closed;
  }
}

/**
 * The file being assembled: blocks in order (each framed once its stored bytes are known, offsets from the sizes
 * before it), then the meta blocks, the load-on-open section and the trailer. Collected as parts, joined once.
 */
class HFileAssembly {
  readonly blockOptions: BlockWriteOptions;
  private readonly parts: Uint8Array[] = [];
  private length = 0;
  private readonly lastOffsetOfType = new Map<BlockType, number>();
  private totalUncompressedBytes = 0;
  private readonly dataIndex: IndexEntry[] = [];

  constructor(private readonly options: HFileWriteOptions) {
    this.blockOptions = {
      compression: options.compression ?? 'GZ',
      ...(options.gzipLevel === undefined ? {} : { gzipLevel: options.gzipLevel }),
      ...(options.gzipStrategy === undefined ? {} : { gzipStrategy: options.gzipStrategy }),
    };
  }

  /** Appends a data block whose payload compressed to `stored`. */
  dataBlock(block: CutBlock, stored: Uint8Array): void {
    const { offset, onDiskSize } = this.append('DATA', stored, block.payload.length);
    this.dataIndex.push({ offset, onDiskSize, key: block.firstKey });
  }

  /** `counted`: whether HBase adds the block to the trailer's totalUncompressedBytes (all but the root data index). */
  private append(type: BlockType, stored: Uint8Array, payloadLength: number, counted = true): { offset: number; onDiskSize: number } {
    const offset = this.length;
    const block = frameBlockParts(type, stored, payloadLength, this.lastOffsetOfType.get(type) ?? -1, this.blockOptions.bytesPerChecksum);
    this.parts.push(...block.parts);
    this.length += block.length;
    this.lastOffsetOfType.set(type, offset);
    if (counted) this.totalUncompressedBytes += block.uncompressedSizeWithHeader;
    return { offset, onDiskSize: block.length };
  }

  private writeBlock(type: BlockType, payload: Uint8Array, counted = true): { offset: number; onDiskSize: number } {
    return this.append(type, compressBlockPayload(payload, this.blockOptions), payload.length, counted);
  }

  /** Everything after the data blocks, and the file's bytes. */
  finish(cells: DataBlockCutter): Uint8Array {
    return concatBytes(this.finishParts(cells));
  }

  /** Everything after the data blocks, and the file's bytes as parts in order. */
  finishParts(cells: DataBlockCutter): Uint8Array[] {
    const { options, dataIndex } = this;
    const lastDataBlockOffset = dataIndex.at(-1)?.offset ?? -1;

    // Meta blocks, sorted by name.
    const metaBlocks = [...(options.metaBlocks ?? [])].map((meta) => ({ ...meta, nameBytes: utf8Bytes(meta.name) }));
    metaBlocks.sort((a, b) => compareBytes(a.nameBytes, b.nameBytes));
    const metaIndex: IndexEntry[] = [];
    for (const meta of metaBlocks) {
      const last = metaIndex.at(-1);
      if (last !== undefined && compareBytes(last.key, meta.nameBytes) === 0) throw new HFileWriteError(`meta block ${meta.name} is given twice`);
      const { offset, onDiskSize } = this.writeBlock('META', meta.payload);
      metaIndex.push({ offset, onDiskSize, key: meta.nameBytes });
    }

    // Load-on-open section. HBase counts the root data index in uncompressedDataIndexSize instead.
    const rootIndexPayload = serializeRootIndex(dataIndex);
    const loadOnOpenDataOffset = this.writeBlock('ROOT_INDEX', rootIndexPayload, false).offset;
    this.writeBlock('ROOT_INDEX', serializeRootIndex(metaIndex));

    const fileInfo: Array<{ key: Uint8Array; value: Uint8Array }> = [];
    for (const [name, value] of Object.entries(options.fileInfo ?? {})) {
      if (RESERVED_FILE_INFO.has(name)) throw new HFileWriteError(`file info ${name} is written by the HFile writer itself`);
      fileInfo.push({ key: utf8Bytes(name), value: fileInfoValue(value) });
    }
    const { entryCount, totalKeyLength, totalValueLength, lastKey } = cells;
    const hbaseInfo: Array<[string, FileInfoValue]> = [
      [FileInfoKey.AVG_KEY_LEN, { int: entryCount === 0 ? 0 : Math.floor(totalKeyLength / entryCount) }],
      [FileInfoKey.AVG_VALUE_LEN, { int: entryCount === 0 ? 0 : Math.floor(totalValueLength / entryCount) }],
      [FileInfoKey.CREATE_TIME_TS, { long: options.createTime ?? 0n }],
      [FileInfoKey.KEY_VALUE_VERSION, { int: KEY_VALUE_VERSION_WITH_MVCC }],
      [FileInfoKey.MAX_MEMSTORE_TS_KEY, { long: 0n }],
    ];
    if (lastKey !== undefined) hbaseInfo.push([FileInfoKey.LAST_KEY, lastKey]);
    for (const [name, value] of hbaseInfo) fileInfo.push({ key: utf8Bytes(name), value: fileInfoValue(value) });
    const fileInfoOffset = this.writeBlock('FILE_INFO', serializeFileInfo(fileInfo)).offset;

    const trailer = serializeTrailer({
      majorVersion: HFILE_MAJOR_VERSION,
      minorVersion: HFILE_MINOR_VERSION,
      fileInfoOffset,
      loadOnOpenDataOffset,
      uncompressedDataIndexSize: rootIndexPayload.length,
      totalUncompressedBytes: this.totalUncompressedBytes + TRAILER_SIZE,
      dataIndexCount: dataIndex.length,
      metaIndexCount: metaIndex.length,
      entryCount,
      numDataIndexLevels: 1,
      firstDataBlockOffset: dataIndex.length === 0 ? -1 : 0,
      lastDataBlockOffset,
      comparatorClassName: options.comparatorClassName ?? HUDI_HFILE_COMPARATOR,
      compressionCodec: this.blockOptions.compression,
    });
    return [...this.parts, trailer];
  }
}

/** The serialized size of a cell as `writeHFile` writes it, for callers sizing files. */
export function hfileCellSize(key: string | Uint8Array, value: Uint8Array | readonly Uint8Array[]): number {
  const row = typeof key === 'string' ? utf8Bytes(key) : key;
  return cellSize(encodeKey(hudiCellKey(row)), cellValueLength(value));
}
