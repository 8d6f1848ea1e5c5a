/**
 * The crash harness: every operation that changes a table is killed after its N-th storage or lock call, for every N
 * from 1 until it completes (test/helpers/crash-storage.ts: the crashing call and every later one fail, as in a dead
 * process). After each crash:
 * - our reader sees the rows from before the operation or from after it, nothing in between;
 * - the next ordinary run (no flag, no operator: the same command again, or the next write) completes, leaving the
 *   rows after the operation, no pending write, clustering or rollback, and no marker folder;
 * - real Hudi (Spark, Hudi 0.15) reads the crashed table and the healed one with the same rows as our reader. The
 *   tables are copied aside and read at the end in one Spark job; crashed tables with identical files are read once.
 *
 * Operations: an upsert (writeBatch), the clustering CLI job (`cluster --mode scheduleAndExecute`), the state
 * machine's steps (plan → execute-group per group → commit, one process's calls counted across the three), a
 * rollback of a killed write, and the state machine's Rollback task after a failed group. The crash points covered
 * per operation are printed as `crash points: …`. When a process dies holding the lock, the next run waits out its
 * lease once per operation; at later points the test removes the dead holder's lock instead of sleeping.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import type { LockProvider } from '../../lib/lock/port.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { rollbackInstant } from '../../lib/rollback/rollback.js';
import type { ServiceClients } from '../../lib/serverless/aws/clients.js';
import { commitStep } from '../../lib/serverless/steps/clustering/commit.js';
import { executeGroupStep } from '../../lib/serverless/steps/clustering/execute.js';
import { planStep } from '../../lib/serverless/steps/clustering/plan.js';
import { rollbackStep } from '../../lib/serverless/steps/clustering/rollback.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { CrashLock, CrashPoint, CrashStorage, ProcessCrash } from '../helpers/crash-storage.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { LOAD_SCALE } from '../helpers/load.js';
import { tempDir } from '../helpers/paths.js';

const PROPS = new Map([
  ['hoodie.table.name', 'crashes'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.index.bloom.num_entries', '100'],
]);
const COLUMNS = ['id', 'name', 'ts', 'dt'];
const CLUSTERING = { 'hoodie.clustering.plan.strategy.target.file.max.bytes': String(64 * 1024 * 1024) };
/** Past Hudi's heartbeat expiry (2 × 60 s): the clock of the runs after a crash, whose owner is then gone. */
const LATER = (): Date => new Date(Date.now() + 5 * 60_000);

const record = (id: number, ts: number) => ({ id, name: `n${id}@${ts}`, ts, dt: id % 2 === 0 ? 'even' : 'odd' });
const key = (row: Record<string, unknown>): string => COLUMNS.map((column) => String(row[column])).join('|');
const sorted = (rows: readonly Record<string, unknown>[]): string[] => rows.map(key).sort();

const root = tempDir('crash-harness-');
const sparkRoot = join(root, 'spark');
let engine: ParquetEngine;
let hudi: HudiHarness;

/** Tables to read with Spark at the end: where, and the rows our reader saw there. */
const forSpark: { path: string; rows: string[]; what: string }[] = [];
const seenStates = new Set<string>();
const crashPoints: Record<string, number> = {};
/** Crash points that left the lock held, per operation: healed after waiting out the lease, or after removing it. */
const leasesWaitedOut: Record<string, number> = {};
const leasesExpired: Record<string, number> = {};
/** The calls of each operation's complete run, one crash point each. */
const completeRuns: Record<string, string[]> = {};

function lockFor(dir: string): StorageLockProvider {
  return new StorageLockProvider(new LocalStorage(`${dir}.lock`), { leaseMs: 1500 * LOAD_SCALE, pollMs: 20, waitMs: 30_000 * LOAD_SCALE });
}

async function ourRows(dir: string): Promise<string[]> {
  const snapshot = await readSnapshot(await HudiTable.open(new LocalStorage(dir)), { engine });
  return sorted(snapshot.rows as Record<string, unknown>[]);
}

/**
 * What decides what a reader of the table returns: the timeline's instant files (`.hoodie/` itself, not its markers,
 * heartbeats or work folders) and whether data files of instants that did not complete lie around (readers must
 * ignore them). Crashed tables alike in both read alike; Spark reads one of each.
 */
