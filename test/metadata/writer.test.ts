/**
 * The writer keeps Hudi's metadata table (lib/metadata) on tables that have one: after each bulk_insert, insert,
 * upsert and delete, what our metadata-table reader merges (files listing, column stats, bloom filters, record
 * locations) equals what the data table holds, and every completed data commit has its deltacommit. A write that
 * fails (or is killed) at any storage write of the metadata-table path leaves readers the previous state, and its
 * rollback removes what it wrote there. The user's hoodie.metadata.* keys turn the metadata table (or a partition)
 * off as Hudi's writers do; once Hudi would compact the metadata table, the next commit compacts it first.
 *
 * A clean keeps it too: the deleted files leave `files` and get column_stats and bloom_filters tombstones.
 * Clustering keeps it too: its replacecommit's deltacommit lists the new files (the replaced ones stay listed until
 * a clean), indexes them, and moves every clustered record in the record index; a failed clustering commit is
 * retried or rolled back there too.
 *
 * The metadata tables here are made by test/helpers/metadata-table.ts as Hudi initializes one on an empty table;
 * test/interop/metadata-table-*.test.ts runs Hudi's validator on real Spark-made ones.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HoodieBloomFilter } from '../../lib/base-file/bloom-filter.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { generateUsers, writeJsonLines } from '../../lib/cli/generate.js';
import { commit as commitClustering } from '../../lib/clustering/commit.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { readHudiHFile } from '../../lib/hfile/index.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { decodeLogBlocks, parseLogFileName } from '../../lib/log-format/index.js';
import type { MetadataCompactionResult } from '../../lib/metadata/compaction.js';
import { footerBloomFilter, readLocalFooter } from '../../lib/metadata/footers.js';
import { bloomFilterIndexKey, columnStatsIndexKey } from '../../lib/metadata/hash-ids.js';
import {
  columnRangesFromFooter,
  columnsToIndex,
  METADATA_PARTITIONS_INFLIGHT_KEY,
  METADATA_PARTITIONS_KEY,
  type MetadataPartitionType,
  type MetadataRecord,
  MetadataTable,
  metadataCleanConfig,
} from '../../lib/metadata/index.js';
import { partitionIdentifier } from '../../lib/metadata/partitions.js';
import { deltaCommitsSinceLastCompaction } from '../../lib/metadata/timeline.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { rollbackInflightClustering, rollbackInstant } from '../../lib/rollback/rollback.js';
import { openStorage } from '../../lib/storage/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { newTableOptionsFromWriteProperties, tableChecksum } from '../../lib/table/config.js';
import { joinPartitionPath, parseBaseFileName } from '../../lib/table/file-system-view.js';
import { createTable } from '../../lib/table/init.js';
import { parseJavaProperties } from '../../lib/table/properties.js';
import { HudiTable, listPartitions } from '../../lib/table/table.js';
import { pendingCompactions, readCompactionPlan } from '../../lib/timeline/compaction-plan.js';
import { compareInstantTimes } from '../../lib/timeline/instant.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, readCommitMetadata } from '../../lib/timeline/timeline.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { tempDir } from '../helpers/fixtures.js';
import { runKilledWrite } from '../helpers/killed-write.js';
import { initMetadataTable } from '../helpers/metadata-table.js';

const PROPS = new Map([
  ['hoodie.table.name', 'users'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'createTime'],
  ['hoodie.index.bloom.num_entries', '1000'],
]);
const ALL: readonly MetadataPartitionType[] = ['files', 'column_stats', 'bloom_filters', 'record_index'];

async function mdtTable(partitions: readonly MetadataPartitionType[] = ALL, props = PROPS): Promise<{ table: string; storage: Storage }> {
  const table = join(tempDir('mdt-writer-'), 'users');
  const storage = openStorage(table);
  await createTable(storage, newTableOptionsFromWriteProperties(props, 'test'));
  await initMetadataTable(storage, partitions);
  return { table, storage };
}

let batchNumber = 0;
async function write(
  table: string,
  records: Iterable<object>,
  operation: WriteOptions['operation'],
  extra: Partial<WriteOptions> & { props?: ReadonlyMap<string, string> } = {},
) {
  const input = join(tempDir(), `batch-${batchNumber++}.jsonl`);
  await writeJsonLines(input, records);
  const { props, ...rest } = extra;
  return writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation, properties: props ?? PROPS, ...rest });
}

/**
 * `count` users from `idStart`, each always in the same partition (the writer's index is per partition, as Hudi's
 * non-global ones: a key moving partitions would be a second record), `seed` varying the other fields.
 */
const users = (count: number, seed: number, idStart = 1) =>
  [...generateUsers({ count, seed, idStart, days: 1 })].map((user) => ({
    ...user,
    dt: user.id % 2 === 0 ? '2024-01-02' : '2024-01-01',
    createTime: `2024-01-0${1 + (user.id % 2)} ${String(seed % 24).padStart(2, '0')}:00:00`,
  }));

/**
 * The committed base files on storage: every version whose instant completed, replaced file groups included (the
 * metadata table lists them until a clean deletes them).
 */
async function committedBaseFiles(storage: Storage): Promise<Map<string, { partition: string; name: string; size: number; instant: string; fileId: string }>> {
  const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
  const out = new Map<string, { partition: string; name: string; size: number; instant: string; fileId: string }>();
  for (const partition of await listPartitions(storage)) {
    for (const file of partition.files) {
      const parsed = parseBaseFileName(file.name);
      if (parsed === undefined || !timeline.isCommitted(parsed.instantTime)) continue;
      const path = joinPartitionPath(partition.partitionPath, file.name);
      out.set(path, { partition: partition.partitionPath, name: file.name, size: file.size, instant: parsed.instantTime, fileId: parsed.fileId });
    }
  }
  return out;
}

