/**
 * Lambda `compaction-execute`: merge one file slice of a pending compaction into its new base file (a Map iteration;
 * lib/serverless/steps/compaction/steps.ts). DuckDB's memory limit and spill folder follow this function's memory.
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { lambdaMemoryMb } from '../lib/serverless/aws/settings.js';
import { type CompactionOperationOutput, compactionExecuteStep, parseCompactionOperationEvent } from '../lib/serverless/steps/compaction/steps.js';
import { compactionOperationFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('compaction-execute');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CompactionOperationOutput> {
  return observability.invoke(
    context,
    async () =>
      compactionExecuteStep(parseCompactionOperationEvent(event), {
        env: await stepEnvironment(process.env, event, clients.s3),
        clients,
        log: observability.log,
        memoryMb: lambdaMemoryMb(process.env, context.memoryLimitInMB),
      }),
    compactionOperationFigures,
  );
}
