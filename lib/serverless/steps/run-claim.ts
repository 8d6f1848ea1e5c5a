/**
 * Which run owns a pending clustering or compaction. Two signals, both on the table's storage:
 * - the instant's heartbeat `.hoodie/.heartbeat/<T>` (Hudi's): the plan step writes it when it schedules or resumes
 *   a plan, every executing group (compaction operation) rewrites it each minute, commit and rollback delete it. Fresh (younger than
 *   Hudi's expiry, 2 minutes) means someone is working on the instant;
 * - the claim `.hoodie/.aux/hudi-serverless/<clustering|compaction>/<T>/serverless-run.json` (ours): the execution id
 *   of the run that last scheduled or resumed the plan, so a retried plan step recognises its own run. It lives in the
 *   instant's work folder (clustering/instant.ts, compaction/execute.ts), which commit and rollback remove; never in
 *   the marker folder, where Hudi's rollback would take it for a marker.
 */

import { HEARTBEAT_EXPIRY_MS } from '../../rollback/rollback.js';
import { settleAll } from '../../storage/concurrency.js';
import type { Storage } from '../../storage/port.js';
import { heartbeatPath } from '../../timeline/heartbeat.js';
import { clusteringWorkDir, compactionWorkDir } from '../../timeline/work-folder.js';

export interface RunClaim {
  readonly runId: string;
  readonly claimedAt: string;
}

export interface RunActivity {
  /** Milliseconds since the heartbeat was written; undefined when there is none. */
  readonly heartbeatAgeMs: number | undefined;
  readonly claim: RunClaim | undefined;
}

/** The table service whose instant is claimed: its work folder holds the claim. */
export type ClaimedService = 'clustering' | 'compaction';

export function runClaimPath(instantTime: string, service: ClaimedService = 'clustering'): string {
  return `${service === 'clustering' ? clusteringWorkDir(instantTime) : compactionWorkDir(instantTime)}/serverless-run.json`;
}

export async function readRunActivity(
  storage: Storage,
  instantTime: string,
  now: Date = new Date(),
  service: ClaimedService = 'clustering',
): Promise<RunActivity> {
  const claimPath = runClaimPath(instantTime, service);
  const [heartbeat, claimObject] = await settleAll([storage.head(heartbeatPath(instantTime)), storage.head(claimPath)]);
  let claim: RunClaim | undefined;
  if (claimObject !== undefined) {
    try {
      const parsed: unknown = JSON.parse(Buffer.from(await storage.get(claimPath)).toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null && 'runId' in parsed && typeof parsed.runId === 'string') {
        claim = { runId: parsed.runId, claimedAt: 'claimedAt' in parsed && typeof parsed.claimedAt === 'string' ? parsed.claimedAt : '' };
      }
    } catch {
      // Unreadable or gone meanwhile: no claim.
    }
  }
  return { heartbeatAgeMs: heartbeat === undefined ? undefined : Math.max(0, now.getTime() - heartbeat.modifiedMs), claim };
}

/** Whether some writer is (or was until moments ago) working on the instant. */
export function isAlive(activity: RunActivity, expiryMs: number = HEARTBEAT_EXPIRY_MS): boolean {
  return activity.heartbeatAgeMs !== undefined && activity.heartbeatAgeMs < expiryMs;
}

/** Record `runId` as the instant's run and beat its heartbeat once (groups keep it fresh from then on). */
export async function claimRun(
  storage: Storage,
  instantTime: string,
  runId: string,
  now: Date = new Date(),
  service: ClaimedService = 'clustering',
): Promise<void> {
  const claim: RunClaim = { runId, claimedAt: now.toISOString() };
  await storage.put(runClaimPath(instantTime, service), JSON.stringify(claim));
  await storage.put(heartbeatPath(instantTime), '');
}

/** The run is over (rolled back): the next run may resume the plan at once instead of waiting for the heartbeat to expire. */
export async function releaseRun(storage: Storage, instantTime: string, service: ClaimedService = 'clustering'): Promise<void> {
  await storage.delete([heartbeatPath(instantTime), runClaimPath(instantTime, service)]);
}
