/**
 * Micro-batched ingest: several landed objects of one table in as few commits as their size allows, with every
 * promise of the one-object path (service.ts): exactly once per object version, a poison object quarantined alone,
 * nothing lost on a crash. Objects share a commit when their rows read alike: JSON lines always, CSV objects with
 * the same header, Parquet objects with the same columns and types.
 */

import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished, pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { readKey } from '../config/index.js';
import { concatenateParquet, type InputFormat, inputShape } from '../engine/write.js';
import { ConflictError, errorMessage, HudiError } from '../errors.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import { deleteMany } from '../storage/delete-many.js';
import { normalizeEtag } from '../storage/etag.js';
import type { KeyGenerator } from '../table/key-generators.js';
import { type BadRecord, writeBatch } from '../writer/write-client.js';
import { parseWriteOperation } from '../writer/write-config.js';
import {
  appendWriterRejections,
  csvErrorLine,
  type ErrorLineOf,
  errorKeyOf,
  inputProblem,
  isZlibError,
  jsonLinesErrorLine,
  quarantineObject,
  rowErrorLine,
  splitJsonLines,
} from './bad-records.js';
import { INGEST_BATCH_MAX_BYTES } from './config.js';
import { ClaimHeartbeat } from './heartbeat.js';
import {
  type ClaimOutcome,
  claimHeldElsewhere,
  claimObject,
  commitMarkerOf,
  type FoundCommit,
  type HeldClaim,
  handledBefore,
  heartbeatOptions,
  ingestSource,
  type TriedClaim,
} from './idempotency.js';
import { downloadLanded, formatOfKey } from './landing-bucket.js';
import { assertIngestable, ingestObject, keyGeneratorFor } from './service.js';
import type { BatchObjectResult, HandledResult, IngestBatchRequest, IngestResult } from './types.js';

/** Objects downloaded and split at once; the disk holds at most these beyond one commit's records. */
const PREPARED_AT_ONCE = 8;
/** Claims (and their checks and records) in flight at once: each is a few small requests, so a burst is bound by round trips. */
const CLAIMED_AT_ONCE = 16;

/** An object claimed, downloaded (JSON lines split), waiting for its group's commit. */
interface Prepared {
  readonly index: number;
  readonly held: HeldClaim;
  readonly key: string;
  readonly etag: string;
  readonly localObject: string;
  readonly format: InputFormat;
  /** Objects of one shape share commits: the format and what its rows read as (see the module comment). */
  readonly shape: string;
  /** The rows to write: the good lines (JSON lines), the plain object (CSV, Parquet). */
  readonly goodFile: string;
  readonly goodBytes: number;
  /** Rows of goodFile, as the write reads them. */
  readonly rows: number;
  readonly errorLineOf: ErrorLineOf;
  readonly errorsFile: string;
  readonly errorsKey: string;
  readonly preRejected: number;
}

/** The formats a batch writes itself; any other object (no format, .parquet.gz) goes through ingestObject. */
const batchable = (key: string, defaultFormat: InputFormat | undefined): boolean => {
  const format = formatOfKey(key, defaultFormat);
  return format === 'jsonl' || format === 'csv' || (format === 'parquet' && !/\.gz$/i.test(key));
};

/** Thrown from a group's pre-commit guard: earlier attempts' commits applied some of its objects already. */
class GroupAlreadyAppliedError extends Error {
  constructor(readonly found: ReadonlyMap<Prepared, FoundCommit>) {
    super(`${found.size} object(s) already applied by an earlier attempt`);
  }
}

/**
 * Ingest the objects, each at most once, in as few commits as INGEST_BATCH_MAX_BYTES allows; one result per object,
 * in the order given. Objects share a commit with those of their shape (see the module comment); an object of
 * another header or schema goes in a commit of its own shape. An error that concerns one object (its claim is held elsewhere, its
 * download failed) or one commit (a lock timeout, a conflict) is that object's or those objects' result, for a retry;
 * only a table no ingest may write (assertIngestable) throws.
 */
