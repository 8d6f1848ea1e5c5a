/**
 * The real state machine (infra/state-machine.asl.json) run on this machine: aws-local-stepfunctions interprets the
 * ASL, and its Task states call the bundled Lambda handlers in this process the way Lambda would (lambda.ts).
 * The handlers talk to whatever AWS_ENDPOINT_URL_* point at (moto and DynamoDB Local under infra/with-local-stack.mjs).
 *
 * Each invocation is timed and its AWS requests are attributed to it, which is what the cost estimate needs.
 * Environment variables the handlers read are process-wide: run one execution with a given `environment` at a time.
 * Unless set already, POWERTOOLS_LOG_LEVEL=WARN and POWERTOOLS_METRICS_DISABLED=true keep the handlers quiet.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { HudiError } from '../../errors.js';
import { type Architecture, type CostEstimate, estimateCost } from '../aws/cost.js';
import { type DeployedFunction, FUNCTIONS } from '../aws/function-settings.js';
import type { ClusteringExecutionInput } from '../aws/settings.js';
import { inlineDistributedMaps, readItems } from './distributed-map.js';
import {
  applyEnvironment,
  asInvocation,
  asLambdaError,
  asStatePayload,
  defaultFunctionsDir,
  type FunctionName,
  type InvocationRecord,
  type JsonValue,
  type LambdaHandler,
  lambdaContext,
  loadBundledHandler,
  localFunctionArn,
  packageRoot,
  quietPowertools,
} from './lambda.js';
import { followEvents, type ProgressEvent } from './progress.js';

/** Which function each Task state of the definition invokes, by its DefinitionSubstitutions name. */
export const FUNCTION_SUBSTITUTIONS: Readonly<Record<string, FunctionName>> = {
  PlanFunctionArn: 'plan',
  ExecuteGroupFunctionArn: 'execute-group',
  ExecuteCopyGroupFunctionArn: 'execute-copy-group',
  CommitFunctionArn: 'commit',
  RollbackFunctionArn: 'rollback',
  CleanPrepareFunctionArn: 'clean-prepare',
  CleanPlanFunctionArn: 'clean-plan',
  CleanScheduleFunctionArn: 'clean-schedule',
  CleanExecuteFunctionArn: 'clean-execute',
  CleanCompleteFunctionArn: 'clean-complete',
  ArchiveFunctionArn: 'archive',
  CompactionScheduleFunctionArn: 'compaction-schedule',
  CompactionExecuteFunctionArn: 'compaction-execute',
  CompactionCommitFunctionArn: 'compaction-commit',
  CompactionRollbackFunctionArn: 'compaction-rollback',
};

export interface LocalRunOptions {
  /** The ASL text or file (default infra/state-machine.asl.json of this package). */
  readonly definitionFile?: string;
  /** Where the bundled handlers are (default dist/functions of this package). */
  readonly functionsDir?: string;
  /** Where a task's handler comes from (default the bundle in functionsDir, loadBundledHandler). */
  readonly handlerOf?: (fn: FunctionName) => Promise<LambdaHandler>;
  readonly memoryMb?: Partial<Record<FunctionName, number>>;
  readonly architecture?: Architecture;
  /** Pause before each retry instead of the definition's IntervalSeconds/backoff (tests: a few ms). */
  readonly retryPauseMs?: number;
  /** Environment variables the handlers see during this run (TABLE_PATH, LOCK_TABLE, CLUSTERING_PROPERTIES, …). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly onProgress?: (event: ProgressEvent) => void;
  /** The execution's name (default a random one). */
  readonly executionName?: string;
}

export interface LocalExecution {
  readonly executionArn: string;
  readonly name: string;
  readonly status: 'SUCCEEDED' | 'FAILED';
  readonly output: unknown;
  readonly error: string | undefined;
  readonly cause: string | undefined;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly invocations: readonly InvocationRecord[];
  readonly stateTransitions: number;
  /** Every AWS request of every invocation, by `service:Operation`. */
  readonly requests: ReadonlyMap<string, number>;
  readonly cost: CostEstimate;
}

