/**
 * Write markers: how a rollback finds the data files of a write that never completed (Hudi's WriteMarkers).
 *
 * A writer creates one marker per data file *before* writing the file, under `.hoodie/.temp/<instant>/`:
 * - DIRECT markers (what we write): one empty object per data file,
 *   `.hoodie/.temp/<instant>/<partitionPath>/<dataFileName>.marker.<CREATE|MERGE|APPEND>`
 *   (directly under the instant folder when the table is not partitioned);
 * - TIMELINE_SERVER_BASED markers (Spark's default, read only): a `MARKERS.type` file saying
 *   `TIMELINE_SERVER_BASED` and files `MARKERS0`..`MARKERSn`, each listing marker paths relative to the instant
 *   folder, one per line.
 * The folder is removed once the instant completes or is rolled back.
 */
import { rm } from 'node:fs/promises';
import { AlreadyExistsError, HudiError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { fileNameOf, isHadoopChecksumFile } from '../util/paths.js';
import { isValidInstantTime } from './instant.js';
import { METAFOLDER } from './meta-folder.js';

/** Hudi's IOType: a new file group (CREATE), a new version of one (MERGE), or a log append (APPEND, MOR only). */
export type MarkerType = 'CREATE' | 'MERGE' | 'APPEND';

export interface Marker {
  /** '' when the table is not partitioned. */
  readonly partitionPath: string;
  /** The data file's name, e.g. `<fileId>_<writeToken>_<instant>.parquet`. */
  readonly fileName: string;
  readonly type: MarkerType;
}

const MARKER_TYPES: readonly MarkerType[] = ['CREATE', 'MERGE', 'APPEND'];
const MARKER_INFIX = '.marker.';
const MARKER_TYPE_FILE = 'MARKERS.type';
const TIMELINE_SERVER_MARKERS_FILE = /^MARKERS\d+$/;

/** `.hoodie/.temp` — Hudi's temp folder holding one marker folder per instant. */
export const MARKERS_ROOT = `${METAFOLDER}/.temp`;

/** The marker folder of an instant, relative to the table root. */
export function markerDir(instantTime: string): string {
  assertInstantTime(instantTime);
  return `${MARKERS_ROOT}/${instantTime}`;
}

/** The DIRECT marker object of one data file, relative to the table root. */
export function markerPath(instantTime: string, partitionPath: string, fileName: string, type: MarkerType): string {
  const relative = markerRelativePath(partitionPath, fileName, type);
  return `${markerDir(instantTime)}/${relative}`;
}

/**
 * Create the DIRECT marker of a data file the write at `instantTime` is about to create. Idempotent: a retried task
 * finding its own marker already there is fine (the same path can only mean the same file and type).
 * Returns the marker's path relative to the table root.
 */
export async function createMarker(storage: Storage, instantTime: string, partitionPath: string, fileName: string, type: MarkerType): Promise<string> {
  if (!MARKER_TYPES.includes(type)) {
    throw new HudiError(`unknown marker type "${String(type)}"`, { fix: `use one of ${MARKER_TYPES.join(', ')}` });
  }
  if (fileName === '' || fileName.includes('/')) {
    throw new HudiError(`marker file name "${fileName}" must be a bare data file name`, { fix: 'pass the partition path separately' });
  }
  const path = markerPath(instantTime, partitionPath, fileName, type);
  try {
    await storage.putIfAbsent(path, new Uint8Array());
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error;
  }
  return path;
}

/**
 * Every marker of an instant: DIRECT marker objects and the lines of TIMELINE_SERVER_BASED `MARKERSn` files, merged
 * (Hudi reads one kind, chosen by `MARKERS.type`; reading both also covers a folder a writer switched kinds in).
 * Empty when the instant has no marker folder. Sorted by partition, then file name.
 */
export async function listMarkers(storage: Storage, instantTime: string): Promise<Marker[]> {
  const dir = markerDir(instantTime);
  const objects = await storage.listRecursive(dir);
  const found = new Map<string, Marker>();
  const add = (relative: string, location: string): void => {
    const marker = parseMarkerPath(relative, location);
    found.set(`${marker.partitionPath}/${marker.fileName}/${marker.type}`, marker);
  };
  for (const object of objects) {
    const relative = object.path.slice(dir.length + 1);
    if (relative === MARKER_TYPE_FILE) continue;
    if (TIMELINE_SERVER_MARKERS_FILE.test(relative)) {
      const text = Buffer.from(await storage.get(object.path)).toString('utf8');
      for (const line of text.split('\n')) {
        const entry = line.trim();
        if (entry !== '') add(entry, storage.uriOf(object.path));
      }
      continue;
    }
    // Hadoop's local file system hides the `.<name>.crc` beside each marker from Hudi's listing; so do we.
    if (isHadoopChecksumFile(fileNameOf(relative))) continue;
    // Anything else without the marker infix is not a marker; Hudi skips it too.
    if (relative.includes(MARKER_INFIX)) add(relative, storage.uriOf(object.path));
  }
  return [...found.values()].sort(
    (a, b) => a.partitionPath.localeCompare(b.partitionPath) || a.fileName.localeCompare(b.fileName) || a.type.localeCompare(b.type),
  );
}

/** Remove an instant's marker folder (every marker object, and the empty folders on a local disk). */
export async function deleteMarkerDir(storage: Storage, instantTime: string): Promise<void> {
  const dir = markerDir(instantTime);
  const objects = await storage.listRecursive(dir);
  await storage.delete(objects.map((object) => object.path));
  // Object stores have no folders; a local disk keeps empty ones, which Hudi would then see as a marker folder.
  const localDir = storage.localPath?.(dir);
  if (localDir !== undefined) await rm(localDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------------

function markerRelativePath(partitionPath: string, fileName: string, type: MarkerType): string {
  const name = `${fileName}${MARKER_INFIX}${type}`;
  return partitionPath === '' ? name : `${partitionPath}/${name}`;
}

/** `<partition>/<file>.marker.<TYPE>` relative to the instant folder → its parts. */
function parseMarkerPath(relative: string, location: string): Marker {
  const infix = relative.lastIndexOf(MARKER_INFIX);
  const type = relative.slice(infix + MARKER_INFIX.length);
  if (infix < 0 || !MARKER_TYPES.includes(type as MarkerType)) {
    throw new HudiError(`"${relative}" is not a marker (<partition>/<file>${MARKER_INFIX}<${MARKER_TYPES.join('|')}>)`, {
      location,
      fix: 'remove the stray entry from the marker folder, or roll back without markers by deleting the folder (listing-based rollback)',
    });
  }
  const dataPath = relative.slice(0, infix);
  const slash = dataPath.lastIndexOf('/');
  return {
    partitionPath: slash < 0 ? '' : dataPath.slice(0, slash),
    fileName: dataPath.slice(slash + 1),
    type: type as MarkerType,
  };
}

/** Refuse a path segment that is not an instant time (a folder named after one is built from it). */
export function assertInstantTime(instantTime: string): void {
  if (!isValidInstantTime(instantTime)) {
    throw new HudiError(`"${instantTime}" is not an instant time`, { fix: 'give it as yyyyMMddHHmmssSSS, e.g. 20240707001301554' });
  }
}
