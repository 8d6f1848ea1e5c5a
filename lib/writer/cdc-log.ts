/**
 * The change data of a merge on a CDC table (copy-on-write, or a merge-on-read small file), as Hudi 0.15's
 * HoodieMergeHandleWithChangeLog and HoodieCDCLogger write it: per merged file group a `.cdc` log file of the new
 * slice (`.<fileId>_<commit>.log.1_<token>.cdc`, the merge's write token, its log marker first) holding one
 * CDC_DATA_BLOCK of change records in the table's supplemental logging mode
 * (HoodieCDCUtils.schemaBySupplementalLoggingMode); the write stat's cdcStats names it with its size. A merge that
 * wrote no row, or inserts only, writes none (HoodieMergeHandleWithChangeLog.close): Hudi's CDC reader takes such a
 * file group's changes from its base files. Merge-on-read log appends write none (the reader infers theirs).
 */
import { join } from 'node:path';
import { openParquetEngine } from '../engine/parquet-engine.js';
import type { ParquetEngine } from '../engine/port.js';
import type { Row } from '../engine/row-format.js';
import type { FileGroupWriteResult, WriteSession } from '../engine/write.js';
import { CDC_LOG_SUFFIX, cdcDataBlock, writeLogFile } from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import type { CdcLoggingMode } from '../table/layouts.js';
import { type AvroRecordSchema, withoutMetaFields } from '../table/schema.js';
import type { LogWrites } from '../timeline/layout.js';
import { createMarker } from '../timeline/markers.js';
import { rowToAvroRecord } from './avro-records.js';

/** HoodieCDCOperation: `i` a new record, `u` an old and a new one, `d` an old one deleted. */
export type CdcOperation = 'i' | 'u' | 'd';

export interface CdcChange {
  readonly op: CdcOperation;
  readonly recordKey: string;
  /** The stored row (meta columns are left out of the image). */
  readonly before: Row | undefined;
  readonly after: Row | undefined;
}

/** HoodieCDCUtils.CDC_SCHEMA_OP_AND_RECORDKEY: OP_KEY_ONLY's fixed schema. */
const OP_KEY_ONLY_SCHEMA = {
  type: 'record',
  name: 'Record',
  fields: [
    { name: 'op', type: ['string', 'null'] },
    { name: 'record_key', type: ['string', 'null'] },
  ],
} as const;

/**
 * The cdc log's record schema (HoodieCDCUtils.createCDCSchema): record `CDC` in the table schema's namespace, nullable
 * fields defaulting to null; images are the table schema without meta fields, written as Avro's Schema.toString writes
 * them inside `CDC` (no namespace of their own, the second by name).
 */
export function cdcSchema(mode: CdcLoggingMode, tableSchema: AvroRecordSchema): Record<string, unknown> {
  if (mode === 'OP_KEY_ONLY') return OP_KEY_ONLY_SCHEMA;
  const { namespace: _namespace, ...image } = withoutMetaFields(tableSchema);
  const dot = image.name.lastIndexOf('.');
  const namespace = dot >= 0 ? image.name.slice(0, dot) : tableSchema.namespace;
  const name = image.name.slice(dot + 1);
  const nullable = (type: unknown, field: string) => ({ name: field, type: ['null', type], doc: '', default: null });
  const fields =
    mode === 'DATA_BEFORE_AFTER'
      ? [nullable('string', 'op'), nullable('string', 'ts_ms'), nullable({ ...image, name }, 'before'), nullable(name, 'after')]
      : [nullable('string', 'op'), nullable('string', 'record_key'), nullable({ ...image, name }, 'before')];
  return { type: 'record', name: 'CDC', ...(namespace === undefined || namespace === '' ? {} : { namespace }), fields };
}

