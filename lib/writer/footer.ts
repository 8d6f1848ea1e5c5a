/**
 * The Parquet footer key/values Hudi writes into every base file: bloom filter of record keys, min/max record key,
 * and the Avro schema (with meta fields) the file was written with.
 */
import {
  BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY,
  createBloomFilter, type BloomFilterOptions,
} from './bloom-filter.js';

export const AVRO_SCHEMA_FOOTER_KEY = 'parquet.avro.schema';

/**
 * Footer key/values for a base file holding `recordKeys` (any order). Min/max compare as Java's String.compareTo
 * (UTF-16 code units), which is how JavaScript compares strings too. Tables without meta fields get no bloom filter.
 */
export function hudiFooter(recordKeys: Iterable<string>, avroSchemaWithMetaFields: string, options: { bloom?: Partial<BloomFilterOptions>; populateMetaFields?: boolean } = {}): Record<string, string> {
  const footer: Record<string, string> = { [AVRO_SCHEMA_FOOTER_KEY]: avroSchemaWithMetaFields, 'writer.model.name': 'avro' };
  if (options.populateMetaFields === false) return footer;
  const bloom = createBloomFilter(options.bloom);
  let min: string | undefined;
  let max: string | undefined;
  for (const key of recordKeys) {
    bloom.add(key);
    if (min === undefined || key < min) min = key;
    if (max === undefined || key > max) max = key;
  }
  footer[BLOOM_FILTER_FOOTER_KEY] = bloom.serialize();
  footer[BLOOM_FILTER_TYPE_CODE_FOOTER_KEY] = bloom.typeCode;
  if (min !== undefined && max !== undefined) {
    footer[MIN_RECORD_KEY_FOOTER_KEY] = min;
    footer[MAX_RECORD_KEY_FOOTER_KEY] = max;
  }
  return footer;
}
