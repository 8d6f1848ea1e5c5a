/**
 * Which Hudi properties a Step Functions execution input or a Lambda event may carry. Whoever may start an execution
 * writes its event; the deployment (the functions' environment) is the operator's. So what decides the lock, where
 * signed requests go and what is safe is the deployment's alone: `hoodie.write.lock.*`, `hoodie.aws.*`,
 * `hoodie.write.concurrency.*`, `hoodie.cleaner.policy.failed.writes`, `hoodie.table.*` and `hoodie.base.path` never
 * come from an event. An event may only tune one run with the keys EVENT_ALLOWED_PROPERTIES allows (eventPropertyPolicy);
 * anything else is refused with one error naming each key and where it can be set instead.
 */
import { CLUSTERING_KEYS, FLINK_CLUSTERING_ALIASES } from '../../clustering/config.js';
import { HudiError } from '../../errors.js';
import { FAILED_WRITES_POLICY } from '../../rollback/failed-writes.js';
import { nonEmpty } from '../../util/text.js';

type Environment = Readonly<Record<string, string | undefined>>;

export const EVENT_ALLOWED_PROPERTIES = 'EVENT_ALLOWED_PROPERTIES';
/** Where a deployment sets what an event may not: the environment variable and the template parameter. */
const CLUSTERING_PROPERTIES_WHERE = "CLUSTERING_PROPERTIES (the template's ClusteringProperties)";
const ALLOW_LIST_WHERE = `${EVENT_ALLOWED_PROPERTIES} (the template's EventAllowedProperties)`;

/** Families of keys only a deployment sets: what they are, and where to set them instead. */
const DEPLOYMENT_ONLY: readonly { readonly key: string; readonly family: boolean; readonly what: string; readonly setIn: string }[] = [
  {
    key: 'hoodie.write.lock.',
    family: true,
    what: 'a table lock setting',
    setIn: `LOCK_TABLE (the template's LockTableName) or ${CLUSTERING_PROPERTIES_WHERE}`,
  },
  {
    key: 'hoodie.aws.',
    family: true,
    what: 'an AWS credential setting',
    setIn: 'nowhere: the functions sign with their IAM role (and endpoints come from AWS_ENDPOINT_URL_* of the deployment)',
  },
  { key: 'hoodie.write.concurrency.', family: true, what: 'a concurrency setting', setIn: CLUSTERING_PROPERTIES_WHERE },
  ...[FAILED_WRITES_POLICY.key, ...FAILED_WRITES_POLICY.renamedIn].map((key) => ({
    key,
    family: false,
    what: 'a concurrency setting',
    setIn: CLUSTERING_PROPERTIES_WHERE,
  })),
  { key: 'hoodie.table.', family: true, what: 'a table setting', setIn: "the table's .hoodie/hoodie.properties" },
  { key: 'hoodie.base.path', family: false, what: "the table's path", setIn: "TABLE_PATH (the template's TableBucket and TablePrefix)" },
];

/**
 * Clustering keys that change what is safe, so not in the default list: whether upserts may change file groups a
 * pending plan rewrites, whether a conflicting upsert rolls a pending plan back, and whether clustered records keep
 * their commit times (incremental readers rely on them).
 */
export const UNSAFE_CLUSTERING_KEYS: readonly string[] = [
  'hoodie.clustering.updates.strategy',
  'hoodie.clustering.rollback.pending.replacecommit.on.conflict',
  'hoodie.clustering.preserve.commit.metadata',
];

/** The clustering keys an event may set unless the deployment says otherwise, with their older names and Flink aliases. */
export const DEFAULT_EVENT_PROPERTIES: readonly string[] = (() => {
  const allowed = CLUSTERING_KEYS.filter((spec) => !UNSAFE_CLUSTERING_KEYS.includes(spec.key));
  const canonical = new Set(allowed.map((spec) => spec.key));
  return [
    ...allowed.flatMap((spec) => [spec.key, ...spec.alternatives]),
    ...FLINK_CLUSTERING_ALIASES.filter((alias) => alias.key !== undefined && canonical.has(alias.key)).map((alias) => alias.flinkKey),
  ];
})();

const KNOWN_CLUSTERING_KEYS = new Set([
  ...CLUSTERING_KEYS.flatMap((spec) => [spec.key, ...spec.alternatives]),
  ...FLINK_CLUSTERING_ALIASES.map((alias) => alias.flinkKey),
]);
const CLUSTERING_KEY_PREFIXES = ['hoodie.clustering.', 'hoodie.layout.optimize.', 'clustering.'];

/** A deployment's rule for event properties. */
export interface EventPropertyPolicy {
  /** Exact keys an event may set. */
  readonly keys: ReadonlySet<string>;
  /** Key prefixes (from `prefix.*` entries) an event may set. */
  readonly prefixes: readonly string[];
}

