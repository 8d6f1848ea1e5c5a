/**
 * Binary copy: new Parquet files made of the row groups of existing ones, byte for byte, as Hudi 1.1's
 * SparkBinaryCopyClusteringExecutionStrategy does (HoodieParquetBinaryCopyBase): pages are not decoded, the footer is
 * rebuilt with offsets rebased, `_hoodie_file_name` is re-encoded as a one-value dictionary (pages.ts), page indexes and
 * bloom filters move with their chunks. Steps: readCopyInput, planBinaryCopy (whether and how, or why not),
 * writeCopiedFile; planCopyOutputs cuts outputs at a target size, which Hudi's strategy does not.
 *
 * Why one long file: the three steps share the footer model they rebuild (offsets, page indexes, bloom filters); the
 * page-level re-encoding is already apart in pages.ts.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { HudiError } from '../errors.js';
import { copyFileRange, writeAt } from '../util/file-range.js';
import { encodeFooter, readFileFooter, readRange } from './footer.js';
import { COLUMN_CHUNK, COLUMN_META, chunkPageRange, FILE_METADATA, ROW_GROUP } from './metadata-fields.js';
import { canRecompress, constantByteArrayChunk, nullChunk, type RecompressedChunk, recompressChunk, writtenChunkMetadata } from './pages.js';
import {
  columnInfosFromSchemaElements,
  describeParquetType,
  dropRedundantIntegerAnnotations,
  type ParquetColumnInfo,
  type TypeNode,
  topLevelFields,
} from './schema.js';
import {
  CompactReader,
  CompactWriter,
  isStruct,
  THRIFT_BINARY,
  THRIFT_I16,
  THRIFT_I32,
  THRIFT_I64,
  THRIFT_LIST,
  THRIFT_STRUCT,
  ThriftList,
  ThriftStruct,
} from './thrift.js';

const FILE_VERSION = 1;
const FILE_COLUMN_ORDERS = 7;
const FILE_ENCRYPTION_ALGORITHM = 8;
const PHYSICAL_BYTE_ARRAY = 6;

const MAGIC = Buffer.from('PAR1', 'latin1');
/** Footer key/values of Hudi's that are large and rebuilt for every output: never kept per input. */
const HUDI_BLOOM_FILTER_KEY = 'org.apache.hudi.bloomfilter';
const HUDI_BLOOM_FILTER_TYPE_KEY = 'hoodie_bloom_filter_type_code';

/** A leaf column of a file's schema, with what decides whether two files store it alike. */
/** `items[index]`, which the plan or the request promised; its absence is a caller's bug, named by `what`. */
function itemAt<T>(items: readonly T[], index: number, what: string): T {
  const item = items[index];
  if (item === undefined) throw new HudiError(`${what} ${index} does not exist (of ${items.length})`, { fix: 'this is a bug in the caller' });
  return item;
}

function createdByOf(metadata: ThriftStruct): string | undefined {
  const createdBy = metadata.binary(FILE_METADATA.createdBy);
  return createdBy === undefined ? undefined : Buffer.from(createdBy).toString('utf8');
}

/** A column chunk's ColumnMetaData, which readCopyInput required of every chunk it accepted. */
function chunkMetaOf(chunk: ThriftStruct): ThriftStruct {
  const meta = chunk.struct(COLUMN_CHUNK.metaData);
  if (meta === undefined) throw new HudiError('a column chunk has no ColumnMetaData', { fix: 'this is a bug: readCopyInput refuses such chunks' });
  return meta;
}

/** A row group's column chunks. */
function chunksOf(rowGroup: ThriftStruct): ThriftStruct[] {
  return rowGroup.list(ROW_GROUP.columns)?.items.filter(isStruct) ?? [];
}

export interface CopyLeaf {
  /** Names from the top-level field down, joined by '.'. */
  readonly path: string;
  readonly names: readonly string[];
  readonly physicalType: number;
  readonly typeLength: number | undefined;
  readonly maxDefinition: number;
  readonly maxRepetition: number;
  /** Repetition of each element on the path, e.g. 'OPTIONAL/REPEATED/OPTIONAL'. */
  readonly repetitions: string;
  /** The annotated type, as readers see it (describeParquetType). */
  readonly type: string;
}

export interface CopyRowGroup {
  readonly numRows: number;
  /** Bytes of its column chunks: what it adds to a file it is copied into. */
  readonly bytes: number;
  readonly struct: ThriftStruct;
}

/** One input file as binary copy sees it: its footer's schema and row groups, and whether its pages can be copied. */
export interface CopyInput {
  readonly file: string;
  readonly bytes: number;
  readonly numRows: number;
  readonly createdBy: string | undefined;
  readonly version: number;
  /** FileMetaData.schema, root first. */
  readonly schema: readonly ThriftStruct[];
  /** The schema's non-root elements as readers see them. */
  readonly columns: readonly ParquetColumnInfo[];
  readonly leaves: readonly CopyLeaf[];
  readonly columnOrders: ThriftList | undefined;
  readonly rowGroups: readonly CopyRowGroup[];
  /** Hudi's bloom filter type (hoodie_bloom_filter_type_code; SIMPLE when only the filter is there, as Hudi reads it). */
  readonly bloomFilterType: string | undefined;
  /** Why this file's pages cannot be copied (encryption, chunks in another file, a chunk past the pages), if so. */
  readonly refusal: string | undefined;
  /** The encoded non-root schema elements: equal for files of the same Parquet schema. */
  readonly schemaKey: string;
}

