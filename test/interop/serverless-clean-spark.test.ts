/**
 * The serverless clean and archive against real Hudi 0.15 on S3 (moto through the local stack): a table written by
 * us (our writer, our clusterings) is cleaned and archived by the state machine (the real ASL under
 * aws-local-stepfunctions, the bundled Lambdas, planning and deletes fanned out over shares of partitions); then
 * Spark reads exactly the rows written, lists our archived commits with `show_archived_commits`, and keeps writing
 * with its own cleaner and archiver on; we read what Spark reads, and the next run of ours cleans and archives after
 * Spark's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../lib/read/reader.js';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import { type LocalExecution, runStateMachineLocally } from '../../lib/serverless/local/index.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { archivedInstants, archiveFolder, readArchivedRecords } from '../../lib/timeline/archived/archived-timeline.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';
import { rowLines, type ServicesRow, type ServicesTable, writeServicesTable } from '../helpers/services-table.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const SERVICES = {
  'hoodie.cleaner.commits.retained': '3',
  'hoodie.keep.min.commits': '4',
  'hoodie.keep.max.commits': '6',
  'hoodie.serverless.clean.partitions.per.share': '2',
  'hoodie.serverless.clean.files.per.share': '3',
};

let hudi: HudiHarness;
let base: ServicesTable;
let tablePath: string;
let storage: Storage;
let functionsDir: string;
let lockTable: string;
let first: TableServicesOutput;

function run(): Promise<LocalExecution> {
  return runStateMachineLocally(
    { tablePath, services: 'clean-archive' },
    { functionsDir, retryPauseMs: 20, environment: { LOCK_TABLE: lockTable, CLUSTERING_PROPERTIES: JSON.stringify(SERVICES) } },
  );
}

async function ourRows(): Promise<string[]> {
  return rowLines((await readSnapshot(await HudiTable.open(storage))).rows as Record<string, unknown>[]);
}

async function sparkRows(): Promise<string[]> {
  return rowLines((await hudi.read(tablePath, { meta: false, options: { 'hoodie.metadata.enable': 'false' } })).rows as Record<string, unknown>[]);
}

before(async () => {
  const starting = startHudi({ s3: true });
  try {
    functionsDir = ensureBundles();
    lockTable = await createLockTable('hudi-serverless-clean-spark');
    base = await writeServicesTable({ dir: tempDir('serverless-clean-spark-'), partitions: 6, commits: 20, clusterEvery: 8 });
    tablePath = await s3TablePath('serverless-clean-spark');
    storage = openStorage(tablePath);
    await uploadFiles(base.dir, storage);
    const execution = await run();
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    first = execution.output as TableServicesOutput;
    assert.ok(execution.invocations.filter((invocation) => invocation.functionName === 'clean-plan').length >= 3, 'planning fanned out');
  } finally {
    hudi = await starting;
  }
});

after(async () => {
  await hudi?.close();
  await dropLockTable(lockTable);
});

describe('Spark after our serverless clean and archive, on S3', () => {
  it('reads exactly the rows written, and lists our archived commits', async () => {
    assert.equal(first.clean?.status, 'CLEANED', JSON.stringify(first.clean));
    assert.equal(first.archive?.status, 'ARCHIVED', JSON.stringify(first.archive));
    const expected = rowLines(base.rows.values());
    assert.deepEqual(await sparkRows(), expected, 'Spark');
    assert.deepEqual(await ourRows(), expected, 'our reader');

    const s3a = `s3a://${tablePath.slice('s3://'.length)}`;
    await hudi.sql(`CREATE TABLE services_s3 USING hudi LOCATION '${s3a}'`);
    const shown = await hudi.sql(
      `CALL show_archived_commits(table => 'services_s3', limit => 200, start_ts => '20000101000000000', end_ts => '29991231235959999')`,
    );
    const table = await HudiTable.open(storage);
    const archived = archivedInstants((await readArchivedRecords(storage, archiveFolder(table.config.archiveLogFolder))).records)
      .filter((entry) => ['commit', 'replacecommit'].includes(entry.instant.action))
      .map((entry) => entry.instant.time);
    assert.ok(archived.length > 0);
    assert.deepEqual(
      [...new Set(shown.rows.map((row) => String(row['commit_time'])))].sort(),
      [...archived].sort(),
      'show_archived_commits lists what we archived',
    );
  });

  it('Spark keeps writing with its cleaner and archiver on; we read what it reads, and our next run cleans and archives after it', async () => {
    const sparkServices = {
      'hoodie.table.name': 'services',
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.partitionpath.field': 'dt',
      'hoodie.datasource.write.precombine.field': 'ts',
      'hoodie.metadata.enable': 'false',
      'hoodie.embed.timeline.server': 'false',
      'hoodie.table.timeline.timezone': 'UTC',
      'hoodie.upsert.shuffle.parallelism': '2',
      'hoodie.clean.automatic': 'true',
      'hoodie.archive.automatic': 'true',
      'hoodie.cleaner.commits.retained': '3',
      'hoodie.keep.min.commits': '4',
      'hoodie.keep.max.commits': '6',
    };
    const rows = new Map(base.rows);
    const targets = [...rows.values()].slice(0, 3);
    for (const [round, target] of targets.entries()) {
      const updated: ServicesRow = { ...target, name: `n${target.id}@spark${round}`, ts: 1_000 + round };
      await hudi.write(tablePath, {
        schema: 'id BIGINT, name STRING, ts BIGINT, dt STRING',
        rows: [{ ...updated }],
        options: { ...sparkServices, 'hoodie.datasource.write.operation': 'upsert' },
      });
      rows.set(updated.id, updated);
    }
    const expected = rowLines(rows.values());
    assert.deepEqual(await sparkRows(), expected, 'Spark');
    assert.deepEqual(await ourRows(), expected, 'our reader, after Spark');

    // Spark's services off for two more writes, so ours have something to do.
    for (const [round, target] of targets.slice(0, 2).entries()) {
      const updated: ServicesRow = { ...target, name: `n${target.id}@spark-late${round}`, ts: 2_000 + round };
      await hudi.write(tablePath, {
        schema: 'id BIGINT, name STRING, ts BIGINT, dt STRING',
        rows: [{ ...updated }],
        options: { ...sparkServices, 'hoodie.datasource.write.operation': 'upsert', 'hoodie.clean.automatic': 'false', 'hoodie.archive.automatic': 'false' },
      });
      rows.set(updated.id, updated);
    }
    const again = await run();
    assert.equal(again.status, 'SUCCEEDED', `${again.error}: ${again.cause}`);
    const output = again.output as TableServicesOutput;
    assert.ok(output.clean !== undefined && ['CLEANED', 'NOTHING_TO_CLEAN'].includes(output.clean.status), JSON.stringify(output.clean));
    assert.ok(output.archive !== undefined && output.archive.status !== 'SKIPPED', JSON.stringify(output.archive));
    const table = await HudiTable.open(storage);
    const activeCommits = table.timeline.completed().filter((instant) => ['commit', 'replacecommit'].includes(instant.action)).length;
    assert.ok(activeCommits <= 6, `${activeCommits} commits active`);
    const final = rowLines(rows.values());
    assert.deepEqual(await sparkRows(), final, 'Spark, after our second run');
    assert.deepEqual(await ourRows(), final, 'our reader, after our second run');
  });
});
