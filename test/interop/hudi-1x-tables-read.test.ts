/**
 * Tables that Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, read by us as Spark with that release
 * reads them (Spark 3.5.1, one JVM per release): snapshot, read-optimized and as of every completed write on the
 * active timeline, every column including the `_hoodie_*` ones, with the metadata table on (1.x's default).
 *
 * Copy-on-write: an insert, an upsert, a delete, a clustering (replacecommit), an upsert. Merge-on-read
 * (EVENT_TIME_ORDERING, the default with an ordering field): an insert into base files, upserts and a delete into
 * log files, one upsert ordered before the stored record, a compaction, a compaction left pending with an upsert
 * after it (its log joins the pending compaction's slice by completion time). Merge-on-read with
 * COMMIT_TIME_ORDERING: the later write wins whatever its ordering value. Then a write service refuses a
 * merge-on-read table before it writes anything, and `status` reads it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { type QueryType, readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { propertiesFile, runCli } from '../helpers/cli.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xRows, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { tableFiles, tempDir } from '../helpers/paths.js';

interface ReadOptions {
  asOf?: string;
  queryType?: QueryType;
}

async function ours(path: string, options: ReadOptions): Promise<Row[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(path)), { ...options, includeMetaFields: true })).rows;
}

async function spark(hudi: HudiHarness, path: string, options: ReadOptions): Promise<Row[]> {
  const read = {
    'hoodie.metadata.enable': 'true',
    ...(options.asOf === undefined ? {} : { 'as.of.instant': options.asOf }),
    ...(options.queryType === undefined ? {} : { 'hoodie.datasource.query.type': options.queryType }),
  };
  return (await hudi.read(path, { options: read })).rows;
}

/** Our rows equal Spark's (all columns); returns them by id → name. */
async function sameAsSpark(hudi: HudiHarness, path: string, options: ReadOptions = {}): Promise<Map<number, string>> {
  const [mine, theirs] = [await ours(path, options), await spark(hudi, path, options)];
  assert.deepEqual(canonicalRows(mine), canonicalRows(theirs), `${path} ${JSON.stringify(options)}`);
  return new Map(mine.map((row) => [Number(row['id']), String(row['name'])]));
}

