/**
 * The numeric keys no CLI command reads, walked instead through the Lambda steps and services that read them
 * (test/serverless/ranges.test.ts); test/config/ranges.test.ts checks that every key it cannot walk is one of these.
 */
import { SERVERLESS_CLEAN_KEYS } from '../../lib/cleaning/shares.js';
import type { ConfigKey } from '../../lib/config/index.js';
import { INGEST_BATCH_MAX_BYTES } from '../../lib/ingest/index.js';
import { LOCK_KEYS } from '../../lib/lock/index.js';
import { SERVERLESS_CLUSTERING_KEYS, SERVERLESS_COMPACTION_KEYS } from '../../lib/serverless/steps/scale-out.js';
import { META_SYNC_KEYS } from '../../lib/sync/index.js';
import { BUCKET_INDEX_KEYS } from '../../lib/table/bucket-index.js';

export const STEP_WALKED_KEYS: readonly ConfigKey<unknown>[] = [
  SERVERLESS_CLEAN_KEYS.partitionsPerShare,
  SERVERLESS_CLEAN_KEYS.filesPerShare,
  SERVERLESS_CLEAN_KEYS.maxConcurrency,
  SERVERLESS_CLUSTERING_KEYS.inlineMapMaxGroups,
  SERVERLESS_COMPACTION_KEYS.inlineMapMaxOperations,
  LOCK_KEYS.dynamoDbLeaseMs,
  LOCK_KEYS.storageValiditySecs,
  LOCK_KEYS.storageRenewIntervalSecs,
  INGEST_BATCH_MAX_BYTES,
  META_SYNC_KEYS.schemaLengthThreshold,
  BUCKET_INDEX_KEYS.numBuckets,
];
