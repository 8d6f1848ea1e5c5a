/**
 * What a JSON-lines input is, found by reading the input itself before DuckDB does: the first line that is not one
 * JSON object (DuckDB's own message names the line after a truncated one and the write's private link instead of
 * the user's file), and the first line nested deeper than a table takes (DuckDB's reader hangs or crashes the
 * process on values nested thousands deep, before any gate over its types could refuse them).
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

export interface DeepLine {
  /** 1-based, as an editor counts lines. */
  readonly line: number;
  /** Levels of objects and arrays below the line's own object, as a column's struct, list and map levels count. */
  readonly depth: number;
  /** The keys down to the deepest value (`[]` for an array level), as the table would name the column's field. */
  readonly path: string;
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

/**
 * The first line whose values nest more than `limit` levels below the line's object, or undefined. One pass over the
 * bytes counting brackets outside strings, no parsing and no recursion; only the offending line is walked again,
 * for its path. A malformed line is left to DuckDB and firstMalformedJsonLine.
 */
export async function firstTooDeepJsonLine(file: string, limit: number): Promise<DeepLine | undefined> {
  const raw = createReadStream(file, { highWaterMark: 1 << 20 });
  const input = /\.gz$/i.test(file) ? raw.pipe(createGunzip()) : raw;
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  // The offending line's bytes, kept from its start once it is known to be too deep (chunks of it before that are
  // gathered only while the line is open, and dropped at its end).
  let current: Buffer[] = [];
  let tooDeep = false;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let lineStart = 0;
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i]!;
        if (byte === NEWLINE) {
          // JSON strings hold no raw line break: a line ends here even inside a malformed one.
          if (tooDeep) return describeDeepLine([...current, chunk.subarray(lineStart, i)], line);
          line++;
          depth = 0;
          inString = false;
          escaped = false;
          current = [];
          lineStart = i + 1;
        } else if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) inString = false;
        } else if (byte === QUOTE) inString = true;
        else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
          if (++depth > limit + 1) tooDeep = true;
        } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
      }
      current.push(chunk.subarray(lineStart));
    }
    return tooDeep ? describeDeepLine(current, line) : undefined;
  } finally {
    raw.destroy();
  }
}

/** The deepest point of one line: its depth and the keys down to it, walked with a stack of its own. */
function describeDeepLine(parts: readonly Buffer[], line: number): DeepLine {
  const text = Buffer.concat(parts).toString('utf8');
  // The open objects and arrays, the line's own object first: whether each is an array, and its path.
  const open: { array: boolean; path: string }[] = [];
  let deepest = { depth: 0, path: '' };
  let key = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const end = stringEnd(text, i);
      // A string followed by a colon is a key.
      if (/^\s*:/.test(text.slice(end + 1, end + 20))) key = safeParse(text.slice(i, end + 1));
      i = end;
    } else if (char === '{' || char === '[') {
      const parent = open.at(-1);
      const path = parent === undefined ? '' : parent.array ? `${parent.path}[]` : parent.path === '' ? key : `${parent.path}.${key}`;
      open.push({ array: char === '[', path });
      if (open.length - 1 > deepest.depth) deepest = { depth: open.length - 1, path };
    } else if (char === '}' || char === ']') {
      open.pop();
    }
  }
  return { line, ...deepest };
}

/** Index of the quote closing the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

function safeParse(quoted: string): string {
  try {
    return String(JSON.parse(quoted));
  } catch {
    return quoted.slice(1, -1);
  }
}
