/**
 * Lambda `clean-execute`: delete one share of a clean's files (lib/serverless/steps/cleaning/execute-share.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CleanShareOutput, cleanExecuteShareStep, parseCleanExecuteShareEvent } from '../lib/serverless/steps/cleaning/index.js';
import { cleanShareFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('clean-execute');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CleanShareOutput> {
  return observability.invoke(
    context,
    async () =>
      cleanExecuteShareStep(parseCleanExecuteShareEvent(event), {
        env: await stepEnvironment(process.env, event, clients.s3),
        clients,
        log: observability.log,
      }),
    cleanShareFigures,
  );
}
