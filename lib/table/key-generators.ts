/**
 * Key generators: a record's key and partition path, as Hudi's Simple / Complex / Nonpartitioned /
 * TimestampBased / Custom key generators compute them.
 */
import { HudiError } from '../errors.js';
import { KEY_GENERATORS, type TableConfig } from './config.js';

export const DEFAULT_PARTITION_PATH = '__HIVE_DEFAULT_PARTITION__';
const NULL_RECORDKEY_PLACEHOLDER = '__null__';
const EMPTY_RECORDKEY_PLACEHOLDER = '__empty__';

export type FieldValue = string | number | bigint | boolean | Date | null | undefined;

export interface HoodieKey {
  readonly recordKey: string;
  readonly partitionPath: string;
}

export interface KeyGenerator {
  readonly recordKeyFields: readonly string[];
  readonly partitionFields: readonly string[];
  recordKey(record: Readonly<Record<string, unknown>>): string;
  partitionPath(record: Readonly<Record<string, unknown>>): string;
}

export interface KeyGeneratorOptions {
  readonly keyGeneratorClass: string;
  readonly recordKeyFields: readonly string[];
  readonly partitionFields: readonly string[];
  readonly hiveStylePartitioning: boolean;
  readonly urlEncodePartitioning: boolean;
  /** hoodie.keygen.timebased.* and other key generator options. */
  readonly properties: ReadonlyMap<string, string>;
}

export function keyGeneratorOptionsFromTable(config: TableConfig): KeyGeneratorOptions {
  return {
    keyGeneratorClass: config.keyGeneratorClass,
    recordKeyFields: config.recordKeyFields,
    partitionFields: config.partitionFields,
    hiveStylePartitioning: config.hiveStylePartitioning,
    urlEncodePartitioning: config.urlEncodePartitioning,
    properties: config.properties,
  };
}

/**
 * The table's options with the write's hoodie.keygen.* keys where the table stores none: Hudi 1.x keeps no
 * timestamp keys for a CustomKeyGenerator, so each write passes them, as Spark's writes do.
 */
export function keyGeneratorOptionsForWrite(config: TableConfig, writeProperties: ReadonlyMap<string, string>): KeyGeneratorOptions {
  const properties = new Map(config.properties);
  for (const [key, value] of writeProperties) {
    if ((key.startsWith('hoodie.keygen.') || key.startsWith('hoodie.deltastreamer.keygen.')) && !properties.has(key)) properties.set(key, value);
  }
  return { ...keyGeneratorOptionsFromTable(config), properties };
}

