/**
 * A lock kept in the table's own storage, for local tables and single-writer setups without DynamoDB. The Storage port
 * has create-if-absent but no conditional overwrite or delete, so the lock is a series of generations,
 * `.hoodie/.serverless-lock/lease-<generation>.json`, the highest being the lock: taking it means creating the next
 * generation with putIfAbsent, the one arbiter; only a generation's creator rewrites it (renew, release), and the new
 * holder deletes older ones. Hudi ignores this folder (neither an instant nor 1.x's `.hoodie/.locks/`).
 * Limits: a renewal landing after the lease ran out is void; it does not exclude Java writers (Hudi's
 * FileSystemBasedLockProvider uses `.hoodie/lock`): when Hudi writers share the table, use the DynamoDB lock or, on S3,
 * Hudi's StorageBasedLockProvider (hudi-storage-lock.ts).
 */
import { randomUUID } from 'node:crypto';
import { AlreadyExistsError, HudiError, NotFoundError } from '../errors.js';
import { getIfExists } from '../storage/get-if-exists.js';
import type { Storage } from '../storage/port.js';
import { fileNameOf } from '../util/paths.js';
import {
  acquireLease,
  DEFAULT_LEASE_MS,
  DEFAULT_POLL_MS,
  DEFAULT_WAIT_MS,
  defaultOwnerName,
  type HeartbeatLease,
  type LeaseBackend,
  LeaseLostError,
  type LeaseTiming,
  type ObservedHolder,
  requirePositiveMs,
  tryAcquireLease,
} from './lease.js';
import type { LockProvider } from './port.js';

export const STORAGE_LOCK_FOLDER = '.hoodie/.serverless-lock';
const GENERATION_DIGITS = 12;
const GENERATION_FILE = /^lease-(\d{12})\.json$/;
/** A generation can vanish between listing and reading (the new holder cleans up): look again this often. */
const MAX_READ_ATTEMPTS = 5;

/**
 * One lease that keeps many locks alive (an ingest batch's claims): each lock's record names it, is never renewed
 * itself, and its holder counts as renewing while the heartbeat does. Saves a renewal per lock per period.
 */
export interface SharedHeartbeat {
  /** The heartbeat's own path, written into every record that relies on it. */
  readonly path: string;
  /** Throws when the heartbeat's lease was lost. */
  assertHeld(): Promise<void>;
  /** Another record's heartbeat as a holder: released once it is gone or seen unchanged for its whole lease. */
  holderAt(path: string): Promise<ObservedHolder | undefined>;
}

export interface StorageLockOptions {
  /** Lease per renewal (default 20000 ms), renewed every leaseMs/4. */
  leaseMs?: number;
  /** Default: `<function or host>:<pid>:<uuid>`. */
  ownerName?: string;
  /** How long acquire() waits when not told (default 60000 ms, hoodie.write.lock.wait_time_ms). */
  waitMs?: number;
  /** How often a waiting acquirer looks at the lock (default 1000 ms). */
  pollMs?: number;
  /** Rely on this heartbeat instead of renewing the lock's own record. */
  heartbeat?: SharedHeartbeat;
  /**
   * The lock's folder is usually new (a claim per object): take the first generation without listing, keep every
   * generation (so "the next one is absent" proves a holding is current, one HEAD instead of a listing), and let
   * the holder delete them all at the end (deleteHeld). Never for a folder an older layout may have pruned.
   */
  freshFolders?: boolean;
}

/** The content of one generation's object. */
export interface StorageLockRecord {
  readonly owner: string;
  /** A fresh UUID per write. */
  readonly version: string;
  readonly leaseMs: number;
  /** The SharedHeartbeat whose renewals stand for this record's. */
  readonly heartbeat?: string;
  /** Wall-clock times, for people reading the file; expiry is judged by watching `version`, not by clocks. */
  readonly acquiredAt: string;
  readonly renewedAt: string;
  readonly leaseUntil: string;
  readonly released: boolean;
}

interface StorageHolder extends ObservedHolder {
  readonly generation: number;
}

interface StorageHeld {
  readonly generation: number;
  readonly version: string;
  readonly acquiredAt: string;
}

export class StorageLockProvider implements LockProvider {
  readonly description: string;
  readonly storage: Storage;
  readonly leaseMs: number;
  readonly ownerName: string;
  readonly heartbeat: SharedHeartbeat | undefined;
  readonly freshFolders: boolean;
  private readonly waitMs: number;
  private readonly pollMs: number;

  constructor(storage: Storage, options: StorageLockOptions = {}) {
    this.storage = storage;
    this.heartbeat = options.heartbeat;
    this.freshFolders = options.freshFolders === true;
    this.description = storage.uriOf(STORAGE_LOCK_FOLDER);
    this.leaseMs = requirePositiveMs(options.leaseMs ?? DEFAULT_LEASE_MS, 'the lock lease', this.description);
    this.waitMs = requirePositiveMs(options.waitMs ?? DEFAULT_WAIT_MS, 'the lock wait', this.description);
    this.pollMs = requirePositiveMs(options.pollMs ?? DEFAULT_POLL_MS, 'the lock poll interval', this.description);
    this.ownerName = options.ownerName ?? defaultOwnerName();
  }

