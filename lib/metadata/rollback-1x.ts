/**
 * Rolling back a 1.x metadata table's deltacommit with the data instant it mirrors, as Hudi 1.0.2 / 1.1.1's
 * update(HoodieRollbackMetadata) does through the metadata table's write client (rollback(T, R)): a rollback instant
 * R (the data rollback's time) in the metadata table's timeline, planned by listing (ListingBasedRollbackStrategy:
 * the metadata writer turns markers off) — one request per file named by T, its path without the scheme — then the
 * completed deltacommit un-published (revertToInflight), the files deleted, T's inflight and requested files deleted,
 * and `R_<completion>.rollback` (HoodieRollbackMetadata) written. A rollback a crash interrupted is finished from
 * its plan. Which deltacommits each release rolls back: MetadataTable1x.rollbackTarget.
 */
import type { LockLease } from '../lock/port.js';
import { parseLogFileName } from '../log-format/index.js';
import type { Storage } from '../storage/port.js';
import {
  decodeTimelineAvro,
  encodeTimelineAvro,
  type HoodieRollbackMetadata,
  type HoodieRollbackPartitionMetadata,
  type HoodieRollbackPlan,
  type HoodieRollbackRequest,
} from '../timeline/avro-files.js';
import type { Instant } from '../timeline/instant.js';
import { timelineLayout2 } from '../timeline/layout.js';
import { instantPath, type Timeline } from '../timeline/timeline.js';
import { createRequested, transitionToCompleted, transitionToInflight } from '../timeline/transitions.js';
import { fileNameOf } from '../util/paths.js';
import { METADATA_1X_TIMELINE_FOLDER } from './reader-1x.js';
import { METADATA_TABLE_FOLDER } from './timeline.js';

/** LATEST_ROLLBACK_PLAN_VERSION and the rollback metadata's version in both releases. */
const ROLLBACK_VERSION = 1;

/** The 1.x metadata table as a rollback needs it (MetadataTable1x). */
export interface Metadata1xRollbackSubject {
  readonly storage: Storage;
  /** The metadata table's timeline as loaded before the rollback. */
  readonly timeline: Timeline;
  readonly partitions: readonly string[];
  readonly inflightPartitions: readonly string[];
  /** The deltacommit Hudi rolls back with data instant `instantTime`, if any. */
  rollbackTarget(instantTime: string): Instant | undefined;
}

export interface Metadata1xRollbackResult {
  /** The metadata table's rollback instant (the data rollback's time). */
  readonly rollbackTime: string;
  /** The deltacommit rolled back. */
  readonly instantTime: string;
  /** Files deleted, relative to the metadata table's base path. */
  readonly deletedFiles: readonly string[];
}

/**
 * Roll back the metadata table's deltacommit at `instantTime` at `rollbackTime`, or finish such a rollback a crash
 * interrupted. Undefined when there is nothing to roll back (MetadataTable1x.rollbackTarget says what Hudi would).
 */
