/**
 * The S3 adapter of the storage port: put-if-absent (If-None-Match) for the timeline, ETag-conditional downloads
 * (If-Match), parallel ranged GETs (16 MiB) streamed into local files, multipart uploads in 64 MiB parts (one PUT
 * below a part) aborted on failure, a bound on the upload bodies held in memory at once, batched deletes, listings,
 * and a count of every request it sends by kind (request-counts.ts), which the run reports and the cost model use.
 *
 * Why one long file: every operation shares the client, the error translation (not found, precondition failed,
 * access denied with the permission needed) and the request counting; split, each part would re-export the
 * others' internals.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { AlreadyExistsError, HudiError, NotFoundError, PreconditionFailedError } from '../errors.js';
import { writeAt } from '../util/file-range.js';
import { nonEmpty } from '../util/text.js';
import { mapWithConcurrency, Slots } from './concurrency.js';
import { normalizeEtag } from './etag.js';
import type { DeleteManyOptions, DeleteManyResult, PutCondition, Storage, StoredObject, VersionedDownload, VersionedObject } from './port.js';
import { RequestCounter, type RequestCounts, type StorageRequestKind } from './request-counts.js';

const MiB = 1024 * 1024;
/** S3 allows at most 10,000 parts per multipart upload, each at least 5 MiB but the last. */
const MAX_PARTS = 10_000;
const MIN_PART_SIZE = 5 * MiB;
/** DeleteObjects takes at most 1,000 keys per call. */
const DELETE_BATCH = 1_000;
/** DeleteObjects requests in flight at once for deleteMany unless told otherwise. */
const DEFAULT_DELETE_CONCURRENCY = 4;

/**
 * Upload parts of 64 MiB: S3 bills each part as a PUT, so a 1 GB output is 16 parts + 2 calls instead of 128 + 2 at
 * 8 MiB (the cost report's multipart figure). Four in flight hold 256 MiB, within every function the template sizes:
 * four in all, however many files upload at once (S3Storage's uploadBuffers).
 */
export const DEFAULT_PART_SIZE = 64 * MiB;
/** Files below one part go in one PUT (a single-part multipart upload is three requests for the same bytes). */
export const DEFAULT_MULTIPART_THRESHOLD = DEFAULT_PART_SIZE;
/**
 * Download ranges of 16 MiB: a GET costs a twelfth of a PUT, and smaller ranges keep four connections busy on the
 * 100 MB files a table of that shape has (seven ranges rather than two).
 */
export const DEFAULT_RANGE_SIZE = 16 * MiB;
export const DEFAULT_TRANSFER_CONCURRENCY = 4;

export interface S3StorageOptions {
  /** Defaults to a client configured from the standard AWS environment variables. */
  client?: S3Client;
  /** Size of upload parts (default DEFAULT_PART_SIZE, 64 MiB; at least S3's 5 MiB). */
  partSize?: number;
  /** Files at least this large upload as multipart (default DEFAULT_MULTIPART_THRESHOLD, one part). */
  multipartThreshold?: number;
  /** Size of the ranges a download GETs in parallel (default DEFAULT_RANGE_SIZE, 16 MiB). */
  rangeSize?: number;
  /**
   * Ranges in flight at once for one download (default 4), and upload bodies held in memory at once by this storage
   * and every view withRequestCounter makes of it, however many uploads run (parts, and files below a part).
   */
  transferConcurrency?: number;
  /** Where the requests this storage sends are counted, besides its own `requests` (a run's or a group's tally). */
  counters?: readonly RequestCounter[];
  /** Shared by a storage's views (withRequestCounter): the upload bodies in memory at once. Made from transferConcurrency. */
  uploadBuffers?: Slots;
  /**
   * The scheme of the URIs this storage gives out (`uri`, `uriOf`): `s3a` when the table was named `s3a://…`, as
   * open-source Spark's Hadoop S3A names it. Hudi opens the file paths of a clustering plan with the file system of
   * the table's base path and refuses another scheme ("Wrong FS"), so plans keep the one the user gave. Default s3.
   */
  scheme?: 's3' | 's3a';
}

