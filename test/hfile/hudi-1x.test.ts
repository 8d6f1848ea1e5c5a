/**
 * HFiles that Hudi 1.0.2 and 1.1.1 wrote into the metadata table of a version 6 table (Spark 3.5,
 * hoodie.write.table.version=6, column stats on, compacted after every commit): a `files` base file, a
 * `column_stats` base file and a `files` log file (`files.log.1`) whose HFile data block holds a deltacommit's records.
 * test/fixtures/hfile-1x/README.md says how they were made.
 *
 * Hudi 1.0 writes HFiles with HBase's writer, as 0.x does. Hudi 1.1 writes them with its own writer, whose data
 * index and `hfile.LASTKEY` hold the row alone (u16 length + bytes), not a KeyValue key: a reader that takes them
 * for KeyValue keys stops at the first index entry, and every write of ours to such a table failed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FileInfoKey, readHFile, readHudiHFile } from '../../lib/hfile/index.js';
import { iterateLogBlocks } from '../../lib/log-format/index.js';
import { decodeMetadataRecord } from '../../lib/metadata/codec.js';
import type { MetadataRecord } from '../../lib/metadata/records.js';
import { metadataRecordTypeOf } from '../../lib/metadata/schema.js';
import { REPO_ROOT } from '../helpers/paths.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/hfile-1x');
const PARTITIONS = ['2024-01-01', '2024-01-02'];

const bytesOf = (version: string, name: string) => new Uint8Array(readFileSync(join(FIXTURES, version, name)));

function recordsOf(bytes: Uint8Array, location: string): Map<string, MetadataRecord> {
  const file = readHudiHFile(bytes, { location });
  // Decoded with the writer's schema, as the metadata reader does (1.x adds fields to HoodieMetadataRecord).
  const type = metadataRecordTypeOf(file.schema ?? '');
  return new Map(file.records.map((record) => [record.key, decodeMetadataRecord(record.value, record.key, type)]));
}

function assertFilesPartition(records: Map<string, MetadataRecord>, what: string): void {
  assert.deepEqual([...records.keys()].sort(), ['2024-01-01', '2024-01-02', '__all_partitions__'], `${what}: keys`);
  const all = records.get('__all_partitions__');
  assert.ok(all !== undefined && 'files' in all, `${what}: the partition list`);
  assert.deepEqual([...all.files.keys()].sort(), PARTITIONS, `${what}: partitions listed`);
  for (const partition of PARTITIONS) {
    const record = records.get(partition);
    assert.ok(record !== undefined && 'files' in record, `${what}: ${partition}`);
    assert.ok(record.files.size > 0, `${what}: ${partition} lists files`);
    for (const [name, entry] of record.files) {
      assert.match(name, /^[0-9a-f-]+-0_\d+-\d+-\d+_\d{17}\.parquet$/, `${what}: ${partition}/${name}`);
      assert.ok(entry.isDeleted || entry.size > 0, `${what}: ${name} has a size`);
    }
  }
}

describe("HFiles of Hudi 1.x's metadata table", () => {
  for (const version of ['1.0.2', '1.1.1']) {
    it(`${version}: the files partition's base file, read whole and by key`, () => {
      const bytes = bytesOf(version, 'files.hfile');
      assertFilesPartition(recordsOf(bytes, `${version}/files.hfile`), version);
      const file = readHFile(bytes, { location: `${version}/files.hfile` });
      assert.equal(file.get('2024-01-02')?.key, '2024-01-02');
      assert.equal(file.get('2024-01-03'), undefined);
      assert.deepEqual(
        [...file.cellsFrom('2024-01-02')].map((cell) => cell.key),
        ['2024-01-02', '__all_partitions__'],
      );
      assert.equal(new TextDecoder().decode(file.lastKey?.row), '__all_partitions__');
    });

    it(`${version}: the column_stats partition's base file`, () => {
      const records = recordsOf(bytesOf(version, 'column_stats.hfile'), `${version}/column_stats.hfile`);
      assert.ok(records.size > 0);
      const columns = new Set<string>();
      for (const record of records.values()) {
        assert.ok('columnStats' in record, 'a column stats record');
        columns.add(String(record.columnStats.columnName));
      }
      for (const column of ['id', 'name', 'ts']) assert.ok(columns.has(column), `${version}: stats of ${column}`);
    });

    it(`${version}: a deltacommit's HFile data block in a files log file`, () => {
      const bytes = bytesOf(version, 'files.log.1');
      const blocks = [...iterateLogBlocks(bytes, `${version}/files.log.1`)].filter((block) => block.type === 'HFILE_DATA_BLOCK');
      assert.equal(blocks.length, 1);
      const block = blocks[0]!;
      assert.ok(block.type === 'HFILE_DATA_BLOCK');
      assertFilesPartition(recordsOf(block.content, `${version}/files.log.1`), `${version} log block`);
    });
  }

  it("tells the writers apart: 1.1.1's data index and last key hold the row alone, 1.0.2's a KeyValue key", () => {
    for (const [version, rowOnly] of [
      ['1.0.2', false],
      ['1.1.1', true],
    ] as const) {
      const file = readHFile(bytesOf(version, 'files.hfile'));
      assert.ok(file.dataIndex.length > 0);
      for (const entry of file.dataIndex) {
        assert.equal(entry.key.length === 2 + entry.firstKey.row.length, rowOnly, `${version}: index key of ${entry.offset}`);
      }
      const lastKey = file.fileInfo.get(FileInfoKey.LAST_KEY);
      assert.ok(lastKey instanceof Uint8Array);
      assert.equal(lastKey.length === 2 + '__all_partitions__'.length, rowOnly, `${version}: hfile.LASTKEY`);
    }
  });
});