/** What the metadata table says equals what the data table holds, partition by partition. */
async function assertInSync(table: string, partitions: readonly MetadataPartitionType[] = ALL): Promise<void> {
  const storage = openStorage(table);
  const mdt = await MetadataTable.open(storage);
  assert.ok(mdt, 'the table still has its metadata table');
  const reader = await mdt.reader();
  const files = await committedBaseFiles(storage);
  const byPartition = new Map<string, Map<string, number>>();
  for (const file of files.values())
    (byPartition.get(file.partition) ?? byPartition.set(file.partition, new Map()).get(file.partition)!).set(file.name, file.size);
  assert.deepEqual(await reader.allPartitionPaths(), [...byPartition.keys()].sort(), 'partitions');
  for (const [partition, expected] of byPartition) assert.deepEqual(await reader.filesInPartition(partition), expected, `files of ${partition}`);

  // Every completed data write has its deltacommit; the metadata table has no other but its initializations and
  // those of data instants still pending (a writer died between the two; readers do not apply them).
  const dataTimeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
  const data = dataTimeline
    .completed()
    .filter((i) => i.action !== 'rollback')
    .map((i) => i.time);
  const pending = new Set(dataTimeline.pending().map((i) => i.time));
  const deltas = mdt.timeline
    .completed()
    .filter((i) => i.action === 'deltacommit' && !i.time.startsWith('00000000000000'))
    .map((i) => i.time);
  assert.deepEqual(
    deltas.filter((time) => !pending.has(time)),
    data,
    'one deltacommit per data commit and clean',
  );

  const latest = (await (await HudiTable.open(storage)).fileSystemView()).latestBaseFiles();
  if (partitions.includes('column_stats')) {
    // A clean leaves tombstones for the files it deleted (HoodieColumnRangeMetadata.stub records): not live stats.
    const stats = new Map([...(await reader.readPartition('column_stats'))].filter(([, record]) => !(record.type === 3 && record.columnStats.isDeleted)));
    const commits = await loadTimeline(storage, TIMELINE_LAYOUT_1);
    const metadata = await readCommitMetadata(storage, commits.completedWrites().at(-1)!, TIMELINE_LAYOUT_1);
    const columns = columnsToIndex(metadata, { populateMetaFields: true });
    let checked = 0;
    for (const file of files.values()) {
      const footer = await readLocalFooter(join(table, file.partition, file.name));
      for (const range of columnRangesFromFooter(footer, file.name, columns)) {
        const record = stats.get(columnStatsIndexKey(partitionIdentifier(file.partition), file.name, range.columnName));
        assert.ok(record?.type === 3, `column stats of ${file.name} ${range.columnName}`);
        assert.equal(record.columnStats.fileName, file.name);
        assert.equal(record.columnStats.valueCount, range.valueCount);
        checked++;
      }
    }
    assert.equal(stats.size, checked, 'one column-stats record per committed file and column');
    // The ranges hold the data: id's min and max per latest file, as the rows say.
    const rows = (await readSnapshot(await HudiTable.open(storage), { includeMetaFields: true })).rows;
    for (const file of latest) {
      const ids = rows.filter((row) => row['_hoodie_file_name'] === file.fileName).map((row) => Number(row['id']));
      const record = stats.get(columnStatsIndexKey(partitionIdentifier(file.partitionPath), file.fileName, 'id')) as Extract<MetadataRecord, { type: 3 }>;
      assert.deepEqual(
        [record.columnStats.minValue, record.columnStats.maxValue, record.columnStats.nullCount],
        [{ type: 'long', value: BigInt(Math.min(...ids)) }, { type: 'long', value: BigInt(Math.max(...ids)) }, 0],
        `id range of ${file.fileName}`,
      );
    }
  }
  if (partitions.includes('bloom_filters')) {
    const blooms = new Map([...(await reader.readPartition('bloom_filters'))].filter(([, record]) => !(record.type === 4 && record.bloomFilter.isDeleted)));
    assert.equal(blooms.size, files.size, 'one bloom filter per committed base file');
    for (const file of files.values()) {
      const record = blooms.get(bloomFilterIndexKey(partitionIdentifier(file.partition), file.name));
      assert.ok(record?.type === 4, `bloom filter of ${file.name}`);
      const footer = footerBloomFilter(await readLocalFooter(join(table, file.partition, file.name)))!;
      assert.equal(Buffer.from(record.bloomFilter.bloomFilter).toString('utf8'), footer.serialized);
      assert.deepEqual([record.bloomFilter.type, record.bloomFilter.timestamp, record.bloomFilter.isDeleted], ['DYNAMIC_V0', file.instant, false]);
    }
  }
  if (partitions.includes('record_index')) {
    const rows = (await readSnapshot(await HudiTable.open(storage), { includeMetaFields: true })).rows;
    const fileIds = new Map(latest.map((file) => [file.fileName, file.fileId]));
    const expected = new Map(
      rows.map((row) => [
        String(row['_hoodie_record_key']),
        { partitionPath: String(row['_hoodie_partition_path']), fileId: fileIds.get(String(row['_hoodie_file_name'])) },
      ]),
    );
    const index = await reader.readPartition('record_index');
    const actual = new Map(
      [...(await reader.recordLocations(index.keys()))].map(([key, location]) => [key, { partitionPath: location.partitionPath, fileId: location.fileId }]),
    );
    assert.deepEqual(new Map([...actual].sort()), new Map([...expected].sort()), 'record index');
  }
}

function mdtInstantFiles(table: string): string[] {
  return readdirSync(join(table, '.hoodie/metadata/.hoodie'))
    .filter((name) => /^\d+\./.test(name))
    .sort();
}

/** Every log file of the metadata table with a block of `instant`. */
function mdtLogsOf(table: string, instant: string): string[] {
  const found: string[] = [];
  for (const partition of readdirSync(join(table, '.hoodie/metadata')).filter((name) => !name.startsWith('.'))) {
    for (const name of readdirSync(join(table, '.hoodie/metadata', partition)).filter((n) => n.includes('.log.'))) {
      if (decodeLogBlocks(readFileSync(join(table, '.hoodie/metadata', partition, name))).some((block) => block.header.INSTANT_TIME === instant))
        found.push(`${partition}/${name}`);
    }
  }
  return found;
}

