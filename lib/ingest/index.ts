/**
 * Ingestion of objects landed in S3 into a Hudi table, at most once per object version: the service (service.ts)
 * over the exactly-once protocol (idempotency.ts), the errors file and quarantine (bad-records.ts) and the landing
 * bucket (landing-bucket.ts). The Lambda's event handling is lib/serverless/steps/ingest/ingest.ts.
 */

export { errorKeyOf } from './bad-records.js';
export { ingestObjects } from './batch.js';
export { INGEST_BATCH_MAX_BYTES } from './config.js';
export {
  findCommitOf,
  INGEST_FOLDER,
  INGEST_SOURCE_KEY,
  INGEST_SOURCES_KEY,
  ingestId,
  ingestSource,
  normalizeEtag,
  type ObjectVersion,
  sourcesOfCommit,
} from './idempotency.js';
export { formatOfKey, landingBucket, s3LandingBucket } from './landing-bucket.js';
export { ingestObject } from './service.js';
export type {
  BatchObjectResult,
  ClaimOptions,
  ErrorLine,
  HandledResult,
  IngestBatchRequest,
  IngestLog,
  IngestOutcome,
  IngestRequest,
  IngestResult,
  LandingBucket,
} from './types.js';
