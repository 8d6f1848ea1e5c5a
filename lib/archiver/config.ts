/**
 * The archiver's keys with Hudi's defaults (HoodieArchivalConfig; 0.15's, and 1.x's one more key for its timeline
 * history), defined here, below the metadata table, which reads them for its own archival (keep.min/max + 1);
 * lib/archival/config.ts reads the data table's archival config from them.
 */
import { bool, defineKey, javaInt, javaLong } from '../config/index.js';
import { HudiError } from '../errors.js';

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

/** HoodieWriteConfig's check: keep.max.commits above keep.min.commits. */
export function assertKeepCommits(config: { readonly minCommits: number; readonly maxCommits: number }, location: string): void {
  if (config.maxCommits > config.minCommits) return;
  const k = ARCHIVAL_KEYS;
  throw new HudiError(`${k.maxCommits.key}=${config.maxCommits} must be greater than ${k.minCommits.key}=${config.minCommits}`, {
    location,
    fix: `increase ${k.maxCommits.key} above ${config.minCommits}`,
  });
}
