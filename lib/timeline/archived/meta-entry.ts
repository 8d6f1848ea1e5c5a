/**
 * HoodieArchivedMetaEntry: one record per archived instant file (each state of an instant), as Hudi 0.15's
 * MetadataConversionUtils.createMetaWrapper builds it from the active timeline file, and as the archived timeline's
 * Avro data blocks hold it. The writer schema is the one Hudi 0.15's archiver puts in every block's SCHEMA header
 * (HoodieArchivedMetaEntry.getClassSchema(), kept verbatim in hoodie-archived-meta-entry.avsc.json).
 */
import { HudiError } from '../../errors.js';
import { avroType } from '../../log-format/avro.js';
import { decodeRequestedReplaceMetadata, decodeTimelineAvro } from '../avro-files.js';
import { formatInstantTime, type Instant, type TimelineTimeZone } from '../instant.js';
import SCHEMA from './hoodie-archived-meta-entry.avsc.json' with { type: 'json' };

/** The schema as Java prints it (compact JSON): the SCHEMA header of Hudi 0.15's archive blocks. */
export const ARCHIVED_META_ENTRY_SCHEMA_TEXT: string = JSON.stringify(SCHEMA);
export const ARCHIVED_META_ENTRY_SCHEMA: object = SCHEMA;

/** MetadataConversionUtils.convertCommitMetadata adds this key (emptied) to every archived commit's extraMetadata. */
export const ROLLING_STAT_KEY = 'ROLLING_STAT';

/** The record, loosely typed: its nested metadata records follow Hudi's Avro schemas. */
export interface ArchivedMetaEntry {
  hoodieCommitMetadata: Record<string, unknown> | null;
  hoodieCleanMetadata: Record<string, unknown> | null;
  hoodieCompactionMetadata: Record<string, unknown> | null;
  hoodieRollbackMetadata: Record<string, unknown> | null;
  hoodieSavePointMetadata: Record<string, unknown> | null;
  commitTime: string | null;
  actionType: string | null;
  version: number | null;
  hoodieCompactionPlan: Record<string, unknown> | null;
  hoodieCleanerPlan: Record<string, unknown> | null;
  actionState: string | null;
  hoodieReplaceCommitMetadata: Record<string, unknown> | null;
  hoodieRequestedReplaceMetadata: Record<string, unknown> | null;
  HoodieInflightReplaceMetadata: Record<string, unknown> | null;
  hoodieIndexCommitMetadata: Record<string, unknown> | null;
  stateTransitionTime: string | null;
}

function emptyEntry(instant: Instant, stateTransitionTime: string): ArchivedMetaEntry {
  return {
    hoodieCommitMetadata: null,
    hoodieCleanMetadata: null,
    hoodieCompactionMetadata: null,
    hoodieRollbackMetadata: null,
    hoodieSavePointMetadata: null,
    commitTime: instant.time,
    actionType: instant.action,
    // The generated class's no-argument constructor leaves version unset (null), as Hudi writes it.
    version: null,
    hoodieCompactionPlan: null,
    hoodieCleanerPlan: null,
    actionState: instant.state,
    hoodieReplaceCommitMetadata: null,
    hoodieRequestedReplaceMetadata: null,
    HoodieInflightReplaceMetadata: null,
    hoodieIndexCommitMetadata: null,
    stateTransitionTime,
  };
}

export interface ActiveInstantFile {
  readonly instant: Instant;
  /** The file's bytes. */
  readonly bytes: Uint8Array;
  /** Its last modification (HoodieInstant.getStateTransitionTime formats it on the timeline's clock). */
  readonly modifiedMs: number;
  /** Names the file in errors. */
  readonly location: string;
}

