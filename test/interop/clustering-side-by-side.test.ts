/**
 * Interop matrix: Hudi's own clustering side by side with ours, on two copies of one table and one configuration.
 *
 * Spark (Hudi 0.15) writes one copy-on-write table (metadata table off, 3 partitions, 3 small base files each, sort
 * columns of several types with nulls, NaN and ±Infinity, and pairs of rows made to tie). Each layout case copies it
 * twice: on copy A Hudi plans and executes (`CALL run_clustering(..., op => 'schedule')`, then `op => 'execute'`),
 * on copy B our CLI does (`cluster --mode schedule`, then `--mode execute`) with the same `hoodie.*` keys. Compared:
 * - the plans (`T.replacecommit.requested`, both read with avsc and Hudi's official schema): groups, their slices,
 *   their order, numOutputFileGroups, metrics, strategy class and params, preserveHoodieMetadata, versions;
 * - the output files of each group, in file order: the same record keys in the same order, or, where rows tie on
 *   the sort key (Spark gives ties no defined order), the same run of tied rows at the same place; the same split
 *   between the files of a group; Hudi's rows are in our curve-key order (so lib/layout/curves.ts maps these
 *   values as Hudi 0.15's SpaceCurveSortingHelper does);
 * - the output files' footers (record key range, bloom filter) and the replacecommit's write stats.
 * Differences that follow from how the two are built are asserted explicitly, with the reason.
 */
