/**
 * A serverless step's lock failures are classified by their type, never by their wording: a lock held or lost
 * (ConflictError) and a lock service that could not be reached (LockUnavailableError) are Hudi.Transient; any other
 * error, whatever its message says, passes through unchanged (permanent).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConflictError, HudiError, LockUnavailableError } from '../../lib/errors.js';
import type { LockProvider } from '../../lib/lock/port.js';
import { transientLockFailures } from '../../lib/serverless/aws/clients.js';
import { TaskError, TRANSIENT_ERROR } from '../../lib/serverless/aws/errors.js';

function failingLock(error: Error): LockProvider {
  return {
    description: 'test lock',
    acquire: () => Promise.reject(error),
  };
}

it('lock failures are transient by type, and only by type', async () => {
  for (const error of [new ConflictError('held by another writer'), new LockUnavailableError('cannot acquire the lock: socket hang up')]) {
    const thrown = await transientLockFailures(failingLock(error))
      .acquire()
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    assert.ok(thrown instanceof TaskError, error.name);
    assert.equal(thrown.name, TRANSIENT_ERROR);
    assert.equal(thrown.cause, error);
  }
  // The same words in another error type stay permanent: the message is not what classifies it.
  const permanent = new HudiError('cannot acquire the lock: the operation can be retried');
  await assert.rejects(transientLockFailures(failingLock(permanent)).acquire(), (reason: unknown) => reason === permanent);
});
