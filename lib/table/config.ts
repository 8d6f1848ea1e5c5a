/**
 * hoodie.properties: the table's identity and layout (HoodieTableConfig).
 */

import { crc32 } from 'node:zlib';
import {
  anyText,
  type ConfigKey,
  ConfigValueError,
  commaList,
  defineKey,
  javaInt,
  oneOf,
  optionalText,
  type Parser,
  rawValue,
  readKey,
} from '../config/index.js';
import { HudiError, NotAHudiTableError, NotFoundError, UnsupportedTableError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { TIMELINE_TIME_ZONES, type TimelineTimeZone } from '../timeline/instant.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { formatJavaProperties, parseJavaProperties } from './properties.js';

export const PROPERTIES_FILE = `${METAFOLDER}/hoodie.properties`;
export const PROPERTIES_BACKUP_FILE = `${METAFOLDER}/hoodie.properties.backup`;
export const SUPPORTED_TABLE_VERSION = 6;

export type TableType = 'COPY_ON_WRITE' | 'MERGE_ON_READ';

const NO_FIELDS: readonly string[] = Object.freeze([]);
/** Java's Boolean.parseBoolean: "true" in any case is true, anything else false (how Hudi reads its own file). */
const javaBoolean: Parser<boolean> = { expected: 'true or false', parse: (text) => ({ value: text.toLowerCase() === 'true' }) };
const upperText: Parser<string> = { expected: 'text', parse: (text) => ({ value: text.toUpperCase() }) };

export const KEY_GENERATORS = {
  simple: 'org.apache.hudi.keygen.SimpleKeyGenerator',
  complex: 'org.apache.hudi.keygen.ComplexKeyGenerator',
  nonPartitioned: 'org.apache.hudi.keygen.NonpartitionedKeyGenerator',
  timestampBased: 'org.apache.hudi.keygen.TimestampBasedKeyGenerator',
} as const;

/**
 * The keys of hoodie.properties (HoodieTableConfig) with Hudi's defaults for a file that lacks them. Stored files are
 * read leniently, as Hudi reads them (a flag is true only when it says "true"); `name`, `version`, `type` and
 * the checksum are checked below because a wrong one means a corrupt file.
 */
export const TABLE_KEYS = {
  name: defineKey({ key: 'hoodie.table.name', default: undefined, parser: optionalText, description: "the table's name" }),
  databaseName: defineKey({ key: 'hoodie.database.name', default: '', parser: anyText, description: 'the database of the table (part of the checksum)' }),
  type: defineKey({
    key: 'hoodie.table.type',
    default: 'COPY_ON_WRITE' as TableType,
    parser: oneOf(['COPY_ON_WRITE', 'MERGE_ON_READ'] as const),
    description: 'COPY_ON_WRITE or MERGE_ON_READ',
  }),
  version: defineKey({ key: 'hoodie.table.version', default: 0, parser: javaInt(0), description: 'the table version (6 for Hudi 0.14/0.15)' }),
  timelineLayoutVersion: defineKey({
    key: 'hoodie.timeline.layout.version',
    default: undefined,
    parser: optionalText,
    description: 'the timeline layout (1 up to table version 6)',
  }),
  recordKeyFields: defineKey({ key: 'hoodie.table.recordkey.fields', default: NO_FIELDS, parser: commaList, description: 'record key fields' }),
  partitionFields: defineKey({ key: 'hoodie.table.partition.fields', default: NO_FIELDS, parser: commaList, description: 'partition fields' }),
  precombineField: defineKey({ key: 'hoodie.table.precombine.field', default: undefined, parser: optionalText, description: 'the ordering field of upserts' }),
  keyGeneratorClass: defineKey({ key: 'hoodie.table.keygenerator.class', default: undefined, parser: optionalText, description: 'the key generator' }),
  keyGeneratorType: defineKey({
    key: 'hoodie.table.keygenerator.type',
    default: undefined,
    parser: optionalText,
    description: 'the key generator as Hudi 1.x stores it (KeyGeneratorType), read when no class is stored',
  }),
  hiveStylePartitioning: defineKey({
    key: 'hoodie.datasource.write.hive_style_partitioning',
    default: false,
    parser: javaBoolean,
    description: 'partition folders named field=value',
  }),
  urlEncodePartitioning: defineKey({
    key: 'hoodie.datasource.write.partitionpath.urlencode',
    default: false,
    parser: javaBoolean,
    description: 'partition values URL-encoded in paths',
  }),
  dropPartitionColumns: defineKey({
    key: 'hoodie.datasource.write.drop.partition.columns',
    default: false,
    parser: javaBoolean,
    description: 'partition columns left out of data files',
  }),
  populateMetaFields: defineKey({
    key: 'hoodie.populate.meta.fields',
    default: true,
    parser: javaBoolean,
    description: 'the _hoodie_* meta columns are written',
  }),
  baseFileFormat: defineKey({ key: 'hoodie.table.base.file.format', default: 'PARQUET', parser: upperText, description: 'base file format' }),
  createSchema: defineKey({
    key: 'hoodie.table.create.schema',
    default: undefined,
    parser: optionalText,
    description: 'the Avro schema the table was created with',
  }),
  archiveLogFolder: defineKey({
    key: 'hoodie.archivelog.folder',
    default: 'archived',
    parser: anyText,
    description: "the archived timeline's folder under .hoodie",
  }),
  checksum: defineKey({ key: 'hoodie.table.checksum', default: undefined, parser: optionalText, description: 'CRC32 of "<database>.<table>"' }),
  // Hudi 1.x keys (table versions 8 and 9); read leniently here, checked for reading in assertSupported.
  timelinePath: defineKey({
    key: 'hoodie.timeline.path',
    default: 'timeline',
    parser: anyText,
    description: "layout 2: the active timeline's folder under .hoodie",
  }),
  timelineHistoryPath: defineKey({
    key: 'hoodie.timeline.history.path',
    default: 'history',
    parser: anyText,
    description: "layout 2: the LSM history's folder under the timeline folder",
  }),
  initialVersion: defineKey({
    key: 'hoodie.table.initial.version',
    default: undefined,
    parser: optionalText,
    description: 'the table version the table was created with (Hudi 1.x)',
  }),
  recordMergeMode: defineKey({
    key: 'hoodie.record.merge.mode',
    default: undefined,
    parser: optionalText,
    description: 'Hudi 1.x: EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING or CUSTOM',
  }),
  recordMergeStrategyId: defineKey({
    key: 'hoodie.record.merge.strategy.id',
    default: undefined,
    parser: optionalText,
    alternatives: ['hoodie.compaction.record.merger.strategy'],
    description: "Hudi 1.x: the merger strategy's id",
  }),
  payloadClass: defineKey({
    key: 'hoodie.compaction.payload.class',
    default: undefined,
    parser: optionalText,
    description: 'the payload class (versions 6 and 8)',
  }),
  legacyPayloadClass: defineKey({
    key: 'hoodie.table.legacy.payload.class',
    default: undefined,
    parser: optionalText,
    description: 'Hudi 1.1 (version 9): the payload class the table was created with',
  }),
  orderingFields: defineKey({
    key: 'hoodie.table.ordering.fields',
    default: undefined,
    parser: optionalText,
    description: 'Hudi 1.1 (version 9): the ordering fields, before hoodie.table.precombine.field',
  }),
  partialUpdateMode: defineKey({
    key: 'hoodie.table.partial.update.mode',
    default: undefined,
    parser: optionalText,
    description: 'Hudi 1.1 (version 9): how partial records merge',
  }),
  tableFormat: defineKey({ key: 'hoodie.table.format', default: 'native', parser: anyText, description: 'Hudi 1.1 (version 9): the table format' }),
} as const;

/** The write properties a new table takes its identity from (Hudi's datasource keys, else the table's own). */
export const NEW_TABLE_KEYS = {
  tableName: defineKey({
    key: 'hoodie.table.name',
    default: undefined,
    parser: optionalText,
    alternatives: ['hoodie.datasource.write.table.name'],
    description: "the new table's name",
  }),
  recordKeyFields: defineKey({
    key: 'hoodie.datasource.write.recordkey.field',
    default: undefined,
    parser: optionalText,
    alternatives: [TABLE_KEYS.recordKeyFields.key],
    description: 'record key fields',
  }),
  keyGeneratorClass: defineKey({
    key: 'hoodie.datasource.write.keygenerator.class',
    default: undefined,
    parser: optionalText,
    alternatives: [TABLE_KEYS.keyGeneratorClass.key],
    description: 'key generator',
  }),
  partitionFields: defineKey({
    key: 'hoodie.datasource.write.partitionpath.field',
    default: undefined,
    parser: optionalText,
    alternatives: [TABLE_KEYS.partitionFields.key],
    description: 'partition fields',
  }),
  precombineField: defineKey({
    key: 'hoodie.datasource.write.precombine.field',
    default: undefined,
    parser: optionalText,
    alternatives: [TABLE_KEYS.precombineField.key],
    description: 'ordering field',
  }),
  tableType: defineKey({
    key: 'hoodie.datasource.write.table.type',
    default: 'COPY_ON_WRITE' as TableType,
    parser: oneOf(['COPY_ON_WRITE', 'MERGE_ON_READ'] as const),
    alternatives: [TABLE_KEYS.type.key],
    description: "the new table's type: COPY_ON_WRITE, or MERGE_ON_READ (writes are delta commits with log files)",
  }),
  tableVersion: defineKey({
    key: 'hoodie.write.table.version',
    default: '6',
    parser: oneOf(['6', '8', '9'] as const),
    description:
      "the new table's version: 6 (Hudi 0.14/0.15, which Athena reads), or 8 (Hudi 1.0) / 9 (Hudi 1.1) for a copy-on-write table with an ordering field (EVENT_TIME_ORDERING); an existing table keeps its version",
  }),
} as const;

export interface TableConfig {
  readonly name: string;
  readonly databaseName: string;
  readonly type: TableType;
  readonly version: number;
  readonly timelineLayoutVersion: number;
  readonly recordKeyFields: readonly string[];
  readonly partitionFields: readonly string[];
  readonly precombineField: string | undefined;
  readonly keyGeneratorClass: string;
  readonly hiveStylePartitioning: boolean;
  readonly urlEncodePartitioning: boolean;
  readonly dropPartitionColumns: boolean;
  readonly populateMetaFields: boolean;
  readonly baseFileFormat: string;
  readonly createSchema: string | undefined;
  readonly archiveLogFolder: string;
  /** hoodie.table.timeline.timezone: the clock of instant times; LOCAL (Hudi's default) when absent. */
  readonly timelineTimeZone: TimelineTimeZone;
  /** hoodie.timeline.path (layout 2): the active timeline's folder under `.hoodie/`; `timeline` when absent. */
  readonly timelinePath: string;
  /** hoodie.timeline.history.path (layout 2): the LSM history's folder under the timeline folder; `history` when absent. */
  readonly timelineHistoryPath: string;
  /**
   * hoodie.record.merge.mode as stored (Hudi 1.x), else undefined (0.x tables merge by their payload class). Checked
   * for reading by assertSupported; recordMergeModeOf gives the mode a 1.x reader merges with.
   */
  readonly recordMergeMode: string | undefined;
  /** hoodie.table.initial.version (Hudi 1.x): the version the table was created with; undefined when absent or not a number. */
  readonly initialVersion: number | undefined;
  /** Every key as stored, for keys this type does not name (key generator options, …). */
  readonly properties: ReadonlyMap<string, string>;
}

/**
 * KeyGeneratorType: the class each type names (Hudi 1.x stores the type, KeyGeneratorType.getKeyGeneratorClassName
 * reads the class first). Which of them this build computes keys with is lib/table/key-generators.ts's to decide.
 */
const KEY_GENERATOR_TYPE_CLASSES: Readonly<Record<string, string>> = {
  SIMPLE: KEY_GENERATORS.simple,
  SIMPLE_AVRO: 'org.apache.hudi.keygen.SimpleAvroKeyGenerator',
  COMPLEX: KEY_GENERATORS.complex,
  COMPLEX_AVRO: 'org.apache.hudi.keygen.ComplexAvroKeyGenerator',
  TIMESTAMP: KEY_GENERATORS.timestampBased,
  TIMESTAMP_AVRO: 'org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator',
  CUSTOM: 'org.apache.hudi.keygen.CustomKeyGenerator',
  CUSTOM_AVRO: 'org.apache.hudi.keygen.CustomAvroKeyGenerator',
  NON_PARTITION: KEY_GENERATORS.nonPartitioned,
  NON_PARTITION_AVRO: 'org.apache.hudi.keygen.NonpartitionedAvroKeyGenerator',
  GLOBAL_DELETE: 'org.apache.hudi.keygen.GlobalDeleteKeyGenerator',
  GLOBAL_DELETE_AVRO: 'org.apache.hudi.keygen.GlobalAvroDeleteKeyGenerator',
  AUTO_RECORD: 'org.apache.hudi.keygen.AutoRecordGenWrapperKeyGenerator',
  AUTO_RECORD_AVRO: 'org.apache.hudi.keygen.AutoRecordGenWrapperAvroKeyGenerator',
  HOODIE_TABLE_METADATA: 'org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator',
  SPARK_SQL: 'org.apache.spark.sql.hudi.command.SqlKeyGenerator',
  SPARK_SQL_UUID: 'org.apache.spark.sql.hudi.command.UuidKeyGenerator',
  SPARK_SQL_MERGE_INTO: 'org.apache.spark.sql.hudi.command.MergeIntoKeyGenerator',
};

function keyGeneratorClassOfType(type: string | undefined, location: string): string | undefined {
  if (type === undefined) return undefined;
  const className = KEY_GENERATOR_TYPE_CLASSES[type.trim()];
  if (className === undefined) {
    throw new UnsupportedTableError(`${TABLE_KEYS.keyGeneratorType.key}=${type} is not a key generator type this build knows`, {
      location,
      fix: 'read this table with the Hudi that wrote it',
    });
  }
  return className;
}

/** hoodie.table.checksum: CRC32 of "<database>.<table>" (database defaults to ""). */
export function tableChecksum(databaseName: string, tableName: string): number {
  return crc32(Buffer.from(`${databaseName}.${tableName}`, 'utf8'));
}

/** Interpret parsed properties; `location` names the file in errors. */
export function tableConfigFromProperties(properties: ReadonlyMap<string, string>, location: string): TableConfig {
  const K = TABLE_KEYS;
  const get = <T>(key: ConfigKey<T>): T => readKey(properties, key, location);
  const name = get(K.name);
  if (!name) {
    throw new HudiError(`${K.name.key} is missing; the file is corrupt or not a Hudi table config`, {
      location,
      fix: 'restore hoodie.properties (Hudi keeps hoodie.properties.backup during updates) or re-create the table',
    });
  }
  const version = readOrRestore(K.version, properties, location);
  const type = readOrRestore(K.type, properties, location);
  const databaseName = get(K.databaseName);
  const storedChecksum = get(K.checksum);
  if (storedChecksum !== undefined && Number(storedChecksum) !== tableChecksum(databaseName, name)) {
    throw new HudiError(
      `${K.checksum.key} ${storedChecksum} does not match the table name (expected ${tableChecksum(databaseName, name)} for "${databaseName}.${name}"); the file was edited or corrupted`,
      { location, fix: 'restore hoodie.properties from hoodie.properties.backup or a copy' },
    );
  }
  // Hudi 1.x stores a CustomKeyGenerator's partition fields with their types (`region:SIMPLE`); the fields are the
  // names (HoodieTableConfig.getPartitionFields), the types stay in `properties` for the key generator.
  const partitionFields = get(K.partitionFields).map((field) => field.split(':')[0]!);
  const recordKeyFields = get(K.recordKeyFields);
  const keyGeneratorClass =
    get(K.keyGeneratorClass) ??
    keyGeneratorClassOfType(get(K.keyGeneratorType), location) ??
    (partitionFields.length === 0 ? KEY_GENERATORS.nonPartitioned : recordKeyFields.length > 1 ? KEY_GENERATORS.complex : KEY_GENERATORS.simple);
  return {
    name,
    databaseName,
    type,
    version,
    timelineLayoutVersion: Number(get(K.timelineLayoutVersion) ?? (version >= 8 ? 2 : 1)),
    recordKeyFields,
    partitionFields,
    // Hudi 1.1's ordering fields come first (HoodieTableConfig.ORDERING_FIELDS, alternative: the precombine field).
    precombineField: get(K.orderingFields) ?? get(K.precombineField),
    keyGeneratorClass,
    hiveStylePartitioning: get(K.hiveStylePartitioning),
    urlEncodePartitioning: get(K.urlEncodePartitioning),
    dropPartitionColumns: get(K.dropPartitionColumns),
    populateMetaFields: get(K.populateMetaFields),
    baseFileFormat: get(K.baseFileFormat),
    createSchema: get(K.createSchema),
    archiveLogFolder: get(K.archiveLogFolder),
    timelineTimeZone: timelineTimeZoneOf(properties.get(TIMELINE_TIMEZONE_KEY), location),
    timelinePath: get(K.timelinePath),
    timelineHistoryPath: get(K.timelineHistoryPath),
    recordMergeMode: get(K.recordMergeMode),
    initialVersion: /^\d+$/.test(get(K.initialVersion)?.trim() ?? '') ? Number(get(K.initialVersion)) : undefined,
    properties,
  };
}

/** A key whose bad value means a damaged file: the error says to restore it. */
function readOrRestore<T>(key: ConfigKey<T>, properties: ReadonlyMap<string, string>, location: string): T {
  try {
    return readKey(properties, key, location);
  } catch (error) {
    if (!(error instanceof ConfigValueError)) throw error;
    throw new HudiError(`${error.problem}, expected ${key.parser.expected}`, { location, fix: 'restore hoodie.properties from a backup', cause: error });
  }
}

/** HoodieTableConfig.TIMELINE_TIMEZONE */
export const TIMELINE_TIMEZONE_KEY = 'hoodie.table.timeline.timezone';

/** HoodieTimelineTimeZone.valueOf: UTC or LOCAL; absent means LOCAL, Hudi's default. */
function timelineTimeZoneOf(text: string | undefined, location: string): TimelineTimeZone {
  if (text === undefined || text.trim() === '') return 'LOCAL';
  const zone = text.trim().toUpperCase();
  if (!(TIMELINE_TIME_ZONES as readonly string[]).includes(zone)) {
    throw new HudiError(`${TIMELINE_TIMEZONE_KEY}=${text} is not a timeline time zone`, {
      location,
      fix: `set it to UTC or LOCAL (Hudi knows no other value)`,
    });
  }
  return zone as TimelineTimeZone;
}

/** Table versions this build reads: 5 and 6 (Hudi 0.x, timeline layout 1), 8 and 9 (Hudi 1.0 and 1.1, layout 2). */
export const READABLE_TABLE_VERSIONS: readonly number[] = [5, 6, 8, 9];
/** Table versions of Hudi 1.x (timeline layout 2): read; written only by the services in HUDI_1X_WRITE_MODES. */
export const HUDI_1X_TABLE_VERSIONS: readonly number[] = [8, 9];

/**
 * `delta-write` is a write that may be a merge-on-read delta commit (the writer's upsert/insert/delete/bulk_insert and
 * the rollback of a failed one); `clustering` also rewrites merge-on-read file slices (their log files merged in, as
 * Hudi does); `clean` is the cleaner; `archive` the archiver; `write` is every other table service (compaction), on
 * either table type.
 */
export type TableAccessMode = 'read' | 'write' | 'delta-write' | 'clustering' | 'clean' | 'archive';

/**
 * The services that write Hudi 1.x tables, and on which table types: each was proven against Hudi 1.0.2 and 1.1.1 on
 * Spark (test/interop/hudi-1x-services.test.ts, hudi-1x-writer.test.ts, hudi-1x-archival.test.ts,
 * hudi-1x-clustering.test.ts; merge-on-read: hudi-1x-mor-writer.test.ts, delta commits and their rollback;
 * hudi-1x-mor-services.test.ts, clean and archive; hudi-1x-compaction.test.ts; hudi-1x-mor-clustering.test.ts,
 * clustering that merges each slice's log files, named by their delta commits, into the new base files).
 */
const HUDI_1X_WRITE_MODES: ReadonlyMap<TableAccessMode, readonly TableType[]> = new Map([
  ['clean', ['COPY_ON_WRITE', 'MERGE_ON_READ']],
  ['delta-write', ['COPY_ON_WRITE', 'MERGE_ON_READ']],
  ['archive', ['COPY_ON_WRITE', 'MERGE_ON_READ']],
  ['clustering', ['COPY_ON_WRITE', 'MERGE_ON_READ']],
  // test/interop/hudi-1x-compaction.test.ts: the metadata table kept (its deltacommit as Hudi's compaction writes
  // it) or dropped first; one beside another pending compaction refused (lib/metadata, partition stats).
  ['write', ['MERGE_ON_READ']],
]);

/** How the refusal names a service. */
const SERVICE_NAMES: Partial<Record<TableAccessMode, string>> = { 'delta-write': 'write', write: 'compaction' };

/**
 * Refuse tables this build cannot handle, with the reason and what to do. Version 5 copy-on-write tables share
 * version 6's on-storage layout, so they are readable; writes need version 6, as Hudi 0.14 upgrades before writing.
 * Versions 8 and 9 (Hudi 1.x) are read (their 1.x keys checked by assertReadable1x) and never written: every write
 * service calls this before it writes anything.
 */
export function assertSupported(config: TableConfig, location: string, mode: TableAccessMode = 'read'): void {
  const writes1x = HUDI_1X_WRITE_MODES.get(mode);
  const accepted =
    mode === 'read' ? READABLE_TABLE_VERSIONS : writes1x === undefined ? [SUPPORTED_TABLE_VERSION] : [SUPPORTED_TABLE_VERSION, ...HUDI_1X_TABLE_VERSIONS];
  if (!accepted.includes(config.version)) {
    const problem = HUDI_1X_TABLE_VERSIONS.includes(config.version)
      ? `table version ${config.version} (Hudi ${config.version === 8 ? '1.0' : '1.1'}, timeline layout 2) is not written by ${mode === 'read' ? 'this build' : `this service (${mode})`} yet: of Hudi 1.x tables it reads every one and runs ${[...HUDI_1X_WRITE_MODES].map(([service, types]) => `${SERVICE_NAMES[service] ?? service} on ${types.join(' and ')}`).join(', ')} tables`
      : config.version > 9
        ? `table version ${config.version} is not supported (unknown to this build); it reads table versions 5, 6, 8 and 9 and writes version 6 (Hudi 0.14/0.15)`
        : `table version ${config.version} is not supported for ${mode === 'read' ? 'reading' : 'writing'}; this build handles table version 6 (Hudi 0.14/0.15)`;
    throw new UnsupportedTableError(problem, {
      location,
      fix:
        config.version < 6
          ? 'upgrade the table to version 6 by writing to it once with Hudi 0.14 or 0.15'
          : HUDI_1X_TABLE_VERSIONS.includes(config.version)
            ? `run this service with Hudi ${config.version === 8 ? '1.0' : '1.1'}, or downgrade the table with hudi-cli \`downgrade table --toVersion SIX\``
            : 'use a Hudi 0.14/0.15 table, or downgrade it with hudi-cli `downgrade table --toVersion SIX`',
    });
  }
  // Merge-on-read tables are read, written, compacted, clustered, cleaned and archived. Layouts a service does not
  // keep (change-data-capture tables for the cleaner, bucket indexes, …) are refused in lib/table/layouts.ts.
  if (config.baseFileFormat !== 'PARQUET') {
    throw new UnsupportedTableError(`base file format ${config.baseFileFormat} is not supported; only PARQUET`, { location });
  }
  if (HUDI_1X_TABLE_VERSIONS.includes(config.version)) {
    assertReadable1x(config, location);
    if (writes1x !== undefined && !writes1x.includes(config.type)) {
      throw new UnsupportedTableError(
        `${mode} of a ${config.type} table at table version ${config.version} (Hudi ${config.version === 8 ? '1.0' : '1.1'}) is not supported yet; this build does it for ${writes1x.join(' and ')} tables`,
        { location, fix: `run this service with Hudi ${config.version === 8 ? '1.0' : '1.1'}` },
      );
    }
  } else if (config.timelineLayoutVersion !== 1) {
    throw new UnsupportedTableError(
      `${TABLE_KEYS.timelineLayoutVersion.key}=${config.timelineLayoutVersion} does not go with table version ${config.version} (layout 1)`,
      {
        location,
        fix: 'restore hoodie.properties from a backup',
      },
    );
  }
}

/** The record merge modes a 1.x table may name (RecordMergeMode), and the two this build reads. */
export type RecordMergeMode = 'EVENT_TIME_ORDERING' | 'COMMIT_TIME_ORDERING';
const MERGE_MODES = ['EVENT_TIME_ORDERING', 'COMMIT_TIME_ORDERING', 'CUSTOM'] as const;
/** HoodieRecordMerger's strategy ids. */
const MERGE_STRATEGY_IDS: Readonly<Record<string, (typeof MERGE_MODES)[number] | 'PAYLOAD'>> = {
  'eeb8d96f-b1e4-49fd-bbf8-28ac514178e5': 'EVENT_TIME_ORDERING',
  'ce9acb64-bde0-424c-9b91-f6ebba25356d': 'COMMIT_TIME_ORDERING',
  '00000000-0000-0000-0000-000000000000': 'PAYLOAD',
};
/** HoodieTableConfig.inferRecordMergeModeFromPayloadClass (1.1 adds EventTimeAvroPayload); any other payload is CUSTOM. */
const PAYLOAD_MERGE_MODES: Readonly<Record<string, RecordMergeMode>> = {
  'org.apache.hudi.common.model.DefaultHoodieRecordPayload': 'EVENT_TIME_ORDERING',
  'org.apache.hudi.common.model.EventTimeAvroPayload': 'EVENT_TIME_ORDERING',
  'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload': 'COMMIT_TIME_ORDERING',
};

/**
 * The merge mode a Hudi 1.x reader merges a table's records with: hoodie.record.merge.mode as stored, else as
 * HoodieTableConfig.inferCorrectMergingBehavior infers it (from the strategy id, the payload class, else the ordering
 * field); undefined for a 0.x table, which merges by its payload class.
 */
export function recordMergeModeOf(config: TableConfig, location: string): RecordMergeMode | undefined {
  if (!HUDI_1X_TABLE_VERSIONS.includes(config.version)) return undefined;
  assertReadable1x(config, location);
  return inferredMergeMode(config) as RecordMergeMode;
}

function inferredMergeMode(config: TableConfig): string {
  if (config.recordMergeMode !== undefined) return config.recordMergeMode.trim().toUpperCase();
  const strategyId = readKey(config.properties, TABLE_KEYS.recordMergeStrategyId, 'hoodie.properties');
  const byStrategy = strategyId === undefined ? undefined : MERGE_STRATEGY_IDS[strategyId];
  if (byStrategy !== undefined) return byStrategy === 'PAYLOAD' ? 'CUSTOM' : byStrategy;
  const payload = tablePayloadClass(config);
  if (payload !== undefined) return PAYLOAD_MERGE_MODES[payload] ?? 'CUSTOM';
  return config.precombineField === undefined ? 'COMMIT_TIME_ORDERING' : 'EVENT_TIME_ORDERING';
}

function tablePayloadClass(config: TableConfig): string | undefined {
  return (
    readKey(config.properties, TABLE_KEYS.legacyPayloadClass, 'hoodie.properties') ?? readKey(config.properties, TABLE_KEYS.payloadClass, 'hoodie.properties')
  );
}

/**
 * The Hudi 1.x keys of hoodie.properties, checked before a read: a value this build does not know is refused by
 * name rather than read some other way (docs/hudi-1x-format.md lists them and the Java they come from).
 */
export function assertReadable1x(config: TableConfig, location: string): void {
  const refuse = (problem: string, fix: string): never => {
    throw new UnsupportedTableError(problem, { location, fix });
  };
  const K = TABLE_KEYS;
  const withHudi = `read it with Hudi ${config.version === 8 ? '1.0' : '1.1'}`;
  if (config.timelineLayoutVersion !== 2) {
    refuse(
      `${K.timelineLayoutVersion.key}=${config.timelineLayoutVersion} does not go with table version ${config.version}, whose timeline is layout 2`,
      'restore hoodie.properties from a backup',
    );
  }
  for (const key of [K.timelinePath, K.timelineHistoryPath]) {
    const value = readKey(config.properties, key, location);
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(value) || value.includes('..')) {
      refuse(
        `${key.key}=${value} is not a folder name this build reads (one folder under ${key === K.timelinePath ? '.hoodie' : 'the timeline folder'})`,
        withHudi,
      );
    }
  }
  const initial = readKey(config.properties, K.initialVersion, location);
  if (initial !== undefined && !(/^\d+$/.test(initial.trim()) && Number(initial) <= config.version)) {
    refuse(`${K.initialVersion.key}=${initial} is not a table version at or below ${config.version}`, 'restore hoodie.properties from a backup');
  }
  const format = readKey(config.properties, K.tableFormat, location);
  if (format.trim().toLowerCase() !== 'native') refuse(`${K.tableFormat.key}=${format} is not supported; this build reads Hudi's native format only`, withHudi);
  const partial = readKey(config.properties, K.partialUpdateMode, location);
  if (partial !== undefined && partial.trim() !== '') {
    refuse(`${K.partialUpdateMode.key}=${partial} (partial updates) is not supported for reading`, withHudi);
  }
  if (config.precombineField?.includes(',')) {
    refuse(`ordering fields ${config.precombineField} (more than one) are not supported for reading; this build orders by one field`, withHudi);
  }
  const mode = inferredMergeMode(config);
  if (!(MERGE_MODES as readonly string[]).includes(mode)) {
    refuse(`${K.recordMergeMode.key}=${mode} is not a record merge mode this build knows (EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING, CUSTOM)`, withHudi);
  }
  if (mode === 'CUSTOM') refuse(`${K.recordMergeMode.key}=CUSTOM (a custom merger or payload) is not supported for reading`, withHudi);
  const strategyId = readKey(config.properties, K.recordMergeStrategyId, location);
  if (strategyId !== undefined) {
    const byStrategy = MERGE_STRATEGY_IDS[strategyId.trim()];
    if (byStrategy === undefined) refuse(`${K.recordMergeStrategyId.key}=${strategyId} is not a merge strategy this build knows`, withHudi);
    if (byStrategy !== mode) refuse(`${K.recordMergeStrategyId.key}=${strategyId} (${byStrategy}) does not go with ${K.recordMergeMode.key}=${mode}`, withHudi);
  }
  // Version 9's legacy payload class is what a downgrade restores; with a stored merge mode, its readers merge by the
  // mode. Hudi 1.1's upgrade of a merge-on-read table with an ordering field keeps OverwriteWithLatestAvroPayload
  // there beside EVENT_TIME_ORDERING (SevenToEightUpgradeHandler.upgradeMergeMode, then EightToNineUpgradeHandler).
  const active = readKey(config.properties, K.payloadClass, location);
  const legacy = readKey(config.properties, K.legacyPayloadClass, location);
  for (const [payload, bindsMode] of [
    [active, true],
    [legacy, config.recordMergeMode === undefined],
  ] as const) {
    if (payload === undefined) continue;
    const byPayload = PAYLOAD_MERGE_MODES[payload.trim()];
    if (byPayload === undefined) refuse(`payload class ${payload} (a CUSTOM merge) is not supported for reading`, withHudi);
    if (bindsMode && byPayload !== mode) refuse(`payload class ${payload} (${byPayload}) does not go with ${K.recordMergeMode.key}=${mode}`, withHudi);
  }
}

