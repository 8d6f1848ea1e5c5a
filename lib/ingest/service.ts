/**
 * Ingest one landed object (S3 put → Lambda) into a Hudi table, at most once per object version: the exactly-once
 * protocol is idempotency.ts, the errors file and quarantine bad-records.ts, reading the object landing-bucket.ts.
 *
 * An object that cannot be read at all (or that the table refuses as a whole) is quarantined and counts as handled
 * ('failed'), so a poison object does not retry forever. Anything else (S3 errors, lock timeouts, write conflicts) is
 * thrown, for Lambda to retry.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { InputFormat } from '../engine/write.js';
import { errorMessage, HudiError, NotAHudiTableError } from '../errors.js';
import { assertMetadataTableKeepable } from '../metadata/index.js';
import { normalizeEtag } from '../storage/etag.js';
import type { Storage } from '../storage/port.js';
import {
  newTableOptionsFromWriteProperties,
  newTableProperties,
  PROPERTIES_FILE,
  readTableConfig,
  type TableConfig,
  tableConfigFromProperties,
} from '../table/config.js';
import { createKeyGenerator, type KeyGenerator, keyGeneratorOptionsForWrite } from '../table/key-generators.js';
import { assertCdcWrite, assertLayoutSupports, cdcLoggingMode, detectTableLayout } from '../table/layouts.js';
import { type WriteResult, writeBatch } from '../writer/write-client.js';
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
import { applyExactlyOnce, handledBefore, INGEST_SOURCE_KEY, ingestSource } from './idempotency.js';
import { downloadLanded } from './landing-bucket.js';
import type { HandledResult, IngestRequest, IngestResult } from './types.js';

/** Ingest one object version into the table, at most once; see the module comment. */
export async function ingestObject(request: IngestRequest): Promise<IngestResult> {
  const { source: landing, key, table } = request;
  const version = { bucket: landing.bucket, key, etag: normalizeEtag(request.etag) };
  if (request.errorPrefix.replace(/^\/+|\/+$/g, '') === '') {
    // The quarantined copy would overwrite the object itself, and its events would come back here.
    throw new HudiError('the error prefix is empty', { fix: 'give rejected records and objects their own prefix, e.g. errors/ (ERROR_PREFIX)' });
  }

  const done = await handledBefore(table, version);
  if (done !== undefined) return done;
  await assertIngestable(table, request.tableProperties);
  return applyExactlyOnce(
    {
      table,
      version,
      location: landing.uriOf(key),
      ...(request.claim === undefined ? {} : { claim: request.claim }),
      ...(request.log === undefined ? {} : { log: request.log }),
      now: request.now ?? (() => new Date()),
    },
    (beforeCommit) => applyObject(request, { etag: version.etag, source: ingestSource(version.bucket, key, version.etag), beforeCommit }),
  );
}