import assert from 'node:assert/strict';
import { cpSync, opendirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { CLUSTERING_SUMMARY_KEY } from '../../lib/clustering/instant.js';
import { buildCurveKeys, curveKeyAt, type SortColumnType, type SortValue } from '../../lib/layout/curves.js';
import { readOfficial } from '../helpers/avro-official.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

// ---------------------------------------------------------------------------------------------------------------
// The table.

const SCHEMA = 'id INT, l BIGINT, i INT, s STRING, d DOUBLE, dte DATE, ts TIMESTAMP, ver BIGINT, part STRING';
const DATA_COLUMNS = SCHEMA.split(', ').map((column) => column.split(' ')[0]!);
const META_COLUMNS = ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'];
/** The sort columns' types as Spark reads them (curves.ts kinds). */
const COLUMN_TYPES: Record<string, SortColumnType> = { l: 'long', i: 'int', s: 'string', d: 'double', dte: 'date', ts: 'timestamp' };
const PARTITIONS = ['a', 'b', 'c'];
/** Rows per partition in each of the three inserts: each insert writes one new file group per partition. */
const ROWS_PER_INSERT = [5, 4, 3];
const DAY_MS = 86_400_000;

type Input = Record<string, unknown>;

const STRING_PREFIXES = ['customer-', 'a', 'Zürich ', 'zz', '日本', 'B'];
const SPECIAL_DOUBLES: Record<number, string> = { 10: 'NaN', 15: 'Infinity', 22: '-Infinity' };

/** Row n: every sort column unique among the generated rows (no accidental ties), with nulls at different periods. */
function generatedRow(n: number, part: string): Input {
  const micros = String((n * 37) % 1000).padStart(3, '0');
  const tsMillis = Date.UTC(2023, 0, 1) + (((n * 7) % 50) - 25) * 30 * DAY_MS + n * 1234;
  return {
    id: n,
    l: n % 7 === 3 ? null : ((n * 7919) % 1013) - 506,
    i: n % 5 === 2 ? null : ((n * 37) % 101) - 50,
    s: n % 6 === 1 ? null : n === 3 ? '' : `${STRING_PREFIXES[n % STRING_PREFIXES.length]}${n}`,
    d: n % 4 === 0 ? null : (SPECIAL_DOUBLES[n] ?? ((n * 13) % 47) / 4 - 5),
    dte: n % 9 === 4 ? null : new Date(Date.UTC(2024, 0, 1) + (((n * 17) % 61) - 30) * DAY_MS * 7).toISOString().slice(0, 10),
    ts: n % 8 === 5 ? null : new Date(tsMillis).toISOString().replace('Z', `${micros}Z`),
    ver: 1,
    part,
  };
}

/**
 * Rows added to some inserts. Rows made to tie on a layout's sort key:
 * - 101 and 102 (partition b, first insert) tie for z-order on (s, l, d): the strings differ only after their first
 *   8 UTF-8 bytes; and for hilbert on (ts, i, dte): the timestamps differ only below the millisecond;
 * - 103 and 104 (partition c, second insert) tie for linear on (d, s): equal values.
 * Partition b's first insert also has more rows than any other: it writes the table's largest file, which the linear
 * case leaves out of its plan.
 */
const EXTRA_ROWS: Record<string, Input[]> = {
  '0/b': [
    { id: 101, l: 42, i: 7, s: 'tie-pre-A1', d: 1.5, dte: '2024-02-02', ts: '2023-05-05T05:05:05.123456Z', ver: 1, part: 'b' },
    { id: 102, l: 42, i: 7, s: 'tie-pre-A2', d: 1.5, dte: '2024-02-02', ts: '2023-05-05T05:05:05.123999Z', ver: 1, part: 'b' },
  ],
  // One more row in partition a's second insert: a's first group has 10 rows, which 4 output files split differently.
  '1/a': [generatedRow(105, 'a')],
  '1/c': [
    { id: 103, l: 43, i: 8, s: 'linear-tie', d: 2.25, dte: '2024-02-03', ts: '2023-06-06T06:06:06.000000Z', ver: 1, part: 'c' },
    { id: 104, l: -43, i: -8, s: 'linear-tie', d: 2.25, dte: '1999-02-03', ts: '1963-06-06T06:06:06.000000Z', ver: 1, part: 'c' },
  ],
};

const LARGEST_FILE_EXTRA_ROWS = 6;

function insertBatches(): Input[][] {
  let n = 1;
  return ROWS_PER_INSERT.map((count, insert) =>
    PARTITIONS.flatMap((part) => {
      const extra = insert === 0 && part === 'b' ? LARGEST_FILE_EXTRA_ROWS : 0;
      return [...Array.from({ length: count + extra }, () => generatedRow(n++, part)), ...(EXTRA_ROWS[`${insert}/${part}`] ?? [])];
    }),
  );
}

const WRITE_OPTIONS: Record<string, string> = {
  'hoodie.table.name': 'side_by_side',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'part',
  'hoodie.datasource.write.precombine.field': 'ver',
  'hoodie.datasource.write.operation': 'insert',
  'hoodie.metadata.enable': 'false',
  // Every insert writes new file groups instead of growing the previous ones: several small files per partition.
  'hoodie.parquet.small.file.limit': '0',
  'hoodie.insert.shuffle.parallelism': '2',
  'hoodie.clean.automatic': 'false',
  'hoodie.archive.automatic': 'false',
  'hoodie.embed.timeline.server': 'false',
};

// ---------------------------------------------------------------------------------------------------------------
// The cases.

interface LayoutCase {
  readonly layout: 'z-order' | 'hilbert' | 'linear';
  /** `order =>` / hoodie.clustering.plan.strategy.sort.columns. */
  readonly order: readonly string[];
  /** `options =>` / the same keys in our properties file. */
  readonly options: (base: BaseTable) => Record<string, string>;
  /** `selected_partitions =>` / partition.selected with filter mode SELECTED_PARTITIONS (as the procedure sets them). */
  readonly selectedPartitions?: readonly string[];
  /** Record keys that tie on this layout's sort key (runs of more than one row). */
  readonly ties: readonly (readonly string[])[];
  /** Groups in the plan (both planners). */
  readonly groups: number;
  /** Whether some group's rows are split between its files differently by Hudi and by us (see the row test). */
  readonly splitsDiffer: boolean;
  /** Groups whose curve keys our engine computes in its own sort (lib/engine/z-order-key.ts), the others' in curves.ts. */
  readonly curveKeysInEngine?: number;
}

/** 2 groups in a partition of 3 files (the largest two, then the third), and 2 output files for a group of two. */
const GROUPING = {
  'hoodie.clustering.plan.strategy.max.bytes.per.group': '1000000',
  'hoodie.clustering.plan.strategy.target.file.max.bytes': '500000',
};

const CASES: readonly LayoutCase[] = [
  {
    layout: 'z-order',
    // Not in schema order: Hudi's DIRECT builder visits the columns in schema order (l, s, d).
    order: ['s', 'l', 'd'],
    // 4 output files for a group of two files (2 for one file): Spark's range bounds and our equal counts part ways.
    options: () => ({
      ...GROUPING,
      'hoodie.clustering.plan.strategy.target.file.max.bytes': '250000',
      'hoodie.clustering.plan.strategy.max.num.groups': '5',
      'hoodie.layout.optimize.curve.build.method': 'direct',
    }),
    // Both planners take the given partition order; the group cap then leaves out the same group (b's second).
    selectedPartitions: ['c', 'a', 'b'],
    // c, a, then b's first group: max.num.groups leaves b's second for a later plan.
    groups: 5,
    ties: [['101', '102']],
    // Partition a's first group: 10 rows in 4 files.
    splitsDiffer: true,
  },
  {
    layout: 'z-order',
    // Two columns whose key DuckDB computes in its sort (a long and a string), not in schema order (l comes first).
    // One output file per group: that is where our engine computes the key (several are range-partitioned by rank).
    order: ['s', 'l'],
    options: () => ({
      ...GROUPING,
      'hoodie.clustering.plan.strategy.target.file.max.bytes': '2000000',
      'hoodie.layout.optimize.curve.build.method': 'direct',
    }),
    groups: 6,
    // 101 and 102 tie: equal l, and strings that differ only after their first 8 UTF-8 bytes.
    ties: [['101', '102']],
    splitsDiffer: false,
    curveKeysInEngine: 6,
  },
  {
    layout: 'hilbert',
    order: ['ts', 'i', 'dte'],
    options: () => ({ ...GROUPING, 'hoodie.layout.optimize.curve.build.method': 'direct' }),
    groups: 6,
    ties: [['101', '102']],
    // At most 2 files per group: Spark's bounds and our counts agree when no tie straddles them.
    splitsDiffer: false,
  },
  {
    layout: 'linear',
    order: ['d', 's'],
    // Strictly smaller than the limit is small: the largest file of the table stays out of the plan.
    options: (base) => ({ ...GROUPING, 'hoodie.clustering.plan.strategy.small.file.limit': String(base.largestFile.size) }),
    // b's first file stays out: b's other two form one group.
    groups: 5,
    ties: [['103', '104']],
    splitsDiffer: true,
  },
];

// ---------------------------------------------------------------------------------------------------------------
// Reading what each side wrote.

interface BaseTable {
  readonly path: string;
  /** Record keys of each base file, by file id. */
  readonly keysByFileId: ReadonlyMap<string, readonly string[]>;
  readonly largestFile: { readonly fileId: string; readonly size: number };
  /** The base files' footers. */
  readonly footers: readonly { footer: Readonly<Record<string, string>> }[];
}

type RowValues = Record<string, unknown>;

interface OutputFile {
  /** Relative to the table. */
  readonly path: string;
  readonly partition: string;
  readonly fileId: string;
  readonly fileName: string;
  /** The write token's first number: the Spark task partition (Hudi), the output index (ours). */
  readonly taskPartition: number;
  readonly rows: readonly RowValues[];
  readonly footer: Readonly<Record<string, string>>;
  readonly size: number;
  readonly stat: Readonly<Record<string, unknown>>;
}

interface CommitJson {
  partitionToWriteStats: Record<string, Record<string, unknown>[]>;
  partitionToReplaceFileIds: Record<string, string[]>;
  extraMetadata: Record<string, string>;
  operationType: string;
  compacted: boolean;
  [key: string]: unknown;
}

interface PlanSlice {
  dataFilePath: string;
  fileId: string;
  partitionPath: string;
  [key: string]: unknown;
}
interface PlanGroup {
  slices: PlanSlice[];
  metrics: Record<string, number>;
  numOutputFileGroups: number;
  [key: string]: unknown;
}
interface RequestedReplace {
  operationType: string;
  clusteringPlan: {
    inputGroups: PlanGroup[];
    strategy: { strategyClassName: string; strategyParams: Record<string, string>; version: number };
    extraMetadata: Record<string, string>;
    version: number;
    preserveHoodieMetadata: boolean;
  };
  extraMetadata: Record<string, string>;
  version: number;
}

interface SideResult {
  readonly table: string;
  readonly instant: string;
  readonly requested: RequestedReplace;
  readonly requestedFile: { codec: string; metadataKeys: string[]; writerName: string | undefined };
  /** Partitions and group count as the side's show command lists them right after scheduling. */
  readonly shown: { groups: number; partitions: string[]; state: string };
  readonly commit: CommitJson;
  readonly outputs: readonly OutputFile[];
  /** Ours only: the run report's figures of how the groups were executed. */
  readonly execution?: { readonly rewrittenGroups: number; readonly curveKeysInEngine?: number };
}

let duck: DuckDBConnection;
let duckInstance: DuckDBInstance;

async function query(sql: string): Promise<RowValues[]> {
  return (await duck.runAndReadAll(sql)).getRowObjectsJS() as RowValues[];
}

/** A folder's entries in the order the file system returns them (readdirSync sorts; Java's File.list does not). */
function directoryOrder(path: string): string[] {
  const dir = opendirSync(path);
  const names: string[] = [];
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) names.push(entry.name);
  } finally {
    dir.closeSync();
  }
  return names;
}

