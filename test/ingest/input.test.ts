/**
 * Bad input on the ingest path (lib/ingest over the writer, and the Lambda handler functions/ingest.ts) on the local
 * stack's S3: an object the table cannot take is refused as a whole (quarantined with one reason) and nothing of it
 * reaches the table — not a data file, not a timeline file; only ingest's own record of the object's fate under
 * .hoodie/.ingest/<id> (which makes a redelivery a duplicate). Bad records among good ones go to the errors file
 * and never into the table. An event that is not an S3 event is one EventError, never a TypeError.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { EventError, HudiError, InputError } from '../../lib/errors.js';
import { INGEST_FOLDER, type IngestRequest, ingestId, ingestObject, ingestSource, s3LandingBucket } from '../../lib/ingest/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { tempDir } from '../helpers/paths.js';
import { s3TablePath, testBucket } from '../helpers/s3.js';

const PROPS = new Map(
  Object.entries({
    'hoodie.table.name': 'landed',
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.index.bloom.num_entries': '100',
  }),
);
const jsonLines = (records: readonly unknown[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
const user = (id: number, values: Record<string, unknown> = {}) => ({ id, name: `user ${id}`, ts: 1, dt: 'p1', ...values });

/** Every object under the table, with its size, sorted. */
async function listing(table: Storage): Promise<string[]> {
  return (await table.listRecursive('')).map((object) => `${object.path} ${object.size}`).sort();
}

async function rowIds(table: Storage): Promise<number[]> {
  return (await readSnapshot(await HudiTable.open(table))).rows.map((row) => Number(row['id'])).sort((a, b) => a - b);
}

