/**
 * One definition per configuration key: its name, Hudi's default, the older or Flink names Hudi also reads, the
 * environment variable that may set it, a one-line description for the README, and the parser that turns its text
 * into a typed value. Every settings module (clustering, writes, cleaning, archival, metadata table, lock,
 * serverless) declares its keys with `defineKey` and reads them with `readKey`, so a key string is written once and
 * a bad value gets the same kind of error everywhere: the key, the value, what is accepted, the default.
 */
import { HudiError } from '../errors.js';

/** A value a key's parser cannot use: the message names the key as given, the value and what is accepted. */
export class ConfigValueError extends HudiError {
  /** The key as the user wrote it, with the canonical key in brackets when that differs. */
  readonly key: string;
  readonly value: string;

  constructor(key: string, value: string, problem: string, options: { location?: string; fix?: string } = {}) {
    super(`${key}=${JSON.stringify(value)} ${problem}`, options);
    this.name = 'ConfigValueError';
    this.key = key;
    this.value = value;
  }
}

/** What a parser makes of a key's text: the value (with a warning when it was adjusted), or why it is refused. */
export type Parsed<T> = { readonly value: T; readonly warning?: string } | { readonly problem: string };

/** Turns a key's trimmed, non-empty text into its value. */
export interface Parser<T> {
  /** What is accepted, for the error's fix ("true or false", "one of NONE, RECENT_DAYS"). */
  readonly expected: string;
  /** A numeric parser's documented ends, as texts (no `max`: unbounded); the ranges test walks each key to them. */
  readonly range?: { readonly min: string; readonly max?: string };
  parse(text: string): Parsed<T>;
}

export interface ConfigKey<T> {
  readonly key: string;
  /** Hudi's default (ours for keys Hudi does not have). */
  readonly default: T;
  /** The default as the README shows it, when it is not the value's text ("(the table's)", "(AWS_REGION)"). */
  readonly defaultText: string;
  readonly description: string;
  /** Older names Hudi still reads (ConfigProperty.withAlternatives), looked at when `key` is unset. */
  readonly alternatives: readonly string[];
  /**
   * Other names of this setting in some Hudi release but not in another (1.x renamed `hoodie.cleaner.*` to
   * `hoodie.clean.*`): either is read, and both set to different values is refused, since the releases would
   * disagree on which one counts.
   */
  readonly renamedIn: readonly string[];
  /** The environment variable that may set this key, where a settings module reads the environment. */
  readonly envVar: string;
  /** Accepted, but Hudi deprecated it and it changes nothing. */
  readonly deprecated: boolean;
  readonly parser: Parser<T>;
}

export interface KeyOptions<T> {
  readonly key: string;
  readonly default: T;
  readonly description: string;
  readonly parser: Parser<T>;
  readonly defaultText?: string;
  readonly alternatives?: readonly string[];
  readonly renamedIn?: readonly string[];
  readonly envVar?: string;
  readonly deprecated?: boolean;
}

