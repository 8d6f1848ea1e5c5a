/**
 * Avro records of Hudi's timeline files (table version 6, Hudi 0.14/0.15) and the writer schemas we embed in them.
 * Field names and order follow apache/hudi `hudi-common/src/main/avro/*.avsc`, printed as Java's `Schema.toString()`
 * prints the generated classes' schemas (key order type/name/namespace/fields, `"avro.java.string":"String"` on
 * strings and map keys, nested named types without namespace), so our files carry the same `avro.schema` text as
 * Hudi's: the requested-replace, rollback and clean schemas equal real 0.15 files' character for character (the clean
 * ones keep the stray `"default":null` inside some map types); savepoint, archive-merge-plan and compaction-plan are
 * the 0.15 bundle's. Hudi reads timeline files with schema resolution, so versions read each other as long as record
 * full names match and fields missing on one side have defaults.
 */

/** A JSON value, as Avro schemas are written. */
export type AvroSchemaJson = string | number | boolean | null | readonly AvroSchemaJson[] | { readonly [key: string]: AvroSchemaJson };

/** Namespace of every Hudi timeline record. */
export const HUDI_AVRO_NAMESPACE = 'org.apache.hudi.avro.model';

// ---------------------------------------------------------------------------------------------------------------
// Records. Avro maps are `Record<string, …>`; unions with null are `T | null`; `version` is ["int","null"].

export interface HoodieSliceInfo {
  dataFilePath: string | null;
  deltaFilePaths: string[] | null;
  fileId: string | null;
  partitionPath: string | null;
  bootstrapFilePath: string | null;
  version: number | null;
}

export interface HoodieClusteringGroup {
  slices: HoodieSliceInfo[] | null;
  metrics: Record<string, number> | null;
  numOutputFileGroups: number | null;
  extraMetadata: Record<string, string> | null;
  version: number | null;
}

export interface HoodieClusteringStrategy {
  strategyClassName: string | null;
  strategyParams: Record<string, string> | null;
  version: number | null;
}

export interface HoodieClusteringPlan {
  inputGroups: HoodieClusteringGroup[] | null;
  strategy: HoodieClusteringStrategy | null;
  extraMetadata: Record<string, string> | null;
  version: number | null;
  preserveHoodieMetadata: boolean | null;
  /**
   * Hudi 1.x only (appended, default null): the partitions an incremental plan left for the next one
   * (PartitionAwareClusteringPlanStrategy). Absent from 0.x plans, read as null.
   */
  missingSchedulePartitions?: string[] | null;
}

/** `<instant>.replacecommit.requested`: a clustering plan, or all nulls for insert_overwrite. */
export interface HoodieRequestedReplaceMetadata {
  /** `CLUSTER` for clustering (WriteOperationType name). */
  operationType: string | null;
  /** Only set when operationType is CLUSTER. */
  clusteringPlan: HoodieClusteringPlan | null;
  extraMetadata: Record<string, string> | null;
  version: number | null;
}

export interface HoodieActionInstant {
  timestamp: string;
  action: string;
  state: string;
}

export interface HoodieCleanFileInfo {
  filePath: string | null;
  isBootstrapBaseFile: boolean | null;
}

/** `<instant>.clean.requested` and `<instant>.clean.inflight`. */
export interface HoodieCleanerPlan {
  earliestInstantToRetain: HoodieActionInstant | null;
  lastCompletedCommitTimestamp: string;
  /** HoodieCleaningPolicy name, e.g. `KEEP_LATEST_COMMITS`. */
  policy: string;
  /** Deprecated by Hudi in favour of filePathsToBeDeletedPerPartition. */
  filesToBeDeletedPerPartition: Record<string, string[]> | null;
  version: number | null;
  filePathsToBeDeletedPerPartition: Record<string, HoodieCleanFileInfo[]> | null;
  partitionsToBeDeleted: string[] | null;
  extraMetadata: Record<string, string> | null;
}

export interface HoodieCleanPartitionMetadata {
  partitionPath: string;
  policy: string;
  deletePathPatterns: string[];
  successDeleteFiles: string[];
  failedDeleteFiles: string[];
  isPartitionDeleted: boolean | null;
}

