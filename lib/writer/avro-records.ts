/**
 * Table rows (the values readRows gives, lib/engine/row-format.ts) as Avro records of the table's schema, for the
 * data blocks of merge-on-read log files: what HoodieAppendHandle serializes (the record with its meta fields in the
 * writer schema). The inverse of lib/merge-on-read/avro-rows.ts; values are shaped for avsc with bare unions and
 * bigint longs.
 */

import type { JsonValue, Row } from '../engine/row-format.js';
import { HudiError } from '../errors.js';
import type { AvroRecordSchema } from '../table/schema.js';

type AvroSchema = string | readonly AvroSchema[] | { readonly [key: string]: unknown };

/** One row as an Avro record of `schema` (fields the row lacks are null). */
export function rowToAvroRecord(schema: AvroRecordSchema, row: Row): Record<string, unknown> {
  return convert(schema as unknown as AvroSchema, row, new Map(), 'record') as Record<string, unknown>;
}

function fail(path: string, value: unknown, type: string): HudiError {
  const text = JSON.stringify(value) ?? String(value);
  return new HudiError(`value ${text.length > 60 ? `${text.slice(0, 57)}...` : text} of ${path} does not fit Avro type ${type}`, {
    fix: "the table's schema and its files disagree; this is a bug in the log writer, nothing was committed",
  });
}

function convert(schema: AvroSchema, value: JsonValue | undefined, named: Map<string, AvroSchema>, path: string): unknown {
  if (typeof schema === 'string') {
    const known = named.get(schema);
    if (known !== undefined) return convert(known, value, named, path);
    return primitive(schema, undefined, value ?? null, path);
  }
  if (Array.isArray(schema)) {
    if (value === null || value === undefined) {
      if (schema.some((branch) => branch === 'null')) return null;
      throw fail(path, value, 'a non-null union');
    }
    const branches = schema.filter((branch) => branch !== 'null');
    if (branches.length !== 1) throw fail(path, value, `a union of ${branches.length} non-null branches (not written by Spark)`);
    return convert(branches[0]!, value, named, path);
  }
  const object = schema as { readonly [key: string]: unknown };
  const type = object['type'] as AvroSchema;
  if (value === null || value === undefined) {
    if (type === 'null') return null;
    throw fail(path, value, typeof type === 'string' ? type : 'a non-null type');
  }
  switch (type) {
    case 'record': {
      if (typeof object['name'] === 'string') named.set(object['name'], object);
      if (typeof value !== 'object' || Array.isArray(value)) throw fail(path, value, 'record');
      const out: Record<string, unknown> = {};
      for (const field of (object['fields'] ?? []) as { name: string; type: AvroSchema }[]) {
        out[field.name] = convert(field.type, (value as Record<string, JsonValue>)[field.name] ?? null, named, `${path}.${field.name}`);
      }
      return out;
    }
    case 'enum':
      if (typeof object['name'] === 'string') named.set(object['name'], object);
      return String(value);
    case 'fixed': {
      if (typeof object['name'] === 'string') named.set(object['name'], object);
      return primitive('fixed', object, value, path);
    }
    case 'array':
      if (!Array.isArray(value)) throw fail(path, value, 'array');
      return value.map((item, i) => convert(object['items'] as AvroSchema, item, named, `${path}[${i}]`));
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) throw fail(path, value, 'map');
      const out: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(value)) out[key] = convert(object['values'] as AvroSchema, entry, named, `${path}[${key}]`);
      return out;
    }
    default:
      if (typeof type === 'string') return primitive(type, object, value, path);
      return convert(type, value, named, path);
  }
}

