/**
 * Every row of a small Parquet file held in memory whose columns are all flat (top-level primitives, required or
 * optional): the footer and the pages decoded here, without DuckDB. Hudi 1.x's timeline history files are such
 * files (one row per archived instant), and the timeline layer may not reach the engine. Pages are decoded by
 * column-chunk.ts; what it does not decode throws UnsupportedChunkError, turned here into a HudiError naming the
 * file.
 */
import { HudiError } from '../errors.js';
import { type ChunkValue, decodeFlatChunk, UnsupportedChunkError } from './column-chunk.js';
import { COLUMN_META, chunkMetaData, chunkPageRange, FILE_METADATA, leafChunkIndexes } from './metadata-fields.js';
import { columnInfosFromSchemaElements, type ParquetColumnInfo } from './schema.js';
import { CompactReader, isStruct, ThriftList, type ThriftStruct } from './thrift.js';

const MAGIC = Buffer.from('PAR1', 'latin1');

export interface FlatRows {
  /** The schema's columns, in order (all leaves: a nested column is refused). */
  readonly columns: readonly ParquetColumnInfo[];
  readonly numRows: number;
  /** Each column's values by name, one per row (null for a null). */
  readonly values: ReadonlyMap<string, readonly ChunkValue[]>;
  /** The footer's key/value metadata as text. */
  readonly keyValues: ReadonlyMap<string, string>;
}

const FIX = 'the file is truncated or was not written by a Parquet writer; restore it from a backup';

/** Decode every row of the Parquet file `bytes`; `location` names it in errors. */
export function readFlatRows(bytes: Uint8Array, location: string): FlatRows {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 12) throw unreadable(location, `${buffer.length} bytes are too few for a Parquet file`);
  if (!buffer.subarray(0, 4).equals(MAGIC) || !buffer.subarray(buffer.length - 4).equals(MAGIC)) {
    throw unreadable(location, 'no Parquet magic at its start and end');
  }
  const footerLength = buffer.readUInt32LE(buffer.length - 8);
  const footerStart = buffer.length - 8 - footerLength;
  if (footerStart < MAGIC.length) throw unreadable(location, `footer length ${footerLength} is larger than the file`);
  let metadata: ThriftStruct;
  try {
    metadata = new CompactReader(buffer.subarray(footerStart, buffer.length - 8)).readStruct();
  } catch (cause) {
    throw unreadable(location, `its footer does not decode: ${(cause as Error).message}`, cause);
  }
  const elements = metadata.list(FILE_METADATA.schema);
  const columns = columnInfosFromSchemaElements(elements instanceof ThriftList ? elements.items.filter(isStruct) : []);
  const nested = columns.find((column) => column.numChildren > 0 || column.repetition === 'REPEATED');
  if (nested !== undefined) {
    throw new HudiError(`column ${nested.name} is nested or repeated; only flat columns are read here`, { location, fix: FIX });
  }

  const numRows = Number(metadata.bigint(FILE_METADATA.numRows) ?? 0n);
  const indexes = leafChunkIndexes(columns);
  const values = new Map<string, ChunkValue[]>(columns.map((column) => [column.name, []]));
  const rowGroups = metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? [];
  for (const [groupIndex, rowGroup] of rowGroups.entries()) {
    for (const column of columns) {
      const chunkIndex = indexes.get(column.name);
      const meta = chunkIndex === undefined ? undefined : chunkMetaData(rowGroup, chunkIndex);
      const columnValues = values.get(column.name);
      if (meta === undefined || columnValues === undefined || column.physicalType === undefined) {
        throw unreadable(location, `row group ${groupIndex} has no chunk metadata for column ${column.name}`);
      }
      const { start, length } = chunkPageRange(meta);
      if (start < MAGIC.length || start + length > footerStart) {
        throw unreadable(location, `column ${column.name}'s chunk in row group ${groupIndex} lies outside the file's pages`);
      }
      const chunk = { codec: meta.int(COLUMN_META.codec) ?? -1, offset: start, length, numValues: meta.int(COLUMN_META.numValues) ?? 0 };
      try {
        decodeFlatChunk(
          buffer.subarray(start, start + length),
          chunk,
          { physicalType: column.physicalType, optional: column.repetition === 'OPTIONAL' },
          columnValues,
        );
      } catch (cause) {
        if (!(cause instanceof UnsupportedChunkError)) throw cause;
        throw new HudiError(`column ${column.name} in row group ${groupIndex} is not decodable here: ${cause.message}`, { location, fix: FIX, cause });
      }
    }
  }
  for (const [name, decoded] of values) {
    if (decoded.length !== numRows) throw unreadable(location, `column ${name} holds ${decoded.length} values where the footer counts ${numRows} rows`);
  }

  const keyValues = new Map<string, string>();
  for (const entry of metadata.list(FILE_METADATA.keyValueMetadata)?.items.filter(isStruct) ?? []) {
    const key = entry.binary(1);
    const value = entry.binary(2);
    if (key !== undefined) keyValues.set(Buffer.from(key).toString('utf8'), value === undefined ? '' : Buffer.from(value).toString('utf8'));
  }
  return { columns, numRows, values, keyValues };
}

function unreadable(location: string, problem: string, cause?: unknown): HudiError {
  return new HudiError(`not a readable Parquet file: ${problem}`, { location, fix: FIX, ...(cause === undefined ? {} : { cause }) });
}
