/**
 * The ingest Lambda's work (functions/ingest.ts is its shell): the event names landed objects, lib/ingest/ ingests
 * each, one at a time. Events: an S3 notification (`Records[].s3`), an EventBridge "Object Created" event (`detail`),
 * or SQS messages carrying either (also inside an SNS envelope); S3 notification keys are URL-encoded (`+` is a space)
 * and decoded, EventBridge keys are used as they are.
 *
 * Failures: a poison object is quarantined and counts as handled; anything transient (S3, lock, conflict) fails the
 * invocation after the other objects were handled, so Lambda retries it (handled objects are then duplicates). With
 * SQS, Powertools' batch processor returns only the failed messages in batchItemFailures (enable
 * ReportBatchItemFailures): a message fails when it is not an S3 event or when one of its objects failed.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { GlueClient } from '@aws-sdk/client-glue';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Context, S3Event, S3ObjectCreatedNotificationEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { archivalConfigFromProperties } from '../../../archival/config.js';
import { cleanConfigFromProperties } from '../../../cleaner/config.js';
import { parseKeyText } from '../../../config/index.js';
import type { InputFormat } from '../../../engine/write.js';
import { EventError, errorMessage, HudiError } from '../../../errors.js';
import { type BatchObjectResult, INGEST_BATCH_MAX_BYTES, type IngestLog, type IngestResult, ingestObjects, s3LandingBucket } from '../../../ingest/index.js';
import { openStorage, parseS3Uri } from '../../../storage/index.js';
import type { Storage } from '../../../storage/port.js';
import { type CatalogSyncOutcome, type GlueSyncConfig, glueClientFor, syncCatalogAfterCommit } from '../../../sync/index.js';
import { HudiTable } from '../../../table/table.js';
import { countRequests, requestCountsSince, requestCountsSnapshot } from '../../aws/clients.js';
import { METRIC } from '../../aws/metric-names.js';
import { invocationCost } from '../../aws/observability.js';
import { type Environment, lockTableDefaults, parsePropertiesText } from '../../aws/settings.js';
import type { TriggerOutput } from '../trigger/trigger.js';

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
  /** Its SQS message was received for the first time (ApproximateReceiveCount 1); see IngestBatchRequest. */
  readonly firstDelivery?: boolean;
}

export interface ObjectSummary extends IngestResult {
  readonly bucket: string;
  readonly key: string;
}

export interface IngestSummary {
  readonly results: ObjectSummary[];
  readonly ignored: { bucket: string; key: string; reason: string }[];
  /** Deliveries refused for good: the table's own objects (see whyRefused). */
  readonly refused: { bucket: string; key: string; reason: string }[];
  readonly errors: { bucket: string; key: string; error: string }[];
  /** What starting the table services after the commits came to (absent when nothing was committed, or they are off). */
  tableServices?: TriggerOutput | { readonly status: 'FAILED'; readonly reason: string };
  /** The Glue Data Catalog sync after the commits (absent when nothing was committed or meta sync is off). */
  catalogSync?: CatalogSyncOutcome;
  /** What Hudi's compaction trigger came to after the commits (absent when nothing was committed or no compaction state machine is set). */
  compaction?: TriggerOutput | { readonly status: 'FAILED'; readonly reason: string };
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
  /** INGEST_BATCH_MAX_BYTES from the environment; unset: the key in TABLE_PROPERTIES, else its default. */
  readonly maxBatchBytes?: number | undefined;
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
  /**
   * Start a compaction run after `instant` when Hudi's trigger says one is due (a merge-on-read table): the check with
   * the state machine of COMPACTION_STATE_MACHINE_ARN. Undefined: none is configured.
   */
  readonly startCompaction?: ((instant: string) => Promise<TriggerOutput>) | undefined;
  /** The Glue client for a sync (default glueClientFor: the sync keys' region and endpoint, else the environment's). */
  readonly glue?: ((config: GlueSyncConfig) => GlueClient) | undefined;
}

export function parseIngestEvent(event: unknown): IngestInput {
  if (isSqsEvent(event)) return { kind: 'sqs', event };
  return { kind: 'objects', deliveries: deliveriesOf(event) };
}

