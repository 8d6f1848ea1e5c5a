/**
 * Runs `cluster` / `show-clustering` as a process, the way the CLI will once they are wired into COMMANDS:
 * `node --import tsx test/helpers/run-cluster-command.ts <command> [args...]`. The exit code and the one-line
 * error mirror lib/cli/main.ts.
 */
import { clusterCommand, showClusteringCommand } from '../../lib/cli/cluster-commands.js';
import { errorMessage } from '../../lib/errors.js';

const [name, ...args] = process.argv.slice(2);
const command = [clusterCommand, showClusteringCommand].find((candidate) => candidate.name === name);
if (command === undefined) {
  process.stderr.write(`unknown command ${name ?? '(none)'}\n`);
  process.exitCode = 2;
} else {
  try {
    process.exitCode = await command.run(args);
  } catch (error) {
    process.stderr.write(`hudi-serverless ${name}: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  }
}
