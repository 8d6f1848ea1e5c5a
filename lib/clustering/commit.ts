/**
 * Completing a clustering (Hudi's completeClustering): check every group's stored result against the plan; under the
 * lock, check the input file groups are unchanged, remove files an earlier attempt left, write `<instant>.replacecommit`
 * (the commit point, with the run's summary), then drop group results, markers and heartbeat and store the HTML report
 * (report-html.ts). A retried commit finds the instant completed and returns what it recorded. With Hudi's metadata
 * table, the same-instant deltacommit completes just before, under the same lock (Hudi's writeTableMetadata): `files`
 * lists the new files (replaced groups stay until a clean), column_stats and bloom_filters index them, and the record
 * index moves the replaced groups' records to their new file groups.
 */

import { ConflictError, errorMessage, HudiError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { assertMetadataTableKeepable, keepMetadataTable, type MetadataTableOutcome, type RecordIndexChanges } from '../metadata/index.js';
import { mapWithConcurrency } from '../storage/concurrency.js';
import type { Storage } from '../storage/port.js';
import { joinPartitionPath, parseBaseFileName } from '../table/file-system-view.js';
import { type HudiTable, withTableLock } from '../table/table.js';
import type { ClusteringPlan } from '../timeline/clustering-plan.js';
import type { CommitMetadata, WriteStat } from '../timeline/commit-metadata.js';
import { fileGroupKey } from '../timeline/file-group-key.js';
import { heartbeatPath } from '../timeline/heartbeat.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { listMarkers } from '../timeline/markers.js';
import { instantPath } from '../timeline/timeline.js';
import { transitionToCompleted } from '../timeline/transitions.js';
import { clusteringWorkDir, deleteInstantScratch } from '../timeline/work-folder.js';
import { fileNameOf } from '../util/paths.js';
import {
  assertPlanLayoutSupported,
  clusteringSummaryOf,
  completedClusteringInstant,
  findClusteringInstant,
  type GroupResult,
  groupPartition,
  groupRecordKeysPath,
  loadClusteringInstant,
  pendingClusteringPath,
  readCompletedClustering,
  readGroupRecordKeys,
  readGroupResults,
  sliceStoragePath,
  summaryMetadata,
} from './instant.js';
import { sliceHasBaseFile } from './merge-slices.js';
import { buildClusteringReport, type ClusteringReport, type ClusteringSummary, summarizeClusteringReport } from './report.js';
import { clusteringReportPath, renderClusteringReportHtml } from './report-html.js';
import { planSortColumns } from './sort-columns.js';

export interface CommitOptions {
  readonly lock: LockProvider;
  readonly lockWaitMs?: number;
  /** The run's Hudi properties: hoodie.metadata.* (as a Hudi writer's), the column-stats column list, the bloom type. */
  readonly properties?: ReadonlyMap<string, string>;
  /** Fault injection for tests: called after each storage write of the metadata table's deltacommit. */
  readonly afterMetadataTableWrite?: (what: string) => Promise<void>;
}

export interface CommitResult {
  readonly instantTime: string;
  /** 'already-committed' when an earlier call completed the instant (a retried commit step). */
  readonly outcome: 'committed' | 'already-committed';
  readonly metadata: CommitMetadata;
  /** The run's full report, built from the stored group results; undefined when an earlier call committed. */
  readonly report: ClusteringReport | undefined;
  /** What the replacecommit records of the report: this call's, or the earlier call's; undefined when it has none (Hudi's). */
  readonly summary: ClusteringSummary | undefined;
  /** Files of this instant that markers name but no group result does (an earlier attempt's), deleted before committing. */
  readonly removedFiles: readonly string[];
  /** The metadata table's deltacommit for the instant (none when the table has no metadata table or an earlier call committed). */
  readonly metadataTable: MetadataTableOutcome | undefined;
  /**
   * The run's HTML report (report-html.ts), written after the commit: its path in the table, or why it could not be
   * written (the commit stands either way). Undefined when an earlier call committed.
   */
  readonly htmlReport?: { readonly path: string } | { readonly error: string };
}

const HEAD_CONCURRENCY = 16;

/**
 * Complete clustering `instantTime` from its groups' stored results (so a Step Functions state never carries
 * them). Refuses, leaving the plan pending, when a group has no result, read and wrote different row counts, or an
 * input file group changed since the plan.
 */
export async function commit(table: HudiTable, instantTime: string, options: CommitOptions): Promise<CommitResult> {
  const { storage, layout } = table;
  const { instant, plan } = await loadClusteringInstant(table, instantTime);
  if (instant.state === 'COMPLETED') return alreadyCommitted(storage, layout, instantTime);
  const properties = options.properties ?? new Map<string, string>();
  await assertPlanLayoutSupported(table, plan, properties);
  await assertMetadataTableKeepable(storage, 'a clustering', properties, table.config, 'cluster');
  if (instant.state === 'REQUESTED') {
    throw new HudiError(`clustering ${instantTime} has not started: no group has run`, {
      location: storage.uriOf(instantPath(instant, layout)),
      fix: `execute its ${plan.inputGroups.length} group(s) first (cluster --mode execute --instant ${instantTime})`,
    });
  }

  const results = await readGroupResults(storage, instantTime, plan.inputGroups.length);
  const missing = results.flatMap((result, index) => (result === undefined ? [index] : []));
  if (missing.length > 0) {
    throw new HudiError(
      `clustering ${instantTime} cannot complete: group${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${plan.inputGroups.length} ha${missing.length > 1 ? 've' : 's'} no result`,
      {
        location: storage.uriOf(clusteringWorkDir(instantTime)),
        fix:
          `the plan stays pending: re-run the missing group(s) (cluster --mode execute --instant ${instantTime} runs only groups without a result), then commit; ` +
          'or roll the attempt back with rollbackInflightClustering, which keeps the plan',
      },
    );
  }
  const complete = results as GroupResult[];
  complete.forEach((result, index) => {
    checkGroupResult(plan, instantTime, index, result);
  });

  const writeStats = complete.flatMap((result) => result.writeStats);
  const reportInput = {
    instantTime,
    layout: complete[0]?.order ?? 'input',
    sortColumns: planSortColumns(plan),
    groups: complete.map((result) => result.report),
  };
  const report = buildClusteringReport(reportInput);
  const summary = summarizeClusteringReport(report);
  const metadataTable = keepMetadataTable(storage, properties, 'cluster');

  const result: CommitResult = await withTableLock(
    table,
    options.lock,
    async (current, lease) => {
      const now = findClusteringInstant(current.timeline, instantTime);
      if (now?.state === 'COMPLETED') return alreadyCommitted(storage, layout, instantTime);
      if (now === undefined) {
        throw new ConflictError(`clustering ${instantTime} left the timeline while committing (rolled back?)`, {
          location: storage.uriOf(instantPath(instant, layout)),
          fix: 'schedule a new clustering',
        });
      }
      await assertInputsUnchanged(current, instantTime, plan);
      await assertOutputsDurable(storage, instantTime, writeStats);
      const removedFiles = await removeUnreferencedFiles(storage, instantTime, writeStats);

      const schema = await current.schema();
      const metadata: CommitMetadata = {
        partitionToWriteStats: groupByPartition(writeStats),
        compacted: false,
        extraMetadata: { ...(schema === undefined ? {} : { schema: schema.text }), ...summaryMetadata(summary) },
        operationType: 'CLUSTER',
        partitionToReplaceFileIds: replacedFileIds(plan),
      };
      // hoodie.properties as stored now: a Spark writer may have started building a partition since the run began.
      await metadataTable.prepare('a clustering');
      await lease.assertHeld();
      // The metadata table's deltacommit for this instant completes first; readers apply it once the replacecommit exists.
      await metadataTable.commit(instantTime, metadata, {
        lease,
        recordIndex: () => recordIndexChanges(storage, instantTime, complete),
        ...(options.afterMetadataTableWrite === undefined ? {} : { afterStorageWrite: options.afterMetadataTableWrite }),
      });
      await lease.assertHeld();
      try {
        // Layout 2: the Avro HoodieReplaceCommitMetadata, named T_<completion>.replacecommit; the pending
        // T.clustering.requested/.inflight stay beside it, as Hudi 1.x's transitionClusterInflightToComplete leaves them.
        await transitionToCompleted(storage, layout, instantTime, 'replacecommit', layout.encodeCommitMetadata(metadata, 'replacecommit'));
      } catch (error) {
        // The PUT may have landed although its answer did not (a timeout): only this holder of the lock completes T.
        const completed = await completedClusteringInstant(storage, layout, instantTime).catch(() => undefined);
        if (completed === undefined) throw error;
      }
      // Committed: what follows is clean-up a retried commit repeats (alreadyCommitted), so it cannot fail the run.
      await deleteInstantScratch(storage, instantTime).catch(() => undefined);
      await storage.delete([heartbeatPath(instantTime)]).catch(() => undefined);
      return { instantTime, outcome: 'committed' as const, metadata, report, summary, removedFiles, metadataTable: metadataTable.outcome() };
    },
    { waitMs: options.lockWaitMs },
  );
  if (result.outcome !== 'committed') return result;
  // Outside the lock and after the commit point: a report that cannot be written must not undo or fail the run.
  const path = clusteringReportPath(instantTime);
  try {
    await storage.put(path, renderClusteringReportHtml(reportInput, { tablePath: storage.uri, completedAt: new Date() }, report));
    return { ...result, htmlReport: { path } };
  } catch (error) {
    return { ...result, htmlReport: { error: `${storage.uriOf(path)}: ${errorMessage(error)}` } };
  }
}

async function alreadyCommitted(storage: Storage, layout: TimelineLayout, instantTime: string): Promise<CommitResult> {
  const metadata = await readCompletedClustering(storage, layout, instantTime);
  // An earlier call may have died between its commit and its clean-up.
  await deleteInstantScratch(storage, instantTime);
  return {
    instantTime,
    outcome: 'already-committed',
    metadata,
    report: undefined,
    summary: clusteringSummaryOf(metadata),
    removedFiles: [],
    metadataTable: undefined,
  };
}

/**
 * The record index's changes of a clustering: every record of the replaced groups now lives in an output file group
 * (HoodieBackedTableMetadataWriter sees them as inserts: clustering reads records without a current location), and
 * none is deleted. The keys come from the groups' stored record keys; a group without them ran before the table had
 * a record index, and the record index cannot be kept.
 */
async function recordIndexChanges(storage: Storage, instantTime: string, results: readonly GroupResult[]): Promise<RecordIndexChanges> {
  const updates: { recordKey: string; partitionPath: string; fileId: string }[] = [];
  for (const result of results) {
    const keys = await readGroupRecordKeys(storage, instantTime, result.groupIndex);
    if (keys === undefined) {
      throw new HudiError(
        `clustering ${instantTime} group ${result.groupIndex} ran before the table had the metadata table's record index, and did not keep its record keys`,
        {
          location: storage.uriOf(groupRecordKeysPath(instantTime, result.groupIndex)),
          fix: `roll the attempt back keeping the plan (rollbackInflightClustering / the state machine's rollback), then execute it again`,
        },
      );
    }
    for (const stat of result.writeStats) {
      const fileKeys = keys.files[stat.fileId];
      if (fileKeys === undefined || fileKeys.length !== stat.numWrites) {
        throw new HudiError(`clustering ${instantTime} group ${result.groupIndex}: the stored record keys do not match output ${stat.path}`, {
          location: storage.uriOf(groupRecordKeysPath(instantTime, result.groupIndex)),
          fix: `roll the attempt back keeping the plan, then execute it again`,
        });
      }
      for (const recordKey of fileKeys) updates.push({ recordKey, partitionPath: keys.partitionPath, fileId: stat.fileId });
    }
  }
  return { updates, deletes: [] };
}

/** A group result must match its plan group and have written every row it read. */
function checkGroupResult(plan: ClusteringPlan, instantTime: string, groupIndex: number, result: GroupResult): void {
  const group = plan.inputGroups[groupIndex]!;
  const partitionPath = groupPartition(group, instantTime, groupIndex);
  const fail = (problem: string): never => {
    throw new HudiError(`clustering ${instantTime} group ${groupIndex}: ${problem}`, {
      fix: `the plan stays pending: re-run group ${groupIndex} (its files are overwritten), then commit`,
    });
  };
  if (result.instantTime !== instantTime || result.groupIndex !== groupIndex) fail(`the result given is for ${result.instantTime} group ${result.groupIndex}`);
  if (result.partitionPath !== partitionPath) fail(`the result is for partition "${result.partitionPath}", the plan's group is in "${partitionPath}"`);
  if (result.inputFiles !== group.slices.length) fail(`read ${result.inputFiles} files, the plan names ${group.slices.length}`);
  const written = result.writeStats.reduce((total, stat) => total + stat.numWrites, 0);
  if (written !== result.inputRows) fail(`read ${result.inputRows} rows from the input footers but wrote ${written}`);
  if (result.inputRows > 0 && result.writeStats.length === 0) fail('produced no output file');
  for (const stat of result.writeStats) {
    const fileName = fileNameOf(stat.path ?? '');
    const parsed = parseBaseFileName(fileName);
    if (
      parsed === undefined ||
      parsed.instantTime !== instantTime ||
      parsed.fileId !== stat.fileId ||
      stat.path !== joinPartitionPath(partitionPath, fileName)
    ) {
      fail(`write stat path ${JSON.stringify(stat.path)} is not a base file of this instant in partition "${partitionPath}"`);
    }
  }
}

/**
 * The plan's slices must still be the latest of live file groups: a write that landed in one of them since (a
 * concurrent upsert with updates allowed, or another replacecommit) would be lost by replacing the group. On
 * merge-on-read tables a delta commit adds log files to the slice instead: every log file of the slice now must be
 * one the plan merged.
 */
async function assertInputsUnchanged(table: HudiTable, instantTime: string, plan: ClusteringPlan): Promise<void> {
  const view = await table.fileSystemView();
  const mergeOnRead = table.config.type === 'MERGE_ON_READ';
  const latest = new Map(
    mergeOnRead
      ? view
          .latestMergedSlices()
          .map((slice) => [
            fileGroupKey(slice.partitionPath, slice.fileId),
            { base: slice.baseFile?.path ?? '', logs: slice.logFiles.map((log) => fileNameOf(log.path)) },
          ])
      : view.latestSlices().map((slice) => [fileGroupKey(slice.partitionPath, slice.fileId), { base: slice.baseFile.path, logs: [] as string[] }]),
  );
  for (const group of plan.inputGroups) {
    for (const slice of group.slices) {
      const now = latest.get(fileGroupKey(slice.partitionPath, slice.fileId));
      const planned = sliceHasBaseFile(slice) ? sliceStoragePath(slice) : '';
      const plannedLogs = new Set(slice.deltaFilePaths.map((path) => fileNameOf(path)));
      const newLogs = now?.logs.filter((name) => !plannedLogs.has(name)) ?? [];
      if (now?.base !== planned || newLogs.length > 0) {
        throw new ConflictError(
          `file group ${slice.fileId} in "${slice.partitionPath}" changed since clustering ${instantTime} was planned (` +
            (now === undefined
              ? 'it was replaced or removed'
              : now.base !== planned
                ? `its latest base file is now ${now.base || 'none'}, the plan read ${planned || 'none'}`
                : `log file(s) ${newLogs.join(', ')} were written to it after the plan`) +
            ')',
          {
            location: table.storage.uriOf(pendingClusteringPath(table.layout, instantTime, 'REQUESTED')),
            fix: `roll the clustering back (rollback ${instantTime}) and schedule a new one`,
          },
        );
      }
    }
  }
}

async function assertOutputsDurable(storage: Storage, instantTime: string, stats: readonly WriteStat[]): Promise<void> {
  await mapWithConcurrency(stats, HEAD_CONCURRENCY, async (stat) => {
    const found = await storage.head(stat.path ?? '');
    if (found === undefined || found.size !== stat.fileSizeInBytes) {
      throw new HudiError(
        `output ${found === undefined ? 'is missing' : `has ${found.size} bytes, its write stat says ${stat.fileSizeInBytes}`} (clustering ${instantTime})`,
        { location: storage.uriOf(stat.path ?? ''), fix: 'the plan stays pending: re-run the group that wrote it, then commit' },
      );
    }
  });
}

/** Hudi's reconcileAgainstMarkers: files of this instant named by markers but by no write stat must not become visible. */
async function removeUnreferencedFiles(storage: Storage, instantTime: string, stats: readonly WriteStat[]): Promise<string[]> {
  const referenced = new Set(stats.map((stat) => stat.path));
  const stray = (await listMarkers(storage, instantTime))
    .filter((marker) => parseBaseFileName(marker.fileName)?.instantTime === instantTime)
    .map((marker) => joinPartitionPath(marker.partitionPath, marker.fileName))
    .filter((path) => !referenced.has(path));
  await storage.delete(stray);
  return stray;
}

function groupByPartition(stats: readonly WriteStat[]): Record<string, WriteStat[]> {
  const byPartition: Record<string, WriteStat[]> = {};
  for (const stat of stats) (byPartition[stat.partitionPath ?? ''] ??= []).push(stat);
  return byPartition;
}

/** Every input file group of the plan, per partition (the file groups readers stop seeing from this instant on). */
function replacedFileIds(plan: ClusteringPlan): Record<string, string[]> {
  const byPartition: Record<string, string[]> = {};
  for (const group of plan.inputGroups) {
    for (const slice of group.slices) (byPartition[slice.partitionPath] ??= []).push(slice.fileId);
  }
  return byPartition;
}