// ---------------------------------------------------------------------------------------------------------------
// The definition.

export function defaultDefinitionFile(): string {
  return join(packageRoot(), 'infra', 'state-machine.asl.json');
}

/** The ASL with `${…}` substitutions replaced by placeholder Lambda ARNs (the tasks are bound to local handlers). */
export function loadDefinition(file: string = defaultDefinitionFile()): StateMachineDefinition {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new HudiError(`cannot read the state machine definition: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { location: file });
  }
  const substituted = text.replace(/\$\{([A-Za-z0-9]+)\}/g, (whole, name: string) => {
    const fn = FUNCTION_SUBSTITUTIONS[name];
    if (fn === undefined)
      throw new HudiError(`unknown substitution ${whole} in the state machine definition`, {
        location: file,
        fix: `use one of ${Object.keys(FUNCTION_SUBSTITUTIONS).join(', ')}`,
      });
    return localFunctionArn(fn);
  });
  return JSON.parse(substituted) as StateMachineDefinition;
}

/** Task state name → the function its Resource names (nested Map states included). */
export function taskFunctions(definition: StateMachineDefinition): Map<string, FunctionName> {
  const byArn = new Map(Object.values(FUNCTION_SUBSTITUTIONS).map((fn) => [localFunctionArn(fn), fn]));
  const found = new Map<string, FunctionName>();
  const visit = (states: Record<string, unknown>): void => {
    for (const [name, state] of Object.entries(states)) {
      if (state === null || typeof state !== 'object') continue;
      const record = state as Record<string, unknown>;
      if (record['Type'] === 'Task' && typeof record['Resource'] === 'string') {
        const fn = byArn.get(record['Resource']);
        if (fn !== undefined) found.set(name, fn);
      }
      for (const nestedKey of ['ItemProcessor', 'Iterator']) {
        const nested = record[nestedKey] as { States?: Record<string, unknown> } | undefined;
        if (nested?.States !== undefined) visit(nested.States);
      }
      if (Array.isArray(record['Branches']))
        for (const branch of record['Branches'] as { States?: Record<string, unknown> }[]) if (branch.States) visit(branch.States);
    }
  };
  visit(definition.States as unknown as Record<string, unknown>);
  return found;
}

/**
 * The state machine a definition is, named for what it runs (the execution ARNs carry it): `hudi-compaction` for the
 * compaction definition (its tasks are the compaction functions), `hudi-clustering` for the table services one.
 */
export function stateMachineNameOf(tasks: ReadonlyMap<string, FunctionName>): string {
  return [...tasks.values()].some((fn) => fn.startsWith('compaction-')) ? 'hudi-compaction' : 'hudi-clustering';
}

// ---------------------------------------------------------------------------------------------------------------
// Running.

/** Run one execution of a state machine (clustering's by default, or compaction's) locally. Never throws for a failed execution: see `status`. */
export async function runStateMachineLocally(input: ClusteringExecutionInput, options: LocalRunOptions = {}): Promise<LocalExecution> {
  quietPowertools();
  // aws-local-stepfunctions runs every Map inline: Distributed Maps get a stand-in that reads their items (distributed-map.ts).
  const { definition, itemReaders } = inlineDistributedMaps(loadDefinition(options.definitionFile));
  const tasks = taskFunctions(definition);
  const functionsDir = options.functionsDir ?? defaultFunctionsDir();
  const handlerOf = options.handlerOf ?? ((fn: FunctionName) => loadBundledHandler(fn, functionsDir));
  const memory = Object.fromEntries(
    (Object.keys(FUNCTIONS) as DeployedFunction[])
      .filter((fn): fn is FunctionName => fn !== 'ingest')
      .map((fn) => [fn, options.memoryMb?.[fn] ?? FUNCTIONS[fn].memoryMb]),
  ) as Record<FunctionName, number>;
  const invocations: InvocationRecord[] = [];
  const attempts = new Map<string, number>();

  const handlers: Record<string, (input: JsonValue) => Promise<JsonValue>> = {};
  for (const [state, fn] of tasks) {
    handlers[state] = async (taskInput) => {
      const handler = await handlerOf(fn);
      const item = typeof taskInput === 'object' && taskInput !== null && !Array.isArray(taskInput) ? taskInput : {};
      const groupIndex = typeof item['groupIndex'] === 'number' ? item['groupIndex'] : undefined;
      const shareIndex = typeof item['shareIndex'] === 'number' ? item['shareIndex'] : undefined;
      const operationIndex = typeof item['operationIndex'] === 'number' ? item['operationIndex'] : undefined;
      const attemptKey = `${state}/${groupIndex ?? shareIndex ?? operationIndex ?? ''}`;
      const attempt = (attempts.get(attemptKey) ?? 0) + 1;
      attempts.set(attemptKey, attempt);
      const record: InvocationRecord = {
        functionName: fn,
        state,
        groupIndex,
        shareIndex,
        attempt,
        startedAt: Date.now(),
        durationMs: 0,
        memoryMb: memory[fn],
        ephemeralStorageMb: FUNCTIONS[fn].ephemeralStorageMb,
        errorName: undefined,
        requests: new Map(),
      };
      invocations.push(record);
      const event = asStatePayload(taskInput, `the input of ${state}`);
      const started = performance.now();
      try {
        const output = await asInvocation(record, () => handler(event, lambdaContext(fn, memory[fn], FUNCTIONS[fn].timeoutSeconds * 1000)));
        return asStatePayload(output, `the output of ${state}`);
      } catch (error) {
        record.errorName = error instanceof Error ? error.name : 'Error';
        throw asLambdaError(error);
      } finally {
        record.durationMs = performance.now() - started;
      }
    };
  }

  for (const state of itemReaders) handlers[state] = readItems;

  const name = options.executionName ?? `local-${randomUUID()}`;
  const executionArn = `arn:aws:states:us-east-1:000000000000:execution:${stateMachineNameOf(tasks)}:${name}`;
  const startedAt = new Date();
  const machine = new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } });
  const retryIntervalOverrides =
    options.retryPauseMs === undefined ? undefined : Object.fromEntries([...tasks.keys()].map((state) => [state, options.retryPauseMs!]));
  const restoreEnvironment = applyEnvironment(options.environment);
  try {
    const execution = machine.run(input as JsonValue, {
      overrides: { taskResourceLocalHandlers: handlers, ...(retryIntervalOverrides === undefined ? {} : { retryIntervalOverrides }) },
      context: { Execution: { Id: executionArn, Name: name, Input: input as JsonValue, StartTime: startedAt.toISOString() } },
    });
    const events = followEvents(execution.eventLogs, startedAt.getTime(), options.onProgress);
    let status: 'SUCCEEDED' | 'FAILED' = 'SUCCEEDED';
    let output: unknown;
    let error: string | undefined;
    let cause: string | undefined;
    try {
      output = await execution.result;
    } catch (failure) {
      status = 'FAILED';
      const reason = failure instanceof Error && failure.cause instanceof Error ? failure.cause : failure;
      error = reason instanceof Error ? reason.name : 'Error';
      cause = reason instanceof Error ? reason.message : String(reason);
    }
    const { transitions } = await events;
    const durationMs = Date.now() - startedAt.getTime();
    options.onProgress?.({ kind: 'execution-finished', status, elapsedMs: durationMs });
    const requests = new Map<string, number>();
    for (const invocation of invocations) for (const [key, count] of invocation.requests) requests.set(key, (requests.get(key) ?? 0) + count);
    const cost = estimateCost({
      architecture: options.architecture ?? 'arm64',
      invocations: invocations.map((invocation) => ({
        memoryMb: invocation.memoryMb,
        durationMs: invocation.durationMs,
        ephemeralStorageMb: invocation.ephemeralStorageMb,
      })),
      requests,
      stateTransitions: transitions,
    });
    return { executionArn, name, status, output, error, cause, startedAt, durationMs, invocations, stateTransitions: transitions, requests, cost };
  } finally {
    restoreEnvironment();
  }
}
