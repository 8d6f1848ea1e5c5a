/**
 * Layouts our services cannot keep (bucket index, CDC) are refused before anything is written, by every service that
 * would break them, and the others still run: the refusals' error type, and the table's files unchanged after each.
 */

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { commit } from '../../lib/clustering/commit.js';
import { type ClusteringConfig, resolveClusteringConfig } from '../../lib/clustering/config.js';
import { clusteringFileId, executeGroup } from '../../lib/clustering/execute.js';
import { writeClusteringPlan } from '../../lib/clustering/instant.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { buildClusteringPlan } from '../../lib/clustering/plan-strategy.js';
import { schedule } from '../../lib/clustering/schedule.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { HudiError, UnsupportedTableError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readAvroDataBlock, readLogFile } from '../../lib/log-format/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { tableConfigFromProperties } from '../../lib/table/config.js';
import {
  assertCdcWrite,
  assertLayoutSupports,
  bucketNumberOf,
  CONSISTENT_HASHING_METADATA_FOLDER,
  detectTableLayout,
  newFileGroupId,
  type TableLayout,
  tableLayout,
  UnsupportedLayoutError,
} from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { fixtureTable, tempDir } from '../helpers/fixtures.js';
import { tableFiles } from '../helpers/paths.js';
import { createSmallFilesTable } from '../helpers/small-files-table.js';

const config = (properties: Record<string, string> = {}): ClusteringConfig => resolveClusteringConfig({ event: properties }).config;
const BUCKET_PROPS = new Map([['hoodie.index.type', 'BUCKET']]);
/** The file id Hudi's simple bucket index gives bucket `n` (BucketIdentifier.newBucketFileIdPrefix, then `-0`). */
const bucketFileId = (n: number, salt: number) => `${String(n).padStart(8, '0')}-1c2d-4e5f-a6b7-${String(salt).padStart(12, '0')}-0`;

/** A copy-on-write table of 3 commits over 2 partitions; bucket file ids when `buckets` (one bucket per commit). */
async function smallTable(options: { buckets?: boolean; cdc?: boolean } = {}) {
  const dir = tempDir('table-layouts-');
  await createSmallFilesTable({
    dir,
    partitions: 2,
    commits: 3,
    rowsPerFile: 10,
    ...(options.buckets === true ? { fileIdOf: (commit: number, partition: number) => bucketFileId(commit, partition) } : {}),
  });
  // The checksum covers only the table's name, so a key appended keeps the file whole.
  if (options.cdc === true) appendFileSync(join(dir, '.hoodie', 'hoodie.properties'), 'hoodie.table.cdc.enabled=true\n');
  const storage = openStorage(dir);
  return { dir, storage, lock: new StorageLockProvider(storage, { waitMs: 5000 }), table: await HudiTable.open(storage, { mode: 'clustering' }) };
}

async function writeUsers(dir: string, operation: WriteOptions['operation'], properties: Map<string, string> = new Map()) {
  const file = join(tempDir('table-layouts-input-'), 'batch.jsonl');
  await writeJsonLines(file, generateUsers({ count: 5, seed: 3, idStart: 1, startDate: '2024-01-01', days: 2 }));
  return writeBatch(openStorage(dir), { input: { file, format: 'jsonl' }, operation, properties });
}

/** A merge-on-read (or copy-on-write) table of one insert (our writer), then the flag appended to hoodie.properties. */
async function mergeOnReadTable(flag: string, type = 'MERGE_ON_READ') {
  const dir = join(tempDir('table-layouts-mor-'), 'users_mor');
  const props = new Map([
    ['hoodie.table.name', 'users_mor'],
    ['hoodie.datasource.write.table.type', type],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.datasource.write.precombine.field', 'createTime'],
    ['hoodie.metadata.enable', 'false'],
  ]);
  await writeUsers(dir, 'insert', props);
  appendFileSync(join(dir, '.hoodie', 'hoodie.properties'), `${flag}\n`);
  const storage = openStorage(dir);
  return { dir, table: await HudiTable.open(storage), lock: new StorageLockProvider(storage, { waitMs: 5000 }) };
}

