/**
 * Column statistics from footers: DuckDB's parquet_metadata rows (statistics as DuckDB's text) summed per file and
 * leaf column, min/max parsed back into JSON-ready values by the leaf's DuckDB type.
 */
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { queryObjects } from './connection.js';
import type { ColumnStats, FileColumnStats } from './port.js';
import { dateToJson, daysFromCivil, decimalToJson, float32ToJson, float64ToJson, integerToJson, timestampToJson } from './row-format.js';
import type { JsonValue } from './row-format.js';
import { readSchemas, type SchemaEntry } from './schema-rows.js';
import { fileListSql } from './sql.js';
import { optionalNumber, toNumber } from './values.js';

/** Row-group statistics per file and leaf column (files that exist and are readable; the caller guards). */
export async function readColumnStats(connection: DuckDBConnection, files: readonly string[]): Promise<FileColumnStats[]> {
  const schemas = await readSchemas(connection, files);
  const rows = await queryObjects(
    connection,
    `SELECT file_name, row_group_id, row_group_num_rows, column_id, stats_min_value, stats_max_value, stats_null_count, num_values
     FROM parquet_metadata(${fileListSql(files)})`,
  );
  // One pass to bucket the rows by file: filtering all rows once per file made a group of 10,000 files quadratic.
  const rowsByFile = new Map<string, Record<string, DuckDBValue>[]>();
  for (const row of rows) {
    const file = String(row.file_name);
    const bucket = rowsByFile.get(file);
    if (bucket === undefined) rowsByFile.set(file, [row]);
    else bucket.push(row);
  }
  return files.map((file) => summarizeFileStats(file, schemas.get(file) ?? [], rowsByFile.get(file) ?? []));
}

type StatKey = { kind: 'number'; value: number } | { kind: 'bigint'; value: bigint } | { kind: 'text'; value: Buffer };

interface ParsedStat {
  json: JsonValue;
  key: StatKey;
}

function compareKeys(a: StatKey, b: StatKey): number {
  if (a.kind === 'text' && b.kind === 'text') return Buffer.compare(a.value, b.value);
  if (a.kind === 'bigint' && b.kind === 'bigint') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  if (a.kind === 'number' && b.kind === 'number') return a.value - b.value;
  return 0;
}

/** DuckDB's statistics text for a leaf of the given DuckDB type → a JSON value and an order key; undefined when not comparable. */
function parseStatistic(text: DuckDBValue | undefined, duckdbType: string | undefined): ParsedStat | undefined {
  if (typeof text !== 'string' || duckdbType === undefined) return undefined;
  if (duckdbType === 'BOOLEAN') return { json: text === 'true', key: { kind: 'number', value: text === 'true' ? 1 : 0 } };
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT|INTEGER|UINTEGER)$/.test(duckdbType) && /^-?\d+$/.test(text)) {
    const value = BigInt(text);
    return { json: integerToJson(value), key: { kind: 'bigint', value } };
  }
  if (duckdbType === 'FLOAT' || duckdbType === 'DOUBLE') {
    const value = Number(text);
    if (Number.isNaN(value)) return undefined;
    return { json: duckdbType === 'FLOAT' ? float32ToJson(value) : float64ToJson(value), key: { kind: 'number', value } };
  }
  const decimal = /^DECIMAL\(\d+,(\d+)\)$/.exec(duckdbType);
  if (decimal) {
    const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
    if (!match) return undefined;
    const scale = Number(decimal[1]);
    const unscaled = BigInt(`${match[1]}${match[2] || '0'}${(match[3] ?? '').padEnd(scale, '0').slice(0, scale)}`);
    return { json: decimalToJson(unscaled, scale), key: { kind: 'bigint', value: unscaled } };
  }
  if (duckdbType === 'DATE' || duckdbType.startsWith('TIMESTAMP')) {
    const epochNanos = parseDuckDBTimestampText(text);
    if (epochNanos === undefined) return undefined;
    if (duckdbType === 'DATE') return { json: dateToJson(epochNanos / 86_400_000_000_000n), key: { kind: 'bigint', value: epochNanos } };
    return { json: timestampToJson(epochNanos), key: { kind: 'bigint', value: epochNanos } };
  }
  if (duckdbType === 'VARCHAR') return { json: text, key: { kind: 'text', value: Buffer.from(text, 'utf8') } };
  return undefined;
}

