/**
 * How records of one key merge on read, as Hudi 0.14/0.15 do with the table's payload class (lib/writer/write-config.ts):
 * - between log records, in log order (HoodieMergedLogRecordScanner, preCombine of OverwriteWithLatestAvroPayload):
 *   the greater ordering value wins, the later record on a tie; a later record always replaces a deleted one;
 * - a delete-block record after a data record (processNextDeletedRecord): the delete wins unless it carries a real
 *   ordering value (not Hudi's default int 0) of the stored value's type and the stored value is greater;
 * - onto the base record (combineAndGetUpdateValue): OverwriteWithLatestAvroPayload takes the log record,
 *   DefaultHoodieRecordPayload keeps the base record when its ordering value is greater; `_hoodie_is_deleted` or a
 *   delete removes the key.
 */
import { bytesToJson, dateToJson, decimalToJson, integerToJson, type JsonValue, type Row, timestampToJson } from '../engine/row-format.js';
import type { OrderingValue } from '../log-format/index.js';
import type { RecordPayload } from '../table/payload.js';

export const IS_DELETED_FIELD = '_hoodie_is_deleted';

/** A log record of one key after scanning: a data record (maybe marked deleted) or a delete from a delete block. */
export type LogRecord =
  | { readonly kind: 'data'; readonly row: Row; readonly ordering: JsonValue }
  | { readonly kind: 'delete'; readonly ordering: OrderingValue | null };

/** A delete-block record's ordering value as a row value (for comparison with data records'). */
export function orderingOfDelete(value: OrderingValue | null): JsonValue {
  if (value === null) return null;
  switch (value.type) {
    case 'decimal':
      return decimalToJson(value.unscaled, 15);
    case 'date':
      return dateToJson(value.value);
    case 'timestampMicros':
      return timestampToJson(value.value * 1_000n);
    case 'timeMicros':
    case 'long':
      return integerToJson(value.value);
    case 'bytes':
      return bytesToJson(value.value);
    default:
      return value.value;
  }
}

/** The ordering value of a row (null without a precombine field: Hudi's natural order). */
export function orderingOf(row: Row, precombineField: string | undefined): JsonValue {
  return precombineField === undefined ? null : (row[precombineField] ?? null);
}

/**
 * How a table's records merge: its payload (0.x) or merge mode (1.x) as a payload, the field records are ordered by
 * (undefined: the later record wins), and whether deletes carry event time (Hudi 1.x's EVENT_TIME_ORDERING).
 */
export interface RecordMerge {
  readonly payload: RecordPayload;
  readonly orderingField: string | undefined;
  /**
   * EVENT_TIME_ORDERING (FileGroupRecordBuffer 1.0.2, BufferedRecordMergerFactory 1.1.1): a delete with a real
   * ordering value (not the default int 0) loses to a base record ordered after it, and a later log record ordered
   * before it loses to it. 0.x payloads apply a delete whatever its ordering value once it reaches the base record.
   */
  readonly eventTimeDeletes: boolean;
}

/** Hudi's default ordering value int 0 (or none) means "no ordering": commit time decides. */
function isNaturalOrdering(value: OrderingValue | null): boolean {
  return value === null || (value.type === 'int' && value.value === 0);
}

/** Merge a newer log record of a key into the older one (the scanner's rule). */
export function mergeLogRecords(older: LogRecord | undefined, newer: LogRecord, eventTimeDeletes = false): LogRecord {
  if (older === undefined) return newer;
  if (older.kind === 'delete') {
    // 1.x's shouldKeepNewerRecord: a record ordered before an event-time delete does not bring the key back.
    if (eventTimeDeletes && newer.kind === 'data' && !isNaturalOrdering(older.ordering)) {
      const deleted = orderingOfDelete(older.ordering);
      if (sameKind(newer.ordering, deleted) && compareOrdering(newer.ordering, deleted) < 0) return older;
    }
    return newer;
  }
  if (newer.kind === 'delete') {
    const deleteOrdering = newer.ordering;
    // Hudi's default ordering value int 0 means "no ordering": natural order, the delete wins.
    if (
      !isNaturalOrdering(deleteOrdering) &&
      sameKind(older.ordering, orderingOfDelete(deleteOrdering)) &&
      compareOrdering(older.ordering, orderingOfDelete(deleteOrdering)) > 0
    )
      return older;
    return newer;
  }
  return compareOrdering(older.ordering, newer.ordering) > 0 ? older : newer;
}

