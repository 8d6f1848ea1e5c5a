/**
 * Clean planning time and memory (not a test).
 *
 *   npm run bench:clean [-- --partitions 1000,10000] [--runs 3] [--concurrency 32]
 *
 * For each partition count P, a local synthetic table (empty placeholder base files, a hand-written timeline, see
 * test/helpers/synthetic-table.ts): t1 inserts one file group into every partition; t2..t11 each update a different
 * 10% of the partitions; a clean (2 commits retained) then deletes the superseded t1 versions; t12..t15 each update
 * 1% of the partitions. The measured plan is the next clean's, 2 commits retained (earliest commit to retain t14):
 * - incremental (hoodie.cleaner.incremental.mode=true, Hudi's default): the partitions written by the commits from the
 *   last clean's earliest commit to retain (t10) up to t14 — the t10, t11, t12 and t13 partitions, about 22%;
 * - full: every partition folder is listed.
 * Each plan runs in a child process (planClean, nothing written) so its peak RSS is its own; times are medians.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cleanConfigFromProperties } from '../lib/cleaner/config.js';
import { runClean } from '../lib/cleaning/clean.js';
import { planClean } from '../lib/cleaning/schedule.js';
import { StorageLockProvider } from '../lib/lock/storage-lock.js';
import { LocalStorage } from '../lib/storage/local.js';
import { HudiTable } from '../lib/table/table.js';
import { tempDir } from '../test/helpers/paths.js';
import { type FileWrite, fileId, SyntheticTable, t } from '../test/helpers/synthetic-table.js';
import { median } from './median.js';

const { values: flags } = parseArgs({
  options: {
    partitions: { type: 'string', default: '1000,10000' },
    runs: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '32' },
    child: { type: 'string' },
    mode: { type: 'string' },
  },
});

const RETAIN_2 = { 'hoodie.cleaner.commits.retained': '2' };

async function child(dir: string, mode: string): Promise<void> {
  const storage = new LocalStorage(dir);
  const config = cleanConfigFromProperties(
    new Map(
      Object.entries({ ...RETAIN_2, 'hoodie.cleaner.incremental.mode': String(mode === 'incremental'), 'hoodie.cleaner.parallelism': flags.concurrency! }),
    ),
  );
  const started = performance.now();
  const table = await HudiTable.open(storage);
  const planning = await planClean(table, config);
  const ms = performance.now() - started;
  const files = Object.values(planning.plan?.filePathsToBeDeletedPerPartition ?? {}).reduce((sum, list) => sum + list.length, 0);
  process.stdout.write(
    `${JSON.stringify({ ms, scope: planning.scope.kind, listed: planning.partitionsListed, files, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
}

async function build(partitions: number): Promise<string> {
  const made = await SyntheticTable.create({ dir: join(tempDir('bench-clean-'), `p${partitions}`) });
  const groups: FileWrite[] = Array.from({ length: partitions }, (_, p) => ({ partition: `dt=${String(p).padStart(5, '0')}`, fileId: fileId(p) }));
  await made.commit(t(1), groups, 'INSERT');
  for (let k = 2; k <= 11; k++)
    await made.commit(
      t(k),
      groups.filter((_, p) => p % 10 === k - 2),
    );
  const storage = made.storage;
  const first = await runClean(await HudiTable.open(storage), {
    config: cleanConfigFromProperties(new Map(Object.entries(RETAIN_2))),
    lock: new StorageLockProvider(storage),
    now: new Date(Date.UTC(2024, 0, 1) + 11_500),
  });
  if (first.outcome !== 'cleaned') throw new Error(`the first clean did not run: ${first.outcome}`);
  for (let k = 12; k <= 15; k++)
    await made.commit(
      t(k),
      groups.filter((_, p) => p % 100 === k - 12),
    );
  return made.dir;
}

async function main(): Promise<void> {
  const counts = flags.partitions!.split(',').map(Number);
  const runs = Number(flags.runs);
  console.log(`clean planning, 2 commits retained, ${flags.concurrency} listings in flight, median of ${runs} run(s) (each a child process)`);
  console.log('partitions  mode         listed  files to delete  plan ms  peak RSS MB');
  for (const partitions of counts) {
    const builtAt = performance.now();
    const dir = await build(partitions);
    console.error(`(built the ${partitions}-partition table in ${((performance.now() - builtAt) / 1000).toFixed(1)} s)`);
    for (const mode of ['incremental', 'full']) {
      const results = Array.from({ length: runs }, () => {
        const run = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--child', dir, '--mode', mode, '--concurrency', flags.concurrency!], {
          encoding: 'utf8',
          maxBuffer: 64 * 2 ** 20,
        });
        if (run.status !== 0) throw new Error(`child failed: ${run.stderr}`);
        return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { ms: number; scope: string; listed: number; files: number; maxRssMb: number };
      });
      const last = results.at(-1)!;
      if (last.scope !== mode) throw new Error(`planned ${last.scope}, expected ${mode}`);
      console.log(
        `${String(partitions).padStart(10)}  ${mode.padEnd(11)}  ${String(last.listed).padStart(6)}  ${String(last.files).padStart(15)}  ${median(
          results.map((r) => r.ms),
        )
          .toFixed(0)
          .padStart(7)}  ${median(results.map((r) => r.maxRssMb))
          .toFixed(0)
          .padStart(11)}`,
      );
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

if (flags.child !== undefined) await child(flags.child, flags.mode ?? 'incremental');
else await main();
