/**
 * The `cluster` and `show-clustering` commands, run in-process (they are wired into the CLI elsewhere).
 */
import assert from 'node:assert/strict';
import { cpSync, chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clusterCommand, showClusteringCommand } from '../lib/cli/cluster-commands.js';
import type { Command } from '../lib/cli/args.js';
import { runCli } from './helpers/cli.js';
import { HUDI_FIXTURES, tempDir } from './helpers/fixtures.js';
import { createSmallFilesTable } from './helpers/small-files-table.js';

const KAZDY_TABLE = join(HUDI_FIXTURES, 'tables/kazdy-HUDI-8259/testtable');
const KAZDY_CLUSTERING = '20230329224554584';

/** Run a command through the built CLI, as a user would. */
function run(command: Command, args: string[]): { code: number; stdout: string; stderr: string } {
  return runCli([command.name, ...args]);
}

describe('show-clustering', () => {
  it('reads the kazdy table (Hudi 0.12.1, version 5, no data files) read-only; sizes come from the plan metrics', async () => {
    const pending = run(showClusteringCommand, [KAZDY_TABLE]);
    assert.equal(pending.code, 0);
    assert.match(pending.stdout, /no pending clustering plans/);

    const all = run(showClusteringCommand, [KAZDY_TABLE, '--all']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, new RegExp(`^${KAZDY_CLUSTERING}  completed  2 group\\(s\\)  2 input file\\(s\\), 0 B \\(from plan metrics\\)  → 2 output file\\(s\\)  sort: -$`, 'm'));
    assert.match(all.stdout, /^ {2}group 0 {2}partitionCol1=2022 {2}1 file\(s\), 0 B \(plan metrics\) {2}→ 1$/m);
    assert.match(all.stdout, /^ {2}group 1 {2}partitionCol1=2023 {2}1 file\(s\), 0 B \(plan metrics\) {2}→ 1$/m);

    const json = run(showClusteringCommand, [KAZDY_TABLE, '--all', '--json']);
    const plan = JSON.parse(json.stdout.trim()) as { instantTime: string; state: string; groups: { bytesFrom: string }[]; partitions: string[]; strategyClassName: string };
    assert.equal(plan.instantTime, KAZDY_CLUSTERING);
    assert.equal(plan.state, 'COMPLETED');
    assert.deepEqual(plan.partitions, ['partitionCol1=2022', 'partitionCol1=2023']);
    assert.ok(plan.groups.every((group) => group.bytesFrom === 'plan metrics'));
    assert.match(plan.strategyClassName, /SparkSortAndSizeExecutionStrategy$/);
  });

  it('lists the kazdy clustering as pending once its completed file is gone', async () => {
    const copy = join(tempDir('kazdy-'), 'testtable');
    cpSync(KAZDY_TABLE, copy, { recursive: true });
    chmodSync(join(copy, '.hoodie'), 0o755);
    rmSync(join(copy, '.hoodie', `${KAZDY_CLUSTERING}.replacecommit`));
    const result = run(showClusteringCommand, [copy]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^${KAZDY_CLUSTERING}  inflight \\(pending\\)  2 group\\(s\\)`, 'm'));
  });
});

describe('cluster', () => {
  it('schedules, shows, then executes with progress on stderr and the report on stdout', async () => {
    const dir = tempDir('clustering-cli-');
    await createSmallFilesTable({ dir, partitions: 2, commits: 6, rowsPerFile: 40 });
    const props = join(tempDir(), 'clustering.properties');
    writeFileSync(props, 'hoodie.clustering.plan.strategy.sort.columns=birthday,createTime\nhoodie.layout.optimize.strategy=hilbert\nhoodie.clustering.unknown.key=1\n');

    const scheduled = run(clusterCommand, [dir, '--mode', 'schedule', '--props', props]);
    assert.equal(scheduled.code, 0, scheduled.stderr);
    const instant = /^scheduled (\d{17})$/m.exec(scheduled.stdout)?.[1];
    assert.ok(instant, scheduled.stdout);
    assert.match(scheduled.stdout, /group 0 {2}dt=2024-01-01 {2}6 file\(s\), \d+ B → 1 file group\(s\)/);
    assert.match(scheduled.stderr, /warning: .*unknown clustering key hoodie\.clustering\.unknown\.key/);

    const shown = run(showClusteringCommand, [dir]);
    assert.match(shown.stdout, new RegExp(`^${instant}  requested \\(pending\\)  2 group\\(s\\)  12 input file\\(s\\), \\d+ B  → 2 output file\\(s\\)  sort: birthday,createTime$`, 'm'));

    const executed = run(clusterCommand, [dir, '--mode', 'execute', '--props', props, '--temp-dir', tempDir()]);
    assert.equal(executed.code, 0, executed.stderr);
    assert.match(executed.stderr, /group 1\/2 done: 6 file\(s\) → 1, 240 rows, hilbert order/);
    assert.match(executed.stderr, /group 2\/2 done/);
    assert.match(executed.stdout, new RegExp(`clustering ${instant}: 2 groups, layout hilbert by birthday, createTime`));
    assert.match(executed.stdout, /total: files 12 → 2, .* rows 480 → 480/);

    const nothing = run(clusterCommand, [dir, '--mode', 'execute']);
    assert.equal(nothing.code, 0);
    assert.match(nothing.stderr, /no pending clustering to execute/);
    const badMode = run(clusterCommand, [dir, '--mode', 'sometimes']);
    assert.equal(badMode.code, 1);
    assert.match(badMode.stderr, /^hudi-serverless cluster: --mode sometimes is not a clustering mode \(use --mode schedule \| execute \| scheduleAndExecute\)\n$/);
  });
});
