/**
 * Catalog sync settings from Hudi's own meta-sync keys (HoodieSyncConfig, HiveSyncConfigHolder,
 * GlueCatalogSyncClientConfig, HoodieAWSConfig of Hudi 0.15), with Hudi's defaults and infer rules. A writer syncs
 * when hoodie.datasource.meta.sync.enable or hoodie.datasource.hive_sync.enable is on; the catalog is AWS Glue, as
 * Hudi's AwsGlueCatalogSyncTool (hoodie.meta.sync.client.tool.class) or hoodie.datasource.hive_sync.mode=glue
 * choose it. Another sync tool (Hive metastore, DataHub, BigQuery) is refused with one error: this build syncs to
 * Glue only.
 */
import { booleanOf, integerOf } from '../cleaning/config.js';
import { HudiError } from '../errors.js';

export const GLUE_SYNC_TOOL = 'org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool';
/** Hudi's default tool class: a Hive metastore sync. */
export const HIVE_SYNC_TOOL = 'org.apache.hudi.hive.HiveSyncTool';

export const EXTRACTORS = {
  multiPart: 'org.apache.hudi.hive.MultiPartKeysValueExtractor',
  singlePart: 'org.apache.hudi.hive.SinglePartPartitionValueExtractor',
  hiveStyle: 'org.apache.hudi.hive.HiveStylePartitionValueExtractor',
  nonPartitioned: 'org.apache.hudi.hive.NonPartitionedExtractor',
} as const;
export type PartitionValueExtractor = (typeof EXTRACTORS)[keyof typeof EXTRACTORS];

export const META_SYNC_KEYS = {
  metaSyncEnable: { key: 'hoodie.datasource.meta.sync.enable', default: false, description: 'sync the table to a data catalog after each commit (AWS Glue here)' },
  hiveSyncEnable: { key: 'hoodie.datasource.hive_sync.enable', default: false, description: 'the same as hoodie.datasource.meta.sync.enable (the older name)' },
  toolClass: { key: 'hoodie.meta.sync.client.tool.class', default: HIVE_SYNC_TOOL, description: `the sync tool: ${GLUE_SYNC_TOOL} (or hoodie.datasource.hive_sync.mode=glue) syncs to AWS Glue; others are refused` },
  mode: { key: 'hoodie.datasource.hive_sync.mode', default: '', description: 'glue: sync to the AWS Glue Data Catalog (as the Glue sync tool class does)' },
  database: { key: 'hoodie.datasource.hive_sync.database', default: 'default', description: 'the catalog database (default: hoodie.database.name, else `default`)' },
  table: { key: 'hoodie.datasource.hive_sync.table', default: '', description: 'the catalog table (default: hoodie.table.name)' },
  partitionFields: { key: 'hoodie.datasource.hive_sync.partition_fields', default: '', description: 'partition columns in the catalog (default: hoodie.table.partition.fields, else hoodie.datasource.write.partitionpath.field)' },
  partitionExtractor: { key: 'hoodie.datasource.hive_sync.partition_extractor_class', default: EXTRACTORS.multiPart, description: 'how partition values are read from a partition path: MultiPartKeysValueExtractor, SinglePartPartitionValueExtractor, HiveStylePartitionValueExtractor or NonPartitionedExtractor (default inferred from the partition fields, as Hudi does)' },
  autoCreateDatabase: { key: 'hoodie.datasource.hive_sync.auto_create_database', default: true, description: 'create the database when it is missing' },
  createManagedTable: { key: 'hoodie.datasource.hive_sync.create_managed_table', default: false, description: 'leave out EXTERNAL=TRUE from the table parameters' },
  syncAsDataSource: { key: 'hoodie.datasource.hive_sync.sync_as_datasource', default: true, description: 'add Spark\'s data source table properties (spark.sql.sources.provider=hudi, the schema) and serde properties (path, hoodie.query.as.ro.table)' },
  schemaLengthThreshold: { key: 'hoodie.datasource.hive_sync.schema_string_length_thresh', default: 4000, description: 'length of each spark.sql.sources.schema.part.N' },
  supportTimestamp: { key: 'hoodie.datasource.hive_sync.support_timestamp', default: false, description: 'timestamp-millis/-micros columns as Hive timestamp (default: bigint, as Hudi)' },
  omitMetadataFields: { key: 'hoodie.datasource.hive_sync.omit_metadata_fields', default: false, description: 'leave the _hoodie_* columns out of the catalog schema' },
  tableProperties: { key: 'hoodie.datasource.hive_sync.table_properties', default: '', description: 'extra table parameters, key=value lines' },
  serdeProperties: { key: 'hoodie.datasource.hive_sync.serde_properties', default: '', description: 'extra serde parameters, key=value lines' },
  sparkVersion: { key: 'hoodie.meta_sync.spark.version', default: '', description: 'recorded as spark.sql.create.version when set' },
  glueMetadataListing: { key: 'hoodie.datasource.meta.sync.glue.metadata_file_listing', default: false, description: 'recorded as the table parameter hudi.metadata-listing-enabled (Athena lists files from the metadata table)' },
  conditionalSync: { key: 'hoodie.datasource.meta_sync.condition.sync', default: false, description: 'update last_commit_time_sync only when the schema, properties or partitions changed' },
  skipTableArchive: { key: 'hoodie.datasource.meta.sync.glue.skip_table_archive', default: true, description: 'update the Glue table without archiving a table version each time' },
  incremental: { key: 'hoodie.meta.sync.incremental', default: true, description: 'sync the partitions the commits since the last sync wrote (else list every partition)' },
  glueRegion: { key: 'hoodie.aws.glue.region', default: '', description: 'the Glue region (default: AWS_REGION)' },
  glueEndpoint: { key: 'hoodie.aws.glue.endpoint', default: '', description: 'a Glue endpoint override (default: AWS_ENDPOINT_URL_GLUE / AWS_ENDPOINT_URL)' },
} as const;