/** `<instant>.clean` (completed). */
export interface HoodieCleanMetadata {
  startCleanTime: string;
  timeTakenInMillis: number;
  totalFilesDeleted: number;
  earliestCommitToRetain: string;
  lastCompletedCommitTimestamp: string;
  partitionMetadata: Record<string, HoodieCleanPartitionMetadata>;
  version: number | null;
  bootstrapPartitionMetadata: Record<string, HoodieCleanPartitionMetadata> | null;
  extraMetadata: Record<string, string> | null;
}

export interface HoodieInstantInfo {
  commitTime: string;
  action: string;
}

export interface HoodieRollbackRequest {
  partitionPath: string;
  fileId: string | null;
  latestBaseInstant: string | null;
  filesToBeDeleted: string[];
  /** Log file path → size in bytes. */
  logBlocksToBeDeleted: Record<string, number> | null;
}

/** `<instant>.rollback.requested`. */
export interface HoodieRollbackPlan {
  instantToRollback: HoodieInstantInfo | null;
  /** Capitalised as in Hudi's schema. */
  RollbackRequests: HoodieRollbackRequest[] | null;
  version: number | null;
}

export interface HoodieRollbackPartitionMetadata {
  partitionPath: string;
  successDeleteFiles: string[];
  failedDeleteFiles: string[];
  /** Log files the rollback appended command blocks to → size in bytes. */
  rollbackLogFiles: Record<string, number> | null;
  /** Log files written by the failed commit → size in bytes (0.14/0.15; absent from older schemas). */
  logFilesFromFailedCommit: Record<string, number> | null;
}

/** `<instant>.rollback` (completed). */
export interface HoodieRollbackMetadata {
  startRollbackTime: string;
  timeTakenInMillis: number;
  totalFilesDeleted: number;
  commitsRollback: string[];
  partitionMetadata: Record<string, HoodieRollbackPartitionMetadata>;
  version: number | null;
  instantsRollback: HoodieInstantInfo[];
}

export interface HoodieSavepointPartitionMetadata {
  partitionPath: string;
  /** Base file names (no folder) the savepoint keeps. */
  savepointDataFile: string[];
}

/** `<instant>.savepoint` (completed; `.savepoint.inflight` is empty). */
export interface HoodieSavepointMetadata {
  savepointedBy: string;
  savepointedAt: number;
  comments: string;
  partitionMetadata: Record<string, HoodieSavepointPartitionMetadata>;
  version: number | null;
}

/** `.hoodie/archived/mergeArchivePlan`: the archive files a merge replaces, written before it starts. */
export interface HoodieMergeArchiveFilePlan {
  version: number | null;
  /** Paths (absolute, as the writer saw them) of the small archive files merged. */
  candidate: string[] | null;
  /** File name of the merged archive file. */
  mergedArchiveFileName: string | null;
}

export interface HoodieCompactionOperation {
  baseInstantTime: string | null;
  /** Log file names (plan version 2; full paths in version 1). */
  deltaFilePaths: string[] | null;
  /** The base file's name, null for a slice of log files only. */
  dataFilePath: string | null;
  fileId: string | null;
  partitionPath: string | null;
  metrics: Record<string, number> | null;
  bootstrapFilePath: string | null;
}

export interface HoodieCompactionStrategy {
  compactorClassName: string | null;
  strategyParams: Record<string, string> | null;
  version: number | null;
}

/** `<instant>.compaction.requested` (and `.logcompaction.requested`). */
export interface HoodieCompactionPlan {
  operations: HoodieCompactionOperation[] | null;
  extraMetadata: Record<string, string> | null;
  version: number | null;
  strategy: HoodieCompactionStrategy | null;
  preserveHoodieMetadata: boolean | null;
  /** Hudi 1.x only (layout 2): partitions the strategy left out, for the next incremental plan. */
  missingSchedulePartitions?: string[] | null;
}

