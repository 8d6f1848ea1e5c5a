/**
 * Data block contents. AVRO_DATA_BLOCK (HoodieAvroDataBlock.serializeRecords, block version 3): int32 version (3),
 * int32 record count, then per record an int32 length and the record's Avro binary datum, written with the block's
 * SCHEMA header as the writer schema (Hudi reads through Avro schema resolution); versions 1 and 2 have the same layout
 * (hasRecordCount is always true). HFILE_DATA_BLOCK and PARQUET_DATA_BLOCK contents are a whole HFile / Parquet file
 * (FileFormatUtils.serializeRecordsToLogBlock), no version prefix, handed to a DataBlockContentDecoder.
 */
import type avro from 'avsc';
import { type AvroSchemaSource, type AvroTypeOptions, avroResolver, avroType, decodeDatum, encodeDatum, schemaText } from './avro.js';
import type { DataBlockType, LogBlock, LogBlockHeader, LogBlockInput } from './block.js';
import { ByteReader, ByteWriter } from './bytes.js';
import { LogFormatError, UnsupportedLogBlockError } from './errors.js';

/** HoodieLogBlock.version: what 0.14/0.15 write into Avro data and delete blocks. */
export const LOG_BLOCK_CONTENT_VERSION = 3;

export interface AvroDataBlockContent {
  version: number;
  /** Each record's Avro binary datum, in block order. */
  datums: Uint8Array[];
}

/** Content of an Avro data block from records already encoded as Avro binary datums. */
export function encodeAvroDataBlockDatums(datums: readonly Uint8Array[]): Uint8Array {
  const writer = new ByteWriter().int32(LOG_BLOCK_CONTENT_VERSION).int32(datums.length);
  for (const datum of datums) writer.int32(datum.length).bytes(datum);
  return writer.toBytes();
}

/** Content of an Avro data block: records encoded with `writerSchema` (which the block's SCHEMA header must carry). */
export function encodeAvroDataBlockContent(records: readonly unknown[], writerSchema: AvroSchemaSource, options: AvroTypeOptions = {}): Uint8Array {
  const type = avroType(writerSchema, options, 'Avro data block schema');
  return encodeAvroDataBlockDatums(records.map((record, i) => encodeDatum(type, record, `record ${i + 1}`)));
}

/** The version and per-record datums of an Avro data block's content, checking every length. */
export function splitAvroDataBlockContent(content: Uint8Array, location?: string): AvroDataBlockContent {
  const reader = new ByteReader(content);
  const fail = (detail: string) => new LogFormatError(`Avro data block content: ${detail}`, location === undefined ? {} : { location });
  const version = reader.int32();
  if (version === undefined || version < 1 || version > LOG_BLOCK_CONTENT_VERSION) throw fail(`block version ${version} is not 1..3`);
  const count = reader.int32();
  if (count === undefined || count < 0) throw fail(`record count ${count} is not a count`);
  // Each record takes at least its 4-byte length: a larger count is corruption, caught before looping over it.
  if (count > reader.remaining / 4) throw fail(`record count ${count} exceeds the ${reader.remaining} bytes left`);
  const datums: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const length = reader.int32();
    const datum = length === undefined ? undefined : reader.take(length);
    if (datum === undefined) throw fail(`record ${i + 1} (length ${length}) runs past the content`);
    datums.push(datum);
  }
  if (reader.remaining !== 0) throw fail(`${reader.remaining} bytes after the last record`);
  return { version, datums };
}

export interface DecodeAvroRecordsOptions extends AvroTypeOptions {
  /** Read the records as this schema (Avro schema resolution from the writer schema). Default: the writer schema. */
  readerSchema?: AvroSchemaSource;
  /** Names the file in errors. */
  location?: string;
}

