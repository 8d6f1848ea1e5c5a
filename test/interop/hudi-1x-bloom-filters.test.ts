/**
 * Our writer, clustering and clean keep the `bloom_filters` partition of a Hudi 1.x metadata table that Spark
 * created (`hoodie.metadata.index.bloom.filter.enable=true`), judged by Hudi 1.0.2 and 1.1.1 on Spark 3.5.1 (one JVM
 * per release). Spark writes a copy-on-write table; we upsert, insert, cluster and clean on top; after each, the
 * metadata table's deltacommit wrote a log file into bloom_filters, `hudi_metadata()` equals what reader-1x reads
 * (bloom-filter records included), and Hudi's metadata validation passes with its `bloom-filters` check. Spark then
 * upserts on top and reads the same rows. On a merge-on-read table: our upsert's log files get no bloom filter, our
 * compaction's base files get theirs, and Spark upserts on top.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MetadataRecord } from '../../lib/metadata/records.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import type { WriteOperation } from '../../lib/writer/write-config.js';
import { jsonLines, propertiesFile, runCli } from '../helpers/cli.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_SCHEMA, HUDI_1X_VERSIONS, hudi1xBatchFile, hudi1xRows, hudi1xWriteOptions, sparkInsertsSix } from '../helpers/hudi-1x-fixtures.js';
import { cleanKeepingLatestCommits } from '../helpers/interop-writer.js';
import { assertMetadata1xValidated, assertMirroredBefore } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';
import { clusterWithCli } from './clustering-helpers.js';

const BLOOM = { 'hoodie.metadata.index.bloom.filter.enable': 'true' };
const OUR_PROPS = new Map([['hoodie.datasource.write.precombine.field', 'ts'], ['hoodie.parquet.small.file.limit', '0'], ...Object.entries(BLOOM)]);
const PARTITIONS = ['files', 'column_stats', 'partition_stats', 'bloom_filters'];

const blooms = (records: readonly MetadataRecord[]) => records.flatMap((record) => (record.type === 4 ? [record] : []));

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`our commits keep the bloom_filters partition of a Hudi ${version} metadata table (table version ${tableVersion})`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`hudi-${version}-mdt-bloom-`);
    const table = join(root, 'cow');
    const sparkOptions = { ...hudi1xWriteOptions('mdtbloom', 'COPY_ON_WRITE'), ...BLOOM };
    let batch = 0;

    async function ours(operation: WriteOperation, ids: number[], path = table, extra: Record<string, string> = {}): Promise<string> {
      batch += 1;
      const input = hudi1xBatchFile(root, ids, batch);
      return (
        await writeBatch(new LocalStorage(path), {
          input: { file: input, format: 'jsonl' },
          operation,
          properties: new Map([...OUR_PROPS, ...Object.entries(extra)]),
        })
      ).instantTime;
    }

    /** The base files of completed instants in storage, as `<partition>/<name>`. */
    const baseFiles = async (path = table) => {
      const { timeline } = await HudiTable.open(new LocalStorage(path));
      const completed = new Set(timeline.completed().map((i) => i.time));
      return ['2024-01-01', '2024-01-02'].flatMap((partition) =>
        readdirSync(join(path, partition))
          .filter((name) => completed.has(/_(\d{17})\.parquet$/.exec(name)?.[1] ?? ''))
          .map((name) => `${partition}/${name}`),
      );
    };

    /** Hudi agrees, and the bloom filters we read are one per base file in storage, `instant`'s files stamped with it. */
    async function agree(step: string, instant?: string, path = table): Promise<MetadataRecord[]> {
      const records = await assertMetadata1xValidated(hudi, path, step);
      const files = await baseFiles(path);
      assert.equal(blooms(records).length, files.length, `${step}: one bloom filter per base file`);
      if (instant !== undefined) {
        const stamped = blooms(records).filter((record) => record.bloomFilter.timestamp === instant);
        assert.equal(stamped.length, files.filter((path) => path.endsWith(`_${instant}.parquet`)).length, `${step}: ${instant}'s files' filters`);
        assert.ok(stamped.length > 0, `${step}: ${instant} wrote base files`);
        assert.ok(stamped.every((record) => record.bloomFilter.type === 'DYNAMIC_V0' && !record.bloomFilter.isDeleted));
      }
      return records;
    }

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      assert.deepEqual(await sparkInsertsSix(hudi, table, sparkOptions), [...PARTITIONS].sort());
    });
    after(async () => hudi?.close());

    it('our upsert and insert write each new base file’s bloom filter as Hudi reads and validates them', async () => {
      await agree('Spark insert');
      for (const [operation, ids] of [
        ['upsert', [1, 2, 7]],
        ['insert', [8, 9, 10]],
      ] as const) {
        const instant = await ours(operation, [...ids]);
        assertMirroredBefore(table, instant, 'commit', PARTITIONS);
        await agree(`our ${operation} ${instant}`, instant);
      }
    });

    it('our clustering writes the new files’ bloom filters; the replaced ones stay until cleaned', async () => {
      const { instantTime } = clusterWithCli(table, { 'hoodie.metadata.index.bloom.filter.enable': 'true' });
      assertMirroredBefore(table, instantTime, 'replacecommit', PARTITIONS);
      await agree(`our clustering ${instantTime}`, instantTime);
    });

    it('our clean deletes the cleaned files’ bloom filters', async () => {
      // An upsert after the clustering puts the replaced file groups and the clustered slices behind the one commit kept.
      const upsert = await ours('upsert', [1, 2]);
      await agree(`our upsert ${upsert} after the clustering`, upsert);
      const before = (await baseFiles()).length;
      const result = await cleanKeepingLatestCommits(table, 1);
      assert.equal(result.outcome, 'cleaned');
      const clean = readdirSync(join(table, '.hoodie/timeline')).find((n) => /^\d{17}_\d{17}\.clean$/.test(n))!;
      const instant = clean.slice(0, 17);
      const logs = readdirSync(join(table, '.hoodie/metadata/bloom_filters')).filter((n) => n.includes(`_${instant}.log.1_`));
      assert.ok(logs.length > 0, 'the clean wrote bloom-filter tombstones');
      const records = await agree(`our clean ${instant}`);
      assert.ok(blooms(records).length < before, 'fewer bloom filters after the clean');
    });

    it('Spark upserts on top; our write compacts the metadata table, bloom_filters included; Spark upserts again', async () => {
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([2, 9, 11], 50),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': 'upsert' },
      });
      await agree('Spark upsert on ours');
      const compactions = () => readdirSync(join(table, '.hoodie/metadata/.hoodie/timeline')).filter((n) => /^\d{17}_\d{17}\.commit$/.test(n));
      const compacted = compactions();
      const instant = await ours('upsert', [3, 11], table, { 'hoodie.metadata.compact.max.delta.commits': '1' });
      const ourCompaction = compactions().filter((name) => !compacted.includes(name));
      assert.equal(ourCompaction.length, 1, 'our write compacted the metadata table first');
      const hfiles = readdirSync(join(table, '.hoodie/metadata/bloom_filters')).filter((n) => n.endsWith(`_${ourCompaction[0]!.slice(0, 17)}.hfile`));
      assert.ok(hfiles.length > 0, 'our compaction wrote bloom_filters HFile base files');
      await agree(`our upsert ${instant} after our metadata-table compaction`, instant);
      await hudi.write(table, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([4, 12], 51),
        options: { ...sparkOptions, 'hoodie.datasource.write.operation': 'upsert' },
      });
      await agree('Spark upsert on our metadata-table compaction');
      assert.match(readFileSync(join(table, '.hoodie/hoodie.properties'), 'utf8'), /hoodie\.table\.metadata\.partitions=.*bloom_filters/);
    });

    it('merge-on-read: our upsert (log files get none) and our compaction (its base files get theirs); Spark upserts on top', async () => {
      const mor = join(root, 'mor');
      const morOptions = { ...hudi1xWriteOptions('mdtbloommor', 'MERGE_ON_READ'), ...BLOOM };
      await sparkInsertsSix(hudi, mor, morOptions);
      await agree('Spark merge-on-read insert', undefined, mor);
      const upsert = await ours('upsert', [1, 2], mor);
      assert.ok(
        ['2024-01-01', '2024-01-02'].every((partition) => readdirSync(join(mor, partition)).some((name) => name.includes(`_${upsert}.log.`))),
        'the upsert wrote log files',
      );
      assertMirroredBefore(mor, upsert, 'deltacommit', ['files', 'column_stats', 'partition_stats']);
      assert.ok(!readdirSync(join(mor, '.hoodie/metadata/bloom_filters')).some((name) => name.includes(`_${upsert}.log.`)), 'no bloom filters for log files');
      await agree(`our merge-on-read upsert ${upsert}`, undefined, mor);
      const run = runCli([
        'compact',
        mor,
        '--mode',
        'scheduleAndExecute',
        '--props',
        propertiesFile({ 'hoodie.compact.inline.max.delta.commits': '1', ...BLOOM }),
        '--json',
      ]);
      assert.equal(run.code, 0, run.stderr);
      const [output] = jsonLines(run.stdout) as [{ runs: { instantTime: string; outcome: string }[] }];
      const compaction = output.runs[0];
      assert.ok(compaction?.outcome === 'committed', run.stdout);
      assertMirroredBefore(mor, compaction.instantTime, 'commit', PARTITIONS);
      await agree(`our compaction ${compaction.instantTime}`, compaction.instantTime, mor);
      await hudi.write(mor, {
        schema: HUDI_1X_SCHEMA,
        rows: hudi1xRows([2, 7], 60),
        options: { ...morOptions, 'hoodie.datasource.write.operation': 'upsert' },
      });
      await agree('Spark upsert on our compaction', undefined, mor);
    });
  });
}
