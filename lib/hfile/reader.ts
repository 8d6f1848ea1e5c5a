/**
 * Reading a whole HFile held in memory (a metadata-table base file, or the content of an HFile data block of a
 * log file): trailer, load-on-open section, then data blocks on demand.
 *
 * Layout, as HBase 2's writer lays it out:
 *   data blocks (and, in big files, inline leaf index blocks) | meta blocks | intermediate index blocks
 *   | load-on-open: root data index, meta index, file info | trailer (4096 bytes)
 */

import { type Block, type CompressionCodecName, payloadCursor, readBlock } from './block.js';
import { type DataIndexEntry, type IndexEntry, readDataIndex, readRootIndexEntries } from './block-index.js';
import { compareBytes, utf8Bytes } from './bytes.js';
import { HFileFormatError } from './errors.js';
import { type FileInfo, FileInfoKey, KEY_VALUE_VERSION_WITH_MVCC, readFileInfo } from './file-info.js';
import { type CellKey, type CellLayout, decodeIndexKey, type HFileCell, readCell } from './key-value.js';
import { type HFileTrailer, readTrailer } from './trailer.js';

export interface HFile {
  readonly trailer: HFileTrailer;
  readonly compression: CompressionCodecName;
  readonly fileInfo: FileInfo;
  /** One entry per data block, in key order. */
  readonly dataIndex: readonly DataIndexEntry[];
  /** Meta block names, in the meta index's order. */
  readonly metaBlockNames: readonly string[];
  /** The number of cells, from the trailer. */
  readonly entryCount: number;
  /** The last cell's key, from the file info (`hfile.LASTKEY`), when the file has cells. */
  readonly lastKey: CellKey | undefined;
  /** Every cell, in file order. */
  cells(): Generator<HFileCell>;
  /** Cells from the first whose row is >= `row` (a seek), in file order. */
  cellsFrom(row: string | Uint8Array): Generator<HFileCell>;
  /** The first cell whose row is `row`, if any. */
  get(row: string | Uint8Array): HFileCell | undefined;
  /** Every cell whose row is `row` (log-block HFiles may repeat a key). */
  getAll(row: string | Uint8Array): HFileCell[];
  /** A meta block's payload (e.g. Hudi's `bloomFilter`), uncompressed. */
  metaBlock(name: string): Uint8Array | undefined;
  /** The data blocks' headers, for inspection. */
  dataBlock(index: number): Block;
}

export interface ReadHFileOptions {
  /** The file's path or name, for error messages. */
  location?: string;
}

/** Opens an HFile from its bytes. Blocks are read and decompressed lazily; the bytes must stay unchanged. */
export function readHFile(bytes: Uint8Array, options: ReadHFileOptions = {}): HFile {
  try {
    return openHFile(bytes);
  } catch (error) {
    if (error instanceof HFileFormatError && options.location !== undefined && error.location === undefined) {
      throw new HFileFormatError(error.problem, { location: options.location, ...(error.fix ? { fix: error.fix } : {}), cause: error });
    }
    throw error;
  }
}

