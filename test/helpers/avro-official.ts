/**
 * Reading Avro timeline files with avsc's own container reader and Hudi's official schemas
 * (test/fixtures/avro: getClassSchema() of the 0.15 bundle), not our decoder or our schemas.
 */
import avro from 'avsc';
import { officialAvroSchema } from './fixtures.js';

/** A reader type for an official schema (each one is self-contained), optionally changed first (older/newer versions). */
export function officialAvroType(name: string, change: (schema: OfficialRecordSchema) => void = () => {}): avro.Type {
  const schema = structuredClone(officialAvroSchema(name)) as OfficialRecordSchema;
  change(schema);
  return avro.Type.forSchema(schema as unknown as avro.Schema, { registry: {}, wrapUnions: false });
}

export interface OfficialRecordSchema {
  type: 'record';
  name: string;
  namespace?: string;
  fields: { name: string; type: unknown; default?: unknown }[];
}

/** The record schema named `name` inside `schema` (a nested definition), for changes to it. */
export function nestedRecord(schema: unknown, name: string): OfficialRecordSchema {
  const found: OfficialRecordSchema[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (record['type'] === 'record' && record['name'] === name) found.push(record as unknown as OfficialRecordSchema);
      Object.values(record).forEach(visit);
    }
  };
  visit(schema);
  if (found.length !== 1) throw new Error(`${found.length} definitions of record ${name}`);
  return found[0]!;
}

/** avsc hands out records as class instances; compare plain data. */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, plain(entry)]));
}

export interface ThirdPartyRead {
  records: unknown[];
  codec: string;
  metadataKeys: string[];
  writerName: string | undefined;
  /** The writer schema text in the file's header (avro.schema). */
  writerSchemaText: string;
}

/** Read a container with avsc's own stream decoder, resolving to `readerType`. */
export function readWithAvscStreams(bytes: Uint8Array, readerType: avro.Type): Promise<ThirdPartyRead> {
  return new Promise((resolve, reject) => {
    const decoder = new avro.streams.BlockDecoder({ readerSchema: readerType });
    const result: ThirdPartyRead = { records: [], codec: '', metadataKeys: [], writerName: undefined, writerSchemaText: '' };
    decoder.on('metadata', (writerType: avro.Type, codec: string, header: { meta: Record<string, Buffer> }) => {
      result.codec = codec;
      result.metadataKeys = Object.keys(header.meta);
      result.writerName = writerType.name;
      result.writerSchemaText = header.meta['avro.schema']?.toString('utf8') ?? '';
    });
    decoder.on('data', (record: unknown) => result.records.push(plain(record)));
    decoder.on('error', reject);
    decoder.on('end', () => resolve(result));
    decoder.end(Buffer.from(bytes));
  });
}

/** The one record of a timeline file, read with the official schema `name`. */
export async function readOfficial(bytes: Uint8Array, name: string): Promise<ThirdPartyRead & { record: unknown }> {
  const read = await readWithAvscStreams(bytes, officialAvroType(name));
  if (read.records.length !== 1) throw new Error(`${read.records.length} records in a ${name} file`);
  return { ...read, record: read.records[0] };
}
