#!/usr/bin/env node
// Runs the test suite in two phases under the local stack (started by infra/with-local-stack.mjs around this):
//   1. test/*.test.ts          our code against moto S3/SQS, DynamoDB Local, pyarrow; no Spark
//   2. test/interop/*.test.ts  real Apache Hudi (Spark 3.5.1 + Hudi 0.15, hudi-rs) against our tables
//   3. MINIO_TESTS             the storage suite and the serverless clustering end to end again, S3 being a real MinIO
//                              server (infra/with-local-stack.mjs --minio: AWS_ENDPOINT_URL_S3, path style, its keys)
// Separate phases keep Spark's JVMs off the CPU while the timing-sensitive lease and heartbeat tests run, and give
// the suite's time with and without the Hudi tests. Both phases always run; the exit code is non-zero if either failed.
// Usage: node infra/run-tests.mjs [test files...]   (files given: one phase with just those)
//        node infra/run-tests.mjs --minio [test files...]   (just the MinIO phase, of MINIO_TESTS or the files given)

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = process.env.TEST_CONCURRENCY || '2';
const MINIO_TESTS = ['test/storage.test.ts', 'test/serverless-clustering.test.ts'];

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
function runPhase(name, files, { minio = false } = {}) {
  process.stderr.write(`\nrun-tests: ${name}: ${files.length} files\n`);
  const started = Date.now();
  const testCommand = [process.execPath, '--import', 'tsx', '--test', `--test-concurrency=${CONCURRENCY}`, ...files];
  // MinIO takes S3's place; SQS and DynamoDB stay the outer stack's.
  const command = minio ? [process.execPath, join(ROOT, 'infra', 'with-local-stack.mjs'), '--minio', ...testCommand] : testCommand;
  const result = spawnSync(command[0], command.slice(1), { cwd: ROOT, stdio: 'inherit' });
  const seconds = (Date.now() - started) / 1000;
  return { name, files: files.length, seconds, ok: result.status === 0 };
}

const minioOnly = process.argv[2] === '--minio';
const given = process.argv.slice(minioOnly ? 3 : 2).map((file) => relative(ROOT, join(process.cwd(), file)));
const phases = minioOnly
  ? [runPhase('against MinIO', given.length > 0 ? given : MINIO_TESTS, { minio: true })]
  : given.length > 0
    ? [runPhase('given files', given)]
    : [
        runPhase('our tests (local stack)', testFiles('test')),
        runPhase('real-Hudi interop tests', testFiles('test/interop')),
        runPhase('storage and serverless clustering against MinIO', MINIO_TESTS, { minio: true }),
      ];

process.stderr.write('\nrun-tests: summary\n');
for (const phase of phases) {
  process.stderr.write(`  ${phase.ok ? 'passed' : 'FAILED'}  ${phase.name}: ${phase.files} files in ${phase.seconds.toFixed(0)} s\n`);
}
process.exitCode = phases.every((phase) => phase.ok) ? 0 : 1;
