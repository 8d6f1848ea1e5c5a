/**
 * Writing one metadata-table deltacommit, as Hudi's metadata writer does for a data instant T (an upsert of
 * prepped records into the merge-on-read metadata table, HoodieAppendHandle per file group):
 *
 *   T.deltacommit.requested (empty) → T.deltacommit.inflight (workload profile) → one new log file per touched file
 *   group → T.deltacommit (HoodieCommitMetadata with a HoodieDeltaWriteStat per log file), the commit point.
 *
 * Each touched file group gets the next log version of its latest file slice (storage has no append), holding one
 * HFILE_DATA_BLOCK of its records (sorted by key, values with the key field emptied) and, for record-index
 * deletions, a DELETE_BLOCK after it; both carry the INSTANT_TIME and SCHEMA headers Hudi writes.
 */
import { AlreadyExistsError, HudiError } from '../errors.js';
import { writeHudiLogBlockHFileAsync } from '../hfile/index.js';
import type { LockLease } from '../lock/port.js';
import { deleteBlock, EMPTY_PAYLOAD_ORDERING_VALUE, type LogBlockInput, writeLogFile } from '../log-format/index.js';
import { mapWithConcurrency, settleAll } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { newWriteStat, serializeCommitMetadata, type WriteStat } from '../timeline/commit-metadata.js';
import { fileNameOf } from '../util/paths.js';
import { encodeMetadataRecordParts } from './codec.js';
import type { MetadataChange, PendingChange, StreamedChanges } from './convert.js';
import { type MetadataFileGroup, partitionFolder } from './file-groups.js';
import { type MetadataPartitionType, mapRecordKeyToFileGroupIndex } from './partitions.js';
import type { MetadataRecord } from './records.js';
import { METADATA_RECORD_SCHEMA_TEXT, METADATA_RECORD_WRITER_SCHEMA_TEXT, metadataRecordType } from './schema.js';
import { metadataInstantPath } from './timeline.js';

/** Log files written at once (the PUTs of a commit's file groups, and their encoding meanwhile). */
const WRITE_CONCURRENCY = 32;
/** A log file this large is written alone, compressing this many blocks at once (libuv's 4 threads, and 4 queued). */
const LARGE_LOG_BYTES = 16 * 1024 * 1024;
const LARGE_LOG_BLOCKS_IN_FLIGHT = 8;
/**
 * zlib level of the HFile blocks: GZ as Hudi writes, at level 1 rather than Hadoop's 6. Bloom filters dominate a
 * large commit's bytes (Hudi's default filter is hundreds of KB per file); level 1 compresses them several times
 * faster for somewhat more bytes, and every level reads back the same. A bloom filter is the Base64 text of a bit
 * array mostly zero: runs of one character, which zlib's run-length strategy compresses faster and smaller still;
 * the other partitions' records repeat longer strings, which only its default matching finds.
 */
const GZIP_LEVEL = 1;

export interface FileGroupWriteStat {
  readonly partition: MetadataPartitionType;
  readonly fileId: string;
  /** Relative to the metadata table's base path: `<partition>/<log file>`. */
  readonly path: string;
  readonly baseInstant: string;
  readonly logVersion: number;
  readonly records: number;
  readonly deletes: number;
  readonly bytes: number;
  readonly baseFile: string;
  readonly logFiles: readonly string[];
  readonly millis: number;
}

interface RoutedChanges {
  readonly group: MetadataFileGroup;
  readonly records: MetadataRecord[];
  readonly deletes: string[];
  /** Records still being read, after `records` (a partition's changes are all pending or none). */
  readonly pending: Promise<MetadataRecord | undefined>[];
}

interface GroupWork extends RoutedChanges {
  readonly ordinal: number;
}

/** A file group's work with every record in hand. */
interface ReadyWork extends GroupWork {
  readonly pending: [];
}

