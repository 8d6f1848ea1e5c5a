// Which process is a shared Hudi harness server (test/helpers/hudi.ts starts them, infra/run-tests.mjs stops them at
// a phase's end). A slot's `.pid` file outlives its server (one that went idle exits on its own), and pids wrap within
// minutes on a busy machine with a small pid_max: a bare pid may name another process by then, which must never be
// taken for the server, waited on, or signalled. So a server is started with its slot's path as its argument and
// recognised by it in /proc/<pid>/cmdline; without /proc (not Linux) a live pid is all there is to go by.

import { existsSync, readFileSync } from 'node:fs';

const HAS_PROC = existsSync('/proc/self/cmdline');

/**
 * The pid a file holds (a slot's `.pid`, a claim's `pid`), 0 when it holds none.
 * @param {string} file
 */
export function readPid(file) {
  try {
    return Number(readFileSync(file, 'utf8')) || 0;
  } catch {
    return 0;
  }
}

/**
 * Whether a process of this pid runs (maybe another than the one that wrote the pid: see isSlotServer).
 * @param {number} pid
 */
export function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/**
 * Whether pid is the running server of the slot `base` (started with `base` among its arguments).
 * @param {string} base
 * @param {number} pid
 */
export function isSlotServer(base, pid) {
  if (pid <= 0 || !processAlive(pid)) return false;
  if (!HAS_PROC) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(base);
  } catch {
    return false;
  }
}

/**
 * The pid of the slot's running server (its `<base>.pid`), or 0 when none runs there.
 * @param {string} base
 */
export function slotServerPid(base) {
  const pid = readPid(`${base}.pid`);
  return isSlotServer(base, pid) ? pid : 0;
}