/** Assert `promise` is refused with UnsupportedLayoutError for `layout` and `service`, mentioning `pattern`. */
async function refused(promise: Promise<unknown>, layout: UnsupportedLayoutError['layout'], service: UnsupportedLayoutError['service'], pattern: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof UnsupportedLayoutError, `an UnsupportedLayoutError, not ${String(error)}`);
    assert.ok(error instanceof UnsupportedTableError);
    assert.equal(error.layout, layout);
    assert.equal(error.service, service);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('recognising a layout', () => {
  const config0 = { properties: new Map<string, string>() } as unknown as Parameters<typeof tableLayout>[0];
  const bucket = (layout: TableLayout) => layout.bucketIndex?.engine;

  it("our new file group ids never read as a bucket's, random or derived from a clustering instant", () => {
    const uuids = ['00045885-7b2d-467f-9fd8-1ec640840e96', '3f2a9c1e-1c2d-4e5f-a6b7-000000000001'];
    assert.equal(
      newFileGroupId(() => uuids.shift()!),
      '3f2a9c1e-1c2d-4e5f-a6b7-000000000001-0',
      'a UUID that reads as bucket 45885 is drawn again',
    );
    // A clustering output whose first hash reads as a bucket's: found by search, salted, and the same on a retry.
    const firstHash = (output: number) => createHash('sha1').update(`hudi-serverless/clustering/20240101000000000/0/${output}`).digest('hex').slice(0, 8);
    let output = 0;
    while (bucketNumberOf(`${firstHash(output)}-0000-0000-0000-000000000000-0`) === undefined) output++;
    const id = clusteringFileId('20240101000000000', 0, output);
    assert.equal(bucketNumberOf(id), undefined, id);
    assert.equal(clusteringFileId('20240101000000000', 0, output), id);
    assert.equal(clusteringFileId('20240101000000000', 0, output + 1).slice(0, 8), firstHash(output + 1), 'other ids are as before');
  });

  it('a bucket index from the run properties, the consistent-hashing folder, or file ids carrying bucket numbers', () => {
    assert.equal(bucketNumberOf('00000003-1c2d-4e5f-a6b7-000000000001-0'), 3);
    assert.equal(bucketNumberOf('3f2a9c1e-1c2d-4e5f-a6b7-000000000001-0'), undefined, 'a random UUID');
    assert.equal(bucketNumberOf('12345678-1c2d-4e5f-a6b7-000000000001-0'), undefined, 'eight digits, but no bucket number a table has');
    assert.equal(bucket(tableLayout(config0, { properties: BUCKET_PROPS })), 'SIMPLE');
    assert.equal(bucket(tableLayout(config0, { properties: new Map([['hoodie.index.type', 'bucket']]) })), 'SIMPLE', 'Hudi reads the index type in any case');
    assert.equal(
      bucket(tableLayout(config0, { properties: new Map([...BUCKET_PROPS, ['hoodie.index.bucket.engine', 'CONSISTENT_HASHING']]) })),
      'CONSISTENT_HASHING',
    );
    assert.equal(bucket(tableLayout(config0, { consistentHashingMetadata: true })), 'CONSISTENT_HASHING');
    assert.equal(bucket(tableLayout(config0, { fileIds: [bucketFileId(0, 1), bucketFileId(1, 1)] })), 'SIMPLE');
    // A bucket table one of our clusterings already gave a random file id is still one.
    assert.equal(bucket(tableLayout(config0, { fileIds: [bucketFileId(0, 1), '3f2a9c1e-1c2d-4e5f-a6b7-000000000001-0'] })), 'SIMPLE');
    assert.equal(bucket(tableLayout(config0, { fileIds: ['3f2a9c1e-1c2d-4e5f-a6b7-000000000001-0'] })), undefined);
    assert.equal(bucket(tableLayout(config0, { fileIds: [] })), undefined);
    assert.equal(bucket(tableLayout(config0, { properties: new Map([['hoodie.index.type', 'BLOOM']]) })), undefined);
  });

  it('CDC from hoodie.properties; the consistent-hashing folder from storage', async () => {
    const { dir, storage, table } = await smallTable({ cdc: true });
    assert.equal(tableLayout(table.config, {}).cdc, true);
    assert.equal((await detectTableLayout(storage, table.config, {})).bucketIndex, undefined);
    mkdirSync(join(dir, CONSISTENT_HASHING_METADATA_FOLDER, 'dt=2024-01-01'), { recursive: true });
    writeFileSync(join(dir, CONSISTENT_HASHING_METADATA_FOLDER, 'dt=2024-01-01', '00000000000000.hashing_meta'), '{}');
    assert.equal((await detectTableLayout(storage, table.config, {})).bucketIndex?.engine, 'CONSISTENT_HASHING');
  });
});

