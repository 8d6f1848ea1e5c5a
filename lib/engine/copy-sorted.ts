/**
 * copySorted: sort Parquet inputs once and write rank ranges of the sorted rows to output files, with the inputs'
 * Parquet types (casts, or type repair) and Hudi's footer. Several outputs: one ordered COPY, then each output cut from
 * it by copying row groups byte for byte (only the row group a boundary falls in is rewritten). Where that cannot be
 * done (binary copy refuses the schema, the COPY runs out of memory, outputs of fewer than four row groups), a temp
 * table whose rowid is the rank and one COPY per rank range; the reason is in the result.
 *
 * Why one long file: the split path and its fallbacks are one algorithm over the same sorted rows, ranks and output
 * checks; apart, each half would need the other's internals.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBUIntegerVector } from '@duckdb/node-api';
import { HudiError } from '../errors.js';
import { type CopyInput, keptRowGroupsProblem, planBinaryCopy, readCopyInput, writeCopiedFile } from '../parquet/binary-copy.js';
import { readFooterSummary, setFooterKeyValues } from '../parquet/footer.js';
import { chunkMetaData, leafChunkIndexes } from '../parquet/metadata-fields.js';
import { compareFields } from '../parquet/schema.js';
import { exactByteRange } from '../parquet/statistics.js';
import { settleAll } from '../storage/concurrency.js';
import { assertFilesExist, type DuckDb, duckdbReason, guardFiles } from './connection.js';
import { duckdb } from './duckdb.js';
import {
  createInputsTable,
  FILE_INDEX_COLUMN,
  FILE_OFFSET_COLUMN,
  INPUT_ROW_SQL,
  inputFacts,
  inputScanSql,
  rowsPerFile,
  SOURCE_FILE_COLUMN,
} from './input-order.js';
import {
  type CopySortedOutput,
  type CopySortedRequest,
  type CopySortedResult,
  DERIVED_COLUMN_PREFIX,
  type DerivedColumnLayers,
  type FooterFromColumn,
  type InputFooter,
  type OutputRange,
  type SortKey,
} from './port.js';
import { type ColumnDescription, describeColumns } from './schema-rows.js';
import { copyToParquetSql, fileListSql, nonNegativeInteger, positiveInteger, READ_OPTIONS, sqlIdentifier, sqlString } from './sql.js';
import { conformParquetTypes, type ParquetTypeTargets, preservingDuckDbType, typeTargetsOf } from './type-targets.js';

/** Sort the inputs once, then write each output's rank range to its own file, keeping the input's Parquet types. */
export async function copySorted(db: DuckDb, request: CopySortedRequest): Promise<CopySortedResult> {
  const checked = await checkRequest(request);
  const described = await describeInputs(db, request, checked);
  const suffix = randomUUID().replaceAll('-', '');
  const names: TempNames = {
    suffix,
    sortedTable: sqlIdentifier(`__hudi_sorted_${suffix}`),
    table: sqlIdentifier(`__hudi_ranked_${suffix}`),
    ranksTable: sqlIdentifier(`__hudi_ranks_${suffix}`),
  };
  let filesTable: string | undefined;
  const written: string[] = [];
  try {
    filesTable = await createInputsTable(db.connection, request.inputs, checked.fileRows);
    /** Every input row with its input position, then the derived columns the sort keys name (none without keys). */
    const sourceRows = withDerivedColumns(
      `(SELECT *, ${INPUT_ROW_SQL} AS ${sqlIdentifier(INPUT_ROW_COLUMN)} FROM ${inputScanSql(request.inputs, filesTable, checked.readOptions)})`,
      checked.derivedColumns,
    );
    const rankJoin =
      request.rowRanks === undefined ? '' : `JOIN ${await loadRanks(db, names.ranksTable, request.rowRanks)} USING (${sqlIdentifier(INPUT_ROW_COLUMN)})`;
    const copy: SortedCopy = { db, request, ...checked, ...described, names, sourceRows, rankJoin, written };
    const single = request.outputs[0]!;
    if (request.outputs.length === 1 && single.rowStart === 0 && single.rowCount === checked.totalInputRows && single.sequenceColumns === undefined) {
      return await copyWhole(copy, single);
    }
    const cutOrRanged = await cutOrKeyRanges(copy);
    if (cutOrRanged.result !== undefined) return cutOrRanged.result;
    return await copyRankRanges(copy, cutOrRanged.refusals);
  } catch (error) {
    await settleAll(written.map((file) => rm(file, { force: true })));
    throw error;
  } finally {
    await db.connection.run(`DROP VIEW IF EXISTS ${names.table}`).catch(() => undefined);
    for (const name of [names.sortedTable, names.ranksTable, ...(filesTable === undefined ? [] : [filesTable])])
      await db.connection.run(`DROP TABLE IF EXISTS ${name}`).catch(() => undefined);
  }
}

/** What the request's checks establish about the inputs, before DuckDB reads them. */
interface CheckedRequest {
  readonly rowGroupSize: number;
  readonly footers: readonly InputFooter[];
  readonly fileRows: readonly number[];
  readonly oneSchema: boolean;
  readonly readOptions: string;
  readonly totalInputRows: number;
  readonly derivedColumns: DerivedColumnLayers;
  /** Sorted by the request's keys (not input order, not rowRanks). */
  readonly sortedByKeys: boolean;
}

/** The inputs' columns as DuckDB reads them, and how each is projected back to the inputs' Parquet type. */
interface DescribedInputs {
  readonly columns: readonly ColumnDescription[];
  readonly allProjection: readonly string[];
  readonly inputFields: ParquetTypeTargets;
}

interface TempNames {
  readonly suffix: string;
  readonly sortedTable: string;
  /** The sorted rows with their rank (a view over sortedTable). */
  readonly table: string;
  readonly ranksTable: string;
}

/** One copySorted run: its request, what was checked and described, its temp names and the files it wrote. */
interface SortedCopy extends CheckedRequest, DescribedInputs {
  readonly db: DuckDb;
  readonly request: CopySortedRequest;
  readonly names: TempNames;
  readonly sourceRows: string;
  /** The join of rowRanks to every row (empty without rowRanks). */
  readonly rankJoin: string;
  /** Every output file begun, removed when the copy fails. */
  readonly written: string[];
}

/** Every check of the request that needs no DuckDB: inputs, outputs, ranks, derived columns. */
async function checkRequest(request: CopySortedRequest): Promise<CheckedRequest> {
  const { inputs, outputs } = request;
  if (inputs.length === 0) throw new HudiError('copySorted needs at least one input file', { fix: 'pass the input base files' });
  if (outputs.length === 0) throw new HudiError('copySorted needs at least one output range', { fix: 'pass the output files' });
  if (new Set(inputs).size !== inputs.length) throw new HudiError('an input file is listed twice', { fix: 'pass each input once' });
  const rowGroupSize = positiveInteger(request.rowGroupSize, 'rowGroupSize');
  await assertFilesExist(inputs);
  // Each input's footer is read once (by the caller, or here): row counts and Parquet types both come from it.
  const footers = request.inputFooters ?? inputs.map((file) => readFooterSummary(file));
  if (footers.length !== inputs.length) {
    throw new HudiError(`copySorted got ${footers.length} input footers for ${inputs.length} inputs`, { fix: 'pass one footer per input, in input order' });
  }
  const { fileRows, oneSchema, readOptions } = inputFacts(footers);
  const totalInputRows = fileRows.reduce((sum, rows) => sum + rows, 0);
  checkOutputRanges(outputs, totalInputRows);
  if (request.rowRanks !== undefined) {
    if ((request.orderBy ?? []).length > 0) throw new HudiError('copySorted takes orderBy or rowRanks, not both', { fix: 'pass one of them' });
    checkRowRanks(request.rowRanks, totalInputRows);
  }
  const derivedColumns = request.derivedColumns ?? [];
  checkDerivedColumns(derivedColumns, request);
  const sortedByKeys = request.rowRanks === undefined && (request.orderBy ?? []).length > 0;
  return { rowGroupSize, footers, fileRows, oneSchema, readOptions, totalInputRows, derivedColumns, sortedByKeys };
}

