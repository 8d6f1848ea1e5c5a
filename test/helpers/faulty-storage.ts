/**
 * A Storage that fails chosen calls the way S3Storage surfaces S3's failures: an SDK error (AccessDenied 403,
 * InternalError 500, SlowDown 503, a socket timeout, a reset connection) turned into a HudiError by the adapter's own
 * describeS3Error. It wraps any Storage (a local folder in tests, for speed) and counts every call, so a test can
 * fail the Nth call of an operation for every N.
 *
 * `timing: 'after'` performs the call and then fails it, as when a request reached S3 but its answer was lost (a
 * timeout after the PUT landed): the caller cannot tell whether the change happened.
 *
 * The wrapper gives no local paths (localPath), so readers stage files through downloadFile as they do on S3.
 */
import { S3ServiceException } from '@aws-sdk/client-s3';
import { deleteMany } from '../../lib/storage/delete-many.js';
import type { DeleteManyOptions, DeleteManyResult, Storage, StoredObject } from '../../lib/storage/port.js';
import { describeS3Error, type S3Action } from '../../lib/storage/s3.js';

export type StorageMethod =
  | 'get'
  | 'getRange'
  | 'head'
  | 'put'
  | 'putIfAbsent'
  | 'uploadFile'
  | 'downloadFile'
  | 'listDir'
  | 'listRecursive'
  | 'delete'
  | 'deleteMany';

export interface StorageCall {
  /** 1-based position among this storage's calls. */
  readonly index: number;
  readonly method: StorageMethod;
  /** The object or folder (the first one for delete). */
  readonly path: string;
}

export type S3Fault = 'access-denied' | 'internal-error' | 'slow-down' | 'timeout' | 'connection-reset';
export const S3_FAULTS: readonly S3Fault[] = ['access-denied', 'internal-error', 'slow-down', 'timeout', 'connection-reset'];

export interface FaultPlan {
  /** Which calls fail. */
  readonly failWhen: (call: StorageCall) => boolean;
  readonly fault: S3Fault;
  /** 'before' (default): the call never reaches the store. 'after': it does, then its answer is lost. */
  readonly timing?: 'before' | 'after';
}

const ACTION: Record<StorageMethod, S3Action> = {
  get: 'read',
  getRange: 'read',
  head: 'read',
  downloadFile: 'read',
  put: 'write',
  putIfAbsent: 'write',
  uploadFile: 'write',
  listDir: 'list',
  listRecursive: 'list',
  delete: 'delete',
  deleteMany: 'delete',
};

/** The SDK's error for a fault, as the S3 client throws it. */
function sdkError(fault: S3Fault): Error {
  const service = (name: string, httpStatusCode: number, message: string, $fault: 'client' | 'server') =>
    new S3ServiceException({ name, $fault, message, $metadata: { httpStatusCode, requestId: 'INJECTED', attempts: 3 } });
  switch (fault) {
    case 'access-denied':
      return service('AccessDenied', 403, 'Access Denied', 'client');
    case 'internal-error':
      return service('InternalError', 500, 'We encountered an internal error. Please try again.', 'server');
    case 'slow-down':
      return service('SlowDown', 503, 'Please reduce your request rate.', 'server');
    case 'timeout':
      return Object.assign(new Error('Connection timed out after 30000 ms'), { name: 'TimeoutError', code: 'ETIMEDOUT' });
    case 'connection-reset':
      return Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET' });
  }
}

/** What S3Storage throws for `fault` on `call`. */
export function injectedError(fault: S3Fault, call: StorageCall, bucket = 'fault-injection'): Error {
  return describeS3Error(sdkError(fault), { bucket, key: call.path, action: ACTION[call.method] });
}

export class FaultyStorage implements Storage {
  readonly calls: StorageCall[] = [];
  readonly injected: StorageCall[] = [];
  private plan: FaultPlan | undefined;

  constructor(
    readonly inner: Storage,
    plan?: FaultPlan,
  ) {
    this.plan = plan;
  }

  get uri(): string {
    return this.inner.uri;
  }

  uriOf(path: string): string {
    return this.inner.uriOf(path);
  }

  /** Stop injecting (the calls are still counted). */
  heal(): void {
    this.plan = undefined;
  }

  private async call<T>(method: StorageMethod, path: string, run: () => Promise<T>): Promise<T> {
    const call: StorageCall = { index: this.calls.length + 1, method, path };
    this.calls.push(call);
    const plan = this.plan;
    if (plan === undefined || !plan.failWhen(call)) return run();
    this.injected.push(call);
    if (plan.timing === 'after') await run().catch(() => undefined);
    throw injectedError(plan.fault, call);
  }

  get(path: string): Promise<Uint8Array> {
    return this.call('get', path, () => this.inner.get(path));
  }

  getRange(path: string, start: number, end: number): Promise<Uint8Array> {
    return this.call('getRange', path, () => this.inner.getRange(path, start, end));
  }

  head(path: string): Promise<StoredObject | undefined> {
    return this.call('head', path, () => this.inner.head(path));
  }

  put(path: string, body: Uint8Array | string): Promise<void> {
    return this.call('put', path, () => this.inner.put(path, body));
  }

  putIfAbsent(path: string, body: Uint8Array | string): Promise<void> {
    return this.call('putIfAbsent', path, () => this.inner.putIfAbsent(path, body));
  }

  uploadFile(path: string, localFile: string): Promise<void> {
    return this.call('uploadFile', path, () => this.inner.uploadFile(path, localFile));
  }

  downloadFile(path: string, localFile: string): Promise<void> {
    return this.call('downloadFile', path, () => this.inner.downloadFile(path, localFile));
  }

  listDir(dir: string): Promise<{ files: StoredObject[]; dirs: string[] }> {
    return this.call('listDir', dir, () => this.inner.listDir(dir));
  }

  listRecursive(dir: string): Promise<StoredObject[]> {
    return this.call('listRecursive', dir, () => this.inner.listRecursive(dir));
  }

  delete(paths: readonly string[]): Promise<void> {
    return this.call('delete', paths[0] ?? '', () => this.inner.delete(paths));
  }

  /** One call however many paths: a failure is the whole request failing (network, credentials), as S3's would. */
  deleteMany(paths: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult> {
    return this.call('deleteMany', paths[0] ?? '', () => deleteMany(this.inner, paths, options));
  }
}

/** Collects the process's unhandled rejections while `work` runs (and a few turns after), without crashing on them. */
export async function collectUnhandledRejections<T>(work: () => Promise<T>): Promise<{ outcome: PromiseSettledResult<T>; unhandled: unknown[] }> {
  const unhandled: unknown[] = [];
  const listener = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', listener);
  try {
    const [outcome] = await Promise.allSettled([work()]);
    // A rejection nobody handled is reported after the microtasks of the turn it happened in.
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { outcome: outcome!, unhandled };
  } finally {
    process.off('unhandledRejection', listener);
  }
}
