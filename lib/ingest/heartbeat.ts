/**
 * One lease per ingest invocation that keeps all its object claims alive (a SharedHeartbeat): renewing a thousand
 * claims one by one costs a request each per period and grows with the batch. A claim's record names the heartbeat;
 * another delivery judges the claim by the heartbeat's renewals, and once this process has seen a heartbeat
 * unchanged for its whole lease, every claim naming it is free at once (a crashed batch's claims are taken over after
 * one wait, not one per object). The heartbeat's folder is `.hoodie/.ingest/holders/<uuid>/`; a dead one is deleted
 * by whoever finds it dead.
 */
import { randomUUID } from 'node:crypto';
import type { HeartbeatLease, ObservedHolder } from '../lock/lease.js';
import { type SharedHeartbeat, StorageLockProvider } from '../lock/storage-lock.js';
import { deleteFolder } from '../storage/delete-many.js';
import type { Storage } from '../storage/port.js';
import { prefixedStorage } from '../storage/prefixed.js';

/** Heartbeats live beside the claims, in the table's ingest folder. */
export const HEARTBEAT_FOLDER = '.hoodie/.ingest/holders';

export interface HeartbeatOptions {
  readonly leaseMs?: number;
  readonly pollMs?: number;
}

export class ClaimHeartbeat implements SharedHeartbeat {
  readonly path: string;
  private readonly table: Storage;
  private readonly lease: HeartbeatLease<unknown>;
  /** What this process saw of other heartbeats: a version and when it was first seen (monotonic ms). */
  private readonly seen = new Map<string, { version: string; since: number }>();
  private checking: Promise<void> | undefined;

  private constructor(table: Storage, path: string, lease: HeartbeatLease<unknown>) {
    this.table = table;
    this.path = path;
    this.lease = lease;
  }

  /** Take a fresh heartbeat (its folder is new, so nobody waits on it). */
  static async start(table: Storage, options: HeartbeatOptions = {}): Promise<ClaimHeartbeat> {
    const path = `${HEARTBEAT_FOLDER}/${randomUUID()}`;
    const lock = new StorageLockProvider(prefixedStorage(table, path), options);
    return new ClaimHeartbeat(table, path, await lock.acquire());
  }

  /** Concurrent checks share one look at the lease. */
  assertHeld(): Promise<void> {
    this.checking ??= this.lease.assertHeld().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  async holderAt(path: string): Promise<ObservedHolder | undefined> {
    const storage = prefixedStorage(this.table, path);
    const holder = await new StorageLockProvider(storage).holder();
    if (holder === undefined || holder.released) return holder;
    if (path === this.path) return holder;
    const now = performance.now();
    const seen = this.seen.get(path);
    if (seen === undefined || seen.version !== holder.version) {
      this.seen.set(path, { version: holder.version, since: now });
      return holder;
    }
    if (now - seen.since < holder.leaseMs) return holder;
    // Unchanged for a whole lease: its holder stopped. Deleting it frees every claim naming it, for everyone.
    await deleteFolder(storage, '').catch(() => undefined);
    return { ...holder, released: true };
  }

  /** Stop renewing without releasing, as a crashed invocation would. For tests and shutdown paths. */
  stopBeating(): void {
    this.lease.stopHeartbeat();
  }

  /** Release the heartbeat and remove its folder: claims still naming it are free. */
  async stop(): Promise<void> {
    await this.lease.release();
    await deleteFolder(this.table, this.path).catch(() => undefined);
  }
}
