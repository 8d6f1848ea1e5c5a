/**
 * One archived instant of Hudi 1.x's timeline history: a row of a history Parquet file (the Avro record
 * HoodieLSMTimelineInstant written by parquet-avro), its commit metadata and plan bytes decoded.
 *
 * MetadataConversionUtils.createLSMTimelineInstant fills the row: `metadata` is the completed instant file's bytes,
 * `plan` the requested file's (a cleaner plan, a compaction or log-compaction plan, the requested replace metadata)
 * or, for replace commits and clustering, the inflight file's commit metadata when there is one. In table versions
 * 8 and 9 each is an Avro container file holding one record; which records may stand there for each action is the
 * table below, and anything else is refused by name.
 */
import { HudiError, TimelineHistoryError } from '../../errors.js';
import type { ChunkValue } from '../../parquet/column-chunk.js';
import type { ParquetColumnInfo } from '../../parquet/schema.js';
import { decodeWithWriterSchema, HUDI_AVRO_NAMESPACE } from '../avro-files.js';

/** The completed actions the history holds (HoodieTimeline's action names). */
export type ArchivedAction = 'commit' | 'deltacommit' | 'replacecommit' | 'clustering' | 'clean' | 'rollback' | 'savepoint' | 'restore' | 'indexing';

const record = (name: string): string => `${HUDI_AVRO_NAMESPACE}.${name}`;
const COMMIT = record('HoodieCommitMetadata');
const REPLACE_COMMIT = record('HoodieReplaceCommitMetadata');

/** For each action, the Avro records its metadata and plan bytes may hold (empty: it has no plan). */
const ACTION_RECORDS: { readonly [A in ArchivedAction]: { readonly metadata: readonly string[]; readonly plan: readonly string[] } } = {
  // A commit's plan is the compaction plan it executed; a delta commit's the log-compaction plan.
  commit: { metadata: [COMMIT], plan: [record('HoodieCompactionPlan')] },
  deltacommit: { metadata: [COMMIT], plan: [record('HoodieCompactionPlan')] },
  // The requested replace metadata, or the inflight file's commit metadata written over it (insert_overwrite).
  replacecommit: { metadata: [REPLACE_COMMIT], plan: [record('HoodieRequestedReplaceMetadata'), COMMIT, REPLACE_COMMIT] },
  clustering: { metadata: [REPLACE_COMMIT], plan: [record('HoodieRequestedReplaceMetadata'), COMMIT, REPLACE_COMMIT] },
  clean: { metadata: [record('HoodieCleanMetadata')], plan: [record('HoodieCleanerPlan')] },
  rollback: { metadata: [record('HoodieRollbackMetadata')], plan: [] },
  savepoint: { metadata: [record('HoodieSavepointMetadata')], plan: [] },
  restore: { metadata: [record('HoodieRestoreMetadata')], plan: [] },
  indexing: { metadata: [record('HoodieIndexCommitMetadata')], plan: [] },
};

export const ARCHIVED_ACTIONS = Object.keys(ACTION_RECORDS) as readonly ArchivedAction[];

/** An Avro record held in the history: its bytes as stored, its full record name and its fields as plain data. */
export interface ArchivedRecord {
  readonly bytes: Uint8Array;
  readonly recordName: string;
  readonly record: { readonly [field: string]: unknown };
}

export interface ArchivedInstant {
  readonly requestedTime: string;
  readonly completionTime: string;
  readonly action: ArchivedAction;
  /** The completed instant's metadata; null when the instant file was empty. */
  readonly metadata: ArchivedRecord | null;
  readonly plan: ArchivedRecord | null;
  /** The history file the row is in. */
  readonly file: string;
}

/** HoodieLSMTimelineInstant's fields and their Parquet shape (parquet-avro: a nullable union is an OPTIONAL column). */
const COLUMNS: { readonly [name: string]: { readonly physicalType: ParquetColumnInfo['physicalType']; readonly required: boolean } } = {
  instantTime: { physicalType: 'BYTE_ARRAY', required: false },
  completionTime: { physicalType: 'BYTE_ARRAY', required: false },
  action: { physicalType: 'BYTE_ARRAY', required: false },
  metadata: { physicalType: 'BYTE_ARRAY', required: false },
  plan: { physicalType: 'BYTE_ARRAY', required: false },
  version: { physicalType: 'INT32', required: true },
};
/** LSMTimeline.LSM_TIMELINE_INSTANT_VERSION_1, the only row version Hudi writes (and the schema's default). */
const ROW_VERSION = 1;