/** The inputs' columns (none may be one copySorted uses internally) and their projection to the inputs' types. */
async function describeInputs(db: DuckDb, request: CopySortedRequest, checked: CheckedRequest): Promise<DescribedInputs> {
  const { inputs } = request;
  // Inputs of one schema read as the first does: describing it alone spares parsing every input's path again.
  const columns = await guardFiles(db.connection, inputs, () => describeColumns(db.connection, checked.oneSchema ? [inputs[0]!] : inputs, checked.readOptions));
  const prefixed = columns
    .filter((column) => column.name.startsWith(SORT_KEY_PREFIX) || column.name.startsWith(DERIVED_COLUMN_PREFIX))
    .map((column) => column.name);
  for (const reserved of [...INTERNAL_COLUMNS, 'file_row_number', FILE_INDEX_COLUMN, ...prefixed]) {
    if (columns.some((column) => column.name === reserved)) {
      throw new HudiError(`input has a column named "${reserved}", which copySorted uses internally`, {
        location: inputs[0],
        fix: 'rename the column',
      });
    }
  }
  checkOutputColumns(request.outputs, request.footerFromColumn, columns);
  const inputFields = typeTargetsOf(checked.footers.map((footer) => footer.columns));
  const allProjection = columns.map((column) => {
    const target = preservingDuckDbType(column.type, inputFields, column.name);
    const quoted = sqlIdentifier(column.name);
    return target.toString() === column.type.toString() ? quoted : `CAST(${quoted} AS ${target.toString()}) AS ${quoted}`;
  });
  return { columns, allProjection, inputFields };
}

/** The projection without the columns an output replaces by a constant (`_hoodie_file_name`, a text per row). */
function projectionOf(copy: SortedCopy, output: OutputRange): string[] {
  const replaced = output.constantColumns ?? {};
  return copy.allProjection.filter((_, index) => replaced[copy.columns[index]!.name] === undefined);
}

/** The sort keys as SQL: each key's expression as a column, and the ORDER BY that breaks ties by input order. */
function keySql(copy: SortedCopy): { keyColumns: string[]; ordering: string[] } {
  const keys = (copy.request.orderBy ?? []).map((key) => sortKeyParts(key, copy.columns));
  return {
    keyColumns: keys.map((key, index) => `${key.expression} AS ${sqlIdentifier(`${SORT_KEY_PREFIX}${index}`)}`),
    ordering: [...keys.map((key, index) => `${sqlIdentifier(`${SORT_KEY_PREFIX}${index}`)} ${key.direction}`), `${sqlIdentifier(INPUT_ROW_COLUMN)} ASC`],
  };
}

/** Every row, ordered (input order, the keys, or rowRanks), with the columns of `output` (its constants). */
function orderedQuery(copy: SortedCopy, output: OutputRange): string {
  const { request, columns, sortedByKeys, sourceRows, rankJoin } = copy;
  const projection = projectionOf(copy, output);
  // Input order needs no sort: DuckDB scans the files in list order, rows in file order.
  if (request.rowRanks === undefined && !sortedByKeys) {
    return `SELECT ${outputColumnsSql(columns, output).join(', ')} FROM (SELECT ${projection.join(', ')} FROM read_parquet(${fileListSql(request.inputs)}, ${copy.readOptions}))`;
  } else if (sortedByKeys) {
    // ORDER BY the keys themselves: a row_number() window over them and then a sort by it costs a second sort.
    // The keys are computed beside the projection, over the input's own (uncast) columns, as the window did.
    const { keyColumns, ordering } = keySql(copy);
    return `SELECT ${outputColumnsSql(columns, output).join(', ')}
               FROM (SELECT ${[...projection, ...keyColumns, sqlIdentifier(INPUT_ROW_COLUMN)].join(', ')}
                     FROM ${sourceRows} AS source)
               ORDER BY ${ordering.join(', ')}`;
  } else {
    return `SELECT ${outputColumnsSql(columns, output).join(', ')}
               FROM (SELECT ${projection.join(', ')}, ${sqlIdentifier(RANK_VALUE_COLUMN)}
                     FROM ${sourceRows} AS source
                     ${rankJoin})
               ORDER BY ${sqlIdentifier(RANK_VALUE_COLUMN)}`;
  }
}

/**
 * One output holding every row: sort and write in one COPY (as DuckDB alone would), while a second connection
 * reads the footer column, in any order, for the footer (bloom filter, min/max keys).
 */
async function copyWhole(copy: SortedCopy, single: OutputRange): Promise<CopySortedResult> {
  const { db, request, written } = copy;
  const { inputs } = request;
  await mkdir(dirname(single.file), { recursive: true });
  written.push(single.file);
  const footer = request.footerFromColumn;
  const query = orderedQuery(copy, single);
  // Both settle before anything else happens: on a failure the caller removes the file the other may still write.
  // Few inputs: the footer (bloom filter: JavaScript on this thread) is built from a side scan of the inputs while
  // DuckDB's threads write the file. Many inputs: opening every input twice costs more than reading the one
  // column back from the one output, and the side scan's buffers would sit in memory beside the COPY's.
  const onSide = footer !== undefined && inputs.length <= SIDE_SCAN_MAX_INPUTS && footer.fromRange?.applies(single) !== true;
  const [, sideKeyValues] = await settleAll([
    guardFiles(db.connection, inputs, () => copyTo(db, query, single.file, copy.rowGroupSize, footer === undefined ? single.keyValues : {})),
    !onSide
      ? Promise.resolve(undefined)
      : guardFiles(db.connection, inputs, () => columnValuesOnSide(db, inputs, footer.column, copy.readOptions)).then((values) => footer.build(values, single)),
  ]);
  const footerKeyValues =
    footer === undefined || onSide ? sideKeyValues : await guardFiles(db.connection, [single.file], () => footerOfOutput(db, footer, single));
  const result = await finishOutput(db, single, copy.inputFields);
  if (footerKeyValues !== undefined) await setFooterKeyValues(single.file, { ...single.keyValues, ...footerKeyValues });
  assertCompatible([result], request.onTypeMismatch);
  return { totalInputRows: copy.totalInputRows, outputs: [result] };
}

/**
 * Several outputs covering every row, each of a few row groups at least, are cut from one ordered COPY (the one
 * DuckDB alone would run) at its row groups: one sort, then a byte copy. Smaller outputs would be mostly pieces of
 * cut row groups. A few outputs can instead be range-partitioned by the sort key, as Spark's sortBy is (its
 * RangePartitioner): each output sorts only its own rows, but every output scans every input. Ordered by columns,
 * the cut takes less CPU than the key ranges; ordered by a curve's ranks (joined to every row), the key ranges take
 * less than the cut. So ranked rows take the key ranges first, rows ordered by columns the cut, and each falls back
 * on the other. Neither applying: no result, and why each was refused.
 */
