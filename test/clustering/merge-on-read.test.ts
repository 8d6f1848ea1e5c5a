/**
 * Clustering merge-on-read tables without Spark: base files written by our writer, the table then made
 * merge-on-read and given log files of completed delta commits with lib/log-format (an update, a delete, and a file
 * group of log files only). The plan lists each slice's log files newest first and leaves out file groups in a
 * pending compaction; execution merges the logs into the outputs (what a snapshot read sees, now in base files);
 * the commit refuses a slice that got a log file after the plan. Spark's agreement: test/interop/clustering-merge-on-read.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { describeClusteringPlans } from '../../lib/clustering/show.js';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { ConflictError } from '../../lib/errors.js';
import { lockProviderFor } from '../../lib/lock/index.js';
import { avroDataBlock, deleteBlock, writeLogFile } from '../../lib/log-format/index.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { formatTableProperties, readTableConfig } from '../../lib/table/config.js';
import { withMetaFields } from '../../lib/table/schema.js';
import { HudiTable } from '../../lib/table/table.js';
import { readClusteringPlan } from '../../lib/timeline/clustering-plan.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { tableBytes, tempDir } from '../helpers/paths.js';

const WRITER = new Map([
  ['hoodie.table.name', 'mor_clustering'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.metadata.enable', 'false'],
  ['hoodie.parquet.small.file.limit', '0'],
]);
const SORTED = { 'hoodie.clustering.plan.strategy.sort.columns': 'name' };
const LOG_ONLY = 'log-only-file-group-0';

const row = (id: number, version: number) => ({ id, name: `n${id}-v${version}`, ts: version, dt: 'p' });
const withoutFileName = (rows: readonly Row[]) => rows.map(({ _hoodie_file_name: _, ...rest }) => JSON.stringify(rest)).sort();

/** A completed delta commit at `time` (its commit metadata is not what these tests look at). */
async function completeDeltaCommit(storage: Storage, time: string): Promise<void> {
  await storage.put(`.hoodie/${time}.deltacommit.requested`, '');
  await storage.put(`.hoodie/${time}.deltacommit.inflight`, '');
  await storage.put(`.hoodie/${time}.deltacommit`, JSON.stringify({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' }));
}

interface MorTable {
  readonly path: string;
  readonly storage: Storage;
  /** The file groups with a base file, by the ids their base file holds first. */
  readonly fileIds: readonly string[];
  /** Appends a log file of a new completed delta commit to a file group: these records (a data block), these deleted keys. */
  readonly appendLog: (
    fileId: string,
    time: string,
    records: readonly ReturnType<typeof row>[],
    deletedIds?: readonly number[],
    partitionPath?: string,
  ) => Promise<void>;
}

/**
 * Two base file groups of 3 rows (ids 1-3, 4-6), then made merge-on-read; logs are appended by the tests. Without
 * base files: a merge-on-read table of the same properties and schema (hoodie.table.create.schema) and no commit yet.
 */
async function morTable(options: { baseFiles?: boolean } = {}): Promise<MorTable> {
  const path = join(tempDir('clustering-mor-'), 'table');
  const written = openStorage(path);
  for (const ids of [
    [1, 2, 3],
    [4, 5, 6],
  ]) {
    const input = join(tempDir('clustering-mor-in-'), 'batch.jsonl');
    await writeJsonLines(
      input,
      ids.map((id) => row(id, 0)),
    );
    await writeBatch(written, { input: { file: input, format: 'jsonl' }, operation: 'insert', properties: WRITER });
  }
  const config = await readTableConfig(written);
  const properties = new Map(config.properties);
  properties.set('hoodie.table.type', 'MERGE_ON_READ');
  await written.put('.hoodie/hoodie.properties', formatTableProperties(properties));
  const schemaText = (await (await HudiTable.open(written)).requireSchema('the test')).text;
  const tablePath = options.baseFiles === false ? join(tempDir('clustering-mor-logs-'), 'table') : path;
  const storage = options.baseFiles === false ? openStorage(tablePath) : written;
  if (options.baseFiles === false) {
    properties.set('hoodie.table.create.schema', schemaText);
    await storage.put('.hoodie/hoodie.properties', formatTableProperties(properties));
  }
  const table = await HudiTable.open(storage);
  const schema = withMetaFields((await table.requireSchema('the test')).schema);
  const slices = (await table.fileSystemView()).latestSlices('p');
  const baseInstants = new Map(slices.map((slice) => [slice.fileId, slice.baseInstantTime]));
  const byFirstInstant = [...slices].sort((a, b) => a.baseInstantTime.localeCompare(b.baseInstantTime)).map((slice) => slice.fileId);
  const appendLog: MorTable['appendLog'] = async (fileId, time, records, deletedIds = [], partitionPath = 'p') => {
    await completeDeltaCommit(storage, time);
    const blocks = [];
    if (records.length > 0) {
      const avroRecords = records.map((record, index) => ({
        _hoodie_commit_time: time,
        _hoodie_commit_seqno: `${time}_0_${index}`,
        _hoodie_record_key: String(record.id),
        _hoodie_partition_path: partitionPath,
        _hoodie_file_name: fileId,
        ...record,
      }));
      blocks.push(avroDataBlock({ instantTime: time, schema, records: avroRecords }));
    }
    if (deletedIds.length > 0) {
      blocks.push(deleteBlock({ instantTime: time, records: deletedIds.map((id) => ({ recordKey: String(id), partitionPath, orderingValue: null })) }));
    }
    // The partition's metadata file comes with its first write.
    if ((await storage.head(`${partitionPath}/.hoodie_partition_metadata`)) === undefined) {
      await storage.put(`${partitionPath}/.hoodie_partition_metadata`, `#partition metadata\ncommitTime=${time}\npartitionDepth=1\n`);
    }
    // A file group of log files only has its first delta commit as base instant.
    await writeLogFile(storage, { partitionPath, fileId, baseInstant: baseInstants.get(fileId) ?? time, writeToken: '0-1-2', blocks });
    if (!baseInstants.has(fileId)) baseInstants.set(fileId, time);
  };
  return { path: tablePath, storage, fileIds: byFirstInstant, appendLog };
}

async function cluster(path: string, properties: Record<string, string>, mode: 'schedule' | 'execute' | 'scheduleAndExecute') {
  const props = new Map(Object.entries(properties));
  const { config } = resolveClusteringConfig({ file: { location: 'test properties', properties: props } });
  const table = await HudiTable.open(openStorage(path), { mode: 'clustering' });
  const engine = await openParquetEngine();
  try {
    return await runClusteringJob(table, { mode, config, lock: lockProviderFor(table.config.properties, table.config.name, table.storage), engine });
  } finally {
    await engine.close();
  }
}

async function read(path: string, queryType: QueryType = 'snapshot'): Promise<Row[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true, queryType })).rows;
}

