/**
 * The archiver: its rules on hand-made timelines (arithmetic in the comments, from Hudi 0.15's
 * HoodieTimelineArchiver / ArchivalUtils / ClusteringUtils), the records it writes, archiving a hand-written table,
 * merging small archive files, as-of reads past the active timeline, and a crash after every storage call.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { type ArchivalConfig, archivalConfigFromProperties } from '../../lib/archival/config.js';
import { type ArchiveFacts, minAndMaxToKeep, planArchive } from '../../lib/archiver/plan.js';
import { cleanConfigFromProperties, DEFAULT_CLEAN_CONFIG } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { HudiError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { archiveFolder, listArchiveFiles, readArchivedRecords } from '../../lib/timeline/archived/archived-timeline.js';
import { archivedMetaEntryOf, avroCommitMetadata } from '../../lib/timeline/archived/meta-entry.js';
import type { Instant, InstantAction, InstantState } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, Timeline } from '../../lib/timeline/timeline.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { tempDir } from '../helpers/paths.js';
import { type FileWrite, fileId, SyntheticTable, t } from '../helpers/synthetic-table.js';

const at = (time: string, action: InstantAction = 'commit', state: InstantState = 'COMPLETED'): Instant => ({ time, action, state });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const archival = (props: Record<string, string>): ArchivalConfig => archivalConfigFromProperties(new Map(Object.entries(props)));
const facts = (instants: Instant[], extra: Partial<ArchiveFacts> = {}): ArchiveFacts => ({
  timeline: new Timeline(instants),
  lastCleanRetainedFrom: undefined,
  savepointTimes: [],
  metadataTable: undefined,
  timeZone: 'UTC',
  ...extra,
});
const times = (instants: readonly Instant[]) => instants.map((i) => i.time);
const ts = (...indexes: number[]) => indexes.map(t);

describe('which instants are archived (getInstantsToArchive)', () => {
  const small = archival({ 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3' });
  const retain1 = { ...DEFAULT_CLEAN_CONFIG, commitsRetained: 1 };

  it('past keep.max.commits, down to keep.min.commits', () => {
    // 35 commits, Hudi's 20/30: 15 archived. The cleaner's default retention (10: from t26, 9 after it, + 2 = 11) is below 20.
    const plan = planArchive(facts(range(1, 35).map((i) => at(t(i)))), archival({}), DEFAULT_CLEAN_CONFIG);
    assert.deepEqual(times(plan.instants), ts(...range(1, 15)));
    assert.equal(plan.adjustment, undefined);
    assert.deepEqual(
      plan.keptCommits.map((k) => k.rule),
      Array(20).fill('min-commits'),
    );
    // 30 commits is not more than 30: nothing.
    assert.deepEqual(planArchive(facts(range(1, 30).map((i) => at(t(i)))), archival({}), DEFAULT_CLEAN_CONFIG).instants, []);
  });

  it('keep.min.commits grows to what the cleaner still retains (ArchivalUtils)', () => {
    // 10 commits, cleaner retains 3: from t8; t9 and t10 after it, + 2 = 4 > 2, so min 4 and max 4 + 3 - 2 = 5.
    const timeline = new Timeline(range(1, 10).map((i) => at(t(i))));
    assert.deepEqual(minAndMaxToKeep(timeline, small, { ...DEFAULT_CLEAN_CONFIG, commitsRetained: 3 }, 'UTC').min, 4);
    const plan = planArchive(facts(range(1, 10).map((i) => at(t(i)))), small, { ...DEFAULT_CLEAN_CONFIG, commitsRetained: 3 });
    assert.deepEqual([plan.minToKeep, plan.maxToKeep], [4, 5]);
    assert.deepEqual(times(plan.instants), ts(1, 2, 3, 4, 5, 6));
    assert.match(plan.adjustment!, /keep\.min\.commits 2 → 4/);
  });

  it("never reaches the earliest pending write, a savepoint, an uncleaned clustering, the metadata table's compaction", () => {
    const commits = range(1, 10).map((i) => at(t(i)));
    // Pending t5.5 (a commit between t5 and t6): the last completed before it, t5, stays with everything after. The
    // cleaner (retaining 1) cannot retain past the pending write either: from t5, 5 commits after it + 2 = min 7,
    // so 10 - 7 = 3 are archived.
    const pending = planArchive(facts([...commits, at(`${t(5).slice(0, 14)}500`, 'commit', 'INFLIGHT')]), small, retain1);
    assert.deepEqual(times(pending.instants), ts(1, 2, 3));
    assert.equal(pending.keptCommits.find((k) => k.instant.time === t(4))?.rule, 'min-commits');
    assert.equal(pending.keptCommits.find((k) => k.instant.time === t(5))?.rule, 'pending-instant');
    // Savepoint at t3.
    assert.deepEqual(times(planArchive(facts(commits, { savepointTimes: [t(3)] }), small, retain1).instants), ts(1, 2));
    // ... or, with hoodie.archive.beyond.savepoint, everything but the savepointed commit.
    const beyond = planArchive(
      facts(commits, { savepointTimes: [t(3)] }),
      archival({ 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3', 'hoodie.archive.beyond.savepoint': 'true' }),
      retain1,
    );
    // (the limit, 10 - 2 = 8, counts from what the savepoint filter left: t1, t2, t4..t9)
    assert.deepEqual(times(beyond.instants), ts(1, 2, 4, 5, 6, 7, 8, 9));
    // A replacecommit at t4 with no clean yet: its replaced files are still there.
    const clustered = [...range(1, 3).map((i) => at(t(i))), at(t(4), 'replacecommit'), ...range(5, 10).map((i) => at(t(i)))];
    const notCleaned = planArchive(facts(clustered), small, retain1);
    assert.deepEqual(times(notCleaned.instants), ts(1, 2, 3));
    assert.equal(notCleaned.keptCommits.find((k) => k.instant.time === t(4))?.rule, 'clustering-not-cleaned');
    // A clean that retained from t6 removed them (replacecommits from t6 on: none), so archiving goes on to keep.min.
    const cleaned = planArchive(facts([...clustered, at(t(11), 'clean')], { lastCleanRetainedFrom: t(6) }), small, retain1);
    assert.deepEqual(
      times(cleaned.instants).filter((time) => time !== t(11)),
      ts(1, 2, 3, 4, 5, 6, 7, 8),
    );
    // The metadata table compacted at t3: only t1, t2. Not compacted yet: nothing.
    assert.deepEqual(times(planArchive(facts(commits, { metadataTable: { latestCompaction: t(3) } }), small, retain1).instants), ts(1, 2));
    assert.deepEqual(planArchive(facts(commits, { metadataTable: { latestCompaction: undefined } }), small, retain1).instants, []);
  });

  it('cleans and rollbacks per action, past keep.max, down to keep.min', () => {
    const instants = [...range(1, 6).map((i) => at(t(i), 'clean')), at(t(7), 'rollback'), at(t(8))];
    // 6 cleans > 3: the first 6 - 2 = 4. One rollback: kept.
    assert.deepEqual(times(planArchive(facts(instants), small, retain1).instants), ts(1, 2, 3, 4));
  });

  it('refuses keep.max.commits not above keep.min.commits', () => {
    assert.throws(
      () => archival({ 'hoodie.keep.min.commits': '5', 'hoodie.keep.max.commits': '5' }),
      (error: unknown) => error instanceof HudiError && /hoodie\.keep\.max\.commits=5 must be greater than hoodie\.keep\.min\.commits=5/.test(error.message),
    );
  });
});

describe('archived records (MetadataConversionUtils.createMetaWrapper)', () => {
  it("a commit's states: Avro commit metadata with ROLLING_STAT emptied; an empty requested file as an UNKNOWN commit", () => {
    const json = JSON.stringify({
      partitionToWriteStats: {
        a: [{ fileId: 'f-0', path: 'a/f.parquet', prevCommit: 'null', numWrites: 3, numInserts: 3, fileSizeInBytes: 10, minEventTime: null }],
      },
      compacted: false,
      extraMetadata: { schema: 's' },
      operationType: 'UPSERT',
    });
    const completed = archivedMetaEntryOf({ instant: at(t(1)), bytes: Buffer.from(json), modifiedMs: Date.UTC(2024, 0, 1, 0, 0, 2), location: 'x' }, 'UTC');
    assert.equal(completed.commitTime, t(1));
    assert.deepEqual([completed.actionType, completed.actionState, completed.stateTransitionTime, completed.version], ['commit', 'COMPLETED', t(2), null]);
    const metadata = completed.hoodieCommitMetadata!;
    assert.deepEqual(metadata['extraMetadata'], { schema: 's', ROLLING_STAT: '' });
    assert.equal(metadata['operationType'], 'UPSERT');
    const stat = (metadata['partitionToWriteStats'] as Record<string, Record<string, unknown>[]>)['a']![0]!;
    assert.deepEqual([stat['fileId'], stat['numWrites'], stat['totalLogFiles'], 'minEventTime' in stat], ['f-0', 3, null, false]);
    const requested = archivedMetaEntryOf({ instant: at(t(1), 'commit', 'REQUESTED'), bytes: new Uint8Array(), modifiedMs: 0, location: 'x' }, 'UTC');
    assert.deepEqual(requested.hoodieCommitMetadata, {
      partitionToWriteStats: {},
      extraMetadata: { ROLLING_STAT: '' },
      version: null,
      operationType: 'UNKNOWN',
    });
    // An empty completed file keeps only its name.
    assert.equal(archivedMetaEntryOf({ instant: at(t(1)), bytes: new Uint8Array(), modifiedMs: 0, location: 'x' }, 'UTC').hoodieCommitMetadata, null);
    assert.equal(avroCommitMetadata(Buffer.from(JSON.stringify({ compacted: true, operationType: 'UPSERT' })), 'x', false)['operationType'], 'COMPACT');
  });
});

const A: FileWrite = { partition: 'dt=a', fileId: fileId(1) };
const B: FileWrite = { partition: 'dt=b', fileId: fileId(2) };
const lockOn = (storage: LocalStorage) => new StorageLockProvider(storage, { waitMs: 5_000, pollMs: 50 });
const SMALL = { 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3' };
const RETAIN_1 = cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '1']]));

/** t1 inserts A and B; t2..t6 update A. */
async function sixCommits(): Promise<SyntheticTable> {
  const table = await SyntheticTable.create();
  await table.commit(t(1), [A, B], 'INSERT');
  for (const i of [2, 3, 4, 5, 6]) await table.commit(t(i), [A]);
  return table;
}

