/**
 * Java `.properties` text, read and written as java.util.Properties `load` and `store(OutputStream, …)` do:
 * hoodie.properties and clustering job property files are both in this format.
 *
 * Reading: `key=value`, `key: value` and `key value`; `#` and `!` comment lines; `\` escapes (`\t \n \r \f`,
 * `\uXXXX`, any other `\c` is `c`); a line ending in an odd number of backslashes continues on the next line, whose
 * leading whitespace is dropped. Leading whitespace of a line is ignored, trailing whitespace of a value is kept.
 * A key given twice keeps its last value.
 *
 * Writing: `key=value` lines in the order given, with `\`, `=`, `:`, `#`, `!`, control characters and everything
 * outside printable ASCII escaped (non-ASCII as `\uXXXX`, upper-case hex), so the text is pure ASCII and reads back
 * the same in ISO-8859-1 (Java) and UTF-8.
 */
import { HudiError } from '../errors.js';

const isBlank = (char: string): boolean => char === ' ' || char === '\t' || char === '\f';

interface LogicalLine {
  readonly text: string;
  /** 1-based number of the physical line the logical line starts on. */
  readonly lineNumber: number;
}

/** Split into logical lines (comments and blank lines dropped, continuations joined), as Java's LineReader does. */
function logicalLines(text: string): LogicalLine[] {
  const lines: LogicalLine[] = [];
  let buffer = '';
  let startLine = 1;
  let physicalLine = 1;
  let skipWhitespace = true;
  let isCommentLine = false;
  let isNewLine = true;
  let appendedLineBegin = false;
  let precedingBackslash = false;
  let skipLineFeed = false;

  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (index > 0) {
      const previous = text[index - 1];
      if (previous === '\n' || (previous === '\r' && char !== '\n')) physicalLine++;
    }
    if (skipLineFeed) {
      skipLineFeed = false;
      if (char === '\n') continue;
    }
    if (skipWhitespace) {
      if (isBlank(char)) continue;
      // Blank lines are skipped, except right after a continuation, where an empty line ends the logical line.
      if (!appendedLineBegin && (char === '\r' || char === '\n')) continue;
      skipWhitespace = false;
      appendedLineBegin = false;
    }
    if (isNewLine) {
      isNewLine = false;
      startLine = physicalLine;
      if (char === '#' || char === '!') {
        isCommentLine = true;
        continue;
      }
    }
    if (char !== '\n' && char !== '\r') {
      buffer += char;
      precedingBackslash = char === '\\' ? !precedingBackslash : false;
      continue;
    }
    // End of a physical line.
    if (isCommentLine || buffer.length === 0) {
      isCommentLine = false;
      isNewLine = true;
      skipWhitespace = true;
      buffer = '';
      continue;
    }
    if (precedingBackslash) {
      buffer = buffer.slice(0, -1);
      skipWhitespace = true;
      appendedLineBegin = true;
      precedingBackslash = false;
      if (char === '\r') skipLineFeed = true;
      continue;
    }
    lines.push({ text: buffer, lineNumber: startLine });
    buffer = '';
    isNewLine = true;
    skipWhitespace = true;
  }
  if (!isCommentLine && buffer.length > 0) {
    lines.push({ text: precedingBackslash ? buffer.slice(0, -1) : buffer, lineNumber: startLine });
  }
  return lines;
}

const ESCAPED_CONTROL: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f' };

/** Resolve backslash escapes (Java's loadConvert). */
function unescapeJava(text: string, where: () => string): string {
  let result = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char !== '\\' || index === text.length - 1) {
      result += char;
      continue;
    }
    const escaped = text[++index]!;
    if (escaped === 'u') {
      const hex = text.slice(index + 1, index + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
        throw new HudiError(`malformed \\uXXXX escape "\\u${hex}"`, {
          location: where(),
          fix: 'write exactly four hex digits after \\u, or escape the backslash as \\\\',
        });
      }
      result += String.fromCharCode(Number.parseInt(hex, 16));
      index += 4;
    } else {
      result += ESCAPED_CONTROL[escaped] ?? escaped;
    }
  }
  return result;
}

