/**
 * Bad records are never dropped silently. JSON lines are checked before the write (a JSON object with a usable
 * record key) and rejected lines go to `<errorPrefix>/<key>.errors.jsonl` in the landing bucket BEFORE the write (so
 * a crash after the commit cannot lose them); rows the writer rejects (CSV, Parquet, or keys only it can judge) are
 * added after. An object that cannot be read at all (or that the table refuses as a whole) is quarantined: copied to
 * `<errorPrefix>/<key>` with `<errorPrefix>/<key>.error.json` giving the reason.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { ConflictError, errorMessage, HudiError, InputError } from '../errors.js';
import type { KeyGenerator } from '../table/key-generators.js';
import type { BadRecord } from '../writer/write-client.js';
import type { ErrorLine, LandingBucket } from './types.js';

/** Longest original text kept per bad record in the errors file. */
const MAX_RECORD_TEXT = 64 * 1024;
/** CSV files up to this size are re-read to show the text of rejected rows. */
const MAX_CSV_SCAN_BYTES = 64 * 1024 * 1024;

/** `errors/` + `in/a.jsonl` → `errors/in/a.jsonl` (the prefix is never empty, see ingestObject). */
export function errorKeyOf(errorPrefix: string, key: string, suffix = ''): string {
  return `${errorPrefix.replace(/^\/+|\/+$/g, '')}/${key}${suffix}`;
}

/** Copy a rejected object to the error prefix with a description of why; returns the description's key. */
export async function quarantineObject(
  landing: LandingBucket,
  object: { readonly key: string; readonly etag: string; readonly source: string; readonly localFile: string; readonly errorPrefix: string },
  reason: string,
): Promise<string> {
  const errorsKey = errorKeyOf(object.errorPrefix, object.key, '.error.json');
  await landing.uploadFile(errorKeyOf(object.errorPrefix, object.key), object.localFile);
  await landing.put(
    errorsKey,
    `${JSON.stringify({ source: object.source, key: object.key, etag: object.etag, reason, at: new Date().toISOString() }, null, 2)}\n`,
  );
  return errorsKey;
}

/** How a row the writer rejected is described in the errors file. */
export type ErrorLineOf = (bad: BadRecord) => Promise<ErrorLine>;

/** Add the writer's rejected rows to the errors file (which may hold the pre-checked lines already) and upload it. */
export async function appendWriterRejections(
  landing: LandingBucket,
  errorsKey: string,
  errorsFile: string,
  rejected: readonly BadRecord[],
  errorLineOf: ErrorLineOf,
): Promise<void> {
  const out = createWriteStream(errorsFile, { flags: 'a' });
  for (const bad of rejected) await writeLine(out, `${JSON.stringify(await errorLineOf(bad))}\n`);
  out.end();
  await finished(out);
  await landing.uploadFile(errorsKey, errorsFile);
}

/**
 * Whether a failed write is about the input itself (permanent: the same bytes fail the same way), with the reason.
 * The engine names the input file as the error's location for those; anything else is worth a retry.
 */
export function inputProblem(error: unknown, inputFile: string): string | undefined {
  if (!(error instanceof HudiError) || error instanceof ConflictError) return undefined;
  const aboutInput = error instanceof InputError || error.location === inputFile;
  return aboutInput ? error.message.split(`${inputFile}: `).join('').split(inputFile).join('the object') : undefined;
}

export function isZlibError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' && error.code.startsWith('Z_');
}

// ---- JSON lines ----

export interface JsonLinesSplit {
  /** Lines that are JSON objects (valid or not). */
  readonly objects: number;
  readonly good: number;
  readonly rejected: number;
  readonly firstRejection: { line: number; reason: string } | undefined;
  /** 1-based line in the object of each row of the good file. */
  readonly lineOfRow: readonly number[];
}

/** Split JSON lines into the good file (one object per line) and error lines; blank lines are no records. */
export async function splitJsonLines(file: string, goodFile: string, errorsFile: string, keygen: KeyGenerator): Promise<JsonLinesSplit> {
  const good = createWriteStream(goodFile);
  const errors = createWriteStream(errorsFile);
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lineNumber = 0;
  let objects = 0;
  let rejected = 0;
  let firstRejection: JsonLinesSplit['firstRejection'];
  const lineOfRow: number[] = [];
  try {
    for await (const line of lines) {
      lineNumber++;
      const text = line.trim();
      if (text === '') continue;
      const { isObject, reason } = checkLine(text, keygen);
      if (isObject) objects++;
      if (reason === undefined) {
        lineOfRow.push(lineNumber);
        await writeLine(good, `${text}\n`);
      } else {
        rejected++;
        firstRejection ??= { line: lineNumber, reason };
        await writeLine(errors, `${JSON.stringify({ line: lineNumber, reason, ...textOf(line) } satisfies ErrorLine)}\n`);
      }
    }
  } finally {
    good.end();
    errors.end();
    await Promise.all([finished(good), finished(errors)]);
  }
  return { objects, good: lineOfRow.length, rejected, firstRejection, lineOfRow };
}

/** Whether a line is a JSON object, and why it is not a usable record (undefined when it is). */
function checkLine(text: string, keygen: KeyGenerator): { isObject: boolean; reason?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { isObject: false, reason: `not JSON: ${errorMessage(error)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { isObject: false, reason: `not a JSON object (${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value})` };
  }
  try {
    // The record key only: partition values the engine renders differently (timestamps) are left to the writer.
    keygen.recordKey(value as Record<string, unknown>);
  } catch (error) {
    return { isObject: true, reason: errorMessage(error) };
  }
  return { isObject: true };
}

// ---- describing a row the writer rejected ----

/** A row of the good JSON-lines file, by its line in the object. */
export function jsonLinesErrorLine(split: JsonLinesSplit, goodFile: string): ErrorLineOf {
  return async (bad) => ({ line: split.lineOfRow[bad.row]!, reason: bad.reason, ...textOf(await lineOfFile(goodFile, bad.row)) });
}

/** A CSV row, with its text and line when the file is plain and small enough to re-read. */
export function csvErrorLine(file: string, compressed: boolean): ErrorLineOf {
  return async (bad) => ({ row: bad.row, reason: bad.reason, ...(compressed ? {} : await csvRowText(file, bad.row)) });
}

/** A row by its number only (Parquet). */
export const rowErrorLine: ErrorLineOf = async (bad) => ({ row: bad.row, reason: bad.reason });

function textOf(text: string | undefined): Pick<ErrorLine, 'record' | 'truncated'> {
  if (text === undefined) return {};
  return text.length > MAX_RECORD_TEXT ? { record: text.slice(0, MAX_RECORD_TEXT), truncated: true } : { record: text };
}

async function writeLine(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

/** The 0-based `row`-th line of a file. */
async function lineOfFile(file: string, row: number): Promise<string | undefined> {
  let index = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (index++ === row) {
      lines.close();
      return line;
    }
  }
  return undefined;
}

/** A CSV data row's text and 1-based line (header = line 1), honouring quoted newlines; nothing for big files. */
async function csvRowText(file: string, row: number): Promise<Pick<ErrorLine, 'line' | 'record' | 'truncated'>> {
  if ((await stat(file)).size > MAX_CSV_SCAN_BYTES) return {};
  const text = (await readFile(file)).toString('utf8');
  let record = 0;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let quoted = false;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    if (i === text.length || (!quoted && c === '\n')) {
      if (record === row + 1) return { line: startLine, ...textOf(text.slice(start, i).replace(/\r$/, '')) };
      record++;
      start = i + 1;
      startLine = line + 1;
    }
    if (c === '\n') line++;
  }
  return {};
}
