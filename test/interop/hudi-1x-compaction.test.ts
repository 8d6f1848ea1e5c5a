/**
 * Our compaction of merge-on-read tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, judged by
 * that release on Spark 3.5.1. Spark writes inserts, upserts and a delete (log files) with the metadata table off;
 * on copies, Spark's `run_compaction` and ours plan the same operations (1.x's plan Avro, missingSchedulePartitions
 * included) at the same trigger; our commit is layout 2's `T_<completion>.commit` that Hudi decodes as a compaction;
 * Spark reads the rows it read before, and the base files hold what Spark's own compaction of a copy holds. Spark
 * keeps writing and compacting on top; our failed compaction is completed by Spark, and Spark's pending one by us;
 * rolled back instead, it gets 1.x's rollback instant and keeps its plan. With Spark's metadata table on (Hudi's
 * defaults), our compaction's deltacommit completes before the commit; Spark reads the same rows with it on and off,
 * `hudi_metadata()` equals what we read, `files` equals storage, column and partition stats equal those of Spark's
 * compaction of a copy (sizes aside), and so after a rollback of a failed one. Metadata table off: dropped first.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactionConfigFrom } from '../../lib/compaction/config.js';
import { executeCompactionOperation, rollbackCompaction, runCompaction, startCompactionRun } from '../../lib/compaction/execute.js';
import { scheduleCompaction } from '../../lib/compaction/schedule.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { MetadataTableError } from '../../lib/errors.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { metadataTableState } from '../../lib/metadata/index.js';
import type { MetadataRecord } from '../../lib/metadata/records.js';
import { runStateMachineLocally } from '../../lib/serverless/local/index.js';
import type { CompactionCommitOutput } from '../../lib/serverless/steps/compaction/steps.js';
import { openStorage } from '../../lib/storage/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import {
  type CompactionOperation,
  type CompactionPlan,
  compactionFolderOf,
  pendingCompactions,
  readCompactionPlan,
} from '../../lib/timeline/compaction-plan.js';
import { jsonLines, propertiesFile, runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xRows, hudi1xWriteOptions, hudiTimelineFacts } from '../helpers/hudi-1x-fixtures.js';
import {
  assertDataSkippingAgrees,
  assertMetadata1xAgrees,
  assertMirroredBefore,
  comparableMetadataRow,
  metadata1xRecords,
  sparkMetadataRow,
} from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';
import { s3TablePath } from '../helpers/s3.js';
import { createLockTable, downloadTable, dropLockTable, ensureBundles, uploadFiles } from '../helpers/serverless.js';
import { ourCanonicalRows } from '../helpers/table-files.js';

process.env['POWERTOOLS_LOG_LEVEL'] ??= 'SILENT';
process.env['POWERTOOLS_METRICS_DISABLED'] ??= 'true';
const DEFINITION = join(REPO_ROOT, 'infra', 'compaction-state-machine.asl.json');

const NO_MDT = { 'hoodie.metadata.enable': 'false' };
const props = (maxDeltaCommits: number, extra: Record<string, string> = {}) =>
  new Map(Object.entries({ 'hoodie.compact.inline.max.delta.commits': String(maxDeltaCommits), ...NO_MDT, ...extra }));

const open = (path: string) => HudiTable.open(new LocalStorage(path));
const lock = (path: string) => new StorageLockProvider(new LocalStorage(path));

async function schedule(path: string, properties: ReadonlyMap<string, string>) {
  return scheduleCompaction(await open(path), compactionConfigFrom(properties, 'test'), { lock: lock(path), properties });
}

async function compact(path: string, instantTime: string, properties: ReadonlyMap<string, string>) {
  return runCompaction(await open(path), instantTime, { lock: lock(path), properties });
}

async function onlyPending(path: string): Promise<{ time: string; plan: CompactionPlan }> {
  const table = await open(path);
  const pending = pendingCompactions(table.timeline);
  assert.equal(pending.length, 1, `one pending compaction in ${path}`);
  return { time: pending[0]!.time, plan: await readCompactionPlan(table.storage, pending[0]!.time, compactionFolderOf(table.layout)) };
}

/** The plan of compaction `time`, pending or done. */
async function planOf(path: string, time: string): Promise<CompactionPlan> {
  const table = await open(path);
  return readCompactionPlan(table.storage, time, compactionFolderOf(table.layout));
}

