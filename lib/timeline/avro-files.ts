/**
 * Avro timeline files (clustering plans, cleaner plans, clean and rollback metadata): Avro object container files
 * as Java's DataFileWriter writes them — magic `Obj\x01`, a metadata map holding only `avro.schema` (no
 * `avro.codec`, meaning the null codec), a 16-byte sync marker, then one block holding one record.
 *
 * We write and parse the container ourselves (it is a few varints) because avsc's BlockEncoder always adds an
 * `avro.codec` key, and its decoder loops on whatever counts it reads, so a corrupt file could spin instead of
 * failing. avsc does the record encoding and the writer → reader schema resolution.
 */

import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { errorMessage, HudiError } from '../errors.js';
import {
  type AvroSchemaJson,
  COMMIT_METADATA_AVRO_SCHEMAS,
  COMPACTION_PLAN_1X_SCHEMA,
  type CommitMetadataAvroRecords,
  emptyRequestedReplaceMetadata,
  type HoodieCompactionPlan,
  type HoodieRequestedReplaceMetadata,
  HUDI_AVRO_NAMESPACE,
  REQUESTED_REPLACE_1X_SCHEMA,
  TIMELINE_AVRO_RECORD_NAMES,
  TIMELINE_AVRO_SCHEMAS,
  type TimelineAvroKind,
  type TimelineAvroRecords,
  timelineAvroSchemaText,
} from './avro-schemas.js';

export * from './avro-schemas.js';

const MAGIC = Buffer.from('Obj\x01', 'latin1');
const SYNC_MARKER_SIZE = 16;
/** A timeline record is kilobytes; anything inflating past this is not one. */
const MAX_INFLATED_BLOCK_BYTES = 256 * 1024 * 1024;

const LONG_TYPE = avro.Type.forSchema('long');
const METADATA_MAP_TYPE = avro.Type.forSchema({ type: 'map', values: 'bytes' });

const FIX_UNREADABLE = 'an interrupted write or copy leaves a cut-short file; restore it from a backup or the original table';

export interface EncodeTimelineAvroOptions {
  /** The container's 16-byte sync marker; random when omitted (as Java does). Set it for reproducible bytes. */
  syncMarker?: Uint8Array;
}

/**
 * Encode one timeline record as the Avro container file Hudi writes for it.
 * Throws HudiError when the record does not fit the schema (naming the offending field).
 */
export function encodeTimelineAvro<K extends TimelineAvroKind>(kind: K, record: TimelineAvroRecords[K], options: EncodeTimelineAvroOptions = {}): Uint8Array {
  return encodeContainer(timelineType(kind), TIMELINE_AVRO_RECORD_NAMES[kind], timelineAvroSchemaText(kind), record, options);
}

/**
 * Encode a timeline layout 2 (Hudi 1.x) completed write's record as CommitMetadataSerDe.getInstantWriter does: one
 * HoodieCommitMetadata (`commit`) or HoodieReplaceCommitMetadata (`replace`) in an Avro container, null codec.
 */
export function encodeCommitMetadataAvro<K extends keyof CommitMetadataAvroRecords>(
  kind: K,
  record: CommitMetadataAvroRecords[K],
  options: EncodeTimelineAvroOptions = {},
): Uint8Array {
  return encodeContainer(commitMetadataType(kind), commitMetadataRecordName(kind), JSON.stringify(COMMIT_METADATA_AVRO_SCHEMAS[kind]), record, options);
}

function encodeContainer(type: avro.Type, recordName: string, schemaText: string, record: unknown, options: EncodeTimelineAvroOptions): Uint8Array {
  const problems: string[] = [];
  const valid = type.isValid(record, {
    errorHook: (path: string[], value: unknown, fieldType: avro.Type) => {
      problems.push(`${path.join('.') || '(record)'} = ${describeValue(value)} is not a valid ${fieldType.typeName}`);
    },
  });
  if (!valid) {
    throw new HudiError(`cannot encode ${recordName}: ${problems.slice(0, 5).join('; ')}`, {
      fix: 'fill every field of the record with a value of its schema type (null only where the type allows it)',
    });
  }

  const syncMarker = options.syncMarker ?? randomBytes(SYNC_MARKER_SIZE);
  if (syncMarker.length !== SYNC_MARKER_SIZE) {
    throw new HudiError(`an Avro sync marker must be ${SYNC_MARKER_SIZE} bytes, got ${syncMarker.length}`);
  }
  // The record's size first (avsc's writers only count past the end of a buffer), then the record written once,
  // straight into the file's bytes: a plan naming a million files is one copy, not three.
  const recordSize = -type.encode(record, EMPTY_BUFFER, 0);
  const metadata = METADATA_MAP_TYPE.toBuffer({ 'avro.schema': Buffer.from(schemaText, 'utf8') });
  const head = [MAGIC, metadata, syncMarker, LONG_TYPE.toBuffer(1), LONG_TYPE.toBuffer(recordSize)];
  const headSize = head.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(headSize + recordSize + SYNC_MARKER_SIZE);
  let offset = 0;
  for (const part of head) {
    out.set(part, offset);
    offset += part.length;
  }
  const end = type.encode(record, Buffer.from(out.buffer, out.byteOffset, out.byteLength), offset);
  if (end !== offset + recordSize) throw new Error(`an Avro ${recordName} record encoded to ${end - offset} bytes, measured ${recordSize}`);
  out.set(syncMarker, end);
  return out;
}

