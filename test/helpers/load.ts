/**
 * How much slower than idle this machine is now: its load per core, at least 1. A test that gives a lock a short
 * lease (to keep the suite fast) multiplies it by this, so a holder starved of CPU by other test processes or a CPU
 * hog still renews in time: margins that scale with the load rather than a race against the wall clock.
 */
import { availableParallelism, loadavg } from 'node:os';

export const LOAD_SCALE = Math.min(8, Math.max(1, Math.ceil(loadavg()[0]! / availableParallelism())));
