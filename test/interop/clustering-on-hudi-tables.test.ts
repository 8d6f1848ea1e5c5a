/**
 * Our clustering on tables real Hudi (0.15 on Spark 3.5.1) wrote, with the metadata table off on every Spark write,
 * judged by Spark, by hudi-rs and by our reader:
 * - linear, z-order and hilbert clusterings (one and several output files per group) move rows to new files and
 *   change nothing else a reader sees;
 * - Spark upserts find our records in our files (the bloom index reads our footers' bloom filters and key ranges);
 * - Spark's clean and archival run past our replacecommits and every reader still agrees;
 * - a failed clustering of ours, left pending, is executed by Hudi's run_clustering or rolled back by Hudi's
 *   rollback_to_instant (audit F2: Hudi's marker-based rollback parses every file in the marker folder).
 *
 * One Spark session for the file; the tables are tiny and copied rather than rewritten, to keep Spark calls few.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import type { Row } from '../../lib/engine/row-format.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { canonicalRows, type HudiHarness, type RowSet, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';
import {
  assertFileNamesMatchOutputs,
  baseFiles,
  type ClusterCliResult,
  clusterWithCli,
  commitJson,
  SCHEMA,
  sparkOptions,
  tableRow,
  timelineFiles,
  withoutFileName,
  writeSmallFiles,
} from './clustering-helpers.js';

const PARTITIONS = ['2024-01-01', '2024-01-02', '2024-01-03'];
const ROWS = 24;
/** What every Spark write after our clustering sets: Hudi cleans and archives as soon as it can. */
const CLEAN_AND_ARCHIVE = {
  'hoodie.clean.automatic': 'true',
  'hoodie.cleaner.commits.retained': '1',
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
};

let hudi: HudiHarness;
/** The Spark-written table, never changed: each test clusters a copy. */
let base: string;
let sparkBefore: RowSet;

async function ourRows(path: string): Promise<Row[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true })).rows;
}

function copyTable(from: string, name: string): string {
  const to = join(tempDir(`interop-${name}-`), name);
  cpSync(from, to, { recursive: true });
  return to;
}

/** Spark, hudi-rs and our reader return the same rows, every column included; returns Spark's. */
async function readAlike(path: string): Promise<Row[]> {
  const spark = await hudi.read(path);
  assert.deepEqual(canonicalRows((await hudi.hudiRsRead(path)).rows), canonicalRows(spark.rows), 'hudi-rs reads what Spark reads');
  assert.deepEqual(canonicalRows(await ourRows(path)), canonicalRows(spark.rows), 'our reader reads what Spark reads');
  return spark.rows;
}

before(async () => {
  hudi = await startHudi();
  base = join(tempDir('interop-base-'), 'clustered');
  // 4 batches of 6 rows over 3 partitions: 4 small base files (2 rows each) per partition.
  assert.equal(await writeSmallFiles(hudi, base, PARTITIONS, 4, 6), ROWS);
  sparkBefore = await hudi.read(base);
  assert.equal(sparkBefore.rows.length, ROWS);
  assert.deepEqual(canonicalRows((await hudi.hudiRsRead(base)).rows), canonicalRows(sparkBefore.rows), 'hudi-rs reads the Spark-written table as Spark does');
});

after(async () => {
  await hudi?.close();
});

