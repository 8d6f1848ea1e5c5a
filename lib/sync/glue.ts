/**
 * Sync a table to the AWS Glue Data Catalog the way Hudi's AwsGlueCatalogSyncTool does (HiveSyncTool's doSync and
 * syncHoodieTable over AWSGlueCatalogSyncClient), for each catalog table (catalogTables) in turn:
 * 1. the database: created when missing (hoodie.datasource.hive_sync.auto_create_database), else required;
 * 2. the table: created when missing, else its columns replaced if the schema changed and its parameters merged;
 * 3. the partitions: all of them against Glue's without a usable last_commit_time_sync, else those the commits since;
 * 4. last_commit_time_sync: the newest completed instant of the commits timeline.
 * Where Hudi 0.15 and 1.x differ (last_commit_completion_time_sync, serde updates, a moved table, a table already
 * synced, dropped partitions), the table's version picks the release (behaviour.ts).
 */
import {
  BatchCreatePartitionCommand,
  BatchDeletePartitionCommand,
  BatchUpdatePartitionCommand,
  type Column,
  CreateDatabaseCommand,
  CreateTableCommand,
  DeleteTableCommand,
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
import { readCleanMetadataOf } from '../cleaning/timeline-facts.js';
import { CatalogSyncError, errorMessage } from '../errors.js';
import { withMetaFields } from '../table/schema.js';
import { type HudiTable, listPartitions } from '../table/table.js';
import type { WriteOperationType } from '../timeline/commit-metadata.js';
import { compareInstantTimes, type Instant } from '../timeline/instant.js';
import { readCommitMetadata, type Timeline } from '../timeline/timeline.js';
import { type GlueSyncBehaviour, glueSyncBehaviourOf } from './behaviour.js';
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
  /** Written by the 1.x Glue client only (see behaviour.ts). */
  lastCommitCompletionTimeSync: 'last_commit_completion_time_sync',
  metadataListing: 'hudi.metadata-listing-enabled',
  external: 'EXTERNAL',
} as const;

const MAX_PARTITIONS_PER_CHANGE_REQUEST = 100;
const MAX_DELETE_PARTITIONS_PER_REQUEST = 25;

/** What the sync did to one catalog table. */
export interface GlueTableSyncResult {
  readonly table: string;
  readonly tableCreated: boolean;
  /** Dropped and created again because its location was not the base path (Hudi 1.x only). */
  readonly tableRecreated: boolean;
  /** Left untouched: last_commit_time_sync was already the newest commit (Hudi 1.1 only). */
  readonly alreadySynced: boolean;
  readonly schemaChanged: boolean;
  readonly propertiesChanged: boolean;
  /** Full (every partition listed) or incremental (the commits since last_commit_time_sync). */
  readonly partitionSync: 'full' | 'incremental' | 'none';
  readonly partitionsAdded: readonly string[];
  readonly partitionsUpdated: readonly string[];
  readonly partitionsDropped: readonly string[];
  /** What last_commit_time_sync says now (undefined: the table has no completed commit). */
  readonly lastCommitTimeSync: string | undefined;
  /** What last_commit_completion_time_sync says now (undefined on a 0.15-synced table). */
  readonly lastCommitCompletionTimeSync: string | undefined;
}

/**
 * What the sync did: the first catalog table's result at the top (a copy-on-write table's only one; a merge-on-read
 * table's read-optimized one), and every catalog table's, in the order synced, in `tables`.
 */
export interface GlueSyncResult extends GlueTableSyncResult {
  /** The Hudi release whose sync this was (by the table's version). */
  readonly release: GlueSyncBehaviour['release'];
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
  const behaviour = glueSyncBehaviourOf(table.config.version, `glue:${database}.${config.table}`);

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
  for (const target of catalogTables(table.config.type, config)) results.push(await syncTable(table, config, glue, schema, target, now, behaviour));
  return { ...results[0]!, release: behaviour.release, database, databaseCreated, tables: results };
}

/** What a sync records of the commits timeline: its newest instant and (1.x) the newest completion time. */
interface SyncMark {
  readonly time: string | undefined;
  readonly completionTime: string | undefined;
}

function syncMarkOf(writes: readonly Instant[], behaviour: GlueSyncBehaviour): SyncMark {
  const time = writes.at(-1)?.time;
  if (!behaviour.completionTimeSync) return { time, completionTime: undefined };
  // HoodieTimeline.getLatestCompletionTime: the greatest completion time, whichever instant it belongs to.
  let completionTime: string | undefined;
  for (const instant of writes)
    if (instant.completionTime !== undefined && (completionTime === undefined || compareInstantTimes(instant.completionTime, completionTime) > 0))
      completionTime = instant.completionTime;
  return { time, completionTime };
}

