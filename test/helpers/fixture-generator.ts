/**
 * Makes the committed test fixtures with real Hudi (0.15 on Spark 3.5.1, through test/hudi/harness.py): small
 * tables under test/fixtures/tables/<name>/ with an expected.json of what Spark reads, Hudi's official Avro
 * schemas under test/fixtures/avro/, and space-curve vectors from Hudi's own classes under test/fixtures/spacecurve/.
 *
 * Run by `npm run fixtures:generate` (test/fixtures/generate.ts), and by test/interop/fixtures.test.ts, which
 * regenerates everything into a temp folder and compares it with the committed copy.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Row } from '../../lib/engine/row-format.js';
import { type HudiHarness, HudiHarnessError, type JavaExpression, type RowSet } from './hudi.js';

// ---------------------------------------------------------------------------------------------------------------
// The sample rows (the shapes and values of hudi-rs's sample tables, crates/test/data/sample_table)

export const SAMPLE_SCHEMA = [
  'id INT',
  'name STRING',
  'isActive BOOLEAN',
  'shortField SHORT',
  'intField INT',
  'longField BIGINT',
  'floatField FLOAT',
  'doubleField DOUBLE',
  'decimalField DECIMAL(10,5)',
  'dateField DATE',
  'timestampField TIMESTAMP',
  'binaryField BINARY',
  'arrayField ARRAY<STRUCT<arr_struct_f1: STRING, arr_struct_f2: INT>>',
  'mapField MAP<STRING, STRUCT<map_field_value_struct_f1: DOUBLE, map_field_value_struct_f2: BOOLEAN>>',
  'structField STRUCT<field1: STRING, field2: INT, child_struct: STRUCT<child_field1: DOUBLE, child_field2: BOOLEAN>>',
  'byteField BYTE',
].join(', ');

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

const ALICE: Row = {
  id: 1,
  name: 'Alice',
  isActive: true,
  shortField: 300,
  intField: 15000,
  longField: 1234567890,
  floatField: 1.0,
  doubleField: 3.14159,
  decimalField: '12345.67890',
  dateField: '2023-04-01',
  timestampField: '2023-04-01T17:01:00.000Z',
  binaryField: b64('binary data'),
  arrayField: [
    { arr_struct_f1: 'red', arr_struct_f2: 100 },
    { arr_struct_f1: 'blue', arr_struct_f2: 200 },
    { arr_struct_f1: 'green', arr_struct_f2: 300 },
  ],
  mapField: {
    key1: { map_field_value_struct_f1: 123.456, map_field_value_struct_f2: true },
    key2: { map_field_value_struct_f1: 789.012, map_field_value_struct_f2: false },
  },
  structField: { field1: 'Alice', field2: 30, child_struct: { child_field1: 123.456, child_field2: true } },
  byteField: 10,
};
const BOB: Row = {
  id: 2,
  name: 'Bob',
  isActive: false,
  shortField: 100,
  intField: 25000,
  longField: 9876543210,
  floatField: 2.0,
  doubleField: 2.71828,
  decimalField: '67890.12345',
  dateField: '2023-04-02',
  timestampField: '2023-04-02T18:02:00.000Z',
  binaryField: b64('more binary data'),
  arrayField: [
    { arr_struct_f1: 'yellow', arr_struct_f2: 400 },
    { arr_struct_f1: 'purple', arr_struct_f2: 500 },
  ],
  mapField: {
    key3: { map_field_value_struct_f1: 234.567, map_field_value_struct_f2: true },
    key4: { map_field_value_struct_f1: 567.89, map_field_value_struct_f2: false },
  },
  structField: { field1: 'Bob', field2: 40, child_struct: { child_field1: 789.012, child_field2: false } },
  byteField: 20,
};
const CAROL: Row = {
  id: 3,
  name: 'Carol',
  isActive: true,
  shortField: 200,
  intField: 35000,
  longField: 1928374650,
  floatField: 3.0,
  doubleField: 1.41421,
  decimalField: '11111.22222',
  dateField: '2023-04-03',
  timestampField: '2023-04-03T19:03:00.000Z',
  binaryField: b64('even more binary data'),
  arrayField: [
    { arr_struct_f1: 'black', arr_struct_f2: 600 },
    { arr_struct_f1: 'white', arr_struct_f2: 700 },
    { arr_struct_f1: 'pink', arr_struct_f2: 800 },
  ],
  mapField: {
    key5: { map_field_value_struct_f1: 345.678, map_field_value_struct_f2: true },
    key6: { map_field_value_struct_f1: 654.321, map_field_value_struct_f2: false },
  },
  structField: { field1: 'Carol', field2: 25, child_struct: { child_field1: 456.789, child_field2: true } },
  byteField: 10,
};
const DIANA: Row = {
  id: 4,
  name: 'Diana',
  isActive: true,
  shortField: 500,
  intField: 45000,
  longField: 987654321,
  floatField: 4.0,
  doubleField: 2.468,
  decimalField: '65432.12345',
  dateField: '2023-04-04',
  timestampField: '2023-04-04T20:04:00.000Z',
  binaryField: b64('new binary data'),
  arrayField: [
    { arr_struct_f1: 'orange', arr_struct_f2: 900 },
    { arr_struct_f1: 'gray', arr_struct_f2: 1000 },
  ],
  mapField: {
    key7: { map_field_value_struct_f1: 456.789, map_field_value_struct_f2: true },
    key8: { map_field_value_struct_f1: 123.456, map_field_value_struct_f2: false },
  },
  structField: { field1: 'Diana', field2: 50, child_struct: { child_field1: 987.654, child_field2: true } },
  byteField: 30,
};

/** hudi-rs's two commits: the first inserts Alice (active), Bob and Carol; the second deactivates Alice and adds Diana. */
export const FIRST_COMMIT_ROWS: readonly Row[] = [ALICE, BOB, CAROL];
export const SECOND_COMMIT_ROWS: readonly Row[] = [{ ...ALICE, isActive: false }, DIANA];
/** The insert_overwrite_table commit: Diana alone, inactive. */
export const OVERWRITE_ROWS: readonly Row[] = [{ ...DIANA, isActive: false }];

