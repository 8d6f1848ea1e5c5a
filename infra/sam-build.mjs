#!/usr/bin/env node
// Usage: node infra/sam-build.mjs [--if-stale]
//
// `sam build` of template.yaml with the toolchain's SAM CLI (aws-sam-cli in test/hudi/toolchain.json) into
// .aws-sam/build: each function's bundle (the Makefile runs infra/build.mjs) and DuckDB's layer for arm64 and x86_64
// (infra/build-layer.mjs). The local state-machine tests run the handlers from there, so what they test is what
// `sam deploy` ships. --if-stale: only when a source, the template or the lock file is newer than the last build.
// No AWS account or credentials are involved; concurrent callers (parallel test files) wait for one build.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INSTALL_COMMAND, toolchainPaths } from './hudi-toolchain.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SAM_BUILD_DIR = join(ROOT, '.aws-sam', 'build');
const STAMP = join(SAM_BUILD_DIR, '.hudi-serverless-built');
const LOCK = join(ROOT, '.aws-sam', '.build-lock');
const INPUTS = ['template.yaml', 'Makefile', 'samconfig.toml', 'package-lock.json', 'infra/build.mjs', 'infra/build-layer.mjs'];
const SOURCE_DIRS = ['lib', 'functions'];

/** @param {string} dir */
function newestIn(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

function stale() {
  if (!existsSync(STAMP)) return true;
  const inputs = Math.max(...INPUTS.map((file) => statSync(join(ROOT, file)).mtimeMs), ...SOURCE_DIRS.map((dir) => newestIn(join(ROOT, dir))));
  return statSync(STAMP).mtimeMs < inputs;
}

/** @param {number} ms */
function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** @returns {string | undefined} the failure, if any */
function samBuild() {
  const paths = toolchainPaths();
  const sam = join(dirname(paths.python), 'sam');
  if (!paths.pythonReady || !existsSync(sam)) {
    return `sam-build: ${sam} is missing: run \`${INSTALL_COMMAND}\` (npm test does)`;
  }
  // Nothing of the machine's AWS configuration is needed (or the local stack's endpoints).
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AWS_')));
  const result = spawnSync(sam, ['build', '--template-file', join(ROOT, 'template.yaml'), '--build-dir', SAM_BUILD_DIR], {
    cwd: ROOT,
    encoding: 'utf8',
    // The Makefile's $(NODE): this Node (22 under npm scripts) rather than whatever `node` is first on PATH.
    env: { ...env, NODE: process.execPath, SAM_CLI_TELEMETRY: '0', AWS_CONFIG_FILE: '/dev/null', AWS_SHARED_CREDENTIALS_FILE: '/dev/null' },
  });
  if (result.status !== 0) {
    return `${result.stdout}${result.stderr}\nsam-build: sam build failed (exit ${result.status})`;
  }
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.stderr.write(`sam-build: built template.yaml into ${SAM_BUILD_DIR}\n`);
  return undefined;
}

const ifStale = process.argv.includes('--if-stale');
mkdirSync(dirname(LOCK), { recursive: true });
for (let waited = 0; ; waited += 500) {
  try {
    mkdirSync(LOCK);
    break;
  } catch {
    // Another build is running; a lock older than 10 minutes is left over from a killed one.
    if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs > 600_000) rmSync(LOCK, { recursive: true, force: true });
    sleep(500);
  }
}
let failure;
try {
  if (!ifStale || stale()) failure = samBuild();
} finally {
  rmSync(LOCK, { recursive: true, force: true });
}
if (failure !== undefined) {
  process.stderr.write(`${failure}\n`);
  process.exitCode = 1;
}
