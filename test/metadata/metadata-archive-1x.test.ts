/**
 * When a Hudi 1.x metadata table archives its own timeline (archive-1x.ts: TimelineArchiverV2 with the write config
 * HoodieMetadataWriteUtils gives it), on hand-made timelines with the arithmetic in the comments: keep.min/max one
 * more than the data table's and grown to the metadata cleaner's 20 retained commits, never from its latest
 * compaction or the data table's first active commit or pending instant on; and the data table's archive bounded by
 * the metadata table's latest compaction. test/interop/hudi-1x-metadata-archival.test.ts judges it against Spark.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { planArchiveLsm } from '../../lib/archiver/plan-lsm.js';
import { DEFAULT_CLEAN_CONFIG } from '../../lib/cleaner/config.js';
import { HudiError } from '../../lib/errors.js';
import { metadataArchiveRules1x, planMetadataArchive1x } from '../../lib/metadata/archive-1x.js';
import type { Instant, InstantAction, InstantState } from '../../lib/timeline/instant.js';
import { timelineLayout2 } from '../../lib/timeline/layout.js';
import { Timeline } from '../../lib/timeline/timeline.js';
import { t } from '../helpers/synthetic-table.js';

const LAYOUT = timelineLayout2('.hoodie/timeline', 'UTC');
const at = (index: number, action: InstantAction = 'deltacommit', state: InstantState = 'COMPLETED'): Instant =>
  state === 'COMPLETED' ? { time: t(index), action, state, completionTime: t(index + 0.5) } : { time: t(index), action, state };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const timeline = (instants: Instant[]) => new Timeline(instants, LAYOUT);
const names = (instants: readonly Instant[]) => instants.map((i) => `${i.time} ${i.action}`);
const KEEP = new Map([
  ['hoodie.keep.min.commits', '2'],
  ['hoodie.keep.max.commits', '3'],
]);

/** Deltacommits 1-26, a compaction at 27, deltacommits 28-29: 29 completed commits on a merge-on-read timeline. */
const METADATA = [...range(1, 26).map((i) => at(i)), at(27, 'commit'), at(28), at(29)];

describe('the metadata table archival of Hudi 1.x (TimelineArchiverV2 on the metadata table)', () => {
  it('keeps one more commit than the data table (keep.min/max + 1), the compaction trigger at its max delta commits', () => {
    const rules = metadataArchiveRules1x(new Map([...KEEP, ['hoodie.metadata.compact.max.delta.commits', '4']]));
    assert.deepEqual(rules, { minCommits: 3, maxCommits: 4, beyondSavepoint: false, compactionTriggerStrategy: 'NUM_COMMITS', compactionMaxDeltaCommits: 4 });
    assert.deepEqual(metadataArchiveRules1x(undefined), { ...rules, minCommits: 21, maxCommits: 31, compactionMaxDeltaCommits: 10 });
    assert.throws(() => metadataArchiveRules1x(new Map([['hoodie.keep.max.commits', '20']])), HudiError);
    assert.throws(() => metadataArchiveRules1x(new Map([['hoodie.keep.max.commits', 'many']])), HudiError);
  });

  it('grows keep.min to the metadata cleaner’s 20 retained commits, and stops at the data table’s first active commit', () => {
    const data = timeline([at(5, 'commit'), ...range(6, 9).map((i) => at(i, 'commit')), at(30, 'commit', 'INFLIGHT')]);
    const plan = planMetadataArchive1x(timeline(METADATA), { dataTimeline: data, zone: 'UTC', properties: KEEP });
    // 29 commits, 20 retained: the earliest commit to retain is t(10); 19 completed after it + 2 = 21 kept, 22 at most.
    assert.equal(plan.minToKeep, 21);
    assert.equal(plan.maxToKeep, 22);
    // 29 > 22: the oldest 29 - 21 = 8 may go, but nothing from the data table's first commit t(5) on.
    assert.deepEqual(names(plan.instants), names(range(1, 4).map((i) => at(i))));
    assert.deepEqual(
      plan.bounds.map((bound) => `${bound.rule} ${bound.time}`),
      [`data-table-timeline ${t(5)}`, `compaction-trigger ${t(27)}`],
    );
  });

  it('stops at the data table’s first pending instant of any action, and archives the cleans before the last commit archived', () => {
    const data = timeline([at(3, 'clean', 'REQUESTED'), ...range(6, 9).map((i) => at(i, 'commit'))]);
    const withClean = [...METADATA.slice(0, 1), at(1.2, 'clean'), ...METADATA.slice(1)];
    const plan = planMetadataArchive1x(timeline(withClean), { dataTimeline: data, zone: 'UTC', properties: KEEP });
    assert.deepEqual(names(plan.instants), [`${t(1)} deltacommit`, `${t(1.2)} clean`, `${t(2)} deltacommit`]);
  });

  it('nothing while the completed commits are at most keep.max, nor from the latest compaction on', () => {
    const data = timeline([at(40, 'commit')]);
    const few = planMetadataArchive1x(timeline(METADATA.slice(0, 22)), { dataTimeline: data, zone: 'UTC', properties: KEEP });
    assert.deepEqual(few.instants, []);
    // A compaction at 5, then 24 deltacommits with max.delta.commits 30: the compaction bounds it, t(1)-t(4) go.
    const early = [...range(1, 4).map((i) => at(i)), at(5, 'commit'), ...range(6, 29).map((i) => at(i))];
    const properties = new Map([...KEEP, ['hoodie.metadata.compact.max.delta.commits', '30']]);
    const plan = planMetadataArchive1x(timeline(early), { dataTimeline: data, zone: 'UTC', properties });
    assert.deepEqual(names(plan.instants), names(range(1, 4).map((i) => at(i))));
    // With 10 (the default), 24 delta commits since: the 10th newest, t(20), bounds it instead; keep.min leaves 8.
    const plan10 = planMetadataArchive1x(timeline(early), { dataTimeline: data, zone: 'UTC', properties: KEEP });
    assert.equal(plan10.bounds.find((bound) => bound.rule === 'compaction-trigger')?.time, t(20));
    assert.deepEqual(names(plan10.instants), names([...range(1, 4).map((i) => at(i)), at(5, 'commit'), ...range(6, 8).map((i) => at(i))]));
  });
});

describe("the data table's archive with a 1.x metadata table on (TimelineArchiverV2's metadata-table rule)", () => {
  const config = archivalConfigFromProperties(KEEP);
  const commits = range(1, 8).map((i) => at(i, 'commit'));
  const facts = (metadataTable: { latestCompaction: string | undefined }) => ({
    timeline: timeline(commits),
    lastClean: undefined,
    savepointTimes: [],
    timeZone: 'UTC' as const,
    tableType: 'COPY_ON_WRITE' as const,
    metadataTable,
  });

  it('archives nothing while the metadata table has no compaction', () => {
    assert.deepEqual(planArchiveLsm(facts({ latestCompaction: undefined }), config, DEFAULT_CLEAN_CONFIG).instants, []);
  });

  it('keeps the commits completed after the metadata table’s latest compaction (by completion time)', () => {
    // Commit i completes at t(i + 0.5); the compaction was requested at t(3.7): t(4) on completed after it and stay.
    // keep.min 2 alone would let six go.
    const plan = planArchiveLsm(facts({ latestCompaction: t(3.7) }), config, DEFAULT_CLEAN_CONFIG);
    assert.deepEqual(names(plan.instants), names(range(1, 3).map((i) => at(i, 'commit'))));
    assert.equal(plan.bounds.find((bound) => bound.rule === 'metadata-table-compaction')?.time, t(4));
  });
});