/** Log files of two delta commits on the first group (an update, then an update and a delete), and a group of logs only. */
async function withLogs(table: MorTable): Promise<void> {
  const [first] = table.fileIds;
  await table.appendLog(first!, '20300101000000001', [row(1, 1)]);
  await table.appendLog(first!, '20300101000000002', [row(2, 2)], [3]);
  await table.appendLog(LOG_ONLY, '20300101000000003', [row(7, 3), row(8, 3)]);
}

describe('clustering merge-on-read tables (no Spark)', () => {
  it("plans each slice with its log files newest first, a slice of logs only with dataFilePath '', and skips groups in pending compaction", async () => {
    const table = await morTable();
    await withLogs(table);
    const scheduled = await cluster(table.path, SORTED, 'schedule');
    assert.ok(scheduled.scheduled);
    const plan = (await readClusteringPlan(table.storage, scheduled.scheduled.instantTime, TIMELINE_LAYOUT_1))!;
    const slices = plan.inputGroups.flatMap((group) => group.slices);
    const [first, second] = table.fileIds;
    const name = (path: string) => path.slice(path.lastIndexOf('/') + 1);
    const byId = new Map(slices.map((slice) => [slice.fileId, slice]));
    assert.deepEqual([...byId.keys()].sort(), [first!, second!, LOG_ONLY].sort());
    assert.deepEqual(
      byId
        .get(first!)!
        .deltaFilePaths.map(name)
        .map((file) => file.split('.log.')[1]!.split('_')[0]),
      ['2', '1'],
      'newest log version first, as Hudi’s FileSlice lists them',
    );
    assert.ok(
      byId.get(first!)!.deltaFilePaths.every((path) => path.startsWith(`${table.storage.uri}/p/.${first}_`)),
      'full paths, as Hudi writes them',
    );
    assert.deepEqual(byId.get(second!)!.deltaFilePaths, []);
    assert.equal(byId.get(LOG_ONLY)!.dataFilePath, '');
    assert.equal(byId.get(LOG_ONLY)!.deltaFilePaths.length, 1);
    const metrics = plan.inputGroups[0]!.metrics;
    assert.equal(metrics['TOTAL_LOG_FILES'], 3);
    assert.ok((metrics['TOTAL_IO_WRITE_MB'] ?? 0) >= 120, 'the slice without a base file counts as hoodie.parquet.max.file.size to write');
    const files = (await table.storage.listDir('p')).files.filter((file) => file.path.endsWith('.parquet') || file.path.includes('.log.'));
    const bytes = files.reduce((total, file) => total + file.size, 0);
    assert.equal(scheduled.scheduled.groups[0]?.inputBytes, bytes, 'the scheduled group counts base and log bytes');
    const [shown] = await describeClusteringPlans(await HudiTable.open(table.storage));
    assert.deepEqual([shown?.groups[0]?.inputBytes, shown?.groups[0]?.bytesFrom], [bytes, 'files'], 'show-clustering counts them too');

    // On a copy without the clustering: a compaction takes the groups with logs, so clustering gets the other one.
    const other = await morTable();
    await withLogs(other);
    const compaction = await scheduleCompaction(await HudiTable.open(other.storage), compactionConfigFrom(new Map(), 'test'), {
      lock: lockProviderFor(new Map(), 'mor_clustering', other.storage),
      force: true,
    });
    assert.deepEqual(compaction?.plan.operations.map((op) => op.fileId).sort(), [other.fileIds[0]!, LOG_ONLY].sort());
    const after = await cluster(other.path, SORTED, 'schedule');
    const rest = (await readClusteringPlan(other.storage, after.scheduled!.instantTime, TIMELINE_LAYOUT_1))!;
    assert.deepEqual(
      rest.inputGroups.flatMap((group) => group.slices.map((slice) => slice.fileId)),
      [other.fileIds[1]!],
      'file groups in the pending compaction are left out',
    );
  });

  it('merges the log files into the outputs: snapshot and read-optimized reads are the snapshot before', async () => {
    const table = await morTable();
    await withLogs(table);
    const before = await read(table.path);
    assert.deepEqual(
      before.map((r) => `${r['id']}:${r['name']}`).sort(),
      ['1:n1-v1', '2:n2-v2', '4:n4-v0', '5:n5-v0', '6:n6-v0', '7:n7-v3', '8:n8-v3'],
      'the logs update 1 and 2, delete 3, insert 7 and 8',
    );
    const result = await cluster(table.path, SORTED, 'scheduleAndExecute');
    assert.equal(result.commit?.outcome, 'committed');
    const instant = result.instantTime!;
    assert.deepEqual(withoutFileName(await read(table.path)), withoutFileName(before));
    assert.deepEqual(withoutFileName(await read(table.path, 'read_optimized')), withoutFileName(before), 'the base files hold the merged records');
    assert.ok((await read(table.path)).every((r) => String(r['_hoodie_file_name']).endsWith(`_${instant}.parquet`)));
    const names = (await read(table.path)).map((r) => String(r['name']));
    assert.deepEqual(names, [...names].sort(), 'sorted by name');
    const replaced = result.commit?.metadata.partitionToReplaceFileIds?.['p'] ?? [];
    assert.deepEqual([...replaced].sort(), [...table.fileIds, LOG_ONLY].sort(), 'the file group of logs only is replaced too');
  });

  it('clusters a table without base files: its file groups of log files only merge into the table schema’s columns', async () => {
    const table = await morTable({ baseFiles: false });
    assert.deepEqual(table.fileIds, [], 'no base file');
    await table.appendLog('only-logs-0', '20300101000000004', [row(9, 4), row(10, 4)]);
    await table.appendLog('only-logs-0', '20300101000000005', [row(9, 5)], [10]);
    await table.appendLog('only-logs-1', '20300101000000006', [row(11, 6)]);
    const before = await read(table.path);
    assert.deepEqual(before.map((r) => `${r['id']}:${r['name']}`).sort(), ['11:n11-v6', '9:n9-v5'], 'the second delta commit updates 9 and deletes 10');
    const result = await cluster(table.path, SORTED, 'scheduleAndExecute');
    assert.equal(result.commit?.outcome, 'committed');
    assert.deepEqual([...(result.commit?.metadata.partitionToReplaceFileIds?.['p'] ?? [])].sort(), ['only-logs-0', 'only-logs-1']);
    const after = await read(table.path, 'read_optimized');
    assert.deepEqual(withoutFileName(after), withoutFileName(before), 'the logs are in base files now');
    assert.ok(
      after.every((r) => typeof r['ts'] === 'number' && typeof r['id'] === 'number'),
      'columns of the table schema’s types',
    );
  });

  it('clusters a partition of log files only, taking the column types from the table schema', async () => {
    const table = await morTable();
    await table.appendLog(
      'only-logs-0',
      '20300101000000004',
      [
        { ...row(9, 4), dt: 'q' },
        { ...row(10, 4), dt: 'q' },
      ],
      [],
      'q',
    );
    const before = await read(table.path);
    assert.equal(before.filter((r) => r['dt'] === 'q').length, 2);
    const result = await cluster(table.path, { ...SORTED, 'hoodie.clustering.plan.strategy.partition.selected': 'q' }, 'scheduleAndExecute');
    assert.equal(result.commit?.outcome, 'committed');
    assert.deepEqual(result.commit?.metadata.partitionToReplaceFileIds, { q: ['only-logs-0'] });
    assert.deepEqual(withoutFileName(await read(table.path, 'read_optimized')), withoutFileName(before), 'the logs of q are in a base file now');
  });

  it('the `cluster` and `show-clustering` commands take merge-on-read tables', async () => {
    const table = await morTable();
    await withLogs(table);
    const before = await read(table.path);
    const props = join(tempDir('clustering-mor-props-'), 'clustering.properties');
    writeFileSync(props, 'hoodie.clustering.plan.strategy.sort.columns=name\n');
    const scheduled = runCli(['cluster', table.path, '--mode', 'schedule', '--props', props, '--json']);
    assert.equal(scheduled.code, 0, scheduled.stderr);
    const shown = runCli(['show-clustering', table.path, '--json']);
    assert.equal(shown.code, 0, shown.stderr);
    const plans = jsonLines(shown.stdout) as { inputFiles: number; groups: { bytesFrom: string }[] }[];
    assert.deepEqual(
      plans.map((plan) => [plan.inputFiles, plan.groups.map((group) => group.bytesFrom)]),
      [[3, ['files']]],
      'one plan of the three slices, its bytes from their base and log files',
    );
    const executed = runCli(['cluster', table.path, '--mode', 'execute', '--props', props, '--json']);
    assert.equal(executed.code, 0, executed.stderr);
    assert.deepEqual(withoutFileName(await read(table.path, 'read_optimized')), withoutFileName(before));
  });

  it("our delta commits follow the reject update strategy: refused into the pending plan's file groups, appended to the clustered ones after", async () => {
    const table = await morTable();
    await withLogs(table);
    const scheduled = await cluster(table.path, SORTED, 'schedule');
    assert.ok(scheduled.scheduled);
    const upsert = async (rows: readonly ReturnType<typeof row>[]) => {
      const input = join(tempDir('clustering-mor-up-'), 'batch.jsonl');
      await writeJsonLines(input, rows);
      return writeBatch(table.storage, { input: { file: input, format: 'jsonl' }, operation: 'upsert', properties: WRITER });
    };
    const before = tableBytes(table.path);
    await assert.rejects(upsert([row(4, 20)]), (error: unknown) => {
      assert.ok(error instanceof ConflictError, String(error));
      assert.match(error.message, /in a pending clustering plan/);
      return true;
    });
    assert.deepEqual(tableBytes(table.path), before, 'refused before its delta commit was requested: the table is byte for byte as it was');
    const executed = await cluster(table.path, SORTED, 'execute');
    assert.equal(executed.commit?.outcome, 'committed');
    const written = await upsert([row(4, 21)]);
    const timeline = (await HudiTable.open(table.storage)).timeline;
    assert.equal(timeline.instants.find((i) => i.time === written.instantTime)?.action, 'deltacommit', 'a delta commit');
    const rows = await read(table.path);
    assert.equal(rows.find((r) => Number(r['id']) === 4)?.['name'], 'n4-v21');
    const base = (await read(table.path, 'read_optimized')).find((r) => Number(r['id']) === 4)!;
    assert.equal(base['name'], 'n4-v0', 'the update is in a log file, not a new base file');
    const fileId = String(base['_hoodie_file_name']).split('_')[0]!;
    assert.ok(String(base['_hoodie_file_name']).endsWith(`_${executed.instantTime}.parquet`), 'the record is in an output of the clustering');
    const logs = (await table.storage.listDir('p')).files.map((file) => file.path).filter((path) => path.includes(`.${fileId}_${executed.instantTime}.log.`));
    assert.equal(logs.length, 1, 'one log file on the clustered file group');
  });

  it('refuses to commit when a slice got a log file after the plan: that delta commit would be lost', async () => {
    const table = await morTable();
    await withLogs(table);
    const scheduled = await cluster(table.path, SORTED, 'schedule');
    assert.ok(scheduled.scheduled);
    await table.appendLog(table.fileIds[1]!, '20300101000000009', [row(5, 9)]);
    await assert.rejects(cluster(table.path, SORTED, 'execute'), (error: unknown) => {
      assert.ok(error instanceof ConflictError, String(error));
      assert.match(error.message, /log file\(s\) .* were written to it after the plan/);
      return true;
    });
    assert.equal((await read(table.path)).find((r) => Number(r['id']) === 5)?.['name'], 'n5-v9', 'the later delta commit stays visible');
  });
});