const EMPTY_BUFFER = Buffer.alloc(0);

/**
 * Decode the single record of an Avro timeline file, resolving its embedded writer schema to ours, so files written
 * by older or newer Hudi versions read as long as the record full name matches.
 * `location` names the file in error messages. Throws HudiError when the file is empty (the caller decides what an
 * empty instant file means), truncated, not an Avro container, holds another record type or not exactly one record.
 */
export function decodeTimelineAvro<K extends TimelineAvroKind>(kind: K, bytes: Uint8Array, location: string): TimelineAvroRecords[K] {
  const expectedName = TIMELINE_AVRO_RECORD_NAMES[kind];
  const { record } = decodeSingleRecord(bytes, location, [expectedName], resolvedTo(timelineType(kind), expectedName, location));
  // Our reader schema guarantees the shape; avsc returns class instances, callers get plain data.
  return record as TimelineAvroRecords[K];
}

const partialTypes = new Map<string, avro.Type>();

/**
 * decodeTimelineAvro without some of the record's fields: their bytes are checked but no value is built, for a
 * reader that needs the rest of a large record (a clean's plan may name a million files).
 */
export function decodeTimelineAvroWithout<K extends TimelineAvroKind, F extends keyof TimelineAvroRecords[K] & string>(
  kind: K,
  bytes: Uint8Array,
  location: string,
  omitted: readonly F[],
): Omit<TimelineAvroRecords[K], F> {
  const key = `${kind}\u0000${omitted.join(',')}`;
  let readerType = partialTypes.get(key);
  if (readerType === undefined) {
    const schema = TIMELINE_AVRO_SCHEMAS[kind] as { readonly fields: readonly { readonly name: string }[] };
    const fields = schema.fields.filter((field) => !(omitted as readonly string[]).includes(field.name));
    readerType = avro.Type.forSchema(asAvscSchema({ ...(schema as object), fields } as AvroSchemaJson), { wrapUnions: false });
    partialTypes.set(key, readerType);
  }
  const expectedName = TIMELINE_AVRO_RECORD_NAMES[kind];
  const { record } = decodeSingleRecord(bytes, location, [expectedName], resolvedTo(readerType, expectedName, location));
  return record as Omit<TimelineAvroRecords[K], F>;
}

const commitMetadataTypes = new Map<keyof CommitMetadataAvroRecords, avro.Type>();

/**
 * Decode a timeline layout 2 (Hudi 1.x) completed write's file: one HoodieCommitMetadata (`commit`, for commits and
 * deltacommits) or HoodieReplaceCommitMetadata (`replace`) in an Avro container, resolved from its writer schema.
 */
export function decodeCommitMetadataAvro<K extends keyof CommitMetadataAvroRecords>(
  kind: K,
  bytes: Uint8Array,
  location: string,
): CommitMetadataAvroRecords[K] {
  const name = commitMetadataRecordName(kind);
  const { record } = decodeSingleRecord(bytes, location, [name], resolvedTo(commitMetadataType(kind), name, location));
  return record as CommitMetadataAvroRecords[K];
}

function commitMetadataType(kind: keyof CommitMetadataAvroRecords): avro.Type {
  let type = commitMetadataTypes.get(kind);
  if (type === undefined) {
    type = avro.Type.forSchema(asAvscSchema(COMMIT_METADATA_AVRO_SCHEMAS[kind]), { wrapUnions: false });
    commitMetadataTypes.set(kind, type);
  }
  return type;
}

