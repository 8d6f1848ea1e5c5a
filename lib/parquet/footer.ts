/**
 * The one reader (and writer) of a Parquet file's footer: `<FileMetaData, Thrift compact> <its length, u32 LE> PAR1`
 * at the end of the file. Type repair reads it to find and patch column chunks; the footer key/values Hudi needs
 * (bloom filter, min/max record keys) are set through it after DuckDB has written the pages.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { HudiError } from '../errors.js';
import type { ChunkLocation } from './column-chunk.js';
import { COLUMN_META, chunkMetaData, chunkPageRange, FILE_METADATA, leafChunkIndexes } from './metadata-fields.js';
import { columnInfosFromSchemaElements, type ParquetColumnInfo } from './schema.js';
import { type FileStatistics, footerStatistics } from './statistics.js';
import { CompactReader, CompactWriter, isStruct, THRIFT_BINARY, THRIFT_LIST, THRIFT_STRUCT, ThriftList, ThriftStruct } from './thrift.js';

/** FileMetaData field ids (parquet.thrift). */
export { FILE_METADATA } from './metadata-fields.js';

const MAGIC = Buffer.from('PAR1', 'latin1');

/** A file's decoded footer and where its FileMetaData bytes start (its length and the magic follow them). */
export interface FileFooter {
  metadata: ThriftStruct;
  start: number;
}

export async function readFileFooter(handle: FileHandle, file: string): Promise<FileFooter> {
  const { size } = await handle.stat();
  if (size < 12) throw footerError(file, `${size} bytes are too few for a Parquet file`);
  const tail = await readRange(handle, size - 8, 8);
  if (!tail.subarray(4).equals(MAGIC)) throw footerError(file, 'no Parquet magic at the end');
  const length = tail.readUInt32LE(0);
  const start = size - 8 - length;
  if (start < MAGIC.length) throw footerError(file, `footer length ${length} is larger than the file`);
  return { metadata: new CompactReader(await readRange(handle, start, length)).readStruct(), start };
}

/** The bytes that end a Parquet file with this footer. */
export function encodeFooter(metadata: ThriftStruct): Buffer {
  const footer = new CompactWriter().struct(metadata).bytes();
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length, 0);
  return Buffer.concat([footer, length, MAGIC]);
}

/** Replace the footer of a file opened for writing, leaving its pages where they are. */
export async function writeFooterInPlace(handle: FileHandle, footer: FileFooter): Promise<void> {
  const bytes = encodeFooter(footer.metadata);
  await handle.write(bytes, 0, undefined, footer.start);
  await handle.truncate(footer.start + bytes.length);
}

/** Footer key/value metadata (FileMetaData field 5), in file order. */
export function footerKeyValues(metadata: ThriftStruct): Map<string, Uint8Array> {
  const entries = new Map<string, Uint8Array>();
  for (const item of metadata.list(FILE_METADATA.keyValueMetadata)?.items.filter(isStruct) ?? []) {
    const key = item.binary(1);
    if (key !== undefined) entries.set(Buffer.from(key).toString('utf8'), item.binary(2) ?? new Uint8Array());
  }
  return entries;
}

/**
 * Set footer key/value metadata in place, keeping the other entries: only the footer is rewritten, the pages stay.
 * Lets a footer that depends on the written rows (Hudi's bloom filter) be computed while DuckDB writes them.
 */
export async function setFooterKeyValues(file: string, keyValues: Readonly<Record<string, string>>): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    const footer = await readFileFooter(handle, file);
    const merged = footerKeyValues(footer.metadata);
    for (const [key, value] of Object.entries(keyValues)) merged.set(key, Buffer.from(value, 'utf8'));
    const items = [...merged].map(([key, value]) => {
      const entry = new ThriftStruct();
      entry.set(1, THRIFT_BINARY, Buffer.from(key, 'utf8'));
      entry.set(2, THRIFT_BINARY, value);
      return entry;
    });
    footer.metadata.set(FILE_METADATA.keyValueMetadata, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, items));
    await writeFooterInPlace(handle, footer);
  } finally {
    await handle.close();
  }
}

/** Some of a file's footer key/values, as text (absent keys are left out). */
export async function readFooterKeyValues(file: string, keys: readonly string[]): Promise<Map<string, string>> {
  const handle = await open(file, 'r');
  try {
    const all = footerKeyValues((await readFileFooter(handle, file)).metadata);
    const picked = new Map<string, string>();
    for (const key of keys) {
      const value = all.get(key);
      if (value !== undefined) picked.set(key, Buffer.from(value).toString('utf8'));
    }
    return picked;
  } finally {
    await handle.close();
  }
}

