/**
 * The metadata-table records Spark wrote, read from a table's `.hoodie/metadata` log files, and a comparable form of
 * record lists, for the interop tests that compare ours with Spark's (test/interop/metadata-table-*.test.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHudiHFile } from '../../lib/hfile/index.js';
import { decodeLogBlocks, readDeleteBlock } from '../../lib/log-format/index.js';
import { decodeMetadataRecord } from '../../lib/metadata/codec.js';
import type { MetadataChange } from '../../lib/metadata/convert.js';
import { METADATA_PARTITION_TYPES, type MetadataPartitionType } from '../../lib/metadata/partitions.js';
import type { MetadataRecord } from '../../lib/metadata/records.js';
import { metadataRecordTypeOf } from '../../lib/metadata/schema.js';

/** The records and deletions Spark wrote in its deltacommit `instant`, by metadata partition (the table has). */
export function sparkChanges(table: string, instant: string): Map<MetadataPartitionType, MetadataChange[]> {
  const out = new Map<MetadataPartitionType, MetadataChange[]>();
  for (const partition of METADATA_PARTITION_TYPES) {
    const dir = join(table, '.hoodie/metadata', partition);
    const changes: MetadataChange[] = [];
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).filter((name) => name.includes('.log.') && !name.endsWith('.crc'))) {
      for (const block of decodeLogBlocks(readFileSync(join(dir, file)))) {
        if (block.header.INSTANT_TIME !== instant) continue;
        if (block.type === 'HFILE_DATA_BLOCK') {
          const hfile = readHudiHFile(block.content);
          const type = metadataRecordTypeOf(hfile.schema!);
          for (const record of hfile.records) changes.push({ record: decodeMetadataRecord(record.value, record.key, type) });
        } else if (block.type === 'DELETE_BLOCK') {
          for (const deleted of readDeleteBlock(block)) changes.push({ deleteKey: deleted.recordKey! });
        }
      }
    }
    out.set(partition, changes);
  }
  return out;
}

/** Comparable form: sorted by key, maps as sorted entries, bigints and bytes as text; record-index times in this zone. */
export function normalizeChanges(changes: readonly MetadataChange[]): string[] {
  const zoneless = new Date(2024, 0, 1).getTimezoneOffset() !== 0;
  return changes
    .map((change) => {
      if ('deleteKey' in change) return `delete ${change.deleteKey}`;
      const record: MetadataRecord = change.record;
      const plain = JSON.stringify(record, (key, value: unknown) => {
        if (value instanceof Map) return [...value].sort(([a], [b]) => (a < b ? -1 : 1));
        if (typeof value === 'bigint') return value.toString();
        if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
        // Hudi parses the instant in the JVM's zone (UTC in the harness), we in ours.
        if (key === 'instantTime' && zoneless) return undefined;
        return value;
      });
      return `${record.key} ${plain}`;
    })
    .sort();
}
