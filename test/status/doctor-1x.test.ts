/**
 * `doctor` and `metadata check` on Hudi 1.x tables (versions 8 and 9) without Spark: tables our writer wrote at each
 * version (copy-on-write and merge-on-read) are healthy; an abandoned clustering plan on the 1.x timeline (the
 * `clustering` action) names its repair; a timeline past the archival bounds is archived by `doctor --fix` into the
 * LSM history; and on the metadata tables Hudi 1.0.2 and 1.1.1 wrote (test/fixtures/hudi-1x-metadata, data files
 * left out) every file `files` lists is named as missing from storage. test/interop/hudi-1x-doctor.test.ts judges
 * the checks against Spark's tables.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { checkMetadataTable } from '../../lib/metadata/check.js';
import { doctorTable } from '../../lib/status/doctor.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { runCli } from '../helpers/cli.js';
import { hudi1xJsonl, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hudi-1x-metadata');
const LATER = new Date(Date.now() + 3 * 86_400_000);

async function ourTable(tableVersion: number, type: 'COPY_ON_WRITE' | 'MERGE_ON_READ', writes: number, extra: Record<string, string> = {}) {
  const dir = tempDir(`doctor-1x-${tableVersion}-`);
  const path = join(dir, 'table');
  const storage = new LocalStorage(path);
  const properties = new Map([
    ...Object.entries(hudi1xWriteOptions('t', type)),
    ['hoodie.write.table.version', String(tableVersion)],
    ...Object.entries(extra),
  ]);
  await writeBatch(storage, { input: { file: hudi1xJsonl(dir, [1, 2, 3, 4], 1), format: 'jsonl' }, operation: 'upsert', properties });
  for (let at = 2; at <= writes; at++)
    await writeBatch(storage, { input: { file: hudi1xJsonl(dir, [1, 2], at), format: 'jsonl' }, operation: 'upsert', properties });
  return { path, storage, properties };
}

for (const tableVersion of [8, 9]) {
  describe(`doctor on version ${tableVersion} tables we wrote`, () => {
    for (const type of ['COPY_ON_WRITE', 'MERGE_ON_READ'] as const) {
      it(`a ${type} table of three writes is healthy, and exits 0`, async () => {
        const { path, storage } = await ourTable(tableVersion, type, 3);
        const table = await HudiTable.open(storage);
        assert.equal(table.config.version, tableVersion);
        if (type === 'MERGE_ON_READ') assert.ok(readdirSync(join(path, '2024-01-01')).some((name) => name.includes('.log.')));
        assert.deepEqual((await doctorTable(table)).findings, []);
        assert.equal(runCli(['doctor', path]).code, 0);
      });
    }

    it('an abandoned clustering plan (the 1.x clustering action) is a warning naming its repair; a young one is an info', async () => {
      const { path, storage, properties } = await ourTable(tableVersion, 'MERGE_ON_READ', 2, { 'hoodie.metadata.enable': 'false' });
      const engine = await openParquetEngine();
      let plan: string;
      try {
        const table = await HudiTable.open(storage, { mode: 'clustering' });
        const { config } = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': 'id' } });
        const lock = lockProviderFor(table.config.properties, table.config.name, storage);
        const run = await runClusteringJob(table, { mode: 'schedule', config, lock, engine, force: true, properties });
        plan = run.scheduled!.instantTime;
      } finally {
        await engine.close();
      }
      const subject = `${plan}.clustering.requested`;
      assert.ok(existsSync(join(path, '.hoodie', 'timeline', subject)));
      const young = (await doctorTable(await HudiTable.open(storage))).findings.find((f) => f.subject === subject);
      assert.deepEqual([young?.severity, young?.finding], ['info', 'a clustering plan waiting to run']);
      const report = await doctorTable(await HudiTable.open(storage), { now: LATER });
      const old = report.findings.find((f) => f.subject === subject);
      assert.equal(old?.severity, 'warning');
      assert.match(old!.finding, /a clustering plan requested more than 24 h ago and never executed/);
      assert.match(old!.repair!, new RegExp(`cluster ${path} --mode execute --instant ${plan}, or hudi-serverless rollback ${path} ${plan}`));
    });

    it('a timeline past the archival bounds is a warning; doctor --fix cleans and archives it into the LSM history', async () => {
      const noServices = { 'hoodie.metadata.enable': 'false', 'hoodie.clean.automatic': 'false', 'hoodie.archive.automatic': 'false' };
      const { path, storage } = await ourTable(tableVersion, 'COPY_ON_WRITE', 6, noServices);
      const props = join(tempDir('doctor-1x-props-'), 'job.properties');
      writeFileSync(props, 'hoodie.cleaner.commits.retained=1\nhoodie.keep.min.commits=2\nhoodie.keep.max.commits=3\nhoodie.metadata.enable=false\n');
      const properties = new Map([
        ['hoodie.cleaner.commits.retained', '1'],
        ['hoodie.keep.min.commits', '2'],
        ['hoodie.keep.max.commits', '3'],
      ]);
      const report = await doctorTable(await HudiTable.open(storage), { properties });
      const byCheck = new Map(report.findings.map((f) => [f.check, f]));
      assert.equal(byCheck.get('retention')?.severity, 'warning');
      assert.match(byCheck.get('archival')!.finding, /instant\(s\) are past the archival bounds \(6 completed commits active; hoodie.keep.max.commits 3\)/);

      const cli = runCli(['doctor', path, '--props', props, '--fix', '--json']);
      assert.equal(cli.code, 0, cli.stdout + cli.stderr);
      const result = JSON.parse(cli.stdout) as { applied: { fix: { kind: string }; outcome: string }[]; after: { findings: unknown[] } };
      assert.deepEqual(
        result.applied.map((r) => [r.fix.kind, r.outcome]),
        [
          ['clean', 'applied'],
          ['archive', 'applied'],
        ],
      );
      assert.deepEqual(result.after.findings, []);
      const history = join(path, '.hoodie', 'timeline', 'history');
      assert.ok(
        readdirSync(history).some((name) => name.endsWith('.parquet')),
        'an LSM history file',
      );
      const fixed = await HudiTable.open(storage);
      assert.equal(fixed.timeline.completed().filter((i) => i.action === 'commit').length, 2);
    });
  });
}

for (const release of ['1.0.2', '1.1.1']) {
  it(`metadata check on Hudi ${release}'s metadata table names each listed file storage lacks`, async () => {
    const path = join(tempDir(`doctor-1x-mdt-${release}-`), 'table');
    cpSync(join(FIXTURES, release), path, { recursive: true });
    const report = await checkMetadataTable(new LocalStorage(path));
    assert.ok(report !== undefined);
    // The fixture leaves the data files out: every base file `files` lists (two slices of two partitions).
    assert.equal(report.missingFromStorage.length, 4, report.missingFromStorage.join(', '));
    assert.ok(report.missingFromStorage.every((file) => /^p[01]\/[0-9a-f-]+-0_\d+-\d+-\d+_\d{17}\.parquet$/.test(file)));
    assert.deepEqual(report.missingFromMetadata, []);
    assert.deepEqual(report.indexMismatches, []);
    assert.deepEqual(report.problems, []);
    assert.deepEqual(report.skipped, []);
    assert.equal(report.ok, false);
  });
}

it('a 1.x metadata table declaring a partition this build does not read is checked for the rest, and names it as not checked', async () => {
  const path = join(tempDir('doctor-1x-mdt-ri-'), 'table');
  cpSync(join(FIXTURES, '1.1.1'), path, { recursive: true });
  const properties = join(path, '.hoodie', 'hoodie.properties');
  writeFileSync(
    properties,
    readFileSync(properties, 'utf8').replace(/^hoodie\.table\.metadata\.partitions=(.*)$/m, 'hoodie.table.metadata.partitions=$1,secondary_index_by_name'),
  );
  const report = await checkMetadataTable(new LocalStorage(path));
  assert.ok(report !== undefined);
  assert.deepEqual(report.skipped, ['metadata-table partition(s) secondary_index_by_name: not read by this build, so not compared with the data']);
  assert.deepEqual(report.problems, [], 'not a problem of the table: one of this build');
  assert.equal(report.missingFromStorage.length, 4, 'the rest still compared');
});
