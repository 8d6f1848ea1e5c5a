// The lock providers against real servers: DynamoDB Local and moto S3 (started by infra/with-local-stack.mjs),
// plus a local temp dir. One behavioural contract for every provider, then provider-specific checks.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { DeleteTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { ConflictError, HudiError, NotFoundError } from '../../lib/errors.js';
import {
  DYNAMODB_LOCK_PROVIDER,
  DynamoDbLockProvider,
  dynamoDbClientFromEnv,
  ensureLockTable,
  FILE_SYSTEM_LOCK_PROVIDER,
  type HeartbeatLease,
  IN_PROCESS_LOCK_PROVIDER,
  type LockProvider,
  lockProviderFor,
  STORAGE_LOCK_FOLDER,
  StorageLockProvider,
  withLock,
} from '../../lib/lock/index.js';
import { LocalStorage, S3Storage, type Storage, s3ClientFromEnv } from '../../lib/storage/index.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

/**
 * How late a timer fires here now, at worst over a few short sleeps: a busy event loop or a starved CPU (other test
 * processes, a CPU hog) delays a holder's renewals by about this much, whatever the lock does.
 */
async function timerLateness(): Promise<number> {
  let worst = 0;
  for (let i = 0; i < 10; i++) {
    const start = performance.now();
    await sleep(20);
    worst = Math.max(worst, performance.now() - start - 20);
  }
  return worst;
}

/**
 * The tests' lease: short keeps the suite fast, but a holder needs the CPU to renew within it (the heartbeat renews
 * every LEASE_MS / 4), so it grows with the machine's load per core and with the timer lateness measured at start
 * rather than racing the wall clock. LOCK_TEST_LEASE_MS sets it outright.
 */
const LEASE_MS =
  Number(process.env['LOCK_TEST_LEASE_MS']) ||
  Math.min(32_000, Math.max(4_000 * Math.max(1, Math.ceil(loadavg()[0]! / availableParallelism())), Math.ceil(40 * (await timerLateness()))));
/** The other waits grow with the lease: 1 on an idle machine. */
const LOAD_SCALE = LEASE_MS / 4_000;
const POLL_MS = 50;
const HOW_TO_RUN =
  'run `npm test`, or `npm exec -- node infra/with-local-stack.mjs node --import tsx --test test/lock/lock.test.ts`, ' +
  'or point AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL_DYNAMODB at services you may create buckets and tables in';

function requireEndpoint(variable: 'AWS_ENDPOINT_URL_S3' | 'AWS_ENDPOINT_URL_DYNAMODB'): void {
  if (!process.env[variable]?.trim()) throw new Error(`${variable} is not set, so the lock tests have no server to run against: ${HOW_TO_RUN}`);
}

type Lease = HeartbeatLease<unknown>;
/** A provider whose leases expose the test hook `stopHeartbeat()`. */
interface TestableLock extends LockProvider {
  acquire(options?: { waitMs?: number }): Promise<Lease>;
}

/** A backend makes independent writers ("owners") on one lock; each test gets its own lock (scope). */
interface Backend {
  name: string;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  writer(scope: string, owner: string): TestableLock;
  /** Where the counter of the concurrency test lives. */
  counterStorage(scope: string): Storage;
}

let bucketCreation: Promise<string> | undefined;
function sharedBucket(): Promise<string> {
  requireEndpoint('AWS_ENDPOINT_URL_S3');
  bucketCreation ??= (async () => {
    const name = `hudi-lock-test-${randomUUID().slice(0, 8)}`;
    await s3ClientFromEnv().send(new CreateBucketCommand({ Bucket: name }));
    return name;
  })();
  return bucketCreation;
}

const dynamoTable = `hudi-locks-test-${randomUUID().slice(0, 8)}`;
let dynamoClient: DynamoDBClient | undefined;
function dynamo(): DynamoDBClient {
  requireEndpoint('AWS_ENDPOINT_URL_DYNAMODB');
  dynamoClient ??= dynamoDbClientFromEnv();
  return dynamoClient;
}
let tableCreation: Promise<void> | undefined;
function lockTable(): Promise<void> {
  tableCreation ??= ensureLockTable(dynamo(), dynamoTable);
  return tableCreation;
}

