/**
 * Our writer on copy-on-write tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write, judged by that
 * release on Spark 3.5.1 (one JVM per release). Spark writes a table with the metadata table off; we upsert, insert
 * and delete into it, rolling back a failed write of Spark's first (its pending commit) and later one of ours; after
 * each of our commits Spark reads the same rows as we do, now and as of each of our instants; our instant files are
 * layout 2's (Avro commit metadata, completion time in the name, prevBaseFile on updates); then Spark keeps writing,
 * cleaning and clustering on top, and we read what it wrote; a bulk_insert of ours after that.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { decodeCommitMetadataAvro } from '../../lib/timeline/avro-files.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { failedWrite, HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xRows, hudi1xWriteOptions, timelineFiles } from '../helpers/hudi-1x-fixtures.js';
import { tempDir } from '../helpers/paths.js';
import { ourCanonicalRows } from '../helpers/table-files.js';

const NO_MDT = { 'hoodie.metadata.enable': 'false' };
/** Our writes run with the table's own keys, as a user passes them. */
const OUR_PROPS = new Map(Object.entries({ ...NO_MDT, 'hoodie.datasource.write.precombine.field': 'ts' }));

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our writer on a copy-on-write table Hudi ${version} wrote (table version ${tableVersion}), judged by Hudi ${version}`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-writer-`);
    const table = join(root, 'cow');
    const ourInstants: string[] = [];
    const sparkOptions = { ...hudi1xWriteOptions('cow', 'COPY_ON_WRITE'), ...NO_MDT, 'hoodie.clean.automatic': 'false', 'hoodie.archive.automatic': 'false' };

    async function ours(operation: WriteOperation, ids: number[], at: number): Promise<string> {
      const input = join(root, `batch-${at}.jsonl`);
      writeFileSync(
        input,
        `${hudi1xRows(ids, at)
          .map((row) => JSON.stringify(row))
          .join('\n')}\n`,
      );
      const result = await writeBatch(new LocalStorage(table), { input: { file: input, format: 'jsonl' }, operation, properties: OUR_PROPS });
      ourInstants.push(result.instantTime);
      return result.instantTime;
    }

    const ourRows = (asOf?: string): Promise<string[]> => ourCanonicalRows(table, asOf);

    async function sparkRows(asOf?: string): Promise<string[]> {
      return canonicalRows((await hudi.read(table, { options: { ...NO_MDT, ...(asOf === undefined ? {} : { 'as.of.instant': asOf }) } })).rows);
    }

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([1, 2, 3, 4, 5, 6], 1),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': 'insert' },
      });
      await failedWrite(hudi, table, sparkOptions);
    });

    after(async () => {
      await hudi?.close();
    });

    it("rolls back Spark's failed write, then upserts, inserts and deletes as Spark reads them", async () => {
      const completed = (names: string[]) => new Set(names.filter((name) => name.includes('_')).map((name) => name.slice(0, 17)));
      const done = completed(timelineFiles(table));
      const pendingBefore = timelineFiles(table).filter((name) => name.endsWith('.inflight') && !done.has(name.slice(0, 17)));
      assert.equal(pendingBefore.length, 1, `Spark's failed write is pending: ${timelineFiles(table).join(', ')}`);
      await ours('upsert', [1, 2, 7], 2);
      const names = timelineFiles(table);
      assert.ok(!names.includes(pendingBefore[0]!), "Spark's failed write was rolled back");
      assert.ok(
        names.some((name) => /^\d{17}_\d{17}\.rollback$/.test(name)),
        names.join(', '),
      );
      // EVENT_TIME_ORDERING (the table's merge mode): an upsert ordered before the stored record loses to it.
      await ours('upsert', [5], 0);
      await ours('insert', [8, 9], 3);
      await ours('delete', [3], 4);
      const now = await ourRows();
      assert.deepEqual(now, await sparkRows());
      assert.deepEqual(canonicalRows((await hudi.hudiRsRead(table)).rows), now, 'hudi-rs reads our writes as Spark does');
      assert.ok(now.some((row) => row.includes('"v2-1"')) && !now.some((row) => row.includes('"v1-3"')), JSON.stringify(now));
      assert.ok(now.some((row) => row.includes('"v1-5"')) && !now.some((row) => row.includes('"v0-5"')), JSON.stringify(now));
      for (const instant of ourInstants) assert.deepEqual(await ourRows(instant), await sparkRows(instant), `as of ${instant}`);
    });

    it("writes layout 2's instant files: Avro commit metadata, a completion time, prevBaseFile on updates", () => {
      const names = timelineFiles(table);
      assert.equal(ourInstants.length, 4, 'the writes above committed');
      for (const instant of ourInstants) {
        assert.ok(names.includes(`${instant}.commit.requested`) && names.includes(`${instant}.inflight`), instant);
        const completed = names.find((name) => name.startsWith(`${instant}_`) && name.endsWith('.commit'));
        assert.ok(completed !== undefined, `${instant} completed: ${names.join(', ')}`);
        assert.ok(completed.slice(18, 35) > instant, completed);
        const path = join(table, '.hoodie', 'timeline', completed);
        const metadata = decodeCommitMetadataAvro('commit', readFileSync(path), path);
        const stats = Object.values(metadata.partitionToWriteStats ?? {}).flat();
        // The upsert ordered before the stored record changed nothing: its commit names no file (as with 0.x's
        // DefaultHoodieRecordPayload here), every other commit wrote some.
        assert.equal(stats.length > 0, instant !== ourInstants[1], `${completed}: ${stats.length} write stats`);
        for (const stat of stats) {
          if (stat.prevCommit !== 'null') assert.match(stat.prevBaseFile ?? '', /_\d{17}\.parquet$/, `${completed}: ${stat.fileId}`);
        }
        assert.ok(metadata.extraMetadata?.['schema']?.includes('"id"'));
      }
    });

    it('a failed write of ours is rolled back at once, and Spark keeps writing, cleaning and clustering on top', async () => {
      const input = join(root, 'failing.jsonl');
      writeFileSync(
        input,
        `${hudi1xRows([1, 4], 5)
          .map((row) => JSON.stringify(row))
          .join('\n')}\n`,
      );
      const before = await sparkRows();
      await assert.rejects(
        writeBatch(new LocalStorage(table), {
          input: { file: input, format: 'jsonl' },
          operation: 'upsert',
          properties: OUR_PROPS,
          afterDataFiles: () => Promise.reject(new Error('injected failure after the data files')),
        }),
        /injected failure/,
      );
      assert.deepEqual(await sparkRows(), before);
      assert.equal(timelineFiles(table).filter((name) => name.endsWith('.rollback')).length, 2);

      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([2, 8, 10], 6),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': 'upsert' },
      });
      await hudi.sql(`CREATE TABLE writer_${tableVersion} USING hudi LOCATION '${table}'`);
      await hudi.sql(`CALL run_clean(table => 'writer_${tableVersion}', retain_commits => 1, options => 'hoodie.metadata.enable=false')`);
      await hudi.sql(`CALL run_clustering(table => 'writer_${tableVersion}', op => 'scheduleAndExecute', options => 'hoodie.metadata.enable=false')`);
      await ours('upsert', [2, 11], 7);
      await ours('bulk_insert', [12, 13], 8);
      const spark = await sparkRows();
      assert.deepEqual(await ourRows(), spark);
      assert.ok(spark.some((row) => row.includes('"v7-2"')) && spark.some((row) => row.includes('"v6-10"')), JSON.stringify(spark));
      assert.ok(spark.some((row) => row.includes('"v8-12"')) && spark.some((row) => row.includes('"v8-13"')), JSON.stringify(spark));
    });

    it(`a table we create with hoodie.write.table.version=${tableVersion}: Spark reads it, keeps writing with its defaults, and agrees with us`, async () => {
      const created = join(root, 'created');
      const input = join(root, 'created.jsonl');
      writeFileSync(
        input,
        `${hudi1xRows([1, 2, 3, 4], 1)
          .map((row) => JSON.stringify(row))
          .join('\n')}\n`,
      );
      const props = new Map([...hudi1xWriteOptionsMap('created'), ['hoodie.write.table.version', String(tableVersion)], ['hoodie.metadata.enable', 'false']]);
      await writeBatch(new LocalStorage(created), { input: { file: input, format: 'jsonl' }, operation: 'insert', properties: props });
      const config = (await HudiTable.open(new LocalStorage(created))).config;
      assert.equal(config.version, tableVersion);
      assert.equal(config.timelineLayoutVersion, 2);
      const read = async () => canonicalRows((await hudi.read(created)).rows);
      const ours = () => ourCanonicalRows(created);
      assert.deepEqual(await read(), await ours());
      assert.deepEqual(canonicalRows((await hudi.hudiRsRead(created)).rows), await ours(), 'hudi-rs reads the table we created');
      // Spark with Hudi's defaults: its upsert builds the metadata table, and we read what it wrote.
      await hudi.write(created, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([2, 5], 2),
        options: { ...hudi1xWriteOptions('created', 'COPY_ON_WRITE'), 'hoodie.datasource.write.operation': 'upsert' },
      });
      const spark = await read();
      assert.deepEqual(await ours(), spark);
      assert.ok(spark.some((row) => row.includes('"v2-2"')) && spark.some((row) => row.includes('"v1-4"')), JSON.stringify(spark));
      assert.equal((await HudiTable.open(new LocalStorage(created))).config.version, tableVersion, 'Spark kept the version');
    });
  });
}

/** The Hudi keys of hudi1xWriteOptions, as write properties of ours. */
function hudi1xWriteOptionsMap(name: string): [string, string][] {
  return Object.entries(hudi1xWriteOptions(name, 'COPY_ON_WRITE'));
}
