/**
 * Lambda `clean-schedule`: assemble the clean's plan from its shares and write T.clean.requested under the table lock (lib/serverless/clean-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { cleanScheduleStep, parseCleanScheduleEvent, type CleanStepOutput } from '../lib/serverless/clean-steps.js';
import { createObservability } from '../lib/serverless/observability.js';

const observability = createObservability('clean-schedule');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanStepOutput> {
  return observability.invoke(context, async () =>
    cleanScheduleStep(parseCleanScheduleEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
