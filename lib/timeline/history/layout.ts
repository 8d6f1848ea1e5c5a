/**
 * Where Hudi 1.x (table versions 8 and 9) keeps its timeline history and how its files are named; see
 * docs/hudi-1x-history.md for the Java each fact comes from. The history is an LSM tree: Parquet files of archived
 * instants at levels 0, 1, …, the manifests that list the valid files of each snapshot version, and `_version_`
 * naming the latest version.
 */
import { TimelineHistoryError } from '../../errors.js';

/** TimelinePathProviderV2: `<base>/.hoodie/<hoodie.timeline.path>/<hoodie.timeline.history.path>`. */
export const DEFAULT_TIMELINE_PATH = 'timeline';
export const DEFAULT_HISTORY_PATH = 'history';

/** LSMTimeline.VERSION_FILE_NAME. */
export const VERSION_FILE_NAME = '_version_';
/** LSMTimeline.MANIFEST_FILE_PREFIX; `manifest_<N>`. */
export const MANIFEST_FILE_PREFIX = 'manifest_';
/** LSMTimeline.TEMP_FILE_SUFFIX: listing skips manifests ending in it. */
export const TEMP_FILE_SUFFIX = '.tmp';
/** LSMTimeline.ARCHIVE_FILE_PATTERN (`Matcher.matches`: the whole name). The level is one digit. */
const ARCHIVE_FILE_PATTERN = /^(\d+)_(\d+)_(\d)\.parquet$/;

/** The table config keys that place the history (hoodie.properties), as the caller read them. */
export interface HistoryPlacement {
  /** `hoodie.timeline.path`; `timeline` when unset. */
  readonly timelinePath?: string | undefined;
  /** `hoodie.timeline.history.path`; `history` when unset. */
  readonly historyPath?: string | undefined;
}

/** The history folder relative to the table's base path. */
export function historyFolder(placement: HistoryPlacement = {}): string {
  const timeline = placement.timelinePath ?? DEFAULT_TIMELINE_PATH;
  const history = placement.historyPath ?? DEFAULT_HISTORY_PATH;
  for (const [key, value] of [
    ['hoodie.timeline.path', timeline],
    ['hoodie.timeline.history.path', history],
  ] as const) {
    if (value === '' || value.split('/').some((part) => part === '' || part === '.' || part === '..')) {
      throw new TimelineHistoryError(`${key}=${value} is not a folder name under .hoodie/`, {
        location: '.hoodie/hoodie.properties',
        fix: `set ${key} to a relative folder name (Hudi's default is ${key === 'hoodie.timeline.path' ? DEFAULT_TIMELINE_PATH : DEFAULT_HISTORY_PATH})`,
      });
    }
  }
  return `.hoodie/${timeline}/${history}`;
}

/** `manifest_<version>` (LSMTimeline.getManifestFilePath). */
export function manifestFileName(version: number): string {
  return `${MANIFEST_FILE_PREFIX}${version}`;
}

/** A history Parquet file's name parts (LSMTimeline.getMinInstantTime, getMaxInstantTime, getFileLayer). */
export interface ArchiveFileName {
  readonly minInstant: string;
  readonly maxInstant: string;
  readonly level: number;
}

/** The parts of `<min>_<max>_<level>.parquet`, or undefined for any other name. */
export function parseArchiveFileName(name: string): ArchiveFileName | undefined {
  const match = ARCHIVE_FILE_PATTERN.exec(name);
  if (match === null) return undefined;
  return { minInstant: match[1]!, maxInstant: match[2]!, level: Number(match[3]) };
}

/** LSMTimelineWriter.newFileName: `%s_%s_%d.parquet`. */
export function archiveFileName(parts: ArchiveFileName): string {
  return `${parts.minInstant}_${parts.maxInstant}_${parts.level}.parquet`;
}