function commitMetadataRecordName(kind: keyof CommitMetadataAvroRecords): string {
  return `${HUDI_AVRO_NAMESPACE}.${kind === 'commit' ? 'HoodieCommitMetadata' : 'HoodieReplaceCommitMetadata'}`;
}

/** Resolvers already made, per reader type and writer type (writer types are shared per schema text: writerTypeOf). */
const resolvers = new WeakMap<avro.Type, WeakMap<avro.Type, ReturnType<avro.Type['createResolver']>>>();

/** Reading with our schema: the writer schema resolved to it, or an error naming the record. */
function resolvedTo(readerType: avro.Type, expectedName: string, location: string): (writerType: avro.Type) => RecordReading {
  return (writerType) => {
    try {
      let byWriter = resolvers.get(readerType);
      if (byWriter === undefined) {
        byWriter = new WeakMap();
        resolvers.set(readerType, byWriter);
      }
      let resolver = byWriter.get(writerType);
      if (resolver === undefined) {
        resolver = readerType.createResolver(writerType);
        byWriter.set(writerType, resolver);
      }
      return { readerType, resolver };
    } catch (cause) {
      throw new HudiError(`its writer schema cannot be resolved to ${expectedName}: ${errorMessage(cause)}`, {
        location,
        fix: 'this Hudi version’s schema is not readable by this build; report the file’s avro.schema header',
        cause,
      });
    }
  };
}

/** A record decoded with the schema its container file carries: its full name and its fields as plain data. */
export interface WriterSchemaRecord {
  readonly recordName: string;
  readonly record: { readonly [field: string]: unknown };
}

/**
 * Decode the single record of an Avro container file with the writer schema it carries (no reader schema of ours):
 * for records whose every field the caller passes on as it is, such as the commit metadata Hudi 1.x keeps in its
 * timeline history. The record's full name must be one of `expectedNames`; the same checks as decodeTimelineAvro.
 */
export function decodeWithWriterSchema(bytes: Uint8Array, location: string, expectedNames: readonly string[]): WriterSchemaRecord {
  const { recordName, record } = decodeSingleRecord(bytes, location, expectedNames, (writerType) => ({ readerType: writerType, resolver: undefined }));
  return { recordName, record: record as { readonly [field: string]: unknown } };
}

interface RecordReading {
  readerType: avro.Type;
  resolver: ReturnType<avro.Type['createResolver']> | undefined;
}

function decodeSingleRecord(
  bytes: Uint8Array,
  location: string,
  expectedNames: readonly string[],
  reading: (writerType: avro.Type) => RecordReading,
): { recordName: string; record: unknown } {
  const expected = expectedNames.join(' or ');
  if (bytes.length === 0) {
    throw new HudiError(`instant file is empty (0 bytes); expected an Avro ${expected} record`, { location });
  }
  const container = readContainer(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), location);

  const writerType = parseWriterSchema(container.schemaText, location);
  if (writerType.name === undefined || !expectedNames.includes(writerType.name)) {
    throw new HudiError(`holds an Avro ${writerType.name ?? writerType.typeName} record, expected ${expected}`, {
      location,
      fix: 'check that the file name’s action and state match its content',
    });
  }
  const { readerType, resolver } = reading(writerType);

  if (container.blocks.length === 0) throw unreadable(location, 'no data block after the header');
  const records: unknown[] = [];
  for (const block of container.blocks) {
    const data = decompressBlock(block.data, container.codec, location);
    // Walk the block with the writer schema first: it checks every length and count against the bytes left.
    const cursor = new ByteCursor(data, location);
    for (let i = 0; i < block.count; i++) skipValue(writerType, cursor);
    if (cursor.remaining !== 0) throw unreadable(location, `a data block has ${cursor.remaining} bytes after its records`);

    let position = 0;
    for (let i = 0; i < block.count; i++) {
      let decoded: { value: unknown; offset: number };
      try {
        decoded = readerType.decode(data, position, resolver);
      } catch (cause) {
        throw unreadable(location, `record ${records.length + 1} does not decode: ${errorMessage(cause)}`, cause);
      }
      if (decoded.offset < 0) throw unreadable(location, `record ${records.length + 1} runs past its block`);
      position = decoded.offset;
      records.push(decoded.value);
    }
  }
  if (records.length !== 1) {
    throw new HudiError(`holds ${records.length} Avro records, expected exactly one ${expected}`, {
      location,
      fix: 'Hudi writes one record per timeline file; this file was not written by Hudi',
    });
  }
  return { recordName: writerType.name, record: toPlainData(records[0]) };
}

