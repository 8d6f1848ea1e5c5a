/**
 * A long-lived table under both services at Hudi's defaults (10 commits retained; keep 20 / 30): 200 commits, one
 * in ten a clustering, with a clean and an archive run after every commit (Hudi's automatic services). At the end,
 * worked out from the table's history without the planner: at most keep.max.commits commits are active, no file
 * older than the retention window survives unless it is the version a query at the window's start reads, no file
 * group replaced before the window has a file left, and the file-system view still shows every file group's latest
 * version (active and archived timelines together hold every instant exactly once).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { DEFAULT_ARCHIVAL_CONFIG } from '../../lib/archival/config.js';
import { DEFAULT_CLEAN_CONFIG } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { parseBaseFileName } from '../../lib/table/file-system-view.js';
import { HudiTable } from '../../lib/table/table.js';
import { archivedInstants, archiveFolder, readArchivedRecords } from '../../lib/timeline/archived/archived-timeline.js';
import { compareInstantTimes } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline } from '../../lib/timeline/timeline.js';
import { type FileWrite, fileId, SyntheticTable, t } from '../helpers/synthetic-table.js';

const PARTITIONS = ['dt=1', 'dt=2', 'dt=3'];
const COMMITS = 200;

describe('cleaning and archiving a table through 200 commits and 20 clusterings', () => {
  it("keeps the active timeline and the files within Hudi's bounds, and the latest data intact", async () => {
    const table = await SyntheticTable.create();
    const lock = new StorageLockProvider(table.storage, { waitMs: 5_000, pollMs: 20 });
    let nextId = 0;
    // The live file groups per partition, and for each group its newest version.
    const live = new Map(PARTITIONS.map((partition) => [partition, [] as FileWrite[]]));
    const latest = new Map<string, string>();
    const replacedAt = new Map<string, string>();
    const commits: string[] = [];
    for (const partition of PARTITIONS) live.get(partition)!.push({ partition, fileId: fileId(++nextId) }, { partition, fileId: fileId(++nextId) });
    for (let i = 1; i <= COMMITS; i++) {
      const time = t(i);
      if (i % 10 === 0) {
        // Cluster one partition's two file groups into two new ones.
        const partition = PARTITIONS[(i / 10) % PARTITIONS.length]!;
        const replaced = live.get(partition)!;
        const written = [
          { partition, fileId: fileId(++nextId) },
          { partition, fileId: fileId(++nextId) },
        ];
        await table.clustering(time, replaced, written);
        for (const group of replaced) replacedAt.set(group.fileId, time);
        live.set(partition, written);
        for (const group of written) latest.set(group.fileId, time);
      } else {
        // Update one group of each of two partitions (the first commit inserts everything).
        const writes = i === 1 ? [...live.values()].flat() : [live.get(PARTITIONS[i % 3]!)![i % 2]!, live.get(PARTITIONS[(i + 1) % 3]!)![(i + 1) % 2]!];
        await table.commit(time, writes, i === 1 ? 'INSERT' : 'UPSERT');
        for (const group of writes) latest.set(group.fileId, time);
      }
      commits.push(time);
      const opened = await HudiTable.open(table.storage);
      await runClean(opened, { config: DEFAULT_CLEAN_CONFIG, lock, now: new Date(Date.UTC(2024, 0, 1) + i * 1000 + 100) });
      await runArchive(await opened.reload(), { config: DEFAULT_ARCHIVAL_CONFIG, cleanConfig: DEFAULT_CLEAN_CONFIG, lock });
    }

    const timeline = await loadTimeline(table.storage, TIMELINE_LAYOUT_1);
    const active = timeline.completedWrites();
    assert.ok(active.length <= DEFAULT_ARCHIVAL_CONFIG.maxCommits, `${active.length} active commits`);
    assert.ok(active.length >= DEFAULT_ARCHIVAL_CONFIG.minCommits, `${active.length} active commits`);
    assert.ok(timeline.completed().filter((i) => i.action === 'clean').length <= DEFAULT_ARCHIVAL_CONFIG.maxCommits);
    assert.deepEqual(timeline.pending(), []);

    // Every commit is on exactly one of the two timelines.
    const { records } = await readArchivedRecords(table.storage, archiveFolder('archived'));
    const archived = archivedInstants(records)
      .filter((i) => i.instant.action !== 'clean')
      .map((i) => i.instant.time);
    assert.deepEqual([...archived, ...active.map((i) => i.time)], commits);
    assert.equal(records.filter((r) => r.instant.action !== 'clean').length, archived.length * 3, 'requested, inflight and completed of each');

    // The last clean ran after the last commit: the window starts at the 10th newest commit.
    const retain = commits[commits.length - DEFAULT_CLEAN_CONFIG.commitsRetained]!;
    const files = (await table.baseFiles()).map((path) => ({ path, ...parseBaseFileName(path.slice(path.lastIndexOf('/') + 1))! }));
    for (const [groupId, time] of replacedAt) {
      if (compareInstantTimes(time, retain) < 0)
        assert.deepEqual(
          files.filter((f) => f.fileId === groupId),
          [],
          `group ${groupId} replaced at ${time}`,
        );
    }
    const byGroup = new Map<string, string[]>();
    for (const file of files) byGroup.set(file.fileId, [...(byGroup.get(file.fileId) ?? []), file.instantTime]);
    for (const [groupId, versions] of byGroup) {
      const old = versions.filter((time) => compareInstantTimes(time, retain) < 0);
      assert.ok(old.length <= 1, `group ${groupId} keeps ${old.length} versions older than ${retain}`);
    }
    assert.ok(files.length < COMMITS, `${files.length} base files left of ${COMMITS * 2}`);

    const view = await (await HudiTable.open(table.storage)).fileSystemView();
    assert.deepEqual(
      view
        .latestBaseFiles()
        .map((file) => `${file.fileId}@${file.instantTime}`)
        .sort(),
      [...live.values()]
        .flat()
        .map((group) => `${group.fileId}@${latest.get(group.fileId)}`)
        .sort(),
    );
  });
});