// ---------------------------------------------------------------------------------------------------------------
// What a generated table records about itself (expected.json)

export interface TimelineEntry {
  time: string;
  action: string;
  state: 'REQUESTED' | 'INFLIGHT' | 'COMPLETED';
}

export interface FileGroupEntry {
  partitionPath: string;
  fileId: string;
  /** Base files (and log files for MOR) of the group, relative to the table, oldest instant first. */
  files: string[];
}

export interface ExpectedTable {
  name: string;
  description: string;
  generatedBy: string;
  tableVersion: number;
  /** Every instant on the active timeline at its furthest state, in time order (from the .hoodie file names). */
  timeline: TimelineEntry[];
  /** Every data file on disk by file group, partitions and file ids sorted (committed or not). */
  fileGroups: FileGroupEntry[];
  /** Spark's snapshot read (meta columns included), rows sorted by record key; absent when Spark cannot read it. */
  snapshot?: RowSet;
  /** Spark's read as of each completed write instant (as.of.instant), rows sorted like the snapshot. */
  asOf?: Record<string, RowSet>;
  /** Facts a test needs that none of the above holds (e.g. a clustering plan's instant). */
  facts?: Record<string, string>;
}

export const GENERATED_BY = 'Apache Hudi 0.15.0 on Spark 3.5.1 (test/fixtures/generate.ts)';

// ---------------------------------------------------------------------------------------------------------------
// Table recipes

interface Context {
  hudi: HudiHarness;
  /** The table's folder. */
  path: string;
  name: string;
}

interface Recipe {
  name: string;
  description: string;
  /** Reads Spark can do afterwards (none for tables Spark must not be asked to read as they are, e.g. hand-made v8). */
  read: 'snapshot-and-as-of' | 'snapshot' | 'none';
  make(context: Context): Promise<Record<string, string> | void>;
}

const SMALL_BLOOM = { 'hoodie.index.bloom.num_entries': '1000' };

function writeOptions(name: string, extra: Record<string, string>): Record<string, string> {
  return {
    'hoodie.table.name': name,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'longField',
    'hoodie.datasource.write.operation': 'upsert',
    'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
    'hoodie.metadata.enable': 'false',
    ...extra,
  };
}

const NONPARTITIONED = {
  'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.NonpartitionedKeyGenerator',
  'hoodie.datasource.write.partitionpath.field': '',
};
const SIMPLE_BY_BYTE = {
  'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.SimpleKeyGenerator',
  'hoodie.datasource.write.partitionpath.field': 'byteField',
};

async function twoCommits(context: Context, options: Record<string, string>, schema = SAMPLE_SCHEMA, first = FIRST_COMMIT_ROWS, second = SECOND_COMMIT_ROWS) {
  await context.hudi.write(context.path, { schema, rows: first, options: writeOptions(context.name, options) });
  await context.hudi.write(context.path, { schema, rows: second, options: writeOptions(context.name, options) });
}

