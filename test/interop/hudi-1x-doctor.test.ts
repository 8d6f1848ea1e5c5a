/**
 * `doctor` and `metadata check` on tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, judged by
 * that release on Spark 3.5.1 (one JVM per release, five Spark writes each). Spark writes a copy-on-write and a
 * merge-on-read table with its defaults (metadata table on: files, column_stats, partition_stats; log files named by
 * their delta commits): doctor finds them healthy, naming only what it does not compare. Then on copies: a deleted
 * base file and a base file overwritten by another (its column and partition stats out of step); a metadata table
 * missing its last deltacommit beside an abandoned clustering plan of ours, repaired by the repairs doctor names; and
 * a failed Spark write that `doctor --fix` rolls back. Spark reads what we read after each repair.
 */
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { lockProviderFor } from '../../lib/lock/index.js';
import type { IndexMismatch } from '../../lib/metadata/check.js';
import { type DoctorReport, doctorTable } from '../../lib/status/doctor.js';
import { doctorFix } from '../../lib/status/fix.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { heartbeatPath } from '../../lib/timeline/heartbeat.js';
import { runCli } from '../helpers/cli.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { failedWrite, HUDI_1X_VERSIONS, hudi1xCowWrite, hudi1xMorWrite, hudi1xWriteOptions, timelineFiles } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';
import { readsAlike } from '../helpers/reads-alike.js';
import { clusterWithCli } from './clustering-helpers.js';

/** Later than the abandoned-plan age, for the checks (which only read): a plan of the test is long abandoned. */
const LATER = new Date(Date.now() + 3 * 86_400_000);
const SORTED = { 'hoodie.clustering.plan.strategy.sort.columns': 'id' };

const doctor = async (path: string, now?: Date): Promise<DoctorReport> =>
  doctorTable(await HudiTable.open(openStorage(path)), now === undefined ? {} : { now });
