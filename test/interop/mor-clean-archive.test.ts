/**
 * Our clean and archive on a merge-on-read table Spark wrote (real Hudi 0.15 on Spark 3.5.1), with Hudi's metadata
 * table (files, column_stats, bloom_filters): inserts, upserts into log files, a compaction, more upserts — so the
 * compaction left superseded slices (base file and log files). Then:
 * - our clean deletes the files Spark's clean deletes on a copy of the same table (base and log files);
 * - Hudi's HoodieMetadataTableValidator passes and Spark reads the same rows (metadata table on and off);
 * - our archive moves the delta commits before the compaction to the archived timeline, and the checks pass again;
 * - Spark compacts, upserts and cleans on top (its cleaner plans from ours), and reads what it wrote.
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { type HudiHarness, mergeOnReadWriteOptions, startHudi } from '../helpers/hudi.js';
import { metadataTableChecks, WITHOUT_RECORD_INDEX } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';
import { SCHEMA, sparkOptions, tableRow } from './clustering-helpers.js';

const PARTITIONS = ['2024-01-01', '2024-01-02'];
const RETAINED = '2';
const METADATA_OPTIONS: Record<string, string> = {
  'hoodie.metadata.enable': 'true',
  'hoodie.metadata.index.column.stats.enable': 'true',
  'hoodie.metadata.index.bloom.filter.enable': 'true',
  // The metadata table compacts often, so the archive has a compaction to archive up to.
  'hoodie.metadata.compact.max.delta.commits': '3',
};
const PROCEDURE_OPTIONS = Object.entries(METADATA_OPTIONS)
  .map(([key, value]) => `${key}=${value}`)
  .join(',');

/** Data files under the table (base and log files, not .hoodie), relative and sorted. */
function dataFiles(table: string): string[] {
  return readdirSync(table, { recursive: true, encoding: 'utf8' })
    .filter((path) => !path.startsWith('.hoodie') && (path.endsWith('.parquet') || /\.log\.\d+_/.test(path)))
    .map((path) => relative(table, join(table, path)))
    .sort();
}

