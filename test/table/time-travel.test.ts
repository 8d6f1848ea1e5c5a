/**
 * Which as-of times a time-travel read may ask for (TimelineUtils.validateTimestampAsOf: 1.0.2 and 1.1.1 on layout 2,
 * 0.15.0 on layout 1), on hand-made timelines with the newest clean's metadata written as Hudi encodes it: before the
 * first pending write (clusterings and compactions aside), not before the newest clean's earliest commit to retain,
 * and after a clean by file versions (none recorded) not before the first completed write; no clean, no lower bound.
 * Layout 1 tells a pending clustering from an insert overwrite by the replacecommit's requested plan.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TimeTravelError } from '../../lib/errors.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { assertTimeTravelAllowed } from '../../lib/table/time-travel.js';
import { encodeRequestedReplaceMetadata, encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import type { Instant, InstantAction, InstantState } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1, type TimelineLayout, timelineLayout2 } from '../../lib/timeline/layout.js';
import { instantPath, Timeline } from '../../lib/timeline/timeline.js';
import { tempDir } from '../helpers/paths.js';
import { clusteringPlanOf, fileId, t } from '../helpers/synthetic-table.js';

const LAYOUT = timelineLayout2('.hoodie/timeline', 'UTC');
const at = (time: string, action: InstantAction = 'commit', state: InstantState = 'COMPLETED'): Instant =>
  state === 'COMPLETED' ? { time, action, state, completionTime: `${time.slice(0, -1)}9` } : { time, action, state };

/** Layout 1 (table version 6): no completion times, instant files flat in `.hoodie/`. */
const at1 = (time: string, action: InstantAction = 'commit', state: InstantState = 'COMPLETED'): Instant => ({ time, action, state });

/**
 * A table folder whose timeline is `instants`; each completed clean's file holds `retain` (undefined: an empty file);
 * each pending replacecommit named in `requested` gets that requested file: a clustering plan, or an insert
 * overwrite's empty one.
 */
async function setUp(
  instants: Instant[],
  retain: Record<string, string | undefined> = {},
  layout: TimelineLayout = LAYOUT,
  requested: Record<string, 'clustering' | 'overwrite'> = {},
): Promise<{ storage: LocalStorage; timeline: Timeline }> {
  const root = tempDir('time-travel-');
  mkdirSync(join(root, layout.folder), { recursive: true });
  const storage = new LocalStorage(root);
  const timeline = new Timeline(instants, layout);
  for (const [time, kind] of Object.entries(requested)) {
    const plan = clusteringPlanOf([{ dataFilePath: `p/${fileId(1)}_0-1-0_${t(1)}.parquet`, fileId: fileId(1), partitionPath: 'p' }]);
    const bytes = kind === 'clustering' ? encodeRequestedReplaceMetadata(plan, layout.version) : new Uint8Array();
    await storage.put(instantPath({ time, action: 'replacecommit', state: 'REQUESTED' }, layout), bytes);
  }
  for (const clean of timeline.completed().filter((instant) => instant.action === 'clean')) {
    const earliest = retain[clean.time];
    const bytes =
      earliest === undefined
        ? new Uint8Array()
        : encodeTimelineAvro('cleanMetadata', {
            startCleanTime: clean.time,
            timeTakenInMillis: 1,
            totalFilesDeleted: 0,
            earliestCommitToRetain: earliest,
            lastCompletedCommitTimestamp: '',
            partitionMetadata: {},
            version: 2,
            bootstrapPartitionMetadata: null,
            extraMetadata: null,
          });
    await storage.put(instantPath(clean, layout), bytes);
  }
  return { storage, timeline };
}

async function verdict(setup: { storage: LocalStorage; timeline: Timeline }, asOf: string): Promise<string> {
  try {
    await assertTimeTravelAllowed(setup.storage, setup.timeline, asOf);
    return 'allowed';
  } catch (error) {
    if (!(error instanceof TimeTravelError)) throw error;
    return error.problem;
  }
}

