/**
 * One file slice merged into one local Parquet file, in DuckDB: the base file's rows with the changes of its log
 * records (sliceChanges: blocks of instants completed before `instantTime`, merged by the table's payload class or
 * 1.x merge mode as a snapshot read merges, the outcome per key decided by mergeOutcome) applied in SQL, without the
 * base rows coming into JavaScript. A slice of log files only merges into an empty template of the table schema's
 * columns, typed as Hudi's Avro writer types them. Compaction writes its new base files this way, clustering the
 * merged inputs of its merge-on-read slices.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AVRO_SCHEMA_FOOTER_KEY } from '../base-file/footer.js';
import type { ParquetEngine } from '../engine/port.js';
import type { MergedFileSlice } from '../table/file-system-view.js';
import { withMetaFields } from '../table/schema.js';
import type { HudiTable } from '../table/table.js';
import { logBlockFilter } from './log-record-scanner.js';
import { sliceChanges, tableMerge } from './snapshot.js';

export interface FileSliceMergeInput {
  readonly table: HudiTable;
  /** The instant merging: log blocks of instants completed before it count. */
  readonly instantTime: string;
  readonly slice: MergedFileSlice;
  /** The slice's base file staged locally; undefined for a slice of log files only. */
  readonly localBaseFile: string | undefined;
  readonly engine: ParquetEngine;
  /** The local output file; a slice of log files only gets its template next to it. */
  readonly outputFile: string;
  /** Why the table schema is needed, for the error when it has none (a slice of log files only). */
  readonly purpose: string;
  /** VARCHAR columns written as this text in every row (compaction: `_hoodie_file_name`). */
  readonly constantColumns?: Readonly<Record<string, string>>;
  /** The output's footer from its record keys and the Avro schema it was written with; none by default. */
  readonly footer?: (keys: Iterable<string>, avroSchema: string) => Record<string, string>;
}

export interface FileSliceMergeResult {
  readonly rowCount: number;
  readonly bytes: number;
  /** Rows of the base file (0 without one). */
  readonly baseRows: number;
  /** Merged log records (one per key). */
  readonly logRecords: number;
}

/** Merge `slice` into `outputFile` (see the module comment). */
export async function mergeFileSlice(input: FileSliceMergeInput): Promise<FileSliceMergeResult> {
  const { table, slice, engine } = input;
  let templateDir: string | undefined;
  try {
    let template: string;
    let avroSchema: string;
    let baseRows = 0;
    if (input.localBaseFile === undefined) {
      // No base file to take the columns from: the table schema's, typed as Hudi's Avro writer types them.
      avroSchema = JSON.stringify(withMetaFields((await table.requireSchema(input.purpose)).schema));
      templateDir = await mkdtemp(`${input.outputFile}.template-`);
      template = join(templateDir, 'template.parquet');
      await engine.writeEmptyFile({ avroSchema, outputFile: template });
    } else {
      template = input.localBaseFile;
      const footer = await engine.readFooter(template);
      avroSchema = footer.keyValues[AVRO_SCHEMA_FOOTER_KEY] ?? (await table.requireSchema(input.purpose)).text;
      baseRows = footer.numRows;
    }
    const changes = await sliceChanges(
      slice,
      { storage: table.storage, config: table.config, timeline: table.timeline, queryInstant: input.instantTime, engine, localBaseFile: () => template },
      tableMerge(table.storage, table.config),
      logBlockFilter(table.timeline, input.instantTime),
    );
    const footer = input.footer;
    const written = await engine.mergeIntoBase({
      base: template,
      keyColumn: '_hoodie_record_key',
      upserts: changes.upserts,
      deletes: changes.deletes,
      ...(input.constantColumns === undefined ? {} : { constantColumns: input.constantColumns }),
      outputFile: input.outputFile,
      rowGroupSize: baseRows || changes.upserts.length || 1,
      footer: (keys) => (footer === undefined ? {} : footer(keys, avroSchema)),
    });
    return { rowCount: written.rowCount, bytes: written.bytes, baseRows, logRecords: changes.logRecords };
  } finally {
    if (templateDir !== undefined) await rm(templateDir, { recursive: true, force: true });
  }
}
