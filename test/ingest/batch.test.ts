/**
 * Micro-batched ingest (lib/ingest/batch.ts, and the SQS path of the ingest Lambda): the objects of a batch in one
 * commit per size bound, each exactly once, on the local stack's S3 for the landing bucket.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ConfigValueError } from '../../lib/config/index.js';
import { jsonLinesToParquet } from '../../lib/engine/write.js';
import { HudiError } from '../../lib/errors.js';
import { ClaimHeartbeat, HEARTBEAT_FOLDER } from '../../lib/ingest/heartbeat.js';
import { claimObject, commitMarkerOf } from '../../lib/ingest/idempotency.js';
import {
  type BatchObjectResult,
  INGEST_BATCH_MAX_BYTES,
  INGEST_FOLDER,
  type IngestBatchRequest,
  type IngestResult,
  ingestId,
  ingestObjects,
  ingestSource,
  normalizeEtag,
  s3LandingBucket,
  sourcesOfCommit,
} from '../../lib/ingest/index.js';
import { STORAGE_LOCK_FOLDER, StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { ingestConfigFromEnv } from '../../lib/serverless/steps/ingest/ingest.js';
import { countedStorage } from '../../lib/storage/counted.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { prefixedStorage } from '../../lib/storage/prefixed.js';
import { formatRequestCounts, RequestCounter, type RequestCounts } from '../../lib/storage/request-counts.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, readCommitMetadata } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/paths.js';
import { s3TablePath, testBucket } from '../helpers/s3.js';

const PROPS = new Map(
  Object.entries({
    'hoodie.table.name': 'landed_batch',
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.index.bloom.num_entries': '1000',
  }),
);
const jsonLines = (records: readonly unknown[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
const user = (id: number, values: Record<string, unknown> = {}) => ({ id, name: `user ${id}`, ts: 1, dt: id % 2 === 0 ? 'p0' : 'p1', ...values });
/** `count` records with ids from `first`. */
const users = (first: number, count: number) => Array.from({ length: count }, (_, i) => user(first + i));

let client: S3Client;
let bucket: string;

/** A landing folder of its own and a builder of the objects landed in it. */
function landing() {
  const folder = `landing-${randomUUID().slice(0, 8)}`;
  const land = async (name: string, body: string | Uint8Array) => {
    const key = `${folder}/in/${name}`;
    const etag = (await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }))).ETag!;
    return { key, etag };
  };
  const request = (table: Storage, objects: IngestBatchRequest['objects'], extra: Partial<IngestBatchRequest> = {}): IngestBatchRequest => ({
    source: s3LandingBucket(bucket, client),
    objects,
    table,
    tableProperties: PROPS,
    errorPrefix: `${folder}/errors/`,
    ...extra,
  });
  return { folder, land, request };
}

const resultOf = (outcome: BatchObjectResult): IngestResult => {
  assert.ok('result' in outcome, `${outcome.key}: ${'error' in outcome ? String(outcome.error) : ''}`);
  return outcome.result;
};

/** The completed writes, each with the sources its marker names. */
async function commitsOf(table: Storage): Promise<{ time: string; sources: string[] }[]> {
  const timeline = await loadTimeline(table, TIMELINE_LAYOUT_1);
  return Promise.all(
    timeline
      .completedWrites()
      .map(async (instant) => ({ time: instant.time, sources: sourcesOfCommit((await readCommitMetadata(table, instant, TIMELINE_LAYOUT_1)).extraMetadata) })),
  );
}

/** Every row's id, checking that no record key appears twice. */
async function rowIds(table: Storage): Promise<number[]> {
  const { rows } = await readSnapshot(await HudiTable.open(table));
  const ids = rows.map((row) => Number(row['id'])).sort((a, b) => a - b);
  assert.equal(new Set(ids).size, ids.length, 'a record key appears twice');
  return ids;
}

const range = (first: number, count: number) => Array.from({ length: count }, (_, i) => first + i);
const sourceOf = (object: { key: string; etag: string }) => ingestSource(bucket, object.key, object.etag);

