/**
 * Compaction benchmark (not a test): a merge-on-read table of N generated records (bulk_insert, then the table type
 * switched to MERGE_ON_READ) with one log file per file group holding updates of a fraction of its records; our
 * compaction (schedule + run) beside DuckDB merging the same base files with the same updates (as Parquet) in the same
 * run. Throughput is MB of base + log input per second (the same input bytes for both).
 *   npm run bench:compaction -- [--records 200000] [--update-fraction 0.3]
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { AVRO_SCHEMA_FOOTER_KEY } from '../lib/base-file/footer.js';
import { generateUsers, writeJsonLines } from '../lib/cli/generate.js';
import { compactionConfigFrom } from '../lib/compaction/config.js';
import { runCompaction } from '../lib/compaction/execute.js';
import { scheduleCompaction } from '../lib/compaction/schedule.js';
import { openParquetEngine } from '../lib/engine/parquet-engine.js';
import type { Row } from '../lib/engine/row-format.js';
import { jsonLinesToParquet } from '../lib/engine/write.js';
import { lockProviderFor } from '../lib/lock/index.js';
import { avroDataBlock, writeLogFile } from '../lib/log-format/index.js';
import { openStorage } from '../lib/storage/index.js';
import { HudiTable } from '../lib/table/table.js';
import { serializeCommitMetadata } from '../lib/timeline/commit-metadata.js';
import { writeBatch } from '../lib/writer/write-client.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '200000' }, 'update-fraction': { type: 'string', default: '0.3' } } });
const records = Number(values.records);
const fraction = Number(values['update-fraction']);
const dir = await mkdtemp(join(tmpdir(), 'hudi-bench-compaction-'));
const props = new Map([
  ['hoodie.table.name', 'bench_mor'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
]);
const mb = (bytes: number) => bytes / 1024 / 1024;

/** A row (row-format values) as the Avro record of the base file's schema: top-level dates, timestamps and longs. */
function toAvro(schemaText: string, row: Row): Record<string, unknown> {
  const fields = (JSON.parse(schemaText) as { fields: { name: string; type: unknown }[] }).fields;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = row[field.name] ?? null;
    const type = (Array.isArray(field.type) ? field.type.find((t) => t !== 'null') : field.type) as string | { type: string; logicalType?: string };
    const logical = typeof type === 'object' ? type.logicalType : undefined;
    const base = typeof type === 'object' ? type.type : type;
    if (value === null) out[field.name] = null;
    else if (logical === 'date') out[field.name] = Math.round(Date.parse(`${String(value)}T00:00:00Z`) / 86_400_000);
    else if (logical === 'timestamp-micros') out[field.name] = BigInt(Date.parse(String(value))) * 1000n;
    else if (logical === 'timestamp-millis') out[field.name] = BigInt(Date.parse(String(value)));
    else if (base === 'long') out[field.name] = BigInt(value as number);
    else out[field.name] = value;
  }
  return out;
}

