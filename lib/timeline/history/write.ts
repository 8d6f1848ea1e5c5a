/**
 * Appending archived instants to Hudi 1.x's timeline history as LSMTimelineWriter (Hudi 1.0.2 / 1.1.1) does it, for
 * TimelineArchiverV2: a new level-0 file of the batch, a new manifest naming it, `_version_`; then the compaction of
 * every level that holds a batch of files into one file a level up (each compaction a new manifest version), and
 * the cleaning of manifests and files older than the versions kept. docs/hudi-1x-history.md has the Java behind
 * each step. The bytes of each instant (its completed file, its plan) are the caller's: what to archive, and taking
 * it off the active timeline, is the archival service's business.
 */
import { HudiError, TimelineHistoryError } from '../../errors.js';
import type { ChunkValue } from '../../parquet/column-chunk.js';
import { readFlatRows } from '../../parquet/flat-rows.js';
import { type FlatWriteColumn, type FlatWriteValue, writeFlatRows } from '../../parquet/flat-writer.js';
import { CODEC } from '../../parquet/pages.js';
import type { Storage } from '../../storage/port.js';
import { ARCHIVED_ACTIONS, type ArchivedAction, checkHistoryColumns } from './archived-instant.js';
import { archiveFileName, MANIFEST_FILE_PREFIX, manifestFileName, parseArchiveFileName, TEMP_FILE_SUFFIX, VERSION_FILE_NAME } from './layout.js';
import { type HistoryManifest, type ManifestEntry, serializeManifest } from './manifest.js';
import { latestSnapshotVersion, readManifest } from './read.js';

/** One instant to archive: its times and action, and the bytes Hudi keeps of it (MetadataConversionUtils). */
export interface InstantToArchive {
  readonly requestedTime: string;
  readonly completionTime: string;
  readonly action: ArchivedAction;
  /** The completed instant file's bytes; null when it was empty. */
  readonly metadata: Uint8Array | null;
  /** The plan bytes of the action (see archived-instant.ts); null when it has none. */
  readonly plan: Uint8Array | null;
}

export interface HistoryWriteOptions {
  /** `hoodie.timeline.compaction.batch.size` (HoodieArchivalConfig.TIMELINE_COMPACTION_BATCH_SIZE; Hudi's default 10). */
  readonly compactionBatchSize: number;
}

/** Hudi's default `hoodie.timeline.compaction.batch.size`. */
export const DEFAULT_COMPACTION_BATCH_SIZE = 10;
/** LSMTimelineWriter.MAX_FILE_SIZE_IN_BYTES: a compaction stops taking files once those taken exceed it. */
export const MAX_COMPACTION_INPUT_BYTES = 1_048_576_000;
/** LSMTimelineWriter.clean keeps this many manifest versions, plus one per compaction of the run. */
export const RETAINED_MANIFEST_VERSIONS = 3;

/** The Avro schema parquet-avro stores in the footer (`parquet.avro.schema`): HoodieLSMTimelineInstant's, as Java prints it. */
const LSM_INSTANT_AVRO_SCHEMA = JSON.stringify({
  type: 'record',
  name: 'HoodieLSMTimelineInstant',
  namespace: 'org.apache.hudi.avro.model',
  fields: [
    { name: 'instantTime', type: ['null', { type: 'string', 'avro.java.string': 'String' }], default: null },
    { name: 'completionTime', type: ['null', { type: 'string', 'avro.java.string': 'String' }], default: null },
    { name: 'action', type: ['null', { type: 'string', 'avro.java.string': 'String' }], default: null },
    { name: 'metadata', type: ['null', 'bytes'], default: null },
    { name: 'plan', type: ['null', 'bytes'], default: null },
    { name: 'version', type: 'int', default: 1 },
  ],
});
const CREATED_BY = 'hudi-serverless version 0.1.0 (build timeline-history)';

