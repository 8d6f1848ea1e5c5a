/**
 * The ingest Lambda's work (functions/ingest.ts is its shell): the event names landed objects, lib/ingest/ ingests
 * each, one at a time.
 *
 * Events: an S3 notification (`Records[].s3`), an EventBridge "Object Created" event (`detail`), or SQS messages
 * carrying either (also inside an SNS envelope). Keys of S3 notifications are URL-encoded (`+` is a space) and
 * are decoded; EventBridge keys are used as they are.
 *
 * Environment:
 * - TABLE_PATH: the table, `s3://bucket/prefix`.
 * - TABLE_PROPERTIES: Hudi write properties (hoodie.*), as Java properties text or a JSON object; the table is
 *   created from them when absent (hoodie.table.name, hoodie.datasource.write.recordkey.field, ...).
 * - INGEST_PREFIX: only keys under it are ingested (default: every key); others are logged and ignored.
 * - ERROR_PREFIX: where rejected records and objects go in the landing bucket (default `errors/`); keys under it
 *   are never ingested (exclude it from the notification too).
 * - LANDING_BUCKET: the landing bucket (optional; the template sets it). Objects of other buckets are ignored, and
 *   when it is the table's bucket, an INGEST_PREFIX or ERROR_PREFIX overlapping the table is refused at start.
 * - INPUT_FORMAT: jsonl, csv or parquet for keys without a known extension (default: such keys are rejected).
 * - LOCK_TABLE: the DynamoDB lock table clustering uses, as a default lock (settings.ts, lockTableDefaults).
 * - STATE_MACHINE_ARN: the table-services state machine. With hoodie.clean.automatic or hoodie.archive.automatic on
 *   in TABLE_PROPERTIES (Hudi's defaults), ingest follows them as Hudi's writers do after a commit — not by cleaning
 *   inside its own invocation, but by running the trigger's check (trigger.ts) once its objects are handled: it
 *   starts the run the trigger would (clustering when due, else straight to cleaning and archiving), named after the
 *   table's state, so the commit trigger and the schedule asking for the same state start nothing twice. Not set:
 *   the schedule alone starts the services. A failure to start is logged and counted (TableServicesNotStarted), never
 *   thrown: the objects are ingested, and a retry would only find them done.
 *
 * Never the table's own objects: a delivery of a key under the table's prefix (same bucket) is refused — ingesting
 * the table's data files would write them into it again, and each write would notify another round — and so is one
 * whose quarantined copy would land under the table (ERROR_PREFIX inside it). Refusals fail the invocation with one
 * error naming the keys, after the other objects had their turn, so the misconfiguration reaches the dead-letter
 * queue instead of vanishing.
 *
 * Failures: a poison object is quarantined and counts as handled; anything transient (S3, lock, conflict) makes
 * the invocation fail after the other objects were handled, so Lambda retries it (handled objects are then
 * duplicates). With SQS, Powertools' batch processor returns only the failed messages in batchItemFailures (enable
 * ReportBatchItemFailures): a message fails when it is not an S3 event or when one of its objects failed.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Context, S3Event, S3ObjectCreatedNotificationEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { InputFormat } from '../engine/write.js';
import { HudiError, errorMessage } from '../errors.js';
import { ingestObject, s3LandingBucket, type IngestLog, type IngestResult } from '../ingest/index.js';
import { openStorage, parseS3Uri } from '../storage/index.js';
import type { Storage } from '../storage/port.js';
import { archivalConfigFromProperties } from '../archival/config.js';
import { cleanConfigFromProperties } from '../cleaning/config.js';
import { lockTableDefaults, parsePropertiesText, type Environment } from './settings.js';
import type { TriggerOutput } from './trigger.js';

/** One object a notification names. */
export interface Delivery {
  readonly bucket: string;
  readonly key: string;
  readonly etag: string | undefined;
  /** ObjectCreated:Put, Object Created, ... */
  readonly eventName: string;
  readonly created: boolean;
  /** The SQS message it came in. */
  readonly messageId?: string;
}

export interface ObjectSummary extends IngestResult {
  readonly bucket: string;
  readonly key: string;
}

export interface IngestSummary {
  readonly results: ObjectSummary[];
  readonly ignored: { bucket: string; key: string; reason: string }[];
  /** Deliveries refused for good: the table's own objects (see the top of this file). */
  readonly refused: { bucket: string; key: string; reason: string }[];
  readonly errors: { bucket: string; key: string; error: string }[];
  /** What starting the table services after the commits came to (absent when nothing was committed, or they are off). */
  tableServices?: TriggerOutput | { readonly status: 'FAILED'; readonly reason: string };
}