try {
  const jsonl = join(dir, 'input.jsonl');
  await writeJsonLines(jsonl, generateUsers({ count: records, seed: 1, days: 10 }));
  const input = join(dir, 'input.parquet');
  await jsonLinesToParquet(jsonl, input);
  const tablePath = join(dir, 'table');
  const storage = openStorage(tablePath);
  await writeBatch(storage, { input: { file: input, format: 'parquet' }, operation: 'bulk_insert', properties: props });
  const propsFile = join(tablePath, '.hoodie', 'hoodie.properties');
  await writeFile(propsFile, (await readFile(propsFile, 'utf8')).replace('hoodie.table.type=COPY_ON_WRITE', 'hoodie.table.type=MERGE_ON_READ'));

  // One delta commit: per file group a log file with an Avro data block updating `fraction` of its records.
  const deltaTime = '29990101000000000';
  const engine = await openParquetEngine();
  const view = await (await HudiTable.open(storage)).fileSystemView();
  const updateFiles: string[] = [];
  let baseBytes = 0;
  let logBytes = 0;
  let updated = 0;
  for (const [index, slice] of view.latestMergedSlices().entries()) {
    const base = join(tablePath, slice.baseFile!.path);
    baseBytes += slice.baseFile!.size;
    const footer = await engine.readFooter(base);
    const schema = footer.keyValues[AVRO_SCHEMA_FOOTER_KEY]!;
    const rows = (await engine.readRows([base])).rows.filter((_, i) => i % Math.round(1 / fraction) === 0);
    const changed: Row[] = rows.map((row, i) => ({
      ...row,
      _hoodie_commit_time: deltaTime,
      _hoodie_commit_seqno: `${deltaTime}_${index}_${i}`,
      name: `${String(row['name'])}-v2`,
    }));
    const avroRecords = changed.map((row) => toAvro(schema, row));
    const written = await writeLogFile(storage, {
      partitionPath: slice.partitionPath,
      fileId: slice.fileId,
      baseInstant: slice.baseInstantTime,
      writeToken: '0-1-1',
      blocks: [avroDataBlock({ instantTime: deltaTime, schema, records: avroRecords, longs: 'bigint' })],
    });
    logBytes += written.size;
    updated += changed.length;
    const updatesJsonl = join(dir, `updates-${index}.jsonl`);
    await writeFile(updatesJsonl, changed.map((row) => JSON.stringify(row)).join('\n') + '\n');
    const updatesParquet = join(dir, `updates-${index}.parquet`);
    await jsonLinesToParquet(updatesJsonl, updatesParquet);
    updateFiles.push(base, updatesParquet);
  }
  await engine.close();
  for (const suffix of ['deltacommit.requested', 'deltacommit.inflight']) await storage.put(`.hoodie/${deltaTime}.${suffix}`, '');
  await storage.put(
    `.hoodie/${deltaTime}.deltacommit`,
    serializeCommitMetadata({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' }),
  );
  const inputMb = mb(baseBytes + logBytes);
  console.log(
    `${records.toLocaleString('en-US')} records in ${view.latestMergedSlices().length} file groups: ${mb(baseBytes).toFixed(1)} MB base + ${mb(logBytes).toFixed(1)} MB logs (${updated.toLocaleString('en-US')} updates); ${availableParallelism()} cores`,
  );

  // Baseline: DuckDB merging each base file with its updates (anti-join on the key, union), one run.
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  let started = performance.now();
  for (let i = 0; i < updateFiles.length; i += 2) {
    const [base, updates] = [updateFiles[i]!, updateFiles[i + 1]!];
    await connection.run(
      `COPY (SELECT b.* FROM read_parquet('${base}') b ANTI JOIN read_parquet('${updates}') u USING (_hoodie_record_key) UNION ALL BY NAME SELECT * FROM read_parquet('${updates}')) TO '${join(dir, `duckdb-${i}.parquet`)}' (FORMAT parquet, COMPRESSION snappy)`,
    );
  }
  const duckSeconds = (performance.now() - started) / 1000;
  connection.closeSync();
  instance.closeSync();

  const table = await HudiTable.open(storage);
  const lock = lockProviderFor(table.config.properties, table.config.name, storage);
  started = performance.now();
  const scheduled = await scheduleCompaction(table, compactionConfigFrom(new Map(), 'bench'), { lock, force: true });
  const result = await runCompaction(await table.reload(), scheduled!.instantTime, { lock });
  const oursSeconds = (performance.now() - started) / 1000;
  const written = result.writeStats.reduce((sum, s) => sum + s.fileSizeInBytes, 0);
  console.log(
    `DuckDB merge (anti-join + union, COPY)   ${duckSeconds.toFixed(2).padStart(7)} s  ${(inputMb / duckSeconds).toFixed(1).padStart(7)} MB/s of input`,
  );
  console.log(
    `hudi-serverless compaction (schedule+run) ${oursSeconds.toFixed(2).padStart(7)} s  ${(inputMb / oursSeconds).toFixed(1).padStart(7)} MB/s of input, ${mb(written).toFixed(1)} MB written`,
  );
  console.log(
    `compaction / DuckDB time ratio: ${(oursSeconds / duckSeconds).toFixed(1)}×; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB; input ${(await stat(input)).size} B Parquet`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