export interface HistoryAppendResult {
  /** The level-0 file written; undefined when the latest manifest already named it (an earlier run committed it). */
  readonly written: string | undefined;
  /** Files written by compaction, lowest level first. */
  readonly compacted: readonly string[];
  /** Manifests and data files the cleaning deleted. */
  readonly deleted: readonly string[];
  /** The snapshot version after the append. */
  readonly version: number;
}

/**
 * Archive `instants` (in requested-time order) into the history in `folder`, then compact and clean it, as
 * TimelineArchiverV2.archiveIfRequired calls LSMTimelineWriter.write and compactAndClean. Refuses before writing
 * anything when the instants are empty, out of order, of an unknown action, or the options are off.
 */
export async function appendToHistory(
  storage: Storage,
  folder: string,
  instants: readonly InstantToArchive[],
  options: HistoryWriteOptions,
): Promise<HistoryAppendResult> {
  if (!Number.isSafeInteger(options.compactionBatchSize) || options.compactionBatchSize < 2) {
    throw new HudiError(`hoodie.timeline.compaction.batch.size=${options.compactionBatchSize} cannot compact anything`, {
      fix: `set it to 2 or more (Hudi's default is ${DEFAULT_COMPACTION_BATCH_SIZE})`,
    });
  }
  const written = await writeLevelZero(storage, folder, instants);
  const { compacted, deleted } = await compactAndClean(storage, folder, options.compactionBatchSize);
  return { written, compacted, deleted, version: await latestSnapshotVersion(storage, folder) };
}

/** LSMTimelineWriter.write: the batch as `<first>_<last>_0.parquet`, then a manifest version naming it. */
export async function writeLevelZero(storage: Storage, folder: string, instants: readonly InstantToArchive[]): Promise<string | undefined> {
  checkBatch(instants);
  const name = archiveFileName({ minInstant: instants[0]!.requestedTime, maxInstant: instants[instants.length - 1]!.requestedTime, level: 0 });
  const path = `${folder}/${name}`;
  if ((await storage.head(path)) !== undefined) {
    const latest = await readManifest(storage, folder, await latestSnapshotVersion(storage, folder));
    // Written and committed by an earlier run that stopped before deleting the active instants: nothing to do.
    if (latest.files.some((file) => file.fileName === name)) return undefined;
    // Written but never named by a manifest: a cut-short write, replaced.
    await storage.delete([path]);
  }
  await storage.put(path, encodeHistoryFile(instants.map(rowOf)));
  await updateManifest(storage, folder, [], name);
  return name;
}

function checkBatch(instants: readonly InstantToArchive[]): void {
  if (instants.length === 0) throw new HudiError('no instants to archive', { fix: 'archive at least one instant' });
  instants.forEach((instant, index) => {
    if (!/^\d+$/.test(instant.requestedTime) || !/^\d+$/.test(instant.completionTime)) {
      throw new TimelineHistoryError(`instant ${instant.requestedTime} has a time that is not an instant time (completed ${instant.completionTime})`, {
        fix: 'archive completed instants with their requested and completion times',
      });
    }
    if (!(ARCHIVED_ACTIONS as readonly string[]).includes(instant.action)) {
      throw new TimelineHistoryError(`instant ${instant.requestedTime} has the unknown action ${instant.action}`, {
        fix: `archive only ${ARCHIVED_ACTIONS.join(', ')}`,
      });
    }
    const previous = instants[index - 1];
    if (previous !== undefined && previous.requestedTime >= instant.requestedTime) {
      throw new TimelineHistoryError(`instants to archive are out of order: ${previous.requestedTime} before ${instant.requestedTime}`, {
        fix: 'archive a batch in requested-time order, as the archiver takes it from the active timeline',
      });
    }
  });
}

interface HistoryRow {
  readonly instantTime: FlatWriteValue;
  readonly completionTime: FlatWriteValue;
  readonly action: FlatWriteValue;
  readonly metadata: FlatWriteValue;
  readonly plan: FlatWriteValue;
  readonly version: FlatWriteValue;
}

