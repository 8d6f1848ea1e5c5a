/**
 * S3 transfers of one large object (not a test): S3Storage's download in parallel ranges and upload in parts, at
 * several range/part sizes, beside one whole-object GET and one PUT; time, CPU and requests of each.
 *
 *   node infra/with-local-stack.mjs npm run bench:s3 -- [--mb 256] [--runs 3]
 *
 * Against the S3 endpoint in the environment (AWS_ENDPOINT_URL_S3; moto under with-local-stack, which measures our
 * side and the request counts, not S3's speed). DuckDB reading S3 directly needs its httpfs extension, which is not
 * bundled here (nor in the Lambda layer), so it is not among the ways measured.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CreateBucketCommand, DeleteBucketCommand } from '@aws-sdk/client-s3';
import { formatRequestCounts, S3Storage, type S3StorageOptions, s3ClientFromEnv } from '../lib/storage/index.js';

const { values: flags } = parseArgs({ options: { mb: { type: 'string', default: '256' }, runs: { type: 'string', default: '3' } } });
const MiB = 1024 * 1024;
if (!process.env.AWS_ENDPOINT_URL_S3) throw new Error('no AWS_ENDPOINT_URL_S3: run it as `node infra/with-local-stack.mjs npm run bench:s3`');

const client = s3ClientFromEnv();
const bucket = `bench-s3-${Date.now().toString(36)}`;
await client.send(new CreateBucketCommand({ Bucket: bucket }));
const work = mkdtempSync(join(tmpdir(), 'bench-s3-'));
const size = Number(flags.mb) * MiB;
const source = join(work, 'source.bin');
writeFileSync(source, randomBytes(size));

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(label: string, options: S3StorageOptions, run: (storage: S3Storage, index: number) => Promise<void>): Promise<void> {
  const seconds: number[] = [];
  const cpu: number[] = [];
  let counts = '';
  for (let index = 0; index < Number(flags.runs); index++) {
    const storage = new S3Storage(bucket, 'bench', { client, ...options });
    const usage = process.cpuUsage();
    const started = performance.now();
    await run(storage, index);
    seconds.push((performance.now() - started) / 1000);
    const used = process.cpuUsage(usage);
    cpu.push((used.user + used.system) / 1e6);
    counts = formatRequestCounts(storage.requests.snapshot());
  }
  const s = median(seconds);
  console.log(
    `${label.padEnd(44)} ${s.toFixed(2).padStart(6)} s ${(size / MiB / s).toFixed(0).padStart(5)} MB/s ${median(cpu).toFixed(2).padStart(5)} CPU s  ${counts}`,
  );
}

try {
  console.log(`${flags.mb} MiB object, ${flags.runs} run(s) each (median), endpoint ${process.env.AWS_ENDPOINT_URL_S3}`);
  for (const partMb of [8, 64]) {
    await measure(`upload, ${partMb} MiB parts, 4 in flight`, { partSize: partMb * MiB, multipartThreshold: partMb * MiB }, (storage, index) =>
      storage.uploadFile(`up-${partMb}-${index}.bin`, source),
    );
  }
  await measure('upload, one PUT', { multipartThreshold: 2 * size }, (storage, index) => storage.uploadFile(`put-${index}.bin`, source));
  await new S3Storage(bucket, 'bench', { client }).uploadFile('object.bin', source);
  for (const rangeMb of [8, 16, 64]) {
    await measure(`download, ${rangeMb} MiB ranges, 4 in flight`, { rangeSize: rangeMb * MiB }, (storage, index) =>
      storage.downloadFile('object.bin', join(work, `down-${rangeMb}-${index}.bin`)),
    );
  }
  await measure('download, one GET', { rangeSize: 2 * size }, (storage, index) => storage.downloadFile('object.bin', join(work, `get-${index}.bin`)));
} finally {
  const everything = new S3Storage(bucket, '', { client });
  await everything.delete((await everything.listRecursive('')).map((object) => object.path));
  await client.send(new DeleteBucketCommand({ Bucket: bucket }));
  rmSync(work, { recursive: true, force: true });
}
