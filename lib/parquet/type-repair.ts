/**
 * Type repair: give a file DuckDB wrote the Parquet types of a target schema where DuckDB has no way to write them.
 *
 * DuckDB writes DECIMAL(p,s) as INT32 (p ≤ 9), INT64 (p ≤ 18) or FIXED_LEN_BYTE_ARRAY(16), and every
 * TIMESTAMP_MS/NS as isAdjustedToUTC=false. Hudi's Avro-written files use FIXED_LEN_BYTE_ARRAY(n)
 * decimals (parquet-avro cannot read an INT64 decimal into an Avro fixed, which breaks later upserts)
 * and UTC-adjusted timestamps. So after DuckDB writes, the affected column chunks are re-encoded
 * (values only; levels and dictionary indices are kept) and the footer schema is patched.
 * Only what DuckDB writes is handled (v1 data pages, PLAIN/dictionary values, RLE levels, Snappy or none).
 */
import { randomUUID } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { HudiError } from '../errors.js';
import { copyFileRange, writeAt } from '../util/file-range.js';
import { type DecimalEncoding, decodePlain, decodeStatisticValue, encodePlain, encodeStatisticValue } from './decimal-values.js';
import { encodeFooter, FILE_METADATA, readFileFooter, readRange, writeFooterInPlace } from './footer.js';
import { dropIntegerAnnotation, isRedundantIntegerAnnotation, type ParquetColumnInfo, type TopLevelFields, type TypeNode } from './schema.js';
import { snappyCompress, snappyDecompress } from './snappy.js';
import { CompactReader, CompactWriter, isStruct, THRIFT_BINARY, THRIFT_BOOL, THRIFT_I32, THRIFT_I64, THRIFT_STRUCT, ThriftStruct } from './thrift.js';

type TargetPhysical = 'INT32' | 'INT64' | 'FIXED_LEN_BYTE_ARRAY' | 'BYTE_ARRAY';

/**
 * One leaf to fix: its decimal storage, its timestamp UTC flag, its redundant INTEGER annotation, or several. Only
 * the first two change what a reader decodes (and are re-read to verify them).
 */
export interface TypeRepair {
  /** Leaf (column chunk) index in the written file. */
  leafIndex: number;
  column: string;
  topLevelColumn: string;
  decimal?: { physical: TargetPhysical; typeLength?: number };
  isAdjustedToUTC?: boolean;
  /** Drop INTEGER(32|64, signed) as Hudi's writers do (isRedundantIntegerAnnotation), whatever the target has. */
  plainInteger?: true;
}

/** Whether a repair changes how a reader decodes the leaf (not only how its footer annotates it). */
export function changesValues(repair: TypeRepair): boolean {
  return repair.decimal !== undefined || repair.isAdjustedToUTC !== undefined;
}

/** The leaves of `output` whose type repair can turn into the type `target` has for them, or into Hudi's plain integers. */
export function planTypeRepairs(target: TopLevelFields, output: TopLevelFields): TypeRepair[] {
  const repairs: TypeRepair[] = [];
  const visit = (column: string, topLevelColumn: string, before: TypeNode | undefined, after: TypeNode): void => {
    const same = before?.kind === after.kind ? before : undefined;
    if (after.kind === 'list') visit(`${column}[]`, topLevelColumn, same?.kind === 'list' ? same.element : undefined, after.element);
    else if (after.kind === 'map') {
      visit(`${column}{key}`, topLevelColumn, same?.kind === 'map' ? same.key : undefined, after.key);
      if (after.value !== undefined) visit(`${column}{value}`, topLevelColumn, same?.kind === 'map' ? same.value : undefined, after.value);
    } else if (after.kind === 'struct') {
      for (const [name, child] of after.fields) visit(`${column}.${name}`, topLevelColumn, same?.kind === 'struct' ? same.fields.get(name) : undefined, child);
    } else {
      const repair = {
        ...(same?.kind === 'primitive' ? leafRepair(same.info, after.info) : undefined),
        ...(isRedundantIntegerAnnotation(after.info) ? { plainInteger: true as const } : undefined),
      };
      if (Object.keys(repair).length > 0) repairs.push({ leafIndex: after.leafIndex, column, topLevelColumn, ...repair });
    }
  };
  for (const [name, node] of output) visit(name, name, target.get(name), node);
  return repairs;
}

