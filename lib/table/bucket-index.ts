/**
 * Hudi 0.15's simple bucket index, as pure functions: which bucket a record key hashes to (BucketIdentifier), the
 * file id of a bucket's new file group (SparkBucketIndexPartitioner.getBucketInfo, then the create handle's `-0`), and
 * the write settings it reads (HoodieIndexConfig). Neither setting is kept in hoodie.properties in table version 6: a
 * writer names them, and every writer of a table must name the same ones.
 */
import { defineKey, javaInt, optionalText, rawValue, readKey } from '../config/index.js';
import { HudiError } from '../errors.js';

/**
 * File ids whose 8 leading digits are below this are a bucket's (lib/table/layouts.ts's bucketNumberOf): kept low so a
 * random UUID (8 hex digits first) almost never passes for one. So a write names at most this many buckets: a bucket
 * beyond it would start a file group no reader here takes for a bucket's (and past 10^8 not even Hudi's 8 digits).
 */
export const MAX_RECOGNISED_BUCKETS = 65_536;

export const BUCKET_INDEX_KEYS = {
  numBuckets: defineKey({
    key: 'hoodie.bucket.index.num.buckets',
    default: undefined as number | undefined,
    parser: javaInt(1, MAX_RECOGNISED_BUCKETS),
    description:
      "the bucket index's buckets per partition; required for writes to a simple bucket-index table, and for the consistent-hashing engine's first ring of a partition (Hudi's default of 256 is not assumed: the table does not record it)",
  }),
  hashField: defineKey({
    key: 'hoodie.bucket.index.hash.field',
    default: undefined,
    parser: optionalText,
    description: 'record key fields (a subset of them, comma-separated) whose values the bucket index hashes; default: the record key fields',
  }),
} as const;

/** A write's bucket index settings, checked against the table's record key fields. */
export interface BucketIndexSpec {
  readonly numBuckets: number;
  /** HoodieBucketIndex.indexKeyFields: the hash field split on `,` as Java's String.split does. */
  readonly hashFields: readonly string[];
}

/**
 * The settings as HoodieIndexConfig.validateBucketIndexConfig reads them: the hash field defaults to the record key
 * fields and must be a subset of them. The number of buckets must be named (see BUCKET_INDEX_KEYS).
 */
export function bucketIndexSpec(props: ReadonlyMap<string, string>, recordKeyFields: readonly string[], location: string): BucketIndexSpec {
  const numBuckets = readKey(props, BUCKET_INDEX_KEYS.numBuckets, location);
  if (numBuckets === undefined) {
    throw new HudiError(`writes to a bucket-index table need ${BUCKET_INDEX_KEYS.numBuckets.key}: Hudi does not record it in the table`, {
      location,
      fix: `set ${BUCKET_INDEX_KEYS.numBuckets.key} to the number the table was written with (every writer must use the same); nothing was written`,
    });
  }
  return { numBuckets, hashFields: bucketHashFields(props, recordKeyFields, location) };
}

/** HoodieBucketIndex.indexKeyFields as HoodieIndexConfig.validateBucketIndexConfig checks it (both bucket engines). */
export function bucketHashFields(props: ReadonlyMap<string, string>, recordKeyFields: readonly string[], location: string): string[] {
  const given = rawValue(props, BUCKET_INDEX_KEYS.hashField)?.text;
  const text = given === undefined || given === '' ? recordKeyFields.join(',') : given;
  const hashFields = javaSplit(text, ',');
  const missing = hashFields.filter((field) => !recordKeyFields.includes(field));
  if (missing.length > 0) {
    throw new HudiError(
      `${BUCKET_INDEX_KEYS.hashField.key}=${text} names ${missing.join(', ')}, not a record key field (${recordKeyFields.join(', ')}); Hudi refuses it too ("Bucket index key (if configured) must be subset of record key.")`,
      { location, fix: `name record key fields only, or leave ${BUCKET_INDEX_KEYS.hashField.key} unset to hash the whole record key; nothing was written` },
    );
  }
  return hashFields;
}

/** Java's String.hashCode: 31-based over UTF-16 code units, in 32-bit arithmetic. */
export function javaStringHashCode(value: string): number {
  let hash = 0;
  for (let i = 0; i < value.length; i++) hash = (Math.imul(hash, 31) + value.charCodeAt(i)) | 0;
  return hash;
}

/** Java's List.hashCode over strings (null hashes to 0). */
function javaListHashCode(values: readonly (string | null)[]): number {
  let hash = 1;
  for (const value of values) hash = (Math.imul(hash, 31) + (value === null ? 0 : javaStringHashCode(value))) | 0;
  return hash;
}

/**
 * Java's String.split with a one-character literal separator and no limit: trailing empty strings are dropped, and a
 * string without the separator is itself (an empty string splits into one empty string).
 */
function javaSplit(value: string, separator: string): string[] {
  const parts = value.split(separator);
  if (parts.length === 1) return parts;
  while (parts.length > 0 && parts.at(-1) === '') parts.pop();
  return parts;
}

/** Java's split(separator, 2). */
function splitOnce(value: string, separator: string): string[] {
  const at = value.indexOf(separator);
  return at < 0 ? [value] : [value.slice(0, at), value.slice(at + separator.length)];
}

/**
 * BucketIdentifier.getHashKeys: a record key without `:` is hashed whole; a complex key (`f1:v1,f2:v2`) gives the
 * values of the hash fields (KeyGenUtils.extractRecordKeysByFields, its null and empty placeholders included).
 */
export function hashKeysOf(recordKey: string, hashFields: readonly string[]): (string | null)[] {
  if (!recordKey.includes(':')) return [recordKey];
  return javaSplit(recordKey, ',')
    .map((part) => splitOnce(part, ':'))
    .filter((kv) => kv.length === 1 || hashFields.length === 0 || hashFields.includes(kv[0]!))
    .map((kv) => (kv.length === 1 ? kv[0]! : kv[1] === '__null__' ? null : kv[1] === '__empty__' ? '' : kv[1]!));
}

/** BucketIdentifier.getBucketId: (hashKeys.hashCode() & Integer.MAX_VALUE) % numBuckets. */
export function bucketIdOf(recordKey: string, spec: BucketIndexSpec): number {
  return (javaListHashCode(hashKeysOf(recordKey, spec.hashFields)) & 0x7fffffff) % spec.numBuckets;
}

/** BucketIdentifier.bucketIdStr: the bucket number in 8 digits. */
export function bucketIdStr(bucket: number): string {
  return String(bucket).padStart(8, '0');
}

/**
 * A new bucket's file id: BucketIdentifier.newBucketFileIdPrefix (a random UUID whose first 8 characters are the bucket
 * number) and the create handle's file index `-0` (CopyOnWriteInsertHandler.getNextFileId).
 */
export function newBucketFileId(bucket: number, uuid: string): string {
  return `${bucketIdStr(bucket)}${uuid.slice(8)}-0`;
}