/** Read a file's footer for binary copy. Footer key/values other than Hudi's bloom filter type are not kept. */
export async function readCopyInput(file: string): Promise<CopyInput> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const { metadata, start: footerStart } = await readFileFooter(handle, file);
    const schema = metadata.list(FILE_METADATA.schema)?.items.filter(isStruct) ?? [];
    // As Hudi's writers annotate integers (type repair drops the same annotations from what DuckDB writes): files of
    // ours from before that compare equal to today's, and no copy carries what Hudi 1.1's column stats refuse.
    dropRedundantIntegerAnnotations(schema);
    const columns = columnInfosFromSchemaElements(schema);
    const leaves = leavesOf(schema, columns);
    const keyValues = new Map<string, boolean | string>();
    for (const entry of metadata.list(FILE_METADATA.keyValueMetadata)?.items.filter(isStruct) ?? []) {
      const key = Buffer.from(entry.binary(1) ?? new Uint8Array()).toString('utf8');
      if (key === HUDI_BLOOM_FILTER_TYPE_KEY) keyValues.set(key, Buffer.from(entry.binary(2) ?? new Uint8Array()).toString('utf8'));
      else if (key === HUDI_BLOOM_FILTER_KEY) keyValues.set(key, true);
    }
    // Drop the footer's key/values (Hudi's bloom filter can be most of it) before keeping the rest.
    metadata.delete(FILE_METADATA.keyValueMetadata);
    const typeCode = keyValues.get(HUDI_BLOOM_FILTER_TYPE_KEY);
    const rowGroupStructs = metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? [];
    const rowGroups: CopyRowGroup[] = [];
    let refusal = metadata.has(FILE_ENCRYPTION_ALGORITHM) ? 'the file is encrypted' : undefined;
    let rows = 0;
    for (const [index, struct] of rowGroupStructs.entries()) {
      const numRows = Number(struct.bigint(ROW_GROUP.numRows) ?? 0n);
      rows += numRows;
      let bytes = 0;
      const chunks = struct.list(ROW_GROUP.columns)?.items.filter(isStruct) ?? [];
      if (chunks.length !== leaves.length) refusal ??= `row group ${index} has ${chunks.length} column chunks for ${leaves.length} columns`;
      const ranges: { readonly start: number; readonly length: number }[] = [];
      for (const [leafIndex, chunk] of chunks.entries()) {
        const problem = chunkProblem(chunk, leaves[leafIndex], footerStart);
        if (problem !== undefined) {
          refusal ??= `row group ${index}, column ${leaves[leafIndex]?.path ?? leafIndex}: ${problem}`;
          continue;
        }
        const range = chunkPageRange(chunkMetaOf(chunk)); // chunkProblem found it
        ranges.push(range);
        bytes += range.length;
      }
      ranges.sort((a, b) => a.start - b.start);
      let previousEnd = Number.NEGATIVE_INFINITY;
      for (const range of ranges) {
        if (range.start < previousEnd) refusal ??= `row group ${index} has overlapping column chunks`;
        previousEnd = range.start + range.length;
      }
      rowGroups.push({ numRows, bytes, struct });
    }
    const numRows = Number(metadata.bigint(FILE_METADATA.numRows) ?? 0n);
    if (rows !== numRows) refusal ??= `its row groups hold ${rows} rows, its footer says ${numRows}`;
    return {
      file,
      bytes: size,
      numRows,
      createdBy: createdByOf(metadata),
      version: metadata.int(FILE_VERSION) ?? 1,
      schema,
      columns,
      leaves,
      columnOrders: metadata.list(FILE_COLUMN_ORDERS),
      rowGroups,
      bloomFilterType: typeof typeCode === 'string' ? typeCode : keyValues.has(HUDI_BLOOM_FILTER_KEY) ? 'SIMPLE' : undefined,
      refusal,
      schemaKey: schema
        .slice(1)
        .map((element) => new CompactWriter().struct(element).bytes().toString('latin1'))
        .join('\u0000'),
    };
  } finally {
    await handle.close();
  }
}

function chunkProblem(chunk: ThriftStruct, leaf: CopyLeaf | undefined, footerStart: number): string | undefined {
  if (chunk.has(COLUMN_CHUNK.filePath)) return 'its pages are in another file';
  if (chunk.has(COLUMN_CHUNK.cryptoMetadata) || chunk.has(COLUMN_CHUNK.encryptedColumnMetadata)) return 'it is encrypted';
  const meta = chunk.struct(COLUMN_CHUNK.metaData);
  if (meta === undefined) return 'it has no ColumnMetaData';
  const path = (meta.list(COLUMN_META.path)?.items ?? []).map((name) => Buffer.from(name as Uint8Array).toString('utf8')).join('.');
  if (leaf === undefined || path !== leaf.path) return `its path ${path} is not the schema's column ${leaf?.path ?? '(none)'}`;
  const { start, length } = chunkPageRange(meta);
  if (start < MAGIC.length || length <= 0 || start + length > footerStart) return `its pages [${start}, ${start + length}) are not within the file's pages`;
  return undefined;
}

const REPETITION_NAMES = ['REQUIRED', 'OPTIONAL', 'REPEATED'];