const sqlString = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** Every column in file order; dates as days and timestamps as epoch micros (the forms curves.ts takes). */
async function rowsInFileOrder(file: string): Promise<RowValues[]> {
  const columns = [...META_COLUMNS, ...DATA_COLUMNS].map((column) =>
    column === 'dte' ? `CAST(dte - DATE '1970-01-01' AS INTEGER) AS dte` : column === 'ts' ? 'epoch_us(ts) AS ts' : column,
  );
  return query(`SELECT ${columns.join(', ')} FROM read_parquet(${sqlString(file)}, file_row_number = true) ORDER BY file_row_number`);
}

async function footerOf(file: string): Promise<Record<string, string>> {
  const rows = await query(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${sqlString(file)})`);
  return Object.fromEntries(rows.map((row) => [row['key'] as string, row['value'] as string]));
}

const BASE_FILE = /^(.+)_(\d+)-(\d+)-(\d+)_(\d+)\.parquet$/;

async function committedOutputs(table: string, commit: CommitJson): Promise<OutputFile[]> {
  const outputs: OutputFile[] = [];
  for (const [partition, stats] of Object.entries(commit.partitionToWriteStats)) {
    for (const stat of stats) {
      const path = stat['path'] as string;
      const fileName = path.slice(path.lastIndexOf('/') + 1);
      const match = BASE_FILE.exec(fileName);
      assert.ok(match, `${fileName} is a base file name`);
      const file = join(table, path);
      outputs.push({
        path,
        partition,
        fileId: match[1]!,
        fileName,
        taskPartition: Number(match[2]),
        rows: await rowsInFileOrder(file),
        footer: await footerOf(file),
        size: statSync(file).size,
        stat,
      });
    }
  }
  return outputs;
}

async function readRequested(table: string, instant: string): Promise<Pick<SideResult, 'requested' | 'requestedFile'>> {
  const read = await readOfficial(readFileSync(join(table, '.hoodie', `${instant}.replacecommit.requested`)), 'HoodieRequestedReplaceMetadata');
  return {
    requested: read.record as RequestedReplace,
    requestedFile: { codec: read.codec, metadataKeys: [...read.metadataKeys].sort(), writerName: read.writerName },
  };
}

function readCommit(table: string, instant: string): CommitJson {
  return JSON.parse(readFileSync(join(table, '.hoodie', `${instant}.replacecommit`), 'utf8')) as CommitJson;
}

// ---------------------------------------------------------------------------------------------------------------
// Running each side.

function optionPairs(layoutCase: LayoutCase, base: BaseTable): [string, string][] {
  return Object.entries(layoutCase.options(base));
}

async function runHudi(hudi: HudiHarness, layoutCase: LayoutCase, base: BaseTable, table: string): Promise<SideResult> {
  const args = [
    `path => '${table}'`,
    `order => '${layoutCase.order.join(',')}'`,
    `order_strategy => '${layoutCase.layout}'`,
    `options => '${optionPairs(layoutCase, base)
      .map(([key, value]) => `${key}=${value}`)
      .join(',')}'`,
    ...(layoutCase.selectedPartitions === undefined ? [] : [`selected_partitions => '${layoutCase.selectedPartitions.join(',')}'`]),
  ];
  const scheduled = await hudi.sql(`CALL run_clustering(${[...args, "op => 'schedule'"].join(', ')})`);
  assert.equal(scheduled.rows.length, 1, 'Hudi scheduled one clustering');
  const instant = scheduled.rows[0]!['timestamp'] as string;
  const shownRows = (await hudi.sql(`CALL show_clustering(path => '${table}', show_involved_partition => true)`)).rows;
  assert.equal(shownRows.length, 1);
  const shown = shownRows[0]!;
  const requested = await readRequested(table, instant);
  const executed = await hudi.sql(`CALL run_clustering(${[...args, "op => 'execute'"].join(', ')})`);
  assert.deepEqual(
    executed.rows.map((row) => [row['timestamp'], row['state']]),
    [[instant, 'COMPLETED']],
  );
  const commit = readCommit(table, instant);
  return {
    table,
    instant,
    ...requested,
    shown: { groups: shown['input_group_size'] as number, partitions: String(shown['involved_partitions']).split(','), state: shown['state'] as string },
    commit,
    outputs: await committedOutputs(table, commit),
  };
}

