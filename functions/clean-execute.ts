/**
 * Lambda `clean-execute`: delete one share of a clean's files (lib/serverless/clean-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { cleanExecuteShareStep, parseCleanExecuteShareEvent, type CleanShareOutput } from '../lib/serverless/clean-steps.js';
import { createObservability } from '../lib/serverless/observability.js';

const observability = createObservability('clean-execute');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanShareOutput> {
  return observability.invoke(context, () => cleanExecuteShareStep(parseCleanExecuteShareEvent(event), { env: process.env, clients, log: observability.log }));
}
