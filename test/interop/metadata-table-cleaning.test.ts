/**
 * Our clean and archive on a Spark-written table with Hudi's metadata table (files, column_stats, bloom_filters,
 * record_index; real Hudi 0.15 on Spark 3.5.1). Our clean's deltacommit deletes the cleaned files from `files` and
 * leaves Hudi's tombstones in column_stats and bloom_filters: Hudi's HoodieMetadataTableValidator passes (all file
 * groups included, so a cleaned file still listed would fail it), Spark reads the same rows with the metadata table
 * on and off, Spark upserts and deletes through the record index after it, and Spark's own metadata compaction and
 * clean run on top. Our archive then never archives past the metadata table's latest compaction.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runArchive } from '../../lib/archival/archive.js';
import { archivalConfigFromProperties } from '../../lib/archival/config.js';
import { cleanConfigFromProperties } from '../../lib/cleaner/config.js';
import { runClean } from '../../lib/cleaning/clean.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { MetadataTable } from '../../lib/metadata/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { compareInstantTimes } from '../../lib/timeline/instant.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { metadataTableChecks, WITHOUT_RECORD_INDEX } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';
import { SCHEMA, sparkOptions, tableRow } from './clustering-helpers.js';

const PARTITIONS = ['2024-01-01', '2024-01-02'];
/**
 * Once Spark's clean has written bloom-filter tombstones over the HFile base files its compaction made, the
 * validator's record-index checks (a Spark datasource read of the whole metadata table, as Hudi's validator does)
 * fail inside Hudi: merging a base row with a log record of the same bloom-filter key, HoodieMetadataPayload casts the
 * Spark-converted Utf8 `type` to String (ClassCastException). Those records are Spark's own, and a table only Spark
 * wrote fails the same way (metadata-table-compaction.test.ts shows it; fixed in Hudi after 0.15 by apache/hudi#18240),
 * so from then on the record index is checked by Spark's upserts through it instead.
 */
const CHECKS_AFTER_SPARK_CLEAN = WITHOUT_RECORD_INDEX;
const SERVICES = new Map([
  ['hoodie.cleaner.commits.retained', '1'],
  ['hoodie.keep.min.commits', '2'],
  ['hoodie.keep.max.commits', '3'],
]);

