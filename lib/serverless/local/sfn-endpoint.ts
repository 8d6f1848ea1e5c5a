/**
 * A local stand-in for the Step Functions API, enough for the trigger Lambda and `cluster --via-state-machine <ARN>`:
 * StartExecution (with AWS's name rules: the same name and input as a running execution returns it, any other reuse
 * of a name is ExecutionAlreadyExists), DescribeExecution and GetExecutionHistory, speaking the AWS JSON 1.0
 * protocol on a loopback port. Executions run the real definition with the bundled handlers (state-machine.ts).
 * Point an SDK at it with AWS_ENDPOINT_URL_SFN. One endpoint can hold several state machines (`stateMachines`), as
 * one account does: a writer's SFN client then starts table services and compaction alike.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClusteringExecutionInput } from '../aws/settings.js';
import type { ProgressEvent } from './progress.js';
import { type LocalExecution, type LocalRunOptions, runStateMachineLocally } from './state-machine.js';

export interface HistoryEvent {
  readonly id: number;
  readonly previousEventId: number;
  readonly timestamp: number;
  readonly type: string;
  readonly [details: string]: unknown;
}

export interface LocalExecutionState {
  readonly name: string;
  readonly stateMachineArn: string;
  readonly executionArn: string;
  readonly input: string;
  readonly startDate: Date;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  result: LocalExecution | undefined;
  readonly history: HistoryEvent[];
  readonly done: Promise<void>;
}

export interface LocalStepFunctions {
  /** For AWS_ENDPOINT_URL_SFN. */
  readonly endpoint: string;
  /** The first state machine's. */
  readonly stateMachineArn: string;
  /** A state machine's ARN by its name. */
  arnOf(stateMachineName: string): string;
  /** Every execution started, in order. */
  executions(): readonly LocalExecutionState[];
  /** Resolves once every execution started so far has finished. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const NAME_RULE = /^[A-Za-z0-9_-]{1,80}$/;

/** One state machine of the endpoint: its name (in its ARN) and its definition (default: LocalRunOptions'). */
export interface LocalStateMachine {
  readonly name: string;
  readonly definitionFile?: string;
}

