/**
 * The Parquet footer key/values Hudi writes into every base file: bloom filter of record keys, min/max record key,
 * and the Avro schema (with meta fields) the file was written with.
 */

import { isChunked } from '../util/chunked.js';
import {
  BLOOM_FILTER_FOOTER_KEY,
  BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
  type BloomFilterOptions,
  createBloomFilter,
  HoodieBloomFilter,
  MAX_RECORD_KEY_FOOTER_KEY,
  MIN_RECORD_KEY_FOOTER_KEY,
} from './bloom-filter.js';

export const AVRO_SCHEMA_FOOTER_KEY = 'parquet.avro.schema';

type FooterOptions = { bloom?: Partial<BloomFilterOptions>; populateMetaFields?: boolean };

/**
 * Footer key/values for a base file holding `recordKeys` (any order). Min/max compare as Java's String.compareTo
 * (UTF-16 code units), which is how JavaScript compares strings too. Tables without meta fields get no bloom filter.
 */
export function hudiFooter(recordKeys: Iterable<string>, avroSchemaWithMetaFields: string, options: FooterOptions = {}): Record<string, string> {
  const footer = new FooterOfKeys(avroSchemaWithMetaFields, options);
  for (const keys of keyArrays(recordKeys)) footer.addAll(keys, 0, keys.length);
  return footer.keyValues();
}

/** Keys hashed between two turns of the event loop (about 3 ms). */
const KEYS_PER_TURN = 8192;

/**
 * {@link hudiFooter}, giving the event loop a turn every few thousand keys: hashing a file group's keys while DuckDB
 * writes others must not hold up what those writes do next (their footers, uploads, the next COPY).
 */
