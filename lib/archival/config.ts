/**
 * Archiver settings from Hudi's own keys with Hudi's defaults (HoodieArchivalConfig; 0.15's, and 1.x's one more key
 * for its timeline history). The merge and batch keys are 0.x's archive log files' and play no part in layout 2.
 */

import { COMPACTION_KEYS, type CompactionTriggerStrategy } from '../compaction/config.js';
import { bool, defineKey, javaInt, javaLong, readKey, readKeys } from '../config/index.js';
import { HudiError } from '../errors.js';

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

export const ARCHIVAL_KEYS = {
  minCommits: defineKey({
    key: 'hoodie.keep.min.commits',
    default: 20,
    parser: javaInt(1),
    description: 'completed commits kept on the active timeline when archiving',
  }),
  maxCommits: defineKey({
    key: 'hoodie.keep.max.commits',
    default: 30,
    parser: javaInt(1),
    description: 'archive once more completed commits than this are on the active timeline',
  }),
  automatic: defineKey({ key: 'hoodie.archive.automatic', default: true, parser: bool, description: 'archive after each commit' }),
  async: defineKey({ key: 'hoodie.archive.async', default: false, parser: bool, description: 'with automatic: archive alongside the writes' }),
  recordsPerBlock: defineKey({
    key: 'hoodie.commits.archival.batch',
    default: 10,
    parser: javaInt(1),
    description: 'archived instant records per Avro data block',
  }),
  mergeEnable: defineKey({
    key: 'hoodie.archive.merge.enable',
    default: false,
    parser: bool,
    description: 'merge small archive files into one (storage without append)',
  }),
  mergeSmallFileLimitBytes: defineKey({
    key: 'hoodie.archive.merge.small.file.limit.bytes',
    default: 20 * 1024 * 1024,
    parser: javaLong(0),
    description: 'archive files up to this size are merge candidates',
  }),
  mergeFilesBatchSize: defineKey({
    key: 'hoodie.archive.merge.files.batch.size',
    default: 10,
    parser: javaInt(1),
    description: 'merge when at least this many of the newest archive files are small',
  }),
  beyondSavepoint: defineKey({
    key: 'hoodie.archive.beyond.savepoint',
    default: false,
    parser: bool,
    description: 'archive past savepoints, keeping only the savepointed commits',
  }),
  deleteParallelism: defineKey({
    key: 'hoodie.archive.delete.parallelism',
    default: 100,
    parser: javaInt(1),
    description: 'archived instant files deleted at once',
  }),
  timelineCompactionBatchSize: defineKey({
    key: 'hoodie.timeline.compaction.batch.size',
    default: 10,
    // One file alone is never compacted (LSMTimelineWriter needs two candidates): 1 would only look like a setting.
    parser: javaInt(2),
    description: 'Hudi 1.x timeline history: files of one level compacted into one file a level up',
  }),
} as const;

export function archivalConfigFromProperties(props: ReadonlyMap<string, string>, location = 'archive properties'): ArchivalConfig {
  const config = {
    ...readKeys(props, ARCHIVAL_KEYS, location),
    compactionTriggerStrategy: readKey(props, COMPACTION_KEYS.triggerStrategy, location),
    compactionMaxDeltaCommits: readKey(props, COMPACTION_KEYS.maxDeltaCommits, location),
  };
  // HoodieWriteConfig's check.
  if (config.maxCommits <= config.minCommits) {
    const k = ARCHIVAL_KEYS;
    throw new HudiError(`${k.maxCommits.key}=${config.maxCommits} must be greater than ${k.minCommits.key}=${config.minCommits}`, {
      location,
      fix: `increase ${k.maxCommits.key} above ${config.minCommits}`,
    });
  }
  return Object.freeze(config);
}

export const DEFAULT_ARCHIVAL_CONFIG: ArchivalConfig = archivalConfigFromProperties(new Map());
