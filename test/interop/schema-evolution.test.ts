/**
 * Schema evolution between our writer and real Hudi 0.15 (Spark 3.5.1), on one Spark-created table with the metadata
 * table (files, column_stats, bloom_filters):
 *
 * 1. our upsert adds a column: Spark reads the table exactly as our reader does, rows of files the upsert did not
 *    rewrite (and the merged old rows) with NULL; the commit's schema has the column, hoodie.table.create.schema not;
 * 2. Spark's upsert adds another column: our reader returns it, and our upsert writes to it;
 * 3. our clustering rewrites files of three schemas into one: Spark reads equal rows;
 * 4. Spark upserts on top, and Hudi's metadata-table validator (column stats included) passes.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Row } from '../../lib/engine/row-format.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { canonicalRows, type HudiHarness, startHudi } from '../helpers/hudi.js';
import { ourRows, ourWrite, parquetFromRows, tableProperties } from '../helpers/interop-writer.js';
import { tempDir } from '../helpers/paths.js';
import { clusterWithCli, commitJson, SCHEMA, sparkOptions, tableRow } from './clustering-helpers.js';

const PARTITIONS = ['2024-01-01', '2024-01-02'];
const STATS = { 'hoodie.metadata.enable': 'true', 'hoodie.metadata.index.column.stats.enable': 'true', 'hoodie.metadata.index.bloom.filter.enable': 'true' };
const CHECKS = ['partitions', 'latest-file-slices', 'latest-base-files', 'all-file-groups', 'all-column-stats', 'bloom-filters'];
/** DuckDB types of our inputs: the Spark table's columns, then what each step adds. */
const BASE_TYPES = { id: 'BIGINT', name: 'VARCHAR', score: 'DOUBLE', qty: 'INTEGER', ts: 'TIMESTAMPTZ', dt: 'VARCHAR' };
const WITH_NOTE = { ...BASE_TYPES, note: 'VARCHAR' };
const WITH_BOTH = { ...WITH_NOTE, rank: 'INTEGER' };

function noted(id: number, version: number): Row {
  return { ...tableRow(id, PARTITIONS, version), note: `note-${id}-v${version}` };
}

function ranked(id: number, version: number): Row {
  return { ...noted(id, version), rank: id * 10 + version };
}

