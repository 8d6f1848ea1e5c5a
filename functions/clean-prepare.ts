/**
 * Lambda `clean-prepare`: finish a pending clean, or split the planning of a due clean into partition shares (lib/serverless/clean-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { cleanPrepareStep, parseCleanPrepareEvent, type CleanStepOutput } from '../lib/serverless/clean-steps.js';
import { createObservability } from '../lib/serverless/observability.js';

const observability = createObservability('clean-prepare');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanStepOutput> {
  return observability.invoke(context, async () =>
    cleanPrepareStep(parseCleanPrepareEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
