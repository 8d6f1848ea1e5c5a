/**
 * Lambda `doctor`: on a schedule, check the table as `hudi-serverless doctor` does and publish the findings as
 * metrics and log lines; `{"fix": true}` also applies the safe repairs (lib/serverless/steps/doctor/doctor.ts).
 */
import type { Context } from 'aws-lambda';
import { serviceClientsFromEnv } from '../lib/serverless/aws/clients.js';
import { createObservability } from '../lib/serverless/aws/observability.js';
import { stepEnvironment } from '../lib/serverless/aws/registry.js';
import { type DoctorStepOutput, doctorStep, parseDoctorEvent } from '../lib/serverless/steps/doctor/doctor.js';
import { doctorFigures } from '../lib/serverless/steps/metrics.js';

const observability = createObservability('doctor');
const clients = serviceClientsFromEnv();

export async function handler(event: unknown, context: Context): Promise<DoctorStepOutput> {
  return observability.invoke(
    context,
    async () => doctorStep(parseDoctorEvent(event), { env: await stepEnvironment(process.env, event, clients.s3), clients, log: observability.log }),
    doctorFigures,
  );
}
