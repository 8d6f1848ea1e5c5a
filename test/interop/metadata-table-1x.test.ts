/**
 * The metadata tables Hudi 1.0.2 (table version 8) and 1.1.1 (table version 9) write with Spark's defaults (files,
 * column_stats, partition_stats): what we read equals what Hudi reads (`hudi_metadata('<table>')`), and the records
 * we produce for each commit from its write stats and the written files' footers equal, record by record, the ones
 * Hudi wrote into that commit's metadata log blocks (decoded with our codecs), in the block we would write, whose
 * HFile Hudi's own reader (hudi-io's HFileReaderImpl) reads back.
 *
 * Copy-on-write: an insert, upserts across the three partitions, several column types (long, string with nulls,
 * double, int with nulls, boolean, date, decimal, timestamp, float). Merge-on-read: an insert and upserts into log
 * files, whose column ranges are the append's records' (taken from the data blocks Hudi wrote).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readHudiHFile } from '../../lib/hfile/index.js';
import { iterateLogBlocks, readAvroDataBlock } from '../../lib/log-format/index.js';
import { decodeMetadataRecord } from '../../lib/metadata/codec.js';
import { commitFilesRecords } from '../../lib/metadata/convert.js';
import {
  columnStatsRecords1x,
  columnsToIndex1x,
  logColumnStatsRecords1x,
  metadataLogBlock1x,
  partitionStatsForCommit1x,
} from '../../lib/metadata/convert-1x.js';
import { readStoredFooter } from '../../lib/metadata/footers.js';
import { readMetadataTable1x } from '../../lib/metadata/reader-1x.js';
import type { ColumnStatsMetadata, MetadataRecord } from '../../lib/metadata/records.js';
import { metadataRecordTypeOf } from '../../lib/metadata/schema.js';
import { METADATA_1X_VERSIONS, type MetadataTableVersion1x } from '../../lib/metadata/schema-1x.js';
import { openStorage } from '../../lib/storage/index.js';
import type { AvroRecordSchema } from '../../lib/table/schema.js';
import { HudiTable } from '../../lib/table/table.js';
import { readCommitMetadata } from '../../lib/timeline/timeline.js';
import { fileNameOf } from '../../lib/util/paths.js';
import { type HudiHarness, startHudi } from '../helpers/hudi.js';
import { comparableMetadataRow, sparkMetadataRow } from '../helpers/metadata-1x.js';
import { tempDir } from '../helpers/paths.js';

const SCHEMA =
  'id BIGINT, name STRING, ts BIGINT, price DOUBLE, qty INT, flag BOOLEAN, d DATE, amount DECIMAL(10,2), created TIMESTAMP, score FLOAT, dt STRING';

function rows(from: number, to: number, batch: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = from; i < to; i++) {
    out.push({
      id: i,
      name: i % 7 === 3 ? null : `n${i}-${batch}`,
      ts: batch,
      price: i * 1.5 - 3,
      qty: i % 5 === 0 ? null : i * 10 - 50,
      flag: i % 2 === 0,
      d: `2024-01-${String(1 + (i % 20)).padStart(2, '0')}`,
      amount: ((i * 100 + batch) / 100).toFixed(2),
      created: `2024-02-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
      score: i / 4,
      dt: `2024-01-0${1 + (i % 3)}`,
    });
  }
  return out;
}

const WRITES: readonly [number, number, string][] = [
  [0, 20, 'insert'],
  [10, 25, 'upsert'],
  [25, 32, 'upsert'],
  [5, 9, 'upsert'],
];

function options(type: 'COPY_ON_WRITE' | 'MERGE_ON_READ', operation: string): Record<string, string> {
  return {
    'hoodie.table.name': 'mdt1x',
    'hoodie.datasource.write.recordkey.field': 'id',
    'hoodie.datasource.write.partitionpath.field': 'dt',
    'hoodie.datasource.write.precombine.field': 'ts',
    'hoodie.datasource.write.table.type': type,
    'hoodie.datasource.write.operation': operation,
    'hoodie.embed.timeline.server': 'false',
  };
}

/** The data timeline's facts the metadata reader needs (no rollbacks in these tables). */
function dataInstants(table: HudiTable): { completedDataInstants: Set<string>; pendingDataInstants: Set<string> } {
  return {
    completedDataInstants: new Set(table.timeline.completed().map((instant) => instant.time)),
    pendingDataInstants: new Set(table.timeline.pending().map((instant) => instant.time)),
  };
}

