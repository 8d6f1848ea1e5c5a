/**
 * Every operation of ours beside Hudi 0.15's on Spark local[2], on copies of the same Spark-written table (not a test):
 * upsert, delete, clustering in each layout, clean, archive (copy-on-write) and compaction (merge-on-read).
 *
 *   HUDI_TOOLCHAIN_DIR=… npm run bench:operations -- [--rows 20000] [--commits 12] [--batch 1000] [--ops upsert,…]
 *
 * Spark is warm (its session started, the table written); ours runs as a user runs it: a fresh `node dist/cli.mjs`
 * process per operation (run `npm run build` first). The metadata table is on for both, as Hudi's default. Wall and
 * CPU seconds per side (ours: the child's rusage; Spark: its process tree over the call), the work each did (instants
 * completed, files written), and Spark's time over ours.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startHudi } from '../test/helpers/hudi.js';
import { descendantsCpuSeconds } from './process-cpu.js';

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    commits: { type: 'string', default: '12' },
    batch: { type: 'string', default: '1000' },
    ops: { type: 'string', default: 'upsert,delete,cluster-none,cluster-linear,cluster-z-order,cluster-hilbert,clean,archive,compact' },
    /** Another build's CLI (e.g. main's, built into a scratch folder) run on a third copy: an A/B of our start-up. */
    'baseline-cli': { type: 'string' },
  },
});

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'cli.mjs');
const SCHEMA = 'id BIGINT, name STRING, birthday STRING, createTime BIGINT, position STRING, notes STRING, dt STRING';
const PARTITIONS = ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'];
const SORT_COLUMNS = 'birthday,createTime';
/** The services' retention, the same on both sides: something is due on a table of a dozen commits. */
const RETENTION: Record<string, string> = {
  'hoodie.cleaner.commits.retained': '2',
  'hoodie.keep.min.commits': '4',
  'hoodie.keep.max.commits': '5',
  // Compaction is due after one delta commit, so both sides compact what the table has.
  'hoodie.compact.inline.max.delta.commits': '1',
};

type Row = Record<string, string | number>;

function row(id: number, version: number): Row {
  return {
    id,
    name: `user_${id}_${version}`,
    birthday: `19${String(50 + (id % 50)).padStart(2, '0')}-0${1 + (id % 9)}-1${id % 10}`,
    createTime: 1_700_000_000 + version * 1000 + (id % 997),
    position: ['engineer', 'manager', 'analyst', 'designer'][id % 4]!,
    notes: `n${id}`.repeat(1 + (id % 40)).slice(0, 200),
    dt: PARTITIONS[id % PARTITIONS.length]!,
  };
}

function sparkOptions(table: string, operation: string, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ'): Record<string, string> {
  return {
    'hoodie.table.name': table,
    'hoodie.datasource.write.table.type': type,
    'hoodie.datasource.write.operation': operation,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'createTime',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.embed.timeline.server': 'false',
    'hoodie.table.timeline.timezone': 'UTC',
    'hoodie.clean.automatic': 'false',
    'hoodie.archive.automatic': 'false',
    'hoodie.compact.inline': 'false',
    'hoodie.insert.shuffle.parallelism': '2',
    'hoodie.upsert.shuffle.parallelism': '2',
    'hoodie.bulkinsert.shuffle.parallelism': '2',
  };
}

interface Measured {
  seconds: number;
  cpuSeconds: number;
  work: string;
}

/** Completed instant files of a table's active timeline. */
function completedInstants(dir: string): Set<string> {
  const timeline = join(dir, '.hoodie');
  return new Set(readdirSync(timeline).filter((name) => /^\d+\.(commit|deltacommit|replacecommit|clean)$/.test(name)));
}

function dataFiles(dir: string): Set<string> {
  const out = new Set<string>();
  for (const partition of PARTITIONS) {
    const folder = join(dir, partition);
    if (existsSync(folder)) for (const name of readdirSync(folder)) if (!name.startsWith('.')) out.add(`${partition}/${name}`);
  }
  return out;
}

function archivedFiles(dir: string): number {
  const folder = join(dir, '.hoodie', 'archived');
  return existsSync(folder) ? readdirSync(folder).length : 0;
}

/** What an operation did: instants completed, data files added and removed, archive files. */
function workDone(dir: string, before: { instants: Set<string>; files: Set<string>; archived: number }): string {
  const now = completedInstants(dir);
  const instants = [...now].filter((name) => !before.instants.has(name)).map((name) => name.split('.')[1]);
  const files = dataFiles(dir);
  const added = [...files].filter((name) => !before.files.has(name)).length;
  const removed = [...before.files].filter((name) => !files.has(name)).length;
  const archived = [...before.instants].filter((name) => !now.has(name)).length;
  return `${instants.join('+') || 'no instant'}, +${added}/-${removed} files${archived > 0 ? `, ${archived} archived (${archivedFiles(dir) - before.archived} archive files)` : ''}`;
}