describe('clustering a bucket-index table is refused before anything is written', () => {
  it('scheduling: a table whose file ids carry bucket numbers (no properties), and one the properties call bucket-indexed', async () => {
    const byFileIds = await smallTable({ buckets: true });
    const before = tableFiles(byFileIds.dir);
    await refused(schedule(byFileIds.table, config(), { lock: byFileIds.lock }), 'simple-bucket-index', 'clustering', /not supported for simple bucket index/);
    assert.deepEqual(tableFiles(byFileIds.dir), before, 'nothing written');

    const byProps = await smallTable();
    const before2 = tableFiles(byProps.dir);
    await refused(
      schedule(byProps.table, config(), { lock: byProps.lock, properties: BUCKET_PROPS }),
      'simple-bucket-index',
      'clustering',
      /hoodie\.index\.type=BUCKET/,
    );
    const consistent = new Map([...BUCKET_PROPS, ['hoodie.index.bucket.engine', 'consistent_hashing']]);
    await refused(
      schedule(byProps.table, config(), { lock: byProps.lock, properties: consistent }),
      'consistent-hashing-bucket-index',
      'clustering',
      /SparkConsistentBucketClusteringPlanStrategy/,
    );
    assert.deepEqual(tableFiles(byProps.dir), before2, 'nothing written');
  });

  it('the CLI job (scheduleAndExecute) refuses the same way', async () => {
    const { dir, table, lock } = await smallTable({ buckets: true });
    const before = tableFiles(dir);
    const engine = await openParquetEngine();
    try {
      await refused(
        runClusteringJob(table, { mode: 'scheduleAndExecute', config: config(), lock, engine, tempDir: tempDir('table-layouts-job-') }),
        'simple-bucket-index',
        'clustering',
        /file ids carry bucket numbers/,
      );
    } finally {
      await engine.close();
    }
    assert.deepEqual(tableFiles(dir), before);
  });

  it('a pending plan on a bucket table is neither executed nor committed', async () => {
    const { dir, storage, table, lock } = await smallTable({ buckets: true });
    // A plan as an older build (or another tool) left it: built and written without the refusal.
    const view = await table.fileSystemView();
    const plan = buildClusteringPlan({
      partitionPaths: view.partitionPaths(),
      latestSlices: view.latestSlices().map((slice) => ({
        fileId: slice.fileId,
        partitionPath: slice.partitionPath,
        baseFilePath: storage.uriOf(slice.baseFile.path),
        baseFileSize: slice.baseFile.size,
        instantTime: slice.baseInstantTime,
      })),
      pendingFileGroupIds: new Set(),
      config: config(),
    });
    assert.ok(plan);
    const instant = '20300101000000000';
    await writeClusteringPlan(storage, TIMELINE_LAYOUT_1, instant, plan);
    const current = await table.reload();
    const before = tableFiles(dir);
    const engine = await openParquetEngine();
    try {
      await refused(
        executeGroup(current, instant, 0, { engine, tempDir: tempDir('table-layouts-exec-'), config: config() }),
        'simple-bucket-index',
        'clustering',
        /bucket/,
      );
      await refused(
        runClusteringJob(current, { mode: 'execute', instant, config: config(), lock, engine, tempDir: tempDir('table-layouts-job-') }),
        'simple-bucket-index',
        'clustering',
        /bucket/,
      );
    } finally {
      await engine.close();
    }
    await refused(commit(current, instant, { lock }), 'simple-bucket-index', 'clustering', /bucket/);
    assert.deepEqual(tableFiles(dir), before, 'the plan stays requested, nothing else written');
  });
});

