#!/usr/bin/env node
// Runs the test suite in two phases under the local stack (started by infra/with-local-stack.mjs around this):
//   1. test/<room>/*.test.ts   our code against moto S3/SQS, DynamoDB Local, pyarrow; no Spark (one folder per
//                              room of lib/, and test/repository/ for the package, README and template)
//   2. test/interop/*.test.ts  real Apache Hudi (Spark 3.5.1 + Hudi 0.15, hudi-rs) against our tables
//   3. MINIO_TESTS             the storage suite and the serverless clustering end to end again, S3 being a real MinIO
//                              server (infra/with-local-stack.mjs --minio: AWS_ENDPOINT_URL_S3, path style, its keys)
// Separate phases keep Spark's JVMs off the CPU while the timing-sensitive lease and heartbeat tests run, and give
// the suite's time with and without the Hudi tests. Both phases always run; the exit code is non-zero if either failed.
// Usage: node infra/run-tests.mjs [test files...]   (files given: one phase with just those)
//        node infra/run-tests.mjs --minio [test files...]   (just the MinIO phase, of MINIO_TESTS or the files given)
//        node infra/run-tests.mjs --quick [rooms...]   (`npm run test:quick`: the first phase's files of the rooms
//                                                       given, else of those changed since main)

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSlotServer, slotServerPid } from './harness-servers.mjs';
import { minioBinaryPath } from './minio.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CONCURRENCY = process.env.TEST_CONCURRENCY || '2';
// Interop files mostly wait on the shared Spark servers (below), which queue their jobs; a third file keeps them busy.
const INTEROP_CONCURRENCY = process.env.INTEROP_TEST_CONCURRENCY || process.env.TEST_CONCURRENCY || '3';
const MINIO_TESTS = ['test/storage/storage.test.ts', 'test/serverless/clustering.test.ts'];

/** Folders of test/ that are not rooms' tests: the interop phase, helpers, fixtures, the Hudi harness. */
const NOT_OURS = new Set(['interop', 'helpers', 'fixtures', 'hudi']);

/** The first phase's files: test/<room>/*.test.ts (and any test/*.test.ts). */
function ourTestFiles() {
  const rooms = readdirSync(join(ROOT, 'test'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !NOT_OURS.has(entry.name))
    .map((entry) => entry.name)
    .sort();
  return [...testFiles('test'), ...rooms.flatMap((room) => testFiles(join('test', room)))];
}

/** @param {string} dir */
function testFiles(dir) {
  return readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith('.test.ts'))
    .sort()
    .map((name) => join(dir, name));
}

/** @param {number} ms */
function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Stop the Hudi harness servers the phase's files started (test/helpers/hudi.ts: `<key>-<slot>.pid` under the dir):
 * SIGTERM lets each stop Spark; a server still there after the grace period is killed with its JVM (its group).
 * @param {string} dir
 */
function stopHarnessServers(dir) {
  const servers = readdirSync(dir)
    .filter((name) => name.endsWith('.pid'))
    .map((name) => join(dir, name.slice(0, -'.pid'.length)))
    .map((base) => ({ base, pid: slotServerPid(base) }))
    .filter(({ pid }) => pid > 0);
  const running = () => servers.filter(({ base, pid }) => isSlotServer(base, pid));
  for (const { pid } of servers) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Gone meanwhile.
    }
  }
  for (let waited = 0; waited < 20_000 && running().length > 0; waited += 250) sleep(250);
  for (const { pid } of running()) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  printJvmCpu(dir);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * @param {string} name
 * @param {string[]} files
 */
