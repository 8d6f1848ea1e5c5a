/**
 * Rolling back failed writes: tiny tables made by hand from the fixtures (a fixture table plus a simulated failed
 * write: `T.commit.requested`, `T.inflight`, a data file named with T and its marker), rolled back locally and on
 * S3. The rollback files must decode with the official Hudi schemas, the snapshot must not change, and an
 * interrupted rollback must finish on the next run.
 */
import assert from 'node:assert/strict';
import { readFileSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import avro from 'avsc';
import { ConflictError, HudiError, InstantCompletedError } from '../../lib/errors.js';
import type { LockProvider } from '../../lib/lock/port.js';
import { readSnapshot } from '../../lib/read/reader.js';
import {
  heartbeatPath,
  listedFilesOfInstant,
  pendingWriteInstants,
  type RollbackResult,
  rollbackFailedWrites,
  rollbackInflightClustering,
  rollbackInstant,
} from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage, StoredObject } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, encodeTimelineAvro, type HoodieRollbackMetadata, type HoodieRollbackPlan } from '../../lib/timeline/avro-files.js';
import { formatInstantTime, parseInstantTime } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1, timelineLayout2 } from '../../lib/timeline/layout.js';
import { createMarker, deleteMarkerDir, listMarkers, type MarkerType, markerDir } from '../../lib/timeline/markers.js';
import { pendingClusteringPlans } from '../../lib/timeline/queries.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../../lib/timeline/transitions.js';
import { officialAvroType, readWithAvscStreams } from '../helpers/avro-official.js';
import { committedTable, completedWrites, expectedOf, fixtureTable, onlyFileGroup, tempDir } from '../helpers/fixtures.js';
import { requireS3, s3TablePath, uploadTable } from '../helpers/s3.js';
import { clusteringPlanOf } from '../helpers/synthetic-table.js';

/** v6_nonpartitioned: two commits of one file group, four rows. */
const NONPARTITIONED = (() => {
  const expected = expectedOf('v6_nonpartitioned');
  const group = onlyFileGroup(expected, '');
  return { table: 'v6_nonpartitioned' as const, fileId: group.fileId, latestBaseFile: group.files.at(-1)!, latestCommit: completedWrites(expected).at(-1)! };
})();

/** v6_simplekeygen_nonhivestyle: partitions 10, 20, 30. */
const PARTITIONED = (() => {
  const expected = expectedOf('v6_simplekeygen_nonhivestyle');
  const partition10 = onlyFileGroup(expected, '10');
  return {
    table: 'v6_simplekeygen_nonhivestyle' as const,
    partition10FileId: partition10.fileId,
    partition10LatestFile: partition10.files.at(-1)!,
    partition20File: onlyFileGroup(expected, '20').files.at(-1)!,
  };
})();

/** `ms` milliseconds after an instant time. */
function instantAfter(time: string, ms: number): string {
  return formatInstantTime(new Date(parseInstantTime(time)!.getTime() + ms));
}

/**
 * The failed write's instant: just after the fixtures' latest commit, and so, once the fixtures are older than the
 * heartbeat expiry (2 minutes after `npm run fixtures:generate`), long enough ago that its writer counts as dead.
 */
const LATEST_FIXTURE_COMMIT = [NONPARTITIONED.latestCommit, ...completedWrites(expectedOf('v6_simplekeygen_nonhivestyle'))].sort().at(-1)!;
const FAILED = instantAfter(LATEST_FIXTURE_COMMIT, 1);
const NEW_FILE_ID = 'f0e1d2c3-0000-4000-8000-000000000009-0';

/** A lock that is always granted: these tests run one writer at a time. */
const grantingLock: LockProvider = {
  description: 'test lock (always granted)',
  acquire: async () => ({ owner: 'rollback-test', assertHeld: async () => {}, release: async () => {} }),
};

// ---------------------------------------------------------------------------------------------------------------
// Building failed writes by hand

interface FailedWrite {
  readonly time: string;
  /** Data files written, relative to the table root. */
  readonly files: readonly string[];
}

interface FailedFile {
  readonly partitionPath: string;
  readonly fileId: string;
  /** An existing base file whose bytes the failed write "wrote" again. */
  readonly copyOf: string;
  /** The DIRECT marker to create first, as a writer does; none for a writer that died before markers. */
  readonly marker?: MarkerType;
  readonly writeToken?: string;
}

