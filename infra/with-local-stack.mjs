#!/usr/bin/env node
// Usage: node infra/with-local-stack.mjs [--minio] [--elasticmq] <command> [args...]
// Starts moto (S3, SQS) and DynamoDB Local, runs the command with AWS_ENDPOINT_URL_* pointing at them,
// stops both afterwards and exits with the command's exit code.
// Endpoints already set in the environment (AWS_ENDPOINT_URL_S3 for MinIO or real AWS, ...) are kept.
// --minio: S3 is a real MinIO server instead (built and cached by infra/minio.mjs), whatever AWS_ENDPOINT_URL_S3 says;
// SQS and DynamoDB as above (an outer stack's are reused).
// --elasticmq: SQS is ElasticMQ (fetched from Maven Central on first use) instead of moto's, whose receive and delete
// scan the whole queue.

import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { startLocalStack } from './local-stack.mjs';

const FORWARDED_SIGNALS = /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP']);

async function main() {
  const flags = [];
  while (['--minio', '--elasticmq'].includes(process.argv[2 + flags.length] ?? '')) flags.push(process.argv[2 + flags.length]);
  const minio = flags.includes('--minio');
  const elasticmq = flags.includes('--elasticmq');
  const [command, ...args] = process.argv.slice(2 + flags.length);
  if (command === undefined) {
    process.stderr.write('usage: node infra/with-local-stack.mjs [--minio] [--elasticmq] <command> [args...]\n');
    return 2;
  }

  let stack;
  try {
    stack = await startLocalStack({ minio, elasticmq });
  } catch (error) {
    process.stderr.write(`with-local-stack: could not start the local stack: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }

  const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...stack.env } });
  // The child shares our terminal, so Ctrl-C reaches it directly; forwarding covers `kill <our pid>`.
  /** @type {Map<NodeJS.Signals, () => void>} */
  const handlers = new Map();
  for (const signal of FORWARDED_SIGNALS) {
    const handler = () => {
      child.kill(signal);
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }

  const exitCode = await new Promise((resolve) => {
    child.once('error', (error) => {
      process.stderr.write(`with-local-stack: could not run ${command}: ${error.message}\n`);
      resolve(127);
    });
    child.once('exit', (code, signal) => {
      resolve(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0));
    });
  });

  const keepLogs = exitCode !== 0;
  await stack.stop({ keepLogs });
  if (keepLogs) process.stderr.write(`with-local-stack: server logs kept in ${stack.logDir}\n`);
  for (const [signal, handler] of handlers) process.off(signal, handler);
  return exitCode;
}

process.exitCode = await main();