export async function startLocalStepFunctionsEndpoint(
  options: LocalRunOptions & { readonly stateMachineName?: string; readonly stateMachines?: readonly LocalStateMachine[] } = {},
): Promise<LocalStepFunctions> {
  const machines = options.stateMachines ?? [{ name: options.stateMachineName ?? 'hudi-clustering' }];
  const arnOf = (name: string): string => `arn:aws:states:us-east-1:000000000000:stateMachine:${name}`;
  const definitionOf = new Map(machines.map((machine) => [arnOf(machine.name), machine]));
  const stateMachineArn = arnOf(machines[0]?.name ?? 'hudi-clustering');
  // By execution ARN: names are unique per state machine.
  const executions = new Map<string, LocalExecutionState>();

  const start = (body: Record<string, unknown>): { executionArn: string; startDate: number } => {
    const machine = definitionOf.get(String(body['stateMachineArn']));
    if (machine === undefined) throw new ApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${String(body['stateMachineArn'])}'`);
    const name = typeof body['name'] === 'string' ? body['name'] : `local-${Date.now()}-${Math.random().toString(36).slice(2, 10)}`;
    if (!NAME_RULE.test(name)) throw new ApiError('InvalidName', `Invalid Name: '${name}'`);
    const input = typeof body['input'] === 'string' ? body['input'] : '{}';
    const executionArn = `arn:aws:states:us-east-1:000000000000:execution:${machine.name}:${name}`;
    const existing = executions.get(executionArn);
    if (existing !== undefined) {
      if (existing.status === 'RUNNING' && existing.input === input)
        return { executionArn: existing.executionArn, startDate: existing.startDate.getTime() / 1000 };
      throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.executionArn}'`);
    }
    let parsed: ClusteringExecutionInput;
    try {
      parsed = JSON.parse(input) as ClusteringExecutionInput;
    } catch {
      throw new ApiError('InvalidExecutionInput', 'Invalid State Machine Execution Input: not JSON');
    }
    const history: HistoryEvent[] = [];
    const record = (type: string, details: Record<string, unknown> = {}): void => {
      history.push({ id: history.length + 1, previousEventId: history.length, timestamp: Date.now() / 1000, type, ...details });
    };
    record('ExecutionStarted', { executionStartedEventDetails: { input, roleArn: 'arn:aws:iam::000000000000:role/local' } });
    const state: LocalExecutionState = {
      name,
      stateMachineArn: arnOf(machine.name),
      executionArn,
      input,
      startDate: new Date(),
      status: 'RUNNING',
      result: undefined,
      history,
      done: runStateMachineLocally(parsed, {
        ...options,
        ...(machine.definitionFile === undefined ? {} : { definitionFile: machine.definitionFile }),
        executionName: name,
        onProgress: (event) => {
          recordHistory(record, event);
          options.onProgress?.(event);
        },
      }).then(
        (result) => {
          state.result = result;
          state.status = result.status;
        },
        (error: unknown) => {
          state.status = 'FAILED';
          record('ExecutionFailed', {
            executionFailedEventDetails: { error: 'States.Runtime', cause: error instanceof Error ? error.message : String(error) },
          });
        },
      ),
    };
    executions.set(executionArn, state);
    return { executionArn, startDate: state.startDate.getTime() / 1000 };
  };

  const find = (body: Record<string, unknown>): LocalExecutionState => {
    const found = executions.get(String(body['executionArn']));
    if (found === undefined) throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${String(body['executionArn'])}'`);
    return found;
  };

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    StartExecution: start,
    DescribeExecution(body) {
      const execution = find(body);
      return {
        executionArn: execution.executionArn,
        stateMachineArn: execution.stateMachineArn,
        name: execution.name,
        status: execution.status,
        startDate: execution.startDate.getTime() / 1000,
        input: execution.input,
        ...(execution.result === undefined
          ? {}
          : {
              stopDate: (execution.startDate.getTime() + execution.result.durationMs) / 1000,
              ...(execution.result.status === 'SUCCEEDED'
                ? { output: JSON.stringify(execution.result.output ?? null) }
                : { error: execution.result.error, cause: execution.result.cause }),
            }),
      };
    },
    GetExecutionHistory(body) {
      const execution = find(body);
      const events = body['reverseOrder'] === true ? [...execution.history].reverse() : execution.history;
      return { events };
    },
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target'] ?? '');
      const operation = target.slice(target.indexOf('.') + 1);
      const reply = (status: number, payload: unknown, errorType?: string): void => {
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...(errorType === undefined ? {} : { 'x-amzn-errortype': errorType }) });
        response.end(JSON.stringify(payload));
      };
      try {
        const handle = operations[operation];
        if (handle === undefined) throw new ApiError('UnknownOperationException', `${operation} is not implemented by the local endpoint`);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        reply(200, handle(body));
      } catch (error) {
        const type = error instanceof ApiError ? error.type : 'InternalFailure';
        reply(400, { __type: type, message: error instanceof Error ? error.message : String(error) }, type);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    stateMachineArn,
    arnOf,
    executions: () => [...executions.values()],
    async settled() {
      for (;;) {
        const running = [...executions.values()].filter((execution) => execution.status === 'RUNNING');
        if (running.length === 0) return;
        await Promise.all(running.map((execution) => execution.done));
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The local run's progress as AWS history events (the subset `cluster --via-state-machine` prints). */
function recordHistory(record: (type: string, details?: Record<string, unknown>) => void, event: ProgressEvent): void {
  switch (event.kind) {
    case 'state-entered':
      record(`${event.stateType}StateEntered`, {
        stateEnteredEventDetails: { name: event.state, ...(event.index === undefined ? {} : { index: event.index }) },
      });
      break;
    case 'state-exited':
      record(`${event.stateType}StateExited`, {
        stateExitedEventDetails: {
          name: event.state,
          ...(event.index === undefined ? {} : { index: event.index }),
          output: JSON.stringify(event.output ?? null),
        },
      });
      break;
    case 'state-retried':
    case 'state-caught':
      record('TaskFailed', { taskFailedEventDetails: { resourceType: 'lambda', resource: event.state, error: event.error, cause: event.cause } });
      break;
    case 'group-finished':
      record('MapIterationSucceeded', { mapIterationSucceededEventDetails: { name: 'ExecuteGroups', index: event.index } });
      break;
    case 'execution-finished':
      record(event.status === 'SUCCEEDED' ? 'ExecutionSucceeded' : 'ExecutionFailed');
      break;
    case 'state-failed':
      break;
  }
}
