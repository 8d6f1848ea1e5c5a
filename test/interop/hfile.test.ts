/**
 * lib/hfile against real Apache Hudi 0.15 (Spark 3.5.1, test/helpers/hudi.ts):
 * - Spark writes a table whose metadata table has the files, column_stats and bloom_filters partitions and
 *   compacts them into HFile base files; we read every one of them and every HFile log block, and compare with
 *   Hudi's own HFile readers and with what Hudi's metadata procedures report.
 * - Hudi reads what we write: our base files in place of Spark's (Hudi's procedures and a metadata-backed Spark
 *   read see exactly our content), and our files through both of Hudi's HFile readers.
 * - Hudi's HFile writer with small blocks (many blocks, HBase "midpoint" index keys, a two-level index) against
 *   our reader and, uncompressed, against our writer byte for byte.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import avro from 'avsc';
import { parseBlockHeader, readBlock } from '../../lib/hfile/block.js';
import { compareBytes } from '../../lib/hfile/bytes.js';
import {
  type HudiHFileRecord,
  readHFile,
  readHFileCells,
  readHudiHFile,
  writeHFile,
  writeHudiBaseHFile,
  writeHudiLogBlockHFile,
} from '../../lib/hfile/index.js';
import { type HudiHarness, type RowSet, startHudi } from '../helpers/hudi.js';
import { tempDir } from '../helpers/paths.js';

const MDT_PARTITIONS = ['files', 'column_stats', 'bloom_filters'];
const PARTITIONS = ['2024-01-01', '2024-01-02'];

interface Snapshot {
  partitions: string[];
  files: Record<string, string[]>;
  rows: string[];
}

/** Every `.hfile` base file of the metadata table, by MDT partition. */
function baseFiles(table: string): string[] {
  return MDT_PARTITIONS.flatMap((partition) => {
    const dir = join(table, '.hoodie/metadata', partition);
    return readdirSync(dir)
      .filter((name) => name.endsWith('.hfile'))
      .sort()
      .map((name) => join(dir, name));
  });
}

/** The instant a base or log file name ends with (`..._<instant>.hfile`). */
const instantOf = (path: string): string => /_(\d+)\.hfile$/.exec(path)![1]!;

/**
 * The HFile contents of a log file's HFile data blocks, found by the log format's 8-byte content length that
 * precedes each block's content (a stand-in until lib/log-format parses log files).
 */
function logBlockHFiles(bytes: Buffer): Buffer[] {
  const text = bytes.toString('latin1');
  const found: Buffer[] = [];
  for (let trailer = text.indexOf('TRABLK"$'); trailer >= 0; trailer = text.indexOf('TRABLK"$', trailer + 1)) {
    const end = trailer + 4096;
    for (let start = text.indexOf('DATABLK*'); start >= 8 && start < trailer; start = text.indexOf('DATABLK*', start + 1)) {
      if (Number(bytes.readBigInt64BE(start - 8)) === end - start) found.push(bytes.subarray(start, end));
    }
  }
  return found;
}

/** An Avro record decoded with the value's writer type, its key field restored from the row as Hudi's readers do. */
function decodeRecord(type: avro.Type, record: HudiHFileRecord): Record<string, unknown> {
  const decoded = type.fromBuffer(Buffer.from(record.value)) as Record<string, unknown>;
  assert.equal(decoded['key'], '', `Hudi writes the key field of ${record.key} empty`);
  decoded['key'] = record.key;
  return decoded;
}

