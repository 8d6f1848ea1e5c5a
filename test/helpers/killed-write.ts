/**
 * A write that dies like a killed process between its data files and its commit: SIGKILL from writeBatch's
 * afterDataFiles hook. Test-only (the CLI has no such switch); run it as its own process with runKilledWrite.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readPropsFile } from '../../lib/cli/args.js';
import { openStorage } from '../../lib/storage/index.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { parseWriteOperation } from '../../lib/writer/write-config.js';
import type { CliResult } from './cli.js';
import { REPO_ROOT } from './paths.js';

const SELF = fileURLToPath(import.meta.url);

/** Write `input` (JSON lines) to `table` as `hudi-serverless write` would, in a process killed before the commit. */
export function runKilledWrite(table: string, input: string, propsFile: string, operation: string): CliResult {
  const result = spawnSync(process.execPath, ['--import', 'tsx', SELF, table, input, propsFile, operation], { cwd: REPO_ROOT, encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

if (process.argv[1] === SELF) {
  const [table, input, propsFile, operation] = process.argv.slice(2) as [string, string, string, string];
  await writeBatch(openStorage(table), {
    input: { file: input, format: 'jsonl' },
    operation: parseWriteOperation(operation),
    properties: await readPropsFile(propsFile),
    afterDataFiles: async () => {
      process.kill(process.pid, 'SIGKILL');
    },
  });
  // Only if the hook never ran: the test must see that the write was not killed.
  process.exitCode = 3;
}
