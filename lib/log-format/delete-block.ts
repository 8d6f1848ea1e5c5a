/**
 * DELETE_BLOCK content (HoodieDeleteBlock.getContentBytes):
 *
 *   int32 version   int32 length   `length` bytes of serialized DeleteRecords
 *
 * Version 3 (what Hudi 0.14/0.15 write) serializes one Avro HoodieDeleteRecordList datum (serializeV3). Versions 1
 * (HoodieKey[]) and 2 (DeleteRecord[]) were Kryo-serialized Java objects (SerializationUtils); Hudi 0.15 still reads
 * them, this build does not.
 *
 * Each record's ordering value sits in a union of single-field wrapper records (HoodieAvroUtils.wrapValueIntoAvro),
 * so a date and an int, or a timestamp and a long, are told apart by the branch.
 */

import { avroType, decodeDatum, encodeDatum } from './avro.js';
import type { LogBlock, LogBlockHeader, LogBlockInput } from './block.js';
import { ByteReader, ByteWriter } from './bytes.js';
import { LOG_BLOCK_CONTENT_VERSION } from './data-block.js';
import { LogFormatError, UnsupportedLogBlockError } from './errors.js';
import { type AvroWrappedValue, unwrapValue, VALUE_WRAPPERS, WRAPPER_NAMESPACE, type WrappedValue, wrapValue } from './value-wrappers.js';

/** An ordering (precombine) value, tagged with the wrapper Hudi stores it in. */
export type OrderingValue = WrappedValue;

/** org.apache.hudi.common.model.DeleteRecord. */
export interface DeleteRecord {
  readonly recordKey: string | null;
  readonly partitionPath: string | null;
  /** Null when the writer had none. Spark datasource deletes carry Hudi's default ordering value, int 0. */
  readonly orderingValue: OrderingValue | null;
}

/** The ordering value Hudi's deletes carry when they have none of their own: EmptyHoodieRecordPayload's, int 0. */
export const EMPTY_PAYLOAD_ORDERING_VALUE = { type: 'int', value: 0 } as const satisfies OrderingValue;

const NS = WRAPPER_NAMESPACE;

const JAVA_STRING = { type: 'string', 'avro.java.string': 'String' };

/**
 * HoodieDeleteRecordList as compiled into Hudi 0.14/0.15 (docs left out; the union branch order is what matters).
 */
export const HOODIE_DELETE_RECORD_LIST_SCHEMA = {
  type: 'record',
  name: 'HoodieDeleteRecordList',
  namespace: NS,
  fields: [
    {
      name: 'deleteRecordList',
      type: {
        type: 'array',
        items: {
          type: 'record',
          name: 'HoodieDeleteRecord',
          fields: [
            { name: 'recordKey', type: ['null', JAVA_STRING], default: null },
            { name: 'partitionPath', type: ['null', JAVA_STRING], default: null },
            {
              name: 'orderingVal',
              type: ['null', ...VALUE_WRAPPERS.map(([name, , value]) => ({ type: 'record', name, fields: [{ name: 'value', type: value }] }))],
              default: null,
            },
          ],
        },
      },
    },
  ],
} as const;

// Wrapped unions: a date and an int wrapper hold the same Avro int, only the branch tells them apart.
const listType = () => avroType(HOODIE_DELETE_RECORD_LIST_SCHEMA, { wrapUnions: true, longs: 'bigint' }, 'HoodieDeleteRecordList schema');

type WrappedString = { string: string } | null;
type WrappedOrdering = AvroWrappedValue | null;
interface AvroDeleteRecord {
  recordKey: WrappedString;
  partitionPath: WrappedString;
  orderingVal: WrappedOrdering;
}

/** Content of a version-3 delete block. */
export function encodeDeleteBlockContent(records: readonly DeleteRecord[]): Uint8Array {
  const list = {
    deleteRecordList: records.map(
      (record): AvroDeleteRecord => ({
        recordKey: record.recordKey === null ? null : { string: record.recordKey },
        partitionPath: record.partitionPath === null ? null : { string: record.partitionPath },
        orderingVal: record.orderingValue === null ? null : wrapValue(record.orderingValue),
      }),
    ),
  };
  const serialized = encodeDatum(listType(), list, 'delete block records');
  return new ByteWriter().int32(LOG_BLOCK_CONTENT_VERSION).int32(serialized.length).bytes(serialized).toBytes();
}

/** The DeleteRecords of a delete block's content. Throws UnsupportedLogBlockError for Kryo versions 1 and 2. */
export function decodeDeleteBlockContent(content: Uint8Array, location?: string): DeleteRecord[] {
  const where = location === undefined ? {} : { location };
  const reader = new ByteReader(content);
  const version = reader.int32();
  const length = reader.int32();
  const serialized = length === undefined ? undefined : reader.take(length);
  if (version === undefined || serialized === undefined) {
    throw new LogFormatError(`delete block content of ${content.length} bytes is cut short`, where);
  }
  if (version === 1 || version === 2) {
    throw new UnsupportedLogBlockError(`delete block version ${version} holds Kryo-serialized Java objects, which this build does not read`, {
      ...where,
      fix: 'compact the file slice with Hudi, which rewrites its deletes',
    });
  }
  if (version !== LOG_BLOCK_CONTENT_VERSION) throw new LogFormatError(`delete block version ${version} is not 1..3`, where);
  if (reader.remaining !== 0) throw new LogFormatError(`${reader.remaining} bytes after the delete records`, where);
  const list = decodeDatum(listType(), serialized, undefined, 'delete block records') as { deleteRecordList: AvroDeleteRecord[] };
  return list.deleteRecordList.map((record) => ({
    recordKey: record.recordKey?.string ?? null,
    partitionPath: record.partitionPath?.string ?? null,
    orderingValue: unwrapValue(record.orderingVal, (branch) => new LogFormatError(`delete record ordering value branch ${branch} is unknown`)),
  }));
}

/** A delete block, as HoodieAppendHandle writes one per instant and file group. */
export function deleteBlock(options: { instantTime: string; records: readonly DeleteRecord[]; header?: LogBlockHeader }): LogBlockInput {
  return { type: 'DELETE_BLOCK', header: { ...options.header, INSTANT_TIME: options.instantTime }, content: encodeDeleteBlockContent(options.records) };
}

/** The records of a read DELETE_BLOCK. */
export function readDeleteBlock(block: LogBlock, location?: string): DeleteRecord[] {
  if (block.type !== 'DELETE_BLOCK') {
    throw new UnsupportedLogBlockError(`block at offset ${block.offset} is a ${block.type}, not a DELETE_BLOCK`, location === undefined ? {} : { location });
  }
  return decodeDeleteBlockContent(block.content, location);
}
