/**
 * Healing after a crash without an operator (lib/rollback/failed-writes.ts, the clustering job's take-over): the policy as
 * Hudi resolves it, the next write rolling back a killed one (EAGER) or leaving a live one alone (LAZY), leftovers of
 * a write killed just after its commit, and a re-run of `cluster --mode scheduleAndExecute` resuming a killed run.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import { HudiError } from '../../lib/errors.js';
import type { LockProvider } from '../../lib/lock/port.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { failedWritesPolicy } from '../../lib/rollback/failed-writes.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { CrashLock, CrashPoint, CrashStorage, ProcessCrash } from '../helpers/crash-storage.js';
import { LOAD_SCALE } from '../helpers/load.js';
import { tempDir } from '../helpers/paths.js';

const PROPS = new Map([
  ['hoodie.table.name', 'heal'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.index.bloom.num_entries', '100'],
]);
const record = (id: number, ts: number) => ({ id, name: `n${id}@${ts}`, ts, dt: id % 2 === 0 ? 'even' : 'odd' });
// A short lease keeps the crash loops fast (a crashed holder's lease is waited out), longer on a loaded machine.
const lockFor = (dir: string) => new StorageLockProvider(new LocalStorage(`${dir}.lock`), { leaseMs: 1500 * LOAD_SCALE, pollMs: 20 });

let engine: ParquetEngine;
before(async () => {
  engine = await openParquetEngine({ memoryLimit: '256MB' });
});
after(async () => {
  await engine.close();
});

async function ids(dir: string): Promise<number[]> {
  const rows = (await readSnapshot(await HudiTable.open(new LocalStorage(dir)), { engine })).rows as Record<string, unknown>[];
  return rows.map((row) => Number(row['id'])).sort((a, b) => a - b);
}

async function write(
  storage: Storage,
  dir: string,
  idsToWrite: readonly number[],
  props: ReadonlyMap<string, string> = PROPS,
  lock: LockProvider = lockFor(dir),
): Promise<void> {
  const file = join(dir, '..', `in-${idsToWrite.join('-')}.jsonl`);
  await writeJsonLines(
    file,
    idsToWrite.map((id) => record(id, 1)),
  );
  await writeBatch(storage, { input: { file, format: 'jsonl' }, operation: 'upsert', properties: props, lock });
}

/** A write of `idsToWrite` killed just before (or, `afterCommit`, just after) its `T.commit`. */
async function killedWrite(dir: string, idsToWrite: readonly number[], afterCommit = false): Promise<void> {
  const probe = new CrashPoint();
  const probeDir = `${dir}-probe`;
  cpSync(dir, probeDir, { recursive: true });
  await write(new CrashStorage(new LocalStorage(probeDir), probe), probeDir, idsToWrite, PROPS, new CrashLock(lockFor(probeDir), probe));
  const commitCall = probe.log.findIndex((line) => /^\d+ putIfAbsent \.hoodie\/\d{17}\.commit$/.test(line)) + 1;
  assert.ok(commitCall > 0);
  const point = new CrashPoint(afterCommit ? commitCall + 1 : commitCall);
  await assert.rejects(write(new CrashStorage(new LocalStorage(dir), point), dir, idsToWrite, PROPS, new CrashLock(lockFor(dir), point)), ProcessCrash);
}

