/**
 * The DuckDB side of Hudi writes: load a batch, attach record keys, de-duplicate, tag existing records, assign
 * rows to file groups (buckets) and write each file group's new base file. The writer domain
 * (lib/writer/write-client.ts) decides everything from plain values; this module only runs SQL over local files.
 *
 * Why one long file: every step runs over the same DuckDB tables of one batch (BATCH, its keys, the tagged rows)
 * whose names and column order the statements share; the pure decisions already live in lib/writer/.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type {
  DuckDBConnection,
  DuckDBDecimalType,
  DuckDBInstance,
  DuckDBListType,
  DuckDBMapType,
  DuckDBStructType,
  DuckDBType,
  DuckDBTypeId,
} from '@duckdb/node-api';
import { ColumnNameError, HudiError, InputError, NestingDepthError } from '../errors.js';
import { readFooterSummary, setFooterKeyValues } from '../parquet/footer.js';
import { decimalFixedBytes, withFixedDecimals } from '../parquet/schema.js';
import type { DeclarativeKeyPlan } from '../table/key-generators.js';
import {
  type AvroField,
  type AvroRecordSchema,
  fieldNameFix,
  fieldNameProblems,
  hudiRecordName,
  MAX_NESTING_DEPTH,
  META_FIELD_NAMES,
} from '../table/schema.js';
import { duckDbTypeOfAvro } from './avro-types.js';
import { readJoinedValues } from './column-values.js';
import { duckdbReason, openDuckDb } from './connection.js';
import { duckdb } from './duckdb.js';
import { type ExactCast, exactCast, nestedFieldDifferences, readType, typeSql } from './exact-cast.js';
import { deepestNesting, fieldPaths, inputNameProblem, mayBeRenamed, namedFields } from './input-names.js';
import { firstMalformedJsonLine, firstTooDeepJsonLine } from './json-lines.js';
import type { ParquetEngineOptions } from './port.js';
import { describeColumns } from './schema-rows.js';
import { copyToParquetSql, fileListSql, READ_OPTIONS, sqlIdentifier, sqlString } from './sql.js';
import { conformParquetTypes, type ParquetTypeTargets, parquetTypeTargets, preservingDuckDbType, withNewTypesFrom } from './type-targets.js';

export type InputFormat = 'jsonl' | 'csv' | 'parquet';

export interface BatchColumn {
  readonly name: string;
  /** DuckDB's type name, e.g. BIGINT, VARCHAR, TIMESTAMP WITH TIME ZONE, STRUCT(...). */
  readonly type: string;
}

/** Per row of the batch: the values of the fields the key generator needs, as Hudi renders them to strings. */
export interface KeyFieldColumns {
  readonly rowCount: number;
  /** field → value per row (null for SQL NULL). */
  readonly values: ReadonlyMap<string, readonly (string | null)[]>;
}

export interface RowKey {
  readonly row: number;
  readonly recordKey: string;
  readonly partitionPath: string;
}

/** A base file of the table already staged locally, with where it lives in the table. */
export interface ExistingBaseFile {
  readonly localPath: string;
  readonly partitionPath: string;
  readonly fileId: string;
}

export interface TaggingSummary {
  /** Incoming records per partition that matched no existing record. */
  readonly insertsByPartition: ReadonlyMap<string, number>;
  /** Incoming records per existing file (index into the files given to tagLocations) that match a stored record. */
  readonly updatesByFile: ReadonlyMap<number, number>;
  /** Records after de-duplication. */
  readonly incomingRecords: number;
}

/** Where inserts of one partition go: rank range [start, start+count) of that partition's inserts (ordered by key). */
export interface InsertRange {
  readonly partitionPath: string;
  readonly start: number;
  readonly count: number;
  readonly bucket: number;
}

/**
 * The order of new records in their file: by record key (Hudi's GLOBAL_SORT and PARTITION_SORT bulk_insert, and
 * this writer's insert and upsert), or as they come in the batch (bulk_insert's NONE, Hudi's default).
 */
export type InsertOrder = 'key' | 'input';

/** Bucket index: the incoming records of one partition's hash bucket found in one base file (or in none: `file` null). */
export interface HashBucketGroup {
  readonly partitionPath: string;
  readonly hashBucket: number;
  /** Index into the files given to tagLocations, or null for records no file holds. */
  readonly file: number | null;
  readonly records: number;
  /** One record key of the group (for messages). */
  readonly sampleKey: string;
}

/** Bucket index: where a partition's hash bucket goes (a bucket of the write). */
export interface HashBucketTarget {
  readonly partitionPath: string;
  readonly hashBucket: number;
  readonly bucket: number;
}

export interface FileGroupWrite {
  readonly bucket: number;
  /** The previous base file of the group (merged) — index into the files given to tagLocations. */
  readonly existingFile?: number;
  readonly outputFile: string;
  readonly partitionPath: string;
  readonly fileName: string;
  readonly commitTime: string;
  /** `_hoodie_commit_seqno` = `<commitTime>_<taskPartitionId>_<n>` for records this write produces. */
  readonly taskPartitionId: number;
  readonly rowGroupSize: number;
  /**
   * Footer key/values, computed by the caller from the record keys (see fileGroupRecordKeys). A promise is awaited
   * after the rows are written and set in the footer then, so the keys can be hashed while DuckDB writes the rows.
   */
  readonly keyValues: Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
  /** Parquet type targets: the table's existing files (keeps Hudi's decimal/timestamp encodings). */
  readonly typeTemplates: readonly string[];
}

export interface FileGroupWriteResult {
  readonly rowCount: number;
  readonly inserts: number;
  readonly updates: number;
  readonly deletes: number;
  readonly bytes: number;
}

const BATCH = 'hudi_batch';
const KEYS = 'hudi_keys';
const INCOMING = 'hudi_incoming';
/** The incoming records with the file holding each one's key (NULL: an insert). */
const TAGGED = 'hudi_tagged';
const EXISTING = 'hudi_existing';
const RANGES = 'hudi_insert_ranges';
/** Bucket index: each incoming record's hash bucket (by batch row). */
const HASHED = 'hudi_hash_buckets';
/** Bucket index: the file group (write bucket) of each partition's hash bucket. */
const HASH_PLAN = 'hudi_hash_plan';
/** The staged records' keys, file groups and kinds (a view of STAGED_ROWS). */
const STAGED = 'hudi_staged';
/** The batch's records in write order, file group after file group (or, inserts in batch order, partition after partition). */
const STAGED_ROWS = 'hudi_staged_rows';
/** Row group size of the engine's scratch files (a file group's changes). */
const DEFAULT_ROW_GROUP_ROWS = 122_880;
/** Bad records reported per kind (all of them are left out or refused). */
const BAD_ROW_LIMIT = 100_000;

export interface WriteSessionOptions extends ParquetEngineOptions {}

/** The input of a batch: `file` names it in messages; `readPath`, when given, is where it is read (a literal path). */
export interface BatchInput {
  readonly file: string;
  readonly format: InputFormat;
  readonly readPath?: string;
}

export interface LoadBatchOptions {
  /** Table columns the input lacks: refused (Hudi's default) or stored as NULL (set.null.for.missing.columns). */
  readonly missingColumns?: 'refuse' | 'null';
  /**
   * The table's latest schema (its fields): columns it has that the type templates lack (added by a commit whose
   * files are not the templates) are table columns all the same, typed from their Avro type.
   */
  readonly schemaFields?: readonly AvroField[];
}

export interface LoadedBatch {
  readonly rowCount: number;
  /** The batch's columns as written: the table's (with the input's new columns after them), or the input's for a new table. */
  readonly columns: BatchColumn[];
  /** The columns the input itself has (none for an empty JSON-lines file). */
  readonly inputColumns: string[];
  /** Columns and struct fields (`a.b`) the input adds to the table's schema (schema evolution), in input order. */
  readonly addedColumns: string[];
}

/** One write's worth of DuckDB state; close it when the write ends. */
export class WriteSession {
  private columns: BatchColumn[] = [];
  /** What INCOMING and TAGGED are now: a view where they only rename or extend the relation before them. */
  private readonly relationKinds = new Map<string, 'TABLE' | 'VIEW'>();
  /** A second connection, for reads that run beside a write (the next file group's record keys beside this one's COPY). */
  private side: Promise<DuckDBConnection> | undefined;
  /** The last read queued on `side`: one DuckDB connection runs one query at a time, so reads on it wait their turn. */
  private sideQueue: Promise<unknown> = Promise.resolve();
  /** Connections for file group writes beside the main one's (writeFileGroup calls that overlap), idle ones here. */
  private readonly writers: DuckDBConnection[] = [];
  private readonly idleWriters: DuckDBConnection[] = [];
  private existingFiles: readonly ExistingBaseFile[] = [];
  /** Each bucket's inserts, updates and deletes, counted once by assignBuckets (not by each file group's write). */
  private bucketCounts = new Map<number, { inserts: number; updates: number; deletes: number }>();
  /** The partitions of KEYS, once read (cleared whenever KEYS changes). */
  private partitionsOfKeys: readonly string[] | undefined;
  /** Each bucket's positions in STAGED_ROWS (assignBuckets sorts the rows by bucket, or by partition in batch order). */
  private stagedRanges: ReadonlyMap<number, { lo: number; hi: number }> = new Map();
  /** Whether STAGED_ROWS has each row's bucket, file and delete flag (not when it holds inserts in batch order). */
  private stagedWithBuckets = false;
  private targets: ParquetTypeTargets = new Map();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(options: WriteSessionOptions = {}): Promise<WriteSession> {
    const { instance, connection } = await openDuckDb(options);
    return new WriteSession(instance, connection);
  }

  async close(): Promise<void> {
    if (this.side !== undefined) (await this.side).closeSync();
    for (const writer of this.writers) writer.closeSync();
    this.connection.closeSync();
    this.instance.closeSync();
  }

