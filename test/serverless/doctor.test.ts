// The scheduled doctor: the bundled `doctor` function (sam build's artefact) on a damaged table in moto S3 (a base
// file of the last commit deleted, a failed write: inflight, no heartbeat) finds both, logs each finding as one
// structured line and publishes EMF metrics per severity and per check with the table as a dimension, which must
// equal its output; invoked with {"fix": true} it rolls the failed write back under the DynamoDB Local lock and
// counts the repair, and leaves the missing file to a person.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DOCTOR_DIMENSION, METRIC } from '../../lib/serverless/aws/metric-names.js';
import { lambdaContext, loadBundledHandler } from '../../lib/serverless/local/index.js';
import type { DoctorStepOutput } from '../../lib/serverless/steps/doctor/doctor.js';
import { DOCTOR_CHECKS } from '../../lib/status/doctor.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { capturingEmf, type EmfRecord, metric, recordsOf } from '../helpers/emf.js';
import { tempDir } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';

process.env['POWERTOOLS_METRICS_DISABLED'] = 'false';
process.env['POWERTOOLS_LOG_LEVEL'] = 'INFO';

const PROPS = {
  'hoodie.table.name': 'doctored',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'dt',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.metadata.enable': 'false',
  'hoodie.parquet.small.file.limit': '0',
};
const FAILED = '20200101000000000';

let functionsDir: string;
let lockTable: string;

before(async () => {
  functionsDir = ensureBundles();
  lockTable = await createLockTable('hudi-serverless-doctor');
});

after(async () => {
  await dropLockTable(lockTable);
});

/** A local table of two commits, the second's base file to be deleted, and a failed write. */
async function damagedTable(): Promise<{ dir: string; missing: string }> {
  const dir = join(tempDir('doctor-sl-'), 't');
  let last = '';
  for (const ids of [
    [1, 2],
    [3, 4],
  ]) {
    const file = join(tempDir('doctor-sl-in-'), 'batch.jsonl');
    writeFileSync(file, ids.map((id) => `${JSON.stringify({ id, ts: 1, dt: 'p1', name: `n${id}` })}\n`).join(''));
    const result = await writeBatch(openStorage(dir), { input: { file, format: 'jsonl' }, operation: 'upsert', properties: new Map(Object.entries(PROPS)) });
    last = String(result.stats[0]!.path);
  }
  writeFileSync(join(dir, `.hoodie/${FAILED}.commit.requested`), '');
  writeFileSync(join(dir, `.hoodie/${FAILED}.inflight`), '');
  return { dir, missing: last };
}

async function withEnvironment<T>(environment: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(environment).map((name) => [name, process.env[name]]));
  Object.assign(process.env, environment);
  try {
    return await work();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The structured log lines (Powertools JSON) with `message`. */
function logged(lines: readonly string[], message: string): Record<string, unknown>[] {
  return lines
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry['message'] === message);
}

/** The doctor's record of the figures with exactly `dimensions` besides service and step. */
function recordWith(records: readonly EmfRecord[], dimensions: Record<string, string>): EmfRecord {
  const names = ['service', 'step', ...Object.keys(dimensions)].sort();
  const found = records.filter(
    (record) =>
      JSON.stringify([...record._aws.CloudWatchMetrics[0]!.Dimensions[0]!].sort()) === JSON.stringify(names) &&
      Object.entries(dimensions).every(([name, value]) => record[name] === value),
  );
  assert.equal(found.length, 1, `one record with dimensions ${JSON.stringify(dimensions)}`);
  return found[0]!;
}