after(async () => {
  if (tableCreation !== undefined)
    await dynamo()
      .send(new DeleteTableCommand({ TableName: dynamoTable }))
      .catch(() => undefined);
  dynamoClient?.destroy();
});

let localRoot = '';
let bucket = '';

const backends: Backend[] = [
  {
    name: 'DynamoDbLockProvider (DynamoDB Local)',
    async setUp() {
      await lockTable();
      bucket = await sharedBucket();
    },
    async tearDown() {},
    writer: (scope, owner) =>
      new DynamoDbLockProvider({ client: dynamo(), tableName: dynamoTable, partitionKey: scope, leaseMs: LEASE_MS, pollMs: POLL_MS, ownerName: owner }),
    counterStorage: (scope) => new S3Storage(bucket, `counters/${scope}`),
  },
  {
    name: 'StorageLockProvider (moto S3)',
    async setUp() {
      bucket = await sharedBucket();
    },
    async tearDown() {},
    writer: (scope, owner) => new StorageLockProvider(new S3Storage(bucket, `tables/${scope}`), { leaseMs: LEASE_MS, pollMs: POLL_MS, ownerName: owner }),
    counterStorage: (scope) => new S3Storage(bucket, `tables/${scope}`),
  },
  {
    name: 'StorageLockProvider (local dir)',
    async setUp() {
      localRoot = await mkdtemp(join(tmpdir(), 'hudi-lock-test-'));
    },
    async tearDown() {
      if (localRoot) await rm(localRoot, { recursive: true, force: true });
    },
    writer: (scope, owner) => new StorageLockProvider(new LocalStorage(join(localRoot, scope)), { leaseMs: LEASE_MS, pollMs: POLL_MS, ownerName: owner }),
    counterStorage: (scope) => new LocalStorage(join(localRoot, scope)),
  },
];

const scope = (): string => `t-${randomUUID().slice(0, 8)}`;

function isConflictNaming(owner: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof ConflictError, `expected a ConflictError, got ${String(error)}`);
    assert.match(error.message, new RegExp(`"${owner}"`), 'the message names the holder');
    return true;
  };
}

