/**
 * The clean planner's rules, on hand-made timelines and listings, with the expected decisions worked out by hand
 * from Hudi 0.15's CleanPlanner / CleanerUtils rules (comments give the arithmetic).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cleanConfigFromProperties, DEFAULT_CLEAN_CONFIG } from '../../lib/cleaner/config.js';
import {
  assembleCleanerPlan,
  cleanIsDue,
  earliestCommitToRetain,
  type PartitionContext,
  type PartitionListing,
  partitionScope,
  planDeletes,
  planPartition,
} from '../../lib/cleaner/plan.js';
import { HudiError } from '../../lib/errors.js';
import { logFileName } from '../../lib/log-format/names.js';
import { baseFileName } from '../../lib/table/file-system-view.js';
import type { HoodieCleanMetadata } from '../../lib/timeline/avro-schemas.js';
import type { Instant, InstantAction, InstantState } from '../../lib/timeline/instant.js';
import { Timeline } from '../../lib/timeline/timeline.js';
import { fileId, t } from '../helpers/synthetic-table.js';

const at = (time: string, action: InstantAction = 'commit', state: InstantState = 'COMPLETED'): Instant => ({ time, action, state });
const commits = (...indexes: number[]) => indexes.map((i) => at(t(i)));
const file = (id: number, time: number) => ({ name: baseFileName(fileId(id), '0-1-1', t(time)), size: 10 });
const NOW = new Date(Date.UTC(2024, 0, 1));

function cleanMetadata(
  earliestCommitToRetain: string,
  lastCompletedCommitTimestamp: string,
  extraMetadata: Record<string, string> | null = {},
): HoodieCleanMetadata {
  return {
    startCleanTime: t(99),
    timeTakenInMillis: 1,
    totalFilesDeleted: 0,
    earliestCommitToRetain,
    lastCompletedCommitTimestamp,
    partitionMetadata: {},
    version: 2,
    bootstrapPartitionMetadata: {},
    extraMetadata,
  };
}

describe('earliest commit to retain (CleanerUtils.getEarliestCommitToRetain)', () => {
  const retain10 = { ...DEFAULT_CLEAN_CONFIG, commitsRetained: 10 };

  it('KEEP_LATEST_COMMITS: the N-th newest completed commit', () => {
    // 15 completed, 10 retained: index 15 - 10 = 5, the 6th commit.
    const instants = commits(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    assert.equal(earliestCommitToRetain(instants, retain10, NOW, 'UTC').instant?.time, t(6));
    // A pending commit after it changes nothing.
    assert.equal(earliestCommitToRetain([...instants, at(t(16), 'commit', 'INFLIGHT')], retain10, NOW, 'UTC').instant?.time, t(6));
    // 10 completed, 10 retained: nothing is old enough.
    assert.equal(earliestCommitToRetain(commits(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), retain10, NOW, 'UTC').instant, undefined);
  });

  it('KEEP_LATEST_COMMITS: never later than the earliest pending commit', () => {
    // Completed 1,2,3,5..16 (15 commits): the 6th is t7, but t4 is pending, so the last completed before it, t3.
    const instants = [...commits(1, 2, 3), at(t(4), 'replacecommit', 'REQUESTED'), ...commits(5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)];
    const point = earliestCommitToRetain(instants, retain10, NOW, 'UTC');
    assert.equal(point.instant?.time, t(3));
    assert.match(point.reason, /replacecommit .* is still pending/);
    // Pending before every completed commit: none.
    assert.equal(
      earliestCommitToRetain([at(t(0), 'commit', 'INFLIGHT'), ...instants.slice(0, 3), ...instants.slice(4)], retain10, NOW, 'UTC').instant,
      undefined,
    );
  });

  it('KEEP_LATEST_BY_HOURS: the first commit at or after now minus the hours', () => {
    const hour = (h: number) => at(formatHour(h));
    const instants = [hour(0), hour(6), hour(12), hour(18), hour(24)];
    // now = 27:00, 12 hours retained: cutoff 15:00, so the 18:00 commit.
    const now = new Date(Date.UTC(2024, 0, 1, 27));
    const config = { ...DEFAULT_CLEAN_CONFIG, policy: 'KEEP_LATEST_BY_HOURS' as const, hoursRetained: 12 };
    assert.equal(earliestCommitToRetain(instants, config, now, 'UTC').instant?.time, formatHour(18));
    assert.equal(earliestCommitToRetain(instants, { ...config, hoursRetained: 1 }, now, 'UTC').instant, undefined);
  });

  it('KEEP_LATEST_FILE_VERSIONS has none', () => {
    assert.equal(earliestCommitToRetain(commits(1, 2, 3), { ...DEFAULT_CLEAN_CONFIG, policy: 'KEEP_LATEST_FILE_VERSIONS' }, NOW, 'UTC').instant, undefined);
  });
});

function formatHour(h: number): string {
  const d = new Date(Date.UTC(2024, 0, 1, h));
  return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}${String(d.getUTCHours()).padStart(2, '0')}0000000`;
}

describe('when a clean is due (hoodie.clean.max.commits)', () => {
  it("counts completed commits after the last clean's last completed commit", () => {
    const timeline = new Timeline([...commits(1, 2, 3, 4, 5), at(t(6), 'clean'), ...commits(7)]);
    const last = { instant: at(t(6), 'clean'), metadata: cleanMetadata(t(2), t(5)) };
    assert.deepEqual([cleanIsDue(timeline, last, { maxCommits: 1 }).due, cleanIsDue(timeline, last, { maxCommits: 1 }).commitsSinceLastClean], [true, 1]);
    assert.equal(cleanIsDue(timeline, last, { maxCommits: 2 }).due, false);
    // No clean yet: every completed commit counts.
    assert.equal(cleanIsDue(timeline, undefined, { maxCommits: 6 }).commitsSinceLastClean, 6);
  });
});

describe('which partitions a clean looks at (getPartitionPathsToClean)', () => {
  const timeline = new Timeline(commits(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  const retention = { instant: at(t(8)), reason: '' };
  const base = { timeline, retention, savepointTimes: [], isPartitioned: true };
  const last = (ectr: string, extra: Record<string, string> = {}) => ({ instant: at(t(9), 'clean'), metadata: cleanMetadata(ectr, t(7), extra) });

  it("incremental: the commits from the last clean's earliest commit to retain up to the new one", () => {
    const scope = partitionScope({ ...base, lastClean: last(t(4)) }, DEFAULT_CLEAN_CONFIG);
    assert.equal(scope.kind, 'incremental');
    // [t4, t8): t4, t5, t6, t7.
    assert.deepEqual(scope.kind === 'incremental' && scope.instants.map((i) => i.time), [t(4), t(5), t(6), t(7)]);
  });

  it('adds the commits of savepoints removed since the last clean', () => {
    const scope = partitionScope(
      { ...base, savepointTimes: [t(3)], lastClean: last(t(4), { savepointed_timestamps: `${t(2)},${t(3)}` }) },
      DEFAULT_CLEAN_CONFIG,
    );
    assert.deepEqual(scope.kind === 'incremental' && scope.instants.map((i) => i.time), [t(4), t(5), t(6), t(7), t(2)]);
  });

  it("full: no clean yet, incremental mode off, the last clean's retention point archived, or file versions", () => {
    assert.equal(partitionScope({ ...base, lastClean: undefined }, DEFAULT_CLEAN_CONFIG).kind, 'full');
    assert.equal(partitionScope({ ...base, lastClean: last(t(4)) }, { ...DEFAULT_CLEAN_CONFIG, incrementalMode: false }).kind, 'full');
    const archived = partitionScope({ ...base, lastClean: last(t(0)) }, DEFAULT_CLEAN_CONFIG);
    assert.equal(archived.kind, 'full');
    assert.match(archived.reason, /archived/);
    assert.equal(partitionScope({ ...base, lastClean: { instant: at(t(9), 'clean'), metadata: undefined } }, DEFAULT_CLEAN_CONFIG).kind, 'full');
    assert.equal(partitionScope({ ...base, lastClean: last(t(4)) }, { ...DEFAULT_CLEAN_CONFIG, policy: 'KEEP_LATEST_FILE_VERSIONS' }).kind, 'full');
  });

  it('none: no earliest commit to retain', () => {
    assert.equal(
      partitionScope({ ...base, retention: { instant: undefined, reason: 'few commits' }, lastClean: undefined }, DEFAULT_CLEAN_CONFIG).kind,
      'none',
    );
  });
});

describe('one partition (CleanPlanner.getDeletePaths)', () => {
  // Completed commits t1 t2 t3 t5 t7 t8, replacecommits t4 and t6; a pending clustering t9, a failed write t10.
  const timelineInstants = [
    ...commits(1, 2, 3),
    at(t(4), 'replacecommit'),
    ...commits(5),
    at(t(6), 'replacecommit'),
    ...commits(7, 8),
    at(t(9), 'replacecommit', 'REQUESTED'),
    at(t(10), 'commit', 'INFLIGHT'),
  ];
  const context: PartitionContext = {
    policy: 'KEEP_LATEST_COMMITS',
    fileVersionsRetained: 3,
    earliestCommitToRetain: t(6),
    retentionReached: true,
    timeline: timelineInstants,
    replacedFileGroups: { p: { [fileId(4)]: t(4), [fileId(5)]: t(6) }, q: { [fileId(7)]: t(4) }, r: { [fileId(8)]: t(4), [fileId(9)]: t(6) } },
    pendingClustering: { p: { [fileId(6)]: t(9) } },
    savepointedFiles: { p: { [file(1, 1).name]: t(1) } },
    isPartitioned: true,
  };
  const listing: PartitionListing = {
    partitionPath: 'p',
    files: [
      // A: versions t1 (savepointed), t3, t5, t7, and t10 of the failed write.
      file(1, 1),
      file(1, 3),
      file(1, 5),
      file(1, 7),
      file(1, 10),
      // B: t2, t8.   C: t1, t2, t3.   D: replaced at t4.   E: replaced at t6.   F: in pending clustering t9.
      file(2, 2),
      file(2, 8),
      file(3, 1),
      file(3, 2),
      file(3, 3),
      file(4, 1),
      file(5, 1),
      file(6, 1),
      file(6, 2),
      { name: '.hoodie_partition_metadata', size: 90 },
    ],
  };

  it('KEEP_LATEST_COMMITS: deletes versions superseded before the earliest commit to retain, and groups replaced before it', () => {
    const planned = planPartition(listing, context, { explain: true });
    // A: latest t7, last before t6 is t5 (kept), t3 deleted, t1 savepointed. C: latest t3 (also the last before t6),
    // t2 and t1 deleted. D: replaced at t4 < t6, deleted whole. B, E, F and the failed write's file kept.
    assert.deepEqual(
      planned.deletes.map((d) => [d.fileName, d.rule]),
      [
        [file(1, 3).name, 'older-than-retention'],
        [file(3, 2).name, 'older-than-retention'],
        [file(3, 1).name, 'older-than-retention'],
        [file(4, 1).name, 'replaced'],
      ],
    );
    const rule = (id: number, time: number) => planned.kept.find((k) => k.fileName === file(id, time).name)?.rule;
    assert.equal(rule(1, 1), 'savepoint');
    assert.equal(rule(1, 5), 'last-version-before-retention');
    assert.equal(rule(1, 7), 'latest-version');
    assert.equal(rule(1, 10), 'uncommitted');
    assert.equal(rule(2, 2), 'last-version-before-retention');
    assert.equal(rule(2, 8), 'latest-version');
    assert.equal(rule(5, 1), 'replaced-after-retention');
    assert.equal(rule(6, 1), 'pending-clustering');
    assert.equal(rule(6, 2), 'pending-clustering');
    assert.equal(planned.kept.length + planned.deletes.length, listing.files.length - 1);
    assert.equal(planned.deletePartition, false);
    // Without explain only the deletions are kept.
    assert.deepEqual(planPartition(listing, context).kept, []);
  });

  it('a partition whose every file group was replaced before retention goes whole; one replaced since does not', () => {
    const q = planPartition({ partitionPath: 'q', files: [file(7, 1), file(7, 2)] }, context);
    assert.deepEqual(
      q.deletes.map((d) => d.fileName),
      [file(7, 2).name, file(7, 1).name],
    );
    assert.equal(q.deletePartition, true);
    // r: fileId 9 was replaced at t6, not before the earliest commit to retain.
    const r = planPartition({ partitionPath: 'r', files: [file(8, 1), file(9, 2)] }, context);
    assert.deepEqual(
      r.deletes.map((d) => d.fileName),
      [file(8, 1).name],
    );
    assert.equal(r.deletePartition, false);
    assert.equal(planPartition({ partitionPath: 'q', files: [file(7, 1)] }, { ...context, isPartitioned: false }).deletePartition, false);
    // A savepointed file of a replaced group stays, and so does its partition (Hudi would delete the folder).
    const kept = planPartition({ partitionPath: 'q', files: [file(7, 1), file(7, 2)] }, { ...context, savepointedFiles: { q: { [file(7, 1).name]: t(1) } } });
    assert.deepEqual(
      kept.deletes.map((d) => d.fileName),
      [file(7, 2).name],
    );
    assert.equal(kept.deletePartition, false);
  });

  it('KEEP_LATEST_FILE_VERSIONS: keeps the newest N versions per file group, any replaced group goes', () => {
    const versions = { ...context, policy: 'KEEP_LATEST_FILE_VERSIONS' as const, fileVersionsRetained: 2, earliestCommitToRetain: undefined };
    const planned = planPartition(
      { partitionPath: 'p', files: [file(1, 1), file(1, 2), file(1, 3), file(1, 5), file(3, 1), file(3, 2), file(5, 1)] },
      versions,
      { explain: true },
    );
    // A: keep t5, t3; t2 deleted; t1 savepointed. C: keep t2, t1. E (replaced at t6): deleted.
    assert.deepEqual(
      planned.deletes.map((d) => [d.fileName, d.rule]),
      [
        [file(1, 2).name, 'beyond-file-versions'],
        [file(5, 1).name, 'replaced'],
      ],
    );
    assert.equal(planned.kept.find((k) => k.fileName === file(1, 1).name)?.rule, 'savepoint');
  });

  it("a CDC table's .cdc log files go with the slice of their base instant, as in Hudi's file-system view", () => {
    // The name Hudi's merge handle gives a cdc log (HoodieWriteHandle.createLogWriter with CDC_LOGFILE_SUFFIX).
    const cdc = (id: number, time: number) => ({
      name: logFileName({ fileId: fileId(id), baseInstant: t(time), version: 1, writeToken: '0-1-1', suffix: '.cdc' }),
      size: 5,
    });
    const planned = planPartition({ partitionPath: 'p', files: [file(1, 2), file(1, 3), cdc(1, 3), file(1, 5), cdc(1, 5), file(1, 7), cdc(1, 7)] }, context, {
      explain: true,
    });
    // A: t3 is superseded before the earliest commit to retain (t6): its base file and its cdc log go; t5 and t7 stay.
    assert.deepEqual(
      planned.deletes.map((d) => d.fileName),
      [file(1, 3).name, cdc(1, 3).name, file(1, 2).name],
    );
  });

  it('nothing while the retention window is not full', () => {
    const planned = planPartition(listing, { ...context, retentionReached: false }, { explain: true });
    assert.deepEqual(planned.deletes, []);
    assert.ok(planned.kept.every((k) => k.rule === 'retention-not-reached' || k.rule === 'uncommitted'));
  });
});

describe('the cleaner plan (CleanPlanActionExecutor.requestClean)', () => {
  const summary = {
    policy: 'KEEP_LATEST_COMMITS' as const,
    earliestCommitToRetain: at(t(6)),
    lastCompletedCommitTimestamp: t(8),
    savepointTimes: [t(1)],
    isPartitioned: true,
  };
  const decision = (id: number, time: number) => ({
    fileName: file(id, time).name,
    fileId: fileId(id),
    instantTime: t(time),
    size: 10,
    rule: 'older-than-retention' as const,
    detail: '',
  });

  it('names absolute paths of the partitions with deletions only, version 2, the savepoints in extraMetadata', () => {
    const plan = assembleCleanerPlan(
      summary,
      [
        { partitionPath: 'dt=1', deletes: [decision(1, 3)], kept: [], deletePartition: false },
        { partitionPath: 'dt=2', deletes: [], kept: [], deletePartition: false },
        { partitionPath: 'dt=3', deletes: [decision(7, 1)], kept: [], deletePartition: true },
      ],
      (path) => `s3://bucket/table/${path}`,
    );
    assert.deepEqual(plan, {
      earliestInstantToRetain: { timestamp: t(6), action: 'commit', state: 'COMPLETED' },
      lastCompletedCommitTimestamp: t(8),
      policy: 'KEEP_LATEST_COMMITS',
      filesToBeDeletedPerPartition: {},
      version: 2,
      filePathsToBeDeletedPerPartition: {
        'dt=1': [{ filePath: `s3://bucket/table/dt=1/${file(1, 3).name}`, isBootstrapBaseFile: false }],
        'dt=3': [{ filePath: `s3://bucket/table/dt=3/${file(7, 1).name}`, isBootstrapBaseFile: false }],
      },
      partitionsToBeDeleted: ['dt=3'],
      extraMetadata: { savepointed_timestamps: t(1) },
    });
    // Executors find the files by partition and name, wherever the table was when planned.
    assert.deepEqual(
      planDeletes(plan!).map((d) => d.path),
      [`dt=1/${file(1, 3).name}`, `dt=3/${file(7, 1).name}`],
    );
  });

  it('is no plan at all when nothing would be deleted; non-partitioned tables record no savepoints', () => {
    assert.equal(
      assembleCleanerPlan(summary, [{ partitionPath: 'dt=1', deletes: [], kept: [], deletePartition: true }], (p) => p),
      undefined,
    );
    const plan = assembleCleanerPlan(
      { ...summary, isPartitioned: false },
      [{ partitionPath: '', deletes: [decision(1, 3)], kept: [], deletePartition: false }],
      (p) => `/t/${p}`,
    );
    assert.deepEqual(plan?.extraMetadata, {});
    assert.deepEqual(plan?.filePathsToBeDeletedPerPartition, { '': [{ filePath: `/t/${file(1, 3).name}`, isBootstrapBaseFile: false }] });
  });
});

describe('clean configuration', () => {
  it("has Hudi 0.15's defaults and refuses bad values with the key and the fix", () => {
    assert.deepEqual(
      [
        DEFAULT_CLEAN_CONFIG.policy,
        DEFAULT_CLEAN_CONFIG.commitsRetained,
        DEFAULT_CLEAN_CONFIG.fileVersionsRetained,
        DEFAULT_CLEAN_CONFIG.hoursRetained,
        DEFAULT_CLEAN_CONFIG.maxCommits,
        DEFAULT_CLEAN_CONFIG.incrementalMode,
        DEFAULT_CLEAN_CONFIG.automatic,
        DEFAULT_CLEAN_CONFIG.async,
      ],
      ['KEEP_LATEST_COMMITS', 10, 3, 24, 1, true, true, false],
    );
    const config = cleanConfigFromProperties(
      new Map([
        ['hoodie.cleaner.policy', 'keep_latest_file_versions'],
        ['hoodie.cleaner.fileversions.retained', '1'],
      ]),
    );
    assert.deepEqual([config.policy, config.fileVersionsRetained], ['KEEP_LATEST_FILE_VERSIONS', 1]);
    assert.throws(
      () => cleanConfigFromProperties(new Map([['hoodie.cleaner.policy', 'KEEP_EVERYTHING']]), 'job.properties'),
      (error: unknown) => {
        assert.ok(error instanceof HudiError);
        assert.match(error.message, /^job\.properties: hoodie\.cleaner\.policy="KEEP_EVERYTHING" is not an accepted value \(use one of KEEP_LATEST_COMMITS/);
        return true;
      },
    );
    // 0 is refused too: Hudi's cleaner fails on it (test/config/ranges.test.ts walks every key's ends).
    assert.throws(
      () => cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '0']])),
      /hoodie\.cleaner\.commits\.retained="0" is below 1 \(use a whole number from 1 to 2147483647/,
    );
  });
});
