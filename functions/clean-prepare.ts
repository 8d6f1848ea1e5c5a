/**
 * Lambda `clean-prepare`: finish a pending clean, or split the planning of a due clean into partition shares (lib/serverless/steps/cleaning/prepare.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CleanStepOutput, cleanPrepareStep, parseCleanPrepareEvent } from '../lib/serverless/steps/cleaning/index.js';

const observability = createObservability('clean-prepare');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanStepOutput> {
  return observability.invoke(context, async () =>
    cleanPrepareStep(parseCleanPrepareEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
