/**
 * The real state machine (infra/state-machine.asl.json) run on this machine: aws-local-stepfunctions interprets the
 * ASL, and its Task states call the bundled Lambda handlers (dist/functions/*.mjs, `npm run build`) in this process,
 * the way Lambda would: a Lambda context with the configured memory, the payload as JSON (256 KB checked), and an
 * error reported as Step Functions sees a Lambda error (Error = the error's name, Cause = the runtime's JSON).
 * The handlers talk to whatever AWS_ENDPOINT_URL_* point at (moto and DynamoDB Local under infra/with-local-stack.mjs).
 *
 * Each invocation is timed and its AWS requests are attributed to it (clients.ts counts them), which is what the
 * cost estimate needs. Tests can inject faults around an invocation (`fault`) without touching the handlers.
 * Environment variables the handlers read are process-wide: run one execution with a given `environment` at a time.
 * Unless set already, POWERTOOLS_LOG_LEVEL=WARN and POWERTOOLS_METRICS_DISABLED=true keep the handlers quiet.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { HudiError } from '../errors.js';
import { installAwsRequestSink } from './clients.js';
import { estimateCost, type Architecture, type CostEstimate } from './cost.js';
import { FUNCTIONS, type DeployedFunction } from './function-settings.js';
import type { ClusteringExecutionInput } from './settings.js';

/** The functions the clustering state machine and its trigger use. */
export type FunctionName = Exclude<DeployedFunction, 'ingest'>;

/** Which function each Task state of the definition invokes, by its DefinitionSubstitutions name. */
export const FUNCTION_SUBSTITUTIONS: Readonly<Record<string, FunctionName>> = {
  PlanFunctionArn: 'plan',
  ExecuteGroupFunctionArn: 'execute-group',
  CommitFunctionArn: 'commit',
  RollbackFunctionArn: 'rollback',
};

/** The template's defaults (function-settings.ts): what the cost estimate bills each invocation with. */
export const DEFAULT_MEMORY_MB: Readonly<Record<FunctionName, number>> = {
  plan: FUNCTIONS.plan.memoryMb,
  'execute-group': FUNCTIONS['execute-group'].memoryMb,
  commit: FUNCTIONS.commit.memoryMb,
  rollback: FUNCTIONS.rollback.memoryMb,
  trigger: FUNCTIONS.trigger.memoryMb,
};
/** Step Functions' limit on a state's input or output. */
export const MAX_STATE_PAYLOAD_BYTES = 256 * 1024;

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;

export interface InvocationRecord {
  readonly functionName: FunctionName;
  /** The Task state's name. */
  readonly state: string;
  readonly groupIndex: number | undefined;
  /** 1 for the first attempt, 2 for the first retry, … */
  readonly attempt: number;
  readonly startedAt: number;
  durationMs: number;
  readonly memoryMb: number;
  readonly ephemeralStorageMb: number;
  errorName: string | undefined;
  /** AWS requests the invocation sent, by `service:Operation`. */
  readonly requests: Map<string, number>;
}

export interface FaultContext {
  readonly state: string;
  readonly functionName: FunctionName;
  readonly input: unknown;
  readonly attempt: number;
  /** 'before' the handler runs, or 'after' it returned (its work done, its answer not yet delivered). */
  readonly phase: 'before' | 'after';
}

/** Throw from it to make an invocation fail (tests only). */
export type FaultHook = (call: FaultContext) => void | Promise<void>;

export type ProgressEvent =
  | { readonly kind: 'state-entered' | 'state-exited'; readonly state: string; readonly stateType: string; readonly index: number | undefined; readonly elapsedMs: number; readonly output?: unknown }
  | { readonly kind: 'state-failed' | 'state-retried' | 'state-caught'; readonly state: string; readonly stateType: string; readonly index: number | undefined; readonly elapsedMs: number; readonly error: string; readonly cause: string }
  | { readonly kind: 'group-finished'; readonly index: number; readonly elapsedMs: number; readonly outcome: string; readonly finished: number; readonly total: number }
  | { readonly kind: 'execution-finished'; readonly status: 'SUCCEEDED' | 'FAILED'; readonly elapsedMs: number };

