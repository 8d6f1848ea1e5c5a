/**
 * JSON text as Jackson's default pretty printer writes it (Hudi's commit files are Jackson output):
 * `"key" : value`, objects indented two spaces per level, arrays inline as `[ a, b ]`, empty `{ }` / `[ ]`.
 * Matching the bytes keeps diffs against Hudi-written instants meaningful.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export function toJacksonPrettyJson(value: JsonValue): string {
  return write(value, 0);
}

function write(value: JsonValue, objectDepth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[ ]';
    // Arrays do not add an indentation level in Jackson (their indenter is inline).
    return `[ ${value.map((item) => write(item, objectDepth)).join(', ')} ]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '{ }';
  const inner = '  '.repeat(objectDepth + 1);
  const body = entries.map(([key, item]) => `${inner}${JSON.stringify(key)} : ${write(item, objectDepth + 1)}`).join(',\n');
  return `{\n${body}\n${'  '.repeat(objectDepth)}}`;
}
