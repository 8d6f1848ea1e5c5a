/**
 * MetadataTable1x on the metadata tables Hudi 1.0.2 and 1.1.1 wrote (test/fixtures/hudi-1x-metadata/): what it
 * refuses by name before anything is written (other services, an index it does not
 * keep, a write replacing file groups, a rollback Hudi refuses, a pending metadata compaction or clean), the
 * deltacommits it writes in layout 2 (a commit's, a clustering's, a clean's, a second attempt's) that reader-1x reads
 * back, the rollback of one (rollback-1x.ts), and a killed writer's pending deltacommit rolled back first.
 * test/interop/hudi-1x-metadata-writes.test.ts and metadata-table-pending.test.ts judge them against Spark.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MetadataTableError } from '../../lib/errors.js';
import { assertMetadataTableKeepable, assertRollbackKeepsMetadataTable, keepMetadataTable } from '../../lib/metadata/commit-path.js';
import { MetadataTable1x } from '../../lib/metadata/metadata-table-1x.js';
import { loadMetadataTimeline1x, readMetadataTable1x } from '../../lib/metadata/reader-1x.js';
import { rollbackMetadataDeltaCommit1x } from '../../lib/metadata/rollback-1x.js';
import { performMetadataTableServices1x } from '../../lib/metadata/services-1x.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { readTableConfig } from '../../lib/table/config.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro, encodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { type CommitMetadata, newWriteStat } from '../../lib/timeline/commit-metadata.js';
import { newInstantTime } from '../../lib/timeline/instant.js';
import { timelineLayout2 } from '../../lib/timeline/layout.js';
import { latestCommitSchema } from '../../lib/timeline/queries.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { createRequested, transitionToCompleted } from '../../lib/timeline/transitions.js';
import { fileNameOf } from '../../lib/util/paths.js';
import { CrashingStorage, SimulatedCrash } from '../helpers/crashing-storage.js';
import { duckdb } from '../helpers/duckdb.js';
import { oneCleanMetadata } from '../helpers/metadata-table.js';
import { tableFiles, tempDir } from '../helpers/paths.js';

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

/** The fixture's newest completed data commit: its file name under .hoodie/timeline/ and its instant time. */
function lastDataCommit(path: string): { file: string; time: string } {
  const file = readdirSync(join(path, '.hoodie/timeline'))
    .filter((name) => /^\d{17}_\d{17}\.commit$/.test(name))
    .sort()
    .at(-1)!;
  return { file, time: file.slice(0, 17) };
}

/** An upsert's commit metadata that changes no file, with a one-column schema. */
const noChangeUpsert = (): CommitMetadata => ({
  partitionToWriteStats: {},
  compacted: false,
  extraMetadata: { schema: JSON.stringify({ type: 'record', name: 'r', fields: [{ name: 'id', type: 'long' }] }) },
  operationType: 'UPSERT',
});

const problemsOf = (table: MetadataTable1x, options: Parameters<MetadataTable1x['problems']>[0]) => table.problems(options).map((p) => p.problem);