export interface LocalRunOptions {
  /** The ASL text or file (default infra/state-machine.asl.json of this package). */
  readonly definitionFile?: string;
  /** Where the bundled handlers are (default dist/functions of this package). */
  readonly functionsDir?: string;
  readonly memoryMb?: Partial<Record<FunctionName, number>>;
  readonly architecture?: Architecture;
  /** Pause before each retry instead of the definition's IntervalSeconds/backoff (tests: a few ms). */
  readonly retryPauseMs?: number;
  /** Environment variables the handlers see during this run (TABLE_PATH, LOCK_TABLE, CLUSTERING_PROPERTIES, …). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly onProgress?: (event: ProgressEvent) => void;
  readonly fault?: FaultHook;
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
// Where things are.

/** The package root: the nearest folder above this module holding infra/state-machine.asl.json. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    if (existsSync(join(dir, 'infra', 'state-machine.asl.json'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

export function defaultDefinitionFile(): string {
  return join(packageRoot(), 'infra', 'state-machine.asl.json');
}

export function defaultFunctionsDir(): string {
  return join(packageRoot(), 'dist', 'functions');
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
    if (fn === undefined) throw new HudiError(`unknown substitution ${whole} in the state machine definition`, { location: file, fix: `use one of ${Object.keys(FUNCTION_SUBSTITUTIONS).join(', ')}` });
    return localFunctionArn(fn);
  });
  return JSON.parse(substituted) as StateMachineDefinition;
}

export function localFunctionArn(fn: FunctionName): string {
  return `arn:aws:lambda:us-east-1:000000000000:function:hudi-clustering-${fn}`;
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
      if (Array.isArray(record['Branches'])) for (const branch of record['Branches'] as { States?: Record<string, unknown> }[]) if (branch.States) visit(branch.States);
    }
  };
  visit(definition.States as unknown as Record<string, unknown>);
  return found;
}

const handlerCache = new Map<string, Promise<LambdaHandler>>();

/** The `handler` export of a bundled function (dist/functions/<name>.mjs). */
export function loadBundledHandler(fn: FunctionName, functionsDir: string = defaultFunctionsDir()): Promise<LambdaHandler> {
  const file = resolve(functionsDir, `${fn}.mjs`);
  let loading = handlerCache.get(file);
  if (loading === undefined) {
    loading = (async () => {
      if (!existsSync(file)) {
        throw new HudiError(`the bundled handler ${fn} is missing`, { location: file, fix: 'run `npm run build` first' });
      }
      const module: unknown = await import(pathToFileURL(file).href);
      const handler = typeof module === 'object' && module !== null && 'handler' in module ? module.handler : undefined;
      if (typeof handler !== 'function') throw new HudiError(`${file} exports no handler function`);
      return handler as LambdaHandler;
    })();
    handlerCache.set(file, loading);
  }
  return loading;
}

// ---------------------------------------------------------------------------------------------------------------
// Request attribution: one process-wide sink; each invocation runs in its own async context.

const currentInvocation = new AsyncLocalStorage<InvocationRecord>();
let sinkInstalled = false;

function ensureRequestSink(): void {
  if (sinkInstalled) return;
  installAwsRequestSink({
    record(service, operation) {
      const invocation = currentInvocation.getStore();
      if (invocation === undefined) return;
      const key = `${service}:${operation}`;
      invocation.requests.set(key, (invocation.requests.get(key) ?? 0) + 1);
    },
  });
  sinkInstalled = true;
}

/** Quiet handlers by default: their JSON logs would drown the progress lines (set the variables to see them). */
function quietPowertools(): void {
  process.env['POWERTOOLS_LOG_LEVEL'] ??= 'WARN';
  process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
}

/** A Lambda context as the runtime passes it (for calling a handler by hand). */
export function lambdaContext(fn: FunctionName, memoryMb: number = DEFAULT_MEMORY_MB[fn], timeoutMs: number = FUNCTIONS[fn].timeoutSeconds * 1000): Context {
  const deadline = Date.now() + timeoutMs;
  const name = `hudi-clustering-${fn}`;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: localFunctionArn(fn),
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: `local/${randomUUID()}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A Lambda error as Step Functions reports it: Error = errorType, Cause = the runtime's JSON. */
function asLambdaError(error: unknown): Error {
  const errorType = error instanceof Error ? error.name : 'Error';
  const errorMessage = error instanceof Error ? error.message : String(error);
  const trace = error instanceof Error ? (error.stack ?? '').split('\n') : [];
  const reported = new Error(JSON.stringify({ errorType, errorMessage, trace }));
  reported.name = errorType;
  return reported;
}

/** A state's data as Step Functions passes it: JSON, at most 256 KB. */
function asStatePayload(value: unknown, what: string): JsonValue {
  const text = JSON.stringify(value ?? null);
  if (Buffer.byteLength(text) > MAX_STATE_PAYLOAD_BYTES) {
    const error = new Error(`${what} is ${Buffer.byteLength(text)} bytes, over Step Functions' 256 KB`);
    error.name = 'States.DataLimitExceeded';
    throw error;
  }
  return JSON.parse(text) as JsonValue;
}

