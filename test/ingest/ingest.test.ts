/**
 * S3 → Lambda ingestion (functions/ingest.ts over lib/serverless/steps/ingest/ingest.ts and lib/ingest/) on the local stack:
 * real S3 (moto), real events' shapes, the bundled handler when it is up to date (`npm test` builds first), else the
 * TypeScript source.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Context, S3ObjectCreatedNotificationEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ConflictError, MetadataTableError } from '../../lib/errors.js';
import { INGEST_FOLDER, ingestId, ingestObject, ingestSource, normalizeEtag, s3LandingBucket } from '../../lib/ingest/index.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import type { IngestSummary, ObjectSummary } from '../../lib/serverless/steps/ingest/ingest.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import { bucketIdOf } from '../../lib/table/bucket-index.js';
import { bucketNumberOf, UnsupportedLayoutError } from '../../lib/table/layouts.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, readCommitMetadata } from '../../lib/timeline/timeline.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { LOAD_SCALE } from '../helpers/load.js';
import { s3PutEvent, s3TablePath, testBucket } from '../helpers/s3.js';

type HandlerModule = typeof import('../../functions/ingest.js');

const root = REPO_ROOT;
const PROPS = {
  'hoodie.table.name': 'landed_users',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.index.bloom.num_entries': 1000,
};

/** The bundle when it is newer than every source it is built from; else the source (a stale bundle would mislead). */
async function loadHandler(): Promise<{ module: HandlerModule; from: string }> {
  const bundle = join(root, 'dist/functions/ingest.mjs');
  const sources = [
    join(root, 'functions/ingest.ts'),
    ...readdirSync(join(root, 'lib'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(root, 'lib', f)),
  ];
  const newestSource = Math.max(...sources.map((f) => statSync(f).mtimeMs));
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource) {
    return { module: (await import(pathToFileURL(bundle).href)) as HandlerModule, from: 'dist/functions/ingest.mjs' };
  }
  return { module: await import('../../functions/ingest.js'), from: 'functions/ingest.ts (the bundle is missing or older than the sources)' };
}

function lambdaContext(): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'hudi-ingest-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:hudi-ingest-test',
    memoryLimitInMB: '2048',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/hudi-ingest-test',
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 120_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

async function getText(client: S3Client, bucket: string, key: string): Promise<string> {
  const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return response.Body!.transformToString();
}