/**
 * Read `<instant>.replacecommit.requested`. Hudi writes an all-null record there for insert_overwrite, and some
 * versions write a 0-byte file instead: both read as the all-null record.
 */
export function decodeRequestedReplaceMetadata(bytes: Uint8Array, location: string): HoodieRequestedReplaceMetadata {
  if (bytes.length === 0) return emptyRequestedReplaceMetadata();
  // 1.x's schema is 0.x's plus one defaulted field, so it reads both and keeps missingSchedulePartitions.
  const name = TIMELINE_AVRO_RECORD_NAMES.requestedReplace;
  const { record } = decodeSingleRecord(bytes, location, [name], resolvedTo(requestedReplace1xType(), name, location));
  const requested = record as HoodieRequestedReplaceMetadata;
  // A plan without the list (0.x's, or 1.x's null) reads as 0.x's record did: without the field.
  if (requested.clusteringPlan !== null && requested.clusteringPlan.missingSchedulePartitions == null)
    delete requested.clusteringPlan.missingSchedulePartitions;
  return requested;
}

/**
 * A clustering plan's requested file as the table's Hudi line writes it: 0.x's schema (timeline layout 1), or
 * 1.x's with missingSchedulePartitions (layout 2).
 */
export function encodeRequestedReplaceMetadata(
  record: HoodieRequestedReplaceMetadata,
  layoutVersion: 1 | 2,
  options: EncodeTimelineAvroOptions = {},
): Uint8Array {
  if (layoutVersion === 1) return encodeTimelineAvro('requestedReplace', record, options);
  return encodeContainer(requestedReplace1xType(), TIMELINE_AVRO_RECORD_NAMES.requestedReplace, JSON.stringify(REQUESTED_REPLACE_1X_SCHEMA), record, options);
}

let requestedReplace1x: avro.Type | undefined;

function requestedReplace1xType(): avro.Type {
  requestedReplace1x ??= avro.Type.forSchema(asAvscSchema(REQUESTED_REPLACE_1X_SCHEMA), { wrapUnions: false });
  return requestedReplace1x;
}

/** Read `<instant>.compaction.requested` of either line: 1.x's schema is 0.x's plus one defaulted field. */
export function decodeCompactionPlanAvro(bytes: Uint8Array, location: string): HoodieCompactionPlan {
  const name = TIMELINE_AVRO_RECORD_NAMES.compactionPlan;
  const { record } = decodeSingleRecord(bytes, location, [name], resolvedTo(compactionPlan1xType(), name, location));
  const plan = record as HoodieCompactionPlan;
  if (plan.missingSchedulePartitions == null) delete plan.missingSchedulePartitions;
  return plan;
}

/** A compaction plan as the table's Hudi line writes it: 0.x's schema (layout 1), or 1.x's (layout 2). */
export function encodeCompactionPlanAvro(record: HoodieCompactionPlan, layoutVersion: 1 | 2, options: EncodeTimelineAvroOptions = {}): Uint8Array {
  if (layoutVersion === 1) return encodeTimelineAvro('compactionPlan', record, options);
  const withList = { ...record, missingSchedulePartitions: record.missingSchedulePartitions ?? null };
  return encodeContainer(compactionPlan1xType(), TIMELINE_AVRO_RECORD_NAMES.compactionPlan, JSON.stringify(COMPACTION_PLAN_1X_SCHEMA), withList, options);
}

let compactionPlan1x: avro.Type | undefined;

function compactionPlan1xType(): avro.Type {
  compactionPlan1x ??= avro.Type.forSchema(asAvscSchema(COMPACTION_PLAN_1X_SCHEMA), { wrapUnions: false });
  return compactionPlan1x;
}

// ---------------------------------------------------------------------------------------------------------------

const timelineTypes = new Map<TimelineAvroKind, avro.Type>();

/** Our schema as an avsc Type (one per kind, reused as writer and reader type). */
function timelineType(kind: TimelineAvroKind): avro.Type {
  let type = timelineTypes.get(kind);
  if (type === undefined) {
    type = avro.Type.forSchema(asAvscSchema(TIMELINE_AVRO_SCHEMAS[kind]), { wrapUnions: false });
    timelineTypes.set(kind, type);
  }
  return type;
}

function asAvscSchema(schema: AvroSchemaJson): avro.Schema {
  // avsc's Schema typing is looser than our JSON type; the values are the same JSON.
  return schema as avro.Schema;
}

