/**
 * Hudi's StorageBasedLockProvider (1.1, RFC-91) on S3, so our writers and Hudi writers using it exclude each other:
 * one JSON lock file, `.hoodie/.locks/table_lock.json` = {expired, validUntil (epoch ms), owner}, changed only by
 * conditional puts (If-None-Match: * to create, If-Match on the ETag read to replace). A writer takes the lock when
 * the file is missing, marked expired, or past validUntil by more than Hudi's clock-drift buffer; the holder renews
 * validUntil every renew interval and releases by writing expired=true with the same validUntil. Unlike our other
 * locks, expiry is judged by wall clocks, as Hudi judges it.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, errorMessage, HudiError, LockUnavailableError, PreconditionFailedError } from '../errors.js';
import type { PutCondition, Storage, VersionedObject } from '../storage/port.js';
import { LOCK_PROPERTY } from './keys.js';
import {
  DEFAULT_POLL_MS,
  DEFAULT_WAIT_MS,
  defaultOwnerName,
  HeartbeatLease,
  type LeaseBackend,
  LeaseLostError,
  type ObservedHolder,
  requirePositiveMs,
  timerDelay,
} from './lease.js';
import type { LockProvider } from './port.js';

export const STORAGE_BASED_LOCK_PROVIDER = 'org.apache.hudi.client.transaction.lock.StorageBasedLockProvider';
/** StorageLockClient.getLockFolderPath + StorageBasedLockProvider.DEFAULT_TABLE_LOCK_FILE_NAME. */
export const HUDI_LOCK_FILE = '.hoodie/.locks/table_lock.json';
/** StorageBasedLockProvider.CLOCK_DRIFT_BUFFER_MS: a lock counts as dangling only this long after its validUntil. */
export const CLOCK_DRIFT_BUFFER_MS = 500;

/** The lock file's content (Hudi's StorageLockData). */
export interface HudiLockData {
  readonly expired: boolean;
  readonly validUntil: number;
  readonly owner: string;
}

export interface HudiStorageLockOptions {
  /** hoodie.write.lock.storage.validity.timeout.secs in ms (default 300 s). */
  validityMs?: number;
  /** hoodie.write.lock.storage.renew.interval.secs in ms (default 30 s). */
  renewIntervalMs?: number;
  ownerName?: string;
  waitMs?: number;
  /** Pause between attempts (Hudi's tryLock(time) sleeps 1000 ms). */
  pollMs?: number;
  /** Wall clock (epoch ms); tests move it. */
  clock?: () => number;
}

interface HudiHeld {
  readonly etag: string;
  readonly validUntil: number;
}

interface HudiHolder extends ObservedHolder {
  readonly file: VersionedObject;
  readonly data: HudiLockData;
}

type CompareAndSetStorage = Storage & Required<Pick<Storage, 'getVersioned' | 'putConditional'>>;

export class HudiStorageLockProvider implements LockProvider {
  readonly description: string;
  readonly ownerName: string;
  readonly validityMs: number;
  readonly renewIntervalMs: number;
  private readonly storage: CompareAndSetStorage;
  private readonly waitMs: number;
  private readonly pollMs: number;
  private readonly clock: () => number;

  constructor(storage: Storage, options: HudiStorageLockOptions = {}) {
    this.description = storage.uriOf(HUDI_LOCK_FILE);
    if (!/^s3a?:\/\//.test(storage.uri) || storage.getVersioned === undefined || storage.putConditional === undefined) {
      // As Hudi: StorageSchemes names a lock client for s3/s3a (and gs), none for other schemes.
      throw new HudiError(`${STORAGE_BASED_LOCK_PROVIDER} has no lock client for ${storage.uri}`, {
        location: this.description,
        fix: 'use it for tables on S3 only; a local table takes the storage lock (leave hoodie.write.lock.provider unset)',
      });
    }
    this.storage = storage as CompareAndSetStorage;
    this.validityMs = requirePositiveMs(options.validityMs ?? 300_000, 'the lock validity', this.description);
    this.renewIntervalMs = requirePositiveMs(options.renewIntervalMs ?? 30_000, 'the lock renew interval', this.description);
    this.waitMs = requirePositiveMs(options.waitMs ?? DEFAULT_WAIT_MS, 'the lock wait', this.description);
    this.pollMs = requirePositiveMs(options.pollMs ?? DEFAULT_POLL_MS, 'the lock poll interval', this.description);
    if (this.validityMs < 10 * this.renewIntervalMs) {
      // StorageBasedLockConfig's own check: a lease survives several failed renewals.
      throw new HudiError(`the lock validity (${this.validityMs} ms) must be at least 10 renew intervals (${this.renewIntervalMs} ms)`, {
        location: this.description,
        fix: `raise ${LOCK_PROPERTY.storageValiditySecs} or lower ${LOCK_PROPERTY.storageRenewIntervalSecs}`,
      });
    }
    this.ownerName = options.ownerName ?? defaultOwnerName();
    this.clock = options.clock ?? Date.now;
  }