function cli(args: string[]): string {
  const result = runCli(args);
  assert.equal(result.code, 0, `hudi-serverless ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stdout;
}

async function runOurs(layoutCase: LayoutCase, base: BaseTable, table: string, propsFile: string): Promise<SideResult> {
  const props: [string, string][] = [
    ['hoodie.clustering.plan.strategy.sort.columns', layoutCase.order.join(',')],
    ['hoodie.layout.optimize.strategy', layoutCase.layout],
    ...optionPairs(layoutCase, base),
    ...(layoutCase.selectedPartitions === undefined
      ? []
      : ([
          ['hoodie.clustering.plan.partition.filter.mode', 'SELECTED_PARTITIONS'],
          ['hoodie.clustering.plan.strategy.partition.selected', layoutCase.selectedPartitions.join(',')],
        ] as [string, string][])),
  ];
  writeFileSync(propsFile, props.map(([key, value]) => `${key}=${value}\n`).join(''));
  const scheduled = jsonLines(cli(['cluster', table, '--mode', 'schedule', '--props', propsFile, '--json']))[0]!;
  const instant = (scheduled['scheduled'] as { instantTime: string }).instantTime;
  const shown = jsonLines(cli(['show-clustering', table, '--json']));
  assert.equal(shown.length, 1);
  const requested = await readRequested(table, instant);
  const executed = jsonLines(cli(['cluster', table, '--mode', 'execute', '--props', propsFile, '--json']))[0]!;
  const commit = readCommit(table, instant);
  return {
    table,
    instant,
    ...requested,
    shown: { groups: (shown[0]!['groups'] as unknown[]).length, partitions: shown[0]!['partitions'] as string[], state: shown[0]!['state'] as string },
    commit,
    outputs: await committedOutputs(table, commit),
    execution: (executed['report'] as { execution: SideResult['execution'] }).execution,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Comparing.

/** The plan with each slice's dataFilePath relative to its table (the absolute prefix differs by construction). */
function relativePlan(requested: RequestedReplace, prefix: string): RequestedReplace {
  const copy = structuredClone(requested);
  for (const group of copy.clusteringPlan.inputGroups) {
    for (const slice of group.slices) {
      assert.ok(slice.dataFilePath.startsWith(prefix), `${slice.dataFilePath} starts with ${prefix}`);
      slice.dataFilePath = slice.dataFilePath.slice(prefix.length);
    }
  }
  return copy;
}

/** Group index of each record key, from the plan's slices and the base table's files. */
function groupOfKey(requested: RequestedReplace, base: BaseTable): Map<string, number> {
  const groups = new Map<string, number>();
  requested.clusteringPlan.inputGroups.forEach((group, index) => {
    for (const slice of group.slices) for (const key of base.keysByFileId.get(slice.fileId) ?? []) groups.set(key, index);
  });
  return groups;
}

/** Each group's output files in write order (task partition / output index). */
function outputsByGroup(side: SideResult, base: BaseTable): OutputFile[][] {
  const groups = groupOfKey(side.requested, base);
  const byGroup: OutputFile[][] = side.requested.clusteringPlan.inputGroups.map(() => []);
  for (const output of side.outputs) {
    const indexes = new Set(output.rows.map((row) => groups.get(row['_hoodie_record_key'] as string)));
    assert.equal(indexes.size, 1, `${output.path} holds the rows of one group`);
    const [index] = indexes;
    assert.ok(index !== undefined, `${output.path} holds rows of the plan's groups`);
    byGroup[index]!.push(output);
  }
  return byGroup.map((outputs) => outputs.sort((left, right) => left.taskPartition - right.taskPartition));
}

const toSortValue = (column: string, value: unknown): SortValue => {
  if (value === null || value === undefined) return null;
  if (COLUMN_TYPES[column] === 'long' || COLUMN_TYPES[column] === 'timestamp') return BigInt(value as bigint);
  return value as SortValue;
};

