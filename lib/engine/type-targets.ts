/**
 * Parquet type targets: the types a written file must carry (the inputs' or the table's files'), what DuckDB type to
 * cast a column to so that DuckDB writes them itself (timestamp units), and the repair-and-verify step that fixes
 * what DuckDB cannot write (lib/parquet/type-repair.ts) and proves the result decodes.
 */

import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { readFooterSummary } from '../parquet/footer.js';
import { latestTopLevelFields, type ParquetColumnInfo, type TopLevelFields, type TypeNode } from '../parquet/schema.js';
import { changesValues, planTypeRepairs, repairParquetTypes } from '../parquet/type-repair.js';
import { guardFiles } from './connection.js';
import { duckdb } from './duckdb.js';
import { fileListSql, READ_OPTIONS, sqlIdentifier } from './sql.js';

/** The Parquet type tree per top-level column of some files (the last file wins), used as a write target. */
export type ParquetTypeTargets = TopLevelFields;

/** Read from the footers in JavaScript: DuckDB's parquet_schema rows cost several times the footer read per file. */
export function parquetTypeTargets(files: readonly string[]): ParquetTypeTargets {
  return typeTargetsOf(files.map((file) => readFooterSummary(file).columns));
}

/** Type targets from schemas already read (in file order: the last file wins). */
export function typeTargetsOf(schemas: readonly (readonly ParquetColumnInfo[])[]): ParquetTypeTargets {
  return latestTopLevelFields(schemas);
}

/**
 * The table's targets with what they lack taken from `written` (columns and struct fields a schema evolution
 * added): existing parts keep the table's encodings, new parts get the written ones.
 */
export function withNewTypesFrom(table: ParquetTypeTargets, written: ParquetTypeTargets): ParquetTypeTargets {
  const merge = (old: TypeNode, added: TypeNode): TypeNode => {
    if (old.kind === 'struct' && added.kind === 'struct') {
      const fields = new Map(old.fields);
      for (const [name, child] of added.fields) fields.set(name, fields.has(name) ? merge(fields.get(name)!, child) : child);
      return { ...old, fields };
    }
    if (old.kind === 'list' && added.kind === 'list') return { ...old, element: merge(old.element, added.element) };
    if (old.kind === 'map' && added.kind === 'map') {
      return { ...old, value: old.value === undefined || added.value === undefined ? old.value : merge(old.value, added.value) };
    }
    return old;
  };
  const result = new Map(table);
  for (const [name, node] of written) result.set(name, result.has(name) ? merge(result.get(name)!, node) : node);
  return result;
}

/** The DuckDB type to cast a column to so that DuckDB's Parquet writer keeps the target's timestamp units. */
export function preservingDuckDbType(type: DuckDBType, target: ParquetTypeTargets, column: string): DuckDBType {
  const node = target.get(column);
  return node === undefined ? type : preservingType(type, node);
}

/** The DuckDB type whose Parquet writer reproduces the input's timestamp units. */
function preservingType(type: DuckDBType, node: TypeNode): DuckDBType {
  const { DuckDBListType, DuckDBMapType, DuckDBStructType, DuckDBTypeId, TIMESTAMP_MS, TIMESTAMP_NS } = duckdb();
  if (node.kind === 'primitive') {
    const { logicalType, timeUnit } = node.info;
    const isTimestamp = logicalType === 'TIMESTAMP' && (type.typeId === DuckDBTypeId.TIMESTAMP || type.typeId === DuckDBTypeId.TIMESTAMP_TZ);
    if (isTimestamp && timeUnit === 'MILLIS') return TIMESTAMP_MS;
    if (isTimestamp && timeUnit === 'NANOS') return TIMESTAMP_NS;
    return type;
  }
  if (node.kind === 'list' && type instanceof DuckDBListType) return new DuckDBListType(preservingType(type.valueType, node.element));
  if (node.kind === 'map' && type instanceof DuckDBMapType) {
    return new DuckDBMapType(preservingType(type.keyType, node.key), node.value === undefined ? type.valueType : preservingType(type.valueType, node.value));
  }
  if (node.kind === 'struct' && type instanceof DuckDBStructType) {
    return new DuckDBStructType(
      type.entryNames,
      type.entryNames.map((name, index) => {
        const child = node.fields.get(name);
        const childType = type.entryTypes[index]!;
        return child === undefined ? childType : preservingType(childType, child);
      }),
    );
  }
  return type;
}

/**
 * Make a file DuckDB just wrote carry the target's Parquet types where DuckDB cannot write them (decimal physical
 * type, timestamp UTC flag). Returns the repaired columns and the file's types as they are now. A repaired file is
 * decoded once (every repaired top-level column hashed) to prove its pages are sound.
 */
export async function conformParquetTypes(
  connection: DuckDBConnection,
  file: string,
  target: ParquetTypeTargets,
): Promise<{ repairedColumns: string[]; types: ParquetTypeTargets }> {
  const written = parquetTypeTargets([file]);
  const repairs = planTypeRepairs(target, written);
  if (repairs.length === 0) return { repairedColumns: [], types: written };
  await repairParquetTypes(file, repairs);
  // Only repairs that re-encode values or change their meaning are read back; an annotation dropped is not.
  const repaired = repairs.filter(changesValues);
  const repairedTopLevel = [...new Set(repaired.map((repair) => repair.topLevelColumn))];
  if (repairedTopLevel.length > 0) {
    await guardFiles(connection, [file], () =>
      connection.run(
        `SELECT ${repairedTopLevel.map((name, index) => `max(hash(${sqlIdentifier(name)})) AS h${index}`).join(', ')}
         FROM read_parquet(${fileListSql([file])}, ${READ_OPTIONS})`,
      ),
    );
  }
  return { repairedColumns: repaired.map((repair) => repair.column), types: parquetTypeTargets([file]) };
}
