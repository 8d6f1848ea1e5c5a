/**
 * Lambda `rollback`: after a failed attempt, delete its files and keep the plan for a later run; with
 * `{"abandon": true}` roll the plan back entirely (lib/serverless/steps/clustering/rollback.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { parseRollbackEvent, type RollbackStepOutput, rollbackStep } from '../lib/serverless/steps/clustering/rollback.js';

const observability = createObservability('rollback');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<RollbackStepOutput> {
  return observability.invoke(context, async () =>
    rollbackStep(parseRollbackEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
