/**
 * Healing after a crash, as Hudi's failed-writes cleaning does (hoodie.cleaner.policy.failed.writes): the next write
 * or service run rolls back the writes a killed process left pending, so nobody has to.
 *
 * - `EAGER` (Hudi's default for a single writer): a write starts by rolling back every pending commit /
 *   replacecommit other than clusterings — with one writer, none of them can be alive.
 * - `LAZY` (what Hudi switches to with hoodie.write.concurrency.mode=optimistic_concurrency_control, and what we use
 *   when the table's lock is Hudi's DynamoDB lock, shared with other writers): only instants whose heartbeat
 *   (`.hoodie/.heartbeat/T`, rewritten every 60 s) is older than 2 × 60 s are rolled back.
 * - `NEVER`: nothing is rolled back automatically.
 * Services (the clustering job, the state machine's plan step) clean LAZY whatever the policy: they run beside
 * writers, and Hudi's table services roll back only expired writers too (its clean with a LAZY policy; an EAGER
 * policy is applied by the writers themselves).
 *
 * Every run also removes what finished instants left behind: the marker folder (`.hoodie/.temp/T/`), our work
 * folder and the heartbeat of an instant that completed or was rolled back — a process killed just after its commit
 * (or its rollback) leaves them.
 */

import { defineKey, oneOf, rawValue, readKey } from '../config/index.js';
import { DYNAMODB_LOCK_PROVIDER } from '../lock/index.js';
import { LOCK_PROPERTY } from '../lock/lease.js';
import type { LockProvider } from '../lock/port.js';
import type { Storage } from '../storage/port.js';
import type { HudiTable } from '../table/table.js';
import { heartbeatPath } from '../timeline/heartbeat.js';
import { isValidInstantTime } from '../timeline/instant.js';
import { MARKERS_ROOT } from '../timeline/markers.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { loadTimeline } from '../timeline/timeline.js';
import { deleteInstantScratch, WORK_ROOT } from '../timeline/work-folder.js';
import { findRollbackOf, type RollbackResult, rollbackFailedWrites } from './rollback.js';

/** How a write heals the table from killed writes before it starts (HoodieCleanConfig.FAILED_WRITES_CLEANER_POLICY). */
export const FAILED_WRITES_POLICY = defineKey({
  key: 'hoodie.cleaner.policy.failed.writes',
  default: 'EAGER' as 'EAGER' | 'LAZY' | 'NEVER',
  parser: oneOf(['EAGER', 'LAZY', 'NEVER'] as const),
  description:
    'how a write heals the table from killed writes before it starts (lib/rollback/failed-writes.ts): EAGER rolls back every pending commit, ' +
    'LAZY only those whose heartbeat is older than 120 s, NEVER none. LAZY whenever hoodie.write.concurrency.mode=optimistic_concurrency_control (as Hudi) ' +
    'or, when unset, with the DynamoDB lock (a lock shared with other writers)',
});

export type FailedWritesPolicy = typeof FAILED_WRITES_POLICY.default;

export const FAILED_WRITES_POLICY_KEY = FAILED_WRITES_POLICY.key;
export const CONCURRENCY_MODE_KEY = 'hoodie.write.concurrency.mode';

export interface ResolvedFailedWritesPolicy {
  readonly policy: FailedWritesPolicy;
  /** Why: the key that set it, or the default. */
  readonly setBy: string;
}

/**
 * The policy from write properties. As Hudi (HoodieWriteConfig's autoAdjustConfigsForConcurrencyMode), multi-writer
 * concurrency forces LAZY; unlike Hudi, so does the DynamoDB lock when no policy is given: a shared lock means other
 * writers, and an EAGER rollback would fail their writes.
 */
export function failedWritesPolicy(props: ReadonlyMap<string, string>, location = 'write properties'): ResolvedFailedWritesPolicy {
  const mode = props.get(CONCURRENCY_MODE_KEY)?.trim().toLowerCase();
  if (mode === 'optimistic_concurrency_control') return { policy: 'LAZY', setBy: `${CONCURRENCY_MODE_KEY}=${mode}` };
  if (rawValue(props, FAILED_WRITES_POLICY) !== undefined) return { policy: readKey(props, FAILED_WRITES_POLICY, location), setBy: FAILED_WRITES_POLICY_KEY };
  if (props.get(LOCK_PROPERTY.provider)?.trim() === DYNAMODB_LOCK_PROVIDER)
    return { policy: 'LAZY', setBy: `${LOCK_PROPERTY.provider} (a lock shared with other writers)` };
  return { policy: 'EAGER', setBy: 'default (single writer)' };
}

