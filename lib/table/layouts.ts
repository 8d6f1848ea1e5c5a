/**
 * Table layouts some of our services cannot keep, and which services refuse them: the one place that decides, so every
 * service (CLI and Lambda alike) refuses the same layouts, before it writes anything. The README's "Table layouts:
 * which services keep them" is the user's view; tableLayout gives Hudi's reasons, layout by layout.
 *
 * The index is a writer setting, not in hoodie.properties, so a bucket table is known from the run's properties or
 * from the table itself: its file ids (simple engine) or its consistent-hashing metadata folder.
 */
import { randomUUID } from 'node:crypto';
import { defineKey, oneOf, optionalText, rawValue, readKey } from '../config/index.js';
import { UnsupportedTableError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { MAX_RECOGNISED_BUCKETS } from './bucket-index.js';
import { HUDI_1X_TABLE_VERSIONS, type TableConfig } from './config.js';
import type { FileSystemView } from './file-system-view.js';

/** Hudi's index type (HoodieIndexConfig.INDEX_TYPE): layouts and writes refuse the indexes they do not keep. */
export const INDEX_TYPE = defineKey({
  key: 'hoodie.index.type',
  default: undefined,
  parser: optionalText,
  description:
    "records are placed as the bloom and simple indexes place them (BLOOM, SIMPLE, their GLOBAL_ forms, RECORD_INDEX), or with BUCKET as the simple bucket index places them (each record in its hash bucket's file group; needs hoodie.bucket.index.num.buckets; bulk_insert only into buckets without a file group, and not on Hudi 1.x tables); the consistent-hashing bucket engine (hoodie.index.bucket.engine) is written on version 6 merge-on-read tables as its hashing metadata places records and refused by clustering, the simple one by clustering (see Table layouts), and on merge-on-read the other indexes that index log files (HBASE, INMEMORY, FLINK_STATE)",
});

/** Our services that write to a table (`write`: upsert, insert, bulk_insert, delete, and ingest, which writes). */
export type TableService = 'write' | 'clustering' | 'compaction' | 'clean' | 'archive';

export type LayoutName = 'simple-bucket-index' | 'consistent-hashing-bucket-index' | 'cdc' | 'no-meta-fields' | 'dropped-partition-columns';

export const LAYOUT_KEYS = {
  indexType: INDEX_TYPE,
  bucketEngine: defineKey({
    key: 'hoodie.index.bucket.engine',
    default: 'SIMPLE',
    parser: optionalText,
    description:
      "the bucket index engine: SIMPLE or CONSISTENT_HASHING (writes place records by the partition's hashing metadata on version 6 merge-on-read tables; clustering refused)",
  }),
  cdcEnabled: defineKey({ key: 'hoodie.table.cdc.enabled', default: undefined, parser: optionalText, description: 'the table keeps change data' }),
  cdcLoggingMode: defineKey({
    key: 'hoodie.table.cdc.supplemental.logging.mode',
    default: 'DATA_BEFORE_AFTER' as CdcLoggingMode,
    parser: oneOf<CdcLoggingMode>(['OP_KEY_ONLY', 'DATA_BEFORE', 'DATA_BEFORE_AFTER']),
    description:
      "a CDC table's change data (hoodie.properties): what our upserts and deletes write in each file group they merge (copy-on-write, and merge-on-read small files) into its cdc log file, the operation and record key (OP_KEY_ONLY), and the before image (DATA_BEFORE), and the after image (DATA_BEFORE_AFTER)",
  }),
} as const;

/** HoodieCDCSupplementalLoggingMode: what a cdc log file holds besides each change's operation. */
export type CdcLoggingMode = 'OP_KEY_ONLY' | 'DATA_BEFORE' | 'DATA_BEFORE_AFTER';

/** HoodieTableMetaClient.getHashingMetadataPath: the consistent-hashing engine's per-partition metadata. */
export const CONSISTENT_HASHING_METADATA_FOLDER = `${METAFOLDER}/.bucket_index/consistent_hashing_metadata`;

/** A file id Hudi's simple bucket index wrote: the bucket number in 8 digits, then the rest of a UUID. */
const BUCKET_FILE_ID = /^(\d{8})-/;

/** The bucket number a file id starts with, or undefined when it does not look like a bucket file id. */
export function bucketNumberOf(fileId: string): number | undefined {
  const match = BUCKET_FILE_ID.exec(fileId);
  if (match === null) return undefined;
  const bucket = Number(match[1]);
  return bucket < MAX_RECOGNISED_BUCKETS ? bucket : undefined;
}

/**
 * A new file group id, `<uuid>-0`, that never reads as a bucket's (bucketNumberOf): a random UUID does now and then
 * (eight leading digits, a small number), and a table we write must not pass for a bucket-index table.
 */
export function newFileGroupId(uuid: () => string = randomUUID): string {
  for (;;) {
    const id = `${uuid()}-0`;
    if (bucketNumberOf(id) === undefined) return id;
  }
}

export interface TableLayout {
  /** The bucket index and what showed it, or undefined. */
  readonly bucketIndex: { readonly engine: 'SIMPLE' | 'CONSISTENT_HASHING'; readonly evidence: string } | undefined;
  readonly cdc: boolean;
  /** hoodie.populate.meta.fields=false: no stored record keys. */
  readonly withoutMetaFields: boolean;
  /** hoodie.datasource.write.drop.partition.columns=true on a partitioned table. */
  readonly droppedPartitionColumns: boolean;
  readonly mergeOnRead: boolean;
  /** A Hudi 1.x table (version 8 or 9), whose services some layouts are refused by on top. */
  readonly hudi1x: boolean;
}

export interface LayoutEvidence {
  /** The run's Hudi properties (hoodie.index.type, hoodie.index.bucket.engine). */
  readonly properties?: ReadonlyMap<string, string>;
  /** File ids of the table's live file groups (or of a plan's inputs): bucket numbers show a simple bucket index. */
  readonly fileIds?: Iterable<string>;
  /** The consistent-hashing metadata folder is there. */
  readonly consistentHashingMetadata?: boolean;
}

/** hoodie.table.cdc.enabled, read as Hudi reads its own flags (true in any case). */
export function cdcEnabled(config: TableConfig): boolean {
  return readKey(config.properties, LAYOUT_KEYS.cdcEnabled)?.trim().toLowerCase() === 'true';
}

/** hoodie.table.cdc.supplemental.logging.mode, read as HoodieTableConfig.cdcSupplementalLoggingMode does (any case). */
export function cdcLoggingMode(config: TableConfig, location: string): CdcLoggingMode {
  return readKey(config.properties, LAYOUT_KEYS.cdcLoggingMode, location);
}

/**
 * The table's layout from what is known about it; each piece of evidence is optional.
 *
 * - Bucket index (hoodie.index.type=BUCKET): each bucket is one file group whose file id starts with its 8-digit bucket
 *   number, which Hudi parses back (BucketIdentifier.bucketIdFromFileId). Clustering writes new file ids, so it is
 *   refused, as Hudi 0.15's Flink clustering refuses the simple engine (ClusteringUtil.validateClusteringScheduling)
 *   and Spark's allows the consistent-hashing engine only with its own strategies (HoodieClusteringConfig.validate).
 *   Writes keep the simple engine (lib/writer/bucket-plan.ts places records as HoodieSimpleBucketIndex does) and, on
 *   version 6 merge-on-read tables (Spark 0.15 writes the engine on merge-on-read only), the consistent-hashing one,
 *   each record to the file group its partition's hashing metadata names (lib/table/consistent-hashing.ts).
 *   Compaction, cleaning and archival keep every file id and leave the hashing metadata alone.
 * - CDC (hoodie.table.cdc.enabled=true): Hudi's data-changing writes leave change data (cdc log files) that Spark's CDC
 *   query needs. Our upserts and deletes on version 6 tables write them as HoodieMergeHandleWithChangeLog does where
 *   they merge a file group (lib/writer/cdc-log.ts), on merge-on-read tables too (small-file merges); their log appends
 *   write none, as HoodieAppendHandle writes none (the reader infers them from the log file and the slice the delta
 *   write stat names). Hudi 1.0.2 and 1.1.1 write copy-on-write change data alike (same cdc logs and blocks; 1.1.1's
 *   default merge handle logs every merge), so ours keep those tables too in DATA_BEFORE_AFTER and OP_KEY_ONLY;
 *   assertCdcWrite refuses the rest, 1.x merge-on-read writes here. In Hudi 0.15 clustering and compaction write
 *   no change data (HoodieMergeHandleFactory's compaction path takes no change-log handle) and the CDC extractor skips
 *   their instants (HoodieCDCExtractor keeps WriteOperationType.isDataChange operations only). Hudi 1.x compacts CDC
 *   tables with HoodieMergeHandleWithChangeLog for some indexes and may read compaction instants as changes, so on 1.x
 *   tables both are refused. Our cleaner deletes a cleaned slice's cdc log files with it, as Hudi 0.15's CleanPlanner
 *   does; on 1.x CDC tables cleaning is refused (its metadata-table update differs from Hudi's for the cdc logs).
 *   docs/hudi-cdc.md has the facts.
 * - Without meta fields (hoodie.populate.meta.fields=false) or with dropped partition columns: merging log records
 *   (compaction, clustering of merge-on-read slices) is not built for them; writes need stored record keys.
 */
export function tableLayout(config: TableConfig, evidence: LayoutEvidence): TableLayout {
  return {
    bucketIndex: bucketIndexOf(evidence),
    cdc: cdcEnabled(config),
    withoutMetaFields: config.populateMetaFields === false,
    droppedPartitionColumns: config.dropPartitionColumns === true && config.partitionFields.length > 0,
    mergeOnRead: config.type === 'MERGE_ON_READ',
    hudi1x: HUDI_1X_TABLE_VERSIONS.includes(config.version),
  };
}

function bucketIndexOf(evidence: LayoutEvidence): TableLayout['bucketIndex'] {
  const props = evidence.properties ?? new Map<string, string>();
  const indexType = readKey(props, LAYOUT_KEYS.indexType)?.trim().toUpperCase();
  const named = rawValue(props, LAYOUT_KEYS.bucketEngine)?.text.trim().toUpperCase();
  // The engine unnamed (Hudi's default, SIMPLE) on a table with hashing metadata: the table's engine, so a write is
  // told what to name instead of failing on file ids that carry no bucket number.
  if (indexType === 'BUCKET' && (named !== undefined || evidence.consistentHashingMetadata !== true)) {
    const engine = named === 'CONSISTENT_HASHING' ? 'CONSISTENT_HASHING' : 'SIMPLE';
    return { engine, evidence: `${LAYOUT_KEYS.indexType.key}=BUCKET, ${LAYOUT_KEYS.bucketEngine.key}=${engine}` };
  }
  if (evidence.consistentHashingMetadata === true) {
    return { engine: 'CONSISTENT_HASHING', evidence: `the table has ${CONSISTENT_HASHING_METADATA_FOLDER}` };
  }
  // At least half the file groups, so a table one of our services already gave random file ids is still known.
  let ids = 0;
  let buckets = 0;
  let first: string | undefined;
  for (const id of evidence.fileIds ?? []) {
    ids++;
    if (bucketNumberOf(id) === undefined) continue;
    buckets++;
    if (first === undefined || id < first) first = id;
  }
  if (buckets > 0 && buckets * 2 >= ids) {
    return { engine: 'SIMPLE', evidence: `its file ids carry bucket numbers (${first})` };
  }
  return undefined;
}

/** Whether the consistent-hashing engine's metadata folder exists (one listing). */
export async function hasConsistentHashingMetadata(storage: Storage): Promise<boolean> {
  const listed = await storage.listDir(CONSISTENT_HASHING_METADATA_FOLDER);
  return listed.files.length > 0 || listed.dirs.length > 0;
}

/** Every live file group's id in a view, merge-on-read groups of log files only included. */
export function viewFileIds(view: FileSystemView): string[] {
  return [...view.liveFileIds()];
}

/** The table's layout from its properties, the run's properties, a view's file ids and the metadata folder. */
export async function detectTableLayout(
  storage: Storage,
  config: TableConfig,
  evidence: { readonly properties?: ReadonlyMap<string, string>; readonly fileIds?: Iterable<string> },
): Promise<TableLayout> {
  return tableLayout(config, { ...evidence, consistentHashingMetadata: await hasConsistentHashingMetadata(storage) });
}

/** A layout one of our services does not keep: refused before the service writes anything. */
export class UnsupportedLayoutError extends UnsupportedTableError {
  readonly layout: LayoutName;
  readonly service: TableService;

  constructor(layout: LayoutName, service: TableService, problem: string, options: { location?: string; fix?: string } = {}) {
    super(problem, options);
    this.name = 'UnsupportedLayoutError';
    this.layout = layout;
    this.service = service;
  }
}

/**
 * Which services each layout refuses (`always`, on merge-on-read tables `mergeOnRead` too, on copy-on-write tables
 * `copyOnWrite` too, on Hudi 1.x tables `hudi1x` too); the others keep it exactly. README's "Table layouts" table says the same.
 */
export const REFUSED_SERVICES: Readonly<
  Record<
    LayoutName,
    {
      readonly always: readonly TableService[];
      readonly mergeOnRead: readonly TableService[];
      readonly copyOnWrite?: readonly TableService[];
      readonly hudi1x?: readonly TableService[];
      /** On merge-on-read Hudi 1.x tables, on top. */
      readonly hudi1xMergeOnRead?: readonly TableService[];
    }
  >
> = {
  'simple-bucket-index': { always: ['clustering'], mergeOnRead: [] },
  // Writes: Spark 0.15 writes the engine on merge-on-read tables only; Hudi 1.x's hashing metadata is not compared here.
  'consistent-hashing-bucket-index': { always: ['clustering'], mergeOnRead: [], copyOnWrite: ['write'], hudi1x: ['write'] },
  // Writes: upsert, delete and bulk_insert only, on 1.x tables in two logging modes (assertCdcWrite).
  cdc: { always: [], mergeOnRead: [], hudi1x: ['clustering', 'compaction', 'clean'], hudi1xMergeOnRead: ['write'] },
  // Merging log records needs the stored record keys (_hoodie_record_key): merge-on-read compaction and the merged
  // reads of merge-on-read clustering. Copy-on-write clustering copies rows as they are.
  'no-meta-fields': { always: ['write', 'compaction'], mergeOnRead: ['clustering'] },
  // Log records merged into base files without the partition columns, and delta writes of them, are not built
  // (snapshot reads of such merge-on-read tables are refused alike).
  'dropped-partition-columns': { always: ['compaction'], mergeOnRead: ['clustering', 'write'] },
};

const SERVICE_NAMES: Record<TableService, string> = {
  write: 'writes (upsert, insert, bulk_insert, delete, ingest)',
  clustering: 'clustering',
  compaction: 'compaction',
  clean: 'cleaning',
  archive: 'archival',
};

const VERBS: Record<TableService, string> = { write: 'write', clustering: 'cluster', compaction: 'compact', clean: 'clean', archive: 'archive' };

/** Throw UnsupportedLayoutError when `service` does not keep the table's layout. */
export function assertLayoutSupports(layout: TableLayout, service: TableService, location: string): void {
  const refuses = (name: LayoutName) =>
    REFUSED_SERVICES[name].always.includes(service) ||
    (layout.mergeOnRead && REFUSED_SERVICES[name].mergeOnRead.includes(service)) ||
    (!layout.mergeOnRead && (REFUSED_SERVICES[name].copyOnWrite ?? []).includes(service)) ||
    (layout.hudi1x && (REFUSED_SERVICES[name].hudi1x ?? []).includes(service)) ||
    (layout.hudi1x && layout.mergeOnRead && (REFUSED_SERVICES[name].hudi1xMergeOnRead ?? []).includes(service));
  const bucket = layout.bucketIndex;
  if (bucket !== undefined) {
    const name: LayoutName = bucket.engine === 'SIMPLE' ? 'simple-bucket-index' : 'consistent-hashing-bucket-index';
    if (refuses(name)) throw bucketRefusal(name, service, bucket.evidence, location, layout);
  }
  if (layout.withoutMetaFields && refuses('no-meta-fields')) {
    throw new UnsupportedLayoutError(
      'no-meta-fields',
      service,
      `${SERVICE_NAMES[service]} of ${layout.mergeOnRead ? 'merge-on-read ' : ''}tables without meta fields (hoodie.populate.meta.fields=false) ${service === 'clustering' ? 'is' : 'are'} not supported: ${
        service === 'write' ? 'this writer keys records by their stored _hoodie_record_key' : 'merging log records takes their keys from _hoodie_record_key'
      }`,
      { location, fix: `${VERBS[service]} this table with Hudi; nothing was written` },
    );
  }
  if (layout.droppedPartitionColumns && refuses('dropped-partition-columns')) {
    throw new UnsupportedLayoutError(
      'dropped-partition-columns',
      service,
      `${SERVICE_NAMES[service]} of merge-on-read tables written with hoodie.datasource.write.drop.partition.columns=true ${service === 'clustering' ? 'is' : 'are'} not supported yet: ${
        service === 'write'
          ? 'log records without the partition columns are not written'
          : 'merging their log records into base files without the partition columns is not built'
      }`,
      { location, fix: `${VERBS[service]} this table with Hudi; nothing was written` },
    );
  }
  if (layout.cdc && refuses('cdc')) throw cdcRefusal(service, location);
}

/** Why a service refuses a Hudi 1.x CDC table: table services and cleaning, and merge-on-read writes. */
function cdcRefusal(service: TableService, location: string): UnsupportedLayoutError {
  const mergeOnReadOnly = service === 'write';
  const why =
    service === 'write'
      ? "Hudi 1.x's change data of merge-on-read writes (its log files named by the delta commit, read by completion time) is not proven here; this build writes copy-on-write CDC tables of Hudi 1.x and both types of version 6 (Hudi 0.15)"
      : service === 'clean'
        ? "Hudi 1.x's cleaner deletes a slice's cdc log files with it and its metadata table then shows no column_stats records for them, while ours would write column_stats tombstones for them; this build cleans CDC tables of version 6 (Hudi 0.15)"
        : 'Hudi 1.x compacts CDC tables with a change-log merge handle for some indexes, and its CDC reader may take compaction instants as changes; this build keeps CDC tables of version 6 (Hudi 0.15)';
  return new UnsupportedLayoutError(
    'cdc',
    service,
    `${SERVICE_NAMES[service]} of ${mergeOnReadOnly ? 'merge-on-read ' : ''}Hudi 1.x tables with ${LAYOUT_KEYS.cdcEnabled.key}=true (CDC) ${service === 'write' ? 'are' : 'is'} not supported: ${why}`,
    {
      location,
      fix: `${VERBS[service]} this table with Hudi (Spark or Flink); nothing was written (this build upserts into and deletes from CDC tables of version 6 and copy-on-write ones of versions 8 and 9, and clusters, compacts, cleans and archives version 6 ones)`,
    },
  );
}

/** The supplemental logging modes our writes are proven in on Hudi 1.x tables (test/interop/hudi-1x-cdc.test.ts). */
const CDC_1X_LOGGING_MODES: readonly CdcLoggingMode[] = ['DATA_BEFORE_AFTER', 'OP_KEY_ONLY'];

/**
 * The write operations kept on CDC tables: upsert and delete write change data for the file groups they merge;
 * bulk_insert writes new file groups only, whose rows Hudi's CDC reader takes as inserts from the base file.
 */
const CDC_WRITE_OPERATIONS: readonly string[] = ['upsert', 'delete', 'bulk_insert'];

/**
 * A write to a CDC table the layout lets through (version 6; copy-on-write 1.x in the logging modes proven against
 * Hudi 1.0.2 and 1.1.1): refused unless it writes the change data Hudi writes for it. Our writer creates no CDC table (hoodie.properties would lack the CDC keys); insert merges
 * into small files as HoodieConcatHandle does, which writes no change data, and Hudi's CDC reader then fails on the
 * commit (HoodieCDCExtractor: "There should be a cdc log file"); the bucket index is not compared with Hudi here.
 */
export function assertCdcWrite(
  layout: TableLayout,
  write: { readonly operation: string; readonly newTable: boolean; readonly loggingMode?: CdcLoggingMode },
  location: string,
): void {
  if (!layout.cdc) return;
  const refuse = (problem: string, fix: string) => new UnsupportedLayoutError('cdc', 'write', problem, { location, fix: `${fix}; nothing was written` });
  const key = `${LAYOUT_KEYS.cdcEnabled.key}=true (CDC)`;
  if (write.newTable) {
    throw refuse(
      `creating a table with ${key} is not supported: this writer would not record the CDC keys in hoodie.properties`,
      'create the table with Hudi (Spark or Flink), then upsert into it here',
    );
  }
  if (!CDC_WRITE_OPERATIONS.includes(write.operation)) {
    throw refuse(
      `${write.operation} into tables with ${key} is not supported: Hudi's insert merges into small files with HoodieConcatHandle, which writes no change data, and its CDC reader then fails on the commit ("There should be a cdc log file")`,
      'write the batch with upsert or bulk_insert (or with Hudi)',
    );
  }
  if (layout.hudi1x && write.loggingMode !== undefined && !CDC_1X_LOGGING_MODES.includes(write.loggingMode)) {
    throw refuse(
      `writes of Hudi 1.x tables with ${key} and ${LAYOUT_KEYS.cdcLoggingMode.key}=${write.loggingMode} are not supported: our change data in that mode is not compared with Hudi 1.x's (${CDC_1X_LOGGING_MODES.join(' and ')} are)`,
      'write this table with Hudi (Spark or Flink)',
    );
  }
  if (layout.bucketIndex !== undefined) {
    throw refuse(
      `writes of tables with ${key} and the bucket index are not supported: their change data is not compared with Hudi here`,
      'write this table with Hudi (Spark or Flink)',
    );
  }
}

function bucketRefusal(layout: LayoutName, service: TableService, evidence: string, location: string, table: TableLayout): UnsupportedLayoutError {
  const engine = layout === 'simple-bucket-index' ? 'SIMPLE' : 'CONSISTENT_HASHING';
  const index = `the bucket index (${LAYOUT_KEYS.indexType.key}=BUCKET, ${LAYOUT_KEYS.bucketEngine.key}=${engine}; ${evidence})`;
  if (service === 'clustering') {
    const why =
      engine === 'SIMPLE'
        ? 'clustering writes new file ids, and the bucket index finds a bucket\'s file group by the bucket number its file id starts with (Hudi 0.15 refuses it too: "Clustering is not supported for simple bucket index")'
        : 'Hudi clusters it only with SparkConsistentBucketClusteringPlanStrategy and SparkConsistentBucketClusteringExecutionStrategy, which resize buckets (split and merge nodes) and write new hashing metadata; this build has neither';
    return new UnsupportedLayoutError(layout, service, `clustering tables with ${index} is not supported: ${why}`, {
      location,
      fix:
        engine === 'SIMPLE'
          ? 'nothing was written; compact, clean and archive it here, and leave its file layout to the bucket index (or move the table to the consistent-hashing engine and cluster it with Hudi)'
          : "nothing was written; resize it with Hudi's consistent-hashing clustering (Spark: hoodie.clustering.plan.strategy.class=org.apache.hudi.client.clustering.plan.strategy.SparkConsistentBucketClusteringPlanStrategy with hoodie.clustering.execution.strategy.class=org.apache.hudi.client.clustering.run.strategy.SparkConsistentBucketClusteringExecutionStrategy); this build writes, compacts, cleans and archives it",
    });
  }
  const which = table.hudi1x ? 'Hudi 1.x tables (version 8 or 9)' : 'copy-on-write tables (Spark 0.15 writes this engine into merge-on-read tables only)';
  return new UnsupportedLayoutError(
    layout,
    service,
    `${SERVICE_NAMES[service]} of ${which} with ${index} are not supported: only version 6 merge-on-read tables are written by their hashing metadata here, as Hudi 0.15 writes them`,
    {
      location,
      fix: 'write this table with Hudi (Spark or Flink); nothing was written (version 6 merge-on-read tables with this engine are written here)',
    },
  );
}
