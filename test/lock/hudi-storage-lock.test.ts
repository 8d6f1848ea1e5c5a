// Hudi's storage-based lock (StorageBasedLockProvider's protocol) against the local stack's S3: the lock file's path
// and JSON, conditional creation and replacement, expiry with Hudi's clock-drift buffer, heartbeat, release, takeover,
// and lockProviderFor's choice by hoodie.write.lock.provider.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, HudiError, LockUnavailableError, NotFoundError } from '../../lib/errors.js';
import {
  CLOCK_DRIFT_BUFFER_MS,
  HUDI_LOCK_FILE,
  type HudiLockData,
  HudiStorageLockProvider,
  lockProviderFor,
  STORAGE_BASED_LOCK_PROVIDER,
  withLock,
} from '../../lib/lock/index.js';
import { LocalStorage, S3Storage } from '../../lib/storage/index.js';
import { testBucket } from '../helpers/s3.js';

async function tableStorage(): Promise<S3Storage> {
  return new S3Storage(await testBucket(), `tables/t-${randomUUID().slice(0, 8)}`);
}

async function lockFile(storage: S3Storage): Promise<HudiLockData & { etag: string }> {
  const file = await storage.getVersioned(HUDI_LOCK_FILE);
  assert.ok(file, 'the lock file exists');
  return { ...(JSON.parse(Buffer.from(file.bytes).toString('utf8')) as HudiLockData), etag: file.etag };
}

/** Polls (without a deadline on the timer) until `check` holds, for at most `attempts` pauses. */
async function eventually(check: () => Promise<boolean>, attempts: number, what: string): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await sleep(100);
  }
  assert.fail(`never: ${what}`);
}

const VALIDITY_MS = 20_000;
const provider = (storage: S3Storage, owner: string, options: { clock?: () => number; renewIntervalMs?: number } = {}) =>
  new HudiStorageLockProvider(storage, { validityMs: VALIDITY_MS, renewIntervalMs: 2_000, pollMs: 50, ownerName: owner, ...options });

describe("Hudi's storage-based lock on S3", { concurrency: true }, () => {
  it('creates .hoodie/.locks/table_lock.json as Hudi writes it, keeps others out, releases as expired with the same validUntil', async () => {
    const storage = await tableStorage();
    const before = Date.now();
    const lease = await provider(storage, 'writer-a').acquire();
    const held = await lockFile(storage);
    const raw = Buffer.from((await storage.get(HUDI_LOCK_FILE)) as Uint8Array).toString('utf8');
    assert.match(raw, /^\{"expired":false,"validUntil":\d+,"owner":"writer-a"\}$/, "Jackson's compact JSON, its property order");
    assert.ok(held.validUntil >= before + VALIDITY_MS && held.validUntil <= Date.now() + VALIDITY_MS, 'valid for the validity from acquisition');

    await assert.rejects(provider(storage, 'writer-b').acquire({ waitMs: 200 }), (error: unknown) => {
      assert.ok(error instanceof ConflictError, String(error));
      assert.match(error.message, /"writer-a"/, 'names the holder');
      return true;
    });
    await lease.assertHeld();
    await lease.release();
    const released = await lockFile(storage);
    assert.deepEqual([released.expired, released.validUntil, released.owner], [true, held.validUntil, 'writer-a']);
    await assert.rejects(lease.assertHeld(), ConflictError);

    // Released: the next writer replaces that version (If-Match), without waiting for validUntil.
    const next = await provider(storage, 'writer-b').acquire({ waitMs: 200 });
    const taken = await lockFile(storage);
    assert.deepEqual([taken.expired, taken.owner], [false, 'writer-b']);
    assert.notEqual(taken.etag, released.etag);
    await next.release();
  });

  it('takes over a lock past validUntil only beyond the clock-drift buffer, as Hudi judges a dangling lock', async () => {
    const storage = await tableStorage();
    const now = Date.now();
    const dead = (validUntil: number) => JSON.stringify({ expired: false, validUntil, owner: 'hudi-writer-uuid', extra: 'ignored' });
    await storage.put(HUDI_LOCK_FILE, dead(now - CLOCK_DRIFT_BUFFER_MS + 100));
    await assert.rejects(provider(storage, 'ours', { clock: () => now }).acquire({ waitMs: 1 }), ConflictError, 'within the buffer it still counts');
    assert.equal((await lockFile(storage)).owner, 'hudi-writer-uuid', 'untouched');

    await storage.put(HUDI_LOCK_FILE, dead(now - CLOCK_DRIFT_BUFFER_MS - 1));
    const lease = await provider(storage, 'ours', { clock: () => now }).acquire({ waitMs: 1 });
    const taken = await lockFile(storage);
    assert.deepEqual([taken.expired, taken.validUntil, taken.owner], [false, now + VALIDITY_MS, 'ours']);
    await lease.release();
  });

  it('renews validUntil on each heartbeat; a holder whose file another writer replaced learns it lost, and its release leaves that file', async () => {
    const storage = await tableStorage();
    const lease = await provider(storage, 'holder', { renewIntervalMs: 200 }).acquire();
    const first = await lockFile(storage);
    await eventually(async () => (await lockFile(storage)).validUntil > first.validUntil, 300, 'the heartbeat renewed the lock');
    const renewed = await lockFile(storage);
    assert.deepEqual([renewed.expired, renewed.owner], [false, 'holder']);
    assert.notEqual(renewed.etag, first.etag);
    await lease.assertHeld();

    // A writer that judges it dangling (its clock far ahead) replaces it; a renewal landing between its read and its
    // write makes it try again.
    const thief = await provider(storage, 'thief', { clock: () => Date.now() + 10 * VALIDITY_MS }).acquire({ waitMs: 60_000 });
    await assert.rejects(lease.assertHeld(), (error: unknown) => error instanceof ConflictError && /lost/.test(error.message));
    await lease.release();
    const after = await lockFile(storage);
    assert.deepEqual([after.expired, after.owner], [false, 'thief'], "the loser's conditional release changed nothing");
    await thief.release();
  });

  it('refuses a lock file that is not Hudi StorageLockData, as Hudi fails to parse it', async () => {
    const storage = await tableStorage();
    await storage.put(HUDI_LOCK_FILE, JSON.stringify({ expired: false, owner: 'someone' }));
    await assert.rejects(
      provider(storage, 'ours').acquire({ waitMs: 1 }),
      (error: unknown) => error instanceof HudiError && !(error instanceof ConflictError) && /StorageLockData/.test(error.message),
    );
  });

  it('retries a lock file it cannot reach until the wait is over, then says the lock is unavailable (not held)', async () => {
    const missingBucket = new S3Storage(`hudi-no-such-bucket-${randomUUID().slice(0, 8)}`, 'table');
    await assert.rejects(provider(missingBucket, 'ours').acquire({ waitMs: 300 }), (error: unknown) => {
      assert.ok(error instanceof LockUnavailableError, String(error));
      assert.match(error.message, /could not be read/);
      return true;
    });
  });

  it('serializes many writers: a read-modify-write counter ends exact', async () => {
    const storage = await tableStorage();
    const writers = 4;
    const incrementsEach = 3;
    const read = async (): Promise<number> => {
      try {
        return Number(Buffer.from(await storage.get('counter.txt')).toString('utf8'));
      } catch (error) {
        if (error instanceof NotFoundError) return 0;
        throw error;
      }
    };
    await Promise.all(
      Array.from({ length: writers }, async (_, index) => {
        const lock = provider(storage, `writer-${index}`);
        for (let i = 0; i < incrementsEach; i++) {
          await withLock(
            lock,
            async (lease) => {
              const value = await read();
              await sleep(5); // widen the race window a lock must close
              await lease.assertHeld();
              await storage.put('counter.txt', String(value + 1));
            },
            { waitMs: 120_000 },
          );
        }
      }),
    );
    assert.equal(await read(), writers * incrementsEach);
  });
});

