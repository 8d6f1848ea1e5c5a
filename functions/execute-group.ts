/**
 * Lambda `execute-group`: run one group of a pending clustering (lib/serverless/steps/clustering/execute.ts). DuckDB's memory
 * limit and spill folder follow this function's memory and /tmp (lambdaEngineOptions).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { lambdaMemoryMb } from '../lib/serverless/aws/settings.js';
import { type ExecuteGroupOutput, executeGroupStep, parseExecuteGroupEvent } from '../lib/serverless/steps/clustering/execute.js';
import { executeGroupFigures } from '../lib/serverless/steps/metrics.js';

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
