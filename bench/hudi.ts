/**
 * Hudi 0.15's own clustering (Spark local[2], `CALL run_clustering`) beside ours, on the same table with the same
 * configuration, in one run (not a test).
 *
 *   HUDI_TOOLCHAIN_DIR=… npm run bench:hudi -- [--gb 0.25] [--files 40] [--layouts none,z-order] [--threads 2]
 *
 * The table is --gb of rows (about 250 bytes each) in --files base files, written by Hudi on Spark (one bulk_insert);
 * each side clusters its own copy into one group (schedule, execute, commit).
 * Ours runs in a child process (its CPU: every thread, DuckDB's too); Spark's CPU is the harness's process tree
 * (Python and the JVM) over the CALL alone, with the SparkSession already started. Ratios are Spark's CPU seconds
 * over ours (5 means ours used a fifth). The metadata table is off on both sides (ours: the table has none).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveClusteringConfig } from '../lib/clustering/config.js';
import { runClusteringJob } from '../lib/clustering/job.js';
import { openParquetEngine } from '../lib/engine/parquet-engine.js';
import { StorageLockProvider } from '../lib/lock/storage-lock.js';
import { openStorage } from '../lib/storage/index.js';
import { HudiTable } from '../lib/table/table.js';
import { startHudi } from '../test/helpers/hudi.js';
import { descendantsCpuSeconds } from './process-cpu.js';

const { values: flags } = parseArgs({
  options: {
    gb: { type: 'string', default: '0.25' },
    files: { type: 'string', default: '40' },
    layouts: { type: 'string', default: 'none,z-order' },
    threads: { type: 'string', default: '2' },
    child: { type: 'string' },
    layout: { type: 'string' },
  },
});

const MB = 1024 * 1024;
const SORT_COLUMNS = ['birthday', 'createTime'];
type Layout = 'none' | 'linear' | 'z-order' | 'hilbert';

/** The clustering keys both sides get: one group of every file, Hudi's default 1 GB target file size. */
const GROUP_KEYS = {
  'hoodie.clustering.plan.strategy.max.bytes.per.group': String(64 * 1024 * MB),
  'hoodie.clustering.plan.strategy.small.file.limit': String(64 * 1024 * MB),
  'hoodie.clustering.plan.strategy.max.num.groups': '1',
  'hoodie.metadata.enable': 'false',
};

interface Measured {
  seconds: number;
  cpuSeconds: number;
  maxRssKb?: number;
  outputs: number;
}

/** Child: our scheduleAndExecute on the table at `dir`. */
async function oursChild(dir: string, layout: Layout): Promise<Measured> {
  const storage = openStorage(dir);
  const config = resolveClusteringConfig({
    event: {
      ...GROUP_KEYS,
      'hoodie.clustering.plan.strategy.max.files.per.group': '1000000',
      ...(layout === 'none' ? {} : { 'hoodie.clustering.plan.strategy.sort.columns': SORT_COLUMNS.join(','), 'hoodie.layout.optimize.strategy': layout }),
    },
  }).config;
  const engine = await openParquetEngine({ threads: Number(flags.threads) });
  const scratch = mkdtempSync(join(tmpdir(), 'bench-hudi-scratch-'));
  try {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
      mode: 'scheduleAndExecute',
      config,
      lock: new StorageLockProvider(storage),
      engine,
      force: true,
      tempDir: scratch,
    });
    const used = process.cpuUsage(cpu);
    if (result.commit?.outcome !== 'committed') throw new Error(`our clustering did not commit (${JSON.stringify(result.commit?.outcome)})`);
    return {
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
      maxRssKb: process.resourceUsage().maxRSS,
      outputs: Object.values(result.commit.metadata.partitionToWriteStats).reduce((total, stats) => total + stats.length, 0),
    };
  } finally {
    await engine.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

function ours(dir: string, layout: Layout): Measured {
  const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--child', dir, '--layout', layout, '--threads', String(flags.threads)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * MB,
  });
  if (child.status !== 0) throw new Error(`our run failed (exit ${child.status})`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Measured;
}

