/**
 * Moving an instant through its states by writing its timeline files, as Hudi does:
 * requested → inflight → completed. Each file is created once (conditional create), so two writers can never
 * both create the same instant, and the completed file is written last, in one PUT.
 */
import { AlreadyExistsError, ConflictError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import type { Instant, InstantAction, InstantState } from './instant.js';
import { instantPath } from './timeline.js';

async function createOnce(storage: Storage, instant: Instant, body: Uint8Array | string): Promise<void> {
  const path = instantPath(instant);
  try {
    await storage.putIfAbsent(path, body);
  } catch (error) {
    if (error instanceof AlreadyExistsError) {
      throw new ConflictError(`instant file ${path} already exists: another writer used instant ${instant.time}`, {
        location: storage.uriOf(path),
        fix: 'retry with a new instant time',
      });
    }
    throw error;
  }
}

export function instantOf(time: string, action: InstantAction, state: InstantState): Instant {
  return { time, action, state };
}

export async function createRequested(storage: Storage, time: string, action: InstantAction, body: Uint8Array | string = new Uint8Array()): Promise<Instant> {
  const instant = instantOf(time, action, 'REQUESTED');
  await createOnce(storage, instant, body);
  return instant;
}

export async function transitionToInflight(
  storage: Storage,
  time: string,
  action: InstantAction,
  body: Uint8Array | string = new Uint8Array(),
): Promise<Instant> {
  const instant = instantOf(time, action, 'INFLIGHT');
  await createOnce(storage, instant, body);
  return instant;
}

/** Write the completed instant file: the commit point. Call only after every data file it names is durable. */
export async function transitionToCompleted(storage: Storage, time: string, action: InstantAction, body: Uint8Array | string): Promise<Instant> {
  const instant = instantOf(time, action, 'COMPLETED');
  await createOnce(storage, instant, body);
  return instant;
}