export async function hudiFooterInTurns(
  recordKeys: Iterable<string>,
  avroSchemaWithMetaFields: string,
  options: FooterOptions = {},
): Promise<Record<string, string>> {
  const footer = new FooterOfKeys(avroSchemaWithMetaFields, options);
  for (const keys of keyArrays(recordKeys)) {
    for (let start = 0; start < keys.length; start += KEYS_PER_TURN) {
      footer.addAll(keys, start, Math.min(keys.length, start + KEYS_PER_TURN));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return footer.keyValues();
}

/** The keys as arrays to loop over: an array as it is, chunked values by their chunks, any other iterable in arrays of KEYS_PER_TURN. */
function* keyArrays(recordKeys: Iterable<string>): Generator<readonly string[]> {
  if (Array.isArray(recordKeys)) {
    yield recordKeys as readonly string[];
    return;
  }
  if (isChunked(recordKeys)) {
    yield* recordKeys.chunks();
    return;
  }
  let batch: string[] = [];
  for (const key of recordKeys) {
    batch.push(key);
    if (batch.length === KEYS_PER_TURN) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** The bloom filter and key range of keys added in order (the bloom filter takes them two at a time). */
class FooterOfKeys {
  readonly #schema: string;
  readonly #bloom: HoodieBloomFilter | undefined;
  #min: string | undefined;
  #max: string | undefined;
  #pending: string | undefined;

  constructor(avroSchemaWithMetaFields: string, options: FooterOptions) {
    this.#schema = avroSchemaWithMetaFields;
    this.#bloom = options.populateMetaFields === false ? undefined : createBloomFilter(options.bloom);
  }

  /** keys[start..end), as one add each, in an index loop. */
  addAll(keys: readonly string[], start: number, end: number): void {
    const bloom = this.#bloom;
    if (bloom === undefined || start >= end) return;
    let min = this.#min ?? keys[start]!;
    let max = this.#max ?? keys[start]!;
    let at = start;
    if (this.#pending !== undefined) {
      bloom.addPair(this.#pending, keys[at]!);
      this.#pending = undefined;
      at++;
    }
    for (; at + 1 < end; at += 2) bloom.addPair(keys[at]!, keys[at + 1]!);
    if (at < end) this.#pending = keys[at];
    for (let i = start; i < end; i++) {
      const key = keys[i]!;
      if (key < min) min = key;
      else if (key > max) max = key;
    }
    this.#min = min;
    this.#max = max;
  }

  keyValues(): Record<string, string> {
    const footer: Record<string, string> = { [AVRO_SCHEMA_FOOTER_KEY]: this.#schema, 'writer.model.name': 'avro' };
    const bloom = this.#bloom;
    if (bloom === undefined) return footer;
    if (this.#pending !== undefined) bloom.add(this.#pending);
    this.#pending = undefined;
    footer[BLOOM_FILTER_FOOTER_KEY] = bloom.serialize();
    footer[BLOOM_FILTER_TYPE_CODE_FOOTER_KEY] = bloom.typeCode;
    if (this.#min !== undefined && this.#max !== undefined) {
      footer[MIN_RECORD_KEY_FOOTER_KEY] = this.#min;
      footer[MAX_RECORD_KEY_FOOTER_KEY] = this.#max;
    }
    return footer;
  }
}

/** The Hudi footer values of one input file, as binary copy merges them. */
export interface HudiFooterValues {
  readonly bloomFilter: string | undefined;
  readonly bloomFilterType: string | undefined;
  readonly minRecordKey: string | undefined;
  readonly maxRecordKey: string | undefined;
}

export const HUDI_FOOTER_KEYS = [BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY] as const;

/** The footer values of a file from its key/value metadata. */
export function hudiFooterValues(keyValues: ReadonlyMap<string, string>): HudiFooterValues {
  return {
    bloomFilter: keyValues.get(BLOOM_FILTER_FOOTER_KEY),
    // Hudi reads a filter without a type code as SIMPLE (BloomFilterFactory.fromString with a null code).
    bloomFilterType: keyValues.get(BLOOM_FILTER_TYPE_CODE_FOOTER_KEY) ?? (keyValues.has(BLOOM_FILTER_FOOTER_KEY) ? 'SIMPLE' : undefined),
    minRecordKey: keyValues.get(MIN_RECORD_KEY_FOOTER_KEY),
    maxRecordKey: keyValues.get(MAX_RECORD_KEY_FOOTER_KEY),
  };
}

/**
 * The footer of a file made of (some of) the rows of files with these footers, without reading a key: Hudi's
 * HoodieFileMetadataMerger, which binary copy uses. The key range is the union of the inputs' ranges and the bloom
 * filter their union (HoodieBloomFilter.union), so every key of the file passes both, as Hudi's bloom index needs;
 * for a file holding part of an input's rows both are wider than the keys, which costs false positives only.
 * Undefined, with the reason, when an input lacks a filter or key range or the filters cannot be merged: the
 * caller then builds the footer from the keys.
 */
export function mergedHudiFooter(
  inputs: readonly HudiFooterValues[],
  avroSchemaWithMetaFields: string,
  options: { maxEntries?: number } = {},
): { footer: Record<string, string>; passRate: number; reason?: undefined } | { footer?: undefined; reason: string } {
  const filters: HoodieBloomFilter[] = [];
  let min: string | undefined;
  let max: string | undefined;
  for (const [index, input] of inputs.entries()) {
    if (input.bloomFilter === undefined || input.minRecordKey === undefined || input.maxRecordKey === undefined) {
      return { reason: `input ${index} has no ${input.bloomFilter === undefined ? 'bloom filter' : 'record key range'} in its footer` };
    }
    if (input.bloomFilterType !== 'DYNAMIC_V0' && input.bloomFilterType !== 'SIMPLE')
      return { reason: `input ${index} has a bloom filter of type ${String(input.bloomFilterType)}` };
    try {
      filters.push(HoodieBloomFilter.deserialize(input.bloomFilter, input.bloomFilterType));
    } catch (error) {
      return { reason: `input ${index}'s bloom filter does not read: ${(error as Error).message}` };
    }
    if (min === undefined || input.minRecordKey < min) min = input.minRecordKey;
    if (max === undefined || input.maxRecordKey > max) max = input.maxRecordKey;
  }
  const bloom = HoodieBloomFilter.union(filters, options.maxEntries);
  if (bloom === undefined || min === undefined || max === undefined) return { reason: "the inputs' bloom filters differ in size or hash count" };
  return {
    passRate: bloom.passRate(),
    footer: {
      [AVRO_SCHEMA_FOOTER_KEY]: avroSchemaWithMetaFields,
      'writer.model.name': 'avro',
      [BLOOM_FILTER_FOOTER_KEY]: bloom.serialize(),
      [BLOOM_FILTER_TYPE_CODE_FOOTER_KEY]: bloom.typeCode,
      [MIN_RECORD_KEY_FOOTER_KEY]: min,
      [MAX_RECORD_KEY_FOOTER_KEY]: max,
    },
  };
}
