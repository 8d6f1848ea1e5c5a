/**
 * DuckDB types for the fields of a table's Avro schema, for columns the schema has and no file at hand carries
 * (a column added by a commit whose files are not the ones a write stages): what Spark's Hudi reader makes of them.
 */
import type { DuckDBType } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';

/** The DuckDB type of an Avro type (nullable unions read as their non-null branch); undefined when there is none. */
export function duckDbTypeOfAvro(avro: unknown): DuckDBType | undefined {
  const { BLOB, DATE, DuckDBDecimalType, DuckDBListType, DuckDBMapType, DuckDBStructType, TIMESTAMP, TIMESTAMP_MS, TIMESTAMPTZ, VARCHAR } = duckdb();
  if (Array.isArray(avro)) {
    const branches = avro.filter((branch) => branch !== 'null');
    return branches.length === 1 ? duckDbTypeOfAvro(branches[0]) : undefined;
  }
  if (typeof avro === 'string') return primitiveType(avro);
  if (avro === null || typeof avro !== 'object') return undefined;
  const node = avro as Record<string, unknown>;
  const logical = node['logicalType'];
  if (logical === 'decimal') {
    const precision = node['precision'];
    // DuckDB's decimals stop at 38 digits.
    if (typeof precision !== 'number' || precision > 38) return undefined;
    return new DuckDBDecimalType(precision, typeof node['scale'] === 'number' ? node['scale'] : 0);
  }
  if (logical === 'date' && node['type'] === 'int') return DATE;
  if (logical === 'timestamp-micros' && node['type'] === 'long') return TIMESTAMPTZ;
  if (logical === 'timestamp-millis' && node['type'] === 'long') return TIMESTAMP_MS;
  if (logical === 'local-timestamp-micros' && node['type'] === 'long') return TIMESTAMP;
  switch (node['type']) {
    case 'record': {
      const fields = Array.isArray(node['fields']) ? (node['fields'] as { name: string; type: unknown }[]) : [];
      const types = fields.map((field) => duckDbTypeOfAvro(field.type));
      if (types.some((type) => type === undefined)) return undefined;
      return new DuckDBStructType(
        fields.map((field) => field.name),
        types as DuckDBType[],
      );
    }
    case 'array': {
      const items = duckDbTypeOfAvro(node['items']);
      return items === undefined ? undefined : new DuckDBListType(items);
    }
    case 'map': {
      const values = duckDbTypeOfAvro(node['values']);
      return values === undefined ? undefined : new DuckDBMapType(VARCHAR, values);
    }
    case 'enum':
      return VARCHAR;
    case 'fixed':
      return BLOB;
    default:
      return typeof node['type'] === 'string' && logical === undefined ? primitiveType(node['type']) : undefined;
  }
}

function primitiveType(name: string): DuckDBType | undefined {
  const { BIGINT, BLOB, BOOLEAN, DOUBLE, FLOAT, INTEGER, VARCHAR } = duckdb();
  const primitives: Readonly<Record<string, DuckDBType>> = {
    boolean: BOOLEAN,
    int: INTEGER,
    long: BIGINT,
    float: FLOAT,
    double: DOUBLE,
    string: VARCHAR,
    bytes: BLOB,
  };
  return primitives[name];
}
