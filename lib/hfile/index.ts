/**
 * HFile v3 as Hudi 0.14/0.15 uses it: metadata-table base files and the content of HFile log blocks.
 * Pure functions over bytes (node:zlib for GZ); no DuckDB, no AWS SDK.
 */

export type { Block, BlockHeader, BlockType, CompressionCodecName, SupportedCompression } from './block.js';
export type { DataIndexEntry } from './block-index.js';
export { HFileFormatError, HFileWriteError } from './errors.js';
export { FileInfo, FileInfoKey, type FileInfoValue } from './file-info.js';
export {
  HUDI_BLOOM_FILTER_META_BLOCK,
  type HudiBaseHFileWriteOptions,
  HudiFileInfoKey,
  type HudiHFile,
  type HudiHFileBloomFilter,
  type HudiHFileRecord,
  type HudiHFileWriteOptions,
  readHudiHFile,
  writeHudiBaseHFile,
  writeHudiLogBlockHFile,
  writeHudiLogBlockHFileAsync,
} from './hudi.js';
export { type CellKey, compareCellKeys, type HFileCell, KeyType, LATEST_TIMESTAMP } from './key-value.js';
export { type HFile, type ReadHFileOptions, readHFile, readHFileCells } from './reader.js';
export type { HFileTrailer } from './trailer.js';
export {
  DEFAULT_HFILE_BLOCK_SIZE,
  type HFileCellInput,
  type HFileWriteOptions,
  HUDI_HFILE_COMPARATOR,
  hfileCellSize,
  writeHFile,
  writeHFileAsync,
  writeHFilePartsAsync,
} from './writer.js';