describe('writes to a bucket-index table: the simple engine only with its settings, consistent hashing on copy-on-write refused', () => {
  /** Assert `promise` fails with a HudiError (not a layout refusal) mentioning `pattern`. */
  async function refusedSettings(promise: Promise<unknown>, pattern: RegExp) {
    await assert.rejects(promise, (error: unknown) => {
      assert.ok(error instanceof HudiError && !(error instanceof UnsupportedLayoutError), `a HudiError, not ${String(error)}`);
      assert.match(error.message, pattern);
      return true;
    });
  }

  it('copy-on-write: known from its file ids, or from hoodie.index.type=BUCKET; wrong settings refused', async () => {
    const byFileIds = await smallTable({ buckets: true });
    const before = tableFiles(byFileIds.dir);
    await refusedSettings(writeUsers(byFileIds.dir, 'upsert'), /written with the simple bucket index/);
    await refusedSettings(writeUsers(byFileIds.dir, 'delete'), /hoodie\.index\.type/);
    await refusedSettings(writeUsers(byFileIds.dir, 'upsert', BUCKET_PROPS), /need hoodie\.bucket\.index\.num\.buckets/);
    await refused(
      writeUsers(byFileIds.dir, 'upsert', new Map([...BUCKET_PROPS, ['hoodie.index.bucket.engine', 'CONSISTENT_HASHING']])),
      'consistent-hashing-bucket-index',
      'write',
      /copy-on-write tables \(Spark 0\.15 writes this engine into merge-on-read tables only\)/,
    );
    assert.deepEqual(tableFiles(byFileIds.dir), before);
    const byProps = await smallTable();
    const before2 = tableFiles(byProps.dir);
    await refusedSettings(writeUsers(byProps.dir, 'insert', new Map([...BUCKET_PROPS, ['hoodie.bucket.index.num.buckets', '4']])), /not a bucket's/);
    assert.deepEqual(tableFiles(byProps.dir), before2);
  });

  it('a new table asked for with the bucket index but no number of buckets is not created', async () => {
    const dir = join(tempDir('table-layouts-new-'), 'users');
    const props = new Map([...BUCKET_PROPS, ['hoodie.table.name', 'users'], ['hoodie.datasource.write.recordkey.field', 'id']]);
    await refusedSettings(writeUsers(dir, 'insert', props), /hoodie\.bucket\.index\.num\.buckets/);
    assert.throws(() => statSync(join(dir, '.hoodie')), /ENOENT/);
  });
});

describe('CDC tables: writes that write no change data are refused, the other services run', () => {
  it('copy-on-write: upserts write cdc log files; insert is refused, naming CDC', async () => {
    const { dir } = await mergeOnReadTable('hoodie.table.cdc.enabled=true', 'COPY_ON_WRITE');
    const before = tableFiles(dir);
    await refused(writeUsers(dir, 'insert'), 'cdc', 'write', /insert into tables with hoodie\.table\.cdc\.enabled=true \(CDC\).*HoodieConcatHandle/);
    assert.deepEqual(tableFiles(dir), before);
    // The same users again: every record an update, each merged file group with its cdc log (test/interop/cdc-tables.test.ts
    // compares them with Hudi's).
    const upserted = await writeUsers(dir, 'upsert');
    assert.equal(upserted.updated, 5);
    const cdcLogs = upserted.stats.flatMap((stat) => Object.keys(stat.cdcStats ?? {}));
    assert.equal(cdcLogs.length, upserted.stats.length, 'a cdc log per merged file group');
    const records = [];
    for (const path of cdcLogs) {
      assert.ok(/\/\.[^/]+_(\d+)\.log\.1_\d+-1-0\.cdc$/.exec(path)?.[1] === upserted.instantTime, `${path}: a log of the new slice, .cdc`);
      for (const block of await readLogFile(openStorage(dir), path)) {
        assert.equal(block.type, 'CDC_DATA_BLOCK');
        records.push(...(readAvroDataBlock(block) as { op: string; ts_ms: string; before: unknown; after: unknown }[]));
      }
    }
    assert.equal(records.length, 5);
    assert.ok(records.every((r) => r.op === 'u' && r.ts_ms === upserted.instantTime && r.before !== null && r.after !== null));
  });

  it('a failed copy-on-write CDC write is rolled back, its cdc log files with it', async () => {
    const { dir } = await mergeOnReadTable('hoodie.table.cdc.enabled=true', 'COPY_ON_WRITE');
    const dataFiles = () => tableFiles(dir).filter((entry) => !entry.startsWith('/.hoodie/'));
    const before = dataFiles();
    const file = join(tempDir('table-layouts-input-'), 'batch.jsonl');
    await writeJsonLines(file, generateUsers({ count: 5, seed: 3, idStart: 1, startDate: '2024-01-01', days: 2 }));
    let cdcLogs = 0;
    const fail = async () => {
      cdcLogs = dataFiles().filter((entry) => entry.includes('.cdc ')).length;
      throw new Error('injected before the commit');
    };
    await assert.rejects(writeBatch(openStorage(dir), { input: { file, format: 'jsonl' }, operation: 'upsert', afterDataFiles: fail }), /injected/);
    assert.ok(cdcLogs > 0, 'the write had written cdc log files');
    assert.deepEqual(dataFiles(), before, 'the rollback removed them with the base files');
  });

  it('merge-on-read: small-file merges write cdc log files, log appends and new groups none; insert is refused', async () => {
    const { dir, lock } = await mergeOnReadTable('hoodie.table.cdc.enabled=true');
    const before = tableFiles(dir);
    await refused(writeUsers(dir, 'insert'), 'cdc', 'write', /insert into tables with hoodie\.table\.cdc\.enabled=true \(CDC\).*HoodieConcatHandle/);
    assert.deepEqual(tableFiles(dir), before);
    const users = (count: number, seed: number, idStart: number) => [...generateUsers({ count, seed, idStart, startDate: '2024-01-01', days: 2 })];
    const upsert = async (rows: readonly object[]) => {
      const file = join(tempDir('table-layouts-input-'), 'batch.jsonl');
      await writeJsonLines(file, rows);
      return writeBatch(openStorage(dir), { input: { file, format: 'jsonl' }, operation: 'upsert' });
    };
    // Slices of a base file only are small files: the updates and inserts merge into them, each with its cdc log.
    const merged = await upsert([...users(5, 3, 1), ...users(6, 9, 100)]);
    assert.equal(merged.updated, 5);
    const mergedStats = merged.stats.filter((stat) => stat.prevCommit !== 'null');
    assert.ok(mergedStats.length > 0 && mergedStats.every((stat) => stat.path?.endsWith('.parquet') === true && stat.cdcStats !== null));
    const ops: string[] = [];
    for (const path of mergedStats.flatMap((stat) => Object.keys(stat.cdcStats ?? {}))) {
      for (const block of await readLogFile(openStorage(dir), path)) ops.push(...(readAvroDataBlock(block) as { op: string }[]).map((r) => r.op));
    }
    assert.equal(ops.filter((op) => op === 'u').length, 5);
    assert.ok(ops.every((op) => op === 'u' || op === 'i'));
    // Hudi's view counts the `.cdc` log among the slice's log files: no small files now; updates append, inserts
    // start new groups, and neither writes change data (Hudi's CDC reader infers it from the log and its slice).
    const appended = await upsert([...users(6, 9, 100), ...users(4, 11, 200)]);
    assert.equal(appended.updated, 6);
    const logs = appended.stats.filter((stat) => stat.path?.includes('.log.') === true);
    assert.ok(logs.length > 0, 'updates appended to log files');
    assert.ok(
      logs.every((stat) => stat.delta?.logFiles.some((name) => name.endsWith('.cdc')) === true),
      "each delta write stat names its slice's cdc log, as Hudi's does",
    );
    assert.ok(appended.stats.every((stat) => stat.cdcStats === null && (stat.path?.includes('.log.') === true || stat.prevCommit === 'null')));
    // The cleaner runs: it deletes the first slices and keeps the latest with their cdc logs (compared with Hudi's
    // cleaner in test/interop/cdc-merge-on-read.test.ts).
    const cdcFiles = () => tableFiles(dir).filter((entry) => entry.includes('.cdc '));
    const kept = cdcFiles();
    const table = await HudiTable.open(openStorage(dir));
    const cleaned = await runClean(table, { config: cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '1']])), lock });
    assert.equal(cleaned.outcome, 'cleaned');
    assert.ok((cleaned.clean?.metadata.totalFilesDeleted ?? 0) > 0);
    assert.deepEqual(cdcFiles(), kept);
  });

  it('a new table asked for with CDC is not created', async () => {
    const dir = join(tempDir('table-layouts-new-'), 'users');
    const props = new Map([
      ['hoodie.table.cdc.enabled', 'true'],
      ['hoodie.table.name', 'users'],
      ['hoodie.datasource.write.recordkey.field', 'id'],
    ]);
    await refused(writeUsers(dir, 'upsert', props), 'cdc', 'write', /creating a table with .*CDC/);
    assert.throws(() => statSync(join(dir, '.hoodie')), /ENOENT/);
  });

  it('cleaning, clustering and archival run on version 6 CDC tables', async () => {
    const { table, lock } = await smallTable({ cdc: true });
    // The cleaner deletes cdc log files with their slices (test/cleaning/plan.test.ts, test/interop/cdc-tables.test.ts).
    await runClean(table, { config: cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '1']])), lock });
    // Clustering writes no change data in Hudi either (its instants are not data changes for the CDC extractor).
    const scheduled = await schedule(table, config(), { lock });
    assert.ok(scheduled, 'a clustering plan');
    const archived = await runArchive(await table.reload(), {
      config: archivalConfigFromProperties(new Map()),
      cleanConfig: cleanConfigFromProperties(new Map()),
      lock,
    });
    assert.ok(archived);
  });

  it('Hudi 1.x CDC tables: clustering, compaction, cleaning, merge-on-read writes and the DATA_BEFORE mode refused, before anything is written', async () => {
    const dir = fixtureTable('v8_nonpartitioned');
    const properties = join(dir, '.hoodie', 'hoodie.properties');
    writeFileSync(
      properties,
      `${readFileSync(properties, 'utf8').replace('hoodie.table.cdc.enabled=false', 'hoodie.table.cdc.enabled=true')}hoodie.table.cdc.supplemental.logging.mode=DATA_BEFORE\n`,
    );
    const storage = openStorage(dir);
    const table = await HudiTable.open(storage, { mode: 'clustering' });
    const layout = tableLayout(table.config, {});
    assert.ok(layout.cdc && layout.hudi1x && !layout.mergeOnRead);
    const before = tableFiles(dir);
    const lock = new StorageLockProvider(storage, { waitMs: 5000 });
    await refused(schedule(table, config(), { lock }), 'cdc', 'clustering', /Hudi 1\.x .*CDC/);
    await refused(runClean(table, { config: cleanConfigFromProperties(new Map()), lock }), 'cdc', 'clean', /Hudi 1\.x .*cdc log files.*column_stats/);
    // Copy-on-write writes are kept (test/interop/hudi-1x-cdc.test.ts) in the modes compared with Hudi 1.x only.
    await refused(
      writeUsers(dir, 'upsert'),
      'cdc',
      'write',
      /Hudi 1\.x tables with .*CDC.*supplemental\.logging\.mode=DATA_BEFORE .*DATA_BEFORE_AFTER and OP_KEY_ONLY/,
    );
    assert.doesNotThrow(() => assertLayoutSupports(layout, 'write', 'hoodie.properties'));
    for (const loggingMode of ['DATA_BEFORE_AFTER', 'OP_KEY_ONLY'] as const) {
      assert.doesNotThrow(() => assertCdcWrite(layout, { operation: 'upsert', newTable: false, loggingMode }, 'hoodie.properties'));
    }
    assert.doesNotThrow(() => assertCdcWrite({ ...layout, hudi1x: false }, { operation: 'upsert', newTable: false, loggingMode: 'DATA_BEFORE' }, 'p'));
    // Merge-on-read 1.x writes are not compared with Hudi.
    assert.throws(
      () => assertLayoutSupports({ ...layout, mergeOnRead: true }, 'write', 'hoodie.properties'),
      (error: unknown) =>
        error instanceof UnsupportedLayoutError &&
        error.layout === 'cdc' &&
        error.service === 'write' &&
        /merge-on-read Hudi 1\.x tables .*CDC/.test(error.message),
    );
    assert.doesNotThrow(() => assertLayoutSupports({ ...layout, mergeOnRead: true, hudi1x: false }, 'write', 'hoodie.properties'));
    // Compaction of any 1.x table is refused by its table version first; the layout refuses it as well.
    assert.throws(
      () => assertLayoutSupports(layout, 'compaction', 'hoodie.properties'),
      (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'cdc' && error.service === 'compaction',
    );
    assert.deepEqual(tableFiles(dir), before);
    // Version 6 CDC tables still compact and cluster.
    assert.doesNotThrow(() => assertLayoutSupports({ ...layout, hudi1x: false }, 'compaction', 'hoodie.properties'));
  });

  it('consistent hashing: writes kept on version 6 merge-on-read tables only; clustering refused on all; compaction, clean, archive kept', () => {
    const base = tableLayout(tableConfigFromProperties(new Map([['hoodie.table.name', 't']]), 'f'), {});
    const bucket = { ...base, bucketIndex: { engine: 'CONSISTENT_HASHING' as const, evidence: 'hoodie.index.bucket.engine=CONSISTENT_HASHING' } };
    const isRefusal = (service: string, pattern: RegExp) => (error: unknown) =>
      error instanceof UnsupportedLayoutError && error.layout === 'consistent-hashing-bucket-index' && error.service === service && pattern.test(error.message);
    for (const hudi1x of [true, false]) {
      for (const mergeOnRead of [true, false]) {
        const layout = { ...bucket, hudi1x, mergeOnRead };
        if (mergeOnRead && !hudi1x) assert.doesNotThrow(() => assertLayoutSupports(layout, 'write', 'hoodie.properties'));
        else assert.throws(() => assertLayoutSupports(layout, 'write', 'f'), isRefusal('write', hudi1x ? /Hudi 1\.x tables/ : /copy-on-write tables/));
        assert.throws(() => assertLayoutSupports(layout, 'clustering', 'f'), isRefusal('clustering', /resize/));
        for (const service of ['compaction', 'clean', 'archive'] as const)
          assert.doesNotThrow(() => assertLayoutSupports({ ...layout, hudi1x: false }, service, 'f'));
      }
    }
  });

  it('the simple bucket index: writes kept on Hudi 1.x tables of both types and on version 6 tables; clustering refused on all', () => {
    const base = tableLayout(tableConfigFromProperties(new Map([['hoodie.table.name', 't']]), 'f'), {});
    const bucket = { ...base, bucketIndex: { engine: 'SIMPLE' as const, evidence: 'hoodie.index.type=BUCKET' } };
    for (const hudi1x of [true, false]) {
      for (const mergeOnRead of [true, false]) {
        const layout = { ...bucket, hudi1x, mergeOnRead };
        assert.doesNotThrow(() => assertLayoutSupports(layout, 'write', 'hoodie.properties'));
        assert.throws(
          () => assertLayoutSupports(layout, 'clustering', 'hoodie.properties'),
          (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'simple-bucket-index' && error.service === 'clustering',
        );
      }
    }
  });
});