describe("writer with Hudi's metadata table", () => {
  it('bulk_insert, insert, upsert and delete keep files, column_stats, bloom_filters and record_index in sync', async () => {
    const { table } = await mdtTable();
    const first = await write(table, users(40, 1), 'bulk_insert');
    assert.ok(first.metadataTable.deltaCommit, 'the metadata table got a deltacommit');
    assert.equal(first.metadataTable.deltaCommit.partitions['record_index']?.records, 40);
    await assertInSync(table);
    await write(table, users(10, 2, 41), 'insert');
    await assertInSync(table);
    const upserted = await write(table, [...users(5, 3, 1), ...users(5, 4, 51)], 'upsert');
    assert.equal(upserted.metadataTable.deltaCommit?.partitions['record_index']?.records, 5, 'only the new keys get locations');
    await assertInSync(table);
    const deleted = await write(table, users(4, 5, 10), 'delete');
    assert.equal(deleted.deleted, 4);
    assert.equal(deleted.metadataTable.deltaCommit?.partitions['record_index']?.deletes, 4);
    await assertInSync(table);
    // The deltacommit completes before the data commit (the data commit's file is written last).
    for (const instant of [first.instantTime, deleted.instantTime]) {
      const mdtMs = (await openStorage(table).head(`.hoodie/metadata/.hoodie/${instant}.deltacommit`))!.modifiedMs;
      const dataMs = (await openStorage(table).head(`.hoodie/${instant}.commit`))!.modifiedMs;
      assert.ok(mdtMs <= dataMs);
    }
  });

  it('files only, and a non-partitioned table ("." in the metadata table)', async () => {
    const { table } = await mdtTable(['files']);
    await write(table, users(20, 6), 'insert');
    await write(table, users(5, 7, 1), 'upsert');
    await assertInSync(table, ['files']);

    const props = new Map([...PROPS].filter(([key]) => key !== 'hoodie.datasource.write.partitionpath.field'));
    props.set('hoodie.datasource.write.keygenerator.class', 'org.apache.hudi.keygen.NonpartitionedKeyGenerator');
    const flat = await mdtTable(['files', 'record_index'], props);
    await write(flat.table, users(15, 8), 'insert', { props });
    await write(flat.table, users(3, 9, 1), 'delete', { props });
    await assertInSync(flat.table, ['files', 'record_index']);
    const reader = await (await MetadataTable.open(flat.storage))!.reader();
    assert.deepEqual(await reader.allPartitionPaths(), ['']);
  });

  it('a write failing after any storage write of the metadata table path is rolled back there too; the next write completes', async () => {
    const { table } = await mdtTable();
    await write(table, users(20, 10), 'insert');
    // After its requested file, its inflight file, its first and second log files, and its completed file.
    for (const failAt of ['requested', 'inflight', 'log 1', 'log 2', 'completed']) {
      const before = mdtInstantFiles(table);
      let logs = 0;
      let instant = '';
      await assert.rejects(
        write(table, users(6, 12, 200), 'insert', {
          afterMetadataTableWrite: async (what) => {
            instant ||= readdirSync(join(table, '.hoodie'))
              .filter((n) => n.endsWith('.inflight'))
              .sort()
              .at(-1)!
              .slice(0, 17);
            const step = what.startsWith('log ') ? `log ${++logs}` : what;
            if (step === failAt) throw new Error(`injected failure after ${failAt}`);
          },
        }),
        new RegExp(`injected failure after ${failAt}`),
      );
      assert.deepEqual(mdtInstantFiles(table), before, `failure after ${failAt}: the metadata timeline is as before`);
      assert.deepEqual(mdtLogsOf(table, instant), [], `failure after ${failAt}: no log file of ${instant} is left`);
      assert.equal((await loadTimeline(openStorage(table), TIMELINE_LAYOUT_1)).find(instant)?.action, undefined, 'the data instant is gone');
      await assertInSync(table);
    }
    await write(table, users(3, 99, 1), 'upsert');
    await assertInSync(table);
  });

  it('a write killed after any storage write of the metadata table path: readers see the previous state; rollback removes its deltacommit', async () => {
    const { table, storage } = await mdtTable(['files']);
    await write(table, users(10, 20), 'insert');
    const propsFile = join(tempDir(), 'props');
    writeFileSync(propsFile, [...PROPS].map(([k, v]) => `${k}=${v}`).join('\n'));
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    // files only: requested, inflight, one log file, completed. Killed after the log file and after the completed
    // file (the in-process failures above cover every step).
    for (const crashAt of [3, 4]) {
      const input = join(tempDir(), 'batch.jsonl');
      await writeJsonLines(input, users(5, 21 + crashAt, 1000 + 10 * crashAt));
      const beforeRows = (await readSnapshot(await HudiTable.open(storage))).rows.length;
      const killed = runKilledWrite(table, input, propsFile, 'insert', `metadata:${crashAt}`);
      assert.notEqual(killed.code, 0, `killed after metadata-table write ${crashAt}`);
      const failed = readdirSync(join(table, '.hoodie'))
        .filter((f) => f.endsWith('.inflight'))
        .map((f) => f.slice(0, 17))
        .sort()
        .at(-1)!;
      assert.equal((await readSnapshot(await HudiTable.open(storage))).rows.length, beforeRows, 'readers see the previous snapshot');
      assert.equal(
        existsSync(join(table, `.hoodie/metadata/.hoodie/${failed}.deltacommit`)),
        crashAt === 4,
        'the deltacommit completed only when killed after its last write',
      );
      // Listed files come only from completed data instants, whatever the metadata table holds.
      await assertInSync(table, ['files']);
      const result = await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), failed, { lock, ignoreHeartbeat: true });
      assert.equal(result.outcome, 'rolled-back');
      assert.ok(!mdtInstantFiles(table).some((name) => name.startsWith(failed)), `no metadata instant ${failed} is left`);
      assert.deepEqual(mdtLogsOf(table, failed), []);
      await assertInSync(table, ['files']);
    }
    await write(table, users(2, 90, 1), 'upsert');
    await assertInSync(table, ['files']);
  });

  it('hoodie.metadata.enable=false drops the metadata table as Hudi does (properties through the backup protocol), an index key drops only its partition', async () => {
    const { table, storage } = await mdtTable();
    await write(table, users(10, 40), 'insert');
    const withoutIndex = new Map([...PROPS, ['hoodie.metadata.record.index.enable', 'false']]);
    const dropped = await write(table, users(3, 41, 1), 'upsert', { props: withoutIndex });
    assert.deepEqual(dropped.metadataTable.disabled?.removedPartitions, ['record_index']);
    assert.ok(!existsSync(join(table, '.hoodie/metadata/record_index')), 'the partition folder is gone');
    assert.equal(dropped.metadataTable.deltaCommit?.partitions['record_index'], undefined);
    const props = () => parseJavaProperties(readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8'));
    assert.equal(props().get(METADATA_PARTITIONS_KEY), 'bloom_filters,column_stats,files');
    await assertInSync(table, ['files', 'column_stats', 'bloom_filters']);

    const off = await write(table, users(3, 42, 1), 'upsert', { props: new Map([...PROPS, ['hoodie.metadata.enable', 'false']]) });
    assert.equal(off.metadataTable.disabled?.deletedMetadataTable, true);
    assert.equal(off.metadataTable.deltaCommit, undefined);
    assert.ok(!existsSync(join(table, '.hoodie/metadata')), '.hoodie/metadata is gone');
    assert.equal(props().get(METADATA_PARTITIONS_KEY), '');
    assert.equal(props().get(METADATA_PARTITIONS_INFLIGHT_KEY), '');
    assert.equal(props().get('hoodie.table.checksum'), String(tableChecksum('', 'users')));
    assert.ok(!existsSync(join(table, '.hoodie/hoodie.properties.backup')), 'no backup is left');
    assert.equal(await MetadataTable.open(storage), undefined);
    // Later writes without the key have no metadata table to keep.
    const later = await write(table, users(2, 43, 1), 'upsert');
    assert.equal(later.metadataTable.deltaCommit, undefined);
  });

  it('compacts the metadata table when Hudi would (HFile base files, a <deltacommit>001 commit), readers see the same, writes go on', async () => {
    const { table, storage } = await mdtTable();
    let compaction: MetadataCompactionResult | undefined;
    let expectedInstant = '';
    for (let i = 0; compaction === undefined; i++) {
      assert.ok(i < 12, 'a compaction happens within 12 writes');
      const mdt = (await MetadataTable.open(storage))!;
      const due = deltaCommitsSinceLastCompaction(mdt.timeline).length >= 10;
      expectedInstant = `${
        mdt.timeline
          .completed()
          .filter((x) => x.action === 'deltacommit')
          .at(-1)!.time
      }001`;
      const result = await write(table, users(3, 80 + i, 1 + 2 * i), i % 2 === 0 ? 'insert' : 'upsert');
      // Hudi's default hoodie.metadata.compact.max.delta.commits=10, initialization deltacommits included.
      assert.equal(result.metadataTable.compactions.length, due ? 1 : 0, `write ${i}`);
      compaction = result.metadataTable.compactions[0];
      await assertInSync(table);
    }
    assert.equal(compaction.instantTime, expectedInstant);
    assert.equal(compaction.resumed, false);
    const instants = mdtInstantFiles(table);
    for (const name of [`${expectedInstant}.compaction.requested`, `${expectedInstant}.compaction.inflight`, `${expectedInstant}.commit`])
      assert.ok(instants.includes(name), name);
    const plan = await readCompactionPlan(storage, expectedInstant, { metaFolder: '.hoodie/metadata/.hoodie' });
    // 1 files + 2 column_stats + 4 bloom_filters + 10 record_index file groups, each with log files since initialization.
    assert.equal(plan.operations.length, 17);
    assert.deepEqual(compaction.files.map((f) => f.path.split('/')[0]).sort(), plan.operations.map((op) => op.partitionPath).sort());
    const committed = JSON.parse(readFileSync(join(table, `.hoodie/metadata/.hoodie/${expectedInstant}.commit`), 'utf8')) as {
      operationType: string;
      compacted: boolean;
      partitionToWriteStats: Record<string, { path: string; fileSizeInBytes: number }[]>;
    };
    assert.equal(committed.operationType, 'COMPACT');
    assert.equal(committed.compacted, true);
    for (const stats of Object.values(committed.partitionToWriteStats)) {
      for (const stat of stats) assert.equal(statSync(join(table, '.hoodie/metadata', stat.path)).size, stat.fileSizeInBytes, stat.path);
    }
    // The write that compacted put its deltacommit into the new slices: base file of the compaction, one log file.
    const after = (await MetadataTable.open(storage))!;
    for (const group of [...after.fileGroups.values()].flat()) {
      assert.equal(group.latest.baseInstant, expectedInstant, group.fileId);
      assert.ok(group.latest.baseFile !== undefined, `${group.fileId} has a base file`);
      assert.ok(group.latest.logFiles.length <= 1, `${group.fileId}: at most the compacting write's log file`);
      const base = readHudiHFile(readFileSync(join(table, group.latest.baseFile.path)));
      assert.equal(base.minRecordKey, base.records[0]?.key ?? '');
      assert.ok(
        base.bloomFilter !== undefined &&
          base.records.every((r) => HoodieBloomFilter.deserialize(base.bloomFilter!.serialized, 'DYNAMIC_V0').mightContain(r.key)),
      );
    }
    for (let i = 0; i < 2; i++) {
      const result = await write(table, users(3, 120 + i, 5 + i), 'upsert');
      assert.equal(result.metadataTable.compactions.length, 0);
      await assertInSync(table);
    }
  });

  it('cleans and compacts the metadata table in the same commit when both are due, as Hudi’s performTableServices', async () => {
    const props = new Map([
      ...PROPS,
      ['hoodie.metadata.compact.max.delta.commits', '3'],
      ['hoodie.cleaner.policy', 'KEEP_LATEST_FILE_VERSIONS'],
      ['hoodie.cleaner.fileversions.retained', '1'],
    ]);
    const { table, storage } = await mdtTable(ALL, props);
    let both = 0;
    for (let i = 0; i < 16; i++) {
      const mdt = (await MetadataTable.open(storage))!;
      const due = deltaCommitsSinceLastCompaction(mdt.timeline).length >= 3;
      const result = await write(table, users(2, 200 + i, 1 + i), 'upsert', { props });
      // A due compaction is never put off by a clean that runs first.
      assert.equal(result.metadataTable.compactions.length, due ? 1 : 0, `write ${i}`);
      if (result.metadataTable.cleans.length > 0 && result.metadataTable.compactions.length > 0) both++;
      await assertInSync(table);
    }
    assert.ok(both > 0, 'some commit both cleaned and compacted the metadata table');
  });

  it("derives the metadata table's cleaner from the data table's as Hudi does: same policy, 1.2 times the retention, at least 20 commits", () => {
    const of = (entries: [string, string][]) => metadataCleanConfig(new Map(entries));
    assert.equal(of([]).policy, 'KEEP_LATEST_COMMITS');
    assert.equal(of([]).commitsRetained, 20, 'the default 10 retained: max(20, 12)');
    assert.equal(of([['hoodie.cleaner.commits.retained', '2']]).commitsRetained, 20);
    assert.equal(of([['hoodie.cleaner.commits.retained', '19']]).commitsRetained, 22, 'floor(22.8)');
    const versions = of([
      ['hoodie.cleaner.policy', 'KEEP_LATEST_FILE_VERSIONS'],
      ['hoodie.cleaner.fileversions.retained', '1'],
    ]);
    assert.deepEqual([versions.policy, versions.fileVersionsRetained], ['KEEP_LATEST_FILE_VERSIONS', 2], 'ceil(1.2)');
    const hours = of([
      ['hoodie.cleaner.policy', 'KEEP_LATEST_BY_HOURS'],
      ['hoodie.cleaner.hours.retained', '24'],
    ]);
    assert.deepEqual([hours.policy, hours.hoursRetained], ['KEEP_LATEST_BY_HOURS', 29], 'ceil(28.8)');
  });

  it("cleans the metadata table after a compaction as Hudi does: <deltacommit>002, the data table's policy, the old slices' files go", async () => {
    // 4 initialization deltacommits + 1 write reach 5: the 2nd write compacts, 5 deltacommits later the 7th again.
    // One file version retained on the data table keeps 2 in the metadata table: the initialization slices go at
    // the first write 3 instants after the second compaction (the 10th), not before.
    const props = new Map([
      ...PROPS,
      ['hoodie.metadata.compact.max.delta.commits', '5'],
      ['hoodie.cleaner.policy', 'KEEP_LATEST_FILE_VERSIONS'],
      ['hoodie.cleaner.fileversions.retained', '1'],
    ]);
    const { table, storage } = await mdtTable(ALL, props);
    let before = new Map<string, Map<string, string[]>>();
    const results: { latest: string; result: Awaited<ReturnType<typeof write>> }[] = [];
    for (let i = 0; i < 10; i++) {
      const latest = (await MetadataTable.open(storage))!.timeline
        .completed()
        .filter((x) => x.action === 'deltacommit')
        .at(-1)!.time;
      const result = await write(table, users(3, 200 + i, 1 + 2 * i), i === 0 ? 'bulk_insert' : 'upsert', { props });
      results.push({ latest, result });
      // Before the clean: each file group's slices (base instant → files), from the listing.
      if (i === 8) before = await slicesOf(table, storage);
      await assertInSync(table);
    }
    assert.deepEqual(
      results.map(({ result }) => [result.metadataTable.compactions.length, result.metadataTable.cleans.length]),
      [
        [0, 0],
        [1, 0],
        [0, 0],
        [0, 0],
        [0, 0],
        [0, 0],
        [1, 0],
        [0, 0],
        [0, 0],
        [0, 1],
      ],
    );
    const clean = results[9]!.result.metadataTable.cleans[0]!;
    assert.equal(clean.instantTime, `${results[9]!.latest}002`);
    assert.ok(mdtInstantFiles(table).includes(`${clean.instantTime}.clean`));
    // Each file group keeps its two newest slices (a group without log files since the first compaction is not in
    // the second, so it keeps its initialization slice); the older slices' files are gone, nothing else.
    const after = await slicesOf(table, storage);
    let deleted = 0;
    for (const [group, slices] of before) {
      const instants = [...slices.keys()].sort(compareInstantTimes);
      const kept = instants.slice(-2);
      assert.deepEqual([...after.get(group)!.keys()].sort(compareInstantTimes), kept, `${group}: the two newest slices kept`);
      for (const instant of instants.slice(0, -2)) deleted += slices.get(instant)!.length;
    }
    assert.ok(deleted > 0);
    assert.equal(clean.filesDeleted, deleted);
    const compactions = [1, 6].map((i) => results[i]!.result.metadataTable.compactions[0]!.instantTime);
    assert.ok(
      [...after.values()].some((slices) => slices.has(compactions[0]!) && slices.has(compactions[1]!)),
      'groups in both compactions keep both',
    );
    await write(table, users(2, 260, 3), 'upsert', { props });
    await assertInSync(table);
  });

  it('keeps 20 commits in the metadata table under KEEP_LATEST_COMMITS whatever fewer the data table keeps', async () => {
    // Two compactions and 3 instants after the second: with min(2, 20) the first slices would go; Hudi keeps them.
    const props = new Map([...PROPS, ['hoodie.metadata.compact.max.delta.commits', '5'], ['hoodie.cleaner.commits.retained', '2']]);
    const { table } = await mdtTable(ALL, props);
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await write(table, users(3, 300 + i, 1 + 2 * i), i === 0 ? 'bulk_insert' : 'upsert', { props }));
    assert.deepEqual(
      results.map((r) => r.metadataTable.compactions.length),
      [0, 1, 0, 0, 0, 0, 1, 0, 0, 0],
      'the compactions of the test before: min(2, 20) would clean at the 10th write',
    );
    assert.deepEqual(
      results.flatMap((r) => r.metadataTable.cleans),
      [],
      'fewer than 20 commits after the first slices: nothing to clean',
    );
    await assertInSync(table);
  });

  it('a pending metadata-table compaction it cannot read fails the write, and nothing of the write is visible', async () => {
    const { table, storage } = await mdtTable(['files']);
    await write(table, users(2, 60, 1), 'insert');
    await storage.put('.hoodie/metadata/.hoodie/20240101000000000001.compaction.requested', '');
    const before = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).completed().map((i) => i.time);
    await assert.rejects(
      write(table, users(2, 72, 950), 'insert'),
      /20240101000000000001\.compaction\.requested.*empty|empty.*20240101000000000001\.compaction\.requested/s,
    );
    assert.deepEqual(
      (await loadTimeline(storage, TIMELINE_LAYOUT_1))
        .completed()
        .filter((i) => i.action !== 'rollback')
        .map((i) => i.time),
      before,
    );
    await assertInSync(table, ['files']);
  });
});

