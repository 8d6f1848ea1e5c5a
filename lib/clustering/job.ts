/**
 * A whole clustering in one process (`runClusteringJob`, the `cluster` command), like Hudi's HoodieClusteringJob with
 * --mode schedule | execute | scheduleAndExecute; the Step Functions path runs the same three steps in Lambdas.
 * A clustering is one `replacecommit` instant T: schedule writes the plan (`T.replacecommit.requested`, schedule.ts),
 * execute runs each group (execute.ts, results in instant.ts), commit writes `T.replacecommit` (commit.ts).
 *
 * When a group fails, nothing becomes visible and the plan stays pending: run execute again for the groups without a
 * result (`cluster <table> --mode execute --instant T`; a retried group overwrites its own files), or roll the attempt
 * back with rollbackInflightClustering (keeps the plan) or the instant with rollbackInstant (drops it). The README's
 * "Clustering: how a run goes, and what happens when it fails" tells the whole protocol.
 */

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BloomFilterOptions } from '../base-file/bloom-filter.js';
import type { ParquetEngine, ParquetEngineOptions } from '../engine/port.js';
import { ConflictError, HudiError } from '../errors.js';
import type { LockProvider } from '../lock/port.js';
import { describeHeal, healTable } from '../rollback/failed-writes.js';
import { findRollbackOf, pendingWriterAlive, rollbackInflightClustering, rollbackInstant } from '../rollback/rollback.js';
import type { HudiTable } from '../table/table.js';
import { heartbeatPath } from '../timeline/heartbeat.js';
import { pendingClusteringPlans } from '../timeline/queries.js';
import { type CommitResult, commit } from './commit.js';
import type { ClusteringConfig } from './config.js';
import { executeGroup } from './execute.js';
import { assertClusteringPending, discardStaleGroupResults, loadClusteringInstant, readGroupResult } from './instant.js';
import { type ScheduleResult, schedule } from './schedule.js';

export type ClusteringJobMode = 'schedule' | 'execute' | 'scheduleAndExecute';
export const CLUSTERING_JOB_MODES: readonly ClusteringJobMode[] = ['schedule', 'execute', 'scheduleAndExecute'];

export interface ClusteringJobOptions {
  readonly mode: ClusteringJobMode;
  /** execute: the clustering to run; default the oldest pending one (as HoodieClusteringJob). */
  readonly instant?: string;
  readonly config: ClusteringConfig;
  /** schedule: plan even before max.commits commits happened since the last clustering (a wait only inline or async clustering asks for). */
  readonly force?: boolean;
  readonly lock: LockProvider;
  readonly engine: ParquetEngine;
  /** Local scratch space (default the OS temp dir). */
  readonly tempDir?: string;
  readonly now?: Date;
  /** Progress lines ("group 2/5 done …"). */
  readonly onProgress?: (line: string) => void;
  /** Run groups that already have a result again instead of reusing it (default false). */
  readonly rerunFinishedGroups?: boolean;
  readonly lockWaitMs?: number;
  /** The output files' bloom filter settings (from hoodie.index.bloom.*; default Hudi's). */
  readonly bloom?: Partial<BloomFilterOptions>;
  /** The run's Hudi properties (hoodie.metadata.* and the metadata table's index settings, as a Hudi writer's). */
  readonly properties?: ReadonlyMap<string, string>;
  /** Fault injection for tests: called after each storage write of the metadata table's deltacommit. */
  readonly afterMetadataTableWrite?: (what: string) => Promise<void>;
  /** hoodie.parquet.compression.codec for binary copy (executeGroup's compressionCodec; default: each chunk keeps its own). */
  readonly compressionCodec?: string;
}

export interface ClusteringJobResult {
  readonly mode: ClusteringJobMode;
  /** What schedule planned (schedule and scheduleAndExecute). */
  readonly scheduled: ScheduleResult | undefined;
  /** The clustering executed (execute and scheduleAndExecute); undefined when there was none to run. */
  readonly instantTime: string | undefined;
  readonly executedGroups: readonly number[];
  /** Groups whose stored result from an earlier attempt was reused. */
  readonly reusedGroups: readonly number[];
  readonly commit: CommitResult | undefined;
  /**
   * A pending clustering whose run is gone (killed, or failed without a rollback), found before scheduling:
   * `resumed` — its remaining groups ran and it committed; `rolled-back` — it could not complete (an input file group
   * changed since the plan) and was dropped, freeing its file groups.
   */
  readonly takenOver: { readonly instant: string; readonly outcome: 'resumed' | 'rolled-back'; readonly reason: string } | undefined;
}