describe('HFile and real Hudi 0.15', { timeout: 900_000 }, () => {
  let hudi: HudiHarness;
  let table: string;
  let mdtType: avro.Type;
  let writerSchema: { fields: Array<{ name: string }> };
  /** What Hudi reported just before the last compaction, and after the last write. */
  let atCompaction: Snapshot;
  let before1: Snapshot;
  /** The instant of the metadata table's last compaction. */
  let compaction: string;

  const snapshot = async (): Promise<Snapshot> => {
    const partitions = (await hudi.sql(`CALL show_metadata_table_partitions(table => 'hfile_t')`)).rows.map((row) => String(row['partition'])).sort();
    const files: Record<string, string[]> = {};
    for (const partition of partitions) {
      const result: RowSet = await hudi.sql(`CALL show_metadata_table_files(table => 'hfile_t', partition => '${partition}')`);
      files[partition] = result.rows.map((row) => String(row['file_path'])).sort();
    }
    const read = await hudi.read(table, { options: { 'hoodie.metadata.enable': 'true' }, meta: false });
    return { partitions, files, rows: read.rows.map((row) => JSON.stringify(row)).sort() };
  };

  before(async () => {
    hudi = await startHudi();
    table = join(tempDir('hfile-hudi-'), 'hfile_t');
    const options = {
      'hoodie.table.name': 'hfile_t',
      'hoodie.datasource.write.recordkey.field': 'id',
      'hoodie.datasource.write.precombine.field': 'ts',
      'hoodie.datasource.write.partitionpath.field': 'dt',
      'hoodie.datasource.write.table.type': 'COPY_ON_WRITE',
      'hoodie.metadata.enable': 'true',
      'hoodie.metadata.index.column.stats.enable': 'true',
      'hoodie.metadata.index.bloom.filter.enable': 'true',
      'hoodie.metadata.compact.max.delta.commits': '2',
    };
    const writeCommit = async (commit: number): Promise<void> => {
      const rows = [0, 1, 2].map((i) => ({ id: commit * 10 + i, name: `n${commit}${i}`, ts: commit, dt: PARTITIONS[i % 2] }));
      await hudi.write(table, { schema: 'id BIGINT, name STRING, ts BIGINT, dt STRING', rows, options });
    };
    const mdtInstants = (): string[] => readdirSync(join(table, '.hoodie/metadata/.hoodie')).filter((name) => /^\d+\.(deltacommit|commit)$/.test(name));
    await writeCommit(0);
    await writeCommit(1);
    await hudi.sql(`CREATE TABLE hfile_t USING hudi LOCATION '${table}'`);
    // Values are written with HoodieMetadataRecord's schema behind Hudi's five `_hoodie_*` meta fields.
    const recordSchema = (await hudi.avroSchema('HoodieMetadataRecord')) as typeof writerSchema;
    writerSchema = JSON.parse(readHudiHFile(readFileSync(baseFiles(table)[0]!)).schema!) as typeof writerSchema;
    assert.deepEqual(
      writerSchema.fields.slice(0, 5).map((field) => field.name),
      ['_hoodie_commit_time', '_hoodie_commit_seqno', '_hoodie_record_key', '_hoodie_partition_path', '_hoodie_file_name'],
    );
    assert.deepEqual({ ...writerSchema, fields: writerSchema.fields.slice(5) }, recordSchema);
    mdtType = avro.Type.forSchema(writerSchema as unknown as avro.Schema);
    // Hudi compacts the metadata table at the start of the next write, up to the last delta commit: the base
    // files that compaction writes hold the state Hudi reports now.
    const lastDelta = mdtInstants()
      .filter((name) => name.endsWith('.deltacommit'))
      .sort()
      .at(-1)!
      .split('.')[0]!;
    atCompaction = await snapshot();
    await writeCommit(2);
    compaction = `${lastDelta}001`;
    assert.ok(mdtInstants().includes(`${compaction}.commit`), `no metadata-table compaction ${compaction}: ${mdtInstants().sort().join(', ')}`);
    before1 = await snapshot();
    assert.deepEqual(before1.partitions, PARTITIONS);
    assert.equal(before1.rows.length, 9);
  });

  after(async () => {
    await hudi?.close();
  });

  test('every base file Spark wrote reads as Hudi’s own two HFile readers read it', async (t) => {
    const paths = baseFiles(table);
    for (const partition of MDT_PARTITIONS)
      assert.ok(
        paths.some((path) => path.includes(`/${partition}/`)),
        `no ${partition} base file`,
      );
    let cells = 0;
    for (const path of paths) {
      const ours = readHudiHFile(readFileSync(path), { location: path });
      assert.equal(ours.file.trailer.compressionCodec, 'GZ');
      assert.equal(ours.file.dataIndex.length, 1, 'Hudi’s 1 MiB blocks hold these small files in one block');
      assert.deepEqual(JSON.parse(ours.schema!), writerSchema);
      const keys = ours.records.map((record) => record.key);
      assert.equal(keys.length, ours.file.entryCount);
      for (let i = 1; i < keys.length; i++) assert.ok(compareBytes(Buffer.from(keys[i - 1]!), Buffer.from(keys[i]!)) < 0, `keys out of order in ${path}`);
      const decoded = ours.records.map((record) => decodeRecord(mdtType, record));
      for (const record of decoded) assert.equal(record['_hoodie_file_name'], path.split('/').at(-1), 'base-file values name their file');
      for (const reader of ['native', 'hbase'] as const) {
        const theirs = await hudi.hfileRead(path, { reader, bloom: true, bloomKeys: [...keys, 'no-such-key'] });
        assert.equal(theirs.totalRecords, keys.length, `${reader} count of ${path}`);
        assert.deepEqual(
          decoded,
          theirs.records.map((value) => mdtType.fromBuffer(Buffer.from(value, 'base64'))),
          `${reader} records of ${path}`,
        );
        assert.deepEqual(theirs.minMaxKeys, [ours.minRecordKey, ours.maxRecordKey]);
        assert.deepEqual([keys[0] ?? '', keys.at(-1) ?? ''], [ours.minRecordKey, ours.maxRecordKey]);
        assert.equal(theirs.bloomTypeCode, ours.bloomFilter!.typeCode);
        assert.deepEqual(theirs.bloomContains, [...keys.map(() => true), false]);
      }
      cells += keys.length;
    }
    assert.ok(paths.length >= 5 && cells >= 20, `${paths.length} files, ${cells} cells`);
    t.diagnostic(`${paths.length} Spark base files, ${cells} cells`);
  });

  test('the newest files-partition base file holds what Hudi’s metadata procedures reported when it was compacted', () => {
    const files = baseFiles(table).filter((path) => path.includes('/files/'));
    const newest = files.reduce((a, b) => (instantOf(a) > instantOf(b) ? a : b));
    assert.equal(instantOf(newest), compaction);
    const ours = readHudiHFile(readFileSync(newest));
    assert.deepEqual(
      ours.records.map((record) => record.key),
      [...PARTITIONS, '__all_partitions__'],
    );
    const byKey = new Map(ours.records.map((record) => [record.key, decodeRecord(mdtType, record)]));
    const live = (key: string): string[] => {
      const metadata = byKey.get(key)!['filesystemMetadata'] as Record<string, { isDeleted: boolean }>;
      return Object.entries(metadata)
        .filter(([, info]) => !info.isDeleted)
        .map(([name]) => name)
        .sort();
    };
    assert.equal(byKey.get('__all_partitions__')!['type'], 1);
    assert.deepEqual(live('__all_partitions__'), atCompaction.partitions);
    for (const partition of PARTITIONS) {
      assert.equal(byKey.get(partition)!['type'], 2);
      assert.deepEqual(live(partition), atCompaction.files[partition]);
    }
  });

  test('the HFile data blocks of the metadata log files decode as Hudi decodes them, and Hudi reads ours', async (t) => {
    const scratch = tempDir('hfile-logblock-');
    let blocks = 0;
    let logCells = 0;
    for (const partition of MDT_PARTITIONS) {
      const dir = join(table, '.hoodie/metadata', partition);
      for (const name of readdirSync(dir).filter((file) => /\.log\.\d+_/.test(file) && !file.endsWith('.crc'))) {
        for (const content of logBlockHFiles(readFileSync(join(dir, name)))) {
          const cells = readHFileCells(content, { location: name });
          const ours = readHudiHFile(content);
          assert.deepEqual(ours.file.metaBlockNames, [], 'log-block HFiles have no bloom filter');
          const contentPath = join(scratch, `theirs-${blocks}.hfile`);
          writeFileSync(contentPath, content);
          const theirs = await hudi.hfileRead(contentPath, { fromBytes: true });
          const expected = theirs.records.map((value) => mdtType.fromBuffer(Buffer.from(value, 'base64')));
          assert.deepEqual(
            ours.records.map((record) => decodeRecord(mdtType, record)),
            expected,
          );
          assert.equal(cells.length, expected.length);
          logCells += cells.length;
          const rewritten = join(scratch, `ours-${blocks}.hfile`);
          writeFileSync(rewritten, writeHudiLogBlockHFile(ours.records, { schema: ours.schema! }));
          for (const reader of ['native', 'hbase'] as const) {
            const back = await hudi.hfileRead(rewritten, { reader, fromBytes: true });
            assert.deepEqual(
              back.records.map((value) => mdtType.fromBuffer(Buffer.from(value, 'base64'))),
              expected,
              `${reader} reading our log block`,
            );
          }
          blocks++;
        }
      }
    }
    assert.ok(blocks >= 3, `only ${blocks} HFile log blocks found`);
    t.diagnostic(`${blocks} HFile log blocks, ${logCells} cells`);
  });

  test('Hudi’s readers read our re-encoding of every Spark base file, values and key lookups alike', async () => {
    const scratch = tempDir('hfile-ours-');
    for (const path of baseFiles(table)) {
      const theirs = readHudiHFile(readFileSync(path));
      const records = theirs.records.map((record) => {
        const value = mdtType.toBuffer(mdtType.fromBuffer(Buffer.from(record.value)));
        assert.deepEqual(new Uint8Array(value), record.value, 'avsc re-encodes Hudi’s Avro bytes exactly');
        return { key: record.key, value: new Uint8Array(value) };
      });
      const oursPath = join(scratch, path.split('/').at(-1)!);
      writeFileSync(oursPath, writeHudiBaseHFile([...records].reverse(), { schema: theirs.schema!, bloomFilter: theirs.bloomFilter! }));
      const keys = theirs.records.map((record) => record.key);
      const fromSpark = await hudi.hfileRead(path, {});
      for (const reader of ['native', 'hbase'] as const) {
        const back = await hudi.hfileRead(oursPath, { reader, bloom: true, bloomKeys: keys, lookups: [...keys, 'absent-key'] });
        assert.deepEqual(back.records, fromSpark.records, `${reader} reading our ${oursPath}`);
        assert.deepEqual(back.lookups, fromSpark.records, `${reader} key lookups in ours`);
        assert.deepEqual(back.minMaxKeys, [keys[0], keys.at(-1)]);
        assert.ok(back.bloomContains!.every(Boolean));
        assert.equal(back.bloomTypeCode, 'DYNAMIC_V0');
      }
    }
  });

  test('the metadata table serves our base file in place of Spark’s', async () => {
    const newest = baseFiles(table)
      .filter((path) => path.includes('/files/'))
      .reduce((a, b) => (instantOf(a) > instantOf(b) ? a : b));
    const theirs = readHudiHFile(readFileSync(newest));
    const replace = (records: HudiHFileRecord[]): void => {
      writeFileSync(newest, writeHudiBaseHFile(records, { schema: theirs.schema!, bloomFilter: theirs.bloomFilter! }));
      // Hadoop's local file system checks the .crc sidecar; a stale one would reject the new bytes.
      rmSync(join(newest, '..', `.${newest.split('/').at(-1)}.crc`), { force: true });
    };
    // First a visibly different file: one data file dropped from a partition's listing.
    const [partition, dropped] = [PARTITIONS[0]!, atCompaction.files[PARTITIONS[0]!]![0]!];
    replace(
      theirs.records.map((record) => {
        if (record.key !== partition) return record;
        const decoded = mdtType.fromBuffer(Buffer.from(record.value)) as { filesystemMetadata: Record<string, unknown> };
        delete decoded.filesystemMetadata[dropped];
        return { key: record.key, value: new Uint8Array(mdtType.toBuffer(decoded)) };
      }),
    );
    const listed = await hudi.sql(`CALL show_metadata_table_files(table => 'hfile_t', partition => '${partition}')`);
    assert.deepEqual(
      listed.rows.map((row) => String(row['file_path'])).sort(),
      before1.files[partition]!.filter((name) => name !== dropped),
    );
    // Then a faithful one: everything Hudi reports through the metadata table is as it was with Spark's file.
    replace(theirs.records);
    assert.deepEqual(await snapshot(), before1);
  });

  test('Hudi’s writer with small blocks: our reader reads it, and our writer matches it byte for byte but for index keys', async () => {
    const schema = JSON.stringify({
      type: 'record',
      name: 'R',
      fields: [
        { name: 'key', type: 'string' },
        { name: 'n', type: 'long' },
        { name: 's', type: 'string' },
      ],
    });
    const type = avro.Type.forSchema(JSON.parse(schema) as avro.Schema);
    const keys = Array.from({ length: 400 }, (_, i) => `k${String(i * 7).padStart(5, '0')}${i % 10 === 0 ? '-long-suffix' : ''}`);
    const fields = keys.map((key, i) => ({ key, n: i, s: 'v'.repeat(i % 60) }));
    // What Hudi's writer gets (the key field set) and what it stores (the key field emptied).
    const input = fields.map((record) => ({ key: record.key, value: type.toBuffer(record).toString('base64') }));
    const records = fields.map((record) => ({ key: record.key, value: new Uint8Array(type.toBuffer({ ...record, key: '' })) }));
    const scratch = tempDir('hfile-hbase-');
    const cases = [
      { name: 'none-1k', blockSize: 1024, compression: 'NONE' as const },
      { name: 'gz-1k', blockSize: 1024, compression: 'GZ' as const },
      { name: 'two-level', blockSize: 300, compression: 'NONE' as const, indexBlockMaxSize: 256 },
    ];
    for (const spec of cases) {
      const theirsPath = join(scratch, `${spec.name}.theirs.hfile`);
      await hudi.hfileWrite(theirsPath, { schema, records: input, ...spec });
      const theirBytes = readFileSync(theirsPath);
      const theirs = readHudiHFile(theirBytes);
      assert.ok(theirs.file.dataIndex.length > 20, `${spec.name}: ${theirs.file.dataIndex.length} blocks`);
      assert.equal(theirs.file.trailer.numDataIndexLevels, spec.indexBlockMaxSize ? 2 : 1);
      assert.deepEqual(theirs.records, records, `${spec.name}: our reader, every record`);
      for (const key of keys) assert.equal(theirs.file.get(key)?.key, key);
      for (const absent of ['k', 'k00001', 'k00700-', 'k9', ...keys.map((key) => `${key}0`)]) assert.equal(theirs.file.get(absent), undefined, absent);

      const ours = writeHFile(records, {
        blockSize: spec.blockSize,
        compression: spec.compression,
        fileInfo: { schema, minRecordKey: keys[0]!, maxRecordKey: keys.at(-1)!, bloomFilterTypeCode: 'DYNAMIC_V0' },
        metaBlocks: [{ name: 'bloomFilter', payload: theirs.file.metaBlock('bloomFilter')! }],
      });
      const oursFile = readHFile(ours);
      assert.equal(oursFile.dataIndex.length, theirs.file.dataIndex.length, `${spec.name}: same block boundaries`);
      oursFile.dataIndex.forEach((entry, i) => {
        const their = theirs.file.dataIndex[i]!;
        assert.ok(compareBytes(their.firstKey.row, entry.firstKey.row) <= 0, 'HBase’s midpoint key sorts at or before the block’s first key');
        assert.deepEqual(oursFile.dataBlock(i).payload, theirs.file.dataBlock(i).payload);
      });
      if (spec.compression === 'NONE' && !spec.indexBlockMaxSize) {
        // Everything before the root data index is byte-identical; after it, only the root index differs.
        const rootAt = theirs.file.trailer.loadOnOpenDataOffset;
        assert.equal(oursFile.trailer.loadOnOpenDataOffset, rootAt);
        assert.deepEqual(ours.subarray(0, rootAt), new Uint8Array(theirBytes.subarray(0, rootAt)));
        const rootEnd = (bytes: Uint8Array): number => rootAt + readBlock(bytes, rootAt, 'NONE').onDiskSize;
        const tailOf = (bytes: Uint8Array): Uint8Array[] => {
          const metaIndex = readBlock(bytes, rootEnd(bytes), 'NONE');
          const fileInfo = readBlock(bytes, metaIndex.offset + metaIndex.onDiskSize, 'NONE');
          return [metaIndex.payload, fileInfo.payload];
        };
        assert.deepEqual(tailOf(ours), tailOf(theirBytes));
        // Real first keys are never shorter than HBase's midpoints, so only the root index and what follows it move.
        assert.ok(parseBlockHeader(ours, rootAt).uncompressedSizeWithoutHeader >= parseBlockHeader(theirBytes, rootAt).uncompressedSizeWithoutHeader);
        const withoutIndexPlacement = (trailer: typeof oursFile.trailer): Partial<typeof oursFile.trailer> => {
          const { fileInfoOffset: _fileInfo, uncompressedDataIndexSize: _indexSize, ...rest } = trailer;
          return rest;
        };
        assert.deepEqual(withoutIndexPlacement(oursFile.trailer), withoutIndexPlacement(theirs.file.trailer));
      }
      const oursPath = join(scratch, `${spec.name}.ours.hfile`);
      writeFileSync(oursPath, ours);
      const lookups = [...keys.filter((_, i) => i % 3 === 0), 'k00001', 'zzz'];
      const expected = await hudi.hfileRead(theirsPath, { reader: 'hbase', lookups: keys.filter((_, i) => i % 3 === 0) });
      if (spec.indexBlockMaxSize) {
        // Hudi 0.15's own reader knows one index level only, which is why our writer never writes more.
        await assert.rejects(hudi.hfileRead(theirsPath, { reader: 'native' }), /LEAF_INDEX is not supported/);
      }
      for (const reader of ['native', 'hbase'] as const) {
        const back = await hudi.hfileRead(oursPath, { reader, lookups });
        assert.deepEqual(back.records, expected.records, `${spec.name}: ${reader} reads our multi-block file`);
        assert.deepEqual(back.lookups, expected.lookups, `${spec.name}: ${reader} seeks in our multi-block file`);
      }
    }
  });
});
