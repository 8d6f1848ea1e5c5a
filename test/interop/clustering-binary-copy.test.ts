/**
 * Bin-pack clustering by binary copy on a table real Hudi (0.15 on Spark 3.5.1) wrote: the Spark-written base files'
 * row groups are copied into our outputs (one and several per group), only `_hoodie_file_name` re-encoded and the
 * footers merged from Spark's (key range, bloom filter). Judged by Spark, hudi-rs, pyarrow and our reader; then a
 * Spark upsert through the bloom index finds every record in our files, which only works if the merged footers
 * hold every key.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveClusteringConfig } from '../../lib/clustering/config.js';
import { runClusteringJob } from '../../lib/clustering/job.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import type { Row } from '../../lib/engine/row-format.js';
import { StorageLockProvider } from '../../lib/lock/storage-lock.js';
import { FILE_METADATA, readFileFooter } from '../../lib/parquet/footer.js';
import { readSnapshot } from '../../lib/read/reader.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { canonicalRows, type HudiHarness, hudiToolchain, type RowSet, startHudi } from '../helpers/hudi.js';
import { pyarrowFileInfo, pyarrowRead } from '../helpers/oracle.js';
import { tempDir } from '../helpers/paths.js';
import {
  assertFileNamesMatchOutputs,
  commitJson,
  SCHEMA,
  sparkOptions,
  tableRow,
  timelineFiles,
  withoutFileName,
  writeSmallFiles,
} from './clustering-helpers.js';

const PARTITIONS = ['2024-02-01', '2024-02-02'];
const ROWS = 24;

let hudi: HudiHarness;
let table: string;
let sparkBefore: RowSet;

async function ourRows(path: string): Promise<Row[]> {
  return (await readSnapshot(await HudiTable.open(openStorage(path)), { includeMetaFields: true })).rows;
}

async function rowGroupsOf(file: string): Promise<number> {
  const handle = await open(file, 'r');
  try {
    return (await readFileFooter(handle, file)).metadata.list(FILE_METADATA.rowGroups)?.items.length ?? 0;
  } finally {
    await handle.close();
  }
}

/** Every column chunk's codec, as pyarrow reads the footers. */
function pyarrowCodecs(files: readonly string[]): string[] {
  const script = `
import json, sys
import pyarrow.parquet as pq
out = []
for path in json.load(sys.stdin):
    meta = pq.read_metadata(path)
    out += [meta.row_group(g).column(c).compression for g in range(meta.num_row_groups) for c in range(meta.num_columns)]
print(json.dumps(out))
`;
  return JSON.parse(execFileSync(hudiToolchain().python, ['-c', script], { input: JSON.stringify(files), encoding: 'utf8' })) as string[];
}

before(async () => {
  hudi = await startHudi();
  table = join(tempDir('interop-binary-copy-'), 'clustered');
  // 4 batches of 6 rows over 2 partitions: 4 Spark base files of 3 rows (one row group each) per partition.
  assert.equal(await writeSmallFiles(hudi, table, PARTITIONS, 4, 6), ROWS);
  sparkBefore = await hudi.read(table);
});

after(async () => {
  await hudi?.close();
});

