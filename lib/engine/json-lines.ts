/**
 * The first line of a JSON-lines input that is not one JSON object, found by reading the input itself: DuckDB's
 * own message names the line after a truncated one and the write's private link instead of the user's file.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';

export interface MalformedLine {
  /** 1-based, as an editor counts lines. */
  readonly line: number;
  readonly reason: string;
}

/** Undefined when every non-blank line is a JSON object (then DuckDB's reason stands). */
export async function firstMalformedJsonLine(file: string): Promise<MalformedLine | undefined> {
  const raw = createReadStream(file);
  const input = /\.gz$/i.test(file) ? raw.pipe(createGunzip()) : raw;
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (text.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        // V8 adds where in the text it failed as "(line 1 column 24)": the line is ours, the column is enough.
        return { line, reason: (error as Error).message.replace(/ \(line \d+ column (\d+)\)$/, ' (column $1)') };
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { line, reason: 'not a JSON object' };
    }
  } catch (error) {
    return { line: line + 1, reason: (error as Error).message };
  } finally {
    lines.close();
    raw.destroy();
  }
  return undefined;
}
