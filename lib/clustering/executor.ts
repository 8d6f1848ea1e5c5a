/**
 * Which execute-group function runs a planned group. Binary copy (lib/parquet/binary-copy.ts) streams row groups
 * through small buffers and waits on its S3 transfers more than on CPU, so the groups it is expected to do run in a
 * smaller function (the template's ExecuteCopyGroupFunction): about as fast, for fewer GB-seconds.
 * Every other group runs in ExecuteGroupFunction. The choice is a prediction from the plan alone; execute-group
 * still decides from the footers, and a group that falls back to a rewrite there completes in the smaller function
 * too (a rewrite without sort columns streams, and DuckDB spills past its limit).
 */
import type { ClusteringPlan, ClusteringPlanGroup } from '../timeline/clustering-plan.js';
import type { ClusteringConfig } from './config.js';
import { sliceHasBaseFile, sliceHasLogs } from './merge-slices.js';
import { planSortColumns } from './sort-columns.js';

/** `copy`: ExecuteCopyGroupFunction; `rewrite`: ExecuteGroupFunction. */
export type GroupExecutor = 'copy' | 'rewrite';

/** The function each executor names (the state machine's Choice in both Maps makes the same mapping). */
export const EXECUTOR_FUNCTION = { copy: 'execute-copy-group', rewrite: 'execute-group' } as const satisfies Record<GroupExecutor, string>;

/** What decides, before any footer is read, that a group cannot be a binary copy. */
export interface BinaryCopyFacts {
  readonly config: Pick<ClusteringConfig, 'binaryCopyEnabled' | 'binaryCopyMinRowGroupBytes'>;
  /** Slices whose log files are merged into the rewrite (or that have no base file). */
  readonly slicesWithLogs: number;
  readonly sortColumns: readonly string[];
  readonly populateMetaFields: boolean;
  readonly preserveHoodieMetadata: boolean;
  /** The input files' average size; undefined when not known. */
  readonly averageFileBytes: number | undefined;
}

/** Why the group is rewritten rather than copied, judged without its footers; undefined when binary copy may do it. */
export function binaryCopyRefusal(facts: BinaryCopyFacts): string | undefined {
  const { config } = facts;
  if (!config.binaryCopyEnabled) return 'binary copy is off (hoodie.clustering.plan.strategy.binary.copy.enable=false)';
  if (facts.slicesWithLogs > 0) return `${facts.slicesWithLogs} slice(s) have log files, whose records are merged into the rewrite`;
  if (facts.sortColumns.length > 0) return `the rows are sorted by ${facts.sortColumns.join(', ')}`;
  if (facts.populateMetaFields && !facts.preserveHoodieMetadata) {
    return "the plan does not preserve the records' metadata (hoodie.clustering.preserve.commit.metadata=false), so _hoodie_commit_time and _hoodie_commit_seqno are rewritten";
  }
  // Every file holds at least one row group: small files mean small row groups, without reading a footer.
  if (facts.averageFileBytes === undefined) return "the input files' sizes are not known";
  if (facts.averageFileBytes < config.binaryCopyMinRowGroupBytes) {
    return (
      `the input files average ${(facts.averageFileBytes / 1024).toFixed(1)} KiB, so their row groups are smaller than ` +
      `hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes=${config.binaryCopyMinRowGroupBytes}: a rewrite makes large row groups`
    );
  }
  return undefined;
}

const MIB = 1024 * 1024;

/**
 * The function for a group of `plan`, from the plan alone: its sort columns, its slices' log files and the group's
 * TOTAL_IO_READ_MB (whole megabytes, rounded down, so a borderline group goes to the larger function).
 */
export function groupExecutor(plan: ClusteringPlan, group: ClusteringPlanGroup, config: ClusteringConfig, populateMetaFields: boolean): GroupExecutor {
  const readMb = group.metrics['TOTAL_IO_READ_MB'];
  const refusal = binaryCopyRefusal({
    config,
    slicesWithLogs: group.slices.filter((slice) => sliceHasLogs(slice) || !sliceHasBaseFile(slice)).length,
    sortColumns: planSortColumns(plan),
    populateMetaFields,
    preserveHoodieMetadata: plan.preserveHoodieMetadata,
    averageFileBytes: readMb === undefined || !Number.isFinite(readMb) || group.slices.length === 0 ? undefined : (readMb * MIB) / group.slices.length,
  });
  return executorOf(refusal);
}

/** `copy` when nothing refuses binary copy before the footers are read. */
export function executorOf(refusal: string | undefined): GroupExecutor {
  return refusal === undefined ? 'copy' : 'rewrite';
}