function fingerprint(dir: string): string {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
  const timeline = files.filter((path) => path.startsWith('.hoodie/') && !path.slice('.hoodie/'.length).includes('/')).sort();
  const completed = new Set(timeline.flatMap((path) => /^\.hoodie\/(\d{17})\.(commit|replacecommit)$/.exec(path)?.[1] ?? []));
  const stray = files.some((path) => {
    const instant = /_(\d{17})\.parquet$/.exec(path)?.[1];
    return instant !== undefined && !completed.has(instant);
  });
  // Instant times differ from run to run: name the new ones by their order.
  const times = [...new Set(timeline.flatMap((path) => /(\d{17})/.exec(path)?.[1] ?? []))].sort();
  const names = new Map(times.map((time, index) => [time, `T${index}`]));
  return `${timeline.map((path) => path.replace(/\d{17}/, (time) => names.get(time)!)).join('\n')}\nstray data files: ${stray}`;
}

function keepForSpark(dir: string, name: string, rows: string[], what: string, dedupe: boolean): void {
  if (dedupe) {
    const state = `${name}\n${fingerprint(dir)}`;
    if (seenStates.has(state)) return;
    seenStates.add(state);
  }
  const copy = join(sparkRoot, `${name}-${forSpark.length}`);
  cpSync(dir, copy, { recursive: true });
  forSpark.push({ path: copy, rows, what });
}

/** After the next ordinary run: nothing pending, no marker folder of any instant left. */
async function assertHealed(dir: string, label: string): Promise<void> {
  const timeline = await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1);
  assert.deepEqual(
    timeline.pending().map((i) => `${i.time}.${i.action}.${i.state}`),
    [],
    `${label}: pending instants after the next run`,
  );
  const temp = join(dir, '.hoodie/.temp');
  assert.deepEqual(existsSync(temp) ? readdirSync(temp) : [], [], `${label}: marker folders after the next run`);
}

interface CrashCase {
  readonly name: string;
  /** The table as it is before the operation, in `dir`. */
  prepare(dir: string): void;
  /** The operation, through the crashing storage and lock. */
  run(storage: Storage, lock: LockProvider, dir: string, point: CrashPoint): Promise<void>;
  /** The next ordinary run, on the plain storage and lock. */
  next(storage: Storage, lock: LockProvider, dir: string): Promise<void>;
  readonly before: string[];
  readonly after: string[];
  /** The rows after the next run (default `after`). */
  readonly healed?: string[];
}

/**
 * Crash `crash.run` at every call 1, 2, … until it completes; check each crashed table and its healing. Returns the
 * number of crash points (the calls of a complete run).
 */
