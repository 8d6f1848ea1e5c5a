/**
 * How a write merges records: a Hudi 1.x table's record merge mode decides, and what was not proven against Hudi 1.x
 * (COMMIT_TIME_ORDERING writes, a write's own payload class) is refused before anything is written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UnsupportedTableError } from '../../lib/errors.js';
import { PAYLOAD_CLASSES, payloadOfMergeMode, writePayloadOf1xTable } from '../../lib/table/payload.js';

describe('the payload of a write to a Hudi 1.x table', () => {
  it('EVENT_TIME_ORDERING keeps a stored record with a greater ordering value, as DefaultHoodieRecordPayload', () => {
    assert.deepEqual(writePayloadOf1xTable('EVENT_TIME_ORDERING', undefined, 't'), payloadOfMergeMode('EVENT_TIME_ORDERING'));
    assert.equal(payloadOfMergeMode('EVENT_TIME_ORDERING').orderingAgainstStored, true);
    assert.equal(payloadOfMergeMode('COMMIT_TIME_ORDERING').orderingAgainstStored, false);
  });

  it('refuses COMMIT_TIME_ORDERING writes and a payload class given with the write', () => {
    assert.throws(() => writePayloadOf1xTable('COMMIT_TIME_ORDERING', undefined, 't'), UnsupportedTableError);
    assert.throws(() => writePayloadOf1xTable('EVENT_TIME_ORDERING', PAYLOAD_CLASSES.default, 't'), UnsupportedTableError);
  });
});
