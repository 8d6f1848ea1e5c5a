/**
 * A lock on a DynamoDB item, interchangeable with Hudi's DynamoDBBasedLockProvider (the AWS DynamoDB Lock Client):
 * same table layout (hash key `key`, a string), same item attributes and the same conditional writes, so Java
 * Hudi writers and this package exclude each other on the same table and partition key.
 *
 * Item: `key` (the partition key value, by default the Hudi table name), `ownerName`, `recordVersionNumber`
 * (a fresh UUID per write), `leaseDuration` (milliseconds as a string, as the lock client writes it), optionally
 * `isReleased` / `data` (written by the lock client, read here), plus `expireAt` (epoch seconds, our TTL attribute
 * so an abandoned item eventually disappears; the lock client ignores it and drops it when it takes over).
 */

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
  UpdateItemCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { type ConfigKey, readKey } from '../config/index.js';
import { errorMessage, HudiError, LockUnavailableError } from '../errors.js';
import { nonEmpty } from '../util/text.js';
import { LOCK_KEYS } from './keys.js';
import {
  acquireLease,
  DEFAULT_LEASE_MS,
  DEFAULT_POLL_MS,
  DEFAULT_WAIT_MS,
  defaultOwnerName,
  type HeartbeatLease,
  type LeaseBackend,
  LeaseLostError,
  LOCK_PROPERTY,
  type ObservedHolder,
  requirePositiveMs,
} from './lease.js';
import type { LockProvider } from './port.js';

/** The table's hash key attribute (Hudi's DYNAMODB_ATTRIBUTE_NAME). */
export const LOCK_KEY_ATTRIBUTE = 'key';
/** Our TTL attribute; ensureLockTable (and the SAM template) enable TTL on it. */
export const LOCK_TTL_ATTRIBUTE = 'expireAt';
const OWNER_ATTRIBUTE = 'ownerName';
const VERSION_ATTRIBUTE = 'recordVersionNumber';
const LEASE_ATTRIBUTE = 'leaseDuration';
const RELEASED_ATTRIBUTE = 'isReleased';
/** TTL lies this far beyond the lease: TTL only collects garbage, a stale lock is taken over after its lease. */
const TTL_MARGIN_SECONDS = 3600;

/** Every expression names its attributes through placeholders: `key` is a DynamoDB reserved word. */
const NAMES = {
  '#key': LOCK_KEY_ATTRIBUTE,
  '#owner': OWNER_ATTRIBUTE,
  '#version': VERSION_ATTRIBUTE,
  '#lease': LEASE_ATTRIBUTE,
  '#ttl': LOCK_TTL_ATTRIBUTE,
} as const;
const IS_FREE = 'attribute_not_exists(#key)';
const IS_SAME_VERSION = 'attribute_exists(#key) AND #version = :seenVersion';
const IS_OURS = 'attribute_exists(#key) AND #version = :heldVersion AND #owner = :owner';

export type BillingMode = 'PAY_PER_REQUEST' | 'PROVISIONED';

export interface DynamoDbLockOptions {
  /** Default: a client configured from the environment (see dynamoDbClientFromEnv). */
  client?: DynamoDBClient;
  tableName: string;
  /** Value of the `key` attribute: Hudi's hoodie.write.lock.dynamodb.partition_key, by default the table name. */
  partitionKey: string;
  /** Lease per renewal (default 20000 ms), renewed every leaseMs/4; keep it well below the Lambda timeout. */
  leaseMs?: number;
  /** Default: `<function or host>:<pid>:<uuid>`. */
  ownerName?: string;
  /** How long acquire() waits when not told (default 60000 ms, hoodie.write.lock.wait_time_ms). */
  waitMs?: number;
  /** How often a waiting acquirer looks at the item (default 1000 ms). */
  pollMs?: number;
  /** Only for ensureLockTable: how to bill a table it creates. */
  billingMode?: BillingMode;
}