export interface HealOptions {
  readonly lock: LockProvider;
  readonly policy: FailedWritesPolicy;
  readonly now?: Date;
  readonly lockWaitMs?: number;
  readonly heartbeatExpiryMs?: number;
}

export interface HealResult {
  /** The failed writes rolled back (or whose interrupted rollback was finished). */
  readonly rolledBack: readonly RollbackResult[];
  /** Completed instants whose markers, work folder or heartbeat were left behind and are gone now. */
  readonly cleanedUp: readonly string[];
}

/** Roll back failed writes per `policy` and remove what completed instants left behind (see the module comment). */
export async function healTable(table: HudiTable, options: HealOptions): Promise<HealResult> {
  const rolledBack =
    options.policy === 'NEVER'
      ? []
      : await rollbackFailedWrites(table, {
          lock: options.lock,
          policy: options.policy,
          ...(options.now === undefined ? {} : { now: options.now }),
          ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
          ...(options.heartbeatExpiryMs === undefined ? {} : { heartbeatExpiryMs: options.heartbeatExpiryMs }),
        });
  const cleanedUp = await removeLeftoversOfCompletedInstants(table.storage);
  return { rolledBack, cleanedUp };
}

/** One line per thing a heal did, for progress output and logs; empty when it did nothing. */
export function describeHeal(result: HealResult): string[] {
  const lines = result.rolledBack.map(
    (r) =>
      `rolled back failed ${r.instantToRollback.action} ${r.instantToRollback.time} (${r.outcome === 'resumed' ? 'finished an interrupted rollback' : `rollback ${r.rollbackInstantTime}`}, ${r.deletedFiles.length} file(s) deleted)`,
  );
  if (result.cleanedUp.length > 0) lines.push(`removed markers left by completed instant(s) ${result.cleanedUp.join(', ')}`);
  return lines;
}

/**
 * Marker folders, work folders and heartbeats of instants that completed, or that a completed rollback removed from
 * the timeline (a rollback killed after `R.rollback` leaves them). Only instants decided on a timeline read before
 * listing are touched: a completed instant stays completed, so nothing a running writer needs goes.
 */
async function removeLeftoversOfCompletedInstants(storage: Storage): Promise<string[]> {
  const timeline = await loadTimeline(storage);
  const [markers, work, heartbeats] = await Promise.all([
    storage.listDir(MARKERS_ROOT),
    storage.listDir(`${WORK_ROOT}/clustering`),
    storage.listDir(`${METAFOLDER}/.heartbeat`),
  ]);
  const lastName = (path: string): string => path.replace(/\/+$/, '').split('/').at(-1) ?? '';
  const decided = new Map<string, boolean>();
  const isDecided = async (time: string): Promise<boolean> => {
    if (!isValidInstantTime(time)) return false;
    let answer = decided.get(time);
    if (answer === undefined) {
      const onTimeline = timeline.instants.filter((instant) => instant.time === time);
      answer =
        onTimeline.length > 0
          ? onTimeline.some((instant) => instant.state === 'COMPLETED') && !onTimeline.some((instant) => instant.state !== 'COMPLETED')
          : (await findRollbackOf(storage, timeline, time))?.state === 'COMPLETED';
      decided.set(time, answer);
    }
    return answer;
  };
  const leftover: string[] = [];
  for (const time of [...new Set([...markers.dirs, ...work.dirs].map(lastName))].sort()) {
    if (await isDecided(time)) leftover.push(time);
  }
  const staleHeartbeats: string[] = [];
  for (const time of heartbeats.files.map((file) => lastName(file.path))) {
    if (await isDecided(time)) staleHeartbeats.push(time);
  }
  for (const time of leftover) await deleteInstantScratch(storage, time);
  if (staleHeartbeats.length > 0) await storage.delete(staleHeartbeats.map(heartbeatPath));
  return [...new Set([...leftover, ...staleHeartbeats])].sort();
}
