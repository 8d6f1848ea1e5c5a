/**
 * Our HudiStorageLockProvider beside Hudi 1.1.1's own StorageBasedLockProvider, on one table on the local stack's S3
 * (moto, which honours If-Match and If-None-Match on PutObject), both selected by hoodie.write.lock.provider:
 * - each side's held lock keeps the other out, and is taken once released (Hudi's provider driven from the JVM);
 * - Spark writers, our writer and our clustering commit concurrently to one copy-on-write table with the metadata
 *   table on, each through its own provider, then our upsert loses a certain conflict to Spark's: every commit that
 *   succeeded is read exactly once by Spark and by us, a write that failed failed as a write conflict and left
 *   nothing visible, and the metadata table lists exactly the committed files.
 * Hudi's S3 client (hudi-aws 1.x) is not published, and Hudi picks it by the table's scheme, so the JVM gets a
 * test-only client of that class name on the AWS SDK v1 (test/hudi/storage-lock-client/), compiled here with javac.
 * Spark writes: one insert and four upserts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { ConflictError } from '../../lib/errors.js';
import { HUDI_LOCK_FILE, HudiStorageLockProvider, lockProviderFor, parseLockData, STORAGE_BASED_LOCK_PROVIDER } from '../../lib/lock/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { canonicalRows, type HudiHarness, hudiToolchain, type JavaExpression, startHudi } from '../helpers/hudi.js';
import { ourWrite, parquetFromRows, project } from '../helpers/interop-writer.js';
import { assertCommittedRowsRead, LOCK_ROUND_COLUMNS, lockRoundRow, lockRoundTableOptions, writeConcurrently } from '../helpers/lock-rounds.js';
import { metadata1xRecords } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';
import { s3TablePath } from '../helpers/s3.js';

const COLUMNS = LOCK_ROUND_COLUMNS;
const SPARK_SCHEMA = 'id BIGINT, name STRING, seq BIGINT, dt STRING';
/** Both sides read these: Hudi's provider and keys; a lease renewed several times during a Spark write. */
const LOCK = {
  'hoodie.write.lock.provider': STORAGE_BASED_LOCK_PROVIDER,
  'hoodie.write.lock.storage.validity.timeout.secs': '60',
  'hoodie.write.lock.storage.renew.interval.secs': '5',
};
const MILLISECONDS: JavaExpression = { static: 'java.util.concurrent.TimeUnit.valueOf', args: ['MILLISECONDS'] };

/** The test-only S3StorageLockClient, compiled against the 1.1.1 bundle and the SDK v1, as a jar. */
function storageLockClientJar(): string {
  const { jars } = hudiToolchain();
  const out = tempDir('storage-lock-client-');
  const source = join(REPO_ROOT, 'test/hudi/storage-lock-client/org/apache/hudi/aws/transaction/lock/S3StorageLockClient.java');
  const classpath = [jars['hudi-spark-bundle-1.1.1']!, jars['aws-java-sdk-bundle']!].join(':');
  execFileSync('javac', ['--release', '8', '-nowarn', '-cp', classpath, '-d', join(out, 'classes'), source], { stdio: 'pipe' });
  const jar = join(out, 'hudi-test-s3-storage-lock-client.jar');
  execFileSync('jar', ['cf', jar, '-C', join(out, 'classes'), '.'], { stdio: 'pipe' });
  return jar;
}

/** Hudi's StorageBasedLockProvider in the harness's JVM, kept under `name`, for the table at `basePath`. */
async function hudiLockProvider(hudi: HudiHarness, name: string, basePath: string): Promise<void> {
  await hudi.jvmEval({ keep: `${name}-props`, value: { new: 'org.apache.hudi.common.config.TypedProperties' } });
  for (const [key, value] of Object.entries({ ...LOCK, 'hoodie.base.path': basePath })) {
    await hudi.jvmEval({ call: 'setProperty', on: { kept: `${name}-props` }, args: [key, value] });
  }
  const configuration: JavaExpression = { new: 'org.apache.hudi.common.config.LockConfiguration', args: [{ kept: `${name}-props` }] };
  await hudi.jvmEval({ keep: name, value: { new: STORAGE_BASED_LOCK_PROVIDER, args: [configuration, null] } });
}

