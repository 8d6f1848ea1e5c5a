/**
 * Clustering throughput and memory (not a test).
 *
 *   npm run bench:clustering -- [--files 200] [--rows-per-file 5000] [--notes-bytes 0] [--outputs 1] [--runs 3] [--threads 2]
 *                               [--big-gb 1] [--memory-limit 2GB | --lambda-memory-mb 2048] [--big-layout z-order] [--skip-big]
 *                               [--no-input-bloom] [--s3]
 *
 * A realistic 1 GB group: --files 100 --rows-per-file 43000 --notes-bytes 230 (about 250 bytes a row); --outputs 2
 * sets the target file size to half the group, so two output files (what Hudi's defaults give a 2 GB group).
 * The realistic table's base files carry Hudi's default bloom filter in their footers, as every file Hudi writes
 * does, so binary copy merges the inputs' footers; --no-input-bloom writes them without one (binary copy then builds
 * each output's footer from its record keys: the "how" column says so). --s3 puts the table on the S3 endpoint of
 * the environment (moto: `node infra/with-local-stack.mjs npm run bench:clustering -- --s3 ...`), so executeGroup
 * stages its inputs from S3 and uploads its outputs there.
 *
 * 1. One clustering group over `--files` small files: our executeGroup (the unit one Lambda runs: stage, order,
 *    write with Hudi footers, markers, upload to a local table) with no sort columns, linear and z-order, beside
 *    DuckDB's own `COPY (SELECT * FROM read_parquet([...]) [ORDER BY ...]) TO ...` on the same files in the same run
 *    (DuckDB has no z-order, so z-order is set beside its ORDER BY of the same columns). Input MB/s, medians of --runs.
 * 2. One group of about --big-gb GB of input under a --memory-limit DuckDB limit (spilling to disk), in a child
 *    process so its peak RSS is its own. --lambda-memory-mb M sizes DuckDB as execute-group does in a Lambda of M MB
 *    (lambdaEngineOptions: limit, threads, allocator, spill directory) instead; template.yaml gives it 2048.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { HUDI_BLOOM_FILTER_DEFAULTS } from '../lib/base-file/bloom-filter.js';
import { resolveClusteringConfig } from '../lib/clustering/config.js';
import { executeGroup } from '../lib/clustering/execute.js';
import { lambdaEngineOptions } from '../lib/clustering/job.js';
import type { GroupExecution } from '../lib/clustering/report.js';
import { schedule } from '../lib/clustering/schedule.js';
import type { SortLayout } from '../lib/clustering/sort-columns.js';
import { openParquetEngine } from '../lib/engine/parquet-engine.js';
import type { ParquetEngineOptions } from '../lib/engine/port.js';
import { StorageLockProvider } from '../lib/lock/storage-lock.js';
import { mapWithConcurrency, openStorage, type Storage, s3ClientFromEnv } from '../lib/storage/index.js';
import { HudiTable } from '../lib/table/table.js';
import { createSmallFilesTable, type SmallFilesTable } from '../test/helpers/small-files-table.js';
import { median } from './median.js';

const { values: flags } = parseArgs({
  options: {
    files: { type: 'string', default: '200' },
    'rows-per-file': { type: 'string', default: '5000' },
    runs: { type: 'string', default: '3' },
    threads: { type: 'string', default: '2' },
    'big-gb': { type: 'string', default: '1' },
    'memory-limit': { type: 'string', default: '2GB' },
    'big-layout': { type: 'string', default: 'z-order' },
    'notes-bytes': { type: 'string', default: '0' },
    outputs: { type: 'string', default: '1' },
    'skip-big': { type: 'boolean', default: false },
    'no-input-bloom': { type: 'boolean', default: false },
    'child-big': { type: 'string' },
    'child-bytes': { type: 'string' },
    'lambda-memory-mb': { type: 'string' },
    s3: { type: 'boolean', default: false },
  },
});
const S3_BUCKET = 'bench-clustering';

const MB = 1024 * 1024;
const SORT_COLUMNS = ['birthday', 'createTime'];
const threads = Number(flags.threads);

type Mode = 'no-sort' | 'linear' | 'z-order';

function configFor(mode: Mode | SortLayout, extra: Record<string, string> = {}) {
  return resolveClusteringConfig({
    event: {
      ...(mode === 'no-sort' ? {} : { 'hoodie.clustering.plan.strategy.sort.columns': SORT_COLUMNS.join(','), 'hoodie.layout.optimize.strategy': mode }),
      // One group holding every file.
      'hoodie.clustering.plan.strategy.max.bytes.per.group': String(64 * 1024 * MB),
      ...extra,
    },
  }).config;
}

/** Copy the table, plan one group, and time executeGroup on it. */
async function ours(
  table: SmallFilesTable,
  mode: Mode | SortLayout,
  engineOptions: ParquetEngineOptions,
): Promise<{ seconds: number; cpuSeconds: number; outputs: number; method: string }> {
  const work = mkdtempSync(join(tmpdir(), 'bench-clustering-'));
  try {
    const dir = join(work, 'table');
    cpSync(table.dir, dir, { recursive: true });
    const storage = flags.s3 ? await tableOnS3(dir) : openStorage(dir);
    const outputs = Number(flags.outputs);
    // --outputs N: a target file size of a 1/N of the group, so N output files (Hudi's defaults give several for a 2 GB group).
    const config = configFor(
      mode,
      outputs > 1 ? { 'hoodie.clustering.plan.strategy.target.file.max.bytes': String(Math.ceil(totalBytes(table) / outputs)) } : {},
    );
    const hudiTable = await HudiTable.open(storage, { mode: 'write' });
    const scheduled = await schedule(hudiTable, config, { lock: new StorageLockProvider(storage), force: true });
    if (scheduled === undefined || scheduled.groups.length !== 1) throw new Error(`expected one group, got ${scheduled?.groups.length ?? 0}`);
    const engine = await openParquetEngine({ threads, ...engineOptions });
    try {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const result = await executeGroup(await hudiTable.reload(), scheduled.instantTime, 0, { engine, tempDir: join(work, 'scratch'), config });
      return {
        seconds: (performance.now() - started) / 1000,
        cpuSeconds: cpuSince(cpu),
        outputs: result.writeStats.length,
        method: methodOf(result.report.execution),
      };
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** --s3: the table copied to a fresh prefix of the bench bucket (on the S3 endpoint of the environment). */
async function tableOnS3(dir: string): Promise<Storage> {
  if (!process.env.AWS_ENDPOINT_URL_S3) throw new Error('--s3 needs AWS_ENDPOINT_URL_S3: run it under `node infra/with-local-stack.mjs`');
  const client = s3ClientFromEnv();
  await client.send(new CreateBucketCommand({ Bucket: S3_BUCKET })).catch(() => undefined);
  const storage = openStorage(`s3://${S3_BUCKET}/table-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`, { s3Client: client });
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  await mapWithConcurrency(files, 8, (entry) => {
    const local = join(entry.parentPath, entry.name);
    return storage.uploadFile(relative(dir, local), local);
  });
  return storage;
}

/** How the group was written, with the reason binary copy was not taken (or its footers were built from keys). */
function methodOf(execution: GroupExecution | undefined): string {
  if (execution === undefined) return '?';
  if (execution.method === 'rewrite') {
    const curve = execution.curveKeys === undefined ? '' : `; curve keys: ${execution.curveKeys === 'engine' ? 'in the engine' : 'ranks'}`;
    return `rewrite (${execution.reason}${execution.split === undefined ? '' : `; ${execution.split}`}${curve})`;
  }
  return `binary copy${execution.footersFromKeys === undefined ? '' : ` (footers from keys: ${execution.footersFromKeys})`}`;
}

/** CPU seconds of this process (every thread: DuckDB's too) since `start`. */
function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

/** A table's base file bytes (the generator's figure, or summed from disk for a table given by path). */
function totalBytes(table: SmallFilesTable): number {
  return table.bytes ?? 0;
}

/** DuckDB alone: one COPY of the same files, optionally ORDER BY the sort columns. */
async function duckdb(table: SmallFilesTable, sorted: boolean): Promise<{ seconds: number; cpuSeconds: number }> {
  const work = mkdtempSync(join(tmpdir(), 'bench-duckdb-'));
  const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const connection = await instance.connect();
  try {
    const files = table.files.map((file) => `'${join(table.dir, file)}'`).join(', ');
    const cpu = process.cpuUsage();
    const started = performance.now();
    await connection.run(
      `COPY (SELECT * FROM read_parquet([${files}])${sorted ? ` ORDER BY ${SORT_COLUMNS.join(', ')}` : ''}) TO '${join(work, 'out.parquet')}' (FORMAT parquet, COMPRESSION snappy)`,
    );
    return { seconds: (performance.now() - started) / 1000, cpuSeconds: cpuSince(cpu) };
  } finally {
    connection.closeSync();
    instance.closeSync();
    rmSync(work, { recursive: true, force: true });
  }
}

const fixed = (value: number, digits = 1): string => value.toFixed(digits);

async function throughput(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'bench-table-'));
  try {
    const files = Number(flags.files);
    const notesBytes = Number(flags['notes-bytes']);
    const table = await createSmallFilesTable({
      dir: join(base, 't'),
      partitions: 1,
      commits: files,
      rowsPerFile: Number(flags['rows-per-file']),
      ...(notesBytes > 0 ? { notesBytes, bloom: flags['no-input-bloom'] ? false : HUDI_BLOOM_FILTER_DEFAULTS } : {}),
    });
    const inputMb = table.bytes / MB;
    console.log(`group of ${table.files.length} files, ${table.rows} rows, ${fixed(inputMb)} MB; ${threads} threads; median of ${flags.runs} run(s)`);
    console.log('mode      ours s  ours CPU s  DuckDB s  DuckDB CPU s  CPU DuckDB/ours  outputs  how');
    for (const mode of ['no-sort', 'linear', 'z-order'] as const) {
      const oursRuns: { seconds: number; cpuSeconds: number }[] = [];
      const duckRuns: { seconds: number; cpuSeconds: number }[] = [];
      let outputs = 0;
      let method = '';
      for (let run = 0; run < Number(flags.runs); run++) {
        const result = await ours(table, mode, {});
        oursRuns.push(result);
        outputs = result.outputs;
        method = result.method;
        duckRuns.push(await duckdb(table, mode !== 'no-sort'));
      }
      const oursSeconds = median(oursRuns.map((run) => run.seconds));
      const oursCpu = median(oursRuns.map((run) => run.cpuSeconds));
      const duckSeconds = median(duckRuns.map((run) => run.seconds));
      const duckCpu = median(duckRuns.map((run) => run.cpuSeconds));
      console.log(
        `${mode.padEnd(8)}  ${fixed(oursSeconds, 2).padStart(6)}  ${fixed(oursCpu, 2).padStart(10)}  ${fixed(duckSeconds, 2).padStart(8)}  ` +
          `${fixed(duckCpu, 2).padStart(12)}  ${fixed(duckCpu / oursCpu, 2).padStart(15)}  ${String(outputs).padStart(7)}  ${method}`,
      );
    }
    console.log(
      "(CPU DuckDB/ours: DuckDB's CPU seconds over ours, above 1 when we use less; its z-order row is its ORDER BY of the same columns: it has no z-order)",
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

/** Child process: cluster the big table's one group and print timing and peak RSS as JSON. */
async function bigChild(dir: string): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-big-scratch-'));
  try {
    const layout = flags['big-layout'] as SortLayout;
    // The table's bytes: --outputs N sets the target file size from them.
    const lambdaMb = flags['lambda-memory-mb'];
    const engineOptions =
      lambdaMb === undefined ? { memoryLimit: flags['memory-limit'], tempDirectory: join(scratch, 'spill') } : lambdaEngineOptions(Number(lambdaMb), scratch);
    const result = await ours({ dir, bytes: Number(flags['child-bytes']) } as SmallFilesTable, layout, engineOptions);
    process.stdout.write(`${JSON.stringify({ ...result, maxRssKb: process.resourceUsage().maxRSS })}\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function bigGroup(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'bench-big-'));
  try {
    // ~230 bytes of filler per row: about 250 bytes of Parquet per row, so 4 M rows per GB, in 100 files.
    const targetBytes = Number(flags['big-gb']) * 1024 * MB;
    const files = 100;
    const rowsPerFile = Math.max(1, Math.ceil(targetBytes / 250 / files));
    const generated = performance.now();
    const table = await createSmallFilesTable({
      dir: join(base, 't'),
      partitions: 1,
      commits: files,
      rowsPerFile,
      notesBytes: 230,
      bloom: flags['no-input-bloom'] ? false : HUDI_BLOOM_FILTER_DEFAULTS,
    });
    console.log(
      `\nbig group: ${table.files.length} files, ${table.rows} rows, ${fixed(table.bytes / MB / 1024, 2)} GB (generated in ${fixed((performance.now() - generated) / 1000)} s)`,
    );
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1]!,
        '--child-big',
        table.dir,
        '--memory-limit',
        flags['memory-limit']!,
        ...(flags['lambda-memory-mb'] === undefined ? [] : ['--lambda-memory-mb', flags['lambda-memory-mb']]),
        '--big-layout',
        flags['big-layout']!,
        '--threads',
        String(threads),
        '--outputs',
        flags.outputs!,
        '--child-bytes',
        String(table.bytes),
      ],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        maxBuffer: 16 * MB,
      },
    );
    if (child.status !== 0) throw new Error(`the big-group run failed (exit ${child.status})`);
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      seconds: number;
      cpuSeconds: number;
      outputs: number;
      maxRssKb: number;
      method: string;
    };
    console.log(
      `${flags['big-layout']}, ${flags['lambda-memory-mb'] === undefined ? `DuckDB memory limit ${flags['memory-limit']}` : `as a ${flags['lambda-memory-mb']} MB execute-group`}: ${fixed(result.seconds)} s (${fixed(result.cpuSeconds)} CPU s), ` +
        `${fixed(table.bytes / MB / result.seconds)} MB/s, ${result.outputs} output file(s), peak RSS ${fixed(result.maxRssKb / 1024 / 1024, 2)} GB; ${result.method}`,
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (flags['child-big'] !== undefined) {
  await bigChild(flags['child-big']);
} else {
  await throughput();
  if (!flags['skip-big']) await bigGroup();
}