/** A file's row count (FileMetaData.num_rows). */
export async function readRowCount(file: string): Promise<number> {
  const handle = await open(file, 'r');
  try {
    return Number((await readFileFooter(handle, file)).metadata.bigint(FILE_METADATA.numRows) ?? 0n);
  } finally {
    await handle.close();
  }
}

/** What one read of a file's footer gives every later step: row counts, the schema, chosen key/values. */
export interface FooterSummary {
  readonly file: string;
  /** The file's size in bytes. */
  readonly bytes: number;
  readonly numRows: number;
  readonly rowGroupCount: number;
  /** The schema's non-root elements as readers see them (what DuckDB's parquet_schema describes). */
  readonly columns: readonly ParquetColumnInfo[];
  /** The footer key/values asked for, as text (absent keys left out). */
  readonly keyValues: ReadonlyMap<string, string>;
  /** Column chunk statistics per leaf (or per leaf asked for), when asked for (statistics.ts). */
  readonly statistics?: FileStatistics;
  /** Where the chunks of the leaves asked for are, row group by row group, by leaf path joined by '.'. */
  readonly chunks?: ReadonlyMap<string, readonly ChunkLocation[]>;
}

export interface FooterSummaryOptions {
  /** Footer key/values to return as text. */
  readonly keys?: readonly string[];
  /** Also decode column chunk statistics: of every leaf (true), or of these leaves only (paths joined by '.'). */
  readonly statistics?: boolean | readonly string[];
  /** Leaves (paths joined by '.') whose column chunk locations to return. */
  readonly chunks?: readonly string[];
}

/** Bytes read from a file's end at first: a footer without a large bloom filter fits, so one read does. */
const FOOTER_PROBE_BYTES = 64 * 1024;

/**
 * Read a file's footer once for row counts, schema and some key/values. Synchronous reads on purpose: for thousands
 * of small local files the promise per read costs more than the read (a group of 10,000 files is read in a second).
 */
export function readFooterSummary(file: string, options: FooterSummaryOptions = {}): FooterSummary {
  const keys = options.keys ?? [];
  let descriptor: number;
  try {
    descriptor = openSync(file, 'r');
  } catch (cause) {
    throw new HudiError(`cannot open Parquet file: ${(cause as Error).message}`, { location: file, fix: 'stage the file locally before reading it', cause });
  }
  try {
    const { size } = fstatSync(descriptor);
    if (size < 12) throw footerError(file, `${size} bytes are too few for a Parquet file`);
    const probeLength = Math.min(size, FOOTER_PROBE_BYTES);
    // The probe goes into one reused buffer: a new one per file adds up over thousands of small files.
    // Nothing read from it outlives this call (string statistics are copied), so the next footer may overwrite it.
    let tail = readAt(descriptor, size - probeLength, probeLength, file, footerProbe);
    if (!tail.subarray(probeLength - 4).equals(MAGIC)) throw footerError(file, 'no Parquet magic at the end');
    const length = tail.readUInt32LE(probeLength - 8);
    const start = size - 8 - length;
    if (start < MAGIC.length) throw footerError(file, `footer length ${length} is larger than the file`);
    if (length + 8 > probeLength) tail = readAt(descriptor, start, length + 8, file);
    const footerBytes = tail.subarray(tail.length - 8 - length, tail.length - 8);
    let metadata: ThriftStruct;
    let columns: readonly ParquetColumnInfo[];
    try {
      // The schema is passed over and decoded apart (schemaColumns), so a group's files sharing one schema decode it once.
      let schema: { start: number; end: number } | undefined;
      metadata = new CompactReader(footerBytes).readStruct(SCHEMA_FIELD, (_id, type, start, end) => {
        if (type === THRIFT_LIST) schema = { start, end };
      });
      columns = schema === undefined ? [] : schemaColumns(footerBytes.subarray(schema.start, schema.end));
    } catch (cause) {
      throw footerError(file, (cause as Error).message);
    }
    const keyValues = new Map<string, string>();
    if (keys.length > 0) {
      const all = footerKeyValues(metadata);
      for (const key of keys) {
        const value = all.get(key);
        if (value !== undefined) keyValues.set(key, Buffer.from(value).toString('utf8'));
      }
    }
    return {
      file,
      bytes: size,
      numRows: Number(metadata.bigint(FILE_METADATA.numRows) ?? 0n),
      rowGroupCount: metadata.list(FILE_METADATA.rowGroups)?.items.length ?? 0,
      columns,
      keyValues,
      ...(options.statistics === true || Array.isArray(options.statistics)
        ? { statistics: footerStatistics(metadata, columns, options.statistics === true ? undefined : new Set(options.statistics)) }
        : {}),
      ...(options.chunks === undefined ? {} : { chunks: chunkLocations(metadata, columns, options.chunks) }),
    };
  } finally {
    closeSync(descriptor);
  }
}

