/**
 * Glue Data Catalog sync of merge-on-read tables against moto's Glue, on moto S3: the catalog tables Hudi 0.15's
 * HiveSyncTool (doSync, initTableNameVars) writes through AWSGlueCatalogSyncClient — `<name>_ro` with
 * HoodieParquetInputFormat and hoodie.query.as.ro.table=true, `<name>_rt` and (sync_snapshot_with_table_name, on by
 * default) `<name>` with HoodieParquetRealtimeInputFormat and hoodie.query.as.ro.table=false; the same columns,
 * parameters and partitions for each; each table's last_commit_time_sync the newest delta commit. The expected
 * values are written out by hand from Hudi's source at release-0.15.0.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigValueError } from '../../lib/config/index.js';
import { catalogTables, glueSyncConfigFromProperties, inputFormatOf } from '../../lib/sync/index.js';
import { getTable, partitionsOf, RO_INPUT_FORMAT, RT_INPUT_FORMAT, syncNow, users, usersTableProps, writeUsers } from '../helpers/glue-sync.js';
import { s3TablePath } from '../helpers/s3.js';

describe('Glue Data Catalog sync of merge-on-read tables against moto', () => {
  test('a merge-on-read table becomes <name>_ro, <name>_rt and <name>, as Hudi 0.15 syncs it; a delta commit into a new partition reaches all three', async () => {
    const tablePath = await s3TablePath('glue_mor');
    const name = `trips_${randomUUID().slice(0, 6)}`;
    const database = `db_${randomUUID().slice(0, 6)}`;
    const props = usersTableProps(name, database, { type: 'MERGE_ON_READ' });
    const first = await writeUsers(tablePath, props, users(12, 1, '2024-01-01'), 'insert');

    const synced = await syncNow(tablePath, props);
    assert.deepEqual(
      synced.result.tables.map((t) => [t.table, t.tableCreated, t.partitionsAdded]),
      [
        [`${name}_ro`, true, ['2024-01-01']],
        [`${name}_rt`, true, ['2024-01-01']],
        [name, true, ['2024-01-01']],
      ],
      'read-optimized, then real-time, then the table name (sync_snapshot_with_table_name)',
    );
    const ro = await getTable(database, `${name}_ro`);
    const rt = await getTable(database, `${name}_rt`);
    const snapshot = await getTable(database, name);
    assert.equal(ro.StorageDescriptor?.InputFormat, RO_INPUT_FORMAT);
    assert.equal(rt.StorageDescriptor?.InputFormat, RT_INPUT_FORMAT);
    assert.equal(snapshot.StorageDescriptor?.InputFormat, RT_INPUT_FORMAT);
    for (const table of [ro, rt, snapshot]) {
      assert.equal(table.TableType, 'EXTERNAL_TABLE');
      assert.equal(table.StorageDescriptor?.OutputFormat, 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat');
      assert.equal(table.StorageDescriptor?.SerdeInfo?.SerializationLibrary, 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe');
      assert.equal(table.StorageDescriptor?.Location, tablePath);
      assert.deepEqual(
        table.PartitionKeys?.map((c) => c.Name),
        ['dt'],
      );
      assert.equal(table.Parameters?.['last_commit_time_sync'], first.instantTime, `${table.Name}: the delta commit`);
      assert.equal(table.Parameters?.['spark.sql.sources.provider'], 'hudi');
      assert.equal(table.Parameters?.['EXTERNAL'], 'TRUE');
      assert.equal(table.Parameters?.['spark.sql.sources.schema.partCol.0'], 'dt');
    }
    assert.deepEqual(ro.StorageDescriptor?.SerdeInfo?.Parameters, { 'hoodie.query.as.ro.table': 'true', path: tablePath, 'serialization.format': '1' });
    for (const table of [rt, snapshot])
      assert.deepEqual(table.StorageDescriptor?.SerdeInfo?.Parameters, { 'hoodie.query.as.ro.table': 'false', path: tablePath, 'serialization.format': '1' });
    assert.deepEqual(rt.StorageDescriptor?.Columns, ro.StorageDescriptor?.Columns, 'the same columns');
    assert.deepEqual(rt.Parameters, ro.Parameters, 'the same parameters');
    assert.ok(ro.StorageDescriptor?.Columns?.some((c) => c.Name === '_hoodie_commit_time'));
    assert.deepEqual(await partitionsOf(database, `${name}_ro`), [[['2024-01-01'], `${tablePath}/2024-01-01`, RO_INPUT_FORMAT]]);
    for (const table of [`${name}_rt`, name])
      assert.deepEqual(await partitionsOf(database, table), [[['2024-01-01'], `${tablePath}/2024-01-01`, RT_INPUT_FORMAT]]);

    // Updates go to log files of the first partition, inserts to a new one: each table adds the new partition only.
    const updates = users(4, 1, '2024-01-01').map((u) => ({ ...u, name: `${u.name}-v2`, createTime: '2024-01-01 23:59:59' }));
    const second = await writeUsers(tablePath, props, [...updates, ...users(3, 2, '2024-01-02').map((u) => ({ ...u, id: u.id + 100 }))], 'upsert');
    assert.ok(
      second.stats.some((s) => s.path?.includes('.log.')),
      'the upsert wrote log files',
    );
    const again = await syncNow(tablePath, props);
    assert.deepEqual(
      again.result.tables.map((t) => [t.table, t.tableCreated, t.partitionSync, t.partitionsAdded, t.lastCommitTimeSync]),
      [
        [`${name}_ro`, false, 'incremental', ['2024-01-02'], second.instantTime],
        [`${name}_rt`, false, 'incremental', ['2024-01-02'], second.instantTime],
        [name, false, 'incremental', ['2024-01-02'], second.instantTime],
      ],
    );
    for (const table of [`${name}_ro`, `${name}_rt`, name]) {
      const format = table === `${name}_ro` ? RO_INPUT_FORMAT : RT_INPUT_FORMAT;
      assert.deepEqual(await partitionsOf(database, table), [
        [['2024-01-01'], `${tablePath}/2024-01-01`, format],
        [['2024-01-02'], `${tablePath}/2024-01-02`, format],
      ]);
      assert.equal((await getTable(database, table)).Parameters?.['last_commit_time_sync'], second.instantTime);
    }
  });

  test('skip_ro_suffix: the read-optimized table takes the bare name (the snapshot sync of the same name leaves it read-optimized)', async () => {
    const tablePath = await s3TablePath('glue_mor_skip');
    const name = `trips_${randomUUID().slice(0, 6)}`;
    const database = `db_${randomUUID().slice(0, 6)}`;
    const props = usersTableProps(name, database, { type: 'MERGE_ON_READ' }, { 'hoodie.datasource.hive_sync.skip_ro_suffix': 'true' });
    const written = await writeUsers(tablePath, props, users(6, 3, '2024-02-01'), 'insert');
    const synced = await syncNow(tablePath, props);
    assert.deepEqual(
      synced.result.tables.map((t) => [t.table, t.tableCreated]),
      [
        [name, true],
        [`${name}_rt`, true],
        [name, false],
      ],
    );
    const ro = await getTable(database, name);
    // AWSGlueCatalogSyncClient of 0.15 has no updateSerdeProperties: the second pass over the name changes no format.
    assert.equal(ro.StorageDescriptor?.InputFormat, RO_INPUT_FORMAT);
    assert.equal(ro.StorageDescriptor?.SerdeInfo?.Parameters?.['hoodie.query.as.ro.table'], 'true');
    assert.equal(ro.Parameters?.['last_commit_time_sync'], written.instantTime);
    assert.equal((await getTable(database, `${name}_rt`)).StorageDescriptor?.InputFormat, RT_INPUT_FORMAT);
    await assert.rejects(getTable(database, `${name}_ro`), (error: unknown) => (error as { name?: string }).name === 'EntityNotFoundException');
  });

  test("the catalog tables by Hudi's keys: strategy RO / RT, sync_snapshot_with_table_name off, pre-apache formats; a bad strategy is refused", () => {
    const base = new Map([
      ['hoodie.datasource.meta.sync.enable', 'true'],
      ['hoodie.datasource.hive_sync.mode', 'glue'],
      ['hoodie.table.name', 't'],
    ]);
    const config = (extra: Record<string, string>) => glueSyncConfigFromProperties(new Map([...base, ...Object.entries(extra)]), 'props')!;
    assert.deepEqual(catalogTables('COPY_ON_WRITE', config({})), [{ name: 't', realtime: false, readOptimized: false }]);
    assert.deepEqual(catalogTables('COPY_ON_WRITE', config({ 'hoodie.datasource.hive_sync.skip_ro_suffix': 'true' })), [
      { name: 't', realtime: false, readOptimized: false },
    ]);
    assert.deepEqual(catalogTables('MERGE_ON_READ', config({ 'hoodie.meta.sync.sync_snapshot_with_table_name': 'false' })), [
      { name: 't_ro', realtime: false, readOptimized: true },
      { name: 't_rt', realtime: true, readOptimized: false },
    ]);
    assert.deepEqual(catalogTables('MERGE_ON_READ', config({ 'hoodie.datasource.hive_sync.table.strategy': 'ro' })), [
      { name: 't', realtime: false, readOptimized: true },
    ]);
    assert.deepEqual(catalogTables('MERGE_ON_READ', config({ 'hoodie.datasource.hive_sync.table.strategy': 'RT' })), [
      { name: 't', realtime: true, readOptimized: false },
    ]);
    const preApache = config({ 'hoodie.datasource.hive_sync.use_pre_apache_input_format': 'true' });
    assert.equal(inputFormatOf({ realtime: true }, preApache), 'com.uber.hoodie.hadoop.realtime.HoodieRealtimeInputFormat');
    assert.equal(inputFormatOf({ realtime: false }, preApache), 'com.uber.hoodie.hadoop.HoodieInputFormat');
    assert.equal(inputFormatOf({ realtime: true }, config({})), RT_INPUT_FORMAT);
    assert.throws(
      () => config({ 'hoodie.datasource.hive_sync.table.strategy': 'BOTH' }),
      (error: unknown) => error instanceof ConfigValueError && error.message.includes('hoodie.datasource.hive_sync.table.strategy'),
    );
  });
});
