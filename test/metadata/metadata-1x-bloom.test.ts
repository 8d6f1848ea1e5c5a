/**
 * The bloom_filters partition of a 1.x metadata table: the records a commit and a clean build (convert-1x.ts), and
 * MetadataTable1x keeping them on a metadata table that has the partition (written, read back, rolled back with a
 * failed write, tombstoned by a clean), or refusing, before anything is written, a write that asks for the partition where the table has none.
 * test/interop/hudi-1x-bloom-filters.test.ts judges them against Spark.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MetadataTableError } from '../../lib/errors.js';
import { keepMetadataTable } from '../../lib/metadata/commit-path.js';
import { bloomFilterRecords1x, cleanBloomFilterRecords1x } from '../../lib/metadata/convert-1x.js';
import { readLocalFooter } from '../../lib/metadata/footers.js';
import { bloomFilterIndexKey } from '../../lib/metadata/hash-ids.js';
import { MetadataTable1x } from '../../lib/metadata/metadata-table-1x.js';
import { mapRecordKeyToFileGroupIndex, partitionIdentifier } from '../../lib/metadata/partitions.js';
import { readMetadataTable1x } from '../../lib/metadata/reader-1x.js';
import type { MetadataRecord } from '../../lib/metadata/records.js';
import { rollbackMetadataDeltaCommit1x } from '../../lib/metadata/rollback-1x.js';
import { setFooterKeyValues } from '../../lib/parquet/footer.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { readTableConfig } from '../../lib/table/config.js';
import { type CommitMetadata, newWriteStat } from '../../lib/timeline/commit-metadata.js';
import { duckdb } from '../helpers/duckdb.js';
import { oneCleanMetadata } from '../helpers/metadata-table.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/hudi-1x-metadata');
const FILTER = 'AAAAAQAAAB4BACd9PgAA';

/** A Parquet file at `path` with one column, and Hudi's bloom filter in its footer unless `filter` is undefined. */
async function parquet(path: string, filter: string | undefined): Promise<void> {
  await duckdb(`COPY (SELECT i::BIGINT AS id FROM range(3) t(i)) TO '${path}' (FORMAT parquet)`);
  if (filter !== undefined) await setFooterKeyValues(path, { 'org.apache.hudi.bloomfilter': filter, hoodie_bloom_filter_type_code: 'DYNAMIC_V0' });
}

describe('bloom_filters records of a 1.x commit and clean', () => {
  it("a commit: one record per base file with a filter, keyed by partition and file, the writer's type, the instant", async () => {
    const dir = tempDir('mdt1x-bloom-records-');
    await parquet(join(dir, 'a.parquet'), FILTER);
    await parquet(join(dir, 'b.parquet'), undefined);
    const files = [
      { partitionPath: '2024-01-01', fileName: 'a.parquet', footer: await readLocalFooter(join(dir, 'a.parquet')) },
      { partitionPath: '2024-01-01', fileName: 'b.parquet', footer: await readLocalFooter(join(dir, 'b.parquet')) },
      { partitionPath: '', fileName: 'a.parquet', footer: await readLocalFooter(join(dir, 'a.parquet')) },
    ];
    const records = bloomFilterRecords1x(files, '20261206120000000', 'SIMPLE');
    assert.deepEqual(
      records.map((record) => record.key),
      [bloomFilterIndexKey(partitionIdentifier('2024-01-01'), 'a.parquet'), bloomFilterIndexKey(partitionIdentifier(''), 'a.parquet')],
    );
    assert.notEqual(records[0]!.key, records[1]!.key, 'the partition is part of the key');
    for (const record of records) {
      assert.ok(record.type === 4);
      assert.deepEqual(
        { ...record.bloomFilter, bloomFilter: Buffer.from(record.bloomFilter.bloomFilter).toString('utf8') },
        {
          type: 'SIMPLE',
          timestamp: '20261206120000000',
          bloomFilter: FILTER,
          isDeleted: false,
        },
      );
    }
  });

  it('a clean: a tombstone per cleaned base file, none for log files', () => {
    const records = cleanBloomFilterRecords1x(
      [
        { partition: '2024-01-01', name: 'f1-0_0-1-0_20261206120000000.parquet' },
        { partition: '2024-01-01', name: '.f1-0_20261206120000000.log.1_0-1-0' },
        { partition: '2024-01-02', name: 'f2-0_0-1-0_20261206120000000.parquet' },
      ],
      '20261206130000000',
    );
    assert.deepEqual(
      records.map((record) => record.key),
      [
        bloomFilterIndexKey(partitionIdentifier('2024-01-01'), 'f1-0_0-1-0_20261206120000000.parquet'),
        bloomFilterIndexKey(partitionIdentifier('2024-01-02'), 'f2-0_0-1-0_20261206120000000.parquet'),
      ],
    );
    for (const record of records) {
      assert.ok(record.type === 4);
      assert.deepEqual(
        { ...record.bloomFilter, bloomFilter: record.bloomFilter.bloomFilter.length },
        {
          type: '',
          timestamp: '20261206130000000',
          bloomFilter: 0,
          isDeleted: true,
        },
      );
    }
  });
});

