/**
 * A long-lived table written by us under Hudi's automatic services at their defaults (10 commits retained, keep
 * 20..30): our writer's upserts and our clusterings, a clean and an archive run after every commit. At the end at
 * most hoodie.keep.max.commits commits are active, no replaced or superseded file is left beyond the retention
 * policy (worked out from the run's history, not by the planner), and Spark and our reader return exactly the rows
 * written. Issue 12's size: 200 commits and 20 clusterings over 4 partitions, at table version 6 (read by Hudi 0.15)
 * and at version 9 (issue 42: Hudi 1.1.1 reads it, lists the LSM history our archiver wrote as we list it, then
 * writes one commit whose cleaner and archiver run over ours). `npm run long-run:services` is the same run with its
 * figures printed, at any size and table version.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { historyFolder, readTimelineHistory } from '../../lib/timeline/history/index.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { type HudiArchivedInstant, historyAsHudiReports, hudiArchivedInstants, SPARK_SERVICES_EVERY_COMMIT } from '../helpers/hudi-1x-history.js';
import { tempDir } from '../helpers/paths.js';
import { checkRetention, type LongRunResult, runServicesLongRun } from '../helpers/services-long-run.js';
import { rowLines } from '../helpers/services-table.js';

/** The run's commits are each once on the active timeline or in the archived one (layout 1's or the LSM history). */
async function assertArchivedOnce(run: LongRunResult, dir: string): Promise<void> {
  const table = await HudiTable.open(new LocalStorage(dir));
  const timeline = table.timeline;
  const active = timeline
    .completed()
    .filter((instant) => ['commit', 'replacecommit'].includes(instant.action))
    .map((instant) => instant.time);
  assert.ok(active.length <= run.archival.maxCommits, `${active.length} active commits, at most ${run.archival.maxCommits}`);
  assert.ok(active.length >= run.archival.minCommits, `${active.length} active commits, at least ${run.archival.minCommits}`);
  assert.ok(run.cleans > 0 && run.archivedInstants > 0);
  // The rest of the active timeline is cleans, which Hudi archives by their own count (past keep.max.commits of them).
  const others = timeline.instants.filter((instant) => !['commit', 'replacecommit'].includes(instant.action));
  assert.ok(
    others.every((instant) => instant.action === 'clean' && instant.state === 'COMPLETED'),
    others.map((instant) => `${instant.time}.${instant.action}`).join(' '),
  );
  assert.ok(others.length <= run.archival.maxCommits, `${others.length} cleans active`);
  const archived = (await table.archivedHistory()).instants
    .filter((instant) => ['commit', 'replacecommit'].includes(instant.action) && instant.state === 'COMPLETED')
    .map((instant) => instant.time);
  assert.deepEqual([...archived, ...active].sort(), [...run.commits].sort(), 'active and archived timelines hold every commit once');
}

/** Our reading of the LSM history in the shape of Hudi's ArchivedTimelineV2 report. */
async function ourHistoryReport(dir: string): Promise<HudiArchivedInstant[]> {
  return historyAsHudiReports(await readTimelineHistory(new LocalStorage(dir), historyFolder()));
}

/** No replaced or superseded file left beyond the retention policy, worked out from the run's history. */
function assertWithinRetention(run: LongRunResult): void {
  const retention = checkRetention(run);
  assert.ok(retention.earliestCommitToRetain !== undefined);
  assert.deepEqual(retention.beyondRetention, []);
}

/** Spark (metadata table off) and our reader return exactly the rows the run wrote. */
async function assertBothReadTheRowsWritten(hudi: HudiHarness, dir: string, run: LongRunResult): Promise<void> {
  const expected = rowLines(run.table.rows.values());
  const spark = (await hudi.read(dir, { meta: false, options: { 'hoodie.metadata.enable': 'false' } })).rows as Record<string, unknown>[];
  assert.deepEqual(rowLines(spark), expected, 'Spark');
  const ours = (await readSnapshot(await HudiTable.open(new LocalStorage(dir)))).rows as Record<string, unknown>[];
  assert.deepEqual(rowLines(ours), expected, 'our reader');
}