function rowOf(instant: InstantToArchive): HistoryRow {
  return {
    instantTime: instant.requestedTime,
    completionTime: instant.completionTime,
    action: instant.action,
    metadata: instant.metadata,
    plan: instant.plan,
    version: 1,
  };
}

/** A history Parquet file of these rows: HoodieLSMTimelineInstant's columns, GZIP (Hudi's default codec). */
function encodeHistoryFile(rows: readonly HistoryRow[]): Uint8Array {
  const column = (name: keyof HistoryRow, physicalType: FlatWriteColumn['physicalType'], optional: boolean, string: boolean): FlatWriteColumn => ({
    name,
    physicalType,
    optional,
    string,
    values: rows.map((row) => row[name]),
  });
  return writeFlatRows(
    [
      column('instantTime', 'BYTE_ARRAY', true, true),
      column('completionTime', 'BYTE_ARRAY', true, true),
      column('action', 'BYTE_ARRAY', true, true),
      column('metadata', 'BYTE_ARRAY', true, false),
      column('plan', 'BYTE_ARRAY', true, false),
      column('version', 'INT32', false, false),
    ],
    {
      rootName: 'org.apache.hudi.avro.model.HoodieLSMTimelineInstant',
      codec: CODEC.GZIP,
      keyValues: new Map([
        ['parquet.avro.schema', LSM_INSTANT_AVRO_SCHEMA],
        ['writer.model.name', 'avro'],
      ]),
      createdBy: CREATED_BY,
    },
  );
}

/**
 * LSMTimelineWriter.updateManifest: the latest manifest minus `remove`, plus `add` (with its length now), as the
 * next version; then `_version_`. Hudi deletes and recreates `_version_`; a put replaces it in one step, which
 * readers cannot tell apart except that they never find it missing.
 */
async function updateManifest(storage: Storage, folder: string, remove: readonly string[], add: string): Promise<number> {
  const version = await latestSnapshotVersion(storage, folder);
  const latest = await readManifest(storage, folder, version);
  const stored = await storage.head(`${folder}/${add}`);
  if (stored === undefined)
    throw new TimelineHistoryError(`the history file ${add} to add to the manifest is not in storage`, { location: storage.uriOf(`${folder}/${add}`) });
  const files: ManifestEntry[] = [...latest.files.filter((file) => !remove.includes(file.fileName)), { fileName: add, fileLen: stored.size }];
  const next = version < 0 ? 1 : version + 1;
  await storage.put(`${folder}/${manifestFileName(next)}`, serializeManifest({ files }));
  await storage.put(`${folder}/${VERSION_FILE_NAME}`, String(next));
  return next;
}

/**
 * LSMTimelineWriter.compactAndClean: compact level 0, then each next level while the previous one compacted; then
 * clean, keeping RETAINED_MANIFEST_VERSIONS + (compactions done) manifest versions and the files they name.
 */
export async function compactAndClean(storage: Storage, folder: string, batchSize: number): Promise<{ compacted: string[]; deleted: string[] }> {
  const manifest: HistoryManifest = await readManifest(storage, folder, await latestSnapshotVersion(storage, folder));
  const files = [...manifest.files];
  const compacted: string[] = [];
  for (let level = 0; ; level++) {
    const name = await compactLevel(storage, folder, files, level, batchSize);
    if (name === undefined) break;
    compacted.push(name);
    // As Hudi, the in-memory list only gains the new file: the next level's count is all that is read from it.
    files.push({ fileName: name, fileLen: 0 });
  }
  return { compacted, deleted: await clean(storage, folder, compacted.length) };
}

