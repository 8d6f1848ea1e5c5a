/**
 * Our writer keeps the metadata table of a default Hudi 1.x copy-on-write table (files, column_stats,
 * partition_stats on), judged by Hudi 1.0.2 and 1.1.1 on Spark 3.5.1 (one JVM per release). Spark writes the table;
 * we upsert, insert and delete; after each write Spark reads the same rows as we do with the metadata table on and
 * off, its `hudi_metadata()` equals what our reader-1x reads, `files` lists exactly the committed files in storage,
 * and each deltacommit of ours completed before its data commit; the same after an ingest and after our clean.
 * Failed writes (ours before and after their deltacommit, Spark's) are rolled back with the metadata table as Hudi
 * rolls them back. Spark then writes on top until it compacts its metadata table, and we write again after that
 * (our own compaction: hudi-1x-metadata-services).
 * Clustering: test/interop/hudi-1x-metadata-clustering.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ingestObject, landingBucket } from '../../lib/ingest/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeTimelineAvro } from '../../lib/timeline/avro-files.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { failedWrite, HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xBatchFile, hudi1xRows, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { cleanKeepingLatestCommits } from '../helpers/interop-writer.js';
import { assertDataSkippingAgrees, assertMetadata1xValidated, assertMirroredBefore, listTree } from '../helpers/metadata-1x.js';
import { tableFiles, tempDir } from '../helpers/paths.js';

const OUR_PROPS = new Map([['hoodie.datasource.write.precombine.field', 'ts']]);

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our writer keeps the metadata table of a default Hudi ${version} copy-on-write table (table version ${tableVersion})`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-mdt-writes-`);
    const table = join(root, 'cow');
    const sparkOptions = hudi1xWriteOptions('mdtw', 'COPY_ON_WRITE');
    let batch = 0;

    async function ours(
      operation: WriteOperation,
      ids: number[],
      properties = OUR_PROPS,
      faults: Pick<WriteOptions, 'afterDataFiles' | 'afterMetadataTableWrite'> = {},
    ): Promise<string> {
      batch += 1;
      const input = hudi1xBatchFile(root, ids, batch);
      return (await writeBatch(new LocalStorage(table), { input: { file: input, format: 'jsonl' }, operation, properties, ...faults })).instantTime;
    }

    async function spark(operation: string, ids: number[]): Promise<void> {
      batch += 1;
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows(ids, batch),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': operation },
      });
    }

    const agree = async (step: string) => {
      await assertMetadata1xValidated(hudi, table, step);
    };
    const mirrored = (instant: string) => assertMirroredBefore(table, instant, 'commit');

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      await spark('insert', [1, 2, 3, 4, 5, 6]);
      const props = (await HudiTable.open(new LocalStorage(table))).config;
      assert.equal(props.version, tableVersion);
    });
    after(async () => hudi?.close());

    it('upserts, inserts and deletes keep files, column_stats and partition_stats as Hudi reads them', async () => {
      await agree('Spark insert');
      for (const [operation, ids] of [
        ['upsert', [1, 2, 7]],
        ['insert', [8, 9]],
        ['delete', [3]],
      ] as const) {
        const instant = await ours(operation, [...ids]);
        mirrored(instant);
        await agree(`our ${operation} ${instant}`);
      }
    });

    it("Hudi's validation fails on a copy whose newest base file is gone from storage but still listed", async () => {
      // The validator proves something only if it can fail: the files partition still lists the file, storage not.
      const broken = join(root, 'broken');
      cpSync(table, broken, { recursive: true });
      const written = (name: string) => /_(\d{17})\.parquet$/.exec(name)?.[1] ?? '';
      const newest = listTree(broken)
        .filter((path) => !path.startsWith('.hoodie') && path.endsWith('.parquet'))
        .sort((a, b) => (written(a) < written(b) ? -1 : written(a) > written(b) ? 1 : 0))
        .at(-1);
      assert.ok(newest !== undefined);
      rmSync(join(broken, newest));
      const report = await hudi.validateMetadataTable(broken);
      const name = newest.split('/').at(-1) ?? '';
      assert.equal(report.ok, false);
      assert.equal(report.checks['partitions']?.status, 'passed');
      for (const check of ['latest-file-slices', 'latest-base-files', 'all-file-groups']) {
        assert.equal(report.checks[check]?.status, 'failed', check);
        assert.ok(report.checks[check]?.details.includes(`only in the MDT: `), `${check}: ${report.checks[check]?.details}`);
        assert.ok(report.checks[check]?.details.includes(name), `${check} names ${name}: ${report.checks[check]?.details}`);
      }
    });

    it('an ingest (the S3-event path) keeps it as a write does', async () => {
      batch += 1;
      const landing = tempDir('hudi-1x-mdt-landing-');
      const key = `in/batch-${batch}.jsonl`;
      mkdirSync(join(landing, 'in'));
      const body = `${hudi1xRows([2, 12], batch)
        .map((row) => JSON.stringify(row))
        .join('\n')}\n`;
      writeFileSync(join(landing, key), body);
      const result = await ingestObject({
        source: landingBucket('landing', new LocalStorage(landing)),
        key,
        etag: createHash('md5').update(body).digest('hex'),
        table: new LocalStorage(table),
        tableProperties: new Map([...OUR_PROPS, ['hoodie.datasource.write.operation', 'upsert']]),
        errorPrefix: 'errors/',
      });
      assert.equal(result.outcome, 'ingested');
      assert.ok(result.instantTime !== undefined);
      mirrored(result.instantTime);
      await agree(`our ingest ${result.instantTime}`);
    });

    it('data skipping on our column stats finds the rows Spark finds without it', async () => {
      await assertDataSkippingAgrees(hudi, table, ['id = 7', 'id >= 8', "name = 'v1-4'"]);
    });

    it('our clean keeps it: cleaned files leave files, their column stats get tombstones', async () => {
      const result = await cleanKeepingLatestCommits(table, 1);
      assert.equal(result.outcome, 'cleaned');
      const clean = readdirSync(join(table, '.hoodie/timeline')).find((n) => /^\d{17}_\d{17}\.clean$/.test(n));
      assert.ok(clean !== undefined);
      const instant = clean.slice(0, 17);
      const mdt = readdirSync(join(table, '.hoodie/metadata/.hoodie/timeline')).find((n) => n.startsWith(`${instant}_`) && n.endsWith('.deltacommit'));
      assert.ok(mdt !== undefined && mdt.slice(18, 35) <= clean.slice(18, 35), `${mdt} completed before ${clean}`);
      await agree(`our clean ${instant}`);
    });

    it('failed writes are rolled back with the metadata table as Hudi rolls them back', async () => {
      const metadataFiles = () => tableFiles(join(table, '.hoodie/metadata'));
      const mdtTimeline = () => readdirSync(join(table, '.hoodie/metadata/.hoodie/timeline'));
      const pendingWrites = async () => (await HudiTable.open(new LocalStorage(table))).timeline.pending().map((i) => i.time);
      const rollbacks = () => readdirSync(join(table, '.hoodie/timeline')).filter((name) => /^\d{17}_\d{17}\.rollback$/.test(name));
      // Ours, failed before its deltacommit: rolled back at once; Hudi leaves the metadata table as it is then.
      const untouched = metadataFiles();
      await assert.rejects(ours('upsert', [1, 4], OUR_PROPS, { afterDataFiles: () => Promise.reject(new Error('injected after the data files')) }), /injected/);
      assert.deepEqual(await pendingWrites(), [], 'rolled back at once');
      assert.deepEqual(metadataFiles(), untouched);
      await agree('our failed write rolled back');

      // Ours, failed after its deltacommit completed: rolled back at once, the deltacommit with it by a rollback at
      // the data rollback's time in the metadata table (its plan: T's log files), as Hudi's update(rollback) does.
      let failed = '';
      await assert.rejects(
        ours('upsert', [1, 4], OUR_PROPS, {
          afterMetadataTableWrite: async (what) => {
            if (what !== 'completed') return;
            failed = (await pendingWrites())[0] ?? '';
            throw new Error('injected after the deltacommit');
          },
        }),
        /injected after the deltacommit/,
      );
      assert.deepEqual(await pendingWrites(), [], 'rolled back at once');
      const rollback = rollbacks().sort().at(-1)!.slice(0, 17);
      assert.ok(!mdtTimeline().some((name) => name.startsWith(failed)), `${failed} left the metadata table`);
      const mdtRollback = mdtTimeline().find((name) => name.startsWith(`${rollback}_`) && name.endsWith('.rollback'));
      assert.ok(mdtRollback !== undefined, `a rollback at ${rollback} in the metadata table: ${mdtTimeline().join(', ')}`);
      const planPath = join(table, '.hoodie/metadata/.hoodie/timeline', `${rollback}.rollback.requested`);
      const plan = decodeTimelineAvro('rollbackPlan', readFileSync(planPath), planPath);
      assert.deepEqual(plan.instantToRollback, { commitTime: failed, action: 'deltacommit' });
      assert.deepEqual(new Set(plan.RollbackRequests?.map((request) => request.partitionPath)), new Set(['files', 'column_stats', 'partition_stats']));
      for (const request of plan.RollbackRequests ?? []) {
        assert.equal(request.filesToBeDeleted.length, 1);
        assert.match(request.filesToBeDeleted[0]!, new RegExp(`^${table}/\\.hoodie/metadata/${request.partitionPath}/\\..+_${failed}\\.log\\.1_`));
      }
      await agree(`our failed write ${failed} rolled back with its deltacommit`);

      // Spark's failed write (pre-commit validation): our next write rolls it back as Hudi would, then writes.
      await failedWrite(hudi, table, sparkOptions);
      assert.equal((await pendingWrites()).length, 1);
      const instant = await ours('upsert', [6]);
      assert.deepEqual(await pendingWrites(), []);
      mirrored(instant);
      await agree(`our upsert ${instant} after rolling back Spark's failed write`);
    });

    it('Spark writes on top until it compacts its metadata table, and we write again after', async () => {
      await spark('upsert', [2, 10]);
      await agree('Spark upsert on ours');
      for (let i = 0; i < 3; i++) await spark('upsert', [11 + i]);
      const compactions = readdirSync(join(table, '.hoodie/metadata/.hoodie/timeline')).filter((n) => /^\d+_\d+\.commit$/.test(n));
      assert.ok(compactions.length > 0, 'Spark compacted the metadata table');
      await agree('Spark compacted');
      const instant = await ours('upsert', [1, 11]);
      mirrored(instant);
      await agree(`our upsert ${instant} after the compaction`);
      await spark('upsert', [5]);
      await agree('Spark after us');
    });
  });
}
