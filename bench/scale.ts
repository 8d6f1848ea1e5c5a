/**
 * The table services at scale (not a test): clean, archive and clustering planning over synthetic tables of millions
 * of files or a hundred thousand instants, each measured in a child process of its own (time, peak RSS, sampled heap
 * high-water, storage requests).
 *
 *   npm run bench:scale -- clean       [--files 2000000] [--partitions 10000] [--versions 2] [--commits 30] [--round 1000]
 *   npm run bench:scale -- clean-steps [same] [--per-share 500] [--files-per-share 20000] [--max-concurrency 10]
 *   npm run bench:scale -- archive     [--instants 100000] [--clean-every 10] [--layout 1|2]
 *   npm run bench:scale -- cluster     [--files 1000000] [--partitions 100] [--commits 100] [--round 100]
 *   common: [--runs 3] [--latency-ms 0] [--heap-mb N] [--cpu-prof DIR] [--heap-prof DIR]
 *
 * The tables (bench/scale/tables.ts) are generated on demand by a Storage (bench/scale/storage.ts) whose written
 * objects go to a temp folder: the measured process holds what the service holds, plus the generator's bitmaps.
 * - clean: a copy-on-write table of --files base files in --partitions partitions, --versions per file group, no
 *   clean yet (Hudi's first clean, and every clean with hoodie.cleaner.incremental.mode=false, lists every
 *   partition), 10 commits retained: every version but the newest of each group goes (the newest two of the groups
 *   written since the earliest commit to retain). `clean` runs it in one process (runClean: plan, schedule, delete,
 *   complete); `clean-steps` runs the state machine's steps (lib/serverless/steps/cleaning), each step and each Map
 *   share in a process of its own, and estimates the run's wall time with --max-concurrency shares at once.
 * - archive: a timeline of --instants completed instants (three files each), keep.min/max 20/30: all but the newest
 *   ~20 commits are archived (timeline layout 1: an archive log file; layout 2: the LSM history).
 * - cluster: a table of one version per file group; `schedule` (listing, file system view, the size-based
 *   strategy, writing the plan). --round = --commits: every file named by a commit on the active timeline (as
 *   bench:planning builds it); a larger --round leaves the older files to archived commits.
 * --latency-ms makes every request wait (per listing page or delete batch), to show requests awaited one by one.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { runArchive } from '../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../lib/archival/config.js';
import { cleanConfigFromProperties } from '../lib/cleaner/config.js';
import { runClean } from '../lib/cleaning/clean.js';
import { resolveClusteringConfig } from '../lib/clustering/config.js';
import { schedule } from '../lib/clustering/schedule.js';
import type { LockProvider } from '../lib/lock/port.js';
import { StorageLockProvider } from '../lib/lock/storage-lock.js';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import {
  type CleanStepOutput,
  cleanCompleteStep,
  cleanExecuteShareStep,
  cleanPlanShareStep,
  cleanPrepareStep,
  cleanScheduleStep,
} from '../lib/serverless/steps/cleaning/index.js';
import type { StepDependencies } from '../lib/serverless/steps/contract.js';
import { LocalStorage } from '../lib/storage/local.js';
import { createTable } from '../lib/table/init.js';
import { HudiTable } from '../lib/table/table.js';
import { median } from './median.js';
import { materialize, SyntheticStorage } from './scale/storage.js';
import { DataTable, type DataTableShape, GENERATOR_VERSION, LongTimeline, type TimelineShape } from './scale/tables.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    files: { type: 'string' },
    partitions: { type: 'string' },
    versions: { type: 'string' },
    commits: { type: 'string' },
    round: { type: 'string' },
    'file-bytes': { type: 'string', default: '10240' },
    'per-share': { type: 'string', default: '500' },
    'files-per-share': { type: 'string', default: '20000' },
    'max-concurrency': { type: 'string', default: '10' },
    parallelism: { type: 'string', default: '200' },
    instants: { type: 'string', default: '100000' },
    'clean-every': { type: 'string', default: '10' },
    layout: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '0' },
    'heap-mb': { type: 'string' },
    'cpu-prof': { type: 'string' },
    'heap-prof': { type: 'string' },
    'no-lease': { type: 'boolean' },
    child: { type: 'string' },
  },
});

const MB = 1024 * 1024;
const URI = 's3://bench-bucket/tables/synthetic';
const NOW = new Date(Date.UTC(2025, 0, 1));

type Scenario = { readonly kind: 'data'; readonly shape: DataTableShape } | { readonly kind: 'timeline'; readonly shape: TimelineShape };

interface ChildTask {
  readonly service: 'clean' | 'archive' | 'cluster' | 'step';
  readonly scenario: Scenario;
  readonly dir: string;
  readonly stateFile: string;
  readonly contentDir: string;
  readonly latencyMs: number;
  readonly properties: Record<string, string>;
  /** A lock whose lease never runs out (to time a service that blocks the event loop past the 20 s lease). */
  readonly noLease?: boolean;
  /** clean-steps: which step, with its input. */
  readonly step?: { readonly name: 'prepare' | 'plan' | 'schedule' | 'execute' | 'complete'; readonly input: Record<string, unknown> };
}