describe('our clustering of a Spark-written table (metadata table off)', () => {
  let table: string;
  /** The table right after our clusterings, before any Spark write cleaned or archived. */
  let uncleaned: string;
  const clusterings: ClusterCliResult[] = [];
  const ourOutputFileIds = new Set<string>();
  /** Per clustering: partition → the Spark file groups it replaced. */
  const replaced: Record<string, string[]>[] = [];

  it('linear, z-order and hilbert, one and several output files per group: Spark and hudi-rs read the rows they read before', async () => {
    table = copyTable(base, 'clustered');
    // Each partition holds 4 Spark base files of ~436 KB (the bloom filter is most of it).
    clusterings.push(
      clusterWithCli(table, {
        'hoodie.clustering.plan.strategy.partition.selected': PARTITIONS[0]!,
        'hoodie.layout.optimize.strategy': 'linear',
        'hoodie.clustering.plan.strategy.sort.columns': 'score,qty',
      }),
    );
    clusterings.push(
      clusterWithCli(table, {
        'hoodie.clustering.plan.strategy.partition.selected': PARTITIONS[1]!,
        'hoodie.layout.optimize.strategy': 'z-order',
        'hoodie.clustering.plan.strategy.sort.columns': 'score,ts',
        'hoodie.clustering.plan.strategy.target.file.max.bytes': '600000',
      }),
    );
    clusterings.push(
      clusterWithCli(table, {
        'hoodie.clustering.plan.partition.filter.mode': 'SELECTED_PARTITIONS',
        'hoodie.clustering.plan.strategy.cluster.begin.partition': PARTITIONS[2]!,
        'hoodie.clustering.plan.strategy.cluster.end.partition': PARTITIONS[2]!,
        'hoodie.layout.optimize.strategy': 'hilbert',
        'hoodie.clustering.plan.strategy.sort.columns': 'qty,score',
        'hoodie.clustering.plan.strategy.small.file.limit': '1000000',
        'hoodie.clustering.plan.strategy.max.bytes.per.group': '900000',
        'hoodie.clustering.plan.strategy.target.file.max.bytes': '500000',
      }),
    );
    const shapes = clusterings.map((run) => run.groups.map((group) => [group.partitionPath, group.inputFiles, group.numOutputFileGroups]));
    assert.deepEqual(shapes, [
      [[PARTITIONS[0], 4, 1]],
      [[PARTITIONS[1], 4, 3]],
      [
        [PARTITIONS[2], 2, 2],
        [PARTITIONS[2], 2, 2],
      ],
    ]);

    const storage = openStorage(table);
    const rows = await readAlike(table);
    // Only _hoodie_file_name changes: _hoodie_commit_time and _hoodie_commit_seqno stay the records' own, as with
    // Hudi's hoodie.clustering.preserve.commit.metadata=true default (HoodieRowCreateHandle keeps both; the
    // run_clustering test below shows Hudi's executor doing the same to these rows).
    assert.deepEqual(withoutFileName(rows), withoutFileName(sparkBefore.rows));
    for (const [index, run] of clusterings.entries()) {
      const commit = await commitJson(storage, run.instantTime, 'replacecommit');
      assert.equal(commit.operationType, 'CLUSTER');
      assertFileNamesMatchOutputs(rows, commit, [PARTITIONS[index]!]);
      for (const stat of Object.values(commit.partitionToWriteStats).flat()) ourOutputFileIds.add(stat.fileId);
      replaced.push(commit.partitionToReplaceFileIds ?? {});
    }
    assert.equal(ourOutputFileIds.size, 1 + 3 + 4);
    uncleaned = copyTable(table, 'uncleaned');
  });

  it('a Spark upsert of every record through the bloom index updates them in our files: no duplicates', async () => {
    // Hudi 0.15's Spark default is the SIMPLE index (it reads keys from the files); BLOOM is the one that trusts our
    // footers: the bloom filter of record keys and hoodie_min/max_record_key.
    const updates = Array.from({ length: ROWS }, (_, index) => tableRow(index + 1, PARTITIONS, 1));
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [...updates, tableRow(ROWS + 1, PARTITIONS)],
      options: sparkOptions({ 'hoodie.datasource.write.operation': 'upsert', 'hoodie.index.type': 'BLOOM', ...CLEAN_AND_ARCHIVE }),
    });
    const storage = openStorage(table);
    const upsert = (await timelineFiles(storage))
      .filter((name) => name.endsWith('.commit'))
      .at(-1)!
      .slice(0, 17);
    const stats = Object.values((await commitJson(storage, upsert, 'commit')).partitionToWriteStats).flat();
    assert.equal(
      stats.reduce((total, stat) => total + stat.numUpdateWrites, 0),
      ROWS,
      'every key was found in a base file',
    );
    assert.ok(
      stats.filter((stat) => stat.numUpdateWrites > 0).every((stat) => ourOutputFileIds.has(stat.fileId)),
      'the updates went into our file groups',
    );

    const rows = await readAlike(table);
    assert.equal(rows.length, ROWS + 1);
    assert.equal(new Set(rows.map((row) => row['id'])).size, ROWS + 1);
    assert.ok(rows.every((row) => row['name'] === `n${row['id'] as number}-v${row['id'] === ROWS + 1 ? 0 : 1}`));
  });

  it("Spark's clean and archival run past our replacecommits; Spark, hudi-rs and our reader still agree", async () => {
    const storage = openStorage(table);
    // Two more upserts (0.15's default index) so that the archiver, keeping 2 commits, reaches past the last replacecommit.
    for (const [version, ids] of [
      [2, [1, 2, 3, 4, 5, 6]],
      [3, [7, 8, 9, 10, 11, 12]],
    ] as const) {
      await hudi.write(table, {
        schema: SCHEMA,
        rows: ids.map((id) => tableRow(id, PARTITIONS, version)),
        options: sparkOptions({ 'hoodie.datasource.write.operation': 'upsert', ...CLEAN_AND_ARCHIVE }),
      });
    }
    const active = await timelineFiles(storage);
    for (const run of clusterings) assert.ok(!active.some((name) => name.startsWith(run.instantTime)), `${run.instantTime} was archived`);
    assert.ok(
      active.some((name) => name.endsWith('.clean')),
      'Spark cleaned',
    );
    assert.ok(
      (await storage.listDir('.hoodie/archived')).files.some((file) => /\/\.commits_\.archive\.\d+_/.test(file.path)),
      'an archive file holds the archived instants',
    );
    // The clean deleted every file of the groups our clusterings replaced, so nothing is left for a view to hide.
    for (const byPartition of replaced) {
      for (const [partition, fileIds] of Object.entries(byPartition)) {
        const left = (await baseFiles(storage, partition)).filter((name) => fileIds.some((fileId) => name.startsWith(`${fileId}_`)));
        assert.deepEqual(left, [], `replaced files left in ${partition}`);
      }
    }

    const rows = await readAlike(table);
    const version = (id: number): number => (id <= 6 ? 2 : id <= 12 ? 3 : id <= ROWS ? 1 : 0);
    assert.deepEqual(
      rows.map((row) => [row['id'], row['name']]).sort((a, b) => (a[0] as number) - (b[0] as number)),
      Array.from({ length: ROWS + 1 }, (_, index) => [index + 1, `n${index + 1}-v${version(index + 1)}`]),
    );
    // Hudi reads our archived replacecommits back (HoodieArchivedTimeline, via MetadataConversionUtils' entries).
    await hudi.sql(`CREATE TABLE archived_clustering USING hudi LOCATION '${table}'`);
    // Without start_ts/end_ts it lists only instants 10 to 1 days old; the range excludes start_ts.
    const archived = await hudi.sql(
      `CALL show_archived_commits(table => 'archived_clustering', limit => 50, start_ts => '0', end_ts => '${clusterings.at(-1)!.instantTime}')`,
    );
    const byInstant = new Map(archived.rows.map((row) => [row['commit_time'], row]));
    for (const run of clusterings) {
      const entry = byInstant.get(run.instantTime);
      assert.ok(entry, `Hudi lists ${run.instantTime} as archived: ${JSON.stringify(archived.rows)}`);
      const outputs = run.groups.reduce((total, group) => total + group.numOutputFileGroups, 0);
      assert.deepEqual(
        [entry['total_records_written'], entry['total_files_added']],
        [ROWS / PARTITIONS.length, outputs],
        `${run.instantTime}'s stats as Hudi read them back`,
      );
    }
  });

  it('Hudi does not archive our replacecommits while the files they replaced are not cleaned', async () => {
    // If a replacecommit were archived with its replaced files still there, any view built from the active timeline
    // (Hudi's and ours) would show those file groups again. Hudi's archiver stops at the oldest replacecommit whose
    // replaced files are not cleaned (ClusteringUtils.getOldestInstantToRetainForClustering), so it cannot happen.
    const result = await hudi.sql(`CALL archive_commits(path => '${uncleaned}', min_commits => 2, max_commits => 3, retain_commits => 1)`);
    assert.deepEqual(result.rows, [{ result: 0 }]);
    const active = await timelineFiles(openStorage(uncleaned));
    assert.ok(!active.some((name) => name.endsWith('.commit')), 'the Spark inserts before our clusterings were archived');
    for (const run of clusterings) assert.ok(active.includes(`${run.instantTime}.replacecommit`), `${run.instantTime} stays active`);
    assert.deepEqual(withoutFileName(await readAlike(uncleaned)), withoutFileName(sparkBefore.rows));
  });
});