/** The work per file group: each change routed to `fileGroups[mapRecordKeyToFileGroupIndex(key, count)]`. */
export function routeChanges(
  partition: MetadataPartitionType,
  changes: readonly (MetadataChange | PendingChange)[],
  fileGroups: readonly MetadataFileGroup[],
): Map<string, RoutedChanges> {
  if (fileGroups.length === 0) {
    throw new HudiError(`metadata-table partition ${partition} has no file group`, {
      fix: 'its initialization did not complete; rebuild the metadata table with Hudi',
    });
  }
  const byGroup = new Map<string, RoutedChanges>();
  for (const change of changes) {
    const key = 'record' in change ? change.record.key : 'pending' in change ? change.key : change.deleteKey;
    const group = fileGroups[mapRecordKeyToFileGroupIndex(key, fileGroups.length)]!;
    let work = byGroup.get(group.fileId);
    if (work === undefined) byGroup.set(group.fileId, (work = { group, records: [], deletes: [], pending: [] }));
    if ('record' in change) work.records.push(change.record);
    else if ('pending' in change) work.pending.push(change.pending);
    else work.deletes.push(key);
  }
  return byGroup;
}

export interface WriteDeltaCommitOptions {
  readonly instantTime: string;
  /** Per partition, in the order the log files take their write tokens. */
  readonly changes: ReadonlyMap<MetadataPartitionType, StreamedChanges>;
  readonly fileGroups: ReadonlyMap<MetadataPartitionType, readonly MetadataFileGroup[]>;
  /** Checked before the commit point (the caller holds the table lock). */
  readonly lease?: LockLease;
  /** Fault injection for tests: called after each storage write of the deltacommit. */
  readonly afterStorageWrite?: (what: string) => Promise<void>;
}

/**
 * Write the deltacommit; returns its per-log-file stats. File groups whose records are still being read (bloom
 * filters from footers) are encoded as their records come in, before the inflight file (which counts every file
 * group's records) can be written; their log files are written after it. Nothing is written before every record
 * is in.
 */
export async function writeDeltaCommit(storage: Storage, options: WriteDeltaCommitOptions): Promise<FileGroupWriteStat[]> {
  const { instantTime } = options;
  const work: GroupWork[] = [];
  const route = (partition: MetadataPartitionType, changes: readonly (MetadataChange | PendingChange)[]): void => {
    if (changes.length === 0) return;
    const groups = options.fileGroups.get(partition) ?? [];
    for (const routed of routeChanges(partition, changes, groups).values()) work.push({ ...routed, ordinal: work.length });
  };
  const step = options.afterStorageWrite ?? (async () => {});
  // Log files large enough to keep the thread pool busy alone (bloom filters) are encoded one after the other, each
  // uploading while the next encodes (two at a time: one encoding, one uploading); the others all at once beside
  // them. Stats keep the work's order.
  const stats: (FileGroupWriteStat | undefined)[] = [];
  const oneAtATime = takingTurns();
  const write = async (item: ReadyWork, encoded: Promise<LogBlockInput[]>, opened: Promise<void> = Promise.resolve()): Promise<void> => {
    const started = Date.now();
    const blocks = await encoded;
    await opened;
    const stat = await writeGroupLog(storage, item, blocks, started);
    await step(`log ${stat.path}`);
    stats[item.ordinal] = stat;
  };
  const encodeReady = (item: ReadyWork): Promise<LogBlockInput[]> =>
    recordBytes(item.records) >= LARGE_LOG_BYTES ? logBlocks(instantTime, item, LARGE_LOG_BLOCKS_IN_FLIGHT, oneAtATime) : logBlocks(instantTime, item);

  // The partitions known at once, up to the first still being read; the pending file groups start encoding.
  const entries = [...options.changes];
  let next = 0;
  for (; next < entries.length && !(entries[next]![1] instanceof Promise); next++) route(entries[next]![0], entries[next]![1] as readonly MetadataChange[]);
  const readied = new Map<GroupWork, Promise<ReadyWork>>();
  for (const item of work) if (item.pending.length > 0) readied.set(item, ready(item));
  let open!: () => void;
  let refuse!: (error: unknown) => void;
  const opened = new Promise<void>((resolve, reject) => {
    open = resolve;
    refuse = reject;
  });
  opened.catch(() => undefined);
  const encoding = mapWithConcurrency([...readied.values()], 2, async (readying) => {
    const item = await readying;
    if (item.records.length + item.deletes.length > 0) await write(item, encodeReady(item), opened);
  });
  try {
    for (; next < entries.length; next++) route(entries[next]![0], await entries[next]![1]);
    // A pending file group whose files had no filter after all has nothing to write.
    const all = (await Promise.all(work.map((item) => readied.get(item) ?? (item as ReadyWork)))).filter(
      (item) => item.records.length + item.deletes.length > 0,
    );
    await putNew(storage, metadataInstantPath({ time: instantTime, action: 'deltacommit', state: 'REQUESTED' }), '');
    await step('requested');
    await putNew(storage, metadataInstantPath({ time: instantTime, action: 'deltacommit', state: 'INFLIGHT' }), workloadProfileJson(all));
    await step('inflight');
    open();
    const early = new Set([...readied.keys()].map((item) => item.ordinal));
    const rest = all.filter((item) => !early.has(item.ordinal));
    const large = rest.filter((item) => recordBytes(item.records) >= LARGE_LOG_BYTES);
    await settleAll([
      encoding,
      mapWithConcurrency(large, 2, (item) => write(item, logBlocks(instantTime, item, LARGE_LOG_BLOCKS_IN_FLIGHT, oneAtATime))),
      mapWithConcurrency(
        rest.filter((item) => !large.includes(item)),
        WRITE_CONCURRENCY,
        (item) => write(item, logBlocks(instantTime, item)),
      ),
    ]);
  } catch (error) {
    refuse(error);
    await encoding.catch(() => undefined);
    throw error;
  }
  await options.lease?.assertHeld();
  const written = stats.filter((stat) => stat !== undefined);
  await putNew(storage, metadataInstantPath({ time: instantTime, action: 'deltacommit', state: 'COMPLETED' }), deltaCommitJson(written));
  await step('completed');
  return written;
}