const timelineFiles = (path: string, suffix: string) =>
  readdirSync(join(path, '.hoodie', 'timeline'))
    .filter((name) => name.endsWith(suffix))
    .sort();

const WITH_MDT = { 'hoodie.metadata.enable': 'true' };

/**
 * column_stats (3) and partition_stats (6) records as comparable text, sizes left out (each writer's Parquet encodes the
 * same rows to its own sizes), the base files of compaction `instant` named by file id only (each side's instant and
 * write token differ).
 */
function statsRecords(records: readonly MetadataRecord[], instant: string): string[] {
  return records
    .filter((record) => record.type === 3 || record.type === 6)
    .map((record) => {
      const row = comparableMetadataRow(sparkMetadataRow(record)) as { key: string; ColumnStatsMetadata: Record<string, unknown> };
      const { totalSize: _size, totalUncompressedSize: _uncompressed, fileName, ...stats } = row.ColumnStatsMetadata;
      const compacted = new RegExp(`^([^_]+)_[^_]+_${instant}\\.parquet$`).exec(String(fileName));
      if (compacted === null) return JSON.stringify({ type: record.type, key: row.key, fileName, ...stats });
      return JSON.stringify({ type: record.type, fileName: `${compacted[1]}_<compaction>.parquet`, ...stats });
    })
    .sort();
}

/** Upload `local` to S3 as `name`, run the compaction state machine there with `properties`, download it into `into`. */
async function serverlessCompaction(
  local: string,
  name: string,
  lockTable: string,
  properties: Record<string, string>,
  into: string,
): Promise<CompactionCommitOutput> {
  const tablePath = await s3TablePath(name);
  const storage = openStorage(tablePath);
  await uploadFiles(local, storage);
  const execution = await runStateMachineLocally(
    { tablePath },
    {
      definitionFile: DEFINITION,
      functionsDir: ensureBundles(),
      retryPauseMs: 20,
      environment: { LOCK_TABLE: lockTable, CLUSTERING_PROPERTIES: JSON.stringify(properties) },
    },
  );
  assert.equal(execution.status, 'SUCCEEDED', `${execution.error}: ${execution.cause}`);
  const output = execution.output as CompactionCommitOutput;
  assert.equal(output.status, 'COMMITTED', JSON.stringify(output));
  await downloadTable(storage, into);
  return output;
}

const sortOps = (ops: readonly CompactionOperation[]) =>
  [...ops].sort((a, b) => `${a.partitionPath}/${a.fileId}`.localeCompare(`${b.partitionPath}/${b.fileId}`));
