/**
 * `record_index` against the data, as Hudi's metadata validator compares them (validateRecordIndexContent): the
 * snapshot's record keys with their partition and file group against the index's live records. One comparison for
 * both metadata-table formats: check.ts gives it a version-6 table's records, check-1x.ts a 1.x table's (whose
 * RecordIndexInfo also carries a `position`, which says where in the file group, not which one, so is not compared).
 */
import { readSnapshot } from '../read/reader.js';
import type { Storage } from '../storage/port.js';
import { HudiTable } from '../table/table.js';
import { type MetadataRecord, recordIndexFileId } from './records.js';

export interface RecordLocation {
  readonly partitionPath: string;
  readonly fileId: string;
}

/**
 * A record key the record index and the data disagree on: `missing`, a live record the index lacks; `deleted`, an
 * indexed key no live record has; `location`, a key indexed at another file group than the one holding it.
 */
export interface RecordIndexMismatch {
  readonly kind: 'missing' | 'deleted' | 'location';
  readonly recordKey: string;
  readonly inIndex?: RecordLocation;
  readonly inData?: RecordLocation;
}

/** Why the record index was not compared with the data, for a report's `skipped`. */
export const RECORD_INDEX_WITHOUT_META_FIELDS =
  'record_index: the table does not populate its meta fields (hoodie.populate.meta.fields=false), so its files hold no record keys to compare with';

/**
 * The index's live records (`records`: the record_index partition as read, by key) against the data's snapshot, a
 * merge-on-read table's merged with its log files: each record's key with the file group of `_hoodie_file_name`
 * (FSUtils.getFileId). Undefined when the table does not populate its meta fields: there are no keys to read.
 */
export async function compareRecordIndex(storage: Storage, records: ReadonlyMap<string, MetadataRecord>): Promise<RecordIndexMismatch[] | undefined> {
  const table = await HudiTable.open(storage);
  if (!table.config.populateMetaFields) return undefined;
  const inData = new Map<string, RecordLocation>();
  for (const row of (await readSnapshot(table, { includeMetaFields: true })).rows) {
    const fileName = String(row['_hoodie_file_name'] ?? '');
    inData.set(String(row['_hoodie_record_key']), { partitionPath: String(row['_hoodie_partition_path'] ?? ''), fileId: fileName.split('_')[0]! });
  }
  const inIndex = new Map<string, RecordLocation>();
  for (const [key, record] of records) {
    if (record.type === 5) inIndex.set(key, { partitionPath: record.recordIndex.partitionName ?? '', fileId: recordIndexFileId(record.recordIndex) });
  }
  const mismatches: RecordIndexMismatch[] = [];
  for (const [recordKey, data] of inData) {
    const index = inIndex.get(recordKey);
    if (index === undefined) mismatches.push({ kind: 'missing', recordKey, inData: data });
    else if (index.partitionPath !== data.partitionPath || index.fileId !== data.fileId)
      mismatches.push({ kind: 'location', recordKey, inIndex: index, inData: data });
  }
  for (const [recordKey, index] of inIndex) {
    if (!inData.has(recordKey)) mismatches.push({ kind: 'deleted', recordKey, inIndex: index });
  }
  return mismatches.sort((a, b) => a.kind.localeCompare(b.kind) || a.recordKey.localeCompare(b.recordKey));
}
