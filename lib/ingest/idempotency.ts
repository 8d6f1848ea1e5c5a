/**
 * Exactly-once ingestion per object version (bucket, key, ETag), the `source` `<bucket>/<key>#<etag>`, in three parts:
 * a done record `.hoodie/.ingest/<sha256(source)>.json` (putIfAbsent after the commit: later deliveries are
 * duplicates); a claim, a per-object storage lock (lib/lock/storage-lock.ts) under `.hoodie/.ingest/<id>/` that only
 * its holder writes under, kept alive by its invocation's heartbeat; and a commit marker, `extraMetadata["hudi-serverless.ingest.source"]` on the Hudi commit, so
 * a holder that died between commit and done record is found by the next (applyExactlyOnce tells how).
 */
import { createHash } from 'node:crypto';
import { AlreadyExistsError, ConflictError, HudiError, NotAHudiTableError, NotFoundError } from '../errors.js';
import { StorageLockProvider } from '../lock/storage-lock.js';
import { normalizeEtag } from '../storage/etag.js';
import type { Storage } from '../storage/port.js';
import { prefixedStorage } from '../storage/prefixed.js';
import { readTableConfig } from '../table/config.js';
import { compareInstantTimes, formatInstantTime } from '../timeline/instant.js';
import { timelineLayoutOf } from '../timeline/layout.js';
import { loadTimeline, readCommitMetadata } from '../timeline/timeline.js';
import { ClaimHeartbeat, type HeartbeatOptions } from './heartbeat.js';
import type { ClaimOptions, HandledResult, IngestLog, IngestResult } from './types.js';

export { normalizeEtag };

/** The commit extraMetadata key naming the object a commit applied. */
export const INGEST_SOURCE_KEY = 'hudi-serverless.ingest.source';
/** The commit extraMetadata key naming the objects a batch commit applied: a JSON list of sources. */
export const INGEST_SOURCES_KEY = 'hudi-serverless.ingest.sources';
/** Idempotency records, inside the table's metafolder (Hudi ignores folders there it does not know). */
export const INGEST_FOLDER = '.hoodie/.ingest';
/** In a claim's folder left by an earlier version: when the object was first claimed. */
const ATTEMPT_FILE = 'attempt.json';
/** Commits this much older than the first attempt are not scanned (instant times come from writers' clocks). */
const CLOCK_SKEW_MS = 10 * 60_000;

export function ingestSource(bucket: string, key: string, etag: string): string {
  return `${bucket}/${key}#${normalizeEtag(etag)}`;
}

export function ingestId(source: string): string {
  return createHash('sha256').update(source).digest('hex');
}

/** One object version of the landing bucket, the unit of exactly-once. */
export interface ObjectVersion {
  readonly bucket: string;
  readonly key: string;
  /** Normalized (normalizeEtag). */
  readonly etag: string;
}

/** The done record's content: what handling the object came to, and which object version it was. */
type DoneRecord = Pick<
  HandledResult,
  'source' | 'outcome' | 'instantTime' | 'inserted' | 'updated' | 'deleted' | 'badRecords' | 'errorsKey' | 'reason' | 'commitObjects'
> & {
  readonly bucket: string;
  readonly key: string;
  readonly etag: string;
  readonly completedAt: string;
};

/** What earlier versions wrote in a claim folder at each attempt; still read for the folders they left. */
interface AttemptRecord {
  readonly firstAttemptAt: string;
}

export interface FoundCommit {
  readonly instantTime: string;
  /** How many objects the commit applied, when more than one (a batch; the counts are the whole commit's). */
  readonly commitObjects?: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly badRecords: number;
}

/** Thrown from the pre-commit guard: an earlier attempt's commit already applied this object. */
class AlreadyAppliedError extends Error {
  constructor(readonly found: FoundCommit) {
    super(`already applied by commit ${found.instantTime}`);
  }
}

const donePathOf = (source: string): string => `${INGEST_FOLDER}/${ingestId(source)}.json`;