function chunkLocations(metadata: ThriftStruct, columns: readonly ParquetColumnInfo[], wanted: readonly string[]): Map<string, ChunkLocation[]> {
  const chunkIndexes = leafChunkIndexes(columns);
  const locations = new Map<string, ChunkLocation[]>();
  const rowGroups = metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? [];
  for (const path of wanted) {
    const index = chunkIndexes.get(path);
    if (index === undefined) continue;
    locations.set(
      path,
      rowGroups.map((rowGroup) => {
        const meta = chunkMetaData(rowGroup, index);
        if (meta === undefined) return { codec: -1, offset: 0, length: 0, numValues: 0 };
        const { start, length } = chunkPageRange(meta);
        return { codec: meta.int(COLUMN_META.codec) ?? -1, offset: start, length, numValues: meta.int(COLUMN_META.numValues) ?? 0 };
      }),
    );
  }
  return locations;
}

const footerProbe = Buffer.allocUnsafe(FOOTER_PROBE_BYTES);

const SCHEMA_FIELD: ReadonlySet<number> = new Set([FILE_METADATA.schema]);
/** The last schema decoded, by its encoded bytes: the files of a group are nearly always written with one schema. */
let lastSchema: { readonly bytes: Buffer; readonly columns: readonly ParquetColumnInfo[] } | undefined;

/**
 * The columns of an encoded FileMetaData.schema list. The same bytes give the same columns, so when they equal the
 * last schema's, its columns (the same array: isOneSchema then compares nothing) serve again.
 */
function schemaColumns(encoded: Uint8Array): readonly ParquetColumnInfo[] {
  const last = lastSchema;
  if (last?.bytes.equals(encoded) === true) return last.columns;
  const list = new CompactReader(encoded).readValue(THRIFT_LIST);
  const columns = columnInfosFromSchemaElements(list instanceof ThriftList ? list.items.filter(isStruct) : []);
  // A copy of the bytes: `encoded` is a view of the reused probe buffer.
  lastSchema = { bytes: Buffer.from(encoded), columns };
  return columns;
}

function readAt(descriptor: number, start: number, length: number, file: string, scratch?: Buffer): Buffer {
  const buffer = scratch !== undefined && length <= scratch.length ? scratch.subarray(0, length) : Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const read = readSync(descriptor, buffer, filled, length - filled, start + filled);
    if (read === 0) throw footerError(file, `unexpected end of file at ${start + filled}`);
    filled += read;
  }
  return buffer;
}

/** Exactly `length` bytes from `start` (every byte is read before it is returned, so the buffer needs no zeroing). */
export async function readRange(handle: FileHandle, start: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, start + filled);
    if (bytesRead === 0) throw new Error(`unexpected end of file at ${start + filled}`);
    filled += bytesRead;
  }
  return buffer;
}

function footerError(file: string, problem: string): HudiError {
  return new HudiError(`not a readable Parquet footer: ${problem}`, { location: file, fix: 'the file is truncated or not Parquet; write it again' });
}

/** A top-level primitive column of a footer's schema, with its leaf ordinal (the index of its column_orders entry). */
export interface TopLevelLeaf {
  readonly element: ThriftStruct;
  readonly name: string;
  readonly leafOrdinal: number;
}

/**
 * The footer schema's top-level primitive columns, in order. The schema is flattened depth-first (the root, then each
 * child with its subtree), so nested leaves are walked past but still count in the leaf ordinals.
 */
export function topLevelLeafColumns(metadata: ThriftStruct): TopLevelLeaf[] {
  const elements = metadata.list(FILE_METADATA.schema)?.items.filter(isStruct) ?? [];
  const out: TopLevelLeaf[] = [];
  let index = 1;
  let leafOrdinal = 0;
  const walk = (topLevel: boolean): void => {
    const element = elements[index++];
    if (element === undefined) return;
    const children = element.int(5) ?? 0;
    if (children > 0) {
      for (let i = 0; i < children; i++) walk(false);
      return;
    }
    const ordinal = leafOrdinal++;
    const name = element.binary(4);
    if (topLevel && name !== undefined) out.push({ element, name: Buffer.from(name).toString('utf8'), leafOrdinal: ordinal });
  };
  const rootChildren = elements[0]?.int(5) ?? 0;
  for (let i = 0; i < rootChildren; i++) walk(true);
  return out;
}