/** Split one logical line into its still-escaped key and value (Java's load0). */
function splitKeyValue(line: string): { rawKey: string; rawValue: string } {
  let keyLength = 0;
  let valueStart = line.length;
  let hasSeparator = false;
  let precedingBackslash = false;
  while (keyLength < line.length) {
    const char = line[keyLength]!;
    if ((char === '=' || char === ':') && !precedingBackslash) {
      valueStart = keyLength + 1;
      hasSeparator = true;
      break;
    }
    if (isBlank(char) && !precedingBackslash) {
      valueStart = keyLength + 1;
      break;
    }
    precedingBackslash = char === '\\' ? !precedingBackslash : false;
    keyLength++;
  }
  // Whitespace, then at most one '=' or ':' (when the key ended at whitespace), then whitespace, then the value.
  while (valueStart < line.length) {
    const char = line[valueStart]!;
    if (!isBlank(char)) {
      if (!hasSeparator && (char === '=' || char === ':')) hasSeparator = true;
      else break;
    }
    valueStart++;
  }
  return { rawKey: line.slice(0, keyLength), rawValue: line.slice(valueStart) };
}

/**
 * Parse Java properties text into keys and values, in file order (a repeated key keeps its first position and its
 * last value). `location` (a file name) is used in error messages.
 */
export function parseJavaProperties(text: string, location = 'properties'): Map<string, string> {
  const properties = new Map<string, string>();
  for (const { text: line, lineNumber } of logicalLines(text)) {
    const where = () => `${location}:${lineNumber}`;
    const { rawKey, rawValue } = splitKeyValue(line);
    properties.set(unescapeJava(rawKey, where), unescapeJava(rawValue, where));
  }
  return properties;
}

const hex4 = (code: number): string => code.toString(16).toUpperCase().padStart(4, '0');

/** Escape a key or value as Java's saveConvert does with escapeUnicode on. */
function escapeForStore(text: string, isKey: boolean): string {
  let result = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    const code = char.charCodeAt(0);
    if (code > 61 && code < 127) {
      result += char === '\\' ? '\\\\' : char;
      continue;
    }
    switch (char) {
      case ' ':
        // Keys escape every space; values only a leading one (trailing ones survive loading anyway).
        result += index === 0 || isKey ? '\\ ' : ' ';
        break;
      case '\t':
        result += '\\t';
        break;
      case '\n':
        result += '\\n';
        break;
      case '\r':
        result += '\\r';
        break;
      case '\f':
        result += '\\f';
        break;
      case '=':
      case ':':
      case '#':
      case '!':
        result += `\\${char}`;
        break;
      default:
        result += code < 0x20 || code > 0x7e ? `\\u${hex4(code)}` : char;
    }
  }
  return result;
}

/**
 * One comment as Java's writeComments writes it: `#` + text, an embedded line break starts a new `#` line.
 * Java writes U+0080..U+00FF raw in ISO-8859-1; we escape everything past ASCII so the text is encoding-neutral.
 */
function formatComment(comment: string): string {
  let result = '#';
  for (let index = 0; index < comment.length; index++) {
    const char = comment[index]!;
    const code = char.charCodeAt(0);
    if (char === '\r' || char === '\n') {
      result += '\n';
      if (char === '\r' && comment[index + 1] === '\n') index++;
      const next = comment[index + 1];
      if (next === undefined || (next !== '#' && next !== '!')) result += '#';
    } else {
      result += code > 0x7e ? `\\u${hex4(code)}` : char;
    }
  }
  return `${result}\n`;
}

/**
 * Java properties text: one `#` line per header comment (Java's store writes the caller's comment and then the date;
 * pass both), then `key=value` lines in the given order, `\n`-terminated.
 */
export function formatJavaProperties(
  entries: ReadonlyMap<string, string> | Iterable<readonly [string, string]>,
  headerComments: readonly string[] = [],
): string {
  let text = headerComments.map(formatComment).join('');
  for (const [key, value] of entries) {
    text += `${escapeForStore(key, true)}=${escapeForStore(value, false)}\n`;
  }
  return text;
}
