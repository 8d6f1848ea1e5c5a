/**
 * The lease's timer pauses: every wait, poll and renewal the lock takes goes through timerDelay, so a lease or wait
 * longer than Node's longest timer (another writer's Java-long lease) is taken in capped pauses instead of a timer
 * that fires at once, and a tiny or fractional one never polls the store in a tight loop.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_TIMER_MS, timerDelay } from '../../lib/lock/lease.js';

describe('the lock’s timer pauses', () => {
  it('caps a pause at Node’s longest timer, and one past it', () => {
    assert.equal(MAX_TIMER_MS, 2 ** 31 - 1);
    assert.equal(timerDelay(MAX_TIMER_MS), MAX_TIMER_MS);
    assert.equal(timerDelay(MAX_TIMER_MS + 1), MAX_TIMER_MS);
    assert.equal(timerDelay(Number.MAX_SAFE_INTEGER), MAX_TIMER_MS);
  });

  it('never pauses less than the shortest poll, and whole milliseconds only', () => {
    assert.equal(timerDelay(0), 10);
    assert.equal(timerDelay(-5), 10);
    assert.equal(timerDelay(9.9), 10);
    assert.equal(timerDelay(1234.9), 1234);
  });

  it('a capped pause sets a timer Node keeps, with no overflow warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const timer = setTimeout(() => assert.fail('a capped pause fired at once'), timerDelay(2 ** 40));
      await new Promise((resolve) => setImmediate(resolve));
      clearTimeout(timer);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
