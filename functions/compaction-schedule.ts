/**
 * Lambda `compaction-schedule`: Schedules a compaction when Hudi's trigger says it is due, or takes up a pending one, and moves it inflight (lib/serverless/steps/compaction/steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type CompactionScheduleOutput, compactionScheduleStep, parseCompactionScheduleEvent } from '../lib/serverless/steps/compaction/steps.js';
import { compactionScheduleFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('compaction-schedule');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<CompactionScheduleOutput> {
  return observability.invoke(
    context,
    async () =>
      compactionScheduleStep(parseCompactionScheduleEvent(event), {
        env: await stepEnvironment(process.env, event, clients.s3),
        clients,
        log: observability.log,
      }),
    compactionScheduleFigures,
  );
}
