/**
 * Ingest benchmark (not a test): N JSON-lines objects of M rows land in S3 and their S3 notifications in an SQS
 * queue, at once (a burst) and at a steady rate; a poller acting as Lambda's event source mapping (batch
 * size, batching window, one invocation at a time) hands them to the bundled ingest function (dist/functions/
 * ingest.mjs, warm, in this process) and deletes what it handled. Reported per run: objects/s, rows/s, commits and
 * latency from landing to the end of the invocation that committed the object (p50, p99). The baseline is the
 * one-commit-per-object path (INGEST_BATCH_MAX_BYTES=1: every object a commit of its own), measured the same way.
 *   npm run bench:ingest -- [--objects 40] [--rows 500] [--steady-objects 20] [--rate 4] [--batch-size 1000]
 *                           [--window 2] [--table-type COPY_ON_WRITE] [--no-baseline]
 * npm run bench:ingest runs it on moto's S3 and ElasticMQ's SQS (moto's scans the whole queue on every receive and
 * delete, which would dominate a burst); other servers, started the same way:
 *   npm run -s build && node infra/with-local-stack.mjs [--minio] [--elasticmq] node --import tsx bench/ingest.ts ...
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { generateUsers } from '../lib/cli/generate.js';
import { readSnapshot } from '../lib/read/reader.js';
import { lambdaContext, packageRoot, quietPowertools } from '../lib/serverless/local/lambda.js';
import { LocalQueue, type QueueMessage, s3PutEvent } from '../lib/serverless/local/sqs.js';
import { mapWithConcurrency } from '../lib/storage/concurrency.js';
import { openStorage, s3ClientFromEnv } from '../lib/storage/index.js';
import { HudiTable } from '../lib/table/table.js';
import { percentile } from './median.js';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '40' },
    rows: { type: 'string', default: '500' },
    'steady-objects': { type: 'string', default: '20' },
    rate: { type: 'string', default: '4' },
    'batch-size': { type: 'string', default: '1000' },
    window: { type: 'string', default: '2' },
    'table-type': { type: 'string', default: 'COPY_ON_WRITE' },
    'no-baseline': { type: 'boolean', default: false },
  },
});
const objects = Number(values.objects);
const rows = Number(values.rows);
const steadyObjects = Number(values['steady-objects']);
const rate = Number(values.rate);
const batchSize = Number(values['batch-size']);
const windowMs = Number(values.window) * 1000;
const s3 = s3ClientFromEnv();
const bucket = `bench-ingest-${randomUUID().slice(0, 8)}`;
await s3.send(new CreateBucketCommand({ Bucket: bucket }));
quietPowertools();
process.env['POWERTOOLS_LOG_LEVEL'] = 'ERROR';
const { handler } = (await import(pathToFileURL(join(packageRoot(), 'dist/functions/ingest.mjs')).href)) as {
  handler: (event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>;
};

interface RunResult {
  readonly label: string;
  readonly seconds: number;
  readonly commits: number;
  readonly invocations: number;
  readonly latencies: number[];
  readonly rowsRead: number;
  /** Seconds from the start until every object had landed, and spent inside the function's invocations. */
  readonly landingSeconds: number;
  readonly invokedSeconds: number;
}

