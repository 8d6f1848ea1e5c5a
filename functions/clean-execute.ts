/**
 * Lambda `clean-execute`: delete one share of a clean's files (lib/serverless/clean-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { cleanExecuteShareStep, parseCleanExecuteShareEvent, type CleanShareOutput } from '../lib/serverless/clean-steps.js';
import { cleanShareFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';

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
