/**
 * Ingest one landed object (S3 put → Lambda) into a Hudi table, at most once per object version.
 *
 * Exactly-once, per (bucket, key, ETag) — the `source`, `<bucket>/<key>#<etag>`:
 * 1. Done record `.hoodie/.ingest/<sha256(source)>.json` (created with putIfAbsent after the commit): when it
 *    exists, the object was handled (ingested, quarantined or superseded) and every later delivery is a 'duplicate'.
 * 2. Claim: before any work, a delivery takes a per-object lease, the storage lock (lib/lock/storage-lock.ts) kept
 *    under `.hoodie/.ingest/<id>/`: created with putIfAbsent, renewed every lease/3 while this process runs, taken
 *    over only after it stayed unrenewed for a whole lease (a crashed or timed-out Lambda). A concurrent delivery of
 *    the same event waits for the holder, then finds the done record. Only the holder writes.
 * 3. Commit marker: the Hudi commit carries `extraMetadata["hudi-serverless.ingest.source"] = source`. A process
 *    that dies after the commit but before the done record leaves `.hoodie/.ingest/<id>/attempt.json`; the next
 *    holder then scans the completed commits since that attempt for the marker and, when found, only writes the
 *    done record. It scans again just before its own commit (writeBatch's pre-commit hook, after re-checking its
 *    lease), so a previous holder that was still committing when the lease lapsed is not applied twice either.
 *    Residual risk: a holder whose renewals fail for a whole lease yet still commits, at the same moment as the
 *    taker's commit; with upsert (the default) that re-applies identical records, an extra commit but no new rows.
 *
 * Bad records are never dropped silently: JSON lines are checked here (a JSON object with a usable record key) and
 * rejected lines go to `<errorPrefix>/<key>.errors.jsonl` in the landing bucket BEFORE the write (so a crash after
 * the commit cannot lose them); rows the writer rejects (CSV, Parquet, or keys only it can judge) are added after.
 * An object that cannot be read at all (or that the table refuses as a whole) is copied to `<errorPrefix>/<key>`
 * with `<errorPrefix>/<key>.error.json` giving the reason, and counts as handled ('failed'), so a poison object
 * does not retry forever. Anything else (S3 errors, lock timeouts, write conflicts) is thrown, for Lambda to retry.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { InputFormat } from './engine/write.js';
import { AlreadyExistsError, ConflictError, HudiError, NotFoundError, errorMessage } from './errors.js';
import { createKeyGenerator, keyGeneratorOptionsFromTable, type KeyGenerator } from './keygen.js';
import { StorageLockProvider } from './lock/storage-lock.js';
import type { LockLease } from './lock/port.js';
import { S3Storage, describeS3Error } from './storage/s3.js';
import type { Storage, StoredObject } from './storage/port.js';
import { METADATA_ENABLE_KEY, MetadataTable } from './metadata/index.js';
import { newTableOptionsFromWriteProperties, newTableProperties, readTableConfig, tableConfigFromProperties, type TableConfig } from './table-config.js';
import { formatInstantTime, compareInstantTimes } from './timeline/instant.js';
import { loadTimeline, readCommitMetadata } from './timeline/timeline.js';
import { writeBatch, type BadRecord, type WriteResult } from './writer/write-client.js';
import { parseWriteOperation } from './writer/write-config.js';

/** The commit extraMetadata key naming the object a commit applied. */
export const INGEST_SOURCE_KEY = 'hudi-serverless.ingest.source';
/** Idempotency records, inside the table's metafolder (Hudi ignores folders there it does not know). */
export const INGEST_FOLDER = '.hoodie/.ingest';
/** Commits this much older than the first attempt are not scanned (instant times come from writers' clocks). */
const CLOCK_SKEW_MS = 10 * 60_000;
/** Longest original text kept per bad record in the errors file. */
const MAX_RECORD_TEXT = 64 * 1024;
/** CSV files up to this size are re-read to show the text of rejected rows. */
const MAX_CSV_SCAN_BYTES = 64 * 1024 * 1024;

/** The landing bucket, as ingestion needs it. */
export interface LandingBucket {
  readonly bucket: string;
  uriOf(key: string): string;
  /** Download `key` to `localFile` if it is still the version with this ETag; false when it changed or is gone. */
  downloadVersion(key: string, etag: string, localFile: string): Promise<boolean>;
  put(key: string, body: Uint8Array | string): Promise<void>;
  uploadFile(key: string, localFile: string): Promise<void>;
}

