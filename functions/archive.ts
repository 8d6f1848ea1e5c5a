/**
 * Lambda `archive`: move old instants to the archived timeline under the table lock, as Hudi's archiver
 * (lib/serverless/steps/archival/archive.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type ArchiveStepOutput, archiveStep, parseArchiveEvent } from '../lib/serverless/steps/archival/archive.js';
import { archiveFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('archive');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<ArchiveStepOutput> {
  return observability.invoke(
    context,
    async () => archiveStep(parseArchiveEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    archiveFigures,
  );
}