/** Simulate a COW write that died after writing its data files: requested + inflight, no completed file. */
async function simulateFailedCommit(storage: Storage, time: string, files: readonly FailedFile[]): Promise<FailedWrite> {
  await createRequested(storage, TIMELINE_LAYOUT_1, time, 'commit');
  await transitionToInflight(
    storage,
    TIMELINE_LAYOUT_1,
    time,
    'commit',
    JSON.stringify({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' }),
  );
  return { time, files: await writeDataFiles(storage, time, files) };
}

async function writeDataFiles(storage: Storage, time: string, files: readonly FailedFile[]): Promise<string[]> {
  const written: string[] = [];
  for (const file of files) {
    const fileName = `${file.fileId}_${file.writeToken ?? '0-1-1'}_${time}.parquet`;
    if (file.marker !== undefined) await createMarker(storage, time, file.partitionPath, fileName, file.marker);
    const relative = file.partitionPath === '' ? fileName : `${file.partitionPath}/${fileName}`;
    await storage.put(relative, await storage.get(file.copyOf));
    written.push(relative);
  }
  return written;
}

async function exists(storage: Storage, relative: string): Promise<boolean> {
  return (await storage.head(relative)) !== undefined;
}

async function instantFiles(storage: Storage, time: string): Promise<string[]> {
  const { files } = await storage.listDir('.hoodie');
  return files
    .map((f) => f.path.slice(f.path.lastIndexOf('/') + 1))
    .filter((name) => name.startsWith(`${time}.`))
    .sort();
}

type Ids = [number, string][];

async function snapshotIds(storage: Storage): Promise<{ ids: Ids; files: string[] }> {
  const snapshot = await readSnapshot(await HudiTable.open(storage));
  const ids = snapshot.rows.map((row) => [row['id'] as number, row['name'] as string] as [number, string]).sort((a, b) => a[0] - b[0]);
  return { ids, files: [...snapshot.files].sort() };
}

const FOUR_ROWS: Ids = [
  [1, 'Alice'],
  [2, 'Bob'],
  [3, 'Carol'],
  [4, 'Diana'],
];

// ---------------------------------------------------------------------------------------------------------------
// Reading our rollback files with the official Hudi schemas (as test/timeline/avro-timeline.test.ts does)

function officialRollbackTypes(): { plan: avro.Type; metadata: avro.Type } {
  return { plan: officialAvroType('HoodieRollbackPlan'), metadata: officialAvroType('HoodieRollbackMetadata') };
}

/** The writer schema in the header of the `.rollback` file Hudi 0.15 wrote into the v6_rollback fixture. */
async function realHudiMetadataType(): Promise<avro.Type> {
  const table = committedTable('v6_rollback');
  const rollback = expectedOf('v6_rollback').timeline.find((instant) => instant.action === 'rollback')!;
  const read = await readWithAvscStreams(readFileSync(path.join(table, '.hoodie', `${rollback.time}.rollback`)), officialAvroType('HoodieRollbackMetadata'));
  return avro.Type.forSchema(JSON.parse(read.writerSchemaText) as avro.Schema, { wrapUnions: false, registry: {} });
}

/** The three rollback files of `result`: shapes as Hudi writes them, readable by official and real schemas. */
async function assertRollbackFiles(storage: Storage, result: RollbackResult, expected: { action: string; deleted: readonly string[] }): Promise<void> {
  const time = result.rollbackInstantTime;
  assert.deepEqual(await instantFiles(storage, time), [`${time}.rollback`, `${time}.rollback.inflight`, `${time}.rollback.requested`]);
  assert.equal((await storage.head(`.hoodie/${time}.rollback.inflight`))?.size, 0, 'rollback.inflight is 0 bytes');

  const official = officialRollbackTypes();
  const planBytes = await storage.get(`.hoodie/${time}.rollback.requested`);
  const planRead = await readWithAvscStreams(planBytes, official.plan);
  assert.equal(planRead.writerName, 'org.apache.hudi.avro.model.HoodieRollbackPlan');
  assert.deepEqual(planRead.metadataKeys, ['avro.schema'], 'no avro.codec, as Java writes it');
  assert.equal(planRead.records.length, 1);
  const plan = planRead.records[0] as HoodieRollbackPlan;
  assert.deepEqual(plan, decodeTimelineAvro('rollbackPlan', planBytes, time));
  assert.deepEqual(plan.instantToRollback, { commitTime: FAILED, action: expected.action });
  assert.equal(plan.version, 1);
  const planned = (plan.RollbackRequests ?? []).flatMap((request) => request.filesToBeDeleted).sort();
  assert.deepEqual(planned, expected.deleted.map((file) => storage.uriOf(file)).sort(), 'plan names the absolute paths of the failed files');
  for (const request of plan.RollbackRequests ?? []) {
    // What real Hudi writes for a base file (decoded/v6_mor_rollback.*.rollback.requested.json).
    assert.equal(request.fileId, '');
    assert.equal(request.latestBaseInstant, '');
    assert.deepEqual(request.logBlocksToBeDeleted, {});
  }

  const metadataBytes = await storage.get(`.hoodie/${time}.rollback`);
  const officialRead = await readWithAvscStreams(metadataBytes, official.metadata);
  const realRead = await readWithAvscStreams(metadataBytes, await realHudiMetadataType());
  const metadata = realRead.records[0] as HoodieRollbackMetadata;
  assert.equal(officialRead.writerName, 'org.apache.hudi.avro.model.HoodieRollbackMetadata');
  assert.deepEqual(metadata, decodeTimelineAvro('rollbackMetadata', metadataBytes, time));
  assert.deepEqual(metadata, result.metadata);
  assert.equal(metadata.startRollbackTime, time);
  assert.equal(metadata.totalFilesDeleted, expected.deleted.length);
  assert.deepEqual(metadata.commitsRollback, [FAILED]);
  assert.deepEqual(metadata.instantsRollback, [{ commitTime: FAILED, action: expected.action }]);
  assert.equal(metadata.version, 1);
  assert.ok(metadata.timeTakenInMillis >= 0);
  const succeeded = Object.values(metadata.partitionMetadata).flatMap((partition) => {
    assert.deepEqual(partition.failedDeleteFiles, []);
    assert.deepEqual(partition.rollbackLogFiles, {});
    assert.deepEqual(partition.logFilesFromFailedCommit, {});
    assert.equal(metadata.partitionMetadata[partition.partitionPath], partition, 'keyed by partition path');
    return partition.successDeleteFiles;
  });
  assert.deepEqual(succeeded.sort(), planned, 'successDeleteFiles are the plan’s absolute paths');
  // Hudi 0.15's own schema has logFilesFromFailedCommit too: its reader sees exactly what Hudi's files hold.
  assert.deepEqual(officialRead.records[0], metadata);
}

/** What must be gone after T is rolled back: its data files, timeline files and markers. */
async function assertFailedWriteGone(storage: Storage, failed: FailedWrite): Promise<void> {
  for (const file of failed.files) assert.equal(await exists(storage, file), false, `${file} deleted`);
  assert.deepEqual(await instantFiles(storage, failed.time), [], 'no timeline file of the failed instant is left');
  assert.deepEqual(await storage.listRecursive(markerDir(failed.time)), [], 'markers deleted');
  assert.equal((await loadTimeline(storage, TIMELINE_LAYOUT_1)).find(failed.time), undefined);
}

async function rollbackInstants(storage: Storage): Promise<string[]> {
  return (await loadTimeline(storage, TIMELINE_LAYOUT_1)).instants.filter((i) => i.action === 'rollback').map((i) => `${i.time}:${i.state}`);
}

// ---------------------------------------------------------------------------------------------------------------

describe('markers', () => {
  it('DIRECT markers: created once (a retry is fine), listed with their partition, deleted with the folder', async () => {
    const storage = openStorage(tempDir());
    const fileName = `${NEW_FILE_ID}_0-1-1_${FAILED}.parquet`;
    const path1 = await createMarker(storage, FAILED, '2024/01', fileName, 'CREATE');
    assert.equal(path1, `.hoodie/.temp/${FAILED}/2024/01/${fileName}.marker.CREATE`);
    await createMarker(storage, FAILED, '2024/01', fileName, 'CREATE');
    await createMarker(storage, FAILED, '', `other_0-1-1_${FAILED}.parquet`, 'MERGE');
    assert.equal((await storage.head(path1))?.size, 0, 'markers are empty objects');
    assert.deepEqual(await listMarkers(storage, FAILED), [
      { partitionPath: '', fileName: `other_0-1-1_${FAILED}.parquet`, type: 'MERGE' },
      { partitionPath: '2024/01', fileName, type: 'CREATE' },
    ]);
    assert.deepEqual(await listMarkers(storage, '20240101000000000'), [], 'no folder, no markers');
    await deleteMarkerDir(storage, FAILED);
    assert.deepEqual(await listMarkers(storage, FAILED), []);
    assert.deepEqual((await storage.listDir('.hoodie/.temp')).dirs, [], 'the folder itself is gone');
  });

  it('TIMELINE_SERVER_BASED markers of a real failed Hudi write (MARKERS.type + MARKERS0)', async () => {
    const expected = expectedOf('v5_cow_clustered_pending');
    const pending = expected.timeline.find((instant) => instant.state !== 'COMPLETED')!;
    const leftBehind = expected.fileGroups.flatMap((group) => group.files).filter((file) => file.includes(pending.time));
    assert.equal(leftBehind.length, 1);
    const storage = openStorage(committedTable('v5_cow_clustered_pending'));
    // The failed insert made a new file group (small.file.limit 0): a CREATE marker.
    assert.deepEqual(await listMarkers(storage, pending.time), [
      { partitionPath: 'dt=2021-12-09/hh=11', fileName: leftBehind[0]!.slice(leftBehind[0]!.lastIndexOf('/') + 1), type: 'CREATE' },
    ]);
  });

  it("a marker's Hadoop checksum (`.<marker>.crc`, Spark on a local disk) is no marker, as Hadoop's listing hides it", async () => {
    const storage = openStorage(tempDir());
    const fileName = `${NEW_FILE_ID}_0-1-1_${FAILED}.parquet`;
    await createMarker(storage, FAILED, 'p', fileName, 'CREATE');
    await storage.put(`.hoodie/.temp/${FAILED}/p/.${fileName}.marker.CREATE.crc`, 'crc');
    assert.deepEqual(await listMarkers(storage, FAILED), [{ partitionPath: 'p', fileName, type: 'CREATE' }]);
  });

  it('a stray entry in the marker folder is named', async () => {
    const storage = openStorage(tempDir());
    await storage.put(`.hoodie/.temp/${FAILED}/MARKERS.type`, 'TIMELINE_SERVER_BASED');
    await storage.put(`.hoodie/.temp/${FAILED}/MARKERS0`, 'p/x.parquet.marker.SOMETHING\n');
    await assert.rejects(
      listMarkers(storage, FAILED),
      (error: unknown) => error instanceof HudiError && /MARKERS0/.test(error.message) && /SOMETHING/.test(error.message),
    );
    await assert.rejects(listMarkers(storage, '../../etc'), HudiError);
  });
});

describe('rollback of a failed commit (local table)', () => {
  it('marker-based: deletes the data file, markers and instant files; the snapshot is unchanged', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    const failed = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' },
      // A MERGE of the existing file group: were it visible, it would shadow the latest slice.
      { partitionPath: '', fileId: NONPARTITIONED.fileId, copyOf: NONPARTITIONED.latestBaseFile, marker: 'MERGE', writeToken: '1-1-2' },
    ]);
    // A marker naming a committed file of another instant must never make the rollback delete it.
    await createMarker(storage, FAILED, '', NONPARTITIONED.latestBaseFile, 'MERGE');

    const before = await snapshotIds(storage);
    assert.deepEqual(before.ids, FOUR_ROWS, 'readers ignore the pending instant’s files');
    assert.deepEqual(before.files, [NONPARTITIONED.latestBaseFile]);
    assert.deepEqual(
      pendingWriteInstants((await HudiTable.open(storage)).timeline).map((i) => `${i.time}:${i.state}`),
      [`${FAILED}:INFLIGHT`],
    );

    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.equal(result.outcome, 'rolled-back');
    assert.equal(result.filesFrom, 'markers');
    assert.deepEqual([...result.deletedFiles].sort(), [...failed.files].sort());
    assert.deepEqual(result.ignoredMarkers, [{ partitionPath: '', fileName: NONPARTITIONED.latestBaseFile, type: 'MERGE' }]);
    assert.ok(result.rollbackInstantTime > NONPARTITIONED.latestCommit && result.rollbackInstantTime > FAILED);

    await assertFailedWriteGone(storage, failed);
    assert.ok(await exists(storage, NONPARTITIONED.latestBaseFile), 'the committed file is kept');
    await assertRollbackFiles(storage, result, { action: 'commit', deleted: failed.files });
    assert.deepEqual(await snapshotIds(storage), before);
  });

  it('listing-based when the writer died before its markers; only the failed instant’s files go', async () => {
    const storage = openStorage(fixtureTable(PARTITIONED.table));
    const failed = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '10', fileId: PARTITIONED.partition10FileId, copyOf: PARTITIONED.partition10LatestFile },
      { partitionPath: '20', fileId: NEW_FILE_ID, copyOf: PARTITIONED.partition20File },
    ]);
    const before = await snapshotIds(storage);
    assert.equal(before.ids.length, 4);

    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.equal(result.filesFrom, 'listing');
    assert.deepEqual([...result.deletedFiles].sort(), [...failed.files].sort());
    await assertFailedWriteGone(storage, failed);
    await assertRollbackFiles(storage, result, { action: 'commit', deleted: failed.files });
    const plan = decodeTimelineAvro('rollbackPlan', await storage.get(`.hoodie/${result.rollbackInstantTime}.rollback.requested`), 'plan');
    assert.deepEqual(
      plan.RollbackRequests?.map((r) => r.partitionPath),
      ['10', '20'],
      'one request per partition, as Hudi’s listing-based rollback',
    );
    assert.deepEqual(await snapshotIds(storage), before);
    for (const file of [PARTITIONED.partition10LatestFile, PARTITIONED.partition20File]) assert.ok(await exists(storage, file));
  });

  it('timeline-server-based markers of a Spark writer are honoured', async () => {
    const storage = openStorage(fixtureTable(PARTITIONED.table));
    const failed = await simulateFailedCommit(storage, FAILED, [{ partitionPath: '20', fileId: NEW_FILE_ID, copyOf: PARTITIONED.partition20File }]);
    await storage.put(`.hoodie/.temp/${FAILED}/MARKERS.type`, 'TIMELINE_SERVER_BASED');
    await storage.put(`.hoodie/.temp/${FAILED}/MARKERS0`, `${failed.files[0]}.marker.CREATE\n`);
    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.equal(result.filesFrom, 'markers');
    assert.deepEqual(result.deletedFiles, failed.files);
    await assertFailedWriteGone(storage, failed);
  });

  it('a requested-only commit: nothing written, only its requested file goes (empty plan)', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    await createRequested(storage, TIMELINE_LAYOUT_1, FAILED, 'commit');
    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.equal(result.filesFrom, 'none');
    assert.deepEqual(result.metadata.partitionMetadata, {});
    await assertFailedWriteGone(storage, { time: FAILED, files: [] });
    await assertRollbackFiles(storage, result, { action: 'commit', deleted: [] });
  });

  it('refuses a completed commit (that is a restore) and names a missing instant with the pending ones', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    await simulateFailedCommit(storage, FAILED, []);
    const table = await HudiTable.open(storage);
    await assert.rejects(rollbackInstant(table, NONPARTITIONED.latestCommit, { lock: grantingLock }), (error: unknown) => {
      assert.ok(error instanceof HudiError);
      assert.match(error.message, new RegExp(`commit ${NONPARTITIONED.latestCommit} is completed`));
      assert.match(error.message, /restore/);
      return true;
    });
    await assert.rejects(rollbackInstant(table, '20240420000000000', { lock: grantingLock }), (error: unknown) => {
      assert.ok(error instanceof HudiError);
      assert.match(error.message, /20240420000000000 is not on the timeline/);
      assert.match(error.message, new RegExp(`${FAILED} \\(commit, inflight\\)`));
      return true;
    });
    await assert.rejects(rollbackInstant(table, 'yesterday', { lock: grantingLock }), /not an instant time/);
    assert.deepEqual(await rollbackInstants(storage), [], 'nothing was written');
  });

  it('refuses while the writer’s heartbeat is fresh, unless told to ignore it', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    const failed = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' },
    ]);
    await storage.put(heartbeatPath(FAILED), '');
    const table = await HudiTable.open(storage);
    await assert.rejects(
      rollbackInstant(table, FAILED, { lock: grantingLock }),
      (error: unknown) => error instanceof ConflictError && /heartbeat was updated/.test(error.message),
    );
    assert.ok(await exists(storage, failed.files[0]!));
    await rollbackInstant(table, FAILED, { lock: grantingLock, ignoreHeartbeat: true });
    await assertFailedWriteGone(storage, failed);
    assert.equal(await exists(storage, heartbeatPath(FAILED)), false, 'the dead writer’s heartbeat is removed');
  });
});