function leavesOf(schema: readonly ThriftStruct[], columns: readonly ParquetColumnInfo[]): CopyLeaf[] {
  const leaves: CopyLeaf[] = [];
  const walk = (first: number, count: number, definition: number, repetition: number, repetitions: string[]): number => {
    let next = first;
    for (let child = 0; child < count; child++) {
      const index = next++;
      const element = schema[index + 1];
      const info = columns[index];
      if (element === undefined || info === undefined) return next;
      const code = element.int(3) ?? 0;
      const levels = { definition: definition + (code === 0 ? 0 : 1), repetition: repetition + (code === 2 ? 1 : 0) };
      const path = [...repetitions, REPETITION_NAMES[code] ?? String(code)];
      if (info.numChildren > 0) next = walk(next, info.numChildren, levels.definition, levels.repetition, path);
      else {
        leaves.push({
          path: info.path.join('.'),
          names: info.path,
          physicalType: element.int(1) ?? -1,
          typeLength: element.int(2),
          maxDefinition: levels.definition,
          maxRepetition: levels.repetition,
          repetitions: path.join('/'),
          type: describeParquetType(info),
        });
      }
    }
    return next;
  };
  walk(0, schema[0]?.int(5) ?? 0, 0, 0, []);
  return leaves;
}

// ---------------------------------------------------------------------------------------------------------------
// Deciding.

export interface BinaryCopyOptions {
  /** The top-level BYTE_ARRAY column whose every value becomes the output's file name (Hudi: `_hoodie_file_name`). */
  readonly fileNameColumn: string;
  /** hoodie.clustering.plan.strategy.binary.copy.schema.evolution.enable: inputs may lack top-level columns of the newest schema. */
  readonly schemaEvolution: boolean;
  /** Refuse when the inputs' row groups average fewer bytes: copying keeps them as small as they are. */
  readonly minRowGroupBytes: number;
  /** Under schema evolution, the input whose schema the outputs get (the newest file). */
  readonly schemaFrom: number;
}

/** How the inputs are copied into outputs of one schema. */
export interface CopyLayout {
  readonly schema: readonly ThriftStruct[];
  readonly columnOrders: ThriftList | undefined;
  readonly version: number;
  readonly leaves: readonly CopyLeaf[];
  /** The leaf re-encoded with the output's name. */
  readonly fileNameLeaf: number;
  /** Per input: for each output leaf, the input's leaf index, or undefined for a column the input lacks (written as nulls). */
  readonly sources: readonly (readonly (number | undefined)[])[];
  /** Per input: whether its schema is the output's (its row groups' sorting_columns then still apply). */
  readonly sameSchema: readonly boolean[];
  readonly createdBy: string;
}

export type BinaryCopyPlan = { readonly layout: CopyLayout; readonly refusal?: undefined } | { readonly layout?: undefined; readonly refusal: string };

/** The created_by of files this module writes when the inputs' writers differ. */
export const BINARY_COPY_CREATED_BY = 'hudi-serverless version 0.1.0 (build binary-copy)';

/**
 * Whether these inputs can be copied into outputs of one schema, and how; when not, the reason (a sentence naming
 * the file and what is in the way). The rules are Hudi 1.1's ParquetBinaryCopyChecker and HoodieBinaryCopyHandle:
 * one bloom filter type, one repetition per field, no two-level lists (readers of a copy would see them as written,
 * while Hudi's rewrite makes them three-level), no decimals stored as INT32/INT64/INT96 (parquet-avro cannot read
 * them into Hudi's fixed decimals), and the same schema unless schema evolution is on; plus what binary copy needs
 * to stay correct here: pages it can locate, writers whose statistics readers trust, row groups worth keeping.
 */
export function planBinaryCopy(inputs: readonly CopyInput[], options: BinaryCopyOptions): BinaryCopyPlan {
  const refuse = (refusal: string): BinaryCopyPlan => ({ refusal });
  if (inputs.length === 0) return refuse('there are no input files');
  for (const input of inputs) if (input.refusal !== undefined) return refuse(`${input.file}: ${input.refusal}`);
  const rowGroups = inputs.reduce((total, input) => total + input.rowGroups.length, 0);
  if (rowGroups === 0) return refuse('the input files hold no row groups');
  const chunkBytes = inputs.reduce((total, input) => total + input.rowGroups.reduce((sum, group) => sum + group.bytes, 0), 0);
  if (chunkBytes / rowGroups < options.minRowGroupBytes) {
    return refuse(
      `the inputs' ${rowGroups} row groups average ${formatBytes(chunkBytes / rowGroups)}, below ${formatBytes(options.minRowGroupBytes)} ` +
        '(hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes): a copy would keep them that small, a rewrite makes them large',
    );
  }
  for (const input of inputs) {
    const unsupported = unsupportedSchema(input.columns);
    if (unsupported !== undefined) return refuse(`${input.file}: ${unsupported}`);
    const quirk = statisticsQuirk(input.createdBy);
    if (quirk !== undefined) return refuse(`${input.file}: ${quirk}`);
  }
  const bloomTypes = new Set(inputs.map((input) => input.bloomFilterType ?? 'none'));
  if (bloomTypes.size > 1) return refuse(`the inputs carry Hudi bloom filters of different types (${[...bloomTypes].sort().join(', ')})`);

  const target = inputs[options.schemaFrom] ?? inputs.at(-1);
  if (target === undefined) return refuse('there are no input files');
  const sources: (number | undefined)[][] = [];
  const sameSchema: boolean[] = [];
  for (const input of inputs) {
    if (input.schemaKey === target.schemaKey) {
      sources.push(target.leaves.map((_, index) => index));
      sameSchema.push(true);
      continue;
    }
    if (!options.schemaEvolution) {
      return refuse(
        `${input.file} and ${target.file} have different Parquet schemas (${schemaDifference(input, target)}); ` +
          'hoodie.clustering.plan.strategy.binary.copy.schema.evolution.enable=true copies files that lack columns of the newest one',
      );
    }
    const mapped = mapLeaves(input, target);
    if (typeof mapped === 'string') return refuse(`${input.file}: ${mapped}`);
    sources.push(mapped);
    sameSchema.push(false);
  }
  const fileNameLeaf = target.leaves.findIndex((leaf) => leaf.path === options.fileNameColumn);
  const fileName = target.leaves[fileNameLeaf];
  if (fileName === undefined || fileName.names.length !== 1 || fileName.physicalType !== PHYSICAL_BYTE_ARRAY) {
    return refuse(`the inputs have no top-level text column ${options.fileNameColumn} to name the new files in`);
  }
  const writers = new Set(inputs.map((input) => input.createdBy));
  return {
    layout: {
      schema: target.schema,
      columnOrders: target.columnOrders,
      version: target.version,
      leaves: target.leaves,
      fileNameLeaf,
      sources,
      sameSchema,
      // statisticsQuirk refused inputs that do not name their writer, so one writer is a name.
      createdBy: writers.size === 1 ? (target.createdBy ?? BINARY_COPY_CREATED_BY) : BINARY_COPY_CREATED_BY,
    },
  };
}