/** A file group's work once its pending records are in (in their order; files without a filter have none). */
async function ready(item: GroupWork): Promise<ReadyWork> {
  const records = [...item.records];
  for (const record of await Promise.all(item.pending)) if (record !== undefined) records.push(record);
  return { ...item, records, pending: [] };
}

async function putNew(storage: Storage, path: string, body: string): Promise<void> {
  try {
    await storage.putIfAbsent(path, body);
  } catch (error) {
    if (error instanceof AlreadyExistsError) {
      throw new HudiError(`${path} already exists: another writer is committing the same instant to the metadata table`, {
        location: storage.uriOf(path),
        fix: 'retry the write',
      });
    }
    throw error;
  }
}

/** About how many bytes a file group's records take encoded: bloom filters count, the rest is small. */
function recordBytes(records: readonly MetadataRecord[]): number {
  let bytes = 0;
  for (const record of records) bytes += record.type === 4 ? record.bloomFilter.bloomFilter.length : 64;
  return bytes;
}

/** Runs a step once every step given before it has settled. */
type InTurn = <T>(step: () => Promise<T>) => Promise<T>;

function takingTurns(): InTurn {
  let previous: Promise<unknown> = Promise.resolve();
  return <T>(step: () => Promise<T>): Promise<T> => {
    const done = previous.then(step);
    previous = done.catch(() => undefined);
    return done;
  };
}