async function cutOrKeyRanges(copy: SortedCopy): Promise<{ result?: CopySortedResult; refusals: string[] }> {
  const { db, request, columns, sortedByKeys, totalInputRows, written } = copy;
  const { inputs, outputs } = request;
  const single = outputs[0]!;
  const ranked = request.rowRanks !== undefined;
  const keyRangesApply =
    (sortedByKeys || ranked) && outputs.length <= KEY_RANGES_MAX_OUTPUTS && outputs.every((output) => output.sequenceColumns === undefined);
  const keyRanges = (): Promise<CopySortedOutput[] | string> =>
    guardFiles(db.connection, inputs, () =>
      writeKeyRanges(db, {
        inputs,
        readOptions: copy.readOptions,
        outputs,
        totalRows: totalInputRows,
        order: ranked
          ? {
              kind: 'ranks',
              keyed: `(SELECT *, ${sqlIdentifier(RANK_VALUE_COLUMN)} AS ${sqlIdentifier(SORT_KEY_COLUMN)}
                         FROM ${copy.sourceRows} AS source ${copy.rankJoin})`,
            }
          : { kind: 'keys', keys: (request.orderBy ?? []).map((key) => sortKeyParts(key, columns)), derivedColumns: copy.derivedColumns },
        projectionOf: (output) => projectionOf(copy, output),
        columns,
        rowGroupSize: copy.rowGroupSize,
        inputFields: copy.inputFields,
        footer: request.footerFromColumn,
        written,
      }),
    );
  const splitColumn = splittableColumn(outputs, totalInputRows);
  const splitApplies = splitColumn !== undefined && Math.min(...outputs.map((output) => output.rowCount)) >= SPLIT_MIN_ROW_GROUPS * copy.rowGroupSize;
  const cut = async (): Promise<Awaited<ReturnType<typeof writeSplit>>> => {
    const splitDir = join(dirname(single.file), `.hudi-split-${copy.names.suffix}`);
    try {
      return await guardFiles(db.connection, inputs, () =>
        writeSplit(db, {
          query: orderedQuery(copy, single),
          outputs,
          column: splitColumn!,
          dir: splitDir,
          rowGroupSize: copy.rowGroupSize,
          inputFields: copy.inputFields,
          footer: request.footerFromColumn,
          written,
        }),
      );
    } finally {
      await rm(splitDir, { recursive: true, force: true });
    }
  };
  let keyRangesRefused: string | undefined;
  let splitFallback: string | undefined;
  /** The outputs from key ranges, or undefined (keyRangesRefused says why) when that way refuses. */
  const rangedResult = async (): Promise<CopySortedResult | undefined> => {
    const ranged = await keyRanges();
    if (typeof ranged === 'string') {
      keyRangesRefused = ranged;
      return undefined;
    }
    assertCompatible(ranged, request.onTypeMismatch);
    return {
      totalInputRows,
      outputs: ranged,
      split: { method: 'key-ranges', outputs: ranged.length, ...(splitFallback === undefined ? {} : { notCut: splitFallback }) },
    };
  };
  if (ranked && keyRangesApply) {
    const ranged = await rangedResult();
    if (ranged !== undefined) return { result: ranged, refusals: [] };
  }
  if (splitApplies) {
    const split = await cut();
    if (typeof split !== 'string') {
      assertCompatible(split.outputs, request.onTypeMismatch);
      const { split: how } = split;
      return {
        result: {
          totalInputRows,
          outputs: split.outputs,
          split: how.method === 'copy' && keyRangesRefused !== undefined ? { ...how, keyRangesRefused } : how,
        },
        refusals: [],
      };
    }
    splitFallback = split;
  }
  // Keys over derived columns (a curve's) are range-partitioned only when one ordered file did not fit in memory:
  // each output's range filter computes them again for every row (DuckDB inlines them into it), each pass then
  // costing about as much as the whole sort, but each sort holds only its output's rows.
  if (!ranked && keyRangesApply && (copy.derivedColumns.length === 0 || splitFallback !== undefined)) {
    const ranged = await rangedResult();
    if (ranged !== undefined) return { result: ranged, refusals: [] };
  }
  return { refusals: [splitFallback, keyRangesRefused].filter((reason) => reason !== undefined) };
}

/**
 * The fallback for several outputs: the rows go into a temp table once, with their rank, and each output is one
 * COPY of a rank range. Sorted by keys, the table is filled by one ORDER BY (its rowid is then the rank: no output
 * re-sorts, and a plain sort spills past DuckDB's memory limit where a row_number() window ran out of memory). When
 * the rank is known up front (input order, rowRanks) the table is filled unsorted and each range is sorted on its
 * own: k sorts of n/k rows hold less in memory than one of n.
 */
async function copyRankRanges(copy: SortedCopy, refusals: readonly string[]): Promise<CopySortedResult> {
  const { db, request, names, sortedByKeys, written } = copy;
  const { inputs, outputs } = request;
  const source = `${copy.sourceRows} AS source ${copy.rankJoin}`;
  if (sortedByKeys) {
    const { keyColumns, ordering } = keySql(copy);
    await guardFiles(db.connection, inputs, () =>
      db.connection.run(
        `CREATE TEMP TABLE ${names.sortedTable} AS
           SELECT * FROM (SELECT ${[...copy.allProjection, ...keyColumns, sqlIdentifier(INPUT_ROW_COLUMN)].join(', ')} FROM ${source})
           ORDER BY ${ordering.join(', ')}`,
      ),
    );
    await db.connection.run(`CREATE TEMP VIEW ${names.table} AS SELECT *, rowid AS ${sqlIdentifier(RANK_COLUMN)} FROM ${names.sortedTable}`);
  } else {
    const rank = request.rowRanks !== undefined ? sqlIdentifier(RANK_VALUE_COLUMN) : INPUT_ROW_SQL;
    await guardFiles(db.connection, inputs, () =>
      db.connection.run(
        `CREATE TEMP TABLE ${names.sortedTable} AS SELECT ${copy.allProjection.join(', ')}, ${rank} AS ${sqlIdentifier(RANK_COLUMN)} FROM ${source}`,
      ),
    );
    await db.connection.run(`CREATE TEMP VIEW ${names.table} AS SELECT * FROM ${names.sortedTable}`);
  }
  const results: CopySortedOutput[] = [];
  for (const output of outputs) {
    const keyValues =
      request.footerFromColumn === undefined
        ? output.keyValues
        : { ...output.keyValues, ...request.footerFromColumn.build(await rangeValues(db, names.table, request.footerFromColumn.column, output), output) };
    await mkdir(dirname(output.file), { recursive: true });
    written.push(output.file);
    results.push(await writeRange(db, names.table, copy.columns, { ...output, keyValues }, copy.rowGroupSize, copy.inputFields, !sortedByKeys));
  }
  assertCompatible(results, request.onTypeMismatch);
  return {
    totalInputRows: copy.totalInputRows,
    outputs: results,
    ...(refusals.length === 0 ? {} : { split: { method: 'ranges' as const, reason: refusals.join('; ') } }),
  };
}

/**
 * An output's footer entries from its own column: from the column's range where the footer needs no more
 * (fromRange) and DuckDB's byte order of the bounds is Java's (ASCII bounds: a least or greatest ASCII string is
 * so in both orders), else from its values. The range is its row groups' statistics where they are exact (no scan).
 */