/** The duplicate result when the object version was handled before (its done record exists); else undefined. */
export async function handledBefore(table: Storage, version: ObjectVersion): Promise<IngestResult | undefined> {
  const done = await readDone(table, donePathOf(ingestSource(version.bucket, version.key, version.etag)));
  return done === undefined ? undefined : duplicateOf(done);
}

export interface ExactlyOnceRequest {
  readonly table: Storage;
  readonly version: ObjectVersion;
  /** The object's URI, for messages. */
  readonly location: string;
  readonly claim?: ClaimOptions;
  readonly log?: IngestLog;
  readonly now: () => Date;
  /** False: do not wait for another holder; claimObject then answers `{ busy: true }` (default: wait). */
  readonly wait?: boolean;
  /** The invocation's heartbeat, which keeps the claim alive (applyExactlyOnce starts one of its own when not given). */
  readonly heartbeat?: ClaimHeartbeat;
}

type HeartbeatRequest = ExactlyOnceRequest & { readonly heartbeat: ClaimHeartbeat };

/**
 * Claim the object version, recover an earlier attempt's commit or run `apply`, and record the outcome; see the
 * module comment. `apply` must call `beforeCommit` just before its commit (writeBatch's afterDataFiles hook).
 *
 * The claim lives while the invocation's heartbeat (heartbeat.ts) is renewed, and is taken over only after that stayed
 * unrenewed for a whole lease (a crashed or timed-out Lambda); a concurrent delivery waits for the holder, then finds the done record. A
 * process that dies after the commit but before the done record leaves its claim's generation; the next holder takes
 * the next one, scans the completed commits since the first for the marker and, when found, only writes the done
 * record. It scans again just before its own commit (the `beforeCommit` guard, which re-checks the lease first), so a
 * previous holder still committing when the lease lapsed is not applied twice either. Residual risk: a holder whose renewals fail for a whole
 * lease yet still commits at the same moment as the taker; with upsert (the default) that re-applies identical records,
 * an extra commit but no new rows.
 */
export async function applyExactlyOnce(
  request: ExactlyOnceRequest,
  apply: (beforeCommit: () => Promise<void>) => Promise<HandledResult>,
): Promise<IngestResult> {
  const heartbeat = request.heartbeat ?? (await ClaimHeartbeat.start(request.table, heartbeatOptions(request.claim)));
  try {
    return await applyClaimed({ ...request, heartbeat, wait: true }, apply);
  } finally {
    if (request.heartbeat === undefined) await heartbeat.stop();
  }
}

/** The heartbeat's lease and poll: the claims'. */
export function heartbeatOptions(claim: ClaimOptions | undefined): HeartbeatOptions {
  return {
    ...(claim?.leaseMs === undefined ? {} : { leaseMs: claim.leaseMs }),
    ...(claim?.pollMs === undefined ? {} : { pollMs: claim.pollMs }),
  };
}

async function applyClaimed(
  request: HeartbeatRequest & { readonly wait: true },
  apply: (beforeCommit: () => Promise<void>) => Promise<HandledResult>,
): Promise<IngestResult> {
  const claimed = await claimObject(request);
  if ('done' in claimed) return claimed.done;
  const { held } = claimed;
  try {
    const beforeCommit = async (): Promise<void> => {
      const found = await held.recheck();
      if (found !== undefined) throw new AlreadyAppliedError(found);
    };
    let result: HandledResult;
    try {
      result = await apply(beforeCommit);
    } catch (error) {
      if (!(error instanceof AlreadyAppliedError)) throw error;
      return await held.recordRecovered(error.found);
    }
    await held.record(result);
    return result;
  } finally {
    await held.release();
  }
}

/**
 * A claim this process holds on one object version (steps 2 and 3 of the module comment), for a caller that
 * commits several claimed objects at once (batch.ts): recheck each just before the commit, record each after it.
 */
