// One behavioural suite for both Storage implementations: LocalStorage on a temp dir and
// S3Storage against the S3 endpoint in the environment (moto, started by infra/with-local-stack.mjs).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  DeleteBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { AlreadyExistsError, HudiError, NotFoundError, PreconditionFailedError } from '../../lib/errors.js';
import { BoundedTasks, Slots, settleAll } from '../../lib/storage/concurrency.js';
import { countedStorage } from '../../lib/storage/counted.js';
import {
  deleteMany,
  describeS3Error,
  downloadRequests,
  LocalStorage,
  mapWithConcurrency,
  openStorage,
  parseS3Uri,
  S3Storage,
  type Storage,
  s3ClientFromEnv,
  uploadRequests,
  type VersionedDownload,
} from '../../lib/storage/index.js';
import { formatRequestCounts, RequestCounter, sumRequestCounts } from '../../lib/storage/request-counts.js';

const MiB = 1024 * 1024;
const HOW_TO_RUN =
  'run the tests with `npm test`, or `node infra/with-local-stack.mjs node --import tsx --test test/storage/storage.test.ts`, ' +
  'or set AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL_DYNAMODB to services you may create buckets and tables in';

interface Backend {
  storage: Storage & VersionedDownload;
  /** The number of parts S3 reports for a multipart object; undefined where there is no such thing. */
  partCountOf?: (path: string) => Promise<number | undefined>;
  cleanup: () => Promise<void>;
}

function requireS3Endpoint(): string {
  const endpoint = process.env.AWS_ENDPOINT_URL_S3;
  if (endpoint === undefined || endpoint.trim() === '') {
    throw new Error(`AWS_ENDPOINT_URL_S3 is not set, so the S3 storage tests have nothing to run against: ${HOW_TO_RUN}`);
  }
  return endpoint;
}

async function createBucket(client: S3Client, bucket: string): Promise<void> {
  const region = await client.config.region();
  await client.send(
    new CreateBucketCommand({
      Bucket: bucket,
      ...(region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } }),
    }),
  );
}

