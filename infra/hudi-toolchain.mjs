#!/usr/bin/env node
// Installs (on first use) and locates the real-Hudi toolchain the interop tests run against:
//   .cache/hudi-toolchain/venv   a Python virtualenv with pyspark 3.5.1, pyarrow and hudi-rs (PyPI `hudi`), and the
//                                AWS SAM CLI (`sam validate --lint`, with its cfn-lint) for the template's checks
//   .cache/hudi-toolchain/jars   Hudi 0.15's Spark bundle and the rest of test/hudi/toolchain.json, from Maven Central
//                                (a jar set, a pom's dependencies, in jars/<role>/)
// Usage: node infra/hudi-toolchain.mjs           install what is missing, then print the paths
//        node infra/hudi-toolchain.mjs --check   exit 1 (naming the install command) when something is missing
// A stamp file records what was installed; a changed toolchain.json reinstalls only what changed.

import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SPEC_FILE = join(ROOT, 'test/hudi/toolchain.json');
export const TOOLCHAIN_DIR = process.env.HUDI_TOOLCHAIN_DIR || join(ROOT, '.cache/hudi-toolchain');
export const INSTALL_COMMAND = 'node infra/hudi-toolchain.mjs';

/** @typedef {{ python: string[], maven: { artifact: string, role: string }[], jarSets?: { role: string, pom: string }[] }} ToolchainSpec */

/** @returns {ToolchainSpec} */
function readSpec() {
  return JSON.parse(readFileSync(SPEC_FILE, 'utf8'));
}

/** @param {unknown} value */
function digest(value) {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

/** @param {string} artifact groupId:artifactId:version */
function jarName(artifact) {
  const [, artifactId, version] = artifact.split(':');
  return `${artifactId}-${version}.jar`;
}

/** @param {{ pom: string }} set the digest of a jar set's pom, kept beside its jars once they are all copied */
function jarSetDigest(set) {
  return digest(readFileSync(join(ROOT, set.pom), 'utf8'));
}

/** @param {string} role */
function jarSetDir(role) {
  return join(TOOLCHAIN_DIR, 'jars', role);
}

/** @param {{ role: string, pom: string }} set */
function jarSetReady(set) {
  try {
    return readFileSync(join(jarSetDir(set.role), '.complete'), 'utf8') === jarSetDigest(set);
  } catch {
    return false;
  }
}

/**
 * Where everything is, and whether it is installed as the spec asks. A jar set's jars are listed once it is complete.
 * @returns {{ dir: string, python: string, jars: Record<string, string>, jarSets: Record<string, string[]>, pythonReady: boolean, jarsReady: boolean }}
 */
export function toolchainPaths() {
  const spec = readSpec();
  const python = join(TOOLCHAIN_DIR, 'venv/bin/python');
  /** @type {Record<string, string>} */
  const jars = {};
  for (const { artifact, role } of spec.maven) jars[role] = join(TOOLCHAIN_DIR, 'jars', jarName(artifact));
  /** @type {Record<string, string[]>} */
  const jarSets = {};
  for (const set of spec.jarSets ?? []) {
    const dir = jarSetDir(set.role);
    jarSets[set.role] = jarSetReady(set)
      ? readdirSync(dir)
          .filter((name) => name.endsWith('.jar'))
          .sort()
          .map((name) => join(dir, name))
      : [];
  }
  const stamp = readStamp();
  return {
    dir: TOOLCHAIN_DIR,
    python,
    jars,
    jarSets,
    pythonReady: existsSync(python) && stamp.python === digest(spec.python),
    jarsReady: Object.values(jars).every((jar) => existsSync(jar)) && (spec.jarSets ?? []).every(jarSetReady),
  };
}

/** @returns {{ python?: string }} */
function readStamp() {
  try {
    return JSON.parse(readFileSync(join(TOOLCHAIN_DIR, 'stamp.json'), 'utf8'));
  } catch {
    return {};
  }
}

/** @param {string} message */
function progress(message) {
  process.stderr.write(`hudi-toolchain: ${message}\n`);
}

/**
 * @param {string} file
 * @param {string[]} args
 * @param {string} what
 */
function run(file, args, what) {
  // Output is kept and shown only on failure: pip and Maven are noisy (Maven even in batch mode).
  const result = spawnSync(file, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error !== undefined || result.status !== 0) {
    const reason = result.error !== undefined ? result.error.message : `exit code ${result.status}`;
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
    throw new Error(`${what} failed (${file} ${args.join(' ')}): ${reason}${output ? `\n${output}` : ''}`);
  }
}

/** @param {string} name */
function onPath(name) {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: ['ignore', 'pipe', 'ignore'] });
    return true;
  } catch {
    return false;
  }
}

