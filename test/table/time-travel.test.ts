/**
 * Which as-of times a Hudi 1.x time-travel read may ask for (TimelineUtils.validateTimestampAsOf, 1.0.2 and 1.1.1),
 * on hand-made layout-2 timelines with the newest clean's metadata written as Hudi encodes it: before the first
 * pending write (clusterings and compactions aside), not before the newest clean's earliest commit to retain, and
 * after a clean by file versions (none recorded) not before the first completed write; no clean, no lower bound.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TimeTravelError } from '../../lib/errors.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { assertTimeTravelAllowed } from '../../lib/table/time-travel.js';
import { encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import type { Instant, InstantAction, InstantState } from '../../lib/timeline/instant.js';
import { timelineLayout2 } from '../../lib/timeline/layout.js';
import { instantPath, Timeline } from '../../lib/timeline/timeline.js';
import { tempDir } from '../helpers/paths.js';
import { t } from '../helpers/synthetic-table.js';

const LAYOUT = timelineLayout2('.hoodie/timeline', 'UTC');
const at = (time: string, action: InstantAction = 'commit', state: InstantState = 'COMPLETED'): Instant =>
  state === 'COMPLETED' ? { time, action, state, completionTime: `${time.slice(0, -1)}9` } : { time, action, state };

/** A table folder whose timeline is `instants`; each completed clean's file holds `retain` (undefined: an empty file). */
async function setUp(instants: Instant[], retain: Record<string, string | undefined> = {}): Promise<{ storage: LocalStorage; timeline: Timeline }> {
  const root = tempDir('time-travel-');
  mkdirSync(join(root, '.hoodie', 'timeline'), { recursive: true });
  const storage = new LocalStorage(root);
  const timeline = new Timeline(instants, LAYOUT);
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
    await storage.put(instantPath(clean, LAYOUT), bytes);
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
