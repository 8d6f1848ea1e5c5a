/**
 * The records of a file slice's log files, as Hudi 0.15's HoodieMergedLogRecordScanner (scanInternalV1, lazy block
 * reading) finds them: blocks are read in log order and queued; a data or delete block counts only when its
 * INSTANT_TIME is a completed write (commit, deltacommit, replacecommit) or older than the first one, and not an
 * inflight one; a block newer than the query instant ends the scan; a rollback command block removes the queued
 * blocks of its target instant from the end of the queue (and torn, corrupt blocks there); then the queued blocks are
 * merged in order, corrupt ones skipped.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParquetEngine } from '../engine/port.js';
import type { Row } from '../engine/row-format.js';
import { HudiError } from '../errors.js';
import {
  iterateLogBlocks,
  type LogBlock,
  type LogFile,
  readAvroDataBlock,
  readCommandBlock,
  readDeleteBlock,
  UnsupportedLogBlockError,
} from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import { compareInstantTimes } from '../timeline/instant.js';
import { type Timeline, WRITE_ACTIONS } from '../timeline/timeline.js';
import { type AvroSchemaJson, avroRecordToRow, recordFieldNames } from './avro-rows.js';
import { type LogRecord, mergeLogRecords, orderingOf } from './payload-merge.js';

/** Which instants' blocks count: built once per read from the table's active timeline. */
export interface LogBlockFilter {
  /** Blocks newer than this end the scan (the query instant), or are skipped (timeline layout 2, as Hudi 1.x). */
  readonly latestInstant: string;
  readonly newerBlocks: 'stop' | 'skip';
  counts(instantTime: string): boolean;
}

export function logBlockFilter(timeline: Timeline, latestInstant: string): LogBlockFilter {
  const writes = timeline.instants.filter((i) => WRITE_ACTIONS.has(i.action));
  const completed = new Set(writes.filter((i) => i.state === 'COMPLETED').map((i) => i.time));
  const inflight = new Set(writes.filter((i) => i.state === 'INFLIGHT').map((i) => i.time));
  const first = writes.find((i) => i.state === 'COMPLETED')?.time;
  return {
    latestInstant,
    newerBlocks: timeline.layout.newerLogBlock,
    counts: (time) => (completed.has(time) || (first !== undefined && compareInstantTimes(time, first) < 0)) && !inflight.has(time),
  };
}

export interface ScannedLogRecords {
  /** The merged log record of each key. */
  readonly records: Map<string, LogRecord>;
  /** Columns of the data blocks' schemas, in schema order (first seen first). */
  readonly columns: string[];
}

export interface ScanOptions {
  readonly filter: LogBlockFilter;
  readonly precombineField: string | undefined;
  /** Hudi 1.x's EVENT_TIME_ORDERING delete rule (payload-merge.ts RecordMerge.eventTimeDeletes). */
  readonly eventTimeDeletes?: boolean;
  /** Decodes Parquet data blocks. */
  readonly engine: ParquetEngine;
}

export async function scanLogRecords(storage: Storage, logFiles: readonly LogFile[], options: ScanOptions): Promise<ScannedLogRecords> {
  const queue: { block: LogBlock; location: string }[] = [];
  scan: for (const file of logFiles) {
    const location = storage.uriOf(file.path);
    for (const block of iterateLogBlocks(await storage.get(file.path), location)) {
      const time = block.header.INSTANT_TIME;
      if (block.type !== 'CORRUPT_BLOCK') {
        if (time === undefined)
          throw new HudiError(`log block at offset ${block.offset} has no INSTANT_TIME header`, {
            location,
            fix: 'the log file is corrupt; restore it or roll back its instant',
          });
        if (compareInstantTimes(time, options.filter.latestInstant) > 0) {
          // Hudi 1.x skips only data and delete blocks newer than the query instant; command blocks still apply.
          if (options.filter.newerBlocks === 'stop') break scan;
          if (block.type !== 'COMMAND_BLOCK') continue;
        }
        if (block.header.IS_PARTIAL === 'true') {
          throw new UnsupportedLogBlockError(`log block at offset ${block.offset} holds partial updates (IS_PARTIAL), which this build does not merge`, {
            location,
            fix: 'compact the table with Hudi, or read it with Hudi',
          });
        }
      }
      if (block.type === 'COMMAND_BLOCK') {
        const command = readCommandBlock(block, location);
        while (queue.length > 0) {
          const last = queue[queue.length - 1]!.block;
          if (last.type !== 'CORRUPT_BLOCK' && last.header.INSTANT_TIME !== command.targetInstantTime) break;
          queue.pop();
        }
        continue;
      }
      if (block.type !== 'CORRUPT_BLOCK' && !options.filter.counts(time!)) continue;
      queue.push({ block, location });
    }
  }
  const records = new Map<string, LogRecord>();
  const columns: string[] = [];
  const addColumns = (names: readonly string[]) => {
    for (const name of names) if (!columns.includes(name)) columns.push(name);
  };
  const addRow = (row: Row, location: string) => {
    const key = row['_hoodie_record_key'];
    if (typeof key !== 'string') {
      throw new HudiError('a log record has no _hoodie_record_key', {
        location,
        fix: 'merge-on-read tables without meta fields (hoodie.populate.meta.fields=false) are not readable by this build',
      });
    }
    records.set(key, mergeLogRecords(records.get(key), { kind: 'data', row, ordering: orderingOf(row, options.precombineField) }, options.eventTimeDeletes));
  };
  for (const { block, location } of queue) {
    switch (block.type) {
      case 'AVRO_DATA_BLOCK': {
        const schema = JSON.parse(block.header.SCHEMA ?? 'null') as AvroSchemaJson;
        addColumns(recordFieldNames(schema));
        for (const value of readAvroDataBlock(block, { wrapUnions: true, longs: 'bigint', location })) addRow(avroRecordToRow(schema, value), location);
        break;
      }
      case 'PARQUET_DATA_BLOCK': {
        const rows = await parquetBlockRows(block, options.engine);
        addColumns(rows.columns);
        for (const row of rows.rows) addRow(row, location);
        break;
      }
      case 'DELETE_BLOCK':
        for (const deleted of readDeleteBlock(block, location)) {
          if (deleted.recordKey === null) continue;
          records.set(
            deleted.recordKey,
            mergeLogRecords(records.get(deleted.recordKey), { kind: 'delete', ordering: deleted.orderingValue }, options.eventTimeDeletes),
          );
        }
        break;
      case 'CORRUPT_BLOCK':
        break;
      default:
        throw new UnsupportedLogBlockError(`log block at offset ${block.offset} is a ${block.type}, which this build does not read in data tables`, {
          location,
          fix: 'compact the table with Hudi, or write its logs with hoodie.logfile.data.block.format=avro (the default)',
        });
    }
  }
  return { records, columns };
}

/** A Parquet data block's content is a whole Parquet file: read it through the engine from a temp file. */
async function parquetBlockRows(block: LogBlock, engine: ParquetEngine) {
  const dir = await mkdtemp(join(tmpdir(), 'hudi-parquet-block-'));
  try {
    const file = join(dir, 'block.parquet');
    await writeFile(file, block.content);
    return await engine.readRows([file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
