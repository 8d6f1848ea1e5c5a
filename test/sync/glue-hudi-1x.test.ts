/**
 * Glue Data Catalog sync of Hudi 1.x tables (versions 8 and 9) against moto's Glue, on moto S3, as Hudi 1.0.2 (a
 * version 8 table) and 1.1.1 (version 9) sync them: the same catalog tables, formats and parameters as 0.15 plus
 * last_commit_completion_time_sync; commits requested before the last sync but completed after it are found by that
 * completion time; an existing table's serde parameters are brought up to date; a table whose location is not the
 * base path is created again; and (1.1 only) a table synced to the latest commit is left alone. The expected values
 * are written out by hand from Hudi's AWSGlueCatalogSyncClient, HiveSyncTool, HoodieSyncClient and TimelineUtils.
 * hudi-aws 1.x is not on Maven, so no real Hudi 1.x Glue client runs here; the behaviour followed is named in
 * lib/sync/behaviour.ts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { BatchDeletePartitionCommand, GetTablesCommand, type Table, UpdateTableCommand } from '@aws-sdk/client-glue';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import type { Instant } from '../../lib/timeline/instant.js';
import { getTable, glue, partitionsOf, RO_INPUT_FORMAT, RT_INPUT_FORMAT, syncNow, users, usersTableProps, writeUsers } from '../helpers/glue-sync.js';
import { s3TablePath } from '../helpers/s3.js';

const OUTPUT_FORMAT = 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat';
const SERDE = 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe';

/** Table version → the Hudi release that writes it by default, whose Glue sync it gets. */
const RELEASES = [
  { version: 9, release: '1.1', hudi: 'Hudi 1.1.1' },
  { version: 8, release: '1.0', hudi: 'Hudi 1.0.2' },
] as const;

/** The completed commits of the table as it is on storage now. */
async function writesOf(tablePath: string): Promise<Instant[]> {
  return (await HudiTable.open(openStorage(tablePath))).timeline.completedWrites();
}

/** What Hudi 1.x records: the newest instant's requested time, and the greatest completion time. */
async function markOf(tablePath: string): Promise<{ last_commit_time_sync: string; last_commit_completion_time_sync: string }> {
  const writes = await writesOf(tablePath);
  const completions = writes.map((instant) => instant.completionTime!).sort();
  assert.ok(
    completions.every((c) => c !== undefined),
    'every 1.x instant has a completion time',
  );
  return { last_commit_time_sync: writes.at(-1)!.time, last_commit_completion_time_sync: completions.at(-1)! };
}

function marks(table: Table) {
  return {
    last_commit_time_sync: table.Parameters?.['last_commit_time_sync'],
    last_commit_completion_time_sync: table.Parameters?.['last_commit_completion_time_sync'],
  };
}

/** A copy-on-write users table at `version` on S3, two inserts into two days (seed, day each), not synced yet. */
async function twoInsertsTable(pathLabel: string, nameLabel: string, version: number, days: readonly [number, string][]) {
  const tablePath = await s3TablePath(`${pathLabel}_v${version}`);
  const name = `${nameLabel}${version}_${randomUUID().slice(0, 6)}`;
  const database = `db_${randomUUID().slice(0, 6)}`;
  const props = usersTableProps(name, database, { type: 'COPY_ON_WRITE', version });
  for (const [index, [seed, day]] of days.entries()) {
    await writeUsers(
      tablePath,
      props,
      users(4, seed, day).map((u) => ({ ...u, id: u.id + 50 * index })),
      'insert',
    );
  }
  return { tablePath, name, database, props };
}