describe('lock providers', { concurrency: true }, () => {
  for (const backend of backends) {
    describe(backend.name, { concurrency: true }, () => {
      before(() => backend.setUp());
      after(() => backend.tearDown());

      it('excludes a second writer: it waits, and fails with a ConflictError naming the holder', async () => {
        const lock = scope();
        const first = await backend.writer(lock, 'writer-a').acquire();
        await assert.rejects(backend.writer(lock, 'writer-b').acquire({ waitMs: 100 }), isConflictNaming('writer-a'));
        await first.assertHeld();

        // Released while the second one waits: it gets in right after.
        const waiting = backend.writer(lock, 'writer-b').acquire({ waitMs: 10_000 * LOAD_SCALE });
        await sleep(300);
        const releasedAt = performance.now();
        await first.release();
        const second = await waiting;
        assert.ok(performance.now() - releasedAt < LEASE_MS, 'the waiter got in soon after the release');
        await second.assertHeld();
        await second.release();
      });

      it('release is idempotent and ends the lease', async () => {
        const lease = await backend.writer(scope(), 'writer-a').acquire();
        await lease.release();
        await lease.release();
        await assert.rejects(lease.assertHeld(), ConflictError);
      });

      it('takes over from a holder that died only once its lease ran out; the dead one learns it lost', async () => {
        const lock = scope();
        const dead = await backend.writer(lock, 'writer-dead').acquire();
        dead.stopHeartbeat(); // as if the Lambda was killed
        const start = performance.now();
        const successor = await backend.writer(lock, 'writer-next').acquire({ waitMs: 100 });
        const waited = performance.now() - start;
        assert.ok(waited >= LEASE_MS * 0.9, `took over after ${Math.round(waited)} ms, not before the lease of ${LEASE_MS} ms ran out`);
        assert.ok(waited < LEASE_MS * 3, `took over after ${Math.round(waited)} ms`);

        await assert.rejects(dead.assertHeld(), (error: unknown) => error instanceof ConflictError && /lost/.test(error.message));
        // The stale holder's release is conditional: the successor keeps the lock.
        await dead.release();
        await successor.assertHeld();
        await assert.rejects(backend.writer(lock, 'writer-third').acquire({ waitMs: 100 }), isConflictNaming('writer-next'));
        await successor.release();
      });

      it('never takes over a holder whose heartbeat keeps renewing, over several lease periods', async () => {
        const lock = scope();
        const holder = await backend.writer(lock, 'writer-alive').acquire();
        const start = performance.now();
        await assert.rejects(backend.writer(lock, 'writer-b').acquire({ waitMs: LEASE_MS * 3 }), isConflictNaming('writer-alive'));
        assert.ok(performance.now() - start >= LEASE_MS * 3 - POLL_MS, 'the waiter waited its whole waitMs');
        await holder.assertHeld();
        await holder.release();
      });

      it('lets exactly one of two simultaneous takers have a stale lock', async () => {
        const lock = scope();
        const dead = await backend.writer(lock, 'writer-dead').acquire();
        dead.stopHeartbeat();
        const outcomes = await Promise.allSettled([
          backend.writer(lock, 'taker-1').acquire({ waitMs: 100 }),
          backend.writer(lock, 'taker-2').acquire({ waitMs: 100 }),
        ]);
        const winners = outcomes.filter((o): o is PromiseFulfilledResult<Lease> => o.status === 'fulfilled').map((o) => o.value);
        const losers = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as unknown);
        assert.equal(winners.length, 1, 'one taker wins');
        assert.equal(losers.length, 1);
        assert.ok(losers[0] instanceof ConflictError, `the other gets a ConflictError, got ${String(losers[0])}`);
        assert.match(losers[0].message, new RegExp(`"${winners[0]!.owner}"`));
        await winners[0]!.release();
      });

      it('serializes many writers: a read-modify-write counter ends exact', async () => {
        const lock = scope();
        const counter = backend.counterStorage(lock);
        const writers = 5;
        const incrementsEach = 3;
        const read = async (): Promise<number> => {
          try {
            return Number(new TextDecoder().decode(await counter.get('counter.txt')));
          } catch (error) {
            if (error instanceof NotFoundError) return 0;
            throw error;
          }
        };
        await Promise.all(
          Array.from({ length: writers }, async (_, index) => {
            const provider = backend.writer(lock, `writer-${index}`);
            for (let i = 0; i < incrementsEach; i++) {
              await withLock(
                provider,
                async (lease) => {
                  const value = await read();
                  await sleep(5); // widen the race window a lock must close
                  await lease.assertHeld();
                  await counter.put('counter.txt', String(value + 1));
                },
                { waitMs: 20_000 * LOAD_SCALE },
              );
            }
          }),
        );
        assert.equal(await read(), writers * incrementsEach);
      });
    });
  }
});

