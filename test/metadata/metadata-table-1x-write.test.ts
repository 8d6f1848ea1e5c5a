/**
 * MetadataTable1x on the metadata tables Hudi 1.0.2 and 1.1.1 wrote (test/fixtures/hudi-1x-metadata/): what it
 * refuses by name before anything is written (other services and rollbacks, a due compaction or archival, an index
 * it does not keep, a commit replacing file groups), and the deltacommits it writes in layout 2 (a commit's, a
 * clean's) that reader-1x reads back.
 * test/interop/hudi-1x-metadata-writes.test.ts judges the writes against Spark.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MetadataTableError } from '../../lib/errors.js';
import { assertRollbackKeepsMetadataTable } from '../../lib/metadata/commit-path.js';
import { MetadataTable1x } from '../../lib/metadata/metadata-table-1x.js';
import { loadMetadataTimeline1x, readMetadataTable1x } from '../../lib/metadata/reader-1x.js';
import { performMetadataTableServices1x } from '../../lib/metadata/services-1x.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { readTableConfig } from '../../lib/table/config.js';
import { HudiTable } from '../../lib/table/table.js';
import type { HoodieCleanMetadata } from '../../lib/timeline/avro-files.js';
import type { CommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { newInstantTime } from '../../lib/timeline/instant.js';
import { timelineLayout2 } from '../../lib/timeline/layout.js';
import { latestCommitSchema } from '../../lib/timeline/queries.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { createRequested, transitionToCompleted } from '../../lib/timeline/transitions.js';
import { tempDir } from '../helpers/paths.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/hudi-1x-metadata');

function copy(release: string): string {
  const path = join(tempDir(`mdt1x-write-${release}-`), 'table');
  cpSync(join(FIXTURES, release), path, { recursive: true });
  return path;
}

async function open(path: string): Promise<MetadataTable1x> {
  const storage = new LocalStorage(path);
  const table = await MetadataTable1x.open(storage, await readTableConfig(storage));
  assert.ok(table !== undefined);
  return table;
}

const problemsOf = (table: MetadataTable1x, options: Parameters<MetadataTable1x['problems']>[0]) => table.problems(options).map((p) => p.problem);

for (const release of ['1.0.2', '1.1.1']) {
  describe(`MetadataTable1x on Hudi ${release}'s metadata table`, () => {
    it('keeps it for a write, and names what it does not keep', async () => {
      const table = await open(copy(release));
      assert.deepEqual(problemsOf(table, { operation: 'write' }), []);
      assert.match(problemsOf(table, { operation: 'other' }).join('\n'), /only for copy-on-write write commits/);
      const compaction = problemsOf(table, { operation: 'write', properties: new Map([['hoodie.metadata.compact.max.delta.commits', '3']]) });
      assert.deepEqual(compaction, [], 'a due compaction is run, not refused');
      const archivalOnClean = problemsOf(table, { operation: 'clean', properties: new Map([['hoodie.keep.max.commits', '2']]) });
      assert.deepEqual(archivalOnClean, [], "a clean's deltacommit runs no metadata-table service in Hudi");
      const archival = problemsOf(table, { operation: 'write', properties: new Map([['hoodie.keep.max.commits', '2']]) });
      assert.match(archival.join('\n'), /archival may be due/);
      const clean = problemsOf(table, { operation: 'write', properties: new Map([['hoodie.cleaner.commits.retained', '1']]) });
      assert.deepEqual(clean, [], 'the metadata cleaner retains at least 20 commits');
    });

    it('compacts a due metadata table before the deltacommit, as Hudi 1.x: a fresh instant, every log folded into HFile base files', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const data = await HudiTable.open(storage);
      const instants = { completedDataInstants: new Set(data.timeline.completed().map((i) => i.time)), pendingDataInstants: new Set<string>() };
      const before = await readMetadataTable1x(storage, instants);
      const dir = join(path, '.hoodie/metadata/.hoodie/timeline');
      const properties = new Map([['hoodie.metadata.compact.max.delta.commits', '3']]);
      const { compactions } = await performMetadataTableServices1x(storage, {
        version: release === '1.0.2' ? 8 : 9,
        partitions: ['column_stats', 'files', 'partition_stats'],
        dataTimeline: data.timeline,
        zone: 'UTC',
        properties,
      });
      assert.equal(compactions.length, 1);
      const [compaction] = compactions;
      const latest = data.timeline.instants
        .map((i) => i.time)
        .sort()
        .at(-1)!;
      assert.ok(compaction!.instantTime > latest, `${compaction!.instantTime}: a fresh instant time, after ${latest} (not <deltacommit>001)`);
      const names = readdirSync(dir);
      for (const name of [`${compaction!.instantTime}.compaction.requested`, `${compaction!.instantTime}.compaction.inflight`])
        assert.ok(names.includes(name), name);
      assert.ok(names.some((n) => n === `${compaction!.instantTime}_${compaction!.completionTime}.commit`));
      // Every file group got a base file at the compaction instant; the records read the same.
      const groups = ['files/files-0000-0', 'column_stats/col-stats-0000-0', 'column_stats/col-stats-0001-0', 'partition_stats/partition-stats-0000-0'];
      assert.deepEqual(
        compaction!.files.map((file) => file.path.replace(/_[^_]+_\d+\.hfile$/, '')).sort(),
        groups.filter((group) => readdirSync(join(path, '.hoodie/metadata', group.split('/')[0]!)).some((n) => n.includes(group.split('/')[1]!))).sort(),
      );
      const after = await readMetadataTable1x(storage, instants);
      assert.equal(after.queryInstant, compaction!.instantTime);
      for (const [partition, records] of before.partitions) assert.deepEqual([...after.partitions.get(partition)!].sort(), [...records].sort(), partition);
      // The commit: Avro commit metadata (COMPACT), a write stat per base file.
      const metadata = await readCommitMetadata(
        storage,
        (await loadMetadataTimeline1x(storage)).instants.find((i) => i.action === 'commit')!,
        timelineLayout2('.hoodie/metadata/.hoodie/timeline', 'UTC'),
      );
      assert.equal(metadata.operationType, 'COMPACT');
      assert.equal(metadata.compacted, true);
      assert.deepEqual(
        Object.values(metadata.partitionToWriteStats)
          .flat()
          .map((stat) => stat.path)
          .sort(),
        compaction!.files.map((file) => file.path).sort(),
      );
      // Nothing is due any more, and a deltacommit after it is read on top of the new slices.
      assert.deepEqual(problemsOf(await open(path), { operation: 'write', properties }), []);
      const result = await (await open(path)).commit(
        '29991206120000000',
        {
          partitionToWriteStats: {},
          compacted: false,
          extraMetadata: { schema: JSON.stringify({ type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] }) },
          operationType: 'UPSERT',
        },
        { properties },
      );
      assert.equal(
        (await readMetadataTable1x(storage, { ...instants, completedDataInstants: new Set([...instants.completedDataInstants, result.instantTime]) }))
          .queryInstant,
        result.instantTime,
      );
    });

    it('cleans the metadata table when due, before compacting it: only slices older than the retained commits go', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      // Compacting every 3 deltacommits leaves 2 instants requested after each compaction: never the 3 a clean waits for.
      const properties = new Map([
        ['hoodie.metadata.compact.max.delta.commits', '5'],
        ['hoodie.keep.max.commits', '100'],
        ['hoodie.keep.min.commits', '90'],
      ]);
      const data = await HudiTable.open(storage);
      const instants = { completedDataInstants: new Set(data.timeline.completed().map((i) => i.time)), pendingDataInstants: new Set<string>() };
      const expected = await readMetadataTable1x(storage, instants);
      const metadata: CommitMetadata = {
        partitionToWriteStats: {},
        compacted: false,
        extraMetadata: { schema: JSON.stringify({ type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] }) },
        operationType: 'UPSERT',
      };
      const cleans: string[] = [];
      for (let i = 0; i < 30; i += 1) {
        const table = await open(path);
        // As our writer: the data instant is requested first, the deltacommit completes before it.
        const instant = newInstantTime([...(await loadMetadataTimeline1x(storage)).allTimes(), ...instants.completedDataInstants], new Date(), 'UTC');
        await createRequested(storage, data.layout, instant, 'commit');
        await table.commit(instant, metadata, { properties });
        await transitionToCompleted(storage, data.layout, instant, 'commit', data.layout.encodeCommitMetadata(metadata, 'commit'));
        instants.completedDataInstants.add(instant);
        cleans.push(...table.servicesRun.flatMap((ran) => ran.cleans.map((clean) => clean.instantTime)));
      }
      assert.ok(cleans.length > 0, 'the metadata table was cleaned');
      const timeline = await loadMetadataTimeline1x(storage);
      const completedClean = timeline.completed().filter((i) => i.action === 'clean');
      assert.deepEqual(
        completedClean.map((i) => i.time),
        cleans,
      );
      // A clean comes 3 instants after a compaction at the earliest, and only old slices went: the records read the same.
      const after = await readMetadataTable1x(storage, instants);
      for (const [partition, records] of expected.partitions) {
        if (partition === 'files') continue;
        assert.deepEqual([...after.partitions.get(partition)!].sort(), [...records].sort(), partition);
      }
      assert.deepEqual(after.partitions.get('files')!.get('__all_partitions__'), expected.partitions.get('files')!.get('__all_partitions__'));
      // The oldest slices are gone: no initialization log file is left.
      const left = readdirSync(join(path, '.hoodie/metadata/files'));
      assert.ok(!left.some((name) => name.includes('_00000000000000000.')), left.join(', '));
    });

    it('refuses rollbacks before their plan is written (their 1.x deltacommit is not built)', async () => {
      const storage = new LocalStorage(copy(release));
      await assert.rejects(assertRollbackKeepsMetadataTable(storage, 'rolling back 1', await readTableConfig(storage)), MetadataTableError);
    });

    it('refuses an index partition it does not keep, by name', async () => {
      const path = copy(release);
      const properties = join(path, '.hoodie/hoodie.properties');
      writeFileSync(
        properties,
        readFileSync(properties, 'utf8').replace(
          /^hoodie\.table\.metadata\.partitions=.*$/m,
          'hoodie.table.metadata.partitions=column_stats,files,partition_stats,record_index',
        ),
      );
      const table = await open(path);
      assert.throws(
        () => table.assertMaintainable('a write', { operation: 'write' }),
        (error: unknown) => {
          assert.ok(error instanceof MetadataTableError && /"record_index" partition/.test(error.message), String(error));
          return true;
        },
      );
    });

    it('writes a layout-2 deltacommit with one log file per touched file group, which reader-1x reads', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const table = await open(path);
      const instant = '20261206120000000';
      const metadata: CommitMetadata = {
        partitionToWriteStats: {},
        compacted: false,
        extraMetadata: { schema: JSON.stringify({ type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] }) },
        operationType: 'UPSERT',
      };
      const result = await table.commit(instant, metadata);
      const timeline = readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline'));
      assert.ok(timeline.includes(`${instant}.deltacommit.requested`) && timeline.includes(`${instant}.deltacommit.inflight`));
      assert.ok(timeline.includes(`${instant}_${result.completionTime}.deltacommit`), timeline.join(', '));
      assert.deepEqual(
        result.logFiles.map((log) => log.path),
        [`files/.files-0000-0_${instant}.log.1_0-1-0`],
      );
      const contents = await readMetadataTable1x(storage, { completedDataInstants: new Set(), pendingDataInstants: new Set() });
      assert.equal(contents.queryInstant, instant);
      assert.ok(contents.partitions.get('files')?.has('__all_partitions__'));

      const before = readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline')).sort();
      const replace: CommitMetadata = { ...metadata, partitionToReplaceFileIds: { '2024-01-01': ['f1'] }, operationType: 'CLUSTER' };
      await assert.rejects((await open(path)).commit('20261206120000001', replace), MetadataTableError);
      await assert.rejects((await open(path)).commit(instant, metadata), MetadataTableError);
      assert.deepEqual(readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline')).sort(), before);
    });

    it('mirrors a clean: files drops the cleaned file, its column stats are tombstoned and read as absent', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const data = await HudiTable.open(storage);
      const instants = { completedDataInstants: new Set(data.timeline.completed().map((i) => i.time)), pendingDataInstants: new Set<string>() };
      const before = await readMetadataTable1x(storage, instants);
      const listing = before.partitions.get('files')!;
      const [partition, record] = [...listing].find(([key]) => key !== '__all_partitions__')!;
      assert.ok(record.type === 2);
      const name = [...record.files.keys()].find((file) => file.endsWith('.parquet'))!;
      const statsOf = (contents: typeof before) =>
        [...contents.partitions.get('column_stats')!.values()].filter((r) => r.type === 3 && r.columnStats.fileName === name);
      assert.ok(statsOf(before).length > 0, `${name} has column stats`);
      const clean: HoodieCleanMetadata = {
        startCleanTime: '20261206120000000',
        timeTakenInMillis: 1,
        totalFilesDeleted: 1,
        earliestCommitToRetain: '',
        lastCompletedCommitTimestamp: '',
        partitionMetadata: {
          [partition]: {
            partitionPath: partition,
            policy: 'KEEP_LATEST_COMMITS',
            deletePathPatterns: [name],
            successDeleteFiles: [name],
            failedDeleteFiles: [],
            isPartitionDeleted: false,
          },
        },
        version: 2,
        bootstrapPartitionMetadata: null,
        extraMetadata: null,
      };
      const result = await (await open(path)).commitClean('20261206120000000', clean, { tableSchema: () => latestCommitSchema(storage, data.timeline) });
      assert.deepEqual(new Set(result.logFiles.map((log) => log.partition)), new Set(['column_stats', 'files']));
      const after = await readMetadataTable1x(storage, instants);
      const files = after.partitions.get('files')!.get(partition);
      assert.ok(files?.type === 2 && !files.files.has(name), `${name} left files`);
      assert.deepEqual(statsOf(after), []);
    });
  });
}
