/**
 * The package's library entry point (`import … from 'hudi-serverless'`): create, open, read and write Hudi
 * copy-on-write tables (version 6) on S3 or a local disk, as the CLI does (clustering, cleaning and archiving: the
 * CLI and the deployed functions). Everything else in lib/ is internal.
 */

export { AlreadyExistsError, ConflictError, HudiError, NotFoundError, UnsupportedTableError } from './errors.js';
export { readSnapshot, type Snapshot, type SnapshotOptions } from './read/reader.js';
export { LocalStorage, type OpenStorageOptions, openStorage, S3Storage, type Storage } from './storage/index.js';
export { type NewTableOptions, newTableOptionsFromWriteProperties, type TableConfig } from './table/config.js';
export { createTable } from './table/init.js';
export { type LayoutName, type TableService, UnsupportedLayoutError } from './table/layouts.js';
export { HudiTable, type OpenTableOptions, type TableSchema } from './table/table.js';
export { type WriteOptions, type WriteResult, writeBatch } from './writer/write-client.js';