/** Hudi's schemaNotSupportBinaryCopy, on our schema tree: INT-stored decimals and two-level lists. */
function unsupportedSchema(columns: readonly ParquetColumnInfo[]): string | undefined {
  for (const column of columns) {
    const decimal = column.logicalType === 'DECIMAL' || column.convertedType === 'DECIMAL';
    if (decimal && ['INT32', 'INT64', 'INT96'].includes(column.physicalType ?? '')) {
      return `column ${column.path.join('.')} is a decimal stored as ${column.physicalType}, which Hudi's Avro reader cannot read into its fixed decimal`;
    }
  }
  const twoLevel = (name: string, node: TypeNode): string | undefined => {
    switch (node.kind) {
      case 'primitive':
        return undefined;
      case 'list':
        return node.twoLevel ? name : twoLevel(`${name}[]`, node.element);
      case 'map':
        return twoLevel(`${name}{key}`, node.key) ?? (node.value === undefined ? undefined : twoLevel(`${name}{value}`, node.value));
      case 'struct':
        for (const [field, child] of node.fields) {
          const found = twoLevel(`${name}.${field}`, child);
          if (found !== undefined) return found;
        }
        return undefined;
    }
  };
  for (const [name, node] of topLevelFields(columns)) {
    const found = twoLevel(name, node);
    if (found !== undefined) return `column ${found} is a legacy two-level list, which Hudi rewrites as a three-level one`;
  }
  return undefined;
}

/**
 * Writers whose statistics readers distrust or work around (parquet-mr before 1.10 and parquet-cpp before 1.3 got
 * the order of binary and decimal min/max wrong): an output has one created_by, so copied pages would lose the
 * workaround.
 */
function statisticsQuirk(createdBy: string | undefined): string | undefined {
  if (createdBy === undefined) return 'its footer does not name the writer (created_by), which readers use to decide which statistics to trust';
  const version = /^(parquet-mr|parquet-cpp) version (\d+)\.(\d+)/.exec(createdBy);
  if (version === null) return undefined;
  const [, application, major, minor] = version;
  const [fixedMajor, fixedMinor] = application === 'parquet-mr' ? ([1, 10] as const) : ([1, 3] as const);
  const older = Number(major) < fixedMajor || (Number(major) === fixedMajor && Number(minor) < fixedMinor);
  return older ? `it was written by ${createdBy}, whose statistics readers work around` : undefined;
}

function schemaDifference(input: CopyInput, target: CopyInput): string {
  const byPath = new Map(input.leaves.map((leaf) => [leaf.path, leaf]));
  for (const leaf of target.leaves) {
    const other = byPath.get(leaf.path);
    if (other === undefined) return `${leaf.path} is missing from the first`;
    const described = describeLeaf(other);
    if (described !== describeLeaf(leaf)) return `${leaf.path} is ${described} in the first, ${describeLeaf(leaf)} in the second`;
  }
  const targetPaths = new Set(target.leaves.map((leaf) => leaf.path));
  const extra = input.leaves.find((leaf) => !targetPaths.has(leaf.path));
  if (extra !== undefined) return `${extra.path} is missing from the second`;
  if (input.leaves.map((leaf) => leaf.path).join() !== target.leaves.map((leaf) => leaf.path).join()) return 'their columns are in a different order';
  return 'their annotations or field ids differ';
}

function describeLeaf(leaf: CopyLeaf): string {
  return `${leaf.repetitions} ${leaf.type}`;
}

const STRING_LIKE = /^BYTE_ARRAY (STRING|ENUM|JSON)$/;

/**
 * Schema evolution: each leaf of the target found in the input stored the same way (physical type, levels,
 * repetitions, a type readers read alike), and each one missing from it under a top-level field the input lacks
 * altogether (nulls can then be written as definition level 0 in every row). Columns the target lacks refuse.
 */
