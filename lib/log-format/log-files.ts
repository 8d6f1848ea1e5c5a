/**
 * Log files on a Storage: list a folder's log files in Hudi's order, read them, and write new ones.
 *
 * Writing follows Hudi on storage without append (S3, and Hadoop's local file system): every append is a new
 * object, the next version of the file slice's log (HoodieLogFormatWriter rolls over when the file exists). The
 * object is created with putIfAbsent, so two writers racing for one version cannot overwrite each other: the loser
 * lists again and takes the next version.
 */
import { AlreadyExistsError, HudiError } from '../errors.js';
import type { Storage, StoredObject } from '../storage/port.js';
import { concatBytes } from '../util/bytes.js';
import { fileNameOf } from '../util/paths.js';
import { type EncodeLogBlockOptions, encodeLogBlockParts, iterateLogBlocks, type LogBlock, type LogBlockInput } from './block.js';
import { LogFormatError } from './errors.js';
import { compareLogFileNames, type LogFileExtension, type LogFileName, logFileName, nextLogVersion, parseLogFileName } from './names.js';

export interface LogFile {
  /** Path under the storage root. */
  readonly path: string;
  readonly name: LogFileName;
  readonly size: number;
}

export interface LogFileFilter {
  fileId?: string;
  baseInstant?: string;
  extension?: LogFileExtension;
}

/**
 * The log files directly under `dir` ('' for the storage root), sorted by file id, then as Hudi's
 * HoodieLogFile comparator orders one file group's logs. Hadoop's `.<name>.crc` checksum files are skipped, as
 * Hadoop's own listing hides them.
 */
export async function listLogFiles(storage: Storage, dir: string, filter: LogFileFilter = {}): Promise<LogFile[]> {
  const { files } = await storage.listDir(dir);
  return logFilesOf(files, filter);
}

/** listLogFiles over an existing listing. */
export function logFilesOf(objects: readonly StoredObject[], filter: LogFileFilter = {}): LogFile[] {
  const logs: LogFile[] = [];
  for (const object of objects) {
    const base = fileNameOf(object.path);
    if (base.startsWith('..') && base.endsWith('.crc')) continue;
    const name = parseLogFileName(base);
    if (name === undefined) continue;
    if (filter.fileId !== undefined && name.fileId !== filter.fileId) continue;
    if (filter.baseInstant !== undefined && name.baseInstant !== filter.baseInstant) continue;
    if (filter.extension !== undefined && name.extension !== filter.extension) continue;
    logs.push({ path: object.path, name, size: object.size });
  }
  return logs.sort((a, b) => (a.name.fileId < b.name.fileId ? -1 : a.name.fileId > b.name.fileId ? 1 : compareLogFileNames(a.name, b.name)));
}

/** Every block of one log file, in order (torn blocks as CORRUPT_BLOCKs). */
export async function readLogFile(storage: Storage, path: string): Promise<LogBlock[]> {
  const bytes = await storage.get(path);
  return [...iterateLogBlocks(bytes, storage.uriOf(path))];
}

export interface FileGroupLogFile {
  readonly file: LogFile;
  readonly blocks: LogBlock[];
}

/**
 * The log files of one file group (optionally one file slice: one base instant) under `partitionPath`, in Hudi's
 * order, with their blocks.
 */
export async function readFileGroupLogs(
  storage: Storage,
  fileGroup: { partitionPath: string; fileId: string; baseInstant?: string; extension?: LogFileExtension },
): Promise<FileGroupLogFile[]> {
  const files = await listLogFiles(storage, fileGroup.partitionPath, fileGroup);
  const result: FileGroupLogFile[] = [];
  for (const file of files) result.push({ file, blocks: await readLogFile(storage, file.path) });
  return result;
}

export interface WriteLogFileOptions extends EncodeLogBlockOptions {
  /** The folder of the file group ('' for the storage root). */
  partitionPath: string;
  fileId: string;
  /** The file slice's base instant ('' for the archived timeline). */
  baseInstant: string;
  /** `<taskPartitionId>-<stageId>-<taskAttemptId>`; Hudi's rollbacks and archiver use "1-0-1". */
  writeToken: string;
  /** Default `log`. */
  extension?: LogFileExtension;
  /** Default empty; `.cdc` for a change-data-capture log (HoodieCDCUtils.CDC_LOGFILE_SUFFIX). */
  suffix?: string;
  blocks: readonly LogBlockInput[];
  /** How often to take the next version when another writer created the chosen one first. Default 5. */
  maxAttempts?: number;
  /**
   * Called with the chosen file name before the file is created (Hudi's LogFileCreationCallback: the writer's APPEND
   * marker goes first, so a rollback finds the file even if the write dies right after creating it).
   */
  beforeCreate?: (fileName: string) => Promise<void>;
  /**
   * The file group's log files as the caller has just listed them (the metadata table's writer knows its file
   * groups): the first attempt takes the version after them without listing the folder again; after a conflict the
   * version another writer took is added. Without it, each attempt lists the folder.
   */
  knownLogFiles?: readonly LogFileName[];
}

export interface WrittenLogFile extends LogFile {
  /** Each written block's offset and length in the file, in order (a delta write stat's logOffset is 0). */
  readonly blocks: readonly { offset: number; length: number }[];
}

/** Write the blocks as the file slice's next log version. */
export async function writeLogFile(storage: Storage, options: WriteLogFileOptions): Promise<WrittenLogFile> {
  if (options.blocks.length === 0) {
    throw new LogFormatError('a log file needs at least one block', { fix: 'pass the blocks to write' });
  }
  const parts = options.blocks.map((block) => encodeLogBlockParts(block, options));
  const bytes = concatBytes(parts.flatMap((part) => part.parts));
  const blocks: { offset: number; length: number }[] = [];
  let offset = 0;
  for (const part of parts) {
    blocks.push({ offset, length: part.length });
    offset += part.length;
  }
  const extension = options.extension ?? 'log';
  const suffix = options.suffix ?? '';
  const maxAttempts = options.maxAttempts ?? 5;
  let known = options.knownLogFiles;
  for (let attempt = 1; ; attempt++) {
    const existing = known ?? (await listLogFiles(storage, options.partitionPath, { fileId: options.fileId, extension })).map((file) => file.name);
    const version = nextLogVersion(existing, { fileId: options.fileId, baseInstant: options.baseInstant, extension });
    const base = logFileName({ fileId: options.fileId, baseInstant: options.baseInstant, version, writeToken: options.writeToken, extension, suffix });
    const name = parseLogFileName(base);
    if (name === undefined) {
      throw new HudiError(`log file name ${base} does not parse back`, {
        location: options.partitionPath,
        fix: 'give a file id, base instant and write token as Hudi names them (no `_` or `.` in the file id)',
      });
    }
    const path = options.partitionPath === '' ? base : `${options.partitionPath.replace(/\/+$/, '')}/${base}`;
    if (options.beforeCreate !== undefined) await options.beforeCreate(base);
    try {
      await storage.putIfAbsent(path, bytes);
    } catch (error) {
      if (error instanceof AlreadyExistsError && attempt < maxAttempts) {
        if (known !== undefined)
          known = [...known, { fileId: options.fileId, baseInstant: options.baseInstant, extension, version, writeToken: undefined, suffix }];
        continue;
      }
      throw error;
    }
    return { path, name, size: bytes.length, blocks };
  }
}