describe('archiving a hand-written table', () => {
  it("moves the oldest commits' files into .commits_.archive.1_1-0-1, deleting them from the active timeline", async () => {
    const table = await sixCommits();
    // 6 commits > 3; the cleaner retains 1 (from t6; none after it, + 2 = 2): archive 6 - 2 = 4.
    const result = await runArchive(await HudiTable.open(table.storage), { config: archival(SMALL), cleanConfig: RETAIN_1, lock: lockOn(table.storage) });
    assert.equal(result.outcome, 'archived');
    assert.deepEqual(times(result.plan.instants), ts(1, 2, 3, 4));
    assert.equal(result.archiveFile, '.hoodie/archived/.commits_.archive.1_1-0-1');
    assert.equal(result.recordsWritten, 12);
    const active = await loadTimeline(table.storage, TIMELINE_LAYOUT_1);
    assert.deepEqual(
      active.instants.map((i) => [i.time, i.state]),
      [
        [t(5), 'COMPLETED'],
        [t(6), 'COMPLETED'],
      ],
    );
    const { records, files } = await readArchivedRecords(table.storage, archiveFolder('archived'));
    assert.equal(files.length, 1);
    // Blocks of hoodie.commits.archival.batch (10) records: 12 records in 2 blocks, each state of each instant.
    assert.deepEqual(
      records.map((r) => [r.instant.time, r.instant.state]),
      ts(1, 2, 3, 4).flatMap((time) => (['REQUESTED', 'INFLIGHT', 'COMPLETED'] as const).map((state) => [time, state])),
    );
    // Readers still see every file: files of archived commits are older than the active timeline.
    const view = await (await HudiTable.open(table.storage)).fileSystemView();
    assert.deepEqual(
      view
        .latestBaseFiles()
        .map((f) => f.path)
        .sort(),
      [SyntheticTable.fileOf(A, t(6)), SyntheticTable.fileOf(B, t(1))].sort(),
    );
    // As of an archived instant: the archived timeline answers.
    const asOf = await (await HudiTable.open(table.storage)).fileSystemView({ asOf: t(2) });
    assert.deepEqual(
      asOf
        .latestBaseFiles()
        .map((f) => f.path)
        .sort(),
      [SyntheticTable.fileOf(A, t(2)), SyntheticTable.fileOf(B, t(1))].sort(),
    );
  });

  it('the next run writes the next version; small archive files merge once enough of them are newest', async () => {
    const table = await sixCommits();
    const config = archival({ ...SMALL, 'hoodie.archive.merge.enable': 'true', 'hoodie.archive.merge.files.batch.size': '2' });
    const first = await runArchive(await HudiTable.open(table.storage), { config: archival(SMALL), cleanConfig: RETAIN_1, lock: lockOn(table.storage) });
    assert.equal(first.archiveFile, '.hoodie/archived/.commits_.archive.1_1-0-1');
    for (const i of [7, 8]) await table.commit(t(i), [A]);
    // Active t5..t8: 4 > 3, archive 4 - 2 = 2 (t5, t6) into version 2; then versions 1 and 2 are both small: merged into 3.
    const second = await runArchive(await HudiTable.open(table.storage), { config, cleanConfig: RETAIN_1, lock: lockOn(table.storage) });
    assert.equal(second.archiveFile, '.hoodie/archived/.commits_.archive.2_1-0-1');
    assert.deepEqual(second.merged, {
      candidates: ['.hoodie/archived/.commits_.archive.2_1-0-1', '.hoodie/archived/.commits_.archive.1_1-0-1'],
      into: '.hoodie/archived/.commits_.archive.3_1-0-1',
    });
    const files = await listArchiveFiles(table.storage, archiveFolder('archived'));
    assert.deepEqual(
      files.map((f) => f.path),
      ['.hoodie/archived/.commits_.archive.3_1-0-1'],
    );
    assert.equal(await table.storage.head('.hoodie/archived/mergeArchivePlan'), undefined);
    const { records } = await readArchivedRecords(table.storage, archiveFolder('archived'));
    assert.deepEqual([...new Set(records.map((r) => r.instant.time))].sort(), ts(1, 2, 3, 4, 5, 6));
    assert.equal(records.length, 18);
  });

  it('a dry run writes nothing; nothing to archive at or below keep.max.commits', async () => {
    const table = await sixCommits();
    const listing = async () =>
      (await table.storage.listRecursive(''))
        .map((o) => o.path)
        .filter((p) => !p.startsWith('.hoodie/.serverless-lock/'))
        .sort();
    const before = await listing();
    const dry = await runArchive(await HudiTable.open(table.storage), {
      config: archival(SMALL),
      cleanConfig: RETAIN_1,
      lock: lockOn(table.storage),
      dryRun: true,
    });
    assert.equal(dry.outcome, 'dry-run');
    assert.deepEqual(times(dry.plan.instants), ts(1, 2, 3, 4));
    assert.deepEqual(await listing(), before);
    const none = await runArchive(await HudiTable.open(table.storage), {
      config: archival({ 'hoodie.keep.min.commits': '5', 'hoodie.keep.max.commits': '6' }),
      cleanConfig: RETAIN_1,
      lock: lockOn(table.storage),
    });
    assert.equal(none.outcome, 'nothing-to-archive');
    assert.equal(none.plan.keptCommits[0]?.rule, 'max-commits');
  });

  it('archives a clustering only after a clean removed its replaced files', async () => {
    const table = await SyntheticTable.create();
    const C: FileWrite = { partition: 'dt=a', fileId: fileId(3) };
    await table.commit(t(1), [A], 'INSERT');
    await table.clustering(t(2), [A], [C]);
    for (const i of [3, 4, 5, 6]) await table.commit(t(i), [C]);
    const blocked = await runArchive(await HudiTable.open(table.storage), { config: archival(SMALL), cleanConfig: RETAIN_1, lock: lockOn(table.storage) });
    assert.deepEqual(times(blocked.plan.instants), ts(1));
    assert.equal(blocked.plan.keptCommits.find((k) => k.instant.time === t(2))?.rule, 'clustering-not-cleaned');
    await runClean(await HudiTable.open(table.storage), { config: RETAIN_1, lock: lockOn(table.storage) });
    const after = await runArchive(await HudiTable.open(table.storage), { config: archival(SMALL), cleanConfig: RETAIN_1, lock: lockOn(table.storage) });
    assert.ok(times(after.plan.instants).includes(t(2)), times(after.plan.instants).join(' '));
    // The replaced file group stays hidden: its files are gone.
    assert.deepEqual(
      (await (await HudiTable.open(table.storage)).fileSystemView()).latestBaseFiles().map((f) => f.fileId),
      [fileId(3)],
    );
  });
});

