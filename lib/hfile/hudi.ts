/**
 * Hudi's two uses of HFile, with the entries Hudi 0.15 puts around the cells: base files of the metadata table
 * (`HoodieAvroHFileWriter`: cells sorted by record key, no duplicates; file info `schema`, `minRecordKey`,
 * `maxRecordKey`, `bloomFilterTypeCode`; a meta block `bloomFilter`), and HFile data blocks of log files
 * (`HoodieHFileDataBlock`: a whole HFile with the same cells and only `schema` in its file info). Values are Avro
 * binary records written with the record-key field set to "" (Hudi's readers put the row's key back). Both writers
 * use GZ and 1 MiB blocks by default; Hudi 0.15's reader reads single-level block indexes only, all this module writes.
 */

import type { SupportedCompression } from './block.js';
import { compareBytes, utf8Bytes, utf8String } from './bytes.js';
import { HFileWriteError } from './errors.js';
import { type HFile, type ReadHFileOptions, readHFile } from './reader.js';
import { type HFileWriteOptions, writeHFile, writeHFilePartsAsync } from './writer.js';

export const HudiFileInfoKey = {
  SCHEMA: 'schema',
  MIN_RECORD_KEY: 'minRecordKey',
  MAX_RECORD_KEY: 'maxRecordKey',
  BLOOM_FILTER_TYPE_CODE: 'bloomFilterTypeCode',
} as const;
/** The meta block name of a base file's bloom filter. */
export const HUDI_BLOOM_FILTER_META_BLOCK = 'bloomFilter';

export interface HudiHFileRecord {
  key: string;
  /** Avro binary of the record (with its key field emptied, as Hudi writes it). */
  value: Uint8Array;
}

/** A bloom filter as Hudi stores it: its type code (`DYNAMIC_V0`, `SIMPLE`) and `serializeToString()` text. */
export interface HudiHFileBloomFilter {
  typeCode: string;
  serialized: string;
}

export interface HudiHFileWriteOptions {
  /** The Avro schema the values are written with, as JSON text (`Schema.toString()`). */
  schema: string;
  compression?: SupportedCompression;
  /** zlib level of GZ blocks (default zlib's). */
  gzipLevel?: number;
  /** zlib's strategy for GZ blocks (default zlib's default). */
  gzipStrategy?: 'default' | 'run-length';
  blockSize?: number;
}

export interface HudiBaseHFileWriteOptions extends HudiHFileWriteOptions {
  /** The bloom filter of the file's record keys: Hudi's HFile base-file writer always writes one. */
  bloomFilter: HudiHFileBloomFilter;
}

function sortedRecords(records: Iterable<HudiHFileRecord>): Array<HudiHFileRecord & { row: Uint8Array }> {
  return [...records].map((record) => ({ ...record, row: utf8Bytes(record.key) })).sort((a, b) => compareBytes(a.row, b.row));
}

/**
 * A metadata-table base file (`<fileId>_<writeToken>_<instant>.hfile`) as Hudi 0.15 writes it. Records may come in any order.
 *
 * As in Spark-written metadata tables (Hudi 0.15): the `schema` is HoodieMetadataRecord's behind the five `_hoodie_*`
 * meta fields; `_hoodie_file_name` holds the base file's own name (null in log blocks) and the other meta fields are
 * null; the `bloomFilter` meta block holds the UTF-8 of the filter's `serializeToString()`, with Hudi's defaults
 * (60000 entries, fpp 1e-9, DYNAMIC_V0, max 100000).
 */
export function writeHudiBaseHFile(records: Iterable<HudiHFileRecord>, options: HudiBaseHFileWriteOptions): Uint8Array {
  const sorted = sortedRecords(records);
  let previous: Uint8Array | undefined;
  for (const { row, key } of sorted) {
    if (previous !== undefined && compareBytes(previous, row) === 0) {
      throw new HFileWriteError(`duplicate record key ${JSON.stringify(key)} in an HFile base file`, {
        fix: 'merge the records of each key before writing',
      });
    }
    previous = row;
  }
  return writeHFile(
    sorted.map(({ row, value }) => ({ key: row, value })),
    {
      ...(options.compression ? { compression: options.compression } : {}),
      ...(options.gzipLevel === undefined ? {} : { gzipLevel: options.gzipLevel }),
      ...(options.gzipStrategy === undefined ? {} : { gzipStrategy: options.gzipStrategy }),
      ...(options.blockSize ? { blockSize: options.blockSize } : {}),
      fileInfo: {
        [HudiFileInfoKey.SCHEMA]: options.schema,
        [HudiFileInfoKey.MIN_RECORD_KEY]: sorted[0]?.key ?? '',
        [HudiFileInfoKey.MAX_RECORD_KEY]: sorted.at(-1)?.key ?? '',
        [HudiFileInfoKey.BLOOM_FILTER_TYPE_CODE]: options.bloomFilter.typeCode,
      },
      metaBlocks: [{ name: HUDI_BLOOM_FILTER_META_BLOCK, payload: utf8Bytes(options.bloomFilter.serialized) }],
    },
  );
}

