/**
 * What every Lambda step shares: its dependencies (environment, AWS clients, log, clock) and the run input the
 * state machine passes to a run's first step (clustering's plan, compaction's schedule).
 */
import type { ServiceClients } from '../aws/clients.js';
import type { StepLog } from '../aws/observability.js';
import type { ClusteringExecutionInput, Environment } from '../aws/settings.js';
import { asObject, executionInputOf, type JsonObject, optionalString } from './events.js';

export interface StepDependencies {
  readonly env: Environment;
  readonly clients: ServiceClients;
  readonly log: StepLog;
  readonly now?: () => Date;
}

export interface PlanStepInput extends ClusteringExecutionInput {
  /** The Step Functions execution (its id): a retried plan step recognises a plan its own run claimed. */
  readonly runId?: string;
}

/**
 * Accepts the state machine's `{input, runId}` wrapper or a bare execution input (a direct invocation): the plan
 * step's event, and compaction's schedule step's.
 */
export function parseRunEvent(event: unknown, what: string): PlanStepInput {
  const object = asObject(event, what);
  const wrapped = object['input'] !== undefined && typeof object['input'] === 'object' && object['input'] !== null;
  const inputObject: JsonObject = wrapped ? asObject(object['input'], `${what} input`) : object;
  const runId = optionalString(object, 'runId', what);
  return { ...executionInputOf(inputObject, `${what} input`), ...(runId === undefined ? {} : { runId }) };
}