async function ourContents(path: string): Promise<MetadataRecord[]> {
  const table = await HudiTable.open(openStorage(path));
  const contents = await readMetadataTable1x(openStorage(path), dataInstants(table));
  return [...contents.partitions.values()].flatMap((records) => [...records.values()]);
}

/** The records of the HFile data blocks of a partition's log files named by `instant`. */
function hudiBlockRecords(path: string, partition: string, instant: string, version: MetadataTableVersion1x): Map<string, MetadataRecord> {
  const folder = join(path, '.hoodie/metadata', partition);
  const out = new Map<string, MetadataRecord>();
  for (const name of readdirSync(folder).filter((n) => n.startsWith('.') && n.includes(`_${instant}.log.`) && !n.endsWith('.crc'))) {
    for (const block of iterateLogBlocks(readFileSync(join(folder, name)), name)) {
      if (block.type !== 'HFILE_DATA_BLOCK') continue;
      assert.equal(block.header.SCHEMA, METADATA_1X_VERSIONS[version].writerSchemaText, `${name}: the SCHEMA header is the version's writer schema`);
      const type = metadataRecordTypeOf(block.header.SCHEMA!);
      for (const record of readHudiHFile(block.content).records) out.set(record.key, decodeMetadataRecord(record.value, record.key, type));
    }
  }
  return out;
}

