/**
 * Glue Data Catalog sync (lib/sync/) against moto's Glue, on moto S3: ingest (lib/serverless/steps/ingest/ingest.ts) with
 * Hudi's meta-sync keys creates the Glue table with the fields Hudi's AwsGlueCatalogSyncTool writes, a commit into a
 * new partition adds that partition, a catalog schema that differs from the table's is replaced, and a clustering only moves
 * last_commit_time_sync. The expected values are Hudi 0.15's (AWSGlueCatalogSyncClient, HiveSyncTool,
 * SparkDataSourceTableUtils, HiveSchemaUtil), written out by hand.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { GetPartitionsCommand, GetTableCommand, type GlueClient, type Partition, UpdateTableCommand } from '@aws-sdk/client-glue';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { HudiError } from '../../lib/errors.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { type IngestConfig, type IngestSummary, ingestStep } from '../../lib/serverless/steps/ingest/ingest.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import {
  EXTRACTORS,
  GLUE_SYNC_TOOL,
  glueClientFor,
  glueSyncConfigFromProperties,
  hiveSchemaOf,
  parquetSchemaOf,
  partitionValues,
  sparkSchemaJson,
  syncCatalogAfterCommit,
} from '../../lib/sync/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { s3TablePath } from '../helpers/s3.js';

const SYNC_PROPS: Record<string, string> = {
  'hoodie.datasource.meta.sync.enable': 'true',
  'hoodie.datasource.hive_sync.enable': 'true',
  'hoodie.datasource.hive_sync.mode': 'glue',
  'hoodie.meta.sync.client.tool.class': GLUE_SYNC_TOOL,
  'hoodie.datasource.hive_sync.partition_fields': 'dt',
  'hoodie.datasource.hive_sync.partition_extractor_class': EXTRACTORS.multiPart,
};

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Write properties of a table keyed by id, partitioned by dt, synced to `database` after each commit. */
function syncedTableProps(tableName: string, database: string, extra: Record<string, string> = {}): Map<string, string> {
  return new Map<string, string>([
    ['hoodie.table.name', tableName],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.datasource.write.precombine.field', 'ts'],
    ['hoodie.datasource.hive_sync.database', database],
    ...Object.entries(SYNC_PROPS),
    ...Object.entries(extra),
  ]);
}

function glue(): GlueClient {
  return glueClientFor({ region: undefined, endpoint: undefined });
}

async function ingest(tablePath: string, props: ReadonlyMap<string, string>, rows: readonly Record<string, unknown>[]): Promise<IngestSummary> {
  const bucket = tablePath.slice('s3://'.length).split('/')[0]!;
  const key = `landing-${randomUUID().slice(0, 8)}/batch.jsonl`;
  const s3 = s3ClientFromEnv();
  const etag = (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: rows.map((row) => JSON.stringify(row)).join('\n') + '\n' }))).ETag;
  const config: IngestConfig = {
    tablePath,
    tableProperties: new Map(props),
    ingestPrefix: '',
    errorPrefix: 'errors/',
    defaultFormat: 'jsonl',
    tableServices: 'off',
  };
  const summary = await ingestStep(
    { kind: 'objects', deliveries: [{ bucket, key, etag, eventName: 'ObjectCreated:Put', created: true }] },
    { config, s3, log: quiet, metrics: new Metrics({ namespace: 'hudi-serverless-test' }) },
  );
  assert.ok(!('batchItemFailures' in summary), JSON.stringify(summary));
  return summary;
}

async function partitionsOf(database: string, table: string): Promise<Partition[]> {
  const response = await glue().send(new GetPartitionsCommand({ DatabaseName: database, TableName: table }));
  return [...(response.Partitions ?? [])].sort((a, b) => (a.Values ?? []).join('/').localeCompare((b.Values ?? []).join('/')));
}

