/**
 * What a commit path (the writer, clustering, a compaction, ingest, a clean) does with the metadata table, in two
 * calls made under the table lock, as Hudi's write client does:
 *
 * 1. `prepare(what)` before the instant is requested: apply the user's hoodie.metadata.* keys (drop the metadata
 *    table or the index partitions they disable, HoodieTable.maybeDeleteMetadataTable), then refuse a metadata
 *    table this build cannot keep correct, so that nothing is written for a commit that could not complete;
 * 2. `commit(instant, metadata, input)` just before the data instant's completed file: the same keys again (a
 *    Spark writer may have turned the metadata table on meanwhile), the metadata table's own services (pending
 *    compactions and cleans finished, a clean and a compaction when due: Hudi's performTableServices), then its
 *    deltacommit for the instant, completed before this returns.
 */
import type { LockLease } from '../lock/port.js';
import type { Storage } from '../storage/port.js';
import { HUDI_1X_TABLE_VERSIONS, readTableConfig, type TableConfig } from '../table/config.js';
import type { HoodieCleanMetadata } from '../timeline/avro-files.js';
import type { CommitMetadata } from '../timeline/commit-metadata.js';
import type { MetadataCleanResult } from './clean.js';
import type { MetadataCompactionResult } from './compaction.js';
import { applyMetadataTableWriteConfig, type MetadataDisableReport } from './disable.js';
import { metadataTableDisabled } from './keys.js';
import { type MetadataCommitInput, type MetadataCommitResult, type MetadataRemoveResult, MetadataTable } from './metadata-table.js';
import { type Metadata1xCommitResult, type MetadataOperation, MetadataTable1x } from './metadata-table-1x.js';
import { type Metadata1xRollbackResult, rollbackMetadataDeltaCommit1x } from './rollback-1x.js';

export interface MetadataTableOutcome {
  /** The metadata table's deltacommit for the instant (undefined when the table has no metadata table). */
  readonly deltaCommit: MetadataCommitResult | undefined;
  /** The same for a Hudi 1.x metadata table (table versions 8 and 9). */
  readonly deltaCommit1x: Metadata1xCommitResult | undefined;
  /** What the user's keys turned off (nothing when they did not ask). */
  readonly disabled: MetadataDisableReport | undefined;
  /** Metadata-table compactions run before the deltacommit (finished pending ones, or one that was due). */
  readonly compactions: readonly MetadataCompactionResult[];
  /** Metadata-table cleans run before the deltacommit. */
  readonly cleans: readonly MetadataCleanResult[];
}

export interface MetadataTableSession {
  /**
   * Before anything is written: apply the user's hoodie.metadata.* keys and refuse a metadata table the commit could
   * not keep. `writerSchema`: the schema a write will commit (its column stats are checked against it).
   */
  prepare(what: string, writerSchema?: string): Promise<void>;
  commit(instantTime: string, metadata: CommitMetadata, input?: Omit<MetadataCommitInput, 'properties'>): Promise<MetadataCommitResult | undefined>;
  /** The same for a clean about to complete (`tableSchema`: the table's schema, for the indexed columns). */
  commitClean(
    instantTime: string,
    metadata: HoodieCleanMetadata,
    input?: Omit<MetadataCommitInput, 'properties' | 'recordIndex' | 'localFiles'> & { readonly tableSchema?: () => Promise<string | undefined> },
  ): Promise<MetadataCommitResult | undefined>;
  outcome(): MetadataTableOutcome;
}

/** The operations whose deltacommits index new files' column ranges (a clean's tombstones carry none). */
function writesColumnStats(operation: MetadataOperation): boolean {
  return operation === 'write' || operation === 'cluster' || operation === 'compact';
}

/**
 * The metadata table of the table as stored now: a 1.x one (MetadataTable1x) for table versions 8 and 9, else
 * the 0.x one. Undefined when hoodie.properties declares none.
 */
async function openEither(storage: Storage, config: TableConfig): Promise<MetadataTable | MetadataTable1x | undefined> {
  return HUDI_1X_TABLE_VERSIONS.includes(config.version) ? MetadataTable1x.open(storage, config) : MetadataTable.open(storage, { config });
}

/**
 * The metadata-table side of one commit, with the user's Hudi write properties. `operation` says what the commit
 * is ('write' for the writer's commits, 'cluster', 'compact', 'clean'); a 1.x metadata table is kept for those only,
 * anything else refused. `compaction`: for 'compact', the compaction instant committed.
 */
