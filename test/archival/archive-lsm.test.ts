/**
 * The archiver on Hudi 1.x tables (timeline layout 2): TimelineArchiverV2's rules on hand-made timelines (the
 * arithmetic in the comments), and the service on the copy-on-write timeline Hudi 1.1.1 wrote
 * (test/fixtures/hudi-1x-tables/1.1.1/cow): what it archives, in which order it deletes, and a crash after every
 * storage call leaving a timeline and history that read, which the next run finishes as an uninterrupted run does.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { type ArchivalConfig, archivalConfigFromProperties } from '../../lib/archival/config.js';
import { type LsmArchiveFacts, planArchiveLsm } from '../../lib/archiver/plan-lsm.js';
import { cleanConfigFromProperties, DEFAULT_CLEAN_CONFIG } from '../../lib/cleaner/config.js';
import { archiveCommand } from '../../lib/cli/clean-commands.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { serviceClientsFromEnv } from '../../lib/serverless/aws/clients.js';
import { archiveStep } from '../../lib/serverless/steps/archival/archive.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import type { HoodieCleanerPlan } from '../../lib/timeline/avro-schemas.js';
import { historyFolder, readTimelineHistory } from '../../lib/timeline/history/index.js';
import type { Instant, InstantAction, InstantState } from '../../lib/timeline/instant.js';
import { timelineLayout2 } from '../../lib/timeline/layout.js';
import { loadTimeline, Timeline } from '../../lib/timeline/timeline.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { REPO_ROOT, tempDir } from '../helpers/paths.js';
import { t } from '../helpers/synthetic-table.js';

const LAYOUT = timelineLayout2('.hoodie/timeline', 'UTC');
const at = (time: string, action: InstantAction = 'commit', state: InstantState = 'COMPLETED'): Instant =>
  state === 'COMPLETED' ? { time, action, state, completionTime: `${time}9` } : { time, action, state };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const archival = (props: Record<string, string>): ArchivalConfig => archivalConfigFromProperties(new Map(Object.entries(props)));
const SMALL = archival({ 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3' });
const RETAIN_1 = { ...DEFAULT_CLEAN_CONFIG, commitsRetained: 1 };
const cleanPlan = (earliest: string | undefined, extraMetadata: Record<string, string> | null = null): HoodieCleanerPlan => ({
  earliestInstantToRetain: earliest === undefined ? null : { timestamp: earliest, action: 'commit', state: 'COMPLETED' },
  lastCompletedCommitTimestamp: '',
  policy: 'KEEP_LATEST_COMMITS',
  filesToBeDeletedPerPartition: null,
  version: 2,
  filePathsToBeDeletedPerPartition: null,
  partitionsToBeDeleted: null,
  extraMetadata,
});
const facts = (instants: Instant[], extra: Partial<LsmArchiveFacts> = {}): LsmArchiveFacts => ({
  timeline: new Timeline(instants, LAYOUT),
  lastClean: undefined,
  savepointTimes: [],
  timeZone: 'UTC',
  tableType: 'COPY_ON_WRITE',
  ...extra,
});
const names = (instants: readonly Instant[]) => instants.map((i) => `${i.time} ${i.action}`);

describe('which instants Hudi 1.x archives (TimelineArchiverV2.getInstantsToArchive)', () => {
  it('cleans and rollbacks go only with the commits: those requested before the last commit archived', () => {
    // Commits t1..t6 with a clean at t2 and a rollback at t5: 6 > 3, 6 - 2 = 4 commits (t1, t3, t4, t6 minus…).
    const instants = [at(t(1)), at(t(2), 'clean'), at(t(3)), at(t(4)), at(t(5), 'rollback'), at(t(6)), at(t(7)), at(t(8))];
    // Completed commits t1, t3, t4, t6, t7, t8: 6 > 3, archive 6 - 2 = 4: t1, t3, t4, t6; clean t2 and rollback t5 precede t6.
    const plan = planArchiveLsm(facts(instants), SMALL, RETAIN_1);
    assert.deepEqual(names(plan.instants), [`${t(1)} commit`, `${t(2)} clean`, `${t(3)} commit`, `${t(4)} commit`, `${t(5)} rollback`, `${t(6)} commit`]);
    // Five cleans and three commits: 0.15 would archive cleans past keep.max by their own count; 1.x archives none.
    const cleansOnly = [...range(1, 5).map((i) => at(t(i), 'clean')), at(t(6)), at(t(7)), at(t(8))];
    assert.deepEqual(planArchiveLsm(facts(cleansOnly), SMALL, RETAIN_1).instants, []);
  });

  it('a pending clustering (layout 2’s own action) holds the commits from the last one before it', () => {
    const instants = [...range(1, 3).map((i) => at(t(i))), at(t(4), 'clustering', 'REQUESTED'), ...range(5, 8).map((i) => at(t(i)))];
    // The cleaner's default retention (10) is more than the seven commits: keep.min stays 2. (Retaining one, the
    // pending clustering pulls the cleaner's earliest commit to retain back to t3, and keep.min grows to 4 + 2.)
    const plan = planArchiveLsm(facts(instants), SMALL, DEFAULT_CLEAN_CONFIG);
    // Seven commits, five could go; the last completed before the pending clustering is t3: t1 and t2 only.
    assert.deepEqual(names(plan.instants), [`${t(1)} commit`, `${t(2)} commit`]);
    assert.equal(plan.keptCommits.find((kept) => kept.instant.time === t(3))?.rule, 'pending-instant');
  });

  it('a replacecommit stays until a clean retains past it; the clean’s savepoint guard holds it longer', () => {
    const instants = [at(t(1)), at(t(2), 'replacecommit'), at(t(3)), at(t(4), 'clean'), ...range(5, 9).map((i) => at(t(i)))];
    // No clean: nothing from the first replacecommit (t2) on.
    assert.deepEqual(names(planArchiveLsm(facts(instants.filter((i) => i.action !== 'clean')), SMALL, RETAIN_1).instants), [`${t(1)} commit`]);
    // The clean retained from t3: the replacecommit t2 is before it, so no clustering bound; 8 commits, 6 archived.
    const cleaned = planArchiveLsm(facts(instants, { lastClean: { time: t(4), plan: cleanPlan(t(3)) } }), SMALL, RETAIN_1);
    assert.deepEqual(names(cleaned.instants), [
      ...[1, 2, 3].map((i) => `${t(i)} ${i === 2 ? 'replacecommit' : 'commit'}`),
      `${t(4)} clean`,
      `${t(5)} commit`,
      `${t(6)} commit`,
      `${t(7)} commit`,
    ]);
    // The same clean kept files for savepoint t1 (since deleted), with the replacecommit t2 between it and t3: bound t2.
    const guarded = planArchiveLsm(facts(instants, { lastClean: { time: t(4), plan: cleanPlan(t(3), { savepointed_timestamps: t(1) }) } }), SMALL, RETAIN_1);
    assert.deepEqual(names(guarded.instants), [`${t(1)} commit`]);
    // A plan without an earliest instant to retain (KEEP_LATEST_FILE_VERSIONS): the clean's own time, t4.
    const byVersions = planArchiveLsm(facts(instants, { lastClean: { time: t(4), plan: cleanPlan(undefined) } }), SMALL, RETAIN_1);
    assert.ok(names(byVersions.instants).includes(`${t(2)} replacecommit`));
  });

  it('nothing at or below keep.max.commits; from the first savepoint on, nothing', () => {
    assert.deepEqual(planArchiveLsm(facts(range(1, 3).map((i) => at(t(i)))), SMALL, RETAIN_1).instants, []);
    const plan = planArchiveLsm(
      facts(
        range(1, 8).map((i) => at(t(i))),
        { savepointTimes: [t(3)] },
      ),
      SMALL,
      RETAIN_1,
    );
    assert.deepEqual(names(plan.instants), [`${t(1)} commit`, `${t(2)} commit`]);
  });

  it('merge-on-read: the compaction trigger keeps the delta commits completed after the last compaction was requested', () => {
    // Delta commits t1..t6, the compaction t7 (a commit), delta commits t8 and t9; t6 completed after t7 was requested.
    const instants = [
      ...range(1, 5).map((i) => at(t(i), 'deltacommit')),
      { time: t(6), action: 'deltacommit', state: 'COMPLETED', completionTime: `${t(7)}5` } satisfies Instant,
      at(t(7), 'commit'),
      at(t(8), 'deltacommit'),
      at(t(9), 'deltacommit'),
    ];
    const config = archival({ 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3', 'hoodie.compact.inline.max.delta.commits': '3' });
    // By completion time t6, t8 and t9 followed the compaction: three reach max.delta.commits, so t6 (the third
    // from the newest) stays and t1..t5 go; by requested time only two did, and the compaction t7 would bound it.
    const plan = planArchiveLsm(facts(instants, { tableType: 'MERGE_ON_READ' }), config, DEFAULT_CLEAN_CONFIG);
    assert.deepEqual(
      names(plan.instants),
      range(1, 5).map((i) => `${t(i)} deltacommit`),
    );
    assert.deepEqual(plan.bounds.find((bound) => bound.rule === 'compaction-trigger')?.time, t(6));
  });
});

/** The timeline Hudi 1.1.1 wrote (no data files: archiving reads only instant files), as a table folder. */
function fixtureTable(): string {
  const fixture = join(REPO_ROOT, 'test/fixtures/hudi-1x-tables/1.1.1/cow');
  const dir = join(tempDir('archive-lsm-'), 'cow');
  mkdirSync(join(dir, '.hoodie'), { recursive: true });
  cpSync(join(fixture, 'hoodie.properties'), join(dir, '.hoodie', 'hoodie.properties'));
  cpSync(join(fixture, 'timeline'), join(dir, '.hoodie', 'timeline'), { recursive: true });
  return dir;
}
const PROPS = new Map([
  ['hoodie.keep.min.commits', '1'],
  ['hoodie.keep.max.commits', '2'],
  ['hoodie.cleaner.commits.retained', '1'],
  // The fixture's hoodie.properties lists metadata partitions (its metadata table was not kept).
  ['hoodie.metadata.enable', 'false'],
]);
async function archive(storage: Storage, lockStorage: Storage = storage, properties: ReadonlyMap<string, string> = PROPS) {
  return runArchive(await HudiTable.open(storage, { mode: 'archive' }), {
    config: archivalConfigFromProperties(properties),
    cleanConfig: cleanConfigFromProperties(properties),
    lock: new StorageLockProvider(lockStorage),
    properties,
  });
}
const timelineFiles = (dir: string) =>
  readdirSync(join(dir, '.hoodie', 'timeline'), { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .sort();

describe('archiving the timeline Hudi 1.1.1 wrote', () => {
  it('archives the commits before the uncleaned clustering and the rollback among them, deleting pending files first', async () => {
    const dir = fixtureTable();
    const inner = new LocalStorage(dir);
    const logged = new CrashingStorage(inner);
    const result = await archive(logged, inner);
    assert.equal(result.outcome, 'archived');
    // Completed commits: 701022, 722704, 726099, the replacecommit 730120, 734245. No clean yet: the replacecommit
    // bounds it; keep.min 1 would allow four. The rollback 722133 precedes the last commit archived.
    assert.deepEqual(names(result.plan.instants), [
      '20261206054701022 commit',
      '20261206054722133 rollback',
      '20261206054722704 commit',
      '20261206054726099 commit',
    ]);
    const history = await readTimelineHistory(inner, historyFolder());
    assert.deepEqual(
      history.instants.map((i) => `${i.requestedTime}_${i.completionTime} ${i.action} ${i.plan?.recordName ?? 'no plan'}`),
      [
        '20261206054701022_20261206054719676 commit no plan',
        '20261206054722133_20261206054722593 rollback no plan',
        '20261206054722704_20261206054725932 commit no plan',
        '20261206054726099_20261206054729228 commit no plan',
      ],
    );
    assert.deepEqual(
      history.manifest.files.map((f) => f.fileName),
      ['20261206054701022_20261206054726099_0.parquet'],
    );
    assert.deepEqual(
      timelineFiles(dir).filter((name) => /^\d/.test(name)),
      [
        '20261206054730120.clustering.inflight',
        '20261206054730120.clustering.requested',
        '20261206054730120_20261206054734025.replacecommit',
        '20261206054734245.commit.requested',
        '20261206054734245.inflight',
        '20261206054734245_20261206054737108.commit',
        '20261206054737218.clustering.requested',
      ],
    );
    const deletes = logged.log.filter((line) => line.startsWith('delete') && line.includes('.hoodie/timeline/2'));
    assert.match(deletes[0]!, /^deleteMany .*\.requested/);
    assert.deepEqual(deletes.slice(1), [
      'delete .hoodie/timeline/20261206054701022_20261206054719676.commit',
      'delete .hoodie/timeline/20261206054722133_20261206054722593.rollback',
      'delete .hoodie/timeline/20261206054722704_20261206054725932.commit',
      'delete .hoodie/timeline/20261206054726099_20261206054729228.commit',
    ]);
  });

  it('with the metadata table on and no compaction on it, archives nothing (TimelineArchiverV2), writing nothing', async () => {
    const dir = fixtureTable();
    const before = timelineFiles(dir);
    // The fixture's hoodie.properties declares a metadata table it did not keep: no compaction on it, as Hudi reads it.
    const result = await archive(new LocalStorage(dir), undefined, new Map([...PROPS].filter(([key]) => key !== 'hoodie.metadata.enable')));
    assert.equal(result.outcome, 'nothing-to-archive');
    assert.deepEqual(new Set(result.plan.keptCommits.map((kept) => kept.rule)), new Set(['no-metadata-table-compaction']));
    assert.deepEqual(timelineFiles(dir), before);
  });

  it('a crash after any storage call leaves a timeline and history that read; the next run ends as an uninterrupted one', async () => {
    const reference = fixtureTable();
    await archive(new LocalStorage(reference));
    const expectedFiles = timelineFiles(reference).filter((name) => /^\d/.test(name));
    const expectedHistory = (await readTimelineHistory(new LocalStorage(reference), historyFolder())).instants.map((i) => i.requestedTime);
    let crashes = 0;
    for (let crashAt = 1; ; crashAt++) {
      const dir = fixtureTable();
      const inner = new LocalStorage(dir);
      let crashed = false;
      try {
        await archive(new CrashingStorage(inner, crashAt), inner);
      } catch (error) {
        if (!(error instanceof SimulatedCrash)) throw error;
        crashed = true;
        crashes++;
      }
      // Readable after the crash: the active timeline and the history.
      const active = await loadTimeline(inner, LAYOUT);
      assert.ok(active.instants.length > 0, `crash at ${crashAt}`);
      await readTimelineHistory(inner, historyFolder());
      if (crashed) await archive(inner);
      assert.deepEqual(
        timelineFiles(dir).filter((name) => /^\d/.test(name)),
        expectedFiles,
        `active timeline after the crash at ${crashAt}`,
      );
      assert.deepEqual(
        (await readTimelineHistory(inner, historyFolder())).instants.map((i) => i.requestedTime),
        expectedHistory,
        `history after the crash at ${crashAt}`,
      );
      if (!crashed) break;
    }
    assert.ok(crashes >= 5, `${crashes} crash points`);
  });

  it('the serverless archive step and the CLI archive command go through the same archiver', async () => {
    const reference = fixtureTable();
    await archive(new LocalStorage(reference));
    const expected = timelineFiles(reference).filter((name) => /^\d/.test(name));

    const stepTable = fixtureTable();
    const log = { info: () => undefined, warn: () => undefined };
    const output = await archiveStep(
      { tablePath: stepTable, services: 'clean-archive' },
      { env: { CLUSTERING_PROPERTIES: JSON.stringify(Object.fromEntries(PROPS)) }, clients: serviceClientsFromEnv({}), log },
    );
    assert.ok(output.status === 'ARCHIVED', JSON.stringify(output));
    assert.equal(output.archived, 4);
    assert.match(output.archiveFile ?? '', /^\.hoodie\/timeline\/history\/20261206054701022_20261206054726099_0\.parquet$/);
    assert.deepEqual(
      timelineFiles(stepTable).filter((name) => /^\d/.test(name)),
      expected,
    );

    const cliTable = fixtureTable();
    const props = join(tempDir('archive-lsm-props-'), 'archive.properties');
    writeFileSync(props, [...PROPS].map(([key, value]) => `${key}=${value}`).join('\n'));
    assert.equal(await archiveCommand.run([cliTable, '--props', props]), 0);
    assert.deepEqual(
      timelineFiles(cliTable).filter((name) => /^\d/.test(name)),
      expected,
    );
  });
});
