/**
 * Writing an HFile v3 as HBase 2's `HFileWriterImpl` does for Hudi (`HFile.getWriterFactory` with an
 * `HFileContext` of block size, compression and `HoodieHBaseKVComparator`; no tags, MVCC version 0, no data
 * block encoding):
 *
 *   data blocks | meta blocks (by name) | root data index | meta index | file info | trailer
 *
 * A data block is closed before a cell once it holds `blockSize` bytes of cells, except between cells of the
 * same row (HBase never splits equal keys across blocks). Every block is compressed with the file's codec
 * and followed by CRC32C checksums per 16 KiB. Index keys are each block's real first key (HBase shortens
 * them to a "midpoint" key; both are valid, and Hudi's own 1.x writer uses the first key too). The index is
 * always single-level, the only kind Hudi 0.15's reader handles.
 */

import { type BlockType, type SupportedCompression, serializeBlock } from './block.js';
import { type IndexEntry, serializeRootIndex } from './block-index.js';
import { ByteWriter, compareBytes, utf8Bytes } from './bytes.js';
import { HFileWriteError } from './errors.js';
import { FileInfoKey, type FileInfoValue, fileInfoValue, KEY_VALUE_VERSION_WITH_MVCC, serializeFileInfo } from './file-info.js';
import { cellSize, encodeKey, hudiCellKey, MAX_ROW_LENGTH, writeCell } from './key-value.js';
import { HFILE_MAJOR_VERSION, HFILE_MINOR_VERSION, serializeTrailer, TRAILER_SIZE } from './trailer.js';

/** The comparator Hudi's writers put in the trailer (HBase's reader instantiates it by name). */
export const HUDI_HFILE_COMPARATOR = 'org.apache.hudi.io.storage.HoodieHBaseKVComparator';
/** `hoodie.hfile.block.size` default, also the fixed block size of HFile log blocks. */
export const DEFAULT_HFILE_BLOCK_SIZE = 1024 * 1024;

export interface HFileCellInput {
  /** The row: Hudi's record key (a string is written as UTF-8). */
  key: string | Uint8Array;
  value: Uint8Array;
}

