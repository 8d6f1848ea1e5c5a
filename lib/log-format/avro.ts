/**
 * avsc types for log block records: parsed once per schema text, plain objects out, optional bigint longs.
 */
import avro from 'avsc';
import { errorMessage } from '../errors.js';
import { LogFormatError } from './errors.js';

/** An Avro schema: its JSON text (as Hudi stores it in the SCHEMA header) or the parsed JSON. */
export type AvroSchemaSource = string | object;

export interface AvroTypeOptions {
  /**
   * How Avro longs come out: JavaScript numbers (default; a value beyond 2^53 fails instead of losing precision)
   * or bigints.
   */
  longs?: 'number' | 'bigint';
  /**
   * avsc's union representation. Default false: a union value is the bare branch value, which reads any union and
   * writes the first branch the value fits. Pass true to get and give `{ "<branch name>": value }`.
   */
  wrapUnions?: boolean;
}

type AvroResolver = ReturnType<avro.Type['createResolver']>;

const BIGINT_LONG = avro.types.LongType.__with({
  fromBuffer: (buffer: Buffer) => buffer.readBigInt64LE(),
  toBuffer: (value: bigint) => {
    const buffer = Buffer.alloc(8);
    buffer.writeBigInt64LE(BigInt(value));
    return buffer;
  },
  fromJSON: (value: unknown) => BigInt(value as string | number),
  toJSON: (value: bigint) => Number(value),
  isValid: (value: unknown) => typeof value === 'bigint',
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

function bigintLongs(schema: avro.Schema): avro.Type | undefined {
  const isLong = schema === 'long' || (typeof schema === 'object' && !Array.isArray(schema) && (schema as { type?: unknown }).type === 'long');
  return isLong ? BIGINT_LONG : undefined;
}

const cache = new Map<string, avro.Type>();
const CACHE_LIMIT = 64;

/** The schema's text as Java's Schema.toString() would carry it in a header (compact JSON). */
export function schemaText(schema: AvroSchemaSource): string {
  return typeof schema === 'string' ? schema : JSON.stringify(schema);
}

/** An avsc type for a schema; `what` names the schema in errors. */
export function avroType(schema: AvroSchemaSource, options: AvroTypeOptions = {}, what = 'schema'): avro.Type {
  const text = schemaText(schema);
  const key = `${options.longs ?? 'number'}|${options.wrapUnions === true}|${text}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let json: unknown;
  try {
    json = typeof schema === 'string' ? JSON.parse(schema) : schema;
  } catch (cause) {
    throw new LogFormatError(`the ${what} is not JSON: ${errorMessage(cause)}`, { cause });
  }
  let type: avro.Type;
  try {
    // A fresh registry per schema: different versions of one record name must not collide. The hook catches every
    // long, including `{"type":"long","logicalType":…}`, which a registry override would miss.
    type = avro.Type.forSchema(json as avro.Schema, {
      wrapUnions: options.wrapUnions === true,
      registry: {},
      ...(options.longs === 'bigint' ? { typeHook: bigintLongs } : {}),
    });
  } catch (cause) {
    throw new LogFormatError(`the ${what} is not a valid Avro schema: ${errorMessage(cause)}`, { cause });
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, type);
  return type;
}

/** A resolver reading data written with `writer` as `reader` (Avro schema resolution), or undefined for the same schema. */
export function avroResolver(reader: avro.Type, writer: avro.Type, what: string): AvroResolver | undefined {
  if (reader === writer) return undefined;
  try {
    return reader.createResolver(writer);
  } catch (cause) {
    throw new LogFormatError(`${what}: the writer schema cannot be read with the reader schema: ${errorMessage(cause)}`, { cause });
  }
}

/** Encode one datum; throws naming the first fields that do not fit. */
export function encodeDatum(type: avro.Type, value: unknown, what: string): Uint8Array {
  const problems: string[] = [];
  const valid = type.isValid(value, {
    errorHook: (path: string[], fieldValue: unknown, fieldType: avro.Type) => {
      problems.push(`${path.join('.') || '(record)'} = ${describe(fieldValue)} is not a valid ${fieldType.branchName ?? fieldType.typeName}`);
    },
  });
  if (!valid) {
    throw new LogFormatError(`${what} does not fit its schema: ${problems.slice(0, 5).join('; ')}`, {
      fix: 'give every field a value of its schema type (null only where the type allows it)',
    });
  }
  const buffer = type.toBuffer(value);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** Decode exactly one datum from `bytes`. */
export function decodeDatum(type: avro.Type, bytes: Uint8Array, resolver: AvroResolver | undefined, what: string): unknown {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let decoded: { value: unknown; offset: number };
  try {
    decoded = type.decode(buffer, 0, resolver);
  } catch (cause) {
    throw new LogFormatError(`${what} does not decode: ${errorMessage(cause)}`, { cause });
  }
  if (decoded.offset < 0) throw new LogFormatError(`${what} is cut short (${bytes.length} bytes)`);
  if (decoded.offset !== bytes.length) {
    throw new LogFormatError(`${what} has ${bytes.length - decoded.offset} bytes after its value`);
  }
  return toPlainData(decoded.value);
}

/** avsc decodes records as class instances; hand out plain objects and arrays (bytes stay Buffers). */
export function toPlainData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlainData);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, toPlainData(entry)]));
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