function runPhase(name, files, { minio = false, concurrency = CONCURRENCY, saveWeights = false } = {}) {
  process.stderr.write(`\nrun-tests: ${name}: ${files.length} files\n`);
  const started = Date.now();
  const childCpuBefore = childCpuSeconds();
  // The phase's files share one Hudi harness server per configuration (a short path: it holds Unix sockets).
  const harnessDir = mkdtempSync(join(tmpdir(), 'hudi-h-'));
  const timingsFile = join(harnessDir, 'files.json');
  const testCommand = [
    process.execPath,
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(ROOT, 'infra', 'test-timings-reporter.mjs')}`,
    `--test-reporter-destination=${timingsFile}`,
    ...files,
  ];
  // MinIO takes S3's place; SQS and DynamoDB stay the outer stack's.
  const command = minio ? [process.execPath, join(ROOT, 'infra', 'with-local-stack.mjs'), '--minio', ...testCommand] : testCommand;
  const env = { ...process.env, HUDI_HARNESS_DIR: harnessDir };
  try {
    const result = spawnSync(command[0], command.slice(1), { cwd: ROOT, stdio: 'inherit', env });
    const seconds = (Date.now() - started) / 1000;
    const childCpu = childCpuSeconds();
    if (childCpu !== undefined && childCpuBefore !== undefined) {
      process.stderr.write(
        `run-tests: the test processes (not Spark's) used ${(childCpu - childCpuBefore).toFixed(0)} s of CPU over ${seconds.toFixed(0)} s\n`,
      );
    }
    printTimings(harnessDir, timingsFile);
    if (saveWeights && process.env.SAVE_INTEROP_WEIGHTS === '1') saveInteropWeights(timingsFile);
    return { name, files: files.length, seconds, ok: result.status === 0, failures: failuresOf(timingsFile) };
  } finally {
    stopHarnessServers(harnessDir);
  }
}

// Each interop file's summed test time in the last full run whose weights were saved (SAVE_INTEROP_WEIGHTS=1).
const INTEROP_WEIGHTS = join(ROOT, 'infra', 'interop-weights.json');

/**
 * The interop files, the heaviest first, so the phase does not end on one long file running alone (its files run
 * in this order, a few at a time). A file not weighed yet counts as an average one. Only the order depends on it.
 * @param {string[]} files
 */
function heaviestFirst(files) {
  /** @type {Record<string, number>} */
  let weights = {};
  try {
    weights = JSON.parse(readFileSync(INTEROP_WEIGHTS, 'utf8'));
  } catch {
    return files;
  }
  const known = Object.values(weights).sort((a, b) => a - b);
  const average = known.length > 0 ? known[Math.floor(known.length / 2)] : 0;
  const weightOf = (/** @type {string} */ file) => weights[file] ?? average;
  return [...files].sort((a, b) => weightOf(b) - weightOf(a) || a.localeCompare(b));
}

