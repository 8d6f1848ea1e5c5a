/**
 * The serverless clean's steps (lib/serverless/steps/cleaning/ over lib/cleaning/shares.ts), run in-process on a
 * local table of 1,000 partitions as the state machine would run them: prepare, every planning share, schedule,
 * every delete share, complete. No worker lists more than its share of partitions, and the clean deletes exactly the
 * files, and writes the same plan, as the one-process clean (lib/cleaning/clean.ts) on a copy of the table.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { tidyCleanWorkFolder } from '../../lib/cleaning/shares.js';
import { readCleanerPlan, readCleanMetadata } from '../../lib/cleaning/timeline-facts.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { serviceClientsFromEnv } from '../../lib/serverless/aws/clients.js';
import {
  type CleanStepOutput,
  cleanCompleteStep,
  cleanExecuteShareStep,
  cleanPlanShareStep,
  cleanPrepareStep,
  cleanScheduleStep,
} from '../../lib/serverless/steps/cleaning/index.js';
import type { StepDependencies } from '../../lib/serverless/steps/contract.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { CLEAN_WORK_ROOT, cleanPlanningDir, cleanWorkDir } from '../../lib/timeline/work-folder.js';
import { tempDir } from '../helpers/paths.js';
import { type FileWrite, fileId, SyntheticTable, t } from '../helpers/synthetic-table.js';

const PARTITIONS = 1_000;
const PER_SHARE = 150;
const PROPERTIES = {
  'hoodie.cleaner.commits.retained': '2',
  'hoodie.serverless.clean.partitions.per.share': String(PER_SHARE),
  'hoodie.serverless.clean.files.per.share': '70',
};

/** 1,000 partitions of one file group each: every group rewritten once, one partition in ten a third time. */
async function build(): Promise<SyntheticTable> {
  const table = await SyntheticTable.create({ dir: join(tempDir('clean-shares-'), 'table') });
  const groups: FileWrite[] = Array.from({ length: PARTITIONS }, (_, p) => ({ partition: `dt=${String(p).padStart(4, '0')}`, fileId: fileId(p) }));
  await table.commit(t(1), groups, 'INSERT');
  await table.commit(t(2), groups);
  await table.commit(
    t(3),
    groups.filter((_, p) => p % 10 === 0),
  );
  await table.commit(
    t(4),
    groups.filter((_, p) => p % 10 === 1),
  );
  await table.commit(
    t(5),
    groups.filter((_, p) => p % 10 === 2),
  );
  return table;
}

function deps(now: Date): StepDependencies {
  const log = { info: () => undefined, warn: () => undefined };
  return { env: { CLUSTERING_PROPERTIES: JSON.stringify(PROPERTIES) }, clients: serviceClientsFromEnv({}), log, now: () => now };
}

/** Run the clean as the state machine does, every share in turn; the steps' outputs. */
async function serverlessClean(
  dir: string,
  now: Date,
): Promise<{ prepared: CleanStepOutput; scheduled: CleanStepOutput; completed: CleanStepOutput; listedPerShare: number[] }> {
  const d = deps(now);
  const input = { tablePath: dir, services: 'clean-archive' as const };
  const prepared = await cleanPrepareStep({ ...input, runId: 'test-run' }, d);
  assert.equal(prepared.status, 'PLAN', JSON.stringify(prepared));
  if (prepared.status !== 'PLAN') throw new Error('unreachable');
  const listedPerShare: number[] = [];
  for (const share of prepared.shares) {
    const planned = await cleanPlanShareStep({ ...input, planningId: prepared.planningId, shareIndex: share.index }, d);
    listedPerShare.push(planned.partitions);
    // A retried share finds its result and does nothing.
    assert.equal((await cleanPlanShareStep({ ...input, planningId: prepared.planningId, shareIndex: share.index }, d)).outcome, 'already-done');
  }
  const scheduled = await cleanScheduleStep({ ...input, planningId: prepared.planningId }, d);
  assert.equal(scheduled.status, 'EXECUTE', JSON.stringify(scheduled));
  if (scheduled.status !== 'EXECUTE') throw new Error('unreachable');
  for (const share of scheduled.shares) await cleanExecuteShareStep({ ...input, instant: scheduled.instant, shareIndex: share.index }, d);
  const completed = await cleanCompleteStep({ ...input, instant: scheduled.instant }, d);
  return { prepared, scheduled, completed, listedPerShare };
}