for (const release of ['1.0.2', '1.1.1']) {
  const copy = (suffix: string) => {
    const path = join(tempDir(`mdt1x-bloom-${release}-${suffix}-`), 'table');
    cpSync(join(FIXTURES, release), path, { recursive: true });
    return path;
  };
  const setPartitions = (path: string, partitions: string) => {
    const properties = join(path, '.hoodie/hoodie.properties');
    writeFileSync(
      properties,
      readFileSync(properties, 'utf8').replace(/^hoodie\.table\.metadata\.partitions=.*$/m, `hoodie.table.metadata.partitions=${partitions}`),
    );
  };
  const open = async (path: string) => {
    const storage = new LocalStorage(path);
    const table = await MetadataTable1x.open(storage, await readTableConfig(storage));
    assert.ok(table !== undefined);
    return table;
  };

  describe(`MetadataTable1x keeps bloom_filters on Hudi ${release}'s metadata table`, () => {
    it('refuses hoodie.metadata.index.bloom.filter.enable=true, before anything is written, where the partition is missing', async () => {
      const path = copy('refuse');
      const mdtTimeline = () => readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline')).sort();
      const before = mdtTimeline();
      const session = keepMetadataTable(new LocalStorage(path), new Map([['hoodie.metadata.index.bloom.filter.enable', 'true']]), 'write');
      await assert.rejects(session.prepare('a write'), (error: unknown) => {
        assert.ok(error instanceof MetadataTableError, String(error));
        assert.match(error.message, /hoodie\.metadata\.index\.bloom\.filter\.enable=true asks for the bloom_filters partition/);
        return true;
      });
      assert.deepEqual(mdtTimeline(), before);
      assert.deepEqual(readdirSync(join(path, '.hoodie/metadata')).includes('bloom_filters'), false);
      // Without the key, or with it off, the table is kept as it is; doctor's check does not ask.
      const table = await open(path);
      assert.deepEqual(table.problems({ operation: 'write' }), []);
      assert.deepEqual(table.problems({ operation: 'write', properties: new Map([['hoodie.metadata.index.bloom.filter.enable', 'false']]) }), []);
      assert.deepEqual(table.problems({ operation: 'check', properties: new Map([['hoodie.metadata.index.bloom.filter.enable', 'true']]) }), []);
    });

    it('refuses a declared bloom_filters partition without file groups', async () => {
      const path = copy('empty');
      setPartitions(path, 'bloom_filters,files');
      mkdirSync(join(path, '.hoodie/metadata/bloom_filters'));
      const problems = (await open(path)).problems({ operation: 'write' }).map((p) => p.problem);
      assert.deepEqual(problems, ['metadata-table partition bloom_filters is not declared or has no file group']);
    });

    it("writes a commit's bloom filters to their file groups, reads them back, and a clean's tombstones read as absent", async () => {
      const path = copy('write');
      const storage = new LocalStorage(path);
      // The partition as Hudi initialises it on an empty table: four file groups, each an empty log file.
      setPartitions(path, 'bloom_filters,files');
      const folder = join(path, '.hoodie/metadata/bloom_filters');
      mkdirSync(folder);
      writeFileSync(join(folder, '.hoodie_partition_metadata'), '');
      for (let i = 0; i < 4; i++) writeFileSync(join(folder, `.bloom-filters-000${i}-0_00000000000000002.log.1_0-0-0`), '');
      const instant = '20991206120000000';
      const names = [`f1-0_0-1-0_${instant}.parquet`, `f2-0_0-1-0_${instant}.parquet`, `f3-0_0-1-0_${instant}.parquet`];
      mkdirSync(join(path, '2024-01-01'), { recursive: true });
      for (const name of names) await parquet(join(path, '2024-01-01', name), `${FILTER}${name}`);
      const metadata: CommitMetadata = {
        partitionToWriteStats: {
          '2024-01-01': [
            ...names.map((name) =>
              newWriteStat({
                fileId: name.slice(0, 4),
                path: `2024-01-01/${name}`,
                partitionPath: '2024-01-01',
                fileSizeInBytes: statSync(join(path, '2024-01-01', name)).size,
                numWrites: 3,
              }),
            ),
            // A log file (a delta write) gets no bloom filter.
            newWriteStat({ fileId: 'f4-0', path: `2024-01-01/.f4-0_${instant}.log.1_0-1-0`, partitionPath: '2024-01-01', fileSizeInBytes: 100, numWrites: 1 }),
          ],
        },
        compacted: false,
        extraMetadata: { schema: JSON.stringify({ type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] }) },
        operationType: 'UPSERT',
      };
      const result = await (await open(path)).commit(instant, metadata, { properties: new Map([['hoodie.bloom.index.filter.type', 'SIMPLE']]) });
      const keys = names.map((name) => bloomFilterIndexKey(partitionIdentifier('2024-01-01'), name));
      const groups = new Set(keys.map((key) => `bloom-filters-000${mapRecordKeyToFileGroupIndex(key, 4)}-0`));
      assert.deepEqual(new Set(result.logFiles.filter((log) => log.partition === 'bloom_filters').map((log) => log.fileId)), groups);

      const read = async (completed: string[]) => {
        const contents = await readMetadataTable1x(storage, { completedDataInstants: new Set(completed), pendingDataInstants: new Set() });
        return [...(contents.partitions.get('bloom_filters')?.values() ?? [])].filter(
          (record): record is Extract<MetadataRecord, { type: 4 }> => record.type === 4,
        );
      };
      const written = await read([instant]);
      assert.deepEqual(written.map((record) => record.key).sort(), [...keys].sort());
      for (const record of written) {
        const name = names[keys.indexOf(record.key)]!;
        assert.equal(Buffer.from(record.bloomFilter.bloomFilter).toString('utf8'), `${FILTER}${name}`);
        assert.deepEqual([record.bloomFilter.type, record.bloomFilter.timestamp, record.bloomFilter.isDeleted], ['SIMPLE', instant, false]);
      }

      // A failed write's deltacommit rolled back with its data instant (rollback-1x.ts) takes its bloom-filter logs too.
      const failed = '20991206120500000';
      const failedName = `f5-0_0-1-0_${failed}.parquet`;
      await parquet(join(path, '2024-01-01', failedName), FILTER);
      const failedMetadata: CommitMetadata = {
        ...metadata,
        partitionToWriteStats: {
          '2024-01-01': [
            newWriteStat({
              fileId: 'f5-0',
              path: `2024-01-01/${failedName}`,
              partitionPath: '2024-01-01',
              fileSizeInBytes: statSync(join(path, '2024-01-01', failedName)).size,
              numWrites: 3,
            }),
          ],
        },
      };
      const failedResult = await (await open(path)).commit(failed, failedMetadata);
      const failedLog = failedResult.logFiles.find((log) => log.partition === 'bloom_filters');
      assert.ok(failedLog !== undefined);
      const rolledBack = await rollbackMetadataDeltaCommit1x(await open(path), failed, '20991206120600000');
      assert.ok(rolledBack?.deletedFiles.includes(failedLog.path), `${failedLog.path} deleted`);
      assert.equal(existsSync(join(path, '.hoodie/metadata', failedLog.path)), false);
      assert.deepEqual((await read([instant, failed])).map((record) => record.key).sort(), [...keys].sort());

      const cleanTime = '20991206130000000';
      const clean = oneCleanMetadata(cleanTime, '2024-01-01', [names[0]!, `.f4-0_${instant}.log.1_0-1-0`]);
      const cleaned = await (await open(path)).commitClean(cleanTime, clean);
      assert.deepEqual(
        cleaned.logFiles.filter((log) => log.partition === 'bloom_filters').map((log) => log.fileId),
        [`bloom-filters-000${mapRecordKeyToFileGroupIndex(keys[0]!, 4)}-0`],
      );
      assert.deepEqual((await read([instant, cleanTime])).map((record) => record.key).sort(), keys.slice(1).sort());
    });
  });
}
