/**
 * What the metadata table needs from a new base file's Parquet footer: its column ranges and Hudi's bloom filter.
 * Read from a local copy when the writer still has one, else from storage with two ranged reads.
 */
import { isUtf8 } from 'node:buffer';
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

/**
 * How much of an object's end one read takes, hoping the footer is in it: Hudi's default bloom filter (60,000
 * entries at 1e-9, DYNAMIC_V0) alone is about 430 KB of footer. A larger footer takes a second read.
 */
const FOOTER_TAIL_GUESS = 512 * 1024;

/** The FileMetaData of a Parquet object on storage (`size` when known saves a HEAD), in one ranged read mostly. */
export async function readStoredFooter(storage: Storage, path: string, size?: number): Promise<ThriftStruct> {
  const length = size ?? (await storage.head(path))?.size;
  const location = storage.uriOf(path);
  if (length === undefined) throw new HudiError('the base file is missing', { location, fix: 'the commit names a file that is not there' });
  if (length < 12) throw new HudiError(`not a Parquet file: ${length} bytes`, { location });
  const tailStart = Math.max(0, length - FOOTER_TAIL_GUESS);
  const tail = Buffer.from(await storage.getRange(path, tailStart, length));
  if (tail.length !== length - tailStart)
    throw new HudiError(`read ${tail.length} bytes of the file's last ${length - tailStart}: it changed size`, { location });
  if (tail.subarray(tail.length - 4).toString('latin1') !== MAGIC) throw new HudiError('not a Parquet file: no PAR1 at the end', { location });
  const footerLength = tail.readUInt32LE(tail.length - 8);
  if (footerLength + 12 > length) throw new HudiError(`Parquet footer length ${footerLength} exceeds the file`, { location });
  const footerStart = length - 8 - footerLength;
  const footer =
    footerStart >= tailStart
      ? tail.subarray(footerStart - tailStart, tail.length - 8)
      : Buffer.concat([await storage.getRange(path, footerStart, tailStart), tail.subarray(0, tail.length - 8)]);
  return new CompactReader(footer).readStruct();
}

/** Hudi's bloom filter of a base file (the footer's serialized filter and type code; SIMPLE when no code). */
export function footerBloomFilter(metadata: ThriftStruct): { typeCode: string; serialized: string } | undefined {
  const bloom = footerBloomFilterBytes(metadata);
  return bloom === undefined ? undefined : { typeCode: bloom.typeCode, serialized: Buffer.from(bloom.bytes).toString('utf8') };
}

/**
 * footerBloomFilter with the filter as the UTF-8 bytes of its text, what the metadata table stores: the footer's
 * own bytes when they are UTF-8 (decoding and encoding them again gives the same bytes), else those of the decoded
 * text. A filter is hundreds of KB; a large commit has thousands.
 */
export function footerBloomFilterBytes(metadata: ThriftStruct): { typeCode: string; bytes: Uint8Array } | undefined {
  const keyValues = footerKeyValues(metadata);
  const serialized = keyValues.get(BLOOM_FILTER_FOOTER_KEY) ?? keyValues.get('com.uber.hoodie.bloomfilter');
  if (serialized === undefined) return undefined;
  const typeCode = keyValues.get(BLOOM_FILTER_TYPE_CODE_FOOTER_KEY);
  return {
    bytes: isUtf8(serialized) ? serialized : new TextEncoder().encode(Buffer.from(serialized).toString('utf8')),
    typeCode: typeCode === undefined ? 'SIMPLE' : Buffer.from(typeCode).toString('utf8'),
  };
}
