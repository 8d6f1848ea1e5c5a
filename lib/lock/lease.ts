/**
 * The lease logic both lock providers share: acquire by watching the holder's record version, take over only a
 * record that stayed unchanged for a whole lease (the holder stopped renewing), renew by a heartbeat, release
 * conditionally. Durations are measured on each process's own monotonic clock, so writers need no clock sync.
 *
 * Safety argument: a taker claims only after seeing the same version for `leaseMs`, measured from when it first
 * saw it, which is after the holder began writing it. So the holder may trust its lease until
 * (start of its last successful renewal) + leaseMs; we keep a margin below that.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, errorMessage, HudiError } from '../errors.js';
import { LOCK_KEYS } from './keys.js';
import type { LockLease } from './port.js';

export { LOCK_KEYS, LOCK_PROPERTY } from './keys.js';

/** 20 s: a holder that dies (e.g. a Lambda timeout) blocks others this long. Keep it well below the Lambda timeout. */
export const DEFAULT_LEASE_MS = LOCK_KEYS.dynamoDbLeaseMs.default;
/** Hudi's hoodie.write.lock.wait_time_ms default. */
export const DEFAULT_WAIT_MS = LOCK_KEYS.waitMs.default;
/** Hudi's hoodie.write.lock.wait_time_ms_between_retry default, and the AWS lock client's refresh period. */
export const DEFAULT_POLL_MS = LOCK_KEYS.pollMs.default;
/** The holder distrusts the last 10% of its lease: covers clock-rate drift and scheduling delays. */
const HOLDER_SAFETY_FRACTION = 0.9;
/**
 * Renewals per lease. A renewal must land before the holder's trust runs out, whatever delayed it: a timer firing
 * late on a busy event loop or a starved CPU, a slow store. Renewing every quarter lease leaves it most of the
 * lease (the trust window less one interval) rather than half of it.
 */
const RENEWALS_PER_LEASE = 4;
/** Never poll faster than this, whatever the configuration. */
const MIN_POLL_MS = 10;
/**
 * Node's longest timer (2^31-1 ms): a longer one fires at once, with a warning. Leases, waits and polls may be longer
 * (Java longs, another writer's lease from its record), so each pause is capped here and simply taken again.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A pause for a timer: at least MIN_POLL_MS, at most MAX_TIMER_MS. */
export function timerDelay(ms: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(MIN_POLL_MS, Math.floor(ms)));
}

/** What an acquirer sees of the lock's current record. */
export interface ObservedHolder {
  readonly owner: string;
  /** Changes on every renewal: a version unchanged for `leaseMs` means the holder stopped renewing. */
  readonly version: string;
  /** The holder's own lease, as written in its record. */
  readonly leaseMs: number;
  /** The holder released it but left the record in place (the AWS lock client's `isReleased`). */
  readonly released: boolean;
}

/** Thrown by a backend's `renew` when someone else holds the lock now. */
export class LeaseLostError extends Error {
  readonly currentOwner: string | undefined;
  constructor(reason: string, currentOwner?: string) {
    super(reason);
    this.name = 'LeaseLostError';
    this.currentOwner = currentOwner;
  }
}

/** The storage-specific half of a lock provider. `Held` is what the holder needs to renew and release. */
export interface LeaseBackend<Holder extends ObservedHolder, Held> {
  readonly description: string;
  /** The lock's current record; undefined when there is none (the lock is free). */
  readHolder(): Promise<Holder | undefined>;
  /**
   * Take the lock: create the record when `previous` is undefined, else replace `previous` provided it is still
   * that version. Undefined when another writer changed it first.
   */
  claim(previous: Holder | undefined): Promise<Held | undefined>;
  /** Write a new version; throws LeaseLostError when someone else holds the lock, anything else is transient. */
  renew(held: Held): Promise<Held>;
  /** Whether `held` is still the lock's current record. */
  isCurrent(held: Held): Promise<boolean>;
  /** Remove (or mark released) the record, only while `held` is current. */
  release(held: Held): Promise<void>;
  /**
   * True when a renewal is an atomic compare-and-set against takeovers (DynamoDB): a late renewal that succeeds
   * still proves nobody took over. False for storage, where a renewal that lands after the lease expired is void.
   */
  readonly renewalIsCompareAndSet: boolean;
}

/** Claim as if the lock were free before reading it: one request saved where it usually is (a backend's claim is conditional). */
export interface ClaimFirst {
  readonly claimFirst?: boolean;
}