describe('the doctor function', () => {
  test('finds a deleted base file and a failed write, logs each finding, publishes counts per severity and check; {"fix": true} heals the write', async () => {
    const { dir, missing } = await damagedTable();
    const tablePath = await s3TablePath('doctor');
    const storage = openStorage(tablePath);
    await uploadFiles(dir, storage, (path) => path !== missing);
    const environment = { TABLE_PATH: tablePath, LOCK_TABLE: lockTable, POWERTOOLS_METRICS_NAMESPACE: 'HudiServerlessTest' };

    await withEnvironment(environment, async () => {
      const doctor = await loadBundledHandler('doctor', functionsDir);
      // The schedule's input ({} in template.yaml).
      const lines: string[] = [];
      const { result, records } = await capturingEmf(async () => (await doctor({}, lambdaContext('doctor'))) as DoctorStepOutput, { logLines: lines });

      assert.equal(result.tablePath, tablePath);
      assert.equal(result.worst, 'error');
      const bySubject = new Map(result.findings.map((finding) => [finding.subject, finding]));
      assert.deepEqual([bySubject.get(missing)?.check, bySubject.get(missing)?.severity], ['missing-files', 'error']);
      const failed = bySubject.get(`${FAILED}.commit.inflight`);
      assert.deepEqual([failed?.check, failed?.severity], ['pending-instant', 'warning']);
      assert.match(failed!.finding, /a failed write/);
      assert.equal(result.bySeverity.error, result.findings.filter((f) => f.severity === 'error').length);
      assert.equal(result.bySeverity.warning, result.findings.filter((f) => f.severity === 'warning').length);
      assert.ok(result.byCheck['missing-files'] >= 1 && result.byCheck['pending-instant'] >= 1);
      assert.equal(result.repairs, undefined, 'no repair without fix');
      assert.equal((await HudiTable.open(storage)).timeline.pending().length, 1, 'the failed write is left alone');

      // One structured log line per finding, with its severity, check, subject and repair.
      const findingLines = logged(lines, 'doctor finding');
      assert.deepEqual(
        findingLines.map((line) => [line['check'], line['subject'], line['severity'], line['table']]).sort(),
        result.findings.map((f) => [f.check, f.subject, f.severity, tablePath]).sort(),
      );
      const failedLine = findingLines.find((line) => line['subject'] === `${FAILED}.commit.inflight`)!;
      assert.equal(failedLine['level'], 'WARN');
      assert.equal(failedLine['safeRepair'], `rollback ${FAILED}`);
      assert.match(String(failedLine['repair']), new RegExp(`rollback ${tablePath} ${FAILED}`));

      // The metrics: the invocation's own, and the doctor's with the table (and check) as dimensions.
      const doctorRecords = recordsOf(records, 'doctor');
      assert.ok(doctorRecords.every((record) => record._aws.CloudWatchMetrics[0]!.Namespace === 'HudiServerlessTest'));
      const own = recordWith(doctorRecords, {});
      assert.equal(metric(own, METRIC.succeeded, 'Count'), 1);
      const perTable = recordWith(doctorRecords, { [DOCTOR_DIMENSION.table]: tablePath });
      assert.deepEqual(
        [METRIC.doctorErrors, METRIC.doctorWarnings, METRIC.doctorInfos].map((name) => metric(perTable, name, 'Count')),
        [result.bySeverity.error, result.bySeverity.warning, result.bySeverity.info],
      );
      assert.ok(!(METRIC.doctorRepairsApplied in perTable), 'no repair figures without fix');
      for (const check of DOCTOR_CHECKS) {
        const record = recordWith(doctorRecords, { [DOCTOR_DIMENSION.table]: tablePath, [DOCTOR_DIMENSION.check]: check });
        assert.equal(metric(record, METRIC.doctorFindings, 'Count'), result.byCheck[check], check);
      }
      assert.equal(doctorRecords.length, 2 + DOCTOR_CHECKS.length, 'the invocation, the table, one per check');

      // Fix: the failed write is rolled back (under the deployment's DynamoDB lock); the missing file stays an error.
      const fixLines: string[] = [];
      const fixed = await capturingEmf(async () => (await doctor({ fix: true }, lambdaContext('doctor'))) as DoctorStepOutput, { logLines: fixLines });
      assert.deepEqual(
        fixed.result.repairs?.map((repair) => [repair.fix, repair.outcome]),
        [[{ kind: 'rollback', instant: FAILED }, 'applied']],
      );
      assert.equal(fixed.result.worstAfter, 'error', 'the missing file is still there to restore');
      assert.equal((await HudiTable.open(storage)).timeline.pending().length, 0, 'the failed write is gone');
      assert.deepEqual(
        logged(fixLines, 'doctor repair').map((line) => [line['repair'], line['outcome']]),
        [[`rollback ${FAILED}`, 'applied']],
      );
      const fixedTable = recordWith(recordsOf(fixed.records, 'doctor'), { [DOCTOR_DIMENSION.table]: tablePath });
      assert.deepEqual([metric(fixedTable, METRIC.doctorRepairsApplied, 'Count'), metric(fixedTable, METRIC.doctorRepairsRefused, 'Count')], [1, 0]);

      // The next scheduled check finds the missing file only.
      const again = (await doctor({}, lambdaContext('doctor'))) as DoctorStepOutput;
      assert.equal(again.byCheck['pending-instant'], 0);
      assert.equal(again.byCheck['missing-files'], 1);
    });
  });
});
