/**
 * What every clustering Lambda reads from its environment and its event, resolved into one settings object:
 * `TABLE_PATH` (an event may name the table only when it is unset or the same: a deployment and its IAM policy are
 * scoped to one table), `CLUSTERING_PROPERTIES` (Java properties text or JSON), `HOODIE_CLUSTERING_*` /
 * `HOODIE_LAYOUT_OPTIMIZE_*`, `LOCK_TABLE`, and the execution input's `properties` (one run's overrides, limited by
 * event-properties.ts). The lock is the deployment's alone, never the event's nor the table's hoodie.properties: anyone
 * who can write the table could otherwise send the functions' signed DynamoDB requests, session token included, to an
 * endpoint of their choosing.
 */
import { type ClusteringConfig, resolveClusteringConfig } from '../../clustering/config.js';
import { HudiError } from '../../errors.js';
import { DYNAMODB_LOCK_PROVIDER, LOCK_PROPERTY } from '../../lock/index.js';
import { parseJavaProperties } from '../../table/properties.js';
import { nonEmpty } from '../../util/text.js';
import { assertEventProperties, EVENT_ALLOWED_PROPERTIES, eventPropertyPolicy } from './event-properties.js';
import { FUNCTIONS } from './function-settings.js';

export type Environment = Readonly<Record<string, string | undefined>>;
export type PropertyValue = string | number | boolean | readonly string[];
export type PropertyOverrides = Readonly<Record<string, PropertyValue>>;

export const ENV = {
  tablePath: 'TABLE_PATH',
  clusteringProperties: 'CLUSTERING_PROPERTIES',
  lockTable: 'LOCK_TABLE',
  /** Which properties an event may set (event-properties.ts). */
  eventAllowedProperties: EVENT_ALLOWED_PROPERTIES,
  stateMachineArn: 'STATE_MACHINE_ARN',
  /** The compaction state machine a writer (ingest) starts after its delta commits when Hudi's trigger says so. */
  compactionStateMachineArn: 'COMPACTION_STATE_MACHINE_ARN',
  /** Scratch space for staged files and DuckDB's spill (default the OS temp dir: /tmp on Lambda). */
  scratchDir: 'SCRATCH_DIR',
  memorySize: 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  /** execute-group's MemorySize and EphemeralStorage (MB), for the plan step to size groups to (template.yaml sets them). */
  executeGroupMemoryMb: 'EXECUTE_GROUP_MEMORY_MB',
  executeGroupEphemeralStorageMb: 'EXECUTE_GROUP_EPHEMERAL_STORAGE_MB',
} as const;

/**
 * Which table services a run does: `all` (the default: cluster when due, then clean and archive as
 * hoodie.clean.automatic / hoodie.archive.automatic say) or `clean-archive` (straight to cleaning and archiving,
 * whatever those two keys say: the run was started for them).
 */
export type RunServices = 'all' | 'clean-archive';
export const RUN_SERVICES: readonly RunServices[] = ['all', 'clean-archive'];

/** The state machine's input (also what `trigger` starts it with). */
export interface ClusteringExecutionInput {
  /** Default TABLE_PATH. */
  readonly tablePath?: string;
  /** Hudi properties for this run, over CLUSTERING_PROPERTIES and HOODIE_* variables. */
  readonly properties?: PropertyOverrides;
  /** Plan even before max.commits commits happened since the last clustering (when inline or async clustering is on; see schedule.ts). */
  readonly force?: boolean;
  /** Default `all`. */
  readonly services?: RunServices;
}

export interface StepSettings {
  readonly tablePath: string;
  readonly clustering: ClusteringConfig;
  /** Unknown or ignored clustering keys (logged as warnings). */
  readonly warnings: readonly string[];
  /** The event's properties, as given (passed along to the next states); only keys the deployment allows. */
  readonly overrides: PropertyOverrides;
  /** LOCK_TABLE defaults < CLUSTERING_PROPERTIES < event properties, as text. */
  readonly jobProperties: ReadonlyMap<string, string>;
  /** The deployment's own: LOCK_TABLE defaults < CLUSTERING_PROPERTIES, as text (the lock's properties). */
  readonly deploymentProperties: ReadonlyMap<string, string>;
}

/** Java properties text or a JSON object of scalar (or string list) values → key/value text. */
export function parsePropertiesText(text: string, location: string): Map<string, string> {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return parseJavaProperties(text, location);
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch (error) {
    throw new HudiError(`is not valid JSON: ${(error as Error).message}`, {
      location,
      fix: 'give a JSON object of Hudi keys, or Java properties text (key=value lines)',
    });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HudiError('is JSON but not an object', { location, fix: 'give a JSON object such as {"hoodie.clustering.plan.strategy.sort.columns": "a,b"}' });
  }
  return new Map(Object.entries(parsed).map(([key, value]) => [key, propertyText(key, value, location)]));
}

function propertyText(key: string, value: unknown, location: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string')) return value.join(',');
  throw new HudiError(`${key} has a value that is not a string, number, boolean or list of strings`, { location });
}

/** Check a `properties` object from an event (untrusted JSON). */
export function parsePropertyOverrides(value: unknown, location: string): PropertyOverrides {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new HudiError('`properties` must be an object of Hudi keys', {
      location,
      fix: 'pass e.g. {"properties": {"hoodie.clustering.plan.strategy.sort.columns": "a,b"}}',
    });
  }
  const entries: [string, PropertyValue][] = [];
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') entries.push([key, item]);
    else if (Array.isArray(item) && item.every((entry): entry is string => typeof entry === 'string')) entries.push([key, item]);
    else throw new HudiError(`properties.${key} is not a string, number, boolean or list of strings`, { location });
  }
  // fromEntries defines each key as the object's own: assigning "__proto__" would set the prototype instead and drop
  // the key silently, where every other key the deployment does not allow is refused by name.
  return Object.fromEntries(entries);
}

