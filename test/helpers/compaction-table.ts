/**
 * A small merge-on-read table for compaction tests (no Spark): 40 records in two partitions bulk-inserted, the table
 * turned merge-on-read, then one delta commit with a log file per file group holding updates newer and older than
 * the stored records, soft deletes, new keys, and a delete block.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AVRO_SCHEMA_FOOTER_KEY } from '../../lib/base-file/footer.js';
import { writeJsonLines } from '../../lib/cli/generate.js';
import { openParquetEngine } from '../../lib/engine/parquet-engine.js';
import { avroDataBlock, deleteBlock, writeLogFile } from '../../lib/log-format/index.js';
import { LocalStorage } from '../../lib/storage/local.js';
import { HudiTable } from '../../lib/table/table.js';
import { serializeCommitMetadata } from '../../lib/timeline/commit-metadata.js';
import { writeBatch } from '../../lib/writer/write-client.js';
import { tempDir } from './paths.js';

const DELTA = '29990101000000000';
const PROPS = new Map([
  ['hoodie.table.name', 'compact_unit'],
  ['hoodie.datasource.write.recordkey.field', 'id'],
  ['hoodie.datasource.write.partitionpath.field', 'dt'],
  ['hoodie.datasource.write.precombine.field', 'ts'],
]);

/**
 * A copy-on-write table of 40 records in two partitions turned merge-on-read, with one log file per file group: per
 * partition (ids first, first + 2, …; first 0 in `a`, 1 in `b`) first: newer; +2: older; +4: newer soft delete;
 * +6: older soft delete; +8: delete block; +1000: inserted; +2000: inserted, then deleted by the delete block.
 */
export async function tableWithLogs(payload: string): Promise<{ storage: LocalStorage; root: string }> {
  const root = tempDir('compact-unit-');
  const input = join(root, 'input.jsonl');
  const rows = Array.from({ length: 40 }, (_, i) => ({ id: i, name: `n${i}`, ts: 10, _hoodie_is_deleted: false, dt: i % 2 === 0 ? 'a' : 'b' }));
  await writeJsonLines(input, rows);
  const storage = new LocalStorage(join(root, 'table'));
  await writeBatch(storage, { input: { file: input, format: 'jsonl' }, operation: 'bulk_insert', properties: PROPS });
  const propsFile = join(root, 'table', '.hoodie', 'hoodie.properties');
  const text = (await readFile(propsFile, 'utf8')).replace('hoodie.table.type=COPY_ON_WRITE', 'hoodie.table.type=MERGE_ON_READ');
  await writeFile(propsFile, `${text}hoodie.compaction.payload.class=${payload}\n`);
  const engine = await openParquetEngine();
  try {
    for (const slice of (await (await HudiTable.open(storage)).fileSystemView()).latestMergedSlices()) {
      const base = join(root, 'table', slice.baseFile!.path);
      const schema = (await engine.readFooter(base)).keyValues[AVRO_SCHEMA_FOOTER_KEY]!;
      const stored = (await engine.readRows([base])).rows;
      const template = stored[0]!;
      const first = slice.partitionPath === 'a' ? 0 : 1; // ids first, first + 2, … are this file group's
      const avro = (offset: number, ts: number, tag: string, deleted = false) => ({
        ...template,
        _hoodie_commit_time: DELTA,
        _hoodie_commit_seqno: `${DELTA}_${first + offset}`,
        _hoodie_record_key: String(first + offset),
        id: BigInt(first + offset),
        name: `n${first + offset}-${tag}`,
        ts: BigInt(ts),
        _hoodie_is_deleted: deleted,
      });
      const records = [
        avro(0, 20, 'newer'),
        avro(2, 5, 'older'),
        avro(4, 20, 'soft-deleted', true),
        avro(6, 5, 'older-soft-delete', true),
        avro(1000, 1, 'inserted'),
        avro(2000, 1, 'inserted-then-deleted'),
      ];
      await writeLogFile(storage, {
        partitionPath: slice.partitionPath,
        fileId: slice.fileId,
        baseInstant: slice.baseInstantTime,
        writeToken: '0-1-1',
        blocks: [
          avroDataBlock({ instantTime: DELTA, schema, records, longs: 'bigint' }),
          deleteBlock({
            instantTime: DELTA,
            records: [first + 8, first + 2000].map((id) => ({ recordKey: String(id), partitionPath: slice.partitionPath, orderingValue: null })),
          }),
        ],
      });
    }
  } finally {
    await engine.close();
  }
  for (const suffix of ['deltacommit.requested', 'deltacommit.inflight']) await storage.put(`.hoodie/${DELTA}.${suffix}`, '');
  await storage.put(
    `.hoodie/${DELTA}.deltacommit`,
    serializeCommitMetadata({ partitionToWriteStats: {}, compacted: false, extraMetadata: {}, operationType: 'UPSERT' }),
  );
  return { storage, root: join(root, 'table') };
}