interface ChildResult {
  readonly ms: number;
  readonly openMs: number;
  readonly generatorMs: number;
  readonly baselineRssMb: number;
  readonly peakRssMb: number;
  readonly peakHeapMb: number;
  /** The longest the event loop was blocked (the lock's heartbeat waits that long). */
  readonly maxBlockedMs: number;
  /** process.memoryUsage() (MB) when the sampled RSS was highest. */
  readonly atPeak: Record<string, number>;
  readonly requests: Record<string, number>;
  readonly counts: Record<string, number | string>;
  readonly output?: unknown;
}

function treeOf(scenario: Scenario): DataTable | LongTimeline {
  return scenario.kind === 'data' ? new DataTable(scenario.shape) : new LongTimeline(scenario.shape);
}

// ---------------------------------------------------------------------------------------------------------------
// The measured process.

function memorySampler(): () => { peakRssMb: number; peakHeapMb: number; maxBlockedMs: number; atPeak: Record<string, number> } {
  let heap = 0;
  let atPeak: NodeJS.MemoryUsage | undefined;
  const tick = () => {
    const usage = process.memoryUsage();
    heap = Math.max(heap, usage.heapUsed);
    if (atPeak === undefined || usage.rss > atPeak.rss) atPeak = usage;
  };
  const timer = setInterval(tick, 10);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return () => {
    clearInterval(timer);
    delay.disable();
    tick();
    const composition = Object.fromEntries(Object.entries(atPeak ?? {}).map(([key, bytes]) => [key, Math.round(bytes / MB)]));
    return { peakRssMb: process.resourceUsage().maxRSS / 1024, peakHeapMb: heap / MB, maxBlockedMs: delay.max / 1e6, atPeak: composition };
  };
}

/** A lock that is always held (--no-lease). */
const UNEXPIRING_LOCK: LockProvider = {
  description: 'unexpiring',
  acquire: async () => ({ owner: 'bench', assertHeld: async () => undefined, release: async () => undefined }),
};

