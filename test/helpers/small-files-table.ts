/**
 * A copy-on-write table (v6) of many small base files, for clustering tests and benchmarks, written without the
 * table writer: DuckDB writes each base file with Hudi's meta columns and footer (hudiFooter), and the timeline gets
 * one INSERT commit per batch (one new file group per partition per commit). Rows are seed-004 users: id, name,
 * birthday (date), createTime (timestamp millis), position, notes (filler), partitioned by dt (hive style).
 */
import { createHash } from 'node:crypto';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { BloomFilterOptions } from '../../lib/base-file/bloom-filter.js';
import { hudiFooter } from '../../lib/base-file/footer.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { joinPartitionPath } from '../../lib/table/file-system-view.js';
import { createTable } from '../../lib/table/init.js';
import { type AvroRecordSchema, withMetaFields } from '../../lib/table/schema.js';
import { newWriteStat, serializeCommitMetadata, type WriteStat } from '../../lib/timeline/commit-metadata.js';
import { formatInstantTime } from '../../lib/timeline/instant.js';

export const USERS_SCHEMA: AvroRecordSchema = {
  type: 'record',
  name: 'users_record',
  namespace: 'hoodie.users',
  fields: [
    { name: 'id', type: ['null', 'int'], default: null },
    { name: 'name', type: ['null', 'string'], default: null },
    { name: 'birthday', type: ['null', { type: 'int', logicalType: 'date' }], default: null },
    { name: 'createTime', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }], default: null },
    { name: 'position', type: ['null', 'string'], default: null },
    { name: 'notes', type: ['null', 'string'], default: null },
    { name: 'dt', type: ['null', 'string'], default: null },
  ],
};

export interface SmallFilesTableOptions {
  /** Local directory of the table (created). */
  readonly dir: string;
  readonly partitions: number;
  /** Each commit writes one base file into every partition. */
  readonly commits: number;
  readonly rowsPerFile: number;
  readonly seed?: number;
  /** Bytes of filler text per row (`notes`), to make big files from fewer rows. */
  readonly notesBytes?: number;
  /** Bloom filter of the input files (small by default: clustering never reads it); false writes none. */
  readonly bloom?: Partial<BloomFilterOptions> | false;
  /** Commits are one second apart from this time. */
  readonly start?: Date;
  /** The file id of a commit's file group in a partition (default: a UUID-like id from a hash). */
  readonly fileIdOf?: (commit: number, partition: number) => string;
}

export interface SmallFilesTable {
  readonly dir: string;
  readonly partitions: readonly string[];
  readonly instants: readonly string[];
  /** Base files relative to the table root. */
  readonly files: readonly string[];
  readonly rows: number;
  readonly bytes: number;
  /** Table schema as commits record it (without meta fields). */
  readonly schema: string;
}

const NAMES = ['Alice', 'Bob', 'Carol', 'Diana', 'Erik', 'Fatima', 'Gao', 'Hana', 'Ivan', 'Jun', 'Kofi', 'Lena', 'Mateo', 'Nia', 'Omar', 'Priya'];
const POSITIONS = ['engineer', 'analyst', 'designer', 'manager', 'director', 'accountant', 'recruiter', 'scientist', 'support', 'sales'];

