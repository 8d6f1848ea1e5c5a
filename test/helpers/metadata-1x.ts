/**
 * Metadata-table records in the shape Spark's `hudi_metadata('<table>')` returns them (a row's JSON), so that what
 * we read compares with what Hudi reads: unions as `member<i>` structs, longs and decimals as numbers, bytes Base64.
 */
import { VALUE_WRAPPERS } from '../../lib/log-format/value-wrappers.js';
import type { MetadataRecord, WrappedValue } from '../../lib/metadata/records.js';

function sparkValue(value: WrappedValue | null): unknown {
  if (value === null) return null;
  const index = VALUE_WRAPPERS.findIndex(([, type]) => type === value.type);
  let inner: unknown;
  if (value.type === 'decimal') inner = Number(value.unscaled) / 1e15;
  else if (value.type === 'bytes') inner = Buffer.from(value.value).toString('base64');
  else if (typeof value.value === 'bigint') inner = Number(value.value);
  else inner = value.value;
  return { [`member${index}`]: { value: inner } };
}

/** One record as Spark's JSON row of hudi_metadata(). */
export function sparkMetadataRow(record: MetadataRecord): Record<string, unknown> {
  const row: Record<string, unknown> = { key: record.key, type: record.type };
  switch (record.type) {
    case 1:
    case 2:
      row['filesystemMetadata'] = Object.fromEntries([...record.files].map(([name, info]) => [name, { size: info.size, isDeleted: info.isDeleted }]));
      break;
    case 3:
    case 6: {
      const s = record.columnStats;
      const stats: Record<string, unknown> = {
        fileName: s.fileName,
        columnName: s.columnName,
        minValue: sparkValue(s.minValue),
        maxValue: sparkValue(s.maxValue),
        valueCount: s.valueCount,
        nullCount: s.nullCount,
        totalSize: s.totalSize,
        totalUncompressedSize: s.totalUncompressedSize,
        isDeleted: s.isDeleted,
      };
      if (s.isTightBound !== undefined) stats['isTightBound'] = s.isTightBound;
      if (s.valueType !== undefined && s.valueType !== null) {
        stats['valueType'] = s.valueType.additionalInfo === null ? { typeOrdinal: s.valueType.typeOrdinal } : { ...s.valueType };
      }
      row['ColumnStatsMetadata'] = Object.fromEntries(Object.entries(stats).filter(([, v]) => v !== null));
      break;
    }
    default:
      throw new TypeError(`record type ${record.type} has no Spark row shape here`);
  }
  return row;
}

/**
 * A row in a form both sides reduce to: null fields dropped (Spark lists every struct field, every union member),
 * numeric strings as numbers (the harness gives decimals and large longs as strings), -0 as 0, and non-integers at
 * float precision (floats come back at their shortest float32 text).
 */
export function comparableMetadataRow(row: unknown): unknown {
  if (row === null || row === undefined) return undefined;
  if (Array.isArray(row)) return row.map(comparableMetadataRow);
  if (typeof row === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const reduced = comparableMetadataRow(value);
      if (reduced !== undefined) out[key] = reduced;
    }
    return out;
  }
  if (typeof row === 'string' && row.trim() !== '' && Number.isFinite(Number(row))) return comparableMetadataRow(Number(row));
  if (typeof row === 'number') {
    if (row === 0) return 0;
    return Number.isInteger(row) ? row : Number(Math.fround(row).toPrecision(7));
  }
  return row;
}
