/**
 * DuckDB's Node API, loaded on first use: loading it (its native binding) is most of a command's start-up, and most
 * commands (clean, archive, status, the planning and commit steps) never query Parquet through it. Types are imported
 * as types; values (type constructors, type ids, the instance) come from duckdb().
 */
import { createRequire } from 'node:module';
import type * as DuckDBApi from '@duckdb/node-api';

export type DuckDBModule = typeof DuckDBApi;

let loaded: DuckDBModule | undefined;

/**
 * The @duckdb/node-api module, loaded the first time it is asked for (a CommonJS package: require is synchronous).
 * The bundles have a require: esbuild inlines the package's JavaScript there (one file to load, not a hundred), and
 * only its native binding stays external (infra/build.mjs). Unbundled ES modules (tsx, the tests) create one.
 */
export function duckdb(): DuckDBModule {
  loaded ??= (typeof require === 'function' ? require('@duckdb/node-api') : createRequire(import.meta.url)('@duckdb/node-api')) as DuckDBModule;
  return loaded;
}
