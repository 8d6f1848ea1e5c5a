/**
 * Our clustering on Spark-written tables with Hudi's metadata table (real Hudi 0.15 on Spark 3.5.1): z-order on a
 * table with files + column_stats + bloom_filters, linear on one with the record index too. After our replacecommit
 * (and its metadata-table deltacommit), Hudi's HoodieMetadataTableValidator passes (latest file slices, latest base
 * files, all file groups, column stats, bloom filters, record index), Spark reads the same rows with
 * hoodie.metadata.enable=true and false, and Spark then upserts and deletes with its defaults (the record index as
 * its index where the table has one) without duplicates or errors, the validator still passing.
 *
 * Data skipping: a Spark query with hoodie.enable.data.skipping=true on the z-ordered columns reads fewer files
 * (the scan's numFiles metric) after our clustering than before: Spark prunes through the column stats our
 * deltacommit wrote.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { MetadataTable } from '../../lib/metadata/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { ALL_CHECKS, metadataTableChecks, WITHOUT_RECORD_INDEX } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';
import { clusterWithCli, commitJson, SCHEMA, sparkOptions, tableRow } from './clustering-helpers.js';

const PARTITIONS = ['2024-01-01', '2024-01-02'];
const STATS = { 'hoodie.metadata.index.column.stats.enable': 'true', 'hoodie.metadata.index.bloom.filter.enable': 'true' };

describe('our clustering on Spark tables with the metadata table, checked by Hudi', { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  const { validate, readIds } = metadataTableChecks(() => hudi);

  /** `batches` Spark inserts of `rows` rows (one new small base file per partition and batch), metadata table on. */
  async function sparkTable(
    name: string,
    metadata: Record<string, string>,
    batches: number,
    rows: number,
  ): Promise<{ table: string; options: Record<string, string>; ids: number[] }> {
    const table = join(tempDir('mdt-cluster-interop-'), name);
    const options = sparkOptions({ 'hoodie.table.name': name, 'hoodie.metadata.enable': 'true', 'hoodie.index.bloom.num_entries': '1000', ...metadata });
    let id = 0;
    for (let batch = 0; batch < batches; batch++) {
      const data = Array.from({ length: rows }, () => tableRow(++id, PARTITIONS));
      await hudi.write(table, { schema: SCHEMA, rows: data, options: { ...options, 'hoodie.datasource.write.operation': 'insert' } });
    }
    return { table, options, ids: Array.from({ length: id }, (_, i) => i + 1) };
  }

  /** Spark upserts (some clustered keys, some new) and deletes with the table's options; no duplicates after. */
  async function sparkWritesOn(
    t: TestContext,
    table: string,
    options: Record<string, string>,
    ids: number[],
    checks: readonly string[],
    step: string,
  ): Promise<void> {
    const updated = [ids[0]!, ids[5]!, ids[ids.length - 1]!, 1001, 1002];
    await hudi.write(table, {
      schema: SCHEMA,
      rows: updated.map((id) => tableRow(id, PARTITIONS, 1)),
      options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
    });
    const deleted = [ids[1]!, ids[6]!, 1001];
    await hudi.write(table, {
      schema: SCHEMA,
      rows: deleted.map((id) => tableRow(id, PARTITIONS, 2)),
      options: { ...options, 'hoodie.datasource.write.operation': 'delete' },
    });
    await validate(t, table, `${step}, after Spark's upsert and delete`, checks);
    const after = await readIds(table, `${step}, after Spark's writes`);
    assert.equal(new Set(after).size, after.length, 'no duplicates');
    const expected = [...new Set([...ids, 1001, 1002])].filter((id) => !deleted.includes(id)).sort((a, b) => a - b);
    assert.deepEqual(after, expected, `${step}: the table's keys after Spark's writes`);
    const names = new Map(
      (await hudi.read(table, { meta: false, where: `id IN (${updated.join(', ')})` })).rows.map((row) => [Number(row['id']), row['name']]),
    );
    for (const id of [ids[0]!, ids[5]!, 1002]) assert.equal(names.get(id), `n${id}-v1`, `Spark's update of ${id} applied once`);
  }

  it('z-order on files + column_stats + bloom_filters: validator passes, reads agree, Spark writes on; data skipping reads fewer files', async (t) => {
    const checks = WITHOUT_RECORD_INDEX;
    const { table, options, ids } = await sparkTable('mdt_zorder', STATS, 4, 40);
    const skipping = { where: 'score BETWEEN 2 AND 3 AND qty <= 1', options: { 'hoodie.metadata.enable': 'true', 'hoodie.enable.data.skipping': 'true' } };
    const beforeScan = await hudi.scanFiles(table, skipping);

    const storage = openStorage(table);
    const bytes = (await storage.listDir(PARTITIONS[0]!)).files.filter((file) => file.path.endsWith('.parquet')).reduce((total, file) => total + file.size, 0);
    const clustered = clusterWithCli(table, {
      'hoodie.layout.optimize.strategy': 'z-order',
      'hoodie.clustering.plan.strategy.sort.columns': 'score,qty',
      // About four output files per partition, so that each covers a part of the curve.
      'hoodie.clustering.plan.strategy.target.file.max.bytes': String(Math.ceil(bytes / 4)),
      'hoodie.index.bloom.num_entries': '1000',
    });
    const mdt = (await MetadataTable.open(storage))!;
    assert.equal(mdt.timeline.find(clustered.instantTime)?.state, 'COMPLETED', 'the replacecommit has its deltacommit');
    const commit = await commitJson(storage, clustered.instantTime, 'replacecommit');
    assert.ok(
      Object.values(commit.partitionToWriteStats).every((stats) => stats.length >= 3),
      'several output files per partition',
    );

    await validate(t, table, 'z-order, after our clustering', checks);
    assert.deepEqual(await readIds(table, 'z-order, after our clustering'), ids);
    const afterScan = await hudi.scanFiles(table, skipping);
    assert.equal(afterScan.rows, beforeScan.rows, 'the query returns the same rows');
    t.diagnostic(
      `data skipping on score, qty (${skipping.where}): Spark read ${beforeScan.numFiles} file(s) before our z-order clustering, ${afterScan.numFiles} after (${afterScan.rows} rows)`,
    );
    assert.ok(afterScan.numFiles < beforeScan.numFiles, `fewer files read after clustering: ${beforeScan.numFiles} → ${afterScan.numFiles}`);

    await sparkWritesOn(t, table, options, ids, checks, 'z-order');
  });

  it('linear with the record index: validator passes (record index count and content), reads agree, Spark upserts and deletes through the record index', async (t) => {
    const checks = ALL_CHECKS;
    const { table, options, ids } = await sparkTable(
      'mdt_linear_rli',
      { ...STATS, 'hoodie.metadata.record.index.enable': 'true', 'hoodie.index.type': 'RECORD_INDEX' },
      3,
      30,
    );
    const clustered = clusterWithCli(table, { 'hoodie.clustering.plan.strategy.sort.columns': 'id', 'hoodie.index.bloom.num_entries': '1000' });
    const storage = openStorage(table);
    const mdt = (await MetadataTable.open(storage))!;
    assert.equal(mdt.timeline.find(clustered.instantTime)?.state, 'COMPLETED', 'the replacecommit has its deltacommit');
    const reader = await mdt.reader();
    const commit = await commitJson(storage, clustered.instantTime, 'replacecommit');
    const outputs = new Set(
      Object.values(commit.partitionToWriteStats)
        .flat()
        .map((stat) => stat.fileId),
    );
    const locations = await reader.recordLocations(ids.map(String));
    assert.equal(locations.size, ids.length);
    assert.ok(
      [...locations.values()].every((location) => outputs.has(location.fileId)),
      'every record is located in an output file group',
    );

    await validate(t, table, 'linear, after our clustering', checks);
    assert.deepEqual(await readIds(table, 'linear, after our clustering'), ids);
    await sparkWritesOn(t, table, options, ids, checks, 'linear');
  });
});
