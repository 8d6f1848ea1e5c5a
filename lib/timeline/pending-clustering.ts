/**
 * Clustering plans on the timeline: `T.replacecommit.requested` files whose operationType is CLUSTER.
 */
import type { Storage } from '../storage/port.js';
import { decodeTimelineAvro } from './avro-files.js';
import type { HoodieClusteringPlan, HoodieRequestedReplaceMetadata } from './avro-schemas.js';
import type { Instant } from './instant.js';
import { instantPath, type Timeline } from './timeline.js';

export interface ClusteringPlanSlice {
  readonly dataFilePath: string;
  readonly fileId: string;
  readonly partitionPath: string;
}

export interface ClusteringPlanGroup {
  readonly slices: readonly ClusteringPlanSlice[];
  readonly numOutputFileGroups: number;
  readonly metrics: Readonly<Record<string, number>>;
}

/** A clustering plan read from the timeline, nulls resolved. */
export interface StoredClusteringPlan {
  readonly inputGroups: readonly ClusteringPlanGroup[];
  readonly strategyClassName: string;
  readonly strategyParams: Readonly<Record<string, string>>;
  readonly preserveHoodieMetadata: boolean;
  readonly extraMetadata: Readonly<Record<string, string>>;
}

export async function readRequestedReplace(storage: Storage, instantTime: string): Promise<HoodieRequestedReplaceMetadata> {
  const path = instantPath({ time: instantTime, action: 'replacecommit', state: 'REQUESTED' });
  return decodeTimelineAvro('requestedReplace', await storage.get(path), storage.uriOf(path));
}

export function normalizeClusteringPlan(plan: HoodieClusteringPlan): StoredClusteringPlan {
  return {
    inputGroups: (plan.inputGroups ?? []).map((group) => ({
      slices: (group.slices ?? []).map((slice) => ({
        dataFilePath: slice.dataFilePath ?? '',
        fileId: slice.fileId ?? '',
        partitionPath: slice.partitionPath ?? '',
      })),
      numOutputFileGroups: group.numOutputFileGroups ?? 1,
      metrics: group.metrics ?? {},
    })),
    strategyClassName: plan.strategy?.strategyClassName ?? '',
    strategyParams: plan.strategy?.strategyParams ?? {},
    preserveHoodieMetadata: plan.preserveHoodieMetadata ?? true,
    extraMetadata: plan.extraMetadata ?? {},
  };
}

/** The clustering plan of a replacecommit instant, or undefined when it is not a clustering (e.g. insert_overwrite). */
export async function readClusteringPlan(storage: Storage, instantTime: string): Promise<StoredClusteringPlan | undefined> {
  const requested = await readRequestedReplace(storage, instantTime);
  if (requested.operationType !== 'CLUSTER' || requested.clusteringPlan === null) return undefined;
  return normalizeClusteringPlan(requested.clusteringPlan);
}

/** Every pending (requested or inflight) clustering on the timeline, oldest first. */
export async function pendingClusteringPlans(storage: Storage, timeline: Timeline): Promise<{ instant: Instant; plan: StoredClusteringPlan }[]> {
  const pending = timeline.pending().filter((i) => i.action === 'replacecommit');
  const out: { instant: Instant; plan: StoredClusteringPlan }[] = [];
  for (const instant of pending) {
    const plan = await readClusteringPlan(storage, instant.time);
    if (plan !== undefined) out.push({ instant, plan });
  }
  return out;
}
