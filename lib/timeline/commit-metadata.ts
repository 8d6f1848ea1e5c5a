/**
 * Commit and replacecommit metadata (table version 6: Jackson JSON), with Hudi's field order.
 */
import { HudiError } from '../errors.js';
import { type JsonValue, toJacksonPrettyJson } from '../util/jackson-json.js';

export type WriteOperationType =
  | 'INSERT'
  | 'INSERT_PREPPED'
  | 'UPSERT'
  | 'UPSERT_PREPPED'
  | 'BULK_INSERT'
  | 'BULK_INSERT_PREPPED'
  | 'DELETE'
  | 'DELETE_PREPPED'
  | 'BOOTSTRAP'
  | 'INSERT_OVERWRITE'
  | 'INSERT_OVERWRITE_TABLE'
  | 'CLUSTER'
  | 'DELETE_PARTITION'
  | 'COMPACT'
  | 'LOG_COMPACT'
  | 'INDEX'
  | 'ALTER_SCHEMA'
  | 'UNKNOWN';

export interface RuntimeStats {
  totalScanTime: number;
  totalUpsertTime: number;
  totalCreateTime: number;
}

/** Hudi's HoodieWriteStat, fields in Jackson's output order. */
export interface WriteStat {
  fileId: string;
  path: string | null;
  cdcStats: Record<string, number> | null;
  /** The previous base file's instant, or the string "null" for a new file group (as Hudi writes it). */
  prevCommit: string;
  numWrites: number;
  numDeletes: number;
  numUpdateWrites: number;
  numInserts: number;
  totalWriteBytes: number;
  totalWriteErrors: number;
  tempPath: string | null;
  partitionPath: string | null;
  totalLogRecords: number;
  totalLogFilesCompacted: number;
  totalLogSizeCompacted: number;
  totalUpdatedRecordsCompacted: number;
  totalLogBlocks: number;
  totalCorruptLogBlock: number;
  totalRollbackBlocks: number;
  fileSizeInBytes: number;
  minEventTime: number | null;
  maxEventTime: number | null;
  runtimeStats: RuntimeStats | null;
  /**
   * Hudi 1.x's HoodieWriteStat.prevBaseFile: the base file an update merged (layout 2 only; 0.x's POJO has no such
   * field, so layout 1's JSON leaves it out).
   */
  prevBaseFile?: string | null;
  /** Hudi 1.x's HoodieWriteStat.totalLogReadTimeMs (a compaction's log reading; layout 2 only, as prevBaseFile). */
  totalLogReadTimeMs?: number;
  /** A log file's stat (HoodieDeltaWriteStat): serialized after the fields above, as Jackson writes the subclass. */
  delta?: DeltaWriteFields;
}

/** HoodieDeltaWriteStat's own fields, as HoodieAppendHandle fills them. */
export interface DeltaWriteFields {
  /** The version of the log file written. */
  readonly logVersion: number;
  /** Where the append started in the file: 0 for a new file (storage without append). */
  readonly logOffset: number;
  /** The slice's base file name, '' when the slice has none (e.g. under a pending compaction). */
  readonly baseFile: string;
  /** The slice's log files before this write (newest first, as FileSlice keeps them), then the one written. */
  readonly logFiles: readonly string[];
}

export interface CommitMetadata {
  partitionToWriteStats: Record<string, WriteStat[]>;
  compacted: boolean;
  extraMetadata: Record<string, string>;
  operationType: WriteOperationType | null;
  /** Present on replacecommits only. */
  partitionToReplaceFileIds?: Record<string, string[]>;
}

const WRITE_STAT_FIELDS: readonly (keyof WriteStat)[] = [
  'fileId',
  'path',
  'cdcStats',
  'prevCommit',
  'numWrites',
  'numDeletes',
  'numUpdateWrites',
  'numInserts',
  'totalWriteBytes',
  'totalWriteErrors',
  'tempPath',
  'partitionPath',
  'totalLogRecords',
  'totalLogFilesCompacted',
  'totalLogSizeCompacted',
  'totalUpdatedRecordsCompacted',
  'totalLogBlocks',
  'totalCorruptLogBlock',
  'totalRollbackBlocks',
  'fileSizeInBytes',
  'minEventTime',
  'maxEventTime',
  'runtimeStats',
];

