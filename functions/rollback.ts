/**
 * Lambda `rollback`: after a failed attempt, delete its files and keep the plan for a later run; with
 * `{"abandon": true}` roll the plan back entirely (lib/serverless/rollback-step.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { createObservability } from '../lib/serverless/observability.js';
import { parseRollbackEvent, rollbackStep, type RollbackStepOutput } from '../lib/serverless/rollback-step.js';

const observability = createObservability('rollback');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<RollbackStepOutput> {
  return observability.invoke(context, async () =>
    rollbackStep(parseRollbackEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