async function main(): Promise<void> {
  const layouts = flags.layouts!.split(',').map((name) => name.trim()) as Layout[];
  const base = mkdtempSync(join(tmpdir(), 'bench-hudi-'));
  const hudi = await startHudi({ conf: { 'spark.driver.memory': '2g' } });
  try {
    // Written by Hudi itself (one bulk_insert, a file per Spark partition), so both sides start from Hudi's files.
    const files = Number(flags.files);
    const rows = Math.max(files, Math.ceil((Number(flags.gb) * 1024 * MB) / 250));
    const tableDir = join(base, 'table');
    const generated = performance.now();
    await hudi.sql(
      `CREATE TABLE bench_users USING hudi LOCATION '${tableDir}' PARTITIONED BY (dt)
       TBLPROPERTIES (type = 'cow', primaryKey = 'id', preCombineField = 'createTime', 'hoodie.metadata.enable' = 'false',
                      'hoodie.datasource.write.hive_style_partitioning' = 'true', 'hoodie.bulkinsert.sort.mode' = 'NONE')
       AS SELECT /*+ REPARTITION(${files}) */ CAST(id AS INT) AS id, concat('user_', id) AS name,
                 date_add(DATE'1950-01-01', CAST(pmod(hash(id), 25000) AS INT)) AS birthday,
                 timestamp_seconds(1600000000 + pmod(hash(id, 1), 100000000)) AS createTime,
                 element_at(array('engineer', 'manager', 'analyst', 'designer'), CAST(pmod(id, 4) + 1 AS INT)) AS position,
                 substr(concat(sha2(CAST(id AS STRING), 512), sha2(CAST(id + 1 AS STRING), 512)), 1, 230) AS notes,
                 '2024-01-01' AS dt
          FROM range(${rows})`,
    );
    const baseFiles = listParquet(tableDir);
    const tableBytes = baseFiles.reduce((total, file) => total + statSync(join(tableDir, file)).size, 0);
    console.log(`(written by Spark in ${((performance.now() - generated) / 1000).toFixed(0)} s)`);
    console.log(`table: ${baseFiles.length} files, ${rows} rows, ${(tableBytes / MB).toFixed(1)} MB; ours on ${flags.threads} DuckDB threads, Spark local[2]`);
    console.log('layout    side   wall s   CPU s  peak RSS MB  outputs  Spark CPU / ours');
    for (const layout of layouts) {
      const oursDir = join(base, `ours-${layout}`);
      const sparkDir = join(base, `spark-${layout}`);
      cpSync(tableDir, oursDir, { recursive: true });
      cpSync(tableDir, sparkDir, { recursive: true });
      const mine = ours(oursDir, layout);
      const options = Object.entries(GROUP_KEYS)
        .map(([key, value]) => `${key}=${value}`)
        .join(',');
      const order = layout === 'none' ? '' : `, order => '${SORT_COLUMNS.join(',')}', order_strategy => '${layout}'`;
      const cpuBefore = descendantsCpuSeconds();
      const started = performance.now();
      await hudi.sql(`CALL run_clustering(path => '${sparkDir}', op => 'scheduleAndExecute'${order}, options => '${options}')`);
      const spark: Measured = {
        seconds: (performance.now() - started) / 1000,
        cpuSeconds: descendantsCpuSeconds() - cpuBefore,
        outputs: listParquet(sparkDir).filter((file) => !baseFiles.includes(file)).length,
      };
      for (const [side, result] of [
        ['ours', mine],
        ['Hudi', spark],
      ] as const) {
        console.log(
          `${layout.padEnd(8)}  ${side.padEnd(5)}  ${result.seconds.toFixed(2).padStart(6)}  ${result.cpuSeconds.toFixed(2).padStart(6)}  ` +
            `${result.maxRssKb === undefined ? '(JVM)'.padStart(11) : (result.maxRssKb / 1024).toFixed(0).padStart(11)}  ${String(result.outputs).padStart(7)}  ` +
            `${side === 'ours' ? (spark.cpuSeconds / mine.cpuSeconds).toFixed(2).padStart(16) : ''}`,
        );
      }
      rmSync(oursDir, { recursive: true, force: true });
      rmSync(sparkDir, { recursive: true, force: true });
    }
  } finally {
    await hudi.close();
    rmSync(base, { recursive: true, force: true });
  }
}

/** The Parquet files under a table's partitions, relative to its root. */
function listParquet(dir: string): string[] {
  const found: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(dir, relative), { withFileTypes: true })) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory() && !entry.name.startsWith('.')) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.parquet')) found.push(path);
    }
  };
  walk('');
  return found;
}

if (flags.child !== undefined) {
  process.stdout.write(`${JSON.stringify(await oursChild(flags.child, (flags.layout ?? 'none') as Layout))}\n`);
} else {
  await main();
}