/** The table path a step works on: the event's, TABLE_PATH's, and never two different ones. */
export function resolveTablePath(env: Environment, fromEvent: string | undefined): string {
  const configured = nonEmpty(env[ENV.tablePath]);
  const given = nonEmpty(fromEvent);
  if (configured !== undefined && given !== undefined && stripSlashes(configured) !== stripSlashes(given)) {
    throw new HudiError(`the event names table ${given}, but this function is deployed for ${configured}`, {
      location: ENV.tablePath,
      fix: 'leave tablePath out of the input, or deploy a stack per table',
    });
  }
  const tablePath = given ?? configured;
  if (tablePath === undefined) {
    throw new HudiError(`no table: ${ENV.tablePath} is not set and the event has no tablePath`, {
      fix: `set ${ENV.tablePath}=s3://bucket/prefix on the function`,
    });
  }
  return stripSlashes(tablePath);
}

function stripSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

/** Where an event's properties are named in messages. */
export const EVENT_PROPERTIES_LOCATION = "the event's properties (execution input)";

/**
 * Resolve a step's settings (throws HudiError on an unusable value, before anything is touched): an event property
 * the deployment does not allow is refused here (EventPropertyError), whichever step receives it.
 */
export function resolveStepSettings(env: Environment, event: { tablePath?: string | undefined; properties?: PropertyOverrides | undefined }): StepSettings {
  const overrides = event.properties ?? {};
  assertEventProperties(Object.keys(overrides), eventPropertyPolicy(env), EVENT_PROPERTIES_LOCATION);
  const tablePath = resolveTablePath(env, event.tablePath);
  const fileText = env[ENV.clusteringProperties];
  const fileProperties = fileText === undefined || fileText.trim() === '' ? new Map<string, string>() : parsePropertiesText(fileText, ENV.clusteringProperties);
  const { config, warnings } = resolveClusteringConfig({
    file: { location: ENV.clusteringProperties, properties: fileProperties },
    env,
    event: overrides,
  });

  const deploymentProperties = lockTableDefaults(env, (key) => fileProperties.has(key));
  for (const [key, value] of fileProperties) deploymentProperties.set(key, value);
  const jobProperties = new Map(deploymentProperties);
  for (const [key, value] of Object.entries(overrides)) jobProperties.set(key, propertyText(key, value, EVENT_PROPERTIES_LOCATION));
  return { tablePath, clustering: config, warnings, overrides, jobProperties, deploymentProperties };
}

/**
 * LOCK_TABLE as a default: Hudi's DynamoDBBasedLockProvider on that table, unless the deployment's properties
 * (`chooses`) name a provider or a lock table themselves. Every function that touches the timeline uses it, ingest
 * included.
 */
export function lockTableDefaults(env: Environment, chooses: (key: string) => boolean): Map<string, string> {
  const defaults = new Map<string, string>();
  const lockTable = nonEmpty(env[ENV.lockTable]);
  if (lockTable !== undefined && !chooses(LOCK_PROPERTY.provider) && !chooses(LOCK_PROPERTY.dynamoDbTable)) {
    defaults.set(LOCK_PROPERTY.provider, DYNAMODB_LOCK_PROVIDER);
    defaults.set(LOCK_PROPERTY.dynamoDbTable, lockTable);
  }
  return defaults;
}

/**
 * The lock's properties: the deployment's (LOCK_TABLE, CLUSTERING_PROPERTIES) only. Not the event's (refused anyway)
 * and not the table's hoodie.properties: Hudi's writers do not take their lock from there either.
 */
export function lockProperties(settings: Pick<StepSettings, 'deploymentProperties'>): Map<string, string> {
  return new Map(settings.deploymentProperties);
}

/**
 * The keys cleaning and archiving read: the table's hoodie.properties under the deployment's (and the run's)
 * properties, as a Hudi writer's options override the table's.
 */
export function tableServiceProperties(tableProperties: ReadonlyMap<string, string>, settings: Pick<StepSettings, 'jobProperties'>): Map<string, string> {
  return new Map([...tableProperties, ...settings.jobProperties]);
}

/** A Lambda's memory: the context's, else AWS_LAMBDA_FUNCTION_MEMORY_SIZE. */
export function lambdaMemoryMb(env: Environment, contextMemory: string | number | undefined): number {
  const fromContext = contextMemory === undefined ? NaN : Number(contextMemory);
  if (Number.isFinite(fromContext) && fromContext > 0) return fromContext;
  const fromEnv = Number(nonEmpty(env[ENV.memorySize]) ?? NaN);
  if (Number.isFinite(fromEnv) && fromEnv > 0) return fromEnv;
  throw new HudiError("cannot tell this function's memory size", {
    location: ENV.memorySize,
    fix: `run it on Lambda, or set ${ENV.memorySize} (MB) so DuckDB's memory limit can be derived`,
  });
}

/** execute-group's size as the plan step sees it: EXECUTE_GROUP_* variables, else the template's defaults. */
export function executeGroupSize(env: Environment): { memoryMb: number; ephemeralStorageMb: number } {
  const read = (name: string, fallback: number): number => {
    const text = nonEmpty(env[name]);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value <= 0) {
      throw new HudiError(`${name}=${text} is not a whole number of MB`, { location: name, fix: "set it to the function's size in MB, as template.yaml does" });
    }
    return value;
  };
  const defaults = FUNCTIONS['execute-group'];
  return {
    memoryMb: read(ENV.executeGroupMemoryMb, defaults.memoryMb),
    ephemeralStorageMb: read(ENV.executeGroupEphemeralStorageMb, defaults.ephemeralStorageMb),
  };
}
