/**
 * Lambda `plan`: schedule a clustering under the table lock, or resume a pending one (lib/serverless/steps/clustering/plan.ts).
 * Returns the instant and group references only; the plan stays on the timeline.
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type PlanStepOutput, parsePlanEvent, planStep } from '../lib/serverless/steps/clustering/plan.js';
import { planFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('plan');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<PlanStepOutput> {
  return observability.invoke(
    context,
    async () => planStep(parsePlanEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    planFigures,
  );
}