async function child(task: ChildTask): Promise<void> {
  const storage = new SyntheticStorage(task.dir, treeOf(task.scenario), {
    uri: URI,
    latencyMs: task.latencyMs,
    stateFile: task.stateFile,
    contentDir: task.contentDir,
  });
  const props = new Map(Object.entries(task.properties));
  const lock: LockProvider = task.noLease === true ? UNEXPIRING_LOCK : new StorageLockProvider(storage);
  if (typeof globalThis.gc === 'function') globalThis.gc();
  const baselineRssMb = process.memoryUsage().rss / MB;
  const stop = memorySampler();
  const started = performance.now();
  let openMs = 0;
  const open = async (mode: 'clean' | 'archive' | 'write') => {
    const at = performance.now();
    const table = await HudiTable.open(storage, { mode });
    openMs = performance.now() - at;
    return table;
  };
  let counts: Record<string, number | string> = {};
  let output: unknown;
  if (task.service === 'clean') {
    const table = await open('clean');
    let scheduledAt = 0;
    const result = await runClean(table, {
      config: cleanConfigFromProperties(props),
      lock,
      now: NOW,
      onProgress: (line) => {
        if (line.startsWith('scheduled')) scheduledAt = performance.now();
      },
    });
    counts = {
      outcome: result.outcome,
      listed: result.planning?.partitionsListed ?? 0,
      deleted: result.clean?.metadata.totalFilesDeleted ?? 0,
      planMs: Math.round(scheduledAt - started),
    };
  } else if (task.service === 'archive') {
    const table = await open('archive');
    const result = await runArchive(table, {
      config: archivalConfigFromProperties(props),
      cleanConfig: cleanConfigFromProperties(props),
      lock,
      properties: props,
    });
    counts = { outcome: result.outcome, instants: result.plan.instants.length, files: result.archivedFiles.length, records: result.recordsWritten };
  } else if (task.service === 'cluster') {
    const table = await open('write');
    const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.small.file.limit': String(1024 * MB) } }).config;
    const scheduled = await schedule(table, config, { lock, force: true, now: NOW });
    if (scheduled === undefined) throw new Error('nothing was planned');
    counts = { groups: scheduled.groups.length, plannedFiles: scheduled.groups.reduce((sum, group) => sum + group.inputFiles, 0) };
  } else {
    output = await runStep(task, storage);
  }
  const ms = performance.now() - started;
  const memory = stop();
  storage.save();
  const result: ChildResult = {
    ms,
    openMs,
    generatorMs: storage.generatorMs,
    baselineRssMb,
    ...memory,
    requests: storage.requests,
    counts,
    ...(output === undefined ? {} : { output }),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function runStep(task: ChildTask, storage: SyntheticStorage): Promise<unknown> {
  const deps: StepDependencies = {
    env: { CLUSTERING_PROPERTIES: JSON.stringify(task.properties) },
    clients: { ...serviceClientsFromEnv({}), storage: () => storage, lock: (s) => (task.noLease === true ? UNEXPIRING_LOCK : new StorageLockProvider(s)) },
    log: { info: () => undefined, warn: () => undefined },
    now: () => NOW,
  };
  const input = { tablePath: URI, services: 'clean-archive' as const, ...task.step!.input };
  switch (task.step!.name) {
    case 'prepare':
      return cleanPrepareStep({ ...input, runId: 'bench-run' }, deps);
    case 'plan':
      return cleanPlanShareStep(input as Parameters<typeof cleanPlanShareStep>[0], deps);
    case 'schedule':
      return cleanScheduleStep(input as Parameters<typeof cleanScheduleStep>[0], deps);
    case 'execute':
      return cleanExecuteShareStep(input as Parameters<typeof cleanExecuteShareStep>[0], deps);
    case 'complete':
      return cleanCompleteStep(input as Parameters<typeof cleanCompleteStep>[0], deps);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The parent.

let profileCount = 0;
function spawnChild(task: ChildTask): ChildResult {
  const nodeArgs = [...process.execArgv, '--expose-gc'];
  if (flags['heap-mb'] !== undefined) nodeArgs.push(`--max-old-space-size=${flags['heap-mb']}`);
  const tag = `${task.service}${task.step === undefined ? '' : `-${task.step.name}`}-${profileCount++}`;
  if (flags['cpu-prof'] !== undefined) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${flags['cpu-prof']}`, `--cpu-prof-name=${tag}.cpuprofile`);
  if (flags['heap-prof'] !== undefined) nodeArgs.push('--heap-prof', `--heap-prof-dir=${flags['heap-prof']}`, `--heap-prof-name=${tag}.heapprofile`);
  const run = spawnSync(process.execPath, [...nodeArgs, process.argv[1]!, '--child', JSON.stringify(task)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * MB,
  });
  if (run.status !== 0) throw new Error(`the ${tag} process failed (exit ${run.status}, signal ${run.signal})`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ChildResult;
}

/** The scenario's timeline contents, generated once into a cache folder the runs read them from. */
function contentOf(scenario: Scenario): string {
  const dir = join(tmpdir(), 'bench-scale-cache', createHash('sha256').update(JSON.stringify({ GENERATOR_VERSION, scenario })).digest('hex').slice(0, 16));
  const started = performance.now();
  materialize(treeOf(scenario), dir);
  const seconds = (performance.now() - started) / 1000;
  if (seconds > 1) console.error(`(generated the timeline's contents in ${seconds.toFixed(1)} s into ${dir})`);
  return dir;
}

async function freshTable(scenario: Scenario): Promise<{ dir: string; stateFile: string; contentDir: string; base: string }> {
  const contentDir = contentOf(scenario);
  const base = mkdtempSync(join(tmpdir(), 'bench-scale-'));
  const dir = join(base, 'table');
  mkdirSync(dir);
  await createTable(new LocalStorage(dir), {
    tableName: 'synthetic',
    recordKeyFields: ['id'],
    partitionFields: scenario.kind === 'data' ? ['dt'] : ['dt'],
    precombineField: 'createTime',
    hiveStylePartitioning: true,
    ...(scenario.kind === 'timeline' && scenario.shape.layout === 2 ? { tableVersion: 8 as const } : {}),
  });
  return { dir, stateFile: join(base, 'deleted.json'), contentDir, base };
}

const num = (name: keyof typeof flags, fallback: number): number => (flags[name] === undefined ? fallback : Number(flags[name]));
const fmt = (value: number, digits = 0) => value.toFixed(digits);
const range = (values: readonly number[], digits = 0) =>
  `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`;

function dataShape(defaults: { files: number; partitions: number; versions: number; commits: number; round: number }): DataTableShape {
  const files = num('files', defaults.files);
  const partitions = num('partitions', defaults.partitions);
  const versions = num('versions', defaults.versions);
  const commits = num('commits', defaults.commits);
  return {
    partitions,
    groupsPerPartition: Math.round(files / partitions / versions),
    versions,
    activeCommits: commits,
    commitsPerRound: num('round', defaults.round),
    fileBytes: num('file-bytes', 10240),
  };
}

function describeData(shape: DataTableShape): string {
  const table = new DataTable(shape);
  return `${table.files.toLocaleString('en')} base files in ${shape.partitions.toLocaleString('en')} partitions (${shape.groupsPerPartition} file groups × ${shape.versions} versions each), ${shape.activeCommits} commits on the active timeline naming ${Math.round((table.groups * shape.activeCommits) / shape.commitsPerRound).toLocaleString('en')} newest versions`;
}

function printRuns(label: string, results: readonly ChildResult[]): void {
  const last = results.at(-1)!;
  console.log(
    `${label}: ${range(
      results.map((r) => r.ms / 1000),
      2,
    )} s, open ${range(
      results.map((r) => r.openMs / 1000),
      2,
    )} s, peak RSS ${range(results.map((r) => r.peakRssMb))} MB (baseline ${fmt(last.baselineRssMb)} MB), heap high-water ${range(results.map((r) => r.peakHeapMb))} MB, event loop blocked ≤ ${range(
      results.map((r) => r.maxBlockedMs / 1000),
      1,
    )} s, generator ${fmt(last.generatorMs / 1000, 2)} s`,
  );
  console.log(`  ${JSON.stringify(last.counts)}  requests ${JSON.stringify(last.requests)}  memory at the sampled peak (MB) ${JSON.stringify(last.atPeak)}`);
}

async function measure(service: 'clean' | 'archive' | 'cluster', scenario: Scenario, properties: Record<string, string>): Promise<void> {
  const results: ChildResult[] = [];
  for (let run = 0; run < num('runs', 3); run++) {
    const { dir, stateFile, contentDir, base } = await freshTable(scenario);
    try {
      results.push(
        spawnChild({ service, scenario, dir, stateFile, contentDir, latencyMs: num('latency-ms', 0), properties, noLease: flags['no-lease'] === true }),
      );
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }
  printRuns(`${service} (median (min–max) of ${results.length})`, results);
}

/** List scheduling of `durations` over `workers` (the Map state's MaxConcurrency): the makespan. */
function makespan(durations: readonly number[], workers: number): number {
  const free = Array.from({ length: Math.min(workers, durations.length) }, () => 0);
  for (const duration of durations) {
    const next = free.indexOf(Math.min(...free));
    free[next] = free[next]! + duration;
  }
  return Math.max(0, ...free);
}

async function cleanSteps(scenario: Scenario, properties: Record<string, string>): Promise<void> {
  const workers = num('max-concurrency', 10);
  for (let run = 0; run < num('runs', 1); run++) {
    const { dir, stateFile, contentDir, base } = await freshTable(scenario);
    try {
      const task = (name: NonNullable<ChildTask['step']>['name'], input: Record<string, unknown>): ChildResult =>
        spawnChild({
          service: 'step',
          scenario,
          dir,
          stateFile,
          contentDir,
          latencyMs: num('latency-ms', 0),
          properties,
          noLease: flags['no-lease'] === true,
          step: { name, input },
        });
      const rows: { step: string; results: ChildResult[]; wallMs: number }[] = [];
      const prepare = task('prepare', {});
      const prepared = prepare.output as CleanStepOutput;
      rows.push({ step: 'prepare', results: [prepare], wallMs: prepare.ms });
      if (prepared.status !== 'PLAN') throw new Error(`prepare: ${JSON.stringify(prepared)}`);
      const plans = prepared.shares.map((share) => task('plan', { planningId: prepared.planningId, shareIndex: share.index }));
      rows.push({
        step: `plan ×${plans.length}`,
        results: plans,
        wallMs: makespan(
          plans.map((r) => r.ms),
          workers,
        ),
      });
      const schedule = task('schedule', { planningId: prepared.planningId });
      const scheduled = schedule.output as CleanStepOutput;
      rows.push({ step: 'schedule', results: [schedule], wallMs: schedule.ms });
      if (scheduled.status !== 'EXECUTE') throw new Error(`schedule: ${JSON.stringify(scheduled)}`);
      const executes = scheduled.shares.map((share) => task('execute', { instant: scheduled.instant, shareIndex: share.index }));
      rows.push({
        step: `execute ×${executes.length}`,
        results: executes,
        wallMs: makespan(
          executes.map((r) => r.ms),
          workers,
        ),
      });
      const complete = task('complete', { instant: scheduled.instant });
      rows.push({ step: 'complete', results: [complete], wallMs: complete.ms });
      const completed = complete.output as CleanStepOutput;
      console.log(
        `run ${run + 1}: ${prepared.partitions} partitions in ${prepared.shares.length} planning shares, ${scheduled.files} files in ${scheduled.totalShares} delete shares; ${completed.status === 'CLEANED' ? `${completed.filesDeleted} deleted` : completed.status}`,
      );
      console.log('  step            s (median, max)   peak RSS MB (max)   heap MB (max)   blocked s (max)   requests (sum)');
      for (const row of rows) {
        const sum: Record<string, number> = {};
        for (const r of row.results) for (const [kind, count] of Object.entries(r.requests)) sum[kind] = (sum[kind] ?? 0) + count;
        console.log(
          `  ${row.step.padEnd(14)}  ${fmt(median(row.results.map((r) => r.ms)) / 1000, 2).padStart(6)}, ${fmt(Math.max(...row.results.map((r) => r.ms)) / 1000, 2).padStart(6)}   ${fmt(Math.max(...row.results.map((r) => r.peakRssMb))).padStart(17)}   ${fmt(Math.max(...row.results.map((r) => r.peakHeapMb))).padStart(13)}   ${fmt(Math.max(...row.results.map((r) => r.maxBlockedMs)) / 1000, 1).padStart(15)}   ${JSON.stringify(sum)}`,
        );
      }
      for (const row of rows) {
        const peak = row.results.reduce((a, b) => (b.peakRssMb > a.peakRssMb ? b : a));
        console.log(`  ${row.step.padEnd(14)}  memory at the sampled peak (MB) ${JSON.stringify(peak.atPeak)}`);
      }
      const wall = rows.reduce((sum, row) => sum + row.wallMs, 0);
      const cpu = rows.reduce((sum, row) => sum + row.results.reduce((s, r) => s + r.ms, 0), 0);
      console.log(`  wall time with ${workers} shares at once: ${fmt(wall / 1000, 1)} s; every step one after another: ${fmt(cpu / 1000, 1)} s`);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  }
}

async function main(): Promise<void> {
  const service = positionals[0];
  const cleanProps = { 'hoodie.cleaner.commits.retained': '10', 'hoodie.cleaner.parallelism': flags.parallelism! };
  if (service === 'clean' || service === 'clean-steps') {
    const shape = dataShape({ files: 2_000_000, partitions: 10_000, versions: 2, commits: 30, round: 1000 });
    console.log(`clean: ${describeData(shape)}; 10 commits retained, full scope (no clean yet)`);
    const scenario: Scenario = { kind: 'data', shape };
    if (service === 'clean') await measure('clean', scenario, cleanProps);
    else
      await cleanSteps(scenario, {
        ...cleanProps,
        'hoodie.serverless.clean.partitions.per.share': flags['per-share']!,
        'hoodie.serverless.clean.files.per.share': flags['files-per-share']!,
        'hoodie.serverless.clean.max.concurrency': flags['max-concurrency']!,
      });
  } else if (service === 'archive') {
    const shape: TimelineShape = { instants: num('instants', 100_000), cleanEvery: num('clean-every', 10), layout: num('layout', 1) === 2 ? 2 : 1 };
    console.log(
      `archive: ${shape.instants.toLocaleString('en')} completed instants (every ${shape.cleanEvery}th a clean) on timeline layout ${shape.layout}, keep.min/max.commits 20/30`,
    );
    await measure('archive', { kind: 'timeline', shape }, { 'hoodie.metadata.enable': 'false' });
  } else if (service === 'cluster') {
    const commits = num('commits', 100);
    const shape = dataShape({ files: 1_000_000, partitions: 100, versions: 1, commits, round: commits });
    console.log(`cluster: ${describeData(shape)}; small.file.limit 1 GiB (every file is small)`);
    await measure('cluster', { kind: 'data', shape: { ...shape, versions: 1 } }, {});
  } else {
    throw new Error('usage: bench:scale -- clean|clean-steps|archive|cluster [options]');
  }
  console.log(
    `(latency ${flags['latency-ms']} ms per request; each figure from a process of its own: time from opening the table to the end of the service, peak RSS of that process, baseline = its RSS before the service)`,
  );
}

if (flags.child !== undefined) await child(JSON.parse(flags.child) as ChildTask);
else await main();