// ---------------------------------------------------------------------------------------------------------------
// Running.

/** Run one execution of the clustering state machine locally. Never throws for a failed execution: see `status`. */
export async function runStateMachineLocally(input: ClusteringExecutionInput, options: LocalRunOptions = {}): Promise<LocalExecution> {
  quietPowertools();
  ensureRequestSink();
  const definition = loadDefinition(options.definitionFile);
  const tasks = taskFunctions(definition);
  const functionsDir = options.functionsDir ?? defaultFunctionsDir();
  const memory = { ...DEFAULT_MEMORY_MB, ...options.memoryMb };
  const invocations: InvocationRecord[] = [];
  const attempts = new Map<string, number>();

  const handlers: Record<string, (input: JsonValue) => Promise<JsonValue>> = {};
  for (const [state, fn] of tasks) {
    handlers[state] = async (taskInput) => {
      const handler = await loadBundledHandler(fn, functionsDir);
      const groupIndex = typeof taskInput === 'object' && taskInput !== null && !Array.isArray(taskInput) && typeof taskInput['groupIndex'] === 'number' ? taskInput['groupIndex'] : undefined;
      const attemptKey = `${state}/${groupIndex ?? ''}`;
      const attempt = (attempts.get(attemptKey) ?? 0) + 1;
      attempts.set(attemptKey, attempt);
      const record: InvocationRecord = {
        functionName: fn,
        state,
        groupIndex,
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
        const output = await currentInvocation.run(record, async () => {
          await options.fault?.({ state, functionName: fn, input: event, attempt, phase: 'before' });
          const result = await handler(event, lambdaContext(fn, memory[fn], FUNCTIONS[fn].timeoutSeconds * 1000));
          await options.fault?.({ state, functionName: fn, input: event, attempt, phase: 'after' });
          return result;
        });
        return asStatePayload(output, `the output of ${state}`);
      } catch (error) {
        record.errorName = error instanceof Error ? error.name : 'Error';
        throw asLambdaError(error);
      } finally {
        record.durationMs = performance.now() - started;
      }
    };
  }

  const name = options.executionName ?? `local-${randomUUID()}`;
  const executionArn = `arn:aws:states:us-east-1:000000000000:execution:hudi-clustering:${name}`;
  const startedAt = new Date();
  const machine = new StateMachine(definition, { validationOptions: { checkArn: true, checkPaths: true } });
  const retryIntervalOverrides = options.retryPauseMs === undefined ? undefined : Object.fromEntries([...tasks.keys()].map((state) => [state, options.retryPauseMs!]));
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
      invocations: invocations.map((invocation) => ({ memoryMb: invocation.memoryMb, durationMs: invocation.durationMs, ephemeralStorageMb: invocation.ephemeralStorageMb })),
      requests,
      stateTransitions: transitions,
    });
    return { executionArn, name, status, output, error, cause, startedAt, durationMs, invocations, stateTransitions: transitions, requests, cost };
  } finally {
    restoreEnvironment();
  }
}