/**
 * A missing table is created as EXTERNAL_TABLE with Hudi's input format, Hive's Parquet output format and serde, the
 * columns (Hive types, the _hoodie_* meta fields first, partition fields left out), the partition keys, parameters
 * EXTERNAL=TRUE, hudi.metadata-listing-enabled and Spark's data source properties. An existing one gets its columns
 * replaced if the schema changed and the parameters merged in when any is missing or different; its input format is
 * left alone, and its serde parameters too under 0.15 (no updateSerdeProperties there) but replaced under 1.x.
 */
async function syncTable(
  table: HudiTable,
  config: GlueSyncConfig,
  glue: GlueClient,
  schema: CatalogSchema,
  target: CatalogTable,
  now: Date,
  behaviour: GlueSyncBehaviour,
): Promise<GlueTableSyncResult> {
  const skipArchive = config.skipTableArchive;
  const basePath = table.storage.uri.replace(/\/+$/, '');
  const { database } = config;
  const tableName = target.name;
  const writes = table.timeline.completedWrites();
  const mark = syncMarkOf(writes, behaviour);
  let existing = await getTable(glue, database, tableName);
  const synced = (parameters: Record<string, string> | undefined) => ({
    lastCommitTimeSync: parameters?.[GLUE_PARAMETERS.lastCommitTimeSync],
    lastCommitCompletionTimeSync: parameters?.[GLUE_PARAMETERS.lastCommitCompletionTimeSync],
  });
  const nothing = { tableCreated: false, tableRecreated: false, alreadySynced: false, schemaChanged: false, propertiesChanged: false };

  // 1.x HiveSyncTool: a table somewhere else than the base path is created again, with every partition.
  if (existing !== undefined && behaviour.recreatesMovedTable && withoutScheme(existing.StorageDescriptor?.Location ?? '') !== withoutScheme(basePath)) {
    await recreateTable(glue, config, newTableInput(config, basePath, schema, now, target), now);
    const glueTable = (await getTable(glue, database, tableName))!;
    const partitions = await syncPartitions(table, config, tableName, glue, glueTable, basePath, undefined, writes, behaviour);
    const recorded = await recordSync(glue, config, tableName, mark, now);
    return {
      ...nothing,
      table: tableName,
      tableRecreated: true,
      schemaChanged: true,
      propertiesChanged: true,
      ...changesOf(partitions),
      ...(recorded ?? synced(undefined)),
    };
  }

  // 1.1 HiveSyncTool.isAlreadySynced: the newest commit is synced already (and its completion time, when recorded).
  if (existing !== undefined && behaviour.skipsSyncedTable && config.incremental && mark.time !== undefined) {
    const recorded = synced(existing.Parameters);
    const completionMatches = recorded.lastCommitCompletionTimeSync === undefined || recorded.lastCommitCompletionTimeSync === mark.completionTime;
    if (recorded.lastCommitTimeSync === mark.time && completionMatches)
      return {
        ...nothing,
        table: tableName,
        alreadySynced: true,
        partitionSync: 'none',
        partitionsAdded: [],
        partitionsUpdated: [],
        partitionsDropped: [],
        ...recorded,
      };
  }

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
    let serdeChanged = false;
    if (behaviour.updatesSerdeProperties) {
      serdeChanged = await updateSerdeParameters(glue, database, existing, serdeProperties(config, basePath, target.readOptimized));
      if (serdeChanged) existing = (await getTable(glue, database, tableName))!;
    }
    const wanted = tableProperties(config, schema, basePath);
    wanted.set(GLUE_PARAMETERS.metadataListing, String(config.metadataListing).toUpperCase());
    propertiesChanged = (await updateTableParameters(glue, database, existing, wanted, now, skipArchive)) || serdeChanged;
  }
  const recorded = synced(existing?.Parameters);
  const lastSynced = !tableCreated && config.incremental ? recorded.lastCommitTimeSync : undefined;
  const lastCompletionSynced = lastSynced !== undefined && behaviour.completionTimeSync ? recorded.lastCommitCompletionTimeSync : undefined;

  const glueTable = (await getTable(glue, database, tableName))!;
  const partitions = await syncPartitions(table, config, tableName, glue, glueTable, basePath, lastSynced, writes, behaviour, lastCompletionSynced);

  const changed = schemaChanged || propertiesChanged || partitions.added.length + partitions.updated.length + partitions.dropped.length > 0;
  let after = tableCreated ? synced(undefined) : recorded;
  if (!config.conditionalSync || changed) after = (await recordSync(glue, config, tableName, mark, now)) ?? after;
  return { ...nothing, table: tableName, tableCreated, schemaChanged, propertiesChanged, ...changesOf(partitions), ...after };
}

