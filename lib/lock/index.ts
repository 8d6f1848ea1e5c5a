/**
 * Choose the table's lock from Hudi's `hoodie.write.lock.provider`, so this package locks where the table's
 * Java writers do (DynamoDB, or Hudi's lock file on S3), or on the table's storage when Hudi itself would take no
 * cross-process lock.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { readKey } from '../config/index.js';
import { HudiError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import { dynamoDbLockFromProperties } from './dynamodb.js';
import { HudiStorageLockProvider, STORAGE_BASED_LOCK_PROVIDER } from './hudi-storage-lock.js';
import { LOCK_KEYS, LOCK_PROPERTY } from './keys.js';
import type { LockProvider } from './port.js';
import { StorageLockProvider } from './storage-lock.js';

export {
  type BillingMode,
  type DynamoDbLockOptions,
  DynamoDbLockProvider,
  dynamoDbClientFromEnv,
  dynamoDbLockFromProperties,
  type EnsureLockTableOptions,
  ensureLockTable,
  LOCK_KEY_ATTRIBUTE,
  LOCK_TTL_ATTRIBUTE,
} from './dynamodb.js';
export {
  CLOCK_DRIFT_BUFFER_MS,
  HUDI_LOCK_FILE,
  type HudiLockData,
  type HudiStorageLockOptions,
  HudiStorageLockProvider,
  parseLockData,
  STORAGE_BASED_LOCK_PROVIDER,
} from './hudi-storage-lock.js';
export { LOCK_KEYS, LOCK_PROPERTY } from './keys.js';
export { DEFAULT_LEASE_MS, DEFAULT_POLL_MS, DEFAULT_WAIT_MS, HeartbeatLease } from './lease.js';
export type { LockLease, LockProvider } from './port.js';
export { withLock } from './port.js';
export { STORAGE_LOCK_FOLDER, type StorageLockOptions, StorageLockProvider, type StorageLockRecord } from './storage-lock.js';

export const DYNAMODB_LOCK_PROVIDER = 'org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider';
export const IN_PROCESS_LOCK_PROVIDER = 'org.apache.hudi.client.transaction.lock.InProcessLockProvider';
export const FILE_SYSTEM_LOCK_PROVIDER = 'org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider';
const SUPPORTED_PROVIDERS = [DYNAMODB_LOCK_PROVIDER, STORAGE_BASED_LOCK_PROVIDER, IN_PROCESS_LOCK_PROVIDER, FILE_SYSTEM_LOCK_PROVIDER] as const;

export interface LockProviderForOptions {
  /** DynamoDB client for the DynamoDB lock (default: from the lock properties and the environment). */
  dynamoDbClient?: DynamoDBClient;
  /** Owner name written into the lock (default: `<function or host>:<pid>:<uuid>`). */
  ownerName?: string;
}

/**
 * The lock for a table, from its properties (hoodie.properties merged with the job's):
 * DynamoDBBasedLockProvider → the Hudi-compatible DynamoDB lock; StorageBasedLockProvider → Hudi's lock file on S3;
 * InProcessLockProvider, FileSystemBasedLockProvider
 * or no provider → a lock in the table's storage (see StorageLockProvider for what it does not exclude);
 * any other provider (ZooKeeper, Hive metastore, ...) → HudiError.
 */
export function lockProviderFor(
  tableProperties: ReadonlyMap<string, string>,
  hudiTableName: string,
  storage: Storage,
  options: LockProviderForOptions = {},
): LockProvider {
  const providerClass = tableProperties.get(LOCK_PROPERTY.provider)?.trim() ?? '';
  const owner = options.ownerName === undefined ? {} : { ownerName: options.ownerName };
  switch (providerClass) {
    case DYNAMODB_LOCK_PROVIDER:
      return dynamoDbLockFromProperties(tableProperties, hudiTableName, {
        ...owner,
        ...(options.dynamoDbClient === undefined ? {} : { client: options.dynamoDbClient }),
      });
    case STORAGE_BASED_LOCK_PROVIDER:
      return new HudiStorageLockProvider(storage, {
        ...owner,
        validityMs: readKey(tableProperties, LOCK_KEYS.storageValiditySecs, storage.uri) * 1000,
        renewIntervalMs: readKey(tableProperties, LOCK_KEYS.storageRenewIntervalSecs, storage.uri) * 1000,
        waitMs: readKey(tableProperties, LOCK_KEYS.waitMs, storage.uri),
        pollMs: readKey(tableProperties, LOCK_KEYS.pollMs, storage.uri),
      });
    case '':
    case IN_PROCESS_LOCK_PROVIDER:
    case FILE_SYSTEM_LOCK_PROVIDER:
      return new StorageLockProvider(storage, {
        ...owner,
        waitMs: readKey(tableProperties, LOCK_KEYS.waitMs, storage.uri),
        pollMs: readKey(tableProperties, LOCK_KEYS.pollMs, storage.uri),
      });
    default:
      throw new HudiError(`${LOCK_PROPERTY.provider}=${providerClass} is not supported`, {
        location: storage.uri,
        fix: `use one of ${SUPPORTED_PROVIDERS.join(', ')} (or leave it unset for a single writer)`,
      });
  }
}