export interface IngestConfig {
  readonly tablePath: string;
  readonly tableProperties: Map<string, string>;
  readonly ingestPrefix: string;
  readonly errorPrefix: string;
  readonly defaultFormat: InputFormat | undefined;
  /** LANDING_BUCKET: deliveries from other buckets are ignored; undefined accepts any. */
  readonly landingBucket?: string | undefined;
  /**
   * `after-commit`: hoodie.clean.automatic or hoodie.archive.automatic is on in TABLE_PROPERTIES (Hudi's defaults),
   * so the table services are started after the commits; `off`: both are off.
   */
  readonly tableServices?: 'after-commit' | 'off';
}

export type IngestEvent = S3Event | S3ObjectCreatedNotificationEvent | SQSEvent;

/** SQS messages are read one by one (a bad one fails alone); any other event is read whole, here. */
export type IngestInput = { readonly kind: 'sqs'; readonly event: SQSEvent } | { readonly kind: 'objects'; readonly deliveries: readonly Delivery[] };

export interface IngestStepLog extends IngestLog {
  error(message: string, attributes?: Record<string, unknown>): void;
}

export interface IngestStepDependencies {
  readonly config: IngestConfig;
  readonly s3: S3Client;
  readonly log: IngestStepLog;
  readonly metrics: Pick<Metrics, 'addMetric'>;
  /** The invocation's context: its remaining time bounds how long a delivery waits for a concurrent one. */
  readonly context?: Pick<Context, 'getRemainingTimeInMillis'> | undefined;
  /**
   * Start the table services after `instant` (the newest commit this invocation made): the trigger's check with
   * the state machine of STATE_MACHINE_ARN. Undefined: no state machine is configured.
   */
  readonly startTableServices?: ((instant: string) => Promise<TriggerOutput>) | undefined;
}

export function parseIngestEvent(event: unknown): IngestInput {
  if (isSqsEvent(event)) return { kind: 'sqs', event };
  return { kind: 'objects', deliveries: deliveriesOf(event) };
}

export async function ingestStep(input: IngestInput, deps: IngestStepDependencies): Promise<IngestSummary | SQSBatchResponse> {
  const table = openStorage(deps.config.tablePath, { s3Client: deps.s3 });
  if (input.kind === 'sqs') {
    const committed: string[] = [];
    const ingestMessage = async (record: SQSRecord): Promise<void> => {
      let deliveries: Delivery[];
      try {
        deliveries = deliveriesOf(unwrapSns(JSON.parse(record.body)), record.messageId);
      } catch (error) {
        // Unparseable: fail it, so it ends in the queue's dead-letter queue rather than vanishing.
        deps.log.error('SQS message is not an S3 event', { messageId: record.messageId, error: errorMessage(error) });
        throw error;
      }
      const summary = await ingestAll(deliveries, table, deps);
      committed.push(...commitsOf(summary));
      if (summary.refused.length > 0) throw refusedObjects(summary, deps.config);
      if (summary.errors.length > 0) throw failedObjects(summary);
    };
    // In order, one message at a time, like the objects of one event; a batch that failed whole is reported, not thrown.
    const response = await processPartialResponse(input.event, ingestMessage, new BatchProcessor(EventType.SQS), { processInParallel: false, throwOnFullBatchFailure: false });
    await startTableServices(committed, deps);
    return response;
  }
  const summary = await ingestAll(input.deliveries, table, deps);
  const started = await startTableServices(commitsOf(summary), deps);
  if (started !== undefined) summary.tableServices = started;
  // Thrown after every object had its turn: the retry finds the handled ones done.
  if (summary.refused.length > 0) throw refusedObjects(summary, deps.config);
  if (summary.errors.length > 0) throw failedObjects(summary);
  return summary;
}

/** The instants the ingested objects committed. */
function commitsOf(summary: IngestSummary): string[] {
  return summary.results.flatMap((result) => (result.outcome === 'ingested' && result.instantTime !== undefined ? [result.instantTime] : []));
}