async function hudiTryLock(hudi: HudiHarness, name: string, waitMs: number): Promise<boolean> {
  return (await hudi.jvmEval({ call: 'tryLock', on: { kept: name }, args: [{ long: String(waitMs) }, MILLISECONDS] })) === true;
}

const row = lockRoundRow;

describe("our storage lock beside Hudi 1.1.1's StorageBasedLockProvider on S3", { timeout: 1_800_000 }, () => {
  let hudi: HudiHarness;
  const dir = tempDir('interop-storage-lock-');
  before(async () => {
    hudi = await startHudi({ hudiVersion: '1.1.1', s3: true, extraJars: [storageLockClientJar()] });
  });
  after(async () => {
    await hudi?.close();
  });

  it("each side's held lock keeps the other out; a released one is taken", async (t) => {
    const started = Date.now();
    const step = (what: string) => t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
    const table = await s3TablePath('storage-lock-exclusion');
    const storage = openStorage(table);
    await hudiLockProvider(hudi, 'hudi-lock', table.replace(/^s3:/, 's3a:'));
    const ours = lockProviderFor(new Map(Object.entries(LOCK)), 'exclusion', storage, { ownerName: 'ours' });
    assert.ok(ours instanceof HudiStorageLockProvider);

    assert.equal(await hudiTryLock(hudi, 'hudi-lock', 1000), true, "Hudi's provider takes the free lock");
    const written = await storage.get(HUDI_LOCK_FILE);
    const hudis = parseLockData(written, HUDI_LOCK_FILE);
    assert.equal(hudis.expired, false, 'Hudi wrote the lock file where and as we read it');
    await assert.rejects(ours.acquire({ waitMs: 3000 }), ConflictError, "ours refuses while Hudi's holder's lease runs");
    await hudi.jvmEval({ call: 'unlock', on: { kept: 'hudi-lock' } });
    const released = parseLockData(await storage.get(HUDI_LOCK_FILE), HUDI_LOCK_FILE);
    assert.deepEqual([released.expired, released.validUntil, released.owner], [true, hudis.validUntil, hudis.owner], "Hudi's release, as we release");
    step("Hudi's provider held the lock and released it");

    const lease = await ours.acquire({ waitMs: 5000 });
    assert.equal(await hudiTryLock(hudi, 'hudi-lock', 2500), false, "Hudi's provider does not take the lock we hold");
    step('ours held the lock');
    await lease.assertHeld();
    await lease.release();
    assert.equal(await hudiTryLock(hudi, 'hudi-lock', 1000), true, "Hudi's provider takes the lock we released");
    assert.equal(parseLockData(await storage.get(HUDI_LOCK_FILE), HUDI_LOCK_FILE).expired, false);
    await hudi.jvmEval({ call: 'close', on: { kept: 'hudi-lock' } });
    const again = await ours.acquire({ waitMs: 5000 });
    await again.release();
  });

  it('Spark writers, our writer and our clustering commit concurrently through the two providers: nothing lost, nothing twice', async (t) => {
    const name = 'concurrent';
    const table = await s3TablePath('storage-lock-concurrent');
    const storage = openStorage(table);
    const options = {
      ...lockRoundTableOptions(name),
      // Hudi 1.1's Spark writers otherwise write the metadata table while their write runs, outside the lock, which
      // our metadata writer refuses (a pending deltacommit with a fresh heartbeat): not a matter of the lock.
      'hoodie.metadata.streaming.write.enabled': 'false',
      ...LOCK,
    };
    // Each of our rounds in a new file group (no small-file packing), so our clustering has files to group.
    const ours = new Map(Object.entries({ ...options, 'hoodie.parquet.small.file.limit': '0' }));
    const expected = new Map<number, Row>();
    const sparkWrite = async (rows: Row[], operation: string): Promise<void> => {
      await hudi.write(table, { schema: SPARK_SCHEMA, rows, options: { ...options, 'hoodie.datasource.write.operation': operation } });
      for (const each of rows) expected.set(Number(each['id']), each);
    };
    await sparkWrite(
      [1, 2, 3, 4].map((id) => row(id, 'spark', 0)),
      'insert',
    );

    // Our clustering service, of our partition only (Spark's writes go on in theirs), under the same lock.
    let clustered: string | undefined;
    const clusterOurPartition = async (): Promise<string | undefined> => {
      const properties = new Map([...ours, ['hoodie.clustering.plan.strategy.partition.selected', 'ours']]);
      const opened = await HudiTable.open(storage, { mode: 'clustering' });
      const engine = await openParquetEngine();
      try {
        const result = await runClusteringJob(opened, {
          mode: 'scheduleAndExecute',
          config: resolveClusteringConfig({ file: { location: 'test properties', properties } }).config,
          force: true,
          lock: lockProviderFor(new Map([...opened.config.properties, ...properties]), name, storage),
          engine,
          tempDir: tempDir('storage-lock-clustering-'),
          properties,
        });
        return result.instantTime;
      } finally {
        await engine.close();
      }
    };

    const rounds = { sparkRounds: 3, ourRounds: 6 };
    const failures = await writeConcurrently(
      {
        ...rounds,
        sparkWrite: (rows) => sparkWrite(rows, 'upsert'),
        ourWrite: async (rows) => {
          await ourWrite(table, 'upsert', await parquetFromRows(dir, rows, COLUMNS), ours);
        },
        afterOurRound: async (round) => {
          if (round === 3) clustered = await clusterOurPartition();
        },
      },
      expected,
    );

    // A conflict, made certain: our upsert of Spark's row 1 has written its files when Spark commits an update of the
    // same file group; at our commit, under the shared lock, Hudi's OCC rule (a file group changed by a commit that
    // completed after this write started) refuses ours, and Spark's update stands.
    await assert.rejects(
      ourWrite(table, 'upsert', await parquetFromRows(dir, [{ ...row(1, 'ours', 10), dt: 'spark' }], COLUMNS), ours, {
        afterDataFiles: () => sparkWrite([row(1, 'spark', 10)], 'upsert'),
      }),
      (error: unknown) => error instanceof ConflictError && /conflicts with commit \d{17} on file group/.test(error.message),
    );

    const columns = Object.keys(COLUMNS);
    const sparkRows = await assertCommittedRowsRead(hudi, table, expected, failures, rounds.sparkRounds + rounds.ourRounds);

    // Who committed when (each writer writes its own partition): the run's interleaving, for the log.
    const opened = await HudiTable.open(storage);
    const commits: string[] = [];
    for (const instant of opened.timeline.completed().filter((each) => each.action === 'commit' || each.action === 'replacecommit')) {
      const partitions = Object.keys((await readCommitMetadata(storage, instant, opened.layout)).partitionToWriteStats).join('+');
      commits.push(instant.action === 'commit' ? partitions : `${instant.action} of ${partitions}`);
    }
    assert.ok(clustered !== undefined && opened.timeline.completed().some((each) => each.time === clustered), 'our clustering committed');
    assert.ok(commits.includes('replacecommit of ours'), 'it rewrote our partition only');
    t.diagnostic(`commits in instant order: ${commits.join(', ')}; failed: ${failures.join(', ') || 'none'}`);
    assert.equal(commits.filter((each) => each === 'ours').length, rounds.ourRounds - failures.filter((each) => each.startsWith('our')).length);

    const lock = parseLockData(await storage.get(HUDI_LOCK_FILE), HUDI_LOCK_FILE);
    assert.equal(lock.expired, true, 'the last holder released the lock');
    // Two writers committing at once would have lost one's metadata-table update: Spark lists files through the
    // metadata table by default, so compare with a listing of storage, and the files partition with storage.
    const withoutMetadata = canonicalRows(project((await hudi.read(table, { meta: false, options: { 'hoodie.metadata.enable': 'false' } })).rows, columns));
    assert.deepEqual(withoutMetadata, sparkRows, 'Spark reads the same with and without the metadata table');
    const completed = new Set(opened.timeline.completed().map((instant) => instant.time));
    const listed = (await metadata1xRecords(storage)).flatMap((record) =>
      record.type === 2 ? [...record.files].filter(([, info]) => !info.isDeleted).map(([file]) => `${record.key}/${file}`) : [],
    );
    const stored = (await storage.listRecursive(''))
      .map((object) => object.path)
      .filter((path) => !path.startsWith('.hoodie/') && completed.has(/_(\d{17})\.parquet$/.exec(path)?.[1] ?? ''));
    assert.deepEqual(listed.sort(), stored.sort(), "the metadata table's files partition lists every committed base file, and only those");
  });
});
