/**
 * Lambda `compaction-rollback`: Rolls a failed compaction attempt back to requested (its outputs deleted; the plan stays) (lib/serverless/steps/compaction/steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CompactionRollbackOutput, compactionRollbackStep, parseCompactionInstantEvent } from '../lib/serverless/steps/compaction/steps.js';

const observability = createObservability('compaction-rollback');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CompactionRollbackOutput> {
  return observability.invoke(context, async () =>
    compactionRollbackStep(parseCompactionInstantEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
