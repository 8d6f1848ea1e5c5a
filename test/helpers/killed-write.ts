/**
 * A write that dies like a killed process: SIGKILL from one of writeBatch's hooks. Test-only (the CLI has no such
 * switch); run it as its own process with runKilledWrite. Where it dies:
 * - 'after-data-files' (default): between its data files and its commit;
 * - 'metadata:<n | requested | inflight | completed>': after the n-th storage write of the metadata table's
 *   deltacommit, or after the named one (completed: the deltacommit is done, the data commit is not).
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

/** Write `input` (JSON lines) to `table` as `hudi-serverless write` would, in a process killed at `fault`. */
export function runKilledWrite(table: string, input: string, propsFile: string, operation: string, fault = 'after-data-files'): CliResult {
  const result = spawnSync(process.execPath, ['--import', 'tsx', SELF, table, input, propsFile, operation, fault], { cwd: REPO_ROOT, encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

if (process.argv[1] === SELF) {
  const [table, input, propsFile, operation, fault] = process.argv.slice(2) as [string, string, string, string, string];
  const die = async (): Promise<void> => {
    process.kill(process.pid, 'SIGKILL');
  };
  const metadataAt = /^metadata:(\d+|requested|inflight|completed)$/.exec(fault)?.[1];
  if (fault !== 'after-data-files' && metadataAt === undefined) throw new Error(`unknown fault ${fault}`);
  let metadataWrites = 0;
  await writeBatch(openStorage(table), {
    input: { file: input, format: 'jsonl' },
    operation: parseWriteOperation(operation),
    properties: await readPropsFile(propsFile),
    ...(metadataAt === undefined
      ? { afterDataFiles: die }
      : {
          afterMetadataTableWrite: async (what: string) => {
            if (++metadataWrites === Number(metadataAt) || what === metadataAt) await die();
          },
        }),
  });
  // Only if the hook never ran: the test must see that the write was not killed.
  process.exitCode = 3;
}
