/**
 * Many tables, one deployment: a table registry, one JSON document on S3 named by TABLE_REGISTRY
 * (`s3://bucket/key`), lists the tables the functions serve, each with its own Hudi properties and schedule:
 *
 *   {"tables": [
 *     {"path": "s3://lake/tables/users", "schedule": "rate(1 hour)", "properties": {"hoodie.clustering.plan.strategy.sort.columns": "country"}},
 *     {"path": "s3://lake/tables/orders"}
 *   ]}
 *
 * An S3 document rather than a DynamoDB table: the functions read S3 already, the whole list is read in one GET
 * (dozens of tables, a few KB), it is edited and versioned like any deployment file (`aws s3 cp`, bucket
 * versioning), and a PUT replaces it atomically; DynamoDB would add a table schema, a client and IAM for no query
 * the functions need. A container keeps what it read for REGISTRY_CACHE_SECONDS (60 by default).
 *
 * - The scheduled trigger fans out over the registered tables whose schedule is due at this tick (the deployment's
 *   ScheduleExpression, TRIGGER_SCHEDULE: a table with `rate(1 day)` is due at the one tick a day that crosses a
 *   multiple of a day since the epoch; no schedule: every tick), then decides for each as for a single table.
 * - A commit's S3 event maps its key to the registered table under whose prefix it lies.
 * - Every step runs a table only when it is TABLE_PATH (the single-table deployment) or registered: anything else is
 *   refused with an UnregisteredTableError before the table is read.
 * - A table's properties are the deployment's CLUSTERING_PROPERTIES with the entry's over them (trusted as the
 *   deployment's own: lock keys included).
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { HudiError, UnregisteredTableError } from '../../errors.js';
import { parseS3Uri } from '../../storage/index.js';
import { type Environment, parsePropertiesText, ENV as SETTINGS_ENV } from './settings.js';

export const REGISTRY_ENV = {
  registry: 'TABLE_REGISTRY',
  cacheSeconds: 'REGISTRY_CACHE_SECONDS',
  /** The trigger's own schedule (the template's ScheduleExpression): a tick's length. */
  triggerSchedule: 'TRIGGER_SCHEDULE',
} as const;

export interface RegisteredTable {
  /** s3://bucket/prefix, no trailing slash. */
  readonly path: string;
  /** Minutes between the ticks the table is due at; undefined: every tick. */
  readonly everyMinutes: number | undefined;
  readonly schedule: string | undefined;
  readonly properties: ReadonlyMap<string, string>;
}

export interface TableRegistry {
  readonly location: string;
  readonly tables: readonly RegisteredTable[];
}

const RATE = /^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$/;

/** An EventBridge rate expression in minutes. */
export function rateMinutes(expression: string, location: string): number {
  const match = RATE.exec(expression.trim());
  const amount = Number(match?.[1]);
  if (match === null || !Number.isInteger(amount) || amount < 1) {
    throw new HudiError(`schedule "${expression}" is not a rate expression`, { location, fix: 'write rate(N minutes), rate(N hours) or rate(N days)' });
  }
  const unit = match[2]!;
  return amount * (unit.startsWith('minute') ? 1 : unit.startsWith('hour') ? 60 : 1440);
}

function stripSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

/** Check a registry document (JSON text). */
export function parseRegistry(text: string, location: string): TableRegistry {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new HudiError(`the table registry is not valid JSON: ${(error as Error).message}`, {
      location,
      fix: 'write {"tables": [{"path": "s3://bucket/prefix"}, ...]}',
    });
  }
  const tables = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as { tables?: unknown }).tables : undefined;
  if (!Array.isArray(tables))
    throw new HudiError('the table registry has no "tables" list', { location, fix: 'write {"tables": [{"path": "s3://bucket/prefix"}, ...]}' });
  const seen = new Set<string>();
  const entries = tables.map((entry: unknown, index): RegisteredTable => {
    const where = `${location} tables[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw new HudiError('is not an object', { location: where, fix: 'give {"path": "s3://bucket/prefix"}' });
    const { path, schedule, properties } = entry as { path?: unknown; schedule?: unknown; properties?: unknown };
    if (typeof path !== 'string' || parseS3Uri(path) === undefined || parseS3Uri(path)!.prefix === '') {
      throw new HudiError(`path ${JSON.stringify(path)} is not an s3://bucket/prefix table path`, {
        location: where,
        fix: "give the table's s3://bucket/prefix",
      });
    }
    const normalized = stripSlashes(path);
    if (seen.has(normalized)) throw new HudiError(`${normalized} is registered twice`, { location: where, fix: 'keep one entry per table' });
    seen.add(normalized);
    if (schedule !== undefined && typeof schedule !== 'string')
      throw new HudiError('schedule is not a string', { location: where, fix: 'write e.g. "rate(1 hour)"' });
    if (properties !== undefined && (typeof properties !== 'object' || properties === null || Array.isArray(properties))) {
      throw new HudiError('properties is not an object of Hudi keys', {
        location: where,
        fix: 'write e.g. {"hoodie.clustering.plan.strategy.sort.columns": "a,b"}',
      });
    }
    return {
      path: normalized,
      schedule,
      everyMinutes: schedule === undefined ? undefined : rateMinutes(schedule, where),
      properties: properties === undefined ? new Map() : parsePropertiesText(JSON.stringify(properties), `${where} properties`),
    };
  });
  // Nested tables would make a key's table ambiguous.
  for (const a of entries) {
    for (const b of entries) {
      if (a !== b && b.path.startsWith(`${a.path}/`))
        throw new HudiError(`${b.path} lies inside ${a.path}`, { location, fix: 'register tables that do not contain one another' });
    }
  }
  return { location, tables: entries };
}

