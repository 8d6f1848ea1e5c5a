/**
 * DuckDB values → the JSON-ready values of row-format.ts (every rule lives there; this only unpacks DuckDB's value
 * objects), and the plain numbers and texts of DuckDB's metadata rows.
 */

import type { DuckDBResultReader, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';
import type { RowSet } from './port.js';
import type { JsonValue, Row } from './row-format.js';
import { bytesToJson, dateToJson, decimalToJson, float32ToJson, float64ToJson, integerToJson, mapToJson, timestampToJson, timeToJson } from './row-format.js';

const POSITIVE_INFINITY_TEXT = 'infinity';
const NEGATIVE_INFINITY_TEXT = '-infinity';

/** A query's rows as JSON-ready values (row-format.ts rules), with the column names in order. */
export function rowSetOf(reader: DuckDBResultReader): RowSet {
  const names = reader.columnNames();
  const types = reader.columnTypes();
  const rows = reader.getRows().map((values) => {
    const row: Row = {};
    names.forEach((name, index) => {
      row[name] = duckValueToJson(values[index] ?? null, types[index]);
    });
    return row;
  });
  return { columns: names, rows };
}

function duckValueToJson(value: DuckDBValue, type: DuckDBType | undefined): JsonValue {
  const { DuckDBArrayValue, DuckDBListValue, DuckDBMapValue, DuckDBStructValue, DuckDBTypeId } = duckdb();
  if (value === null) return null;
  if (type !== undefined) {
    switch (type.typeId) {
      case DuckDBTypeId.FLOAT:
        return typeof value === 'number' ? float32ToJson(value) : scalarToJson(value);
      case DuckDBTypeId.LIST:
      case DuckDBTypeId.ARRAY:
        if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
          return value.items.map((item) => duckValueToJson(item, type.valueType));
        }
        break;
      case DuckDBTypeId.STRUCT:
        if (value instanceof DuckDBStructValue) {
          const result: { [key: string]: JsonValue } = {};
          type.entryNames.forEach((name, index) => {
            result[name] = duckValueToJson(value.entries[name] ?? null, type.entryTypes[index]);
          });
          return result;
        }
        break;
      case DuckDBTypeId.MAP:
        if (value instanceof DuckDBMapValue) {
          return mapToJson(value.entries.map((entry) => [duckValueToJson(entry.key, type.keyType), duckValueToJson(entry.value, type.valueType)] as const));
        }
        break;
      default:
        break;
    }
  }
  return scalarToJson(value);
}

function scalarToJson(value: DuckDBValue): JsonValue {
  const {
    DuckDBArrayValue,
    DuckDBBitValue,
    DuckDBBlobValue,
    DuckDBDateValue,
    DuckDBDecimalValue,
    DuckDBIntervalValue,
    DuckDBListValue,
    DuckDBMapValue,
    DuckDBStructValue,
    DuckDBTimeNSValue,
    DuckDBTimeTZValue,
    DuckDBTimeValue,
    DuckDBTimestampMillisecondsValue,
    DuckDBTimestampNanosecondsValue,
    DuckDBTimestampSecondsValue,
    DuckDBTimestampTZValue,
    DuckDBTimestampValue,
    DuckDBUUIDValue,
    DuckDBUnionValue,
  } = duckdb();
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return float64ToJson(value);
  if (typeof value === 'bigint') return integerToJson(value);
  if (value instanceof DuckDBDecimalValue) return decimalToJson(value.value, value.scale);
  if (value instanceof DuckDBBlobValue) return bytesToJson(value.bytes);
  if (value instanceof DuckDBDateValue) {
    return value.isFinite ? dateToJson(value.days) : value.days > 0 ? POSITIVE_INFINITY_TEXT : NEGATIVE_INFINITY_TEXT;
  }
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) {
    return finiteTimestamp(value.isFinite, value.micros, value.micros * 1_000n);
  }
  if (value instanceof DuckDBTimestampMillisecondsValue) return finiteTimestamp(value.isFinite, value.millis, value.millis * 1_000_000n);
  if (value instanceof DuckDBTimestampSecondsValue) return finiteTimestamp(value.isFinite, value.seconds, value.seconds * 1_000_000_000n);
  if (value instanceof DuckDBTimestampNanosecondsValue) return finiteTimestamp(value.isFinite, value.nanos, value.nanos);
  if (value instanceof DuckDBTimeValue) return timeToJson(value.micros * 1_000n);
  if (value instanceof DuckDBTimeNSValue) return timeToJson(value.nanos);
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return value.items.map(scalarToJson);
  if (value instanceof DuckDBStructValue) {
    return Object.fromEntries(Object.entries(value.entries).map(([name, entry]) => [name, scalarToJson(entry)]));
  }
  if (value instanceof DuckDBMapValue) {
    return mapToJson(value.entries.map((entry) => [scalarToJson(entry.key), scalarToJson(entry.value)] as const));
  }
  if (value instanceof DuckDBUnionValue) return scalarToJson(value.value);
  if (value instanceof DuckDBUUIDValue || value instanceof DuckDBIntervalValue || value instanceof DuckDBTimeTZValue || value instanceof DuckDBBitValue) {
    return value.toString();
  }
  return String(value);
}

function finiteTimestamp(finite: boolean, raw: bigint, epochNanos: bigint): string {
  if (!finite) return raw > 0n ? POSITIVE_INFINITY_TEXT : NEGATIVE_INFINITY_TEXT;
  return timestampToJson(epochNanos);
}

export function blobText(value: DuckDBValue | undefined): string {
  const { DuckDBBlobValue } = duckdb();
  if (value instanceof DuckDBBlobValue) return new TextDecoder().decode(value.bytes);
  return value === null || value === undefined ? '' : String(value);
}

export function toNumber(value: DuckDBValue | undefined): number {
  const { DuckDBDecimalValue } = duckdb();
  if (typeof value === 'bigint' || typeof value === 'number') return Number(value);
  if (typeof value === 'string' && value !== '') return Number(value);
  if (value instanceof DuckDBDecimalValue) return value.toDouble();
  return 0;
}

export function optionalNumber(value: DuckDBValue | undefined): number | undefined {
  return value === null || value === undefined ? undefined : toNumber(value);
}

export function optionalText(value: DuckDBValue | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