/** Nested fields are addressed as `a.b.c`, as in Hudi. */
function fieldValue(record: Readonly<Record<string, unknown>>, field: string): unknown {
  let value: unknown = record;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function valueToString(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return String(value);
}

/** Hudi's PartitionPathEncodeUtils.escapePathName: %XX for characters unsafe in a path segment (U+0000–U+001F too). */
export function escapePathName(path: string): string {
  const unsafe = new Set(['"', '#', '%', "'", '*', '/', ':', '=', '?', '\\', '\u007f', '{', '[', ']', '^']);
  let out = '';
  for (const ch of path) {
    const code = ch.charCodeAt(0);
    if (code <= 0x1f || unsafe.has(ch)) out += `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += ch;
  }
  return out;
}

/** The inverse of escapePathName: %XX back to its character. */
export function unescapePathName(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * The partition field values a partition path encodes, as Hudi's Spark reader recovers columns that
 * hoodie.datasource.write.drop.partition.columns left out of the files (HoodieSparkUtils.parsePartitionColumnValues):
 * strings, null for the default partition. With one partition field the whole path is its value (timestamp formats
 * such as yyyy/MM/dd hold slashes); with more, each path segment is one field's value.
 */
export function partitionValuesFromPath(
  partitionPath: string,
  options: Pick<KeyGeneratorOptions, 'partitionFields' | 'hiveStylePartitioning' | 'urlEncodePartitioning'>,
): Record<string, string | null> {
  const fields = options.partitionFields;
  const segments = fields.length === 1 ? [partitionPath] : partitionPath.split('/');
  if (segments.length !== fields.length) {
    throw new HudiError(
      `partition path "${partitionPath}" has ${segments.length} segments for the ${fields.length} partition fields ${fields.join(', ')}, so the partition columns the table drops from its files cannot be recovered`,
      {
        fix: 'a partition value holds a "/": rewrite the partition with hoodie.datasource.write.partitionpath.urlencode=true',
      },
    );
  }
  const values: Record<string, string | null> = {};
  fields.forEach((field, index) => {
    let value = segments[index]!;
    if (options.hiveStylePartitioning && value.startsWith(`${field}=`)) value = value.slice(field.length + 1);
    values[field] = value === DEFAULT_PARTITION_PATH ? null : options.urlEncodePartitioning ? unescapePathName(value) : value;
  });
  return values;
}

function partitionSegment(field: string, raw: string | undefined, options: KeyGeneratorOptions): string {
  let value = raw === undefined || raw === '' ? DEFAULT_PARTITION_PATH : raw;
  if (options.urlEncodePartitioning && raw !== undefined && raw !== '') value = escapePathName(value);
  return options.hiveStylePartitioning ? `${field}=${value}` : value;
}

function requireKeyValue(value: unknown, field: string): string {
  if (value === undefined || value === null || valueToString(value) === '') {
    throw new HudiError(`record key field "${field}" is null or empty`, {
      fix: 'every record needs a value for the record key field(s); fix or drop the record',
    });
  }
  return valueToString(value);
}

/**
 * The key generator as plain data when an engine can compute it set-wise (Simple, Complex, Nonpartitioned without
 * URL encoding): the same rules as createKeyGenerator, which stays the reference and handles the rest.
 */
export interface DeclarativeKeyPlan {
  readonly recordKeyFields: readonly string[];
  /** `field:value` pairs joined by ',' with __null__ / __empty__ placeholders; else the bare value. */
  readonly complexRecordKey: boolean;
  readonly partitionFields: readonly string[];
  readonly hiveStylePartitioning: boolean;
  readonly nullPlaceholder: string;
  readonly emptyPlaceholder: string;
  readonly defaultPartition: string;
}

export function declarativeKeyPlan(options: KeyGeneratorOptions): DeclarativeKeyPlan | undefined {
  const shortName = options.keyGeneratorClass.slice(options.keyGeneratorClass.lastIndexOf('.') + 1);
  if (!['SimpleKeyGenerator', 'ComplexKeyGenerator', 'NonpartitionedKeyGenerator'].includes(shortName) || options.urlEncodePartitioning) return undefined;
  if (options.recordKeyFields.length === 0) return undefined;
  return {
    recordKeyFields: options.recordKeyFields,
    complexRecordKey: shortName === 'ComplexKeyGenerator' || options.recordKeyFields.length > 1,
    partitionFields: shortName === 'NonpartitionedKeyGenerator' ? [] : options.partitionFields,
    hiveStylePartitioning: options.hiveStylePartitioning,
    nullPlaceholder: NULL_RECORDKEY_PLACEHOLDER,
    emptyPlaceholder: EMPTY_RECORDKEY_PLACEHOLDER,
    defaultPartition: DEFAULT_PARTITION_PATH,
  };
}

export function createKeyGenerator(options: KeyGeneratorOptions): KeyGenerator {
  const shortName = options.keyGeneratorClass.slice(options.keyGeneratorClass.lastIndexOf('.') + 1);
  const { recordKeyFields, partitionFields } = options;
  if (recordKeyFields.length === 0) {
    throw new HudiError('no record key field is configured', { fix: 'set hoodie.datasource.write.recordkey.field' });
  }
  // Complex keys are `field:value` pairs; Simple/Timestamp/Custom keys with one field are the bare value
  // (CustomAvroKeyGenerator keys by SimpleAvroKeyGenerator when there is one record key field).
  const complexRecordKey = shortName === 'ComplexKeyGenerator' || recordKeyFields.length > 1;
  const recordKey = (record: Readonly<Record<string, unknown>>): string => {
    if (!complexRecordKey) return requireKeyValue(fieldValue(record, recordKeyFields[0]!), recordKeyFields[0]!);
    let allNull = true;
    const parts = recordKeyFields.map((field) => {
      const value = fieldValue(record, field);
      if (value === undefined || value === null) return `${field}:${NULL_RECORDKEY_PLACEHOLDER}`;
      const text = valueToString(value);
      if (text === '') return `${field}:${EMPTY_RECORDKEY_PLACEHOLDER}`;
      allNull = false;
      return `${field}:${text}`;
    });
    if (allNull) {
      throw new HudiError(`record key fields ${recordKeyFields.join(', ')} are all null or empty`, {
        fix: 'every record needs a record key; fix or drop the record',
      });
    }
    return parts.join(',');
  };

  switch (shortName) {
    case 'NonpartitionedKeyGenerator':
      return { recordKeyFields, partitionFields: [], recordKey, partitionPath: () => '' };
    case 'SimpleKeyGenerator':
    case 'ComplexKeyGenerator':
      return {
        recordKeyFields,
        partitionFields,
        recordKey,
        partitionPath: (record) =>
          partitionFields
            .map((field) => {
              const value = fieldValue(record, field);
              return partitionSegment(field, value === undefined || value === null ? undefined : valueToString(value), options);
            })
            .join('/'),
      };
    case 'TimestampBasedKeyGenerator': {
      const timestampPath = timestampPartitioner(options.properties);
      return {
        recordKeyFields,
        partitionFields,
        recordKey,
        partitionPath: (record) => partitionFields.map((field) => partitionSegment(field, timestampPath(fieldValue(record, field), field), options)).join('/'),
      };
    }
    case 'CustomKeyGenerator': {
      const specs = customPartitionSpecs(options);
      const timestampPath = timestampPartitioner(options.properties);
      return {
        recordKeyFields,
        partitionFields: specs.map((spec) => spec.field),
        recordKey,
        partitionPath: (record) =>
          specs
            .map(({ field, type }) => {
              const value = fieldValue(record, field);
              const raw = type === 'TIMESTAMP' ? timestampPath(value, field) : value === undefined || value === null ? undefined : valueToString(value);
              return partitionSegment(field, raw, options);
            })
            .join('/'),
      };
    }
    default:
      throw new HudiError(`key generator ${options.keyGeneratorClass} is not supported`, {
        fix: `use one of ${Object.values(KEY_GENERATORS).join(', ')}`,
      });
  }
}

// ---- CustomKeyGenerator ----

const CUSTOM_PARTITION_FIELDS_KEYS = ['hoodie.table.partition.fields', 'hoodie.datasource.write.partitionpath.field'];

/**
 * A CustomKeyGenerator's `field:SIMPLE` / `field:TIMESTAMP` partition fields, as the table stores them (Hudi 1.x
 * keeps the types in hoodie.table.partition.fields); a field without its type cannot be keyed as Hudi keys it.
 */
function customPartitionSpecs(options: KeyGeneratorOptions): { field: string; type: 'SIMPLE' | 'TIMESTAMP' }[] {
  const stored = CUSTOM_PARTITION_FIELDS_KEYS.map((key) => options.properties.get(key)).find((value) => value !== undefined) ?? '';
  const fields = stored
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field !== '');
  const specs = fields.map((entry): { field: string; type: 'SIMPLE' | 'TIMESTAMP' } => {
    const [field, type, ...rest] = entry.split(':');
    const upper = type?.trim().toUpperCase();
    if (field === undefined || field === '' || rest.length > 0 || (upper !== 'SIMPLE' && upper !== 'TIMESTAMP')) {
      throw new HudiError(
        `CustomKeyGenerator partition field "${entry}" has no SIMPLE or TIMESTAMP type, so its partition path cannot be computed as Hudi does`,
        {
          fix: 'write this table with Hudi, or give hoodie.table.partition.fields as field:SIMPLE / field:TIMESTAMP (Hudi 1.x stores them so)',
        },
      );
    }
    return { field: field.trim(), type: upper };
  });
  const timestampFields = specs.filter((spec) => spec.type === 'TIMESTAMP').map((spec) => spec.field);
  const typed = ['hoodie.keygen.timebased.timestamp.type', 'hoodie.deltastreamer.keygen.timebased.timestamp.type'].some((key) => options.properties.has(key));
  if (timestampFields.length > 0 && !typed) {
    throw new HudiError(
      `CustomKeyGenerator partition field(s) ${timestampFields.join(', ')} are TIMESTAMP, and neither the table nor the write gives hoodie.keygen.timebased.timestamp.type`,
      { fix: "pass the hoodie.keygen.timebased.* keys the table's Spark writes pass (timestamp.type, input/output date formats, time zone)" },
    );
  }
  return specs;
}

// ---- TimestampBasedKeyGenerator ----

type TimestampType = 'UNIX_TIMESTAMP' | 'EPOCHMILLISECONDS' | 'EPOCHMICROSECONDS' | 'SCALAR' | 'DATE_STRING' | 'MIXED';

function timestampPartitioner(props: ReadonlyMap<string, string>): (value: unknown, field: string) => string | undefined {
  const get = (suffix: string) => props.get(`hoodie.keygen.timebased.${suffix}`) ?? props.get(`hoodie.deltastreamer.keygen.timebased.${suffix}`);
  const configuredType = get('timestamp.type')?.toUpperCase() as TimestampType | undefined;
  const outputFormat = get('output.dateformat') ?? 'yyyy-MM-dd';
  const inputFormats = (get('input.dateformat') ?? "yyyy-MM-dd'T'HH:mm:ss.SSSZ")
    .split(get('input.dateformat.list.delimiter.regex') ?? ',')
    .map((s) => s.trim())
    .filter(Boolean);
  const outputZone = get('output.timezone') ?? get('timezone') ?? 'GMT';
  const inputZone = get('input.timezone') ?? get('timezone') ?? 'GMT';
  const scalarUnit = (get('timestamp.scalar.time.unit') ?? 'SECONDS').toUpperCase();
  const unitMs: Record<string, number> = {
    NANOSECONDS: 1e-6,
    MICROSECONDS: 1e-3,
    MILLISECONDS: 1,
    SECONDS: 1000,
    MINUTES: 60000,
    HOURS: 3600000,
    DAYS: 86400000,
  };
  return (value, field) => {
    if (value === undefined || value === null) return undefined;
    let epochMs: number;
    const type: TimestampType = configuredType ?? (typeof value === 'string' ? 'DATE_STRING' : 'EPOCHMILLISECONDS');
    if (value instanceof Date) epochMs = value.getTime();
    else if (type === 'DATE_STRING' || (type === 'MIXED' && typeof value === 'string')) {
      const parsed = inputFormats.map((format) => parseWithPattern(String(value), format, inputZone)).find((ms) => ms !== undefined);
      if (parsed === undefined) {
        throw new HudiError(
          `partition field "${field}" value "${String(value)}" does not match hoodie.keygen.timebased.input.dateformat (${inputFormats.join(' | ')})`,
          {
            fix: 'fix the value or the input date format',
          },
        );
      }
      epochMs = parsed;
    } else {
      const n = Number(value);
      if (!Number.isFinite(n))
        throw new HudiError(`partition field "${field}" value "${String(value)}" is not a number`, {
          fix: 'set hoodie.keygen.timebased.timestamp.type to match the column',
        });
      epochMs = type === 'UNIX_TIMESTAMP' ? n * 1000 : type === 'EPOCHMICROSECONDS' ? n / 1000 : type === 'SCALAR' ? n * (unitMs[scalarUnit] ?? 1000) : n;
    }
    return formatWithPattern(epochMs, outputFormat, outputZone);
  };
}

/** Offset in minutes for GMT/UTC or fixed `GMT+hh:mm` / `+hh:mm` zones (named zones use Intl). */
function zoneOffsetMinutes(zone: string, epochMs: number): number {
  const fixed = /^(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?$/.exec(zone);
  if (zone === 'GMT' || zone === 'UTC' || zone === 'Z') return 0;
  if (fixed) return (fixed[1] === '-' ? -1 : 1) * (Number(fixed[2]) * 60 + Number(fixed[3] ?? 0));
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(new Date(epochMs));
  const name = parts.find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

const PATTERN_TOKEN = /'([^']*)'|yyyy|yy|MM|dd|HH|mm|ss|SSS|XXX|Z|X/g;

/** Format like Java's SimpleDateFormat / DateTimeFormatter for the tokens Hudi users put in output formats. */
export function formatWithPattern(epochMs: number, pattern: string, zone: string): string {
  const local = new Date(epochMs + zoneOffsetMinutes(zone, epochMs) * 60000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return pattern.replace(PATTERN_TOKEN, (token, literal: string | undefined) => {
    if (literal !== undefined) return literal === '' ? "'" : literal;
    switch (token) {
      case 'yyyy':
        return pad(local.getUTCFullYear(), 4);
      case 'yy':
        return pad(local.getUTCFullYear() % 100);
      case 'MM':
        return pad(local.getUTCMonth() + 1);
      case 'dd':
        return pad(local.getUTCDate());
      case 'HH':
        return pad(local.getUTCHours());
      case 'mm':
        return pad(local.getUTCMinutes());
      case 'ss':
        return pad(local.getUTCSeconds());
      case 'SSS':
        return pad(local.getUTCMilliseconds(), 3);
      default: {
        const offset = zoneOffsetMinutes(zone, epochMs);
        const sign = offset < 0 ? '-' : '+';
        const abs = Math.abs(offset);
        if (token === 'Z') return `${sign}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`;
        return offset === 0 ? 'Z' : `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
      }
    }
  });
}