describe('our clean and archive on a Spark merge-on-read table with the metadata table', { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });
  const { validate, readIds } = metadataTableChecks(() => hudi);

  it("deletes what Spark's clean deletes; the validator passes; archive; Spark writes and cleans on top", async (t) => {
    const name = 'mor_services';
    const table = join(tempDir('mor-services-'), name);
    const options = {
      ...sparkOptions({ 'hoodie.table.name': name }),
      ...mergeOnReadWriteOptions(1),
      ...METADATA_OPTIONS,
    };
    const ids = Array.from({ length: 24 }, (_, i) => i + 1);
    const upsert = (version: number, which: readonly number[]) =>
      hudi.write(table, {
        schema: SCHEMA,
        rows: which.map((id) => tableRow(id, PARTITIONS, version)),
        options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
      });
    await hudi.write(table, {
      schema: SCHEMA,
      rows: ids.map((id) => tableRow(id, PARTITIONS)),
      options: { ...options, 'hoodie.datasource.write.operation': 'insert' },
    });
    await upsert(1, [1, 2, 3, 4]);
    await upsert(2, [1, 2, 5, 6]);
    // The trigger (5 delta commits by default) would plan nothing yet. A procedure's client without the index keys
    // would drop those metadata partitions (and the next write rebuild them): pass them along.
    await hudi.sql(
      `CALL run_compaction(op => 'scheduleAndExecute', path => '${table}', options => '${PROCEDURE_OPTIONS},hoodie.compact.inline.max.delta.commits=1')`,
    );
    const compacted = (await HudiTable.open(openStorage(table))).timeline.completed().filter((i) => i.action === 'commit');
    assert.equal(compacted.length, 1, 'Spark compacted');
    for (let version = 3; version <= 5; version++) await upsert(version, [1, 3, 5, version + 4]);
    const before = dataFiles(table);
    assert.ok(
      before.some((file) => file.includes('.log.')),
      'log files were written',
    );
    const rowsBefore = await readIds(table, 'before cleaning');
    assert.deepEqual(rowsBefore, ids);

    // Spark's clean on a copy, ours on the table.
    const copy = join(tempDir('mor-services-copy-'), name);
    cpSync(table, copy, { recursive: true });
    await hudi.sql(`CREATE TABLE mor_services_copy USING hudi LOCATION '${copy}'`);
    await hudi.sql(
      `CALL run_clean(table => 'mor_services_copy', clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => ${RETAINED}, options => '${PROCEDURE_OPTIONS}')`,
    );
    const sparkKept = dataFiles(copy);
    assert.ok(sparkKept.length < before.length, `Spark cleaned ${before.length - sparkKept.length} file(s)`);

    await validate(t, table, 'before our clean', WITHOUT_RECORD_INDEX);
    const storage = openStorage(table);
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    const cleaned = await runClean(await HudiTable.open(storage, { mode: 'write' }), {
      config: cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', RETAINED]])),
      lock,
      properties: new Map(),
    });
    assert.equal(cleaned.outcome, 'cleaned');
    const deleted = before.filter((file) => !dataFiles(table).includes(file));
    t.diagnostic(`our clean ${cleaned.clean!.instantTime}: ${deleted.length} file(s) deleted (${deleted.filter((f) => f.includes('.log.')).length} log files)`);
    assert.ok(
      deleted.some((file) => file.includes('.log.')),
      'log files of superseded slices were deleted',
    );
    assert.deepEqual(dataFiles(table), sparkKept, "the files Spark's clean keeps");
    assert.ok(cleaned.clean!.metadataTable.deltaCommit, 'the clean got its metadata deltacommit');
    await validate(t, table, 'after our clean', WITHOUT_RECORD_INDEX);
    assert.deepEqual(await readIds(table, 'after our clean'), ids);

    const archived = await runArchive(await HudiTable.open(storage, { mode: 'write' }), {
      config: archivalConfigFromProperties(
        new Map([
          ['hoodie.keep.min.commits', '2'],
          ['hoodie.keep.max.commits', '3'],
        ]),
      ),
      cleanConfig: cleanConfigFromProperties(new Map([['hoodie.cleaner.commits.retained', RETAINED]])),
      lock,
    });
    t.diagnostic(`our archive: ${archived.plan.instants.map((i) => `${i.time}.${i.action}`).join(', ')}; bounds ${JSON.stringify(archived.plan.bounds)}`);
    assert.equal(archived.outcome, 'archived');
    assert.ok(
      archived.plan.instants.some((i) => i.action === 'deltacommit'),
      'delta commits were archived',
    );
    await validate(t, table, 'after our archive', WITHOUT_RECORD_INDEX);
    assert.deepEqual(await readIds(table, 'after our archive'), ids);

    // Spark compacts, writes and cleans on top of our clean and archive: its cleaner plans from our clean.
    await hudi.sql(
      `CALL run_compaction(op => 'scheduleAndExecute', path => '${table}', options => '${PROCEDURE_OPTIONS},hoodie.compact.inline.max.delta.commits=1')`,
    );
    const cleansBefore = (await HudiTable.open(storage)).timeline.completed().filter((i) => i.action === 'clean').length;
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [2, 4, 25].map((id) => tableRow(id, PARTITIONS, 9)),
      options: {
        ...options,
        'hoodie.datasource.write.operation': 'upsert',
        'hoodie.clean.automatic': 'true',
        'hoodie.cleaner.commits.retained': '1',
      },
    });
    const cleans = (await HudiTable.open(storage)).timeline.completed().filter((i) => i.action === 'clean');
    assert.equal(cleans.length, cleansBefore + 1, "Spark's clean ran after ours");
    assert.deepEqual(await readIds(table, "after Spark's compaction, upsert and clean"), [...ids, 25]);
  });
});
