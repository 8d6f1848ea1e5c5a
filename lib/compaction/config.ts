/**
 * Compaction settings of merge-on-read tables, from Hudi's own keys with Hudi 0.15's defaults (HoodieCompactionConfig,
 * HoodieStorageConfig): when a compaction is scheduled (trigger strategy, delta commits, elapsed time) and what its
 * plan takes (LogFileSizeBasedCompactionStrategy: slices with the most log bytes first, up to the target IO).
 */
import { defineKey, javaInt, javaLong, oneOf, readKey, readKeys } from '../config/index.js';
import { WRITE_KEYS } from '../writer/write-config.js';

export const TRIGGER_STRATEGIES = ['NUM_COMMITS', 'NUM_COMMITS_AFTER_LAST_REQUEST', 'TIME_ELAPSED', 'NUM_AND_TIME', 'NUM_OR_TIME'] as const;
export type CompactionTriggerStrategy = (typeof TRIGGER_STRATEGIES)[number];

export const LOG_FILE_SIZE_STRATEGY = 'org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy';
export const COMPACTION_STRATEGIES = [LOG_FILE_SIZE_STRATEGY] as const;

export interface CompactionConfig {
  readonly triggerStrategy: CompactionTriggerStrategy;
  /** Delta commits since the last compaction before one is scheduled (NUM_* strategies). */
  readonly maxDeltaCommits: number;
  /** Seconds since the last compaction before one is scheduled (TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME). */
  readonly maxDeltaSeconds: number;
  readonly strategy: string;
  /** MB of IO (base + log read, base written) a plan takes at most (the slice that crosses it is still taken). */
  readonly targetIoMb: number;
  /** Slices with fewer log bytes are left out of the plan. */
  readonly logFileSizeThreshold: number;
  /** The write size a slice without a base file is assumed to have (hoodie.parquet.max.file.size). */
  readonly maxBaseFileSize: number;
}

export const COMPACTION_KEYS = {
  triggerStrategy: defineKey({
    key: 'hoodie.compact.inline.trigger.strategy',
    default: 'NUM_COMMITS' as CompactionTriggerStrategy,
    parser: oneOf(TRIGGER_STRATEGIES),
    description: `when to schedule a compaction: ${TRIGGER_STRATEGIES.join(', ')}`,
  }),
  maxDeltaCommits: defineKey({
    key: 'hoodie.compact.inline.max.delta.commits',
    default: 5,
    parser: javaInt(1),
    description: 'delta commits since the last compaction before another is scheduled (NUM_* trigger strategies)',
  }),
  maxDeltaSeconds: defineKey({
    key: 'hoodie.compact.inline.max.delta.seconds',
    default: 3600,
    parser: javaInt(0),
    description: 'seconds since the last compaction before another is scheduled (TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME)',
  }),
  strategy: defineKey({
    key: 'hoodie.compaction.strategy',
    default: LOG_FILE_SIZE_STRATEGY as string,
    parser: oneOf(COMPACTION_STRATEGIES, { exactCase: true }),
    description: 'which file slices a compaction plan takes: LogFileSizeBasedCompactionStrategy (most log bytes first, bounded by hoodie.compaction.target.io)',
  }),
  targetIoMb: defineKey({
    key: 'hoodie.compaction.target.io',
    default: 500 * 1024,
    parser: javaLong(1),
    description: 'MB of IO a compaction plan takes at most (base + logs read, base written)',
  }),
  logFileSizeThreshold: defineKey({
    key: 'hoodie.compaction.logfile.size.threshold',
    default: 0,
    parser: javaLong(0),
    description: 'slices with fewer log-file bytes are not compacted',
  }),
} as const;

export function compactionConfigFrom(props: ReadonlyMap<string, string>, location: string): CompactionConfig {
  return { ...readKeys(props, COMPACTION_KEYS, location), maxBaseFileSize: readKey(props, WRITE_KEYS.maxFileSize, location) };
}
