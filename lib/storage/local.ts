import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type Dirent, statSync } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AlreadyExistsError, HudiError, NotFoundError, PreconditionFailedError } from '../errors.js';
import { mapWithConcurrency } from './concurrency.js';
import { normalizeEtag } from './etag.js';
import type { DeleteManyOptions, DeleteManyResult, PutCondition, Storage, StoredObject, UploadOptions, VersionedDownload, VersionedObject } from './port.js';

/** Marks our in-progress temp files so listings can hide them. */
/**
 * Temp files (a write in progress, or left by a killed process) start with this: no leading dot and a `.tmp` end,
 * so Hudi never takes one for a log file (`.<fileId>_<instant>.log.<n>_<token>` matched from the name's start, which
 * a dot-prefixed copy of a metadata-table log name would match as a file group of its own) or a base file.
 */
const TEMP_MARKER = 'hudi-serverless-tmp-';
const STAT_CONCURRENCY = 32;
/** The last conditional put per file, so the next one compares after it. */
const conditionalPuts = new Map<string, Promise<void>>();

function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}

/**
 * A Storage over a local directory; writes go through a temp file and a rename, so readers never see half a file.
 * An object's ETag is the MD5 of its content in hex, as S3 gives a single-part upload.
 */
export class LocalStorage implements Storage, VersionedDownload {
  readonly uri: string;
  private readonly root: string;

  constructor(rootDir: string) {
    this.root = resolve(rootDir);
    this.uri = this.root;
  }

  uriOf(path: string): string {
    return this.absolute(path);
  }

  /** Engines read local tables in place. */
  localPath(path: string): string {
    return this.absolute(path);
  }

  async get(path: string): Promise<Uint8Array> {
    const file = this.absolute(path);
    try {
      return new Uint8Array(await readFile(file));
    } catch (error) {
      throw this.notFoundOr(error, file);
    }
  }

