#!/usr/bin/env node
// Runs the test suite in two phases under the local stack (started by infra/with-local-stack.mjs around this):
//   1. test/*.test.ts          our code against moto S3/SQS, DynamoDB Local, pyarrow; no Spark
//   2. test/interop/*.test.ts  real Apache Hudi (Spark 3.5.1 + Hudi 0.15, hudi-rs) against our tables
// Separate phases keep Spark's JVMs off the CPU while the timing-sensitive lease and heartbeat tests run, and give
// the suite's time with and without the Hudi tests. Both phases always run; the exit code is non-zero if either failed.
// Usage: node infra/run-tests.mjs [test files...]   (files given: one phase with just those)

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = process.env.TEST_CONCURRENCY || '2';

/** @param {string} dir */
function testFiles(dir) {
  return readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith('.test.ts'))
    .sort()
    .map((name) => join(dir, name));
}

/**
 * @param {string} name
 * @param {string[]} files
 */
function runPhase(name, files) {
  process.stderr.write(`\nrun-tests: ${name}: ${files.length} files\n`);
  const started = Date.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${CONCURRENCY}`, ...files], { cwd: ROOT, stdio: 'inherit' });
  const seconds = (Date.now() - started) / 1000;
  return { name, files: files.length, seconds, ok: result.status === 0 };
}

const given = process.argv.slice(2);
const phases = given.length > 0
  ? [runPhase('given files', given.map((file) => relative(ROOT, join(process.cwd(), file))))]
  : [runPhase('our tests (local stack)', testFiles('test')), runPhase('real-Hudi interop tests', testFiles('test/interop'))];

process.stderr.write('\nrun-tests: summary\n');
for (const phase of phases) {
  process.stderr.write(`  ${phase.ok ? 'passed' : 'FAILED'}  ${phase.name}: ${phase.files} files in ${phase.seconds.toFixed(0)} s\n`);
}
process.exitCode = phases.every((phase) => phase.ok) ? 0 : 1;
