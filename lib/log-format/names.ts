/**
 * Log file names, as Hudi 0.14/0.15 build and parse them (FSUtils.makeLogFileName, FSUtils.LOG_FILE_PATTERN,
 * HoodieLogFile.LogFileComparator):
 *
 *   .<fileId>_<baseInstant>.<extension>.<version>_<writeToken>[.cdc]
 *
 * - data and metadata-table file groups: `.files-0000-0_20240101000000000.log.3_0-54-66`
 * - the archived timeline: `.commits_.archive.1_1-0-1` (fileId `commits`, empty base instant)
 *
 * The write token is `<taskPartitionId>-<stageId>-<taskAttemptId>`; rollbacks and the archiver use `1-0-1`.
 */
import { HudiError } from '../errors.js';
import { fileNameOf } from '../util/paths.js';

export type LogFileExtension = 'log' | 'archive';

export interface LogFileName {
  readonly fileId: string;
  /** The instant of the file slice's base file; empty for the archived timeline. */
  readonly baseInstant: string;
  readonly extension: LogFileExtension;
  /** 1 for a file slice's first log file. */
  readonly version: number;
  /** Absent only in names older writers produced. */
  readonly writeToken: string | undefined;
  /** `.cdc` for change-data-capture logs, else empty. */
  readonly suffix: string;
}

/** The suffix of a change-data-capture log file's name (HoodieCDCUtils.CDC_LOGFILE_SUFFIX). */
export const CDC_LOG_SUFFIX = '.cdc';

/** What Hudi uses when no Spark task is writing: rollback command blocks, the archiver. */
export const UNKNOWN_WRITE_TOKEN = '1-0-1';
/** The first version of a file slice's log (HoodieLogFile.LOGFILE_BASE_VERSION). */
export const LOG_FILE_BASE_VERSION = 1;

// Hudi's own pattern, matched with find() at the start of the name: fileId is greedy up to the last `_` that still
// lets the rest match. Hudi leaves the dot before `cdc` unescaped; so do we, to accept the same names.
const LOG_FILE_PATTERN = /^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(.cdc)?)?/;
const WRITE_TOKEN_PATTERN = /^\d+-\d+-\d+$/;

/** The parts of a log file name (a bare name or a path), or undefined when it is not one. */
export function parseLogFileName(nameOrPath: string): LogFileName | undefined {
  const name = fileNameOf(nameOrPath);
  const match = LOG_FILE_PATTERN.exec(name);
  if (match === null) return undefined;
  const version = Number(match[4]);
  if (!Number.isSafeInteger(version)) return undefined;
  return {
    fileId: match[1] ?? '',
    baseInstant: match[2] ?? '',
    extension: match[3] as LogFileExtension,
    version,
    writeToken: match[6],
    suffix: match[10] ?? '',
  };
}

/** Whether a name (or path) is a log file name. */
export function isLogFileName(nameOrPath: string): boolean {
  return parseLogFileName(nameOrPath) !== undefined;
}

export interface LogFileNameParts {
  fileId: string;
  baseInstant: string;
  version: number;
  writeToken: string;
  /** Default `log`. */
  extension?: LogFileExtension;
  /** Default empty; `.cdc` for change-data-capture logs. */
  suffix?: string;
}

/** `.<fileId>_<baseInstant>.<extension>.<version>_<writeToken><suffix>`. Throws HudiError on parts Hudi could not parse back. */
export function logFileName(parts: LogFileNameParts): string {
  const extension = parts.extension ?? 'log';
  const suffix = parts.suffix ?? '';
  if (parts.fileId === '' || parts.fileId.includes('/')) {
    throw new HudiError(`log file id "${parts.fileId}" is empty or contains "/"`, { fix: 'pass the file group id' });
  }
  if (!Number.isSafeInteger(parts.version) || parts.version < 0) {
    throw new HudiError(`log file version ${parts.version} is not a non-negative integer`, { fix: 'versions start at 1' });
  }
  if (!WRITE_TOKEN_PATTERN.test(parts.writeToken)) {
    throw new HudiError(`write token "${parts.writeToken}" is not <partition>-<stage>-<attempt>`, {
      fix: `use digits like "0-0-0" or Hudi's "${UNKNOWN_WRITE_TOKEN}"`,
    });
  }
  if (suffix !== '' && suffix !== CDC_LOG_SUFFIX) {
    throw new HudiError(`log file suffix "${suffix}" is not empty or "${CDC_LOG_SUFFIX}"`);
  }
  const name = `.${parts.fileId}_${parts.baseInstant}.${extension}.${parts.version}_${parts.writeToken}${suffix}`;
  const parsed = parseLogFileName(name);
  if (parsed === undefined || parsed.fileId !== parts.fileId || parsed.baseInstant !== parts.baseInstant) {
    throw new HudiError(`log file name "${name}" would not parse back to file id "${parts.fileId}"`, {
      fix: 'a base instant must not contain "_"',
    });
  }
  return name;
}

/**
 * Hudi's log file order (HoodieLogFile.LogFileComparator): by base instant, then version, then write token (absent
 * first), then suffix. The file id is not compared: sort one file group at a time.
 */
export function compareLogFileNames(a: LogFileName, b: LogFileName): number {
  if (a.baseInstant !== b.baseInstant) return compareStrings(a.baseInstant, b.baseInstant);
  if (a.version !== b.version) return a.version < b.version ? -1 : 1;
  if (a.writeToken !== b.writeToken) {
    if (a.writeToken === undefined) return -1;
    if (b.writeToken === undefined) return 1;
    return compareStrings(a.writeToken, b.writeToken);
  }
  return compareStrings(a.suffix, b.suffix);
}

/**
 * The version the next log file of a file slice gets on storage without append (FSUtils.computeNextLogVersion):
 * one past the highest version of that file id, base instant and extension, whatever the write token.
 */
export function nextLogVersion(existing: readonly LogFileName[], slice: { fileId: string; baseInstant: string; extension?: LogFileExtension }): number {
  const extension = slice.extension ?? 'log';
  let highest: number | undefined;
  for (const name of existing) {
    if (name.fileId !== slice.fileId || name.baseInstant !== slice.baseInstant || name.extension !== extension) continue;
    if (highest === undefined || name.version > highest) highest = name.version;
  }
  return highest === undefined ? LOG_FILE_BASE_VERSION : highest + 1;
}

// Java's String.compareTo compares UTF-16 code units, as JavaScript's < does.
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
