/**
 * S3 failures at every storage call of a write (an upsert, and a first write creating the table) and of a clustering
 * (the `cluster --mode scheduleAndExecute` job, in process): for each call N, a fresh copy of the table, the Nth call failing as S3Storage surfaces S3's errors (403,
 * 500, 503 SlowDown, a timeout, a reset connection, in turn), then:
 * - one clear error: a HudiError naming the injected S3 failure (or success, when the failure was tolerated);
 * - no unhandled rejection (it would kill a real process before its rollback; here it is collected and counted);
 * - a clean table: it reads exactly as before (or, if the commit landed, exactly as after), nothing partial; a
 *   failed instant is rolled back already or rolls back cleanly, and then no file of it is left.
 * Calls that change the store fail a second time with the answer lost after the change happened (`after`).
 * The number of injection points per operation is printed (diagnostic lines of the test output); FAULT_TRACE=1
 * prints each run before it starts. The table's storage lock is kept out of the injection (see lockOn).
 */

import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { readCompletedClustering } from '../../lib/clustering/instant.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import { HudiError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { rollbackInstant } from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, readCommitMetadata } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { collectUnhandledRejections, type FaultPlan, FaultyStorage, injectedError, S3_FAULTS, type StorageCall } from '../helpers/faulty-storage.js';
import { tempDir } from '../helpers/fixtures.js';
import { createSmallFilesTable } from '../helpers/small-files-table.js';

const WRITE_PROPS = new Map([
  ['hoodie.table.name', 'users'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  ['hoodie.index.bloom.num_entries', '100'],
]);
const MUTATING = new Set(['put', 'putIfAbsent', 'uploadFile', 'delete', 'deleteMany']);

/**
 * The table's storage lock, kept in the table's folder but through the storage without faults: a lock call that
 * fails leaves the lock held until its lease runs out (that is what a lease is for, and test/lock/lock.test.ts covers
 * it), which would only make runs wait. It never renews during a run (renewals are timer-driven).
 */
function lockOn(storage: FaultyStorage): StorageLockProvider {
  return new StorageLockProvider(storage.inner, { leaseMs: 600_000, waitMs: 5_000, pollMs: 50 });
}

/** Data files and partition metadata (everything outside .hoodie), relative, sorted. */
function dataFiles(table: string): string[] {
  return readdirSync(table, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(table, join(entry.parentPath, entry.name)))
    .filter((path) => !path.startsWith('.hoodie/'))
    .sort();
}

/**
 * Data files (Parquet, outside .hoodie) that neither were in the table before nor belong to a completed instant:
 * what a failed operation would leave behind.
 */
async function strayDataFiles(table: string, beforeFiles: readonly string[]): Promise<string[]> {
  const storage = openStorage(table);
  const committed = new Set<string>();
  for (const instant of (await loadTimeline(storage, TIMELINE_LAYOUT_1)).completedWrites()) {
    for (const stats of Object.values((await readCommitMetadata(storage, instant, TIMELINE_LAYOUT_1)).partitionToWriteStats)) {
      for (const stat of stats) if (stat.path !== null) committed.add(stat.path);
    }
  }
  return dataFiles(table).filter((path) => path.endsWith('.parquet') && !beforeFiles.includes(path) && !committed.has(path));
}

async function snapshotRows(table: string): Promise<string[]> {
  const { rows } = await readSnapshot(await HudiTable.open(openStorage(table)));
  return rows.map((row) => JSON.stringify(row)).sort();
}

function copyOf(table: string): string {
  const copy = join(tempDir('fault-'), 'table');
  cpSync(table, copy, { recursive: true });
  return copy;
}

interface Run {
  readonly plan: FaultPlan;
  readonly call: number;
}

/** Every call of the operation, failing before it happens; mutating calls also failing after it happened. */
function runsOf(calls: readonly StorageCall[]): Run[] {
  const runs: Run[] = [];
  for (const call of calls) {
    const fault = S3_FAULTS[(call.index - 1) % S3_FAULTS.length]!;
    runs.push({ call: call.index, plan: { failWhen: (c) => c.index === call.index, fault, timing: 'before' } });
    if (MUTATING.has(call.method)) runs.push({ call: call.index, plan: { failWhen: (c) => c.index === call.index, fault: 'timeout', timing: 'after' } });
  }
  return runs;
}

/** The pending instants of a table, rolled back with a lock of their own (off the table, so a stale lease cannot block). */
async function rollBackPending(table: string): Promise<string[]> {
  const storage = openStorage(table);
  const lock = new StorageLockProvider(openStorage(tempDir('fault-lock-')), { waitMs: 5_000 });
  const pending = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).instants.filter((i) => i.state !== 'COMPLETED' && i.action !== 'rollback');
  for (const instant of pending) {
    await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), instant.time, { lock, ignoreHeartbeat: true });
  }
  const left = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).instants.filter((i) => i.state !== 'COMPLETED');
  assert.deepEqual(left, [], 'nothing pending after the rollback');
  return pending.map((i) => `${i.time}.${i.action}`);
}