/**
 * Which record a key reads as, the one rule both the row-by-row reader and the compaction's SQL merge follow:
 * 'base' keeps the base record, 'log' takes the merged log record, 'deleted' drops the key. `baseOrdering` is the
 * base record's ordering value, undefined when the key has no base record.
 */
export type MergeOutcome = 'base' | 'log' | 'deleted';

export function mergeOutcome(payload: RecordPayload, baseOrdering: JsonValue | undefined, log: LogRecord | undefined, eventTimeDeletes = false): MergeOutcome {
  if (log === undefined) return 'base';
  if (log.kind === 'delete') {
    // 1.x EVENT_TIME_ORDERING (merge / finalMerge): a base record ordered after the delete stays.
    if (eventTimeDeletes && baseOrdering !== undefined && baseOrdering !== null && !isNaturalOrdering(log.ordering)) {
      if (compareOrdering(baseOrdering, orderingOfDelete(log.ordering)) > 0) return 'base';
    }
    return 'deleted';
  }
  if (baseOrdering !== undefined && payload.orderingAgainstStored && baseOrdering !== null && compareOrdering(baseOrdering, log.ordering) > 0) return 'base';
  return log.row[IS_DELETED_FIELD] === true ? 'deleted' : 'log';
}

/** Whether mergeOutcome needs the base record's ordering value to decide (else any base value gives the same outcome). */
export function needsBaseOrdering(payload: RecordPayload, precombineField: string | undefined): boolean {
  return payload.orderingAgainstStored && precombineField !== undefined;
}

/** The row a key reads as: the base row merged with the key's log record; undefined when the key is deleted. */
export function mergeOntoBase(
  payload: RecordPayload,
  base: Row | undefined,
  baseOrdering: JsonValue,
  log: LogRecord | undefined,
  eventTimeDeletes = false,
): Row | undefined {
  const outcome = mergeOutcome(payload, base === undefined ? undefined : baseOrdering, log, eventTimeDeletes);
  if (outcome === 'base') return base;
  return outcome === 'log' && log?.kind === 'data' ? log.row : undefined;
}

function sameKind(a: JsonValue, b: JsonValue): boolean {
  return typeof a === typeof b || (isIntegerText(a) && typeof b === 'number') || (typeof a === 'number' && isIntegerText(b));
}

function isIntegerText(value: JsonValue): boolean {
  return typeof value === 'string' && /^-?\d+$/.test(value);
}

const ISO_TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/;
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * Java's compareTo on two ordering values as rows carry them: numbers (64-bit ones beyond 2^53 as digit strings),
 * decimal strings, ISO timestamps (any fraction length), other strings by UTF-16 code units. Null sorts first.
 */
export function compareOrdering(a: JsonValue, b: JsonValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  const ta = String(a);
  const tb = String(b);
  const da = DECIMAL.exec(ta);
  const db = DECIMAL.exec(tb);
  if (da !== null && db !== null) return compareDecimals(da, db);
  const ia = ISO_TIMESTAMP.exec(ta);
  const ib = ISO_TIMESTAMP.exec(tb);
  if (ia !== null && ib !== null) {
    const fa = `${ia[1]}.${(ia[2] ?? '').padEnd(9, '0')}`;
    const fb = `${ib[1]}.${(ib[2] ?? '').padEnd(9, '0')}`;
    return fa < fb ? -1 : fa > fb ? 1 : 0;
  }
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

function compareDecimals(a: RegExpExecArray, b: RegExpExecArray): number {
  const scale = Math.max((a[3] ?? '').length, (b[3] ?? '').length);
  const unscaled = (m: RegExpExecArray) => BigInt(`${m[1]}${m[2]}${(m[3] ?? '').padEnd(scale, '0')}`);
  const x = unscaled(a);
  const y = unscaled(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
