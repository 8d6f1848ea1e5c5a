/**
 * The package's library entry point (`import … from 'hudi-serverless'`): create, open, read and write Hudi
 * copy-on-write tables (version 6) on S3 or a local disk, as the CLI does (clustering, cleaning and archiving: the
 * CLI and the deployed functions). Everything else in lib/ is internal.
 */
export { HudiTable, type OpenTableOptions, type TableSchema } from './table.js';
export { createTable } from './table-init.js';
export { newTableOptionsFromWriteProperties, type NewTableOptions, type TableConfig } from './table-config.js';
export { readSnapshot, type Snapshot, type SnapshotOptions } from './reader.js';
export { writeBatch, type WriteOptions, type WriteResult } from './writer/write-client.js';
export { LocalStorage, S3Storage, openStorage, type OpenStorageOptions, type Storage } from './storage/index.js';
export { AlreadyExistsError, ConflictError, HudiError, NotFoundError, UnsupportedTableError } from './errors.js';
export { UnsupportedLayoutError, type LayoutName, type TableService } from './table-layouts.js';