function uniqueBucketName(): string {
  return `hudi-storage-test-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

const backends: Array<{ name: string; open: () => Promise<Backend> }> = [
  {
    name: 'LocalStorage',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'hudi-storage-test-'));
      return {
        storage: new LocalStorage(join(dir, 'table')),
        cleanup: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'S3Storage',
    async open() {
      requireS3Endpoint();
      const client = s3ClientFromEnv();
      const bucket = uniqueBucketName();
      await createBucket(client, bucket);
      // 8 MiB parts and ranges (not the 64 MiB default) so that a 20 MB file exercises multipart and ranged transfers.
      const storage = new S3Storage(bucket, 'warehouse/table', { client, partSize: 8 * MiB, multipartThreshold: 16 * MiB, rangeSize: 8 * MiB });
      return {
        storage,
        async partCountOf(path) {
          const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: `warehouse/table/${path}` }));
          const match = /-(\d+)"?$/.exec(head.ETag ?? '');
          return match?.[1] === undefined ? 1 : Number(match[1]);
        },
        async cleanup() {
          const everything = new S3Storage(bucket, '', { client });
          const objects = await everything.listRecursive('');
          await everything.delete(objects.map((object) => object.path));
          await client.send(new DeleteBucketCommand({ Bucket: bucket }));
          client.destroy();
        },
      };
    },
  },
];

for (const backend of backends) {
  describe(backend.name, () => {
    let subject: Backend;
    let storage: Storage & VersionedDownload;
    let scratch: string;

    before(async () => {
      subject = await backend.open();
      storage = subject.storage;
      scratch = await mkdtemp(join(tmpdir(), 'hudi-storage-files-'));
    });
    after(async () => {
      await subject?.cleanup();
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    it('puts, gets, heads and reads ranges', async () => {
      await storage.put('basic/hello.txt', 'abcdefghij');
      assert.equal(new TextDecoder().decode(await storage.get('basic/hello.txt')), 'abcdefghij');
      await storage.put('basic/hello.txt', new TextEncoder().encode('0123456789'));
      assert.equal(new TextDecoder().decode(await storage.get('basic/hello.txt')), '0123456789', 'put replaces');

      const head = await storage.head('basic/hello.txt');
      assert.ok(head);
      assert.equal(head.path, 'basic/hello.txt');
      assert.equal(head.size, 10);
      assert.ok(Math.abs(head.modifiedMs - Date.now()) < 10 * 60_000, `modifiedMs ${head.modifiedMs} is recent`);
      assert.equal(await storage.head('basic/missing.txt'), undefined);

      assert.equal(new TextDecoder().decode(await storage.getRange('basic/hello.txt', 2, 5)), '234');
      assert.equal(new TextDecoder().decode(await storage.getRange('basic/hello.txt', 8, 20)), '89', 'a range past the end is cut');
      assert.equal((await storage.getRange('basic/hello.txt', 4, 4)).length, 0);
      assert.equal((await storage.getRange('basic/hello.txt', 10, 15)).length, 0, 'a range starting at the end is empty');
      assert.ok(storage.uriOf('basic/hello.txt').endsWith('/basic/hello.txt'));
      assert.ok(storage.uriOf('basic/hello.txt').startsWith(storage.uri));
    });

    it('putIfAbsent creates once, then throws AlreadyExistsError and keeps the first body', async () => {
      await storage.putIfAbsent('timeline/001.commit', 'first');
      await assert.rejects(storage.putIfAbsent('timeline/001.commit', 'second'), (error: unknown) => {
        assert.ok(error instanceof AlreadyExistsError, String(error));
        assert.ok(error.message.includes('001.commit'));
        return true;
      });
      assert.equal(new TextDecoder().decode(await storage.get('timeline/001.commit')), 'first');
    });

    it('putIfAbsent lets exactly one of several concurrent writers win', async () => {
      // moto checks If-None-Match and then stores, with no lock between the two: under load two concurrent writers
      // can both win there, a property of the emulator. So the writers race on MinIO (the MinIO phase runs this file)
      // and on AWS; on moto they take turns, which still holds every writer but the first to AlreadyExistsError.
      const race = process.env['HUDI_SERVERLESS_LOCAL_S3'] !== 'moto';
      const put = (writer: number) => storage.putIfAbsent('race/instant', `writer-${writer}`);
      const outcomes: PromiseSettledResult<void>[] = [];
      if (race) outcomes.push(...(await Promise.allSettled(Array.from({ length: 6 }, (_, writer) => put(writer)))));
      else for (let writer = 0; writer < 6; writer++) outcomes.push(...(await Promise.allSettled([put(writer)])));
      const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const losers = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      assert.equal(winners.length, 1);
      for (const loser of losers) assert.ok(loser.reason instanceof AlreadyExistsError, String(loser.reason));
      assert.match(new TextDecoder().decode(await storage.get('race/instant')), /^writer-\d$/);
    });

    it('putConditional creates only when absent and replaces only the version it names; getVersioned gives that version', async () => {
      assert.ok(storage.getVersioned && storage.putConditional, 'both backends offer compare-and-set');
      assert.equal(await storage.getVersioned('cas/lock.json'), undefined, 'no object, no version');
      const first = await storage.putConditional('cas/lock.json', 'one', { ifAbsent: true });
      await assert.rejects(storage.putConditional('cas/lock.json', 'two', { ifAbsent: true }), PreconditionFailedError);
      const read = await storage.getVersioned('cas/lock.json');
      assert.equal(read?.etag, first, 'the version read is the one written');
      assert.equal(new TextDecoder().decode(read?.bytes), 'one');
      const second = await storage.putConditional('cas/lock.json', 'two', { ifMatch: `"${first}"` });
      assert.notEqual(second, first);
      await assert.rejects(
        storage.putConditional('cas/lock.json', 'stale', { ifMatch: first }),
        PreconditionFailedError,
        'a replaced version no longer matches',
      );
      const last = await storage.getVersioned('cas/lock.json');
      assert.deepEqual([last?.etag, new TextDecoder().decode(last?.bytes)], [second, 'two']);
    });

    it('lists past 1,000 keys, recursively and one level deep, and deletes them all', async () => {
      const names = Array.from({ length: 1_100 }, (_, index) => `many/part-${String(index).padStart(5, '0')}.parquet`);
      await mapWithConcurrency(names, 16, (name) => storage.put(name, 'x'));
      await storage.put('many/nested/deeper.parquet', 'yy');

      const recursive = await storage.listRecursive('many');
      assert.equal(recursive.length, 1_101);
      assert.deepEqual(new Set(recursive.map((object) => object.path)), new Set([...names, 'many/nested/deeper.parquet']));

      const oneLevel = await storage.listDir('many');
      assert.equal(oneLevel.files.length, 1_100);
      assert.deepEqual(oneLevel.dirs, ['nested']);
      assert.ok(oneLevel.files.every((file) => file.size === 1 && file.path.startsWith('many/part-')));

      await storage.delete([...names, 'many/nested/deeper.parquet']);
      assert.deepEqual(await storage.listRecursive('many'), []);
    });

    it('listDir tells files from sub-folders, and an absent folder is empty', async () => {
      await storage.put('tree/.hoodie/hoodie.properties', 'hoodie.table.name=t');
      await storage.put('tree/.hoodie/20240101000000000.commit', '{}');
      await storage.put('tree/2024/01/01/a.parquet', 'aaa');
      await storage.put('tree/2024/01/02/b.parquet', 'bbbb');
      await storage.put('tree/top.txt', 't');

      const top = await storage.listDir('tree');
      assert.deepEqual(top.dirs.sort(), ['.hoodie', '2024']);
      assert.deepEqual(
        top.files.map((file) => file.path),
        ['tree/top.txt'],
      );

      const month = await storage.listDir('tree/2024/01/');
      assert.deepEqual(month.dirs.sort(), ['01', '02']);
      assert.deepEqual(month.files, []);

      const day = await storage.listDir('tree/2024/01/02');
      assert.deepEqual(
        day.files.map((file) => [file.path, file.size]),
        [['tree/2024/01/02/b.parquet', 4]],
      );

      const timeline = await storage.listDir('tree/.hoodie');
      assert.deepEqual(timeline.files.map((file) => file.path).sort(), ['tree/.hoodie/20240101000000000.commit', 'tree/.hoodie/hoodie.properties']);

      assert.deepEqual(await storage.listDir('tree/nothing-here'), { files: [], dirs: [] });
      assert.deepEqual(await storage.listRecursive('tree/nothing-here'), []);
      const rootListing = await storage.listDir('');
      assert.ok(rootListing.dirs.includes('tree'));
    });

    it('deletes some objects, ignoring missing ones', async () => {
      await storage.put('del/a', 'a');
      await storage.put('del/b', 'b');
      await storage.delete(['del/a', 'del/never-existed']);
      assert.equal(await storage.head('del/a'), undefined);
      assert.ok(await storage.head('del/b'));
      await storage.delete([]);
    });

    it('deleteMany deletes thousands of keys in batches, missing ones counted as gone', async () => {
      const names = Array.from({ length: 2_345 }, (_, index) => `bulk/${String(index % 7)}/f-${String(index).padStart(5, '0')}.parquet`);
      await mapWithConcurrency(names, 32, (name) => storage.put(name, 'x'));
      await storage.put('bulk/keep.parquet', 'k');
      const asked = [...names, 'bulk/never-existed.parquet'];
      const result = await deleteMany(storage, asked, { concurrency: 3 });
      assert.deepEqual(result.failed, []);
      assert.deepEqual([...result.deleted].sort(), [...asked].sort());
      assert.deepEqual(
        (await storage.listRecursive('bulk')).map((object) => object.path),
        ['bulk/keep.parquet'],
      );
      assert.deepEqual(await deleteMany(storage, []), { deleted: [], failed: [] });
      assert.ok(storage.deleteMany !== undefined, 'both adapters implement it natively');
    });

    it('uploads and downloads a 20 MB file byte for byte (multipart and ranged on S3)', async () => {
      const original = randomBytes(20 * MiB + 12_345);
      const source = join(scratch, 'big.bin');
      await writeFile(source, original);
      await storage.uploadFile('big/base-file.parquet', source);
      assert.equal((await storage.head('big/base-file.parquet'))?.size, original.length);
      if (subject.partCountOf) assert.equal(await subject.partCountOf('big/base-file.parquet'), 3, 'uploaded in 8 MiB parts');

      const target = join(scratch, 'downloaded', 'big.bin');
      await storage.downloadFile('big/base-file.parquet', target);
      const downloaded = await readFile(target);
      assert.equal(downloaded.length, original.length);
      assert.ok(downloaded.equals(original), 'downloaded bytes equal the uploaded ones');

      const middle = await storage.getRange('big/base-file.parquet', 8 * MiB - 10, 8 * MiB + 10);
      assert.ok(Buffer.from(middle).equals(original.subarray(8 * MiB - 10, 8 * MiB + 10)));
    });

    it('uploads and downloads small and empty files', async () => {
      const small = join(scratch, 'small.bin');
      await writeFile(small, 'small body');
      await storage.uploadFile('small/one.bin', small);
      if (subject.partCountOf) assert.equal(await subject.partCountOf('small/one.bin'), 1, 'one PUT');
      const smallCopy = join(scratch, 'small-copy.bin');
      await storage.downloadFile('small/one.bin', smallCopy);
      assert.equal(await readFile(smallCopy, 'utf8'), 'small body');

      await storage.put('small/empty.bin', new Uint8Array(0));
      const emptyCopy = join(scratch, 'empty-copy.bin');
      await storage.downloadFile('small/empty.bin', emptyCopy);
      assert.equal((await readFile(emptyCopy)).length, 0);
      assert.equal((await storage.get('small/empty.bin')).length, 0);
    });

    it('an upload that consumes its local file leaves the same bytes in the table (a local table takes the file by rename)', async () => {
      const kept = join(scratch, 'kept.bin');
      const consumed = join(scratch, 'consumed.bin');
      await writeFile(kept, 'kept body');
      await writeFile(consumed, 'consumed body');
      await storage.uploadFile('upload/kept.bin', kept);
      await storage.uploadFile('upload/consumed.bin', consumed, { consume: true });
      assert.equal(Buffer.from(await storage.get('upload/kept.bin')).toString(), 'kept body');
      assert.equal(Buffer.from(await storage.get('upload/consumed.bin')).toString(), 'consumed body');
      assert.equal(existsSync(kept), true, 'without consume the local file stays');
      if (storage.localPath !== undefined) assert.equal(existsSync(consumed), false, 'moved, not copied');
      await assert.rejects(storage.uploadFile('upload/none.bin', join(scratch, 'no-such-file'), { consume: true }), NotFoundError);
    });

    it('downloadFileIfMatch reads the version its ETag names, and nothing once the object changed or is gone', async () => {
      // S3's ETag of a single-part upload is the content's MD5; the local disk's by definition.
      const etagOf = (body: string): string => createHash('md5').update(body).digest('hex');
      await storage.put('versioned/a.jsonl', 'first\n');
      const copy = join(scratch, 'versioned.jsonl');
      assert.equal(await storage.downloadFileIfMatch('versioned/a.jsonl', `"${etagOf('first\n')}"`, copy), true, 'quoted, as an S3 event gives it');
      assert.equal(await readFile(copy, 'utf8'), 'first\n');
      await storage.put('versioned/a.jsonl', 'second\n');
      const stale = join(scratch, 'stale.jsonl');
      assert.equal(await storage.downloadFileIfMatch('versioned/a.jsonl', etagOf('first\n'), stale), false, 'overwritten since');
      assert.equal(await storage.downloadFileIfMatch('versioned/missing.jsonl', etagOf('first\n'), stale), false, 'gone');
      assert.deepEqual(
        readdirSync(scratch).filter((name) => name.includes('stale')),
        [],
        'no file, not even a temporary one',
      );
      assert.equal(await storage.downloadFileIfMatch('versioned/a.jsonl', `W/"${etagOf('second\n')}"`, copy), true);
      assert.equal(await readFile(copy, 'utf8'), 'second\n');
    });

    it('throws NotFoundError for a missing object, and leaves no partial download', async () => {
      for (const read of [
        () => storage.get('nope/missing.bin'),
        () => storage.getRange('nope/missing.bin', 0, 10),
        () => storage.downloadFile('nope/missing.bin', join(scratch, 'never.bin')),
      ]) {
        await assert.rejects(read(), (error: unknown) => {
          assert.ok(error instanceof NotFoundError, String(error));
          assert.ok(error.message.includes('nope/missing.bin'), error.message);
          return true;
        });
      }
      assert.equal(existsSync(join(scratch, 'never.bin')), false);
      await assert.rejects(storage.uploadFile('nope/x', join(scratch, 'no-such-local-file')), NotFoundError);
    });
  });
}

describe('S3Storage transfers and request counts', () => {
  let client: S3Client;
  let bucket: string;
  let scratch: string;

  before(async () => {
    requireS3Endpoint();
    client = s3ClientFromEnv();
    bucket = uniqueBucketName();
    await createBucket(client, bucket);
    scratch = await mkdtemp(join(tmpdir(), 'hudi-storage-transfers-'));
  });
  after(async () => {
    if (bucket !== undefined) {
      const everything = new S3Storage(bucket, '', { client });
      await everything.delete((await everything.listRecursive('')).map((object) => object.path));
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
    }
    client?.destroy();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const partsOf = async (key: string): Promise<number> => {
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    const match = /-(\d+)"?$/.exec(head.ETag ?? '');
    return match?.[1] === undefined ? 1 : Number(match[1]);
  };

  it('by default puts a 20 MB file in one request and downloads it in 16 MiB ranges, byte for byte', async () => {
    const storage = new S3Storage(bucket, 'defaults', { client });
    const original = randomBytes(20 * MiB + 7);
    const source = join(scratch, 'twenty.bin');
    await writeFile(source, original);
    await storage.uploadFile('f.parquet', source);
    assert.equal(await partsOf('defaults/f.parquet'), 1, 'below one 64 MiB part: a plain PUT');
    await storage.downloadFile('f.parquet', join(scratch, 'twenty-copy.bin'));
    assert.ok((await readFile(join(scratch, 'twenty-copy.bin'))).equals(original));
    assert.deepEqual(storage.requests.snapshot(), { put: 1, get: 2 });
    assert.deepEqual(
      sumRequestCounts([uploadRequests(original.length), downloadRequests(original.length)]),
      { put: 1, get: 2 },
      'the cost model counts the same',
    );
  });

  it('uploads in parts of the size asked, counting every part, and downloads the same bytes', async () => {
    const counter = new RequestCounter();
    const storage = countedStorage(new S3Storage(bucket, 'parts', { client, partSize: 5 * MiB, multipartThreshold: 5 * MiB, rangeSize: 6 * MiB }), counter);
    const original = randomBytes(12 * MiB + 1);
    const source = join(scratch, 'twelve.bin');
    await writeFile(source, original);
    await storage.uploadFile('g.parquet', source);
    assert.equal(await partsOf('parts/g.parquet'), 3);
    await storage.downloadFile('g.parquet', join(scratch, 'twelve-copy.bin'));
    assert.ok((await readFile(join(scratch, 'twelve-copy.bin'))).equals(original));
    assert.equal((await storage.head('g.parquet'))?.size, original.length);
    await storage.listDir('');
    const counts = counter.snapshot();
    assert.deepEqual(counts, { get: 3, head: 1, list: 1, multipartCreate: 1, multipartPart: 3, multipartComplete: 1 });
    const sizes = { partSize: 5 * MiB, multipartThreshold: 5 * MiB, rangeSize: 6 * MiB };
    assert.deepEqual(sumRequestCounts([uploadRequests(original.length, sizes), downloadRequests(original.length, sizes)]), {
      get: 3,
      multipartCreate: 1,
      multipartPart: 3,
      multipartComplete: 1,
    });
    assert.equal(formatRequestCounts(counts), '3 GET, 1 HEAD, 1 LIST, 1 multipart upload(s) of 3 part(s)');
    assert.deepEqual(sumRequestCounts([counts, { put: 2, get: 1 }]), { ...counts, get: 4, put: 2 });
  });

  it('a failed part aborts the multipart upload: no object, no upload left to bill', async () => {
    // The real server, with the second part's request failing before it is sent (a dropped connection, say).
    const failing = s3ClientFromEnv();
    failing.middlewareStack.add(
      (next, context) => async (args) => {
        const input = (args as { input?: { PartNumber?: number } }).input;
        if (context.commandName === 'UploadPartCommand' && input?.PartNumber === 2) throw new Error('connection reset while sending part 2');
        return next(args);
      },
      { step: 'initialize', name: 'failPartTwo' },
    );
    const counter = new RequestCounter();
    const storage = new S3Storage(bucket, 'aborted', { client: failing, partSize: 5 * MiB, multipartThreshold: 5 * MiB, counters: [counter] });
    const source = join(scratch, 'fifteen.bin');
    await writeFile(source, randomBytes(15 * MiB));
    await assert.rejects(storage.uploadFile('h.parquet', source), /part 2/);
    assert.equal(await storage.head('h.parquet'), undefined, 'no object');
    const pending = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'aborted/' }));
    assert.deepEqual(pending.Uploads ?? [], [], 'no multipart upload left behind');
    const counts = counter.snapshot();
    assert.equal(counts.multipartCreate, 1);
    assert.equal(counts.multipartAbort, 1);
    assert.equal(counts.multipartComplete, undefined);
    failing.destroy();
  });

  it('concurrent uploads through a storage and its views hold at most transferConcurrency bodies in memory at once; ranges download byte for byte', async () => {
    // The real server; a middleware counts the upload requests in flight (a part or a PUT holds its body until sent).
    const watched = s3ClientFromEnv();
    let inFlight = 0;
    let peak = 0;
    watched.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'UploadPartCommand' && context.commandName !== 'PutObjectCommand') return next(args);
        peak = Math.max(peak, ++inFlight);
        try {
          return await next(args);
        } finally {
          inFlight--;
        }
      },
      { step: 'initialize', name: 'countUploadsInFlight' },
    );
    const sizes = { client: watched, partSize: 5 * MiB, multipartThreshold: 5 * MiB, rangeSize: 5 * MiB, transferConcurrency: 3 };
    const storage = new S3Storage(bucket, 'bounded', sizes);
    const views = [storage, countedStorage(storage, new RequestCounter()), countedStorage(storage, new RequestCounter())];
    // Four files of four parts and two below a part, through three views: 18 bodies, 9 wanted at once unbounded.
    const files = await Promise.all(
      [21, 21, 21, 21, 2, 3].map(async (mb, index) => {
        const source = join(scratch, `bounded-${index}.bin`);
        const bytes = randomBytes(mb * MiB + index);
        await writeFile(source, bytes);
        return { path: `f${index}.bin`, source, bytes };
      }),
    );
    await Promise.all(files.map((file, index) => views[index % views.length]!.uploadFile(file.path, file.source)));
    assert.equal(peak, 3, 'every view shares the three bodies');
    for (const file of files) {
      const copy = join(scratch, `${file.path}.copy`);
      await storage.downloadFile(file.path, copy);
      assert.ok((await readFile(copy)).equals(file.bytes), file.path);
    }
    watched.destroy();
  });

  it('a view made withRequestCounter counts in both tallies; local storage sends none', async () => {
    const storage = new S3Storage(bucket, 'views', { client });
    const group = new RequestCounter();
    const view = countedStorage(storage, group);
    await view.put('a', 'x');
    await storage.put('b', 'y');
    assert.deepEqual(group.snapshot(), { put: 1 });
    assert.deepEqual(storage.requests.snapshot(), { put: 2 });
    const local = new LocalStorage(join(scratch, 'local'));
    assert.equal(countedStorage(local, group), local);
  });
});

describe('S3 request signing', () => {
  /** The x-amz-content-sha256 each command is signed with, captured as it would be sent (nothing is sent). */
  async function signedPayloadHashes(endpoint: string): Promise<Record<string, string | undefined>> {
    const client = s3ClientFromEnv({ AWS_ENDPOINT_URL_S3: endpoint, AWS_REGION: 'us-east-1' });
    client.config.credentials = async () => ({ accessKeyId: 'test', secretAccessKey: 'test' });
    const captured: Record<string, string | undefined> = {};
    client.middlewareStack.add(
      (_next, context) => async (args) => {
        const request = args.request as { headers: Record<string, string> };
        captured[context.commandName ?? '?'] = request.headers['x-amz-content-sha256'];
        throw new Error('captured, not sent');
      },
      { step: 'deserialize', name: 'captureSigned' },
    );
    const body = randomBytes(1024);
    for (const command of [
      new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: body }),
      new UploadPartCommand({ Bucket: 'b', Key: 'k', UploadId: 'u', PartNumber: 1, Body: body, ChecksumAlgorithm: 'CRC32' }),
      new GetObjectCommand({ Bucket: 'b', Key: 'k' }),
    ]) {
      await assert.rejects(client.send(command as PutObjectCommand), /captured, not sent/);
    }
    client.destroy();
    return captured;
  }

  it('upload bodies over HTTPS are signed as UNSIGNED-PAYLOAD (S3 checks their CRC32); over plain HTTP they stay signed by their SHA-256', async () => {
    const secure = await signedPayloadHashes('https://127.0.0.1:9');
    assert.equal(secure['PutObjectCommand'], 'UNSIGNED-PAYLOAD');
    assert.equal(secure['UploadPartCommand'], 'UNSIGNED-PAYLOAD');
    const emptyBodyHash = createHash('sha256').update('').digest('hex');
    assert.equal(secure['GetObjectCommand'], emptyBodyHash, 'a request without a body keeps its hash');
    const plain = await signedPayloadHashes('http://127.0.0.1:9');
    assert.match(plain['PutObjectCommand'] ?? '', /^[0-9a-f]{64}$/);
    assert.notEqual(plain['PutObjectCommand'], emptyBodyHash);
    assert.match(plain['UploadPartCommand'] ?? '', /^[0-9a-f]{64}$/);
  });
});

describe('S3Storage errors', () => {
  it('names the bucket when it does not exist', async () => {
    requireS3Endpoint();
    const missingBucket = `${uniqueBucketName()}-missing`;
    const storage = new S3Storage(missingBucket, 'table');
    for (const action of [() => storage.get('.hoodie/hoodie.properties'), () => storage.listDir('.hoodie'), () => storage.put('x', 'y')]) {
      await assert.rejects(action(), (error: unknown) => {
        assert.ok(error instanceof HudiError, String(error));
        assert.ok(!(error instanceof NotFoundError), 'a missing bucket is not a missing object');
        assert.ok(error.message.includes(missingBucket), error.message);
        assert.match(error.message, /create the bucket/);
        return true;
      });
    }
  });

  it('says which IAM permission is missing on AccessDenied', () => {
    const denied = new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'Access Denied' });
    const read = describeS3Error(denied, { bucket: 'b', key: 't/.hoodie/x.commit', action: 'read' });
    assert.match(read.message, /s3:\/\/b\/t\/\.hoodie\/x\.commit/);
    assert.match(read.message, /s3:GetObject on arn:aws:s3:::b\/t\/\.hoodie\/x\.commit/);
    const list = describeS3Error(denied, { bucket: 'b', key: 't/', action: 'list' });
    assert.match(list.message, /s3:ListBucket on arn:aws:s3:::b\b/);
    const write = describeS3Error(denied, { bucket: 'b', key: 'k', action: 'write' });
    assert.match(write.message, /s3:PutObject/);
  });
});

describe('openStorage', () => {
  it('opens S3 for s3:// and s3a://, local storage for anything else', () => {
    const s3 = openStorage('s3://my-bucket/warehouse/orders/');
    assert.ok(s3 instanceof S3Storage);
    assert.equal(s3.uri, 's3://my-bucket/warehouse/orders');
    assert.equal(s3.uriOf('.hoodie/hoodie.properties'), 's3://my-bucket/warehouse/orders/.hoodie/hoodie.properties');
    // s3a:// stays s3a:// in the URIs handed out: Hudi on Hadoop's S3A opens a clustering plan's file paths with the
    // base path's file system, which refuses s3:// ("Wrong FS").
    const s3a = openStorage('S3A://my-bucket/warehouse/orders');
    assert.equal(s3a.uri, 's3a://my-bucket/warehouse/orders');
    assert.equal(s3a.uriOf('dt=1/f.parquet'), 's3a://my-bucket/warehouse/orders/dt=1/f.parquet');
    assert.equal(openStorage('s3a://my-bucket').uri, 's3a://my-bucket');
    assert.deepEqual(parseS3Uri('s3a://b/p/q'), { scheme: 's3a', bucket: 'b', prefix: 'p/q' });
    assert.deepEqual(parseS3Uri('s3://b/'), { scheme: 's3', bucket: 'b', prefix: '' });

    const fromUrl = openStorage('file:///tmp/tables/orders');
    assert.ok(fromUrl instanceof LocalStorage);
    assert.equal(fromUrl.uri, '/tmp/tables/orders');
    const relative = openStorage('tables/orders');
    assert.equal(relative.uri, join(process.cwd(), 'tables/orders'));
    assert.throws(() => openStorage('s3:///no-bucket'), HudiError);
    assert.throws(() => openStorage('gs://bucket/table'), HudiError);
  });

  it('refuses local paths that climb out of the table', async () => {
    const storage = new LocalStorage(join(tmpdir(), 'hudi-never-created'));
    await assert.rejects(storage.get('../etc/passwd'), HudiError);
  });
});

describe("LocalStorage and Hadoop's checksum sidecars", () => {
  it('a file replaced or deleted takes its `.<name>.crc` with it, so a stale checksum cannot fail a Spark read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'crc-sidecar-'));
    try {
      const storage = new LocalStorage(dir);
      for (const name of ['hoodie.properties', 'a.parquet', 'b.parquet']) {
        await storage.put(`t/${name}`, 'as Spark wrote it');
        await writeFile(join(dir, 't', `.${name}.crc`), 'crc');
      }
      await storage.put('t/hoodie.properties', 'as we rewrote it');
      await storage.delete(['t/a.parquet']);
      await deleteMany(storage, ['t/b.parquet']);
      assert.deepEqual(readdirSync(join(dir, 't')).sort(), ['hoodie.properties']);
      assert.equal(await readFile(join(dir, 't', 'hoodie.properties'), 'utf8'), 'as we rewrote it');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('LocalStorage.deleteMany failures', () => {
  it('reports a path it could not delete with the reason, and deletes the rest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delete-many-'));
    try {
      const storage = new LocalStorage(dir);
      await storage.put('p/a.parquet', 'a');
      await storage.put('p/sub/b.parquet', 'b');
      // A folder is not a file: the store refuses it, the file beside it goes.
      const result = await deleteMany(storage, ['p/a.parquet', 'p/sub']);
      assert.deepEqual(result.deleted, ['p/a.parquet']);
      assert.equal(result.failed.length, 1);
      assert.equal(result.failed[0]!.path, 'p/sub');
      assert.match(result.failed[0]!.reason, /EISDIR|ERR_FS_EISDIR/);
      assert.ok(await storage.head('p/sub/b.parquet'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('deleteMany over a Storage without its own', () => {
  it('falls back to delete in batches, counting a refused batch as failed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delete-many-fallback-'));
    try {
      const local = new LocalStorage(dir);
      // A wrapper that has only the basic port (as some callers build): deleteMany is not there.
      const wrapper = Object.assign(Object.create(local) as Storage, { deleteMany: undefined });
      const names = Array.from({ length: 1_500 }, (_, i) => `w/f-${i}.parquet`);
      await mapWithConcurrency(names, 32, (name) => local.put(name, 'x'));
      const result = await deleteMany(wrapper, names);
      assert.deepEqual(result, { deleted: names, failed: [] });
      assert.deepEqual(await local.listRecursive('w'), []);
      const refused = await deleteMany(wrapper, ['../outside.parquet']);
      assert.deepEqual(refused.deleted, []);
      assert.match(refused.failed[0]!.reason, /outside the table/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('mapWithConcurrency', () => {
  it('keeps order and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapWithConcurrency([5, 1, 4, 2, 3, 0, 6], 3, async (delay, index) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, delay * 3));
      running--;
      return `${index}:${delay}`;
    });
    assert.deepEqual(results, ['0:5', '1:1', '2:4', '3:2', '4:3', '5:0', '6:6']);
    assert.equal(peak, 3);
    assert.deepEqual(await mapWithConcurrency([], 4, async () => 1), []);
  });

  it('stops starting work after the first failure and rethrows it', async () => {
    const started: number[] = [];
    await assert.rejects(
      mapWithConcurrency([0, 1, 2, 3, 4, 5, 6, 7], 2, async (item) => {
        started.push(item);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (item === 1) throw new Error('boom');
        return item;
      }),
      /boom/,
    );
    assert.ok(started.length <= 4, `started ${started.join(',')}`);
    await assert.rejects(
      mapWithConcurrency([1], 0, async () => 1),
      RangeError,
    );
  });
});

describe('settleAll and BoundedTasks', () => {
  const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('settleAll waits for every promise, then throws the first rejection in time', async () => {
    const finished: string[] = [];
    const slow = async (name: string, ms: number, fail = false) => {
      await delay(ms);
      finished.push(name);
      if (fail) throw new Error(`${name} failed`);
      return name;
    };
    await assert.rejects(settleAll([slow('a', 30), slow('b', 10, true), slow('c', 20, true)]), /^Error: b failed$/);
    assert.deepEqual(finished.sort(), ['a', 'b', 'c'], 'the slow call finished before the failure was reported');
    assert.deepEqual(await settleAll([slow('x', 1), slow('y', 0)]), ['x', 'y']);
  });

  it('BoundedTasks: a task that fails while the caller works on is held, not unhandled; no task starts after it', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const tasks = new BoundedTasks(2);
      let running = 0;
      let peak = 0;
      const started: number[] = [];
      const finished: number[] = [];
      const work = (n: number) => async () => {
        started.push(n);
        running++;
        peak = Math.max(peak, running);
        await delay(n === 1 ? 1 : 25);
        running--;
        finished.push(n);
        if (n === 1) throw new Error('upload 1 failed');
      };
      await tasks.run(work(0));
      await tasks.run(work(1));
      // The caller's own work between uploads (writing the next file): task 1 fails meanwhile.
      await delay(15);
      await assert.rejects(tasks.run(work(2)), /upload 1 failed/);
      assert.deepEqual(started, [0, 1], 'no task starts after a failure');
      assert.deepEqual(finished.sort(), [0, 1], 'the task in flight finished before the error was thrown');
      await assert.rejects(tasks.drain(), /upload 1 failed/);
      assert.equal(peak, 2);
      await delay(5);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('BoundedTasks keeps at most the limit in flight and drains cleanly', async () => {
    const tasks = new BoundedTasks(3);
    let running = 0;
    let peak = 0;
    for (let i = 0; i < 10; i++) {
      await tasks.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await delay(3);
        running--;
      });
    }
    await tasks.drain();
    assert.equal(running, 0);
    assert.equal(peak, 3);
    assert.throws(() => new BoundedTasks(0), RangeError);
  });

  it('Slots: at most the limit hold one, a slot passes to waiters in arrival order, and a failure frees its slot', async () => {
    const slots = new Slots(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: 7 }, (_, index) =>
        slots.use(async () => {
          order.push(index);
          running++;
          peak = Math.max(peak, running);
          await delay(2);
          running--;
          if (index === 1) throw new Error('task 1 failed');
          return index;
        }),
      ),
    );
    assert.equal(peak, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(results.filter((result) => result.status === 'rejected').length, 1);
    assert.equal(await slots.use(async () => 'free again'), 'free again', 'no slot was lost to the failure');
    assert.throws(() => new Slots(0), RangeError);
  });
});

describe('local stack', () => {
  it('DynamoDB endpoint from the environment answers ListTables', async () => {
    const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
    assert.ok(endpoint, `AWS_ENDPOINT_URL_DYNAMODB is not set: ${HOW_TO_RUN}`);
    const client = new DynamoDBClient({ endpoint, region: process.env.AWS_REGION ?? 'us-east-1' });
    try {
      const tables = await client.send(new ListTablesCommand({}));
      assert.ok(Array.isArray(tables.TableNames));
    } finally {
      client.destroy();
    }
  });
});