describe('a table of ours through 200 commits and 20 clusterings, cleaned and archived after every commit', () => {
  let hudi: HudiHarness;
  let run: LongRunResult;
  let dir: string;

  before(async () => {
    // Spark starts while we write.
    const starting = startHudi();
    dir = join(tempDir('services-long-run-'), 'services');
    try {
      run = await runServicesLongRun({ dir, partitions: 4, commits: 200, clusterEvery: 10 });
    } finally {
      hudi = await starting;
    }
  });

  after(async () => {
    await hudi?.close();
  });

  it('ends with at most keep.max.commits commits active, every other instant archived exactly once', async () => {
    assert.equal(run.commits.length, 220);
    assert.equal(run.clusterings, 20);
    await assertArchivedOnce(run, dir);
  });

  it('leaves no replaced or superseded file beyond the retention policy', () => assertWithinRetention(run));

  it('Spark and our reader read exactly the rows written', () => assertBothReadTheRowsWritten(hudi, dir, run));
});

describe('a version 9 table of ours through 200 commits and 20 clusterings, its LSM history read and kept by Hudi 1.1.1', () => {
  let hudi: HudiHarness;
  let run: LongRunResult;
  let dir: string;

  before(async () => {
    const starting = startHudi({ hudiVersion: '1.1.1' });
    dir = join(tempDir('services-long-run-v9-'), 'services');
    try {
      run = await runServicesLongRun({ dir, partitions: 4, commits: 200, clusterEvery: 10, tableVersion: 9 });
    } finally {
      hudi = await starting;
    }
  });

  after(async () => {
    await hudi?.close();
  });

  it('stays at table version 9, at most keep.max.commits commits active, every other one once in the LSM history', async () => {
    const table = await HudiTable.open(new LocalStorage(dir));
    assert.equal(table.config.version, 9);
    assert.equal(table.layout.version, 2);
    assert.equal(run.commits.length, 220);
    assert.equal(run.clusterings, 20);
    await assertArchivedOnce(run, dir);
  });

  it('leaves no replaced or superseded file beyond the retention policy', () => assertWithinRetention(run));

  it('Spark reads exactly the rows written, and Hudi lists the archived instants we list, with the same metadata', async () => {
    await assertBothReadTheRowsWritten(hudi, dir, run);
    const theirs = await hudiArchivedInstants(hudi, dir);
    assert.ok(theirs.length >= run.archivedInstants, `Hudi lists ${theirs.length} archived instants; we archived ${run.archivedInstants}`);
    assert.deepEqual(await ourHistoryReport(dir), theirs);
  });

  it('Spark writes a commit on top; its cleaner and archiver run over ours, and Hudi and we read the same', async () => {
    const before = await hudiArchivedInstants(hudi, dir);
    const lastClean = (await HudiTable.open(new LocalStorage(dir))).timeline
      .completed()
      .filter((instant) => instant.action === 'clean')
      .at(-1)!.time;
    const target = [...run.table.rows.values()][0]!;
    const written = { ...target, name: `spark@${target.id}`, ts: 1_000 };
    await hudi.write(dir, {
      schema: 'id BIGINT, name STRING, ts BIGINT, dt STRING',
      rows: [written],
      options: {
        'hoodie.table.name': 'services',
        'hoodie.datasource.write.recordkey.field': 'id',
        'hoodie.datasource.write.partitionpath.field': 'dt',
        'hoodie.datasource.write.precombine.field': 'ts',
        'hoodie.datasource.write.operation': 'upsert',
        'hoodie.metadata.enable': 'false',
        // Tighter than the run's, so Hudi's services have work on our table after one commit.
        ...SPARK_SERVICES_EVERY_COMMIT,
      },
    });
    const table = await HudiTable.open(new LocalStorage(dir));
    assert.equal(table.config.version, 9, 'Spark kept the version');
    const cleans = table.timeline.completed().filter((instant) => instant.action === 'clean' && instant.time > lastClean);
    assert.equal(cleans.length, 1, 'Spark cleaned after its commit');
    const theirs = await hudiArchivedInstants(hudi, dir);
    assert.deepEqual(theirs.slice(0, before.length), before, 'our archived instants stay');
    assert.ok(theirs.length > before.length, 'Hudi archived more instants into our history');
    assert.deepEqual(await ourHistoryReport(dir), theirs);
    const expected = rowLines(new Map([...run.table.rows, [written.id, written]]).values());
    const spark = (await hudi.read(dir, { meta: false, options: { 'hoodie.metadata.enable': 'false' } })).rows as Record<string, unknown>[];
    assert.deepEqual(rowLines(spark), expected, 'Spark');
    const ours = (await readSnapshot(await HudiTable.open(new LocalStorage(dir)))).rows as Record<string, unknown>[];
    assert.deepEqual(rowLines(ours), expected, 'our reader');
  });
});
