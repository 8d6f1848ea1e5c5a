/**
 * Our writer on Spark-written tables with Hudi's metadata table (real Hudi 0.15 on Spark 3.5.1): files only;
 * files + column_stats + bloom_filters; and with the record index. After each of our bulk_insert, insert, upsert and
 * delete, Hudi's HoodieMetadataTableValidator checks (latest file slices, latest base files, all file groups,
 * column stats, bloom filters, record index) pass, and Spark reads the same rows with hoodie.metadata.enable=true
 * and false. Then Spark upserts and deletes with its defaults (the record index as its index where the table has
 * one), without duplicates or errors, and the validator still passes: Spark's metadata writer (and its compaction)
 * continues on top of ours. Also: a metadata table made by test/helpers/metadata-table.ts is one Hudi accepts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { MetadataTable } from '../../lib/metadata/index.js';
import { openStorage } from '../../lib/storage/index.js';
import { newTableOptionsFromWriteProperties } from '../../lib/table/config.js';
import { createTable } from '../../lib/table/init.js';
import { type WriteOptions, writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { initMetadataTable } from '../helpers/metadata-table.js';
import { ALL_CHECKS, FILES_CHECKS, metadataTableChecks, WITHOUT_RECORD_INDEX } from '../helpers/metadata-table-checks.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, price DECIMAL(10,2), d DATE, t TIMESTAMP, f DOUBLE, b BOOLEAN, n INT, dt STRING';

type Row = {
  id: number;
  name: string;
  ts: number;
  price: string;
  d: string;
  t: string;
  f: number;
  b: boolean;
  n: number | null;
  dt: string;
};

/** Rows keep their partition by id (our index, like Hudi's non-global ones, is per partition); `n` is null for odd `version`s. */
function rows(ids: readonly number[], version: number): Row[] {
  return ids.map((id) => ({
    id,
    name: `v${version}-${id}`,
    ts: version,
    price: `${id}.${String(version % 100).padStart(2, '0')}`,
    d: `2024-01-${String(1 + (id % 28)).padStart(2, '0')}`,
    t: `2024-02-01T00:00:${String(id % 60).padStart(2, '0')}Z`,
    f: id * 1.5 + version,
    b: id % 2 === 0,
    n: version % 2 === 1 ? null : id,
    dt: id % 3 === 0 ? '2024-01-03' : id % 3 === 1 ? '2024-01-01' : '2024-01-02',
  }));
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

interface Case {
  name: string;
  /** Hudi's metadata options for Spark's writes. */
  spark: Record<string, string>;
  checks: readonly string[];
}

const CASES: readonly Case[] = [
  { name: 'files', spark: {}, checks: FILES_CHECKS },
  {
    name: 'files_stats_bloom',
    spark: { 'hoodie.metadata.index.column.stats.enable': 'true', 'hoodie.metadata.index.bloom.filter.enable': 'true' },
    checks: WITHOUT_RECORD_INDEX,
  },
  {
    name: 'record_index',
    spark: {
      'hoodie.metadata.index.column.stats.enable': 'true',
      'hoodie.metadata.index.bloom.filter.enable': 'true',
      'hoodie.metadata.record.index.enable': 'true',
      'hoodie.index.type': 'RECORD_INDEX',
    },
    checks: ALL_CHECKS,
  },
];

function sparkOptions(name: string, extra: Record<string, string>): Record<string, string> {
  return {
    'hoodie.table.name': name,
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
    'hoodie.index.bloom.num_entries': '1000',
    'hoodie.metadata.enable': 'true',
    // Spark compacts the metadata table at its first write after our four (over our log files), and we write on top.
    'hoodie.metadata.compact.max.delta.commits': '3',
    ...extra,
  };
}

function ourProps(name: string): Map<string, string> {
  return new Map([
    ['hoodie.table.name', name],
    ['hoodie.datasource.write.recordkey.field', 'id'],
    ['hoodie.datasource.write.precombine.field', 'ts'],
    ['hoodie.datasource.write.partitionpath.field', 'dt'],
    ['hoodie.index.bloom.num_entries', '1000'],
  ]);
}

async function ourWrite(table: string, name: string, data: readonly object[], operation: WriteOptions['operation']) {
  const input = join(tempDir('mdt-interop-in-'), 'batch.jsonl');
  await writeJsonLines(input, data);
  return writeBatch(openStorage(table), { input: { file: input, format: 'jsonl' }, operation, properties: ourProps(name) });
}

describe('our writes on Spark tables with the metadata table, checked by Hudi', { timeout: 3_600_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  const { validate, readBoth } = metadataTableChecks(() => hudi);

  for (const testCase of CASES) {
    it(`${testCase.name}: our bulk_insert, insert, upsert, delete; then Spark's upsert and delete`, async (t) => {
      const name = `mdt_${testCase.name}`;
      const table = join(tempDir('mdt-interop-'), name);
      const options = sparkOptions(name, testCase.spark);
      await hudi.write(table, { schema: SCHEMA, rows: rows(range(1, 12), 1), options });

      const expected = new Map<number, Row>(rows(range(1, 12), 1).map((row) => [row.id, row]));
      const steps: [string, () => Promise<void>][] = [
        [
          'bulk_insert',
          async () => {
            const data = rows(range(13, 24), 2);
            await ourWrite(table, name, data, 'bulk_insert');
            for (const row of data) expected.set(row.id, row);
          },
        ],
        [
          'insert',
          async () => {
            const data = rows(range(25, 30), 3);
            await ourWrite(table, name, data, 'insert');
            for (const row of data) expected.set(row.id, row);
          },
        ],
        [
          'upsert',
          async () => {
            const data = rows([...range(5, 10), ...range(20, 22), ...range(31, 34)], 4);
            await ourWrite(table, name, data, 'upsert');
            for (const row of data) expected.set(row.id, row);
          },
        ],
        [
          'delete',
          async () => {
            const data = rows([2, 3, 14, 21, 33, 99], 5);
            const result = await ourWrite(table, name, data, 'delete');
            assert.equal(result.deleted, 5);
            for (const row of data) expected.delete(row.id);
          },
        ],
      ];
      for (const [step, run] of steps) {
        await run();
        await validate(t, table, `${testCase.name} after our ${step}`, testCase.checks);
        const read = await readBoth(table, `${testCase.name} after our ${step}`);
        assert.deepEqual(
          read.map((row) => Number(row['id'])).sort((a, b) => a - b),
          [...expected.keys()].sort((a, b) => a - b),
          `${step}: the table's keys`,
        );
      }

      // Spark continues with its defaults (for this table's metadata table and index).
      const upsert = rows([1, 5, 13, 25, 31, 40, 41], 6);
      await hudi.write(table, { schema: SCHEMA, rows: upsert, options });
      for (const row of upsert) expected.set(row.id, row);
      const deletes = rows([6, 22, 40], 7);
      await hudi.write(table, { schema: SCHEMA, rows: deletes, options: { ...options, 'hoodie.datasource.write.operation': 'delete' } });
      for (const row of deletes) expected.delete(row.id);
      await validate(t, table, `${testCase.name} after Spark's upsert and delete`, testCase.checks);
      const read = await readBoth(table, `${testCase.name} after Spark's writes`);
      const ids = read.map((row) => Number(row['id']));
      assert.equal(new Set(ids).size, ids.length, 'no duplicates');
      assert.deepEqual(
        ids.sort((a, b) => a - b),
        [...expected.keys()].sort((a, b) => a - b),
      );
      const byId = new Map(read.map((row) => [Number(row['id']), row]));
      for (const id of [1, 5, 13, 31]) assert.equal(byId.get(id)?.['name'], `v6-${id}`, `Spark's update of ${id} applied`);
      for (const id of [7, 20]) assert.equal(byId.get(id)?.['name'], `v4-${id}`, `our update of ${id} kept`);

      // Spark compacted the metadata table; our next write goes into the compacted file slices.
      const mdt = (await MetadataTable.open(openStorage(table)))!;
      const compaction = mdt.timeline
        .completed()
        .filter((i) => i.action === 'commit')
        .at(-1);
      assert.ok(compaction, 'Spark compacted the metadata table');
      const ours = rows([1, 42], 8);
      const result = await ourWrite(table, name, ours, 'upsert');
      for (const row of ours) expected.set(row.id, row);
      // Every log file's slice, with the metadata timeline, so that a failure says which slice was taken instead.
      const slices = result.metadataTable.deltaCommit!.logFiles.map((log) => `${log.partition}/${log.fileId}@${log.baseInstant}`);
      assert.deepEqual(
        slices.filter((slice) => !slice.endsWith(`@${compaction.time}`)),
        [],
        `our log files extend the compacted slices of ${compaction.time}; the metadata timeline: ${mdt.timeline.instants.map((i) => `${i.time}.${i.action}.${i.state}`).join(' ')}`,
      );
      await validate(t, table, `${testCase.name} after our upsert on Spark's compaction`, testCase.checks);
      const last = await readBoth(table, `${testCase.name} at the end`);
      assert.deepEqual(
        last.map((row) => Number(row['id'])).sort((a, b) => a - b),
        [...expected.keys()].sort((a, b) => a - b),
      );
    });
  }

  it('a metadata table made as Hudi initializes one on an empty table (test helper) is one Hudi validates and writes on', async (t) => {
    const name = 'mdt_helper';
    const table = join(tempDir('mdt-interop-helper-'), name);
    const storage = openStorage(table);
    await createTable(storage, newTableOptionsFromWriteProperties(ourProps(name), 'test'));
    await initMetadataTable(storage, ['files', 'column_stats', 'bloom_filters', 'record_index']);
    // JSON types our writer keeps as they are: BIGINT, STRING, DOUBLE, BOOLEAN.
    const simple = (ids: readonly number[], version: number) => rows(ids, version).map(({ id, name: n, ts, f, b, dt }) => ({ id, name: n, ts, f, b, dt }));
    await ourWrite(table, name, simple(range(1, 10), 2), 'insert');
    await ourWrite(table, name, simple(range(5, 14), 4), 'upsert');
    const checks = CASES[2]!.checks;
    await validate(t, table, 'helper-made metadata table after our insert and upsert', checks);
    await readBoth(table, 'helper-made metadata table');
    await hudi.write(table, {
      schema: 'id BIGINT, name STRING, ts BIGINT, f DOUBLE, b BOOLEAN, dt STRING',
      rows: simple([1, 2, 20], 6),
      options: sparkOptions(name, CASES[2]!.spark),
    });
    await validate(t, table, "helper-made metadata table after Spark's upsert", checks);
    const ids = (await readBoth(table, 'after Spark')).map((row) => Number(row['id']));
    assert.deepEqual(
      ids.sort((a, b) => a - b),
      [...range(1, 14), 20],
    );
  });
});