function describeRun(run: Run, calls: readonly StorageCall[]): string {
  const call = calls[run.call - 1];
  return `call ${run.call} (${call?.method} ${call?.path}) failing ${run.plan.timing} with ${run.plan.fault}`;
}

/** The error is one HudiError naming the injected S3 failure. */
function assertClearError(error: unknown, run: Run, faulty: FaultyStorage, label: string): void {
  assert.ok(error instanceof HudiError, `${label}: expected a HudiError, got ${String(error)}`);
  const injected = injectedError(run.plan.fault, faulty.injected[0]!) as HudiError;
  assert.ok(error.message.includes(injected.problem), `${label}: the error names the S3 failure: ${error.message}`);
}

function faultyStorage(table: string, plan: FaultPlan | undefined): FaultyStorage {
  return new FaultyStorage(openStorage(table), plan);
}

interface FaultCheck {
  /** The operation's name in the summary line. */
  readonly name: string;
  /** The storage calls of a run without faults: one injection before each, and one after each mutating call. */
  readonly calls: readonly StorageCall[];
  /** A fresh table folder for one run. */
  readonly table: () => string;
  readonly operation: (storage: FaultyStorage) => Promise<unknown>;
  /** What the table must look like after a run that `failed` (with the one clear error) or succeeded. */
  readonly check: (table: string, label: string, failed: boolean) => Promise<void>;
  /** The least number of calls the operation makes (the test covers something). */
  readonly minCalls: number;
}

/**
 * Run the operation once per injection point on a fresh table: no unhandled rejection, the fault injected once,
 * a failure is one clear error; then the operation's own checks. Prints how many points there were.
 */
async function checkEveryFault(spec: FaultCheck): Promise<void> {
  const runs = runsOf(spec.calls);
  let failed = 0;
  let tolerated = 0;
  for (const run of runs) {
    const label = describeRun(run, spec.calls);
    if (process.env['FAULT_TRACE']) console.error(`TRACE ${label}`);
    const table = spec.table();
    const faulty = faultyStorage(table, run.plan);
    const { outcome, unhandled } = await collectUnhandledRejections(() => spec.operation(faulty));
    assert.deepEqual(unhandled, [], `${label}: unhandled rejections`);
    assert.equal(faulty.injected.length, 1, `${label}: the fault was injected once`);
    if (outcome.status === 'rejected') {
      failed++;
      assertClearError(outcome.reason, run, faulty, label);
    } else {
      tolerated++;
    }
    await spec.check(table, label, outcome.status === 'rejected');
  }
  const methods = [...new Set(spec.calls.map((c) => c.method))].map((m) => `${m} ${spec.calls.filter((c) => c.method === m).length}`).join(', ');
  console.log(`${spec.name}: ${spec.calls.length} storage calls (${methods}); ${runs.length} injections: ${failed} failed cleanly, ${tolerated} tolerated`);
  assert.ok(failed > 0 && spec.calls.length > spec.minCalls);
}

