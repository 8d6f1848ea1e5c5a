/**
 * Write settings, from Hudi's own keys with Hudi's defaults (HoodieStorageConfig, HoodieCompactionConfig, HoodieWriteConfig).
 */

import { BLOOM_FILTER_KEYS } from '../base-file/bloom-filter.js';
import { bool, type ConfigKey, decimalNumber, defineKey, javaInt, javaLong, oneOf, optionalText, rawValue, readKey } from '../config/index.js';
import { HudiError } from '../errors.js';
import { LOCK_KEYS } from '../lock/keys.js';
import { FAILED_WRITES_POLICY } from '../rollback/failed-writes.js';
import { BUCKET_INDEX_KEYS } from '../table/bucket-index.js';
import { INDEX_TYPE } from '../table/layouts.js';
import { PAYLOAD_CLASS, TABLE_PAYLOAD_CLASS_KEY } from '../table/payload.js';
import { REJECT_UPDATE_STRATEGY, UPDATES_STRATEGY } from '../table/updates-strategy.js';

export type WriteOperation = 'bulk_insert' | 'insert' | 'upsert' | 'delete';
export const WRITE_OPERATIONS: readonly WriteOperation[] = ['bulk_insert', 'insert', 'upsert', 'delete'];

/** Hudi's BulkInsertSortMode values. */
export const BULK_INSERT_SORT_MODES = ['NONE', 'GLOBAL_SORT', 'PARTITION_SORT', 'PARTITION_PATH_REPARTITION', 'PARTITION_PATH_REPARTITION_AND_SORT'] as const;
export type BulkInsertSortMode = (typeof BULK_INSERT_SORT_MODES)[number];

/** Whether a bulk_insert sort mode orders each file's records by key (else they keep the input's order). */
export function bulkInsertSortsByKey(mode: BulkInsertSortMode): boolean {
  return mode !== 'NONE' && mode !== 'PARTITION_PATH_REPARTITION';
}

export interface WriteConfig {
  readonly smallFileLimit: number;
  readonly maxFileSize: number;
  readonly recordSizeEstimate: number;
  readonly recordSizeEstimationThreshold: number;
  readonly insertAutoSplit: boolean;
  readonly insertSplitSize: number;
  /** Parquet row group size in bytes (hoodie.parquet.block.size). */
  readonly parquetBlockSize: number;
  /** hoodie.bulkinsert.sort.mode (bulk_insert only). */
  readonly bulkInsertSortMode: BulkInsertSortMode;
  readonly combineBeforeInsert: boolean;
  readonly combineBeforeUpsert: boolean;
  readonly combineBeforeDelete: boolean;
  /** hoodie.clustering.updates.strategy: reject (Hudi's default) refuses updates to file groups in pending clustering. */
  readonly rejectUpdatesDuringClustering: boolean;
  readonly lockWaitMs: number;
  /**
   * The payload class the writer asked for (hoodie.datasource.write.payload.class, else hoodie.compaction.payload.class
   * in the write properties); undefined leaves it to the table (resolveRecordPayload).
   */
  readonly payloadClass: string | undefined;
  /**
   * Table columns the input lacks: refused (Hudi's default) or stored as NULL, with
   * hoodie.write.set.null.for.missing.columns or hoodie.datasource.write.reconcile.schema.
   */
  readonly missingColumns: 'refuse' | 'null';
  /** hoodie.write.schema.allow.auto.evolution.column.drop: always false (true is refused when parsed). */
  readonly allowColumnDrop: false;
  /** An input without records still makes a commit (hoodie.allow.empty.commit, default true as in Hudi). */
  readonly allowEmptyCommit: boolean;
  /** Merge-on-read: base files per partition that may take inserts (hoodie.merge.small.file.group.candidates.limit). */
  readonly smallFileGroupCandidatesLimit: number;
  /** Merge-on-read: the data block format of log files (only avro is written). */
  readonly logDataBlockFormat: string | undefined;
  /** hoodie.index.type as given (upper case), undefined when unset. */
  readonly indexType: string | undefined;
  /** Bloom filter of record keys in each base file footer (Hudi's bloom index reads it). */
  readonly bloom: { numEntries: number; fpp: number; maxEntries: number; type: 'DYNAMIC_V0' | 'SIMPLE' };
}