/** The part size of a multipart upload of `size` bytes: the one asked for, raised to S3's minimum and to fit 10,000 parts. */
export function multipartPartSize(size: number, partSize = DEFAULT_PART_SIZE): number {
  return Math.max(partSize, MIN_PART_SIZE, Math.ceil(size / MAX_PARTS));
}

/** The requests uploadFile sends for a file of `size` bytes (the cost report counts with it; storage.test.ts checks it). */
export function uploadRequests(size: number, options: Pick<S3StorageOptions, 'partSize' | 'multipartThreshold'> = {}): RequestCounts {
  if (size < (options.multipartThreshold ?? DEFAULT_MULTIPART_THRESHOLD)) return { put: 1 };
  return { multipartCreate: 1, multipartPart: Math.ceil(size / multipartPartSize(size, options.partSize)), multipartComplete: 1 };
}

/** The requests downloadFile sends for an object of `size` bytes: one GET per range (an empty object takes two). */
export function downloadRequests(size: number, options: Pick<S3StorageOptions, 'rangeSize'> = {}): RequestCounts {
  return { get: size === 0 ? 2 : Math.ceil(size / (options.rangeSize ?? DEFAULT_RANGE_SIZE)) };
}

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * An S3 client configured from the standard AWS environment variables: region from AWS_REGION or
 * AWS_DEFAULT_REGION (default us-east-1), endpoint from AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL,
 * path-style addressing when AWS_S3_FORCE_PATH_STYLE=true or a custom endpoint is set (MinIO, moto);
 * credentials from the SDK's default chain.
 */
export function s3ClientFromEnv(env: Environment = process.env): S3Client {
  const config: S3ClientConfig = {
    region: nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1',
  };
  const endpoint = nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  if (endpoint !== undefined) config.endpoint = endpoint;
  config.forcePathStyle = env.AWS_S3_FORCE_PATH_STYLE?.trim().toLowerCase() === 'true' || endpoint !== undefined;
  const client = new S3Client(config);
  signUploadBodiesUnsigned(client);
  return client;
}

/** SigV4's value for a body left out of the signature. */
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/**
 * Upload bodies sent over HTTPS are signed as UNSIGNED-PAYLOAD, as the AWS SDK for Java v2 signs uploads that carry
 * a checksum: TLS guards them in transit and S3 checks the CRC32 the SDK sends in a signed header, so hashing every
 * byte with SHA-256 for the signature (a good part of an upload's CPU) buys nothing.
 * Over plain HTTP (a local test server) the body stays signed: nothing else would guard it.
 */
export function signUploadBodiesUnsigned(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { protocol?: unknown; headers?: Record<string, string> };
      if ((context.commandName === 'UploadPartCommand' || context.commandName === 'PutObjectCommand') && request.protocol === 'https:' && request.headers) {
        request.headers['x-amz-content-sha256'] = UNSIGNED_PAYLOAD;
      }
      return next(args);
    },
    { step: 'build', name: 'signUploadBodiesUnsigned' },
  );
}

/** A Storage over `s3://bucket/prefix` (or `s3a://`, see S3StorageOptions.scheme). */
export class S3Storage implements Storage, VersionedDownload {
  readonly uri: string;
  readonly scheme: 's3' | 's3a';
  readonly bucket: string;
  /** Key prefix of the root, without leading or trailing '/'; '' for the bucket's root. */
  readonly prefix: string;
  /** Every request this storage (and the views withRequestCounter made of it) sent, by kind. */
  readonly requests: RequestCounter;
  private readonly client: S3Client;
  private readonly options: S3StorageOptions;
  private readonly partSize: number;
  private readonly multipartThreshold: number;
  private readonly rangeSize: number;
  private readonly transferConcurrency: number;
  private readonly counters: readonly RequestCounter[];
  /** Upload bodies read into memory wait for one of these: concurrent uploads share them, so memory stays bounded. */
  private readonly uploadBuffers: Slots;