async function completedWrites(path: string): Promise<string[]> {
  return (await HudiTable.open(openStorage(path))).timeline.completedWrites().map((instant) => instant.time);
}

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`tables Hudi ${version} wrote (table version ${tableVersion}), read as Spark reads them`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-read-`);
    const cow = join(root, 'cow');
    const mor = join(root, 'mor');
    const morCommitTime = join(root, 'mor_commit_time');
    const write = (path: string, options: Record<string, string>, operation: string, ids: number[], at: number) =>
      hudi.write(path, { schema: HUDI_1X_SCHEMA, rows: hudi1xRows(ids, at), options: { ...options, 'hoodie.datasource.write.operation': operation } });

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      const cowOptions = hudi1xWriteOptions('cow', 'COPY_ON_WRITE');
      await write(cow, cowOptions, 'insert', [1, 2, 3, 4, 5, 6], 1);
      await write(cow, cowOptions, 'upsert', [2, 3, 7], 2);
      await write(cow, cowOptions, 'delete', [4], 3);
      await hudi.sql(`CALL run_clustering(path => '${cow}', op => 'scheduleAndExecute')`);
      await write(cow, cowOptions, 'upsert', [1, 8], 4);

      const morOptions = { ...hudi1xWriteOptions('mor', 'MERGE_ON_READ'), 'hoodie.compact.inline': 'false' };
      await write(mor, morOptions, 'insert', [1, 2, 3, 4, 5, 6], 5);
      await write(mor, morOptions, 'upsert', [2, 3, 7], 6);
      await write(mor, morOptions, 'delete', [4], 7);
      // Ordered before the stored records (ts 1 < 5 and 6): event time keeps the stored ones.
      await write(mor, morOptions, 'upsert', [2, 5], 1);
      await hudi.sql(`CALL run_compaction(op => 'scheduleAndExecute', path => '${mor}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
      await write(mor, morOptions, 'upsert', [1, 6], 8);
      await hudi.sql(`CALL run_compaction(op => 'schedule', path => '${mor}', options => 'hoodie.compact.inline.max.delta.commits=1')`);
      await write(mor, morOptions, 'upsert', [3, 9], 9);
      await write(mor, morOptions, 'delete', [5], 10);

      // No ordering field: COMMIT_TIME_ORDERING, which Hudi refuses beside a precombine field.
      const { 'hoodie.datasource.write.precombine.field': _ordering, ...withoutOrdering } = hudi1xWriteOptions('mor_commit_time', 'MERGE_ON_READ');
      const commitTimeOptions = { ...withoutOrdering, 'hoodie.record.merge.mode': 'COMMIT_TIME_ORDERING' };
      await write(morCommitTime, commitTimeOptions, 'insert', [1, 2, 3, 4], 5);
      await write(morCommitTime, commitTimeOptions, 'upsert', [1, 2], 1);
      await write(morCommitTime, commitTimeOptions, 'upsert', [2, 3], 0);
      await write(morCommitTime, commitTimeOptions, 'delete', [4], 0);
    });
    after(async () => {
      await hudi?.close();
    });

    it(`writes table version ${tableVersion} with timeline layout 2`, async () => {
      for (const path of [cow, mor, morCommitTime]) {
        const table = await HudiTable.open(openStorage(path));
        assert.equal(table.config.version, tableVersion);
        assert.equal(table.layout.version, 2);
        assert.equal(table.layout.folder, '.hoodie/timeline');
      }
    });

    it('copy-on-write: snapshot', async () => {
      const rows = await sameAsSpark(hudi, cow);
      assert.deepEqual([...rows.keys()].sort(), [1, 2, 3, 5, 6, 7, 8]);
      assert.equal(rows.get(1), 'v4-1');
    });

    it('copy-on-write: read-optimized', async () => {
      await sameAsSpark(hudi, cow, { queryType: 'read_optimized' });
    });

    it('copy-on-write: as of every completed write', async () => {
      const times = await completedWrites(cow);
      assert.ok(times.length >= 5, times.join());
      for (const asOf of times) await sameAsSpark(hudi, cow, { asOf });
    });

    it('merge-on-read (event time): snapshot', async (t) => {
      const rows = await sameAsSpark(hudi, mor);
      assert.deepEqual([...rows.keys()].sort(), [1, 2, 3, 6, 7, 9]);
      assert.equal(rows.get(3), 'v9-3', 'the log written after the compaction was requested reads');
      // 1.1.1 keeps the stored record against the upsert ordered before it; 1.0.2's compaction had taken the upsert.
      t.diagnostic(`id 2 reads ${rows.get(2)}`);
    });

    it('merge-on-read (event time): read-optimized', async () => {
      await sameAsSpark(hudi, mor, { queryType: 'read_optimized' });
    });

    it('merge-on-read (event time): as of every completed write', async () => {
      const times = await completedWrites(mor);
      assert.ok(times.length >= 7, times.join());
      for (const asOf of times) await sameAsSpark(hudi, mor, { asOf });
    });

    it('merge-on-read (commit time): snapshot, read-optimized and as of every completed write', async () => {
      const table = await HudiTable.open(openStorage(morCommitTime));
      assert.equal(table.config.recordMergeMode, 'COMMIT_TIME_ORDERING');
      const rows = await sameAsSpark(hudi, morCommitTime);
      assert.equal(rows.get(2), 'v0-2', 'the later write wins whatever its ordering value');
      assert.equal(rows.has(4), false);
      await sameAsSpark(hudi, morCommitTime, { queryType: 'read_optimized' });
      for (const asOf of await completedWrites(morCommitTime)) await sameAsSpark(hudi, morCommitTime, { asOf });
    });

    it('the CLI reads it (read, --query-type, --as-of) and status reports it', async () => {
      const read = runCli(['read', mor, '--meta']);
      assert.equal(read.code, 0, read.stderr);
      assert.equal(read.stdout.trim().split('\n').length, 6);
      const readOptimized = runCli(['read', mor, '--query-type', 'read_optimized']);
      assert.equal(readOptimized.code, 0, readOptimized.stderr);
      const [first] = await completedWrites(mor);
      const asOf = runCli(['read', mor, '--as-of', first!]);
      assert.equal(asOf.code, 0, asOf.stderr);
      assert.equal(asOf.stdout.trim().split('\n').length, 6, 'as of the insert: its six rows');
      const status = runCli(['status', mor, '--json']);
      assert.equal(status.code, 0, status.stderr);
      const report = JSON.parse(status.stdout) as { pending: { action: string }[]; partitions: { files: number }[] };
      assert.deepEqual(
        report.pending.map((instant) => instant.action),
        ['compaction'],
      );
      assert.ok(report.partitions.length === 2);
    });

    it('a write service refuses the table before writing anything, naming its version or its metadata table', () => {
      // The writer, the cleaner and clustering keep a 1.x copy-on-write table's metadata table
      // (test/interop/hudi-1x-metadata-writes.test.ts, hudi-1x-metadata-clustering.test.ts); the writer, the cleaner
      // the archiver and clustering also merge-on-read ones (hudi-1x-mor-writer.test.ts, hudi-1x-mor-services.test.ts,
      // hudi-1x-mor-clustering.test.ts). Compaction keeps a merge-on-read table's metadata table (hudi-1x-compaction.test.ts),
      // but this one has a compaction Spark scheduled: a second one beside it is refused (partition stats over its empty slices).
      for (const [path, args, refusal] of [
        [
          mor,
          ['cluster', mor, '--mode', 'scheduleAndExecute', '--props', propertiesFile(hudi1xWriteOptions('mor', 'MERGE_ON_READ'))],
          /compaction \d{17} is pending: Hudi's partition stats then cover the empty file slices it starts/,
        ],
        [mor, ['compact', mor, '--mode', 'scheduleAndExecute'], /compaction \d{17} is pending beside the one to schedule/],
      ] as const) {
        const before = tableFiles(path);
        const run = runCli([...args]);
        assert.notEqual(run.code, 0, `${args.join(' ')} should refuse`);
        assert.match(run.stderr, refusal, args.join(' '));
        assert.deepEqual(tableFiles(path), before, `${args.join(' ')} left the table as it was`);
      }
    });
  });
}
