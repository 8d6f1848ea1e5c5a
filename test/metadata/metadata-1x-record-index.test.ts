/**
 * The record_index partition of a 1.x metadata table: MetadataTable1x keeping it on a metadata table that has it
 * (a commit's new keys at their file group, deleted keys in a delete block, a moved key at its new place, nothing for
 * a compaction or a clean, taken back by a rollback, read back with reader-1x), or refusing, before anything is
 * written, what it does not keep: the key asking for the partition where the table has none, Hudi 1.1's
 * partitioned record index, inserts in log files (the bucket index), `_hoodie_is_deleted` on merge-on-read, a log
 * stat naming earlier logs. A delta commit's log files delete the keys they delete; their updates change nothing.
 * test/interop/hudi-1x-record-index.test.ts judges them against Spark.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MetadataTableError } from '../../lib/errors.js';
import { iterateLogBlocks, readDeleteBlock } from '../../lib/log-format/index.js';
import { keepMetadataTable } from '../../lib/metadata/commit-path.js';
import { MetadataTable1x } from '../../lib/metadata/metadata-table-1x.js';
import { mapRecordKeyToFileGroupIndex } from '../../lib/metadata/partitions.js';
import { readMetadataTable1x } from '../../lib/metadata/reader-1x.js';
import { type MetadataRecord, recordIndexFileId } from '../../lib/metadata/records.js';
import { rollbackMetadataDeltaCommit1x } from '../../lib/metadata/rollback-1x.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { readTableConfig } from '../../lib/table/config.js';
import { type CommitMetadata, newWriteStat, type WriteOperationType } from '../../lib/timeline/commit-metadata.js';
import { parseInstantTime } from '../../lib/timeline/instant.js';
import { oneCleanMetadata } from '../helpers/metadata-table.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/hudi-1x-metadata');
const GROUPS = 2;
const FILE_A = '3f1c2b9e-0d4a-4c1b-9a8e-6f5d4c3b2a10-0';
const FILE_B = '7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d-0';

for (const release of ['1.0.2', '1.1.1']) {
  /** A copy of the fixture whose metadata table has `files` and a record_index of two empty file groups, as Hudi starts it. */
  const copy = (suffix: string, withRecordIndex = true) => {
    const path = join(tempDir(`mdt1x-rli-${release}-${suffix}-`), 'table');
    cpSync(join(FIXTURES, release), path, { recursive: true });
    const properties = join(path, '.hoodie/hoodie.properties');
    const partitions = withRecordIndex ? 'files,record_index' : 'files';
    writeFileSync(
      properties,
      readFileSync(properties, 'utf8').replace(/^hoodie\.table\.metadata\.partitions=.*$/m, `hoodie.table.metadata.partitions=${partitions}`),
    );
    if (withRecordIndex) {
      const folder = join(path, '.hoodie/metadata/record_index');
      mkdirSync(folder);
      writeFileSync(join(folder, '.hoodie_partition_metadata'), '');
      for (let i = 0; i < GROUPS; i++) writeFileSync(join(folder, `.record-index-000${i}-0_00000000000000002.log.1_0-0-0`), '');
    }
    return path;
  };
  const open = async (path: string) => {
    const storage = new LocalStorage(path);
    const table = await MetadataTable1x.open(storage, await readTableConfig(storage));
    assert.ok(table !== undefined);
    return table;
  };
  const mdtTimeline = (path: string) => readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline')).sort();
  /** The same on a merge-on-read data table. */
  const morCopy = (suffix: string) => {
    const path = copy(suffix);
    const properties = join(path, '.hoodie/hoodie.properties');
    writeFileSync(properties, readFileSync(properties, 'utf8').replace(/^hoodie\.table\.type=COPY_ON_WRITE$/m, 'hoodie.table.type=MERGE_ON_READ'));
    return path;
  };
  const refusedBeforeWriting = async (path: string, properties: Map<string, string>, message: RegExp, writerSchema?: string) => {
    const before = mdtTimeline(path);
    await assert.rejects(keepMetadataTable(new LocalStorage(path), properties, 'write').prepare('a write', writerSchema), (error: unknown) => {
      assert.ok(error instanceof MetadataTableError, String(error));
      assert.match(error.message, message);
      return true;
    });
    assert.deepEqual(mdtTimeline(path), before);
  };
  const commitOf = (instant: string, files: { fileId: string; operation?: WriteOperationType }[]): CommitMetadata => ({
    partitionToWriteStats: {
      p1: files.map(({ fileId }) =>
        newWriteStat({ fileId, path: `p1/${fileId}_0-1-0_${instant}.parquet`, partitionPath: 'p1', fileSizeInBytes: 100, numWrites: 1 }),
      ),
    },
    compacted: false,
    extraMetadata: {},
    operationType: files[0]?.operation ?? 'UPSERT',
  });

  describe(`MetadataTable1x keeps record_index on Hudi ${release}'s metadata table`, () => {
    it('refuses hoodie.metadata.record.index.enable=true (and 1.1 name), before anything is written, where the partition is missing', async () => {
      const path = copy('refuse', false);
      await refusedBeforeWriting(
        path,
        new Map([['hoodie.metadata.record.index.enable', 'true']]),
        /hoodie\.metadata\.record\.index\.enable=true asks for the record_index partition/,
      );
      await refusedBeforeWriting(
        path,
        new Map([['hoodie.metadata.global.record.level.index.enable', 'true']]),
        /asks for the record_index partition, which this metadata table does not have/,
      );
      assert.equal(readdirSync(join(path, '.hoodie/metadata')).includes('record_index'), false);
      assert.deepEqual((await open(path)).problems({ operation: 'write' }), []);
      assert.deepEqual((await open(path)).problems({ operation: 'check', properties: new Map([['hoodie.metadata.record.index.enable', 'true']]) }), []);
    });

    it("refuses Hudi 1.1's partitioned record index, by its key and by the index definition", async () => {
      const path = copy('partitioned');
      await refusedBeforeWriting(
        path,
        new Map([['hoodie.metadata.record.level.index.enable', 'true']]),
        /record\.level\.index\.enable=true: the record_index partition is partitioned/,
      );
      assert.deepEqual((await open(path)).problems({ operation: 'write' }), []);
      mkdirSync(join(path, '.hoodie/.index_defs'), { recursive: true });
      const definition = (partitioned: string) =>
        JSON.stringify({
          indexDefinitions: {
            record_index: { indexName: 'record_index', indexType: 'record_index', indexOptions: { isPartitioned: partitioned }, version: 'V1' },
          },
        });
      writeFileSync(join(path, '.hoodie/.index_defs/index.json'), definition('false'));
      assert.deepEqual((await open(path)).problems({ operation: 'write' }), []);
      writeFileSync(join(path, '.hoodie/.index_defs/index.json'), definition('true'));
      await refusedBeforeWriting(path, new Map(), /the record_index partition is partitioned/);
    });

    it('refuses a declared record_index without file groups, and merge-on-read writes with the bucket index or _hoodie_is_deleted', async () => {
      const empty = copy('empty2', false);
      writeFileSync(
        join(empty, '.hoodie/hoodie.properties'),
        readFileSync(join(empty, '.hoodie/hoodie.properties'), 'utf8').replace(
          /^hoodie\.table\.metadata\.partitions=files$/m,
          'hoodie.table.metadata.partitions=files,record_index',
        ),
      );
      mkdirSync(join(empty, '.hoodie/metadata/record_index'));
      assert.deepEqual(
        (await open(empty)).problems({ operation: 'write' }).map((p) => p.problem),
        ['metadata-table partition record_index is not declared or has no file group'],
      );
      const mor = morCopy('mor');
      // Their log files hold updates and deletes only: kept (recordIndexRecords).
      assert.deepEqual((await open(mor)).problems({ operation: 'write' }), []);
      const bucket = new Map([['hoodie.index.type', 'BUCKET']]);
      const problems = (await open(mor)).problems({ operation: 'write', properties: bucket }).map((p) => p.problem);
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /with the bucket index puts inserts in log files/);
      await refusedBeforeWriting(mor, bucket, /with the bucket index puts inserts in log files/);
      // Clusterings and compactions of a merge-on-read table write base files only.
      assert.deepEqual((await open(mor)).problems({ operation: 'cluster', properties: bucket }), []);
      const schema = (withDeleteField: boolean) =>
        JSON.stringify({
          type: 'record',
          name: 'row',
          fields: [{ name: 'id', type: 'string' }, ...(withDeleteField ? [{ name: '_hoodie_is_deleted', type: 'boolean' }] : [])],
        });
      await refusedBeforeWriting(mor, new Map(), /schema has _hoodie_is_deleted on a table with the record_index partition/, schema(true));
      await keepMetadataTable(new LocalStorage(mor), new Map(), 'write').prepare('a write', schema(false));
      // Only merge-on-read log files are merged by Hudi to find record-index deletes.
      await keepMetadataTable(new LocalStorage(copy('cow-deleted-field')), new Map(), 'write').prepare('a write', schema(true));
    });

    it("writes a commit's new keys and deletions to their file groups, reads them back; compactions and cleans write none", async () => {
      const path = copy('write');
      const storage = new LocalStorage(path);
      const read = async (completed: string[]) => {
        const contents = await readMetadataTable1x(storage, { completedDataInstants: new Set(completed), pendingDataInstants: new Set() });
        const records = [...(contents.partitions.get('record_index')?.values() ?? [])].filter(
          (record): record is Extract<MetadataRecord, { type: 5 }> => record.type === 5,
        );
        return new Map(records.map((record) => [record.key, record.recordIndex]));
      };
      const first = '20991206120000000';
      const keys = ['k1', 'k2', 'k3', 'k4', 'k5'];
      const inserted = await (await open(path)).commit(first, commitOf(first, [{ fileId: FILE_A }]), {
        recordIndex: { updates: keys.map((recordKey) => ({ recordKey, partitionPath: 'p1', fileId: FILE_A })), deletes: [] },
      });
      const logs = inserted.logFiles.filter((log) => log.partition === 'record_index');
      assert.deepEqual(new Set(logs.map((log) => log.fileId)), new Set(keys.map((key) => `record-index-000${mapRecordKeyToFileGroupIndex(key, GROUPS)}-0`)));
      let index = await read([first]);
      assert.deepEqual([...index.keys()].sort(), keys);
      const millis = BigInt(parseInstantTime(first, 'LOCAL')!.getTime());
      for (const info of index.values()) {
        assert.equal(recordIndexFileId(info), FILE_A);
        assert.deepEqual([info.partitionName, info.fileIdEncoding, info.fileIndex, info.fileId, info.instantTime], ['p1', 0, 0, '', millis]);
      }

      // An upsert deleting k1, moving k2 to another file group (deleted where it was), updating k3 in place.
      const second = '20991206121000000';
      const moved = await (await open(path)).commit(second, commitOf(second, [{ fileId: FILE_A }, { fileId: FILE_B }]), {
        recordIndex: {
          updates: [
            { recordKey: 'k2', partitionPath: 'p1', fileId: FILE_B },
            { recordKey: 'k6', partitionPath: 'p1', fileId: FILE_B },
          ],
          deletes: ['k1', 'k2'],
        },
      });
      const deleteBlocks = moved.logFiles
        .filter((log) => log.partition === 'record_index')
        .flatMap((log) => [...iterateLogBlocks(readFileSync(join(path, '.hoodie/metadata', log.path)))])
        .filter((block) => block.type === 'DELETE_BLOCK');
      assert.deepEqual(
        deleteBlocks.flatMap((block) => readDeleteBlock(block).map((deleted) => [deleted.recordKey, deleted.partitionPath])),
        [['k1', 'record_index']],
      );
      index = await read([first, second]);
      assert.deepEqual([...index.keys()].sort(), ['k2', 'k3', 'k4', 'k5', 'k6']);
      assert.equal(recordIndexFileId(index.get('k2')!), FILE_B);
      assert.equal(recordIndexFileId(index.get('k3')!), FILE_A);
      assert.equal(index.get('k3')!.instantTime, millis, 'an update in place leaves its entry as it was');

      // A failed write's deltacommit rolled back with its data instant (rollback-1x.ts) takes its record-index logs too.
      const failed = '20991206121500000';
      const failedResult = await (await open(path)).commit(failed, commitOf(failed, [{ fileId: FILE_B }]), {
        recordIndex: { updates: [{ recordKey: 'k7', partitionPath: 'p1', fileId: FILE_B }], deletes: ['k4'] },
      });
      const failedLogs = failedResult.logFiles.filter((log) => log.partition === 'record_index').map((log) => log.path);
      assert.equal(failedLogs.length > 0, true);
      const rolledBack = await rollbackMetadataDeltaCommit1x(await open(path), failed, '20991206121600000');
      for (const log of failedLogs) assert.ok(rolledBack?.deletedFiles.includes(log), `${log} deleted`);
      assert.deepEqual([...(await read([first, second, failed])).keys()].sort(), ['k2', 'k3', 'k4', 'k5', 'k6']);

      // A compaction moves nothing; a clean touches no record_index entry.
      const compaction = '20991206122000000';
      const compacted = await (await open(path)).commit(compaction, commitOf(compaction, [{ fileId: FILE_A, operation: 'COMPACT' }]), {
        recordIndex: { updates: [{ recordKey: 'k9', partitionPath: 'p1', fileId: FILE_A }], deletes: [] },
      });
      assert.deepEqual(
        compacted.logFiles.filter((log) => log.partition === 'record_index'),
        [],
      );
      const cleanTime = '20991206130000000';
      const clean = oneCleanMetadata(cleanTime, 'p1', [`${FILE_A}_0-1-0_${first}.parquet`]);
      const cleaned = await (await open(path)).commitClean(cleanTime, clean);
      assert.deepEqual(
        cleaned.logFiles.filter((log) => log.partition === 'record_index'),
        [],
      );
      assert.deepEqual([...(await read([first, second, compaction, cleanTime])).keys()].sort(), ['k2', 'k3', 'k4', 'k5', 'k6']);
    });

    it('refuses a commit without its record-index changes, before its deltacommit', async () => {
      const path = copy('no-changes');
      const instant = '20991206120000000';
      const before = mdtTimeline(path);
      await assert.rejects((await open(path)).commit(instant, commitOf(instant, [{ fileId: FILE_A }])), /did not say where its records went/);
      assert.deepEqual(mdtTimeline(path), before);
    });

    /** A delta commit's log write stat as 1.x's append handle writes it (the file written alone in logFiles). */
    const logStat = (fileId: string, instant: string, fields: { numInserts?: number; numDeletes?: number; earlier?: string[] } = {}) => {
      const name = `.${fileId}_${instant}.log.1_0-1-0`;
      return newWriteStat({
        fileId,
        path: `p1/${name}`,
        partitionPath: 'p1',
        fileSizeInBytes: 100,
        numWrites: 2,
        numUpdateWrites: 2,
        numInserts: fields.numInserts ?? 0,
        numDeletes: fields.numDeletes ?? 0,
        delta: { logVersion: 1, logOffset: 0, baseFile: '', logFiles: [...(fields.earlier ?? []), name] },
      });
    };
    const deltaCommit = (instant: string, stats: ReturnType<typeof newWriteStat>[]): CommitMetadata => ({
      partitionToWriteStats: { p1: stats },
      compacted: false,
      extraMetadata: {},
      operationType: 'UPSERT',
    });

    it("keeps a delta commit's log deletions as Hudi's log merge finds them; updates in a log change nothing", async () => {
      const path = morCopy('delta');
      const storage = new LocalStorage(path);
      const first = '20991206120000000';
      await (await open(path)).commit(first, commitOf(first, [{ fileId: FILE_A }]), {
        recordIndex: { updates: ['k1', 'k2', 'k3', 'k4'].map((recordKey) => ({ recordKey, partitionPath: 'p1', fileId: FILE_A })), deletes: [] },
      });
      // An upsert: k1 and k2 updated and k3 deleted in FILE_A's log, k5 inserted in a new base file of FILE_B.
      const second = '20991206121000000';
      const stats = [
        logStat(FILE_A, second, { numDeletes: 1 }),
        newWriteStat({ fileId: FILE_B, path: `p1/${FILE_B}_0-1-0_${second}.parquet`, partitionPath: 'p1', fileSizeInBytes: 100, numWrites: 1, numInserts: 1 }),
      ];
      const result = await (await open(path)).commit(second, deltaCommit(second, stats), {
        recordIndex: { updates: [{ recordKey: 'k5', partitionPath: 'p1', fileId: FILE_B }], deletes: ['k3'] },
      });
      const deleted = result.logFiles
        .filter((log) => log.partition === 'record_index')
        .flatMap((log) => [...iterateLogBlocks(readFileSync(join(path, '.hoodie/metadata', log.path)))])
        .filter((block) => block.type === 'DELETE_BLOCK')
        .flatMap((block) => readDeleteBlock(block).map((record) => record.recordKey));
      assert.deepEqual(deleted, ['k3']);
      const contents = await readMetadataTable1x(storage, { completedDataInstants: new Set([first, second]), pendingDataInstants: new Set() });
      const index = new Map(
        [...(contents.partitions.get('record_index')?.values() ?? [])].flatMap((record) =>
          record.type === 5 ? [[record.key, record.recordIndex] as const] : [],
        ),
      );
      assert.deepEqual([...index.keys()].sort(), ['k1', 'k2', 'k4', 'k5']);
      assert.equal(recordIndexFileId(index.get('k5')!), FILE_B);
      assert.equal(index.get('k1')!.instantTime, BigInt(parseInstantTime(first, 'LOCAL')!.getTime()), 'an update in a log leaves its entry');
    });

    it('refuses, before its deltacommit, a log file with inserts (as Hudi does), an insert into a logged group, a stat naming earlier logs', async () => {
      const path = morCopy('log-refusals');
      const instant = '20991206120000000';
      const before = mdtTimeline(path);
      const refused = async (
        stats: ReturnType<typeof newWriteStat>[],
        updates: { recordKey: string; partitionPath: string; fileId: string }[],
        message: RegExp,
      ) =>
        assert.rejects((await open(path)).commit(instant, deltaCommit(instant, stats), { recordIndex: { updates, deletes: [] } }), (error: unknown) => {
          assert.ok(error instanceof MetadataTableError, String(error));
          assert.match(error.message, message);
          return true;
        });
      await refused([logStat(FILE_A, instant, { numInserts: 1 })], [], /puts inserts in log files/);
      // The bucket index's append handle counts a log's inserts as updates: the writer's changes show them.
      await refused([logStat(FILE_A, instant)], [{ recordKey: 'k9', partitionPath: 'p1', fileId: FILE_A }], /puts inserts in log files/);
      await refused([logStat(FILE_A, instant, { earlier: [`.${FILE_A}_20991206110000000.log.1_0-1-0`] })], [], /names earlier log files of its slice/);
      assert.deepEqual(mdtTimeline(path), before);
    });
  });
}
