#!/usr/bin/env node
// Installs (on first use) the machine packages the tests need beyond Node and the real-Hudi toolchain:
//   java       DynamoDB Local (infra/local-stack.mjs) and Spark (the interop harness): a Java 17 runtime
//   chromium   the HTML run report's rendering test (test/clustering/report-html.test.ts), Debian's headless Chromium
//   mvn        only while the toolchain's jars are missing (infra/hudi-toolchain.mjs fetches them with Maven)
//   python3    only while the toolchain's virtualenv is missing, with the venv module that creates it
// As root with apt-get (CI, the project's machine image): `apt-get update` then one `apt-get install`. Otherwise it
// fails with the one command that installs what is missing, so `npm test` never runs into a missing tool halfway.
// Usage: node infra/system-deps.mjs           install what is missing
//        node infra/system-deps.mjs --check   exit 1 naming the install command when something is missing

import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolchainPaths } from './hudi-toolchain.mjs';

/** @typedef {{ what: string, pkg: string, present: () => boolean }} Requirement */

/** @param {string} file */
function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** @param {string} name */
function onPath(name) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && executable(join(dir, name)));
}

/** @returns {Requirement[]} what is needed, in install order */
function requirements() {
  const javaHome = process.env.JAVA_HOME;
  const toolchain = toolchainPaths();
  const python = process.env.PYTHON || 'python3';
  return [
    {
      what: 'a Java runtime (DynamoDB Local, Spark)',
      pkg: 'openjdk-17-jre-headless',
      present: () => (javaHome !== undefined && javaHome !== '' && executable(join(javaHome, 'bin', 'java'))) || onPath('java'),
    },
    // The paths test/clustering/report-html.test.ts looks for.
    { what: "Debian's chromium (the HTML report's test)", pkg: 'chromium', present: () => ['/usr/bin/chromium', '/usr/bin/chromium-browser'].some(existsSync) },
    ...(toolchain.jarsReady ? [] : [{ what: 'Maven (the toolchain fetches its jars with it)', pkg: 'maven', present: () => onPath('mvn') }]),
    ...(toolchain.pythonReady
      ? []
      : [
          {
            what: 'Python 3 with venv (the toolchain is a virtualenv)',
            pkg: 'python3-venv',
            present: () => spawnSync(python, ['-c', 'import venv, ensurepip'], { stdio: 'ignore' }).status === 0,
          },
        ]),
  ];
}

/** @param {string} message */
function progress(message) {
  process.stderr.write(`system-deps: ${message}\n`);
}

/** @param {number} ms */
function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * @param {string[]} args
 * @param {string} what
 */
function aptGet(args, what) {
  // Another apt on a shared machine holds the dpkg or lists lock for a while: wait for it rather than fail.
  const lockWait = ['-o', 'DPkg::Lock::Timeout=600'];
  for (let attempt = 1; ; attempt++) {
    // Output is kept and shown only on failure: apt is noisy even with -qq.
    const result = spawnSync('apt-get', [...lockWait, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.error === undefined && result.status === 0) return;
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    if (/Could not get lock/.test(output) && attempt < 60) {
      sleep(10_000);
      continue;
    }
    const tail = output.split('\n').slice(-20).join('\n');
    throw new Error(`${what} failed (apt-get ${args.join(' ')}): ${result.error?.message ?? `exit code ${result.status}`}${tail ? `\n${tail}` : ''}`);
  }
}

/** @param {boolean} checkOnly */
function ensure(checkOnly) {
  const missing = requirements().filter((requirement) => !requirement.present());
  if (missing.length === 0) return;
  const packages = missing.map((requirement) => requirement.pkg);
  const command = `apt-get update && apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  const canInstall = !checkOnly && process.getuid?.() === 0 && onPath('apt-get');
  if (!canInstall) {
    const how = !onPath('apt-get')
      ? `install ${packages.join(', ')} (Debian's package names)`
      : checkOnly
        ? `install with \`${command}\` (as root \`node infra/system-deps.mjs\` does it)`
        : `run as root: sudo sh -c '${command}'`;
    throw new Error(`missing ${missing.map((requirement) => requirement.what).join('; ')}: ${how}`);
  }
  const started = Date.now();
  progress(`installing ${packages.join(' ')} (${missing.map((requirement) => requirement.what).join('; ')})`);
  aptGet(['update', '-qq'], 'updating the package lists');
  aptGet(['install', '-y', '-qq', '--no-install-recommends', ...packages], `installing ${packages.join(' ')}`);
  const still = missing.filter((requirement) => !requirement.present());
  if (still.length > 0) throw new Error(`still missing after apt-get install: ${still.map((requirement) => requirement.what).join('; ')}`);
  progress(`installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    ensure(process.argv.includes('--check'));
  } catch (error) {
    process.stderr.write(`system-deps: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