/** Where log lines go (a Powertools Logger fits); the core logs nothing without one. */
export interface IngestLog {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
}

export interface IngestRequest {
  readonly source: LandingBucket;
  readonly key: string;
  /** The version's ETag, as in the S3 event (quotes are ignored). */
  readonly etag: string;
  readonly table: Storage;
  /** Hudi write properties (hoodie.*); they also create the table when it does not exist. */
  readonly tableProperties: ReadonlyMap<string, string>;
  /** Key prefix in the landing bucket for rejected records and objects, e.g. `errors/`. */
  readonly errorPrefix: string;
  /** Format of keys without a known extension; without it such objects are rejected. */
  readonly defaultFormat?: InputFormat;
  readonly tempDir?: string;
  /** The per-object claim: lease (default 20 s), how long to wait for another delivery (default 60 s), poll. */
  readonly claim?: { readonly leaseMs?: number; readonly waitMs?: number; readonly pollMs?: number };
  readonly log?: IngestLog;
  readonly now?: () => Date;
}

export type IngestOutcome =
  /** Written (or nothing left to write after rejecting bad records). */
  | 'ingested'
  /** Handled before, by this or an earlier delivery. */
  | 'duplicate'
  /** Unreadable or refused as a whole: copied to the error prefix with the reason. */
  | 'failed'
  /** The key holds another version now (or none); that version's own event ingests it. */
  | 'superseded';

export interface IngestResult {
  readonly outcome: IngestOutcome;
  /** `<bucket>/<key>#<etag>` */
  readonly source: string;
  /** For a duplicate: what the first handling did. */
  readonly originalOutcome?: Exclude<IngestOutcome, 'duplicate'>;
  readonly instantTime?: string;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly badRecords: number;
  /** Key of the errors file (bad records) or of the error description (failed object) in the landing bucket. */
  readonly errorsKey?: string;
  readonly reason?: string;
  /** A duplicate found through the commit marker (an earlier attempt committed, then died). */
  readonly recovered?: boolean;
}

/** What handling an object (not a duplicate delivery) came to. */
type HandledResult = IngestResult & { readonly outcome: Exclude<IngestOutcome, 'duplicate'> };

/** The done record's content: what handling the object came to, and which object version it was. */
type DoneRecord = Pick<HandledResult, 'source' | 'outcome' | 'instantTime' | 'inserted' | 'updated' | 'deleted' | 'badRecords' | 'errorsKey' | 'reason'> & {
  readonly bucket: string;
  readonly key: string;
  readonly etag: string;
  readonly completedAt: string;
};

interface AttemptRecord {
  readonly firstAttemptAt: string;
  readonly attempts: number;
}

/** One rejected record, a line of `<key>.errors.jsonl`. `line` is 1-based; `row` the 0-based data row (CSV, Parquet). */
export interface ErrorLine {
  readonly line?: number;
  readonly row?: number;
  readonly reason: string;
  readonly record?: string;
  readonly truncated?: boolean;
}