/** A write whose pre-commit validation fails: Hudi leaves it requested + inflight with its data files and markers. */
async function failedWrite(context: Context, schema: string, rows: readonly Row[], options: Record<string, string>): Promise<void> {
  try {
    await context.hudi.write(context.path, {
      schema,
      rows,
      options: {
        ...options,
        'hoodie.precommit.validators': 'org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator',
        // Expects one row with a null key, which no table has: validation fails after the data files are written.
        'hoodie.precommit.validators.single.value.sql.queries': 'select count(*) from <TABLE_NAME> where id is null#1',
      },
    });
  } catch (error) {
    if (error instanceof HudiHarnessError && /validation/i.test(`${error.message}`)) return;
    throw error;
  }
  throw new Error(`${context.name}: the write meant to fail pre-commit validation succeeded`);
}

const TRINO_SCHEMA = 'id INT, name STRING, ts BIGINT, dt STRING, hh STRING';

export const RECIPES: readonly Recipe[] = [
  {
    name: 'v6_nonpartitioned',
    description: "COW, NonpartitionedKeyGenerator, two upserts: 1 file group, 2 file slices. Hudi's default bloom filter settings.",
    read: 'snapshot-and-as-of',
    make: (context) => twoCommits(context, NONPARTITIONED),
  },
  {
    name: 'v6_simplekeygen_nonhivestyle',
    description: 'COW, SimpleKeyGenerator on byteField, partitions 10/20/30, two upserts.',
    read: 'snapshot-and-as-of',
    make: (context) => twoCommits(context, { ...SIMPLE_BY_BYTE, ...SMALL_BLOOM }),
  },
  {
    name: 'v6_complexkeygen_hivestyle',
    description: 'COW, ComplexKeyGenerator (id,name) partitioned by byteField,shortField hive-style (2 levels), two upserts.',
    read: 'snapshot-and-as-of',
    make: (context) => {
      // As in hudi-rs's table: Carol shares Alice's partition, Diana is in byteField=30/shortField=100.
      const carol = (row: Row): Row => (row['id'] === 3 ? { ...row, shortField: 300 } : row['id'] === 4 ? { ...row, shortField: 100 } : row);
      return twoCommits(
        context,
        {
          'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.ComplexKeyGenerator',
          'hoodie.datasource.write.recordkey.field': 'id,name',
          'hoodie.datasource.write.partitionpath.field': 'byteField,shortField',
          'hoodie.datasource.write.hive_style_partitioning': 'true',
          ...SMALL_BLOOM,
        },
        SAMPLE_SCHEMA,
        FIRST_COMMIT_ROWS.map(carol),
        SECOND_COMMIT_ROWS.map(carol),
      );
    },
  },
  {
    name: 'v6_simplekeygen_hivestyle_no_metafields',
    description: 'COW, SimpleKeyGenerator on byteField hive-style, hoodie.populate.meta.fields=false, one upsert of the latest four rows.',
    read: 'snapshot',
    make: async (context) => {
      const latest = [FIRST_COMMIT_ROWS[1]!, FIRST_COMMIT_ROWS[2]!, ...SECOND_COMMIT_ROWS];
      await context.hudi.write(context.path, {
        schema: SAMPLE_SCHEMA,
        rows: latest,
        options: writeOptions(context.name, {
          ...SIMPLE_BY_BYTE,
          'hoodie.datasource.write.hive_style_partitioning': 'true',
          'hoodie.populate.meta.fields': 'false',
          ...SMALL_BLOOM,
        }),
      });
    },
  },
  {
    name: 'v6_simplekeygen_nonhivestyle_overwritetable',
    description: 'COW, SimpleKeyGenerator on byteField, two upserts then an insert_overwrite_table of Diana alone (a replacecommit).',
    read: 'snapshot-and-as-of',
    make: async (context) => {
      const options = { ...SIMPLE_BY_BYTE, ...SMALL_BLOOM };
      await twoCommits(context, options);
      await context.hudi.write(context.path, {
        schema: SAMPLE_SCHEMA,
        rows: OVERWRITE_ROWS,
        options: writeOptions(context.name, { ...options, 'hoodie.datasource.write.operation': 'insert_overwrite_table' }),
      });
    },
  },
  {
    name: 'v6_timebasedkeygen_nonhivestyle',
    description: 'COW, TimestampBasedKeyGenerator on ts_str (DATE_STRING in, yyyy/MM/dd/HH out, 4-level partitions), two upserts.',
    read: 'snapshot-and-as-of',
    make: (context) => {
      const withTs = (row: Row): Row => ({ ...row, ts_str: `2023-04-0${String(row['id'])}T${row['id'] === 4 ? '13' : '12'}:01:00.123Z` });
      return twoCommits(
        context,
        {
          'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.TimestampBasedKeyGenerator',
          'hoodie.datasource.write.partitionpath.field': 'ts_str',
          'hoodie.keygen.timebased.timestamp.type': 'DATE_STRING',
          'hoodie.keygen.timebased.input.dateformat': "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
          'hoodie.keygen.timebased.output.dateformat': 'yyyy/MM/dd/HH',
          'hoodie.keygen.timebased.timezone': 'GMT',
          ...SMALL_BLOOM,
        },
        `${SAMPLE_SCHEMA}, ts_str STRING`,
        FIRST_COMMIT_ROWS.map(withTs),
        SECOND_COMMIT_ROWS.map(withTs),
      );
    },
  },
  {
    name: 'v6_empty',
    description: 'COW created by Spark SQL CREATE TABLE: hoodie.properties, no commits.',
    read: 'snapshot',
    make: async (context) => {
      await context.hudi.sql(
        `CREATE TABLE ${context.name} (${SAMPLE_SCHEMA.replaceAll(': ', ' ')}) USING hudi ` +
          `TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'longField', 'hoodie.metadata.enable' = 'false') LOCATION '${context.path}'`,
      );
    },
  },
  {
    name: 'v6_mor_nonpartitioned',
    description: 'MERGE_ON_READ, NonpartitionedKeyGenerator, two upserts (a base file, then a log file).',
    read: 'snapshot',
    make: (context) => twoCommits(context, { ...NONPARTITIONED, 'hoodie.datasource.write.table.type': 'MERGE_ON_READ', ...SMALL_BLOOM }),
  },
  {
    name: 'v6_clustering_pending',
    description:
      'COW, SimpleKeyGenerator on dt hive-style, three inserts of small files (small.file.limit 0) in two partitions, then a clustering plan scheduled by CALL run_clustering (pending, requested only).',
    read: 'snapshot',
    make: async (context) => {
      const schema = 'id INT, name STRING, ts BIGINT, dt STRING';
      const options = writeOptions(context.name, {
        'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.SimpleKeyGenerator',
        'hoodie.datasource.write.partitionpath.field': 'dt',
        'hoodie.datasource.write.hive_style_partitioning': 'true',
        'hoodie.datasource.write.precombine.field': 'ts',
        'hoodie.datasource.write.operation': 'insert',
        'hoodie.parquet.small.file.limit': '0',
        ...SMALL_BLOOM,
      });
      let id = 1;
      for (let commit = 0; commit < 3; commit++) {
        const rows: Row[] = [];
        for (const dt of ['2024-01-01', '2024-01-02']) {
          for (let i = 0; i < 2 + commit; i++, id++) rows.push({ id, name: `rider-${id}`, ts: 1000 + id, dt });
        }
        await context.hudi.write(context.path, { schema, rows, options });
      }
      const scheduled = await context.hudi.sql(`CALL run_clustering(path => '${context.path}', op => 'schedule')`);
      return { clusteringInstant: String(scheduled.rows[0]?.['timestamp']) };
    },
  },
  {
    name: 'v6_rollback',
    description:
      'COW nonpartitioned: an upsert, a second upsert that fails pre-commit validation (left inflight), then a third upsert, before which Hudi rolls the failed one back (rollback.requested / .inflight / .rollback).',
    read: 'snapshot-and-as-of',
    make: async (context) => {
      const options = writeOptions(context.name, { ...NONPARTITIONED, ...SMALL_BLOOM });
      await context.hudi.write(context.path, { schema: SAMPLE_SCHEMA, rows: FIRST_COMMIT_ROWS, options });
      await failedWrite(context, SAMPLE_SCHEMA, [DIANA], options);
      await context.hudi.write(context.path, { schema: SAMPLE_SCHEMA, rows: SECOND_COMMIT_ROWS, options });
    },
  },
  {
    name: 'v5_cow_clustered_pending',
    description:
      'Table version 5 (downgraded by CALL downgrade_table from 6), COW, ComplexKeyGenerator on id, hive-style dt/hh: three upserts, a completed clustering (CALL run_clustering), an upsert, a clean (retain 1 commit, removing the replaced files), then a write that fails pre-commit validation and stays pending (requested + inflight, data file, timeline-server markers).',
    read: 'snapshot',
    make: async (context) => {
      const options = writeOptions(context.name, {
        'hoodie.datasource.write.keygenerator.class': 'org.apache.hudi.keygen.ComplexKeyGenerator',
        'hoodie.datasource.write.partitionpath.field': 'dt,hh',
        'hoodie.datasource.write.hive_style_partitioning': 'true',
        'hoodie.datasource.write.precombine.field': 'ts',
        'hoodie.parquet.small.file.limit': '0',
        ...SMALL_BLOOM,
      });
      const row = (id: number, hh: string, name = `a${id}`): Row => ({ id, name, ts: 1000, dt: '2021-12-09', hh });
      await context.hudi.write(context.path, { schema: TRINO_SCHEMA, rows: [row(1, '10')], options });
      await context.hudi.sql(`CREATE TABLE ${context.name} USING hudi LOCATION '${context.path}'`);
      await context.hudi.write(context.path, { schema: TRINO_SCHEMA, rows: [row(2, '11')], options });
      await context.hudi.write(context.path, { schema: TRINO_SCHEMA, rows: [row(3, '11')], options });
      const clustered = await context.hudi.sql(
        `CALL run_clustering(path => '${context.path}', op => 'scheduleAndExecute', options => 'hoodie.index.bloom.num_entries=1000')`,
      );
      await context.hudi.write(context.path, { schema: TRINO_SCHEMA, rows: [{ ...row(1, '10'), ts: 2000 }], options });
      await context.hudi.sql(`CALL run_clean(table => '${context.name}', retain_commits => 1)`);
      await failedWrite(context, TRINO_SCHEMA, [row(4, '11')], options);
      await context.hudi.sql(`CALL downgrade_table(table => '${context.name}', to_version => 'FIVE')`);
      return { clusteringInstant: String(clustered.rows[0]?.['timestamp']) };
    },
  },
];

