/**
 * Bin-pack clustering (no sort columns) side by side with DuckDB (not a test).
 *
 *   npm run bench:bin-pack -- [--gb 0.5] [--files 50] [--many 10000] [--many-rows 50] [--runs 1] [--threads 2]
 *                             [--skip-big] [--skip-many] [--skip-local] [--skip-function]
 *                             [--function-sort <columns> [--function-layout linear|z-order|hilbert]] [--function-properties k=v,…]
 *   node infra/with-local-stack.mjs npm run bench:bin-pack -- …   (adds section 3, on S3; run `npm run build` first)
 *
 * 1. One group of about --gb GB of input in --files base files (Hudi-sized bloom filters in their footers, ~250
 *    bytes a row): our executeGroup by binary copy of row groups (the default), our executeGroup rewriting the rows
 *    through DuckDB (binary copy off: the path before it), and DuckDB's own `COPY (SELECT * FROM read_parquet([...]))
 *    TO ...` of the same files.
 * 2. One group of --many small files: our executeGroup (rewrite: the row groups are too small to copy) beside
 *    DuckDB's COPY of the same files.
 * 3. Under `node infra/with-local-stack.mjs` (AWS_ENDPOINT_URL_S3 set), the first table again on S3: the bundled plan
 *    handler plans it, and each group runs in the bundled handler the plan names (execute-copy-group or
 *    execute-group, dist/functions), alone in a plain Node process (lambda-invoke.mjs) that is given its function's
 *    template memory: its peak RSS is what that Lambda would hold (Node, the bundle, DuckDB, the transfers' buffers).
 *    --function-sort birthday,createTime [--function-layout z-order] sorts the rows instead (execute-group).
 * Each run is a child process, so its CPU time (every thread: DuckDB's too) and peak RSS are its own. Ratios are
 * DuckDB's CPU seconds over ours (above 1: we use less CPU, which Lambda bills). Medians of --runs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { HUDI_BLOOM_FILTER_DEFAULTS } from '../lib/base-file/bloom-filter.js';
import { resolveClusteringConfig } from '../lib/clustering/config.js';
import { executeGroup } from '../lib/clustering/execute.js';
import { EXECUTOR_FUNCTION } from '../lib/clustering/executor.js';
import { schedule } from '../lib/clustering/schedule.js';
import { openParquetEngine } from '../lib/engine/parquet-engine.js';
import { StorageLockProvider } from '../lib/lock/storage-lock.js';
import { FUNCTIONS } from '../lib/serverless/aws/function-settings.js';
import { type FunctionName, lambdaContext, loadBundledHandler } from '../lib/serverless/local/index.js';
import { applyEnvironment, bundledHandlerFile, quietPowertools } from '../lib/serverless/local/lambda.js';
import type { PlanStepOutput } from '../lib/serverless/steps/clustering/plan.js';
import { openStorage, s3ClientFromEnv } from '../lib/storage/index.js';
import { HudiTable } from '../lib/table/table.js';
import { createLockTable, uploadFiles } from '../test/helpers/serverless.js';
import { createSmallFilesTable, type SmallFilesTable } from '../test/helpers/small-files-table.js';

const { values: flags } = parseArgs({
  options: {
    gb: { type: 'string', default: '0.5' },
    files: { type: 'string', default: '50' },
    many: { type: 'string', default: '10000' },
    'many-rows': { type: 'string', default: '50' },
    runs: { type: 'string', default: '1' },
    threads: { type: 'string', default: '2' },
    'skip-big': { type: 'boolean', default: false },
    'skip-many': { type: 'boolean', default: false },
    'skip-function': { type: 'boolean', default: false },
    'skip-local': { type: 'boolean', default: false },
    /** Section 3 with the rows sorted (a rewrite, in execute-group): columns, and the layout (linear, z-order, hilbert). */
    'function-sort': { type: 'string' },
    'function-layout': { type: 'string', default: 'linear' },
    /** Section 3 with more properties, key=value,… (e.g. binary.copy.min.row.group.bytes above the inputs' row groups). */
    'function-properties': { type: 'string' },
    child: { type: 'string' },
  },
});

const MB = 1024 * 1024;
const threads = Number(flags.threads);

type Runner = 'binary-copy' | 'rewrite' | 'duckdb';

interface Measured {
  seconds: number;
  cpuSeconds: number;
  maxRssKb: number;
  outputs: number;
  method: string;
}

