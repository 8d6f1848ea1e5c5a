/**
 * Moving an instant through its states by writing its timeline files, as Hudi does:
 * requested → inflight → completed. Each file is created once (conditional create), so two writers can never
 * both create the same instant, and the completed file is written last, in one PUT. Where the files go and how the
 * completed one is named is the table's layout: layout 2 (Hudi 1.x) stamps the completion time into the name.
 */
import { AlreadyExistsError, ConflictError } from '../errors.js';
import type { Storage } from '../storage/port.js';
import type { Instant, InstantAction, InstantState } from './instant.js';
import type { TimelineLayout } from './layout.js';
import { instantPath, loadTimeline } from './timeline.js';

async function createOnce(storage: Storage, layout: TimelineLayout, instant: Instant, body: Uint8Array | string): Promise<void> {
  const path = instantPath(instant, layout);
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

export async function createRequested(
  storage: Storage,
  layout: TimelineLayout,
  time: string,
  action: InstantAction,
  body: Uint8Array | string = new Uint8Array(),
): Promise<Instant> {
  const instant = instantOf(time, action, 'REQUESTED');
  await createOnce(storage, layout, instant, body);
  return instant;
}

export async function transitionToInflight(
  storage: Storage,
  layout: TimelineLayout,
  time: string,
  action: InstantAction,
  body: Uint8Array | string = new Uint8Array(),
): Promise<Instant> {
  const instant = instantOf(time, action, 'INFLIGHT');
  await createOnce(storage, layout, instant, body);
  return instant;
}

/**
 * Write the completed instant file: the commit point. Call only after every data file it names is durable, under the
 * table lock. In layout 2 a completed file's name carries its completion time, so a second completion of the same
 * instant would not collide on the name: the folder is read first, and an instant already completed is a conflict.
 */
export async function transitionToCompleted(
  storage: Storage,
  layout: TimelineLayout,
  time: string,
  action: InstantAction,
  body: Uint8Array | string,
  now: Date = new Date(),
): Promise<Instant> {
  if (layout.version === 1) {
    const instant = instantOf(time, action, 'COMPLETED');
    await createOnce(storage, layout, instant, body);
    return instant;
  }
  const timeline = await loadTimeline(storage, layout);
  const done = timeline.instants.find((i) => i.time === time && i.state === 'COMPLETED');
  if (done !== undefined) {
    const path = instantPath(done, layout);
    throw new ConflictError(`instant ${time} is already completed (${layout.fileName(done)}): another writer finished it`, {
      location: storage.uriOf(path),
      fix: 'look at the timeline: the instant needs no second completion',
    });
  }
  const existing = timeline.instants.flatMap((i) => (i.completionTime === undefined ? [i.time] : [i.time, i.completionTime]));
  const instant = layout.completedInstant(time, action, existing, now);
  await createOnce(storage, layout, instant, body);
  return instant;
}