/**
 * Why stored hoodie.properties text cannot be used, or undefined. Hudi writes `hoodie.table.checksum` into every
 * table of version 4 and later (the 3→4 upgrade adds it, and every rewrite keeps it), so a file without it, or with
 * one that does not match the table name, is truncated, half-written or edited: used, it would silently change the
 * table's layout (a hive-style table losing its flag starts a second partition layout). Hudi 0.15 refuses a
 * mismatching checksum and reads the backup instead; it takes a file without one, which we do not for version 4+.
 */
export function storedPropertiesProblem(text: string): string | undefined {
  if (text.includes('\u0000') || !/hoodie\./.test(text)) return 'it holds no hoodie.* keys';
  const properties = parseJavaProperties(text);
  const name = properties.get(TABLE_KEYS.name.key);
  if (!name) return 'hoodie.table.name is missing';
  const versionText = properties.get(TABLE_KEYS.version.key);
  const version = versionText === undefined ? undefined : Number(versionText);
  const checksum = properties.get(TABLE_KEYS.checksum.key);
  if (checksum === undefined) {
    if (version !== undefined && Number.isInteger(version) && version < 4) return undefined;
    return 'hoodie.table.checksum is missing (Hudi writes it into every table of version 4 and later: the file is truncated or was edited)';
  }
  const expected = tableChecksum(properties.get(TABLE_KEYS.databaseName.key) ?? '', name);
  if (Number(checksum) !== expected) return `hoodie.table.checksum ${checksum} does not match the table name (expected ${expected})`;
  return undefined;
}