/** hoodie.clustering.plan.strategy.sort.columns → HOODIE_CLUSTERING_PLAN_STRATEGY_SORT_COLUMNS */
export function envVarForKey(key: string): string {
  return key.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** Every key defined so far, in definition order: the settings modules imported define theirs. */
const DEFINED_KEYS: ConfigKey<unknown>[] = [];

export function definedKeys(): readonly ConfigKey<unknown>[] {
  return [...DEFINED_KEYS];
}

/** While set, told of every key a command reads (readKey, rawValue): which command reads which key. */
let keyReadListener: ((key: ConfigKey<unknown>) => void) | undefined;

/** Tells the listener a key was read where its value is looked up outside rawValue (clustering's merged settings). */
export function noteKeyRead(key: ConfigKey<unknown>): void {
  keyReadListener?.(key);
}

/** Runs `run`, collecting the keys it reads; not re-entrant (one at a time in a process). */
export async function keysReadBy<R>(run: () => Promise<R>): Promise<{ readonly result: R; readonly keys: ReadonlySet<ConfigKey<unknown>> }> {
  const keys = new Set<ConfigKey<unknown>>();
  keyReadListener = (key) => keys.add(key);
  try {
    return { result: await run(), keys };
  } finally {
    keyReadListener = undefined;
  }
}

export function defineKey<T>(options: KeyOptions<T>): ConfigKey<T> {
  const key: ConfigKey<T> = Object.freeze({
    key: options.key,
    default: options.default,
    defaultText: options.defaultText ?? (options.default === undefined ? '' : String(options.default)),
    description: options.description,
    alternatives: Object.freeze([...(options.alternatives ?? [])]),
    renamedIn: Object.freeze([...(options.renamedIn ?? [])]),
    envVar: options.envVar ?? envVarForKey(options.key),
    deprecated: options.deprecated ?? false,
    parser: options.parser,
  });
  DEFINED_KEYS.push(key as ConfigKey<unknown>);
  return key;
}

/**
 * The text set for `key` in `props` (the key itself, else its first alternative or other release's name set),
 * trimmed; undefined when blank. A key set under its other releases' names to different values is refused.
 */
export function rawValue(props: ReadonlyMap<string, string>, key: ConfigKey<unknown>): { readonly givenKey: string; readonly text: string } | undefined {
  noteKeyRead(key);
  const renamed = [key.key, ...key.renamedIn].flatMap((name) => {
    const text = props.get(name)?.trim();
    return text === undefined || text === '' ? [] : [{ name, text }];
  });
  if (new Set(renamed.map(({ text }) => text)).size > 1) {
    throw new ConfigValueError(
      renamed.map(({ name }) => name).join(' and '),
      renamed.map(({ text }) => text).join(' and '),
      'set the same setting to different values',
      {
        fix: `set one of them: Hudi 0.15 reads only ${key.key}, Hudi 1.x reads ${key.renamedIn.join(', ')} before it`,
      },
    );
  }
  for (const name of [key.key, ...key.alternatives, ...key.renamedIn]) {
    const text = props.get(name)?.trim();
    if (text !== undefined && text !== '') return { givenKey: name, text };
  }
  return undefined;
}

/** The value of `key` in `props`, its default when unset or blank; a value its parser refuses throws ConfigValueError. */
export function readKey<T>(props: ReadonlyMap<string, string>, key: ConfigKey<T>, location?: string, warnings?: string[]): T {
  const raw = rawValue(props, key);
  if (raw === undefined) return key.default;
  return parseKeyText(key, raw.text, {
    givenKey: raw.givenKey,
    ...(location === undefined ? {} : { location }),
    ...(warnings === undefined ? {} : { warnings }),
  });
}

export interface ParseContext {
  /** The key as the user wrote it (an alternative, a Flink alias); the message shows both when it differs. */
  readonly givenKey?: string;
  /** Where the value came from (a file, "environment", "Lambda event properties"). */
  readonly location?: string;
  /** Receives the parser's warnings (a clamped value); without it they are dropped. */
  readonly warnings?: string[];
}

/** `text` parsed by `key`'s parser; a refused value throws ConfigValueError naming the key, the value and what is accepted. */
export function parseKeyText<T>(key: ConfigKey<T>, text: string, context: ParseContext = {}): T {
  const parsed = key.parser.parse(text.trim());
  const given = context.givenKey === undefined || context.givenKey === key.key ? key.key : `${context.givenKey} (${key.key})`;
  if ('problem' in parsed) {
    const fallback = key.defaultText === '' ? '' : `; default ${key.defaultText}`;
    throw new ConfigValueError(given, text, parsed.problem, {
      ...(context.location === undefined ? {} : { location: context.location }),
      fix: `use ${key.parser.expected}${fallback}`,
    });
  }
  if (parsed.warning !== undefined) context.warnings?.push(`${given}=${text.trim()} ${parsed.warning}`);
  return parsed.value;
}

type ValueOf<K> = K extends ConfigKey<infer T> ? T : never;
export type ConfigValues<Keys extends Readonly<Record<string, ConfigKey<unknown>>>> = { -readonly [Name in keyof Keys]: ValueOf<Keys[Name]> };

/** Every key of a group read at once: `{ name: value }` for `{ name: key }`. */
export function readKeys<Keys extends Readonly<Record<string, ConfigKey<unknown>>>>(
  props: ReadonlyMap<string, string>,
  keys: Keys,
  location?: string,
): ConfigValues<Keys> {
  const values: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(keys)) values[name] = readKey(props, key, location);
  return values as ConfigValues<Keys>;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsers.

const JAVA_INT_MAX = 2 ** 31 - 1;
const JAVA_LONG_MAX = 2n ** 63n - 1n;

function wholeNumberIn(min: number, max: bigint, expected: string, clampAbove: number): Parser<number> {
  return {
    expected,
    range: { min: String(min), max: String(max) },
    parse: (text) => {
      if (!/^[+-]?\d+$/.test(text)) return { problem: 'is not a whole number' };
      const value = BigInt(text);
      if (value < BigInt(min)) return { problem: `is below ${min}` };
      if (value > max) return { problem: 'is too large' };
      if (value > BigInt(clampAbove)) return { value: clampAbove, warning: `is treated as ${clampAbove} (the largest exact number here)` };
      return { value: Number(value) };
    },
  };
}

/** A Java int from min (counts, parallelism) to max (default Integer.MAX_VALUE, where a larger count cannot work here). */
export function javaInt(min = 0, max = JAVA_INT_MAX): Parser<number> {
  return wholeNumberIn(min, BigInt(max), `a whole number from ${min} to ${max}`, max);
}

/** A Java long ≥ min (sizes, durations); past 2^53 it is read as 2^53 - 1 with a warning (Long.MAX_VALUE as "no limit"). */
export function javaLong(min = 0): Parser<number> {
  return wholeNumberIn(min, JAVA_LONG_MAX, `a whole number from ${min} to 2^63-1`, Number.MAX_SAFE_INTEGER);
}

/** A finite number ≥ min (fractions allowed, as Hudi's double-valued keys). */
export function decimalNumber(min = 0): Parser<number> {
  return {
    expected: `a number ≥ ${min}`,
    range: { min: String(min) },
    parse: (text) => {
      const value = Number(text);
      if (!Number.isFinite(value)) return { problem: 'is not a number' };
      return value >= min ? { value } : { problem: `is below ${min}` };
    },
  };
}

/** true or false, in any case (Java's Boolean.parseBoolean would take anything else as false: we refuse it). */
export const bool: Parser<boolean> = {
  expected: 'true or false',
  parse: (text) => {
    const value = text.toLowerCase();
    return value === 'true' ? { value: true } : value === 'false' ? { value: false } : { problem: 'is not a boolean' };
  },
};

/** One of `values` (case-insensitive, as Hudi's enum keys unless `exactCase`), returned as written in `values`. */
export function oneOf<const V extends string>(values: readonly V[], options: { exactCase?: boolean; shown?: readonly string[] } = {}): Parser<V> {
  const same = options.exactCase === true ? (a: string, b: string) => a === b : (a: string, b: string) => a.toUpperCase() === b.toUpperCase();
  return {
    expected: `one of ${(options.shown ?? values).join(', ')}`,
    parse: (text) => {
      const value = values.find((v) => same(v, text));
      return value === undefined ? { problem: 'is not an accepted value' } : { value };
    },
  };
}

/** Text looked up in `names` after `normalize` (several spellings for one value, e.g. zorder and z-order). */
export function namedValue<V>(names: Readonly<Record<string, V>>, normalize: (text: string) => string, shown: readonly string[]): Parser<V> {
  return {
    expected: `one of ${shown.join(', ')}`,
    parse: (text) => {
      const name = normalize(text);
      // Own keys only: "constructor" must not find Object.prototype's.
      const value = Object.hasOwn(names, name) ? names[name] : undefined;
      return value !== undefined ? { value } : { problem: 'is not an accepted value' };
    },
  };
}

/** Any text (class names, paths, patterns); unset keeps the key's default. */
export const anyText: Parser<string> = { expected: 'text', parse: (text) => ({ value: text }) };

/** Optional text (default undefined). */
export const optionalText: Parser<string | undefined> = { expected: 'text', parse: (text) => ({ value: text }) };

/** A comma-separated list, items trimmed, empty items dropped. */
export const commaList: Parser<readonly string[]> = {
  expected: 'a comma-separated list',
  parse: (text) => ({
    value: Object.freeze(
      text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    ),
  }),
};