function leafRepair(input: ParquetColumnInfo, output: ParquetColumnInfo): Pick<TypeRepair, 'decimal' | 'isAdjustedToUTC'> | undefined {
  if (input.logicalType === 'DECIMAL' && output.logicalType === 'DECIMAL') {
    const sameDecimal = input.precision === output.precision && input.scale === output.scale;
    const samePhysical = input.physicalType === output.physicalType && input.typeLength === output.typeLength;
    const repairable = ['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY', 'BYTE_ARRAY'].includes(input.physicalType ?? '');
    const readable = ['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY'].includes(output.physicalType ?? '');
    if (sameDecimal && !samePhysical && repairable && readable) {
      const physical = input.physicalType as TargetPhysical;
      return { decimal: physical === 'FIXED_LEN_BYTE_ARRAY' ? { physical, typeLength: input.typeLength ?? 16 } : { physical } };
    }
    return undefined;
  }
  const sameTimestamp =
    input.logicalType === 'TIMESTAMP' && output.logicalType === 'TIMESTAMP' && input.timeUnit === output.timeUnit && input.physicalType === 'INT64';
  if (sameTimestamp && input.isAdjustedToUTC !== undefined && input.isAdjustedToUTC !== output.isAdjustedToUTC) {
    return { isAdjustedToUTC: input.isAdjustedToUTC };
  }
  return undefined;
}

// Parquet Thrift enums used below.
const PHYSICAL_CODE: Record<TargetPhysical, number> = { INT32: 1, INT64: 2, BYTE_ARRAY: 6, FIXED_LEN_BYTE_ARRAY: 7 };
const PAGE_DATA = 0;
const PAGE_INDEX = 1;
const PAGE_DICTIONARY = 2;
const ENCODING_PLAIN = 0;
const ENCODING_PLAIN_DICTIONARY = 2;
const ENCODING_RLE = 3;
const ENCODING_RLE_DICTIONARY = 8;
const CODEC_UNCOMPRESSED = 0;
const CODEC_SNAPPY = 1;
const REPETITION_REQUIRED = 0;
const REPETITION_REPEATED = 2;

function repairError(file: string, problem: string): HudiError {
  return new HudiError(`cannot repair Parquet types: ${problem}`, { location: file, fix: 'report this as a bug with the input files' });
}

interface LeafLayout {
  schemaElement: ThriftStruct;
  maxRepetition: number;
  maxDefinition: number;
}

function leafLayouts(file: string, schema: readonly ThriftStruct[]): LeafLayout[] {
  const leaves: LeafLayout[] = [];
  let next = 1; // element 0 is the root
  const walk = (count: number, repetition: number, definition: number): void => {
    for (let child = 0; child < count; child++) {
      const element = schema[next++];
      if (element === undefined) throw repairError(file, `the schema ends at element ${next - 1}, inside a group that counts more children`);
      const repetitionType = element.int(3) ?? REPETITION_REQUIRED;
      const childRepetition = repetition + (repetitionType === REPETITION_REPEATED ? 1 : 0);
      const childDefinition = definition + (repetitionType === REPETITION_REQUIRED ? 0 : 1);
      const children = element.int(5) ?? 0;
      if (children > 0) walk(children, childRepetition, childDefinition);
      else leaves.push({ schemaElement: element, maxRepetition: childRepetition, maxDefinition: childDefinition });
    }
  };
  walk(schema[0]?.int(5) ?? 0, 0, 0);
  return leaves;
}

interface RewrittenChunk {
  start: number;
  oldLength: number;
  bytes: Buffer;
}