export function keepMetadataTable(
  storage: Storage,
  properties: ReadonlyMap<string, string>,
  operation: MetadataOperation = 'other',
  compaction?: string,
): MetadataTableSession {
  const scope = { properties, operation, ...(compaction === undefined ? {} : { compaction }) };
  let disabled: MetadataDisableReport | undefined;
  let deltaCommit: MetadataCommitResult | undefined;
  let deltaCommit1x: Metadata1xCommitResult | undefined;
  const compactions: MetadataCompactionResult[] = [];
  const cleans: MetadataCleanResult[] = [];
  /** Apply the user's keys to hoodie.properties as stored now (`known`: as just read under the lock); the metadata table left afterwards. */
  const applyKeysAndOpen = async (known?: TableConfig): Promise<MetadataTable | MetadataTable1x | undefined> => {
    const config = known ?? (await readTableConfig(storage));
    const report = await applyMetadataTableWriteConfig(storage, config, properties);
    if (report.removedPartitions.length === 0 && !report.deletedMetadataTable) return openEither(storage, config);
    disabled =
      disabled === undefined
        ? report
        : {
            removedPartitions: [...new Set([...disabled.removedPartitions, ...report.removedPartitions])],
            deletedMetadataTable: disabled.deletedMetadataTable || report.deletedMetadataTable,
            reason: disabled.reason ?? report.reason,
          };
    return openEither(storage, await readTableConfig(storage));
  };
  /** The table after its own services, ready for the deltacommit. */
  const openForCommit = async (input: Pick<MetadataCommitInput, 'lease' | 'dataTable'>): Promise<MetadataTable | MetadataTable1x | undefined> => {
    const { lease, dataTable } = input;
    const table = await applyKeysAndOpen(dataTable?.config);
    if (table === undefined || table instanceof MetadataTable1x) return table;
    table.assertMaintainable('compacting the metadata table', { properties });
    const ran = await table.runTableServices({ properties, ...(lease === undefined ? {} : { lease }), ...(dataTable === undefined ? {} : { dataTable }) });
    compactions.push(...ran.compactions);
    cleans.push(...ran.cleans);
    return ran.compactions.length === 0 && ran.cleans.length === 0 ? table : MetadataTable.open(storage);
  };
  return {
    async prepare(what, writerSchema) {
      const table = await applyKeysAndOpen();
      table?.assertMaintainable(what, scope);
      if (table instanceof MetadataTable1x && writesColumnStats(operation)) await table.assertColumnStatsWritable(what, properties, writerSchema);
      if (table instanceof MetadataTable1x && operation === 'write') table.assertRecordIndexWritable(what, writerSchema);
    },
    async commit(instantTime, metadata, input = {}) {
      const table = await openForCommit(input);
      if (table instanceof MetadataTable1x) {
        table.assertMaintainable(`committing ${instantTime}`, scope);
        deltaCommit1x = await table.commit(instantTime, metadata, {
          properties,
          ...(input.localFiles === undefined ? {} : { localFiles: input.localFiles }),
          ...(input.logColumnRanges === undefined ? {} : { logColumnRanges: input.logColumnRanges }),
          ...(input.recordIndex === undefined ? {} : { recordIndex: input.recordIndex }),
          ...(input.lease === undefined ? {} : { lease: input.lease }),
          ...(input.afterStorageWrite === undefined ? {} : { afterStorageWrite: input.afterStorageWrite }),
        });
        return undefined;
      }
      deltaCommit = table === undefined ? undefined : await table.commit(instantTime, metadata, { ...input, properties });
      return deltaCommit;
    },
    async commitClean(instantTime, metadata, input = {}) {
      const table = await openForCommit(input);
      if (table instanceof MetadataTable1x) {
        deltaCommit1x = await table.commitClean(instantTime, metadata, {
          properties,
          ...(input.tableSchema === undefined ? {} : { tableSchema: input.tableSchema }),
          ...(input.lease === undefined ? {} : { lease: input.lease }),
          ...(input.afterStorageWrite === undefined ? {} : { afterStorageWrite: input.afterStorageWrite }),
        });
        return undefined;
      }
      deltaCommit = table === undefined ? undefined : await table.commitClean(instantTime, metadata, { ...input, properties });
      return deltaCommit;
    },
    outcome: () => ({ deltaCommit, deltaCommit1x, disabled, compactions, cleans }),
  };
}

/**
 * Rolling back data instant `instantTime` (any writer's) at `rollbackTime`: remove its metadata-table deltacommit,
 * under the table lock, before the rollback completes. A 1.x metadata table gets Hudi 1.x's rollback instant at
 * `rollbackTime` (rollback-1x.ts), when Hudi would write one. Undefined when nothing was removed that way.
 */
export async function removeMetadataTableDeltaCommit(
  storage: Storage,
  instantTime: string,
  rollbackTime: string,
  lease?: LockLease,
): Promise<MetadataRemoveResult | Metadata1xRollbackResult | undefined> {
  const table = await openEither(storage, await readTableConfig(storage));
  if (table instanceof MetadataTable1x) {
    table.assertRollbackable(`rolling back ${instantTime}`, instantTime);
    return rollbackMetadataDeltaCommit1x(table, instantTime, rollbackTime, lease);
  }
  return table?.removeDeltaCommit(instantTime, lease);
}

/**
 * Before a rollback of `instantTime` writes anything (its plan, or the inflight of a resumed one): refuse a table
 * whose metadata table cannot be rolled back with it (a 1.x one: what Hudi's validateRollback refuses); the 0.x one
 * is handled by removeMetadataTableDeltaCommit.
 */
export async function assertRollbackKeepsMetadataTable(storage: Storage, what: string, config: TableConfig, instantTime: string): Promise<void> {
  if (!HUDI_1X_TABLE_VERSIONS.includes(config.version)) return;
  (await MetadataTable1x.open(storage, config))?.assertRollbackable(what, instantTime);
}

/**
 * For steps that write no commit themselves but lead to one (clustering schedule / execute, an ingest before its
 * claim): refuse, before any work, a metadata table the commit could not keep. With hoodie.metadata.enable=false the
 * commit drops the metadata table first, so nothing is refused. `config` is hoodie.properties if already read;
 * `compaction`, for 'compact', the compaction instant to run (undefined: one about to be scheduled).
 */
export async function assertMetadataTableKeepable(
  storage: Storage,
  what: string,
  properties: ReadonlyMap<string, string>,
  config?: TableConfig,
  operation: MetadataOperation = 'other',
  compaction?: string,
): Promise<void> {
  if (metadataTableDisabled(properties)) return;
  const table = await openEither(storage, config ?? (await readTableConfig(storage)));
  table?.assertMaintainable(what, { properties, operation, ...(compaction === undefined ? {} : { compaction }) });
  if (table instanceof MetadataTable1x && writesColumnStats(operation)) await table.assertColumnStatsWritable(what, properties);
}
