/**
 * Catalog sync settings from Hudi's own meta-sync keys (HoodieSyncConfig, HiveSyncConfigHolder,
 * GlueCatalogSyncClientConfig, HoodieAWSConfig of Hudi 0.15), with Hudi's defaults and infer rules. A writer syncs
 * when hoodie.datasource.meta.sync.enable or hoodie.datasource.hive_sync.enable is on; the catalog is AWS Glue, as
 * Hudi's AwsGlueCatalogSyncTool (hoodie.meta.sync.client.tool.class) or hoodie.datasource.hive_sync.mode=glue
 * choose it. Another sync tool (Hive metastore, DataHub, BigQuery) is refused with one error: this build syncs to
 * Glue only.
 */
import { anyText, bool, defineKey, javaInt, oneOf, optionalText, readKey } from '../config/index.js';
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

/** HoodieSyncTableStrategy: which catalog tables a merge-on-read table gets. */
export const TABLE_STRATEGIES = ['ALL', 'RO', 'RT'] as const;
export type TableStrategy = (typeof TABLE_STRATEGIES)[number];

export const META_SYNC_KEYS = {
  metaSyncEnable: defineKey({
    key: 'hoodie.datasource.meta.sync.enable',
    default: false,
    parser: bool,
    description: 'sync the table to a data catalog after each commit (AWS Glue here)',
  }),
  hiveSyncEnable: defineKey({
    key: 'hoodie.datasource.hive_sync.enable',
    default: false,
    parser: bool,
    description: 'the same as hoodie.datasource.meta.sync.enable (the older name)',
  }),
  toolClass: defineKey({
    key: 'hoodie.meta.sync.client.tool.class',
    default: HIVE_SYNC_TOOL,
    parser: anyText,
    description: `the sync tool: ${GLUE_SYNC_TOOL} (or hoodie.datasource.hive_sync.mode=glue) syncs to AWS Glue; others are refused`,
  }),
  mode: defineKey({
    key: 'hoodie.datasource.hive_sync.mode',
    default: undefined,
    parser: optionalText,
    description: 'glue: sync to the AWS Glue Data Catalog (as the Glue sync tool class does)',
  }),
  database: defineKey({
    key: 'hoodie.datasource.hive_sync.database',
    default: 'default',
    parser: anyText,
    description: 'the catalog database (default: hoodie.database.name, else `default`)',
  }),
  table: defineKey({
    key: 'hoodie.datasource.hive_sync.table',
    default: undefined,
    parser: optionalText,
    description: 'the catalog table (default: hoodie.table.name)',
  }),
  partitionFields: defineKey({
    key: 'hoodie.datasource.hive_sync.partition_fields',
    default: undefined,
    parser: optionalText,
    description: 'partition columns in the catalog (default: hoodie.table.partition.fields, else hoodie.datasource.write.partitionpath.field)',
  }),
  partitionExtractor: defineKey({
    key: 'hoodie.datasource.hive_sync.partition_extractor_class',
    default: EXTRACTORS.multiPart,
    parser: anyText,
    description:
      'how partition values are read from a partition path: MultiPartKeysValueExtractor, SinglePartPartitionValueExtractor, HiveStylePartitionValueExtractor or NonPartitionedExtractor (default inferred from the partition fields, as Hudi does)',
  }),
  autoCreateDatabase: defineKey({
    key: 'hoodie.datasource.hive_sync.auto_create_database',
    default: true,
    parser: bool,
    description: 'create the database when it is missing',
  }),
  createManagedTable: defineKey({
    key: 'hoodie.datasource.hive_sync.create_managed_table',
    default: false,
    parser: bool,
    description: 'leave out EXTERNAL=TRUE from the table parameters',
  }),
  syncAsDataSource: defineKey({
    key: 'hoodie.datasource.hive_sync.sync_as_datasource',
    default: true,
    parser: bool,
    description: "add Spark's data source table properties (spark.sql.sources.provider=hudi, the schema) and serde properties (path, hoodie.query.as.ro.table)",
  }),
  schemaLengthThreshold: defineKey({
    key: 'hoodie.datasource.hive_sync.schema_string_length_thresh',
    default: 4000,
    parser: javaInt(1),
    description: 'length of each spark.sql.sources.schema.part.N',
  }),
  supportTimestamp: defineKey({
    key: 'hoodie.datasource.hive_sync.support_timestamp',
    default: false,
    parser: bool,
    description: 'timestamp-millis/-micros columns as Hive timestamp (default: bigint, as Hudi)',
  }),
  omitMetadataFields: defineKey({
    key: 'hoodie.datasource.hive_sync.omit_metadata_fields',
    default: false,
    parser: bool,
    description: 'leave the _hoodie_* columns out of the catalog schema',
  }),
  tableProperties: defineKey({
    key: 'hoodie.datasource.hive_sync.table_properties',
    default: undefined,
    parser: optionalText,
    description: 'extra table parameters, key=value lines',
  }),
  serdeProperties: defineKey({
    key: 'hoodie.datasource.hive_sync.serde_properties',
    default: undefined,
    parser: optionalText,
    description: 'extra serde parameters, key=value lines',
  }),
  sparkVersion: defineKey({
    key: 'hoodie.meta_sync.spark.version',
    default: undefined,
    parser: optionalText,
    description: 'recorded as spark.sql.create.version when set',
  }),
  glueMetadataListing: defineKey({
    key: 'hoodie.datasource.meta.sync.glue.metadata_file_listing',
    default: false,
    parser: bool,
    description: 'recorded as the table parameter hudi.metadata-listing-enabled (Athena lists files from the metadata table)',
  }),
  conditionalSync: defineKey({
    key: 'hoodie.datasource.meta_sync.condition.sync',
    default: false,
    parser: bool,
    description: 'update last_commit_time_sync only when the schema, properties or partitions changed',
  }),
  skipTableArchive: defineKey({
    key: 'hoodie.datasource.meta.sync.glue.skip_table_archive',
    default: true,
    parser: bool,
    description: 'update the Glue table without archiving a table version each time',
  }),
  incremental: defineKey({
    key: 'hoodie.meta.sync.incremental',
    default: true,
    parser: bool,
    description: 'sync the partitions the commits since the last sync wrote (else list every partition)',
  }),
  skipRoSuffix: defineKey({
    key: 'hoodie.datasource.hive_sync.skip_ro_suffix',
    default: false,
    parser: bool,
    description: "a merge-on-read table's read-optimized catalog table takes the bare table name instead of <table>_ro",
  }),
  tableStrategy: defineKey<TableStrategy>({
    key: 'hoodie.datasource.hive_sync.table.strategy',
    default: 'ALL',
    parser: oneOf(TABLE_STRATEGIES),
    description:
      'the catalog tables of a merge-on-read table: ALL (<table>_ro, <table>_rt and, with sync_snapshot_with_table_name, <table>), RO (only the read-optimized one, as <table>) or RT (only the real-time one, as <table>)',
  }),
  syncSnapshotWithTableName: defineKey({
    key: 'hoodie.meta.sync.sync_snapshot_with_table_name',
    default: true,
    parser: bool,
    description: 'with table.strategy ALL, a merge-on-read table is also synced as <table> (real-time input format, as <table>_rt)',
  }),
  usePreApacheInputFormat: defineKey({
    key: 'hoodie.datasource.hive_sync.use_pre_apache_input_format',
    default: false,
    parser: bool,
    description: 'register the com.uber.hoodie input formats (tables migrated from com.uber.hoodie) instead of org.apache.hudi ones',
  }),
  glueRegion: defineKey({ key: 'hoodie.aws.glue.region', default: undefined, parser: optionalText, description: 'the Glue region (default: AWS_REGION)' }),
  glueEndpoint: defineKey({
    key: 'hoodie.aws.glue.endpoint',
    default: undefined,
    parser: optionalText,
    description: 'a Glue endpoint override (default: AWS_ENDPOINT_URL_GLUE / AWS_ENDPOINT_URL)',
  }),
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
  readonly skipRoSuffix: boolean;
  readonly tableStrategy: TableStrategy;
  readonly syncSnapshotWithTableName: boolean;
  readonly usePreApacheInputFormat: boolean;
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
}

