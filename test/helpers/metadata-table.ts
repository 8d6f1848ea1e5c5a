/**
 * A metadata table for tests without Spark: what Hudi 0.15's writer initializes on a table with no completed instant
 * (HoodieBackedTableMetadataWriter.initializeFromFilesystem with nothing to list), so that every later commit of ours
 * goes through the metadata table as Spark's writes would:
 *
 * - `.hoodie/metadata/.hoodie/hoodie.properties` (merge-on-read, HFile base files, key `key`, no meta fields),
 * - per partition an initialization deltacommit `00000000000000010`, `…011`, … (empty), a `.hoodie_partition_metadata`
 *   and one log file per file group holding an empty delete block stamped with that instant (initializeFileGroups),
 * - `hoodie.table.metadata.partitions` in the data table's hoodie.properties.
 *
 * test/interop/metadata-table-*.test.ts checks with Hudi's validator that Hudi reads such a table and our commits on it.
 */
import { deleteBlock, encodeLogBlocks, logFileName } from '../../lib/log-format/index.js';
import {
  fileGroupId,
  METADATA_PARTITIONS_INFLIGHT_KEY,
  METADATA_PARTITIONS_KEY,
  METADATA_RECORD_SCHEMA_TEXT,
  METADATA_TABLE_FOLDER,
  METADATA_TABLE_METAFOLDER,
  type MetadataPartitionType,
} from '../../lib/metadata/index.js';
import type { Storage } from '../../lib/storage/port.js';
import { readTableConfig, tableChecksum, updateTableProperties } from '../../lib/table/config.js';
import { formatJavaProperties } from '../../lib/table/properties.js';
import type { HoodieCleanMetadata } from '../../lib/timeline/avro-schemas.js';
import { toJacksonPrettyJson } from '../../lib/util/jackson-json.js';

/** File groups per partition Hudi initializes by default (record index: its minimum for a small table). */
export const DEFAULT_FILE_GROUP_COUNTS: Readonly<Record<MetadataPartitionType, number>> = { files: 1, column_stats: 2, bloom_filters: 4, record_index: 10 };

export async function initMetadataTable(
  storage: Storage,
  partitions: readonly MetadataPartitionType[],
  counts: Partial<Record<MetadataPartitionType, number>> = {},
): Promise<void> {
  const config = await readTableConfig(storage);
  const name = `${config.name}_metadata`;
  const props = new Map([
    ['hoodie.compaction.payload.class', 'org.apache.hudi.metadata.HoodieMetadataPayload'],
    ['hoodie.table.type', 'MERGE_ON_READ'],
    ['hoodie.archivelog.folder', 'archived'],
    ['hoodie.timeline.layout.version', '1'],
    ['hoodie.table.checksum', String(tableChecksum('', name))],
    ['hoodie.datasource.write.drop.partition.columns', 'false'],
    ['hoodie.table.recordkey.fields', 'key'],
    ['hoodie.table.name', name],
    ['hoodie.compaction.record.merger.strategy', 'eeb8d96f-b1e4-49fd-bbf8-28ac514178e5'],
    ['hoodie.populate.meta.fields', 'false'],
    ['hoodie.table.keygenerator.class', 'org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator'],
    ['hoodie.table.base.file.format', 'HFILE'],
    ['hoodie.table.version', String(config.version)],
  ]);
  await storage.put(
    `${METADATA_TABLE_METAFOLDER}/hoodie.properties`,
    formatJavaProperties(props, ['Properties saved on 2024-01-01T00:00:00Z', 'Mon Jan 01 00:00:00 UTC 2024']),
  );
  const ordered = (['files', 'bloom_filters', 'column_stats', 'record_index'] as const).filter((p) => partitions.includes(p));
  for (const [offset, partition] of ordered.entries()) {
    const instant = `00000000000000${String(10 + offset).padStart(3, '0')}`;
    await storage.put(`${METADATA_TABLE_METAFOLDER}/${instant}.deltacommit.requested`, '');
    await storage.put(`${METADATA_TABLE_METAFOLDER}/${instant}.deltacommit.inflight`, '');
    await storage.put(
      `${METADATA_TABLE_FOLDER}/${partition}/.hoodie_partition_metadata`,
      `#partition metadata\n#Mon Jan 01 00:00:00 UTC 2024\ncommitTime=${instant}\npartitionDepth=1\n`,
    );
    const bytes = encodeLogBlocks([deleteBlock({ instantTime: instant, records: [] })]);
    for (let index = 0; index < (counts[partition] ?? DEFAULT_FILE_GROUP_COUNTS[partition]); index++) {
      const log = logFileName({ fileId: fileGroupId(partition, index), baseInstant: instant, version: 1, writeToken: '0-0-0' });
      await storage.put(`${METADATA_TABLE_FOLDER}/${partition}/${log}`, bytes);
    }
    await storage.put(
      `${METADATA_TABLE_METAFOLDER}/${instant}.deltacommit`,
      toJacksonPrettyJson({
        partitionToWriteStats: {},
        compacted: false,
        extraMetadata: { schema: METADATA_RECORD_SCHEMA_TEXT },
        operationType: 'BULK_INSERT',
      }),
    );
  }
  await updateTableProperties(storage, (p) => {
    p.set(METADATA_PARTITIONS_KEY, [...partitions].sort().join(','));
    p.set(METADATA_PARTITIONS_INFLIGHT_KEY, '');
  });
}

/** The metadata of a KEEP_LATEST_COMMITS clean that deleted `files` (names in the partition) of one partition. */
export function oneCleanMetadata(startCleanTime: string, partition: string, files: readonly string[]): HoodieCleanMetadata {
  return {
    startCleanTime,
    timeTakenInMillis: 1,
    totalFilesDeleted: files.length,
    earliestCommitToRetain: '',
    lastCompletedCommitTimestamp: '',
    partitionMetadata: {
      [partition]: {
        partitionPath: partition,
        policy: 'KEEP_LATEST_COMMITS',
        deletePathPatterns: [...files],
        successDeleteFiles: [...files],
        failedDeleteFiles: [],
        isPartitionDeleted: false,
      },
    },
    version: 2,
    bootstrapPartitionMetadata: null,
    extraMetadata: null,
  };
}
