/**
 * Lambda `compaction-schedule`: Schedules a compaction when Hudi's trigger says it is due, or takes up a pending one, and moves it inflight (lib/serverless/compaction-steps.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { parseCompactionScheduleEvent, compactionScheduleStep, type CompactionScheduleOutput } from '../lib/serverless/compaction-steps.js';
import { compactionScheduleFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';
import { stepEnvironment } from '../lib/serverless/registry.js';

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