describe('hoodie.cleaner.policy.failed.writes', () => {
  it('is EAGER for a single writer, LAZY with optimistic concurrency (whatever it says) or the DynamoDB lock, refused when unknown', () => {
    assert.equal(failedWritesPolicy(new Map()).policy, 'EAGER');
    assert.equal(failedWritesPolicy(new Map([['hoodie.cleaner.policy.failed.writes', 'lazy']])).policy, 'LAZY');
    assert.equal(
      failedWritesPolicy(
        new Map([
          ['hoodie.write.concurrency.mode', 'OPTIMISTIC_CONCURRENCY_CONTROL'],
          ['hoodie.cleaner.policy.failed.writes', 'EAGER'],
        ]),
      ).policy,
      'LAZY',
    );
    assert.equal(
      failedWritesPolicy(new Map([['hoodie.write.lock.provider', 'org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider']])).policy,
      'LAZY',
    );
    assert.equal(
      failedWritesPolicy(new Map([['hoodie.write.lock.provider', 'org.apache.hudi.client.transaction.lock.StorageBasedLockProvider']])).policy,
      'LAZY',
      "Hudi's storage-based lock is shared with Hudi writers too",
    );
    assert.equal(failedWritesPolicy(new Map([['hoodie.cleaner.policy.failed.writes', 'NEVER']])).policy, 'NEVER');
    assert.throws(
      () => failedWritesPolicy(new Map([['hoodie.cleaner.policy.failed.writes', 'SOMETIMES']])),
      (error: unknown) =>
        error instanceof HudiError &&
        /hoodie\.cleaner\.policy\.failed\.writes="SOMETIMES" is not an accepted value \(use one of EAGER, LAZY, NEVER/.test(error.message),
    );
  });
});

describe('the next write heals the table', () => {
  it('EAGER (default): a write killed before its commit is rolled back by the next write, which commits', async () => {
    const dir = join(tempDir(), 'table');
    await write(new LocalStorage(dir), dir, [1, 2]);
    await killedWrite(dir, [3, 4]);
    const pending = (await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1)).pending();
    assert.deepEqual(
      pending.map((i) => i.action),
      ['commit'],
    );
    assert.deepEqual(await ids(dir), [1, 2]);

    await write(new LocalStorage(dir), dir, [5]);
    const timeline = await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1);
    assert.deepEqual(timeline.pending(), []);
    assert.ok(
      timeline.completed().some((i) => i.action === 'rollback'),
      'a rollback instant records it',
    );
    assert.equal(timeline.find(pending[0]!.time), undefined);
    assert.deepEqual(await ids(dir), [1, 2, 5]);
    assert.deepEqual(readdirSync(join(dir, '.hoodie/.temp')), []);
  });

  it('LAZY: a killed write whose heartbeat is fresh stays pending; the next write commits beside it', async () => {
    const dir = join(tempDir(), 'table');
    await write(new LocalStorage(dir), dir, [1, 2]);
    await killedWrite(dir, [3, 4]);
    const lazy = new Map([...PROPS, ['hoodie.write.concurrency.mode', 'optimistic_concurrency_control']]);
    await write(new LocalStorage(dir), dir, [5], lazy);
    assert.deepEqual(
      (await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1)).pending().map((i) => i.action),
      ['commit'],
      'left alone: its writer may be alive',
    );
    assert.deepEqual(await ids(dir), [1, 2, 5]);
  });

  it('a write killed just after its commit leaves its markers and heartbeat; the next write removes them', async () => {
    const dir = join(tempDir(), 'table');
    await write(new LocalStorage(dir), dir, [1, 2]);
    await killedWrite(dir, [3, 4], true);
    const committed = (await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1)).completed().at(-1)!.time;
    assert.ok(existsSync(join(dir, '.hoodie/.temp', committed)), 'the killed write left its marker folder');
    assert.ok(existsSync(join(dir, '.hoodie/.heartbeat', committed)), 'and its heartbeat');
    assert.deepEqual(await ids(dir), [1, 2, 3, 4]);

    await write(new LocalStorage(dir), dir, [5]);
    assert.equal(existsSync(join(dir, '.hoodie/.temp', committed)), false);
    assert.equal(existsSync(join(dir, '.hoodie/.heartbeat', committed)), false);
    assert.deepEqual(await ids(dir), [1, 2, 3, 4, 5]);
  });
});

describe('cluster --mode scheduleAndExecute after a killed run', () => {
  it('leaves a plan whose heartbeat is fresh alone; once it expired, resumes it, says so, and commits', async () => {
    const dir = join(tempDir(), 'table');
    for (const batch of [
      [1, 2],
      [3, 4],
      [5, 6],
    ]) {
      const file = join(dir, '..', `bulk-${batch.join('-')}.jsonl`);
      await writeJsonLines(
        file,
        batch.map((id) => record(id, 1)),
      );
      await writeBatch(new LocalStorage(dir), { input: { file, format: 'jsonl' }, operation: 'bulk_insert', properties: PROPS, lock: lockFor(dir) });
    }
    const config = resolveClusteringConfig({}).config;
    const job = (storage: Storage, lock: LockProvider, now?: Date, lines: string[] = []) =>
      HudiTable.open(storage, { mode: 'write' }).then((table) =>
        runClusteringJob(table, {
          mode: 'scheduleAndExecute',
          config,
          lock,
          engine,
          tempDir: tempDir(),
          onProgress: (line) => lines.push(line),
          ...(now === undefined ? {} : { now }),
        }),
      );
    // Killed after its first group wrote its result (the group-result put), before the second group.
    const probeDir = `${dir}-probe`;
    cpSync(dir, probeDir, { recursive: true });
    const probe = new CrashPoint();
    await job(new CrashStorage(new LocalStorage(probeDir), probe), new CrashLock(lockFor(probeDir), probe));
    const firstResult = probe.log.findIndex((line) => /group-0\.result\.json$/.test(line)) + 1;
    assert.ok(firstResult > 0, probe.log.join('; '));
    const point = new CrashPoint(firstResult + 1);
    await assert.rejects(job(new CrashStorage(new LocalStorage(dir), point), new CrashLock(lockFor(dir), point)), ProcessCrash);
    const plan = (await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1)).pending();
    assert.deepEqual(
      plan.map((i) => `${i.action}.${i.state}`),
      ['replacecommit.INFLIGHT'],
    );

    const fresh = await job(new LocalStorage(dir), lockFor(dir));
    assert.equal(fresh.takenOver, undefined, 'its heartbeat is fresh: the run may be alive');
    assert.ok((await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1)).pending().some((i) => i.time === plan[0]!.time));

    const lines: string[] = [];
    const later = await job(new LocalStorage(dir), lockFor(dir), new Date(Date.now() + 5 * 60_000), lines);
    assert.deepEqual(later.takenOver && { instant: later.takenOver.instant, outcome: later.takenOver.outcome }, { instant: plan[0]!.time, outcome: 'resumed' });
    assert.deepEqual(later.reusedGroups, [0], 'the group the killed run finished is not run again');
    assert.ok(
      lines.some((line) => line.startsWith(`resuming clustering ${plan[0]!.time}: its run is gone (its heartbeat expired)`)),
      lines.join('\n'),
    );
    const timeline = await loadTimeline(new LocalStorage(dir), TIMELINE_LAYOUT_1);
    assert.deepEqual(timeline.pending(), []);
    assert.equal(timeline.find(plan[0]!.time)?.state, 'COMPLETED');
    assert.deepEqual(await ids(dir), [1, 2, 3, 4, 5, 6]);
  });
});