describe('bin-pack clustering by binary copy of a Spark-written table', () => {
  const outputFileIds = new Set<string>();

  it("copies Spark's row groups into one output in one partition and three in the other: every reader reads the rows it read before", async () => {
    const storage = openStorage(table);
    const engine = await openParquetEngine();
    try {
      const lock = new StorageLockProvider(storage, { waitMs: 10_000 });
      const run = async (partition: string, target: string, compressionCodec?: string) => {
        const config = resolveClusteringConfig({
          event: {
            'hoodie.clustering.plan.strategy.partition.selected': partition,
            'hoodie.clustering.plan.strategy.binary.copy.min.row.group.bytes': '0',
            'hoodie.clustering.plan.strategy.target.file.max.bytes': target,
          },
        }).config;
        return runClusteringJob(await HudiTable.open(storage, { mode: 'write' }), {
          mode: 'scheduleAndExecute',
          config,
          lock,
          engine,
          tempDir: tempDir(),
          force: true,
          ...(compressionCodec === undefined ? {} : { compressionCodec }),
        });
      };
      // Spark's files are ~436 KB, nearly all of it the bloom filter: 600 KB a file makes three outputs of four files.
      // The second also recompresses Spark's gzip chunks to snappy (pages and offset indexes rewritten).
      const results = [await run(PARTITIONS[0]!, String(1 << 30)), await run(PARTITIONS[1]!, '600000', 'snappy')];
      for (const result of results) {
        assert.deepEqual(result.commit!.report!.execution, { binaryCopyGroups: 1, rewrittenGroups: 0, rewriteReasons: [] });
      }
      const counts = results.map((result) => Object.values(result.commit!.metadata.partitionToWriteStats).flat().length);
      // The plan's numOutputFileGroups (Hudi's ceil(group bytes / target)): 1, and ceil(4 × 436 KB / 600 KB) = 3.
      assert.deepEqual(counts, [1, 3], JSON.stringify(results.map((result) => result.scheduled!.groups)));

      const spark = await hudi.read(table);
      assert.deepEqual(withoutFileName(spark.rows), withoutFileName(sparkBefore.rows), 'Spark reads the same records, meta columns included');
      assert.deepEqual(canonicalRows((await hudi.hudiRsRead(table)).rows), canonicalRows(spark.rows), 'hudi-rs reads what Spark reads');
      assert.deepEqual(canonicalRows(await ourRows(table)), canonicalRows(spark.rows), 'our reader reads what Spark reads');
      // A filtered read, which lets parquet-mr use the copied (and rebuilt) column and offset indexes.
      await hudi.sql(`CREATE TABLE copied USING hudi LOCATION '${table}'`);
      const filtered = await hudi.sql('SELECT id, name FROM copied WHERE id IN (5, 6, 17) ORDER BY id');
      assert.deepEqual(
        filtered.rows.map((row) => row['id']),
        [5, 6, 17],
      );
      for (const [index, result] of results.entries()) {
        const commit = await commitJson(storage, result.instantTime!, 'replacecommit');
        assertFileNamesMatchOutputs(spark.rows, commit, [PARTITIONS[index]!]);
        const stats = Object.values(commit.partitionToWriteStats).flat();
        const files = stats.map((stat) => join(table, stat.path));
        // pyarrow reads our footers and pages; the row groups are Spark's, one per input file.
        const infos = pyarrowFileInfo(files);
        assert.deepEqual(
          infos.map((info) => info.rows),
          stats.map((stat) => stat.numWrites),
        );
        assert.ok(infos.every((info) => info.kv['hoodie_bloom_filter_type_code'] === 'DYNAMIC_V0' && info.kv['hoodie_min_record_key'] !== undefined));
        assert.equal(
          pyarrowRead(files).length,
          stats.reduce((total, stat) => total + stat.numWrites, 0),
        );
        const codecs = new Set(pyarrowCodecs(files));
        assert.deepEqual([...codecs], index === 0 ? ['GZIP'] : ['SNAPPY'], "Spark's gzip chunks kept, or recompressed to snappy");
        let rowGroups = 0;
        for (const file of files) rowGroups += await rowGroupsOf(file);
        assert.equal(rowGroups, 4, 'the four Spark row groups, copied');
        for (const stat of stats) outputFileIds.add(stat.fileId);
      }
    } finally {
      await engine.close();
    }
  });

  it('a Spark upsert of every record through the bloom index updates them in our files: no duplicates', async () => {
    const updates = Array.from({ length: ROWS }, (_, index) => tableRow(index + 1, PARTITIONS, 1));
    await hudi.write(table, {
      schema: SCHEMA,
      rows: [...updates, tableRow(ROWS + 1, PARTITIONS)],
      options: sparkOptions({ 'hoodie.datasource.write.operation': 'upsert', 'hoodie.index.type': 'BLOOM' }),
    });
    const storage = openStorage(table);
    const upsert = (await timelineFiles(storage))
      .filter((name) => name.endsWith('.commit'))
      .at(-1)!
      .slice(0, 17);
    const stats = Object.values((await commitJson(storage, upsert, 'commit')).partitionToWriteStats).flat();
    assert.equal(
      stats.reduce((total, stat) => total + stat.numUpdateWrites, 0),
      ROWS,
      'every key was found in a base file',
    );
    assert.ok(
      stats.filter((stat) => stat.numUpdateWrites > 0).every((stat) => outputFileIds.has(stat.fileId)),
      'the updates went into our file groups',
    );
    const rows = (await hudi.read(table)).rows;
    assert.equal(rows.length, ROWS + 1);
    assert.equal(new Set(rows.map((row) => row['id'])).size, ROWS + 1);
    assert.ok(rows.every((row) => row['name'] === `n${row['id'] as number}-v${row['id'] === ROWS + 1 ? 0 : 1}`));
  });
});