const withoutFileName = (rows: readonly Row[]) => canonicalRows(rows.map(({ _hoodie_file_name: _name, ...rest }) => rest));

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our compaction of a merge-on-read table Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    let lockTable: string | undefined;
    const root = tempDir(`hudi-${version}-compact-`);
    const source = join(root, 'source');
    let rowsBefore: Row[];
    const write = (path: string, ids: number[], at: number, operation: string, extra: Record<string, string> = NO_MDT) =>
      hudi.write(path, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows(ids, at),
        options: {
          ...hudi1xWriteOptions('mor_compact', 'MERGE_ON_READ'),
          'hoodie.datasource.write.operation': operation,
          'hoodie.clean.automatic': 'false',
          'hoodie.archive.automatic': 'false',
          ...extra,
        },
      });
    const spark = async (path: string, queryType?: 'read_optimized') =>
      (await hudi.read(path, { options: { ...NO_MDT, ...(queryType === undefined ? {} : { 'hoodie.datasource.query.type': queryType }) } })).rows;
    const sparkSchedule = (path: string, maxDeltaCommits: number) =>
      hudi.sql(`CALL run_compaction(op => 'schedule', path => '${path}', options => 'hoodie.compact.inline.max.delta.commits=${maxDeltaCommits}')`);
    const sparkRun = (path: string) => hudi.sql(`CALL run_compaction(op => 'run', path => '${path}')`);

    /** Our compaction of a copy scheduled and crashed: inflight, one operation's base file written, no commit. */
    async function failedAttempt(path: string, properties = props(4)) {
      const scheduled = await schedule(path, properties);
      assert.ok(scheduled);
      const start = await startCompactionRun(await open(path), scheduled.instantTime, undefined, properties);
      const engine = await openParquetEngine();
      try {
        await executeCompactionOperation(await open(path), scheduled.instantTime, 0, {
          engine,
          properties,
          ...(start.plan ? { plan: start.plan } : {}),
        });
      } finally {
        await engine.close();
      }
      return scheduled;
    }

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      // Procedures build their write client from the session's hoodie.* settings: keep the metadata table off.
      await hudi.sql('SET hoodie.metadata.enable=false');
      await write(source, [1, 2, 3, 4, 5, 6], 1, 'insert');
      await write(source, [2, 3], 2, 'upsert');
      await write(source, [4], 3, 'delete');
      await write(source, [1, 5], 4, 'upsert');
      assert.ok(!existsSync(join(source, '.hoodie', 'metadata')), 'no metadata table');
      assert.equal((await open(source)).config.version, tableVersion);
      rowsBefore = await spark(source);
    });

    after(async () => {
      await hudi?.close();
      await dropLockTable(lockTable);
    });

    it("plans what Spark's run_compaction plans on a copy, at the same trigger", async () => {
      const [mine, theirs] = [join(root, 'plan_mine'), join(root, 'plan_theirs')];
      cpSync(source, mine, { recursive: true });
      cpSync(source, theirs, { recursive: true });
      // Four delta commits: neither schedules at five, both at four.
      assert.equal(await schedule(mine, props(5)), undefined);
      await sparkSchedule(theirs, 5);
      assert.deepEqual(timelineFiles(theirs, '.compaction.requested'), []);
      const scheduled = await schedule(mine, props(4));
      assert.ok(scheduled, 'due at four delta commits');
      await sparkSchedule(theirs, 4);
      const their = await onlyPending(theirs);
      assert.deepEqual(timelineFiles(mine, '.compaction.requested'), [`${scheduled.instantTime}.compaction.requested`]);
      const mineRead = await onlyPending(mine);
      assert.deepEqual(sortOps(mineRead.plan.operations), sortOps(their.plan.operations));
      assert.deepEqual({ ...mineRead.plan, operations: [] }, { ...their.plan, operations: [] });
      assert.deepEqual(mineRead.plan.missingSchedulePartitions, [], "1.x's incremental services keep the (empty) list");
      assert.equal(mineRead.plan.operations.length, 2, "both partitions' file groups have log files");
    });

    it('commits a compaction Hudi reads as one; Spark reads the same rows, and the base files hold what its own compaction writes', async () => {
      const [mine, theirs] = [join(root, 'run_mine'), join(root, 'run_theirs')];
      cpSync(source, mine, { recursive: true });
      cpSync(source, theirs, { recursive: true });
      const scheduled = await schedule(mine, props(4));
      assert.ok(scheduled);
      const result = await compact(mine, scheduled.instantTime, props(4));
      assert.equal(result.outcome, 'committed');
      assert.equal(result.writeStats.length, 2);
      const [commit] = timelineFiles(mine, '.commit');
      const named = /^(\d{17})_(\d{17})\.commit$/.exec(commit ?? '');
      assert.ok(named !== null && named[1] === scheduled.instantTime && named[2]! > named[1]!, `layout 2's completed name: ${commit}`);
      assert.deepEqual(timelineFiles(mine, '.compaction.inflight'), [`${scheduled.instantTime}.compaction.inflight`]);
      const facts = await hudiTimelineFacts(hudi, mine);
      const index = facts.instants.findIndex((text) => text.startsWith(`[${scheduled.instantTime}__`) && text.endsWith('__commit__COMPLETED]'));
      assert.ok(index >= 0, `Hudi lists the compaction as a completed commit: ${facts.instants.join(' ')}`);
      const metadata = facts.commits.get(index) as { operationType: string; compacted: boolean; partitionToWriteStats: Record<string, unknown[]> };
      assert.equal(metadata.operationType, 'COMPACT');
      assert.equal(metadata.compacted, true);
      assert.equal(Object.values(metadata.partitionToWriteStats).flat().length, 2);
      assert.ok(!existsSync(join(mine, '.hoodie', '.temp', scheduled.instantTime)), 'no markers left');

      const snapshot = await spark(mine);
      assert.deepEqual(withoutFileName(snapshot), withoutFileName(rowsBefore));
      const ro = await spark(mine, 'read_optimized');
      assert.deepEqual(canonicalRows(ro), canonicalRows(snapshot), 'every file group was compacted: the base files hold the snapshot');
      assert.ok(
        snapshot.every((row) => String(row['_hoodie_file_name']).endsWith(`_${scheduled.instantTime}.parquet`)),
        'records name the new base files',
      );
      assert.deepEqual(await ourCanonicalRows(mine), canonicalRows(snapshot));
      // Spark's compaction of a copy: the same records, commit times and sequence numbers.
      await sparkSchedule(theirs, 4);
      await sparkRun(theirs);
      assert.deepEqual(withoutFileName(await spark(theirs, 'read_optimized')), withoutFileName(ro));
    });

    it('Spark writes and compacts on top of our compaction', async () => {
      const path = join(root, 'on_top');
      cpSync(source, path, { recursive: true });
      const scheduled = await schedule(path, props(4));
      assert.ok(scheduled);
      await compact(path, scheduled.instantTime, props(4));
      await write(path, [1, 6], 5, 'upsert');
      await write(path, [2], 6, 'delete');
      // Spark's trigger counts the delta commits completed after our compaction: two.
      await sparkSchedule(path, 3);
      assert.deepEqual(timelineFiles(path, '.compaction.requested'), [`${scheduled.instantTime}.compaction.requested`]);
      await sparkSchedule(path, 2);
      await sparkRun(path);
      assert.equal(timelineFiles(path, '.commit').length, 2, "ours and Spark's compactions");
      const snapshot = await spark(path);
      assert.equal(snapshot.find((row) => Number(row['id']) === 1)?.['name'], 'v5-1');
      assert.ok(!snapshot.some((row) => Number(row['id']) === 2));
      assert.deepEqual(await ourCanonicalRows(path), canonicalRows(snapshot));
      // And we compact what Spark wrote after its compaction.
      await write(path, [3], 7, 'upsert');
      const next = await schedule(path, props(1));
      assert.ok(next);
      assert.equal((await compact(path, next.instantTime, props(1))).outcome, 'committed');
      const after = await spark(path);
      assert.equal(after.find((row) => Number(row['id']) === 3)?.['name'], 'v7-3');
      assert.deepEqual(canonicalRows(await spark(path, 'read_optimized')), canonicalRows(after));
    });

    it('Spark completes our failed compaction, and we complete the one Spark left pending', async () => {
      const failed = join(root, 'failed_ours');
      cpSync(source, failed, { recursive: true });
      const scheduled = await failedAttempt(failed);
      await sparkRun(failed);
      const commits = timelineFiles(failed, '.commit');
      assert.equal(commits.length, 1);
      assert.ok(commits[0]!.startsWith(`${scheduled.instantTime}_`), `Spark completed our instant: ${commits[0]}`);
      const op = scheduled.plan.operations[0]!;
      const outputs = readdirSync(join(failed, op.partitionPath)).filter(
        (name) => name.startsWith(op.fileId) && name.endsWith(`_${scheduled.instantTime}.parquet`),
      );
      assert.equal(outputs.length, 1, `one base file of the instant for the file group: ${outputs.join(', ')}`);
      assert.deepEqual(withoutFileName(await spark(failed)), withoutFileName(rowsBefore));
      assert.deepEqual(canonicalRows(await spark(failed, 'read_optimized')), canonicalRows(await spark(failed)));

      const theirs = join(root, 'pending_theirs');
      cpSync(source, theirs, { recursive: true });
      await sparkSchedule(theirs, 4);
      const pending = await onlyPending(theirs);
      const result = await compact(theirs, pending.time, props(4));
      assert.equal(result.outcome, 'committed');
      assert.deepEqual(withoutFileName(await spark(theirs)), withoutFileName(rowsBefore));
      assert.deepEqual(canonicalRows(await spark(theirs, 'read_optimized')), canonicalRows(await spark(theirs)));
      await write(theirs, [5], 8, 'upsert');
      assert.equal((await spark(theirs)).find((row) => Number(row['id']) === 5)?.['name'], 'v8-5');
    });

    it('our failed compaction rolled back as Hudi 1.x does (a rollback instant, the plan kept); Spark then runs it and writes on', async () => {
      const path = join(root, 'rolled_back');
      cpSync(source, path, { recursive: true });
      const scheduled = await failedAttempt(path);
      const op = scheduled.plan.operations[0]!;
      const outputs = () => readdirSync(join(path, op.partitionPath)).filter((name) => name.endsWith(`_${scheduled.instantTime}.parquet`));
      assert.equal(outputs().length, 1, 'the failed attempt wrote a base file');
      const rolledBack = await rollbackCompaction(await open(path), scheduled.instantTime, { lock: lock(path) });
      assert.equal(rolledBack.deleted.length, 1);
      assert.deepEqual(outputs(), []);
      const rollback = rolledBack.rollbackInstant;
      assert.ok(rollback !== undefined);
      const completed = timelineFiles(path, '.rollback');
      assert.equal(completed.length, 1);
      assert.match(completed[0]!, new RegExp(`^${rollback}_\\d{17}\\.rollback$`));
      assert.deepEqual(
        timelineFiles(path, '').filter((name) => name.startsWith(scheduled.instantTime)),
        [`${scheduled.instantTime}.compaction.requested`],
      );
      const facts = await hudiTimelineFacts(hudi, path);
      assert.ok(
        facts.instants.some((text) => text.startsWith(`[${rollback}__`) && text.endsWith('__rollback__COMPLETED]')),
        facts.instants.join(' '),
      );
      assert.ok(
        facts.instants.some((text) => text === `[==>${scheduled.instantTime}__compaction__REQUESTED]`),
        facts.instants.join(' '),
      );
      assert.deepEqual(withoutFileName(await spark(path)), withoutFileName(rowsBefore));
      // Rolled back again: nothing pending to roll back any more, nothing written.
      assert.deepEqual((await rollbackCompaction(await open(path), scheduled.instantTime, { lock: lock(path) })).deleted, []);
      assert.equal(timelineFiles(path, '.rollback').length, 1);

      await sparkRun(path);
      assert.ok(
        timelineFiles(path, '.commit').some((name) => name.startsWith(`${scheduled.instantTime}_`)),
        'Spark ran the kept plan',
      );
      assert.deepEqual(withoutFileName(await spark(path)), withoutFileName(rowsBefore));
      assert.deepEqual(canonicalRows(await spark(path, 'read_optimized')), canonicalRows(await spark(path)));
      await write(path, [2, 6], 9, 'upsert');
      assert.equal((await spark(path)).find((row) => Number(row['id']) === 6)?.['name'], 'v9-6');
      assert.deepEqual(await ourCanonicalRows(path), canonicalRows(await spark(path)));
    });

    it('the CLI: show-compaction lists the plan of the 1.x timeline, compact --mode execute commits it', async () => {
      const path = join(root, 'cli');
      cpSync(source, path, { recursive: true });
      const props = propertiesFile({ ...NO_MDT, 'hoodie.compact.inline.max.delta.commits': '4' });
      const scheduled = runCli(['compact', path, '--mode', 'schedule', '--props', props]);
      assert.equal(scheduled.code, 0, scheduled.stderr);
      const shown = runCli(['show-compaction', path, '--json']);
      assert.equal(shown.code, 0, shown.stderr);
      const [plan] = jsonLines(shown.stdout);
      assert.equal((plan?.['operations'] as unknown[] | undefined)?.length, 2, shown.stdout);
      const run = runCli(['compact', path, '--mode', 'execute', '--props', props, '--json']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(timelineFiles(path, '.commit').length, 1);
      assert.deepEqual(withoutFileName(await spark(path)), withoutFileName(rowsBefore));
    });

    it("the serverless compaction (state machine, Lambdas, S3): Spark's plan, layout 2's commit, the rows Spark read before", async () => {
      lockTable = await createLockTable(`hudi-1x-compact-${tableVersion}`);
      const theirs = join(root, 'sls_theirs');
      cpSync(source, theirs, { recursive: true });
      await sparkSchedule(theirs, 4);
      const mine = join(root, 'sls_mine');
      const output = await serverlessCompaction(
        source,
        `hudi-${version.replace(/\./g, '')}-compact-sls`,
        lockTable,
        { ...NO_MDT, 'hoodie.compact.inline.max.delta.commits': '4' },
        mine,
      );
      assert.equal(output.fileGroups, 2);
      assert.ok(
        timelineFiles(mine, '.commit').some((name) => new RegExp(`^${output.instant}_\\d{17}\\.commit$`).test(name)),
        timelineFiles(mine, '').join(', '),
      );
      const [myPlan, theirPlan] = [await planOf(mine, output.instant), (await onlyPending(theirs)).plan];
      assert.deepEqual(sortOps(myPlan.operations), sortOps(theirPlan.operations));
      assert.deepEqual(withoutFileName(await spark(mine)), withoutFileName(rowsBefore));
      assert.deepEqual(canonicalRows(await spark(mine, 'read_optimized')), canonicalRows(await spark(mine)));
    });

    describe("with Spark's metadata table on (Hudi's defaults)", () => {
      const mdtSource = join(root, 'mdt_source');
      let mdtRows: Row[];
      const mdtProps = (maxDeltaCommits: number) => propertiesFile({ 'hoodie.compact.inline.max.delta.commits': String(maxDeltaCommits) });
      /** Spark's procedures take the session's hoodie.* keys: the metadata table on for these cases only. */
      const withSparkMdt = async (body: () => Promise<void>) => {
        await hudi.sql('SET hoodie.metadata.enable=true');
        try {
          await body();
        } finally {
          await hudi.sql('SET hoodie.metadata.enable=false');
        }
      };
      const skipping = ["name = 'v4-1'", 'ts >= 3', "dt = '2024-01-02' and id > 2"];

      before(async () => {
        await write(mdtSource, [1, 2, 3, 4, 5, 6], 1, 'insert', WITH_MDT);
        await write(mdtSource, [2, 3], 2, 'upsert', WITH_MDT);
        await write(mdtSource, [4], 3, 'delete', WITH_MDT);
        await write(mdtSource, [1, 5], 4, 'upsert', WITH_MDT);
        const config = (await open(mdtSource)).config;
        assert.deepEqual([...metadataTableState(config).partitions].sort(), ['column_stats', 'files', 'partition_stats']);
        assert.ok(
          readdirSync(mdtSource, { recursive: true }).some((name) => /\.log\.\d+_/.test(String(name)) && !String(name).startsWith('.hoodie')),
          'log files from the upserts',
        );
        mdtRows = await spark(mdtSource);
      });

      it("our `compact --mode scheduleAndExecute` writes the deltacommit Hudi's own compaction writes; Spark writes and compacts on top", async () => {
        const [mine, theirs] = [join(root, 'mdt_mine'), join(root, 'mdt_theirs')];
        cpSync(mdtSource, mine, { recursive: true });
        cpSync(mdtSource, theirs, { recursive: true });
        const run = runCli(['compact', mine, '--mode', 'scheduleAndExecute', '--props', mdtProps(4), '--json']);
        assert.equal(run.code, 0, run.stderr);
        const [output] = jsonLines(run.stdout) as [{ runs: { instantTime: string; outcome: string; files: string[] }[] }];
        const [ours] = output.runs;
        assert.ok(ours !== undefined && ours.outcome === 'committed' && ours.files.length === 2, run.stdout);
        assert.ok(existsSync(join(mine, '.hoodie', 'metadata')), 'the metadata table kept');
        assertMirroredBefore(mine, ours.instantTime, 'commit');
        const records = await assertMetadata1xAgrees(hudi, mine, `our compaction ${ours.instantTime}`);
        assert.deepEqual(withoutFileName(await spark(mine)), withoutFileName(mdtRows));
        assert.deepEqual(canonicalRows(await spark(mine, 'read_optimized')), canonicalRows(await spark(mine)));
        await assertDataSkippingAgrees(hudi, mine, skipping);

        let theirInstant = '';
        await withSparkMdt(async () => {
          await sparkSchedule(theirs, 4);
          theirInstant = (await onlyPending(theirs)).time;
          await sparkRun(theirs);
        });
        assert.deepEqual(sortOps((await planOf(mine, ours.instantTime)).operations), sortOps((await planOf(theirs, theirInstant)).operations));
        assert.deepEqual(
          statsRecords(records, ours.instantTime),
          statsRecords(await metadata1xRecords(theirs), theirInstant),
          "column and partition stats of ours and of Hudi's compaction",
        );

        await write(mine, [1, 6], 5, 'upsert', WITH_MDT);
        await write(mine, [2], 6, 'delete', WITH_MDT);
        await assertMetadata1xAgrees(hudi, mine, 'Spark writes on our compaction');
        await withSparkMdt(async () => {
          await sparkSchedule(mine, 2);
          await sparkRun(mine);
        });
        assert.equal(timelineFiles(mine, '.commit').length, 2, "ours and Spark's compactions");
        await assertMetadata1xAgrees(hudi, mine, "Spark's compaction on top");
        const after = await spark(mine);
        assert.equal(after.find((row) => Number(row['id']) === 1)?.['name'], 'v5-1');
        assert.ok(!after.some((row) => Number(row['id']) === 2));
        await assertDataSkippingAgrees(hudi, mine, skipping);
      });

      it('we execute the compaction Spark scheduled (`compact --mode execute`), logs Spark wrote after it joining its slices', async () => {
        const [path, theirs] = [join(root, 'mdt_spark_plan'), join(root, 'mdt_spark_plan_theirs')];
        cpSync(mdtSource, path, { recursive: true });
        await withSparkMdt(() => sparkSchedule(path, 4).then(() => undefined));
        const pending = await onlyPending(path);
        // Completed after the compaction instant: these log files join the slices it starts, so its partition stats count them.
        await write(path, [3, 5], 7, 'upsert', WITH_MDT);
        cpSync(path, theirs, { recursive: true });
        const run = runCli(['compact', path, '--mode', 'execute', '--props', mdtProps(4), '--json']);
        assert.equal(run.code, 0, run.stderr);
        assertMirroredBefore(path, pending.time, 'commit');
        const records = await assertMetadata1xAgrees(hudi, path, `our run of Spark's compaction ${pending.time}`);
        await withSparkMdt(() => sparkRun(theirs).then(() => undefined));
        assert.deepEqual(
          statsRecords(records, pending.time),
          statsRecords(await metadata1xRecords(theirs), pending.time),
          "column and partition stats of ours and of Hudi's run of the same plan",
        );
        assert.deepEqual(withoutFileName(await spark(path)), withoutFileName(await spark(theirs)));
        assert.equal((await spark(path)).find((row) => Number(row['id']) === 5)?.['name'], 'v7-5');
        await write(path, [1], 8, 'upsert', WITH_MDT);
        await assertMetadata1xAgrees(hudi, path, 'Spark upsert on top');
      });

      it('the serverless compaction (state machine, Lambdas, S3) keeps it the same way', async () => {
        const mdtLockTable = await createLockTable(`hudi-1x-compact-mdt-${tableVersion}`);
        try {
          const mine = join(root, 'mdt_sls_mine');
          const output = await serverlessCompaction(
            mdtSource,
            `hudi-${version.replace(/\./g, '')}-compact-mdt-sls`,
            mdtLockTable,
            { 'hoodie.compact.inline.max.delta.commits': '4' },
            mine,
          );
          assert.equal(output.fileGroups, 2);
          assertMirroredBefore(mine, output.instant, 'commit');
          await assertMetadata1xAgrees(hudi, mine, `our serverless compaction ${output.instant}`);
          assert.deepEqual(withoutFileName(await spark(mine)), withoutFileName(mdtRows));
        } finally {
          await dropLockTable(mdtLockTable);
        }
      });

      it('our failed compaction rolled back as Hudi 1.x does, the metadata table kept equal to storage; run again, Spark writes on', async () => {
        const on = new Map([['hoodie.compact.inline.max.delta.commits', '4']]);
        const mdtTimeline = (path: string) => readdirSync(join(path, '.hoodie', 'metadata', '.hoodie', 'timeline')).sort();
        const keptPlan = (path: string, instant: string) =>
          assert.deepEqual(
            timelineFiles(path, '').filter((name) => name.startsWith(instant)),
            [`${instant}.compaction.requested`],
          );

        // Crashed while writing: a base file of the instant, nothing in the metadata table yet (Hudi leaves it alone).
        const early = join(root, 'mdt_rolled_back_early');
        cpSync(mdtSource, early, { recursive: true });
        const mdtBefore = mdtTimeline(early);
        const scheduled = await failedAttempt(early, on);
        const rolledBack = await rollbackCompaction(await open(early), scheduled.instantTime, { lock: lock(early) });
        assert.equal(rolledBack.deleted.length, 1);
        assert.ok(rolledBack.rollbackInstant !== undefined);
        assert.ok(timelineFiles(early, '.rollback').some((name) => name.startsWith(`${rolledBack.rollbackInstant}_`)));
        keptPlan(early, scheduled.instantTime);
        assert.deepEqual(mdtTimeline(early), mdtBefore, 'nothing of the compaction in the metadata table, nothing written to it');
        const facts = await hudiTimelineFacts(hudi, early);
        assert.ok(facts.instants.includes(`[==>${scheduled.instantTime}__compaction__REQUESTED]`), facts.instants.join(' '));
        assert.deepEqual(withoutFileName(await spark(early)), withoutFileName(mdtRows));
        await assertMetadata1xAgrees(hudi, early, `rollback ${rolledBack.rollbackInstant} of a compaction that crashed writing`);
        assert.equal((await compact(early, scheduled.instantTime, on)).outcome, 'committed');
        assertMirroredBefore(early, scheduled.instantTime, 'commit');
        await assertMetadata1xAgrees(hudi, early, `our compaction ${scheduled.instantTime} run again`);
        await write(early, [2, 6], 9, 'upsert', WITH_MDT);
        assert.equal((await spark(early)).find((row) => Number(row['id']) === 6)?.['name'], 'v9-6');
        await assertMetadata1xAgrees(hudi, early, 'Spark upserts on top');

        // Crashed between the metadata table's deltacommit and the commit (staged by taking the commit's completed
        // file away): the deltacommit is rolled back in the metadata table at the rollback's instant, as Hudi does.
        const late = join(root, 'mdt_rolled_back_late');
        cpSync(mdtSource, late, { recursive: true });
        const again = await schedule(late, on);
        assert.ok(again);
        assert.equal((await compact(late, again.instantTime, on)).outcome, 'committed');
        const commit = timelineFiles(late, '.commit').find((name) => name.startsWith(`${again.instantTime}_`));
        assert.ok(commit !== undefined);
        rmSync(join(late, '.hoodie', 'timeline', commit));
        assert.ok(mdtTimeline(late).some((name) => name.startsWith(`${again.instantTime}_`) && name.endsWith('.deltacommit')));
        const lateRollback = await rollbackCompaction(await open(late), again.instantTime, { lock: lock(late) });
        assert.equal(lateRollback.deleted.length, 2);
        keptPlan(late, again.instantTime);
        assert.ok(
          mdtTimeline(late).some((name) => name.startsWith(`${lateRollback.rollbackInstant}_`) && name.endsWith('.rollback')),
          mdtTimeline(late).join(', '),
        );
        assert.ok(!mdtTimeline(late).some((name) => name.startsWith(again.instantTime)), 'the deltacommit rolled back');
        assert.deepEqual(withoutFileName(await spark(late)), withoutFileName(mdtRows));
        await assertMetadata1xAgrees(hudi, late, `rollback ${lateRollback.rollbackInstant} of a compaction mirrored but not committed`);
        await withSparkMdt(() => sparkRun(late).then(() => undefined));
        assert.ok(
          timelineFiles(late, '.commit').some((name) => name.startsWith(`${again.instantTime}_`)),
          'Spark ran the kept plan',
        );
        await assertMetadata1xAgrees(hudi, late, `Spark's run of ${again.instantTime}`);
        await write(late, [3], 9, 'upsert', WITH_MDT);
        assert.equal((await spark(late)).find((row) => Number(row['id']) === 3)?.['name'], 'v9-3');
        await assertMetadata1xAgrees(hudi, late, 'Spark upserts on top');
      });

      it('refuses a second compaction beside a pending one by name, before writing anything', async () => {
        const path = join(root, 'mdt_two_pending');
        cpSync(mdtSource, path, { recursive: true });
        await withSparkMdt(() => sparkSchedule(path, 4).then(() => undefined));
        const before = timelineFiles(path, '');
        await assert.rejects(
          schedule(path, new Map([['hoodie.compact.inline.max.delta.commits', '1']])),
          (error: unknown) => error instanceof MetadataTableError && /compaction \d{17} is pending beside the one to schedule/.test(error.message),
        );
        assert.deepEqual(timelineFiles(path, ''), before, 'nothing written');
      });
    });

    it("drops Hudi's metadata table first with hoodie.metadata.enable=false, and Spark rebuilds it", async () => {
      const path = join(root, 'with_mdt');
      const on = { 'hoodie.metadata.enable': 'true' };
      await write(path, [1, 2, 3, 4], 1, 'insert', on);
      await write(path, [1, 2], 2, 'upsert', on);
      assert.ok(existsSync(join(path, '.hoodie', 'metadata')));
      const scheduled = await schedule(path, props(1));
      assert.ok(scheduled);
      const result = await compact(path, scheduled.instantTime, props(1));
      assert.equal(result.metadataTable?.disabled?.deletedMetadataTable, true);
      assert.ok(!existsSync(join(path, '.hoodie', 'metadata')));
      const rows = await spark(path);
      assert.deepEqual(canonicalRows(await spark(path, 'read_optimized')), canonicalRows(rows));
      // Spark's next write with the metadata table on rebuilds it.
      await write(path, [3], 3, 'upsert', on);
      assert.ok(existsSync(join(path, '.hoodie', 'metadata')));
      assert.equal((await hudi.read(path)).rows.find((row) => Number(row['id']) === 3)?.['name'], 'v3-3');
    });
  });
}