/** After the invocation's commits, start the table services (see the top of this file); undefined when there is nothing to start. */
async function startTableServices(committed: readonly string[], deps: IngestStepDependencies): Promise<IngestSummary['tableServices']> {
  if (committed.length === 0 || deps.config.tableServices === 'off') return undefined;
  if (deps.startTableServices === undefined) {
    deps.log.info('no state machine configured (STATE_MACHINE_ARN): the table services start on their schedule', { committed });
    return undefined;
  }
  const newest = [...committed].sort().at(-1)!;
  try {
    const outcome = await deps.startTableServices(newest);
    deps.log.info('table services after the commit', { instant: newest, status: outcome.status, reason: outcome.reason, executionName: outcome.executionName });
    return outcome;
  } catch (error) {
    deps.log.error('could not start the table services; the schedule will', { instant: newest, error: errorMessage(error) });
    deps.metrics.addMetric('TableServicesNotStarted', MetricUnit.Count, 1);
    return { status: 'FAILED', reason: errorMessage(error) };
  }
}

function failedObjects(summary: IngestSummary): HudiError {
  return new HudiError(`${summary.errors.length} object(s) failed and will be retried: ${summary.errors.map((e) => `s3://${e.bucket}/${e.key}: ${e.error}`).join('; ')}`);
}

function refusedObjects(summary: IngestSummary, config: IngestConfig): HudiError {
  const failed = summary.errors.length === 0 ? '' : `; besides, ${summary.errors.length} object(s) failed: ${summary.errors.map((e) => `s3://${e.bucket}/${e.key}: ${e.error}`).join('; ')}`;
  return new HudiError(`${summary.refused.length} object(s) refused: ${summary.refused.map((r) => `s3://${r.bucket}/${r.key} ${r.reason}`).join('; ')}${failed}`, {
    location: config.tablePath,
    fix: 'land data outside the table: give INGEST_PREFIX (the template\'s LandingPrefix) and ERROR_PREFIX prefixes outside the table\'s, and keep the table\'s prefix out of the notification',
  });
}

async function ingestAll(deliveries: readonly Delivery[], table: Storage, deps: IngestStepDependencies): Promise<IngestSummary> {
  const { config, log, metrics } = deps;
  const summary: IngestSummary = { results: [], ignored: [], refused: [], errors: [] };
  for (const delivery of deliveries) {
    const { bucket, key } = delivery;
    const ignore = whyIgnored(delivery, config);
    if (ignore !== undefined) {
      log.info('object ignored', { bucket, key, reason: ignore });
      summary.ignored.push({ bucket, key, reason: ignore });
      continue;
    }
    const refusal = whyRefused(delivery, config);
    if (refusal !== undefined) {
      log.error('object refused', { bucket, key, reason: refusal });
      summary.refused.push({ bucket, key, reason: refusal });
      metrics.addMetric('ObjectsRefused', MetricUnit.Count, 1);
      continue;
    }
    try {
      const result = await ingestObject({
        source: s3LandingBucket(bucket, deps.s3),
        key,
        etag: delivery.etag!,
        table,
        tableProperties: config.tableProperties,
        errorPrefix: config.errorPrefix,
        ...(config.defaultFormat === undefined ? {} : { defaultFormat: config.defaultFormat }),
        // Waiting for a concurrent delivery of the same object must leave time for this invocation's other work.
        claim: { waitMs: claimWaitMs(deps.context) },
        log,
      });
      summary.results.push({ bucket, key, ...result });
      log.info('object processed', { bucket, key, ...result });
      if (result.outcome === 'ingested') metrics.addMetric('RecordsIngested', MetricUnit.Count, result.inserted + result.updated);
      if (result.outcome !== 'duplicate') metrics.addMetric('BadRecords', MetricUnit.Count, result.badRecords);
      if (result.outcome === 'failed') metrics.addMetric('ObjectsRejected', MetricUnit.Count, 1);
    } catch (error) {
      log.error('object failed; the invocation will be retried', { bucket, key, error: errorMessage(error) });
      summary.errors.push({ bucket, key, error: errorMessage(error) });
    }
  }
  return summary;
}

function whyIgnored(delivery: Delivery, config: IngestConfig): string | undefined {
  if (!delivery.created) return `not an object-created event (${delivery.eventName})`;
  if (config.landingBucket !== undefined && delivery.bucket !== config.landingBucket) return `not in the landing bucket ${config.landingBucket}`;
  if (delivery.key.endsWith('/')) return 'a folder marker';
  if (delivery.key.startsWith(config.errorPrefix)) return `under the error prefix ${config.errorPrefix}`;
  if (!delivery.key.startsWith(config.ingestPrefix)) return `not under the ingest prefix ${config.ingestPrefix}`;
  if (delivery.etag === undefined || delivery.etag === '') return 'the event has no ETag';
  return undefined;
}