/** Writer types by their exact schema text (an archive run reads thousands of files carrying the same schema). */
const writerTypes = new Map<string, avro.Type>();
const WRITER_TYPES_LIMIT = 64;

function parseWriterSchema(schemaText: string, location: string): avro.Type {
  const known = writerTypes.get(schemaText);
  if (known !== undefined) return known;
  const type = parseWriterSchemaText(schemaText, location);
  if (writerTypes.size >= WRITER_TYPES_LIMIT) writerTypes.delete(writerTypes.keys().next().value!);
  writerTypes.set(schemaText, type);
  return type;
}

function parseWriterSchemaText(schemaText: string, location: string): avro.Type {
  let schemaJson: unknown;
  try {
    schemaJson = JSON.parse(schemaText);
  } catch (cause) {
    throw unreadable(location, 'its avro.schema header is not JSON', cause);
  }
  try {
    // A fresh registry each time: writer schemas of different Hudi versions reuse the same names.
    return avro.Type.forSchema(schemaJson as avro.Schema, { wrapUnions: false, registry: {} });
  } catch (cause) {
    throw unreadable(location, `its avro.schema header is not a valid Avro schema: ${errorMessage(cause)}`, cause);
  }
}

interface ContainerBlock {
  count: number;
  data: Buffer;
}

interface Container {
  schemaText: string;
  codec: string;
  blocks: ContainerBlock[];
}

function readContainer(bytes: Buffer, location: string): Container {
  if (bytes.length < MAGIC.length) {
    throw unreadable(location, `${bytes.length} bytes, shorter than the 4-byte Avro magic`);
  }
  if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw unreadable(location, `it does not start with the Avro magic "Obj\\x01"`);
  }
  const cursor = new ByteCursor(bytes, location);
  cursor.take(MAGIC.length);

  const metadata = new Map<string, Buffer>();
  for (let count = cursor.readCount(); count !== 0; count = cursor.readCount()) {
    for (let i = 0; i < count; i++) {
      const key = cursor.readString();
      metadata.set(key, cursor.readBytes());
    }
  }
  const syncMarker = cursor.take(SYNC_MARKER_SIZE);

  const schemaBytes = metadata.get('avro.schema');
  if (schemaBytes === undefined) throw unreadable(location, 'its header has no avro.schema');
  const codec = metadata.get('avro.codec')?.toString('utf8') ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') {
    throw new HudiError(`is compressed with Avro codec "${codec}", which this build does not read (only null, deflate)`, {
      location,
    });
  }

  const blocks: ContainerBlock[] = [];
  while (cursor.remaining > 0) {
    const count = cursor.readLong();
    if (count < 0) throw unreadable(location, `a data block has a negative record count ${count}`);
    const size = cursor.readLong();
    if (size < 0) throw unreadable(location, `a data block has a negative size ${size}`);
    const data = cursor.take(size);
    if (!cursor.take(SYNC_MARKER_SIZE).equals(syncMarker)) {
      throw unreadable(location, 'a data block does not end with the header’s sync marker');
    }
    blocks.push({ count, data });
  }
  return { schemaText: schemaBytes.toString('utf8'), codec, blocks };
}

function decompressBlock(data: Buffer, codec: string, location: string): Buffer {
  if (codec === 'null') return data;
  try {
    return inflateRawSync(data, { maxOutputLength: MAX_INFLATED_BLOCK_BYTES });
  } catch (cause) {
    throw unreadable(location, `a deflate block does not inflate: ${errorMessage(cause)}`, cause);
  }
}

/** Bounds-checked reading of Avro's binary encoding; every overrun becomes a HudiError naming the file. */
class ByteCursor {
  private position = 0;

  constructor(
    private readonly bytes: Buffer,
    private readonly location: string,
  ) {}

  fail(detail: string): HudiError {
    return unreadable(this.location, `${detail} (offset ${this.position})`);
  }

  get remaining(): number {
    return this.bytes.length - this.position;
  }

  take(length: number): Buffer {
    this.skip(length);
    return this.bytes.subarray(this.position - length, this.position);
  }

  /** take without the view (skipValue steps over millions of strings). */
  skip(length: number): void {
    if (length > this.remaining) {
      throw unreadable(this.location, `needs ${length} bytes at offset ${this.position}, only ${this.remaining} left`);
    }
    this.position += length;
  }

