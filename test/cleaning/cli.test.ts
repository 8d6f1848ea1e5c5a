/**
 * The `clean`, `archive`, `show-clean` and `timeline --archived` commands, run as a user runs the built CLI, on a
 * hand-written table (see test/cleaning/cleaning.test.ts for the arithmetic of which files go).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonLines, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/paths.js';
import { type FileWrite, fileId, SyntheticTable, t } from '../helpers/synthetic-table.js';

const A: FileWrite = { partition: 'dt=a', fileId: fileId(1) };
const B: FileWrite = { partition: 'dt=b', fileId: fileId(2) };

/** t1 inserts A and B, t2..t6 update A. */
async function table(): Promise<SyntheticTable> {
  const made = await SyntheticTable.create();
  await made.commit(t(1), [A, B], 'INSERT');
  for (const i of [2, 3, 4, 5, 6]) await made.commit(t(i), [A]);
  return made;
}

function props(entries: Record<string, string>): string {
  const file = join(tempDir('clean-cli-'), 'job.properties');
  writeFileSync(
    file,
    Object.entries(entries)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  );
  return file;
}

describe('clean / archive / show-clean commands', () => {
  it('clean --dry-run explains, clean deletes, show-clean lists, archive moves, timeline --archived shows both', async () => {
    const made = await table();
    const file = props({ 'hoodie.cleaner.commits.retained': '2', 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3' });
    const before = await made.baseFiles();

    // 6 commits, 2 retained: from t5. A@t6 latest, A@t4 the last before t5; A@t1..t3 go. B@t1 latest.
    const dry = runCli(['clean', made.dir, '--props', file, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`earliest commit to retain: ${t(5)} \\(2 commit\\(s\\) retained`));
    assert.match(dry.stdout, new RegExp(`delete  dt=a/${fileId(1)}_0-1-1_${t(1)}\\.parquet  older-than-retention: superseded by ${t(4)}`));
    assert.match(dry.stdout, new RegExp(`keep    dt=a/${fileId(1)}_0-1-1_${t(4)}\\.parquet  last-version-before-retention`));
    assert.match(dry.stdout, new RegExp(`keep    dt=b/${fileId(2)}_0-1-1_${t(1)}\\.parquet  latest-version`));
    assert.match(dry.stdout, /dry run: 3 file\(s\) would be deleted/);
    assert.deepEqual(await made.baseFiles(), before);

    const cleaned = runCli(['clean', made.dir, '--props', file, '--json']);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    const result = jsonLines(cleaned.stdout)[0]!;
    assert.equal(result['outcome'], 'cleaned');
    assert.equal(result['filesDeleted'], 3);
    assert.deepEqual(
      await made.baseFiles(),
      before.filter((path) => ![1, 2, 3].some((i) => path === SyntheticTable.fileOf(A, t(i)))),
    );

    const shown = runCli(['show-clean', made.dir]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      new RegExp(
        `^${result['instantTime'] as string}  COMPLETED  KEEP_LATEST_COMMITS  earliest retained ${t(5)}  deleted 3 file\\(s\\) in 1 partition\\(s\\)`,
        'm',
      ),
    );
    const partitions = runCli(['show-clean', made.dir, result['instantTime'] as string, '--json']);
    assert.deepEqual(
      jsonLines(partitions.stdout).map((p) => [p['partitionPath'], (p['deleted'] as string[]).length]),
      [['dt=a', 3]],
    );

    // 6 commits > 3; the cleaner retains from t5 (t6 after it, + 2 = 3 > 2): keep 3, max 4: archive t1..t3.
    const archiveDry = runCli(['archive', made.dir, '--props', file, '--dry-run', '--json']);
    const plan = jsonLines(archiveDry.stdout)[0]!;
    assert.deepEqual(
      (plan['instants'] as { time: string }[]).map((i) => i.time),
      [t(1), t(2), t(3)],
    );
    assert.deepEqual([plan['keepMinCommits'], plan['keepMaxCommits']], [3, 4]);
    assert.deepEqual(
      (plan['kept'] as { rule: string }[]).map((k) => k.rule),
      ['min-commits', 'min-commits', 'min-commits'],
    );
    const archived = runCli(['archive', made.dir, '--props', file]);
    assert.equal(archived.code, 0, archived.stderr);
    assert.match(archived.stdout, /archived 3 instant\(s\), 9 record\(s\) into \.hoodie\/archived\/\.commits_\.archive\.1_1-0-1/);

    const timeline = runCli(['timeline', made.dir, '--archived']);
    assert.equal(timeline.code, 0, timeline.stderr);
    const lines = timeline.stdout.trim().split('\n');
    assert.deepEqual(
      lines.slice(0, 3).map((line) => line.split(/\s+/)[0]),
      [t(1), t(2), t(3)],
    );
    assert.ok(lines.slice(0, 3).every((line) => line.endsWith('(archived)')));
    assert.ok(lines.some((line) => line.startsWith(t(6)) && !line.includes('archived')));
    assert.ok(!runCli(['timeline', made.dir]).stdout.includes(t(1)), 'without --archived only the active timeline');
  });

  it('refuses a bad policy with the key and the fix', async () => {
    const made = await table();
    const bad = runCli(['clean', made.dir, '--props', props({ 'hoodie.cleaner.policy': 'KEEP_ALL' })]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stderr,
      /^hudi-serverless clean: .*job\.properties: hoodie\.cleaner\.policy="KEEP_ALL" is not an accepted value \(use one of KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS; default KEEP_LATEST_COMMITS\)\n$/,
    );
  });
});
