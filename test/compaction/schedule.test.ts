/**
 * Compaction scheduling rules (no Spark; Hudi's own plan is compared in test/interop/merge-on-read-compaction): the
 * trigger strategies, LogFileSizeBasedCompactionStrategy's order and target-IO bound, and the config keys.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMPACTION_KEYS, compactionConfigFrom } from '../../lib/compaction/config.js';
import { compactionDue, deltaCommitsSinceLastCompaction, orderAndFilter } from '../../lib/compaction/schedule.js';
import { type CompactionOperation, sliceMetrics } from '../../lib/timeline/compaction-plan.js';
import type { Instant } from '../../lib/timeline/instant.js';
import { timelineLayout2 } from '../../lib/timeline/layout.js';
import { Timeline } from '../../lib/timeline/timeline.js';

const MB = 1024 * 1024;
const instant = (time: string, action: Instant['action'], state: Instant['state'] = 'COMPLETED'): Instant => ({ time, action, state });
const op = (fileId: string, baseBytes: number, logBytes: number[]): CompactionOperation => ({
  baseInstantTime: '20240101000000000',
  deltaFilePaths: logBytes.map((_, i) => `.${fileId}_20240101000000000.log.${i + 1}_0-1-1`),
  dataFilePath: `${fileId}_0-1-1_20240101000000000.parquet`,
  fileId,
  partitionPath: 'p',
  metrics: sliceMetrics(baseBytes, logBytes),
  bootstrapFilePath: null,
});

describe('compaction trigger', () => {
  const timeline = new Timeline([
    instant('20240101000000001', 'deltacommit'),
    instant('20240101000000002', 'deltacommit'),
    instant('20240101000000003', 'commit'),
    instant('20240101000000004', 'deltacommit'),
    instant('20240101000000005', 'deltacommit', 'INFLIGHT'),
    instant('20240101000010000', 'compaction', 'REQUESTED'),
  ]);

  it('counts delta commits (any state) after the last completed compaction, or after the last request', () => {
    assert.deepEqual(deltaCommitsSinceLastCompaction(timeline), { count: 2, since: '20240101000000003' });
    assert.deepEqual(deltaCommitsSinceLastCompaction(timeline, true), { count: 0, since: '20240101000010000' });
    assert.deepEqual(deltaCommitsSinceLastCompaction(new Timeline([instant('20240101000000001', 'deltacommit')])), { count: 1, since: '20240101000000001' });
  });

  it('layout 2 (Hudi 1.x) counts completed delta commits by completion time, as findInstantsModifiedAfterByCompletionTime', () => {
    const done = (time: string, action: Instant['action'], completionTime: string): Instant => ({ time, action, state: 'COMPLETED', completionTime });
    const instants = [
      done('20240101000000001', 'deltacommit', '20240101000000002'),
      // Requested before the compaction, completed after it was requested: counted.
      done('20240101000000002', 'deltacommit', '20240101000000007'),
      done('20240101000000003', 'commit', '20240101000000006'),
      done('20240101000000004', 'deltacommit', '20240101000000005'),
      instant('20240101000000008', 'deltacommit', 'INFLIGHT'),
      instant('20240101000000009', 'deltacommit', 'INFLIGHT'),
    ];
    assert.deepEqual(deltaCommitsSinceLastCompaction(new Timeline(instants, timelineLayout2('.hoodie/timeline', 'UTC'))), {
      count: 2,
      since: '20240101000000003',
    });
    assert.deepEqual(deltaCommitsSinceLastCompaction(new Timeline(instants)), { count: 3, since: '20240101000000003' }, "0.x's rule: requested after it");
  });

  it('NUM_COMMITS, TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME', () => {
    const now = new Date(Date.UTC(2024, 0, 1, 0, 30, 1)); // 1800.997 s after the last compaction
    const due = (props: Record<string, string>) => compactionDue(timeline, compactionConfigFrom(new Map(Object.entries(props)), 't'), now, 'UTC').due;
    assert.equal(due({}), false, 'default: 5 delta commits');
    assert.equal(due({ 'hoodie.compact.inline.max.delta.commits': '2' }), true);
    assert.equal(due({ 'hoodie.compact.inline.trigger.strategy': 'TIME_ELAPSED', 'hoodie.compact.inline.max.delta.seconds': '1800' }), true);
    assert.equal(due({ 'hoodie.compact.inline.trigger.strategy': 'TIME_ELAPSED', 'hoodie.compact.inline.max.delta.seconds': '1801' }), false);
    assert.equal(
      due({
        'hoodie.compact.inline.trigger.strategy': 'NUM_AND_TIME',
        'hoodie.compact.inline.max.delta.commits': '2',
        'hoodie.compact.inline.max.delta.seconds': '3600',
      }),
      false,
    );
    assert.equal(
      due({
        'hoodie.compact.inline.trigger.strategy': 'NUM_OR_TIME',
        'hoodie.compact.inline.max.delta.commits': '2',
        'hoodie.compact.inline.max.delta.seconds': '3600',
      }),
      true,
    );
  });

  it('refuses unknown strategies and bad numbers, naming the key', () => {
    assert.throws(
      () => compactionConfigFrom(new Map([[COMPACTION_KEYS.triggerStrategy.key, 'SOMETIMES']]), 't'),
      /hoodie\.compact\.inline\.trigger\.strategy="SOMETIMES" is not an accepted value \(use one of NUM_COMMITS, /,
    );
    assert.throws(
      () => compactionConfigFrom(new Map([[COMPACTION_KEYS.strategy.key, 'org.example.Mine']]), 't'),
      /hoodie\.compaction\.strategy="org\.example\.Mine" is not an accepted value \(use one of org\.apache\.hudi\.table\.action\.compact\.strategy\.LogFileSizeBasedCompactionStrategy/,
    );
    assert.throws(
      () => compactionConfigFrom(new Map([[COMPACTION_KEYS.maxDeltaCommits.key, '0']]), 't'),
      /hoodie\.compact\.inline\.max\.delta\.commits="0" is below 1/,
    );
  });
});

describe('LogFileSizeBasedCompactionStrategy', () => {
  const ops = [op('small', 10 * MB, [1 * MB]), op('big', 10 * MB, [30 * MB, 20 * MB]), op('mid', 100 * MB, [5 * MB]), op('none', 10 * MB, [100])];

  it('orders by log bytes, most first; the threshold drops slices with fewer log bytes', () => {
    const config = compactionConfigFrom(new Map(), 't');
    assert.deepEqual(
      orderAndFilter(ops, config).map((o) => o.fileId),
      ['big', 'mid', 'small', 'none'],
    );
    const threshold = compactionConfigFrom(new Map([['hoodie.compaction.logfile.size.threshold', String(2 * MB)]]), 't');
    assert.deepEqual(
      orderAndFilter(ops, threshold).map((o) => o.fileId),
      ['big', 'mid'],
    );
  });

  it('takes slices until the target IO is used up, the one crossing it included', () => {
    // big: 60 MB read + 10 MB written = 70; mid: 105 + 100 = 205.
    assert.equal(ops[1]!.metrics['TOTAL_IO_MB'], 70);
    const bounded = (mb: number) => orderAndFilter(ops, compactionConfigFrom(new Map([['hoodie.compaction.target.io', String(mb)]]), 't')).map((o) => o.fileId);
    assert.deepEqual(bounded(70), ['big']);
    assert.deepEqual(bounded(71), ['big', 'mid']);
  });
});