/** createMetaWrapper: the archived record of one active timeline file. */
export function archivedMetaEntryOf(file: ActiveInstantFile, zone: TimelineTimeZone): ArchivedMetaEntry {
  const { instant, bytes, location } = file;
  const entry = emptyEntry(instant, formatInstantTime(new Date(file.modifiedMs), zone));
  // A completed instant with an empty file (an empty commit) keeps only its name.
  if (instant.state === 'COMPLETED' && bytes.length === 0) return entry;
  switch (instant.action) {
    case 'clean':
      if (instant.state === 'COMPLETED') entry.hoodieCleanMetadata = record(decodeTimelineAvro('cleanMetadata', bytes, location));
      else if (bytes.length > 0) entry.hoodieCleanerPlan = record(decodeTimelineAvro('cleanerPlan', bytes, location));
      return entry;
    case 'commit':
    case 'deltacommit':
      entry.hoodieCommitMetadata = avroCommitMetadata(bytes, location, false);
      return entry;
    case 'replacecommit':
      if (instant.state === 'COMPLETED') entry.hoodieReplaceCommitMetadata = avroCommitMetadata(bytes, location, true);
      else if (instant.state === 'INFLIGHT') entry.HoodieInflightReplaceMetadata = bytes.length === 0 ? null : avroCommitMetadata(bytes, location, false);
      else entry.hoodieRequestedReplaceMetadata = bytes.length === 0 ? null : record(decodeRequestedReplaceMetadata(bytes, location));
      return entry;
    case 'rollback':
      if (instant.state === 'COMPLETED') entry.hoodieRollbackMetadata = record(decodeTimelineAvro('rollbackMetadata', bytes, location));
      return entry;
    case 'compaction':
    case 'logcompaction':
      // MetadataConversionUtils: the requested record carries the plan (its own bytes); the inflight one none.
      if (instant.state === 'REQUESTED') entry.hoodieCompactionPlan = record(decodeTimelineAvro('compactionPlan', bytes, location));
      return entry;
    default:
      throw new HudiError(
        `archiving ${instant.action} instants is not supported (only commits, delta commits, compactions, replacecommits, cleans and rollbacks are archived)`,
        {
          location,
        },
      );
  }
}

function record(value: object): Record<string, unknown> {
  return value as Record<string, unknown>;
}

const WRITE_STAT_FIELDS = [
  'fileId',
  'path',
  'prevCommit',
  'numWrites',
  'numDeletes',
  'numUpdateWrites',
  'totalWriteBytes',
  'totalWriteErrors',
  'partitionPath',
  'totalLogRecords',
  'totalLogFiles',
  'totalUpdatedRecordsCompacted',
  'numInserts',
  'totalLogBlocks',
  'totalCorruptLogBlock',
  'totalRollbackBlocks',
  'fileSizeInBytes',
] as const;

/**
 * convertCommitMetadata / ReplaceArchivalHelper.convertReplaceCommitMetadata: the commit JSON read into the Avro
 * HoodieCommitMetadata (or HoodieReplaceCommitMetadata) by property name, as Jackson's convertValue does — fields the
 * JSON lacks are null — with ROLLING_STAT emptied in extraMetadata and COMPACT for compacted commits.
 */
export function avroCommitMetadata(bytes: Uint8Array, location: string, replace: boolean): Record<string, unknown> {
  const text = Buffer.from(bytes).toString('utf8');
  let json: Record<string, unknown> = {};
  if (text.trim() !== '') {
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch (cause) {
      throw new HudiError('instant file is not commit JSON', { location, cause });
    }
  }
  const partitionToWriteStats: Record<string, Record<string, unknown>[]> = {};
  for (const [partition, stats] of Object.entries((json['partitionToWriteStats'] ?? {}) as Record<string, Record<string, unknown>[]>)) {
    partitionToWriteStats[partition] = stats.map((stat) => Object.fromEntries(WRITE_STAT_FIELDS.map((field) => [field, stat[field] ?? null])));
  }
  const extraMetadata = { ...((json['extraMetadata'] ?? {}) as Record<string, string>), [ROLLING_STAT_KEY]: '' };
  // HoodieCommitMetadata starts with operationType UNKNOWN: what an empty file or JSON without the field reads as.
  let operationType = 'operationType' in json ? (json['operationType'] as string | null) : 'UNKNOWN';
  if (!replace && json['compacted'] === true) operationType = 'COMPACT';
  const out: Record<string, unknown> = { partitionToWriteStats, extraMetadata, version: null, operationType };
  if (replace) out['partitionToReplaceFileIds'] = (json['partitionToReplaceFileIds'] ?? {}) as Record<string, string[]>;
  return out;
}

/** The avsc type of our writer schema (numbers for longs: instant metadata holds no long beyond 2^53). */
export function archivedMetaEntryType() {
  return avroType(ARCHIVED_META_ENTRY_SCHEMA_TEXT, {}, 'HoodieArchivedMetaEntry schema');
}