/** One run: objects land (all at once, or `perSecond`), the poller ingests them into a fresh table. */
async function run(label: string, count: number, perSecond: number | undefined, perObjectCommits: boolean): Promise<RunResult> {
  const id = randomUUID().slice(0, 8);
  const tablePath = `s3://${bucket}/tables/${id}`;
  const queue = await LocalQueue.create(`landing-${id}`);
  Object.assign(process.env, {
    TABLE_PATH: tablePath,
    INGEST_PREFIX: 'landing/',
    ERROR_PREFIX: 'errors/',
    TABLE_PROPERTIES: [
      'hoodie.table.name=bench_ingest',
      `hoodie.table.type=${values['table-type']}`,
      'hoodie.datasource.write.recordkey.field=id',
      'hoodie.datasource.write.partitionpath.field=dt',
      'hoodie.datasource.write.precombine.field=createTime',
      'hoodie.clean.automatic=false',
      'hoodie.archive.automatic=false',
    ].join('\n'),
  });
  if (perObjectCommits) process.env['INGEST_BATCH_MAX_BYTES'] = '1';
  else delete process.env['INGEST_BATCH_MAX_BYTES'];

  const landedAt = new Map<string, number>();
  /** Put object `i`; its S3 notification, to send. */
  const put = async (i: number): Promise<string> => {
    const key = `landing/${id}/part-${String(i).padStart(5, '0')}.jsonl`;
    const body = `${[...generateUsers({ count: rows, seed: i + 1, idStart: i * rows + 1, days: 3 })].map((r) => JSON.stringify(r)).join('\n')}\n`;
    const written = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    landedAt.set(key, performance.now());
    return JSON.stringify(s3PutEvent(bucket, key, written.ETag!, Buffer.byteLength(body)));
  };
  const started = performance.now();
  let landedAll = started;
  // A burst: many producers put at once, and S3 delivers their notifications to the queue in parallel (here ten
  // objects' notifications a request); the latency of each object still counts from its own put.
  const tens = [...Array(Math.ceil(count / 10)).keys()].map((t) => [...Array(Math.min(10, count - t * 10)).keys()].map((j) => t * 10 + j));
  const landed =
    perSecond === undefined
      ? mapWithConcurrency(tens, 4, async (ten) => queue.sendAll(await Promise.all(ten.map(put))))
      : (async () => {
          for (let i = 0; i < count; i++) {
            const due = started + (i * 1000) / perSecond;
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
            await queue.send(await put(i));
          }
        })();
  const landing = landed.then(() => {
    landedAll = performance.now();
  });

  // The event source mapping: gather up to batchSize messages or until the window closes, invoke, delete the handled.
  // By key: a message received twice (a batch that outlived its visibility) counts once.
  const latencyOf = new Map<string, number>();
  let invocations = 0;
  let invokedMs = 0;
  const deadline = started + 30 * 60_000;
  while (latencyOf.size < count && performance.now() < deadline) {
    const batch: QueueMessage[] = [];
    let opened: number | undefined;
    while (batch.length < batchSize && (opened === undefined || performance.now() - opened < windowMs)) {
      const messages = await queue.receive();
      if (messages.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      if (messages.length > 0) opened ??= performance.now();
      batch.push(...messages);
    }
    const event = queue.eventOf(batch);
    invocations++;
    const invoked = performance.now();
    const response = await handler(event, lambdaContext('plan', 2048, 900_000));
    const ended = performance.now();
    invokedMs += ended - invoked;
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const handled = batch.filter((m) => !failed.has(m.MessageId));
    for (const message of handled) {
      const encoded = (JSON.parse(message.Body) as { Records: { s3: { object: { key: string } } }[] }).Records[0]!.s3.object.key;
      const key = decodeURIComponent(encoded.replace(/\+/g, ' '));
      if (!latencyOf.has(key)) latencyOf.set(key, ended - landedAt.get(key)!);
    }
    await queue.delete(handled);
  }
  await landing;
  const seconds = (performance.now() - started) / 1000;
  const table = openStorage(tablePath, { s3Client: s3 });
  const opened = await HudiTable.open(table);
  const commits = opened.timeline.completedWrites().length;
  const { rows: read } = await readSnapshot(opened);
  if (read.length !== count * rows) throw new Error(`${label}: the table holds ${read.length} rows, ${count * rows} landed`);
  return {
    label,
    seconds,
    commits,
    invocations,
    latencies: [...latencyOf.values()],
    rowsRead: read.length,
    landingSeconds: (landedAll - started) / 1000,
    invokedSeconds: invokedMs / 1000,
  };
}

const report = (result: RunResult, count: number): void => {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(
    `${result.label.padEnd(44)} ${result.seconds.toFixed(1).padStart(6)} s  ${(count / result.seconds).toFixed(1).padStart(6)} objects/s  ` +
      `${Math.round(result.rowsRead / result.seconds)
        .toLocaleString('en-US')
        .padStart(8)} rows/s  ${String(result.commits).padStart(4)} commits  ` +
      `${String(result.invocations).padStart(4)} invocations  latency p50 ${s(percentile(result.latencies, 0.5))}  p99 ${s(percentile(result.latencies, 0.99))}  ` +
      `(all landed after ${result.landingSeconds.toFixed(1)} s; ${result.invokedSeconds.toFixed(1)} s in the function)`,
  );
};

const server = (service: 'S3' | 'SQS') =>
  process.env[`HUDI_SERVERLESS_LOCAL_${service}`] ?? `the endpoint ${process.env[`AWS_ENDPOINT_URL_${service}`] ?? '(AWS)'}`;
console.log(`servers: S3 ${server('S3')}, SQS ${server('SQS')}`);
console.log(
  `ingest: ${objects} objects × ${rows} rows at once, ${steadyObjects} at ${rate}/s; batch size ${batchSize}, window ${windowMs / 1000} s; ${values['table-type']}; the bundled function, warm, one invocation at a time`,
);
for (const perObject of values['no-baseline'] ? [false] : [false, true]) {
  const path = perObject ? 'one commit per object' : 'micro-batched';
  report(await run(`burst, ${path}`, objects, undefined, perObject), objects);
  report(await run(`steady ${rate}/s, ${path}`, steadyObjects, rate, perObject), steadyObjects);
}
process.exit(0);