describe('ingest: objects the table cannot take', () => {
  let client: S3Client;
  let bucket: string;
  let landing: string;

  /** Land `body` and build the request ingestObject gets for it. */
  const land = async (table: Storage, name: string, body: string): Promise<IngestRequest> => {
    const key = `${landing}/in/${name}`;
    const etag = (await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }))).ETag!;
    return { source: s3LandingBucket(bucket, client), key, etag, table, tableProperties: PROPS, errorPrefix: `${landing}/errors/` };
  };
  const idOf = (request: IngestRequest) => ingestId(ingestSource(bucket, request.key, request.etag));
  /** A table with rows 1 and 2, from a first object. */
  const newTable = async (table: Storage) => {
    const first = await ingestObject(await land(table, `first-${randomUUID().slice(0, 8)}.jsonl`, jsonLines([user(1), user(2, { dt: 'p2' })])));
    assert.equal(first.outcome, 'ingested');
    return table;
  };

  before(async () => {
    client = s3ClientFromEnv();
    bucket = await testBucket();
    landing = `landing-${randomUUID().slice(0, 8)}`;
  });

  /**
   * The object is quarantined with one reason matching `reason`, and the only new objects under the table are the
   * ingest's record of it (.hoodie/.ingest/<id>.json and its claim folder).
   */
  async function assertQuarantined(table: Storage, request: IngestRequest, reason: RegExp): Promise<void> {
    const before = await listing(table);
    const rows = await rowIds(table);
    const result = await ingestObject(request);
    assert.equal(result.outcome, 'failed', JSON.stringify(result));
    assert.match(result.reason!, /^the table refused the object: /);
    assert.match(result.reason!, reason);
    const own = `${INGEST_FOLDER}/${idOf(request)}`;
    const after = await listing(table);
    const added = after.filter((entry) => !before.includes(entry));
    assert.deepEqual(
      added.filter((entry) => !entry.startsWith(`${own}.json `) && !entry.startsWith(`${own}/`)),
      [],
      'nothing but the ingest record is new under the table',
    );
    assert.ok(
      added.some((entry) => entry.startsWith(`${own}.json `)),
      'the object is recorded as handled',
    );
    assert.deepEqual(
      before.filter((entry) => !after.includes(entry)),
      [],
      'nothing under the table changed or went',
    );
    assert.deepEqual(await rowIds(table), rows);
    // The quarantined copy and its reason are in the landing bucket.
    const described = JSON.parse(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: result.errorsKey! }))).Body!.transformToString()) as {
      reason: string;
    };
    assert.equal(described.reason, result.reason);
    // A redelivery is a duplicate of the failure, and writes nothing either.
    const again = await ingestObject(request);
    assert.deepEqual([again.outcome, again.originalOutcome], ['duplicate', 'failed']);
  }

  it("refuses every record's bad partition value, lossy key, null ordering value and missing column; nothing reaches the table", async () => {
    const table = await newTable(openStorage(await s3TablePath('ingest-bad')));
    const cases: [string, readonly object[], RegExp][] = [
      ['hidden', [user(10, { dt: '.hidden' })], /row 1: partition path "\.hidden" has a folder "\.hidden" starting with "\.", which readers skip as hidden/],
      ['hoodie', [user(11, { dt: '.hoodie' })], /partition path "\.hoodie" has a folder "\.hoodie" starting with "\."/],
      ['dotdot', [user(12, { dt: '..' })], /partition path "\.\." has a folder "\.\." starting with "\."/],
      ['escape', [user(13, { dt: '../../escape' })], /partition path "\.\.\/\.\.\/escape" has 3 folder levels for 1 partition field\(s\) \(dt\)/],
      ['slash', [user(14, { dt: 'a/b' })], /partition path "a\/b" has 2 folder levels for 1 partition field\(s\) \(dt\): a partition value holds "\/"/],
      ['control', [user(15, { dt: 'a\u0001b' })], /holds the control character U\+0001/],
      ['fraction', [user(16, { id: 1.5 })], /row 1, column "id": 1\.5 \(DOUBLE\) does not fit the table's type BIGINT exactly \(it would be stored as 2\)/],
      [
        'null-ts',
        [user(1, { ts: null })],
        /the precombine field "ts" is null, so the record has no ordering value \(Hudi refuses it: "Ordering value is null"\)/,
      ],
      ['missing-column', [{ id: 17, ts: 1, dt: 'p1' }], /input lacks table column\(s\) name, which would be stored as NULL/],
      ['missing-ts', [{ id: 18, name: 'n', dt: 'p1' }], /input lacks table column\(s\) ts/],
    ];
    for (const [name, records, reason] of cases) {
      await assertQuarantined(table, await land(table, `${name}.jsonl`, jsonLines(records)), reason);
    }
  });

  it('leaves bad records among good ones out: reported in the errors file, never in the table', async () => {
    const table = await newTable(openStorage(await s3TablePath('ingest-mixed')));
    const request = await land(table, 'mixed.jsonl', jsonLines([user(3), user(4, { dt: '..' }), user(5, { dt: '.hidden' }), user(1, { ts: null })]));
    const result = await ingestObject(request);
    assert.equal(result.outcome, 'ingested');
    assert.deepEqual([result.inserted, result.badRecords], [1, 3]);
    assert.deepEqual(await rowIds(table), [1, 2, 3]);
    const folders = new Set((await table.listRecursive('')).map((object) => object.path.split('/')[0]));
    assert.deepEqual([...folders].sort(), ['.hoodie', 'p1', 'p2'], 'no partition folder of a bad record');
    const errors = (await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: result.errorsKey! }))).Body!.transformToString())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number; reason: string });
    assert.deepEqual(
      errors.map((e) => e.line),
      [2, 3, 4],
    );
    assert.match(errors[0]!.reason, /starting with "\."/);
    assert.match(errors[2]!.reason, /Ordering value is null/);
  });

  it('an empty object writes nothing: no commit, only its ingest record', async () => {
    const table = await newTable(openStorage(await s3TablePath('ingest-empty')));
    const before = await listing(table);
    const request = await land(table, 'empty.jsonl', '');
    const result = await ingestObject(request);
    assert.deepEqual([result.outcome, result.inserted, result.badRecords], ['ingested', 0, 0]);
    const own = `${INGEST_FOLDER}/${idOf(request)}`;
    assert.deepEqual(
      (await listing(table)).filter((entry) => !before.includes(entry) && !entry.startsWith(`${own}.json `) && !entry.startsWith(`${own}/`)),
      [],
    );
  });

  it('glob characters in a partition value are refused on a local table', async () => {
    const table = await newTable(openStorage(join(tempDir('ingest-local-'), 'table')));
    await assertQuarantined(
      table,
      await land(table, 'glob.jsonl', jsonLines([user(20, { dt: 'x*y' })])),
      /partition path "x\*y" holds the glob character "\*", which DuckDB would expand/,
    );
  });

  it('a truncated hoodie.properties fails the delivery (for a retry once fixed), before the object is claimed', async () => {
    const dir = join(tempDir('ingest-truncated-'), 'table');
    const table = await newTable(openStorage(dir));
    const file = join(dir, '.hoodie/hoodie.properties');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.slice(0, text.indexOf('\n', text.indexOf('hoodie.table.partition.fields=')) + 1));
    const before = await listing(table);
    const request = await land(table, 'after-truncation.jsonl', jsonLines([user(30)]));
    await assert.rejects(ingestObject(request), (error: unknown) => {
      assert.ok(error instanceof HudiError && !(error instanceof InputError), String(error));
      assert.match(error.message, /hoodie\.properties is corrupt: hoodie\.table\.checksum is missing/);
      return true;
    });
    assert.deepEqual(await listing(table), before, 'not even claimed');
  });
});

