/**
 * Lambda `clean-schedule`: assemble the clean's plan from its shares and write T.clean.requested under the table lock (lib/serverless/steps/cleaning/schedule.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CleanStepOutput, cleanScheduleStep, parseCleanScheduleEvent } from '../lib/serverless/steps/cleaning/index.js';

const observability = createObservability('clean-schedule');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanStepOutput> {
  return observability.invoke(context, async () =>
    cleanScheduleStep(parseCleanScheduleEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