describe('our clean and archive on a Spark table with the metadata table, checked by Hudi', { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });
  const { validate, readIds } = metadataTableChecks(() => hudi);

  it('our clean keeps the metadata table; Spark writes, compacts and cleans on top; our archive stops at its compaction', async (t) => {
    const name = 'mdt_clean';
    const table = join(tempDir('mdt-clean-interop-'), name);
    const options = sparkOptions({
      'hoodie.table.name': name,
      'hoodie.metadata.enable': 'true',
      'hoodie.metadata.index.column.stats.enable': 'true',
      'hoodie.metadata.index.bloom.filter.enable': 'true',
      'hoodie.metadata.record.index.enable': 'true',
      'hoodie.index.type': 'RECORD_INDEX',
      'hoodie.index.bloom.num_entries': '1000',
      // Our clean does the cleaning; Spark's own runs at the end.
      'hoodie.clean.automatic': 'false',
      'hoodie.archive.automatic': 'false',
    });
    const ids = Array.from({ length: 30 }, (_, i) => i + 1);
    await hudi.write(table, {
      schema: SCHEMA,
      rows: ids.map((id) => tableRow(id, PARTITIONS)),
      options: { ...options, 'hoodie.datasource.write.operation': 'insert' },
    });
    // Three upserts of every file group: old file versions for the cleaner.
    for (let version = 1; version <= 3; version++) {
      await hudi.write(table, {
        schema: SCHEMA,
        rows: [1, 2, 3, 4].map((id) => tableRow(id, PARTITIONS, version)),
        options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
      });
    }

    const storage = openStorage(table);
    const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
    const cleaned = await runClean(await HudiTable.open(storage, { mode: 'write' }), {
      config: cleanConfigFromProperties(SERVICES),
      lock,
      properties: new Map(),
    });
    assert.equal(cleaned.outcome, 'cleaned');
    const clean = cleaned.clean!;
    const files = Object.entries(clean.metadata.partitionMetadata).flatMap(([partition, entry]) =>
      entry.successDeleteFiles.map((file) => join(table, partition, file)),
    );
    assert.ok(files.length >= 4, `old versions were cleaned (${files.length})`);
    assert.ok(
      files.every((file) => !existsSync(file)),
      'the cleaned files are gone',
    );
    assert.ok(clean.metadataTable.deltaCommit, 'the clean got its deltacommit');
    t.diagnostic(
      `our clean ${clean.instantTime}: ${files.length} file(s) deleted; its deltacommit: ${JSON.stringify(clean.metadataTable.deltaCommit.partitions)}`,
    );
    await validate(t, table, 'after our clean');
    assert.deepEqual(await readIds(table, 'after our clean'), ids);

    // Spark writes on (its record index finds the keys), compacts its metadata table, then cleans.
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [1, 5, 31].map((id) => tableRow(id, PARTITIONS, 4)),
      options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
    });
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [2, 6].map((id) => tableRow(id, PARTITIONS, 5)),
      options: { ...options, 'hoodie.datasource.write.operation': 'delete' },
    });
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [3, 7].map((id) => tableRow(id, PARTITIONS, 6)),
      options: {
        ...options,
        'hoodie.datasource.write.operation': 'upsert',
        'hoodie.metadata.compact.max.delta.commits': '1',
        'hoodie.clean.automatic': 'true',
        'hoodie.cleaner.commits.retained': '1',
      },
    });
    const expected = [...ids, 31].filter((id) => id !== 2 && id !== 6);
    const afterSpark = await readIds(table, "after Spark's writes and clean");
    assert.equal(new Set(afterSpark).size, afterSpark.length, 'no duplicates');
    assert.deepEqual(afterSpark, expected);
    const mdt = (await MetadataTable.open(storage))!;
    const compaction = mdt.timeline
      .completed()
      .filter((i) => i.action === 'commit')
      .at(-1);
    assert.ok(compaction, 'Spark compacted the metadata table over our deltacommits');
    const timeline = (await HudiTable.open(storage)).timeline;
    assert.ok(
      timeline.completed().some((i) => i.action === 'clean' && i.time !== clean.instantTime),
      'Spark cleaned after ours',
    );
    await validate(t, table, "after Spark's writes, compaction and clean", CHECKS_AFTER_SPARK_CLEAN);

    // Our archive: never past the metadata table's latest compaction.
    const archived = await runArchive(await HudiTable.open(storage, { mode: 'write' }), {
      config: archivalConfigFromProperties(SERVICES),
      cleanConfig: cleanConfigFromProperties(SERVICES),
      lock,
    });
    // Hudi compares the instant times as strings: T is before T001, the compaction of the metadata table at T.
    assert.ok(
      archived.plan.instants.every((instant) => compareInstantTimes(instant.time, compaction.time) < 0),
      `nothing at or after the metadata table's compaction ${compaction.time} is archived`,
    );
    t.diagnostic(
      `our archive: ${archived.outcome}, ${archived.plan.instants.length} instant(s) archived; bounds: ${archived.plan.bounds.map((bound) => `${bound.rule} ${bound.time}`).join(', ')}`,
    );
    await validate(t, table, 'after our archive', CHECKS_AFTER_SPARK_CLEAN);
    assert.deepEqual(await readIds(table, 'after our archive'), expected);
    // Spark's upsert through the record index after all of it: no duplicates.
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [8, 32].map((id) => tableRow(id, PARTITIONS, 7)),
      options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
    });
    const last = await readIds(table, "after Spark's last upsert");
    assert.deepEqual(
      last,
      [...expected, 32].sort((a, b) => a - b),
      "no duplicates after Spark's last upsert",
    );
  });
});
