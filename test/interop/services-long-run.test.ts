/**
 * A long-lived table written by us under Hudi's automatic services at their defaults (10 commits retained, keep
 * 20..30): our writer's upserts and our clusterings, a clean and an archive run after every commit. At the end at
 * most hoodie.keep.max.commits commits are active, no replaced or superseded file is left beyond the retention
 * policy (worked out from the run's history, not by the planner), and Spark (real Hudi 0.15) and our reader return
 * exactly the rows written. Issue 12's size: 200 commits and 20 clusterings over 4 partitions (about two minutes
 * here, Spark included); `npm run long-run:services` is the same run with its figures printed, at any size.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../lib/read/reader.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { archivedInstants, archiveFolder, readArchivedRecords } from '../../lib/timeline/archived/archived-timeline.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';
import { checkRetention, type LongRunResult, runServicesLongRun } from '../helpers/services-long-run.js';
import { rowLines } from '../helpers/services-table.js';

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
    const storage = new LocalStorage(dir);
    const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
    const active = timeline
      .completed()
      .filter((instant) => ['commit', 'replacecommit'].includes(instant.action))
      .map((instant) => instant.time);
    assert.equal(run.commits.length, 220);
    assert.equal(run.clusterings, 20);
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
    const table = await HudiTable.open(storage);
    const archived = archivedInstants((await readArchivedRecords(storage, archiveFolder(table.config.archiveLogFolder))).records)
      .filter((entry) => ['commit', 'replacecommit'].includes(entry.instant.action))
      .map((entry) => entry.instant.time);
    assert.deepEqual([...archived, ...active].sort(), [...run.commits].sort(), 'active and archived timelines hold every commit once');
  });

  it('leaves no replaced or superseded file beyond the retention policy', () => {
    const retention = checkRetention(run);
    assert.ok(retention.earliestCommitToRetain !== undefined);
    assert.deepEqual(retention.beyondRetention, []);
  });

  it('Spark and our reader read exactly the rows written', async () => {
    const expected = rowLines(run.table.rows.values());
    const spark = (await hudi.read(dir, { meta: false, options: { 'hoodie.metadata.enable': 'false' } })).rows as Record<string, unknown>[];
    assert.deepEqual(rowLines(spark), expected, 'Spark');
    const ours = (await readSnapshot(await HudiTable.open(new LocalStorage(dir)))).rows as Record<string, unknown>[];
    assert.deepEqual(rowLines(ours), expected, 'our reader');
  });
});