/** '2023-04-04 20:04:00.123+00', '2023-04-04', '0044-03-15 (BC)' → nanoseconds since the epoch. */
function parseDuckDBTimestampText(text: string): bigint | undefined {
  const match = /^(\d{4,})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?)?(?:([+-])(\d{2})(?::?(\d{2}))?)?( \(BC\))?$/.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hours, minutes, seconds, fraction, offsetSign, offsetHours, offsetMinutes, bc] = match;
  const civilYear = bc ? 1n - BigInt(year!) : BigInt(year!);
  const days = daysFromCivil(civilYear, Number(month), Number(day));
  const secondsOfDay = BigInt(Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds ?? 0));
  const offsetSeconds = BigInt((Number(offsetHours ?? 0) * 3600 + Number(offsetMinutes ?? 0) * 60) * (offsetSign === '-' ? -1 : 1));
  const nanos = BigInt((fraction ?? '').padEnd(9, '0'));
  return (days * 86_400n + secondsOfDay - offsetSeconds) * 1_000_000_000n + nanos;
}

function summarizeFileStats(file: string, schema: readonly SchemaEntry[], rows: readonly Record<string, DuckDBValue>[]): FileColumnStats {
  const leaves = schema.filter((entry) => entry.info.numChildren === 0);
  const rowGroups = new Map<number, number>();
  const perColumn = new Map<number, Record<string, DuckDBValue>[]>();
  for (const row of rows) {
    rowGroups.set(toNumber(row.row_group_id), toNumber(row.row_group_num_rows));
    const columnId = toNumber(row.column_id);
    const chunks = perColumn.get(columnId);
    if (chunks === undefined) perColumn.set(columnId, [row]);
    else chunks.push(row);
  }
  const columns = leaves.map((leaf, columnId): ColumnStats => {
    const chunks = perColumn.get(columnId) ?? [];
    let min: ParsedStat | undefined;
    let max: ParsedStat | undefined;
    let complete = chunks.length > 0;
    let nullCount: number | null = 0;
    let valueCount = 0;
    for (const chunk of chunks) {
      valueCount += toNumber(chunk.num_values);
      const nulls = optionalNumber(chunk.stats_null_count);
      nullCount = nulls === undefined || nullCount === null ? null : nullCount + nulls;
      const chunkMin = parseStatistic(chunk.stats_min_value, leaf.duckdbType);
      const chunkMax = parseStatistic(chunk.stats_max_value, leaf.duckdbType);
      // An all-null chunk has no min/max and needs none.
      const allNull = nulls !== undefined && nulls === toNumber(chunk.num_values);
      if (allNull && chunk.stats_min_value === null && chunk.stats_max_value === null) continue;
      if (chunkMin === undefined || chunkMax === undefined) {
        complete = false;
        continue;
      }
      if (min === undefined || compareKeys(chunkMin.key, min.key) < 0) min = chunkMin;
      if (max === undefined || compareKeys(chunkMax.key, max.key) > 0) max = chunkMax;
    }
    return {
      column: leaf.info.path.join('.'),
      physicalType: leaf.info.physicalType ?? 'BYTE_ARRAY',
      min: complete && min !== undefined ? min.json : null,
      max: complete && max !== undefined ? max.json : null,
      nullCount,
      valueCount,
    };
  });
  return {
    file,
    rowCount: [...rowGroups.values()].reduce((sum, count) => sum + count, 0),
    rowGroupCount: rowGroups.size,
    columns,
  };
}
