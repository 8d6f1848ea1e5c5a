/**
 * Column stats of decimals wider than Hudi's DecimalWrapper (decimal(30, 15)): DECIMAL(38,10) holding 26 integer
 * digits and DECIMAL(38,20) holding 20 decimals, on merge-on-read tables Hudi 1.0.2 (table version 8) and 1.1.1 (9)
 * write, the metadata table and its column stats on, judged by that release on Spark 3.5.1. 1.1's index version 2
 * stores them as their unscaled value at the column's scale (ValueType.DECIMAL, "precision,scale"); 1.0 does not index
 * them. Our records for Spark's base file equal Spark's; our upsert (a log file) and insert (a base file) on top are
 * read alike by Spark and by us, `hudi_metadata()` equals what we read, and Spark's data skipping on both columns finds
 * the rows a plain read finds, reading fewer files on 1.1. Spark upserts on top. Two Spark writes per release.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { columnStatsRecords1x, columnsToIndex1x } from '../../lib/metadata/convert-1x.js';
import { readStoredFooter } from '../../lib/metadata/footers.js';
import { openStorage } from '../../lib/storage/index.js';
import { HudiTable } from '../../lib/table/table.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { HUDI_1X_VERSIONS } from '../helpers/hudi-1x-fixtures.js';
import { parquetFromRows } from '../helpers/interop-writer.js';
import { assertDataSkippingAgrees, assertMetadata1xAgrees, comparableMetadataRow, metadata1xRecords, sparkMetadataRow } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA = 'id BIGINT, name STRING, ts BIGINT, wide DECIMAL(38,10), fine DECIMAL(38,20), part STRING';
const DUCKDB_TYPES = { id: 'BIGINT', name: 'VARCHAR', ts: 'BIGINT', wide: 'DECIMAL(38,10)', fine: 'DECIMAL(38,20)', part: 'VARCHAR' };
const OPTIONS = {
  'hoodie.table.name': 'wide_decimals',
  'hoodie.datasource.write.table.type': 'MERGE_ON_READ',
  'hoodie.datasource.write.recordkey.field': 'id',
  'hoodie.datasource.write.partitionpath.field': 'part',
  'hoodie.datasource.write.precombine.field': 'ts',
  'hoodie.metadata.enable': 'true',
  'hoodie.metadata.index.column.stats.enable': 'true',
  'hoodie.embed.timeline.server': 'false',
  'hoodie.parquet.small.file.limit': '0',
  'hoodie.clean.automatic': 'false',
  'hoodie.archive.automatic': 'false',
  'hoodie.insert.shuffle.parallelism': '1',
  'hoodie.upsert.shuffle.parallelism': '1',
};
const SPARK_ROWS = [
  { id: 1, name: 'a1', ts: 1, wide: '12345678901234567890123456.7890123456', fine: '0.12345678901234567891', part: 'a' },
  { id: 2, name: 'a2', ts: 1, wide: '-0.0000000001', fine: '-123456789012345678.00000000000000000001', part: 'a' },
  { id: 3, name: 'a3', ts: 1, wide: '1.5000000000', fine: '7.00000000000000000000', part: 'a' },
];
/** Our upsert of id 2 (a log file in partition a) and insert of ids 5 and 6 (a base file in partition b). */
const OUR_UPSERT = [{ id: 2, name: 'a2-ours', ts: 2, wide: '-98765432109876543210987654.3210987654', fine: '-0.00000000000000000009', part: 'a' }];
const OUR_INSERT = [
  { id: 5, name: 'b5', ts: 2, wide: '99999999999999999999999999.9999999999', fine: '8.00000000000000000001', part: 'b' },
  { id: 6, name: 'b6', ts: 2, wide: '50000000000000000000000000.0000000001', fine: '9.50000000000000000000', part: 'b' },
];
const WHERES = {
  /** Only our base file in b. */
  wideAbove: 'wide > 40000000000000000000000000',
  /** Only our log file's row. */
  wideBelow: 'wide < -90000000000000000000000000',
  tinyNegative: 'fine > -0.0000000000000000001 AND fine < -0.00000000000000000005',
  /** Only our base file in b: Spark's in a ends at 7. */
  fineAbove: 'fine > 7.00000000000000000001',
};
const SKIPPING = { 'hoodie.metadata.enable': 'true', 'hoodie.enable.data.skipping': 'true' };

async function ourWrite(path: string, operation: 'insert' | 'upsert', rows: readonly Record<string, unknown>[]): Promise<void> {
  const file = await parquetFromRows(tempDir('wide-decimals-input-'), rows, DUCKDB_TYPES);
  await writeBatch(openStorage(path), { input: { file, format: 'parquet' }, operation, properties: new Map([['hoodie.metadata.enable', 'true']]) });
}