/** A file group's log blocks: its records' HFILE_DATA_BLOCK and, for deletions, a DELETE_BLOCK after it. */
async function logBlocks(instantTime: string, item: ReadyWork, blocksInFlight?: number, inTurn: InTurn = (step) => step()): Promise<LogBlockInput[]> {
  const { group } = item;
  const header = { INSTANT_TIME: instantTime, SCHEMA: METADATA_RECORD_WRITER_SCHEMA_TEXT };
  const blocks: LogBlockInput[] = [];
  if (item.records.length > 0) {
    // Each value encoded as its cell is written: a large commit's bloom filters would not fit in memory twice.
    const type = metadataRecordType();
    blocks.push({
      type: 'HFILE_DATA_BLOCK',
      header,
      content: await inTurn(() =>
        writeHudiLogBlockHFileAsync(
          item.records,
          (record) => encodeMetadataRecordParts(record, type),
          { schema: METADATA_RECORD_WRITER_SCHEMA_TEXT, gzipLevel: GZIP_LEVEL, gzipStrategy: group.partition === 'bloom_filters' ? 'run-length' : 'default' },
          blocksInFlight,
        ),
      ),
    });
  }
  if (item.deletes.length > 0) {
    blocks.push(
      deleteBlock({
        instantTime,
        header: { SCHEMA: METADATA_RECORD_WRITER_SCHEMA_TEXT },
        records: item.deletes.map((recordKey) => ({ recordKey, partitionPath: group.partition, orderingValue: EMPTY_PAYLOAD_ORDERING_VALUE })),
      }),
    );
  }
  return blocks;
}

async function writeGroupLog(storage: Storage, item: ReadyWork, blocks: LogBlockInput[], started: number): Promise<FileGroupWriteStat> {
  const { group } = item;
  const written = await writeLogFile(storage, {
    partitionPath: partitionFolder(group.partition),
    fileId: group.fileId,
    baseInstant: group.latest.baseInstant,
    writeToken: `${item.ordinal}-1-0`,
    blocks,
    // The file group's listing is already in hand; another writer taking a version (it holds no lock of ours) makes
    // the next attempt take the one after, as Hudi's log writer rolls over.
    knownLogFiles: group.allLogFiles.map((file) => file.name),
  });
  const name = fileNameOf(written.path);
  return {
    partition: group.partition,
    fileId: group.fileId,
    path: `${group.partition}/${name}`,
    baseInstant: group.latest.baseInstant,
    logVersion: written.name.version,
    records: item.records.length,
    deletes: item.deletes.length,
    bytes: written.size,
    baseFile: group.latest.baseFile?.name ?? '',
    logFiles: [...group.latest.logFiles.map((file) => fileNameOf(file.path)), name],
    millis: Date.now() - started,
  };
}

/** The inflight file: per partition an empty insert entry and one update count per touched file group. */
function workloadProfileJson(work: readonly ReadyWork[]): string {
  const byPartition: Record<string, WriteStat[]> = {};
  for (const item of work) {
    const list = (byPartition[item.group.partition] ??= [newWriteStat({ fileId: '', path: null, partitionPath: null })]);
    list.push(
      newWriteStat({
        fileId: item.group.fileId,
        path: null,
        partitionPath: null,
        prevCommit: item.group.latest.baseInstant,
        numUpdateWrites: item.records.length + item.deletes.length,
      }),
    );
  }
  return serializeCommitMetadata({ partitionToWriteStats: byPartition, compacted: false, extraMetadata: {}, operationType: 'UPSERT_PREPPED' });
}

/** The completed deltacommit: HoodieCommitMetadata with HoodieDeltaWriteStats, the metadata schema, UPSERT_PREPPED. */
function deltaCommitJson(stats: readonly FileGroupWriteStat[]): string {
  const byPartition: Record<string, WriteStat[]> = {};
  for (const stat of stats) {
    (byPartition[stat.partition] ??= []).push(
      newWriteStat({
        fileId: stat.fileId,
        path: stat.path,
        partitionPath: stat.partition,
        prevCommit: stat.baseInstant,
        numWrites: stat.records,
        numDeletes: stat.deletes,
        numUpdateWrites: stat.records,
        totalWriteBytes: stat.bytes,
        fileSizeInBytes: stat.bytes,
        runtimeStats: { totalScanTime: 0, totalUpsertTime: stat.millis, totalCreateTime: 0 },
        delta: { logVersion: stat.logVersion, logOffset: 0, baseFile: stat.baseFile, logFiles: [...stat.logFiles] },
      }),
    );
  }
  return serializeCommitMetadata({
    partitionToWriteStats: byPartition,
    compacted: false,
    extraMetadata: { schema: METADATA_RECORD_SCHEMA_TEXT },
    operationType: 'UPSERT_PREPPED',
  });
}
