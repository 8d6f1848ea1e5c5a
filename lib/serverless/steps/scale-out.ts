/**
 * How the state machine fans a clustering out over its groups: an inline Map for ordinary plans, a Distributed Map
 * (items read from an S3 manifest, one child execution per group) for plans with many groups. The compaction state
 * machine fans out over a plan's operations (file slices) the same way (COMPACTION_FAN_OUT): its own threshold key,
 * since an operation is not a clustering group and Hudi names each service's keys under its own prefix, the same
 * default (the same inline-Map and history bounds apply), its manifest in the compaction's work folder, and its own
 * template parameter bounding the execute Lambdas at once.
 *
 * Why a threshold of 40 groups by default: an inline Map runs at most 40 iterations at once whatever MaxConcurrency
 * says, and all of its events land in the parent execution's history (25,000 events at most). A group costs about
 * 7 events when it succeeds first time and up to ~50 with every retry the definition allows (15 attempts of 3 events),
 * so the history bounds an inline Map to a few hundred groups in the worst case, the cleaning Maps' events included.
 * Beyond 40 groups the inline Map can no longer run as many groups at once as hoodie.clustering.max.parallelism may
 * ask, so that is where the Distributed Map starts paying for its child executions.
 */

import { type ConfigKey, defineKey, javaInt, readKey } from '../../config/index.js';
import { HudiError } from '../../errors.js';
import type { Storage } from '../../storage/port.js';
import { clusteringWorkDir, compactionWorkDir } from '../../timeline/work-folder.js';
import type { Environment } from '../aws/settings.js';

export const SERVERLESS_CLUSTERING_KEYS = {
  inlineMapMaxGroups: defineKey({
    key: 'hoodie.serverless.clustering.inline.map.max.groups',
    default: 40,
    parser: javaInt(1),
    description:
      'serverless clustering: a plan with more groups to run than this runs them in a Step Functions Distributed Map (child executions, groups read from an S3 manifest) instead of an inline Map (not a Hudi key)',
  }),
} as const;

export const SERVERLESS_COMPACTION_KEYS = {
  inlineMapMaxOperations: defineKey({
    key: 'hoodie.serverless.compaction.inline.map.max.operations',
    default: 40,
    parser: javaInt(1),
    description:
      'serverless compaction: a plan with more operations (file slices) to run than this runs them in a Step Functions Distributed Map (child executions, operations read from an S3 manifest) instead of an inline Map (not a Hudi key)',
  }),
} as const;

/** The template's ClusteringLambdaConcurrency: execute-group invocations the account can spare at once. */
export const LAMBDA_CONCURRENCY_ENV = 'CLUSTERING_LAMBDA_CONCURRENCY';
/** The template's CompactionLambdaConcurrency: compaction-execute invocations the account can spare at once. */
export const COMPACTION_LAMBDA_CONCURRENCY_ENV = 'COMPACTION_LAMBDA_CONCURRENCY';

/** What one state machine fans out over: its threshold key, its concurrency variable, where its manifest goes. */
export interface FanOut {
  /** What an item is, for messages: groups, operations. */
  readonly items: string;
  readonly inlineMapMaxKey: ConfigKey<number>;
  readonly concurrencyEnv: string;
  readonly concurrencyParameter: string;
  manifestPath(instantTime: string): string;
}

export const CLUSTERING_FAN_OUT: FanOut = {
  items: 'groups',
  inlineMapMaxKey: SERVERLESS_CLUSTERING_KEYS.inlineMapMaxGroups,
  concurrencyEnv: LAMBDA_CONCURRENCY_ENV,
  concurrencyParameter: 'ClusteringLambdaConcurrency',
  manifestPath: (instantTime) => groupManifestPath(instantTime),
};

export const COMPACTION_FAN_OUT: FanOut = {
  items: 'operations',
  inlineMapMaxKey: SERVERLESS_COMPACTION_KEYS.inlineMapMaxOperations,
  concurrencyEnv: COMPACTION_LAMBDA_CONCURRENCY_ENV,
  concurrencyParameter: 'CompactionLambdaConcurrency',
  manifestPath: (instantTime) => `${compactionWorkDir(instantTime)}/operations.json`,
};