describe('an interrupted rollback is finished, not repeated', () => {
  const crashPoints: { name: string; crashes: (operation: string, paths: readonly string[]) => boolean }[] = [
    { name: 'before any data file was deleted', crashes: (operation, paths) => operation === 'delete' && paths.some((p) => p.endsWith('.parquet')) },
    {
      name: 'after deleting the failed instant’s files, before rollback completed',
      crashes: (operation, paths) => operation === 'putIfAbsent' && paths.some((p) => p.endsWith('.rollback')),
    },
    {
      name: 'after rollback completed, before the markers were removed',
      crashes: (operation, paths) => operation === 'delete' && paths.some((p) => p.includes('/.temp/')),
    },
  ];
  for (const { name, crashes } of crashPoints) {
    it(`crash ${name}`, async () => {
      const dir = fixtureTable(NONPARTITIONED.table);
      const storage = openStorage(dir);
      const failed = await simulateFailedCommit(storage, FAILED, [
        { partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' },
      ]);
      const crashing = new CrashingStorage(storage, crashes);
      await assert.rejects(rollbackInstant(await HudiTable.open(crashing), FAILED, { lock: grantingLock }), /simulated crash/);
      const [first] = await rollbackInstants(storage);
      assert.ok(first !== undefined, 'the rollback instant was created before the crash');
      const rollbackTime = first.slice(0, first.indexOf(':'));

      const again = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
      assert.equal(again.rollbackInstantTime, rollbackTime, 'the same rollback instant is finished');
      assert.notEqual(again.outcome, 'rolled-back');
      assert.deepEqual(await rollbackInstants(storage), [`${rollbackTime}:COMPLETED`], 'no second rollback');
      await assertFailedWriteGone(storage, failed);
      assert.deepEqual((await snapshotIds(storage)).ids, FOUR_ROWS);

      const third = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
      assert.equal(third.outcome, 'already-rolled-back');
      assert.equal(third.rollbackInstantTime, rollbackTime);
    });
  }

  it('a plan written, then the data files half deleted: the re-run deletes the rest', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    const failed = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' },
      { partitionPath: '', fileId: NONPARTITIONED.fileId, copyOf: NONPARTITIONED.latestBaseFile, marker: 'MERGE' },
    ]);
    const rollbackTime = instantAfter(FAILED, 5 * 60_000);
    const plan: HoodieRollbackPlan = {
      instantToRollback: { commitTime: FAILED, action: 'commit' },
      RollbackRequests: failed.files.map((file) => ({
        partitionPath: '',
        fileId: '',
        latestBaseInstant: '',
        filesToBeDeleted: [storage.uriOf(file)],
        logBlocksToBeDeleted: {},
      })),
      version: 1,
    };
    await createRequested(storage, TIMELINE_LAYOUT_1, rollbackTime, 'rollback', encodeTimelineAvro('rollbackPlan', plan));
    await transitionToInflight(storage, TIMELINE_LAYOUT_1, rollbackTime, 'rollback');
    await storage.delete([failed.files[0]!]);

    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.equal(result.outcome, 'resumed');
    assert.equal(result.filesFrom, 'pending-plan');
    assert.equal(result.rollbackInstantTime, rollbackTime);
    assert.equal(result.metadata.totalFilesDeleted, 2, 'a file the first attempt deleted counts as deleted');
    await assertFailedWriteGone(storage, failed);
    await assertRollbackFiles(storage, result, { action: 'commit', deleted: failed.files });
  });
});