/** HoodieWriteStat as timeline layout 2 (Hudi 1.x) stores it inside commit metadata: every field nullable. */
export interface HoodieWriteStatRecord {
  fileId: string | null;
  path: string | null;
  prevCommit: string | null;
  numWrites: number | null;
  numDeletes: number | null;
  numUpdateWrites: number | null;
  totalWriteBytes: number | null;
  totalWriteErrors: number | null;
  partitionPath: string | null;
  totalLogRecords: number | null;
  totalLogFiles: number | null;
  totalUpdatedRecordsCompacted: number | null;
  numInserts: number | null;
  totalLogBlocks: number | null;
  totalCorruptLogBlock: number | null;
  totalRollbackBlocks: number | null;
  fileSizeInBytes: number | null;
  logVersion: number | null;
  logOffset: number | null;
  baseFile: string | null;
  logFiles: string[] | null;
  cdcStats: Record<string, number> | null;
  prevBaseFile: string | null;
  minEventTime: number | null;
  maxEventTime: number | null;
  runtimeStats: { totalScanTime: number | null; totalCreateTime: number | null; totalUpsertTime: number | null } | null;
  totalLogFilesCompacted: number | null;
  totalLogReadTimeMs: number | null;
  totalLogSizeCompacted: number | null;
  tempPath: string | null;
  numUpdates: number | null;
}

/** A completed commit or deltacommit in timeline layout 2 (CommitMetadataSerDeV2). */
export interface HoodieCommitMetadataRecord {
  partitionToWriteStats: Record<string, HoodieWriteStatRecord[]> | null;
  compacted: boolean | null;
  extraMetadata: Record<string, string> | null;
  version: number | null;
  operationType: string | null;
}

/** A completed replacecommit in timeline layout 2. */
export interface HoodieReplaceCommitMetadataRecord extends HoodieCommitMetadataRecord {
  partitionToReplaceFileIds: Record<string, string[]> | null;
}

/** The record held by each kind of Avro timeline file. */
export interface TimelineAvroRecords {
  /** `.replacecommit.requested` */
  requestedReplace: HoodieRequestedReplaceMetadata;
  /** `.clean.requested`, `.clean.inflight` */
  cleanerPlan: HoodieCleanerPlan;
  /** `.clean` */
  cleanMetadata: HoodieCleanMetadata;
  /** `.rollback.requested` */
  rollbackPlan: HoodieRollbackPlan;
  /** `.rollback` */
  rollbackMetadata: HoodieRollbackMetadata;
  /** `.savepoint` */
  savepointMetadata: HoodieSavepointMetadata;
  /** `archived/mergeArchivePlan` */
  mergeArchivePlan: HoodieMergeArchiveFilePlan;
  /** `.compaction.requested` */
  compactionPlan: HoodieCompactionPlan;
}

export type TimelineAvroKind = keyof TimelineAvroRecords;

export const TIMELINE_AVRO_KINDS: readonly TimelineAvroKind[] = [
  'requestedReplace',
  'cleanerPlan',
  'cleanMetadata',
  'rollbackPlan',
  'rollbackMetadata',
  'savepointMetadata',
  'mergeArchivePlan',
  'compactionPlan',
];

// ---------------------------------------------------------------------------------------------------------------
// Writer schemas. Built from small helpers so the Java key order comes out right; JSON.stringify of each equals
// what Java's Schema.toString() prints.

/** A string as the Java generated classes declare it (java.lang.String rather than Utf8). */
const javaString = { type: 'string', 'avro.java.string': 'String' } as const;

function mapOf(values: AvroSchemaJson): AvroSchemaJson {
  return { type: 'map', values, 'avro.java.string': 'String' };
}

/**
 * A map type carrying a `"default":null` of its own, as Java prints the clean schemas: Hudi's .avsc files put the
 * field's default inside the type there, and Avro keeps it as a property. Readers ignore it; only the header text
 * changes, so we keep it to embed the same text as Hudi.
 */
function mapWithStrayDefault(values: AvroSchemaJson): AvroSchemaJson {
  return { type: 'map', values, 'avro.java.string': 'String', default: null };
}

function arrayOf(items: AvroSchemaJson): AvroSchemaJson {
  return { type: 'array', items };
}

function field(name: string, type: AvroSchemaJson): AvroSchemaJson {
  return { name, type };
}