describe('time travel on a Hudi 1.x timeline (validateTimestampAsOf)', () => {
  it('without a clean: any time before the first pending write, older than the active timeline too', async () => {
    const setup = await setUp([at(t(5)), at(t(6)), at(t(7), 'commit', 'INFLIGHT'), at(t(8))]);
    for (const asOf of ['20000101000000000', t(1), t(5), t(6)]) assert.equal(await verdict(setup, asOf), 'allowed', asOf);
    for (const asOf of [t(7), t(8)]) assert.equal(await verdict(setup, asOf), `as of ${asOf} is not earlier than the pending commit ${t(7)}, as Hudi requires`);
  });

  it('a pending clustering or compaction bounds nothing; a pending delta commit or insert overwrite does', async () => {
    const setup = await setUp([at(t(1), 'deltacommit'), at(t(2), 'clustering', 'INFLIGHT'), at(t(3), 'compaction', 'REQUESTED'), at(t(4), 'deltacommit')]);
    assert.equal(await verdict(setup, t(4)), 'allowed');
    const overwrite = await setUp([at(t(1)), at(t(2), 'replacecommit', 'REQUESTED'), at(t(3))]);
    assert.match(await verdict(overwrite, t(2)), /pending replacecommit/);
    const delta = await setUp([at(t(1), 'deltacommit'), at(t(2), 'deltacommit', 'INFLIGHT')]);
    assert.match(await verdict(delta, t(3)), /pending deltacommit/);
  });

  it('the newest completed clean’s earliest commit to retain is the lower bound, older cleans and pending ones aside', async () => {
    const setup = await setUp([at(t(3)), at(t(4), 'clean'), at(t(5)), at(t(6)), at(t(7), 'clean'), at(t(8)), at(t(9), 'clean', 'INFLIGHT')], {
      [t(4)]: t(3),
      [t(7)]: t(6),
    });
    for (const asOf of [t(1), t(3), t(5)]) {
      assert.equal(await verdict(setup, asOf), `as of ${asOf} is before ${t(6)}, the earliest commit the newest clean (${t(7)}) retained`);
    }
    for (const asOf of [t(6), t(8)]) assert.equal(await verdict(setup, asOf), 'allowed', asOf);
  });

  it('a clean by file versions (no earliest commit recorded): the first completed write is the bound', async () => {
    const setup = await setUp([at(t(2), 'rollback'), at(t(3), 'commit', 'INFLIGHT'), at(t(4)), at(t(5), 'clean'), at(t(6), 'deltacommit', 'REQUESTED')], {
      [t(5)]: '',
    });
    assert.match(await verdict(setup, t(3)), new RegExp(`^as of ${t(3)} is not earlier than the pending commit ${t(3)}`));
    const versions = await setUp([at(t(2), 'rollback'), at(t(4)), at(t(5), 'clean'), at(t(6))], { [t(5)]: '' });
    assert.match(await verdict(versions, t(3)), new RegExp(`^as of ${t(3)} is before ${t(4)}, the first completed write on the active timeline`));
    assert.equal(await verdict(versions, t(4)), 'allowed');
  });

  it('an empty clean file: Hudi cannot read it and refuses every as-of read', async () => {
    const setup = await setUp([at(t(1)), at(t(2), 'clean'), at(t(3))], { [t(2)]: undefined });
    assert.match(await verdict(setup, t(3)), /has no metadata/);
  });
});

describe('time travel on a Hudi 0.15 timeline (table version 6, layout 1)', () => {
  it('without a clean: any time before the first pending write, older than the active timeline too', async () => {
    const setup = await setUp([at1(t(5)), at1(t(6)), at1(t(7), 'commit', 'INFLIGHT'), at1(t(8))], {}, TIMELINE_LAYOUT_1);
    for (const asOf of ['20000101000000000', t(1), t(5), t(6)]) assert.equal(await verdict(setup, asOf), 'allowed', asOf);
    for (const asOf of [t(7), t(8)]) assert.equal(await verdict(setup, asOf), `as of ${asOf} is not earlier than the pending commit ${t(7)}, as Hudi requires`);
  });

  it('a pending replacecommit bounds by its requested plan: a clustering does not, an insert overwrite does', async () => {
    const instants = [at1(t(1), 'deltacommit'), at1(t(2), 'replacecommit', 'INFLIGHT'), at1(t(3), 'compaction', 'REQUESTED'), at1(t(4), 'deltacommit')];
    const clustering = await setUp(instants, {}, TIMELINE_LAYOUT_1, { [t(2)]: 'clustering' });
    assert.equal(await verdict(clustering, t(4)), 'allowed');
    const overwrite = await setUp(instants, {}, TIMELINE_LAYOUT_1, { [t(2)]: 'overwrite' });
    assert.equal(await verdict(overwrite, t(1)), 'allowed');
    assert.equal(await verdict(overwrite, t(2)), `as of ${t(2)} is not earlier than the pending replacecommit ${t(2)}, as Hudi requires`);
    const requested = await setUp([at1(t(1)), at1(t(2), 'replacecommit', 'REQUESTED'), at1(t(3))], {}, TIMELINE_LAYOUT_1, { [t(2)]: 'overwrite' });
    assert.match(await verdict(requested, t(3)), /pending replacecommit/);
    const delta = await setUp([at1(t(1), 'deltacommit'), at1(t(2), 'deltacommit', 'REQUESTED')], {}, TIMELINE_LAYOUT_1);
    assert.match(await verdict(delta, t(3)), /pending deltacommit/);
  });

  it('the newest completed clean’s earliest commit to retain is the lower bound, older cleans and pending ones aside', async () => {
    const instants = [at1(t(3)), at1(t(4), 'clean'), at1(t(5)), at1(t(6)), at1(t(7), 'clean'), at1(t(8)), at1(t(9), 'clean', 'REQUESTED')];
    const setup = await setUp(instants, { [t(4)]: t(3), [t(7)]: t(6) }, TIMELINE_LAYOUT_1);
    for (const asOf of ['20000101000000000', t(3), t(5)]) {
      assert.equal(await verdict(setup, asOf), `as of ${asOf} is before ${t(6)}, the earliest commit the newest clean (${t(7)}) retained`);
    }
    for (const asOf of [t(6), t(7), t(8)]) assert.equal(await verdict(setup, asOf), 'allowed', asOf);
  });

  it('a clean by file versions: the first completed write is the bound; an empty clean file refuses every time', async () => {
    const versions = await setUp([at1(t(2), 'rollback'), at1(t(4)), at1(t(5), 'clean'), at1(t(6))], { [t(5)]: '' }, TIMELINE_LAYOUT_1);
    assert.match(await verdict(versions, t(3)), new RegExp(`^as of ${t(3)} is before ${t(4)}, the first completed write on the active timeline`));
    assert.equal(await verdict(versions, t(4)), 'allowed');
    const empty = await setUp([at1(t(1)), at1(t(2), 'clean'), at1(t(3))], { [t(2)]: undefined }, TIMELINE_LAYOUT_1);
    assert.match(await verdict(empty, t(3)), /has no metadata/);
  });
});