function primitive(type: string, schema: { readonly [key: string]: unknown } | undefined, value: JsonValue, path: string): unknown {
  const logical = schema?.['logicalType'];
  if (logical === 'decimal' && (type === 'bytes' || type === 'fixed')) {
    const bytes = decimalBytes(String(value), Number(schema?.['scale'] ?? 0), path);
    return type === 'fixed' ? signExtend(bytes, Number(schema?.['size']), path) : bytes;
  }
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      if (typeof value !== 'boolean') throw fail(path, value, type);
      return value;
    case 'string':
      if (typeof value !== 'string') throw fail(path, value, type);
      return value;
    case 'int':
      if (logical === 'date') return daysOf(value, path);
      if (logical === 'time-millis') return Number(nanosOfDay(value, path) / 1_000_000n);
      if (typeof value !== 'number' || !Number.isInteger(value)) throw fail(path, value, type);
      return value;
    case 'long':
      if (logical === 'timestamp-micros' || logical === 'local-timestamp-micros') return epochNanos(value, path) / 1000n;
      if (logical === 'timestamp-millis' || logical === 'local-timestamp-millis') return epochNanos(value, path) / 1_000_000n;
      if (logical === 'time-micros') return nanosOfDay(value, path) / 1000n;
      if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
      if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
      throw fail(path, value, type);
    case 'float':
    case 'double':
      if (typeof value === 'number') return value;
      if (value === 'NaN') return Number.NaN;
      if (value === 'Infinity') return Number.POSITIVE_INFINITY;
      if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
      throw fail(path, value, type);
    case 'bytes':
    case 'fixed':
      if (typeof value !== 'string') throw fail(path, value, type);
      return Buffer.from(value, 'base64');
    default:
      throw fail(path, value, type);
  }
}

/** Big-endian two's complement of the unscaled value of an exact decimal string. */
function decimalBytes(text: string, scale: number, path: string): Buffer {
  const match = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
  if (match === null) throw fail(path, text, 'decimal');
  const fraction = (match[3] ?? '').padEnd(scale, '0');
  if (fraction.length > scale) throw fail(path, text, `decimal with scale ${scale}`);
  let unscaled = BigInt(`${match[2]}${fraction}`);
  if (match[1] === '-') unscaled = -unscaled;
  // The fewest bytes whose signed range holds the value (Java's BigInteger.toByteArray).
  let length = 1;
  while (unscaled < -(1n << BigInt(8 * length - 1)) || unscaled >= 1n << BigInt(8 * length - 1)) length++;
  const out = Buffer.alloc(length);
  let rest = BigInt.asUintN(out.length * 8, unscaled);
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

function signExtend(bytes: Buffer, size: number, path: string): Buffer {
  if (!Number.isInteger(size) || bytes.length > size) throw fail(path, bytes.toString('hex'), `fixed(${size}) decimal`);
  const fill = bytes.length > 0 && (bytes[0]! & 0x80) !== 0 ? 0xff : 0;
  return Buffer.concat([Buffer.alloc(size - bytes.length, fill), bytes]);
}

function daysOf(value: JsonValue, path: string): number {
  if (typeof value !== 'string') throw fail(path, value, 'date');
  const millis = Date.parse(`${value}T00:00:00Z`);
  if (Number.isNaN(millis)) throw fail(path, value, 'date');
  return Math.round(millis / 86_400_000);
}

/** Epoch nanoseconds of `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z`. */
function epochNanos(value: JsonValue, path: string): bigint {
  if (typeof value !== 'string') throw fail(path, value, 'timestamp');
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(value);
  const seconds = match === null ? Number.NaN : Date.parse(`${match[1]}Z`);
  if (match === null || Number.isNaN(seconds)) throw fail(path, value, 'timestamp');
  return BigInt(seconds) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'));
}

function nanosOfDay(value: JsonValue, path: string): bigint {
  const match = typeof value === 'string' ? /^(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?$/.exec(value) : null;
  if (match === null) throw fail(path, value, 'time');
  const seconds = BigInt(Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]));
  return seconds * 1_000_000_000n + BigInt((match[4] ?? '').padEnd(9, '0'));
}
