/** Byte arrays joined: the one copy the log-file and HFile writers make of their parts. */

/** One fresh array (not a Buffer from Node's shared pool, so `.buffer` holds only these bytes). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
