/**
 * Healing after a crash, as Hudi's failed-writes cleaning does (hoodie.cleaner.policy.failed.writes): the next write
 * or service run rolls back the writes a killed process left pending. EAGER (Hudi's default for a single writer): every
 * pending commit / replacecommit other than clusterings. LAZY (Hudi's choice under optimistic concurrency, ours when
 * the lock is Hudi's DynamoDB lock): only instants whose heartbeat (`.hoodie/.heartbeat/T`) expired. NEVER: none.
 * Services clean LAZY whatever the policy: they run beside writers, and Hudi's table services roll back only expired
 * writers too. Every run also removes the marker folder, work folder and heartbeat an instant left behind when its
 * process was killed just after its commit or rollback.
 */

import { defineKey, oneOf, rawValue, readKey } from '../config/index.js';
import { DYNAMODB_LOCK_PROVIDER, STORAGE_BASED_LOCK_PROVIDER } from '../lock/index.js';
import { LOCK_PROPERTY } from '../lock/lease.js';
import type { LockProvider } from '../lock/port.js';
import type { Storage } from '../storage/port.js';
import type { HudiTable } from '../table/table.js';
import { heartbeatPath } from '../timeline/heartbeat.js';
import { isValidInstantTime } from '../timeline/instant.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { MARKERS_ROOT } from '../timeline/markers.js';
import { METAFOLDER } from '../timeline/meta-folder.js';
import { loadTimeline } from '../timeline/timeline.js';
import { deleteInstantScratch, INSTANT_WORK_ROOTS } from '../timeline/work-folder.js';
import { findRollbackOf, type RollbackResult, rollbackFailedWrites } from './rollback.js';

/** How a write heals the table from killed writes before it starts (HoodieCleanConfig.FAILED_WRITES_CLEANER_POLICY). */
export const FAILED_WRITES_POLICY = defineKey({
  key: 'hoodie.cleaner.policy.failed.writes',
  renamedIn: ['hoodie.clean.failed.writes.policy'],
  default: 'EAGER' as 'EAGER' | 'LAZY' | 'NEVER',
  parser: oneOf(['EAGER', 'LAZY', 'NEVER'] as const),
  description:
    'how a write heals the table from killed writes before it starts (lib/rollback/failed-writes.ts): EAGER rolls back every pending commit, ' +
    'LAZY only those whose heartbeat is older than 120 s, NEVER none. LAZY whenever hoodie.write.concurrency.mode=optimistic_concurrency_control (as Hudi) ' +
    "or, when unset, with the DynamoDB lock or Hudi's StorageBasedLockProvider (a lock shared with other writers)",
});

export type FailedWritesPolicy = typeof FAILED_WRITES_POLICY.default;

export const FAILED_WRITES_POLICY_KEY = FAILED_WRITES_POLICY.key;
export const CONCURRENCY_MODE_KEY = 'hoodie.write.concurrency.mode';

/** The locks Hudi writers share with ours. */
const SHARED_LOCK_PROVIDERS: ReadonlySet<string> = new Set([DYNAMODB_LOCK_PROVIDER, STORAGE_BASED_LOCK_PROVIDER]);

export interface ResolvedFailedWritesPolicy {
  readonly policy: FailedWritesPolicy;
  /** Why: the key that set it, or the default. */
  readonly setBy: string;
}

/**
 * The policy from write properties. As Hudi (HoodieWriteConfig's autoAdjustConfigsForConcurrencyMode), multi-writer
 * concurrency forces LAZY; unlike Hudi, so does a lock Hudi writers share (DynamoDB, Hudi's storage-based lock) when no
 * policy is given: a shared lock means other writers, and an EAGER rollback would fail their writes.
 */
export function failedWritesPolicy(props: ReadonlyMap<string, string>, location = 'write properties'): ResolvedFailedWritesPolicy {
  const mode = props.get(CONCURRENCY_MODE_KEY)?.trim().toLowerCase();
  if (mode === 'optimistic_concurrency_control') return { policy: 'LAZY', setBy: `${CONCURRENCY_MODE_KEY}=${mode}` };
  if (rawValue(props, FAILED_WRITES_POLICY) !== undefined) return { policy: readKey(props, FAILED_WRITES_POLICY, location), setBy: FAILED_WRITES_POLICY_KEY };
  if (SHARED_LOCK_PROVIDERS.has(props.get(LOCK_PROPERTY.provider)?.trim() ?? ''))
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
  const cleanedUp = await removeLeftoversOfCompletedInstants(table.storage, table.layout);
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
async function removeLeftoversOfCompletedInstants(storage: Storage, layout: TimelineLayout): Promise<string[]> {
  const timeline = await loadTimeline(storage, layout);
  const [markers, heartbeats, ...works] = await Promise.all([
    storage.listDir(MARKERS_ROOT),
    storage.listDir(`${METAFOLDER}/.heartbeat`),
    ...INSTANT_WORK_ROOTS.map((root) => storage.listDir(root)),
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
  for (const time of [...new Set([...markers.dirs, ...works.flatMap((work) => work.dirs)].map(lastName))].sort()) {
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
