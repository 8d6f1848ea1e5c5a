/**
 * A file's column statistics as the clustering report prints them: the footer's chunk statistics
 * (lib/parquet/statistics.ts, read as DuckDB's parquet_metadata reads them), values JSON-ready like row values.
 */
import type { FooterSummary } from '../parquet/footer.js';
import type { ParquetPhysicalType } from '../parquet/schema.js';
import { type JsonValue, statisticToJson } from './row-format.js';

/** Min/max/null figures of one leaf column of one file, summed over its row groups. */
export interface ColumnStats {
  /** Parquet column path joined by '.', as Hudi's column stats name it (e.g. 'structField.field1'). */
  column: string;
  physicalType: ParquetPhysicalType;
  /** JSON-ready like row values (row-format.ts); null when some row group has no min/max or the type has no comparable form (BLOB). */
  min: JsonValue;
  max: JsonValue;
  /** null when some row group does not record it. */
  nullCount: number | null;
  valueCount: number;
}

export interface FileColumnStats {
  file: string;
  rowCount: number;
  rowGroupCount: number;
  columns: ColumnStats[];
}

/** The statistics of a footer read with `{ statistics: true }`. */
export function columnStatsOf(footer: FooterSummary): FileColumnStats {
  const statistics = footer.statistics;
  if (statistics === undefined) throw new Error(`the footer of ${footer.file} was read without its statistics`);
  return {
    file: footer.file,
    rowCount: statistics.rowCount,
    rowGroupCount: statistics.rowGroupCount,
    columns: statistics.columns.map((leaf) => ({
      column: leaf.column,
      physicalType: leaf.physicalType,
      min: leaf.min === null ? null : statisticToJson(leaf.min),
      max: leaf.max === null ? null : statisticToJson(leaf.max),
      nullCount: leaf.nullCount,
      valueCount: leaf.valueCount,
    })),
  };
}