describe('Glue Data Catalog sync against moto', () => {
  test("ingest creates the table as Hudi's Glue sync does; a new partition is added; a schema difference and a clustering sync as Hudi's", async () => {
    const tablePath = await s3TablePath('glue_sync');
    const tableName = `events_${randomUUID().slice(0, 6)}`;
    const database = `db_${randomUUID().slice(0, 6)}`;
    const props = syncedTableProps(tableName, database);

    // 1. The first commit creates the database, the table and its partition.
    const first = await ingest(tablePath, props, [
      { id: 'a', ts: 1, name: 'x', dt: '2024-01-01' },
      { id: 'b', ts: 1, name: 'y', dt: '2024-01-01' },
    ]);
    assert.equal(first.catalogSync?.status, 'SYNCED', JSON.stringify(first.catalogSync));
    const firstInstant = first.results[0]!.instantTime!;
    const table = (await glue().send(new GetTableCommand({ DatabaseName: database, Name: tableName }))).Table!;
    assert.equal(table.TableType, 'EXTERNAL_TABLE');
    const hudiTable = await HudiTable.open(openStorage(tablePath));
    const avro = (await hudiTable.requireSchema('the test')).schema;
    const types = new Map(avro.fields.map((field) => [field.name, field.type]));
    // The ingest infers the types (dt as a date); the table's own Avro schema says which, and Hudi's rules map them.
    assert.deepEqual([...types.keys()], ['id', 'ts', 'name', 'dt']);
    const hive = (name: string): string => {
      const type = types.get(name);
      const base: unknown = Array.isArray(type) ? type.find((member) => member !== 'null') : type;
      if (typeof base === 'object' && base !== null && (base as { logicalType?: unknown }).logicalType === 'date') return 'date';
      return ({ string: 'string', long: 'bigint', int: 'int', double: 'double', boolean: 'boolean' } as Record<string, string>)[String(base)]!;
    };
    assert.deepEqual(
      table.StorageDescriptor?.Columns?.map((c) => ({ Name: c.Name, Type: c.Type, Comment: c.Comment ?? '' })),
      [
        ...['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'].map((name) => ({
          Name: name,
          Type: 'string',
          Comment: '',
        })),
        { Name: 'id', Type: hive('id'), Comment: '' },
        { Name: 'ts', Type: hive('ts'), Comment: '' },
        { Name: 'name', Type: hive('name'), Comment: '' },
      ],
      'columns: the meta fields first, the partition field left out, Hive types',
    );
    assert.deepEqual(
      table.PartitionKeys?.map((c) => ({ Name: c.Name, Type: c.Type })),
      [{ Name: 'dt', Type: hive('dt') }],
      "the partition key has the column's type",
    );
    assert.equal(table.StorageDescriptor?.InputFormat, 'org.apache.hudi.hadoop.HoodieParquetInputFormat');
    assert.equal(table.StorageDescriptor?.OutputFormat, 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat');
    assert.equal(table.StorageDescriptor?.SerdeInfo?.SerializationLibrary, 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe');
    assert.deepEqual(table.StorageDescriptor?.SerdeInfo?.Parameters, { 'hoodie.query.as.ro.table': 'false', path: tablePath, 'serialization.format': '1' });
    assert.equal(table.StorageDescriptor?.Location, tablePath);
    const nullable = (name: string): boolean => Array.isArray(types.get(name));
    const sparkType = (name: string): string =>
      (({ string: 'string', bigint: 'long', int: 'integer', double: 'double', boolean: 'boolean', date: 'date' }) as Record<string, string>)[hive(name)]!;
    const field = (name: string, type: string, isNullable: boolean): string => `{"name":"${name}","type":"${type}","nullable":${isNullable},"metadata":{}}`;
    const sparkSchema = `{"type":"struct","fields":[${[
      ...['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'].map((name) =>
        field(name, 'string', true),
      ),
      ...['id', 'ts', 'name', 'dt'].map((name) => field(name, sparkType(name), nullable(name))),
    ].join(',')}]}`;
    assert.deepEqual(table.Parameters, {
      EXTERNAL: 'TRUE',
      'hudi.metadata-listing-enabled': 'FALSE',
      'spark.sql.sources.provider': 'hudi',
      'spark.sql.sources.schema.numParts': '1',
      'spark.sql.sources.schema.part.0': sparkSchema,
      'spark.sql.sources.schema.numPartCols': '1',
      'spark.sql.sources.schema.partCol.0': 'dt',
      last_commit_time_sync: firstInstant,
    });
    const partitions = await partitionsOf(database, tableName);
    assert.deepEqual(
      partitions.map((p) => p.Values),
      [['2024-01-01']],
    );
    assert.equal(partitions[0]!.StorageDescriptor?.Location, `${tablePath}/2024-01-01`);
    assert.deepEqual(partitions[0]!.StorageDescriptor?.Columns, table.StorageDescriptor?.Columns, "a partition keeps the table's storage descriptor");
    assert.equal(partitions[0]!.StorageDescriptor?.InputFormat, table.StorageDescriptor?.InputFormat);
    assert.deepEqual(partitions[0]!.StorageDescriptor?.SerdeInfo, table.StorageDescriptor?.SerdeInfo);

    // 2. A commit into a new partition adds it; the old one stays as it was.
    const second = await ingest(tablePath, props, [{ id: 'c', ts: 2, name: 'z', dt: '2024-01-02' }]);
    assert.equal(second.catalogSync?.status, 'SYNCED', JSON.stringify(second.catalogSync));
    assert.ok(
      second.catalogSync?.status === 'SYNCED' && second.catalogSync.result.partitionSync === 'incremental',
      'the second sync starts from last_commit_time_sync',
    );
    assert.deepEqual(
      (await partitionsOf(database, tableName)).map((p) => [p.Values, p.StorageDescriptor?.Location]),
      [
        [['2024-01-01'], `${tablePath}/2024-01-01`],
        [['2024-01-02'], `${tablePath}/2024-01-02`],
      ],
    );
    const afterSecond = (await glue().send(new GetTableCommand({ DatabaseName: database, Name: tableName }))).Table!;
    assert.equal(afterSecond.Parameters?.['last_commit_time_sync'], second.results[0]!.instantTime);
    assert.deepEqual(afterSecond.StorageDescriptor?.Columns, table.StorageDescriptor?.Columns, 'same schema, same columns');

    // 3. The catalog's schema differs from the table's (an older one: this writer adds no columns, Spark's may):
    // the next sync replaces the columns and keeps the partition keys.
    const older = afterSecond.StorageDescriptor!.Columns!.filter((c) => c.Name !== 'name');
    await glue().send(
      new UpdateTableCommand({
        DatabaseName: database,
        TableInput: {
          Name: tableName,
          TableType: afterSecond.TableType,
          Parameters: afterSecond.Parameters,
          PartitionKeys: afterSecond.PartitionKeys,
          StorageDescriptor: { ...afterSecond.StorageDescriptor, Columns: older },
        },
      }),
    );
    const third = await syncCatalogAfterCommit(await HudiTable.open(openStorage(tablePath)), props, { glue: () => glue(), log: quiet });
    assert.ok(third?.status === 'SYNCED' && third.result.schemaChanged, JSON.stringify(third));
    const afterThird = (await glue().send(new GetTableCommand({ DatabaseName: database, Name: tableName }))).Table!;
    assert.deepEqual(afterThird.StorageDescriptor?.Columns, table.StorageDescriptor?.Columns, "the table's columns again");
    assert.deepEqual(afterThird.PartitionKeys, table.PartitionKeys);

    // 4. A clustering adds no partition: only last_commit_time_sync moves.
    const storage = openStorage(tablePath);
    const engine = await openParquetEngine({});
    let clusteringInstant: string | undefined;
    try {
      const clusteringTable = await HudiTable.open(storage, { mode: 'write' });
      const result = await runClusteringJob(clusteringTable, {
        mode: 'scheduleAndExecute',
        config: resolveClusteringConfig({}).config,
        force: true,
        lock: lockProviderFor(new Map(props), tableName, storage),
        engine,
      });
      clusteringInstant = result.instantTime;
    } finally {
      await engine.close();
    }
    assert.ok(clusteringInstant !== undefined, 'the clustering ran');
    const beforeClustering = afterThird;
    const synced = await syncCatalogAfterCommit(await HudiTable.open(storage), props, { glue: () => glue(), log: quiet });
    assert.equal(synced?.status, 'SYNCED', JSON.stringify(synced));
    assert.ok(synced?.status === 'SYNCED');
    assert.deepEqual(
      [synced.result.partitionsAdded, synced.result.partitionsUpdated, synced.result.partitionsDropped, synced.result.schemaChanged],
      [[], [], [], false],
    );
    const afterClustering = (await glue().send(new GetTableCommand({ DatabaseName: database, Name: tableName }))).Table!;
    assert.equal(afterClustering.Parameters?.['last_commit_time_sync'], clusteringInstant);
    assert.deepEqual({ ...afterClustering.Parameters, last_commit_time_sync: undefined }, { ...beforeClustering.Parameters, last_commit_time_sync: undefined });
    assert.deepEqual(afterClustering.StorageDescriptor?.Columns, beforeClustering.StorageDescriptor?.Columns);
    assert.equal((await partitionsOf(database, tableName)).length, 2);
  });

  test('a version 9 table: the incremental sync reads the partitions its 1.x commits wrote', async () => {
    const tablePath = await s3TablePath('glue_sync_v9');
    const tableName = `events_v9_${randomUUID().slice(0, 6)}`;
    const database = `db_${randomUUID().slice(0, 6)}`;
    const props = syncedTableProps(tableName, database, { 'hoodie.write.table.version': '9', 'hoodie.metadata.enable': 'false' });
    const first = await ingest(tablePath, props, [{ id: 'a', ts: 1, name: 'x', dt: '2024-01-01' }]);
    assert.equal(first.catalogSync?.status, 'SYNCED', JSON.stringify(first.catalogSync));
    assert.equal((await HudiTable.open(openStorage(tablePath))).config.version, 9);
    const second = await ingest(tablePath, props, [{ id: 'b', ts: 2, name: 'y', dt: '2024-01-02' }]);
    assert.ok(second.catalogSync?.status === 'SYNCED' && second.catalogSync.result.partitionSync === 'incremental', JSON.stringify(second.catalogSync));
    assert.deepEqual(
      (await partitionsOf(database, tableName)).map((p) => p.Values),
      [['2024-01-01'], ['2024-01-02']],
    );
  });

  test('meta sync off: nothing is synced; another sync tool is refused naming the key', async () => {
    assert.equal(glueSyncConfigFromProperties(new Map([['hoodie.table.name', 't']]), 'props'), undefined);
    assert.throws(
      () =>
        glueSyncConfigFromProperties(
          new Map([
            ['hoodie.table.name', 't'],
            ['hoodie.datasource.meta.sync.enable', 'true'],
          ]),
          'props',
        ),
      (error: unknown) =>
        error instanceof HudiError && /hoodie\.meta\.sync\.client\.tool\.class is not set/.test(error.message) && error.message.includes(GLUE_SYNC_TOOL),
    );
    assert.throws(
      () =>
        glueSyncConfigFromProperties(
          new Map([
            ['hoodie.table.name', 't'],
            ['hoodie.datasource.hive_sync.enable', 'true'],
            ['hoodie.meta.sync.client.tool.class', 'org.apache.hudi.sync.datahub.DataHubSyncTool'],
          ]),
          'props',
        ),
      /DataHubSyncTool: this build syncs to AWS Glue only/,
    );
  });

  test('defaults as Hudi infers them: table and database names, partition fields and extractor', () => {
    const base = new Map([
      ['hoodie.datasource.meta.sync.enable', 'true'],
      ['hoodie.datasource.hive_sync.mode', 'glue'],
      ['hoodie.table.name', 'trips'],
      ['hoodie.database.name', 'lake'],
    ]);
    const single = glueSyncConfigFromProperties(new Map([...base, ['hoodie.table.partition.fields', 'region']]), 'props')!;
    assert.deepEqual([single.database, single.table, single.partitionFields, single.extractor], ['lake', 'trips', ['region'], EXTRACTORS.singlePart]);
    const hiveStyle = glueSyncConfigFromProperties(
      new Map([...base, ['hoodie.table.partition.fields', 'region'], ['hoodie.datasource.write.hive_style_partitioning', 'true']]),
      'props',
    )!;
    assert.equal(hiveStyle.extractor, EXTRACTORS.hiveStyle);
    const multi = glueSyncConfigFromProperties(new Map([...base, ['hoodie.table.partition.fields', 'year,month']]), 'props')!;
    assert.equal(multi.extractor, EXTRACTORS.multiPart);
    const none = glueSyncConfigFromProperties(base, 'props')!;
    assert.deepEqual([none.partitionFields, none.extractor, none.database], [[], EXTRACTORS.nonPartitioned, 'lake']);
    assert.deepEqual(partitionValues(EXTRACTORS.multiPart, 'year=2024/month=05', 'p'), ['2024', '05']);
    assert.deepEqual(partitionValues(EXTRACTORS.multiPart, '2024/05', 'p'), ['2024', '05']);
    assert.deepEqual(partitionValues(EXTRACTORS.singlePart, '2024/05/01', 'p'), ['2024-05-01']);
    assert.deepEqual(partitionValues(EXTRACTORS.hiveStyle, 'region=eu', 'p'), ['eu']);
    assert.throws(() => partitionValues(EXTRACTORS.hiveStyle, 'eu', 'p'), /not in the form partition_key=partition_value/);
  });

  test("nested and logical types map to Hudi's Hive and Spark types", () => {
    const schema = {
      type: 'record' as const,
      name: 'r',
      fields: [
        { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } },
        { name: 'day', type: ['null', { type: 'int', logicalType: 'date' }] },
        { name: 'at', type: { type: 'long', logicalType: 'timestamp-micros' } },
        { name: 'tags', type: { type: 'array', items: 'string' } },
        { name: 'attrs', type: ['null', { type: 'map', values: ['null', 'long'] }] },
        {
          name: 'address',
          type: {
            type: 'record',
            name: 'a',
            fields: [
              { name: 'city', type: 'string' },
              { name: 'zip', type: ['null', 'int'] },
            ],
          },
        },
        { name: 'kind', type: { type: 'enum', name: 'k', symbols: ['A', 'B'] } },
      ],
    };
    const nodes = parquetSchemaOf(schema, 'test');
    assert.deepEqual(Object.fromEntries(hiveSchemaOf(nodes, false, 'test')), {
      amount: 'DECIMAL(10,2)',
      day: 'DATE',
      at: 'bigint',
      tags: 'ARRAY<string>',
      attrs: 'MAP<string,bigint>',
      address: 'STRUCT<city:string,zip:int>',
      kind: 'string',
    });
    assert.equal(hiveSchemaOf(nodes, true, 'test').get('at'), 'TIMESTAMP');
    assert.equal(
      sparkSchemaJson(nodes, [], 'test'),
      '{"type":"struct","fields":[' +
        '{"name":"amount","type":"decimal(10,2)","nullable":false,"metadata":{}},' +
        '{"name":"day","type":"date","nullable":true,"metadata":{}},' +
        '{"name":"at","type":"timestamp","nullable":false,"metadata":{}},' +
        '{"name":"tags","type":{"type":"array", "elementType":"string","containsNull":false},"nullable":false,"metadata":{}},' +
        '{"name":"attrs","type":{"type":"map", "keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},' +
        '{"name":"address","type":{"type":"struct","fields":[{"name":"city","type":"string","nullable":false,"metadata":{}},{"name":"zip","type":"integer","nullable":true,"metadata":{}}]},"nullable":false,"metadata":{}},' +
        '{"name":"kind","type":"string","nullable":false,"metadata":{}}]}',
    );
  });
});