function fileIdOf(seed: number, commit: number, partition: number): string {
  const hex = createHash('sha1').update(`small-files/${seed}/${commit}/${partition}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}-0`;
}

/**
 * createTime spreads over 24 years (dt is the day the row was ingested): Hudi's curves map dates and timestamps
 * alike to epoch milliseconds, so birthday (1960–2003) and createTime then span similar bit widths and a z-order or
 * hilbert curve interleaves both (a one-day createTime range would leave the curve ordering by birthday alone).
 */
const CREATE_TIME_SPAN_MS = 24 * 365 * 86_400_000;

const sql = (text: string): string => `'${text.replaceAll("'", "''")}'`;

export async function createSmallFilesTable(options: SmallFilesTableOptions): Promise<SmallFilesTable> {
  const seed = options.seed ?? 7;
  const start = options.start ?? new Date(Date.UTC(2024, 0, 1));
  const storage = new LocalStorage(options.dir);
  await createTable(storage, {
    tableName: 'users',
    recordKeyFields: ['id'],
    partitionFields: ['dt'],
    precombineField: 'createTime',
    hiveStylePartitioning: true,
  });
  const schemaText = JSON.stringify(USERS_SCHEMA);
  const schemaWithMeta = JSON.stringify(withMetaFields(USERS_SCHEMA));
  const partitionValues = Array.from({ length: options.partitions }, (_, index) => new Date(Date.UTC(2024, 0, 1 + index)).toISOString().slice(0, 10));
  const partitions = partitionValues.map((value) => `dt=${value}`);
  const instants = Array.from({ length: options.commits }, (_, index) => formatInstantTime(new Date(start.getTime() + index * 1000)));
  for (const partition of partitions) {
    await mkdir(join(options.dir, partition), { recursive: true });
    await writeFile(
      join(options.dir, partition, '.hoodie_partition_metadata'),
      `#partition metadata\n#${start.toUTCString()}\ncommitTime=${instants[0]}\npartitionDepth=1\n`,
    );
  }

  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(`SET TimeZone = 'UTC'`);
  const files: string[] = [];
  let bytes = 0;
  try {
    for (const [commit, instant] of instants.entries()) {
      const stats: Record<string, WriteStat[]> = {};
      for (const [partitionIndex, partition] of partitions.entries()) {
        const fileId = options.fileIdOf?.(commit, partitionIndex) ?? fileIdOf(seed, commit, partitionIndex);
        const fileName = `${fileId}_${partitionIndex}-${commit + 1}-${commit + 1}_${instant}.parquet`;
        const relative = joinPartitionPath(partition, fileName);
        const firstId = (commit * options.partitions + partitionIndex) * options.rowsPerFile + 1;
        const keys = Array.from({ length: options.rowsPerFile }, (_, row) => String(firstId + row));
        const footer =
          options.bloom === false
            ? { 'parquet.avro.schema': schemaWithMeta, 'writer.model.name': 'avro' }
            : hudiFooter(keys, schemaWithMeta, { bloom: { numEntries: 1000, fpp: 0.001, maxEntries: 10000, ...options.bloom } });
        const kv = Object.entries(footer)
          .map(([key, value]) => `${sql(key)}: ${sql(value)}`)
          .join(', ');
        // Distinct md5s per row: filler that does not compress away.
        const pieces = Array.from({ length: Math.ceil((options.notesBytes ?? 0) / 32) }, (_, piece) => `md5(id::VARCHAR || '/${piece}')`);
        const notes = options.notesBytes ? `substr(concat(${pieces.join(', ')}), 1, ${options.notesBytes})` : 'NULL::VARCHAR';
        await connection.run(
          `COPY (
             SELECT ${sql(instant)} AS _hoodie_commit_time,
                    ${sql(`${instant}_${partitionIndex}_`)} || (id - ${firstId}) AS _hoodie_commit_seqno,
                    id::VARCHAR AS _hoodie_record_key,
                    ${sql(partition)} AS _hoodie_partition_path,
                    ${sql(fileName)} AS _hoodie_file_name,
                    id::INTEGER AS id,
                    [${NAMES.map(sql).join(', ')}][1 + (hash(id, ${seed}, 1) % ${NAMES.length})::INTEGER] AS name,
                    (DATE '1960-01-01' + (hash(id, ${seed}, 2) % 16000)::INTEGER) AS birthday,
                    (TIMESTAMP '2000-01-01' + to_milliseconds((hash(id, ${seed}, 3) % ${CREATE_TIME_SPAN_MS})::BIGINT))::TIMESTAMP_MS AS createTime,
                    [${POSITIONS.map(sql).join(', ')}][1 + (hash(id, ${seed}, 4) % ${POSITIONS.length})::INTEGER] AS position,
                    ${notes} AS notes,
                    ${sql(partitionValues[partitionIndex]!)} AS dt
             FROM range(${firstId}, ${firstId + options.rowsPerFile}) AS t(id)
           ) TO ${sql(join(options.dir, relative))} (FORMAT parquet, COMPRESSION snappy, KV_METADATA {${kv}})`,
        );
        const size = (await stat(join(options.dir, relative))).size;
        bytes += size;
        files.push(relative);
        (stats[partition] ??= []).push(
          newWriteStat({
            fileId,
            path: relative,
            partitionPath: partition,
            numWrites: options.rowsPerFile,
            numInserts: options.rowsPerFile,
            totalWriteBytes: size,
            fileSizeInBytes: size,
          }),
        );
      }
      await storage.put(`.hoodie/${instant}.commit.requested`, '');
      await storage.put(`.hoodie/${instant}.inflight`, '');
      await storage.put(
        `.hoodie/${instant}.commit`,
        serializeCommitMetadata({ partitionToWriteStats: stats, compacted: false, extraMetadata: { schema: schemaText }, operationType: 'INSERT' }),
      );
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return { dir: options.dir, partitions, instants, files, rows: options.partitions * options.commits * options.rowsPerFile, bytes, schema: schemaText };
}
