/**
 * Archiver settings from Hudi's own keys with Hudi's defaults (HoodieArchivalConfig; 0.15's, and 1.x's one more key
 * for its timeline history). The merge and batch keys are 0.x's archive log files' and play no part in layout 2.
 */

import { ARCHIVAL_KEYS, assertKeepCommits } from '../archiver/config.js';
import { COMPACTION_KEYS, type CompactionTriggerStrategy } from '../compaction/config.js';
import { readKey, readKeys } from '../config/index.js';

export { ARCHIVAL_KEYS };

export interface ArchivalConfig {
  /** hoodie.keep.min.commits: completed commits left on the active timeline after archiving. */
  readonly minCommits: number;
  /** hoodie.keep.max.commits: archiving starts once more completed commits than this are active. */
  readonly maxCommits: number;
  /** Writers archive after each commit (later: start the archive service). */
  readonly automatic: boolean;
  readonly async: boolean;
  /** Archived records per Avro data block (hoodie.commits.archival.batch). */
  readonly recordsPerBlock: number;
  /** Merge small archive files (only on storage without append, which is all this service writes to). */
  readonly mergeEnable: boolean;
  readonly mergeSmallFileLimitBytes: number;
  /** Merge once at least this many small archive files are newest. */
  readonly mergeFilesBatchSize: number;
  /** Archive past savepoints, keeping the savepointed commits active. */
  readonly beyondSavepoint: boolean;
  /** Instant file deletions in flight at once. */
  readonly deleteParallelism: number;
  /** Hudi 1.x (timeline layout 2): a level of the LSM history with this many files is compacted a level up. */
  readonly timelineCompactionBatchSize: number;
  /**
   * Merge-on-read: the compaction trigger (hoodie.compact.inline.trigger.strategy, max.delta.commits). With NUM_COMMITS
   * or NUM_AND_TIME the archiver keeps the delta commits the next compaction's schedule counts.
   */
  readonly compactionTriggerStrategy: CompactionTriggerStrategy;
  readonly compactionMaxDeltaCommits: number;
}

export function archivalConfigFromProperties(props: ReadonlyMap<string, string>, location = 'archive properties'): ArchivalConfig {
  const config = {
    ...readKeys(props, ARCHIVAL_KEYS, location),
    compactionTriggerStrategy: readKey(props, COMPACTION_KEYS.triggerStrategy, location),
    compactionMaxDeltaCommits: readKey(props, COMPACTION_KEYS.maxDeltaCommits, location),
  };
  assertKeepCommits(config, location);
  return Object.freeze(config);
}

export const DEFAULT_ARCHIVAL_CONFIG: ArchivalConfig = archivalConfigFromProperties(new Map());