export interface LeaseTiming {
  readonly owner: string;
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly pollMs: number;
  /** Renew this often (Hudi's storage lock names its interval); default a quarter of the lease. */
  readonly renewEveryMs?: number;
}

/** `<function or host>:<pid>:<uuid>`: readable in messages and unique per provider, as the AWS lock client's. */
export function defaultOwnerName(): string {
  const where = process.env['AWS_LAMBDA_FUNCTION_NAME'] || hostname();
  return `${where}:${process.pid}:${randomUUID()}`;
}

/** A configured duration: a positive whole number of milliseconds, else a HudiError naming where it came from. */
export function requirePositiveMs(value: number, what: string, location: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new HudiError(`${what} must be a positive number of milliseconds, got ${value}`, { location });
  }
  return Math.floor(value);
}

const now = (): number => performance.now();

/**
 * Wait for the lock as the AWS DynamoDB lock client does: claim it when free; otherwise remember the holder's
 * version and claim it once that version stayed unchanged for the holder's lease. Gives up after `waitMs`, but
 * always watches the first holder for one whole lease, so a dead holder can be taken over in a single call.
 */
export async function acquireLease<Holder extends ObservedHolder, Held>(
  backend: LeaseBackend<Holder, Held>,
  timing: LeaseTiming,
  options: ClaimFirst = {},
): Promise<HeartbeatLease<Held>> {
  if (options.claimFirst === true) {
    const lease = await tryClaim(backend, undefined, timing);
    if (lease !== undefined) return lease;
  }
  const startedAt = now();
  let deadline = startedAt + timing.waitMs;
  let watched: { holder: Holder; since: number } | undefined;
  let deadlineExtended = false;

  for (;;) {
    const holder = await backend.readHolder();
    if (holder === undefined || holder.released) {
      const lease = await tryClaim(backend, holder, timing);
      if (lease !== undefined) return lease;
      continue; // someone else got it first: look again at once
    }

    if (watched === undefined || watched.holder.version !== holder.version) {
      watched = { holder, since: now() };
      if (!deadlineExtended) {
        deadlineExtended = true;
        deadline = Math.max(deadline, watched.since + holder.leaseMs);
      }
    } else if (now() - watched.since >= holder.leaseMs) {
      // Unchanged for a whole lease: the holder stopped renewing.
      const lease = await tryClaim(backend, holder, timing);
      if (lease !== undefined) return lease;
      watched = undefined;
      continue;
    }

    const current = now();
    if (current >= deadline) {
      throw new ConflictError(`lock is held by "${holder.owner}", who kept renewing it while this writer waited ${Math.round(current - startedAt)} ms`, {
        location: backend.description,
        fix:
          'another writer is working on this table: retry later, or wait longer (hoodie.write.lock.wait_time_ms); ' +
          `a holder that stops renewing loses the lock ${holder.leaseMs} ms after its last renewal`,
      });
    }
    const untilStale = watched.since + holder.leaseMs - current;
    await sleep(timerDelay(Math.min(timing.pollMs, untilStale, deadline - current)));
  }
}

/**
 * One look, no waiting: the lease when the lock is free (or released) and this claim wins it; undefined when anyone
 * holds it, even a holder that may have died (only watching it for a lease can tell, which acquireLease does).
 */
export async function tryAcquireLease<Holder extends ObservedHolder, Held>(
  backend: LeaseBackend<Holder, Held>,
  timing: LeaseTiming,
  options: ClaimFirst = {},
): Promise<HeartbeatLease<Held> | undefined> {
  if (options.claimFirst === true) {
    const lease = await tryClaim(backend, undefined, timing);
    if (lease !== undefined) return lease;
  }
  const holder = await backend.readHolder();
  if (holder !== undefined && !holder.released) return undefined;
  return tryClaim(backend, holder, timing);
}

async function tryClaim<Holder extends ObservedHolder, Held>(
  backend: LeaseBackend<Holder, Held>,
  previous: Holder | undefined,
  timing: LeaseTiming,
): Promise<HeartbeatLease<Held> | undefined> {
  const sentAt = now();
  const held = await backend.claim(previous);
  return held === undefined ? undefined : new HeartbeatLease(backend, timing, held, sentAt);
}

type LeaseState = { kind: 'held' } | { kind: 'lost'; reason: string; currentOwner: string | undefined } | { kind: 'released' };

/**
 * A held lock: renewed every leaseMs/4 by an unref'd timer (it never keeps the process alive, and keeps firing while
 * the caller awaits native work). Each renewal schedules the next from when it finished, sooner when the trust left
 * is short (a late or slow renewal) or the last one failed, so a delay is made up at once instead of waiting for a
 * fixed tick. Renewals, checks and the release run one at a time.
 */