describe('Glue Data Catalog sync of Hudi 1.x tables against moto', () => {
  for (const { version, release, hudi } of RELEASES) {
    test(`a version ${version} merge-on-read table, as ${hudi} syncs it: insert, a delta commit into a new partition, a compaction, a clustering`, async () => {
      const tablePath = await s3TablePath(`glue_mor_v${version}`);
      const name = `trips_v${version}_${randomUUID().slice(0, 6)}`;
      const database = `db_${randomUUID().slice(0, 6)}`;
      const props = usersTableProps(name, database, { type: 'MERGE_ON_READ', version: version });
      await writeUsers(tablePath, props, users(12, 1, '2024-01-01'), 'insert');
      assert.equal((await HudiTable.open(openStorage(tablePath))).config.version, version);
      const allThree = [`${name}_ro`, `${name}_rt`, name];

      // 1. The insert: the three catalog tables, as with 0.15, plus last_commit_completion_time_sync.
      const first = await syncNow(tablePath, props);
      assert.equal(first.result.release, release);
      const firstMark = await markOf(tablePath);
      assert.deepEqual(
        first.result.tables.map((t) => [t.table, t.tableCreated, t.partitionSync, t.partitionsAdded, t.lastCommitTimeSync, t.lastCommitCompletionTimeSync]),
        allThree.map((t) => [t, true, 'full', ['2024-01-01'], firstMark.last_commit_time_sync, firstMark.last_commit_completion_time_sync]),
      );
      for (const tableName of allThree) {
        const table = await getTable(database, tableName);
        const readOptimized = tableName === `${name}_ro`;
        assert.equal(table.TableType, 'EXTERNAL_TABLE');
        assert.equal(table.StorageDescriptor?.InputFormat, readOptimized ? RO_INPUT_FORMAT : RT_INPUT_FORMAT, tableName);
        assert.equal(table.StorageDescriptor?.OutputFormat, OUTPUT_FORMAT);
        assert.equal(table.StorageDescriptor?.SerdeInfo?.SerializationLibrary, SERDE);
        assert.deepEqual(table.StorageDescriptor?.SerdeInfo?.Parameters, {
          'hoodie.query.as.ro.table': String(readOptimized),
          path: tablePath,
          'serialization.format': '1',
        });
        assert.equal(table.StorageDescriptor?.Location, tablePath);
        assert.deepEqual(
          table.PartitionKeys?.map((c) => [c.Name, c.Type]),
          [['dt', 'string']],
        );
        assert.deepEqual(marks(table), firstMark, tableName);
        assert.equal(table.Parameters?.['EXTERNAL'], 'TRUE');
        assert.equal(table.Parameters?.['hudi.metadata-listing-enabled'], 'FALSE');
        assert.equal(table.Parameters?.['spark.sql.sources.provider'], 'hudi');
        assert.equal(table.Parameters?.['spark.sql.sources.schema.numPartCols'], '1');
        assert.equal(table.Parameters?.['spark.sql.sources.schema.partCol.0'], 'dt');
        assert.ok(table.StorageDescriptor?.Columns?.some((c) => c.Name === '_hoodie_commit_time'));
        const format = readOptimized ? RO_INPUT_FORMAT : RT_INPUT_FORMAT;
        assert.deepEqual(await partitionsOf(database, tableName), [[['2024-01-01'], `${tablePath}/2024-01-01`, format]]);
      }

      // 2. A delta commit: updates into log files of the first partition, inserts into a new one.
      const updates = users(4, 1, '2024-01-01').map((u) => ({ ...u, name: `${u.name}-v2`, createTime: '2024-01-01 23:59:59' }));
      const delta = await writeUsers(tablePath, props, [...updates, ...users(3, 2, '2024-01-02').map((u) => ({ ...u, id: u.id + 100 }))], 'upsert');
      assert.ok(
        delta.stats.some((s) => s.path?.includes('.log.')),
        'the upsert wrote log files',
      );
      const second = await syncNow(tablePath, props);
      const secondMark = await markOf(tablePath);
      assert.equal(secondMark.last_commit_time_sync, delta.instantTime);
      assert.deepEqual(
        second.result.tables.map((t) => [t.table, t.tableCreated, t.partitionSync, t.partitionsAdded, t.schemaChanged, t.propertiesChanged]),
        allThree.map((t) => [t, false, 'incremental', ['2024-01-02'], false, false]),
      );
      for (const tableName of allThree) {
        const format = tableName === `${name}_ro` ? RO_INPUT_FORMAT : RT_INPUT_FORMAT;
        assert.deepEqual(await partitionsOf(database, tableName), [
          [['2024-01-01'], `${tablePath}/2024-01-01`, format],
          [['2024-01-02'], `${tablePath}/2024-01-02`, format],
        ]);
        assert.deepEqual(marks(await getTable(database, tableName)), secondMark);
      }

      // 3. A compaction (a commit on the timeline) adds no partition: the incremental sync moves the marks only.
      const table = await HudiTable.open(openStorage(tablePath));
      const lock = lockProviderFor(table.config.properties, table.config.name, table.storage);
      const scheduled = await scheduleCompaction(table, compactionConfigFrom(props, 'test'), { lock, force: true, properties: props });
      assert.ok(scheduled, 'a compaction was scheduled');
      await runCompaction(await HudiTable.open(openStorage(tablePath)), scheduled.instantTime, { lock, properties: props });
      const afterCompaction = await syncNow(tablePath, props);
      const compactionMark = await markOf(tablePath);
      assert.equal(compactionMark.last_commit_time_sync, scheduled.instantTime);
      assert.deepEqual(
        afterCompaction.result.tables.map((t) => [t.partitionSync, t.partitionsAdded, t.partitionsUpdated, t.partitionsDropped, t.lastCommitTimeSync]),
        allThree.map(() => ['incremental', [], [], [], scheduled.instantTime]),
      );
      for (const tableName of allThree) assert.deepEqual(marks(await getTable(database, tableName)), compactionMark);

      // 4. A clustering (a replacecommit) likewise.
      const storage = openStorage(tablePath);
      const engine = await openParquetEngine({});
      let clusteringInstant: string | undefined;
      try {
        const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
          mode: 'scheduleAndExecute',
          config: resolveClusteringConfig({}).config,
          force: true,
          lock: lockProviderFor(new Map(props), name, storage),
          engine,
        });
        clusteringInstant = result.instantTime;
      } finally {
        await engine.close();
      }
      assert.ok(clusteringInstant !== undefined, 'the clustering ran');
      const afterClustering = await syncNow(tablePath, props);
      const clusteringMark = await markOf(tablePath);
      assert.equal(clusteringMark.last_commit_time_sync, clusteringInstant);
      assert.deepEqual(
        afterClustering.result.tables.map((t) => [t.partitionSync, t.partitionsAdded, t.partitionsDropped, t.lastCommitCompletionTimeSync]),
        allThree.map(() => ['incremental', [], [], clusteringMark.last_commit_completion_time_sync]),
      );
      for (const tableName of allThree) assert.equal((await partitionsOf(database, tableName)).length, 2);

      // 5. Nothing new: 1.1 leaves every table alone (isAlreadySynced); 1.0 runs the sync, which changes nothing.
      const idle = await syncNow(tablePath, props);
      assert.deepEqual(
        idle.result.tables.map((t) => [t.alreadySynced, t.partitionSync, t.partitionsAdded, t.schemaChanged, t.propertiesChanged]),
        allThree.map(() => (release === '1.1' ? [true, 'none', [], false, false] : [false, 'incremental', [], false, false])),
      );
      for (const tableName of allThree) assert.deepEqual(marks(await getTable(database, tableName)), clusteringMark);
    });
  }

  test('a version 8 copy-on-write table, as Hudi 1.0.2 syncs it: one catalog table, a new partition, the completion time', async () => {
    const tablePath = await s3TablePath('glue_cow_v8');
    const name = `events_v8_${randomUUID().slice(0, 6)}`;
    const database = `db_${randomUUID().slice(0, 6)}`;
    const props = usersTableProps(name, database, { type: 'COPY_ON_WRITE', version: 8 });
    await writeUsers(tablePath, props, users(5, 4, '2024-03-01'), 'insert');
    const first = await syncNow(tablePath, props);
    assert.deepEqual(
      first.result.tables.map((t) => [t.table, t.tableCreated, t.partitionsAdded]),
      [[name, true, ['2024-03-01']]],
    );
    const created = await getTable(database, name);
    assert.equal(created.StorageDescriptor?.InputFormat, RO_INPUT_FORMAT);
    assert.deepEqual(created.StorageDescriptor?.SerdeInfo?.Parameters, { 'hoodie.query.as.ro.table': 'false', path: tablePath, 'serialization.format': '1' });
    assert.deepEqual(marks(created), await markOf(tablePath));

    await writeUsers(
      tablePath,
      props,
      users(3, 5, '2024-03-02').map((u) => ({ ...u, id: u.id + 50 })),
      'upsert',
    );
    const second = await syncNow(tablePath, props);
    assert.deepEqual([second.result.partitionSync, second.result.partitionsAdded], ['incremental', ['2024-03-02']]);
    assert.deepEqual(
      (await partitionsOf(database, name)).map(([values, location]) => [values, location]),
      [
        [['2024-03-01'], `${tablePath}/2024-03-01`],
        [['2024-03-02'], `${tablePath}/2024-03-02`],
      ],
    );
    assert.deepEqual(marks(await getTable(database, name)), await markOf(tablePath));
  });

  test('a commit requested before the last sync but completed after it is found by last_commit_completion_time_sync (1.x), not by 0.15', async () => {
    for (const version of [9, 6]) {
      const { tablePath, name, database, props } = await twoInsertsTable('glue_hollow', 'events_h', version, [
        [6, '2024-04-01'],
        [7, '2024-04-02'],
      ]);
      await writeUsers(
        tablePath,
        props,
        users(4, 8, '2024-04-03').map((u) => ({ ...u, id: u.id + 90 })),
        'insert',
      );
      await syncNow(tablePath, props);
      const [first, middle, last] = await writesOf(tablePath);
      // The Glue state a sync leaves when it ran while the middle commit was still in flight: the last commit synced,
      // the completion time synced the first commit's, and the middle commit's partition not in Glue.
      const current = await getTable(database, name);
      const syncedCompletion = version === 9 ? first!.completionTime! : undefined;
      assert.ok(syncedCompletion === undefined || syncedCompletion < middle!.completionTime!);
      await glue().send(
        new UpdateTableCommand({
          DatabaseName: database,
          TableInput: {
            Name: name,
            TableType: current.TableType,
            PartitionKeys: current.PartitionKeys,
            StorageDescriptor: current.StorageDescriptor,
            Parameters: {
              ...current.Parameters,
              last_commit_time_sync: last!.time,
              ...(syncedCompletion === undefined ? {} : { last_commit_completion_time_sync: syncedCompletion }),
            },
          },
        }),
      );
      await glue().send(new BatchDeletePartitionCommand({ DatabaseName: database, TableName: name, PartitionsToDelete: [{ Values: ['2024-04-02'] }] }));
      const again = await syncNow(tablePath, props);
      assert.equal(again.result.partitionSync, 'incremental');
      if (version === 9) {
        assert.deepEqual(again.result.partitionsAdded, ['2024-04-02'], 'the middle commit completed after the synced completion time');
        assert.deepEqual(marks(await getTable(database, name)), await markOf(tablePath));
      } else {
        assert.deepEqual(again.result.partitionsAdded, [], '0.15 looks only after last_commit_time_sync');
        assert.equal((await getTable(database, name)).Parameters?.['last_commit_completion_time_sync'], undefined);
      }
    }
  });

  test('a catalog table somewhere else than the base path is created again with every partition (1.x); 0.15 leaves it', async () => {
    for (const version of [8, 6]) {
      const { tablePath, name, database, props } = await twoInsertsTable('glue_moved', 'events_m', version, [
        [9, '2024-05-01'],
        [10, '2024-05-02'],
      ]);
      await syncNow(tablePath, props);
      const current = await getTable(database, name);
      const elsewhere = `${tablePath}-old`;
      await glue().send(
        new UpdateTableCommand({
          DatabaseName: database,
          TableInput: {
            Name: name,
            TableType: current.TableType,
            PartitionKeys: current.PartitionKeys,
            Parameters: current.Parameters,
            StorageDescriptor: { ...current.StorageDescriptor, Location: elsewhere },
          },
        }),
      );
      await glue().send(new BatchDeletePartitionCommand({ DatabaseName: database, TableName: name, PartitionsToDelete: [{ Values: ['2024-05-02'] }] }));
      const again = await syncNow(tablePath, props);
      const after = await getTable(database, name);
      if (version === 8) {
        assert.deepEqual([again.result.tableRecreated, again.result.partitionSync, again.result.partitionsAdded], [true, 'full', ['2024-05-01', '2024-05-02']]);
        assert.equal(after.StorageDescriptor?.Location, tablePath);
        assert.deepEqual(marks(after), await markOf(tablePath));
        const names = ((await glue().send(new GetTablesCommand({ DatabaseName: database }))).TableList ?? []).map((t) => t.Name);
        assert.deepEqual(names, [name], 'the temporary table is gone');
      } else {
        assert.deepEqual([again.result.tableRecreated, again.result.partitionsAdded], [false, []]);
        assert.equal(after.StorageDescriptor?.Location, elsewhere);
      }
    }
  });

  test('skip_ro_suffix: the snapshot pass over the bare name updates its serde, not its input format (1.0); 1.1 finds it synced already', async () => {
    for (const { version, release } of RELEASES) {
      const tablePath = await s3TablePath(`glue_mor_skip_v${version}`);
      const name = `trips_s${version}_${randomUUID().slice(0, 6)}`;
      const database = `db_${randomUUID().slice(0, 6)}`;
      const props = usersTableProps(name, database, { type: 'MERGE_ON_READ', version: version }, { 'hoodie.datasource.hive_sync.skip_ro_suffix': 'true' });
      await writeUsers(tablePath, props, users(6, 11, '2024-06-01'), 'insert');
      const synced = await syncNow(tablePath, props);
      assert.deepEqual(
        synced.result.tables.map((t) => [t.table, t.tableCreated, t.alreadySynced, t.propertiesChanged]),
        [[name, true, false, true], [`${name}_rt`, true, false, true], release === '1.1' ? [name, false, true, false] : [name, false, false, true]],
      );
      const bare = await getTable(database, name);
      assert.equal(bare.StorageDescriptor?.InputFormat, RO_INPUT_FORMAT, 'updateSerdeProperties leaves the input format');
      assert.deepEqual(bare.StorageDescriptor?.SerdeInfo?.Parameters, {
        'hoodie.query.as.ro.table': String(release === '1.1'),
        path: tablePath,
        'serialization.format': '1',
      });
    }
  });
});