/** Apply repairs: re-encode the repaired decimal column chunks and patch the footer, replacing `file` atomically. */
export async function repairParquetTypes(file: string, repairs: readonly TypeRepair[]): Promise<void> {
  const handle = await open(file, 'r');
  const temporary = `${file}.${randomUUID()}.repair`;
  try {
    const footer = await readFileFooter(handle, file);
    const { metadata } = footer;
    const schema = metadata.list(FILE_METADATA.schema)?.items.filter(isStruct) ?? [];
    const leaves = leafLayouts(file, schema);

    const rewritten: RewrittenChunk[] = [];
    const chunkFixes: { meta: ThriftStruct; start: number; dictionaryOffset?: number; dataOffset: number }[] = [];
    for (const rowGroup of metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? []) {
      const chunks = rowGroup.list(1)?.items.filter(isStruct) ?? [];
      let uncompressedDelta = 0n;
      let compressedDelta = 0n;
      for (const repair of repairs) {
        if (repair.decimal === undefined) continue;
        const chunk = chunks[repair.leafIndex];
        const meta = chunk?.struct(3);
        const layout = leaves[repair.leafIndex];
        if (chunk === undefined || meta === undefined || layout === undefined) throw repairError(file, `no column chunk ${repair.leafIndex}`);
        if (chunk.has(4) || chunk.has(6)) throw repairError(file, 'page indexes are not supported');
        const start = Math.min(...[meta.bigint(11), meta.bigint(9)].filter((offset) => offset !== undefined).map(Number));
        const oldLength = Number(meta.bigint(7) ?? 0n);
        const result = rewriteDecimalChunk(file, await readRange(handle, start, oldLength), meta, layout, repair.decimal);
        rewritten.push({ start, oldLength, bytes: result.bytes });
        uncompressedDelta += BigInt(result.uncompressedSize) - (meta.bigint(6) ?? 0n);
        compressedDelta += BigInt(result.bytes.length - oldLength);
        meta.set(1, THRIFT_I32, PHYSICAL_CODE[repair.decimal.physical]);
        meta.set(6, THRIFT_I64, BigInt(result.uncompressedSize));
        meta.set(7, THRIFT_I64, BigInt(result.bytes.length));
        const statistics = meta.struct(12);
        if (statistics !== undefined) convertStatistics(statistics, layout.schemaElement, repair.decimal);
        // The bloom filter hashed the old encoding; size statistics described it.
        meta.delete(14);
        meta.delete(15);
        meta.delete(16);
        chunkFixes.push({ meta, start, dictionaryOffset: result.dictionaryOffset, dataOffset: result.dataOffset });
      }
      rowGroup.set(2, THRIFT_I64, (rowGroup.bigint(2) ?? 0n) + uncompressedDelta);
      if (rowGroup.has(6)) rowGroup.set(6, THRIFT_I64, (rowGroup.bigint(6) ?? 0n) + compressedDelta);
    }
    rewritten.sort((a, b) => a.start - b.start);

    // Every other offset moves by the size change of the rewritten chunks before it.
    const moved = (offset: bigint): bigint => {
      let shift = 0;
      for (const chunk of rewritten) if (chunk.start < Number(offset)) shift += chunk.bytes.length - chunk.oldLength;
      return offset + BigInt(shift);
    };
    const newStart = new Map(rewritten.map((chunk) => [chunk.start, Number(moved(BigInt(chunk.start)))]));
    const fixed = new Set(chunkFixes.map((fix) => fix.meta));
    for (const rowGroup of metadata.list(FILE_METADATA.rowGroups)?.items.filter(isStruct) ?? []) {
      shiftField(rowGroup, 5, moved);
      for (const chunk of rowGroup.list(1)?.items.filter(isStruct) ?? []) {
        shiftField(chunk, 2, moved);
        const meta = chunk.struct(3);
        if (meta === undefined || fixed.has(meta)) continue;
        for (const field of [9, 10, 11, 14]) shiftField(meta, field, moved);
      }
    }
    for (const fix of chunkFixes) {
      const base = newStart.get(fix.start);
      if (base === undefined) throw repairError(file, `no rewritten chunk starts at ${fix.start}`); // every fix names a rewritten chunk
      fix.meta.set(9, THRIFT_I64, BigInt(base + fix.dataOffset));
      if (fix.dictionaryOffset === undefined) fix.meta.delete(11);
      else fix.meta.set(11, THRIFT_I64, BigInt(base + fix.dictionaryOffset));
    }

    for (const repair of repairs) {
      const leaf = leaves[repair.leafIndex];
      if (leaf === undefined) throw repairError(file, `no leaf column ${repair.leafIndex}`); // checked with its chunk above
      patchSchemaElement(leaf.schemaElement, repair);
    }

    if (rewritten.length === 0) {
      // Schema-only repair: the pages stay where they are, only the footer changes.
      await handle.close();
      const inPlace = await open(file, 'r+');
      try {
        await writeFooterInPlace(inPlace, footer);
      } finally {
        await inPlace.close();
      }
      return;
    }
    const output = await open(temporary, 'w');
    try {
      let position = 0;
      let written = 0;
      const append = async (bytes: Uint8Array): Promise<void> => {
        await writeAt(output, bytes, written);
        written += bytes.length;
      };
      for (const chunk of rewritten) {
        await copyFileRange(handle, output, position, chunk.start - position, written);
        written += chunk.start - position;
        await append(chunk.bytes);
        position = chunk.start + chunk.oldLength;
      }
      await copyFileRange(handle, output, position, footer.start - position, written);
      written += footer.start - position;
      await append(encodeFooter(metadata));
    } finally {
      await output.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function shiftField(struct: ThriftStruct, field: number, moved: (offset: bigint) => bigint): void {
  const offset = struct.bigint(field);
  if (offset !== undefined) struct.set(field, THRIFT_I64, moved(offset));
}

function patchSchemaElement(element: ThriftStruct, repair: TypeRepair): void {
  if (repair.plainInteger === true) dropIntegerAnnotation(element);
  if (repair.decimal !== undefined) {
    element.set(1, THRIFT_I32, PHYSICAL_CODE[repair.decimal.physical]);
    if (repair.decimal.typeLength === undefined) element.delete(2);
    else element.set(2, THRIFT_I32, repair.decimal.typeLength);
  }
  if (repair.isAdjustedToUTC !== undefined) {
    const logical = element.struct(10) ?? new ThriftStruct();
    const timestamp = logical.struct(8);
    if (timestamp !== undefined) timestamp.set(1, THRIFT_BOOL, repair.isAdjustedToUTC);
    element.set(10, THRIFT_STRUCT, logical);
  }
}

function sourceEncoding(element: ThriftStruct): DecimalEncoding | undefined {
  switch (element.int(1)) {
    case 1:
      return { physical: 'INT32' };
    case 2:
      return { physical: 'INT64' };
    case 7:
      return { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: element.int(2) ?? 16 };
    default:
      return undefined;
  }
}

function targetEncoding(target: NonNullable<TypeRepair['decimal']>): DecimalEncoding {
  return target.physical === 'FIXED_LEN_BYTE_ARRAY' ? { physical: 'FIXED_LEN_BYTE_ARRAY', typeLength: target.typeLength ?? 16 } : { physical: target.physical };
}

function rewriteDecimalChunk(
  file: string,
  chunk: Buffer,
  meta: ThriftStruct,
  layout: LeafLayout,
  target: NonNullable<TypeRepair['decimal']>,
): { bytes: Buffer; uncompressedSize: number; dictionaryOffset: number | undefined; dataOffset: number } {
  const codec = meta.int(4) ?? CODEC_UNCOMPRESSED;
  if (codec !== CODEC_UNCOMPRESSED && codec !== CODEC_SNAPPY) throw repairError(file, `compression codec ${codec} is not supported`);
  const source = sourceEncoding(layout.schemaElement);
  if (source === undefined) throw repairError(file, 'the written decimal column has an unexpected physical type');
  const destination = targetEncoding(target);
  const parts: Buffer[] = [];
  let position = 0;
  let written = 0;
  let uncompressedSize = 0;
  let dictionaryOffset: number | undefined;
  let dataOffset: number | undefined;
  while (position < chunk.length) {
    const reader = new CompactReader(chunk, position);
    const header = reader.readStruct();
    const pageType = header.int(1);
    const compressedSize = header.int(3) ?? 0;
    const body = chunk.subarray(reader.position, reader.position + compressedSize);
    position = reader.position + compressedSize;
    header.delete(4); // the CRC covered the old bytes
    let raw: Buffer;
    if (pageType === PAGE_DICTIONARY) {
      const encoding = header.struct(7)?.int(2);
      if (encoding !== ENCODING_PLAIN && encoding !== ENCODING_PLAIN_DICTIONARY) throw repairError(file, `dictionary encoding ${encoding}`);
      raw = encodePlain(decodePlain(decompress(body, codec, header), source), destination);
      dictionaryOffset ??= written;
    } else if (pageType === PAGE_DATA) {
      const pageHeader = header.struct(5);
      const encoding = pageHeader?.int(2);
      const data = decompress(body, codec, header);
      let levels = 0;
      for (const [maxLevel, levelEncoding] of [
        [layout.maxRepetition, pageHeader?.int(4)],
        [layout.maxDefinition, pageHeader?.int(3)],
      ] as const) {
        if (maxLevel === 0) continue;
        if (levelEncoding !== ENCODING_RLE) throw repairError(file, `level encoding ${levelEncoding}`);
        levels += 4 + data.readUInt32LE(levels);
      }
      const values = data.subarray(levels);
      let newValues: Buffer;
      if (encoding === ENCODING_PLAIN) newValues = encodePlain(decodePlain(values, source), destination);
      else if (encoding === ENCODING_PLAIN_DICTIONARY || encoding === ENCODING_RLE_DICTIONARY) newValues = values;
      else throw repairError(file, `data page encoding ${encoding}`);
      raw = Buffer.concat([data.subarray(0, levels), newValues]);
      const statistics = pageHeader?.struct(5);
      if (statistics !== undefined) convertStatistics(statistics, layout.schemaElement, target);
      dataOffset ??= written;
    } else if (pageType === PAGE_INDEX) {
      raw = decompress(body, codec, header);
    } else {
      throw repairError(file, `page type ${pageType} (only v1 data pages are written here)`);
    }
    const compressed = codec === CODEC_SNAPPY ? snappyCompress(raw) : raw;
    header.set(2, THRIFT_I32, raw.length);
    header.set(3, THRIFT_I32, compressed.length);
    const headerBytes = new CompactWriter().struct(header).bytes();
    parts.push(headerBytes, compressed);
    written += headerBytes.length + compressed.length;
    uncompressedSize += headerBytes.length + raw.length;
  }
  if (dataOffset === undefined) throw repairError(file, 'column chunk without data pages');
  return { bytes: Buffer.concat(parts), uncompressedSize, dictionaryOffset, dataOffset };
}

function decompress(body: Buffer, codec: number, header: ThriftStruct): Buffer {
  if (codec === CODEC_UNCOMPRESSED) return body;
  const raw = snappyDecompress(body);
  if (raw.length !== header.int(2)) throw new Error(`snappy page decoded to ${raw.length} bytes, header says ${header.int(2)}`);
  return raw;
}

function convertStatistics(statistics: ThriftStruct, writtenElement: ThriftStruct, target: NonNullable<TypeRepair['decimal']>): void {
  const source = sourceEncoding(writtenElement);
  if (source === undefined) return;
  const destination = targetEncoding(target);
  for (const field of [1, 2, 5, 6]) {
    const bytes = statistics.binary(field);
    if (bytes === undefined) continue;
    const [value] = decodeStatisticValue(Buffer.from(bytes), source);
    if (value === undefined) statistics.delete(field);
    else statistics.set(field, THRIFT_BINARY, encodeStatisticValue(value, destination));
  }
}
