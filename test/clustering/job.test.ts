/**
 * Clustering end to end on tables of 200 small base files over 4 partitions: linear, z-order and hilbert (z-order on
 * S3 through the local stack), checked with an independent reader (DuckDB over the base files), with curve keys
 * recomputed by lib/layout/curves.ts, and with our snapshot reader. Then retries, a failed group and its rollback.
 */
import assert from 'node:assert/strict';
import { cpSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { commit } from '../../lib/clustering/commit.js';
import { type ClusteringConfig, resolveClusteringConfig } from '../../lib/clustering/config.js';
import { executeGroup } from '../../lib/clustering/execute.js';
import { CLUSTERING_SUMMARY_KEY, readGroupResult, writeGroupResult } from '../../lib/clustering/instant.js';
import { capGroupBytes, executeGroupCapacityBytes, lambdaEngineOptions, runClusteringJob } from '../../lib/clustering/job.js';
import { schedule } from '../../lib/clustering/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { ParquetEngine } from '../../lib/engine/port.js';
import { jsonLinesToParquet } from '../../lib/engine/write.js';
import { HudiError } from '../../lib/errors.js';
import { buildCurveKeys, type CurveLayout, compareUnsignedBytes, curveKeyAt } from '../../lib/layout/curves.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { rollbackInflightClustering } from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { parseBaseFileName } from '../../lib/table/file-system-view.js';
import { withMetaFields } from '../../lib/table/schema.js';
import { HudiTable } from '../../lib/table/table.js';
import { markerDir } from '../../lib/timeline/markers.js';
import { clusteringWorkDir } from '../../lib/timeline/work-folder.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { jsonLines, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { independentLatestBaseFiles, pyarrowRead } from '../helpers/oracle.js';
import { requireS3, s3TablePath, uploadTable } from '../helpers/s3.js';
import { createSmallFilesTable, type SmallFilesTable, USERS_SCHEMA } from '../helpers/small-files-table.js';

const SORT_COLUMNS = ['birthday', 'createTime'];
const ROW_COLUMNS =
  '_hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, id, name, birthday, createTime, position, notes, dt';

function clusteringConfig(layout: 'linear' | 'z-order' | 'hilbert', made: SmallFilesTable, extra: Record<string, string> = {}): ClusteringConfig {
  // About 4 output files per partition.
  const target = Math.ceil(made.bytes / made.partitions.length / 4);
  return resolveClusteringConfig({
    event: {
      'hoodie.clustering.plan.strategy.sort.columns': SORT_COLUMNS.join(','),
      'hoodie.layout.optimize.strategy': layout,
      'hoodie.clustering.plan.strategy.target.file.max.bytes': String(target),
      ...extra,
    },
  }).config;
}

async function withDuckDb<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Every row of some base files as text (all columns but _hoodie_file_name), sorted: a multiset to compare. */
async function rowMultiset(files: readonly string[], columns = ROW_COLUMNS): Promise<string[]> {
  return withDuckDb(async (connection) => {
    const list = files.map((file) => `'${file}'`).join(', ');
    const reader = await connection.runAndReadAll(`SELECT ${columns} FROM read_parquet([${list}], hive_partitioning = false)`);
    return reader
      .getRows()
      .map((row) => JSON.stringify(row.map((value) => (value === null ? null : String(value)))))
      .sort();
  });
}

interface OutputFile {
  readonly path: string;
  readonly local: string;
  readonly group: number;
  readonly output: number;
}

/** The files the completed replacecommit names, parsed from its JSON independently of our reader, staged locally. */
async function committedOutputs(
  storage: Storage,
  instantTime: string,
  stageDir: string,
): Promise<{ outputs: OutputFile[]; metadata: Record<string, unknown> }> {
  const metadata = JSON.parse(Buffer.from(await storage.get(`.hoodie/${instantTime}.replacecommit`)).toString('utf8')) as {
    partitionToWriteStats: Record<string, { path: string }[]>;
  };
  const outputs: OutputFile[] = [];
  for (const stats of Object.values(metadata.partitionToWriteStats)) {
    for (const { path } of stats) {
      const name = path.slice(path.lastIndexOf('/') + 1);
      const [output, group] = parseBaseFileName(name)!.writeToken.split('-').map(Number);
      const local = storage.localPath?.(path) ?? join(stageDir, name);
      if (storage.localPath?.(path) === undefined) await storage.downloadFile(path, local);
      outputs.push({ path, local, group: group!, output: output! });
    }
  }
  return { outputs: outputs.sort((a, b) => a.group - b.group || a.output - b.output), metadata };
}

/** Sort-column values of a file in file order: birthday as days, createTime as epoch micros (curves.ts form). */
async function sortValuesInFileOrder(file: string): Promise<{ birthday: number[]; createTime: bigint[]; names: string[] }> {
  return withDuckDb(async (connection) => {
    const reader = await connection.runAndReadAll(
      `SELECT CAST(birthday - DATE '1970-01-01' AS INTEGER), epoch_us(createTime), _hoodie_file_name FROM read_parquet('${file}', file_row_number = true) ORDER BY file_row_number`,
    );
    const rows = reader.getRows();
    return { birthday: rows.map((row) => row[0] as number), createTime: rows.map((row) => row[1] as bigint), names: rows.map((row) => row[2] as string) };
  });
}

/** Assert each output is in the strategy's key order, and the outputs of a group continue each other. */
async function assertKeyOrder(layout: CurveLayout | 'linear', outputs: readonly OutputFile[]): Promise<void> {
  // Schema positions of the sort columns in the rows being clustered (5 meta columns, id, name, birthday, createTime).
  const positions = [7, 8];
  let previous: { group: number; key: Uint8Array | [number, bigint] } | undefined;
  for (const output of outputs) {
    const values = await sortValuesInFileOrder(output.local);
    const fileName = output.path.slice(output.path.lastIndexOf('/') + 1);
    assert.ok(
      values.names.every((name) => name === fileName),
      `_hoodie_file_name is ${fileName} in every row`,
    );
    const keys: (Uint8Array | [number, bigint])[] = [];
    if (layout === 'linear') {
      values.birthday.forEach((birthday, row) => {
        keys.push([birthday, values.createTime[row]!]);
      });
    } else {
      const batch = buildCurveKeys(
        [
          { type: 'date', values: values.birthday, schemaPosition: positions[0]! },
          { type: 'timestamp', values: values.createTime, schemaPosition: positions[1]! },
        ],
        { layout },
      );
      for (let row = 0; row < batch.rowCount; row++) keys.push(curveKeyAt(batch, row));
    }
    const compare = (a: Uint8Array | [number, bigint], b: Uint8Array | [number, bigint]): number =>
      a instanceof Uint8Array && b instanceof Uint8Array
        ? compareUnsignedBytes(a, b)
        : (() => {
            const [ab, at] = a as [number, bigint];
            const [bb, bt] = b as [number, bigint];
            return ab - bb || (at < bt ? -1 : at > bt ? 1 : 0);
          })();
    for (let row = 1; row < keys.length; row++) assert.ok(compare(keys[row - 1]!, keys[row]!) <= 0, `${fileName}: row ${row} is out of ${layout} order`);
    if (previous !== undefined && previous.group === output.group) {
      assert.ok(compare(previous.key, keys[0]!) <= 0, `${fileName} continues the previous output of group ${output.group}`);
    }
    previous = { group: output.group, key: keys.at(-1)! };
  }
}

function snapshotRows(rows: readonly Record<string, unknown>[]): string[] {
  return rows
    .map((row) =>
      JSON.stringify(
        Object.entries(row)
          .filter(([column]) => column !== '_hoodie_file_name')
          .sort(([a], [b]) => a.localeCompare(b)),
      ),
    )
    .sort();
}

async function clusterAndCheck(layout: 'linear' | 'z-order' | 'hilbert', where: 'local' | 's3'): Promise<void> {
  const dir = tempDir(`clustering-${layout}-`);
  const made = await createSmallFilesTable({ dir, partitions: 4, commits: 50, rowsPerFile: 100, seed: layout.length });
  assert.equal(made.files.length, 200);
  const path = where === 's3' ? await s3TablePath(`clustering-${layout}`) : dir;
  const storage = where === 's3' ? await uploadTable(dir, path) : openStorage(dir);
  const table = await HudiTable.open(storage, { mode: 'write' });
  const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
  const engine = await openParquetEngine({ memoryLimit: '512MB', tempDirectory: join(tempDir(), 'spill') });
  try {
    const before = await readSnapshot(table, { engine, includeMetaFields: true });
    const expected = await rowMultiset(made.files.map((file) => join(dir, file)));
    const progress: string[] = [];

    const result = await runClusteringJob(table, {
      mode: 'scheduleAndExecute',
      config: clusteringConfig(layout, made),
      lock,
      engine,
      tempDir: tempDir(),
      onProgress: (line) => progress.push(line),
    });
    const scheduled = result.scheduled!;
    const instantTime = scheduled.instantTime;
    assert.equal(scheduled.groups.length, 4);
    assert.match(progress.join('\n'), /group 4\/4 done: 50 file\(s\) → \d+, 5000 rows/);
    assert.equal(result.commit?.outcome, 'committed');

    // The commit, read as plain JSON.
    const stage = tempDir();
    const { outputs, metadata } = await committedOutputs(storage, instantTime, stage);
    assert.equal(metadata['operationType'], 'CLUSTER');
    assert.equal(metadata['compacted'], false);
    const extraMetadata = metadata['extraMetadata'] as Record<string, string>;
    assert.deepEqual(Object.keys(extraMetadata), ['schema', CLUSTERING_SUMMARY_KEY]);
    assert.equal(extraMetadata['schema'], JSON.stringify(USERS_SCHEMA));
    const replaced = Object.entries(metadata['partitionToReplaceFileIds'] as Record<string, string[]>).flatMap(([partition, ids]) =>
      ids.map((id) => `${partition}/${id}`),
    );
    assert.deepEqual(
      replaced.sort(),
      made.files.map((file) => `${file.slice(0, file.indexOf('/'))}/${parseBaseFileName(file.slice(file.indexOf('/') + 1))!.fileId}`).sort(),
    );

    // The file count drops as planned.
    const planned = scheduled.groups.reduce((total, group) => total + group.numOutputFileGroups, 0);
    assert.ok(planned >= 12 && planned <= 24, `about 4 outputs per partition (${planned})`);
    assert.equal(outputs.length, planned);
    const view = await (await table.reload()).fileSystemView();
    assert.deepEqual(
      view
        .latestBaseFiles()
        .map((file) => file.path)
        .sort(),
      outputs.map((output) => output.path).sort(),
    );

    // Same rows (independent reader), in the strategy's key order, with Hudi footers.
    assert.deepEqual(await rowMultiset(outputs.map((output) => output.local)), expected);
    await assertKeyOrder(layout, outputs);
    for (const output of outputs) {
      const footer = await engine.readFooter(output.local);
      const keys = await withDuckDb(
        async (connection) => (await connection.runAndReadAll(`SELECT min(_hoodie_record_key), max(_hoodie_record_key) FROM '${output.local}'`)).getRows()[0]!,
      );
      assert.equal(footer.keyValues['hoodie_min_record_key'], keys[0]);
      assert.equal(footer.keyValues['hoodie_max_record_key'], keys[1]);
      assert.equal(footer.keyValues['hoodie_bloom_filter_type_code'], 'DYNAMIC_V0');
      assert.equal(footer.keyValues['parquet.avro.schema'], JSON.stringify(withMetaFields(USERS_SCHEMA)));
      assert.equal(footer.schema.find((column) => column.name === 'createTime')?.timeUnit, 'MILLIS');
    }

    // Our reader reads the same table.
    const after = await readSnapshot(await table.reload(), { engine, includeMetaFields: true });
    assert.equal(after.files.length, planned);
    assert.deepEqual(snapshotRows(after.rows), snapshotRows(before.rows));

    // The report, and the data-skipping figure for curves.
    const report = result.commit!.report!;
    assert.deepEqual([report.totals.filesBefore, report.totals.filesAfter, report.totals.rowsBefore, report.totals.rowsAfter], [200, planned, 20_000, 20_000]);
    for (const figure of report.totals.dataSkipping) assert.equal(figure.samples, 400);
    // The replacecommit keeps the report's totals, so they outlive the group results.
    assert.deepEqual(JSON.parse(extraMetadata[CLUSTERING_SUMMARY_KEY]!), {
      layout,
      sortColumns: [...SORT_COLUMNS],
      groups: 4,
      partitions: report.partitions.length,
      totals: report.totals,
    });
    assert.deepEqual(result.commit!.summary, JSON.parse(extraMetadata[CLUSTERING_SUMMARY_KEY]!));
    const [birthday, createTime] = report.totals.dataSkipping;
    assert.ok(birthday!.before > 0.9 && createTime!.before > 0.9, 'small files each span nearly the whole range');
    if (layout === 'linear') {
      assert.ok(birthday!.after < 0.5, `linear by birthday first: birthday ${birthday!.after}`);
    } else {
      assert.ok(birthday!.after < birthday!.before - 0.05, `${layout} improves birthday: ${birthday!.before} → ${birthday!.after}`);
      assert.ok(createTime!.after < createTime!.before - 0.05, `${layout} improves createTime: ${createTime!.before} → ${createTime!.after}`);
    }

    // Nothing left behind.
    assert.deepEqual(await storage.listRecursive(markerDir(instantTime)), []);
    assert.deepEqual(await storage.listRecursive(clusteringWorkDir(instantTime)), []);
    assert.equal(await storage.head(`.hoodie/.heartbeat/${instantTime}`), undefined);
  } finally {
    await engine.close();
  }
}

describe('clustering end to end', () => {
  it('linear, local table', () => clusterAndCheck('linear', 'local'));
  it('hilbert, local table', () => clusterAndCheck('hilbert', 'local'));
  it('z-order, table on S3', () => {
    requireS3();
    return clusterAndCheck('z-order', 's3');
  });
});

/**
 * The same on a table our writer wrote: 50 bulk_insert batches into 4 partitions (bulk_insert does no small-file
 * packing, so every batch adds a file per partition), clustered with each layout, then upserted by the writer.
 */
describe('clustering a table written by our writer, then upserting into it', () => {
  const writerProps = new Map([
    ['hoodie.table.name', 'users'],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.datasource.write.precombine.field', 'createTime'],
    ['hoodie.index.bloom.num_entries', '1000'],
  ]);
  let written: Promise<string> | undefined;
  /** Written once, copied per layout. */
  function writerTable(): Promise<string> {
    written ??= (async () => {
      const dir = join(tempDir('writer-table-'), 'users');
      const inputs = tempDir('writer-batches-');
      for (let batch = 0; batch < 50; batch++) {
        const file = join(inputs, `b${batch}.jsonl`);
        await writeJsonLines(file, generateUsers({ count: 80, seed: 1000 + batch, idStart: 1 + batch * 80, days: 4 }));
        // The first batch types the table as `generate --out users.parquet` types it (JSON strings would stay strings,
        // as Spark's JSON reader keeps them); later JSON batches take the table's DATE and TIMESTAMP types.
        const input = batch === 0 ? join(inputs, 'b0.parquet') : file;
        if (batch === 0) await jsonLinesToParquet(file, input);
        await writeBatch(openStorage(dir), {
          input: { file: input, format: batch === 0 ? 'parquet' : 'jsonl' },
          operation: 'bulk_insert',
          properties: writerProps,
        });
      }
      return dir;
    })();
    return written;
  }

  for (const layout of ['linear', 'z-order', 'hilbert'] as const) {
    it(`${layout}: rows unchanged, files drop as planned, key order, data skipping; an upsert then finds its records`, async () => {
      const source = await writerTable();
      const dir = join(tempDir(`writer-${layout}-`), 'users');
      cpSync(source, dir, { recursive: true });
      const storage = openStorage(dir);
      const table = await HudiTable.open(storage, { mode: 'write' });
      const inputFiles = (await table.fileSystemView()).latestBaseFiles().map((file) => join(dir, file.path));
      assert.equal(inputFiles.length, 200);
      const writerColumns = ROW_COLUMNS.replace(', notes', '');
      const expected = await rowMultiset(inputFiles, writerColumns);
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const engine = await openParquetEngine({ memoryLimit: '512MB', tempDirectory: join(tempDir(), 'spill') });
      try {
        const inputBytes = inputFiles.reduce((total, file) => total + statSync(file).size, 0);
        const config = resolveClusteringConfig({
          event: {
            'hoodie.clustering.plan.strategy.sort.columns': SORT_COLUMNS.join(','),
            'hoodie.layout.optimize.strategy': layout,
            // createTime spans one day per dt partition: the SAMPLE build method ranks both columns evenly.
            'hoodie.layout.optimize.curve.build.method': layout === 'linear' ? 'direct' : 'sample',
            'hoodie.clustering.plan.strategy.target.file.max.bytes': String(Math.ceil(inputBytes / 4 / 4)),
          },
        }).config;
        const result = await runClusteringJob(table, { mode: 'scheduleAndExecute', config, lock, engine, tempDir: tempDir(), bloom: { numEntries: 1000 } });
        const planned = result.scheduled!.groups.reduce((total, group) => total + group.numOutputFileGroups, 0);
        const { outputs } = await committedOutputs(storage, result.scheduled!.instantTime, tempDir());
        assert.equal(outputs.length, planned);
        assert.ok(planned < 200 / 4, `${planned} files instead of 200`);
        assert.deepEqual(
          await rowMultiset(
            outputs.map((output) => output.local),
            writerColumns,
          ),
          expected,
        );
        // pyarrow, on the latest base files worked out without lib/, sees the same 4,000 records.
        assert.equal(pyarrowRead(independentLatestBaseFiles(dir)).length, 4000);
        if (layout === 'linear') await assertKeyOrder('linear', outputs);
        const [birthday, createTime] = result.commit!.report!.totals.dataSkipping;
        console.log(
          `clustering ${layout} of a writer-written table: files 200 → ${planned}, rows 4000 → 4000; point query reads birthday ${(birthday!.before * 100).toFixed(1)}% → ${(birthday!.after * 100).toFixed(1)}%, createTime ${(createTime!.before * 100).toFixed(1)}% → ${(createTime!.after * 100).toFixed(1)}% of files`,
        );
        assert.ok(birthday!.after < birthday!.before, `birthday ${birthday!.before} → ${birthday!.after}`);
        if (layout !== 'linear') assert.ok(createTime!.after < createTime!.before - 0.05, `createTime ${createTime!.before} → ${createTime!.after}`);

        // The writer finds records in the new file groups: 30 updates, no duplicates.
        const { rows } = await readSnapshot(await table.reload(), { engine });
        const changed = rows.slice(0, 30).map((row) => ({ ...row, name: 'after-clustering', createTime: '2030-01-01 00:00:00' }));
        const updates = join(tempDir(), 'updates.jsonl');
        await writeJsonLines(updates, changed);
        const upsert = await writeBatch(storage, { input: { file: updates, format: 'jsonl' }, operation: 'upsert', properties: writerProps });
        assert.equal(upsert.updated, 30);
        assert.equal(upsert.inserted, 0);
        const after = await readSnapshot(await table.reload(), { engine });
        assert.equal(after.rows.length, 4000);
        assert.equal(after.rows.filter((row) => row['name'] === 'after-clustering').length, 30);
        const outputIds = new Set(outputs.map((output) => parseBaseFileName(output.path.slice(output.path.lastIndexOf('/') + 1))!.fileId));
        assert.ok(
          upsert.stats.every((stat) => outputIds.has(stat.fileId)),
          'the upsert rewrote the clustered file groups',
        );
      } finally {
        await engine.close();
      }
    });
  }
});

/** An engine whose copySorted fails while `failing` is set: a group that dies midway. */
function failingEngine(engine: ParquetEngine, state: { failing: boolean }): ParquetEngine {
  return new Proxy(engine, {
    get(target, property, receiver) {
      if (property === 'copySorted' && state.failing) return () => Promise.reject(new Error('simulated Lambda timeout'));
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * What Hudi's marker-based rollback needs of `.hoodie/.temp/T/`: it takes every file there (DirectWriteMarkers
 * .allMarkerFilePaths, no filter) and parses the text after its last '.' as an IOType, so anything but markers
 * (and the timeline-server MARKERS files) makes Hudi unable to roll T back. Returns the markers found.
 */
async function assertOnlyMarkers(storage: Storage, instantTime: string): Promise<string[]> {
  const folder = `.hoodie/.temp/${instantTime}/`;
  const names = (await storage.listRecursive(folder.slice(0, -1))).map((object) => object.path.slice(folder.length));
  const markers: string[] = [];
  for (const name of names) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    if (base === 'MARKERS.type' || /^MARKERS\d+$/.test(base)) continue;
    const ioType = name.slice(name.lastIndexOf('.') + 1);
    assert.ok(
      ['CREATE', 'MERGE', 'APPEND'].includes(ioType) && name.includes('.marker.'),
      `${folder}${name} is not a marker: Hudi's IOType.valueOf("${ioType}") would throw`,
    );
    markers.push(name);
  }
  return markers;
}

describe('retries and failures', () => {
  async function scheduledTable() {
    const dir = tempDir('clustering-retry-');
    const made = await createSmallFilesTable({ dir, partitions: 3, commits: 10, rowsPerFile: 50 });
    const storage = openStorage(dir);
    const table = await HudiTable.open(storage, { mode: 'write' });
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    const config = clusteringConfig('z-order', made);
    const scheduled = await schedule(table, config, { lock });
    assert.ok(scheduled);
    return { dir, made, storage, lock, config, instantTime: scheduled.instantTime, groups: scheduled.groups, table: await table.reload() };
  }

  it('running a group again overwrites its own files: no row becomes visible twice', async () => {
    const { storage, lock, config, instantTime, groups, table, made } = await scheduledTable();
    const engine = await openParquetEngine();
    try {
      const first = await executeGroup(table, instantTime, 0, { engine, tempDir: tempDir(), config });
      const again = await executeGroup(await table.reload(), instantTime, 0, { engine, tempDir: tempDir(), config });
      assert.deepEqual(
        again.writeStats.map((stat) => stat.path),
        first.writeStats.map((stat) => stat.path),
      );
      const partitionFiles = (await storage.listDir(groups[0]!.partitionPath)).files.filter((file) => file.path.includes(instantTime));
      assert.equal(partitionFiles.length, first.writeStats.length);
      for (let index = 1; index < groups.length; index++) await executeGroup(table, instantTime, index, { engine, tempDir: tempDir(), config });
      const committed = await commit(await table.reload(), instantTime, { lock });
      assert.equal(committed.outcome, 'committed');
      const snapshot = await readSnapshot(await table.reload(), { engine });
      assert.equal(snapshot.rows.length, made.rows);
      assert.equal(new Set(snapshot.rows.map((row) => row.id)).size, made.rows);
      // A retried commit step finds the instant completed and returns its metadata.
      const retried = await commit(await table.reload(), instantTime, { lock });
      assert.equal(retried.outcome, 'already-committed');
      assert.equal(retried.metadata.operationType, 'CLUSTER');
      // … and the run's summary its replacecommit recorded, though the group results are gone.
      assert.equal(committed.summary?.totals.rowsAfter, made.rows);
      assert.deepEqual(retried.summary, committed.summary);
      assert.equal(retried.report, undefined);
    } finally {
      await engine.close();
    }
  });

  it('a failed group leaves the plan pending and commit refuses; a retry of the missing group completes it', async () => {
    const { lock, config, instantTime, groups, table, made } = await scheduledTable();
    const state = { failing: false };
    const engine = await openParquetEngine();
    const flaky = failingEngine(engine, state);
    try {
      await executeGroup(table, instantTime, 0, { engine: flaky, tempDir: tempDir(), config });
      state.failing = true;
      await assert.rejects(executeGroup(table, instantTime, 1, { engine: flaky, tempDir: tempDir(), config }), /simulated Lambda timeout/);
      const pending = await table.reload();
      assert.equal(pending.timeline.find(instantTime)?.state, 'INFLIGHT');
      // Hudi can roll this attempt back: its marker folder holds markers only; group 0's result is in our work folder.
      const markers = await assertOnlyMarkers(pending.storage, instantTime);
      assert.equal(markers.length, groups[0]!.numOutputFileGroups, 'group 0 left one marker per output');
      assert.ok(await readGroupResult(pending.storage, instantTime, 0), 'group 0 has a result');
      assert.deepEqual(
        (await pending.storage.listRecursive(clusteringWorkDir(instantTime))).map((object) => object.path),
        [`${clusteringWorkDir(instantTime)}/group-0.result.json`],
      );
      await assert.rejects(
        commit(pending, instantTime, { lock }),
        (error: unknown) =>
          error instanceof HudiError &&
          new RegExp(`clustering ${instantTime} cannot complete: groups 1, 2 of 3 have no result`).test(error.message) &&
          /the plan stays pending: re-run the missing group/.test(error.message),
      );
      // Readers still see the small files only.
      const unchanged = await readSnapshot(pending, { engine });
      assert.equal(unchanged.files.length, made.files.length);

      // Retry: the job runs only the groups without a result, then commits.
      state.failing = false;
      const progress: string[] = [];
      const result = await runClusteringJob(pending, {
        mode: 'execute',
        config,
        lock,
        engine: flaky,
        tempDir: tempDir(),
        onProgress: (line) => progress.push(line),
      });
      assert.equal(result.instantTime, instantTime);
      assert.deepEqual(result.reusedGroups, [0]);
      assert.deepEqual(result.executedGroups, [1, 2]);
      assert.match(progress[0]!, /group 1\/3 already done by an earlier attempt/);
      const snapshot = await readSnapshot(await table.reload(), { engine });
      assert.equal(snapshot.rows.length, made.rows);
      assert.equal(
        snapshot.files.length,
        groups.reduce((total, group) => total + group.numOutputFileGroups, 0),
      );
    } finally {
      await engine.close();
    }
  });

  it('commit refuses when a group wrote fewer rows than its inputs hold, and when an input file group changed', async () => {
    const { storage, lock, config, instantTime, groups, table } = await scheduledTable();
    const engine = await openParquetEngine();
    try {
      const results = [];
      for (let index = 0; index < groups.length; index++) results.push(await executeGroup(table, instantTime, index, { engine, tempDir: tempDir(), config }));
      // A stored result that does not add up (commit reads the stored results, never the callers').
      await writeGroupResult(storage, { ...results[1]!, inputRows: results[1]!.inputRows + 1 });
      await assert.rejects(commit(await table.reload(), instantTime, { lock }), /group 1: read 501 rows from the input footers but wrote 500/);
      await writeGroupResult(storage, results[1]!);
      // An input file group got a new base file (an update that slipped past the plan).
      const stored = await readGroupResult(storage, instantTime, 2);
      assert.ok(stored);
      const partition = stored.partitionPath;
      const victim = (await (await table.reload()).fileSystemView()).latestBaseFiles(partition)[0]!;
      const newer = `${partition}/${victim.fileId}_0-9-9_20240101000900000.parquet`;
      await storage.put(newer, await storage.get(victim.path));
      await storage.put(
        '.hoodie/20240101000900000.commit',
        JSON.stringify({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' }),
      );
      await assert.rejects(
        commit(await table.reload(), instantTime, { lock }),
        new RegExp(`file group ${victim.fileId} in "${partition}" changed since clustering ${instantTime} was planned`),
      );
      assert.equal((await table.reload()).timeline.find(instantTime)?.state, 'INFLIGHT');
    } finally {
      await engine.close();
    }
  });

  it('rollbackInflightClustering removes the attempt’s files and keeps the plan, which runs again to completion', async () => {
    const { storage, lock, config, instantTime, table, made } = await scheduledTable();
    const engine = await openParquetEngine();
    try {
      const first = await executeGroup(table, instantTime, 0, { engine, tempDir: tempDir(), config });
      for (const stat of first.writeStats) assert.ok(await storage.head(stat.path!));
      const rolledBack = await rollbackInflightClustering(await table.reload(), instantTime, { lock });
      assert.equal(rolledBack?.outcome, 'rolled-back');
      assert.deepEqual([...rolledBack!.deletedFiles].sort(), first.writeStats.map((stat) => stat.path!).sort());
      for (const stat of first.writeStats) assert.equal(await storage.head(stat.path!), undefined);
      const after = await table.reload();
      assert.equal(after.timeline.find(instantTime)?.state, 'REQUESTED');
      assert.equal(await readGroupResult(storage, instantTime, 0), undefined, 'the result went with the attempt');
      assert.deepEqual(await storage.listRecursive(clusteringWorkDir(instantTime)), [], 'nothing is left in the work folder');
      assert.deepEqual(await storage.listRecursive(markerDir(instantTime)), [], 'nor in the marker folder');

      const result = await runClusteringJob(after, { mode: 'execute', config, lock, engine, tempDir: tempDir() });
      assert.deepEqual(result.executedGroups, [0, 1, 2]);
      const snapshot = await readSnapshot(await table.reload(), { engine });
      assert.equal(snapshot.rows.length, made.rows);
    } finally {
      await engine.close();
    }
  });
  it('`cluster --mode rollback --instant T` takes a failed attempt back to its plan through a rollback instant', async () => {
    const { dir, storage, lock, config, instantTime, table, made } = await scheduledTable();
    const engine = await openParquetEngine();
    try {
      const first = await executeGroup(table, instantTime, 0, { engine, tempDir: tempDir(), config });
      const missing = runCli(['cluster', dir, '--mode', 'rollback']);
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /--mode rollback needs --instant T/);
      const rolled = runCli(['cluster', dir, '--mode', 'rollback', '--instant', instantTime, '--json']);
      assert.equal(rolled.code, 0, rolled.stderr);
      const [output] = jsonLines(rolled.stdout) as [{ rolledBack: string; rollbackInstant: string; deleted: string[] }];
      assert.equal(output.rolledBack, instantTime);
      assert.deepEqual([...output.deleted].sort(), first.writeStats.map((stat) => stat.path!).sort());
      for (const stat of first.writeStats) assert.equal(await storage.head(stat.path!), undefined);
      const after = await table.reload();
      assert.deepEqual(
        after.timeline.instants.filter((i) => i.time === instantTime).map((i) => `${i.action} ${i.state}`),
        ['replacecommit REQUESTED'],
      );
      assert.ok(after.timeline.instants.some((i) => i.time === output.rollbackInstant && i.action === 'rollback' && i.state === 'COMPLETED'));
      const again = runCli(['cluster', dir, '--mode', 'rollback', '--instant', instantTime]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /only requested: nothing to roll back/);
      assert.equal((await table.reload()).timeline.instants.filter((i) => i.action === 'rollback').length, 1, 'no second rollback instant');

      const result = await runClusteringJob(await table.reload(), { mode: 'execute', config, lock, engine, tempDir: tempDir() });
      assert.deepEqual(result.executedGroups, [0, 1, 2]);
      assert.equal((await readSnapshot(await table.reload(), { engine })).rows.length, made.rows);
    } finally {
      await engine.close();
    }
  });

  it('a clustering Hudi reverted to requested (files and markers gone, our results left): every group runs again', async () => {
    const { storage, lock, config, instantTime, table, made } = await scheduledTable();
    const engine = await openParquetEngine();
    try {
      const first = await executeGroup(table, instantTime, 0, { engine, tempDir: tempDir(), config });
      // What Hudi's rollbackInflightClustering leaves: the attempt's files, its markers and the inflight file gone,
      // the plan requested again; it does not know our work folder.
      await storage.delete([...first.writeStats.map((stat) => stat.path!), `.hoodie/${instantTime}.replacecommit.inflight`]);
      await storage.delete((await storage.listRecursive(markerDir(instantTime))).map((object) => object.path));
      assert.ok(await readGroupResult(storage, instantTime, 0), 'the stale result is still there');

      const result = await runClusteringJob(await table.reload(), { mode: 'execute', config, lock, engine, tempDir: tempDir() });
      assert.deepEqual(result.reusedGroups, [], 'the stale result was not trusted');
      assert.deepEqual(result.executedGroups, [0, 1, 2]);
      assert.equal(result.commit?.outcome, 'committed');
      const snapshot = await readSnapshot(await table.reload(), { engine });
      assert.equal(snapshot.rows.length, made.rows);
      assert.equal(new Set(snapshot.rows.map((row) => row.id)).size, made.rows);
    } finally {
      await engine.close();
    }
  });
});

describe('layouts of a single sort column and no sort columns', () => {
  it('z-order on one column sorts linearly (as Hudi); no sort columns keeps the input rows', async () => {
    const dir = tempDir('clustering-one-column-');
    const made = await createSmallFilesTable({ dir, partitions: 1, commits: 8, rowsPerFile: 30 });
    const storage = openStorage(dir);
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    const engine = await openParquetEngine();
    try {
      const oneColumn = clusteringConfig('z-order', made, {
        'hoodie.clustering.plan.strategy.sort.columns': 'id',
        'hoodie.clustering.plan.strategy.target.file.max.bytes': String(1 << 30),
      });
      const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
        mode: 'scheduleAndExecute',
        config: oneColumn,
        lock,
        engine,
        tempDir: tempDir(),
        force: true,
      });
      const file = result.commit!.metadata.partitionToWriteStats['dt=2024-01-01']![0]!.path!;
      const ids = (await engine.readRows([join(dir, file)], { columns: ['id'] })).rows.map((row) => row.id as number);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
      assert.equal(ids.length, made.rows);

      const unsorted = resolveClusteringConfig({}).config;
      const again = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
        mode: 'scheduleAndExecute',
        config: unsorted,
        lock,
        engine,
        tempDir: tempDir(),
        force: true,
      });
      const report = again.commit!.report!;
      assert.deepEqual(report.sortColumns, []);
      assert.equal(report.totals.rowsAfter, made.rows);
    } finally {
      await engine.close();
    }
  });
});