function mapLeaves(input: CopyInput, target: CopyInput): (number | undefined)[] | string {
  const byPath = new Map(input.leaves.map((leaf, index) => [leaf.path, { own: leaf, index }]));
  const targetPaths = new Set(target.leaves.map((leaf) => leaf.path));
  const dropped = input.leaves.find((leaf) => !targetPaths.has(leaf.path));
  if (dropped !== undefined) return `it has column ${dropped.path}, which the newest file ${target.file} does not`;
  const inputTopLevel = new Set(input.leaves.map((leaf) => leaf.names[0]));
  const mapped: (number | undefined)[] = [];
  for (const leaf of target.leaves) {
    const found = byPath.get(leaf.path);
    if (found === undefined) {
      if (inputTopLevel.has(leaf.names[0])) return `it has ${leaf.names[0]} without its part ${leaf.path}, which a copy cannot fill in`;
      if (!leaf.repetitions.startsWith('OPTIONAL')) return `column ${leaf.path} is missing and not nullable`;
      mapped.push(undefined);
      continue;
    }
    const { own, index } = found;
    const sameStorage = own.physicalType === leaf.physicalType && own.typeLength === leaf.typeLength && own.repetitions === leaf.repetitions;
    const sameType = own.type === leaf.type || (STRING_LIKE.test(own.type) && STRING_LIKE.test(leaf.type));
    if (!sameStorage || !sameType) return `column ${leaf.path} is ${describeLeaf(own)}, the newest file has ${describeLeaf(leaf)}`;
    mapped.push(index);
  }
  return mapped;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

// ---------------------------------------------------------------------------------------------------------------
// Sizing.

/**
 * Cut row groups (their byte sizes, in copy order) into runs, one run an output file: as few files as keep each at
 * most `targetBytes` (a row group larger than that is a file of its own), but at least `minOutputs` when there are
 * that many row groups, with sizes as even as row group boundaries allow. Returns [start, end) indexes.
 */
export function planCopyOutputs(sizes: readonly number[], targetBytes: number, minOutputs = 1): [number, number][] {
  if (sizes.length === 0) return [];
  // A run closes when the next row group would pass `cap`, or (given `files`) when the row groups left are only
  // enough for one per file still to come: then the cut makes exactly `files` files when there are that many.
  const greedy = (cap: number, files?: number): [number, number][] => {
    const runs: [number, number][] = [];
    let start = 0;
    let bytes = 0;
    sizes.forEach((size, index) => {
      const oneEachLeft = files !== undefined && sizes.length - index <= files - runs.length - 1;
      if (index > start && (bytes + size > cap || oneEachLeft)) {
        runs.push([start, index]);
        start = index;
        bytes = 0;
      }
      bytes += size;
    });
    runs.push([start, sizes.length]);
    return runs;
  };
  const largest = Math.max(...sizes);
  const total = sizes.reduce((sum, size) => sum + size, 0);
  const upper = Math.max(targetBytes, largest);
  const count = Math.max(greedy(upper).length, Math.min(Math.max(1, Math.floor(minOutputs)), sizes.length));
  // The smallest cap that still needs no more than `count` files evens them out. At that cap a plain greedy cut
  // may need fewer files (four equal row groups for three files: two of two), so the cut is made into exactly
  // `count`, whichever bytes the row groups happen to have.
  let low = Math.max(largest, Math.ceil(total / count));
  let high = upper;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (greedy(middle).length <= count) high = middle;
    else low = middle + 1;
  }
  return greedy(low, count);
}

// ---------------------------------------------------------------------------------------------------------------
// Writing.

export interface CopyOutputRequest {
  readonly file: string;
  readonly inputs: readonly CopyInput[];
  readonly layout: CopyLayout;
  /** The row groups to copy, in output order: [input index, row group index]. */
  readonly rowGroups: readonly (readonly [number, number])[];
  /** The value every row of the file name column gets. */
  readonly fileName: string;
  /**
   * hoodie.parquet.compression.codec as a parquet.thrift CompressionCodec: chunks of another codec are recompressed
   * to it (where this runtime has both codecs), as Hudi's binary copy does; undefined keeps every chunk's own codec.
   */
  readonly codec?: number;
  /** Footer key/values; a promise is awaited only once the pages are copied (they may be computed meanwhile). */
  readonly keyValues: Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
  /**
   * The output is inputs[0]'s own file (`file`), whose first this many row groups (the first entries of rowGroups,
   * in order) stay where they are, the file name column's chunks included: inputs[0] must already hold `fileName`
   * there. The rest is written after them, and the file is cut at its new end. inputs[0]'s other row groups must not
   * be asked for (their bytes are overwritten), nor a codec or a schema that would change the kept chunks.
   */
  readonly keptRowGroups?: number;
}

export interface CopyOutputResult {
  readonly rows: number;
  readonly bytes: number;
  readonly rowGroups: number;
}

/** An index structure of a copied chunk, copied after the row groups: where it is in its input and which field pair points to it. */
interface IndexCopy {
  readonly input: number;
  readonly offset: number;
  readonly length: number;
  readonly kind: 'column' | 'offset' | 'bloom';
  /** The chunk (column and offset indexes) or its ColumnMetaData (bloom filters) whose fields get the new place. */
  readonly owner: ThriftStruct;
  /** Rebase for offset indexes: the chunk's new start minus its old one. */
  readonly delta: number;
  /** A recompressed chunk's data pages (absolute offsets): the offset index gets these instead of a rebase. */
  readonly pages?: readonly { readonly offset: number; readonly size: number }[];
}

