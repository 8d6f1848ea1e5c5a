/**
 * CPU seconds of this process's live descendants (/proc), for a Spark harness's Python and JVM in the benchmarks.
 */
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = 100;

/** CPU seconds (user + system) of this process's descendants that are alive now: the harness's Python and JVM. */
export function descendantsCpuSeconds(): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command (which may hold spaces) in parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process ended while listing.
    }
  }
  let total = 0;
  for (const [pid, own] of ticks) {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) {
      if (parent === process.pid) {
        total += own;
        break;
      }
    }
  }
  return total / CLOCK_TICKS;
}
