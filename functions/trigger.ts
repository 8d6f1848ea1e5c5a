/**
 * Lambda `trigger`: on a schedule or a completed commit, start the clustering state machine (STATE_MACHINE_ARN) when
 * Hudi would schedule clustering, never twice for one table state (lib/serverless/trigger.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { triggerFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';
import { registryFromEnv } from '../lib/serverless/registry.js';
import {
  parseTriggerEvent,
  sfnClientFromEnv,
  stateMachineArnFromEnv,
  StepFunctionsStarter,
  triggerStep,
  triggerWithRegistry,
  type TriggerOutput,
} from '../lib/serverless/trigger.js';

const observability = createObservability('trigger');
const clients = serviceClientsFromEnv();
let starter: StepFunctionsStarter | undefined;

export async function handler(event: unknown, context: Context): Promise<TriggerOutput> {
  return observability.invoke(
    context,
    async () => {
      starter ??= new StepFunctionsStarter(sfnClientFromEnv(process.env), stateMachineArnFromEnv(process.env));
      const deps = { env: process.env, clients, log: observability.log, starter };
      // With a table registry (TABLE_REGISTRY), a tick fans out over the registered tables that are due.
      const registry = await registryFromEnv(process.env, clients.s3);
      return registry === undefined ? triggerStep(parseTriggerEvent(event), deps) : triggerWithRegistry(parseTriggerEvent(event), { ...deps, registry });
    },
    triggerFigures,
  );
}
