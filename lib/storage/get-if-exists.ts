import { NotFoundError } from '../errors.js';
import type { Storage } from './port.js';

/** An object's bytes, or undefined when there is none at `path` (any other failure is thrown). */
export async function getIfExists(storage: Storage, path: string): Promise<Uint8Array | undefined> {
  try {
    return await storage.get(path);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}