for (const release of ['1.0.2', '1.1.1']) {
  describe(`MetadataTable1x on Hudi ${release}'s metadata table`, () => {
    it('keeps it for a write, and names what it does not keep', async () => {
      const table = await open(copy(release));
      assert.deepEqual(problemsOf(table, { operation: 'write' }), []);
      assert.deepEqual(problemsOf(table, { operation: 'cluster' }), []);
      assert.deepEqual(problemsOf(table, { operation: 'compact' }), []);
      assert.match(
        problemsOf(table, { operation: 'other' }).join('\n'),
        /only for write commits \(delta commits included\), clusterings, compactions and cleans/,
      );
      const compaction = problemsOf(table, { operation: 'write', properties: new Map([['hoodie.metadata.compact.max.delta.commits', '3']]) });
      assert.deepEqual(compaction, [], 'a due compaction is run, not refused');
      const archivalOnClean = problemsOf(table, { operation: 'clean', properties: new Map([['hoodie.keep.max.commits', '2']]) });
      assert.deepEqual(archivalOnClean, [], "a clean's deltacommit runs no metadata-table service in Hudi");
      const archival = problemsOf(table, {
        operation: 'write',
        properties: new Map([
          ['hoodie.keep.min.commits', '1'],
          ['hoodie.keep.max.commits', '2'],
        ]),
      });
      assert.deepEqual(archival, [], 'a due archival is run, not refused');
      assert.throws(() => problemsOf(table, { operation: 'write', properties: new Map([['hoodie.keep.max.commits', '5']]) }), /must be greater than/);
      assert.deepEqual(problemsOf(table, { operation: 'archive' }), [], "the data table's archive only reads the metadata table");
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
      const result = await (await open(path)).commit('29991206120000000', noChangeUpsert(), { properties });
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
      const metadata = noChangeUpsert();
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

    it('rolls back the deltacommit Hudi rolls back with a data instant, as Hudi writes that rollback', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const data = await HudiTable.open(storage);
      const last = data.timeline.completed().at(-1)!.time;
      const mdtTimeline = () => readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline')).sort();
      // None at the instant (a write that failed before its deltacommit): Hudi leaves the metadata table as it is.
      assert.equal((await open(path)).rollbackTarget('20261206120000000'), undefined);
      // A pending one: 1.0.2 rolls back only a completed deltacommit, 1.1.1 one in any state.
      writeFileSync(join(path, '.hoodie/metadata/.hoodie/timeline/20261206120000000.deltacommit.requested'), '');
      assert.equal((await open(path)).rollbackTarget('20261206120000000')?.state, release === '1.0.2' ? undefined : 'REQUESTED');

      // A completed one: both roll it back. Its blocks read as absent before (its data instant pending) and after.
      const instants = (pending: string[]) => ({
        completedDataInstants: new Set(
          data.timeline
            .completed()
            .map((i) => i.time)
            .filter((time) => !pending.includes(time)),
        ),
        pendingDataInstants: new Set(pending),
      });
      const before = await readMetadataTable1x(storage, instants([last]));
      const logs = (dir: string) => readdirSync(join(path, '.hoodie/metadata', dir)).filter((name) => name.includes(`_${last}.log.`));
      const named = ['files', 'column_stats', 'partition_stats'].flatMap((dir) => logs(dir).map((name) => `${dir}/${name}`));
      assert.ok(named.length >= 3);
      const rollbackTime = '20261206120000001';
      const result = await rollbackMetadataDeltaCommit1x(await open(path), last, rollbackTime);
      assert.deepEqual([...(result?.deletedFiles ?? [])].sort(), named.sort());
      const timeline = mdtTimeline();
      assert.ok(!timeline.some((name) => name.startsWith(last)), `${last} left the metadata table's timeline`);
      assert.ok(timeline.includes(`${rollbackTime}.rollback.requested`) && timeline.includes(`${rollbackTime}.rollback.inflight`));
      const completed = timeline.find((name) => name.startsWith(`${rollbackTime}_`) && name.endsWith('.rollback'))!;
      const metadataPath = join(path, '.hoodie/metadata/.hoodie/timeline', completed);
      const metadata = decodeTimelineAvro('rollbackMetadata', readFileSync(metadataPath), metadataPath);
      assert.deepEqual(metadata.commitsRollback, [last]);
      assert.equal(metadata.totalFilesDeleted, named.length);
      assert.deepEqual(
        Object.values(metadata.partitionMetadata)
          .flatMap((partition) => partition.successDeleteFiles)
          .sort(),
        named.map((file) => join(path, '.hoodie/metadata', file)).sort(),
        'absolute paths without a scheme, as ListingBasedRollbackStrategy plans them',
      );
      const after = await readMetadataTable1x(storage, instants([last]));
      assert.deepEqual(after.partitions, before.partitions);
      // Done: nothing is left to roll back, and a second call changes nothing.
      assert.equal(await rollbackMetadataDeltaCommit1x(await open(path), last, '20261206120000002'), undefined);
      assert.deepEqual(mdtTimeline(), timeline);
    });

    it('a rollback of a deltacommit killed after any storage write is finished by the next attempt', async () => {
      const expected = copy(release);
      const last = (await HudiTable.open(new LocalStorage(expected))).timeline.completed().at(-1)!.time;
      const rollbackTime = '20261206120000001';
      await rollbackMetadataDeltaCommit1x(await open(expected), last, rollbackTime);
      const contents = async (path: string) => {
        const storage = new LocalStorage(path);
        const timeline = (await HudiTable.open(storage)).timeline;
        const pending = new Set([last]);
        const completed = new Set(
          timeline
            .completed()
            .map((i) => i.time)
            .filter((time) => time !== last),
        );
        return (await readMetadataTable1x(storage, { completedDataInstants: completed, pendingDataInstants: pending })).partitions;
      };
      const files = (path: string) =>
        tableFiles(join(path, '.hoodie/metadata')).map((line) => line.replace(/^(\S*?\/)\d{17}_\d{17}\.rollback /, '$1R_C.rollback '));
      for (let crashAt = 1; ; crashAt++) {
        const path = copy(release);
        const storage = new CrashingStorage(new LocalStorage(path), crashAt);
        const table = await MetadataTable1x.open(storage, await readTableConfig(storage));
        const done = await rollbackMetadataDeltaCommit1x(table!, last, rollbackTime).then(
          () => true,
          (error: unknown) => {
            if (!(error instanceof SimulatedCrash)) throw error;
            return false;
          },
        );
        await rollbackMetadataDeltaCommit1x(await open(path), last, rollbackTime);
        assert.deepEqual(await contents(path), await contents(expected), `crash at storage call ${crashAt}`);
        assert.deepEqual(
          files(path).filter((line) => !line.includes('R_C.rollback')),
          files(expected).filter((line) => !line.includes('R_C.rollback')),
          `crash at storage call ${crashAt}`,
        );
        if (done) break;
      }
    });

    it('refuses, as Hudi does, to roll back a deltacommit at or before the latest metadata compaction', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const last = (await HudiTable.open(storage)).timeline.completed().at(-1)!.time;
      writeFileSync(join(path, '.hoodie/metadata/.hoodie/timeline/20261206130000000_20261206130000001.commit'), '');
      await assert.rejects(assertRollbackKeepsMetadataTable(storage, `rolling back ${last}`, await readTableConfig(storage), last), (error: unknown) => {
        assert.ok(error instanceof MetadataTableError && /not after its latest compaction 20261206130000000/.test(error.message), String(error));
        return true;
      });
    });

    it('refuses an index partition it does not keep, by name', async () => {
      const path = copy(release);
      const properties = join(path, '.hoodie/hoodie.properties');
      writeFileSync(
        properties,
        readFileSync(properties, 'utf8').replace(
          /^hoodie\.table\.metadata\.partitions=.*$/m,
          'hoodie.table.metadata.partitions=column_stats,files,partition_stats,secondary_index_by_name',
        ),
      );
      const table = await open(path);
      assert.throws(
        () => table.assertMaintainable('a write', { operation: 'write' }),
        (error: unknown) => {
          assert.ok(error instanceof MetadataTableError && /"secondary_index_by_name" partition/.test(error.message), String(error));
          return true;
        },
      );
    });

    it('writes a layout-2 deltacommit with one log file per touched file group, which reader-1x reads', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const table = await open(path);
      const instant = '20261206120000000';
      const metadata = noChangeUpsert();
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
      const replace: CommitMetadata = { ...metadata, partitionToReplaceFileIds: { '2024-01-01': ['f1'] }, operationType: 'INSERT_OVERWRITE' };
      await assert.rejects((await open(path)).commit('20261206120000001', replace), MetadataTableError);
      assert.deepEqual(readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline')).sort(), before);

      // A second attempt (its data instant never completed): Hudi's commitInternal rolls the first back, then writes.
      const again = await (await open(path)).commit(instant, metadata);
      const retried = readdirSync(join(path, '.hoodie/metadata/.hoodie/timeline')).sort();
      assert.ok(retried.includes(`${instant}_${again.completionTime}.deltacommit`) && !retried.includes(`${instant}_${result.completionTime}.deltacommit`));
      const rollback = retried.find((name) => /^\d{17}_\d{17}\.rollback$/.test(name));
      assert.ok(rollback !== undefined && rollback > instant, retried.join(', '));
      const rollbackPath = join(path, '.hoodie/metadata/.hoodie/timeline', rollback);
      assert.deepEqual(decodeTimelineAvro('rollbackMetadata', readFileSync(rollbackPath), rollbackPath).commitsRollback, [instant]);
      assert.deepEqual(
        readdirSync(join(path, '.hoodie/metadata/files')).filter((name) => name.includes(`_${instant}.log.`)),
        [fileNameOf(again.logFiles[0]!.path)],
      );
      // Anything but a completed deltacommit at the instant is refused.
      writeFileSync(join(path, '.hoodie/metadata/.hoodie/timeline/20261206120000005_20261206120000006.rollback'), '');
      await assert.rejects((await open(path)).commit('20261206120000005', metadata), /only a completed deltacommit is rolled back/);
    });

    it("refuses a pending deltacommit whose data instant completed (the metadata table misses it), and doctor's check names it", async () => {
      const path = copy(release);
      const mdt = join(path, '.hoodie/metadata/.hoodie/timeline');
      const last = lastDataCommit(path).time;
      rmSync(join(mdt, readdirSync(mdt).find((name) => name.startsWith(`${last}_`))!));
      const untouched = readdirSync(mdt).sort();
      const table = await open(path);
      for (const operation of ['write', 'clean', 'check'] as const) {
        const problems = problemsOf(table, { operation });
        assert.ok(
          problems.some((problem) => problem.includes(`pending deltacommit ${last} of the data table's completed instant`)),
          `${operation}: ${problems.join('; ')}`,
        );
      }
      const metadata: CommitMetadata = { partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' };
      await assert.rejects(table.commit('20261206120000000', metadata), MetadataTableError);
      assert.deepEqual(readdirSync(mdt).sort(), untouched, 'nothing rolled back or written');
    });

    it("rolls back a killed Hudi writer's pending deltacommit before writing its own, as Hudi's commitInternal does", async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const mdt = join(path, '.hoodie/metadata/.hoodie/timeline');
      const { file: lastFile, time: last } = lastDataCommit(path);
      // Killed while its deltacommit was being written: both instants inflight, the deltacommit's log files stored.
      rmSync(join(path, '.hoodie/timeline', lastFile));
      rmSync(join(mdt, readdirSync(mdt).find((name) => name.startsWith(`${last}_`))!));
      const logs = ['files', 'column_stats', 'partition_stats'].flatMap((dir) =>
        readdirSync(join(path, '.hoodie/metadata', dir))
          .filter((name) => name.includes(`_${last}.log.`))
          .map((name) => `${dir}/${name}`),
      );
      assert.ok(logs.length >= 3, logs.join(', '));
      const instants = {
        completedDataInstants: new Set(
          readdirSync(join(path, '.hoodie/timeline'))
            .filter((name) => /^\d{17}_\d{17}\.commit$/.test(name))
            .map((name) => name.slice(0, 17)),
        ),
        pendingDataInstants: new Set([last]),
      };
      const before = await readMetadataTable1x(storage, instants);
      const table = await open(path);
      for (const operation of ['write', 'cluster', 'compact', 'clean'] as const) assert.deepEqual(problemsOf(table, { operation }), [], operation);

      const instant = '20261206120000000';
      const metadata = noChangeUpsert();
      // A fresh metadata-table heartbeat (Hudi 1.1's streaming metadata writes beat): a writer that may be running.
      const beat = join(path, '.hoodie/metadata/.hoodie/.heartbeat', last);
      mkdirSync(join(beat, '..'), { recursive: true });
      writeFileSync(beat, '');
      const untouched = readdirSync(mdt).sort();
      await assert.rejects(
        table.commit(instant, metadata),
        (error: unknown) => error instanceof MetadataTableError && error.message.includes(`deltacommit ${last}`),
      );
      assert.deepEqual(readdirSync(mdt).sort(), untouched, 'nothing written beside a running writer');
      // Expired (older than two beats): the writer is dead.
      const expired = new Date(Date.now() - 10 * 60_000);
      utimesSync(beat, expired, expired);

      const result = await table.commit(instant, metadata);
      const timeline = readdirSync(mdt).sort();
      assert.ok(!timeline.some((name) => name.startsWith(last)), `${last} left the metadata table: ${timeline.join(', ')}`);
      assert.ok(timeline.includes(`${instant}_${result.completionTime}.deltacommit`));
      const rollbacks = timeline.filter((name) => /^\d{17}_\d{17}\.rollback$/.test(name));
      assert.equal(rollbacks.length, 1, timeline.join(', '));
      const rollbackTime = rollbacks[0]!.slice(0, 17);
      assert.ok(rollbackTime > last, 'a new instant');
      const planPath = join(mdt, `${rollbackTime}.rollback.requested`);
      const plan = decodeTimelineAvro('rollbackPlan', readFileSync(planPath), planPath);
      assert.deepEqual(plan.instantToRollback, { commitTime: last, action: 'deltacommit' });
      assert.deepEqual(
        plan.RollbackRequests?.flatMap((request) => request.filesToBeDeleted).sort(),
        logs.map((log) => join(path, '.hoodie/metadata', log)).sort(),
      );
      const rollbackPath = join(mdt, rollbacks[0]!);
      assert.deepEqual(decodeTimelineAvro('rollbackMetadata', readFileSync(rollbackPath), rollbackPath).commitsRollback, [last]);
      for (const log of logs) assert.ok(!existsSync(join(path, '.hoodie/metadata', log)), `${log} deleted`);
      // Its blocks never counted (not completed); they still do not.
      const after = await readMetadataTable1x(storage, instants);
      for (const partition of ['column_stats', 'partition_stats'] as const)
        assert.deepEqual(after.partitions.get(partition), before.partitions.get(partition), partition);
    });

    it('finishes a pending rollback of a deltacommit first, and refuses by name the pending instants Hudi finishes itself', async () => {
      const path = copy(release);
      const mdt = join(path, '.hoodie/metadata/.hoodie/timeline');
      const { file: dataCommit, time: last } = lastDataCommit(path);
      // A data rollback of `last` killed just after its metadata-table rollback plan.
      rmSync(join(path, '.hoodie/timeline', dataCommit));
      const logs = ['files', 'column_stats', 'partition_stats'].flatMap((dir) =>
        readdirSync(join(path, '.hoodie/metadata', dir))
          .filter((name) => name.includes(`_${last}.log.`))
          .map((name) => ({ dir, file: join(path, '.hoodie/metadata', dir, name) })),
      );
      const plan = (commitTime: string, action: string) =>
        encodeTimelineAvro('rollbackPlan', {
          instantToRollback: { commitTime, action },
          RollbackRequests: logs.map(({ dir, file }) => ({
            partitionPath: dir,
            fileId: '',
            latestBaseInstant: '',
            filesToBeDeleted: [file],
            logBlocksToBeDeleted: {},
          })),
          version: 1,
        });
      writeFileSync(join(mdt, '20261206110000000.rollback.requested'), plan(last, 'deltacommit'));
      assert.deepEqual(problemsOf(await open(path), { operation: 'write' }), []);
      const metadata = noChangeUpsert();
      await (await open(path)).commit('20261206120000000', metadata);
      const timeline = readdirSync(mdt);
      assert.ok(
        timeline.some((name) => /^20261206110000000_\d{17}\.rollback$/.test(name)),
        timeline.join(', '),
      );
      assert.ok(!timeline.some((name) => name.startsWith(last)));
      assert.equal(timeline.filter((name) => /\.rollback$/.test(name)).length, 1, 'no second rollback');
      for (const { file } of logs) assert.ok(!existsSync(file), `${file} deleted`);

      // What Hudi's metadata writer finishes itself before its deltacommit stays refused, named with the Spark fix.
      const refused = async (file: string, contents: Uint8Array | string, pattern: RegExp) => {
        writeFileSync(join(mdt, file), contents);
        const table = await open(path);
        assert.match(problemsOf(table, { operation: 'write' }).join('\n'), pattern);
        assert.throws(
          () => table.assertMaintainable('writing', { operation: 'write' }),
          (error: unknown) => error instanceof MetadataTableError && /run one Spark write on the table/.test(error.fix ?? ''),
        );
        const before = readdirSync(mdt).sort();
        await assert.rejects(table.commit('20261206130000000', metadata), MetadataTableError);
        assert.deepEqual(readdirSync(mdt).sort(), before, 'nothing written');
        rmSync(join(mdt, file));
      };
      await refused('20261206120500000.compaction.requested', '', /pending compaction 20261206120500000.*runPendingTableServicesOperations/);
      await refused('20261206120500000.clean.requested', '', /pending clean 20261206120500000/);
      await refused('20261206120500000.logcompaction.requested', '', /pending logcompaction 20261206120500000/);
      await refused(
        '20261206120500000.rollback.requested',
        plan('20261206120400000', 'commit'),
        /pending rollback 20261206120500000 \(of commit 20261206120400000\)/,
      );
      await refused('20261206120500000.rollback.inflight', '', /pending rollback 20261206120500000 \(no plan\)/);
    });

    it('mirrors a clustering: files gains the output, column_stats indexes it, partition_stats spans the inputs too', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const data = await HudiTable.open(storage);
      const instants = { completedDataInstants: new Set(data.timeline.completed().map((i) => i.time)), pendingDataInstants: new Set<string>() };
      const before = await readMetadataTable1x(storage, instants);
      const stats = [...before.partitions.get('column_stats')!.values()].flatMap((r) => (r.type === 3 ? [r.columnStats] : []));
      // The fixture keeps no data files: the partition's base files stand in empty (only their names are listed).
      const listing = before.partitions.get('files')!.get('p0');
      assert.ok(listing?.type === 2);
      const inputs = [...new Set(stats.map((s) => s.fileName!).filter((name) => listing.files.has(name)))];
      assert.equal(inputs.length, 2, 'two slices of one file group in p0');
      mkdirSync(join(path, 'p0'));
      for (const name of inputs) writeFileSync(join(path, 'p0', name), '');
      const latestInput = inputs.sort().at(-1)!;
      const inputGroup = latestInput.slice(0, latestInput.indexOf('_'));
      assert.ok(inputs.every((name) => name.startsWith(`${inputGroup}_`)));

      const instant = '20261206120000000';
      const output = `aaaaaaaa-0000-0000-0000-000000000000-0_0-1-0_${instant}.parquet`;
      await duckdb(
        `COPY (SELECT '${instant}' AS _hoodie_commit_time, '${instant}_0_' || i AS _hoodie_commit_seqno, CAST(i AS VARCHAR) AS _hoodie_record_key,
           'p0' AS _hoodie_partition_path, '${output}' AS _hoodie_file_name, CAST(i AS BIGINT) AS id, 'n' || i AS name, CAST(1 AS BIGINT) AS ts,
           DATE '2024-01-01' + CAST(i AS INTEGER) AS d, CAST(i AS DECIMAL(10,2)) AS amount, 'p0' AS dt FROM range(100, 103) t(i))
         TO '${join(path, 'p0', output)}' (FORMAT PARQUET)`,
      );
      const metadata: CommitMetadata = {
        partitionToWriteStats: {
          p0: [
            newWriteStat({
              fileId: output.slice(0, output.indexOf('_')),
              path: `p0/${output}`,
              partitionPath: 'p0',
              numWrites: 3,
              numInserts: 3,
              fileSizeInBytes: statSync(join(path, 'p0', output)).size,
            }),
          ],
        },
        compacted: false,
        extraMetadata: { schema: (await latestCommitSchema(storage, data.timeline))! },
        operationType: 'CLUSTER',
        partitionToReplaceFileIds: { p0: [inputGroup] },
      };
      const result = await (await open(path)).commit(instant, metadata);
      assert.deepEqual(new Set(result.logFiles.map((log) => log.partition)), new Set(['files', 'column_stats', 'partition_stats']));

      const after = await readMetadataTable1x(storage, { ...instants, completedDataInstants: new Set([...instants.completedDataInstants, instant]) });
      const files = after.partitions.get('files')!.get('p0');
      assert.ok(files?.type === 2 && files.files.has(output) && inputs.every((name) => files.files.has(name)), 'the replaced group stays listed until a clean');
      const idStats = (fileName: string, records = after.partitions.get('column_stats')!) =>
        [...records.values()].find((r) => r.type === 3 && r.columnStats.fileName === fileName && r.columnStats.columnName === 'id');
      const outputStats = idStats(output);
      assert.ok(outputStats?.type === 3 && outputStats.columnStats.valueCount === 3);
      const inputStats = idStats(latestInput);
      assert.ok(inputStats?.type === 3);
      // Hudi computes a replacecommit's partition stats while it is pending: its input file groups still count.
      const partitionStats = [...after.partitions.get('partition_stats')!.values()].find(
        (r) => r.type === 6 && r.columnStats.fileName === 'p0' && r.columnStats.columnName === 'id',
      );
      assert.ok(partitionStats?.type === 6);
      assert.equal(partitionStats.columnStats.valueCount, 3 + inputStats.columnStats.valueCount!);
      assert.equal(partitionStats.columnStats.isTightBound, true);
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
      const clean = oneCleanMetadata('20261206120000000', partition, [name]);
      const result = await (await open(path)).commitClean('20261206120000000', clean, { tableSchema: () => latestCommitSchema(storage, data.timeline) });
      assert.deepEqual(new Set(result.logFiles.map((log) => log.partition)), new Set(['column_stats', 'files']));
      const after = await readMetadataTable1x(storage, instants);
      const files = after.partitions.get('files')!.get(partition);
      assert.ok(files?.type === 2 && !files.files.has(name), `${name} left files`);
      assert.deepEqual(statsOf(after), []);
    });

    it('refuses, before anything is written, a commit indexing a column its release stores a value type for that we cannot give', async () => {
      const path = copy(release);
      const storage = new LocalStorage(path);
      const data = await HudiTable.open(storage);
      const before = readdirSync(join(path, '.hoodie/timeline')).sort();
      const schema = JSON.parse((await latestCommitSchema(storage, data.timeline))!) as { fields: unknown[] };
      const first = (schema.fields[0] as { name: string }).name;
      const withTypes = JSON.stringify({
        ...schema,
        fields: [
          ...schema.fields,
          { name: 't', type: ['null', { type: 'long', logicalType: 'time-micros' }], default: null },
          { name: 'u', type: ['null', { type: 'fixed', name: 'u', size: 16, logicalType: 'uuid' }], default: null },
        ],
      });
      await assertMetadataTableKeepable(storage, 'a clustering', new Map(), undefined, 'cluster');
      const write = (properties: Map<string, string>, operation: 'write' | 'clean' = 'write') =>
        keepMetadataTable(storage, properties, operation).prepare('a write', withTypes);
      if (release === '1.0.2') {
        await write(new Map());
        return; // index version 1 stores no value type
      }
      const refusal = await write(new Map()).then(
        () => assert.fail('refused'),
        (error: unknown) => error,
      );
      assert.ok(refusal instanceof MetadataTableError, String(refusal));
      assert.match(refusal.message, /column t \("?\{?.*time-micros.*\), column u \(.*uuid.*\) has a type this build gives no column-stats value type/);
      assert.match(refusal.fix ?? '', /hoodie\.metadata\.index\.column\.stats\.column\.list .* without t, u/);
      await write(new Map([['hoodie.metadata.index.column.stats.column.list', first]]));
      await write(new Map(), 'clean');
      assert.deepEqual(readdirSync(join(path, '.hoodie/timeline')).sort(), before, 'nothing written');
    });
  });
}