function fieldWithDefault(name: string, type: AvroSchemaJson, defaultValue: AvroSchemaJson): AvroSchemaJson {
  return { name, type, default: defaultValue };
}

/** `["null", T]` defaulting to null: the usual optional field. */
function nullableField(name: string, type: AvroSchemaJson): AvroSchemaJson {
  return fieldWithDefault(name, ['null', type], null);
}

/** Every Hudi record carries `version: ["int","null"] = 1`. */
const versionField = fieldWithDefault('version', ['int', 'null'], 1);

function record(name: string, fields: readonly AvroSchemaJson[]): AvroSchemaJson {
  return { type: 'record', name, fields };
}

/** The top-level record names its namespace; nested ones inherit it (as Java prints them). */
function topLevelRecord(name: string, fields: readonly AvroSchemaJson[]): AvroSchemaJson {
  return { type: 'record', name, namespace: HUDI_AVRO_NAMESPACE, fields };
}

const stringMap = mapOf(javaString);

const sliceInfoSchema = record('HoodieSliceInfo', [
  nullableField('dataFilePath', javaString),
  nullableField('deltaFilePaths', arrayOf(javaString)),
  // No default in Hudi's schema: a slice always names its file group.
  field('fileId', ['null', javaString]),
  nullableField('partitionPath', javaString),
  nullableField('bootstrapFilePath', javaString),
  versionField,
]);

const clusteringGroupSchema = record('HoodieClusteringGroup', [
  nullableField('slices', arrayOf(sliceInfoSchema)),
  nullableField('metrics', mapOf('double')),
  fieldWithDefault('numOutputFileGroups', ['int', 'null'], 1),
  nullableField('extraMetadata', stringMap),
  versionField,
]);

const clusteringStrategySchema = record('HoodieClusteringStrategy', [
  nullableField('strategyClassName', javaString),
  nullableField('strategyParams', stringMap),
  versionField,
]);

const clusteringPlanSchema = record('HoodieClusteringPlan', [
  nullableField('inputGroups', arrayOf(clusteringGroupSchema)),
  nullableField('strategy', clusteringStrategySchema),
  nullableField('extraMetadata', stringMap),
  versionField,
  nullableField('preserveHoodieMetadata', 'boolean'),
]);

const requestedReplaceMetadataSchema = topLevelRecord('HoodieRequestedReplaceMetadata', [
  nullableField('operationType', javaString),
  nullableField('clusteringPlan', clusteringPlanSchema),
  nullableField('extraMetadata', stringMap),
  versionField,
]);

/** Hudi 1.x's HoodieClusteringPlan: 0.x's fields, then missingSchedulePartitions (nullable, default null). */
const clusteringPlanSchema1x = record('HoodieClusteringPlan', [
  nullableField('inputGroups', arrayOf(clusteringGroupSchema)),
  nullableField('strategy', clusteringStrategySchema),
  nullableField('extraMetadata', stringMap),
  versionField,
  nullableField('preserveHoodieMetadata', 'boolean'),
  nullableField('missingSchedulePartitions', arrayOf(javaString)),
]);

/**
 * Hudi 1.x's HoodieRequestedReplaceMetadata (1.0.2 and 1.1.1 embed the same schema text): the writer schema of a
 * clustering plan on a layout-2 table, and our reader schema for every plan (a 0.x plan resolves to it, its
 * missingSchedulePartitions null).
 */
export const REQUESTED_REPLACE_1X_SCHEMA: AvroSchemaJson = topLevelRecord('HoodieRequestedReplaceMetadata', [
  nullableField('operationType', javaString),
  nullableField('clusteringPlan', clusteringPlanSchema1x),
  nullableField('extraMetadata', stringMap),
  versionField,
]);

const instantInfoSchema = record('HoodieInstantInfo', [field('commitTime', javaString), field('action', javaString)]);

const rollbackRequestSchema = record('HoodieRollbackRequest', [
  field('partitionPath', javaString),
  nullableField('fileId', javaString),
  nullableField('latestBaseInstant', javaString),
  // Hudi's avsc puts `default: []` on the array type as well; Java keeps it as a property.
  fieldWithDefault('filesToBeDeleted', { type: 'array', items: javaString, default: [] }, []),
  nullableField('logBlocksToBeDeleted', mapOf('long')),
]);