/** The records of an Avro data block's content, written with `writerSchema`. */
export function decodeAvroDataBlockContent(content: Uint8Array, writerSchema: AvroSchemaSource, options: DecodeAvroRecordsOptions = {}): unknown[] {
  const { datums } = splitAvroDataBlockContent(content, options.location);
  const writer = avroType(writerSchema, options, 'writer schema');
  const reader = options.readerSchema === undefined ? writer : avroType(options.readerSchema, options, 'reader schema');
  const resolver = avroResolver(reader, writer, 'Avro data block');
  return datums.map((datum, i) => decodeDatum(reader, datum, resolver, `record ${i + 1} of the Avro data block`));
}

export interface AvroDataBlockOptions extends AvroTypeOptions {
  instantTime: string;
  /** The writer schema; it goes into the SCHEMA header as compact JSON (or as given, when text). */
  schema: AvroSchemaSource;
  records: readonly unknown[];
  /** More header entries (e.g. COMPACTED_BLOCK_TIMES). */
  header?: LogBlockHeader;
}

/** An Avro data block, as HoodieAppendHandle writes one per instant and file group. */
export function avroDataBlock(options: AvroDataBlockOptions): LogBlockInput {
  return {
    type: 'AVRO_DATA_BLOCK',
    header: { ...options.header, INSTANT_TIME: options.instantTime, SCHEMA: schemaText(options.schema) },
    content: encodeAvroDataBlockContent(options.records, options.schema, options),
  };
}

/**
 * A CDC_DATA_BLOCK, as HoodieCDCLogger writes one into a cdc log file: an Avro data block (HoodieCDCDataBlock extends
 * HoodieAvroDataBlock) of change records in the CDC schema, with INSTANT_TIME and SCHEMA headers.
 */
export function cdcDataBlock(options: AvroDataBlockOptions): LogBlockInput {
  return { ...avroDataBlock(options), type: 'CDC_DATA_BLOCK' };
}

/** The records of a read AVRO_DATA_BLOCK (or CDC_DATA_BLOCK, laid out alike), decoded with its SCHEMA header as writer schema. */
export function readAvroDataBlock(block: LogBlock, options: DecodeAvroRecordsOptions = {}): unknown[] {
  if (block.type !== 'AVRO_DATA_BLOCK' && block.type !== 'CDC_DATA_BLOCK') throw wrongType(block, 'AVRO_DATA_BLOCK', options.location);
  const schema = block.header.SCHEMA;
  if (schema === undefined) {
    throw new LogFormatError(
      `Avro data block at offset ${block.offset} has no SCHEMA header`,
      options.location === undefined ? {} : { location: options.location },
    );
  }
  return decodeAvroDataBlockContent(block.content, schema, options);
}

/** The avsc type of a block's SCHEMA header, e.g. to decode HFile values (Avro datums of that schema). */
export function blockSchemaType(block: LogBlock, options: AvroTypeOptions = {}): avro.Type | undefined {
  const schema = block.header.SCHEMA;
  return schema === undefined ? undefined : avroType(schema, options, 'SCHEMA header');
}

/**
 * Decodes the content of HFILE_DATA_BLOCK or PARQUET_DATA_BLOCK (a whole HFile or Parquet file) into records.
 * The block's header is passed along: its SCHEMA is the records' Avro schema.
 */
export interface DataBlockContentDecoder<T> {
  readonly blockType: Exclude<DataBlockType, 'AVRO_DATA_BLOCK'>;
  decode(content: Uint8Array, header: LogBlockHeader): T;
}

/** Run a content decoder on a data block of its type. */
export function decodeDataBlock<T>(block: LogBlock, decoder: DataBlockContentDecoder<T>, location?: string): T {
  if (block.type !== decoder.blockType) throw wrongType(block, decoder.blockType, location);
  return decoder.decode(block.content, block.header);
}

/** A data block whose content another codec produced (a Parquet or HFile file's bytes). */
export function rawDataBlock(type: Exclude<DataBlockType, 'AVRO_DATA_BLOCK'>, header: LogBlockHeader, content: Uint8Array): LogBlockInput {
  return { type, header, content };
}

function wrongType(block: LogBlock, expected: string, location: string | undefined): UnsupportedLogBlockError {
  return new UnsupportedLogBlockError(`block at offset ${block.offset} is a ${block.type}, not a ${expected}`, location === undefined ? {} : { location });
}
