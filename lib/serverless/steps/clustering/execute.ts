/**
 * One clustering group per invocation (a Map iteration). The plan is read from the timeline; the group's result is
 * stored next to its markers, so the state carries nothing but the reference. Safe to retry: a group that already
 * has a result returns at once, and one that ran partway writes the same file names again (execute.ts).
 */
import { mkdir, mkdtemp, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executeGroup } from '../../../clustering/execute.js';
import { readGroupResult } from '../../../clustering/instant.js';
import { lambdaEngineOptions } from '../../../clustering/job.js';
import { openParquetEngine } from '../../../engine/parquet-engine.js';
import { HudiError } from '../../../errors.js';
import { writeConfigFromProperties } from '../../../writer/write-config.js';
import { openTableAndLock } from '../../aws/clients.js';
import { type ClusteringExecutionInput, ENV, resolveStepSettings } from '../../aws/settings.js';
import type { StepDependencies } from '../contract.js';
import { asObject, executionInputOf, optionalString, requiredIndex, requiredInstant } from '../events.js';

export interface ExecuteGroupInput extends ClusteringExecutionInput {
  readonly instant: string;
  readonly groupIndex: number;
}

export interface ExecuteGroupOutput {
  readonly instant: string;
  readonly groupIndex: number;
  /** 'already-done' when an earlier attempt stored the group's result. */
  readonly outcome: 'executed' | 'already-done';
  readonly outputFiles: number;
  readonly rows: number;
  readonly durationMs: number;
}

export function parseExecuteGroupEvent(event: unknown): ExecuteGroupInput {
  const object = asObject(event, 'execute-group event');
  // `index` is what a Map item of the plan holds; `groupIndex` what the state machine's ItemSelector passes.
  const key = object['groupIndex'] !== undefined ? 'groupIndex' : 'index';
  return {
    ...executionInputOf(object, 'execute-group event'),
    instant: requiredInstant(object, 'instant', 'execute-group event'),
    groupIndex: requiredIndex(object, key, 'execute-group event'),
  };
}

export interface ExecuteGroupDependencies extends StepDependencies {
  /** The function's memory (MB): DuckDB's memory limit, threads and spill folder follow from it (lambdaEngineOptions). */
  readonly memoryMb: number;
}

export async function executeGroupStep(input: ExecuteGroupInput, deps: ExecuteGroupDependencies): Promise<ExecuteGroupOutput> {
  const started = Date.now();
  const settings = resolveStepSettings(deps.env, input);
  for (const warning of settings.warnings) deps.log.warn(warning);
  const { table } = await openTableAndLock(settings, deps.clients, { mode: 'clustering' });

  const earlier = await readGroupResult(table.storage, input.instant, input.groupIndex);
  if (earlier !== undefined) {
    deps.log.info('group already has a result; nothing to do', { instant: input.instant, groupIndex: input.groupIndex });
    return summary(input, 'already-done', earlier.writeStats, Date.now() - started);
  }

  // A folder of our own under the scratch space: /tmp outlives the invocation on a warm container, and local runs
  // execute several groups in one process.
  const scratchRoot = optionalString(deps.env, ENV.scratchDir, 'environment') ?? tmpdir();
  await mkdir(scratchRoot, { recursive: true });
  const scratch = await mkdtemp(join(scratchRoot, `hudi-group-${input.groupIndex}-`));
  const engineOptions = lambdaEngineOptions(deps.memoryMb, scratch, await freeBytes(scratch));
  deps.log.info('executing group', { instant: input.instant, groupIndex: input.groupIndex, memoryMb: deps.memoryMb, engine: engineOptions });
  const engine = await openParquetEngine(engineOptions);
  try {
    const blockBytes = parquetBlockBytes(settings.jobProperties);
    const result = await executeGroup(table, input.instant, input.groupIndex, {
      engine,
      tempDir: join(scratch, 'work'),
      config: settings.clustering,
      ...(blockBytes === undefined ? {} : { parquetBlockBytes: blockBytes }),
      bloom: writeConfigFromProperties(settings.jobProperties, ENV.clusteringProperties).bloom,
      properties: settings.jobProperties,
    });
    deps.log.info('group done', {
      instant: input.instant,
      groupIndex: input.groupIndex,
      partitionPath: result.partitionPath,
      inputFiles: result.inputFiles,
      inputBytes: result.inputBytes,
      rows: result.inputRows,
      outputFiles: result.writeStats.length,
      order: result.order,
      // The transfers' requests by kind (staging, markers, uploads: parts counted); the invocation's metrics count all.
      storageRequests: result.report.requests ?? {},
    });
    return summary(input, 'executed', result.writeStats, Date.now() - started);
  } finally {
    await engine.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Free bytes on the file system of `dir` (undefined when it cannot tell: DuckDB then takes its own default). */
async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const stats = await statfs(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/** hoodie.parquet.block.size from the job's properties, when set. */
function parquetBlockBytes(properties: ReadonlyMap<string, string>): number | undefined {
  const text = properties.get('hoodie.parquet.block.size')?.trim();
  if (text === undefined || text === '') return undefined;
  const bytes = Number(text);
  if (!Number.isInteger(bytes) || bytes <= 0) {
    throw new HudiError(`hoodie.parquet.block.size=${text} is not a positive whole number of bytes`, { fix: "set it to e.g. 125829120 (Hudi's default)" });
  }
  return bytes;
}

function summary(
  input: ExecuteGroupInput,
  outcome: ExecuteGroupOutput['outcome'],
  stats: readonly { numWrites: number }[],
  durationMs: number,
): ExecuteGroupOutput {
  return {
    instant: input.instant,
    groupIndex: input.groupIndex,
    outcome,
    outputFiles: stats.length,
    rows: stats.reduce((total, stat) => total + stat.numWrites, 0),
    durationMs,
  };
}
