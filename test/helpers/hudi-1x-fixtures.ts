/**
 * Tables of table version 8 (Hudi 1.0.2) and 9 (Hudi 1.1.1), written by Spark with that release's bundle, and what
 * Hudi itself says about their timelines: the fixtures of test/timeline/hudi-1x.test.ts, kept under
 * test/fixtures/hudi-1x-tables/<version>/<table>/ (`npm run fixtures:generate -- hudi-1x`).
 *
 * Each table folder keeps hoodie.properties and the instant files of `.hoodie/timeline/` (no data files: the test
 * parses names and decodes commit metadata), and expected.json: the file names, the instants as Hudi's
 * HoodieActiveTimeline lists them (HoodieInstant.toString: requested time, completion time, action, state), and each
 * completed write's metadata as Hudi decodes it (HoodieCommitMetadata.toJsonString through CommitMetadataSerDeV2).
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TableVersionChangedError } from '../../lib/errors.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { type HudiHarness, HudiHarnessError, type HudiVersion, type JavaExpression } from './hudi.js';
import { tempDir } from './paths.js';

export const HUDI_1X_VERSIONS = ['1.0.2', '1.1.1'] as const satisfies readonly HudiVersion[];
export type Hudi1xVersion = (typeof HUDI_1X_VERSIONS)[number];

export const HUDI_1X_SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
export type Hudi1xRow = { id: number; name: string; ts: number; dt: string };

/** Rows of ids at one version: `name` says which write it came from, `ts` orders them. */
export function hudi1xRows(ids: readonly number[], version: number): Hudi1xRow[] {
  return ids.map((id) => ({ id, name: `v${version}-${id}`, ts: version, dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01' }));
}

/** hudi1xRows(ids, batch) as a JSON-lines input file under `dir`, for our writer. */
export function hudi1xBatchFile(dir: string, ids: readonly number[], batch: number): string {
  const file = join(dir, `batch-${batch}.jsonl`);
  writeFileSync(
    file,
    `${hudi1xRows(ids, batch)
      .map((row) => JSON.stringify(row))
      .join('\n')}\n`,
  );
  return file;
}

/**
 * Spark inserts rows 1..6 (version 0) into `path` with `options`; the metadata-table partitions the table then
 * declares (hoodie.table.metadata.partitions), sorted.
 */
export async function sparkInsertsSix(hudi: HudiHarness, path: string, options: Record<string, string>): Promise<string[]> {
  await hudi.write(path, {
    schema: HUDI_1X_SCHEMA,
    rows: hudi1xRows([1, 2, 3, 4, 5, 6], 0),
    options: { ...options, 'hoodie.datasource.write.operation': 'insert' },
  });
  const declared = (await HudiTable.open(new LocalStorage(path))).config.properties.get('hoodie.table.metadata.partitions') ?? '';
  return declared.split(',').sort();
}

/** `hudi1xRows(ids, version)` as a JSONL file in `dir` for our writer: its path. */
export function hudi1xJsonl(dir: string, ids: readonly number[], version: number): string {
  const input = join(dir, `batch-${version}.jsonl`);
  writeFileSync(
    input,
    `${hudi1xRows(ids, version)
      .map((row) => JSON.stringify(row))
      .join('\n')}\n`,
  );
  return input;
}

/** The names in a 1.x table's timeline folder, sorted; not the `.<name>.crc` checksums Spark's local file system keeps. */
export function timelineFiles(table: string): string[] {
  return readdirSync(join(table, '.hoodie', 'timeline'))
    .filter((name) => !name.startsWith('.'))
    .sort();
}

/** Hudi datasource keys of a small partitioned table with an ordering field (EVENT_TIME_ORDERING, Hudi's default). */
export function hudi1xWriteOptions(name: string, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ'): Record<string, string> {
  return {
    'hoodie.table.name': name,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.datasource.write.table.type': type,
    'hoodie.embed.timeline.server': 'false',
    'hoodie.parquet.small.file.limit': '0',
  };
}

export interface Hudi1xExpected {
  readonly generatedBy: string;
  readonly tableVersion: number;
  /** Every file name the timeline folder held (instant files; `history/` and checksums left out). */
  readonly timelineFiles: string[];
  /** HoodieActiveTimeline.getInstants(), each HoodieInstant.toString(), in Hudi's order. */
  readonly instants: string[];
  /** Completed commit/deltacommit/replacecommit file name → Hudi's HoodieCommitMetadata.toJsonString(), parsed. */
  readonly commits: Record<string, unknown>;
}

/** What each fixture table is made of, in the order Spark writes it. */
const RECIPES: Record<'cow' | 'mor', { description: string; make: (hudi: HudiHarness, path: string) => Promise<void> }> = {
  cow: {
    description:
      'COW: an insert, a write that fails pre-commit validation (rolled back by the next write), an upsert, a delete, a completed clustering (replacecommit), and a pending clustering (clustering.requested)',
    make: async (hudi, path) => {
      const options = hudi1xWriteOptions('cow', 'COPY_ON_WRITE');
      await hudi.write(path, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([1, 2, 3, 4, 5, 6], 1),
        options: { ...options, 'hoodie.datasource.write.operation': 'insert' },
      });
      await failedWrite(hudi, path, options);
      await hudi.write(path, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([2, 3, 7], 2),
        options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
      });
      await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows([4], 3), options: { ...options, 'hoodie.datasource.write.operation': 'delete' } });
      await hudi.sql(`CALL run_clustering(path => '${path}', op => 'scheduleAndExecute')`);
      await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows([8], 4), options: { ...options, 'hoodie.datasource.write.operation': 'insert' } });
      await hudi.sql(`CALL run_clustering(path => '${path}', op => 'schedule')`);
    },
  },
  mor: {
    description:
      'MOR: an insert, upserts and a delete (log files), a completed compaction (compaction → commit), two upserts cleaned after automatically (hoodie.clean.commits.retained=1), and a pending compaction (compaction.requested)',
    make: async (hudi, path) => {
      const options = { ...hudi1xWriteOptions('mor', 'MERGE_ON_READ'), 'hoodie.clean.commits.retained': '1' };
      await hudi.write(path, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([1, 2, 3, 4, 5, 6], 1),
        options: { ...options, 'hoodie.datasource.write.operation': 'insert' },
      });
      await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows([2, 3], 2), options: { ...options, 'hoodie.datasource.write.operation': 'upsert' } });
      await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows([4], 3), options: { ...options, 'hoodie.datasource.write.operation': 'delete' } });
      await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows([1, 5], 4), options: { ...options, 'hoodie.datasource.write.operation': 'upsert' } });
      await hudi.sql(`CALL run_compaction(op => 'scheduleAndExecute', path => '${path}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
      await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows([6], 5), options: { ...options, 'hoodie.datasource.write.operation': 'upsert' } });
      await hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows([2], 6), options: { ...options, 'hoodie.datasource.write.operation': 'upsert' } });
      await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${path}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
    },
  },
};

export const HUDI_1X_TABLES = Object.keys(RECIPES) as (keyof typeof RECIPES)[];

/**
 * A write whose pre-commit validation fails after its files are written: it stays pending until the next write rolls
 * it back. An upsert of `ids` (default a new id 9; stored ids make a merge-on-read table's delta commit log files). On
 * a merge-on-read table the validator's query itself fails (it reads the base files as Parquet), as late.
 */
export async function failedWrite(hudi: HudiHarness, path: string, options: Record<string, string>, ids: readonly number[] = [9]): Promise<void> {
  try {
    await hudi.write(path, {
      schema: HUDI_1X_SCHEMA,
      rows: hudi1xRows(ids, 9),
      options: {
        ...options,
        'hoodie.datasource.write.operation': 'upsert',
        'hoodie.precommit.validators': 'org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator',
        'hoodie.precommit.validators.single.value.sql.queries': 'select count(*) from <TABLE_NAME> where id is null#1',
      },
    });
  } catch (error) {
    if (error instanceof HudiHarnessError && /validation|UNABLE_TO_INFER_SCHEMA/i.test(error.message)) return;
    throw error;
  }
  throw new Error(`${path}: the write meant to fail pre-commit validation succeeded`);
}

/** HoodieTableMetaClient.builder().setConf(HadoopFSUtils.getStorageConf()).setBasePath(path).build().getActiveTimeline() */
export function activeTimelineExpression(path: string): JavaExpression {
  const builder: JavaExpression = { static: 'org.apache.hudi.common.table.HoodieTableMetaClient.builder' };
  const withConf: JavaExpression = { call: 'setConf', on: builder, args: [{ static: 'org.apache.hudi.hadoop.fs.HadoopFSUtils.getStorageConf' }] };
  const metaClient: JavaExpression = { call: 'build', on: { call: 'setBasePath', on: withConf, args: [path] } };
  return { call: 'getActiveTimeline', on: metaClient };
}

/** The instants Hudi's active timeline holds (HoodieInstant.toString()), and each completed write's metadata as Hudi reads it. */
export async function hudiTimelineFacts(hudi: HudiHarness, path: string): Promise<{ instants: string[]; commits: Map<number, unknown> }> {
  const timeline = activeTimelineExpression(path);
  const instants = (await hudi.jvmEval({ call: 'getInstants', on: timeline })) as string[];
  const commits = new Map<number, unknown>();
  for (const [index, text] of instants.entries()) {
    const match = /__(commit|deltacommit|replacecommit)__COMPLETED\]$/.exec(text);
    if (match === null) continue;
    const instant: JavaExpression = { call: 'get', on: { call: 'getInstants', on: timeline }, args: [index] };
    const read = match[1] === 'replacecommit' ? 'readReplaceCommitMetadata' : 'readCommitMetadata';
    const json = (await hudi.jvmEval({ call: 'toJsonString', on: { call: read, on: timeline, args: [instant] } })) as string;
    commits.set(index, JSON.parse(json));
  }
  return { instants, commits };
}

/** Write the fixture tables of one Hudi version into `outDir/<table>/` (replacing what is there). */
export async function generateHudi1xFixtures(hudi: HudiHarness, version: Hudi1xVersion, outDir: string, log: (line: string) => void = () => {}): Promise<void> {
  const work = tempDir(`hudi-${version}-fixtures-`);
  for (const name of HUDI_1X_TABLES) {
    const path = join(work, name);
    await RECIPES[name].make(hudi, path);
    const timelineDir = join(path, '.hoodie/timeline');
    const timelineFiles = readdirSync(timelineDir)
      .filter((file) => !file.endsWith('.crc') && statSync(join(timelineDir, file)).isFile())
      .sort();
    const { instants, commits } = await hudiTimelineFacts(hudi, path);
    const out = join(outDir, name);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(join(out, 'timeline'), { recursive: true });
    copyFileSync(join(path, '.hoodie/hoodie.properties'), join(out, 'hoodie.properties'));
    for (const file of timelineFiles) copyFileSync(join(timelineDir, file), join(out, 'timeline', file));
    const byName: Record<string, unknown> = {};
    for (const [index, metadata] of commits) {
      const [requested, completion, action] = /^\[(\d+)__(\d+)__(\w+)__COMPLETED\]$/.exec(instants[index]!)!.slice(1);
      byName[`${requested}_${completion}.${action}`] = metadata;
    }
    const tableVersion = Number(/^hoodie\.table\.version=(\d+)$/m.exec(readFileSync(join(path, '.hoodie/hoodie.properties'), 'utf8'))?.[1]);
    const expected: Hudi1xExpected & { description: string } = {
      description: RECIPES[name].description,
      generatedBy: `Apache Hudi ${version} on Spark 3.5.1 (test/helpers/hudi-1x-fixtures.ts)`,
      tableVersion,
      timelineFiles,
      instants,
      commits: byName,
    };
    writeFileSync(join(out, 'expected.json'), `${JSON.stringify(expected, null, 1)}\n`);
    log(`hudi-1x ${version}/${name}: table version ${tableVersion}, ${timelineFiles.length} timeline files, ${instants.length} instants`);
  }
  rmSync(work, { recursive: true, force: true });
}

/**
 * A Spark write of hudi1xRows(ids, at) into copy-on-write table `name` (insert when `at` is 1, else upsert), with
 * Hudi's automatic clean and archive off so that a test decides which service runs; `extra` adds or overrides keys.
 */
export function hudi1xCowWrite(hudi: HudiHarness, path: string, name: string, ids: number[], at: number, extra: Record<string, string> = {}): Promise<void> {
  return hudi1xWrite(hudi, path, name, 'COPY_ON_WRITE', ids, at, extra);
}

/** hudi1xCowWrite into merge-on-read table `name`: upserts and deletes append log files. */
export function hudi1xMorWrite(hudi: HudiHarness, path: string, name: string, ids: number[], at: number, extra: Record<string, string> = {}): Promise<void> {
  return hudi1xWrite(hudi, path, name, 'MERGE_ON_READ', ids, at, extra);
}

function hudi1xWrite(
  hudi: HudiHarness,
  path: string,
  name: string,
  type: 'COPY_ON_WRITE' | 'MERGE_ON_READ',
  ids: number[],
  at: number,
  extra: Record<string, string>,
): Promise<void> {
  return hudi.write(path, {
    schema: HUDI_1X_SCHEMA,
    rows: hudi1xRows(ids, at),
    options: {
      ...hudi1xWriteOptions(name, type),
      'hoodie.datasource.write.operation': at === 1 ? 'insert' : 'upsert',
      'hoodie.clean.automatic': 'false',
      'hoodie.archive.automatic': 'false',
      ...extra,
    },
  });
}

/** The `avro.schema` header of an Avro container file: the writer schema's JSON text (no braces inside its strings). */
export function writerSchemaText(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString('latin1');
  const start = text.indexOf('{"type":"record"');
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  throw new Error('no schema');
}

/** The write or service failed at its commit because a 1.x writer moved the table's version under it, `from` → `to`. */
export async function assertVersionChanged(attempt: Promise<unknown>, from: number, to: number): Promise<void> {
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(error instanceof TableVersionChangedError, `TableVersionChangedError, got ${String(error)}`);
    assert.deepEqual([error.from.version, error.to.version], [from, to]);
    return true;
  });
}

/**
 * Run `write` with the harness JVM's clock `hours` behind, so the instants Spark writes meanwhile on a table whose
 * timeline zone is LOCAL (the default) read as that many hours old: their times come from the JVM's default zone
 * (HoodieInstantTimeGenerator). Its last generated time is reset first, else Hudi waits for the clock to pass it.
 * Later writes, on the real clock, get later times.
 */
export async function hudi1xHoursAgo<T>(hudi: HudiHarness, hours: number, write: () => Promise<T>): Promise<T> {
  const generator: JavaExpression = { static: 'java.lang.Class.forName', args: ['org.apache.hudi.common.table.timeline.HoodieInstantTimeGenerator'] };
  const field = `last-instant-time-${hours}`;
  await hudi.jvmEval({ keep: field, value: { call: 'getDeclaredField', on: generator, args: ['LAST_INSTANT_TIME'] } });
  await hudi.jvmEval({ call: 'setAccessible', on: { kept: field }, args: [true] });
  await hudi.jvmEval({ call: 'set', on: { call: 'get', on: { kept: field }, args: [null] }, args: ['0'] });
  const setZone = (id: string) => hudi.jvmEval({ static: 'java.util.TimeZone.setDefault', args: [{ static: 'java.util.TimeZone.getTimeZone', args: [id] }] });
  const offset = `GMT-${String(hours).padStart(2, '0')}:00`;
  await setZone(offset);
  try {
    return await write();
  } finally {
    await setZone(hudi.info.jvmTimezone);
  }
}