/**
 * Read hoodie.properties, or its backup (Hudi writes `hoodie.properties.backup` while it rewrites the file) when
 * the file is missing or fails storedPropertiesProblem; refuse when neither is whole.
 */
export async function readTableConfig(storage: Storage): Promise<TableConfig> {
  const main = await readIfPresent(storage, PROPERTIES_FILE);
  const mainProblem = main === undefined ? undefined : storedPropertiesProblem(main);
  if (main !== undefined && mainProblem === undefined) {
    return tableConfigFromProperties(parseJavaProperties(main), storage.uriOf(PROPERTIES_FILE));
  }
  const backup = await readIfPresent(storage, PROPERTIES_BACKUP_FILE);
  const backupProblem = backup === undefined ? undefined : storedPropertiesProblem(backup);
  if (backup !== undefined && backupProblem === undefined) {
    return tableConfigFromProperties(parseJavaProperties(backup), storage.uriOf(PROPERTIES_BACKUP_FILE));
  }
  if (main === undefined && backup === undefined) {
    const hasMetafolder = (await storage.listDir(METAFOLDER)).files.length > 0;
    if (!hasMetafolder) throw new NotAHudiTableError(storage.uri);
    throw new HudiError('hoodie.properties is missing', { location: storage.uri, fix: 'restore .hoodie/hoodie.properties from a backup' });
  }
  const backupNote = backup === undefined ? 'and there is no hoodie.properties.backup' : `and hoodie.properties.backup is not usable either: ${backupProblem}`;
  throw new HudiError(main === undefined ? `hoodie.properties is missing, ${backupNote}` : `hoodie.properties is corrupt: ${mainProblem}, ${backupNote}`, {
    location: storage.uriOf(main === undefined ? PROPERTIES_BACKUP_FILE : PROPERTIES_FILE),
    fix: 'restore hoodie.properties from a copy of the table; nothing reads or writes the table until then',
  });
}

