/**
 * Lambda `archive`: move old instants to the archived timeline under the table lock, as Hudi's archiver
 * (lib/serverless/archive-step.ts).
 */
import type { Context } from 'aws-lambda';
import { archiveStep, parseArchiveEvent, type ArchiveStepOutput } from '../lib/serverless/archive-step.js';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { archiveFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';

const observability = createObservability('archive');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<ArchiveStepOutput> {
  return observability.invoke(
    context,
    async () => archiveStep(parseArchiveEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    archiveFigures,
  );
}
