/**
 * `hudi-serverless doctor <table>` finds each damage the tests inflict on a table and names its repair: a deleted
 * base file, a failed write, an abandoned clustering plan, a partition of small files, files past retention and a
 * timeline past the archival bounds; a healthy table exits 0, and `--fix` applies the safe repairs.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkMetadataTable } from '../../lib/metadata/check.js';
import { countFindings, doctorTable } from '../../lib/status/doctor.js';
import { openStorage } from '../../lib/storage/index.js';
import { newTableOptionsFromWriteProperties } from '../../lib/table/config.js';
import { createTable } from '../../lib/table/init.js';
import { HudiTable } from '../../lib/table/table.js';
import { encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { runCli } from '../helpers/cli.js';
import { initMetadataTable } from '../helpers/metadata-table.js';
import { tempDir } from '../helpers/paths.js';
import { clusterSortedById } from '../helpers/services-table.js';
import { clusteringPlanOf } from '../helpers/synthetic-table.js';

const PROPS = {
  'hoodie.table.name': 't',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
};

let inputs = 0;
async function write(table: string, ids: readonly number[], extra: Record<string, string> = {}, operation: 'upsert' | 'delete' = 'upsert') {
  const file = join(tempDir('doctor-in-'), `${inputs++}.jsonl`);
  writeFileSync(file, ids.map((id) => `${JSON.stringify({ id, ts: 1, dt: 'p1', name: `n${id}` })}\n`).join(''));
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation, properties: new Map(Object.entries({ ...PROPS, ...extra })) });
}

const doctor = async (table: string) => doctorTable(await HudiTable.open(openStorage(table)));

describe('doctor', () => {
  it('a healthy table: no warning or error, exit 0, the same as JSON', async () => {
    const table = join(tempDir(), 't');
    await write(table, [1, 2]);
    await write(table, [2, 3]);
    const report = await doctor(table);
    assert.equal(report.worst, 'info');
    assert.deepEqual(report.findings, []);
    const cli = runCli(['doctor', table, '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout), JSON.parse(JSON.stringify(report)));
  });

  it('a deleted base file of the last commit is an error naming the file, the instant and the repair (exit 4)', async () => {
    const table = join(tempDir(), 't');
    await write(table, [1, 2]);
    const last = await write(table, [2, 3]);
    const path = String(last.stats[0]!.path);
    rmSync(join(table, path));
    const report = await doctor(table);
    assert.equal(report.worst, 'error');
    const missing = report.findings.filter((f) => f.check === 'missing-files');
    assert.deepEqual(
      missing.map((f) => [f.severity, f.subject]),
      [['error', path]],
    );
    assert.match(missing[0]!.finding, new RegExp(`written by instant ${last.instantTime}`));
    assert.match(missing[0]!.repair!, new RegExp(`restore the file .* before ${last.instantTime}`));
    const cli = runCli(['doctor', table]);
    assert.equal(cli.code, 4, cli.stderr);
    assert.match(cli.stdout, /1 error\(s\)/);
    assert.match(cli.stdout, /repair: restore the file/);
  });

  it('a failed write, an abandoned clustering plan and a partition of small files are warnings with their repairs (exit 3)', async () => {
    const table = join(tempDir(), 't');
    // Each insert its own file group: nothing is small enough to take inserts.
    for (const ids of [[1], [2], [3]]) await write(table, ids, { 'hoodie.parquet.small.file.limit': '0' });
    // A write killed long ago: its instant inflight, no heartbeat.
    writeFileSync(join(table, '.hoodie/20200101000000000.commit.requested'), '');
    writeFileSync(join(table, '.hoodie/20200101000000000.inflight'), '');
    // A clustering plan requested long ago and never executed.
    const first = (await HudiTable.open(openStorage(table))).timeline.completed()[0]!;
    const files = (await (await HudiTable.open(openStorage(table))).fileSystemView()).latestBaseFiles('p1');
    const plan = encodeTimelineAvro('requestedReplace', clusteringPlanOf(files.map((f) => ({ dataFilePath: f.path, fileId: f.fileId, partitionPath: 'p1' }))));
    assert.ok(first.time > '20200101000000001');
    writeFileSync(join(table, '.hoodie/20200101000000001.replacecommit.requested'), plan);
    const report = await doctor(table);
    assert.equal(report.worst, 'warning');
    const bySubject = new Map(report.findings.map((f) => [f.subject, f]));
    assert.match(bySubject.get('20200101000000000.commit.inflight')!.finding, /a failed write/);
    assert.match(bySubject.get('20200101000000000.commit.inflight')!.repair!, new RegExp(`hudi-serverless rollback ${table} 20200101000000000`));
    assert.match(bySubject.get('20200101000000001.replacecommit.requested')!.finding, /never executed/);
    assert.match(bySubject.get('20200101000000001.replacecommit.requested')!.repair!, /cluster .* --mode execute --instant 20200101000000001/);
    assert.match(bySubject.get('p1')!.finding, /3 of 3 base files are smaller than/);
    assert.match(bySubject.get('p1')!.repair!, /cluster .* --mode scheduleAndExecute/);
    assert.equal(runCli(['doctor', table]).code, 3);
  });

  it('files past retention and a timeline past the archival bounds are warnings; --fix heals, cleans and archives (exit 0 after)', async () => {
    const table = join(tempDir(), 't');
    // The services that follow a commit are off, so old slices and instants pile up as on a table nothing maintains.
    const noServices = { 'hoodie.metadata.enable': 'false', 'hoodie.clean.automatic': 'false', 'hoodie.archive.automatic': 'false' };
    for (let i = 0; i < 6; i++) await write(table, [1, 2], noServices);
    const props = join(tempDir('doctor-props-'), 'job.properties');
    writeFileSync(props, 'hoodie.cleaner.commits.retained=1\nhoodie.keep.min.commits=2\nhoodie.keep.max.commits=3\nhoodie.metadata.enable=false\n');
    const properties = new Map([
      ['hoodie.cleaner.commits.retained', '1'],
      ['hoodie.keep.min.commits', '2'],
      ['hoodie.keep.max.commits', '3'],
    ]);

    // Under Hudi's defaults (10 commits retained, 20–30 kept) nothing is due; under the job's keys both are.
    assert.deepEqual(
      (await doctor(table)).findings.filter((f) => f.check === 'retention' || f.check === 'archival'),
      [],
    );
    const report = await doctorTable(await HudiTable.open(openStorage(table)), { properties });
    const byCheck = new Map(report.findings.map((f) => [f.check, f]));
    assert.equal(byCheck.get('retention')?.severity, 'warning');
    assert.match(byCheck.get('retention')!.finding, /^\d+ file\(s\) are past retention \(KEEP_LATEST_COMMITS/);
    assert.deepEqual(byCheck.get('retention')!.fix, { kind: 'clean' });
    assert.equal(byCheck.get('archival')?.severity, 'warning');
    assert.match(byCheck.get('archival')!.finding, /instant\(s\) are past the archival bounds \(6 completed commits active; hoodie.keep.max.commits 3\)/);

    // A failed write older than every commit holds the cleaner and the archiver back (neither passes a pending
    // instant): only the failed write is reported, and --fix heals it first, then cleans, then archives.
    writeFileSync(join(table, '.hoodie/20200101000000000.commit.requested'), '');
    writeFileSync(join(table, '.hoodie/20200101000000000.inflight'), '');
    const held = await doctorTable(await HudiTable.open(openStorage(table)), { properties });
    assert.deepEqual(held.findings.map((f) => f.check).sort(), ['pending-instant']);
    const before = readdirSync(join(table, '.hoodie')).length;

    const cli = runCli(['doctor', table, '--props', props, '--fix', '--json']);
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    const result = JSON.parse(cli.stdout) as { applied: { fix: { kind: string; instant?: string }; outcome: string }[]; after: { findings: unknown[] } };
    assert.deepEqual(
      result.applied.map((r) => [r.fix.kind, r.fix.instant, r.outcome]),
      [
        ['rollback', '20200101000000000', 'applied'],
        ['clean', undefined, 'applied'],
        ['archive', undefined, 'applied'],
      ],
    );
    assert.deepEqual(result.after.findings, []);
    // Rolled back, cleaned and archived: the failed write's files gone, fewer active instants, the same rows.
    const fixed = await HudiTable.open(openStorage(table));
    assert.equal(fixed.timeline.pending().length, 0);
    assert.ok(readdirSync(join(table, '.hoodie')).length < before);
    // The archiver keeps hoodie.keep.min.commits of them active.
    assert.equal(fixed.timeline.completed().filter((i) => i.action === 'commit').length, 2);
    const rows = runCli(['read', table]);
    assert.equal(rows.code, 0, rows.stderr);
    assert.deepEqual(
      rows.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: number }).id)
        .sort(),
      [1, 2],
    );
  });

  it('column stats and bloom filters out of step with a base file are errors naming the column and the repair', async () => {
    const table = join(tempDir(), 't');
    // A metadata table with both indexes, as Hudi initializes it on a new table; our writes keep it.
    await createTable(openStorage(table), newTableOptionsFromWriteProperties(new Map(Object.entries(PROPS)), 'test'));
    await initMetadataTable(openStorage(table), ['files', 'column_stats', 'bloom_filters']);
    const indexes = { 'hoodie.parquet.small.file.limit': '0' };
    const first = await write(table, [1, 2], indexes);
    const second = await write(table, [7, 8], indexes);
    const metadataFindings = (report: Awaited<ReturnType<typeof doctor>>) => report.findings.filter((f) => f.check === 'metadata-table');
    assert.deepEqual(metadataFindings(await doctor(table)), [], 'a table whose indexes match its files');
    // A base file overwritten in place by another one (a bad copy, a restore of the wrong object): same name,
    // so the listing still agrees, but its footer is not the one the indexes were built from.
    const damaged = String(first.stats[0]!.path);
    copyFileSync(join(table, String(second.stats[0]!.path)), join(table, damaged));
    const report = await doctor(table);
    assert.equal(report.worst, 'error');
    const about = report.findings.filter((f) => f.subject === damaged);
    assert.deepEqual(about.map((f) => f.finding.split(':')[0]).sort(), [
      "bloom_filters disagrees with the file's footer",
      "column_stats disagrees with the file's footer",
    ]);
    assert.match(about.find((f) => f.finding.startsWith('column_stats'))!.finding, /id\.maxValue: .*2.* in the metadata table, .*8.* in the file/);
    assert.ok(about.every((f) => /metadata .* drop/.test(f.repair!)));
    assert.deepEqual(
      metadataFindings(report).filter((f) => f.subject !== damaged),
      [],
    );
    const cli = runCli(['metadata', table, 'check']);
    assert.equal(cli.code, 1);
    assert.ok((JSON.parse(cli.stdout) as { indexMismatches: unknown[] }).indexMismatches.length > 0);
  });

  it('a record index out of step with the data: live keys it lacks, keys of deleted records, keys at the wrong file group', async () => {
    const table = join(tempDir(), 't');
    const storage = openStorage(table);
    await createTable(storage, newTableOptionsFromWriteProperties(new Map(Object.entries(PROPS)), 'test'));
    await initMetadataTable(storage, ['files', 'record_index']);
    const ownGroups = { 'hoodie.parquet.small.file.limit': '0' };
    const first = await write(table, [1, 2], ownGroups);
    const second = await write(table, [3, 4], ownGroups);
    const groupOf = (result: typeof first) => String(result.stats[0]!.fileId);
    const [groupA, groupB] = [groupOf(first), groupOf(second)];
    const recordIndexFindings = (report: Awaited<ReturnType<typeof doctor>>) => report.findings.filter((f) => f.check === 'record-index');
    assert.deepEqual(recordIndexFindings(await doctor(table)), [], 'our writer keeps the record index');
    assert.deepEqual((await checkMetadataTable(storage))?.recordIndexMismatches, []);

    // The record index as it is now; what later commits add to it is lost below (each deltacommit writes new log
    // files), as if they had been written without it.
    const folder = join(table, '.hoodie/metadata/record_index');
    const kept = new Set(readdirSync(folder));
    const inserted = await write(table, [5], ownGroups);
    await write(table, [1], ownGroups, 'delete');
    await clusterSortedById(storage, 'write', new Map(Object.entries(PROPS)));
    // Where the clustering put the records: the one file group left.
    const groups = (await (await HudiTable.open(storage)).fileSystemView()).latestBaseFiles('p1');
    assert.equal(groups.length, 1, 'the clustering made one file group');
    const clustered = groups[0]!.fileId;
    assert.ok(![groupA, groupB, groupOf(inserted)].includes(clustered));
    assert.deepEqual(recordIndexFindings(await doctor(table)), [], 'still in step before the damage');
    for (const name of readdirSync(folder)) if (!kept.has(name)) rmSync(join(folder, name));

    const report = await doctor(table);
    assert.equal(report.worst, 'error');
    const found = recordIndexFindings(report);
    assert.deepEqual(
      found.map((f) => [f.severity, f.subject]),
      [
        ['error', '.hoodie/metadata/record_index'],
        ['error', '.hoodie/metadata/record_index'],
        ['error', '.hoodie/metadata/record_index'],
      ],
    );
    assert.deepEqual(
      found.map((f) => f.finding),
      [
        `1 live record(s) the record index lacks: 5 (in p1/${clustered})`,
        `1 key(s) of no live record still in the record index: 1 (indexed at p1/${groupA})`,
        `3 key(s) indexed at another file group than the one holding the record: 2 (indexed at p1/${groupA}, held by p1/${clustered}), 3 (indexed at p1/${groupB}, held by p1/${clustered}), 4 (indexed at p1/${groupB}, held by p1/${clustered})`,
      ],
    );
    assert.ok(found.every((f) => /hoodie\.metadata\.record\.index\.enable=false removes only that partition/.test(f.repair!)));
    // Only the record index is out of step: the listing still agrees.
    assert.deepEqual(
      report.findings.filter((f) => f.check === 'metadata-table'),
      [],
    );
    assert.equal(countFindings(report).byCheck['record-index'], 3);
    const check = (await checkMetadataTable(storage))!;
    assert.deepEqual(
      check.recordIndexMismatches.map((m) => [m.kind, m.recordKey]),
      [
        ['deleted', '1'],
        ['location', '2'],
        ['location', '3'],
        ['location', '4'],
        ['missing', '5'],
      ],
    );
    assert.equal(check.ok, false);

    // The named repair: a write with the record index off drops only that partition; the doctor is then content.
    await write(table, [6], { 'hoodie.metadata.record.index.enable': 'false' });
    const repaired = await doctor(table);
    assert.deepEqual(
      repaired.findings.filter((f) => f.check === 'record-index' || f.check === 'metadata-table'),
      [],
    );
  });
});
