/**
 * Lambda `execute-group`: run one group of a pending clustering (lib/serverless/execute-step.ts). DuckDB's memory
 * limit and spill folder follow this function's memory and /tmp (lambdaEngineOptions).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { executeGroupStep, parseExecuteGroupEvent, type ExecuteGroupOutput } from '../lib/serverless/execute-step.js';
import { executeGroupFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';
import { lambdaMemoryMb } from '../lib/serverless/settings.js';

const observability = createObservability('execute-group');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<ExecuteGroupOutput> {
  return observability.invoke(
    context,
    async () =>
      executeGroupStep(parseExecuteGroupEvent(event), {
        env: await stepEnvironment(process.env, event, clients.s3),
        clients,
        log: observability.log,
        memoryMb: lambdaMemoryMb(process.env, context.memoryLimitInMB),
      }),
    executeGroupFigures,
  );
}
