/**
 * Lambda `commit`: read every group's result from storage and write the replacecommit under the table lock
 * (lib/serverless/steps/clustering/commit.ts). Returns the run's report summary.
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CommitStepOutput, commitStep, parseCommitEvent } from '../lib/serverless/steps/clustering/commit.js';
import { commitFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('commit');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CommitStepOutput> {
  return observability.invoke(
    context,
    async () => commitStep(parseCommitEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    commitFigures,
  );
}
