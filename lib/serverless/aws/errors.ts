/**
 * Error names a Lambda task reports to Step Functions. The Lambda runtime reports `error.name` as the task's Error
 * (its errorType), and the state machine's Retry and Catch rules match on it, so every handler renames what it throws
 * to one of these before it leaves (`asTaskError`):
 *
 * - `Hudi.Transient`: worth retrying with backoff — throttling, 5xx and network failures of S3 or DynamoDB, the table
 *   lock held by another writer or lost midway, an instant time taken by a concurrent writer.
 * - `Hudi.Conflict`: the clustering can never commit — an input file group changed since the plan, or the plan left
 *   the timeline. Not retried; the rollback step abandons the plan (a retry of it would fail the same way).
 * - `Hudi.Incomplete`: commit found groups without a result (their tasks failed for good). Not retried; the rollback
 *   step removes the attempt's files and keeps the plan for a later run.
 * - `Hudi.Error`: any other problem a person has to fix (configuration, a table this build cannot write). Not retried.
 * Anything else keeps its own name (an unexpected bug, a runtime error) and gets the state machine's small
 * `States.TaskFailed` retry budget.
 */
import { AlreadyExistsError, ConflictError, HudiError } from '../../errors.js';

export const TRANSIENT_ERROR = 'Hudi.Transient';
export const CONFLICT_ERROR = 'Hudi.Conflict';
export const INCOMPLETE_ERROR = 'Hudi.Incomplete';
export const PERMANENT_ERROR = 'Hudi.Error';
export const TASK_ERROR_NAMES = [TRANSIENT_ERROR, CONFLICT_ERROR, INCOMPLETE_ERROR, PERMANENT_ERROR] as const;
export type TaskErrorName = (typeof TASK_ERROR_NAMES)[number];

/** An error whose name is already a task error name (thrown by lib/serverless itself). */
export class TaskError extends Error {
  constructor(name: TaskErrorName, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
  }
}

/** AWS SDK error names that mean "try again later". */
const TRANSIENT_AWS_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'InternalServerError',
  'InternalFailure',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'TransactionConflictException',
]);
/** Node.js socket error codes of a flaky network. */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function fieldOf(value: unknown, field: string): unknown {
  return typeof value === 'object' && value !== null && field in value ? (value as Record<string, unknown>)[field] : undefined;
}

/** The error and its causes, outermost first (bounded: cause chains can be cyclic). */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = fieldOf(current, 'cause');
  }
  return chain;
}

/** Whether one error object (not its causes) is an AWS SDK or network failure worth retrying. */
function isTransientAwsOrNetwork(error: unknown): boolean {
  const name = fieldOf(error, 'name');
  if (typeof name === 'string' && TRANSIENT_AWS_NAMES.has(name)) return true;
  const code = fieldOf(error, 'code');
  if (typeof code === 'string' && TRANSIENT_NETWORK_CODES.has(code)) return true;
  // The SDK marks errors it would retry itself ($retryable) and records the HTTP status ($metadata).
  if (fieldOf(error, '$retryable') !== undefined) return true;
  const status = fieldOf(fieldOf(error, '$metadata'), 'httpStatusCode');
  return typeof status === 'number' && (status >= 500 || status === 429);
}

/** Whether retrying the whole step later may succeed. */
export function isTransientError(error: unknown): boolean {
  if (error instanceof TaskError) return error.name === TRANSIENT_ERROR;
  if (error instanceof AlreadyExistsError) return true;
  return causeChain(error).some(isTransientAwsOrNetwork);
}

/** The name Step Functions should see for `error` (see the top of this file). */
export function taskErrorName(error: unknown): string {
  if (error instanceof TaskError) return error.name;
  if (isTransientError(error)) return TRANSIENT_ERROR;
  if (error instanceof ConflictError) return CONFLICT_ERROR;
  if (error instanceof HudiError) return PERMANENT_ERROR;
  const name = fieldOf(error, 'name');
  return typeof name === 'string' && name !== '' ? name : 'Error';
}

/**
 * `error` renamed for Step Functions, keeping its message (HudiError messages already say where and how to fix)
 * and the original as the cause.
 */
export function asTaskError(error: unknown): Error {
  const name = taskErrorName(error);
  if (error instanceof Error && error.name === name) return error;
  const renamed = new Error(error instanceof Error ? error.message : String(error), { cause: error });
  renamed.name = name;
  if (error instanceof Error && error.stack !== undefined) renamed.stack = `${name}: ${renamed.message}\n${error.stack.split('\n').slice(1).join('\n')}`;
  return renamed;
}

/** What Step Functions passes to a Catch target (`ResultPath: $.error`). */
export interface StateError {
  readonly Error: string;
  readonly Cause?: string;
}

/** The message of a Step Functions error: its Cause is the Lambda runtime's JSON `{errorType, errorMessage, trace}`. */
export function stateErrorMessage(error: StateError): string {
  const cause = error.Cause ?? '';
  try {
    const parsed: unknown = JSON.parse(cause);
    const message = fieldOf(parsed, 'errorMessage');
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON: a Cause written by Step Functions itself.
  }
  return cause;
}
