/**
 * `hudi-serverless cluster <table> --via-state-machine local`: one clustering run through the state machine's
 * definition on this machine, with the bundled handlers (state-machine.ts), priced as on AWS. A deployed state
 * machine is ../executions/via-state-machine.ts.
 *
 * A local run is its own deployment: the run's properties that an execution input may not carry (lock settings,
 * keys outside EVENT_ALLOWED_PROPERTIES) become the handlers' CLUSTERING_PROPERTIES for the run, over the
 * environment's own; the others go into the execution input, as a deployed run's would.
 */
import type { CostEstimate } from '../aws/cost.js';
import { eventMaySet, eventPropertyPolicy } from '../aws/event-properties.js';
import { ENV, type PropertyOverrides, parsePropertiesText } from '../aws/settings.js';
import { clusteringExecutionInput, type ViaStateMachineResult, type ViaStateMachineRun } from '../executions/via-state-machine.js';
import { formatProgressEvent } from './progress.js';
import { type LocalExecution, type LocalRunOptions, runStateMachineLocally } from './state-machine.js';

export interface LocalViaStateMachineOptions extends ViaStateMachineRun {
  /** Where the definition and bundles are, memory sizes, environment for the handlers. */
  readonly local?: Omit<LocalRunOptions, 'onProgress'>;
}

export interface LocalViaStateMachineResult extends ViaStateMachineResult {
  readonly status: 'SUCCEEDED' | 'FAILED';
  /** The measured run priced as on AWS. */
  readonly cost: CostEstimate;
  readonly local: LocalExecution;
}

export async function clusterViaLocalStateMachine(tablePath: string, options: LocalViaStateMachineOptions = {}): Promise<LocalViaStateMachineResult> {
  const progress = options.onProgress ?? (() => undefined);
  const { event, environment } = splitRunProperties(options.properties ?? {}, { ...process.env, ...options.local?.environment });
  const local = await runStateMachineLocally(clusteringExecutionInput(tablePath, { ...options, properties: event }), {
    ...options.local,
    environment: { ...options.local?.environment, ...environment },
    onProgress: (event) => {
      const line = formatProgressEvent(event);
      if (line !== undefined) progress(line);
    },
  });
  return {
    status: local.status,
    executionArn: local.executionArn,
    output: local.output,
    error: local.error,
    cause: local.cause,
    durationMs: local.durationMs,
    cost: local.cost,
    local,
  };
}

/** The run's properties an execution input may carry, and the environment (CLUSTERING_PROPERTIES) for the rest. */
export function splitRunProperties(
  properties: PropertyOverrides,
  env: Readonly<Record<string, string | undefined>>,
): { event: PropertyOverrides; environment: Record<string, string> } {
  const policy = eventPropertyPolicy(env);
  const event: Record<string, PropertyOverrides[string]> = {};
  const deployment: Record<string, string> = {};
  for (const [key, value] of Object.entries(properties)) {
    if (eventMaySet(key, policy)) event[key] = value;
    else deployment[key] = Array.isArray(value) ? value.join(',') : String(value);
  }
  if (Object.keys(deployment).length === 0) return { event, environment: {} };
  const existingText = env[ENV.clusteringProperties] ?? '';
  const existing = existingText.trim() === '' ? new Map<string, string>() : parsePropertiesText(existingText, ENV.clusteringProperties);
  return { event, environment: { [ENV.clusteringProperties]: JSON.stringify({ ...Object.fromEntries(existing), ...deployment }) } };
}
