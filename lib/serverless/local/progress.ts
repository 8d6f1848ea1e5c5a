/**
 * A local execution's progress: the interpreter's event log as typed events (state entered, retried, caught, a group
 * finished), the state transitions counted (what Standard workflows bill), and one line of text per event worth one.
 */
import { stateErrorMessage } from '../aws/errors.js';

export type ProgressEvent =
  | {
      readonly kind: 'state-entered' | 'state-exited';
      readonly state: string;
      readonly stateType: string;
      readonly index: number | undefined;
      readonly elapsedMs: number;
      readonly output?: unknown;
    }
  | {
      readonly kind: 'state-failed' | 'state-retried' | 'state-caught';
      readonly state: string;
      readonly stateType: string;
      readonly index: number | undefined;
      readonly elapsedMs: number;
      readonly error: string;
      readonly cause: string;
    }
  | {
      readonly kind: 'group-finished';
      readonly index: number;
      readonly elapsedMs: number;
      readonly outcome: string;
      readonly finished: number;
      readonly total: number;
    }
  | { readonly kind: 'execution-finished'; readonly status: 'SUCCEEDED' | 'FAILED'; readonly elapsedMs: number };

interface LoggedEvent {
  readonly type: string;
  readonly timestamp: number;
  readonly index?: number;
  readonly state?: { readonly name: string; readonly type: string; readonly output?: unknown };
  readonly Error?: string;
  readonly Cause?: unknown;
}

/** Count state transitions and report progress while the execution runs (aws-local-stepfunctions' eventLogs). */
/** The states that end a group's iteration, in the inline Map and in the Distributed Map's child executions. */
const GROUP_END_STATES = new Set(['ExecuteGroup', 'GroupFailed', 'RunGroup', 'RunGroupFailed']);

export async function followEvents(
  logs: AsyncGenerator<unknown>,
  startedMs: number,
  onProgress: ((event: ProgressEvent) => void) | undefined,
): Promise<{ transitions: number }> {
  let transitions = 0;
  let groupsTotal = 0;
  let groupsFinished = 0;
  const emit = (event: ProgressEvent): void => {
    try {
      onProgress?.(event);
    } catch {
      // A progress printer must not break the run.
    }
  };
  for await (const raw of logs) {
    const event = raw as LoggedEvent;
    const elapsedMs = event.timestamp - startedMs;
    const state = event.state?.name ?? '';
    const stateType = event.state?.type ?? '';
    const index = event.index;
    switch (event.type) {
      case 'StateEntered':
        transitions += 1;
        if (event.state?.type === 'Map' && state.startsWith('ExecuteGroups')) {
          const plan = (event.state as { input?: { plan?: { groupsToRun?: unknown } } }).input?.plan;
          if (typeof plan?.groupsToRun === 'number') groupsTotal = plan.groupsToRun;
        }
        emit({ kind: 'state-entered', state, stateType, index, elapsedMs });
        break;
      case 'StateExited':
        emit({ kind: 'state-exited', state, stateType, index, elapsedMs, output: event.state?.output });
        if (index !== undefined && GROUP_END_STATES.has(state)) {
          groupsFinished += 1;
          const output = event.state?.output as { outcome?: unknown; groupIndex?: unknown } | undefined;
          emit({
            kind: 'group-finished',
            index: typeof output?.groupIndex === 'number' ? output.groupIndex : index,
            elapsedMs,
            outcome: typeof output?.outcome === 'string' ? output.outcome : state === 'GroupFailed' ? 'failed' : 'done',
            finished: groupsFinished,
            total: groupsTotal,
          });
        }
        break;
      case 'StateFailed':
      case 'StateRetried':
      case 'StateCaught': {
        if (event.type === 'StateRetried') transitions += 1;
        const kind = event.type === 'StateFailed' ? 'state-failed' : event.type === 'StateRetried' ? 'state-retried' : 'state-caught';
        emit({
          kind,
          state,
          stateType,
          index,
          elapsedMs,
          error: event.Error ?? '',
          cause: typeof event.Cause === 'string' ? event.Cause : JSON.stringify(event.Cause ?? ''),
        });
        break;
      }
      default:
        break;
    }
  }
  return { transitions };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1).padStart(6)}s`;

/** The message of a Lambda error Cause (the runtime's JSON), else the Cause as it is. */
const causeMessage = (error: string, cause: string): string => stateErrorMessage({ Error: error, Cause: cause });

/** One line per interesting event (undefined for the ones not worth a line). */
export function formatProgressEvent(event: ProgressEvent): string | undefined {
  switch (event.kind) {
    case 'state-entered':
      return event.index === undefined ? `[${seconds(event.elapsedMs)}] → ${event.state}` : undefined;
    case 'state-exited': {
      if (event.index !== undefined) return undefined;
      const output = event.output as
        | { status?: unknown; instant?: unknown; groupsToRun?: unknown; mapMode?: unknown; resumed?: unknown; reason?: unknown }
        | undefined;
      if (event.state === 'Plan' && output !== undefined) {
        const detail =
          output.status === 'CLUSTER'
            ? `${output.resumed === true ? 'resumed' : 'planned'} clustering ${String(output.instant)}: ${typeof output.groupsToRun === 'number' ? output.groupsToRun : 0} group(s) to run${output.mapMode === 'DISTRIBUTED' ? ' (Distributed Map)' : ''}`
            : `${String(output.status)}: ${String(output.reason ?? '')}`;
        return `[${seconds(event.elapsedMs)}] ✓ Plan — ${detail}`;
      }
      return `[${seconds(event.elapsedMs)}] ✓ ${event.state}`;
    }
    case 'group-finished':
      return `[${seconds(event.elapsedMs)}]   group ${event.index} ${event.outcome} (${event.finished}/${event.total})`;
    case 'state-retried':
      return `[${seconds(event.elapsedMs)}]   ↻ ${event.state}${event.index === undefined ? '' : ` #${event.index}`} retried after ${event.error}: ${causeMessage(event.error, event.cause).slice(0, 160)}`;
    case 'state-caught':
      return `[${seconds(event.elapsedMs)}]   ✗ ${event.state}${event.index === undefined ? '' : ` #${event.index}`} failed (${event.error}): ${causeMessage(event.error, event.cause).slice(0, 200)}`;
    case 'state-failed':
      return undefined;
    case 'execution-finished':
      return `[${seconds(event.elapsedMs)}] execution ${event.status.toLowerCase()}`;
  }
}