/** The oldest pending clustering (HoodieActiveTimeline.getFirstPendingClusterInstant). */
export async function oldestPendingClustering(table: HudiTable): Promise<string | undefined> {
  return (await pendingClusteringPlans(table.storage, table.timeline))[0]?.instant.time;
}

/** Schedule, execute, or both, in one process. */
export async function runClusteringJob(table: HudiTable, options: ClusteringJobOptions): Promise<ClusteringJobResult> {
  const progress = options.onProgress ?? (() => undefined);
  const lockWait = options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs };
  const clock = options.now === undefined ? {} : { now: options.now };
  // A service run beside writers: only writers whose heartbeat expired are rolled back (rollback/failed-writes.ts).
  const healed = await healTable(table, { lock: options.lock, policy: 'LAZY', ...clock, ...lockWait });
  for (const line of describeHeal(healed)) progress(line);
  if (options.mode === 'scheduleAndExecute' && options.instant === undefined) {
    const orphan = await orphanedClustering(await table.reload(), options.now);
    if (orphan !== undefined) {
      progress(`resuming clustering ${orphan.instant}: its run is gone (${orphan.reason})`);
      return resumeOrphan(await table.reload(), orphan, options, progress);
    }
  }
  let scheduled: ScheduleResult | undefined;
  if (options.mode !== 'execute') {
    if (options.instant !== undefined) {
      throw new HudiError(`--instant is for --mode execute; ${options.mode} plans a new instant`, { fix: 'drop --instant, or use --mode execute' });
    }
    scheduled = await schedule(table, options.config, {
      lock: options.lock,
      ...(options.force === undefined ? {} : { force: options.force }),
      ...(options.now === undefined ? {} : { now: options.now }),
      ...lockWait,
      log: progress,
      ...(options.properties === undefined ? {} : { properties: options.properties }),
    });
    if (scheduled !== undefined) {
      const files = scheduled.groups.reduce((total, group) => total + group.inputFiles, 0);
      const outputs = scheduled.groups.reduce((total, group) => total + group.numOutputFileGroups, 0);
      progress(`scheduled clustering ${scheduled.instantTime}: ${scheduled.groups.length} group(s), ${files} file(s) → ${outputs} file group(s)`);
    }
    if (options.mode === 'schedule' || scheduled === undefined) {
      return { mode: options.mode, scheduled, instantTime: undefined, executedGroups: [], reusedGroups: [], commit: undefined, takenOver: undefined };
    }
  }

  const current = await table.reload();
  const instantTime = scheduled?.instantTime ?? options.instant ?? (await oldestPendingClustering(current));
  if (instantTime === undefined) {
    progress('no pending clustering to execute');
    return { mode: options.mode, scheduled, instantTime: undefined, executedGroups: [], reusedGroups: [], commit: undefined, takenOver: undefined };
  }
  return { ...(await executeAndCommit(current, instantTime, options, progress)), scheduled, takenOver: undefined };
}

