/**
 * Every step event that names an instant names an instant time: the steps build timeline paths from it, so a value
 * that is not one (a path, a word, a truncated time) is an EventError before anything is read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventError } from '../../lib/errors.js';
import { EventPropertyError } from '../../lib/serverless/aws/event-properties.js';
import { parsePropertyOverrides, resolveStepSettings } from '../../lib/serverless/aws/settings.js';
import { parseCleanCompleteEvent, parseCleanExecuteShareEvent } from '../../lib/serverless/steps/cleaning/index.js';
import { parseCommitEvent } from '../../lib/serverless/steps/clustering/commit.js';
import { parseExecuteGroupEvent } from '../../lib/serverless/steps/clustering/execute.js';
import { parseRollbackEvent } from '../../lib/serverless/steps/clustering/rollback.js';
import { parseCompactionInstantEvent, parseCompactionOperationEvent } from '../../lib/serverless/steps/compaction/steps.js';

const PARSERS: [string, (event: unknown) => { instant?: string }, Record<string, unknown>][] = [
  ['commit', parseCommitEvent, {}],
  ['execute-group', parseExecuteGroupEvent, { groupIndex: 0 }],
  ['clean-execute', parseCleanExecuteShareEvent, { shareIndex: 0 }],
  ['clean-complete', parseCleanCompleteEvent, {}],
  ['compaction instant', parseCompactionInstantEvent, {}],
  ['compaction operation', parseCompactionOperationEvent, { operationIndex: 0 }],
  ['rollback', parseRollbackEvent, {}],
];

describe('step events: instant fields are instant times', () => {
  for (const [name, parse, rest] of PARSERS) {
    it(`${name}: refuses what is not an instant time, takes one that is`, () => {
      for (const bad of ['../../x', 'T1', '2024010112', '20240101120000.commit', '20240101120000000 ', '202401011200000000']) {
        assert.throws(
          () => parse({ ...rest, instant: bad }),
          (error: unknown) => error instanceof EventError && /is not an instant time/.test(error.message),
          `${name}: ${JSON.stringify(bad)}`,
        );
      }
      assert.equal(parse({ ...rest, instant: '20240101120000123' }).instant, '20240101120000123');
      assert.equal(parse({ ...rest, instant: '20240101120000' }).instant, '20240101120000');
    });
  }
});

describe('step events: properties', () => {
  it('"__proto__" is a key like any other: kept by name, and refused by name as not allowed', () => {
    const properties = parsePropertyOverrides(JSON.parse('{"__proto__": "x", "hoodie.clustering.plan.strategy.sort.columns": "a"}'), 'event.properties');
    assert.deepEqual(Object.keys(properties).sort(), ['__proto__', 'hoodie.clustering.plan.strategy.sort.columns']);
    assert.equal(Object.getPrototypeOf(properties), Object.prototype);
    assert.throws(
      () => resolveStepSettings({ TABLE_PATH: 's3://bucket/table' }, { properties }),
      (error: unknown) => error instanceof EventPropertyError && error.keys.includes('__proto__'),
    );
  });
});