export const WRITE_KEYS = {
  smallFileLimit: defineKey({
    key: 'hoodie.parquet.small.file.limit',
    default: 104857600,
    parser: javaLong(0),
    description: 'base files smaller than this receive inserts (bytes; 0 turns small-file handling off)',
  }),
  maxFileSize: defineKey({
    key: 'hoodie.parquet.max.file.size',
    default: 125829120,
    parser: javaLong(1),
    description: 'target maximum base file size (bytes)',
  }),
  recordSizeEstimate: defineKey({
    key: 'hoodie.copyonwrite.record.size.estimate',
    default: 1024,
    parser: javaInt(1),
    description: 'average record size (bytes) until a commit large enough to measure it exists',
  }),
  recordSizeEstimationThreshold: defineKey({
    key: 'hoodie.record.size.estimation.threshold',
    default: 1.0,
    parser: decimalNumber(0),
    description: 'a commit is used to measure record size when it wrote more than this × small.file.limit bytes',
  }),
  insertAutoSplit: defineKey({
    key: 'hoodie.copyonwrite.insert.auto.split',
    default: true,
    parser: bool,
    description: 'size new file groups as max.file.size / average record size records',
  }),
  insertSplitSize: defineKey({
    key: 'hoodie.copyonwrite.insert.split.size',
    default: 500000,
    parser: javaInt(1),
    description: 'records per new file group when auto split is off',
  }),
  parquetBlockSize: defineKey({ key: 'hoodie.parquet.block.size', default: 125829120, parser: javaInt(1), description: 'Parquet row group size (bytes)' }),
  bulkInsertSortMode: defineKey({
    key: 'hoodie.bulkinsert.sort.mode',
    default: 'NONE' as BulkInsertSortMode,
    parser: oneOf(BULK_INSERT_SORT_MODES),
    description:
      "bulk_insert's order of records in a file: NONE and PARTITION_PATH_REPARTITION keep the input's order (Hudi's default); " +
      'GLOBAL_SORT, PARTITION_SORT and PARTITION_PATH_REPARTITION_AND_SORT sort each file by record key (one writer task: the three sort alike)',
  }),
  combineBeforeInsert: defineKey({
    key: 'hoodie.combine.before.insert',
    default: false,
    parser: bool,
    description: 'de-duplicate records of one batch on insert / bulk_insert',
  }),
  combineBeforeUpsert: defineKey({
    key: 'hoodie.combine.before.upsert',
    default: true,
    parser: bool,
    description: 'de-duplicate records of one batch on upsert (precombine field decides)',
  }),
  combineBeforeDelete: defineKey({ key: 'hoodie.combine.before.delete', default: true, parser: bool, description: 'de-duplicate keys of one batch on delete' }),
  failedWritesPolicy: FAILED_WRITES_POLICY,
  payloadClass: PAYLOAD_CLASS,
  setNullForMissingColumns: defineKey({
    key: 'hoodie.write.set.null.for.missing.columns',
    default: false,
    parser: bool,
    description: "store NULL in table columns the input lacks (false: such an input is refused, as Hudi's MissingSchemaFieldException)",
  }),
  reconcileSchema: defineKey({
    key: 'hoodie.datasource.write.reconcile.schema',
    default: false,
    parser: bool,
    description:
      "conform the input to the table's schema: columns it lacks are stored as NULL; columns (and struct fields) it adds extend the schema, as they do without it",
  }),
  allowColumnDrop: defineKey({
    key: 'hoodie.write.schema.allow.auto.evolution.column.drop',
    default: false,
    parser: bool,
    description:
      'true would let an input without some table columns drop them from the schema (Hudi); this writer refuses the setting and never drops a column',
  }),
  allowEmptyCommit: defineKey({
    key: 'hoodie.allow.empty.commit',
    default: true,
    parser: bool,
    description: 'an input without records makes an empty commit (false: it writes nothing)',
  }),
  smallFileGroupCandidatesLimit: defineKey({
    key: 'hoodie.merge.small.file.group.candidates.limit',
    default: 1,
    parser: javaInt(0),
    description: 'merge-on-read: how many small base files (of slices without log files) per partition may take inserts; the smallest first',
  }),
  logDataBlockFormat: defineKey({
    key: 'hoodie.logfile.data.block.format',
    default: undefined,
    parser: optionalText,
    description: 'merge-on-read: the data block format of log files; this writer writes avro (the default for Parquet tables) and refuses others',
  }),
  indexType: INDEX_TYPE,
  bucketNumBuckets: BUCKET_INDEX_KEYS.numBuckets,
  bucketHashField: BUCKET_INDEX_KEYS.hashField,
  bloomNumEntries: BLOOM_FILTER_KEYS.numEntries,
  bloomFpp: BLOOM_FILTER_KEYS.fpp,
  bloomMaxEntries: BLOOM_FILTER_KEYS.maxEntries,
  bloomType: BLOOM_FILTER_KEYS.type,
} as const;