/** The change records of one file group, in the mode's schema (HoodieCDCLogger's transformer). */
export function cdcRecords(mode: CdcLoggingMode, instantTime: string, tableSchema: AvroRecordSchema, changes: readonly CdcChange[]): Record<string, unknown>[] {
  const image = withoutMetaFields(tableSchema);
  const avro = (row: Row | undefined) => (row === undefined ? null : rowToAvroRecord(image, row));
  return changes.map((change) => {
    if (mode === 'OP_KEY_ONLY') return { op: change.op, record_key: change.recordKey };
    if (mode === 'DATA_BEFORE') return { op: change.op, record_key: change.recordKey, before: avro(change.before) };
    return { op: change.op, ts_ms: instantTime, before: avro(change.before), after: avro(change.after) };
  });
}

/** Each key's change from the stored rows it had and the rows the merge wrote anew, by record key. */
export function fileGroupChanges(before: readonly Row[], after: readonly Row[]): CdcChange[] {
  const keyOf = (row: Row) => String(row['_hoodie_record_key']);
  const old = new Map(before.map((row) => [keyOf(row), row]));
  const now = new Map(after.map((row) => [keyOf(row), row]));
  const keys = [...new Set([...old.keys(), ...now.keys()])].sort();
  return keys.map((recordKey) => {
    const b = old.get(recordKey);
    const a = now.get(recordKey);
    return { op: b === undefined ? 'i' : a === undefined ? 'd' : 'u', recordKey, before: b, after: a };
  });
}

export interface CdcLogWriterOptions {
  readonly storage: Storage;
  readonly session: WriteSession;
  readonly instantTime: string;
  readonly workDir: string;
  readonly mode: CdcLoggingMode;
  /** The writer schema (without meta fields): the images' schema. */
  readonly tableSchema: AvroRecordSchema;
  /** The log file's marker, as the table version's log writes take it (TimelineLayout.logWrites). */
  readonly marker: LogWrites['marker'];
}

/** Writes the cdc log files of one commit's merged file groups, one at a time. */
export class CdcLogWriter {
  private engine: ParquetEngine | undefined;

  constructor(private readonly options: CdcLogWriterOptions) {}

  /**
   * The cdc log file of a merged file group (after writeFileGroup wrote `outputFile`), as the write stat's cdcStats
   * (its table-relative path → size); null when the merge writes none.
   */
  async write(
    group: { readonly bucket: number; readonly partitionPath: string; readonly fileId: string; readonly existingFile: number; readonly writeToken: string },
    outputFile: string,
    result: FileGroupWriteResult,
  ): Promise<Record<string, number> | null> {
    if (result.rowCount === 0 || result.rowCount === result.inserts) return null;
    const { storage, session, instantTime, mode, tableSchema } = this.options;
    const beforeFile = join(this.options.workDir, 'out', `${group.bucket}.cdc-before.parquet`);
    const afterFile = join(this.options.workDir, 'out', `${group.bucket}.cdc-after.parquet`);
    await session.writeFileGroupChanges({ bucket: group.bucket, existingFile: group.existingFile, outputFile, commitTime: instantTime, beforeFile, afterFile });
    this.engine ??= await openParquetEngine({ tempDirectory: join(this.options.workDir, 'cdc-engine') });
    const changes = fileGroupChanges((await this.engine.readRows([beforeFile])).rows, (await this.engine.readRows([afterFile])).rows);
    const schema = cdcSchema(mode, tableSchema);
    const written = await writeLogFile(storage, {
      partitionPath: group.partitionPath,
      fileId: group.fileId,
      baseInstant: instantTime,
      writeToken: group.writeToken,
      suffix: CDC_LOG_SUFFIX,
      blocks: [cdcDataBlock({ instantTime, schema, records: cdcRecords(mode, instantTime, tableSchema, changes), longs: 'bigint' })],
      beforeCreate: async (fileName) => {
        await createMarker(storage, instantTime, group.partitionPath, fileName, this.options.marker);
      },
    });
    return { [written.path]: written.size };
  }

  async close(): Promise<void> {
    await this.engine?.close();
    this.engine = undefined;
  }
}
