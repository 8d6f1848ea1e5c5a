/** A storage that counts its requests in a tally of the caller's (a clustering group's transfers). */
import type { Storage } from './port.js';
import type { RequestCounter } from './request-counts.js';

/** `storage` counting into `counter` too where it sends requests; itself where it sends none (a local disk). */
export function countedStorage(storage: Storage, counter: RequestCounter): Storage {
  return storage.withRequestCounter?.(counter) ?? storage;
}