/** The entry of `tablePath`, or an UnregisteredTableError. */
export function registeredTable(registry: TableRegistry, tablePath: string): RegisteredTable {
  const found = registry.tables.find((table) => table.path === stripSlashes(tablePath));
  if (found === undefined) {
    throw new UnregisteredTableError(stripSlashes(tablePath), {
      location: registry.location,
      fix: `add {"path": "${stripSlashes(tablePath)}"} to the registry (and its bucket and prefix to the stack's RegisteredTablePaths), or send the event for a registered table`,
    });
  }
  return found;
}

/** The registered table an S3 key lies under (a commit's `.hoodie/` file, or any of its objects). */
export function tableOfKey(registry: TableRegistry, bucket: string, key: string): RegisteredTable {
  const found = registry.tables.find((table) => {
    const location = parseS3Uri(table.path)!;
    return location.bucket === bucket && key.startsWith(`${location.prefix}/`);
  });
  if (found === undefined) {
    throw new UnregisteredTableError(`s3://${bucket}/${key.includes('/.hoodie/') ? key.slice(0, key.indexOf('/.hoodie/')) : key}`, {
      location: registry.location,
      fix: "the event's key lies under no registered table: register the table (and its path in the stack's RegisteredTablePaths), or stop the bucket's events for it",
    });
  }
  return found;
}

/** Whether a multiple of the table's interval (since the epoch) falls in this tick, (now − tick, now]. */
export function isDue(table: RegisteredTable, now: Date, tickMinutes: number): boolean {
  if (table.everyMinutes === undefined) return true;
  const minute = Math.floor(now.getTime() / 60_000);
  return Math.floor(minute / table.everyMinutes) > Math.floor((minute - tickMinutes) / table.everyMinutes);
}

/** The tick's length: TRIGGER_SCHEDULE as a rate, 60 minutes when it is not set (the template's default schedule). */
export function tickMinutesOf(env: Environment): number {
  const schedule = env[REGISTRY_ENV.triggerSchedule]?.trim();
  return schedule === undefined || schedule === '' ? 60 : rateMinutes(schedule, REGISTRY_ENV.triggerSchedule);
}

/**
 * The environment a step works on `table` with: TABLE_PATH is the table, CLUSTERING_PROPERTIES the deployment's
 * with the entry's over them.
 */
export function environmentFor(env: Environment, table: RegisteredTable): Environment {
  const text = env[SETTINGS_ENV.clusteringProperties] ?? '';
  const deployment = text.trim() === '' ? new Map<string, string>() : parsePropertiesText(text, SETTINGS_ENV.clusteringProperties);
  const merged = Object.fromEntries([...deployment, ...table.properties]);
  return { ...env, [SETTINGS_ENV.tablePath]: table.path, [SETTINGS_ENV.clusteringProperties]: JSON.stringify(merged) };
}

// ---- loading ----

interface Cached {
  readonly registry: TableRegistry;
  readonly at: number;
}
const cache = new Map<string, Cached>();

/** The registry of TABLE_REGISTRY (cached per container), or undefined when the deployment has none. */
export async function registryFromEnv(env: Environment, s3: () => S3Client, now: number = Date.now()): Promise<TableRegistry | undefined> {
  const uri = env[REGISTRY_ENV.registry]?.trim();
  if (uri === undefined || uri === '') return undefined;
  const ttlMs = Number(env[REGISTRY_ENV.cacheSeconds] ?? 60) * 1000;
  const hit = cache.get(uri);
  if (hit !== undefined && now - hit.at < ttlMs) return hit.registry;
  const location = parseS3Uri(uri);
  if (location === undefined || location.prefix === '')
    throw new HudiError(`${REGISTRY_ENV.registry}=${uri} is not an s3://bucket/key`, {
      fix: 'name the registry document, e.g. s3://config-bucket/hudi/tables.json',
    });
  let text: string;
  try {
    const response = await s3().send(new GetObjectCommand({ Bucket: location.bucket, Key: location.prefix }));
    text = (await response.Body?.transformToString('utf8')) ?? '';
  } catch (error) {
    throw new HudiError(`cannot read the table registry: ${(error as Error).message}`, {
      location: uri,
      fix: "check the document exists and the function may read it (the stack's TableRegistry parameter)",
    });
  }
  const registry = parseRegistry(text, uri);
  cache.set(uri, { registry, at: now });
  return registry;
}

/** Where a step's event names its table: `tablePath`, or `input.tablePath` (the plan step's wrapper). */
export function eventTablePath(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const direct = (event as { tablePath?: unknown }).tablePath;
  if (typeof direct === 'string' && direct.trim() !== '') return direct;
  const input = (event as { input?: unknown }).input;
  if (typeof input === 'object' && input !== null) {
    const nested = (input as { tablePath?: unknown }).tablePath;
    if (typeof nested === 'string' && nested.trim() !== '') return nested;
  }
  return undefined;
}

/**
 * A step's environment for its event: unchanged without a registry or when the event names no table; the
 * registered table's (environmentFor) for a registered one; unchanged for the deployment's own TABLE_PATH; an
 * UnregisteredTableError for a table that is neither.
 */
export async function stepEnvironment(env: Environment, event: unknown, s3: () => S3Client): Promise<Environment> {
  const registry = await registryFromEnv(env, s3);
  const tablePath = eventTablePath(event);
  if (registry === undefined || tablePath === undefined) return env;
  const entry = registry.tables.find((table) => table.path === stripSlashes(tablePath));
  if (entry !== undefined) return environmentFor(env, entry);
  const configured = env[SETTINGS_ENV.tablePath]?.trim();
  if (configured !== undefined && configured !== '' && stripSlashes(configured) === stripSlashes(tablePath)) return env;
  return environmentFor(env, registeredTable(registry, tablePath));
}