describe('archiving: a crash after any storage call', () => {
  it('leaves a readable table, and the next run archives each instant exactly once', async () => {
    const template = await sixCommits();
    let crashes = 0;
    for (let crashAt = 1; ; crashAt++) {
      const dir = join(tempDir('archive-crash-'), 'table');
      cpSync(template.dir, dir, { recursive: true });
      const inner = new LocalStorage(dir);
      const crashing = new CrashingStorage(inner, crashAt);
      let crashed = false;
      try {
        await runArchive(await HudiTable.open(crashing), { config: archival(SMALL), cleanConfig: RETAIN_1, lock: lockOn(inner) });
      } catch (error) {
        if (!(error instanceof SimulatedCrash)) throw error;
        crashed = true;
        crashes++;
      }
      const view = await (await HudiTable.open(inner)).fileSystemView();
      assert.deepEqual(
        view
          .latestBaseFiles()
          .map((f) => f.path)
          .sort(),
        [SyntheticTable.fileOf(A, t(6)), SyntheticTable.fileOf(B, t(1))].sort(),
        `crash at ${crashAt}`,
      );
      if (crashed) await runArchive(await HudiTable.open(inner), { config: archival(SMALL), cleanConfig: RETAIN_1, lock: lockOn(inner) });
      const active = await loadTimeline(inner, TIMELINE_LAYOUT_1);
      assert.deepEqual(times(active.instants), ts(5, 6), `active timeline after the crash at ${crashAt}`);
      const { records } = await readArchivedRecords(inner, archiveFolder('archived'));
      assert.equal(records.length, 12, `records after the crash at ${crashAt}`);
      if (!crashed) {
        // Requested and inflight files go before any completed file, the completed ones oldest first.
        const deletes = crashing.log.filter((line) => line.startsWith('delete'));
        assert.match(deletes[0]!, /^deleteMany .*\.commit\.requested/);
        assert.deepEqual(
          deletes.slice(1),
          ts(1, 2, 3, 4).map((time) => `delete .hoodie/${time}.commit`),
        );
        break;
      }
    }
    // The archive file, the pending files, four completed files.
    assert.equal(crashes, 6);
  });
});