const serious = (report: DoctorReport) => report.findings.filter((f) => f.severity !== 'info');
const latestBase = (path: string, partition: string) =>
  readdirSync(join(path, partition))
    .filter((name) => name.endsWith('.parquet'))
    .sort((a, b) => a.split('_').at(-1)!.localeCompare(b.split('_').at(-1)!))
    .at(-1)!;

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`doctor on tables Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-doctor-`);
    const cow = join(root, 'cow');
    const mor = join(root, 'mor');
    const copy = (from: string, name: string) => {
      const to = join(root, name);
      cpSync(from, to, { recursive: true });
      return to;
    };

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      // Updates only after the insert: one file group per partition, so no partition is one of small files.
      await hudi1xCowWrite(hudi, cow, 'cow', [1, 2, 3, 4, 5, 6], 1);
      await hudi1xCowWrite(hudi, cow, 'cow', [2, 3], 2);
      await hudi1xMorWrite(hudi, mor, 'mor', [1, 2, 3, 4, 5, 6], 1);
      await hudi1xMorWrite(hudi, mor, 'mor', [2, 3], 2);
      assert.ok(
        readdirSync(join(mor, '2024-01-01')).some((name) => name.includes('.log.')),
        'log files',
      );
    });

    after(async () => {
      await hudi?.close();
    });

    it('finds the tables Hudi wrote healthy, naming only what it does not compare', async () => {
      for (const path of [cow, mor]) {
        const report = await doctor(path);
        assert.deepEqual(serious(report), [], `${path}: ${JSON.stringify(report.findings)}`);
        const check = runCli(['metadata', path, 'check']);
        assert.equal(check.code, 0, check.stdout + check.stderr);
        const result = JSON.parse(check.stdout) as { metadataTable: boolean; ok: boolean; skipped: string[] };
        assert.equal(result.metadataTable, true);
        // Only a merge-on-read table's log files are left out (their column stats), and doctor says so.
        assert.deepEqual(
          result.skipped.map((s) => s.replace(/\d+/, 'N')),
          path === mor ? ['column_stats of N log file(s): their records are not read back to compare'] : [],
        );
        assert.deepEqual(
          report.findings.map((f) => f.finding),
          result.skipped.map((s) => `not checked: ${s}`),
        );
      }
      assert.equal(runCli(['doctor', cow]).code, 0);
    });

    it('names a deleted base file and a base file whose column and partition stats are out of step, and their repairs', async () => {
      const path = copy(cow, 'damaged-cow');
      const deleted = `2024-01-02/${latestBase(path, '2024-01-02')}`;
      rmSync(join(path, deleted));
      // The odd ids' file overwritten by the even ids' (a bad copy): listed as before, its footer no longer the one indexed.
      const overwritten = `2024-01-01/${latestBase(path, '2024-01-01')}`;
      copyFileSync(join(cow, deleted), join(path, overwritten));
      const report = await doctor(path);
      assert.equal(report.worst, 'error');
      const missing = report.findings.find((f) => f.check === 'missing-files');
      assert.equal(missing?.subject, deleted);
      assert.match(missing!.repair!, /restore the file .* or roll the table back/);
      const about = (subject: string) => report.findings.filter((f) => f.check === 'metadata-table' && f.subject === subject).map((f) => f.finding);
      assert.deepEqual(about(deleted), ['the metadata table lists it; storage lacks it']);
      const stats = about(overwritten);
      assert.equal(stats.length, 1, stats.join('\n'));
      assert.match(stats[0]!, /^column_stats disagrees with the file's footer: /);
      // The partition's range no longer holds its latest file's even ids, nor its partition value.
      const partition = about('2024-01-01');
      assert.equal(partition.length, 1, partition.join('\n'));
      assert.match(partition[0]!, /^partition_stats disagrees with the range of the partition's latest files: /);
      const check = runCli(['metadata', path, 'check']);
      assert.equal(check.code, 1);
      const { indexMismatches } = JSON.parse(check.stdout) as { indexMismatches: IndexMismatch[] };
      const of = (partition: string, subject: string, field: string) =>
        indexMismatches.find((m) => m.partition === partition && m.path === subject && m.column === 'id' && m.field === field);
      assert.match(JSON.stringify(of('column_stats', overwritten, 'maxValue')), /"inMetadata":".*5.*","inFile":".*6.*"/);
      assert.match(JSON.stringify(of('column_stats', overwritten, 'minValue')), /"inMetadata":".*1.*","inFile":".*2.*"/);
      assert.match(JSON.stringify(of('partition_stats', '2024-01-01', 'maxValue')), /"inMetadata":".*5.*","inFile":".*6.*"/);
      assert.equal(of('partition_stats', '2024-01-01', 'minValue'), undefined, 'a smaller min is still held by the range');
      assert.ok(report.findings.filter((f) => f.check === 'metadata-table').every((f) => /metadata .* drop/.test(f.repair!)));
      assert.equal(runCli(['doctor', path]).code, 4);
    });

    it('names a metadata table out of step and an abandoned clustering plan; their repairs leave a table Spark reads as we do', async () => {
      const path = copy(mor, 'damaged-mor');
      const { instantTime: plan } = clusterWithCli(path, SORTED, 'schedule');
      assert.ok(timelineFiles(path).includes(`${plan}.clustering.requested`));
      // The metadata table's last deltacommit loses its completed file: Hudi's readers no longer count its log blocks.
      const mdtTimeline = join(path, '.hoodie', 'metadata', '.hoodie', 'timeline');
      const last = readdirSync(mdtTimeline)
        .filter((name) => /^\d+_\d+\.deltacommit$/.test(name))
        .sort()
        .at(-1)!;
      rmSync(join(mdtTimeline, last));
      const lastLogs = readdirSync(join(path, '2024-01-01')).filter((name) => name.includes(`_${last.slice(0, 17)}.log.`) && !name.endsWith('.crc'));
      assert.ok(lastLogs.length > 0, `the data deltacommit ${last.slice(0, 17)} wrote log files`);

      const report = await doctor(path, LATER);
      const pending = report.findings.find((f) => f.subject === `${plan}.clustering.requested`);
      assert.equal(pending?.severity, 'warning');
      assert.match(pending!.finding, /a clustering plan requested more than 24 h ago and never executed/);
      assert.match(pending!.repair!, new RegExp(`cluster ${path} --mode execute --instant ${plan}, or .* rollback ${path} ${plan}`));
      const unlisted = report.findings.filter((f) => f.finding === 'a committed data file the metadata table does not list').map((f) => f.subject);
      assert.ok(
        lastLogs.every((name) => unlisted.includes(`2024-01-01/${name}`)),
        `${lastLogs.join(', ')} in ${unlisted.join(', ')}`,
      );
      assert.ok(report.findings.some((f) => f.check === 'metadata-table' && /pending deltacommit/.test(f.finding)));
      assert.equal(report.worst, 'error');

      // The repairs doctor names: drop the metadata table (Spark's next write rebuilds it), then run the plan.
      const drop = runCli(['metadata', path, 'drop']);
      assert.equal(drop.code, 0, drop.stderr);
      const execute = runCli(['cluster', path, '--mode', 'execute', '--instant', plan]);
      assert.equal(execute.code, 0, execute.stderr);
      assert.deepEqual(serious(await doctor(path, LATER)), []);
      const { keys } = await readsAlike(hudi, path);
      assert.deepEqual(
        keys.sort((a, b) => a - b),
        [1, 2, 3, 4, 5, 6],
      );
    });

    it('doctor --fix rolls back a failed Spark write; Spark then reads what we read', async () => {
      const path = copy(cow, 'failed-cow');
      await failedWrite(hudi, path, hudi1xWriteOptions('cow', 'COPY_ON_WRITE'));
      const pendingWrite = (await HudiTable.open(openStorage(path))).timeline.pending().find((i) => i.action === 'commit');
      assert.ok(pendingWrite !== undefined, timelineFiles(path).join(', '));
      // Its writer died an hour ago: its heartbeat (Spark's, or one in its place) no longer updated since.
      const heartbeat = join(path, heartbeatPath(pendingWrite.time));
      if (!existsSync(heartbeat)) {
        mkdirSync(dirname(heartbeat), { recursive: true });
        writeFileSync(heartbeat, '');
      }
      const hourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(heartbeat, hourAgo, hourAgo);
      const storage = openStorage(path);
      const table = await HudiTable.open(storage);
      const result = await doctorFix(storage, { lock: lockProviderFor(table.config.properties, table.config.name, storage) });
      const failed = result.before.findings.find((f) => f.check === 'pending-instant');
      assert.match(failed?.finding ?? '', /a failed write: no live writer/);
      assert.deepEqual(
        result.applied.map((r) => [r.fix, r.outcome]),
        [[{ kind: 'rollback', instant: pendingWrite.time }, 'applied']],
        result.applied.map((r) => r.detail).join('\n'),
      );
      assert.deepEqual(serious(result.after), []);
      const { keys } = await readsAlike(hudi, path);
      assert.deepEqual(
        keys.sort((a, b) => a - b),
        [1, 2, 3, 4, 5, 6],
      );
    });
  });
}