  constructor(bucket: string, prefix = '', options: S3StorageOptions = {}) {
    this.bucket = bucket;
    this.prefix = trimSlashes(prefix);
    this.scheme = options.scheme ?? 's3';
    this.uri = this.prefix === '' ? `${this.scheme}://${bucket}` : `${this.scheme}://${bucket}/${this.prefix}`;
    this.client = options.client ?? s3ClientFromEnv();
    this.partSize = options.partSize ?? DEFAULT_PART_SIZE;
    this.multipartThreshold = options.multipartThreshold ?? DEFAULT_MULTIPART_THRESHOLD;
    this.rangeSize = options.rangeSize ?? DEFAULT_RANGE_SIZE;
    this.transferConcurrency = options.transferConcurrency ?? DEFAULT_TRANSFER_CONCURRENCY;
    this.uploadBuffers = options.uploadBuffers ?? new Slots(this.transferConcurrency);
    this.options = { ...options, client: this.client, uploadBuffers: this.uploadBuffers };
    this.requests = options.counters?.[0] ?? new RequestCounter();
    this.counters = options.counters ?? [this.requests];
  }

  /** The same storage (client, root, sizes), counting its requests in `counter` too: one group's or one run's tally. */
  withRequestCounter(counter: RequestCounter): S3Storage {
    return new S3Storage(this.bucket, this.prefix, { ...this.options, counters: [...this.counters, counter] });
  }

  /** Count one request about to be sent (a failed request is billed too). */
  private count(kind: StorageRequestKind): S3Client {
    for (const counter of this.counters) counter.add(kind);
    return this.client;
  }

  uriOf(path: string): string {
    return `${this.scheme}://${this.bucket}/${this.keyOf(path)}`;
  }

  async get(path: string): Promise<Uint8Array> {
    const key = this.keyOf(path);
    try {
      const response = await this.count('get').send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return await bodyBytes(response);
    } catch (error) {
      throw this.describeError(error, 'read', key);
    }
  }