const rollbackPlanSchema = topLevelRecord('HoodieRollbackPlan', [
  {
    name: 'instantToRollback',
    type: ['null', instantInfoSchema],
    doc: 'Hoodie instant that needs to be rolled back',
    default: null,
  },
  nullableField('RollbackRequests', arrayOf(rollbackRequestSchema)),
  versionField,
]);

const rollbackPartitionMetadataSchema = record('HoodieRollbackPartitionMetadata', [
  field('partitionPath', javaString),
  field('successDeleteFiles', arrayOf(javaString)),
  field('failedDeleteFiles', arrayOf(javaString)),
  nullableField('rollbackLogFiles', mapOf('long')),
  nullableField('logFilesFromFailedCommit', mapOf('long')),
]);

const rollbackMetadataSchema = topLevelRecord('HoodieRollbackMetadata', [
  field('startRollbackTime', javaString),
  field('timeTakenInMillis', 'long'),
  field('totalFilesDeleted', 'int'),
  field('commitsRollback', arrayOf(javaString)),
  field('partitionMetadata', mapOf(rollbackPartitionMetadataSchema)),
  versionField,
  fieldWithDefault('instantsRollback', { type: 'array', items: instantInfoSchema, default: [] }, []),
]);

const actionInstantSchema = record('HoodieActionInstant', [field('timestamp', javaString), field('action', javaString), field('state', javaString)]);

const cleanFileInfoSchema = record('HoodieCleanFileInfo', [nullableField('filePath', javaString), nullableField('isBootstrapBaseFile', 'boolean')]);

const cleanerPlanSchema = topLevelRecord('HoodieCleanerPlan', [
  nullableField('earliestInstantToRetain', actionInstantSchema),
  fieldWithDefault('lastCompletedCommitTimestamp', javaString, ''),
  field('policy', javaString),
  nullableField('filesToBeDeletedPerPartition', mapOf(arrayOf(javaString))),
  versionField,
  {
    name: 'filePathsToBeDeletedPerPartition',
    type: ['null', mapOf(arrayOf(cleanFileInfoSchema))],
    doc: 'This field replaces the field filesToBeDeletedPerPartition',
    default: null,
  },
  { name: 'partitionsToBeDeleted', type: ['null', arrayOf(javaString)], doc: 'partitions to be deleted', default: null },
  nullableField('extraMetadata', mapWithStrayDefault(javaString)),
]);

const cleanPartitionMetadataSchema = record('HoodieCleanPartitionMetadata', [
  field('partitionPath', javaString),
  field('policy', javaString),
  field('deletePathPatterns', arrayOf(javaString)),
  field('successDeleteFiles', arrayOf(javaString)),
  field('failedDeleteFiles', arrayOf(javaString)),
  nullableField('isPartitionDeleted', 'boolean'),
]);

const cleanMetadataSchema = topLevelRecord('HoodieCleanMetadata', [
  field('startCleanTime', javaString),
  field('timeTakenInMillis', 'long'),
  field('totalFilesDeleted', 'int'),
  field('earliestCommitToRetain', javaString),
  fieldWithDefault('lastCompletedCommitTimestamp', javaString, ''),
  field('partitionMetadata', mapOf(cleanPartitionMetadataSchema)),
  versionField,
  // Second use of a named type: by name only.
  nullableField('bootstrapPartitionMetadata', mapWithStrayDefault('HoodieCleanPartitionMetadata')),
  nullableField('extraMetadata', mapWithStrayDefault(javaString)),
]);

const savepointPartitionMetadataSchema = record('HoodieSavepointPartitionMetadata', [
  field('partitionPath', javaString),
  field('savepointDataFile', arrayOf(javaString)),
]);

const savepointMetadataSchema = topLevelRecord('HoodieSavepointMetadata', [
  field('savepointedBy', javaString),
  field('savepointedAt', 'long'),
  field('comments', javaString),
  field('partitionMetadata', mapOf(savepointPartitionMetadataSchema)),
  versionField,
]);