/** Run the groups of a pending clustering that have no result, then commit it. */
async function executeAndCommit(
  current: HudiTable,
  instantTime: string,
  options: ClusteringJobOptions,
  progress: (line: string) => void,
): Promise<Omit<ClusteringJobResult, 'scheduled' | 'takenOver'>> {
  const lockWait = options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs };
  const { instant, plan } = await loadClusteringInstant(current, instantTime);
  assertClusteringPending(current.storage, current.layout, instant);
  await discardStaleGroupResults(current.storage, instant, plan.inputGroups.length);

  const total = plan.inputGroups.length;
  const executedGroups: number[] = [];
  const reusedGroups: number[] = [];
  for (let index = 0; index < total; index++) {
    const earlier = options.rerunFinishedGroups ? undefined : await readGroupResult(current.storage, instantTime, index);
    if (earlier !== undefined) {
      reusedGroups.push(index);
      progress(`group ${index + 1}/${total} already done by an earlier attempt`);
      continue;
    }
    const result = await executeGroup(current, instantTime, index, {
      engine: options.engine,
      tempDir: options.tempDir ?? tmpdir(),
      config: options.config,
      ...(options.bloom === undefined ? {} : { bloom: options.bloom }),
      ...(options.properties === undefined ? {} : { properties: options.properties }),
      ...(options.compressionCodec === undefined ? {} : { compressionCodec: options.compressionCodec }),
    });
    executedGroups.push(index);
    const outputRows = result.writeStats.reduce((sum, stat) => sum + stat.numWrites, 0);
    const execution = result.report.execution;
    const how =
      execution === undefined
        ? ''
        : execution.method === 'binary-copy'
          ? `, binary copy of ${execution.rowGroups} row group(s)`
          : `, rewritten (${execution.reason}${execution.split === undefined ? '' : `; ${execution.split}`})`;
    progress(
      `group ${index + 1}/${total} done: ${result.inputFiles} file(s) → ${result.writeStats.length}, ${outputRows} rows, ${result.order} order${how}, ${result.durationMs} ms`,
    );
  }
  const committed = await commit(await current.reload(), instantTime, {
    lock: options.lock,
    ...lockWait,
    ...(options.properties === undefined ? {} : { properties: options.properties }),
    ...(options.afterMetadataTableWrite === undefined ? {} : { afterMetadataTableWrite: options.afterMetadataTableWrite }),
  });
  progress(`committed clustering ${instantTime}`);
  return { mode: options.mode, instantTime, executedGroups, reusedGroups, commit: committed };
}

interface Orphan {
  readonly instant: string;
  readonly reason: string;
}

/**
 * The oldest pending clustering when nobody runs it any more: its heartbeat expired (or, never started, its plan is
 * older than the heartbeat expiry), or it has a rollback that a crash interrupted. Undefined when there is none or
 * its run may still be going.
 */
async function orphanedClustering(table: HudiTable, now: Date | undefined): Promise<Orphan | undefined> {
  const oldest = await oldestPendingClustering(table);
  if (oldest === undefined) return undefined;
  const rollback = await findRollbackOf(table.storage, table.timeline, oldest);
  if (rollback !== undefined && rollback.state !== 'COMPLETED') return { instant: oldest, reason: `rollback ${rollback.time} of its attempt was interrupted` };
  const alive = await pendingWriterAlive(table.storage, oldest, table.config.timelineTimeZone, now === undefined ? {} : { now });
  if (alive !== undefined) return undefined;
  return {
    instant: oldest,
    reason:
      (await table.storage.head(heartbeatPath(oldest))) === undefined
        ? 'it never started and its plan is older than the heartbeat expiry'
        : 'its heartbeat expired',
  };
}

/**
 * Take over an orphaned clustering as Hudi's retry of a failed clustering does: finish an interrupted rollback of its
 * attempt (keeping the plan), run the groups without a result and commit. A plan that cannot complete any more (an
 * input file group changed since it was planned) is rolled back instead, freeing its file groups.
 */
async function resumeOrphan(table: HudiTable, orphan: Orphan, options: ClusteringJobOptions, progress: (line: string) => void): Promise<ClusteringJobResult> {
  const rollbackOptions = {
    lock: options.lock,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
  };
  const pendingRollback = await findRollbackOf(table.storage, table.timeline, orphan.instant);
  if (pendingRollback !== undefined && pendingRollback.state !== 'COMPLETED') {
    await rollbackInflightClustering(table, orphan.instant, rollbackOptions);
    progress(`finished rollback ${pendingRollback.time} of the earlier attempt; the plan is executed again`);
  }
  try {
    const done = await executeAndCommit(await table.reload(), orphan.instant, options, progress);
    return { ...done, scheduled: undefined, takenOver: { ...orphan, outcome: 'resumed' } };
  } catch (error) {
    if (!(error instanceof ConflictError)) throw error;
    const rolledBack = await rollbackInstant(await table.reload(), orphan.instant, { ...rollbackOptions, ignoreHeartbeat: true });
    progress(
      `rolled back clustering ${orphan.instant} (rollback ${rolledBack.rollbackInstantTime}): it cannot complete (${error.message}); its file groups are free for the next plan`,
    );
    return {
      mode: options.mode,
      scheduled: undefined,
      instantTime: orphan.instant,
      executedGroups: [],
      reusedGroups: [],
      commit: undefined,
      takenOver: { ...orphan, outcome: 'rolled-back', reason: `${orphan.reason}; ${error.message}` },
    };
  }
}