/** The content of an HFile data block for a log file, as Hudi 0.15 serializes it. Keys may repeat. */
export function writeHudiLogBlockHFile(records: Iterable<HudiHFileRecord>, options: HudiHFileWriteOptions): Uint8Array {
  return writeHFile(logBlockCells(records), logBlockOptions(options));
}

/**
 * writeHudiLogBlockHFile of `records` with values `encode(record)`, the same bytes as parts in order (not joined: a
 * log file copies them into itself), made with less at once: each value is encoded as its cell is written, and the
 * blocks are compressed off the main thread (writeHFilePartsAsync, `blocksInFlight` at once).
 */
export function writeHudiLogBlockHFileAsync<T extends { readonly key: string }>(
  records: readonly T[],
  encode: (record: T) => Uint8Array | readonly Uint8Array[],
  options: HudiHFileWriteOptions,
  blocksInFlight?: number,
): Promise<Uint8Array[]> {
  const sorted = sortedByKey(records);
  function* cells(): Generator<{ key: string; value: Uint8Array | readonly Uint8Array[] }> {
    for (const record of sorted) yield { key: record.key, value: encode(record) };
  }
  return writeHFilePartsAsync(cells(), logBlockOptions(options), blocksInFlight);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Records in the order sortedRecords gives (by the UTF-8 bytes of their keys; stable, so repeated keys keep their
 * order). Without surrogates, UTF-16 order is code point order, which is UTF-8 byte order: the keys then compare as
 * strings, without encoding each one first.
 */
function sortedByKey<T extends { readonly key: string }>(records: readonly T[]): T[] {
  if (!records.some((record) => SURROGATE.test(record.key))) return [...records].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return records
    .map((record) => ({ record, row: utf8Bytes(record.key) }))
    .sort((a, b) => compareBytes(a.row, b.row))
    .map(({ record }) => record);
}

function logBlockCells(records: Iterable<HudiHFileRecord>): Array<{ key: Uint8Array; value: Uint8Array }> {
  return sortedRecords(records).map(({ row, value }) => ({ key: row, value }));
}

function logBlockOptions(options: HudiHFileWriteOptions): HFileWriteOptions {
  return {
    ...(options.compression ? { compression: options.compression } : {}),
    ...(options.gzipLevel === undefined ? {} : { gzipLevel: options.gzipLevel }),
    ...(options.gzipStrategy === undefined ? {} : { gzipStrategy: options.gzipStrategy }),
    ...(options.blockSize ? { blockSize: options.blockSize } : {}),
    fileInfo: { [HudiFileInfoKey.SCHEMA]: options.schema },
    allowDuplicateKeys: true,
  };
}

export interface HudiHFile {
  file: HFile;
  /** The Avro writer schema (file info `schema`). */
  schema: string | undefined;
  minRecordKey: string | undefined;
  maxRecordKey: string | undefined;
  bloomFilter: HudiHFileBloomFilter | undefined;
  /** Every record, in key order, with detached value bytes. */
  records: HudiHFileRecord[];
}

/** Reads a Hudi HFile (base file or log-block content): its Hudi file info, bloom filter and records. */
export function readHudiHFile(bytes: Uint8Array, options: ReadHFileOptions = {}): HudiHFile {
  const file = readHFile(bytes, options);
  const bloom = file.metaBlock(HUDI_BLOOM_FILTER_META_BLOCK);
  const typeCode = file.fileInfo.getString(HudiFileInfoKey.BLOOM_FILTER_TYPE_CODE);
  const records: HudiHFileRecord[] = [];
  for (const cell of file.cells()) records.push({ key: cell.key, value: cell.value.slice() });
  return {
    file,
    schema: file.fileInfo.getString(HudiFileInfoKey.SCHEMA),
    minRecordKey: file.fileInfo.getString(HudiFileInfoKey.MIN_RECORD_KEY),
    maxRecordKey: file.fileInfo.getString(HudiFileInfoKey.MAX_RECORD_KEY),
    bloomFilter: bloom === undefined || typeCode === undefined ? undefined : { typeCode, serialized: utf8String(bloom) },
    records,
  };
}