export interface HFileWriteOptions {
  /** Target uncompressed data block size in bytes (default 1 MiB, Hudi's `hoodie.hfile.block.size`). */
  blockSize?: number;
  /** Block compression (default GZ, Hudi's `hoodie.hfile.compression.algorithm`). */
  compression?: SupportedCompression;
  /** zlib level of GZ blocks (default zlib's 6, as Hadoop's codec); any level reads back the same. */
  gzipLevel?: number;
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

/** Serializes sorted cells into a complete HFile. Throws HFileWriteError on unsorted or oversized keys. */
export function writeHFile(cells: Iterable<HFileCellInput>, options: HFileWriteOptions = {}): Uint8Array {
  const blockSize = options.blockSize ?? DEFAULT_HFILE_BLOCK_SIZE;
  if (!Number.isInteger(blockSize) || blockSize <= 0) throw new HFileWriteError(`block size ${blockSize} is not a positive integer`);
  const compression = options.compression ?? 'GZ';
  const blockOptions = { compression, ...(options.gzipLevel === undefined ? {} : { gzipLevel: options.gzipLevel }) };
  const out = new ByteWriter(64 * 1024);
  const lastOffsetOfType = new Map<BlockType, number>();
  let totalUncompressedBytes = 0;

  /** `counted`: whether HBase adds the block to the trailer's totalUncompressedBytes (all but the root data index). */
  const writeBlock = (type: BlockType, payload: Uint8Array, counted = true): { offset: number; onDiskSize: number } => {
    const offset = out.length;
    const block = serializeBlock(type, payload, lastOffsetOfType.get(type) ?? -1, blockOptions);
    out.bytes(block.bytes);
    lastOffsetOfType.set(type, offset);
    if (counted) totalUncompressedBytes += block.uncompressedSizeWithHeader;
    return { offset, onDiskSize: block.bytes.length };
  };

  // Data blocks.
  const dataIndex: IndexEntry[] = [];
  let block = new ByteWriter(Math.min(blockSize, 1 << 20) + 1024);
  let blockFirstKey: Uint8Array | undefined;
  let previousRow: Uint8Array | undefined;
  let lastKey: Uint8Array | undefined;
  let entryCount = 0;
  let totalKeyLength = 0;
  let totalValueLength = 0;
  const finishDataBlock = (): void => {
    if (blockFirstKey === undefined) return;
    const { offset, onDiskSize } = writeBlock('DATA', block.toBytes());
    dataIndex.push({ offset, onDiskSize, key: blockFirstKey });
    block = new ByteWriter(Math.min(blockSize, 1 << 20) + 1024);
    blockFirstKey = undefined;
  };
  for (const cell of cells) {
    const row = typeof cell.key === 'string' ? utf8Bytes(cell.key) : cell.key;
    if (row.length > MAX_ROW_LENGTH) throw new HFileWriteError(`a key of ${row.length} bytes is longer than HBase's row limit of ${MAX_ROW_LENGTH}`);
    const order = previousRow === undefined ? 1 : compareBytes(row, previousRow);
    if (order < 0 || (order === 0 && !options.allowDuplicateKeys)) {
      const shown = (bytes: Uint8Array): string => JSON.stringify(new TextDecoder().decode(bytes));
      throw new HFileWriteError(
        `keys must be written in ascending byte order${options.allowDuplicateKeys ? '' : ' without duplicates'}: ${shown(row)} follows ${shown(previousRow!)}`,
        {
          fix: 'sort the records by the UTF-8 bytes of their keys',
        },
      );
    }
    const key = encodeKey(hudiCellKey(row));
    if (order !== 0 && block.length >= blockSize) finishDataBlock();
    blockFirstKey ??= key;
    writeCell(block, key, cell.value);
    entryCount++;
    totalKeyLength += key.length;
    totalValueLength += cell.value.length;
    previousRow = row;
    lastKey = key;
  }
  finishDataBlock();
  const lastDataBlockOffset = dataIndex.at(-1)?.offset ?? -1;

  // Meta blocks, sorted by name.
  const metaBlocks = [...(options.metaBlocks ?? [])].map((meta) => ({ ...meta, nameBytes: utf8Bytes(meta.name) }));
  metaBlocks.sort((a, b) => compareBytes(a.nameBytes, b.nameBytes));
  const metaIndex: IndexEntry[] = [];
  for (const meta of metaBlocks) {
    if (metaIndex.length > 0 && compareBytes(metaIndex.at(-1)!.key, meta.nameBytes) === 0) throw new HFileWriteError(`meta block ${meta.name} is given twice`);
    const { offset, onDiskSize } = writeBlock('META', meta.payload);
    metaIndex.push({ offset, onDiskSize, key: meta.nameBytes });
  }

  // Load-on-open section. HBase counts the root data index in uncompressedDataIndexSize instead.
  const rootIndexPayload = serializeRootIndex(dataIndex);
  const loadOnOpenDataOffset = writeBlock('ROOT_INDEX', rootIndexPayload, false).offset;
  writeBlock('ROOT_INDEX', serializeRootIndex(metaIndex));

  const fileInfo: Array<{ key: Uint8Array; value: Uint8Array }> = [];
  for (const [name, value] of Object.entries(options.fileInfo ?? {})) {
    if (RESERVED_FILE_INFO.has(name)) throw new HFileWriteError(`file info ${name} is written by the HFile writer itself`);
    fileInfo.push({ key: utf8Bytes(name), value: fileInfoValue(value) });
  }
  const hbaseInfo: Array<[string, FileInfoValue]> = [
    [FileInfoKey.AVG_KEY_LEN, { int: entryCount === 0 ? 0 : Math.floor(totalKeyLength / entryCount) }],
    [FileInfoKey.AVG_VALUE_LEN, { int: entryCount === 0 ? 0 : Math.floor(totalValueLength / entryCount) }],
    [FileInfoKey.CREATE_TIME_TS, { long: options.createTime ?? 0n }],
    [FileInfoKey.KEY_VALUE_VERSION, { int: KEY_VALUE_VERSION_WITH_MVCC }],
    [FileInfoKey.MAX_MEMSTORE_TS_KEY, { long: 0n }],
  ];
  if (lastKey !== undefined) hbaseInfo.push([FileInfoKey.LAST_KEY, lastKey]);
  for (const [name, value] of hbaseInfo) fileInfo.push({ key: utf8Bytes(name), value: fileInfoValue(value) });
  const fileInfoOffset = writeBlock('FILE_INFO', serializeFileInfo(fileInfo)).offset;

  out.bytes(
    serializeTrailer({
      majorVersion: HFILE_MAJOR_VERSION,
      minorVersion: HFILE_MINOR_VERSION,
      fileInfoOffset,
      loadOnOpenDataOffset,
      uncompressedDataIndexSize: rootIndexPayload.length,
      totalUncompressedBytes: totalUncompressedBytes + TRAILER_SIZE,
      dataIndexCount: dataIndex.length,
      metaIndexCount: metaIndex.length,
      entryCount,
      numDataIndexLevels: 1,
      firstDataBlockOffset: dataIndex.length === 0 ? -1 : 0,
      lastDataBlockOffset,
      comparatorClassName: options.comparatorClassName ?? HUDI_HFILE_COMPARATOR,
      compressionCodec: compression,
    }),
  );
  return out.toBytes();
}

/** The serialized size of a cell as `writeHFile` writes it, for callers sizing files. */
export function hfileCellSize(key: string | Uint8Array, value: Uint8Array): number {
  const row = typeof key === 'string' ? utf8Bytes(key) : key;
  return cellSize(encodeKey(hudiCellKey(row)), value);
}
