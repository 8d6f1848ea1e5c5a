/**
 * Sync a table to the AWS Glue Data Catalog the way Hudi 0.15's AwsGlueCatalogSyncTool does (HiveSyncTool's doSync
 * and syncHoodieTable over AWSGlueCatalogSyncClient), for each catalog table (catalogTables) in turn:
 * 1. the database: created when missing (hoodie.datasource.hive_sync.auto_create_database), else required;
 * 2. the table: created when missing, else its columns replaced if the schema changed and its parameters merged;
 * 3. the partitions: all of them against Glue's without a usable last_commit_time_sync, else those the commits since;
 * 4. last_commit_time_sync: the newest completed instant of the commits timeline.
 * Hudi 0.15's Glue client records no last_commit_completion_time_sync (its Hive client does), so neither do we.
 */
import {
  BatchCreatePartitionCommand,
  BatchDeletePartitionCommand,
  BatchUpdatePartitionCommand,
  type Column,
  CreateDatabaseCommand,
  CreateTableCommand,
  GetDatabaseCommand,
  GetPartitionsCommand,
  GetTableCommand,
  type GlueClient,
  type PartitionInput,
  type StorageDescriptor,
  type Table,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue';
import { CatalogSyncError, errorMessage } from '../errors.js';
import { withMetaFields } from '../table/schema.js';
import { type HudiTable, listPartitions } from '../table/table.js';
import { compareInstantTimes } from '../timeline/instant.js';
import { readCommitMetadata } from '../timeline/timeline.js';
import { type GlueSyncConfig, partitionValues } from './config.js';
import { hiveSchemaOf, type ParquetNode, parquetSchemaOf, partitionKeyType, sparkSchemaJson } from './hive-schema.js';

/** The formats Hudi's HiveSyncTool registers for a copy-on-write table (and a read-optimized one) with Parquet base files. */
export const HUDI_GLUE_FORMATS = {
  inputFormat: 'org.apache.hudi.hadoop.HoodieParquetInputFormat',
  realtimeInputFormat: 'org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat',
  outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
  serde: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
} as const;

/** HoodieInputFormatUtils' com.uber.hoodie classes (hoodie.datasource.hive_sync.use_pre_apache_input_format). */
export const PRE_APACHE_INPUT_FORMATS = {
  inputFormat: 'com.uber.hoodie.hadoop.HoodieInputFormat',
  realtimeInputFormat: 'com.uber.hoodie.hadoop.realtime.HoodieRealtimeInputFormat',
} as const;

/** HiveSyncTool's SUFFIX_READ_OPTIMIZED_TABLE and SUFFIX_SNAPSHOT_TABLE. */
export const READ_OPTIMIZED_SUFFIX = '_ro';
export const SNAPSHOT_SUFFIX = '_rt';

/** One catalog table a sync writes: its name, and how it reads the Hudi table. */
export interface CatalogTable {
  readonly name: string;
  /** The real-time input format (base files merged with their log files). */
  readonly realtime: boolean;
  /** Spark's serde property hoodie.query.as.ro.table. */
  readonly readOptimized: boolean;
}

/**
 * HiveSyncTool.initTableNameVars and doSync: the catalog tables of `tableType`, in the order they are synced.
 *
 * A copy-on-write table is one catalog table, under its name. A merge-on-read table is, with
 * hoodie.datasource.hive_sync.table.strategy ALL, `<name>_ro` (or `<name>` with skip_ro_suffix: read-optimized,
 * HoodieParquetInputFormat, hoodie.query.as.ro.table=true), then `<name>_rt` (HoodieParquetRealtimeInputFormat,
 * hoodie.query.as.ro.table=false), then `<name>` again as a real-time table when
 * hoodie.meta.sync.sync_snapshot_with_table_name is on (its default); RO or RT: that one table, as `<name>`.
 */
export function catalogTables(tableType: 'COPY_ON_WRITE' | 'MERGE_ON_READ', config: GlueSyncConfig): CatalogTable[] {
  const name = config.table;
  if (tableType === 'COPY_ON_WRITE') return [{ name, realtime: false, readOptimized: false }];
  switch (config.tableStrategy) {
    case 'RO':
      return [{ name, realtime: false, readOptimized: true }];
    case 'RT':
      return [{ name, realtime: true, readOptimized: false }];
    case 'ALL': {
      const tables: CatalogTable[] = [
        { name: config.skipRoSuffix ? name : `${name}${READ_OPTIMIZED_SUFFIX}`, realtime: false, readOptimized: true },
        { name: `${name}${SNAPSHOT_SUFFIX}`, realtime: true, readOptimized: false },
      ];
      if (config.syncSnapshotWithTableName) tables.push({ name, realtime: true, readOptimized: false });
      return tables;
    }
  }
}

/** HoodieInputFormatUtils.getInputFormatClassName for Parquet base files. */
export function inputFormatOf(target: Pick<CatalogTable, 'realtime'>, config: Pick<GlueSyncConfig, 'usePreApacheInputFormat'>): string {
  const formats = config.usePreApacheInputFormat ? PRE_APACHE_INPUT_FORMATS : HUDI_GLUE_FORMATS;
  return target.realtime ? formats.realtimeInputFormat : formats.inputFormat;
}

/** Table parameter names Hudi's sync writes. */
export const GLUE_PARAMETERS = {
  lastCommitTimeSync: 'last_commit_time_sync',
  metadataListing: 'hudi.metadata-listing-enabled',
  external: 'EXTERNAL',
} as const;

const MAX_PARTITIONS_PER_CHANGE_REQUEST = 100;
const MAX_DELETE_PARTITIONS_PER_REQUEST = 25;

/** What the sync did to one catalog table. */
export interface GlueTableSyncResult {
  readonly table: string;
  readonly tableCreated: boolean;
  readonly schemaChanged: boolean;
  readonly propertiesChanged: boolean;
  /** Full (every partition listed) or incremental (the commits since last_commit_time_sync). */
  readonly partitionSync: 'full' | 'incremental' | 'none';
  readonly partitionsAdded: readonly string[];
  readonly partitionsUpdated: readonly string[];
  readonly partitionsDropped: readonly string[];
  /** What last_commit_time_sync says now (undefined: the table has no completed commit). */
  readonly lastCommitTimeSync: string | undefined;
}

/**
 * What the sync did: the first catalog table's result at the top (a copy-on-write table's only one; a merge-on-read
 * table's read-optimized one), and every catalog table's, in the order synced, in `tables`.
 */
export interface GlueSyncResult extends GlueTableSyncResult {
  readonly database: string;
  readonly databaseCreated: boolean;
  readonly tables: readonly GlueTableSyncResult[];
}

/** Hudi's S3Utils.s3aToS3: catalogs get s3:// locations. */
export function s3aToS3(uri: string): string {
  return uri.replace(/^s3a:\/\//, 's3://');
}

function withoutScheme(location: string): string {
  return location.replace(/^[a-z0-9]+:\/\/[^/]*/, '').replace(/\/+$/, '');
}

/** What the sync derives from the table's schema: the columns, the partition keys, and the Spark properties. */
export interface CatalogSchema {
  readonly columns: Column[];
  readonly partitionKeys: Column[];
  /** Column name → Hive type, partition fields included (for the schema comparison). */
  readonly hiveSchema: ReadonlyMap<string, string>;
  readonly nodes: readonly ParquetNode[];
}

export function catalogSchema(table: HudiTable, schema: Parameters<typeof withMetaFields>[0], config: GlueSyncConfig): CatalogSchema {
  const location = table.storage.uriOf('.hoodie');
  const nodes = parquetSchemaOf(config.omitMetadataFields ? schema : withMetaFields(schema), location);
  const hiveSchema = hiveSchemaOf(nodes, config.supportTimestamp, location);
  // AWSGlueCatalogSyncClient: lower-case types, empty comments, partition fields apart.
  const columns = [...hiveSchema]
    .filter(([name]) => !config.partitionFields.includes(name))
    .map(([name, type]) => ({ Name: name, Type: type.toLowerCase(), Comment: '' }));
  const partitionKeys = config.partitionFields.map((name) => ({ Name: name, Type: partitionKeyType(hiveSchema, name).toLowerCase(), Comment: '' }));
  return { columns, partitionKeys, hiveSchema, nodes };
}

/** HiveSyncTool's table properties: hive_sync.table_properties, then Spark's data source properties. */
export function tableProperties(config: GlueSyncConfig, schema: CatalogSchema, location: string): Map<string, string> {
  const props = new Map(config.tableProperties);
  if (!config.syncAsDataSource) return props;
  props.set('spark.sql.sources.provider', 'hudi');
  if (config.sparkVersion !== '') props.set('spark.sql.create.version', config.sparkVersion);
  const json = sparkSchemaJson(schema.nodes, config.partitionFields, location);
  const parts = Math.ceil(json.length / config.schemaLengthThreshold);
  props.set('spark.sql.sources.schema.numParts', String(parts));
  for (let i = 0; i < parts; i++)
    props.set(`spark.sql.sources.schema.part.${i}`, json.slice(i * config.schemaLengthThreshold, (i + 1) * config.schemaLengthThreshold));
  if (config.partitionFields.length > 0) {
    props.set('spark.sql.sources.schema.numPartCols', String(config.partitionFields.length));
    config.partitionFields.forEach((field, i) => {
      props.set(`spark.sql.sources.schema.partCol.${i}`, field);
    });
  }
  return props;
}

/** HiveSyncTool's serde properties: hive_sync.serde_properties, then Spark's (path, hoodie.query.as.ro.table). */
export function serdeProperties(config: GlueSyncConfig, basePath: string, readOptimized = false): Map<string, string> {
  const props = new Map(config.serdeProperties);
  if (config.syncAsDataSource) {
    props.set('path', basePath);
    props.set('hoodie.query.as.ro.table', String(readOptimized));
  }
  return props;
}

/** The TableInput AWSGlueCatalogSyncClient.createTable sends (for `target`; default: a copy-on-write table's). */
export function newTableInput(
  config: GlueSyncConfig,
  basePath: string,
  schema: CatalogSchema,
  now: Date,
  target: CatalogTable = { name: config.table, realtime: false, readOptimized: false },
): TableInput {
  const parameters: Record<string, string> = {};
  if (!config.createManagedTable) parameters[GLUE_PARAMETERS.external] = 'TRUE';
  parameters[GLUE_PARAMETERS.metadataListing] = String(config.metadataListing).toUpperCase();
  for (const [key, value] of tableProperties(config, schema, basePath)) parameters[key] = value;
  const serde = Object.fromEntries(serdeProperties(config, basePath, target.readOptimized));
  serde['serialization.format'] = '1';
  return {
    Name: target.name,
    TableType: 'EXTERNAL_TABLE',
    Parameters: parameters,
    PartitionKeys: schema.partitionKeys,
    StorageDescriptor: {
      SerdeInfo: { SerializationLibrary: HUDI_GLUE_FORMATS.serde, Parameters: serde },
      Location: s3aToS3(basePath),
      InputFormat: inputFormatOf(target, config),
      OutputFormat: HUDI_GLUE_FORMATS.outputFormat,
      Columns: schema.columns,
    },
    LastAccessTime: now,
    LastAnalyzedTime: now,
  };
}

/** A Glue table as the TableInput that keeps it (what Hudi's client sends back with one thing changed). */
function inputOf(table: Table, now: Date, change: Partial<TableInput>): TableInput {
  return {
    Name: table.Name,
    TableType: table.TableType,
    Parameters: table.Parameters,
    PartitionKeys: table.PartitionKeys,
    StorageDescriptor: table.StorageDescriptor,
    LastAccessTime: now,
    LastAnalyzedTime: now,
    ...change,
  };
}

/** Whether the Glue columns (with partition keys) differ from the schema's: names or lower-cased types. */
function schemaDiffers(table: Table, schema: CatalogSchema): boolean {
  const remote = new Map(
    [...(table.StorageDescriptor?.Columns ?? []), ...(table.PartitionKeys ?? [])].map((c) => [c.Name?.toLowerCase(), c.Type?.toLowerCase()]),
  );
  const local = new Map([...schema.columns, ...schema.partitionKeys].map((c) => [c.Name?.toLowerCase(), c.Type?.toLowerCase()]));
  if (remote.size !== local.size) return true;
  for (const [name, type] of local) if (remote.get(name) !== type) return true;
  return false;
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'name' in error && (error as { name: unknown }).name === 'EntityNotFoundException';
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface GlueSyncOptions {
  readonly now?: Date;
}

/** Run the sync (see the top of this file). Failures are CatalogSyncErrors naming the catalog table. */
export async function syncGlueCatalog(table: HudiTable, config: GlueSyncConfig, glue: GlueClient, options: GlueSyncOptions = {}): Promise<GlueSyncResult> {
  const id = `glue:${config.database}.${config.table}`;
  try {
    return await sync(table, config, glue, options);
  } catch (error) {
    if (error instanceof CatalogSyncError) throw error;
    throw new CatalogSyncError(`syncing ${table.storage.uri} to the Glue Data Catalog failed: ${errorMessage(error)}`, {
      location: id,
      fix: "check the functions' Glue permissions and the hoodie.datasource.hive_sync.* keys; the next commit's sync catches up",
      cause: error,
    });
  }
}

async function sync(table: HudiTable, config: GlueSyncConfig, glue: GlueClient, options: GlueSyncOptions): Promise<GlueSyncResult> {
  const now = options.now ?? new Date();
  const { database } = config;

  let databaseCreated = false;
  if (!(await databaseExists(glue, database))) {
    if (!config.autoCreateDatabase)
      throw new CatalogSyncError(`the Glue database ${database} does not exist`, {
        location: `glue:${database}`,
        fix: 'create it, or set hoodie.datasource.hive_sync.auto_create_database=true',
      });
    await glue.send(
      new CreateDatabaseCommand({
        DatabaseInput: { Name: database, Description: 'Automatically created by org.apache.hudi.aws.sync.AWSGlueCatalogSyncClient' },
      }),
    );
    databaseCreated = true;
  }

  const tableSchema = await table.requireSchema('syncing it to a catalog');
  const schema = catalogSchema(table, tableSchema.schema, config);
  const results: GlueTableSyncResult[] = [];
  // Hudi syncs the catalog tables one after the other, each from its own last_commit_time_sync.
  for (const target of catalogTables(table.config.type, config)) results.push(await syncTable(table, config, glue, schema, target, now));
  return { ...results[0]!, database, databaseCreated, tables: results };
}

/**
 * A missing table is created as EXTERNAL_TABLE with Hudi's input format, Hive's Parquet output format and serde, the
 * columns (Hive types, the _hoodie_* meta fields first, partition fields left out), the partition keys, parameters
 * EXTERNAL=TRUE, hudi.metadata-listing-enabled and Spark's data source properties. An existing one gets its columns
 * replaced if the schema changed and the parameters merged in when any is missing or different; its serde and input
 * format are left alone, as the 0.15 Glue client (it has no updateSerdeProperties) does.
 */
async function syncTable(
  table: HudiTable,
  config: GlueSyncConfig,
  glue: GlueClient,
  schema: CatalogSchema,
  target: CatalogTable,
  now: Date,
): Promise<GlueTableSyncResult> {
  const skipArchive = config.skipTableArchive;
  const basePath = table.storage.uri.replace(/\/+$/, '');
  const { database } = config;
  const tableName = target.name;
  let existing = await getTable(glue, database, tableName);
  const tableCreated = existing === undefined;
  let schemaChanged = true;
  let propertiesChanged = true;
  if (existing === undefined) {
    await glue.send(new CreateTableCommand({ DatabaseName: database, TableInput: newTableInput(config, basePath, schema, now, target) }));
  } else {
    schemaChanged = schemaDiffers(existing, schema);
    if (schemaChanged) {
      // updateTableSchema: the table's storage descriptor with the new columns; parameters and partition keys kept.
      await glue.send(
        new UpdateTableCommand({
          DatabaseName: database,
          SkipArchive: skipArchive,
          TableInput: inputOf(existing, now, { StorageDescriptor: { ...existing.StorageDescriptor, Columns: schema.columns } }),
        }),
      );
      existing = (await getTable(glue, database, tableName))!;
    }
    const wanted = tableProperties(config, schema, basePath);
    wanted.set(GLUE_PARAMETERS.metadataListing, String(config.metadataListing).toUpperCase());
    propertiesChanged = await updateTableParameters(glue, database, existing, wanted, now, skipArchive);
  }
  const lastSynced = !tableCreated && config.incremental ? existing?.Parameters?.[GLUE_PARAMETERS.lastCommitTimeSync] : undefined;

  const writes = table.timeline.completedWrites();
  const glueTable = (await getTable(glue, database, tableName))!;
  const partitions = await syncPartitions(table, config, tableName, glue, glueTable, basePath, lastSynced, writes);

  const changed = schemaChanged || propertiesChanged || partitions.added.length + partitions.updated.length + partitions.dropped.length > 0;
  const newest = writes.at(-1)?.time;
  let lastCommitTimeSync = lastSynced ?? existing?.Parameters?.[GLUE_PARAMETERS.lastCommitTimeSync];
  if (newest !== undefined && (!config.conditionalSync || changed)) {
    const current = (await getTable(glue, database, tableName))!;
    await updateTableParameters(glue, database, current, new Map([[GLUE_PARAMETERS.lastCommitTimeSync, newest]]), now, skipArchive);
    lastCommitTimeSync = newest;
  }
  return {
    table: tableName,
    tableCreated,
    schemaChanged,
    propertiesChanged,
    partitionSync: partitions.mode,
    partitionsAdded: partitions.added,
    partitionsUpdated: partitions.updated,
    partitionsDropped: partitions.dropped,
    lastCommitTimeSync,
  };
}

async function databaseExists(glue: GlueClient, name: string): Promise<boolean> {
  try {
    await glue.send(new GetDatabaseCommand({ Name: name }));
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

async function getTable(glue: GlueClient, database: string, name: string): Promise<Table | undefined> {
  try {
    return (await glue.send(new GetTableCommand({ DatabaseName: database, Name: name }))).Table;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** AWSGlueCatalogSyncClient.updateTableParameters: merge `updating` in, unless every one is there already. */
async function updateTableParameters(
  glue: GlueClient,
  database: string,
  table: Table,
  updating: ReadonlyMap<string, string>,
  now: Date,
  skipArchive: boolean,
): Promise<boolean> {
  const remote = table.Parameters ?? {};
  if ([...updating].every(([key, value]) => remote[key] === value)) return false;
  const parameters = { ...remote, ...Object.fromEntries(updating) };
  await glue.send(new UpdateTableCommand({ DatabaseName: database, SkipArchive: skipArchive, TableInput: inputOf(table, now, { Parameters: parameters }) }));
  return true;
}

interface PartitionChanges {
  readonly mode: 'full' | 'incremental' | 'none';
  readonly added: string[];
  readonly updated: string[];
  readonly dropped: string[];
}

/**
 * With no last_commit_time_sync (or one older than the active timeline): every partition on storage against every
 * partition in Glue (add, relocate, drop); else the partitions the commits since then wrote (add, relocate) and deleted
 * (drop). Each partition's storage descriptor is the table's with its own location. A clustering adds no partition, so
 * its sync only moves last_commit_time_sync (the newest of commits, delta commits and replacecommits).
 */
async function syncPartitions(
  table: HudiTable,
  config: GlueSyncConfig,
  tableName: string,
  glue: GlueClient,
  glueTable: Table,
  basePath: string,
  lastSynced: string | undefined,
  writes: ReturnType<HudiTable['timeline']['completedWrites']>,
): Promise<PartitionChanges> {
  if (config.partitionFields.length === 0) return { mode: 'none', added: [], updated: [], dropped: [] };
  const location = `glue:${config.database}.${tableName}`;
  const first = writes[0]?.time;
  // HiveSyncTool: no sync time, or one older than the active timeline (its commits were archived): list everything.
  const full = lastSynced === undefined || (first !== undefined && compareInstantTimes(lastSynced, first) < 0);

  let written: string[];
  let dropped = new Set<string>();
  if (full) {
    written = (await listPartitions(table.storage)).map((p) => p.partitionPath);
  } else {
    const since = writes.filter((instant) => compareInstantTimes(instant.time, lastSynced!) > 0);
    const touched = new Set<string>();
    for (const instant of since) {
      const metadata = await readCommitMetadata(table.storage, instant, table.layout);
      for (const partition of Object.keys(metadata.partitionToWriteStats)) touched.add(partition);
      for (const partition of Object.keys(metadata.partitionToReplaceFileIds ?? {})) {
        touched.add(partition);
        if (metadata.operationType === 'DELETE_PARTITION') dropped.add(partition);
      }
    }
    written = [...touched].sort();
  }

  const inGlue = await allPartitions(glue, config.database, tableName);
  const byValues = new Map(inGlue.map((p) => [p.values.join(', '), p.location]));
  const add: string[] = [];
  const update: string[] = [];
  const drop: string[] = [];
  for (const partition of written) {
    const values = partitionValues(config.extractor, partition, location);
    const key = values.join(', ');
    const partitionLocation = `${s3aToS3(basePath)}/${partition}`;
    if (dropped.has(partition)) {
      if (byValues.has(key)) drop.push(partition);
      continue;
    }
    const current = byValues.get(key);
    if (current === undefined) add.push(partition);
    else if (withoutScheme(current) !== withoutScheme(partitionLocation)) update.push(partition);
  }
  if (full) {
    // Partitions in Glue that storage no longer has.
    const onStorage = new Set(written.map((partition) => partitionValues(config.extractor, partition, location).join(', ')));
    for (const partition of inGlue) {
      if (!onStorage.has(partition.values.join(', '))) drop.push(relativePartition(partition.location, basePath) ?? partition.values.join('/'));
    }
    dropped = new Set(drop);
  }

  const sd = glueTable.StorageDescriptor ?? {};
  const input = (partition: string): PartitionInput => ({
    Values: partitionValues(config.extractor, partition, location),
    StorageDescriptor: { ...sd, Location: `${s3aToS3(basePath)}/${partition}` } satisfies StorageDescriptor,
  });
  for (const batch of chunks(add, MAX_PARTITIONS_PER_CHANGE_REQUEST)) {
    const response = await glue.send(
      new BatchCreatePartitionCommand({ DatabaseName: config.database, TableName: tableName, PartitionInputList: batch.map(input) }),
    );
    const errors = (response.Errors ?? []).filter((e) => e.ErrorDetail?.ErrorCode !== 'AlreadyExistsException');
    if (errors.length > 0)
      throw new CatalogSyncError(
        `adding partitions failed: ${errors.map((e) => `${(e.PartitionValues ?? []).join('/')}: ${e.ErrorDetail?.ErrorCode} ${e.ErrorDetail?.ErrorMessage ?? ''}`).join('; ')}`,
        { location },
      );
  }
  for (const batch of chunks(update, MAX_PARTITIONS_PER_CHANGE_REQUEST)) {
    const response = await glue.send(
      new BatchUpdatePartitionCommand({
        DatabaseName: config.database,
        TableName: tableName,
        Entries: batch.map((partition) => ({ PartitionValueList: partitionValues(config.extractor, partition, location), PartitionInput: input(partition) })),
      }),
    );
    if ((response.Errors ?? []).length > 0) throw new CatalogSyncError(`updating partitions failed: ${JSON.stringify(response.Errors)}`, { location });
  }
  const dropValues = full
    ? inGlue.filter((p) => dropped.has(relativePartition(p.location, basePath) ?? p.values.join('/'))).map((p) => p.values)
    : drop.map((partition) => partitionValues(config.extractor, partition, location));
  for (const batch of chunks(dropValues, MAX_DELETE_PARTITIONS_PER_REQUEST)) {
    const response = await glue.send(
      new BatchDeletePartitionCommand({
        DatabaseName: config.database,
        TableName: tableName,
        PartitionsToDelete: batch.map((values) => ({ Values: values })),
      }),
    );
    if ((response.Errors ?? []).length > 0) throw new CatalogSyncError(`dropping partitions failed: ${JSON.stringify(response.Errors)}`, { location });
  }
  return { mode: full ? 'full' : 'incremental', added: add, updated: update, dropped: drop };
}

function relativePartition(location: string, basePath: string): string | undefined {
  const base = withoutScheme(s3aToS3(basePath));
  const path = withoutScheme(location);
  return path.startsWith(`${base}/`) ? path.slice(base.length + 1) : undefined;
}

async function allPartitions(glue: GlueClient, database: string, table: string): Promise<{ values: string[]; location: string }[]> {
  const out: { values: string[]; location: string }[] = [];
  let token: string | undefined;
  do {
    const response = await glue.send(
      new GetPartitionsCommand({ DatabaseName: database, TableName: table, ...(token === undefined ? {} : { NextToken: token }) }),
    );
    for (const partition of response.Partitions ?? []) out.push({ values: partition.Values ?? [], location: partition.StorageDescriptor?.Location ?? '' });
    token = response.NextToken;
  } while (token !== undefined && token !== '');
  return out;
}