/** An event named properties only the deployment may set (or that it does not allow). Nothing was touched. */
export class EventPropertyError extends HudiError {
  /** The refused keys, as the event gave them. */
  readonly keys: readonly string[];

  constructor(refusals: readonly { key: string; reason: string }[], location: string) {
    super(refusals.map((refusal) => `${refusal.key} ${refusal.reason}`).join('; '), {
      location,
      fix: 'leave those keys out of the event; an event may carry only the clustering keys the deployment allows',
    });
    this.name = 'EventPropertyError';
    this.keys = refusals.map((refusal) => refusal.key);
  }
}

function deploymentOnly(key: string): (typeof DEPLOYMENT_ONLY)[number] | undefined {
  return DEPLOYMENT_ONLY.find((entry) => (entry.family ? key.startsWith(entry.key) : key === entry.key));
}

/** Whether only the deployment may set `key` (lock, credentials, concurrency, table settings). */
export function isDeploymentOnlyKey(key: string): boolean {
  return deploymentOnly(key) !== undefined;
}

/**
 * The deployment's EVENT_ALLOWED_PROPERTIES (see the top of this file). Throws when it lists a deployment-only key.
 *
 * EVENT_ALLOWED_PROPERTIES: comma-separated keys, `prefix.*` for a family, `default` for the default list, `none` for no
 * key at all. Unset or empty: the default list, every `hoodie.clustering.*` and `hoodie.layout.optimize.*` key (with
 * Hudi's older names and Flink's aliases of them) except the three that change what is safe (UNSAFE_CLUSTERING_KEYS).
 */
export function eventPropertyPolicy(env: Environment): EventPropertyPolicy {
  const text = nonEmpty(env[EVENT_ALLOWED_PROPERTIES]);
  if (text === undefined) return { keys: new Set(DEFAULT_EVENT_PROPERTIES), prefixes: [] };
  const keys = new Set<string>();
  const prefixes: string[] = [];
  const entries = text.split(/[\s,]+/).filter((entry) => entry !== '');
  for (const entry of entries) {
    if (entry === 'none') {
      if (entries.length > 1)
        throw new HudiError('"none" cannot be combined with other entries', {
          location: EVENT_ALLOWED_PROPERTIES,
          fix: 'give "none" alone, or a list of keys',
        });
      continue;
    }
    if (entry === 'default') {
      for (const key of DEFAULT_EVENT_PROPERTIES) keys.add(key);
      continue;
    }
    const refused = deploymentOnly(entry.endsWith('*') ? entry.slice(0, -1) : entry);
    if (refused !== undefined) {
      throw new HudiError(`lists ${entry}, ${refused.what}, which never comes from an event`, {
        location: EVENT_ALLOWED_PROPERTIES,
        fix: `remove it; set the value itself in ${refused.setIn}`,
      });
    }
    if (entry.endsWith('*')) prefixes.push(entry.slice(0, -1));
    else keys.add(entry);
  }
  return { keys, prefixes };
}

/** Why an event may not set `key`, or undefined when it may. */
function refusalOf(key: string, policy: EventPropertyPolicy): string | undefined {
  const only = deploymentOnly(key);
  if (only !== undefined) return `is ${only.what}: it never comes from an event (set it in ${only.setIn})`;
  if (policy.keys.has(key) || policy.prefixes.some((prefix) => key.startsWith(prefix))) return undefined;
  if (CLUSTERING_KEY_PREFIXES.some((prefix) => key.startsWith(prefix)) && !KNOWN_CLUSTERING_KEYS.has(key)) {
    return 'is not a clustering key this service knows (see the configuration reference in README.md)';
  }
  return `is not among the keys this deployment lets an event set (${ALLOW_LIST_WHERE}; by default the hoodie.clustering.* and hoodie.layout.optimize.* keys that do not affect safety): set it in ${CLUSTERING_PROPERTIES_WHERE}, or allow it in ${EVENT_ALLOWED_PROPERTIES}`;
}

/** Refuse, in one error, every key of an event's `properties` the deployment does not let an event set. */
export function assertEventProperties(keys: Iterable<string>, policy: EventPropertyPolicy, location: string): void {
  const refusals = [...keys].flatMap((key) => {
    const reason = refusalOf(key, policy);
    return reason === undefined ? [] : [{ key, reason }];
  });
  if (refusals.length > 0) throw new EventPropertyError(refusals, location);
}

/** Every key but the deployment-only ones: what a deployed state machine may accept at most. */
export const ANY_BUT_DEPLOYMENT_ONLY: EventPropertyPolicy = { keys: new Set(), prefixes: [''] };

/** Whether `policy` lets an event set `key`. */
export function eventMaySet(key: string, policy: EventPropertyPolicy): boolean {
  return refusalOf(key, policy) === undefined;
}