export async function ingestObjects(request: IngestBatchRequest): Promise<BatchObjectResult[]> {
  const { source: landing, table, tableProperties: props, log } = request;
  if (request.errorPrefix.replace(/^\/+|\/+$/g, '') === '') {
    throw new HudiError('the error prefix is empty', { fix: 'give rejected records and objects their own prefix, e.g. errors/ (ERROR_PREFIX)' });
  }
  const maxBytes = request.maxBatchBytes ?? readKey(props, INGEST_BATCH_MAX_BYTES, 'the table properties');
  const results = new Map<number, BatchObjectResult>();
  const objects = request.objects.map((object, index) => ({ ...object, index, etag: normalizeEtag(object.etag) }));
  const versionOf = (key: string, etag: string) => ({ bucket: landing.bucket, key, etag });
  const sourceOf = (key: string, etag: string) => ingestSource(landing.bucket, key, etag);

  const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(errorMessage(error)));
  // The same version twice in one batch is handled once; the other gets its result.
  const firstOf = new Map<string, number>();
  const distinct: typeof objects = [];
  for (const object of objects) {
    const source = sourceOf(object.key, object.etag);
    if (firstOf.has(source)) continue;
    firstOf.set(source, object.index);
    distinct.push(object);
  }
  // The done records, looked up side by side (one read each): a redelivered batch ends here. A first delivery's is
  // looked up after its claim only (claimObject always does), a read saved on every new object.
  // An unreadable record fails its own object only.
  const done = await mapWithConcurrency(distinct, PREPARED_AT_ONCE, (object) =>
    object.firstDelivery === true
      ? Promise.resolve(undefined)
      : handledBefore(table, versionOf(object.key, object.etag)).catch((error: unknown) => asError(error)),
  );
  const pending: typeof objects = [];
  distinct.forEach((object, i) => {
    const result = done[i];
    if (result === undefined) pending.push(object);
    else
      results.set(
        object.index,
        result instanceof Error ? { key: object.key, etag: object.etag, error: result } : { key: object.key, etag: object.etag, result },
      );
  });
  if (pending.length > 0) await assertIngestable(table, props);

  const common = {
    source: landing,
    table,
    tableProperties: props,
    errorPrefix: request.errorPrefix,
    ...(request.defaultFormat === undefined ? {} : { defaultFormat: request.defaultFormat }),
    ...(request.tempDir === undefined ? {} : { tempDir: request.tempDir }),
    ...(request.claim === undefined ? {} : { claim: request.claim }),
    ...(log === undefined ? {} : { log }),
    ...(request.now === undefined ? {} : { now: request.now }),
  };
  const settle = (index: number, key: string, etag: string, outcome: IngestResult | Error): void => {
    results.set(index, outcome instanceof Error ? { key, etag, error: outcome } : { key, etag, result: outcome });
  };

  // Claimed in the order of their sources (see claimInOrder): overlapping batches never wait on each other in a cycle.
  const lines = pending.filter((o) => batchable(o.key, request.defaultFormat)).sort((a, b) => sourceOf(a.key, a.etag).localeCompare(sourceOf(b.key, b.etag)));
  for (const object of pending.filter((o) => !lines.includes(o))) {
    try {
      settle(object.index, object.key, object.etag, await ingestObject({ ...common, key: object.key, etag: object.etag }));
    } catch (error) {
      settle(object.index, object.key, object.etag, asError(error));
    }
  }

  // Read once: the table's (or, for a table the first commit creates, the properties') key generator.
  let keyGeneratorRead: Promise<KeyGenerator> | undefined;
  const keyGenerator = (): Promise<KeyGenerator> => {
    keyGeneratorRead ??= keyGeneratorFor(table, props);
    return keyGeneratorRead;
  };
  if (lines.length === 0) return resultsInOrder(objects, results, firstOf, sourceOf);
  const workDir = await mkdtemp(join(request.tempDir ?? tmpdir(), 'hudi-ingest-batch-'));
  const now = request.now ?? (() => new Date());
  // One lease keeps every claim of this invocation alive (see heartbeat.ts).
  const heartbeat = await ClaimHeartbeat.start(table, heartbeatOptions(request.claim));
  try {
    // One open group per shape.
    const groups = new Map<string, { objects: Prepared[]; bytes: number }>();
    const flush = async (shape: string): Promise<void> => {
      const taken = groups.get(shape)?.objects ?? [];
      groups.delete(shape);
      if (taken.length === 0) return;
      try {
        for (const [prepared, result] of await commitGroup(taken, request, workDir)) settle(prepared.index, prepared.key, prepared.etag, result);
      } catch (error) {
        // Not recorded: every object of the group is retried, and the claims' attempt records keep a retry from
        // applying one twice if this commit did land.
        log?.warn('a batch commit failed; its objects will be retried', { objects: taken.length, error: errorMessage(error) });
        for (const prepared of taken) settle(prepared.index, prepared.key, prepared.etag, asError(error));
      } finally {
        // The done claims' files go in one request (per thousand), not one each.
        const deletions: string[] = [];
        await Promise.all(taken.map((prepared) => prepared.held.release(deletions).catch(() => undefined)));
        await deleteMany(table, deletions).catch(() => undefined);
        await Promise.all(taken.map((prepared) => rm(join(workDir, String(prepared.index)), { recursive: true, force: true })));
      }
    };
    const fail = async (object: (typeof lines)[number], held: HeldClaim | undefined, error: unknown): Promise<undefined> => {
      await held?.release().catch(() => undefined);
      log?.warn('object failed; it will be retried', { key: object.key, error: errorMessage(error) });
      settle(object.index, object.key, object.etag, asError(error));
      return undefined;
    };
    const claimRequest = (object: (typeof lines)[number]) => ({
      table,
      version: versionOf(object.key, object.etag),
      location: landing.uriOf(object.key),
      ...(request.claim === undefined ? {} : { claim: request.claim }),
      ...(log === undefined ? {} : { log }),
      now,
      heartbeat,
    });
    // After one wait for a live holder ran out, the others are not waited for either: each would wait as long.
    let waitedInVain = false;
    const claimOf = {
      now: (object: (typeof lines)[number]) => claimObject({ ...claimRequest(object), wait: false }),
      waiting: async (object: (typeof lines)[number]): Promise<ClaimOutcome> => {
        if (waitedInVain) {
          const claimed = await claimObject({ ...claimRequest(object), wait: false });
          if ('busy' in claimed) throw claimHeldElsewhere(landing.uriOf(object.key), 'an earlier wait in this batch ran out');
          return claimed;
        }
        return claimObject(claimRequest(object)).catch((error: unknown) => {
          if (error instanceof ConflictError) waitedInVain = true;
          throw error;
        });
      },
    };
    for (let start = 0; start < lines.length; start += CLAIMED_AT_ONCE) {
      const window = lines.slice(start, start + CLAIMED_AT_ONCE);
      const claims = await claimInOrder(window, claimOf, {
        done: (object, result) => settle(object.index, object.key, object.etag, result),
        failed: (object, error) => fail(object, undefined, error),
      });
      const prepared = await mapWithConcurrency(window, PREPARED_AT_ONCE, async (object, i): Promise<Prepared | undefined> => {
        const held = claims[i];
        if (held === undefined) return undefined;
        try {
          const outcome = await prepareObject(request, keyGenerator, held, object, join(workDir, String(object.index)));
          if ('held' in outcome) return outcome;
          // Settled alone (superseded, quarantined, nothing to write): recorded now.
          await held.record(outcome);
          await held.release();
          settle(object.index, object.key, object.etag, outcome);
          return undefined;
        } catch (error) {
          return fail(object, held, error);
        }
      });
      for (const object of prepared) {
        if (object === undefined) continue;
        // A group never grows past the bound; an object larger than the bound alone is a commit of its own.
        const open = groups.get(object.shape);
        if (open !== undefined && open.bytes + object.goodBytes > maxBytes) await flush(object.shape);
        const group = groups.get(object.shape) ?? { objects: [], bytes: 0 };
        group.objects.push(object);
        group.bytes += object.goodBytes;
        groups.set(object.shape, group);
      }
    }
    for (const shape of [...groups.keys()]) await flush(shape);
  } finally {
    await heartbeat.stop().catch(() => undefined);
    await rm(workDir, { recursive: true, force: true });
  }
  return resultsInOrder(objects, results, firstOf, sourceOf);
}

