/**
 * Write settings, from Hudi's own keys with Hudi's defaults (HoodieStorageConfig, HoodieCompactionConfig, HoodieWriteConfig).
 */
import { HudiError } from '../errors.js';

export type WriteOperation = 'bulk_insert' | 'insert' | 'upsert' | 'delete';
export const WRITE_OPERATIONS: readonly WriteOperation[] = ['bulk_insert', 'insert', 'upsert', 'delete'];

export interface WriteConfig {
  readonly smallFileLimit: number;
  readonly maxFileSize: number;
  readonly recordSizeEstimate: number;
  readonly recordSizeEstimationThreshold: number;
  readonly insertAutoSplit: boolean;
  readonly insertSplitSize: number;
  /** Parquet row group size in bytes (hoodie.parquet.block.size). */
  readonly parquetBlockSize: number;
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
  /** Bloom filter of record keys in each base file footer (Hudi's bloom index reads it). */
  readonly bloom: { numEntries: number; fpp: number; maxEntries: number; type: 'DYNAMIC_V0' | 'SIMPLE' };
}

export const WRITE_KEYS = {
  smallFileLimit: { key: 'hoodie.parquet.small.file.limit', default: 104857600, description: 'base files smaller than this receive inserts (bytes; 0 turns small-file handling off)' },
  maxFileSize: { key: 'hoodie.parquet.max.file.size', default: 125829120, description: 'target maximum base file size (bytes)' },
  recordSizeEstimate: { key: 'hoodie.copyonwrite.record.size.estimate', default: 1024, description: 'average record size (bytes) until a commit large enough to measure it exists' },
  recordSizeEstimationThreshold: { key: 'hoodie.record.size.estimation.threshold', default: 1.0, description: 'a commit is used to measure record size when it wrote more than this × small.file.limit bytes' },
  insertAutoSplit: { key: 'hoodie.copyonwrite.insert.auto.split', default: true, description: 'size new file groups as max.file.size / average record size records' },
  insertSplitSize: { key: 'hoodie.copyonwrite.insert.split.size', default: 500000, description: 'records per new file group when auto split is off' },
  parquetBlockSize: { key: 'hoodie.parquet.block.size', default: 125829120, description: 'Parquet row group size (bytes)' },
  combineBeforeInsert: { key: 'hoodie.combine.before.insert', default: false, description: 'de-duplicate records of one batch on insert / bulk_insert' },
  combineBeforeUpsert: { key: 'hoodie.combine.before.upsert', default: true, description: 'de-duplicate records of one batch on upsert (precombine field decides)' },
  combineBeforeDelete: { key: 'hoodie.combine.before.delete', default: true, description: 'de-duplicate keys of one batch on delete' },
  updatesStrategy: { key: 'hoodie.clustering.updates.strategy', default: 'org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy', description: 'what an upsert does to file groups in pending clustering (reject)' },
  lockWaitMs: { key: 'hoodie.write.lock.wait_time_ms', default: 60000, description: 'how long a writer waits for the table lock (ms)' },
  failedWritesPolicy: {
    key: 'hoodie.cleaner.policy.failed.writes',
    default: 'EAGER',
    description: 'how a write heals the table from killed writes before it starts (lib/failed-writes.ts): EAGER rolls back every pending commit, ' +
      'LAZY only those whose heartbeat is older than 120 s, NEVER none. LAZY whenever hoodie.write.concurrency.mode=optimistic_concurrency_control (as Hudi) ' +
      'or, when unset, with the DynamoDB lock (a lock shared with other writers)',
  },
  payloadClass: {
    key: 'hoodie.datasource.write.payload.class',
    default: 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload',
    description: 'how an upsert merges with the stored record (unset: the table\'s hoodie.compaction.payload.class, else this default, as Hudi 0.x). ' +
      'OverwriteWithLatestAvroPayload: the incoming record wins; DefaultHoodieRecordPayload: a stored record with a greater precombine value is kept. ' +
      'With either, duplicates within one batch keep the greatest precombine value (the later record on a tie)',
  },
  setNullForMissingColumns: {
    key: 'hoodie.write.set.null.for.missing.columns',
    default: false,
    description: 'store NULL in table columns the input lacks (false: such an input is refused, as Hudi\'s MissingSchemaFieldException)',
  },
  reconcileSchema: {
    key: 'hoodie.datasource.write.reconcile.schema',
    default: false,
    description: 'conform the input to the table\'s schema: columns it lacks are stored as NULL; columns (and struct fields) it adds extend the schema, as they do without it',
  },
  allowColumnDrop: {
    key: 'hoodie.write.schema.allow.auto.evolution.column.drop',
    default: false,
    description: 'true would let an input without some table columns drop them from the schema (Hudi); this writer refuses the setting and never drops a column',
  },
  allowEmptyCommit: { key: 'hoodie.allow.empty.commit', default: true, description: 'an input without records makes an empty commit (false: it writes nothing)' },
  bloomNumEntries: { key: 'hoodie.index.bloom.num_entries', default: 60000, description: 'bloom filter entries per row (its size: about 430 KB per base file at the default)' },
  bloomFpp: { key: 'hoodie.index.bloom.fpp', default: 0.000000001, description: 'bloom filter false-positive probability' },
  bloomMaxEntries: { key: 'hoodie.bloom.index.filter.dynamic.max.entries', default: 100000, description: 'entries at which the dynamic bloom filter stops growing' },
  bloomType: { key: 'hoodie.bloom.index.filter.type', default: 'DYNAMIC_V0', description: 'DYNAMIC_V0 or SIMPLE' },
} as const;