async function readIfPresent(storage: Storage, path: string): Promise<string | undefined> {
  try {
    return Buffer.from(await storage.get(path)).toString('utf8');
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** What `init` takes: Hudi's own write keys, as a Hudi user writes them. */
export interface NewTableOptions {
  tableName: string;
  databaseName?: string;
  recordKeyFields: readonly string[];
  partitionFields: readonly string[];
  precombineField?: string;
  keyGeneratorClass?: string;
  hiveStylePartitioning?: boolean;
  urlEncodePartitioning?: boolean;
  populateMetaFields?: boolean;
  /** Default COPY_ON_WRITE. */
  tableType?: TableType;
  /** Merge-on-read: hoodie.compaction.payload.class, which Hudi 0.14/0.15 stores for merge-on-read tables. */
  payloadClass?: string;
  createSchema?: string;
  /** Extra table-level keys to persist (key generator options such as hoodie.keygen.timebased.*). */
  extraProperties?: Record<string, string>;
  /** hoodie.table.version: 6 unless 8 or 9 (Hudi 1.x, timeline layout 2) is asked for. */
  tableVersion?: 6 | 8 | 9;
}

/** Map a user's write properties (hoodie.datasource.write.* / hoodie.table.*) to NewTableOptions. */
export function newTableOptionsFromWriteProperties(props: ReadonlyMap<string, string>, location: string): NewTableOptions {
  const K = NEW_TABLE_KEYS;
  const pick = (key: ConfigKey<string | undefined>) => readKey(props, key, location);
  const tableName = pick(K.tableName);
  if (!tableName) throw new HudiError(`${K.tableName.key} is required to create a table`, { location, fix: `add ${K.tableName.key}=<name> to the properties` });
  const recordKeys = pick(K.recordKeyFields);
  if (!recordKeys) {
    throw new HudiError(`${K.recordKeyFields.key} is required to create a table`, { location, fix: `add ${K.recordKeyFields.key}=<column>[,<column>]` });
  }
  const split = (v: string | undefined) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const keyGeneratorClass = pick(K.keyGeneratorClass);
  // Hudi stores timestamp partition fields with their output format; the field names alone go in partition.fields.
  const partitionFields = split(pick(K.partitionFields)).map((f) => f.split(':')[0]!);
  const extraProperties: Record<string, string> = {};
  for (const [key, value] of props) if (key.startsWith('hoodie.keygen.') || key.startsWith('hoodie.deltastreamer.keygen.')) extraProperties[key] = value;
  const bool = (key: string) => {
    const v = props.get(key);
    return v === undefined ? undefined : v.trim().toLowerCase() === 'true';
  };
  const options: NewTableOptions = {
    tableName,
    recordKeyFields: split(recordKeys),
    partitionFields,
    extraProperties,
  };
  const databaseName = rawValue(props, TABLE_KEYS.databaseName)?.text;
  if (databaseName !== undefined) options.databaseName = databaseName;
  const precombine = pick(K.precombineField);
  if (precombine !== undefined) options.precombineField = precombine;
  if (keyGeneratorClass !== undefined) options.keyGeneratorClass = keyGeneratorClass;
  const hive = bool(TABLE_KEYS.hiveStylePartitioning.key);
  if (hive !== undefined) options.hiveStylePartitioning = hive;
  const urlEncode = bool(TABLE_KEYS.urlEncodePartitioning.key);
  if (urlEncode !== undefined) options.urlEncodePartitioning = urlEncode;
  const populate = bool(TABLE_KEYS.populateMetaFields.key);
  if (populate !== undefined) options.populateMetaFields = populate;
  const tableType = readKey(props, K.tableType, location);
  if (tableType === 'MERGE_ON_READ') {
    options.tableType = tableType;
    options.payloadClass = props.get('hoodie.datasource.write.payload.class')?.trim() || 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload';
  }
  const tableVersion = Number(readKey(props, K.tableVersion, location)) as 6 | 8 | 9;
  if (tableVersion !== 6) {
    // What a 1.x table of ours must be for our writes to it to be ones Hudi 1.x was seen to agree with.
    const refuse = (problem: string, fix: string): never => {
      throw new HudiError(`${K.tableVersion.key}=${tableVersion}: ${problem}`, { location, fix });
    };
    if (options.precombineField === undefined) {
      refuse(
        'a table without an ordering field merges by COMMIT_TIME_ORDERING, which this build does not write yet',
        `add ${K.precombineField.key}=<column> (EVENT_TIME_ORDERING), or create version 6`,
      );
    }
    options.tableVersion = tableVersion;
  }
  return options;
}

/** The properties Hudi 0.14/0.15 writes for a new v6 copy-on-write (or merge-on-read) table. */
export function newTableProperties(options: NewTableOptions): Map<string, string> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.tableName)) {
    throw new HudiError(`table name "${options.tableName}" is not valid`, { fix: 'use letters, digits and underscores, starting with a letter' });
  }
  const keyGeneratorClass =
    options.keyGeneratorClass ??
    (options.partitionFields.length === 0
      ? KEY_GENERATORS.nonPartitioned
      : options.recordKeyFields.length > 1
        ? KEY_GENERATORS.complex
        : KEY_GENERATORS.simple);
  const props = new Map<string, string>();
  props.set(TABLE_KEYS.name.key, options.tableName);
  if (options.databaseName !== undefined) props.set(TABLE_KEYS.databaseName.key, options.databaseName);
  props.set(TABLE_KEYS.type.key, options.tableType ?? 'COPY_ON_WRITE');
  const version = options.tableVersion ?? SUPPORTED_TABLE_VERSION;
  // A 1.x merge-on-read table has a copy-on-write one's keys (it merges by hoodie.record.merge.mode).
  if (options.tableType === 'MERGE_ON_READ' && version === SUPPORTED_TABLE_VERSION)
    props.set('hoodie.compaction.payload.class', options.payloadClass ?? 'org.apache.hudi.common.model.OverwriteWithLatestAvroPayload');
  props.set(TABLE_KEYS.version.key, String(version));
  if (version === 8 || version === 9) for (const [key, value] of hudi1xCreationKeys(version, options, keyGeneratorClass)) props.set(key, value);
  else {
    props.set(TABLE_KEYS.timelineLayoutVersion.key, '1');
    props.set(TABLE_KEYS.archiveLogFolder.key, 'archived');
  }
  props.set(TABLE_KEYS.recordKeyFields.key, options.recordKeyFields.join(','));
  if (options.partitionFields.length > 0) props.set(TABLE_KEYS.partitionFields.key, options.partitionFields.join(','));
  if (options.precombineField && version !== 9) props.set(TABLE_KEYS.precombineField.key, options.precombineField);
  if (version === SUPPORTED_TABLE_VERSION) props.set(TABLE_KEYS.keyGeneratorClass.key, keyGeneratorClass);
  props.set(TABLE_KEYS.hiveStylePartitioning.key, String(options.hiveStylePartitioning ?? false));
  props.set(TABLE_KEYS.urlEncodePartitioning.key, String(options.urlEncodePartitioning ?? false));
  props.set(TABLE_KEYS.dropPartitionColumns.key, 'false');
  // Hudi's default is LOCAL (the writer JVM's zone); instants of writers in different zones would then not sort by
  // time. A table we create says UTC, and Spark writers are told to use UTC too (README).
  props.set(TIMELINE_TIMEZONE_KEY, 'UTC');
  if (options.populateMetaFields === false) props.set(TABLE_KEYS.populateMetaFields.key, 'false');
  if (options.createSchema) props.set(TABLE_KEYS.createSchema.key, options.createSchema);
  for (const [key, value] of Object.entries(options.extraProperties ?? {})) props.set(key, value);
  props.set(TABLE_KEYS.checksum.key, String(tableChecksum(options.databaseName ?? '', options.tableName)));
  return props;
}