  /** Hudi's tryLock(time): one attempt, then another after each pause, until one succeeds or the wait is over. */
  async acquire(options: { waitMs?: number } = {}): Promise<HeartbeatLease<HudiHeld>> {
    const waitMs = options.waitMs ?? this.waitMs;
    const backend = new HudiLockBackend(this.storage, this);
    const startedAt = performance.now();
    let lastSeen = '';
    let storageError: unknown;
    const failed = (doing: string) => (error: unknown) => {
      storageError = error;
      lastSeen = `the lock file could not be ${doing} (${errorMessage(error)})`;
      return null;
    };
    for (;;) {
      const sentAt = performance.now();
      storageError = undefined;
      // A failed read or write is Hudi's UNKNOWN_ERROR (try again); an unreadable file stops, as Hudi's parse failure.
      const file = await backend.readFile().catch(failed('read'));
      const holder = file === null || file === undefined ? undefined : backend.holderOf(file);
      if (file !== null && (holder === undefined || holder.released)) {
        const held = await backend.claim(holder).catch(failed('written'));
        if (held !== undefined && held !== null) {
          const timing = { owner: this.ownerName, leaseMs: this.validityMs, renewEveryMs: this.renewIntervalMs, waitMs, pollMs: this.pollMs };
          return new HeartbeatLease(backend, timing, held, sentAt);
        }
        if (held === undefined) lastSeen = 'another writer took it first';
      } else if (holder !== undefined) {
        lastSeen = `held by "${holder.owner}" until ${new Date(holder.data.validUntil).toISOString()}`;
      }
      const waited = performance.now() - startedAt;
      if (waited >= waitMs && storageError !== undefined) {
        throw new LockUnavailableError(`lock could not be taken in ${Math.round(waited)} ms: ${lastSeen}`, {
          location: this.description,
          cause: storageError,
        });
      }
      if (waited >= waitMs) {
        throw new ConflictError(`lock is not free after ${Math.round(waited)} ms: ${lastSeen}`, {
          location: this.description,
          fix: 'another writer is working on this table: retry later, or wait longer (hoodie.write.lock.wait_time_ms)',
        });
      }
      await sleep(timerDelay(Math.min(this.pollMs, waitMs - waited)));
    }
  }

  /** Whether a lock file still excludes others: not released and not past validUntil plus the drift buffer. */
  isValid(data: HudiLockData): boolean {
    return !data.expired && this.clock() <= data.validUntil + CLOCK_DRIFT_BUFFER_MS;
  }

  now(): number {
    return this.clock();
  }
}

class HudiLockBackend implements LeaseBackend<HudiHolder, HudiHeld> {
  /** An If-Match renewal fails once anyone else wrote the file: a late renewal that lands still proves ownership. */
  readonly renewalIsCompareAndSet = true;
  readonly description: string;

  constructor(
    private readonly storage: CompareAndSetStorage,
    private readonly lock: HudiStorageLockProvider,
  ) {
    this.description = lock.description;
  }

  /** The lock file; `released` when it no longer excludes anyone (expired or dangling). */
  async readHolder(): Promise<HudiHolder | undefined> {
    const file = await this.readFile();
    return file === undefined ? undefined : this.holderOf(file);
  }

  readFile(): Promise<VersionedObject | undefined> {
    return this.storage.getVersioned(HUDI_LOCK_FILE);
  }

  holderOf(file: VersionedObject): HudiHolder {
    const data = parseLockData(file.bytes, this.description);
    return { file, data, owner: data.owner, version: file.etag, leaseMs: this.lock.validityMs, released: !this.lock.isValid(data) };
  }

  async claim(previous: HudiHolder | undefined): Promise<HudiHeld | undefined> {
    const validUntil = this.lock.now() + this.lock.validityMs;
    const condition: PutCondition = previous === undefined ? { ifAbsent: true } : { ifMatch: previous.file.etag };
    try {
      const etag = await this.storage.putConditional(HUDI_LOCK_FILE, this.body(false, validUntil), condition);
      return { etag, validUntil };
    } catch (error) {
      if (error instanceof PreconditionFailedError) return undefined;
      throw error;
    }
  }

  async renew(held: HudiHeld): Promise<HudiHeld> {
    const validUntil = this.lock.now() + this.lock.validityMs;
    try {
      return { etag: await this.storage.putConditional(HUDI_LOCK_FILE, this.body(false, validUntil), { ifMatch: held.etag }), validUntil };
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error;
      const now = await this.readHolder().catch(() => undefined);
      throw new LeaseLostError('another writer took it over', now?.owner);
    }
  }

  async isCurrent(held: HudiHeld): Promise<boolean> {
    const file = await this.storage.getVersioned(HUDI_LOCK_FILE);
    return file?.etag === held.etag;
  }

  /** Hudi's unlock: the same validUntil, marked expired, only over our own version. */
  async release(held: HudiHeld): Promise<void> {
    try {
      await this.storage.putConditional(HUDI_LOCK_FILE, this.body(true, held.validUntil), { ifMatch: held.etag });
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error;
    }
  }

  /** Jackson's compact JSON of StorageLockData, in its property order. */
  private body(expired: boolean, validUntil: number): string {
    const data: HudiLockData = { expired, validUntil, owner: this.lock.ownerName };
    return JSON.stringify(data);
  }
}

/** Hudi's reading: all three properties required and typed, others ignored; anything else is refused, as Hudi fails. */
export function parseLockData(bytes: Uint8Array, location: string): HudiLockData {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    value = undefined;
  }
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const { expired, validUntil, owner } = record;
  if (typeof expired !== 'boolean' || typeof validUntil !== 'number' || !Number.isSafeInteger(validUntil) || typeof owner !== 'string') {
    throw new HudiError('the lock file is not Hudi StorageLockData ({"expired", "validUntil", "owner"})', {
      location,
      fix: 'delete the lock file when no writer is running',
    });
  }
  return { expired, validUntil, owner };
}