/** Each row's sort key as comparable text: curve keys as hex, linear keys as the values. */
function sortKeys(layoutCase: LayoutCase, rows: readonly RowValues[]): string[] {
  if (rows.length === 0) return [];
  if (layoutCase.layout === 'linear') {
    return rows.map((row) => JSON.stringify(layoutCase.order.map((column) => (row[column] === null ? null : String(row[column])))));
  }
  const batch = buildCurveKeys(
    layoutCase.order.map((column) => ({
      type: COLUMN_TYPES[column]!,
      schemaPosition: META_COLUMNS.length + DATA_COLUMNS.indexOf(column),
      values: rows.map((row) => toSortValue(column, row[column])),
    })),
    { layout: layoutCase.layout, buildMethod: 'direct' },
  );
  return rows.map((_, row) => Buffer.from(curveKeyAt(batch, row)).toString('hex'));
}

/** Spark's ascending order for one value: nulls first, NaN above +Infinity, strings by their UTF-8 bytes. */
function compareSparkValues(left: unknown, right: unknown): number {
  if (left === null || right === null) return left === right ? 0 : left === null ? -1 : 1;
  if (typeof left === 'string' && typeof right === 'string') return Buffer.compare(Buffer.from(left, 'utf8'), Buffer.from(right, 'utf8'));
  const [a, b] = [Number(left), Number(right)];
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) === Number.isNaN(b) ? 0 : Number.isNaN(a) ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Where Hudi's rows of one file are out of order under our sort key: the first offending row, or -1. */
function firstOutOfOrder(layoutCase: LayoutCase, rows: readonly RowValues[], keys: readonly string[]): number {
  for (let row = 1; row < rows.length; row++) {
    const order =
      layoutCase.layout === 'linear'
        ? (layoutCase.order.map((column) => compareSparkValues(rows[row - 1]![column], rows[row]![column])).find((c) => c !== 0) ?? 0)
        : keys[row - 1]! < keys[row]!
          ? -1
          : keys[row - 1] === keys[row]
            ? 0
            : 1;
    if (order > 0) return row;
  }
  return -1;
}

/** Rows in output order as runs of equal sort keys: [key, the run's record keys sorted]. */
function runs(keys: readonly string[], rows: readonly RowValues[]): [string, string[]][] {
  const result: [string, string[]][] = [];
  rows.forEach((row, index) => {
    const last = result[result.length - 1];
    const recordKey = row['_hoodie_record_key'] as string;
    if (last !== undefined && last[0] === keys[index]) last[1].push(recordKey);
    else result.push([keys[index]!, [recordKey]]);
  });
  return result.map(([key, recordKeys]) => [key, recordKeys.sort()]);
}

const recordKeys = (output: OutputFile): string[] => output.rows.map((row) => row['_hoodie_record_key'] as string);

/** execute.ts's split: `outputs` files (at most one per row), the first `rows % outputs` one row longer. */
function nearEqualSplit(rows: number, outputs: number): number[] {
  const count = Math.min(outputs, rows);
  return Array.from({ length: count }, (_, index) => Math.floor(rows / count) + (index < rows % count ? 1 : 0));
}

/**
 * Spark's RangePartitioner (determineBounds, getPartition) over keys in sorted order when every key is sampled with
 * weight 1, as for these small groups: a bound each time the running count reaches the next multiple of
 * rows / partitions, skipping a key equal to the previous bound; a row goes to the first partition whose bound is not
 * below its key. Empty partitions write no file.
 */
function rangePartitionerSplit(sortedKeys: readonly string[], partitions: number): number[] {
  const step = sortedKeys.length / partitions;
  const bounds: string[] = [];
  let target = step;
  for (let index = 0; index < sortedKeys.length && bounds.length < partitions - 1; index++) {
    if (index + 1 >= target && (bounds.length === 0 || sortedKeys[index]! > bounds[bounds.length - 1]!)) {
      bounds.push(sortedKeys[index]!);
      target += step;
    }
  }
  const sizes = new Array<number>(bounds.length + 1).fill(0);
  for (const key of sortedKeys) {
    let partition = 0;
    while (partition < bounds.length && key > bounds[partition]!) partition++;
    sizes[partition]! += 1;
  }
  return sizes.filter((size) => size > 0);
}

// ---------------------------------------------------------------------------------------------------------------