export async function ingestStep(input: IngestInput, deps: IngestStepDependencies): Promise<IngestSummary | SQSBatchResponse> {
  const table = openStorage(deps.config.tablePath, { s3Client: deps.s3 });
  if (input.kind === 'sqs') {
    // Every message's objects are read first and ingested together (ingestObjects: one commit per batch that fits
    // its size bound); the batch processor then fails exactly the messages with an object that was not handled.
    const deliveriesOfMessage = new Map<string, Delivery[]>();
    const unreadable = new Map<string, unknown>();
    for (const record of input.event.Records) {
      try {
        const deliveries = deliveriesOf(unwrapSns(JSON.parse(record.body)), record.messageId);
        // Only a saving: an object of a first-received message may still be done (S3 may notify twice).
        const first = record.attributes?.ApproximateReceiveCount === '1';
        deliveriesOfMessage.set(record.messageId, first ? deliveries.map((delivery) => ({ ...delivery, firstDelivery: true })) : deliveries);
      } catch (error) {
        // Unparseable: fail it, so it ends in the queue's dead-letter queue rather than vanishing.
        deps.log.error('SQS message is not an S3 event', { messageId: record.messageId, error: errorMessage(error) });
        unreadable.set(record.messageId, error);
      }
    }
    const failedIn = new Map<string, MessageFailures>();
    const summary = await ingestAll([...deliveriesOfMessage.values()].flat(), table, deps, failedIn);
    const checkMessage = async (record: SQSRecord): Promise<void> => {
      if (unreadable.has(record.messageId)) throw unreadable.get(record.messageId);
      const own = { ...summary, refused: [], errors: [], ...failedIn.get(record.messageId) };
      if (own.refused.length > 0) throw refusedObjects(own, deps.config);
      if (own.errors.length > 0) throw failedObjects(own);
    };
    // A batch that failed whole is reported, not thrown.
    const response = await processPartialResponse(input.event, checkMessage, new BatchProcessor(EventType.SQS), {
      processInParallel: false,
      throwOnFullBatchFailure: false,
    });
    const committed = commitsOf(summary);
    await syncCatalog(committed, table, deps);
    await startTableServices(committed, deps);
    await startCompaction(committed, deps);
    return response;
  }
  const summary = await ingestAll(input.deliveries, table, deps);
  const synced = await syncCatalog(commitsOf(summary), table, deps);
  if (synced !== undefined) summary.catalogSync = synced;
  const started = await startTableServices(commitsOf(summary), deps);
  if (started !== undefined) summary.tableServices = started;
  const compaction = await startCompaction(commitsOf(summary), deps);
  if (compaction !== undefined) summary.compaction = compaction;
  // Thrown after every object had its turn: the retry finds the handled ones done.
  if (summary.refused.length > 0) throw refusedObjects(summary, deps.config);
  if (summary.errors.length > 0) throw failedObjects(summary);
  return summary;
}

/** The instants the ingested objects committed. */
function commitsOf(summary: IngestSummary): string[] {
  // The objects of a batch share their commit.
  return [...new Set(summary.results.flatMap((result) => (result.outcome === 'ingested' && result.instantTime !== undefined ? [result.instantTime] : [])))];
}

/** After the invocation's commits, sync the table to Glue when TABLE_PROPERTIES switch meta sync on (lib/sync). */
async function syncCatalog(committed: readonly string[], storage: Storage, deps: IngestStepDependencies): Promise<CatalogSyncOutcome | undefined> {
  if (committed.length === 0) return undefined;
  let outcome: CatalogSyncOutcome | undefined;
  try {
    const table = await HudiTable.open(storage, { mode: 'read' });
    outcome = await syncCatalogAfterCommit(table, deps.config.tableProperties, {
      glue: deps.glue ?? ((config) => countRequests(glueClientFor(config), 'glue')),
      log: deps.log,
    });
  } catch (error) {
    outcome = { status: 'FAILED', error: errorMessage(error) };
    deps.log.error('could not open the table to sync it to the Glue Data Catalog', { error: outcome.error });
  }
  if (outcome?.status === 'FAILED') deps.metrics.addMetric(METRIC.catalogSyncFailed, MetricUnit.Count, 1);
  if (outcome?.status === 'SYNCED') deps.metrics.addMetric(METRIC.catalogPartitionsAdded, MetricUnit.Count, outcome.result.partitionsAdded.length);
  return outcome;
}