/** Write one output of a binary copy: its row groups' pages copied, the file name column re-encoded, a new footer. */
export async function writeCopiedFile(request: CopyOutputRequest): Promise<CopyOutputResult> {
  const { layout, inputs } = request;
  const kept = request.keptRowGroups ?? 0;
  const keepProblem = kept > 0 ? keptRowGroupsProblem(request, kept) : undefined;
  if (keepProblem !== undefined)
    throw new HudiError(`cannot keep row groups in place: ${keepProblem}`, { location: request.file, fix: 'this is a bug in the caller' });
  const out = await open(request.file, kept > 0 ? 'r+' : 'w');
  const writer = new RangeWriter(out);
  const handles = new Map<number, FileHandle>();
  const handleOf = async (input: number): Promise<FileHandle> => {
    let handle = handles.get(input);
    if (handle === undefined) {
      // Row groups come input by input: one input open at a time (a pending copy from it is written first).
      await writer.flush();
      for (const [index, other] of handles) {
        await other.close();
        handles.delete(index);
      }
      handle = await open(itemAt(inputs, input, 'input').file, 'r');
      handles.set(input, handle);
    }
    return handle;
  };
  try {
    const rowGroups: ThriftStruct[] = [];
    const indexes: IndexCopy[] = [];
    /** Index bytes of the kept row groups, read before anything is written over them. */
    const keptIndexBytes = new Map<IndexCopy, Buffer>();
    let rows = 0;
    /** The row group of `chunks`, written from `groupStart`, as the footer lists it. */
    const addRowGroup = (source: CopyInput['rowGroups'][number], chunks: ThriftStruct[], groupStart: number, sameSchema: boolean): void => {
      let uncompressed = 0n;
      let compressed = 0n;
      for (const chunk of chunks) {
        const meta = chunkMetaOf(chunk);
        uncompressed += meta.bigint(COLUMN_META.totalUncompressedSize) ?? 0n;
        compressed += meta.bigint(COLUMN_META.totalCompressedSize) ?? 0n;
      }
      const group = new ThriftStruct();
      group.set(ROW_GROUP.columns, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, chunks));
      group.set(ROW_GROUP.totalByteSize, THRIFT_I64, uncompressed);
      group.set(ROW_GROUP.numRows, THRIFT_I64, BigInt(source.numRows));
      const sorting = source.struct.list(ROW_GROUP.sortingColumns);
      if (sorting !== undefined && sameSchema) group.set(ROW_GROUP.sortingColumns, THRIFT_LIST, sorting);
      group.set(ROW_GROUP.fileOffset, THRIFT_I64, BigInt(groupStart));
      group.set(ROW_GROUP.totalCompressedSize, THRIFT_I64, compressed);
      // RowGroup.ordinal is an i16: past 32,767 row groups readers go by position.
      if (rowGroups.length <= 0x7fff) group.set(ROW_GROUP.ordinal, THRIFT_I16, rowGroups.length);
      rowGroups.push(group);
      rows += source.numRows;
    };
    if (kept === 0) await writer.write(MAGIC);
    else {
      // The kept row groups' chunks stay at their offsets; writing starts past the last of them.
      let end = MAGIC.length;
      for (const [, groupIndex] of request.rowGroups.slice(0, kept)) {
        const source = itemAt(itemAt(inputs, 0, 'input').rowGroups, groupIndex, 'row group');
        let groupStart = Number.POSITIVE_INFINITY;
        const chunks = chunksOf(source.struct).map((chunk) => {
          const { start, length } = chunkPageRange(chunkMetaOf(chunk));
          groupStart = Math.min(groupStart, start);
          end = Math.max(end, start + length);
          return rebasedChunk(chunk, 0, 0, indexes);
        });
        addRowGroup(source, chunks, groupStart, true);
      }
      const handle = await handleOf(0);
      for (const index of indexes) keptIndexBytes.set(index, await readRange(handle, index.offset, index.length));
      writer.startAt(end);
    }
    for (const [inputIndex, groupIndex] of request.rowGroups.slice(kept)) {
      const input = itemAt(inputs, inputIndex, 'input');
      const source = itemAt(input.rowGroups, groupIndex, 'row group');
      const sourceChunks = chunksOf(source.struct);
      const sources = itemAt(layout.sources, inputIndex, "the layout's sources of input");
      const handle = await handleOf(inputIndex);
      const chunks: ThriftStruct[] = [];
      const groupStart = writer.position;
      for (const [leafIndex, leaf] of layout.leaves.entries()) {
        const sourceLeaf = sources[leafIndex];
        const sourceChunk = sourceLeaf === undefined ? undefined : sourceChunks[sourceLeaf];
        const codec = request.codec ?? sourceChunk?.struct(COLUMN_CHUNK.metaData)?.int(COLUMN_META.codec) ?? firstCodec(sourceChunks);
        let chunk: ThriftStruct;
        if (leafIndex === layout.fileNameLeaf || sourceChunk === undefined) {
          const written =
            leafIndex === layout.fileNameLeaf
              ? constantByteArrayChunk(request.fileName, source.numRows, leaf.maxDefinition, codec)
              : nullChunk(source.numRows, leaf.maxDefinition, leaf.maxRepetition, codec);
          const start = writer.position;
          await writer.write(written.bytes);
          chunk = new ThriftStruct();
          chunk.set(COLUMN_CHUNK.fileOffset, THRIFT_I64, BigInt(start + written.dataPageOffset));
          chunk.set(COLUMN_CHUNK.metaData, THRIFT_STRUCT, writtenChunkMetadata(written, leaf.physicalType, leaf.names, start));
        } else {
          const meta = chunkMetaOf(sourceChunk);
          const { start: oldStart, length } = chunkPageRange(meta);
          const start = writer.position;
          const sourceCodec = meta.int(COLUMN_META.codec) ?? 0;
          if (request.codec !== undefined && sourceCodec !== request.codec && canRecompress(sourceCodec, request.codec)) {
            const recompressed = recompressChunk(await readRange(handle, oldStart, length), sourceCodec, request.codec);
            await writer.write(recompressed.bytes);
            chunk = recompressedChunkMetadata(sourceChunk, recompressed, start, request.codec, inputIndex, indexes);
          } else {
            await writer.copy(handle, oldStart, length);
            chunk = rebasedChunk(sourceChunk, start - oldStart, inputIndex, indexes);
          }
        }
        chunks.push(chunk);
      }
      addRowGroup(source, chunks, groupStart, layout.sameSchema[inputIndex] === true);
    }
    // Page indexes and bloom filters after the row groups, as parquet-mr places them.
    for (const kind of ['column', 'offset', 'bloom'] as const) {
      for (const index of indexes.filter((candidate) => candidate.kind === kind)) {
        const bytes = keptIndexBytes.get(index) ?? (await readRange(await handleOf(index.input), index.offset, index.length));
        const placed = writer.position;
        const moved = kind === 'offset' ? rebasedOffsetIndex(bytes, index.delta, index.pages) : bytes;
        // An offset index whose pages do not match the recompressed chunk's is dropped (readers then scan the pages).
        if (moved === undefined) continue;
        await writer.write(moved);
        const length = writer.position - placed;
        if (kind === 'column') {
          index.owner.set(COLUMN_CHUNK.columnIndexOffset, THRIFT_I64, BigInt(placed));
          index.owner.set(COLUMN_CHUNK.columnIndexLength, THRIFT_I32, length);
        } else if (kind === 'offset') {
          index.owner.set(COLUMN_CHUNK.offsetIndexOffset, THRIFT_I64, BigInt(placed));
          index.owner.set(COLUMN_CHUNK.offsetIndexLength, THRIFT_I32, length);
        } else {
          index.owner.set(COLUMN_META.bloomFilterOffset, THRIFT_I64, BigInt(placed));
          index.owner.set(COLUMN_META.bloomFilterLength, THRIFT_I32, length);
        }
      }
    }
    const metadata = new ThriftStruct();
    metadata.set(FILE_VERSION, THRIFT_I32, layout.version);
    metadata.set(FILE_METADATA.schema, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, [...layout.schema]));
    metadata.set(FILE_METADATA.numRows, THRIFT_I64, BigInt(rows));
    metadata.set(FILE_METADATA.rowGroups, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, rowGroups));
    metadata.set(
      FILE_METADATA.keyValueMetadata,
      THRIFT_LIST,
      new ThriftList(
        THRIFT_STRUCT,
        Object.entries(await request.keyValues).map(([key, value]) => {
          const entry = new ThriftStruct();
          entry.set(1, THRIFT_BINARY, Buffer.from(key, 'utf8'));
          entry.set(2, THRIFT_BINARY, Buffer.from(value, 'utf8'));
          return entry;
        }),
      ),
    );
    metadata.set(FILE_METADATA.createdBy, THRIFT_BINARY, Buffer.from(layout.createdBy, 'utf8'));
    if (layout.columnOrders !== undefined) metadata.set(FILE_COLUMN_ORDERS, THRIFT_LIST, layout.columnOrders);
    await writer.write(encodeFooter(metadata));
    await writer.flush();
    if (kept > 0) await out.truncate(writer.position);
    return { rows, bytes: writer.position, rowGroups: rowGroups.length };
  } finally {
    for (const handle of handles.values()) await handle.close();
    await out.close();
  }
}

