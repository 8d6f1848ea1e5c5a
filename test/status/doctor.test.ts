/**
 * `hudi-serverless doctor <table>` finds each damage the tests inflict on a table and names its repair: a deleted
 * base file, a failed write, an abandoned clustering plan, a partition of small files; a healthy table exits 0.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { doctorTable } from '../../lib/status/doctor.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/paths.js';
import { clusteringPlanOf } from '../helpers/synthetic-table.js';

const PROPS = {
  'hoodie.table.name': 't',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
};

let inputs = 0;
async function write(table: string, ids: readonly number[], extra: Record<string, string> = {}) {
  const file = join(tempDir('doctor-in-'), `${inputs++}.jsonl`);
  writeFileSync(file, ids.map((id) => `${JSON.stringify({ id, ts: 1, dt: 'p1', name: `n${id}` })}\n`).join(''));
  return writeBatch(openStorage(table), { input: { file, format: 'jsonl' }, operation: 'upsert', properties: new Map(Object.entries({ ...PROPS, ...extra })) });
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
});
