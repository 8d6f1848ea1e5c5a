/**
 * Bin-pack clustering by binary copy (lib/parquet/binary-copy.ts through executeGroup): a group without sort columns
 * copies its inputs' row groups into the outputs, rewriting only `_hoodie_file_name`, with footers merged from the
 * inputs' (key range, bloom filter); outputs roll at row group boundaries to the target size. Checked with pyarrow
 * and DuckDB over the files and our snapshot reader; and the fallbacks, each with its reason in the report.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  BLOOM_FILTER_FOOTER_KEY,
  BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
  type BloomFilterTypeCode,
  expectedPassRate,
  HoodieBloomFilter,
  MAX_RECORD_KEY_FOOTER_KEY,
  MIN_RECORD_KEY_FOOTER_KEY,
} from '../../lib/base-file/bloom-filter.js';
import { hudiFooter, hudiFooterValues, mergedHudiFooter } from '../../lib/base-file/footer.js';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { FILE_METADATA, footerKeyValues, readFileFooter } from '../../lib/parquet/footer.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { withEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/fixtures.js';
import { pyarrowRead } from '../helpers/oracle.js';
import { createSmallFilesTable } from '../helpers/small-files-table.js';

const ROW_COLUMNS = [
  '_hoodie_commit_time',
  '_hoodie_commit_seqno',
  '_hoodie_record_key',
  '_hoodie_partition_path',
  'id',
  'name',
  'birthday',
  'createTime',
  'position',
  'notes',
  'dt',
];

async function footerOf(file: string): Promise<{ keyValues: Map<string, string>; rowGroups: number }> {
  const handle = await open(file, 'r');
  try {
    const { metadata } = await readFileFooter(handle, file);
    const keyValues = new Map([...footerKeyValues(metadata)].map(([key, value]) => [key, Buffer.from(value).toString('utf8')]));
    return { keyValues, rowGroups: metadata.list(FILE_METADATA.rowGroups)?.items.length ?? 0 };
  } finally {
    await handle.close();
  }
}

function canonical(rows: readonly Record<string, unknown>[]): string[] {
  return rows.map((row) => JSON.stringify(ROW_COLUMNS.map((column) => String(row[column])))).sort();
}

/** The bloom filter of a footer's key/values. */
function bloomOf(keyValues: ReadonlyMap<string, string>): HoodieBloomFilter {
  return HoodieBloomFilter.deserialize(keyValues.get(BLOOM_FILTER_FOOTER_KEY)!, keyValues.get(BLOOM_FILTER_TYPE_CODE_FOOTER_KEY) as BloomFilterTypeCode);
}