const jsonLines = (records: readonly unknown[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
const user = (id: number, name: string, ts = 1) => ({ id, name, dt: '2024-05-01', ts });

describe('ingest: S3 put events into a Hudi table', () => {
  let handlerModule: HandlerModule;
  let client: S3Client;
  let bucket: string;
  let tablePath: string;
  let run: string;

  const invoke = async (event: Parameters<HandlerModule['handler']>[0]) => handlerModule.handler(event, lambdaContext()) as Promise<IngestSummary>;
  const only = (summary: IngestSummary): ObjectSummary => {
    assert.equal(summary.results.length, 1, JSON.stringify(summary));
    return summary.results[0]!;
  };
  const put = async (key: string, body: string | Uint8Array) => {
    const response = await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    return { key, etag: response.ETag!, event: s3PutEvent(bucket, key, response.ETag!, typeof body === 'string' ? Buffer.byteLength(body) : body.length) };
  };
  const commits = async () => (await loadTimeline(openStorage(tablePath), TIMELINE_LAYOUT_1)).completedWrites().length;
  const rowsById = async () => {
    const { rows } = await readSnapshot(await HudiTable.open(openStorage(tablePath)));
    const byId = new Map(rows.map((r) => [Number(r['id']), r]));
    assert.equal(byId.size, rows.length, 'a record key appears twice in the table');
    return byId;
  };

  before(async () => {
    // Quiet logs and no EMF lines in the test output; set before the handler module creates them.
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'ERROR';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    const loaded = await loadHandler();
    handlerModule = loaded.module;
    console.log(`# handler from ${loaded.from}`);
    client = s3ClientFromEnv();
    bucket = await testBucket();
    tablePath = await s3TablePath('ingest');
    run = `landing-${randomUUID().slice(0, 8)}`;
    Object.assign(process.env, {
      TABLE_PATH: tablePath,
      TABLE_PROPERTIES: JSON.stringify(PROPS),
      INGEST_PREFIX: `${run}/in/`,
      ERROR_PREFIX: `${run}/errors`,
    });
  });

  let first: Awaited<ReturnType<typeof put>>;

  it('ingests the good lines of a JSON-lines object and reports the bad ones with reasons', async () => {
    const body = [
      JSON.stringify(user(1, 'Alice')),
      JSON.stringify(user(2, 'Bob')),
      '{"id": 3, "name": "Carol", "dt": "2024-05-01"', // truncated
      JSON.stringify(user(4, 'Diana')),
      '',
      JSON.stringify({ name: 'no id', dt: '2024-05-01', ts: 1 }),
      JSON.stringify({ id: null, name: 'null id', dt: '2024-05-01', ts: 1 }),
      '[1, 2, 3]',
      JSON.stringify(user(5, 'Erik')),
      JSON.stringify({ ...user(6, 'Fatima'), dt: '2024-05-02' }),
    ].join('\n');
    first = await put(`${run}/in/batch 1.jsonl`, `${body}\n`);
    const result = only(await invoke(first.event));
    assert.equal(result.outcome, 'ingested');
    assert.equal(result.key, first.key, 'the event key is URL-decoded (+ is a space)');
    assert.equal(result.inserted, 5);
    assert.equal(result.badRecords, 4);
    assert.equal(result.errorsKey, `${run}/errors/${first.key}.errors.jsonl`);

    const rows = await rowsById();
    assert.deepEqual(
      [...rows.keys()].sort((a, b) => a - b),
      [1, 2, 4, 5, 6],
    );
    assert.equal(rows.get(6)?.['name'], 'Fatima');
    assert.equal(await commits(), 1);

    const errors = (await getText(client, bucket, result.errorsKey!))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; reason: string; record: string });
    assert.deepEqual(
      errors.map((e) => e.line),
      [3, 6, 7, 8],
    );
    assert.match(errors[0]!.reason, /not JSON/);
    assert.equal(errors[0]!.record, '{"id": 3, "name": "Carol", "dt": "2024-05-01"');
    assert.match(errors[1]!.reason, /record key field "id" is null or empty/);
    assert.match(errors[2]!.reason, /record key field "id" is null or empty/);
    assert.match(errors[3]!.reason, /not a JSON object \(an array\)/);
    assert.equal(errors[3]!.record, '[1, 2, 3]');

    const metadata = await readCommitMetadata(
      openStorage(tablePath),
      (await loadTimeline(openStorage(tablePath), TIMELINE_LAYOUT_1)).completedWrites()[0]!,
      TIMELINE_LAYOUT_1,
    );
    assert.equal(metadata.extraMetadata['hudi-serverless.ingest.source'], `${bucket}/${first.key}#${normalizeEtag(first.etag)}`);
  });

  it('does not apply a redelivered event again, nor duplicates delivered in parallel', async () => {
    const again = only(await invoke(first.event));
    assert.equal(again.outcome, 'duplicate');
    assert.equal(again.originalOutcome, 'ingested');
    assert.equal(again.inserted, 5, 'a duplicate reports what the first delivery did');

    const fresh = await put(`${run}/in/batch-2.jsonl`, jsonLines([user(7, 'Gao'), user(8, 'Hana')]));
    const parallel = await Promise.all([invoke(fresh.event), invoke(fresh.event), invoke(first.event)]);
    const outcomes = parallel
      .slice(0, 2)
      .map((s) => only(s).outcome)
      .sort();
    assert.deepEqual(outcomes, ['duplicate', 'ingested'], 'exactly one of the parallel deliveries writes');
    assert.equal(only(parallel[2]!).outcome, 'duplicate');
    assert.equal(await commits(), 2, 'one commit per object');
    assert.deepEqual(
      [...(await rowsById()).keys()].sort((a, b) => a - b),
      [1, 2, 4, 5, 6, 7, 8],
    );
  });

  it('applies a new version of the same key (new ETag), once', async () => {
    const v2 = await put(first.key, jsonLines([user(1, 'Alice v2', 2), user(9, 'Ivan')]));
    assert.notEqual(v2.etag, first.etag);
    const result = only(await invoke(v2.event));
    assert.equal(result.outcome, 'ingested');
    assert.equal(result.updated, 1);
    assert.equal(result.inserted, 1);
    assert.equal(result.badRecords, 0);
    assert.equal(only(await invoke(v2.event)).outcome, 'duplicate');
    assert.equal(only(await invoke(first.event)).outcome, 'duplicate', 'the old version stays done');
    const rows = await rowsById();
    assert.equal(rows.get(1)?.['name'], 'Alice v2');
    assert.ok(rows.has(9));
    assert.equal(await commits(), 3);
  });

  it('skips an event whose version was overwritten before it was processed (its successor has its own event)', async () => {
    const v3 = await put(first.key, jsonLines([user(1, 'Alice v3', 3)]));
    await put(first.key, jsonLines([user(1, 'Alice v4', 4)]));
    const result = only(await invoke(v3.event));
    assert.equal(result.outcome, 'superseded');
    assert.equal(await commits(), 3);
    assert.equal((await rowsById()).get(1)?.['name'], 'Alice v2');
  });

  it('events for objects that do not exist are superseded and leave nothing under the table (no idempotency record)', async () => {
    const ingestFiles = async () => (await openStorage(tablePath).listRecursive(INGEST_FOLDER)).map((file) => file.path).sort();
    const before = await ingestFiles();
    for (let i = 0; i < 5; i++) {
      const result = only(await invoke(s3PutEvent(bucket, `${run}/in/never-${i}.jsonl`, `"${randomUUID().replaceAll('-', '')}"`, 10)));
      assert.equal(result.outcome, 'superseded');
    }
    assert.deepEqual(await ingestFiles(), before);
    assert.equal(await commits(), 3);
  });

  it('ignores keys outside INGEST_PREFIX and under ERROR_PREFIX', async () => {
    const outside = await put(`${run}/elsewhere/other.jsonl`, jsonLines([user(50, 'Outside')]));
    const summary = await invoke(outside.event);
    assert.equal(summary.results.length, 0);
    assert.equal(summary.ignored.length, 1);
    assert.match(summary.ignored[0]!.reason, /not under the ingest prefix/);
    const errorsFile = await put(`${run}/errors/${first.key}.errors.jsonl`, '{}\n');
    assert.match((await invoke(errorsFile.event)).ignored[0]!.reason, /under the error prefix/);
    assert.equal(await commits(), 3);
    assert.ok(!(await rowsById()).has(50));
  });

  it('quarantines an unreadable object with the reason, without throwing, and only once', async () => {
    const garbage = randomBytes(4096);
    garbage[100] = 0x0a; // a few "lines" of binary
    const poison = await put(`${run}/in/garbage.jsonl`, garbage);
    const result = only(await invoke(poison.event));
    assert.equal(result.outcome, 'failed');
    assert.match(result.reason!, /not JSON lines/);
    assert.equal(result.errorsKey, `${run}/errors/${poison.key}.error.json`);
    const described = JSON.parse(await getText(client, bucket, result.errorsKey!)) as { reason: string; etag: string };
    assert.match(described.reason, /not JSON lines/);
    assert.equal(described.etag, normalizeEtag(poison.etag));
    const copy = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${run}/errors/${poison.key}` }));
    assert.deepEqual(Buffer.from(await copy.Body!.transformToByteArray()), garbage);

    const again = only(await invoke(poison.event));
    assert.equal(again.outcome, 'duplicate');
    assert.equal(again.originalOutcome, 'failed');
    assert.equal(await commits(), 3);
  });

  it('reads gzip-compressed JSON lines, and quarantines a .gz that is not gzip', async () => {
    const zipped = await put(`${run}/in/zipped.jsonl.gz`, gzipSync(jsonLines([user(20, 'Nia'), { name: 'no id' }])));
    const result = only(await invoke(zipped.event));
    assert.equal(result.outcome, 'ingested');
    assert.equal(result.inserted, 1);
    assert.equal(result.badRecords, 1);
    assert.ok((await rowsById()).has(20));
    const fake = await put(`${run}/in/fake.jsonl.gz`, jsonLines([user(21, 'Omar')]));
    const rejected = only(await invoke(fake.event));
    assert.equal(rejected.outcome, 'failed');
    assert.match(rejected.reason!, /not gzip-compressed/);
    assert.ok(!(await rowsById()).has(21));
  });

  it('does not re-apply an object whose commit landed but whose done record did not (crash in between)', async () => {
    const crashed = await put(`${run}/in/batch-3.jsonl`, jsonLines([user(10, 'Jun'), user(11, 'Kofi')]));
    assert.equal(only(await invoke(crashed.event)).outcome, 'ingested');
    const committed = await commits();
    // Back to the state a crash after the commit leaves: no done record, the attempt marker still there.
    const table = openStorage(tablePath);
    const id = ingestId(ingestSource(bucket, crashed.key, crashed.etag));
    await table.delete([`${INGEST_FOLDER}/${id}.json`]);
    await table.put(`${INGEST_FOLDER}/${id}/attempt.json`, JSON.stringify({ firstAttemptAt: new Date(Date.now() - 60_000).toISOString(), attempts: 1 }));

    const retried = only(await invoke(crashed.event));
    assert.equal(retried.outcome, 'duplicate');
    assert.equal(retried.recovered, true);
    assert.equal(retried.inserted, 2);
    assert.equal(await commits(), committed, 'no second commit');
    assert.ok(await table.head(`${INGEST_FOLDER}/${id}.json`), 'the done record is written now');
    assert.equal(only(await invoke(crashed.event)).recovered, undefined, 'later deliveries find the done record');
  });

  it('accepts EventBridge and SQS-wrapped events', async () => {
    const viaBridge = await put(`${run}/in/bridge.jsonl`, jsonLines([user(12, 'Lena')]));
    const bridgeEvent: S3ObjectCreatedNotificationEvent = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Object Created',
      source: 'aws.s3',
      account: '123456789012',
      time: new Date().toISOString(),
      region: 'us-east-1',
      resources: [`arn:aws:s3:::${bucket}`],
      detail: {
        version: '0',
        bucket: { name: bucket },
        object: { key: viaBridge.key, size: 10, etag: normalizeEtag(viaBridge.etag), 'version-id': 'null', sequencer: '617f08299329d189' },
        'request-id': 'N4N7GDK58NMKJ12R',
        requester: '123456789012',
        'source-ip-address': '127.0.0.1',
        reason: 'PutObject',
      },
    };
    assert.equal(only(await invoke(bridgeEvent)).outcome, 'ingested');

    const viaQueue = await put(`${run}/in/queued.jsonl`, jsonLines([user(13, 'Mateo')]));
    const sqsEvent: SQSEvent = {
      Records: [
        { messageId: 'm-1', body: JSON.stringify(viaQueue.event), eventSource: 'aws:sqs' },
        { messageId: 'm-2', body: JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: bucket }), eventSource: 'aws:sqs' },
        { messageId: 'm-3', body: 'not an event', eventSource: 'aws:sqs' },
      ].map((r) => ({
        ...r,
        receiptHandle: 'handle',
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {},
        md5OfBody: '',
        eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:landing',
        awsRegion: 'us-east-1',
      })),
    };
    const response = (await handlerModule.handler(sqsEvent, lambdaContext())) as SQSBatchResponse;
    assert.deepEqual(response.batchItemFailures, [{ itemIdentifier: 'm-3' }], 'only the unreadable message fails');
    const rows = await rowsById();
    assert.ok(rows.has(12) && rows.has(13));
  });

  it('reports an SQS message whose object failed as a batch item failure, and a batch that failed whole without throwing', async () => {
    const sqsMessage = (messageId: string, body: string): SQSEvent['Records'][number] => ({
      messageId,
      body,
      eventSource: 'aws:sqs',
      receiptHandle: 'handle',
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {},
      md5OfBody: '',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:landing',
      awsRegion: 'us-east-1',
    });
    const fine = await put(`${run}/in/queued-fine.jsonl`, jsonLines([user(14, 'Noor')]));
    const held = await put(`${run}/in/queued-held.jsonl`, jsonLines([user(15, 'Otto')]));
    // Another delivery holds the held object's claim for the whole invocation: that object fails, for a retry.
    const claim = new StorageLockProvider(openStorage(`${tablePath}/${INGEST_FOLDER}/${ingestId(ingestSource(bucket, held.key, held.etag))}`));
    const lease = await claim.acquire();
    let response: SQSBatchResponse;
    try {
      // A short remaining time: the held object waits a second for the claim (claimWaitMs), not half a minute.
      const context = { ...lambdaContext(), getRemainingTimeInMillis: () => 4_000 };
      response = (await handlerModule.handler(
        {
          Records: [sqsMessage('m-held', JSON.stringify(held.event)), sqsMessage('m-fine', JSON.stringify(fine.event)), sqsMessage('m-bad', '{')],
        },
        context,
      )) as SQSBatchResponse;
    } finally {
      await lease.release();
    }
    assert.deepEqual(response.batchItemFailures, [{ itemIdentifier: 'm-held' }, { itemIdentifier: 'm-bad' }]);
    const rows = await rowsById();
    assert.ok(rows.has(14), "the other message's object is ingested");
    assert.ok(!rows.has(15), 'the held object is not');

    const whole = (await handlerModule.handler({ Records: [sqsMessage('m-a', 'not an event'), sqsMessage('m-b', '[]')] }, lambdaContext())) as SQSBatchResponse;
    assert.deepEqual(whole.batchItemFailures, [{ itemIdentifier: 'm-a' }, { itemIdentifier: 'm-b' }], 'every message reported; the invocation itself succeeds');
  });
});

describe('ingest: CSV', () => {
  it('writes the rows with a key and reports the others by row and line', async () => {
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'ERROR';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    const { module } = await loadHandler();
    const client = s3ClientFromEnv();
    const bucket = await testBucket();
    const run = `landing-${randomUUID().slice(0, 8)}`;
    const tablePath = await s3TablePath('ingest-csv');
    Object.assign(process.env, {
      TABLE_PATH: tablePath,
      TABLE_PROPERTIES: Object.entries(PROPS)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
      INGEST_PREFIX: `${run}/`,
      ERROR_PREFIX: `${run}-errors/`,
    });
    const key = `${run}/users.csv`;
    const body = 'id,name,dt,ts\n1,Alice,2024-05-01,1\n,"No, key",2024-05-01,1\n3,Carol,2024-05-02,1\n';
    const response = await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    const summary = (await module.handler(s3PutEvent(bucket, key, response.ETag!, body.length), lambdaContext())) as IngestSummary;
    const result = summary.results[0]!;
    assert.equal(result.outcome, 'ingested', JSON.stringify(summary));
    assert.equal(result.inserted, 2);
    assert.equal(result.badRecords, 1);
    const errors = (await getText(client, bucket, `${run}-errors/${key}.errors.jsonl`))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!['row'], 1);
    assert.equal(errors[0]!['line'], 3);
    assert.equal(errors[0]!['record'], ',"No, key",2024-05-01,1');
    assert.match(String(errors[0]!['reason']), /record key field "id" is null or empty/);
    const { rows } = await readSnapshot(await HudiTable.open(openStorage(tablePath)));
    assert.deepEqual(rows.map((r) => Number(r['id'])).sort(), [1, 3]);
  });
});

describe('ingest: claims (lib/ingest/idempotency.ts)', () => {
  const setUp = async () => {
    const client = s3ClientFromEnv();
    const bucket = await testBucket();
    const tablePath = await s3TablePath('ingest-claims');
    const key = `landing-${randomUUID().slice(0, 8)}/in/claimed.jsonl`;
    const response = await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: jsonLines([user(1, 'Alice'), user(2, 'Bob')]) }));
    const etag = response.ETag!;
    const id = ingestId(ingestSource(bucket, key, etag));
    // The claim's lock, exactly where ingestObject keeps it.
    const claimLock = new StorageLockProvider(openStorage(`${tablePath}/${INGEST_FOLDER}/${id}`), { leaseMs: 1_000 * LOAD_SCALE, pollMs: 100 });
    const request = {
      source: s3LandingBucket(bucket, client),
      key,
      etag,
      table: openStorage(tablePath),
      tableProperties: new Map(Object.entries(PROPS).map(([k, v]) => [k, String(v)])),
      errorPrefix: 'errors/',
    };
    return { tablePath, request, claimLock };
  };

  it('takes over the claim of a delivery that died, and writes once', async () => {
    const { tablePath, request, claimLock } = await setUp();
    const dead = await claimLock.acquire();
    dead.stopHeartbeat(); // crashed: never renews, never releases
    const started = Date.now();
    const result = await ingestObject({ ...request, claim: { waitMs: 10_000 * LOAD_SCALE, pollMs: 100 } });
    assert.equal(result.outcome, 'ingested');
    assert.ok(Date.now() - started >= 1_000 * LOAD_SCALE, 'waited for the dead lease to run out');
    assert.equal((await loadTimeline(openStorage(tablePath), TIMELINE_LAYOUT_1)).completedWrites().length, 1);
  });

  it('fails (for a retry) while another live delivery holds the claim', async () => {
    const { tablePath, request, claimLock } = await setUp();
    const live = await claimLock.acquire();
    try {
      await assert.rejects(
        ingestObject({ ...request, claim: { waitMs: 1_500, pollMs: 100 } }),
        (error: unknown) => error instanceof ConflictError && /another delivery of this object is still being ingested/.test(error.message),
      );
    } finally {
      await live.release();
    }
    assert.equal((await loadTimeline(openStorage(tablePath), TIMELINE_LAYOUT_1)).completedWrites().length, 0, 'nothing written');
    assert.equal((await ingestObject(request)).outcome, 'ingested', 'the retry, once the claim is free, writes');
  });
});

/** A new table on S3 and a builder of ingest requests for objects landed beside it. */
async function landedObjects(tableName: string) {
  const client = s3ClientFromEnv();
  const bucket = await testBucket();
  const tablePath = await s3TablePath(tableName);
  const landing = `landing-${randomUUID().slice(0, 8)}/in`;
  const request = async (name: string, records: readonly unknown[]) => {
    const key = `${landing}/${name}`;
    const etag = (await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: jsonLines(records) }))).ETag!;
    return {
      source: s3LandingBucket(bucket, client),
      key,
      etag,
      table: openStorage(tablePath),
      tableProperties: new Map(Object.entries(PROPS).map(([k, v]) => [k, String(v)])),
      errorPrefix: 'errors/',
    };
  };
  return { bucket, tablePath, request };
}

describe("ingest: a table with Hudi's metadata table it cannot keep", () => {
  it('is refused before the object is claimed or downloaded, naming the partition being built; nothing is written', async () => {
    const { bucket, tablePath, request } = await landedObjects('ingest-mdt');
    assert.equal((await ingestObject(await request('first.jsonl', [user(1, 'Alice')]))).outcome, 'ingested');
    const table = openStorage(tablePath);
    const properties = Buffer.from(await table.get('.hoodie/hoodie.properties')).toString('utf8');
    await table.put('.hoodie/hoodie.properties', `${properties}hoodie.table.metadata.partitions.inflight=files\n`);

    const second = await request('second.jsonl', [user(2, 'Bob')]);
    await assert.rejects(
      ingestObject(second),
      (error: unknown) =>
        error instanceof MetadataTableError &&
        /an ingest cannot keep Hudi's metadata table correct/.test(error.message) &&
        /partition files is being built/.test(error.message),
    );
    const id = ingestId(ingestSource(bucket, second.key, second.etag));
    assert.deepEqual(await table.listRecursive(`${INGEST_FOLDER}/${id}`), [], 'not even claimed');
    assert.equal(await table.head(`${INGEST_FOLDER}/${id}.json`), undefined, 'not recorded as handled: it is retried once the table is fixed');
    assert.equal((await loadTimeline(table, TIMELINE_LAYOUT_1)).completedWrites().length, 1, 'nothing written');
  });
});

describe('ingest: a CDC table', () => {
  it('an insert into it is refused before the object is claimed or downloaded, naming CDC; nothing is written', async () => {
    const { bucket, tablePath, request } = await landedObjects('ingest-cdc');
    assert.equal((await ingestObject(await request('first.jsonl', [user(1, 'Alice')]))).outcome, 'ingested');
    const table = openStorage(tablePath);
    const properties = Buffer.from(await table.get('.hoodie/hoodie.properties')).toString('utf8');
    await table.put('.hoodie/hoodie.properties', `${properties}hoodie.table.cdc.enabled=true\n`);

    // Upserts and deletes write change data (test/table/layouts.test.ts); an insert would not.
    const landed = await request('second.jsonl', [user(2, 'Bob')]);
    const second = { ...landed, tableProperties: new Map([...landed.tableProperties, ['hoodie.datasource.write.operation', 'insert']]) };
    await assert.rejects(
      ingestObject(second),
      (error: unknown) => error instanceof UnsupportedLayoutError && error.layout === 'cdc' && /insert into .*CDC/.test(error.message),
    );
    const id = ingestId(ingestSource(bucket, second.key, second.etag));
    assert.deepEqual(await table.listRecursive(`${INGEST_FOLDER}/${id}`), [], 'not even claimed');
    assert.equal(await table.head(`${INGEST_FOLDER}/${id}.json`), undefined, 'not recorded as handled');
    assert.equal((await loadTimeline(table, TIMELINE_LAYOUT_1)).completedWrites().length, 1, 'nothing written');
  });
});

describe("ingest: never the table's own objects", () => {
  const setUp = async () => {
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'ERROR';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    const { module } = await loadHandler();
    const client = s3ClientFromEnv();
    const bucket = await testBucket();
    const tablePath = await s3TablePath('ingest-self');
    const tablePrefix = tablePath.slice(`s3://${bucket}/`.length);
    const run = `landing-${randomUUID().slice(0, 8)}`;
    const put = async (key: string, body: string) => {
      const etag = (await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }))).ETag!;
      return s3PutEvent(bucket, key, etag, Buffer.byteLength(body));
    };
    const environment = (extra: Record<string, string>) =>
      Object.assign(process.env, {
        TABLE_PATH: tablePath,
        TABLE_PROPERTIES: JSON.stringify(PROPS),
        INGEST_PREFIX: '',
        ERROR_PREFIX: `${run}/errors`,
        ...extra,
      });
    // INGEST_PREFIX empty (every key, the default) and the table in the landing bucket: the loop's set-up.
    environment({});
    const first = await put(`${run}/first.jsonl`, jsonLines([user(1, 'Alice')]));
    assert.equal(((await module.handler(first, lambdaContext())) as IngestSummary).results[0]?.outcome, 'ingested');
    const table = openStorage(tablePath);
    const listing = async () => (await table.listRecursive('')).map((object) => `${object.path} ${object.size}`).sort();
    return { module, bucket, tablePath, tablePrefix, run, table, put, listing, environment };
  };

  it("refuses an event for one of the table's files, or an object landed under the table: one error, nothing written", async () => {
    const { module, bucket, tablePath, tablePrefix, table, put, listing } = await setUp();
    try {
      const dataFile = (await table.listRecursive('')).find((object) => object.path.endsWith('.parquet'))!;
      const landedInside = await put(`${tablePrefix}/landing/second.jsonl`, jsonLines([user(2, 'Bob')]));
      const before = await listing();
      const ownFile = s3PutEvent(bucket, `${tablePrefix}/${dataFile.path}`, '"0123456789abcdef0123456789abcdef"', dataFile.size);
      for (const event of [ownFile, landedInside]) {
        const key = event.Records[0]!.s3.object.key;
        await assert.rejects(module.handler(event, lambdaContext()), (error: unknown) => {
          // The bundle has its own HudiError class: its name tells.
          assert.ok(error instanceof Error && error.name === 'HudiError', String(error));
          assert.equal(error.message.split('refused').length, 2, 'one error, naming the object once');
          assert.match(
            error.message,
            new RegExp(
              `^${tablePath}: 1 object\\(s\\) refused: s3://${bucket}/${key.replace(/[.+]/g, '\\$&')} is under the table ${tablePath} itself: ingest never reads the table's own objects`,
            ),
          );
          assert.match(error.message, /give INGEST_PREFIX \(the template's LandingPrefix\) and ERROR_PREFIX prefixes outside the table's/);
          return true;
        });
      }
      assert.deepEqual(await listing(), before, 'no new file under the table, timeline included');
      assert.deepEqual([...(await readSnapshot(await HudiTable.open(table))).rows.map((row) => Number(row['id']))], [1]);
    } finally {
      delete process.env['LANDING_BUCKET'];
    }
  });

  it('refuses a quarantine that would land inside the table, and, with LANDING_BUCKET set, an overlapping prefix at start', async () => {
    const { module, bucket, tablePath, tablePrefix, run, put, listing, environment } = await setUp();
    try {
      environment({ INGEST_PREFIX: `${run}/in/`, ERROR_PREFIX: `${tablePrefix}/errors` });
      const landed = await put(`${run}/in/third.jsonl`, 'not json\n');
      const before = await listing();
      await assert.rejects(
        module.handler(landed, lambdaContext()),
        new RegExp(`refused: s3://${bucket}/${run}/in/third\\.jsonl would be quarantined under ${tablePrefix}/errors/, inside the table`),
      );
      assert.deepEqual(await listing(), before, 'not even the quarantined copy');

      for (const [name, value] of [
        ['INGEST_PREFIX', `${tablePrefix}/`],
        ['INGEST_PREFIX', ''],
        ['ERROR_PREFIX', `${tablePrefix}/errors`],
      ] as const) {
        environment({ LANDING_BUCKET: bucket, INGEST_PREFIX: `${run}/in/`, ERROR_PREFIX: `${run}/errors`, [name]: value });
        await assert.rejects(
          module.handler(landed, lambdaContext()),
          (error: unknown) =>
            error instanceof Error &&
            error.name === 'HudiError' &&
            error.message.startsWith(`the function environment: ${name}=`) &&
            error.message.includes(`overlaps the table ${tablePath} in the landing bucket ${bucket}`),
        );
      }
      assert.deepEqual(await listing(), before);

      // Another landing bucket: the table's bucket sends nothing worth ingesting.
      environment({ LANDING_BUCKET: `${bucket}-other`, INGEST_PREFIX: '' });
      const ignored = (await module.handler(landed, lambdaContext())) as IngestSummary;
      assert.match(ignored.ignored[0]!.reason, new RegExp(`not in the landing bucket ${bucket}-other`));
      assert.deepEqual(await listing(), before);
    } finally {
      delete process.env['LANDING_BUCKET'];
    }
  });
});

