/**
 * Fault injection for local state-machine runs, kept out of lib/: the bundled handlers wrapped so that a test's
 * hook runs before each invocation and after it returned (its work done, its answer not yet delivered). Throw from
 * the hook to make that invocation fail as Lambda would report it.
 */
import { type FunctionName, type LambdaHandler, type LocalRunOptions, loadBundledHandler } from '../../lib/serverless/local/index.js';

export interface FaultContext {
  readonly functionName: FunctionName;
  readonly input: unknown;
  /** 1 for the first attempt of this function (and group, share or operation), 2 for the first retry, … within one execution. */
  readonly attempt: number;
  readonly phase: 'before' | 'after';
}

export type FaultHook = (call: FaultContext) => void | Promise<void>;

/** A `handlerOf` for runStateMachineLocally: the bundles in functionsDir with `fault` around each invocation. */
export function withFaults(functionsDir: string, fault: FaultHook): NonNullable<LocalRunOptions['handlerOf']> {
  const attempts = new Map<string, number>();
  return async (functionName) => {
    const handler = await loadBundledHandler(functionName, functionsDir);
    const faulty: LambdaHandler = async (input, context) => {
      const item = typeof input === 'object' && input !== null ? (input as { groupIndex?: unknown; shareIndex?: unknown; operationIndex?: unknown }) : {};
      const index = [item.groupIndex, item.shareIndex, item.operationIndex].find((value) => typeof value === 'number') ?? '';
      const key = `${functionName}/${index}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      await fault({ functionName, input, attempt, phase: 'before' });
      const output = await handler(input, context);
      await fault({ functionName, input, attempt, phase: 'after' });
      return output;
    };
    return faulty;
  };
}