describe('failed clustering', () => {
  async function simulateFailedClustering(storage: Storage): Promise<FailedWrite> {
    const requested = clusteringPlanOf([{ dataFilePath: NONPARTITIONED.latestBaseFile, fileId: NONPARTITIONED.fileId, partitionPath: '' }]);
    await createRequested(storage, TIMELINE_LAYOUT_1, FAILED, 'replacecommit', encodeTimelineAvro('requestedReplace', requested));
    await transitionToInflight(storage, TIMELINE_LAYOUT_1, FAILED, 'replacecommit');
    const files = await writeDataFiles(storage, FAILED, [{ partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' }]);
    return { time: FAILED, files };
  }

  it('rollbackInflightClustering removes the attempt and its inflight but keeps the plan for a retry', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    const failed = await simulateFailedClustering(storage);
    const result = await rollbackInflightClustering(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.ok(result !== undefined);
    assert.deepEqual(result.deletedFiles, failed.files);
    assert.deepEqual(await instantFiles(storage, FAILED), [`${FAILED}.replacecommit.requested`]);
    await assertRollbackFiles(storage, result, { action: 'replacecommit', deleted: failed.files });
    const plans = await pendingClusteringPlans(storage, await loadTimeline(storage, TIMELINE_LAYOUT_1));
    assert.deepEqual(
      plans.map((p) => `${p.instant.time}:${p.instant.state}`),
      [`${FAILED}:REQUESTED`],
      'the plan is still pending, ready to re-run',
    );
    assert.equal(
      await rollbackInflightClustering(await HudiTable.open(storage), FAILED, { lock: grantingLock }),
      undefined,
      'requested only: nothing to roll back',
    );
    assert.deepEqual((await snapshotIds(storage)).ids, FOUR_ROWS);

    // rollbackFailedWrites leaves pending clustering alone (it is retried, not abandoned).
    assert.deepEqual(await rollbackFailedWrites(await HudiTable.open(storage), { lock: grantingLock }), []);
  });

  it('rollbackInstant abandons a clustering, plan included', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    const failed = await simulateFailedClustering(storage);
    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    await assertFailedWriteGone(storage, failed);
    await assertRollbackFiles(storage, result, { action: 'replacecommit', deleted: failed.files });
    assert.deepEqual(await pendingClusteringPlans(storage, await loadTimeline(storage, TIMELINE_LAYOUT_1)), []);
  });
});

describe('rollbackFailedWrites', () => {
  it('rolls back writers whose heartbeat expired (or that never wrote one, long ago), not live ones', async () => {
    const dir = fixtureTable(NONPARTITIONED.table);
    const storage = openStorage(dir);
    const noHeartbeat = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' },
    ]);
    const expiredHeartbeat = await simulateFailedCommit(storage, instantAfter(FAILED, 1), []);
    await storage.put(heartbeatPath(expiredHeartbeat.time), '');
    const longAgo = new Date(Date.now() - 10 * 60_000);
    utimesSync(path.join(dir, heartbeatPath(expiredHeartbeat.time)), longAgo, longAgo);
    const freshHeartbeat = await simulateFailedCommit(storage, instantAfter(FAILED, 2), []);
    await storage.put(heartbeatPath(freshHeartbeat.time), '');
    // Started seconds ago and no heartbeat yet: may be a writer still starting up.
    const justStarted = await simulateFailedCommit(storage, formatInstantTime(new Date(Date.now() - 5_000)), []);

    const olderThanFirst = await rollbackFailedWrites(await HudiTable.open(storage), { lock: grantingLock, olderThan: FAILED });
    assert.deepEqual(olderThanFirst, [], 'olderThan is exclusive');

    const results = await rollbackFailedWrites(await HudiTable.open(storage), { lock: grantingLock });
    assert.deepEqual(
      results.map((r) => r.instantToRollback.time),
      [FAILED, expiredHeartbeat.time],
    );
    await assertFailedWriteGone(storage, noHeartbeat);
    await assertFailedWriteGone(storage, expiredHeartbeat);
    assert.equal(await exists(storage, heartbeatPath(expiredHeartbeat.time)), false);
    assert.deepEqual(
      pendingWriteInstants(await loadTimeline(storage, TIMELINE_LAYOUT_1)).map((i) => i.time),
      [freshHeartbeat.time, justStarted.time],
    );
    assert.deepEqual((await snapshotIds(storage)).ids, FOUR_ROWS);
  });

  it('EAGER: a write that completes while the healer waits for the lock was alive: it is left alone, not an error', async () => {
    const storage = openStorage(fixtureTable(NONPARTITIONED.table));
    const pending = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' },
    ]);
    // The writer commits just before the healer gets the lock (what two single-writer clients racing can do).
    const lockAfterTheCommit: LockProvider = {
      description: 'test lock (the pending write commits first)',
      acquire: async () => {
        if (!(await exists(storage, `.hoodie/${FAILED}.commit`))) {
          await transitionToCompleted(
            storage,
            TIMELINE_LAYOUT_1,
            FAILED,
            'commit',
            JSON.stringify({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' }),
          );
        }
        return grantingLock.acquire();
      },
    };
    assert.deepEqual(await rollbackFailedWrites(await HudiTable.open(storage), { lock: lockAfterTheCommit, policy: 'EAGER' }), []);
    for (const file of pending.files) assert.equal(await exists(storage, file), true, `${file} of the completed write stays`);
    await assert.rejects(rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock }), InstantCompletedError);
  });
});

