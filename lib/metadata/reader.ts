/**
 * Reading metadata-table records as Hudi's HoodieBackedTableMetadata does: per file group, the latest file slice's
 * log blocks are scanned in order (HoodieMergedLogRecordScanner, blocks read lazily), then merged onto its HFile
 * base file. A data or delete block counts only when its INSTANT_TIME is a completed metadata-table instant (or one
 * older than the metadata timeline), not inflight, and a valid instant (completed on the data table, or one of the
 * metadata table's own); a rollback command block drops the queued blocks of its target instant; scanning stops at
 * a block newer than the latest completed metadata instant.
 */

import { HudiError } from '../errors.js';
import { readHudiHFile } from '../hfile/index.js';
import { iterateLogBlocks, type LogBlock, readAvroDataBlock, readCommandBlock, readDeleteBlock } from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import { compareInstantTimes } from '../timeline/instant.js';
import type { Timeline } from '../timeline/timeline.js';
import { decodeMetadataRecord, fromAvroValue } from './codec.js';
import type { MetadataFileGroup } from './file-groups.js';
import { type MergedRecord, mergeRecords } from './records.js';
import { metadataRecordTypeOf } from './schema.js';

export interface ReadContext {
  /** The metadata timeline (completed and inflight instants decide which blocks count). */
  readonly metadataTimeline: Timeline;
  /** getValidInstantTimestamps. */
  readonly validInstants: ReadonlySet<string>;
}

/** Every key of a file group's latest slice, merged (deleted keys come back as tombstones only if `keepDeleted`). */
export async function readFileGroup(
  storage: Storage,
  group: MetadataFileGroup,
  context: ReadContext,
  options: { keys?: ReadonlySet<string>; keepDeleted?: boolean } = {},
): Promise<Map<string, MergedRecord>> {
  const wanted = options.keys;
  const logRecords = await scanLogs(storage, group, context, wanted);
  const merged = new Map<string, MergedRecord>();
  if (group.latest.baseFile !== undefined) {
    const base = readHudiHFile(await storage.get(group.latest.baseFile.path));
    const type = metadataRecordTypeOf(base.schema ?? '');
    for (const record of base.records) {
      if (wanted !== undefined && !wanted.has(record.key)) continue;
      merged.set(record.key, decodeMetadataRecord(record.value, record.key, type));
    }
  }
  for (const [key, record] of logRecords) merged.set(key, mergeRecords(merged.get(key), record));
  if (!options.keepDeleted) for (const [key, record] of merged) if ('deleted' in record) merged.delete(key);
  return merged;
}

async function scanLogs(
  storage: Storage,
  group: MetadataFileGroup,
  context: ReadContext,
  wanted: ReadonlySet<string> | undefined,
): Promise<Map<string, MergedRecord>> {
  const completed = new Set(context.metadataTimeline.completed().map((i) => i.time));
  const inflight = new Set(context.metadataTimeline.pending().map((i) => i.time));
  const first = context.metadataTimeline.instants[0]?.time;
  const latest = context.metadataTimeline
    .completed()
    .map((i) => i.time)
    .sort(compareInstantTimes)
    .at(-1);
  const counts = (time: string | undefined): boolean => {
    if (time === undefined) return false;
    const committed = completed.has(time) || (first !== undefined && compareInstantTimes(time, first) < 0);
    return committed && !inflight.has(time) && context.validInstants.has(time);
  };
  const queue: LogBlock[] = [];
  scan: for (const file of group.latest.logFiles) {
    const bytes = await storage.get(file.path);
    for (const block of iterateLogBlocks(bytes, storage.uriOf(file.path))) {
      const time = block.header.INSTANT_TIME;
      if (block.type !== 'CORRUPT_BLOCK' && (latest === undefined || time === undefined || compareInstantTimes(time, latest) > 0)) break scan;
      if (block.type === 'COMMAND_BLOCK') {
        const command = readCommandBlock(block, storage.uriOf(file.path));
        for (let i = queue.length - 1; i >= 0; i--) {
          const queued = queue[i]!;
          if (queued.type === 'CORRUPT_BLOCK' || queued.header.INSTANT_TIME === command.targetInstantTime) queue.splice(i, 1);
        }
        continue;
      }
      if (block.type !== 'CORRUPT_BLOCK' && !counts(time)) continue;
      queue.push(block);
    }
  }
  const records = new Map<string, MergedRecord>();
  for (const block of queue) {
    switch (block.type) {
      case 'HFILE_DATA_BLOCK': {
        const hfile = readHudiHFile(block.content);
        const type = metadataRecordTypeOf(block.header.SCHEMA ?? hfile.schema ?? '');
        for (const record of hfile.records) {
          if (wanted !== undefined && !wanted.has(record.key)) continue;
          records.set(record.key, mergeRecords(records.get(record.key), decodeMetadataRecord(record.value, record.key, type)));
        }
        break;
      }
      case 'AVRO_DATA_BLOCK':
        for (const value of readAvroDataBlock(block, { wrapUnions: true, longs: 'bigint' }) as Record<string, unknown>[]) {
          const key = String(value['key']);
          if (wanted !== undefined && !wanted.has(key)) continue;
          records.set(key, mergeRecords(records.get(key), fromAvroValue(value, key)));
        }
        break;
      case 'DELETE_BLOCK':
        for (const deleted of readDeleteBlock(block)) {
          if (deleted.recordKey === null || (wanted !== undefined && !wanted.has(deleted.recordKey))) continue;
          records.set(deleted.recordKey, { key: deleted.recordKey, deleted: true });
        }
        break;
      case 'CORRUPT_BLOCK':
        break;
      default:
        throw new HudiError(`metadata-table log block of type ${block.type} is not readable here`, {
          location: storage.uriOf(group.latest.logFiles[0]?.path ?? ''),
          fix: 'compact the metadata table with Hudi',
        });
    }
  }
  return records;
}