for (const [release, version] of [
  ['1.0.2', 8],
  ['1.1.1', 9],
] as const) {
  describe(`metadata tables Hudi ${release} writes (table version ${version})`, { timeout: 1_800_000 }, () => {
    let hudi: HudiHarness;
    const root = tempDir(`mdt-${release}-`);
    const cow = join(root, 'cow');
    const mor = join(root, 'mor');

    before(async () => {
      hudi = await startHudi({ hudiVersion: release });
      for (const [from, to, operation] of WRITES) {
        const batch = WRITES.findIndex((w) => w[0] === from && w[1] === to);
        await hudi.write(cow, { schema: SCHEMA, rows: rows(from, to, batch), options: options('COPY_ON_WRITE', operation) });
      }
      for (const [from, to, operation] of WRITES.slice(0, 3)) {
        const batch = WRITES.findIndex((w) => w[0] === from && w[1] === to);
        await hudi.write(mor, { schema: SCHEMA, rows: rows(from, to, batch), options: options('MERGE_ON_READ', operation) });
      }
    });
    after(async () => hudi?.close());

    for (const [kind, path] of [
      ['copy-on-write', cow],
      ['merge-on-read', mor],
    ] as const) {
      it(`Hudi ${release}: we read the ${kind} table's metadata records exactly as hudi_metadata() does`, async () => {
        const theirs = (await hudi.sql(`select * from hudi_metadata('${path}')`)).rows;
        const ours = await ourContents(path);
        const sorted = (list: unknown[]) => list.map((row) => JSON.stringify(comparableMetadataRow(row))).sort();
        assert.deepEqual(new Set(ours.map((r) => r.type)), new Set([1, 2, 3, 6]));
        assert.deepEqual(sorted(ours.map(sparkMetadataRow)), sorted(theirs));
      });
    }

    for (const [kind, path, writes] of [
      ['copy-on-write', cow, WRITES.length],
      ['merge-on-read', mor, 3],
    ] as const) {
      it(`Hudi ${release}: per ${kind} commit, our files, column_stats and partition_stats records equal Hudi's log blocks`, async () => {
        const storage = openStorage(path);
        const table = await HudiTable.open(storage);
        // What the metadata table holds so far (our own records), and each file group's latest slice's files.
        const columnStatsByPartition = new Map<string, ColumnStatsMetadata[]>();
        const latestSliceOfGroup = new Map<string, string[]>();
        const commits = table.timeline.completed().filter((instant) => instant.action === 'commit' || instant.action === 'deltacommit');
        assert.equal(commits.length, writes);
        for (const instant of commits) {
          const metadata = await readCommitMetadata(storage, instant, table.layout);
          const schema = metadata.extraMetadata['schema'] ?? '';
          const columns = columnsToIndex1x(schema, version, { populateMetaFields: table.config.populateMetaFields });
          const ours: Record<'files' | 'column_stats' | 'partition_stats', MetadataRecord[]> = {
            files: commitFilesRecords(metadata),
            column_stats: [],
            partition_stats: [],
          };
          for (const [partition, stats] of Object.entries(metadata.partitionToWriteStats)) {
            const written: ColumnStatsMetadata[] = [];
            for (const stat of stats) {
              const name = fileNameOf(stat.path!);
              const group = `${partition}/${stat.fileId}`;
              let records: MetadataRecord[];
              if (name.endsWith('.parquet')) {
                const footer = await readStoredFooter(storage, stat.path!, stat.fileSizeInBytes);
                records = columnStatsRecords1x(partition, name, footer, columns, version);
                // A new base file starts its file group's latest slice.
                latestSliceOfGroup.set(group, [name]);
              } else {
                // A log file: the records its append wrote, from the data blocks of this instant.
                const blocks = [...iterateLogBlocks(await storage.get(stat.path!), name)].filter(
                  (block) => block.type === 'AVRO_DATA_BLOCK' && block.header.INSTANT_TIME === instant.time,
                );
                const rows = blocks.flatMap((block) => readAvroDataBlock(block) as Record<string, unknown>[]);
                const blockSchema = JSON.parse(blocks[0]!.header.SCHEMA!) as AvroRecordSchema;
                records = logColumnStatsRecords1x(partition, name, blockSchema, rows, columns, version);
                latestSliceOfGroup.set(group, [...(latestSliceOfGroup.get(group) ?? []), name]);
              }
              ours.column_stats.push(...records);
              written.push(...records.flatMap((r) => (r.type === 3 ? [r.columnStats] : [])));
            }
            const latest = new Set([...latestSliceOfGroup].filter(([group]) => group.startsWith(`${partition}/`)).flatMap(([, names]) => names));
            const existing = columnStatsByPartition.get(partition) ?? [];
            ours.partition_stats.push(...partitionStatsForCommit1x(partition, written, existing, latest, version));
            columnStatsByPartition.set(partition, [...existing, ...written]);
          }
          for (const partition of ['files', 'column_stats', 'partition_stats'] as const) {
            const theirs = hudiBlockRecords(path, partition, instant.time, version);
            const block = metadataLogBlock1x(ours[partition], instant.time, version);
            assert.equal(block.header.INSTANT_TIME, instant.time);
            const type = metadataRecordTypeOf(block.header.SCHEMA!);
            const decoded = new Map(readHudiHFile(block.content).records.map((r) => [r.key, decodeMetadataRecord(r.value, r.key, type)]));
            assert.ok(theirs.size > 0, `${instant.time} ${partition}: Hudi wrote records`);
            assert.deepEqual(decoded, theirs, `${instant.time} ${partition}`);
            // Hudi's own HFile reader (hudi-io's, as the metadata table reads log blocks) reads our block's HFile.
            const file = join(root, `${kind}-${partition}-${instant.time}.hfile`);
            writeFileSync(file, block.content);
            const read = await hudi.hfileReadIo(file);
            assert.equal(read.schema, METADATA_1X_VERSIONS[version].writerSchemaText);
            assert.deepEqual(
              read.entries,
              readHudiHFile(block.content).records.map((r) => ({ key: r.key, value: Buffer.from(r.value).toString('base64') })),
            );
          }
        }
      });
    }
  });
}
