/**
 * HFile v3 as Hudi 0.14/0.15 uses it: metadata-table base files and the content of HFile log blocks.
 * Pure functions over bytes (node:zlib for GZ); no DuckDB, no AWS SDK.
 */
export { HFileFormatError, HFileWriteError } from './errors.js';
export { readHFile, readHFileCells, type HFile, type ReadHFileOptions } from './reader.js';
export { writeHFile, hfileCellSize, DEFAULT_HFILE_BLOCK_SIZE, HUDI_HFILE_COMPARATOR, type HFileCellInput, type HFileWriteOptions } from './writer.js';
export {
  readHudiHFile,
  writeHudiBaseHFile,
  writeHudiLogBlockHFile,
  HudiFileInfoKey,
  HUDI_BLOOM_FILTER_META_BLOCK,
  type HudiHFile,
  type HudiHFileRecord,
  type HudiHFileBloomFilter,
  type HudiHFileWriteOptions,
  type HudiBaseHFileWriteOptions,
} from './hudi.js';
export { FileInfo, FileInfoKey, type FileInfoValue } from './file-info.js';
export { KeyType, LATEST_TIMESTAMP, compareCellKeys, type CellKey, type HFileCell } from './key-value.js';
export type { HFileTrailer } from './trailer.js';
export type { DataIndexEntry } from './block-index.js';
export type { Block, BlockHeader, BlockType, CompressionCodecName, SupportedCompression } from './block.js';
