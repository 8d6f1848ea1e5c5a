// Cleaning and archiving a merge-on-read table as serverless table services: the real ASL
// (infra/state-machine.asl.json) under aws-local-stepfunctions, its tasks bound to the bundled handlers, against moto
// S3 and DynamoDB Local. The table is written by our writer (delta commits into log files, a compaction, more delta
// commits); the fanned-out clean deletes what the one-process planner deletes on a copy — superseded slices, base
// files and log files — the archive moves delta commits off the active timeline, and our reader
// reads the same rows.
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { planClean } from '../../lib/cleaning/schedule.js';
import { readCleanMetadata } from '../../lib/cleaning/timeline-facts.js';
import { generateUsers, type UserRecord, writeJsonLines } from '../../lib/cli/generate.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { runCompaction } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { readSnapshot } from '../../lib/read/reader.js';
import type { TableServicesOutput } from '../../lib/serverless/executions/run-output.js';
import { runStateMachineLocally } from '../../lib/serverless/local/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import type { Storage } from '../../lib/storage/port.js';
import { HudiTable } from '../../lib/table/table.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from '../helpers/fixtures.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';

const PROPS = new Map([
  ['hoodie.table.name', 'users_mor_sm'],
  ['hoodie.datasource.write.table.type', 'MERGE_ON_READ'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  ['hoodie.index.bloom.num_entries', '1000'],
  ['hoodie.parquet.small.file.limit', '0'],
  ['hoodie.metadata.enable', 'false'],
]);
const SERVICE_PROPERTIES: Record<string, string> = {
  'hoodie.cleaner.commits.retained': '2',
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
  'hoodie.serverless.clean.partitions.per.share': '1',
  'hoodie.serverless.clean.files.per.share': '2',
};

let functionsDir: string;
let lockTable: string;
let base: string;

async function write(path: string, records: readonly UserRecord[], operation: 'insert' | 'upsert'): Promise<void> {
  const file = join(tempDir('sm-mor-batch-'), 'batch.jsonl');
  await writeJsonLines(file, records);
  await writeBatch(openStorage(path), { input: { file, format: 'jsonl' }, operation, properties: new Map(PROPS) });
}

function users(count: number): UserRecord[] {
  return [...generateUsers({ count, seed: 1, idStart: 1, startDate: '2024-01-01', days: 3 })];
}

function updates(count: number, round: number): UserRecord[] {
  return users(count).map((u) => ({ ...u, name: `${u.name}-v${round}`, createTime: `${u.dt} 23:${String(10 + round).padStart(2, '0')}:00` }));
}

async function rowsOf(storage: Storage): Promise<string[]> {
  const snapshot = await readSnapshot(await HudiTable.open(storage), {});
  return snapshot.rows.map((row) => JSON.stringify([row['id'], row['name'], row['createTime']])).sort();
}

before(async () => {
  functionsDir = ensureBundles();
  lockTable = await createLockTable('hudi-serverless-mor-clean');
  base = join(tempDir('sm-mor-base-'), 'users_mor_sm');
  await write(base, users(24), 'insert');
  await write(base, updates(9, 2), 'upsert');
  await write(base, updates(9, 3), 'upsert');
  const storage = new LocalStorage(base);
  const table = await HudiTable.open(storage);
  const lock = lockProviderFor(table.config.properties, table.config.name, storage);
  const scheduled = await scheduleCompaction(table, compactionConfigFrom(PROPS, 'test'), { lock, force: true, properties: PROPS });
  assert.ok(scheduled !== undefined);
  await runCompaction(await HudiTable.open(storage), scheduled.instantTime, { lock, properties: PROPS });
  for (let round = 5; round <= 7; round++) await write(base, updates(6, round), 'upsert');
});

after(async () => {
  await dropLockTable(lockTable);
});

describe('cleaning and archiving a merge-on-read table through the state machine', () => {
  test('the fanned-out clean deletes the superseded slices the one-process planner deletes; archive moves delta commits', async () => {
    // The one-process plan on a local copy.
    const copy = tempDir('sm-mor-copy-');
    cpSync(base, copy, { recursive: true });
    const local = await HudiTable.open(new LocalStorage(copy), { mode: 'write' });
    const planning = await planClean(local, cleanConfigFromProperties(new Map([...local.config.properties, ...Object.entries(SERVICE_PROPERTIES)])));
    const expected = Object.values(planning.plan?.filePathsToBeDeletedPerPartition ?? {})
      .flat()
      .map((file) => (file.filePath ?? '').slice((file.filePath ?? '').indexOf(copy) + copy.length + 1))
      .sort();
    assert.ok(
      expected.some((path) => path.includes('.log.')),
      `log files are among the deletes: ${expected.join(', ')}`,
    );

    const tablePath = await s3TablePath('sm-mor-clean');
    const storage = openStorage(tablePath);
    await uploadFiles(base, storage);
    const rowsBefore = await rowsOf(storage);
    const execution = await runStateMachineLocally(
      { tablePath, services: 'clean-archive' },
      { functionsDir, retryPauseMs: 20, environment: { LOCK_TABLE: lockTable, CLUSTERING_PROPERTIES: JSON.stringify(SERVICE_PROPERTIES) } },
    );
    assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
    const output = execution.output as TableServicesOutput;
    const clean = output.clean;
    assert.ok(clean?.status === 'CLEANED', JSON.stringify(clean));
    const metadata = await readCleanMetadata(storage, clean.instant, TIMELINE_LAYOUT_1);
    const deleted = Object.values(metadata!.partitionMetadata)
      .flatMap((partition) => partition.successDeleteFiles.map((name) => `${partition.partitionPath}/${name}`))
      .sort();
    assert.deepEqual(deleted, expected, 'the files the one-process planner deletes');
    assert.ok(execution.invocations.filter((invocation) => invocation.functionName === 'clean-plan').length > 1, 'planning fanned out');

    const archive = output.archive;
    assert.ok(archive?.status === 'ARCHIVED', JSON.stringify(archive));
    assert.ok(
      archive.instants.some((instant) => instant.endsWith(' deltacommit')),
      `delta commits archived: ${archive.instants.join(', ')}`,
    );
    assert.deepEqual(await rowsOf(storage), rowsBefore, 'our reader reads the same rows');
  });
});
