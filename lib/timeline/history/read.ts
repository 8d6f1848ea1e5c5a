/**
 * Reading Hudi 1.x's timeline history as ArchivedTimelineV2 (through ArchivedTimelineLoaderV2 and LSMTimeline)
 * reads it: the latest snapshot version from `_version_` (or, when that file is absent, the highest
 * `manifest_<N>` listed — Hudi's writer deletes and rewrites `_version_`, so a reader can find it missing), that
 * version's manifest, and every row of every file the manifest names. Files the manifest does not name (a
 * compaction's inputs kept for older readers, a cut-short write) are never opened, as Hudi never opens them.
 *
 * Where Hudi falls back silently we refuse: a `_version_` that is not a number (Hudi logs it and lists manifests),
 * an empty manifest (Hudi reads no files). See docs/hudi-1x-history.md.
 */

import { HudiError, NotFoundError, TimelineHistoryError } from '../../errors.js';
import { readFlatRows } from '../../parquet/flat-rows.js';
import type { Storage } from '../../storage/port.js';
import type { ArchivedHistory } from '../archived/history.js';
import type { ArchivedCompletionTimes } from '../completion-times.js';
import { fileGroupKey } from '../file-group-key.js';
import { compareInstantTimes } from '../instant.js';
import { type ArchivedInstant, archivedInstantOfRow, checkHistoryColumns } from './archived-instant.js';
import { MANIFEST_FILE_PREFIX, manifestFileName, parseArchiveFileName, TEMP_FILE_SUFFIX, VERSION_FILE_NAME } from './layout.js';
import { type HistoryManifest, parseManifest } from './manifest.js';

export interface TimelineHistory {
  /** The snapshot version read; -1 when there is no history yet. */
  readonly version: number;
  /** Its manifest (no files when there is no history). */
  readonly manifest: HistoryManifest;
  /** Every archived instant, in requested-time order (HoodieInstant's order). */
  readonly instants: readonly ArchivedInstant[];
}

const FIX_VERSION = 'write the latest manifest number into _version_, or delete _version_ to let readers take the highest manifest';

/** Java's Integer.parseInt on `_version_`'s text: an optional sign and decimal digits, nothing else. */
function parseVersion(text: string, location: string): number {
  if (!/^[+-]?\d{1,10}$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) > 2 ** 31 - 1) {
    throw new TimelineHistoryError(`_version_ holds ${JSON.stringify(text.slice(0, 40))}, not a snapshot version number`, { location, fix: FIX_VERSION });
  }
  const version = Number(text);
  if (version < 1) throw new TimelineHistoryError(`_version_ holds ${version}; snapshot versions start at 1`, { location, fix: FIX_VERSION });
  return version;
}