describe('DynamoDbLockProvider item format (DynamoDB Local)', { concurrency: true }, () => {
  before(() => lockTable());

  const getItem = async (key: string) =>
    (await dynamo().send(new GetItemCommand({ TableName: dynamoTable, Key: { key: { S: key } }, ConsistentRead: true }))).Item;

  it('writes the AWS lock client attributes, renews the record version, deletes the item on release', async () => {
    const key = scope();
    const provider = new DynamoDbLockProvider({ client: dynamo(), tableName: dynamoTable, partitionKey: key, leaseMs: LEASE_MS, ownerName: 'writer-a' });
    const lease = await provider.acquire();
    const item = await getItem(key);
    assert.ok(item);
    assert.equal(item['key']?.S, key);
    assert.equal(item['ownerName']?.S, 'writer-a');
    assert.equal(item['leaseDuration']?.S, String(LEASE_MS), 'leaseDuration is a string of milliseconds, as the lock client writes it');
    const firstVersion = item['recordVersionNumber']?.S;
    assert.match(firstVersion ?? '', /^[0-9a-f-]{36}$/);
    const expireAt = Number(item['expireAt']?.N);
    assert.ok(expireAt > Date.now() / 1000 + LEASE_MS / 1000, 'the TTL lies beyond the lease');

    await sleep(LEASE_MS / 2);
    const renewed = await getItem(key);
    assert.notEqual(renewed?.['recordVersionNumber']?.S, firstVersion, 'the heartbeat wrote a new record version');
    assert.equal(renewed?.['ownerName']?.S, 'writer-a');

    await lease.release();
    assert.equal(await getItem(key), undefined, 'release deletes the item');
  });

  it('takes over an item left by a crashed writer (no heartbeat) after its own leaseDuration', async () => {
    const key = scope();
    const crashedLeaseMs = 800;
    await dynamo().send(
      new PutItemCommand({
        TableName: dynamoTable,
        Item: {
          key: { S: key },
          ownerName: { S: 'java-writer-on-emr' },
          recordVersionNumber: { S: randomUUID() },
          leaseDuration: { S: String(crashedLeaseMs) },
        },
      }),
    );
    const provider = new DynamoDbLockProvider({
      client: dynamo(),
      tableName: dynamoTable,
      partitionKey: key,
      leaseMs: LEASE_MS,
      pollMs: POLL_MS,
      ownerName: 'writer-b',
    });
    const start = performance.now();
    const lease = await provider.acquire({ waitMs: 100 });
    assert.ok(performance.now() - start >= crashedLeaseMs * 0.9, 'waited out the lease written in the item');
    assert.equal((await getItem(key))?.['ownerName']?.S, 'writer-b');
    await lease.release();
  });

  it('claims an item the lock client marked isReleased at once', async () => {
    const key = scope();
    await dynamo().send(
      new PutItemCommand({
        TableName: dynamoTable,
        Item: {
          key: { S: key },
          ownerName: { S: 'java-writer' },
          recordVersionNumber: { S: randomUUID() },
          leaseDuration: { S: '60000' },
          isReleased: { BOOL: true },
        },
      }),
    );
    const provider = new DynamoDbLockProvider({ client: dynamo(), tableName: dynamoTable, partitionKey: key, leaseMs: LEASE_MS, ownerName: 'writer-b' });
    const start = performance.now();
    const lease = await provider.acquire({ waitMs: 100 });
    assert.ok(performance.now() - start < 1_000);
    await lease.release();
  });

  it('names a missing lock table and how to fix it', async () => {
    const provider = new DynamoDbLockProvider({ client: dynamo(), tableName: `missing-${scope()}`, partitionKey: 'orders', leaseMs: LEASE_MS });
    await assert.rejects(provider.acquire({ waitMs: 100 }), (error: unknown) => {
      assert.ok(error instanceof HudiError);
      assert.match(error.message, /does not exist/);
      assert.match(error.message, /dynamodb:\/\/missing-/);
      return true;
    });
  });
});