const FIX_FILE = 'restore the history file from a backup; this build reads the history Hudi 1.0 and 1.1 write';

/** Refuse a history file whose columns are not HoodieLSMTimelineInstant's. */
export function checkHistoryColumns(columns: readonly ParquetColumnInfo[], location: string): void {
  for (const column of columns) {
    const expected = COLUMNS[column.name];
    if (expected === undefined) {
      throw new TimelineHistoryError(`history file has a column ${column.name} that HoodieLSMTimelineInstant does not have`, { location, fix: FIX_FILE });
    }
    if (column.physicalType !== expected.physicalType) {
      throw new TimelineHistoryError(`history column ${column.name} is ${column.physicalType ?? 'a group'}, expected ${expected.physicalType}`, {
        location,
        fix: FIX_FILE,
      });
    }
  }
  for (const name of ['instantTime', 'completionTime', 'action']) {
    if (!columns.some((column) => column.name === name)) {
      throw new TimelineHistoryError(`history file has no ${name} column`, { location, fix: FIX_FILE });
    }
  }
}

/** Row `row` of a history file's decoded columns as an archived instant. */
export function archivedInstantOfRow(values: ReadonlyMap<string, readonly ChunkValue[]>, row: number, file: string, location: string): ArchivedInstant {
  const text = (name: string): string => {
    const value = values.get(name)?.[row];
    if (!(value instanceof Uint8Array)) {
      // ArchivedTimelineV2.readCommit calls toString() on it: Hudi fails on a null here too.
      throw new TimelineHistoryError(`history row ${row} has no ${name}`, { location, fix: FIX_FILE });
    }
    return Buffer.from(value).toString('utf8');
  };
  const requestedTime = text('instantTime');
  const completionTime = text('completionTime');
  const actionName = text('action');
  if (!(ARCHIVED_ACTIONS as readonly string[]).includes(actionName)) {
    throw new TimelineHistoryError(`archived instant ${requestedTime} has the unknown action ${actionName}`, {
      location,
      fix: `this build reads the actions ${ARCHIVED_ACTIONS.join(', ')}`,
    });
  }
  const action = actionName as ArchivedAction;
  const version = values.get('version')?.[row] ?? ROW_VERSION;
  if (version !== ROW_VERSION) {
    throw new TimelineHistoryError(`archived instant ${requestedTime} is of row version ${String(version)}; only ${ROW_VERSION} is known`, {
      location,
      fix: 'read this history with the Hudi release that wrote it',
    });
  }
  const where = `${location} (instant ${requestedTime} ${action})`;
  return {
    requestedTime,
    completionTime,
    action,
    metadata: decodeRecord(values.get('metadata')?.[row] ?? null, ACTION_RECORDS[action].metadata, `${where} metadata`),
    plan: decodeRecord(values.get('plan')?.[row] ?? null, ACTION_RECORDS[action].plan, `${where} plan`),
    file,
  };
}

function decodeRecord(value: ChunkValue, expectedNames: readonly string[], location: string): ArchivedRecord | null {
  if (value === null) return null;
  if (!(value instanceof Uint8Array)) throw new TimelineHistoryError('holds a value that is not bytes', { location, fix: FIX_FILE });
  if (expectedNames.length === 0) {
    throw new TimelineHistoryError('holds bytes where Hudi writes none for this action', { location, fix: FIX_FILE });
  }
  // A copy: the value is a view of the whole decompressed page.
  const bytes = Uint8Array.from(value);
  try {
    return { bytes, ...decodeWithWriterSchema(bytes, location, expectedNames) };
  } catch (cause) {
    // The Avro helpers throw plain HudiErrors; the history's callers match one type for all of its refusals.
    if (!(cause instanceof HudiError) || cause instanceof TimelineHistoryError) throw cause;
    throw new TimelineHistoryError(cause.problem, { location: cause.location ?? location, fix: cause.fix ?? FIX_FILE, cause });
  }
}