/** A write stat with Hudi's defaults for everything not given. */
export function newWriteStat(fields: Partial<WriteStat> & Pick<WriteStat, 'fileId' | 'path' | 'partitionPath'>): WriteStat {
  return {
    cdcStats: null,
    prevCommit: 'null',
    numWrites: 0,
    numDeletes: 0,
    numUpdateWrites: 0,
    numInserts: 0,
    totalWriteBytes: 0,
    totalWriteErrors: 0,
    tempPath: null,
    totalLogRecords: 0,
    totalLogFilesCompacted: 0,
    totalLogSizeCompacted: 0,
    totalUpdatedRecordsCompacted: 0,
    totalLogBlocks: 0,
    totalCorruptLogBlock: 0,
    totalRollbackBlocks: 0,
    fileSizeInBytes: 0,
    minEventTime: null,
    maxEventTime: null,
    runtimeStats: null,
    ...fields,
  };
}

function orderedWriteStat(stat: WriteStat): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  for (const field of WRITE_STAT_FIELDS) {
    const value = stat[field];
    out[field] =
      field === 'runtimeStats' && value !== null
        ? {
            totalScanTime: stat.runtimeStats!.totalScanTime,
            totalUpsertTime: stat.runtimeStats!.totalUpsertTime,
            totalCreateTime: stat.runtimeStats!.totalCreateTime,
          }
        : (value as JsonValue);
  }
  if (stat.delta !== undefined) {
    out['logVersion'] = stat.delta.logVersion;
    out['logOffset'] = stat.delta.logOffset;
    out['baseFile'] = stat.delta.baseFile;
    out['logFiles'] = [...stat.delta.logFiles];
    out['recordsStats'] = { val: null };
  }
  return out;
}

/** Serialize as Hudi does: Jackson pretty JSON, top-level fields in HoodieCommitMetadata / HoodieReplaceCommitMetadata order. */
export function serializeCommitMetadata(metadata: CommitMetadata): string {
  const partitionToWriteStats: { [key: string]: JsonValue } = {};
  for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) {
    partitionToWriteStats[partition] = stats.map(orderedWriteStat);
  }
  const json: { [key: string]: JsonValue } = {
    partitionToWriteStats,
    compacted: metadata.compacted,
    extraMetadata: { ...metadata.extraMetadata },
    operationType: metadata.operationType,
  };
  if (metadata.partitionToReplaceFileIds !== undefined) {
    const replaced: { [key: string]: JsonValue } = {};
    for (const [partition, ids] of Object.entries(metadata.partitionToReplaceFileIds)) replaced[partition] = [...ids];
    json['partitionToReplaceFileIds'] = replaced;
  }
  return toJacksonPrettyJson(json);
}

/** Parse commit JSON; `location` names the instant file in errors. Zero-byte input means an empty commit (Hudi allows it). */
export function parseCommitMetadata(text: string, location: string): CommitMetadata {
  const object = parseCommitJson(text, location);
  if (object === undefined) return { partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: null };
  const stats = asRecord(object['partitionToWriteStats'], 'partitionToWriteStats', location);
  const partitionToWriteStats: Record<string, WriteStat[]> = {};
  for (const [partition, list] of Object.entries(stats)) {
    if (!Array.isArray(list)) throw badField('partitionToWriteStats', location);
    partitionToWriteStats[partition] = list.map((item) => writeStatOf(item as Partial<WriteStat>));
  }
  const extra = asRecord(object['extraMetadata'], 'extraMetadata', location);
  const metadata: CommitMetadata = {
    partitionToWriteStats,
    compacted: object['compacted'] === true,
    extraMetadata: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])),
    operationType: (typeof object['operationType'] === 'string' ? object['operationType'] : null) as WriteOperationType | null,
  };
  if (object['partitionToReplaceFileIds'] !== undefined && object['partitionToReplaceFileIds'] !== null) {
    const replaced = asRecord(object['partitionToReplaceFileIds'], 'partitionToReplaceFileIds', location);
    metadata.partitionToReplaceFileIds = {};
    for (const [partition, ids] of Object.entries(replaced)) {
      if (!Array.isArray(ids)) throw badField('partitionToReplaceFileIds', location);
      metadata.partitionToReplaceFileIds[partition] = ids.map(String);
    }
  }
  return metadata;
}

