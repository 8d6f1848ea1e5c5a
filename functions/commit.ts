/**
 * Lambda `commit`: read every group's result from storage and write the replacecommit under the table lock
 * (lib/serverless/commit-step.ts). Returns the run's report summary.
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { commitStep, parseCommitEvent, type CommitStepOutput } from '../lib/serverless/commit-step.js';
import { commitFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';

const observability = createObservability('commit');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CommitStepOutput> {
  return observability.invoke(
    context,
    async () => commitStep(parseCommitEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    commitFigures,
  );
}
