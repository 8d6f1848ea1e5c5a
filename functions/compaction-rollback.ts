/**
 * Lambda `compaction-rollback`: Rolls a failed compaction attempt back to requested (its outputs deleted; the plan stays) (lib/serverless/compaction-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { parseCompactionInstantEvent, compactionRollbackStep, type CompactionRollbackOutput } from '../lib/serverless/compaction-steps.js';
import { createObservability } from '../lib/serverless/observability.js';
import { stepEnvironment } from '../lib/serverless/registry.js';

const observability = createObservability('compaction-rollback');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CompactionRollbackOutput> {
  return observability.invoke(context, async () =>
    compactionRollbackStep(parseCompactionInstantEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