function changesOf(partitions: PartitionChanges) {
  return { partitionSync: partitions.mode, partitionsAdded: partitions.added, partitionsUpdated: partitions.updated, partitionsDropped: partitions.dropped };
}

/**
 * updateLastCommitTimeSynced: last_commit_time_sync (and, 1.x, last_commit_completion_time_sync) merged into the
 * table's parameters. Undefined when the table has no completed commit (nothing is written then).
 */
async function recordSync(
  glue: GlueClient,
  config: GlueSyncConfig,
  tableName: string,
  mark: SyncMark,
  now: Date,
): Promise<{ lastCommitTimeSync: string; lastCommitCompletionTimeSync: string | undefined } | undefined> {
  if (mark.time === undefined) return undefined;
  const current = (await getTable(glue, config.database, tableName))!;
  const updating = new Map<string, string>([[GLUE_PARAMETERS.lastCommitTimeSync, mark.time]]);
  if (mark.completionTime !== undefined) updating.set(GLUE_PARAMETERS.lastCommitCompletionTimeSync, mark.completionTime);
  await updateTableParameters(glue, config.database, current, updating, now, config.skipTableArchive);
  return {
    lastCommitTimeSync: mark.time,
    lastCommitCompletionTimeSync: mark.completionTime ?? current.Parameters?.[GLUE_PARAMETERS.lastCommitCompletionTimeSync],
  };
}

/**
 * The 1.x Glue client's createOrReplaceTable for an existing table: a temporary table `<name>_temp<epoch seconds>`
 * created and dropped first (so a definition Glue refuses never costs the table), then the table dropped (its
 * partitions with it) and created anew.
 */
async function recreateTable(glue: GlueClient, config: GlueSyncConfig, input: TableInput, now: Date): Promise<void> {
  const name = input.Name!;
  const temporary = `${name}_temp${Math.floor(now.getTime() / 1000)}`;
  await glue.send(new CreateTableCommand({ DatabaseName: config.database, TableInput: { ...input, Name: temporary } }));
  await glue.send(new DeleteTableCommand({ DatabaseName: config.database, Name: temporary }));
  await glue.send(new DeleteTableCommand({ DatabaseName: config.database, Name: name }));
  await glue.send(new CreateTableCommand({ DatabaseName: config.database, TableInput: input }));
}

/**
 * The 1.x Glue client's updateSerdeProperties: serialization.format=1 added when absent; nothing done when the table
 * has as many serde parameters, all equal; else the serde (Hive's Parquet serde, these parameters) replaced, the
 * input format kept. No parameters wanted (sync_as_datasource off, no serde_properties): nothing done.
 */