const mergeArchivePlanSchema = topLevelRecord('HoodieMergeArchiveFilePlan', [
  versionField,
  nullableField('candidate', arrayOf(javaString)),
  nullableField('mergedArchiveFileName', javaString),
]);

// No defaults on baseInstantTime and fileId in Hudi's schema: an operation always names its slice.
const compactionOperationSchema = record('HoodieCompactionOperation', [
  field('baseInstantTime', ['null', javaString]),
  nullableField('deltaFilePaths', arrayOf(javaString)),
  nullableField('dataFilePath', javaString),
  field('fileId', ['null', javaString]),
  nullableField('partitionPath', javaString),
  nullableField('metrics', mapOf('double')),
  nullableField('bootstrapFilePath', javaString),
]);

const compactionStrategySchema = record('HoodieCompactionStrategy', [
  {
    name: 'compactorClassName',
    type: ['null', javaString],
    doc: 'The class name that is provided here should extend CompactionExecutionStrategy abstract class, idea is that the plan generator will also provide the execution strategy to use.',
    default: null,
  },
  {
    name: 'strategyParams',
    type: ['null', stringMap],
    doc: 'These parameters play a key role in determining which action type it is i.e. compaction or logcompaction and it will also include configs that determine how compaction needs to be executed.',
    default: null,
  },
  versionField,
]);

const compactionPlanSchema = topLevelRecord('HoodieCompactionPlan', [
  nullableField('operations', arrayOf(compactionOperationSchema)),
  nullableField('extraMetadata', stringMap),
  versionField,
  nullableField('strategy', compactionStrategySchema),
  fieldWithDefault('preserveHoodieMetadata', ['boolean', 'null'], false),
]);

/**
 * Hudi 1.x's HoodieCompactionPlan (1.0.2 and 1.1.1 embed the same text): 0.x's fields, then missingSchedulePartitions
 * (nullable, default null). The writer schema of a data table's plan on layout 2, and our reader schema for every
 * plan (a 0.x plan resolves to it, its missingSchedulePartitions null).
 */
export const COMPACTION_PLAN_1X_SCHEMA: AvroSchemaJson = topLevelRecord('HoodieCompactionPlan', [
  nullableField('operations', arrayOf(compactionOperationSchema)),
  nullableField('extraMetadata', stringMap),
  versionField,
  nullableField('strategy', compactionStrategySchema),
  fieldWithDefault('preserveHoodieMetadata', ['boolean', 'null'], false),
  nullableField('missingSchedulePartitions', arrayOf(javaString)),
]);

// HoodieCommitMetadata.avsc / HoodieReplaceCommitMetadata.avsc as Hudi 1.0.2 and 1.1.1 compile them (the same
// text in both): the SCHEMA$ of org.apache.hudi.avro.model.HoodieCommitMetadata in hudi-common's sources jar.
const nullableLong = (name: string) => nullableField(name, 'long');
const writeStatSchema = record('HoodieWriteStat', [
  nullableField('fileId', javaString),
  nullableField('path', javaString),
  nullableField('prevCommit', javaString),
  nullableLong('numWrites'),
  nullableLong('numDeletes'),
  nullableLong('numUpdateWrites'),
  nullableLong('totalWriteBytes'),
  nullableLong('totalWriteErrors'),
  nullableField('partitionPath', javaString),
  nullableLong('totalLogRecords'),
  nullableLong('totalLogFiles'),
  nullableLong('totalUpdatedRecordsCompacted'),
  nullableLong('numInserts'),
  nullableLong('totalLogBlocks'),
  nullableLong('totalCorruptLogBlock'),
  nullableLong('totalRollbackBlocks'),
  nullableLong('fileSizeInBytes'),
  nullableField('logVersion', 'int'),
  nullableLong('logOffset'),
  nullableField('baseFile', javaString),
  nullableField('logFiles', { type: 'array', items: javaString, default: null }),
  nullableField('cdcStats', mapWithStrayDefault('long')),
  nullableField('prevBaseFile', javaString),
  nullableLong('minEventTime'),
  nullableLong('maxEventTime'),
  nullableField(
    'runtimeStats',
    record('HoodieRuntimeStats', [nullableLong('totalScanTime'), nullableLong('totalCreateTime'), nullableLong('totalUpsertTime')]),
  ),
  nullableLong('totalLogFilesCompacted'),
  nullableLong('totalLogReadTimeMs'),
  nullableLong('totalLogSizeCompacted'),
  nullableField('tempPath', javaString),
  nullableLong('numUpdates'),
]);

