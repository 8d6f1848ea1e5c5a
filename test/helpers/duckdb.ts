/**
 * A throwaway DuckDB for tests that build inputs the fixtures lack (not our engine: tests must not lean on it).
 */
import { DuckDBInstance } from '@duckdb/node-api';

export async function duckdb(sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(sql);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
