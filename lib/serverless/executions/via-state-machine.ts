/**
 * `hudi-serverless cluster <table> --via-state-machine <ARN>`: one clustering run through a deployed state machine
 * (StartExecution, then DescribeExecution and GetExecutionHistory until it ends, printing progress). The local run
 * (`--via-state-machine local`) is local/via-state-machine.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, type HistoryEvent, type SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { HudiError } from '../../errors.js';
import { stateErrorMessage } from '../aws/errors.js';
import { ANY_BUT_DEPLOYMENT_ONLY, assertEventProperties } from '../aws/event-properties.js';
import type { ClusteringExecutionInput, PropertyOverrides } from '../aws/settings.js';
import { sfnClientFromEnv } from '../aws/sfn-client.js';

/** What a run through the state machine is, wherever the state machine runs. */
export interface ViaStateMachineRun {
  /** Hudi properties for this run (the execution input's `properties`). */
  readonly properties?: PropertyOverrides;
  /** Plan even before max.commits commits since the last clustering, when inline or async clustering asks to wait (the CLI's --force). */
  readonly force?: boolean;
  /** Progress lines (state transitions, groups finishing). */
  readonly onProgress?: (line: string) => void;
}

export interface ViaStateMachineOptions extends ViaStateMachineRun {
  /** The ARN of a deployed clustering state machine. */
  readonly stateMachine: string;
  /** The client (default from the environment) and how often to poll (default 2 s). */
  readonly sfnClient?: SFNClient;
  readonly pollMs?: number;
  /** The execution name (default `hudi-cli-<time>`). */
  readonly executionName?: string;
}

export interface ViaStateMachineResult {
  readonly status: 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  readonly executionArn: string;
  /** The execution's output: the run's state at its end (TableServicesOutput, run-output.ts). */
  readonly output: unknown;
  readonly error: string | undefined;
  readonly cause: string | undefined;
  readonly durationMs: number;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);

/** The execution input of a run. */
export function clusteringExecutionInput(tablePath: string, run: ViaStateMachineRun): ClusteringExecutionInput {
  return {
    tablePath,
    ...(run.properties === undefined ? {} : { properties: run.properties }),
    ...(run.force === true ? { force: true } : {}),
  };
}

export async function clusterViaStateMachine(tablePath: string, options: ViaStateMachineOptions): Promise<ViaStateMachineResult> {
  if (!options.stateMachine.startsWith('arn:')) {
    throw new HudiError(`--via-state-machine ${options.stateMachine} is neither "local" nor a state machine ARN`, {
      fix: 'pass local, or arn:aws:states:<region>:<account>:stateMachine:<name> (the stack output ClusteringStateMachineArn)',
    });
  }
  // The deployed functions take the lock, credentials and table settings from their stack only, and refuse them in
  // an execution input: say so before starting an execution (what else the deployment allows only it knows).
  assertEventProperties(Object.keys(options.properties ?? {}), ANY_BUT_DEPLOYMENT_ONLY, "the run's properties (--props), sent as the execution input");
  return runDeployed(clusteringExecutionInput(tablePath, options), options, options.onProgress ?? (() => undefined));
}

async function runDeployed(input: ClusteringExecutionInput, options: ViaStateMachineOptions, progress: (line: string) => void): Promise<ViaStateMachineResult> {
  const client = options.sfnClient ?? sfnClientFromEnv();
  const started = Date.now();
  const name =
    options.executionName ??
    `hudi-cli-${new Date()
      .toISOString()
      .replace(/[^0-9]/g, '')
      .slice(0, 17)}`;
  const { executionArn } = await client.send(new StartExecutionCommand({ stateMachineArn: options.stateMachine, name, input: JSON.stringify(input) }));
  if (executionArn === undefined) throw new HudiError('StartExecution returned no execution ARN', { location: options.stateMachine });
  progress(`started ${executionArn}`);
  let seen = 0;
  for (;;) {
    await sleep(options.pollMs ?? 2000);
    seen = await printNewHistory(client, executionArn, seen, started, progress);
    const description = await client.send(new DescribeExecutionCommand({ executionArn }));
    const status = description.status ?? 'RUNNING';
    if (!TERMINAL.has(status)) continue;
    await printNewHistory(client, executionArn, seen, started, progress);
    return {
      status: status as ViaStateMachineResult['status'],
      executionArn,
      output: description.output === undefined ? undefined : (JSON.parse(description.output) as unknown),
      error: description.error,
      cause: description.cause,
      durationMs: Date.now() - started,
    };
  }
}

/** Print history events after the first `seen`; returns how many there are now. */
async function printNewHistory(client: SFNClient, executionArn: string, seen: number, started: number, progress: (line: string) => void): Promise<number> {
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, ...(nextToken === undefined ? {} : { nextToken }) }));
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken !== undefined);
  for (const event of events.slice(seen)) {
    const line = historyLine(event);
    if (line !== undefined) progress(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${line}`);
  }
  return Math.max(seen, events.length);
}

function historyLine(event: HistoryEvent): string | undefined {
  const type = event.type ?? '';
  if (type.endsWith('StateEntered')) {
    const details = event.stateEnteredEventDetails as { name?: string; index?: number } | undefined;
    return details?.index === undefined ? `→ ${details?.name ?? type}` : undefined;
  }
  if (type === 'MapIterationSucceeded') return `  group iteration ${event.mapIterationSucceededEventDetails?.index ?? '?'} done`;
  if (type === 'MapIterationFailed') return `  group iteration ${event.mapIterationFailedEventDetails?.index ?? '?'} failed`;
  if (type === 'TaskFailed' || type === 'LambdaFunctionFailed') {
    const details = (event.taskFailedEventDetails ?? event.lambdaFunctionFailedEventDetails) as { error?: string; cause?: string } | undefined;
    return `  ✗ ${details?.error ?? 'error'}: ${stateErrorMessage({ Error: details?.error ?? 'error', Cause: details?.cause ?? '' }).slice(0, 200)}`;
  }
  if (type === 'ExecutionSucceeded' || type === 'ExecutionFailed' || type === 'ExecutionTimedOut' || type === 'ExecutionAborted') return type;
  return undefined;
}