const commitMetadataFields = (extraMetadataType: AvroSchemaJson): AvroSchemaJson[] => [
  nullableField('partitionToWriteStats', mapOf(arrayOf(writeStatSchema))),
  nullableField('compacted', 'boolean'),
  nullableField('extraMetadata', extraMetadataType),
  versionField,
  nullableField('operationType', javaString),
];

const commitMetadataSchema = topLevelRecord('HoodieCommitMetadata', commitMetadataFields(mapWithStrayDefault(javaString)));

const replaceCommitMetadataSchema = topLevelRecord('HoodieReplaceCommitMetadata', [
  ...commitMetadataFields(stringMap),
  nullableField('partitionToReplaceFileIds', mapOf(arrayOf(javaString))),
]);

/** Our writer (and reader) schema for each kind of Avro timeline file. */
export const TIMELINE_AVRO_SCHEMAS: { readonly [K in TimelineAvroKind]: AvroSchemaJson } = {
  requestedReplace: requestedReplaceMetadataSchema,
  cleanerPlan: cleanerPlanSchema,
  cleanMetadata: cleanMetadataSchema,
  rollbackPlan: rollbackPlanSchema,
  rollbackMetadata: rollbackMetadataSchema,
  savepointMetadata: savepointMetadataSchema,
  mergeArchivePlan: mergeArchivePlanSchema,
  compactionPlan: compactionPlanSchema,
};

/**
 * Timeline layout 2's (Hudi 1.x) completed-write records (CommitMetadataSerDeV2): `commit` for a commit or
 * deltacommit, `replace` for a replacecommit. Not timeline kinds of their own: layout 1 writes these as JSON.
 */
export const COMMIT_METADATA_AVRO_SCHEMAS = { commit: commitMetadataSchema, replace: replaceCommitMetadataSchema } as const;
export interface CommitMetadataAvroRecords {
  commit: HoodieCommitMetadataRecord;
  replace: HoodieReplaceCommitMetadataRecord;
}

/** Full record name of each kind, as stored in the files (`org.apache.hudi.avro.model.*`). */
export const TIMELINE_AVRO_RECORD_NAMES: { readonly [K in TimelineAvroKind]: string } = {
  requestedReplace: `${HUDI_AVRO_NAMESPACE}.HoodieRequestedReplaceMetadata`,
  cleanerPlan: `${HUDI_AVRO_NAMESPACE}.HoodieCleanerPlan`,
  cleanMetadata: `${HUDI_AVRO_NAMESPACE}.HoodieCleanMetadata`,
  rollbackPlan: `${HUDI_AVRO_NAMESPACE}.HoodieRollbackPlan`,
  rollbackMetadata: `${HUDI_AVRO_NAMESPACE}.HoodieRollbackMetadata`,
  savepointMetadata: `${HUDI_AVRO_NAMESPACE}.HoodieSavepointMetadata`,
  mergeArchivePlan: `${HUDI_AVRO_NAMESPACE}.HoodieMergeArchiveFilePlan`,
  compactionPlan: `${HUDI_AVRO_NAMESPACE}.HoodieCompactionPlan`,
};

/** The `avro.schema` header text for a kind: compact JSON, as Java's Schema.toString() prints it. */
export function timelineAvroSchemaText(kind: TimelineAvroKind): string {
  return JSON.stringify(TIMELINE_AVRO_SCHEMAS[kind]);
}

/** What Hudi writes to `replacecommit.requested` for insert_overwrite: a record with every field null. */
export function emptyRequestedReplaceMetadata(): HoodieRequestedReplaceMetadata {
  return { operationType: null, clusteringPlan: null, extraMetadata: null, version: null };
}
