/**
 * How table values look outside the engine (CLI JSONL, `--format table`, reports), by the CLI spec: "decimals as
 * strings, timestamps ISO-8601, dates YYYY-MM-DD, binary base64, nested values as JSON arrays/objects". Engine-neutral:
 * the Parquet engine decodes its own value objects and calls these helpers, so the rules live in one place and hold for
 * every reader. Each helper says its rule; the ones a reader may not expect: 64-bit integers beyond ±(2^53 − 1) become
 * decimal strings (no JSON parser silently rounds them), NaN and ±Infinity become the strings "NaN", "Infinity",
 * "-Infinity", and timestamps without a time zone print as if their wall clock were UTC.
 */
import type { StatisticValue } from '../parquet/statistics.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One table row: column name → JSON-ready value, in the file schema's column order. */
export type Row = Record<string, JsonValue>;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** A 64-bit or wider integer: a number when exactly representable, else its decimal string. */
export function integerToJson(value: bigint | number): number | string {
  if (typeof value === 'number') return value;
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
}

function nonFiniteToJson(value: number): string {
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/**
 * A 32-bit float, printed with the fewest digits that read back to the same float32.
 *
 * The shortest decimal that reads back to the same float32 (1.1f → 1.1, not 1.100000023841858).
 */
export function float32ToJson(value: number): number | string {
  if (!Number.isFinite(value)) return nonFiniteToJson(value);
  const single = Math.fround(value);
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(single.toPrecision(digits));
    if (Math.fround(candidate) === single) return candidate;
  }
  return single;
}

export function float64ToJson(value: number): number | string {
  return Number.isFinite(value) ? value : nonFiniteToJson(value);
}

/**
 * Exact decimal string of `unscaled / 10^scale`, keeping every fractional digit.
 *
 * Exact, with all `scale` digits kept ("65432.12345", "1.50000").
 */
export function decimalToJson(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return (negative ? '-' : '') + digits + '0'.repeat(-scale);
  const padded = digits.padStart(scale + 1, '0');
  const integerPart = padded.slice(0, padded.length - scale);
  return `${negative ? '-' : ''}${integerPart}.${padded.slice(padded.length - scale)}`;
}

/** Days since 1970-01-01 → proleptic Gregorian year/month/day (H. Hinnant's civil_from_days). */
function civilFromDays(daysSinceEpoch: bigint): { year: bigint; month: number; day: number } {
  const z = daysSinceEpoch + 719468n;
  const era = (z >= 0n ? z : z - 146096n) / 146097n;
  const dayOfEra = z - era * 146097n;
  const yearOfEra = (dayOfEra - dayOfEra / 1460n + dayOfEra / 36524n - dayOfEra / 146096n) / 365n;
  const dayOfYear = dayOfEra - (365n * yearOfEra + yearOfEra / 4n - yearOfEra / 100n);
  const monthIndex = (5n * dayOfYear + 2n) / 153n;
  const day = Number(dayOfYear - (153n * monthIndex + 2n) / 5n + 1n);
  const month = Number(monthIndex < 10n ? monthIndex + 3n : monthIndex - 9n);
  return { year: yearOfEra + era * 400n + (month <= 2 ? 1n : 0n), month, day };
}

function formatYear(year: bigint): string {
  if (year >= 0n && year <= 9999n) return year.toString().padStart(4, '0');
  return (year < 0n ? '-' : '+') + (year < 0n ? -year : year).toString().padStart(6, '0');
}

const two = (value: number | bigint): string => value.toString().padStart(2, '0');

/**
 * Days since 1970-01-01 → `YYYY-MM-DD`.
 *
 * `YYYY-MM-DD`; years outside 0000–9999 use the `±YYYYYY` form of `toISOString()`; infinite dates (DuckDB/Postgres
 * 'infinity') are the strings "infinity" / "-infinity".
 */
export function dateToJson(daysSinceEpoch: number | bigint): string {
  const { year, month, day } = civilFromDays(BigInt(daysSinceEpoch));
  return `${formatYear(year)}-${two(month)}-${two(day)}`;
}

