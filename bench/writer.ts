/**
 * Writer benchmark (not a test): bulk_insert (Hudi's default sort mode NONE, and GLOBAL_SORT) and upsert of N
 * generated records into a local table, beside DuckDB writing the same rows in the same run: Hudi's five meta
 * columns, one folder per `dt` partition, rows ordered by record key within it (as GLOBAL_SORT's and the upsert's
 * new records are); for the upsert, the stored rows merged with the updates
 * (updated keys replaced, the rest kept). Also DuckDB's plain `COPY … TO … (FORMAT parquet)`, the floor.
 * Ratios are wall time and process CPU time (what Lambda bills) over DuckDB's with meta columns. Every measurement is
 * taken in each of `--rounds` rounds, the runs of a round side by side in time: each ratio is the median of the rounds'
 * ratios (their range beside it), so that a slow spell of a shared machine skews one round, not the figure.
 *   npm run bench:writer -- [--records 1000000] [--rounds 3]
 */
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { generateUsers, writeJsonLines } from '../lib/cli/generate.js';
import { jsonLinesToParquet } from '../lib/engine/write.js';
import { openStorage } from '../lib/storage/index.js';
import { writeBatch } from '../lib/writer/write-client.js';
import { median } from './median.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } } });
const records = Number(values.records);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
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

/** Wall and CPU seconds of `run` (CPU: this process, DuckDB's threads included). */
async function timed(run: () => Promise<unknown>): Promise<{ seconds: number; cpuSeconds: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
}