async function updateSerdeParameters(glue: GlueClient, database: string, table: Table, wanted: Map<string, string>): Promise<boolean> {
  if (wanted.size === 0) return false;
  if (!wanted.has('serialization.format')) wanted.set('serialization.format', '1');
  const remote = table.StorageDescriptor?.SerdeInfo?.Parameters ?? {};
  if (Object.keys(remote).length === wanted.size && [...wanted].every(([key, value]) => remote[key] === value)) return false;
  const sd: StorageDescriptor = {
    ...table.StorageDescriptor,
    SerdeInfo: { ...table.StorageDescriptor?.SerdeInfo, SerializationLibrary: HUDI_GLUE_FORMATS.serde, Parameters: Object.fromEntries(wanted) },
  };
  // Hudi sends this one without skipArchive, and with the table's own access and analysis times.
  await glue.send(
    new UpdateTableCommand({
      DatabaseName: database,
      TableInput: {
        Name: table.Name,
        TableType: table.TableType,
        Parameters: table.Parameters,
        PartitionKeys: table.PartitionKeys,
        StorageDescriptor: sd,
        ...(table.LastAnalyzedTime === undefined ? {} : { LastAccessTime: table.LastAnalyzedTime }),
      },
    }),
  );
  return true;
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
  writes: readonly Instant[],
  behaviour: GlueSyncBehaviour,
  lastCompletionSynced?: string,
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
    const changes = await changedSince(table, writes, lastSynced!, lastCompletionSynced, behaviour);
    written = changes.written;
    dropped = changes.dropped;
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

/** Replacecommit operations whose replaced partitions TimelineUtils.getDroppedPartitions counts as deleted. */
const DELETING_OPERATIONS: ReadonlySet<WriteOperationType | null> = new Set(['DELETE_PARTITION', 'INSERT_OVERWRITE', 'INSERT_OVERWRITE_TABLE']);

/**
 * The partitions the commits after `lastSynced` wrote (partitionToWriteStats, and a replacecommit's replaced ones),
 * and those of them to drop. The commits are those requested after it (TimelineUtils.getCommitsTimelineAfter) and,
 * with a recorded completion time (1.x), those requested before it that completed after that time.
 */
async function changedSince(
  table: HudiTable,
  writes: readonly Instant[],
  lastSynced: string,
  lastCompletionSynced: string | undefined,
  behaviour: GlueSyncBehaviour,
): Promise<{ written: string[]; dropped: Set<string> }> {
  const since = writes.filter(
    (instant) =>
      compareInstantTimes(instant.time, lastSynced) > 0 ||
      (lastCompletionSynced !== undefined &&
        compareInstantTimes(instant.time, lastSynced) < 0 &&
        instant.completionTime !== undefined &&
        compareInstantTimes(instant.completionTime, lastCompletionSynced) > 0),
  );
  const touched = new Set<string>();
  const dropped = new Set<string>();
  /** Partition → the newest instant that deleted it, and → the newest that wrote it (getDroppedPartitions). */
  const deletedAt = new Map<string, string>();
  const metadataOf = new Map<Instant, Awaited<ReturnType<typeof readCommitMetadata>>>();
  for (const instant of since) {
    const metadata = await readCommitMetadata(table.storage, instant, table.layout);
    metadataOf.set(instant, metadata);
    for (const partition of Object.keys(metadata.partitionToWriteStats)) touched.add(partition);
    for (const partition of Object.keys(metadata.partitionToReplaceFileIds ?? {})) {
      touched.add(partition);
      if (behaviour.droppedPartitions === 'delete-partition' && metadata.operationType === 'DELETE_PARTITION') dropped.add(partition);
      if (instant.action === 'replacecommit' && DELETING_OPERATIONS.has(metadata.operationType)) deletedAt.set(partition, instant.time);
    }
  }
  if (behaviour.droppedPartitions === 'timeline-utils' && touched.size > 0) {
    for (const [partition, time] of await partitionsCleanedAway(table)) deletedAt.set(partition, time);
    if (deletedAt.size > 0) {
      const earliest = [...deletedAt.values()].reduce((a, b) => (compareInstantTimes(a, b) <= 0 ? a : b));
      const writtenAt = new Map<string, string>();
      for (const [instant, metadata] of metadataOf)
        if (compareInstantTimes(instant.time, earliest) >= 0)
          for (const partition of Object.keys(metadata.partitionToWriteStats)) writtenAt.set(partition, instant.time);
      for (const [partition, time] of deletedAt) {
        const write = writtenAt.get(partition);
        if (partition !== '' && (write === undefined || compareInstantTimes(time, write) > 0)) dropped.add(partition);
      }
    }
  }
  return { written: [...touched].sort(), dropped };
}

/** Per timeline read: the catalog tables of one sync share it. */
const cleanedAway = new WeakMap<Timeline, Promise<Map<string, string>>>();

/**
 * Partition → the newest completed clean on the active timeline that deleted it (isPartitionDeleted: its last file
 * group cleaned away), which getDroppedPartitions counts as a deletion too.
 */
function partitionsCleanedAway(table: HudiTable): Promise<Map<string, string>> {
  let found = cleanedAway.get(table.timeline);
  if (found === undefined) {
    found = (async () => {
      const deleted = new Map<string, string>();
      for (const clean of table.timeline.completed().filter((instant) => instant.action === 'clean')) {
        const metadata = await readCleanMetadataOf(table.storage, clean, table.layout);
        for (const [partition, cleaned] of Object.entries(metadata?.partitionMetadata ?? {}))
          if (cleaned.isPartitionDeleted === true) deleted.set(partition, clean.time);
      }
      return deleted;
    })();
    cleanedAway.set(table.timeline, found);
  }
  return found;
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
