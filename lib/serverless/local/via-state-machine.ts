/**
 * `hudi-serverless cluster <table> --via-state-machine local`: one clustering run through the state machine's
 * definition on this machine, with the bundled handlers (state-machine.ts), priced as on AWS. A deployed state
 * machine is ../via-state-machine.ts.
 */
import type { CostEstimate } from '../cost.js';
import { clusteringExecutionInput, type ViaStateMachineResult, type ViaStateMachineRun } from '../via-state-machine.js';
import { formatProgressEvent } from './progress.js';
import { runStateMachineLocally, type LocalExecution, type LocalRunOptions } from './state-machine.js';

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
  const local = await runStateMachineLocally(clusteringExecutionInput(tablePath, options), {
    ...options.local,
    onProgress: (event) => {
      const line = formatProgressEvent(event);
      if (line !== undefined) progress(line);
    },
  });
  return { status: local.status, executionArn: local.executionArn, output: local.output, error: local.error, cause: local.cause, durationMs: local.durationMs, cost: local.cost, local };
}