describe('S3 failures at every call', () => {
  let engine: ParquetEngine;
  before(async () => {
    engine = await openParquetEngine();
  });
  after(async () => {
    await engine.close();
  });

  it('of a write: one clear error, no unhandled rejection, the table as before (or committed), the instant rolled back', async () => {
    const dir = tempDir('fault-write-');
    const base = join(dir, 'base');
    const seed = [...generateUsers({ count: 20, seed: 3, idStart: 1, startDate: '2024-01-01', days: 2 })];
    const seedFile = join(dir, 'seed.jsonl');
    await writeJsonLines(seedFile, seed);
    await writeBatch(openStorage(base), { input: { file: seedFile, format: 'jsonl' }, operation: 'insert', properties: WRITE_PROPS });
    // Updates in both partitions and inserts into a new one: three file groups, uploaded concurrently.
    const batch = [
      ...seed.slice(0, 8).map((u) => ({ ...u, name: 'updated', createTime: `${u.dt} 23:00:00` })),
      ...generateUsers({ count: 4, seed: 4, idStart: 100, startDate: '2024-01-03', days: 1 }),
    ];
    const batchFile = join(dir, 'batch.jsonl');
    await writeJsonLines(batchFile, batch);
    const write = (storage: FaultyStorage) =>
      writeBatch(storage, { input: { file: batchFile, format: 'jsonl' }, operation: 'upsert', properties: WRITE_PROPS, lock: lockOn(storage), tempDir: dir });

    const beforeRows = await snapshotRows(base);
    const beforeFiles = dataFiles(base);
    const baseInstants = new Set((await loadTimeline(openStorage(base), TIMELINE_LAYOUT_1)).instants.map((i) => i.time));
    const clean = copyOf(base);
    const counting = faultyStorage(clean, undefined);
    const done = await write(counting);
    assert.equal(done.stats.length, 3);
    const afterRows = await snapshotRows(clean);
    await checkEveryFault({
      name: 'write',
      calls: [...counting.calls],
      table: () => copyOf(base),
      operation: write,
      minCalls: 20,
      check: async (table, label, failed) => {
        const timeline = await loadTimeline(openStorage(table), TIMELINE_LAYOUT_1);
        const committed = timeline.instants.some((i) => i.action === 'commit' && i.state === 'COMPLETED' && !baseInstants.has(i.time));
        if (!failed) assert.ok(committed, `${label}: a write that succeeded committed`);
        assert.deepEqual(
          await snapshotRows(table),
          committed ? afterRows : beforeRows,
          `${label}: the table reads as ${committed ? 'after' : 'before'}, nothing partial`,
        );
        await rollBackPending(table);
        assert.deepEqual(await snapshotRows(table), committed ? afterRows : beforeRows, `${label}: the same after rolling back what was pending`);
        assert.deepEqual(await strayDataFiles(table, beforeFiles), [], `${label}: no data file outside a completed commit`);
        if (!committed) {
          // Hudi leaves a new partition's .hoodie_partition_metadata behind too; no data file of the failed write stays.
          const extra = dataFiles(table).filter((path) => !beforeFiles.includes(path));
          assert.ok(
            extra.every((path) => path.endsWith('/.hoodie_partition_metadata')),
            `${label}: files left: ${extra.join(', ')}`,
          );
          assert.deepEqual(
            beforeFiles.filter((path) => !dataFiles(table).includes(path)),
            [],
            `${label}: no file of the table was lost`,
          );
        }
      },
    });
  });

  it('of the first write, which creates the table: one clear error, no unhandled rejection, no data file left, the next write completes', async () => {
    const dir = tempDir('fault-create-');
    const seedFile = join(dir, 'seed.jsonl');
    await writeJsonLines(seedFile, [...generateUsers({ count: 10, seed: 5, idStart: 1, startDate: '2024-01-01', days: 2 })]);
    // An upsert, so the write run again after a failure that committed leaves the same rows.
    const create = (storage: FaultyStorage) =>
      writeBatch(storage, { input: { file: seedFile, format: 'jsonl' }, operation: 'upsert', properties: WRITE_PROPS, lock: lockOn(storage), tempDir: dir });
    const counting = faultyStorage(join(dir, 'counting'), undefined);
    assert.equal((await create(counting)).createdTable, true);
    const afterRows = await snapshotRows(join(dir, 'counting'));
    await checkEveryFault({
      name: 'first write (creating the table)',
      calls: [...counting.calls],
      table: () => join(tempDir('fault-'), 'table'),
      operation: create,
      minCalls: 10,
      check: async (table, label, failed) => {
        if (existsSync(join(table, '.hoodie/hoodie.properties'))) {
          const committed = (await loadTimeline(openStorage(table), TIMELINE_LAYOUT_1)).completedWrites().length > 0;
          assert.ok(committed || failed, `${label}: a write that succeeded committed`);
          assert.deepEqual(await snapshotRows(table), committed ? afterRows : [], `${label}: the new table reads as empty or as written, nothing partial`);
          await rollBackPending(table);
          assert.deepEqual(await strayDataFiles(table, []), [], `${label}: no data file outside a completed commit`);
        } else {
          assert.ok(failed, `${label}: no table, so the write failed`);
          assert.deepEqual(existsSync(table) ? dataFiles(table) : [], [], `${label}: no data file without a table`);
        }
        // The same write, run again as it is, completes.
        await create(faultyStorage(table, undefined));
        assert.deepEqual(await snapshotRows(table), afterRows, `${label}: the next write completes`);
      },
    });
  });

  // Sorted: the rows are rewritten and the outputs uploaded after. Unsorted with a target file size of one input file:
  // binary copy, one output per input, each uploading while the next is written.
  for (const [how, event, outputsPerGroup] of [
    ['sorted', { 'hoodie.clustering.plan.strategy.sort.columns': 'birthday' }, 1],
    ['by binary copy into several outputs', { 'hoodie.clustering.plan.strategy.target.file.max.bytes': 'largest input' }, 3],
  ] as const) {
    it(`of a clustering ${how} (cluster --mode scheduleAndExecute): one clear error, no unhandled rejection, the same rows, the plan rolls back cleanly`, async () => {
      const base = join(tempDir('fault-cluster-'), 'base');
      await createSmallFilesTable({ dir: base, partitions: 2, commits: 3, rowsPerFile: 5 });
      const largest = Math.max(...dataFiles(base).map((file) => statSync(join(base, file)).size));
      const config = resolveClusteringConfig({
        event: Object.fromEntries(Object.entries(event).map(([key, value]) => [key, value === 'largest input' ? String(largest) : value])),
      }).config;
      const cluster = async (storage: FaultyStorage) =>
        runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
          mode: 'scheduleAndExecute',
          config,
          force: true,
          lock: lockOn(storage),
          engine,
          tempDir: tempDir('fault-cluster-work-'),
        });

      const beforeRows = await snapshotRows(base);
      const beforeFiles = dataFiles(base);
      const countingTable = copyOf(base);
      const counting = faultyStorage(countingTable, undefined);
      const done = await cluster(counting);
      assert.equal(done.executedGroups.length, 2);
      const stats = Object.values((await readCompletedClustering(openStorage(countingTable), TIMELINE_LAYOUT_1, done.instantTime!)).partitionToWriteStats);
      assert.deepEqual(
        stats.map((partition) => partition.length),
        [outputsPerGroup, outputsPerGroup],
      );
      await checkEveryFault({
        name: 'clustering',
        calls: [...counting.calls],
        table: () => copyOf(base),
        operation: cluster,
        minCalls: 20,
        check: async (table, label, failed) => {
          const timeline = await loadTimeline(openStorage(table), TIMELINE_LAYOUT_1);
          const committed = timeline.instants.some((i) => i.action === 'replacecommit' && i.state === 'COMPLETED');
          if (!failed) assert.ok(committed, `${label}: a clustering that succeeded committed`);
          assert.deepEqual(await snapshotRows(table), beforeRows, `${label}: the same rows`);
          const rolledBack = await rollBackPending(table);
          assert.deepEqual(await snapshotRows(table), beforeRows, `${label}: the same rows after rolling back`);
          assert.deepEqual(await strayDataFiles(table, beforeFiles), [], `${label}: no data file outside a completed instant`);
          if (!committed) {
            assert.deepEqual(
              dataFiles(table),
              beforeFiles,
              `${label}: no file of the failed clustering is left (rolled back ${rolledBack.join(', ') || 'nothing'})`,
            );
          }
        },
      });
    });
  }
});