async function duckdb(sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(sql);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Hudi's meta columns over `source`'s rows, as a new file of each partition holds them. */
function withMetaColumns(source: string): string {
  return `SELECT '20260101000000000' AS _hoodie_commit_time,
      '20260101000000000_0_' || (row_number() OVER (PARTITION BY dt ORDER BY id) - 1)::VARCHAR AS _hoodie_commit_seqno,
      CAST(id AS VARCHAR) AS _hoodie_record_key, dt AS _hoodie_partition_path,
      'f-0_0-1-0_20260101000000000.parquet' AS _hoodie_file_name, * FROM ${source}`;
}

const partitionedCopy = (query: string, out: string): string =>
  `COPY (${query} ORDER BY _hoodie_partition_path, _hoodie_record_key) TO '${out}' (FORMAT parquet, COMPRESSION snappy, PARTITION_BY (_hoodie_partition_path), WRITE_PARTITION_COLUMNS true)`;

type Timing = { seconds: number; cpuSeconds: number };

/** One measurement's rounds: median wall and CPU seconds, and the written bytes of its last round. */
function report(name: string, timings: readonly Timing[], bytes: number): void {
  const seconds = median(timings.map((t) => t.seconds));
  const cpuSeconds = median(timings.map((t) => t.cpuSeconds));
  const spread =
    timings.length > 1 ? ` (${Math.min(...timings.map((t) => t.seconds)).toFixed(2)}-${Math.max(...timings.map((t) => t.seconds)).toFixed(2)})` : '';
  console.log(
    `${name.padEnd(44)} ${seconds.toFixed(2).padStart(7)} s${spread} ${cpuSeconds.toFixed(2).padStart(7)} CPU-s  ${Math.round(records / seconds)
      .toLocaleString('en-US')
      .padStart(10)} rows/s  ${(bytes / 1e6 / seconds).toFixed(1).padStart(6)} MB/s (of ${(bytes / 1e6).toFixed(1)} MB Parquet written)`,
  );
}

/** The median over rounds of ours/theirs (wall and CPU), with the rounds' range. */
function ratio(ours: readonly Timing[], theirs: readonly Timing[]): string {
  const of = (pick: (t: Timing) => number): string => {
    const each = ours.map((t, i) => pick(t) / pick(theirs[i]!));
    const range = each.length > 1 ? ` [${Math.min(...each).toFixed(2)}-${Math.max(...each).toFixed(2)}]` : '';
    return `${median(each).toFixed(2)}×${range}`;
  };
  return `${of((t) => t.seconds)} wall, ${of((t) => t.cpuSeconds)} CPU`;
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
  const updatesFile = join(dir, 'updates.parquet');
  await jsonLinesToParquet(updatesJsonl, updatesFile);

  const times = { plain: [] as Timing[], meta: [] as Timing[], merged: [] as Timing[], sorted: [] as Timing[], bulk: [] as Timing[], upserted: [] as Timing[] };
  const bytes = { plain: 0, meta: 0, merged: 0, sorted: 0, bulk: 0, upserted: 0 };
  let updates = 0;
  for (let round = 1; round <= rounds; round++) {
    console.log(`round ${round}/${rounds}…`);
    const here = join(dir, `round-${round}`);
    await mkdir(here, { recursive: true });
    const baseline = join(here, 'baseline.parquet');
    times.plain.push(await timed(() => duckdb(`COPY (SELECT * FROM read_parquet('${input}')) TO '${baseline}' (FORMAT parquet, COMPRESSION snappy)`)));
    bytes.plain = (await stat(baseline)).size;
    const metaOut = join(here, 'duckdb-meta');
    times.meta.push(await timed(() => duckdb(partitionedCopy(withMetaColumns(`read_parquet('${input}')`), metaOut))));
    bytes.meta = await dirBytes(metaOut);
    // The upsert's equivalent: the stored rows merged with the updates, written again.
    const mergedOut = join(here, 'duckdb-merged');
    times.merged.push(
      await timed(() =>
        duckdb(
          partitionedCopy(
            `SELECT * FROM (${withMetaColumns(`read_parquet('${updatesFile}')`)})
             UNION ALL BY NAME
             SELECT * EXCLUDE (_hoodie_partition_path), _hoodie_partition_path FROM read_parquet('${metaOut}/*/*.parquet', hive_partitioning = false) s
             WHERE NOT EXISTS (SELECT 1 FROM read_parquet('${updatesFile}') u WHERE CAST(u.id AS VARCHAR) = s._hoodie_record_key AND u.dt = s._hoodie_partition_path)`,
            mergedOut,
          ),
        ),
      ),
    );
    bytes.merged = await dirBytes(mergedOut);

    // Hudi's default bulk_insert keeps the input's order in each file (hoodie.bulkinsert.sort.mode=NONE); GLOBAL_SORT
    // orders each file by key, as the DuckDB query above does.
    const sortedTable = join(here, 'table-sorted');
    times.sorted.push(
      await timed(() =>
        writeBatch(openStorage(sortedTable), {
          input: { file: input, format: 'parquet' },
          operation: 'bulk_insert',
          properties: new Map([...props, ['hoodie.bulkinsert.sort.mode', 'GLOBAL_SORT']]),
        }),
      ),
    );
    bytes.sorted = await dirBytes(sortedTable);
    const table = join(here, 'table');
    times.bulk.push(
      await timed(() => writeBatch(openStorage(table), { input: { file: input, format: 'parquet' }, operation: 'bulk_insert', properties: props })),
    );
    bytes.bulk = await dirBytes(table);
    let upsert: Awaited<ReturnType<typeof writeBatch>> | undefined;
    times.upserted.push(
      await timed(async () => {
        upsert = await writeBatch(openStorage(table), { input: { file: updatesFile, format: 'parquet' }, operation: 'upsert', properties: props });
      }),
    );
    updates = upsert!.updated;
    bytes.upserted = upsert!.stats.reduce((s, x) => s + x.totalWriteBytes, 0);
    await rm(here, { recursive: true, force: true });
  }

  report('DuckDB COPY (plain, one file)', times.plain, bytes.plain);
  report('DuckDB COPY + meta columns, PARTITION_BY dt', times.meta, bytes.meta);
  report('DuckDB merge + meta columns, PARTITION_BY dt', times.merged, bytes.merged);
  report('hudi-serverless bulk_insert GLOBAL_SORT', times.sorted, bytes.sorted);
  report('hudi-serverless bulk_insert (sort mode NONE)', times.bulk, bytes.bulk);
  report(`hudi-serverless upsert (${updates.toLocaleString('en-US')} updates)`, times.upserted, bytes.upserted);
  console.log(`bulk_insert / DuckDB with meta columns: ${ratio(times.bulk, times.meta)}`);
  console.log(`bulk_insert GLOBAL_SORT / DuckDB with meta columns: ${ratio(times.sorted, times.meta)}`);
  console.log(`upsert / DuckDB merge: ${ratio(times.upserted, times.merged)}`);
  console.log(`bulk_insert / plain COPY: ${ratio(times.bulk, times.plain)}; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