function numberOf(props: ReadonlyMap<string, string>, key: string, fallback: number, location: string, min = 0): number {
  const text = props.get(key);
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text.trim());
  if (!Number.isFinite(value) || value < min) {
    throw new HudiError(`${key}=${text} is not a number ≥ ${min}`, { location, fix: `set ${key} to a number (default ${fallback})` });
  }
  return value;
}

function booleanOf(props: ReadonlyMap<string, string>, key: string, fallback: boolean, location: string): boolean {
  const text = props.get(key)?.trim().toLowerCase();
  if (text === undefined || text === '') return fallback;
  if (text !== 'true' && text !== 'false') throw new HudiError(`${key}=${props.get(key)} is not true or false`, { location, fix: `set ${key}=true or false (default ${fallback})` });
  return text === 'true';
}

export function writeConfigFromProperties(props: ReadonlyMap<string, string>, location = 'write properties'): WriteConfig {
  const k = WRITE_KEYS;
  const updatesStrategy = props.get(k.updatesStrategy.key) ?? k.updatesStrategy.default;
  return {
    smallFileLimit: numberOf(props, k.smallFileLimit.key, k.smallFileLimit.default, location),
    maxFileSize: numberOf(props, k.maxFileSize.key, k.maxFileSize.default, location, 1),
    recordSizeEstimate: numberOf(props, k.recordSizeEstimate.key, k.recordSizeEstimate.default, location, 1),
    recordSizeEstimationThreshold: numberOf(props, k.recordSizeEstimationThreshold.key, k.recordSizeEstimationThreshold.default, location),
    insertAutoSplit: booleanOf(props, k.insertAutoSplit.key, k.insertAutoSplit.default, location),
    insertSplitSize: numberOf(props, k.insertSplitSize.key, k.insertSplitSize.default, location, 1),
    parquetBlockSize: numberOf(props, k.parquetBlockSize.key, k.parquetBlockSize.default, location, 1),
    combineBeforeInsert: booleanOf(props, k.combineBeforeInsert.key, k.combineBeforeInsert.default, location),
    combineBeforeUpsert: booleanOf(props, k.combineBeforeUpsert.key, k.combineBeforeUpsert.default, location),
    combineBeforeDelete: booleanOf(props, k.combineBeforeDelete.key, k.combineBeforeDelete.default, location),
    rejectUpdatesDuringClustering: !/SparkAllowUpdateStrategy|AllowUpdate/.test(updatesStrategy),
    lockWaitMs: numberOf(props, k.lockWaitMs.key, k.lockWaitMs.default, location),
    payloadClass: nonEmpty(props.get(k.payloadClass.key)) ?? nonEmpty(props.get(TABLE_PAYLOAD_CLASS_KEY)),
    allowColumnDrop: refuseColumnDrop(booleanOf(props, k.allowColumnDrop.key, k.allowColumnDrop.default, location), location),
    missingColumns: booleanOf(props, k.setNullForMissingColumns.key, k.setNullForMissingColumns.default, location) || booleanOf(props, k.reconcileSchema.key, k.reconcileSchema.default, location)
      ? 'null' : 'refuse',
    allowEmptyCommit: booleanOf(props, k.allowEmptyCommit.key, k.allowEmptyCommit.default, location),
    bloom: {
      numEntries: numberOf(props, k.bloomNumEntries.key, k.bloomNumEntries.default, location, 1),
      fpp: numberOf(props, k.bloomFpp.key, k.bloomFpp.default, location),
      maxEntries: numberOf(props, k.bloomMaxEntries.key, k.bloomMaxEntries.default, location, 1),
      type: bloomTypeOf(props.get(k.bloomType.key) ?? k.bloomType.default, location),
    },
  };
}