/** One result per object, in the order given; a repeat of a version earlier in the batch shares the first one's fate. */
function resultsInOrder(
  objects: readonly { readonly index: number; readonly key: string; readonly etag: string }[],
  results: ReadonlyMap<number, BatchObjectResult>,
  firstOf: ReadonlyMap<string, number>,
  sourceOf: (key: string, etag: string) => string,
): BatchObjectResult[] {
  return objects.map((object) => {
    const own = results.get(object.index);
    if (own !== undefined) return own;
    const first = results.get(firstOf.get(sourceOf(object.key, object.etag))!)!;
    return 'error' in first ? { key: object.key, etag: object.etag, error: first.error } : { key: object.key, etag: object.etag, result: first.result };
  });
}

/**
 * Claim a window of objects, sorted by source, side by side without waiting. When another delivery holds one, the
 * claims after it are given back and the rest are claimed one at a time, waiting: a batch only ever waits while it
 * holds claims that sort before the one it waits for, so two overlapping batches never wait on each other in a cycle.
 */
async function claimInOrder<T>(
  window: readonly T[],
  claimOf: { now: (object: T) => Promise<TriedClaim>; waiting: (object: T) => Promise<ClaimOutcome> },
  on: { done: (object: T, result: IngestResult) => void; failed: (object: T, error: unknown) => Promise<undefined> },
): Promise<(HeldClaim | undefined)[]> {
  const failure = (error: unknown): { readonly error: unknown } => ({ error });
  const tried = await mapWithConcurrency(window, CLAIMED_AT_ONCE, (object) => claimOf.now(object).catch(failure));
  const firstBusy = tried.findIndex((claim) => 'busy' in claim);
  const claims: (HeldClaim | undefined)[] = [];
  for (const [i, object] of window.entries()) {
    const first = tried[i]!;
    let claim: ClaimOutcome | { readonly error: unknown };
    if ('busy' in first || (firstBusy !== -1 && i > firstBusy)) {
      if ('held' in first) await first.held.release();
      claim = await claimOf.waiting(object).catch(failure);
    } else claim = first;
    if ('error' in claim) claims.push(await on.failed(object, claim.error));
    else if ('done' in claim) {
      on.done(object, claim.done);
      claims.push(undefined);
    } else claims.push(claim.held);
  }
  return claims;
}