function openHFile(bytes: Uint8Array): HFile {
  const trailer = readTrailer(bytes);
  const compression = trailer.compressionCodec;
  const loadOnOpenEnd = bytes.length - 4096;
  if (trailer.loadOnOpenDataOffset < 0 || trailer.loadOnOpenDataOffset >= loadOnOpenEnd) {
    throw new HFileFormatError(`the trailer's load-on-open offset ${trailer.loadOnOpenDataOffset} is outside the file`);
  }
  const rootIndex = readBlock(bytes, trailer.loadOnOpenDataOffset, compression, 'ROOT_INDEX');
  const metaIndex = readBlock(bytes, rootIndex.offset + rootIndex.onDiskSize, compression, 'ROOT_INDEX');
  const fileInfoBlock = readBlock(bytes, metaIndex.offset + metaIndex.onDiskSize, compression, 'FILE_INFO');
  if (trailer.fileInfoOffset !== 0 && trailer.fileInfoOffset !== fileInfoBlock.offset) {
    throw new HFileFormatError(`the file info block is at offset ${fileInfoBlock.offset}, the trailer says ${trailer.fileInfoOffset}`);
  }
  const fileInfo = readFileInfo(fileInfoBlock);
  const dataIndex = readDataIndex(bytes, rootIndex, trailer.dataIndexCount, Math.max(1, trailer.numDataIndexLevels), compression);
  const metaEntries: IndexEntry[] = readRootIndexEntries(metaIndex, trailer.metaIndexCount);
  const metaBlockNames = metaEntries.map((entry) => new TextDecoder().decode(entry.key));
  const lastKeyBytes = fileInfo.get(FileInfoKey.LAST_KEY);
  const lastKey = lastKeyBytes === undefined || lastKeyBytes.length === 0 ? undefined : decodeIndexKey(lastKeyBytes, 'hfile.LASTKEY');
  const layout: CellLayout = {
    includesMvcc: fileInfo.getInt(FileInfoKey.KEY_VALUE_VERSION) === KEY_VALUE_VERSION_WITH_MVCC,
    includesTags: fileInfo.has(FileInfoKey.MAX_TAGS_LEN),
  };

  const blocks = new Map<number, Block>();
  const dataBlock = (index: number): Block => {
    const entry = dataIndex[index];
    if (entry === undefined) throw new RangeError(`data block ${index} of ${dataIndex.length}`);
    let block = blocks.get(index);
    if (block === undefined) {
      block = readBlock(bytes, entry.offset, compression, 'DATA');
      if (block.onDiskSize !== entry.onDiskSize) {
        throw new HFileFormatError(`the data block at offset ${entry.offset} is ${block.onDiskSize} bytes on disk, the index says ${entry.onDiskSize}`);
      }
      // Keep only the latest block: scans move forward, lookups touch one or two blocks.
      blocks.clear();
      blocks.set(index, block);
    }
    return block;
  };

  function* cellsOfBlocks(firstBlock: number): Generator<HFileCell> {
    for (let index = firstBlock; index < dataIndex.length; index++) {
      const cursor = payloadCursor(dataBlock(index));
      while (cursor.remaining > 0) yield readCell(cursor, layout);
    }
  }

  /** The block a seek to `row` starts in: the last whose first row sorts strictly before it (duplicates may straddle blocks). */
  const startBlock = (row: Uint8Array): number => {
    let low = 0;
    let high = dataIndex.length - 1;
    let found = 0;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (compareBytes(dataIndex[mid]!.firstKey.row, row) < 0) {
        found = mid;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found;
  };

  const rowBytes = (row: string | Uint8Array): Uint8Array => (typeof row === 'string' ? utf8Bytes(row) : row);

  function* cellsFrom(row: string | Uint8Array): Generator<HFileCell> {
    const target = rowBytes(row);
    if (dataIndex.length === 0) return;
    if (lastKey !== undefined && compareBytes(target, lastKey.row) > 0) return;
    let reached = false;
    for (const cell of cellsOfBlocks(startBlock(target))) {
      if (!reached && compareBytes(cell.row, target) < 0) continue;
      reached = true;
      yield cell;
    }
  }

  const getAll = (row: string | Uint8Array): HFileCell[] => {
    const target = rowBytes(row);
    const found: HFileCell[] = [];
    for (const cell of cellsFrom(target)) {
      if (compareBytes(cell.row, target) !== 0) break;
      found.push(cell);
    }
    return found;
  };

  return {
    trailer,
    compression,
    fileInfo,
    dataIndex,
    metaBlockNames,
    entryCount: trailer.entryCount,
    lastKey,
    cells: () => cellsOfBlocks(0),
    cellsFrom,
    get: (row) => {
      const target = rowBytes(row);
      for (const cell of cellsFrom(target)) return compareBytes(cell.row, target) === 0 ? cell : undefined;
      return undefined;
    },
    getAll,
    metaBlock: (name) => {
      const index = metaBlockNames.indexOf(name);
      if (index < 0) return undefined;
      const entry = metaEntries[index]!;
      return readBlock(bytes, entry.offset, compression, 'META').payload;
    },
    dataBlock,
  };
}

/** Decodes every cell of an HFile (e.g. the content of a log file's HFile data block) into detached copies. */
export function readHFileCells(bytes: Uint8Array, options: ReadHFileOptions = {}): HFileCell[] {
  const file = readHFile(bytes, options);
  const cells: HFileCell[] = [];
  for (const cell of file.cells()) {
    cells.push({ ...cell, row: cell.row.slice(), family: cell.family.slice(), qualifier: cell.qualifier.slice(), value: cell.value.slice() });
  }
  if (cells.length !== file.entryCount) {
    throw new HFileFormatError(
      `the data blocks hold ${cells.length} cells, the trailer says ${file.entryCount}`,
      options.location ? { location: options.location } : {},
    );
  }
  return cells;
}
