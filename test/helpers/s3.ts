/**
 * S3 for tests: the local stack's moto server by default, or MinIO / AWS when the environment points there.
 * Set HUDI_SERVERLESS_TEST_BUCKET to use an existing bucket (on AWS); otherwise a fresh bucket is created.
 */

import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { s3ClientFromEnv } from '../../lib/storage/s3.js';

export function requireS3(): void {
  if (!process.env['AWS_ENDPOINT_URL_S3'] && !process.env['AWS_ENDPOINT_URL'] && !process.env['HUDI_SERVERLESS_TEST_BUCKET']) {
    throw new Error(
      'no S3 endpoint: run the tests with `npm test` (it starts the local stack), or set AWS_ENDPOINT_URL_S3 (MinIO) or HUDI_SERVERLESS_TEST_BUCKET (AWS)',
    );
  }
}

let bucketPromise: Promise<string> | undefined;

/** One bucket per test process. */
export function testBucket(): Promise<string> {
  requireS3();
  bucketPromise ??= (async () => {
    const existing = process.env['HUDI_SERVERLESS_TEST_BUCKET'];
    if (existing) return existing;
    const bucket = `hudi-test-${randomUUID().slice(0, 8)}`;
    await s3ClientFromEnv().send(new CreateBucketCommand({ Bucket: bucket }));
    return bucket;
  })();
  return bucketPromise;
}

/** A fresh s3:// table path. */
export async function s3TablePath(name: string): Promise<string> {
  return `s3://${await testBucket()}/${name}-${randomUUID().slice(0, 8)}`;
}

function localFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Copy a local table folder to S3 as it is. */
export async function uploadTable(localDir: string, s3Path: string): Promise<Storage> {
  const storage = openStorage(s3Path);
  await Promise.all(localFiles(localDir).map((file) => storage.uploadFile(relative(localDir, file).split('\\').join('/'), file)));
  return storage;
}

export { s3PutEvent } from '../../lib/serverless/local/sqs.js';