/** Download one object (and split JSON lines); a result when it is settled alone, else what its group commits. */
async function prepareObject(
  request: IngestBatchRequest,
  keyGenerator: () => Promise<KeyGenerator>,
  held: HeldClaim,
  object: { readonly index: number; readonly key: string; readonly etag: string },
  dir: string,
): Promise<Prepared | HandledResult> {
  const { source: landing, log } = request;
  const { key, etag } = object;
  const source = held.source;
  const zero = { source, inserted: 0, updated: 0, deleted: 0, badRecords: 0 };
  await mkdir(dir, { recursive: true });
  const landed = await downloadLanded(landing, key, etag, dir, request.defaultFormat);
  if (landed === undefined) {
    log?.warn('the object was overwritten or deleted since the event; its newer version has its own event', { source });
    return { outcome: 'superseded', ...zero };
  }
  const quarantine = async (reason: string, badRecords = 0): Promise<HandledResult> => {
    const errorsKey = await quarantineObject(landing, { key, etag, source, localFile: landed.file, errorPrefix: request.errorPrefix }, reason);
    log?.warn('object rejected as a whole; copied to the error prefix', { source, reason, errorsKey });
    return { outcome: 'failed', ...zero, badRecords, errorsKey, reason };
  };
  const format = landed.format!;
  let plain = landed.file;
  if (landed.compressed) {
    plain = join(dir, `object.plain.${format}`);
    try {
      await pipeline(createReadStream(landed.file), createGunzip(), createWriteStream(plain));
    } catch (error) {
      if (isZlibError(error)) return await quarantine(`not gzip-compressed: ${errorMessage(error)}`);
      throw error;
    }
  }
  const errorsFile = join(dir, 'errors.jsonl');
  const errorsKey = errorKeyOf(request.errorPrefix, key, '.errors.jsonl');
  const common = { index: object.index, held, key, etag, localObject: landed.file, format, errorsFile, errorsKey, preRejected: 0 };
  if (format !== 'jsonl') {
    // What the object's rows read as; an object the engine cannot read alone commits alone (and is refused there).
    const shape = await inputShape(plain, format).catch(() => undefined);
    const header = format === 'csv' ? await firstLine(plain) : '';
    return {
      ...common,
      shape: shape === undefined ? `alone ${object.index}` : `${format}\n${header}\n${JSON.stringify(shape.columns)}`,
      goodFile: plain,
      goodBytes: (await stat(plain)).size,
      rows: shape?.rows ?? 0,
      errorLineOf: format === 'csv' ? csvErrorLine(plain, false) : rowErrorLine,
    };
  }
  const goodFile = join(dir, 'good.jsonl');
  const split = await splitJsonLines(plain, goodFile, errorsFile, await keyGenerator());
  if (split.objects === 0 && split.rejected > 0) {
    return await quarantine(`not JSON lines: no line is a JSON object (line ${split.firstRejection!.line}: ${split.firstRejection!.reason})`, split.rejected);
  }
  // Written before the commit: a crash after it must not lose them.
  if (split.rejected > 0) await landing.uploadFile(errorsKey, errorsFile);
  if (split.good === 0) {
    log?.info('no valid records to write', { source, badRecords: split.rejected });
    return { outcome: 'ingested', ...zero, badRecords: split.rejected, ...(split.rejected > 0 ? { errorsKey } : {}) };
  }
  // Only the good lines wait for the commit: the download goes now, so the disk holds one group's records.
  if (plain !== landed.file) await rm(plain, { force: true });
  return {
    ...common,
    shape: 'jsonl',
    goodFile,
    goodBytes: (await stat(goodFile)).size,
    rows: split.good,
    errorLineOf: jsonLinesErrorLine(split, goodFile),
    preRejected: split.rejected,
  };
}

