/**
 * Lambda `plan`: schedule a clustering under the table lock, or resume a pending one (lib/serverless/plan-step.ts).
 * Returns the instant and group references only; the plan stays on the timeline.
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/clients.js';
import { stepEnvironment } from '../lib/serverless/registry.js';
import { planFigures } from '../lib/serverless/metrics.js';
import { createObservability } from '../lib/serverless/observability.js';
import { parsePlanEvent, planStep, type PlanStepOutput } from '../lib/serverless/plan-step.js';

const observability = createObservability('plan');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<PlanStepOutput> {
  return observability.invoke(
    context,
    async () => planStep(parsePlanEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    planFigures,
  );
}