/**
 * Engine settings for a Lambda of `memoryMb`: DuckDB's limit is half of it and it spills beyond that to /tmp, so a
 * group larger than memory completes by spilling. Half, because the process grows well past the limit (DuckDB
 * allocations outside its buffer manager, Node's heap with the curve keys, the runtime; bench/clustering.ts prints
 * the peak RSS). Lambda gives one vCPU per 1,769 MB.
 * The allocator hands freed memory back to the system above a small threshold, on background threads (issue 13:
 * it lowered a large group's peak RSS markedly), and the spill may take a third of the
 * /tmp free when the engine opens (`tmpFreeBytes`): the group's staged inputs and its outputs need the rest.
 */
export function lambdaEngineOptions(memoryMb: number, scratchDir = '/tmp', tmpFreeBytes?: number): ParquetEngineOptions {
  if (!Number.isFinite(memoryMb) || memoryMb < 128) {
    throw new HudiError(`Lambda memory ${memoryMb} MB is not usable`, { fix: 'give the function at least 512 MB (AWS_LAMBDA_FUNCTION_MEMORY_SIZE)' });
  }
  const limitMb = Math.floor(memoryMb * DUCKDB_MEMORY_SHARE);
  return {
    memoryLimit: `${limitMb}MB`,
    threads: Math.max(1, Math.min(6, Math.round(memoryMb / 1769))),
    tempDirectory: join(scratchDir, 'duckdb-spill'),
    allocatorFlushThreshold: `${Math.max(16, Math.floor(limitMb / 16))}MB`,
    allocatorBackgroundThreads: true,
    ...(tmpFreeBytes === undefined || !(tmpFreeBytes > 0) ? {} : { maxTempDirectorySize: `${Math.floor(tmpFreeBytes / 3 / MIB)}MB` }),
  };
}

/** DuckDB's share of the function's memory (lambdaEngineOptions). */
const DUCKDB_MEMORY_SHARE = 0.5;
const MIB = 1024 * 1024;

/** What execute-group is given (template.yaml's ExecuteGroupFunction: MemorySize, EphemeralStorage). */
export interface ExecuteGroupFunctionSize {
  readonly memoryMb: number;
  readonly ephemeralStorageMb: number;
}

/**
 * The most input bytes one execute-group can take. /tmp is the hard limit: a group stages its inputs, writes its
 * outputs (about as large), and a sorted group's DuckDB spill can be as large again; a tenth is left for the runtime.
 * Memory is not a limit for DuckDB's part (it spills), so the bound is the disk's.
 */
export function executeGroupCapacityBytes(size: ExecuteGroupFunctionSize, sorted: boolean): number {
  if (!(size.ephemeralStorageMb > 0) || !(size.memoryMb > 0)) {
    throw new HudiError(`execute-group size ${size.memoryMb} MB memory / ${size.ephemeralStorageMb} MB /tmp is not usable`, {
      fix: "set EXECUTE_GROUP_MEMORY_MB and EXECUTE_GROUP_EPHEMERAL_STORAGE_MB to the function's MemorySize and EphemeralStorage",
    });
  }
  return Math.floor((size.ephemeralStorageMb * MIB * 0.9) / (sorted ? 3 : 2));
}

/**
 * The clustering config with hoodie.clustering.plan.strategy.max.bytes.per.group lowered to what one execute-group
 * can take, and a note saying so when it was lowered (a single file larger than that still forms a group of its own,
 * as in Hudi: a file cannot be split).
 */
export function capGroupBytes(config: ClusteringConfig, size: ExecuteGroupFunctionSize): { config: ClusteringConfig; note?: string } {
  const capacity = executeGroupCapacityBytes(size, config.sortColumns.length > 0);
  if (config.maxBytesPerGroup <= capacity) return { config };
  return {
    config: { ...config, maxBytesPerGroup: capacity },
    note:
      `hoodie.clustering.plan.strategy.max.bytes.per.group=${config.maxBytesPerGroup} lowered to ${capacity}: ` +
      `what one execute-group of ${size.memoryMb} MB with ${size.ephemeralStorageMb} MB of /tmp can stage, write and spill ` +
      '(raise ExecuteGroupEphemeralStorageMb for larger groups)',
  };
}
