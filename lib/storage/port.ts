/**
 * The storage port: everything lib/ needs from S3 or a local disk.
 * Paths given to a Storage are relative to its root (the table's base path), with '/' separators.
 */
export interface StoredObject {
  /** Path relative to the storage root, '/'-separated, no leading slash. */
  readonly path: string;
  readonly size: number;
  /** Last modification, milliseconds since the epoch. */
  readonly modifiedMs: number;
}

/** What deleteMany did with each path. */
export interface DeleteManyResult {
  /** Paths that no longer exist: deleted now, or already missing (S3 cannot tell the two apart). */
  readonly deleted: readonly string[];
  /** Paths that are still there, each with the reason the store gave. */
  readonly failed: readonly { readonly path: string; readonly reason: string }[];
}

export interface DeleteManyOptions {
  /** Requests (S3: DeleteObjects calls of up to 1,000 keys; local: file removals) in flight at once. */
  readonly concurrency?: number;
}

import type { RequestCounter } from './request-counts.js';

export interface Storage {
  /** A human-readable URI of the root, e.g. `s3://bucket/prefix` or `/data/table`. */
  readonly uri: string;
  /** The URI of one path under the root, for messages and for Hudi's absolute paths. */
  uriOf(path: string): string;
  /** Whole object; throws NotFoundError when it does not exist. */
  get(path: string): Promise<Uint8Array>;
  /** Bytes [start, end) of an object. */
  getRange(path: string, start: number, end: number): Promise<Uint8Array>;
  /** Metadata, or undefined when it does not exist. */
  head(path: string): Promise<StoredObject | undefined>;
  /** Write (replace) an object in one PUT. */
  put(path: string, body: Uint8Array | string): Promise<void>;
  /**
   * Create an object only if it does not exist yet (If-None-Match: * on S3, O_EXCL locally).
   * Throws AlreadyExistsError when another writer created it first.
   */
  putIfAbsent(path: string, body: Uint8Array | string): Promise<void>;
  /**
   * A small object with its entity tag, or undefined when it does not exist. Optional, with putConditional: the
   * compare-and-set pair Hudi's storage-based lock needs (S3; a local disk, atomic within one process only).
   */
  getVersioned?(path: string): Promise<VersionedObject | undefined>;
  /**
   * Write an object only if it still is the version `ifMatch` names (If-Match on S3) or, with `ifAbsent`, does not exist
   * (If-None-Match: *). Returns the new entity tag; throws PreconditionFailedError when the condition fails.
   */
  putConditional?(path: string, body: Uint8Array | string, condition: PutCondition): Promise<string>;
  /** Upload a local file (multipart on S3 for large files). */
  uploadFile(path: string, localFile: string, options?: UploadOptions): Promise<void>;
  /** Download an object to a local file (ranged and parallel on S3 for large objects). */
  downloadFile(path: string, localFile: string): Promise<void>;
  /** Objects directly under a folder (not recursive): files and sub-folder names. */
  listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }>;
  /** Every object under a prefix, recursively. */
  listRecursive(dir: string): Promise<StoredObject[]>;
  /** The local filesystem path of an object when the storage is a local disk (engines read it in place); else undefined. */
  localPath?(path: string): string | undefined;
  /** Remove objects; missing ones are ignored. */
  delete(paths: readonly string[]): Promise<void>;
  /**
   * Remove many objects in batches with bounded parallelism (S3 DeleteObjects, 1,000 keys a request), reporting
   * per path instead of failing on the first refusal: the cleaner records each file's fate. A request that fails
   * as a whole (network, credentials) still throws; deleting again is harmless. Optional, like localPath: a Storage
   * without it (a wrapper) gets deleteMany's fallback over `delete` (lib/storage/delete-many.ts).
   */
  deleteMany?(paths: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult>;
  /**
   * The same storage, also counting the requests it sends in `counter` (S3: what is billed per request). Optional:
   * a storage that sends none (a local disk) has no such view; countedStorage (counted.ts) falls back to itself.
   */
  withRequestCounter?(counter: RequestCounter): Storage;
}

/**
 * Reading one version of an object, named by the entity tag an event carried: S3's ETag; on a local disk the content's
 * MD5 in hex (S3's ETag of a single-part upload). Landing buckets need it (lib/ingest/landing-bucket.ts); tables do not.
 */
export interface VersionedDownload {
  /**
   * Download an object to a local file only if it still is the version with this ETag (quotes and W/ ignored):
   * false, and no file, when the object changed since or is gone.
   */
  downloadFileIfMatch(path: string, etag: string, localFile: string): Promise<boolean>;
}

/** An object's bytes with its entity tag (S3's ETag, unquoted; locally the content's MD5 in hex). */
export interface VersionedObject {
  readonly bytes: Uint8Array;
  readonly etag: string;
}

/** The precondition of a conditional put: replace exactly this version, or create only. */
export type PutCondition = { readonly ifMatch: string } | { readonly ifAbsent: true };

export { NotFoundError } from '../errors.js';

export interface UploadOptions {
  /**
   * The caller no longer needs the local file (a group's output, removed once uploaded): a table on the same local
   * disk takes it by rename instead of a copy. Unset, the local file is left as it was.
   */
  readonly consume?: boolean;
}
