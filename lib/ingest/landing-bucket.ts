/**
 * The landing bucket: where objects land (S3 puts them, an event names bucket, key and ETag) and where rejected
 * records and objects go (bad-records.ts). Reading a landed object is always of the version the event named.
 */
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { InputFormat } from '../engine/write.js';
import type { Storage, VersionedDownload } from '../storage/port.js';
import { S3Storage } from '../storage/s3.js';
import type { LandingBucket } from './types.js';

/** A landing bucket over a Storage rooted at the bucket (keys are paths in it). */
export function landingBucket(bucket: string, storage: Storage & VersionedDownload): LandingBucket {
  return {
    bucket,
    uriOf: (key) => storage.uriOf(key),
    downloadVersion: (key, etag, localFile) => storage.downloadFileIfMatch(key, etag, localFile),
    put: (key, body) => storage.put(key, body),
    uploadFile: (key, localFile) => storage.uploadFile(key, localFile),
  };
}

/** The landing bucket on S3: downloads are conditional (If-Match), so a later overwrite is never read under this ETag. */
export function s3LandingBucket(bucket: string, client: S3Client): LandingBucket {
  return landingBucket(bucket, new S3Storage(bucket, '', { client }));
}

/** Input format from the key's extension (`.gz` allowed after it), else the default. */
export function formatOfKey(key: string, defaultFormat?: InputFormat): InputFormat | undefined {
  const name = key.toLowerCase().replace(/\.gz$/, '');
  if (/\.(jsonl|json|ndjson)$/.test(name)) return 'jsonl';
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.parquet')) return 'parquet';
  return defaultFormat;
}

export interface LandedObject {
  /** The local copy. */
  readonly file: string;
  /** Undefined when neither the key nor the configuration names one. */
  readonly format: InputFormat | undefined;
  /** The key ends in `.gz`. */
  readonly compressed: boolean;
}

/** Download the version with `etag` into `workDir`; undefined when the key holds another version now, or none. */
export async function downloadLanded(
  landing: LandingBucket,
  key: string,
  etag: string,
  workDir: string,
  defaultFormat: InputFormat | undefined,
): Promise<LandedObject | undefined> {
  const compressed = /\.gz$/i.test(key);
  const format = formatOfKey(key, defaultFormat);
  // Keep the extension: DuckDB picks decompression from it.
  const file = join(workDir, `object.${format ?? 'unknown'}${compressed ? '.gz' : ''}`);
  return (await landing.downloadVersion(key, etag, file)) ? { file, format, compressed } : undefined;
}