describe('ingest: a batch of objects', () => {
  before(async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
  });

  it('writes N objects as one commit naming each; every row is readable; a retry writes nothing', async () => {
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch'));
    const objects = [];
    for (let i = 0; i < 12; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 10, 10))));
    const results = (await ingestObjects(request(table, objects))).map(resultOf);

    assert.deepEqual(
      results.map((r) => r.outcome),
      objects.map(() => 'ingested'),
    );
    const commits = await commitsOf(table);
    assert.equal(commits.length, 1, 'one commit for the batch');
    assert.deepEqual(commits[0]!.sources.sort(), objects.map(sourceOf).sort(), 'the commit names every object it applied');
    assert.ok(results.every((r) => r.instantTime === commits[0]!.time && r.commitObjects === 12 && r.inserted === 120));
    assert.deepEqual(await rowIds(table), range(0, 120));

    const again = (await ingestObjects(request(table, objects))).map(resultOf);
    assert.deepEqual(
      again.map((r) => [r.outcome, r.originalOutcome, r.instantTime]),
      objects.map(() => ['duplicate', 'ingested', commits[0]!.time]),
    );
    assert.equal((await commitsOf(table)).length, 1, 'the retried batch wrote nothing');
  });

  it('writes only the new objects of a batch overlapping one already committed, and a repeated object once', async () => {
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-overlap'));
    const objects = [];
    for (let i = 0; i < 6; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 10, 10))));
    await ingestObjects(request(table, objects.slice(0, 4)));
    // Objects 2 and 3 were committed; 4 comes twice (one message delivered twice in the batch).
    const overlapping = [objects[2]!, objects[3]!, objects[4]!, objects[4]!, objects[5]!];
    const results = (await ingestObjects(request(table, overlapping))).map(resultOf);
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['duplicate', 'duplicate', 'ingested', 'ingested', 'ingested'],
    );
    const commits = await commitsOf(table);
    assert.equal(commits.length, 2);
    assert.deepEqual(commits[1]!.sources.sort(), [objects[4]!, objects[5]!].map(sourceOf).sort(), 'the second commit took only the new objects');
    assert.equal(results[2]!.instantTime, results[3]!.instantTime);
    assert.deepEqual(await rowIds(table), range(0, 60));
  });

  it('fails only the object whose ingest record is unreadable; the others commit', async () => {
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-bad-record'));
    const objects = [];
    for (let i = 0; i < 3; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 10, 10))));
    await table.put(`${INGEST_FOLDER}/${ingestId(sourceOf(objects[1]!))}.json`, '{ truncated');
    const outcomes = await ingestObjects(request(table, objects));
    const failed = outcomes[1]!;
    assert.ok('error' in failed && failed.error instanceof HudiError && /ingest record is not JSON/.test(failed.error.message), JSON.stringify(failed));
    assert.deepEqual(
      [outcomes[0]!, outcomes[2]!].map((o) => resultOf(o).outcome),
      ['ingested', 'ingested'],
    );
    const commits = await commitsOf(table);
    assert.deepEqual(
      commits.map((c) => c.sources.sort()),
      [[sourceOf(objects[0]!), sourceOf(objects[2]!)].sort()],
    );
    assert.deepEqual(await rowIds(table), [...range(0, 10), ...range(20, 10)]);
  });

  it('quarantines the poison objects of a batch and commits the rest; bad lines go to their own errors file', async () => {
    const { folder, land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-poison'));
    // The table exists (its id column is BIGINT), as the objects of a stream find it.
    resultOf((await ingestObjects(request(table, [await land('seed.jsonl', jsonLines([user(5000)]))])))[0]!);
    const good = [];
    for (let i = 0; i < 5; i++) good.push(await land(`good-${i}.jsonl`, jsonLines(users(i * 10, 10))));
    const garbage = randomBytes(2048);
    garbage[10] = 0x0a;
    const unreadable = await land('garbage.jsonl', garbage);
    // Readable, but the table refuses it whole: a fractional record key (the batch's id column turns DOUBLE).
    const refused = await land('fraction.jsonl', jsonLines([user(1000, { id: 1.5 })]));
    // Bad lines: two the ingest rejects before the write, one (line 4) only the writer can judge.
    const mixed = await land(
      'mixed.jsonl',
      `${JSON.stringify(user(2000))}\nnot json\n${JSON.stringify({ name: 'no id' })}\n${JSON.stringify(user(2001, { dt: '..' }))}\n`,
    );
    const objects = [good[0]!, unreadable, good[1]!, good[2]!, refused, good[3]!, mixed, good[4]!];
    const results = (await ingestObjects(request(table, objects))).map(resultOf);

    const outcome = (object: { key: string }) => results[objects.findIndex((o) => o.key === object.key)]!;
    assert.equal(outcome(unreadable).outcome, 'failed');
    assert.match(outcome(unreadable).reason!, /not JSON lines/);
    assert.equal(outcome(refused).outcome, 'failed');
    assert.match(outcome(refused).reason!, /^the table refused the object: .*1\.5/);
    for (const poison of [unreadable, refused]) {
      const described = JSON.parse(
        await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: outcome(poison).errorsKey! }))).Body!.transformToString(),
      ) as { etag: string };
      assert.equal(described.etag, normalizeEtag(poison.etag), 'the quarantined copy is described');
    }
    for (const object of [...good, mixed]) assert.equal(outcome(object).outcome, 'ingested', object.key);
    assert.equal(outcome(mixed).badRecords, 3);
    assert.ok(good.every((object) => outcome(object).badRecords === 0 && outcome(object).errorsKey === undefined));
    const errorLines = (await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: outcome(mixed).errorsKey! }))).Body!.transformToString())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; reason: string; record?: string });
    assert.deepEqual(
      errorLines.map((e) => e.line),
      [2, 3, 4],
      'each rejected row by its line in its own object',
    );
    assert.match(errorLines[2]!.reason, /starting with "\."/);
    assert.equal(errorLines[2]!.record, JSON.stringify(user(2001, { dt: '..' })));
    assert.equal(outcome(mixed).errorsKey, `${folder}/errors/${mixed.key}.errors.jsonl`);

    // Every good object in exactly one commit, no poison in any.
    const applied = (await commitsOf(table))
      .slice(1)
      .flatMap((c) => c.sources)
      .sort();
    assert.deepEqual(applied, [...good, mixed].map(sourceOf).sort());
    assert.deepEqual(await rowIds(table), [...range(0, 50), 2000, 5000]);
    // The poison stays handled: a redelivery is a duplicate of the failure.
    const again = (await ingestObjects(request(table, [refused, unreadable]))).map(resultOf);
    assert.deepEqual(
      again.map((r) => [r.outcome, r.originalOutcome]),
      [
        ['duplicate', 'failed'],
        ['duplicate', 'failed'],
      ],
    );
  });

  it('recovers a merge-on-read batch commit (a deltacommit) after a crash before its claims were recorded', async () => {
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-mor'));
    const props = new Map([...PROPS, ['hoodie.datasource.write.table.type', 'MERGE_ON_READ']]);
    const objects = [await land('a.jsonl', jsonLines(users(0, 10))), await land('b.jsonl', jsonLines(users(10, 10)))];
    (await ingestObjects(request(table, objects, { tableProperties: props }))).map(resultOf);
    assert.deepEqual(
      (await loadTimeline(table, TIMELINE_LAYOUT_1)).completedWrites().map((i) => i.action),
      ['deltacommit'],
    );
    // The state a crash after the commit leaves: no done records, the attempts still there.
    for (const object of objects) {
      const id = ingestId(sourceOf(object));
      await table.delete([`${INGEST_FOLDER}/${id}.json`]);
      await table.put(`${INGEST_FOLDER}/${id}/attempt.json`, JSON.stringify({ firstAttemptAt: new Date(Date.now() - 60_000).toISOString(), attempts: 1 }));
    }
    const retried = (await ingestObjects(request(table, objects, { tableProperties: props }))).map(resultOf);
    assert.deepEqual(
      retried.map((r) => [r.outcome, r.recovered, r.commitObjects]),
      [
        ['duplicate', true, 2],
        ['duplicate', true, 2],
      ],
    );
    assert.equal((await loadTimeline(table, TIMELINE_LAYOUT_1)).completedWrites().length, 1, 'no second deltacommit');
    assert.deepEqual(await rowIds(table), range(0, 20));
  });

  it('splits a batch larger than the size bound into several commits, never refusing it', async () => {
    const { land, request } = landing();
    const objects = [];
    const bodies = [];
    for (let i = 0; i < 5; i++) {
      bodies.push(jsonLines(users(i * 10, 10)));
      objects.push(await land(`part-${i}.jsonl`, bodies[i]!));
    }
    const size = Math.max(...bodies.map((b) => Buffer.byteLength(b)));
    // Room for two objects' lines per commit, as the request's bound and as the key in the table properties.
    const bound = String(2 * size + Math.floor(size / 2));
    const byRequest = openStorage(await s3TablePath('ingest-batch-bound'));
    (await ingestObjects(request(byRequest, objects, { maxBatchBytes: Number(bound) }))).map(resultOf);
    const byKey = openStorage(await s3TablePath('ingest-batch-bound-key'));
    (await ingestObjects(request(byKey, objects, { tableProperties: new Map([...PROPS, [INGEST_BATCH_MAX_BYTES.key, bound]]) }))).map(resultOf);
    for (const table of [byRequest, byKey]) {
      const commits = await commitsOf(table);
      assert.deepEqual(
        commits.map((c) => c.sources.length),
        [2, 2, 1],
      );
      assert.deepEqual(commits.flatMap((c) => c.sources).sort(), objects.map(sourceOf).sort());
      assert.deepEqual(await rowIds(table), range(0, 50));
    }

    // A bound smaller than one object: each object is a commit of its own.
    const tiny = openStorage(await s3TablePath('ingest-batch-tiny'));
    const results = (await ingestObjects(request(tiny, objects.slice(0, 3), { maxBatchBytes: 1 }))).map(resultOf);
    assert.deepEqual(
      results.map((r) => [r.outcome, r.commitObjects]),
      objects.slice(0, 3).map(() => ['ingested', undefined]),
    );
    assert.equal((await commitsOf(tiny)).length, 3);

    // A bound that is not a size is refused before anything is claimed or written.
    const refusedTable = openStorage(await s3TablePath('ingest-batch-bad-bound'));
    await assert.rejects(
      ingestObjects(request(refusedTable, objects, { tableProperties: new Map([...PROPS, [INGEST_BATCH_MAX_BYTES.key, '0']]) })),
      (error: unknown) => error instanceof ConfigValueError && error.key === INGEST_BATCH_MAX_BYTES.key,
    );
    assert.deepEqual(await refusedTable.listRecursive(''), []);
  });
});