describe('ingest: merge-on-read tables', () => {
  it('creates a merge-on-read table and applies later objects as delta commits, updates in log files', async () => {
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'ERROR';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    const { module } = await loadHandler();
    const client = s3ClientFromEnv();
    const bucket = await testBucket();
    const run = `landing-${randomUUID().slice(0, 8)}`;
    const tablePath = await s3TablePath('ingest-mor');
    Object.assign(process.env, {
      TABLE_PATH: tablePath,
      TABLE_PROPERTIES: JSON.stringify({ ...PROPS, 'hoodie.table.name': 'landed_mor', 'hoodie.datasource.write.table.type': 'MERGE_ON_READ' }),
      INGEST_PREFIX: `${run}/`,
      ERROR_PREFIX: `${run}-errors/`,
    });
    const ingest = async (name: string, records: readonly unknown[]) => {
      const key = `${run}/${name}`;
      const body = jsonLines(records);
      const response = await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      const summary = (await module.handler(s3PutEvent(bucket, key, response.ETag!, Buffer.byteLength(body)), lambdaContext())) as IngestSummary;
      assert.equal(summary.results[0]?.outcome, 'ingested', JSON.stringify(summary));
      return summary.results[0]!;
    };
    assert.equal((await ingest('first.jsonl', [user(1, 'Alice'), user(2, 'Bob'), user(3, 'Carol')])).inserted, 3);
    // Updates only: no partition has inserts, so no small file takes them; they go to a log file.
    const second = await ingest('second.jsonl', [user(1, 'Alice v2', 2), user(3, 'Carol v2', 2)]);
    assert.equal(second.updated, 2);

    const storage = openStorage(tablePath);
    const table = await HudiTable.open(storage);
    assert.equal(table.config.type, 'MERGE_ON_READ');
    const writes = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).completedWrites();
    assert.deepEqual(
      writes.map((i) => i.action),
      ['deltacommit', 'deltacommit'],
    );
    const stats = Object.values((await readCommitMetadata(storage, writes[1]!, TIMELINE_LAYOUT_1)).partitionToWriteStats).flat();
    assert.ok(stats.length > 0 && stats.every((s) => /\/\..+\.log\.1_/.test(s.path ?? '')), JSON.stringify(stats.map((s) => s.path)));
    const { rows } = await readSnapshot(table);
    assert.deepEqual(rows.map((r) => `${String(r['id'])}:${String(r['name'])}`).sort(), ['1:Alice v2', '2:Bob', '3:Carol v2']);
  });
});