describe('ingest handler: events that are not S3 events', () => {
  it('null, a string, a number and malformed records are one EventError each; nothing is read or written', async () => {
    process.env['POWERTOOLS_LOG_LEVEL'] ??= 'ERROR';
    process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
    const tablePath = await s3TablePath('ingest-events');
    Object.assign(process.env, {
      TABLE_PATH: tablePath,
      TABLE_PROPERTIES: JSON.stringify(Object.fromEntries(PROPS)),
      INGEST_PREFIX: '',
      ERROR_PREFIX: 'errors/',
    });
    const { handler } = await import('../../functions/ingest.js');
    const sqs = (body: unknown) => ({ messageId: 'm-1', body, eventSource: 'aws:sqs' });
    const cases: [unknown, RegExp][] = [
      [null, /^the event: is null, not an S3 event/],
      [undefined, /^the event: is undefined, not an S3 event/],
      ['s3://bucket/key.jsonl', /^the event: is a string, not an S3 event/],
      [42, /^the event: is a number, not an S3 event/],
      [true, /^the event: is a boolean, not an S3 event/],
      [[], /^the event: is an array, not an S3 event/],
      [{}, /^the event: is an object without Records or an EventBridge S3 detail/],
      [{ Records: null }, /^the event: its Records is null, not a list of S3 event records/],
      [{ Records: 'x' }, /^the event: its Records is a string/],
      [{ Records: [null] }, /^the event: Records\[0\] is null, not an S3 event record/],
      [{ Records: [7] }, /^the event: Records\[0\] is a number, not an S3 event record/],
      [
        { Records: [{ s3: { bucket: { name: 'b' }, object: { key: 'k' } } }] },
        /^the event: Records\[0\] has no s3\.bucket\.name, s3\.object\.key or eventName \(strings\)/,
      ],
      [{ Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: null } }] }, /Records\[0\] has no s3\.bucket\.name/],
      [{ source: 'aws.s3', detail: null }, /^the event: an EventBridge S3 event without detail\.bucket\.name/],
      [{ source: 'aws.s3', 'detail-type': 'Object Created', detail: { bucket: { name: 'b' }, object: {} } }, /an EventBridge S3 event without/],
      [{ Records: [sqs('{}'), null] }, /^the event: SQS Records\[1\] is null/],
      [{ Records: [sqs(42)] }, /^the event: SQS Records\[0\] is a message without messageId or body/],
    ];
    for (const [event, message] of cases) {
      await assert.rejects(
        handler(event),
        (error: unknown) => {
          assert.ok(error instanceof EventError, `${JSON.stringify(event)}: expected an EventError, got ${String(error)}`);
          assert.match(error.message, message);
          assert.match(error.message, /invoke ingest with an S3 notification/);
          return true;
        },
        JSON.stringify(event),
      );
    }
    assert.deepEqual(await openStorage(tablePath).listRecursive(''), [], 'no table was created, nothing was written');
  });
});