/** Per metadata-table file group (`partition/fileId`): its slices' files by base instant, from the listings. */
async function slicesOf(table: string, storage: Storage): Promise<Map<string, Map<string, string[]>>> {
  const slices = new Map<string, Map<string, string[]>>();
  for (const group of [...(await MetadataTable.open(storage))!.fileGroups.values()].flat()) {
    const byInstant = new Map<string, string[]>();
    for (const name of readdirSync(join(table, '.hoodie/metadata', group.partition))) {
      const instant =
        name.startsWith(`${group.fileId}_`) && name.endsWith('.hfile')
          ? /_(\d+)\.hfile$/.exec(name)?.[1]
          : parseLogFileName(name)?.fileId === group.fileId
            ? parseLogFileName(name)!.baseInstant
            : undefined;
      if (instant !== undefined) byInstant.set(instant, [...(byInstant.get(instant) ?? []), name]);
    }
    slices.set(`${group.partition}/${group.fileId}`, byInstant);
  }
  return slices;
}

describe("clustering with Hudi's metadata table", () => {
  const clustering = (layout: 'linear' | 'z-order') =>
    resolveClusteringConfig({
      event: { 'hoodie.clustering.plan.strategy.sort.columns': layout === 'linear' ? 'id' : 'id,name', 'hoodie.layout.optimize.strategy': layout },
    }).config;

  for (const layout of ['linear', 'z-order'] as const) {
    it(`${layout}: the replacecommit's deltacommit keeps files, column_stats, bloom_filters and record_index in sync; writes go on`, async () => {
      const { table, storage } = await mdtTable();
      for (let i = 0; i < 3; i++) await write(table, users(8, 100 + i, 1 + 8 * i), 'insert');
      const rowsBefore = (await readSnapshot(await HudiTable.open(storage))).rows.length;
      const groupsBefore = (await (await HudiTable.open(storage)).fileSystemView()).fileGroups().length;
      const engine = await openParquetEngine();
      try {
        const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
        const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
          mode: 'scheduleAndExecute',
          config: clustering(layout),
          force: true,
          lock,
          engine,
          tempDir: tempDir(),
          properties: PROPS,
        });
        const delta = result.commit?.metadataTable?.deltaCommit;
        assert.ok(delta, 'the replacecommit got its deltacommit');
        assert.equal(delta.instantTime, result.instantTime);
        assert.equal(delta.partitions['record_index']?.records, rowsBefore, 'every clustered record moved');
        assert.equal(delta.partitions['record_index']?.deletes, 0);
        const replaced = Object.values(result.commit!.metadata.partitionToReplaceFileIds ?? {}).flat();
        assert.equal(replaced.length, groupsBefore, 'every file group replaced');
        await assertInSync(table);
        // The replaced files stay listed (a clean removes them), the new ones are listed too.
        const reader = await (await MetadataTable.open(storage))!.reader();
        const listed = [...(await reader.filesInPartition('2024-01-01')).keys()];
        assert.equal(listed.length, 4, 'three replaced files and the new one');
        assert.equal((await readSnapshot(await HudiTable.open(storage))).rows.length, rowsBefore);
      } finally {
        await engine.close();
      }
      await write(table, [...users(4, 120, 1), ...users(2, 121, 200)], 'upsert');
      await assertInSync(table);
    });
  }

  it('a clustering commit failing after any storage write of its deltacommit: a retry commits, or the rollback removes the deltacommit', async () => {
    const { table, storage } = await mdtTable(['files', 'record_index']);
    for (let i = 0; i < 2; i++) await write(table, users(6, 130 + i, 1 + 6 * i), 'insert');
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    const engine = await openParquetEngine();
    try {
      const open = () => HudiTable.open(storage, { mode: 'write' });
      const failing = async (instant: string, failAt: string) => {
        let logs = 0;
        await assert.rejects(
          runClusteringJob(await open(), {
            mode: 'execute',
            instant,
            config: clustering('linear'),
            lock,
            engine,
            tempDir: tempDir(),
            properties: PROPS,
            afterMetadataTableWrite: async (what) => {
              const step = what.startsWith('log ') ? `log ${++logs}` : what;
              if (step === failAt) throw new Error(`injected failure after ${failAt}`);
            },
          }),
          new RegExp(`injected failure after ${failAt}`),
        );
        assert.equal(
          (await loadTimeline(storage, TIMELINE_LAYOUT_1)).find(instant)?.state,
          'INFLIGHT',
          `failure after ${failAt}: the clustering stays pending`,
        );
      };
      const schedule = async () =>
        (await runClusteringJob(await open(), { mode: 'schedule', config: clustering('linear'), force: true, lock, engine, properties: PROPS })).scheduled!
          .instantTime;

      // files + record_index: requested, inflight, one log file each, completed.
      const first = await schedule();
      for (const failAt of ['requested', 'inflight', 'log 1', 'log 2', 'completed']) {
        await failing(first, failAt);
        await assertInSync(table, ['files', 'record_index']);
      }
      // The retried commit replaces the earlier attempt's deltacommit with its own.
      const done = await commitClustering(await open(), first, { lock, properties: PROPS });
      assert.equal(done.outcome, 'committed');
      assert.equal(mdtInstantFiles(table).filter((name) => name.startsWith(first)).length, 3);
      assert.equal(mdtLogsOf(table, first).length, done.metadataTable!.deltaCommit!.logFiles.length, 'only the log files of the last attempt');
      await assertInSync(table, ['files', 'record_index']);

      // Rolled back keeping the plan: its deltacommit goes with it; the plan then runs to the end.
      await write(table, users(4, 140, 100), 'insert');
      const second = await schedule();
      await failing(second, 'completed');
      const rolledBack = await rollbackInflightClustering(await open(), second, { lock });
      assert.equal(rolledBack?.outcome, 'rolled-back');
      assert.ok(!mdtInstantFiles(table).some((name) => name.startsWith(second)), `no metadata instant ${second} is left`);
      assert.deepEqual(mdtLogsOf(table, second), []);
      await assertInSync(table, ['files', 'record_index']);
      const rerun = await runClusteringJob(await open(), {
        mode: 'execute',
        instant: second,
        config: clustering('linear'),
        lock,
        engine,
        tempDir: tempDir(),
        properties: PROPS,
      });
      assert.equal(rerun.commit?.outcome, 'committed');
      await assertInSync(table, ['files', 'record_index']);
    } finally {
      await engine.close();
    }
  });
});

