/**
 * DuckDB's Node API, loaded on first use: loading it (its native binding) is most of a command's start-up, and most
 * commands (clean, archive, status, the planning and commit steps) never query Parquet through it. Types are imported
 * as types; values (type constructors, type ids, the instance) come from duckdb().
 */
import { createRequire } from 'node:module';
import type * as DuckDBApi from '@duckdb/node-api';

export type DuckDBModule = typeof DuckDBApi;

const requireModule = createRequire(import.meta.url);
let loaded: DuckDBModule | undefined;

/** The @duckdb/node-api module, loaded the first time it is asked for (a CommonJS package: require is synchronous). */
export function duckdb(): DuckDBModule {
  loaded ??= requireModule('@duckdb/node-api') as DuckDBModule;
  return loaded;
}
