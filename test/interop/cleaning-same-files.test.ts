/**
 * Cleaning against real Hudi 0.15 (Spark 3.5.1): Spark writes a copy-on-write table — inserts into four partitions,
 * upserts, a clustering, a savepoint, a delete_partition that replaces every file group of one partition, more
 * upserts — and the table is copied. On each pair of copies the same cleaning policy runs once through Spark
 * (`CALL run_clean`) and once through us; then:
 * - the same files remain (and the same partition folder is gone);
 * - the plans agree (earliest instant to retain, last completed commit, the files per partition, the partitions to
 *   delete, the savepoints recorded) and so do the clean metadata records; our decoder reads Spark's clean files;
 * - Spark reads the same rows from both copies and from the table before cleaning, and so do we;
 * - Spark keeps writing to our cleaned copy with its automatic cleaner on, which plans incrementally from our
 *   clean, and we read what it wrote.
 * The metadata table stays off (our cleaner refuses tables that have one): every Spark call sets it off.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { type CleanResult, runClean } from '../../lib/cleaning/clean.js';
import { planClean } from '../../lib/cleaning/schedule.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, type HoodieCleanMetadata } from '../../lib/timeline/avro-files.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';
import { baseFilesUnder, cleanerPlanFiles } from '../helpers/table-files.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, dt STRING';
const NO_MDT = 'hoodie.metadata.enable=false';
const options = (operation: string, extra: Record<string, string> = {}) => ({
  'hoodie.table.name': 'clean_src',
  'hoodie.datasource.write.operation': operation,
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.metadata.enable': 'false',
  'hoodie.clean.automatic': 'false',
  'hoodie.archive.automatic': 'false',
  'hoodie.embed.timeline.server': 'false',
  'hoodie.table.timeline.timezone': 'UTC',
  'hoodie.insert.shuffle.parallelism': '2',
  'hoodie.upsert.shuffle.parallelism': '2',
  ...extra,
});
const row = (id: number, ts: number, dt: string) => ({ id, name: `n${id}@${ts}`, ts, dt });

function cleanFiles(table: string, suffix: '.clean.requested' | '.clean'): string[] {
  return readdirSync(join(table, '.hoodie'))
    .filter((name) => name.endsWith(suffix))
    .sort();
}

function metadataFiles(metadata: HoodieCleanMetadata): Record<string, { deleted: string[]; failed: string[]; partitionDeleted: boolean | null }> {
  return Object.fromEntries(
    Object.entries(metadata.partitionMetadata)
      .map(([p, m]) => [p, { deleted: [...m.successDeleteFiles].sort(), failed: [...m.failedDeleteFiles].sort(), partitionDeleted: m.isPartitionDeleted }])
      .sort(([a], [b]) => (a! < b! ? -1 : 1)),
  );
}

describe('cleaning: Spark and we delete the same files', () => {
  let hudi: HudiHarness;
  let source: string;
  let rowsBefore: string[];
  const copies = tempDir('clean-copies-');
  let registered = 0;

  /** Copy the source table and register the copy with Spark under a fresh name. */
  async function copy(name: string): Promise<{ path: string; sqlName: string }> {
    const path = join(copies, name);
    cpSync(source, path, { recursive: true });
    const sqlName = `clean_copy_${++registered}`;
    await hudi.sql(`CREATE TABLE ${sqlName} USING hudi LOCATION '${path}'`);
    return { path, sqlName };
  }

  async function ours(path: string, props: Record<string, string>): Promise<CleanResult> {
    const storage = new LocalStorage(path);
    return runClean(await HudiTable.open(storage), {
      config: cleanConfigFromProperties(new Map(Object.entries(props))),
      lock: new StorageLockProvider(storage),
    });
  }

  before(async () => {
    hudi = await startHudi();
    // Procedures build their write client from the session's hoodie.* settings: keep the metadata table off.
    await hudi.sql(`SET ${NO_MDT}`);
    source = join(tempDir('clean-source-'), 'clean_src');
    await hudi.write(source, {
      schema: SCHEMA,
      rows: [row(1, 1, 'a'), row(2, 1, 'a'), row(3, 1, 'b'), row(4, 1, 'b'), row(5, 1, 'c'), row(6, 1, 'c')],
      options: options('insert'),
    });
    await hudi.write(source, { schema: SCHEMA, rows: [row(1, 2, 'a'), row(3, 2, 'b')], options: options('upsert') });
    await hudi.sql(`CREATE TABLE clean_src USING hudi LOCATION '${source}'`);
    const commits = await hudi.sql(`CALL show_commits(table => 'clean_src', limit => 10)`);
    // A savepoint of the second commit keeps its files (superseded below) through any clean.
    await hudi.sql(`CALL create_savepoint(table => 'clean_src', commit_time => '${String(commits.rows[0]!['commit_time'])}')`);
    await hudi.write(source, { schema: SCHEMA, rows: [row(1, 3, 'a'), row(5, 3, 'c')], options: options('upsert') });
    await hudi.sql(`CALL run_clustering(table => 'clean_src', op => 'scheduleAndExecute', options => '${NO_MDT}')`);
    await hudi.write(source, { schema: SCHEMA, rows: [row(7, 1, 'd'), row(8, 1, 'd')], options: options('insert') });
    await hudi.write(source, { schema: SCHEMA, rows: [row(1, 4, 'a'), row(3, 4, 'b')], options: options('upsert') });
    // Every file group of partition d replaced: a clean past it removes the partition.
    await hudi.write(source, {
      schema: SCHEMA,
      rows: [row(7, 1, 'd')],
      options: options('delete_partition', { 'hoodie.datasource.write.partitions.to.delete': 'd' }),
    });
    await hudi.write(source, { schema: SCHEMA, rows: [row(1, 5, 'a'), row(6, 5, 'c')], options: options('upsert') });
    await hudi.write(source, { schema: SCHEMA, rows: [row(2, 6, 'a')], options: options('upsert') });
    assert.equal(
      readFileSync(join(source, '.hoodie', 'hoodie.properties'), 'utf8').match(/^hoodie\.table\.metadata\.partitions=(.*)$/m)?.[1] ?? '',
      '',
      'no metadata table',
    );
    rowsBefore = canonicalRows((await hudi.read(source, { options: { 'hoodie.metadata.enable': 'false' } })).rows);
  });

  after(async () => {
    await hudi?.close();
  });

  const policies: { name: string; call: string; props: Record<string, string> }[] = [
    {
      name: 'KEEP_LATEST_COMMITS, 2 retained',
      call: `clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => 2`,
      props: { 'hoodie.cleaner.policy': 'KEEP_LATEST_COMMITS', 'hoodie.cleaner.commits.retained': '2' },
    },
    {
      name: 'KEEP_LATEST_FILE_VERSIONS, 1 retained',
      call: `clean_policy => 'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1`,
      props: { 'hoodie.cleaner.policy': 'KEEP_LATEST_FILE_VERSIONS', 'hoodie.cleaner.fileversions.retained': '1' },
    },
  ];
  for (const policy of policies) {
    it(`${policy.name}: the same files remain, the plans and the clean metadata agree, the rows read the same`, async () => {
      const spark = await copy(`spark-${policy.props['hoodie.cleaner.policy']}`);
      const mine = await copy(`ours-${policy.props['hoodie.cleaner.policy']}`);
      await hudi.sql(`CALL run_clean(table => '${spark.sqlName}', ${policy.call}, options => '${NO_MDT}')`);
      const result = await ours(mine.path, policy.props);
      assert.equal(result.outcome, 'cleaned');

      const all = baseFilesUnder(source);
      const kept = baseFilesUnder(spark.path);
      assert.ok(kept.length < all.length, `Spark cleaned ${all.length - kept.length} file(s)`);
      assert.deepEqual(baseFilesUnder(mine.path), kept, 'the same files remain');

      // Our decoder reads Spark's files; the plans and metadata agree but for where the copies are and the times.
      const [sparkRequested] = cleanFiles(spark.path, '.clean.requested');
      const sparkPlan = decodeTimelineAvro('cleanerPlan', readFileSync(join(spark.path, '.hoodie', sparkRequested!)), sparkRequested!);
      const sparkInflight = decodeTimelineAvro(
        'cleanerPlan',
        readFileSync(join(spark.path, '.hoodie', sparkRequested!.replace('.requested', '.inflight'))),
        'inflight',
      );
      assert.deepEqual(sparkInflight, sparkPlan);
      const plan = result.clean!.plan;
      assert.deepEqual(
        [
          plan.policy,
          plan.earliestInstantToRetain,
          plan.lastCompletedCommitTimestamp,
          plan.version,
          plan.extraMetadata,
          [...(plan.partitionsToBeDeleted ?? [])].sort(),
          plan.filesToBeDeletedPerPartition,
        ],
        [
          sparkPlan.policy,
          sparkPlan.earliestInstantToRetain,
          sparkPlan.lastCompletedCommitTimestamp,
          sparkPlan.version,
          sparkPlan.extraMetadata,
          [...(sparkPlan.partitionsToBeDeleted ?? [])].sort(),
          sparkPlan.filesToBeDeletedPerPartition,
        ],
      );
      assert.deepEqual(cleanerPlanFiles(plan), cleanerPlanFiles(sparkPlan));
      assert.equal(existsSync(join(mine.path, 'd')), existsSync(join(spark.path, 'd')), 'partition d: gone from both or from neither');
      const [sparkClean] = cleanFiles(spark.path, '.clean');
      const sparkMetadata = decodeTimelineAvro('cleanMetadata', readFileSync(join(spark.path, '.hoodie', sparkClean!)), sparkClean!);
      const metadata = result.clean!.metadata;
      assert.deepEqual(
        [
          metadata.totalFilesDeleted,
          metadata.earliestCommitToRetain,
          metadata.lastCompletedCommitTimestamp,
          metadata.version,
          metadata.extraMetadata,
          metadata.bootstrapPartitionMetadata,
        ],
        [
          sparkMetadata.totalFilesDeleted,
          sparkMetadata.earliestCommitToRetain,
          sparkMetadata.lastCompletedCommitTimestamp,
          sparkMetadata.version,
          sparkMetadata.extraMetadata,
          sparkMetadata.bootstrapPartitionMetadata,
        ],
      );
      assert.deepEqual(metadataFiles(metadata), metadataFiles(sparkMetadata));

      const readOptions = { options: { 'hoodie.metadata.enable': 'false' } };
      assert.deepEqual(canonicalRows((await hudi.read(mine.path, readOptions)).rows), rowsBefore, 'Spark reads the same rows from our copy');
      assert.deepEqual(canonicalRows((await hudi.read(spark.path, readOptions)).rows), rowsBefore, 'and from its own');
      const snapshot = await readSnapshot(await HudiTable.open(new LocalStorage(mine.path)), { includeMetaFields: true });
      assert.deepEqual(canonicalRows(snapshot.rows), rowsBefore, 'we read the same rows');
    });
  }

  it('a clean of ours killed before it completed: Spark reads the same rows, and its next write finishes our plan', async () => {
    const mine = await copy('ours-killed');
    const inner = new LocalStorage(mine.path);
    // Calls: requested, inflight, the deletes, the completed file. Die at the last: files gone, no T.clean.
    await assert.rejects(
      runClean(await HudiTable.open(new CrashingStorage(inner, 4)), {
        config: cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '2']])),
        lock: new StorageLockProvider(inner),
      }),
      SimulatedCrash,
    );
    const [pending] = readdirSync(join(mine.path, '.hoodie')).filter((name) => name.endsWith('.clean.inflight'));
    assert.ok(pending !== undefined && cleanFiles(mine.path, '.clean').length === 0);
    const readOptions = { options: { 'hoodie.metadata.enable': 'false' } };
    assert.deepEqual(canonicalRows((await hudi.read(mine.path, readOptions)).rows), rowsBefore);
    await hudi.write(mine.path, {
      schema: SCHEMA,
      rows: [row(4, 7, 'b')],
      options: options('upsert', { 'hoodie.clean.automatic': 'true', 'hoodie.cleaner.commits.retained': '2' }),
    });
    const instant = pending!.slice(0, pending!.indexOf('.'));
    assert.ok(cleanFiles(mine.path, '.clean').includes(`${instant}.clean`), 'Spark completed our clean from its plan');
    assert.deepEqual(
      readdirSync(join(mine.path, '.hoodie'))
        .filter((name) => name.endsWith('.clean.inflight') || name.endsWith('.clean.requested'))
        .filter((name) => !readdirSync(join(mine.path, '.hoodie')).includes(name.replace(/\.(inflight|requested)$/, ''))),
      [],
    );
    const expected = canonicalRows((await hudi.read(mine.path, readOptions)).rows);
    assert.deepEqual(canonicalRows((await readSnapshot(await HudiTable.open(inner), { includeMetaFields: true })).rows), expected);
  });

  it('Spark keeps writing to a table we cleaned, its automatic cleaner planning from our clean', async () => {
    const mine = await copy('ours-then-spark');
    const first = await ours(mine.path, { 'hoodie.cleaner.commits.retained': '2' });
    assert.equal(first.outcome, 'cleaned');
    await hudi.write(mine.path, {
      schema: SCHEMA,
      rows: [row(1, 7, 'a'), row(3, 7, 'b')],
      options: options('upsert', { 'hoodie.clean.automatic': 'true', 'hoodie.cleaner.commits.retained': '2' }),
    });
    const sparkCleans = cleanFiles(mine.path, '.clean');
    assert.equal(sparkCleans.length, 2, 'Spark cleaned after its commit');
    const sparkMetadata = decodeTimelineAvro('cleanMetadata', readFileSync(join(mine.path, '.hoodie', sparkCleans[1]!)), sparkCleans[1]!);
    assert.ok(sparkMetadata.totalFilesDeleted > 0, 'and deleted what our clean retained and is now out of retention');
    const expected = canonicalRows((await hudi.read(mine.path, { options: { 'hoodie.metadata.enable': 'false' } })).rows);
    const table = await HudiTable.open(new LocalStorage(mine.path));
    assert.deepEqual(canonicalRows((await readSnapshot(table, { includeMetaFields: true })).rows), expected);
    // Our planner on the table Spark just cleaned: nothing more with the same retention.
    const planning = await planClean(table, cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '2']])));
    assert.equal(planning.scope.kind, 'incremental');
    assert.equal(planning.plan, undefined);
  });
});
