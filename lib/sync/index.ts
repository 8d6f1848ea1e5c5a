/** Catalog sync (AWS Glue, Hudi's AwsGlueCatalogSyncTool): settings, schema mapping, the sync itself. */

export * from './after-commit.js';
export * from './behaviour.js';
export * from './config.js';
export * from './glue.js';
export * from './hive-schema.js';
