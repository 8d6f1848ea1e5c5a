/**
 * The `cluster` and `show-clustering` commands, run in-process (they are wired into the CLI elsewhere).
 */
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from '../../lib/cli/args.js';
import { clusterCommand, showClusteringCommand } from '../../lib/cli/cluster-commands.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { expectedOf, fixtureTable, tempDir } from '../helpers/fixtures.js';
import { createSmallFilesTable } from '../helpers/small-files-table.js';

/** Version 5, a completed clustering whose replaced files a clean removed, a pending failed write. */
const V5 = expectedOf('v5_cow_clustered_pending');
const V5_CLUSTERING = V5.facts?.['clusteringInstant'] ?? '';

/** A copy of the version-5 table with no write permission anywhere: reading it must not need any. */
function readOnlyV5Table(): string {
  const table = fixtureTable('v5_cow_clustered_pending');
  const lock = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) lock(join(dir, entry.name));
    chmodSync(dir, 0o555);
  };
  lock(table);
  return table;
}

/** Run a command through the built CLI, as a user would. */
function run(command: Command, args: string[]): { code: number; stdout: string; stderr: string } {
  return runCli([command.name, ...args]);
}

describe('show-clustering', () => {
  it('reads a version-5 table read-only; sizes of cleaned inputs come from the plan metrics', async () => {
    const table = readOnlyV5Table();
    const pending = run(showClusteringCommand, [table]);
    assert.equal(pending.code, 0);
    assert.match(pending.stdout, /no pending clustering plans/);

    const all = run(showClusteringCommand, [table, '--all']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(
      all.stdout,
      new RegExp(`^${V5_CLUSTERING}  completed  2 group\\(s\\)  3 input file\\(s\\), 0 B \\(from plan metrics\\)  → 2 output file\\(s\\)  sort: -$`, 'm'),
    );
    assert.match(all.stdout, /^ {2}group \d {2}dt=2021-12-09\/hh=10 {2}1 file\(s\), 0 B \(plan metrics\) {2}→ 1$/m);
    assert.match(all.stdout, /^ {2}group \d {2}dt=2021-12-09\/hh=11 {2}2 file\(s\), 0 B \(plan metrics\) {2}→ 1$/m);

    const json = run(showClusteringCommand, [table, '--all', '--json']);
    const plan = JSON.parse(json.stdout.trim()) as {
      instantTime: string;
      state: string;
      groups: { bytesFrom: string }[];
      partitions: string[];
      strategyClassName: string;
    };
    assert.equal(plan.instantTime, V5_CLUSTERING);
    assert.equal(plan.state, 'COMPLETED');
    assert.deepEqual([...plan.partitions].sort(), ['dt=2021-12-09/hh=10', 'dt=2021-12-09/hh=11']);
    assert.ok(plan.groups.every((group) => group.bytesFrom === 'plan metrics'));
    assert.match(plan.strategyClassName, /SparkSortAndSizeExecutionStrategy$/);

    // Hudi committed it: the history has what its replacecommit says, and no summary of ours.
    const history = run(showClusteringCommand, [table, '--history']);
    assert.equal(history.code, 0, history.stderr);
    assert.match(
      history.stdout,
      new RegExp(`^${V5_CLUSTERING}  completed  3 file group\\(s\\) replaced → 2 file\\(s\\), \\d+ B, 3 rows\n  no summary recorded`),
    );
    const historyJson = jsonLines(run(showClusteringCommand, [table, '--history', '--json']).stdout);
    assert.deepEqual(
      historyJson.map((entry) => [entry['instantTime'], entry['replacedFileGroups'], entry['filesWritten'], entry['rowsWritten'], entry['summary']]),
      [[V5_CLUSTERING, 3, 2, 3, null]],
    );
    const both = run(showClusteringCommand, [table, '--all', '--history']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /--all and --history list different things/);
  });

  it('lists the clustering as pending once its completed file is gone', async () => {
    const copy = fixtureTable('v5_cow_clustered_pending');
    rmSync(join(copy, '.hoodie', `${V5_CLUSTERING}.replacecommit`));
    const result = run(showClusteringCommand, [copy]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^${V5_CLUSTERING}  inflight \\(pending\\)  2 group\\(s\\)`, 'm'));
  });
});

describe('cluster', () => {
  it('schedules, shows, then executes with progress on stderr and the report on stdout', async () => {
    const dir = tempDir('clustering-cli-');
    await createSmallFilesTable({ dir, partitions: 2, commits: 6, rowsPerFile: 40 });
    const props = join(tempDir(), 'clustering.properties');
    writeFileSync(
      props,
      'hoodie.clustering.plan.strategy.sort.columns=birthday,createTime\nhoodie.layout.optimize.strategy=hilbert\nhoodie.clustering.unknown.key=1\n',
    );

    const scheduled = run(clusterCommand, [dir, '--mode', 'schedule', '--props', props]);
    assert.equal(scheduled.code, 0, scheduled.stderr);
    const instant = /^scheduled (\d{17})$/m.exec(scheduled.stdout)?.[1];
    assert.ok(instant, scheduled.stdout);
    assert.match(scheduled.stdout, /group 0 {2}dt=2024-01-01 {2}6 file\(s\), \d+ B → 1 file group\(s\)/);
    assert.match(scheduled.stderr, /warning: .*unknown clustering key hoodie\.clustering\.unknown\.key/);

    const shown = run(showClusteringCommand, [dir]);
    assert.match(
      shown.stdout,
      new RegExp(`^${instant}  requested \\(pending\\)  2 group\\(s\\)  12 input file\\(s\\), \\d+ B  → 2 output file\\(s\\)  sort: birthday,createTime$`, 'm'),
    );

    const executed = run(clusterCommand, [dir, '--mode', 'execute', '--props', props, '--temp-dir', tempDir()]);
    assert.equal(executed.code, 0, executed.stderr);
    assert.match(executed.stderr, /group 1\/2 done: 6 file\(s\) → 1, 240 rows, hilbert order/);
    assert.match(executed.stderr, /group 2\/2 done/);
    assert.match(executed.stdout, new RegExp(`clustering ${instant}: 2 groups, layout hilbert by birthday, createTime`));
    assert.match(executed.stdout, /total: files 12 → 2, .* rows 480 → 480/);

    // The run's summary stays in its replacecommit: the history shows it once the group results are gone.
    const history = run(showClusteringCommand, [dir, '--history']);
    assert.equal(history.code, 0, history.stderr);
    assert.match(
      history.stdout,
      new RegExp(
        `^${instant}  completed  12 file group\\(s\\) replaced → 2 file\\(s\\), [\\d.]+ (MB|B), 480 rows\n  clustering ${instant}: 2 groups, layout hilbert by birthday, createTime, 2 partitions\n    total: files 12 → 2, .* rows 480 → 480\n      birthday: a point query reads`,
      ),
    );
    const [entry] = jsonLines(run(showClusteringCommand, [dir, '--history', '--json']).stdout) as {
      instantTime: string;
      summary: { groups: number; totals: { filesBefore: number; rowsAfter: number } };
    }[];
    assert.equal(entry?.instantTime, instant);
    assert.deepEqual([entry.summary.groups, entry.summary.totals.filesBefore, entry.summary.totals.rowsAfter], [2, 12, 480]);

    const nothing = run(clusterCommand, [dir, '--mode', 'execute']);
    assert.equal(nothing.code, 0);
    assert.match(nothing.stderr, /no pending clustering to execute/);
    const badMode = run(clusterCommand, [dir, '--mode', 'sometimes']);
    assert.equal(badMode.code, 1);
    assert.match(
      badMode.stderr,
      /^hudi-serverless cluster: --mode sometimes is not a clustering mode \(use --mode schedule \| execute \| scheduleAndExecute \| rollback\)\n$/,
    );
  });
});
