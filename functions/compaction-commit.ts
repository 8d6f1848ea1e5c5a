/**
 * Lambda `compaction-commit`: Commits a compaction from its operations' stored results, under the table lock (lib/serverless/compaction-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { parseCompactionInstantEvent, compactionCommitStep, type CompactionCommitOutput } from '../lib/serverless/compaction-steps.js';
import { compactionCommitFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';
import { stepEnvironment } from '../lib/serverless/registry.js';

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