async function getIfPresent(storage: Storage, path: string): Promise<Uint8Array | undefined> {
  try {
    return await storage.get(path);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/**
 * The latest snapshot version of the history in `folder` (LSMTimeline.latestSnapshotVersion), -1 when it has none.
 */
export async function latestSnapshotVersion(storage: Storage, folder: string): Promise<number> {
  const versionPath = `${folder}/${VERSION_FILE_NAME}`;
  const content = await getIfPresent(storage, versionPath);
  if (content !== undefined) return parseVersion(Buffer.from(content).toString('utf8'), storage.uriOf(versionPath));
  // LSMTimeline.allSnapshotVersions: `manifest_*` names, `.tmp` ones left out, the number after the `_`.
  const { files } = await storage.listDir(folder);
  let latest = -1;
  for (const file of files) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    if (!name.startsWith(MANIFEST_FILE_PREFIX) || name.endsWith(TEMP_FILE_SUFFIX)) continue;
    const number = name.slice(MANIFEST_FILE_PREFIX.length);
    if (!/^\d{1,9}$/.test(number)) {
      throw new TimelineHistoryError(`${name} is not a manifest name (manifest_<number>)`, {
        location: storage.uriOf(file.path),
        fix: 'move the file out of the history folder',
      });
    }
    latest = Math.max(latest, Number(number));
  }
  return latest;
}

/** The manifest of snapshot `version` (LSMTimeline.latestSnapshotManifest). */
export async function readManifest(storage: Storage, folder: string, version: number): Promise<HistoryManifest> {
  if (version < 0) return { files: [] };
  const path = `${folder}/${manifestFileName(version)}`;
  const content = await getIfPresent(storage, path);
  if (content === undefined) {
    throw new TimelineHistoryError(`the latest snapshot version ${version} has no manifest`, {
      location: storage.uriOf(path),
      fix: `restore ${manifestFileName(version)}, or point _version_ at the newest manifest present`,
    });
  }
  return parseManifest(Buffer.from(content).toString('utf8'), storage.uriOf(path));
}

/**
 * The archived instants of the history in `folder` (see historyFolder), as Hudi's archived timeline lists them.
 * With `from`, only the files whose name range reaches it (max instant at or after it) are read, as Hudi's
 * time-filtered load skips files by name: the instants listed are then those files' rows, not the whole history.
 */
export async function readTimelineHistory(storage: Storage, folder: string, options: { readonly from?: string } = {}): Promise<TimelineHistory> {
  const version = await latestSnapshotVersion(storage, folder);
  const manifest = await readManifest(storage, folder, version);
  const byTime = new Map<string, ArchivedInstant>();
  const from = options.from;
  for (const entry of manifest.files) {
    const range = from === undefined ? undefined : parseArchiveFileName(entry.fileName);
    if (from !== undefined && range !== undefined && compareInstantTimes(range.maxInstant, from) < 0) continue;
    const path = `${folder}/${entry.fileName}`;
    const location = storage.uriOf(path);
    const bytes = await getIfPresent(storage, path);
    if (bytes === undefined) {
      throw new TimelineHistoryError(`${manifestFileName(version)} names ${entry.fileName}, which is not in storage`, {
        location,
        fix: 'restore the file from a backup; Hudi cannot read this history either',
      });
    }
    let rows: ReturnType<typeof readFlatRows>;
    try {
      rows = readFlatRows(bytes, location);
    } catch (cause) {
      if (!(cause instanceof HudiError)) throw cause;
      throw new TimelineHistoryError(cause.problem, { location, fix: cause.fix ?? 'restore the file from a backup', cause });
    }
    checkHistoryColumns(rows.columns, location);
    for (let row = 0; row < rows.numRows; row++) {
      const instant = archivedInstantOfRow(rows.values, row, entry.fileName, location);
      const earlier = byTime.get(instant.requestedTime);
      if (earlier === undefined) byTime.set(instant.requestedTime, instant);
      else if (!sameInstant(earlier, instant)) {
        // Hudi keeps whichever of its parallel file reads comes first; we do not guess.
        throw new TimelineHistoryError(`instant ${instant.requestedTime} is archived twice, differently, in ${earlier.file} and ${entry.fileName}`, {
          location,
          fix: 'keep one of the two files in the manifest',
        });
      }
    }
  }
  const instants = [...byTime.values()].sort((a, b) => (a.requestedTime < b.requestedTime ? -1 : a.requestedTime > b.requestedTime ? 1 : 0));
  return { version, manifest, instants };
}

function sameInstant(a: ArchivedInstant, b: ArchivedInstant): boolean {
  const sameBytes = (x: Uint8Array | undefined, y: Uint8Array | undefined) => (x === undefined ? y === undefined : y !== undefined && Buffer.from(x).equals(y));
  return (
    a.completionTime === b.completionTime && a.action === b.action && sameBytes(a.metadata?.bytes, b.metadata?.bytes) && sameBytes(a.plan?.bytes, b.plan?.bytes)
  );
}

/**
 * The history's completion times by requested time: what file slicing by completion time looks up for instants
 * older than the active timeline (CompletionTimeQueryViewV2's archived part).
 */
export function historyCompletionTimes({ instants }: TimelineHistory): ArchivedCompletionTimes {
  const byRequested = new Map(instants.map((instant) => [instant.requestedTime, instant.completionTime]));
  return { completionTime: (requestedTime) => byRequested.get(requestedTime) };
}

/**
 * The history as the archived timeline the services and `status` look at: each archived instant completed (a
 * completed clustering as the replacecommit it completed as), and the file groups archived replacecommits replaced.
 */
export function historyAsArchivedTimeline({ instants, manifest }: TimelineHistory): ArchivedHistory {
  const replacedFileGroups = new Map<string, string>();
  for (const instant of instants) {
    if (instant.action !== 'replacecommit' && instant.action !== 'clustering') continue;
    const replaced = (instant.metadata?.record['partitionToReplaceFileIds'] ?? {}) as Record<string, readonly string[] | null>;
    for (const [partition, fileIds] of Object.entries(replaced))
      for (const fileId of fileIds ?? []) replacedFileGroups.set(fileGroupKey(partition, fileId), instant.requestedTime);
  }
  return {
    instants: instants.map((instant) => ({
      time: instant.requestedTime,
      action: instant.action === 'clustering' ? 'replacecommit' : instant.action,
      state: 'COMPLETED',
      completionTime: instant.completionTime,
    })),
    replacedFileGroups,
    archiveFiles: manifest.files.length,
  };
}