// Without an S3 endpoint these fail with requireS3's message instead of being skipped.
describe('rollback on S3', () => {
  before(requireS3);

  it('marker-based rollback of a failed commit on moto', async () => {
    const dir = fixtureTable(NONPARTITIONED.table);
    const storage = await uploadTable(dir, await s3TablePath('rollback'));
    const failed = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '', fileId: NEW_FILE_ID, copyOf: NONPARTITIONED.latestBaseFile, marker: 'CREATE' },
      { partitionPath: '', fileId: NONPARTITIONED.fileId, copyOf: NONPARTITIONED.latestBaseFile, marker: 'MERGE', writeToken: '1-1-2' },
    ]);
    const before = await snapshotIds(storage);
    assert.deepEqual(before.ids, FOUR_ROWS);
    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.equal(result.filesFrom, 'markers');
    assert.match(result.metadata.commitsRollback[0]!, new RegExp(FAILED));
    assert.ok(Object.values(result.metadata.partitionMetadata)[0]?.successDeleteFiles.every((file) => file.startsWith('s3://')));
    await assertFailedWriteGone(storage, failed);
    await assertRollbackFiles(storage, result, { action: 'commit', deleted: failed.files });
    assert.deepEqual(await snapshotIds(storage), before);
  });

  it('listing-based rollback of a partitioned table, resumed after a crash', async () => {
    const storage = await uploadTable(fixtureTable(PARTITIONED.table), await s3TablePath('rollback-partitioned'));
    const failed = await simulateFailedCommit(storage, FAILED, [
      { partitionPath: '10', fileId: PARTITIONED.partition10FileId, copyOf: PARTITIONED.partition10LatestFile },
    ]);
    const crashing = new CrashingStorage(storage, (operation, paths) => operation === 'putIfAbsent' && paths.some((p) => p.endsWith('.rollback')));
    await assert.rejects(rollbackInstant(await HudiTable.open(crashing), FAILED, { lock: grantingLock }), /simulated crash/);
    const result = await rollbackInstant(await HudiTable.open(storage), FAILED, { lock: grantingLock });
    assert.equal(result.outcome, 'resumed');
    await assertFailedWriteGone(storage, failed);
    await assertRollbackFiles(storage, result, { action: 'commit', deleted: failed.files });
    assert.equal((await snapshotIds(storage)).ids.length, 4);
  });
});