/** Commit JSON as an object; undefined for an empty file (an empty commit, which Hudi allows). */
function parseCommitJson(text: string, location: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HudiError(`commit metadata is not valid JSON (truncated or corrupt): ${(error as Error).message}`, {
      location,
      fix: 'restore the file from a backup, or roll back this instant with `hudi-serverless rollback`',
    });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HudiError('commit metadata is not a JSON object', { location, fix: 'the instant file is corrupt; restore or roll it back' });
  }
  return parsed as Record<string, unknown>;
}

/** What a completed write wrote and replaced, by file group: the missing-file check's view of a commit. */
export interface CommitWrites {
  /** Each write stat's partition (its own, else its key's), file id ('' when absent) and path (null when absent). */
  readonly written: readonly { readonly partitionPath: string; readonly fileId: string; readonly path: string | null }[];
  readonly replaced: readonly { readonly partitionPath: string; readonly fileId: string }[];
}

/**
 * parseCommitMetadata's checks and its files, without building a WriteStat per file (a commit may name a hundred
 * thousand): the same errors on the same input.
 */
export function parseCommitWrites(text: string, location: string): CommitWrites {
  const object = parseCommitJson(text, location);
  if (object === undefined) return { written: [], replaced: [] };
  const stats = asRecord(object['partitionToWriteStats'], 'partitionToWriteStats', location);
  const written: { partitionPath: string; fileId: string; path: string | null }[] = [];
  for (const [partition, list] of Object.entries(stats)) {
    if (!Array.isArray(list)) throw badField('partitionToWriteStats', location);
    for (const item of list as Partial<WriteStat>[]) {
      written.push({ partitionPath: item.partitionPath ?? partition, fileId: item.fileId ?? '', path: item.path ?? null });
    }
  }
  asRecord(object['extraMetadata'], 'extraMetadata', location);
  const replaced: { partitionPath: string; fileId: string }[] = [];
  if (object['partitionToReplaceFileIds'] !== undefined && object['partitionToReplaceFileIds'] !== null) {
    for (const [partition, ids] of Object.entries(asRecord(object['partitionToReplaceFileIds'], 'partitionToReplaceFileIds', location))) {
      if (!Array.isArray(ids)) throw badField('partitionToReplaceFileIds', location);
      for (const id of ids) replaced.push({ partitionPath: partition, fileId: String(id) });
    }
  }
  return { written, replaced };
}

/**
 * newWriteStat({ ...item, fileId: item.fileId ?? '', path: item.path ?? null, partitionPath: item.partitionPath ??
 * null }) without its two copies of every stat (a commit may hold a hundred thousand): the defaults first, then the
 * item's fields in its order, then the three fields where the item lacks them — the same keys in the same order.
 */
function writeStatOf(item: Partial<WriteStat>): WriteStat {
  const fileId = item.fileId ?? '';
  const path = item.path ?? null;
  const partitionPath = item.partitionPath ?? null;
  const stat = newWriteStat({} as Pick<WriteStat, 'fileId' | 'path' | 'partitionPath'>) as unknown as Record<string, unknown>;
  for (const key of Object.keys(item)) {
    const value = (item as Record<string, unknown>)[key];
    if (key === '__proto__') Object.defineProperty(stat, key, { value, enumerable: true, writable: true, configurable: true });
    else stat[key] = value;
  }
  stat['fileId'] = fileId;
  stat['path'] = path;
  stat['partitionPath'] = partitionPath;
  return stat as unknown as WriteStat;
}

function asRecord(value: unknown, field: string, location: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badField(field, location);
  return value as Record<string, unknown>;
}

function badField(field: string, location: string): HudiError {
  return new HudiError(`commit metadata field ${field} has the wrong shape`, { location, fix: 'the instant file is corrupt; restore or roll it back' });
}

/** Every (partition, fileId) a commit wrote: what the conflict check and the file-system view need. */
export function writtenFileIds(metadata: CommitMetadata): { partitionPath: string; fileId: string }[] {
  const out: { partitionPath: string; fileId: string }[] = [];
  for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) {
    for (const stat of stats) if (stat.fileId) out.push({ partitionPath: stat.partitionPath ?? partition, fileId: stat.fileId });
  }
  return out;
}
