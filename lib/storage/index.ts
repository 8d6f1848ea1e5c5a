import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { S3Client } from '@aws-sdk/client-s3';
import { HudiError } from '../errors.js';
import { LocalStorage } from './local.js';
import type { Storage } from './port.js';
import { S3Storage } from './s3.js';

export { BoundedTasks, mapWithConcurrency, settleAll } from './concurrency.js';
export { countedStorage } from './counted.js';
export { deleteMany } from './delete-many.js';
export { normalizeEtag } from './etag.js';
export { LocalStorage } from './local.js';
export type { DeleteManyOptions, DeleteManyResult, Storage, StoredObject, VersionedDownload } from './port.js';
export {
  formatRequestCounts,
  RequestCounter,
  type RequestCounts,
  STORAGE_REQUEST_KINDS,
  type StorageRequestKind,
  sumRequestCounts,
  totalRequests,
} from './request-counts.js';
export {
  DEFAULT_MULTIPART_THRESHOLD,
  DEFAULT_PART_SIZE,
  DEFAULT_RANGE_SIZE,
  describeS3Error,
  downloadRequests,
  multipartPartSize,
  type S3Action,
  S3Storage,
  type S3StorageOptions,
  s3ClientFromEnv,
  uploadRequests,
} from './s3.js';

export interface OpenStorageOptions {
  /** S3 client to use for s3:// paths (default: configured from the AWS environment variables). */
  s3Client?: S3Client;
}

/**
 * The Storage for a table's base path: `s3://bucket/prefix` or `s3a://bucket/prefix` → S3Storage;
 * `file:///dir`, an absolute or a relative path → LocalStorage on the absolute directory.
 */
export function openStorage(tablePath: string, options: OpenStorageOptions = {}): Storage {
  const s3Location = parseS3Uri(tablePath);
  if (s3Location !== undefined) {
    return new S3Storage(s3Location.bucket, s3Location.prefix, { scheme: s3Location.scheme, ...(options.s3Client ? { client: options.s3Client } : {}) });
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(tablePath) && !tablePath.toLowerCase().startsWith('file://')) {
    throw new HudiError(`unsupported table path scheme`, { location: tablePath, fix: 'use s3://bucket/prefix or a local directory' });
  }
  const dir = tablePath.toLowerCase().startsWith('file://') ? fileURLToPath(tablePath) : tablePath;
  return new LocalStorage(isAbsolute(dir) ? dir : resolve(dir));
}

/** `s3://bucket/a/b/` → { scheme: 's3', bucket: 'bucket', prefix: 'a/b' }; undefined when not an s3:// or s3a:// URI. */
export function parseS3Uri(uri: string): { scheme: 's3' | 's3a'; bucket: string; prefix: string } | undefined {
  const match = /^(s3a?):\/\/([^/]*)\/?(.*)$/i.exec(uri);
  if (match === null) return undefined;
  const bucket = match[2] ?? '';
  if (bucket === '') {
    throw new HudiError('S3 path has no bucket', { location: uri, fix: 'write it as s3://bucket/prefix' });
  }
  return { scheme: match[1]!.toLowerCase() === 's3a' ? 's3a' : 's3', bucket, prefix: (match[3] ?? '').replace(/\/+$/, '') };
}