/** The key prefix under which the table's objects live in its bucket ('' for a table at the bucket's root). */
function tableKeyPrefix(tablePath: string): { bucket: string; prefix: string } | undefined {
  const location = parseS3Uri(tablePath);
  if (location === undefined) return undefined;
  return { bucket: location.bucket, prefix: location.prefix === '' ? '' : `${location.prefix}/` };
}

/** Whether some key starts with both prefixes (one of them starts with the other). */
function prefixesOverlap(left: string, right: string): boolean {
  return left.startsWith(right) || right.startsWith(left);
}

/**
 * Whether keys under `prefix` of `bucket` can be the table's own objects (the check template.yaml's
 * LandingOverlapsTable condition makes for LandingPrefix).
 */
export function prefixOverlapsTable(tablePath: string, bucket: string, prefix: string): boolean {
  const table = tableKeyPrefix(tablePath);
  return table !== undefined && table.bucket === bucket && prefixesOverlap(prefix, table.prefix);
}

/** Why a delivery must not be ingested at all: it is one of the table's own objects, or its quarantine would be. */
function whyRefused(delivery: Delivery, config: IngestConfig): string | undefined {
  const table = tableKeyPrefix(config.tablePath);
  if (table === undefined || delivery.bucket !== table.bucket) return undefined;
  if (delivery.key.startsWith(table.prefix)) return `is under the table ${config.tablePath} itself: ingest never reads the table's own objects (it would write them again, and loop)`;
  if (prefixesOverlap(config.errorPrefix, table.prefix)) return `would be quarantined under ${config.errorPrefix}, inside the table ${config.tablePath}`;
  return undefined;
}

function claimWaitMs(context: IngestStepDependencies['context']): number {
  const remaining = context?.getRemainingTimeInMillis() ?? 240_000;
  return Math.max(1_000, Math.min(60_000, Math.floor(remaining / 4)));
}

// ---- configuration ----

export function ingestConfigFromEnv(env: Environment): IngestConfig {
  const tablePath = env['TABLE_PATH']?.trim();
  if (!tablePath) throw new HudiError('TABLE_PATH is not set', { location: 'the function environment', fix: 'set TABLE_PATH=s3://bucket/prefix of the table' });
  const format = env['INPUT_FORMAT']?.trim().toLowerCase() || undefined;
  if (format !== undefined && format !== 'jsonl' && format !== 'csv' && format !== 'parquet') {
    throw new HudiError(`INPUT_FORMAT=${format} is not a format`, { location: 'the function environment', fix: 'use jsonl, csv or parquet, or leave it unset' });
  }
  const ingestPrefix = (env['INGEST_PREFIX'] ?? '').replace(/^\/+/, '');
  const errorPrefix = (env['ERROR_PREFIX'] ?? 'errors/').trim().replace(/^\/+|\/+$/g, '');
  // The quarantined copy of an object would overwrite the object itself. (Keys under it are ignored, see whyIgnored.)
  if (errorPrefix === '') {
    throw new HudiError('ERROR_PREFIX is empty', { location: 'the function environment', fix: 'give rejected records and objects a prefix of their own (default errors/)' });
  }
  const landingBucket = env['LANDING_BUCKET']?.trim() || undefined;
  if (landingBucket !== undefined) {
    // The same refusal as whyRefused's, made once at start: every delivery would be refused otherwise.
    for (const [name, prefix] of [['INGEST_PREFIX', ingestPrefix], ['ERROR_PREFIX', `${errorPrefix}/`]] as const) {
      if (prefixOverlapsTable(tablePath, landingBucket, prefix)) {
        const tablePrefix = tableKeyPrefix(tablePath)?.prefix ?? '';
        throw new HudiError(`${name}=${prefix === '' ? '(empty: every key)' : prefix} overlaps the table ${tablePath} in the landing bucket ${landingBucket}`, {
          location: 'the function environment',
          fix: `give ${name} a prefix outside ${tablePrefix === '' ? 'the table (which fills the bucket: land data in another bucket)' : tablePrefix}`,
        });
      }
    }
  }
  const text = env['TABLE_PROPERTIES'] ?? '';
  const given = text.trim() === '' ? new Map<string, string>() : parsePropertiesText(text, 'TABLE_PROPERTIES');
  // Ingest takes the same lock as clustering (LOCK_TABLE), so the two never write the timeline at once.
  const tableProperties = new Map([...lockTableDefaults(env, (key) => given.has(key)), ...given]);
  // Read here so a bad value fails at start, naming the key (and not after the commits).
  const automatic = cleanConfigFromProperties(tableProperties, 'TABLE_PROPERTIES').automatic || archivalConfigFromProperties(tableProperties, 'TABLE_PROPERTIES').automatic;
  return { tablePath, tableProperties, ingestPrefix, errorPrefix: `${errorPrefix}/`, defaultFormat: format, landingBucket, tableServices: automatic ? 'after-commit' : 'off' };
}

