/**
 * Structured JSON logs and CloudWatch metrics (Powertools) around every clustering Lambda invocation, and the one
 * place where an error is renamed for Step Functions (errors.ts) on its way out.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { requestCountsSince, requestCountsSnapshot } from './clients.js';
import { estimateCost } from './cost.js';
import { asTaskError } from './errors.js';
import { METRIC, type RunFigure } from './metric-names.js';

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
   * Run one invocation: log its start and end, publish its metrics (outcome, duration, AWS requests by operation,
   * its estimated cost, and the figures `figures` reads from its result: metrics.ts), and rethrow failures under
   * their Step Functions error name.
   */
  invoke<T>(context: Context | undefined, work: () => Promise<T>, figures?: (result: T) => readonly RunFigure[]): Promise<T>;
}

/** One per function module, created at load time (kept across warm invocations, as Powertools recommends). */
export function createObservability(step: string): Observability {
  const serviceName = process.env['POWERTOOLS_SERVICE_NAME'] ?? 'hudi-serverless';
  const logger = new Logger({ serviceName, persistentKeys: { step } });
  const namespace = process.env['POWERTOOLS_METRICS_NAMESPACE'] ?? DEFAULT_METRICS_NAMESPACE;
  const metrics = new Metrics({
    namespace,
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
    async invoke(context, work, figures) {
      if (context !== undefined) logger.addContext(context);
      if (coldStart) {
        metrics.captureColdStartMetric();
        coldStart = false;
      }
      const started = performance.now();
      const before = requestCountsSnapshot();
      try {
        const result = await work();
        metrics.addMetric(METRIC.succeeded, MetricUnit.Count, 1);
        const all = figures?.(result) ?? [];
        for (const figure of all) if (figure.dimensions === undefined) metrics.addMetric(figure.name, figure.unit, figure.value);
        publishDimensioned(all, { namespace, serviceName, step });
        return result;
      } catch (error) {
        const taskError = asTaskError(error);
        logger.error(`${step} failed (${taskError.name})`, taskError);
        metrics.addMetric(METRIC.failed, MetricUnit.Count, 1);
        throw taskError;
      } finally {
        const durationMs = Math.round(performance.now() - started);
        metrics.addMetric(METRIC.durationMs, MetricUnit.Milliseconds, durationMs);
        const requests = requestCountsSince(before);
        for (const [key, count] of requests) metrics.addMetric(`Requests.${key}`, MetricUnit.Count, count);
        const cost = invocationCost(context, durationMs, requests);
        if (cost !== undefined) metrics.addMetric(METRIC.estimatedCost, MetricUnit.NoUnit, cost);
        logger.info(`${step} finished`, { durationMs, awsRequests: Object.fromEntries(requests), ...(cost === undefined ? {} : { estimatedCostUsd: cost }) });
        metrics.publishStoredMetrics();
      }
    },
  };
}

/**
 * Figures with dimensions of their own, one EMF document per set of dimensions (service and step besides): a
 * document's metrics share its dimensions, so they cannot ride with the invocation's own figures.
 */
function publishDimensioned(figures: readonly RunFigure[], base: { namespace: string; serviceName: string; step: string }): void {
  const groups = new Map<string, RunFigure[]>();
  for (const figure of figures) {
    if (figure.dimensions === undefined) continue;
    const key = JSON.stringify(Object.entries(figure.dimensions).sort(([a], [b]) => a.localeCompare(b)));
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(figure);
  }
  for (const group of groups.values()) {
    const metrics = new Metrics({
      namespace: base.namespace,
      serviceName: base.serviceName,
      defaultDimensions: { step: base.step, ...group[0]!.dimensions },
    });
    for (const figure of group) metrics.addMetric(figure.name, figure.unit, figure.value);
    metrics.publishStoredMetrics();
  }
}

/**
 * What this invocation would cost on AWS at list prices (cost.ts): its duration at its memory, and the requests it
 * sent. Undefined when the memory is unknown (not on Lambda and no AWS_LAMBDA_FUNCTION_MEMORY_SIZE).
 */
export function invocationCost(
  context: Pick<Context, 'memoryLimitInMB'> | undefined,
  durationMs: number,
  requests: ReadonlyMap<string, number>,
): number | undefined {
  const memoryMb = Number(context?.memoryLimitInMB ?? process.env['AWS_LAMBDA_FUNCTION_MEMORY_SIZE'] ?? NaN);
  if (!Number.isFinite(memoryMb) || memoryMb <= 0) return undefined;
  return estimateCost({ architecture: process.arch === 'arm64' ? 'arm64' : 'x86_64', invocations: [{ memoryMb, durationMs }], requests, stateTransitions: 0 })
    .dollars.total;
}