interface DynamoDbHeld {
  readonly version: string;
}

/** A DynamoDB client from the environment: AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL, AWS_REGION or AWS_DEFAULT_REGION. */
export function dynamoDbClientFromEnv(
  overrides: { region?: string | undefined; endpoint?: string | undefined } = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): DynamoDBClient {
  const config: DynamoDBClientConfig = {
    region: nonEmpty(overrides.region) ?? nonEmpty(env['AWS_REGION']) ?? nonEmpty(env['AWS_DEFAULT_REGION']) ?? 'us-east-1',
  };
  const endpoint = nonEmpty(overrides.endpoint) ?? nonEmpty(env['AWS_ENDPOINT_URL_DYNAMODB']) ?? nonEmpty(env['AWS_ENDPOINT_URL']);
  // Hudi accepts an endpoint without a scheme and assumes https.
  if (endpoint !== undefined) config.endpoint = /^https?:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`;
  return new DynamoDBClient(config);
}

export class DynamoDbLockProvider implements LockProvider {
  readonly description: string;
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly partitionKey: string;
  readonly leaseMs: number;
  readonly ownerName: string;
  readonly billingMode: BillingMode;
  private readonly waitMs: number;
  private readonly pollMs: number;

  constructor(options: DynamoDbLockOptions) {
    if (options.tableName.trim() === '' || options.partitionKey === '') {
      throw new HudiError('a DynamoDB lock needs a table name and a partition key', {
        fix: `set ${LOCK_PROPERTY.dynamoDbTable} (and ${LOCK_PROPERTY.dynamoDbPartitionKey}, default the Hudi table name)`,
      });
    }
    this.tableName = options.tableName;
    this.partitionKey = options.partitionKey;
    this.description = `dynamodb://${this.tableName}/${this.partitionKey}`;
    this.client = options.client ?? dynamoDbClientFromEnv();
    this.leaseMs = requirePositiveMs(options.leaseMs ?? DEFAULT_LEASE_MS, 'the lock lease', this.description);
    this.waitMs = requirePositiveMs(options.waitMs ?? DEFAULT_WAIT_MS, 'the lock wait', this.description);
    this.pollMs = requirePositiveMs(options.pollMs ?? DEFAULT_POLL_MS, 'the lock poll interval', this.description);
    this.ownerName = options.ownerName ?? defaultOwnerName();
    this.billingMode = options.billingMode ?? 'PAY_PER_REQUEST';
  }

  async acquire(options: { waitMs?: number } = {}): Promise<HeartbeatLease<DynamoDbHeld>> {
    const waitMs = options.waitMs ?? this.waitMs;
    return acquireLease(new DynamoDbLeaseBackend(this), { owner: this.ownerName, leaseMs: this.leaseMs, waitMs, pollMs: this.pollMs });
  }
}

/** The lock item's conditional writes, as the AWS DynamoDB Lock Client issues them. */
class DynamoDbLeaseBackend implements LeaseBackend<ObservedHolder, DynamoDbHeld> {
  readonly renewalIsCompareAndSet = true;
  readonly description: string;
  private readonly lock: DynamoDbLockProvider;

  constructor(lock: DynamoDbLockProvider) {
    this.lock = lock;
    this.description = lock.description;
  }

  async readHolder(): Promise<ObservedHolder | undefined> {
    const item = await this.readItem();
    if (item === undefined) return undefined;
    return {
      owner: item[OWNER_ATTRIBUTE]?.S ?? '(unknown owner)',
      version: item[VERSION_ATTRIBUTE]?.S ?? '',
      leaseMs: leaseMsOf(item[LEASE_ATTRIBUTE]) ?? this.lock.leaseMs,
      released: item[RELEASED_ATTRIBUTE]?.BOOL === true,
    };
  }