/**
 * The keys Hudi 1.0.2 (version 8) and 1.1.1 (version 9) write for a new copy-on-write or merge-on-read table with an
 * ordering field and no metadata table, beside the ones every version has (HoodieTableMetaClient.TableBuilder, seen in the tables Spark
 * wrote): timeline layout 2 and its folders, EVENT_TIME_ORDERING, the key generator as its type. Version 8 names the
 * merge strategy and payload; 9 stores the ordering field as hoodie.table.ordering.fields and its table format.
 */
function hudi1xCreationKeys(version: 8 | 9, options: NewTableOptions, keyGeneratorClass: string): Map<string, string> {
  const type = Object.entries(KEY_GENERATOR_TYPE_CLASSES).find(([, className]) => className === keyGeneratorClass)?.[0];
  if (type === undefined) {
    throw new HudiError(`key generator ${keyGeneratorClass} has no KeyGeneratorType, which a version ${version} table stores`, {
      fix: "use one of Hudi's key generators, or create version 6",
    });
  }
  const keys = new Map<string, string>([
    [TABLE_KEYS.initialVersion.key, String(version)],
    [TABLE_KEYS.timelineLayoutVersion.key, '2'],
    [TABLE_KEYS.timelinePath.key, 'timeline'],
    [TABLE_KEYS.timelineHistoryPath.key, 'history'],
    [TABLE_KEYS.archiveLogFolder.key, 'history'],
    [TABLE_KEYS.recordMergeMode.key, 'EVENT_TIME_ORDERING'],
    [TABLE_KEYS.keyGeneratorType.key, type],
    ['hoodie.table.cdc.enabled', 'false'],
    ['hoodie.table.multiple.base.file.formats.enable', 'false'],
    ['hoodie.partition.metafile.use.base.format', 'false'],
    [TABLE_KEYS.populateMetaFields.key, 'true'],
    [TABLE_KEYS.baseFileFormat.key, 'PARQUET'],
  ]);
  if (version === 8) {
    keys.set(TABLE_KEYS.recordMergeStrategyId.key, 'eeb8d96f-b1e4-49fd-bbf8-28ac514178e5');
    keys.set(TABLE_KEYS.payloadClass.key, 'org.apache.hudi.common.model.DefaultHoodieRecordPayload');
  } else {
    keys.set(TABLE_KEYS.orderingFields.key, options.precombineField!);
    keys.set(TABLE_KEYS.tableFormat.key, 'native');
  }
  return keys;
}