describe('memory', () => {
  it('lambdaEngineOptions sizes DuckDB from the function: half its memory, a vCPU per 1,769 MB, allocator flushing, a third of /tmp to spill', () => {
    const options = lambdaEngineOptions(2048, '/scratch', 3 * 1024 * 1024 * 1024);
    assert.deepEqual(options, {
      memoryLimit: '1024MB',
      threads: 1,
      tempDirectory: '/scratch/duckdb-spill',
      allocatorFlushThreshold: '64MB',
      allocatorBackgroundThreads: true,
      maxTempDirectorySize: '1024MB',
    });
    assert.equal(lambdaEngineOptions(10240).threads, 6);
    assert.equal(lambdaEngineOptions(10240).maxTempDirectorySize, undefined, "no free space known: DuckDB's own default");
    assert.throws(() => lambdaEngineOptions(64), HudiError);
  });

  it('the planner never makes a group larger than one execute-group can stage, write and spill', () => {
    const size = { memoryMb: 2048, ephemeralStorageMb: 4096 };
    const sortedCapacity = executeGroupCapacityBytes(size, true);
    assert.equal(sortedCapacity, Math.floor((4096 * 1024 * 1024 * 0.9) / 3));
    assert.ok(executeGroupCapacityBytes(size, false) > sortedCapacity, 'no spill without sorting');
    const sorted = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.sort.columns': 'id' } }).config;
    const capped = capGroupBytes(sorted, size);
    assert.equal(capped.config.maxBytesPerGroup, sortedCapacity, "Hudi's 2 GB default is more than 4 GB of /tmp holds three times");
    assert.match(capped.note ?? '', /max\.bytes\.per\.group=2147483648 lowered to/);
    const small = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.max.bytes.per.group': String(512 * 1024 * 1024) } }).config;
    assert.equal(capGroupBytes(small, size).config, small, 'a group size that fits is kept');
    assert.equal(capGroupBytes(small, size).note, undefined);
  });

  it('a group planned under the cap is split into groups that fit', async () => {
    const dir = tempDir('clustering-cap-');
    const made = await createSmallFilesTable({ dir, partitions: 1, commits: 6, rowsPerFile: 200 });
    const storage = openStorage(dir);
    // A /tmp so small that the cap is two files' bytes.
    const fileBytes = Math.max(...made.files.map((file) => statSync(join(dir, file)).size));
    const ephemeralStorageMb = (2.5 * fileBytes * 3) / 0.9 / (1024 * 1024);
    const { config } = capGroupBytes(clusteringConfig('linear', made), { memoryMb: 1024, ephemeralStorageMb });
    const scheduled = await schedule(await HudiTable.open(storage, { mode: 'write' }), config, { lock: new StorageLockProvider(storage), force: true });
    assert.ok(scheduled !== undefined);
    assert.ok(scheduled.groups.length >= 3, `${scheduled.groups.length} groups`);
    for (const group of scheduled.groups) assert.ok(group.inputBytes <= config.maxBytesPerGroup, `${group.inputBytes} bytes in a group`);
  });

  it('an engine sized for a small Lambda (lambdaEngineOptions) clusters a group larger than its memory into two files, every row kept', async () => {
    const dir = tempDir('clustering-lambda-memory-');
    // 155 MB of Parquet (600,000 rows of ~300 bytes); a 256 MB Lambda gives DuckDB 128 MB.
    const made = await createSmallFilesTable({ dir, partitions: 1, commits: 60, rowsPerFile: 10_000, notesBytes: 230, bloom: false });
    const storage = openStorage(dir);
    const before = await readSnapshot(await HudiTable.open(storage));
    const engine = await openParquetEngine(lambdaEngineOptions(256, tempDir(), 4 * made.bytes));
    try {
      assert.ok((await engine.memoryLimitBytes()) < made.bytes, 'DuckDB may hold less than the group');
      const config = clusteringConfig('linear', made, { 'hoodie.clustering.plan.strategy.target.file.max.bytes': String(Math.ceil(made.bytes / 2)) });
      const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
        mode: 'scheduleAndExecute',
        config,
        lock: new StorageLockProvider(storage),
        engine,
        force: true,
        tempDir: tempDir(),
      });
      assert.equal(result.commit?.outcome, 'committed');
      const { outputs } = await committedOutputs(storage, result.instantTime!, tempDir());
      assert.ok(outputs.length >= 2, `${outputs.length} output files`);
      await assertKeyOrder('linear', outputs);
    } finally {
      await engine.close();
    }
    const after = await readSnapshot(await HudiTable.open(storage));
    const canonical = (rows: readonly Record<string, unknown>[]): string[] => rows.map((row) => JSON.stringify(row)).sort();
    assert.equal(after.rows.length, made.rows);
    assert.deepEqual(canonical(after.rows), canonical(before.rows));
  });

  it('a group larger than the engine’s memory limit completes by spilling to its temp directory', async () => {
    // 155 MB of Parquet (600,000 rows of ~300 bytes) under a 100 MB DuckDB limit.
    const dir = tempDir('clustering-spill-');
    const made = await createSmallFilesTable({ dir, partitions: 1, commits: 60, rowsPerFile: 10_000, notesBytes: 230, bloom: false });
    assert.ok(made.bytes > 140 * 1024 * 1024, `${made.bytes} bytes of input`);
    const storage = openStorage(dir);
    const engine = await openParquetEngine({ memoryLimit: '100MB', tempDirectory: join(tempDir(), 'spill'), threads: 2 });
    try {
      assert.ok((await engine.memoryLimitBytes()) < made.bytes);
      const config = clusteringConfig('z-order', made, { 'hoodie.clustering.plan.strategy.target.file.max.bytes': String(64 * 1024 * 1024) });
      const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
        mode: 'scheduleAndExecute',
        config,
        lock: new StorageLockProvider(storage),
        engine,
        force: true,
        tempDir: tempDir(),
      });
      assert.equal(result.commit?.outcome, 'committed');
      assert.equal(result.commit!.report!.totals.rowsAfter, made.rows);
      const { outputs } = await committedOutputs(storage, result.instantTime!, tempDir());
      assert.equal(outputs.length, 3);
      await assertKeyOrder('z-order', outputs);
    } finally {
      await engine.close();
    }
  });
});