  async claim(previous: ObservedHolder | undefined): Promise<DynamoDbHeld | undefined> {
    const version = randomUUID();
    const condition: Pick<PutItemCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> =
      previous === undefined
        ? { ConditionExpression: IS_FREE, ExpressionAttributeNames: { '#key': NAMES['#key'] } }
        : {
            ConditionExpression: IS_SAME_VERSION,
            ExpressionAttributeNames: { '#key': NAMES['#key'], '#version': NAMES['#version'] },
            ExpressionAttributeValues: { ':seenVersion': { S: previous.version } },
          };
    const written = await this.conditionally(
      () => this.lock.client.send(new PutItemCommand({ TableName: this.lock.tableName, Item: this.itemFor(version), ...condition })),
      'take the lock',
    );
    if (written) return { version };
    // The SDK retries requests: our first attempt may have landed and made the retry's condition fail.
    const now = await this.readItem();
    return now?.[OWNER_ATTRIBUTE]?.S === this.lock.ownerName && now[VERSION_ATTRIBUTE]?.S === version ? { version } : undefined;
  }

  async renew(held: DynamoDbHeld): Promise<DynamoDbHeld> {
    let expected = held.version;
    const attempted = new Set<string>();
    for (let attempt = 0; attempt < 2; attempt++) {
      const version = randomUUID();
      attempted.add(version);
      const written = await this.conditionally(
        () =>
          this.lock.client.send(
            new UpdateItemCommand({
              TableName: this.lock.tableName,
              Key: this.key(),
              UpdateExpression: 'SET #version = :newVersion, #lease = :lease, #ttl = :ttl',
              ConditionExpression: IS_OURS,
              ExpressionAttributeNames: NAMES,
              ExpressionAttributeValues: {
                ':newVersion': { S: version },
                ':lease': { S: String(this.lock.leaseMs) },
                ':ttl': { N: String(ttlSeconds(this.lock.leaseMs)) },
                ':heldVersion': { S: expected },
                ':owner': { S: this.lock.ownerName },
              },
            }),
          ),
        'renew the lock',
      );
      if (written) return { version };
      const now = await this.readItem();
      const owner = now?.[OWNER_ATTRIBUTE]?.S;
      const current = now?.[VERSION_ATTRIBUTE]?.S;
      // A retried request of ours landed already: adopt its version and renew once more from it.
      if (owner === this.lock.ownerName && current !== undefined && attempted.has(current)) {
        expected = current;
        continue;
      }
      throw new LeaseLostError(now === undefined ? 'its item was deleted' : 'another writer took it over', owner);
    }
    throw new LeaseLostError('its item kept changing under the heartbeat');
  }

  async isCurrent(held: DynamoDbHeld): Promise<boolean> {
    const item = await this.readItem();
    return item?.[OWNER_ATTRIBUTE]?.S === this.lock.ownerName && item[VERSION_ATTRIBUTE]?.S === held.version;
  }

  async release(held: DynamoDbHeld): Promise<void> {
    // Conditional on owner and version: a stale holder never deletes its successor's item.
    await this.conditionally(
      () =>
        this.lock.client.send(
          new DeleteItemCommand({
            TableName: this.lock.tableName,
            Key: this.key(),
            ConditionExpression: IS_OURS,
            ExpressionAttributeNames: { '#key': NAMES['#key'], '#version': NAMES['#version'], '#owner': NAMES['#owner'] },
            ExpressionAttributeValues: { ':heldVersion': { S: held.version }, ':owner': { S: this.lock.ownerName } },
          }),
        ),
      'release the lock',
    );
  }

  private key(): Record<string, AttributeValue> {
    return { [LOCK_KEY_ATTRIBUTE]: { S: this.lock.partitionKey } };
  }