describe("cleaning with Hudi's metadata table", () => {
  it("a clean's deltacommit deletes the cleaned files from files and leaves column_stats and bloom_filters tombstones; a failed completion is retried", async () => {
    const { table, storage } = await mdtTable();
    await write(table, users(10, 150), 'insert');
    for (let i = 0; i < 3; i++) await write(table, users(4, 151 + i, 1), 'upsert');
    const before = await committedBaseFiles(storage);
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    const config = cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '1']]));
    // The completion fails after each storage write of the clean's deltacommit; the next run finishes the pending clean.
    for (const failAt of ['requested', 'inflight', 'completed']) {
      await assert.rejects(
        runClean(await HudiTable.open(storage, { mode: 'write' }), {
          config,
          lock,
          properties: PROPS,
          afterMetadataTableWrite: async (what) => {
            if (what === failAt) throw new Error(`injected failure after ${failAt}`);
          },
        }),
        new RegExp(`injected failure after ${failAt}`),
      );
      assert.ok(
        (await loadTimeline(storage, TIMELINE_LAYOUT_1)).pending().some((i) => i.action === 'clean'),
        'the clean stays pending',
      );
    }
    const result = await runClean(await HudiTable.open(storage, { mode: 'write' }), { config, lock, properties: PROPS });
    const clean = result.resumed[0] ?? result.clean;
    assert.ok(clean, 'the pending clean completed');
    assert.ok(clean.metadataTable.deltaCommit, 'the clean got its deltacommit');
    assert.equal(clean.metadataTable.deltaCommit.instantTime, clean.instantTime);
    const cleaned = Object.values(clean.metadata.partitionMetadata).flatMap((entry) => entry.deletePathPatterns);
    assert.ok(cleaned.length > 0, 'the clean deleted files');
    assert.equal(mdtInstantFiles(table).filter((name) => name.startsWith(clean.instantTime)).length, 3, 'one deltacommit of the clean');
    await assertInSync(table);

    const reader = await (await MetadataTable.open(storage))!.reader();
    const stats = await reader.readPartition('column_stats');
    const blooms = await reader.readPartition('bloom_filters');
    for (const [path, file] of before) {
      if (!cleaned.includes(file.name)) continue;
      assert.ok(!(await reader.filesInPartition(file.partition)).has(file.name), `${path} is no longer listed`);
      const bloom = blooms.get(bloomFilterIndexKey(partitionIdentifier(file.partition), file.name));
      assert.ok(
        bloom?.type === 4 && bloom.bloomFilter.isDeleted && bloom.bloomFilter.type === '' && bloom.bloomFilter.timestamp === clean.instantTime,
        `bloom tombstone of ${file.name}`,
      );
      const range = stats.get(columnStatsIndexKey(partitionIdentifier(file.partition), file.name, 'id'));
      assert.ok(range?.type === 3 && range.columnStats.isDeleted, `column-stats tombstone of ${file.name}`);
      assert.deepEqual(
        [range.columnStats.minValue, range.columnStats.maxValue, range.columnStats.valueCount, range.columnStats.nullCount],
        [null, null, -1, -1],
      );
    }
    // Writes go on after the clean.
    await write(table, users(3, 160, 1), 'upsert');
    await assertInSync(table);
  });
});