export type MapMode = 'INLINE' | 'DISTRIBUTED';

export interface ScaleOutSettings {
  readonly inlineMapMaxGroups: number;
  /** Undefined when the deployment sets no limit. */
  readonly lambdaConcurrency: number | undefined;
}

/** `inlineMapMaxGroups` is the fan-out's threshold (groups for clustering, operations for compaction). */
export function scaleOutSettings(
  props: ReadonlyMap<string, string>,
  env: Environment,
  location = 'clustering properties',
  fanOut: FanOut = CLUSTERING_FAN_OUT,
): ScaleOutSettings {
  const text = env[fanOut.concurrencyEnv]?.trim();
  let lambdaConcurrency: number | undefined;
  if (text !== undefined && text !== '') {
    lambdaConcurrency = Number(text);
    if (!Number.isInteger(lambdaConcurrency) || lambdaConcurrency < 1) {
      throw new HudiError(`${fanOut.concurrencyEnv}=${text} is not a whole number ≥ 1`, {
        location: 'environment',
        fix: `set the ${fanOut.concurrencyParameter} parameter to a whole number ≥ 1`,
      });
    }
  }
  return { inlineMapMaxGroups: readKey(props, fanOut.inlineMapMaxKey, location), lambdaConcurrency };
}

/** Groups running at once: hoodie.clustering.max.parallelism, never more than the account's Lambda share. */
export function mapConcurrency(maxParallelism: number, settings: ScaleOutSettings): number {
  return Math.max(1, Math.min(maxParallelism, settings.lambdaConcurrency ?? Number.POSITIVE_INFINITY));
}

/** Where a Distributed Map reads its items: an S3 object. */
export interface GroupManifest {
  readonly bucket: string;
  readonly key: string;
}

/** `.hoodie/.aux/hudi-serverless/clustering/<instant>/groups.json`: the groups to run, a JSON array of the Map items, `{index, executor}`. */
export function groupManifestPath(instantTime: string): string {
  return `${clusteringWorkDir(instantTime)}/groups.json`;
}

/** The bucket and key of `path` of an S3 table; undefined for a table elsewhere (a Distributed Map reads only S3). */
export function s3Location(storage: Storage, path: string): GroupManifest | undefined {
  const match = /^s3a?:\/\/([^/]+)\/(.+)$/.exec(storage.uriOf(path));
  return match === null ? undefined : { bucket: match[1]!, key: match[2]! };
}

/**
 * Inline or distributed, from the plan: distributed when more groups (operations) are to run than the inline Map should carry and
 * the table is on S3 (where Step Functions can read the manifest). Writes the manifest in that case.
 */
export async function chooseMap(
  storage: Storage,
  instantTime: string,
  groups: readonly { readonly index: number }[],
  settings: ScaleOutSettings,
  fanOut: FanOut = CLUSTERING_FAN_OUT,
): Promise<{ readonly mapMode: MapMode; readonly manifest?: GroupManifest; readonly note?: string }> {
  if (groups.length <= settings.inlineMapMaxGroups) return { mapMode: 'INLINE' };
  const path = fanOut.manifestPath(instantTime);
  const manifest = s3Location(storage, path);
  if (manifest === undefined) {
    return {
      mapMode: 'INLINE',
      note: `${groups.length} ${fanOut.items} exceed ${fanOut.inlineMapMaxKey.key}=${settings.inlineMapMaxGroups}, but a Distributed Map reads its items from S3 only: running them inline`,
    };
  }
  // Written before the plan step returns, so a retried plan step rewrites the same list; the items as the inline Map
  // would carry them (a clustering group's item names its function).
  await storage.put(path, JSON.stringify(groups));
  return { mapMode: 'DISTRIBUTED', manifest };
}