export interface HeldClaim {
  readonly source: string;
  readonly version: ObjectVersion;
  /**
   * Just before the commit: throws when the lease is no longer ours; returns the commit of an earlier attempt that
   * applied the object meanwhile (then it must not be written again), else undefined.
   */
  recheck(): Promise<FoundCommit | undefined>;
  /** Write the done record with what handling the object came to (none for a first attempt that found it superseded). */
  record(result: HandledResult): Promise<void>;
  /** Record an earlier attempt's commit as the object's; returns the duplicate result a delivery reports. */
  recordRecovered(found: FoundCommit): Promise<IngestResult>;
  /**
   * Release the lease (and drop the claim folder once recorded). Always call it. Given `deletions`, a recorded claim's
   * files are added to it (paths in the table) for the caller to delete with others', instead of a request of its own.
   */
  release(deletions?: string[]): Promise<void>;
}

/**
 * Either the claim is held (the caller applies the object), or the object turned out done (a duplicate), or, when
 * asked not to wait, someone else holds the claim.
 */
export type ClaimOutcome = { readonly held: HeldClaim } | { readonly done: IngestResult };
export type TriedClaim = ClaimOutcome | { readonly busy: true };

/** The error of an object whose claim another delivery keeps holding: the delivery fails, to be retried. */
export function claimHeldElsewhere(location: string, why: string): ConflictError {
  return new ConflictError(`another delivery of this object is still being ingested: ${why}`, {
    location,
    fix: 'nothing to do: this delivery fails so that it is retried, and the retry finds the object done',
  });
}