/** hoodie.properties' payload class (HoodieTableConfig.PAYLOAD_CLASS_NAME); Hudi 0.14/0.15 stores it for MOR tables only. */
export const TABLE_PAYLOAD_CLASS_KEY = 'hoodie.compaction.payload.class';

/** The payloads this writer merges as Hudi does. */
export const PAYLOAD_CLASSES = {
  overwriteWithLatest: 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload',
  default: 'org.apache.hudi.common.model.DefaultHoodieRecordPayload',
} as const;

export interface RecordPayload {
  readonly className: string;
  /**
   * DefaultHoodieRecordPayload: an incoming record whose precombine value is smaller than the stored record's is
   * dropped. OverwriteWithLatestAvroPayload: the incoming record always replaces the stored one.
   */
  readonly orderingAgainstStored: boolean;
  /** Where the class came from: the write properties, hoodie.properties, or Hudi's default. */
  readonly source: 'write properties' | 'hoodie.properties' | 'default';
}

/**
 * The payload an upsert merges with, as Hudi 0.x resolves it for a datasource write: the writer's payload class,
 * else the table's hoodie.compaction.payload.class, else OverwriteWithLatestAvroPayload (HoodieWriteConfig's
 * default). Classes from the com.uber.hoodie days are read as org.apache.hudi, as Hudi does. Payloads this writer
 * cannot reproduce are refused rather than merged some other way.
 */
export function resolveRecordPayload(config: Pick<WriteConfig, 'payloadClass'>, tableProperties: ReadonlyMap<string, string>, tableLocation: string): RecordPayload {
  const fromTable = nonEmpty(tableProperties.get(TABLE_PAYLOAD_CLASS_KEY));
  const source: RecordPayload['source'] = config.payloadClass !== undefined ? 'write properties' : fromTable !== undefined ? 'hoodie.properties' : 'default';
  const given = config.payloadClass ?? fromTable ?? WRITE_KEYS.payloadClass.default;
  const className = given.trim().replace(/^com\.uber\.hoodie\./, 'org.apache.hudi.');
  if (className === PAYLOAD_CLASSES.overwriteWithLatest) return { className, orderingAgainstStored: false, source };
  if (className === PAYLOAD_CLASSES.default) return { className, orderingAgainstStored: true, source };
  throw new HudiError(`payload class ${given} is not supported by this writer`, {
    location: source === 'hoodie.properties' ? `${tableLocation} (${TABLE_PAYLOAD_CLASS_KEY})` : WRITE_KEYS.payloadClass.key,
    fix: `set ${WRITE_KEYS.payloadClass.key} to ${PAYLOAD_CLASSES.overwriteWithLatest} (Hudi's default: the incoming record wins) or ` +
      `${PAYLOAD_CLASSES.default} (a stored record with a greater precombine value is kept), or write this table with Hudi`,
  });
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

function bloomTypeOf(text: string, location: string): 'DYNAMIC_V0' | 'SIMPLE' {
  const value = text.trim().toUpperCase();
  if (value !== 'DYNAMIC_V0' && value !== 'SIMPLE') {
    throw new HudiError(`hoodie.bloom.index.filter.type=${text} is not supported`, { location, fix: 'use DYNAMIC_V0 (default) or SIMPLE' });
  }
  return value;
}
