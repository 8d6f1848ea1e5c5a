/**
 * Lambda `clean-plan`: list and plan one share of partitions of a clean (lib/serverless/clean-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { cleanPlanShareStep, parseCleanPlanShareEvent, type CleanShareOutput } from '../lib/serverless/clean-steps.js';
import { createObservability } from '../lib/serverless/observability.js';

const observability = createObservability('clean-plan');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanShareOutput> {
  return observability.invoke(context, () => cleanPlanShareStep(parseCleanPlanShareEvent(event), { env: process.env, clients, log: observability.log }));
}
