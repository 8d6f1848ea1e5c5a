/**
 * Completing a clean: its HoodieCleanMetadata (CleanerUtils.convertCleanMetadata) from the plan and the executors'
 * stats, written as `T.clean` under the lock, last. On a table with Hudi's metadata table, the clean's deltacommit
 * (same instant time: the cleaned files deleted from `files`, tombstones in column_stats and bloom_filters)
 * completes just before, under the same lock, where Hudi's CleanActionExecutor calls writeTableMetadata.
 */
import { ConflictError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { type LockLease, withLock } from '../lock/port.js';
import { keepMetadataTable, type MetadataTableOutcome } from '../metadata/index.js';
import type { Storage } from '../storage/port.js';
import { readTableConfig } from '../table/config.js';
import { encodeTimelineAvro, type HoodieCleanMetadata } from '../timeline/avro-files.js';
import type { TimelineLayout } from '../timeline/layout.js';
import { latestCommitSchema } from '../timeline/queries.js';
import { instantPath, loadTimeline } from '../timeline/timeline.js';
import { transitionToCompleted } from '../timeline/transitions.js';

export interface CompleteCleanOptions {
  readonly lock: LockProvider;
  readonly lockWaitMs?: number;
  /** The run's Hudi properties: hoodie.metadata.* (as a Hudi writer's) and the column-stats column list. */
  readonly properties?: ReadonlyMap<string, string>;
  /**
   * Runs under the lock just before `T.clean` is written, where Hudi's CleanActionExecutor writes the metadata
   * table (writeTableMetadata), after the metadata table's deltacommit for the clean completed.
   */
  readonly beforeComplete?: (metadata: HoodieCleanMetadata, instantTime: string, lease: LockLease) => Promise<void>;
  /** Fault injection for tests: called after each storage write of the metadata table's deltacommit. */
  readonly afterMetadataTableWrite?: (what: string) => Promise<void>;
}

/**
 * Write `T.clean` (the commit point of the clean), under the lock, only while `T.clean.inflight` is there: a clean
 * another runner completed first is a ConflictError naming it.
 */
export async function completeClean(
  storage: Storage,
  layout: TimelineLayout,
  instantTime: string,
  metadata: HoodieCleanMetadata,
  options: CompleteCleanOptions,
): Promise<MetadataTableOutcome> {
  const metadataTable = keepMetadataTable(storage, options.properties ?? new Map(), 'clean');
  await withLock(
    options.lock,
    async (lease) => {
      await metadataTable.prepare('a clean');
      const current = (await loadTimeline(storage, layout)).instants.find((i) => i.time === instantTime && i.action === 'clean');
      if (current?.state === 'COMPLETED') {
        throw new ConflictError(`clean ${instantTime} is already complete: another runner finished it`, {
          location: storage.uriOf(instantPath(current, layout)),
        });
      }
      const inflight = instantPath({ time: instantTime, action: 'clean', state: 'INFLIGHT' }, layout);
      if (current?.state !== 'INFLIGHT') {
        throw new ConflictError(`clean ${instantTime} is no longer inflight (its .clean.inflight is gone)`, {
          location: storage.uriOf(inflight),
          fix: 'another process removed it (an archiver or a restore); look at the timeline before cleaning again',
        });
      }
      await lease.assertHeld();
      // The clean's deltacommit completes first; readers apply it once T.clean exists.
      await metadataTable.commitClean(instantTime, metadata, {
        lease,
        tableSchema: () => tableSchemaText(storage, layout),
        ...(options.afterMetadataTableWrite === undefined ? {} : { afterStorageWrite: options.afterMetadataTableWrite }),
      });
      if (options.beforeComplete !== undefined) await options.beforeComplete(metadata, instantTime, lease);
      await lease.assertHeld();
      await transitionToCompleted(storage, layout, instantTime, 'clean', encodeTimelineAvro('cleanMetadata', metadata));
    },
    options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs },
  );
  return metadataTable.outcome();
}

/** The table's schema as TableSchemaResolver finds it: the latest completed write's, else the create schema. */
async function tableSchemaText(storage: Storage, layout: TimelineLayout): Promise<string | undefined> {
  const fromCommit = await latestCommitSchema(storage, await loadTimeline(storage, layout));
  return fromCommit ?? ((await readTableConfig(storage)).createSchema || undefined);
}
