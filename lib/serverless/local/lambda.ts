/**
 * Lambda, emulated in this process for the local runner: the bundled handlers (dist/functions/*.mjs, `npm run
 * build`) loaded as Lambda loads them, a context with the template's memory and timeout (function-settings.ts),
 * payloads as JSON within Step Functions' 256 KB, errors reported as Step Functions sees a Lambda error (Error = the
 * error's name, Cause = the runtime's JSON), the handlers' environment, and their AWS requests attributed to the
 * invocation that sent them (clients.ts counts them).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { HudiError } from '../../errors.js';
import { installAwsRequestSink } from '../aws/clients.js';
import { type DeployedFunction, FUNCTIONS } from '../aws/function-settings.js';

/** The functions the state machine and its trigger use. */
export type FunctionName = Exclude<DeployedFunction, 'ingest'>;

export type LambdaHandler = (event: unknown, context: Context) => Promise<unknown>;
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Step Functions' limit on a state's input or output. */
export const MAX_STATE_PAYLOAD_BYTES = 256 * 1024;

/** One handler invocation, as the cost estimate bills it. */
export interface InvocationRecord {
  readonly functionName: DeployedFunction;
  /** The Task state's name. */
  readonly state: string;
  readonly groupIndex: number | undefined;
  /** A clean's planning or delete share (the clean Map iterations). */
  readonly shareIndex: number | undefined;
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

export function defaultFunctionsDir(): string {
  return join(packageRoot(), 'dist', 'functions');
}

export function localFunctionArn(fn: DeployedFunction): string {
  return `arn:aws:lambda:us-east-1:000000000000:function:hudi-clustering-${fn}`;
}

const handlerCache = new Map<string, Promise<LambdaHandler>>();

/**
 * Where a function's bundle is in functionsDir: `sam build`'s layout (<logical id>/<name>.mjs, .aws-sam/build, what
 * `sam deploy` ships) when it holds one, else dist's (<name>.mjs, `npm run build`).
 */
export function bundledHandlerFile(fn: DeployedFunction, functionsDir: string = defaultFunctionsDir()): string {
  const built = resolve(functionsDir, FUNCTIONS[fn].resource, `${fn}.mjs`);
  return existsSync(built) ? built : resolve(functionsDir, `${fn}.mjs`);
}

/** The `handler` export of a bundled function (dist/functions/<name>.mjs, or .aws-sam/build/<Resource>/<name>.mjs). */
export function loadBundledHandler(fn: DeployedFunction, functionsDir: string = defaultFunctionsDir()): Promise<LambdaHandler> {
  const file = bundledHandlerFile(fn, functionsDir);
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
// The invocation.

/** A Lambda context as the runtime passes it (for calling a handler by hand). */
export function lambdaContext(
  fn: DeployedFunction,
  memoryMb: number = FUNCTIONS[fn].memoryMb,
  timeoutMs: number = FUNCTIONS[fn].timeoutSeconds * 1000,
): Context {
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
export function asLambdaError(error: unknown): Error {
  const errorType = error instanceof Error ? error.name : 'Error';
  const errorMessage = error instanceof Error ? error.message : String(error);
  const trace = error instanceof Error ? (error.stack ?? '').split('\n') : [];
  const reported = new Error(JSON.stringify({ errorType, errorMessage, trace }));
  reported.name = errorType;
  return reported;
}

/** A state's data as Step Functions passes it: JSON, at most 256 KB. */
export function asStatePayload(value: unknown, what: string): JsonValue {
  const text = JSON.stringify(value ?? null);
  if (Buffer.byteLength(text) > MAX_STATE_PAYLOAD_BYTES) {
    const error = new Error(`${what} is ${Buffer.byteLength(text)} bytes, over Step Functions' 256 KB`);
    error.name = 'States.DataLimitExceeded';
    throw error;
  }
  return JSON.parse(text) as JsonValue;
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

/** Run `work` as the invocation `record`: the AWS requests it sends are counted in `record.requests`. */
export function asInvocation<T>(record: InvocationRecord, work: () => Promise<T>): Promise<T> {
  ensureRequestSink();
  return currentInvocation.run(record, work);
}

// ---------------------------------------------------------------------------------------------------------------
// The environment.

/** Quiet handlers by default: their JSON logs would drown the progress lines (set the variables to see them). */
export function quietPowertools(): void {
  process.env['POWERTOOLS_LOG_LEVEL'] ??= 'WARN';
  process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
}

/** Set the handlers' environment variables (process-wide); returns what restores the previous values. */
export function applyEnvironment(environment: Readonly<Record<string, string>> | undefined): () => void {
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