/** Names of the tables made by hand from a generated one (no Hudi version here can make them). */
const V8_NAME = 'v8_nonpartitioned';

// ---------------------------------------------------------------------------------------------------------------
// Generation

/** Local-file-system leftovers that are no part of a Hudi table (Hadoop's checksums, empty service folders). */
function tidy(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      tidy(full);
      if (readdirSync(full).length === 0) rmSync(full, { recursive: true });
    } else if (entry.name.endsWith('.crc')) {
      rmSync(full);
    }
  }
}

const INSTANT_FILE =
  /^(\d{14,17})\.(?:(commit|deltacommit|replacecommit|rollback|clean|compaction|savepoint|restore|indexing)(?:\.(requested|inflight))?|(inflight))$/;

/** The active timeline from the .hoodie file names, each instant at its furthest state. */
export function readTimeline(table: string): TimelineEntry[] {
  const rank = { REQUESTED: 0, INFLIGHT: 1, COMPLETED: 2 } as const;
  const byTime = new Map<string, TimelineEntry>();
  for (const name of readdirSync(join(table, '.hoodie'))) {
    const match = INSTANT_FILE.exec(name);
    if (!match) continue;
    const time = match[1]!;
    const action = match[4] ? 'commit' : match[2]!;
    const state = match[4] || match[3] === 'inflight' ? 'INFLIGHT' : match[3] === 'requested' ? 'REQUESTED' : 'COMPLETED';
    const known = byTime.get(time);
    if (!known || rank[state] > rank[known.state]) byTime.set(time, { time, action, state });
  }
  return [...byTime.values()].sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}

