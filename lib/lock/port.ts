/**
 * The lock port: one writer at a time on a table's timeline (Hudi's LockProvider).
 * Implementations: DynamoDB (Hudi-compatible DynamoDBBasedLockProvider) and a storage-based lock for local tables
 * and single writers.
 */
export interface LockLease {
  /** Who holds it (for messages and for Hudi's lock item). */
  readonly owner: string;
  /**
   * Throws when the lease was lost (expired and taken over): call before an irreversible step such as
   * writing the completed instant file.
   */
  assertHeld(): Promise<void>;
  /** Release; idempotent. Only releases if this owner still holds it (conditional). */
  release(): Promise<void>;
}

export interface LockProvider {
  /** A description for messages, e.g. `dynamodb://table/key`. */
  readonly description: string;
  /**
   * Acquire the lock, waiting up to `waitMs` (Hudi: hoodie.write.lock.wait_time_ms, default 60000)
   * for a holder to release or for its lease to expire; throws a ConflictError naming the holder when it cannot.
   * The lease is renewed by a heartbeat until released.
   */
  acquire(options?: { waitMs?: number }): Promise<LockLease>;
}

/** Run `work` holding the lock; always releases. */
export async function withLock<T>(provider: LockProvider, work: (lease: LockLease) => Promise<T>, options: { waitMs?: number } = {}): Promise<T> {
  const lease = await provider.acquire(options);
  try {
    return await work(lease);
  } finally {
    await lease.release();
  }
}
