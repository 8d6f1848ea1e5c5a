/**
 * Run the built CLI (dist/cli.mjs), or another bundle of dist/, as a user would, capturing stdout, stderr and the
 * exit code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tempDir } from './fixtures.js';

const CLI = join(REPO_ROOT, 'dist/cli.mjs');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): CliResult {
  return runBuilt(CLI, args, env);
}

/** Run a bundle of dist/ (the CLI, a demo) with plain Node. */
export function runBuilt(bundle: string, args: string[], env: NodeJS.ProcessEnv = process.env): CliResult {
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first (npm test does)`);
  const result = spawnSync(process.execPath, [bundle, ...args], { env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A `--props` file of Hudi keys in a new temporary folder; returns its path. */
export function propertiesFile(props: Readonly<Record<string, string>>): string {
  const file = join(tempDir('cli-props-'), 'hudi.properties');
  writeFileSync(
    file,
    Object.entries(props)
      .map(([key, value]) => `${key}=${value}\n`)
      .join(''),
  );
  return file;
}
