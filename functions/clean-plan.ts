/**
 * Lambda `clean-plan`: list and plan one share of partitions of a clean (lib/serverless/steps/cleaning/plan-share.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CleanShareOutput, cleanPlanShareStep, parseCleanPlanShareEvent } from '../lib/serverless/steps/cleaning/index.js';

const observability = createObservability('clean-plan');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanShareOutput> {
  return observability.invoke(context, async () =>
    cleanPlanShareStep(parseCleanPlanShareEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
