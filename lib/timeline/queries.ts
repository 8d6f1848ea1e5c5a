/**
 * Questions about the timeline that need more than instant file names: what completed commits say, and which
 * replacecommits are clusterings. As HoodieActiveTimeline / TableSchemaResolver / ClusteringUtils answer them; used
 * by the table, schedule, the writer and the serverless trigger.
 */
import type { Storage } from '../storage/port.js';
import { type ClusteringPlan, readClusteringPlan } from './clustering-plan.js';
import type { CommitMetadata } from './commit-metadata.js';
import { compareInstantTimes, type Instant } from './instant.js';
import { readCommitMetadata, type Timeline } from './timeline.js';

/** A completed clustering: its replacecommit and what it recorded. */
export interface CompletedClustering {
  readonly instant: Instant;
  readonly metadata: CommitMetadata;
}

/** Completed replacecommits whose operationType is CLUSTER, newest first, read one at a time as the caller goes. */
export async function* completedClusterings(storage: Storage, timeline: Timeline): AsyncGenerator<CompletedClustering> {
  const replaces = timeline.completedWrites().filter((instant) => instant.action === 'replacecommit');
  for (const instant of replaces.reverse()) {
    const metadata = await readCommitMetadata(storage, instant, timeline.layout);
    if (metadata.operationType === 'CLUSTER') yield { instant, metadata };
  }
}

/** HoodieActiveTimeline.getLastClusterCommit: the newest completed clustering, if any. */
export async function lastCompletedClustering(storage: Storage, timeline: Timeline): Promise<CompletedClustering | undefined> {
  for await (const clustering of completedClusterings(storage, timeline)) return clustering;
  return undefined;
}

/**
 * HoodieActiveTimeline.getLastClusterCommit + findInstantsAfter: completed commits (commit, deltacommit,
 * replacecommit) after the newest completed clustering (all of them when none).
 */
export async function commitsSinceLastClustering(storage: Storage, timeline: Timeline): Promise<{ count: number; lastClustering: string | undefined }> {
  const writes = timeline.completedWrites();
  const lastClustering = (await lastCompletedClustering(storage, timeline))?.instant.time;
  const count = lastClustering === undefined ? writes.length : writes.filter((instant) => compareInstantTimes(instant.time, lastClustering) > 0).length;
  return { count, lastClustering };
}

/** A pending (requested or inflight) clustering and its plan. */
export interface PendingClustering {
  readonly instant: Instant;
  readonly plan: ClusteringPlan;
}

/** Every pending clustering on the timeline, oldest first (the first is getFirstPendingClusterInstant's). */
export async function pendingClusteringPlans(storage: Storage, timeline: Timeline): Promise<PendingClustering[]> {
  const out: PendingClustering[] = [];
  // Layout 2 names a pending clustering `clustering`; a pending replacecommit there is an insert overwrite.
  for (const instant of timeline.pending().filter((candidate) => candidate.action === timeline.layout.clusteringAction)) {
    const plan = await readClusteringPlan(storage, instant.time, timeline.layout);
    if (plan !== undefined) out.push({ instant, plan });
  }
  return out;
}

/** The Avro schema text the latest completed write recorded (extraMetadata.schema), as TableSchemaResolver looks first. */
export async function latestCommitSchema(storage: Storage, timeline: Timeline): Promise<string | undefined> {
  const writes = timeline.completedWrites();
  for (let i = writes.length - 1; i >= 0; i--) {
    const schema = (await readCommitMetadata(storage, writes[i]!, timeline.layout)).extraMetadata['schema'];
    if (schema) return schema;
  }
  return undefined;
}