/** Why inputs[0]'s first `kept` row groups cannot stay in place (CopyOutputRequest.keptRowGroups), or undefined. */
export function keptRowGroupsProblem(request: Omit<CopyOutputRequest, 'keyValues'>, kept: number): string | undefined {
  const { inputs, layout } = request;
  if (request.file !== inputs[0]?.file) return 'the output is not the first input';
  if (request.rowGroups.length < kept || request.rowGroups.slice(0, kept).some(([input, group], index) => input !== 0 || group !== index)) {
    return 'the kept row groups are not the first input’s first ones, in order';
  }
  if (request.rowGroups.slice(kept).some(([input]) => input === 0)) return 'a later row group comes from the first input, whose bytes are overwritten';
  if (request.codec !== undefined || layout.sameSchema[0] !== true || layout.sources[0]?.some((source, leaf) => source !== leaf) !== false) {
    return 'the kept chunks would change (codec or schema)';
  }
  return undefined;
}

function firstCodec(chunks: readonly ThriftStruct[]): number {
  for (const chunk of chunks) {
    const codec = chunk.struct(COLUMN_CHUNK.metaData)?.int(COLUMN_META.codec);
    if (codec !== undefined) return codec;
  }
  return 0;
}

/** The metadata of a chunk recompressed into `codec` and written at `start`; its indexes are queued to be copied. */
function recompressedChunkMetadata(
  source: ThriftStruct,
  written: RecompressedChunk,
  start: number,
  codec: number,
  input: number,
  indexes: IndexCopy[],
): ThriftStruct {
  const chunk = shallowCopy(source);
  const meta = shallowCopy(chunkMetaOf(source));
  chunk.set(COLUMN_CHUNK.metaData, THRIFT_STRUCT, meta);
  chunk.set(COLUMN_CHUNK.fileOffset, THRIFT_I64, BigInt(start + written.dataPageOffset));
  meta.set(COLUMN_META.codec, THRIFT_I32, codec);
  meta.set(COLUMN_META.totalUncompressedSize, THRIFT_I64, BigInt(written.uncompressedSize));
  meta.set(COLUMN_META.totalCompressedSize, THRIFT_I64, BigInt(written.bytes.length));
  meta.set(COLUMN_META.dataPageOffset, THRIFT_I64, BigInt(start + written.dataPageOffset));
  meta.delete(COLUMN_META.indexPageOffset);
  if (written.dictionaryPageOffset === undefined) meta.delete(COLUMN_META.dictionaryPageOffset);
  else meta.set(COLUMN_META.dictionaryPageOffset, THRIFT_I64, BigInt(start + written.dictionaryPageOffset));
  queueIndexes(
    source,
    chunk,
    meta,
    input,
    0,
    indexes,
    written.dataPages.map((page) => ({ offset: start + page.offset, size: page.size })),
  );
  return chunk;
}