describe('ingest: a batch of CSV and Parquet objects', () => {
  before(async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
  });
  const csv = (header: string, rows: readonly string[]) => `${header}\n${rows.join('\n')}\n`;
  const csvUsers = (first: number, count: number) => range(first, count).map((id) => `${id},user ${id},1,${id % 2 === 0 ? 'p0' : 'p1'}`);

  it('writes CSV objects of one header as one commit; another header commits alone; bad rows by their own object', async () => {
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-csv'));
    const header = 'id,name,ts,dt';
    const same = [];
    for (let i = 0; i < 4; i++) same.push(await land(`part-${i}.csv`, csv(header, csvUsers(i * 10, 10))));
    // Gzip-compressed, same header: the same commit.
    same.push(await land('part-4.csv.gz', gzipSync(csv(header, csvUsers(40, 10)))));
    // The same columns in another order: a commit of their own.
    const reordered = await land(
      'reordered.csv',
      csv(
        'name,id,ts,dt',
        range(100, 5).map((id) => `user ${id},${id},1,p0`),
      ),
    );
    // Its second row has a partition path the writer refuses: reported by its row and line in that object.
    const bad = await land('bad.csv', csv(header, ['200,user 200,1,p0', '201,user 201,1,..', '202,user 202,1,p1']));
    const objects = [same[0]!, reordered, same[1]!, same[2]!, bad, same[3]!, same[4]!];
    const results = (await ingestObjects(request(table, objects))).map(resultOf);
    assert.deepEqual(
      results.map((r) => r.outcome),
      objects.map(() => 'ingested'),
    );
    const commits = await commitsOf(table);
    assert.deepEqual(
      commits.map((c) => c.sources.sort()).sort((a, b) => b.length - a.length),
      [[...same, bad].map(sourceOf).sort(), [sourceOf(reordered)]],
    );
    const outcome = (object: { key: string }) => results[objects.findIndex((o) => o.key === object.key)]!;
    assert.equal(outcome(bad).badRecords, 1);
    const errorLines = (await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: outcome(bad).errorsKey! }))).Body!.transformToString())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { row: number; line?: number; record?: string });
    assert.deepEqual(
      errorLines.map((e) => [e.row, e.line, e.record]),
      [[1, 3, '201,user 201,1,..']],
    );
    assert.ok(same.every((object) => outcome(object).badRecords === 0));
    assert.deepEqual(await rowIds(table), [...range(0, 50), ...range(100, 5), 200, 202]);

    const again = (await ingestObjects(request(table, objects))).map(resultOf);
    assert.ok(again.every((r) => r.outcome === 'duplicate'));
    assert.equal((await commitsOf(table)).length, 2, 'the retried batch wrote nothing');
  });

  it('writes Parquet objects of one schema as one commit, another schema alone, and quarantines an unreadable one', async () => {
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-parquet'));
    const dir = tempDir('hudi-batch-parquet-');
    const parquet = async (name: string, records: readonly unknown[]): Promise<Uint8Array> => {
      await writeFile(join(dir, `${name}.jsonl`), jsonLines(records));
      await jsonLinesToParquet(join(dir, `${name}.jsonl`), join(dir, `${name}.parquet`));
      return readFile(join(dir, `${name}.parquet`));
    };
    const same = [];
    for (let i = 0; i < 4; i++) same.push(await land(`part-${i}.parquet`, await parquet(`part-${i}`, users(i * 10, 10))));
    // The same columns in another order: a schema of its own.
    const reordered = await land(
      'reordered.parquet',
      await parquet(
        'reordered',
        users(100, 5).map((u) => ({ dt: u.dt, ts: u.ts, name: u.name, id: u.id })),
      ),
    );
    const unreadable = await land('garbage.parquet', randomBytes(512));
    const objects = [same[0]!, reordered, same[1]!, unreadable, same[2]!, same[3]!];
    const results = (await ingestObjects(request(table, objects))).map(resultOf);
    const outcome = (object: { key: string }) => results[objects.findIndex((o) => o.key === object.key)]!;
    assert.equal(outcome(unreadable).outcome, 'failed');
    assert.match(outcome(unreadable).reason!, /^the table refused the object/);
    for (const object of [...same, reordered]) assert.equal(outcome(object).outcome, 'ingested', object.key);
    const commits = await commitsOf(table);
    assert.deepEqual(
      commits.map((c) => c.sources.sort()).sort((a, b) => b.length - a.length),
      [same.map(sourceOf).sort(), [sourceOf(reordered)]],
    );
    assert.deepEqual(await rowIds(table), [...range(0, 40), ...range(100, 5)]);
  });
});