describe('crashes in the metadata-table path', () => {
  it("a write killed at every storage call from its commit on (the metadata table's deltacommit, then T.commit): readers see before or after, the next run completes", async () => {
    const { table, storage } = await mdtTable();
    // Many commits here: no metadata compaction due (this build does not compact the metadata table yet).
    const props = new Map([...PROPS, ['hoodie.metadata.compact.max.delta.commits', '1000']]);
    await write(table, users(12, 170), 'bulk_insert', { props });
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    let points = 0;
    for (let crashAt = 1; ; crashAt++) {
      const before = (await readSnapshot(await HudiTable.open(storage))).rows.length;
      const input = join(tempDir(), `crash-${crashAt}.jsonl`);
      const batch = [...users(3, 171 + crashAt, 1), ...users(2, 171 + crashAt, 500 + 2 * crashAt)];
      await writeJsonLines(input, batch);
      const crashing = new CrashingStorage(storage, crashAt, { armed: false });
      let outcome: 'crashed' | 'completed';
      try {
        // Armed once the data files are up: what is counted is the commit section, the metadata table's part first.
        await writeBatch(crashing, {
          input: { file: input, format: 'jsonl' },
          operation: 'upsert',
          properties: props,
          lock,
          afterDataFiles: async () => crashing.arm(),
        });
        outcome = 'completed';
      } catch (error) {
        assert.ok(error instanceof SimulatedCrash, String(error));
        outcome = 'crashed';
      }
      const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
      const failed = timeline
        .pending()
        .filter((i) => i.action === 'commit')
        .map((i) => i.time);
      const committed = outcome === 'completed' || failed.length === 0;
      const rows = (await readSnapshot(await HudiTable.open(storage))).rows.length;
      assert.equal(rows, committed ? before + 2 : before, `killed at call ${crashAt} (${crashing.log.at(-1)}): readers see ${committed ? 'after' : 'before'}`);
      // What the metadata table lists is only what completed data instants wrote, whatever the crash left there.
      await assertInSync(table);
      // The next run: the dead write is rolled back (its deltacommit with it), and a write completes.
      for (const time of failed) await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), time, { lock, ignoreHeartbeat: true });
      assert.ok(!mdtInstantFiles(table).some((name) => failed.some((time) => name.startsWith(time))), 'no metadata instant of a rolled-back write is left');
      await write(table, users(1, 300 + crashAt, 900 + crashAt), 'insert', { props });
      await assertInSync(table);
      if (outcome === 'completed') break;
      points++;
    }
    // requested, inflight, one log file per touched file group (files, column_stats, bloom_filters, record_index),
    // completed, then T.commit and the marker folder's removal.
    assert.ok(points >= 8, `${points} crash points`);
    console.log(`writer: ${points} crash points in the commit section (metadata-table deltacommit and T.commit)`);
  });

  it('a clean killed at every storage call (plan, deletes, the deltacommit, T.clean): readers see the same rows, the next run completes it', async () => {
    let points = 0;
    for (let crashAt = 1; ; crashAt++) {
      const { table, storage } = await mdtTable(['files', 'column_stats', 'bloom_filters']);
      await write(table, users(8, 180), 'insert');
      for (let i = 0; i < 2; i++) await write(table, users(4, 181 + i, 1), 'upsert');
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const config = cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', '1']]));
      const rows = (await readSnapshot(await HudiTable.open(storage))).rows;
      // Every storage change of the clean is counted: its plan, the deletes, the deltacommit, T.clean.
      const crashing = new CrashingStorage(storage, crashAt, { armed: false });
      crashing.arm();
      let outcome: 'crashed' | 'completed';
      try {
        await runClean(await HudiTable.open(crashing, { mode: 'write' }), { config, lock, properties: PROPS });
        outcome = 'completed';
      } catch (error) {
        assert.ok(error instanceof SimulatedCrash, String(error));
        outcome = 'crashed';
      }
      assert.deepEqual((await readSnapshot(await HudiTable.open(storage))).rows.length, rows.length, 'a clean never changes what readers see');
      // Until the clean completes, the metadata table may still list files it deleted (as Hudi's, which deletes
      // first too): old versions only; every latest base file is listed.
      const reader = await (await MetadataTable.open(storage))!.reader();
      for (const file of (await (await HudiTable.open(storage)).fileSystemView()).latestBaseFiles()) {
        assert.equal(
          (await reader.filesInPartition(file.partitionPath)).get(file.fileName),
          file.size,
          `killed at call ${crashAt}: latest ${file.fileName} is listed`,
        );
      }
      const pendingAfterCrash = (await loadTimeline(storage, TIMELINE_LAYOUT_1)).pending().filter((i) => i.action === 'clean').length;
      const next = await runClean(await HudiTable.open(storage, { mode: 'write' }), { config, lock, properties: PROPS });
      if (pendingAfterCrash > 0) assert.equal(next.resumed.length, 1, `killed at call ${crashAt}: the next run finishes the pending clean`);
      else if (outcome === 'crashed') assert.equal(next.outcome, 'cleaned', `killed at call ${crashAt} before the clean was planned: the next run cleans`);
      assert.equal((await loadTimeline(storage, TIMELINE_LAYOUT_1)).pending().filter((i) => i.action === 'clean').length, 0, 'no clean is left pending');
      await assertInSync(table, ['files', 'column_stats', 'bloom_filters']);
      if (outcome === 'completed') break;
      points++;
    }
    console.log(`clean: ${points} crash points`);
  });

  it('a write killed at every storage call of the metadata-table compaction it runs: readers see before or after, the next run finishes the compaction', async () => {
    // Small file-group counts keep the loop short; 4 initialization deltacommits + 1 write reach a limit of 5.
    const props = new Map([...PROPS, ['hoodie.metadata.compact.max.delta.commits', '5']]);
    const template = join(tempDir('mdt-compaction-crash-'), 'users');
    const templateStorage = openStorage(template);
    await createTable(templateStorage, newTableOptionsFromWriteProperties(props, 'test'));
    await initMetadataTable(templateStorage, ALL, { column_stats: 1, bloom_filters: 2, record_index: 2 });
    await write(template, users(12, 190), 'bulk_insert', { props });
    const compactionTime = `${
      (await MetadataTable.open(templateStorage))!.timeline
        .completed()
        .filter((i) => i.action === 'deltacommit')
        .at(-1)!.time
    }001`;
    let points = 0;
    let compactionCalls = 0;
    for (let crashAt = 1; ; crashAt++) {
      const table = join(tempDir('mdt-compaction-crash-'), 'users');
      cpSync(template, table, { recursive: true });
      const storage = openStorage(table);
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const before = (await readSnapshot(await HudiTable.open(storage))).rows.length;
      const input = join(tempDir(), `compaction-crash-${crashAt}.jsonl`);
      await writeJsonLines(input, [...users(3, 191, 1), ...users(2, 191, 500)]);
      const crashing = new CrashingStorage(storage, crashAt, { armed: false });
      let outcome: 'crashed' | 'completed';
      let result: Awaited<ReturnType<typeof writeBatch>> | undefined;
      try {
        result = await writeBatch(crashing, {
          input: { file: input, format: 'jsonl' },
          operation: 'upsert',
          properties: props,
          lock,
          afterDataFiles: async () => crashing.arm(),
        });
        outcome = 'completed';
      } catch (error) {
        assert.ok(error instanceof SimulatedCrash, String(error));
        outcome = 'crashed';
      }
      const where = `killed at call ${crashAt} (${crashing.log.at(-1)})`;
      const timeline = await loadTimeline(storage, TIMELINE_LAYOUT_1);
      const failed = timeline
        .pending()
        .filter((i) => i.action === 'commit')
        .map((i) => i.time);
      const committed = outcome === 'completed' || failed.length === 0;
      assert.equal(
        (await readSnapshot(await HudiTable.open(storage))).rows.length,
        committed ? before + 2 : before,
        `${where}: readers see ${committed ? 'after' : 'before'}`,
      );
      // The metadata table reads the same, whether the compaction's commit landed or not.
      await assertInSync(table);
      const afterCrash = (await MetadataTable.open(storage))!.timeline;
      const pendingAfterCrash = pendingCompactions(afterCrash).length > 0;
      const compactedAfterCrash = afterCrash.completed().some((i) => i.time === compactionTime);
      for (const time of failed) await rollbackInstant(await HudiTable.open(storage, { mode: 'write' }), time, { lock, ignoreHeartbeat: true });
      const next = await write(table, users(1, 400 + crashAt, 900), 'insert', { props });
      // A compaction left pending is finished from its plan; one never scheduled is scheduled now; a completed one stays.
      assert.deepEqual(
        next.metadataTable.compactions.map((c) => [c.instantTime, c.resumed]),
        compactedAfterCrash ? [] : [[compactionTime, pendingAfterCrash]],
        where,
      );
      const mdt = (await MetadataTable.open(storage))!;
      assert.ok(
        mdt.timeline.completed().some((i) => i.time === compactionTime && i.action === 'commit'),
        `${where}: compaction ${compactionTime} completed by the next run at the latest`,
      );
      assert.deepEqual(pendingCompactions(mdt.timeline), [], `${where}: no compaction left pending`);
      await assertInSync(table);
      if (outcome === 'completed') {
        compactionCalls = result!.metadataTable.compactions[0]!.files.length + 3;
        break;
      }
      points++;
    }
    // requested, inflight, a base file per file group (1 + 1 + 2 + 2), the commit; then the deltacommit and T.commit.
    assert.ok(points >= compactionCalls, `${points} crash points, ${compactionCalls} of them in the compaction`);
    console.log(`writer + metadata-table compaction: ${points} crash points (${compactionCalls} in the compaction)`);
  });
});