  private itemFor(version: string): Record<string, AttributeValue> {
    return {
      ...this.key(),
      [OWNER_ATTRIBUTE]: { S: this.lock.ownerName },
      [VERSION_ATTRIBUTE]: { S: version },
      [LEASE_ATTRIBUTE]: { S: String(this.lock.leaseMs) },
      [LOCK_TTL_ATTRIBUTE]: { N: String(ttlSeconds(this.lock.leaseMs)) },
    };
  }

  private async readItem(): Promise<Record<string, AttributeValue> | undefined> {
    try {
      const response = await this.lock.client.send(new GetItemCommand({ TableName: this.lock.tableName, Key: this.key(), ConsistentRead: true }));
      return response.Item;
    } catch (error) {
      throw this.describe(error, 'read the lock');
    }
  }

  /** Send a conditional write: true when written, false when its condition failed. */
  private async conditionally(write: () => Promise<unknown>, action: string): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (errorNameOf(error) === 'ConditionalCheckFailedException') return false;
      throw this.describe(error, action);
    }
  }

  private describe(error: unknown, action: string): HudiError {
    const name = errorNameOf(error);
    if (name === 'ResourceNotFoundException') {
      return new HudiError(`cannot ${action}: the lock table "${this.lock.tableName}" does not exist`, {
        location: this.description,
        fix: `deploy the stack that creates it, or create it (hash key "${LOCK_KEY_ATTRIBUTE}", type S), or correct ${LOCK_PROPERTY.dynamoDbTable}`,
        cause: error,
      });
    }
    if (name === 'AccessDeniedException' || name === 'UnrecognizedClientException') {
      return new HudiError(`cannot ${action}: access denied or unknown credentials (${errorMessage(error)})`, {
        location: this.description,
        fix: `allow dynamodb:GetItem, PutItem, UpdateItem and DeleteItem on table "${this.lock.tableName}" for this role`,
        cause: error,
      });
    }
    return new LockUnavailableError(`cannot ${action}: ${errorMessage(error)}`, {
      location: this.description,
      fix: 'check the DynamoDB endpoint, region and credentials; the operation can be retried',
      cause: error,
    });
  }
}

/**
 * A DynamoDB lock from Hudi lock properties: hoodie.write.lock.dynamodb.{table, partition_key (default
 * `hudiTableName`), region, endpoint_url, billing_mode, lease_duration_ms}, hoodie.write.lock.wait_time_ms and
 * hoodie.write.lock.wait_time_ms_between_retry.
 */
export function dynamoDbLockFromProperties(
  properties: ReadonlyMap<string, string>,
  hudiTableName: string,
  overrides: { client?: DynamoDBClient; ownerName?: string } = {},
): DynamoDbLockProvider {
  const read = <T>(key: ConfigKey<T>): T => readKey(properties, key, 'lock properties');
  const tableName = read(LOCK_KEYS.dynamoDbTable);
  if (tableName === undefined) {
    throw new HudiError(`${LOCK_PROPERTY.dynamoDbTable} is not set, so the DynamoDB lock has no table`, {
      fix: `set ${LOCK_PROPERTY.dynamoDbTable} to the lock table your Hudi writers use`,
    });
  }
  const partitionKey = read(LOCK_KEYS.dynamoDbPartitionKey) ?? nonEmpty(hudiTableName);
  if (partitionKey === undefined) {
    throw new HudiError(`${LOCK_PROPERTY.dynamoDbPartitionKey} is not set and the table has no name to default to`, {
      fix: `set ${LOCK_PROPERTY.dynamoDbPartitionKey} to the value your Hudi writers use (their hoodie.table.name by default)`,
    });
  }
  const client = overrides.client ?? dynamoDbClientFromEnv({ region: read(LOCK_KEYS.dynamoDbRegion), endpoint: read(LOCK_KEYS.dynamoDbEndpointUrl) });
  return new DynamoDbLockProvider({
    client,
    tableName,
    partitionKey,
    leaseMs: read(LOCK_KEYS.dynamoDbLeaseMs),
    waitMs: read(LOCK_KEYS.waitMs),
    pollMs: read(LOCK_KEYS.pollMs),
    billingMode: read(LOCK_KEYS.dynamoDbBillingMode),
    ...(overrides.ownerName === undefined ? {} : { ownerName: overrides.ownerName }),
  });
}