  private async run(sql: string, location?: string, connection: DuckDBConnection = this.connection): Promise<void> {
    try {
      await connection.run(sql);
    } catch (cause) {
      throw new HudiError(`write failed in the engine: ${duckdbReason(cause)}`, { ...(location === undefined ? {} : { location }), cause });
    }
  }

  /**
   * (Re)create `name` as a table holding `sql`'s rows, or as a view of it where that is only a projection of the
   * relation before it (a bulk_insert's incoming records are its keyed rows: no need to copy them twice).
   */
  private async replaceRelation(name: string, kind: 'TABLE' | 'VIEW', sql: string): Promise<void> {
    const previous = this.relationKinds.get(name);
    if (previous !== undefined) await this.run(`DROP ${previous} IF EXISTS ${name}`);
    await this.run(`CREATE ${kind} ${name} AS ${sql}`);
    this.relationKinds.set(name, kind);
  }

  private async query(sql: string, connection: DuckDBConnection = this.connection): Promise<Record<string, unknown>[]> {
    try {
      const reader = await connection.runAndReadAll(sql);
      return reader.getRowObjectsJS() as Record<string, unknown>[];
    } catch (cause) {
      throw new HudiError(`write failed in the engine: ${duckdbReason(cause)}`, { cause });
    }
  }