  async getRange(path: string, start: number, end: number): Promise<Uint8Array> {
    if (end <= start) return new Uint8Array(0);
    const key = this.keyOf(path);
    try {
      const response = await this.count('get').send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end - 1}` }));
      return await bodyBytes(response);
    } catch (error) {
      // 416: the range starts at or past the end; nothing there, as with a local file.
      if (httpStatusOf(error) === 416) return new Uint8Array(0);
      throw this.describeError(error, 'read', key);
    }
  }

  async head(path: string): Promise<StoredObject | undefined> {
    const key = this.keyOf(path);
    try {
      const response = await this.count('head').send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        path: this.relativeOf(key),
        size: response.ContentLength ?? 0,
        modifiedMs: response.LastModified?.getTime() ?? 0,
      };
    } catch (error) {
      // HEAD responses carry no error body, so a missing bucket also looks like a plain 404 here.
      if (httpStatusOf(error) === 404) return undefined;
      throw this.describeError(error, 'read', key);
    }
  }

  async put(path: string, body: Uint8Array | string): Promise<void> {
    const key = this.keyOf(path);
    try {
      const bytes = uploadBytes(body);
      await this.count('put').send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentLength: bytes.length }));
    } catch (error) {
      throw this.describeError(error, 'write', key);
    }
  }

  async putIfAbsent(path: string, body: Uint8Array | string): Promise<void> {
    const key = this.keyOf(path);
    try {
      const bytes = uploadBytes(body);
      await this.count('put').send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentLength: bytes.length, IfNoneMatch: '*' }));
    } catch (error) {
      // 412: the object exists; 409: a concurrent conditional write of the same key is in progress.
      const status = httpStatusOf(error);
      const name = errorNameOf(error);
      if (status === 412 || status === 409 || name === 'PreconditionFailed' || name === 'ConditionalRequestConflict') {
        throw new AlreadyExistsError(this.uriOf(path));
      }
      throw this.describeError(error, 'write', key);
    }
  }

  async getVersioned(path: string): Promise<VersionedObject | undefined> {
    const key = this.keyOf(path);
    try {
      const response = await this.count('get').send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { bytes: await bodyBytes(response), etag: normalizeEtag(response.ETag ?? '') };
    } catch (error) {
      const described = this.describeError(error, 'read', key);
      if (described instanceof NotFoundError) return undefined;
      throw described;
    }
  }

  async putConditional(path: string, body: Uint8Array | string, condition: PutCondition): Promise<string> {
    const key = this.keyOf(path);
    const precondition = 'ifMatch' in condition ? { IfMatch: `"${normalizeEtag(condition.ifMatch)}"` } : { IfNoneMatch: '*' };
    try {
      const bytes = uploadBytes(body);
      const response = await this.count('put').send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentLength: bytes.length, ...precondition }),
      );
      return normalizeEtag(response.ETag ?? '');
    } catch (error) {
      // Only 412 says another version is there; 409 (a concurrent conditional write) and a 404 on If-Match are
      // left undecided, as Hudi's S3StorageLockClient leaves them.
      if (httpStatusOf(error) === 412 || errorNameOf(error) === 'PreconditionFailed') throw new PreconditionFailedError(this.uriOf(path));
      throw this.describeError(error, 'write', key);
    }
  }

  async uploadFile(path: string, localFile: string): Promise<void> {
    const key = this.keyOf(path);
    let size: number;
    try {
      size = (await stat(localFile)).size;
    } catch (error) {
      if (errorCode(error) === 'ENOENT') throw new NotFoundError(localFile, 'the local file to upload does not exist');
      throw error;
    }
    if (size < this.multipartThreshold) {
      await this.uploadBuffers.use(async () => this.put(path, new Uint8Array(await readFile(localFile))));
      return;
    }
    await this.uploadMultipart(key, localFile, size);
  }

  async downloadFile(path: string, localFile: string): Promise<void> {
    const key = this.keyOf(path);
    const target = resolve(localFile);
    await mkdir(dirname(target), { recursive: true });
    // Written beside the target and renamed at the end, so a failed download leaves no partial file.
    const temp = join(dirname(target), `.${basename(target)}.download-${randomBytes(6).toString('hex')}`);
    try {
      await this.downloadTo(key, temp);
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }

  async downloadFileIfMatch(path: string, etag: string, localFile: string): Promise<boolean> {
    const key = this.keyOf(path);
    let body: GetObjectCommandOutput['Body'];
    try {
      // One GET conditional on the ETag (If-Match), so that a later overwrite is never read under this version's tag;
      // once it answers, S3 streams that version to the end.
      body = (await this.count('get').send(new GetObjectCommand({ Bucket: this.bucket, Key: key, IfMatch: `"${normalizeEtag(etag)}"` }))).Body;
    } catch (error) {
      // 412: the key holds another version now; 404: none.
      const status = httpStatusOf(error);
      if (status === 412 || status === 404) return false;
      throw this.describeError(error, 'read', key);
    }
    const target = resolve(localFile);
    await mkdir(dirname(target), { recursive: true });
    const temp = join(dirname(target), `.${basename(target)}.download-${randomBytes(6).toString('hex')}`);
    try {
      const out = createWriteStream(temp);
      if (body instanceof Readable) {
        await pipeline(body, out);
      } else {
        // Not Node's stream (other runtimes): the SDK's byte helper.
        out.end(body === undefined ? new Uint8Array(0) : await body.transformToByteArray());
        await finished(out);
      }
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error instanceof HudiError ? error : this.describeError(error, 'read', key);
    }
    return true;
  }

  async listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }> {
    const listPrefix = this.folderPrefix(dir);
    const files: StoredObject[] = [];
    const dirs: string[] = [];
    for await (const page of this.listPages(listPrefix, '/')) {
      for (const common of page.CommonPrefixes ?? []) {
        if (common.Prefix !== undefined) dirs.push(common.Prefix.slice(listPrefix.length).replace(/\/$/, ''));
      }
      for (const object of page.Contents ?? []) {
        // A key equal to the folder itself is a console-made "folder" marker, not a file.
        if (object.Key === undefined || object.Key === listPrefix) continue;
        files.push(this.storedObjectOf(object.Key, object.Size, object.LastModified));
      }
    }
    return { files, dirs };
  }

  async listRecursive(dir: string): Promise<StoredObject[]> {
    const listPrefix = this.folderPrefix(dir);
    const objects: StoredObject[] = [];
    for await (const page of this.listPages(listPrefix, undefined)) {
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined || object.Key.endsWith('/')) continue; // folder markers
        objects.push(this.storedObjectOf(object.Key, object.Size, object.LastModified));
      }
    }
    return objects;
  }

  async delete(paths: readonly string[]): Promise<void> {
    for (let offset = 0; offset < paths.length; offset += DELETE_BATCH) {
      const keys = paths.slice(offset, offset + DELETE_BATCH).map((path) => this.keyOf(path));
      let failures;
      try {
        const response = await this.count('delete').send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: keys.map((key) => ({ Key: key })), Quiet: true },
          }),
        );
        failures = response.Errors ?? [];
      } catch (error) {
        throw this.describeError(error, 'delete', keys[0] ?? '');
      }
      const firstFailure = failures[0];
      if (firstFailure !== undefined) {
        const key = firstFailure.Key ?? '';
        if (firstFailure.Code === 'AccessDenied') throw describeS3Error(firstFailure, { bucket: this.bucket, key, action: 'delete' });
        throw new HudiError(`could not delete ${failures.length} object(s): ${firstFailure.Code ?? 'error'} ${firstFailure.Message ?? ''}`.trim(), {
          location: `s3://${this.bucket}/${key}`,
        });
      }
    }
  }

  async deleteMany(paths: readonly string[], options: DeleteManyOptions = {}): Promise<DeleteManyResult> {
    const batches: string[][] = [];
    for (let offset = 0; offset < paths.length; offset += DELETE_BATCH) batches.push(paths.slice(offset, offset + DELETE_BATCH));
    const results = await mapWithConcurrency(batches, options.concurrency ?? DEFAULT_DELETE_CONCURRENCY, async (batch) => {
      const keyToPath = new Map(batch.map((path) => [this.keyOf(path), path]));
      let response;
      try {
        response = await this.count('delete').send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: [...keyToPath.keys()].map((key) => ({ Key: key })), Quiet: true },
          }),
        );
      } catch (error) {
        throw this.describeError(error, 'delete', keyToPath.keys().next().value ?? '');
      }
      // Quiet mode lists only the keys that failed; every other key is gone (missing ones count as deleted).
      const failed = (response.Errors ?? []).map((failure) => ({
        path: keyToPath.get(failure.Key ?? '') ?? failure.Key ?? '',
        reason: `${failure.Code ?? 'error'}${failure.Message ? `: ${failure.Message}` : ''}`,
      }));
      const failedPaths = new Set(failed.map((failure) => failure.path));
      return { deleted: batch.filter((path) => !failedPaths.has(path)), failed };
    });
    return { deleted: results.flatMap((result) => result.deleted), failed: results.flatMap((result) => result.failed) };
  }

  private async uploadMultipart(key: string, localFile: string, size: number): Promise<void> {
    const partSize = multipartPartSize(size, this.partSize);
    const partCount = Math.ceil(size / partSize);
    let uploadId: string | undefined;
    const file = await open(localFile, 'r');
    try {
      // CRC32 named on create and on every part so S3 checks each part and the whole (composite) object.
      const created = await this.count('multipartCreate').send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ChecksumAlgorithm: 'CRC32' }));
      uploadId = created.UploadId;
      if (uploadId === undefined) throw new HudiError('S3 returned no upload id', { location: `s3://${this.bucket}/${key}` });
      const activeUploadId = uploadId;
      const partNumbers = Array.from({ length: partCount }, (_, index) => index + 1);
      const parts = await mapWithConcurrency(partNumbers, this.transferConcurrency, async (partNumber): Promise<CompletedPart> => {
        const offset = (partNumber - 1) * partSize;
        const uploaded = await this.uploadBuffers.use(async () =>
          this.count('multipartPart').send(
            new UploadPartCommand({
              Bucket: this.bucket,
              Key: key,
              UploadId: activeUploadId,
              PartNumber: partNumber,
              Body: await readExactly(file, offset, Math.min(partSize, size - offset)),
              ChecksumAlgorithm: 'CRC32',
            }),
          ),
        );
        return { PartNumber: partNumber, ETag: uploaded.ETag, ...(uploaded.ChecksumCRC32 ? { ChecksumCRC32: uploaded.ChecksumCRC32 } : {}) };
      });
      await this.count('multipartComplete').send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: activeUploadId, MultipartUpload: { Parts: parts } }),
      );
    } catch (error) {
      if (uploadId !== undefined) {
        // Abandoned parts are billed until aborted.
        await this.count('multipartAbort')
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
          .catch(() => undefined);
      }
      throw error instanceof HudiError ? error : this.describeError(error, 'write', key);
    } finally {
      await file.close();
    }
  }

  /**
   * First range tells the size; the rest come in parallel, pinned to the first response's ETag. Each range is written
   * as its bytes arrive, so a download holds a few socket buffers, not its ranges.
   */
  private async downloadTo(key: string, localFile: string): Promise<void> {
    const file = await open(localFile, 'w');
    try {
      let first: GetObjectCommandOutput;
      try {
        first = await this.count('get').send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=0-${this.rangeSize - 1}` }));
      } catch (error) {
        // An empty object has no byte 0: S3 answers 416 to any range.
        if (httpStatusOf(error) !== 416) throw error;
        first = await this.count('get').send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      }
      const firstLength = await writeBodyAt(file, first, 0);
      const totalSize = totalSizeOf(first.ContentRange) ?? firstLength;
      const remainingStarts: number[] = [];
      for (let start = firstLength; start < totalSize; start += this.rangeSize) remainingStarts.push(start);
      await mapWithConcurrency(remainingStarts, this.transferConcurrency, async (start) => {
        const end = Math.min(start + this.rangeSize, totalSize);
        const part = await this.count('get').send(
          new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end - 1}`, IfMatch: first.ETag }),
        );
        const length = await writeBodyAt(file, part, start, end - start);
        if (length !== end - start) {
          throw new HudiError(`expected ${end - start} bytes at offset ${start}, got ${length}`, {
            location: `s3://${this.bucket}/${key}`,
            fix: 'the object changed during the download; retry',
          });
        }
      });
    } catch (error) {
      if (httpStatusOf(error) === 412) {
        throw new HudiError('object was replaced during the download', { location: `s3://${this.bucket}/${key}`, fix: 'retry', cause: error });
      }
      throw error instanceof HudiError ? error : this.describeError(error, 'read', key);
    } finally {
      await file.close();
    }
  }

  private async *listPages(listPrefix: string, delimiter: string | undefined): AsyncGenerator<ListObjectsV2CommandOutput> {
    let continuationToken: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.count('list').send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: listPrefix,
            Delimiter: delimiter,
            ContinuationToken: continuationToken,
          }),
        );
      } catch (error) {
        throw this.describeError(error, 'list', listPrefix);
      }
      yield page;
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
  }

  private keyOf(path: string): string {
    const relativePath = path.replace(/^\/+/, '');
    return this.prefix === '' ? relativePath : `${this.prefix}/${relativePath}`;
  }

  /** The key prefix that lists a folder's contents: '' for the bucket root, else ending in '/'. */
  private folderPrefix(dir: string): string {
    const key = trimSlashes(this.keyOf(dir));
    return key === '' ? '' : `${key}/`;
  }

  private relativeOf(key: string): string {
    return this.prefix === '' ? key : key.slice(this.prefix.length + 1);
  }

  private storedObjectOf(key: string, size: number | undefined, modified: Date | undefined): StoredObject {
    return { path: this.relativeOf(key), size: size ?? 0, modifiedMs: modified?.getTime() ?? 0 };
  }

  /** Turn an SDK error into one that says which bucket or object and what to do. */
  private describeError(error: unknown, action: S3Action, key: string): unknown {
    if (error instanceof HudiError) return error;
    return describeS3Error(error, { bucket: this.bucket, key, action });
  }
}

