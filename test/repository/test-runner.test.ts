// The test runner's own safety: a Hudi harness server is recognised by its slot, never by a bare pid (pids wrap on a
// busy machine, and a stale `.pid` file must not get another process signalled), and a failed run's last lines name
// each failed test or hook with its error, so a run whose tail alone is kept still says what failed and why.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSlotServer, slotServerPid } from '../../infra/harness-servers.mjs';
import { REPO_ROOT, tempDir } from '../helpers/fixtures.js';

test('a slot server is the live process started with its slot, not whatever now has the pid of its .pid file', async (t) => {
  const dir = tempDir('harness-slots-');
  const base = join(dir, 'abc-0');
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', base], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const pid = child.pid!;
  writeFileSync(`${base}.pid`, String(pid));
  assert.equal(slotServerPid(base), pid, 'the process started with the slot is its server');
  assert.equal(isSlotServer(join(dir, 'abc-1'), pid), false, 'another slot does not own it');
  // A stale .pid naming a live process of something else (this test's own process stands for a reused pid).
  writeFileSync(join(dir, 'abc-2.pid'), String(process.pid));
  if (existsSync('/proc/self/cmdline')) assert.equal(slotServerPid(join(dir, 'abc-2')), 0, 'a live pid of another process is no server');
  assert.equal(slotServerPid(join(dir, 'abc-3')), 0, 'no .pid file: no server');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.equal(slotServerPid(base), 0, 'an exited server is none');
});

test("a failed run's last lines name each failed test and hook with its error", () => {
  const file = join(tempDir('failing-run-'), 'failing.test.ts');
  writeFileSync(
    file,
    [
      "import assert from 'node:assert/strict';",
      "import { before, describe, it } from 'node:test';",
      "describe('a suite whose hook fails', () => {",
      "  before(() => { throw new Error('the server went away'); });",
      "  it('never runs', () => {});",
      '});',
      "it('an assertion that fails', () => assert.deepEqual([1, 2], [1, 3], 'the split differs'));",
      "it('a test that passes', () => {});",
    ].join('\n'),
  );
  // Without NODE_TEST_CONTEXT: the runner inside this test file runs its files as a runner of its own.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const run = spawnSync(process.execPath, [join(REPO_ROOT, 'infra', 'run-tests.mjs'), file], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...env, TEST_CONCURRENCY: '1' },
  });
  assert.equal(run.status, 1, run.stderr);
  const tail = run.stderr.slice(run.stderr.lastIndexOf('run-tests: summary'));
  assert.match(tail, /FAILED {2}given files: 1 files/);
  assert.match(tail, /run-tests: 2 failure\(s\)/);
  assert.match(tail, /failing\.test\.ts › a suite whose hook fails\n\s+\[hookFailed\] the server went away/);
  assert.match(tail, /failing\.test\.ts › an assertion that fails\n\s+\[testCodeFailure\] the split differs/);
  assert.doesNotMatch(tail, /a test that passes|never runs/);
});