const DATA_FILE = /^\.?([0-9a-f-]{36}-\d+)_(?:.*)\.(?:parquet|log\.\d+_[\d-]+)$/;
const INSTANT_OF_FILE = /_(\d{14,17})\.parquet$|^\.[0-9a-f-]{36}-\d+_(\d{14,17})\.log/;

/** Data files on disk by file group (every file, committed or not), from their names. */
export function readFileGroups(table: string): FileGroupEntry[] {
  const groups = new Map<string, FileGroupEntry>();
  for (const entry of readdirSync(table, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(table, join(entry.parentPath, entry.name));
    if (path.startsWith('.hoodie')) continue;
    const match = DATA_FILE.exec(entry.name);
    if (!match) continue;
    const partitionPath = relative(table, entry.parentPath);
    const key = `${partitionPath}\u0000${match[1]}`;
    const group = groups.get(key) ?? { partitionPath, fileId: match[1]!, files: [] };
    group.files.push(path);
    groups.set(key, group);
  }
  const instantOf = (path: string): string => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const match = INSTANT_OF_FILE.exec(name);
    return (match?.[1] ?? match?.[2] ?? '') + name;
  };
  for (const group of groups.values()) group.files.sort((a, b) => (instantOf(a) < instantOf(b) ? -1 : 1));
  return [...groups.values()].sort((a, b) => (a.partitionPath + a.fileId < b.partitionPath + b.fileId ? -1 : 1));
}

function sortRows(rows: RowSet): RowSet {
  const key = (row: Row): string => String(row['_hoodie_record_key'] ?? '') + '\u0000' + JSON.stringify(row['id'] ?? null);
  return { columns: rows.columns, rows: [...rows.rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)) };
}

