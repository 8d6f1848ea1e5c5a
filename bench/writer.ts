/**
 * Writer benchmark (not a test): bulk_insert and upsert of N generated records into a local table, beside DuckDB's
 * plain `COPY … TO … (FORMAT parquet)` of the same data in the same run.
 *   npm run bench:writer -- [--records 1000000]
 */
import { mkdtemp, rm, stat, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { generateUsers, writeJsonLines } from '../lib/generate.js';
import { jsonLinesToParquet } from '../lib/engine/write.js';
import { openStorage } from '../lib/storage/index.js';
import { writeBatch } from '../lib/writer/write-client.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '1000000' } } });
const records = Number(values.records);
const dir = await mkdtemp(join(tmpdir(), 'hudi-bench-writer-'));
const props = new Map([
  ['hoodie.table.name', 'bench_users'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
]);

async function dirBytes(path: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(path, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.parquet')) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

function report(name: string, seconds: number, bytes: number): void {
  console.log(
    `${name.padEnd(34)} ${seconds.toFixed(2).padStart(7)} s  ${Math.round(records / seconds)
      .toLocaleString('en-US')
      .padStart(10)} rows/s  ${(bytes / 1e6 / seconds).toFixed(1).padStart(6)} MB/s (of ${(bytes / 1e6).toFixed(1)} MB Parquet written)`,
  );
}

try {
  console.log(`generating ${records.toLocaleString('en-US')} records…`);
  const jsonl = join(dir, 'input.jsonl');
  await writeJsonLines(jsonl, generateUsers({ count: records, seed: 1, days: 10 }));
  const input = join(dir, 'input.parquet');
  await jsonLinesToParquet(jsonl, input);
  const updatesJsonl = join(dir, 'updates.jsonl');
  await writeJsonLines(
    updatesJsonl,
    [...generateUsers({ count: records, seed: 1, days: 10 })].map((u) => ({
      ...u,
      name: `${u.name}-v2`,
      createTime: u.createTime.replace(/\d\d:\d\d$/, '59:59'),
    })),
  );
  const updates = join(dir, 'updates.parquet');
  await jsonLinesToParquet(updatesJsonl, updates);

  // Baseline: DuckDB alone copying the same data to one Parquet file.
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  let started = performance.now();
  await connection.run(`COPY (SELECT * FROM read_parquet('${input}')) TO '${join(dir, 'baseline.parquet')}' (FORMAT parquet, COMPRESSION snappy)`);
  const baselineSeconds = (performance.now() - started) / 1000;
  report('DuckDB COPY … TO … (FORMAT parquet)', baselineSeconds, (await stat(join(dir, 'baseline.parquet'))).size);
  connection.closeSync();
  instance.closeSync();

  const table = join(dir, 'table');
  started = performance.now();
  await writeBatch(openStorage(table), { input: { file: input, format: 'parquet' }, operation: 'bulk_insert', properties: props });
  const bulkSeconds = (performance.now() - started) / 1000;
  const bulkBytes = await dirBytes(table);
  report('hudi-serverless bulk_insert', bulkSeconds, bulkBytes);

  started = performance.now();
  const upsert = await writeBatch(openStorage(table), { input: { file: updates, format: 'parquet' }, operation: 'upsert', properties: props });
  const upsertSeconds = (performance.now() - started) / 1000;
  report(
    `hudi-serverless upsert (${upsert.updated.toLocaleString('en-US')} updates)`,
    upsertSeconds,
    upsert.stats.reduce((s, x) => s + x.totalWriteBytes, 0),
  );
  console.log(
    `bulk_insert / DuckDB COPY time ratio: ${(bulkSeconds / baselineSeconds).toFixed(2)}×; upsert / COPY: ${(upsertSeconds / baselineSeconds).toFixed(2)}×; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
