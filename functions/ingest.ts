/**
 * Lambda `ingest`: write the objects an S3 event names (S3 notification, EventBridge, or SQS messages carrying them)
 * into the Hudi table, at most once per object version (lib/serverless/steps/ingest/ingest.ts over lib/ingest/). SQS
 * batches report partial failures in batchItemFailures (enable ReportBatchItemFailures); other events throw after
 * every object had its turn when one failed, so Lambda retries them. After its commits, with hoodie.clean.automatic
 * or hoodie.archive.automatic on, it starts the table services (STATE_MACHINE_ARN) instead of cleaning inline; into a
 * merge-on-read table, a compaction run (COMPACTION_STATE_MACHINE_ARN) when Hudi's trigger says one is due.
 */
import type { Context, SQSBatchResponse } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { afterWriteCompactionFromEnv } from '../lib/serverless/steps/compaction/after-write.js';
import { createIngestObservability, type IngestSummary, ingestConfigFromEnv, ingestStep, parseIngestEvent } from '../lib/serverless/steps/ingest/ingest.js';
import { afterWriteStarterFromEnv } from '../lib/serverless/steps/trigger/trigger.js';

const observability = createIngestObservability();
const clients = serviceClientsFromEnv();
const startTableServices = afterWriteStarterFromEnv(process.env, { clients, log: observability.log });
const startCompaction = afterWriteCompactionFromEnv(process.env, { clients, log: observability.log });

export async function handler(event: unknown, context?: Context): Promise<IngestSummary | SQSBatchResponse> {
  return observability.invoke(context, async () => {
    const config = ingestConfigFromEnv(process.env);
    return ingestStep(parseIngestEvent(event), {
      config,
      s3: clients.s3(),
      log: observability.log,
      metrics: observability.metrics,
      context,
      startTableServices,
      startCompaction,
    });
  });
}