export class HeartbeatLease<Held> implements LockLease {
  readonly owner: string;
  private readonly backend: LeaseBackend<ObservedHolder, Held>;
  private readonly leaseMs: number;
  private readonly renewEveryMs: number;
  private held: Held;
  /** Monotonic time after which this holder no longer trusts its lease. */
  private trustedUntil: number;
  private state: LeaseState = { kind: 'held' };
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastRenewalError: unknown;
  /** Serializes renewals, checks and the release. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(backend: LeaseBackend<ObservedHolder, Held>, timing: LeaseTiming, held: Held, claimSentAt: number) {
    this.backend = backend;
    this.owner = timing.owner;
    this.leaseMs = timing.leaseMs;
    this.renewEveryMs = timing.renewEveryMs ?? timing.leaseMs / RENEWALS_PER_LEASE;
    this.held = held;
    this.trustedUntil = claimSentAt + timing.leaseMs * HOLDER_SAFETY_FRACTION;
    this.scheduleBeat();
  }

  async assertHeld(): Promise<void> {
    await this.serialized(async () => {
      if (this.state.kind === 'held' && now() >= this.trustedUntil) {
        const why = this.lastRenewalError === undefined ? '' : ` (last renewal failed: ${errorMessage(this.lastRenewalError)})`;
        this.lose(`it was not renewed within its ${this.leaseMs} ms lease${why}`, undefined);
      }
      if (this.state.kind === 'held' && !(await this.backend.isCurrent(this.held))) {
        this.lose('another writer took it over', undefined);
      }
    });
    if (this.state.kind === 'held') return;
    if (this.state.kind === 'released') {
      throw new ConflictError(`lock held by "${this.owner}" was already released`, {
        location: this.backend.description,
        fix: 'acquire the lock again before changing the timeline',
      });
    }
    const holder = this.state.currentOwner === undefined ? '' : ` (now held by "${this.state.currentOwner}")`;
    throw new ConflictError(`lock held by "${this.owner}" was lost: ${this.state.reason}${holder}`, {
      location: this.backend.description,
      fix: 'another writer may have changed the table meanwhile: do not complete this instant; roll it back and retry the operation',
    });
  }

  async release(): Promise<void> {
    this.stopHeartbeat();
    await this.serialized(async () => {
      if (this.state.kind === 'released') return;
      this.state = { kind: 'released' };
      // Also after a loss: the backend's release is conditional, and a lease that merely ran out locally may
      // still be ours, which would otherwise block others for a lease. A failed release only delays others by
      // one lease; throwing here would hide the caller's own outcome.
      await this.backend.release(this.held).catch(() => undefined);
    });
  }

  /** The backend's record of this holding, as last claimed or renewed. */
  holding(): Held {
    return this.held;
  }

  /** Stop renewing without releasing, as a crashed holder would. For tests and for shutdown paths. */
  stopHeartbeat(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * The next renewal: an interval after the last one, but early enough that the next one after it still has an
   * interval before the trust runs out; half an interval after a failed one.
   */
  private scheduleBeat(): void {
    if (this.stopped || this.state.kind !== 'held') return;
    const interval = this.renewEveryMs;
    const due = this.lastRenewalError === undefined ? Math.min(interval, this.trustedUntil - now() - interval) : interval / 2;
    this.timer = setTimeout(() => this.beat(), timerDelay(due));
    this.timer.unref();
  }

  private beat(): void {
    this.timer = undefined;
    void this.serialized(() => this.renew()).finally(() => this.scheduleBeat());
  }

  private async renew(): Promise<void> {
    if (this.state.kind !== 'held') return;
    const sentAt = now();
    try {
      const renewed = await this.backend.renew(this.held);
      if (!this.backend.renewalIsCompareAndSet && now() > this.trustedUntil) {
        // Landed after the lease could have been taken over: it proves nothing.
        this.lose(`the renewal completed after the ${this.leaseMs} ms lease had run out`, undefined);
        return;
      }
      this.held = renewed;
      this.trustedUntil = sentAt + this.leaseMs * HOLDER_SAFETY_FRACTION;
      this.lastRenewalError = undefined;
    } catch (error) {
      if (error instanceof LeaseLostError) this.lose(error.message, error.currentOwner);
      else this.lastRenewalError = error; // transient: the next beat retries; trustedUntil bounds the risk
    }
  }

  private lose(reason: string, currentOwner: string | undefined): void {
    this.state = { kind: 'lost', reason, currentOwner };
    this.stopHeartbeat();
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