/** A process that dies at the storage call `dies` picks (before or after it happens): that call and every later one fail. */
class SimulatedCrash extends Error {}
const STORAGE_CALLS = new Set([
  'get',
  'getRange',
  'head',
  'put',
  'putIfAbsent',
  'uploadFile',
  'downloadFile',
  'listDir',
  'listRecursive',
  'delete',
  'deleteMany',
]);
function dyingStorage(inner: Storage, dies: (method: string, path: string) => 'before' | 'after' | undefined): { storage: Storage; died: () => boolean } {
  let dead = false;
  const storage = new Proxy(inner, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (typeof property !== 'string' || !STORAGE_CALLS.has(property)) return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        if (dead) throw new SimulatedCrash(`dead: ${property}`);
        const path = typeof args[0] === 'string' ? args[0] : Array.isArray(args[0]) ? String(args[0][0]) : '';
        const when = dies(property, path);
        if (when === 'before') {
          dead = true;
          throw new SimulatedCrash(`died before ${property} ${path}`);
        }
        const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (when === 'after') dead = true;
        return result;
      };
    },
  });
  return { storage, died: () => dead };
}

describe('ingest: a batch interrupted by a crash', () => {
  before(async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
  });

  const commitFile = /^\.hoodie\/\d+\.commit$/;
  const doneRecord = new RegExp(`^${INGEST_FOLDER.replace('.', '\\.')}/[0-9a-f]{64}\\.json$`);
  let doneRecords = 0;
  const crashPoints: [string, (method: string, path: string) => 'before' | 'after' | undefined][] = [
    ['after the data files, before the commit', (method, path) => (method === 'putIfAbsent' && commitFile.test(path) ? 'before' : undefined)],
    ['after the commit, before any claim is recorded', (method, path) => (method === 'putIfAbsent' && commitFile.test(path) ? 'after' : undefined)],
    [
      // Done records are written side by side: the crash comes at the second, so only the first is written.
      'after the commit and the first claim recorded',
      (method, path) => (method === 'putIfAbsent' && doneRecord.test(path) && ++doneRecords === 2 ? 'before' : undefined),
    ],
  ];

  for (const [name, dies] of crashPoints) {
    it(`loses nothing and applies nothing twice: ${name}`, async () => {
      doneRecords = 0;
      const { land, request } = landing();
      // A local table: the retry after a crash under the table lock waits for its lease.
      const table = openStorage(join(tempDir('ingest-batch-crash-'), 'table'));
      const objects = [];
      for (let i = 0; i < 4; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 10, 10))));
      // A first commit, so the crash hits a write to an existing table.
      const seed = await land('seed.jsonl', jsonLines([user(1000)]));
      resultOf((await ingestObjects(request(table, [seed])))[0]!);

      const claim = { leaseMs: 1_000, pollMs: 100, waitMs: 60_000 };
      const crashing = dyingStorage(table, dies);
      const crashed = await ingestObjects(request(crashing.storage, objects, { claim })).catch((error: unknown) => error);
      assert.ok(crashing.died(), `the crash point was reached: ${JSON.stringify(crashed, (_, v: unknown) => (v instanceof Error ? v.message : v))}`);
      assert.ok(crashed instanceof SimulatedCrash || (Array.isArray(crashed) && crashed.some((o) => 'error' in o)), 'the crashed run did not finish');

      const retried = (await ingestObjects(request(table, objects, { claim }))).map(resultOf);
      assert.ok(
        retried.every((r) => r.outcome === 'ingested' || (r.outcome === 'duplicate' && r.originalOutcome === 'ingested')),
        JSON.stringify(retried),
      );
      const applied = (await commitsOf(table)).flatMap((c) => c.sources).sort();
      assert.deepEqual(applied, [seed, ...objects].map(sourceOf).sort(), 'every object applied by exactly one commit');
      assert.deepEqual(await rowIds(table), [...range(0, 40), 1000]);
      for (const object of objects) assert.ok(await table.head(`${INGEST_FOLDER}/${ingestId(sourceOf(object))}.json`), 'recorded as handled');
      const again = (await ingestObjects(request(table, objects))).map(resultOf);
      assert.ok(again.every((r) => r.outcome === 'duplicate' && r.recovered === undefined));
    });
  }
});