function snapshot(dir: string) {
  return { instants: completedInstants(dir), files: dataFiles(dir), archived: archivedFiles(dir) };
}

/** Our CLI in a fresh process, as a user runs it: its wall time and its CPU (user + system from /proc of the child). */
function ours(dir: string, args: readonly string[], cli = CLI): Measured {
  const before = snapshot(dir);
  const started = performance.now();
  const child = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, cli, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const seconds = (performance.now() - started) / 1000;
  if (child.status !== 0) throw new Error(`ours ${args.join(' ')} failed (exit ${child.status}): ${child.stderr}`);
  const [user, system] = child.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { seconds, cpuSeconds: user! + system!, work: workDone(dir, before) };
}

async function spark(dir: string, call: () => Promise<unknown>): Promise<Measured> {
  const before = snapshot(dir);
  const cpuBefore = descendantsCpuSeconds();
  const started = performance.now();
  await call();
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: descendantsCpuSeconds() - cpuBefore, work: workDone(dir, before) };
}

function writeJsonLines(file: string, rows: readonly Row[]): void {
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
}

function props(file: string, table: string, extra: Record<string, string> = {}): string {
  const keys = {
    'hoodie.table.name': table,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'createTime',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    ...RETENTION,
    ...extra,
  };
  writeFileSync(
    file,
    Object.entries(keys)
      .map(([key, value]) => `${key}=${value}\n`)
      .join(''),
  );
  return file;
}

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error('dist/cli.mjs is missing: run `npm run build` first');
  const ops = flags.ops!.split(',').map((op) => op.trim());
  const rows = Number(flags.rows);
  const commits = Number(flags.commits);
  const batch = Number(flags.batch);
  const base = mkdtempSync(join(tmpdir(), 'bench-ops-'));
  const hudi = await startHudi({ conf: { 'spark.driver.memory': '2g' } });
  try {
    const written = performance.now();
    const tables = { COPY_ON_WRITE: join(base, 'cow'), MERGE_ON_READ: join(base, 'mor') } as const;
    const needMor = ops.includes('compact');
    for (const [type, path] of Object.entries(tables) as [keyof typeof tables, string][]) {
      if (type === 'MERGE_ON_READ' && !needMor) continue;
      const name = type === 'COPY_ON_WRITE' ? 'bench_cow' : 'bench_mor';
      const all = Array.from({ length: rows }, (_, i) => row(i + 1, 0));
      for (let at = 0; at < all.length; at += 50_000) {
        await hudi.write(path, { schema: SCHEMA, rows: all.slice(at, at + 50_000), options: sparkOptions(name, at === 0 ? 'bulk_insert' : 'insert', type) });
      }
      for (let commit = 1; commit <= commits; commit++) {
        const updates = Array.from({ length: batch }, (_, i) => row(1 + ((commit * 7919 + i * 31) % rows), commit));
        await hudi.write(path, { schema: SCHEMA, rows: updates, options: sparkOptions(name, 'upsert', type) });
      }
    }
    console.log(`(tables written by Spark in ${((performance.now() - written) / 1000).toFixed(0)} s: ${rows} rows, ${commits} upserts of ${batch})`);

    const upserts = [
      ...Array.from({ length: batch / 2 }, (_, i) => row(1 + i * 13, 99)),
      ...Array.from({ length: batch / 2 }, (_, i) => row(rows + 1 + i, 99)),
    ];
    const deletes = Array.from({ length: Math.max(1, batch / 10) }, (_, i) => row(2 + i * 17, 100));
    const upsertFile = join(base, 'upsert.jsonl');
    const deleteFile = join(base, 'delete.jsonl');
    writeJsonLines(upsertFile, upserts);
    writeJsonLines(deleteFile, deletes);
    let sqlTables = 0;
    const rowsOut: string[][] = [];
    for (const op of ops) {
      const type = op === 'compact' ? 'MERGE_ON_READ' : 'COPY_ON_WRITE';
      const mine = join(base, `ours-${op}`);
      const theirs = join(base, `spark-${op}`);
      cpSync(tables[type], mine, { recursive: true });
      cpSync(tables[type], theirs, { recursive: true });
      const name = type === 'COPY_ON_WRITE' ? 'bench_cow' : 'bench_mor';
      const propsFile = join(base, `${op}.props`);
      const layout = op.startsWith('cluster-') ? op.slice('cluster-'.length) : undefined;
      const sortKeys: Record<string, string> =
        layout === undefined || layout === 'none'
          ? {}
          : { 'hoodie.clustering.plan.strategy.sort.columns': SORT_COLUMNS, 'hoodie.layout.optimize.strategy': layout };
      props(propsFile, name, sortKeys);
      // Spark's procedures split options at commas: the sort columns go in `order` instead.
      const options = Object.entries(RETENTION)
        .map(([key, value]) => `${key}=${value}`)
        .join(',');
      const ourArgs = (dir: string): string[] => {
        if (op === 'upsert' || op === 'delete')
          return ['write', dir, '--input', op === 'upsert' ? upsertFile : deleteFile, '--operation', op, '--props', propsFile];
        if (layout !== undefined) return ['cluster', dir, '--mode', 'scheduleAndExecute', '--props', propsFile];
        if (op === 'clean' || op === 'archive') return [op, dir, '--props', propsFile];
        if (op === 'compact') return ['compact', dir, '--mode', 'scheduleAndExecute', '--props', propsFile];
        throw new Error(`unknown operation ${op}: choose from upsert, delete, cluster-<none|linear|z-order|hilbert>, clean, archive, compact`);
      };
      const sparkCall = async (): Promise<unknown> => {
        if (op === 'upsert' || op === 'delete') {
          return hudi.write(theirs, { schema: SCHEMA, rows: op === 'upsert' ? upserts : deletes, options: sparkOptions(name, op, type) });
        }
        if (layout !== undefined) {
          const order = layout === 'none' ? '' : `, order => '${SORT_COLUMNS}', order_strategy => '${layout}'`;
          return hudi.sql(`CALL run_clustering(path => '${theirs}', op => 'scheduleAndExecute'${order}, options => '${options}')`);
        }
        if (op === 'clean') return hudi.sql(`CALL run_clean(table => '${sqlName}', retain_commits => ${RETENTION['hoodie.cleaner.commits.retained']})`);
        if (op === 'archive') {
          return hudi.sql(
            `CALL archive_commits(path => '${theirs}', min_commits => ${RETENTION['hoodie.keep.min.commits']}, max_commits => ${RETENTION['hoodie.keep.max.commits']}, retain_commits => ${RETENTION['hoodie.cleaner.commits.retained']})`,
          );
        }
        return hudi.sql(`CALL run_compaction(op => 'scheduleAndExecute', path => '${theirs}', options => '${options}')`);
      };
      const sqlName = `bench_${op.replaceAll('-', '_')}_${sqlTables++}`;
      if (op === 'clean') await hudi.sql(`CREATE TABLE ${sqlName} USING hudi LOCATION '${theirs}'`);
      const ourResult = ours(mine, ourArgs(mine));
      const sparkResult = await spark(theirs, sparkCall);
      let baseline: Measured | undefined;
      if (flags['baseline-cli'] !== undefined) {
        const other = join(base, `baseline-${op}`);
        cpSync(tables[type], other, { recursive: true });
        baseline = ours(other, ourArgs(other), flags['baseline-cli']);
        rmSync(other, { recursive: true, force: true });
      }
      rowsOut.push([
        op,
        ourResult.seconds.toFixed(2),
        ourResult.cpuSeconds.toFixed(2),
        sparkResult.seconds.toFixed(2),
        sparkResult.cpuSeconds.toFixed(2),
        (sparkResult.seconds / ourResult.seconds).toFixed(1),
        (sparkResult.cpuSeconds / ourResult.cpuSeconds).toFixed(1),
        ourResult.work,
        sparkResult.work,
        ...(baseline === undefined ? [] : [baseline.seconds.toFixed(2), baseline.cpuSeconds.toFixed(2)]),
      ]);
      console.log(`${op}: ours ${ourResult.seconds.toFixed(2)} s (${ourResult.work}); Spark ${sparkResult.seconds.toFixed(2)} s (${sparkResult.work})`);
      rmSync(mine, { recursive: true, force: true });
      rmSync(theirs, { recursive: true, force: true });
    }
    const baselineColumns = flags['baseline-cli'] === undefined ? '' : ' baseline wall s | baseline CPU s |';
    console.log(`\n| operation | ours wall s | ours CPU s | Spark wall s | Spark CPU s | wall ratio | CPU ratio | ours did | Spark did |${baselineColumns}`);
    console.log(`|---|---|---|---|---|---|---|---|---|${flags['baseline-cli'] === undefined ? '' : '---|---|'}`);
    for (const cells of rowsOut) console.log(`| ${cells.join(' | ')} |`);
    console.log(`\nratios: Spark's over ours (10 means ours took a tenth); load ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  } finally {
    await hudi.close();
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