export type S3Action = 'read' | 'write' | 'list' | 'delete';

const PERMISSION_FOR: Record<S3Action, string> = {
  read: 's3:GetObject',
  write: 's3:PutObject',
  list: 's3:ListBucket',
  delete: 's3:DeleteObject',
};

/**
 * Map an S3 SDK error to a HudiError naming the bucket or object and the fix:
 * NoSuchBucket, NoSuchKey (NotFoundError), AccessDenied (with the IAM permission needed), anything else.
 */
export function describeS3Error(error: unknown, where: { bucket: string; key: string; action: S3Action }): HudiError {
  const { bucket, key, action } = where;
  const objectUri = `s3://${bucket}/${key}`;
  const name = errorNameOf(error);
  const status = httpStatusOf(error);
  if (name === 'NoSuchBucket') {
    return new HudiError(`bucket "${bucket}" does not exist`, {
      location: `s3://${bucket}`,
      fix: 'create the bucket, or fix the table path',
      cause: error,
    });
  }
  if (name === 'NoSuchKey' || (status === 404 && name !== 'NoSuchUpload')) {
    return new NotFoundError(objectUri);
  }
  if (name === 'AccessDenied' || status === 403) {
    const permission = PERMISSION_FOR[action];
    const resource = action === 'list' ? `arn:aws:s3:::${bucket}` : `arn:aws:s3:::${bucket}/${key}`;
    return new HudiError(`access denied (${action})`, {
      location: action === 'list' ? `s3://${bucket}/${key}*` : objectUri,
      fix: `grant ${permission} on ${resource} to the role or user running this (and kms:Decrypt/kms:GenerateDataKey if the bucket uses SSE-KMS)`,
      cause: error,
    });
  }
  const detail = error instanceof Error ? error.message : String(error);
  const problem = `S3 ${action} failed: ${name ?? 'error'}${status !== undefined ? ` (HTTP ${status})` : ''}: ${detail}`;
  if (name === 'CredentialsProviderError') {
    return new HudiError(problem, {
      location: objectUri,
      fix: 'give this process AWS credentials (an IAM role, AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)',
      cause: error,
    });
  }
  const code = errorCode(error);
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNRESET' || code === 'ETIMEDOUT') {
    return new HudiError(problem, {
      location: objectUri,
      fix: 'could not reach S3: check AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION and the network',
      cause: error,
    });
  }
  return new HudiError(problem, { location: objectUri, cause: error });
}

