/**
 * The pieces the demos' reports share (infra/demo.ts for `npm start`, infra/demo-stream.ts for `npm run demo:stream`):
 * printing, rows as canonical lines to compare, and what the Lambda invocations of a run came to.
 */
import type { InvocationRecord } from '../lib/serverless/local/index.js';

const MIB = 1024 * 1024;

export const say = (line = ''): void => void process.stdout.write(`${line}\n`);
export const mb = (bytes: number): string => `${(bytes / MIB).toFixed(2)} MB`;
export const elapsed = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** A row as one line of JSON with its fields in name order (rows compared as a multiset of these). */
export function canonicalRow(row: object): string {
  return JSON.stringify(Object.fromEntries(Object.entries(row).sort(([a], [b]) => a.localeCompare(b))));
}

export function sameMultiset(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((line, index) => line === right[index]);
}

/** One line per function: its invocations, memory, time and GB-seconds. */
export function functionBreakdown(invocations: readonly InvocationRecord[]): string[] {
  const byFunction = new Map<string, { count: number; ms: number; memoryMb: number; retries: number }>();
  for (const invocation of invocations) {
    const seen = byFunction.get(invocation.functionName) ?? { count: 0, ms: 0, memoryMb: invocation.memoryMb, retries: 0 };
    byFunction.set(invocation.functionName, {
      count: seen.count + 1,
      ms: seen.ms + invocation.durationMs,
      memoryMb: invocation.memoryMb,
      retries: seen.retries + (invocation.attempt > 1 ? 1 : 0),
    });
  }
  return [...byFunction].map(
    ([name, figures]) =>
      `   ${name.padEnd(19)} ${String(figures.count).padStart(3)} invocation(s) × ${String(figures.memoryMb).padStart(4)} MB, ${(figures.ms / 1000).toFixed(2).padStart(6)} s → ${((figures.memoryMb / 1024) * (figures.ms / 1000)).toFixed(2).padStart(6)} GB-s`,
  );
}
