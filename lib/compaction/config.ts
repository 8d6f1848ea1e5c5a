/**
 * Compaction settings of merge-on-read tables, from Hudi's own keys with Hudi 0.15's defaults (HoodieCompactionConfig,
 * HoodieStorageConfig): when a compaction is scheduled (trigger strategy, delta commits, elapsed time) and what its
 * plan takes (LogFileSizeBasedCompactionStrategy: slices with the most log bytes first, up to the target IO).
 */
import { HudiError } from '../errors.js';
import { integerOf } from '../cleaning/config.js';
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
  triggerStrategy: { key: 'hoodie.compact.inline.trigger.strategy', default: 'NUM_COMMITS', description: `when to schedule a compaction: ${TRIGGER_STRATEGIES.join(', ')}` },
  maxDeltaCommits: { key: 'hoodie.compact.inline.max.delta.commits', default: 5, description: 'delta commits since the last compaction before another is scheduled (NUM_* trigger strategies)' },
  maxDeltaSeconds: { key: 'hoodie.compact.inline.max.delta.seconds', default: 3600, description: 'seconds since the last compaction before another is scheduled (TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME)' },
  strategy: { key: 'hoodie.compaction.strategy', default: LOG_FILE_SIZE_STRATEGY, description: 'which file slices a compaction plan takes: LogFileSizeBasedCompactionStrategy (most log bytes first, bounded by hoodie.compaction.target.io)' },
  targetIoMb: { key: 'hoodie.compaction.target.io', default: 500 * 1024, description: 'MB of IO a compaction plan takes at most (base + logs read, base written)' },
  logFileSizeThreshold: { key: 'hoodie.compaction.logfile.size.threshold', default: 0, description: 'slices with fewer log-file bytes are not compacted' },
} as const;

export function compactionConfigFrom(props: ReadonlyMap<string, string>, location: string): CompactionConfig {
  const k = COMPACTION_KEYS;
  const triggerText = (props.get(k.triggerStrategy.key) ?? k.triggerStrategy.default).trim().toUpperCase();
  if (!(TRIGGER_STRATEGIES as readonly string[]).includes(triggerText)) {
    throw new HudiError(`${k.triggerStrategy.key}=${props.get(k.triggerStrategy.key)} is not a compaction trigger strategy`, { location, fix: `use one of ${TRIGGER_STRATEGIES.join(', ')}` });
  }
  const strategy = (props.get(k.strategy.key) ?? k.strategy.default).trim();
  if (!(COMPACTION_STRATEGIES as readonly string[]).includes(strategy)) {
    throw new HudiError(`${k.strategy.key}=${strategy} is not supported`, { location, fix: `use ${LOG_FILE_SIZE_STRATEGY} (Hudi's default), or compact with Hudi` });
  }
  return {
    triggerStrategy: triggerText as CompactionTriggerStrategy,
    maxDeltaCommits: integerOf(props, k.maxDeltaCommits.key, k.maxDeltaCommits.default, location, 1),
    maxDeltaSeconds: integerOf(props, k.maxDeltaSeconds.key, k.maxDeltaSeconds.default, location, 0),
    strategy,
    targetIoMb: integerOf(props, k.targetIoMb.key, k.targetIoMb.default, location, 1),
    logFileSizeThreshold: integerOf(props, k.logFileSizeThreshold.key, k.logFileSizeThreshold.default, location, 0),
    maxBaseFileSize: integerOf(props, WRITE_KEYS.maxFileSize.key, WRITE_KEYS.maxFileSize.default, location, 1),
  };
}