describe('ingest: a claim folder an older version left (its first generation pruned)', () => {
  it('is not taken by its first generation: a live holder there keeps it, a released one is followed', async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
    const { land } = landing();
    const table = openStorage(join(tempDir('ingest-batch-pruned-claim-'), 'table'));
    const object = await land('part-0.jsonl', jsonLines(users(0, 10)));
    const version = { bucket, key: object.key, etag: normalizeEtag(object.etag) };
    const folder = `${INGEST_FOLDER}/${ingestId(sourceOf(object))}`;
    // The older version's claim: a lock of its own, taken twice (its second holder pruned the first generation),
    // and its attempt record.
    const older = new StorageLockProvider(prefixedStorage(table, folder), { ownerName: 'older version' });
    await (await older.acquire()).release();
    const live = await older.acquire();
    await table.put(`${folder}/attempt.json`, JSON.stringify({ firstAttemptAt: new Date().toISOString(), attempts: 2 }));
    const generations = async () => (await table.listDir(`${folder}/${STORAGE_LOCK_FOLDER}`)).files.map((f) => f.path.split('/').pop()).sort();
    assert.deepEqual(await generations(), ['lease-000000000002.json'], 'the first generation is gone');

    const heartbeat = await ClaimHeartbeat.start(table, { leaseMs: 1_000, pollMs: 100 });
    try {
      const request = { table, version, location: object.key, now: () => new Date(), heartbeat, claim: { leaseMs: 1_000, pollMs: 100 } };
      const tried = await claimObject({ ...request, wait: false });
      assert.ok('busy' in tried, 'the live older holder keeps the object');
      assert.equal((await older.holder())?.owner, 'older version');

      await live.release();
      const claimed = await claimObject(request);
      assert.ok('held' in claimed, 'once released, the object is claimed after it');
      assert.equal((await new StorageLockProvider(prefixedStorage(table, folder)).holder())?.owner.startsWith('older'), false);
      assert.deepEqual((await generations()).at(-1), 'lease-000000000003.json', 'the next generation after the older holder');
      await claimed.held.release();
    } finally {
      await heartbeat.stop();
    }
  });
});