/** LSMTimelineWriter.doCompact for one level; the compacted file's name, or undefined when the level had no batch. */
async function compactLevel(storage: Storage, folder: string, files: readonly ManifestEntry[], level: number, batchSize: number): Promise<string | undefined> {
  const onLevel = files.filter((file) => (parseArchiveFileName(file.fileName)?.level ?? 0) === level);
  if (onLevel.length < batchSize) return undefined;
  onLevel.sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
  // getCandidateFiles: in name order, at most a batch, no more once the files taken exceed the size budget.
  const candidates: string[] = [];
  let taken = 0;
  for (const file of onLevel.slice(0, batchSize)) {
    if (taken > MAX_COMPACTION_INPUT_BYTES) break;
    taken += file.fileLen;
    candidates.push(file.fileName);
  }
  if (candidates.length < 2) return undefined;
  const parts = candidates.map((name) => {
    const parsed = parseArchiveFileName(name);
    if (parsed === undefined) {
      throw new TimelineHistoryError(`the manifest names ${name}, which is not a history file name (<min>_<max>_<level>.parquet)`, {
        location: storage.uriOf(`${folder}/${name}`),
      });
    }
    return parsed;
  });
  // compactedFileName: the least and greatest names as Java orders strings (code units, as sort() does).
  const mins = parts.map((part) => part.minInstant).sort();
  const maxes = parts.map((part) => part.maxInstant).sort();
  const name = archiveFileName({
    minInstant: mins[0]!,
    maxInstant: maxes[maxes.length - 1]!,
    // compactedFileName: one above the first candidate's level.
    level: parts[0]!.level + 1,
  });
  const rows: HistoryRow[] = [];
  for (const candidate of candidates) rows.push(...(await historyRows(storage, `${folder}/${candidate}`)));
  const path = `${folder}/${name}`;
  if ((await storage.head(path)) !== undefined) await storage.delete([path]);
  await storage.put(path, encodeHistoryFile(rows));
  await updateManifest(storage, folder, candidates, name);
  return name;
}

/** Every row of a history file, as stored (compaction copies rows, it does not reinterpret them). */
async function historyRows(storage: Storage, path: string): Promise<HistoryRow[]> {
  const location = storage.uriOf(path);
  const { columns, numRows, values } = readFlatRows(await storage.get(path), location);
  checkHistoryColumns(columns, location);
  const value = (name: string, row: number): FlatWriteValue => {
    const stored: ChunkValue | undefined = values.get(name)?.[row];
    if (stored === undefined) return name === 'version' ? 1 : null;
    if (stored === null || typeof stored === 'number' || stored instanceof Uint8Array) return stored;
    throw new TimelineHistoryError(`history column ${name} holds ${typeof stored} values`, { location });
  };
  return Array.from({ length: numRows }, (_, row) => ({
    instantTime: value('instantTime', row),
    completionTime: value('completionTime', row),
    action: value('action', row),
    metadata: value('metadata', row),
    plan: value('plan', row),
    version: value('version', row),
  }));
}

/** LSMTimelineWriter.clean: keep the newest versions and the files their manifests name; delete the rest. */
async function clean(storage: Storage, folder: string, compactions: number): Promise<string[]> {
  const { files } = await storage.listDir(folder);
  const names = files.map((file) => file.path.slice(file.path.lastIndexOf('/') + 1));
  const versions = names
    .filter((name) => name.startsWith(MANIFEST_FILE_PREFIX) && !name.endsWith(TEMP_FILE_SUFFIX))
    .map((name) => Number(name.slice(MANIFEST_FILE_PREFIX.length)))
    .filter((version) => Number.isSafeInteger(version));
  const keep = RETAINED_MANIFEST_VERSIONS + compactions;
  if (versions.length <= keep) return [];
  versions.sort((a, b) => b - a);
  const kept = versions.slice(0, keep);
  const keptFiles = new Set<string>();
  for (const version of kept) for (const file of (await readManifest(storage, folder, version)).files) keptFiles.add(file.fileName);
  const manifests = versions.slice(keep).map((version) => `${folder}/${manifestFileName(version)}`);
  await storage.delete(manifests);
  const dataFiles = names.filter((name) => name.endsWith('.parquet') && !keptFiles.has(name)).map((name) => `${folder}/${name}`);
  await storage.delete(dataFiles);
  return [...manifests, ...dataFiles];
}
