/**
 * Lambda `trigger`: on a schedule or a completed commit, start the clustering state machine (STATE_MACHINE_ARN) when
 * Hudi would schedule clustering, never twice for one table state (lib/serverless/trigger.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { createObservability } from '../lib/serverless/observability.js';
import { parseTriggerEvent, sfnClientFromEnv, stateMachineArnFromEnv, StepFunctionsStarter, triggerStep, type TriggerOutput } from '../lib/serverless/trigger.js';

const observability = createObservability('trigger');
const clients = serviceClientsFromEnv();
let starter: StepFunctionsStarter | undefined;

export async function handler(event: unknown, context: Context): Promise<TriggerOutput> {
  return observability.invoke(context, () => {
    starter ??= new StepFunctionsStarter(sfnClientFromEnv(process.env), stateMachineArnFromEnv(process.env));
    return triggerStep(parseTriggerEvent(event), { env: process.env, clients, log: observability.log, starter });
  });
}