  /**
   * Load the input into the batch table, cast to the table's column types when the table has base files
   * (`typeTemplates`), else with the types DuckDB infers (naive timestamps become UTC timestamps, as Spark's).
   * Against a table, input columns (and struct fields) the table lacks evolve its schema as Hudi's do: they are
   * added after the table's columns (struct fields after the struct's fields), with the input's types. Columns the
   * table has but the input lacks are refused unless `missingColumns` is 'null' (they are stored as NULL); a value
   * the cast to the table's type would change is refused (lib/engine/exact-cast.ts). Every refusal is an
   * InputError, thrown before anything is written.
   */
  async loadBatch(input: BatchInput, typeTemplates: readonly string[], options: LoadBatchOptions = {}): Promise<LoadedBatch> {
    const { DuckDBTypeId } = duckdb();
    const readPath = input.readPath ?? input.file;
    let source = inputSql(readPath, input.format);
    if (input.format === 'jsonl') await refuseDeepJsonLines(readPath, input.file);
    let described = await this.describeInput(source, input);
    // Counting reads every line: a malformed one past DuckDB's sample fails here.
    const counted = await this.connection
      .runAndReadAll(`SELECT count(*) AS n FROM ${source}`)
      .then((reader) => reader.getRowObjectsJS()[0])
      .catch(async (cause: unknown) => {
        throw await this.unreadableInput(input, cause);
      });
    const rowCount = Number(counted?.['n'] ?? 0);
    // DuckDB reads an empty JSON-lines file as one JSON column named "json": it has no columns at all.
    if (rowCount === 0 && input.format === 'jsonl' && described.length === 1 && described[0]!.name === 'json' && described[0]!.type.alias === 'JSON')
      described = [];
    refuseDeepNesting(input.file, described);
    if (mayBeRenamed(namedFields(described), input.format)) await this.refuseHiddenInputNames(input);
    let storedColumns: { name: string; type: DuckDBType }[] = [];
    if (typeTemplates.length > 0) {
      this.targets = parquetTypeTargets(typeTemplates);
      const templateColumns = (await describeColumns(this.connection, typeTemplates))
        .filter((c) => !(META_FIELD_NAMES as readonly string[]).includes(c.name))
        .map((c) => ({ name: c.name, type: preservingDuckDbType(c.type, this.targets, c.name) }));
      storedColumns = [...templateColumns, ...schemaOnlyColumns(options.schemaFields ?? [], templateColumns)];
    }
    // Spark's readers keep strings strings (JSON: no date or timestamp inference by default; CSV: no inference at
    // all): text that DuckDB would parse is read as text wherever the table has no column to say otherwise.
    const textual = sparkTextOverrides(input.format, described, storedColumns);
    if (textual !== undefined) {
      source = inputSql(readPath, input.format, textual);
      described = await this.describeInput(source, input);
    }
    let inputColumns = described.filter((c) => !(META_FIELD_NAMES as readonly string[]).includes(c.name));
    let projection: string[];
    let addedColumns: string[] = [];
    if (typeTemplates.length > 0) {
      // Schema evolution: the table's columns, struct fields the input adds appended, then the input's new columns.
      const tableColumns = [
        ...storedColumns.map((column) => {
          const present = inputColumns.find((c) => c.name === column.name);
          return present === undefined ? column : { name: column.name, type: widenedType(present.type, column.type) };
        }),
        ...inputColumns.filter((c) => !storedColumns.some((t) => t.name === c.name)).map((c) => ({ name: c.name, type: evolvedColumnType(c.type) })),
      ];
      refuseFieldNames(input.file, tableColumns, storedColumns);
      if (described.length > 0) addedColumns = this.checkColumns(input.file, inputColumns, storedColumns, options.missingColumns ?? 'refuse');
      // Text the table keeps as text is read as text, not as what DuckDB would make of it.
      const overrides = textReadOverrides(input.format, inputColumns, tableColumns);
      if (overrides !== undefined) {
        source = inputSql(readPath, input.format, overrides);
        described = await this.describeInput(source, input);
        inputColumns = described.filter((c) => !(META_FIELD_NAMES as readonly string[]).includes(c.name));
      }
      const casts = tableColumns.map((column) => {
        const present = inputColumns.find((c) => c.name === column.name);
        return present === undefined
          ? undefined
          : { column: column.name, from: present.type, to: column.type, ...exactCast(sqlIdentifier(column.name), present.type, column.type) };
      });
      await this.refuseChangedValues(
        input.file,
        source,
        casts.filter((c): c is NonNullable<typeof c> => c !== undefined),
      );
      projection = tableColumns.map((column, index) => {
        const cast = casts[index];
        return `${cast === undefined ? `CAST(NULL AS ${typeSql(column.type)})` : cast.cast} AS ${sqlIdentifier(column.name)}`;
      });
      this.columns = tableColumns.map((c) => ({ name: c.name, type: typeSql(c.type) }));
    } else {
      refuseFieldNames(input.file, inputColumns, []);
      projection = inputColumns.map((c) =>
        c.type.typeId === DuckDBTypeId.TIMESTAMP ? `CAST(${sqlIdentifier(c.name)} AS TIMESTAMPTZ) AS ${sqlIdentifier(c.name)}` : sqlIdentifier(c.name),
      );
      this.columns = inputColumns.map((c) => ({ name: c.name, type: c.type.typeId === DuckDBTypeId.TIMESTAMP ? 'TIMESTAMP WITH TIME ZONE' : typeSql(c.type) }));
    }
    await this.run(`DROP TABLE IF EXISTS ${BATCH}`);
    try {
      const columnsSql = projection.length === 0 ? '' : `, ${projection.join(', ')}`;
      // One Parquet file numbers its own rows: no row_number() window, which numbers them on one thread. A
      // glob's files would each start at 0, and an input column of that name would clash.
      const numbered =
        input.format === 'parquet' &&
        source === inputSql(readPath, 'parquet') &&
        !/[*?[{]/.test(readPath) &&
        !described.some((c) => c.name === 'file_row_number')
          ? { row: 'file_row_number::BIGINT', source: `read_parquet(${sqlString(readPath)}, ${READ_OPTIONS}, file_row_number = true)` }
          : { row: '(row_number() OVER () - 1)::BIGINT', source };
      await this.connection.run(`CREATE TABLE ${BATCH} AS SELECT ${numbered.row} AS __row${columnsSql} FROM ${numbered.source}`);
    } catch (cause) {
      throw new InputError(`input values do not fit the table's column types: ${duckdbReason(cause)}`, {
        location: input.file,
        fix: 'fix the offending values or columns in the input; nothing was written',
        cause,
      });
    }
    return { rowCount, columns: [...this.columns], inputColumns: inputColumns.map((c) => c.name), addedColumns };
  }

  private async describeInput(source: string, input: BatchInput): Promise<{ name: string; type: DuckDBType }[]> {
    try {
      const reader = await this.connection.runAndReadAll(`SELECT * FROM ${source} LIMIT 0`);
      const types = reader.columnTypes();
      return reader.columnNames().map((name, index) => ({ name, type: types[index]! }));
    } catch (cause) {
      // DuckDB refuses a JSON struct with two keys equal but for case; the input's own keys name them.
      if (input.format === 'jsonl') await this.refuseHiddenInputNames(input);
      throw await this.unreadableInput(input, cause);
    }
  }

  /** The error for an input DuckDB could not read: a JSON-lines input's first malformed line by its own number. */
  private async unreadableInput(input: BatchInput, cause: unknown): Promise<InputError> {
    const malformed = input.format === 'jsonl' ? await firstMalformedJsonLine(input.readPath ?? input.file) : undefined;
    const reason = malformed === undefined ? duckdbReason(cause) : `line ${malformed.line} is not one JSON object: ${malformed.reason}`;
    return new InputError(`cannot read the input as ${input.format}: ${reason}`, {
      location: input.file,
      fix: input.format === 'jsonl' ? 'each line must be one JSON object' : input.format === 'csv' ? 'the CSV needs a header line' : 'the file must be Parquet',
      cause,
    });
  }

  /** Names of the input DuckDB would have renamed, invented or refused (inputNameProblem): one ColumnNameError naming them. */
  private async refuseHiddenInputNames(input: BatchInput): Promise<void> {
    const problem = await inputNameProblem(this.connection, input.readPath ?? input.file, input.format);
    if (problem === undefined) return;
    throw new ColumnNameError(`input column names a Hudi table cannot hold: ${problem.reason}`, problem.paths, {
      location: input.file,
      fix: fieldNameFix([problem]),
    });
  }

  /**
   * The input's columns against the table's: what it adds (returned; Hudi evolves the schema), what it lacks
   * (Hudi: MissingSchemaFieldException unless set.null.for.missing.columns).
   */
  private checkColumns(
    file: string,
    input: readonly { name: string; type: DuckDBType }[],
    table: readonly { name: string; type: DuckDBType }[],
    missingColumns: 'refuse' | 'null',
  ): string[] {
    const added = input.filter((c) => !table.some((t) => t.name === c.name)).map((c) => c.name);
    const missing = table.filter((t) => !input.some((c) => c.name === t.name)).map((t) => t.name);
    for (const column of input) {
      const tableColumn = table.find((t) => t.name === column.name);
      if (tableColumn === undefined) continue;
      const nested = nestedFieldDifferences(column.name, column.type, tableColumn.type);
      added.push(...nested.added);
      missing.push(...nested.missing);
    }
    if (missing.length > 0 && missingColumns === 'refuse') {
      throw new InputError(`input lacks table column(s) ${missing.join(', ')}, which would be stored as NULL`, {
        location: file,
        fix: 'add them to the input, or write with hoodie.write.set.null.for.missing.columns=true (or hoodie.datasource.write.reconcile.schema=true) to store NULL, as Hudi does; nothing was written',
      });
    }
    return added;
  }

  /** One pass over the input: the first value (by row) that a cast would change is refused with its column, row and value. */
  private async refuseChangedValues(
    file: string,
    source: string,
    casts: readonly ({ column: string; from: DuckDBType; to: DuckDBType } & ExactCast)[],
  ): Promise<void> {
    const checked = casts.filter((c) => c.changes !== undefined);
    if (checked.length === 0) return;
    const numbered = `(SELECT row_number() OVER () AS __row, * FROM ${source})`;
    const [first] = await this.query(`SELECT ${checked.map((c, i) => `min(__row) FILTER (WHERE ${c.changes}) AS c${i}`).join(', ')} FROM ${numbered}`);
    const offenders = checked
      .map((cast, index) => ({ cast, row: first?.[`c${index}`] }))
      .filter((o): o is { cast: (typeof checked)[number]; row: number | bigint } => o.row !== null && o.row !== undefined)
      .sort((a, b) => Number(a.row) - Number(b.row));
    const offender = offenders[0];
    if (offender === undefined) return;
    const { cast, row } = offender;
    const [shown] = await this.query(
      `SELECT CAST(${sqlIdentifier(cast.column)} AS VARCHAR) AS value, CAST(${cast.tryCast} AS VARCHAR) AS stored FROM ${numbered} WHERE __row = ${Number(row)}`,
    );
    const stored = shown?.['stored'];
    const outcome = stored === null || stored === undefined ? 'it cannot be converted' : `it would be stored as ${String(stored)}`;
    const others =
      offenders.length > 1
        ? `; column(s) ${offenders
            .slice(1)
            .map((o) => `"${o.cast.column}"`)
            .join(', ')} have such values too`
        : '';
    throw new InputError(
      `row ${Number(row)}, column "${cast.column}": ${String(shown?.['value'])} (${typeSql(cast.from)}) does not fit the table's type ${typeSql(cast.to)} exactly (${outcome})${others}`,
      {
        location: file,
        fix: 'correct the value in the input: a write changes no value and no column type; nothing was written',
      },
    );
  }

  /** An Avro schema for a new table from the batch's column types, named as Spark's Hudi writer names it. */
  async avroSchemaOfBatch(tableName: string): Promise<AvroRecordSchema> {
    const reader = await this.connection.runAndReadAll(`SELECT * EXCLUDE (__row) FROM ${BATCH} LIMIT 0`);
    const types = reader.columnTypes();
    const { name, namespace } = hudiRecordName(tableName);
    return {
      type: 'record',
      name,
      namespace,
      fields: reader.columnNames().map((column, i) => ({ name: column, type: ['null', avroTypeOf(types[i]!, `${namespace}.${name}`, column)], default: null })),
    };
  }

  /**
   * The table's schema evolved by the batch, as Hudi's writer schema: columns the batch adds appended as nullable
   * fields (default null), struct fields it adds appended to their records; every existing field kept as recorded.
   */
  async evolvedSchema(schema: AvroRecordSchema): Promise<AvroRecordSchema> {
    const reader = await this.connection.runAndReadAll(`SELECT * EXCLUDE (__row) FROM ${BATCH} LIMIT 0`);
    const types = reader.columnTypes();
    const columns = reader.columnNames().map((name, i) => ({ name, type: types[i]! }));
    return evolveRecord(schema, columns) as AvroRecordSchema;
  }

  batchColumns(): BatchColumn[] {
    return [...this.columns];
  }

  /**
   * Values of the key generator's fields as Hudi renders them (HoodieAvroUtils.getNestedFieldValAsString):
   * dates as yyyy-MM-dd, timestamps as their epoch value in microseconds, decimals in plain notation.
   */
  async keyFieldValues(fields: readonly string[]): Promise<KeyFieldColumns> {
    if (fields.length === 0) return { rowCount: 0, values: new Map() };
    const expressions = fields.map((field, i) => `${keyFieldSql(field, this.columns)} AS k${i}`);
    const reader = await this.connection.runAndReadAll(`SELECT ${expressions.join(', ')} FROM ${BATCH} ORDER BY __row`);
    const columns = reader.getColumnsJS() as (string | null)[][];
    return { rowCount: reader.currentRowCount, values: new Map(fields.map((field, i) => [field, columns[i] ?? []])) };
  }

  /**
   * Compute record keys and partition paths set-wise for a declarative key generator; returns the rows that have
   * no usable key (with Hudi's reason) and the partitions touched.
   */
  async setRowKeysFromPlan(plan: DeclarativeKeyPlan): Promise<{ badRecords: { row: number; reason: string }[]; partitions: string[] }> {
    const value = (field: string) => keyFieldSql(field, this.columns);
    const missing = (field: string) => `(${value(field)} IS NULL OR ${value(field)} = '')`;
    let recordKey: string;
    let valid: string;
    if (plan.complexRecordKey) {
      recordKey = plan.recordKeyFields
        .map(
          (f) =>
            `${sqlString(`${f}:`)} || CASE WHEN ${value(f)} IS NULL THEN ${sqlString(plan.nullPlaceholder)} WHEN ${value(f)} = '' THEN ${sqlString(plan.emptyPlaceholder)} ELSE ${value(f)} END`,
        )
        .join(` || ',' || `);
      valid = `NOT (${plan.recordKeyFields.map(missing).join(' AND ')})`;
    } else {
      recordKey = value(plan.recordKeyFields[0]!);
      valid = `NOT ${missing(plan.recordKeyFields[0]!)}`;
    }
    const partition =
      plan.partitionFields.length === 0
        ? `''`
        : plan.partitionFields
            .map(
              (f) =>
                `${plan.hiveStylePartitioning ? `${sqlString(`${f}=`)} || ` : ''}CASE WHEN ${missing(f)} THEN ${sqlString(plan.defaultPartition)} ELSE ${value(f)} END`,
            )
            .join(` || '/' || `);
    this.partitionsOfKeys = undefined;
    await this.run(`DROP TABLE IF EXISTS ${KEYS}`);
    await this.run(`CREATE TABLE ${KEYS} AS SELECT __row, ${recordKey} AS __key, ${partition} AS __partition FROM ${BATCH} WHERE ${valid}`);
    // Row counts come from the tables' statistics: the scan for rows without a key only when some are missing.
    const [counts] = await this.query(`SELECT (SELECT count(*) FROM ${KEYS}) AS keyed, (SELECT count(*) FROM ${BATCH}) AS batch`);
    const bad =
      Number(counts?.['keyed']) === Number(counts?.['batch'])
        ? []
        : await this.query(`SELECT __row FROM ${BATCH} WHERE NOT (${valid}) ORDER BY __row LIMIT ${BAD_ROW_LIMIT}`);
    const reason = plan.complexRecordKey
      ? `record key fields ${plan.recordKeyFields.join(', ')} are all null or empty`
      : `record key field "${plan.recordKeyFields[0]}" is null or empty`;
    const partitions = await this.keyedPartitions();
    return { badRecords: bad.map((r) => ({ row: Number(r['__row']), reason })), partitions: [...partitions] };
  }

  /** Attach record keys and partition paths; rows without a key (bad records) are simply not given. */
  async setRowKeys(keys: readonly RowKey[]): Promise<void> {
    this.partitionsOfKeys = undefined;
    await this.run(`DROP TABLE IF EXISTS ${KEYS}`);
    await this.run(`CREATE TABLE ${KEYS} (__row BIGINT, __key VARCHAR, __partition VARCHAR)`);
    const appender = await this.connection.createAppender(KEYS);
    for (const key of keys) {
      appender.appendBigInt(BigInt(key.row));
      appender.appendVarchar(key.recordKey);
      appender.appendVarchar(key.partitionPath);
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
  }

  /** Keyed rows whose partition path is one of `partitions` (at most `limit`), in row order. */
  async rowsInPartitions(partitions: readonly string[], limit = BAD_ROW_LIMIT): Promise<{ row: number; partitionPath: string }[]> {
    if (partitions.length === 0) return [];
    const rows = await this.query(`SELECT __row, __partition FROM ${KEYS} WHERE ${partitionInSql(partitions)} ORDER BY __row LIMIT ${limit}`);
    return rows.map((r) => ({ row: Number(r['__row']), partitionPath: String(r['__partition']) }));
  }

  /** Keyed rows whose `column` is NULL (at most `limit`), in row order. */
  async keyedRowsWithNull(column: string, limit = BAD_ROW_LIMIT): Promise<number[]> {
    const rows = await this.query(
      `SELECT k.__row FROM ${KEYS} k JOIN ${BATCH} b USING (__row) WHERE b.${sqlIdentifier(column)} IS NULL ORDER BY k.__row LIMIT ${limit}`,
    );
    return rows.map((r) => Number(r['__row']));
  }

  /** Leave rows out of the write (bad records the caller skips): those in `partitions`, those with `nullColumn` NULL. */
  async dropKeyedRows(options: { partitions?: readonly string[]; nullColumn?: string }): Promise<void> {
    this.partitionsOfKeys = undefined;
    if (options.partitions !== undefined && options.partitions.length > 0) {
      await this.run(`DELETE FROM ${KEYS} WHERE ${partitionInSql(options.partitions)}`);
    }
    if (options.nullColumn !== undefined) {
      await this.run(`DELETE FROM ${KEYS} WHERE __row IN (SELECT __row FROM ${BATCH} WHERE ${sqlIdentifier(options.nullColumn)} IS NULL)`);
    }
  }

  /** The keyed rows: how many, and their partitions. */
  async keyedSummary(): Promise<{ rows: number; partitions: string[] }> {
    const [count] = await this.query(`SELECT count(*) AS n FROM ${KEYS}`);
    return { rows: Number(count?.['n'] ?? 0), partitions: [...(await this.keyedPartitions())] };
  }

  /** The keyed rows' partitions, sorted; read once until the keyed rows change. */
  private async keyedPartitions(): Promise<readonly string[]> {
    this.partitionsOfKeys ??= (await this.query(`SELECT DISTINCT __partition AS p FROM ${KEYS} ORDER BY 1`)).map((r) => String(r['p']));
    return this.partitionsOfKeys;
  }

  /**
   * The incoming records: de-duplicated by (partition, key) when `combine` is set — the greater precombine value
   * wins and, on a tie, the later record in the batch (Hudi 0.x preCombine of OverwriteWithLatestAvroPayload, which
   * DefaultHoodieRecordPayload inherits, reduced pairwise in batch order) — else all rows.
   */
  async buildIncoming(options: { combine: boolean; precombineField?: string }): Promise<number> {
    const precombine =
      options.precombineField !== undefined && this.columns.some((c) => c.name === options.precombineField)
        ? sqlIdentifier(options.precombineField)
        : undefined;
    // The winner per (partition, key) by a hash aggregate (a window over every key sorted them all): the greatest
    // (precombine value present, precombine value, batch row), so a NULL value loses to any other and ties go to the
    // later row. Without a precombine field: the later row. Without combining every keyed row is a record: the
    // batch's columns are not needed (no join).
    const winner =
      precombine === undefined ? 'max(k.__row)' : `arg_max(k.__row, {'present': b.${precombine} IS NOT NULL, 'value': b.${precombine}, 'row': k.__row})`;
    // A batch without two records of one key (most) has nothing to combine: a check by a narrow hash aggregate (cheap)
    // spares the join with the batch and the arg_max (several times its cost).
    const duplicated = options.combine ? await this.query(`SELECT 1 AS d FROM ${KEYS} GROUP BY __partition, __key HAVING count(*) > 1 LIMIT 1`) : [];
    if (duplicated.length > 0) {
      await this.replaceRelation(
        INCOMING,
        'TABLE',
        `SELECT ${winner} AS __row, k.__key, k.__partition
         FROM ${KEYS} k ${precombine === undefined ? '' : `JOIN ${BATCH} b USING (__row)`} GROUP BY k.__partition, k.__key`,
      );
    } else {
      await this.replaceRelation(INCOMING, 'VIEW', `SELECT __row, __key, __partition FROM ${KEYS}`);
    }
    const [count] = await this.query(`SELECT count(*) AS n FROM ${INCOMING}`);
    return Number(count?.['n'] ?? 0);
  }

  /**
   * Register the partitions' latest base files (their record keys are needed to merge) and, with `lookUp`, find
   * which incoming records already exist in them; without it every record is an insert (Hudi's insert).
   * With `orderingField`, an incoming record whose ordering value is smaller than the stored record's is dropped
   * (DefaultHoodieRecordPayload: event-time ordering against stored records).
   */
  async tagLocations(files: readonly ExistingBaseFile[], options: { lookUp: boolean; orderingField?: string }): Promise<TaggingSummary> {
    this.existingFiles = files;
    const ordering = options.orderingField !== undefined && this.columns.some((c) => c.name === options.orderingField) ? options.orderingField : undefined;
    const orderingType = ordering === undefined ? 'INTEGER' : this.columns.find((c) => c.name === ordering)!.type;
    await this.run(`DROP TABLE IF EXISTS ${EXISTING}`);
    // __pos: the record's place in its file, where an update of it is written (Hudi's merge keeps records in place).
    await this.run(`CREATE TABLE ${EXISTING} (__key VARCHAR, __file INTEGER, __pos BIGINT, __ordering ${orderingType})`);
    if (files.length > 0) {
      const mapping = files.map((f, i) => `(${sqlString(f.localPath)}, ${i})`).join(', ');
      const orderingValue = ordering === undefined ? 'NULL' : `CAST(p.${sqlIdentifier(ordering)} AS ${orderingType})`;
      await this.run(
        `INSERT INTO ${EXISTING}
         SELECT p._hoodie_record_key, m.idx, p.file_row_number, ${orderingValue}
         FROM read_parquet(${fileListSql(files.map((f) => f.localPath))}, ${READ_OPTIONS}, filename = true, file_row_number = true) p
         JOIN (VALUES ${mapping}) m(path, idx) ON p.filename = m.path`,
      );
    }
    const partitionOf = files.map((f) => f.partitionPath);
    const partitionValues = partitionOf.length === 0 ? '' : `(VALUES ${partitionOf.map((p, i) => `(${i}, ${sqlString(p)})`).join(', ')})`;
    // An existing record matches when the key is stored in a file of the same partition (Hudi's non-global index).
    const lookUp = files.length > 0 && options.lookUp;
    const matchSql = !lookUp
      ? `SELECT i.*, NULL::INTEGER AS __file, NULL::BIGINT AS __pos FROM ${INCOMING} i`
      : `SELECT i.*, e.__file, e.__pos FROM ${INCOMING} i LEFT JOIN (SELECT e.__key, e.__file, e.__pos, e.__ordering, fp.partition FROM ${EXISTING} e JOIN ${partitionValues} fp(idx, partition) ON e.__file = fp.idx) e
           ON i.__key = e.__key AND i.__partition = e.partition
         ${ordering === undefined ? '' : `JOIN ${BATCH} b ON b.__row = i.__row WHERE e.__file IS NULL OR e.__ordering IS NULL OR b.${sqlIdentifier(ordering)} IS NULL OR b.${sqlIdentifier(ordering)} >= e.__ordering`}`;
    await this.replaceRelation(TAGGED, lookUp ? 'TABLE' : 'VIEW', matchSql);
    // One pass: inserts counted by partition, updates by file.
    const counts = await this.query(`SELECT __file AS f, CASE WHEN __file IS NULL THEN __partition END AS p, count(*) AS n FROM ${TAGGED} GROUP BY ALL`);
    const inserts = counts.filter((r) => r['f'] === null);
    const updates = counts.filter((r) => r['f'] !== null);
    return {
      insertsByPartition: new Map(inserts.map((r) => [String(r['p']), Number(r['n'])])),
      updatesByFile: new Map(updates.map((r) => [Number(r['f']), Number(r['n'])])),
      incomingRecords: counts.reduce((sum, r) => sum + Number(r['n']), 0),
    };
  }

  /**
   * Bucket index (after tagLocations): each incoming record's hash bucket, computed by `bucketOf` from its record key
   * and partition (a consistent-hashing ring is the partition's; the hash is Java's, so it runs here in JavaScript, not
   * in SQL); then the records grouped by partition, hash bucket and the file tagging found them in.
   */
  async setHashBuckets(bucketOf: (recordKey: string, partitionPath: string) => number): Promise<HashBucketGroup[]> {
    // A key stored twice (inserts are not looked up) tags its record twice: hash each record once.
    const reader = await this.connection.runAndReadAll(`SELECT DISTINCT __row, __key, __partition FROM ${TAGGED}`);
    const [rows = [], keys = [], partitions = []] = reader.getColumnsJS() as [(number | bigint)[]?, string[]?, string[]?];
    await this.run(`DROP TABLE IF EXISTS ${HASHED}`);
    await this.run(`CREATE TABLE ${HASHED} (__row BIGINT, __hash INTEGER)`);
    const appender = await this.connection.createAppender(HASHED);
    for (let i = 0; i < keys.length; i++) {
      appender.appendBigInt(BigInt(rows[i]!));
      appender.appendInteger(bucketOf(keys[i]!, partitions[i]!));
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
    const groups = await this.query(
      `SELECT t.__partition AS p, h.__hash AS h, t.__file AS f, count(*) AS n, min(t.__key) AS k
       FROM ${TAGGED} t JOIN ${HASHED} h USING (__row) GROUP BY ALL ORDER BY 1, 2, 3`,
    );
    return groups.map((g) => ({
      partitionPath: String(g['p']),
      hashBucket: Number(g['h']),
      file: g['f'] === null ? null : Number(g['f']),
      records: Number(g['n']),
      sampleKey: String(g['k']),
    }));
  }

  /**
   * Assign every incoming record to a bucket: updates (and deletes) to the bucket of their file, inserts by
   * their rank (ordered by key) within the partition's insert ranges. With `insertOrder: 'input'` and inserts only,
   * the rank is the record's place in the batch instead (stageInsertsInInputOrder).
   */
  async assignBuckets(
    bucketOfFile: ReadonlyMap<number, number>,
    insertRanges: readonly InsertRange[],
    options: { deletes: boolean; insertOrder?: InsertOrder; hashBuckets?: readonly HashBucketTarget[] },
  ): Promise<void> {
    this.stagedRanges = new Map();
    const hashed = options.hashBuckets !== undefined;
    if (!hashed && options.insertOrder === 'input' && bucketOfFile.size === 0 && !options.deletes) {
      await this.stageInsertsInInputOrder(insertRanges);
      return;
    }
    await this.run(`DROP TABLE IF EXISTS ${RANGES}`);
    await this.run(`CREATE TABLE ${RANGES} (partition VARCHAR, start_rank BIGINT, end_rank BIGINT, bucket INTEGER)`);
    if (insertRanges.length > 0) {
      await this.run(
        `INSERT INTO ${RANGES} VALUES ${insertRanges.map((r) => `(${sqlString(r.partitionPath)}, ${r.start}, ${r.start + r.count}, ${r.bucket})`).join(', ')}`,
      );
    }
    const fileBuckets =
      bucketOfFile.size === 0
        ? '(SELECT NULL::INTEGER AS f, NULL::INTEGER AS bucket WHERE false) fb'
        : `(VALUES ${[...bucketOfFile].map(([f, b]) => `(${f}, ${b})`).join(', ')}) fb(f, bucket)`;
    // Bucket index: every record goes to its partition's hash bucket (setHashBuckets), updates and inserts alike.
    await this.run(`DROP TABLE IF EXISTS ${HASH_PLAN}`);
    await this.run(`CREATE TABLE ${HASH_PLAN} (partition VARCHAR, hash INTEGER, bucket INTEGER)`);
    if (hashed && options.hashBuckets!.length > 0) {
      await this.run(
        `INSERT INTO ${HASH_PLAN} VALUES ${options.hashBuckets!.map((t) => `(${sqlString(t.partitionPath)}, ${t.hashBucket}, ${t.bucket})`).join(', ')}`,
      );
    }
    const hashJoin = hashed
      ? `LEFT JOIN ${HASHED} h ON h.__row = r.__row LEFT JOIN ${HASH_PLAN} hb ON hb.partition = r.__partition AND hb.hash = h.__hash`
      : '';
    // Only inserts are ranked: a window over every record would sort the updates' keys too, for
    // nothing. __ord places a record in its file group: an update where its stored record is, an
    // insert by its rank (key order). Then one sort of the batch's rows by file group, and within it as Hudi's merge
    // writes them: updates where their stored records stand, new records by key, deletes (not written) last. Each file
    // group is then one range of positions, its written records numbered by position (_hoodie_commit_seqno in write
    // order): no window numbering them, no table of the assignment between.
    await this.run(`DROP TABLE IF EXISTS ${STAGED_ROWS}`);
    await this.run(
      `CREATE TABLE ${STAGED_ROWS} AS
       WITH ranked AS (
         SELECT i.*, row_number() OVER (PARTITION BY __partition ORDER BY __key, __row) - 1 AS __insert_rank FROM ${TAGGED} i WHERE __file IS NULL
         UNION ALL
         SELECT i.*, NULL::BIGINT AS __insert_rank FROM ${TAGGED} i WHERE __file IS NOT NULL
       ),
       assigned AS (
         SELECT r.__row, r.__key, r.__partition, r.__file,
                ${hashed ? 'hb.bucket' : 'COALESCE(fb.bucket, rg.bucket)'} AS __bucket,
                ${options.deletes ? 'true' : 'false'} AS __delete,
                COALESCE(r.__pos, r.__insert_rank)::BIGINT AS __ord
         FROM ranked r
         LEFT JOIN ${fileBuckets} ON r.__file = fb.f
         LEFT JOIN ${RANGES} rg ON r.__file IS NULL AND r.__partition = rg.partition AND r.__insert_rank >= rg.start_rank AND r.__insert_rank < rg.end_rank
         ${hashJoin}
       )
       SELECT a.__bucket, a.__key, a.__partition, a.__file, a.__delete, a.__ord, ${this.columns.map((c) => `b.${sqlIdentifier(c.name)}`).join(', ')}
       FROM assigned a JOIN ${BATCH} b USING (__row) WHERE a.__bucket IS NOT NULL
       ORDER BY a.__bucket, a.__delete, a.__file IS NULL, a.__ord`,
    );
    const spans = await this.query(
      `SELECT __bucket AS b, min(rowid) AS lo, count(*) AS n, count(*) FILTER (WHERE NOT __delete AND __file IS NULL) AS inserts,
              count(*) FILTER (WHERE NOT __delete AND __file IS NOT NULL) AS updates, count(*) FILTER (WHERE __delete AND __file IS NOT NULL) AS deletes
       FROM ${STAGED_ROWS} GROUP BY __bucket`,
    );
    // Every record has a file group but deletes of keys no file has (nothing to delete); with the bucket index, deletes
    // of keys whose bucket has a file group (Hudi's delete keeps the records its index located).
    const deletesExpected = hashed
      ? ` t JOIN ${HASHED} h USING (__row) JOIN ${HASH_PLAN} hb ON hb.partition = t.__partition AND hb.hash = h.__hash`
      : ' WHERE __file IS NOT NULL';
    const [expected] = await this.query(`SELECT count(*) AS n FROM ${TAGGED}${options.deletes ? deletesExpected : ''}`);
    const staged = spans.reduce((sum, row) => sum + Number(row['n']), 0);
    if (staged !== Number(expected?.['n'] ?? 0)) {
      throw new HudiError(`${Number(expected?.['n'] ?? 0) - staged} records were not assigned to a file group`, {
        fix: 'this is a bug in the bucket plan; nothing was written',
      });
    }
    this.stagedRanges = new Map(spans.map((row) => [Number(row['b']), { lo: Number(row['lo']), hi: Number(row['lo']) + Number(row['n']) }]));
    this.stagedWithBuckets = true;
    await this.replaceRelation(STAGED, 'VIEW', `SELECT __bucket, __key, __partition, __file, __delete FROM ${STAGED_ROWS}`);
    this.bucketCounts = new Map(
      spans.map((row) => [Number(row['b']), { inserts: Number(row['inserts']), updates: Number(row['updates']), deletes: Number(row['deletes']) }]),
    );
  }

  /**
   * Inserts only, in the order of the batch (Hudi's bulk_insert without sorting): the rows sorted by partition and
   * batch row, so each insert range is one contiguous range of positions, read by position, numbered by it. No rank
   * by key: a window over every key and a second sort of the wide rows would cost most of a bulk_insert.
   */
  private async stageInsertsInInputOrder(insertRanges: readonly InsertRange[]): Promise<void> {
    const columns = this.columns.map((c) => `b.${sqlIdentifier(c.name)}`).join(', ');
    await this.run(`DROP TABLE IF EXISTS ${STAGED_ROWS}`);
    await this.run(
      `CREATE TABLE ${STAGED_ROWS} AS SELECT t.__key, t.__partition, ${columns}
       FROM ${TAGGED} t JOIN ${BATCH} b USING (__row) WHERE t.__file IS NULL ORDER BY t.__partition, t.__row`,
    );
    const spans = await this.query(`SELECT __partition AS p, min(rowid) AS lo, count(*) AS n FROM ${STAGED_ROWS} GROUP BY 1`);
    const spanOf = new Map(spans.map((row) => [String(row['p']), { lo: Number(row['lo']), count: Number(row['n']) }]));
    const ranges = new Map<number, { lo: number; hi: number }>();
    const covered = new Map<string, number>();
    for (const range of [...insertRanges].sort((a, b) => a.start - b.start)) {
      const span = spanOf.get(range.partitionPath);
      const next = covered.get(range.partitionPath) ?? 0;
      if (span === undefined || range.start !== next || range.start + range.count > span.count || ranges.has(range.bucket)) {
        throw new HudiError(`insert range ${range.start}+${range.count} of partition ${range.partitionPath} does not match the staged records`, {
          fix: 'this is a bug in the bucket plan; nothing was written',
        });
      }
      ranges.set(range.bucket, { lo: span.lo + range.start, hi: span.lo + range.start + range.count });
      covered.set(range.partitionPath, range.start + range.count);
    }
    const unassigned = [...spanOf].filter(([partition, span]) => (covered.get(partition) ?? 0) !== span.count);
    if (unassigned.length > 0) {
      const records = unassigned.reduce((sum, [partition, span]) => sum + span.count - (covered.get(partition) ?? 0), 0);
      throw new HudiError(`${records} records were not assigned to a file group`, { fix: 'this is a bug in the bucket plan; nothing was written' });
    }
    this.stagedRanges = ranges;
    this.stagedWithBuckets = false;
    // The staged records of every bucket, for the queries that read them all (the record index's changes).
    const perBucket = [...ranges.keys()].map((bucket) => `SELECT * FROM ${this.stagedRowsOf(bucket)}`);
    await this.replaceRelation(STAGED, 'VIEW', perBucket.length === 0 ? `SELECT * FROM ${this.stagedRowsOf(0)}` : perBucket.join(' UNION ALL '));
    this.bucketCounts = new Map([...ranges].map(([bucket, r]) => [bucket, { inserts: r.hi - r.lo, updates: 0, deletes: 0 }]));
  }

  /**
   * One bucket's staged records in write order (a range of positions, zone-mapped), numbered by position (__seq); __ord
   * is an update's place among the stored records.
   */
  private stagedRowsOf(bucket: number): string {
    const { lo, hi } = this.stagedRanges.get(bucket) ?? { lo: 0, hi: 0 };
    const assigned = this.stagedWithBuckets
      ? '__bucket, __key, __partition, __file, __delete, __ord'
      : `${bucket} AS __bucket, __key, __partition, NULL::INTEGER AS __file, false AS __delete, NULL::BIGINT AS __ord`;
    return `(SELECT ${assigned}, (rowid - ${lo})::BIGINT AS __seq, ${this.columns.map((c) => sqlIdentifier(c.name)).join(', ')}
        FROM ${STAGED_ROWS} WHERE rowid >= ${lo} AND rowid < ${hi})`;
  }

  /**
   * The record keys a file group will hold after this write (for the bloom filter and min/max footer keys). Read on
   * a connection of their own, so they can be read while another file group is written (after assignBuckets, which
   * they read; the caller lets every such read settle before closing the session).
   */
  async fileGroupRecordKeys(bucket: number, existingFile: number | undefined): Promise<Iterable<string>> {
    this.side ??= this.instance.connect();
    // The stored keys stay but those deleted; the bucket's other records are updates of stored keys and new keys. Without
    // deletes that is every stored key and the new ones, with no anti-join.
    const deletes = (this.bucketCounts.get(bucket)?.deletes ?? 0) > 0;
    const keys =
      existingFile === undefined
        ? `SELECT __key FROM ${this.stagedRowsOf(bucket)} WHERE NOT __delete`
        : deletes
          ? `SELECT __key FROM ${EXISTING} WHERE __file = ${existingFile} AND __key NOT IN (SELECT __key FROM ${this.stagedRowsOf(bucket)})
             UNION ALL SELECT __key FROM ${this.stagedRowsOf(bucket)} WHERE NOT __delete`
          : `SELECT __key FROM ${EXISTING} WHERE __file = ${existingFile} UNION ALL SELECT __key FROM ${this.stagedRowsOf(bucket)} WHERE __file IS NULL`;
    // Joined by DuckDB and split here: a string per value converted one by one cost more than hashing it.
    const read = async (): Promise<Iterable<string>> =>
      readJoinedValues(await this.side!, `SELECT __key AS value, 0 AS piece, row_number() OVER () AS row FROM (${keys})`);
    // File groups written at once may ask for their keys at once.
    const values = this.sideQueue.then(read, read);
    this.sideQueue = values.catch(() => undefined);
    return values;
  }

  /**
   * The keys a bucket deletes (after assignBuckets): a merge-on-read delete block's records. Those stored in its base
   * file, and with the bucket index every key of the bucket's deletes (Hudi's append handle writes them unchecked).
   */
  async bucketDeletedKeys(bucket: number): Promise<{ recordKey: string; partitionPath: string }[]> {
    const reader = await this.connection.runAndReadAll(`SELECT __key, __partition FROM ${STAGED} WHERE __bucket = ${bucket} AND __delete ORDER BY __key`);
    const [keys = [], partitions = []] = reader.getColumnsJS() as [string[]?, string[]?];
    return keys.map((recordKey, i) => ({ recordKey, partitionPath: partitions[i]! }));
  }

  /**
   * What the write changes in the record index (after assignBuckets): the keys it puts where no file had them
   * (inserts, with their bucket and partition) and the stored keys it deletes. Updates stay in their file group.
   */
  async recordLocationChanges(): Promise<{ inserted: { bucket: number; recordKey: string; partitionPath: string }[]; deleted: string[] }> {
    const inserted = await this.connection.runAndReadAll(`SELECT __bucket, __key, __partition FROM ${STAGED} WHERE NOT __delete AND __file IS NULL`);
    const [buckets = [], keys = [], partitions = []] = inserted.getColumnsJS() as [number[]?, string[]?, string[]?];
    const deleted = await this.connection.runAndReadAll(`SELECT __key FROM ${STAGED} WHERE __delete AND __file IS NOT NULL`);
    return {
      inserted: keys.map((recordKey, i) => ({ bucket: Number(buckets[i]), recordKey, partitionPath: partitions[i]! })),
      deleted: (deleted.getColumnsJS()[0] ?? []) as string[],
    };
  }

  /**
   * Write one file group's new base file as Hudi's merge does: the previous base file's records in their order (meta
   * columns preserved but `_hoodie_file_name`), each updated one replaced where it stands and deleted ones left out,
   * then the new records by key; the records written anew get fresh meta columns, numbered in the order they are
   * written. Only records tagged to this file replace stored ones: an insert (not looked up) of a stored key is
   * written beside it, as Hudi's HoodieConcatHandle does (hoodie.merge.allow.duplicate.on.inserts, true by default).
   * Calls may overlap (after assignBuckets): each runs on a connection of its own.
   */
  async writeFileGroup(spec: FileGroupWrite): Promise<FileGroupWriteResult> {
    const connection = this.idleWriters.pop() ?? (await this.newWriter());
    try {
      return await this.writeFileGroupOn(connection, spec);
    } finally {
      this.idleWriters.push(connection);
    }
  }

  private async newWriter(): Promise<DuckDBConnection> {
    const connection = await this.instance.connect();
    this.writers.push(connection);
    return connection;
  }

  private async writeFileGroupOn(connection: DuckDBConnection, spec: FileGroupWrite): Promise<FileGroupWriteResult> {
    await mkdir(dirname(spec.outputFile), { recursive: true });
    const dataColumns = this.columns.map((c) => c.name);
    const fileName = sqlString(spec.fileName);
    const newRows = `SELECT ${sqlString(spec.commitTime)} AS _hoodie_commit_time,
        ${sqlString(`${spec.commitTime}_${spec.taskPartitionId}_`)} || __seq::VARCHAR AS _hoodie_commit_seqno,
        __key AS _hoodie_record_key, __partition AS _hoodie_partition_path, ${fileName} AS _hoodie_file_name,
        ${dataColumns.map((c) => sqlIdentifier(c)).join(', ')}, (__file IS NULL)::INTEGER AS __src, CASE WHEN __file IS NULL THEN __seq ELSE __ord END AS __ord
      FROM ${this.stagedRowsOf(spec.bucket)} WHERE NOT __delete`;
    let body = newRows;
    if (spec.existingFile !== undefined) {
      const previous = this.existingFiles[spec.existingFile];
      if (previous === undefined) throw new HudiError(`no staged base file #${spec.existingFile}`, { fix: 'this is a bug in the bucket plan' });
      // A file from before the schema evolved lacks the new columns: its rows get NULL (struct casts fill new fields).
      const stored = new Set((await describeColumns(connection, [previous.localPath])).map((c) => c.name));
      const keep = `SELECT _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, ${fileName} AS _hoodie_file_name,
          ${dataColumns.map((c) => this.castToColumn(c, stored.has(c))).join(', ')}, 0 AS __src, file_row_number AS __ord
        FROM read_parquet(${fileListSql([previous.localPath])}, ${READ_OPTIONS}, file_row_number = true)
        WHERE _hoodie_record_key NOT IN (SELECT __key FROM ${this.stagedRowsOf(spec.bucket)} WHERE __file IS NOT NULL)`;
      body = `${keep} UNION ALL ${newRows}`;
    }
    const columnList = [...META_FIELD_NAMES, ...dataColumns].map(sqlIdentifier).join(', ');
    const rowGroupSize = Math.max(1, Math.floor(spec.rowGroupSize));
    await this.run(
      // New rows alone are read in the staged table's order, which is theirs (DuckDB keeps insertion order).
      copyToParquetSql(
        `SELECT ${columnList} FROM (${body})${spec.existingFile === undefined ? '' : ' ORDER BY __src, __ord'}`,
        spec.outputFile,
        rowGroupSize,
        {},
      ),
      spec.outputFile,
      connection,
    );
    const templates = spec.existingFile !== undefined ? [this.existingFiles[spec.existingFile]!.localPath] : spec.typeTemplates;
    // Existing tables: their files' types. A new table, and columns or struct fields new to the table: the written
    // types with Hudi's fixed-length decimals.
    const writtenTypes = withFixedDecimals(parquetTypeTargets([spec.outputFile]));
    const targets = templates.length > 0 ? withNewTypesFrom(parquetTypeTargets(templates), writtenTypes) : writtenTypes;
    await conformParquetTypes(connection, spec.outputFile, targets);
    // Set after the write, not passed to the COPY: a bloom filter of many keys would be a literal of megabytes to parse.
    const keyValues = await spec.keyValues;
    if (Object.keys(keyValues).length > 0) await setFooterKeyValues(spec.outputFile, keyValues);
    const counts = this.bucketCounts.get(spec.bucket) ?? { inserts: 0, updates: 0, deletes: 0 };
    return { rowCount: readFooterSummary(spec.outputFile).numRows, ...counts, bytes: (await stat(spec.outputFile)).size };
  }

  /**
   * A merged file group's changes, after writeFileGroup wrote it: to `beforeFile` the stored rows of the keys the bucket
   * updates or deletes, as the merge read them (cast to the batch's columns), and to `afterFile` the rows it wrote anew
   * (updates and inserts: those of `commitTime`), each with its meta columns. HoodieCDCLogger's old and new records.
   */
  async writeFileGroupChanges(spec: {
    readonly bucket: number;
    readonly existingFile: number;
    readonly outputFile: string;
    readonly commitTime: string;
    readonly beforeFile: string;
    readonly afterFile: string;
  }): Promise<void> {
    const previous = this.existingFiles[spec.existingFile];
    if (previous === undefined) throw new HudiError(`no staged base file #${spec.existingFile}`, { fix: 'this is a bug in the bucket plan' });
    const connection = this.idleWriters.pop() ?? (await this.newWriter());
    try {
      const stored = new Set((await describeColumns(connection, [previous.localPath])).map((c) => c.name));
      const meta = META_FIELD_NAMES.map(sqlIdentifier).join(', ');
      const data = this.columns.map((c) => c.name);
      await this.run(
        copyToParquetSql(
          `SELECT ${meta}, ${data.map((c) => this.castToColumn(c, stored.has(c))).join(', ')}
           FROM read_parquet(${fileListSql([previous.localPath])}, ${READ_OPTIONS})
           WHERE _hoodie_record_key IN (SELECT __key FROM ${this.stagedRowsOf(spec.bucket)} WHERE __file IS NOT NULL)`,
          spec.beforeFile,
          DEFAULT_ROW_GROUP_ROWS,
          {},
        ),
        spec.beforeFile,
        connection,
      );
      await this.run(
        copyToParquetSql(
          `SELECT * FROM read_parquet(${fileListSql([spec.outputFile])}, ${READ_OPTIONS}) WHERE _hoodie_commit_time = ${sqlString(spec.commitTime)}`,
          spec.afterFile,
          DEFAULT_ROW_GROUP_ROWS,
          {},
        ),
        spec.afterFile,
        connection,
      );
    } finally {
      this.idleWriters.push(connection);
    }
  }

  /** Old files may predate a type the batch was cast to, or a column; cast them the same way so UNION ALL lines up. */
  private castToColumn(name: string, stored: boolean): string {
    const column = this.columns.find((c) => c.name === name);
    if (column === undefined) return sqlIdentifier(name);
    return `CAST(${stored ? sqlIdentifier(name) : 'NULL'} AS ${column.type}) AS ${sqlIdentifier(name)}`;
  }

  /** Total bytes and rows of the batch as DuckDB would write them plainly (for benchmarks: the baseline COPY). */
  async copyBatchPlain(outputFile: string): Promise<void> {
    await mkdir(dirname(outputFile), { recursive: true });
    await this.run(`COPY (SELECT * EXCLUDE (__row) FROM ${BATCH}) TO ${sqlString(outputFile)} (FORMAT parquet, COMPRESSION snappy)`, outputFile);
  }
}

/** `__partition IN (...)`; paths holding NUL (no SQL literal can) are matched by that character. */
function partitionInSql(partitions: readonly string[]): string {
  const literal = partitions.filter((p) => !p.includes('\u0000'));
  const parts = literal.length === 0 ? [] : [`__partition IN (${literal.map(sqlString).join(', ')})`];
  if (literal.length < partitions.length) parts.push(`contains(__partition, chr(0))`);
  return `(${parts.join(' OR ')})`;
}

/** Fields of the schema no template has, with their DuckDB types (fields without one are left to the input). */
/**
 * The one gate for the names a batch gives the table's schema (its columns and struct fields, the table's own
 * included): names the table already has are not judged again, only what the batch adds (fieldNameProblems).
 */
function refuseFieldNames(file: string, columns: readonly { name: string; type: DuckDBType }[], stored: readonly { name: string; type: DuckDBType }[]): void {
  const problems = fieldNameProblems(namedFields(columns), new Set(fieldPaths(namedFields(stored))));
  if (problems.length === 0) return;
  throw new ColumnNameError(
    `input column names a Hudi table cannot hold: ${problems.map((problem) => problem.reason).join('; ')}`,
    problems.flatMap((problem) => problem.paths),
    { location: file, fix: fieldNameFix(problems) },
  );
}

/** Nesting beyond MAX_NESTING_DEPTH is refused before any name walk or SQL over the types could fail on it. */
function refuseDeepNesting(file: string, columns: readonly { name: string; type: DuckDBType }[]): void {
  const deepest = deepestNesting(columns);
  if (deepest.depth > MAX_NESTING_DEPTH) throw nestingDepthError(deepest.path, deepest.depth, file);
}

/** The same limit for a JSON-lines input before DuckDB reads it: its reader hangs or dies on values nested thousands deep. */
async function refuseDeepJsonLines(readPath: string, file: string): Promise<void> {
  const deep = await firstTooDeepJsonLine(readPath, MAX_NESTING_DEPTH);
  if (deep !== undefined) throw nestingDepthError(deep.path, deep.depth, `${file}, line ${deep.line}`);
}

function nestingDepthError(path: string, depth: number, location: string): NestingDepthError {
  return new NestingDepthError(path.length > 80 ? `${path.slice(0, 80)}…` : path, depth, MAX_NESTING_DEPTH, {
    location,
    fix: `flatten the value to at most ${MAX_NESTING_DEPTH} levels of structs, lists and maps, or store it as JSON text in a string column; nothing was written`,
  });
}

/** DuckDB types a JSON string may be read as: text to Spark's JSON reader. */
let parsedTextTypeIds: ReadonlySet<DuckDBTypeId> | undefined;

function parsedTextTypes(): ReadonlySet<DuckDBTypeId> {
  if (parsedTextTypeIds !== undefined) return parsedTextTypeIds;
  const { DuckDBTypeId } = duckdb();
  parsedTextTypeIds = new Set<DuckDBTypeId>([
    DuckDBTypeId.DATE,
    DuckDBTypeId.TIME,
    DuckDBTypeId.TIME_TZ,
    DuckDBTypeId.TIMESTAMP,
    DuckDBTypeId.TIMESTAMP_TZ,
    DuckDBTypeId.TIMESTAMP_S,
    DuckDBTypeId.TIMESTAMP_MS,
    DuckDBTypeId.TIMESTAMP_NS,
    DuckDBTypeId.UUID,
    DuckDBTypeId.INTERVAL,
  ]);
  return parsedTextTypeIds;
}

/**
 * The type to read a JSON value as where the table has none (`table` undefined), as Spark's JSON reader infers it:
 * what DuckDB parsed out of a string is the string, and whole numbers are BIGINT (DuckDB makes a column of positive
 * and negative ones HUGEINT, which no Hudi type holds; a value past BIGINT's range is refused as it is read).
 */
function sparkJsonType(inferred: DuckDBType, table: DuckDBType | undefined): DuckDBType {
  const { BIGINT, DuckDBListType, DuckDBMapType, DuckDBStructType, DuckDBTypeId, VARCHAR } = duckdb();
  if (inferred instanceof DuckDBStructType) {
    const tableStruct = table instanceof DuckDBStructType ? table : undefined;
    return new DuckDBStructType(
      inferred.entryNames,
      inferred.entryNames.map((name, index) => {
        const tableIndex = tableStruct?.entryNames.indexOf(name) ?? -1;
        return sparkJsonType(inferred.entryTypes[index]!, tableIndex < 0 ? undefined : tableStruct!.entryTypes[tableIndex]);
      }),
    );
  }
  if (inferred instanceof DuckDBListType)
    return new DuckDBListType(sparkJsonType(inferred.valueType, table instanceof DuckDBListType ? table.valueType : undefined));
  if (inferred instanceof DuckDBMapType) {
    return new DuckDBMapType(inferred.keyType, sparkJsonType(inferred.valueType, table instanceof DuckDBMapType ? table.valueType : undefined));
  }
  if (table !== undefined) return inferred;
  if (inferred.typeId === DuckDBTypeId.HUGEINT || inferred.typeId === DuckDBTypeId.UBIGINT) return BIGINT;
  return parsedTextTypes().has(inferred.typeId) ? VARCHAR : inferred;
}

/**
 * Read types that keep an input's text text where the table has no type for it, as Spark's readers infer types:
 * JSON by sparkJsonType; CSV cells are all strings (Spark's CSV reader without inferSchema, its default), so a
 * new table or column from CSV is typed by a table that has the column, never by what the text looks like.
 * Undefined when none change.
 */
function sparkTextOverrides(
  format: InputFormat,
  input: readonly { name: string; type: DuckDBType }[],
  table: readonly { name: string; type: DuckDBType }[],
): ReadOverrides | undefined {
  const { VARCHAR } = duckdb();
  if (format === 'parquet' || input.length === 0) return undefined;
  const read = input.map((column) => {
    const tableType = table.find((t) => t.name === column.name)?.type;
    return { name: column.name, type: format === 'csv' ? (tableType === undefined ? VARCHAR : column.type) : sparkJsonType(column.type, tableType) };
  });
  const changed = read.filter((column, index) => typeSql(column.type) !== typeSql(input[index]!.type));
  if (changed.length === 0) return undefined;
  // read_json takes the whole column list, read_csv the columns whose type changes.
  return format === 'jsonl' ? read : changed;
}

function schemaOnlyColumns(fields: readonly AvroField[], templateColumns: readonly { name: string }[]): { name: string; type: DuckDBType }[] {
  return fields.flatMap((field) => {
    if ((META_FIELD_NAMES as readonly string[]).includes(field.name) || templateColumns.some((c) => c.name === field.name)) return [];
    const type = duckDbTypeOfAvro(field.type);
    return type === undefined ? [] : [{ name: field.name, type }];
  });
}

/** A new column's type: naive timestamps become UTC timestamps, as for a new table (and as Spark writes them). */
function evolvedColumnType(type: DuckDBType): DuckDBType {
  const { DuckDBTypeId, TIMESTAMPTZ } = duckdb();
  return type.typeId === DuckDBTypeId.TIMESTAMP ? TIMESTAMPTZ : type;
}

/**
 * The table's type widened by the input's struct fields it lacks (at any depth, through lists and maps): the
 * table's fields in their order, then the input's new ones. Other types stay the table's (values are cast to it).
 */
export function widenedType(input: DuckDBType, table: DuckDBType): DuckDBType {
  const { DuckDBListType, DuckDBMapType, DuckDBStructType } = duckdb();
  if (input instanceof DuckDBStructType && table instanceof DuckDBStructType) {
    const kept = table.entryNames.map((name, index) => {
      const inputIndex = input.entryNames.indexOf(name);
      return inputIndex < 0 ? table.entryTypes[index]! : widenedType(input.entryTypes[inputIndex]!, table.entryTypes[index]!);
    });
    const added = input.entryNames.flatMap((name, index) => (table.entryNames.includes(name) ? [] : [{ name, type: input.entryTypes[index]! }]));
    return new DuckDBStructType([...table.entryNames, ...added.map((a) => a.name)], [...kept, ...added.map((a) => a.type)]);
  }
  if (input instanceof DuckDBListType && table instanceof DuckDBListType) return new DuckDBListType(widenedType(input.valueType, table.valueType));
  if (input instanceof DuckDBMapType && table instanceof DuckDBMapType) return new DuckDBMapType(table.keyType, widenedType(input.valueType, table.valueType));
  return table;
}

/** An Avro record with the fields of `columns` it lacks appended (recursively into struct fields it has). */
function evolveRecord(
  record: { name: string; namespace?: string; fields: AvroField[] },
  columns: readonly { name: string; type: DuckDBType }[],
): { name: string; namespace?: string; fields: AvroField[] } {
  const childNamespace = record.namespace === undefined || record.namespace === '' ? record.name : `${record.namespace}.${record.name}`;
  const fields = record.fields.map((field) => {
    const column = columns.find((c) => c.name === field.name);
    return column === undefined ? field : { ...field, type: evolveAvroType(field.type, column.type) };
  });
  for (const column of columns) {
    if (record.fields.some((f) => f.name === column.name)) continue;
    fields.push({ name: column.name, type: ['null', avroTypeOf(column.type, childNamespace, column.name)], default: null });
  }
  return { ...record, fields };
}

/** An existing field's Avro type with the struct fields `type` adds; anything that is not a record inside stays as is. */
function evolveAvroType(avro: unknown, type: DuckDBType): unknown {
  const { DuckDBListType, DuckDBMapType, DuckDBStructType } = duckdb();
  if (Array.isArray(avro)) return avro.map((branch) => (branch === 'null' ? branch : evolveAvroType(branch, type)));
  if (avro === null || typeof avro !== 'object') return avro;
  const node = avro as Record<string, unknown>;
  if (node['type'] === 'record' && Array.isArray(node['fields']) && type instanceof DuckDBStructType) {
    const record = node as unknown as { name: string; namespace?: string; fields: AvroField[] };
    return evolveRecord(
      record,
      type.entryNames.map((name, i) => ({ name, type: type.entryTypes[i]! })),
    );
  }
  if (node['type'] === 'array' && type instanceof DuckDBListType) return { ...node, items: evolveAvroType(node['items'], type.valueType) };
  if (node['type'] === 'map' && type instanceof DuckDBMapType) return { ...node, values: evolveAvroType(node['values'], type.valueType) };
  return avro;
}

/** Explicit read types: every column for JSON lines (read_json takes all or none), the overridden ones for CSV. */
type ReadOverrides = readonly { name: string; type: DuckDBType }[];

function inputSql(file: string, format: InputFormat, overrides?: ReadOverrides): string {
  const path = sqlString(file);
  const types = overrides === undefined ? '' : `{${overrides.map((c) => `${sqlString(c.name)}: ${sqlString(typeSql(c.type))}`).join(', ')}}`;
  switch (format) {
    case 'jsonl':
      return `read_json(${path}, format = 'newline_delimited'${overrides === undefined ? '' : `, columns = ${types}`})`;
    case 'csv':
      return `read_csv(${path}, header = true${overrides === undefined ? '' : `, types = ${types}`})`;
    case 'parquet':
      return `read_parquet(${path}, ${READ_OPTIONS})`;
  }
}

/** The read types that keep the table's text columns the input's text (readType), or undefined when none differ. */
function textReadOverrides(
  format: InputFormat,
  input: readonly { name: string; type: DuckDBType }[],
  table: readonly { name: string; type: DuckDBType }[],
): ReadOverrides | undefined {
  if (format === 'parquet') return undefined;
  const read = input.map((column) => {
    const tableColumn = table.find((t) => t.name === column.name);
    return { name: column.name, type: tableColumn === undefined ? column.type : readType(column.type, tableColumn.type) };
  });
  const changed = read.filter((column, index) => typeSql(column.type) !== typeSql(input[index]!.type));
  if (changed.length === 0) return undefined;
  return format === 'jsonl' ? read : changed;
}

/** A key field (possibly nested, `a.b`) rendered as Hudi renders it into keys and partition paths. */
function keyFieldSql(field: string, columns: readonly BatchColumn[]): string {
  const [top, ...rest] = field.split('.');
  const column = columns.find((c) => c.name === top);
  if (column === undefined) {
    throw new InputError(`key field "${field}" is not a column of the input`, { fix: `input columns: ${columns.map((c) => c.name).join(', ')}` });
  }
  const access = [sqlIdentifier(top!), ...rest.map((part) => sqlString(part))].reduce(
    (acc, part, i) => (i === 0 ? part : `struct_extract(${acc}, ${part})`),
    '',
  );
  const type = rest.length === 0 ? column.type : 'UNKNOWN';
  if (type === 'DATE') return `strftime(${access}, '%Y-%m-%d')`;
  if (type.startsWith('TIMESTAMP')) return `epoch_us(${access})::VARCHAR`;
  return `CAST(${access} AS VARCHAR)`;
}

/** Avro for a DuckDB type, nullable parts as ["null", T] like Spark's AvroConversionUtils; nested records get Spark-style names. */
function avroTypeOf(type: DuckDBType, namespace: string, name: string): unknown {
  const { DuckDBTypeId } = duckdb();
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return 'boolean';
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
      return 'int';
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UINTEGER:
      return 'long';
    case DuckDBTypeId.FLOAT:
      return 'float';
    case DuckDBTypeId.DOUBLE:
      return 'double';
    case DuckDBTypeId.VARCHAR:
      return 'string';
    case DuckDBTypeId.BLOB:
      return 'bytes';
    case DuckDBTypeId.DATE:
      return { type: 'int', logicalType: 'date' };
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ:
      return { type: 'long', logicalType: 'timestamp-micros' };
    case DuckDBTypeId.TIMESTAMP_MS:
      return { type: 'long', logicalType: 'timestamp-millis' };
    case DuckDBTypeId.DECIMAL: {
      const decimal = type as DuckDBDecimalType;
      return {
        type: 'fixed',
        name: 'fixed',
        namespace: `${namespace}.${name}`,
        size: decimalFixedBytes(decimal.width),
        logicalType: 'decimal',
        precision: decimal.width,
        scale: decimal.scale,
      };
    }
    case DuckDBTypeId.LIST: {
      const list = type as DuckDBListType;
      return { type: 'array', items: ['null', avroTypeOf(list.valueType, namespace, name)] };
    }
    case DuckDBTypeId.MAP: {
      const map = type as DuckDBMapType;
      return { type: 'map', values: ['null', avroTypeOf(map.valueType, namespace, name)] };
    }
    case DuckDBTypeId.STRUCT: {
      const struct = type as DuckDBStructType;
      return {
        type: 'record',
        name,
        namespace,
        fields: struct.entryNames.map((entry, i) => ({
          name: entry,
          type: ['null', avroTypeOf(struct.entryTypes[i]!, `${namespace}.${name}`, entry)],
          default: null,
        })),
      };
    }
    default:
      throw new HudiError(`column "${name}" has type ${type.toString()}, which Hudi tables cannot store`, { fix: 'cast it to a supported type in the input' });
  }
}

/** Convert JSON lines to Parquet (naive timestamps become UTC timestamps, as Spark writes them). */
export async function jsonLinesToParquet(input: string, output: string): Promise<void> {
  await refuseDeepJsonLines(input, input);
  const { instance, connection } = await openDuckDb({});
  try {
    await mkdir(dirname(output), { recursive: true });
    const reader = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${inputSql(input, 'jsonl')}`);
    const columns = reader.getRowObjectsJS().map((r) => ({ name: String(r['column_name']), type: String(r['column_type']) }));
    const projection = columns.map((c) =>
      c.type === 'TIMESTAMP' ? `CAST(${sqlIdentifier(c.name)} AS TIMESTAMPTZ) AS ${sqlIdentifier(c.name)}` : sqlIdentifier(c.name),
    );
    await connection.run(
      `COPY (SELECT ${projection.join(', ')} FROM ${inputSql(input, 'jsonl')}) TO ${sqlString(output)} (FORMAT parquet, COMPRESSION snappy)`,
    );
  } catch (cause) {
    throw new HudiError(`cannot convert to Parquet: ${duckdbReason(cause)}`, { location: input, cause });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * An input file's columns (name and type, as the write reads them) and its rows: what decides whether landed objects
 * can share one commit's input (lib/ingest/batch.ts).
 */
export async function inputShape(file: string, format: InputFormat): Promise<{ columns: { name: string; type: string }[]; rows: number }> {
  if (format === 'jsonl') await refuseDeepJsonLines(file, file);
  const { instance, connection } = await openDuckDb({});
  try {
    const described = await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${inputSql(file, format)}`);
    const columns = described.getRowObjectsJS().map((r) => ({ name: String(r['column_name']), type: String(r['column_type']) }));
    const counted = await connection.runAndReadAll(`SELECT count(*) AS n FROM ${inputSql(file, format)}`);
    return { columns, rows: Number(counted.getRowObjectsJS()[0]!['n']) };
  } catch (cause) {
    throw new HudiError(`cannot read the input: ${duckdbReason(cause)}`, { location: file, cause });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Parquet files of one schema (inputShape) as one Parquet file, their rows in the order of the files. */
export async function concatenateParquet(files: readonly string[], output: string): Promise<void> {
  const { instance, connection } = await openDuckDb({});
  try {
    await mkdir(dirname(output), { recursive: true });
    await connection.run('SET preserve_insertion_order = true');
    await connection.run(
      `COPY (SELECT * FROM read_parquet(${fileListSql(files)}, ${READ_OPTIONS})) TO ${sqlString(output)} (FORMAT parquet, COMPRESSION snappy)`,
    );
  } catch (cause) {
    throw new HudiError(`cannot concatenate the Parquet inputs: ${duckdbReason(cause)}`, { location: output, cause });
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
