/**
 * Lambda: ingest objects landed in S3 into a Hudi table (lib/ingest.ts), one object at a time.
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
 * - INPUT_FORMAT: jsonl, csv or parquet for keys without a known extension (default: such keys are rejected).
 *
 * Failures: a poison object is quarantined and counts as handled; anything transient (S3, lock, conflict) makes
 * the invocation fail after the other objects were handled, so Lambda retries it (handled objects are then
 * duplicates). With SQS, only the failed messages are returned in batchItemFailures (enable ReportBatchItemFailures).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Context, S3Event, S3ObjectCreatedNotificationEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { InputFormat } from '../lib/engine/write.js';
import { HudiError, errorMessage } from '../lib/errors.js';
import { ingestObject, s3LandingBucket, type IngestLog, type IngestResult } from '../lib/ingest/index.js';
import { lockTableDefaults, parsePropertiesText } from '../lib/serverless/settings.js';
import { openStorage, s3ClientFromEnv } from '../lib/storage/index.js';

const logger = new Logger({ serviceName: process.env['POWERTOOLS_SERVICE_NAME'] ?? 'hudi-ingest' });
const metrics = new Metrics({ namespace: process.env['POWERTOOLS_METRICS_NAMESPACE'] ?? 'hudi-serverless', serviceName: 'ingest' });
let s3Client: S3Client | undefined;

/** One object a notification names. */
interface Delivery {
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
  readonly errors: { bucket: string; key: string; error: string }[];
}

interface Config {
  readonly tablePath: string;
  readonly tableProperties: Map<string, string>;
  readonly ingestPrefix: string;
  readonly errorPrefix: string;
  readonly defaultFormat: InputFormat | undefined;
}

type IngestEvent = S3Event | S3ObjectCreatedNotificationEvent | SQSEvent;

export async function handler(event: IngestEvent, context?: Context): Promise<IngestSummary | SQSBatchResponse> {
  if (context !== undefined) logger.addContext(context);
  try {
    const config = configFromEnv(process.env);
    if (isSqsEvent(event)) {
      const failed = new Set<string>();
      const deliveries: Delivery[] = [];
      for (const record of event.Records) {
        try {
          deliveries.push(...deliveriesOf(unwrapSns(JSON.parse(record.body)), record.messageId));
        } catch (error) {
          // Unparseable: fail it, so it ends in the queue's dead-letter queue rather than vanishing.
          logger.error('SQS message is not an S3 event', { messageId: record.messageId, error: errorMessage(error) });
          failed.add(record.messageId);
        }
      }
      const summary = await ingestAll(deliveries, config, context);
      for (const d of deliveries) if (summary.errors.some((e) => e.bucket === d.bucket && e.key === d.key) && d.messageId) failed.add(d.messageId);
      return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
    }
    const summary = await ingestAll(deliveriesOf(event), config, context);
    if (summary.errors.length > 0) {
      // Thrown after every object had its turn: the retry finds the handled ones done.
      throw new HudiError(`${summary.errors.length} object(s) failed and will be retried: ${summary.errors.map((e) => `s3://${e.bucket}/${e.key}: ${e.error}`).join('; ')}`);
    }
    return summary;
  } finally {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
}

async function ingestAll(deliveries: readonly Delivery[], config: Config, context: Context | undefined): Promise<IngestSummary> {
  const summary: IngestSummary = { results: [], ignored: [], errors: [] };
  const client = (s3Client ??= s3ClientFromEnv());
  const table = openStorage(config.tablePath, { s3Client: client });
  const log: IngestLog = {
    info: (message, attributes) => logger.info(message, { ...attributes }),
    warn: (message, attributes) => logger.warn(message, { ...attributes }),
  };
  for (const delivery of deliveries) {
    const { bucket, key } = delivery;
    const ignore = whyIgnored(delivery, config);
    if (ignore !== undefined) {
      logger.info('object ignored', { bucket, key, reason: ignore });
      summary.ignored.push({ bucket, key, reason: ignore });
      continue;
    }
    try {
      const result = await ingestObject({
        source: s3LandingBucket(bucket, client),
        key,
        etag: delivery.etag!,
        table,
        tableProperties: config.tableProperties,
        errorPrefix: config.errorPrefix,
        ...(config.defaultFormat === undefined ? {} : { defaultFormat: config.defaultFormat }),
        // Waiting for a concurrent delivery of the same object must leave time for this invocation's other work.
        claim: { waitMs: claimWaitMs(context) },
        log,
      });
      summary.results.push({ bucket, key, ...result });
      logger.info('object processed', { bucket, key, ...result });
      if (result.outcome === 'ingested') metrics.addMetric('RecordsIngested', MetricUnit.Count, result.inserted + result.updated);
      if (result.outcome !== 'duplicate') metrics.addMetric('BadRecords', MetricUnit.Count, result.badRecords);
      if (result.outcome === 'failed') metrics.addMetric('ObjectsRejected', MetricUnit.Count, 1);
    } catch (error) {
      logger.error('object failed; the invocation will be retried', { bucket, key, error: errorMessage(error) });
      summary.errors.push({ bucket, key, error: errorMessage(error) });
    }
  }
  return summary;
}

function whyIgnored(delivery: Delivery, config: Config): string | undefined {
  if (!delivery.created) return `not an object-created event (${delivery.eventName})`;
  if (delivery.key.endsWith('/')) return 'a folder marker';
  if (delivery.key.startsWith(config.errorPrefix)) return `under the error prefix ${config.errorPrefix}`;
  if (!delivery.key.startsWith(config.ingestPrefix)) return `not under the ingest prefix ${config.ingestPrefix}`;
  if (delivery.etag === undefined || delivery.etag === '') return 'the event has no ETag';
  return undefined;
}

function claimWaitMs(context: Context | undefined): number {
  const remaining = context?.getRemainingTimeInMillis() ?? 240_000;
  return Math.max(1_000, Math.min(60_000, Math.floor(remaining / 4)));
}

// ---- configuration ----

function configFromEnv(env: NodeJS.ProcessEnv): Config {
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
  const text = env['TABLE_PROPERTIES'] ?? '';
  const given = text.trim() === '' ? new Map<string, string>() : parsePropertiesText(text, 'TABLE_PROPERTIES');
  // Ingest takes the same lock as clustering (LOCK_TABLE), so the two never write the timeline at once.
  const tableProperties = new Map([...lockTableDefaults(env, (key) => given.has(key)), ...given]);
  return { tablePath, tableProperties, ingestPrefix, errorPrefix: `${errorPrefix}/`, defaultFormat: format };
}

// ---- events ----

function isSqsEvent(event: IngestEvent): event is SQSEvent {
  return 'Records' in event && Array.isArray(event.Records) && event.Records[0]?.eventSource === 'aws:sqs';
}

/** An SNS notification (SNS → SQS without raw delivery) carries the S3 event as its Message. */
function unwrapSns(body: unknown): unknown {
  if (typeof body === 'object' && body !== null && (body as { Type?: unknown }).Type === 'Notification') {
    const message = (body as { Message?: unknown }).Message;
    if (typeof message === 'string') return JSON.parse(message) as unknown;
  }
  return body;
}

function deliveriesOf(event: unknown, messageId?: string): Delivery[] {
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