describe("schema evolution: our writes and Hudi's add columns to one table, clustering and the metadata table follow", { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  /** Spark's snapshot (meta columns but the file name) equals ours; the data rows. */
  async function sameRows(table: string, step: string): Promise<Row[]> {
    const drop = (rows: readonly Row[]) => rows.map(({ _hoodie_file_name: _, ...rest }) => rest);
    const spark = await hudi.read(table, { options: { 'hoodie.metadata.enable': 'true' } });
    const ours = await ourRows(table);
    assert.deepEqual(canonicalRows(drop(ours)), canonicalRows(drop(spark.rows)), `${step}: our reader and Spark's`);
    return spark.rows;
  }

  async function validate(table: string, step: string): Promise<void> {
    const report = await hudi.validateMetadataTable(table, CHECKS);
    const failed = Object.entries(report.checks).filter(([, check]) => check.status !== 'passed');
    assert.deepEqual(report.errors, [], `${step}: validator errors`);
    assert.deepEqual(
      failed.map(([name, check]) => `${name}: ${check.status} ${check.details}`),
      [],
      `${step}: failed checks`,
    );
    assert.deepEqual(Object.keys(report.checks).sort(), [...CHECKS].sort(), `${step}: every check ran`);
  }

  async function fieldNames(table: string): Promise<string[]> {
    return (await (await HudiTable.open(openStorage(table))).requireSchema('reading it')).schema.fields.map((field) => field.name);
  }

  it("columns added by our upsert and by Spark's read alike on both sides; clustering over all three schemas; Spark writes on; the validator passes", async () => {
    const table = join(tempDir('schema-evolution-'), 'evolving');
    const options = sparkOptions({ 'hoodie.table.name': 'evolving', 'hoodie.index.bloom.num_entries': '1000', ...STATS });
    const props = new Map([['hoodie.index.bloom.num_entries', '1000']]);
    // Two Spark inserts: two small base files per partition.
    for (const ids of [
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]) {
      await hudi.write(table, {
        schema: SCHEMA,
        rows: ids.map((id) => tableRow(id, PARTITIONS)),
        options: { ...options, 'hoodie.datasource.write.operation': 'insert' },
      });
    }
    const createSchema = tableProperties(table).get('hoodie.table.create.schema');

    // 1. Our upsert adds `note`: an update of id 2 (partition 2024-01-01) and a new id 9.
    const dir = tempDir('schema-evolution-in-');
    await ourWrite(table, 'upsert', await parquetFromRows(dir, [noted(2, 1), noted(9, 0)], WITH_NOTE), props);
    assert.deepEqual(await fieldNames(table), ['id', 'name', 'score', 'qty', 'ts', 'dt', 'note'], "the commit's schema has the new column last");
    assert.equal(tableProperties(table).get('hoodie.table.create.schema'), createSchema, 'hoodie.table.create.schema untouched, as Hudi leaves it');
    const afterOurs = new Map((await sameRows(table, 'after our upsert adding note')).map((row) => [Number(row['id']), row]));
    assert.deepEqual(
      [...afterOurs.keys()].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.deepEqual(
      [2, 9, 4, 1].map((id) => afterOurs.get(id)?.['note']),
      ['note-2-v1', 'note-9-v0', null, null],
      'old rows (merged or not) read NULL',
    );

    // 2. Spark's upsert adds `rank` (it must carry `note` too: Hudi refuses a batch lacking a table column).
    await hudi.write(table, {
      schema: `${SCHEMA}, note STRING, rank INT`,
      rows: [ranked(3, 1), ranked(10, 0)],
      options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
    });
    assert.deepEqual(await fieldNames(table), ['id', 'name', 'score', 'qty', 'ts', 'dt', 'note', 'rank']);
    const ours = new Map((await ourRows(table)).map((row) => [Number(row['id']), row]));
    assert.deepEqual(
      [3, 10, 2, 1].map((id) => [ours.get(id)?.['note'], ours.get(id)?.['rank']]),
      [
        ['note-3-v1', 31],
        ['note-10-v0', 100],
        ['note-2-v1', null],
        [null, null],
      ],
    );
    // We write to Spark's column: updates in both partitions and a new row.
    await ourWrite(table, 'upsert', await parquetFromRows(dir, [ranked(1, 2), ranked(6, 2), ranked(11, 0)], WITH_BOTH), props);
    const afterBoth = new Map((await sameRows(table, "after our upsert into Spark's column")).map((row) => [Number(row['id']), row]));
    assert.deepEqual(
      [1, 6, 11, 5].map((id) => afterBoth.get(id)?.['rank']),
      [12, 62, 110, null],
    );

    // 3. Our clustering of every file of each partition (files of the original, the note and the rank schema).
    const clustered = clusterWithCli(table, { 'hoodie.clustering.plan.strategy.sort.columns': 'id', 'hoodie.index.bloom.num_entries': '1000' });
    const commit = await commitJson(openStorage(table), clustered.instantTime, 'replacecommit');
    assert.deepEqual(Object.keys(commit.partitionToReplaceFileIds ?? {}).sort(), PARTITIONS, 'both partitions clustered');
    const afterClustering = await sameRows(table, 'after our clustering');
    assert.deepEqual(
      canonicalRows(afterClustering.map(({ _hoodie_file_name: _, ...rest }) => rest)),
      canonicalRows([...afterBoth.values()].map(({ _hoodie_file_name: _, ...rest }) => rest)),
      'clustering changed no row',
    );
    assert.deepEqual(await fieldNames(table), ['id', 'name', 'score', 'qty', 'ts', 'dt', 'note', 'rank'], 'the replacecommit keeps the latest schema');
    await validate(table, 'after our clustering');

    // 4. Spark upserts on top of our clustered files, with the evolved schema.
    await hudi.write(table, {
      schema: `${SCHEMA}, note STRING, rank INT`,
      rows: [ranked(4, 3), ranked(12, 0)],
      options: { ...options, 'hoodie.datasource.write.operation': 'upsert' },
    });
    const final = new Map((await sameRows(table, "after Spark's upsert on the clustered table")).map((row) => [Number(row['id']), row]));
    assert.deepEqual(
      [...final.keys()].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
    assert.deepEqual(
      [4, 12, 5].map((id) => final.get(id)?.['rank']),
      [43, 120, null],
    );
    await validate(table, "after Spark's upsert on top");
  });
});