describe("ingest: a crashed batch's claims", () => {
  it('are all free once its heartbeat was seen unchanged for one lease: one wait, not one per object', async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
    const { land, request } = landing();
    const table = openStorage(join(tempDir('ingest-batch-dead-heartbeat-'), 'table'));
    const objects = [];
    for (let i = 0; i < 6; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 10, 10))));
    const claim = { leaseMs: 1_000, pollMs: 100 };
    // The crashed invocation: its heartbeat and its claims, never released.
    const dead = await ClaimHeartbeat.start(table, claim);
    for (const object of objects) {
      const version = { bucket, key: object.key, etag: normalizeEtag(object.etag) };
      const claimed = await claimObject({ table, version, location: object.key, now: () => new Date(), heartbeat: dead, claim, wait: false });
      assert.ok('held' in claimed, 'the crashed invocation held every claim');
    }
    dead.stopBeating();

    // How often each claim's lock folder is looked at: a claim waited for is looked at every poll.
    const looks = new Map<string, number>();
    const claimLock = new RegExp(`^${INGEST_FOLDER.replace('.', '\\.')}/([0-9a-f]{64})/\\.hoodie/\\.serverless-lock`);
    const watched = new Proxy(table, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (property !== 'listDir') return (value as (...a: unknown[]) => unknown).bind(target);
        return (dir: string) => {
          const id = claimLock.exec(dir)?.[1];
          if (id !== undefined) looks.set(id, (looks.get(id) ?? 0) + 1);
          return (value as (d: string) => unknown).call(target, dir);
        };
      },
    });
    const results = (await ingestObjects(request(watched, objects, { claim: { ...claim, waitMs: 60_000 } }))).map(resultOf);
    assert.ok(
      results.every((r) => r.outcome === 'ingested'),
      JSON.stringify(results),
    );
    assert.deepEqual(await rowIds(table), range(0, 60));
    const counts = [...looks.values()].sort((a, b) => a - b);
    assert.equal(counts.length, objects.length);
    // One claim is watched until the heartbeat proves dead; every other is taken at its first waiting look
    // (the try, the waiting look, the cleanup of the dead generation, the check before the commit).
    assert.ok(
      counts.slice(0, -1).every((count) => count <= 4),
      `looks per claim: ${counts.join(', ')}`,
    );
    assert.deepEqual(await table.listRecursive(HEARTBEAT_FOLDER), [], 'the dead heartbeat and ours are gone');
    for (const object of objects) {
      assert.deepEqual(await table.listRecursive(`${INGEST_FOLDER}/${ingestId(sourceOf(object))}`), [], 'no claim is left');
    }
  });
});

