/**
 * `npm run demo:stream` end to end (dist/demo-stream.mjs, `npm run build`), on the local stack: what it leaves behind
 * is checked apart from what it prints. The rows our reader reads are the newest version of every key among the
 * objects left in the landing prefix; every SQS batch became one delta commit (active or archived); compaction,
 * clean and archive ran; Glue holds `users_ro` and `users_rt` over the table's partitions, synced to the last commit.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'node:test';
import { GetPartitionsCommand, GetTableCommand } from '@aws-sdk/client-glue';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { archivedInstants, archiveFolder, readArchivedRecords } from '../../lib/archival/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage, s3ClientFromEnv } from '../../lib/storage/index.js';
import { glueClientFor } from '../../lib/sync/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { runBuilt } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { requireS3 } from '../helpers/s3.js';

const BURSTS = 3;
const OBJECTS = 3;
const BATCH_SIZE = 2;

type Landed = Record<string, string | number>;

const canonical = (row: object): string => JSON.stringify(Object.fromEntries(Object.entries(row).sort(([a], [b]) => a.localeCompare(b))));

async function landedRows(bucket: string): Promise<Landed[]> {
  const s3 = s3ClientFromEnv();
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'landing/' }));
  const keys = (listed.Contents ?? []).map((object) => object.Key!);
  assert.equal(keys.length, BURSTS * OBJECTS, `landed objects: ${keys.join(', ')}`);
  const rows: Landed[] = [];
  for (const key of keys) {
    const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
    rows.push(...body.split('\n').flatMap((line) => (line.trim() === '' ? [] : [JSON.parse(line) as Landed])));
  }
  return rows;
}

test('the stream demo lands, ingests, compacts, cleans, archives and syncs the catalog', { timeout: 900_000 }, async () => {
  requireS3();
  const id = randomUUID().slice(0, 8);
  const bucket = `stream-demo-${id}`;
  const database = `stream_demo_${id}`;
  const args = ['--bursts', String(BURSTS), '--objects', String(OBJECTS), '--rows', '40', '--batch-size', String(BATCH_SIZE), '--bucket', bucket];
  const run = runBuilt(join(REPO_ROOT, 'dist', 'demo-stream.mjs'), [...args, '--database', database]);
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /snapshot query \d+ — the newest version of every key/);

  // The rows: per key, the landed version with the latest createTime (the demo's updates are newer and same-day).
  const newest = new Map<number, Landed>();
  for (const row of await landedRows(bucket)) {
    const seen = newest.get(Number(row['id']));
    if (seen === undefined || String(row['createTime']) > String(seen['createTime'])) newest.set(Number(row['id']), row);
  }
  assert.ok(newest.size < BURSTS * OBJECTS * 40, 'some landed rows are updates');
  const storage = openStorage(`s3://${bucket}/tables/users`);
  const table = await HudiTable.open(storage);
  const read = (await readSnapshot(table)).rows.map((row) => canonical({ ...row, id: Number(row['id']) })).sort();
  assert.deepEqual(read, [...newest.values()].map(canonical).sort());

  // The timeline, active and archived: one delta commit per SQS batch, and the services' instants.
  const archived = archivedInstants((await readArchivedRecords(storage, archiveFolder(table.config.archiveLogFolder))).records)
    .map(({ instant }) => instant)
    .filter((instant) => instant.state === 'COMPLETED');
  assert.ok(archived.length > 0, 'the archive moved instants off the active timeline');
  const completed = [...archived, ...table.timeline.completed()];
  const times = (action: string) => new Set(completed.filter((instant) => instant.action === action).map((instant) => instant.time));
  assert.equal(times('deltacommit').size, BURSTS * Math.ceil(OBJECTS / BATCH_SIZE), 'one delta commit per batch');
  assert.ok(times('commit').size >= 1, 'a compaction committed');
  assert.ok(times('clean').size >= 1, 'a clean completed');
  assert.deepEqual(table.timeline.pending(), [], 'nothing left pending');

  // The catalog: the read-optimized and real-time tables over the table's partitions, synced to the last delta commit.
  const glue = glueClientFor({ region: undefined, endpoint: undefined });
  const lastDeltaCommit = [...times('deltacommit')].sort().at(-1);
  const partitions = (await table.fileSystemView()).partitionPaths().sort();
  for (const [name, inputFormat] of [
    ['users_ro', 'org.apache.hudi.hadoop.HoodieParquetInputFormat'],
    ['users_rt', 'org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat'],
  ] as const) {
    const entry = (await glue.send(new GetTableCommand({ DatabaseName: database, Name: name }))).Table;
    assert.equal(entry?.StorageDescriptor?.InputFormat, inputFormat, name);
    assert.equal(entry?.Parameters?.['last_commit_time_sync'], lastDeltaCommit, name);
    const synced = (await glue.send(new GetPartitionsCommand({ DatabaseName: database, TableName: name }))).Partitions ?? [];
    assert.deepEqual(synced.map((partition) => `dt=${partition.Values?.[0]}`).sort(), partitions, name);
  }
});