export interface EnsureLockTableOptions {
  billingMode?: BillingMode;
  /** Provisioned capacity, used with PROVISIONED only (Hudi's defaults: 20 reads, 10 writes). */
  readCapacity?: number;
  writeCapacity?: number;
  /** How long to wait for a new table to become ACTIVE (default 60000 ms). */
  timeoutMs?: number;
}

/**
 * Create the lock table if it is missing (hash key `key`, string; on-demand unless told otherwise), wait until it
 * is ACTIVE, and enable TTL on `expireAt` unless TTL is already set up. For tests and local demos; on AWS the
 * SAM template creates the table.
 */
export async function ensureLockTable(client: DynamoDBClient, tableName: string, options: EnsureLockTableOptions = {}): Promise<void> {
  const location = `dynamodb://${tableName}`;
  try {
    if (!(await tableExists(client, tableName))) {
      const billingMode = options.billingMode ?? 'PAY_PER_REQUEST';
      await client
        .send(
          new CreateTableCommand({
            TableName: tableName,
            KeySchema: [{ AttributeName: LOCK_KEY_ATTRIBUTE, KeyType: 'HASH' }],
            AttributeDefinitions: [{ AttributeName: LOCK_KEY_ATTRIBUTE, AttributeType: 'S' }],
            BillingMode: billingMode,
            ...(billingMode === 'PROVISIONED'
              ? { ProvisionedThroughput: { ReadCapacityUnits: options.readCapacity ?? 20, WriteCapacityUnits: options.writeCapacity ?? 10 } }
              : {}),
          }),
        )
        .catch((error: unknown) => {
          if (errorNameOf(error) !== 'ResourceInUseException') throw error; // created concurrently: fine
        });
    }
    await waitUntilActive(client, tableName, options.timeoutMs ?? 60_000);
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
    if (status === undefined || status === 'DISABLED') {
      await client
        .send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { Enabled: true, AttributeName: LOCK_TTL_ATTRIBUTE } }))
        .catch((error: unknown) => {
          // DynamoDB answers a second enable with a plain ValidationException: its text is the only tell.
          if (!/already enabled/i.test(errorMessage(error))) throw error;
        });
    }
  } catch (error) {
    if (error instanceof HudiError) throw error;
    throw new HudiError(`cannot create or check the lock table: ${errorMessage(error)}`, {
      location,
      fix: 'check the DynamoDB endpoint, region and credentials (dynamodb:CreateTable, DescribeTable, UpdateTimeToLive)',
      cause: error,
    });
  }
}

async function tableExists(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return true;
  } catch (error) {
    if (errorNameOf(error) === 'ResourceNotFoundException') return false;
    throw error;
  }
}

async function waitUntilActive(client: DynamoDBClient, tableName: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() >= deadline) {
      throw new HudiError(`the lock table is still ${Table?.TableStatus ?? 'missing'} after ${timeoutMs} ms`, {
        location: `dynamodb://${tableName}`,
        fix: 'wait until it is ACTIVE and retry',
      });
    }
    await sleep(500);
  }
}

/** The lock client writes leaseDuration as a string; accept a number too. */
function leaseMsOf(value: AttributeValue | undefined): number | undefined {
  const raw = value?.S ?? value?.N;
  const leaseMs = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(leaseMs) && leaseMs > 0 ? leaseMs : undefined;
}

function ttlSeconds(leaseMs: number): number {
  return Math.floor(Date.now() / 1000) + Math.ceil(leaseMs / 1000) + TTL_MARGIN_SECONDS;
}

function errorNameOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'name' in error && typeof error.name === 'string' ? error.name : undefined;
}