export function normalizeEtag(etag: string): string {
  return etag.trim().replace(/^W\//, '').replace(/^"+|"+$/g, '');
}

export function ingestSource(bucket: string, key: string, etag: string): string {
  return `${bucket}/${key}#${normalizeEtag(etag)}`;
}

export function ingestId(source: string): string {
  return createHash('sha256').update(source).digest('hex');
}

/** Input format from the key's extension (`.gz` allowed after it), else the default. */
export function formatOfKey(key: string, defaultFormat?: InputFormat): InputFormat | undefined {
  const name = key.toLowerCase().replace(/\.gz$/, '');
  if (/\.(jsonl|json|ndjson)$/.test(name)) return 'jsonl';
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.parquet')) return 'parquet';
  return defaultFormat;
}

/** `errors/` + `in/a.jsonl` → `errors/in/a.jsonl` (the prefix is never empty, see ingestObject). */
export function errorKeyOf(errorPrefix: string, key: string, suffix = ''): string {
  return `${errorPrefix.replace(/^\/+|\/+$/g, '')}/${key}${suffix}`;
}

/** Thrown from the pre-commit hook: an earlier attempt's commit already applied this object. */
class AlreadyAppliedError extends Error {
  constructor(readonly found: FoundCommit) {
    super(`already applied by commit ${found.instantTime}`);
  }
}

/** Ingest one object version into the table, at most once; see the module comment. */
export async function ingestObject(request: IngestRequest): Promise<IngestResult> {
  const { source: landing, key, table } = request;
  const etag = normalizeEtag(request.etag);
  const source = ingestSource(landing.bucket, key, etag);
  const id = ingestId(source);
  const donePath = `${INGEST_FOLDER}/${id}.json`;
  const log = request.log;
  const now = request.now ?? (() => new Date());
  if (request.errorPrefix.replace(/^\/+|\/+$/g, '') === '') {
    // The quarantined copy would overwrite the object itself, and its events would come back here.
    throw new HudiError('the error prefix is empty', { fix: 'give rejected records and objects their own prefix, e.g. errors/ (ERROR_PREFIX)' });
  }

  const done = await readDone(table, donePath);
  if (done !== undefined) return duplicateOf(done);
  await assertIngestable(table, request.tableProperties);

  const claimStorage = prefixedStorage(table, `${INGEST_FOLDER}/${id}`);
  const lock = new StorageLockProvider(claimStorage, {
    ...(request.claim?.leaseMs === undefined ? {} : { leaseMs: request.claim.leaseMs }),
    ...(request.claim?.pollMs === undefined ? {} : { pollMs: request.claim.pollMs }),
  });
  let lease: LockLease;
  try {
    lease = await lock.acquire(request.claim?.waitMs === undefined ? {} : { waitMs: request.claim.waitMs });
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    throw new ConflictError(`another delivery of this object is still being ingested: ${error.message}`, {
      location: landing.uriOf(key),
      fix: 'nothing to do: this delivery fails so that it is retried, and the retry finds the object done',
    });
  }

  let recorded = false;
  try {
    // The holder before us may have finished between our first look and the claim.
    const doneMeanwhile = await readDone(table, donePath);
    if (doneMeanwhile !== undefined) {
      recorded = true;
      return duplicateOf(doneMeanwhile);
    }
    const attempt = await readAttempt(claimStorage);
    const record = (outcome: Omit<DoneRecord, 'source' | 'bucket' | 'key' | 'etag' | 'completedAt'>): Promise<void> =>
      writeDone(table, donePath, { source, bucket: landing.bucket, key, etag, ...outcome, completedAt: now().toISOString() }).then(() => {
        recorded = true;
      });

    if (attempt !== undefined) {
      const found = await findCommitOf(table, source, new Date(Date.parse(attempt.firstAttemptAt) - CLOCK_SKEW_MS));
      if (found !== undefined) {
        log?.warn('an earlier attempt committed this object but did not record it; recording it now', { source, instantTime: found.instantTime });
        await record({ outcome: 'ingested', ...found });
        return { outcome: 'duplicate', originalOutcome: 'ingested', source, ...found, recovered: true };
      }
    }
    await claimStorage.put('attempt.json', JSON.stringify({
      firstAttemptAt: attempt?.firstAttemptAt ?? now().toISOString(),
      attempts: (attempt?.attempts ?? 0) + 1,
    } satisfies AttemptRecord));

    const beforeCommit = async (): Promise<void> => {
      // The lease must still be ours at the commit, and a previous holder must not have committed meanwhile.
      await lease.assertHeld();
      if (attempt === undefined) return;
      const found = await findCommitOf(table, source, new Date(Date.parse(attempt.firstAttemptAt) - CLOCK_SKEW_MS));
      if (found !== undefined) throw new AlreadyAppliedError(found);
    };
    let result: HandledResult;
    try {
      result = await applyObject(request, { etag, source, beforeCommit });
    } catch (error) {
      if (!(error instanceof AlreadyAppliedError)) throw error;
      await record({ outcome: 'ingested', ...error.found });
      return { outcome: 'duplicate', originalOutcome: 'ingested', source, ...error.found, recovered: true };
    }
    await record({
      outcome: result.outcome, inserted: result.inserted, updated: result.updated, deleted: result.deleted, badRecords: result.badRecords,
      ...(result.instantTime === undefined ? {} : { instantTime: result.instantTime }),
      ...(result.errorsKey === undefined ? {} : { errorsKey: result.errorsKey }),
      ...(result.reason === undefined ? {} : { reason: result.reason }),
    });
    return result;
  } finally {
    await lease.release();
    // Once the done record exists the claim folder is no longer needed; a leftover costs one small object.
    if (recorded) await deleteAll(claimStorage).catch(() => undefined);
  }
}

/** Download, validate, write. Returns 'ingested', 'failed' or 'superseded'; throws what should be retried. */
async function applyObject(
  request: IngestRequest,
  context: { etag: string; source: string; beforeCommit: () => Promise<void> },
): Promise<HandledResult> {
  const { source: landing, key, table, tableProperties: props, log } = request;
  const { etag, source } = context;
  const workDir = await mkdtemp(join(request.tempDir ?? tmpdir(), 'hudi-ingest-'));
  const zero = { source, inserted: 0, updated: 0, deleted: 0, badRecords: 0 };
  try {
    const compressed = /\.gz$/i.test(key);
    const format = formatOfKey(key, request.defaultFormat);
    // Keep the extension: DuckDB picks decompression from it.
    const localObject = join(workDir, `object.${format ?? 'unknown'}${compressed ? '.gz' : ''}`);
    if (!(await landing.downloadVersion(key, etag, localObject))) {
      log?.warn('the object was overwritten or deleted since the event; its newer version has its own event', { source });
      return { outcome: 'superseded', ...zero };
    }
    const quarantine = async (reason: string, badRecords = 0): Promise<HandledResult> => {
      const errorsKey = errorKeyOf(request.errorPrefix, key, '.error.json');
      await landing.uploadFile(errorKeyOf(request.errorPrefix, key), localObject);
      await landing.put(errorsKey, `${JSON.stringify({ source, key, etag, reason, at: new Date().toISOString() }, null, 2)}\n`);
      log?.warn('object rejected as a whole; copied to the error prefix', { source, reason, errorsKey });
      return { outcome: 'failed', ...zero, badRecords, errorsKey, reason };
    };
    if (format === undefined) {
      return await quarantine('unknown input format: the key has no .jsonl/.json/.ndjson/.csv/.parquet extension (optionally .gz) and no default format is configured');
    }
    if (format === 'parquet' && compressed) return await quarantine('.parquet.gz is not supported: Parquet compresses internally, upload the .parquet file');

    const errorsKey = errorKeyOf(request.errorPrefix, key, '.errors.jsonl');
    const errorsFile = join(workDir, 'errors.jsonl');
    let input: { file: string; format: InputFormat } = { file: localObject, format };
    let toErrorLine: (bad: BadRecord) => Promise<ErrorLine>;
    let preRejected = 0;

    if (format === 'jsonl') {
      const keygen = await keyGeneratorFor(table, props);
      let plain = localObject;
      if (compressed) {
        plain = join(workDir, 'object.jsonl');
        try {
          await pipeline(createReadStream(localObject), createGunzip(), createWriteStream(plain));
        } catch (error) {
          if (isZlibError(error)) return await quarantine(`not gzip-compressed: ${errorMessage(error)}`);
          throw error;
        }
      }
      const goodFile = join(workDir, 'good.jsonl');
      const split = await splitJsonLines(plain, goodFile, errorsFile, keygen);
      if (split.objects === 0 && split.rejected > 0) {
        return await quarantine(`not JSON lines: no line is a JSON object (line ${split.firstRejection!.line}: ${split.firstRejection!.reason})`, split.rejected);
      }
      preRejected = split.rejected;
      // Written before the commit: a crash after it must not lose them.
      if (preRejected > 0) await landing.uploadFile(errorsKey, errorsFile);
      if (split.good === 0) {
        log?.info('no valid records to write', { source, badRecords: preRejected });
        return { outcome: 'ingested', ...zero, badRecords: preRejected, ...(preRejected > 0 ? { errorsKey } : {}) };
      }
      input = { file: goodFile, format: 'jsonl' };
      toErrorLine = async (bad) => ({ line: split.lineOfRow[bad.row]!, reason: bad.reason, ...textOf(await lineOfFile(goodFile, bad.row)) });
    } else if (format === 'csv') {
      toErrorLine = async (bad) => ({ row: bad.row, reason: bad.reason, ...(compressed ? {} : await csvRowText(localObject, bad.row)) });
    } else {
      toErrorLine = async (bad) => ({ row: bad.row, reason: bad.reason });
    }

    let written: WriteResult;
    try {
      written = await writeBatch(table, {
        input,
        operation: parseWriteOperation(props.get('hoodie.datasource.write.operation')),
        properties: props,
        badRecords: 'skip',
        tempDir: workDir,
        extraMetadata: { [INGEST_SOURCE_KEY]: source },
        afterDataFiles: context.beforeCommit,
        ...(log === undefined ? {} : { onProgress: (message: string) => log.info(message, { source }) }),
      });
    } catch (error) {
      const reason = inputProblem(error, input.file);
      if (reason === undefined) throw error;
      return await quarantine(`the table refused the object: ${reason}`, preRejected);
    }

    if (written.badRecords.length > 0) {
      // Rows only the writer could judge: added to the errors file after the commit (see the module comment).
      const out = createWriteStream(errorsFile, { flags: 'a' });
      for (const bad of written.badRecords) await writeLine(out, `${JSON.stringify(await toErrorLine(bad))}\n`);
      out.end();
      await finished(out);
      await landing.uploadFile(errorsKey, errorsFile);
    }
    const badRecords = preRejected + written.badRecords.length;
    return {
      outcome: 'ingested', source, instantTime: written.instantTime, inserted: written.inserted, updated: written.updated, deleted: written.deleted,
      badRecords, ...(badRecords > 0 ? { errorsKey } : {}),
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Whether a failed write is about the input itself (permanent: the same bytes fail the same way), with the reason.
 * The engine names the input file as the error's location for those; anything else is worth a retry.
 */
function inputProblem(error: unknown, inputFile: string): string | undefined {
  if (!(error instanceof HudiError) || error instanceof ConflictError) return undefined;
  const aboutInput = error.location === inputFile || /is not a column of the input/.test(error.message);
  return aboutInput ? error.message.split(`${inputFile}: `).join('').split(inputFile).join('the object') : undefined;
}

function isZlibError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' && error.code.startsWith('Z_');
}

// ---- JSON lines ----

interface JsonLinesSplit {
  /** Lines that are JSON objects (valid or not). */
  readonly objects: number;
  readonly good: number;
  readonly rejected: number;
  readonly firstRejection: { line: number; reason: string } | undefined;
  /** 1-based line in the object of each row of the good file. */
  readonly lineOfRow: readonly number[];
}

/** Split JSON lines into the good file (one object per line) and error lines; blank lines are no records. */
async function splitJsonLines(file: string, goodFile: string, errorsFile: string, keygen: KeyGenerator): Promise<JsonLinesSplit> {
  const good = createWriteStream(goodFile);
  const errors = createWriteStream(errorsFile);
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lineNumber = 0;
  let objects = 0;
  let rejected = 0;
  let firstRejection: JsonLinesSplit['firstRejection'];
  const lineOfRow: number[] = [];
  try {
    for await (const line of lines) {
      lineNumber++;
      const text = line.trim();
      if (text === '') continue;
      const { isObject, reason } = checkLine(text, keygen);
      if (isObject) objects++;
      if (reason === undefined) {
        lineOfRow.push(lineNumber);
        await writeLine(good, `${text}\n`);
      } else {
        rejected++;
        firstRejection ??= { line: lineNumber, reason };
        await writeLine(errors, `${JSON.stringify({ line: lineNumber, reason, ...textOf(line) } satisfies ErrorLine)}\n`);
      }
    }
  } finally {
    good.end();
    errors.end();
    await Promise.all([finished(good), finished(errors)]);
  }
  return { objects, good: lineOfRow.length, rejected, firstRejection, lineOfRow };
}

/** Whether a line is a JSON object, and why it is not a usable record (undefined when it is). */
function checkLine(text: string, keygen: KeyGenerator): { isObject: boolean; reason?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { isObject: false, reason: `not JSON: ${errorMessage(error)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { isObject: false, reason: `not a JSON object (${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value})` };
  }
  try {
    // The record key only: partition values the engine renders differently (timestamps) are left to the writer.
    keygen.recordKey(value as Record<string, unknown>);
  } catch (error) {
    return { isObject: true, reason: errorMessage(error) };
  }
  return { isObject: true };
}

/**
 * Refuse a table whose Hudi metadata table the write could not keep (a partition being built, a compaction due),
 * before claiming or downloading anything; writeBatch checks again under the lock and keeps the metadata table.
 * The error is thrown, not quarantined: the object is fine, the table is not.
 */
async function assertIngestable(table: Storage, properties: ReadonlyMap<string, string>): Promise<void> {
  let config: TableConfig;
  try {
    config = await readTableConfig(table);
  } catch (error) {
    if (error instanceof HudiError && /not a Hudi table/.test(error.message)) return;
    throw error;
  }
  // hoodie.metadata.enable=false: the write drops the metadata table first, as Hudi's writers do.
  if (properties.get(METADATA_ENABLE_KEY)?.trim().toLowerCase() === 'false') return;
  (await MetadataTable.open(table, { config }))?.assertMaintainable('an ingest', { properties });
}

/** The table's key generator, or the one the properties will create the table with. */
async function keyGeneratorFor(table: Storage, props: ReadonlyMap<string, string>): Promise<KeyGenerator> {
  let config: TableConfig;
  try {
    config = await readTableConfig(table);
  } catch (error) {
    if (!(error instanceof HudiError && /not a Hudi table/.test(error.message))) throw error;
    const location = 'TABLE_PROPERTIES';
    config = tableConfigFromProperties(newTableProperties(newTableOptionsFromWriteProperties(props, location)), location);
  }
  return createKeyGenerator(keyGeneratorOptionsFromTable(config));
}

function textOf(text: string | undefined): Pick<ErrorLine, 'record' | 'truncated'> {
  if (text === undefined) return {};
  return text.length > MAX_RECORD_TEXT ? { record: text.slice(0, MAX_RECORD_TEXT), truncated: true } : { record: text };
}

async function writeLine(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

/** The 0-based `row`-th line of a file. */
async function lineOfFile(file: string, row: number): Promise<string | undefined> {
  let index = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (index++ === row) {
      lines.close();
      return line;
    }
  }
  return undefined;
}

/** A CSV data row's text and 1-based line (header = line 1), honouring quoted newlines; nothing for big files. */
async function csvRowText(file: string, row: number): Promise<Pick<ErrorLine, 'line' | 'record' | 'truncated'>> {
  if ((await stat(file)).size > MAX_CSV_SCAN_BYTES) return {};
  const text = (await readFile(file)).toString('utf8');
  let record = 0;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let quoted = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    if (i === text.length || (!quoted && c === '\n')) {
      if (record === row + 1) return { line: startLine, ...textOf(text.slice(start, i).replace(/\r$/, '')) };
      record++;
      start = i + 1;
      startLine = line + 1;
    }
    if (c === '\n') line++;
  }
  return {};
}

// ---- idempotency records ----

async function readJson(storage: Storage, path: string): Promise<unknown> {
  try {
    return JSON.parse(Buffer.from(await storage.get(path)).toString('utf8')) as unknown;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    if (error instanceof SyntaxError) {
      throw new HudiError(`ingest record is not JSON: ${error.message}`, { location: storage.uriOf(path), fix: 'delete it to let the object be ingested again' });
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
  const value = await readJson(claimStorage, 'attempt.json');
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Partial<AttemptRecord>;
  // An unreadable time still proves an attempt: scan everything then.
  const firstAttemptAt = typeof record.firstAttemptAt === 'string' && !Number.isNaN(Date.parse(record.firstAttemptAt)) ? record.firstAttemptAt : new Date(0).toISOString();
  return { firstAttemptAt, attempts: typeof record.attempts === 'number' ? record.attempts : 1 };
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
    outcome: 'duplicate', originalOutcome: done.outcome, source: done.source,
    inserted: done.inserted ?? 0, updated: done.updated ?? 0, deleted: done.deleted ?? 0, badRecords: done.badRecords ?? 0,
    ...(done.instantTime === undefined ? {} : { instantTime: done.instantTime }),
    ...(done.errorsKey === undefined ? {} : { errorsKey: done.errorsKey }),
    ...(done.reason === undefined ? {} : { reason: done.reason }),
  };
}

interface FoundCommit {
  readonly instantTime: string;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly badRecords: number;
}

/** The completed commit (since `since`) whose extraMetadata names `source`, newest first. */
export async function findCommitOf(table: Storage, source: string, since: Date): Promise<FoundCommit | undefined> {
  const timeline = await loadTimeline(table);
  // No commit yet (an earlier attempt may have died before it created the table): nothing to find.
  if (timeline.completedWrites().length === 0) return undefined;
  // Instant times are on the table's clock (hoodie.table.timeline.timezone).
  const sinceTime = formatInstantTime(since, (await readTableConfig(table)).timelineTimeZone);
  const candidates = timeline.completedWrites().filter((i) => i.action === 'commit' && compareInstantTimes(i.time, sinceTime) >= 0).reverse();
  for (const instant of candidates) {
    const metadata = await readCommitMetadata(table, instant);
    if (metadata.extraMetadata[INGEST_SOURCE_KEY] !== source) continue;
    const stats = Object.values(metadata.partitionToWriteStats).flat();
    const sum = (pick: (s: (typeof stats)[number]) => number) => stats.reduce((total, s) => total + pick(s), 0);
    // Bad records are not in the commit; the errors file (written before the commit for JSON lines) has them.
    return { instantTime: instant.time, inserted: sum((s) => s.numInserts), updated: sum((s) => s.numUpdateWrites), deleted: sum((s) => s.numDeletes), badRecords: 0 };
  }
  return undefined;
}

/** A Storage rooted at `prefix` under another (the claim's lock lives in its own folder per object). */
function prefixedStorage(base: Storage, prefix: string): Storage {
  const full = (path: string) => (path === '' ? prefix : `${prefix}/${path}`);
  const relative = (object: StoredObject): StoredObject => ({ ...object, path: object.path.startsWith(`${prefix}/`) ? object.path.slice(prefix.length + 1) : object.path });
  return {
    uri: base.uriOf(prefix),
    uriOf: (path) => base.uriOf(full(path)),
    get: (path) => base.get(full(path)),
    getRange: (path, start, end) => base.getRange(full(path), start, end),
    head: async (path) => {
      const object = await base.head(full(path));
      return object === undefined ? undefined : relative(object);
    },
    put: (path, body) => base.put(full(path), body),
    putIfAbsent: (path, body) => base.putIfAbsent(full(path), body),
    uploadFile: (path, localFile) => base.uploadFile(full(path), localFile),
    downloadFile: (path, localFile) => base.downloadFile(full(path), localFile),
    listDir: async (dir) => {
      const listed = await base.listDir(full(dir));
      return { files: listed.files.map(relative), dirs: listed.dirs };
    },
    listRecursive: async (dir) => (await base.listRecursive(full(dir))).map(relative),
    delete: (paths) => base.delete(paths.map(full)),
  };
}

async function deleteAll(storage: Storage): Promise<void> {
  const objects = await storage.listRecursive('');
  if (objects.length > 0) await storage.delete(objects.map((o) => o.path));
}

// ---- S3 adapter ----

/** The landing bucket on S3: conditional GET (If-Match) so that a later overwrite is never ingested under this ETag. */
export function s3LandingBucket(bucket: string, client: S3Client): LandingBucket {
  const storage = new S3Storage(bucket, '', { client });
  return {
    bucket,
    uriOf: (key) => `s3://${bucket}/${key}`,
    put: (key, body) => storage.put(key, body),
    uploadFile: (key, localFile) => storage.uploadFile(key, localFile),
    async downloadVersion(key, etag, localFile) {
      let body: unknown;
      try {
        const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, IfMatch: `"${normalizeEtag(etag)}"` }));
        body = response.Body;
      } catch (error) {
        const status = httpStatusOf(error);
        if (status === 412 || status === 404) return false;
        throw describeS3Error(error, { bucket, key, action: 'read' });
      }
      const out = createWriteStream(localFile);
      if (body instanceof Readable) {
        await pipeline(body, out);
      } else {
        // Not Node's stream (other runtimes): the SDK's byte helper.
        const bytes = body === undefined ? new Uint8Array(0) : await (body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
        out.end(bytes);
        await finished(out);
      }
      return true;
    },
  };
}

function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata;
  return typeof metadata?.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}
