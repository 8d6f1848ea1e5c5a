/**
 * Planning a clustering over many files (not a test).
 *
 *   npm run bench:planning -- [--files 100000] [--partitions 10] [--commits 100] [--file-bytes 10240] [--runs 3]
 *
 * Builds a synthetic table on local disk: a timeline of --commits INSERT commits (write stats included) whose base
 * files, --files in all over --partitions partitions, are sparse files of --file-bytes (no pages: planning reads
 * only the listing and the timeline). Then plans one clustering with `schedule` (listing, file system view, the
 * size-based strategy, writing the plan) in a child process per run, so the peak RSS printed is planning's own.
 * Prints each run's time and peak RSS, and the plan's groups and files.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveClusteringConfig } from '../lib/clustering/config.js';
import { schedule } from '../lib/clustering/schedule.js';
import { StorageLockProvider } from '../lib/lock/storage-lock.js';
import { mapWithConcurrency } from '../lib/storage/concurrency.js';
import { openStorage } from '../lib/storage/index.js';
import { LocalStorage } from '../lib/storage/local.js';
import { joinPartitionPath } from '../lib/table/file-system-view.js';
import { createTable } from '../lib/table/init.js';
import { HudiTable } from '../lib/table/table.js';
import { newWriteStat, serializeCommitMetadata, type WriteStat } from '../lib/timeline/commit-metadata.js';
import { formatInstantTime } from '../lib/timeline/instant.js';
import { USERS_SCHEMA } from '../test/helpers/small-files-table.js';

const { values: flags } = parseArgs({
  options: {
    files: { type: 'string', default: '100000' },
    partitions: { type: 'string', default: '10' },
    commits: { type: 'string', default: '100' },
    'file-bytes': { type: 'string', default: '10240' },
    runs: { type: 'string', default: '3' },
    'child-plan': { type: 'string' },
  },
});

const MB = 1024 * 1024;

function fileIdOf(commit: number, index: number): string {
  const hex = (commit * 1_000_003 + index).toString(16).padStart(12, '0');
  return `00000000-0000-4000-8000-${hex}-0`;
}

async function buildTable(dir: string): Promise<void> {
  const files = Number(flags.files);
  const partitions = Number(flags.partitions);
  const commits = Number(flags.commits);
  const fileBytes = Number(flags['file-bytes']);
  const storage = new LocalStorage(dir);
  await createTable(storage, {
    tableName: 'many_files',
    recordKeyFields: ['id'],
    partitionFields: ['dt'],
    precombineField: 'createTime',
    hiveStylePartitioning: true,
  });
  const partitionPaths = Array.from({ length: partitions }, (_, index) => `dt=${new Date(Date.UTC(2024, 0, 1 + index)).toISOString().slice(0, 10)}`);
  const instants = Array.from({ length: commits }, (_, index) => formatInstantTime(new Date(Date.UTC(2024, 0, 1) + index * 1000)));
  for (const partition of partitionPaths) {
    await mkdir(join(dir, partition), { recursive: true });
    await writeFile(join(dir, partition, '.hoodie_partition_metadata'), `#partition metadata\ncommitTime=${instants[0]}\npartitionDepth=1\n`);
  }
  const perCommit = Math.ceil(files / commits);
  for (const [commit, instant] of instants.entries()) {
    const stats: Record<string, WriteStat[]> = {};
    const indexes = Array.from({ length: Math.min(perCommit, files - commit * perCommit) }, (_, index) => index);
    await mapWithConcurrency(indexes, 64, async (index) => {
      const partition = partitionPaths[index % partitions]!;
      const fileId = fileIdOf(commit, index);
      const path = joinPartitionPath(partition, `${fileId}_${index}-${commit + 1}-${commit + 1}_${instant}.parquet`);
      // Sizes vary ±50% around --file-bytes, as a table's small files do.
      const size = Math.max(1, Math.round(fileBytes * (0.5 + ((index * 7919) % 1000) / 1000)));
      const handle = await open(join(dir, path), 'w');
      await handle.truncate(size);
      await handle.close();
      (stats[partition] ??= []).push(
        newWriteStat({ fileId, path, partitionPath: partition, numWrites: 100, numInserts: 100, totalWriteBytes: size, fileSizeInBytes: size }),
      );
    });
    await storage.put(`.hoodie/${instant}.commit.requested`, '');
    await storage.put(`.hoodie/${instant}.inflight`, '');
    await storage.put(
      `.hoodie/${instant}.commit`,
      serializeCommitMetadata({
        partitionToWriteStats: stats,
        compacted: false,
        extraMetadata: { schema: JSON.stringify(USERS_SCHEMA) },
        operationType: 'INSERT',
      }),
    );
  }
}

/** Child: plan once and print time, peak RSS and the plan's shape as JSON; the plan is removed again. */
async function planChild(dir: string): Promise<void> {
  const storage = openStorage(dir);
  const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.small.file.limit': String(1024 * MB) } }).config;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const table = await HudiTable.open(storage, { mode: 'write' });
  const scheduled = await schedule(table, config, { lock: new StorageLockProvider(storage), force: true });
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  if (scheduled === undefined) throw new Error('nothing was planned');
  const plannedFiles = scheduled.groups.reduce((total, group) => total + group.inputFiles, 0);
  await storage.delete([`.hoodie/${scheduled.instantTime}.replacecommit.requested`]);
  process.stdout.write(
    `${JSON.stringify({ seconds, cpuSeconds: (used.user + used.system) / 1e6, maxRssKb: process.resourceUsage().maxRSS, groups: scheduled.groups.length, plannedFiles, largestGroup: Math.max(...scheduled.groups.map((group) => group.inputFiles)) })}\n`,
  );
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'bench-planning-'));
  try {
    const dir = join(base, 't');
    const built = performance.now();
    await buildTable(dir);
    console.log(
      `table of ${flags.files} files of ~${Number(flags['file-bytes']) / 1024} KiB in ${flags.partitions} partitions, ${flags.commits} commits (built in ${((performance.now() - built) / 1000).toFixed(1)} s)`,
    );
    console.log('run  plan s   CPU s  peak RSS MB  groups  files planned  largest group');
    for (let run = 1; run <= Number(flags.runs); run++) {
      const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--child-plan', dir], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        maxBuffer: 16 * MB,
      });
      if (child.status !== 0) throw new Error(`the planning run failed (exit ${child.status})`);
      const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
        seconds: number;
        cpuSeconds: number;
        maxRssKb: number;
        groups: number;
        plannedFiles: number;
        largestGroup: number;
      };
      console.log(
        `${String(run).padStart(3)}  ${result.seconds.toFixed(2).padStart(6)}  ${result.cpuSeconds.toFixed(2).padStart(6)}  ${(result.maxRssKb / 1024).toFixed(0).padStart(11)}  ${String(result.groups).padStart(6)}  ${String(result.plannedFiles).padStart(13)}  ${String(result.largestGroup).padStart(13)}`,
      );
    }
    console.log(
      "(plan s: opening the table, listing, the file system view, the size-based strategy and writing the plan, wall clock; CPU s: that process's CPU time, every thread; peak RSS of that process)",
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (flags['child-plan'] !== undefined) await planChild(flags['child-plan']);
else await main();