/** A Parquet engine whose copySorted fails once `state.failing` is set: a group that dies midway. */
function failingEngine(engine: ParquetEngine, state: { failing: boolean }): ParquetEngine {
  return new Proxy(engine, {
    get(target, property, receiver) {
      if (property === 'copySorted' && state.failing) return () => Promise.reject(new Error('simulated Lambda timeout'));
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('our failed clustering left pending, finished or rolled back by Hudi (audit F2)', () => {
  let pending: string;
  /** A copy of `pending` for the rollback (the plan names `pending`'s files by absolute path, so Hudi executes it there). */
  let pendingCopy: string;
  let instantTime: string;
  /** Files group 0 uploaded before group 1 failed. */
  let attemptFiles: string[];

  before(async () => {
    pending = copyTable(base, 'pending');
    const storage = openStorage(pending);
    const config = resolveClusteringConfig({
      event: {
        'hoodie.clustering.plan.strategy.partition.selected': PARTITIONS[0]!,
        'hoodie.layout.optimize.strategy': 'z-order',
        'hoodie.clustering.plan.strategy.sort.columns': 'score,ts',
        'hoodie.clustering.plan.strategy.max.bytes.per.group': '900000',
        'hoodie.clustering.plan.strategy.target.file.max.bytes': '500000',
      },
    }).config;
    const engine = await openParquetEngine();
    const state = { failing: false };
    try {
      await assert.rejects(
        runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
          mode: 'scheduleAndExecute',
          config,
          lock: new StorageLockProvider(storage, { waitMs: 10_000 }),
          engine: failingEngine(engine, state),
          tempDir: tempDir(),
          // Group 0 of 2 finishes; group 1 dies.
          onProgress: (line) => {
            if (/^group 1\/2 done/.test(line)) state.failing = true;
          },
        }),
        /simulated Lambda timeout/,
      );
    } finally {
      await engine.close();
    }
    const timeline = await timelineFiles(storage);
    const pendingFiles = timeline.filter((name) => name.includes('.replacecommit'));
    instantTime = pendingFiles[0]!.slice(0, 17);
    assert.deepEqual(pendingFiles, [`${instantTime}.replacecommit.inflight`, `${instantTime}.replacecommit.requested`]);
    attemptFiles = (await baseFiles(storage, PARTITIONS[0]!)).filter((name) => name.endsWith(`_${instantTime}.parquet`));
    assert.equal(attemptFiles.length, 2, 'group 0 uploaded its two files');
    const markers = (await storage.listRecursive(`.hoodie/.temp/${instantTime}`)).map((object) => object.path.slice(object.path.lastIndexOf('/') + 1));
    assert.deepEqual(
      markers.sort(),
      attemptFiles.map((name) => `${name}.marker.CREATE`).sort(),
      'the marker folder holds one marker per uploaded file and nothing else',
    );
    pendingCopy = copyTable(pending, 'rolledback');
  });

  it("Hudi's run_clustering rolls back our attempt and executes our plan: the rows Spark read before", async () => {
    const table = pending;
    const result = await hudi.sql(
      `CALL run_clustering(path => '${table}', instants => '${instantTime}', op => 'execute', options => 'hoodie.metadata.enable=false')`,
    );
    assert.deepEqual(
      result.rows.map((row) => [row['timestamp'], row['state']]),
      [[instantTime, 'COMPLETED']],
    );

    const storage = openStorage(table);
    const timeline = await timelineFiles(storage);
    assert.ok(timeline.includes(`${instantTime}.replacecommit`));
    assert.ok(
      timeline.some((name) => name.endsWith('.rollback')),
      'Hudi rolled our inflight attempt back first',
    );
    const files = await baseFiles(storage, PARTITIONS[0]!);
    assert.deepEqual(
      attemptFiles.filter((name) => files.includes(name)),
      [],
      "our attempt's files were deleted by Hudi's marker-based rollback",
    );
    assert.deepEqual(await storage.listRecursive('.hoodie/metadata'), [], 'no metadata table');
    const rows = await readAlike(table);
    // Hudi's executor keeps _hoodie_commit_time and _hoodie_commit_seqno too (the plan's preserveHoodieMetadata).
    assert.deepEqual(withoutFileName(rows), withoutFileName(sparkBefore.rows));
    assertFileNamesMatchOutputs(rows, await commitJson(storage, instantTime, 'replacecommit'), [PARTITIONS[0]!]);
  });

  it("Hudi's rollback_to_instant rolls it back: the table reads as before, and our clustering runs again", async () => {
    const table = pendingCopy;
    await hudi.sql(`CREATE TABLE rolled_back_clustering USING hudi LOCATION '${table}'`);
    const result = await hudi.sql(`CALL rollback_to_instant(table => 'rolled_back_clustering', instant_time => '${instantTime}')`);
    assert.deepEqual(result.rows, [{ rollback_result: true }]);

    const storage = openStorage(table);
    const timeline = await timelineFiles(storage);
    assert.deepEqual(
      timeline.filter((name) => name.startsWith(instantTime)),
      [],
      'the clustering instant is gone',
    );
    assert.ok(timeline.some((name) => name.endsWith('.rollback')));
    assert.deepEqual(
      (await baseFiles(storage, PARTITIONS[0]!)).filter((name) => name.includes(instantTime)),
      [],
      "the attempt's files were deleted",
    );
    assert.deepEqual(canonicalRows(await readAlike(table)), canonicalRows(sparkBefore.rows));

    // Our next clustering plans the same file groups again and completes.
    const again = clusterWithCli(table, {
      'hoodie.clustering.plan.strategy.partition.selected': PARTITIONS[0]!,
      'hoodie.layout.optimize.strategy': 'z-order',
      'hoodie.clustering.plan.strategy.sort.columns': 'score,ts',
    });
    assert.deepEqual(
      again.groups.map((group) => group.inputFiles),
      [4],
    );
    assert.deepEqual(withoutFileName(await readAlike(table)), withoutFileName(sparkBefore.rows));
  });
});