/** Bytes of a file's first line, its line end included. */
async function bytesOfFirstLine(file: string): Promise<number> {
  let offset = 0;
  for await (const chunk of createReadStream(file)) {
    const end = (chunk as Buffer).indexOf(0x0a);
    if (end >= 0) return offset + end + 1;
    offset += (chunk as Buffer).length;
  }
  return offset;
}

/** A file's first line without a byte-order mark or carriage return (a CSV header). */
async function firstLine(file: string): Promise<string> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    return line.replace(/^\uFEFF/, '');
  }
  return '';
}

/**
 * One input of the objects' rows, row i of it row i - offsets[j] of object j: the objects' own file when alone, else
 * their good lines (JSON lines), their rows under the one header (CSV), one Parquet file. Undefined when the
 * concatenated CSV does not read as the objects' rows (a header or quoting that reads otherwise together).
 */
async function groupInput(group: readonly Prepared[], file: string): Promise<{ file: string; own: boolean; offsets: number[] } | undefined> {
  const offsets: number[] = [];
  let rows = 0;
  for (const prepared of group) {
    offsets.push(rows);
    rows += prepared.rows;
  }
  const format = group[0]!.format;
  if (group.length === 1 && format !== 'jsonl') return { file: group[0]!.goodFile, own: true, offsets };
  if (format === 'parquet') {
    await concatenateParquet(
      group.map((p) => p.goodFile),
      file,
    );
    return { file, own: false, offsets };
  }
  const out = createWriteStream(file);
  let endsLine = true;
  for (const [j, prepared] of group.entries()) {
    // The bytes as they are (quoted fields keep their line ends); a CSV's header once, from the first object.
    const start = format === 'csv' && j > 0 ? await bytesOfFirstLine(prepared.goodFile) : 0;
    if (!endsLine) out.write('\n');
    for await (const chunk of createReadStream(prepared.goodFile, { start })) {
      const bytes = chunk as Buffer;
      if (bytes.length > 0) endsLine = bytes[bytes.length - 1] === 0x0a;
      if (!out.write(bytes)) await once(out, 'drain');
    }
  }
  out.end();
  await finished(out);
  if (format === 'csv' && (await inputShape(file, 'csv').catch(() => undefined))?.rows !== rows) return undefined;
  return { file, own: false, offsets };
}

/**
 * One commit of the group's good lines, marked with every object it applies. When the table refuses the input as
 * a whole, the group is halved until the object it refuses stands alone and is quarantined; the others commit.
 */