describe('lockProviderFor with StorageBasedLockProvider', () => {
  it("maps Hudi's class to the Hudi storage lock, reading Hudi's validity and renew keys (and the renew key's older name)", async () => {
    const storage = await tableStorage();
    const lock = lockProviderFor(
      new Map([
        ['hoodie.write.lock.provider', STORAGE_BASED_LOCK_PROVIDER],
        ['hoodie.write.lock.storage.validity.timeout.secs', '60'],
        ['hoodie.write.lock.storage.heartbeat.poll.secs', '5'],
      ]),
      'orders',
      storage,
    );
    assert.ok(lock instanceof HudiStorageLockProvider);
    assert.deepEqual([lock.validityMs, lock.renewIntervalMs], [60_000, 5_000]);
    assert.equal(lock.description, storage.uriOf('.hoodie/.locks/table_lock.json'));
    const defaults = lockProviderFor(new Map([['hoodie.write.lock.provider', STORAGE_BASED_LOCK_PROVIDER]]), 'orders', storage);
    assert.ok(defaults instanceof HudiStorageLockProvider);
    assert.deepEqual([defaults.validityMs, defaults.renewIntervalMs], [300_000, 30_000], "Hudi's defaults");
  });

  it('refuses what Hudi refuses: a validity under 10 renew intervals or 10 s, and a table not on S3', async () => {
    const storage = await tableStorage();
    const withKeys = (entries: [string, string][]) => new Map([['hoodie.write.lock.provider', STORAGE_BASED_LOCK_PROVIDER], ...entries]);
    assert.throws(
      () => lockProviderFor(withKeys([['hoodie.write.lock.storage.validity.timeout.secs', '100']]), 'orders', storage),
      (error: unknown) => error instanceof HudiError && /10 renew intervals/.test(error.message),
    );
    assert.throws(
      () => lockProviderFor(withKeys([['hoodie.write.lock.storage.validity.timeout.secs', '9']]), 'orders', storage),
      (error: unknown) => error instanceof HudiError && /validity\.timeout\.secs/.test(error.message),
    );
    const local = new LocalStorage(join(tmpdir(), 'hudi-storage-lock-local'));
    assert.throws(
      () => lockProviderFor(withKeys([]), 'orders', local),
      (error: unknown) => error instanceof HudiError && error.message.includes(STORAGE_BASED_LOCK_PROVIDER) && /no lock client/.test(error.message),
    );
  });
});
