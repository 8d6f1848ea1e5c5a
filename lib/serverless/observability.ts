/**
 * Structured JSON logs and CloudWatch metrics (Powertools) around every clustering Lambda invocation, and the one
 * place where an error is renamed for Step Functions (errors.ts) on its way out.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { requestCountsSince, requestCountsSnapshot } from './clients.js';
import { asTaskError } from './errors.js';

/** What the steps log through (a Powertools Logger fits). */
export interface StepLog {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
}

export const DEFAULT_METRICS_NAMESPACE = 'HudiServerless';

export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly log: StepLog;
  /**
   * Run one invocation: log its start and end, publish its metrics (outcome, duration, AWS requests by operation),
   * and rethrow failures under their Step Functions error name.
   */
  invoke<T>(context: Context | undefined, work: () => Promise<T>): Promise<T>;
}

/** One per function module, created at load time (kept across warm invocations, as Powertools recommends). */
export function createObservability(step: string): Observability {
  const serviceName = process.env['POWERTOOLS_SERVICE_NAME'] ?? 'hudi-serverless';
  const logger = new Logger({ serviceName, persistentKeys: { step } });
  const metrics = new Metrics({
    namespace: process.env['POWERTOOLS_METRICS_NAMESPACE'] ?? DEFAULT_METRICS_NAMESPACE,
    serviceName,
    defaultDimensions: { step },
  });
  const log: StepLog = {
    info: (message, attributes) => (attributes === undefined ? logger.info(message) : logger.info(message, attributes)),
    warn: (message, attributes) => (attributes === undefined ? logger.warn(message) : logger.warn(message, attributes)),
  };
  let coldStart = true;

  return {
    logger,
    metrics,
    log,
    async invoke(context, work) {
      if (context !== undefined) logger.addContext(context);
      if (coldStart) {
        metrics.captureColdStartMetric();
        coldStart = false;
      }
      const started = performance.now();
      const before = requestCountsSnapshot();
      try {
        const result = await work();
        metrics.addMetric('Succeeded', MetricUnit.Count, 1);
        return result;
      } catch (error) {
        const taskError = asTaskError(error);
        logger.error(`${step} failed (${taskError.name})`, taskError);
        metrics.addMetric('Failed', MetricUnit.Count, 1);
        throw taskError;
      } finally {
        const durationMs = Math.round(performance.now() - started);
        metrics.addMetric('DurationMs', MetricUnit.Milliseconds, durationMs);
        const requests = requestCountsSince(before);
        for (const [key, count] of requests) metrics.addMetric(`Requests.${key}`, MetricUnit.Count, count);
        logger.info(`${step} finished`, { durationMs, awsRequests: Object.fromEntries(requests) });
        metrics.publishStoredMetrics();
      }
    },
  };
}