  /** Zig-zag varint, as Avro encodes int and long. */
  readLong(): number {
    // Up to seven bytes (49 bits) exactly in float arithmetic; longer ones below.
    const start = this.position;
    let unsigned = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      const byte = this.position < this.bytes.length ? this.bytes[this.position++]! : (this.take(1)[0] ?? 0);
      unsigned += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return unsigned % 2 === 0 ? unsigned / 2 : -(unsigned + 1) / 2;
      scale *= 128;
    }
    this.position = start;
    return this.readLongExact();
  }

  private readLongExact(): number {
    let unsigned = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (shift > 63n) throw unreadable(this.location, `a varint at offset ${this.position} is longer than 10 bytes`);
      const byte = this.take(1)[0] ?? 0;
      unsigned |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
    }
    const value = (unsigned >> 1n) ^ -(unsigned & 1n);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw unreadable(this.location, `a number at offset ${this.position} is out of range`);
    }
    return Number(value);
  }

  /**
   * An array or map block count (negative counts carry a byte size). Every item of Hudi's timeline schemas takes
   * at least one byte, so a count beyond the bytes left is corruption, caught before we loop over it.
   */
  readCount(): number {
    let count = this.readLong();
    if (count < 0) {
      count = -count;
      this.readLong();
    }
    if (count > this.remaining) {
      throw unreadable(this.location, `a count of ${count} items exceeds the ${this.remaining} bytes left`);
    }
    return count;
  }

  readBytes(): Buffer {
    const length = this.readLong();
    if (length < 0) throw unreadable(this.location, `a negative length ${length}`);
    return this.take(length);
  }

  skipBytes(): void {
    const length = this.readLong();
    if (length < 0) throw unreadable(this.location, `a negative length ${length}`);
    this.skip(length);
  }

  readString(): string {
    return this.readBytes().toString('utf8');
  }
}

/** Step over one value of `type`, checking every length, count and branch index. */
function skipValue(type: avro.Type, cursor: ByteCursor): void {
  if (type instanceof avro.types.RecordType) {
    for (const recordField of type.fields) skipValue(recordField.type, cursor);
  } else if (type instanceof avro.types.ArrayType) {
    for (let count = cursor.readCount(); count !== 0; count = cursor.readCount()) {
      for (let i = 0; i < count; i++) skipValue(type.itemsType, cursor);
    }
  } else if (type instanceof avro.types.MapType) {
    const valuesType = type.valuesType as avro.Type;
    for (let count = cursor.readCount(); count !== 0; count = cursor.readCount()) {
      for (let i = 0; i < count; i++) {
        cursor.skipBytes();
        skipValue(valuesType, cursor);
      }
    }
  } else if (type instanceof avro.types.UnwrappedUnionType || type instanceof avro.types.WrappedUnionType) {
    const branch = cursor.readLong();
    const branchType = type.types[branch];
    if (branchType === undefined) throw cursor.fail(`union branch ${branch} does not exist`);
    skipValue(branchType, cursor);
  } else if (type instanceof avro.types.EnumType) {
    const index = cursor.readLong();
    if (index < 0 || index >= type.symbols.length) throw cursor.fail(`enum index ${index} does not exist`);
  } else if (type instanceof avro.types.FixedType) {
    cursor.skip(type.size);
  } else if (type instanceof avro.types.LogicalType) {
    skipValue(type.underlyingType, cursor);
  } else {
    skipPrimitive(type.typeName, cursor);
  }
}

function skipPrimitive(typeName: string, cursor: ByteCursor): void {
  switch (typeName) {
    case 'null':
      return;
    case 'boolean':
      cursor.skip(1);
      return;
    case 'int':
    case 'long':
      cursor.readLong();
      return;
    case 'float':
      cursor.skip(4);
      return;
    case 'double':
      cursor.skip(8);
      return;
    case 'bytes':
    case 'string':
      cursor.skipBytes();
      return;
    default:
      throw cursor.fail(`unexpected Avro type ${typeName}`);
  }
}

function unreadable(location: string, detail: string, cause?: unknown): HudiError {
  return new HudiError(`instant file is truncated or not an Avro container file (${detail})`, {
    location,
    fix: FIX_UNREADABLE,
    cause,
  });
}

/** avsc decodes records as class instances; hand out plain objects and arrays. */
function toPlainData(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = toPlainData(value[i]);
    return out;
  }
  if (Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const entry = toPlainData((value as Record<string, unknown>)[key]);
    // A map key `__proto__` stays an own property, as Object.fromEntries made it.
    if (key === '__proto__') Object.defineProperty(out, key, { value: entry, enumerable: true, writable: true, configurable: true });
    else out[key] = entry;
  }
  return out;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
