/**
 * The lock keys this package reads (hoodie.properties merged with the job's), Hudi's names and defaults
 * (HoodieLockConfig, DynamoDbBasedLockConfig); here so both providers, the writer and the README share one definition.
 */
import { defineKey, javaInt, javaLong, oneOf, optionalText } from '../config/index.js';

export const LOCK_KEYS = {
  provider: defineKey({
    key: 'hoodie.write.lock.provider',
    default: undefined,
    defaultText: '(storage lock)',
    parser: optionalText,
    description:
      "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider for the DynamoDB lock; org.apache.hudi.client.transaction.lock.StorageBasedLockProvider for Hudi 1.1's lock file on S3 (.hoodie/.locks/table_lock.json); unset, InProcessLockProvider or FileSystemBasedLockProvider: our lock object under .hoodie/ (single writer, local tables)",
  }),
  waitMs: defineKey({
    key: 'hoodie.write.lock.wait_time_ms',
    default: 60_000,
    parser: javaLong(1),
    description: 'how long a writer or service waits for the table lock (ms)',
  }),
  pollMs: defineKey({
    key: 'hoodie.write.lock.wait_time_ms_between_retry',
    default: 1_000,
    parser: javaLong(1),
    description: 'pause between attempts to take the lock (ms)',
  }),
  storageValiditySecs: defineKey({
    key: 'hoodie.write.lock.storage.validity.timeout.secs',
    default: 300,
    // An int, not Hudi's long: validUntil (epoch ms) must stay a Java long, which Hudi's own sum does not check.
    parser: javaInt(10),
    description: "StorageBasedLockProvider: each lock file's lease (s), at least 10 renewal intervals",
  }),
  storageRenewIntervalSecs: defineKey({
    key: 'hoodie.write.lock.storage.renew.interval.secs',
    alternatives: ['hoodie.write.lock.storage.heartbeat.poll.secs'],
    default: 30,
    parser: javaInt(1),
    description: 'StorageBasedLockProvider: how often the holder renews its lease (s)',
  }),
  dynamoDbTable: defineKey({
    key: 'hoodie.write.lock.dynamodb.table',
    default: undefined,
    parser: optionalText,
    description: 'DynamoDB lock table (hash key `key`, string)',
  }),
  dynamoDbPartitionKey: defineKey({
    key: 'hoodie.write.lock.dynamodb.partition_key',
    default: undefined,
    defaultText: '(table name)',
    parser: optionalText,
    description: "the lock item's key",
  }),
  dynamoDbRegion: defineKey({
    key: 'hoodie.write.lock.dynamodb.region',
    default: undefined,
    defaultText: '(AWS_REGION)',
    parser: optionalText,
    description: 'region of the lock table',
  }),
  dynamoDbEndpointUrl: defineKey({
    key: 'hoodie.write.lock.dynamodb.endpoint_url',
    default: undefined,
    defaultText: '(AWS_ENDPOINT_URL_DYNAMODB)',
    parser: optionalText,
    description: 'endpoint override (DynamoDB Local)',
  }),
  dynamoDbBillingMode: defineKey({
    key: 'hoodie.write.lock.dynamodb.billing_mode',
    default: 'PAY_PER_REQUEST' as 'PAY_PER_REQUEST' | 'PROVISIONED',
    parser: oneOf(['PAY_PER_REQUEST', 'PROVISIONED'] as const),
    description: 'billing mode when the table is created',
  }),
  /**
   * Not a Hudi key (Hudi's lease is hoodie.write.lock.wait_time_ms): our lease. Java writers read each holder's lease
   * from its lock item, so differing leases interoperate. At least a second: the holder stops trusting its lease
   * before it ends and renews at most every 10 ms, so a shorter one is lost before the first renewal.
   */
  dynamoDbLeaseMs: defineKey({
    key: 'hoodie.write.lock.dynamodb.lease_duration_ms',
    default: 20_000,
    parser: javaLong(1_000),
    description: 'our lease (ms), renewed by a heartbeat every quarter of it (not a Hudi key; Hudi writers read the lease from the item)',
  }),
} as const;

/** The key names alone, for code that only looks a key up. */
export const LOCK_PROPERTY = {
  provider: LOCK_KEYS.provider.key,
  waitMs: LOCK_KEYS.waitMs.key,
  pollMs: LOCK_KEYS.pollMs.key,
  storageValiditySecs: LOCK_KEYS.storageValiditySecs.key,
  storageRenewIntervalSecs: LOCK_KEYS.storageRenewIntervalSecs.key,
  dynamoDbTable: LOCK_KEYS.dynamoDbTable.key,
  dynamoDbPartitionKey: LOCK_KEYS.dynamoDbPartitionKey.key,
  dynamoDbRegion: LOCK_KEYS.dynamoDbRegion.key,
  dynamoDbEndpointUrl: LOCK_KEYS.dynamoDbEndpointUrl.key,
  dynamoDbBillingMode: LOCK_KEYS.dynamoDbBillingMode.key,
  dynamoDbLeaseMs: LOCK_KEYS.dynamoDbLeaseMs.key,
} as const;