describe('tables without meta fields or with dropped partition columns: merging log records is refused', () => {
  it('hoodie.populate.meta.fields=false: compaction, merge-on-read clustering and writes refused; copy-on-write clustering runs', async () => {
    const { dir, table, lock } = await mergeOnReadTable('hoodie.populate.meta.fields=false');
    const before = tableFiles(dir);
    await refused(
      scheduleCompaction(table, compactionConfigFrom(new Map(), 'test'), { lock, force: true }),
      'no-meta-fields',
      'compaction',
      /_hoodie_record_key/,
    );
    await refused(schedule(table, config(), { lock, force: true }), 'no-meta-fields', 'clustering', /merge-on-read tables without meta fields/);
    await refused(writeUsers(dir, 'upsert'), 'no-meta-fields', 'write', /hoodie\.populate\.meta\.fields=false/);
    assert.deepEqual(tableFiles(dir), before);

    const cow = await smallTable();
    appendFileSync(join(cow.dir, '.hoodie', 'hoodie.properties'), 'hoodie.populate.meta.fields=false\n');
    assert.ok(await schedule(await HudiTable.open(cow.storage), config(), { lock: cow.lock }), 'copy-on-write clustering copies rows as they are');
  });

  it('hoodie.datasource.write.drop.partition.columns=true on merge-on-read: compaction, clustering and writes refused', async () => {
    const { dir, table, lock } = await mergeOnReadTable('hoodie.datasource.write.drop.partition.columns=true');
    const before = tableFiles(dir);
    await refused(
      scheduleCompaction(table, compactionConfigFrom(new Map(), 'test'), { lock, force: true }),
      'dropped-partition-columns',
      'compaction',
      /drop\.partition\.columns/,
    );
    await refused(schedule(table, config(), { lock, force: true }), 'dropped-partition-columns', 'clustering', /not built/);
    await refused(writeUsers(dir, 'upsert'), 'dropped-partition-columns', 'write', /log records without the partition columns/);
    assert.deepEqual(tableFiles(dir), before);
  });
});
