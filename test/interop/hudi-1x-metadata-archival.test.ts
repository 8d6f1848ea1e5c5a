/**
 * Archival with a Hudi 1.x metadata table on, judged by Hudi 1.0.2 and 1.1.1 on Spark 3.5.1 (one JVM per release):
 * Spark writes a default copy-on-write table (metadata table on), we upsert with small keep.min/max commits, a
 * metadata compaction every 3 deltacommits and our archive after each write. Our archive stops at the metadata
 * table's latest compaction as Hudi's `CALL archive_commits` does on a copy; once the metadata table's own archival
 * comes due, our write archives the same metadata-table instants into the same history as Spark's write on a copy.
 * Spark reads our table with the metadata table on and off, hudi_metadata() equals our reader, Spark keeps writing
 * and archiving on top, and we write again.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ArchiveResult, runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xJsonl, hudi1xRows, hudi1xWriteOptions } from '../helpers/hudi-1x-fixtures.js';
import { hudiArchivedInstants, ourHistory } from '../helpers/hudi-1x-history.js';
import { assertMetadata1xAgrees } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

const KEEP = {
  'hoodie.keep.min.commits': '2',
  'hoodie.keep.max.commits': '3',
  'hoodie.cleaner.commits.retained': '1',
  'hoodie.metadata.compact.max.delta.commits': '3',
};
const OUR_PROPS = new Map([['hoodie.datasource.write.precombine.field', 'ts'], ...Object.entries(KEEP)]);
const MDT = '.hoodie/metadata';
const MDT_TIMELINE = `${MDT}/.hoodie/timeline`;

/** Instant files of a timeline folder (history and checksums left out), sorted. */
function instantFiles(table: string, folder: string): string[] {
  return readdirSync(join(table, folder), { withFileTypes: true })
    .filter((entry) => entry.isFile() && /^\d/.test(entry.name))
    .map((entry) => entry.name)
    .sort();
}

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`archival with the metadata table of a default Hudi ${version} copy-on-write table (table version ${tableVersion})`, {
    timeout: 3_600_000,
  }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-mdt-archive-`);
    const table = join(root, 'cow');
    const copy = join(root, 'spark-copy');
    const sparkOptions = { ...hudi1xWriteOptions('mdta', 'COPY_ON_WRITE'), ...KEEP };
    let batch = 0;

    async function ours(path: string, ids: number[]): Promise<string> {
      batch += 1;
      const input = { file: hudi1xJsonl(root, ids, batch), format: 'jsonl' as const };
      return (await writeBatch(new LocalStorage(path), { input, operation: 'upsert', properties: OUR_PROPS })).instantTime;
    }

    async function ourArchive(path: string): Promise<ArchiveResult> {
      const storage = new LocalStorage(path);
      return runArchive(await HudiTable.open(storage, { mode: 'archive' }), {
        config: archivalConfigFromProperties(OUR_PROPS),
        cleanConfig: cleanConfigFromProperties(OUR_PROPS),
        lock: new StorageLockProvider(storage),
        properties: OUR_PROPS,
      });
    }

    async function spark(path: string, ids: number[], at = (batch += 1)): Promise<void> {
      await hudi.write(path, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows(ids, at),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': 'upsert' },
      });
    }

    const compactions = (path: string) => instantFiles(path, MDT_TIMELINE).filter((name) => /^\d{17}_\d{17}\.commit$/.test(name));
    const dataCommits = (path: string) => instantFiles(path, '.hoodie/timeline').filter((name) => /^\d{17}_\d{17}\.commit$/.test(name));

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      await spark(table, [1, 2, 3, 4, 5, 6]);
      assert.equal((await HudiTable.open(new LocalStorage(table))).config.version, tableVersion);
    });
    after(async () => hudi?.close());

    it("our archive stops at the metadata table's latest compaction, as Hudi's archiver on a copy", async () => {
      for (let id = 10; compactions(table).length === 0 || dataCommits(table).length < 6; id += 1) {
        assert.ok(id < 30, 'a metadata-table compaction and six data commits');
        await ours(table, [1 + (id % 6), id]);
      }
      const theirs = join(root, 'hudi-archive');
      cpSync(table, theirs, { recursive: true });
      await hudi.sql(`CALL archive_commits(path => '${theirs}', min_commits => 2, max_commits => 3, retain_commits => 1, enable_metadata => true)`);
      const result = await ourArchive(table);
      assert.equal(result.outcome, 'archived');
      assert.ok(
        result.plan.bounds.some((bound) => bound.rule === 'metadata-table-compaction'),
        JSON.stringify(result.plan.bounds),
      );
      const theirHistory = await hudiArchivedInstants(hudi, theirs);
      assert.deepEqual(await hudiArchivedInstants(hudi, table), theirHistory, 'Hudi lists the same archived instants');
      assert.deepEqual(await ourHistory(table), await ourHistory(theirs), 'the same history files and rows');
      assert.deepEqual(instantFiles(table, '.hoodie/timeline'), instantFiles(theirs, '.hoodie/timeline'));
      assert.deepEqual(instantFiles(table, MDT_TIMELINE), instantFiles(theirs, MDT_TIMELINE), "neither touched the metadata table's timeline");
      await assertMetadata1xAgrees(hudi, table, 'our archive');
    });

    it("our write archives the metadata table when due, as Spark's write on a copy: the same instants, the same history", async () => {
      let id = 40;
      for (;;) {
        assert.ok(id < 100, "the metadata table's archival came due");
        rmSync(copy, { recursive: true, force: true });
        cpSync(table, copy, { recursive: true });
        await ours(table, [1 + (id % 6), id]);
        if (existsSync(join(table, MDT_TIMELINE, 'history'))) break;
        await ourArchive(table);
        id += 1;
      }
      const before = new Set(instantFiles(copy, MDT_TIMELINE));
      await spark(copy, [1 + (id % 6), id], batch);

      const ourArchived = await hudiArchivedInstants(hudi, join(table, MDT));
      assert.ok(ourArchived.length > 0, 'metadata-table instants archived');
      assert.deepEqual(ourArchived, await hudiArchivedInstants(hudi, join(copy, MDT)), 'Hudi lists the same archived metadata-table instants');
      assert.deepEqual(await ourHistory(join(table, MDT)), await ourHistory(join(copy, MDT)), 'the same history files and rows');
      const left = (path: string) => instantFiles(path, MDT_TIMELINE).filter((name) => before.has(name));
      assert.deepEqual(left(table), left(copy), 'the same metadata-table instants left active');
      for (const instant of ourArchived) {
        assert.ok(!left(table).some((name) => name.startsWith(instant.requestedTime)), `${instant.requestedTime} left the active timeline`);
      }
      await assertMetadata1xAgrees(hudi, table, "our write's metadata-table archival");
      await assertMetadata1xAgrees(hudi, copy, "Spark's on the copy");
    });

    it('Spark keeps writing and archiving on top, and we write again', async () => {
      for (let i = 0; i < 3; i += 1) await spark(table, [2 + i, 120 + i]);
      await assertMetadata1xAgrees(hudi, table, 'Spark upserts on ours');
      const instant = await ours(table, [1, 130]);
      await ourArchive(table);
      await assertMetadata1xAgrees(hudi, table, `our upsert ${instant} after Spark's`);
      assert.ok((await hudiArchivedInstants(hudi, join(table, MDT))).length > 0);
      await spark(table, [5, 131]);
      await assertMetadata1xAgrees(hudi, table, 'Spark after us');
    });
  });
}