/** Take the object's claim (waiting for a concurrent holder), and settle what is already settled; see the module comment. */
export function claimObject(request: HeartbeatRequest & { readonly wait?: true }): Promise<ClaimOutcome>;
export function claimObject(request: HeartbeatRequest): Promise<TriedClaim>;
export async function claimObject(request: HeartbeatRequest): Promise<TriedClaim> {
  const { table, version, log, now } = request;
  const source = ingestSource(version.bucket, version.key, version.etag);
  const id = ingestId(source);
  const donePath = donePathOf(source);
  const claimFolder = `${INGEST_FOLDER}/${id}`;
  const claimStorage = prefixedStorage(table, claimFolder);
  const lock = new StorageLockProvider(claimStorage, { ...heartbeatOptions(request.claim), heartbeat: request.heartbeat, freshFolders: true });
  let lease: Awaited<ReturnType<StorageLockProvider['acquire']>>;
  try {
    if (request.wait === false) {
      const taken = await lock.tryAcquire();
      if (taken === undefined) return { busy: true };
      lease = taken;
    } else {
      lease = await lock.acquire(request.claim?.waitMs === undefined ? {} : { waitMs: request.claim.waitMs });
    }
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    throw claimHeldElsewhere(request.location, error.message);
  }

  let recorded = false;
  let discarded = false;
  let released = false;
  const release = async (deletions?: string[]): Promise<void> => {
    if (released) return;
    released = true;
    // Once the done record exists the claim folder is no longer needed (a leftover costs one small object). A claim
    // kept by a heartbeat writes nothing on its own, so deleting its folder releases it without a last write.
    if (!(recorded || discarded)) await lease.release();
    else if (deletions === undefined) await lock.deleteHeld(lease, [ATTEMPT_FILE]).catch(() => undefined);
    else deletions.push(...lock.endHeld(lease, [ATTEMPT_FILE]).map((path) => `${claimFolder}/${path}`));
  };
  const record = (outcome: Omit<DoneRecord, 'source' | 'bucket' | 'key' | 'etag' | 'completedAt'>): Promise<void> =>
    writeDone(table, donePath, { source, bucket: version.bucket, key: version.key, etag: version.etag, ...outcome, completedAt: now().toISOString() }).then(
      () => {
        recorded = true;
      },
    );
  const recordRecovered = async (found: FoundCommit): Promise<IngestResult> => {
    log?.warn('an earlier attempt committed this object but did not record it; recording it now', { source, instantTime: found.instantTime });
    await record({ outcome: 'ingested', ...found });
    return { outcome: 'duplicate', originalOutcome: 'ingested', source, ...found, recovered: true };
  };

  try {
    // The holder before us may have finished between our first look and the claim (or there was no first look:
    // a first delivery's object, see IngestBatchRequest).
    const doneMeanwhile = await readDone(table, donePath);
    if (doneMeanwhile !== undefined) {
      recorded = true;
      await release();
      return { done: duplicateOf(doneMeanwhile) };
    }
    // An earlier attempt may have committed the object: then its commit is looked for (from when it began) before
    // ours and again just before our commit. A claim folder keeps every generation until the object is done, so
    // taking a generation after the first proves an earlier holder, whose first generation says when it began.
    // `attempt.json` is what versions before that wrote, still read for the folders they left.
    const attempt = await readAttempt(claimStorage);
    if (attempt !== undefined && (await lock.holder())?.owner !== lock.ownerName) {
      // Someone held it before, in a folder an earlier version pruned (its first generation gone): the first
      // generation we took is not the lock. Claim again, the long way.
      released = true;
      await lease.release();
      return request.wait === false ? { busy: true } : claimObject({ ...request, wait: true });
    }
    const firstAttemptAt =
      attempt !== undefined
        ? Date.parse(attempt.firstAttemptAt)
        : lease.holding().generation > 1
          ? // Unreadable or gone: every commit is looked at.
            ((await lock.acquiredAt(1))?.getTime() ?? 0)
          : undefined;
    const since = firstAttemptAt === undefined ? undefined : new Date(firstAttemptAt - CLOCK_SKEW_MS);
    if (since !== undefined) {
      const found = await findCommitOf(table, source, since);
      if (found !== undefined) {
        const done = await recordRecovered(found);
        await release();
        return { done };
      }
    }
    return {
      held: {
        source,
        version,
        async recheck() {
          // The lease must still be ours at the commit, and a previous holder must not have committed meanwhile.
          await lease.assertHeld();
          return since === undefined ? undefined : findCommitOf(table, source, since);
        },
        record: async (result) => {
          // A version that no longer exists (an event for a deleted, overwritten or never-written object) leaves
          // nothing under the table, unless an earlier attempt may have committed it: its claim folder says when.
          if (result.outcome === 'superseded' && since === undefined) {
            discarded = true;
            return;
          }
          await record({
            outcome: result.outcome,
            inserted: result.inserted,
            updated: result.updated,
            deleted: result.deleted,
            badRecords: result.badRecords,
            ...(result.instantTime === undefined ? {} : { instantTime: result.instantTime }),
            ...(result.errorsKey === undefined ? {} : { errorsKey: result.errorsKey }),
            ...(result.reason === undefined ? {} : { reason: result.reason }),
            ...(result.commitObjects === undefined ? {} : { commitObjects: result.commitObjects }),
          });
        },
        recordRecovered,
        release,
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * The objects a commit applied, from its extraMetadata: one source under INGEST_SOURCE_KEY (a single object's commit,
 * as every commit before batches), or a JSON list under INGEST_SOURCES_KEY (a batch's).
 */
export function sourcesOfCommit(extraMetadata: Readonly<Record<string, string>>): string[] {
  const single = extraMetadata[INGEST_SOURCE_KEY];
  const list = extraMetadata[INGEST_SOURCES_KEY];
  const sources = single === undefined ? [] : [single];
  if (list !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(list);
    } catch {
      parsed = undefined;
    }
    // Not ours to judge: a value that is no list of strings names no object.
    if (Array.isArray(parsed)) sources.push(...parsed.filter((s): s is string => typeof s === 'string'));
  }
  return sources;
}

/** The extraMetadata naming the objects of a commit (the single-object form for one, so older readers keep finding it). */
export function commitMarkerOf(sources: readonly string[]): Record<string, string> {
  return sources.length === 1 ? { [INGEST_SOURCE_KEY]: sources[0]! } : { [INGEST_SOURCES_KEY]: JSON.stringify(sources) };
}

/** The completed commit (since `since`) whose extraMetadata names `source`, newest first. */
export async function findCommitOf(table: Storage, source: string, since: Date): Promise<FoundCommit | undefined> {
  const config = await readTableConfig(table).catch((error: unknown) => {
    if (error instanceof NotAHudiTableError) return undefined;
    throw error;
  });
  // No table yet (an earlier attempt may have died before it created it): nothing to find.
  if (config === undefined) return undefined;
  const timeline = await loadTimeline(table, timelineLayoutOf(config));
  if (timeline.completedWrites().length === 0) return undefined;
  // Instant times are on the table's clock (hoodie.table.timeline.timezone).
  const sinceTime = formatInstantTime(since, config.timelineTimeZone);
  const candidates = timeline
    .completedWrites()
    // A merge-on-read table's ingest commits are deltacommits.
    .filter((i) => (i.action === 'commit' || i.action === 'deltacommit') && compareInstantTimes(i.time, sinceTime) >= 0)
    .reverse();
  for (const instant of candidates) {
    const metadata = await readCommitMetadata(table, instant, timeline.layout);
    const sources = sourcesOfCommit(metadata.extraMetadata);
    if (!sources.includes(source)) continue;
    const stats = Object.values(metadata.partitionToWriteStats).flat();
    const sum = (pick: (s: (typeof stats)[number]) => number) => stats.reduce((total, s) => total + pick(s), 0);
    // Bad records are not in the commit; the errors file (written before the commit for JSON lines) has them.
    return {
      instantTime: instant.time,
      inserted: sum((s) => s.numInserts),
      updated: sum((s) => s.numUpdateWrites),
      deleted: sum((s) => s.numDeletes),
      badRecords: 0,
      ...(sources.length > 1 ? { commitObjects: sources.length } : {}),
    };
  }
  return undefined;
}

// ---- the records ----

async function readJson(storage: Storage, path: string): Promise<unknown> {
  try {
    return JSON.parse(Buffer.from(await storage.get(path)).toString('utf8')) as unknown;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    if (error instanceof SyntaxError) {
      throw new HudiError(`ingest record is not JSON: ${error.message}`, {
        location: storage.uriOf(path),
        fix: 'delete it to let the object be ingested again',
      });
    }
    throw error;
  }
}

async function readDone(table: Storage, path: string): Promise<DoneRecord | undefined> {
  const value = await readJson(table, path);
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || typeof (value as { source?: unknown }).source !== 'string') {
    throw new HudiError('ingest record has no source', { location: table.uriOf(path), fix: 'delete it to let the object be ingested again' });
  }
  return value as DoneRecord;
}

async function readAttempt(claimStorage: Storage): Promise<AttemptRecord | undefined> {
  const value = await readJson(claimStorage, ATTEMPT_FILE);
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Partial<AttemptRecord>;
  // An unreadable time still proves an attempt: scan everything then.
  const firstAttemptAt =
    typeof record.firstAttemptAt === 'string' && !Number.isNaN(Date.parse(record.firstAttemptAt)) ? record.firstAttemptAt : new Date(0).toISOString();
  return { firstAttemptAt };
}

async function writeDone(table: Storage, path: string, record: DoneRecord): Promise<void> {
  try {
    await table.putIfAbsent(path, `${JSON.stringify(record, null, 2)}\n`);
  } catch (error) {
    // Recorded by someone else: only possible after this holder's lease lapsed; the record stands either way.
    if (!(error instanceof AlreadyExistsError)) throw error;
  }
}

function duplicateOf(done: DoneRecord): IngestResult {
  return {
    outcome: 'duplicate',
    originalOutcome: done.outcome,
    source: done.source,
    inserted: done.inserted ?? 0,
    updated: done.updated ?? 0,
    deleted: done.deleted ?? 0,
    badRecords: done.badRecords ?? 0,
    ...(done.instantTime === undefined ? {} : { instantTime: done.instantTime }),
    ...(done.errorsKey === undefined ? {} : { errorsKey: done.errorsKey }),
    ...(done.reason === undefined ? {} : { reason: done.reason }),
    ...(done.commitObjects === undefined ? {} : { commitObjects: done.commitObjects }),
  };
}