/** Download, validate, write. Returns 'ingested', 'failed' or 'superseded'; throws what should be retried. */
async function applyObject(request: IngestRequest, context: { etag: string; source: string; beforeCommit: () => Promise<void> }): Promise<HandledResult> {
  const { source: landing, key, table, tableProperties: props, log } = request;
  const { etag, source } = context;
  const workDir = await mkdtemp(join(request.tempDir ?? tmpdir(), 'hudi-ingest-'));
  const zero = { source, inserted: 0, updated: 0, deleted: 0, badRecords: 0 };
  try {
    const landed = await downloadLanded(landing, key, etag, workDir, request.defaultFormat);
    if (landed === undefined) {
      log?.warn('the object was overwritten or deleted since the event; its newer version has its own event', { source });
      return { outcome: 'superseded', ...zero };
    }
    const { file: localObject, format, compressed } = landed;
    const quarantine = async (reason: string, badRecords = 0): Promise<HandledResult> => {
      const errorsKey = await quarantineObject(landing, { key, etag, source, localFile: localObject, errorPrefix: request.errorPrefix }, reason);
      log?.warn('object rejected as a whole; copied to the error prefix', { source, reason, errorsKey });
      return { outcome: 'failed', ...zero, badRecords, errorsKey, reason };
    };
    if (format === undefined) {
      return await quarantine(
        'unknown input format: the key has no .jsonl/.json/.ndjson/.csv/.parquet extension (optionally .gz) and no default format is configured',
      );
    }
    if (format === 'parquet' && compressed) return await quarantine('.parquet.gz is not supported: Parquet compresses internally, upload the .parquet file');

    const errorsKey = errorKeyOf(request.errorPrefix, key, '.errors.jsonl');
    const errorsFile = join(workDir, 'errors.jsonl');
    let input: { file: string; format: InputFormat } = { file: localObject, format };
    let errorLineOf: ErrorLineOf;
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
        return await quarantine(
          `not JSON lines: no line is a JSON object (line ${split.firstRejection!.line}: ${split.firstRejection!.reason})`,
          split.rejected,
        );
      }
      preRejected = split.rejected;
      // Written before the commit: a crash after it must not lose them.
      if (preRejected > 0) await landing.uploadFile(errorsKey, errorsFile);
      if (split.good === 0) {
        log?.info('no valid records to write', { source, badRecords: preRejected });
        return { outcome: 'ingested', ...zero, badRecords: preRejected, ...(preRejected > 0 ? { errorsKey } : {}) };
      }
      input = { file: goodFile, format: 'jsonl' };
      errorLineOf = jsonLinesErrorLine(split, goodFile);
    } else if (format === 'csv') {
      errorLineOf = csvErrorLine(localObject, compressed);
    } else {
      errorLineOf = rowErrorLine;
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

    // Rows only the writer could judge: added to the errors file after the commit (see bad-records.ts).
    if (written.badRecords.length > 0) await appendWriterRejections(landing, errorsKey, errorsFile, written.badRecords, errorLineOf);
    const badRecords = preRejected + written.badRecords.length;
    return {
      outcome: 'ingested',
      source,
      instantTime: written.instantTime,
      inserted: written.inserted,
      updated: written.updated,
      deleted: written.deleted,
      badRecords,
      ...(badRecords > 0 ? { errorsKey } : {}),
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Refuse a layout writes do not keep, and a table whose Hudi metadata table the write could not keep (a partition being built, a compaction due),
 * before claiming or downloading anything; writeBatch checks again under the lock and keeps the metadata table.
 * The error is thrown, not quarantined: the object is fine, the table is not.
 */
export async function assertIngestable(table: Storage, properties: ReadonlyMap<string, string>): Promise<void> {
  let config: TableConfig;
  try {
    config = await readTableConfig(table);
  } catch (error) {
    if (error instanceof NotAHudiTableError) return;
    throw error;
  }
  // An ingest commits through writeBatch, the writer's path: a write commit as far as the metadata table goes.
  await assertMetadataTableKeepable(table, 'an ingest', properties, config, 'write');
  // A layout writes refuse (CDC, bucket index, …) is refused here too, before the object is claimed; writeBatch
  // checks again with the table's file ids.
  const layout = await detectTableLayout(table, config, { properties });
  assertLayoutSupports(layout, 'write', table.uriOf(PROPERTIES_FILE));
  assertCdcWrite(
    layout,
    {
      operation: parseWriteOperation(properties.get('hoodie.datasource.write.operation')),
      newTable: false,
      ...(layout.cdc ? { loggingMode: cdcLoggingMode(config, table.uriOf(PROPERTIES_FILE)) } : {}),
    },
    table.uriOf(PROPERTIES_FILE),
  );
}

/** The table's key generator, or the one the properties will create the table with (writeBatch creates it). */
export async function keyGeneratorFor(table: Storage, props: ReadonlyMap<string, string>): Promise<KeyGenerator> {
  let config: TableConfig;
  try {
    config = await readTableConfig(table);
  } catch (error) {
    if (!(error instanceof NotAHudiTableError)) throw error;
    const location = 'TABLE_PROPERTIES';
    config = tableConfigFromProperties(newTableProperties(newTableOptionsFromWriteProperties(props, location)), location);
  }
  return createKeyGenerator(keyGeneratorOptionsForWrite(config, props));
}
