/**
 * Writer heartbeats (HoodieHeartbeatClient): `.hoodie/.heartbeat/<instant>` is rewritten every interval while the
 * write runs; its modification time tells a later rollback whether the writer may still be alive.
 */
import type { Storage } from '../storage/port.js';
import { METAFOLDER } from './meta-folder.js';

/** hoodie.client.heartbeat.interval_in_ms */
export const HEARTBEAT_INTERVAL_MS = 60_000;

/**
 * A writer is presumed dead when its heartbeat is older than this: Hudi's hoodie.client.heartbeat.interval_in_ms
 * (60 s) × hoodie.client.heartbeat.tolerable.misses (2).
 */
export const HEARTBEAT_EXPIRY_MS = 2 * HEARTBEAT_INTERVAL_MS;

export function heartbeatPath(instantTime: string): string {
  return `${METAFOLDER}/.heartbeat/${instantTime}`;
}

export interface Heartbeat {
  /** Stop beating and, unless `keepFile` was set, remove the file (the write ended, committed or rolled back). */
  stop(): Promise<void>;
}

/**
 * Beat for an instant. `keepFile`: leave the file when stopping — a clustering group does, since other groups of the
 * instant may still run; the commit removes it.
 */
export async function startHeartbeat(storage: Storage, instantTime: string, options: { intervalMs?: number; keepFile?: boolean } = {}): Promise<Heartbeat> {
  const intervalMs = options.intervalMs ?? HEARTBEAT_INTERVAL_MS;
  const path = heartbeatPath(instantTime);
  await storage.put(path, '');
  const timer = setInterval(() => {
    storage.put(path, '').catch(() => undefined);
  }, intervalMs);
  // A heartbeat must never keep a finished process (or Lambda) alive.
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (!options.keepFile) await storage.delete([path]).catch(() => undefined);
    },
  };
}