/** A Storage that fails once, like a process dying, at the first operation `crashes` picks. */
class CrashingStorage implements Storage {
  private crashed = false;

  constructor(
    private readonly inner: Storage,
    private readonly crashes: (operation: string, paths: readonly string[]) => boolean,
  ) {}

  get uri(): string {
    return this.inner.uri;
  }

  private check(operation: string, paths: readonly string[]): void {
    if (!this.crashed && this.crashes(operation, paths)) {
      this.crashed = true;
      throw new Error(`simulated crash at ${operation} ${paths.join(', ')}`);
    }
  }

  uriOf(relative: string): string {
    return this.inner.uriOf(relative);
  }
  get(relative: string): Promise<Uint8Array> {
    return this.inner.get(relative);
  }
  getRange(relative: string, start: number, end: number): Promise<Uint8Array> {
    return this.inner.getRange(relative, start, end);
  }
  head(relative: string): Promise<StoredObject | undefined> {
    return this.inner.head(relative);
  }
  async put(relative: string, body: Uint8Array | string): Promise<void> {
    this.check('put', [relative]);
    await this.inner.put(relative, body);
  }
  async putIfAbsent(relative: string, body: Uint8Array | string): Promise<void> {
    this.check('putIfAbsent', [relative]);
    await this.inner.putIfAbsent(relative, body);
  }
  uploadFile(relative: string, localFile: string): Promise<void> {
    return this.inner.uploadFile(relative, localFile);
  }
  downloadFile(relative: string, localFile: string): Promise<void> {
    return this.inner.downloadFile(relative, localFile);
  }
  listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }> {
    return this.inner.listDir(dir);
  }
  listRecursive(dir: string): Promise<StoredObject[]> {
    return this.inner.listRecursive(dir);
  }
  async delete(paths: readonly string[]): Promise<void> {
    this.check('delete', paths);
    await this.inner.delete(paths);
  }
}

