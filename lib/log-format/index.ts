/**
 * Hudi's log file format (table version 6, Hudi 0.14/0.15), for merge-on-read file slices, the metadata table and
 * the archived timeline: pure encoders and decoders over bytes, and a thin reader and writer over the Storage port.
 */

export { type AvroSchemaSource, type AvroTypeOptions, avroType, schemaText } from './avro.js';
export * from './block.js';
export * from './command-block.js';
export * from './data-block.js';
export * from './delete-block.js';
export { LogFormatError, UnsupportedLogBlockError } from './errors.js';
export * from './log-files.js';
export * from './names.js';
export * from './value-wrappers.js';