describe('the serverless clean in shares, on 1,000 partitions', () => {
  it('lists at most a share of partitions per worker and deletes exactly what the one-process clean deletes', async () => {
    const table = await build();
    const copy = join(tempDir('clean-shares-copy-'), 'table');
    cpSync(table.dir, copy, { recursive: true });
    const now = new Date(Date.UTC(2024, 0, 1, 0, 0, 10));

    const { prepared, scheduled, completed, listedPerShare } = await serverlessClean(table.dir, now);
    assert.ok(prepared.status === 'PLAN' && scheduled.status === 'EXECUTE' && completed.status === 'CLEANED');
    // No clean before: the full scope, every partition, in shares of PER_SHARE.
    assert.equal(prepared.partitions, PARTITIONS);
    assert.equal(prepared.shares.length, Math.ceil(PARTITIONS / PER_SHARE));
    assert.deepEqual(
      listedPerShare,
      prepared.shares.map((share) => Math.min(PER_SHARE, PARTITIONS - share.index * PER_SHARE)),
    );
    // Delete shares: whole partitions, at most 70 files each (one per partition here).
    assert.ok(scheduled.totalShares >= Math.ceil(scheduled.files / 70), `${scheduled.totalShares} delete shares for ${scheduled.files} files`);
    assert.equal(completed.outcome, 'completed');

    const one = await runClean(await HudiTable.open(new LocalStorage(copy)), {
      config: cleanConfigFromProperties(new Map(Object.entries(PROPERTIES))),
      lock: new StorageLockProvider(new LocalStorage(copy)),
      now,
    });
    assert.equal(one.outcome, 'cleaned');
    const oneInstant = one.clean!.instantTime;
    const storage = new LocalStorage(table.dir);
    const ours = await readCleanMetadata(storage, completed.instant, TIMELINE_LAYOUT_1);
    const theirs = await readCleanMetadata(new LocalStorage(copy), oneInstant, TIMELINE_LAYOUT_1);
    assert.ok(ours !== undefined && theirs !== undefined);
    const deleted = (metadata: typeof ours) =>
      Object.values(metadata!.partitionMetadata)
        .flatMap((partition) => partition.successDeleteFiles.map((name) => `${partition.partitionPath}/${name}`))
        .sort();
    // Two commits retained: t4 is the earliest to retain; every group keeps its newest version before t4 (t3 for the
    // tenth rewritten at t3, t2 for the rest), so t1 goes everywhere and t2 too where t3 rewrote it.
    assert.equal(deleted(ours).length, PARTITIONS + PARTITIONS / 10);
    assert.deepEqual(deleted(ours), deleted(theirs), 'the same files');
    assert.equal(ours.earliestCommitToRetain, theirs.earliestCommitToRetain);
    assert.equal(ours.totalFilesDeleted, theirs.totalFilesDeleted);
    // Merged from the delete shares' stats, the clean metadata is the one-process clean's, partition by partition.
    const sorted = (metadata: typeof ours) =>
      Object.fromEntries(
        Object.entries(metadata!.partitionMetadata)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([partition, stats]) => [
            partition,
            {
              ...stats,
              deletePathPatterns: [...stats.deletePathPatterns].sort(),
              successDeleteFiles: [...stats.successDeleteFiles].sort(),
              failedDeleteFiles: [...stats.failedDeleteFiles].sort(),
            },
          ]),
      );
    assert.deepEqual(sorted(ours), sorted(theirs));
    assert.deepEqual(
      { ...ours, partitionMetadata: {}, startCleanTime: '', timeTakenInMillis: 0 },
      { ...theirs, partitionMetadata: {}, startCleanTime: '', timeTakenInMillis: 0 },
    );
    // The plans agree but for the absolute paths (each names its own table folder).
    const plan = JSON.stringify(await readCleanerPlan(storage, completed.instant, TIMELINE_LAYOUT_1)).replaceAll(storage.uriOf(''), '<table>');
    const onePlan = JSON.stringify(await readCleanerPlan(new LocalStorage(copy), oneInstant, TIMELINE_LAYOUT_1)).replaceAll(
      new LocalStorage(copy).uriOf(''),
      '<table>',
    );
    assert.equal(plan, onePlan);
    assert.deepEqual(await storage.listRecursive(CLEAN_WORK_ROOT), [], 'no share or result is left');
  });

  it('tidying removes the folders of completed cleans at once, and others only once untouched for an hour', async () => {
    const table = await build();
    const storage = new LocalStorage(table.dir);
    const now = new Date(Date.UTC(2024, 0, 1, 0, 0, 10));
    const { completed } = await serverlessClean(table.dir, now);
    assert.ok(completed.status === 'CLEANED');
    // Left behind: the completed clean's folder, one of a clean this timeline has not seen (another run may have
    // just scheduled it), and a planning folder.
    const unknown = t(99);
    const planning = 'plan-20240101000000000-0123abcd';
    for (const dir of [cleanWorkDir(completed.instant), cleanWorkDir(unknown), cleanPlanningDir(planning)]) await storage.put(`${dir}/manifest.json`, '{}');
    const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
    assert.deepEqual(await tidyCleanWorkFolder(storage, timeline, new Date()), [completed.instant]);
    assert.deepEqual((await tidyCleanWorkFolder(storage, timeline, new Date(Date.now() + 2 * 3600_000))).sort(), [unknown, planning].sort());
    assert.deepEqual(await storage.listRecursive(CLEAN_WORK_ROOT), []);
  });
});