function applyEnvironment(environment: Readonly<Record<string, string>> | undefined): () => void {
  if (environment === undefined) return () => undefined;
  const saved = new Map(Object.keys(environment).map((key) => [key, process.env[key]]));
  for (const [key, value] of Object.entries(environment)) process.env[key] = value;
  return () => {
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
}

interface LoggedEvent {
  readonly type: string;
  readonly timestamp: number;
  readonly index?: number;
  readonly state?: { readonly name: string; readonly type: string; readonly output?: unknown };
  readonly Error?: string;
  readonly Cause?: unknown;
}

/** Count state transitions (what Standard workflows bill) and report progress while the execution runs. */
async function followEvents(
  logs: AsyncGenerator<unknown>,
  startedMs: number,
  onProgress: ((event: ProgressEvent) => void) | undefined,
): Promise<{ transitions: number }> {
  let transitions = 0;
  let groupsTotal = 0;
  let groupsFinished = 0;
  const emit = (event: ProgressEvent): void => {
    try {
      onProgress?.(event);
    } catch {
      // A progress printer must not break the run.
    }
  };
  for await (const raw of logs) {
    const event = raw as LoggedEvent;
    const elapsedMs = event.timestamp - startedMs;
    const state = event.state?.name ?? '';
    const stateType = event.state?.type ?? '';
    const index = event.index;
    switch (event.type) {
      case 'StateEntered':
        transitions += 1;
        if (event.state?.type === 'Map') {
          const items = (event.state as { input?: { groups?: unknown[] } }).input?.groups;
          groupsTotal = Array.isArray(items) ? items.length : 0;
        }
        emit({ kind: 'state-entered', state, stateType, index, elapsedMs });
        break;
      case 'StateExited':
        emit({ kind: 'state-exited', state, stateType, index, elapsedMs, output: event.state?.output });
        if (index !== undefined && (state === 'ExecuteGroup' || state === 'GroupFailed')) {
          groupsFinished += 1;
          const output = event.state?.output as { outcome?: unknown; groupIndex?: unknown } | undefined;
          emit({
            kind: 'group-finished',
            index: typeof output?.groupIndex === 'number' ? output.groupIndex : index,
            elapsedMs,
            outcome: typeof output?.outcome === 'string' ? output.outcome : state === 'GroupFailed' ? 'failed' : 'done',
            finished: groupsFinished,
            total: groupsTotal,
          });
        }
        break;
      case 'StateFailed':
      case 'StateRetried':
      case 'StateCaught': {
        if (event.type === 'StateRetried') transitions += 1;
        const kind = event.type === 'StateFailed' ? 'state-failed' : event.type === 'StateRetried' ? 'state-retried' : 'state-caught';
        emit({ kind, state, stateType, index, elapsedMs, error: event.Error ?? '', cause: typeof event.Cause === 'string' ? event.Cause : JSON.stringify(event.Cause ?? '') });
        break;
      }
      default:
        break;
    }
  }
  return { transitions };
}

// ---------------------------------------------------------------------------------------------------------------
// Progress as text.

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1).padStart(6)}s`;

/** The message of a Lambda error Cause (the runtime's JSON), else the Cause as it is. */
export function causeMessage(cause: string): string {
  try {
    const parsed: unknown = JSON.parse(cause);
    if (typeof parsed === 'object' && parsed !== null && 'errorMessage' in parsed && typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // not JSON
  }
  return cause;
}

/** One line per interesting event (undefined for the ones not worth a line). */
export function formatProgressEvent(event: ProgressEvent): string | undefined {
  switch (event.kind) {
    case 'state-entered':
      return event.index === undefined ? `[${seconds(event.elapsedMs)}] → ${event.state}` : undefined;
    case 'state-exited': {
      if (event.index !== undefined) return undefined;
      const output = event.output as { status?: unknown; instant?: unknown; groups?: unknown[]; resumed?: unknown; reason?: unknown } | undefined;
      if (event.state === 'Plan' && output !== undefined) {
        const detail = output.status === 'CLUSTER'
          ? `${output.resumed === true ? 'resumed' : 'planned'} clustering ${String(output.instant)}: ${Array.isArray(output.groups) ? output.groups.length : 0} group(s) to run`
          : `${String(output.status)}: ${String(output.reason ?? '')}`;
        return `[${seconds(event.elapsedMs)}] ✓ Plan — ${detail}`;
      }
      return `[${seconds(event.elapsedMs)}] ✓ ${event.state}`;
    }
    case 'group-finished':
      return `[${seconds(event.elapsedMs)}]   group ${event.index} ${event.outcome} (${event.finished}/${event.total})`;
    case 'state-retried':
      return `[${seconds(event.elapsedMs)}]   ↻ ${event.state}${event.index === undefined ? '' : ` #${event.index}`} retried after ${event.error}: ${causeMessage(event.cause).slice(0, 160)}`;
    case 'state-caught':
      return `[${seconds(event.elapsedMs)}]   ✗ ${event.state}${event.index === undefined ? '' : ` #${event.index}`} failed (${event.error}): ${causeMessage(event.cause).slice(0, 200)}`;
    case 'state-failed':
      return undefined;
    case 'execution-finished':
      return `[${seconds(event.elapsedMs)}] execution ${event.status.toLowerCase()}`;
  }
}
