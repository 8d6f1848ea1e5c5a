/**
 * What the metadata table needs from a new base file's Parquet footer: its column ranges and Hudi's bloom filter.
 * Read from a local copy when the writer still has one, else from storage with two ranged reads.
 */
import { open } from 'node:fs/promises';
import { BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY } from '../base-file/bloom-filter.js';
import { HudiError } from '../errors.js';
import { footerKeyValues, readFileFooter } from '../parquet/footer.js';
import { CompactReader, type ThriftStruct } from '../parquet/thrift.js';
import type { Storage } from '../storage/port.js';

const MAGIC = 'PAR1';

/** The FileMetaData of a local Parquet file. */
export async function readLocalFooter(localPath: string): Promise<ThriftStruct> {
  const handle = await open(localPath, 'r');
  try {
    return (await readFileFooter(handle, localPath)).metadata;
  } finally {
    await handle.close();
  }
}

/** The FileMetaData of a Parquet object on storage (`size` when known saves a HEAD). */
export async function readStoredFooter(storage: Storage, path: string, size?: number): Promise<ThriftStruct> {
  const length = size ?? (await storage.head(path))?.size;
  const location = storage.uriOf(path);
  if (length === undefined) throw new HudiError('the base file is missing', { location, fix: 'the commit names a file that is not there' });
  if (length < 12) throw new HudiError(`not a Parquet file: ${length} bytes`, { location });
  const tail = Buffer.from(await storage.getRange(path, length - 8, length));
  if (tail.subarray(4).toString('latin1') !== MAGIC) throw new HudiError('not a Parquet file: no PAR1 at the end', { location });
  const footerLength = tail.readUInt32LE(0);
  if (footerLength + 12 > length) throw new HudiError(`Parquet footer length ${footerLength} exceeds the file`, { location });
  const footer = await storage.getRange(path, length - 8 - footerLength, length - 8);
  return new CompactReader(footer).readStruct();
}

/** Hudi's bloom filter of a base file (the footer's serialized filter and type code; SIMPLE when no code). */
export function footerBloomFilter(metadata: ThriftStruct): { typeCode: string; serialized: string } | undefined {
  const keyValues = footerKeyValues(metadata);
  const serialized = keyValues.get(BLOOM_FILTER_FOOTER_KEY) ?? keyValues.get('com.uber.hoodie.bloomfilter');
  if (serialized === undefined) return undefined;
  const typeCode = keyValues.get(BLOOM_FILTER_TYPE_CODE_FOOTER_KEY);
  return { serialized: Buffer.from(serialized).toString('utf8'), typeCode: typeCode === undefined ? 'SIMPLE' : Buffer.from(typeCode).toString('utf8') };
}