function installPython() {
  const spec = readSpec();
  const venv = join(TOOLCHAIN_DIR, 'venv');
  const started = Date.now();
  if (!existsSync(join(venv, 'bin/python'))) {
    const python = process.env.PYTHON || 'python3';
    if (!onPath(python)) throw new Error(`${python} not found: the Hudi toolchain needs Python 3.9+ (set PYTHON to its path)`);
    progress(`creating the virtualenv ${venv}`);
    run(python, ['-m', 'venv', venv], 'creating the Python virtualenv');
  }
  progress(`pip install ${spec.python.join(' ')}`);
  run(join(venv, 'bin/python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...spec.python], 'installing the Python packages');
  writeStamp({ ...readStamp(), python: digest(spec.python) });
  progress(`Python packages ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

function installJars() {
  const spec = readSpec();
  const jarsDir = join(TOOLCHAIN_DIR, 'jars');
  mkdirSync(jarsDir, { recursive: true });
  if (!onPath('mvn')) throw new Error('mvn not found: the Hudi toolchain fetches its jars with Maven (install maven, e.g. `apt-get install -y maven`)');
  for (const { artifact } of spec.maven) {
    if (existsSync(join(jarsDir, jarName(artifact)))) continue;
    const started = Date.now();
    progress(`mvn dependency:copy ${artifact}`);
    run(
      'mvn',
      [
        '-q',
        '-B',
        '-Dstyle.color=never',
        'dependency:copy',
        `-Dartifact=${artifact}`,
        `-DoutputDirectory=${jarsDir}`,
        `-Dmaven.repo.local=${join(TOOLCHAIN_DIR, 'm2')}`,
      ],
      `fetching ${artifact} from Maven Central`,
    );
    progress(`${jarName(artifact)} ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  for (const set of spec.jarSets ?? []) {
    if (!jarSetReady(set)) copyJarSet(set, join(TOOLCHAIN_DIR, 'm2'));
  }
  // The local Maven repository only served the copy; the jars folder is the cache.
  rmSync(join(TOOLCHAIN_DIR, 'm2'), { recursive: true, force: true });
}

/**
 * A pom's dependencies into jars/<role>/, marked complete at the end.
 * @param {{ role: string, pom: string }} set
 * @param {string} repository the local Maven repository serving the copy
 */
function copyJarSet(set, repository) {
  const started = Date.now();
  const dir = jarSetDir(set.role);
  rmSync(dir, { recursive: true, force: true });
  progress(`mvn dependency:copy-dependencies ${set.pom}`);
  run(
    'mvn',
    [
      '-q',
      '-B',
      '-Dstyle.color=never',
      '-f',
      join(ROOT, set.pom),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${dir}`,
      `-Dmaven.repo.local=${repository}`,
    ],
    `fetching the jars of ${set.pom} from Maven Central`,
  );
  writeFileSync(join(dir, '.complete'), jarSetDigest(set));
  progress(`${set.role} (${readdirSync(dir).filter((name) => name.endsWith('.jar')).length} jars) ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/**
 * A jar set outside toolchain.json (a local server's, e.g. ElasticMQ's): fetched like the spec's on first use, kept in
 * the same cache; returns its jars.
 * @param {{ role: string, pom: string }} set `pom` relative to the repository root
 * @returns {string[]}
 */
export function ensureJarSet(set) {
  if (!jarSetReady(set)) {
    if (!onPath('mvn')) throw new Error(`mvn not found: the ${set.role} jars are fetched with Maven (install maven, e.g. \`apt-get install -y maven\`)`);
    mkdirSync(join(TOOLCHAIN_DIR, 'jars'), { recursive: true });
    // A repository of its own: an install of the toolchain may run beside it.
    const repository = join(TOOLCHAIN_DIR, `m2-${set.role}`);
    try {
      copyJarSet(set, repository);
    } finally {
      rmSync(repository, { recursive: true, force: true });
    }
  }
  const dir = jarSetDir(set.role);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jar'))
    .sort()
    .map((name) => join(dir, name));
}

/** @param {object} stamp */
function writeStamp(stamp) {
  mkdirSync(TOOLCHAIN_DIR, { recursive: true });
  writeFileSync(join(TOOLCHAIN_DIR, 'stamp.json'), `${JSON.stringify(stamp, null, 2)}\n`);
}

/** Install whatever is missing; returns the paths. */
export function ensureToolchain() {
  const before = toolchainPaths();
  if (before.pythonReady && before.jarsReady) return before;
  const started = Date.now();
  mkdirSync(TOOLCHAIN_DIR, { recursive: true });
  if (!before.pythonReady) installPython();
  if (!before.jarsReady) installJars();
  progress(`installed in ${((Date.now() - started) / 1000).toFixed(0)} s under ${TOOLCHAIN_DIR}`);
  return toolchainPaths();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv.includes('--check')) {
      const paths = toolchainPaths();
      if (!paths.pythonReady || !paths.jarsReady) {
        process.stderr.write(`hudi-toolchain: not installed under ${paths.dir}; run \`${INSTALL_COMMAND}\` (npm test runs it)\n`);
        process.exitCode = 1;
      }
    } else {
      const paths = ensureToolchain();
      process.stdout.write(`${JSON.stringify({ python: paths.python, jars: paths.jars }, null, 2)}\n`);
    }
  } catch (error) {
    process.stderr.write(`hudi-toolchain: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
