/**
 * The clustering plan: the one type every step uses, and its one encoding — the Avro HoodieRequestedReplaceMetadata
 * (operationType CLUSTER) holding a HoodieClusteringPlan, as Hudi writes it into `<instant>.replacecommit.requested`.
 *
 * The type is Hudi's record with its nulls resolved (Hudi's defaults filled in), field for field, so a plan read from
 * a Hudi-written file and encoded again keeps every value. Only a group's extraMetadata stays nullable: Hudi writes
 * null there, and the plans we write must too.
 *
 * Here, not in lib/clustering/: the file-system view (pending file groups), the writer (updates to them) and rollback
 * read plans too, as Hudi's ClusteringUtils serves them from hudi-common.
 */

import type { Storage } from '../storage/port.js';
import { decodeRequestedReplaceMetadata, encodeRequestedReplaceMetadata } from './avro-files.js';
import type { HoodieClusteringPlan, HoodieRequestedReplaceMetadata } from './avro-schemas.js';
import { fileGroupKey } from './file-group-key.js';
import type { TimelineLayout } from './layout.js';
import { instantPath } from './timeline.js';

/** ClusteringPlanStrategy.CLUSTERING_PLAN_VERSION_1; slices, groups and strategies are version 1 as well. */
export const CLUSTERING_PLAN_VERSION = 1;

/** HoodieSliceInfo: one file slice to rewrite (copy-on-write: a base file, no log files). */
export interface ClusteringPlanSlice {
  /** The base file's full URI where the table was when planned (`s3a://…`, `file:/…`). */
  readonly dataFilePath: string;
  readonly deltaFilePaths: readonly string[];
  readonly fileId: string;
  readonly partitionPath: string;
  readonly bootstrapFilePath: string;
  readonly version: number;
}

/** HoodieClusteringGroup: the slices one executor rewrites into numOutputFileGroups new file groups. */
export interface ClusteringPlanGroup {
  readonly slices: readonly ClusteringPlanSlice[];
  /** FileSliceMetricUtils' figures (TOTAL_IO_READ_MB, …). */
  readonly metrics: Readonly<Record<string, number>>;
  readonly numOutputFileGroups: number;
  /** null as Hudi writes it. */
  readonly extraMetadata: Readonly<Record<string, string>> | null;
  readonly version: number;
}

/** HoodieClusteringStrategy: the executor class and its params (the sort columns). */
export interface ClusteringPlanStrategy {
  readonly strategyClassName: string;
  readonly strategyParams: Readonly<Record<string, string>>;
  readonly version: number;
}

/** HoodieClusteringPlan. */
export interface ClusteringPlan {
  readonly inputGroups: readonly ClusteringPlanGroup[];
  readonly strategy: ClusteringPlanStrategy;
  readonly extraMetadata: Readonly<Record<string, string>>;
  readonly version: number;
  readonly preserveHoodieMetadata: boolean;
  /**
   * Hudi 1.x: the partitions this plan left for the next one (incremental table services, on by default in 1.x,
   * write a list, empty when nothing was left); absent from 0.x plans and from 1.x plans that wrote null.
   */
  readonly missingSchedulePartitions?: readonly string[];
}

/**
 * The plan as the requested clustering file's bytes (Avro object container, as Hudi writes it): 0.x's schema in
 * layout 1 (`T.replacecommit.requested`), 1.x's in layout 2 (`T.clustering.requested`).
 */
export function encodeClusteringPlan(plan: ClusteringPlan, layout: Pick<TimelineLayout, 'version'>): Uint8Array {
  const clusteringPlan: HoodieClusteringPlan = {
    inputGroups: plan.inputGroups.map((group) => ({
      slices: group.slices.map((slice) => ({
        dataFilePath: slice.dataFilePath,
        deltaFilePaths: [...slice.deltaFilePaths],
        fileId: slice.fileId,
        partitionPath: slice.partitionPath,
        bootstrapFilePath: slice.bootstrapFilePath,
        version: slice.version,
      })),
      metrics: { ...group.metrics },
      numOutputFileGroups: group.numOutputFileGroups,
      extraMetadata: group.extraMetadata === null ? null : { ...group.extraMetadata },
      version: group.version,
    })),
    strategy: { strategyClassName: plan.strategy.strategyClassName, strategyParams: { ...plan.strategy.strategyParams }, version: plan.strategy.version },
    extraMetadata: { ...plan.extraMetadata },
    version: plan.version,
    preserveHoodieMetadata: plan.preserveHoodieMetadata,
    ...(layout.version === 2 ? { missingSchedulePartitions: plan.missingSchedulePartitions === undefined ? null : [...plan.missingSchedulePartitions] } : {}),
  };
  const requested: HoodieRequestedReplaceMetadata = { operationType: 'CLUSTER', clusteringPlan, extraMetadata: {}, version: CLUSTERING_PLAN_VERSION };
  return encodeRequestedReplaceMetadata(requested, layout.version);
}

/**
 * The plan in `<instant>.replacecommit.requested` bytes; undefined when the replacecommit is not a clustering
 * (insert_overwrite writes an all-null record, or a 0-byte file).
 */
export function decodeClusteringPlan(bytes: Uint8Array, location: string): ClusteringPlan | undefined {
  const requested = decodeRequestedReplaceMetadata(bytes, location);
  if (requested.operationType !== 'CLUSTER' || requested.clusteringPlan === null) return undefined;
  const plan = requested.clusteringPlan;
  return {
    inputGroups: (plan.inputGroups ?? []).map((group) => ({
      slices: (group.slices ?? []).map((slice) => ({
        dataFilePath: slice.dataFilePath ?? '',
        deltaFilePaths: slice.deltaFilePaths ?? [],
        fileId: slice.fileId ?? '',
        partitionPath: slice.partitionPath ?? '',
        bootstrapFilePath: slice.bootstrapFilePath ?? '',
        version: slice.version ?? CLUSTERING_PLAN_VERSION,
      })),
      metrics: group.metrics ?? {},
      numOutputFileGroups: group.numOutputFileGroups ?? 1,
      extraMetadata: group.extraMetadata,
      version: group.version ?? CLUSTERING_PLAN_VERSION,
    })),
    strategy: {
      strategyClassName: plan.strategy?.strategyClassName ?? '',
      strategyParams: plan.strategy?.strategyParams ?? {},
      version: plan.strategy?.version ?? CLUSTERING_PLAN_VERSION,
    },
    extraMetadata: plan.extraMetadata ?? {},
    version: plan.version ?? CLUSTERING_PLAN_VERSION,
    preserveHoodieMetadata: plan.preserveHoodieMetadata ?? true,
    ...(plan.missingSchedulePartitions === null || plan.missingSchedulePartitions === undefined
      ? {}
      : { missingSchedulePartitions: plan.missingSchedulePartitions }),
  };
}

/** The clustering plan of replacecommit `instantTime`, or undefined when it is not a clustering (e.g. insert_overwrite). */
export async function readClusteringPlan(storage: Storage, instantTime: string, layout: TimelineLayout): Promise<ClusteringPlan | undefined> {
  const path = instantPath({ time: instantTime, action: layout.clusteringAction, state: 'REQUESTED' }, layout);
  return decodeClusteringPlan(await storage.get(path), storage.uriOf(path));
}

/** The file groups a plan rewrites, as fs-view's fileGroupKey(partition, fileId). */
export function planFileGroups(plan: ClusteringPlan): Set<string> {
  const keys = new Set<string>();
  for (const group of plan.inputGroups) for (const slice of group.slices) keys.add(fileGroupKey(slice.partitionPath, slice.fileId));
  return keys;
}
