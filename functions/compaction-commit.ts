/**
 * Lambda `compaction-commit`: Commits a compaction from its operations' stored results, under the table lock (lib/serverless/steps/compaction/steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CompactionCommitOutput, compactionCommitStep, parseCompactionInstantEvent } from '../lib/serverless/steps/compaction/steps.js';
import { compactionCommitFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('compaction-commit');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CompactionCommitOutput> {
  return observability.invoke(
    context,
    async () =>
      compactionCommitStep(parseCompactionInstantEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    compactionCommitFigures,
  );
}