/** Make one table with Spark into `outDir/<name>/` and write its expected.json beside the table files. */
async function generateTable(hudi: HudiHarness, recipe: Recipe, outDir: string): Promise<void> {
  const path = join(outDir, recipe.name);
  rmSync(path, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const facts = (await recipe.make({ hudi, path, name: recipe.name })) ?? undefined;
  tidy(path);
  const timeline = readTimeline(path);
  const expected: ExpectedTable = {
    name: recipe.name,
    description: recipe.description,
    generatedBy: GENERATED_BY,
    tableVersion: Number(/^hoodie\.table\.version=(\d+)$/m.exec(readFileSync(join(path, '.hoodie/hoodie.properties'), 'utf8'))?.[1]),
    timeline,
    fileGroups: readFileGroups(path),
  };
  if (recipe.read !== 'none') {
    expected.snapshot = sortRows(await hudi.read(path));
  }
  if (recipe.read === 'snapshot-and-as-of') {
    expected.asOf = {};
    const writes = timeline.filter((instant) => instant.state === 'COMPLETED' && ['commit', 'replacecommit', 'deltacommit'].includes(instant.action));
    for (const instant of writes) expected.asOf[instant.time] = sortRows(await hudi.read(path, { options: { 'as.of.instant': instant.time } }));
  }
  if (facts) expected.facts = facts;
  // Spark's reads leave nothing behind on a COW table, but be sure.
  tidy(path);
  writeFileSync(join(path, 'expected.json'), `${JSON.stringify(expected, null, 1)}\n`);
}

/**
 * Hudi 1.x (table version 8) is not in the toolchain, so this table is made by hand: v6_nonpartitioned's
 * hoodie.properties with version 8 and timeline layout 2, and no data. Only refusals are tested with it.
 */
function generateV8(outDir: string): void {
  const path = join(outDir, V8_NAME);
  rmSync(path, { recursive: true, force: true });
  mkdirSync(join(path, '.hoodie'), { recursive: true });
  const v6 = readFileSync(join(outDir, 'v6_nonpartitioned/.hoodie/hoodie.properties'), 'utf8');
  const v8 = v6
    .replace(/^hoodie\.table\.version=6$/m, 'hoodie.table.version=8')
    .replace(/^hoodie\.timeline\.layout\.version=1$/m, 'hoodie.timeline.layout.version=2');
  writeFileSync(join(path, '.hoodie/hoodie.properties'), v8);
  const expected: ExpectedTable = {
    name: V8_NAME,
    description:
      "Hand-made (Hudi 1.x is not in the toolchain): v6_nonpartitioned's hoodie.properties with hoodie.table.version=8 and timeline layout 2, no instants, no data. For refusal tests only.",
    generatedBy: 'test/fixtures/generate.ts from v6_nonpartitioned (no Spark)',
    tableVersion: 8,
    timeline: [],
    fileGroups: [],
  };
  writeFileSync(join(path, 'expected.json'), `${JSON.stringify(expected, null, 1)}\n`);
}

export const TABLE_NAMES: readonly string[] = [...RECIPES.map((recipe) => recipe.name), V8_NAME];

/** Every table (or the named ones) into `outDir` (test/fixtures/tables). */
export async function generateTables(
  hudi: HudiHarness,
  outDir: string,
  names: readonly string[] = TABLE_NAMES,
  log: (line: string) => void = () => {},
): Promise<void> {
  for (const recipe of RECIPES.filter((r) => names.includes(r.name))) {
    const started = Date.now();
    await generateTable(hudi, recipe, outDir);
    log(`${recipe.name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  if (names.includes(V8_NAME)) generateV8(outDir);
}

// ---------------------------------------------------------------------------------------------------------------
// Avro schemas

/** The timeline record schemas the tests read with (each self-contained: nested named types are inlined). */
export const AVRO_SCHEMA_NAMES = [
  'HoodieRequestedReplaceMetadata',
  'HoodieRollbackPlan',
  'HoodieRollbackMetadata',
  'HoodieCleanerPlan',
  'HoodieCleanMetadata',
  'HoodieSavepointMetadata',
  'HoodieMergeArchiveFilePlan',
  'HoodieCompactionPlan',
] as const;

/** `<Name>.avsc.json`: org.apache.hudi.avro.model.<Name>.getClassSchema() from the 0.15 bundle. */
export async function generateAvroSchemas(hudi: HudiHarness, outDir: string): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  for (const name of AVRO_SCHEMA_NAMES) {
    writeFileSync(join(outDir, `${name}.avsc.json`), `${JSON.stringify(await hudi.avroSchema(name), null, 2)}\n`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Space-curve vectors from Hudi's own classes

const BINARY_UTIL = 'org.apache.hudi.common.util.BinaryUtil';
const HILBERT_CURVE_UTILS = 'org.apache.hudi.optimize.HilbertCurveUtils';

/** Java double literals by the label the vectors file gives them. */
const DOUBLE_INPUTS: Readonly<Record<string, JavaExpression>> = {
  '0.0': { double: '0.0' },
  '-0.0': { double: '-0.0' },
  '1.0': { double: '1.0' },
  '-1.0': { double: '-1.0' },
  '1.05': { double: '1.05' },
  '-2.3': { double: '-2.3' },
  '10000.002': { double: '10000.002' },
  'Double.MAX_VALUE': { double: '1.7976931348623157e308' },
  'Double.MIN_VALUE': { double: '5e-324' },
  NaN: { double: 'NaN' },
  Infinity: { double: 'Infinity' },
  '-Infinity': { double: '-Infinity' },
  '(double)1.05f': { float: '1.05' },
  '-2.5': { double: '-2.5' },
};

const MAPPING_INPUTS: ReadonlyArray<[string, number | string | number[]]> = [
  ...[0, 1, -1, -2, 2, 10000, -100000, 2147483647, -2147483648].map((n): [string, number] => ['intTo8Byte', n]),
  ...['0', '1', '-1', '1700000000000', '9223372036854775807', '-9223372036854775808'].map((n): [string, string] => ['longTo8Byte', n]),
  ...['0.0', '-0.0', '1.0', '-1.0', '1.05', '-2.3', '10000.002', 'Double.MAX_VALUE', 'Double.MIN_VALUE', 'NaN', 'Infinity', '-Infinity', '(double)1.05f'].map(
    (d): [string, string] => ['doubleTo8Byte', d],
  ),
  ...['', 'a', 'abc', 'abcdefgh', 'abcdefghij', 'é', '日本', '😀x'].map((s): [string, string] => ['utf8To8Byte', s]),
  ...[0, 1, -1, 127, -128].map((n): [string, number] => ['byteTo8Byte', n]),
  ...[[0], [1, 2, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [255, 128]].map((b): [string, number[]] => ['paddingTo8Byte', b]),
  ...['a', 'abc', 'abcdefghij', 'é', ''].map((s): [string, string] => ['convertStringToLong', s]),
];

function mappingArgument(fn: string, input: number | string | number[]): JavaExpression {
  if (fn === 'longTo8Byte') return { long: input as string };
  if (fn === 'doubleTo8Byte') return DOUBLE_INPUTS[input as string]!;
  if (fn === 'paddingTo8Byte') return { bytes: Buffer.from(input as number[]).toString('base64') };
  if (fn === 'byteTo8Byte') return { byte: input as number };
  return input as JavaExpression;
}

const INTERLEAVING_INPUTS: ReadonlyArray<{ types: string[]; values: Array<number | string> }> = [
  { types: ['int', 'int'], values: [1, 1] },
  { types: ['int', 'int'], values: [5, 5] },
  { types: ['int', 'int'], values: [1, 9] },
  { types: ['int', 'int'], values: [9, 1] },
  { types: ['int', 'int'], values: [0, 0] },
  { types: ['int', 'int'], values: [-1, 1] },
  { types: ['int', 'int'], values: [2147483647, -2147483648] },
  { types: ['long', 'string', 'double'], values: ['1700000000000', 'abc', '-2.5'] },
  { types: ['int', 'long', 'string', 'double'], values: [-7, '-9223372036854775808', 'abcdefghij', 'NaN'] },
  { types: ['raw', 'raw'], values: ['ff00000000000000', '0000000000000000'] },
  { types: ['raw', 'raw', 'raw'], values: ['0123456789abcdef', 'fedcba9876543210', '00ff00ff00ff00ff'] },
];

const HILBERT_INPUTS: ReadonlyArray<{ bits: number; point: string[]; bytes: boolean }> = [
  ...[
    ['0', '0'],
    ['1', '0'],
    ['0', '1'],
    ['1', '1'],
    ['1', '2'],
    ['5', '5'],
    ['1', '9'],
    ['9', '1'],
    ['-1', '0'],
    ['9223372036854775807', '0'],
    ['9223372036854775807', '9223372036854775807'],
    ['1700000000000', '42'],
    ['1', '2', '3'],
    ['6382179', '4609434218613702656', '7'],
    ['-9223372036854775808', '5', '-1', '123456789'],
  ].map((point) => ({ bits: 63, point, bytes: true })),
  { bits: 2, point: ['1', '2'], bytes: false },
  { bits: 5, point: ['0', '16'], bytes: false },
  { bits: 10, point: ['1023', '0', '512'], bytes: false },
];

const hilbertCurve = (bits: number, dims: number): JavaExpression => ({
  call: 'dimensions',
  on: { static: 'org.davidmoten.hilbert.HilbertCurve.bits', args: [bits] },
  args: [dims],
});

const hexOf = (base64: unknown): string => Buffer.from(String(base64), 'base64').toString('hex');

/** `golden-vectors.json` and `hilbert-2d-index-tables.json`, from BinaryUtil, HilbertCurveUtils and the shaded davidmoten curve. */
export async function generateSpaceCurves(hudi: HudiHarness, outDir: string): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const mappings: Record<string, unknown>[] = [];
  for (const [fn, input] of MAPPING_INPUTS) {
    const result = await hudi.jvmStatic(BINARY_UTIL, fn, [mappingArgument(fn, input)]);
    mappings.push(fn === 'convertStringToLong' ? { fn, input, out_long: String(result) } : { fn, input, out_hex: hexOf(result) });
  }
  const column = async (type: string, value: number | string): Promise<string> => {
    if (type === 'raw') return value as string;
    if (type === 'int') return hexOf(await hudi.jvmStatic(BINARY_UTIL, 'intTo8Byte', [value as number]));
    if (type === 'long') return hexOf(await hudi.jvmStatic(BINARY_UTIL, 'longTo8Byte', [{ long: value as string }]));
    if (type === 'double') return hexOf(await hudi.jvmStatic(BINARY_UTIL, 'doubleTo8Byte', [{ double: value as string }]));
    return hexOf(await hudi.jvmStatic(BINARY_UTIL, 'utf8To8Byte', [value as string]));
  };
  const interleavings: Record<string, unknown>[] = [];
  for (const { types, values } of INTERLEAVING_INPUTS) {
    const cols: string[] = [];
    for (let i = 0; i < types.length; i++) cols.push(await column(types[i]!, values[i]!));
    const interleaved = await hudi.jvmStatic(BINARY_UTIL, 'interleaving', [{ byteArrays: cols.map((hex) => Buffer.from(hex, 'hex').toString('base64')) }, 8]);
    interleavings.push({ types, values, cols_hex: cols, interleaved_hex: hexOf(interleaved) });
  }
  const hilbert: Record<string, unknown>[] = [];
  for (const { bits, point, bytes } of HILBERT_INPUTS) {
    const curve = hilbertCurve(bits, point.length);
    const index = await hudi.jvmEval({ call: 'index', on: curve, args: [{ longArray: point }] });
    const vector: Record<string, unknown> = { bits, dims: point.length, point, index_dec: String(index) };
    if (bytes) vector['indexBytes63_hex'] = hexOf(await hudi.jvmStatic(HILBERT_CURVE_UTILS, 'indexBytes', [curve, { longArray: point }, 63]));
    hilbert.push(vector);
  }
  const golden = {
    generator: `${GENERATED_BY}: org.apache.hudi.common.util.BinaryUtil, org.apache.hudi.optimize.HilbertCurveUtils and the davidmoten hilbert-curve 0.2.2 shaded into hudi-spark3.5-bundle_2.12-0.15.0`,
    mappings,
    zorder_interleaving_size8: interleavings,
    hilbert,
  };
  writeFileSync(join(outDir, 'golden-vectors.json'), `${JSON.stringify(golden, null, 1)}\n`);

  // HilbertCurve.bits(b).dimensions(2).index(x, y) for every point of the 2-D grid, as the library's own
  // expected tables (src/test/resources/expected) lay them out: row = x, column = y.
  const tables: Record<string, string[][]> = {};
  for (const bits of [1, 2, 3, 4]) {
    const side = 2 ** bits;
    const calls: JavaExpression[] = [];
    for (let x = 0; x < side; x++)
      for (let y = 0; y < side; y++) calls.push({ call: 'index', on: hilbertCurve(bits, 2), args: [{ longArray: [String(x), String(y)] }] });
    const flat = (await hudi.jvmEval(calls)) as unknown[];
    tables[String(bits)] = Array.from({ length: side }, (_, x) => flat.slice(x * side, (x + 1) * side).map(String));
  }
  writeFileSync(join(outDir, 'hilbert-2d-index-tables.json'), `${JSON.stringify({ generator: golden.generator, tables }, null, 1)}\n`);
}

// ---------------------------------------------------------------------------------------------------------------

/** Everything into `root` (test/fixtures): tables/, avro/, spacecurve/. */
export async function generateAll(hudi: HudiHarness, root: string, log: (line: string) => void = () => {}): Promise<void> {
  await generateAvroSchemas(hudi, join(root, 'avro'));
  log('avro schemas written');
  await generateSpaceCurves(hudi, join(root, 'spacecurve'));
  log('space-curve vectors written');
  await generateTables(hudi, join(root, 'tables'), TABLE_NAMES, log);
}

/** Copy a generated tree (used by the entry script to replace the committed fixtures in one step). */
export function replaceTree(from: string, to: string): void {
  if (existsSync(to)) rmSync(to, { recursive: true });
  cpSync(from, to, { recursive: true });
}

/** Total bytes under a folder. */
export function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}