describe('listing-based rollback: the files of the instant in a partition (ListingBasedRollbackStrategy)', () => {
  const T = '20250101000000000';
  const names = [
    `a1_0-1-1_${T}.parquet`,
    'a2_0-1-1_20240101000000000.parquet',
    `.a2_${T}.log.1_0-1-1`,
    '.a2_20240101000000000.log.2_0-1-1',
    `.a3_${T}.log.1_0-1-1`,
    '.hoodie_partition_metadata',
  ];
  const layout2 = timelineLayout2('.hoodie/timeline', 'UTC');

  it('layout 2 (Hudi 1.x): base files and log files named by the delta commit, nothing else', () => {
    assert.deepEqual(listedFilesOfInstant(layout2, { time: T, action: 'deltacommit' }, names), [
      `a1_0-1-1_${T}.parquet`,
      `.a2_${T}.log.1_0-1-1`,
      `.a3_${T}.log.1_0-1-1`,
    ]);
    assert.deepEqual(listedFilesOfInstant(layout2, { time: T, action: 'clustering' }, names).length, 3);
  });

  it("a compaction's rollback takes its base files only (listBaseFilesToBeDeleted); layout 1 lists base files", () => {
    assert.deepEqual(listedFilesOfInstant(layout2, { time: T, action: 'compaction' }, names), [`a1_0-1-1_${T}.parquet`]);
    assert.deepEqual(listedFilesOfInstant(TIMELINE_LAYOUT_1, { time: T, action: 'deltacommit' }, names), [`a1_0-1-1_${T}.parquet`]);
  });
});