describe('bin-pack clustering by binary copy', () => {
  it('copies row groups into files cut at row group boundaries; only _hoodie_file_name changes; footers merged', async () => {
    const dir = tempDir('binary-copy-');
    // 2 partitions × 6 files of 400 rows; each file one row group.
    const made = await createSmallFilesTable({ dir, partitions: 2, commits: 6, rowsPerFile: 400, notesBytes: 64 });
    const storage = openStorage(dir);
    const before = (await readSnapshot(await HudiTable.open(storage), { includeMetaFields: true })).rows;
    const perPartition = made.bytes / made.partitions.length;
    const config = resolveClusteringConfig({
      event: {
        'hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes': '0',
        // About three outputs per partition (two input files each).
        'hoodie.clustering.plan.strategy.target.file.max.bytes': String(Math.ceil(perPartition / 2.5)),
        'hoodie.clustering.plan.strategy.small.file.limit': String(1 << 30),
      },
    }).config;
    await withEngine(async (engine) => {
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
        mode: 'scheduleAndExecute',
        config,
        lock,
        engine,
        tempDir: tempDir(),
        force: true,
      });
      const report = result.commit!.report!;
      assert.deepEqual(report.execution, { binaryCopyGroups: 2, rewrittenGroups: 0, rewriteReasons: [] });

      const after = (await readSnapshot(await HudiTable.open(storage), { includeMetaFields: true })).rows;
      assert.deepEqual(canonical(after), canonical(before), 'the same rows, meta columns but the file name included');

      const stats = Object.values(result.commit!.metadata.partitionToWriteStats).flat();
      assert.equal(stats.length, 6, 'three outputs per partition');
      let rowsInFiles = 0;
      for (const stat of stats) {
        const file = join(dir, stat.path!);
        const fileName = stat.path!.slice(stat.path!.lastIndexOf('/') + 1);
        const { keyValues, rowGroups } = await footerOf(file);
        assert.equal(rowGroups, 2, 'two input row groups copied');
        assert.ok(statSync(file).size <= config.targetFileMaxBytes, `${fileName} within the target size`);
        // pyarrow, not our reader or DuckDB, reads the file: rows, and the file name column holding the new name.
        const rows = pyarrowRead([file]);
        assert.equal(rows.length, stat.numWrites);
        rowsInFiles += rows.length;
        assert.ok(
          rows.every((row) => row['_hoodie_file_name'] === fileName),
          'every row names its new file',
        );
        const direct = (await engine.readRows([file], { columns: ['_hoodie_file_name', '_hoodie_record_key'] })).rows;
        assert.deepEqual(
          direct.map((row) => row['_hoodie_record_key']),
          rows.map((row) => row['_hoodie_record_key']),
          'DuckDB reads the same keys in the same order',
        );
        assert.ok(direct.every((row) => row['_hoodie_file_name'] === fileName));
        // The merged footer: every key in the range and passing the bloom filter.
        const keys = rows.map((row) => String(row['_hoodie_record_key']));
        const bloom = bloomOf(keyValues);
        assert.ok(
          keys.every((key) => bloom.mightContain(key)),
          'the bloom filter holds every key',
        );
        const sorted = [...keys].sort();
        assert.equal(keyValues.get(MIN_RECORD_KEY_FOOTER_KEY), sorted[0]);
        assert.equal(keyValues.get(MAX_RECORD_KEY_FOOTER_KEY), sorted.at(-1));
        assert.ok(keyValues.has('parquet.avro.schema'));
      }
      assert.equal(rowsInFiles, made.rows);
    });
  });

  it("builds footers from the record keys when the inputs' bloom filters cannot be merged", async () => {
    const dir = tempDir('binary-copy-keys-');
    // No bloom filters in the inputs' footers.
    const made = await createSmallFilesTable({ dir, partitions: 1, commits: 4, rowsPerFile: 200, bloom: false });
    const storage = openStorage(dir);
    const config = resolveClusteringConfig({ event: { 'hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes': '0' } }).config;
    await withEngine(async (engine) => {
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
        mode: 'scheduleAndExecute',
        config,
        lock,
        engine,
        tempDir: tempDir(),
        force: true,
      });
      const [stat] = Object.values(result.commit!.metadata.partitionToWriteStats).flat();
      const file = join(dir, stat!.path!);
      const { keyValues, rowGroups } = await footerOf(file);
      assert.equal(rowGroups, 4);
      const bloom = bloomOf(keyValues);
      const keys = pyarrowRead([file]).map((row) => String(row['_hoodie_record_key']));
      assert.equal(keys.length, made.rows);
      assert.ok(keys.every((key) => bloom.mightContain(key)));
      assert.equal(keyValues.get(MIN_RECORD_KEY_FOOTER_KEY), [...keys].sort()[0]);
    });
  });

  it("a sorted rewrite's outputs take the inputs' merged bloom filter where their own would be full, else hash their keys", async () => {
    // A small filter (480 bits, 7 hashes, 50 keys a row, 2 rows at most): 3,000 keys set every bit of both rows.
    const small = { numEntries: 50, fpp: 0.01, maxEntries: 100 };
    for (const [bloom, saturated] of [
      [small, true],
      [undefined, false],
    ] as const) {
      const dir = tempDir('sorted-footers-');
      const made = await createSmallFilesTable({ dir, partitions: 1, commits: 4, rowsPerFile: 1500, ...(bloom === undefined ? {} : { bloom }) });
      const storage = openStorage(dir);
      const inputFooters = await Promise.all(made.files.map(async (file) => hudiFooterValues((await footerOf(join(dir, file))).keyValues)));
      const config = resolveClusteringConfig({
        event: {
          'hoodie.clustering.plan.strategy.sort.columns': 'id',
          'hoodie.clustering.plan.strategy.target.file.max.bytes': String(Math.ceil(made.bytes / 2)),
          'hoodie.clustering.plan.strategy.small.file.limit': String(1 << 30),
        },
      }).config;
      await withEngine(async (engine) => {
        const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
          mode: 'scheduleAndExecute',
          config,
          lock: new StorageLockProvider(storage, { waitMs: 10_000 }),
          engine,
          tempDir: tempDir(),
          force: true,
          ...(bloom === undefined ? {} : { bloom }),
        });
        const stats = Object.values(result.commit!.metadata.partitionToWriteStats).flat();
        assert.equal(stats.length, 2);
        const merged = mergedHudiFooter(inputFooters, 'schema', { maxEntries: small.maxEntries });
        for (const stat of stats) {
          const { keyValues } = await footerOf(join(dir, stat.path!));
          const keys = pyarrowRead([join(dir, stat.path!)]).map((row) => String(row['_hoodie_record_key']));
          const sorted = [...keys].sort();
          assert.equal(keyValues.get(MIN_RECORD_KEY_FOOTER_KEY), sorted[0], 'its own key range');
          assert.equal(keyValues.get(MAX_RECORD_KEY_FOOTER_KEY), sorted.at(-1));
          const filter = bloomOf(keyValues);
          assert.ok(
            keys.every((key) => filter.mightContain(key)),
            'the bloom filter holds every key',
          );
          if (saturated) {
            assert.ok(expectedPassRate(small, keys.length) > 0.9999, 'its own filter would let every key through');
            assert.equal(keyValues.get(BLOOM_FILTER_FOOTER_KEY), merged.footer![BLOOM_FILTER_FOOTER_KEY], "the inputs' filters merged");
          } else {
            assert.equal(keyValues.get(BLOOM_FILTER_FOOTER_KEY), hudiFooter(keys, 'schema')[BLOOM_FILTER_FOOTER_KEY], "Hudi's filter of its own keys");
          }
        }
      });
    }
  });

  it('rewrites instead, with the reason in the report: small row groups, sort columns, binary copy off', async () => {
    const dir = tempDir('binary-copy-fallback-');
    await createSmallFilesTable({ dir, partitions: 1, commits: 3, rowsPerFile: 50 });
    const storage = openStorage(dir);
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /binary\.copy\.min\.row\.group\.bytes/],
      [{ 'hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes': '0', 'hoodie.clustering.plan.strategy.sort.columns': 'id' }, /sorted by id/],
      [
        { 'hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes': '0', 'hoodie.clustering.plan.strategy.binary.copy.enable': 'false' },
        /binary copy is off/,
      ],
    ];
    await withEngine(async (engine) => {
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      for (const [event, reason] of cases) {
        const config = resolveClusteringConfig({ event }).config;
        const result = await runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
          mode: 'scheduleAndExecute',
          config,
          lock,
          engine,
          tempDir: tempDir(),
          force: true,
        });
        const execution = result.commit!.report!.execution!;
        assert.equal(execution.binaryCopyGroups, 0);
        assert.equal(execution.rewrittenGroups, 1);
        assert.match(execution.rewriteReasons[0]!, reason);
      }
    });
  });
});
