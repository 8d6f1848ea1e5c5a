/**
 * Field ids of the footer's Thrift structs (parquet.thrift) and the one rule that finds a leaf's column chunk in a
 * row group, shared by every module that reads a footer.
 */
import type { ParquetColumnInfo } from './schema.js';
import { ThriftStruct } from './thrift.js';

export const FILE_METADATA = { schema: 2, numRows: 3, rowGroups: 4, keyValueMetadata: 5, createdBy: 6 } as const;
export const ROW_GROUP = { columns: 1, totalByteSize: 2, numRows: 3, sortingColumns: 4, fileOffset: 5, totalCompressedSize: 6, ordinal: 7 } as const;
export const COLUMN_CHUNK = {
  filePath: 1,
  fileOffset: 2,
  metaData: 3,
  offsetIndexOffset: 4,
  offsetIndexLength: 5,
  columnIndexOffset: 6,
  columnIndexLength: 7,
  cryptoMetadata: 8,
  encryptedColumnMetadata: 9,
} as const;
export const COLUMN_META = {
  type: 1,
  path: 3,
  codec: 4,
  numValues: 5,
  totalUncompressedSize: 6,
  totalCompressedSize: 7,
  dataPageOffset: 9,
  indexPageOffset: 10,
  dictionaryPageOffset: 11,
  statistics: 12,
  bloomFilterOffset: 14,
  bloomFilterLength: 15,
} as const;
export const STATISTICS = { nullCount: 3, maxValue: 5, minValue: 6, isMaxValueExact: 7, isMinValueExact: 8 } as const;

/**
 * Each leaf's chunk index in a row group, by its path joined by '.': a row group holds one chunk per leaf, in the
 * schema's order of leaves (`columns` as columnInfosFromSchemaElements gives them).
 */
export function leafChunkIndexes(columns: readonly ParquetColumnInfo[]): ReadonlyMap<string, number> {
  // Footers of one schema share one columns array (readFooterSummary), so a group's files index it once.
  let indexes = chunkIndexesOf.get(columns);
  if (indexes === undefined) {
    indexes = new Map();
    for (const column of columns) if (column.numChildren === 0) indexes.set(column.path.join('.'), indexes.size);
    chunkIndexesOf.set(columns, indexes);
  }
  return indexes;
}

const chunkIndexesOf = new WeakMap<readonly ParquetColumnInfo[], Map<string, number>>();

/** The ColumnMetaData of a row group's chunk `chunkIndex`, when the footer carries it. */
export function chunkMetaData(rowGroup: ThriftStruct, chunkIndex: number): ThriftStruct | undefined {
  const chunk = rowGroup.list(ROW_GROUP.columns)?.items[chunkIndex];
  return chunk instanceof ThriftStruct ? chunk.struct(COLUMN_CHUNK.metaData) : undefined;
}

/** Where a chunk's pages are: from its dictionary page when it has one, else from its first data page. */
export function chunkPageRange(meta: ThriftStruct): { readonly start: number; readonly length: number } {
  // int(), not bigint(): offsets read as numbers while exact, and a BigInt per chunk of 10,000 footers is waste.
  const data = meta.int(COLUMN_META.dataPageOffset) ?? 0;
  const dictionary = meta.int(COLUMN_META.dictionaryPageOffset) ?? 0;
  // Some writers put 0 (or the data page's place) for "no dictionary page"; a real one comes before the first data page.
  const start = dictionary > 0 && dictionary < data ? dictionary : data;
  return { start, length: meta.int(COLUMN_META.totalCompressedSize) ?? 0 };
}
