/**
 * lib/metadata against Hudi 0.15's own classes and a Spark-written metadata table:
 * - the hashed ids and keys (ColumnIndexID, PartitionIndexID, FileIndexID) and mapRecordKeyToFileGroupIndex, from
 *   Hudi's classes through py4j, for short, long (past XXHash's 32-byte stripes) and non-ASCII inputs;
 * - HoodieMetadataRecord's schema as the 0.15 bundle compiles it;
 * - for every commit Spark made on a table with files, column_stats, bloom_filters and record_index, the records our
 *   convertCommitMetadata builds from that commit (its metadata and its files' footers) are exactly the records
 *   Spark's metadata writer put in the deltacommit of the same instant, key by key.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { convertCommitMetadata } from '../../lib/metadata/convert.js';
import { readStoredFooter } from '../../lib/metadata/footers.js';
import { columnIndexId, fileIndexId, partitionIndexId } from '../../lib/metadata/hash-ids.js';
import { METADATA_PARTITION_TYPES, type MetadataPartitionType, mapRecordKeyToFileGroupIndex } from '../../lib/metadata/partitions.js';
import { HOODIE_METADATA_RECORD_SCHEMA } from '../../lib/metadata/schema.js';
import { openStorage } from '../../lib/storage/index.js';
import { TIMELINE_LAYOUT_1 } from '../../lib/timeline/layout.js';
import { loadTimeline, readCommitMetadata } from '../../lib/timeline/timeline.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { normalizeChanges, sparkChanges } from '../helpers/metadata-records.js';
import { tempDir } from '../helpers/paths.js';

const INPUTS = [
  '',
  'a',
  'price',
  '2024-01-01',
  '.',
  'dt=2024-01-01/hh=05',
  'a-column-name-that-is-longer-than-thirty-two-bytes',
  'naïve/日本語/emoji-🙂',
  '7e3e694c-264a-4dc9-b93d-fae90ab7c84b-0_1-42-199_20240101000000000.parquet',
];
const KEYS = ['1', '42', 'polygenelubricants', 'id:7,name:Alice', 'zzzzzzzz', '日本語', 'a'.repeat(100)];

describe('metadata-table keys and records against Hudi 0.15', { timeout: 1_200_000 }, () => {
  let hudi: HudiHarness;
  before(async () => {
    hudi = await startHudi();
  });
  after(async () => {
    await hudi?.close();
  });

  it("hashed ids and file-group mapping equal Hudi's", async () => {
    const id = (cls: string, input: string) =>
      hudi.jvmEval({ call: 'asBase64EncodedString', on: { static: `org.apache.hudi.common.util.hash.${cls}`, args: [input] } });
    for (const input of INPUTS) {
      assert.equal(columnIndexId(input), await id('ColumnIndexID', input), `ColumnIndexID(${JSON.stringify(input)})`);
      assert.equal(partitionIndexId(input), await id('PartitionIndexID', input), `PartitionIndexID(${JSON.stringify(input)})`);
      assert.equal(fileIndexId(input), await id('FileIndexID', input), `FileIndexID(${JSON.stringify(input)})`);
    }
    for (const key of KEYS) {
      for (const count of [1, 2, 4, 10, 37]) {
        assert.equal(
          mapRecordKeyToFileGroupIndex(key, count),
          await hudi.jvmStatic('org.apache.hudi.metadata.HoodieTableMetadataUtil', 'mapRecordKeyToFileGroupIndex', [key, count]),
          `${key} over ${count}`,
        );
      }
    }
  });

  it("HoodieMetadataRecord's schema is the bundle's", async () => {
    assert.deepEqual(HOODIE_METADATA_RECORD_SCHEMA, await hudi.avroSchema('HoodieMetadataRecord'));
  });

  it("our records for each of Spark's commits are the ones Spark's metadata writer wrote", async (t) => {
    const name = 'mdt_keys';
    const table = join(tempDir('mdt-keys-'), name);
    const options = {
      'hoodie.table.name': name,
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.precombine.field': 'ts',
      'hoodie.datasource.write.partitionpath.field': 'dt',
      'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
      'hoodie.index.bloom.num_entries': '1000',
      'hoodie.metadata.enable': 'true',
      'hoodie.metadata.index.column.stats.enable': 'true',
      'hoodie.metadata.index.bloom.filter.enable': 'true',
      'hoodie.metadata.record.index.enable': 'true',
      'hoodie.index.type': 'RECORD_INDEX',
    };
    const schema = 'id BIGINT, name STRING, ts BIGINT, price DECIMAL(12,3), d DATE, t TIMESTAMP, f FLOAT, b BOOLEAN, n INT, dt STRING';
    const rows = (ids: number[], version: number) =>
      ids.map((id) => ({
        id,
        name: `n${id}-${version}`,
        ts: version,
        price: `${id * 7}.125`,
        d: `2023-12-${String(1 + (id % 28)).padStart(2, '0')}`,
        t: `2024-01-01T00:00:${String(id % 60).padStart(2, '0')}Z`,
        f: id / 4,
        b: id % 3 === 0,
        n: id % 2 === 0 ? null : id,
        dt: id % 2 === 0 ? '2024-01-02' : '2024-01-01',
      }));
    await hudi.write(table, { schema, rows: rows([1, 2, 3, 4, 5, 6], 1), options });
    await hudi.write(table, { schema, rows: rows([2, 3, 7, 8], 2), options });
    await hudi.write(table, { schema, rows: rows([1, 8], 3), options: { ...options, 'hoodie.datasource.write.operation': 'delete' } });

    const storage = openStorage(table);
    const db = await DuckDBInstance.create(':memory:');
    const connection = await db.connect();
    const keysOf = async (path: string): Promise<string[]> =>
      ((await connection.runAndReadAll(`SELECT _hoodie_record_key FROM read_parquet('${join(table, path)}')`)).getColumnsJS()[0] ?? []) as string[];
    const partitions = new Set<MetadataPartitionType>(METADATA_PARTITION_TYPES);
    let compared = 0;
    for (const instant of (await loadTimeline(storage, TIMELINE_LAYOUT_1)).completedWrites()) {
      const metadata = await readCommitMetadata(storage, instant, TIMELINE_LAYOUT_1);
      // Where records went, from the files: keys now in a file that its previous version did not hold, and keys gone.
      const updates: { recordKey: string; partitionPath: string; fileId: string }[] = [];
      const deletes: string[] = [];
      for (const stat of Object.values(metadata.partitionToWriteStats).flat()) {
        const now = new Set(await keysOf(stat.path!));
        const previousName = readdirSync(join(table, stat.partitionPath!)).find(
          (file) => file.startsWith(stat.fileId) && file.endsWith(`_${stat.prevCommit}.parquet`),
        );
        const before = new Set(previousName === undefined ? [] : await keysOf(`${stat.partitionPath}/${previousName}`));
        for (const key of now) if (!before.has(key)) updates.push({ recordKey: key, partitionPath: stat.partitionPath!, fileId: stat.fileId });
        for (const key of before) if (!now.has(key)) deletes.push(key);
      }
      const ours = await convertCommitMetadata(metadata, {
        instantTime: instant.time,
        partitions,
        populateMetaFields: true,
        footer: (path, size) => readStoredFooter(storage, path, size),
        properties: new Map(Object.entries(options)),
        recordIndex: { updates, deletes },
      });
      const theirs = sparkChanges(table, instant.time);
      for (const partition of METADATA_PARTITION_TYPES) {
        assert.deepEqual(normalizeChanges(ours.get(partition) ?? []), normalizeChanges(theirs.get(partition) ?? []), `${instant.time}: ${partition}`);
        compared += (theirs.get(partition) ?? []).length;
      }
    }
    connection.closeSync();
    assert.ok(compared > 60, `${compared} records compared`);
    t.diagnostic(`${compared} metadata records of 3 Spark commits equal ours`);
  });
});