/** @param {string} timingsFile */
function saveInteropWeights(timingsFile) {
  /** @type {{ file: string, summedMs: number }[]} */
  const { files } = JSON.parse(readFileSync(timingsFile, 'utf8'));
  const weights = Object.fromEntries(
    files.map((entry) => [relative(ROOT, entry.file), Math.round(entry.summedMs / 1000)]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
  writeFileSync(INTEROP_WEIGHTS, `${JSON.stringify(weights, null, 2)}\n`);
  process.stderr.write(`run-tests: saved the interop files' weights in ${relative(ROOT, INTEROP_WEIGHTS)}\n`);
}

/**
 * The CPU this process's finished children used (Linux: cutime and cstime of /proc/self/stat, in the kernel's 100
 * ticks a second): the test runner and its files' processes, not the detached Spark servers. Undefined elsewhere.
 */
function childCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * The phase's failed tests and hooks with their errors (the timings reporter's file), leaving out suites that failed
 * only because a test in them did and tests cancelled with their suite.
 * @param {string} timingsFile
 * @returns {{ file: string, name: string, error: string }[]}
 */
function failuresOf(timingsFile) {
  try {
    /** @type {{ failures: { file: string, name: string, error: string }[] }} */
    const { failures } = JSON.parse(readFileSync(timingsFile, 'utf8'));
    return failures.filter((failure) => !/^\[(subtestsFailed|cancelledByParent)\]/.test(failure.error));
  } catch {
    return [];
  }
}

/** @param {number} ms */
const secondsOf = (ms) => `${(ms / 1000).toFixed(0)} s`.padStart(7);

/**
 * Where the phase's time went: its slowest files (the timings reporter's file: the summed time of each file's
 * top-level tests and suites), and for phases with real Hudi the harness's request time per kind and per Hudi
 * version, and per file (test/helpers/hudi.ts's timings-*.jsonl). A report only.
 * @param {string} harnessDir
 * @param {string} timingsFile
 */
function printTimings(harnessDir, timingsFile) {
  /** @type {{ file: string, tests: number, summedMs: number }[]} */
  let files = [];
  try {
    ({ files } = JSON.parse(readFileSync(timingsFile, 'utf8')));
  } catch {
    return;
  }
  const lines = ['run-tests: slowest files (summed time of their top-level tests and suites)'];
  for (const file of [...files].sort((a, b) => b.summedMs - a.summedMs).slice(0, 12)) {
    lines.push(`  ${secondsOf(file.summedMs)}  ${relative(ROOT, file.file)} (${file.tests} top-level)`);
  }
  /** @type {Map<string, { count: number, ms: number }>} */
  const byKind = new Map();
  /** @type {Map<string, number>} */
  const byFile = new Map();
  for (const name of readdirSync(harnessDir).filter((entry) => entry.startsWith('timings-') && entry.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(harnessDir, name), 'utf8').split('\n')) {
      if (line === '') continue;
      const { file, version, op, ms } = JSON.parse(line);
      const key = `${op} (Hudi ${version})`;
      const entry = byKind.get(key) ?? { count: 0, ms: 0 };
      entry.count++;
      entry.ms += ms;
      byKind.set(key, entry);
      byFile.set(file, (byFile.get(file) ?? 0) + ms);
    }
  }
  if (byKind.size > 0) {
    lines.push('run-tests: real-Hudi harness time per request kind (summed over files running side by side)');
    for (const [key, entry] of [...byKind].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) {
      lines.push(`  ${secondsOf(entry.ms)}  ${key}: ${entry.count} requests`);
    }
    lines.push('run-tests: real-Hudi harness time per file');
    for (const [file, ms] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
      lines.push(`  ${secondsOf(ms)}  ${relative(ROOT, file)}`);
    }
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

/**
 * The CPU the phase's Spark JVMs used, from the line each server logs as it stops (test/hudi/harness.py): with the
 * phase's wall time it says how much of the machine Spark took.
 * @param {string} dir
 */
function printJvmCpu(dir) {
  let servers = 0;
  let seconds = 0;
  for (const name of readdirSync(dir).filter((entry) => entry.endsWith('.log'))) {
    for (const match of readFileSync(join(dir, name), 'utf8').matchAll(/harness: the JVM used ([\d.]+) s user and ([\d.]+) s system CPU/g)) {
      servers++;
      seconds += Number(match[1]) + Number(match[2]);
    }
  }
  if (servers > 0) process.stderr.write(`run-tests: ${servers} Spark JVM(s) used ${seconds.toFixed(0)} s of CPU\n`);
  const stopped = readFileSync(join(dir, 'stopped-for-room.log'), { encoding: 'utf8', flag: 'a+' })
    .split('\n')
    .filter((line) => line !== '');
  if (stopped.length > 0) process.stderr.write(`run-tests: ${stopped.length} idle Spark JVM(s) stopped to make room for another configuration's\n`);
}

/** @param {string[]} args */
function git(args) {
  const result = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.split('\n').filter((line) => line !== '') : undefined;
}

/**
 * The rooms a change touches: `lib/<room>/...` or `lib/<room>.ts` changed since main (committed or not, and new
 * files), and the rooms of changed test files (test/<room>/).
 */
function changedRooms() {
  const main = ['main', 'origin/main'].find((ref) => git(['rev-parse', '--verify', '--quiet', ref]) !== undefined);
  // From where this branch left main: what main gained since is not this change.
  const base = (main === undefined ? undefined : git(['merge-base', main, 'HEAD'])?.[0]) ?? 'HEAD';
  const changed = [...(git(['diff', '--name-only', base]) ?? []), ...(git(['ls-files', '--others', '--exclude-standard']) ?? [])];
  const rooms = new Set();
  for (const path of changed) {
    const lib = /^lib\/([^/]+?)(?:\.ts$|\/)/.exec(path);
    if (lib?.[1] !== undefined) rooms.add(lib[1]);
    const test = /^test\/([^/]+)\/[^/]+\.test\.ts$/.exec(path);
    if (test?.[1] !== undefined && !NOT_OURS.has(test[1])) rooms.add(test[1]);
  }
  return [...rooms];
}

/**
 * The quick loop's files: those of test/<room>/, and those elsewhere whose dash-separated name contains the room's
 * name as whole words (`merge-on-read` also picks writer/merge-on-read, clustering/merge-on-read).
 * @param {string[]} rooms
 */
function filesOfRooms(rooms) {
  const words = (/** @type {string} */ name) => name.split('-');
  const contains = (/** @type {string[]} */ name, /** @type {string[]} */ room) =>
    name.some((_, start) => room.every((word, offset) => name[start + offset] === word));
  return ourTestFiles().filter((file) => {
    const [folder, name] = file.slice('test/'.length, -'.test.ts'.length).split('/');
    return rooms.some((room) => folder === room || contains(words(name ?? folder ?? ''), words(room)));
  });
}

/**
 * `--quick [rooms...]`: the first phase only, for the rooms given or else those changed since main; all of it when
 * no room maps to a test. The serverless tests run the `sam build` output, rebuilt here only when they are picked.
 * @param {string[]} asked
 */
function quickPhase(asked) {
  const rooms = asked.length > 0 ? asked : changedRooms();
  const picked = filesOfRooms(rooms);
  const files = picked.length > 0 ? picked : ourTestFiles();
  process.stderr.write(
    `run-tests: quick: ${picked.length > 0 ? `the tests of rooms ${rooms.join(', ')}` : `no room of ${rooms.length > 0 ? rooms.join(', ') : 'the change'} has tests of its own: all of our tests`}\n`,
  );
  if (files.some((file) => file.startsWith('test/serverless/'))) {
    const built = spawnSync(process.execPath, [join(ROOT, 'infra', 'sam-build.mjs'), '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
    if (built.status !== 0) return [{ name: 'sam build', files: 0, seconds: 0, ok: false, failures: [] }];
  }
  return [runPhase('quick: our tests of the rooms changed', files)];
}

const minioOnly = process.argv[2] === '--minio';
const quick = process.argv[2] === '--quick';
const given = process.argv.slice(minioOnly || quick ? 3 : 2).map((file) => relative(ROOT, resolve(file)));
const phases = quick
  ? quickPhase(process.argv.slice(3))
  : minioOnly
    ? [runPhase('against MinIO', given.length > 0 ? given : MINIO_TESTS, { minio: true })]
    : given.length > 0
      ? [runPhase('given files', given)]
      : await allPhases();

/** The full run's three phases; a fresh machine's MinIO build overlaps the interop phase (see buildMinioMeanwhile). */
async function allPhases() {
  const ours = runPhase('our tests (local stack)', ourTestFiles());
  const minioBuilt = buildMinioMeanwhile();
  const interop = runPhase('real-Hudi interop tests', heaviestFirst(testFiles('test/interop')), { concurrency: INTEROP_CONCURRENCY, saveWeights: true });
  await minioBuilt;
  return [ours, interop, runPhase('storage and serverless clustering against MinIO', MINIO_TESTS, { minio: true })];
}

/**
 * On a fresh machine the MinIO phase first builds MinIO, minutes of compiling. The interop phase leaves part of the
 * CPU idle while Spark jobs wait, so the build runs beside it at the lowest priority. Settles when the build is done
 * (or failed: the MinIO phase then builds again and reports the error itself).
 * @returns {Promise<void>}
 */
function buildMinioMeanwhile() {
  if (existsSync(minioBinaryPath())) return Promise.resolve();
  process.stderr.write('run-tests: building MinIO beside the interop phase, at the lowest priority\n');
  const build = spawn('nice', ['-n', '19', process.execPath, join(ROOT, 'infra', 'minio.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((settle) => {
    build.on('error', () => settle());
    build.on('exit', () => settle());
  });
}

process.stderr.write('\nrun-tests: summary\n');
for (const phase of phases) {
  process.stderr.write(`  ${phase.ok ? 'passed' : 'FAILED'}  ${phase.name}: ${phase.files} files in ${phase.seconds.toFixed(0)} s\n`);
}
// Last, so a run's tail names what failed and why.
const failures = phases.flatMap((phase) => phase.failures);
if (failures.length > 0) {
  process.stderr.write(`\nrun-tests: ${failures.length} failure(s)\n`);
  for (const failure of failures.slice(0, 12)) {
    process.stderr.write(`  ${relative(ROOT, failure.file)} › ${failure.name}\n${failure.error.replace(/^/gm, '      ')}\n`);
  }
}
process.exitCode = phases.every((phase) => phase.ok) ? 0 : 1;