export interface GlueSyncConfig {
  readonly database: string;
  readonly table: string;
  readonly partitionFields: readonly string[];
  readonly extractor: PartitionValueExtractor;
  readonly autoCreateDatabase: boolean;
  readonly createManagedTable: boolean;
  readonly syncAsDataSource: boolean;
  readonly schemaLengthThreshold: number;
  readonly supportTimestamp: boolean;
  readonly omitMetadataFields: boolean;
  readonly tableProperties: ReadonlyMap<string, string>;
  readonly serdeProperties: ReadonlyMap<string, string>;
  readonly sparkVersion: string;
  readonly metadataListing: boolean;
  readonly conditionalSync: boolean;
  readonly incremental: boolean;
  readonly skipTableArchive: boolean;
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
}

function text(props: ReadonlyMap<string, string>, key: string): string | undefined {
  const value = props.get(key)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function splitList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((part) => part.trim()).filter((part) => part !== '');
}

/** Hudi's ConfigUtils.toMap: key=value lines (also `\n`-escaped in one line). */
function keyValueLines(value: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (value ?? '').replaceAll('\\n', '\n').split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const at = trimmed.indexOf('=');
    if (at <= 0) continue;
    out.set(trimmed.slice(0, at).trim(), trimmed.slice(at + 1).trim());
  }
  return out;
}

/**
 * The Glue sync settings when `props` (the table's hoodie.properties under the writer's properties) switch the
 * sync on; undefined when they do not. Throws a HudiError naming the key for a sync this build cannot do.
 */