/** A footer statistic (lib/parquet/statistics.ts) printed by the same rules as a row's value of its type. */
export function statisticToJson(value: StatisticValue): JsonValue {
  switch (value.kind) {
    case 'boolean':
    case 'string':
      return value.value;
    case 'integer':
      return integerToJson(value.value);
    case 'float':
      return float32ToJson(value.value);
    case 'double':
      return float64ToJson(value.value);
    case 'decimal':
      return decimalToJson(value.unscaled, value.scale);
    case 'date':
      return dateToJson(value.days);
    case 'timestamp':
      return timestampToJson(value.epochNanos);
  }
}

const NANOS_PER_DAY = 86_400_000_000_000n;

/**
 * Nanoseconds since the epoch (UTC) → ISO-8601 per the rule at the top of this file.
 *
 * UTC, `YYYY-MM-DDTHH:MM:SS.sssZ` like `Date#toISOString()`; the fraction grows to 6 digits when the microseconds are
 * not zero and to 9 when the nanoseconds are not zero.
 */
export function timestampToJson(epochNanos: bigint): string {
  let days = epochNanos / NANOS_PER_DAY;
  let nanosOfDay = epochNanos % NANOS_PER_DAY;
  if (nanosOfDay < 0n) {
    nanosOfDay += NANOS_PER_DAY;
    days -= 1n;
  }
  return `${dateToJson(days)}T${timeOfDayToText(nanosOfDay, 3)}Z`;
}

/** Nanoseconds since midnight → `HH:MM:SS.sss[sss[sss]]` (at least `minimumFractionDigits`). */
function timeOfDayToText(nanosOfDay: bigint, minimumFractionDigits: number): string {
  const seconds = nanosOfDay / 1_000_000_000n;
  const nanos = nanosOfDay % 1_000_000_000n;
  const clock = `${two(seconds / 3600n)}:${two((seconds / 60n) % 60n)}:${two(seconds % 60n)}`;
  let fraction = nanos.toString().padStart(9, '0');
  if (fraction.endsWith('000000') && minimumFractionDigits <= 3) fraction = fraction.slice(0, 3);
  else if (fraction.endsWith('000') && minimumFractionDigits <= 6) fraction = fraction.slice(0, 6);
  if (minimumFractionDigits === 0 && /^0+$/.test(fraction)) return clock;
  return `${clock}.${fraction}`;
}

/** Nanoseconds since midnight → `HH:MM:SS`, plus a 3-, 6- or 9-digit fraction when it is not zero. */
export function timeToJson(nanosOfDay: bigint): string {
  return timeOfDayToText(nanosOfDay, 0);
}

export function bytesToJson(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Map entries → a JSON object keyed by each key's string form (objects and arrays as compact JSON). */
export function mapToJson(entries: Iterable<readonly [JsonValue, JsonValue]>): { [key: string]: JsonValue } {
  const result: { [key: string]: JsonValue } = {};
  for (const [key, value] of entries) {
    result[typeof key === 'string' ? key : typeof key === 'object' && key !== null ? JSON.stringify(key) : String(key)] = value;
  }
  return result;
}

/** One table cell: strings bare, nested values as compact JSON, control characters escaped to keep rows on one line. */
function cellText(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return 'null';
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.replace(/[\u0000-\u001f\u007f]/g, (character) => {
    if (character === '\n') return '\\n';
    if (character === '\t') return '\\t';
    if (character === '\r') return '\\r';
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** Display width in code points (not UTF-16 units), so accented and astral characters align. */
const displayWidth = (text: string): number => [...text].length;

/**
 * Rows as aligned text columns (`--format table`): a header, a dashed rule, one line per row.
 * Numeric columns are right-aligned, everything else left-aligned; nested values are compact JSON.
 */
export function formatTable(rows: readonly Row[], columns: readonly string[]): string {
  const cells = rows.map((row) => columns.map((column) => cellText(row[column])));
  const headers = columns.map((column) => cellText(column));
  const widths = headers.map((header, index) => Math.max(displayWidth(header), ...cells.map((line) => displayWidth(line[index] ?? ''))));
  const numeric = columns.map(
    (column) => rows.some((row) => row[column] !== null) && rows.every((row) => row[column] === null || typeof row[column] === 'number'),
  );
  const pad = (text: string, index: number): string => {
    const fill = ' '.repeat((widths[index] ?? 0) - displayWidth(text));
    return numeric[index] ? fill + text : text + fill;
  };
  const line = (texts: readonly string[]): string => texts.map(pad).join('  ').trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n') + '\n';
}
