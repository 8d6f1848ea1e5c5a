/**
 * Lambda `clean-plan`: list and plan one share of partitions of a clean (lib/serverless/clean-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { cleanPlanShareStep, parseCleanPlanShareEvent, type CleanShareOutput } from '../lib/serverless/clean-steps.js';
import { createObservability } from '../lib/serverless/observability.js';

const observability = createObservability('clean-plan');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanShareOutput> {
  return observability.invoke(context, async () =>
    cleanPlanShareStep(parseCleanPlanShareEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