  async acquire(options: { waitMs?: number } = {}): Promise<HeartbeatLease<StorageHeld>> {
    const waitMs = options.waitMs ?? this.waitMs;
    return acquireLease(new StorageLeaseBackend(this), this.timing(waitMs), { claimFirst: this.freshFolders });
  }

  /** The lease when the lock is free and this claim wins it, else undefined at once (see tryAcquireLease). */
  async tryAcquire(): Promise<HeartbeatLease<StorageHeld> | undefined> {
    return tryAcquireLease(new StorageLeaseBackend(this), this.timing(this.waitMs), { claimFirst: this.freshFolders });
  }

  /**
   * With freshFolders: delete the files of every generation up to the lease's, and `others` (paths in this storage),
   * in one request, without listing: for a holder done with the folder for good.
   */
  async deleteHeld(lease: HeartbeatLease<StorageHeld>, others: readonly string[]): Promise<void> {
    await this.storage.delete(this.endHeld(lease, others));
  }

  /** deleteHeld's renewals stopped and its paths returned, for a caller that deletes many folders' files at once. */
  endHeld(lease: HeartbeatLease<StorageHeld>, others: readonly string[]): string[] {
    lease.stopHeartbeat();
    return [...Array.from({ length: lease.holding().generation }, (_, i) => pathOf(i + 1)), ...others];
  }

  /** When a generation's holder took it, by its own clock; undefined when that generation is gone or unreadable. */
  async acquiredAt(generation: number): Promise<Date | undefined> {
    const bytes = await getIfExists(this.storage, pathOf(generation));
    if (bytes === undefined) return undefined;
    const time = Date.parse(parseRecord(bytes)?.acquiredAt ?? '');
    return Number.isNaN(time) ? undefined : new Date(time);
  }

  /** The lock's holder as a waiting acquirer sees it; undefined when free. */
  async holder(): Promise<ObservedHolder | undefined> {
    return new StorageLeaseBackend(this).readHolder();
  }

  private timing(waitMs: number): LeaseTiming {
    return { owner: this.ownerName, leaseMs: this.leaseMs, waitMs, pollMs: this.pollMs };
  }
}

class StorageLeaseBackend implements LeaseBackend<StorageHolder, StorageHeld> {
  /** With a shared heartbeat a renewal writes nothing, so it cannot land late. */
  readonly renewalIsCompareAndSet: boolean;
  readonly description: string;
  private readonly lock: StorageLockProvider;
  private readonly storage: Storage;

  constructor(lock: StorageLockProvider) {
    this.lock = lock;
    this.storage = lock.storage;
    this.description = lock.description;
    this.renewalIsCompareAndSet = lock.heartbeat !== undefined;
  }

  async readHolder(): Promise<StorageHolder | undefined> {
    for (let attempt = 1; ; attempt++) {
      const generations = await this.listGenerations();
      const latest = generations.at(-1);
      if (latest === undefined) return undefined;
      try {
        const bytes = await this.storage.get(pathOf(latest));
        return { generation: latest, ...(await this.holderFrom(bytes)) };
      } catch (error) {
        if (!(error instanceof NotFoundError) || attempt >= MAX_READ_ATTEMPTS) throw error;
      }
    }
  }

  async claim(previous: StorageHolder | undefined): Promise<StorageHeld | undefined> {
    const generation = previous === undefined ? 1 : previous.generation + 1;
    const held: StorageHeld = { generation, version: randomUUID(), acquiredAt: new Date().toISOString() };
    try {
      await this.storage.putIfAbsent(pathOf(generation), this.recordFor(held, false));
    } catch (error) {
      if (error instanceof AlreadyExistsError) return undefined;
      throw error;
    }
    // putIfAbsent decided; reading back guards against a store that ignored the condition.
    const written = parseRecord(await this.storage.get(pathOf(generation)));
    if (written?.owner !== this.lock.ownerName || written.version !== held.version) return undefined;
    // The first generation has none before it: no listing to pay. Fresh folders keep theirs (see freshFolders).
    if (generation > 1 && !this.lock.freshFolders) await this.deleteGenerationsBefore(generation);
    return held;
  }

  async renew(held: StorageHeld): Promise<StorageHeld> {
    if (this.lock.heartbeat !== undefined) return held;
    const generations = await this.listGenerations();
    const latest = generations.at(-1);
    if (latest !== undefined && latest > held.generation) {
      throw new LeaseLostError('another writer took it over', await this.ownerOf(latest));
    }
    if (!generations.includes(held.generation)) throw new LeaseLostError(`its file ${pathOf(held.generation)} was deleted`);
    const renewed: StorageHeld = { ...held, version: randomUUID() };
    await this.storage.put(pathOf(held.generation), this.recordFor(renewed, false));
    return renewed;
  }