  async getRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const file = this.absolute(path);
    const length = Math.max(0, end - start);
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      throw this.notFoundOr(error, file);
    }
    try {
      const buffer = new Uint8Array(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(buffer, filled, length - filled, start + filled);
        if (bytesRead === 0) break; // past the end: return what exists, as S3 does
        filled += bytesRead;
      }
      return filled === length ? buffer : buffer.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  async head(path: string): Promise<StoredObject | undefined> {
    const file = this.absolute(path);
    try {
      const stats = await stat(file);
      if (!stats.isFile()) return undefined;
      return { path: this.relativePath(file), size: stats.size, modifiedMs: stats.mtimeMs };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async put(path: string, body: Uint8Array | string): Promise<void> {
    const file = this.absolute(path);
    const temp = await this.writeTemp(file, body);
    try {
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await rm(checksumSidecar(file), { force: true });
  }

  async putIfAbsent(path: string, body: Uint8Array | string): Promise<void> {
    const file = this.absolute(path);
    const temp = await this.writeTemp(file, body);
    try {
      // link() fails with EEXIST like O_EXCL, but publishes the complete file in one step.
      await link(temp, file);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') throw new AlreadyExistsError(file);
      if (!isLinkUnsupported(error)) throw error;
      await this.createExclusive(file, body);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  async getVersioned(path: string): Promise<VersionedObject | undefined> {
    const file = this.absolute(path);
    try {
      const bytes = new Uint8Array(await readFile(file));
      return { bytes, etag: md5Hex(bytes) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** Compare and replace one after the other per file: atomic among this process's callers, not across processes. */
  async putConditional(path: string, body: Uint8Array | string, condition: PutCondition): Promise<string> {
    const file = this.absolute(path);
    const previous = conditionalPuts.get(file) ?? Promise.resolve();
    const attempt = previous.then(async () => {
      const current = await this.getVersioned(path);
      const holds = 'ifMatch' in condition ? current?.etag === normalizeEtag(condition.ifMatch).toLowerCase() : current === undefined;
      if (!holds) throw new PreconditionFailedError(file);
      await this.put(path, body);
      return md5Hex(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
    });
    const settled = attempt.then(
      () => undefined,
      () => undefined,
    );
    conditionalPuts.set(file, settled);
    void settled.then(() => {
      if (conditionalPuts.get(file) === settled) conditionalPuts.delete(file);
    });
    return attempt;
  }

  async uploadFile(path: string, localFile: string, options: UploadOptions = {}): Promise<void> {
    const file = this.absolute(path);
    await mkdir(dirname(file), { recursive: true });
    if (options.consume === true) {
      // One rename, atomic as the copy's last step is; across file systems (EXDEV) the copy below.
      try {
        await rename(localFile, file);
        return;
      } catch (error) {
        if (isMissing(error)) throw new NotFoundError(localFile, 'the local file to upload does not exist');
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      }
    }
    const temp = tempNameFor(file);
    try {
      await copyFile(localFile, temp);
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      if (isMissing(error)) throw new NotFoundError(localFile, 'the local file to upload does not exist');
      throw error;
    }
  }

  async downloadFile(path: string, localFile: string): Promise<void> {
    const file = this.absolute(path);
    const target = resolve(localFile);
    await mkdir(dirname(target), { recursive: true });
    const temp = tempNameFor(target);
    try {
      await copyFile(file, temp);
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw this.notFoundOr(error, file);
    }
  }

  async downloadFileIfMatch(path: string, etag: string, localFile: string): Promise<boolean> {
    const file = this.absolute(path);
    const target = resolve(localFile);
    await mkdir(dirname(target), { recursive: true });
    const temp = tempNameFor(target);
    try {
      // The copy is hashed as it is written, so what is kept is exactly what matched.
      const md5 = createHash('md5');
      const hashing = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          md5.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(createReadStream(file), hashing, createWriteStream(temp, { flags: 'wx' }));
      if (md5.digest('hex') !== normalizeEtag(etag).toLowerCase()) {
        await unlink(temp);
        return false;
      }
      await rename(temp, target);
      return true;
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }> {
    const folder = this.absolute(dir);
    const entries = await readDirIfExists(folder);
    const dirs: string[] = [];
    const files: StoredObject[] = [];
    const prefix = this.relativePath(folder);
    for (const entry of entries) {
      if (entry.name.includes(TEMP_MARKER)) continue;
      if (entry.isDirectory()) dirs.push(entry.name);
      else if (entry.isFile() || entry.isSymbolicLink()) {
        const object = statFileSync(join(folder, entry.name), prefix === '' ? entry.name : `${prefix}/${entry.name}`);
        if (object !== undefined) files.push(object);
      }
    }
    return { files: files.sort(byPath), dirs: dirs.sort() };
  }

  async listRecursive(dir: string): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    const walk = async (folder: string): Promise<void> => {
      const entries = await readDirIfExists(folder);
      const subFolders: string[] = [];
      const prefix = this.relativePath(folder);
      for (const entry of entries) {
        if (entry.name.includes(TEMP_MARKER)) continue;
        const full = join(folder, entry.name);
        if (entry.isDirectory()) subFolders.push(full);
        else if (entry.isFile() || entry.isSymbolicLink()) {
          const object = statFileSync(full, prefix === '' ? entry.name : `${prefix}/${entry.name}`);
          if (object !== undefined) found.push(object);
        }
      }
      for (const subFolder of subFolders) await walk(subFolder);
    };
    await walk(this.absolute(dir));
    return found.sort(byPath);
  }

  async delete(paths: readonly string[]): Promise<void> {
    await mapWithConcurrency(paths, STAT_CONCURRENCY, async (path) => {
      await rm(this.absolute(path), { force: true });
      await rm(checksumSidecar(this.absolute(path)), { force: true });
    });
  }

  async deleteMany(paths: readonly string[], options: DeleteManyOptions = {}): Promise<DeleteManyResult> {
    const outcomes = await mapWithConcurrency(paths, options.concurrency ?? STAT_CONCURRENCY, async (path) => {
      try {
        await rm(this.absolute(path), { force: true });
        await rm(checksumSidecar(this.absolute(path)), { force: true });
        return { path, reason: undefined };
      } catch (error) {
        return { path, reason: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
      }
    });
    return {
      deleted: outcomes.filter((outcome) => outcome.reason === undefined).map((outcome) => outcome.path),
      failed: outcomes.flatMap((outcome) => (outcome.reason === undefined ? [] : [{ path: outcome.path, reason: outcome.reason }])),
    };
  }

  /** Absolute file path of a storage path; refuses paths that climb out of the root. */
  private absolute(path: string): string {
    const file = resolve(this.root, path.replace(/^\/+/, ''));
    const fromRoot = relative(this.root, file);
    if (fromRoot.startsWith('..') || isAbsolute(fromRoot)) {
      throw new HudiError(`path "${path}" is outside the table`, { location: this.root, fix: 'use a path relative to the table root' });
    }
    return file;
  }

  private relativePath(file: string): string {
    return relative(this.root, file).split(sep).join('/');
  }

  private async writeTemp(file: string, body: Uint8Array | string): Promise<string> {
    await mkdir(dirname(file), { recursive: true });
    const temp = tempNameFor(file);
    await writeFile(temp, body, { flag: 'wx' });
    return temp;
  }

  /** Fallback for file systems without hard links: O_EXCL create (a reader may briefly see a partial file). */
  private async createExclusive(file: string, body: Uint8Array | string): Promise<void> {
    try {
      await writeFile(file, body, { flag: 'wx' });
    } catch (error) {
      if (errorCode(error) === 'EEXIST') throw new AlreadyExistsError(file);
      throw error;
    }
  }

  private notFoundOr(error: unknown, file: string): unknown {
    return isMissing(error) ? new NotFoundError(file) : error;
  }
}

function tempNameFor(file: string): string {
  return join(dirname(file), `${TEMP_MARKER}${randomBytes(6).toString('hex')}-${basename(file)}.tmp`);
}

async function readDirIfExists(folder: string): Promise<Dirent[]> {
  try {
    return await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return []; // like an S3 prefix with no objects
    throw error;
  }
}

function byPath(a: StoredObject, b: StoredObject): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function isLinkUnsupported(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EXDEV' || code === 'EMLINK';
}

/**
 * A listed file's size and time. Synchronous on purpose: a listing stats every file of a folder (a timeline of
 * 10,000 commits holds 30,000), and a promise per stat costs several times the stat.
 */
function statFileSync(file: string, path: string): StoredObject | undefined {
  const stats = statSync(file, { throwIfNoEntry: false }); // undefined: deleted between readdir and stat
  return stats?.isFile() === true ? { path, size: stats.size, modifiedMs: stats.mtimeMs } : undefined;
}

/**
 * Hadoop's local file system (what Spark writes `file:` tables with) keeps a `.<name>.crc` checksum beside each file
 * and fails a read whose checksum does not match. A file we replace or delete takes its sidecar with it, as Hadoop's
 * ChecksumFileSystem does, so Spark reads what we wrote. Object stores have none.
 */
function checksumSidecar(file: string): string {
  return join(dirname(file), `.${basename(file)}.crc`);
}