/** hoodie.properties text as Hudi writes it: two date comment lines, then the keys. */
export function formatTableProperties(props: ReadonlyMap<string, string>, now: Date = new Date()): string {
  return formatJavaProperties(props, [`Properties saved on ${now.toISOString()}`, now.toUTCString()]);
}

/**
 * Change hoodie.properties as Hudi does (HoodieTableConfig.modify), so that a reader never sees a partial file:
 * recover from an earlier attempt (a missing or checksum-less file comes back from the backup), copy the file to
 * hoodie.properties.backup, delete it (readers now read the backup), write the modified properties with their
 * checksum, read them back to verify the checksum, and delete the backup. Call it under the table lock.
 */
export async function updateTableProperties(storage: Storage, modify: (properties: Map<string, string>) => void, now: Date = new Date()): Promise<TableConfig> {
  const read = async (path: string): Promise<Map<string, string> | undefined> => {
    try {
      return parseJavaProperties(Buffer.from(await storage.get(path)).toString('utf8'), storage.uriOf(path));
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  };
  const validChecksum = (props: ReadonlyMap<string, string>): boolean =>
    props.get(TABLE_KEYS.checksum.key) === String(tableChecksum(props.get(TABLE_KEYS.databaseName.key) ?? '', props.get(TABLE_KEYS.name.key) ?? ''));
  let current = await read(PROPERTIES_FILE);
  if (current === undefined || !validChecksum(current)) {
    const backup = await read(PROPERTIES_BACKUP_FILE);
    if (backup === undefined) {
      throw new HudiError(
        current === undefined ? 'hoodie.properties is missing and there is no backup' : 'hoodie.properties has no valid checksum and there is no backup',
        {
          location: storage.uriOf(PROPERTIES_FILE),
          fix: 'restore hoodie.properties from a copy',
        },
      );
    }
    current = backup;
  }
  const text = formatJavaProperties(current, [`Updated at ${now.toISOString()}`, now.toUTCString()]);
  await storage.put(PROPERTIES_BACKUP_FILE, text);
  await storage.delete([PROPERTIES_FILE]);
  const modified = new Map(current);
  modify(modified);
  modified.set(TABLE_KEYS.checksum.key, String(tableChecksum(modified.get(TABLE_KEYS.databaseName.key) ?? '', modified.get(TABLE_KEYS.name.key) ?? '')));
  await storage.put(PROPERTIES_FILE, formatJavaProperties(modified, [`Updated at ${now.toISOString()}`, now.toUTCString()]));
  const written = await read(PROPERTIES_FILE);
  if (written === undefined || written.get(TABLE_KEYS.checksum.key) !== modified.get(TABLE_KEYS.checksum.key)) {
    await storage.delete([PROPERTIES_FILE]);
    throw new HudiError('hoodie.properties did not read back with its checksum; readers use hoodie.properties.backup until the next update', {
      location: storage.uriOf(PROPERTIES_FILE),
      fix: 'retry; the next update recovers from the backup',
    });
  }
  await storage.delete([PROPERTIES_BACKUP_FILE]);
  return tableConfigFromProperties(modified, storage.uriOf(PROPERTIES_FILE));
}