/** After the invocation's commits, start the table services (see the top of this file); undefined when there is nothing to start. */
async function startTableServices(committed: readonly string[], deps: IngestStepDependencies): Promise<IngestSummary['tableServices']> {
  if (committed.length === 0 || deps.config.tableServices === 'off') return undefined;
  if (deps.startTableServices === undefined) {
    deps.log.info('no state machine configured (STATE_MACHINE_ARN): the table services start on their schedule', { committed });
    return undefined;
  }
  return startAfterCommits(committed, deps.startTableServices, deps, { what: 'the table services', notStarted: 'TableServicesNotStarted' });
}

/** After the invocation's commits, start a compaction when Hudi's trigger says so; undefined when there is nothing to check. */
async function startCompaction(committed: readonly string[], deps: IngestStepDependencies): Promise<IngestSummary['compaction']> {
  if (committed.length === 0 || deps.startCompaction === undefined) return undefined;
  return startAfterCommits(committed, deps.startCompaction, deps, { what: 'a compaction', notStarted: 'CompactionNotStarted' });
}

/** Ask `start` after the newest commit; a failure is logged and counted, never thrown (the schedule catches up). */
async function startAfterCommits(
  committed: readonly string[],
  start: (instant: string) => Promise<TriggerOutput>,
  deps: IngestStepDependencies,
  service: { readonly what: string; readonly notStarted: string },
): Promise<TriggerOutput | { readonly status: 'FAILED'; readonly reason: string }> {
  const newest = [...committed].sort().at(-1)!;
  try {
    const outcome = await start(newest);
    deps.log.info(`${service.what} after the commit`, {
      instant: newest,
      status: outcome.status,
      reason: outcome.reason,
      executionName: outcome.executionName,
    });
    return outcome;
  } catch (error) {
    deps.log.error(`could not start ${service.what}; the schedule will`, { instant: newest, error: errorMessage(error) });
    deps.metrics.addMetric(service.notStarted, MetricUnit.Count, 1);
    return { status: 'FAILED', reason: errorMessage(error) };
  }
}

function failedObjects(summary: IngestSummary): HudiError {
  return new HudiError(
    `${summary.errors.length} object(s) failed and will be retried: ${summary.errors.map((e) => `s3://${e.bucket}/${e.key}: ${e.error}`).join('; ')}`,
  );
}

function refusedObjects(summary: IngestSummary, config: IngestConfig): HudiError {
  const failed =
    summary.errors.length === 0
      ? ''
      : `; besides, ${summary.errors.length} object(s) failed: ${summary.errors.map((e) => `s3://${e.bucket}/${e.key}: ${e.error}`).join('; ')}`;
  return new HudiError(
    `${summary.refused.length} object(s) refused: ${summary.refused.map((r) => `s3://${r.bucket}/${r.key} ${r.reason}`).join('; ')}${failed}`,
    {
      location: config.tablePath,
      fix: "land data outside the table: give INGEST_PREFIX (the template's LandingPrefix) and ERROR_PREFIX prefixes outside the table's, and keep the table's prefix out of the notification",
    },
  );
}

/** The refused and failed objects of one SQS message. */
type MessageFailures = Pick<IngestSummary, 'refused' | 'errors'>;

