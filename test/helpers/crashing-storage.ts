/**
 * A Storage that dies like a killed process: every call that changes storage (put, putIfAbsent, delete,
 * deleteMany, uploadFile) is counted, and the one numbered `crashAt` (from 1) throws before it happens, as does
 * every later call. Reads pass through. Run a service once with crashAt = 1, 2, … until it completes to test that
 * every prefix of its storage calls leaves a table the next run can finish. Made with `{ armed: false }` it counts
 * nothing until `arm()` (to crash only inside one section, after a setup that writes).
 */
import type { DeleteManyOptions, DeleteManyResult, Storage, StoredObject } from '../../lib/storage/port.js';

export class SimulatedCrash extends Error {
  constructor(
    readonly call: number,
    readonly operation: string,
    readonly paths: readonly string[],
  ) {
    super(`simulated crash at storage call ${call}: ${operation} ${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ', …' : ''}`);
    this.name = 'SimulatedCrash';
  }
}

export class CrashingStorage implements Storage {
  /** Mutating calls seen so far (including the one that crashed). */
  calls = 0;
  readonly log: string[] = [];

  armed: boolean;

  constructor(
    private readonly inner: Storage,
    private readonly crashAt: number = Number.POSITIVE_INFINITY,
    options: { armed?: boolean } = {},
  ) {
    this.armed = options.armed ?? true;
  }

  arm(): void {
    this.armed = true;
  }

  get uri(): string {
    return this.inner.uri;
  }

  get crashed(): boolean {
    return this.calls >= this.crashAt;
  }

  private mutate(operation: string, paths: readonly string[]): void {
    if (!this.armed) return;
    this.calls++;
    this.log.push(`${operation} ${paths.join(',')}`);
    if (this.calls >= this.crashAt) throw new SimulatedCrash(this.calls, operation, paths);
  }

  uriOf(path: string): string {
    return this.inner.uriOf(path);
  }
  get(path: string): Promise<Uint8Array> {
    return this.inner.get(path);
  }
  getRange(path: string, start: number, end: number): Promise<Uint8Array> {
    return this.inner.getRange(path, start, end);
  }
  head(path: string): Promise<StoredObject | undefined> {
    return this.inner.head(path);
  }
  localPath(path: string): string | undefined {
    return this.inner.localPath?.(path);
  }
  async put(path: string, body: Uint8Array | string): Promise<void> {
    this.mutate('put', [path]);
    await this.inner.put(path, body);
  }
  async putIfAbsent(path: string, body: Uint8Array | string): Promise<void> {
    this.mutate('putIfAbsent', [path]);
    await this.inner.putIfAbsent(path, body);
  }
  async uploadFile(path: string, localFile: string): Promise<void> {
    this.mutate('uploadFile', [path]);
    await this.inner.uploadFile(path, localFile);
  }
  downloadFile(path: string, localFile: string): Promise<void> {
    return this.inner.downloadFile(path, localFile);
  }
  listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }> {
    return this.inner.listDir(dir);
  }
  listRecursive(dir: string): Promise<StoredObject[]> {
    return this.inner.listRecursive(dir);
  }
  async delete(paths: readonly string[]): Promise<void> {
    this.mutate('delete', paths);
    await this.inner.delete(paths);
  }
  async deleteMany(paths: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult> {
    this.mutate('deleteMany', paths);
    return this.inner.deleteMany!(paths, options);
  }
}