for (const version of HUDI_1X_VERSIONS) {
  const tableVersion = version === '1.0.2' ? 8 : 9;
  describe(`column stats of wide decimals on a merge-on-read table Hudi ${version} wrote (table version ${tableVersion})`, { timeout: 3_600_000 }, () => {
    let hudi: HudiHarness;
    const path = join(tempDir(`hudi-${version}-wide-decimals-`), 'wide_decimals');

    before(async () => {
      hudi = await startHudi({ hudiVersion: version });
      await hudi.write(path, { schema: SCHEMA, rows: SPARK_ROWS, options: { ...OPTIONS, 'hoodie.datasource.write.operation': 'insert' } });
    });

    after(async () => {
      await hudi?.close();
    });

    it("our column_stats records for Spark's base file equal Spark's", async () => {
      const storage = openStorage(path);
      const table = await HudiTable.open(storage);
      const [commit] = table.timeline.completed().filter((instant) => instant.action === 'deltacommit' || instant.action === 'commit');
      const metadata = await readCommitMetadata(storage, commit!, table.layout);
      const [stat] = metadata.partitionToWriteStats['a'] ?? [];
      const filePath = stat?.path ?? '';
      assert.ok(filePath.endsWith('.parquet'), `Spark wrote a base file: ${filePath}`);
      const columns = columnsToIndex1x(metadata.extraMetadata['schema'] ?? '', tableVersion, { populateMetaFields: true });
      const fileName = filePath.split('/').pop()!;
      const footer = await readStoredFooter(storage, filePath, stat!.fileSizeInBytes);
      const comparable = (records: Awaited<ReturnType<typeof metadata1xRecords>>) =>
        records.map((record) => JSON.stringify(comparableMetadataRow(sparkMetadataRow(record)))).sort();
      const theirs = (await metadata1xRecords(path)).filter((record) => record.type === 3 && record.columnStats.fileName === fileName);
      const ours = columnStatsRecords1x('a', fileName, footer, columns, tableVersion);
      assert.deepEqual(comparable(ours), comparable(theirs));
      const indexed = theirs.map((record) => (record.type === 3 ? record.columnStats.columnName : '')).sort();
      if (tableVersion === 9) {
        assert.ok(indexed.includes('wide') && indexed.includes('fine'), `1.1 indexes both decimals: ${indexed.join(', ')}`);
        const wide = theirs.find((record) => record.type === 3 && record.columnStats.columnName === 'wide');
        assert.deepEqual(wide?.type === 3 ? wide.columnStats.valueType : undefined, { typeOrdinal: 10, additionalInfo: '38,10' });
      } else {
        assert.ok(!indexed.includes('wide') && !indexed.includes('fine'), `1.0 leaves both decimals out: ${indexed.join(', ')}`);
      }
    });

    it('our upsert and insert on top: Spark reads them, its data skipping on the decimals finds the right rows; Spark upserts on', async () => {
      await ourWrite(path, 'upsert', OUR_UPSERT);
      await ourWrite(path, 'insert', OUR_INSERT);
      const files = readdirSync(join(path, 'a'), { withFileTypes: true });
      assert.ok(
        files.some((entry) => entry.name.includes('.log.')),
        'our upsert wrote a log file',
      );
      await assertMetadata1xAgrees(hudi, path, 'after our writes');
      await assertDataSkippingAgrees(hudi, path, Object.values(WHERES));
      const ids = async (where: string) => (await hudi.read(path, { options: SKIPPING, where })).rows.map((row) => Number(row['id'])).sort();
      assert.deepEqual(
        [await ids(WHERES.wideAbove), await ids(WHERES.wideBelow), await ids(WHERES.tinyNegative), await ids(WHERES.fineAbove)],
        [[5, 6], [2], [2], [5, 6]],
      );
      if (tableVersion === 9) {
        for (const where of [WHERES.wideAbove, WHERES.fineAbove]) {
          const [skipped, plain] = [
            await hudi.scanFiles(path, { where, options: SKIPPING }),
            await hudi.scanFiles(path, { where, options: { 'hoodie.metadata.enable': 'false' } }),
          ];
          assert.ok(skipped.numFiles < plain.numFiles, `${where}: data skipping read ${skipped.numFiles} of ${plain.numFiles} files`);
        }
      }

      await hudi.write(path, {
        schema: SCHEMA,
        rows: [{ id: 5, name: 'b5-spark', ts: 3, wide: '-1.0000000000', fine: '0.00000000000000000002', part: 'b' }],
        options: { ...OPTIONS, 'hoodie.datasource.write.operation': 'upsert' },
      });
      await assertMetadata1xAgrees(hudi, path, "after Spark's upsert");
      await assertDataSkippingAgrees(hudi, path, Object.values(WHERES));
      assert.deepEqual(await ids(WHERES.wideAbove), [6]);
    });
  });
}
