/**
 * AWS clients for the clustering Lambdas, built from the environment once per container and reused across warm
 * invocations, with a middleware that counts every request sent (each retry attempt included, as AWS bills them).
 * The counts become per-invocation metrics, and a local run can attribute them to the handler invocations it makes
 * (installAwsRequestSink) to estimate what a run costs on AWS.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { GlueClient } from '@aws-sdk/client-glue';
import type { S3Client } from '@aws-sdk/client-s3';
import { ConflictError, LockUnavailableError } from '../../errors.js';
import { dynamoDbClientFromEnv, LOCK_PROPERTY, type LockLease, type LockProvider, lockProviderFor } from '../../lock/index.js';
import { openStorage, type Storage, s3ClientFromEnv } from '../../storage/index.js';
import { type GlueSyncConfig, glueClientFor } from '../../sync/index.js';
import type { TableAccessMode } from '../../table/config.js';
import { HudiTable } from '../../table/table.js';
import { TaskError, TRANSIENT_ERROR } from './errors.js';
import { type Environment, lockProperties, type StepSettings } from './settings.js';

export type AwsService = 's3' | 'dynamodb' | 'sfn' | 'glue';

/** Receives one call per HTTP request sent. */
export interface AwsRequestSink {
  record(service: AwsService, operation: string): void;
}

// A process-wide registration point: each bundled handler has its own copy of this module, a local runner another.
const SINK_KEY = Symbol.for('hudi-serverless.aws-request-sink');
type SinkHolder = { [SINK_KEY]?: AwsRequestSink };

/** Route request counts of every client built here (in any bundle of this process) to `sink`; undefined removes it. */
export function installAwsRequestSink(sink: AwsRequestSink | undefined): void {
  (globalThis as SinkHolder)[SINK_KEY] = sink;
}

/** Requests this module's clients sent since the process started, by `service:Operation`. */
const processCounts = new Map<string, number>();

export function requestCountsSnapshot(): Map<string, number> {
  return new Map(processCounts);
}

/** Counts sent between two snapshots. */
export function requestCountsSince(before: ReadonlyMap<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [key, count] of processCounts) {
    const sent = count - (before.get(key) ?? 0);
    if (sent > 0) delta.set(key, sent);
  }
  return delta;
}

interface MiddlewareStackLike {
  add(
    middleware: (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => Promise<unknown>,
    options: { step: 'deserialize'; name: string },
  ): void;
}

/** Count each request sent by `client` (each attempt: the deserialize step runs inside the SDK's retry loop). */
export function countRequests<Client extends { middlewareStack: unknown }>(client: Client, service: AwsService): Client {
  (client.middlewareStack as MiddlewareStackLike).add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      const key = `${service}:${operation}`;
      processCounts.set(key, (processCounts.get(key) ?? 0) + 1);
      (globalThis as SinkHolder)[SINK_KEY]?.record(service, operation);
      return next(args);
    },
    { step: 'deserialize', name: 'hudiServerlessRequestCounter' },
  );
  return client;
}

export interface ServiceClients {
  s3(): S3Client;
  /** A DynamoDB client for the lock (region and endpoint from the lock properties, else the environment). */
  dynamoDb(region: string | undefined, endpoint: string | undefined): DynamoDBClient;
  /** The table's storage, when not the default (openStorage over s3()): for embedding, and the crash tests. */
  storage?(tablePath: string): Storage;
  /** The table's lock, when not the default from the deployment's lock properties. */
  lock?(storage: Storage, hudiTableName: string): LockProvider;
  /** A Glue client for the catalog sync (default: glueClientFor, counting its requests). */
  glue?(config: GlueSyncConfig): GlueClient;
}

/** The Glue client a step syncs with: the clients' own, else one from the sync keys and the environment. */
export function glueClientOf(clients: ServiceClients, config: GlueSyncConfig, env: Environment = process.env): GlueClient {
  return clients.glue?.(config) ?? countRequests(glueClientFor(config, env), 'glue');
}

/** Clients from the environment, created on first use and kept for the container's life. */
export function serviceClientsFromEnv(env: Environment = process.env): ServiceClients {
  let s3: S3Client | undefined;
  const dynamo = new Map<string, DynamoDBClient>();
  return {
    s3: () => (s3 ??= countRequests(s3ClientFromEnv(env), 's3')),
    dynamoDb(region, endpoint) {
      const key = `${region ?? ''}|${endpoint ?? ''}`;
      let client = dynamo.get(key);
      if (client === undefined) {
        client = countRequests(dynamoDbClientFromEnv({ region, endpoint }, env), 'dynamodb');
        dynamo.set(key, client);
      }
      return client;
    },
  };
}

export function tableStorage(settings: Pick<StepSettings, 'tablePath'>, clients: ServiceClients): Storage {
  if (clients.storage !== undefined) return clients.storage(settings.tablePath);
  return openStorage(settings.tablePath, settings.tablePath.startsWith('s3') ? { s3Client: clients.s3() } : {});
}

/** The table and its lock (DynamoDB when LOCK_TABLE or CLUSTERING_PROPERTIES say so: the deployment's settings only). */
export async function openTableAndLock(
  settings: StepSettings,
  clients: ServiceClients,
  options: { mode: TableAccessMode; ownerName?: string },
): Promise<{ table: HudiTable; lock: LockProvider }> {
  const storage = tableStorage(settings, clients);
  const table = await HudiTable.open(storage, { mode: options.mode });
  if (clients.lock !== undefined) return { table, lock: transientLockFailures(clients.lock(storage, table.config.name)) };
  const properties = lockProperties(settings);
  const lock = lockProviderFor(properties, table.config.name, storage, {
    dynamoDbClient: clients.dynamoDb(properties.get(LOCK_PROPERTY.dynamoDbRegion), properties.get(LOCK_PROPERTY.dynamoDbEndpointUrl)),
    ...(options.ownerName === undefined ? {} : { ownerName: options.ownerName }),
  });
  return { table, lock: transientLockFailures(lock) };
}

/**
 * A lock whose failures to acquire (held by another writer, DynamoDB unavailable) or to keep (lease lost before an
 * irreversible step) are Hudi.Transient: the whole step can be retried later, nothing irreversible happened.
 * Configuration problems (no such lock table, access denied) stay permanent.
 */
export function transientLockFailures(lock: LockProvider): LockProvider {
  const transient = (error: unknown, doing: string): unknown => {
    // ConflictError: held by another writer, or lost; LockUnavailableError: DynamoDB could not be reached.
    if (error instanceof ConflictError || error instanceof LockUnavailableError) {
      return new TaskError(TRANSIENT_ERROR, `${doing}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    return error;
  };
  return {
    description: lock.description,
    async acquire(options) {
      let lease: LockLease;
      try {
        lease = await lock.acquire(options);
      } catch (error) {
        throw transient(error, `could not take the table lock ${lock.description}`);
      }
      return {
        owner: lease.owner,
        release: () => lease.release(),
        async assertHeld() {
          try {
            await lease.assertHeld();
          } catch (error) {
            throw transient(error, `lost the table lock ${lock.description}`);
          }
        },
      };
    },
  };
}

/** A lock that is already held by `lease`: lets a step call lib functions that take the lock inside its own critical section. */
export function heldLock(lease: LockLease, description: string): LockProvider {
  return {
    description,
    acquire: async () => ({ owner: lease.owner, assertHeld: () => lease.assertHeld(), release: async () => undefined }),
  };
}