describe('clustering side by side with Hudi 0.15 (run_clustering) on copies of one table', () => {
  let hudi: HudiHarness;
  let base: BaseTable;
  /** spark.sql.adaptive.enabled in the harness's session. */
  let adaptiveExecution: string;
  const dir = tempDir('clustering-sbs-');

  before(async () => {
    duckInstance = await DuckDBInstance.create(':memory:');
    duck = await duckInstance.connect();
    hudi = await startHudi();
    adaptiveExecution = String((await hudi.sql('SET spark.sql.adaptive.enabled')).rows[0]!['value']);
    const path = join(dir, 'base');
    for (const rows of insertBatches()) await hudi.write(path, { schema: SCHEMA, rows, options: WRITE_OPTIONS });
    const keysByFileId = new Map<string, string[]>();
    let largestFile = { fileId: '', size: 0 };
    const footers: { footer: Record<string, string> }[] = [];
    for (const partition of PARTITIONS) {
      const files = readdirSync(join(path, partition)).filter((name) => name.endsWith('.parquet') && !name.startsWith('.'));
      assert.equal(files.length, ROWS_PER_INSERT.length, `partition ${partition} has one base file per insert`);
      for (const name of files) {
        const fileId = BASE_FILE.exec(name)![1]!;
        const file = join(path, partition, name);
        keysByFileId.set(
          fileId,
          (await rowsInFileOrder(file)).map((row) => row['_hoodie_record_key'] as string),
        );
        footers.push({ footer: await footerOf(file) });
        const { size } = statSync(file);
        if (size > largestFile.size) largestFile = { fileId, size };
      }
    }
    assert.ok(keysByFileId.get(largestFile.fileId)!.includes('101'), "the largest file is partition b's first");
    base = { path, keysByFileId, largestFile, footers };
  });

  after(async () => {
    await hudi?.close();
    duck?.closeSync();
    duckInstance?.closeSync();
  });

  for (const layoutCase of CASES) {
    describe(`${layoutCase.layout} on ${layoutCase.order.join(', ')}`, () => {
      let hudiSide: SideResult;
      let ours: SideResult;

      before(async () => {
        const caseDir = join(dir, `${layoutCase.layout}-${layoutCase.order.join('-')}`);
        const [copyA, copyB] = [join(caseDir, 'A'), join(caseDir, 'B')];
        cpSync(base.path, copyA, { recursive: true });
        cpSync(base.path, copyB, { recursive: true });
        hudiSide = await runHudi(hudi, layoutCase, base, copyA);
        ours = await runOurs(layoutCase, base, copyB, join(caseDir, 'clustering.properties'));
      });

      it('plans the same groups of the same slices, in the same order, with the same strategy', () => {
        // Hudi records Hadoop-qualified paths (file:/...), we the storage's URI (a plain absolute path on local disk,
        // s3://bucket/... on S3); either reads back on its own file system.
        const hudiPlan = relativePlan(hudiSide.requested, `file:${hudiSide.table}/`);
        const ourPlan = relativePlan(ours.requested, `${ours.table}/`);
        if (layoutCase.selectedPartitions === undefined) {
          // Without partition.selected Hudi plans partitions in the order its file system lists the table's folder
          // (on local disk the directory order, not sorted; on S3 sorted), we in sorted order, which is S3's.
          const listed = directoryOrder(hudiSide.table).filter((name) => PARTITIONS.includes(name));
          const partitionOrder = (plan: RequestedReplace): string[] => [
            ...new Set(plan.clusteringPlan.inputGroups.map((group) => group.slices[0]!.partitionPath)),
          ];
          assert.deepEqual(partitionOrder(hudiPlan), listed, 'Hudi plans partitions in listing order');
          assert.deepEqual(partitionOrder(ourPlan), [...listed].sort(), 'we plan partitions in sorted order');
          const byPartition = (plan: RequestedReplace): PlanGroup[] =>
            [...plan.clusteringPlan.inputGroups].sort(
              (left, right) => PARTITIONS.indexOf(left.slices[0]!.partitionPath) - PARTITIONS.indexOf(right.slices[0]!.partitionPath),
            );
          // A stable sort: within a partition the groups keep their planned order.
          hudiPlan.clusteringPlan.inputGroups = byPartition(hudiPlan);
          ourPlan.clusteringPlan.inputGroups = byPartition(ourPlan);
        }
        assert.deepEqual(ourPlan, hudiPlan);
        assert.equal(ourPlan.clusteringPlan.inputGroups.length, layoutCase.groups);
        const planned = new Set(ourPlan.clusteringPlan.inputGroups.flatMap((group) => group.slices.map((slice) => slice.fileId)));
        const limit = layoutCase.options(base)['hoodie.clustering.plan.strategy.small.file.limit'];
        // A file is small when strictly smaller than the limit: with the limit at the largest file's size, that one stays out.
        const expected = [...base.keysByFileId.keys()].filter((fileId) => limit === undefined || fileId !== base.largestFile.fileId);
        if (layoutCase.selectedPartitions === undefined) assert.deepEqual([...planned].sort(), expected.sort(), 'the planned file groups');
        assert.deepEqual(ours.requestedFile, hudiSide.requestedFile, 'the same Avro container header');
        assert.equal(ourPlan.clusteringPlan.strategy.strategyParams['hoodie.clustering.plan.strategy.sort.columns'], layoutCase.order.join(','));
        // Which of our two ways built the curve keys the row test below holds to Hudi's order.
        assert.equal(ours.execution?.rewrittenGroups, layoutCase.groups);
        assert.equal(ours.execution?.curveKeysInEngine, layoutCase.curveKeysInEngine);
      });

      it('shows the same plan (show_clustering / show-clustering)', () => {
        assert.equal(hudiSide.shown.state, 'REQUESTED');
        assert.equal(ours.shown.state, 'REQUESTED');
        assert.equal(ours.shown.groups, hudiSide.shown.groups);
        // show_clustering's involved_partitions names every slice's partition, sorted (HoodieCLIUtils.extractPartitions);
        // show-clustering lists each partition once, in plan order.
        const slicePartitions = (side: SideResult): string[] =>
          side.requested.clusteringPlan.inputGroups.flatMap((group) => group.slices.map((slice) => slice.partitionPath));
        assert.deepEqual(hudiSide.shown.partitions, slicePartitions(hudiSide).sort());
        assert.deepEqual(ours.shown.partitions, [...new Set(slicePartitions(ours))]);
      });

      it("writes each group's rows in the same order; splits them between files as its engine does", (t) => {
        const hudiGroups = outputsByGroup(hudiSide, base);
        const ourGroups = outputsByGroup(ours, base);
        const tiedRuns: string[][] = [];
        const splits: string[] = [];
        let splitsDiffer = false;
        let exactOrder = true;
        // Match groups by their slices (group order may differ by partition order, see the plan test).
        const groupId = (group: PlanGroup): string =>
          group.slices
            .map((slice) => slice.fileId)
            .sort()
            .join(',');
        const ourIndexByGroup = new Map(ours.requested.clusteringPlan.inputGroups.map((group, index) => [groupId(group), index]));
        hudiSide.requested.clusteringPlan.inputGroups.forEach((group, hudiIndex) => {
          const ourIndex = ourIndexByGroup.get(groupId(group));
          assert.ok(ourIndex !== undefined, `we planned group ${hudiIndex} too`);
          const [hudiFiles, ourFiles] = [hudiGroups[hudiIndex]!, ourGroups[ourIndex]!];
          const label = `group ${hudiIndex} (${group.slices[0]!.partitionPath}: ${group.slices.length} slice(s), ${group.numOutputFileGroups} output(s))`;
          for (const file of hudiFiles) {
            const keys = sortKeys(layoutCase, file.rows);
            const outOfOrder = firstOutOfOrder(layoutCase, file.rows, keys);
            assert.equal(outOfOrder, -1, `${label}: Hudi's row ${outOfOrder} of ${file.fileName} is out of our ${layoutCase.layout} order`);
          }
          // The group's rows in output order, files one after the other.
          const hudiRows = hudiFiles.flatMap((file) => file.rows);
          const ourRows = ourFiles.flatMap((file) => file.rows);
          const hudiKeys = sortKeys(layoutCase, hudiRows);
          const hudiRuns = runs(hudiKeys, hudiRows);
          assert.deepEqual(runs(sortKeys(layoutCase, ourRows), ourRows), hudiRuns, `${label}: the same rows in the same order (up to ties)`);
          tiedRuns.push(...hudiRuns.filter(([, keys]) => keys.length > 1).map(([, keys]) => keys));
          if (ourRows.map((row) => row['_hoodie_record_key']).join() !== hudiRows.map((row) => row['_hoodie_record_key']).join()) exactOrder = false;

          const sizes = (files: readonly OutputFile[]): number[] => files.map((file) => file.rows.length);
          // Ours: numOutputFileGroups files of near-equal row counts (execute.ts planOutputRanges).
          assert.deepEqual(sizes(ourFiles), nearEqualSplit(ourRows.length, group.numOutputFileGroups), `${label}: our split`);
          if (layoutCase.layout === 'linear') {
            // Hudi: RowCustomColumnsSortPartitioner sorts (a shuffle into spark.sql.shuffle.partitions range
            // partitions, which adaptive execution merges into one for a few kB) and then coalesce(numOutputFileGroups),
            // which never splits a partition: one file per group here, however many the plan asks for.
            assert.equal(adaptiveExecution, 'true');
            assert.deepEqual(sizes(hudiFiles), [hudiRows.length], `${label}: Hudi's linear split`);
          } else {
            // Hudi: RDD.sortBy(curve key, numOutputFileGroups) range-partitions by Spark's RangePartitioner, whose
            // bounds come from sampled keys (all of them at this size): equal keys never straddle two files, and file
            // sizes follow the bounds rather than equal counts.
            assert.deepEqual(sizes(hudiFiles), rangePartitionerSplit(hudiKeys, group.numOutputFileGroups), `${label}: Hudi's ${layoutCase.layout} split`);
          }
          splits.push(`${label}: Hudi ${JSON.stringify(sizes(hudiFiles))}, ours ${JSON.stringify(sizes(ourFiles))}`);
          if (JSON.stringify(sizes(hudiFiles)) !== JSON.stringify(sizes(ourFiles))) splitsDiffer = true;
        });
        assert.equal(splitsDiffer, layoutCase.splitsDiffer, 'some group split differently');
        assert.deepEqual(
          tiedRuns,
          layoutCase.ties.map((keys) => [...keys].sort()),
          'rows tie exactly where the data was made to',
        );
        t.diagnostic(`rows per output file: ${splits.join('; ')}`);
        t.diagnostic(`record keys in exactly Hudi's order, ties included: ${exactOrder ? 'yes' : 'no (Spark orders ties arbitrarily)'}`);
      });

      it("keeps every row's values and meta columns, with _hoodie_file_name naming the new file", () => {
        const byKey = (side: SideResult): Map<string, RowValues> => {
          const rows = new Map<string, RowValues>();
          for (const output of side.outputs) {
            for (const row of output.rows) {
              assert.equal(row['_hoodie_file_name'], output.fileName, `${output.path}: _hoodie_file_name`);
              rows.set(row['_hoodie_record_key'] as string, { ...row, _hoodie_file_name: undefined });
            }
          }
          return rows;
        };
        const [hudiRows, ourRows] = [byKey(hudiSide), byKey(ours)];
        assert.deepEqual([...ourRows.keys()].sort(), [...hudiRows.keys()].sort());
        for (const [key, row] of hudiRows) assert.deepEqual(ourRows.get(key), row, `record ${key}`);
      });

      it('writes footers of the same shape: record key range and bloom filter', (t) => {
        for (const side of [hudiSide, ours]) {
          for (const output of side.outputs) {
            const keys = recordKeys(output).sort();
            assert.equal(output.footer['hoodie_min_record_key'], keys[0], `${output.path}: hoodie_min_record_key`);
            assert.equal(output.footer['hoodie_max_record_key'], keys[keys.length - 1], `${output.path}: hoodie_max_record_key`);
          }
        }
        // Hudi's clustering writes through Spark's row writer (hoodie.datasource.write.row.writer.enable, on by default):
        // its footers carry Spark's schema, not Avro's. We write the footer of Hudi's Avro write path, as the
        // table's base files (written by Hudi's inserts) have it. Both carry the same hoodie_* entries.
        const HOODIE_KEYS = ['hoodie_bloom_filter_type_code', 'hoodie_max_record_key', 'hoodie_min_record_key', 'org.apache.hudi.bloomfilter'];
        const footerKeys = (outputs: readonly { footer: Readonly<Record<string, string>> }[]): string[][] =>
          [...new Set(outputs.map((output) => JSON.stringify(Object.keys(output.footer).sort())))].map((text) => JSON.parse(text) as string[]);
        assert.deepEqual(footerKeys(hudiSide.outputs), [[...HOODIE_KEYS, 'org.apache.spark.sql.parquet.row.metadata', 'org.apache.spark.version']]);
        assert.deepEqual(footerKeys(ours.outputs), [[...HOODIE_KEYS, 'parquet.avro.schema', 'writer.model.name']]);
        assert.deepEqual(footerKeys(ours.outputs), footerKeys(base.footers), 'ours have the keys of the base files Hudi inserted');
        for (const side of [hudiSide, ours]) for (const output of side.outputs) assert.equal(output.footer['hoodie_bloom_filter_type_code'], 'DYNAMIC_V0');
        // Files holding the same records (where the splits agree) have the same bloom filter, bit for bit.
        let twins = 0;
        for (const output of ours.outputs) {
          const keys = recordKeys(output).sort().join();
          const twin = hudiSide.outputs.find((candidate) => recordKeys(candidate).sort().join() === keys);
          if (twin === undefined) continue;
          twins++;
          for (const key of HOODIE_KEYS) assert.equal(output.footer[key], twin.footer[key], `${output.path} vs ${twin.path}: footer ${key}`);
        }
        t.diagnostic(`${twins} of our ${ours.outputs.length} output files hold the same records as one of Hudi's ${hudiSide.outputs.length}`);
        assert.ok(twins > 0, 'some files to compare bit for bit');
      });

      it('commits the same replacecommit shape: replaced file groups, write stats', () => {
        assert.deepEqual(Object.keys(ours.commit), Object.keys(hudiSide.commit), 'top-level fields, in order');
        assert.equal(ours.commit.operationType, 'CLUSTER');
        assert.equal(hudiSide.commit.operationType, 'CLUSTER');
        assert.equal(ours.commit.compacted, hudiSide.commit.compacted);
        // Ours also records the run's summary, under a key of its own; everything else is what Hudi records.
        const { [CLUSTERING_SUMMARY_KEY]: summaryText, ...oursExtra } = ours.commit.extraMetadata;
        assert.deepEqual(oursExtra, hudiSide.commit.extraMetadata);
        assert.equal(hudiSide.commit.extraMetadata[CLUSTERING_SUMMARY_KEY], undefined);
        assert.ok(summaryText !== undefined, `our replacecommit records ${CLUSTERING_SUMMARY_KEY}`);
        const summary = JSON.parse(summaryText) as { totals: { filesAfter: number; rowsAfter: number } };
        assert.equal(summary.totals.filesAfter, ours.outputs.length);
        assert.equal(
          summary.totals.rowsAfter,
          ours.outputs.reduce((total, output) => total + output.rows.length, 0),
        );
        const replaced = (side: SideResult): Record<string, string[]> =>
          Object.fromEntries(
            Object.entries(side.commit.partitionToReplaceFileIds)
              .map(([partition, ids]) => [partition, [...ids].sort()])
              .sort(),
          );
        assert.deepEqual(replaced(ours), replaced(hudiSide));
        const statKeys = (side: SideResult): string[] => [...new Set(side.outputs.map((output) => JSON.stringify(Object.keys(output.stat))))];
        assert.deepEqual(statKeys(ours), statKeys(hudiSide), 'write stat fields, in order');
        for (const side of [hudiSide, ours]) {
          for (const output of side.outputs) {
            const { stat } = output;
            const where = `${side === ours ? 'ours' : 'Hudi'} ${output.path}`;
            assert.equal(stat['fileId'], output.fileId, where);
            assert.equal(stat['partitionPath'], output.partition, where);
            assert.equal(stat['path'], `${output.partition}/${output.fileName}`, where);
            assert.equal(stat['prevCommit'], 'null', where);
            assert.equal(stat['numWrites'], output.rows.length, where);
            assert.equal(stat['numInserts'], output.rows.length, where);
            assert.equal(stat['numDeletes'], 0, where);
            assert.equal(stat['numUpdateWrites'], 0, where);
            assert.equal(stat['totalWriteErrors'], 0, where);
            assert.equal(stat['totalWriteBytes'], output.size, where);
            assert.equal(stat['fileSizeInBytes'], output.size, where);
            assert.deepEqual(Object.keys(stat['runtimeStats'] as object), ['totalScanTime', 'totalUpsertTime', 'totalCreateTime'], where);
          }
        }
      });
    });
  }
});