/** A copy of a column chunk's metadata with its offsets moved by `delta`; its indexes are queued to be copied. */
function rebasedChunk(source: ThriftStruct, delta: number, input: number, indexes: IndexCopy[]): ThriftStruct {
  const chunk = shallowCopy(source);
  const meta = shallowCopy(chunkMetaOf(source));
  chunk.set(COLUMN_CHUNK.metaData, THRIFT_STRUCT, meta);
  const move = (struct: ThriftStruct, field: number): void => {
    const offset = struct.bigint(field);
    if (offset !== undefined && offset > 0n) struct.set(field, THRIFT_I64, offset + BigInt(delta));
  };
  move(chunk, COLUMN_CHUNK.fileOffset);
  move(meta, COLUMN_META.dataPageOffset);
  move(meta, COLUMN_META.indexPageOffset);
  const data = Number(chunkMetaOf(source).bigint(COLUMN_META.dataPageOffset) ?? 0n);
  const dictionary = Number(meta.bigint(COLUMN_META.dictionaryPageOffset) ?? -1n);
  if (dictionary > 0 && dictionary < data) move(meta, COLUMN_META.dictionaryPageOffset);
  else meta.delete(COLUMN_META.dictionaryPageOffset);
  queueIndexes(source, chunk, meta, input, delta, indexes);
  return chunk;
}

/** Queue a chunk's column index, offset index and bloom filter to be copied after the row groups. */
function queueIndexes(
  source: ThriftStruct,
  chunk: ThriftStruct,
  meta: ThriftStruct,
  input: number,
  delta: number,
  indexes: IndexCopy[],
  pages?: readonly { offset: number; size: number }[],
): void {
  const queue = (kind: IndexCopy['kind'], owner: ThriftStruct, offsetField: number, lengthField: number, fromStruct: ThriftStruct): void => {
    const offset = fromStruct.bigint(offsetField);
    const length = fromStruct.int(lengthField);
    owner.delete(offsetField);
    owner.delete(lengthField);
    if (offset === undefined || length === undefined || length <= 0) return;
    indexes.push({ input, offset: Number(offset), length, kind, owner, delta, ...(kind === 'offset' && pages !== undefined ? { pages } : {}) });
  };
  queue('column', chunk, COLUMN_CHUNK.columnIndexOffset, COLUMN_CHUNK.columnIndexLength, source);
  queue('offset', chunk, COLUMN_CHUNK.offsetIndexOffset, COLUMN_CHUNK.offsetIndexLength, source);
  // A bloom filter without its length (older writers) is dropped: its size is only in its own header.
  queue('bloom', meta, COLUMN_META.bloomFilterOffset, COLUMN_META.bloomFilterLength, chunkMetaOf(source));
}

function shallowCopy(struct: ThriftStruct): ThriftStruct {
  const copy = new ThriftStruct();
  for (const field of struct.fields()) copy.set(field.id, field.type, field.value);
  return copy;
}

/**
 * An OffsetIndex (list of PageLocation {offset, compressed_page_size, first_row_index}) with page offsets moved by
 * `delta`, or, for a recompressed chunk, with its `pages`' places and sizes (undefined if their counts differ).
 */
function rebasedOffsetIndex(bytes: Buffer, delta: number, pages?: readonly { offset: number; size: number }[]): Buffer | undefined {
  const index = new CompactReader(bytes).readStruct();
  const locations = index.list(1)?.items.filter(isStruct) ?? [];
  if (pages !== undefined && pages.length !== locations.length) return undefined;
  const moved = locations.map((location, position) => {
    const copy = shallowCopy(location);
    const page = pages?.[position];
    if (page === undefined) copy.set(1, THRIFT_I64, (location.bigint(1) ?? 0n) + BigInt(delta));
    else {
      copy.set(1, THRIFT_I64, BigInt(page.offset));
      copy.set(2, THRIFT_I32, page.size);
    }
    return copy;
  });
  index.set(1, THRIFT_LIST, new ThriftList(THRIFT_STRUCT, moved));
  return new CompactWriter().struct(index).bytes();
}

/**
 * Appends to a file: copies of ranges of other files (contiguous ones merged into one copy) and bytes, tracking the
 * position every piece lands at.
 */
class RangeWriter {
  position = 0;
  private written = 0;
  private pending: { from: FileHandle; start: number; end: number } | undefined;

  constructor(private readonly out: FileHandle) {}

  async copy(from: FileHandle, start: number, length: number): Promise<void> {
    if (this.pending !== undefined && this.pending.from === from && this.pending.end === start) this.pending.end += length;
    else {
      await this.flush();
      this.pending = { from, start, end: start + length };
    }
    this.position += length;
  }

  /** Continue at `offset` of the output, whose bytes before it are already in place. */
  startAt(offset: number): void {
    this.position = offset;
    this.written = offset;
  }

  async write(bytes: Uint8Array): Promise<void> {
    await this.flush();
    await writeAt(this.out, bytes, this.written);
    this.written += bytes.length;
    this.position += bytes.length;
  }

  async flush(): Promise<void> {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    const length = pending.end - pending.start;
    await copyFileRange(pending.from, this.out, pending.start, length, this.written);
    this.written += length;
  }
}