  async isCurrent(held: StorageHeld): Promise<boolean> {
    const { heartbeat } = this.lock;
    if (heartbeat !== undefined) {
      // Only this holder writes its generation: it stays ours while it is the latest and the heartbeat lives.
      if (this.lock.freshFolders) {
        // Every taker writes the next generation, and none is ever deleted here.
        if ((await this.storage.head(pathOf(held.generation + 1))) !== undefined) return false;
      } else if ((await this.listGenerations()).at(-1) !== held.generation) return false;
      return heartbeat.assertHeld().then(
        () => true,
        () => false,
      );
    }
    const latest = (await this.listGenerations()).at(-1);
    if (latest !== held.generation) return false;
    const bytes = await getIfExists(this.storage, pathOf(latest));
    if (bytes === undefined) return false;
    const record = parseRecord(bytes);
    return record?.owner === this.lock.ownerName && record.version === held.version && !record.released;
  }

  async release(held: StorageHeld): Promise<void> {
    // Only the latest generation is the lock; rewriting an older one (a stale holder's) would change nothing.
    if ((await this.listGenerations()).at(-1) !== held.generation) return;
    await this.storage.put(pathOf(held.generation), this.recordFor({ ...held, version: randomUUID() }, true));
  }

  private async holderFrom(bytes: Uint8Array): Promise<Omit<StorageHolder, 'generation'>> {
    const record = parseRecord(bytes);
    const { heartbeat } = this.lock;
    if (record?.heartbeat !== undefined && heartbeat !== undefined && !record.released) {
      const beating = await heartbeat.holderAt(record.heartbeat);
      if (beating === undefined) return { owner: record.owner, version: record.version, leaseMs: record.leaseMs, released: true };
      return { owner: record.owner, version: beating.version, leaseMs: beating.leaseMs, released: beating.released };
    }
    if (record !== undefined) {
      return { owner: record.owner, version: record.version, leaseMs: record.leaseMs, released: record.released };
    }
    // Unreadable (e.g. half-written by hand): judge staleness by its bytes, with our own lease.
    return { owner: '(unreadable lock file)', version: Buffer.from(bytes).toString('base64'), leaseMs: this.lock.leaseMs, released: false };
  }

  private recordFor(held: StorageHeld, released: boolean): string {
    const now = Date.now();
    const record: StorageLockRecord = {
      owner: this.lock.ownerName,
      version: held.version,
      leaseMs: this.lock.leaseMs,
      ...(this.lock.heartbeat === undefined ? {} : { heartbeat: this.lock.heartbeat.path }),
      acquiredAt: held.acquiredAt,
      renewedAt: new Date(now).toISOString(),
      leaseUntil: new Date(released ? now : now + this.lock.leaseMs).toISOString(),
      released,
    };
    return `${JSON.stringify(record, null, 2)}\n`;
  }

  private async listGenerations(): Promise<number[]> {
    const { files } = await this.storage.listDir(STORAGE_LOCK_FOLDER);
    const generations: number[] = [];
    for (const file of files) {
      const match = GENERATION_FILE.exec(fileNameOf(file.path));
      if (match?.[1] !== undefined) generations.push(Number(match[1]));
    }
    return generations.sort((a, b) => a - b);
  }

  private async ownerOf(generation: number): Promise<string | undefined> {
    const bytes = await this.storage.get(pathOf(generation)).catch(() => undefined);
    return bytes === undefined ? undefined : parseRecord(bytes)?.owner;
  }

  /** Best effort: leftovers only cost a listing entry, and the next holder retries. */
  private async deleteGenerationsBefore(generation: number): Promise<void> {
    try {
      const older = (await this.listGenerations()).filter((g) => g < generation);
      if (older.length > 0) await this.storage.delete(older.map(pathOf));
    } catch {
      // ignored, see above
    }
  }
}

function pathOf(generation: number): string {
  if (!Number.isSafeInteger(generation) || generation <= 0 || String(generation).length > GENERATION_DIGITS) {
    throw new HudiError(`lock generation ${generation} is out of range`, {
      location: STORAGE_LOCK_FOLDER,
      fix: `delete ${STORAGE_LOCK_FOLDER}/ when no writer is running`,
    });
  }
  return `${STORAGE_LOCK_FOLDER}/lease-${String(generation).padStart(GENERATION_DIGITS, '0')}.json`;
}

function parseRecord(bytes: Uint8Array): StorageLockRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Partial<Record<keyof StorageLockRecord, unknown>>;
  if (typeof record.owner !== 'string' || typeof record.version !== 'string' || typeof record.leaseMs !== 'number' || !(record.leaseMs > 0)) {
    return undefined;
  }
  return {
    owner: record.owner,
    version: record.version,
    leaseMs: record.leaseMs,
    acquiredAt: typeof record.acquiredAt === 'string' ? record.acquiredAt : '',
    renewedAt: typeof record.renewedAt === 'string' ? record.renewedAt : '',
    leaseUntil: typeof record.leaseUntil === 'string' ? record.leaseUntil : '',
    released: record.released === true,
    ...(typeof record.heartbeat === 'string' ? { heartbeat: record.heartbeat } : {}),
  };
}
