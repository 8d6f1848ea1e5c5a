/**
 * A process that dies after its N-th storage or lock call, for the crash harness (test/interop/crash-*.test.ts).
 *
 * One CrashPoint counts, in call order, every storage call that changes something (put, putIfAbsent, uploadFile,
 * delete, deleteMany) and every lock call (acquire, assertHeld, release) of one operation. The call numbered
 * `crashAt` (from 1) does not happen: it throws ProcessCrash, and so does every later call, reads included — the
 * process is dead, so whatever catches the error can neither read nor change anything. Reads before the crash pass
 * through (they change nothing, so a crash after a read leaves the same storage as one before the next change).
 * A crashed lease stops renewing without releasing: the lock stays held until its lease runs out, as when a holder
 * is killed. Running crashAt = 1, 2, … until the operation completes covers every prefix of its changes.
 */
import type { LockLease, LockProvider } from '../../lib/lock/port.js';
import type { Storage, StoredObject } from '../../lib/storage/port.js';

/** The simulated death. Not a HudiError: nothing in lib/ should recognise (and handle) it. */
export class ProcessCrash extends Error {
  constructor(
    readonly call: number,
    readonly operation: string,
  ) {
    super(`process crashed at call ${call} (${operation})`);
    this.name = 'ProcessCrash';
  }
}

export class CrashPoint {
  /** Calls counted so far, the crashing one included. */
  calls = 0;
  /** `<n> <call> <path>` per counted call, for messages. */
  readonly log: string[] = [];
  private dead = false;

  constructor(readonly crashAt: number = Number.POSITIVE_INFINITY) {}

  get crashed(): boolean {
    return this.dead;
  }

  /** Count a call; throws when it is the crashing one or comes after it. */
  tick(operation: string): void {
    if (this.dead) throw new ProcessCrash(this.calls, `after the crash: ${operation}`);
    this.calls++;
    this.log.push(`${this.calls} ${operation}`);
    if (this.calls >= this.crashAt) {
      this.dead = true;
      throw new ProcessCrash(this.calls, operation);
    }
  }

  /** A read: free before the crash, impossible after it. */
  read(operation: string): void {
    if (this.dead) throw new ProcessCrash(this.calls, `after the crash: ${operation}`);
  }
}

export class CrashStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    readonly point: CrashPoint,
  ) {}

  get uri(): string {
    return this.inner.uri;
  }
  uriOf(path: string): string {
    return this.inner.uriOf(path);
  }
  localPath(path: string): string | undefined {
    return this.inner.localPath?.(path);
  }
  async get(path: string): Promise<Uint8Array> {
    this.point.read(`get ${path}`);
    return this.inner.get(path);
  }
  async getRange(path: string, start: number, end: number): Promise<Uint8Array> {
    this.point.read(`getRange ${path}`);
    return this.inner.getRange(path, start, end);
  }
  async head(path: string): Promise<StoredObject | undefined> {
    this.point.read(`head ${path}`);
    return this.inner.head(path);
  }
  async downloadFile(path: string, localFile: string): Promise<void> {
    this.point.read(`downloadFile ${path}`);
    return this.inner.downloadFile(path, localFile);
  }
  async listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }> {
    this.point.read(`listDir ${dir}`);
    return this.inner.listDir(dir);
  }
  async listRecursive(dir: string): Promise<StoredObject[]> {
    this.point.read(`listRecursive ${dir}`);
    return this.inner.listRecursive(dir);
  }
  async put(path: string, body: Uint8Array | string): Promise<void> {
    this.point.tick(`put ${path}`);
    await this.inner.put(path, body);
  }
  async putIfAbsent(path: string, body: Uint8Array | string): Promise<void> {
    this.point.tick(`putIfAbsent ${path}`);
    await this.inner.putIfAbsent(path, body);
  }
  async uploadFile(path: string, localFile: string): Promise<void> {
    this.point.tick(`uploadFile ${path}`);
    await this.inner.uploadFile(path, localFile);
  }
  async delete(paths: readonly string[]): Promise<void> {
    this.point.tick(`delete ${paths.length === 1 ? paths[0] : `${paths.length} paths`}`);
    await this.inner.delete(paths);
  }
}

/** What a lease of the wrapped provider may offer to stop renewing without releasing (HeartbeatLease does). */
interface StoppableLease extends LockLease {
  stopHeartbeat?(): void;
}

export class CrashLock implements LockProvider {
  /** Whether the process died holding the lock: acquired, never released (its lease then has to run out). */
  leftHeld = false;

  constructor(
    private readonly inner: LockProvider,
    readonly point: CrashPoint,
  ) {}

  get description(): string {
    return this.inner.description;
  }

  async acquire(options?: { waitMs?: number }): Promise<LockLease> {
    this.point.tick('lock acquire');
    const lease: StoppableLease = await this.inner.acquire(options);
    const point = this.point;
    // Dead: no more renewals, and no release — the lock stays held until its lease expires.
    const die = (error: unknown): never => {
      lease.stopHeartbeat?.();
      this.leftHeld = true;
      throw error;
    };
    return {
      owner: lease.owner,
      async assertHeld() {
        try {
          point.tick('lock assertHeld');
        } catch (error) {
          die(error);
        }
        await lease.assertHeld();
      },
      async release() {
        try {
          point.tick('lock release');
        } catch (error) {
          die(error);
        }
        await lease.release();
      },
    };
  }
}