describe('StorageLockProvider layout', () => {
  it('keeps its lock in one folder under .hoodie/ that the timeline ignores, one generation per holder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hudi-lock-layout-'));
    try {
      const storage = new LocalStorage(dir);
      const first = await new StorageLockProvider(storage, { leaseMs: LEASE_MS, ownerName: 'writer-a' }).acquire();
      await first.release();
      const second = await new StorageLockProvider(storage, { leaseMs: LEASE_MS, ownerName: 'writer-b' }).acquire();
      assert.deepEqual(await readdir(join(dir, '.hoodie')), [STORAGE_LOCK_FOLDER.split('/')[1]]);
      assert.deepEqual(await readdir(join(dir, STORAGE_LOCK_FOLDER)), ['lease-000000000002.json'], 'older generations are cleaned up');
      const record = JSON.parse(new TextDecoder().decode(await storage.get(`${STORAGE_LOCK_FOLDER}/lease-000000000002.json`))) as Record<string, unknown>;
      assert.equal(record['owner'], 'writer-b');
      assert.equal(record['released'], false);
      await second.release();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('does not keep the process alive: a holder that never releases still exits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hudi-lock-exit-'));
    try {
      const script = join(dir, 'hold.mts');
      const storageModule = join(REPO_ROOT, 'lib/storage/local.ts');
      const lockModule = join(REPO_ROOT, 'lib/lock/storage-lock.ts');
      await writeFile(
        script,
        `import { LocalStorage } from ${JSON.stringify(storageModule)};\n` +
          `import { StorageLockProvider } from ${JSON.stringify(lockModule)};\n` +
          `await new StorageLockProvider(new LocalStorage(${JSON.stringify(join(dir, 'table'))}), { leaseMs: 600 }).acquire();\n` +
          `console.log('acquired');\n`,
      );
      // execFile's timeout kills a child that hangs: the unref'd heartbeat must let it end once its work is done.
      const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, timeout: 20_000 * LOAD_SCALE });
      assert.match(run.stdout, /acquired/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('lockProviderFor', () => {
  const storage = new LocalStorage(join(tmpdir(), 'hudi-lock-provider-for'));
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' });

  it('maps DynamoDBBasedLockProvider to the DynamoDB lock, partition key defaulting to the table name', () => {
    const provider = lockProviderFor(
      new Map([
        ['hoodie.write.lock.provider', DYNAMODB_LOCK_PROVIDER],
        ['hoodie.write.lock.dynamodb.table', 'hudi-locks'],
        ['hoodie.write.lock.dynamodb.region', 'eu-west-1'],
      ]),
      'orders',
      storage,
      { dynamoDbClient: client },
    );
    assert.ok(provider instanceof DynamoDbLockProvider);
    assert.equal(provider.tableName, 'hudi-locks');
    assert.equal(provider.partitionKey, 'orders');
    assert.equal(provider.description, 'dynamodb://hudi-locks/orders');
    assert.equal(provider.leaseMs, 20_000);

    const explicit = lockProviderFor(
      new Map([
        ['hoodie.write.lock.provider', DYNAMODB_LOCK_PROVIDER],
        ['hoodie.write.lock.dynamodb.table', 'hudi-locks'],
        ['hoodie.write.lock.dynamodb.partition_key', 'orders-key'],
        ['hoodie.write.lock.dynamodb.lease_duration_ms', '15000'],
      ]),
      'orders',
      storage,
      { dynamoDbClient: client },
    );
    assert.ok(explicit instanceof DynamoDbLockProvider);
    assert.equal(explicit.partitionKey, 'orders-key');
    assert.equal(explicit.leaseMs, 15_000);
  });

  it('needs a DynamoDB table name', () => {
    assert.throws(
      () => lockProviderFor(new Map([['hoodie.write.lock.provider', DYNAMODB_LOCK_PROVIDER]]), 'orders', storage, { dynamoDbClient: client }),
      (error: unknown) => error instanceof HudiError && /hoodie\.write\.lock\.dynamodb\.table/.test(error.message),
    );
  });

  it('maps no provider, InProcessLockProvider and FileSystemBasedLockProvider to the storage lock', () => {
    for (const properties of [
      new Map<string, string>(),
      new Map([['hoodie.write.lock.provider', IN_PROCESS_LOCK_PROVIDER]]),
      new Map([['hoodie.write.lock.provider', FILE_SYSTEM_LOCK_PROVIDER]]),
    ]) {
      assert.ok(lockProviderFor(properties, 'orders', storage) instanceof StorageLockProvider);
    }
  });

  it('refuses other providers, naming the class and the supported ones', () => {
    const zookeeper = 'org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider';
    assert.throws(
      () => lockProviderFor(new Map([['hoodie.write.lock.provider', zookeeper]]), 'orders', storage),
      (error: unknown) =>
        error instanceof HudiError &&
        error.message.includes(zookeeper) &&
        error.message.includes(DYNAMODB_LOCK_PROVIDER) &&
        error.message.includes(IN_PROCESS_LOCK_PROVIDER),
    );
  });

  it('refuses a malformed wait time', () => {
    assert.throws(
      () => lockProviderFor(new Map([['hoodie.write.lock.wait_time_ms', 'soon']]), 'orders', storage),
      (error: unknown) => error instanceof HudiError && /hoodie\.write\.lock\.wait_time_ms="soon" is not a whole number/.test(error.message),
    );
  });
});