/** Ingest the deliveries together; `perMessage` receives the refusals and failures of each SQS message. */
async function ingestAll(
  deliveries: readonly Delivery[],
  table: Storage,
  deps: IngestStepDependencies,
  perMessage?: Map<string, MessageFailures>,
): Promise<IngestSummary> {
  const { config, log, metrics } = deps;
  const summary: IngestSummary = { results: [], ignored: [], refused: [], errors: [] };
  const failuresOf = (delivery: Delivery): MessageFailures | undefined => {
    if (delivery.messageId === undefined || perMessage === undefined) return undefined;
    let failures = perMessage.get(delivery.messageId);
    if (failures === undefined) perMessage.set(delivery.messageId, (failures = { refused: [], errors: [] }));
    return failures;
  };
  // Per landing bucket (one LandingBucket each), in the order they came.
  const wanted = new Map<string, Delivery[]>();
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
      failuresOf(delivery)?.refused.push({ bucket, key, reason: refusal });
      metrics.addMetric('ObjectsRefused', MetricUnit.Count, 1);
      continue;
    }
    wanted.set(bucket, [...(wanted.get(bucket) ?? []), delivery]);
  }
  const countedInstants = new Set<string>();
  for (const [bucket, group] of wanted) {
    let outcomes: BatchObjectResult[];
    try {
      outcomes = await ingestObjects({
        source: s3LandingBucket(bucket, deps.s3),
        objects: group.map((delivery) => ({ key: delivery.key, etag: delivery.etag!, ...(delivery.firstDelivery === true ? { firstDelivery: true } : {}) })),
        table,
        tableProperties: config.tableProperties,
        errorPrefix: config.errorPrefix,
        ...(config.defaultFormat === undefined ? {} : { defaultFormat: config.defaultFormat }),
        ...(config.maxBatchBytes === undefined ? {} : { maxBatchBytes: config.maxBatchBytes }),
        // Waiting for a concurrent delivery of the same object must leave time for this invocation's other work.
        claim: { waitMs: claimWaitMs(deps.context) },
        log,
      });
    } catch (error) {
      // The table refuses every ingest (its metadata table, its layout): every object is left for a retry.
      outcomes = group.map((delivery) => ({ key: delivery.key, etag: delivery.etag!, error: error instanceof Error ? error : new Error(errorMessage(error)) }));
    }
    outcomes.forEach((outcome, i) => {
      const delivery = group[i]!;
      const { key } = delivery;
      if ('error' in outcome) {
        log.error('object failed; the invocation will be retried', { bucket, key, error: errorMessage(outcome.error) });
        summary.errors.push({ bucket, key, error: errorMessage(outcome.error) });
        failuresOf(delivery)?.errors.push({ bucket, key, error: errorMessage(outcome.error) });
        return;
      }
      const result = outcome.result;
      summary.results.push({ bucket, key, ...result });
      log.info('object processed', { bucket, key, ...result });
      // A batch's objects share their commit's counts: counted once per instant.
      if (result.outcome === 'ingested' && (result.instantTime === undefined || !countedInstants.has(result.instantTime))) {
        if (result.instantTime !== undefined) countedInstants.add(result.instantTime);
        metrics.addMetric('RecordsIngested', MetricUnit.Count, result.inserted + result.updated);
      }
      if (result.outcome !== 'duplicate') metrics.addMetric('BadRecords', MetricUnit.Count, result.badRecords);
      if (result.outcome === 'failed') metrics.addMetric('ObjectsRejected', MetricUnit.Count, 1);
    });
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

/**
 * Why a delivery must not be ingested at all: it is one of the table's own objects, or its quarantine would be.
 *
 * A key under the table's prefix (same bucket) is refused: ingesting the table's data files would write them into it
 * again, and each write would notify another round. Refusals fail the invocation with one error naming the keys, after
 * the other objects had their turn, so the misconfiguration reaches the dead-letter queue instead of vanishing.
 */
function whyRefused(delivery: Delivery, config: IngestConfig): string | undefined {
  const table = tableKeyPrefix(config.tablePath);
  if (table === undefined || delivery.bucket !== table.bucket) return undefined;
  if (delivery.key.startsWith(table.prefix))
    return `is under the table ${config.tablePath} itself: ingest never reads the table's own objects (it would write them again, and loop)`;
  if (prefixesOverlap(config.errorPrefix, table.prefix)) return `would be quarantined under ${config.errorPrefix}, inside the table ${config.tablePath}`;
  return undefined;
}

function claimWaitMs(context: IngestStepDependencies['context']): number {
  const remaining = context?.getRemainingTimeInMillis() ?? 240_000;
  return Math.max(1_000, Math.min(60_000, Math.floor(remaining / 4)));
}

// ---- configuration ----

/**
 * The environment:
 * - TABLE_PATH: the table, `s3://bucket/prefix`.
 * - TABLE_PROPERTIES: Hudi write properties (hoodie.*), as Java properties text or a JSON object; the table is created
 *   from them when absent (hoodie.table.name, hoodie.datasource.write.recordkey.field, ...).
 * - INGEST_PREFIX: only keys under it are ingested (default: every key); others are logged and ignored.
 * - ERROR_PREFIX: where rejected records and objects go in the landing bucket (default `errors/`); keys under it are
 *   never ingested (exclude it from the notification too).
 * - LANDING_BUCKET: the landing bucket (optional; the template sets it). Objects of other buckets are ignored, and when
 *   it is the table's bucket, an INGEST_PREFIX or ERROR_PREFIX overlapping the table is refused at start.
 * - INPUT_FORMAT: jsonl, csv or parquet for keys without a known extension (default: such keys are rejected).
 * - LOCK_TABLE: the DynamoDB lock table clustering uses, as a default lock (settings.ts, lockTableDefaults).
 * - STATE_MACHINE_ARN: the table-services state machine. With hoodie.clean.automatic or hoodie.archive.automatic on
 *   (Hudi's defaults), ingest follows them as Hudi's writers do after a commit: not by cleaning inside its own
 *   invocation, but by running the trigger's check (trigger.ts) once its objects are handled, named after the table's
 *   state, so the commit trigger and the schedule asking for the same state start nothing twice. Not set: the schedule
 *   alone starts the services. A failure to start is logged and counted (TableServicesNotStarted), never thrown: the
 *   objects are ingested, and a retry would only find them done.
 */
export function ingestConfigFromEnv(env: Environment): IngestConfig {
  const tablePath = env['TABLE_PATH']?.trim();
  if (!tablePath) throw new HudiError('TABLE_PATH is not set', { location: 'the function environment', fix: 'set TABLE_PATH=s3://bucket/prefix of the table' });
  const format = env['INPUT_FORMAT']?.trim().toLowerCase() || undefined;
  if (format !== undefined && format !== 'jsonl' && format !== 'csv' && format !== 'parquet') {
    throw new HudiError(`INPUT_FORMAT=${format} is not a format`, {
      location: 'the function environment',
      fix: 'use jsonl, csv or parquet, or leave it unset',
    });
  }
  const ingestPrefix = (env['INGEST_PREFIX'] ?? '').replace(/^\/+/, '');
  const errorPrefix = (env['ERROR_PREFIX'] ?? 'errors/').trim().replace(/^\/+|\/+$/g, '');
  // The quarantined copy of an object would overwrite the object itself. (Keys under it are ignored, see whyIgnored.)
  if (errorPrefix === '') {
    throw new HudiError('ERROR_PREFIX is empty', {
      location: 'the function environment',
      fix: 'give rejected records and objects a prefix of their own (default errors/)',
    });
  }
  const landingBucket = env['LANDING_BUCKET']?.trim() || undefined;
  if (landingBucket !== undefined) {
    // The same refusal as whyRefused's, made once at start: every delivery would be refused otherwise.
    for (const [name, prefix] of [
      ['INGEST_PREFIX', ingestPrefix],
      ['ERROR_PREFIX', `${errorPrefix}/`],
    ] as const) {
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
  const automatic =
    cleanConfigFromProperties(tableProperties, 'TABLE_PROPERTIES').automatic || archivalConfigFromProperties(tableProperties, 'TABLE_PROPERTIES').automatic;
  const batchBytes = env[INGEST_BATCH_MAX_BYTES.envVar]?.trim();
  const maxBatchBytes = batchBytes
    ? parseKeyText(INGEST_BATCH_MAX_BYTES, batchBytes, { givenKey: INGEST_BATCH_MAX_BYTES.envVar, location: 'the function environment' })
    : undefined;
  return {
    tablePath,
    tableProperties,
    maxBatchBytes,
    ingestPrefix,
    errorPrefix: `${errorPrefix}/`,
    defaultFormat: format,
    landingBucket,
    tableServices: automatic ? 'after-commit' : 'off',
  };
}

// ---- events ----

function isSqsEvent(event: unknown): event is SQSEvent {
  if (!isRecord(event) || !Array.isArray(event['Records'])) return false;
  const records: unknown[] = event['Records'];
  if (pathOf(records[0], 'eventSource') !== 'aws:sqs') return false;
  // The batch processor reads every message's id and body: a batch with a message that has none is no SQS batch.
  const bad = records.findIndex((record) => typeof pathOf(record, 'messageId') !== 'string' || typeof pathOf(record, 'body') !== 'string');
  if (bad >= 0)
    throw new EventError(`SQS Records[${bad}] is ${isRecord(records[bad]) ? 'a message without messageId or body (strings)' : describeValue(records[bad])}`, {
      location: 'the event',
      fix: EVENT_FIX,
    });
  return true;
}

/** An SNS notification (SNS → SQS without raw delivery) carries the S3 event as its Message. */
function unwrapSns(body: unknown): unknown {
  if (typeof body === 'object' && body !== null && (body as { Type?: unknown }).Type === 'Notification') {
    const message = (body as { Message?: unknown }).Message;
    if (typeof message === 'string') return JSON.parse(message) as unknown;
  }
  return body;
}

const EVENT_FIX =
  'invoke ingest with an S3 notification ({"Records": [{"eventName": "ObjectCreated:Put", "s3": {...}}]}), an EventBridge S3 event, or SQS messages carrying one';

/** What a value is, for messages: "null", "a string", "an array", ... */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value.a.b...` when every step is an object, else undefined. */
function pathOf(value: unknown, ...fields: string[]): unknown {
  let current = value;
  for (const field of fields) {
    if (!isRecord(current)) return undefined;
    current = current[field];
  }
  return current;
}

/** The objects an S3 notification or EventBridge event names (none for S3's test event); an EventError for anything else. */
export function deliveriesOf(event: unknown, messageId?: string): Delivery[] {
  const from = messageId === undefined ? {} : { messageId };
  const location = messageId === undefined ? 'the event' : `SQS message ${messageId}`;
  if (!isRecord(event)) throw new EventError(`is ${describeValue(event)}, not an S3 event`, { location, fix: EVENT_FIX });
  if (event['Event'] === 's3:TestEvent') return [];
  const records = event['Records'];
  if (records !== undefined) {
    if (!Array.isArray(records)) throw new EventError(`its Records is ${describeValue(records)}, not a list of S3 event records`, { location, fix: EVENT_FIX });
    return records.map((record: unknown, index) => {
      const bucket = pathOf(record, 's3', 'bucket', 'name');
      const key = pathOf(record, 's3', 'object', 'key');
      const eventName = pathOf(record, 'eventName');
      if (typeof bucket !== 'string' || typeof key !== 'string' || typeof eventName !== 'string') {
        const what = !isRecord(record) ? `is ${describeValue(record)}` : 'has no s3.bucket.name, s3.object.key or eventName (strings)';
        throw new EventError(`Records[${index}] ${what}, not an S3 event record`, { location, fix: EVENT_FIX });
      }
      const etag = pathOf(record, 's3', 'object', 'eTag');
      return {
        bucket,
        key: decodeS3EventKey(key),
        etag: typeof etag === 'string' ? etag : undefined,
        eventName,
        created: eventName.startsWith('ObjectCreated'),
        ...from,
      };
    });
  }
  if (event['source'] === 'aws.s3' && 'detail' in event) {
    const bucket = pathOf(event, 'detail', 'bucket', 'name');
    const key = pathOf(event, 'detail', 'object', 'key');
    const detailType = event['detail-type'];
    if (typeof bucket !== 'string' || typeof key !== 'string' || typeof detailType !== 'string') {
      throw new EventError('an EventBridge S3 event without detail.bucket.name, detail.object.key or detail-type (strings)', { location, fix: EVENT_FIX });
    }
    const etag = pathOf(event, 'detail', 'object', 'etag');
    return [{ bucket, key, etag: typeof etag === 'string' ? etag : undefined, eventName: detailType, created: detailType === 'Object Created', ...from }];
  }
  throw new EventError('is an object without Records or an EventBridge S3 detail: not an S3 notification, EventBridge S3 event or SQS message batch', {
    location,
    fix: EVENT_FIX,
  });
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
      const started = performance.now();
      const before = requestCountsSnapshot();
      try {
        return await work();
      } finally {
        // The same per-invocation figures as the table-service steps (observability.ts).
        const durationMs = Math.round(performance.now() - started);
        metrics.addMetric(METRIC.durationMs, MetricUnit.Milliseconds, durationMs);
        const cost = invocationCost(context, durationMs, requestCountsSince(before));
        if (cost !== undefined) metrics.addMetric(METRIC.estimatedCost, MetricUnit.NoUnit, cost);
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      }
    },
  };
}