describe('ingest: simple-bucket-index tables', () => {
  it('feeds a merge-on-read bucket table: records in their hash buckets, inserts and updates of existing buckets in log files', async () => {
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'ERROR';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    const { module } = await loadHandler();
    const client = s3ClientFromEnv();
    const bucket = await testBucket();
    const run = `landing-${randomUUID().slice(0, 8)}`;
    const tablePath = await s3TablePath('ingest-bucket');
    const bucketProps = { 'hoodie.index.type': 'BUCKET', 'hoodie.bucket.index.num.buckets': '4' };
    Object.assign(process.env, {
      TABLE_PATH: tablePath,
      TABLE_PROPERTIES: JSON.stringify({
        ...PROPS,
        'hoodie.table.name': 'landed_bucket',
        'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
        ...bucketProps,
      }),
      INGEST_PREFIX: `${run}/`,
      ERROR_PREFIX: `${run}-errors/`,
    });
    const ingest = async (name: string, records: readonly unknown[]) => {
      const key = `${run}/${name}`;
      const body = jsonLines(records);
      const response = await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      const summary = (await module.handler(s3PutEvent(bucket, key, response.ETag!, Buffer.byteLength(body)), lambdaContext())) as IngestSummary;
      assert.equal(summary.results[0]?.outcome, 'ingested', JSON.stringify(summary));
      return summary.results[0]!;
    };
    await ingest('first.jsonl', [user(1, 'Alice'), user(2, 'Bob')]);
    const storage = openStorage(tablePath);
    const firstGroups = new Set((await (await HudiTable.open(storage)).fileSystemView()).latestMergedSlices().map((s) => s.fileId));
    // Id 1 updated; ids 5 and 6 hash to the buckets of 1 and 2 (4 buckets), id 3 and 4 to buckets without a file group.
    await ingest('second.jsonl', [user(1, 'Alice v2', 2), user(3, 'Carol'), user(4, 'Dan'), user(5, 'Eve'), user(6, 'Fay')]);
    const writes = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).completedWrites();
    const stats = Object.values((await readCommitMetadata(storage, writes[1]!, TIMELINE_LAYOUT_1)).partitionToWriteStats).flat();
    for (const stat of stats) assert.equal(/\.log\.1_/.test(stat.path ?? ''), firstGroups.has(stat.fileId), `${stat.path}`);
    assert.ok(
      stats.some((s) => firstGroups.has(s.fileId) && s.numWrites === 2),
      'an existing bucket took an insert beside the update',
    );
    const table = await HudiTable.open(storage);
    const { rows } = await readSnapshot(table, { includeMetaFields: true });
    assert.deepEqual(rows.map((r) => `${String(r['id'])}:${String(r['name'])}`).sort(), ['1:Alice v2', '2:Bob', '3:Carol', '4:Dan', '5:Eve', '6:Fay']);
    for (const r of rows) {
      assert.equal(bucketNumberOf(String(r['_hoodie_file_name'])), bucketIdOf(String(r['id']), { numBuckets: 4, hashFields: ['id'] }), `id ${r['id']}`);
    }
  });
});