/** Child: one run of `runner` on the table at `dir`. */
async function child(runner: Runner, dir: string, files: readonly string[]): Promise<Measured> {
  const work = mkdtempSync(join(tmpdir(), 'bench-bin-pack-'));
  try {
    if (runner === 'duckdb') {
      const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
      const connection = await instance.connect();
      try {
        const list = files.map((file) => `'${join(dir, file)}'`).join(', ');
        const cpu = process.cpuUsage();
        const started = performance.now();
        await connection.run(`COPY (SELECT * FROM read_parquet([${list}])) TO '${join(work, 'out.parquet')}' (FORMAT parquet, COMPRESSION snappy)`);
        return measured(started, cpu, 1, 'COPY');
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    }
    const table = join(work, 'table');
    cpSync(dir, table, { recursive: true });
    const storage = openStorage(table);
    const config = resolveClusteringConfig({
      event: {
        'hoodie.clustering.plan.strategy.max.bytes.per.group': String(64 * 1024 * MB),
        'hoodie.clustering.plan.strategy.small.file.limit': String(64 * 1024 * MB),
        'hoodie.clustering.plan.strategy.max.files.per.group': '1000000',
        'hoodie.clustering.plan.strategy.binary.copy.enable': String(runner === 'binary-copy'),
      },
    }).config;
    const hudiTable = await HudiTable.open(storage, { mode: 'write' });
    const scheduled = await schedule(hudiTable, config, { lock: new StorageLockProvider(storage), force: true });
    if (scheduled === undefined || scheduled.groups.length !== 1) throw new Error(`expected one group, got ${scheduled?.groups.length ?? 0}`);
    const engine = await openParquetEngine({ threads });
    try {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const result = await executeGroup(await hudiTable.reload(), scheduled.instantTime, 0, { engine, tempDir: join(work, 'scratch'), config });
      const execution = result.report.execution;
      const method =
        execution === undefined
          ? '?'
          : execution.method === 'binary-copy'
            ? `binary copy${execution.footersFromKeys === undefined ? '' : ' (footers from keys)'}`
            : `rewrite (${execution.reason.slice(0, 60)})`;
      return measured(started, cpu, result.writeStats.length, method);
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function measured(started: number, cpu: NodeJS.CpuUsage, outputs: number, method: string): Measured {
  const used = process.cpuUsage(cpu);
  return {
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
    maxRssKb: process.resourceUsage().maxRSS,
    outputs,
    method,
  };
}

/** What one child process is told to run. */
interface ChildSpec {
  readonly runner: Runner;
  readonly dir: string;
  readonly files: readonly string[];
}

/** lambda-invoke.mjs's spec: one bundled handler, one event. */
interface InvocationSpec {
  readonly bundle: string;
  readonly functionName: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly event: unknown;
  readonly environment: Readonly<Record<string, string>>;
}

/** One child process running `spec` (this script's runner, or a Lambda invocation); its measurements. */
function runChild(name: string, tableDir: string, spec: ChildSpec | InvocationSpec): Measured {
  // Through a file: a list of 10,000 paths is longer than one argument may be.
  const specFile = join(tableDir, '..', `${name}.json`);
  writeFileSync(specFile, JSON.stringify(spec));
  const args =
    'bundle' in spec
      ? [join(import.meta.dirname, 'lambda-invoke.mjs'), specFile]
      : [...process.execArgv, process.argv[1]!, '--child', specFile, '--threads', String(threads)];
  const result = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * MB,
  });
  if (result.status !== 0) throw new Error(`${name} failed (exit ${result.status})`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Measured;
}

function run(runner: Runner, table: SmallFilesTable): Measured {
  const runs: Measured[] = [];
  for (let index = 0; index < Number(flags.runs); index++) runs.push(runChild(runner, table.dir, { runner, dir: table.dir, files: table.files }));
  return runs.sort((a, b) => a.cpuSeconds - b.cpuSeconds)[Math.floor(runs.length / 2)]!;
}

/** Section 3: plan the table on S3 with the bundled plan handler, then run each group in its own function's child. */
async function functionReport(table: SmallFilesTable): Promise<void> {
  const client = s3ClientFromEnv();
  const bucket = `bench-bin-pack-${Date.now().toString(36)}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const tablePath = `s3://${bucket}/table`;
  await uploadFiles(table.dir, openStorage(tablePath));
  const environment = { LOCK_TABLE: await createLockTable('bench-bin-pack') };
  quietPowertools();
  const restore = applyEnvironment(environment);
  // Hudi's group and file sizes; every file counts as small, as in the other sections.
  const properties: Record<string, string> = { 'hoodie.clustering.plan.strategy.small.file.limit': String(64 * 1024 * MB) };
  if (flags['function-sort'] !== undefined) {
    properties['hoodie.clustering.plan.strategy.sort.columns'] = flags['function-sort'];
    properties['hoodie.layout.optimize.strategy'] = flags['function-layout'];
  }
  for (const entry of flags['function-properties']?.split(',') ?? []) {
    const [key, value] = entry.split('=');
    if (key === undefined || value === undefined) throw new Error(`--function-properties entry "${entry}": write key=value`);
    properties[key.trim()] = value.trim();
  }
  let planned: PlanStepOutput;
  try {
    planned = (await (await loadBundledHandler('plan'))({ tablePath, properties }, lambdaContext('plan'))) as PlanStepOutput;
  } finally {
    restore();
  }
  if (planned.status !== 'CLUSTER' || planned.mapMode !== 'INLINE') throw new Error(`expected an inline plan, got ${JSON.stringify(planned)}`);
  console.log(
    `\none Lambda per group on S3 (${process.env['AWS_ENDPOINT_URL_S3']}): ${table.files.length} files, ${(table.bytes / MB).toFixed(1)} MB, ${planned.groups.length} group(s)`,
  );
  console.log('group  function            memory MB  wall s   CPU s  peak RSS MB  share of memory  outputs');
  for (const group of planned.groups) {
    const fn: FunctionName = EXECUTOR_FUNCTION[group.executor];
    const memoryMb = FUNCTIONS[fn].memoryMb;
    const result = runChild(`function-${group.index}`, table.dir, {
      bundle: bundledHandlerFile(fn),
      functionName: `hudi-clustering-${fn}`,
      memoryMb,
      timeoutSeconds: FUNCTIONS[fn].timeoutSeconds,
      event: { tablePath, instant: planned.instant, properties: planned.properties, groupIndex: group.index },
      environment,
    });
    console.log(
      `${String(group.index).padStart(5)}  ${fn.padEnd(18)}  ${String(memoryMb).padStart(9)}  ${result.seconds.toFixed(2).padStart(6)}  ${result.cpuSeconds.toFixed(2).padStart(6)}  ` +
        `${(result.maxRssKb / 1024).toFixed(0).padStart(11)}  ${`${((100 * result.maxRssKb) / 1024 / memoryMb).toFixed(0)}%`.padStart(15)}  ${String(result.outputs).padStart(7)}`,
    );
  }
}

function report(title: string, table: SmallFilesTable, runners: readonly Runner[]): void {
  console.log(
    `\n${title}: ${table.files.length} files, ${table.rows} rows, ${(table.bytes / MB).toFixed(1)} MB; ${threads} threads; median of ${flags.runs} run(s)`,
  );
  console.log('run          wall s   CPU s  MB/s (wall)  peak RSS MB  outputs  DuckDB CPU / this  how');
  const results = runners.map((runner) => [runner, run(runner, table)] as const);
  const duck = results.find(([runner]) => runner === 'duckdb')![1];
  for (const [runner, result] of results) {
    console.log(
      `${runner.padEnd(11)}  ${result.seconds.toFixed(2).padStart(6)}  ${result.cpuSeconds.toFixed(2).padStart(6)}  ${(table.bytes / MB / result.seconds).toFixed(1).padStart(11)}  ` +
        `${(result.maxRssKb / 1024).toFixed(0).padStart(11)}  ${String(result.outputs).padStart(7)}  ${(duck.cpuSeconds / result.cpuSeconds).toFixed(2).padStart(17)}  ${result.method}`,
    );
  }
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'bench-bin-pack-tables-'));
  try {
    if (!flags['skip-big']) {
      const files = Number(flags.files);
      const rowsPerFile = Math.max(1, Math.ceil((Number(flags.gb) * 1024 * MB) / 250 / files));
      const generated = performance.now();
      const table = await createSmallFilesTable({
        dir: join(base, 'big'),
        partitions: 1,
        commits: files,
        rowsPerFile,
        notesBytes: 230,
        bloom: HUDI_BLOOM_FILTER_DEFAULTS,
      });
      console.log(`(generated in ${((performance.now() - generated) / 1000).toFixed(0)} s)`);
      if (!flags['skip-local']) report('bin-pack group', table, ['binary-copy', 'rewrite', 'duckdb']);
      if (!flags['skip-function'] && process.env['AWS_ENDPOINT_URL_S3'] !== undefined) await functionReport(table);
      rmSync(table.dir, { recursive: true, force: true });
    }
    if (!flags['skip-many']) {
      const generated = performance.now();
      const table = await createSmallFilesTable({
        dir: join(base, 'many'),
        partitions: 1,
        commits: Number(flags.many),
        rowsPerFile: Number(flags['many-rows']),
      });
      console.log(`(generated in ${((performance.now() - generated) / 1000).toFixed(0)} s)`);
      report('group of many files', table, ['binary-copy', 'duckdb']);
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (flags.child !== undefined) {
  const spec = JSON.parse(readFileSync(flags.child, 'utf8')) as ChildSpec;
  process.stdout.write(`${JSON.stringify(await child(spec.runner, spec.dir, spec.files))}\n`);
} else {
  await main();
}
