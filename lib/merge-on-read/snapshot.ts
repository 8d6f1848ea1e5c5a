/**
 * Snapshot reads of merge-on-read tables (Spark's `_rt` view, hoodie.datasource.query.type=snapshot): every live
 * file group's latest merged slice, its base file's rows merged with its log records by the table's payload class.
 */
import type { ParquetEngine } from '../engine/port.js';
import type { JsonValue, Row } from '../engine/row-format.js';
import type { Storage } from '../storage/port.js';
import { PROPERTIES_FILE, recordMergeModeOf, type TableConfig } from '../table/config.js';
import type { FileSystemView, MergedFileSlice } from '../table/file-system-view.js';
import { payloadOfMergeMode, type RecordPayload, resolveRecordPayload } from '../table/payload.js';
import type { Timeline } from '../timeline/timeline.js';
import { type LogBlockFilter, logBlockFilter, scanLogRecords } from './log-record-scanner.js';
import { mergeOntoBase, mergeOutcome, needsBaseOrdering, orderingOf, type RecordMerge } from './payload-merge.js';

export interface MergedRows {
  readonly columns: string[];
  readonly rows: Row[];
  /** Base and log files read, relative to the table path. */
  readonly files: string[];
}

export interface MergeOnReadContext {
  readonly storage: Storage;
  readonly config: TableConfig;
  /** The whole active timeline: which instants' log blocks count. */
  readonly timeline: Timeline;
  /** The query instant: the as-of time, else the latest completed write. */
  readonly queryInstant: string;
  readonly engine: ParquetEngine;
  /** Base files' local paths (staged by the caller), by table-relative path. */
  readonly localBaseFile: (path: string) => string;
}

/** The payload a merge-on-read table merges with: hoodie.properties' hoodie.compaction.payload.class, else Hudi's default. */
export function tablePayload(storage: Storage, config: TableConfig): RecordPayload {
  return resolveRecordPayload({ payloadClass: undefined }, config.properties, storage.uriOf(PROPERTIES_FILE));
}

/**
 * How a table's records merge on read: a 0.x table by its payload class and precombine field; a 1.x table by its
 * record merge mode — COMMIT_TIME_ORDERING as the latest write wins (no ordering field, as Hudi 1.x reads it),
 * EVENT_TIME_ORDERING by the ordering field with event-time deletes.
 */
export function tableMerge(storage: Storage, config: TableConfig): RecordMerge {
  const location = storage.uriOf(PROPERTIES_FILE);
  switch (recordMergeModeOf(config, location)) {
    case undefined:
      return { payload: tablePayload(storage, config), orderingField: config.precombineField, eventTimeDeletes: false };
    case 'COMMIT_TIME_ORDERING':
      return { payload: payloadOfMergeMode('COMMIT_TIME_ORDERING'), orderingField: undefined, eventTimeDeletes: false };
    case 'EVENT_TIME_ORDERING':
      return { payload: payloadOfMergeMode('EVENT_TIME_ORDERING'), orderingField: config.precombineField, eventTimeDeletes: true };
  }
}

const KEY_FIELD = '_hoodie_record_key';

export async function readMergedSlices(view: FileSystemView, context: MergeOnReadContext): Promise<MergedRows> {
  const merge = tableMerge(context.storage, context.config);
  const filter = logBlockFilter(context.timeline, context.queryInstant);
  const columns: string[] = [];
  const rows: Row[] = [];
  const files: string[] = [];
  for (const slice of view.latestMergedSlices()) {
    const merged = await mergeSlice(slice, context, merge, filter);
    for (const column of merged.columns) if (!columns.includes(column)) columns.push(column);
    rows.push(...merged.rows);
    if (slice.baseFile !== undefined) files.push(slice.baseFile.path);
    files.push(...slice.logFiles.map((file) => file.path));
  }
  return { columns, rows: rows.map((row) => Object.fromEntries(columns.map((column) => [column, row[column] ?? null]))), files };
}

/** One file slice's rows: its base file's, merged with its log records (keys only in the logs after them). */
export async function mergeSlice(
  slice: MergedFileSlice,
  context: MergeOnReadContext,
  merge: RecordMerge,
  filter: LogBlockFilter,
): Promise<{ columns: string[]; rows: Row[]; logRecords: number }> {
  const { payload, orderingField: precombineField, eventTimeDeletes } = merge;
  const base = slice.baseFile === undefined ? { columns: [], rows: [] } : await context.engine.readRows([context.localBaseFile(slice.baseFile.path)]);
  const logs = await scanLogRecords(context.storage, slice.logFiles, { filter, precombineField, eventTimeDeletes, engine: context.engine });
  const columns = [...base.columns];
  for (const column of logs.columns) if (!columns.includes(column)) columns.push(column);
  const rows: Row[] = [];
  const seen = new Set<string>();
  for (const row of base.rows) {
    const key = String(row['_hoodie_record_key']);
    seen.add(key);
    const merged = mergeOntoBase(payload, row, orderingOf(row, precombineField), logs.records.get(key), eventTimeDeletes);
    if (merged !== undefined) rows.push(merged);
  }
  for (const [key, record] of logs.records) {
    if (seen.has(key)) continue;
    const merged = mergeOntoBase(payload, undefined, null, record, eventTimeDeletes);
    if (merged !== undefined) rows.push(merged);
  }
  return { columns, rows, logRecords: logs.records.size };
}

/** A file slice's log records as changes to its base file: what an SQL merge (ParquetEngine.mergeIntoBase) applies. */
export interface SliceChanges {
  /** Log rows that replace their key's base row, or add the key; in log order. */
  readonly upserts: Row[];
  /** Keys the logs delete. */
  readonly deletes: string[];
  /** Merged log records (one per key). */
  readonly logRecords: number;
}

/**
 * The changes the logs make to a slice's base file, by the same rule mergeSlice reads with (mergeOutcome): only the
 * base file's ordering values are read, and only when the payload compares against the stored record.
 */
export async function sliceChanges(slice: MergedFileSlice, context: MergeOnReadContext, merge: RecordMerge, filter: LogBlockFilter): Promise<SliceChanges> {
  const { payload, orderingField: precombineField, eventTimeDeletes } = merge;
  const logs = await scanLogRecords(context.storage, slice.logFiles, { filter, precombineField, eventTimeDeletes, engine: context.engine });
  const baseOrderings = new Map<string, JsonValue>();
  const baseOrderingCounts = needsBaseOrdering(payload, precombineField) || (eventTimeDeletes && precombineField !== undefined);
  if (slice.baseFile !== undefined && precombineField !== undefined && baseOrderingCounts && logs.records.size > 0) {
    const base = await context.engine.readRows([context.localBaseFile(slice.baseFile.path)], { columns: [KEY_FIELD, precombineField] });
    for (const row of base.rows) {
      const key = String(row[KEY_FIELD]);
      if (logs.records.has(key)) baseOrderings.set(key, orderingOf(row, precombineField));
    }
  }
  const upserts: Row[] = [];
  const deletes: string[] = [];
  for (const [key, record] of logs.records) {
    switch (mergeOutcome(payload, baseOrderings.get(key), record, eventTimeDeletes)) {
      case 'log':
        if (record.kind === 'data') upserts.push(record.row);
        break;
      case 'deleted':
        deletes.push(key);
        break;
      case 'base':
        break;
    }
  }
  return { upserts, deletes, logRecords: logs.records.size };
}
