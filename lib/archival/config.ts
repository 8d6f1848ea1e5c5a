/**
 * Archiver settings from Hudi's own keys with Hudi 0.15's defaults (HoodieArchivalConfig).
 */
import { HudiError } from '../errors.js';
import { booleanOf, integerOf } from '../cleaning/config.js';

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
}

export const ARCHIVAL_KEYS = {
  minCommits: { key: 'hoodie.keep.min.commits', default: 20, description: 'completed commits kept on the active timeline when archiving' },
  maxCommits: { key: 'hoodie.keep.max.commits', default: 30, description: 'archive once more completed commits than this are on the active timeline' },
  automatic: { key: 'hoodie.archive.automatic', default: true, description: 'archive after each commit' },
  async: { key: 'hoodie.archive.async', default: false, description: 'with automatic: archive alongside the writes' },
  recordsPerBlock: { key: 'hoodie.commits.archival.batch', default: 10, description: 'archived instant records per Avro data block' },
  mergeEnable: { key: 'hoodie.archive.merge.enable', default: false, description: 'merge small archive files into one (storage without append)' },
  mergeSmallFileLimitBytes: { key: 'hoodie.archive.merge.small.file.limit.bytes', default: 20 * 1024 * 1024, description: 'archive files up to this size are merge candidates' },
  mergeFilesBatchSize: { key: 'hoodie.archive.merge.files.batch.size', default: 10, description: 'merge when at least this many of the newest archive files are small' },
  beyondSavepoint: { key: 'hoodie.archive.beyond.savepoint', default: false, description: 'archive past savepoints, keeping only the savepointed commits' },
  deleteParallelism: { key: 'hoodie.archive.delete.parallelism', default: 100, description: 'archived instant files deleted at once' },
} as const;

export function archivalConfigFromProperties(props: ReadonlyMap<string, string>, location = 'archive properties'): ArchivalConfig {
  const k = ARCHIVAL_KEYS;
  const minCommits = integerOf(props, k.minCommits.key, k.minCommits.default, location, 1);
  const maxCommits = integerOf(props, k.maxCommits.key, k.maxCommits.default, location, 1);
  // HoodieWriteConfig's check.
  if (maxCommits <= minCommits) {
    throw new HudiError(`${k.maxCommits.key}=${maxCommits} must be greater than ${k.minCommits.key}=${minCommits}`, {
      location,
      fix: `increase ${k.maxCommits.key} above ${minCommits}`,
    });
  }
  return {
    minCommits,
    maxCommits,
    automatic: booleanOf(props, k.automatic.key, k.automatic.default, location),
    async: booleanOf(props, k.async.key, k.async.default, location),
    recordsPerBlock: integerOf(props, k.recordsPerBlock.key, k.recordsPerBlock.default, location, 1),
    mergeEnable: booleanOf(props, k.mergeEnable.key, k.mergeEnable.default, location),
    mergeSmallFileLimitBytes: integerOf(props, k.mergeSmallFileLimitBytes.key, k.mergeSmallFileLimitBytes.default, location, 0),
    mergeFilesBatchSize: integerOf(props, k.mergeFilesBatchSize.key, k.mergeFilesBatchSize.default, location, 1),
    beyondSavepoint: booleanOf(props, k.beyondSavepoint.key, k.beyondSavepoint.default, location),
    deleteParallelism: integerOf(props, k.deleteParallelism.key, k.deleteParallelism.default, location, 1),
  };
}

export const DEFAULT_ARCHIVAL_CONFIG: ArchivalConfig = archivalConfigFromProperties(new Map());
