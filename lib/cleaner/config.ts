/**
 * Cleaner settings from Hudi's own keys with Hudi 0.15's defaults (HoodieCleanConfig). The failed-writes policy
 * (hoodie.cleaner.policy.failed.writes) is not here: failed writes are rolled back by lib/rollback/rollback.ts, not by a clean.
 */
import { bool, defineKey, javaInt, oneOf, readKeys } from '../config/index.js';

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
  policy: defineKey({
    key: 'hoodie.cleaner.policy',
    renamedIn: ['hoodie.clean.policy'],
    default: 'KEEP_LATEST_COMMITS' as CleaningPolicy,
    parser: oneOf(CLEANING_POLICIES),
    description: 'KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS',
  }),
  // At least 1: with 0, Hudi's CleanPlanner finds no earliest commit to retain (nthInstant past the end) and fails
  // on the empty Option; refused here by the key's range instead.
  commitsRetained: defineKey({
    key: 'hoodie.cleaner.commits.retained',
    renamedIn: ['hoodie.clean.commits.retained'],
    default: 10,
    parser: javaInt(1),
    description:
      "KEEP_LATEST_COMMITS: the last N completed commits stay readable (files older than the N-th newest are cleaned); at least 1: Hudi's planner fails on 0",
  }),
  fileVersionsRetained: defineKey({
    key: 'hoodie.cleaner.fileversions.retained',
    renamedIn: ['hoodie.clean.fileversions.retained'],
    default: 3,
    parser: javaInt(1),
    description: 'KEEP_LATEST_FILE_VERSIONS: file slices kept in each file group',
  }),
  hoursRetained: defineKey({
    key: 'hoodie.cleaner.hours.retained',
    renamedIn: ['hoodie.clean.hours.retained'],
    default: 24,
    parser: javaInt(0),
    description: 'KEEP_LATEST_BY_HOURS: commits of the last N hours stay readable',
  }),
  automatic: defineKey({ key: 'hoodie.clean.automatic', default: true, parser: bool, description: 'clean after each commit' }),
  async: defineKey({
    key: 'hoodie.clean.async',
    renamedIn: ['hoodie.clean.async.enabled'],
    default: false,
    parser: bool,
    description: 'with automatic: clean alongside the writes',
  }),
  triggerStrategy: defineKey({
    key: 'hoodie.clean.trigger.strategy',
    default: 'NUM_COMMITS' as const,
    parser: oneOf(['NUM_COMMITS'] as const),
    description: 'when to schedule a clean: NUM_COMMITS (the only strategy)',
  }),
  maxCommits: defineKey({
    key: 'hoodie.clean.max.commits',
    default: 1,
    parser: javaInt(0),
    description: 'completed commits since the last clean before another is scheduled',
  }),
  incrementalMode: defineKey({
    key: 'hoodie.cleaner.incremental.mode',
    renamedIn: ['hoodie.clean.incremental.enabled'],
    default: true,
    parser: bool,
    description: 'plan from the partitions written since the last clean instead of listing every partition',
  }),
  parallelism: defineKey({
    key: 'hoodie.cleaner.parallelism',
    renamedIn: ['hoodie.clean.parallelism'],
    default: 200,
    parser: javaInt(1),
    description: 'storage requests in flight at once while planning (listings) and cleaning (delete batches of up to 1,000 files)',
  }),
} as const;

/** The cleaner settings in `props` (hoodie.properties merged with the job's properties), Hudi's defaults for the rest. */
export function cleanConfigFromProperties(props: ReadonlyMap<string, string>, location = 'clean properties'): CleanConfig {
  return Object.freeze(readKeys(props, CLEAN_KEYS, location));
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