async function footerOfOutput(db: DuckDb, footer: FooterFromColumn, output: OutputRange): Promise<Record<string, string>> {
  if (footer.fromRange?.applies(output) === true) {
    const written = await readCopyInput(output.file);
    const range = rangeOfRowGroups(
      [written],
      written.rowGroups.map((_, group) => [0, group] as const),
      footer.column,
    );
    const fromStatistics = range === undefined ? undefined : footerFromRange(footer, output, range.min, range.max);
    if (fromStatistics !== undefined) return fromStatistics;
    const side = await db.instance.connect();
    try {
      const quoted = sqlIdentifier(footer.column);
      const reader = await side.runAndReadAll(`SELECT min(${quoted}), max(${quoted}) FROM read_parquet(${fileListSql([output.file])}, ${READ_OPTIONS})`);
      const [min, max] = reader.getRows()[0] ?? [];
      const fromRange = footerFromRange(footer, output, min, max);
      if (fromRange !== undefined) return fromRange;
    } finally {
      side.closeSync();
    }
  }
  return footer.build(await columnValuesOnSide(db, [output.file], footer.column, READ_OPTIONS), output);
}

/** The footer from the column's least and greatest value, when DuckDB's byte order of them is Java's (ASCII). */
function footerFromRange(footer: FooterFromColumn, output: OutputRange, min: unknown, max: unknown): Record<string, string> | undefined {
  if (footer.fromRange === undefined || typeof min !== 'string' || typeof max !== 'string') return undefined;
  return ASCII_ONLY.test(min) && ASCII_ONLY.test(max) ? footer.fromRange.build({ min, max }, output) : undefined;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/**
 * Each output's footer entries from its rows of the ordered file: from the column's range where the footer needs no
 * more (fromRange), taken from its row groups' statistics (statisticsRange) or else, for all such outputs, from one
 * scan; else from the output's values (one more scan, of those only).
 */
async function footersOfRanges(
  db: DuckDb,
  file: string,
  footer: FooterFromColumn,
  outputs: readonly OutputRange[],
  statisticsRange: (output: number) => StringRange | undefined,
): Promise<Record<string, string>[]> {
  const footers: (Record<string, string> | undefined)[] = outputs.map(() => undefined);
  let ranged = outputs.flatMap((output, index) => (footer.fromRange?.applies(output) === true ? [index] : []));
  // The range from the statistics of the output's row groups where they are exact; the others' from a scan.
  for (const index of ranged) {
    const range = statisticsRange(index);
    if (range !== undefined) footers[index] = footerFromRange(footer, outputs[index]!, range.min, range.max);
  }
  ranged = ranged.filter((index) => footers[index] === undefined);
  if (ranged.length > 0) {
    const quoted = sqlIdentifier(footer.column);
    const reader = await db.connection.runAndReadAll(
      `SELECT ${outputOfRowSql(ranged.map((index) => outputs[index]!))} AS output, min(${quoted}), max(${quoted})
       FROM read_parquet(${fileListSql([file])}, ${READ_OPTIONS}, file_row_number = true) GROUP BY ALL`,
    );
    for (const [position, min, max] of reader.getRows()) {
      if (position === null) continue;
      const index = ranged[Number(position)]!;
      footers[index] = footerFromRange(footer, outputs[index]!, min, max);
    }
  }
  const valued = outputs.flatMap((_, index) => (footers[index] === undefined ? [index] : []));
  if (valued.length > 0) {
    const values = await valuesByOutput(
      db,
      file,
      footer.column,
      valued.map((index) => outputs[index]!),
    );
    for (const [position, index] of valued.entries()) footers[index] = footer.build(values[position]!, outputs[index]!);
  }
  return footers.map((entries) => entries!);
}

interface StringRange {
  readonly min: string;
  readonly max: string;
}

/** A string column's exact range over row groups ([input, row group] of `inputs`) from their statistics, if exact. */
function rangeOfRowGroups(inputs: readonly CopyInput[], rowGroups: readonly (readonly [number, number])[], column: string): StringRange | undefined {
  const range = exactByteRange(
    rowGroups.map(([input, group]) => {
      const source = inputs[input]!;
      const chunk = leafChunkIndexes(source.columns).get(column);
      return chunk === undefined ? undefined : chunkMetaData(source.rowGroups[group]!.struct, chunk);
    }),
  );
  return range === undefined ? undefined : { min: Buffer.from(range.min).toString('utf8'), max: Buffer.from(range.max).toString('utf8') };
}

/** The position in `outputs` of the output whose rows hold file_row_number (NULL for none). */
function outputOfRowSql(outputs: readonly OutputRange[]): string {
  return `CASE ${outputs
    .map((output, index) => `WHEN file_row_number >= ${output.rowStart} AND file_row_number < ${output.rowStart + output.rowCount} THEN ${index}`)
    .join(' ')} END`;
}

/** One column's non-null values of some files, read on a connection of its own (so it can run beside a COPY). */
async function columnValuesOnSide(db: DuckDb, files: readonly string[], column: string, readOptions: string): Promise<string[]> {
  const side = await db.instance.connect();
  try {
    // Joined with NUL separators, JOINED_VALUES rows of a file at a time (a few strings instead of a million values
    // to convert, none too long for a JavaScript string); a piece whose value count does not match (a value holding
    // NUL) is read value by value instead.
    const quoted = sqlIdentifier(column);
    const fileColumn = sqlIdentifier(SOURCE_FILE_COLUMN);
    const reader = await side.runAndReadAll(
      `SELECT ${fileColumn}, file_row_number // ${JOINED_VALUES} AS piece, count(*), string_agg(${quoted}, chr(0))
       FROM read_parquet(${fileListSql(files)}, ${readOptions}, filename = ${sqlString(SOURCE_FILE_COLUMN)}, file_row_number = true)
       WHERE ${quoted} IS NOT NULL GROUP BY ALL`,
    );
    const values: string[] = [];
    for (const [file, piece, count, joined] of reader.getRows()) {
      let pieces = String(joined ?? '').split('\u0000', Number(count) + 1);
      if (pieces.length !== Number(count)) {
        const start = Number(piece) * JOINED_VALUES;
        const one = await side.runAndReadAll(
          `SELECT ${quoted} FROM read_parquet(${fileListSql([String(file)])}, ${READ_OPTIONS}, file_row_number = true)
           WHERE ${quoted} IS NOT NULL AND file_row_number >= ${start} AND file_row_number < ${start + JOINED_VALUES}`,
        );
        pieces = (one.getColumnsJS()[0] ?? []).map(String);
      }
      for (const value of pieces) values.push(value);
    }
    return values;
  } finally {
    side.closeSync();
  }
}

/**
 * rowRanks → a table of the ranks in input order through DuckDB's appender, 2,048 rows per chunk, and the
 * (input row, rank) relation to join on: the input row is the table's rowid (rows are appended in order), so only
 * the ranks cross over, as 32-bit numbers (no BigInt per row).
 */
async function loadRanks(db: DuckDb, table: string, ranks: Uint32Array): Promise<string> {
  const { DuckDBDataChunk, DuckDBVector, UINTEGER } = duckdb();
  const rank = sqlIdentifier(RANK_VALUE_COLUMN);
  await db.connection.run(`CREATE TEMP TABLE ${table} (${rank} UINTEGER)`);
  const appender = await db.connection.createAppender(table.slice(1, -1), 'main', 'temp');
  try {
    const chunkRows = DuckDBVector.standardSize();
    const chunk = DuckDBDataChunk.create([UINTEGER], chunkRows);
    for (let start = 0; start < ranks.length; start += chunkRows) {
      const count = Math.min(chunkRows, ranks.length - start);
      chunk.reset();
      chunk.rowCount = count;
      const values = chunk.getColumnVector(0) as DuckDBUIntegerVector;
      for (let index = 0; index < count; index++) values.setItem(index, ranks[start + index]!);
      values.flush();
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return `(SELECT rowid AS ${sqlIdentifier(INPUT_ROW_COLUMN)}, CAST(${rank} AS BIGINT) AS ${rank} FROM ${table})`;
}

/**
 * One column's non-null text values over an output's rank range. DuckDB joins them 65,536 at a time with NUL
 * separators, so a million keys cost a few strings instead of a million; a piece whose value count does not match
 * (a value holding NUL) is read value by value instead.
 */
async function rangeValues(db: DuckDb, table: string, column: string, output: OutputRange): Promise<Iterable<string>> {
  const rank = sqlIdentifier(RANK_COLUMN);
  const quoted = sqlIdentifier(column);
  const where = `${rank} >= ${output.rowStart} AND ${rank} < ${output.rowStart + output.rowCount} AND ${quoted} IS NOT NULL`;
  const reader = await db.connection.runAndReadAll(
    `SELECT ${rank} // ${JOINED_VALUES} AS piece, count(*) AS n, string_agg(${quoted}, chr(0)) AS joined FROM ${table} WHERE ${where} GROUP BY piece`,
  );
  const pieces: (string | string[])[] = [];
  for (const [piece, count, joined] of reader.getRows()) {
    const text = String(joined ?? '');
    if (text.split('\u0000', Number(count) + 1).length === Number(count)) {
      pieces.push(text);
      continue;
    }
    const start = Number(piece) * JOINED_VALUES;
    const values = await db.connection.runAndReadAll(
      `SELECT ${quoted} FROM ${table} WHERE ${where} AND ${rank} >= ${start} AND ${rank} < ${start + JOINED_VALUES}`,
    );
    pieces.push(values.getRows().map((row) => String(row[0])));
  }
  return {
    *[Symbol.iterator]() {
      for (const piece of pieces) yield* typeof piece === 'string' ? piece.split('\u0000') : piece;
    },
  };
}

async function writeRange(
  db: DuckDb,
  table: string,
  columns: readonly ColumnDescription[],
  output: OutputRange,
  rowGroupSize: number,
  inputFields: ParquetTypeTargets,
  /** Whether the table is not stored in rank order, so the range must be sorted by rank. */
  sortRange: boolean,
): Promise<CopySortedOutput> {
  const rank = sqlIdentifier(RANK_COLUMN);
  await copyTo(
    db,
    `SELECT ${outputColumnsSql(columns, output).join(', ')} FROM ${table}
     WHERE ${rank} >= ${output.rowStart} AND ${rank} < ${output.rowStart + output.rowCount}${sortRange ? ` ORDER BY ${rank}` : ''}`,
    output.file,
    rowGroupSize,
    output.keyValues,
  );
  return finishOutput(db, output, inputFields);
}

/**
 * The one text column whose value differs between outputs (Hudi's `_hoodie_file_name`) when several outputs can be
 * cut from one ordered file: together they hold every row, none numbers its rows (sequence columns), and all set
 * the same constant columns, at most one of them to differing values (binary copy re-encodes one column).
 */
function splittableColumn(outputs: readonly OutputRange[], totalRows: number): string | undefined {
  if (outputs.length < 2) return undefined;
  if (outputs.some((output) => Object.keys(output.sequenceColumns ?? {}).length > 0)) return undefined;
  let next = 0;
  for (const output of [...outputs].sort((a, b) => a.rowStart - b.rowStart)) {
    if (output.rowStart !== next) return undefined;
    next += output.rowCount;
  }
  if (next !== totalRows) return undefined;
  const first = outputs[0]!.constantColumns ?? {};
  const names = Object.keys(first).sort();
  if (names.length === 0) return undefined;
  if (outputs.some((output) => JSON.stringify(Object.keys(output.constantColumns ?? {}).sort()) !== JSON.stringify(names))) return undefined;
  const varying = names.filter((name) => outputs.some((output) => output.constantColumns?.[name] !== first[name]));
  return varying.length > 1 ? undefined : (varying[0] ?? names[0]);
}

interface SplitRequest {
  /** Every row, in rank order, with the first output's constant columns. */
  readonly query: string;
  readonly outputs: readonly OutputRange[];
  /** The constant column each output gets its own value of (splittableColumn). */
  readonly column: string;
  /** Scratch directory for the ordered file and the pieces (the caller removes it). */
  readonly dir: string;
  readonly rowGroupSize: number;
  readonly inputFields: ParquetTypeTargets;
  readonly footer: FooterFromColumn | undefined;
  /** Output files, as they are started (removed by the caller on a failure). */
  readonly written: string[];
}

/**
 * Several outputs from one sort: the ordered rows are written once (the single COPY DuckDB alone would run), then
 * each output is made of that file's row groups copied byte for byte (lib/parquet/binary-copy.ts, which re-encodes
 * the split column), and where a range boundary falls inside a row group, of the two pieces of that row group,
 * rewritten by DuckDB (its file_row_number filter reads only that row group). An output's footer that needs only
 * its key range takes it from its row groups' statistics where they are exact; other outputs' record keys come from
 * one scan of the ordered file. Should the pieces not be copyable with it (a schema the copy refuses), each output is
 * rewritten from the ordered file instead: still one sort. When the ordered COPY runs out of memory, the reason
 * (nothing is written yet).
 */
async function writeSplit(db: DuckDb, request: SplitRequest): Promise<{ outputs: CopySortedOutput[]; split: NonNullable<CopySortedResult['split']> } | string> {
  const { outputs, dir, inputFields, column } = request;
  await mkdir(dir, { recursive: true });
  for (const output of outputs) await mkdir(dirname(output.file), { recursive: true });
  const ordered = join(dir, 'ordered.parquet');
  try {
    await copyTo(db, request.query, ordered, request.rowGroupSize, {});
  } catch (error) {
    // The caller takes key ranges (each sorts only its rows) or else a temp table (a sort feeding a table spills more).
    if (outOfMemory(error)) return `one ordered COPY ran out of memory (${duckdbReason(error).split('\n')[0]})`;
    throw error;
  }
  const conformed = await conformParquetTypes(db.connection, ordered, inputFields);
  const orderedInput = await readCopyInput(ordered);
  const totalRows = outputs.reduce((total, output) => total + output.rowCount, 0);
  if (orderedInput.numRows !== totalRows) {
    throw new HudiError(`wrote ${orderedInput.numRows} ordered rows instead of ${totalRows}`, {
      location: ordered,
      fix: 'retry; if it repeats, report it as a bug',
    });
  }

  // The ordered file's columns, cast as the inputs' were, for the pieces (and the rewrite if the copy refuses).
  const orderedColumns = await describeColumns(db.connection, [ordered]);
  const projection = orderedColumns.map((described) => {
    const target = preservingDuckDbType(described.type, inputFields, described.name);
    const quoted = sqlIdentifier(described.name);
    return target.toString() === described.type.toString() ? quoted : `CAST(${quoted} AS ${target.toString()}) AS ${quoted}`;
  });
  const rowsOf = (from: number, to: number): string =>
    `SELECT ${projection.join(', ')} FROM read_parquet(${fileListSql([ordered])}, ${READ_OPTIONS}, file_row_number = true)
     WHERE file_row_number >= ${from} AND file_row_number < ${to}`;

  // Each output's row groups: [input, row group] over [ordered file, pieces...].
  const pieces: CopyInput[] = [];
  const runs: [number, number][][] = [];
  const groupStarts: number[] = [];
  let at = 0;
  for (const group of orderedInput.rowGroups) {
    groupStarts.push(at);
    at += group.numRows;
  }
  for (const output of outputs) {
    const end = output.rowStart + output.rowCount;
    const run: [number, number][] = [];
    for (const [index, group] of orderedInput.rowGroups.entries()) {
      const groupStart = groupStarts[index]!;
      const groupEnd = groupStart + group.numRows;
      if (groupEnd <= output.rowStart || groupStart >= end) continue;
      if (groupStart >= output.rowStart && groupEnd <= end) {
        run.push([0, index]);
        continue;
      }
      const piece = join(dir, `piece-${pieces.length}.parquet`);
      await copyTo(db, rowsOf(Math.max(groupStart, output.rowStart), Math.min(groupEnd, end)), piece, request.rowGroupSize, {});
      await conformParquetTypes(db.connection, piece, inputFields);
      const pieceInput = await readCopyInput(piece);
      pieces.push(pieceInput);
      for (let pieceGroup = 0; pieceGroup < pieceInput.rowGroups.length; pieceGroup++) run.push([pieces.length, pieceGroup]);
    }
    runs.push(run);
  }
  const inputs = [orderedInput, ...pieces];
  const footers =
    request.footer === undefined
      ? undefined
      : await footersOfRanges(db, ordered, request.footer, outputs, (index) => rangeOfRowGroups(inputs, runs[index]!, request.footer!.column));
  const plan = planBinaryCopy(inputs, { fileNameColumn: column, schemaEvolution: false, minRowGroupBytes: 0, schemaFrom: 0 });

  // The first output (whose file name the ordered file holds) keeps the ordered file's leading row groups where they
  // are: the file becomes that output (written last, as the others copy from it), so those bytes are not written
  // again.
  const leading = runs[0]!.findIndex(([input, group], position) => input !== 0 || group !== position);
  const keptInPlace = leading === -1 ? runs[0]!.length : leading;
  const inPlace =
    plan.layout !== undefined &&
    outputs[0]!.rowStart === 0 &&
    keptInPlace > 0 &&
    keptRowGroupsProblem({ file: ordered, inputs, layout: plan.layout, rowGroups: runs[0]!, fileName: outputs[0]!.constantColumns![column]! }, keptInPlace) ===
      undefined;
  const results: CopySortedOutput[] = new Array<CopySortedOutput>(outputs.length);
  const order = [...outputs.keys()];
  if (inPlace) order.push(order.shift()!);
  for (const index of order) {
    const output = outputs[index]!;
    const keyValues = footers === undefined ? output.keyValues : { ...output.keyValues, ...footers[index]! };
    request.written.push(output.file);
    if (plan.layout === undefined) {
      const end = output.rowStart + output.rowCount;
      await copyTo(
        db,
        `SELECT ${outputColumnsSql(orderedColumns, output).join(', ')} FROM (${rowsOf(output.rowStart, end)})`,
        output.file,
        request.rowGroupSize,
        keyValues,
      );
      results[index] = await finishOutput(db, output, inputFields);
      continue;
    }
    const kept = inPlace && index === 0;
    const copied = await writeCopiedFile({
      file: kept ? ordered : output.file,
      inputs,
      layout: plan.layout,
      rowGroups: runs[index]!,
      fileName: output.constantColumns![column]!,
      keyValues,
      ...(kept ? { keptRowGroups: keptInPlace } : {}),
    });
    if (kept) await rename(ordered, output.file);
    const rowCount = rowsPerFile([output.file])[0] ?? 0;
    if (copied.rows !== output.rowCount || rowCount !== output.rowCount) {
      throw new HudiError(`wrote ${rowCount} rows instead of ${output.rowCount}`, { location: output.file, fix: 'retry; if it repeats, report it as a bug' });
    }
    results[index] = { file: output.file, rowCount, repairedColumns: conformed.repairedColumns, deviations: compareFields(inputFields, conformed.types) };
  }
  return {
    outputs: results,
    split:
      plan.layout === undefined
        ? { method: 'rewrite', reason: plan.refusal }
        : { method: 'copy', rowGroups: runs.reduce((total, run) => total + run.length, 0), pieces: pieces.length, inPlace: inPlace ? keptInPlace : 0 },
  };
}

interface KeyRangesRequest {
  readonly inputs: readonly string[];
  /** read_parquet options for the inputs (inputFacts). */
  readonly readOptions: string;
  readonly outputs: readonly OutputRange[];
  readonly totalRows: number;
  /**
   * The sort keys (each row's key is then create_sort_key of them and the input position), or a relation of the
   * input rows with their rank as SORT_KEY_COLUMN (rowRanks joined on).
   */
  readonly order:
    | { kind: 'keys'; keys: readonly { expression: string; direction: string }[]; derivedColumns: DerivedColumnLayers }
    | { kind: 'ranks'; keyed: string };
  /** The input columns an output carries through its sort (those it does not replace by a constant). */
  readonly projectionOf: (output: OutputRange) => string[];
  readonly columns: readonly ColumnDescription[];
  readonly rowGroupSize: number;
  readonly inputFields: ParquetTypeTargets;
  readonly footer: FooterFromColumn | undefined;
  /** Output files, as they are started (removed by the caller on a failure). */
  readonly written: string[];
}

/**
 * Several outputs from a range-partitioned sort. Every row's sort key is DuckDB's create_sort_key of the sort keys
 * and the input position (file_index, file_row_number), so keys are unique and compare as the ORDER BY does; one
 * pass finds the keys at the outputs' first ranks (quantile_disc picks rank ⌈q·n⌉ − 1, so q = (rank + ½)/n), then each output is one
 * COPY of the rows between its bounds, ordered by that key. Each output's footer (bloom filter) is built from its
 * keys while the next output is written. Returns the reason, leaving no output behind, when DuckDB cannot build such
 * keys (a sort column type create_sort_key refuses), runs out of memory, or the bounds do not give the planned row
 * counts.
 */
async function writeKeyRanges(db: DuckDb, request: KeyRangesRequest): Promise<CopySortedOutput[] | string> {
  const { DuckDBBlobValue, DuckDBListValue } = duckdb();
  const { inputs, outputs, totalRows } = request;
  const sortKey = sqlIdentifier(SORT_KEY_COLUMN);
  const { order } = request;
  const keyed =
    order.kind === 'ranks'
      ? order.keyed
      : `(SELECT *, create_sort_key(${[
          ...order.keys.map((key) => `${key.expression}, ${sqlString(key.direction)}`),
          `${FILE_INDEX_COLUMN}, 'ASC NULLS LAST'`,
          `file_row_number, 'ASC NULLS LAST'`,
        ].join(', ')}) AS ${sortKey}
         FROM ${withDerivedColumns(`(SELECT *, ${FILE_INDEX_COLUMN} FROM read_parquet(${fileListSql(inputs)}, ${request.readOptions}, file_row_number = true))`, order.derivedColumns)})`;
  // The ranks where an output starts or ends (0 and totalRows need no bound).
  const ranks = [...new Set(outputs.flatMap((output) => [output.rowStart, output.rowStart + output.rowCount]))]
    .filter((rank) => rank > 0 && rank < totalRows)
    .sort((a, b) => a - b);
  const bounds = new Map<number, string>();
  if (order.kind === 'ranks') for (const rank of ranks) bounds.set(rank, String(rank));
  else if (ranks.length > 0) {
    let found: readonly unknown[];
    try {
      const fractions = ranks.map((rank) => (rank + 0.5) / totalRows);
      const reader = await db.connection.runAndReadAll(`SELECT quantile_disc(${sortKey}, [${fractions.join(', ')}]) FROM ${keyed}`);
      const list = reader.getRows()[0]?.[0];
      found = list instanceof DuckDBListValue ? list.items : [];
    } catch (error) {
      const reason = duckdbReason(error).split('\n')[0];
      return outOfMemory(error) ? `finding the outputs' bounds ran out of memory (${reason})` : `DuckDB could not build a sort key of the rows (${reason})`;
    }
    for (const [index, rank] of ranks.entries()) {
      const value = found[index];
      if (!(value instanceof DuckDBBlobValue)) return `no sort key was found at rank ${rank}`;
      bounds.set(rank, `from_hex(${sqlString(Buffer.from(value.bytes).toString('hex'))})`);
    }
  }
  const results: CopySortedOutput[] = [];
  /** The previous output's footer, built while this one is written. */
  let pendingFooter: Promise<void> = Promise.resolve();
  try {
    for (const output of outputs) {
      const end = output.rowStart + output.rowCount;
      const where = [
        ...(bounds.has(output.rowStart) ? [`${sortKey} >= ${bounds.get(output.rowStart)!}`] : []),
        ...(bounds.has(end) ? [`${sortKey} < ${bounds.get(end)!}`] : []),
      ];
      const query = `SELECT ${outputColumnsSql(request.columns, output).join(', ')}
                     FROM (SELECT ${[...request.projectionOf(output), sortKey].join(', ')} FROM ${keyed}
                           ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`})
                     ORDER BY ${sortKey}`;
      await mkdir(dirname(output.file), { recursive: true });
      request.written.push(output.file);
      /** Nothing of this way stays when the caller takes another. */
      const refuse = async (reason: string): Promise<string> => {
        await pendingFooter.catch(() => undefined);
        await settleAll(outputs.map((written) => rm(written.file, { force: true })));
        return reason;
      };
      try {
        await settleAll([copyTo(db, query, output.file, request.rowGroupSize, request.footer === undefined ? output.keyValues : {}), pendingFooter]);
      } catch (error) {
        if (!outOfMemory(error)) throw error;
        return await refuse(`a range of the sort ran out of memory (${duckdbReason(error).split('\n')[0]})`);
      }
      const rows = rowsPerFile([output.file])[0] ?? 0;
      if (rows !== output.rowCount) return await refuse(`the sort key bounds gave ${rows} rows instead of ${output.rowCount}`);
      results.push(await finishOutput(db, output, request.inputFields));
      const { footer } = request;
      if (footer !== undefined) {
        pendingFooter = footerOfOutput(db, footer, output).then((keyValues) => setFooterKeyValues(output.file, { ...output.keyValues, ...keyValues }));
        pendingFooter.catch(() => undefined);
      }
    }
    await pendingFooter;
  } catch (error) {
    await pendingFooter.catch(() => undefined);
    throw error;
  }
  return results;
}

/**
 * One column's non-null text values in each output's range of the ordered file, from one scan (rows of no output
 * skipped): joined by DuckDB JOINED_VALUES at a time with NUL separators (a piece whose count does not match, a value
 * holding NUL, is read value by value).
 */
async function valuesByOutput(db: DuckDb, file: string, column: string, outputs: readonly OutputRange[]): Promise<Iterable<string>[]> {
  const quoted = sqlIdentifier(column);
  const source = `read_parquet(${fileListSql([file])}, ${READ_OPTIONS}, file_row_number = true)`;
  const outputOf = outputOfRowSql(outputs);
  const reader = await db.connection.runAndReadAll(
    `SELECT ${outputOf} AS output, file_row_number // ${JOINED_VALUES} AS piece, count(*) AS n, string_agg(${quoted}, chr(0)) AS joined
     FROM ${source} WHERE ${quoted} IS NOT NULL AND ${outputOf} IS NOT NULL GROUP BY ALL`,
  );
  const pieces: (string | string[])[][] = outputs.map(() => []);
  for (const [outputIndex, piece, count, joined] of reader.getRows()) {
    const list = pieces[Number(outputIndex)]!;
    const text = String(joined ?? '');
    if (text.split('\u0000', Number(count) + 1).length === Number(count)) {
      list.push(text);
      continue;
    }
    const output = outputs[Number(outputIndex)]!;
    const start = Math.max(output.rowStart, Number(piece) * JOINED_VALUES);
    const end = Math.min(output.rowStart + output.rowCount, (Number(piece) + 1) * JOINED_VALUES);
    const values = await db.connection.runAndReadAll(
      `SELECT ${quoted} FROM ${source} WHERE ${quoted} IS NOT NULL AND file_row_number >= ${start} AND file_row_number < ${end}`,
    );
    list.push(values.getRows().map((row) => String(row[0])));
  }
  return pieces.map((list) => ({
    *[Symbol.iterator]() {
      for (const piece of list) yield* typeof piece === 'string' ? piece.split('\u0000') : piece;
    },
  }));
}

/** Whether DuckDB failed for want of memory (its error says so only in its text, as "Out of Memory Error: …"). */
function outOfMemory(error: unknown): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (/^Out of Memory Error/.test(cause.message)) return true;
  }
  return false;
}

/** COPY a query to one Parquet file (Hudi's footer key/values included when given). */
async function copyTo(db: DuckDb, query: string, file: string, rowGroupSize: number, keyValues: Readonly<Record<string, string>>): Promise<void> {
  try {
    await db.connection.run(copyToParquetSql(query, file, rowGroupSize, keyValues));
  } catch (cause) {
    throw new HudiError(`could not write Parquet file: ${duckdbReason(cause)}`, {
      location: file,
      fix: 'check free space and permissions where the output and the temp directory are',
      cause,
    });
  }
}

/** After a COPY: give the file the input's Parquet types, and check its row count. */
async function finishOutput(db: DuckDb, output: OutputRange, inputFields: ParquetTypeTargets): Promise<CopySortedOutput> {
  const { repairedColumns, types } = await conformParquetTypes(db.connection, output.file, inputFields);
  const rowCount = rowsPerFile([output.file])[0] ?? 0;
  if (rowCount !== output.rowCount) {
    throw new HudiError(`wrote ${rowCount} rows instead of ${output.rowCount}`, {
      location: output.file,
      fix: 'retry; if it repeats, report it as a bug',
    });
  }
  return { file: output.file, rowCount, repairedColumns, deviations: compareFields(inputFields, types) };
}

const RANK_COLUMN = '__hudi_sort_rank';
const INPUT_ROW_COLUMN = '__hudi_input_row';
/** Sort keys computed beside the output's columns for one ORDER BY (`__hudi_sort_key_0`, …). */
const SORT_KEY_PREFIX = '__hudi_sort_key_';
const RANK_VALUE_COLUMN = '__hudi_rank_value';
/** Above this many inputs a single output's footer column is read back from the output, not beside the COPY. */
const SIDE_SCAN_MAX_INPUTS = 64;
/** Several outputs are cut from one ordered file only when each holds at least this many row groups. */
const SPLIT_MIN_ROW_GROUPS = 4;
/**
 * Up to this many outputs sorted by keys are range-partitioned (each output scans every input again, which past
 * about four outputs costs more than one ordered file cut into them).
 */
const KEY_RANGES_MAX_OUTPUTS = 4;
/** create_sort_key of the sort keys and the input position, unique per row, in the range-partitioned sort. */
const SORT_KEY_COLUMN = '__hudi_sort_key';
/** Values per string_agg piece when reading a column's values for footers. */
const JOINED_VALUES = 65_536;
const INTERNAL_COLUMNS = [RANK_COLUMN, SOURCE_FILE_COLUMN, FILE_OFFSET_COLUMN, INPUT_ROW_COLUMN, RANK_VALUE_COLUMN, SORT_KEY_COLUMN] as const;

/** rowRanks must be a permutation: a repeated rank would write one row twice and drop another. */
function checkRowRanks(ranks: Uint32Array, totalRows: number): void {
  if (ranks.length !== totalRows) {
    throw new HudiError(`rowRanks has ${ranks.length} entries for ${totalRows} input rows`, { fix: 'give one rank per input row, in input order' });
  }
  const seen = new Uint8Array(totalRows);
  for (const rank of ranks) {
    if (rank >= totalRows || seen[rank] === 1) {
      throw new HudiError(`rowRanks is not a permutation of 0..${totalRows - 1} (rank ${rank})`, { fix: 'give every input row a distinct rank' });
    }
    seen[rank] = 1;
  }
}

/** Replaced and footer columns must exist and hold text. */
function checkOutputColumns(outputs: readonly OutputRange[], footer: FooterFromColumn | undefined, columns: readonly ColumnDescription[]): void {
  const { DuckDBTypeId } = duckdb();
  const requireText = (name: string, what: string, location: string | undefined): void => {
    const column = columns.find((candidate) => candidate.name === name);
    if (column === undefined || column.type.typeId !== DuckDBTypeId.VARCHAR) {
      throw new HudiError(`${what} "${name}" is ${column === undefined ? 'not a column of the inputs' : `of type ${column.type.toString()}, not VARCHAR`}`, {
        ...(location === undefined ? {} : { location }),
        fix: `choose a text column: ${columns
          .filter((candidate) => candidate.type.typeId === DuckDBTypeId.VARCHAR)
          .map((candidate) => candidate.name)
          .join(', ')}`,
      });
    }
  };
  if (footer !== undefined) requireText(footer.column, 'footer column', undefined);
  for (const output of outputs) {
    for (const name of Object.keys(output.constantColumns ?? {})) requireText(name, 'constant column', output.file);
    for (const name of Object.keys(output.sequenceColumns ?? {})) {
      requireText(name, 'sequence column', output.file);
      if (output.constantColumns?.[name] !== undefined) {
        throw new HudiError(`column "${name}" is both a constant and a sequence column`, { location: output.file, fix: 'give it one of the two' });
      }
    }
  }
}

function checkOutputRanges(outputs: readonly OutputRange[], totalRows: number): void {
  const files = new Set<string>();
  for (const output of outputs) {
    nonNegativeInteger(output.rowStart, 'rowStart');
    positiveInteger(output.rowCount, 'rowCount');
    if (output.rowStart + output.rowCount > totalRows) {
      throw new HudiError(`rows ${output.rowStart}..${output.rowStart + output.rowCount - 1} are past the ${totalRows} input rows`, {
        location: output.file,
        fix: 'plan output ranges from countRows of the same inputs',
      });
    }
    if (files.has(output.file)) throw new HudiError('output file is listed twice', { location: output.file, fix: 'give each range its own file' });
    files.add(output.file);
  }
  // Overlapping ranges would write the same records twice: duplicate keys in a Hudi table.
  const sorted = [...outputs].sort((a, b) => a.rowStart - b.rowStart);
  for (let index = 1; index < sorted.length; index++) {
    const previous = sorted[index - 1]!;
    const current = sorted[index]!;
    if (current.rowStart < previous.rowStart + previous.rowCount) {
      throw new HudiError(`row range overlaps the one of ${previous.file}`, {
        location: current.file,
        fix: 'make the output ranges disjoint',
      });
    }
  }
}

/** A sort key's expression (over the input's columns) and its direction, apart. */
function sortKeyParts(key: SortKey, columns: readonly ColumnDescription[]): { expression: string; direction: string } {
  const descending = typeof key !== 'string' && key.descending === true;
  const direction = descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST';
  if (typeof key !== 'string' && 'sqlExpression' in key) return { expression: `(${key.sqlExpression})`, direction };
  const name = typeof key === 'string' ? key : key.column;
  if (columns.some((column) => column.name === name)) return { expression: sqlIdentifier(name), direction };
  const [top, ...fields] = name.split('.');
  if (top !== undefined && fields.length > 0 && columns.some((column) => column.name === top)) {
    return { expression: `${sqlIdentifier(top)}${fields.map((field) => `[${sqlString(field)}]`).join('')}`, direction };
  }
  throw new HudiError(`no sort column ${JSON.stringify(name)}`, {
    fix: `choose from: ${columns.map((column) => column.name).join(', ')}`,
  });
}

/** Derived columns are for sort keys: named under DERIVED_COLUMN_PREFIX, each once, and only beside orderBy. */
function checkDerivedColumns(layers: DerivedColumnLayers, request: CopySortedRequest): void {
  const names = layers.flat().map((column) => column.name);
  if (names.length === 0) return;
  if ((request.orderBy ?? []).length === 0) {
    throw new HudiError('copySorted takes derivedColumns only with orderBy keys', { fix: 'pass the sort keys that use them' });
  }
  const misnamed = names.find((name, index) => !name.startsWith(DERIVED_COLUMN_PREFIX) || names.indexOf(name) !== index);
  if (misnamed !== undefined) {
    throw new HudiError(`derived column "${misnamed}" is named twice or not under ${DERIVED_COLUMN_PREFIX}`, {
      fix: `name each derived column once, ${DERIVED_COLUMN_PREFIX}…`,
    });
  }
}

/** `relation` with the derived columns appended, layer by layer (each layer one projection over the one before). */
export function withDerivedColumns(relation: string, layers: DerivedColumnLayers): string {
  let derived = relation;
  for (const layer of layers) {
    if (layer.length === 0) continue;
    derived = `(SELECT *, ${layer.map((column) => `(${column.sqlExpression}) AS ${sqlIdentifier(column.name)}`).join(', ')} FROM ${derived})`;
  }
  return derived;
}

/** An output's columns: constants (the new `_hoodie_file_name`) and sequences (rewritten seqno) replace inputs. */
function outputColumnsSql(columns: readonly ColumnDescription[], output: OutputRange): string[] {
  const rank = sqlIdentifier(RANK_COLUMN);
  return columns.map((column) => {
    const quoted = sqlIdentifier(column.name);
    const constant = output.constantColumns?.[column.name];
    if (constant !== undefined) return `CAST(${sqlString(constant)} AS VARCHAR) AS ${quoted}`;
    const prefix = output.sequenceColumns?.[column.name];
    if (prefix !== undefined) return `${sqlString(prefix)} || CAST(${rank} - ${output.rowStart} AS VARCHAR) AS ${quoted}`;
    return quoted;
  });
}

/** Outputs whose Parquet types readers would see differently from the input's fail the copy (unless 'report'). */
function assertCompatible(results: readonly CopySortedOutput[], onTypeMismatch: CopySortedRequest['onTypeMismatch']): void {
  const incompatible = results.flatMap((result) =>
    result.deviations.filter((deviation) => !deviation.compatible).map((deviation) => ({ file: result.file, deviation })),
  );
  if (incompatible.length === 0 || (onTypeMismatch ?? 'throw') !== 'throw') return;
  throw new HudiError(
    `written Parquet types differ from the input's: ${incompatible
      .map(({ deviation }) => `${deviation.column} ${deviation.input} → ${deviation.output}`)
      .filter((text, index, all) => all.indexOf(text) === index)
      .join('; ')}`,
    {
      location: incompatible[0]!.file,
      fix: 'this engine cannot keep that type; cluster these files with Spark, or pass onTypeMismatch "report" to accept the change',
    },
  );
}
