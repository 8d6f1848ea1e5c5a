/**
 * Lambda `trigger`: on a schedule or a completed commit, start the clustering state machine (STATE_MACHINE_ARN) when
 * Hudi would schedule clustering, never twice for one table state (lib/serverless/steps/trigger/trigger.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { registryFromEnv } from '../lib/serverless/aws/registry.js';
import { sfnClientFromEnv } from '../lib/serverless/aws/sfn-client.js';
import { triggerFigures } from '../lib/serverless/steps/metrics.js';
import {
  parseTriggerEvent,
  StepFunctionsStarter,
  stateMachineArnFromEnv,
  type TriggerOutput,
  triggerStep,
  triggerWithRegistry,
} from '../lib/serverless/steps/trigger/trigger.js';

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
