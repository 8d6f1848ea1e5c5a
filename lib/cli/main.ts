#!/usr/bin/env node
/**
 * `hudi-serverless` command line. Each command parses its flags and calls lib/; errors print one line
 * (the stack only with --verbose) and exit non-zero.
 */
import { errorMessage } from '../errors.js';
import { COMMANDS, usage } from './commands.js';

// `hudi-serverless read … | head` closes stdout early: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

async function main(argv: string[]): Promise<number> {
  const verbose = argv.includes('--verbose');
  const args = argv.filter((a) => a !== '--verbose');
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 1 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    process.stderr.write(`hudi-serverless: unknown command "${name}" (run \`hudi-serverless --help\` for the list)\n`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    process.stderr.write(`hudi-serverless ${name}: ${errorMessage(error)}\n`);
    if (verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
