/**
 * One invocation of a bundled handler in a process of its own, as a Lambda runs it: plain Node (no tsx, no bench
 * code loaded), the bundle, one event and a context with the function's memory. Prints what it measured as one JSON
 * line: wall and CPU seconds of the invocation, and the process's peak RSS (what Lambda's memory limit counts).
 *
 *   node bench/lambda-invoke.mjs <spec.json>   spec: { bundle, functionName, memoryMb, timeoutSeconds, event, environment,
 *                                                   invocations (default 1: more are warm invocations, timed apart) }
 * Also the init duration (the bundle's import, as Lambda's Init phase) and each warm invocation's wall seconds.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
Object.assign(process.env, { POWERTOOLS_LOG_LEVEL: 'WARN', POWERTOOLS_METRICS_DISABLED: 'true' }, spec.environment);
const importStarted = performance.now();
const { handler } = await import(pathToFileURL(spec.bundle).href);
const initSeconds = (performance.now() - importStarted) / 1000;
const deadline = Date.now() + spec.timeoutSeconds * 1000;
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: spec.functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${spec.functionName}`,
  memoryLimitInMB: String(spec.memoryMb),
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/${spec.functionName}`,
  logStreamName: `local/${randomUUID()}`,
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};
const cpu = process.cpuUsage();
const started = performance.now();
const output = await handler(spec.event, context);
const used = process.cpuUsage(cpu);
const firstSeconds = (performance.now() - started) / 1000;
// spec.invocations > 1: the same event again in the same process, as a warm Lambda gets it.
const warmSeconds = [];
for (let i = 1; i < (spec.invocations ?? 1); i++) {
  const at = performance.now();
  await handler(spec.event, context);
  warmSeconds.push((performance.now() - at) / 1000);
}
const measured = {
  seconds: firstSeconds,
  initSeconds,
  warmSeconds,
  cpuSeconds: (used.user + used.system) / 1e6,
  maxRssKb: process.resourceUsage().maxRSS,
  outputs: output?.outputFiles ?? 0,
  method: `${spec.functionName} (${output?.outcome ?? '?'})`,
};
// Exit once written: the handler's AWS clients keep sockets open, as a warm Lambda does.
process.stdout.write(`${JSON.stringify(measured)}\n`, () => process.exit(0));