describe('ingest: a claim holder that commits the same object just before ours', () => {
  it("finds the holder's commit at the recheck before its own, records the object as that commit's, writes the rest once", async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-late-holder'));
    const taken = await land('taken.jsonl', jsonLines(users(0, 10)));
    const other = await land('other.jsonl', jsonLines(users(10, 10)));
    const version = { bucket, key: taken.key, etag: normalizeEtag(taken.etag) };
    // The earlier holder: it claimed the object and began, then its lease lapsed (its attempt record stays).
    const heartbeat = await ClaimHeartbeat.start(table);
    const earlier = await claimObject({ table, version, location: `s3://${bucket}/${taken.key}`, now: () => new Date(), heartbeat });
    assert.ok('held' in earlier);
    await earlier.held.release();
    await heartbeat.stop();

    // While our batch writes its data files, the earlier holder commits the object (as a still-running Lambda would).
    let holderCommit: string | undefined;
    let holderStarted = false;
    const dataFile = /^p[01]\//;
    const racing = new Proxy(table, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (property !== 'put' && property !== 'uploadFile') return (value as (...a: unknown[]) => unknown).bind(target);
        return async (...args: unknown[]) => {
          // Once, at the first data file (the writer uploads several side by side).
          if (!holderStarted && typeof args[0] === 'string' && dataFile.test(args[0])) {
            holderStarted = true;
            const dir = tempDir('hudi-late-holder-');
            await writeFile(join(dir, 'taken.jsonl'), jsonLines(users(0, 10)));
            const written = await writeBatch(table, {
              input: { file: join(dir, 'taken.jsonl'), format: 'jsonl' },
              operation: 'upsert',
              // Our write is in flight with a live heartbeat: the holder's leaves it be (LAZY), as Hudi's multi-writer setup.
              properties: new Map([...PROPS, ['hoodie.cleaner.policy.failed.writes', 'LAZY']]),
              extraMetadata: commitMarkerOf([sourceOf(taken)]),
            });
            holderCommit = written.instantTime;
          }
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
    const results = (await ingestObjects(request(racing, [taken, other]))).map(resultOf);
    assert.ok(holderCommit !== undefined, 'the holder committed while our data files were written');
    assert.deepEqual(
      [results[0]!.outcome, results[0]!.originalOutcome, results[0]!.recovered, results[0]!.instantTime],
      ['duplicate', 'ingested', true, holderCommit],
      "the object is the holder's commit's",
    );
    assert.equal(results[1]!.outcome, 'ingested');
    const commits = await commitsOf(table);
    assert.deepEqual(
      commits.map((c) => c.sources),
      [[sourceOf(taken)], [sourceOf(other)]],
      'the holder applied it, we applied only the other object',
    );
    assert.deepEqual(await rowIds(table), range(0, 20));
    assert.deepEqual((await loadTimeline(table, TIMELINE_LAYOUT_1)).pending(), [], 'our first attempt was rolled back');
    const again = (await ingestObjects(request(table, [taken, other]))).map(resultOf);
    assert.deepEqual(
      again.map((r) => [r.outcome, r.instantTime]),
      [
        ['duplicate', holderCommit],
        ['duplicate', results[1]!.instantTime],
      ],
    );
  });
});

describe('ingest: the storage requests of a batch', () => {
  /** The table's requests during `work`, per kind (the landed objects' GETs go through the landing bucket's client). */
  async function requestsOf(table: Storage, work: (counted: Storage) => Promise<unknown>): Promise<RequestCounts> {
    const counter = new RequestCounter();
    const counted = countedStorage(table, counter);
    assert.notEqual(counted, table, 'an S3 table counts its requests');
    await work(counted);
    return counter.snapshot();
  }

  it("a first delivery's new object costs its claim, one done-record read after it, the commit's check and its record", async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-requests'));
    const seed = await land('seed.jsonl', jsonLines([user(1000)]));
    resultOf((await ingestObjects(request(table, [seed])))[0]!);
    // What one object adds: a batch of 21 objects against a batch of 1, the commit's own requests alike.
    const objects: { key: string; etag: string }[] = [];
    for (let i = 0; i < 22; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 10, 10))));
    const first = (o: { key: string; etag: string }) => ({ ...o, firstDelivery: true });
    const one = await requestsOf(table, (counted) => ingestObjects(request(counted, [first(objects[0]!)])));
    // Two of them in two messages each: handled once.
    const more = objects.slice(1);
    const many = await requestsOf(table, (counted) => ingestObjects(request(counted, [...more, ...more.slice(0, 2)].map(first))));

    // Per object: the claim (put-if-absent, read back), the done record (read after the claim, written), the check
    // that no later generation took the claim; its claim's deletion shares the batch's requests.
    const per = (kind: keyof RequestCounts) => ((many[kind] ?? 0) - (one[kind] ?? 0)) / (more.length - 1);
    console.log(`# table requests: 1 first-delivered object ${formatRequestCounts(one)}; ${more.length} objects ${formatRequestCounts(many)}`);
    assert.ok(per('get') <= 3.5 && per('head') <= 1.5 && per('put') <= 2.5, `per object: ${['get', 'head', 'put'].map((k) => per(k as keyof RequestCounts))}`);
    assert.deepEqual(await rowIds(table), [...range(0, 220), 1000]);
    assert.equal((await commitsOf(table)).length, 3);
  });

  it('a first delivery of an object already done ends as a duplicate after its claim, and leaves no claim behind', async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
    const { land, request } = landing();
    const table = openStorage(await s3TablePath('ingest-batch-first-duplicate'));
    const objects = [];
    for (let i = 0; i < 3; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 10, 10))));
    const first = (await ingestObjects(request(table, objects.slice(0, 2)))).map(resultOf);
    // S3 may notify twice: the second notification is a message received for the first time too.
    const again = (
      await ingestObjects(
        request(
          table,
          objects.map((o) => ({ ...o, firstDelivery: true })),
        ),
      )
    ).map(resultOf);
    assert.deepEqual(
      again.map((r) => [r.outcome, r.instantTime]),
      [
        ['duplicate', first[0]!.instantTime],
        ['duplicate', first[1]!.instantTime],
        ['ingested', again[2]!.instantTime],
      ],
    );
    assert.deepEqual(
      (await commitsOf(table)).map((c) => c.sources.length),
      [2, 1],
    );
    assert.deepEqual(await rowIds(table), range(0, 30));
    for (const object of objects) {
      assert.deepEqual(await table.listRecursive(`${INGEST_FOLDER}/${ingestId(sourceOf(object))}`), [], 'no claim is left');
    }
    // A redelivery (not known to be the first) is settled by the done records alone: one read each.
    const counter = new RequestCounter();
    const redelivered = (await ingestObjects(request(countedStorage(table, counter), objects))).map(resultOf);
    assert.ok(redelivered.every((r) => r.outcome === 'duplicate'));
    assert.deepEqual(counter.snapshot(), { get: objects.length });
  });
});

