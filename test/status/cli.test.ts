/**
 * `hudi-serverless status <table>` through the built CLI: a pending clustering plan with its age, the last
 * clustering once it ran, of a merge-on-read table its pending compaction and the last compaction, and per partition the files and sizes the latest snapshot reads (checked against `files`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TableStatus } from '../../lib/status/status.js';
import { PAYLOAD_CLASSES } from '../../lib/table/payload.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { tableWithLogs } from '../helpers/compaction-table.js';
import { tempDir } from '../helpers/fixtures.js';
import { createSmallFilesTable } from '../helpers/small-files-table.js';

function status(dir: string): TableStatus {
  const result = runCli(['status', dir, '--json']);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as TableStatus;
}

/** What `files --json` lists, per partition: the sizes of the latest base files. */
function filesByPartition(dir: string): Map<string, number[]> {
  const byPartition = new Map<string, number[]>();
  for (const file of jsonLines(runCli(['files', dir, '--json']).stdout)) {
    const partition = String(file['partition']);
    byPartition.set(partition, [...(byPartition.get(partition) ?? []), Number(file['size'])]);
  }
  return byPartition;
}

describe('status', () => {
  it('shows a pending clustering plan with its age, then the clustering that ran it; files and sizes per partition', async () => {
    const dir = tempDir('status-cli-');
    await createSmallFilesTable({ dir, partitions: 2, commits: 4, rowsPerFile: 20 });

    const scheduled = runCli(['cluster', dir, '--mode', 'schedule']);
    assert.equal(scheduled.code, 0, scheduled.stderr);
    const instant = /^scheduled (\d{17})$/m.exec(scheduled.stdout)?.[1];
    assert.ok(instant, scheduled.stdout);

    const before = status(dir);
    assert.deepEqual(
      before.pending.map((p) => [p.instant, p.action, p.state]),
      [[instant, 'replacecommit', 'REQUESTED']],
    );
    assert.ok(typeof before.pending[0]!.ageSeconds === 'number' && before.pending[0]!.ageSeconds >= 0, 'the plan has an age');
    assert.equal(before.lastClustering, undefined);
    assert.equal(before.lastClean, undefined);
    assert.equal(before.lastArchive, undefined);
    const listed = filesByPartition(dir);
    assert.deepEqual(
      before.partitions.map((p) => p.partition),
      [...listed.keys()].sort(),
    );
    for (const partition of before.partitions) {
      const sizes = [...listed.get(partition.partition)!].sort((a, b) => a - b);
      assert.equal(partition.files, sizes.length);
      assert.equal(
        partition.bytes,
        sizes.reduce((total, size) => total + size, 0),
      );
      assert.deepEqual([partition.minBytes, partition.maxBytes], [sizes[0], sizes.at(-1)]);
      assert.ok(partition.minBytes <= partition.medianBytes && partition.medianBytes <= partition.maxBytes);
      assert.equal(partition.smallFiles, sizes.length, 'every file of a small-files table is small');
    }

    const text = runCli(['status', dir]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^ {4}${instant} {2}replacecommit {2}REQUESTED {2}\\d+ (s|min) ago$`, 'm'));
    assert.match(text.stdout, /^ {2}last clustering: never$/m);
    assert.match(text.stdout, /^ {2}last archive: never$/m);

    const executed = runCli(['cluster', dir, '--mode', 'execute', '--temp-dir', tempDir()]);
    assert.equal(executed.code, 0, executed.stderr);
    const after = status(dir);
    assert.deepEqual(after.pending, []);
    assert.equal(after.lastClustering?.instant, instant);
    assert.equal(after.lastClustering?.archived, false);
    assert.deepEqual(
      after.partitions.map((p) => p.files),
      before.partitions.map(() => 1),
      'one file per partition after clustering',
    );
    assert.deepEqual(
      after.partitions.map((p) => p.bytes),
      after.partitions.map((p) =>
        filesByPartition(dir)
          .get(p.partition)!
          .reduce((a, b) => a + b, 0),
      ),
    );
    assert.match(runCli(['status', dir]).stdout, new RegExp(`^ {2}last clustering: ${instant} \\(`, 'm'));
  });
});

describe('status of a merge-on-read table', () => {
  it('shows the pending compaction plan, then the compaction that ran it', async () => {
    const { root } = await tableWithLogs(PAYLOAD_CLASSES.overwriteWithLatest);
    const dir = root;
    const before = status(dir);
    // The helper's table was bulk-inserted copy-on-write: on a merge-on-read timeline its commit reads as a compaction.
    assert.deepEqual(before.compaction?.pending, []);
    assert.match(runCli(['status', dir]).stdout, /^ {2}last compaction: \d{17} \(.*; pending compactions: none$/m);

    const scheduled = runCli(['compact', dir, '--mode', 'schedule', '--force']);
    assert.equal(scheduled.code, 0, scheduled.stderr);
    const pending = status(dir).compaction?.pending ?? [];
    assert.equal(pending.length, 1);
    assert.equal(pending[0]!.state, 'REQUESTED');
    const instant = pending[0]!.instant;
    assert.match(runCli(['status', dir]).stdout, new RegExp(`pending compactions: ${instant} requested \\(`));

    const executed = runCli(['compact', dir, '--mode', 'execute', '--instant', instant]);
    assert.equal(executed.code, 0, executed.stderr);
    const after = status(dir);
    assert.deepEqual(after.compaction?.pending, []);
    assert.equal(after.compaction?.last?.instant, instant);
    assert.match(runCli(['status', dir]).stdout, new RegExp(`^ {2}last compaction: ${instant} \\(.*; pending compactions: none$`, 'm'));
  });
});