async function crashAtEveryCall(crash: CrashCase): Promise<{ points: number; logs: string[][] }> {
  const logs: string[][] = [];
  let leaseWaitedOut = false;
  for (let crashAt = 1; ; crashAt++) {
    const dir = join(root, `${crash.name}-${crashAt}`);
    crash.prepare(dir);
    const point = new CrashPoint(crashAt);
    const lock = new CrashLock(lockFor(dir), point);
    try {
      await crash.run(new CrashStorage(new LocalStorage(dir), point), lock, dir, point);
    } catch (error) {
      // Whatever lib/ makes of the crash on its way out, the process died there; any other failure is a bug.
      if (!point.crashed) throw new Error(`${crash.name}: failed without a crash at call ${crashAt}: ${(error as Error).stack}`);
    }
    logs.push(point.log);
    const label = `${crash.name} crashed at call ${crashAt} (${point.log.at(-1) ?? 'none'})`;
    const crashedRows = await ourRows(dir);
    assert.ok(
      JSON.stringify(crashedRows) === JSON.stringify(crash.before) || JSON.stringify(crashedRows) === JSON.stringify(crash.after),
      `${label}: our reader sees neither the rows before nor those after`,
    );
    keepForSpark(dir, crash.name, crashedRows, label, true);
    if (!point.crashed) {
      assert.deepEqual(crashedRows, crash.after, `${crash.name}: a complete run leaves the rows after it`);
      rmSync(dir, { recursive: true, force: true });
      return { points: crashAt - 1, logs };
    }

    if (lock.leftHeld) {
      // The dead holder's lease has to run out before the next run takes the lock. The first time per operation the
      // next run waits it out through the lock provider; after that its running out is simulated by removing the
      // lock's objects (the lease's takeover rules are test/lock's), which keeps the harness from sleeping through
      // a lease at nearly every crash point.
      if (leaseWaitedOut) {
        rmSync(`${dir}.lock`, { recursive: true, force: true });
        leasesExpired[crash.name] = (leasesExpired[crash.name] ?? 0) + 1;
      } else {
        leaseWaitedOut = true;
        leasesWaitedOut[crash.name] = (leasesWaitedOut[crash.name] ?? 0) + 1;
      }
    }
    await crash.next(new LocalStorage(dir), lockFor(dir), dir);
    const healedRows = await ourRows(dir);
    assert.deepEqual(healedRows, crash.healed ?? crash.after, `${label}: rows after the next run`);
    await assertHealed(dir, label);
    if (crashAt === 3) keepForSpark(dir, `${crash.name}-healed`, healedRows, `${label}, then healed`, false);
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.lock`, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------

const baseDir = join(root, 'base');
const baseRows: string[] = [];
const upsertFile = join(root, 'upsert.jsonl');
const upsertRows: string[] = [];
/** The base table plus a write killed just before its commit (a pending commit with data files and markers). */
const killedWriteDir = join(root, 'killed-write');
/** The base table plus a state machine run killed after its first group (an inflight clustering, group 0 done). */
const failedRunDir = join(root, 'failed-run');

function copyOf(from: string): (dir: string) => void {
  return (dir) => {
    rmSync(dir, { recursive: true, force: true });
    cpSync(from, dir, { recursive: true });
  };
}

async function upsert(storage: Storage, lock: LockProvider): Promise<void> {
  await writeBatch(storage, { input: { file: upsertFile, format: 'jsonl' }, operation: 'upsert', properties: PROPS, lock });
}

const noAws = (): never => {
  throw new Error('the crash harness uses local storage only');
};

/** The state machine's three steps as one run would call them, on `storage` and `lock`. */
async function stateMachineRun(storage: Storage, lock: LockProvider, dir: string, now: () => Date, marks?: number[], point?: CrashPoint): Promise<void> {
  const clients: ServiceClients = { s3: noAws, dynamoDb: noAws, storage: () => storage, lock: () => lock };
  const env = {
    TABLE_PATH: dir,
    CLUSTERING_PROPERTIES: Object.entries(CLUSTERING)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
    SCRATCH_DIR: join(root, 'scratch'),
  };
  const log = { info: () => undefined, warn: () => undefined };
  const deps = { env, clients, log, now };
  const planned = await planStep({ runId: `run-${now().getTime()}` }, deps);
  marks?.push(point?.calls ?? 0);
  if (planned.status !== 'CLUSTER') return;
  for (const group of planned.groups) await executeGroupStep({ instant: planned.instant, groupIndex: group.index }, { ...deps, memoryMb: 1024 });
  marks?.push(point?.calls ?? 0);
  await commitStep({ instant: planned.instant }, deps);
}

/** The state machine's Rollback task after a failed Map: the attempt goes, the plan stays. */
async function stateMachineRollback(storage: Storage, lock: LockProvider, dir: string): Promise<void> {
  const clients: ServiceClients = { s3: noAws, dynamoDb: noAws, storage: () => storage, lock: () => lock };
  const env = {
    TABLE_PATH: dir,
    CLUSTERING_PROPERTIES: Object.entries(CLUSTERING)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  };
  const table = await HudiTable.open(new LocalStorage(dir));
  const instant = table.timeline.pending().find((i) => i.action === 'replacecommit')!.time;
  await rollbackStep(
    { instant, error: { Error: 'Hudi.Error', Cause: '{"errorMessage":"a group failed"}' } },
    { env, clients, log: { info: () => undefined, warn: () => undefined } },
  );
}

async function clusterJob(storage: Storage, lock: LockProvider, now?: Date): Promise<void> {
  const table = await HudiTable.open(storage, { mode: 'write' });
  await runClusteringJob(table, {
    mode: 'scheduleAndExecute',
    config: resolveClusteringConfig({ event: CLUSTERING }).config,
    lock,
    engine,
    tempDir: join(root, 'scratch'),
    ...(now === undefined ? {} : { now }),
  });
}

describe('crash harness: every storage and lock call of write, clustering and rollback', () => {
  before(async () => {
    mkdirSync(sparkRoot, { recursive: true });
    mkdirSync(join(root, 'scratch'), { recursive: true });
    engine = await openParquetEngine({ memoryLimit: '512MB', tempDirectory: join(root, 'spill') });
    hudi = await startHudi();
    // Three bulk inserts: three small files in each of two partitions, so a clustering has two groups of three.
    const storage = new LocalStorage(baseDir);
    for (let batch = 0; batch < 3; batch++) {
      const file = join(root, `base-${batch}.jsonl`);
      await writeJsonLines(
        file,
        [1, 2, 3, 4].map((i) => record(batch * 4 + i, 1)),
      );
      await writeBatch(storage, { input: { file, format: 'jsonl' }, operation: 'bulk_insert', properties: PROPS, lock: lockFor(baseDir) });
    }
    baseRows.push(...(await ourRows(baseDir)));
    // Updates of 9..12, inserts of 13..15.
    await writeJsonLines(
      upsertFile,
      [9, 10, 11, 12, 13, 14, 15].map((id) => record(id, 2)),
    );
    const expected = new Map(baseRows.map((row) => [row.split('|')[0]!, row]));
    for (const id of [9, 10, 11, 12, 13, 14, 15]) expected.set(String(id), key(record(id, 2)));
    upsertRows.push(...[...expected.values()].sort());
  });

  after(async () => {
    await hudi?.close();
    await engine?.close();
  });

  it('an upsert, killed at every call, reads as before or after; the next write heals the table (EAGER) and completes', async () => {
    const { points, logs } = await crashAtEveryCall({
      name: 'write',
      prepare: copyOf(baseDir),
      run: (storage, lock) => upsert(storage, lock),
      next: (storage, lock) => upsert(storage, lock),
      before: baseRows,
      after: upsertRows,
    });
    crashPoints['write'] = points;
    completeRuns['write'] = logs.at(-1)!;
    // The killed write the rollback harness starts from: the base table, killed just before `T.commit`.
    const full = logs.at(-1)!;
    const commitCall = full.findIndex((line) => /^\d+ putIfAbsent \.hoodie\/\d{17}\.commit$/.test(line));
    assert.ok(commitCall > 0, `the write's calls include its commit: ${full.join('; ')}`);
    copyOf(baseDir)(killedWriteDir);
    const point = new CrashPoint(commitCall + 1);
    await assert.rejects(upsert(new CrashStorage(new LocalStorage(killedWriteDir), point), new CrashLock(lockFor(killedWriteDir), point)), ProcessCrash);
    assert.equal((await loadTimeline(new LocalStorage(killedWriteDir), TIMELINE_LAYOUT_1)).pending().length, 1);
  });

  it('a rollback of a killed write, killed at every call, leaves the rows as they were; the next write finishes it', async () => {
    const { points, logs } = await crashAtEveryCall({
      name: 'rollback',
      prepare: copyOf(killedWriteDir),
      run: async (storage, lock) => {
        const table = await HudiTable.open(storage, { mode: 'write' });
        const pending = table.timeline.pending()[0]!;
        // Its writer's heartbeat is fresh: the operator's rollback runs once it has expired.
        await rollbackInstant(table, pending.time, { lock, now: LATER() });
      },
      next: (storage, lock) => upsert(storage, lock),
      before: baseRows,
      after: baseRows,
      healed: upsertRows,
    });
    crashPoints['rollback'] = points;
    completeRuns['rollback'] = logs.at(-1)!;
  });

  it('the clustering job (cluster --mode scheduleAndExecute), killed at every call: same rows; re-running it resumes or rolls back the plan and completes', async () => {
    const { points, logs } = await crashAtEveryCall({
      name: 'cluster',
      prepare: copyOf(baseDir),
      run: (storage, lock) => clusterJob(storage, lock),
      next: (storage, lock) => clusterJob(storage, lock, LATER()),
      before: baseRows,
      after: baseRows,
    });
    crashPoints['cluster'] = points;
    completeRuns['cluster'] = logs.at(-1)!;
  });

  it('the state machine steps (plan, execute-group, commit), killed at every call: same rows; the next run resumes and commits', async () => {
    // Where each step's calls end, from a complete run.
    const calibration = join(root, 'calibration');
    copyOf(baseDir)(calibration);
    const marks: number[] = [];
    const point = new CrashPoint();
    await stateMachineRun(
      new CrashStorage(new LocalStorage(calibration), point),
      new CrashLock(lockFor(calibration), point),
      calibration,
      () => new Date(),
      marks,
      point,
    );
    assert.equal(marks.length, 2, 'the calibration run planned a clustering');
    const { points } = await crashAtEveryCall({
      name: 'state-machine',
      prepare: copyOf(baseDir),
      run: (storage, lock, dir) => stateMachineRun(storage, lock, dir, () => new Date()),
      next: (storage, lock, dir) => stateMachineRun(storage, lock, dir, LATER),
      before: baseRows,
      after: baseRows,
    });
    assert.equal(points, point.calls, 'a complete run makes as many calls as the calibration run');
    completeRuns['state machine'] = point.log;
    crashPoints['state machine: plan'] = marks[0]!;
    crashPoints['state machine: execute-group (all groups)'] = marks[1]! - marks[0]!;
    crashPoints['state machine: commit'] = points - marks[1]!;

    // A run killed after its first group stored its result: what the Rollback task starts from.
    const firstGroup = point.log.findIndex((line) => /group-0\.result\.json$/.test(line));
    assert.ok(firstGroup > 0, point.log.join('; '));
    copyOf(baseDir)(failedRunDir);
    const killed = new CrashPoint(firstGroup + 2);
    await assert.rejects(
      stateMachineRun(new CrashStorage(new LocalStorage(failedRunDir), killed), new CrashLock(lockFor(failedRunDir), killed), failedRunDir, () => new Date()),
      ProcessCrash,
    );
    assert.deepEqual(
      (await loadTimeline(new LocalStorage(failedRunDir), TIMELINE_LAYOUT_1)).pending().map((i) => `${i.action}.${i.state}`),
      ['replacecommit.INFLIGHT'],
    );
  });

  it("the state machine's Rollback task, killed at every call: same rows; the next run finishes the rollback, resumes the plan and commits", async () => {
    const { points, logs } = await crashAtEveryCall({
      name: 'state-machine-rollback',
      prepare: copyOf(failedRunDir),
      run: (storage, lock, dir) => stateMachineRollback(storage, lock, dir),
      next: (storage, lock, dir) => stateMachineRun(storage, lock, dir, LATER),
      before: baseRows,
      after: baseRows,
    });
    crashPoints['state machine: rollback'] = points;
    completeRuns['state machine: rollback'] = logs.at(-1)!;
  });

  it("real Hudi reads every crashed table (distinct ones) and one healed table per operation with our reader's rows", async () => {
    for (const [operation, calls] of Object.entries(completeRuns)) console.log(`${operation}: ${calls.join('; ')}`);
    console.log(`crash points: ${JSON.stringify(crashPoints)}; Spark reads ${forSpark.length} tables`);
    console.log(`dead holder's lease waited out: ${JSON.stringify(leasesWaitedOut)}; removed by the test: ${JSON.stringify(leasesExpired)}`);
    // Every operation that can die holding the lock has its next run take it over the slow, real way once.
    for (const name of Object.keys(leasesExpired)) assert.equal(leasesWaitedOut[name], 1, `${name}: one lease waited out`);
    assert.ok(forSpark.length > 0);
    const { tables } = await hudi.readMany(
      forSpark.map((table) => table.path),
      COLUMNS,
    );
    forSpark.forEach((table, index) => {
      assert.deepEqual(sorted(tables[index]! as Record<string, unknown>[]), table.rows, `Spark reads ${table.what}`);
    });
  });
});
