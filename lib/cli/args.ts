/**
 * What every CLI command shares: its shape, flag parsing with usage errors, output, properties files.
 */
import { readFile } from 'node:fs/promises';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { HudiError } from '../errors.js';
import { type LockProvider, lockProviderFor } from '../lock/index.js';
import { parseJavaProperties } from '../table/properties.js';
import type { HudiTable } from '../table/table.js';

export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  run(args: string[]): Promise<number>;
}

/** parseArgs with a usage error that names the command. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(command: string, args: string[], options: T, positionals: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new HudiError(`${(error as Error).message}`, { fix: `usage: hudi-serverless ${command} ${positionals.map((p) => `<${p}>`).join(' ')} [options]` });
  }
  if (parsed.positionals.length < positionals.length) {
    throw new HudiError(
      `missing ${positionals
        .slice(parsed.positionals.length)
        .map((p) => `<${p}>`)
        .join(' ')}`,
      {
        fix: `usage: hudi-serverless ${command} ${positionals.map((p) => `<${p}>`).join(' ')} [options]`,
      },
    );
  }
  return parsed;
}

export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

export async function readPropsFile(file: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new HudiError(`cannot read properties file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      location: file,
      fix: 'check the --props path',
    });
  }
  return parseJavaProperties(text, file);
}

export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A command's lock: its `--props` over hoodie.properties, as a Hudi writer's options win over the table's. */
export function jobLock(table: HudiTable, props: ReadonlyMap<string, string>): LockProvider {
  return lockProviderFor(new Map([...table.config.properties, ...props]), table.config.name, table.storage);
}

/** What `--mode rollback` of a table service did: a line, or JSON with `--json`. */
export function printRolledBack(
  service: 'clustering' | 'compaction',
  instant: string,
  rolledBack: { rollbackInstant?: string | undefined; deleted: readonly string[] },
  json: boolean | undefined,
): void {
  const { rollbackInstant, deleted } = rolledBack;
  out(
    json
      ? JSON.stringify({ rolledBack: instant, rollbackInstant: rollbackInstant ?? null, deleted })
      : `rolled back ${service} ${instant}${rollbackInstant === undefined ? '' : ` (rollback ${rollbackInstant})`}: ${deleted.length} file(s) deleted, plan kept as requested`,
  );
}