function text(props: ReadonlyMap<string, string>, key: string): string | undefined {
  const value = props.get(key)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
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
  const enabled = readKey(props, k.metaSyncEnable, location) || readKey(props, k.hiveSyncEnable, location);
  if (!enabled) return undefined;
  const tool = text(props, k.toolClass.key);
  const mode = text(props, k.mode.key)?.toLowerCase();
  const glue = tool === GLUE_SYNC_TOOL || (mode === 'glue' && (tool === undefined || tool === HIVE_SYNC_TOOL));
  if (!glue) {
    throw new HudiError(
      `meta sync is on, but ${tool === undefined ? `${k.toolClass.key} is not set (Hudi's default is ${HIVE_SYNC_TOOL}, a Hive metastore)` : `${k.toolClass.key}=${tool}`}: this build syncs to AWS Glue only`,
      {
        location,
        fix: `set ${k.toolClass.key}=${GLUE_SYNC_TOOL} (or ${k.mode.key}=glue), or switch ${k.metaSyncEnable.key} and ${k.hiveSyncEnable.key} off`,
      },
    );
  }
  const table = text(props, k.table.key) ?? text(props, 'hoodie.table.name') ?? text(props, 'hoodie.datasource.write.table.name');
  if (table === undefined) {
    throw new HudiError(`meta sync is on but names no table: ${k.table.key} and hoodie.table.name are not set`, { location, fix: `set ${k.table.key}` });
  }
  const partitionFields = splitList(
    text(props, k.partitionFields.key) ?? text(props, 'hoodie.table.partition.fields') ?? text(props, 'hoodie.datasource.write.partitionpath.field'),
  );
  const extractorText = text(props, k.partitionExtractor.key) ?? inferExtractor(partitionFields, props);
  if (!(Object.values(EXTRACTORS) as string[]).includes(extractorText)) {
    throw new HudiError(`${k.partitionExtractor.key}=${extractorText} is not a partition value extractor this build knows`, {
      location,
      fix: `use one of ${Object.values(EXTRACTORS).join(', ')}`,
    });
  }
  return {
    database: text(props, k.database.key) ?? text(props, 'hoodie.database.name') ?? k.database.default,
    table,
    partitionFields,
    extractor: extractorText as PartitionValueExtractor,
    autoCreateDatabase: readKey(props, k.autoCreateDatabase, location),
    createManagedTable: readKey(props, k.createManagedTable, location),
    syncAsDataSource: readKey(props, k.syncAsDataSource, location),
    schemaLengthThreshold: readKey(props, k.schemaLengthThreshold, location),
    supportTimestamp: readKey(props, k.supportTimestamp, location),
    omitMetadataFields: readKey(props, k.omitMetadataFields, location),
    tableProperties: keyValueLines(props.get(k.tableProperties.key)),
    serdeProperties: keyValueLines(props.get(k.serdeProperties.key)),
    sparkVersion: text(props, k.sparkVersion.key) ?? '',
    metadataListing: readKey(props, k.glueMetadataListing, location),
    conditionalSync: readKey(props, k.conditionalSync, location),
    incremental: readKey(props, k.incremental, location),
    skipTableArchive: readKey(props, k.skipTableArchive, location),
    skipRoSuffix: readKey(props, k.skipRoSuffix, location),
    tableStrategy: readKey(props, k.tableStrategy, location),
    syncSnapshotWithTableName: readKey(props, k.syncSnapshotWithTableName, location),
    usePreApacheInputFormat: readKey(props, k.usePreApacheInputFormat, location),
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
      if (parts.length !== 2)
        throw new HudiError(`partition path ${partitionPath} is not in the form partition_key=partition_value`, {
          location,
          fix: `set ${META_SYNC_KEYS.partitionExtractor.key} to match the table's partition paths`,
        });
      return [parts[1]!];
    }
    case EXTRACTORS.multiPart:
      if (partitionPath === '') return [];
      return partitionPath.split('/').map((part) => {
        if (!part.includes('=')) return part;
        const pieces = part.split('=');
        if (pieces.length !== 2)
          throw new HudiError(`partition field (${part}) is not in the form key=value`, {
            location,
            fix: `set ${META_SYNC_KEYS.partitionExtractor.key} to match the table's partition paths`,
          });
        return pieces[1]!;
      });
  }
}
