/**
 * Lambda `clean-complete`: merge the shares' stats into T.clean under the table lock (lib/serverless/steps/cleaning/complete.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CleanStepOutput, cleanCompleteStep, parseCleanCompleteEvent } from '../lib/serverless/steps/cleaning/index.js';

const observability = createObservability('clean-complete');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanStepOutput> {
  return observability.invoke(context, async () =>
    cleanCompleteStep(parseCleanCompleteEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
  );
}