export function glueSyncConfigFromProperties(props: ReadonlyMap<string, string>, location: string): GlueSyncConfig | undefined {
  const k = META_SYNC_KEYS;
  const enabled = booleanOf(props, k.metaSyncEnable.key, k.metaSyncEnable.default, location) || booleanOf(props, k.hiveSyncEnable.key, k.hiveSyncEnable.default, location);
  if (!enabled) return undefined;
  const tool = text(props, k.toolClass.key);
  const mode = text(props, k.mode.key)?.toLowerCase();
  const glue = tool === GLUE_SYNC_TOOL || (mode === 'glue' && (tool === undefined || tool === HIVE_SYNC_TOOL));
  if (!glue) {
    throw new HudiError(`meta sync is on, but ${tool === undefined ? `${k.toolClass.key} is not set (Hudi's default is ${HIVE_SYNC_TOOL}, a Hive metastore)` : `${k.toolClass.key}=${tool}`}: this build syncs to AWS Glue only`, {
      location,
      fix: `set ${k.toolClass.key}=${GLUE_SYNC_TOOL} (or ${k.mode.key}=glue), or switch ${k.metaSyncEnable.key} and ${k.hiveSyncEnable.key} off`,
    });
  }
  const table = text(props, k.table.key) ?? text(props, 'hoodie.table.name') ?? text(props, 'hoodie.datasource.write.table.name');
  if (table === undefined) {
    throw new HudiError(`meta sync is on but names no table: ${k.table.key} and hoodie.table.name are not set`, { location, fix: `set ${k.table.key}` });
  }
  const partitionFields = splitList(text(props, k.partitionFields.key) ?? text(props, 'hoodie.table.partition.fields') ?? text(props, 'hoodie.datasource.write.partitionpath.field'));
  const extractorText = text(props, k.partitionExtractor.key) ?? inferExtractor(partitionFields, props);
  if (!(Object.values(EXTRACTORS) as string[]).includes(extractorText)) {
    throw new HudiError(`${k.partitionExtractor.key}=${extractorText} is not a partition value extractor this build knows`, { location, fix: `use one of ${Object.values(EXTRACTORS).join(', ')}` });
  }
  return {
    database: text(props, k.database.key) ?? text(props, 'hoodie.database.name') ?? k.database.default,
    table,
    partitionFields,
    extractor: extractorText as PartitionValueExtractor,
    autoCreateDatabase: booleanOf(props, k.autoCreateDatabase.key, k.autoCreateDatabase.default, location),
    createManagedTable: booleanOf(props, k.createManagedTable.key, k.createManagedTable.default, location),
    syncAsDataSource: booleanOf(props, k.syncAsDataSource.key, k.syncAsDataSource.default, location),
    schemaLengthThreshold: integerOf(props, k.schemaLengthThreshold.key, k.schemaLengthThreshold.default, location, 1),
    supportTimestamp: booleanOf(props, k.supportTimestamp.key, k.supportTimestamp.default, location),
    omitMetadataFields: booleanOf(props, k.omitMetadataFields.key, k.omitMetadataFields.default, location),
    tableProperties: keyValueLines(props.get(k.tableProperties.key)),
    serdeProperties: keyValueLines(props.get(k.serdeProperties.key)),
    sparkVersion: text(props, k.sparkVersion.key) ?? '',
    metadataListing: booleanOf(props, k.glueMetadataListing.key, k.glueMetadataListing.default, location),
    conditionalSync: booleanOf(props, k.conditionalSync.key, k.conditionalSync.default, location),
    incremental: booleanOf(props, k.incremental.key, k.incremental.default, location),
    skipTableArchive: booleanOf(props, k.skipTableArchive.key, k.skipTableArchive.default, location),
    region: text(props, k.glueRegion.key),
    endpoint: text(props, k.glueEndpoint.key),
  };
}

/** HoodieSyncConfig's infer rule for the extractor. */
function inferExtractor(partitionFields: readonly string[], props: ReadonlyMap<string, string>): PartitionValueExtractor {
  if (partitionFields.length === 0) return EXTRACTORS.nonPartitioned;
  if (partitionFields.length > 1) return EXTRACTORS.multiPart;
  return text(props, 'hoodie.datasource.write.hive_style_partitioning') === 'true' ? EXTRACTORS.hiveStyle : EXTRACTORS.singlePart;
}

/** A partition path's values, as the extractor reads them (Hudi's PartitionValueExtractor implementations). */
export function partitionValues(extractor: PartitionValueExtractor, partitionPath: string, location: string): string[] {
  switch (extractor) {
    case EXTRACTORS.nonPartitioned:
      return [];
    case EXTRACTORS.singlePart:
      return [partitionPath.replaceAll('/', '-')];
    case EXTRACTORS.hiveStyle: {
      const parts = partitionPath.split('=');
      if (parts.length !== 2) throw new HudiError(`partition path ${partitionPath} is not in the form partition_key=partition_value`, { location, fix: `set ${META_SYNC_KEYS.partitionExtractor.key} to match the table's partition paths` });
      return [parts[1]!];
    }
    case EXTRACTORS.multiPart:
      if (partitionPath === '') return [];
      return partitionPath.split('/').map((part) => {
        if (!part.includes('=')) return part;
        const pieces = part.split('=');
        if (pieces.length !== 2) throw new HudiError(`partition field (${part}) is not in the form key=value`, { location, fix: `set ${META_SYNC_KEYS.partitionExtractor.key} to match the table's partition paths` });
        return pieces[1]!;
      });
  }
}