// ---- events ----

function isSqsEvent(event: unknown): event is SQSEvent {
  if (typeof event !== 'object' || event === null || !('Records' in event) || !Array.isArray(event.Records)) return false;
  const first: unknown = event.Records[0];
  return typeof first === 'object' && first !== null && (first as { eventSource?: unknown }).eventSource === 'aws:sqs';
}

/** An SNS notification (SNS → SQS without raw delivery) carries the S3 event as its Message. */
function unwrapSns(body: unknown): unknown {
  if (typeof body === 'object' && body !== null && (body as { Type?: unknown }).Type === 'Notification') {
    const message = (body as { Message?: unknown }).Message;
    if (typeof message === 'string') return JSON.parse(message) as unknown;
  }
  return body;
}

/** The objects an S3 notification or EventBridge event names (none for S3's test event). */
export function deliveriesOf(event: unknown, messageId?: string): Delivery[] {
  const from = messageId === undefined ? {} : { messageId };
  if (typeof event !== 'object' || event === null) throw new HudiError('the event is not an object');
  if ((event as { Event?: unknown }).Event === 's3:TestEvent') return [];
  if ('Records' in event && Array.isArray(event.Records)) {
    return (event as S3Event).Records.map((record) => {
      if (record.s3?.bucket?.name === undefined || typeof record.s3.object?.key !== 'string') throw new HudiError('an S3 event record has no bucket or key');
      return {
        bucket: record.s3.bucket.name,
        key: decodeS3EventKey(record.s3.object.key),
        etag: record.s3.object.eTag,
        eventName: record.eventName,
        created: record.eventName.startsWith('ObjectCreated'),
        ...from,
      };
    });
  }
  if ('detail' in event && (event as { source?: unknown }).source === 'aws.s3') {
    const bridge = event as S3ObjectCreatedNotificationEvent;
    if (typeof bridge.detail?.bucket?.name !== 'string' || typeof bridge.detail.object?.key !== 'string') throw new HudiError('an EventBridge S3 event has no bucket or key');
    return [{
      bucket: bridge.detail.bucket.name,
      key: bridge.detail.object.key,
      etag: bridge.detail.object.etag,
      eventName: bridge['detail-type'],
      created: bridge['detail-type'] === 'Object Created',
      ...from,
    }];
  }
  throw new HudiError('unknown event: expected an S3 notification, an EventBridge S3 event or SQS messages carrying one');
}

/** S3 notifications URL-encode keys with `+` for spaces. */
export function decodeS3EventKey(key: string): string {
  const spaced = key.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced; // a literal '%' S3 failed to encode would not decode; the key is then as given
  }
}

// ---- observability ----

export interface IngestObservability {
  readonly log: IngestStepLog;
  readonly metrics: Metrics;
  /** Run one invocation: the Lambda context on every log line, the metrics published at the end, errors as thrown. */
  invoke<T>(context: Context | undefined, work: () => Promise<T>): Promise<T>;
}

/** One per function module, created at load time (kept across warm invocations). */
export function createIngestObservability(env: Environment = process.env): IngestObservability {
  const logger = new Logger({ serviceName: env['POWERTOOLS_SERVICE_NAME'] ?? 'hudi-ingest' });
  const metrics = new Metrics({ namespace: env['POWERTOOLS_METRICS_NAMESPACE'] ?? 'hudi-serverless', serviceName: 'ingest' });
  return {
    log: {
      info: (message, attributes) => logger.info(message, { ...attributes }),
      warn: (message, attributes) => logger.warn(message, { ...attributes }),
      error: (message, attributes) => logger.error(message, { ...attributes }),
    },
    metrics,
    async invoke(context, work) {
      if (context !== undefined) logger.addContext(context);
      try {
        return await work();
      } finally {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      }
    },
  };
}