/** Parse with a SimpleDateFormat-style pattern; undefined when the text does not match. */
export function parseWithPattern(text: string, pattern: string, zone: string): number | undefined {
  const fields: string[] = [];
  let regex = '^';
  let last = 0;
  for (const match of pattern.matchAll(PATTERN_TOKEN)) {
    regex += escapeRegex(pattern.slice(last, match.index));
    last = match.index + match[0].length;
    if (match[1] !== undefined) {
      regex += escapeRegex(match[1] === '' ? "'" : match[1]);
      continue;
    }
    const token = match[0];
    fields.push(token);
    regex +=
      token === 'yyyy'
        ? '(\\d{4})'
        : token === 'SSS'
          ? '(\\d{1,3})'
          : token === 'Z' || token === 'X' || token === 'XXX'
            ? '(Z|[+-]\\d{2}:?\\d{2})'
            : '(\\d{2})';
  }
  regex += `${escapeRegex(pattern.slice(last))}$`;
  const m = new RegExp(regex).exec(text);
  if (!m) return undefined;
  const parts: Record<string, number> = { yyyy: 1970, MM: 1, dd: 1, HH: 0, mm: 0, ss: 0, SSS: 0 };
  let offsetMinutes: number | undefined;
  fields.forEach((token, i) => {
    const value = m[i + 1]!;
    if (token === 'Z' || token === 'X' || token === 'XXX') {
      offsetMinutes = value === 'Z' ? 0 : (value[0] === '-' ? -1 : 1) * (Number(value.slice(1, 3)) * 60 + Number(value.slice(-2)));
    } else if (token === 'yy') parts['yyyy'] = 2000 + Number(value);
    else parts[token] = Number(token === 'SSS' ? value.padEnd(3, '0') : value);
  });
  const asUtc = Date.UTC(parts['yyyy']!, parts['MM']! - 1, parts['dd']!, parts['HH']!, parts['mm']!, parts['ss']!, parts['SSS']!);
  return asUtc - (offsetMinutes ?? zoneOffsetMinutes(zone, asUtc)) * 60000;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