/** Keys other settings own that a write reads too (listed in the README under their owners). */
const SHARED_KEYS = { updatesStrategy: UPDATES_STRATEGY, lockWaitMs: LOCK_KEYS.waitMs } as const;

export function writeConfigFromProperties(props: ReadonlyMap<string, string>, location = 'write properties'): WriteConfig {
  const k = WRITE_KEYS;
  const read = <T>(key: ConfigKey<T>): T => readKey(props, key, location);
  return {
    smallFileLimit: read(k.smallFileLimit),
    maxFileSize: read(k.maxFileSize),
    recordSizeEstimate: read(k.recordSizeEstimate),
    recordSizeEstimationThreshold: read(k.recordSizeEstimationThreshold),
    insertAutoSplit: read(k.insertAutoSplit),
    insertSplitSize: read(k.insertSplitSize),
    parquetBlockSize: read(k.parquetBlockSize),
    bulkInsertSortMode: read(k.bulkInsertSortMode),
    combineBeforeInsert: read(k.combineBeforeInsert),
    combineBeforeUpsert: read(k.combineBeforeUpsert),
    combineBeforeDelete: read(k.combineBeforeDelete),
    rejectUpdatesDuringClustering: read(SHARED_KEYS.updatesStrategy) === REJECT_UPDATE_STRATEGY,
    lockWaitMs: read(SHARED_KEYS.lockWaitMs),
    payloadClass: rawValue(props, k.payloadClass)?.text ?? nonEmpty(props.get(TABLE_PAYLOAD_CLASS_KEY)),
    allowColumnDrop: refuseColumnDrop(read(k.allowColumnDrop), location),
    missingColumns: read(k.setNullForMissingColumns) || read(k.reconcileSchema) ? 'null' : 'refuse',
    allowEmptyCommit: read(k.allowEmptyCommit),
    smallFileGroupCandidatesLimit: read(k.smallFileGroupCandidatesLimit),
    logDataBlockFormat: read(k.logDataBlockFormat)?.trim().toLowerCase() || undefined,
    indexType: read(k.indexType)?.trim().toUpperCase() || undefined,
    bloom: { numEntries: read(k.bloomNumEntries), fpp: read(k.bloomFpp), maxEntries: read(k.bloomMaxEntries), type: read(k.bloomType) },
  };
}

/** Dropping columns by schema evolution is not something this writer does: say so rather than keep them. */
function refuseColumnDrop(allowed: boolean, location: string): false {
  if (!allowed) return false;
  throw new HudiError(`${WRITE_KEYS.allowColumnDrop.key}=true is not supported: this writer never drops a column from the table's schema`, {
    location,
    fix: `unset it (columns an input lacks are then refused, or stored as NULL with ${WRITE_KEYS.setNullForMissingColumns.key}=true), or write this batch with Hudi`,
  });
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text.trim();
}

export function parseWriteOperation(text: string | undefined): WriteOperation {
  const value = (text ?? 'upsert').trim().toLowerCase().replace('-', '_');
  if (!(WRITE_OPERATIONS as readonly string[]).includes(value)) {
    throw new HudiError(`write operation "${text}" is not supported`, { fix: `use one of ${WRITE_OPERATIONS.join(', ')} (hoodie.datasource.write.operation)` });
  }
  return value as WriteOperation;
}
