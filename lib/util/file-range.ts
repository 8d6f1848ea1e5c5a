import { readSync, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';

/**
 * Copies `length` bytes of `from`, starting at `start`, into `to` at `at`. Reads and writes go in 256 KiB pieces
 * through one reused buffer, synchronously: far cheaper in CPU than large pieces through the thread pool with read
 * and write overlapped (a large piece leaves the CPU caches between the read and the write, and every piece is two
 * thread-pool hops). The event loop gets
 * a turn every YIELD_BYTES so timers (a heartbeat) still run during a long copy.
 */
export async function copyFileRange(from: FileHandle, to: FileHandle, start: number, length: number, at: number): Promise<void> {
  if (length <= 0) return;
  const buffer = pieceBuffer();
  let done = 0;
  let sinceYield = 0;
  while (done < length) {
    const wanted = Math.min(PIECE_BYTES, length - done);
    let filled = 0;
    while (filled < wanted) {
      const read = readSync(from.fd, buffer, filled, wanted - filled, start + done + filled);
      if (read === 0) throw new Error(`unexpected end of file at byte ${start + done + filled} (copying ${length} bytes from ${start})`);
      filled += read;
    }
    let written = 0;
    while (written < wanted) written += writeSync(to.fd, buffer, written, wanted - written, at + done + written);
    done += wanted;
    sinceYield += wanted;
    if (sinceYield >= YIELD_BYTES && done < length) {
      sinceYield = 0;
      await setImmediate();
    }
  }
}

/** Writes all of `bytes` at `position` (a write may take fewer bytes than it is given). */
export async function writeAt(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

const PIECE_BYTES = 256 * 1024;
const YIELD_BYTES = 32 * 1024 * 1024;

let sharedBuffer: Buffer | undefined;

/** One buffer serves every copy: a copy never yields in the middle of a piece, so two never share it at once. */
function pieceBuffer(): Buffer {
  sharedBuffer ??= Buffer.allocUnsafe(PIECE_BYTES);
  return sharedBuffer;
}