async function commitGroup(group: readonly Prepared[], request: IngestBatchRequest, workDir: string): Promise<Map<Prepared, IngestResult>> {
  const { source: landing, table, tableProperties: props, log } = request;
  const results = new Map<Prepared, IngestResult>();
  let remaining = [...group];
  while (remaining.length > 0) {
    const format = remaining[0]!.format;
    const built = await groupInput(remaining, join(workDir, `batch-${remaining[0]!.index}-${remaining.length}.${format}`));
    if (built === undefined) {
      // Together they read otherwise than alone: each is a commit of its own.
      for (const prepared of remaining) for (const [p, result] of await commitGroup([prepared], request, workDir)) results.set(p, result);
      return results;
    }
    const { file: input, offsets } = built;

    const sources = remaining.map((p) => p.held.source);
    const logged = { objects: remaining.length };
    try {
      const written = await writeBatch(table, {
        input: { file: input, format },
        operation: parseWriteOperation(props.get('hoodie.datasource.write.operation')),
        properties: props,
        badRecords: 'skip',
        tempDir: workDir,
        extraMetadata: commitMarkerOf(sources),
        afterDataFiles: async () => {
          const commits = await mapWithConcurrency(remaining, CLAIMED_AT_ONCE, (prepared) => prepared.held.recheck());
          const found = new Map<Prepared, FoundCommit>();
          remaining.forEach((prepared, i) => {
            const commit = commits[i];
            if (commit !== undefined) found.set(prepared, commit);
          });
          if (found.size > 0) throw new GroupAlreadyAppliedError(found);
        },
        ...(log === undefined ? {} : { onProgress: (message: string) => log.info(message, logged) }),
      });
      // Rows only the writer could judge go to their object's errors file, after the commit (see bad-records.ts).
      const rejectedOf = new Map<Prepared, BadRecord[]>();
      for (const bad of written.badRecords) {
        let j = offsets.length - 1;
        while (offsets[j]! > bad.row) j--;
        const prepared = remaining[j]!;
        rejectedOf.set(prepared, [...(rejectedOf.get(prepared) ?? []), { row: bad.row - offsets[j]!, reason: bad.reason }]);
      }
      await mapWithConcurrency(remaining, CLAIMED_AT_ONCE, async (prepared) => {
        const rejected = rejectedOf.get(prepared) ?? [];
        if (rejected.length > 0) {
          await appendWriterRejections(landing, prepared.errorsKey, prepared.errorsFile, rejected, prepared.errorLineOf);
        }
        const badRecords = prepared.preRejected + rejected.length;
        const result: HandledResult = {
          outcome: 'ingested',
          source: prepared.held.source,
          instantTime: written.instantTime,
          inserted: written.inserted,
          updated: written.updated,
          deleted: written.deleted,
          badRecords,
          ...(remaining.length > 1 ? { commitObjects: remaining.length } : {}),
          ...(badRecords > 0 ? { errorsKey: prepared.errorsKey } : {}),
        };
        await prepared.held.record(result);
        results.set(prepared, result);
      });
      log?.info('batch committed', { instantTime: written.instantTime, objects: remaining.length, inserted: written.inserted, updated: written.updated });
      return results;
    } catch (error) {
      if (error instanceof GroupAlreadyAppliedError) {
        // Recorded as the earlier attempt's; the rest is written again without them.
        for (const [prepared, found] of error.found) results.set(prepared, await prepared.held.recordRecovered(found));
        remaining = remaining.filter((p) => !error.found.has(p));
        continue;
      }
      const reason = inputProblem(error, input);
      if (reason === undefined) throw error;
      if (remaining.length === 1) {
        const prepared = remaining[0]!;
        const errorsKey = await quarantineObject(
          landing,
          { key: prepared.key, etag: prepared.etag, source: prepared.held.source, localFile: prepared.localObject, errorPrefix: request.errorPrefix },
          `the table refused the object: ${reason}`,
        );
        log?.warn('object rejected as a whole; copied to the error prefix', { source: prepared.held.source, reason, errorsKey });
        const result: HandledResult = {
          outcome: 'failed',
          source: prepared.held.source,
          inserted: 0,
          updated: 0,
          deleted: 0,
          badRecords: prepared.preRejected,
          errorsKey,
          reason: `the table refused the object: ${reason}`,
        };
        await prepared.held.record(result);
        results.set(prepared, result);
        return results;
      }
      // Which object the table refuses is not known: halve until it stands alone.
      const half = Math.ceil(remaining.length / 2);
      for (const part of [remaining.slice(0, half), remaining.slice(half)]) {
        for (const [prepared, result] of await commitGroup(part, request, workDir)) results.set(prepared, result);
      }
      return results;
    } finally {
      if (!built.own) await rm(input, { force: true });
    }
  }
  return results;
}
