/**
 * Cleaner settings from Hudi's own keys with Hudi 0.15's defaults (HoodieCleanConfig). The failed-writes policy
 * (hoodie.cleaner.policy.failed.writes) is not here: failed writes are rolled back by lib/rollback.ts, not by a clean.
 */
import { HudiError } from '../errors.js';

export type CleaningPolicy = 'KEEP_LATEST_COMMITS' | 'KEEP_LATEST_FILE_VERSIONS' | 'KEEP_LATEST_BY_HOURS';
export const CLEANING_POLICIES: readonly CleaningPolicy[] = ['KEEP_LATEST_COMMITS', 'KEEP_LATEST_FILE_VERSIONS', 'KEEP_LATEST_BY_HOURS'];

export interface CleanConfig {
  readonly policy: CleaningPolicy;
  /** KEEP_LATEST_COMMITS: completed commits whose files stay readable. */
  readonly commitsRetained: number;
  /** KEEP_LATEST_FILE_VERSIONS: file slices kept per file group. */
  readonly fileVersionsRetained: number;
  /** KEEP_LATEST_BY_HOURS: hours of commits whose files stay readable. */
  readonly hoursRetained: number;
  /** Writers clean after each commit (later: start the clean service). */
  readonly automatic: boolean;
  /** With automatic: clean alongside the write rather than after it. */
  readonly async: boolean;
  /** hoodie.clean.trigger.strategy: NUM_COMMITS is the only one Hudi has. */
  readonly triggerStrategy: 'NUM_COMMITS';
  /** Completed commits since the last clean before a clean is scheduled. */
  readonly maxCommits: number;
  /** Plan from the partitions the instants since the last clean touched instead of listing every partition. */
  readonly incrementalMode: boolean;
  /** Storage requests in flight at once while planning (partition listings) and deleting (DeleteObjects calls). */
  readonly parallelism: number;
}

export const CLEAN_KEYS = {
  policy: { key: 'hoodie.cleaner.policy', default: 'KEEP_LATEST_COMMITS', description: 'KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS' },
  commitsRetained: { key: 'hoodie.cleaner.commits.retained', default: 10, description: 'KEEP_LATEST_COMMITS: the last N completed commits stay readable (files older than the N-th newest are cleaned)' },
  fileVersionsRetained: { key: 'hoodie.cleaner.fileversions.retained', default: 3, description: 'KEEP_LATEST_FILE_VERSIONS: file slices kept in each file group' },
  hoursRetained: { key: 'hoodie.cleaner.hours.retained', default: 24, description: 'KEEP_LATEST_BY_HOURS: commits of the last N hours stay readable' },
  automatic: { key: 'hoodie.clean.automatic', default: true, description: 'clean after each commit' },
  async: { key: 'hoodie.clean.async', default: false, description: 'with automatic: clean alongside the writes' },
  triggerStrategy: { key: 'hoodie.clean.trigger.strategy', default: 'NUM_COMMITS', description: 'when to schedule a clean: NUM_COMMITS (the only strategy)' },
  maxCommits: { key: 'hoodie.clean.max.commits', default: 1, description: 'completed commits since the last clean before another is scheduled' },
  incrementalMode: { key: 'hoodie.cleaner.incremental.mode', default: true, description: 'plan from the partitions written since the last clean instead of listing every partition' },
  parallelism: { key: 'hoodie.cleaner.parallelism', default: 200, description: 'storage requests in flight at once while planning (listings) and cleaning (delete batches of up to 1,000 files)' },
} as const;

export function integerOf(props: ReadonlyMap<string, string>, key: string, fallback: number, location: string, min: number): number {
  const text = props.get(key);
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text.trim());
  if (!Number.isInteger(value) || value < min) {
    throw new HudiError(`${key}=${text} is not a whole number ≥ ${min}`, { location, fix: `set ${key} to a whole number ≥ ${min} (default ${fallback})` });
  }
  return value;
}

export function booleanOf(props: ReadonlyMap<string, string>, key: string, fallback: boolean, location: string): boolean {
  const text = props.get(key)?.trim().toLowerCase();
  if (text === undefined || text === '') return fallback;
  if (text !== 'true' && text !== 'false') throw new HudiError(`${key}=${props.get(key)} is not true or false`, { location, fix: `set ${key}=true or false (default ${fallback})` });
  return text === 'true';
}

/** The cleaner settings in `props` (hoodie.properties merged with the job's properties), Hudi's defaults for the rest. */
export function cleanConfigFromProperties(props: ReadonlyMap<string, string>, location = 'clean properties'): CleanConfig {
  const k = CLEAN_KEYS;
  const policyText = (props.get(k.policy.key) ?? k.policy.default).trim().toUpperCase();
  if (!(CLEANING_POLICIES as readonly string[]).includes(policyText)) {
    throw new HudiError(`${k.policy.key}=${props.get(k.policy.key)} is not a cleaning policy`, { location, fix: `use one of ${CLEANING_POLICIES.join(', ')}` });
  }
  const trigger = (props.get(k.triggerStrategy.key) ?? k.triggerStrategy.default).trim().toUpperCase();
  if (trigger !== 'NUM_COMMITS') {
    throw new HudiError(`${k.triggerStrategy.key}=${props.get(k.triggerStrategy.key)} is not a clean trigger strategy`, { location, fix: 'use NUM_COMMITS (Hudi\'s only strategy)' });
  }
  return {
    policy: policyText as CleaningPolicy,
    // Hudi accepts 0 commits retained (everything but the latest and the one before the window goes).
    commitsRetained: integerOf(props, k.commitsRetained.key, k.commitsRetained.default, location, 0),
    fileVersionsRetained: integerOf(props, k.fileVersionsRetained.key, k.fileVersionsRetained.default, location, 1),
    hoursRetained: integerOf(props, k.hoursRetained.key, k.hoursRetained.default, location, 0),
    automatic: booleanOf(props, k.automatic.key, k.automatic.default, location),
    async: booleanOf(props, k.async.key, k.async.default, location),
    triggerStrategy: 'NUM_COMMITS',
    maxCommits: integerOf(props, k.maxCommits.key, k.maxCommits.default, location, 0),
    incrementalMode: booleanOf(props, k.incrementalMode.key, k.incrementalMode.default, location),
    parallelism: integerOf(props, k.parallelism.key, k.parallelism.default, location, 1),
  };
}

export const DEFAULT_CLEAN_CONFIG: CleanConfig = cleanConfigFromProperties(new Map());

/**
 * How a writer follows hoodie.clean.automatic / hoodie.clean.async after a commit: not at all, right after the
 * commit, or alongside the next writes. The serverless writer turns the last two into starting the clean service.
 */
export function automaticCleaning(config: Pick<CleanConfig, 'automatic' | 'async'>): 'off' | 'after-commit' | 'async' {
  if (!config.automatic) return 'off';
  return config.async ? 'async' : 'after-commit';
}