export async function rollbackMetadataDeltaCommit1x(
  table: Metadata1xRollbackSubject,
  instantTime: string,
  rollbackTime: string,
  lease?: LockLease,
): Promise<Metadata1xRollbackResult | undefined> {
  const { storage, timeline } = table;
  const layout = timelineLayout2(METADATA_1X_TIMELINE_FOLDER, 'UTC');
  const startedMs = Date.now();
  const pending = timeline.instants.find((i) => i.time === rollbackTime && i.action === 'rollback' && i.state !== 'COMPLETED');
  let plan: HoodieRollbackPlan;
  if (pending !== undefined) {
    const path = instantPath({ ...pending, state: 'REQUESTED' }, layout);
    plan = decodeTimelineAvro('rollbackPlan', await storage.get(path), storage.uriOf(path));
    if (plan.instantToRollback?.commitTime !== instantTime) return undefined;
    if (pending.state === 'REQUESTED') await transitionToInflight(storage, layout, rollbackTime, 'rollback');
  } else {
    const target = table.rollbackTarget(instantTime);
    if (target === undefined) return undefined;
    plan = {
      instantToRollback: { commitTime: instantTime, action: 'deltacommit' },
      RollbackRequests: target.state === 'REQUESTED' ? [] : await listingRequests(table, instantTime),
      version: ROLLBACK_VERSION,
    };
    await createRequested(storage, layout, rollbackTime, 'rollback', encodeTimelineAvro('rollbackPlan', plan));
    await transitionToInflight(storage, layout, rollbackTime, 'rollback');
  }

  // revertToInflight: a completed deltacommit is un-published before its files go.
  const instant = (state: Instant['state']): Instant => ({ time: instantTime, action: 'deltacommit', state });
  const completed = timeline.instants.find((i) => i.time === instantTime && i.action === 'deltacommit' && i.state === 'COMPLETED');
  if (completed !== undefined) {
    if ((await storage.head(instantPath(instant('INFLIGHT'), layout))) === undefined) {
      await transitionToInflight(storage, layout, instantTime, 'deltacommit');
    }
    await storage.delete([instantPath(completed, layout)]);
  }
  const deleted: { partition: string; planPath: string; relative: string }[] = [];
  for (const request of plan.RollbackRequests ?? []) {
    for (const planPath of request.filesToBeDeleted) {
      deleted.push({ partition: request.partitionPath, planPath, relative: `${request.partitionPath}/${fileNameOf(planPath)}` });
    }
  }
  // Missing files count as deleted (RollbackHelper.deleteFiles): a resumed rollback finds what the first removed.
  await storage.delete(deleted.map((file) => `${METADATA_TABLE_FOLDER}/${file.relative}`));
  await storage.delete([instantPath(instant('INFLIGHT'), layout)]);
  await storage.delete([instantPath(instant('REQUESTED'), layout)]);

  const partitionMetadata: Record<string, HoodieRollbackPartitionMetadata> = {};
  for (const file of deleted) {
    (partitionMetadata[file.partition] ??= {
      partitionPath: file.partition,
      successDeleteFiles: [],
      failedDeleteFiles: [],
      rollbackLogFiles: {},
      logFilesFromFailedCommit: {},
    }).successDeleteFiles.push(file.planPath);
  }
  const metadata: HoodieRollbackMetadata = {
    startRollbackTime: rollbackTime,
    timeTakenInMillis: Date.now() - startedMs,
    totalFilesDeleted: deleted.length,
    commitsRollback: [instantTime],
    partitionMetadata,
    version: ROLLBACK_VERSION,
    instantsRollback: [{ commitTime: instantTime, action: 'deltacommit' }],
  };
  await lease?.assertHeld();
  await transitionToCompleted(storage, layout, rollbackTime, 'rollback', encodeTimelineAvro('rollbackMetadata', metadata));
  return { rollbackTime, instantTime, deletedFiles: deleted.map((file) => file.relative) };
}

/**
 * ListingBasedRollbackStrategy on the metadata table (merge-on-read, table version 8/9): per partition, one request
 * per base or log file named by the instant (a 1.x log file carries the deltacommit that wrote it), its absolute
 * path with the scheme stripped (formatDeletePath).
 */
async function listingRequests(table: Metadata1xRollbackSubject, instantTime: string): Promise<HoodieRollbackRequest[]> {
  const { storage } = table;
  const requests: HoodieRollbackRequest[] = [];
  for (const partition of [...new Set([...table.partitions, ...table.inflightPartitions])].sort()) {
    const names = (await storage.listDir(`${METADATA_TABLE_FOLDER}/${partition}`)).files.map((file) => fileNameOf(file.path)).sort();
    for (const name of names) {
      const named = parseLogFileName(name)?.baseInstant === instantTime || name.endsWith(`_${instantTime}.hfile`);
      if (!named) continue;
      const uri = storage.uriOf(`${METADATA_TABLE_FOLDER}/${partition}/${name}`);
      requests.push({
        partitionPath: partition,
        fileId: '',
        latestBaseInstant: '',
        filesToBeDeleted: [uri.replace(/^[a-z][a-z0-9+.-]*:/i, '')],
        logBlocksToBeDeleted: {},
      });
    }
  }
  return requests;
}