describe('ingest Lambda: the batch size bound from the environment', () => {
  it('reads INGEST_BATCH_MAX_BYTES, and refuses a value that is not a size at start, naming it', () => {
    const env = { TABLE_PATH: 's3://bucket/table', ERROR_PREFIX: 'errors/' };
    assert.equal(ingestConfigFromEnv({ ...env, INGEST_BATCH_MAX_BYTES: '1048576' }).maxBatchBytes, 1_048_576);
    assert.equal(ingestConfigFromEnv(env).maxBatchBytes, undefined, 'unset: the table properties or the default decide');
    assert.throws(
      () => ingestConfigFromEnv({ ...env, INGEST_BATCH_MAX_BYTES: '1 GB' }),
      (error: unknown) => error instanceof ConfigValueError && error.key.startsWith('INGEST_BATCH_MAX_BYTES') && /the function environment/.test(error.message),
    );
  });
});

describe('ingest Lambda: an SQS batch', () => {
  const lambdaContext = (): Context => ({
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
  });
  const message = (messageId: string, body: string): SQSEvent['Records'][number] => ({
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
  const s3Event = (key: string, etag: string) => ({
    Records: [{ eventName: 'ObjectCreated:Put', eventSource: 'aws:s3', s3: { bucket: { name: bucket }, object: { key, eTag: normalizeEtag(etag) } } }],
  });

  it('commits the objects of 40 messages once, and fails only the messages whose objects were not handled', async () => {
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'ERROR';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    client = s3ClientFromEnv();
    bucket = await testBucket();
    const { folder, land } = landing();
    const tablePath = await s3TablePath('ingest-batch-sqs');
    Object.assign(process.env, {
      TABLE_PATH: tablePath,
      TABLE_PROPERTIES: JSON.stringify(Object.fromEntries(PROPS)),
      INGEST_PREFIX: `${folder}/in/`,
      ERROR_PREFIX: `${folder}/errors`,
    });
    const { handler } = await import('../../functions/ingest.js');
    const objects = [];
    for (let i = 0; i < 40; i++) objects.push(await land(`part-${i}.jsonl`, jsonLines(users(i * 500, 500))));
    const poison = await land('garbage.jsonl', randomBytes(1024));
    const records = [
      ...objects.map((o, i) => message(`m-${i}`, JSON.stringify(s3Event(o.key, o.etag)))),
      message('m-poison', JSON.stringify(s3Event(poison.key, poison.etag))),
      message('m-bad', 'not an event'),
    ];
    const started = performance.now();
    const response = (await handler({ Records: records }, lambdaContext())) as SQSBatchResponse;
    const seconds = (performance.now() - started) / 1000;
    console.log(`# 40 objects of 500 rows in one SQS batch: ${(await commitsOf(openStorage(tablePath))).length} commit(s), ${seconds.toFixed(1)} s`);
    assert.deepEqual(response.batchItemFailures, [{ itemIdentifier: 'm-bad' }], 'the quarantined object counts as handled');
    const table = openStorage(tablePath);
    const commits = await commitsOf(table);
    assert.equal(commits.length, 1);
    assert.deepEqual(commits[0]!.sources.sort(), objects.map(sourceOf).sort());
    assert.deepEqual(await rowIds(table), range(0, 40 * 500));

    // Redelivered with two new objects: only the new ones are written, in one more commit.
    const more = [await land('more-0.jsonl', jsonLines(users(50_000, 5))), await land('more-1.jsonl', jsonLines(users(60_000, 5)))];
    const redelivered = (await handler(
      { Records: [...records.slice(0, 40), ...more.map((o, i) => message(`n-${i}`, JSON.stringify(s3Event(o.key, o.etag))))] },
      lambdaContext(),
    )) as SQSBatchResponse;
    assert.deepEqual(redelivered.batchItemFailures, []);
    const after = await commitsOf(table);
    assert.equal(after.length, 2);
    assert.deepEqual(after[1]!.sources.sort(), more.map(sourceOf).sort());
  });
});