async function bodyBytes(response: GetObjectCommandOutput): Promise<Uint8Array> {
  if (response.Body === undefined) return new Uint8Array(0);
  return response.Body.transformToByteArray();
}

/**
 * Write a GET's body into `file` from `position` as it arrives; the bytes received. A body longer than `limit` is
 * reported by that count without writing past `limit` (the next range's bytes) or reading the rest.
 */
async function writeBodyAt(file: Awaited<ReturnType<typeof open>>, response: GetObjectCommandOutput, position: number, limit = Infinity): Promise<number> {
  const body = response.Body;
  if (body === undefined) return 0;
  if (!(body instanceof Readable)) {
    // Not Node's stream (other runtimes): the SDK's byte helper.
    const bytes = await body.transformToByteArray();
    await writeAt(file, bytes, position);
    return bytes.length;
  }
  let written = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    if (written + chunk.length > limit) {
      body.destroy();
      return written + chunk.length;
    }
    await writeAt(file, chunk, position + written);
    written += chunk.length;
  }
  return written;
}

/** "bytes 0-8388607/20971520" → 20971520 */
function totalSizeOf(contentRange: string | undefined): number | undefined {
  const match = contentRange === undefined ? null : /\/(\d+)\s*$/.exec(contentRange);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

async function readExactly(file: Awaited<ReturnType<typeof open>>, offset: number, length: number): Promise<Uint8Array> {
  const buffer = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await file.read(buffer, filled, length - filled, offset + filled);
    if (bytesRead === 0) throw new HudiError(`file shrank while uploading (short read at offset ${offset + filled})`);
    filled += bytesRead;
  }
  return buffer;
}

function errorNameOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const record = error as { name?: unknown; Code?: unknown };
  if (typeof record.Code === 'string') return record.Code;
  return typeof record.name === 'string' ? record.name : undefined;
}

function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata;
  return typeof metadata?.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

function trimSlashes(value: string): string {
  return value.replace(/^\/+/, '').replace(/\/+$/, '');
}

/** An explicit length: the SDK treats an empty string body as a stream of unknown length. */
function uploadBytes(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
